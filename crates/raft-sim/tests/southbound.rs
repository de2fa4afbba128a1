//! Mechanisms of the Southbound workload (`sim::southbound`).
use raft_sim::{preset, Sim};

/// The `sb-bringup` preset with knob overrides, seed 1.
fn sim(over: &[(&str, &str)]) -> Sim {
    let over: Vec<(String, String)> = over
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    Sim::from_text(preset("sb-bringup").unwrap(), None, &over, 1).unwrap()
}

fn run(over: &[(&str, &str)]) -> raft_sim::Metrics {
    sim(over).run()
}

#[test]
fn bringup_grows_with_the_northd_delay() {
    let a = run(&[("northd_delay", "10")]).sb;
    let b = run(&[("northd_delay", "200")]).sb;
    let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64;
    assert_eq!(a.bringup_us.len(), 100);
    assert!(mean(&b.bringup_us) > mean(&a.bringup_us) + 150_000.0);
}

#[test]
fn controllers_receive_only_their_own_port_bindings_and_the_storm_downloads_them() {
    let m = run(&[]).sb;
    let max = *m.port_binding_received.iter().max().unwrap();
    assert!(max > 0 && max * 10 < m.port_binding_bytes);
    assert_eq!(m.reconnects, 20);
    assert!(m.download_bytes > 0 && m.converge_us.len() == 1);
}

/// Runs the preset, noting each controller's server and monitored bytes
/// just before the leader dies (2500 ms, after every write); returns per
/// controller those bytes and whether it ended on another server, and the
/// metrics.
fn around_the_kill(over: &[(&str, &str)]) -> (Vec<(u64, bool)>, raft_sim::SbMetrics) {
    let mut s = sim(over);
    s.run_until(2_499_000);
    let n = s.knobs.chassis;
    let before: Vec<_> = (0..n)
        .map(|c| (s.sb_controller_node(c), s.sb_monitored_bytes(c)))
        .collect();
    let m = s.run().sb;
    let moved = (0..n)
        .map(|c| (before[c].1, s.sb_controller_node(c) != before[c].0))
        .collect();
    (moved, m)
}

#[test]
fn the_storm_downloads_exactly_what_the_moved_controllers_monitor() {
    let (ctrls, m) = around_the_kill(&[]);
    let moved: Vec<u64> = ctrls.iter().filter(|c| c.1).map(|c| c.0).collect();
    assert_eq!(moved.len() as u64, m.reconnects);
    assert_eq!(m.download_bytes, moved.iter().sum::<u64>());
    assert!(m.download_bytes > 0);
}

#[test]
fn the_storm_converges_later_when_bytes_cost_more_cpu() {
    let (_, cheap) = around_the_kill(&[("cpu_ns_per_byte", "1")]);
    let (_, dear) = around_the_kill(&[("cpu_ns_per_byte", "20")]);
    assert_eq!(cheap.download_bytes, dear.download_bytes);
    assert!(
        dear.converge_us[0] > cheap.converge_us[0],
        "{:?} vs {:?}",
        dear.converge_us,
        cheap.converge_us
    );
}

/// Preset `name` with knob overrides, seed 1, run to its end.
fn run_preset(name: &str, over: &[(&str, &str)]) -> raft_sim::Metrics {
    let over: Vec<(String, String)> = over
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let mut s = Sim::from_text(preset(name).unwrap(), None, &over, 1).unwrap();
    let m = s.run();
    assert!(m.violations.is_empty(), "{:?}", m.violations);
    m
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len() as f64
}

fn p99(v: &[u64]) -> u64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    v[(v.len() * 99).div_ceil(100) - 1]
}

/// The `write-changed-only` preset, smaller: 30 pods on `ports` earlier
/// ports and `chassis` controllers.
fn wco(on: bool, ports: u64, chassis: u64) -> raft_sim::Metrics {
    let (ports, chassis) = (ports.to_string(), chassis.to_string());
    run_preset(
        "write-changed-only",
        &[
            ("write_changed_only", if on { "true" } else { "false" }),
            ("n", "30"),
            ("sb_ports", &ports),
            ("chassis", &chassis),
        ],
    )
}

#[test]
fn without_write_changed_only_northd_sends_every_port_binding_and_bring_up_is_slower() {
    for chassis in [20, 60] {
        let (off, on) = (wco(false, 2000, chassis), wco(true, 2000, chassis));
        let (a, b) = (&off.sb, &on.sb);
        assert_eq!((a.txns, b.txns), (30, 30));
        // Each transaction carries an update of every Port_Binding row: at
        // least 2000 × 200 bytes, against a few kilobytes of new rows.
        let (ta, tb) = (a.northd_txn_bytes / a.txns, b.northd_txn_bytes / b.txns);
        assert!(ta > 2000 * 200 && tb < 10_000, "{ta} vs {tb}");
        assert!(a.northd_columns > 2000 * 6 * 30, "{}", a.northd_columns);
        // The leader parses it all, northd builds it all.
        assert!(
            a.parse_us > 50.0 * b.parse_us,
            "{} {}",
            a.parse_us,
            b.parse_us
        );
        assert!(a.northd_build_us > 50.0 * b.northd_build_us);
        // The committed change is the same: the log and the updates the
        // controllers get do not move.
        assert_eq!(off.log_written, on.log_written);
        assert_eq!(a.update_bytes, b.update_bytes);
        // Bring-up, mean and p99, is later by about the rewrite's cost.
        let (ma, mb) = (mean(&a.bringup_us), mean(&b.bringup_us));
        assert!(ma > mb + 5_000.0, "{chassis} chassis: mean {ma} vs {mb}");
        assert!(p99(&a.bringup_us) > p99(&b.bringup_us) + 5_000);
    }
}

