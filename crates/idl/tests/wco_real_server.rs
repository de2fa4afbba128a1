//! The write-changed-only effect on a real ovsdb-server (a documented
//! measurement, not part of the default test run):
//!
//! ```text
//! cargo test --release -p idl --test wco_real_server -- --ignored --nocapture
//! ```
//!
//! 10 000 Port_Binding-like rows are loaded into a real server; our replica
//! (all columns tracked) rewrites 6 columns of every row with one real
//! change, once in the default mode and once with WRITE_CHANGED_ONLY, and
//! the time from sending the request to receiving the reply is printed.
//! It asserts only that both transactions succeed and change one row.
#![cfg(not(target_arch = "wasm32"))]

mod common;
#[path = "../../ovsdb-server/tests/common/net.rs"]
mod net;

use idl::experiments::{port_binding_values, PORT_BINDING_COLUMNS, PORT_BINDING_SCHEMA};
use idl::replica::{Commit, Event, Idl, TxnStatus};
use net::{ensure_packages, Conn, Server, TempDir};
use ovsdb::json::{Json, Object};
use ovsdb_server::DbMeta;
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROWS: usize = 10_000;

fn feed(idl: &mut Idl, msgs: Vec<Json>) -> Vec<Event> {
    let mut ev = Vec::new();
    for m in msgs {
        ev.extend(idl.receive(&m).expect("consistent"));
    }
    ev
}

#[test]
#[ignore]
fn write_changed_only_on_real_server() {
    assert!(ensure_packages());
    let dir = TempDir::new("wco");
    let schema = dir.0.join("pb.ovsschema");
    std::fs::write(&schema, PORT_BINDING_SCHEMA).unwrap();
    let server = Server::create(&dir.0, "pb.db", &schema).unwrap();
    let mut conn = Conn::connect(&server.sock).unwrap();
    let mut ops = vec![Json::from("SB")];
    for i in 0..ROWS {
        let mut row = Object::new();
        for (c, v) in PORT_BINDING_COLUMNS.iter().zip(port_binding_values(i, 0)) {
            row.insert(*c, v.to_json());
        }
        let mut o = Object::new();
        o.insert("op", Json::from("insert"));
        o.insert("table", Json::from("Port_Binding"));
        o.insert("row", Json::Object(row));
        ops.push(Json::Object(o));
    }
    let r = conn.call("transact", Json::Array(ops)).unwrap();
    assert!(
        !r.to_string_compact().contains("\"error\":\""),
        "load failed"
    );

    let meta = Arc::new(DbMeta::from_text(PORT_BINDING_SCHEMA).unwrap());
    for (gen, wco) in [(1usize, false), (2, true), (3, false), (4, true)] {
        // A fresh connection per client (monitor ids are per session).
        let mut conn = Conn::connect(&server.sock).unwrap();
        let mut idl = Idl::new(meta.clone(), true);
        idl.track_add_all();
        idl.set_write_changed_only_all(wco);
        let req = idl.connect();
        let reply = conn
            .call(
                req.get("method").and_then(Json::as_str).unwrap(),
                req.get("params").cloned().unwrap(),
            )
            .unwrap();
        let mut r = reply.as_object().unwrap().clone();
        r.insert("id", req.get("id").cloned().unwrap());
        let mut msgs = std::mem::take(&mut conn.backlog);
        msgs.push(Json::Object(r));
        feed(&mut idl, msgs);
        let t = idl.table_index("Port_Binding").unwrap();
        let cols: Vec<usize> = PORT_BINDING_COLUMNS
            .iter()
            .map(|c| idl.column_index(t, c).unwrap())
            .collect();
        // Row i is identified by its logical_port "lp-NNNNN".
        let mut rows: Vec<(String, ovsdb::uuid::Uuid)> = idl
            .row_uuids(t)
            .into_iter()
            .map(|u| {
                let lp = idl.read(t, u, cols[0]);
                (
                    lp.as_scalar().and_then(|a| a.as_str()).unwrap().to_string(),
                    u,
                )
            })
            .collect();
        rows.sort();
        let build = Instant::now();
        idl.txn_begin();
        for (i, (_, u)) in rows.iter().enumerate() {
            let g = if i == 0 { 1000 + gen } else { 0 };
            for (c, v) in cols.iter().zip(port_binding_values(i, g)) {
                idl.txn_write(t, *u, *c, v);
            }
        }
        let Commit::Sent { id, request, .. } = idl.txn_commit() else {
            panic!("expected a request")
        };
        let build_ms = build.elapsed().as_secs_f64() * 1000.0;
        let bytes = request.serialized_len();
        let sent = Instant::now();
        let reply = conn
            .call("transact", request.get("params").cloned().unwrap())
            .unwrap();
        let server_ms = sent.elapsed().as_secs_f64() * 1000.0;
        let mut r = reply.as_object().unwrap().clone();
        r.insert("id", id.clone());
        let mut msgs = std::mem::take(&mut conn.backlog);
        msgs.push(Json::Object(r));
        let ev = feed(&mut idl, msgs);
        let status = ev.iter().find_map(|e| match e {
            Event::TxnDone { status, .. } => Some(*status),
            _ => None,
        });
        assert_eq!(status, Some(TxnStatus::Success));
        println!(
            "real ovsdb-server, {ROWS} rows x 6 columns, 1 changed, {}: request {bytes} B, build {build_ms:.1} ms, send→reply {server_ms:.1} ms, reply {} B",
            if wco { "write-changed-only" } else { "read/write default" },
            reply.serialized_len()
        );
        let _ = conn.drain(Duration::from_millis(20));
    }
}
