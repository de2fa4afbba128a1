#!/bin/bash
# Benchmark: `ovsdb-scope check` vs `ovsdb-tool check-cluster` on the three
# files of one large synthetic cluster (acl-portgroup workload in full-value
# mode, N ACLs, one file per server of the acl-portgroup-full sample, made
# with ovsdb-log's byte-exact writer; the appended entries are the same in
# the three files, so Log Matching compares every one of them).
#
# Usage: crates/ovsdb-log/bench/check-vs-check-cluster.sh [N=3650] [RUNS=1] [OTHER_BIN]
# OTHER_BIN: another ovsdb-scope binary to run on the same files (e.g. an
# older build), reported as "ovsdb-scope check (other)".
# Prints wall time, CPU time and peak RSS per run. Needs ovsdb-tool and
# /usr/bin/time. The files (about 300 MB each for N=3650) are kept in
# $BENCH_DIR (default /tmp/ovsdb-scope-bench), never in the repository.
set -euo pipefail
N=${1:-3650}
RUNS=${2:-1}
OTHER=${3:-}
cd "$(dirname "$0")/../../.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --release -q -p ovsdb-scope --bin ovsdb-scope && cargo build --release -q -p ovsdb-log --example gen_acl_log
BIN=$CARGO_TARGET_DIR/release
DIR=${BENCH_DIR:-/tmp/ovsdb-scope-bench}
mkdir -p "$DIR"
FILES=()
for s in s1 s2 s3; do
  f=$DIR/acl$N-full-$s.db
  [ -f "$f" ] || "$BIN/examples/gen_acl_log" "$f" "$N" full "$s"
  FILES+=("$f")
done
ls -l "${FILES[@]}"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
run() {
  local name=$1; shift
  for i in $(seq "$RUNS"); do
    /usr/bin/time -f "$name: %e s wall, %U+%S s CPU, peak RSS %M kB, exit %x" "$@" > /dev/null || true
  done
}
run "ovsdb-scope check" "$BIN/ovsdb-scope" check "${FILES[@]}"
[ -n "$OTHER" ] && run "ovsdb-scope check (other)" "$OTHER" check "${FILES[@]}"
run "ovsdb-tool check-cluster" ovsdb-tool check-cluster "${FILES[@]}"
"$BIN/ovsdb-scope" check "${FILES[@]}" | tail -1
