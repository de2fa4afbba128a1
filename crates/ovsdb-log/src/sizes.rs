//! Storage-size accounting and log replay over whole files: each
//! transaction-carrying record's size as stored, as written with full
//! values, and as written with column diffs; the database at a log index.

use crate::error::{ErrorKind, LogError};
use crate::framing::{Format, Frame, Framer, RawRecord, Skip};
use crate::raft::RecordBody;
use crate::record::Record;
use crate::replay::{Db, SizeDelta};
use ovsdb::json::Json;
use ovsdb::DatabaseSchema;

/// Totals over a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SizeTotals {
    pub full: Option<u64>,
    pub diff: Option<u64>,
}

/// Sizes of one transaction-carrying record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntrySize {
    /// Record number in the file.
    pub record: usize,
    /// Log index (clustered) or `None` (standalone).
    pub index: Option<u64>,
    /// Header line + body, as stored.
    pub stored: u64,
    /// As it would be written with full values.
    pub full: u64,
    /// As it would be written with column diffs.
    pub diff: u64,
    /// Superseded by a later entry with the same index (never applied;
    /// counted at its stored size in every mode).
    pub superseded: bool,
}

/// Decimal digits of `n`.
fn digits(n: u64) -> u64 {
    n.checked_ilog10().map_or(1, |d| u64::from(d) + 1)
}

/// Total record size (header line + body) for a body of `body` bytes.
pub fn record_size(format: Format, body: u64) -> u64 {
    6 + format.magic().len() as u64 + 1 + digits(body) + 1 + 40 + 1 + body
}

fn resized(format: Format, raw: &RawRecord<'_>, delta: i64) -> u64 {
    let body = (raw.body.len() as i64 + delta).max(0) as u64;
    record_size(format, body)
}

/// Result of replaying a file.
#[derive(Debug, Clone)]
pub struct Replay {
    pub format: Option<Format>,
    /// The database after the last applied record (None when no schema was
    /// reached, e.g. a joining file or a damaged first record).
    pub db: Option<Db>,
    /// Last log index applied (clustered), or number of txn records applied
    /// (standalone).
    pub applied: u64,
    /// The commit index (clustered: highest commit-index record, at least
    /// the snapshot index).
    pub commit_index: Option<u64>,
    /// Per transaction-carrying record sizes, in file order.
    pub entries: Vec<EntrySize>,
    /// The first read or replay error; everything before it was used.
    pub error: Option<LogError>,
    /// Damaged spans followed by good records (the replay stops at the
    /// first damage, skipped or not: what a span held is unknown, so is
    /// the database after it).
    pub skipped: Vec<Skip>,
}

impl Replay {
    /// Totals of the entry sizes. None when replay stopped on an error
    /// other than a damaged tail: a framing error or a record that does
    /// not decode (`BadRecord`) ends the file, and the totals are those of
    /// the records before it, as the streaming summary reports them.
    pub fn totals(&self) -> (u64, Option<u64>, Option<u64>) {
        let stored = self.entries.iter().map(|e| e.stored).sum();
        if self
            .error
            .as_ref()
            .is_some_and(|e| !e.kind.is_framing() && !matches!(e.kind, ErrorKind::BadRecord { .. }))
        {
            return (stored, None, None);
        }
        let full = self.entries.iter().map(|e| e.full).sum();
        let diff = self.entries.iter().map(|e| e.diff).sum();
        (stored, Some(full), Some(diff))
    }
}

/// What to replay up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upto {
    /// Every entry of the log (committed or not).
    All,
    /// Entries up to the commit index.
    Committed,
    /// Entries up to this log index (clustered) or this many txn records
    /// (standalone).
    Index(u64),
}

fn replay_err(raw: &RawRecord<'_>, message: String) -> LogError {
    raw.error(ErrorKind::Replay { message })
}

fn schema_from(raw: &RawRecord<'_>, j: &Json) -> Result<DatabaseSchema, LogError> {
    DatabaseSchema::from_json(j).map_err(|e| replay_err(raw, format!("bad schema: {e}")))
}

