//! [`idl::timetravel::TimelineBuilder`] (the timeline's load over
//! `ovsdb_log::LogScan`) builds the same timeline fed in chunks of 1, 7 and
//! 4096 bytes as with the whole file: on every sample and fixture and on
//! damaged copies.
#![cfg(not(target_arch = "wasm32"))]

use idl::timetravel::{Timeline, TimelineBuilder};
use ovsdb_log::LogScan;
use std::path::PathBuf;

fn inputs() -> Vec<(String, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let mut dirs = vec![root.join("static/samples"), root.join("tests/fixtures")];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "db" || x == "records") {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    let mut seen = std::collections::HashSet::new();
    out.retain(|(_, b)| seen.insert(b.clone()));
    assert!(out.len() >= 20, "samples not found");
    out
}

/// Truncated at a third, a flipped byte in the middle, a zeroed hole at
/// two thirds, garbage inserted in the middle, empty.
fn damaged(b: &[u8]) -> Vec<(String, Vec<u8>)> {
    let n = b.len();
    let mut v = vec![("truncated".to_string(), b[..n / 3].to_vec())];
    let mut f = b.to_vec();
    f[n / 2] ^= 0x20;
    v.push(("flipped".into(), f));
    let mut h = b.to_vec();
    let p = 2 * n / 3;
    for x in h[p..(p + 300).min(n)].iter_mut() {
        *x = 0;
    }
    v.push(("hole".into(), h));
    let mut g = b[..n / 2].to_vec();
    g.extend_from_slice(
        b"OVSDB CLUSTER 99999999 0123456789012345678901234567890123456789\ngarbage\n",
    );
    g.extend_from_slice(&b[n / 2..]);
    v.push(("garbage".into(), g));
    v.push(("empty".into(), Vec::new()));
    v
}

fn load_chunked(bytes: &[u8], chunk: usize) -> Result<Timeline, String> {
    let mut t = TimelineBuilder::new();
    let mut scan = LogScan::new(t.options());
    for c in bytes.chunks(chunk.max(1)) {
        scan.push(c, &mut |ev| t.on_event(&ev));
    }
    scan.finish(&mut |ev| t.on_event(&ev));
    t.finish()
}

#[test]
fn timeline_in_chunks_matches_the_whole_file() {
    let mut n = 0;
    let mut steps = 0;
    for (name, bytes) in inputs() {
        let mut cases = vec![("as is".to_string(), bytes.clone())];
        cases.extend(damaged(&bytes));
        for (what, b) in cases {
            let whole = format!("{:?}", Timeline::load(&b));
            steps += Timeline::load(&b).map_or(0, |t| t.steps.len());
            for chunk in [1usize, 7, 4096] {
                if chunk == 1 && b.len() > 256 << 10 {
                    continue;
                }
                assert_eq!(
                    format!("{:?}", load_chunked(&b, chunk)),
                    whole,
                    "{name} {what}: chunks of {chunk}"
                );
                n += 1;
            }
        }
    }
    assert!(n > 100 && steps > 1000, "{n} {steps}");
}
