//! The load pass: one walk over a file's records that lists the
//! transaction-carrying entries (index, term, date, comment, offsets) and
//! feeds each one to the indexes built from it (the [`HistoryIndex`]).
//! Later queries read only the entries they need.

use crate::layout::{split_data, walk_txn, TxnLayout};
use ovsdb::{DatabaseSchema, Uuid};
use ovsdb_log::{ErrorKind, Format, Framer, LogError, RecordBody};
use std::collections::HashMap;
use std::sync::Arc;

/// What kind of record an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A clustered header's snapshot (`prev_data`).
    Snapshot,
    /// A clustered entry record with `data`.
    Entry,
    /// A standalone txn record.
    Txn,
}

/// One transaction-carrying record.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryInfo {
    /// Record number in the file.
    pub record: usize,
    /// Byte offset of the record.
    pub offset: u64,
    /// Header line + body.
    pub stored: u64,
    pub kind: EntryKind,
    /// Log index (clustered; the snapshot's is its `prev_index`).
    pub index: Option<u64>,
    pub term: Option<u64>,
    /// `_date` in milliseconds (values below 2^31 are seconds, as OVS 1.x
    /// wrote them and `ovsdb-tool show-log` reads them).
    pub date_ms: Option<i64>,
    pub comment: Option<String>,
    /// Superseded by a later entry with the same or a lower index.
    pub superseded: bool,
    /// Position of the record's body in the file and the txn object's range
    /// within the body (None: no txn, e.g. a conversion without data).
    pub body_offset: usize,
    pub body_len: usize,
    pub txn: Option<(usize, usize)>,
    /// The schema this record carries, if any.
    pub schema: Option<Arc<DatabaseSchema>>,
}

impl EntryInfo {
    /// Whether the entry is applied by a replay to `upto`'s limit.
    pub fn applied(&self) -> bool {
        !self.superseded
    }
}

/// Row UUID → the entries (positions in [`Log::entries`]) whose record
/// names it as a row key. Built by feeding records in file order.
#[derive(Debug, Clone, Default)]
pub struct HistoryIndex {
    rows: HashMap<Uuid, Vec<u32>>,
}

impl HistoryIndex {
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds one record (position `entry`) given its layout.
    pub fn add_record(&mut self, entry: u32, layout: &TxnLayout) {
        for t in &layout.tables {
            for r in &t.rows {
                if let Some(u) = Uuid::parse(&r.key) {
                    let v = self.rows.entry(u).or_default();
                    if v.last() != Some(&entry) {
                        v.push(entry);
                    }
                }
            }
        }
    }
    /// The entries naming `uuid`, in file order.
    pub fn entries_for(&self, uuid: &Uuid) -> &[u32] {
        self.rows.get(uuid).map_or(&[], Vec::as_slice)
    }
    /// Number of distinct row UUIDs seen.
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// A loaded file: its entries and the indexes of the load pass.
#[derive(Debug, Clone)]
pub struct Log<'a> {
    pub bytes: &'a [u8],
    pub format: Option<Format>,
    /// The standalone schema record or clustered header's schema.
    pub entries: Vec<EntryInfo>,
    pub history: HistoryIndex,
    /// Highest commit index seen (clustered), at least the snapshot index.
    pub commit_index: Option<u64>,
    /// The first read error; everything before it was loaded.
    pub error: Option<LogError>,
    /// Standalone: the schema of record 0.
    pub schema: Option<Arc<DatabaseSchema>>,
}

fn bad(raw: &ovsdb_log::RawRecord<'_>, m: String) -> LogError {
    raw.error(ErrorKind::BadRecord { message: m })
}

fn date_ms(v: i64) -> i64 {
    if v < (1 << 31) {
        v.saturating_mul(1000)
    } else {
        v
    }
}

fn parse_schema(raw: &ovsdb_log::RawRecord<'_>, b: &[u8]) -> Result<Arc<DatabaseSchema>, LogError> {
    DatabaseSchema::parse(b).map(Arc::new).map_err(|e| {
        raw.error(ErrorKind::Replay {
            message: format!("bad schema: {e}"),
        })
    })
}

