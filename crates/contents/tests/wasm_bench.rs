//! The substring filter's figures in the browser (wasm32, headless
//! Chromium), on the generated 100 000-row `Logical_Flow` table of
//! `benches/browse.rs`. Prints figures, asserts no time; not part of the
//! test script's runs. Run:
//! `WASM_BINDGEN_TEST_TIMEOUT=900 cargo test --release -p contents --target wasm32-unknown-unknown --test wasm_bench -- --nocapture`
//! (with chromedriver and `wasm-bindgen-test-runner` set up as
//! `scripts/test.sh` does).
#![cfg(target_arch = "wasm32")]

use contents::browse::{select, Mode, TableText, TextIndex};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

static SB_SCHEMA: &[u8] = include_bytes!("../../../static/samples/schemas/ovn-sb.ovsschema");

fn now() -> f64 {
    let perf = js_sys::Reflect::get(&js_sys::global(), &"performance".into()).unwrap();
    let f = js_sys::Reflect::get(&perf, &"now".into()).unwrap();
    js_sys::Function::from(f)
        .call0(&perf)
        .unwrap()
        .as_f64()
        .unwrap()
}

#[wasm_bindgen_test]
fn text_index_figures() {
    let schema = ovsdb::json::parse(SB_SCHEMA).unwrap();
    let shape = ovsdb_log::synth_sb::SbShape {
        datapaths: 500,
        flows_per_datapath: 200,
        entries: 200,
        ..Default::default()
    };
    let t = now();
    let mut file = Vec::new();
    ovsdb_log::synth_sb::southbound(&shape, &schema, &mut |i, b| {
        if i == 0 {
            file.extend_from_slice(b)
        }
    });
    let gen_ms = now() - t;
    let t = now();
    let db = contents::database_at(&file, contents::Upto::Committed)
        .unwrap()
        .0;
    let replay_ms = now() - t;
    let table = "Logical_Flow";
    let rows = db.table(table).unwrap().len();
    let t = now();
    let text = TableText::build(&db, table).unwrap();
    let build_ms = now() - t;
    console_log!(
        "file {} bytes (generated {gen_ms:.0} ms, replayed {replay_ms:.0} ms); {table}: {rows} rows, text built in {build_ms:.0} ms, {} bytes",
        file.len(),
        text.bytes()
    );
    let mut ix = TextIndex::new();
    let t = now();
    let mut slices = 0;
    while !ix.prepare(&db, table, 500).unwrap() {
        slices += 1;
    }
    console_log!(
        "built again in 500-row slices: {slices} slices, {:.0} ms",
        now() - t
    );
    for q in ["ct_next", "reg0[7]", "no-such-text"] {
        let t = now();
        let s = select(&db, table, q, Some(&mut ix)).unwrap();
        let kept_ms = now() - t;
        assert_eq!(s.mode, Mode::Text);
        let t = now();
        let _ = select(&db, table, q, None).unwrap();
        let none_ms = now() - t;
        console_log!(
            "{q:?}: {} rows; select with the kept index {kept_ms:.1} ms, without {none_ms:.0} ms",
            s.uuids.len()
        );
    }
}
