#![allow(dead_code)]
// The normalisation and scenario format live with the server model's
// tests; each crate reads its own `tests/scenarios`.
#[path = "../../../ovsdb-server/tests/common/filters.rs"]
pub mod filters;
#[path = "../../../ovsdb-server/tests/common/scenario.rs"]
pub mod scenario;

/// Every bundled sample `.db` file (static/samples/*/*.db), sorted.
pub fn sample_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/samples");
    let mut v = Vec::new();
    for d in std::fs::read_dir(&root).unwrap() {
        let d = d.unwrap().path();
        if !d.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&d).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|x| x == "db") {
                v.push(f);
            }
        }
    }
    v.sort();
    v
}
