//! Fault behaviour against the spec: connected status of an isolated
//! follower (§2.8), per-link delay in the follower write formula (§4.3),
//! catch-up of a restarted follower, a paused server, a slow disk.

use raft_sim::{preset, Role, Sim};

fn sim(text: &str, kv: &[(&str, &str)], seed: u64) -> Sim {
    let over: Vec<(String, String)> = kv
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Sim::from_text(text, None, &over, seed).unwrap()
}

const IDLE: &str =
    "name = idle\nprofile = main\nuntil_ms = 20000\n[workload]\ntype = none\n[faults]\n";

#[test]
fn isolated_follower_reports_disconnected_after_two_timeouts_then_recovers() {
    for seed in 1..=20 {
        let mut s = sim(IDLE, &[], seed);
        s.run_until(3_000_000);
        let leader = s
            .servers
            .iter()
            .position(|x| x.role == Role::Leader)
            .unwrap();
        let victim = (leader + 1) % 3;
        let others: Vec<String> = (0..3)
            .filter(|i| *i != victim)
            .map(|i| format!("s{}", i + 1))
            .collect();
        let text = format!(
            "{IDLE}at 3000 partition s{} | {}\nat 9000 heal\n",
            victim + 1,
            others.join(",")
        );
        let mut s = sim(&text, &[], seed);
        s.run_until(3_000_000);
        assert!(s.servers.iter().all(|x| x.is_connected()), "seed {seed}");
        // First timeout after isolation: still "connected" (first round).
        s.run_until(3_900_000);
        assert!(s.servers[victim].is_connected(), "seed {seed}");
        // After two election timeouts (2 x (ET + U) <= 4 s): disconnected.
        s.run_until(7_200_000);
        assert!(
            !s.servers[victim].is_connected(),
            "seed {seed}: isolated server still connected"
        );
        assert!(s.servers[leader].is_connected(), "seed {seed}");
        // Healed: it learns a leader again.
        s.run_until(15_000_000);
        assert!(s.servers.iter().all(|x| x.is_connected()), "seed {seed}");
        let m = s.run();
        assert!(m.violations.is_empty(), "{:?}", m.violations);
    }
}

#[test]
fn per_link_delay_adds_four_one_way_delays_to_a_follower_write() {
    let base_text = preset("ls-add-follower").unwrap().to_string();
    let mut delayed = base_text.clone();
    delayed.push_str("[faults]\n");
    for (a, b) in [(1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2)] {
        delayed.push_str(&format!("at 0 link_delay s{a} -> s{b} 10\n"));
    }
    let mean = |text: &str| {
        let m = sim(text, &[("n", "30")], 1).run();
        assert!(m.violations.is_empty());
        m.txn_latencies_us.iter().sum::<u64>() as f64 / m.txn_count() as f64
    };
    let (a, b) = (mean(&base_text), mean(&delayed));
    // T_F = c + d(F->L) + (2d + f) + d(L->F): four one-way delays.
    assert!(
        (b - a - 40_000.0).abs() < 2_000.0,
        "base {a} us, delayed {b} us"
    );
}

#[test]
fn restarted_follower_catches_up_and_slow_disk_and_pause_cost_time() {
    // Follower killed during writes, restarted later: it catches up (all
    // logs equal at the end) and the run stays safe.
    let text = "name = x\nprofile = v3.1\nuntil_ms = 20000\n[workload]\ntype = open\nrate = 50\nvia = leader\nop = ls-add * 400\n[faults]\nat 4000 kill follower\nat 7000 restart s1\nat 7000 restart s2\nat 7000 restart s3\n";
    for seed in 1..=10 {
        let mut s = sim(text, &[], seed);
        let m = s.run();
        assert!(m.violations.is_empty(), "{:?}", m.violations);
        assert_eq!(m.txn_count(), 400, "seed {seed}");
        let ends: Vec<u64> = s.servers.iter().map(|x| x.commit_index).collect();
        assert!(ends.iter().all(|e| *e == ends[0]), "seed {seed}: {ends:?}");
        // Each server's database (rebuilt from its snapshot and log on
        // restart) holds every switch.
        let dbs: Vec<usize> = s
            .servers
            .iter()
            .map(|x| x.db.row_count("Logical_Switch"))
            .collect();
        assert_eq!(dbs, vec![400; 3], "seed {seed}");
    }
    // A slow disk on every server multiplies the fsync part of each write.
    let slow = format!(
        "{}[faults]\nat 0 slow_disk s1 10\nat 0 slow_disk s2 10\nat 0 slow_disk s3 10\n",
        preset("ls-add-leader").unwrap()
    );
    let base = sim(preset("ls-add-leader").unwrap(), &[("n", "20")], 1).run();
    let m = sim(&slow, &[("n", "20")], 1).run();
    let per = |m: &raft_sim::Metrics| m.txn_total_us() as f64 / 20.0;
    // leader write ~ c + 2d + f: f grows from ~0.8 ms to ~8 ms.
    assert!(
        per(&m) - per(&base) > 6_000.0,
        "{} vs {}",
        per(&m),
        per(&base)
    );
    // Pausing the leader for 2 s stalls the closed loop by about that much.
    let paused = format!(
        "{}[faults]\nat 1700 pause leader 2000\n",
        preset("ls-add-leader").unwrap()
    );
    let m2 = sim(&paused, &[("n", "20")], 1).run();
    assert!(m2.violations.is_empty());
    let stall = m2.txn_latencies_us.iter().max().copied().unwrap_or(0);
    assert!(stall > 1_500_000, "max latency {stall}");
}

#[test]
fn long_pause_resets_connections_after_two_probe_intervals() {
    let text = "name = p\nprofile = main\nuntil_ms = 15000\n[workload]\ntype = open\nrate = 20\nvia = leader\nop = ls-add * 150\n[faults]\nat 3000 pause follower 5000\n";
    for (probe, expect) in [("et+1000", true), ("off", false), ("3000", false)] {
        let mut s = sim(text, &[("probe_interval", probe)], 4);
        s.record_events = true;
        let m = s.run();
        assert!(m.violations.is_empty(), "{:?}", m.violations);
        let resets: Vec<f64> = s
            .events()
            .iter()
            .filter(|e| matches!(&e.kind, raft_sim::EventKind::Fault { text } if text.contains("reset by inactivity")))
            .map(|e| e.t as f64 / 1000.0)
            .collect();
        assert_eq!(!resets.is_empty(), expect, "probe {probe}: {resets:?}");
        if expect {
            // ET 1000 => probe 2000 ms => reset 4000 ms into the pause.
            assert_eq!(resets, vec![7000.0]);
        }
        // Either way the paused server catches up afterwards.
        let ends: Vec<u64> = s.servers.iter().map(|x| x.commit_index).collect();
        assert!(ends.iter().all(|e| *e == ends[0]), "{ends:?}");
        assert_eq!(m.txn_count(), 150);
    }
}
