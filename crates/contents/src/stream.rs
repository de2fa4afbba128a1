//! The contents explorer over a file that is not held in memory: the
//! caller walks the file (a fresh [`LogScan`] per walk, chunks of any
//! size) and hands every event to these consumers.
//!
//! * [`DatabaseAt`]: the database at an index, in one walk or two (the
//!   [`ovsdb_log::replay_pass::ReplayPass`] says when it needs a second one).
//! * [`Opener`]: the first open of a file: the load pass ([`Loader`]:
//!   entries and the row → entries [`crate::HistoryIndex`]) and a replay
//!   in the same walk; a second walk replays to the commit index when the
//!   log holds uncommitted entries.
//!
//! Only the replayed database and the load pass's entry list are kept,
//! never the file.

use crate::load::{Loader, Log};
use ovsdb_log::checkpoint::{Checkpoint, Checkpoints, Jump, Policy};
use ovsdb_log::replay_pass::{ReplayEnd, ReplayPass};
use ovsdb_log::{Event, LogError, LogScan, ScanOptions, ScanPoint, Upto, Verdict};

/// The database at `upto`, fed walk by walk:
/// `while let Some(opts) = d.next_walk() { walk with
/// LogScan::resume(opts, &d.start()) over the bytes from
/// d.start().offset, feeding d.on_event (the walk may stop once
/// d.reached()), then d.end(&scan) }`, then [`DatabaseAt::finish`]. Made
/// [`DatabaseAt::from_checkpoints`], the walk starts at the nearest
/// checkpoint of an earlier replay; otherwise at the start of the file
/// (`LogScan::resume` there is `LogScan::new`).
pub struct DatabaseAt {
    state: State,
}

enum State {
    /// Before the first walk.
    Start(Upto),
    /// A replay resumed at a checkpoint: before its walk, and walking.
    Jump(Box<Jump>, bool),
    /// A walk is under way (first or second).
    Walking(Box<ReplayPass>, bool),
    /// The second walk is needed.
    Again(Box<ReplayPass>),
    Done(Box<ovsdb_log::Replay>),
    Taken,
}

impl DatabaseAt {
    pub fn new(upto: Upto) -> DatabaseAt {
        DatabaseAt {
            state: State::Start(upto),
        }
    }

    /// The database at `index`, from the nearest checkpoint of `ck` (the
    /// checkpoints an [`Opener`]'s replay kept, [`Opened::checkpoints`]):
    /// one walk over the bytes from [`DatabaseAt::start`] on. Without
    /// checkpoints, [`DatabaseAt::new`].
    pub fn from_checkpoints(ck: Option<&Checkpoints>, index: u64) -> DatabaseAt {
        DatabaseAt::from_checkpoints_near(ck, index, None)
    }

