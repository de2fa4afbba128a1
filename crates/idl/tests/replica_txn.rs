//! The replica's transaction builder and update handling, checked on exact
//! wire JSON and on replica state (ovsdb-idl.md §3, §4).
#![cfg(not(target_arch = "wasm32"))]

use idl::hub::Hub;
use idl::replica::{
    Commit, Event, Idl, IndexPolicy, PartialOp, TxnStatus, UsageError, WriteResult, ALERT, MONITOR,
};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::{parse, Json};
use ovsdb::uuid::Uuid;
use ovsdb_server::DbMeta;
use ovsdb_server::{Server, ServerOptions};
use std::sync::Arc;

const SCHEMA: &str = r#"{"name":"db","version":"1.0.0","tables":{
 "A":{"isRoot":true,"columns":{
   "name":{"type":"string"},
   "n":{"type":"integer"},
   "tags":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}},
   "refs":{"type":{"key":{"type":"uuid","refTable":"B"},"min":0,"max":"unlimited"}}}},
 "B":{"isRoot":false,"columns":{"v":{"type":"integer"}}},
 "S":{"isRoot":true,"maxRows":1,"columns":{"x":{"type":"integer"}}}}}"#;

fn setup(configure: impl FnOnce(&mut Idl)) -> (Hub, usize) {
    let meta = DbMeta::from_text(SCHEMA).unwrap();
    let mut hub = Hub::new(Server::new(meta.clone(), ServerOptions::default()));
    let ops = parse(
        br#"[{"op":"insert","table":"A","row":{"name":"a1","n":1,"tags":["map",[["k","v"]]],"refs":["named-uuid","b1"]}},
             {"op":"insert","table":"B","row":{"v":7},"uuid-name":"b1"},
             {"op":"insert","table":"A","row":{"name":"a2","n":2}}]"#,
    )
    .unwrap();
    hub.transact(ops.as_array().unwrap()).unwrap();
    let mut idl = Idl::new(Arc::new(meta), true);
    configure(&mut idl);
    let c = hub.add(idl).unwrap();
    (hub, c)
}

fn row_by_name(idl: &Idl, name: &str) -> Uuid {
    let t = idl.table_index("A").unwrap();
    let c = idl.column_index(t, "name").unwrap();
    idl.row_uuids(t)
        .into_iter()
        .find(|u| idl.read(t, *u, c) == Datum::scalar(Atom::String(name.into())))
        .unwrap()
}

fn s(x: &str) -> Datum {
    Datum::scalar(Atom::String(x.into()))
}
fn i(x: i64) -> Datum {
    Datum::scalar(Atom::Integer(x))
}

fn request_params(c: Commit) -> String {
    match c {
        Commit::Sent { request, .. } => request.get("params").unwrap().to_string_compact(),
        other => panic!("expected a request, got {other:?}"),
    }
}

#[test]
fn verify_becomes_wait_and_every_written_column_is_sent() {
    let (mut hub, c) = setup(|_| {});
    let idl = &mut hub.clients[c].idl;
    let t = idl.table_index("A").unwrap();
    let (name, n) = (
        idl.column_index(t, "name").unwrap(),
        idl.column_index(t, "n").unwrap(),
    );
    let a1 = row_by_name(idl, "a1");
    idl.txn_begin();
    idl.txn_verify(t, a1, n);
    // Unchanged write of a read/write column: kept (atomicity rule) ...
    assert_eq!(idl.txn_write(t, a1, name, s("a1")), WriteResult::Written);
    // ... and one real change.
    idl.txn_write(t, a1, n, i(5));
    idl.txn_add_comment("test");
    let p = request_params(idl.txn_commit());
    assert_eq!(
        p,
        format!(
            r#"["db",{{"op":"wait","table":"A","timeout":0,"where":[["_uuid","==",["uuid","{a1}"]]],"until":"==","columns":["n"],"rows":[{{"n":1}}]}},{{"op":"update","table":"A","where":[["_uuid","==",["uuid","{a1}"]]],"row":{{"n":5,"name":"a1"}}}},{{"op":"comment","comment":"test"}}]"#
        )
    );
}

