//! The client-side experiments of ovsdb-idl.md §9.2, as library calls that
//! return plain structs of figures (for the CLI and the web app).
//!
//! The core has no clock: callers pass `clock`, a function returning
//! milliseconds (e.g. `Instant` natively, `performance.now()` in a
//! browser). Counts and byte sizes do not depend on it.

use crate::hub::Hub;
use crate::replica::{Commit, Idl, IndexPolicy, TxnStatus};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::{object, Json, Object};
use ovsdb::uuid::Uuid;
use ovsdb_server::meta::DbMeta;
use ovsdb_server::{Server, ServerOptions};
use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

pub type Clock<'a> = &'a mut dyn FnMut() -> f64;

fn f(x: f64) -> Json {
    Json::Real((x * 1000.0).round() / 1000.0)
}

fn n(x: u64) -> Json {
    Json::Integer(x as i64)
}

// ----------------------------------------------------------------------
// write-changed-only

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

// ----------------------------------------------------------------------
// own-write-echo

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

// ----------------------------------------------------------------------
// index-vs-hash

const SM_SCHEMA: &str = r#"{"name":"SB","version":"1.0.0","tables":{
 "Service_Monitor":{"isRoot":true,"columns":{
   "logical_port":{"type":"string"},
   "ip":{"type":"string"},
   "port":{"type":"integer"},
   "protocol":{"type":{"key":{"type":"string","enum":["set",["tcp","udp","icmp"]]},"min":0,"max":1}},
   "status":{"type":{"key":{"type":"string","enum":["set",["online","offline","error"]]},"min":0,"max":1}}}},
 "Load_Balancer":{"isRoot":true,"columns":{
   "name":{"type":"string"},
   "vips":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}}}}}}"#;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexVsHashParams {
    pub load_balancers: usize,
    pub service_monitors: usize,
    /// Status flips per second received by every chassis.
    pub updates_per_sec: usize,
    /// Route-gate evaluations per second on this chassis.
    pub evaluations_per_sec: usize,
    /// Backends checked per evaluation.
    pub lookups_per_evaluation: usize,
    pub seconds: usize,
}

