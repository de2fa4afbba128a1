#![cfg(not(target_arch = "wasm32"))]
//! The database at an index reached through a checkpoint of the load's
//! replay ([`ovsdb_log::checkpoint`]) is the database a replay from the
//! start of the file reaches: on every sample and fixture and on damaged
//! copies of them, at every index of the small files and at random ones
//! of the others, with checkpoints close enough together (and thinned
//! often enough) that most jumps start from one.

mod common;

use ovsdb_log::checkpoint::{Checkpoint, Checkpoints, Policy};
use ovsdb_log::replay_pass::{ReplayEnd, ReplayPass};
use ovsdb_log::summary::{Summarizer, SummaryEnd};
use ovsdb_log::{replay, Event, LogScan, Replay, SharedReplay, Upto, Verdict};

/// One walk of `bytes` in chunks of `chunk`, events to `f`.
fn walk(bytes: &[u8], chunk: usize, pass: &mut ReplayPass) -> LogScan {
    let mut s = LogScan::new(pass.options());
    let mut f = |ev: Event<'_>| {
        pass.on_event(&ev);
        Verdict::Keep
    };
    for c in bytes.chunks(chunk.max(1)) {
        s.push(c, &mut f);
    }
    s.finish(&mut f);
    s
}

/// The load's replay of every entry, keeping checkpoints.
fn load(bytes: &[u8], policy: Policy) -> Replay {
    let mut pass = ReplayPass::first(Upto::All).with_checkpoints(policy);
    let scan = walk(bytes, 4096, &mut pass);
    match pass.end(&scan) {
        ReplayEnd::Done(r) => *r,
        ReplayEnd::Again(mut pass) => {
            walk(bytes, 4096, &mut pass);
            pass.finish(None)
        }
    }
}

/// The replay to `index` through the checkpoints, fed from the jump's
/// offset in chunks of `chunk`; `net`: by the records' net change
/// ([`Checkpoints::jump_database`]). Also says how the jump went.
fn jump(bytes: &[u8], ck: &Checkpoints, index: u64, chunk: usize, net: bool) -> (Replay, u64, How) {
    let mut j = if net {
        ck.jump_database(index)
    } else {
        ck.jump(index)
    }
    .expect("the load is over");
    let mut how = if j.by_index() {
        How::Indexed
    } else if j.by_net_change() {
        How::Net
    } else {
        How::Plain
    };
    read_back(bytes, &mut j);
    let from = j.offset();
    loop {
        let tail = &bytes[usize::try_from(j.offset()).unwrap()..];
        for c in tail.chunks(chunk) {
            if j.push(c) {
                break;
            }
        }
        match j.finish() {
            Ok(r) => return (r, from, how),
            Err(plain) => {
                assert!(
                    matches!(how, How::Net | How::Indexed),
                    "only a jump by net change walks again"
                );
                how = How::Again;
                j = *plain;
            }
        }
    }
}

