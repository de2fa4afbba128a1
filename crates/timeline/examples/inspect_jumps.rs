//! The inspector's path in the web worker, natively: inspections of
//! random entries of one file, each reading the file from the nearest
//! checkpoint the earlier inspections kept (`InspectStream::resume`), the
//! file read from disk in 4 MB chunks from that offset. The first
//! inspection (the last entry) replays the whole file and leaves the
//! checkpoints.
//!   cargo run --release -p timeline --example inspect_jumps -- FILE [N=30]
use ovsdb_log::checkpoint::{Checkpoints, Policy};
use std::io::{Read, Seek, SeekFrom};
use std::time::Instant;
use timeline::inspect::InspectStream;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: inspect_jumps FILE [N]");
        std::process::exit(2);
    };
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(30);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let lane = timeline::build_lane(&path, &bytes, &mut |_| {});
    drop(bytes);
    let superseded: Vec<usize> = lane
        .entries
        .iter()
        .filter(|e| e.superseded)
        .map(|e| e.record as usize)
        .collect();
    let live: Vec<_> = lane.entries.iter().filter(|e| !e.superseded).collect();
    let Some(last) = live.last() else {
        eprintln!("{path}: no entries");
        std::process::exit(1);
    };
    let mut store = Some(Box::new(Checkpoints::new(Policy::default())));
    let inspect = |e: &timeline::Entry, store: &mut Option<Box<Checkpoints>>| {
        let t = Instant::now();
        let mut s = InspectStream::resume(
            lane.clustered,
            e.record as u64,
            e.offset,
            superseded.iter().copied(),
            store.take(),
        );
        let mut f = std::fs::File::open(&path).expect("open");
        f.seek(SeekFrom::Start(s.offset())).expect("seek");
        let mut buf = vec![0u8; 4 << 20];
        loop {
            let k = f.read(&mut buf).expect("read");
            if k == 0 || s.push(&buf[..k]) {
                break;
            }
        }
        let (d, back) = s.finish_keeping();
        *store = back;
        assert!(d.error.is_none(), "{:?}", d.error);
        t.elapsed().as_secs_f64() * 1e3
    };
    let first = inspect(last, &mut store);
    println!(
        "first inspection (last entry, from the start): {first:.0} ms, {} checkpoints kept",
        store.as_ref().map_or(0, |s| s.len())
    );
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut times = Vec::new();
    for _ in 0..n {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let e = live[(seed % live.len() as u64) as usize];
        times.push(inspect(e, &mut store));
    }
    times.sort_by(f64::total_cmp);
    if let (Some(max), Some(median)) = (times.last(), times.get(times.len() / 2)) {
        println!("{n} random inspections: median {median:.1} ms, max {max:.1} ms");
    }
}
