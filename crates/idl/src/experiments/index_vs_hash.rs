//! The index-vs-hash experiment (§5.4): a persistent IDL index against a
//! temporary hash per evaluation, and where their costs cross.

use super::{f, n, Clock};
use crate::hub::Hub;
use crate::replica::{Idl, IndexPolicy};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::{object, Json};
use ovsdb::uuid::Uuid;
use ovsdb_server::meta::DbMeta;
use ovsdb_server::{Server, ServerOptions};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

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
