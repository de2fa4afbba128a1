//! ovsdb-server: an in-memory OVSDB server model (sans-IO).
//!
//! It executes `transact` (insert, select, update, mutate, delete, wait,
//! commit, abort, comment, assert) with named UUIDs, referential integrity,
//! garbage collection of unreferenced non-root rows and dropping of no-op
//! row changes, and serves `monitor`, `monitor_cond`, `monitor_cond_since`
//! and `monitor_cond_change`, composing `update`, `update2` and `update3`
//! with column diffs, per-session change sets (coalescing) and a history
//! of committed transactions for `monitor_cond_since`.
//!
//! A session's transaction whose `wait` is not yet satisfied waits as in
//! ovsdb-server (a trigger, see the `triggers` module): it is re-run after
//! every commit and expires on a virtual clock moved by [`Server::advance`].
//!
//! Nothing here does I/O: callers feed parsed JSON-RPC messages with
//! [`Server::handle`] and deliver the returned messages themselves. Updates
//! caused by a transaction are returned before its reply, as ovsdb-server
//! sends them.
//!
//! The model is every simulated server's database in `raft-sim` and the
//! server the `idl` crate's replicas talk to in-process. The table metadata
//! ([`meta`]), the `where`/monitor conditions ([`cond`]) and the seeded UUID
//! generator ([`rng`]) live here and are shared with the IDL replica.
//!
//! It is checked against the real ovsdb-server 3.1 by differential tests
//! (random transactions; results and `update`/`update2` messages
//! identical), and reproduces 3.1's weak-reference behaviour by default
//! ([`ServerOptions::weak_refs_as_ovs_3_1`]: which references to a row
//! deleted in a transaction survive depends on the hash order in which
//! ovsdb-server assesses the transaction's rows; checked against the real
//! server by `tests/weak_refs_real_server.rs`). Waiting transactions are
//! checked by `tests/triggers_real_server.rs`; the `_Server` database
//! ([`Server::enable_server_db`]) by the `idl` crate's
//! `tests/server_db_real_server.rs`, with the replica's handshake.

pub mod cond;
pub mod meta;
pub mod rng;

pub use meta::DbMeta;

use crate::cond::{resolve_column, ColRef, Condition, RowView};
use crate::meta::TableMeta;
use crate::rng::SplitMix64;
use ovsdb::atom::Atom;
use ovsdb::datum::{Datum, ParseOptions};
use ovsdb::error::{Error, Result};
use ovsdb::json::{Json, Object};
use ovsdb::types::{AtomicType, Type};
use ovsdb::uuid::Uuid;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

mod server_db;
mod triggers;
pub use server_db::{DatabaseStatus, DbModel, SERVER_SCHEMA};
pub use triggers::PendingTransaction;
use triggers::{Trigger, TxnStep, WaitMode};

/// A committed row version.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub uuid: Uuid,
    pub version: Uuid,
    pub cols: Vec<Datum>,
}

impl Row {
    fn view(&self) -> RowView<'_> {
        RowView {
            uuid: self.uuid,
            version: self.version,
            cols: &self.cols,
        }
    }
}

pub type RowRef = Arc<Row>;

/// One row changed by a committed transaction.
#[derive(Debug, Clone)]
pub struct RowChange {
    pub table: usize,
    pub uuid: Uuid,
    pub old: Option<RowRef>,
    pub new: Option<RowRef>,
}

/// What a successful commit changed.
#[derive(Debug, Clone)]
pub struct Commit {
    pub txn_id: Uuid,
    pub changes: Vec<RowChange>,
    pub comment: Option<String>,
}

/// The outcome of one `transact`.
#[derive(Debug, Clone)]
pub struct TransactOutcome {
    /// The `result` array of the reply.
    pub result: Json,
    /// Present if the transaction committed a real change.
    pub commit: Option<Commit>,
    /// Operation counts, for experiments.
    pub stats: TxnStats,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxnStats {
    pub ops: usize,
    pub rows_touched: usize,
    pub rows_changed: usize,
    pub values_parsed: usize,
}

pub type SessionId = u64;

/// Messages to deliver, each to its session.
pub type Outbox = Vec<(SessionId, Json)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Select {
    initial: bool,
    insert: bool,
    delete: bool,
    modify: bool,
}

impl Default for Select {
    fn default() -> Self {
        Select {
            initial: true,
            insert: true,
            delete: true,
            modify: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MonCol {
    Version,
    Col(usize),
}

#[derive(Debug, Clone)]
struct MonTable {
    table: usize,
    columns: Vec<MonCol>,
    select: Select,
    cond: Condition,
}

type ChangeKey = (usize, Uuid);

#[derive(Debug, Clone)]
struct Monitor {
    id: Json,
    version: u8,
    tables: Vec<MonTable>,
    pending: BTreeMap<ChangeKey, (Option<RowRef>, Option<RowRef>)>,
}

#[derive(Debug, Clone, Default)]
struct Session {
    monitors: Vec<Monitor>,
    hold: bool,
    locks: BTreeSet<String>,
    /// Set by `set_db_change_aware`: a canceled trigger is answered.
    db_change_aware: bool,
}

/// Options of a server model.
#[derive(Debug, Clone, Copy)]
pub struct ServerOptions {
    /// Clustered databases keep a transaction history for
    /// `monitor_cond_since`; standalone ones report zero ids.
    pub clustered: bool,
    /// Seed of the PRNG that makes row UUIDs and transaction ids.
    pub seed: u64,
    /// Maximum number of transactions kept in history.
    pub history_max: usize,
    /// Reject `monitor_cond`, `monitor_cond_since` and
    /// `monitor_cond_change` (like `ovsdb-server/disable-monitor-cond`), so
    /// clients fall back to `monitor`.
    pub disable_monitor_cond: bool,
    /// Reproduce ovsdb-server 3.1's weak-reference assessment (on by
    /// default, since the interop tests run 3.1). After garbage
    /// collection, the transaction's rows are assessed table by table (in
    /// the order the operations first touched the tables) and within a
    /// table in OVS `hmap` order of the UUID's first 32-bit word (the
    /// [`ovsdb::json::Hmap`] that `ovsdb::Database` uses for the same rule
    /// on log replay). A row of the transaction (really modified, inserted,
    /// or with a changed strong reference count) that is assessed *before*
    /// a row deleted in the same transaction keeps its set or map weak
    /// reference to it, which then dangles; one assessed after it, and
    /// every referrer outside the transaction, loses it. References a row
    /// adds are always checked, and optional (max 1) weak columns count as
    /// added whole, so they never keep a reference to a deleted row.
    /// Checked against the real server by `tests/weak_refs_real_server.rs`
    /// (a few random transactions still differ, see there). Off: every
    /// weak reference to a missing row is removed at once.
    pub weak_refs_as_ovs_3_1: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            clustered: false,
            seed: 1,
            history_max: 100,
            disable_monitor_cond: false,
            weak_refs_as_ovs_3_1: true,
        }
    }
}

/// The in-memory server. `Clone` copies it whole (rows are shared
/// immutable versions), e.g. for a simulator checkpoint.
#[derive(Debug, Clone)]
pub struct Server {
    pub meta: Arc<DbMeta>,
    opts: ServerOptions,
    tables: Vec<BTreeMap<Uuid, RowRef>>,
    rng: SplitMix64,
    last_txn_id: Uuid,
    history: VecDeque<Commit>,
    /// Atoms held by the history's row versions, and by the database.
    history_atoms: usize,
    db_atoms: usize,
    /// Strong references to each committed row from committed rows,
    /// kept up to date at every install so that a commit only looks at
    /// the rows it changes (as ovsdb-server does), not the whole database.
    strong_refs: HashMap<Uuid, u32>,
    /// Per table: its strong-reference columns with their target tables.
    strong_cols: Vec<Vec<RefCol>>,
    /// Per table: its columns holding weak references.
    weak_cols: Vec<Vec<usize>>,
    /// Whether any column of the schema holds references at all.
    any_refs: bool,
    sessions: BTreeMap<SessionId, Session>,
    next_session: SessionId,
    lock_owners: HashMap<String, SessionId>,
    /// Sessions waiting for a lock, in request order.
    lock_waiters: HashMap<String, VecDeque<SessionId>>,
    /// The virtual clock (ms), moved by [`Server::advance`].
    now_ms: i64,
    /// Transactions waiting for a `wait` to be satisfied, oldest first.
    triggers: Vec<Trigger>,
    /// The optional `_Server` database ([`Server::enable_server_db`]).
    server_db: Option<Box<server_db::ServerDb>>,
}

fn err_json(e: &Error) -> Json {
    let mut o = Object::new();
    o.insert("error", Json::from(e.tag));
    o.insert("details", Json::from(e.details.as_str()));
    Json::Object(o)
}

fn reply(id: &Json, result: Json) -> Json {
    let mut o = Object::new();
    o.insert("id", id.clone());
    o.insert("result", result);
    o.insert("error", Json::Null);
    Json::Object(o)
}

/// An error reply carries no `result` member (as ovsdb-server sends it).
fn error_reply(id: &Json, error: Json) -> Json {
    let mut o = Object::new();
    o.insert("id", id.clone());
    o.insert("error", error);
    Json::Object(o)
}

fn notification(method: &str, params: Vec<Json>) -> Json {
    let mut o = Object::new();
    o.insert("id", Json::Null);
    o.insert("method", Json::from(method));
    o.insert("params", Json::Array(params));
    Json::Object(o)
}

fn uuid_json(u: Uuid) -> Json {
    Json::Array(vec![Json::from("uuid"), Json::String(u.to_string())])
}

/// Working state of a transaction being executed.
struct Work<'a> {
    meta: &'a DbMeta,
    committed: &'a [BTreeMap<Uuid, RowRef>],
    /// Rows written by the transaction: `None` = deleted.
    changed: Vec<BTreeMap<Uuid, Option<Row>>>,
    /// Rows inserted by this transaction.
    inserted: HashSet<Uuid>,
    /// Rows in the order the operations first touched them (the order
    /// ovsdb-server adds them, and their tables, to its transaction).
    order: Vec<(usize, Uuid)>,
    named: HashMap<String, Uuid>,
    comment: Vec<String>,
    stats: TxnStats,
    wait: WaitMode,
}

impl<'a> Work<'a> {
    /// Records the first time an operation touches row `u` of table `t`.
    fn touch(&mut self, t: usize, u: Uuid) {
        if !self.changed[t].contains_key(&u) {
            self.order.push((t, u));
        }
    }

    fn get(&self, t: usize, u: Uuid) -> Option<RowView<'_>> {
        match self.changed[t].get(&u) {
            Some(Some(r)) => Some(r.view()),
            Some(None) => None,
            None => self.committed[t].get(&u).map(|r| r.view()),
        }
    }

    fn exists(&self, t: usize, u: Uuid) -> bool {
        match self.changed[t].get(&u) {
            Some(x) => x.is_some(),
            None => self.committed[t].contains_key(&u),
        }
    }

    fn row_owned(&self, t: usize, u: Uuid) -> Option<Row> {
        match self.changed[t].get(&u) {
            Some(x) => x.clone(),
            None => self.committed[t].get(&u).map(|r| (**r).clone()),
        }
    }

    /// UUIDs of the rows of table `t` matching `cond` (AND), in UUID order.
    fn matching(&self, t: usize, cond: &Condition) -> Vec<Uuid> {
        if let Some(u) = cond.uuid_eq() {
            return match self.get(t, u) {
                Some(v) if cond.eval_all(&v) => vec![u],
                _ => vec![],
            };
        }
        let mut out = Vec::new();
        for (u, r) in self.committed[t].iter() {
            if self.changed[t].contains_key(u) {
                continue;
            }
            if cond.eval_all(&r.view()) {
                out.push(*u);
            }
        }
        for (u, r) in self.changed[t].iter() {
            if let Some(r) = r {
                if cond.eval_all(&r.view()) {
                    out.push(*u);
                }
            }
        }
        out.sort_unstable();
        out
    }
}

fn table_of(meta: &DbMeta, op: &Object) -> Result<usize> {
    let name = op
        .get("table")
        .and_then(Json::as_str)
        .ok_or_else(|| Error::syntax("op requires \"table\""))?;
    meta.table(name)
        .ok_or_else(|| Error::syntax(format!("No table named {name}.")))
}