/// A jump through the op index reads its ranges of `bytes` back (none
/// for a jump that walks).
fn read_back(bytes: &[u8], j: &mut ovsdb_log::checkpoint::Jump) {
    for (a, b) in j.reads().to_vec() {
        let end = usize::try_from(b).unwrap().min(bytes.len());
        j.fill(a, &bytes[usize::try_from(a).unwrap()..end]);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    Plain,
    Net,
    /// By net change, which failed: walked again plainly.
    Again,
    /// By net change through the op index (no walk).
    Indexed,
}

thread_local! {
    /// Jumps made plainly, by net change, by net change walked again, and
    /// by net change through the op index.
    static NET: std::cell::RefCell<[usize; 4]> = const { std::cell::RefCell::new([0; 4]) };
}

thread_local! {
    /// With the op index: jumps by net change that walked from a
    /// checkpoint (not from the start of the file, where there is no
    /// database to take the index's changes to).
    static FAR: std::cell::RefCell<usize> = const { std::cell::RefCell::new(0) };
}

fn net_counts() -> [usize; 4] {
    NET.with(|c| *c.borrow())
}

fn state(r: &Replay) -> (Option<String>, u64) {
    (r.db.as_ref().map(|d| d.to_json().to_string()), r.applied)
}

/// A small seeded generator (xorshift), for the indexes tried.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

const CLOSE: Policy = Policy {
    every_entries: 3,
    every_bytes: 2048,
    max: 8,
    budget_bytes: u64::MAX,
    op_index: false,
};

fn check_file(name: &str, bytes: &[u8], rng: &mut Rng, policy: Policy) -> (usize, usize) {
    let loaded = load(bytes, policy);
    let ck = loaded
        .checkpoints
        .as_deref()
        .expect("asked for checkpoints");
    // The load itself is the replay of every entry.
    assert!(
        state(&loaded) == state(&replay(bytes, Upto::All)),
        "{name}: the load's replay"
    );
    check_jumps(name, bytes, ck, rng, policy, 24)
}

/// Jumps through `ck` (the checkpoints of some walk of `bytes` made with
/// `policy`) to every index of a small file and to random ones of a big
/// one reach the database a replay from the start reaches. Returns the
/// jumps made and how many started from a checkpoint.
fn check_jumps(
    name: &str,
    bytes: &[u8],
    ck: &Checkpoints,
    rng: &mut Rng,
    policy: Policy,
    random: usize,
) -> (usize, usize) {
    assert!(ck.len() <= policy.max, "{name}: {} checkpoints", ck.len());
    assert!(
        ck.len() <= 1 || ck.held_bytes() <= policy.budget_bytes,
        "{name}: {} checkpoints hold {} bytes",
        ck.len(),
        ck.held_bytes()
    );
    let applied = replay(bytes, Upto::All).applied;
    let top = applied + 2;
    let indexes: Vec<u64> = if top <= 40 {
        (0..=top).collect()
    } else {
        let mut v: Vec<u64> = (0..random).map(|_| rng.below(top + 1)).collect();
        v.extend([0, 1, top, applied]);
        v.extend(ck.list().iter().map(|c| c.applied));
        v
    };
    let mut from_checkpoint = 0;
    for &i in &indexes {
        let chunk = [1, 97, 4096][rng.below(3) as usize];
        let want = replay(bytes, Upto::Index(i));
        let w = state(&want);
        for net in [false, true] {
            let (got, from, how) = jump(bytes, ck, i, chunk, net);
            if from > 0 && !net {
                from_checkpoint += 1;
            }
            NET.with(|c| c.borrow_mut()[how as usize] += 1);
            if how == How::Net && policy.op_index && from > 0 {
                FAR.with(|c| *c.borrow_mut() += 1);
            }
            let g = state(&got);
            assert!(
                g == w,
                "{name}: index {i} from byte {from} in chunks of {chunk} ({how:?}): applied {} vs {}, database {:?} vs {:?} bytes",
                g.1,
                w.1,
                g.0.as_ref().map(String::len),
                w.0.as_ref().map(String::len),
            );
            if how != How::Plain {
                // Rows put in place keep the reference counts a replay
                // keeps.
                let integrity = |r: &Replay| {
                    r.db.as_ref()
                        .map(|d| d.core().check_integrity().map_err(|e| e.to_string()))
                };
                assert_eq!(
                    integrity(&got),
                    integrity(&want),
                    "{name}: index {i}: integrity"
                );
                assert_eq!(
                    got.error.as_ref().map(ToString::to_string),
                    want.error.as_ref().map(ToString::to_string),
                    "{name}: index {i}: the error"
                );
            }
        }
    }
    (indexes.len(), from_checkpoint)
}

#[test]
fn jumps_reach_the_database_a_replay_from_the_start_reaches() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut jumps, mut resumed) = (0, 0);
    for (name, bytes) in common::distinct_inputs() {
        let (n, r) = check_file(&name, &bytes, &mut rng, CLOSE);
        jumps += n;
        resumed += r;
    }
    // Most jumps start from a checkpoint, not from the start of the file.
    assert!(resumed * 2 > jumps, "{resumed} of {jumps} jumps resumed");
    // Jumps for the database alone go by net change (the others were
    // made plainly, each beside one of those): files written by
    // ovsdb-server name every row a transaction changes.
    let [plain, net, again, indexed] = net_counts();
    assert_eq!(indexed, 0, "no op index was asked for");
    let asked = (plain + net + again) / 2;
    eprintln!("{net} by net change, {again} walked again, of {asked} asked");
    assert!(
        net * 10 > asked * 9 && again == 0,
        "{net} by net change, {again} walked again, of {asked} asked"
    );
}

