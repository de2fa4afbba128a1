//! Interop with the real ovsdb-server (Debian packages, installed by the
//! test with apt-get when missing). A clustered OVN_Northbound database is
//! served on a unix socket in a temp dir; our replica monitors it with
//! `monitor_cond_since` through the small native adapter in
//! `ovsdb-server`'s `tests/common/net.rs`, follows `ovn-nbctl` changes, commits its own
//! transaction, and resumes from its last-txn-id after a reconnect.
#![cfg(not(target_arch = "wasm32"))]

mod common;
#[path = "common/dump.rs"]
mod dump;
#[path = "../../ovsdb-server/tests/common/net.rs"]
mod net;

use dump::{parse_dump, replica_rows, Rows};
use idl::replica::{Commit, Event, Idl, TxnStatus};
use net::{ensure_packages, run, Conn, Server, TempDir};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::Json;
use ovsdb_server::DbMeta;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn schema_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/samples/schemas/ovn-nb.ovsschema")
}

fn dump(server: &Server, meta: &DbMeta) -> Rows {
    parse_dump(
        meta,
        &run(
            "ovsdb-client",
            &["dump", "-f", "json", &server.remote(), "OVN_Northbound"],
        ),
    )
}

fn feed(idl: &mut Idl, msgs: Vec<Json>) -> Vec<Event> {
    let mut ev = Vec::new();
    for m in msgs {
        ev.extend(idl.receive(&m).expect("replica stays consistent"));
    }
    ev
}

/// Pulls notifications until the replica equals the server's dump.
fn sync_and_compare(conn: &mut Conn, idl: &mut Idl, server: &Server, meta: &DbMeta) {
    let want = dump(server, meta);
    for _ in 0..40 {
        let msgs = conn.drain(Duration::from_millis(50)).expect("socket");
        feed(idl, msgs);
        if replica_rows(idl) == want {
            return;
        }
    }
    let got = replica_rows(idl);
    panic!(
        "replica differs from ovsdb-client dump:\nreplica tables {:?}\ndump tables {:?}",
        got.iter().map(|(k, v)| (k, v.len())).collect::<Vec<_>>(),
        want.iter().map(|(k, v)| (k, v.len())).collect::<Vec<_>>()
    );
}

fn monitor(conn: &mut Conn, idl: &mut Idl) -> (bool, usize) {
    let req = idl.connect();
    let method = req
        .get("method")
        .and_then(Json::as_str)
        .unwrap()
        .to_string();
    let params = req.get("params").cloned().unwrap();
    let reply = conn.call(&method, params).expect("monitor reply");
    // Re-key the reply with the id the replica used.
    let mut r = reply.as_object().unwrap().clone();
    r.insert("id", req.get("id").cloned().unwrap());
    let tu_rows: usize = reply
        .get("result")
        .and_then(Json::as_array)
        .and_then(|a| a.get(2))
        .and_then(Json::as_object)
        .map(|o| {
            o.iter()
                .map(|(_, t)| t.as_object().map(|x| x.len()).unwrap_or(0))
                .sum()
        })
        .unwrap_or(0);
    let ev = idl
        .receive(&Json::Object(r))
        .expect("monitor reply applies");
    let found = ev
        .iter()
        .find_map(|e| match e {
            Event::Monitoring { found } => Some(*found),
            _ => None,
        })
        .expect("monitoring");
    (found, tu_rows)
}

