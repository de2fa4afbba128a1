#!/usr/bin/env bash
# real-acl-files.sh — three full-size clustered OVN_Northbound files written by
# the real ovsdb-server, for benchmarking `ovsdb-scope check` against
# `ovsdb-tool check-cluster` on the server's own output.
#
# Usage: crates/ovsdb-log/bench/real-acl-files.sh OUTDIR [N=3500] [DEL_BATCH=500]
#
# What it does: creates a 3-server Raft cluster of OVN_Northbound
# (ovsdb-tool create-cluster / join-cluster; Raft between the servers on
# tcp:127.0.0.1, clients on unix sockets, everything in a private temp dir),
# runs every ovsdb-server with --disable-file-column-diff so that each log
# entry carries whole rows, and replays the acl-portgroup workload of
# gen-real-logs.sh (its "acl-portgroup-full" run):
#   ovn-nbctl init; ovn-nbctl pg-add pg1
#   N times:  ovn-nbctl --log acl-add pg1 from-lport PRIO udp drop
#             (PRIO = 1001..1000+N, one transaction per ACL)
#   the N ACLs deleted DEL_BATCH per transaction (acl-del pg1 from-lport PRIO udp)
#   ovn-nbctl pg-del pg1
# It then waits until both followers have every entry applied, stops the
# followers and then the leader (so no leadership transfer is logged), and
# copies s1.db s2.db s3.db (plus the server logs) to OUTDIR.
#
# Why it is written this way: every ACL transaction logs the port group's
# full acls set, so the files grow with N squared (about 300 MB each at
# N=3500).  ovsdb-server may compact its log on its own as soon as 10 to 20
# minutes have passed since it opened the database (storage.c,
# schedule_next_snapshot), and a compacted file is no longer the full
# history.  gen-real-logs.sh starts a new ovn-nbctl per ACL, which downloads
# the whole database each time and took 37 minutes, so its files were
# compacted to 81-161 MB.  Here one `ovn-nbctl --detach` daemon holds one
# connection and one replica (OVN_NB_DAEMON), so each acl-add costs one
# small transaction; the whole workload takes a few minutes.  Each acl-add
# is still its own ovn-nbctl command and thus its own transaction.
#
# The script fails (exit 1) if the run reaches 10 minutes after the first
# server started, if a server log mentions compaction or a snapshot (other
# than the creation snapshot sent to the joining servers), if a
# file's header shows a snapshot beyond the cluster's creation, or if any
# file is smaller than 290 000 000 bytes.  Only processes it started are
# stopped, by PID.  Needs ovsdb-server, ovsdb-tool, ovs-appctl, ovn-nbctl and
# python3 (Debian openvswitch-common, ovn-common / ovn-central, OVS 3.1).
# KEEP_WORK=1 keeps the temp dir; RAFT_BASE_PORT (default 16741) is the
# first tcp port tried for Raft.
set -euo pipefail
export LC_ALL=C

