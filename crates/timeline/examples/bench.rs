//! Native timings of the view model on one file (for BENCHMARKS.md):
//!   node tests/bench/gen-big-log.mjs /tmp/big.db
//!   cargo run --release -p timeline --example bench -- /tmp/big.db
use std::time::Instant;
use timeline::{build_timeline, LaneIndex, SizeView, Viewport};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: bench FILE.db");
        std::process::exit(2);
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let t0 = Instant::now();
    let s = ovsdb_log::summarize_records(&bytes);
    println!(
        "summarize_records: {:?} ({} records)",
        t0.elapsed(),
        s.records
    );
    let t0 = Instant::now();
    let r = ovsdb_log::replay(&bytes, ovsdb_log::Upto::All);
    println!(
        "replay with sizes: {:?} ({} entries)",
        t0.elapsed(),
        r.entries.len()
    );
    let t0 = Instant::now();
    let (s, e) = ovsdb_log::summarize_detailed(&bytes);
    println!(
        "summarize_detailed: {:?} ({} records, {} sizes)",
        t0.elapsed(),
        s.records,
        e.len()
    );
    let t0 = Instant::now();
    let c = ovsdb_log::check_cluster(&[(path.as_str(), &bytes)]);
    println!(
        "check_cluster:     {:?} ({} violations)",
        t0.elapsed(),
        c.violations.len()
    );
    let t0 = Instant::now();
    let t = build_timeline(&[(path.as_str(), &bytes)], &mut |_| {});
    println!(
        "build_timeline:    {:?} ({} MB)",
        t0.elapsed(),
        bytes.len() >> 20
    );
    let l = &t.lanes[0];
    let t0 = Instant::now();
    let ix = LaneIndex::new(l);
    println!(
        "LaneIndex::new:    {:?} ({} entries)",
        t0.elapsed(),
        l.entries.len()
    );
    let mut vp = Viewport::for_timeline(&t);
    let t0 = Instant::now();
    let mut n = 0;
    for i in 0..100 {
        if i % 10 == 0 {
            vp.reset();
        }
        vp.zoom(1.5, 0.4);
        n += ix.columns(&vp, 1280.0, SizeView::Diff).len();
    }
    println!(
        "columns (1280 px): {:?} per frame ({n} columns)",
        t0.elapsed() / 100
    );
}
