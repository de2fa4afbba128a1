//! Runs the real simulator through the view model and checks what the pages
//! show against the simulator's own metrics.

use simview::ab::{ab_preset, rows};
use simview::trace::{DOWN, LEADER};
use simview::{run, Fault, FaultAction, Node, RunSpec, Target};

fn go(spec: &RunSpec) -> simview::RunResult {
    run(spec, &mut |_, _| {}).expect("run")
}

#[test]
fn commit_sync_ab_shows_the_known_effect() {
    let p = ab_preset("commit-sync").unwrap();
    let a = go(&p.spec_a(1));
    let b = go(&p.spec_b(1));
    let ratio = a.total_ms() / b.total_ms();
    eprintln!(
        "commit-sync: A {} ms, B {} ms, ratio {ratio}",
        a.total_ms(),
        b.total_ms()
    );
    assert_eq!(a.figure("txns.count"), Some(100.0));
    assert_eq!(b.figure("txns.count"), Some(100.0));
    assert!(a.total_ms() > 20_000.0, "{}", a.total_ms());
    assert!(b.total_ms() < 1_000.0, "{}", b.total_ms());
    assert!(ratio >= 50.0);
    // The trace holds every write the metrics count.
    assert_eq!(a.trace.writes.len(), 100);
    for r in rows(&a, &b) {
        eprintln!("{:30} {:?} {:?} ratio {:?}", r.label, r.a, r.b, r.ratio());
    }
}

#[test]
fn other_presets_run() {
    for name in ["full-vs-diff", "election-timer"] {
        let p = ab_preset(name).unwrap();
        let a = go(&p.spec_a(1));
        let b = go(&p.spec_b(1));
        for r in rows(&a, &b) {
            eprintln!(
                "{name}: {:30} {:?} {:?} ratio {:?}",
                r.label,
                r.a,
                r.b,
                r.ratio()
            );
        }
        eprintln!(
            "{name}: msgs {} {}",
            a.trace.messages.len(),
            b.trace.messages.len()
        );
    }
}

#[test]
fn five_servers_replicate_to_four_followers() {
    let p = ab_preset("three-vs-five").unwrap();
    let five = go(&p.spec_a(1));
    let three = go(&p.spec_b(1));
    assert_eq!(five.trace.servers(), 5);
    assert_eq!(three.trace.servers(), 3);
    assert_eq!(five.figure("txns.count"), Some(100.0));
    assert_eq!(three.figure("txns.count"), Some(100.0));
    let appends = |r: &simview::RunResult| {
        let k = r.trace.kinds.iter().position(|k| k == "append_request");
        r.trace
            .messages
            .iter()
            .filter(|m| Some(m.kind as usize) == k)
            .count()
    };
    // Every entry goes to every follower: four against two.
    let (a5, a3) = (appends(&five), appends(&three));
    eprintln!(
        "three-vs-five: appends {a5} vs {a3}, total {} ms vs {} ms",
        five.total_ms(),
        three.total_ms()
    );
    assert!(a5 as f64 >= 1.8 * a3 as f64, "{a5} vs {a3}");
    let sent = |r: &simview::RunResult| r.figure("bytes.sent").unwrap();
    assert!(sent(&five) > 1.5 * sent(&three));
    for r in rows(&five, &three) {
        eprintln!("three-vs-five: {:30} {:?} {:?}", r.label, r.a, r.b);
    }
}

#[test]
fn failover_with_five_servers_elects_a_new_leader_like_three() {
    let p = ab_preset("failover-3-vs-5").unwrap();
    let five = go(&p.spec_a(1));
    let three = go(&p.spec_b(1));
    assert_eq!(five.trace.servers(), 5);
    assert_eq!(three.trace.servers(), 3);
    // The five-server side is the preset leader-kill-5.
    let preset = go(&RunSpec::preset("leader-kill-5"));
    assert_eq!(preset.figures, five.figures);
    for r in [&five, &three] {
        // One kill, one failover: a new leader no sooner than an election
        // timeout (1 s) after the last heartbeat (pings every ET/3).
        let ttl = r.figure("time_to_leader_ms").unwrap();
        assert!((666.0..3_000.0).contains(&ttl), "{ttl}");
        assert!(r.figure("terms").unwrap() >= 3.0);
        assert!(r.figure("leaderless_ms").unwrap() >= ttl);
    }
    for r in rows(&five, &three) {
        eprintln!("failover-3-vs-5: {:30} {:?} {:?}", r.label, r.a, r.b);
    }
}