/// Resolver for named UUIDs within one transaction.
fn named_resolver(named: &HashMap<String, Uuid>) -> impl FnMut(&str) -> Result<Uuid> + '_ {
    move |n: &str| {
        named
            .get(n)
            .copied()
            .ok_or_else(|| Error::syntax(format!("named-uuid \"{n}\" is not defined")))
    }
}

fn parse_value(j: &Json, ty: &Type, named: &HashMap<String, Uuid>, relaxed: bool) -> Result<Datum> {
    let mut f = named_resolver(named);
    Datum::from_json_with(
        j,
        ty,
        ParseOptions {
            relaxed_size: relaxed,
            named_uuid: Some(&mut f),
        },
    )
}

fn parse_cond(j: Option<&Json>, t: &TableMeta, named: &HashMap<String, Uuid>) -> Result<Condition> {
    match j {
        None => Err(Error::syntax("op requires \"where\"")),
        Some(j) => {
            let mut f = named_resolver(named);
            Condition::from_json(j, t, Some(&mut f))
        }
    }
}

fn row_to_json_cols(t: &TableMeta, r: &Row, cols: &[MonCol], skip_default: bool) -> Json {
    let mut o = Object::new();
    for c in cols {
        match c {
            MonCol::Version => {
                o.insert("_version", uuid_json(r.version));
            }
            MonCol::Col(i) => {
                let d = &r.cols[*i];
                if skip_default && d.is_default(&t.columns[*i].ty) {
                    continue;
                }
                o.insert(t.columns[*i].name.clone(), d.to_json());
            }
        }
    }
    Json::Object(o)
}

fn col_changed(old: &Row, new: &Row, c: MonCol) -> bool {
    match c {
        MonCol::Version => old.version != new.version,
        MonCol::Col(i) => old.cols[i] != new.cols[i],
    }
}

impl Server {
    pub fn new(meta: DbMeta, opts: ServerOptions) -> Server {
        Server::with_meta(Arc::new(meta), opts)
    }

