//! The write-changed-only experiment (ovsdb-idl.md §4.4, §9.2.1): a
//! northd-like loop rewriting Port_Binding rows in three IDL configurations.

use super::{f, n, Clock};
use crate::hub::Hub;
use crate::replica::{Commit, Idl, TxnStatus};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::{object, Json, Object};
use ovsdb::uuid::Uuid;
use ovsdb_server::meta::DbMeta;
use ovsdb_server::{Server, ServerOptions};
use std::sync::Arc;

/// The Port_Binding-like schema of the write-changed-only experiment.
pub const PORT_BINDING_SCHEMA: &str = r#"{"name":"SB","version":"1.0.0","tables":{
 "Port_Binding":{"isRoot":true,"columns":{
   "logical_port":{"type":"string"},
   "tunnel_key":{"type":"integer"},
   "mac":{"type":{"key":"string","min":0,"max":"unlimited"}},
   "options":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}},
   "external_ids":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}},
   "datapath":{"type":"uuid"}}}}}"#;

/// Columns rewritten by the northd-like loop, in write order.
pub const PORT_BINDING_COLUMNS: [&str; 6] = [
    "logical_port",
    "tunnel_key",
    "mac",
    "options",
    "external_ids",
    "datapath",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WcoParams {
    pub rows: usize,
    pub columns: usize,
    pub changed: usize,
}

impl Default for WcoParams {
    fn default() -> Self {
        WcoParams {
            rows: 10_000,
            columns: 6,
            changed: 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct WcoMode {
    /// "read/write default", "write-changed-only" or "write-only".
    pub mode: &'static str,
    pub status: &'static str,
    pub writes: u64,
    pub writes_discarded: u64,
    pub request_ops: usize,
    pub request_bytes: usize,
    pub reply_bytes: usize,
    /// Bytes of the update a third, passive monitoring client received.
    pub update_bytes: usize,
    pub rows_changed_on_server: usize,
    pub build_ms: f64,
    pub server_ms: f64,
    /// Status when the same loop runs with nothing really changed.
    pub status_when_nothing_changed: &'static str,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WcoReport {
    pub params: WcoParams,
    pub modes: Vec<WcoMode>,
    /// default request bytes / write-changed-only request bytes.
    pub ratio: f64,
}

/// The desired values of row `i` (generation `gen` of its external_ids).
pub fn port_binding_values(i: usize, gen: usize) -> Vec<Datum> {
    let s = |x: String| Atom::String(x);
    let map =
        |pairs: Vec<(String, String)>| Datum::map(pairs.into_iter().map(|(k, v)| (s(k), s(v))));
    vec![
        Datum::scalar(s(format!("lp-{i:05}"))),
        Datum::scalar(Atom::Integer(i as i64 + 1)),
        Datum::set([s(format!(
            "0a:00:00:00:{:02x}:{:02x} 10.0.{}.{}",
            i / 256,
            i % 256,
            i / 256,
            i % 256
        ))]),
        map(vec![
            ("requested-chassis".into(), format!("chassis-{}", i % 30)),
            ("mtu".into(), "1442".into()),
        ]),
        map(vec![
            ("name".into(), format!("pod-{i:05}-{gen}")),
            ("namespace".into(), format!("ns-{}", i % 50)),
        ]),
        Datum::scalar(Atom::Uuid(Uuid::from_u128(0x1000 + (i % 30) as u128))),
    ]
}

/// Rewrites `rows` × `columns` with their desired values, `changed` rows
/// getting a new `external_ids`, in three IDL configurations, and
/// measures what each sends and costs (ovsdb-idl.md §4.4, §9.2.1).
pub fn write_changed_only(p: WcoParams, clock: Clock<'_>) -> WcoReport {
    let cols = p.columns.clamp(1, 6);
    let meta = Arc::new(DbMeta::from_text(PORT_BINDING_SCHEMA).expect("schema"));
    let mut server = Server::new((*meta).clone(), ServerOptions::default());
    // Initial contents.
    let mut ops = Vec::with_capacity(p.rows);
    for i in 0..p.rows {
        let vals = port_binding_values(i, 0);
        let mut row = Object::new();
        for (c, v) in PORT_BINDING_COLUMNS.iter().zip(vals.iter()) {
            row.insert(*c, v.to_json());
        }
        ops.push(object(vec![
            ("op", Json::from("insert")),
            ("table", Json::from("Port_Binding")),
            ("row", Json::Object(row)),
        ]));
    }
    let _ = server.transact(&ops);
    let mut hub = Hub::new(server);
    // Client 0: passive monitor (measures update traffic).
    hub.add(Idl::new(meta.clone(), true)).expect("connect");
    let mut modes = Vec::new();
    let configs: [&'static str; 3] = ["read/write default", "write-changed-only", "write-only"];
    let mut gen = 0usize;
    for (mi, mode) in configs.iter().enumerate() {
        let mut idl = Idl::new(meta.clone(), true);
        match mi {
            0 => idl.track_add_all(),
            1 => {
                idl.track_add_all();
                idl.set_write_changed_only_all(true);
            }
            _ => {
                for c in PORT_BINDING_COLUMNS {
                    idl.omit_alert("Port_Binding", c)
                        .expect("built-in schema has the column");
                }
            }
        }
        let ci = hub.add(idl).expect("connect");
        let t = hub.clients[ci]
            .idl
            .table_index("Port_Binding")
            .expect("table");
        let col_idx: Vec<usize> = PORT_BINDING_COLUMNS
            .iter()
            .map(|c| hub.clients[ci].idl.column_index(t, c).expect("col"))
            .collect();
        // Rows ordered by logical_port so "row i" is stable.
        let mut rows: Vec<(String, Uuid)> = hub.clients[ci]
            .idl
            .row_uuids(t)
            .into_iter()
            .map(|u| {
                let lp = hub.clients[ci].idl.read(t, u, col_idx[0]);
                (
                    lp.as_scalar()
                        .and_then(|a| a.as_str())
                        .unwrap_or("")
                        .to_string(),
                    u,
                )
            })
            .collect();
        ovsdb::order::sort(&mut rows);
        // Pass 1: nothing changed (expected: UNCHANGED everywhere).
        let nothing = {
            let idl = &mut hub.clients[ci].idl;
            idl.txn_begin();
            for (i, (_, u)) in rows.iter().enumerate() {
                let cur_gen = current_gen(idl, t, *u, col_idx[4]);
                let vals = port_binding_values(i, cur_gen);
                for c in 0..cols {
                    idl.txn_write(t, *u, col_idx[c], vals[c].clone());
                }
            }
            match idl.txn_commit() {
                Commit::Unchanged => "unchanged",
                Commit::Aborted => "aborted",
                Commit::NotLocked => "not locked",
                Commit::Sent { .. } => "sent",
            }
        };
        // Pass 2: `changed` rows get a new external_ids.
        gen += 1;
        let t0 = clock();
        let commit = {
            let idl = &mut hub.clients[ci].idl;
            idl.txn_begin();
            for (i, (_, u)) in rows.iter().enumerate() {
                let cur_gen = current_gen(idl, t, *u, col_idx[4]);
                let g = if i < p.changed { 1000 + gen } else { cur_gen };
                let vals = port_binding_values(i, g);
                for c in 0..cols {
                    idl.txn_write(t, *u, col_idx[c], vals[c].clone());
                }
                if cols < 5 && i < p.changed {
                    idl.txn_write(t, *u, col_idx[4], vals[4].clone());
                }
            }
            idl.txn_add_comment("ovn-northd");
            idl.txn_commit()
        };
        let build_ms = clock() - t0;
        let mut fig = WcoMode {
            mode,
            status: "unchanged",
            writes: 0,
            writes_discarded: 0,
            request_ops: 0,
            request_bytes: 0,
            reply_bytes: 0,
            update_bytes: 0,
            rows_changed_on_server: 0,
            build_ms,
            server_ms: 0.0,
            status_when_nothing_changed: nothing,
        };
        if let Commit::Sent { id, request, stats } = commit {
            fig.writes = stats.writes;
            fig.writes_discarded = stats.discarded;
            let bytes = request.to_bytes();
            fig.request_bytes = bytes.len();
            fig.request_ops = request
                .get("params")
                .and_then(Json::as_array)
                .map(|a| a.len() - 1)
                .unwrap_or(0);
            let before_passive = hub.clients[0].bytes_in;
            let seq_passive = hub.clients[0].idl.seqno();
            let s0 = clock();
            // The server parses the bytes and executes.
            let parsed = ovsdb::json::parse(&bytes).expect("own request parses");
            let sess = hub.clients[ci].session;
            let out = hub.server.handle(sess, &parsed);
            fig.server_ms = clock() - s0;
            for (to, m) in &out {
                if *to == sess && m.get("id") == Some(&id) {
                    fig.reply_bytes = m.serialized_len();
                }
            }
            // Deliver to everyone (the writer gets its status).
            let mut status = "incomplete";
            for (to, m) in out {
                let Some(k) = hub.clients.iter().position(|c| c.session == to) else {
                    continue;
                };
                hub.clients[k].bytes_in += m.serialized_len();
                if let Ok(ev) = hub.clients[k].idl.receive(&m) {
                    for e in ev {
                        if let crate::replica::Event::TxnDone { status: s, .. } = e {
                            status = s.as_str();
                        }
                    }
                }
            }
            fig.status = status;
            fig.update_bytes = hub.clients[0].bytes_in - before_passive;
            // Rows really changed = row updates the passive monitor applied
            // (each bumps its seqno once).
            fig.rows_changed_on_server = (hub.clients[0].idl.seqno() - seq_passive) as usize;
        } else {
            fig.status = TxnStatus::Unchanged.as_str();
        }
        for c in hub.clients.iter_mut() {
            c.idl.track_clear();
        }
        modes.push(fig);
    }
    let ratio = if modes[1].request_bytes > 0 {
        modes[0].request_bytes as f64 / modes[1].request_bytes as f64
    } else {
        0.0
    };
    WcoReport {
        params: WcoParams { columns: cols, ..p },
        modes,
        ratio,
    }
}

fn current_gen(idl: &Idl, t: usize, u: Uuid, ext_col: usize) -> usize {
    let d = idl.read(t, u, ext_col);
    d.as_map()
        .and_then(|m| m.get(&Atom::String("name".into())))
        .and_then(|a| a.as_str())
        .and_then(|s| s.rsplit('-').next())
        .and_then(|g| g.parse().ok())
        .unwrap_or(0)
}

impl WcoReport {
    pub fn to_json(&self) -> Json {
        object(vec![
            ("experiment", Json::from("write-changed-only")),
            ("rows", n(self.params.rows as u64)),
            ("columns", n(self.params.columns as u64)),
            ("changed", n(self.params.changed as u64)),
            (
                "modes",
                Json::Array(
                    self.modes
                        .iter()
                        .map(|m| {
                            object(vec![
                                ("mode", Json::from(m.mode)),
                                ("status", Json::from(m.status)),
                                ("writes", n(m.writes)),
                                ("writes_discarded", n(m.writes_discarded)),
                                ("request_ops", n(m.request_ops as u64)),
                                ("request_bytes", n(m.request_bytes as u64)),
                                ("reply_bytes", n(m.reply_bytes as u64)),
                                ("update_bytes", n(m.update_bytes as u64)),
                                ("rows_changed_on_server", n(m.rows_changed_on_server as u64)),
                                ("build_ms", f(m.build_ms)),
                                ("server_ms", f(m.server_ms)),
                                (
                                    "status_when_nothing_changed",
                                    Json::from(m.status_when_nothing_changed),
                                ),
                            ])
                        })
                        .collect(),
                ),
            ),
            ("ratio_default_over_wco", f(self.ratio)),
        ])
    }

    pub fn to_text(&self) -> String {
        let mut s = format!(
            "write-changed-only: {} rows x {} columns rewritten, {} really changed\n",
            self.params.rows, self.params.columns, self.params.changed
        );
        s.push_str(&format!(
            "{:<20} {:>9} {:>9} {:>6} {:>12} {:>10} {:>11} {:>10} {:>10}  {}\n",
            "mode",
            "writes",
            "dropped",
            "ops",
            "request B",
            "reply B",
            "update B",
            "build ms",
            "server ms",
            "no-change"
        ));
        for m in &self.modes {
            s.push_str(&format!(
                "{:<20} {:>9} {:>9} {:>6} {:>12} {:>10} {:>11} {:>10.2} {:>10.2}  {}\n",
                m.mode,
                m.writes,
                m.writes_discarded,
                m.request_ops,
                m.request_bytes,
                m.reply_bytes,
                m.update_bytes,
                m.build_ms,
                m.server_ms,
                m.status_when_nothing_changed
            ));
        }
        s.push_str(&format!(
            "default request / write-changed-only request = {:.0}x\n",
            self.ratio
        ));
        s
    }
}
