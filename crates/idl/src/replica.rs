//! The IDL client replica (sans-IO), modelled on the C IDL (ovs
//! `lib/ovsdb-idl.c`, `lib/ovsdb-cs.c`) as described in ovsdb-idl.md §2–§5.
//!
//! * Per-column modes: [`MONITOR`], [`ALERT`], [`TRACK`],
//!   [`WRITE_CHANGED_ONLY`].
//! * Applies `update`, `update2` and `update3` (and monitor replies).
//! * Change tracking: per-row change seqnos, `updated` bits, deleted rows
//!   kept until [`Idl::track_clear`].
//! * Ordered indexes, re-indexed on every modify like the C IDL
//!   ([`IndexPolicy::EveryModify`]) or only when an indexed column changed
//!   ([`IndexPolicy::IndexedColumnsChanged`]).
//! * A transaction builder producing the exact wire JSON (see [`Idl::txn_commit`]).
//!
//! The replica never does I/O. [`Idl::connect`] returns the monitor request
//! to send; [`Idl::receive`] consumes one parsed JSON-RPC message and
//! returns [`Event`]s; messages the replica wants to send (condition
//! changes) are queued and taken with [`Idl::take_outgoing`].

use crate::index::{Index, IndexStats};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::{Json, Object};
use ovsdb::uuid::Uuid;
use ovsdb_server::cond::{Clause, Condition};
use ovsdb_server::meta::DbMeta;
use ovsdb_server::rng::SplitMix64;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

mod handshake;
pub use handshake::{ServerProblem, ServerRow};

/// Replicate this column.
pub const MONITOR: u8 = 1;
/// A change of this column is a database change (bumps seqnos).
pub const ALERT: u8 = 2;
/// Record change tracking for this column.
pub const TRACK: u8 = 4;
/// When written, keep the write only if the value differs.
pub const WRITE_CHANGED_ONLY: u8 = 8;

pub const CHANGE_INSERT: usize = 0;
pub const CHANGE_MODIFY: usize = 1;
pub const CHANGE_DELETE: usize = 2;

/// How indexes are maintained when the server modifies a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexPolicy {
    /// As the C IDL: remove and re-insert the row in every index of its
    /// table on every modify, whatever changed.
    #[default]
    EveryModify,
    /// Re-index only if an indexed column changed.
    IndexedColumnsChanged,
}

/// An error that makes the replica inconsistent with the server (the C IDL
/// then resets its last-txn-id and reconnects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdlError(pub String);

impl fmt::Display for IdlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for IdlError {}

/// A call that names something the replica's schema does not have (the
/// caller's mistake, not the server's). Calls taking names or positions
/// return it instead of panicking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UsageError {
    /// No table of this name.
    UnknownTable(String),
    /// No table at this position.
    NoSuchTable(usize),
    /// The table exists but has no column of this name.
    UnknownColumn { table: String, column: String },
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::UnknownTable(t) => write!(f, "unknown table '{t}'"),
            UsageError::NoSuchTable(t) => write!(f, "no table at position {t}"),
            UsageError::UnknownColumn { table, column } => {
                write!(f, "table '{table}' has no column '{column}'")
            }
        }
    }
}
impl std::error::Error for UsageError {}

/// Transaction statuses (ovs `enum ovsdb_idl_txn_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnStatus {
    Uncommitted,
    Unchanged,
    Incomplete,
    Aborted,
    Success,
    TryAgain,
    NotLocked,
    Error,
}

impl TxnStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TxnStatus::Uncommitted => "uncommitted",
            TxnStatus::Unchanged => "unchanged",
            TxnStatus::Incomplete => "incomplete",
            TxnStatus::Aborted => "aborted",
            TxnStatus::Success => "success",
            TxnStatus::TryAgain => "try again",
            TxnStatus::NotLocked => "not locked",
            TxnStatus::Error => "error",
        }
    }
}

/// Something the replica reports after consuming a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The replica changed (the IDL seqno moved).
    Updated,
    /// A monitor reply arrived; `found` tells whether history was used.
    Monitoring { found: bool },
    /// A `monitor_cond_change` was acknowledged.
    CondAcked { cond_seqno: u64 },
    /// A transaction completed.
    TxnDone {
        id: Json,
        status: TxnStatus,
        /// Provisional UUID → UUID assigned by the server.
        inserted: Vec<(Uuid, Uuid)>,
        increment: Option<i64>,
        error: Option<String>,
    },
    /// The replica found itself inconsistent and needs a full resync.
    Inconsistent(String),
    /// The configured lock was granted (`held`) or lost.
    Lock { held: bool },
    /// The `_Server` handshake found the server unusable (see
    /// [`Idl::enable_server_handshake`]): connect to another one.
    ServerUnusable(ServerProblem),
}

#[derive(Debug, Clone)]
struct IRow {
    data: Vec<Datum>,
    change_seqno: [u64; 3],
    updated: Vec<bool>,
    tracked: bool,
}

#[derive(Debug, Clone, Default)]
struct ITable {
    rows: BTreeMap<Uuid, IRow>,
    /// Tracked rows in arrival order (live and deleted).
    tracked: Vec<Uuid>,
    /// Contents of tracked deleted rows, kept until `track_clear`.
    deleted: HashMap<Uuid, IRow>,
    change_seqno: [u64; 3],
    indexes: Vec<usize>,
}

/// A tracked row as reported by [`Idl::tracked`].
#[derive(Debug, Clone, PartialEq)]
pub struct TrackedRow {
    pub uuid: Uuid,
    pub inserted: bool,
    pub deleted: bool,
    pub modified: bool,
    /// Names of the tracked columns that changed.
    pub updated: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    /// The `_Server` handshake is under way.
    Handshake,
    MonitorRequested,
    Monitoring,
}

/// A single-element change queued by the partial-update API.
#[derive(Debug, Clone, PartialEq)]
pub enum PartialOp {
    MapSet(Atom, Atom),
    MapDelete(Atom),
    SetInsert(Atom),
    SetDelete(Atom),
}

/// The result of a write attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteResult {
    Written,
    /// Dropped: write-only or WRITE_CHANGED_ONLY column with an equal value.
    Discarded,
}

#[derive(Debug, Default)]
struct TxnState {
    order: Vec<(usize, Uuid)>,
    in_order: HashSet<(usize, Uuid)>,
    written: HashMap<(usize, Uuid), BTreeMap<usize, Datum>>,
    prereqs: HashMap<(usize, Uuid), BTreeSet<usize>>,
    deleted: HashSet<(usize, Uuid)>,
    /// Inserted rows; the flag says whether the server must keep the UUID.
    inserted: HashMap<(usize, Uuid), bool>,
    partial: HashMap<(usize, Uuid), Vec<(usize, PartialOp)>>,
    increment: Option<(usize, Uuid, usize)>,
    comments: Vec<String>,
    dry_run: bool,
    stats: TxnBuildStats,
}

/// Counters of one transaction build.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxnBuildStats {
    pub writes: u64,
    pub discarded: u64,
    pub reindex_ops: u64,
}

#[derive(Debug, Clone)]
struct PendingTxn {
    /// Provisional UUIDs of inserted rows, by op position in the request.
    insert_ops: Vec<(usize, Uuid)>,
    increment_op: Option<(usize, String)>,
    dry_run: bool,
}

/// The outcome of [`Idl::txn_commit`].
#[derive(Debug, Clone, PartialEq)]
pub enum Commit {
    /// Nothing really changed: no message is sent.
    Unchanged,
    /// Aborted before sending.
    Aborted,
    /// A lock is configured but not held: nothing was sent.
    NotLocked,
    /// The request to send (already queued in the outgoing list when
    /// connected), with its id.
    Sent {
        id: Json,
        request: Json,
        stats: TxnBuildStats,
    },
}

#[derive(Debug, Clone, Default)]
struct CondSlots {
    /// `None` = always true (no `where` sent).
    new: Option<Option<Condition>>,
    req: Option<Option<Condition>>,
    ack: Option<Condition>,
}