    /// [`DatabaseAt::from_checkpoints`], starting at the best of `recent`
    /// (where earlier ones landed: [`DatabaseAt::landing`]) when it is
    /// closer than the nearest checkpoint, so a step forward reads only
    /// the records in between.
    pub fn from_checkpoints_near<'a>(
        ck: Option<&Checkpoints>,
        index: u64,
        recent: impl IntoIterator<Item = &'a Checkpoint>,
    ) -> DatabaseAt {
        match ck.and_then(|c| c.jump_database_from(index, recent)) {
            Some(j) => DatabaseAt {
                state: State::Jump(Box::new(j), false),
            },
            None => DatabaseAt::new(Upto::Index(index)),
        }
    }

    /// Where the next walk starts (the start of the file but after a
    /// checkpoint).
    pub fn start(&self) -> ScanPoint {
        match &self.state {
            State::Jump(j, _) => j.start(),
            _ => ScanPoint::START,
        }
    }

    /// The walk under way may stop (a walk from a checkpoint that reached
    /// its index; a walk from the start reads the whole file, whose end
    /// may supersede entries).
    pub fn reached(&self) -> bool {
        matches!(&self.state, State::Jump(j, true) if j.reached())
    }

    /// The byte ranges of the file to read back before any walk (a jump
    /// through the checkpoints' op index, [`Jump::reads`]): give each to
    /// [`DatabaseAt::fill`]. Empty when there are none.
    pub fn reads(&self) -> Vec<(u64, u64)> {
        self.jump().map_or_else(Vec::new, Jump::reads)
    }

    /// A jump before its walk (the op index's reads, its preview).
    fn jump(&self) -> Option<&Jump> {
        match &self.state {
            State::Jump(j, false) => Some(j),
            _ => None,
        }
    }

    fn jump_mut(&mut self) -> Option<&mut Jump> {
        match &mut self.state {
            State::Jump(j, false) => Some(j),
            _ => None,
        }
    }

    /// Before its reads, a jump through the op index tells what the
    /// database holds in `table` and every table's row count
    /// ([`Jump::preview`]); the rows on screen are then read and built
    /// on their own ([`DatabaseAt::preview_reads`],
    /// [`DatabaseAt::preview_rows`]) and the landing later, a slice at a
    /// time ([`DatabaseAt::build`]). None for any other replay.
    pub fn preview(&self, table: &str) -> Option<ovsdb_log::net::Preview> {
        self.jump()?.preview(table)
    }

    /// The byte ranges rows `uuids` of `table` need (to
    /// [`DatabaseAt::fill`]).
    pub fn preview_reads(&self, table: &str, uuids: &[ovsdb::Uuid]) -> Vec<(u64, u64)> {
        self.jump()
            .map_or_else(Vec::new, |j| j.preview_reads(table, uuids))
    }

    /// Rows `uuids` of `table` at the index (None: not there), once their
    /// ranges are in.
    pub fn preview_rows(
        &self,
        table: &str,
        uuids: &[ovsdb::Uuid],
    ) -> Result<Vec<Option<ovsdb::db::RowRef>>, String> {
        self.jump()
            .ok_or("no preview of this replay")?
            .preview_rows(table, uuids)
    }

    /// A jump through the op index that has not landed, moved on to
    /// `index` ([`Checkpoints::step_jump`]); `Err` gives it back when it
    /// cannot move (then make a new one).
    pub fn step(self, ck: Option<&Checkpoints>, index: u64) -> Result<DatabaseAt, DatabaseAt> {
        match (self.state, ck) {
            (State::Jump(j, false), Some(ck)) => match ck.step_jump(j, index) {
                Ok(j) => Ok(DatabaseAt {
                    state: State::Jump(j, false),
                }),
                Err(j) => Err(DatabaseAt {
                    state: State::Jump(j, false),
                }),
            },
            (state, _) => Err(DatabaseAt { state }),
        }
    }

    /// Builds up to `budget` rows of a jump's landing once every range
    /// is in ([`Jump::build`]); true when none is left (and for any other
    /// replay).
    pub fn build(&mut self, budget: usize) -> bool {
        self.jump_mut().is_none_or(|j| j.build(budget))
    }

    /// The file's bytes from `start` on, one of [`DatabaseAt::reads`].
    pub fn fill(&mut self, start: u64, bytes: &[u8]) {
        if let Some(j) = self.jump_mut() {
            j.fill(start, bytes);
        }
    }

    /// Options of the next walk's scanner, or None when no walk is needed
    /// (call [`DatabaseAt::finish`]). Starts that walk.
    pub fn next_walk(&mut self) -> Option<ScanOptions> {
        match std::mem::replace(&mut self.state, State::Taken) {
            // Through the op index: its reads are in, nothing to walk
            // unless applying them failed.
            State::Jump(j, false) if j.by_index() => match j.finish() {
                Ok(r) => {
                    self.state = State::Done(Box::new(r));
                    None
                }
                Err(plain) => {
                    let o = plain.scan_options();
                    self.state = State::Jump(plain, true);
                    Some(o)
                }
            },
            State::Jump(j, false) => {
                let o = j.scan_options();
                self.state = State::Jump(j, true);
                Some(o)
            }
            State::Start(upto) => {
                let p = ReplayPass::first(upto);
                let o = p.options();
                self.state = State::Walking(Box::new(p), false);
                Some(o)
            }
            State::Again(p) => {
                // The second walk trusts the hashes the first verified.
                let o = ScanOptions {
                    trust_sha1: true,
                    ..p.options()
                };
                self.state = State::Walking(p, true);
                Some(o)
            }
            s @ State::Walking(..) => {
                self.state = s;
                None
            }
            s => {
                self.state = s;
                None
            }
        }
    }

    /// Takes one event of the current walk.
    pub fn on_event(&mut self, ev: &Event<'_>) {
        match &mut self.state {
            State::Walking(p, _) => p.on_event(ev),
            State::Jump(j, true) => j.on_event(ev),
            _ => {}
        }
    }

    /// Ends the current walk that `scan` made.
    pub fn end(&mut self, scan: &LogScan) {
        self.state = match std::mem::replace(&mut self.state, State::Taken) {
            State::Walking(p, false) => match p.end(scan) {
                ReplayEnd::Done(r) => State::Done(r),
                ReplayEnd::Again(p) => State::Again(p),
            },
            State::Walking(p, true) => match p.end(scan) {
                ReplayEnd::Done(r) => State::Done(r),
                // A second walk always ends the replay.
                ReplayEnd::Again(_) => State::Taken,
            },
            State::Jump(j, true) => match j.end(scan) {
                Ok(r) => State::Done(Box::new(r)),
                // The net change did not apply: walk again, plainly.
                Err(plain) => State::Jump(plain, false),
            },
            s => s,
        };
    }

    /// The replay, once no walk is needed any more (None before).
    pub fn replay(&self) -> Option<&ovsdb_log::Replay> {
        match &self.state {
            State::Done(r) => Some(r),
            _ => None,
        }
    }

    /// The replay, once no walk is needed any more.
    pub fn into_replay(self) -> Option<ovsdb_log::Replay> {
        match self.state {
            State::Done(r) => Some(*r),
            _ => None,
        }
    }

    /// Where the replay landed, as a checkpoint a later step forward may
    /// start from ([`DatabaseAt::from_checkpoints_near`]); None before the
    /// replay is over, or without a database.
    pub fn landing(&self) -> Option<Checkpoint> {
        self.replay().and_then(Checkpoint::after)
    }

    /// The database (as [`crate::database_at`] gives it): `Err` when no
    /// schema was read; a later error comes with the database before it.
    pub fn finish(self) -> Result<(ovsdb::Database, Option<LogError>), String> {
        let r = self
            .finish_reached()
            .ok_or("the file was not read to its end")?;
        match (r.db, r.error) {
            (Some(db), err) => Ok((db, err)),
            (None, Some(e)) => Err(e.to_string()),
            (None, None) => Err("no schema in this file".into()),
        }
    }

    /// [`DatabaseAt::finish`] with the file's format and the position the
    /// replay reached; None when the file was not read to its end.
    pub fn finish_reached(self) -> Option<Reached> {
        match self.state {
            State::Done(r) => Some(Reached {
                format: r.format,
                db: r.db.map(|db| db.into_core()),
                error: r.error,
                index: r.applied,
            }),
            _ => None,
        }
    }
}

