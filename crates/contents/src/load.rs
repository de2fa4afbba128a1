//! The load pass: one walk over a file's records (a [`Loader`] over
//! `ovsdb_log`'s [`LogScan`]) that lists the transaction-carrying entries
//! (index, term, date, comment, offsets) and feeds each one to the indexes
//! built from it (the [`HistoryIndex`]). Later queries read only the
//! entries they need.

use crate::layout::{walk_txn, TxnLayout};
use ovsdb::{DatabaseSchema, Uuid};
use ovsdb_log::{ErrorKind, Event, Format, LogError, LogScan, RawRecord, ScanOptions, Verdict};
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
    /// The entry ID (clustered entries with data).
    pub eid: Option<Uuid>,
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    /// Every row UUID seen (in no particular order).
    pub fn rows(&self) -> impl Iterator<Item = &Uuid> {
        self.rows.keys()
    }
    /// Number of distinct row UUIDs seen.
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// What a clustered file says of its Raft state beside the entries: what
/// a snapshot header written at some index would hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RaftFacts {
    /// Record 0, its snapshot's data left out (`null`).
    pub header: Option<ovsdb_log::ClusterHeader>,
    /// Entries that changed the configuration or the election timer:
    /// (index, term, servers, election timer), in file order.
    pub changes: Vec<(u64, u64, Option<ovsdb_log::Servers>, Option<u64>)>,
}

/// A loaded file: its entries and the indexes of the load pass.
#[derive(Debug, Clone)]
pub struct Log<'a> {
    /// The file (empty when it is not held: entries are read back by
    /// offset).
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
    /// Bytes of record 0 (the clustered header or the standalone schema
    /// record) when it was read, else 0.
    pub first_record: u64,
    /// Clustered: the header and the configuration changes.
    pub raft: RaftFacts,
    /// Some txn record has `"_is_diff":true`: its writer had column diffs
    /// on (as ovsdb-server has since 2.15 unless told otherwise).
    pub diffs: bool,
}

fn bad(raw: &RawRecord<'_>, m: String) -> LogError {
    raw.error(ErrorKind::BadRecord { message: m })
}

fn date_ms(v: i64) -> i64 {
    if v < (1 << 31) {
        v.saturating_mul(1000)
    } else {
        v
    }
}

fn parse_schema(raw: &RawRecord<'_>, b: &[u8]) -> Result<Arc<DatabaseSchema>, LogError> {
    DatabaseSchema::parse(b).map(Arc::new).map_err(|e| {
        raw.error(ErrorKind::Replay {
            message: format!("bad schema: {e}"),
        })
    })
}

impl<'a> Log<'a> {
    /// Walks `bytes` once (a [`Loader`] over [`LogScan`]). Never fails: a
    /// damaged record ends the walk and is reported in [`Log::error`].
    pub fn load(bytes: &'a [u8]) -> Log<'a> {
        let mut l = Loader::new();
        let mut scan = LogScan::new(l.options());
        let mut f = |ev: Event<'_>| l.on_event(&ev);
        scan.push(bytes, &mut f);
        scan.finish(&mut f);
        l.finish(&scan, bytes)
    }

    /// The body of an entry (empty when the file's bytes are not held:
    /// a [`Log`] from [`crate::stream::Opener`]).
    pub fn body(&self, e: &EntryInfo) -> &'a [u8] {
        self.bytes
            .get(e.body_offset..e.body_offset + e.body_len)
            .unwrap_or(&[])
    }

