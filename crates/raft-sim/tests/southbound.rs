//! Mechanisms of the Southbound workload (`sim::southbound`).
use raft_sim::{preset, Sim};

fn run(over: &[(&str, &str)]) -> raft_sim::Metrics {
    let over: Vec<(String, String)> = over
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let mut sim = Sim::from_text(preset("sb-bringup").unwrap(), None, &over, 1).unwrap();
    sim.run()
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