/// Where a [`DatabaseAt`] landed.
pub struct Reached {
    pub format: Option<ovsdb_log::Format>,
    /// The database; None when no schema was read (`error` says why, if
    /// the file is damaged there).
    pub db: Option<ovsdb::Database>,
    /// The first damage met; everything before it was used.
    pub error: Option<LogError>,
    /// The last log index applied (clustered) or the count of txn records
    /// applied (standalone). An index asked for beyond the file's ends
    /// lands on the nearest one (a snapshot's index, the last entry, the
    /// last record before damage), which this tells.
    pub index: u64,
}

/// Where an explorer position stands in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// Lowest index (the snapshot's; 0 for standalone files).
    pub first: u64,
    /// Highest index of an applied entry (standalone: the txn count).
    pub last: u64,
    /// The default position: the commit index (standalone: `last`).
    pub committed: u64,
}

/// The range of positions of a loaded file.
pub fn range(log: &Log<'_>) -> Range {
    match log.format {
        Some(ovsdb_log::Format::Standalone) => {
            let n = log.entries.len() as u64;
            Range {
                first: 0,
                last: n,
                committed: n,
            }
        }
        _ => {
            let applied = log.entries.iter().filter(|e| !e.superseded);
            let first = applied.clone().filter_map(|e| e.index).min().unwrap_or(0);
            let last = applied.filter_map(|e| e.index).max().unwrap_or(first);
            let committed = log.commit_index.unwrap_or(last).clamp(first, last);
            Range {
                first,
                last,
                committed,
            }
        }
    }
}

/// The first open of a file: the load pass and a replay of every entry in
/// one walk; when the position wanted is not where that replay ended (an
/// index given, or uncommitted entries after the commit index), one more
/// [`DatabaseAt`] to it.
pub struct Opener {
    loader: Loader,
    all: DatabaseAt,
    at: Option<u64>,
}

