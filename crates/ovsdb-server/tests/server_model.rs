//! The in-memory server model: transact semantics, commit-time checks,
//! monitor composition, coalescing and history.
#![cfg(not(target_arch = "wasm32"))]

use ovsdb::json::{parse, Json};
use ovsdb_server::{commit_record, Server, ServerOptions};

const SCHEMA: &str = r#"{"name":"m","version":"1.0.0","tables":{
 "R":{"isRoot":true,"indexes":[["name"]],"columns":{
   "name":{"type":"string"},
   "n":{"type":{"key":{"type":"integer","maxInteger":100}}},
   "s":{"type":{"key":"integer","min":0,"max":3}},
   "m":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}},
   "kids":{"type":{"key":{"type":"uuid","refTable":"K"},"min":0,"max":"unlimited"}},
   "w":{"type":{"key":{"type":"uuid","refTable":"R","refType":"weak"},"min":0,"max":"unlimited"}}}},
 "K":{"isRoot":false,"columns":{"v":{"type":"integer"},
   "sub":{"type":{"key":{"type":"uuid","refTable":"K"},"min":0,"max":1}}}}}}"#;

fn server(clustered: bool, history: usize) -> Server {
    Server::from_schema_text(
        SCHEMA,
        ServerOptions {
            clustered,
            seed: 3,
            history_max: history,
            ..Default::default()
        },
    )
    .unwrap()
}

fn tx(s: &mut Server, ops: &str) -> Json {
    let j = parse(ops.as_bytes()).unwrap();
    s.transact(j.as_array().unwrap()).0.result
}

fn err_of(r: &Json) -> Option<String> {
    r.as_array()?.iter().find_map(|x| {
        x.get("error").and_then(Json::as_str).map(|e| {
            format!(
                "{e}: {}",
                x.get("details").and_then(Json::as_str).unwrap_or("")
            )
        })
    })
}

#[test]
fn named_uuids_forward_references_and_gc_cascade() {
    let mut s = server(false, 100);
    let r = tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"a","kids":["named-uuid","k1"]}},
            {"op":"insert","table":"K","row":{"v":1,"sub":["named-uuid","k2"]},"uuid-name":"k1"},
            {"op":"insert","table":"K","row":{"v":2},"uuid-name":"k2"},
            {"op":"insert","table":"K","row":{"v":3}}]"#,
    );
    assert_eq!(err_of(&r), None, "{r}");
    // The unreferenced K row (v=3) was garbage-collected at commit.
    assert_eq!(s.row_count("K"), 2);
    // Dropping the only reference collects k1, then k2 (cascade).
    let r = tx(
        &mut s,
        r#"[{"op":"update","table":"R","where":[],"row":{"kids":["set",[]]}}]"#,
    );
    assert_eq!(err_of(&r), None);
    assert_eq!(s.row_count("K"), 0);
}

#[test]
fn referential_integrity_and_constraints_fail_the_whole_transaction() {
    let mut s = server(false, 100);
    let r = tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"a","kids":["uuid","00000000-0000-0000-0000-000000000001"]}}]"#,
    );
    let e = err_of(&r).unwrap();
    assert!(e.starts_with("referential integrity violation"), "{e}");
    assert_eq!(r.as_array().unwrap().len(), 2, "commit error appended: {r}");
    assert_eq!(s.row_count("R"), 0);
    // Unique index.
    tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"x"}}]"#,
    );
    let r = tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"x"}}]"#,
    );
    assert!(err_of(&r).unwrap().starts_with("constraint violation"));
    // Range constraint, checked when parsing.
    let r = tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"y","n":101}}]"#,
    );
    assert!(err_of(&r).is_some());
    // A failing op yields null for the ops after it.
    let r = tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"z"}},{"op":"bogus"},{"op":"comment","comment":"c"}]"#,
    );
    let a = r.as_array().unwrap();
    assert_eq!(a.len(), 3);
    assert!(a[2].is_null());
    assert_eq!(s.row_count("R"), 1);
    // abort
    let r = tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"q"}},{"op":"abort"}]"#,
    );
    assert!(err_of(&r).unwrap().starts_with("aborted"));
    assert_eq!(s.row_count("R"), 1);
    // assert without the lock
    let r = tx(&mut s, r#"[{"op":"assert","lock":"l"}]"#);
    assert!(err_of(&r).unwrap().starts_with("not owner"));
}

