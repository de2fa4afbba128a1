#!/bin/bash
# Benchmark: `ovsdb-scope inspect` vs `ovsdb-tool show-log` on a large
# full-value clustered file made with ovsdb-log's byte-exact writer
# (acl-portgroup workload, one port group, N ACLs added one per transaction,
# --disable-file-column-diff style records).
#
# Usage: crates/ovsdb-log/bench/inspect-vs-show-log.sh [N=3650] [RUNS=3]
# Prints wall time, CPU time (user+sys) and peak RSS (VmHWM) per run.
# Needs ovsdb-tool (Debian openvswitch-common) and /usr/bin/time.
set -euo pipefail
N=${1:-3650}
RUNS=${2:-3}
cd "$(dirname "$0")/../../.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --release -q -p ovsdb-scope -p ovsdb-log --example gen_acl_log
BIN=$CARGO_TARGET_DIR/release
DIR=${BENCH_DIR:-/tmp/ovsdb-scope-bench}
mkdir -p "$DIR"
FILE=$DIR/acl$N-full.db
[ -f "$FILE" ] || "$BIN/examples/gen_acl_log" "$FILE" "$N" full
SIZE=$(stat -c %s "$FILE")
echo "file: $FILE ($SIZE bytes); load: $(cut -d' ' -f1-3 /proc/loadavg)"
# Sanity: the real tool reads every record of the file.
ovsdb-tool show-log "$FILE" > /dev/null
run() {
  local name=$1; shift
  for i in $(seq "$RUNS"); do
    /usr/bin/time -f "$name: %e s wall, %U+%S s CPU, peak RSS %M kB" "$@" > /dev/null
  done
}
run "ovsdb-scope inspect --json" "$BIN/ovsdb-scope" inspect --json "$FILE"
run "ovsdb-tool show-log" ovsdb-tool show-log "$FILE"
run "ovsdb-tool -mm show-log" ovsdb-tool -mm show-log "$FILE"
"$BIN/ovsdb-scope" inspect "$FILE" | grep -E "records|entry bytes"
