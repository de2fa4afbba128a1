//! One simulated hour (3 servers, 10 writes/s through a follower) for
//! profiling: `cargo run --release -p raft-sim --example hour [core_db]`
//! (e.g. under `perf record`). Prints wall time and events.

use raft_sim::Sim;
use std::time::Instant;

const HOUR: &str = "name = hour\nprofile = v3.1\nuntil_ms = 3600000\n[workload]\ntype = open\nrate = 10\nvia = follower\nop = ls-add * forever\n";

fn main() {
    let core = std::env::args().nth(1).unwrap_or_else(|| "true".into());
    let over = vec![("core_db".to_string(), core.clone())];
    let mut sim = Sim::from_text(HOUR, None, &over, 1).expect("scenario");
    let t = Instant::now();
    let m = sim.run();
    println!(
        "core_db={core}: {:.3} s wall, {} events, {} writes, {} violations",
        t.elapsed().as_secs_f64(),
        m.events,
        m.txn_count(),
        m.violations.len()
    );
    // Left to the process exit, as `ovsdb-scope simulate` does: freeing
    // the servers' databases row by row was a twentieth of the hour's
    // instructions under callgrind, and nothing in a `Sim` writes on drop.
    std::mem::forget(sim);
}