#[test]
fn mutate_select_wait_and_noop_drop() {
    let mut s = server(false, 100);
    tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"a","n":5,"s":["set",[1]],"m":["map",[["k","v"]]]}}]"#,
    );
    let r = tx(
        &mut s,
        r#"[{"op":"mutate","table":"R","where":[["name","==","a"]],"mutations":[
              ["n","*=",3],["s","insert",["set",[2,3]]],["s","delete",1],
              ["m","insert",["map",[["k","other"],["k2","v2"]]]],["m","delete",["set",["k"]]]]}]"#,
    );
    assert_eq!(r.to_string_compact(), r#"[{"count":1}]"#);
    let r = tx(
        &mut s,
        r#"[{"op":"select","table":"R","where":[["n",">=",15]],"columns":["n","s","m"]}]"#,
    );
    assert_eq!(
        r.to_string_compact(),
        r#"[{"rows":[{"n":15,"s":["set",[2,3]],"m":["map",[["k2","v2"]]]}]}]"#
    );
    // Size limit (max 3) and range (maxInteger 100) are enforced.
    let r = tx(
        &mut s,
        r#"[{"op":"mutate","table":"R","where":[],"mutations":[["s","insert",["set",[7,8]]]]}]"#,
    );
    assert!(err_of(&r).is_some());
    let r = tx(
        &mut s,
        r#"[{"op":"mutate","table":"R","where":[],"mutations":[["n","*=",100]]}]"#,
    );
    assert!(err_of(&r).is_some());
    // wait
    let ok = tx(
        &mut s,
        r#"[{"op":"wait","table":"R","timeout":0,"where":[["name","==","a"]],"columns":["n"],"until":"==","rows":[{"n":15}]}]"#,
    );
    assert_eq!(err_of(&ok), None);
    let bad = tx(
        &mut s,
        r#"[{"op":"wait","table":"R","timeout":0,"where":[["name","==","a"]],"columns":["n"],"until":"==","rows":[{"n":16}]}]"#,
    );
    assert!(err_of(&bad).unwrap().starts_with("timed out"));
    // An update that changes nothing commits nothing.
    let j = parse(br#"[{"op":"update","table":"R","where":[],"row":{"n":15}}]"#).unwrap();
    let (o, msgs) = s.transact(j.as_array().unwrap());
    assert_eq!(o.result.to_string_compact(), r#"[{"count":1}]"#);
    assert!(o.commit.is_none());
    assert!(msgs.is_empty());
}

fn monitor(s: &mut Server, sess: u64, method: &str, extra: &str) -> Json {
    let m = parse(
        format!(
            r#"{{"id":1,"method":"{method}","params":["m","mon",{{"R":{{"columns":["name","n","s"]}}}}{extra}]}}"#
        )
        .as_bytes(),
    )
    .unwrap();
    let out = s.handle(sess, &m);
    out.last().unwrap().1.get("result").cloned().unwrap()
}

#[test]
fn coalescing_while_a_session_is_held() {
    let mut s = server(false, 100);
    tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"old","n":1,"s":["set",[1]]}}]"#,
    );
    let sess = s.connect();
    monitor(&mut s, sess, "monitor_cond", "");
    s.set_hold(sess, true);
    tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"new","n":1}}]"#,
    );
    tx(
        &mut s,
        r#"[{"op":"update","table":"R","where":[["name","==","new"]],"row":{"n":2}}]"#,
    );
    tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"gone"}}]"#,
    );
    tx(
        &mut s,
        r#"[{"op":"delete","table":"R","where":[["name","==","gone"]]}]"#,
    );
    tx(
        &mut s,
        r#"[{"op":"mutate","table":"R","where":[["name","==","old"]],"mutations":[["s","insert",2]]}]"#,
    );
    tx(
        &mut s,
        r#"[{"op":"mutate","table":"R","where":[["name","==","old"]],"mutations":[["s","insert",3],["s","delete",1]]}]"#,
    );
    s.set_hold(sess, false);
    let out = s.flush(sess);
    assert_eq!(out.len(), 1);
    let tu = &out[0].1.get("params").unwrap().as_array().unwrap()[1];
    let rows = tu.get("R").unwrap().as_object().unwrap();
    assert_eq!(rows.len(), 2, "{tu}");
    let mut kinds: Vec<String> = rows.iter().map(|(_, r)| r.to_string_compact()).collect();
    kinds.sort();
    // insert+modify → one insert of the final value; insert+delete →
    // nothing; two modifies → one diff from the first old to the last new.
    assert_eq!(
        kinds,
        vec![
            r#"{"insert":{"name":"new","n":2}}"#.to_string(),
            r#"{"modify":{"s":["set",[1,2,3]]}}"#.to_string(),
        ]
    );
}