/// The IDL replica.
pub struct Idl {
    pub meta: Arc<DbMeta>,
    modes: Vec<Vec<u8>>,
    needed: Vec<bool>,
    tables: Vec<ITable>,
    indexes: Vec<Index>,
    pub index_policy: IndexPolicy,
    seqno: u64,
    last_id: Uuid,
    state: State,
    monitor_version: u8,
    next_id: i64,
    outgoing: Vec<Json>,
    monitor_req_id: Option<Json>,
    cond: Vec<CondSlots>,
    cond_seqno: u64,
    cond_req_id: Option<Json>,
    txn: Option<TxnState>,
    pending_txns: HashMap<String, PendingTxn>,
    rng: SplitMix64,
    lock: Option<String>,
    has_lock: bool,
    lock_req_id: Option<Json>,
    /// Number of row updates applied (for benchmarks).
    pub rows_applied: u64,
    /// Reverse references: destination row → rows referencing it.
    refs_in: HashMap<Uuid, BTreeSet<(usize, Uuid)>>,
    /// Tables having at least one reference column.
    has_refs: Vec<bool>,
    /// The opt-in `_Server` handshake.
    handshake: Option<handshake::Handshake>,
}

fn uuid_json(u: Uuid) -> Json {
    Json::Array(vec![Json::from("uuid"), Json::String(u.to_string())])
}

fn uuid_where(u: Uuid) -> Json {
    Json::Array(vec![Json::Array(vec![
        Json::from("_uuid"),
        Json::from("=="),
        uuid_json(u),
    ])])
}

fn named_for(u: Uuid) -> String {
    format!("row{}", u.to_string().replace('-', "_"))
}

/// Rewrites `["uuid", U]` into `["named-uuid", "rowU"]` for rows inserted
/// (without a persistent UUID) in the same transaction.
fn substitute_named(j: &mut Json, inserted: &HashSet<Uuid>) {
    if let Json::Array(a) = j {
        if a.len() == 2 && a[0].as_str() == Some("uuid") {
            if let Some(u) = a[1].as_str().and_then(Uuid::parse) {
                if inserted.contains(&u) {
                    *j = Json::Array(vec![Json::from("named-uuid"), Json::String(named_for(u))]);
                }
            }
            return;
        }
        for x in a.iter_mut() {
            substitute_named(x, inserted);
        }
    }
}

fn id_key(id: &Json) -> String {
    id.to_string_compact()
}

impl Idl {
    /// Creates a replica of `meta`. With `monitor_everything`, every column
    /// starts as MONITOR|ALERT (read/write); otherwise every column is
    /// omitted until added.
    pub fn new(meta: Arc<DbMeta>, monitor_everything: bool) -> Idl {
        let modes = meta
            .tables
            .iter()
            .map(|t| {
                vec![
                    if monitor_everything {
                        MONITOR | ALERT
                    } else {
                        0
                    };
                    t.columns.len()
                ]
            })
            .collect();
        let n = meta.tables.len();
        Idl {
            needed: vec![monitor_everything; n],
            modes,
            tables: vec![ITable::default(); n],
            indexes: Vec::new(),
            index_policy: IndexPolicy::EveryModify,
            seqno: 0,
            last_id: Uuid::NIL,
            state: State::Idle,
            monitor_version: 3,
            next_id: 1,
            outgoing: Vec::new(),
            monitor_req_id: None,
            cond: vec![CondSlots::default(); n],
            cond_seqno: 0,
            cond_req_id: None,
            txn: None,
            pending_txns: HashMap::new(),
            rng: SplitMix64::new(0x5eed),
            lock: None,
            has_lock: false,
            lock_req_id: None,
            rows_applied: 0,
            refs_in: HashMap::new(),
            handshake: None,
            has_refs: meta
                .tables
                .iter()
                .map(|t| {
                    t.columns.iter().any(|c| {
                        c.ty.key.ref_table.is_some()
                            || c.ty.value.as_ref().is_some_and(|v| v.ref_table.is_some())
                    })
                })
                .collect(),
            meta,
        }
    }

    /// Seeds the generator of provisional UUIDs for inserted rows.
    pub fn set_seed(&mut self, seed: u64) {
        self.rng = SplitMix64::new(seed);
    }

    // ------------------------------------------------------------------
    // Configuration

    /// Positions of `table`.`column`, or the error naming what is unknown.
    fn tc(&self, table: &str, column: &str) -> Result<(usize, usize), UsageError> {
        let t = self
            .meta
            .table(table)
            .ok_or_else(|| UsageError::UnknownTable(table.to_string()))?;
        let c = self.meta.tables[t]
            .column(column)
            .ok_or_else(|| UsageError::UnknownColumn {
                table: table.to_string(),
                column: column.to_string(),
            })?;
        Ok((t, c))
    }

    fn valid(&self, table: usize, column: usize) -> bool {
        self.meta
            .tables
            .get(table)
            .is_some_and(|t| column < t.columns.len())
    }

    pub fn table_index(&self, table: &str) -> Option<usize> {
        self.meta.table(table)
    }

    pub fn column_index(&self, table: usize, column: &str) -> Option<usize> {
        self.meta.tables.get(table).and_then(|t| t.column(column))
    }

    /// The column's mode bits (0 for an unknown column).
    pub fn mode(&self, table: &str, column: &str) -> u8 {
        self.tc(table, column)
            .map(|(t, c)| self.modes[t][c])
            .unwrap_or(0)
    }

