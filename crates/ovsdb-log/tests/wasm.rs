//! wasm32 tests (run in a browser by the project test script with
//! chromedriver): the log reader works on a real sample embedded in the
//! binary.
#![cfg(target_arch = "wasm32")]

use ovsdb_log::{summarize, Format};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

static SAMPLE: &[u8] = include_bytes!("../../../static/samples/election-timer/s1.db");
static STANDALONE: &[u8] = include_bytes!("../../../static/samples/standalone/nb.db");

#[wasm_bindgen_test]
fn summarize_embedded_clustered_sample() {
    let s = summarize(SAMPLE);
    assert_eq!(s.format, Some(Format::Clustered));
    assert_eq!(s.database.as_deref(), Some("OVN_Northbound"));
    assert_eq!(s.records, 53);
    assert!(s.truncated.is_none());
    assert_eq!(s.terms, vec![1]);
    // Sizes need the replay: the stored diff-mode file is its own diff size.
    assert_eq!(s.entry_bytes.diff, Some(s.entry_bytes.stored));
    assert!(s.entry_bytes.full.is_some());
}

#[wasm_bindgen_test]
fn truncated_tail_still_summarized() {
    let cut = &SAMPLE[..SAMPLE.len() - 7];
    let s = summarize(cut);
    assert_eq!(s.records, 52);
    let t = s.truncated.expect("truncated");
    assert_eq!(t.record, 52);
}

#[wasm_bindgen_test]
fn standalone_replays_and_reencodes() {
    let s = summarize(STANDALONE);
    assert_eq!(s.format, Some(Format::Standalone));
    let r = ovsdb_log::replay(STANDALONE, ovsdb_log::Upto::All);
    assert!(r.error.is_none());
    assert!(r.db.unwrap().row_count() > 0);
    let same = ovsdb_log::convert::convert(SAMPLE, ovsdb::StorageMode::Diff).unwrap();
    assert_eq!(same, SAMPLE);
}