#[test]
fn replica_follows_real_ovsdb_server() {
    assert!(
        ensure_packages(),
        "openvswitch/ovn packages are not installed and apt-get could not install them"
    );
    let dir = TempDir::new("interop");
    let db = dir.0.join("nb.db");
    let schema = schema_path();
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
    let meta = Arc::new(DbMeta::from_text(&std::fs::read_to_string(&schema).unwrap()).unwrap());
    let mut idl = Idl::new(meta.clone(), true);
    let mut conn = Conn::connect(&server.sock).expect("connect");
    let (found, _) = monitor(&mut conn, &mut idl);
    assert!(!found, "a fresh replica cannot be found in history");

    let nbctl = |args: &[&str]| {
        let db = format!("--db={}", server.remote());
        let mut v = vec![db.as_str()];
        v.extend_from_slice(args);
        run("ovn-nbctl", &v);
    };
    nbctl(&["ls-add", "sw0"]);
    nbctl(&["lsp-add", "sw0", "sw0-p1"]);
    nbctl(&["lsp-set-addresses", "sw0-p1", "00:00:00:00:00:01 10.0.0.1"]);
    nbctl(&["ls-add", "sw1"]);
    nbctl(&["lr-add", "lr0"]);
    nbctl(&[
        "lrp-add",
        "lr0",
        "lrp0",
        "00:00:00:00:ff:01",
        "10.0.0.254/24",
    ]);
    nbctl(&["pg-add", "pg1", "sw0-p1"]);
    nbctl(&["acl-add", "pg1", "from-lport", "1001", "udp", "drop"]);
    nbctl(&["acl-add", "pg1", "to-lport", "1002", "tcp", "allow"]);
    nbctl(&["set", "Logical_Switch", "sw1", "external_ids:owner=test"]);
    nbctl(&["lsp-del", "sw0-p1"]);
    nbctl(&["acl-del", "pg1", "from-lport", "1001", "udp"]);
    sync_and_compare(&mut conn, &mut idl, &server, &meta);

    // Our own transaction commits on the real server.
    let ls = idl.table_index("Logical_Switch").unwrap();
    let name = idl.column_index(ls, "name").unwrap();
    let ext = idl.column_index(ls, "external_ids").unwrap();
    let sw1 = idl
        .row_uuids(ls)
        .into_iter()
        .find(|u| idl.read(ls, *u, name) == Datum::scalar(Atom::String("sw1".into())))
        .expect("sw1 replicated");
    idl.txn_begin();
    let new_ls = idl.txn_insert(ls, None).unwrap();
    idl.txn_write(
        ls,
        new_ls,
        name,
        Datum::scalar(Atom::String("from-idl".into())),
    );
    idl.txn_verify(ls, sw1, ext);
    idl.txn_write(
        ls,
        sw1,
        ext,
        Datum::map([(Atom::String("owner".into()), Atom::String("idl".into()))]),
    );
    idl.txn_add_comment("idl interop test");
    let Commit::Sent { id, request, .. } = idl.txn_commit() else {
        panic!("transaction should be sent");
    };
    let reply = conn
        .call("transact", request.get("params").cloned().unwrap())
        .expect("transact reply");
    let mut r = reply.as_object().unwrap().clone();
    r.insert("id", id.clone());
    let mut msgs = std::mem::take(&mut conn.backlog);
    msgs.push(Json::Object(r));
    let ev = feed(&mut idl, msgs);
    let status = ev.iter().find_map(|e| match e {
        Event::TxnDone {
            status, inserted, ..
        } => Some((*status, inserted.clone())),
        _ => None,
    });
    let (status, inserted) = status.expect("transaction completed");
    assert_eq!(status, TxnStatus::Success, "reply: {reply}");
    assert_eq!(inserted.len(), 1);
    let real = inserted[0].1;
    sync_and_compare(&mut conn, &mut idl, &server, &meta);
    assert_eq!(
        idl.read(ls, real, name),
        Datum::scalar(Atom::String("from-idl".into()))
    );
    let listed = run(
        "ovn-nbctl",
        &[&format!("--db={}", server.remote()), "ls-list"],
    );
    assert!(listed.contains("from-idl"), "{listed}");

    // Reconnect: changes made while we were away arrive alone, as history.
    let last = idl.last_id();
    assert!(!last.is_nil(), "a clustered server reports transaction ids");
    drop(conn);
    idl.disconnect();
    nbctl(&["ls-add", "sw-offline"]);
    let before_rows: usize = replica_rows(&idl).values().map(|t| t.len()).sum();
    let applied_before = idl.rows_applied;
    let mut conn = Conn::connect(&server.sock).expect("reconnect");
    let (found, reply_rows) = monitor(&mut conn, &mut idl);
    assert!(found, "monitor_cond_since should find our last txn id");
    assert_eq!(reply_rows, 1, "only the new switch is sent");
    assert_eq!(idl.rows_applied - applied_before, 1);
    assert!(before_rows > 5);
    sync_and_compare(&mut conn, &mut idl, &server, &meta);
}