/// What [`Opener::finish`] gives: the loaded file (its `bytes` empty, the
/// entries are read back by offset), the position and its database (or
/// why there is none), and the second walk still to make, if any.
pub struct Opened {
    pub log: Log<'static>,
    pub range: Range,
    pub at: u64,
    pub db: Result<(ovsdb::Database, Option<LogError>), String>,
    /// Some: the database above is not at `at`; make this walk and use
    /// its result.
    pub again: Option<DatabaseAt>,
    /// The checkpoints the walk's replay kept (None when its log replaces
    /// entries it had applied), for [`DatabaseAt::from_checkpoints`].
    pub checkpoints: Option<Box<Checkpoints>>,
}

impl Opener {
    /// `at`: the position wanted (None: the last committed entry).
    pub fn new(at: Option<u64>) -> Opener {
        Opener::with_policy(at, Policy::default())
    }

    /// [`Opener::new`] whose replay keeps checkpoints by `policy`.
    pub fn with_policy(at: Option<u64>, policy: Policy) -> Opener {
        let all = DatabaseAt {
            state: State::Walking(
                Box::new(ReplayPass::first(Upto::All).with_checkpoints(policy)),
                false,
            ),
        };
        Opener {
            loader: Loader::new(),
            all,
            at,
        }
    }

    /// The walk's scanner options (the load pass's; the replay to the end
    /// reads the transactions too).
    pub fn options(&self) -> ScanOptions {
        ScanOptions {
            txn: true,
            ..self.loader.options()
        }
    }

    pub fn on_event(&mut self, ev: &Event<'_>) -> Verdict {
        self.all.on_event(ev);
        self.loader.on_event(ev)
    }

    pub fn finish(mut self, scan: &LogScan) -> Opened {
        self.all.end(scan);
        let log = self.loader.finish(scan, &[]);
        let range = range(&log);
        let at = self
            .at
            .unwrap_or(range.committed)
            .clamp(range.first, range.last.max(range.first));
        let checkpoints = match &mut self.all.state {
            State::Done(r) => r.checkpoints.take(),
            _ => None,
        };
        let ended = self.all.replay().map(|r| r.applied);
        let complete = self.all.replay().is_some();
        if complete && ended == Some(at) {
            return Opened {
                log,
                range,
                at,
                db: self.all.finish(),
                again: None,
                checkpoints,
            };
        }
        Opened {
            log,
            range,
            at,
            db: Err("not read yet".into()),
            again: Some(DatabaseAt::from_checkpoints(checkpoints.as_deref(), at)),
            checkpoints,
        }
    }
}

/// `sizes` over a file streaming by: make the walks of a
/// [`DatabaseAt`]`(Upto::All)` first (its replay gives each entry's size
/// in the other storage modes), then one more walk feeding this; its
/// report is [`crate::sizes::sizes`]' (the compaction what-if apart:
/// [`crate::sizes::compaction_of`] with the database at the index wanted
/// and [`SizesStream::bytes`]).
pub struct SizesStream {
    pass: crate::sizes::SizesPass,
    next: usize,
    bytes: u64,
}

impl SizesStream {
    pub fn new(log: &Log<'_>, replay: &ovsdb_log::Replay) -> SizesStream {
        SizesStream {
            pass: crate::sizes::SizesPass::new(log, replay),
            next: 0,
            bytes: 0,
        }
    }

    /// Counts a chunk of the walk (for the file's length).
    pub fn chunk(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
    }

