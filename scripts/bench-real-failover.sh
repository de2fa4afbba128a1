#!/usr/bin/env bash
# Failover of a real ovsdb-server cluster, to compare with the simulator's
# `failover-3-vs-5` A/B (issue 15 item 8). For each size N in SIZES and each
# of ROUNDS rounds: a fresh N-server OVN_Northbound cluster on 127.0.0.1
# (ovsdb-tool create-cluster / join-cluster, one ovsdb-server per member on a
# unix socket in a temp dir), wait for a leader and a random idle time, SIGKILL
# the leader, and read from the survivors' logs when the next one was elected
# ("term N: elected leader by ..."). Prints one line per round and a summary
# (mean, p50, max) per size. Needs ovsdb-server, ovsdb-tool, ovs-appctl and
# the OVN Northbound schema (apt: openvswitch-switch ovn-common).
#
#   scripts/bench-real-failover.sh [ROUNDS] [SIZES]     (default: 20 "3 5")
set -euo pipefail

ROUNDS=${1:-20}
SIZES=${2:-3 5}
SCHEMA=${SCHEMA:-/usr/share/ovn/ovn-nb.ovsschema}
DB=OVN_Northbound
for t in ovsdb-server ovsdb-tool ovs-appctl python3; do
    command -v "$t" >/dev/null || { echo "bench-real-failover: $t not found" >&2; exit 2; }
done
[[ -r $SCHEMA ]] || { echo "bench-real-failover: no schema at $SCHEMA" >&2; exit 2; }

WORK=$(mktemp -d /tmp/real-failover.XXXXXX)
cleanup() {
    for p in "$WORK"/*/s*.pid; do
        [[ -e $p ]] && kill -9 "$(cat "$p")" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

role() { # role DIR sN
    ovs-appctl --timeout=2 -t "$1/$2.ctl" cluster/status $DB 2>/dev/null | sed -n 's/^Role: //p'
}

# one_round N DIR: prints the ms from the kill to the next election
one_round() {
    local n=$1 d=$2 i p1 port leader t_kill
    mkdir -p "$d"
    p1=$(free_port)
    ovsdb-tool create-cluster "$d/s1.db" "$SCHEMA" "tcp:127.0.0.1:$p1" 2>/dev/null
    for ((i = 2; i <= n; i++)); do
        port=$(free_port)
        ovsdb-tool join-cluster "$d/s$i.db" $DB "tcp:127.0.0.1:$port" "tcp:127.0.0.1:$p1"
    done
    for ((i = 1; i <= n; i++)); do
        ovsdb-server --detach --no-chdir --pidfile="$d/s$i.pid" --unixctl="$d/s$i.ctl" \
            --remote="punix:$d/s$i.sock" --log-file="$d/s$i.log" -vconsole:off -vfile:info \
            "$d/s$i.db" 2>/dev/null
    done
    # every member joined and one leads
    local deadline=$((SECONDS + 60))
    while :; do
        leader=
        local ok=0
        for ((i = 1; i <= n; i++)); do
            case $(role "$d" "s$i") in
                leader) leader=s$i; ok=$((ok + 1)) ;;
                follower) ok=$((ok + 1)) ;;
            esac
        done
        [[ -n $leader && $ok == "$n" ]] && break
        ((SECONDS < deadline)) || { echo "cluster of $n did not form" >&2; return 1; }
        sleep 0.1
    done
    # an idle time, so the kill falls at a random point of the heartbeat cycle
    sleep "$(python3 -c 'import random; print(1 + random.random())')"
    t_kill=$(date +%s.%N)
    kill -9 "$(cat "$d/$leader.pid")"
    rm -f "$d/$leader.pid"
    deadline=$((SECONDS + 30))
    while ! grep -h "elected leader" $(ls "$d"/s*.log | grep -v "/$leader.log") 2>/dev/null |
        grep -qv "term 1:"; do
        ((SECONDS < deadline)) || { echo "no new leader after 30 s" >&2; return 1; }
        sleep 0.05
    done
    # the first election after the kill, by the log's own UTC timestamp
    grep -h "elected leader" $(ls "$d"/s*.log | grep -v "/$leader.log") | grep -v "term 1:" |
        sort | head -1 | cut -d'|' -f1 |
        python3 -c 'import sys, datetime
t = datetime.datetime.strptime(sys.stdin.read().strip(), "%Y-%m-%dT%H:%M:%S.%fZ")
t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
print(round((t - float(sys.argv[1])) * 1000))' "$t_kill"
    for p in "$d"/s*.pid; do
        [[ -e $p ]] && kill -9 "$(cat "$p")" 2>/dev/null || true
    done
}

echo "# $(ovsdb-server --version | head -1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $SIZES; do
    : > "$WORK/ms-$n"
    for ((r = 1; r <= ROUNDS; r++)); do
        ms=$(one_round "$n" "$WORK/n$n-r$r")
        echo "servers=$n round=$r kill_to_leader_ms=$ms"
        echo "$ms" >> "$WORK/ms-$n"
    done
    python3 - "$n" "$WORK/ms-$n" <<'EOF'
import sys
v = sorted(int(x) for x in open(sys.argv[2]))
p = lambda q: v[min(len(v) - 1, int(q * len(v)))]
print(f"servers={sys.argv[1]} rounds={len(v)} mean_ms={sum(v)/len(v):.0f} p50_ms={p(0.5)} p90_ms={p(0.9)} max_ms={v[-1]}")
EOF
done
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