#[test]
fn the_rewrite_costs_in_proportion_to_the_ports_and_not_with_the_option() {
    let gap = |ports| {
        let (a, b) = (wco(false, ports, 30).sb, wco(true, ports, 30).sb);
        (
            mean(&a.bringup_us) - mean(&b.bringup_us),
            a.northd_txn_bytes as f64 / b.northd_txn_bytes as f64,
        )
    };
    let (small, small_ratio) = gap(1000);
    let (big, big_ratio) = gap(4000);
    // Four times the rows: about four times the extra latency and the
    // bytes ratio (both linear in the rows rewritten).
    assert!(big > 3.0 * small && big < 5.0 * small, "{small} {big}");
    assert!(big_ratio > 3.0 * small_ratio, "{small_ratio} {big_ratio}");
    // With the option, the Southbound's size does not show in northd's
    // transactions.
    let (x, y) = (wco(true, 1000, 30).sb, wco(true, 4000, 30).sb);
    assert_eq!(x.northd_txn_bytes, y.northd_txn_bytes);
}

/// The `route-status` preset, smaller: 40 ports with `routes` routes each.
fn routes(status: bool, routes: u64) -> raft_sim::Metrics {
    let r = routes.to_string();
    run_preset(
        "route-status",
        &[
            ("route_status", if status { "true" } else { "false" }),
            ("n", "40"),
            ("routes_per_port", &r),
        ],
    )
}

#[test]
fn status_rows_cost_southbound_cpu_memory_and_reconnect_time_growing_with_the_rows() {
    let mut shares = Vec::new();
    let mut extra_cpu = Vec::new();
    for r in [20, 100] {
        let (with, without) = (routes(true, r).sb, routes(false, r).sb);
        // One status transaction per port, from the route's chassis.
        assert_eq!((with.status_txns, without.status_txns), (40, 0));
        let cpu = |m: &raft_sim::SbMetrics| m.cpu_us + m.parse_us;
        let conv = |m: &raft_sim::SbMetrics| m.converge_us[0] as f64;
        assert!(cpu(&with) > 1.2 * cpu(&without), "{r}");
        assert!(conv(&with) > 1.2 * conv(&without), "{r}");
        assert!(with.download_bytes > without.download_bytes);
        assert!(with.db_bytes > without.db_bytes && with.peak_mem_bytes > without.peak_mem_bytes);
        // A share, not a multiple: the status row is smaller than the route.
        assert!(cpu(&with) < 2.0 * cpu(&without), "{r}");
        shares.push(cpu(&with) / cpu(&without));
        extra_cpu.push(cpu(&with) - cpu(&without));
    }
    // Five times the rows: about five times the extra CPU, and a share of
    // the same size.
    assert!(extra_cpu[1] > 4.0 * extra_cpu[0] && extra_cpu[1] < 6.0 * extra_cpu[0]);
    assert!((shares[1] - shares[0]).abs() < 0.25, "{shares:?}");
}

#[test]
fn the_first_versions_runs_have_no_second_version_figures() {
    let m = run(&[]);
    assert!(!m.sb.extended && m.sb.northd_txn_bytes == 0 && m.sb.peak_mem_bytes == 0);
    let names: Vec<&str> = raft_sim::report::figures(&m).iter().map(|f| f.0).collect();
    assert!(!names.contains(&"sb.server_cpu_ms"));
    let m = run(&[("sb_ports", "10")]);
    assert!(m.sb.extended && m.sb.northd_txn_bytes > 0);
}

/// The leader dies in the middle of the 100 `lsp-add`s, at each of 15
/// moments: the client whose command was on its way, or waited at the
/// leader for the reply, reconnects and runs it again once there is a new
/// leader, so every command completes and every port reaches the
/// Southbound once. Where the dead leader had already replicated the
/// command, the new leader commits it and the second run is refused as a
/// duplicate (as `ovn-nbctl lsp-add` would be). The one port that waited
/// carries the outage in its bring-up. Before clients reconnected, a kill
/// while a command waited at the leader stalled the run (54 of 102
/// commands done at 1904 ms).
#[test]
fn a_leader_killed_mid_writes_loses_no_port() {
    let text = preset("sb-bringup").unwrap();
    assert!(text.contains("at 2500 kill leader"));
    let mut refused = 0;
    for at in [1700, 1800, 2000].into_iter().chain(1900..1912) {
        let t = text.replace("at 2500 kill leader", &format!("at {at} kill leader"));
        let m = Sim::from_text(&t, None, &[], 1).unwrap().run();
        assert!(m.violations.is_empty(), "{at}: {:?}", m.violations);
        assert_eq!(m.txn_latencies_us.len(), 102, "kill at {at} ms");
        // Every port once, in fewer transactions: northd batches the
        // ports that reach it while its last one is in flight.
        assert_eq!(m.sb.ports, 100, "kill at {at} ms");
        assert!(m.sb.txns < 20, "kill at {at} ms: {}", m.sb.txns);
        assert_eq!(m.sb.bringup_us.len(), 100, "kill at {at} ms");
        let slow = m.sb.bringup_us.iter().filter(|b| **b > 500_000).count();
        assert_eq!(slow, 1, "kill at {at} ms: {:?}", m.sb.bringup_us);
        assert!(m.rejected <= 1, "kill at {at} ms");
        refused += m.rejected;
    }
    // Both cases happen among these moments.
    assert!((1..15).contains(&refused), "{refused}");
}