    /// The bytes counted by [`SizesStream::chunk`].
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Takes one event of the walk (the entries of `log`, the load pass of
    /// the same file, are met in file order).
    pub fn on_event(&mut self, log: &Log<'_>, ev: &Event<'_>) {
        let Some(raw) = ev.raw() else { return };
        while let Some(e) = log.entries.get(self.next) {
            if e.record > raw.index {
                break;
            }
            self.next += 1;
            if e.record == raw.index {
                self.pass.entry(e, raw.body);
                break;
            }
        }
    }

    pub fn finish(self) -> crate::sizes::SizeReport {
        self.pass.finish()
    }
}

/// Runs a [`DatabaseAt`] over bytes held in memory.
pub fn database_at_bytes(
    bytes: &[u8],
    upto: Upto,
) -> Result<(ovsdb::Database, Option<LogError>), String> {
    let mut d = DatabaseAt::new(upto);
    walk_all(bytes, &mut d);
    d.finish()
}

/// [`database_at_bytes`] with the format and the position reached
/// ([`DatabaseAt::finish_reached`]).
pub fn database_reached_bytes(bytes: &[u8], upto: Upto) -> Result<Reached, String> {
    let mut d = DatabaseAt::new(upto);
    walk_all(bytes, &mut d);
    d.finish_reached()
        .ok_or_else(|| "the file was not read to its end".into())
}

/// Makes every walk a [`DatabaseAt`] asks for over `bytes` (the whole
/// file), each from where it starts.
pub fn walk_all(bytes: &[u8], d: &mut DatabaseAt) {
    walk_chunked(bytes, d, usize::MAX);
}

fn walk_chunked(bytes: &[u8], d: &mut DatabaseAt, chunk: usize) {
    for (a, b) in d.reads() {
        let at = |o: u64| usize::try_from(o).map_or(bytes.len(), |o| o.min(bytes.len()));
        d.fill(a, &bytes[at(a)..at(b).max(at(a))]);
    }
    while let Some(opts) = d.next_walk() {
        let at = d.start();
        let mut scan = LogScan::resume(opts, &at);
        let from = usize::try_from(at.offset).map_or(bytes.len(), |o| o.min(bytes.len()));
        for c in bytes[from..].chunks(chunk.max(1)) {
            scan.push(c, &mut |ev| {
                d.on_event(&ev);
                Verdict::Keep
            });
            if d.reached() {
                break;
            }
        }
        scan.finish(&mut |ev| {
            d.on_event(&ev);
            Verdict::Keep
        });
        d.end(&scan);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(rel: &str) -> Vec<u8> {
        let p = format!("{}/../../static/samples/{rel}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(p).unwrap()
    }

    const FILES: [&str; 3] = [
        "ls-add-follower/s1.db",
        "acl-portgroup-diff/s2.db",
        "standalone/nb.db",
    ];

    fn open_chunked(bytes: &[u8], at: Option<u64>, chunk: usize) -> Opened {
        let mut o = Opener::new(at);
        let mut scan = LogScan::new(o.options());
        let mut f = |ev: Event<'_>| o.on_event(&ev);
        for c in bytes.chunks(chunk) {
            scan.push(c, &mut f);
        }
        scan.finish(&mut f);
        let mut opened = o.finish(&scan);
        if let Some(mut d) = opened.again.take() {
            walk_chunked(bytes, &mut d, chunk);
            opened.db = d.finish();
        }
        opened
    }

    #[test]
    fn a_database_from_the_open_s_checkpoints_is_the_one_a_replay_reaches() {
        let plain = Policy {
            every_entries: 3,
            every_bytes: 4096,
            max: 8,
            budget_bytes: u64::MAX,
            op_index: false,
        };
        // With the op index, jumps read back ranges instead of walking.
        let indexed = Policy {
            op_index: true,
            ..plain
        };
        let (mut resumed, mut read_back) = (0, 0);
        for (file, policy) in FILES.iter().flat_map(|f| [(f, plain), (f, indexed)]) {
            let bytes = sample(file);
            let mut o = Opener::with_policy(None, policy);
            let mut scan = LogScan::new(o.options());
            scan.push(&bytes, &mut |ev| o.on_event(&ev));
            scan.finish(&mut |ev| o.on_event(&ev));
            let opened = o.finish(&scan);
            let ck = opened.checkpoints.as_deref();
            assert!(ck.is_some_and(|c| !c.is_empty()), "{file}");
            for i in opened.range.first..=opened.range.last + 1 {
                let mut d = DatabaseAt::from_checkpoints(ck, i);
                resumed += usize::from(d.start().offset > 0);
                read_back += usize::from(!d.reads().is_empty());
                walk_chunked(&bytes, &mut d, 333);
                let got = d.finish().map(|(db, e)| (db.dump_json(true), e));
                let want = database_at_bytes(&bytes, Upto::Index(i))
                    .map(|(db, e)| (db.dump_json(true), e));
                assert!(got == want, "{file}: index {i} ({policy:?})");
            }
        }
        assert!(resumed > 100, "{resumed}");
        assert!(read_back > 40, "{read_back}");
    }

    #[test]
    fn streamed_open_matches_the_in_memory_load_and_replay() {
        for file in FILES {
            streamed_open_matches(&sample(file));
        }
    }

    fn streamed_open_matches(bytes: &[u8]) {
        let log = Log::load(bytes);
        let r = range(&log);
        for (at, chunk) in [(None, 4096), (Some(r.first), 1000), (Some(r.last), 1 << 20)] {
            let o = open_chunked(bytes, at, chunk);
            assert_eq!(o.log.entries, log.entries);
            assert_eq!(o.log.history, log.history);
            assert_eq!(o.range, r);
            assert_eq!(o.at, at.unwrap_or(r.committed));
            let (db, _) = o.db.unwrap();
            let (want, _) = crate::database_at(bytes, Upto::Index(o.at)).unwrap();
            assert_eq!(db.dump_json(true), want.dump_json(true));
        }
    }

    #[test]
    fn database_at_bytes_agrees_with_the_replay() {
        let bytes = sample(FILES[0]);
        for upto in [Upto::All, Upto::Committed, Upto::Index(3)] {
            let (a, _) = database_at_bytes(&bytes, upto).unwrap();
            let b = ovsdb_log::replay(&bytes, upto).db.unwrap().into_core();
            assert_eq!(a.dump_json(true), b.dump_json(true));
        }
    }

    #[test]
    fn history_from_records_read_back_equals_the_in_memory_history() {
        let bytes = sample("acl-portgroup-diff/s2.db");
        let log = Log::load(&bytes);
        let o = open_chunked(&bytes, None, 333);
        let mut rows = 0;
        for e in &log.entries {
            let Some((t0, _)) = e.txn else { continue };
            let layout = crate::layout::walk_txn(log.body(e), t0, false).unwrap();
            for u in layout
                .tables
                .iter()
                .flat_map(|t| &t.rows)
                .filter_map(|r| ovsdb::Uuid::parse(&r.key))
            {
                rows += 1;
                let want = crate::history::history(&log, &u).unwrap();
                // Read each record back as the worker does: its span only.
                let records: std::collections::HashMap<usize, Vec<u8>> = o
                    .log
                    .history
                    .entries_for(&u)
                    .iter()
                    .map(|&p| {
                        let e = &o.log.entries[p as usize];
                        let (off, len, body) = Log::record_span(e);
                        let rec = &bytes[off as usize..(off + len) as usize];
                        (e.record, rec[body..body + e.body_len].to_vec())
                    })
                    .collect();
                let got = crate::history::history_with(&o.log, &u, |e| {
                    records.get(&e.record).map(Vec::as_slice)
                })
                .unwrap();
                assert_eq!(got, want);
                assert!(!got.is_empty());
            }
        }
        assert!(rows > 0);
        // A record that cannot be read is an error, not a panic.
        let u = log.history.rows().next().copied().unwrap();
        assert!(crate::history::history_with(&o.log, &u, |_| None).is_err());
    }

    #[test]
    fn streamed_sizes_equal_the_in_memory_report() {
        for file in FILES {
            let bytes = sample(file);
            let log = Log::load(&bytes);
            let want = crate::sizes::sizes(&log, None);
            let mut d = DatabaseAt::new(Upto::All);
            walk_all(&bytes, &mut d);
            let replay = d.into_replay().unwrap();
            let mut st = SizesStream::new(&log, &replay);
            let mut scan = LogScan::new(ScanOptions::default());
            let mut f = |ev: Event<'_>| {
                st.on_event(&log, &ev);
                Verdict::Keep
            };
            for c in bytes.chunks(777) {
                scan.push(c, &mut f);
            }
            scan.finish(&mut f);
            for c in bytes.chunks(777) {
                st.chunk(c);
            }
            assert_eq!(st.bytes(), bytes.len() as u64);
            let len = st.bytes();
            let mut got = st.finish();
            let db = replay.db.unwrap().into_core();
            got.compaction = crate::sizes::compaction_of(&log, &db, None, len);
            assert_eq!(got, want, "{file}");
            assert_eq!(
                crate::sizes::sizes_json(&got, None).to_string_compact(),
                crate::sizes::sizes_json(&want, None).to_string_compact()
            );
        }
    }

    #[test]
    fn garbage_gives_an_error_not_a_panic() {
        let o = open_chunked(b"not a database\n", None, 7);
        assert!(o.db.is_err());
        assert!(database_at_bytes(b"", Upto::All).is_err());
    }
}