#[test]
fn nothing_changed_sends_nothing_and_wco_drops_equal_writes() {
    let (mut hub, c) = setup(|_| {});
    let idl = &mut hub.clients[c].idl;
    let t = idl.table_index("A").unwrap();
    let name = idl.column_index(t, "name").unwrap();
    let a1 = row_by_name(idl, "a1");
    idl.txn_begin();
    idl.txn_write(t, a1, name, s("a1"));
    assert_eq!(idl.txn_commit(), Commit::Unchanged);

    // With WRITE_CHANGED_ONLY the equal write is dropped at write time;
    // the real change alone goes out.
    idl.set_write_changed_only("A", "name", true).unwrap();
    let n = idl.column_index(t, "n").unwrap();
    idl.txn_begin();
    assert_eq!(idl.txn_write(t, a1, name, s("a1")), WriteResult::Discarded);
    idl.txn_write(t, a1, n, i(9));
    let p = request_params(idl.txn_commit());
    assert_eq!(
        p,
        format!(
            r#"["db",{{"op":"update","table":"A","where":[["_uuid","==",["uuid","{a1}"]]],"row":{{"n":9}}}}]"#
        )
    );
    // WCO compares with what a read returns: write X then the original
    // value keeps the column written (with the original value).
    idl.txn_begin();
    idl.txn_write(t, a1, name, s("zz"));
    assert_eq!(idl.txn_write(t, a1, name, s("a1")), WriteResult::Written);
    assert_eq!(idl.txn_commit(), Commit::Unchanged);
}

#[test]
fn write_only_columns_drop_equal_writes_and_do_not_alert() {
    let (mut hub, c) = setup(|idl| idl.omit_alert("A", "n").unwrap());
    assert_eq!(hub.clients[c].idl.mode("A", "n"), MONITOR);
    let t = hub.clients[c].idl.table_index("A").unwrap();
    let n = hub.clients[c].idl.column_index(t, "n").unwrap();
    let a1 = row_by_name(&hub.clients[c].idl, "a1");
    hub.clients[c].idl.txn_begin();
    assert_eq!(
        hub.clients[c].idl.txn_write(t, a1, n, i(1)),
        WriteResult::Discarded
    );
    hub.clients[c].idl.txn_write(t, a1, n, i(2));
    let seq = hub.clients[c].idl.seqno();
    assert_eq!(hub.commit(c).unwrap(), TxnStatus::Success);
    // The echo of our write updated the replica but did not move the seqno.
    assert_eq!(hub.clients[c].idl.read(t, a1, n), i(2));
    assert_eq!(hub.clients[c].idl.seqno(), seq);
    // track_add_column on a write-only column makes it read/write again.
    let mut idl2 = Idl::new(hub.clients[c].idl.meta.clone(), true);
    idl2.omit_alert("A", "n").unwrap();
    idl2.track_add_column("A", "n").unwrap();
    assert_eq!(idl2.mode("A", "n") & (MONITOR | ALERT), MONITOR | ALERT);
}

