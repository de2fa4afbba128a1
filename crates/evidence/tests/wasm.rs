//! wasm32 tests (run in a browser by the project test script with
//! chromedriver): the server log reader on a real fixture log embedded in
//! the binary.
#![cfg(target_arch = "wasm32")]

use evidence::log::{read_log, LogScanner};
use evidence::status::parse_cluster_status;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

static LOG: &[u8] =
    include_bytes!("../../../tests/fixtures/incidents/leader-pause/s1.ovsdb-server.log");
static STATUS: &str =
    include_str!("../../../tests/fixtures/incidents/leader-pause/s2.cluster-status.txt");

#[wasm_bindgen_test]
fn parses_an_embedded_log() {
    let f = read_log(LOG);
    let lf = LOG.iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(f.lines, lf);
    assert_eq!(f.unparsed, 0);
    assert!(!f.not_text);
    // facts.json: files."s1.db".header.server_id = aa26d157-…
    assert_eq!(f.server_id.as_deref(), Some("aa26"));
    let leader_lines = LOG
        .split(|&b| b == b'\n')
        .filter(|l| l.windows(18).any(|w| w == b"is leader for term"))
        .count();
    assert_eq!(
        f.events
            .iter()
            .filter(|e| e.kind.name() == "leader-is")
            .count(),
        leader_lines
    );
}

#[wasm_bindgen_test]
fn chunked_equals_whole() {
    let whole = read_log(LOG);
    for n in [1, 7, 4096] {
        let mut s = LogScanner::new();
        for c in LOG.chunks(n) {
            s.push(c);
        }
        assert!(s.finish() == whole, "chunks of {n}");
    }
}

#[wasm_bindgen_test]
fn parses_an_embedded_status() {
    let s = parse_cluster_status(STATUS).unwrap();
    // facts.json: servers.s2.cluster_status_at_end
    assert_eq!(
        (s.role.as_str(), s.term, s.commit_index()),
        ("leader", 2, Some(67))
    );
}
