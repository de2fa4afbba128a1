#!/usr/bin/env bash
# Runs every test of ovsdb-scope, installing what is missing first.
#   scripts/test.sh            all steps
#   SKIP_INSTALL=1 scripts/test.sh   skip the install step (tools already there)
#   FAIL_FAST=1 scripts/test.sh      stop at the first failing step
# Each step prints a banner. A failing step does not hide the others: every
# step runs (except e2e when the trunk build failed), failures are listed at
# the end, and the exit status is non-zero if any step failed.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

START=$(date +%s)
STEP_TIMES=()
FAILED=()
step() {
    local name="$1"; shift
    banner "$name"
    local t0 status
    t0=$(date +%s)
    ( set -e; "$@" )
    status=$?
    local took=$(( $(date +%s) - t0 ))
    if [ "$status" -eq 0 ]; then
        STEP_TIMES+=("$(printf 'ok    %-40s %5ss' "$name" "$took")")
        return 0
    fi
    STEP_TIMES+=("$(printf 'FAIL  %-40s %5ss' "$name" "$took")")
    FAILED+=("$name")
    printf '\033[1;31m---- step failed: %s (exit %s)\033[0m\n' "$name" "$status" >&2
    if [ "${FAIL_FAST:-0}" = "1" ]; then finish; fi
    return 1
}

finish() {
    banner "summary ($(( $(date +%s) - START ))s)"
    printf '  %s\n' "${STEP_TIMES[@]}"
    if [ "${#FAILED[@]}" -gt 0 ]; then
        printf '\033[1;31mFAILED: %s\033[0m\n' "${FAILED[*]}"
        exit 1
    fi
    echo "all steps passed"
    exit 0
}

install_all() {
    ensure_wasm_target
    ensure_rust_components
    # One apt-get update at most, then everything apt provides: the browser
    # for wasm and e2e tests, and the real OVS/OVN servers for interop tests.
    ensure_apt chromium chromium-driver openvswitch-switch openvswitch-common ovn-central ovn-common
    ensure_trunk
    ensure_wasm_bindgen_cli
    ensure_npm_deps
}

# Core crates that carry browser tests (tests/wasm.rs); others are skipped.
WASM_CRATES=(ovsdb ovsdb-log raft-sim ovsdb-server idl timeline simview evidence contents)
wasm_tests() {
    local ran=0 c dir
    export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
    export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
    export WASM_BINDGEN_TEST_WEBDRIVER_JSON="$ROOT/scripts/webdriver.json"
    export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-120}"
    for c in "${WASM_CRATES[@]}"; do
        dir="crates/$c"
        if [ -f "$dir/tests/wasm.rs" ]; then
            echo "--- wasm tests of $c (headless Chromium)"
            cargo test --target wasm32-unknown-unknown -p "$c" --test wasm
            ran=$((ran + 1))
        else
            echo "--- $c has no tests/wasm.rs, skipped"
        fi
    done
    echo "wasm test suites run: $ran"
}

e2e_tests() {
    [ -f dist/index.html ] || die "dist/ is missing; trunk build must run first"
    node --test --test-concurrency=1 tests/e2e/
}

if [ "${SKIP_INSTALL:-0}" != "1" ]; then
    # Nothing else can run without the tools.
    step "install missing tools" install_all || finish
fi
step "cargo fmt --check" cargo fmt --all --check
step "cargo clippy (-D warnings)" cargo clippy --workspace --all-targets -- -D warnings
step "native tests (cargo test --workspace)" cargo test --workspace --no-fail-fast
step "wasm tests of core crates" wasm_tests
if step "trunk build --release" trunk build --release; then
    step "end-to-end tests (Playwright, Chromium)" e2e_tests
else
    FAILED+=("e2e (skipped: no dist/)")
fi
finish