impl Default for IndexVsHashParams {
    fn default() -> Self {
        IndexVsHashParams {
            load_balancers: 1000,
            service_monitors: 4000,
            updates_per_sec: 1000,
            evaluations_per_sec: 1,
            lookups_per_evaluation: 16,
            seconds: 5,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct StrategyFigures {
    pub strategy: &'static str,
    pub index_inserts: u64,
    pub index_deletes: u64,
    pub index_comparisons: u64,
    pub hash_inserts: u64,
    pub lookups: u64,
    pub tracked_rows_walked: u64,
    pub evaluations_run: u64,
    pub ms: f64,
    /// Model cost in abstract operations (comparisons + hash inserts +
    /// lookups + tracked rows walked), comparable across strategies.
    pub model_ops: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IndexVsHashReport {
    pub params: IndexVsHashParams,
    pub strategies: Vec<StrategyFigures>,
    /// Evaluations per second above which the persistent index costs less
    /// than the temporary hash, from the model counts: E* = 2·U·log2(n)/m.
    pub crossover_evaluations_per_sec: f64,
    /// The same crossover from the measured counts: (index comparisons
    /// per update × U) / (hash inserts per evaluation).
    pub measured_crossover_evaluations_per_sec: f64,
}

/// §5.4: a chassis replicates Service_Monitor (n rows) and receives U
/// status flips per second; route gates are evaluated E times per second.
/// Compares a persistent IDL index (C policy: re-index on every modify),
/// the same index with the "indexed columns changed" policy, a temporary
/// hash built per evaluation, and a tracked-change filter that runs the
/// evaluation only when a relevant monitor changed.
pub fn index_vs_hash(p: IndexVsHashParams, clock: Clock<'_>) -> IndexVsHashReport {
    let meta = Arc::new(DbMeta::from_text(SM_SCHEMA).expect("schema"));
    let mut strategies = Vec::new();
    let total_updates = p.updates_per_sec * p.seconds;
    let total_evals = p.evaluations_per_sec * p.seconds;
    let eval_every = total_updates
        .checked_div(total_evals)
        .map(|x| x.max(1))
        .unwrap_or(usize::MAX);
    for strategy in [
        "persistent index (C: re-index on every modify)",
        "persistent index (re-index only if indexed column changed)",
        "temporary hash per evaluation",
        "tracked-change filter + temporary hash",
    ] {
        let mut server = Server::new((*meta).clone(), ServerOptions::default());
        let mut ops = Vec::new();
        for i in 0..p.service_monitors {
            ops.push(object(vec![
                ("op", Json::from("insert")),
                ("table", Json::from("Service_Monitor")),
                (
                    "row",
                    object(vec![
                        ("logical_port", Json::String(format!("lsp{}", i % 500))),
                        (
                            "ip",
                            Json::String(format!(
                                "10.{}.{}.{}",
                                i / 65536,
                                (i / 256) % 256,
                                i % 256
                            )),
                        ),
                        ("port", Json::Integer(80 + (i % 4) as i64)),
                        ("protocol", Json::from("tcp")),
                        ("status", Json::from("online")),
                    ]),
                ),
            ]));
        }
        for i in 0..p.load_balancers {
            ops.push(object(vec![
                ("op", Json::from("insert")),
                ("table", Json::from("Load_Balancer")),
                (
                    "row",
                    object(vec![
                        ("name", Json::String(format!("lb{i}"))),
                        (
                            "vips",
                            Datum::map([(
                                Atom::String(format!("172.16.{}.{}:80", i / 256, i % 256)),
                                Atom::String(format!(
                                    "10.0.{}.{}:80,10.0.{}.{}:81",
                                    (i * 4 / 256) % 256,
                                    (i * 4) % 256,
                                    (i * 4 + 1) / 256 % 256,
                                    (i * 4 + 1) % 256
                                )),
                            )])
                            .to_json(),
                        ),
                    ]),
                ),
            ]));
        }
        let _ = server.transact(&ops);
        let mut hub = Hub::new(server);
        let mut idl = Idl::new(meta.clone(), true);
        idl.track_add_all();
        let t = idl.table_index("Service_Monitor").expect("table");
        let mut index = None;
        if strategy.starts_with('p') {
            index = idl.index_create(
                "Service_Monitor",
                &["logical_port", "ip", "port", "protocol"],
            );
            if strategy.contains("only if") {
                idl.index_policy = IndexPolicy::IndexedColumnsChanged;
            }
        }
        let ci = hub.add(idl).expect("connect");
        hub.clients[ci].idl.track_clear();
        let cols = ["logical_port", "ip", "port", "protocol", "status"]
            .map(|c| hub.clients[ci].idl.column_index(t, c).expect("col"));
        // The gates: a few backends of the first LBs.
        let uuids = hub.clients[ci].idl.row_uuids(t);
        let relevant: Vec<Uuid> = uuids
            .iter()
            .step_by(97)
            .take(p.lookups_per_evaluation)
            .copied()
            .collect();
        let relevant_set: HashSet<Uuid> = relevant.iter().copied().collect();
        let keys: Vec<Vec<Datum>> = relevant
            .iter()
            .map(|u| {
                (0..4)
                    .map(|k| hub.clients[ci].idl.read(t, *u, cols[k]))
                    .collect()
            })
            .collect();
        let stats0 = index
            .map(|i| hub.clients[ci].idl.index_stats(i))
            .unwrap_or_default();
        let cmp0 = crate::index::comparisons();
        let mut fig = StrategyFigures {
            strategy,
            index_inserts: 0,
            index_deletes: 0,
            index_comparisons: 0,
            hash_inserts: 0,
            lookups: 0,
            tracked_rows_walked: 0,
            evaluations_run: 0,
            ms: 0.0,
            model_ops: 0,
        };
        let t0 = clock();
        let mut client_ms = 0.0;
        let mut online = vec![true; uuids.len()];
        let mut relevant_changed = false;
        let total_updates = if uuids.is_empty() { 0 } else { total_updates };
        for step in 0..total_updates {
            // One status flip from some chassis, delivered to us.
            let ui = (step * 7919) % uuids.len();
            let u = uuids[ui];
            online[ui] = !online[ui];
            let status = if online[ui] { "online" } else { "offline" };
            let op = object(vec![
                ("op", Json::from("update")),
                ("table", Json::from("Service_Monitor")),
                (
                    "where",
                    Json::Array(vec![Json::Array(vec![
                        Json::from("_uuid"),
                        Json::from("=="),
                        Json::Array(vec![Json::from("uuid"), Json::String(u.to_string())]),
                    ])]),
                ),
                ("row", object(vec![("status", Json::from(status))])),
            ]);
            let (_, msgs) = hub.server.transact(&[op]);
            let c0 = clock();
            let _ = hub.route(msgs, usize::MAX);
            if strategy.starts_with("tracked") {
                let idl = &hub.clients[ci].idl;
                for tr in idl.tracked(t) {
                    fig.tracked_rows_walked += 1;
                    if relevant_set.contains(&tr.uuid) {
                        relevant_changed = true;
                    }
                }
                hub.clients[ci].idl.track_clear();
            } else {
                hub.clients[ci].idl.track_clear();
            }
            client_ms += clock() - c0;
            if (step + 1) % eval_every == 0 {
                // A route-gate evaluation.
                let run = !strategy.starts_with("tracked") || relevant_changed;
                relevant_changed = false;
                if !run {
                    continue;
                }
                let e0 = clock();
                fig.evaluations_run += 1;
                let idl = &mut hub.clients[ci].idl;
                if let Some(ix) = index {
                    for k in &keys {
                        let _ = idl.index_find_eq(ix, k);
                        fig.lookups += 1;
                    }
                } else {
                    let mut h: HashMap<(String, String, i64), Uuid> =
                        HashMap::with_capacity(uuids.len());
                    for u in idl.row_uuids(t) {
                        let lp = idl.read(t, u, cols[0]);
                        let ip = idl.read(t, u, cols[1]);
                        let port = idl.read(t, u, cols[2]);
                        h.insert(
                            (
                                lp.as_scalar()
                                    .and_then(|a| a.as_str())
                                    .unwrap_or("")
                                    .to_string(),
                                ip.as_scalar()
                                    .and_then(|a| a.as_str())
                                    .unwrap_or("")
                                    .to_string(),
                                port.as_scalar().and_then(|a| a.as_i64()).unwrap_or(0),
                            ),
                            u,
                        );
                        fig.hash_inserts += 1;
                    }
                    for k in &keys {
                        let key = (
                            k[0].as_scalar()
                                .and_then(|a| a.as_str())
                                .unwrap_or("")
                                .to_string(),
                            k[1].as_scalar()
                                .and_then(|a| a.as_str())
                                .unwrap_or("")
                                .to_string(),
                            k[2].as_scalar().and_then(|a| a.as_i64()).unwrap_or(0),
                        );
                        let _ = h.get(&key);
                        fig.lookups += 1;
                    }
                }
                client_ms += clock() - e0;
            }
        }
        let _ = t0;
        fig.ms = client_ms;
        if let Some(ix) = index {
            let s = hub.clients[ci].idl.index_stats(ix);
            fig.index_inserts = s.inserts - stats0.inserts;
            fig.index_deletes = s.deletes - stats0.deletes;
            fig.index_comparisons = crate::index::comparisons() - cmp0;
        }
        fig.model_ops =
            fig.index_comparisons + fig.hash_inserts + fig.lookups + fig.tracked_rows_walked;
        strategies.push(fig);
    }
    let nrows = p.service_monitors.max(2) as f64;
    let crossover = 2.0 * p.updates_per_sec as f64 * nrows.log2() / nrows;
    // Measured: index comparisons spent per received update (C policy,
    // minus what lookups cost) vs hash inserts per evaluation.
    let c_idx = &strategies[0];
    let lookup_only = strategies[1].index_comparisons;
    let per_update =
        (c_idx.index_comparisons.saturating_sub(lookup_only)) as f64 / total_updates.max(1) as f64;
    let per_eval = strategies[2].hash_inserts as f64 / strategies[2].evaluations_run.max(1) as f64;
    let measured = if per_eval > 0.0 {
        per_update * p.updates_per_sec as f64 / per_eval
    } else {
        0.0
    };
    IndexVsHashReport {
        params: p,
        strategies,
        crossover_evaluations_per_sec: crossover,
        measured_crossover_evaluations_per_sec: measured,
    }
}

impl IndexVsHashReport {
    pub fn to_json(&self) -> Json {
        let p = &self.params;
        object(vec![
            ("experiment", Json::from("index-vs-hash")),
            ("load_balancers", n(p.load_balancers as u64)),
            ("service_monitors", n(p.service_monitors as u64)),
            ("updates_per_sec", n(p.updates_per_sec as u64)),
            ("evaluations_per_sec", n(p.evaluations_per_sec as u64)),
            ("lookups_per_evaluation", n(p.lookups_per_evaluation as u64)),
            ("seconds", n(p.seconds as u64)),
            (
                "strategies",
                Json::Array(
                    self.strategies
                        .iter()
                        .map(|s| {
                            object(vec![
                                ("strategy", Json::from(s.strategy)),
                                ("index_inserts", n(s.index_inserts)),
                                ("index_deletes", n(s.index_deletes)),
                                ("index_comparisons", n(s.index_comparisons)),
                                ("hash_inserts", n(s.hash_inserts)),
                                ("lookups", n(s.lookups)),
                                ("tracked_rows_walked", n(s.tracked_rows_walked)),
                                ("evaluations_run", n(s.evaluations_run)),
                                ("model_ops", n(s.model_ops)),
                                ("ms", f(s.ms)),
                            ])
                        })
                        .collect(),
                ),
            ),
            (
                "crossover_evaluations_per_sec",
                f(self.crossover_evaluations_per_sec),
            ),
            (
                "measured_crossover_evaluations_per_sec",
                f(self.measured_crossover_evaluations_per_sec),
            ),
        ])
    }

    pub fn to_text(&self) -> String {
        let p = &self.params;
        let mut s = format!(
            "index-vs-hash: {} Service_Monitor rows, {} LBs, {} status flips/s, {} evaluations/s x {} lookups, {} s\n",
            p.service_monitors, p.load_balancers, p.updates_per_sec, p.evaluations_per_sec, p.lookups_per_evaluation, p.seconds
        );
        s.push_str(&format!(
            "{:<60} {:>9} {:>9} {:>11} {:>9} {:>8} {:>8} {:>6} {:>10} {:>9}\n",
            "strategy",
            "idx ins",
            "idx del",
            "idx cmp",
            "hash ins",
            "lookups",
            "tracked",
            "evals",
            "model ops",
            "ms"
        ));
        for x in &self.strategies {
            s.push_str(&format!(
                "{:<60} {:>9} {:>9} {:>11} {:>9} {:>8} {:>8} {:>6} {:>10} {:>9.1}\n",
                x.strategy,
                x.index_inserts,
                x.index_deletes,
                x.index_comparisons,
                x.hash_inserts,
                x.lookups,
                x.tracked_rows_walked,
                x.evaluations_run,
                x.model_ops,
                x.ms
            ));
        }
        s.push_str(&format!(
            "crossover: the persistent index (C policy) costs less above E = 2*U*log2(n)/m = {:.1} evaluations/s (model), {:.1} evaluations/s (measured counts)\n",
            self.crossover_evaluations_per_sec, self.measured_crossover_evaluations_per_sec
        ));
        s.push_str("ms: client-side time only (applying updates incl. index upkeep, tracking walk, evaluations)\n");
        s
    }
}

// ----------------------------------------------------------------------
// diff-apply

const SET_SCHEMA: &str = r#"{"name":"D","version":"1.0.0","tables":{
 "Port_Group":{"isRoot":true,"columns":{
   "name":{"type":"string"},
   "ports":{"type":{"key":"uuid","min":0,"max":"unlimited"}}}}}}"#;

thread_local! {
    static SET_COMPARISONS: Cell<u64> = const { Cell::new(0) };
}

/// An atom whose comparisons are counted: the instrumented set the
/// diff-apply experiment replays every message on, with the same sequence
/// of B-tree operations as `Datum::from_json`/`diff_from_json` (one
/// insert per element, in message order) and `Datum::apply_diff` (a
/// `contains` per diff element for the size check, then `remove` or
/// `insert`). Comparisons count the work deterministically, with no clock.
#[derive(Debug, Clone)]
struct Counted(Atom);

impl PartialEq for Counted {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Counted {}
impl PartialOrd for Counted {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Counted {
    fn cmp(&self, other: &Self) -> Ordering {
        SET_COMPARISONS.with(|c| c.set(c.get() + 1));
        self.0.cmp(&other.0)
    }
}

/// Runs `f` and returns the atom comparisons it made on counted sets.
fn counting<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = SET_COMPARISONS.with(|c| c.get());
    let r = f();
    (r, SET_COMPARISONS.with(|c| c.get()) - before)
}

/// The set a message's datum parses into (one insert per element, in the
/// message's order, which is sorted order for a serialized set).
fn counted_parse(d: &Datum) -> BTreeSet<Counted> {
    let mut s = BTreeSet::new();
    for a in d.atoms() {
        s.insert(Counted(a.clone()));
    }
    s
}

/// `Datum::apply_diff` on a set, step for step.
fn counted_apply_diff(cur: &mut BTreeSet<Counted>, diff: &Datum) {
    let d = counted_parse(diff);
    let mut n = cur.len() as i64;
    for k in &d {
        n += if cur.contains(k) { -1 } else { 1 };
    }
    debug_assert!(n >= 0);
    for k in d {
        if !cur.remove(&k) {
            cur.insert(k);
        }
    }
}

/// A full value replacing the column: parse, then compare with the old
/// value (the replica only stores it if it differs).
fn counted_apply_full(cur: &mut BTreeSet<Counted>, full: &Datum) {
    let new = counted_parse(full);
    if *cur != new {
        *cur = new;
    }
}

fn same_set(counted: &BTreeSet<Counted>, d: Option<&Datum>) -> bool {
    match d.and_then(Datum::as_set) {
        Some(s) => s.len() == counted.len() && s.iter().zip(counted).all(|(a, b)| *a == b.0),
        None => false,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DiffApplyPoint {
    pub set_size: usize,
    pub diffs: usize,
    /// Bytes of one single-element update2 modify message.
    pub diff_message_bytes: usize,
    /// Bytes the same change costs as a v1 full-value update.
    pub full_message_bytes: usize,
    pub diff_us_per_apply: f64,
    pub full_us_per_apply: f64,
    /// d·log2(n): the model cost of a diff apply.
    pub model_d_log_n: f64,
    /// Atom comparisons per single-element diff apply (parse + apply), on
    /// the instrumented set replaying the same messages.
    pub diff_comparisons_per_apply: f64,
    /// Atom comparisons per full-value apply (parse + compare).
    pub full_comparisons_per_apply: f64,
    /// The instrumented set ended equal to the replica's column after the
    /// diffs and after the full values (the replay follows the replica).
    pub model_matches_replica: bool,
}

/// Cost of one diff of `d` elements (all new to the set) at set size n.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffSizePoint {
    pub set_size: usize,
    pub diff_elements: usize,
    /// Atom comparisons to parse and apply the diff.
    pub comparisons: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DiffApplyReport {
    pub points: Vec<DiffApplyPoint>,
    /// Diffs of growing size d at the largest n: comparisons grow ~d.
    pub diff_sizes: Vec<DiffSizePoint>,
}

/// Diff sizes measured by [`diff_apply`] at its largest set size.
pub const DIFF_SIZES: [usize; 4] = [1, 10, 100, 1000];

fn uuid_n(i: usize) -> Uuid {
    Uuid::from_u128(0x9e37_79b9_7f4a_7c15_u128.wrapping_mul(i as u128 + 1) | 1)
}

/// Applies single-element diffs (update2 `modify`) to a replica row whose
/// set column holds n UUIDs, for each n in `sizes`, and compares with
/// receiving the full value (update v1).
pub fn diff_apply(sizes: &[usize], diffs: usize, clock: Clock<'_>) -> DiffApplyReport {
    let meta = Arc::new(DbMeta::from_text(SET_SCHEMA).expect("schema"));
    let mut points = Vec::new();
    for &size in sizes {
        let mut idl = Idl::new(meta.clone(), true);
        let row = Uuid::from_u128(42);
        let set: ovsdb::AtomSet = (0..size).map(|i| Atom::Uuid(uuid_n(i))).collect();
        let full = Datum::Set(set);
        let mut rows = Object::new();
        rows.insert(
            row.to_string(),
            object(vec![(
                "initial",
                object(vec![("name", Json::from("pg")), ("ports", full.to_json())]),
            )]),
        );
        let tu = object(vec![("Port_Group", Json::Object(rows))]);
        idl.apply_table_updates(2, &tu, true).expect("initial");
        let t = idl.table_index("Port_Group").unwrap_or(0);
        let ports = idl.column_index(t, "ports").unwrap_or(0);
        let mut model = counted_parse(&full);
        // Messages: alternately add and remove element `size + k`.
        let mk = |k: usize| -> Json {
            let a = Atom::Uuid(uuid_n(size + (k / 2) % 64));
            let mut rows = Object::new();
            rows.insert(
                row.to_string(),
                object(vec![(
                    "modify",
                    object(vec![("ports", Datum::scalar(a).to_json())]),
                )]),
            );
            object(vec![("Port_Group", Json::Object(rows))])
        };
        let diffs = diffs.max(1);
        let diff_msgs: Vec<Json> = (0..diffs).map(mk).collect();
        let diff_bytes = diff_msgs.first().map(Json::serialized_len).unwrap_or(0);
        let t0 = clock();
        for m in &diff_msgs {
            idl.apply_table_updates(2, m, false).expect("diff applies");
        }
        let diff_ms = clock() - t0;
        let ((), diff_cmps) = counting(|| {
            for k in 0..diffs {
                let a = Atom::Uuid(uuid_n(size + (k / 2) % 64));
                counted_apply_diff(&mut model, &Datum::scalar(a));
            }
        });
        let mut matches = same_set(&model, idl.committed(t, row).and_then(|r| r.get(ports)));
        // Full-value (v1) updates of the same changes: every message holds
        // the whole set (prepared outside the timed loop).
        let reps = diffs.clamp(1, 20);
        let mut cur = full.clone();
        let mut full_values = Vec::new();
        let mut full_msgs = Vec::new();
        for k in 0..reps {
            let a = Atom::Uuid(uuid_n(size + 1000 + k));
            if let Datum::Set(s) = &mut cur {
                s.insert(a);
            }
            full_values.push(cur.clone());
            let mut rows = Object::new();
            rows.insert(
                row.to_string(),
                object(vec![
                    ("old", object(vec![])),
                    (
                        "new",
                        object(vec![("name", Json::from("pg")), ("ports", cur.to_json())]),
                    ),
                ]),
            );
            full_msgs.push(object(vec![("Port_Group", Json::Object(rows))]));
        }
        let full_bytes = full_msgs.first().map(Json::serialized_len).unwrap_or(0);
        let t1 = clock();
        for m in &full_msgs {
            idl.apply_table_updates(1, m, false).expect("full applies");
        }
        let full_ms = clock() - t1;
        let ((), full_cmps) = counting(|| {
            for v in &full_values {
                counted_apply_full(&mut model, v);
            }
        });
        matches &= same_set(&model, idl.committed(t, row).and_then(|r| r.get(ports)));
        points.push(DiffApplyPoint {
            set_size: size,
            diffs,
            diff_message_bytes: diff_bytes,
            full_message_bytes: full_bytes,
            diff_us_per_apply: diff_ms * 1000.0 / diffs.max(1) as f64,
            full_us_per_apply: full_ms * 1000.0 / reps as f64,
            model_d_log_n: (size.max(2) as f64).log2(),
            diff_comparisons_per_apply: diff_cmps as f64 / diffs as f64,
            full_comparisons_per_apply: full_cmps as f64 / reps as f64,
            model_matches_replica: matches,
        });
    }
    let n = sizes.iter().copied().max().unwrap_or(0);
    let base = ovsdb::order::btree_set((0..n).map(|i| Counted(Atom::Uuid(uuid_n(i)))));
    let diff_sizes = DIFF_SIZES
        .iter()
        .map(|&d| {
            let diff = Datum::set((0..d).map(|k| Atom::Uuid(uuid_n(n + 1 + k))));
            let mut set = base.clone();
            let ((), comparisons) = counting(|| counted_apply_diff(&mut set, &diff));
            DiffSizePoint {
                set_size: n,
                diff_elements: d,
                comparisons,
            }
        })
        .collect();
    DiffApplyReport { points, diff_sizes }
}

impl DiffApplyReport {
    pub fn to_json(&self) -> Json {
        object(vec![
            ("experiment", Json::from("diff-apply")),
            (
                "points",
                Json::Array(
                    self.points
                        .iter()
                        .map(|p| {
                            object(vec![
                                ("set_size", n(p.set_size as u64)),
                                ("diffs", n(p.diffs as u64)),
                                ("diff_message_bytes", n(p.diff_message_bytes as u64)),
                                ("full_message_bytes", n(p.full_message_bytes as u64)),
                                ("diff_us_per_apply", f(p.diff_us_per_apply)),
                                ("full_us_per_apply", f(p.full_us_per_apply)),
                                ("model_d_log_n", f(p.model_d_log_n)),
                                (
                                    "diff_comparisons_per_apply",
                                    f(p.diff_comparisons_per_apply),
                                ),
                                (
                                    "full_comparisons_per_apply",
                                    f(p.full_comparisons_per_apply),
                                ),
                                ("model_matches_replica", Json::Bool(p.model_matches_replica)),
                            ])
                        })
                        .collect(),
                ),
            ),
            (
                "diff_sizes",
                Json::Array(
                    self.diff_sizes
                        .iter()
                        .map(|p| {
                            object(vec![
                                ("set_size", n(p.set_size as u64)),
                                ("diff_elements", n(p.diff_elements as u64)),
                                ("comparisons", n(p.comparisons)),
                            ])
                        })
                        .collect(),
                ),
            ),
        ])
    }

    pub fn to_text(&self) -> String {
        let mut s = String::from(
            "diff-apply: single-element diffs (update2 modify) vs full values (update v1)\n",
        );
        s.push_str(&format!(
            "{:>9} {:>7} {:>11} {:>12} {:>14} {:>14} {:>9} {:>11} {:>11}\n",
            "set size",
            "diffs",
            "diff msg B",
            "full msg B",
            "diff us/apply",
            "full us/apply",
            "log2 n",
            "diff cmp",
            "full cmp"
        ));
        for p in &self.points {
            s.push_str(&format!(
                "{:>9} {:>7} {:>11} {:>12} {:>14.3} {:>14.1} {:>9.1} {:>11.1} {:>11.0}\n",
                p.set_size,
                p.diffs,
                p.diff_message_bytes,
                p.full_message_bytes,
                p.diff_us_per_apply,
                p.full_us_per_apply,
                p.model_d_log_n,
                p.diff_comparisons_per_apply,
                p.full_comparisons_per_apply
            ));
        }
        s.push_str(
            "cmp = atom comparisons per apply (parse + apply), counted on an instrumented set\n",
        );
        for p in &self.diff_sizes {
            s.push_str(&format!(
                "diff of {:>5} new elements at n = {}: {} comparisons ({:.1} per element)\n",
                p.diff_elements,
                p.set_size,
                p.comparisons,
                p.comparisons as f64 / p.diff_elements.max(1) as f64
            ));
        }
        s
    }
}
