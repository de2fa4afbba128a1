//! Weak references to rows deleted in a transaction, against the real
//! ovsdb-server 3.1 (Debian package, started on a unix socket in a temp
//! dir): random transactions insert, modify and delete rows that weakly
//! reference each other (sets, a map with weak values and optional
//! columns) and drop strong references so that children are collected.
//! ovsdb-server keeps a (dangling) set or map reference in a row of the
//! transaction that it assesses before the deleted row (hash order of the
//! UUID's first word), and always re-checks optional columns; after every
//! transaction the model must hold exactly the real server's rows.
//!
//! Without the ordered assessment (the model before it kept the reference
//! in every modified row and treated optional columns like sets) seed 1
//! diverges at step 12 (an optional column) and, with the optional
//! columns made sets, at step 40 (a set column).
//!
//! The test runs seeds 1..=6; the ignored `survey` runs any seeds
//! (`WEAK_REFS_SEEDS=1-80 cargo test -p ovsdb-server --test
//! weak_refs_real_server -- --ignored --nocapture`) and prints each
//! divergence with the rows only one side has. All 80 seeds match over
//! 150 steps. Seeds 15 (step 14), 38 (step 59), 55 (step 103) and 74
//! (step 41) used to diverge once: each transaction starts with an
//! `update` of an A row's `s` to the empty set it already holds. OVS
//! 3.1.0 leaves such a row out of the transaction (ovsdb/execution.c:492,
//! `update_row_cb` calls `ovsdb_txn_row_modify` only if the columns
//! differ), so table A joins the transaction after the table of the next
//! operation (ovsdb/transaction.c:1422, `ovsdb_txn_create_txn_table`
//! appends to `txn_tables`) and `for_each_txn_row` (transaction.c:1617)
//! assesses that table's rows first: a B row (seeds 15, 55, 74) keeps its
//! reference to an A row deleted later in the transaction, and in seed 38
//! an A row, assessed after the deleted B row, drops its map value. The
//! model had made A the first table.
//!
//! Known gap beyond these 80: seeds 81..=400 diverge at 143 (step 115),
//! 176 (9) and 273 (28), each on an A row's reference to an A row deleted
//! in the transaction (161, step 39, also diverged until the model
//! committed through `ovsdb::Database`). ovsdb-server adds a deleted row's
//! referrers to the transaction in the order of the row's `dst_refs` hmap,
//! which depends on its history; the model uses table/UUID order. Seed 176 is
//! that case, reproduced by the ignored
//! `referrers_join_in_the_order_of_the_deleted_rows_dst_refs` (OVS source
//! lines there); the other three look alike but are not worked through.
#![cfg(not(target_arch = "wasm32"))]

mod common;
#[path = "common/net.rs"]
mod net;

use net::{ensure_packages, Conn, Server, TempDir};
use ovsdb::json::{parse, Json, Object};
use ovsdb_server::rng::SplitMix64;
use ovsdb_server::{Server as Model, ServerOptions};
use std::collections::BTreeSet;

const SCHEMA: &str = r#"{"name":"W","version":"1.0.0","tables":{
 "A":{"isRoot":true,"columns":{"n":{"type":"integer"},
   "w":{"type":{"key":{"type":"uuid","refTable":"A","refType":"weak"},"min":0,"max":"unlimited"}},
   "m":{"type":{"key":"string","value":{"type":"uuid","refTable":"B","refType":"weak"},"min":0,"max":"unlimited"}},
   "o":{"type":{"key":{"type":"uuid","refTable":"B","refType":"weak"},"min":0,"max":1}},
   "s":{"type":{"key":{"type":"uuid","refTable":"C"},"min":0,"max":"unlimited"}}}},
 "B":{"isRoot":true,"columns":{"n":{"type":"integer"},
   "w":{"type":{"key":{"type":"uuid","refTable":"A","refType":"weak"},"min":0,"max":"unlimited"}}}},
 "C":{"columns":{"n":{"type":"integer"},
   "w":{"type":{"key":{"type":"uuid","refTable":"A","refType":"weak"},"min":0,"max":1}},
   "v":{"type":{"key":{"type":"uuid","refTable":"B","refType":"weak"},"min":0,"max":"unlimited"}}}}}}"#;

const TABLES: [&str; 3] = ["A", "B", "C"];

