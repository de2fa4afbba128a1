//! The cost model, knob by knob: each knob changes write latency by what
//! the model predicts (§4.3: a leader write costs c + 2d + f; message
//! transmission bytes/bandwidth per hop; CPU per JSON byte; group commit of
//! §1.4). Jitter is switched off so the deltas are exact up to the µs
//! rounding of each step; the tolerances below are derived from that.

use raft_sim::{preset, EventKind, MsgKind, Sim, SimEvent};

const NO_JITTER: [(&str, &str); 2] = [("delay_jitter", "0"), ("fsync_jitter", "0")];

fn run(text: &str, kv: &[(&str, &str)]) -> (Sim, raft_sim::Metrics) {
    let over: Vec<(String, String)> = NO_JITTER
        .iter()
        .chain(kv.iter())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut s = Sim::from_text(text, None, &over, 1).unwrap();
    s.record_events = true;
    let m = s.run();
    assert!(m.violations.is_empty(), "{:?}", m.violations);
    (s, m)
}

/// Per-write latency differences between two runs of the same closed loop.
fn deltas(a: &raft_sim::Metrics, b: &raft_sim::Metrics) -> Vec<f64> {
    assert_eq!(a.txn_count(), b.txn_count());
    a.txn_latencies_us
        .iter()
        .zip(&b.txn_latencies_us)
        .map(|(x, y)| *y as f64 - *x as f64)
        .collect()
}

/// (start, end) of every client write, in completion order (= issue order
/// for a closed loop).
fn writes(s: &Sim) -> Vec<(u64, u64)> {
    s.events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ClientWrite { start, end, .. } => Some((start, end)),
            _ => None,
        })
        .collect()
}

/// Bytes of messages of `kind` sent inside [start, end].
fn msg_bytes(ev: &[SimEvent], kind: MsgKind, start: u64, end: u64) -> Vec<u64> {
    ev.iter()
        .filter_map(|e| match e.kind {
            EventKind::Message {
                kind: k,
                bytes,
                send,
                dropped: false,
                ..
            } if k == kind && send >= start && send <= end => Some(bytes),
            _ => None,
        })
        .collect()
}

/// acl-add through the leader in full storage mode: every entry carries the
/// whole, growing `acls` set of the port group, so entries grow per write.
fn growing_entries(n: u64) -> String {
    preset("acl-portgroup")
        .unwrap()
        .replace("via = s1", "via = leader")
        .replace("column_diff = true", "column_diff = false")
        .replace("n = 150", &format!("n = {n}"))
}

#[test]
fn bandwidth_adds_bytes_over_bandwidth_per_hop() {
    let text = growing_entries(60);
    let (_, inf) = run(&text, &[("bandwidth", "0")]);
    for bw in [2.0f64, 0.5] {
        let bws = bw.to_string();
        let (s, m) = run(&text, &[("bandwidth", &bws)]);
        let d = deltas(&inf, &m);
        let ev = s.events();
        let mut sizes = Vec::new();
        for (i, (start, end)) in writes(&s).into_iter().enumerate() {
            // Critical path of a leader write: append (leader -> follower)
            // and the append_reply back; both followers see the same bytes.
            let app = msg_bytes(ev, MsgKind::Append, start, end);
            let rep = msg_bytes(ev, MsgKind::AppendReply, start, end);
            assert_eq!(app.len(), 2, "write {i}: {app:?}");
            assert!(app[0] == app[1] && !rep.is_empty());
            let predicted = (app[0] + rep[0]) as f64 / bw;
            // Each hop rounds its transmission time down to a whole µs.
            assert!(
                (d[i] - predicted).abs() <= 2.0,
                "bw {bw} write {i}: delta {} us, predicted {predicted} us",
                d[i]
            );
            sizes.push(app[0]);
        }
        // The entries really grow (the point of the scenario), and so does
        // the latency, by (size growth)/bandwidth.
        let (first, last) = (sizes[2], sizes[sizes.len() - 3]);
        assert!(last > 2 * first, "{first} -> {last}");
    }
}

#[test]
fn cpu_cost_scales_with_the_json_bytes_on_the_critical_path() {
    let text = preset("ls-add-leader").unwrap();
    let kv = |ns: &'static str| [("n", "30"), ("cpu_ns_per_byte", ns)];
    let (_, zero) = run(text, &kv("0"));
    let (s, m100) = run(text, &kv("100"));
    let (_, m200) = run(text, &kv("200"));
    let d100 = deltas(&zero, &m100);
    let d200 = deltas(&zero, &m200);
    let ev = s.events();
    for (i, (start, end)) in writes(&s).into_iter().enumerate() {
        let a = msg_bytes(ev, MsgKind::Append, start, end)[0] as f64;
        let r = msg_bytes(ev, MsgKind::AppendReply, start, end)[0] as f64;
        let h = msg_bytes(ev, MsgKind::Heartbeat, start, end)
            .first()
            .copied()
            .unwrap_or(0) as f64;
        let e = ev
            .iter()
            .find_map(|x| match x.kind {
                EventKind::EntryWritten { bytes, .. } if x.t >= start && x.t <= end => {
                    Some(bytes as f64)
                }
                _ => None,
            })
            .unwrap();
        // Bytes certainly encoded/decoded in sequence on the path: the
        // leader writes the entry record and encodes the append, the
        // follower decodes it, writes its record, encodes the reply, the
        // leader decodes it. At most: plus the composed text (< record),
        // the append to the second follower and its reply, the commit
        // record and the commit heartbeats (< 300 B each).
        let lower = 2.0 * e + 2.0 * a + 2.0 * r;
        let upper = lower + e + a + r + 300.0 + 2.0 * h.max(300.0);
        let per_byte = d100[i] / 0.1; // bytes at 100 ns/B
        assert!(
            per_byte >= lower - 20.0 && per_byte <= upper + 20.0,
            "write {i}: {per_byte} B-equivalents, model [{lower}, {upper}]"
        );
        // Linear in the knob (each step rounds to whole µs).
        assert!(
            (d200[i] - 2.0 * d100[i]).abs() <= 4.0,
            "write {i}: {} vs 2 x {}",
            d200[i],
            d100[i]
        );
    }
}

