//! Browser tests (wasm32, run by the project test script with
//! chromedriver): the replica (against the server model, with the
//! `_Server` handshake) and an experiment behave the same in the browser as
//! natively. The server model's own are in `ovsdb-server`'s `tests/wasm.rs`.
#![cfg(target_arch = "wasm32")]

use idl::experiments::{self, WcoParams};
use idl::hub::Hub;
use idl::replica::{Idl, TxnStatus};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::parse;
use ovsdb_server::DbMeta;
use ovsdb_server::{Server, ServerOptions};
use std::sync::Arc;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const SCHEMA: &str = r#"{"name":"t","version":"1.0.0","tables":{
 "T":{"isRoot":true,"columns":{"name":{"type":"string"},
   "set":{"type":{"key":"integer","min":0,"max":"unlimited"}}}}}}"#;

#[wasm_bindgen_test]
fn replica_follows_server_model_with_diffs() {
    let meta = DbMeta::from_text(SCHEMA).unwrap();
    let mut hub = Hub::new(Server::new(meta.clone(), ServerOptions::default()));
    let c = hub.add(Idl::new(Arc::new(meta), true)).unwrap();
    let ins = parse(br#"[{"op":"insert","table":"T","row":{"name":"a","set":["set",[1,2,3]]}}]"#)
        .unwrap();
    hub.transact(ins.as_array().unwrap()).unwrap();
    let m = parse(br#"[{"op":"mutate","table":"T","where":[],"mutations":[["set","insert",["set",[4]]],["set","delete",1]]}]"#).unwrap();
    hub.transact(m.as_array().unwrap()).unwrap();
    let idl = &hub.clients[c].idl;
    let t = idl.table_index("T").unwrap();
    let u = idl.row_uuids(t)[0];
    let col = idl.column_index(t, "set").unwrap();
    assert_eq!(
        idl.read(t, u, col),
        Datum::set([Atom::Integer(2), Atom::Integer(3), Atom::Integer(4)])
    );
    assert_eq!(idl.dump(), hub.server.dump());
}

#[wasm_bindgen_test]
fn idl_transaction_commits_and_wco_experiment_counts() {
    let meta = DbMeta::from_text(SCHEMA).unwrap();
    let mut hub = Hub::new(Server::new(meta.clone(), ServerOptions::default()));
    let c = hub.add(Idl::new(Arc::new(meta), true)).unwrap();
    let idl = &mut hub.clients[c].idl;
    let t = idl.table_index("T").unwrap();
    let name = idl.column_index(t, "name").unwrap();
    idl.txn_begin();
    let u = idl.txn_insert(t, None).unwrap();
    idl.txn_write(t, u, name, Datum::scalar(Atom::String("x".into())));
    assert_eq!(hub.commit(c).unwrap(), TxnStatus::Success);
    assert_eq!(hub.server.row_count("T"), 1);

    let mut t = 0.0;
    let mut clock = move || {
        t += 1.0;
        t
    };
    let r = experiments::write_changed_only(
        WcoParams {
            rows: 300,
            columns: 6,
            changed: 1,
        },
        &mut clock,
    );
    assert_eq!(r.modes[1].writes_discarded, 300 * 6 - 1);
    assert!(r.modes[0].request_bytes > 30 * r.modes[1].request_bytes);
}

#[wasm_bindgen_test]
fn server_handshake_in_the_browser() {
    use idl::replica::{Event, ServerProblem};
    use ovsdb::uuid::Uuid;
    use ovsdb_server::DatabaseStatus;
    let meta = DbMeta::from_text(SCHEMA).unwrap();
    let mut srv = Server::new(meta.clone(), ServerOptions::default());
    // A follower is refused by a leader-only replica.
    let cid = Uuid::parse("00000000-0000-0000-0000-000000000001").unwrap();
    srv.enable_server_db(DatabaseStatus::clustered(cid, cid, false, true, 3));
    let mut hub = Hub::new(srv);
    let mut idl = Idl::new(Arc::new(meta), true);
    idl.enable_server_handshake(true);
    let c = hub.add(idl).unwrap();
    assert!(!hub.clients[c].idl.is_monitoring());
    assert_eq!(
        hub.clients[c].idl.server_problem(),
        Some(&ServerProblem::NotLeader)
    );
    let out = hub
        .server
        .set_database_status(DatabaseStatus::clustered(cid, cid, true, true, 4));
    // It became the leader: the replica goes on to monitor the data.
    let ev = hub.route(out, c).unwrap();
    assert!(ev.contains(&Event::Monitoring { found: false }));
    assert!(hub.clients[c].idl.is_monitoring());
    assert_eq!(hub.clients[c].idl.server_problem(), None);
}