#[test]
fn a_run_is_reproducible_and_its_trace_matches_its_metrics() {
    let mut spec = RunSpec::preset("ls-add-follower");
    spec.profile = Some("v2.12-pre-sync".into());
    let a = go(&spec);
    let b = go(&spec);
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.trace, b.trace);
    eprintln!(
        "ls-add-follower pre-sync: {} ms, {} msgs",
        a.total_ms(),
        a.trace.messages.len()
    );
    // The highest term in the trace is the metrics' term count.
    let end = a.trace.end;
    assert_eq!(a.trace.max_term_at(end) as f64, a.figure("terms").unwrap());
    assert!(a.trace.leader_at(end).is_some());
    // The worker's form: the same result, and the simulator it came from,
    // finished, still to be freed.
    let (c, sim) = simview::run_keeping_sim(&spec, &mut |_, _| {}).expect("run");
    assert_eq!(
        (&c.trace, c.trace_hash, &c.json),
        (&a.trace, a.trace_hash, &a.json)
    );
    assert!(sim.finished());
    assert_eq!(sim.trace_hash(), a.trace_hash);
}

#[test]
fn killing_the_leader_forks_a_run_with_a_new_term() {
    let spec = RunSpec::preset("ls-add-leader");
    let base = go(&spec);
    let t = 2_000_000;
    let leader = base.trace.leader_at(t).expect("a leader at 2 s");
    let term0 = base.trace.max_term_at(t);
    let fork = spec.fork(t, FaultAction::Kill(Target::Server(leader)));
    let f = go(&fork);
    // Same past up to the intervention.
    let before = |tr: &simview::Trace| {
        tr.messages
            .iter()
            .filter(|m| m.recv < t)
            .copied()
            .collect::<Vec<_>>()
    };
    assert_eq!(before(&base.trace), before(&f.trace));
    assert_eq!(f.trace.state_at(leader, t + 1).unwrap().life, DOWN);
    let later = f.trace.leader_at(f.trace.end).expect("a new leader");
    assert_ne!(later, leader);
    assert!(f.trace.max_term_at(f.trace.end) > term0);
    assert_eq!(f.trace.state_at(later, f.trace.end).unwrap().role, LEADER);
}

#[test]
fn an_export_is_one_clustered_file_per_server_with_the_run_figures() {
    let mut spec = RunSpec::preset("ls-add-follower");
    spec.sets = vec![("n".into(), "5".into())];
    let ex = simview::export(&spec).expect("export");
    let r = go(&spec);
    assert_eq!(ex.json, r.json, "the export's metrics are the run's");
    assert_eq!(ex.files.len(), r.trace.servers());
    for (name, bytes) in &ex.files {
        assert!(name.ends_with(".db"), "{name}");
        assert!(bytes.starts_with(b"OVSDB CLUSTER "), "{name}");
    }
}