    /// A server for metadata shared with others (e.g. every member of a
    /// simulated cluster), without copying it.
    pub fn with_meta(meta: Arc<DbMeta>, opts: ServerOptions) -> Server {
        let n = meta.tables.len();
        let any_refs = meta
            .tables
            .iter()
            .any(|t| t.columns.iter().any(|c| has_ref(&c.ty)));
        let weak_cols = meta
            .tables
            .iter()
            .map(|t| {
                t.columns
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| {
                        c.ty.key.is_weak_ref()
                            || c.ty.value.as_ref().is_some_and(|v| v.is_weak_ref())
                    })
                    .map(|(i, _)| i)
                    .collect()
            })
            .collect();
        let strong_cols = meta
            .tables
            .iter()
            .map(|t| {
                t.columns
                    .iter()
                    .enumerate()
                    .filter_map(|(i, c)| {
                        let key = if c.ty.key.is_strong_ref() {
                            c.ty.key.ref_table.as_ref().and_then(|n| meta.table(n))
                        } else {
                            None
                        };
                        let value =
                            c.ty.value
                                .as_ref()
                                .filter(|v| v.is_strong_ref())
                                .and_then(|v| v.ref_table.as_ref())
                                .and_then(|n| meta.table(n));
                        (key.is_some() || value.is_some()).then_some(RefCol { col: i, key, value })
                    })
                    .collect()
            })
            .collect();
        Server {
            meta,
            opts,
            tables: vec![BTreeMap::new(); n],
            rng: SplitMix64::new(opts.seed),
            last_txn_id: Uuid::NIL,
            history: VecDeque::new(),
            history_atoms: 0,
            db_atoms: 0,
            strong_refs: HashMap::new(),
            strong_cols,
            weak_cols,
            any_refs,
            sessions: BTreeMap::new(),
            next_session: 1,
            lock_owners: HashMap::new(),
            lock_waiters: HashMap::new(),
            now_ms: 0,
            triggers: Vec::new(),
            server_db: None,
        }
    }

    pub fn from_schema_text(text: &str, opts: ServerOptions) -> Result<Server> {
        Ok(Server::new(DbMeta::from_text(text)?, opts))
    }

    pub fn db_name(&self) -> &str {
        &self.meta.name
    }

    /// The id of the newest committed transaction (zero for standalone
    /// servers, which keep no history).
    pub fn last_txn_id(&self) -> Uuid {
        if self.opts.clustered {
            self.last_txn_id
        } else {
            Uuid::NIL
        }
    }

    pub fn row_count(&self, table: &str) -> usize {
        self.meta
            .table(table)
            .map(|t| self.tables[t].len())
            .unwrap_or(0)
    }

    pub fn rows(&self, table: usize) -> impl Iterator<Item = &RowRef> {
        self.tables[table].values()
    }

    pub fn get_row(&self, table: usize, uuid: Uuid) -> Option<&RowRef> {
        self.tables[table].get(&uuid)
    }

    /// `{table: {uuid: {column: value}}}` with every column (defaults
    /// included), tables and rows in name/UUID order; empty tables omitted.
    pub fn dump(&self) -> Json {
        let mut o = Object::new();
        for (ti, t) in self.meta.tables.iter().enumerate() {
            if self.tables[ti].is_empty() {
                continue;
            }
            let mut rows = Object::new();
            for (u, r) in &self.tables[ti] {
                let mut ro = Object::new();
                for (ci, c) in t.columns.iter().enumerate() {
                    ro.insert(c.name.clone(), r.cols[ci].to_json());
                }
                rows.insert(u.to_string(), Json::Object(ro));
            }
            o.insert(t.name.clone(), Json::Object(rows));
        }
        Json::Object(o)
    }

    // ------------------------------------------------------------------
    // Sessions and JSON-RPC

    pub fn connect(&mut self) -> SessionId {
        let id = self.next_session;
        self.next_session += 1;
        self.sessions.insert(id, Session::default());
        if let Some(sd) = self.server_db.as_mut() {
            sd.db.sessions.insert(id, Session::default());
        }
        id
    }

    /// Drops a session; locks it held pass to the next waiting session,
    /// which is told with a `locked` notification (returned).
    pub fn disconnect(&mut self, s: SessionId) -> Vec<(SessionId, Json)> {
        self.sessions.remove(&s);
        // Its waiting transactions go without a reply (as ovsdb-server).
        self.triggers.retain(|t| t.session != s);
        if let Some(sd) = self.server_db.as_mut() {
            sd.db.disconnect(s);
        }
        for q in self.lock_waiters.values_mut() {
            q.retain(|w| *w != s);
        }
        let held: Vec<String> = self
            .lock_owners
            .iter()
            .filter(|(_, o)| **o == s)
            .map(|(n, _)| n.clone())
            .collect();
        let mut out = Vec::new();
        for name in held {
            out.extend(self.release_lock(&name));
        }
        out
    }

    /// Gives lock `name` to the next waiter, if any.
    fn release_lock(&mut self, name: &str) -> Vec<(SessionId, Json)> {
        self.lock_owners.remove(name);
        let next = self
            .lock_waiters
            .get_mut(name)
            .and_then(VecDeque::pop_front);
        match next {
            Some(w) => {
                self.lock_owners.insert(name.to_string(), w);
                if let Some(sess) = self.sessions.get_mut(&w) {
                    sess.locks.insert(name.to_string());
                }
                vec![(w, notification("locked", vec![Json::from(name)]))]
            }
            None => Vec::new(),
        }
    }

    /// Simulates a server restart: every session is dropped; data and (for
    /// clustered databases, rebuilt from the log) history are kept.
    pub fn restart(&mut self) {
        self.sessions.clear();
        self.lock_owners.clear();
        self.lock_waiters.clear();
        self.triggers.clear();
        if let Some(sd) = self.server_db.as_mut() {
            sd.db.restart();
        }
    }

    /// While held, a session's monitors accumulate changes (coalescing, as
    /// when the client has an output backlog) until [`Server::flush`].
    pub fn set_hold(&mut self, s: SessionId, hold: bool) {
        if let Some(sess) = self.sessions.get_mut(&s) {
            sess.hold = hold;
        }
        if let Some(sd) = self.server_db.as_mut() {
            sd.db.set_hold(s, hold);
        }
    }

    /// Handles one JSON-RPC message from session `s`; returns the messages
    /// to deliver, in order, with their destination sessions.
    pub fn handle(&mut self, s: SessionId, msg: &Json) -> Vec<(SessionId, Json)> {
        let mut out = Vec::new();
        let Some(o) = msg.as_object() else {
            return out;
        };
        let id = o.get("id").cloned().unwrap_or(Json::Null);
        let Some(method) = o.get("method").and_then(Json::as_str) else {
            return out; // replies (e.g. to our echo) are ignored
        };
        let empty = Vec::new();
        let params: &[Json] = o.get("params").and_then(Json::as_array).unwrap_or(&empty);
        let cond_method = matches!(
            method,
            "monitor_cond" | "monitor_cond_since" | "monitor_cond_change"
        );
        let method = if cond_method && self.opts.disable_monitor_cond {
            "disabled"
        } else {
            method
        };
        if let Some(out) = self.route_server_db(s, &id, method, params, msg) {
            return out;
        }
        // A transaction that waits gets no reply now; messages caused by
        // a reply (re-run triggers) go after it.
        let mut no_reply = false;
        let mut after: Outbox = Vec::new();
        let r: std::result::Result<Json, Json> = match method {
            "echo" => Ok(Json::Array(params.to_vec())),
            "list_dbs" => Ok(Json::Array(vec![Json::from(self.meta.name.as_str())])),
            "get_schema" => {
                if params.first().and_then(Json::as_str) == Some(self.meta.name.as_str()) {
                    Ok(self.meta.json.clone())
                } else {
                    Err(Json::from("unknown database"))
                }
            }
            "transact" => match self.session_transact(s, &id, params) {
                TxnStep::Reply {
                    before,
                    result,
                    after: a,
                } => {
                    out.extend(before);
                    after = a;
                    result
                }
                TxnStep::Pending => {
                    no_reply = true;
                    Ok(Json::Null)
                }
            },
            // RFC 7047 `cancel` is a notification; as a request ovsdb-server
            // answers "unknown method" (below).
            "cancel" if id.is_null() => {
                out.extend(self.cancel_trigger(s, params));
                Ok(Json::Null)
            }
            "set_db_change_aware" => match params {
                [Json::Bool(b)] => {
                    if let Some(sess) = self.sessions.get_mut(&s) {
                        sess.db_change_aware = *b;
                    }
                    Ok(Json::Object(Object::new()))
                }
                _ => Err(err_json(&Error::syntax(
                    "set_db_change_aware: true or false parameter expected",
                ))),
            },
            "monitor" | "monitor_cond" | "monitor_cond_since" => {
                let version = match method {
                    "monitor" => 1,
                    "monitor_cond" => 2,
                    _ => 3,
                };
                self.monitor(s, version, params)
            }
            "monitor_cond_change" => match self.monitor_cond_change(s, params) {
                Ok((upd, res)) => {
                    out.extend(upd.into_iter().map(|m| (s, m)));
                    Ok(res)
                }
                Err(e) => Err(e),
            },
            "monitor_cancel" => {
                let mid = params.first().cloned().unwrap_or(Json::Null);
                match self.sessions.get_mut(&s) {
                    Some(sess) => {
                        let before = sess.monitors.len();
                        sess.monitors.retain(|m| m.id != mid);
                        if sess.monitors.len() < before {
                            Ok(Json::Object(Object::new()))
                        } else {
                            Err(Json::from("unknown monitor"))
                        }
                    }
                    None => Err(Json::from("unknown monitor")),
                }
            }
            "lock" | "steal" => {
                let name = params
                    .first()
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .to_string();
                let owner = self.lock_owners.get(&name).copied();
                let got = match owner {
                    None => true,
                    Some(o) if o == s => true,
                    Some(o) if method == "steal" => {
                        if let Some(sess) = self.sessions.get_mut(&o) {
                            sess.locks.remove(&name);
                        }
                        out.push((o, notification("stolen", vec![Json::from(name.as_str())])));
                        true
                    }
                    _ => false,
                };
                if got {
                    self.lock_owners.insert(name.clone(), s);
                    if let Some(sess) = self.sessions.get_mut(&s) {
                        sess.locks.insert(name.clone());
                    }
                } else {
                    let q = self.lock_waiters.entry(name.clone()).or_default();
                    if !q.contains(&s) {
                        q.push_back(s);
                    }
                }
                let mut r = Object::new();
                r.insert("locked", Json::Bool(got));
                Ok(Json::Object(r))
            }
            "unlock" => {
                let name = params
                    .first()
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .to_string();
                if let Some(sess) = self.sessions.get_mut(&s) {
                    sess.locks.remove(&name);
                }
                if let Some(q) = self.lock_waiters.get_mut(&name) {
                    q.retain(|w| *w != s);
                }
                if self.lock_owners.get(&name) == Some(&s) {
                    out.extend(self.release_lock(&name));
                }
                Ok(Json::Object(Object::new()))
            }
            _ => Err(Json::from("unknown method")),
        };
        if !id.is_null() && !no_reply {
            out.push((
                s,
                match r {
                    Ok(res) => reply(&id, res),
                    Err(e) => error_reply(&id, e),
                },
            ));
        }
        out.extend(after);
        out
    }

    // ------------------------------------------------------------------
    // transact

    /// Executes a transaction outside any session (as `ovsdb-tool transact`
    /// would): `ops` excludes the database name. Monitors still see it.
    pub fn transact(&mut self, ops: &[Json]) -> (TransactOutcome, Vec<(SessionId, Json)>) {
        let outcome = self.transact_for(None, ops);
        let mut msgs = match &outcome.commit {
            Some(c) => self.distribute(c),
            None => Vec::new(),
        };
        if outcome.commit.is_some() && !self.triggers.is_empty() {
            msgs.extend(self.run_triggers());
        }
        (outcome, msgs)
    }

    /// Installs a commit made by [`Server::prepare`] (here or on a replica
    /// holding the same rows) and sends the monitors their updates. Fails,
    /// changing nothing, when a row it changes no longer has the value the
    /// commit was prepared against (the prerequisite check of a clustered
    /// commit).
    pub fn apply_commit(&mut self, commit: &Commit) -> Result<Vec<(SessionId, Json)>> {
        for ch in &commit.changes {
            let now = self
                .tables
                .get(ch.table)
                .ok_or_else(|| Error::syntax("commit names an unknown table"))?
                .get(&ch.uuid);
            let same = match (now, &ch.old) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a.cols == b.cols,
                _ => false,
            };
            if !same {
                return Err(Error::new(
                    "prerequisite check failed",
                    format!("row {} changed since the commit was prepared", ch.uuid),
                ));
            }
        }
        self.install(commit);
        Ok(self.distribute(commit))
    }

    /// Replays a transaction record as a database log stores it,
    /// `{table: {uuid: row or null}}` plus `_date`, `_comment` and
    /// `_is_diff` (with `_is_diff`, composite columns of modified rows hold
    /// column diffs). This is how every member of a cluster applies a
    /// committed entry: the record already carries the effects of garbage
    /// collection and weak-reference removal, so none is recomputed. Rows
    /// get fresh `_version`s. Returns the commit (none when nothing
    /// changed) and the monitors' updates; on error nothing is changed.
    pub fn apply_record(&mut self, txn: &Json) -> Result<(Option<Commit>, Outbox)> {
        let obj = txn
            .as_object()
            .ok_or_else(|| Error::syntax("transaction record is not an object"))?;
        let is_diff = matches!(obj.get("_is_diff"), Some(Json::Bool(true)));
        let comment = obj
            .get("_comment")
            .and_then(Json::as_str)
            .map(str::to_string);
        let meta = self.meta.clone();
        let mut changes = Vec::new();
        for (tname, rows) in obj.iter() {
            if tname.starts_with('_') {
                continue;
            }
            let ti = meta
                .table(tname)
                .ok_or_else(|| Error::syntax(format!("No table named {tname}.")))?;
            let t = &meta.tables[ti];
            let rows = rows
                .as_object()
                .ok_or_else(|| Error::syntax(format!("table {tname} is not an object")))?;
            for (ustr, rowj) in rows.iter() {
                let uuid = Uuid::parse(ustr)
                    .ok_or_else(|| Error::syntax(format!("{ustr} is not a UUID")))?;
                let old = self.tables[ti].get(&uuid).cloned();
                let new = match rowj {
                    Json::Null => {
                        if old.is_none() {
                            return Err(Error::syntax(format!(
                                "record deletes row {uuid}, which is not in table {tname}"
                            )));
                        }
                        None
                    }
                    Json::Object(cols) => {
                        let mut row = match &old {
                            Some(o) => (**o).clone(),
                            None => Row {
                                uuid,
                                version: Uuid::NIL,
                                cols: t
                                    .columns
                                    .iter()
                                    .map(|c| Datum::default_for(&c.ty))
                                    .collect(),
                            },
                        };
                        for (cname, v) in cols.iter() {
                            let ci = t.column(cname).ok_or_else(|| {
                                Error::syntax(format!("No column {cname} in table {tname}."))
                            })?;
                            let ty = &t.columns[ci].ty;
                            if is_diff && old.is_some() && ty.is_composite() {
                                let d = Datum::diff_from_json(v, ty)?;
                                row.cols[ci].apply_diff(&d, ty)?;
                            } else {
                                row.cols[ci] = Datum::from_json(v, ty)?;
                            }
                        }
                        if old.as_ref().is_some_and(|o| o.cols == row.cols) {
                            continue;
                        }
                        row.version = self.rng.uuid();
                        Some(Arc::new(row))
                    }
                    _ => {
                        return Err(Error::syntax(format!(
                            "row {uuid} of table {tname} is neither an object nor null"
                        )))
                    }
                };
                changes.push(RowChange {
                    table: ti,
                    uuid,
                    old,
                    new,
                });
            }
        }
        if changes.is_empty() {
            return Ok((None, Vec::new()));
        }
        let commit = Commit {
            txn_id: self.rng.uuid(),
            changes,
            comment,
        };
        self.install(&commit);
        let msgs = self.distribute(&commit);
        Ok((Some(commit), msgs))
    }

    fn transact_for(&mut self, session: Option<SessionId>, ops: &[Json]) -> TransactOutcome {
        self.execute(session, ops, true, WaitMode::NoWait)
    }

    /// Executes `ops` against the committed database without changing it,
    /// as a clustered ovsdb-server does before it proposes the result to
    /// Raft: the outcome's `commit` is what [`Server::apply_commit`] (on
    /// this server) or [`Server::apply_record`] of its [`entry_data`] (on
    /// any replica) installs once the entry is committed.
    pub fn prepare(&mut self, ops: &[Json]) -> TransactOutcome {
        self.execute(None, ops, false, WaitMode::Prepare)
    }

    fn execute(
        &mut self,
        session: Option<SessionId>,
        ops: &[Json],
        install: bool,
        wait: WaitMode,
    ) -> TransactOutcome {
        let meta = self.meta.clone();
        let locks: BTreeSet<String> = session
            .and_then(|s| self.sessions.get(&s))
            .map(|s| s.locks.clone())
            .unwrap_or_default();
        let mut work = Work {
            meta: &meta,
            committed: &self.tables,
            changed: vec![BTreeMap::new(); meta.tables.len()],
            inserted: HashSet::new(),
            order: Vec::new(),
            named: HashMap::new(),
            comment: Vec::new(),
            stats: TxnStats::default(),
            wait,
        };
        // Named UUIDs may be referenced before the insert that declares
        // them, so allocate them all first.
        let mut fresh: Vec<(Option<String>, Uuid)> = Vec::new();
        for op in ops {
            if let Some(o) = op.as_object() {
                if o.get("op").and_then(Json::as_str) == Some("insert") {
                    let given = o.get("uuid").and_then(|u| u.as_str()).and_then(Uuid::parse);
                    let u = given.unwrap_or_else(|| self.rng.uuid());
                    let name = o
                        .get("uuid-name")
                        .and_then(Json::as_str)
                        .map(str::to_string);
                    if let Some(n) = &name {
                        work.named.insert(n.clone(), u);
                    }
                    fresh.push((name, u));
                }
            }
        }
        let mut fresh_iter = fresh.into_iter();
        let mut results: Vec<Json> = Vec::new();
        let mut failed = false;
        for op in ops {
            work.stats.ops += 1;
            let r = execute_op(&mut work, op, &mut fresh_iter, &locks);
            match r {
                Ok(j) => results.push(j),
                Err(e) => {
                    results.push(err_json(&e));
                    failed = true;
                    break;
                }
            }
        }
        let stats_before = work.stats;
        if failed {
            while results.len() < ops.len() {
                results.push(Json::Null);
            }
            return TransactOutcome {
                result: Json::Array(results),
                commit: None,
                stats: stats_before,
            };
        }
        let comment = if work.comment.is_empty() {
            None
        } else {
            Some(work.comment.join("\n"))
        };
        let Work {
            changed,
            inserted,
            order,
            ..
        } = work;
        let txn_id = self.rng.uuid();
        match self.finish_commit(changed, &inserted, &order, txn_id, comment, install) {
            Ok(commit) => {
                let mut stats = stats_before;
                stats.rows_changed = commit.as_ref().map(|c| c.changes.len()).unwrap_or(0);
                TransactOutcome {
                    result: Json::Array(results),
                    commit,
                    stats,
                }
            }
            Err(e) => {
                results.push(err_json(&e));
                TransactOutcome {
                    result: Json::Array(results),
                    commit: None,
                    stats: stats_before,
                }
            }
        }
    }

    /// Commit-time work: weak reference cleanup, referential integrity,
    /// garbage collection, row-count and index constraints, dropping
    /// no-op rows, new `_version`s, history.
    fn finish_commit(
        &mut self,
        mut changed: Vec<BTreeMap<Uuid, Option<Row>>>,
        inserted: &HashSet<Uuid>,
        order: &[(usize, Uuid)],
        txn_id: Uuid,
        comment: Option<String>,
        install: bool,
    ) -> Result<Option<Commit>> {
        let meta = self.meta.clone();
        if self.any_refs {
            self.check_references(&mut changed, order)?;
        }
        // maxRows and unique indexes.
        for (ti, t) in meta.tables.iter().enumerate() {
            if changed[ti].is_empty() {
                continue;
            }
            if let Some(max) = t.max_rows {
                let mut n = self.tables[ti].len() as i64;
                for (u, r) in &changed[ti] {
                    let was = self.tables[ti].contains_key(u);
                    match (was, r.is_some()) {
                        (false, true) => n += 1,
                        (true, false) => n -= 1,
                        _ => {}
                    }
                }
                if n > max as i64 {
                    return Err(Error::constraint(format!(
                        "transaction causes \"{}\" table to contain {} rows, greater than the schema-defined limit of {} row(s)",
                        t.name, n, max
                    )));
                }
            }
            for idx in &t.indexes {
                if let Some((other, u)) = first_duplicate(idx, &self.tables[ti], &changed[ti]) {
                    let names: Vec<&str> =
                        idx.iter().map(|&c| t.columns[c].name.as_str()).collect();
                    return Err(Error::constraint(format!(
                        "Transaction causes multiple rows in \"{}\" table to have identical values for ({}) ({} and {}).",
                        t.name,
                        names.join(", "),
                        other,
                        u
                    )));
                }
            }
        }
        // Determine the real changes (installed below, or later by
        // `apply_commit` for a prepared transaction).
        let mut changes = Vec::new();
        for (ti, rows) in changed.into_iter().enumerate() {
            for (u, r) in rows {
                let old = self.tables[ti].get(&u).cloned();
                match (old, r) {
                    (None, None) => {}
                    (None, Some(mut r)) => {
                        r.version = self.rng.uuid();
                        let rr = Arc::new(r);
                        changes.push(RowChange {
                            table: ti,
                            uuid: u,
                            old: None,
                            new: Some(rr),
                        });
                    }
                    (Some(o), None) => {
                        changes.push(RowChange {
                            table: ti,
                            uuid: u,
                            old: Some(o),
                            new: None,
                        });
                    }
                    (Some(o), Some(mut r)) => {
                        if o.cols == r.cols {
                            continue; // no-op row: dropped
                        }
                        r.version = self.rng.uuid();
                        let rr = Arc::new(r);
                        changes.push(RowChange {
                            table: ti,
                            uuid: u,
                            old: Some(o),
                            new: Some(rr),
                        });
                    }
                }
            }
        }
        let _ = inserted;
        if changes.is_empty() {
            return Ok(None);
        }
        let commit = Commit {
            txn_id,
            changes,
            comment,
        };
        if install {
            self.install(&commit);
        }
        Ok(Some(commit))
    }

    /// Makes `commit` the database's newest state: its rows, the
    /// transaction id, the atom counts and the history.
    fn install(&mut self, commit: &Commit) {
        for ch in &commit.changes {
            let refcols = &self.strong_cols[ch.table];
            if !refcols.is_empty() {
                let refs = &mut self.strong_refs;
                if let Some(o) = &ch.old {
                    each_strong_ref(refcols, &o.cols, |_, x| {
                        if let Some(c) = refs.get_mut(&x) {
                            *c = c.saturating_sub(1);
                            if *c == 0 {
                                refs.remove(&x);
                            }
                        }
                    });
                }
                if let Some(n) = &ch.new {
                    each_strong_ref(refcols, &n.cols, |_, x| {
                        *refs.entry(x).or_insert(0) += 1;
                    });
                }
            }
        }
        for ch in &commit.changes {
            match &ch.new {
                Some(r) => {
                    self.tables[ch.table].insert(ch.uuid, r.clone());
                }
                None => {
                    self.tables[ch.table].remove(&ch.uuid);
                }
            }
        }
        self.last_txn_id = commit.txn_id;
        for ch in &commit.changes {
            self.db_atoms += ch.new.as_deref().map(row_atoms).unwrap_or(0);
            self.db_atoms = self
                .db_atoms
                .saturating_sub(ch.old.as_deref().map(row_atoms).unwrap_or(0));
        }
        if self.opts.clustered {
            self.history_atoms += commit_atoms(commit);
            self.history.push_back(commit.clone());
            // As ovsdb-server: at most `history_max` transactions and no
            // more atoms than the database holds, keeping at least one.
            while self.history.len() > 1
                && (self.history.len() > self.opts.history_max.max(1)
                    || self.history_atoms > self.db_atoms)
            {
                if let Some(c) = self.history.pop_front() {
                    self.history_atoms = self.history_atoms.saturating_sub(commit_atoms(&c));
                }
            }
        }
    }

    /// Weak references to missing rows are removed; strong references to
    /// missing rows fail; unreferenced non-root rows are deleted. `order`
    /// lists the rows the operations touched, first touch first.
    fn check_references(
        &self,
        changed: &mut [BTreeMap<Uuid, Option<Row>>],
        order: &[(usize, Uuid)],
    ) -> Result<()> {
        let meta = self.meta.clone();
        let n = meta.tables.len();
        let exists = |changed: &[BTreeMap<Uuid, Option<Row>>], t: usize, u: &Uuid| -> bool {
            match changed[t].get(u) {
                Some(x) => x.is_some(),
                None => self.tables[t].contains_key(u),
            }
        };
        // ovsdb-server 3.1 collects garbage first and then assesses weak
        // references once, in its own order (see `assess_weak_refs_3_1`).
        let ovs31 = self.opts.weak_refs_as_ovs_3_1;
        let mut assessed = false;
        let mut loops = 0;
        loop {
            loops += 1;
            // 1. Remove dangling weak references from every row (committed
            //    rows that point to deleted rows become changed).
            //    (Only without `weak_refs_as_ovs_3_1`.)
            if !ovs31 {
                let deleted: HashSet<Uuid> = changed
                    .iter()
                    .flat_map(|m| m.iter().filter(|(_, r)| r.is_none()).map(|(u, _)| *u))
                    .collect();
                for ti in 0..n {
                    let t = &meta.tables[ti];
                    let weak_cols = &self.weak_cols[ti];
                    if weak_cols.is_empty() {
                        continue;
                    }
                    // Candidates: changed rows, plus committed rows if anything
                    // was deleted.
                    let mut cand: Vec<Uuid> = changed[ti]
                        .iter()
                        .filter(|(_, r)| r.is_some())
                        .map(|(u, _)| *u)
                        .collect();
                    // Only a deletion in a table these columns point into can
                    // leave a committed row with a dangling weak reference.
                    let points_at_deleted = weak_cols.iter().any(|&ci| {
                        let c = &t.columns[ci];
                        [
                            c.ty.key.ref_table.as_ref(),
                            c.ty.value.as_ref().and_then(|v| v.ref_table.as_ref()),
                        ]
                        .into_iter()
                        .flatten()
                        .filter_map(|name| meta.table(name))
                        .any(|tt| changed[tt].values().any(Option::is_none))
                    });
                    if points_at_deleted {
                        cand.extend(
                            self.tables[ti]
                                .keys()
                                .filter(|u| !changed[ti].contains_key(u))
                                .copied(),
                        );
                    }
                    for u in cand {
                        let row = match changed[ti].get(&u) {
                            Some(Some(r)) => r.clone(),
                            Some(None) => continue,
                            None => match self.tables[ti].get(&u) {
                                Some(r) => (**r).clone(),
                                None => continue,
                            },
                        };
                        let mut newrow = row.clone();
                        let mut touched = false;
                        // A committed row outside the transaction is only
                        // visited because it may point at a row deleted now:
                        // only those references go (older dangling ones, which
                        // ovsdb-server 3.1 can leave behind, are not touched).
                        // (Rows the operations rewrote without a real change
                        // count as outside: ovsdb-server drops them first.)
                        let untouched = match (changed[ti].get(&u), self.tables[ti].get(&u)) {
                            (None, _) => true,
                            (Some(Some(n)), Some(o)) => n.cols == o.cols,
                            _ => false,
                        };
                        for &ci in weak_cols {
                            let c = &t.columns[ci];
                            let kt = c.ty.key.ref_table.as_ref().and_then(|n| meta.table(n));
                            let vt =
                                c.ty.value
                                    .as_ref()
                                    .and_then(|v| v.ref_table.as_ref())
                                    .and_then(|n| meta.table(n));
                            let kweak = c.ty.key.is_weak_ref();
                            let vweak =
                                c.ty.value
                                    .as_ref()
                                    .map(|v| v.is_weak_ref())
                                    .unwrap_or(false);
                            let dangling = |a: &Atom, tt: Option<usize>| -> bool {
                                match (a, tt) {
                                    (Atom::Uuid(x), _) if untouched => deleted.contains(x),
                                    (Atom::Uuid(x), Some(tt)) => !exists(changed, tt, x),
                                    _ => false,
                                }
                            };
                            match &mut newrow.cols[ci] {
                                Datum::Set(s) if kweak => {
                                    let before = s.len();
                                    s.retain(|a| !dangling(a, kt));
                                    touched |= s.len() != before;
                                }
                                Datum::Map(m) => {
                                    let before = m.len();
                                    m.retain(|k, v| {
                                        !(kweak && dangling(k, kt) || vweak && dangling(v, vt))
                                    });
                                    touched |= m.len() != before;
                                }
                                _ => {}
                            }
                            if touched {
                                let d = &newrow.cols[ci];
                                if (d.len() as u32) < c.ty.min {
                                    return Err(Error::constraint(format!(
                                    "Deletion of weak reference(s) leaves column {}.{} with too few elements.",
                                    t.name, c.name
                                )));
                                }
                            }
                        }
                        if touched {
                            changed[ti].insert(u, Some(newrow));
                        }
                    }
                }
            }
            // 2. Strong references of the resulting database: the
            //    committed counts plus what the changed rows add and drop.
            let mut delta: HashMap<Uuid, (usize, i64)> = HashMap::new();
            let mut broken = false;
            for ti in 0..n {
                let refcols = &self.strong_cols[ti];
                for (u, r) in &changed[ti] {
                    if !refcols.is_empty() {
                        if let Some(old) = self.tables[ti].get(u) {
                            each_strong_ref(refcols, &old.cols, |tt, x| {
                                delta.entry(x).or_insert((tt, 0)).1 -= 1;
                            });
                        }
                        if let Some(new) = r {
                            each_strong_ref(refcols, &new.cols, |tt, x| {
                                broken |= !exists(changed, tt, &x);
                                delta.entry(x).or_insert((tt, 0)).1 += 1;
                            });
                        }
                    }
                }
            }
            // A deleted row that something still points to.
            for rows in changed.iter() {
                for (u, r) in rows {
                    if r.is_none() {
                        let left = self.strong_refs.get(u).copied().unwrap_or(0) as i64
                            + delta.get(u).map(|d| d.1).unwrap_or(0);
                        broken |= left > 0;
                    }
                }
            }
            if broken {
                // Rare: walk the whole database for the exact error
                // ovsdb-server reports (the first offending reference).
                self.strong_ref_error(changed)?;
                return Err(Error::referential("reference to a deleted row"));
            }
            let count = |x: &Uuid, delta: &HashMap<Uuid, (usize, i64)>| -> i64 {
                self.strong_refs.get(x).copied().unwrap_or(0) as i64
                    + delta.get(x).map(|d| d.1).unwrap_or(0)
            };
            // 3. Garbage-collect unreferenced non-root rows: those the
            //    transaction wrote and those that lost a reference.
            let mut doomed: Vec<(usize, Uuid)> = Vec::new();
            for (ti, tmeta) in meta.tables.iter().enumerate() {
                if tmeta.is_root {
                    continue;
                }
                for (u, r) in &changed[ti] {
                    if r.is_some() && count(u, &delta) <= 0 {
                        doomed.push((ti, *u));
                    }
                }
            }
            for (x, (tt, d)) in &delta {
                if *d < 0
                    && !meta.tables[*tt].is_root
                    && exists(changed, *tt, x)
                    && count(x, &delta) <= 0
                {
                    doomed.push((*tt, *x));
                }
            }
            doomed.sort_unstable();
            doomed.dedup();
            let collected = !doomed.is_empty();
            for (ti, u) in doomed {
                changed[ti].insert(u, None);
            }
            if collected && loops <= 64 {
                continue;
            }
            if ovs31 && !assessed {
                assessed = true;
                // Removing a weak value can drop a strong key of the same
                // map pair: check the strong references once more then.
                if self.assess_weak_refs_3_1(changed, order)? {
                    continue;
                }
            }
            return Ok(());
        }
    }

    /// ovsdb-server 3.1's weak-reference assessment (`assess_weak_refs`,
    /// run by `for_each_txn_row` in its ovsdb/transaction.c), after garbage
    /// collection. The transaction's rows are assessed table by table (in
    /// the order the tables joined the transaction) and within a table in
    /// OVS `hmap` order of the UUID's first word ([`ovsdb::json::Hmap`],
    /// shared with `ovsdb::Database`'s replay of the same rule). Assessing
    /// a deleted row queues the removal of its referrers' references to it
    /// and adds untouched referrers to the transaction (at the end of their
    /// table's hmap); a referrer drops the queued references when it is
    /// assessed, so one assessed *before* the deleted row keeps them: they
    /// dangle. Every assessed row also drops references it adds that point
    /// to missing rows; in optional (max 1) columns the whole value counts
    /// as added, so those never keep a dangling reference.
    ///
    /// The transaction's rows: those the operations really changed (an
    /// `update` writing the values a row already has never joins; other
    /// no-op modifications are dropped first, with a table left empty by that,
    /// after growing the hmap), in first-touch order; then rows collected as garbage and rows whose
    /// strong reference count changed (in table and UUID order, an
    /// approximation of the order ovsdb-server adds them in, which only
    /// matters between rows of the same hash bucket).
    ///
    /// Returns whether a column holding strong references changed.
    fn assess_weak_refs_3_1(
        &self,
        changed: &mut [BTreeMap<Uuid, Option<Row>>],
        order: &[(usize, Uuid)],
    ) -> Result<bool> {
        use ovsdb::json::Hmap;
        let meta = self.meta.clone();
        let n = meta.tables.len();
        // Rows deleted by the transaction (that existed before it).
        let deleted: BTreeSet<(usize, Uuid)> = (0..n)
            .flat_map(|ti| {
                changed[ti]
                    .iter()
                    .filter(move |(u, r)| r.is_none() && self.tables[ti].contains_key(u))
                    .map(move |(u, _)| (ti, *u))
            })
            .collect();
        if deleted.is_empty() && !self.any_weak_added(changed) {
            return Ok(false);
        }
        let real_change = |changed: &[BTreeMap<Uuid, Option<Row>>], ti: usize, u: &Uuid| match (
            changed[ti].get(u),
            self.tables[ti].get(u),
        ) {
            (Some(None), Some(_)) => true,
            (Some(Some(_)), None) => true,
            (Some(Some(a)), Some(b)) => a.cols != b.cols,
            _ => false,
        };
        // The transaction's tables (each with its hmap of row ids) and rows.
        let mut nodes: Vec<(usize, Uuid)> = Vec::new();
        let mut index: HashMap<(usize, Uuid), usize> = HashMap::new();
        let mut tables: Vec<Hmap> = Vec::new();
        let mut table_pos: Vec<Option<usize>> = vec![None; n];
        // The operations' rows go into their table's hmap in first-touch
        // order; rows that turn out not to change (no-op modifications,
        // inserts deleted or collected again) are removed from it again.
        // They still grew the hmap, which decides the order of the others
        // in a bucket. A table left empty is dropped.
        let mut table_order: Vec<usize> = Vec::new();
        for &(ti, _) in order {
            if !table_order.contains(&ti) {
                table_order.push(ti);
            }
        }
        for ti in table_order {
            let mut h = Hmap::new();
            let mut ids: Vec<(usize, Uuid)> = Vec::new();
            for &(t, u) in order {
                if t == ti {
                    let id = nodes.len();
                    nodes.push((ti, u));
                    h.insert(u.first_word(), id);
                    ids.push((id, u));
                }
            }
            let mut kept = false;
            for (id, u) in ids {
                if real_change(changed, ti, &u) {
                    index.insert((ti, u), id);
                    kept = true;
                } else {
                    h.remove(u.first_word(), id);
                }
            }
            if kept {
                table_pos[ti] = Some(tables.len());
                tables.push(h);
            }
        }
        let mut add =
            |nodes: &mut Vec<(usize, Uuid)>, tables: &mut Vec<Hmap>, ti: usize, u: Uuid| -> usize {
                if let Some(&id) = index.get(&(ti, u)) {
                    return id;
                }
                let id = nodes.len();
                nodes.push((ti, u));
                index.insert((ti, u), id);
                let tp = *table_pos[ti].get_or_insert_with(|| {
                    tables.push(Hmap::new());
                    tables.len() - 1
                });
                if let Some(h) = tables.get_mut(tp) {
                    h.insert(u.first_word(), id);
                }
                id
            };
        // Collected rows, and rows whose strong reference count changed.
        let mut later: BTreeSet<(usize, Uuid)> = BTreeSet::new();
        for (ti, rows) in changed.iter().enumerate() {
            let refcols = &self.strong_cols[ti];
            for (u, r) in rows.iter() {
                if r.is_none() && self.tables[ti].contains_key(u) {
                    later.insert((ti, *u));
                }
                if refcols.is_empty() {
                    continue;
                }
                let mut old_refs: BTreeMap<(usize, Uuid), i64> = BTreeMap::new();
                if let Some(o) = self.tables[ti].get(u) {
                    each_strong_ref(refcols, &o.cols, |tt, x| {
                        *old_refs.entry((tt, x)).or_insert(0) -= 1;
                    });
                }
                if let Some(nr) = r {
                    each_strong_ref(refcols, &nr.cols, |tt, x| {
                        *old_refs.entry((tt, x)).or_insert(0) += 1;
                    });
                }
                for ((tt, x), d) in old_refs {
                    if d != 0 && self.tables[tt].contains_key(&x) {
                        later.insert((tt, x));
                    }
                }
            }
        }
        for (ti, u) in later {
            add(&mut nodes, &mut tables, ti, u);
        }
        // Referrers of each deleted row: committed rows that weakly
        // reference it (ovsdb-server's `dst_refs`).
        let mut referrers: BTreeMap<(usize, Uuid), Vec<(usize, Uuid)>> = BTreeMap::new();
        if !deleted.is_empty() {
            for si in 0..n {
                for &ci in &self.weak_cols[si] {
                    let c = &meta.tables[si].columns[ci];
                    let kt = c.ty.key.ref_table.as_ref().and_then(|x| meta.table(x));
                    let vt =
                        c.ty.value
                            .as_ref()
                            .filter(|v| v.is_weak_ref())
                            .and_then(|v| v.ref_table.as_ref())
                            .and_then(|x| meta.table(x));
                    let kt = kt.filter(|_| c.ty.key.is_weak_ref());
                    // Only columns pointing into a table with deletions.
                    let hit =
                        |t: Option<usize>| t.is_some_and(|t| deleted.iter().any(|d| d.0 == t));
                    if !hit(kt) && !hit(vt) {
                        continue;
                    }
                    for (su, row) in &self.tables[si] {
                        let mut note = |tt: Option<usize>, a: &Atom| {
                            if let (Some(tt), Atom::Uuid(x)) = (tt, a) {
                                if deleted.contains(&(tt, *x)) {
                                    let v = referrers.entry((tt, *x)).or_default();
                                    if !v.contains(&(si, *su)) {
                                        v.push((si, *su));
                                    }
                                }
                            }
                        };
                        match row.cols.get(ci) {
                            Some(Datum::Set(s)) => s.iter().for_each(|a| note(kt, a)),
                            Some(Datum::Map(m)) => m.iter().for_each(|(k, v)| {
                                note(kt, k);
                                note(vt, v);
                            }),
                            None => {}
                        }
                    }
                }
            }
        }
        // for_each_txn_row: passes until a pass assesses no row.
        let mut done: Vec<bool> = Vec::new();
        let mut queued: HashMap<(usize, Uuid), BTreeSet<(usize, Uuid)>> = HashMap::new();
        let mut strong_changed = false;
        loop {
            let mut any = false;
            let mut tp = 0;
            while tp < tables.len() {
                loop {
                    let mut did = false;
                    let mut cur = tables.get(tp).and_then(Hmap::first);
                    while let Some(id) = cur {
                        let Some(&(ti, u)) = nodes.get(id) else {
                            break;
                        };
                        // HMAP_FOR_EACH_SAFE takes the next node first.
                        cur = tables.get(tp).and_then(|h| h.next(u.first_word(), id));
                        if done.len() < nodes.len() {
                            done.resize(nodes.len(), false);
                        }
                        if done[id] {
                            continue;
                        }
                        done[id] = true;
                        did = true;
                        any = true;
                        if deleted.contains(&(ti, u)) {
                            for &(si, su) in referrers.get(&(ti, u)).into_iter().flatten() {
                                if !exists_now(self, changed, si, &su) {
                                    continue;
                                }
                                let sid = add(&mut nodes, &mut tables, si, su);
                                if done.get(sid).copied() != Some(true) {
                                    queued.entry((si, su)).or_default().insert((ti, u));
                                }
                            }
                        } else if exists_now(self, changed, ti, &u) {
                            let q = queued.remove(&(ti, u)).unwrap_or_default();
                            strong_changed |= self.assess_row_3_1(changed, ti, u, &q)?;
                        }
                    }
                    if !did {
                        break;
                    }
                }
                tp += 1;
            }
            if !any {
                break;
            }
        }
        Ok(strong_changed)
    }

    /// Whether a row of the transaction adds a weak reference (to be
    /// checked even when nothing was deleted).
    fn any_weak_added(&self, changed: &[BTreeMap<Uuid, Option<Row>>]) -> bool {
        changed.iter().enumerate().any(|(ti, rows)| {
            !self.weak_cols[ti].is_empty()
                && rows.iter().any(|(u, r)| match (r, self.tables[ti].get(u)) {
                    (Some(nr), Some(o)) => self.weak_cols[ti]
                        .iter()
                        .any(|&ci| nr.cols.get(ci) != o.cols.get(ci)),
                    (Some(_), None) => true,
                    _ => false,
                })
        })
    }

    /// Assesses one row (`assess_weak_refs` for a row that exists after
    /// the transaction): drops the references to `queued` deleted rows
    /// that it already had, and added references to rows that do not
    /// exist (for an optional column, its whole value). Fails when that
    /// leaves a column below its minimum size. Returns whether a column
    /// holding strong references changed.
    fn assess_row_3_1(
        &self,
        changed: &mut [BTreeMap<Uuid, Option<Row>>],
        ti: usize,
        u: Uuid,
        queued: &BTreeSet<(usize, Uuid)>,
    ) -> Result<bool> {
        let meta = self.meta.clone();
        let t = &meta.tables[ti];
        let old = self.tables[ti].get(&u).cloned();
        let mut row = match changed[ti].get(&u) {
            Some(Some(r)) => r.clone(),
            Some(None) => return Ok(false),
            None => match &old {
                Some(o) => (**o).clone(),
                None => return Ok(false),
            },
        };
        let mut touched = false;
        let mut strong_changed = false;
        for &ci in &self.weak_cols[ti] {
            let Some(c) = t.columns.get(ci) else {
                continue;
            };
            let weak_target = |ty: Option<&ovsdb::types::BaseType>| {
                ty.filter(|b| b.is_weak_ref())
                    .and_then(|b| b.ref_table.as_ref())
                    .and_then(|x| meta.table(x))
            };
            let kt = weak_target(Some(&c.ty.key));
            let vt = weak_target(c.ty.value.as_ref());
            let composite = c.ty.is_composite();
            let old_d = old.as_ref().and_then(|o| o.cols.get(ci));
            let is_queued = |tt: Option<usize>, a: &Atom| match (tt, a) {
                (Some(tt), Atom::Uuid(x)) => queued.contains(&(tt, *x)),
                _ => false,
            };
            let missing = |tt: Option<usize>, a: &Atom| match (tt, a) {
                (Some(tt), Atom::Uuid(x)) => !exists_now(self, changed, tt, x),
                _ => false,
            };
            let Some(d) = row.cols.get(ci) else {
                continue;
            };
            let before = d.len();
            let new_d = match d {
                Datum::Set(s) => {
                    let had = |a: &Atom| matches!(old_d, Some(Datum::Set(o)) if o.contains(a));
                    let mut s = s.clone();
                    s.retain(|a| {
                        let added = !composite || !had(a);
                        !(is_queued(kt, a) || added && missing(kt, a))
                    });
                    Datum::Set(s)
                }
                Datum::Map(m) => {
                    let had = |k: &Atom, v: &Atom| matches!(old_d, Some(Datum::Map(o)) if o.get(k) == Some(v));
                    let mut m = m.clone();
                    m.retain(|k, v| {
                        let q = had(k, v) && (is_queued(kt, k) || is_queued(vt, v));
                        let added = !composite || !had(k, v);
                        !(q || added && (missing(kt, k) || missing(vt, v)))
                    });
                    Datum::Map(m)
                }
            };
            if new_d.len() != before {
                if (new_d.len() as u32) < c.ty.min {
                    return Err(Error::constraint(format!(
                        "Deletion of weak reference(s) leaves column {}.{} with too few elements.",
                        t.name, c.name
                    )));
                }
                touched = true;
                strong_changed |= self.strong_cols[ti].iter().any(|rc| rc.col == ci);
                if let Some(slot) = row.cols.get_mut(ci) {
                    *slot = new_d;
                }
            }
        }
        if touched {
            changed[ti].insert(u, Some(row));
        }
        Ok(strong_changed)
    }

    /// The first strong reference of the resulting database to a row that
    /// does not exist, as an error (in table and row order, like the
    /// whole-database check it stands for). Only called once the
    /// incremental counts found a problem.
    fn strong_ref_error(&self, changed: &[BTreeMap<Uuid, Option<Row>>]) -> Result<()> {
        let meta = self.meta.clone();
        let exists = |t: usize, u: &Uuid| -> bool {
            match changed[t].get(u) {
                Some(x) => x.is_some(),
                None => self.tables[t].contains_key(u),
            }
        };
        for (ti, t) in meta.tables.iter().enumerate() {
            let refcols = &self.strong_cols[ti];
            if refcols.is_empty() {
                continue;
            }
            for (src, cols) in rows_after(&self.tables[ti], &changed[ti]) {
                // Column by column, as ovsdb-server reports the first one.
                for rc in refcols {
                    let mut first = None;
                    each_strong_ref(std::slice::from_ref(rc), cols, |tt, x| {
                        if first.is_none() && !exists(tt, &x) {
                            first = Some((tt, x));
                        }
                    });
                    if let Some((tt, x)) = first {
                        return Err(Error::referential(format!(
                            "Table {} column {} row {} references nonexistent row {} in table {}.",
                            t.name, t.columns[rc.col].name, src, x, meta.tables[tt].name
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------
    // Monitors

    fn parse_monitor_requests(
        &self,
        version: u8,
        reqs: &Json,
    ) -> std::result::Result<Vec<MonTable>, Json> {
        let o = reqs
            .as_object()
            .ok_or_else(|| Json::from("monitor requests must be an object"))?;
        let mut out = Vec::new();
        for (tname, r) in o.iter() {
            let ti = self
                .meta
                .table(tname)
                .ok_or_else(|| Json::from(format!("no table named {tname}")))?;
            let t = &self.meta.tables[ti];
            let list: Vec<&Json> = match r {
                Json::Array(a) => a.iter().collect(),
                other => vec![other],
            };
            for one in list {
                let ro = one
                    .as_object()
                    .ok_or_else(|| Json::from("monitor request must be an object"))?;
                let columns = match ro.get("columns").and_then(Json::as_array) {
                    Some(cols) => {
                        let mut v = Vec::new();
                        for c in cols {
                            let cn = c.as_str().unwrap_or("");
                            if cn == "_version" {
                                v.push(MonCol::Version);
                            } else if let Some(i) = t.column(cn) {
                                v.push(MonCol::Col(i));
                            } else {
                                return Err(Json::from(format!("no column {cn} in table {tname}")));
                            }
                        }
                        v
                    }
                    None => (0..t.columns.len()).map(MonCol::Col).collect(),
                };
                let mut select = Select::default();
                if let Some(so) = ro.get("select").and_then(Json::as_object) {
                    let b = |k: &str| so.get(k).and_then(Json::as_bool).unwrap_or(true);
                    select = Select {
                        initial: b("initial"),
                        insert: b("insert"),
                        delete: b("delete"),
                        modify: b("modify"),
                    };
                }
                let cond = match (version, ro.get("where")) {
                    (2 | 3, Some(w)) => {
                        Condition::from_json(w, t, None).map_err(|e| err_json(&e))?
                    }
                    _ => Condition::always(),
                };
                out.push(MonTable {
                    table: ti,
                    columns,
                    select,
                    cond,
                });
            }
        }
        Ok(out)
    }

    fn monitor(
        &mut self,
        s: SessionId,
        version: u8,
        params: &[Json],
    ) -> std::result::Result<Json, Json> {
        if params.first().and_then(Json::as_str) != Some(self.meta.name.as_str()) {
            return Err(Json::from("unknown database"));
        }
        if params.len() < 3
            || (version == 3 && params.len() > 4)
            || (version < 3 && params.len() > 3)
        {
            return Err(Json::from("syntax error"));
        }
        let id = params.get(1).cloned().unwrap_or(Json::Null);
        let reqs = params
            .get(2)
            .cloned()
            .unwrap_or(Json::Object(Object::new()));
        let tables = self.parse_monitor_requests(version, &reqs)?;
        let Some(sess) = self.sessions.get(&s) else {
            return Err(Json::from("no session"));
        };
        if sess.monitors.iter().any(|m| m.id == id) {
            return Err(Json::from("duplicate monitor ID"));
        }
        let mut mon = Monitor {
            id,
            version,
            tables,
            pending: BTreeMap::new(),
        };
        let result = if version == 3 {
            let last = params
                .get(3)
                .and_then(Json::as_str)
                .and_then(Uuid::parse)
                .unwrap_or(Uuid::NIL);
            let found = self.opts.clustered
                && !last.is_nil()
                && (last == self.last_txn_id || self.history.iter().any(|c| c.txn_id == last));
            if found {
                // Replay the history after `last` as one change set.
                let mut pending = BTreeMap::new();
                let mut after = last == self.last_txn_id;
                if !after {
                    for c in &self.history {
                        if after {
                            merge_changes(&mut pending, &c.changes);
                        }
                        if c.txn_id == last {
                            after = true;
                        }
                    }
                }
                mon.pending = pending;
                let tu = self.compose(&mut mon);
                Json::Array(vec![
                    Json::Bool(true),
                    Json::String(self.last_txn_id().to_string()),
                    tu,
                ])
            } else {
                let tu = self.initial(&mon);
                Json::Array(vec![
                    Json::Bool(false),
                    Json::String(self.last_txn_id().to_string()),
                    tu,
                ])
            }
        } else {
            self.initial(&mon)
        };
        if let Some(sess) = self.sessions.get_mut(&s) {
            sess.monitors.push(mon);
        }
        Ok(result)
    }

    fn initial(&self, mon: &Monitor) -> Json {
        let mut tu = Object::new();
        for mt in &mon.tables {
            if !mt.select.initial {
                continue;
            }
            let t = &self.meta.tables[mt.table];
            let mut rows = Object::new();
            for (u, r) in &self.tables[mt.table] {
                if mon.version > 1 && !mt.cond.eval_any(&r.view()) {
                    continue;
                }
                let mut ru = Object::new();
                if mon.version == 1 {
                    ru.insert("new", row_to_json_cols(t, r, &mt.columns, false));
                } else {
                    ru.insert("initial", row_to_json_cols(t, r, &mt.columns, true));
                }
                rows.insert(u.to_string(), Json::Object(ru));
            }
            if !rows.is_empty() {
                merge_table(&mut tu, &t.name, rows);
            }
        }
        Json::Object(tu)
    }

    /// Composes the pending change set of a monitor (and clears it).
    fn compose(&self, mon: &mut Monitor) -> Json {
        let pending = std::mem::take(&mut mon.pending);
        let mut tu = Object::new();
        for mt in &mon.tables {
            let t = &self.meta.tables[mt.table];
            let mut rows = Object::new();
            for ((ti, u), (old, new)) in pending.range((mt.table, Uuid::NIL)..) {
                if *ti != mt.table {
                    break;
                }
                if let Some(ru) = compose_row(t, mt, mon.version, old.as_deref(), new.as_deref()) {
                    rows.insert(u.to_string(), ru);
                }
            }
            if !rows.is_empty() {
                merge_table(&mut tu, &t.name, rows);
            }
        }
        Json::Object(tu)
    }

    /// Adds a commit to every monitor's change set and flushes sessions
    /// that are not held.
    fn distribute(&mut self, c: &Commit) -> Vec<(SessionId, Json)> {
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for sid in &ids {
            if let Some(sess) = self.sessions.get_mut(sid) {
                for m in &mut sess.monitors {
                    let relevant: Vec<RowChange> = c
                        .changes
                        .iter()
                        .filter(|ch| m.tables.iter().any(|t| t.table == ch.table))
                        .cloned()
                        .collect();
                    merge_changes(&mut m.pending, &relevant);
                }
            }
        }
        let mut out = Vec::new();
        for sid in ids {
            let hold = self.sessions.get(&sid).map(|s| s.hold).unwrap_or(true);
            if !hold {
                out.extend(self.flush(sid));
            }
        }
        out
    }

    /// Sends (returns) the accumulated updates of session `s`.
    pub fn flush(&mut self, s: SessionId) -> Vec<(SessionId, Json)> {
        let Some(mut sess) = self.sessions.remove(&s) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for m in &mut sess.monitors {
            if m.pending.is_empty() {
                continue;
            }
            let tu = self.compose(m);
            if tu.as_object().map(|o| o.is_empty()).unwrap_or(true) {
                continue;
            }
            out.push((s, self.update_message(m, tu)));
        }
        self.sessions.insert(s, sess);
        if let Some(sd) = self.server_db.as_mut() {
            out.extend(sd.db.flush(s));
        }
        out
    }

    fn update_message(&self, m: &Monitor, tu: Json) -> Json {
        match m.version {
            1 => notification("update", vec![m.id.clone(), tu]),
            2 => notification("update2", vec![m.id.clone(), tu]),
            _ => notification(
                "update3",
                vec![
                    m.id.clone(),
                    Json::String(self.last_txn_id().to_string()),
                    tu,
                ],
            ),
        }
    }

    fn monitor_cond_change(
        &mut self,
        s: SessionId,
        params: &[Json],
    ) -> std::result::Result<(Vec<Json>, Json), Json> {
        let old_id = params.first().cloned().unwrap_or(Json::Null);
        let new_id = params.get(1).cloned().unwrap_or(Json::Null);
        let reqs = params
            .get(2)
            .and_then(Json::as_object)
            .ok_or_else(|| Json::from("syntax error"))?
            .clone();
        let Some(mut sess) = self.sessions.remove(&s) else {
            return Err(Json::from("unknown monitor"));
        };
        let Some(pos) = sess.monitors.iter().position(|m| m.id == old_id) else {
            self.sessions.insert(s, sess);
            return Err(Json::from("unknown monitor"));
        };
        if old_id != new_id && sess.monitors.iter().any(|m| m.id == new_id) {
            self.sessions.insert(s, sess);
            return Err(Json::from("duplicate monitor ID"));
        }
        let mut msgs = Vec::new();
        // Flush what is pending under the old condition first.
        {
            let m = &mut sess.monitors[pos];
            if !m.pending.is_empty() {
                let tu = self.compose(m);
                if !tu.as_object().map(|o| o.is_empty()).unwrap_or(true) {
                    msgs.push(self.update_message(m, tu));
                }
            }
        }
        let mut tu = Object::new();
        {
            let m = &mut sess.monitors[pos];
            for (tname, r) in reqs.iter() {
                let Some(ti) = self.meta.table(tname) else {
                    self.sessions.insert(s, sess);
                    return Err(Json::from(format!("no table named {tname}")));
                };
                let t = &self.meta.tables[ti];
                let list: Vec<&Json> = match r {
                    Json::Array(a) => a.iter().collect(),
                    other => vec![other],
                };
                for one in list {
                    let Some(ro) = one.as_object() else { continue };
                    if ro.contains_key("columns") {
                        self.sessions.insert(s, sess);
                        return Err(Json::from("changing columns is not supported"));
                    }
                    let newc = match ro.get("where") {
                        Some(w) => match Condition::from_json(w, t, None) {
                            Ok(c) => c,
                            Err(e) => {
                                self.sessions.insert(s, sess);
                                return Err(err_json(&e));
                            }
                        },
                        None => Condition::always(),
                    };
                    let mut rows = Object::new();
                    for mt in m.tables.iter_mut().filter(|mt| mt.table == ti) {
                        for (u, row) in &self.tables[ti] {
                            let was = mt.cond.eval_any(&row.view());
                            let now = newc.eval_any(&row.view());
                            if !was && now {
                                let mut ru = Object::new();
                                ru.insert("insert", row_to_json_cols(t, row, &mt.columns, true));
                                rows.insert(u.to_string(), Json::Object(ru));
                            } else if was && !now {
                                let mut ru = Object::new();
                                ru.insert("delete", Json::Null);
                                rows.insert(u.to_string(), Json::Object(ru));
                            }
                        }
                        mt.cond = newc.clone();
                    }
                    if !rows.is_empty() {
                        merge_table(&mut tu, &t.name, rows);
                    }
                }
            }
            m.id = new_id;
        }
        if !tu.is_empty() {
            let m = &sess.monitors[pos];
            msgs.push(self.update_message(m, Json::Object(tu)));
        }
        self.sessions.insert(s, sess);
        Ok((msgs, Json::Object(Object::new())))
    }
}

/// Atoms in a row (map pairs count twice).
fn row_atoms(r: &Row) -> usize {
    r.cols
        .iter()
        .map(|d| if d.is_map() { 2 * d.len() } else { d.len() })
        .sum()
}

/// Atoms a history entry keeps alive (its new row versions, or the old
/// ones for deletions).
fn commit_atoms(c: &Commit) -> usize {
    c.changes
        .iter()
        .map(|ch| {
            ch.new
                .as_deref()
                .or(ch.old.as_deref())
                .map(row_atoms)
                .unwrap_or(0)
        })
        .sum()
}

/// Number of transactions kept for `monitor_cond_since`.
impl Server {
    pub fn history_len(&self) -> usize {
        self.history.len()
    }
}

fn merge_table(tu: &mut Object, name: &str, rows: Object) {
    match tu.get_mut(name).and_then(Json::as_object_mut) {
        Some(existing) => {
            for (k, v) in rows.into_members() {
                existing.insert(k, v);
            }
        }
        None => {
            tu.insert(name.to_string(), Json::Object(rows));
        }
    }
}

fn merge_changes(
    pending: &mut BTreeMap<ChangeKey, (Option<RowRef>, Option<RowRef>)>,
    changes: &[RowChange],
) {
    for ch in changes {
        let key = (ch.table, ch.uuid);
        match pending.get_mut(&key) {
            Some(entry) => {
                entry.1 = ch.new.clone();
                if entry.0.is_none() && entry.1.is_none() {
                    pending.remove(&key);
                }
            }
            None => {
                pending.insert(key, (ch.old.clone(), ch.new.clone()));
            }
        }
    }
}

fn compose_row(
    t: &TableMeta,
    mt: &MonTable,
    version: u8,
    old: Option<&Row>,
    new: Option<&Row>,
) -> Option<Json> {
    let mut ru = Object::new();
    if version == 1 {
        match (old, new) {
            (None, Some(n)) => {
                if !mt.select.insert {
                    return None;
                }
                ru.insert("new", row_to_json_cols(t, n, &mt.columns, false));
            }
            (Some(o), None) => {
                if !mt.select.delete {
                    return None;
                }
                ru.insert("old", row_to_json_cols(t, o, &mt.columns, false));
            }
            (Some(o), Some(n)) => {
                let changed: Vec<MonCol> = mt
                    .columns
                    .iter()
                    .copied()
                    .filter(|c| col_changed(o, n, *c))
                    .collect();
                if !mt.select.modify || !changed_data(o, n, &mt.columns) {
                    return None;
                }
                ru.insert("old", row_to_json_cols(t, o, &changed, false));
                ru.insert("new", row_to_json_cols(t, n, &mt.columns, false));
            }
            (None, None) => return None,
        }
        return Some(Json::Object(ru));
    }
    let old_m = old.map(|o| mt.cond.eval_any(&o.view())).unwrap_or(false);
    let new_m = new.map(|n| mt.cond.eval_any(&n.view())).unwrap_or(false);
    match (old_m, new_m) {
        (false, false) => return None,
        (false, true) => {
            if !mt.select.insert {
                return None;
            }
            let n = new?;
            ru.insert("insert", row_to_json_cols(t, n, &mt.columns, true));
        }
        (true, false) => {
            if !mt.select.delete {
                return None;
            }
            ru.insert("delete", Json::Null);
        }
        (true, true) => {
            let (o, n) = (old?, new?);
            // Columns used only by the condition are monitored internally
            // by ovsdb-server: their change alone yields an empty modify.
            let cond_changed = mt
                .cond
                .columns()
                .iter()
                .any(|&c| !mt.columns.contains(&MonCol::Col(c)) && o.cols[c] != n.cols[c]);
            if !mt.select.modify || !(changed_data(o, n, &mt.columns) || cond_changed) {
                return None;
            }
            let mut diff = Object::new();
            for c in &mt.columns {
                match c {
                    MonCol::Version => {
                        if o.version != n.version {
                            diff.insert("_version", uuid_json(n.version));
                        }
                    }
                    MonCol::Col(i) => {
                        if o.cols[*i] != n.cols[*i] {
                            let ty = &t.columns[*i].ty;
                            diff.insert(
                                t.columns[*i].name.clone(),
                                Datum::diff(&o.cols[*i], &n.cols[*i], ty).to_json(),
                            );
                        }
                    }
                }
            }
            ru.insert("modify", Json::Object(diff));
        }
    }
    Some(Json::Object(ru))
}

/// Did any monitored data column change? (A change of `_version` alone,
/// e.g. a row changed and changed back, is not reported.)
fn changed_data(o: &Row, n: &Row, cols: &[MonCol]) -> bool {
    cols.iter().any(|c| match c {
        MonCol::Col(i) => o.cols[*i] != n.cols[*i],
        MonCol::Version => false,
    })
}

/// A table's rows as they are after a transaction's writes (`changed`:
/// `None` = deleted): the committed rows it did not write, then the rows
/// it wrote and kept.
fn rows_after<'a>(
    committed: &'a BTreeMap<Uuid, RowRef>,
    changed: &'a BTreeMap<Uuid, Option<Row>>,
) -> impl Iterator<Item = (Uuid, &'a Vec<Datum>)> + 'a {
    committed
        .iter()
        .filter(|(u, _)| !changed.contains_key(u))
        .map(|(u, r)| (*u, &r.cols))
        .chain(
            changed
                .iter()
                .filter_map(|(u, r)| r.as_ref().map(|r| (*u, &r.cols))),
        )
}

/// The first two rows, in [`rows_after`] order, that unique index `idx`
/// (column numbers) finds equal after the transaction: `(earlier, later)`.
///
/// The committed rows satisfy the index, so a duplicate always involves a
/// row the transaction wrote: with few written rows only the rows whose key
/// equals a written row's key are tracked, which keeps the check one pass
/// of comparisons instead of a map of every row's key per transaction (the
/// simulator's hour runs commit thousands of ports into one index). With
/// many written rows it builds the map. Both give the same pair.
fn first_duplicate(
    idx: &[usize],
    committed: &BTreeMap<Uuid, RowRef>,
    changed: &BTreeMap<Uuid, Option<Row>>,
) -> Option<(Uuid, Uuid)> {
    let same = |a: &[Datum], b: &[Datum]| {
        idx.iter()
            .all(|&c| a[c].cmp(&b[c]) == std::cmp::Ordering::Equal)
    };
    let written: Vec<&Vec<Datum>> = changed
        .values()
        .filter_map(|r| r.as_ref().map(|r| &r.cols))
        .collect();
    if written.len() > 32 {
        let mut seen: BTreeMap<Vec<&Datum>, Uuid> = BTreeMap::new();
        for (u, cols) in rows_after(committed, changed) {
            let key: Vec<&Datum> = idx.iter().map(|&c| &cols[c]).collect();
            if let Some(other) = seen.insert(key, u) {
                return Some((other, u));
            }
        }
        return None;
    }
    // Per written key (by its first holder in `written`), the first row seen
    // with it.
    let mut first: Vec<Option<Uuid>> = vec![None; written.len()];
    for (u, cols) in rows_after(committed, changed) {
        let Some(k) = written.iter().position(|w| same(w, cols)) else {
            continue;
        };
        match first[k] {
            Some(other) => return Some((other, u)),
            None => first[k] = Some(u),
        }
    }
    None
}

/// A column holding strong references: its index and the tables its keys
/// and values point into.
#[derive(Debug, Clone, Copy)]
struct RefCol {
    col: usize,
    key: Option<usize>,
    value: Option<usize>,
}

/// Calls `f(target table, uuid)` for every strong reference in `cols`.
fn each_strong_ref(refcols: &[RefCol], cols: &[Datum], mut f: impl FnMut(usize, Uuid)) {
    for rc in refcols {
        match &cols[rc.col] {
            Datum::Set(s) => {
                if let Some(kt) = rc.key {
                    for a in s {
                        if let Atom::Uuid(x) = a {
                            f(kt, *x);
                        }
                    }
                }
            }
            Datum::Map(m) => {
                for (k, v) in m {
                    if let (Some(kt), Atom::Uuid(x)) = (rc.key, k) {
                        f(kt, *x);
                    }
                    if let (Some(vt), Atom::Uuid(x)) = (rc.value, v) {
                        f(vt, *x);
                    }
                }
            }
        }
    }
}

/// Whether row `u` of table `t` exists once the transaction's `changed`
/// rows are applied.
fn exists_now(s: &Server, changed: &[BTreeMap<Uuid, Option<Row>>], t: usize, u: &Uuid) -> bool {
    match changed.get(t).and_then(|m| m.get(u)) {
        Some(x) => x.is_some(),
        None => s.tables.get(t).is_some_and(|m| m.contains_key(u)),
    }
}

fn has_ref(ty: &Type) -> bool {
    ty.key.ref_table.is_some()
        || ty
            .value
            .as_ref()
            .map(|v| v.ref_table.is_some())
            .unwrap_or(false)
}

// ----------------------------------------------------------------------
// Operations

fn execute_op(
    w: &mut Work<'_>,
    op: &Json,
    fresh: &mut dyn Iterator<Item = (Option<String>, Uuid)>,
    locks: &BTreeSet<String>,
) -> Result<Json> {
    let o = op
        .as_object()
        .ok_or_else(|| Error::syntax("operation must be an object"))?;
    let name = o
        .get("op")
        .and_then(Json::as_str)
        .ok_or_else(|| Error::syntax("operation has no \"op\" member"))?;
    let meta = w.meta;
    match name {
        "insert" => {
            let ti = table_of(meta, o)?;
            let t = &meta.tables[ti];
            let (_, u) = fresh
                .next()
                .ok_or_else(|| Error::syntax("internal: insert uuid missing"))?;
            if w.exists(ti, u) || w.committed.iter().any(|m| m.contains_key(&u)) {
                return Err(Error::new(
                    "duplicate uuid",
                    format!("This UUID would duplicate a UUID already present within the table or deleted within the same transaction: {u}"),
                ));
            }
            let mut cols: Vec<Datum> = t
                .columns
                .iter()
                .map(|c| Datum::default_for(&c.ty))
                .collect();
            if let Some(row) = o.get("row") {
                let ro = shash_ordered(
                    row.as_object()
                        .ok_or_else(|| Error::syntax("row must be an object"))?,
                );
                for (cn, v) in ro.iter() {
                    let ci = t.column(cn).ok_or_else(|| {
                        Error::new(
                            "unknown column",
                            format!("No column {cn} in table {}.", t.name),
                        )
                    })?;
                    w.stats.values_parsed += 1;
                    cols[ci] = parse_value(v, &t.columns[ci].ty, &w.named, false)
                        .map_err(|e| e.context(format!("column {cn}")))?;
                }
            }
            w.touch(ti, u);
            w.changed[ti].insert(
                u,
                Some(Row {
                    uuid: u,
                    version: Uuid::NIL,
                    cols,
                }),
            );
            w.inserted.insert(u);
            w.stats.rows_touched += 1;
            let mut r = Object::new();
            r.insert("uuid", uuid_json(u));
            Ok(Json::Object(r))
        }
        "select" => {
            let ti = table_of(meta, o)?;
            let t = &meta.tables[ti];
            let cond = parse_cond(o.get("where"), t, &w.named)?;
            let cols: Vec<ColRef> = match o.get("columns").and_then(Json::as_array) {
                Some(a) => a
                    .iter()
                    .map(|c| resolve_column(t, c.as_str().unwrap_or("")))
                    .collect::<Result<_>>()?,
                None => {
                    let mut v = vec![ColRef::Uuid, ColRef::Version];
                    v.extend((0..t.columns.len()).map(ColRef::Col));
                    v
                }
            };
            let mut rows = Vec::new();
            for u in w.matching(ti, &cond) {
                if let Some(r) = w.get(ti, u) {
                    rows.push(project(t, &r, &cols));
                }
            }
            let mut r = Object::new();
            r.insert("rows", Json::Array(rows));
            Ok(Json::Object(r))
        }
        "update" | "mutate" => {
            let ti = table_of(meta, o)?;
            let t = &meta.tables[ti];
            let cond = parse_cond(o.get("where"), t, &w.named)?;
            let mut updates: Vec<(usize, Datum)> = Vec::new();
            let mut mutations: Vec<(usize, String, Datum, String)> = Vec::new();
            if name == "update" {
                let ro = shash_ordered(
                    o.get("row")
                        .and_then(Json::as_object)
                        .ok_or_else(|| Error::syntax("update requires \"row\""))?,
                );
                for (cn, v) in ro.iter() {
                    let ci = t.column(cn).ok_or_else(|| {
                        Error::new(
                            "unknown column",
                            format!("No column {cn} in table {}.", t.name),
                        )
                    })?;
                    if !t.columns[ci].mutable {
                        return Err(Error::constraint(format!(
                            "Cannot update immutable column {cn} in table {}.",
                            t.name
                        )));
                    }
                    w.stats.values_parsed += 1;
                    let d = parse_value(v, &t.columns[ci].ty, &w.named, false)
                        .map_err(|e| e.context(format!("column {cn}")))?;
                    updates.push((ci, d));
                }
            } else {
                let ms = o
                    .get("mutations")
                    .and_then(Json::as_array)
                    .ok_or_else(|| Error::syntax("mutate requires \"mutations\""))?;
                for m in ms {
                    let parts = m
                        .as_array()
                        .filter(|a| a.len() == 3)
                        .ok_or_else(|| Error::syntax("mutation must be a 3-element array"))?;
                    let cn = parts[0].as_str().unwrap_or("");
                    let ci = t.column(cn).ok_or_else(|| {
                        Error::new(
                            "unknown column",
                            format!("No column {cn} in table {}.", t.name),
                        )
                    })?;
                    if !t.columns[ci].mutable {
                        return Err(Error::constraint(format!(
                            "Cannot mutate immutable column {cn} in table {}.",
                            t.name
                        )));
                    }
                    let mutator = parts[1].as_str().unwrap_or("").to_string();
                    let ty = &t.columns[ci].ty;
                    let arg = match mutator.as_str() {
                        "+=" | "-=" | "*=" | "/=" | "%=" => {
                            let at = Type::scalar(ty.key.atomic);
                            parse_value(&parts[2], &at, &w.named, false)?
                        }
                        "insert" => parse_value(&parts[2], &ty.relaxed(), &w.named, true)?,
                        "delete" => match parse_value(&parts[2], &ty.relaxed(), &w.named, true) {
                            Ok(d) => d,
                            Err(e) => {
                                if ty.is_map() {
                                    let kt = Type::set(ty.key.clone(), 0, u32::MAX);
                                    parse_value(&parts[2], &kt, &w.named, true)?
                                } else {
                                    return Err(e);
                                }
                            }
                        },
                        other => return Err(Error::syntax(format!("unknown mutator {other}"))),
                    };
                    w.stats.values_parsed += 1;
                    mutations.push((ci, mutator, arg, cn.to_string()));
                }
            }
            let uuids = w.matching(ti, &cond);
            let count = uuids.len();
            for u in uuids {
                let Some(mut row) = w.row_owned(ti, u) else {
                    continue;
                };
                // ovsdb-server (execution.c, `update_row_cb`) leaves a row
                // out of the transaction when an update writes the values
                // it already has: it does not decide where the row's table
                // joins the transaction (weak references, see
                // `assess_weak_refs_3_1`). A mutation always joins.
                if name == "update" && updates.iter().all(|(ci, d)| row.cols[*ci] == *d) {
                    w.stats.rows_touched += 1;
                    continue;
                }
                for (ci, d) in &updates {
                    row.cols[*ci] = d.clone();
                }
                for (ci, mutator, arg, cn) in &mutations {
                    let ty = &t.columns[*ci].ty;
                    mutate(&mut row.cols[*ci], ty, mutator, arg)
                        .map_err(|e| e.context(format!("column {cn}")))?;
                }
                w.touch(ti, u);
                w.changed[ti].insert(u, Some(row));
                w.stats.rows_touched += 1;
            }
            let mut r = Object::new();
            r.insert("count", Json::Integer(count as i64));
            Ok(Json::Object(r))
        }
        "delete" => {
            let ti = table_of(meta, o)?;
            let t = &meta.tables[ti];
            let cond = parse_cond(o.get("where"), t, &w.named)?;
            let uuids = w.matching(ti, &cond);
            let count = uuids.len();
            for u in uuids {
                w.touch(ti, u);
                w.changed[ti].insert(u, None);
                w.stats.rows_touched += 1;
            }
            let mut r = Object::new();
            r.insert("count", Json::Integer(count as i64));
            Ok(Json::Object(r))
        }
        "wait" => {
            let ti = table_of(meta, o)?;
            let t = &meta.tables[ti];
            let cond = parse_cond(o.get("where"), t, &w.named)?;
            let cols: Vec<ColRef> = match o.get("columns").and_then(Json::as_array) {
                Some(a) => a
                    .iter()
                    .map(|c| resolve_column(t, c.as_str().unwrap_or("")))
                    .collect::<Result<_>>()?,
                None => (0..t.columns.len()).map(ColRef::Col).collect(),
            };
            let timeout = match o.get("timeout") {
                None => None,
                Some(Json::Integer(n)) if *n >= 0 => Some(*n),
                Some(Json::Integer(_)) => return Err(Error::syntax("timeout must be nonnegative")),
                Some(_) => return Err(Error::syntax("Type mismatch for member 'timeout'.")),
            };
            let until = o.get("until").and_then(Json::as_str).unwrap_or("==");
            let expected_rows = o
                .get("rows")
                .and_then(Json::as_array)
                .ok_or_else(|| Error::syntax("wait requires \"rows\""))?;
            // Expected rows, projected and parsed with the column types.
            let mut expected: Vec<Vec<Datum>> = Vec::new();
            for er in expected_rows {
                let eo = er
                    .as_object()
                    .ok_or_else(|| Error::syntax("wait row must be an object"))?;
                let mut v = Vec::new();
                for c in &cols {
                    let (cn, ty) = match c {
                        ColRef::Uuid => ("_uuid".to_string(), crate::cond::uuid_type()),
                        ColRef::Version => ("_version".to_string(), crate::cond::uuid_type()),
                        ColRef::Col(i) => (t.columns[*i].name.clone(), t.columns[*i].ty.clone()),
                    };
                    let d = match eo.get(&cn) {
                        Some(j) => parse_value(j, &ty, &w.named, false)?,
                        None => Datum::default_for(&ty),
                    };
                    v.push(d);
                }
                expected.push(v);
            }
            let mut actual: Vec<Vec<Datum>> = Vec::new();
            for u in w.matching(ti, &cond) {
                if let Some(r) = w.get(ti, u) {
                    actual.push(cols.iter().map(|c| col_value(&r, *c)).collect());
                }
            }
            // Compared as sets of projected rows, as ovsdb-server does
            // (each side must contain all rows of the other).
            expected.sort();
            expected.dedup();
            actual.sort();
            actual.dedup();
            let equal = expected == actual;
            let ok = if until == "==" { equal } else { !equal };
            if ok {
                Ok(Json::Object(Object::new()))
            } else {
                Err(triggers::unsatisfied_wait(timeout, w.wait))
            }
        }
        "commit" => Ok(Json::Object(Object::new())),
        "abort" => Err(Error::new("aborted", "aborted by request")),
        "comment" => {
            if let Some(c) = o.get("comment").and_then(Json::as_str) {
                w.comment.push(c.to_string());
            }
            Ok(Json::Object(Object::new()))
        }
        "assert" => {
            let l = o.get("lock").and_then(Json::as_str).unwrap_or("");
            if locks.contains(l) {
                Ok(Json::Object(Object::new()))
            } else {
                Err(Error::new(
                    "not owner",
                    format!("Asserted lock {l} not held."),
                ))
            }
        }
        other => Err(Error::syntax(format!("No operation named {other}."))),
    }
}

/// The members of a `row` in the order ovsdb-server visits them (its
/// hash-table order), so that the first error reported is the same.
fn shash_ordered(o: &Object) -> Object {
    let mut o = o.clone();
    o.reorder_shash();
    o
}

fn col_value(r: &RowView<'_>, c: ColRef) -> Datum {
    match c {
        ColRef::Uuid => Datum::scalar(Atom::Uuid(r.uuid)),
        ColRef::Version => Datum::scalar(Atom::Uuid(r.version)),
        ColRef::Col(i) => r.cols.get(i).cloned().unwrap_or_default(),
    }
}

fn project(t: &TableMeta, r: &RowView<'_>, cols: &[ColRef]) -> Json {
    let mut o = Object::new();
    for c in cols {
        let name = match c {
            ColRef::Uuid => "_uuid".to_string(),
            ColRef::Version => "_version".to_string(),
            ColRef::Col(i) => t.columns[*i].name.clone(),
        };
        o.insert(name, col_value(r, *c).to_json());
    }
    Json::Object(o)
}

fn arith(a: &Atom, op: &str, arg: &Atom) -> Result<Atom> {
    match (a, arg) {
        (Atom::Integer(x), Atom::Integer(y)) => {
            let r = match op {
                "+=" => x.checked_add(*y),
                "-=" => x.checked_sub(*y),
                "*=" => x.checked_mul(*y),
                "/=" => {
                    if *y == 0 {
                        return Err(Error::new("domain error", "Division by zero."));
                    }
                    x.checked_div(*y)
                }
                _ => {
                    if *y == 0 {
                        return Err(Error::new("domain error", "Division by zero."));
                    }
                    x.checked_rem(*y)
                }
            };
            r.map(Atom::Integer)
                .ok_or_else(|| Error::new("range error", "Result of arithmetic overflows."))
        }
        (Atom::Real(x), Atom::Real(y)) => {
            let r = match op {
                "+=" => x + y,
                "-=" => x - y,
                "*=" => x * y,
                "/=" => {
                    if *y == 0.0 {
                        return Err(Error::new("domain error", "Division by zero."));
                    }
                    x / y
                }
                _ => return Err(Error::syntax("%= is not valid for reals")),
            };
            if !r.is_finite() {
                return Err(Error::new(
                    "range error",
                    "Result of arithmetic is not finite.",
                ));
            }
            Ok(Atom::Real(r))
        }
        _ => Err(Error::syntax("arithmetic mutator on a non-numeric column")),
    }
}

fn mutate(d: &mut Datum, ty: &Type, mutator: &str, arg: &Datum) -> Result<()> {
    match mutator {
        "+=" | "-=" | "*=" | "/=" | "%=" => {
            if !matches!(ty.key.atomic, AtomicType::Integer | AtomicType::Real) {
                return Err(Error::constraint(
                    "arithmetic mutator on a non-numeric column",
                ));
            }
            let a = arg
                .as_scalar()
                .ok_or_else(|| Error::syntax("mutator argument must be a scalar"))?;
            match d {
                Datum::Set(s) => {
                    let mut out = BTreeSet::new();
                    for x in s.iter() {
                        let r = arith(x, mutator, a)?;
                        r.check_constraints(&ty.key)?;
                        if !out.insert(r) {
                            return Err(Error::constraint(
                                "Result of mutation contains duplicate values.",
                            ));
                        }
                    }
                    *s = out.into_iter().collect();
                }
                Datum::Map(_) => {
                    return Err(Error::constraint("arithmetic mutator on a map column"));
                }
            }
        }
        "insert" => d.union_with(arg),
        "delete" => d.subtract(arg),
        _ => return Err(Error::syntax(format!("unknown mutator {mutator}"))),
    }
    d.check_size(ty)
        .map_err(|e| Error::constraint(format!("mutation result: {}", e.details)))
}

/// Builds the transaction record a database log would hold for `commit`
/// (`{table: {uuid: row|null}}`): inserted rows with their non-default
/// columns, modified rows with their changed columns (as column diffs when
/// `diff` is set, else full values), deleted rows as `null`. The caller
/// adds `_date`, `_comment` and `_is_diff` as its log format needs.
pub fn commit_record(meta: &DbMeta, commit: &Commit, diff: bool) -> Json {
    let mut o = Object::new();
    for ch in &commit.changes {
        let t = &meta.tables[ch.table];
        let rowj = match (&ch.old, &ch.new) {
            (_, None) => Json::Null,
            (None, Some(n)) => {
                let mut ro = Object::new();
                for (i, c) in t.columns.iter().enumerate() {
                    if !n.cols[i].is_default(&c.ty) {
                        ro.insert(c.name.clone(), n.cols[i].to_json());
                    }
                }
                Json::Object(ro)
            }
            (Some(old), Some(n)) => {
                let mut ro = Object::new();
                for (i, c) in t.columns.iter().enumerate() {
                    if old.cols[i] != n.cols[i] {
                        let v = if diff && c.ty.is_composite() {
                            Datum::diff(&old.cols[i], &n.cols[i], &c.ty)
                        } else {
                            n.cols[i].clone()
                        };
                        ro.insert(c.name.clone(), v.to_json());
                    }
                }
                Json::Object(ro)
            }
        };
        if let Some(Json::Object(tab)) = o.get_mut(&t.name) {
            tab.insert(ch.uuid.to_string(), rowj);
        } else {
            let mut tab = Object::new();
            tab.insert(ch.uuid.to_string(), rowj);
            o.insert(t.name.clone(), Json::Object(tab));
        }
    }
    Json::Object(o)
}

/// The `data` of a Raft log entry (or, without the outer array, a
/// standalone txn record) for `commit`: `[null, txn]` where `txn` is
/// [`commit_record`] plus `_date` (ms), `_comment` (if any) and
/// `"_is_diff": true` when written with column diffs.
pub fn entry_data(meta: &DbMeta, commit: &Commit, diff: bool, date_ms: i64) -> Json {
    let mut txn = match commit_record(meta, commit, diff) {
        Json::Object(o) => o,
        _ => Object::new(),
    };
    txn.insert("_date", Json::Integer(date_ms));
    if let Some(c) = &commit.comment {
        txn.insert("_comment", Json::String(c.clone()));
    }
    if diff {
        txn.insert("_is_diff", Json::Bool(true));
    }
    Json::Array(vec![Json::Null, Json::Object(txn)])
}
