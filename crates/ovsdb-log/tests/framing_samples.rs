//! Every real sample frames cleanly and has as many records as
//! `ovsdb-tool -mm show-log` printed for it.

use ovsdb_log::{Format, Framer};
use std::path::{Path, PathBuf};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (scenario, file stem) of every sample with a recorded show-log.
pub fn samples() -> Vec<(String, String)> {
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
                out.push((name.clone(), stem.to_string()));
            }
        }
    }
    out
}

#[test]
fn every_sample_frames_and_matches_show_log_record_count() {
    let list = samples();
    assert!(list.len() >= 26, "samples missing: {}", list.len());
    for (scen, stem) in list {
        let bytes =
            std::fs::read(repo_root().join(format!("static/samples/{scen}/{stem}.db"))).unwrap();
        let mut fr = Framer::new(&bytes);
        let n = fr.by_ref().filter(|r| r.is_ok()).count();
        assert!(fr.error().is_none(), "{scen}/{stem}: {:?}", fr.error());
        assert_eq!(fr.good_end(), bytes.len() as u64);
        let expect_fmt = if scen == "standalone" {
            Format::Standalone
        } else {
            Format::Clustered
        };
        assert_eq!(fr.format(), Some(expect_fmt));
        let show = std::fs::read_to_string(
            repo_root().join(format!("tests/fixtures/samples/{scen}/{stem}.show-log.txt")),
        )
        .unwrap();
        let shown = show
            .lines()
            .filter(|l| l.starts_with("record ") && l.contains(':'))
            .count();
        assert_eq!(n, shown, "{scen}/{stem}");
    }
}
