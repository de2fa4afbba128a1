//! The summary's one-walk replay of a clustered file (`Stream`): entries
//! applied while they are read, held until they are known final, each
//! counted with its sizes; and what the replays of one cluster's files
//! share ([`SharedReplay`]), so that their common committed prefix is
//! replayed once.

#[cfg(not(target_arch = "wasm32"))]
use crate::ahead::ReadAhead;
use crate::checkpoint::Checkpoints;
use crate::framing::{Format, RawRecord};
use crate::replay::Db;
use crate::replay_pass::{apply_data, db_from_header};
use crate::scan::ScanPoint;
use crate::sizes::{record_size, EntrySize};

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
        // Through `ovsdb::order`: no sort instance of its own (once per
        // file; the web worker's wasm is held under 1 MB).
        ovsdb::order::sort_by_key(&mut self.entries, |e| e.record);
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
