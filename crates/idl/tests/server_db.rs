//! The `_Server` database of the server model and the replica's opt-in
//! `_Server` handshake (C IDL behaviour), on the model. The real server's
//! `_Server` is compared with the model in `server_db_real_server.rs`.
#![cfg(not(target_arch = "wasm32"))]

use idl::hub::Hub;
use idl::replica::{Event, Idl, ServerProblem};
use ovsdb::json::{parse, Json};
use ovsdb::uuid::Uuid;
use ovsdb_server::DbMeta;
use ovsdb_server::{DatabaseStatus, DbModel, Server, ServerOptions, SessionId, SERVER_SCHEMA};
use std::sync::Arc;

const SCHEMA: &str = r#"{"name":"db","version":"1.0.0","tables":{
 "T":{"isRoot":true,"columns":{"name":{"type":"string"}}}}}"#;

fn meta() -> DbMeta {
    DbMeta::from_text(SCHEMA).unwrap()
}

fn u(n: u128) -> Uuid {
    Uuid::parse(&format!("{:08x}-0000-0000-0000-{:012x}", n as u32, n)).unwrap()
}

fn clustered(leader: bool, connected: bool, index: u64) -> DatabaseStatus {
    DatabaseStatus::clustered(u(1), u(2), leader, connected, index)
}

fn server(status: Option<DatabaseStatus>) -> Server {
    let mut s = Server::new(
        meta(),
        ServerOptions {
            clustered: true,
            ..Default::default()
        },
    );
    if let Some(st) = status {
        s.enable_server_db(st);
    }
    s
}

fn j(s: &str) -> Json {
    parse(s.as_bytes()).unwrap()
}

fn call(srv: &mut Server, s: SessionId, msg: &str) -> Vec<Json> {
    srv.handle(s, &j(msg)).into_iter().map(|(_, m)| m).collect()
}