/// With the op index ([`Policy::op_index`]), jumps by net change read
/// back only the records holding rows alive at their index, and reach
/// the database a replay from the start reaches, with its reference
/// counts, on every sample, fixture and damaged copy.
#[test]
fn jumps_through_the_op_index_reach_the_replays_database() {
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    NET.with(|c| *c.borrow_mut() = [0; 4]);
    for (name, bytes) in common::distinct_inputs() {
        check_file(
            &name,
            &bytes,
            &mut rng,
            Policy {
                op_index: true,
                ..CLOSE
            },
        );
    }
    let [plain, net, again, indexed] = net_counts();
    let asked = (plain + net + again + indexed) / 2;
    eprintln!("{indexed} through the index, {net} walked by net change, {again} walked again, of {asked} asked");
    // The records ovsdb-server writes are plain: every jump by net change
    // from a checkpoint goes through the index (those from the start of
    // a file walk: there is no database yet), and none has to walk again.
    let far = FAR.with(|c| *c.borrow());
    eprintln!("{far} walked by net change from a checkpoint");
    assert!(
        indexed * 10 > asked * 7 && again == 0 && far == 0,
        "{indexed} through the index, {net} walked by net change ({far} from a checkpoint), {again} walked again, of {asked} asked"
    );
}

/// Checkpoints far apart (one per 400 entries): most steps forward land
/// in the interval of the checkpoint they started from.
const SPARSE: Policy = Policy {
    every_entries: 400,
    every_bytes: u64::MAX,
    max: 8,
    budget_bytes: u64::MAX,
    op_index: false,
};

/// Stepping forward from where the last jump landed
/// ([`Checkpoint::after`], [`Checkpoints::jump_database_from`]), as the
/// explorer's `]` key does, reaches the database a replay from the start
/// reaches, and reads only the records after the landing.
#[test]
fn steps_forward_from_a_landing_reach_the_replays_database() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let (mut steps, mut from_landing) = (0, 0);
    let indexed = Policy {
        op_index: true,
        ..SPARSE
    };
    let inputs = common::distinct_inputs();
    for (name, bytes, policy) in inputs
        .iter()
        .flat_map(|(n, b)| [(n, b, SPARSE), (n, b, indexed)])
    {
        let loaded = load(bytes, policy);
        let ck = loaded.checkpoints.as_deref().expect("asked for them");
        let top = loaded.applied + 1;
        let mut at = rng.below(top / 2 + 1);
        let mut landing: Option<Checkpoint> = None;
        for _ in 0..6 {
            let chunk = [1, 97, 4096][rng.below(3) as usize];
            let mut j = ck
                .jump_database_from(at, landing.as_ref())
                .expect("the load is over");
            read_back(bytes, &mut j);
            let from = j.offset();
            let resumed = landing.as_ref().is_some_and(|l| l.at.offset == from);
            let got = loop {
                let tail = &bytes[usize::try_from(j.offset()).unwrap()..];
                for c in tail.chunks(chunk) {
                    if j.push(c) {
                        break;
                    }
                }
                match j.finish() {
                    Ok(r) => break r,
                    Err(plain) => j = *plain,
                }
            };
            let want = replay(bytes, Upto::Index(at));
            assert!(
                state(&got) == state(&want),
                "{name}: index {at} from byte {from} (from the landing: {resumed}, {policy:?})"
            );
            assert_eq!(
                got.db.as_ref().map(|d| d.core().check_integrity().is_ok()),
                want.db.as_ref().map(|d| d.core().check_integrity().is_ok()),
                "{name}: index {at}: integrity"
            );
            steps += 1;
            from_landing += usize::from(resumed);
            landing = Checkpoint::after(&got);
            if let Some(l) = &landing {
                assert_eq!(l.applied, got.applied, "{name}");
            }
            at += 1 + rng.below(3);
        }
    }
    eprintln!("{from_landing} of {steps} steps resumed where the last one landed");
    // Most steps stay inside one checkpoint interval and start at the
    // landing, not at the checkpoint.
    assert!(from_landing * 3 > steps, "{from_landing} of {steps}");
}

