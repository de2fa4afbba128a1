//! Inputs the contents tests share: every sample and fixture file.

use std::path::PathBuf;

/// Every file under `static/samples` and `tests/fixtures` whose extension
/// is one of `exts`, sorted by path, each distinct content once (the
/// bundled incident copies are the fixtures' files).
pub fn inputs(exts: &[&str]) -> Vec<(String, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    let mut dirs = vec![root.join("static/samples"), root.join("tests/fixtures")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
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
