//! `ovsdb-scope idl-experiment`: JSON output of the library figures, and
//! bad arguments rejected with exit code 2 (never a panic).

use ovsdb::json::{parse, Json};
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ovsdb-scope"))
        .arg("idl-experiment")
        .args(args)
        .output()
        .expect("run ovsdb-scope");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn experiments_print_json_figures() {
    let (code, out, err) = run(&[
        "own-write-echo",
        "--rows",
        "5",
        "--iterations",
        "3",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let j = parse(out.trim().as_bytes()).unwrap();
    assert_eq!(
        j.get("experiment").and_then(Json::as_str),
        Some("own-write-echo")
    );
    let modes = j.get("modes").and_then(Json::as_array).unwrap();
    assert_eq!(modes[0].get("seqno_moves").and_then(Json::as_i64), Some(3));
    assert_eq!(modes[1].get("seqno_moves").and_then(Json::as_i64), Some(0));

    let (code, out, err) = run(&[
        "write-changed-only",
        "--rows",
        "200",
        "--columns",
        "6",
        "--changed",
        "1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let j = parse(out.trim().as_bytes()).unwrap();
    let modes = j.get("modes").and_then(Json::as_array).unwrap();
    let bytes = |i: usize| {
        modes[i]
            .get("request_bytes")
            .and_then(Json::as_i64)
            .unwrap()
    };
    assert!(bytes(0) > 50 * bytes(1));

    let (code, out, _) = run(&["diff-apply", "--sizes", "100,1000", "--diffs", "10"]);
    assert_eq!(code, 0);
    assert!(out.contains("diff-apply"));
    let (code, out, _) = run(&[
        "index-vs-hash",
        "--service-monitors",
        "100",
        "--load-balancers",
        "10",
        "--updates-per-sec",
        "20",
        "--seconds",
        "1",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("crossover"));
}

#[test]
fn bad_arguments_exit_2() {
    for args in [
        vec![],
        vec!["nope"],
        vec!["write-changed-only", "--rows"],
        vec!["write-changed-only", "--rows", "-5"],
        vec!["write-changed-only", "--columns", "0"],
        vec!["own-write-echo", "--bogus", "1"],
        vec!["diff-apply", "--sizes", "a,b"],
        vec!["diff-apply", "extra"],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
