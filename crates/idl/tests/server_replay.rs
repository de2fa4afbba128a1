//! The server model as a cluster member uses it: `prepare` executes a
//! transaction without changing the database, the commit becomes a log
//! entry (`entry_data`), and every member installs it by replaying that
//! entry (`apply_record`) or, on the proposer, with `apply_commit`.
//!
//! Checked two ways: replaying every real sample file record by record
//! gives the same rows as the IDL time-travel replica (which the
//! `timetravel` interop test proves equal to a real server's dump), and
//! prepared OVN-shaped transactions give identical databases on the
//! proposer and on replicas fed the full-value or the diff entry.
#![cfg(not(target_arch = "wasm32"))]

mod common;
#[allow(dead_code)] // parse_dump is for the real-server tests
#[path = "common/dump.rs"]
mod dump;

use dump::{replica_rows, Rows};
use idl::timetravel::Timeline;
use ovsdb::json::{self, Json};
use ovsdb_server::DbMeta;
use ovsdb_server::{entry_data, Server, ServerOptions, ServerRow};
use std::collections::BTreeMap;
use std::path::Path;

fn server_rows(s: &Server) -> Rows {
    let mut out = Rows::new();
    for (t, tm) in s.meta.tables.iter().enumerate() {
        for r in s.rows(t) {
            let cols: BTreeMap<_, _> = tm
                .columns
                .iter()
                .enumerate()
                .map(|(ci, c)| (c.name.clone(), r.cols()[ci].clone()))
                .collect();
            out.entry(tm.name.clone()).or_default().insert(r.uuid, cols);
        }
    }
    out
}

fn new_server(schema: &Json) -> Server {
    let opts = ServerOptions {
        clustered: true,
        ..Default::default()
    };
    Server::new(DbMeta::from_json(schema).unwrap(), opts)
}

#[test]
fn replaying_every_sample_record_matches_the_time_travel_replica() {
    let mut files = 0;
    let mut records = 0;
    for path in common::sample_files() {
        let bytes = std::fs::read(&path).unwrap();
        let Ok(tl) = Timeline::load(&bytes) else {
            continue;
        };
        let last = tl.last_committed();
        let Some((schema, base)) = tl.base() else {
            // Standalone file: its first step carries the schema.
            continue;
        };
        let mut server = new_server(schema);
        if let Some(b) = base {
            server
                .apply_record(b)
                .unwrap_or_else(|e| panic!("{}: snapshot: {e}", path.display()));
        }
        for step in tl.steps.iter().filter(|s| s.index <= last) {
            if let Some(sc) = &step.schema {
                server = new_server(sc);
            }
            if let Some(t) = &step.txn {
                server
                    .apply_record(t)
                    .unwrap_or_else(|e| panic!("{} index {}: {e}", path.display(), step.index));
                records += 1;
            }
        }
        let replica = tl.replica_at(last).unwrap();
        assert_eq!(
            server_rows(&server),
            replica_rows(&replica),
            "{} at index {last}",
            path.display()
        );
        files += 1;
    }
    println!("{files} clustered files, {records} records replayed");
    assert!(files >= 20, "only {files} clustered samples replayed");
}

fn nb_schema() -> String {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/samples/schemas/ovn-nb.ovsschema");
    std::fs::read_to_string(p).unwrap()
}

fn ops(text: &str) -> Vec<Json> {
    match json::parse(text.as_bytes()).unwrap() {
        Json::Array(v) => v,
        _ => panic!("not an array"),
    }
}

