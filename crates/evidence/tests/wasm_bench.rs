//! wasm throughput of the ovsdb-server log scanner in the browser (a
//! benchmark, not a test: it prints figures and asserts nothing about
//! speed). Built only with `RUSTFLAGS="--cfg evidence_bench"`; see
//! BENCHMARKS.md.
#![cfg(all(target_arch = "wasm32", evidence_bench))]

use evidence::log::LogScanner;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

static LOGS: [&[u8]; 3] = [
    include_bytes!("../../../tests/fixtures/incidents/election-storm/s1.ovsdb-server.log"),
    include_bytes!("../../../tests/fixtures/incidents/leader-pause/s1.ovsdb-server.log"),
    include_bytes!("../../../tests/fixtures/samples/leader-failover/s1.ovsdb-server.log"),
];

/// About `mb` MB of log lines taken from the fixtures, in time order.
fn big_log(mb: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(mb << 20);
    let mut t: u64 = 0;
    while out.len() < mb << 20 {
        for log in LOGS {
            for line in log.split(|&b| b == b'\n').filter(|l| l.len() > 24) {
                // Keep the fixture's text, give it a fresh increasing time.
                t += 7;
                let (s, ms) = (t / 1000, t % 1000);
                let head = format!(
                    "2026-12-01T{:02}:{:02}:{:02}.{ms:03}Z",
                    (s / 3600) % 24,
                    (s / 60) % 60,
                    s % 60
                );
                out.extend_from_slice(head.as_bytes());
                out.extend_from_slice(&line[24..]);
                out.push(b'\n');
            }
        }
    }
    out
}

#[wasm_bindgen_test]
fn log_scan_throughput() {
    let log = big_log(64);
    for (name, index_only) in [("LogScanner", false), ("LogScanner::index_only", true)] {
        let mut best = f64::MAX;
        let mut lines = 0;
        for _ in 0..3 {
            let t0 = js_sys::Date::now();
            let mut s = if index_only {
                LogScanner::index_only()
            } else {
                LogScanner::new()
            };
            for chunk in log.chunks(4 << 20) {
                s.push(chunk);
            }
            let f = s.finish();
            lines = f.lines;
            best = best.min(js_sys::Date::now() - t0);
        }
        console_log!(
            "wasm {name}: {} bytes, {lines} lines in {best:.0} ms = {:.1} MB/s (best of 3, 4 MiB chunks)",
            log.len(),
            log.len() as f64 / 1e6 / (best / 1e3)
        );
    }
}
