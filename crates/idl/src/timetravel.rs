//! Time travel over real database logs: the IDL replica at any log index of
//! a loaded file, and the row-level changes between two indexes.
//!
//! Each transaction record of the log is turned into the monitor update a
//! client would have received for it (diff records as `update2` with column
//! diffs, full-value records as `update` v1) and applied to an [`Idl`]
//! replica monitoring every column. Reading is one walk of `ovsdb-log`'s
//! [`LogScan`] ([`TimelineBuilder`] consumes its events); a corrupt or
//! truncated record ends the timeline, and everything before it stays
//! usable.

use crate::replica::{Idl, IdlError};
use ovsdb::datum::Datum;
use ovsdb::json::{Json, Object};
use ovsdb::uuid::Uuid;
use ovsdb_log::framing::Format;
use ovsdb_log::record::TxnRecord;
use ovsdb_log::{split_data, ErrorKind, Event, LogScan, ScanOptions, Verdict};
use ovsdb_server::meta::DbMeta;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One transaction-carrying position of the timeline.
#[derive(Debug, Clone)]
pub struct Step {
    /// Log index (clustered) or txn record number (standalone).
    pub index: u64,
    pub term: u64,
    /// Record number in the file.
    pub record: usize,
    /// A new schema (database creation or conversion), if any.
    pub schema: Option<Json>,
    /// The transaction record, if any.
    pub txn: Option<Json>,
}

/// A loaded file as a sequence of steps.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub format: Format,
    /// Index of the header snapshot (clustered compacted files), else 0.
    pub snapshot_index: u64,
    snapshot: Option<(Json, Option<Json>)>,
    /// Steps in index order (superseded entries removed).
    pub steps: Vec<Step>,
    /// Highest commit index recorded (clustered), or the last step
    /// (standalone).
    pub commit_index: u64,
    /// Why reading stopped early, if it did.
    pub error: Option<String>,
}

/// How a row changed between two indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    Inserted,
    Deleted,
    Modified,
}

/// A row-level change between two indexes.
#[derive(Debug, Clone, PartialEq)]
pub struct RowDelta {
    pub table: String,
    pub uuid: Uuid,
    pub kind: ChangeKind,
    /// Columns whose value differs (all non-default columns for inserts
    /// and deletes).
    pub columns: Vec<String>,
}

impl Timeline {
    /// Reads a clustered or standalone file held in memory (a
    /// [`TimelineBuilder`] over one walk).
    pub fn load(bytes: &[u8]) -> Result<Timeline, String> {
        let mut b = TimelineBuilder::new();
        LogScan::scan_all(bytes, b.options(), &mut |ev| b.on_event(&ev));
        b.finish()
    }

    /// The database the file starts from: its schema and, for a
    /// compacted clustered file, the snapshot's data (a full-value
    /// transaction record).
    pub fn base(&self) -> Option<(&Json, Option<&Json>)> {
        self.snapshot.as_ref().map(|(s, t)| (s, t.as_ref()))
    }

    /// The last index present in the file.
    pub fn last_index(&self) -> u64 {
        self.steps
            .last()
            .map(|s| s.index)
            .unwrap_or(self.snapshot_index)
    }

    /// The last committed index (never past the end of the log).
    pub fn last_committed(&self) -> u64 {
        self.commit_index
            .min(self.last_index())
            .max(self.snapshot_index)
    }

    /// The replica after applying everything up to `index` (inclusive).
    pub fn replica_at(&self, index: u64) -> Result<Idl, IdlError> {
        let mut c = self.cursor();
        c.seek(index)?;
        c.into_replica()
    }

    /// A cursor that moves through the log incrementally (forward moves
    /// apply only the steps in between; backward moves replay from the
    /// start).
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor {
            tl: self,
            idl: None,
            next_step: 0,
            started: false,
        }
    }
    /// Row-level changes between index `a` and index `b` (a < b).
    pub fn changes_between(&self, a: u64, b: u64) -> Result<Vec<RowDelta>, IdlError> {
        let ra = self.replica_at(a)?;
        let rb = self.replica_at(b)?;
        Ok(diff_replicas(&ra, &rb))
    }
}