#[test]
fn the_page_interventions_fork_runs_that_show_their_effect() {
    let spec = RunSpec::preset("ls-add-leader");
    let base = go(&spec);
    let t = 1_700_000;
    // Drop the next message: loss from now until just after the next send.
    let i = base.trace.first_message_from(t + 1);
    let next = base.trace.messages[i];
    let drop = spec.fork_faults(&[
        Fault::at(t, FaultAction::Loss(1.0)),
        Fault::at(next.send + 1, FaultAction::Loss(0.0)),
    ]);
    let d = go(&drop);
    let same = d
        .trace
        .messages
        .iter()
        .find(|m| (m.send, m.from, m.to, m.kind) == (next.send, next.from, next.to, next.kind))
        .expect("the same message is sent in the fork");
    assert!(same.dropped);
    let dropped: Vec<_> = d.trace.messages.iter().filter(|m| m.dropped).collect();
    // The loss is decided when the sender emits, so the burst it emits in
    // that moment (one message per peer) is dropped together, and nothing else.
    assert!(!base.trace.messages.iter().any(|m| m.dropped));
    assert!(!dropped.is_empty() && dropped.len() < base.trace.servers());
    assert!(dropped
        .iter()
        .all(|m| m.from == next.from && m.send >= next.send && m.send < next.send + 100));
    // Pause a server: it shows as paused, then carries on.
    let p = go(&spec.fork(t, FaultAction::Pause(Target::Server(0), 2_000_000)));
    let st = p.trace.state_at(0, t).unwrap();
    assert_eq!(st.paused_until, t + 2_000_000);
    assert_eq!(p.trace.writes.len(), 100, "the cluster carries on");
    assert!(p.trace.writes.iter().all(|w| w.end > w.start));
    // One-way cut and heal, and a new election timer through the log.
    let c = go(&spec
        .fork(t, FaultAction::Cut(Node::Member(0), Node::Member(1)))
        .fork(t + 500_000, FaultAction::Heal));
    assert_eq!(c.violations, Vec::<String>::new());
    let e = go(&spec.fork(t, FaultAction::ElectionTimer(2000)));
    assert!(e
        .trace
        .notes
        .iter()
        .any(|n| n.text == "election timer 2000 ms"));
    let leader = e.trace.leader_at(e.trace.end).unwrap();
    assert_eq!(e.trace.state_at(leader, e.trace.end).unwrap().et, 2000);
    // As in ovsdb-server, a timer more than twice the current one is refused.
    let refused = go(&spec.fork(t, FaultAction::ElectionTimer(16000)));
    assert!(!refused
        .trace
        .notes
        .iter()
        .any(|n| n.text.starts_with("election timer ")));
}

#[test]
fn every_intervention_is_written_as_a_fault_line_the_parser_reads_back() {
    let actions = [
        FaultAction::Kill(Target::Server(0)),
        FaultAction::Kill(Target::Leader),
        FaultAction::Restart(Target::Follower),
        FaultAction::Partition(
            vec![Node::Member(0)],
            vec![Node::Member(1), Node::Member(2)],
        ),
        FaultAction::Partition(vec![Node::Relay(0)], vec![Node::Member(0), Node::Relay(1)]),
        FaultAction::Cut(Node::Member(2), Node::Member(0)),
        FaultAction::Cut(Node::Relay(1), Node::Member(2)),
        FaultAction::Heal,
        FaultAction::Loss(0.25),
        FaultAction::LinkDelay(Node::Member(0), Node::Member(1), 12_500),
        FaultAction::LinkDelay(Node::Member(0), Node::Relay(0), 2_000),
        FaultAction::Pause(Target::Server(1), 2_000_000),
        FaultAction::SlowDisk(Target::Leader, 3.5),
        FaultAction::Transfer,
        FaultAction::ElectionTimer(2000),
        FaultAction::Join(3),
        FaultAction::Leave(Target::Server(2)),
        FaultAction::Compact(Target::Leader),
    ];
    for (k, a) in actions.into_iter().enumerate() {
        let f = Fault::at(1_000_000 + k as u64 * 1500, a);
        let line = f.to_line();
        assert_eq!(
            raft_sim::scenario::Scenario::fault(&line).as_ref(),
            Ok(&f),
            "{line}"
        );
        // And through a whole scenario: the fork's text parses to the base
        // scenario's faults plus this one.
        let spec = RunSpec::preset("leader-kill").fork_faults(std::slice::from_ref(&f));
        let sc = raft_sim::scenario::Scenario::parse(&spec.full_text().unwrap()).unwrap();
        assert_eq!(sc.faults.last(), Some(&f), "{line}");
    }
    let random = Fault {
        at: 1_000_000,
        at_max: Some(3_000_000),
        action: FaultAction::Kill(Target::Leader),
    };
    assert_eq!(
        raft_sim::scenario::Scenario::fault(&random.to_line()),
        Ok(random)
    );
}

