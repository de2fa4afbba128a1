#![allow(dead_code)]
use std::path::{Path, PathBuf};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (scenario, file stem, bytes) of every sample `.db` file.
pub fn all_samples() -> Vec<(String, String, Vec<u8>)> {
    let mut out = Vec::new();
    let dir = repo_root().join("static/samples");
    let mut scen: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    scen.sort_by_key(|e| e.file_name());
    for s in scen {
        let name = s.file_name().to_string_lossy().to_string();
        let mut files: Vec<_> = std::fs::read_dir(s.path()).unwrap().flatten().collect();
        files.sort_by_key(|e| e.file_name());
        for f in files {
            let fname = f.file_name().to_string_lossy().to_string();
            if let Some(stem) = fname.strip_suffix(".db") {
                let bytes = std::fs::read(f.path()).unwrap();
                out.push((name.clone(), stem.to_string(), bytes));
            }
        }
    }
    out
}

pub fn sample(scen: &str, stem: &str) -> Vec<u8> {
    std::fs::read(repo_root().join(format!("static/samples/{scen}/{stem}.db"))).unwrap()
}

/// (name, bytes) of every `.db` and `.records` file under static/samples
/// and tests/fixtures, each content once (the incident samples are copies
/// of fixtures).
pub fn distinct_inputs() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let root = repo_root();
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

/// Damaged copies: truncated at a third, a flipped byte in the middle, a
/// zeroed hole at two thirds, garbage inserted in the middle, empty.
pub fn damaged_copies(b: &[u8]) -> Vec<(String, Vec<u8>)> {
    let n = b.len();
    let mut v = vec![("truncated".to_string(), b[..n / 3].to_vec())];
    let mut f = b.to_vec();
    if n > 0 {
        f[n / 2] ^= 0x20;
    }
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
