//! In the browser (wasm-bindgen-test, run_in_browser): the view model runs
//! the real simulator compiled to wasm and shows the same effects as natively.
#![cfg(target_arch = "wasm32")]

use simview::ab::ab_preset;
use simview::trace::DOWN;
use simview::{parse_hash, run, Route, RunSpec};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn go(spec: &RunSpec) -> simview::RunResult {
    run(spec, &mut |_, _| {}).expect("run")
}

#[wasm_bindgen_test]
fn commit_sync_ratio_in_the_browser() {
    let p = ab_preset("commit-sync").unwrap();
    let a = go(&p.spec_a(1));
    let b = go(&p.spec_b(1));
    assert_eq!(a.trace.writes.len(), 100);
    assert!(a.total_ms() / b.total_ms() >= 50.0);
}

#[wasm_bindgen_test]
fn a_forked_link_reproduces_the_fork() {
    let spec = RunSpec::preset("ls-add-leader").fork(
        2_000_000,
        simview::FaultAction::Kill(simview::Target::Leader),
    );
    let r = go(&spec);
    let hash = Route::Sim {
        spec: spec.clone(),
        t_us: Some(2_000_000),
    }
    .to_hash();
    let Route::Sim { spec: back, .. } = parse_hash(&hash) else {
        panic!("{hash}");
    };
    let again = go(&back);
    assert_eq!(again.trace_hash, r.trace_hash);
    assert_eq!(again.json, r.json);
    assert!((0..r.trace.servers()).any(|s| r.trace.state_at(s, 2_000_001).unwrap().life == DOWN));
}