if [[ $# -lt 1 || $# -gt 3 ]]; then
    echo "usage: $0 OUTDIR [N=3500] [DEL_BATCH=500]" >&2
    exit 2
fi
OUT=$(readlink -m "$1")
N=${2:-3500}
DEL_BATCH=${3:-500}
MIN_BYTES=290000000
LIMIT_S=600 # earliest automatic snapshot: 10 minutes after the server opened its file
NEXT_PORT=${RAFT_BASE_PORT:-16741}
SCHEMA=/usr/share/ovn/ovn-nb.ovsschema
DB=OVN_Northbound

say() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { say "FATAL: $*"; exit 1; }

for t in ovsdb-server ovsdb-tool ovs-appctl ovn-nbctl python3; do
    command -v "$t" > /dev/null || die "$t not found"
done
[[ -f $SCHEMA ]] || die "$SCHEMA not found (package ovn-common)"

WORK=$(mktemp -d -t realacl.XXXXXX)
PIDS=() # ovsdb-server and ovn-nbctl daemon PIDs, in start order

pid_running() {
    local st
    st=$(awk '/^State:/ {print $2}' "/proc/$1/status" 2> /dev/null || true)
    [[ -n $st && $st != Z ]]
}
cleanup() {
    local rc=$? pid
    cd /
    for pid in "${PIDS[@]}"; do
        pid_running "$pid" || continue
        # only a process whose command line names our temp dir
        tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null | grep -qF "$WORK" || continue
        kill -TERM "$pid" 2> /dev/null || true
    done
    if [[ ${KEEP_WORK:-0} == 1 ]]; then
        say "work dir kept: $WORK"
    else
        rm -rf "$WORK"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cd "$WORK"
# Relative unix socket names resolve against the run dir.
export OVS_RUNDIR=$WORK OVS_LOGDIR=$WORK

alloc_port() { # sets PORT to a tcp port nobody listens on
    local hex
    while :; do
        hex=$(printf '%04X' "$NEXT_PORT")
        if ! grep -qi ":$hex 0\{8,32\}:0000 0A" /proc/net/tcp /proc/net/tcp6 2> /dev/null; then
            PORT=$NEXT_PORT
            NEXT_PORT=$((NEXT_PORT + 1))
            return 0
        fi
        NEXT_PORT=$((NEXT_PORT + 1))
    done
}
status_of() { ovs-appctl -t "$WORK/$1.ctl" cluster/status $DB 2>&1 || true; }
role_of() { status_of "$1" | sed -n 's/^Role: //p'; }
log_end_of() { status_of "$1" | sed -n 's/^Log: \[[0-9]*, \([0-9]*\)\]$/\1/p'; }
elapsed() { echo $((SECONDS - T0)); }
check_clock() { # fail before the earliest automatic snapshot could happen
    (($(elapsed) < LIMIT_S)) || die "$(elapsed) s since the servers started: an automatic snapshot may have compacted the files"
}
wait_for() { # DESCRIPTION COMMAND... : polls COMMAND for up to 120 s
    local what=$1 deadline=$((SECONDS + 120))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || die "timed out waiting for $what"
        sleep 0.1
    done
}
is_member() { status_of "$1" | grep -q '^Status: cluster member'; }
caught_up() { # NAME LEADER
    local a b
    a=$(log_end_of "$1")
    b=$(log_end_of "$2")
    [[ -n $a && $a == "$b" ]] && status_of "$1" | grep -q '^Entries not yet applied: 0'
}

# ---------------------------------------------------------------- cluster ---
alloc_port
P1=$PORT
ovsdb-tool create-cluster s1.db "$SCHEMA" tcp:127.0.0.1:$P1
for i in 2 3; do
    alloc_port
    ovsdb-tool join-cluster s$i.db $DB tcp:127.0.0.1:$PORT tcp:127.0.0.1:$P1
done
T0=$SECONDS
for s in s1 s2 s3; do
    ovsdb-server --detach --no-chdir --pidfile="$WORK/$s.pid" --unixctl="$WORK/$s.ctl" \
        --remote=punix:$s.sock --log-file="$WORK/$s.log" -vconsole:warn \
        --disable-file-column-diff "$WORK/$s.db"
    PIDS+=("$(cat "$WORK/$s.pid")")
done
for s in s1 s2 s3; do wait_for "$s to join" is_member $s; done
ALLDB=unix:s1.sock,unix:s2.sock,unix:s3.sock
say "cluster up after $(elapsed) s (Raft ports $P1..$PORT)"

# One ovn-nbctl daemon: one connection and one replica for every command.
ovn-nbctl --detach --no-chdir --pidfile="$WORK/nbctl.pid" --unixctl="$WORK/nbctl.ctl" \
    --log-file="$WORK/nbctl.log" -vconsole:warn --db=$ALLDB > /dev/null
PIDS+=("$(cat "$WORK/nbctl.pid")")
export OVN_NB_DAEMON=$WORK/nbctl.ctl

ovn-nbctl init
ovn-nbctl pg-add pg1
say "adding $N ACLs, one transaction each"
for ((i = 1; i <= N; i++)); do
    ovn-nbctl --log acl-add pg1 from-lport $((1000 + i)) udp drop
    if ((i % 250 == 0)); then
        check_clock
        say "  $i ACLs, $(elapsed) s, s1.db $(stat -c %s s1.db) bytes"
    fi
done
say "deleting them, $DEL_BATCH per transaction"
for ((i = 1; i <= N; i += DEL_BATCH)); do
    args=()
    for ((j = i; j < i + DEL_BATCH && j <= N; j++)); do
        args+=(-- acl-del pg1 from-lport $((1000 + j)) udp)
    done
    ovn-nbctl "${args[@]:1}"
done
ovn-nbctl pg-del pg1
ovs-appctl -t "$WORK/nbctl.ctl" exit
check_clock

# ------------------------------------------------------------------- stop ---
LEADER=
for s in s1 s2 s3; do [[ $(role_of $s) == leader ]] && LEADER=$s; done
[[ -n $LEADER ]] || die "no leader at the end"
FOLLOWERS=()
for s in s1 s2 s3; do [[ $s != "$LEADER" ]] && FOLLOWERS+=("$s"); done
for s in "${FOLLOWERS[@]}"; do wait_for "$s to catch up" caught_up $s $LEADER; done
check_clock
say "workload done after $(elapsed) s; leader $LEADER, log end $(log_end_of $LEADER)"
for s in "${FOLLOWERS[@]}" $LEADER; do
    pid=$(cat "$WORK/$s.pid")
    ovs-appctl -t "$WORK/$s.ctl" exit
    wait_for "$s to exit" eval "! pid_running $pid"
done

# ------------------------------------------------------------------ check ---
# The leader sends its creation snapshot (index 1, "1:1") to the joining
# servers; any other snapshot or compaction line means a compacted log.
if grep -iE 'compact|snapshot' s1.log s2.log s3.log | grep -vE 'snapshot .*[ ]1:1\.?$'; then
    die "a server log mentions compaction or a snapshot (lines above)"
fi
# A cluster file starts with its header record; prev_index is the last index
# its snapshot covers.  Creation and joining leave it at 1 or 2; an automatic
# snapshot would move it to thousands.
for s in s1 s2 s3; do
    prev=$(python3 - "$s.db" << 'EOF'
import json, sys
with open(sys.argv[1], "rb") as f:
    magic, kind, length, sha = f.readline().split()
    print(json.loads(f.read(int(length))).get("prev_index", 0))
EOF
)
    ((prev <= 2)) || die "$s.db header has prev_index $prev: the file was compacted"
done

mkdir -p "$OUT"
small=0
for s in s1 s2 s3; do
    cp "$s.db" "$OUT/$s.db"
    cp "$s.log" "$OUT/$s.ovsdb-server.log"
    size=$(stat -c %s "$OUT/$s.db")
    printf '%s  %12d bytes\n' "$OUT/$s.db" "$size"
    ((size >= MIN_BYTES)) || { say "$s.db is smaller than $MIN_BYTES bytes"; small=1; }
done
((small == 0)) || die "files smaller than $MIN_BYTES bytes (raise N)"
say "done in $(elapsed) s since the servers started; no compaction"