#[test]
fn relays_get_lanes_of_their_own_after_the_members() {
    let mut spec = RunSpec::preset("relay-chain");
    spec.seed = 1;
    let r = go(&spec);
    let tr = &r.trace;
    assert_eq!(tr.servers(), 3);
    assert_eq!(tr.lanes(), 5);
    assert_eq!(tr.lane_name(0), "s1");
    assert_eq!(tr.lane_name(3), "r1");
    assert_eq!(tr.lane_name(4), "r2");
    assert!(tr.is_relay_lane(4) && !tr.is_relay_lane(2) && !tr.is_relay_lane(5));
    for lane in 3..5 {
        assert!(tr
            .lane_states(lane)
            .iter()
            .all(|p| p.role == simview::trace::RELAY));
    }
    // r1 was killed and restarted: its lane shows it down in between.
    assert!(tr.lane_states(3).iter().any(|p| p.life == DOWN));
    assert_eq!(tr.lane_state_at(3, 2_000_000).map(|p| p.life), Some(DOWN));
    // The copies caught up with the cluster: the relays' lanes end at the
    // log index the members committed last.
    let end = tr.lane_state_at(4, tr.end).unwrap().commit;
    let member_commit = tr.state_at(0, tr.end).unwrap().commit;
    assert!(end > 50 && end <= member_commit, "{end} {member_commit}");
    // Relay hops run between r2 and r1 and between r1 and a member, named
    // by their OVSDB methods.
    let name = |m: &simview::trace::Message| tr.kinds[m.kind as usize].clone();
    assert!(tr
        .messages
        .iter()
        .any(|m| (m.from, m.to) == (4, 3) && name(m) == "transact"));
    assert!(tr
        .messages
        .iter()
        .any(|m| m.from == 3 && m.to < 3 && name(m) == "transact"));
    assert!(tr
        .messages
        .iter()
        .any(|m| m.to == 3 && m.from < 3 && name(m) == "update3"));
    assert!(tr
        .messages
        .iter()
        .all(|m| (m.from as usize) < 5 && (m.to as usize) < 5));
    // Without relays, no relay lanes.
    let plain = go(&RunSpec::preset("ls-add-follower"));
    assert_eq!(plain.trace.lanes(), plain.trace.servers());
}

#[test]
fn snapshot_transfer_ab_moves_the_leader_only_with_the_transfer() {
    let p = ab_preset("snapshot-transfer").unwrap();
    let with = go(&p.spec_a(1));
    let without = go(&p.spec_b(1));
    // The transfer side is the preset compaction-hours as it stands.
    let preset = go(&RunSpec::preset("compaction-hours"));
    assert_eq!(preset.figures, with.figures);
    let per_hour = |r: &simview::RunResult| r.figure("leader.changes_per_hour").unwrap();
    // Every server compacts several times in three hours on both sides...
    for r in [&with, &without] {
        for s in ["compactions.s1", "compactions.s2", "compactions.s3"] {
            assert!(r.figure(s).unwrap() >= 3.0, "{s}: {:?}", r.figure(s));
        }
    }
    // ...but only a leader that must hand over before compacting moves.
    assert!(per_hour(&with) >= 2.0, "{}", per_hour(&with));
    assert_eq!(without.figure("leader.changes"), Some(0.0));
    let table = rows(&with, &without);
    let row = table
        .iter()
        .find(|r| r.label == "Leader changes per hour")
        .expect("the table has the leader changes of long runs");
    assert_eq!(row.a, Some(per_hour(&with)));
    for r in &table {
        eprintln!("snapshot-transfer: {:30} {:?} {:?}", r.label, r.a, r.b);
    }
}

