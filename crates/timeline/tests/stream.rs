#![cfg(not(target_arch = "wasm32"))]
//! The one-pass load (summary + lane + check from one `LogScan` walk) gives
//! the same timeline fed in chunks of any size as in one push, on every
//! sample and fixture, one cluster per folder, and on damaged copies.

use std::collections::BTreeMap;
use std::path::PathBuf;
use timeline::load::{FileEnd, TimelineLoad};
use timeline::Timeline;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Database files by folder (a folder is one cluster's files).
fn clusters() -> BTreeMap<String, Vec<(String, Vec<u8>)>> {
    let mut out: BTreeMap<String, Vec<(String, Vec<u8>)>> = BTreeMap::new();
    let mut dirs = vec![root().join("static/samples"), root().join("tests/fixtures")];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "db" || x == "records") {
                out.entry(d.display().to_string()).or_default().push((
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    for v in out.values_mut() {
        v.sort();
    }
    assert!(out.len() >= 10, "samples not found");
    out
}

fn damaged(b: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let n = b.len();
    let mut v = vec![("truncated", b[..n / 3].to_vec())];
    let mut f = b.to_vec();
    f[n / 2] ^= 0x20;
    v.push(("flipped", f));
    let mut g = b[..n / 2].to_vec();
    g.extend_from_slice(
        b"OVSDB CLUSTER 99999999 0123456789012345678901234567890123456789\ngarbage\n",
    );
    g.extend_from_slice(&b[n / 2..]);
    v.push(("garbage", g));
    v
}

fn chunked(files: &[(String, Vec<u8>)], chunk: usize) -> Timeline {
    let mut load = TimelineLoad::new(true);
    for (name, bytes) in files {
        let mut f = load.begin(name);
        for c in bytes.chunks(chunk.max(1)) {
            f.push(load.checker(), c);
        }
        let done = match f.finish(load.checker()) {
            FileEnd::Done(l) => *l,
            FileEnd::Again(mut again) => {
                for c in bytes.chunks(chunk.max(1)) {
                    again.push(c);
                }
                again.finish()
            }
        };
        load.add(done);
    }
    load.finish()
}

fn refs(files: &[(String, Vec<u8>)]) -> Vec<(&str, &[u8])> {
    files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect()
}

#[test]
fn chunks_of_any_size_give_the_same_timeline() {
    for (dir, files) in clusters() {
        let whole = timeline::build_timeline(&refs(&files), &mut |_| {});
        let total: usize = files.iter().map(|f| f.1.len()).sum();
        let sizes: &[usize] = if total < 300_000 {
            &[1, 7, 4096]
        } else {
            &[4096, 65536]
        };
        for &c in sizes {
            let t = chunked(&files, c);
            assert_eq!(t, whole, "{dir}: chunks of {c} bytes");
        }
        for (k, d) in damaged(&files[0].1) {
            let mut f = files.clone();
            f[0].1 = d;
            let whole = timeline::build_timeline(&refs(&f), &mut |_| {});
            assert_eq!(
                chunked(&f, 4096),
                whole,
                "{dir} ({k}): chunks of 4096 bytes"
            );
        }
    }
}