/// The summary's one walk (what `inspect` and the timeline's load make)
/// keeping checkpoints, the files of a folder one after the other sharing
/// their replay as a cluster's files do. None: the walk kept none.
fn summary_walk(
    bytes: &[u8],
    policy: Policy,
    shared: SharedReplay,
) -> (Option<Box<Checkpoints>>, SharedReplay) {
    let mut sum = Summarizer::new(true).with_checkpoints(policy);
    sum.share(shared);
    let mut s = LogScan::new(sum.options());
    for c in bytes.chunks(4096) {
        s.push(c, &mut |ev| sum.on_event(&ev));
    }
    s.finish(&mut |ev| sum.on_event(&ev));
    let (end, shared, ck) = sum.finish_all(&s);
    if matches!(end, SummaryEnd::Again(_)) {
        assert!(ck.is_none(), "a second walk makes its own");
    }
    (ck, shared)
}

#[test]
fn the_summary_walk_keeps_checkpoints_that_jumps_resume_from() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut jumps, mut resumed, mut kept, mut shared_kept) = (0, 0, 0, 0);
    let mut by_dir: std::collections::BTreeMap<String, Vec<(String, Vec<u8>)>> = Default::default();
    for (name, bytes) in common::distinct_inputs() {
        let dir = std::path::Path::new(&name)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        by_dir.entry(dir).or_default().push((name, bytes));
    }
    for files in by_dir.values() {
        let mut shared = SharedReplay::default();
        for (i, (name, bytes)) in files.iter().enumerate() {
            let (ck, sh) = summary_walk(bytes, CLOSE, shared);
            shared = sh;
            let Some(ck) = ck else {
                continue;
            };
            let (n, r) = check_jumps(name, bytes, &ck, &mut rng, CLOSE, 6);
            jumps += n;
            resumed += r;
            kept += 1;
            if i > 0 && !ck.is_empty() {
                shared_kept += 1;
            }
        }
    }
    assert!(kept >= 20, "{kept} files kept checkpoints");
    // Files after the first of a cluster take the sizes of the common
    // prefix from the first's replay, and its checkpoints with them.
    assert!(
        shared_kept >= 5,
        "{shared_kept} later files kept checkpoints"
    );
    assert!(resumed * 2 > jumps, "{resumed} of {jumps} jumps resumed");
}

#[test]
fn jumps_on_damaged_copies_stop_where_the_replay_stops() {
    let mut rng = Rng(7);
    // Every other copy loaded with the op index: a jump through it must
    // stop where the replay stops too.
    let indexed = Policy {
        op_index: true,
        ..CLOSE
    };
    let mut k = 0;
    for (scen, stem, bytes) in common::all_samples() {
        for (how, b) in common::damaged_copies(&bytes) {
            let policy = if k % 2 == 0 { CLOSE } else { indexed };
            k += 1;
            check_file(&format!("{scen}/{stem} {how}"), &b, &mut rng, policy);
        }
    }
}