/// Applies a Raft `data` value `[schema|null, txn|null]`.
fn apply_data(
    db: &mut Option<Db>,
    raw: &RawRecord<'_>,
    data: &Json,
) -> Result<SizeDelta, LogError> {
    let parts = match data.as_array() {
        Some([s, t]) => (s, t),
        _ => {
            return Err(replay_err(
                raw,
                "invalid commit format (data is not a 2-element array)".into(),
            ))
        }
    };
    let mut delta = SizeDelta::default();
    match parts {
        (Json::Null, Json::Null) => return Err(replay_err(raw, "data is [null, null]".into())),
        (Json::Null, txn) => {
            let d = db
                .as_mut()
                .ok_or_else(|| replay_err(raw, "transaction before any schema".into()))?;
            delta = d.apply_txn(txn).map_err(|m| replay_err(raw, m))?;
        }
        (schema, Json::Null) => {
            let s = schema_from(raw, schema)?;
            let cur = db
                .as_ref()
                .ok_or_else(|| replay_err(raw, "conversion before any schema".into()))?;
            *db = Some(cur.convert(s).map_err(|m| replay_err(raw, m))?);
        }
        (schema, txn) => {
            let mut d = Db::new(schema_from(raw, schema)?);
            delta = d.apply_txn(txn).map_err(|m| replay_err(raw, m))?;
            *db = Some(d);
        }
    }
    Ok(delta)
}

/// Pass 1 over a clustered file's framed records.
pub(crate) struct Scan {
    /// Record numbers of entries superseded by a later, lower index.
    pub superseded: std::collections::HashSet<usize>,
    pub commit: u64,
    pub prev_index: u64,
    /// Number of leading records that decode.
    pub stop_at: usize,
    pub error: Option<LogError>,
    /// (index, record) of the entries of the current log.
    surviving: Vec<(u64, usize)>,
    /// (record, log index, data start, data end) of every entry with data,
    /// in record order; offsets are relative to the body.
    pub data: Vec<(usize, u64, usize, usize)>,
}

impl Scan {
    pub(crate) fn new(n: usize) -> Scan {
        Scan {
            superseded: Default::default(),
            commit: 0,
            prev_index: 0,
            stop_at: n,
            error: None,
            surviving: Vec::new(),
            data: Vec::new(),
        }
    }

    /// Accounts for one (light-)decoded record.
    pub(crate) fn push(&mut self, record: usize, rec: &Record, data: Option<(usize, usize)>) {
        if let (Record::Raft(rr), Some((a, b))) = (rec, data) {
            if let RecordBody::Entry(e) = &rr.body {
                self.data.push((record, e.index, a, b));
            }
        }
        match rec {
            Record::Header(h) => self.prev_index = h.prev_index(),
            Record::Raft(rr) => match &rr.body {
                RecordBody::Entry(e) => {
                    while self.surviving.last().is_some_and(|(i, _)| *i >= e.index) {
                        if let Some((_, rec)) = self.surviving.pop() {
                            self.superseded.insert(rec);
                        }
                    }
                    self.surviving.push((e.index, record));
                }
                RecordBody::CommitIndex { commit_index } => {
                    self.commit = self.commit.max(*commit_index)
                }
                _ => {}
            },
            _ => {}
        }
    }
}

