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
//! identical), and reproduces 3.1's weak-reference behaviour (which
//! references to a row deleted in a transaction survive depends on the
//! hash order in which ovsdb-server assesses the transaction's rows; the
//! commit engine, `ovsdb::Database`, models it; checked against the real
//! server by `tests/weak_refs_real_server.rs`). Waiting transactions are
//! checked by `tests/triggers_real_server.rs`; the `_Server` database
//! ([`Server::enable_server_db`]) by the `idl` crate's
//! `tests/server_db_real_server.rs`, with the replica's handshake.
//!
//! One file per job: this one holds the public types and the [`Server`]
//! state; `dispatch` the JSON-RPC methods, sessions and locks; `execute`
//! the operations of a `transact` and its commit; `core` the rows, held
//! only in an `ovsdb::Database` whose transaction is the commit engine (it
//! checks references, collects garbage, removes weak references and
//! checks unique indexes); `monitor`
//! monitors and the
//! updates they send; `replay` installing commits and log records (and
//! [`commit_record`]/[`entry_data`], the records a log holds); `triggers`
//! transactions that wait; `server_db` the `_Server` database.

pub mod cond;
pub mod meta;
pub mod rng;

mod core;
mod dispatch;
mod execute;
mod monitor;
mod replay;
mod server_db;
mod triggers;

pub use meta::DbMeta;
pub use replay::{
    commit_record, entry_data, txn_record, write_commit_record, write_txn_record, RecordSizes,
    Replayed,
};
pub use server_db::{DatabaseStatus, DbModel, SERVER_SCHEMA};
pub use triggers::PendingTransaction;

use crate::cond::RowView;
use crate::monitor::Monitor;
use crate::rng::SplitMix64;
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
/// A committed row: the core's row type ([`ovsdb::db::Row`]), held in the
/// core's `Database` (`core.rs`), its columns the metadata's, in the
/// metadata's order, then the `_uuid` slot (empty) and `_version`.
/// [`ServerRow`] reads them.
pub use ovsdb::db::Row;
/// A row version, shared by the core's tables, the commits that name it
/// and the monitors' change sets (the core's [`ovsdb::db::RowRef`]).
pub use ovsdb::db::RowRef;
use ovsdb::db::TxnChanges;
use ovsdb::error::Result;
use ovsdb::json::{Json, Object};
use ovsdb::uuid::Uuid;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use triggers::Trigger;

/// How the server reads its rows ([`Row`]): the metadata's columns and the
/// `_version`.
pub trait ServerRow {
    /// The columns, numbered as in the table's [`meta::TableMeta`].
    fn cols(&self) -> &[Datum];
    /// The row's `_version` (zero in a transaction's row not yet committed).
    fn version(&self) -> Uuid;
    /// The row as conditions see it.
    fn view(&self) -> RowView<'_>;
}

impl ServerRow for Row {
    fn cols(&self) -> &[Datum] {
        &self.columns[..self.columns.len() - 2]
    }

    fn version(&self) -> Uuid {
        match self.columns.last().and_then(Datum::as_scalar) {
            Some(Atom::Uuid(u)) => *u,
            _ => Uuid::NIL,
        }
    }

    fn view(&self) -> RowView<'_> {
        RowView {
            uuid: self.uuid,
            version: self.version(),
            cols: self.cols(),
        }
    }
}

/// A new row with every column at its default: the table's columns, then
/// the `_uuid` and `_version` slots, both empty.
pub(crate) fn default_row(uuid: Uuid, t: &meta::TableMeta) -> Row {
    let mut columns = Vec::with_capacity(t.columns.len() + 2);
    columns.extend(t.columns.iter().map(|c| Datum::default_for(&c.ty)));
    columns.push(Datum::default());
    columns.push(Datum::default());
    Row { uuid, columns }
}

/// The columns of a row, to change.
pub(crate) fn cols_mut(r: &mut Row) -> &mut [Datum] {
    let n = r.columns.len() - 2;
    &mut r.columns[..n]
}

/// Gives a row its `_version`.
pub(crate) fn set_version(r: &mut Row, version: Uuid) {
    if let Some(v) = r.columns.last_mut() {
        *v = Datum::scalar(Atom::Uuid(version));
    }
}

/// A successful commit: its change list, the core's [`TxnChanges`], in the
/// server's envelope (the transaction id, the comment).
#[derive(Debug, Clone)]
pub struct Commit {
    pub txn_id: Uuid,
    /// Every row the commit changes, with both its versions
    /// ([`ovsdb::db::RowChange`]'s `old` and `new`, which monitors,
    /// triggers, the history and the log records read): tables numbered
    /// and ordered as the metadata's ([`DbMeta::tables`]), each table's
    /// rows in UUID order (a log record's in the record's order).
    pub changes: TxnChanges,
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
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            clustered: false,
            seed: 1,
            history_max: 100,
            disable_monitor_cond: false,
        }
    }
}