/// A failover without writes headlines the time to a leader, by its label,
/// and no write time (both runs have none to compare).
#[test]
fn a_preset_without_writes_headlines_a_figure_both_runs_have() {
    let p = ab_preset("election-timer").unwrap();
    let (a, b) = (go(&p.spec_a(1)), go(&p.spec_b(1)));
    let table = rows(&a, &b);
    let head = p.headline_row(&table).expect("both runs elect a leader");
    assert_eq!(head.label, "Time to leader (mean)");
    assert!(head.ratio().unwrap() > 2.0, "{head:?}");
    let writes = table.iter().find(|r| r.name == "txns.count").unwrap();
    assert!(writes.a.unwrap_or(0.0) == 0.0 && writes.b.unwrap_or(0.0) == 0.0);
}

#[test]
fn the_two_seeds_ab_presets_show_their_effects_in_the_table() {
    // write-changed-only: side A is the preset as it stands.
    let p = ab_preset("write-changed-only").unwrap();
    let small = |mut s: RunSpec| {
        s.sets.push(("n".into(), "20".into()));
        s
    };
    let (a, b) = (go(&small(p.spec_a(1))), go(&small(p.spec_b(1))));
    let table = rows(&a, &b);
    let row = |label: &str| {
        table
            .iter()
            .find(|r| r.label == label)
            .unwrap_or_else(|| panic!("no {label} in {table:?}"))
            .clone()
    };
    assert!(row("northd SB txn bytes (mean)").ratio().unwrap() > 100.0);
    assert!(row("SB parse CPU").ratio().unwrap() > 10.0);
    assert!(row("Bring-up latency (mean)").ratio().unwrap() > 1.0);
    assert!(row("Bring-up latency p99").ratio().unwrap() > 1.0);
    assert_eq!(
        a.figure(p.headline).unwrap() / b.figure(p.headline).unwrap(),
        row("northd SB txn bytes (mean)").ratio().unwrap()
    );
    let preset = go(&small(RunSpec::preset("write-changed-only")));
    assert_eq!(preset.figures, a.figures);
    // route-status: more CPU and a later reconnect with the status rows.
    let p = ab_preset("route-status").unwrap();
    let small = |mut s: RunSpec| {
        s.sets.push(("n".into(), "40".into()));
        s
    };
    let (a, b) = (go(&small(p.spec_a(1))), go(&small(p.spec_b(1))));
    let table = rows(&a, &b);
    for label in [
        "SB server CPU (serving + parse)",
        "Reconnect convergence",
        "SB server peak memory (model)",
    ] {
        let r = table.iter().find(|r| r.label == label).unwrap();
        let ratio = r.ratio().unwrap();
        assert!(ratio > 1.2 && ratio < 2.0, "{label}: {ratio}");
    }
    for r in &table {
        eprintln!("route-status: {:34} {:?} {:?}", r.label, r.a, r.b);
    }
}

/// A Southbound run's controllers are one aggregated lane (each update
/// once, with how many controllers got it) and any chassis can be drawn
/// on its own: its bindings with their bring-up, and its downloads. The
/// counts agree with the run's own figures.
#[test]
fn southbound_controllers_are_one_lane_that_any_chassis_expands_from() {
    let mut spec = RunSpec::preset("sb-bringup");
    spec.seed = 1;
    let r = go(&spec);
    let sb = &r.trace.sb;
    assert_eq!(sb.chassis, 60);
    assert_eq!(sb.updates.len() as f64, r.figure("sb.txns").unwrap());
    // northd batches the 100 ports into 11 transactions, each one update.
    let n = sb.updates.len() as u64;
    assert_eq!(n, 11);
    // The leader dies after the writes: every controller got every update.
    assert!(sb.updates.iter().all(|u| u.served == 60));
    assert_eq!(sb.deliveries(), 60 * n);
    assert_eq!(sb.bindings.len(), 100);
    let bringup: Vec<f64> = sb
        .bindings
        .iter()
        .map(|b| (b.seen.unwrap() - b.start) as f64 / 1000.0)
        .collect();
    let mean = bringup.iter().sum::<f64>() / bringup.len() as f64;
    assert!((mean - r.figure("bringup.ms.mean").unwrap()).abs() < 0.01);
    // The storm: the dead leader's controllers downloaded again.
    assert_eq!(
        sb.downloads.len() as f64,
        r.figure("reconnect.clients").unwrap()
    );
    let bytes: u64 = sb.downloads.iter().map(|d| d.bytes).sum();
    assert_eq!(bytes as f64, r.figure("reconnect.bytes").unwrap());
    // Chassis 1 has ports 1 and 61.
    let (own, _) = sb.of_chassis(1);
    assert_eq!(own.len(), 2);
    // Pixel columns over the whole run hold every delivery; a narrower
    // window fewer.
    let cols = sb.deliveries_per_column(0.0, r.trace.end as f64 / 800.0, 801);
    assert_eq!(cols.iter().sum::<u64>(), sb.deliveries());
    let first = sb.updates[5].t as f64;
    let half = sb.deliveries_per_column(first, r.trace.end as f64 / 800.0, 801);
    assert_eq!(half.iter().sum::<u64>(), 60 * (n - 5));
    // Without controllers, nothing.
    assert_eq!(
        go(&RunSpec::preset("ls-add-follower")).trace.sb,
        Default::default()
    );
}