/// Builds a [`Timeline`] from the events of one [`LogScan`] walk, so a
/// file can be read chunk by chunk. Keeps what the timeline holds (the
/// schema and txn of every entry of the current log, parsed), never the
/// file's bytes. The first damage (a skipped span or a damaged tail) ends
/// the timeline; everything before it stays usable.
pub struct TimelineBuilder {
    tl: Timeline,
    steps: Vec<Step>,
    n_txn: u64,
    ended: bool,
}

impl Default for TimelineBuilder {
    fn default() -> Self {
        TimelineBuilder::new()
    }
}

impl TimelineBuilder {
    pub fn new() -> TimelineBuilder {
        TimelineBuilder {
            tl: Timeline {
                format: Format::Clustered,
                snapshot_index: 0,
                snapshot: None,
                steps: Vec::new(),
                commit_index: 0,
                error: None,
            },
            steps: Vec::new(),
            n_txn: 0,
            ended: false,
        }
    }

    /// The scanner options this consumer needs.
    pub fn options(&self) -> ScanOptions {
        ScanOptions::default()
    }

    /// Takes one event of the walk. An entry whose `data` does not parse
    /// is rejected (the scanner then reports it as damage).
    pub fn on_event(&mut self, ev: &Event<'_>) -> Verdict {
        if self.ended {
            return Verdict::Keep;
        }
        let tl = &mut self.tl;
        match ev {
            Event::Skipped(k) => {
                tl.error = Some(k.error.to_string());
                self.ended = true;
            }
            Event::Tail(e) => {
                tl.error = Some(e.to_string());
                self.ended = true;
            }
            Event::Header { header, .. } => {
                tl.format = Format::Clustered;
                if let Some(s) = &header.snapshot {
                    tl.snapshot_index = s.index;
                    tl.commit_index = s.index;
                    let (schema, txn) = match split_data(&s.data) {
                        Some((sc, tx)) => (sc.clone(), Some(tx.clone()).filter(|t| !t.is_null())),
                        None => (Json::Null, None),
                    };
                    tl.snapshot = Some((schema, txn));
                }
            }
            Event::Entry {
                raw, entry, data, ..
            } => {
                let parsed = match data.map(ovsdb::json::parse_value) {
                    None => None,
                    Some(Ok(j)) => Some(j),
                    // The error as a full decode of the record reports it.
                    Some(Err(m)) => {
                        return Verdict::Reject(raw.decode(Format::Clustered).err().unwrap_or_else(
                            || {
                                raw.error(ErrorKind::BadJson {
                                    message: m.to_string(),
                                })
                            },
                        ))
                    }
                };
                while self.steps.last().is_some_and(|s| s.index >= entry.index) {
                    self.steps.pop();
                }
                let (schema, txn) = match parsed.as_ref().and_then(split_data) {
                    Some((sc, tx)) => (
                        Some(sc.clone()).filter(|x| !x.is_null()),
                        Some(tx.clone()).filter(|x| !x.is_null()),
                    ),
                    None => (None, None),
                };
                self.steps.push(Step {
                    index: entry.index,
                    term: entry.term,
                    record: raw.index,
                    schema,
                    txn,
                });
            }
            Event::CommitIndex { commit_index, .. } => {
                tl.commit_index = tl.commit_index.max(*commit_index);
            }
            Event::Schema { schema, .. } => {
                tl.format = Format::Standalone;
                tl.snapshot = Some((schema.clone(), None));
            }
            Event::Txn { raw } => {
                let t = match raw.json().and_then(|j| {
                    TxnRecord::from_json(&j)
                        .map_err(|m| raw.error(ErrorKind::BadRecord { message: m }))
                }) {
                    Ok(t) => t,
                    Err(e) => return Verdict::Reject(e),
                };
                self.n_txn += 1;
                self.steps.push(Step {
                    index: self.n_txn,
                    term: 0,
                    record: raw.index,
                    schema: None,
                    txn: Some(t.to_json()),
                });
            }
            _ => {}
        }
        Verdict::Keep
    }