    /// Where entry `e`'s body sits in the file, relative to its record:
    /// (record offset, record length, body offset within the record).
    pub fn record_span(e: &EntryInfo) -> (u64, u64, usize) {
        (e.offset, e.stored, e.body_offset - e.offset as usize)
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

    /// Where the database stands just after entry `pos`, on the scale of
    /// an index asked for ([`crate::Upto::Index`], the CLI's `--at`): the
    /// entry's log index (clustered; a snapshot's is its own), or the txn
    /// records applied up to it (standalone).
    pub fn index_after(&self, pos: usize) -> Option<u64> {
        match self.format {
            Some(Format::Standalone) => Some(pos as u64 + 1),
            _ => self.entries.get(pos)?.index,
        }
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

/// The load pass as a consumer of [`LogScan`] events (so a file can be
/// fed chunk by chunk): the entry list, the history index, supersession
/// and the commit index. Keeps those (about a hundred bytes per entry plus
/// the index), not the file; [`Loader::finish`] ties them to the bytes for
/// the queries that read entries back. A damaged record ends the pass.
pub struct Loader {
    entries: Vec<EntryInfo>,
    history: HistoryIndex,
    error: Option<LogError>,
    schema: Option<Arc<DatabaseSchema>>,
    first_record: u64,
    format: Option<Format>,
    /// (index, entry position or None) of the current log, for
    /// supersession.
    surviving: Vec<(u64, Option<usize>)>,
    prev_index: u64,
    commit: u64,
    raft: RaftFacts,
    diffs: bool,
}

impl Default for Loader {
    fn default() -> Self {
        Loader::new()
    }
}

impl Loader {
    pub fn new() -> Loader {
        Loader {
            entries: Vec::new(),
            history: HistoryIndex::new(),
            error: None,
            schema: None,
            first_record: 0,
            format: None,
            surviving: Vec::new(),
            prev_index: 0,
            commit: 0,
            raft: RaftFacts::default(),
            diffs: false,
        }
    }

    /// The scanner options this consumer needs.
    pub fn options(&self) -> ScanOptions {
        ScanOptions::default()
    }

    /// Takes one event of the walk; a record it cannot read is rejected
    /// (the scanner reports it as damage, which ends the pass).
    pub fn on_event(&mut self, ev: &Event<'_>) -> Verdict {
        if self.error.is_some() {
            return Verdict::Keep;
        }
        match ev {
            Event::Skipped(k) => self.error = Some(k.error.clone()),
            Event::Tail(e) => self.error = Some(e.clone()),
            _ => {
                let Some(raw) = ev.raw() else {
                    return Verdict::Keep;
                };
                match ev {
                    Event::Header { .. } => self.format = Some(Format::Clustered),
                    Event::Schema { .. } => self.format = Some(Format::Standalone),
                    _ => {}
                }
                if raw.index == 0 {
                    self.first_record = raw.total_len();
                }
                if let Err(e) = self.record(ev, raw) {
                    return Verdict::Reject(e);
                }
            }
        }
        Verdict::Keep
    }

    fn record(&mut self, ev: &Event<'_>, raw: &RawRecord<'_>) -> Result<(), LogError> {
        let body = raw.body;
        let mut info = EntryInfo {
            record: raw.index,
            offset: raw.offset,
            stored: raw.total_len(),
            kind: EntryKind::Txn,
            index: None,
            term: None,
            eid: None,
            date_ms: None,
            comment: None,
            superseded: false,
            body_offset: raw.body_offset() as usize,
            body_len: body.len(),
            txn: None,
            schema: None,
        };
        let mut data: Option<(usize, usize)> = None;
        match ev {
            Event::Schema { .. } => {
                self.schema = Some(parse_schema(raw, body)?);
                return Ok(());
            }
            Event::Txn { .. } => {
                let start = body
                    .iter()
                    .position(|c| !c.is_ascii_whitespace())
                    .unwrap_or(0);
                let end = ovsdb_log::skim::skip_value(body, start).map_err(|m| bad(raw, m))?;
                info.txn = Some((start, end));
            }
            Event::Header { header: h, .. } => {
                self.prev_index = h.prev_index();
                let mut kept = (**h).clone();
                if let Some(s) = kept.snapshot.as_mut() {
                    s.data = ovsdb::Json::Null;
                }
                self.raft.header = Some(kept);
                let Some(snap) = &h.snapshot else {
                    return Ok(());
                };
                info.kind = EntryKind::Snapshot;
                info.index = Some(snap.index);
                info.term = Some(snap.term);
                data = find_member(body, "prev_data").map_err(|m| bad(raw, m))?;
            }
            Event::Entry {
                entry: e,
                data: range,
                ..
            } => {
                while self.surviving.last().is_some_and(|(i, _)| *i >= e.index) {
                    if let Some((_, Some(p))) = self.surviving.pop() {
                        self.entries[p].superseded = true;
                    }
                }
                let has = range.is_some();
                self.surviving
                    .push((e.index, has.then_some(self.entries.len())));
                if e.servers.is_some() || e.election_timer.is_some() {
                    self.raft
                        .changes
                        .push((e.index, e.term, e.servers.clone(), e.election_timer));
                }
                let Some(d) = range else {
                    return Ok(());
                };
                info.kind = EntryKind::Entry;
                info.index = Some(e.index);
                info.term = Some(e.term);
                info.eid = e.eid;
                // The data's place in the body (the scanner hands a slice
                // of it).
                let a = d.as_ptr() as usize - body.as_ptr() as usize;
                data = Some((a, a + d.len()));
            }
            Event::CommitIndex { commit_index, .. } => {
                self.commit = self.commit.max(*commit_index);
                return Ok(());
            }
            _ => return Ok(()),
        }
        if let Some((a, _)) = data {
            let (schema, txn) =
                ovsdb_log::scan::split_data_bytes(body, a).map_err(|m| bad(raw, m))?;
            if let Some((s0, s1)) = schema {
                info.schema = Some(parse_schema(raw, &body[s0..s1])?);
            }
            info.txn = txn;
        }
        if let Some((t0, _)) = info.txn {
            let layout = walk_txn(body, t0, false).map_err(|m| bad(raw, m))?;
            info.date_ms = layout.date.map(date_ms);
            info.comment = layout.comment.clone();
            self.diffs |= layout.is_diff;
            self.history.add_record(self.entries.len() as u32, &layout);
        }
        self.entries.push(info);
        Ok(())
    }

    /// The loaded file: the pass's results over the `bytes` that `scan`
    /// walked.
    pub fn finish<'a>(self, scan: &LogScan, bytes: &'a [u8]) -> Log<'a> {
        // The format is the magic of the first header line read, even
        // when record 0 itself is damaged.
        let format = self.format.or_else(|| scan.format());
        Log {
            bytes,
            format,
            entries: self.entries,
            history: self.history,
            commit_index: (format == Some(Format::Clustered))
                .then(|| self.commit.max(self.prev_index)),
            error: self.error,
            schema: self.schema,
            first_record: self.first_record,
            raft: self.raft,
            diffs: self.diffs,
        }
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