/// The in-memory server. `Clone` copies it whole (rows are shared
/// immutable versions), e.g. for a simulator checkpoint.
#[derive(Debug, Clone)]
pub struct Server {
    pub meta: Arc<DbMeta>,
    opts: ServerOptions,
    rng: SplitMix64,
    last_txn_id: Uuid,
    history: VecDeque<Commit>,
    /// Atoms held by the history's row versions, and by the database.
    history_atoms: usize,
    db_atoms: usize,
    /// The committed rows, in the core's `Database` ([`core::Core`]),
    /// whose transaction is the commit engine.
    core: core::Core,
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

impl Server {
    pub fn new(meta: DbMeta, opts: ServerOptions) -> Server {
        Server::with_meta(Arc::new(meta), opts)
    }

    /// A server for metadata shared with others (e.g. every member of a
    /// simulated cluster), without copying it.
    pub fn with_meta(meta: Arc<DbMeta>, opts: ServerOptions) -> Server {
        let core = core::Core::new(&meta);
        Server {
            meta,
            opts,
            rng: SplitMix64::new(opts.seed),
            last_txn_id: Uuid::NIL,
            history: VecDeque::new(),
            history_atoms: 0,
            db_atoms: 0,
            core,
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
            .map(|t| self.core.rows(t).len())
            .unwrap_or(0)
    }

    pub fn rows(&self, table: usize) -> impl Iterator<Item = &RowRef> {
        self.core.rows(table).values()
    }

    pub fn get_row(&self, table: usize, uuid: Uuid) -> Option<&RowRef> {
        self.core.rows(table).get(&uuid)
    }

    /// `{table: {uuid: {column: value}}}` with every column (defaults
    /// included), tables and rows in name/UUID order; empty tables omitted.
    pub fn dump(&self) -> Json {
        let mut o = Object::new();
        for (ti, t) in self.meta.tables.iter().enumerate() {
            if self.core.rows(ti).is_empty() {
                continue;
            }
            let mut rows = Object::new();
            for (u, r) in self.core.rows(ti) {
                let mut ro = Object::new();
                for (ci, c) in t.columns.iter().enumerate() {
                    ro.insert(c.name.clone(), r.cols()[ci].to_json());
                }
                rows.insert(u.to_text(), Json::Object(ro));
            }
            o.insert(t.name.clone(), Json::Object(rows));
        }
        Json::Object(o)
    }

    /// Number of transactions kept for `monitor_cond_since`.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }
}

/// What the modules' unit tests share: a small schema with every kind of
/// column the concerns care about, and fixed row UUIDs so that expected
/// JSON can be written out.
#[cfg(test)]
pub(crate) mod testkit {
    use super::{Server, ServerOptions};
    use ovsdb::json::{parse, Json};

    /// `R` (root, unique `name`): an integer, a set of integers (max 3), a
    /// string map, strong references to `K`, weak references to `R`.
    /// `K` (not root): an integer.
    pub(crate) const SCHEMA: &str = r#"{"name":"t","version":"1.0.0","tables":{
     "R":{"isRoot":true,"indexes":[["name"]],"columns":{
       "name":{"type":"string"},
       "n":{"type":"integer"},
       "s":{"type":{"key":"integer","min":0,"max":3}},
       "m":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}},
       "kids":{"type":{"key":{"type":"uuid","refTable":"K"},"min":0,"max":"unlimited"}},
       "w":{"type":{"key":{"type":"uuid","refTable":"R","refType":"weak"},"min":0,"max":"unlimited"}}}},
     "K":{"isRoot":false,"columns":{"v":{"type":"integer"}}}}}"#;

    pub(crate) const U1: &str = "00000000-0000-0000-0000-000000000001";
    pub(crate) const U2: &str = "00000000-0000-0000-0000-000000000002";
    pub(crate) const U3: &str = "00000000-0000-0000-0000-000000000003";

    pub(crate) fn server(opts: ServerOptions) -> Server {
        Server::from_schema_text(SCHEMA, opts).unwrap()
    }

    pub(crate) fn json(text: &str) -> Json {
        parse(text.as_bytes()).unwrap()
    }

    /// Each message of `out` as (session, compact text).
    pub(crate) fn shown(out: &super::Outbox) -> Vec<(u64, String)> {
        out.iter()
            .map(|(s, m)| (*s, m.to_string_compact()))
            .collect()
    }

    /// Runs `ops` outside any session; returns the compact `result`.
    pub(crate) fn tx(s: &mut Server, ops: &str) -> String {
        s.transact(json(ops).as_array().unwrap())
            .0
            .result
            .to_string_compact()
    }
}