    /// The timeline; `Err` when no schema was read (the reason).
    pub fn finish(self) -> Result<Timeline, String> {
        let mut tl = self.tl;
        if tl.format == Format::Standalone {
            tl.commit_index = self.n_txn;
        }
        if tl.snapshot.is_none() && self.steps.iter().all(|s| s.schema.is_none()) {
            return Err(tl
                .error
                .clone()
                .unwrap_or_else(|| "no schema in file".to_string()));
        }
        tl.steps = self.steps;
        Ok(tl)
    }
}

/// A position in a [`Timeline`] with the replica at that position.
pub struct Cursor<'a> {
    tl: &'a Timeline,
    idl: Option<Idl>,
    /// Number of steps applied.
    next_step: usize,
    started: bool,
}

fn new_idl(schema: &Json) -> Result<Idl, IdlError> {
    let meta = DbMeta::from_json(schema).map_err(|e| IdlError(format!("schema: {e}")))?;
    Ok(Idl::new(Arc::new(meta), true))
}

impl<'a> Cursor<'a> {
    fn start(&mut self) -> Result<(), IdlError> {
        self.idl = None;
        self.next_step = 0;
        if let Some((schema, txn)) = &self.tl.snapshot {
            if !schema.is_null() {
                self.idl = Some(new_idl(schema)?);
            }
            if let (Some(i), Some(t)) = (self.idl.as_mut(), txn) {
                apply_record(i, t)?;
            }
        }
        self.started = true;
        Ok(())
    }

    /// The log index the replica reflects (snapshot index before any step).
    pub fn index(&self) -> u64 {
        match self.next_step {
            0 => self.tl.snapshot_index,
            n => self.tl.steps[n - 1].index,
        }
    }

    /// Moves to `index`: every step with an index ≤ `index` applied.
    pub fn seek(&mut self, index: u64) -> Result<(), IdlError> {
        if !self.started || index < self.index() {
            self.start()?;
        }
        while let Some(s) = self.tl.steps.get(self.next_step) {
            if s.index > index {
                break;
            }
            if let Some(schema) = &s.schema {
                // Creation or conversion: restart on the new schema (a
                // conversion entry without data keeps the old rows).
                let mut fresh = new_idl(schema)?;
                if s.txn.is_none() {
                    if let Some(old) = &self.idl {
                        carry_over(old, &mut fresh)?;
                    }
                }
                self.idl = Some(fresh);
            }
            if let (Some(i), Some(t)) = (self.idl.as_mut(), &s.txn) {
                apply_record(i, t)?;
            }
            self.next_step += 1;
        }
        Ok(())
    }

    /// The replica at the current position (None before any schema).
    pub fn replica(&self) -> Option<&Idl> {
        self.idl.as_ref()
    }

    pub fn into_replica(self) -> Result<Idl, IdlError> {
        self.idl
            .ok_or_else(|| IdlError("no schema before this index".into()))
    }
}

impl RowDelta {
    pub fn to_json(&self) -> Json {
        let mut o = Object::new();
        o.insert("table", Json::from(self.table.as_str()));
        o.insert("uuid", Json::String(self.uuid.to_string()));
        o.insert(
            "kind",
            Json::from(match self.kind {
                ChangeKind::Inserted => "inserted",
                ChangeKind::Deleted => "deleted",
                ChangeKind::Modified => "modified",
            }),
        );
        o.insert(
            "columns",
            Json::Array(
                self.columns
                    .iter()
                    .map(|c| Json::from(c.as_str()))
                    .collect(),
            ),
        );
        Json::Object(o)
    }
}

