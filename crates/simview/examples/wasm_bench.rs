//! The page worker's simulation run (`simview::run`: the simulation and its
//! trace recording) built as wasm on its own, to time in V8 without the
//! page: `scripts/bench-sim-wasm.sh` builds it with the worker's profile
//! (`wasm-small`) and `tests/bench/sim-wasm-bench.mjs` times each run in
//! node. It exports `bench_run(which) -> events`, with no imports and no JS
//! glue. `run_bench` times the same runs natively.

/// The runs: 0, `leader-kill` for one hour (an idle three-server cluster);
/// 1, `ls-add-leader` with n=5000; 2, the 500-chassis Southbound hour
/// (`crates/raft-sim/benches/sb-hour.scn`).
pub fn spec(which: u32) -> Option<(&'static str, simview::RunSpec)> {
    Some(match which {
        0 => {
            let mut s = simview::RunSpec::preset("leader-kill");
            s.until_ms = Some(3_600_000);
            ("leader-kill, 1 h (idle, 3 servers)", s)
        }
        1 => {
            let mut s = simview::RunSpec::preset("ls-add-leader");
            s.sets.push(("n".into(), "5000".into()));
            ("ls-add-leader n=5000", s)
        }
        2 => {
            let mut s = simview::RunSpec::preset("sb-bringup");
            s.scenario = "custom".into();
            s.text = Some(include_str!("../../raft-sim/benches/sb-hour.scn").into());
            ("sb-hour (500 chassis, 1 h)", s)
        }
        _ => return None,
    })
}

/// Runs spec `which` and returns its events (0 if `which` is unknown or the
/// run failed).
#[no_mangle]
pub extern "C" fn bench_run(which: u32) -> u64 {
    let Some((_, spec)) = spec(which) else {
        return 0;
    };
    match simview::run(&spec, &mut |_, _| {}) {
        Ok(r) => r.figure("events").unwrap_or(0.0) as u64,
        Err(_) => 0,
    }
}
