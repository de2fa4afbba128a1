#!/usr/bin/env bash
# Events per second of the page worker's simulation run, as wasm in node's
# V8 (the engine of Chromium) and natively, side by side (BENCHMARKS.md,
# "Events per second: a first run and the runs after it"). The wasm is built
# with the worker's profile (`wasm-small`, opt-level "z").
#   scripts/bench-sim-wasm.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile wasm-small --target wasm32-unknown-unknown -p simview --example wasm_bench
node tests/bench/sim-wasm-bench.mjs target/wasm32-unknown-unknown/wasm-small/examples/wasm_bench.wasm "${1:-15}"
cargo run --release -q -p simview --example run_bench
