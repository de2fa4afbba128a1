//! The inspector's path in the web worker, natively. The files (one
//! cluster's, say) load as the page loads them: one walk each, read from
//! disk in 4 MB chunks, sharing the replay of their common prefix and
//! keeping checkpoints of it (`TimelineLoad::with_checkpoints`). Then, for
//! each file, the first inspection of random entries, each from a fresh
//! copy of the load's checkpoints (`InspectStream::resume`), reading the
//! file from the nearest checkpoint's offset. With `none` the load keeps
//! no checkpoints and each first inspection replays from the start; with
//! `ahead` each inspection reads its record first (as the web worker does
//! for a file it can read at any offset, `InspectStream::resume_knowing`).
//!   cargo run --release -p timeline --example inspect_jumps -- [N=30] [none] [ahead] FILE...
use ovsdb_log::checkpoint::{Checkpoints, Policy};
use std::io::{Read, Seek, SeekFrom};
use std::time::Instant;
use timeline::inspect::InspectStream;
use timeline::load::{FileEnd, TimelineLoad};

fn read_from(path: &str, offset: u64, push: &mut dyn FnMut(&[u8]) -> bool) {
    let mut f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    f.seek(SeekFrom::Start(offset)).expect("seek");
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let k = f.read(&mut buf).expect("read");
        if k == 0 || push(&buf[..k]) {
            break;
        }
    }
}

fn main() {
    let mut n = 30usize;
    let mut keep = true;
    let mut ahead = false;
    let mut paths = Vec::new();
    for a in std::env::args().skip(1) {
        match a.parse::<usize>() {
            Ok(k) => n = k,
            Err(_) if a == "none" => keep = false,
            Err(_) if a == "ahead" => ahead = true,
            Err(_) => paths.push(a),
        }
    }
    if paths.is_empty() {
        eprintln!("usage: inspect_jumps [N] [none] FILE...");
        std::process::exit(2);
    }
    let t = Instant::now();
    let mut load = TimelineLoad::new(true);
    if keep {
        load = load.with_checkpoints(Policy::default());
    }
    for path in &paths {
        let mut fl = load.begin(path);
        read_from(path, 0, &mut |c| {
            fl.push(load.checker(), c);
            false
        });
        let l = match fl.finish(load.checker()) {
            FileEnd::Done(l) => *l,
            FileEnd::Again(mut again) => {
                read_from(path, 0, &mut |c| {
                    again.push(c);
                    false
                });
                again.finish()
            }
        };
        load.add(l);
    }
    let stores = load.take_checkpoints();
    let timeline = load.finish();
    println!(
        "load of {} file(s) with{} checkpoints: {:.0} ms",
        paths.len(),
        if keep { "" } else { "out" },
        t.elapsed().as_secs_f64() * 1e3
    );
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for path in &paths {
        let Some(lane) = timeline.lanes.iter().find(|l| l.name == *path) else {
            continue;
        };
        let store = stores.iter().find(|(p, _)| p == path).map(|(_, s)| s);
        let superseded: Vec<usize> = lane.superseded_records();
        let live: Vec<_> = lane.entries.iter().filter(|e| !e.superseded).collect();
        if live.is_empty() {
            println!("{path}: no entries");
            continue;
        }
        let mut times = Vec::new();
        for k in 0..n {
            let e = if k == 0 {
                live[live.len() - 1]
            } else {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                live[(seed % live.len() as u64) as usize]
            };
            let t = Instant::now();
            let fresh = store
                .cloned()
                .unwrap_or_else(|| Box::new(Checkpoints::new(Policy::default())));
            let mut s = if ahead {
                let mut head = Vec::new();
                read_from(path, e.offset, &mut |c| {
                    head.extend_from_slice(c);
                    timeline::inspect::record_len(&head).is_some_and(|n| head.len() as u64 >= n)
                });
                InspectStream::resume_knowing(
                    lane.clustered,
                    e.record as u64,
                    e.offset,
                    superseded.iter().copied(),
                    Some(fresh),
                    &head,
                )
            } else {
                InspectStream::resume(
                    lane.clustered,
                    e.record as u64,
                    e.offset,
                    superseded.iter().copied(),
                    Some(fresh),
                )
            };
            read_from(path, s.offset(), &mut |c| s.push(c));
            let d = s.finish();
            assert!(d.error.is_none(), "{:?}", d.error);
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let last = times[0];
        times.sort_by(f64::total_cmp);
        println!(
            "{path}: {} checkpoints; first inspection of the last entry {last:.0} ms; \
             {n} first inspections: median {:.1} ms, max {:.1} ms",
            store.map_or(0, |s| s.len()),
            times[times.len() / 2],
            times[times.len() - 1]
        );
    }
}
