//! Storage-size accounting and log replay: each transaction-carrying
//! record's size as stored, as written with full values, and as written
//! with column diffs; the database at a log index. The replay is a
//! consumer of [`LogScan`] events ([`ReplayPass`]; the summary's one-walk
//! sizes use `Stream`); [`replay`] and [`replay_database`] are wrappers for
//! a file held in memory.

#[cfg(not(target_arch = "wasm32"))]
use crate::ahead::ReadAhead;
use crate::checkpoint::{Checkpoints, Policy};
use crate::error::{ErrorKind, LogError};
use crate::framing::{Format, RawRecord, Skip};
use crate::replay::{Db, SizeDelta};
use crate::scan::{split_data, Event, LogScan, ScanOptions, ScanPoint, Verdict};
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
    /// The checkpoints kept on the way, when the pass was made
    /// [`ReplayPass::with_checkpoints`].
    pub checkpoints: Option<Box<Checkpoints>>,
    /// Clustered files: where a walk resumes after the record of the last
    /// entry applied (a later jump may start there:
    /// [`crate::checkpoint::Checkpoint::after`]).
    pub resume_at: Option<ScanPoint>,
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
    match (db.as_mut(), split_data(data)) {
        (Some(d), _) => d.apply_data(data).map_err(|m| replay_err(raw, m)),
        (None, Some((schema, txn))) if !schema.is_null() && !txn.is_null() => {
            let mut d = Db::new(schema_from(raw, schema)?);
            let delta = d.apply_txn(txn).map_err(|m| replay_err(raw, m))?;
            *db = Some(d);
            Ok(delta)
        }
        (None, Some((schema, _))) if !schema.is_null() => {
            Err(replay_err(raw, "conversion before any schema".into()))
        }
        (None, Some((_, txn))) if txn.is_null() => {
            Err(replay_err(raw, "data is [null, null]".into()))
        }
        (None, Some(_)) => Err(replay_err(raw, "transaction before any schema".into())),
        (None, None) => Err(replay_err(
            raw,
            "invalid commit format (data is not a 2-element array)".into(),
        )),
    }
}

/// What the first walk of a replay learns from the records before the
/// first damage (the records a replay uses): the log's [`Structure`], how
/// many records there are and the format; and every damaged span of the
/// walk. It keeps the structure only (16 bytes per entry of the current
/// log plus the superseded record numbers), never the records.
#[derive(Debug, Default, Clone)]
pub struct Plan {
    pub structure: Structure,
    /// Good records before the first damage.
    pub records: usize,
    /// The format of record 0, if it was read.
    pub format: Option<Format>,
    /// The first damage (a skipped span's error or the damaged tail).
    pub damage: Option<LogError>,
    /// Every skipped span of the walk, in file order.
    pub skipped: Vec<Skip>,
    /// The first framing error of the walk (a span or tail the framer
    /// could not read, as opposed to a record that does not decode): the
    /// error a strict reader stops at.
    pub framing: Option<LogError>,
}

impl Plan {
    /// Takes one event of the walk.
    pub fn on_event(&mut self, ev: &Event<'_>) {
        match ev {
            Event::Skipped(k) => {
                self.damage.get_or_insert_with(|| k.error.clone());
                self.note_framing(&k.error);
                self.skipped.push(k.clone());
            }
            Event::Tail(e) => {
                self.damage.get_or_insert_with(|| e.clone());
                self.note_framing(e);
            }
            _ if self.damage.is_some() => {}
            _ => {
                match ev {
                    Event::Header { .. } => self.format = Some(Format::Clustered),
                    Event::Schema { .. } => self.format = Some(Format::Standalone),
                    _ => {}
                }
                if ev.raw().is_some() {
                    self.records += 1;
                    self.structure.on_event(ev);
                }
            }
        }
    }

    fn note_framing(&mut self, e: &LogError) {
        let decode = matches!(
            e.kind,
            ErrorKind::BadJson { .. } | ErrorKind::NotObject | ErrorKind::BadRecord { .. }
        );
        if !decode && self.framing.is_none() {
            self.framing = Some(e.clone());
        }
    }

    /// The commit index: the highest commit-index record, at least the
    /// snapshot index.
    pub fn commit_index(&self) -> u64 {
        self.structure.commit.max(self.structure.prev_index)
    }

    fn limit(&self, upto: Upto) -> u64 {
        match upto {
            Upto::All => u64::MAX,
            Upto::Committed => self.commit_index(),
            Upto::Index(i) => i,
        }
    }
}

/// Replays a file held in memory: [`ReplayPass`] over one walk of
/// [`LogScan`], or two when the first says so ([`ReplayEnd::Again`]; the
/// second trusts the hashes the first verified).
///
/// Clustered files: the header's snapshot, then the entries of the final
/// log (entries superseded by a later record with a lower index are
/// skipped) in index order, up to `upto`. Standalone files: the schema and
/// txn records. Damage ends the replay (the records before it are used,
/// like ovsdb-server does); replay errors stop it too.
pub fn replay(bytes: &[u8], upto: Upto) -> Replay {
    let mut pass = ReplayPass::first(upto);
    let mut scan = LogScan::new(pass.options());
    let mut f = |ev: Event<'_>| {
        pass.on_event(&ev);
        Verdict::Keep
    };
    scan.push(bytes, &mut f);
    scan.finish(&mut f);
    match pass.end(&scan) {
        ReplayEnd::Done(r) => *r,
        ReplayEnd::Again(mut pass) => {
            let opts = ScanOptions {
                trust_sha1: true,
                ..pass.options()
            };
            LogScan::scan_all(bytes, opts, &mut |ev| {
                pass.on_event(&ev);
                Verdict::Keep
            });
            pass.into_replay()
        }
    }
}

