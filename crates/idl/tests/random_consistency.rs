//! Randomised consistency check (deterministic seeds, own PRNG): random
//! transactions run on the server model while replicas monitor it with
//! `monitor` (v1), `monitor_cond` (v2, with a condition) and
//! `monitor_cond_since` (v3), some of them held so that changes coalesce.
//! After every flush each replica must equal the server's contents (rows
//! matching its condition).
#![cfg(not(target_arch = "wasm32"))]

use idl::hub::Hub;
use idl::replica::Idl;
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::{parse, Json};
use ovsdb_server::cond::{Clause, ColRef, Func};
use ovsdb_server::rng::SplitMix64;
use ovsdb_server::DbMeta;
use ovsdb_server::{Server, ServerOptions};
use std::collections::BTreeMap;
use std::sync::Arc;

const SCHEMA: &str = r#"{"name":"r","version":"1.0.0","tables":{
 "T":{"isRoot":true,"columns":{
   "k":{"type":"integer"},
   "name":{"type":"string"},
   "set":{"type":{"key":"integer","min":0,"max":"unlimited"}},
   "map":{"type":{"key":"string","value":"integer","min":0,"max":"unlimited"}},
   "opt":{"type":{"key":"string","min":0,"max":1}},
   "child":{"type":{"key":{"type":"uuid","refTable":"C"},"min":0,"max":1}}}},
 "C":{"isRoot":false,"columns":{"v":{"type":"integer"}}}}}"#;

fn random_op(rng: &mut SplitMix64) -> String {
    let k = rng.next_u64() % 12;
    let a = rng.next_u64() % 6;
    let b = rng.next_u64() % 6;
    match rng.next_u64() % 7 {
        0 | 1 => format!(
            r#"{{"op":"insert","table":"T","row":{{"k":{k},"name":"n{a}","set":["set",[{a},{b}]],"map":["map",[["x{a}",{b}]]],"child":["named-uuid","c"]}}}},
               {{"op":"insert","table":"C","row":{{"v":{b}}},"uuid-name":"c"}}"#
        ),
        2 => format!(
            r#"{{"op":"update","table":"T","where":[["k","==",{k}]],"row":{{"name":"u{a}","opt":["set",["o{b}"]]}}}}"#
        ),
        3 => format!(
            r#"{{"op":"mutate","table":"T","where":[["k","<=",{k}]],"mutations":[["set","insert",["set",[{a}]]],["set","delete",["set",[{b}]]],["map","insert",["map",[["y{b}",{a}]]]],["map","delete",["set",["x{a}"]]]]}}"#
        ),
        4 => format!(
            r#"{{"op":"update","table":"T","where":[["k","==",{k}]],"row":{{"k":{}}}}}"#,
            (k + 1) % 12
        ),
        5 => format!(
            r#"{{"op":"update","table":"T","where":[["k",">",{k}]],"row":{{"child":["set",[]],"opt":["set",[]]}}}}"#
        ),
        _ => format!(r#"{{"op":"delete","table":"T","where":[["k","==",{k}]]}}"#),
    }
}

type Rows = BTreeMap<String, BTreeMap<String, Json>>;

fn server_view(s: &Server, filter_k_lt: Option<i64>) -> Rows {
    let d = s.dump();
    let mut out = Rows::new();
    for (t, rows) in d.as_object().unwrap().iter() {
        for (u, r) in rows.as_object().unwrap().iter() {
            if t == "T" {
                if let Some(lim) = filter_k_lt {
                    if r.get("k").and_then(Json::as_i64).unwrap() >= lim {
                        continue;
                    }
                }
            }
            out.entry(t.to_string())
                .or_default()
                .insert(u.to_string(), r.clone());
        }
    }
    out
}

fn replica_view(idl: &Idl) -> Rows {
    let d = idl.dump();
    let mut out = Rows::new();
    for (t, rows) in d.as_object().unwrap().iter() {
        for (u, r) in rows.as_object().unwrap().iter() {
            out.entry(t.to_string())
                .or_default()
                .insert(u.to_string(), r.clone());
        }
    }
    out
}

#[test]
fn replicas_track_random_transactions() {
    for seed in 1..=6u64 {
        let meta = DbMeta::from_text(SCHEMA).unwrap();
        let mut hub = Hub::new(Server::new(
            meta.clone(),
            ServerOptions {
                clustered: true,
                seed,
                ..Default::default()
            },
        ));
        let meta = Arc::new(meta);
        let mut clients = Vec::new();
        for version in [1u8, 2, 3, 3] {
            let mut idl = Idl::new(meta.clone(), true);
            idl.set_monitor_version(version);
            if version == 2 {
                // Only rows with k < 6.
                let t = meta.table("T").unwrap();
                let kc = meta.tables[t].column("k").unwrap();
                idl.set_condition(
                    "T",
                    vec![Clause::Cmp {
                        col: ColRef::Col(kc),
                        column: "k".into(),
                        func: Func::Lt,
                        arg: Datum::scalar(Atom::Integer(6)),
                    }],
                )
                .unwrap();
            }
            clients.push((hub.add(idl).unwrap(), version));
        }
        // The last client is held: its changes coalesce until flushed.
        let held = clients[3].0;
        let held_session = hub.clients[held].session;
        hub.server.set_hold(held_session, true);
        let mut rng = SplitMix64::new(seed * 7919);
        for step in 0..150 {
            let n = 1 + rng.next_u64() % 3;
            let ops: Vec<String> = (0..n).map(|_| random_op(&mut rng)).collect();
            let txn = parse(format!("[{}]", ops.join(",")).as_bytes()).unwrap();
            hub.transact(txn.as_array().unwrap()).unwrap();
            for &(c, version) in &clients[..3] {
                let want = server_view(&hub.server, (version == 2).then_some(6));
                assert_eq!(
                    replica_view(&hub.clients[c].idl),
                    want,
                    "seed {seed} step {step} monitor v{version}"
                );
            }
            if step % 10 == 9 {
                let msgs = hub.server.flush(held_session);
                hub.route(msgs, held).unwrap();
                assert_eq!(
                    replica_view(&hub.clients[held].idl),
                    server_view(&hub.server, None),
                    "seed {seed} step {step} (coalesced)"
                );
            }
            if step % 37 == 36 {
                // A reconnect resumes from history.
                let ev = hub.reconnect(clients[2].0).unwrap();
                assert!(ev
                    .iter()
                    .any(|e| matches!(e, idl::replica::Event::Monitoring { found: true })));
            }
        }
    }
}