#[test]
fn prepared_commits_replay_identically_in_both_storage_modes() {
    let schema = nb_schema();
    let mk = |seed| {
        Server::from_schema_text(
            &schema,
            ServerOptions {
                clustered: true,
                seed,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let (mut leader, mut full, mut diff) = (mk(1), mk(2), mk(3));
    let mut txns = vec![
        r#"[{"op":"insert","table":"Port_Group","row":{"name":"pg1"},"uuid-name":"pg"}]"#
            .to_string(),
    ];
    for p in 0..30 {
        txns.push(format!(
            r#"[{{"op":"insert","table":"ACL","row":{{"action":"drop","direction":"from-lport","log":true,"match":"udp","priority":{p}}},"uuid-name":"a"}},
                {{"op":"mutate","table":"Port_Group","where":[["name","==","pg1"]],"mutations":[["acls","insert",["named-uuid","a"]]]}},
                {{"op":"comment","comment":"acl-add {p}"}}]"#
        ));
    }
    // Shrinking the set garbage-collects the ACLs it held.
    txns.push(
        r#"[{"op":"update","table":"Port_Group","where":[["name","==","pg1"]],"row":{"acls":["set",[]]}}]"#
            .into(),
    );
    txns.push(r#"[{"op":"delete","table":"Port_Group","where":[]}]"#.into());
    let mut diff_bytes = 0;
    let mut full_bytes = 0;
    for (i, t) in txns.iter().enumerate() {
        let before = leader.dump();
        let out = leader.prepare(&ops(t));
        assert_eq!(leader.dump(), before, "prepare changed the database");
        let commit = out
            .commit
            .unwrap_or_else(|| panic!("txn {i}: {}", out.result.to_string_compact()));
        let date = 1_700_000_000_000 + i as i64;
        for (replica, is_diff) in [(&mut full, false), (&mut diff, true)] {
            let e = entry_data(&leader.meta, &commit, is_diff, date);
            let rec = &e.as_array().unwrap()[1];
            let n = rec.to_string_compact().len();
            if is_diff {
                diff_bytes += n;
            } else {
                full_bytes += n;
            }
            replica.apply_record(rec).unwrap();
        }
        leader.apply_commit(&commit).unwrap();
        assert_eq!(server_rows(&leader), server_rows(&full), "txn {i}");
        assert_eq!(server_rows(&leader), server_rows(&diff), "txn {i}");
    }
    assert_eq!(leader.row_count("ACL"), 0);
    assert_eq!(leader.row_count("Port_Group"), 0);
    // Diffs make the 30 set growths linear instead of quadratic.
    assert!(diff_bytes < full_bytes, "{diff_bytes} vs {full_bytes}");
}

#[test]
fn a_commit_prepared_against_an_older_state_is_refused() {
    let mut s = Server::from_schema_text(&nb_schema(), ServerOptions::default()).unwrap();
    let (out, _) = s.transact(&ops(
        r#"[{"op":"insert","table":"Logical_Switch","row":{"name":"a"}}]"#,
    ));
    assert!(out.commit.is_some());
    let rename = |n: &str| {
        ops(&format!(
            r#"[{{"op":"update","table":"Logical_Switch","where":[],"row":{{"name":"{n}"}}}}]"#
        ))
    };
    let first = s.prepare(&rename("b")).commit.unwrap();
    let second = s.prepare(&rename("c")).commit.unwrap();
    s.apply_commit(&first).unwrap();
    let before = s.dump();
    let err = s.apply_commit(&second).unwrap_err();
    assert_eq!(err.tag, "prerequisite check failed");
    assert_eq!(s.dump(), before, "a refused commit changed nothing");
}

#[test]
fn bad_records_are_errors_and_change_nothing() {
    let mut s = Server::from_schema_text(&nb_schema(), ServerOptions::default()).unwrap();
    let bad = [
        r#"[1]"#,
        r#"{"No_Such_Table":{}}"#,
        r#"{"Logical_Switch":{"not-a-uuid":{}}}"#,
        r#"{"Logical_Switch":{"00000000-0000-0000-0000-000000000001":null}}"#,
        r#"{"Logical_Switch":{"00000000-0000-0000-0000-000000000001":{"nope":1}}}"#,
        r#"{"Logical_Switch":{"00000000-0000-0000-0000-000000000001":{"name":5}}}"#,
        r#"{"Logical_Switch":{"00000000-0000-0000-0000-000000000001":7}}"#,
    ];
    for b in bad {
        let j = json::parse(b.as_bytes()).unwrap();
        assert!(s.apply_record(&j).is_err(), "{b} accepted");
        assert_eq!(s.row_count("Logical_Switch"), 0, "{b} left rows");
    }
}

#[test]
fn entry_data_replays_through_the_timeline_reader() {
    // A commit made by the model, written as a log entry, is read back by
    // the time-travel code into the same contents. (Moved here from the
    // server crate's tests: it needs the replica.)
    let schema = r#"{"name":"m","version":"1.0.0","tables":{
 "R":{"isRoot":true,"columns":{"name":{"type":"string"},
   "s":{"type":{"key":"integer","min":0,"max":3}},
   "kids":{"type":{"key":{"type":"uuid","refTable":"K"},"min":0,"max":"unlimited"}}}},
 "K":{"isRoot":false,"columns":{"v":{"type":"integer"}}}}}"#;
    let opts = ServerOptions {
        clustered: true,
        seed: 3,
        history_max: 100,
        ..Default::default()
    };
    let mut s = Server::from_schema_text(schema, opts).unwrap();
    let j = json::parse(br#"[{"op":"insert","table":"R","row":{"name":"a","s":["set",[1]],"kids":["named-uuid","k"]}},
                      {"op":"insert","table":"K","row":{"v":5},"uuid-name":"k"},
                      {"op":"comment","comment":"hello"}]"#)
    .unwrap();
    let c = s.transact(j.as_array().unwrap()).0.commit.unwrap();
    let data = entry_data(&s.meta, &c, true, 1_700_000_000_000);
    let text = data.to_string_compact();
    assert!(text.starts_with("[null,{"), "{text}");
    assert!(text.contains(r#""_comment":"hello""#) && text.contains(r#""_is_diff":true"#));
    let mut idl = idl::Idl::new(s.meta.clone(), true);
    idl::timetravel::apply_record(&mut idl, &data.as_array().unwrap()[1]).unwrap();
    assert_eq!(idl.dump(), s.dump());
}