/// The database of a clustered header's snapshot (None without one).
pub(crate) fn db_from_header(
    raw: &RawRecord<'_>,
    h: &crate::raft::ClusterHeader,
) -> Result<Option<Db>, LogError> {
    let Some(s) = &h.snapshot else {
        return Ok(None);
    };
    match split_data(&s.data) {
        Some((schema, txn)) => {
            let mut db = Db::new(schema_from(raw, schema)?);
            if !txn.is_null() {
                db.apply_txn(txn)
                    .map_err(|m| replay_err(raw, format!("snapshot: {m}")))?;
            }
            Ok(Some(db))
        }
        None => Err(replay_err(raw, "prev_data is not a 2-element array".into())),
    }
}

/// What the one-pass replays of the files read before leave to the next
/// file of the same cluster, so that their common committed prefix is
/// replayed once, not once per file: every entry applied, by index, with
/// the record's term and SHA-1 and its full/diff sizes, and the database
/// after the highest index applied.
///
/// A later file's entry takes the known sizes without being replayed only
/// when its record is the same (same index, term and body SHA-1; the
/// bytes are compared, not assumed). Its replay is then behind; at its
/// first entry that is not known, it goes on from the shared database if
/// that stands exactly one index before, and otherwise gives up like any
/// one-pass replay that cannot go on (the caller's second walk, without
/// sharing, gives the sizes).
#[derive(Default)]
pub struct SharedReplay {
    /// Database name and cluster ID of the files it came from.
    key: Option<(String, Option<crate::Uuid>)>,
    /// Index of `known[0]`.
    base: u64,
    known: Vec<Known>,
    /// The database after index `.0`.
    db: Option<(u64, Db)>,
    /// The databases of the checkpoints those replays kept, by the index
    /// they stand after: a later file that takes the known sizes up to one
    /// of these indexes keeps a checkpoint there too (rows shared).
    checkpoints: Vec<(u64, Db)>,
    /// Entries that took known sizes (for tests and figures).
    pub reused: u64,
}

/// Entries without data in a row that [`SharedReplay`] keeps as holes.
const MAX_HOLE: u64 = 4096;
/// Entries a [`SharedReplay`] knows at most (40 bytes each).
const MAX_KNOWN: u64 = 1 << 24;

#[derive(Clone, Copy)]
struct Known {
    term: u64,
    sha1: [u8; 20],
    full: u32,
    diff: u32,
}

impl SharedReplay {
    fn get(&self, index: u64) -> Option<&Known> {
        let i = index.checked_sub(self.base)?;
        self.known
            .get(usize::try_from(i).ok()?)
            .filter(|k| k.term != 0)
    }

    fn end(&self) -> u64 {
        self.base + self.known.len() as u64
    }

    /// Notes an entry a file applied itself, past what is known (entries
    /// without data leave holes: term 0).
    fn learn(&mut self, index: u64, k: Known) {
        if self.known.is_empty() {
            self.base = index;
        }
        // Indexes of a log are consecutive; a jump (a damaged or made-up
        // file) or a log beyond what is worth keeping ends the learning
        // rather than the memory.
        let gap = index.saturating_sub(self.end());
        if gap > MAX_HOLE || self.known.len() as u64 + gap >= MAX_KNOWN {
            return;
        }
        if index >= self.end() {
            let hole = Known {
                term: 0,
                sha1: [0; 20],
                full: 0,
                diff: 0,
            };
            self.known.resize((index - self.base) as usize, hole);
            self.known.push(k);
        }
    }
}

/// Streaming replay for summaries: applies entries while they are read,
/// as long as the log never truncates itself (then the caller falls back
/// to the two-pass replay).
pub(crate) struct Stream {
    pub ok: bool,
    pub db: Option<Db>,
    /// The replays of earlier files of the cluster (see [`SharedReplay`]).
    shared: SharedReplay,
    /// This file replayed an entry of its own where `shared` knows another:
    /// what it replays then is not added to `shared`.
    diverged: bool,
    /// Entries this file replayed itself, for `shared` once the file ends
    /// well.
    learned: Vec<(u64, Known)>,
    db_at: u64,
    pub log_end: u64,
    pub full: u64,
    pub diff: u64,
    pub entries: Vec<EntrySize>,
    /// Entries with data not applied yet (a later entry may still replace
    /// them), in index order, with a copy of their data bytes.
    pending: std::collections::VecDeque<Pending>,
    pending_bytes: usize,
    /// The highest index known final (`applied` or the last entry waiting
    /// for its read ahead).
    final_to: u64,
    /// Where entries' data are read ahead of their replay (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) ahead: Ahead,
    /// Index of the last applied entry: replacing it or anything before it
    /// cannot be undone in one pass.
    pub(crate) applied: u64,
    /// Checkpoints of the replay ([`crate::checkpoint`]), when asked for:
    /// taken when an entry is applied, at the end of its record.
    pub ckpt: Option<Box<Checkpoints>>,
    /// Entry records seen (for the checkpoints' spacing).
    seen: u64,
    /// A span was skipped: no checkpoint after it (what it held is
    /// unknown, and a replay from the start stops there).
    damaged: bool,
}

/// An entry waiting to be known final.
struct Pending {
    /// Where the record ends, and the entry records up to it.
    end: u64,
    seen: u64,
    record: usize,
    index: u64,
    term: u64,
    sha1: [u8; 20],
    header_len: usize,
    data: Data,
    body_len: usize,
}

/// A pending entry's data: the bytes, or the number they were handed to
/// the read ahead under (with their length).
enum Data {
    Bytes(Vec<u8>),
    #[cfg(not(target_arch = "wasm32"))]
    Ahead(u64, usize),
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Data::Bytes(b) => b.len(),
            #[cfg(not(target_arch = "wasm32"))]
            Data::Ahead(_, n) => *n,
        }
    }
}

