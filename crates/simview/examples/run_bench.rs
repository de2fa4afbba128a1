//! The runs of `wasm_bench` timed natively: the simulation alone and with
//! the page's trace recording (`simview::run_keeping_sim`, timed as the
//! worker times it, before the simulator is freed), medians of five.
//! `cargo run --release -p simview --example run_bench [WHICH [ROUNDS]]`
//! (one round under callgrind; `RUN_BENCH_ALONE=1` skips the recorded
//! runs, to profile the simulation alone).

#[path = "wasm_bench.rs"]
#[allow(dead_code)]
mod runs;

use std::time::Instant;

fn main() {
    let only: Option<u32> = std::env::args().nth(1).and_then(|a| a.parse().ok());
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let alone_only = std::env::var_os("RUN_BENCH_ALONE").is_some();
    for which in 0.. {
        let Some((name, spec)) = runs::spec(which) else {
            break;
        };
        if only.is_some_and(|o| o != which) {
            continue;
        }
        let (mut alone, mut recorded, mut events) = (Vec::new(), Vec::new(), 0);
        for _ in 0..rounds.max(1) {
            let mut sim = spec.build().expect("the spec builds");
            let t = Instant::now();
            events = sim.run().events;
            alone.push(t.elapsed().as_secs_f64());
            // Left to the process exit, as `ovsdb-scope simulate` does.
            std::mem::forget(sim);
            if alone_only {
                recorded.push(f64::NAN);
                continue;
            }
            let t = Instant::now();
            let (r, sim) = simview::run_keeping_sim(&spec, &mut |_, _| {}).expect("the spec runs");
            recorded.push(t.elapsed().as_secs_f64());
            drop(r);
            std::mem::forget(sim);
        }
        let (a, r) = (median(&mut alone), median(&mut recorded));
        let ev = events as f64;
        println!(
            "{name:36} {events} events: simulation alone {:.1} ms ({:.2} M events/s), with recording {:.1} ms ({:.2} M events/s) (medians of {rounds})",
            a * 1e3,
            ev / a / 1e6,
            r * 1e3,
            ev / r / 1e6,
        );
    }
}
