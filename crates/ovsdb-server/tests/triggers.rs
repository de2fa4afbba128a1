//! Transactions that wait (triggers) in the server model, on a virtual
//! clock: exact replies, their order and timing. The same behaviour is
//! checked against the real ovsdb-server by `triggers_real_server.rs`.
#![cfg(not(target_arch = "wasm32"))]

use ovsdb::json::{parse, Json};
use ovsdb_server::{PendingTransaction, Server, ServerOptions, SessionId};

const SCHEMA: &str = r#"{"name":"db","version":"1.0.0","tables":{
 "T":{"isRoot":true,"columns":{"name":{"type":"string"},"n":{"type":"integer"}}}}}"#;

fn server() -> Server {
    Server::from_schema_text(SCHEMA, ServerOptions::default()).unwrap()
}

fn j(s: &str) -> Json {
    parse(s.as_bytes()).unwrap()
}

/// `wait` until the rows named `name` are exactly `rows`.
fn wait(name: &str, rows: &str, timeout: Option<i64>) -> String {
    let t = timeout
        .map(|t| format!(",\"timeout\":{t}"))
        .unwrap_or_default();
    format!(
        r#"{{"op":"wait","table":"T","where":[["name","==","{name}"]],"columns":["name"],"until":"==","rows":{rows}{t}}}"#
    )
}