/// What [`Stream::apply`] gets with an entry besides its bytes: its read
/// ahead, if it was handed over (native only, see [`Ahead`]).
#[cfg(not(target_arch = "wasm32"))]
type Read = Option<crate::ahead::Prepared>;
#[cfg(target_arch = "wasm32")]
type Read = ();

/// The one-pass replay's reads ahead ([`crate::ahead`]): where they run,
/// the number of the last entry handed over, and the final entries not
/// applied yet because their reads are not done (at most [`MAX_DUE`]
/// entries or [`MAX_DUE_BYTES`], else the replay waits for the read).
/// Native only: the browser's worker has no thread for them, and its wasm
/// stays smaller without this code.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Default)]
pub(crate) struct Ahead {
    pub(crate) to: Option<Box<dyn ReadAhead>>,
    seq: u64,
    due: std::collections::VecDeque<Pending>,
    due_bytes: usize,
}

#[cfg(not(target_arch = "wasm32"))]
const MAX_DUE: usize = 256;
#[cfg(not(target_arch = "wasm32"))]
const MAX_DUE_BYTES: usize = 32 << 20;

/// Data bytes held for entries not known final before the one-pass replay
/// gives up (a second pass then gives the sizes).
const MAX_PENDING_BYTES: usize = 64 << 20;

impl Stream {
    pub(crate) fn new() -> Stream {
        Stream::with_shared(SharedReplay::default())
    }

    /// A replay that reuses what earlier files of the cluster replayed.
    pub(crate) fn with_shared(shared: SharedReplay) -> Stream {
        Stream {
            ok: true,
            db: None,
            shared,
            diverged: false,
            learned: Vec::new(),
            db_at: 0,
            log_end: 0,
            full: 0,
            diff: 0,
            entries: Vec::new(),
            pending: Default::default(),
            pending_bytes: 0,
            final_to: 0,
            #[cfg(not(target_arch = "wasm32"))]
            ahead: Ahead::default(),
            applied: 0,
            ckpt: None,
            seen: 0,
            damaged: false,
        }
    }

    /// A span of the file was skipped: the replay keeps no checkpoint
    /// from here on.
    pub(crate) fn skipped(&mut self) {
        self.damaged = true;
    }

    /// Offers a checkpoint to `ckpt` after entry `p` was applied (or
    /// taken as known): `db` is the database after it. (Over the fields,
    /// so that `db` may be borrowed from the stream.)
    fn checkpoint(
        ckpt: &mut Option<Box<Checkpoints>>,
        damaged: bool,
        p: &Pending,
        db: Option<&Db>,
        forced: bool,
    ) {
        if damaged {
            return;
        }
        let (Some(c), Some(db)) = (ckpt.as_mut(), db) else {
            return;
        };
        let at = ScanPoint {
            offset: p.end,
            record: p.record + 1,
            format: Format::Clustered,
            log_end: p.index.saturating_add(1),
        };
        c.offer(at, p.index, p.seen, db, forced);
    }

    pub(crate) fn header(&mut self, raw: &RawRecord<'_>, h: &crate::raft::ClusterHeader) {
        match db_from_header(raw, h) {
            Ok(db) => self.db = db,
            Err(_) => self.ok = false,
        }
        self.log_end = h.prev_index().saturating_add(1);
        self.applied = h.prev_index();
        self.final_to = h.prev_index();
        self.db_at = h.prev_index();
        let key = Some((h.name.clone(), h.cluster_id));
        if self.shared.key != key {
            // Another cluster's (or nothing yet): start afresh.
            self.shared = SharedReplay {
                key,
                ..SharedReplay::default()
            };
        }
    }

    /// What earlier files left, handed on untouched (this file's replay
    /// did not finish).
    pub(crate) fn pass_on(&mut self) -> SharedReplay {
        std::mem::take(&mut self.shared)
    }

    /// What this file's replay leaves to the next file of the cluster.
    pub(crate) fn take_shared(&mut self) -> SharedReplay {
        let mut sh = std::mem::take(&mut self.shared);
        for (index, k) in self.learned.drain(..) {
            sh.learn(index, k);
        }
        if self.ok && !self.behind() && !self.diverged && self.db.is_some() {
            let newer = sh.db.as_ref().is_none_or(|(at, _)| self.db_at > *at);
            if newer {
                sh.db = self.db.take().map(|db| (self.db_at, db));
            }
        }
        if let (true, false, Some(c)) = (self.ok, self.diverged, self.ckpt.as_ref()) {
            let mine = c
                .list()
                .iter()
                .filter_map(|cp| Some((cp.applied, cp.db()?.clone())));
            sh.checkpoints.extend(mine);
            ovsdb::order::sort_by_key(&mut sh.checkpoints, |(i, _)| *i);
            sh.checkpoints.dedup_by_key(|(i, _)| *i);
        }
        sh
    }

