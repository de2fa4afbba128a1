//! The load pass ([`contents::load::Loader`] over `ovsdb_log::LogScan`)
//! gives the same [`contents::Log`] fed in chunks of 1, 7 and 4096 bytes as
//! with the whole file: on every sample and fixture and on damaged copies.
#![cfg(not(target_arch = "wasm32"))]

use contents::load::Loader;
use contents::Log;
use ovsdb_log::LogScan;

mod common;

fn inputs() -> Vec<(String, Vec<u8>)> {
    common::inputs(&["db", "records"])
}

/// Truncated at a third, a flipped byte in the middle, a zeroed hole at
/// two thirds, garbage inserted in the middle.
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

fn load_chunked(bytes: &[u8], chunk: usize) -> Log<'_> {
    let mut l = Loader::new();
    let mut scan = LogScan::new(l.options());
    for c in bytes.chunks(chunk.max(1)) {
        scan.push(c, &mut |ev| l.on_event(&ev));
    }
    scan.finish(&mut |ev| l.on_event(&ev));
    l.finish(&scan, bytes)
}

fn show(l: &Log<'_>) -> String {
    format!(
        "{:?} {:?} {:?} {:?} {:?} {} {}",
        l.format,
        l.entries,
        l.commit_index,
        l.error,
        l.schema.as_ref().map(|s| s.name.clone()),
        l.first_record,
        l.history.len()
    )
}

#[test]
fn load_in_chunks_matches_the_whole_file() {
    let mut n = 0;
    let mut entries = 0;
    for (name, bytes) in inputs() {
        let mut cases = vec![("as is".to_string(), bytes.clone())];
        cases.extend(damaged(&bytes));
        for (what, b) in cases {
            let whole = Log::load(&b);
            entries += whole.entries.len();
            for chunk in [1usize, 7, 4096] {
                if chunk == 1 && b.len() > 256 << 10 {
                    continue;
                }
                let l = load_chunked(&b, chunk);
                assert_eq!(show(&l), show(&whole), "{name} {what}: chunks of {chunk}");
                assert!(l.history == whole.history, "{name} {what}: history index");
                n += 1;
            }
        }
    }
    assert!(n > 100 && entries > 1000, "{n} {entries}");
}
