//! Validation of the simulator against the published figure, the spec's
//! derivations (§4.5, §4.6, §4.8) and the real 3.1 sample files.

use raft_sim::report::run_seeds;
use raft_sim::{preset, Sim};

fn set(kv: &[(&str, &str)]) -> Vec<(String, String)> {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn run(name: &str, profile: &str, kv: &[(&str, &str)], seed: u64) -> raft_sim::Metrics {
    let mut sim = Sim::from_text(preset(name).unwrap(), Some(profile), &set(kv), seed).unwrap();
    let m = sim.run();
    assert!(m.violations.is_empty(), "{:?}", m.violations);
    m
}

/// Pull a number out of facts.json without a JSON dependency.
fn fact(path: &str, key: &str) -> f64 {
    let text = std::fs::read_to_string(path).unwrap();
    let at = text
        .find(&format!("\"{key}\""))
        .unwrap_or_else(|| panic!("{key} in {path}"));
    let rest = &text[at + key.len() + 3..];
    let num: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    num.parse().unwrap()
}

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/samples");

#[test]
fn presync_follower_loop_is_100_heartbeat_periods() {
    // 100 sequential writes through a follower, master before 0f954f326.
    for seed in [1, 2, 3] {
        let m = run("ls-add-follower", "v2.12-pre-sync", &[("n", "100")], seed);
        assert_eq!(m.txn_count(), 100);
        let total_ms = m.txn_total_us() as f64 / 1000.0;
        assert!(
            (total_ms - 34_100.0).abs() <= 0.02 * 34_100.0,
            "seed {seed}: {total_ms} ms vs 100 x 341 ms"
        );
    }
}

#[test]
fn v2_11_costs_two_periods_per_follower_write_and_about_one_per_leader_write() {
    let p = 341_000.0;
    let m = run("ls-add-follower", "v2.11", &[("n", "40")], 5);
    let mean = m.txn_latencies_us.iter().sum::<u64>() as f64 / 40.0;
    assert!((1.9 * p..=2.05 * p).contains(&mean), "follower mean {mean}");
    let m = run("ls-add-leader", "v2.11", &[("n", "100")], 5);
    let long = m
        .txn_latencies_us
        .iter()
        .filter(|&&l| l as f64 > 0.8 * p)
        .count();
    let short = m.txn_latencies_us.iter().filter(|&&l| l < 20_000).count();
    // Bimodal: usually one period (both follower replies in one iteration),
    // sometimes a few ms (the second reply wakes the leader).
    assert_eq!(long + short, 100, "{:?}", m.txn_latencies_us);
    assert!(long > short && short > 0, "long {long} short {short}");
}

#[test]
fn v2_12_matches_sample_60_write_loops_and_ratio_to_presync() {
    let facts = format!("{SAMPLES}/ls-add-follower/facts.json");
    let real_f = fact(&facts, "follower_loop_s") * 1000.0;
    let real_l = fact(&facts, "leader_loop_s") * 1000.0;
    for profile in ["v2.12", "v3.1", "main"] {
        let f = run("ls-add-follower", profile, &[("n", "60")], 1).txn_total_us() as f64 / 1000.0;
        let l = run("ls-add-leader", profile, &[("n", "60")], 1).txn_total_us() as f64 / 1000.0;
        assert!(
            (f - real_f).abs() <= 0.03 * real_f,
            "{profile} follower {f} vs {real_f}"
        );
        assert!(
            (l - real_l).abs() <= 0.03 * real_l,
            "{profile} leader {l} vs {real_l}"
        );
    }
    let pre = run("ls-add-follower", "v2.12-pre-sync", &[("n", "100")], 1).txn_total_us() as f64;
    let post = run("ls-add-follower", "v2.12", &[("n", "100")], 1).txn_total_us() as f64;
    assert!(pre / post >= 50.0, "ratio {}", pre / post);
}

#[test]
fn leader_kill_mean_time_to_leader_matches_derivation() {
    // §4.6: idle leader killed at a uniform moment; the first follower to
    // time out does so after ET + min(U1, U2) - age(last heartbeat), so the
    // mean is ET + R/3 - P/2, plus the few-ms election exchange.
    for (et, profile) in [(1000.0, "v3.1"), (4000.0, "v3.1"), (1000.0, "main")] {
        let p = (et / 3.0f64).floor();
        let expected = et + 1000.0 / 3.0 - p / 2.0;
        let agg = run_seeds(
            preset("leader-kill").unwrap(),
            Some(profile),
            &set(&[("election_timer", &format!("{et}"))]),
            1,
            500,
        )
        .unwrap();
        assert!(agg.violations.is_empty(), "{:?}", agg.violations);
        let (mean, _, _) = agg.stat("time_to_leader_ms").unwrap();
        assert!(
            (mean - expected).abs() <= 0.04 * expected,
            "{profile} ET {et}: mean {mean} vs {expected}"
        );
    }
}

#[test]
fn acl_portgroup_log_sizes_match_real_samples() {
    for (diff, dir) in [
        ("true", "acl-portgroup-diff"),
        ("false", "acl-portgroup-full"),
    ] {
        let m = run(
            "acl-portgroup",
            "v3.1",
            &[("n", "150"), ("column_diff", diff)],
            1,
        );
        let facts = format!("{SAMPLES}/{dir}/facts.json");
        let text = std::fs::read_to_string(&facts).unwrap();
        // size_bytes of s1.db, s2.db, s3.db in file order.
        let real: Vec<f64> = text
            .match_indices("\"size_bytes\":")
            .map(|(i, _)| {
                text[i + 13..]
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect::<String>()
                    .parse()
                    .unwrap()
            })
            .collect();
        assert_eq!(real.len(), 3);
        let mut sim_sizes = m.per_server_file_bytes.clone();
        sim_sizes.sort_unstable();
        let mut real_sorted = real.clone();
        real_sorted.sort_by(|a, b| a.total_cmp(b));
        for (s, r) in sim_sizes.iter().zip(&real_sorted) {
            let s = *s as f64;
            assert!(
                (s - r).abs() <= 0.05 * r,
                "{dir}: simulated {s} vs real {r}"
            );
        }
    }
}

#[test]
fn committed_transactions_execute_on_the_core_database() {
    // Every server executes every committed entry on its own
    // ovsdb::Database (real OVN_Northbound schema); the run would report a
    // violation if the core rejected a transaction or computed a different
    // full/diff size than the entry text.
    let over = set(&[("n", "40"), ("core_db", "true")]);
    let mut sim = Sim::from_text(preset("ls-add-follower").unwrap(), None, &over, 3).unwrap();
    let m = sim.run();
    assert!(m.violations.is_empty(), "{:?}", m.violations);
    for s in &sim.servers {
        assert_eq!(s.db.row_count("Logical_Switch"), 40);
        let core = s.check_db.as_ref().expect("core_db is on");
        assert_eq!(core.table("Logical_Switch").map(|t| t.len()), Some(40));
    }
    for diff in ["true", "false"] {
        let over = set(&[("n", "25"), ("column_diff", diff), ("core_db", "true")]);
        let mut sim = Sim::from_text(preset("acl-portgroup").unwrap(), None, &over, 3).unwrap();
        let mut max_acls = vec![0usize; 3];
        while sim.step() {
            for (i, s) in sim.servers.iter().enumerate() {
                let n = s
                    .check_db
                    .as_ref()
                    .unwrap()
                    .table("ACL")
                    .map_or(0, |t| t.len());
                max_acls[i] = max_acls[i].max(n);
            }
        }
        let m = sim.finish();
        assert!(m.violations.is_empty(), "{:?}", m.violations);
        assert_eq!(
            max_acls,
            vec![25; 3],
            "every server held all 25 ACLs at some point"
        );
        for s in &sim.servers {
            let core = s.check_db.as_ref().unwrap();
            assert_eq!(core.table("ACL").map(|t| t.len()), Some(0));
            assert_eq!(core.table("Port_Group").map(|t| t.len()), Some(0));
            assert_eq!(core.table("NB_Global").map(|t| t.len()), Some(1));
        }
    }
}

#[test]
fn knob_flip_commit_sync_off_on_current_profile_costs_one_period_of_et_over_3() {
    // §4.5: today's ET=1000 with the old behaviour (no commit-index sync, no
    // ping re-arm on append) gives N * floor(ET/3) = N * 333 ms.
    let m = run(
        "ls-add-follower",
        "v3.1",
        &[
            ("n", "50"),
            ("commit_sync_immediate", "false"),
            ("ping_rearm_on_append", "false"),
        ],
        2,
    );
    let per = m.txn_total_us() as f64 / 50.0 / 1000.0;
    assert!((per - 333.0).abs() < 0.02 * 333.0, "{per} ms per write");
    // Only the commit sync off: the ping timer is re-armed by every append,
    // so each write waits a full period after its own append: P + c + 2d.
    let m = run(
        "ls-add-follower",
        "main",
        &[("n", "50"), ("commit_sync_immediate", "false")],
        2,
    );
    let per2 = m.txn_total_us() as f64 / 50.0 / 1000.0;
    assert!(per2 > 333.0 && per2 < 333.0 + 8.0, "{per2} ms per write");
}