#[test]
fn server_db_answers_schema_list_select_and_refuses_writes() {
    let mut srv = server(Some(clustered(true, true, 7)));
    let s = srv.connect();
    let r = call(&mut srv, s, r#"{"method":"list_dbs","params":[],"id":1}"#);
    assert_eq!(r[0].get("result"), Some(&j(r#"["db","_Server"]"#)));
    let r = call(
        &mut srv,
        s,
        r#"{"method":"get_schema","params":["_Server"],"id":2}"#,
    );
    assert_eq!(
        r[0].get("result").unwrap().to_string_compact(),
        SERVER_SCHEMA
    );
    let r = call(
        &mut srv,
        s,
        r#"{"method":"transact","params":["_Server",{"op":"select","table":"Database","where":[["name","==","db"]],"columns":["model","connected","leader","index","cid","sid"]}],"id":3}"#,
    );
    assert_eq!(
        r[0].get("result").unwrap().to_string_compact(),
        format!(
            r#"[{{"rows":[{{"model":"clustered","connected":true,"leader":true,"index":7,"cid":["uuid","{}"],"sid":["uuid","{}"]}}]}}]"#,
            u(1),
            u(2)
        )
    );
    let r = call(
        &mut srv,
        s,
        r#"{"method":"transact","params":["_Server",{"op":"delete","table":"Database","where":[]},{"op":"comment","comment":"x"}],"id":4}"#,
    );
    assert_eq!(
        r[0].get("result").unwrap().to_string_compact(),
        r#"[{"error":"not allowed","details":"delete operation not allowed on table in reserved database _Server"},null]"#
    );
    // The row is still there; the data database is unaffected.
    let rows = srv.server_db().unwrap().dump();
    assert_eq!(rows.get("Database").unwrap().as_object().unwrap().len(), 2);
    let r = call(
        &mut srv,
        s,
        r#"{"method":"transact","params":["db",{"op":"insert","table":"T","row":{"name":"a"}}],"id":5}"#,
    );
    assert!(r[0].get("result").unwrap().as_array().unwrap()[0]
        .get("uuid")
        .is_some());
}

#[test]
fn server_db_monitor_follows_the_status_set_by_the_caller() {
    let mut srv = server(Some(clustered(true, true, 7)));
    let s = srv.connect();
    let r = call(
        &mut srv,
        s,
        r#"{"method":"monitor_cond","params":["_Server",["monid","_Server"],{"Database":[{"columns":["name","model","connected","leader","index"]}]}],"id":1}"#,
    );
    let initial = r[0].get("result").unwrap().get("Database").unwrap();
    let mut rows: Vec<String> = initial
        .as_object()
        .unwrap()
        .iter()
        .map(|(_, v)| v.sorted_recursive().to_string_compact())
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            r#"{"initial":{"connected":true,"index":7,"leader":true,"model":"clustered","name":"db"}}"#,
            r#"{"initial":{"connected":true,"leader":true,"model":"standalone","name":"_Server"}}"#,
        ]
    );
    // The same monitor id cannot be used for the other database.
    let r = call(
        &mut srv,
        s,
        r#"{"method":"monitor_cond","params":["db",["monid","_Server"],{"T":[{}]}],"id":2}"#,
    );
    assert_eq!(r[0].get("error"), Some(&Json::from("duplicate monitor ID")));
    // The leader steps down: one update2 with the changed columns.
    let out = srv.set_database_status(clustered(false, true, 9));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, s);
    let p = out[0].1.get("params").unwrap().as_array().unwrap();
    assert_eq!(p[0], j(r#"["monid","_Server"]"#));
    let modify = p[1].get("Database").unwrap().as_object().unwrap();
    assert_eq!(modify.len(), 1);
    assert_eq!(
        modify
            .iter()
            .next()
            .unwrap()
            .1
            .sorted_recursive()
            .to_string_compact(),
        r#"{"modify":{"index":9,"leader":false}}"#
    );
    // monitor_cancel reaches the _Server monitor.
    let r = call(
        &mut srv,
        s,
        r#"{"method":"monitor_cancel","params":[["monid","_Server"]],"id":3}"#,
    );
    assert_eq!(r[0].get("result"), Some(&j("{}")));
    assert!(srv
        .set_database_status(clustered(true, true, 10))
        .is_empty());
    assert_eq!(srv.database_status(), Some(clustered(true, true, 10)));
}

/// Drives a replica against a model server by hand; returns the methods
/// the replica sent and its events.
fn handshake(srv: &mut Server, idl: &mut Idl) -> (Vec<String>, Vec<Event>) {
    let s = srv.connect();
    let mut sent = Vec::new();
    let mut events = Vec::new();
    let mut queue = vec![idl.connect()];
    while let Some(m) = queue.pop() {
        sent.push(format!(
            "{} {}",
            m.get("method").and_then(Json::as_str).unwrap(),
            m.get("params").unwrap().as_array().unwrap()[0]
        ));
        for (_, r) in srv.handle(s, &m) {
            events.extend(idl.receive(&r).unwrap());
        }
        queue.extend(idl.take_outgoing());
    }
    (sent, events)
}

#[test]
fn handshake_checks_the_server_row_before_monitoring() {
    let mut srv = server(Some(clustered(true, true, 7)));
    let mut idl = Idl::new(Arc::new(meta()), true);
    idl.enable_server_handshake(true);
    let (sent, events) = handshake(&mut srv, &mut idl);
    assert_eq!(
        sent,
        [
            r#"get_schema "_Server""#,
            r#"monitor_cond "_Server""#,
            r#"monitor_cond_since "db""#
        ]
    );
    assert!(idl.is_monitoring());
    assert!(events.contains(&Event::Monitoring { found: false }));
    let row = idl.server_row().unwrap();
    assert_eq!(row.model.as_deref(), Some("clustered"));
    assert_eq!(row.index, Some(7));
    assert_eq!(row.cid, Some(u(1)));
    assert!(row.schema.as_deref().unwrap().contains("\"T\""));
    assert_eq!(idl.min_index(), 7);
    assert_eq!(idl.server_problem(), None);
}

#[test]
fn followers_are_refused_in_leader_only_mode_and_accepted_otherwise() {
    let mut srv = server(Some(clustered(false, true, 7)));
    let mut idl = Idl::new(Arc::new(meta()), true);
    idl.enable_server_handshake(true);
    let (sent, events) = handshake(&mut srv, &mut idl);
    assert_eq!(sent.len(), 2, "no data monitor request: {sent:?}");
    assert_eq!(events, [Event::ServerUnusable(ServerProblem::NotLeader)]);
    assert!(!idl.is_monitoring());
    assert_eq!(idl.server_problem(), Some(&ServerProblem::NotLeader));
    // Not leader-only: the same follower is fine.
    idl.disconnect();
    idl.enable_server_handshake(false);
    let (sent, _) = handshake(&mut srv, &mut idl);
    assert_eq!(sent.len(), 3);
    assert!(idl.is_monitoring());
    assert_eq!(idl.server_problem(), None);
    // Switching leader-only on while connected re-checks at once.
    assert_eq!(
        idl.set_leader_only(true),
        [Event::ServerUnusable(ServerProblem::NotLeader)]
    );
}

#[test]
fn a_refused_server_that_becomes_usable_is_monitored_after_all() {
    let mut idl = Idl::new(Arc::new(meta()), true);
    idl.enable_server_handshake(true);
    let mut hub = Hub::new(server(Some(clustered(false, true, 3))));
    let c = hub.add(idl).unwrap();
    assert_eq!(
        hub.clients[c].idl.server_problem(),
        Some(&ServerProblem::NotLeader)
    );
    assert!(!hub.clients[c].idl.is_monitoring());
    // The caller stays; the member wins an election.
    let out = hub.server.set_database_status(clustered(true, true, 4));
    let ev = hub.route(out, c).unwrap();
    assert!(ev.contains(&Event::Monitoring { found: false }), "{ev:?}");
    assert!(hub.clients[c].idl.is_monitoring());
    assert_eq!(hub.clients[c].idl.server_problem(), None);
    assert_eq!(hub.clients[c].idl.min_index(), 4);
}

#[test]
fn status_changes_while_monitoring_are_reported() {
    let mut idl = Idl::new(Arc::new(meta()), true);
    idl.enable_server_handshake(true);
    let mut hub = Hub::new(server(Some(clustered(true, true, 3))));
    let c = hub.add(idl).unwrap();
    assert!(hub.clients[c].idl.is_monitoring());
    // A commit and a higher index: still fine, the client remembers it.
    let out = hub.server.set_database_status(clustered(true, true, 12));
    assert!(hub.route(out, c).unwrap().is_empty());
    assert_eq!(hub.clients[c].idl.min_index(), 12);
    // The member loses its cluster.
    let out = hub.server.set_database_status(clustered(true, false, 12));
    assert_eq!(
        hub.route(out, c).unwrap(),
        [Event::ServerUnusable(ServerProblem::NotConnected)]
    );
    assert_eq!(
        hub.clients[c].idl.server_problem(),
        Some(&ServerProblem::NotConnected)
    );
    // Another member that is behind (index 5 < 12) is stale...
    let mut behind = server(Some(clustered(true, true, 5)));
    let idl = &mut hub.clients[c].idl;
    idl.disconnect();
    let (_, events) = handshake(&mut behind, idl);
    assert_eq!(
        events,
        [Event::ServerUnusable(ServerProblem::Stale {
            index: 5,
            min_index: 12
        })]
    );
    // ...until the client forgets what it saw.
    idl.disconnect();
    idl.reset_min_index();
    let (_, events) = handshake(&mut behind, idl);
    assert!(events.contains(&Event::Monitoring { found: false }));
}

#[test]
fn relays_standalone_missing_rows_and_old_servers() {
    let relay = DatabaseStatus {
        model: DbModel::Relay,
        connected: true,
        leader: false,
        has_schema: true,
        cid: None,
        sid: None,
        index: None,
    };
    let check = |status: Option<DatabaseStatus>, leader_only: bool, db: &str| {
        let mut srv = server(status);
        let text = SCHEMA.replace("\"db\"", &format!("\"{db}\""));
        let mut idl = Idl::new(Arc::new(DbMeta::from_text(&text).unwrap()), true);
        idl.enable_server_handshake(leader_only);
        let (_, events) = handshake(&mut srv, &mut idl);
        (idl.server_problem().cloned(), idl.is_monitoring(), events)
    };
    assert_eq!(
        check(Some(relay), true, "db").0,
        Some(ServerProblem::NotLeader)
    );
    assert_eq!(check(Some(relay), false, "db").0, None);
    let relay_down = DatabaseStatus {
        connected: false,
        ..relay
    };
    assert_eq!(
        check(Some(relay_down), false, "db").0,
        Some(ServerProblem::NotConnected)
    );
    // Standalone: leader-only does not matter.
    let (p, monitoring, _) = check(Some(DatabaseStatus::standalone()), true, "db");
    assert_eq!((p, monitoring), (None, true));
    // A member that has not joined yet has no schema.
    let joining = DatabaseStatus {
        has_schema: false,
        ..clustered(false, false, 0)
    };
    assert_eq!(
        check(Some(joining), false, "db").0,
        Some(ServerProblem::NoSchema)
    );
    // The server does not serve this database at all.
    assert_eq!(
        check(Some(DatabaseStatus::standalone()), false, "other").0,
        Some(ServerProblem::NoDatabase)
    );
    // No _Server (get_schema fails): the server is used directly.
    let (p, monitoring, events) = check(None, true, "db");
    assert_eq!((p, monitoring), (None, true));
    assert!(events.contains(&Event::Monitoring { found: false }));
}