pub(crate) fn scan_clustered(all: &[RawRecord<'_>]) -> Scan {
    let mut scan = Scan::new(all.len());
    for raw in all {
        match raw.decode_light_payload(Format::Clustered) {
            Ok((rec, data)) => scan.push(raw.index, &rec, data),
            Err(e) => {
                scan.error = Some(e);
                scan.stop_at = raw.index;
                break;
            }
        }
    }
    scan
}

/// Replays a file held in memory.
///
/// Clustered files: the header's snapshot, then the entries of the final
/// log (entries superseded by a later record with a lower index are
/// skipped) in index order, up to `upto`. Standalone files: the schema and
/// txn records. Framing/decoding errors end the replay (the prefix is
/// kept, like ovsdb-server does); replay errors stop it too.
pub fn replay(bytes: &[u8], upto: Upto) -> Replay {
    let mut r = Replay {
        format: None,
        db: None,
        applied: 0,
        commit_index: None,
        entries: Vec::new(),
        error: None,
        skipped: Vec::new(),
    };
    // Pass 1: structure (which entry records survive, commit index), as a
    // salvage walk: the records before the first damage are replayed; the
    // walk goes on only to tell skipped spans from a damaged tail.
    let mut fr = Framer::new(bytes);
    let mut prefix: Vec<RawRecord<'_>> = Vec::new();
    let mut scan = Scan::new(0);
    let mut damage: Option<LogError> = None;
    while let Some(frame) = fr.next_frame() {
        match frame {
            Ok(Frame::Record(raw)) => {
                let format = fr.format().unwrap_or(Format::Clustered);
                match raw.decode_light_payload(format) {
                    Ok((rec, data)) if damage.is_none() => {
                        if format == Format::Clustered {
                            scan.push(raw.index, &rec, data);
                        }
                        prefix.push(raw);
                    }
                    Ok(_) => {}
                    Err(e) => fr.reject(&raw, e),
                }
            }
            Ok(Frame::Skipped(k)) => {
                damage.get_or_insert_with(|| k.error.clone());
                r.skipped.push(k);
            }
            Err(e) => {
                damage.get_or_insert(e);
                break;
            }
        }
    }
    if prefix.is_empty() && r.skipped.is_empty() {
        r.error = damage;
        return r;
    }
    let format = fr.format().unwrap_or(Format::Clustered);
    r.format = Some(format);
    if format == Format::Standalone {
        r.error = damage.clone();
        return replay_standalone(&prefix, upto, r, damage);
    }
    scan.stop_at = prefix.len();
    scan.error = damage;
    replay_clustered(&prefix, scan, upto, r)
}

/// The database of a clustered header's snapshot (None without one).
pub(crate) fn db_from_header(
    raw: &RawRecord<'_>,
    h: &crate::raft::ClusterHeader,
) -> Result<Option<Db>, LogError> {
    let Some(s) = &h.snapshot else {
        return Ok(None);
    };
    match s.data.as_array() {
        Some([schema, txn]) => {
            let mut db = Db::new(schema_from(raw, schema)?);
            if !txn.is_null() {
                db.apply_txn(txn)
                    .map_err(|m| replay_err(raw, format!("snapshot: {m}")))?;
            }
            Ok(Some(db))
        }
        _ => Err(replay_err(raw, "prev_data is not a 2-element array".into())),
    }
}

/// Streaming replay for summaries: applies entries while they are read,
/// as long as the log never truncates itself (then the caller falls back
/// to the two-pass replay).
pub(crate) struct Stream {
    pub ok: bool,
    pub db: Option<Db>,
    pub log_end: u64,
    pub full: u64,
    pub diff: u64,
    pub entries: Vec<EntrySize>,
    /// Entries with data not applied yet (a later entry may still replace
    /// them), in index order, with a copy of their data bytes.
    pending: std::collections::VecDeque<Pending>,
    pending_bytes: usize,
    /// Index of the last applied entry: replacing it or anything before it
    /// cannot be undone in one pass.
    applied: u64,
}

/// An entry waiting to be known final.
struct Pending {
    record: usize,
    index: u64,
    header_len: usize,
    data: Vec<u8>,
    body_len: usize,
}

/// Data bytes held for entries not known final before the one-pass replay
/// gives up (a second pass then gives the sizes).
const MAX_PENDING_BYTES: usize = 64 << 20;

impl Stream {
    pub(crate) fn new() -> Stream {
        Stream {
            ok: true,
            db: None,
            log_end: 0,
            full: 0,
            diff: 0,
            entries: Vec::new(),
            pending: Default::default(),
            pending_bytes: 0,
            applied: 0,
        }
    }

    pub(crate) fn header(&mut self, raw: &RawRecord<'_>, h: &crate::raft::ClusterHeader) {
        match db_from_header(raw, h) {
            Ok(db) => self.db = db,
            Err(_) => self.ok = false,
        }
        self.log_end = h.prev_index().saturating_add(1);
        self.applied = h.prev_index();
    }

    fn give_up(&mut self) {
        self.ok = false;
        self.pending.clear();
        self.pending_bytes = 0;
    }

    /// An entry: held until it is known final (committed, or the end of
    /// the file), because a later entry at the same index replaces it
    /// (Raft's log truncation) and a replayed transaction cannot be taken
    /// back. Replaced entries count at their stored size in every mode, as
    /// the two-pass replay counts them.
    pub(crate) fn entry(
        &mut self,
        raw: &RawRecord<'_>,
        e: &crate::raft::Entry,
        data: Option<&[u8]>,
    ) {
        if !self.ok {
            return;
        }
        if e.index < self.log_end {
            if e.index <= self.applied {
                // Replaces an entry already applied.
                return self.give_up();
            }
            while self.pending.back().is_some_and(|p| p.index >= e.index) {
                let p = self.pending.pop_back().expect("checked");
                self.pending_bytes -= p.data.len();
                let stored = (p.header_len + p.body_len) as u64;
                self.full += stored;
                self.diff += stored;
                self.entries.push(EntrySize {
                    record: p.record,
                    index: Some(p.index),
                    stored,
                    full: stored,
                    diff: stored,
                    superseded: true,
                });
            }
        }
        self.log_end = e.index.saturating_add(1);
        if e.data.is_none() {
            return;
        }
        let (Some(_), Some(data)) = (self.db.as_ref(), data) else {
            return self.give_up();
        };
        self.pending_bytes += data.len();
        if self.pending_bytes > MAX_PENDING_BYTES {
            return self.give_up();
        }
        self.pending.push_back(Pending {
            record: raw.index,
            index: e.index,
            header_len: raw.header_len,
            data: data.to_vec(),
            body_len: raw.body.len(),
        });
    }

    /// The commit index reached `c`: entries up to it are final.
    pub(crate) fn commit(&mut self, c: u64) {
        while self.ok && self.pending.front().is_some_and(|p| p.index <= c) {
            let p = self.pending.pop_front().expect("checked");
            self.apply(p);
        }
    }

    /// The end of the file: every entry left is final.
    pub(crate) fn finish(&mut self) {
        self.commit(u64::MAX);
        self.entries.sort_by_key(|e| e.record);
    }

    fn apply(&mut self, p: Pending) {
        self.pending_bytes -= p.data.len();
        let Some(db) = self.db.as_mut() else {
            return self.give_up();
        };
        let res = match db.apply_data_bytes(&p.data) {
            Some(r) => r.is_ok().then(|| r.ok()).flatten(),
            None => crate::rawtxn::parse_slice(&p.data).ok().and_then(|data| {
                let raw = RawRecord {
                    index: p.record,
                    offset: 0,
                    header_len: p.header_len,
                    body: &[],
                    sha1: [0; 20],
                };
                apply_data(&mut self.db, &raw, &data).ok()
            }),
        };
        let Some(delta) = res else {
            return self.give_up();
        };
        let size =
            |delta: i64| record_size(Format::Clustered, (p.body_len as i64 + delta).max(0) as u64);
        let (full, diff) = (size(delta.full), size(delta.diff));
        self.full += full;
        self.diff += diff;
        self.applied = p.index;
        self.entries.push(EntrySize {
            record: p.record,
            index: Some(p.index),
            stored: (p.header_len + p.body_len) as u64,
            full,
            diff,
            superseded: false,
        });
    }
}

/// Pass 2 of a clustered replay, over records already framed and scanned.
pub(crate) fn replay_clustered(
    all: &[RawRecord<'_>],
    scan: Scan,
    upto: Upto,
    mut r: Replay,
) -> Replay {
    r.format = Some(Format::Clustered);
    r.error = scan.error;
    let (superseded, commit, prev_index, stop_at) =
        (scan.superseded, scan.commit, scan.prev_index, scan.stop_at);
    r.commit_index = Some(commit.max(prev_index));
    let limit = match upto {
        Upto::All => u64::MAX,
        Upto::Committed => commit.max(prev_index),
        Upto::Index(i) => i,
    };
    // Pass 2: apply. Only the header and the entries with data are
    // decoded again; entry payloads are read from the slices found in
    // pass 1.
    let mut stopped = false;
    let mut data_at = scan.data.iter().peekable();
    for raw in &all[..stop_at] {
        if raw.index > 0 {
            while data_at.peek().is_some_and(|d| d.0 < raw.index) {
                data_at.next();
            }
            let Some(&&(_, index, start, end)) = data_at.peek().filter(|d| d.0 == raw.index) else {
                continue;
            };
            let Some(data_bytes) = raw.body.get(start..end) else {
                continue;
            };
            let stored = raw.total_len();
            let plain = |superseded| EntrySize {
                record: raw.index,
                index: Some(index),
                stored,
                full: stored,
                diff: stored,
                superseded,
            };
            if superseded.contains(&raw.index) {
                r.entries.push(plain(true));
                continue;
            }
            if stopped || index > limit {
                // Not applied: sizes in other modes unknown; keep stored.
                stopped = true;
                r.entries.push(plain(false));
                continue;
            }
            let fast = r.db.as_mut().and_then(|db| db.apply_data_bytes(data_bytes));
            let res = match fast {
                Some(res) => res.map_err(|m| replay_err(raw, m)),
                None => match crate::rawtxn::parse_slice(data_bytes) {
                    Ok(data) => apply_data(&mut r.db, raw, &data),
                    Err(m) => Err(raw.error(ErrorKind::BadJson { message: m })),
                },
            };
            match res {
                Ok(delta) => {
                    r.entries.push(EntrySize {
                        record: raw.index,
                        index: Some(index),
                        stored,
                        full: resized(Format::Clustered, raw, delta.full),
                        diff: resized(Format::Clustered, raw, delta.diff),
                        superseded: false,
                    });
                    r.applied = index;
                }
                Err(err) => {
                    r.error = Some(err);
                    return r;
                }
            }
            continue;
        }
        let rec = match raw.decode(Format::Clustered) {
            Ok(rec) => rec,
            Err(_) => break,
        };
        if let Record::Header(h) = rec {
            match db_from_header(raw, &h) {
                Ok(Some(db)) => {
                    r.db = Some(db);
                    r.applied = h.prev_index();
                }
                Ok(None) => {}
                Err(e) => {
                    r.error = Some(e);
                    return r;
                }
            }
        }
    }
    r
}

fn replay_standalone(
    prefix: &[RawRecord<'_>],
    upto: Upto,
    mut r: Replay,
    damage: Option<LogError>,
) -> Replay {
    let limit = match upto {
        Upto::All | Upto::Committed => u64::MAX,
        Upto::Index(i) => i,
    };
    r.error = damage;
    for &raw in prefix {
        let j = match raw.json() {
            Ok(j) => j,
            Err(e) => {
                r.error = Some(e);
                break;
            }
        };
        if raw.index == 0 {
            match schema_from(&raw, &j) {
                Ok(s) => r.db = Some(Db::new(s)),
                Err(e) => {
                    r.error = Some(e);
                    break;
                }
            }
            continue;
        }
        let stored = raw.total_len();
        if r.applied >= limit {
            r.entries.push(EntrySize {
                record: raw.index,
                index: None,
                stored,
                full: stored,
                diff: stored,
                superseded: false,
            });
            continue;
        }
        let Some(db) = r.db.as_mut() else { break };
        match db.apply_txn(&j) {
            Ok(delta) => {
                r.entries.push(EntrySize {
                    record: raw.index,
                    index: None,
                    stored,
                    full: resized(Format::Standalone, &raw, delta.full),
                    diff: resized(Format::Standalone, &raw, delta.diff),
                    superseded: false,
                });
                r.applied += 1;
            }
            Err(m) => {
                r.error = Some(replay_err(&raw, m));
                break;
            }
        }
    }
    r
}

/// Full/diff totals of a file (None when replay fails before the end).
pub fn entry_sizes(bytes: &[u8]) -> SizeTotals {
    let r = replay(bytes, Upto::All);
    let (_, full, diff) = r.totals();
    SizeTotals { full, diff }
}

/// Replays a file into a bare [`ovsdb::Database`] with the core's own JSON
/// txn reader ([`ovsdb::Database::apply_txn_json`]) instead of this
/// crate's [`Db`] (the same database type, fed by the byte-level reader
/// with size accounting): the same records in the same order (snapshot,
/// then the final log up to `upto`; standalone: schema and txn records).
/// Returns the database reached and the first error, if any. Tests and
/// the fuzz target compare the two to check the readers against each
/// other.
pub fn replay_database(bytes: &[u8], upto: Upto) -> (Option<ovsdb::Database>, Option<LogError>) {
    use std::sync::Arc;
    let opts = ovsdb::ReplayOptions::default();
    let mut fr = Framer::new(bytes);
    let all: Vec<RawRecord<'_>> = fr.by_ref().map_while(Result::ok).collect();
    let framing_error = fr.error().cloned();
    let mut db: Option<ovsdb::Database> = None;
    let new_db = |raw: &RawRecord<'_>, j: &Json| -> Result<ovsdb::Database, LogError> {
        Ok(ovsdb::Database::new(Arc::new(schema_from(raw, j)?)))
    };
    if fr.format() == Some(Format::Standalone) {
        let limit = match upto {
            Upto::Index(i) => i,
            _ => u64::MAX,
        };
        for raw in &all {
            if raw.index as u64 > limit {
                break;
            }
            let j = match raw.json() {
                Ok(j) => j,
                Err(e) => return (db, Some(e)),
            };
            if raw.index == 0 {
                match new_db(raw, &j) {
                    Ok(d) => db = Some(d),
                    Err(e) => return (None, Some(e)),
                }
                continue;
            }
            let Some(d) = db.as_mut() else { break };
            if let Err(e) = d.apply_txn_json(&j, opts) {
                return (db, Some(replay_err(raw, e.to_string())));
            }
        }
        return (db, framing_error);
    }
    let scan = scan_clustered(&all);
    let error = scan.error.clone().or(framing_error);
    let limit = match upto {
        Upto::All => u64::MAX,
        Upto::Committed => scan.commit.max(scan.prev_index),
        Upto::Index(i) => i,
    };
    let mut data_at = scan.data.iter().peekable();
    for raw in &all[..scan.stop_at] {
        if raw.index == 0 {
            let h = match raw.decode(Format::Clustered) {
                Ok(Record::Header(h)) => h,
                Ok(_) => continue,
                Err(e) => return (None, Some(e)),
            };
            if let Some(s) = &h.snapshot {
                let Some([schema, txn]) = s.data.as_array() else {
                    return (None, Some(replay_err(raw, "bad prev_data".into())));
                };
                let mut d = match new_db(raw, schema) {
                    Ok(d) => d,
                    Err(e) => return (None, Some(e)),
                };
                if !txn.is_null() {
                    if let Err(e) = d.apply_txn_json(txn, opts) {
                        return (None, Some(replay_err(raw, format!("snapshot: {e}"))));
                    }
                }
                db = Some(d);
            }
            continue;
        }
        while data_at.peek().is_some_and(|d| d.0 < raw.index) {
            data_at.next();
        }
        let Some(&&(_, index, a, b)) = data_at.peek().filter(|d| d.0 == raw.index) else {
            continue;
        };
        if scan.superseded.contains(&raw.index) {
            continue;
        }
        if index > limit {
            break;
        }
        let data = match raw.body.get(a..b).map(crate::rawtxn::parse_slice) {
            Some(Ok(d)) => d,
            Some(Err(m)) => return (db, Some(raw.error(ErrorKind::BadJson { message: m }))),
            None => continue,
        };
        let res = match data.as_array() {
            Some([Json::Null, Json::Null]) | None => Err("invalid commit format".to_string()),
            Some([Json::Null, txn]) => match db.as_mut() {
                Some(d) => d
                    .apply_txn_json(txn, opts)
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                None => Err("transaction before any schema".into()),
            },
            Some([schema, Json::Null]) => match (db.as_ref(), schema_from(raw, schema)) {
                (Some(d), Ok(s)) => d
                    .convert(Arc::new(s))
                    .map(|n| db = Some(n))
                    .map_err(|e| e.to_string()),
                (None, _) => Err("conversion before any schema".into()),
                (_, Err(e)) => return (db, Some(e)),
            },
            Some([schema, txn]) => match new_db(raw, schema) {
                Ok(mut d) => {
                    let r = d
                        .apply_txn_json(txn, opts)
                        .map(|_| ())
                        .map_err(|e| e.to_string());
                    db = Some(d);
                    r
                }
                Err(e) => return (db, Some(e)),
            },
            Some(_) => Err("invalid commit format".to_string()),
        };
        if let Err(m) = res {
            return (db, Some(replay_err(raw, m)));
        }
    }
    (db, error)
}

/// Replay as a consumer of [`crate::scan::LogScan`] events: the second
/// pass of a clustered replay (the superseded entries known from a first
/// pass) or a standalone replay. Same rules and results as
/// `replay_clustered`/`replay_standalone` over the same records.
pub struct ReplayPass {
    superseded: std::collections::HashSet<usize>,
    limit: u64,
    /// Records from this number on are not looked at.
    stop_at: usize,
    stopped: bool,
    done: bool,
    standalone: bool,
    r: Replay,
}

impl ReplayPass {
    /// A pass over the first `stop_at` records, skipping the entry
    /// records in `superseded`; `commit` is the highest commit index of
    /// the file (for [`Upto::Committed`] and the result's commit index).
    pub fn new(
        superseded: std::collections::HashSet<usize>,
        commit: u64,
        prev_index: u64,
        stop_at: usize,
        upto: Upto,
    ) -> ReplayPass {
        let limit = match upto {
            Upto::All => u64::MAX,
            Upto::Committed => commit.max(prev_index),
            Upto::Index(i) => i,
        };
        ReplayPass {
            superseded,
            limit,
            stop_at,
            stopped: false,
            done: false,
            standalone: false,
            r: Replay {
                format: Some(Format::Clustered),
                db: None,
                applied: 0,
                commit_index: Some(commit.max(prev_index)),
                entries: Vec::new(),
                error: None,
                skipped: Vec::new(),
            },
        }
    }

    /// A standalone replay of every txn record up to `upto`.
    pub fn standalone(upto: Upto) -> ReplayPass {
        let mut p = ReplayPass::new(Default::default(), 0, 0, usize::MAX, upto);
        p.limit = match upto {
            Upto::All | Upto::Committed => u64::MAX,
            Upto::Index(i) => i,
        };
        p.standalone = true;
        p.r.format = Some(Format::Standalone);
        p.r.commit_index = None;
        p
    }

    /// Takes one event of the walk.
    pub fn on_event(&mut self, ev: &crate::scan::Event<'_>) {
        use crate::scan::Event as E;
        if self.done {
            return;
        }
        let Some(raw) = ev.raw() else { return };
        if raw.index >= self.stop_at {
            self.done = true;
            return;
        }
        match ev {
            E::Schema { raw, schema } => match schema_from(raw, schema) {
                Ok(s) => self.r.db = Some(Db::new(s)),
                Err(e) => self.fail(e),
            },
            E::Txn { raw } => self.standalone_txn(raw),
            E::Header { raw, header } => match db_from_header(raw, header) {
                Ok(Some(db)) => {
                    self.r.db = Some(db);
                    self.r.applied = header.prev_index();
                }
                Ok(None) => {}
                Err(e) => self.fail(e),
            },
            E::Entry {
                raw,
                entry,
                data: Some(data_bytes),
                txn,
                ..
            } => self.entry(raw, entry.index, data_bytes, txn.as_ref()),
            _ => {}
        }
    }

    fn fail(&mut self, e: LogError) {
        self.r.error = Some(e);
        self.done = true;
    }

    fn standalone_txn(&mut self, raw: &RawRecord<'_>) {
        let stored = raw.total_len();
        let plain = EntrySize {
            record: raw.index,
            index: None,
            stored,
            full: stored,
            diff: stored,
            superseded: false,
        };
        let j = match raw.json() {
            Ok(j) => j,
            Err(e) => return self.fail(e),
        };
        if self.r.applied >= self.limit {
            self.r.entries.push(plain);
            return;
        }
        let Some(db) = self.r.db.as_mut() else {
            self.done = true;
            return;
        };
        match db.apply_txn(&j) {
            Ok(delta) => {
                self.r.entries.push(EntrySize {
                    full: resized(Format::Standalone, raw, delta.full),
                    diff: resized(Format::Standalone, raw, delta.diff),
                    ..plain
                });
                self.r.applied += 1;
            }
            Err(m) => self.fail(replay_err(raw, m)),
        }
    }

    fn entry(
        &mut self,
        raw: &RawRecord<'_>,
        index: u64,
        data_bytes: &[u8],
        txn: Option<&crate::scan::ScannedTxn<'_>>,
    ) {
        let stored = raw.total_len();
        let plain = |superseded| EntrySize {
            record: raw.index,
            index: Some(index),
            stored,
            full: stored,
            diff: stored,
            superseded,
        };
        if self.superseded.contains(&raw.index) {
            self.r.entries.push(plain(true));
            return;
        }
        if self.stopped || index > self.limit {
            self.stopped = true;
            self.r.entries.push(plain(false));
            return;
        }
        let res = match (self.r.db.as_mut(), txn) {
            (Some(db), Some(t)) => Some(db.apply_scanned(t)),
            (Some(db), None) => db.apply_data_bytes(data_bytes),
            (None, _) => None,
        };
        let res = match res {
            Some(res) => res.map_err(|m| replay_err(raw, m)),
            None => match crate::rawtxn::parse_slice(data_bytes) {
                Ok(data) => apply_data(&mut self.r.db, raw, &data),
                Err(m) => Err(raw.error(ErrorKind::BadJson { message: m })),
            },
        };
        match res {
            Ok(delta) => {
                self.r.entries.push(EntrySize {
                    full: resized(Format::Clustered, raw, delta.full),
                    diff: resized(Format::Clustered, raw, delta.diff),
                    ..plain(false)
                });
                self.r.applied = index;
            }
            Err(e) => self.fail(e),
        }
    }

    /// The replay; `error` is the error that ended the walk, if any
    /// (kept unless a replay error came first).
    pub fn finish(mut self, error: Option<LogError>) -> Replay {
        if self.r.error.is_none() {
            self.r.error = error;
        }
        self.r
    }
}

/// What a first pass over a clustered file learns for a later replay
/// pass: which entry records a later record superseded, the highest
/// commit index, the snapshot index.
#[derive(Debug, Default, Clone)]
pub struct Structure {
    pub superseded: std::collections::HashSet<usize>,
    pub commit: u64,
    pub prev_index: u64,
    surviving: Vec<(u64, usize)>,
}

impl Structure {
    pub fn on_event(&mut self, ev: &crate::scan::Event<'_>) {
        use crate::scan::Event as E;
        match ev {
            E::Header { header, .. } => self.prev_index = header.prev_index(),
            E::Entry { raw, entry, .. } => {
                while self
                    .surviving
                    .last()
                    .is_some_and(|(i, _)| *i >= entry.index)
                {
                    if let Some((_, rec)) = self.surviving.pop() {
                        self.superseded.insert(rec);
                    }
                }
                self.surviving.push((entry.index, raw.index));
            }
            E::CommitIndex { commit_index, .. } => self.commit = self.commit.max(*commit_index),
            _ => {}
        }
    }
}
