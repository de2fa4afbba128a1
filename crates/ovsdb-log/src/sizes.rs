//! Storage-size accounting and log replay over whole files: each
//! transaction-carrying record's size as stored, as written with full
//! values, and as written with column diffs; the database at a log index.

use crate::error::{ErrorKind, LogError};
use crate::framing::{Format, Framer, RawRecord};
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
}

impl Replay {
    /// Totals of the entry sizes (None if replay stopped on an error).
    pub fn totals(&self) -> (u64, Option<u64>, Option<u64>) {
        let stored = self.entries.iter().map(|e| e.stored).sum();
        if self.error.as_ref().is_some_and(|e| !e.kind.is_framing()) {
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
}

pub(crate) fn scan_clustered(all: &[RawRecord<'_>]) -> Scan {
    let mut surviving: Vec<(u64, usize)> = Vec::new(); // (index, record)
    let mut scan = Scan {
        superseded: Default::default(),
        commit: 0,
        prev_index: 0,
        stop_at: all.len(),
        error: None,
    };
    for raw in all {
        let rec = match raw.decode(Format::Clustered) {
            Ok(rec) => rec,
            Err(e) => {
                scan.error = Some(e);
                scan.stop_at = raw.index;
                break;
            }
        };
        match rec {
            Record::Header(h) => scan.prev_index = h.prev_index(),
            Record::Raft(rr) => match rr.body {
                RecordBody::Entry(e) => {
                    while surviving.last().is_some_and(|(i, _)| *i >= e.index) {
                        if let Some((_, rec)) = surviving.pop() {
                            scan.superseded.insert(rec);
                        }
                    }
                    surviving.push((e.index, raw.index));
                }
                RecordBody::CommitIndex { commit_index } => {
                    scan.commit = scan.commit.max(commit_index)
                }
                _ => {}
            },
            _ => {}
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
    };
    // Pass 1: structure (which entry records survive, commit index).
    let mut fr = Framer::new(bytes);
    let Some(Ok(first)) = fr.next() else {
        r.error = fr.error().cloned();
        return r;
    };
    let format = fr.format().unwrap_or(Format::Clustered);
    r.format = Some(format);
    if format == Format::Standalone {
        return replay_standalone(bytes, upto, r);
    }
    let all: Vec<RawRecord<'_>> = std::iter::once(first)
        .chain(fr.by_ref().map_while(Result::ok))
        .collect();
    let scan = scan_clustered(&all);
    r.error = scan.error.or_else(|| fr.error().cloned());
    let (superseded, commit, prev_index, stop_at) =
        (scan.superseded, scan.commit, scan.prev_index, scan.stop_at);
    r.commit_index = Some(commit.max(prev_index));
    let limit = match upto {
        Upto::All => u64::MAX,
        Upto::Committed => commit.max(prev_index),
        Upto::Index(i) => i,
    };
    // Pass 2: apply.
    let mut stopped = false;
    for raw in &all[..stop_at] {
        let rec = match raw.decode(Format::Clustered) {
            Ok(rec) => rec,
            Err(_) => break,
        };
        match rec {
            Record::Header(h) => {
                if let Some(s) = &h.snapshot {
                    match s.data.as_array() {
                        Some([schema, txn]) => {
                            let mut db = match schema_from(raw, schema) {
                                Ok(sc) => Db::new(sc),
                                Err(e) => {
                                    r.error = Some(e);
                                    return r;
                                }
                            };
                            if !txn.is_null() {
                                if let Err(m) = db.apply_txn(txn) {
                                    r.error = Some(replay_err(raw, format!("snapshot: {m}")));
                                    return r;
                                }
                            }
                            r.db = Some(db);
                            r.applied = s.index;
                        }
                        _ => {
                            r.error =
                                Some(replay_err(raw, "prev_data is not a 2-element array".into()));
                            return r;
                        }
                    }
                }
            }
            Record::Raft(rr) => {
                let RecordBody::Entry(e) = rr.body else {
                    continue;
                };
                let Some(data) = &e.data else { continue };
                let stored = raw.total_len();
                if superseded.contains(&raw.index) {
                    r.entries.push(EntrySize {
                        record: raw.index,
                        index: Some(e.index),
                        stored,
                        full: stored,
                        diff: stored,
                        superseded: true,
                    });
                    continue;
                }
                if stopped || e.index > limit {
                    stopped = true;
                    // Not applied: sizes unknown in other modes; keep stored.
                    r.entries.push(EntrySize {
                        record: raw.index,
                        index: Some(e.index),
                        stored,
                        full: stored,
                        diff: stored,
                        superseded: false,
                    });
                    continue;
                }
                match apply_data(&mut r.db, raw, data) {
                    Ok(delta) => {
                        r.entries.push(EntrySize {
                            record: raw.index,
                            index: Some(e.index),
                            stored,
                            full: resized(Format::Clustered, raw, delta.full),
                            diff: resized(Format::Clustered, raw, delta.diff),
                            superseded: false,
                        });
                        r.applied = e.index;
                    }
                    Err(err) => {
                        r.error = Some(err);
                        return r;
                    }
                }
            }
            _ => {}
        }
    }
    r
}

fn replay_standalone(bytes: &[u8], upto: Upto, mut r: Replay) -> Replay {
    let limit = match upto {
        Upto::All | Upto::Committed => u64::MAX,
        Upto::Index(i) => i,
    };
    for raw in Framer::new(bytes) {
        let raw = match raw {
            Ok(x) => x,
            Err(e) => {
                r.error = Some(e);
                break;
            }
        };
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
