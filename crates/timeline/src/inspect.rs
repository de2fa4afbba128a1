//! Details of one entry for the inspector: what it changed, table by table,
//! row by row, column by column, with the bytes each value takes.

use ovsdb::json::Json;
use ovsdb_log::checkpoint::Checkpoints;
use ovsdb_log::record::{Record, TxnRecord};
use ovsdb_log::replay::RowsAt;
use ovsdb_log::replay_pass::ReplayPass;
use ovsdb_log::{
    Db, Event, Format, Framer, LogScan, RawRecord, RecordBody, ScanOptions, Upto, Verdict,
};
use std::collections::HashSet;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct InspectedColumn {
    pub column: String,
    /// The value as written in the file (a full value, or a diff when the
    /// record is in diff mode), as compact JSON text.
    pub stored: String,
    /// Bytes of `"column":value` as stored.
    pub stored_bytes: u64,
    /// The same column written with full values / as a diff, with its
    /// bytes; `None` when the state before the entry could not be replayed.
    pub full: Option<String>,
    pub full_bytes: Option<u64>,
    pub diff: Option<String>,
    pub diff_bytes: Option<u64>,
}

#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct InspectedRow {
    pub uuid: String,
    /// `"insert/modify"` (row object) or `"delete"` (null).
    pub op: String,
    pub columns: Vec<InspectedColumn>,
}

#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct TableChange {
    pub table: String,
    pub rows: Vec<InspectedRow>,
}

/// What the inspector shows for one record.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EntryDetail {
    pub record: u64,
    pub offset: u64,
    /// `entry`, `txn`, `term`, ...
    pub kind: String,
    pub term: Option<u64>,
    pub index: Option<u64>,
    pub eid: Option<String>,
    pub comment: Option<String>,
    pub date_ms: Option<i64>,
    /// `_is_diff` is true: modified columns hold diffs, not full values.
    pub diff_mode: bool,
    /// The entry carries a new schema (conversion).
    pub schema_change: bool,
    pub tables: Vec<TableChange>,
    pub record_bytes: u64,
    /// Set when the record could not be read.
    pub error: Option<String>,
}

impl InspectedRow {
    /// Bytes of the row's columns as stored (`"column":value` each).
    pub fn stored_bytes(&self) -> u64 {
        self.columns.iter().map(|c| c.stored_bytes).sum()
    }
    pub fn is_delete(&self) -> bool {
        self.op == "delete"
    }
}

impl TableChange {
    /// Bytes of the table's changed columns as stored.
    pub fn stored_bytes(&self) -> u64 {
        self.rows.iter().map(InspectedRow::stored_bytes).sum()
    }
    /// Rows deleted by the entry (the rest are inserted or modified).
    pub fn deletes(&self) -> usize {
        self.rows.iter().filter(|r| r.is_delete()).count()
    }
}

impl EntryDetail {
    /// Rows the entry touches, over all tables.
    pub fn row_count(&self) -> usize {
        self.tables.iter().map(|t| t.rows.len()).sum()
    }
}

/// Where to fold a long value for display: the byte offset of the end of
/// its first `keep` characters when it has more than `limit` characters,
/// `None` when it is short enough to show whole.
pub fn fold_point(text: &str, limit: usize, keep: usize) -> Option<usize> {
    let keep = keep.min(limit);
    let mut chars = text.char_indices();
    let cut = chars.nth(keep).map(|(i, _)| i)?;
    // More than `limit` characters in all?
    text[cut..].chars().nth(limit - keep).map(|_| cut)
}

fn member_bytes(name: &str, value_text: &str) -> u64 {
    (ovsdb::json::string_serialized_len(name) + 1 + value_text.len()) as u64
}

/// Looks up `table/row/column` in a rewritten txn object.
fn column_of<'j>(txn: &'j Json, table: &str, row: &str, column: &str) -> Option<&'j Json> {
    txn.get(table)?.get(row)?.get(column)
}

