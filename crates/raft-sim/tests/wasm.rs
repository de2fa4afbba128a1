//! In the browser (wasm-bindgen-test, run_in_browser): the same scenario,
//! profile and seed must give the same trace hash as the native build. The
//! native hashes are the `trace_hash` lines of scenarios/*.expected, which
//! the native transcript test checks.
#![cfg(target_arch = "wasm32")]

use raft_sim::report::transcript;
use raft_sim::Sim;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn native_hash(expected: &str) -> String {
    expected
        .lines()
        .find_map(|l| l.strip_prefix("trace_hash = "))
        .expect("trace_hash line")
        .to_string()
}

fn check(scn: &str, expected: &str) {
    let mut sim = Sim::from_text(scn, None, &[], 1).unwrap();
    let got = transcript(&mut sim);
    assert_eq!(format!("{:016x}", sim.trace_hash()), native_hash(expected));
    assert_eq!(got, expected);
}

#[wasm_bindgen_test]
fn ls_add_follower_trace_hash_matches_native() {
    check(
        include_str!("../../../scenarios/ls-add-follower.scn"),
        include_str!("../../../scenarios/ls-add-follower.expected"),
    );
}

#[wasm_bindgen_test]
fn leader_kill_trace_hash_matches_native() {
    check(
        include_str!("../../../scenarios/leader-kill.scn"),
        include_str!("../../../scenarios/leader-kill.expected"),
    );
}

#[wasm_bindgen_test]
fn membership_and_open_loop_trace_hash_matches_native() {
    check(
        include_str!("../../../scenarios/membership.scn"),
        include_str!("../../../scenarios/membership.expected"),
    );
}