    /// Sets the column's mode bits. An unknown table or column is an
    /// error naming it (the C IDL asserts instead); nothing changes then.
    /// The same holds for every mode call below.
    pub fn set_mode(&mut self, table: &str, column: &str, mode: u8) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        self.modes[t][c] = mode;
        if mode & MONITOR != 0 {
            self.needed[t] = true;
        }
        Ok(())
    }

    /// `add_column`: MONITOR|ALERT.
    pub fn add_column(&mut self, table: &str, column: &str) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        self.modes[t][c] |= MONITOR | ALERT;
        self.needed[t] = true;
        Ok(())
    }

    /// `add_table`: replicate the table's rows even with no columns.
    pub fn add_table(&mut self, table: &str) -> Result<(), UsageError> {
        let t = self
            .meta
            .table(table)
            .ok_or_else(|| UsageError::UnknownTable(table.to_string()))?;
        self.needed[t] = true;
        Ok(())
    }

    /// `omit`: mode 0.
    pub fn omit(&mut self, table: &str, column: &str) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        self.modes[t][c] = 0;
        Ok(())
    }

    /// `omit_alert`: clears ALERT and TRACK (the column becomes write-only).
    pub fn omit_alert(&mut self, table: &str, column: &str) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        self.modes[t][c] &= !(ALERT | TRACK);
        self.modes[t][c] |= MONITOR;
        self.needed[t] = true;
        Ok(())
    }

    /// `track_add_column`: a column without ALERT is first added (so a
    /// write-only column silently becomes read/write), then TRACK is set.
    pub fn track_add_column(&mut self, table: &str, column: &str) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        if self.modes[t][c] & ALERT == 0 {
            self.modes[t][c] |= MONITOR | ALERT;
        }
        self.modes[t][c] |= TRACK;
        self.needed[t] = true;
        Ok(())
    }

    pub fn track_add_all(&mut self) {
        for t in 0..self.modes.len() {
            for c in 0..self.modes[t].len() {
                if self.modes[t][c] & ALERT == 0 {
                    self.modes[t][c] |= MONITOR | ALERT;
                }
                self.modes[t][c] |= TRACK;
            }
            self.needed[t] = true;
        }
    }

    pub fn set_write_changed_only(
        &mut self,
        table: &str,
        column: &str,
        on: bool,
    ) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        if on {
            self.modes[t][c] |= WRITE_CHANGED_ONLY;
        } else {
            self.modes[t][c] &= !WRITE_CHANGED_ONLY;
        }
        Ok(())
    }

    pub fn set_write_changed_only_all(&mut self, on: bool) {
        for t in &mut self.modes {
            for m in t.iter_mut() {
                if on {
                    *m |= WRITE_CHANGED_ONLY;
                } else {
                    *m &= !WRITE_CHANGED_ONLY;
                }
            }
        }
    }

    /// Which monitor method to use: 3 = `monitor_cond_since` (default),
    /// 2 = `monitor_cond`, 1 = `monitor`.
    pub fn set_monitor_version(&mut self, v: u8) {
        self.monitor_version = v.clamp(1, 3);
    }

    /// The monitor method version in use (after any fallback).
    pub fn monitor_version(&self) -> u8 {
        self.monitor_version
    }

    /// Sets the lock this client needs (C `ovsdb_idl_set_lock`): it is
    /// requested when monitoring starts (or now, if already monitoring);
    /// transactions assert it and are not sent while it is not held.
    pub fn set_lock(&mut self, name: Option<&str>) {
        self.lock = name.map(str::to_string);
        self.has_lock = false;
        if self.state == State::Monitoring {
            self.request_lock();
        }
    }

    /// Whether the configured lock is held.
    pub fn has_lock(&self) -> bool {
        self.has_lock
    }

    fn request_lock(&mut self) {
        if let Some(l) = self.lock.clone() {
            let (id, msg) = self.request("lock", vec![Json::String(l)]);
            self.lock_req_id = Some(id);
            self.outgoing.push(msg);
        }
    }

    /// Creates an ordered index on `columns` of `table`; returns its id
    /// (None for an unknown table or column).
    pub fn index_create(&mut self, table: &str, columns: &[&str]) -> Option<usize> {
        let cols: Vec<(&str, bool)> = columns.iter().map(|c| (*c, false)).collect();
        self.index_create_ordered(table, &cols)
    }

    /// Like [`Idl::index_create`], with a descending flag per column
    /// (`OVSDB_INDEX_DESC`).
    pub fn index_create_ordered(&mut self, table: &str, columns: &[(&str, bool)]) -> Option<usize> {
        let t = self.meta.table(table)?;
        let cols: Vec<usize> = columns
            .iter()
            .map(|(c, _)| self.meta.tables[t].column(c))
            .collect::<Option<_>>()?;
        let desc: Vec<bool> = columns.iter().map(|(_, d)| *d).collect();
        let mut idx = Index::with_order(t, cols, &desc);
        for (u, r) in &self.tables[t].rows {
            idx.insert(*u, &r.data);
        }
        self.indexes.push(idx);
        let id = self.indexes.len() - 1;
        self.tables[t].indexes.push(id);
        Some(id)
    }

    pub fn index_stats(&self, id: usize) -> IndexStats {
        self.indexes.get(id).map(|i| i.stats).unwrap_or_default()
    }

    pub fn index_find_eq(&mut self, id: usize, values: &[Datum]) -> Vec<Uuid> {
        self.indexes
            .get_mut(id)
            .map(|i| i.find_eq(values))
            .unwrap_or_default()
    }

    pub fn index_range(
        &mut self,
        id: usize,
        from: Option<&[Datum]>,
        to: Option<&[Datum]>,
    ) -> Vec<Uuid> {
        self.indexes
            .get_mut(id)
            .map(|i| i.range(from, to))
            .unwrap_or_default()
    }

    pub fn index_all(&self, id: usize) -> Vec<Uuid> {
        self.indexes.get(id).map(|i| i.all()).unwrap_or_default()
    }

    // ------------------------------------------------------------------
    // Reading

    /// The IDL seqno: moves whenever something the client is alerted to
    /// changes.
    pub fn seqno(&self) -> u64 {
        self.seqno
    }

    pub fn last_id(&self) -> Uuid {
        self.last_id
    }

    pub fn cond_seqno(&self) -> u64 {
        self.cond_seqno
    }

    pub fn table_seqno(&self, table: usize) -> u64 {
        if table >= self.tables.len() {
            return 0;
        }
        self.tables[table]
            .change_seqno
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
    }

    pub fn row_seqno(&self, table: usize, uuid: Uuid, kind: usize) -> u64 {
        if table >= self.tables.len() || kind > 2 {
            return 0;
        }
        let t = &self.tables[table];
        t.rows
            .get(&uuid)
            .or_else(|| t.deleted.get(&uuid))
            .map(|r| r.change_seqno[kind])
            .unwrap_or(0)
    }

    /// Rows of a table as seen by the client (open transaction included):
    /// UUID order, rows deleted in the transaction skipped, rows inserted
    /// in it included.
    pub fn row_uuids(&self, table: usize) -> Vec<Uuid> {
        if table >= self.tables.len() {
            return Vec::new();
        }
        let mut v: Vec<Uuid> = self.tables[table]
            .rows
            .keys()
            .filter(|u| {
                self.txn
                    .as_ref()
                    .map(|x| !x.deleted.contains(&(table, **u)))
                    .unwrap_or(true)
            })
            .copied()
            .collect();
        if let Some(x) = &self.txn {
            let mut ins: Vec<Uuid> = x
                .inserted
                .keys()
                .filter(|(t, _)| *t == table)
                .map(|(_, u)| *u)
                .collect();
            ins.sort_unstable();
            v.extend(ins);
            v.sort_unstable();
        }
        v
    }

    /// Number of committed rows.
    pub fn row_count(&self, table: usize) -> usize {
        if table >= self.tables.len() {
            return 0;
        }
        self.tables[table].rows.len()
    }

    pub fn exists(&self, table: usize, uuid: Uuid) -> bool {
        if table >= self.tables.len() {
            return false;
        }
        if let Some(x) = &self.txn {
            if x.deleted.contains(&(table, uuid)) {
                return false;
            }
            if x.inserted.contains_key(&(table, uuid)) {
                return true;
            }
        }
        self.tables[table].rows.contains_key(&uuid)
    }

    /// Reads a column: the value written in the open transaction if any,
    /// else the committed value, else (inserted row) the default.
    pub fn read(&self, table: usize, uuid: Uuid, column: usize) -> Datum {
        if !self.valid(table, column) {
            return Datum::default();
        }
        if let Some(x) = &self.txn {
            if let Some(w) = x.written.get(&(table, uuid)).and_then(|m| m.get(&column)) {
                return w.clone();
            }
            if x.inserted.contains_key(&(table, uuid)) {
                return Datum::default_for(&self.meta.tables[table].columns[column].ty);
            }
        }
        match self.tables[table].rows.get(&uuid) {
            Some(r) => r.data[column].clone(),
            None => match self.tables[table].deleted.get(&uuid) {
                Some(r) => r.data[column].clone(),
                None => Datum::default_for(&self.meta.tables[table].columns[column].ty),
            },
        }
    }

    /// Whether [`Idl::read`] would return a value equal to `value`, without
    /// copying it.
    pub fn read_equals(&self, table: usize, uuid: Uuid, column: usize, value: &Datum) -> bool {
        if !self.valid(table, column) {
            return false;
        }
        if let Some(x) = &self.txn {
            if let Some(w) = x.written.get(&(table, uuid)).and_then(|m| m.get(&column)) {
                return w == value;
            }
            if x.inserted.contains_key(&(table, uuid)) {
                return value.is_default(&self.meta.tables[table].columns[column].ty);
            }
        }
        match self.tables[table]
            .rows
            .get(&uuid)
            .or_else(|| self.tables[table].deleted.get(&uuid))
        {
            Some(r) => r.data.get(column) == Some(value),
            None => value.is_default(&self.meta.tables[table].columns[column].ty),
        }
    }

    /// Borrowing read of committed data (no transaction view).
    pub fn committed(&self, table: usize, uuid: Uuid) -> Option<&[Datum]> {
        if table >= self.tables.len() {
            return None;
        }
        self.tables[table]
            .rows
            .get(&uuid)
            .or_else(|| self.tables[table].deleted.get(&uuid))
            .map(|r| r.data.as_slice())
    }

    /// `{table: {uuid: {column: value}}}` of the monitored columns of every
    /// committed row (same shape as [`ovsdb_server::Server::dump`]).
    pub fn dump(&self) -> Json {
        let mut o = Object::new();
        for (ti, t) in self.meta.tables.iter().enumerate() {
            if self.tables[ti].rows.is_empty() {
                continue;
            }
            let mut rows = Object::new();
            for (u, r) in &self.tables[ti].rows {
                let mut ro = Object::new();
                for (ci, c) in t.columns.iter().enumerate() {
                    if self.modes[ti][ci] & MONITOR != 0 {
                        ro.insert(c.name.clone(), r.data[ci].to_json());
                    }
                }
                rows.insert(u.to_string(), Json::Object(ro));
            }
            o.insert(t.name.clone(), Json::Object(rows));
        }
        Json::Object(o)
    }

    // ------------------------------------------------------------------
    // Change tracking

    fn table_tracked(&self, t: usize) -> bool {
        self.modes[t].iter().any(|m| m & TRACK != 0)
    }

    /// Tracked rows of a table since the last `track_clear`, in arrival
    /// order.
    pub fn tracked(&self, table: usize) -> Vec<TrackedRow> {
        if table >= self.tables.len() {
            return Vec::new();
        }
        let t = &self.tables[table];
        let cols = &self.meta.tables[table].columns;
        t.tracked
            .iter()
            .filter_map(|u| {
                let (r, deleted) = match t.rows.get(u) {
                    Some(r) => (r, false),
                    None => (t.deleted.get(u)?, true),
                };
                Some(TrackedRow {
                    uuid: *u,
                    inserted: r.change_seqno[CHANGE_INSERT] > 0,
                    deleted: deleted || r.change_seqno[CHANGE_DELETE] > 0,
                    modified: r.change_seqno[CHANGE_MODIFY] > 0,
                    updated: r
                        .updated
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| **b)
                        .map(|(i, _)| cols[i].name.clone())
                        .collect(),
                })
            })
            .collect()
    }

    /// Is anything tracked in this table? (OVN's engine treats a table
    /// node as updated iff this is true.)
    pub fn has_tracked(&self, table: usize) -> bool {
        if table >= self.tables.len() {
            return false;
        }
        !self.tables[table].tracked.is_empty()
    }

    pub fn track_clear(&mut self) {
        for t in &mut self.tables {
            for u in std::mem::take(&mut t.tracked) {
                if let Some(r) = t.rows.get_mut(&u) {
                    r.change_seqno = [0; 3];
                    r.updated.iter_mut().for_each(|b| *b = false);
                    r.tracked = false;
                }
            }
            t.deleted.clear();
        }
    }

    // ------------------------------------------------------------------
    // Protocol

    fn next_request_id(&mut self) -> Json {
        let id = Json::Integer(self.next_id);
        self.next_id += 1;
        id
    }

    fn request(&mut self, method: &str, params: Vec<Json>) -> (Json, Json) {
        let id = self.next_request_id();
        let mut o = Object::new();
        o.insert("method", Json::from(method));
        o.insert("params", Json::Array(params));
        o.insert("id", id.clone());
        (id, Json::Object(o))
    }

    fn monitor_id(&self) -> Json {
        Json::Array(vec![
            Json::from("monid"),
            Json::from(self.meta.name.as_str()),
        ])
    }

    fn cond_where(c: &Option<Condition>) -> Option<Json> {
        match c {
            None => None,
            Some(c) if c.clauses.is_empty() => Some(Json::Array(vec![Json::Bool(false)])),
            Some(c) => Some(c.to_json()),
        }
    }

    /// The monitor request the replica would send now.
    pub fn monitor_requests(&mut self, use_latest: bool) -> Json {
        let mut reqs = Object::new();
        for (ti, t) in self.meta.tables.iter().enumerate() {
            let cols: Vec<Json> = t
                .columns
                .iter()
                .enumerate()
                .filter(|(ci, _)| self.modes[ti][*ci] & MONITOR != 0)
                .map(|(_, c)| Json::from(c.name.as_str()))
                .collect();
            if cols.is_empty() && !self.needed[ti] {
                continue;
            }
            let mut r = Object::new();
            r.insert("columns", Json::Array(cols));
            if self.monitor_version >= 2 {
                let slots = &mut self.cond[ti];
                let c = if use_latest {
                    let latest = slots
                        .new
                        .take()
                        .or_else(|| slots.req.take())
                        .unwrap_or_else(|| slots.ack.clone());
                    slots.req = Some(latest.clone());
                    latest
                } else {
                    slots.ack.clone()
                };
                if let Some(w) = Self::cond_where(&c) {
                    r.insert("where", w);
                }
            }
            reqs.insert(t.name.clone(), Json::Object(r));
        }
        Json::Object(reqs)
    }

    /// Starts (or restarts after a reconnect) monitoring: returns the
    /// monitor request to send. With a known last-txn-id the acknowledged
    /// conditions are used, pending ones follow as `monitor_cond_change`.
    /// With [`Idl::enable_server_handshake`] it returns the first request
    /// of the `_Server` handshake instead; the monitor request follows
    /// (through [`Idl::take_outgoing`]) once the server passes the check.
    pub fn connect(&mut self) -> Json {
        if let Some(first) = self.handshake_start() {
            return first;
        }
        self.data_monitor_request()
    }

    /// The monitor request of the replicated database.
    fn data_monitor_request(&mut self) -> Json {
        // Outstanding transactions are lost with the old connection.
        self.state = State::MonitorRequested;
        let use_latest = self.last_id.is_nil() || self.monitor_version < 3;
        let reqs = self.monitor_requests(use_latest);
        let mut params = vec![Json::from(self.meta.name.as_str()), self.monitor_id(), reqs];
        let method = match self.monitor_version {
            1 => "monitor",
            2 => "monitor_cond",
            _ => {
                params.push(Json::String(self.last_id.to_string()));
                "monitor_cond_since"
            }
        };
        let (id, msg) = self.request(method, params);
        self.monitor_req_id = Some(id);
        msg
    }

    /// The connection dropped: in-flight transactions complete with
    /// TRY_AGAIN; a condition change in flight invalidates the last id.
    pub fn disconnect(&mut self) -> Vec<Event> {
        let mut ev = Vec::new();
        let mut ids: Vec<String> = self.pending_txns.keys().cloned().collect();
        ids.sort();
        for k in ids {
            self.pending_txns.remove(&k);
            ev.push(Event::TxnDone {
                id: ovsdb::json::parse_value(k.as_bytes()).unwrap_or(Json::Null),
                status: TxnStatus::TryAgain,
                inserted: Vec::new(),
                increment: None,
                error: None,
            });
        }
        if self.cond_req_id.take().is_some() {
            self.last_id = Uuid::NIL;
            for s in &mut self.cond {
                if let Some(r) = s.req.take() {
                    if s.new.is_none() {
                        s.new = Some(r);
                    }
                }
            }
        }
        self.state = State::Idle;
        self.handshake_disconnect();
        self.monitor_req_id = None;
        self.lock_req_id = None;
        self.has_lock = false;
        self.outgoing.clear();
        ev
    }

    pub fn is_monitoring(&self) -> bool {
        self.state == State::Monitoring
    }

    /// Messages queued for the server (condition changes).
    pub fn take_outgoing(&mut self) -> Vec<Json> {
        std::mem::take(&mut self.outgoing)
    }

    /// Sets the condition of a table. `clauses` uses the C IDL's meaning:
    /// a `true` clause makes the condition always true, `false` clauses
    /// are dropped, no clauses matches nothing. Returns the condition
    /// seqno at which the replica will reflect it, or
    /// [`UsageError::UnknownTable`] (nothing changes then).
    pub fn set_condition(&mut self, table: &str, clauses: Vec<Clause>) -> Result<u64, UsageError> {
        let t = self
            .meta
            .table(table)
            .ok_or_else(|| UsageError::UnknownTable(table.to_string()))?;
        let c: Option<Condition> = if clauses.contains(&Clause::Const(true)) {
            None
        } else {
            Some(Condition {
                clauses: clauses
                    .into_iter()
                    .filter(|c| *c != Clause::Const(false))
                    .collect(),
            })
        };
        let slots = &self.cond[t];
        let latest = slots
            .new
            .clone()
            .or_else(|| slots.req.clone())
            .unwrap_or_else(|| slots.ack.clone());
        if latest != c {
            self.cond[t].new = Some(c);
            self.send_cond_change();
        }
        let any_new = self.cond.iter().any(|s| s.new.is_some());
        let any_req = self.cond_req_id.is_some()
            || (self.state != State::Monitoring && self.cond.iter().any(|s| s.req.is_some()));
        Ok(self.cond_seqno + u64::from(any_req) + u64::from(any_new))
    }

    fn send_cond_change(&mut self) {
        if self.state != State::Monitoring || self.cond_req_id.is_some() || self.monitor_version < 2
        {
            return;
        }
        let mut reqs = Object::new();
        for ti in 0..self.cond.len() {
            if let Some(c) = self.cond[ti].new.take() {
                let mut r = Object::new();
                r.insert(
                    "where",
                    Self::cond_where(&c).unwrap_or_else(|| Json::Array(vec![Json::Bool(true)])),
                );
                reqs.insert(
                    self.meta.tables[ti].name.clone(),
                    Json::Array(vec![Json::Object(r)]),
                );
                self.cond[ti].req = Some(c);
            }
        }
        if reqs.is_empty() {
            return;
        }
        let mid = self.monitor_id();
        let (id, msg) = self.request(
            "monitor_cond_change",
            vec![mid.clone(), mid, Json::Object(reqs)],
        );
        self.cond_req_id = Some(id);
        self.outgoing.push(msg);
    }

    /// Consumes one JSON-RPC message from the server.
    pub fn receive(&mut self, msg: &Json) -> Result<Vec<Event>, IdlError> {
        let mut ev = Vec::new();
        let Some(o) = msg.as_object() else {
            return Err(IdlError("message is not an object".into()));
        };
        if let Some(method) = o.get("method").and_then(Json::as_str) {
            let empty = Vec::new();
            let params = o.get("params").and_then(Json::as_array).unwrap_or(&empty);
            if let Some(e) = self.handshake_update(method, params) {
                return Ok(e);
            }
            let mid = self.monitor_id();
            match method {
                "update" | "update2" if params.len() == 2 && params[0] == mid => {
                    let v = if method == "update" { 1 } else { 2 };
                    if self.apply_table_updates(v, &params[1], false)? {
                        ev.push(Event::Updated);
                    }
                }
                "locked" | "stolen"
                    if params.first().and_then(Json::as_str) == self.lock.as_deref()
                        && self.lock.is_some() =>
                {
                    self.has_lock = method == "locked";
                    ev.push(Event::Lock {
                        held: self.has_lock,
                    });
                }
                "update3" if params.len() == 3 && params[0] == mid => {
                    if self.apply_table_updates(3, &params[2], false)? {
                        ev.push(Event::Updated);
                    }
                    if let Some(u) = params[1].as_str().and_then(Uuid::parse) {
                        self.last_id = u;
                    }
                }
                _ => {}
            }
            return Ok(ev);
        }
        let id = o.get("id").cloned().unwrap_or(Json::Null);
        let error = o.get("error").filter(|e| !e.is_null()).cloned();
        let result = o.get("result").cloned().unwrap_or(Json::Null);
        if let Some(e) = self.handshake_reply(&id, error.as_ref(), &result) {
            return Ok(e);
        }
        if self.monitor_req_id.as_ref() == Some(&id) {
            self.monitor_req_id = None;
            if let Some(e) = error {
                // Older or restricted servers: fall back monitor_cond_since
                // → monitor_cond → monitor, as the C client does.
                if self.monitor_version > 1 {
                    self.monitor_version -= 1;
                    let req = self.data_monitor_request();
                    self.outgoing.push(req);
                    return Ok(ev);
                }
                return Err(IdlError(format!("monitor request failed: {e}")));
            }
            let (found, tu) = if self.monitor_version == 3 {
                let a = result
                    .as_array()
                    .filter(|a| a.len() == 3)
                    .ok_or_else(|| IdlError("bad monitor_cond_since reply".into()))?;
                let found = a[0].as_bool().unwrap_or(false);
                if let Some(u) = a[1].as_str().and_then(Uuid::parse) {
                    self.last_id = u;
                }
                (found, a[2].clone())
            } else {
                (false, result)
            };
            // The historical bump for monitor replies.
            self.seqno += 1;
            self.apply_table_updates(self.monitor_version.min(2), &tu, !found)?;
            // Conditions sent in the request are now acknowledged.
            let mut acked = false;
            for s in &mut self.cond {
                if let Some(r) = s.req.take() {
                    s.ack = r;
                    acked = true;
                }
            }
            if acked {
                self.cond_seqno += 1;
            }
            self.state = State::Monitoring;
            ev.push(Event::Monitoring { found });
            ev.push(Event::Updated);
            self.send_cond_change();
            if self.lock.is_some() && !self.has_lock && self.lock_req_id.is_none() {
                self.request_lock();
            }
            return Ok(ev);
        }
        if self.lock_req_id.as_ref() == Some(&id) {
            self.lock_req_id = None;
            self.has_lock = result.get("locked").and_then(Json::as_bool) == Some(true);
            ev.push(Event::Lock {
                held: self.has_lock,
            });
            return Ok(ev);
        }
        if self.cond_req_id.as_ref() == Some(&id) {
            self.cond_req_id = None;
            if let Some(e) = error {
                return Err(IdlError(format!("monitor_cond_change failed: {e}")));
            }
            for s in &mut self.cond {
                if let Some(r) = s.req.take() {
                    s.ack = r;
                }
            }
            self.cond_seqno += 1;
            ev.push(Event::CondAcked {
                cond_seqno: self.cond_seqno,
            });
            self.send_cond_change();
            return Ok(ev);
        }
        if let Some(p) = self.pending_txns.remove(&id_key(&id)) {
            ev.push(self.txn_reply(id, p, error, &result));
        }
        Ok(ev)
    }

    fn txn_reply(&self, id: Json, p: PendingTxn, error: Option<Json>, result: &Json) -> Event {
        if let Some(e) = error {
            let status = if e.as_str() == Some("canceled") {
                TxnStatus::TryAgain
            } else {
                TxnStatus::Error
            };
            return Event::TxnDone {
                id,
                status,
                inserted: Vec::new(),
                increment: None,
                error: Some(e.to_string_compact()),
            };
        }
        let empty = Vec::new();
        let results = result.as_array().unwrap_or(&empty);
        let mut hard = false;
        let mut soft = false;
        let mut not_locked = false;
        let mut first_error = None;
        for r in results {
            if let Some(e) = r.get("error").and_then(Json::as_str) {
                if first_error.is_none() {
                    first_error = Some(r.to_string_compact());
                }
                match e {
                    "timed out" => soft = true,
                    "not owner" => not_locked = true,
                    "aborted" if p.dry_run => {}
                    _ => hard = true,
                }
            } else if r.is_null() {
                soft = true;
            }
        }
        let status = if hard {
            TxnStatus::Error
        } else if not_locked {
            TxnStatus::NotLocked
        } else if soft {
            TxnStatus::TryAgain
        } else {
            TxnStatus::Success
        };
        let mut inserted = Vec::new();
        let mut increment = None;
        if status == TxnStatus::Success {
            for (pos, prov) in &p.insert_ops {
                if let Some(u) = results
                    .get(*pos)
                    .and_then(|r| r.get("uuid"))
                    .and_then(Json::as_array)
                    .and_then(|a| a.get(1))
                    .and_then(Json::as_str)
                    .and_then(Uuid::parse)
                {
                    inserted.push((*prov, u));
                }
            }
            if let Some((pos, col)) = &p.increment_op {
                increment = results
                    .get(*pos)
                    .and_then(|r| r.get("rows"))
                    .and_then(Json::as_array)
                    .and_then(|rows| rows.first())
                    .and_then(|r| r.get(col))
                    .and_then(Json::as_i64);
            }
        }
        Event::TxnDone {
            id,
            status,
            inserted,
            increment,
            error: first_error,
        }
    }

    // ------------------------------------------------------------------
    // Applying updates

    fn index_remove(&mut self, t: usize, u: Uuid) {
        let ids = self.tables[t].indexes.clone();
        if ids.is_empty() {
            return;
        }
        if let Some(r) = self.tables[t].rows.get(&u) {
            for i in ids {
                self.indexes[i].remove(u, &r.data);
            }
        }
    }

    fn index_add(&mut self, t: usize, u: Uuid) {
        let ids = self.tables[t].indexes.clone();
        if ids.is_empty() {
            return;
        }
        if let Some(r) = self.tables[t].rows.get(&u) {
            for i in ids {
                self.indexes[i].insert(u, &r.data);
            }
        }
    }

    fn clear_replica(&mut self) {
        self.refs_in.clear();
        for t in 0..self.tables.len() {
            for i in self.tables[t].indexes.clone() {
                self.indexes[i].clear();
            }
            let tt = &mut self.tables[t];
            tt.rows.clear();
            tt.tracked.clear();
            tt.deleted.clear();
        }
        self.seqno += 1;
    }

    /// Applies `<table-updates>` (version 1) or `<table-updates2>` (2 and
    /// 3). With `clear`, the replica is flushed first. Returns whether the
    /// IDL seqno moved.
    pub fn apply_table_updates(
        &mut self,
        version: u8,
        tu: &Json,
        clear: bool,
    ) -> Result<bool, IdlError> {
        let before = self.seqno;
        if clear {
            self.clear_replica();
        }
        let tables = tu
            .as_object()
            .ok_or_else(|| IdlError("<table-updates> is not an object".into()))?;
        for (tname, rows) in tables.iter() {
            let Some(t) = self.meta.table(tname) else {
                continue;
            };
            let rows = rows
                .as_object()
                .ok_or_else(|| IdlError(format!("<table-update> for {tname} is not an object")))?;
            for (us, ru) in rows.iter() {
                let u = Uuid::parse(us).ok_or_else(|| IdlError(format!("bad row UUID {us}")))?;
                let ro = ru
                    .as_object()
                    .ok_or_else(|| IdlError("<row-update> is not an object".into()))?;
                self.rows_applied += 1;
                let changed = if version == 1 {
                    match (ro.get("old"), ro.get("new")) {
                        (_, Some(new)) if !self.tables[t].rows.contains_key(&u) => {
                            self.insert_row(t, u, new)?
                        }
                        (Some(_), Some(new)) => self.modify_row(t, u, new, false)?,
                        (Some(_), None) => self.delete_row(t, u)?,
                        (None, Some(_)) => {
                            return Err(IdlError(format!(
                                "cannot add existing row {u} to table {tname}"
                            )))
                        }
                        (None, None) => {
                            return Err(IdlError("row update has neither old nor new".into()))
                        }
                    }
                } else if let Some(r) = ro.get("initial").or_else(|| ro.get("insert")) {
                    if self.tables[t].rows.contains_key(&u) {
                        return Err(IdlError(format!(
                            "cannot add existing row {u} to table {tname}"
                        )));
                    }
                    self.insert_row(t, u, r)?
                } else if let Some(d) = ro.get("modify") {
                    self.modify_row(t, u, d, true)?
                } else if let Some(d) = ro.get("delete") {
                    if !d.is_null() {
                        return Err(IdlError("delete must carry null".into()));
                    }
                    self.delete_row(t, u)?
                } else {
                    return Err(IdlError("unknown <row-update2>".into()));
                };
                if changed {
                    self.seqno += 1;
                }
            }
        }
        Ok(self.seqno != before)
    }

    /// UUIDs a row references through columns with a `refTable`.
    fn ref_targets(&self, t: usize, data: &[Datum]) -> Vec<Uuid> {
        let mut v = Vec::new();
        if !self.has_refs[t] {
            return v;
        }
        for (c, d) in self.meta.tables[t].columns.iter().zip(data) {
            let kref = c.ty.key.ref_table.is_some();
            let vref = c.ty.value.as_ref().is_some_and(|x| x.ref_table.is_some());
            match d {
                Datum::Set(s) if kref => v.extend(s.iter().filter_map(Atom::as_uuid)),
                Datum::Map(m) => {
                    for (k, x) in m {
                        if kref {
                            v.extend(k.as_uuid());
                        }
                        if vref {
                            v.extend(x.as_uuid());
                        }
                    }
                }
                _ => {}
            }
        }
        v
    }

    fn refs_add(&mut self, t: usize, u: Uuid) {
        if !self.has_refs[t] {
            return;
        }
        let targets = match self.tables[t].rows.get(&u) {
            Some(r) => self.ref_targets(t, &r.data),
            None => return,
        };
        for d in targets {
            self.refs_in.entry(d).or_default().insert((t, u));
        }
    }

    fn refs_remove(&mut self, t: usize, u: Uuid) {
        if !self.has_refs[t] {
            return;
        }
        let targets = match self.tables[t].rows.get(&u) {
            Some(r) => self.ref_targets(t, &r.data),
            None => return,
        };
        for d in targets {
            if let Some(set) = self.refs_in.get_mut(&d) {
                set.remove(&(t, u));
                if set.is_empty() {
                    self.refs_in.remove(&d);
                }
            }
        }
    }

    /// Puts rows that (transitively) reference `u` on their tables' tracked
    /// lists as modified, without `updated` bits (changes of referenced
    /// rows, as the C IDL reports them).
    fn track_referrers(&mut self, u: Uuid) {
        let mut work = vec![u];
        let mut seen: HashSet<Uuid> = HashSet::new();
        seen.insert(u);
        let s = self.seqno + 1;
        while let Some(x) = work.pop() {
            let Some(srcs) = self.refs_in.get(&x).cloned() else {
                continue;
            };
            for (st, su) in srcs {
                if !seen.insert(su) || !self.table_tracked(st) {
                    continue;
                }
                let tt = &mut self.tables[st];
                if let Some(r) = tt.rows.get_mut(&su) {
                    if r.tracked {
                        continue;
                    }
                    r.tracked = true;
                    r.change_seqno[CHANGE_MODIFY] = s;
                    tt.change_seqno[CHANGE_MODIFY] = s;
                    tt.tracked.push(su);
                    work.push(su);
                }
            }
        }
    }

    fn note_change(&mut self, t: usize, u: Uuid, kind: usize, col: usize) {
        let mode = self.modes[t][col];
        if mode & ALERT == 0 {
            return;
        }
        let s = self.seqno + 1;
        let tracked_table = self.table_tracked(t);
        let tt = &mut self.tables[t];
        tt.change_seqno[kind] = s;
        if let Some(r) = tt.rows.get_mut(&u) {
            r.change_seqno[kind] = s;
            if mode & TRACK != 0 && tracked_table {
                if !r.tracked {
                    r.tracked = true;
                    tt.tracked.push(u);
                }
                if let Some(b) = r.updated.get_mut(col) {
                    *b = true;
                }
            }
        }
    }

    fn insert_row(&mut self, t: usize, u: Uuid, row: &Json) -> Result<bool, IdlError> {
        let meta = self.meta.clone();
        let tm = &meta.tables[t];
        let ro = row
            .as_object()
            .ok_or_else(|| IdlError("<row> is not an object".into()))?;
        // Parse everything first so that a bad value leaves no trace.
        let mut data: Vec<Datum> = tm
            .columns
            .iter()
            .map(|c| Datum::default_for(&c.ty))
            .collect();
        let mut changed_cols = Vec::new();
        for (cn, v) in ro.iter() {
            let Some(ci) = tm.column(cn) else { continue };
            let d = Datum::from_json(v, &tm.columns[ci].ty)
                .map_err(|e| IdlError(format!("{}.{cn}: {e}", tm.name)))?;
            if data[ci] != d {
                data[ci] = d;
                changed_cols.push(ci);
            }
        }
        let n = data.len();
        // A tracked row deleted earlier and re-inserted: forget the copy.
        self.tables[t].deleted.remove(&u);
        self.tables[t].rows.insert(
            u,
            IRow {
                data,
                change_seqno: [0; 3],
                updated: vec![false; n],
                tracked: false,
            },
        );
        for ci in changed_cols {
            self.note_change(t, u, CHANGE_INSERT, ci);
        }
        self.index_add(t, u);
        self.refs_add(t, u);
        self.track_referrers(u);
        Ok(true)
    }

    fn modify_row(&mut self, t: usize, u: Uuid, row: &Json, diff: bool) -> Result<bool, IdlError> {
        let meta = self.meta.clone();
        let tm = &meta.tables[t];
        if !self.tables[t].rows.contains_key(&u) {
            return Err(IdlError(format!(
                "cannot modify missing row {u} in table {}",
                tm.name
            )));
        }
        let ro = row
            .as_object()
            .ok_or_else(|| IdlError("<row> is not an object".into()))?;
        // Which columns arrive, to decide about re-indexing.
        let ids = self.tables[t].indexes.clone();
        let reindex = !ids.is_empty()
            && match self.index_policy {
                IndexPolicy::EveryModify => true,
                IndexPolicy::IndexedColumnsChanged => ids.iter().any(|&i| {
                    self.indexes[i]
                        .columns
                        .iter()
                        .any(|&c| ro.contains_key(&tm.columns[c].name))
                }),
            };
        if reindex {
            self.index_remove(t, u);
        }
        // Parse every value first so that malformed input leaves the row
        // untouched; diffs are then applied in place (O(d·log n); each
        // apply checks the resulting size before mutating).
        let mut parsed: Vec<(usize, Datum)> = Vec::new();
        for (cn, v) in ro.iter() {
            let Some(ci) = tm.column(cn) else { continue };
            let ty = &tm.columns[ci].ty;
            let d = if diff {
                Datum::diff_from_json(v, ty)
            } else {
                Datum::from_json(v, ty)
            };
            match d {
                Ok(d) => parsed.push((ci, d)),
                Err(e) => {
                    if reindex {
                        self.index_add(t, u);
                    }
                    return Err(IdlError(format!("{}.{cn}: {e}", tm.name)));
                }
            }
        }
        let mut changed = false;
        let mut tracked_change = false;
        let mut failure = None;
        self.refs_remove(t, u);
        for (ci, d) in parsed {
            let ty = &tm.columns[ci].ty;
            let Some(r) = self.tables[t].rows.get_mut(&u) else {
                break;
            };
            let col_changed = if diff {
                match r.data[ci].apply_diff(&d, ty) {
                    Ok(()) => true,
                    Err(e) => {
                        failure = Some(IdlError(format!(
                            "{}.{}: {e}",
                            tm.name, tm.columns[ci].name
                        )));
                        break;
                    }
                }
            } else if r.data[ci] != d {
                r.data[ci] = d;
                true
            } else {
                false
            };
            if col_changed {
                if self.modes[t][ci] & ALERT != 0 {
                    changed = true;
                }
                if self.modes[t][ci] & TRACK != 0 {
                    tracked_change = true;
                }
                self.note_change(t, u, CHANGE_MODIFY, ci);
            }
        }
        self.refs_add(t, u);
        if tracked_change {
            self.track_referrers(u);
        }
        if let Some(e) = failure {
            if reindex {
                self.index_add(t, u);
            }
            return Err(e);
        }
        if reindex {
            self.index_add(t, u);
        }
        Ok(changed)
    }

    fn delete_row(&mut self, t: usize, u: Uuid) -> Result<bool, IdlError> {
        if !self.tables[t].rows.contains_key(&u) {
            return Err(IdlError(format!(
                "cannot delete missing row {u} from table {}",
                self.meta.tables[t].name
            )));
        }
        self.index_remove(t, u);
        self.refs_remove(t, u);
        self.track_referrers(u);
        let tracked = self.table_tracked(t);
        let s = self.seqno + 1;
        let tt = &mut self.tables[t];
        let Some(mut r) = tt.rows.remove(&u) else {
            return Ok(false);
        };
        if tracked {
            r.change_seqno[CHANGE_DELETE] = s;
            tt.change_seqno[CHANGE_DELETE] = s;
            if !r.tracked {
                r.tracked = true;
                tt.tracked.push(u);
            }
            tt.deleted.insert(u, r);
        } else {
            tt.change_seqno[CHANGE_DELETE] = s;
        }
        Ok(true)
    }

    // ------------------------------------------------------------------
    // Transactions

    /// The row's data as the open transaction sees it (None if absent or
    /// deleted in the transaction).
    fn view_data(&self, t: usize, u: Uuid) -> Option<Vec<Datum>> {
        let x = self.txn.as_ref();
        if x.is_some_and(|x| x.deleted.contains(&(t, u))) {
            return None;
        }
        let mut data: Vec<Datum> = if x.is_some_and(|x| x.inserted.contains_key(&(t, u))) {
            self.meta.tables[t]
                .columns
                .iter()
                .map(|c| Datum::default_for(&c.ty))
                .collect()
        } else {
            self.tables[t].rows.get(&u)?.data.clone()
        };
        if let Some(w) = x.and_then(|x| x.written.get(&(t, u))) {
            for (c, d) in w {
                if let Some(slot) = data.get_mut(*c) {
                    *slot = d.clone();
                }
            }
        }
        Some(data)
    }

    fn index_view_remove(&mut self, t: usize, u: Uuid) -> u64 {
        let ids = self.tables[t].indexes.clone();
        if ids.is_empty() {
            return 0;
        }
        if let Some(d) = self.view_data(t, u) {
            for i in &ids {
                self.indexes[*i].remove(u, &d);
            }
            return ids.len() as u64;
        }
        0
    }

    fn index_view_add(&mut self, t: usize, u: Uuid) -> u64 {
        let ids = self.tables[t].indexes.clone();
        if ids.is_empty() {
            return 0;
        }
        if let Some(d) = self.view_data(t, u) {
            for i in &ids {
                self.indexes[*i].insert(u, &d);
            }
            return ids.len() as u64;
        }
        0
    }

    /// Opens a transaction (one at a time, as in the C IDL).
    pub fn txn_begin(&mut self) {
        self.txn_state();
    }

    /// The open transaction, opened if none is.
    fn txn_state(&mut self) -> &mut TxnState {
        self.txn.get_or_insert_with(TxnState::default)
    }

    pub fn txn_is_open(&self) -> bool {
        self.txn.is_some()
    }

    fn txn_touch(&mut self, key: (usize, Uuid)) {
        let x = self.txn_state();
        if x.in_order.insert(key) {
            x.order.push(key);
        }
    }

    /// Writes a column. A write-only column (mode exactly MONITOR) or a
    /// WRITE_CHANGED_ONLY column drops a write equal to the value it would
    /// read; anything else is recorded (and re-indexed).
    pub fn txn_write(
        &mut self,
        table: usize,
        uuid: Uuid,
        column: usize,
        value: Datum,
    ) -> WriteResult {
        if !self.valid(table, column) {
            return WriteResult::Discarded;
        }
        self.txn_begin();
        let mode = self.modes[table][column];
        let write_only = mode & MONITOR != 0 && mode & ALERT == 0;
        if let Some(x) = self.txn.as_mut() {
            x.stats.writes += 1;
        }
        if (write_only || mode & WRITE_CHANGED_ONLY != 0)
            && self.read_equals(table, uuid, column, &value)
        {
            if let Some(x) = self.txn.as_mut() {
                x.stats.discarded += 1;
            }
            return WriteResult::Discarded;
        }
        let key = (table, uuid);
        self.txn_touch(key);
        // As the C IDL: remove the row from the table's indexes and re-add
        // it with the written value, so index queries see uncommitted data.
        let removed = self.index_view_remove(table, uuid);
        let x = self.txn_state();
        x.written.entry(key).or_default().insert(column, value);
        let added = self.index_view_add(table, uuid);
        if let Some(x) = self.txn.as_mut() {
            x.stats.reindex_ops += removed + added;
        }
        WriteResult::Written
    }

    /// Records that `column` must still hold the value read (a `wait`).
    pub fn txn_verify(&mut self, table: usize, uuid: Uuid, column: usize) {
        if !self.valid(table, column) {
            return;
        }
        self.txn_begin();
        let key = (table, uuid);
        let x = self.txn_state();
        if x.inserted.contains_key(&key)
            || x.written
                .get(&key)
                .map(|w| w.contains_key(&column))
                .unwrap_or(false)
        {
            return;
        }
        self.txn_touch(key);
        let x = self.txn_state();
        x.prereqs.entry(key).or_default().insert(column);
    }

    pub fn txn_delete(&mut self, table: usize, uuid: Uuid) {
        if table >= self.tables.len() {
            return;
        }
        self.txn_begin();
        let key = (table, uuid);
        self.index_view_remove(table, uuid);
        let x = self.txn_state();
        if x.inserted.remove(&key).is_some() {
            x.written.remove(&key);
            x.order.retain(|k| *k != key);
            x.in_order.remove(&key);
            return;
        }
        x.written.remove(&key);
        x.deleted.insert(key);
        self.txn_touch(key);
    }

    /// Inserts a row with a provisional UUID (or `persist`: a UUID the
    /// server must keep). [`UsageError::NoSuchTable`] for a table
    /// position outside the schema (no transaction is opened then).
    pub fn txn_insert(&mut self, table: usize, persist: Option<Uuid>) -> Result<Uuid, UsageError> {
        if table >= self.tables.len() {
            return Err(UsageError::NoSuchTable(table));
        }
        let u = persist.unwrap_or_else(|| self.rng.uuid());
        let key = (table, u);
        self.txn_state().inserted.insert(key, persist.is_some());
        self.txn_touch(key);
        self.index_view_add(table, u);
        Ok(u)
    }

    pub fn txn_partial(&mut self, table: usize, uuid: Uuid, column: usize, op: PartialOp) {
        if !self.valid(table, column) {
            return;
        }
        self.txn_begin();
        let key = (table, uuid);
        self.txn_touch(key);
        self.txn_state()
            .partial
            .entry(key)
            .or_default()
            .push((column, op));
    }

    pub fn txn_increment(&mut self, table: usize, uuid: Uuid, column: usize) {
        if !self.valid(table, column) {
            return;
        }
        self.txn_state().increment = Some((table, uuid, column));
    }

    pub fn txn_add_comment(&mut self, comment: &str) {
        self.txn_state().comments.push(comment.to_string());
    }

    pub fn txn_set_dry_run(&mut self) {
        self.txn_state().dry_run = true;
    }

    /// Drops the open transaction (local edits are rolled back).
    pub fn txn_abort(&mut self) {
        self.txn_disassemble();
    }

    fn txn_disassemble(&mut self) -> TxnBuildStats {
        let Some(order) = self.txn.as_ref().map(|x| x.order.clone()) else {
            return TxnBuildStats::default();
        };
        // Rolling back re-indexes every touched row (C behaviour): out
        // with the transaction's view, back in with the committed data.
        let mut ops = 0;
        for (t, u) in &order {
            ops += self.index_view_remove(*t, *u);
        }
        let Some(x) = self.txn.take() else {
            return TxnBuildStats::default();
        };
        let mut stats = x.stats;
        for (t, u) in &order {
            ops += self.index_view_add(*t, *u);
        }
        stats.reindex_ops += ops;
        stats
    }

    /// Builds the `transact` request for the open transaction, then rolls
    /// the local edits back (the replica changes when the server's update
    /// arrives). Returns [`Commit::Unchanged`] when nothing really changes.
    pub fn txn_commit(&mut self) -> Commit {
        if self.txn.is_none() {
            return Commit::Unchanged;
        }
        if self.lock.is_some() && !self.has_lock {
            self.txn_disassemble();
            return Commit::NotLocked;
        }
        let Some(x) = self.txn.as_ref() else {
            return Commit::Unchanged;
        };
        let meta = self.meta.clone();
        let mut ops: Vec<Json> = vec![Json::from(meta.name.as_str())];
        let mut any_updates = false;
        let inserted_named: HashSet<Uuid> = x
            .inserted
            .iter()
            .filter(|(_, persist)| !**persist)
            .map(|((_, u), _)| *u)
            .collect();
        // 1. Prerequisites.
        for key in &x.order {
            let Some(cols) = x.prereqs.get(key) else {
                continue;
            };
            let (t, u) = *key;
            let tm = &meta.tables[t];
            let Some(r) = self.tables[t].rows.get(&u) else {
                continue;
            };
            let mut row = Object::new();
            for &c in cols {
                row.insert(tm.columns[c].name.clone(), r.data[c].to_json());
            }
            let mut o = Object::new();
            o.insert("op", Json::from("wait"));
            o.insert("table", Json::from(tm.name.as_str()));
            o.insert("timeout", Json::Integer(0));
            o.insert("where", uuid_where(u));
            o.insert("until", Json::from("=="));
            o.insert(
                "columns",
                Json::Array(
                    cols.iter()
                        .map(|&c| Json::from(tm.columns[c].name.as_str()))
                        .collect(),
                ),
            );
            o.insert("rows", Json::Array(vec![Json::Object(row)]));
            ops.push(Json::Object(o));
        }
        // 2. Singleton tables going from 0 to 1 row.
        for (ti, tm) in meta.tables.iter().enumerate() {
            if tm.max_rows == Some(1)
                && self.tables[ti].rows.is_empty()
                && x.inserted.keys().any(|(t, _)| *t == ti)
            {
                let mut o = Object::new();
                o.insert("op", Json::from("wait"));
                o.insert("table", Json::from(tm.name.as_str()));
                o.insert("where", Json::Array(vec![]));
                o.insert("timeout", Json::Integer(0));
                o.insert("until", Json::from("=="));
                o.insert("rows", Json::Array(vec![]));
                ops.push(Json::Object(o));
            }
        }
        // 3. Row operations.
        let mut insert_ops = Vec::new();
        for key in &x.order {
            let (t, u) = *key;
            let tm = &meta.tables[t];
            if x.deleted.contains(key) {
                if tm.is_root {
                    let mut o = Object::new();
                    o.insert("op", Json::from("delete"));
                    o.insert("table", Json::from(tm.name.as_str()));
                    o.insert("where", uuid_where(u));
                    ops.push(Json::Object(o));
                    any_updates = true;
                }
                continue;
            }
            if let Some(&persist) = x.inserted.get(key) {
                let mut row = Object::new();
                if let Some(w) = x.written.get(key) {
                    for (&c, d) in w {
                        if !d.is_default(&tm.columns[c].ty) {
                            let mut j = d.to_json();
                            substitute_named(&mut j, &inserted_named);
                            row.insert(tm.columns[c].name.clone(), j);
                        }
                    }
                }
                let mut o = Object::new();
                o.insert("op", Json::from("insert"));
                o.insert("table", Json::from(tm.name.as_str()));
                if persist {
                    o.insert("uuid", Json::String(u.to_string()));
                } else {
                    o.insert("uuid-name", Json::String(named_for(u)));
                }
                o.insert("row", Json::Object(row));
                insert_ops.push((ops.len() - 1, u));
                ops.push(Json::Object(o));
                any_updates = true;
            } else if let Some(w) = x.written.get(key) {
                let committed = self.tables[t].rows.get(&u);
                let mut row = Object::new();
                for (&c, d) in w {
                    if committed.map(|r| r.data[c] != *d).unwrap_or(true) {
                        any_updates = true;
                    }
                    let mut j = d.to_json();
                    substitute_named(&mut j, &inserted_named);
                    row.insert(tm.columns[c].name.clone(), j);
                }
                if !row.is_empty() {
                    let mut o = Object::new();
                    o.insert("op", Json::from("update"));
                    o.insert("table", Json::from(tm.name.as_str()));
                    o.insert("where", uuid_where(u));
                    o.insert("row", Json::Object(row));
                    ops.push(Json::Object(o));
                }
            }
            if let Some(parts) = x.partial.get(key) {
                let committed = self.tables[t].rows.get(&u);
                let mut muts = Vec::new();
                for (c, p) in parts {
                    let name = Json::from(tm.columns[*c].name.as_str());
                    let cur = committed.map(|r| &r.data[*c]);
                    // References to rows inserted in this transaction
                    // become named UUIDs here too.
                    let one = |a: &Atom| {
                        let mut j =
                            Json::Array(vec![Json::from("set"), Json::Array(vec![a.to_json()])]);
                        substitute_named(&mut j, &inserted_named);
                        j
                    };
                    let pair = |k: &Atom, v: &Atom| {
                        let mut j = Json::Array(vec![
                            Json::from("map"),
                            Json::Array(vec![Json::Array(vec![k.to_json(), v.to_json()])]),
                        ]);
                        substitute_named(&mut j, &inserted_named);
                        j
                    };
                    match p {
                        PartialOp::MapSet(k, v) => {
                            let old = cur.and_then(|d| d.as_map()).and_then(|m| m.get(k));
                            if old == Some(v) {
                                continue; // same value: dropped
                            }
                            if old.is_some() {
                                muts.push(Json::Array(vec![
                                    name.clone(),
                                    Json::from("delete"),
                                    one(k),
                                ]));
                            }
                            muts.push(Json::Array(vec![name, Json::from("insert"), pair(k, v)]));
                        }
                        PartialOp::MapDelete(k) => {
                            if cur.map(|d| d.contains_key(k)).unwrap_or(false) {
                                muts.push(Json::Array(vec![name, Json::from("delete"), one(k)]));
                            }
                        }
                        PartialOp::SetInsert(a) => {
                            muts.push(Json::Array(vec![name, Json::from("insert"), one(a)]));
                        }
                        PartialOp::SetDelete(a) => {
                            if cur.map(|d| d.contains_key(a)).unwrap_or(false) {
                                muts.push(Json::Array(vec![name, Json::from("delete"), one(a)]));
                            }
                        }
                    }
                }
                if !muts.is_empty() {
                    let mut o = Object::new();
                    o.insert("op", Json::from("mutate"));
                    o.insert("table", Json::from(tm.name.as_str()));
                    o.insert("where", uuid_where(u));
                    o.insert("mutations", Json::Array(muts));
                    ops.push(Json::Object(o));
                    any_updates = true;
                }
            }
        }
        // 4. Increment.
        let mut increment_op = None;
        if let Some((t, u, c)) = x.increment {
            let tm = &meta.tables[t];
            let cname = tm.columns[c].name.clone();
            let mut o = Object::new();
            o.insert("op", Json::from("mutate"));
            o.insert("table", Json::from(tm.name.as_str()));
            o.insert("where", uuid_where(u));
            o.insert(
                "mutations",
                Json::Array(vec![Json::Array(vec![
                    Json::from(cname.as_str()),
                    Json::from("+="),
                    Json::Integer(1),
                ])]),
            );
            ops.push(Json::Object(o));
            let mut s = Object::new();
            s.insert("op", Json::from("select"));
            s.insert("table", Json::from(tm.name.as_str()));
            s.insert("where", uuid_where(u));
            s.insert("columns", Json::Array(vec![Json::from(cname.as_str())]));
            increment_op = Some((ops.len() - 1, cname));
            ops.push(Json::Object(s));
            any_updates = true;
        }
        // 5. Comment, dry run, lock.
        if !x.comments.is_empty() {
            let mut o = Object::new();
            o.insert("op", Json::from("comment"));
            o.insert("comment", Json::String(x.comments.join("\n")));
            ops.push(Json::Object(o));
        }
        let dry_run = x.dry_run;
        if dry_run {
            let mut o = Object::new();
            o.insert("op", Json::from("abort"));
            ops.push(Json::Object(o));
        }
        if let Some(l) = &self.lock {
            let mut o = Object::new();
            o.insert("op", Json::from("assert"));
            o.insert("lock", Json::from(l.as_str()));
            ops.push(Json::Object(o));
        }
        let stats = self.txn_disassemble();
        if !any_updates {
            return Commit::Unchanged;
        }
        let (id, msg) = self.request("transact", ops.split_off(0));
        self.pending_txns.insert(
            id_key(&id),
            PendingTxn {
                insert_ops,
                increment_op,
                dry_run,
            },
        );
        Commit::Sent {
            id,
            request: msg,
            stats,
        }
    }
}