#[test]
fn thinning_keeps_the_count_under_the_budget_and_the_start() {
    let bytes = common::sample("leader-failover", "s1");
    let loaded = load(
        &bytes,
        Policy {
            every_entries: 1,
            every_bytes: u64::MAX,
            max: 4,
            budget_bytes: u64::MAX,
            op_index: false,
        },
    );
    let ck = loaded.checkpoints.as_deref().unwrap();
    assert!(ck.len() <= 4 && !ck.is_empty(), "{}", ck.len());
    let list = ck.list();
    assert_eq!(list[0].at.offset, 0);
    assert!(list[0].db().is_none());
    // In file order, each with the database after the records before it.
    for w in list.windows(2) {
        assert!(w[0].at.record < w[1].at.record);
        assert!(w[0].applied <= w[1].applied);
    }
    for c in &list[1..] {
        let want = replay(&bytes, Upto::Index(c.applied));
        assert_eq!(
            c.db().map(|d| d.to_json().to_string()),
            want.db.as_ref().map(|d| d.to_json().to_string())
        );
    }
}

/// The three servers' files of a small generated Southbound cluster, whose
/// entries add and remove logical flows and claim port bindings.
fn southbound_files() -> Vec<Vec<u8>> {
    let shape = ovsdb_log::synth_sb::SbShape {
        chassis: 4,
        datapaths: 6,
        ports_per_datapath: 4,
        flows_per_datapath: 20,
        entries: 300,
        ..Default::default()
    };
    let schema =
        std::fs::read(common::repo_root().join("static/samples/schemas/ovn-sb.ovsschema")).unwrap();
    let schema = ovsdb::json::parse(&schema).unwrap();
    let mut files: Vec<Vec<u8>> = Vec::new();
    ovsdb_log::synth_sb::southbound(&shape, &schema, &mut |i, b| {
        if files.len() <= i {
            files.resize(i + 1, Vec::new());
        }
        files[i].extend_from_slice(b)
    });
    files
}

#[test]
fn a_memory_budget_thins_the_checkpoints_of_a_log_that_changes_its_rows() {
    // The Southbound generator's entries add and remove logical flows and
    // claim port bindings: every checkpoint holds rows the database
    // changed or deleted since.
    let files = southbound_files();
    let bytes = &files[0][..];
    let free = Policy {
        every_entries: 10,
        every_bytes: u64::MAX,
        max: 1000,
        budget_bytes: u64::MAX,
        op_index: false,
    };
    let all = load(bytes, free);
    let all = all.checkpoints.as_deref().unwrap();
    assert!(all.len() >= 25, "{}", all.len());
    let held = all.held_bytes();
    assert!(held > 0);
    let tight = Policy {
        budget_bytes: held / 4,
        op_index: false,
        ..free
    };
    let thinned = load(bytes, tight);
    let ck = thinned.checkpoints.as_deref().unwrap();
    assert!(ck.len() < all.len() / 2, "{} of {}", ck.len(), all.len());
    assert!(ck.held_bytes() <= held / 4 || ck.len() == 1);
    // The jumps are still right.
    check_file("synthetic Southbound", bytes, &mut Rng(3), tight);
}

#[test]
fn a_later_file_of_a_cluster_does_not_pay_for_the_checkpoints_it_shares() {
    // Three servers' Southbound files: the second and third take the first's
    // checkpoints at the indexes they share. Those copies hold the first
    // store's rows, so under one memory budget the later files must keep as
    // many checkpoints as the first rather than thin further.
    let files = southbound_files();
    assert_eq!(files.len(), 3);
    let free = Policy {
        every_entries: 10,
        every_bytes: u64::MAX,
        max: 1000,
        budget_bytes: u64::MAX,
        op_index: false,
    };
    let (first, _) = summary_walk(&files[0], free, SharedReplay::default());
    let held = first
        .expect("the first file keeps checkpoints")
        .held_bytes();
    let tight = Policy {
        budget_bytes: held / 3,
        op_index: false,
        ..free
    };
    let mut shared = SharedReplay::default();
    let mut counts = Vec::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (i, bytes) in files.iter().enumerate() {
        let (ck, sh) = summary_walk(bytes, tight, shared);
        shared = sh;
        let ck = ck.expect("every file keeps checkpoints");
        assert!(ck.held_bytes() <= held / 3 || ck.len() == 1, "file {i}");
        check_jumps(&format!("sb s{}", i + 1), bytes, &ck, &mut rng, tight, 8);
        counts.push(ck.len());
    }
    assert!(counts[0] > 3, "{counts:?}");
    assert!(
        counts[1] >= counts[0] && counts[2] >= counts[0],
        "checkpoints per file {counts:?}"
    );
}