#[test]
fn history_is_trimmed_and_commit_records_use_diffs() {
    let mut s = server(true, 3);
    // Filler rows so that the history's atom budget (the database's own
    // atom count) is not what trims it here.
    let filler: Vec<String> = (0..30)
        .map(|i| {
            format!(r#"{{"op":"insert","table":"R","row":{{"name":"f{i}","s":["set",[1,2]]}}}}"#)
        })
        .collect();
    tx(&mut s, &format!("[{}]", filler.join(",")));
    tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"a","s":["set",[1,2]]}}]"#,
    );
    let first = s.last_txn_id();
    for k in 0..4 {
        tx(
            &mut s,
            &format!(
                r#"[{{"op":"update","table":"R","where":[["name","==","a"]],"row":{{"n":{k}}}}}]"#
            ),
        );
    }
    let sess = s.connect();
    let r = monitor(
        &mut s,
        sess,
        "monitor_cond_since",
        &format!(r#","{first}""#),
    );
    assert_eq!(
        r.as_array().unwrap()[0],
        Json::Bool(false),
        "trimmed out of history"
    );
    let recent = s.last_txn_id();
    let j = parse(br#"[{"op":"mutate","table":"R","where":[["name","==","a"]],"mutations":[["s","delete",1],["s","insert",3]]}]"#).unwrap();
    let (o, _) = s.transact(j.as_array().unwrap());
    let c = o.commit.unwrap();
    let rec = commit_record(&s.meta, &c, true).to_string_compact();
    assert!(rec.ends_with(r#":{"s":["set",[1,3]]}}}"#), "{rec}");
    let full = commit_record(&s.meta, &c, false).to_string_compact();
    assert!(full.ends_with(r#":{"s":["set",[2,3]]}}}"#), "{full}");
    let sess2 = s.connect();
    let r = monitor(
        &mut s,
        sess2,
        "monitor_cond_since",
        &format!(r#","{recent}""#),
    );
    let a = r.as_array().unwrap();
    assert_eq!(a[0], Json::Bool(true));
    assert_eq!(a[1].as_str().unwrap(), c.txn_id.to_string());
    assert!(a[2]
        .to_string_compact()
        .contains(r#""modify":{"s":["set",[1,3]]}"#));
}

#[test]
fn bad_requests_get_errors_not_panics() {
    let mut s = server(false, 100);
    let sess = s.connect();
    for m in [
        r#"{"id":1,"method":"transact","params":[]}"#,
        r#"{"id":1,"method":"transact","params":["m",5,{"op":"insert"},{"op":"insert","table":"nope"}]}"#,
        r#"{"id":1,"method":"transact","params":["m",{"op":"insert","table":"R","row":{"zz":1}}]}"#,
        r#"{"id":1,"method":"transact","params":["m",{"op":"update","table":"R","where":[["n","<","x"]],"row":{}}]}"#,
        r#"{"id":1,"method":"monitor_cond","params":["m"]}"#,
        r#"{"id":1,"method":"monitor_cond","params":["m",1,{"R":{"columns":["nope"]}}]}"#,
        r#"{"id":1,"method":"monitor_cond_change","params":[1,1,{}]}"#,
        r#"{"id":1,"method":"monitor_cond_since","params":["m",1,{"R":5},7]}"#,
        r#"{"id":1,"method":"nope","params":{}}"#,
        r#"{"id":1}"#,
        r#"[]"#,
    ] {
        let out = s.handle(sess, &parse(m.as_bytes()).unwrap());
        for (_, reply) in out {
            let r = reply
                .get("result")
                .map(|x| x.to_string_compact())
                .unwrap_or_default();
            assert!(
                !reply.get("error").map(Json::is_null).unwrap_or(true) || r.contains("error"),
                "{m} → {reply}"
            );
        }
    }
    assert_eq!(s.row_count("R"), 0);
}

#[test]
fn history_is_bounded_by_the_database_atom_count() {
    // One small row rewritten many times: the history may not hold more
    // atoms than the database, so it stays short (but never empty).
    let mut s = server(true, 100);
    tx(
        &mut s,
        r#"[{"op":"insert","table":"R","row":{"name":"a","s":["set",[1,2,3]]}}]"#,
    );
    for k in 0..50 {
        tx(
            &mut s,
            &format!(
                r#"[{{"op":"update","table":"R","where":[],"row":{{"n":{}}}}}]"#,
                k % 90 + 1
            ),
        );
    }
    assert!(s.history_len() >= 1);
    assert!(s.history_len() <= 2, "history {}", s.history_len());
    // With many rows, 50 small updates all fit (the bulk insert, as big as
    // the database itself, is the one trimmed).
    let mut s = server(true, 100);
    let many: Vec<String> = (0..60)
        .map(|i| {
            format!(r#"{{"op":"insert","table":"R","row":{{"name":"r{i}","s":["set",[1,2]]}}}}"#)
        })
        .collect();
    tx(&mut s, &format!("[{}]", many.join(",")));
    for k in 0..50 {
        tx(
            &mut s,
            &format!(
                r#"[{{"op":"update","table":"R","where":[["name","==","r1"]],"row":{{"n":{}}}}}]"#,
                k % 90 + 1
            ),
        );
    }
    assert_eq!(s.history_len(), 50);
}

/// A unique index names the same pair of rows whether the transaction
/// writes a few rows (only keys of written rows are tracked) or many (a map
/// of every key): the committed holder of the name first, then the first
/// written row, in UUID order, that repeats it.
#[test]
fn a_unique_index_names_the_first_duplicate_pair_few_or_many_rows() {
    for written in [3usize, 40] {
        let mut s = server(false, 0);
        let r = tx(
            &mut s,
            r#"[{"op":"insert","table":"R","row":{"name":"a"}},
                {"op":"insert","table":"R","row":{"name":"b"}}]"#,
        );
        let b = r.as_array().unwrap()[1]
            .get("uuid")
            .unwrap()
            .as_array()
            .unwrap()[1]
            .as_str()
            .unwrap()
            .to_string();
        // `written` new rows: two named "b", the others unique.
        let ops: Vec<String> = (0..written)
            .map(|i| {
                let name = if i == 1 || i + 1 == written {
                    "b".to_string()
                } else {
                    format!("n{i}")
                };
                format!(r#"{{"op":"insert","table":"R","row":{{"name":"{name}"}}}}"#)
            })
            .collect();
        let before = s.row_count("R");
        let r = tx(&mut s, &format!("[{}]", ops.join(",")));
        let rows = r.as_array().unwrap();
        let err = err_of(&r).expect("a duplicate name fails the transaction");
        assert_eq!(s.row_count("R"), before, "nothing committed");
        // The UUIDs the inserts would have had are in the results before
        // the error; the two named "b" are results 1 and written-1.
        let uuid = |i: usize| {
            rows[i]
                .get("uuid")
                .and_then(|u| u.as_array())
                .map(|u| u[1].as_str().unwrap().to_string())
        };
        let (x, y) = (uuid(1).unwrap(), uuid(written - 1).unwrap());
        let first_new = if x < y { x } else { y };
        assert!(
            err.ends_with(&format!("({b} and {first_new}).")),
            "{written} rows: {err}"
        );
    }
}

/// ovsdb-server 3.1 assesses weak references table by table, in the order
/// the tables joined the transaction. An `update` that writes the values a
/// row already has does not join it (execution.c, `update_row_cb`), a
/// `mutate` always does. Results checked against ovsdb-server 3.1.0: after
/// the first transaction B row b keeps its (dangling) reference to the
/// deleted A row x, because B joined first and b was assessed before x;
/// after the second, A joined first and b2 drops its reference to y.
#[test]
fn a_no_op_update_does_not_decide_where_its_table_joins_the_transaction() {
    const WEAK: &str = r#"{"name":"W","version":"1.0.0","tables":{
 "A":{"isRoot":true,"columns":{"n":{"type":"integer"}}},
 "B":{"isRoot":true,"columns":{"n":{"type":"integer"},
   "w":{"type":{"key":{"type":"uuid","refTable":"A","refType":"weak"},"min":0,"max":"unlimited"}}}}}}"#;
    let mut s = Server::from_schema_text(WEAK, ServerOptions::default()).unwrap();
    let (x, y) = (
        "00000001-0000-4000-8000-000000000001",
        "00000002-0000-4000-8000-000000000002",
    );
    let (b, b2) = (
        "00000003-0000-4000-8000-000000000003",
        "00000004-0000-4000-8000-000000000004",
    );
    let by = |u: &str| format!(r#"[["_uuid","==",["uuid","{u}"]]]"#);
    let r = tx(
        &mut s,
        &format!(
            r#"[{{"op":"insert","table":"A","uuid":"{x}","row":{{"n":1}}}},
                {{"op":"insert","table":"A","uuid":"{y}","row":{{"n":2}}}},
                {{"op":"insert","table":"B","uuid":"{b}","row":{{"n":0,"w":["uuid","{x}"]}}}},
                {{"op":"insert","table":"B","uuid":"{b2}","row":{{"n":0,"w":["uuid","{y}"]}}}}]"#
        ),
    );
    assert_eq!(err_of(&r), None, "{r}");
    let r = tx(
        &mut s,
        &format!(
            r#"[{{"op":"update","table":"A","where":{},"row":{{"n":2}}}},
                {{"op":"update","table":"B","where":{},"row":{{"n":1}}}},
                {{"op":"delete","table":"A","where":{}}}]"#,
            by(y),
            by(b),
            by(x)
        ),
    );
    assert_eq!(err_of(&r), None, "{r}");
    let r = tx(
        &mut s,
        &format!(
            r#"[{{"op":"mutate","table":"A","where":[],"mutations":[["n","+=",0]]}},
                {{"op":"update","table":"B","where":{},"row":{{"n":1}}}},
                {{"op":"delete","table":"A","where":{}}}]"#,
            by(b2),
            by(y)
        ),
    );
    assert_eq!(err_of(&r), None, "{r}");
    let r = tx(
        &mut s,
        r#"[{"op":"select","table":"B","where":[],"columns":["_uuid","w"]}]"#,
    );
    let rows = r.as_array().unwrap()[0].get("rows").unwrap().to_string();
    assert!(
        rows.contains(&format!(r#""w":["uuid","{x}"]"#)),
        "b keeps its reference to x: {rows}"
    );
    assert!(
        rows.contains(r#""w":["set",[]]"#),
        "b2 drops its reference to y: {rows}"
    );
}
