//! Bad scenario text and knob values give typed errors, never panics, and
//! extreme-but-valid knobs still terminate.

use raft_sim::rng::Rng;
use raft_sim::{Knobs, Profile, Scenario, Sim, PRESETS};

#[test]
fn garbage_scenarios_are_errors_not_panics() {
    let mut r = Rng::new(42);
    let pieces = [
        "[faults]",
        "[knobs]",
        "[workload]",
        "[bogus]",
        "at",
        "at 10",
        "at -5 kill s1",
        "at 1e99 kill s1",
        "kill leader",
        "partition s1 |",
        "cut s1 -> ",
        "loss 2",
        "pause s99 10",
        "op = ls-add * -1",
        "op = acl-del-all 0",
        "rate = 0",
        "rate = nan",
        "n = 99999999999",
        "servers = 0",
        "profile = v9",
        "election_timer = 1",
        "=",
        "x = y",
        "\u{0}\u{ff}",
        "via = s0",
        "slow_disk s1 -3",
        "until_ms = 1e300",
        "kill_leader_random 5",
        "at 5 join s17",
        "at 5 election_timer abc",
        "ping_period = 0.000001",
    ];
    for i in 0..1500 {
        let mut text = String::new();
        let base = PRESETS[i % PRESETS.len()].1;
        for line in base.lines() {
            if r.chance(0.2) {
                text.push_str(pieces[r.below(pieces.len() as u64) as usize]);
                text.push('\n');
            }
            if !r.chance(0.1) {
                text.push_str(line);
                text.push('\n');
            }
        }
        if let Ok(sc) = Scenario::parse(&text) {
            if let Ok(mut k) = sc.knobs(None, &[]) {
                k.max_events = 5_000;
                let mut sim = Sim::new(sc, k, i as u64);
                let m = sim.run();
                assert!(m.violations.is_empty(), "{text}\n{:?}", m.violations);
            }
        }
    }
}

#[test]
fn every_knob_rejects_garbage_and_accepts_its_default_kind() {
    for name in Knobs::NAMES {
        let mut k = Knobs::for_profile(Profile::Main);
        assert!(k.set(name, "not-a-value").is_err(), "{name}");
        assert!(k.set(name, "-1").is_err(), "{name}");
    }
    let mut k = Knobs::for_profile(Profile::Main);
    assert!(k.set("no_such", "1").is_err());
    assert!(k.set("election_timer", "99").is_err());
    assert!(k.set("election_timer", "600001").is_err());
    assert!(k.set("n", "1000001").is_err());
}

#[test]
fn extreme_valid_knobs_terminate() {
    let text = "name = x\nprofile = v2.11\nuntil_ms = 5000\n[workload]\ntype = open\nrate = 100000\nop = ls-add * forever\n";
    for kv in [
        ("snapshot_min", "0"),
        ("ping_period", "0.001"),
        ("join_retry", "0"),
        ("fsync", "0"),
        ("delay", "0"),
        ("bandwidth", "0.0001"),
        ("cpu_ns_per_byte", "1000000"),
    ] {
        let over = vec![
            (kv.0.to_string(), kv.1.to_string()),
            ("max_events".into(), "100000".into()),
        ];
        let mut sim = Sim::from_text(text, None, &over, 1).unwrap();
        let m = sim.run();
        assert!(m.violations.is_empty(), "{kv:?}: {:?}", m.violations);
    }
}