/// A record the net change does not follow is noted as such in the op
/// index, and a jump across it walks (by net change, which then replays
/// that record), still reaching the replay's database; jumps that do not
/// cross it go through the index. Here the record names its table with an
/// escape (`"\u0054"` for `T`): a replay reads it, the row reader does not.
#[test]
fn a_jump_across_a_record_the_index_does_not_follow_walks() {
    use ovsdb_log::framing::{write_record, MAGIC_STANDALONE};
    let uuid = |k: u64| format!("{:08x}-0000-4000-8000-{:012x}", k + 1, k);
    let mut file = Vec::new();
    write_record(
        &mut file,
        MAGIC_STANDALONE,
        br#"{"name":"D","version":"1.0.0","tables":{"T":{"columns":{"n":{"type":"integer"}},"isRoot":true}}}"#,
    );
    for k in 0..24u64 {
        let body = if k == 12 {
            format!(r#"{{"\u0054":{{"{}":{{"n":99}}}}}}"#, uuid(0))
        } else {
            format!(r#"{{"T":{{"{}":{{"n":{k}}}}}}}"#, uuid(k))
        };
        write_record(&mut file, MAGIC_STANDALONE, body.as_bytes());
    }
    let policy = Policy {
        every_entries: 4,
        every_bytes: u64::MAX,
        max: 16,
        budget_bytes: u64::MAX,
        op_index: true,
    };
    let loaded = load(&file, policy);
    assert_eq!(loaded.applied, 24, "{:?}", loaded.error);
    let ck = loaded.checkpoints.as_deref().expect("asked for them");
    let (mut walked, mut indexed) = (0, 0);
    for index in 0..=24 {
        let (got, from, how) = jump(&file, ck, index, 4096, true);
        assert!(
            state(&got) == state(&replay(&file, Upto::Index(index))),
            "index {index} from byte {from} ({how:?})"
        );
        // The nearest checkpoint at or before `index`: is record 13 (the
        // 12th txn, after the schema) between it and `index`?
        let cp = ck.nearest(index);
        let crosses = cp.applied < 13 && index >= 13;
        match how {
            How::Indexed => {
                assert!(!crosses, "index {index}: through the index across it");
                indexed += 1;
            }
            How::Net if from > 0 => {
                assert!(crosses, "index {index}: walked without crossing it");
                walked += 1;
            }
            _ => {}
        }
    }
    assert!(
        walked > 0 && indexed > 10,
        "{walked} walked, {indexed} through the index"
    );
}

/// A row deleted and inserted again under the same UUID, more than once
/// between two checkpoints, and rows a snapshot-like record (one the index
/// does not follow) brought in: the op index's chains of operations
/// (`IndexedOp::prev`) end at each delete, and the fold keeps only a row's
/// last chain. Every index, from checkpoints 1 to 5 entries apart, reaches
/// the replay's database and reference counts.
#[test]
fn a_row_deleted_and_inserted_again_lands_as_its_last_insert() {
    use ovsdb_log::framing::{write_record, MAGIC_STANDALONE};
    let uuid = |k: u64| format!("{:08x}-0000-4000-8000-{:012x}", k + 1, k);
    let (x, y, u) = (uuid(100), uuid(101), uuid(200));
    let mut file = Vec::new();
    write_record(
        &mut file,
        MAGIC_STANDALONE,
        br#"{"name":"D","version":"1.0.0","tables":{"T":{"columns":{"n":{"type":"integer"},"r":{"type":{"key":{"type":"uuid","refTable":"U"},"min":0,"max":1}}},"isRoot":true},"U":{"columns":{"m":{"type":"integer"}}}}}"#,
    );
    // X's life: inserted, changed, deleted, inserted again (twice), with
    // a reference to U that Y keeps alive throughout.
    let bodies = [
        format!(r#"{{"U":{{"{u}":{{"m":1}}}},"T":{{"{y}":{{"n":-1,"r":["uuid","{u}"]}}}}}}"#),
        // Escaped: a record the index does not follow.
        format!(r#"{{"\u0054":{{"{x}":{{"n":0,"r":["uuid","{u}"]}}}}}}"#),
        format!(r#"{{"T":{{"{x}":{{"n":1}}}}}}"#),
        format!(r#"{{"T":{{"{x}":null}}}}"#),
        format!(r#"{{"T":{{"{x}":{{"n":3,"r":["uuid","{u}"]}}}}}}"#),
        format!(r#"{{"T":{{"{x}":{{"n":4}},"{}":{{"n":44}}}}}}"#, uuid(4)),
        format!(r#"{{"T":{{"{x}":null}}}}"#),
        format!(r#"{{"T":{{"{x}":{{"n":6}}}}}}"#),
        format!(r#"{{"T":{{"{x}":null,"{}":null}}}}"#, uuid(4)),
        format!(r#"{{"T":{{"{x}":{{"n":8,"r":["uuid","{u}"]}}}}}}"#),
        format!(r#"{{"U":{{"{u}":{{"m":9}}}}}}"#),
        format!(r#"{{"T":{{"{x}":{{"n":10,"r":["set",[]]}}}}}}"#),
        format!(r#"{{"T":{{"{x}":null}}}}"#),
        format!(r#"{{"T":{{"{x}":{{"n":12}}}}}}"#),
    ];
    for body in &bodies {
        write_record(&mut file, MAGIC_STANDALONE, body.as_bytes());
    }
    assert_eq!(replay(&file, Upto::All).applied, bodies.len() as u64);
    NET.with(|c| *c.borrow_mut() = [0; 4]);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for every in 1..=5 {
        let policy = Policy {
            every_entries: every,
            every_bytes: u64::MAX,
            max: 64,
            budget_bytes: u64::MAX,
            op_index: true,
        };
        check_file(&format!("every {every}"), &file, &mut rng, policy);
    }
    let [_, _, again, indexed] = net_counts();
    assert!(
        indexed > 40 && again == 0,
        "{indexed} through the index, {again} walked again"
    );
}

/// A jump through the op index shows what its database holds before
/// landing ([`ovsdb_log::checkpoint::Jump::preview`]): each table's rows
/// in UUID order and its row count, and a few rows built on their own
/// from the ranges they need. It may then step forward before landing
/// ([`Checkpoints::step_jump`]: the records in between taken into its net
/// change) and show the preview there; the rest is read and built a
/// slice at a time, and the landing is then the replay's database. Every
/// sample, fixture and damaged copy, and generated Southbound files whose
/// flows come and go.
#[test]
fn a_jumps_preview_shows_what_its_landing_holds() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let policy = Policy {
        op_index: true,
        ..CLOSE
    };
    let mut inputs = common::distinct_inputs();
    inputs.extend(
        southbound_files()
            .into_iter()
            .enumerate()
            .map(|(k, b)| (format!("southbound s{k}"), b)),
    );
    let (mut previews, mut rows_built, mut steps) = (0, 0, 0);
    for (name, bytes) in inputs {
        let loaded = load(&bytes, policy);
        let ck = loaded
            .checkpoints
            .as_deref()
            .expect("asked for checkpoints");
        let top = loaded.applied + 1;
        for _ in 0..12 {
            let mut i = rng.below(top + 1);
            let mut j = ck.jump_database(i).expect("the load is over");
            if !j.by_index() {
                continue;
            }
            let mut want = replay(&bytes, Upto::Index(i));
            rows_built += check_preview(&name, &bytes, &mut j, i, &want, &mut rng);
            previews += 1;
            // Steps forward before landing, each shown by its preview.
            for _ in 0..rng.below(4) {
                let to = i + 1 + rng.below(3);
                match ck.step_jump(Box::new(j), to) {
                    Ok(moved) => {
                        j = *moved;
                        i = to;
                        steps += 1;
                    }
                    Err(back) => {
                        j = *back;
                        break;
                    }
                }
                want = replay(&bytes, Upto::Index(i));
                rows_built += check_preview(&name, &bytes, &mut j, i, &want, &mut rng);
            }
            // The rest, then the landing built three rows at a time.
            read_back(&bytes, &mut j);
            assert!(j.reads().is_empty(), "{name}: every range is in");
            while !j.build(3) {}
            let Ok(got) = j.finish() else {
                panic!("{name}: index {i}: the landing failed");
            };
            assert!(
                state(&got) == state(&want),
                "{name}: index {i}: the landing"
            );
            assert_eq!(
                got.db
                    .as_ref()
                    .map(|d| d.core().check_integrity().map_err(|e| e.to_string())),
                want.db
                    .as_ref()
                    .map(|d| d.core().check_integrity().map_err(|e| e.to_string())),
                "{name}: index {i}: integrity"
            );
        }
    }
    eprintln!(
        "{previews} previews, {steps} steps before landing, {rows_built} rows built on their own"
    );
    assert!(
        previews > 100 && steps > 100 && rows_built > 300,
        "{previews} previews, {steps} steps, {rows_built} rows"
    );
}

/// The preview of `j` (a jump to index `i`) against `want`, the replay's
/// database there: every table's rows and counts, and a window of the
/// largest table's rows (with a UUID it does not have) read and built on
/// their own. Returns the rows built.
fn check_preview(
    name: &str,
    bytes: &[u8],
    j: &mut ovsdb_log::checkpoint::Jump,
    i: u64,
    want: &Replay,
    rng: &mut Rng,
) -> usize {
    let db = want
        .db
        .as_ref()
        .expect("a database at a checkpoint's index");
    let count = |t: &str| db.core().table(t).map_or(0, |r| r.len());
    let counts: Vec<usize> = db.schema.tables.iter().map(|t| count(&t.name)).collect();
    for ts in &db.schema.tables {
        let p = j.preview(&ts.name).expect("a jump through the index");
        let keys: Vec<ovsdb::Uuid> = db
            .core()
            .table(&ts.name)
            .map(|t| t.rows.keys().copied().collect())
            .unwrap_or_default();
        assert_eq!(p.uuids, keys, "{name}: index {i}: the rows of {}", ts.name);
        assert_eq!(p.counts, counts, "{name}: index {i}: the row counts");
    }
    let Some(ts) = db.schema.tables.iter().max_by_key(|t| count(&t.name)) else {
        return 0;
    };
    let p = j.preview(&ts.name).unwrap();
    let start = rng.below(p.uuids.len() as u64 + 1) as usize;
    let mut window: Vec<ovsdb::Uuid> = p.uuids.iter().skip(start).take(7).copied().collect();
    window.push(ovsdb::Uuid::from_u128(0x0bad));
    for (a, b) in j.preview_reads(&ts.name, &window) {
        j.fill(a, &bytes[a as usize..(b as usize).min(bytes.len())]);
    }
    let rows = j
        .preview_rows(&ts.name, &window)
        .expect("its ranges are in");
    let mut built = 0;
    for (u, r) in window.iter().zip(&rows) {
        let w = db.core().table(&ts.name).and_then(|t| t.rows.get(u));
        assert_eq!(
            r.as_ref().map(|r| &r.columns),
            w.map(|r| &r.columns),
            "{name}: index {i}: row {u} of {}",
            ts.name
        );
        built += usize::from(r.is_some());
    }
    built
}