fn txn_tables(t: &TxnRecord) -> Vec<TableChange> {
    t.tables
        .iter()
        .map(|(table, rows)| TableChange {
            table: table.clone(),
            rows: rows
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(uuid, row)| InspectedRow {
                            uuid: uuid.to_string(),
                            op: if row.is_null() {
                                "delete".to_string()
                            } else {
                                "insert/modify".to_string()
                            },
                            columns: row
                                .as_object()
                                .map(|cols| {
                                    cols.iter()
                                        .map(|(c, v)| {
                                            let text = v.to_string_compact();
                                            InspectedColumn {
                                                column: c.to_string(),
                                                stored_bytes: member_bytes(c, &text),
                                                stored: text,
                                                full: None,
                                                full_bytes: None,
                                                diff: None,
                                                diff_bytes: None,
                                            }
                                        })
                                        .collect()
                                })
                                .unwrap_or_default(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// Decodes record number `record` that starts at byte `offset` of `bytes`
/// (as listed in a lane's entries). Never panics on bad input: problems are
/// reported in `error`.
pub fn inspect_record(
    bytes: &[u8],
    format_clustered: bool,
    record: u64,
    offset: u64,
) -> EntryDetail {
    let mut d = EntryDetail {
        record,
        offset,
        ..EntryDetail::default()
    };
    let Some(tail) = usize::try_from(offset).ok().and_then(|o| bytes.get(o..)) else {
        d.error = Some(format!("offset {offset} is outside the file"));
        return d;
    };
    let mut framer = Framer::new(tail);
    let mut raw = match framer.next() {
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            d.error = Some(e.to_string());
            return d;
        }
        None => {
            d.error = Some("no record there".to_string());
            return d;
        }
    };
    raw.index = record as usize;
    inspect_raw(&raw, format_clustered, offset, &mut |before, _| {
        ovsdb_log::replay(bytes, ovsdb_log::Upto::Index(before))
            .db
            .map(RowsAt::whole)
    })
}

/// [`inspect_record`] of a record already framed; `db_before(n, txn)`
/// gives the database just before it (after `n` log indexes, or `n` txn
/// records), at least the rows `txn` writes.
fn inspect_raw(
    raw: &RawRecord<'_>,
    format_clustered: bool,
    offset: u64,
    db_before: &mut dyn FnMut(u64, &Json) -> Option<RowsAt>,
) -> EntryDetail {
    let record = raw.index as u64;
    let mut d = EntryDetail {
        record,
        offset,
        ..EntryDetail::default()
    };
    d.record_bytes = raw.total_len();
    let format = if format_clustered {
        Format::Clustered
    } else {
        Format::Standalone
    };
    let rec = match raw.decode(format) {
        Ok(r) => r,
        Err(e) => {
            d.error = Some(e.kind.to_string());
            return d;
        }
    };
    d.kind = rec.kind_name().to_string();
    // The txn object as stored, and how many txns/indexes come before it.
    let mut txn_json: Option<Json> = None;
    let mut before: Option<u64> = None;
    match rec {
        Record::Txn(t) => {
            d.comment = t.comment_str().map(str::to_string);
            d.date_ms = t.date_ms();
            d.diff_mode = t.diff_mode();
            d.tables = txn_tables(&t);
            txn_json = raw.json().ok();
            before = record.checked_sub(1);
        }
        Record::Raft(r) => {
            d.term = r.term();
            if let RecordBody::Entry(e) = &r.body {
                d.index = Some(e.index);
                d.eid = e.eid.map(|x| x.to_string());
                if let Some((schema, tj)) = e.data.as_ref().and_then(ovsdb_log::split_data) {
                    d.schema_change = !schema.is_null();
                    let tj = Some(tj).filter(|t| !t.is_null());
                    if let Some(t) = tj.and_then(|t| TxnRecord::from_json(t).ok()) {
                        d.comment = t.comment_str().map(str::to_string);
                        d.date_ms = t.date_ms();
                        d.diff_mode = t.diff_mode();
                        d.tables = txn_tables(&t);
                        if !d.schema_change {
                            txn_json = tj.cloned();
                            before = e.index.checked_sub(1);
                        }
                    }
                }
            }
            if d.comment.is_none() {
                d.comment = r.comment.clone();
            }
        }
        Record::Header(_) | Record::Schema(_) => {}
    }
    if let (Some(txn), Some(before)) = (txn_json, before) {
        if let Some(db) = db_before(before, &txn) {
            add_modes(&db, &txn, &mut d);
        }
    }
    d
}

/// Inspects one record while its file streams by from the start, or from
/// a checkpoint ([`InspectStream::resume`]). What the inspector needs of
/// the file is the records before the one inspected, read once, and the
/// state before it of the rows it writes; never the whole file.
///
/// From the start of the file (or a checkpoint far behind) the walk
/// replays the database on the way and adds checkpoints to the store.
/// From a checkpoint at most [`ROWS_SPAN`] bytes behind, it keeps the
/// transactions in between and, once it reads the record, follows only
/// the rows that record writes through them ([`RowsAt`]): a jump then
/// costs reading those bytes, not rebuilding every row they touch.
/// Push chunks from [`InspectStream::offset`] on until
/// [`InspectStream::push`] says it has what it needs, then
/// [`InspectStream::finish`].
pub struct InspectStream {
    scan: LogScan,
    find: Finder,
    from: u64,
}

/// How far behind the record a checkpoint may be for the walk to follow
/// only the record's rows (the transactions in between are kept until the
/// record is read, so this bounds that memory).
pub const ROWS_SPAN: u64 = 32 << 20;

/// How the walk gets the state before the record.
enum Walk {
    /// Replays every record before it (adding checkpoints on the way).
    Replay(Box<ReplayPass>),
    /// Keeps the transactions between a checkpoint and the record.
    Rows(Box<Pending>),
    /// The record was read ahead: follows its rows from a checkpoint as
    /// the walk goes, parsing only the transactions that name them.
    Follow(Box<Follow>, Box<Checkpoints>),
}

/// [`Walk::Follow`]'s state.
struct Follow {
    rows: RowsAt,
    /// Txn records applied before the checkpoint, and seen since
    /// (standalone files).
    applied: u64,
    seen: u64,
    superseded: HashSet<usize>,
    /// The SHA-1 of the record read ahead (the one read at the end must be
    /// the same).
    sha1: [u8; 20],
    /// A transaction failed to apply: the rows stay as they were before
    /// it, as a full replay leaves the database.
    failed: bool,
    /// A conversion came in between: the rows' state is not known.
    lost: bool,
}

impl Follow {
    /// A record of the walk, not decoded yet ([`ScanOptions::frames_only`]):
    /// most name none of the rows and carry no schema, and are passed by
    /// without parsing.
    fn on_frame(&mut self, raw: &RawRecord<'_>, clustered: bool) {
        // The walk trusts the framing's hashes (the load verified them);
        // a record it uses is verified, as a full replay would.
        let verified = || ovsdb_log::framing::sha1(raw.body) == raw.sha1;
        if !clustered {
            self.seen += 1;
            if self.rows.mentions(raw.body) && verified() {
                self.on_data(raw.body, false);
            }
            return;
        }
        if self.superseded.contains(&raw.index)
            || self.failed
            || self.lost
            || !(self.rows.mentions(raw.body)
                || memchr::memmem::find(raw.body, b"\"tables\"").is_some())
            || !verified()
        {
            return;
        }
        let Ok((Record::Raft(r), Some((a, b)))) = raw.decode_light_payload(Format::Clustered)
        else {
            return;
        };
        if let (RecordBody::Entry(_), Some(d)) = (&r.body, raw.body.get(a..b)) {
            self.on_data(d, true);
        }
    }

    fn on_data(&mut self, d: &[u8], clustered: bool) {
        if self.failed || self.lost {
            return;
        }
        if clustered && RowsAt::carries_schema(d) {
            self.lost = true;
            return;
        }
        if !self.rows.mentions(d) {
            return;
        }
        let ok = if clustered {
            self.rows.apply_data_bytes(d).map(|r| r.is_ok())
        } else {
            Some(self.rows.apply_txn_bytes(d).is_ok())
        };
        match ok {
            Some(true) => {}
            Some(false) => self.failed = true,
            None => self.lost = true,
        }
    }

    /// The rows before the record `raw` (None when not known).
    fn rows_before(self, raw: &RawRecord<'_>, clustered: bool, before: u64) -> Option<RowsAt> {
        if self.lost || raw.sha1 != self.sha1 {
            return None;
        }
        if !clustered && (self.failed || self.applied + self.seen != before) {
            return None;
        }
        Some(self.rows)
    }
}

/// How many bytes the record whose first line starts `head` takes (its
/// line and body), for a caller that reads it ahead
/// ([`InspectStream::resume_knowing`]); None when `head` does not hold a
/// valid header line.
pub fn record_len(head: &[u8]) -> Option<u64> {
    let end = memchr_lf(head)?;
    let h = ovsdb_log::framing::parse_header_line(&head[..=end]).ok()?;
    Some(end as u64 + 1 + h.length)
}

fn memchr_lf(b: &[u8]) -> Option<usize> {
    b.iter().take(128).position(|&c| c == b'\n')
}

/// The txn object a record carries and the number of log indexes (or txn
/// records) before it; None for a record that carries none, or a schema.
fn record_txn(raw: &RawRecord<'_>, clustered: bool) -> Option<(Json, u64)> {
    if !clustered {
        let before = (raw.index as u64).checked_sub(1)?;
        return Some((raw.json().ok()?, before));
    }
    let Ok(Record::Raft(r)) = raw.decode(Format::Clustered) else {
        return None;
    };
    let RecordBody::Entry(e) = r.body else {
        return None;
    };
    let before = e.index.checked_sub(1)?;
    let (schema, txn) = e.data.as_ref().and_then(ovsdb_log::split_data)?;
    (schema.is_null() && txn.as_object().is_some()).then(|| (txn.clone(), before))
}

/// The transactions between a checkpoint and the record, as bytes: Raft
/// `data` values, or a standalone file's txn record bodies.
struct Pending {
    base: Db,
    /// Txn records applied before the checkpoint (standalone files).
    applied: u64,
    superseded: HashSet<usize>,
    txns: Vec<Vec<u8>>,
    /// The store the walk resumed from, given back as it was.
    store: Box<Checkpoints>,
}

impl Pending {
    /// The rows `txn` writes, as the transactions kept leave them (or,
    /// after a conversion among them, the whole database). Mirrors the
    /// full replay: a transaction that fails stops it there, and a
    /// standalone file's state is known only when every one applied.
    fn rows_before(&self, clustered: bool, before: u64, txn: &Json) -> Option<RowsAt> {
        if !clustered && self.applied + self.txns.len() as u64 != before {
            return None;
        }
        let follow = |mut rows: RowsAt| -> Option<Option<RowsAt>> {
            for t in &self.txns {
                let r = if clustered {
                    rows.apply_data_bytes(t)?
                } else {
                    rows.apply_txn_bytes(t)
                };
                if r.is_err() {
                    return Some(clustered.then_some(rows));
                }
            }
            Some(Some(rows))
        };
        match follow(RowsAt::for_txn(self.base.clone(), txn)) {
            Some(rows) => rows,
            None => follow(RowsAt::whole(self.base.clone())).flatten(),
        }
    }
}

/// What the walk looks for, and what it found.
struct Finder {
    target: usize,
    offset: u64,
    clustered: bool,
    walk: Option<Walk>,
    detail: Option<EntryDetail>,
    checkpoints: Option<Box<Checkpoints>>,
}

impl Finder {
    fn on_event(&mut self, ev: &Event<'_>) -> Verdict {
        if self.detail.is_some() {
            return Verdict::Keep;
        }
        let Some(raw) = ev.raw() else {
            return Verdict::Keep;
        };
        let (target, offset) = (self.target, self.offset);
        if raw.index < target {
            match (self.walk.as_mut(), ev) {
                (Some(Walk::Replay(p)), _) => p.on_event(ev),
                (
                    Some(Walk::Rows(p)),
                    Event::Entry {
                        raw, data: Some(d), ..
                    },
                ) if !p.superseded.contains(&raw.index) => p.txns.push(d.to_vec()),
                (Some(Walk::Rows(p)), Event::Txn { raw }) => p.txns.push(raw.body.to_vec()),
                (Some(Walk::Follow(f, _)), Event::Frame { raw }) => f.on_frame(raw, self.clustered),
                _ => {}
            }
            return Verdict::Keep;
        }
        if raw.index > target || raw.offset != offset {
            self.detail = Some(EntryDetail {
                record: target as u64,
                offset,
                error: Some(format!("no record {target} at byte {offset}")),
                ..EntryDetail::default()
            });
            return Verdict::Keep;
        }
        let clustered = self.clustered;
        match self.walk.take() {
            Some(Walk::Replay(p)) => {
                let mut replayed = Some(p.finish(None));
                self.checkpoints = replayed.as_mut().and_then(|r| r.checkpoints.take());
                self.detail = Some(inspect_raw(raw, clustered, offset, &mut |before, _| {
                    let r = replayed.take()?;
                    // The replay stopped at this record; for a standalone
                    // file it must have applied every txn before it.
                    (clustered || r.applied == before)
                        .then_some(r.db)
                        .flatten()
                        .map(RowsAt::whole)
                }));
            }
            Some(Walk::Rows(p)) => {
                let p = *p;
                self.detail = Some(inspect_raw(raw, clustered, offset, &mut |before, txn| {
                    p.rows_before(clustered, before, txn)
                }));
                self.checkpoints = Some(p.store);
            }
            Some(Walk::Follow(f, store)) => {
                let mut f = Some(*f);
                self.detail = Some(inspect_raw(raw, clustered, offset, &mut |before, _| {
                    f.take()?.rows_before(raw, clustered, before)
                }));
                self.checkpoints = Some(store);
            }
            None => {}
        }
        Verdict::Keep
    }
}

impl InspectStream {
    /// `superseded`: the record numbers of entries a later entry replaces
    /// (the lane's `superseded` entries); they are not replayed.
    pub fn new(
        clustered: bool,
        record: u64,
        offset: u64,
        superseded: impl IntoIterator<Item = usize>,
    ) -> InspectStream {
        InspectStream::resume(clustered, record, offset, superseded, None)
    }

    /// [`InspectStream::new`] that starts from the checkpoints in `store`
    /// (a new [`Checkpoints::new`], or the one the load or an earlier
    /// inspection of the same file gave; None keeps none): it resumes at
    /// the store's nearest checkpoint before the record, and
    /// [`InspectStream::finish_keeping`] gives the store back, with the
    /// checkpoints of this walk added when it replayed. The chunks pushed
    /// start at [`InspectStream::offset`].
    pub fn resume(
        clustered: bool,
        record: u64,
        offset: u64,
        superseded: impl IntoIterator<Item = usize>,
        store: Option<Box<Checkpoints>>,
    ) -> InspectStream {
        let target = record as usize;
        let superseded: HashSet<usize> = superseded.into_iter().collect();
        let store = match store {
            Some(store) => {
                let cp = store.before_record(target);
                if let Some(base) = cp
                    .db()
                    .filter(|_| offset.saturating_sub(cp.at.offset) <= ROWS_SPAN)
                {
                    let (at, base, applied) = (cp.at, base.clone(), cp.applied);
                    return InspectStream {
                        scan: LogScan::resume(ScanOptions::default(), &at),
                        find: Finder {
                            target,
                            offset,
                            clustered,
                            walk: Some(Walk::Rows(Box::new(Pending {
                                base,
                                applied,
                                superseded,
                                txns: Vec::new(),
                                store,
                            }))),
                            detail: None,
                            checkpoints: None,
                        },
                        from: at.offset,
                    };
                }
                Some(store)
            }
            None => None,
        };
        let mut pass = if clustered {
            ReplayPass::new(superseded, 0, 0, target, Upto::All)
        } else {
            ReplayPass::standalone(Upto::All)
        };
        let opts = ScanOptions {
            txn: true,
            ..ScanOptions::default()
        };
        let (scan, from) = match store {
            Some(store) => {
                let at = pass.resume_with(store, target);
                (LogScan::resume(opts, &at), at.offset)
            }
            None => (LogScan::new(opts), 0),
        };
        InspectStream {
            scan,
            find: Finder {
                target,
                offset,
                clustered,
                walk: Some(Walk::Replay(Box::new(pass))),
                detail: None,
                checkpoints: None,
            },
            from,
        }
    }

    /// [`InspectStream::resume`] for a caller that can read the record
    /// first: `head`, the file's bytes from `offset` on (the whole record
    /// at least; [`record_len`] says how many from its first line). With
    /// the rows it writes known before the walk starts, the walk follows
    /// them from the store's nearest checkpoint with a database, however
    /// far (it keeps nothing but them, and parses only the transactions
    /// that name them). Otherwise (no such checkpoint, or `head` is not a
    /// whole record carrying a transaction) it is [`InspectStream::resume`].
    pub fn resume_knowing(
        clustered: bool,
        record: u64,
        offset: u64,
        superseded: impl IntoIterator<Item = usize>,
        store: Option<Box<Checkpoints>>,
        head: &[u8],
    ) -> InspectStream {
        let target = record as usize;
        let ahead = Framer::new(head)
            .next()
            .and_then(Result::ok)
            .and_then(|mut raw| {
                raw.index = target;
                let (txn, _) = record_txn(&raw, clustered)?;
                Some((txn, raw.sha1))
            });
        let store = match (ahead, store) {
            (Some((txn, sha1)), Some(store)) => {
                let cp = store.before_record(target);
                if let Some(base) = cp.db() {
                    let follow = Follow {
                        rows: RowsAt::for_txn(base.clone(), &txn),
                        applied: cp.applied,
                        seen: 0,
                        superseded: superseded.into_iter().collect(),
                        sha1,
                        failed: false,
                        lost: false,
                    };
                    let at = cp.at;
                    let opts = ScanOptions {
                        // Only the records the walk uses are hashed
                        // (`Follow::on_frame`).
                        trust_sha1: true,
                        frames_only: true,
                        ..ScanOptions::default()
                    };
                    return InspectStream {
                        scan: LogScan::resume(opts, &at),
                        find: Finder {
                            target,
                            offset,
                            clustered,
                            walk: Some(Walk::Follow(Box::new(follow), store)),
                            detail: None,
                            checkpoints: None,
                        },
                        from: at.offset,
                    };
                }
                Some(store)
            }
            (_, store) => store,
        };
        InspectStream::resume(clustered, record, offset, superseded, store)
    }

    /// The walk follows only the record's rows from a checkpoint (rather
    /// than replaying the database).
    pub fn follows_rows(&self) -> bool {
        matches!(self.find.walk, Some(Walk::Rows(_) | Walk::Follow(..)))
    }

    /// The byte offset of the file the chunks pushed must start at.
    pub fn offset(&self) -> u64 {
        self.from
    }

    /// Takes the next chunk; true once the record was read (push no more).
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        let find = &mut self.find;
        if find.detail.is_none() {
            self.scan.push(chunk, &mut |ev| find.on_event(&ev));
        }
        find.detail.is_some()
    }

    /// The record's detail (an error when the file ended before it).
    pub fn finish(self) -> EntryDetail {
        self.finish_keeping().0
    }

    /// [`InspectStream::finish`], and the checkpoints of a stream made by
    /// [`InspectStream::resume`] (None when the file ended before the
    /// record after a replay: the walk's checkpoints are then dropped
    /// with it).
    pub fn finish_keeping(mut self) -> (EntryDetail, Option<Box<Checkpoints>>) {
        let find = &mut self.find;
        if find.detail.is_none() {
            self.scan.finish(&mut |ev| find.on_event(&ev));
        }
        let (target, offset) = (self.find.target, self.find.offset);
        let detail = self.find.detail.take().unwrap_or_else(|| EntryDetail {
            record: target as u64,
            offset,
            error: Some(format!(
                "the file ends before record {target} at byte {offset}"
            )),
            ..EntryDetail::default()
        });
        let find = &mut self.find;
        let store = find.checkpoints.take().or_else(|| match find.walk.take() {
            Some(Walk::Replay(p)) => p.finish(None).checkpoints,
            Some(Walk::Rows(p)) => Some(p.store),
            Some(Walk::Follow(_, store)) => Some(store),
            None => None,
        });
        (detail, store)
    }
}

/// Rewrites the entry for both storage modes against the database as it was
/// just before it (replayed by the core) and records each column's value
/// and bytes in each mode.
fn add_modes(db: &RowsAt, txn: &Json, d: &mut EntryDetail) {
    let full = db.transform_txn(txn, ovsdb::StorageMode::Full).ok();
    let diff = db.transform_txn(txn, ovsdb::StorageMode::Diff).ok();
    for t in d.tables.iter_mut() {
        for r in t.rows.iter_mut() {
            for c in r.columns.iter_mut() {
                if let Some(v) = full
                    .as_ref()
                    .and_then(|j| column_of(j, &t.table, &r.uuid, &c.column))
                {
                    let text = v.to_string_compact();
                    c.full_bytes = Some(member_bytes(&c.column, &text));
                    c.full = Some(text);
                }
                if let Some(v) = diff
                    .as_ref()
                    .and_then(|j| column_of(j, &t.table, &r.uuid, &c.column))
                {
                    let text = v.to_string_compact();
                    c.diff_bytes = Some(member_bytes(&c.column, &text));
                    c.diff = Some(text);
                }
            }
        }
    }
}
