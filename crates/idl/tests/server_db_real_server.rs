//! The `_Server` database against the real ovsdb-server (Debian package,
//! a clustered OVN_Northbound on a unix socket in a temp dir):
//!
//! * the model's `_Server` rows, given the real cluster's cid, sid and
//!   index, equal `ovsdb-client dump _Server` column by column (the
//!   `schema` text included), its schema equals the real `get_schema`, and
//!   a `monitor_cond` on it and read-only `transact`s get the same replies;
//! * our replica's opt-in handshake (leader-only) passes on the real
//!   leader, monitors the data after it, and follows the real `_Server`
//!   updates (the index grows with every commit).
#![cfg(not(target_arch = "wasm32"))]

mod common;
#[path = "common/dump.rs"]
mod dump;
#[path = "../../ovsdb-server/tests/common/net.rs"]
mod net;

use common::filters::uuidfilt;
use dump::{parse_dump, replica_rows};
use idl::replica::{Event, Idl};
use net::{ensure_packages, run, Conn, Server, TempDir};
use ovsdb::json::{self, Json};
use ovsdb::uuid::Uuid;
use ovsdb_server::DbMeta;
use ovsdb_server::{DatabaseStatus, Server as Model, ServerOptions, SERVER_SCHEMA};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn nb_schema() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/samples/schemas/ovn-nb.ovsschema"),
    )
    .unwrap()
}