/// Up to `n` distinct members of `live`.
fn pick(rng: &mut SplitMix64, live: &[String], n: u64) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for _ in 0..n {
        if !live.is_empty() {
            let x = live[(rng.next_u64() % live.len() as u64) as usize].clone();
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    out
}

/// Fewer than `below` distinct members of `live`.
fn pick_some(rng: &mut SplitMix64, live: &[String], below: u64) -> Vec<String> {
    let n = rng.next_u64() % below;
    pick(rng, live, n)
}

fn set(v: &[String]) -> String {
    let a: Vec<String> = v.iter().map(|x| format!(r#"["uuid","{x}"]"#)).collect();
    format!(r#"["set",[{}]]"#, a.join(","))
}

/// A fresh UUID whose first word is small, so that rows share hash
/// buckets and the order ovsdb-server assesses them in varies.
fn small_uuid(rng: &mut SplitMix64) -> String {
    let r = rng.next_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        r % 8,
        (r >> 8) & 0xffff,
        (r >> 24) & 0xfff,
        (r >> 36) & 0xfff,
        rng.next_u64() & 0xffff_ffff_ffff
    )
}

/// A transaction that modifies, mutates and deletes rows of `live` (per
/// table), in random order, so that referrers of deleted rows are often
/// part of the same transaction.
fn random_txn(rng: &mut SplitMix64, live: &[Vec<String>; 3]) -> String {
    let [a, b, _] = live;
    let mut ops: Vec<String> = Vec::new();
    let by_uuid = |u: &str| format!(r#"[["_uuid","==",["uuid","{u}"]]]"#);
    for _ in 0..2 + rng.next_u64() % 6 {
        let roll = rng.next_u64() % 100;
        let k = rng.next_u64() % 100;
        let op = match roll {
            0..=19 => {
                let u = small_uuid(rng);
                let cu = small_uuid(rng);
                let w = pick_some(rng, a, 3);
                let m: Vec<String> = pick_some(rng, b, 3)
                    .iter()
                    .enumerate()
                    .map(|(i, x)| format!(r#"["k{i}",["uuid","{x}"]]"#))
                    .collect();
                let o = pick_some(rng, b, 2);
                let cw = pick_some(rng, a, 2);
                let cv = pick_some(rng, b, 3);
                format!(
                    r#"{{"op":"insert","table":"A","uuid":"{u}","row":{{"n":{k},"w":{},"m":["map",[{}]],"o":{},"s":["set",[["uuid","{cu}"]]]}}}},
                       {{"op":"insert","table":"C","uuid":"{cu}","row":{{"n":{k},"w":{},"v":{}}}}}"#,
                    set(&w),
                    m.join(","),
                    set(&o),
                    set(&cw),
                    set(&cv)
                )
            }
            20..=29 => {
                let u = small_uuid(rng);
                let w = pick_some(rng, a, 3);
                format!(
                    r#"{{"op":"insert","table":"B","uuid":"{u}","row":{{"n":{k},"w":{}}}}}"#,
                    set(&w)
                )
            }
            // Modify a referrer without touching its references.
            30..=54 => {
                let t = (rng.next_u64() % 3) as usize;
                let Some(u) = pick(rng, &live[t], 1).pop() else {
                    continue;
                };
                if t == 2 {
                    format!(
                        r#"{{"op":"mutate","table":"C","where":{},"mutations":[["n","+=",1]]}}"#,
                        by_uuid(&u)
                    )
                } else {
                    format!(
                        r#"{{"op":"update","table":"{}","where":{},"row":{{"n":{k}}}}}"#,
                        TABLES[t],
                        by_uuid(&u)
                    )
                }
            }
            // Add a reference (checked whatever the order).
            55..=62 => {
                let (Some(u), Some(x)) = (pick(rng, a, 1).pop(), pick(rng, a, 1).pop()) else {
                    continue;
                };
                format!(
                    r#"{{"op":"mutate","table":"A","where":{},"mutations":[["w","insert",{}]]}}"#,
                    by_uuid(&u),
                    set(&[x])
                )
            }
            // Drop an A's children: they are collected.
            63..=69 => {
                let Some(u) = pick(rng, a, 1).pop() else {
                    continue;
                };
                format!(
                    r#"{{"op":"update","table":"A","where":{},"row":{{"s":["set",[]]}}}}"#,
                    by_uuid(&u)
                )
            }
            // A no-op modification.
            70..=74 => {
                let Some(u) = pick(rng, b, 1).pop() else {
                    continue;
                };
                format!(
                    r#"{{"op":"mutate","table":"B","where":{},"mutations":[["n","+=",0]]}}"#,
                    by_uuid(&u)
                )
            }
            _ => {
                let t = (rng.next_u64() % 2) as usize;
                let Some(u) = pick(rng, &live[t], 1).pop() else {
                    continue;
                };
                format!(
                    r#"{{"op":"delete","table":"{}","where":{}}}"#,
                    TABLES[t],
                    by_uuid(&u)
                )
            }
        };
        ops.push(op);
    }
    if ops.is_empty() {
        ops.push(r#"{"op":"comment","comment":"nothing to do"}"#.into());
    }
    format!(r#"["W",{}]"#, ops.join(","))
}

fn select_all() -> Json {
    let ops: Vec<String> = TABLES
        .iter()
        .map(|t| format!(r#"{{"op":"select","table":"{t}","where":[]}}"#))
        .collect();
    parse(format!(r#"["W",{}]"#, ops.join(",")).as_bytes()).unwrap()
}

/// Per table: its rows (without `_version`), sorted.
fn rows_of(result: &Json) -> [Vec<String>; 3] {
    let mut out: [Vec<String>; 3] = Default::default();
    for (i, r) in result.as_array().unwrap().iter().enumerate().take(3) {
        for row in r.get("rows").unwrap().as_array().unwrap() {
            let mut o = Object::new();
            for (k, v) in row.as_object().unwrap().iter() {
                if k != "_version" {
                    o.insert(k, v.clone());
                }
            }
            out[i].push(Json::Object(o).sorted_recursive().to_string_compact());
        }
        out[i].sort();
    }
    out
}

fn uuids_in(row: &str) -> Vec<String> {
    row.match_indices(r#"["uuid",""#)
        .filter_map(|(i, m)| row.get(i + m.len()..i + m.len() + 36))
        .map(str::to_string)
        .collect()
}

/// Error tags (or "ok") of a transaction's results.
fn shape(result: &Json) -> Vec<String> {
    result
        .as_array()
        .unwrap()
        .iter()
        .map(|r| match r.get("error").and_then(Json::as_str) {
            Some(e) => e.to_string(),
            None if r.is_null() => "null".into(),
            None => "ok".into(),
        })
        .collect()
}

fn model_call(model: &mut Model, sess: ovsdb_server::SessionId, params: &Json) -> Json {
    let mut o = Object::new();
    o.insert("method", Json::from("transact"));
    o.insert("params", params.clone());
    o.insert("id", Json::Integer(9));
    let out = model.handle(sess, &Json::Object(o));
    out.into_iter()
        .map(|(_, m)| m)
        .find(|m| m.get("result").is_some())
        .expect("model replied")
}

#[derive(Default)]
struct Stats {
    compared: usize,
    dangling_txns: usize,
    optional_dropped: usize,
}

/// Runs 150 random transactions of `seed` against a fresh real server and
/// the model; returns the first divergence (the transaction and both
/// results), if any.
fn run_seed(
    dir: &TempDir,
    schema: &std::path::Path,
    seed: u64,
    stats: &mut Stats,
) -> Option<String> {
    let real = Server::create(&dir.0, &format!("w{seed}.db"), schema).expect("ovsdb-server");
    let mut conn = Conn::connect(&real.sock).unwrap();
    let mut model = Model::from_schema_text(SCHEMA, ServerOptions::default()).unwrap();
    let sess = model.connect();
    let mut rng = SplitMix64::new(seed);
    let mut live: [Vec<String>; 3] = Default::default();
    let mut before: [Vec<String>; 3] = Default::default();
    let mut dangling: BTreeSet<(String, String)> = BTreeSet::new();
    for step in 0..150 {
        let text = random_txn(&mut rng, &live);
        let params = parse(text.as_bytes()).unwrap();
        let reply = conn.call("transact", params.clone()).unwrap();
        let mine = model_call(&mut model, sess, &params);
        let (want, got) = (reply.get("result").unwrap(), mine.get("result").unwrap());
        if shape(want) != shape(got) {
            return Some(format!(
                "seed {seed} step {step}: results differ for {text}\nreal: {reply}\nmodel: {mine}"
            ));
        }
        let real_rows = rows_of(
            conn.call("transact", select_all())
                .unwrap()
                .get("result")
                .unwrap(),
        );
        let model_rows = rows_of(
            model_call(&mut model, sess, &select_all())
                .get("result")
                .unwrap(),
        );
        for t in 0..3 {
            if real_rows[t] != model_rows[t] {
                let only = |a: &[String], b: &[String]| -> Vec<String> {
                    a.iter().filter(|r| !b.contains(r)).cloned().collect()
                };
                return Some(format!(
                    "seed {seed} step {step}: table {} differs after {text}\nonly real: {:#?}\nonly model: {:#?}\nbefore: {before:#?}",
                    TABLES[t],
                    only(&real_rows[t], &model_rows[t]),
                    only(&model_rows[t], &real_rows[t]),
                ));
            }
        }
        stats.compared += 1;
        // Not vacuous: transactions after which the real server holds
        // a weak reference to a row that does not exist, and rows
        // whose optional column lost its target in the transaction.
        for (t, rows) in real_rows.iter().enumerate() {
            // A row's first UUID is its `_uuid` (keys are sorted).
            live[t] = rows
                .iter()
                .filter_map(|r| uuids_in(r).into_iter().next())
                .collect();
        }
        let all: Vec<&String> = live.iter().flatten().collect();
        let mut dangling_now = BTreeSet::new();
        for r in real_rows.iter().flatten() {
            let u = uuids_in(r);
            for x in u.iter().skip(1).filter(|x| !all.contains(x)) {
                dangling_now.insert((u[0].clone(), x.clone()));
            }
        }
        stats.dangling_txns += usize::from(!dangling_now.is_subset(&dangling));
        dangling = dangling_now;
        for r in &before[0] {
            let u = uuids_in(r);
            let Some(o) = r
                .split(r#""o":"#)
                .nth(1)
                .filter(|o| o.starts_with(r#"["uuid","#))
                .map(uuids_in)
            else {
                continue;
            };
            if let (Some(me), Some(x)) = (u.first(), o.first()) {
                if live[0].contains(me) && !live[1].contains(x) {
                    stats.optional_dropped += 1;
                }
            }
        }
        before = real_rows;
    }
    None
}

#[test]
fn weak_refs_to_deleted_rows_match_real_server() {
    assert!(ensure_packages(), "openvswitch packages unavailable");
    let dir = TempDir::new("weak");
    let schema = dir.0.join("w.ovsschema");
    std::fs::write(&schema, SCHEMA).unwrap();
    let mut stats = Stats::default();
    for seed in 1u64..=6 {
        if let Some(d) = run_seed(&dir, &schema, seed, &mut stats) {
            panic!("{d}");
        }
    }
    let Stats {
        compared,
        dangling_txns,
        optional_dropped,
    } = stats;
    eprintln!(
        "{compared} transactions compared, {dangling_txns} left a new dangling weak reference, {optional_dropped} optional references lost their target"
    );
    assert!(
        optional_dropped > 5,
        "only {optional_dropped} optional references lost their target"
    );
    assert!(
        dangling_txns > 20,
        "only {dangling_txns} transactions left a new dangling weak reference"
    );
}

/// The survey: `WEAK_REFS_SEEDS=1-80 cargo test -p ovsdb-server --test
/// weak_refs_real_server -- --ignored --nocapture` runs the given seeds
/// (a range `a-b` or a comma-separated list), prints each divergence and
/// fails if there was one.
#[test]
#[ignore]
fn survey() {
    assert!(ensure_packages(), "openvswitch packages unavailable");
    let spec = std::env::var("WEAK_REFS_SEEDS").unwrap_or_else(|_| "1-80".into());
    let seeds: Vec<u64> = match spec.split_once('-') {
        Some((a, b)) => (a.trim().parse().unwrap()..=b.trim().parse().unwrap()).collect(),
        None => spec.split(',').map(|x| x.trim().parse().unwrap()).collect(),
    };
    let dir = TempDir::new("weak-survey");
    let schema = dir.0.join("w.ovsschema");
    std::fs::write(&schema, SCHEMA).unwrap();
    let mut stats = Stats::default();
    let mut bad = Vec::new();
    for &seed in &seeds {
        if let Some(d) = run_seed(&dir, &schema, seed, &mut stats) {
            eprintln!("{d}\n");
            bad.push(seed);
        }
    }
    eprintln!(
        "{} of {} seeds match over 150 steps; diverging: {bad:?}",
        seeds.len() - bad.len(),
        seeds.len()
    );
    assert!(bad.is_empty(), "seeds {bad:?} diverge");
}

/// Known gap, beyond the 80 surveyed seeds (the survey of seeds 81..=400
/// finds 143, 161, 176 and 273): when ovsdb-server assesses a deleted row
/// it adds the row's weak referrers to the transaction in the order of
/// the row's `dst_refs` hmap (ovsdb/transaction.c:680 at v3.1.0), hashed
/// by the referrer's first UUID word (ovsdb/row.c:89), which within a
/// bucket is the history of the references' insertions (transaction.c:580,
/// at commit) and of the row's clones (row.c:153-156 re-insert them). Both
/// models add referrers in UUID order. Here two A rows p and q (same
/// hash) weakly reference B row b and A row d; a transaction deletes b
/// and then d. The referrer of b added second lands in front of d in A's
/// hmap, is assessed before d and keeps its reference to d: q if p's
/// reference to b was inserted first, p otherwise. The model says q both
/// times.
#[test]
#[ignore]
fn referrers_join_in_the_order_of_the_deleted_rows_dst_refs() {
    assert!(ensure_packages(), "openvswitch packages unavailable");
    const S: &str = r#"{"name":"W","version":"1.0.0","tables":{
 "A":{"isRoot":true,"columns":{"n":{"type":"integer"},
   "w":{"type":{"key":{"type":"uuid","refTable":"A","refType":"weak"},"min":0,"max":"unlimited"}},
   "m":{"type":{"key":{"type":"uuid","refTable":"B","refType":"weak"},"min":0,"max":"unlimited"}}}},
 "B":{"isRoot":true,"columns":{"n":{"type":"integer"}}}}}"#;
    let dir = TempDir::new("weak-dst-refs");
    let schema = dir.0.join("s.ovsschema");
    std::fs::write(&schema, S).unwrap();
    let d = "00000000-0000-4000-8000-00000000000d";
    let p = "00000000-0000-4000-8000-000000000001";
    let q = "00000000-0000-4000-8000-000000000002";
    let b = "00000000-0000-4000-8000-00000000000b";
    let ins = |u: &str| {
        format!(
            r#"["W",{{"op":"insert","table":"A","uuid":"{u}","row":{{"n":1,"m":["uuid","{b}"],"w":["uuid","{d}"]}}}}]"#
        )
    };
    let mut failures = Vec::new();
    for (name, first, second) in [("p first", p, q), ("q first", q, p)] {
        let real = Server::create(&dir.0, &format!("{}.db", name.replace(' ', "-")), &schema)
            .expect("ovsdb-server");
        let mut conn = Conn::connect(&real.sock).unwrap();
        let mut model = Model::from_schema_text(S, ServerOptions::default()).unwrap();
        let sess = model.connect();
        let txns = [
            format!(
                r#"["W",{{"op":"insert","table":"B","uuid":"{b}","row":{{"n":0}}}},{{"op":"insert","table":"A","uuid":"{d}","row":{{"n":0}}}}]"#
            ),
            ins(first),
            ins(second),
            format!(
                r#"["W",{{"op":"delete","table":"B","where":[]}},{{"op":"delete","table":"A","where":[["_uuid","==",["uuid","{d}"]]]}}]"#
            ),
            r#"["W",{"op":"select","table":"A","where":[],"columns":["_uuid","w"]}]"#.into(),
        ];
        let (mut want, mut got) = (Json::Null, Json::Null);
        for t in &txns {
            let params = parse(t.as_bytes()).unwrap();
            want = conn.call("transact", params.clone()).unwrap();
            got = model_call(&mut model, sess, &params);
        }
        let (want, got) = (want.get("result").unwrap(), got.get("result").unwrap());
        if rows_of(want) != rows_of(got) {
            failures.push(format!("{name}:\nreal:  {want}\nmodel: {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