/// `sb-bringup` with its fault lines replaced, seed 1.
fn with_faults(faults: &str, over: &[(&str, &str)]) -> Sim {
    let text = preset("sb-bringup").unwrap();
    let text = text.replace("at 2500 kill leader", faults);
    let over: Vec<(String, String)> = over
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    Sim::from_text(&text, None, &over, 1).unwrap()
}

/// The one relay every controller uses dies in the middle of the writes
/// and comes back later: the controllers have no server meanwhile, the
/// ports bound then reach their chassis only with the download after the
/// relay holds its copy again, and no port is lost.
#[test]
fn controllers_with_no_server_wait_and_get_the_missed_ports_when_it_returns() {
    let mut s = with_faults("at 1800 kill r1\nat 2600 restart r1", &[("relays", "1")]);
    s.run_until(2_500_000);
    let n = s.knobs.chassis;
    assert!((0..n).all(|c| s.sb_controller_node(c).is_none()));
    let m = s.run();
    assert!(m.violations.is_empty(), "{:?}", m.violations);
    assert!((0..n).all(|c| s.sb_controller_node(c) == Some(raft_sim::relay::Node::Relay(0))));
    assert_eq!(m.sb.ports, 100);
    assert_eq!(m.sb.bringup_us.len(), 100);
    assert_eq!(m.sb.reconnects, n as u64);
    // Ports bound while the relay was down waited for its return.
    let waited = m.sb.bringup_us.iter().filter(|b| **b > 500_000).count();
    assert!(waited > 10 && waited < 100, "{waited}");
}

/// Every member dies after the writes, one after the other, then s2
/// comes back: s1's controllers moved to s2, then s2's to s3, then s3's
/// had nowhere to go; all of them come to s2 when it restarts.
#[test]
fn controllers_of_a_cluster_that_is_all_down_come_to_the_first_member_back() {
    let mut s = with_faults(
        "at 2500 kill s1\nat 2510 kill s2\nat 2520 kill s3\nat 3000 restart s2",
        &[],
    );
    let m = s.run();
    let n = s.knobs.chassis;
    assert_eq!(m.sb.reconnects, 20 + 40 + 60);
    assert_eq!(m.sb.converge_us.len(), 3);
    assert!((0..n).all(|c| s.sb_controller_node(c) == Some(raft_sim::relay::Node::Member(1))));
}

/// With `monitor_cond_since` (the default), the controllers of a killed
/// leader resume at the next member, whose history holds their last
/// transaction: they get only what they missed (nothing here, the kill
/// comes after the writes), not the whole Southbound; without it they
/// download everything, as the `sb-bringup` preset chooses.
#[test]
fn controllers_that_move_resume_with_only_what_they_missed() {
    let full = run(&[]).sb;
    let resumed = run(&[("monitor_since", "true")]).sb;
    assert_eq!(full.reconnects, 20);
    assert_eq!(resumed.reconnects, 20);
    assert!(full.download_bytes > 1_000_000, "{}", full.download_bytes);
    // Each resumed reply is the RPC frame alone.
    assert!(
        resumed.download_bytes < 20 * 200,
        "{}",
        resumed.download_bytes
    );
    assert!(resumed.converge_us[0] * 10 < full.converge_us[0]);
}

/// A member that restarts has no history: the controllers that come to it
/// (every other member is down) get everything, while the moves before,
/// to members that kept their history, were resumptions.
#[test]
fn a_restarted_member_has_no_history_to_resume_from() {
    let mut s = with_faults(
        "at 2500 kill s1\nat 2510 kill s2\nat 2520 kill s3\nat 3000 restart s2",
        &[("monitor_since", "true")],
    );
    let m = s.run();
    let n = s.knobs.chassis;
    assert_eq!(m.sb.reconnects, 20 + 40 + 60);
    let everything: u64 = (0..n).map(|c| s.sb_monitored_bytes(c)).sum();
    let resumed = m.sb.download_bytes - everything;
    assert!(resumed > 0 && resumed < 60 * 200, "{resumed}");
    assert_eq!(m.sb.converge_us.len(), 3);
    assert!(m.sb.converge_us[2] > 10 * m.sb.converge_us[0]);
}
