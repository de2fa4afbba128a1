//! One row's history in a large generated Southbound file (default 1 GB;
//! `CONTENTS_BENCH_MB=300` for a smaller one): the load pass that lists
//! the entries and builds the row → entries index (`Log::load`), then
//! `history` of a few rows, each reading only that row's records again.
//! Run: `cargo bench -p contents --bench history`. Prints figures; no
//! assertions on time.

use std::time::Instant;

use contents::history::history;
use contents::{EntryKind, Log};
use ovsdb::Uuid;

fn main() {
    let mb: u64 = std::env::var("CONTENTS_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let schema = std::fs::read(root.join("static/samples/schemas/ovn-sb.ovsschema")).unwrap();
    let schema = ovsdb::json::parse(&schema).unwrap();
    let shape = ovsdb_log::synth_sb::SbShape {
        target_bytes: Some(mb * 1_000_000),
        ..Default::default()
    };
    let t = Instant::now();
    let mut file = Vec::new();
    ovsdb_log::synth_sb::southbound(&shape, &schema, &mut |i, b| {
        if i == 0 {
            file.extend_from_slice(b)
        }
    });
    println!(
        "generated {:.0} MB in {:.1} s",
        file.len() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let log = Log::load(&file);
    let load_s = t.elapsed().as_secs_f64();
    println!(
        "load pass (entries + row -> entries index): {load_s:.2} s, {} entries, {} rows indexed",
        log.entries.len(),
        log.history.len()
    );
    // The row with the most entries, one from the snapshot only, and the
    // first row an entry added.
    let busiest = *log
        .history
        .rows()
        .max_by_key(|u| log.history.entries_for(u).len())
        .unwrap();
    let kind = |p: u32| log.entries[p as usize].kind;
    let snapshot_only = log
        .history
        .rows()
        .find(|u| {
            let e = log.history.entries_for(u);
            e.len() == 1 && kind(e[0]) == EntryKind::Snapshot
        })
        .copied();
    let later = log
        .history
        .rows()
        .find(|u| {
            let e = log.history.entries_for(u);
            e.len() > 1 && e.iter().all(|&p| kind(p) != EntryKind::Snapshot)
        })
        .copied();
    let rows: Vec<(&str, Uuid)> = [
        ("most entries", Some(busiest)),
        ("in the snapshot only", snapshot_only),
        ("added and changed by entries", later),
    ]
    .into_iter()
    .filter_map(|(n, u)| u.map(|u| (n, u)))
    .collect();
    println!("| row | entries | bytes read again | history |");
    println!("|---|---|---|---|");
    for (name, u) in rows {
        let spans = log.history.entries_for(&u);
        let bytes: usize = spans
            .iter()
            .map(|&p| log.entries[p as usize].body_len)
            .sum();
        let mut best = f64::MAX;
        let mut n = 0;
        for _ in 0..3 {
            let t = Instant::now();
            let items = history(&log, &u).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
            n = items.len();
        }
        println!(
            "| {name} | {} ({n} items) | {:.1} MB | {:.0} ms |",
            spans.len(),
            bytes as f64 / 1e6,
            best * 1e3
        );
    }
}