#[test]
fn insert_with_reference_delete_root_and_nonroot_partial_and_increment() {
    let (mut hub, c) = setup(|idl| idl.set_lock(Some("mylock")));
    let idl = &mut hub.clients[c].idl;
    let ta = idl.table_index("A").unwrap();
    let tb = idl.table_index("B").unwrap();
    let refs = idl.column_index(ta, "refs").unwrap();
    let tags = idl.column_index(ta, "tags").unwrap();
    let n = idl.column_index(ta, "n").unwrap();
    let v = idl.column_index(tb, "v").unwrap();
    let a1 = row_by_name(idl, "a1");
    let a2 = row_by_name(idl, "a2");
    let b1 = idl.row_uuids(tb)[0];
    idl.txn_begin();
    let nb = idl.txn_insert(tb, None).unwrap();
    idl.txn_write(tb, nb, v, i(3));
    idl.txn_write(ta, a2, refs, Datum::set([Atom::Uuid(nb)]));
    idl.txn_delete(tb, b1); // non-root: not sent
    idl.txn_delete(ta, a1); // root: sent
    idl.txn_partial(
        ta,
        a2,
        tags,
        PartialOp::MapSet(Atom::String("x".into()), Atom::String("y".into())),
    );
    idl.txn_increment(ta, a2, n);
    let named = format!("row{}", nb.to_string().replace('-', "_"));
    let p = request_params(idl.txn_commit());
    assert_eq!(
        p,
        format!(
            concat!(
                r#"["db","#,
                r#"{{"op":"insert","table":"B","uuid-name":"{named}","row":{{"v":3}}}},"#,
                r#"{{"op":"update","table":"A","where":[["_uuid","==",["uuid","{a2}"]]],"row":{{"refs":["named-uuid","{named}"]}}}},"#,
                r#"{{"op":"mutate","table":"A","where":[["_uuid","==",["uuid","{a2}"]]],"mutations":[["tags","insert",["map",[["x","y"]]]]]}},"#,
                r#"{{"op":"delete","table":"A","where":[["_uuid","==",["uuid","{a1}"]]]}},"#,
                r#"{{"op":"mutate","table":"A","where":[["_uuid","==",["uuid","{a2}"]]],"mutations":[["n","+=",1]]}},"#,
                r#"{{"op":"select","table":"A","where":[["_uuid","==",["uuid","{a2}"]]],"columns":["n"]}},"#,
                r#"{{"op":"assert","lock":"mylock"}}]"#
            ),
            named = named,
            a1 = a1,
            a2 = a2
        )
    );
    let _ = b1;
}

#[test]
fn commit_runs_on_the_server_and_gc_removes_unreferenced_rows() {
    let (mut hub, c) = setup(|_| {});
    let ta = hub.clients[c].idl.table_index("A").unwrap();
    let tb = hub.clients[c].idl.table_index("B").unwrap();
    let refs = hub.clients[c].idl.column_index(ta, "refs").unwrap();
    let n = hub.clients[c].idl.column_index(ta, "n").unwrap();
    let a1 = row_by_name(&hub.clients[c].idl, "a1");
    let idl = &mut hub.clients[c].idl;
    idl.txn_begin();
    idl.txn_write(ta, a1, refs, Datum::set([]));
    idl.txn_increment(ta, a1, n);
    let Commit::Sent { id, request, .. } = idl.txn_commit() else {
        panic!()
    };
    let ev = hub.send(c, &request).unwrap();
    let done = ev
        .iter()
        .find_map(|e| match e {
            Event::TxnDone {
                id: x,
                status,
                increment,
                ..
            } if *x == id => Some((*status, *increment)),
            _ => None,
        })
        .unwrap();
    assert_eq!(done, (TxnStatus::Success, Some(2)));
    // B's only row lost its last strong reference: garbage-collected, and
    // the replica saw the deletion before the reply.
    assert_eq!(hub.server.row_count("B"), 0);
    assert!(hub.clients[c].idl.row_uuids(tb).is_empty());
    assert_eq!(hub.clients[c].idl.read(ta, a1, n), i(2));
}

