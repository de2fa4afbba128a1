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
