//! `cargo bench -p raft-sim` prints events/s and the wall time of one
//! simulated hour of a 3-server cluster at 10 writes/s. Figures only, no
//! assertions (see BENCHMARKS.md).

use raft_sim::Sim;
use std::time::Instant;

const HOUR: &str = "name = hour\nprofile = v3.1\nuntil_ms = 3600000\n[workload]\ntype = open\nrate = 10\nvia = follower\nop = ls-add * forever\n";

fn main() {
    // 1. One simulated hour, 3 servers, 10 writes/s through a follower,
    //    with and without executing every entry on the core database.
    for core in ["true", "false"] {
        let mut best = f64::MAX;
        let mut events = 0;
        let mut txns = 0;
        for _ in 0..3 {
            let over = vec![("core_db".to_string(), core.to_string())];
            let mut sim = Sim::from_text(HOUR, None, &over, 1).unwrap();
            let t = Instant::now();
            let m = sim.run();
            best = best.min(t.elapsed().as_secs_f64());
            events = m.events;
            txns = m.txn_count();
            assert!(m.violations.is_empty());
        }
        println!(
            "simulated hour (3 servers, 10 writes/s, core_db={core}): {best:.3} s wall, {events} events, {txns} writes, {:.2} M events/s",
            events as f64 / best / 1e6
        );
    }
    // 2. Raw event rate on a busier mix: leader-kill + acl workload seeds.
    let scen = [
        raft_sim::preset("ls-add-follower").unwrap(),
        raft_sim::preset("acl-portgroup").unwrap(),
        raft_sim::preset("leader-kill").unwrap(),
        raft_sim::preset("membership").unwrap(),
    ];
    let t = Instant::now();
    let mut ev = 0u64;
    for seed in 0..200 {
        for s in scen {
            let mut sim = Sim::from_text(s, None, &[], seed).unwrap();
            ev += sim.run().events;
        }
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "preset mix (800 runs): {ev} events in {dt:.3} s = {:.2} M events/s",
        ev as f64 / dt / 1e6
    );
}