/// Compares two replicas of the same schema row by row.
pub fn diff_replicas(a: &Idl, b: &Idl) -> Vec<RowDelta> {
    let mut out = Vec::new();
    for (t, tm) in b.meta.tables.iter().enumerate() {
        let ta = a.meta.table(&tm.name);
        let rows_a: BTreeMap<Uuid, Vec<Datum>> = match ta {
            Some(ta) => a
                .row_uuids(ta)
                .into_iter()
                .filter_map(|u| a.committed(ta, u).map(|d| (u, d.to_vec())))
                .collect(),
            None => BTreeMap::new(),
        };
        let rows_b: BTreeMap<Uuid, Vec<Datum>> = b
            .row_uuids(t)
            .into_iter()
            .filter_map(|u| b.committed(t, u).map(|d| (u, d.to_vec())))
            .collect();
        let nondefault = |d: &[Datum]| -> Vec<String> {
            tm.columns
                .iter()
                .zip(d)
                .filter(|(c, v)| !v.is_default(&c.ty))
                .map(|(c, _)| c.name.clone())
                .collect()
        };
        for (u, db) in &rows_b {
            match rows_a.get(u) {
                None => out.push(RowDelta {
                    table: tm.name.clone(),
                    uuid: *u,
                    kind: ChangeKind::Inserted,
                    columns: nondefault(db),
                }),
                Some(da) => {
                    let cols: Vec<String> = tm
                        .columns
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| da.get(*i) != db.get(*i))
                        .map(|(_, c)| c.name.clone())
                        .collect();
                    if !cols.is_empty() {
                        out.push(RowDelta {
                            table: tm.name.clone(),
                            uuid: *u,
                            kind: ChangeKind::Modified,
                            columns: cols,
                        });
                    }
                }
            }
        }
        for (u, da) in &rows_a {
            if !rows_b.contains_key(u) {
                out.push(RowDelta {
                    table: tm.name.clone(),
                    uuid: *u,
                    kind: ChangeKind::Deleted,
                    columns: nondefault(da),
                });
            }
        }
    }
    out
}

fn carry_over(old: &Idl, fresh: &mut Idl) -> Result<(), IdlError> {
    let mut tu = Object::new();
    for (t, tm) in old.meta.tables.iter().enumerate() {
        let Some(nt) = fresh.meta.table(&tm.name) else {
            continue;
        };
        let ntm = fresh.meta.tables[nt].clone();
        let mut rows = Object::new();
        for u in old.row_uuids(t) {
            let mut row = Object::new();
            for (ci, c) in tm.columns.iter().enumerate() {
                if ntm.column(&c.name).is_some() {
                    row.insert(c.name.clone(), old.read(t, u, ci).to_json());
                }
            }
            let mut ru = Object::new();
            ru.insert("insert", Json::Object(row));
            rows.insert(u.to_string(), Json::Object(ru));
        }
        tu.insert(tm.name.clone(), Json::Object(rows));
    }
    fresh.apply_table_updates(2, &Json::Object(tu), false)?;
    Ok(())
}

/// Applies one txn record (file format) to the replica.
pub fn apply_record(idl: &mut Idl, txn: &Json) -> Result<(), IdlError> {
    let rec = TxnRecord::from_json(txn).map_err(IdlError)?;
    let diff = rec.diff_mode();
    let mut tu2 = Object::new();
    let mut tu1 = Object::new();
    for (tname, rows) in &rec.tables {
        let Some(t) = idl.table_index(tname) else {
            return Err(IdlError(format!("unknown table {tname} in log")));
        };
        let Some(rows) = rows.as_object() else {
            return Err(IdlError(format!("rows of {tname} are not an object")));
        };
        let mut r2 = Object::new();
        let mut r1 = Object::new();
        for (us, row) in rows.iter() {
            let u = Uuid::parse(us).ok_or_else(|| IdlError(format!("bad row UUID {us}")))?;
            let exists = idl.exists(t, u);
            let mut ru = Object::new();
            if row.is_null() {
                if !exists {
                    continue;
                }
                ru.insert("delete", Json::Null);
                r2.insert(us.to_string(), Json::Object(ru));
            } else if !exists {
                ru.insert("insert", row.clone());
                r2.insert(us.to_string(), Json::Object(ru));
            } else if diff {
                // Scalar columns carry the new value, composite ones a diff:
                // exactly an update2 "modify".
                ru.insert("modify", row.clone());
                r2.insert(us.to_string(), Json::Object(ru));
            } else {
                ru.insert("old", Json::Object(Object::new()));
                ru.insert("new", row.clone());
                r1.insert(us.to_string(), Json::Object(ru));
            }
        }
        if !r2.is_empty() {
            tu2.insert(tname.clone(), Json::Object(r2));
        }
        if !r1.is_empty() {
            tu1.insert(tname.clone(), Json::Object(r1));
        }
    }
    if !tu2.is_empty() {
        idl.apply_table_updates(2, &Json::Object(tu2), false)?;
    }
    if !tu1.is_empty() {
        idl.apply_table_updates(1, &Json::Object(tu1), false)?;
    }
    Ok(())
}
