//! `summarize` agrees with the recorded `ovsdb-tool -mm show-log` output of
//! every sample: record count and kinds, terms, indexes, votes, leaders,
//! commit indexes. (The live comparison against the installed tool is in
//! the CLI's interop tests.)

mod common;
mod showlog;

use ovsdb_log::{summarize_records, Format};

#[test]
fn summaries_match_recorded_show_log() {
    for (scen, stem, bytes) in common::all_samples() {
        let s = summarize_records(&bytes);
        assert!(s.truncated.is_none(), "{scen}/{stem}: {:?}", s.truncated);
        let text = std::fs::read_to_string(
            common::repo_root().join(format!("tests/fixtures/samples/{scen}/{stem}.show-log.txt")),
        )
        .unwrap();
        let shown = showlog::parse(&text);
        showlog::assert_agrees(&s, &shown, &format!("{scen}/{stem}"));
        if scen == "standalone" {
            assert_eq!(s.format, Some(Format::Standalone));
            assert_eq!(s.record_kinds.schema, 1);
        } else {
            assert_eq!(s.format, Some(Format::Clustered));
            assert_eq!(
                s.database.as_deref().map(|d| d.starts_with("OVN_")),
                Some(true)
            );
        }
    }
}