#[test]
fn singleton_insert_waits_for_empty_table_and_try_again_on_conflict() {
    let (mut hub, c) = setup(|_| {});
    let ts = hub.clients[c].idl.table_index("S").unwrap();
    let x = hub.clients[c].idl.column_index(ts, "x").unwrap();
    hub.clients[c].idl.txn_begin();
    let r = hub.clients[c].idl.txn_insert(ts, None).unwrap();
    hub.clients[c].idl.txn_write(ts, r, x, i(1));
    let Commit::Sent { request, .. } = hub.clients[c].idl.txn_commit() else {
        panic!()
    };
    let p = request.get("params").unwrap().as_array().unwrap();
    assert_eq!(
        p[1].to_string_compact(),
        r#"{"op":"wait","table":"S","where":[],"timeout":0,"until":"==","rows":[]}"#
    );
    // Someone else fills the singleton first: our wait fails → try again.
    let other = parse(br#"[{"op":"insert","table":"S","row":{"x":5}}]"#).unwrap();
    hub.transact(other.as_array().unwrap()).unwrap();
    let ev = hub.send(c, &request).unwrap();
    assert!(ev.iter().any(|e| matches!(
        e,
        Event::TxnDone {
            status: TxnStatus::TryAgain,
            ..
        }
    )));
}

#[test]
fn tracking_keeps_deleted_rows_until_clear_and_all_default_insert_is_untracked() {
    let (mut hub, c) = setup(|idl| idl.track_add_all());
    let ta = hub.clients[c].idl.table_index("A").unwrap();
    hub.clients[c].idl.track_clear();
    let ops = parse(
        br#"[{"op":"delete","table":"A","where":[["name","==","a2"]]},
             {"op":"insert","table":"A","row":{}},
             {"op":"update","table":"A","where":[["name","==","a1"]],"row":{"n":10}}]"#,
    )
    .unwrap();
    let seq = hub.clients[c].idl.seqno();
    hub.transact(ops.as_array().unwrap()).unwrap();
    let idl = &hub.clients[c].idl;
    assert_eq!(idl.seqno(), seq + 3);
    let tr = idl.tracked(ta);
    assert_eq!(tr.len(), 2, "{tr:?}");
    let deleted = tr.iter().find(|r| r.deleted).unwrap();
    // Deleted row still readable until track_clear.
    let name = idl.column_index(ta, "name").unwrap();
    assert_eq!(idl.read(ta, deleted.uuid, name), s("a2"));
    let modified = tr.iter().find(|r| r.modified).unwrap();
    assert_eq!(modified.updated, vec!["n".to_string()]);
    hub.clients[c].idl.track_clear();
    assert!(hub.clients[c].idl.tracked(ta).is_empty());
    assert_eq!(hub.clients[c].idl.row_count(ta), 2);
}

