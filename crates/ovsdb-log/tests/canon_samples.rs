#![cfg(not(target_arch = "wasm32"))]
//! The check's canonical text of entry data, written straight from the
//! bytes, equals the tree's (`sort_recursive` + `write_compact`) on every
//! entry of every sample and incident file, and takes the fast path for
//! what real servers write.

mod common;

use ovsdb_log::{Event, LogScan, ScanOptions, Verdict};

#[test]
fn canonical_text_of_every_sample_entry() {
    let mut files = common::all_samples();
    let inc = common::repo_root().join("tests/fixtures/incidents");
    for d in std::fs::read_dir(&inc).unwrap().flatten() {
        if !d.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            let n = f.file_name().to_string_lossy().to_string();
            if let Some(stem) = n.strip_suffix(".db") {
                files.push((
                    d.file_name().to_string_lossy().to_string(),
                    stem.to_string(),
                    std::fs::read(f.path()).unwrap(),
                ));
            }
        }
    }
    let (mut fast, mut total) = (0, 0);
    for (scen, stem, bytes) in files {
        LogScan::scan_all(&bytes, ScanOptions::default(), &mut |ev| {
            if let Event::Entry { data: Some(d), .. } = ev {
                total += 1;
                let mut j = ovsdb::json::parse_value(d).unwrap();
                j.sort_recursive();
                let mut want = Vec::new();
                j.write_compact(&mut want);
                let mut got = Vec::new();
                if ovsdb_log::canon::canonical(d, &mut got).is_some() {
                    fast += 1;
                    assert_eq!(
                        String::from_utf8_lossy(&got),
                        String::from_utf8_lossy(&want),
                        "{scen}/{stem}"
                    );
                }
            }
            Verdict::Keep
        });
    }
    assert!(total > 3000, "{total} entries");
    // Servers write no escapes or reals in these samples' data but in a few
    // values (e.g. a schema); nearly every entry takes the fast path.
    assert!(fast * 100 >= total * 95, "fast path for {fast} of {total}");
}
