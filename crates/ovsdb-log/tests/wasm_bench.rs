//! wasm throughput of `summarize` in the browser (a benchmark, not a test:
//! it prints figures and asserts nothing about speed). Built only with
//! `RUSTFLAGS="--cfg ovsdb_log_bench"`; see BENCHMARKS.md.
#![cfg(all(target_arch = "wasm32", ovsdb_log_bench))]

use ovsdb::StorageMode;
use ovsdb_log::{summarize, synth};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

static TEMPLATE: &[u8] = include_bytes!("../../../static/samples/acl-portgroup-full/s1.db");

#[wasm_bindgen_test]
fn summarize_throughput() {
    for n in [600usize, 1200, 2000] {
        let file = synth::acl_portgroup(TEMPLATE, n, StorageMode::Full).unwrap();
        let t0 = js_sys::Date::now();
        let s = summarize(&file);
        let ms = js_sys::Date::now() - t0;
        assert!(s.truncated.is_none() && s.entry_bytes.diff.is_some());
        console_log!(
            "wasm summarize: N={n} {} bytes in {ms:.0} ms = {:.1} MB/s (full {:?}, diff {:?})",
            file.len(),
            file.len() as f64 / 1e6 / (ms / 1e3),
            s.entry_bytes.full,
            s.entry_bytes.diff
        );
    }
}
