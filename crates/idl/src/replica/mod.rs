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

use crate::index::Index;
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::Json;
use ovsdb::uuid::Uuid;
use ovsdb_server::cond::Condition;
use ovsdb_server::meta::DbMeta;
use ovsdb_server::rng::SplitMix64;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

mod config;
mod handshake;
mod protocol;
mod read;
mod tracking;
mod transaction;
mod update;
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
}

/// What the replica modules' unit tests share: a small schema, a replica
/// of it, and fixed row UUIDs so that expected JSON can be written out.
#[cfg(test)]
pub(super) mod testkit {
    use super::Idl;
    use ovsdb::datum::Datum;
    use ovsdb::json::{parse, Json};
    use ovsdb::uuid::Uuid;
    use ovsdb_server::meta::DbMeta;
    use std::sync::Arc;

    /// `P` (by name: `name`, `q` a strong reference to `Q`, `tags` a
    /// string set, `v` an integer; columns 0..3 in that order) and `Q`
    /// (`x`, an integer).
    pub(crate) const SCHEMA: &str = r#"{"name":"d","version":"1.0.0","tables":{
     "P":{"isRoot":true,"columns":{
       "name":{"type":"string"},
       "v":{"type":"integer"},
       "tags":{"type":{"key":"string","min":0,"max":"unlimited"}},
       "q":{"type":{"key":{"type":"uuid","refTable":"Q"},"min":0,"max":1}}}},
     "Q":{"isRoot":true,"columns":{"x":{"type":"integer"}}}}}"#;

    pub(crate) const P: usize = 0;
    pub(crate) const Q: usize = 1;
    pub(crate) const NAME: usize = 0;
    pub(crate) const V: usize = 3;
    pub(crate) const TAGS: usize = 2;
    pub(crate) const U1: &str = "00000000-0000-0000-0000-000000000001";
    pub(crate) const U2: &str = "00000000-0000-0000-0000-000000000002";
    pub(crate) const U3: &str = "00000000-0000-0000-0000-000000000003";

    pub(crate) fn uuid(s: &str) -> Uuid {
        Uuid::parse(s).unwrap()
    }

    pub(crate) fn json(text: &str) -> Json {
        parse(text.as_bytes()).unwrap()
    }

    /// A replica monitoring every column.
    pub(crate) fn idl() -> Idl {
        Idl::new(Arc::new(DbMeta::from_text(SCHEMA).unwrap()), true)
    }

    /// Applies `<table-updates2>` given as text.
    pub(crate) fn update2(idl: &mut Idl, tu: &str) -> bool {
        idl.apply_table_updates(2, &json(tu), false).unwrap()
    }

    pub(crate) fn shown(d: &Datum) -> String {
        d.to_json().to_string_compact()
    }
}