/// An A/B preset over several seeds: each side's mean is the mean of the
/// single runs the page shows one at a time, seed by seed.
#[test]
fn an_ab_preset_over_seeds_gives_the_mean_of_its_single_runs() {
    let p = ab_preset("election-timer").unwrap();
    let mut calls = 0;
    let t = simview::ab::over_seeds(p, 4, 3, &mut |done, total| {
        calls += 1;
        assert_eq!((done, total), (calls, 3));
    })
    .unwrap();
    assert_eq!((t.seeds, t.first_seed, calls), (3, 4, 3));
    assert!(t.violations.is_empty());
    for name in ["leaderless_ms", "sim_time_ms", "txns.total_ms"] {
        let Some(row) = t.row(name) else { continue };
        let mean = |side: &dyn Fn(u64) -> RunSpec| {
            (4..7)
                .map(|s| go(&side(s)).figure(name).unwrap())
                .sum::<f64>()
                / 3.0
        };
        let (a, b) = (mean(&|s| p.spec_a(s)), mean(&|s| p.spec_b(s)));
        assert!(
            (row.a[0] - a).abs() < 1e-6 * a.abs().max(1.0),
            "{name} A {} vs {a}",
            row.a[0]
        );
        assert!(
            (row.b[0] - b).abs() < 1e-6 * b.abs().max(1.0),
            "{name} B {} vs {b}",
            row.b[0]
        );
    }
    assert!(t.row("leaderless_ms").is_some());
}

/// `compare PRESET --profile P --set k=v` and the page run the same
/// sides: the command line's profile replaces each side's, its knobs come
/// after the side's own (so they win), and over several seeds each side's
/// aggregate is that of its single runs.
#[test]
fn a_presets_sides_take_the_command_lines_profile_and_knobs_last() {
    let p = ab_preset("commit-sync").unwrap();
    let (a, b) = p.sides_with(7, Some("v3.4"), &[("n".into(), "12".into())]);
    assert_eq!((a.seed, b.seed), (7, 7));
    assert_eq!(a.profile.as_deref(), Some("v3.4"));
    assert_eq!(b.profile.as_deref(), Some("v3.4"));
    assert_eq!(a.sets.last(), Some(&("n".to_string(), "12".to_string())));
    assert_eq!(&a.sets[..a.sets.len() - 1], &p.spec_a(7).sets[..]);
    assert_eq!(&b.sets[..b.sets.len() - 1], &p.spec_b(7).sets[..]);
    let (x, y) = simview::ab::run_sides(&a, &b, 2, &mut |_, _| {}).unwrap();
    assert_eq!((x.profile.as_str(), x.first_seed, x.seeds), ("v3.4", 7, 2));
    assert_eq!((y.profile.as_str(), y.seeds), ("v3.4", 2));
    let single = |s: &RunSpec, seed| go(&s.with_seed(seed)).figure("txns.total_ms").unwrap();
    let mean = (single(&a, 7) + single(&a, 8)) / 2.0;
    let got = x.stat("txns.total_ms").unwrap().0;
    assert!(
        (got - mean).abs() < 1e-6 * mean.abs().max(1.0),
        "{got} vs {mean}"
    );
    // Without overrides the sides are the preset's own.
    let (a0, b0) = p.sides_with(7, None, &[]);
    assert_eq!((a0, b0), (p.spec_a(7), p.spec_b(7)));
}