fn start(dir: &TempDir) -> Server {
    let schema = dir.0.join("nb.ovsschema");
    std::fs::write(&schema, nb_schema()).unwrap();
    let db = dir.0.join("nb.db");
    run(
        "ovsdb-tool",
        &[
            "create-cluster",
            db.to_str().unwrap(),
            schema.to_str().unwrap(),
            &format!("unix:{}", dir.0.join("nb.raft").display()),
        ],
    );
    let server = Server::start(&dir.0, &db).expect("ovsdb-server starts");
    // The socket accepts connections before the one-member cluster has
    // elected itself and applied its first entries: wait until `_Server`
    // reports the leader and stops changing.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = BTreeMap::new();
    loop {
        let rows = real_rows(&server);
        let nb = rows.get("OVN_Northbound");
        let ready = nb.is_some_and(|r| r["leader"] == "true" && r["connected"] == "true");
        if ready && rows == last {
            return server;
        }
        assert!(
            Instant::now() < deadline,
            "cluster did not settle: {rows:?}"
        );
        last = rows;
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `_Server.Database` rows of `ovsdb-client dump -f json`, by name, each
/// column as compact JSON.
fn real_rows(server: &Server) -> BTreeMap<String, BTreeMap<String, String>> {
    let text = run(
        "ovsdb-client",
        &["dump", "-f", "json", &server.remote(), "_Server"],
    );
    let j = json::parse(text.lines().next().unwrap().as_bytes()).unwrap();
    let heads: Vec<&str> = j
        .get("headings")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    let mut out = BTreeMap::new();
    for r in j.get("data").and_then(Json::as_array).unwrap() {
        let cols: BTreeMap<String, String> = heads
            .iter()
            .zip(r.as_array().unwrap())
            .filter(|(h, _)| **h != "_uuid")
            .map(|(h, v)| (h.to_string(), v.to_string_compact()))
            .collect();
        out.insert(cols["name"].trim_matches('"').to_string(), cols);
    }
    out
}

fn model_rows(model: &Model) -> BTreeMap<String, BTreeMap<String, String>> {
    let d = model.server_db().unwrap().dump();
    let mut out = BTreeMap::new();
    for (_, row) in d.get("Database").unwrap().as_object().unwrap().iter() {
        let cols: BTreeMap<String, String> = row
            .as_object()
            .unwrap()
            .iter()
            .map(|(c, v)| (c.to_string(), v.to_string_compact()))
            .collect();
        out.insert(cols["name"].trim_matches('"').to_string(), cols);
    }
    out
}

/// A reply with the row UUID keys of table updates replaced by the rows'
/// order by content, keys sorted, UUIDs numbered.
fn canon(reply: &Json) -> String {
    let mut m = reply.sorted_recursive();
    if let Some(Json::Object(o)) = m.as_object_mut().and_then(|o| o.get_mut("result")) {
        for (_, rows) in o.iter_mut() {
            if let Json::Object(r) = rows {
                let mut v: Vec<Json> = r
                    .iter()
                    .map(|(u, ru)| Json::Array(vec![Json::from(u), ru.clone()]))
                    .collect();
                v.sort_by_key(|x| x.as_array().unwrap()[1].to_string_compact());
                *rows = Json::Array(v);
            }
        }
    }
    uuidfilt(&m.to_string_compact())
}

fn uuid_col(v: &str) -> Uuid {
    let j = json::parse(v.as_bytes()).unwrap();
    Uuid::parse(j.as_array().unwrap()[1].as_str().unwrap()).unwrap()
}

#[test]
fn server_db_rows_schema_and_replies_match_the_real_server() {
    assert!(ensure_packages(), "openvswitch packages are not available");
    let dir = TempDir::new("serverdb");
    let server = start(&dir);
    let real = real_rows(&server);
    let nb = &real["OVN_Northbound"];
    assert_eq!(nb["model"], r#""clustered""#);
    let index: u64 = nb["index"].parse().unwrap();
    let status = DatabaseStatus::clustered(
        uuid_col(&nb["cid"]),
        uuid_col(&nb["sid"]),
        nb["leader"] == "true",
        nb["connected"] == "true",
        index,
    );
    let mut model = Model::from_schema_text(
        &nb_schema(),
        ServerOptions {
            clustered: true,
            ..Default::default()
        },
    )
    .unwrap();
    model.enable_server_db(status);
    // Every column of both rows, the schema text included.
    let mine = model_rows(&model);
    assert_eq!(
        mine.keys().collect::<Vec<_>>(),
        real.keys().collect::<Vec<_>>()
    );
    for (db, cols) in &real {
        for (c, v) in cols {
            let m = mine[db].get(c).map(String::as_str).unwrap_or("");
            let at = m.bytes().zip(v.bytes()).take_while(|(a, b)| a == b).count();
            assert!(
                m == v,
                "{db}.{c} differs at byte {at}: model ...{} real ...{}",
                &m[at.saturating_sub(40)..(at + 40).min(m.len())],
                &v[at.saturating_sub(40)..(at + 40).min(v.len())]
            );
        }
    }
    assert_eq!(mine, real);

    let mut conn = Conn::connect(&server.sock).unwrap();
    let s = model.connect();
    let ask = |conn: &mut Conn, model: &mut Model, method: &str, params: &str| -> (Json, Json) {
        let p = json::parse(params.as_bytes()).unwrap();
        let real = conn.call(method, p.clone()).expect("reply");
        let mut req = ovsdb::json::Object::new();
        req.insert("method", Json::from(method));
        req.insert("params", p);
        req.insert("id", real.get("id").cloned().unwrap());
        let mut out = model.handle(s, &Json::Object(req));
        assert_eq!(out.len(), 1, "{out:?}");
        (real, out.remove(0).1)
    };
    let (r, m) = ask(&mut conn, &mut model, "get_schema", r#"["_Server"]"#);
    assert_eq!(
        r.get("result").unwrap().to_string_compact(),
        SERVER_SCHEMA,
        "the real _Server schema"
    );
    assert_eq!(m, r);
    for (method, params) in [
        (
            "monitor_cond",
            r#"["_Server",["monid","_Server"],{"Database":[{"columns":["name","model","connected","leader","schema","cid","index"]}]}]"#,
        ),
        (
            "transact",
            r#"["_Server",{"op":"select","table":"Database","where":[["model","==","clustered"]],"columns":["name","leader","connected"]}]"#,
        ),
        (
            "transact",
            r#"["_Server",{"op":"delete","table":"Database","where":[["name","==","none"]]},{"op":"comment","comment":"c"}]"#,
        ),
        (
            "transact",
            r#"["_Server",{"op":"update","table":"Database","where":[],"row":{"leader":false}}]"#,
        ),
        ("list_dbs", "[]"),
    ] {
        let (r, m) = ask(&mut conn, &mut model, method, params);
        assert_eq!(canon(&m), canon(&r), "{method} {params}");
    }
}

/// Feeds every message the server sent to the replica and sends what the
/// replica queues, until `done` holds.
fn pump(conn: &mut Conn, idl: &mut Idl, done: impl Fn(&Idl) -> bool) -> Vec<Event> {
    let mut events = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done(idl) {
        assert!(Instant::now() < deadline, "replica did not get there");
        for m in idl.take_outgoing() {
            conn.send(&m).unwrap();
        }
        if let Some(msg) = conn.recv(Duration::from_millis(100)).unwrap() {
            events.extend(idl.receive(&msg).expect("replica stays consistent"));
        }
    }
    events
}

#[test]
fn handshake_passes_on_the_real_leader_and_follows_server_updates() {
    assert!(ensure_packages(), "openvswitch packages are not available");
    let dir = TempDir::new("handshake");
    let server = start(&dir);
    let meta = Arc::new(DbMeta::from_text(&nb_schema()).unwrap());
    let mut idl = Idl::new(meta.clone(), true);
    idl.enable_server_handshake(true);
    let mut conn = Conn::connect(&server.sock).unwrap();
    let first = idl.connect();
    assert_eq!(first.get("method"), Some(&Json::from("get_schema")));
    conn.send(&first).unwrap();
    let events = pump(&mut conn, &mut idl, Idl::is_monitoring);
    assert!(
        events.contains(&Event::Monitoring { found: false }),
        "{events:?}"
    );
    assert_eq!(idl.server_problem(), None);
    let row = idl.server_row().expect("the _Server row").clone();
    assert_eq!(row.model.as_deref(), Some("clustered"));
    assert_eq!(row.leader, Some(true));
    assert_eq!(row.connected, Some(true));
    let index0 = row.index.expect("a clustered index");
    assert_eq!(idl.min_index(), index0);
    // The schema the server reports is the one we replicate.
    let reported = DbMeta::from_text(row.schema.as_deref().unwrap()).unwrap();
    assert_eq!(reported.name, "OVN_Northbound");
    assert_eq!(reported.tables.len(), meta.tables.len());

    // A commit moves the real index; _Server tells the replica.
    run(
        "ovn-nbctl",
        &[&format!("--db={}", server.remote()), "ls-add", "sw0"],
    );
    let want = parse_dump(
        &meta,
        &run(
            "ovsdb-client",
            &["dump", "-f", "json", &server.remote(), "OVN_Northbound"],
        ),
    );
    pump(&mut conn, &mut idl, |i| {
        i.min_index() > index0 && replica_rows(i) == want
    });
    assert!(idl.server_row().unwrap().index.unwrap() > index0);
    assert_eq!(idl.server_problem(), None);
}