    fn give_up(&mut self) {
        self.ok = false;
        self.pending.clear();
        self.pending_bytes = 0;
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.ahead.due.clear();
            self.ahead.due_bytes = 0;
        }
        // Checkpoints taken before may hold entries the log replaces later;
        // the second walk's replay, if any, makes its own.
        self.ckpt = None;
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
        self.seen += 1;
        if !self.ok {
            return;
        }
        if e.index < self.log_end {
            if e.index <= self.applied.max(self.final_to) {
                // Replaces an entry already applied.
                return self.give_up();
            }
            while self.pending.back().is_some_and(|p| p.index >= e.index) {
                let p = self.pending.pop_back().expect("checked");
                self.pending_bytes -= p.data.len();
                let stored = (p.header_len + p.body_len) as u64;
                self.count(&p, stored, stored, true);
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
        // Read ahead unless an earlier file's replay knows the entry (then
        // it is taken, not read).
        let known = self
            .shared
            .get(e.index)
            .is_some_and(|k| k.term == e.term && k.sha1 == raw.sha1);
        let data = self.hand_over(known, data);
        self.pending.push_back(Pending {
            end: raw.end(),
            seen: self.seen,
            record: raw.index,
            index: e.index,
            term: e.term,
            sha1: raw.sha1,
            header_len: raw.header_len,
            data,
            body_len: raw.body.len(),
        });
    }

    /// The commit index reached `c`: entries up to it are final.
    pub(crate) fn commit(&mut self, c: u64) {
        while self.ok && self.pending.front().is_some_and(|p| p.index <= c) {
            let p = self.pending.pop_front().expect("checked");
            self.pending_bytes -= p.data.len();
            self.final_to = p.index;
            self.make_due(p);
        }
        self.apply_due(false);
    }

    /// The end of the file: every entry left is final.
    pub(crate) fn finish(&mut self) {
        self.commit(u64::MAX);
        self.apply_due(true);
        self.entries.sort_by_key(|e| e.record);
    }

    /// An entry's data as the replay keeps it: handed to the read ahead,
    /// if there is one and the entry is not `known` from another file.
    #[cfg(not(target_arch = "wasm32"))]
    fn hand_over(&mut self, known: bool, data: &[u8]) -> Data {
        match self.ahead.to.as_mut().filter(|_| !known) {
            Some(to) => {
                self.ahead.seq += 1;
                to.submit(self.ahead.seq, data.to_vec());
                Data::Ahead(self.ahead.seq, data.len())
            }
            None => Data::Bytes(data.to_vec()),
        }
    }

    /// A final entry: applied now without a read ahead, else queued.
    #[cfg(not(target_arch = "wasm32"))]
    fn make_due(&mut self, p: Pending) {
        if self.ahead.to.is_none() {
            return self.apply(p, None);
        }
        self.ahead.due_bytes += p.data.len();
        self.ahead.due.push_back(p);
    }

    /// Applies the final entries in order, as long as their reads ahead
    /// are done (`all`, or more than the replay lets wait: waits for them).
    #[cfg(not(target_arch = "wasm32"))]
    fn apply_due(&mut self, all: bool) {
        while self.ok {
            let Some(front) = self.ahead.due.front() else {
                return;
            };
            let read = match front.data {
                Data::Bytes(_) => None,
                Data::Ahead(seq, _) => {
                    let q = &mut self.ahead;
                    let wait = all || q.due.len() > MAX_DUE || q.due_bytes > MAX_DUE_BYTES;
                    let to = q.to.as_mut().expect("entries read ahead have it");
                    match to.take(seq, wait) {
                        Some(r) => Some(r),
                        None if wait => return self.give_up(),
                        None => return,
                    }
                }
            };
            let p = self.ahead.due.pop_front().expect("checked");
            self.ahead.due_bytes -= p.data.len();
            self.apply(p, read);
        }
    }

    #[cfg(target_arch = "wasm32")]
    fn hand_over(&mut self, _known: bool, data: &[u8]) -> Data {
        Data::Bytes(data.to_vec())
    }

    #[cfg(target_arch = "wasm32")]
    fn make_due(&mut self, p: Pending) {
        self.apply(p, ());
    }

    #[cfg(target_arch = "wasm32")]
    fn apply_due(&mut self, _all: bool) {}

    /// Applies entry `p` (`read`: its read ahead, if it was handed over).
    fn apply(&mut self, mut p: Pending, read: Read) {
        // The same record as an earlier file's, at the same place in the
        // log the earlier replay went through: its sizes are known.
        if let Some(k) = self.shared.get(p.index) {
            if k.term == p.term && k.sha1 == p.sha1 {
                let (full, diff) = (u64::from(k.full), u64::from(k.diff));
                // Taken, not replayed: `db` stays at `db_at`, behind.
                self.applied = p.index;
                self.shared.reused += 1;
                self.count(&p, full, diff, false);
                let sh = &self.shared.checkpoints;
                if let Ok(i) = sh.binary_search_by_key(&p.index, |(i, _)| *i) {
                    Self::checkpoint(&mut self.ckpt, self.damaged, &p, Some(&sh[i].1), true);
                }
                return;
            }
        }
        if p.index < self.shared.end() && p.index >= self.shared.base {
            self.diverged = true;
        }
        if self.behind() {
            // The first entry not known: go on from the shared database
            // if it stands right after the entry taken last.
            match self.shared.db.take() {
                Some((at, db)) if at == self.applied => {
                    self.db = Some(db);
                    self.db_at = at;
                }
                other => {
                    self.shared.db = other;
                    return self.give_up();
                }
            }
        }
        let Some(db) = self.db.as_mut() else {
            return self.give_up();
        };
        let data = std::mem::replace(&mut p.data, Data::Bytes(Vec::new()));
        #[cfg(not(target_arch = "wasm32"))]
        let mut held = match (read, data) {
            (Some(r), _) => r,
            (None, Data::Bytes(b)) => crate::ahead::Prepared::plain(b),
            // Taken from `shared` above, or read: not both missing.
            (None, Data::Ahead(..)) => return self.give_up(),
        };
        #[cfg(not(target_arch = "wasm32"))]
        let (first, bytes) = (db.apply_prepared(&mut held), held.data());
        #[cfg(target_arch = "wasm32")]
        let (Data::Bytes(held), ()) = (data, read);
        #[cfg(target_arch = "wasm32")]
        let (first, bytes) = (db.apply_data_bytes(&held), &held[..]);
        let res = match first {
            Some(r) => r.is_ok().then(|| r.ok()).flatten(),
            None => crate::rawtxn::parse_slice(bytes).ok().and_then(|data| {
                let raw = RawRecord {
                    index: p.record,
                    offset: 0,
                    header_len: p.header_len,
                    line: &[],
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
        self.applied = p.index;
        self.db_at = p.index;
        // A file that left the branch `shared` follows teaches it nothing.
        if !self.diverged {
            if let (Ok(f), Ok(d)) = (u32::try_from(full), u32::try_from(diff)) {
                self.learned.push((
                    p.index,
                    Known {
                        term: p.term,
                        sha1: p.sha1,
                        full: f,
                        diff: d,
                    },
                ));
            }
        }
        self.count(&p, full, diff, false);
        Self::checkpoint(&mut self.ckpt, self.damaged, &p, self.db.as_ref(), false);
    }

    /// Entries were taken from `shared` without replaying them: `db` is
    /// stale (it stands at `db_at`, before `applied`).
    pub(crate) fn behind(&self) -> bool {
        self.applied != self.db_at
    }

    /// Counts entry `p` at `full` and `diff` bytes in the totals and the
    /// per-entry list.
    fn count(&mut self, p: &Pending, full: u64, diff: u64, superseded: bool) {
        self.full += full;
        self.diff += diff;
        self.entries.push(EntrySize {
            record: p.record,
            index: Some(p.index),
            stored: (p.header_len + p.body_len) as u64,
            full,
            diff,
            superseded,
        });
    }
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
/// other. Two walks: a [`Plan`], then a [`CorePass`].
pub fn replay_database(bytes: &[u8], upto: Upto) -> (Option<ovsdb::Database>, Option<LogError>) {
    let mut plan = Plan::default();
    LogScan::scan_all(bytes, ScanOptions::default(), &mut |ev| {
        plan.on_event(&ev);
        Verdict::Keep
    });
    let mut pass = CorePass::new(plan, upto);
    let opts = ScanOptions {
        trust_sha1: true,
        ..ScanOptions::default()
    };
    LogScan::scan_all(bytes, opts, &mut |ev| {
        pass.on_event(&ev);
        Verdict::Keep
    });
    pass.finish()
}

/// The second walk of [`replay_database`]: applies the records a [`Plan`]
/// found usable to an [`ovsdb::Database`] with its JSON txn reader. Keeps
/// the database and the plan, not the records.
pub struct CorePass {
    plan: Plan,
    limit: u64,
    db: Option<ovsdb::Database>,
    error: Option<LogError>,
    done: bool,
}

impl CorePass {
    pub fn new(plan: Plan, upto: Upto) -> CorePass {
        let limit = match (plan.format, upto) {
            (Some(Format::Standalone), Upto::Index(i)) => i,
            (Some(Format::Standalone), _) => u64::MAX,
            _ => plan.limit(upto),
        };
        let error = plan.damage.clone();
        CorePass {
            plan,
            limit,
            db: None,
            error,
            done: false,
        }
    }

    fn stop(&mut self, keep_db: bool, e: LogError) {
        if !keep_db {
            self.db = None;
        }
        self.error = Some(e);
        self.done = true;
    }

    /// Takes one event of the walk.
    pub fn on_event(&mut self, ev: &Event<'_>) {
        use std::sync::Arc;
        let opts = ovsdb::ReplayOptions::default();
        if self.done {
            return;
        }
        let Some(raw) = ev.raw() else { return };
        if raw.index >= self.plan.records {
            self.done = true;
            return;
        }
        let new_db = |raw: &RawRecord<'_>, j: &Json| -> Result<ovsdb::Database, LogError> {
            Ok(ovsdb::Database::new(Arc::new(schema_from(raw, j)?)))
        };
        match ev {
            Event::Schema { raw, schema } => match new_db(raw, schema) {
                Ok(d) => self.db = Some(d),
                Err(e) => self.stop(false, e),
            },
            Event::Txn { raw } => {
                if raw.index as u64 > self.limit {
                    self.done = true;
                    return;
                }
                let j = match raw.json() {
                    Ok(j) => j,
                    Err(e) => return self.stop(true, e),
                };
                let Some(d) = self.db.as_mut() else {
                    self.done = true;
                    return;
                };
                if let Err(e) = d.apply_txn_json(&j, opts) {
                    self.stop(true, replay_err(raw, e.to_string()));
                }
            }
            Event::Header { raw, header } => {
                let Some(s) = &header.snapshot else { return };
                let Some((schema, txn)) = split_data(&s.data) else {
                    return self.stop(false, replay_err(raw, "bad prev_data".into()));
                };
                let mut d = match new_db(raw, schema) {
                    Ok(d) => d,
                    Err(e) => return self.stop(false, e),
                };
                if !txn.is_null() {
                    if let Err(e) = d.apply_txn_json(txn, opts) {
                        return self.stop(false, replay_err(raw, format!("snapshot: {e}")));
                    }
                }
                self.db = Some(d);
            }
            Event::Entry {
                raw,
                entry,
                data: Some(bytes),
                ..
            } => {
                if self.plan.structure.superseded.contains(&raw.index) {
                    return;
                }
                if entry.index > self.limit {
                    self.done = true;
                    return;
                }
                let data = match crate::rawtxn::parse_slice(bytes) {
                    Ok(d) => d,
                    Err(m) => return self.stop(true, raw.error(ErrorKind::BadJson { message: m })),
                };
                let db = &mut self.db;
                let res = match split_data(&data) {
                    None | Some((Json::Null, Json::Null)) => {
                        Err("invalid commit format".to_string())
                    }
                    Some((Json::Null, txn)) => match db.as_mut() {
                        Some(d) => d
                            .apply_txn_json(txn, opts)
                            .map(|_| ())
                            .map_err(|e| e.to_string()),
                        None => Err("transaction before any schema".into()),
                    },
                    Some((schema, Json::Null)) => match (db.as_ref(), schema_from(raw, schema)) {
                        (Some(d), Ok(s)) => d
                            .convert(Arc::new(s))
                            .map(|n| *db = Some(n))
                            .map_err(|e| e.to_string()),
                        (None, _) => Err("conversion before any schema".into()),
                        (_, Err(e)) => return self.stop(true, e),
                    },
                    Some((schema, txn)) => match new_db(raw, schema) {
                        Ok(mut d) => {
                            let r = d
                                .apply_txn_json(txn, opts)
                                .map(|_| ())
                                .map_err(|e| e.to_string());
                            *db = Some(d);
                            r
                        }
                        Err(e) => return self.stop(true, e),
                    },
                };
                if let Err(m) = res {
                    self.stop(true, replay_err(raw, m));
                }
            }
            _ => {}
        }
    }

    /// The database reached and the first error.
    pub fn finish(self) -> (Option<ovsdb::Database>, Option<LogError>) {
        (self.db, self.error)
    }
}

/// How the walk of a [`ReplayPass`] ends: with the replay, or with the
/// pass for a second walk over the same bytes.
pub enum ReplayEnd {
    Done(Box<Replay>),
    Again(Box<ReplayPass>),
}

/// The log replay, as a consumer of [`LogScan`] events (feed it every
/// event of a walk, then [`ReplayPass::finish`]).
///
/// One walk is enough when the limit is known before the walk (`Upto::All`,
/// `Upto::Index`, or any standalone file) and no entry replaces an earlier
/// one: entries are applied as they are read. A clustered file replayed to
/// its commit index (known only at the end), or whose log replaces entries
/// it already applied (an [`Event::Truncate`]), needs a second walk: the
/// first only makes the [`Plan`] (which entries are superseded, the commit
/// index, where the usable records end), the second applies.
///
/// Memory: the database being built, the plan (16 bytes per entry of the
/// current log plus the superseded record numbers) and one [`EntrySize`]
/// per transaction-carrying record; never the records themselves.
pub struct ReplayPass {
    upto: Upto,
    /// First walk: the plan being made; second walk: the first's plan.
    plan: Plan,
    second: bool,
    /// First walk of a clustered file to its commit index: plan only.
    plan_only: bool,
    /// First walk: an entry replaced entries already accounted for.
    again: bool,
    limit: u64,
    stopped: bool,
    done: bool,
    /// [`ReplayPass::standalone`]: damage does not stop the replay.
    through_damage: bool,
    r: Replay,
    ckpt: Option<Box<Checkpoints>>,
    /// [`ReplayPass::net`]: the records' net change, applied at the end.
    net: Option<crate::net::NetChange>,
    /// Applying the net change failed (the walk must be made again
    /// without it).
    net_failed: bool,
}

impl ReplayPass {
    /// A second walk whose plan is given: the entry records in
    /// `superseded` are skipped, records from `stop_at` on are not looked
    /// at; `commit` and `prev_index` are the file's highest commit index
    /// and snapshot index (for [`Upto::Committed`] and the result). Ends
    /// with [`ReplayPass::finish`].
    pub fn new(
        superseded: std::collections::HashSet<usize>,
        commit: u64,
        prev_index: u64,
        stop_at: usize,
        upto: Upto,
    ) -> ReplayPass {
        let plan = Plan {
            structure: Structure {
                superseded,
                commit,
                prev_index,
                surviving: Vec::new(),
            },
            records: stop_at,
            format: Some(Format::Clustered),
            ..Plan::default()
        };
        let limit = plan.limit(upto);
        let mut p = ReplayPass::first(upto);
        p.r.format = Some(Format::Clustered);
        ReplayPass {
            plan,
            second: true,
            limit,
            ..p
        }
    }

    /// A walk over a standalone file that replays every txn record up to
    /// `upto`, damage or not (the caller decides what damage means). Ends
    /// with [`ReplayPass::finish`].
    pub fn standalone(upto: Upto) -> ReplayPass {
        let mut p = ReplayPass::first(upto);
        p.through_damage = true;
        p.r.format = Some(Format::Standalone);
        p
    }

    /// The first walk of a replay up to `upto`; ends with
    /// [`ReplayPass::end`].
    pub fn first(upto: Upto) -> ReplayPass {
        ReplayPass {
            upto,
            plan: Plan::default(),
            second: false,
            plan_only: false,
            again: false,
            limit: match upto {
                Upto::Index(i) => i,
                _ => u64::MAX,
            },
            stopped: false,
            done: false,
            through_damage: false,
            r: Replay {
                format: None,
                db: None,
                applied: 0,
                commit_index: None,
                entries: Vec::new(),
                error: None,
                skipped: Vec::new(),
                checkpoints: None,
                resume_at: None,
            },
            ckpt: None,
            net: None,
            net_failed: false,
        }
    }

    /// Reaches the database by the records' net change
    /// ([`crate::net`]): the entries' sizes in other modes are not
    /// computed (they keep their stored size), and the database is the
    /// same as a replay's when every record names every row its
    /// transaction changed, as ovsdb-server writes them.
    pub(crate) fn net(
        mut self,
        present: Option<std::sync::Arc<crate::net::Present>>,
    ) -> ReplayPass {
        self.net = Some(crate::net::NetChange::against(present));
        self
    }

    /// Applying the net change failed: the walk must be made again
    /// without it.
    pub(crate) fn net_failed(&self) -> bool {
        self.net_failed
    }

    /// Offers a record's txn to the net change (`wrapped`: a Raft `data`
    /// value). Some(true): taken. Some(false): not taken (no net change,
    /// or not a plain transaction, and what was taken is applied): apply
    /// the record as a replay does. None: applying failed, the walk is
    /// over.
    fn offer_net(&mut self, bytes: &[u8], wrapped: bool) -> Option<bool> {
        let (Some(net), Some(db)) = (self.net.as_mut(), self.r.db.as_ref()) else {
            return Some(false);
        };
        if net.take(db, bytes, wrapped) {
            return Some(true);
        }
        self.flush_net().then_some(false)
    }

    /// Applies the net change taken so far; false when that failed (the
    /// walk is over).
    pub(crate) fn flush_net(&mut self) -> bool {
        let (Some(net), Some(db)) = (self.net.as_mut(), self.r.db.as_mut()) else {
            return true;
        };
        if net.records() == 0 {
            return true;
        }
        if net.apply(db).is_err() {
            self.net_failed = true;
            self.done = true;
            return false;
        }
        true
    }

    /// Keeps checkpoints of the database on the way (see
    /// [`crate::checkpoint`]); the replay's [`Replay::checkpoints`] then
    /// holds them.
    pub fn with_checkpoints(mut self, policy: Policy) -> ReplayPass {
        self.ckpt = Some(Box::new(Checkpoints::new(policy)));
        self
    }

    /// Resumes at the checkpoint of `store` nearest before record
    /// `record` (the database there) and keeps adding checkpoints to the
    /// store past its last one ([`Replay::checkpoints`] gives it back).
    /// Returns where the walk resumes: feed the events of a
    /// [`LogScan::resume`] there, over the file's bytes from its offset.
    pub fn resume_with(&mut self, mut store: Box<Checkpoints>, record: usize) -> ScanPoint {
        let cp = store.before_record(record).clone();
        store.resume_at(&cp);
        self.resume_at(&cp.at, cp.db().cloned(), cp.applied);
        self.ckpt = Some(store);
        cp.at
    }

    /// Starts from a checkpoint's database (the walk resumes after it).
    pub(crate) fn resume_at(&mut self, at: &ScanPoint, db: Option<Db>, applied: u64) {
        self.r.db = db;
        self.r.applied = applied;
        if at.record > 0 {
            self.r.format = Some(at.format);
            if at.format == Format::Clustered {
                self.r.resume_at = Some(*at);
            }
            if !self.second {
                // What the first walk would have learnt of the records
                // before (a standalone file's: its format and count).
                self.plan.format = Some(at.format);
                self.plan.records = at.record;
            }
        }
    }

    /// Whether the replay has what it was asked for (or cannot go on):
    /// the walk may stop.
    pub fn reached(&self) -> bool {
        self.done
            || self.stopped
            || (self.limit != u64::MAX && self.r.db.is_some() && self.r.applied >= self.limit)
    }

    /// A jump through the op index: `net` is the change from the
    /// database the pass resumed with to the one at `applied` (the walk it
    /// replaces would have ended there), applied as a walk's net change
    /// is ([`ReplayPass::flush_net`]).
    pub(crate) fn landed(
        &mut self,
        net: crate::net::NetChange,
        applied: u64,
        resume_at: Option<ScanPoint>,
    ) {
        self.net = Some(net);
        self.r.applied = applied;
        if resume_at.is_some() {
            self.r.resume_at = resume_at;
        }
        self.done = true;
    }

    /// A second walk (made by [`ReplayPass::new`] or for
    /// [`ReplayEnd::Again`]): ends with [`ReplayPass::finish`].
    pub fn is_second(&self) -> bool {
        self.second
    }

    /// What the first walk learnt (so far, or all of it on a second
    /// walk).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The scanner options this consumer needs (a walk that only plans
    /// does not read the transactions on the way).
    pub fn options(&self) -> ScanOptions {
        ScanOptions {
            txn: self.second || self.upto != Upto::Committed,
            ..ScanOptions::default()
        }
    }

    /// Takes one event of the walk.
    pub fn on_event(&mut self, ev: &Event<'_>) {
        if !self.second {
            self.plan.on_event(ev);
            match ev {
                Event::Header { .. } if self.upto == Upto::Committed => self.plan_only = true,
                Event::Truncate { .. } if self.plan.damage.is_none() => {
                    self.again = true;
                    self.done = true;
                }
                _ => {}
            }
            if (self.plan.damage.is_some() && !self.through_damage) || self.plan_only {
                self.done = true;
            }
        }
        if self.done {
            return;
        }
        let Some(raw) = ev.raw() else { return };
        if self.second && raw.index >= self.plan.records {
            self.done = true;
            return;
        }
        if matches!(ev, Event::Schema { .. } | Event::Header { .. }) && !self.flush_net() {
            return;
        }
        match ev {
            Event::Schema { raw, schema } => match schema_from(raw, schema) {
                Ok(s) => self.r.db = Some(Db::new(s)),
                Err(e) => self.fail(e),
            },
            Event::Txn { raw } => self.standalone_txn(raw),
            Event::Header { raw, header } => match db_from_header(raw, header) {
                Ok(Some(db)) => {
                    self.r.db = Some(db);
                    self.r.applied = header.prev_index();
                }
                Ok(None) => {}
                Err(e) => self.fail(e),
            },
            Event::Entry {
                raw,
                entry,
                data: Some(data_bytes),
                txn,
                ..
            } => self.entry(raw, entry.index, data_bytes, txn.as_ref()),
            _ => {}
        }
        if let Some(c) = self.ckpt.as_mut() {
            let usable = !self.done
                && !self.stopped
                && self.r.error.is_none()
                && (self.second || self.plan.damage.is_none());
            c.on_record(ev, raw, usable, self.r.db.as_ref(), self.r.applied);
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
        if self.r.applied < self.limit {
            match self.offer_net(raw.body, false) {
                Some(true) => {
                    self.r.entries.push(plain);
                    self.r.applied += 1;
                    return;
                }
                Some(false) => {}
                None => return,
            }
        }
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
                if let Some(c) = self.ckpt.as_mut() {
                    c.note_ops(db, raw, raw.body, false, self.r.applied);
                }
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
        // On a first walk nothing read so far is known to be superseded
        // (a later replacement sends the replay to a second walk).
        if self.second && self.plan.structure.superseded.contains(&raw.index) {
            self.r.entries.push(plain(true));
            return;
        }
        if self.stopped || index > self.limit {
            // Not applied: sizes in other modes unknown; keep stored.
            self.stopped = true;
            self.r.entries.push(plain(false));
            return;
        }
        let after = ScanPoint {
            offset: raw.end(),
            record: raw.index + 1,
            format: Format::Clustered,
            log_end: index.saturating_add(1),
        };
        match self.offer_net(data_bytes, true) {
            Some(true) => {
                self.r.entries.push(plain(false));
                self.r.applied = index;
                self.r.resume_at = Some(after);
                return;
            }
            Some(false) => {}
            None => return,
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
                self.r.resume_at = Some(after);
                if let (Some(c), Some(db)) = (self.ckpt.as_mut(), self.r.db.as_ref()) {
                    c.note_ops(db, raw, data_bytes, true, index);
                }
            }
            Err(e) => self.fail(e),
        }
    }

    /// Ends the walk that `scan` made: the replay, or the pass for a
    /// second walk (feed it every event of a new [`LogScan`] with its
    /// [`ReplayPass::options`] over the same bytes, then finish it).
    pub fn end(self, scan: &LogScan) -> ReplayEnd {
        if self.second {
            return ReplayEnd::Done(Box::new(self.into_replay()));
        }
        if self.plan.records == 0 && self.plan.skipped.is_empty() {
            let mut r = self.r;
            r.db = None;
            r.checkpoints = seal(self.ckpt, &self.plan, r.format, &self.plan.damage, None, 0);
            r.error = self.plan.damage;
            return ReplayEnd::Done(Box::new(r));
        }
        let mut ckpt = self.ckpt;
        let format = self
            .plan
            .format
            .or_else(|| scan.format())
            .unwrap_or(Format::Clustered);
        if format == Format::Clustered && (self.again || self.plan_only) {
            let limit = self.plan.limit(self.upto);
            if let Some(c) = ckpt.as_mut() {
                c.restart(&self.plan.structure.superseded);
            }
            return ReplayEnd::Again(Box::new(ReplayPass {
                ckpt,
                second: true,
                plan_only: false,
                again: false,
                limit,
                stopped: false,
                done: false,
                r: Replay {
                    format: Some(format),
                    ..ReplayPass::first(self.upto).r
                },
                // What the first walk took went with its database.
                net: self.net.as_ref().map(|_| crate::net::NetChange::new()),
                ..self
            }));
        }
        let mut p = ReplayPass { ckpt, ..self };
        p.r.format = Some(format);
        ReplayEnd::Done(Box::new(p.into_replay()))
    }

    /// The replay of a pass made with [`ReplayPass::new`] or
    /// [`ReplayPass::standalone`] whose walk is over; `error` is the error
    /// that ended the walk, if any (kept unless a replay error came
    /// first).
    pub fn finish(mut self, error: Option<LogError>) -> Replay {
        self.flush_net();
        let mut r = self.r;
        if r.format == Some(Format::Clustered) {
            r.commit_index = Some(self.plan.commit_index());
        }
        if r.error.is_none() {
            r.error = error;
        }
        let clean_to = r.applied;
        r.checkpoints = seal(
            self.ckpt,
            &self.plan,
            r.format,
            &r.error,
            r.db.as_ref(),
            clean_to,
        );
        r
    }

    /// The replay of a pass whose walk is over.
    pub(crate) fn into_replay(mut self) -> Replay {
        self.flush_net();
        let mut r = self.r;
        let format = r.format.or(self.plan.format).unwrap_or(Format::Clustered);
        r.format = Some(format);
        if format == Format::Clustered {
            r.commit_index = Some(self.plan.commit_index());
        }
        if r.error.is_none() {
            r.error = self.plan.damage.clone();
        }
        r.checkpoints = seal(
            self.ckpt,
            &self.plan,
            Some(format),
            &self.plan.damage,
            r.db.as_ref(),
            r.applied,
        );
        r.skipped = self.plan.skipped;
        r
    }
}

/// The checkpoints of a replay whose walk is over, with what a jump needs
/// of the replay.
fn seal(
    ckpt: Option<Box<Checkpoints>>,
    plan: &Plan,
    format: Option<Format>,
    damage: &Option<LogError>,
    end_db: Option<&Db>,
    clean_to: u64,
) -> Option<Box<Checkpoints>> {
    let mut c = ckpt?;
    c.seal(
        plan,
        format.unwrap_or(Format::Clustered),
        damage.clone(),
        end_db,
        clean_to,
    );
    Some(c)
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

#[cfg(test)]
mod shared_tests {
    use super::*;

    fn known(term: u64) -> Known {
        Known {
            term,
            sha1: [1; 20],
            full: 10,
            diff: 5,
        }
    }

    #[test]
    fn learning_keeps_holes_small_and_stops_at_a_jump() {
        let mut s = SharedReplay::default();
        s.learn(5, known(1));
        s.learn(7, known(1));
        assert_eq!((s.base, s.end()), (5, 8));
        assert!(s.get(6).is_none(), "a hole is not an entry");
        assert_eq!(s.get(7).map(|k| k.term), Some(1));
        // A made-up index far away: nothing learnt, no allocation of the gap.
        s.learn(u64::MAX / 2, known(2));
        s.learn(8 + MAX_HOLE + 1, known(2));
        assert_eq!(s.end(), 8);
        s.learn(8, known(3));
        assert_eq!(s.end(), 9);
    }
}