/// The one relay of every controller dies during the writes and comes
/// back: each port bound meanwhile is seen by its chassis with that
/// chassis's next download, and the trace says so (the download settles
/// exactly its own chassis's unseen bindings).
#[test]
fn a_stranded_chassis_sees_its_missed_ports_with_its_own_download() {
    let text = raft_sim::preset("sb-bringup")
        .unwrap()
        .replace("at 2500 kill leader", "at 1800 kill r1\nat 2600 restart r1");
    let spec = RunSpec {
        scenario: "custom".into(),
        text: Some(text),
        sets: vec![("relays".into(), "1".into())],
        seed: 1,
        ..RunSpec::default()
    };
    let sb = go(&spec).trace.sb;
    assert_eq!(sb.bindings.len(), 100);
    let mut waited = 0;
    for b in &sb.bindings {
        let seen = b.seen.expect("every port reaches its chassis");
        if seen - b.start > 500_000 {
            waited += 1;
            let d = sb
                .downloads
                .iter()
                .find(|d| d.chassis == b.chassis && d.ready == seen)
                .unwrap_or_else(|| panic!("no download of chassis {} at {seen}", b.chassis));
            assert!(d.t >= b.start, "{d:?} {b:?}");
        }
    }
    assert!(waited > 10 && waited < 100, "{waited}");
}

/// The recorder reads after each step only the server that step could have
/// changed (`Sim::stepped`): the trace must be the one a recorder reading
/// every server after every step makes, on every preset (faults,
/// membership, relays, pauses, the Southbound) and several seeds.
#[test]
fn reading_only_the_stepped_server_records_the_same_trace() {
    use simview::trace::Recorder;
    let mut steps_with_one = 0u64;
    let mut steps = 0u64;
    let mut specs = Vec::new();
    for (name, _) in raft_sim::PRESETS {
        for seed in 1..=3 {
            let mut spec = RunSpec::preset(name);
            spec.seed = seed;
            specs.push((name.to_string(), spec));
        }
    }
    // Pauses: a paused server's point changes when its pause ends, which
    // only its wake-up at that moment shows.
    let ls = RunSpec::preset("ls-add-leader");
    for (server, ms) in [(0, 2_000), (1, 300), (2, 50)] {
        let t = 1_700_000;
        let pause = FaultAction::Pause(Target::Server(server), ms * 1000);
        specs.push((
            format!("ls-add-leader, s{server} paused"),
            ls.fork(t, pause),
        ));
    }
    for (name, spec) in specs {
        let fast = go(&spec).trace;
        // `run`'s loop, reading every server after every step.
        let mut sim = spec.build().expect("build");
        let mut rec = Recorder::new(&mut sim);
        let mut n = 0u64;
        while sim.step() {
            rec.observe_all(&sim);
            n += 1;
            steps_with_one += u64::from(sim.stepped().is_some());
            if n.is_multiple_of(4096) {
                rec.drain(&mut sim);
            }
        }
        steps += n;
        let full = rec.finish(&mut sim);
        assert!(fast == full, "{name} seed {}: the traces differ", spec.seed);
    }
    eprintln!("{steps_with_one} of {steps} steps changed one server only");
    assert!(steps_with_one * 2 > steps);
}

#[test]
fn a_run_carries_its_scenarios_description_for_the_page() {
    let r = go(&RunSpec::preset("leader-kill"));
    assert_eq!(
        r.description,
        "idle leader killed at a random moment; time to a new leader"
    );
    // Every preset says what it shows.
    for name in raft_sim::PRESET_NAMES {
        let text = RunSpec::preset(name).base_text().expect("a preset's text");
        assert!(
            text.lines().any(|l| l.starts_with("description = ")),
            "{name} has no description"
        );
    }
}