impl<'a> Log<'a> {
    /// Walks `bytes` once. Never fails: a damaged record ends the walk
    /// and is reported in [`Log::error`].
    pub fn load(bytes: &'a [u8]) -> Log<'a> {
        let mut log = Log {
            bytes,
            format: None,
            entries: Vec::new(),
            history: HistoryIndex::new(),
            commit_index: None,
            error: None,
            schema: None,
        };
        let mut probe = Framer::new(bytes);
        let _ = probe.next();
        log.format = probe.format();
        let mut fr = Framer::new(bytes);
        // (index, entry position or None) of the current log, for
        // supersession.
        let mut surviving: Vec<(u64, Option<usize>)> = Vec::new();
        let mut prev_index = 0u64;
        let mut commit = 0u64;
        for raw in fr.by_ref() {
            let raw = match raw {
                Ok(r) => r,
                Err(e) => {
                    log.error = Some(e);
                    break;
                }
            };
            if let Err(e) = log.record(&raw, &mut surviving, &mut prev_index, &mut commit) {
                log.error = Some(e);
                break;
            }
        }
        if log.error.is_none() {
            log.error = fr.error().cloned();
        }
        if log.format == Some(Format::Clustered) {
            log.commit_index = Some(commit.max(prev_index));
        }
        log
    }

    fn record(
        &mut self,
        raw: &ovsdb_log::RawRecord<'a>,
        surviving: &mut Vec<(u64, Option<usize>)>,
        prev_index: &mut u64,
        commit: &mut u64,
    ) -> Result<(), LogError> {
        let body = raw.body;
        let format = self.format.unwrap_or(Format::Clustered);
        let mut info = EntryInfo {
            record: raw.index,
            offset: raw.offset,
            stored: raw.total_len(),
            kind: EntryKind::Txn,
            index: None,
            term: None,
            date_ms: None,
            comment: None,
            superseded: false,
            body_offset: raw.body_offset() as usize,
            body_len: body.len(),
            txn: None,
            schema: None,
        };
        let mut data: Option<(usize, usize)> = None;
        match (format, raw.index) {
            (Format::Standalone, 0) => {
                self.schema = Some(parse_schema(raw, body)?);
                return Ok(());
            }
            (Format::Standalone, _) => {
                let start = body
                    .iter()
                    .position(|c| !c.is_ascii_whitespace())
                    .unwrap_or(0);
                let end = ovsdb_log::skim::skip_value(body, start).map_err(|m| bad(raw, m))?;
                info.txn = Some((start, end));
            }
            (Format::Clustered, 0) => {
                let h = match raw.decode(Format::Clustered)? {
                    ovsdb_log::record::Record::Header(h) => h,
                    _ => return Err(bad(raw, "first record is not a header".into())),
                };
                *prev_index = h.prev_index();
                let Some(snap) = &h.snapshot else {
                    return Ok(());
                };
                info.kind = EntryKind::Snapshot;
                info.index = Some(snap.index);
                info.term = Some(snap.term);
                data = find_member(body, "prev_data").map_err(|m| bad(raw, m))?;
            }
            (Format::Clustered, _) => {
                let (rec, range) = raw.decode_light_payload(Format::Clustered)?;
                let ovsdb_log::record::Record::Raft(rr) = rec else {
                    return Ok(());
                };
                match rr.body {
                    RecordBody::Entry(e) => {
                        while surviving.last().is_some_and(|(i, _)| *i >= e.index) {
                            if let Some((_, Some(p))) = surviving.pop() {
                                self.entries[p].superseded = true;
                            }
                        }
                        let has = range.is_some();
                        surviving.push((e.index, has.then_some(self.entries.len())));
                        if !has {
                            return Ok(());
                        }
                        info.kind = EntryKind::Entry;
                        info.index = Some(e.index);
                        info.term = Some(e.term);
                        data = range;
                    }
                    RecordBody::CommitIndex { commit_index } => {
                        *commit = (*commit).max(commit_index);
                        return Ok(());
                    }
                    _ => return Ok(()),
                }
            }
        }
        if let Some((a, _)) = data {
            let (schema, txn) = split_data(body, a).map_err(|m| bad(raw, m))?;
            if let Some((s0, s1)) = schema {
                info.schema = Some(parse_schema(raw, &body[s0..s1])?);
            }
            info.txn = txn;
        }
        if let Some((t0, _)) = info.txn {
            let layout = walk_txn(body, t0, false).map_err(|m| bad(raw, m))?;
            info.date_ms = layout.date.map(date_ms);
            info.comment = layout.comment.clone();
            self.history.add_record(self.entries.len() as u32, &layout);
        }
        self.entries.push(info);
        Ok(())
    }

    /// The body of an entry.
    pub fn body(&self, e: &EntryInfo) -> &'a [u8] {
        &self.bytes[e.body_offset..e.body_offset + e.body_len]
    }

    /// The schema in force for entry `pos` (the last schema carried by an
    /// applied entry at or before it, or the standalone schema).
    pub fn schema_at(&self, pos: usize) -> Option<Arc<DatabaseSchema>> {
        self.entries[..=pos.min(self.entries.len().saturating_sub(1))]
            .iter()
            .rev()
            .filter(|e| !e.superseded)
            .find_map(|e| e.schema.clone())
            .or_else(|| self.schema.clone())
    }

    /// The database name (from the first schema seen).
    pub fn database_name(&self) -> Option<String> {
        self.schema
            .as_ref()
            .or_else(|| self.entries.iter().find_map(|e| e.schema.as_ref()))
            .map(|s| s.name.clone())
    }

    /// Stored bytes of all entries (what `inspect --json` reports as
    /// `entry_bytes.stored`: the snapshot header is not an entry).
    pub fn entry_bytes(&self) -> u64 {
        self.entries
            .iter()
            .filter(|e| e.kind != EntryKind::Snapshot)
            .map(|e| e.stored)
            .sum()
    }
}

/// The value range of member `name` of the object that `body` holds.
pub(crate) fn find_member(body: &[u8], name: &str) -> Result<Option<(usize, usize)>, String> {
    let start = body
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(0);
    let mut found = None;
    crate::layout::members(body, start, |k, _, vs, ve, _| {
        if k == name {
            found = Some((vs, ve));
        }
        Ok(())
    })?;
    Ok(found)
}
