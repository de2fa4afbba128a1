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
