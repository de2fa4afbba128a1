//! `ovsdb-scope simulate` / `compare` end to end: JSON keys of issue 4
//! item 8, `--set`, `--seeds` aggregation, `--trace`, and the A/B table.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ovsdb-scope"))
        .args(args)
        .output()
        .expect("run ovsdb-scope");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn simulate_json_has_the_documented_keys() {
    let (code, out, err) = run(&[
        "simulate",
        "ls-add-follower",
        "--profile",
        "v2.12",
        "--set",
        "n=10",
        "--set",
        "election_timer=2000",
        "--seed",
        "4",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    for key in [
        "\"scenario\":\"ls-add-follower\"",
        "\"profile\":\"v2.12\"",
        "\"seed\":4",
        "\"sim_time_ms\":",
        "\"txns\":{\"count\":10,\"total_ms\":",
        "\"latency_ms\":{\"mean\":",
        "\"p50\":",
        "\"p99\":",
        "\"max\":",
        "\"elections\":",
        "\"terms\":",
        "\"leaderless_ms\":",
        "\"time_to_leader_ms\":",
        "\"bytes\":{\"log_written\":",
        "\"sent\":",
        "\"events\":",
        "\"invariants\":{\"checks\":",
        "\"violations\":0",
    ] {
        assert!(out.contains(key), "missing {key} in {out}");
    }
}

#[test]
fn seeds_aggregate_and_compare_table() {
    let (code, out, err) = run(&["simulate", "leader-kill", "--seeds", "20", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"seeds\":20"), "{out}");
    assert!(out.contains("\"time_to_leader_ms\":{\"mean\":"), "{out}");
    let (code, out, err) = run(&[
        "compare",
        "ls-add-follower",
        "--a",
        "profile=v2.12-pre-sync,n=10",
        "--b",
        "profile=v2.12,n=10",
    ]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("txns.total_ms"))
        .unwrap_or_else(|| panic!("{out}"));
    let ratio: f64 = line.split_whitespace().last().unwrap().parse().unwrap();
    assert!(ratio < 1.0 / 50.0, "{line}");
    let (code, out, _) = run(&[
        "compare",
        "ls-add-leader",
        "--a",
        "n=5",
        "--b",
        "n=5,fsync=5",
        "--json",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("\"ratio\":{"), "{out}");
}

#[test]
fn trace_file_and_bad_input() {
    let dir = std::env::temp_dir().join(format!("sim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.jsonl");
    let (code, _, err) = run(&[
        "simulate",
        "leader-kill",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.lines().any(|l| l.contains("\"kind\":\"leader\"")));
    assert!(text.lines().any(|l| l.contains("\"msg\":\"heartbeat\"")));
    let (code, _, err) = run(&["simulate", "leader-kill", "--set", "no_such_knob=1"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown knob"), "{err}");
    let (code, _, err) = run(&["simulate", "leader-kill", "--set", "election_timer=50"]);
    assert_eq!(code, 2, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_profile_runs_and_an_unknown_one_is_a_usage_error() {
    for profile in ["v2.17", "v3.2", "v3.3", "v3.4"] {
        let (code, out, err) = run(&[
            "simulate",
            "ls-add-follower",
            "--profile",
            profile,
            "--set",
            "n=5",
            "--json",
        ]);
        assert_eq!(code, 0, "{profile}: {err}");
        assert!(out.contains(&format!("\"profile\":\"{profile}\"")), "{out}");
    }
    let (code, _, err) = run(&["simulate", "ls-add-follower", "--profile", "v9.9"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("v9.9") && err.contains("v3.4"), "{err}");
}

#[test]
fn simulate_through_a_relay_with_set_via() {
    let (code, out, err) = run(&[
        "simulate",
        "ls-add-follower",
        "--set",
        "relays=1",
        "--set",
        "via=relay",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    for key in [
        "\"txns\":{\"count\":100,",
        "\"relay\":{\"count\":1,\"forward_ms\":{\"mean\":",
        "\"visible_ms\":{\"mean\":",
        "\"msgs\":302,",
        "\"violations\":0",
    ] {
        assert!(out.contains(key), "missing {key} in {out}");
    }
    // Through a relay that the run does not have: a usage error, no panic.
    let (code, _, err) = run(&["simulate", "ls-add-follower", "--set", "via=r1"]);
    assert_ne!(code, 0);
    assert!(err.contains("relays"), "{err}");
}

/// The value of `figure` in a compare table: (A, B).
fn ab_line(out: &str, figure: &str) -> (f64, f64) {
    let line = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(figure))
        .unwrap_or_else(|| panic!("no {figure} in {out}"));
    let w: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .take(2)
        .map(|x| x.parse().unwrap())
        .collect();
    (w[0], w[1])
}

#[test]
fn compare_runs_an_ab_preset_by_name_with_sets_on_both_sides() {
    // The A/B preset is the web's #ab=write-changed-only; --set applies to
    // both sides (smaller here).
    let (code, out, err) = run(&[
        "compare",
        "write-changed-only",
        "--set",
        "n=10",
        "--set",
        "sb_ports=1000",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("write-changed-only: "), "{out}");
    // Each side's knobs once, with the value it ran with (--set's n=10
    // over the preset's n), as KNOB=VALUE.
    let a_line = out.lines().find(|l| l.starts_with("A: ")).unwrap();
    assert!(a_line.contains(" write_changed_only=false"), "{out}");
    assert!(a_line.contains(" sb_ports=1000"), "{out}");
    assert_eq!(a_line.matches(" n=").count(), 1, "{out}");
    assert!(a_line.contains(" n=10"), "{out}");
    let (a, b) = ab_line(&out, "sb.northd.txn_bytes.mean");
    assert!(a > 100.0 * b, "{a} {b}");
    let (a, b) = ab_line(&out, "bringup.ms.mean");
    assert!(a > b, "{a} {b}");
    let (code, out, err) = run(&["compare", "route-status", "--set", "n=20", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("{\"a\":"), "{out}");
    // A name that is no A/B preset needs --a and --b.
    let (code, _, err) = run(&["compare", "leader-kill"]);
    assert_eq!(code, 2);
    assert!(err.contains("not an A/B preset"), "{err}");
    let (code, _, _) = run(&["compare", "leader-kill", "--a", "n=1"]);
    assert_eq!(code, 2);
}

/// `--list-knobs --json` as printed by `args`.
fn listed(args: &[&str]) -> (listing::Listing, String) {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{err}");
    (listing::read(&out), out)
}

/// The listing read with the workspace's own JSON parser.
mod listing {
    use ovsdb::json::{parse, Json};

    pub struct Listing {
        pub profile: String,
        pub scenario: Option<String>,
        /// (name, value, kind) of each knob.
        pub knobs: Vec<(String, Option<String>, String)>,
    }

    pub fn read(text: &str) -> Listing {
        let j = parse(text.trim().as_bytes()).unwrap_or_else(|e| panic!("{e}: {text}"));
        let str_of = |j: &Json| match j {
            Json::String(s) => Some(s.clone()),
            Json::Null => None,
            other => panic!("not a string: {other:?}"),
        };
        let o = j.as_object().expect("an object");
        let knobs = match o.get("knobs") {
            Some(Json::Array(a)) => a
                .iter()
                .map(|k| {
                    let k = k.as_object().unwrap();
                    (
                        str_of(k.get("name").unwrap()).unwrap(),
                        str_of(k.get("value").unwrap()),
                        str_of(k.get("kind").unwrap()).unwrap(),
                    )
                })
                .collect(),
            other => panic!("knobs: {other:?}"),
        };
        Listing {
            profile: str_of(o.get("profile").unwrap()).unwrap(),
            scenario: str_of(o.get("scenario").unwrap()),
            knobs,
        }
    }
}

#[test]
fn list_knobs_gives_every_knob_set_takes_with_the_profiles_values() {
    use raft_sim::{Knobs, Profile};
    for profile in [Profile::V2_11, Profile::V3_1, Profile::Main] {
        let (l, _) = listed(&[
            "simulate",
            "--list-knobs",
            "--profile",
            profile.name(),
            "--json",
        ]);
        assert_eq!(l.profile, profile.name());
        assert_eq!(l.scenario, None);
        assert!(l.knobs.len() > 50, "{}", l.knobs.len());
        let base = Knobs::for_profile(profile);
        for (name, value, kind) in &l.knobs {
            assert!(!kind.is_empty(), "{name}");
            let Some(value) = value else {
                assert_eq!(name, "via", "only via may be unset");
                continue;
            };
            // The listed value is the profile's own: setting it changes
            // nothing.
            let mut k = base.clone();
            k.set(name, value)
                .unwrap_or_else(|e| panic!("{}: {name}={value}: {e}", profile.name()));
            assert!(
                k == base,
                "{}: {name}={value} is not its value",
                profile.name()
            );
        }
    }
    // The profiles differ where their knobs do: 2.11's election timer.
    let value = |l: &listing::Listing, n: &str| {
        l.knobs
            .iter()
            .find(|k| k.0 == n)
            .unwrap()
            .1
            .clone()
            .unwrap()
    };
    let (old, _) = listed(&["simulate", "--list-knobs", "--profile", "v2.11", "--json"]);
    let (new, _) = listed(&["compare", "--list-knobs", "--json"]);
    assert_eq!(value(&old, "election_timer"), "1024");
    assert_eq!(value(&new, "election_timer"), "1000");
    assert_eq!(value(&old, "column_diff"), "false");
    assert_eq!(new.profile, "main");
}

#[test]
fn list_knobs_applies_the_scenarios_knobs_and_set() {
    // relay-write.scn: profile v3.1, `relays = 1` in its [knobs].
    let (l, _) = listed(&[
        "simulate",
        "relay-write",
        "--list-knobs",
        "--set",
        "fsync=2.5",
        "--json",
    ]);
    assert_eq!(l.profile, "v3.1");
    assert_eq!(l.scenario.as_deref(), Some("relay-write"));
    let value = |n: &str| l.knobs.iter().find(|k| k.0 == n).unwrap().1.clone();
    assert_eq!(value("relays").as_deref(), Some("1"));
    assert_eq!(value("fsync").as_deref(), Some("2.5"));
    // An A/B preset names the scenario it runs.
    let (l, _) = listed(&["compare", "write-changed-only", "--list-knobs", "--json"]);
    assert!(l.scenario.is_some());
    // The text form: one aligned line per knob, after a header.
    let (code, out, err) = run(&["simulate", "--list-knobs"]);
    assert_eq!(code, 0, "{err}");
    let (json, _) = listed(&["simulate", "--list-knobs", "--json"]);
    let lines: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("  KNOB"))
        .collect();
    assert_eq!(lines.len(), json.knobs.len() + 1, "{out}");
    let column = lines[0].find("VALUE").unwrap();
    for (line, (name, value, _)) in lines[1..].iter().zip(&json.knobs) {
        assert_eq!(
            line.split_whitespace().next(),
            Some(name.as_str()),
            "{line}"
        );
        let shown = value.as_deref().unwrap_or("-");
        assert!(line[column..].starts_with(shown), "{line}");
    }
}

#[test]
fn an_unknown_knob_is_named_with_the_closest_one_and_how_to_list_them() {
    let (code, _, err) = run(&["simulate", "leader-kill", "--set", "electon_timer=2000"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("unknown knob 'electon_timer'; did you mean 'election_timer'?"),
        "{err}"
    );
    assert!(err.contains("ovsdb-scope simulate --list-knobs"), "{err}");
    let (code, _, err) = run(&["compare", "leader-kill", "--a", "fsyncc=1", "--b", "n=1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean 'fsync'?"), "{err}");
    assert!(err.contains("ovsdb-scope compare --list-knobs"), "{err}");
    // Nothing near: no guess, still the hint.
    let (code, _, err) = run(&["simulate", "--list-knobs", "--set", "no_such_knob=1"]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("did you mean"), "{err}");
    assert!(err.contains("--list-knobs lists them all"), "{err}");
}

/// `compare --a/--b`: the header names each side's knobs as they ran
/// (--a/--b over --set), and a side's list that gives one knob two values
/// is refused rather than resolved silently.
#[test]
fn compare_sides_show_their_knobs_and_a_knob_given_twice_is_refused() {
    let (code, out, err) = run(&[
        "compare",
        "ls-add-follower",
        "--set",
        "n=4",
        "--set",
        "election_timer=900",
        "--a",
        "election_timer=1000,n=3",
        "--b",
        "election_timer=2000",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("A: profile=v3.1 n=3 election_timer=1000")
    );
    assert_eq!(
        lines.next(),
        Some("B: profile=v3.1 n=4 election_timer=2000")
    );
    // What ran is what the header says: A wrote 3 transactions, B 4.
    assert_eq!(ab_line(&out, "txns.count"), (3.0, 4.0));
    let (code, out, err) = run(&[
        "compare",
        "ls-add-follower",
        "--a",
        "election_timer=1000,election_timer=3000",
        "--b",
        "election_timer=2000",
    ]);
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains("election_timer is given twice (1000 and 3000)"),
        "{err}"
    );
    // Without knobs of its own, a side is its profile alone.
    let (code, out, err) = run(&[
        "compare",
        "ls-add-follower",
        "--set",
        "n=2",
        "--a",
        "profile=v2.12",
        "--b",
        "profile=v3.1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("A: profile=v2.12 n=2\nB: profile=v3.1 n=2\n"),
        "{out}"
    );
    // The same value twice says one thing: accepted.
    let (code, _, err) = run(&[
        "compare",
        "ls-add-follower",
        "--set",
        "n=2",
        "--a",
        "prevote=false,prevote=false",
        "--b",
        "prevote=true",
    ]);
    assert_eq!(code, 0, "{err}");
}

/// A mistyped preset, A/B preset or profile: the nearest name is
/// suggested (as for knobs) and the valid ones listed; a name near none
/// gets the list alone.
#[test]
fn a_mistyped_preset_or_profile_gets_the_nearest_name() {
    let (code, _, err) = run(&["simulate", "leader-kil"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("'leader-kil' is neither a preset nor a file; did you mean 'leader-kill'?"),
        "{err}"
    );
    assert!(err.contains("presets: ls-add-follower,"), "{err}");
    let (code, _, err) = run(&["simulate", "no-such-scenario-at-all"]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains("did you mean"), "{err}");
    assert!(err.contains("presets: "), "{err}");
    let (code, _, err) = run(&["compare", "comit-sync"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean 'commit-sync'?"), "{err}");
    let (code, _, err) = run(&[
        "compare",
        "ls-add-follower",
        "--a",
        "profile=v3.11",
        "--b",
        "n=1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("unknown profile 'v3.11'; did you mean 'v3.1'? (profiles: v2.11,"),
        "{err}"
    );
}

/// The tables of `simulate --seeds` and `compare` keep their numbers in
/// columns whatever the longest figure name
/// (bytes.log_written_other_mode): every row is as long as the header;
/// one run's per-server bytes are plain numbers.
#[test]
fn figure_tables_keep_their_columns() {
    let rows = |out: &str, header: &str| {
        let lines: Vec<String> = out
            .lines()
            .skip_while(|l| !l.trim_start().starts_with(header))
            .take_while(|l| !l.contains("invariant violations"))
            .map(str::to_string)
            .collect();
        assert!(lines.len() > 10, "{out}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("bytes.log_written_other_mode")),
            "{out}"
        );
        for l in &lines {
            assert_eq!(l.len(), lines[0].len(), "{l:?}\n{out}");
        }
    };
    let (code, out, err) = run(&["simulate", "leader-kill", "--seeds", "2"]);
    assert_eq!(code, 0, "{err}");
    rows(&out, "figure ");
    let (code, out, err) = run(&["compare", "ls-add-follower", "--a", "n=2", "--b", "n=3"]);
    assert_eq!(code, 0, "{err}");
    rows(&out, "figure (mean)");
    let (code, out, err) = run(&["simulate", "ls-add-follower", "--set", "n=2"]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.contains("per-server file bytes"))
        .unwrap();
    let numbers: Vec<&str> = line.split_whitespace().skip(3).collect();
    assert_eq!(numbers.len(), 3, "{line}");
    assert!(numbers.iter().all(|n| n.parse::<u64>().is_ok()), "{line}");
}