fn insert(name: &str) -> String {
    format!(r#"{{"op":"insert","table":"T","row":{{"name":"{name}"}}}}"#)
}

fn transact(id: i64, ops: &[String]) -> Json {
    j(&format!(
        r#"{{"method":"transact","params":["db",{}],"id":{id}}}"#,
        ops.join(",")
    ))
}

/// Messages for session `s`, compact.
fn to(out: &[(SessionId, Json)], s: SessionId) -> Vec<String> {
    out.iter()
        .filter(|(x, _)| *x == s)
        .map(|(_, m)| m.to_string_compact())
        .collect()
}

fn select_names(srv: &mut Server) -> Vec<String> {
    let (o, _) = srv.transact(&[j(
        r#"{"op":"select","table":"T","where":[],"columns":["name"]}"#,
    )]);
    let mut v: Vec<String> = o.result.as_array().unwrap()[0]
        .get("rows")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .map(|r| r.get("name").and_then(Json::as_str).unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn timeout_zero_fails_at_once_with_the_where_clause_message() {
    let mut srv = server();
    let a = srv.connect();
    let out = srv.handle(
        a,
        &transact(1, &[wait("a", r#"[{"name":"a"}]"#, Some(0)), insert("x")]),
    );
    assert_eq!(
        to(&out, a),
        [
            r#"{"id":1,"result":[{"error":"timed out","details":"\"where\" clause test failed"},null],"error":null}"#
        ]
    );
    assert!(srv.pending_transactions().is_empty());
    assert_eq!(select_names(&mut srv), Vec::<String>::new());
}

#[test]
fn a_wait_with_timeout_waits_and_expires_on_the_virtual_clock() {
    let mut srv = server();
    let a = srv.connect();
    srv.advance(1000);
    let out = srv.handle(
        a,
        &transact(2, &[wait("a", r#"[{"name":"a"}]"#, Some(300)), insert("x")]),
    );
    assert!(out.is_empty(), "no reply while waiting: {out:?}");
    assert_eq!(
        srv.pending_transactions(),
        [PendingTransaction {
            session: a,
            id: Json::Integer(2),
            created_ms: 1000,
            deadline_ms: Some(1300),
        }]
    );
    assert!(srv.advance(1299).is_empty());
    let out = srv.advance(1301);
    assert_eq!(
        to(&out, a),
        [
            r#"{"id":2,"result":[{"error":"timed out","details":"\"wait\" timed out after 301 ms"},null],"error":null}"#
        ]
    );
    assert!(srv.pending_transactions().is_empty());
    // The clock never goes back.
    srv.advance(5);
    assert_eq!(srv.now_ms(), 1301);
}

#[test]
fn a_wait_without_timeout_runs_when_another_commit_satisfies_it() {
    let mut srv = server();
    let a = srv.connect();
    let b = srv.connect();
    let mon = j(
        r#"{"method":"monitor_cond","params":["db","m",{"T":[{"columns":["name"]}]}],"id":"mon"}"#,
    );
    srv.handle(a, &mon);
    let out = srv.handle(
        a,
        &transact(3, &[wait("a", r#"[{"name":"a"}]"#, None), insert("y")]),
    );
    assert!(out.is_empty());
    // Hours later it is still waiting: no timeout means forever.
    assert!(srv.advance(10_000_000).is_empty());
    assert_eq!(srv.pending_transactions()[0].deadline_ms, None);
    // A commit that does not satisfy the wait leaves it waiting.
    let out = srv.handle(b, &transact(1, &[insert("other")]));
    assert_eq!(to(&out, b).len(), 1);
    assert_eq!(to(&out, a).len(), 1, "a sees the insert: {out:?}");
    assert_eq!(srv.pending_transactions().len(), 1);
    // This one does: b's reply first, then a's monitor gets both inserts
    // in one update2 and the waiting transaction's reply follows.
    let out = srv.handle(b, &transact(2, &[insert("a")]));
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[0].0, b);
    assert!(out[0].1.get("result").is_some());
    assert_eq!(out[1].0, a);
    assert_eq!(
        out[1].1.get("method").and_then(Json::as_str),
        Some("update2")
    );
    let rows = out[1].1.get("params").unwrap().as_array().unwrap()[1]
        .get("T")
        .unwrap()
        .as_object()
        .unwrap()
        .len();
    assert_eq!(rows, 2);
    assert_eq!(out[2].0, a);
    let r = out[2].1.get("result").unwrap().as_array().unwrap();
    assert_eq!(out[2].1.get("id"), Some(&Json::Integer(3)));
    assert_eq!(r[0], j("{}"));
    assert!(r[1].get("uuid").is_some());
    assert!(srv.pending_transactions().is_empty());
    assert_eq!(select_names(&mut srv), ["a", "other", "y"]);
}

#[test]
fn duplicate_ids_cancel_and_disconnect() {
    let mut srv = server();
    let a = srv.connect();
    let w = transact(4, &[wait("a", r#"[{"name":"a"}]"#, None)]);
    assert!(srv.handle(a, &w).is_empty());
    assert_eq!(
        to(&srv.handle(a, &w), a),
        [
            r#"{"id":4,"error":{"error":"syntax error","details":"transact: duplicate request ID","syntax":"[\"db\",{\"columns\":[\"name\"],\"op\":\"wait\",\"rows\":[{\"name\":\"a\"}],\"table\":\"T\",\"until\":\"==\",\"where\":[[\"name\",\"==\",\"a\"]]}]"}}"#
        ]
    );
    // The same id in another session is another transaction.
    let b = srv.connect();
    assert!(srv.handle(b, &w).is_empty());
    assert_eq!(srv.pending_transactions().len(), 2);
    // `cancel` is a notification: the trigger goes without a reply...
    let cancel = j(r#"{"method":"cancel","params":[4],"id":null}"#);
    assert!(srv.handle(a, &cancel).is_empty());
    assert_eq!(srv.pending_transactions().len(), 1);
    // ...as a request it is an unknown method.
    assert_eq!(
        to(
            &srv.handle(b, &j(r#"{"method":"cancel","params":[4],"id":5}"#)),
            b
        ),
        [r#"{"id":5,"error":"unknown method"}"#]
    );
    // A db-change-aware session gets a "canceled" reply.
    let aware = j(r#"{"method":"set_db_change_aware","params":[true],"id":6}"#);
    assert_eq!(
        to(&srv.handle(b, &aware), b),
        [r#"{"id":6,"result":{},"error":null}"#]
    );
    assert_eq!(
        to(&srv.handle(b, &cancel), b),
        [r#"{"id":4,"error":"canceled"}"#]
    );
    assert!(srv.pending_transactions().is_empty());
    // A disconnect drops the session's waiting transactions unanswered:
    // the insert never happens even once the wait would be satisfied.
    let c = srv.connect();
    let out = srv.handle(
        c,
        &transact(1, &[wait("zz", r#"[{"name":"zz"}]"#, None), insert("z2")]),
    );
    assert!(out.is_empty());
    srv.disconnect(c);
    assert!(srv.pending_transactions().is_empty());
    srv.handle(a, &transact(7, &[insert("zz")]));
    assert_eq!(select_names(&mut srv), ["zz"]);
}

#[test]
fn the_smallest_timeout_of_the_waits_run_so_far_is_the_deadline() {
    let mut srv = server();
    let a = srv.connect();
    srv.handle(a, &transact(1, &[insert("a")]));
    // First wait satisfied (timeout 5000), second not (timeout 200).
    let out = srv.handle(
        a,
        &transact(
            8,
            &[
                wait("a", r#"[{"name":"a"}]"#, Some(5000)),
                wait("a", "[]", Some(200)),
            ],
        ),
    );
    assert!(out.is_empty());
    assert_eq!(srv.pending_transactions()[0].deadline_ms, Some(200));
    assert_eq!(
        to(&srv.advance(200), a),
        [
            r#"{"id":8,"result":[{},{"error":"timed out","details":"\"wait\" timed out after 200 ms"}],"error":null}"#
        ]
    );
    // A negative timeout is a syntax error, at once, naming the value (as
    // the real server does: triggers_real_server.rs).
    let out = srv.handle(a, &transact(9, &[wait("a", "[]", Some(-1))]));
    assert_eq!(
        to(&out, a),
        [
            r#"{"id":9,"result":[{"error":"syntax error","details":"timeout must be nonnegative","syntax":"-1"}],"error":null}"#
        ]
    );
}

#[test]
fn chained_triggers_and_commits_applied_from_a_log() {
    let mut srv = server();
    let a = srv.connect();
    let b = srv.connect();
    // a: when "a" exists insert "b"; b: when "b" exists insert "c".
    assert!(srv
        .handle(
            a,
            &transact(1, &[wait("a", r#"[{"name":"a"}]"#, None), insert("b")])
        )
        .is_empty());
    assert!(srv
        .handle(
            b,
            &transact(
                1,
                &[wait("b", r#"[{"name":"b"}]"#, Some(60_000)), insert("c")]
            )
        )
        .is_empty());
    // A session-less transaction re-runs the triggers too; each commit
    // can satisfy the next one.
    let (_, out) = srv.transact(&[j(&insert("a"))]);
    assert_eq!(to(&out, a).len(), 1);
    assert_eq!(to(&out, b).len(), 1);
    assert_eq!(select_names(&mut srv), ["a", "b", "c"]);
    // A commit installed from a log record does not run them by itself
    // (apply_record's behaviour is unchanged); run_triggers does.
    assert!(srv
        .handle(
            a,
            &transact(2, &[wait("d", r#"[{"name":"d"}]"#, None), insert("e")])
        )
        .is_empty());
    let rec = j(r#"{"T":{"00000000-0000-0000-0000-0000000000dd":{"name":"d"}}}"#);
    let (commit, msgs) = srv.apply_record(&rec).unwrap();
    assert!(commit.is_some());
    assert!(msgs.is_empty());
    assert_eq!(srv.pending_transactions().len(), 1);
    let out = srv.run_triggers();
    assert_eq!(to(&out, a).len(), 1);
    assert!(srv.pending_transactions().is_empty());
    assert_eq!(select_names(&mut srv), ["a", "b", "c", "d", "e"]);
}

#[test]
fn session_less_and_prepared_transactions_cannot_wait() {
    let mut srv = server();
    let (o, _) = srv.transact(&[j(&wait("a", r#"[{"name":"a"}]"#, Some(0)))]);
    assert_eq!(
        o.result.to_string_compact(),
        r#"[{"error":"timed out","details":"\"where\" clause test failed"}]"#
    );
    let (o, _) = srv.transact(&[j(&wait("a", r#"[{"name":"a"}]"#, None))]);
    assert_eq!(
        o.result.to_string_compact(),
        r#"[{"error":"timed out","details":"\"wait\" timed out"}]"#
    );
    let o = srv.prepare(&[j(&wait("a", r#"[{"name":"a"}]"#, Some(0)))]);
    assert_eq!(
        o.result.to_string_compact(),
        r#"[{"error":"timed out","details":"\"wait\" timed out"}]"#
    );
    assert!(srv.pending_transactions().is_empty());
}
