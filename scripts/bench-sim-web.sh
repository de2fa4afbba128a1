#!/usr/bin/env bash
# Web simulation benchmark: builds dist/ with trunk (release) and runs
# tests/bench/sim-web-bench.mjs in headless Chromium. Figures go to BENCHMARKS.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_wasm_target
ensure_trunk
ensure_wasm_bindgen_cli
ensure_browser
ensure_npm_deps
banner "trunk build --release"
trunk build --release
banner "web simulation benchmark"
node tests/bench/sim-web-bench.mjs
