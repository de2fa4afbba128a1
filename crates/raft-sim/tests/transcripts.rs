//! Data-driven test: every preset in scenarios/*.scn is run with seed 1 and
//! its transcript compared with scenarios/<name>.expected.
//! Regenerate with `UPDATE_TRANSCRIPTS=1 cargo test -p raft-sim --test transcripts`.

use raft_sim::report::transcript;
use raft_sim::Sim;

#[test]
fn preset_transcripts_match_expected_files() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let update = std::env::var("UPDATE_TRANSCRIPTS").is_ok();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "scn" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    assert!(names.len() >= 6, "{names:?}");
    let mut mismatches = Vec::new();
    for name in names {
        let text = std::fs::read_to_string(format!("{dir}/{name}.scn")).unwrap();
        // The embedded preset must be the file on disk.
        assert_eq!(raft_sim::preset(&name), Some(text.as_str()), "{name}");
        let mut sim = Sim::from_text(&text, None, &[], 1).unwrap();
        let got = transcript(&mut sim);
        assert!(got.contains("invariant_violations = 0"), "{name}:\n{got}");
        let path = format!("{dir}/{name}.expected");
        if update {
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            mismatches.push(format!("--- {path}\n{want}\n+++ got\n{got}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
