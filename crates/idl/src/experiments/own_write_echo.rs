//! The own-write-echo experiment: what a client's own writes cause on its
//! next iteration, tracked read/write column against write-only.

use super::n;
use crate::hub::Hub;
use crate::replica::Idl;
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::{object, Json};
use ovsdb_server::meta::DbMeta;
use ovsdb_server::{Server, ServerOptions};
use std::sync::Arc;

const ECHO_SCHEMA: &str = r#"{"name":"NB","version":"1.0.0","tables":{
 "Logical_Router_Port":{"isRoot":true,"columns":{
   "name":{"type":"string"},
   "status":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}}}}}}"#;

#[derive(Debug, Clone, PartialEq)]
pub struct EchoMode {
    pub mode: &'static str,
    pub iterations: usize,
    /// Iterations after which the table had tracked rows (an engine node
    /// would run its handlers or recompute).
    pub iterations_with_tracked_rows: usize,
    pub tracked_rows_total: usize,
    /// Iterations after which the IDL seqno moved (the loop wakes up).
    pub seqno_moves: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EchoReport {
    pub rows: usize,
    pub iterations: usize,
    pub modes: Vec<EchoMode>,
}

/// A client writes a column each iteration (like ovn-northd writing
/// `Logical_Router_Port.status`) and looks at what its own writes cause
/// on the next iteration: tracked read/write column vs write-only.
pub fn own_write_echo(rows: usize, iterations: usize) -> EchoReport {
    let meta = Arc::new(DbMeta::from_text(ECHO_SCHEMA).expect("schema"));
    let mut modes = Vec::new();
    for (mode, write_only) in [
        ("tracked (MONITOR|ALERT|TRACK)", false),
        ("write-only (omit_alert)", true),
    ] {
        let mut server = Server::new((*meta).clone(), ServerOptions::default());
        let ops: Vec<Json> = (0..rows)
            .map(|i| {
                object(vec![
                    ("op", Json::from("insert")),
                    ("table", Json::from("Logical_Router_Port")),
                    (
                        "row",
                        object(vec![("name", Json::String(format!("lrp{i}")))]),
                    ),
                ])
            })
            .collect();
        let _ = server.transact(&ops);
        let mut hub = Hub::new(server);
        let mut idl = Idl::new(meta.clone(), true);
        idl.track_add_all();
        if write_only {
            idl.omit_alert("Logical_Router_Port", "status")
                .expect("built-in schema has the column");
        }
        let ci = hub.add(idl).expect("connect");
        let t = 0;
        let sc = hub.clients[ci].idl.column_index(t, "status").expect("col");
        hub.clients[ci].idl.track_clear();
        let uuids = hub.clients[ci].idl.row_uuids(t);
        let mut fig = EchoMode {
            mode,
            iterations,
            iterations_with_tracked_rows: 0,
            tracked_rows_total: 0,
            seqno_moves: 0,
        };
        for it in 0..iterations {
            let seq = hub.clients[ci].idl.seqno();
            {
                let idl = &mut hub.clients[ci].idl;
                idl.txn_begin();
                for u in &uuids {
                    let v = Datum::map([(
                        Atom::String("hosting-chassis".into()),
                        Atom::String(format!("ch{}", it % 7)),
                    )]);
                    idl.txn_write(t, *u, sc, v);
                }
            }
            let _ = hub.commit(ci);
            let idl = &mut hub.clients[ci].idl;
            let tracked = idl.tracked(t).len();
            if tracked > 0 {
                fig.iterations_with_tracked_rows += 1;
            }
            fig.tracked_rows_total += tracked;
            if idl.seqno() != seq {
                fig.seqno_moves += 1;
            }
            idl.track_clear();
        }
        modes.push(fig);
    }
    EchoReport {
        rows,
        iterations,
        modes,
    }
}

impl EchoReport {
    pub fn to_json(&self) -> Json {
        object(vec![
            ("experiment", Json::from("own-write-echo")),
            ("rows", n(self.rows as u64)),
            ("iterations", n(self.iterations as u64)),
            (
                "modes",
                Json::Array(
                    self.modes
                        .iter()
                        .map(|m| {
                            object(vec![
                                ("mode", Json::from(m.mode)),
                                (
                                    "iterations_with_tracked_rows",
                                    n(m.iterations_with_tracked_rows as u64),
                                ),
                                ("tracked_rows_total", n(m.tracked_rows_total as u64)),
                                ("seqno_moves", n(m.seqno_moves as u64)),
                            ])
                        })
                        .collect(),
                ),
            ),
        ])
    }

    pub fn to_text(&self) -> String {
        let mut s = format!(
            "own-write-echo: {} rows, status written every iteration, {} iterations\n",
            self.rows, self.iterations
        );
        for m in &self.modes {
            s.push_str(&format!(
                "{:<32} iterations with tracked rows: {:>4}  tracked rows: {:>7}  seqno moves: {:>4}\n",
                m.mode, m.iterations_with_tracked_rows, m.tracked_rows_total, m.seqno_moves
            ));
        }
        s
    }
}