#[test]
fn fsync_latency_adds_once_per_write_through_leader_or_follower() {
    for name in ["ls-add-leader", "ls-add-follower"] {
        let text = preset(name).unwrap();
        let (_, base) = run(text, &[("n", "30")]);
        for extra in [1_000u64, 5_000] {
            let f = (750 + extra) as f64 / 1000.0;
            let (_, slow) = run(text, &[("n", "30"), ("fsync", &f.to_string())]);
            for (i, d) in deltas(&base, &slow).into_iter().enumerate() {
                // Leader and follower fsync run in parallel: one f on the path.
                assert!(
                    (d - extra as f64).abs() <= 2.0,
                    "{name} +{extra} us write {i}: {d}"
                );
            }
        }
    }
}

/// Entry records written per server.
fn entries_per_server(s: &Sim) -> Vec<u64> {
    let mut v = vec![0; s.servers.len()];
    for e in s.events() {
        if let EventKind::EntryWritten { server, .. } = e.kind {
            v[server] += 1;
        }
    }
    v
}

#[test]
fn a_burst_of_appends_shares_fsyncs() {
    // Open-loop load at 50 writes/s. Steady state: the prerequisite allows
    // one data entry in flight, so every entry record gets its own fsync
    // (group commit has nothing to merge). A follower killed for 3 s and
    // restarted receives the missing entries in one append_request: the
    // afsync thread covers that burst with at most two fsyncs (§1.4).
    let base = "name = burst\nprofile = main\nuntil_ms = 12000\n[workload]\ntype = open\nrate = 50\nvia = leader\nop = ls-add * 400\n[faults]\n";
    let (s, m) = run(base, &[("fsync", "5")]);
    let entries = entries_per_server(&s);
    for (i, e) in entries.iter().enumerate() {
        let f = m.per_server_fsyncs[i];
        // + the term/vote records of the first election.
        assert!(f >= *e && f <= e + 3, "s{}: {f} fsyncs, {e} entries", i + 1);
    }
    let leader = s
        .servers
        .iter()
        .position(|x| x.role == raft_sim::Role::Leader)
        .unwrap();
    let victim = (leader + 1) % 3;
    let text = format!(
        "{base}at 4000 kill s{0}\nat 7000 restart s{0}\n",
        victim + 1
    );
    let (s, m) = run(&text, &[("fsync", "5")]);
    assert_eq!(m.txn_count(), 400);
    let entries = entries_per_server(&s);
    let (e, f) = (entries[victim], m.per_server_fsyncs[victim]);
    // ~150 entries missed over 3 s at 50/s.
    let before = s
        .events()
        .iter()
        .filter(|x| {
            x.t < 4_000_000
                && matches!(x.kind, EventKind::EntryWritten { server, .. } if server == victim)
        })
        .count() as u64;
    let missed = 150;
    println!(
        "restarted s{}: {e} entries ({before} before the kill), {f} fsyncs",
        victim + 1
    );
    assert!(e >= before + missed - 30, "s{}: {e} entries", victim + 1);
    assert!(
        f + missed - 30 <= e,
        "s{}: {f} fsyncs for {e} entries (burst of about {missed} not grouped)",
        victim + 1
    );
    // The others still pay one fsync per entry.
    for i in (0..3).filter(|i| *i != victim) {
        assert!(m.per_server_fsyncs[i] >= entries[i]);
    }
}

#[test]
fn client_overhead_adds_exactly_its_value_per_sequential_write() {
    for name in ["ls-add-leader", "ls-add-follower"] {
        let text = preset(name).unwrap();
        let (_, base) = run(text, &[("n", "30")]);
        for c in ["0", "10", "123.456"] {
            let (_, m) = run(text, &[("n", "30"), ("client_overhead", c)]);
            let want = (c.parse::<f64>().unwrap() * 1000.0).round() - 3_880.0;
            for (i, d) in deltas(&base, &m).into_iter().enumerate() {
                assert!(
                    (d - want).abs() <= 1.0,
                    "{name} c={c} write {i}: {d} vs {want}"
                );
            }
            let total = m.txn_total_us() as f64 - base.txn_total_us() as f64;
            assert!((total - 30.0 * want).abs() <= 30.0, "{name} c={c}: {total}");
        }
    }
}