#[test]
fn index_policies_reindex_on_every_modify_or_only_on_indexed_changes() {
    for (policy, expect) in [
        (IndexPolicy::EveryModify, 1),
        (IndexPolicy::IndexedColumnsChanged, 0),
    ] {
        let (mut hub, c) = setup(|idl| {
            idl.index_create("A", &["name"]);
            idl.index_policy = policy;
        });
        let before = hub.clients[c].idl.index_stats(0);
        let ops =
            parse(br#"[{"op":"update","table":"A","where":[["name","==","a1"]],"row":{"n":42}}]"#)
                .unwrap();
        hub.transact(ops.as_array().unwrap()).unwrap();
        let after = hub.clients[c].idl.index_stats(0);
        assert_eq!(after.inserts - before.inserts, expect, "{policy:?}");
        assert_eq!(after.deletes - before.deletes, expect, "{policy:?}");
        // A change of the indexed column re-indexes under both policies.
        let ops = parse(
            br#"[{"op":"update","table":"A","where":[["name","==","a1"]],"row":{"name":"a0"}}]"#,
        )
        .unwrap();
        hub.transact(ops.as_array().unwrap()).unwrap();
        let idl = &mut hub.clients[c].idl;
        assert_eq!(idl.index_stats(0).inserts - after.inserts, 1);
        let found = idl.index_find_eq(0, &[s("a0")]);
        assert_eq!(found.len(), 1);
        let all = idl.index_all(0);
        let t = idl.table_index("A").unwrap();
        let name = idl.column_index(t, "name").unwrap();
        let names: Vec<Datum> = all.iter().map(|u| idl.read(t, *u, name)).collect();
        assert_eq!(names, vec![s("a0"), s("a2")]);
    }
}

#[test]
fn reconnect_with_history_resumes_and_without_history_reloads() {
    for clustered in [true, false] {
        let meta = DbMeta::from_text(SCHEMA).unwrap();
        let mut hub = Hub::new(Server::new(
            meta.clone(),
            ServerOptions {
                clustered,
                ..Default::default()
            },
        ));
        let c = hub.add(Idl::new(Arc::new(meta), true)).unwrap();
        for k in 0..5 {
            let ops =
                parse(format!(r#"[{{"op":"insert","table":"A","row":{{"n":{k}}}}}]"#).as_bytes())
                    .unwrap();
            hub.transact(ops.as_array().unwrap()).unwrap();
        }
        // Disconnected while one more row arrives.
        let sess = hub.clients[c].session;
        hub.server.disconnect(sess);
        let ops = parse(br#"[{"op":"insert","table":"A","row":{"n":99}}]"#).unwrap();
        hub.transact(ops.as_array().unwrap()).unwrap();
        let applied = hub.clients[c].idl.rows_applied;
        let ev = hub.reconnect(c).unwrap();
        let found = ev.iter().find_map(|e| match e {
            Event::Monitoring { found } => Some(*found),
            _ => None,
        });
        assert_eq!(found, Some(clustered));
        let delta = hub.clients[c].idl.rows_applied - applied;
        if clustered {
            assert_eq!(delta, 1, "only the missed row");
        } else {
            assert_eq!(delta, 6, "full reload");
        }
        assert_eq!(hub.clients[c].idl.dump(), hub.server.dump());
    }
}

#[test]
fn inconsistent_updates_are_errors_not_panics() {
    let meta = Arc::new(DbMeta::from_text(SCHEMA).unwrap());
    let mut idl = Idl::new(meta, true);
    let u = "11111111-2222-3333-4444-555555555555";
    for bad in [
        format!(r#"{{"A":{{"{u}":{{"modify":{{"n":1}}}}}}}}"#),
        format!(r#"{{"A":{{"{u}":{{"delete":null}}}}}}"#),
        format!(r#"{{"A":{{"{u}":{{"insert":{{"n":"x"}}}}}}}}"#),
        r#"{"A":{"not-a-uuid":{"insert":{}}}}"#.to_string(),
        format!(r#"{{"A":{{"{u}":{{"delete":1}}}}}}"#),
        r#"{"A":[]}"#.to_string(),
        r#"[]"#.to_string(),
    ] {
        let j = parse(bad.as_bytes()).unwrap();
        assert!(idl.apply_table_updates(2, &j, false).is_err(), "{bad}");
    }
    let ins = parse(format!(r#"{{"A":{{"{u}":{{"insert":{{"n":1}}}}}}}}"#).as_bytes()).unwrap();
    idl.apply_table_updates(2, &ins, false).unwrap();
    assert!(
        idl.apply_table_updates(2, &ins, false).is_err(),
        "double insert"
    );
    // Garbage messages.
    for m in [
        "{}",
        r#"{"method":"update2","params":[1]}"#,
        r#"{"id":77,"result":[1,2]}"#,
        r#"{"method":"update3","params":[["monid","db"],"x",{"A":5}]}"#,
    ] {
        let _ = idl.receive(&parse(m.as_bytes()).unwrap());
    }
    assert!(idl.receive(&Json::Array(vec![])).is_err());
}

#[test]
fn locks_are_requested_queued_and_handed_over() {
    let meta = DbMeta::from_text(SCHEMA).unwrap();
    let mut hub = Hub::new(Server::new(meta.clone(), ServerOptions::default()));
    let meta = Arc::new(meta);
    let mut a = Idl::new(meta.clone(), true);
    a.set_lock(Some("northd"));
    let mut b = Idl::new(meta.clone(), true);
    b.set_lock(Some("northd"));
    let a = hub.add(a).unwrap();
    let b = hub.add(b).unwrap();
    assert!(hub.clients[a].idl.has_lock());
    assert!(!hub.clients[b].idl.has_lock());
    let write = |hub: &mut Hub, c: usize| {
        let idl = &mut hub.clients[c].idl;
        let t = idl.table_index("A").unwrap();
        let n = idl.column_index(t, "name").unwrap();
        idl.txn_begin();
        let r = idl.txn_insert(t, None).unwrap();
        idl.txn_write(t, r, n, s("x"));
        hub.commit(c).unwrap()
    };
    // Without the lock nothing is sent.
    assert_eq!(write(&mut hub, b), TxnStatus::NotLocked);
    assert_eq!(hub.server.row_count("A"), 0);
    assert_eq!(write(&mut hub, a), TxnStatus::Success);
    // The holder goes away: the waiter is told it now holds the lock.
    hub.reconnect(a).unwrap();
    assert!(hub.clients[b].idl.has_lock());
    assert_eq!(write(&mut hub, b), TxnStatus::Success);
    assert_eq!(hub.server.row_count("A"), 2);
}

/// Names and positions the schema lacks are the caller's mistake: they
/// come back as typed errors (or are ignored by calls documented to), never
/// as a panic, and leave the replica usable.
#[test]
fn caller_mistakes_are_errors_not_panics() {
    use ovsdb_server::cond::Clause;
    let (mut hub, c) = setup(|_| {});
    let idl = &mut hub.clients[c].idl;
    let rows_before = idl.dump();
    let seq = idl.cond_seqno();
    assert_eq!(
        idl.set_condition("NoSuchTable", vec![Clause::Const(true)]),
        Err(UsageError::UnknownTable("NoSuchTable".into()))
    );
    assert_eq!(idl.cond_seqno(), seq);
    assert!(idl.take_outgoing().is_empty());
    assert_eq!(idl.txn_insert(99, None), Err(UsageError::NoSuchTable(99)));
    assert!(!idl.txn_is_open(), "a refused insert opens no transaction");
    // Out-of-range positions in the other builder calls are ignored.
    let a = idl.table_index("A").unwrap();
    let u = idl.row_uuids(a)[0];
    assert_eq!(
        idl.txn_write(a, u, 99, Datum::scalar(Atom::Integer(1))),
        WriteResult::Discarded
    );
    idl.txn_delete(99, u);
    idl.txn_verify(99, u, 0);
    idl.txn_partial(a, u, 99, PartialOp::SetInsert(Atom::Integer(1)));
    idl.txn_increment(99, u, 0);
    assert_eq!(idl.read(99, u, 0), Datum::default());
    assert!(!idl.txn_is_open());
    assert_eq!(idl.txn_commit(), Commit::Unchanged);
    // A valid condition still works afterwards.
    assert!(idl.set_condition("A", vec![Clause::Const(true)]).is_ok());
    assert_eq!(hub.clients[c].idl.dump(), rows_before);
}

/// Every mode call names the unknown table or column in a typed error and
/// changes nothing (before, they silently did nothing, so a typo in a
/// column name left the column omitted without a word).
#[test]
fn mode_calls_reject_unknown_names() {
    let meta = Arc::new(DbMeta::from_text(SCHEMA).unwrap());
    let mut idl = Idl::new(meta.clone(), false);
    let no_col = |c: &str| UsageError::UnknownColumn {
        table: "A".into(),
        column: c.into(),
    };
    let no_table = UsageError::UnknownTable("Nope".into());
    assert_eq!(idl.set_mode("A", "nmae", MONITOR), Err(no_col("nmae")));
    assert_eq!(idl.set_mode("Nope", "name", MONITOR), Err(no_table.clone()));
    assert_eq!(idl.add_column("A", "x"), Err(no_col("x")));
    assert_eq!(idl.add_column("Nope", "x"), Err(no_table.clone()));
    assert_eq!(idl.omit("A", "x"), Err(no_col("x")));
    assert_eq!(idl.omit("Nope", "name"), Err(no_table.clone()));
    assert_eq!(idl.omit_alert("A", "x"), Err(no_col("x")));
    assert_eq!(idl.track_add_column("A", "x"), Err(no_col("x")));
    assert_eq!(idl.set_write_changed_only("A", "x", true), Err(no_col("x")));
    assert_eq!(idl.add_table("Nope"), Err(no_table.clone()));
    assert_eq!(no_col("nmae").to_string(), "table 'A' has no column 'nmae'");
    // Nothing was turned on by the failed calls: no table is requested.
    assert_eq!(idl.monitor_requests(true), Json::Object(Default::default()));
    // Known names work and show up in the monitor request.
    idl.add_column("A", "name").unwrap();
    idl.set_mode("A", "n", MONITOR | ALERT).unwrap();
    assert_eq!(idl.mode("A", "name"), MONITOR | ALERT);
    idl.omit("A", "n").unwrap();
    assert_eq!(idl.mode("A", "n"), 0);
    let req = idl.monitor_requests(true);
    assert_eq!(
        req.get("A").and_then(|a| a.get("columns")).cloned(),
        Some(Json::Array(vec![Json::from("name")]))
    );
    assert!(req.get("B").is_none());
}
