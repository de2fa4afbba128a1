//! One streaming pass per file: the bytes go through one
//! [`ovsdb_log::LogScan`] whose events feed, side by side, the core's
//! summary (what `inspect` prints, with each entry's size in both storage
//! modes), the lane of the timeline, and the cluster check of the file.
//! Push the file in chunks of any size; nothing of it is kept beyond the
//! record being read.
//!
//! ```text
//! chunks ─▶ LogScan ─▶ Summarizer  (FileSummary, entry sizes)
//!                   ├▶ LaneBuilder (entries, bands, markers, commits)
//!                   └▶ FileCheck   (term + digests per entry) ─▶ Checker
//! ```
//!
//! One case needs a second walk: a clustered file whose log replaces
//! entries it already applied (or whose payloads the one-pass replay could
//! not apply) gets its full/diff sizes from a replay that knows the final
//! log ([`FileEnd::Again`]); the caller feeds the same bytes again.

use ovsdb_log::check::CheckerMark;
use ovsdb_log::checkpoint::{Checkpoints, Policy};
use ovsdb_log::facts::{entry_txn_facts, txn_facts};
use ovsdb_log::summary::{SecondPass, Summarizer, SummaryEnd};
use ovsdb_log::{
    Checker, Event, FileCheck, FileSummary, Format, LogScan, SharedReplay, Skip, Verdict,
};

use crate::model::{
    finish_timeline, json_servers, summary_of, CheckResult, CommitPoint, Entry, Lane, Marker,
    MarkerKind, Sizes, TermBand, Timeline, Truncation,
};

/// Builds a lane from the events of one walk.
struct LaneBuilder {
    lane: Lane,
    /// Next index to be written (Raft's log_end).
    log_end: u64,
    /// The term in effect.
    term: u64,
}

impl LaneBuilder {
    fn new(name: &str) -> LaneBuilder {
        LaneBuilder {
            lane: Lane {
                name: name.to_string(),
                summary: Default::default(),
                clustered: false,
                snapshot_index: 0,
                entries: Vec::new(),
                monotonic: true,
                bands: Vec::new(),
                commits: Vec::new(),
                markers: Vec::new(),
                base_bytes: 0,
                truncated: None,
            },
            log_end: 1,
            term: 0,
        }
    }

    fn term_seen(&mut self, t: u64) {
        let lane = &mut self.lane;
        if t > self.term {
            self.term = t;
            let log_end = self.log_end;
            if let Some(b) = lane.bands.last_mut() {
                b.end = log_end.saturating_sub(1).max(b.start.saturating_sub(1));
            }
            lane.bands.push(TermBand {
                term: t,
                start: log_end,
                end: log_end.saturating_sub(1),
                leader: None,
                vote: None,
            });
        }
    }

    fn on_event(&mut self, ev: &Event<'_>) {
        if let Event::Skipped(k) = ev {
            self.lane.markers.push(Marker {
                index: self.log_end,
                record: k.record as u32,
                kind: MarkerKind::Skipped {
                    offset: k.offset,
                    bytes: k.bytes,
                    reason: k.error.kind.to_string(),
                    code: k.error.kind.code().to_string(),
                },
            });
            return;
        }
        let Some(raw) = ev.raw() else {
            return;
        };
        let record = raw.index as u32;
        if self.lane.entries.is_empty() {
            self.lane.base_bytes = raw.offset;
        }
        match ev {
            Event::Header { header, .. } => {
                if let Some(snap) = &header.snapshot {
                    self.lane.snapshot_index = snap.index;
                    self.log_end = snap.index + 1;
                    self.lane.markers.push(Marker {
                        index: snap.index,
                        record,
                        kind: MarkerKind::Snapshot { term: snap.term },
                    });
                }
            }
            Event::Txn { raw } => {
                let f = txn_facts(raw.body).unwrap_or_default();
                self.lane.entries.push(Entry {
                    index: raw.index as u64,
                    term: 0,
                    record,
                    offset: raw.offset,
                    has_data: true,
                    superseded: false,
                    eid: None,
                    comment: f.comment,
                    date_ms: f.date_ms,
                    tables: f.tables,
                    rows: f.rows,
                    sizes: Sizes {
                        stored: raw.total_len(),
                        full: None,
                        diff: None,
                    },
                    servers: None,
                    election_timer: None,
                });
                self.log_end = raw.index as u64 + 1;
            }
            Event::Entry {
                raw,
                entry: e,
                data,
                ..
            } => {
                self.term_seen(e.term);
                let lane = &mut self.lane;
                if e.index < self.log_end {
                    // A conflicting suffix is replaced (Raft §3.6).
                    let mut count = 0;
                    for old in lane.entries.iter_mut().rev() {
                        if old.index < e.index {
                            break;
                        }
                        if !old.superseded {
                            old.superseded = true;
                            count += 1;
                        }
                    }
                    lane.monotonic = false;
                    lane.markers.push(Marker {
                        index: e.index,
                        record,
                        kind: MarkerKind::Superseded { count },
                    });
                }
                self.log_end = e.index + 1;
                let f = data.and_then(entry_txn_facts);
                if let Some(s) = &e.servers {
                    lane.markers.push(Marker {
                        index: e.index,
                        record,
                        kind: MarkerKind::Membership {
                            servers: s.0.iter().map(|(sid, _)| sid.to_string()).collect(),
                        },
                    });
                }
                if let Some(ms) = e.election_timer {
                    lane.markers.push(Marker {
                        index: e.index,
                        record,
                        kind: MarkerKind::ElectionTimer { ms },
                    });
                }
                if let Some(b) = lane.bands.last_mut() {
                    b.end = b.end.max(e.index);
                }
                let (comment, date_ms, tables, rows) = match f {
                    Some(f) => (f.comment, f.date_ms, f.tables, f.rows),
                    None => (None, None, 0, 0),
                };
                lane.entries.push(Entry {
                    index: e.index,
                    term: e.term,
                    record,
                    offset: raw.offset,
                    has_data: e.data.is_some(),
                    superseded: false,
                    eid: e.eid.map(|x| x.to_string()),
                    comment,
                    date_ms,
                    tables,
                    rows,
                    sizes: Sizes {
                        stored: raw.total_len(),
                        full: None,
                        diff: None,
                    },
                    servers: e.servers.as_ref().map(json_servers),
                    election_timer: e.election_timer,
                });
            }
            Event::Term { term, .. } => self.term_seen(*term),
            Event::Vote { term, vote, .. } => {
                self.term_seen(*term);
                let t = *term;
                if let Some(b) = self.lane.bands.iter_mut().rev().find(|b| b.term == t) {
                    b.vote = Some(vote.to_string());
                }
                self.lane.markers.push(Marker {
                    index: self.log_end,
                    record,
                    kind: MarkerKind::Vote {
                        term: t,
                        sid: vote.to_string(),
                    },
                });
            }
            Event::Leader { term, leader, .. } => {
                self.term_seen(*term);
                let t = *term;
                if let Some(b) = self.lane.bands.iter_mut().rev().find(|b| b.term == t) {
                    b.leader = Some(leader.to_string());
                }
                self.lane.markers.push(Marker {
                    index: self.log_end,
                    record,
                    kind: MarkerKind::Leader {
                        term: t,
                        sid: leader.to_string(),
                    },
                });
            }
            Event::CommitIndex { commit_index, .. } => self.lane.commits.push(CommitPoint {
                record,
                at_index: self.log_end.saturating_sub(1),
                commit_index: *commit_index,
            }),
            Event::Note { note, comment, .. } => self.lane.markers.push(Marker {
                index: self.log_end,
                record,
                kind: MarkerKind::Note {
                    note: note.clone(),
                    comment: comment.clone(),
                },
            }),
            _ => {}
        }
    }

    /// The lane so far, in the middle of the walk: the entries read, with
    /// the full/diff sizes of those already replayed.
    fn preview(&self, summary: &FileSummary, sizes: &[ovsdb_log::EntrySize]) -> Lane {
        let mut lane = self.lane.clone();
        if !sizes.is_empty() {
            let per_record: std::collections::HashMap<usize, (u64, u64)> =
                sizes.iter().map(|e| (e.record, (e.full, e.diff))).collect();
            for e in lane.entries.iter_mut().filter(|e| e.has_data) {
                if let Some(&(full, diff)) = per_record.get(&(e.record as usize)) {
                    e.sizes.full = Some(full);
                    e.sizes.diff = Some(diff);
                }
            }
        }
        lane.clustered = summary.format == Some(Format::Clustered);
        lane.summary = summary_of(summary);
        lane
    }

    /// Ends the lane: sizes per storage mode (by record number) and the
    /// damaged tail, from the summary.
    fn finish(
        mut self,
        good_end: u64,
        summary: &FileSummary,
        sizes: &[ovsdb_log::EntrySize],
    ) -> Lane {
        let lane = &mut self.lane;
        if lane.entries.is_empty() {
            lane.base_bytes = good_end;
        }
        let sized = summary.entry_bytes.full.is_some() && summary.entry_bytes.diff.is_some();
        if sized {
            let mut per_record: std::collections::HashMap<usize, (u64, u64)> =
                sizes.iter().map(|e| (e.record, (e.full, e.diff))).collect();
            for e in lane.entries.iter_mut().filter(|e| e.has_data) {
                if let Some((full, diff)) = per_record.remove(&(e.record as usize)) {
                    e.sizes.full = Some(full);
                    e.sizes.diff = Some(diff);
                }
            }
        }
        if let Some(e) = &summary.truncated {
            lane.truncated = Some(Truncation {
                record: e.record as u64,
                offset: e.offset,
                reason: e.kind.to_string(),
                code: e.kind.code().to_string(),
                at_index: self.log_end,
            });
        }
        lane.clustered = summary.format == Some(Format::Clustered);
        lane.summary = summary_of(summary);
        self.lane
    }
}

/// One file's walk: push its bytes in chunks, then [`FileLoad::finish`].
pub struct FileLoad {
    scan: LogScan,
    sum: Summarizer,
    lane: LaneBuilder,
    check: Option<FileChecking>,
    fingerprint: Fingerprint,
}

/// What identifies a file's content without hashing its bytes again: the
/// SHA-1 of every record (each header carries it and the scanner verified
/// it), the places and lengths of damaged spans, and the length. Two copies
/// of one file have the same; files that differ in any good record do not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint {
    hash: u64,
    pub bytes: u64,
}

impl Fingerprint {
    fn fold(&mut self, b: &[u8]) {
        // FNV-1a over the per-record digests.
        let mut h = if self.hash == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.hash
        };
        for &x in b {
            h ^= u64::from(x);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.hash = h;
    }

    fn on_event(&mut self, ev: &Event<'_>) {
        match ev {
            Event::Skipped(k) => {
                self.fold(&k.offset.to_le_bytes());
                self.fold(&k.bytes.to_le_bytes());
            }
            Event::Tail(e) => self.fold(&e.offset.to_le_bytes()),
            _ => {
                if let Some(raw) = ev.raw() {
                    self.fold(&raw.sha1);
                }
            }
        }
    }
}

/// A file's part of the cluster check, with what the checker knew before
/// it (to undo it when the file turns out not to be checked).
pub struct FileChecking {
    file: FileCheck,
    mark: CheckerMark,
}

/// A file whose walk is over.
pub struct Loaded {
    pub lane: Lane,
    pub summary: FileSummary,
    /// The file's part of the cluster check (None when not asked for).
    pub check: Option<FileChecking>,
    pub fingerprint: Fingerprint,
    /// What the size replays of this and earlier files leave to the next
    /// file of the cluster ([`ovsdb_log::SharedReplay`]).
    pub shared: SharedReplay,
    /// Checkpoints of the file's replay, for jumps to any entry
    /// ([`FileLoad::with_checkpoints`]; None when not asked for, or when
    /// the one-pass replay could not keep them: a file that needed a
    /// second walk, or with a skipped span).
    pub checkpoints: Option<Box<Checkpoints>>,
}

/// How a file's walk ends.
pub enum FileEnd {
    Done(Box<Loaded>),
    /// The sizes need a second walk over the same bytes: push them into
    /// [`SecondLoad::push`], then [`SecondLoad::finish`].
    Again(Box<SecondLoad>),
}

/// The second walk of [`FileEnd::Again`] (sizes only).
pub struct SecondLoad {
    scan: LogScan,
    pass: Box<SecondPass>,
    lane: LaneBuilder,
    good_end: u64,
    check: Option<FileChecking>,
    fingerprint: Fingerprint,
    shared: SharedReplay,
}

impl SecondLoad {
    pub fn push(&mut self, chunk: &[u8]) {
        let pass = &mut self.pass;
        self.scan.push(chunk, &mut |ev| {
            pass.on_event(&ev);
            Verdict::Keep
        });
    }

    /// Ends without the second walk (the bytes cannot be read again): the
    /// full/diff sizes are unknown, everything else is there.
    pub fn without_sizes(self) -> Loaded {
        let summary = (*self.pass).without_sizes();
        let lane = self.lane.finish(self.good_end, &summary, &[]);
        Loaded {
            lane,
            summary,
            check: self.check,
            fingerprint: self.fingerprint,
            shared: self.shared,
            checkpoints: None,
        }
    }

    pub fn finish(mut self) -> Loaded {
        let pass = &mut self.pass;
        self.scan.finish(&mut |ev| {
            pass.on_event(&ev);
            Verdict::Keep
        });
        let (summary, sizes, checkpoints) = (*self.pass).finish_keeping();
        let lane = self.lane.finish(self.good_end, &summary, &sizes);
        Loaded {
            lane,
            summary,
            check: self.check,
            fingerprint: self.fingerprint,
            shared: self.shared,
            checkpoints,
        }
    }
}

impl FileLoad {
    /// `check`: also run the file's part of the cluster check (its events
    /// go to [`FileCheck::on_event`] with the checker given to `push`).
    pub fn new(name: &str, ck: &Checker, check: bool) -> FileLoad {
        Self::with_shared(name, ck, check, SharedReplay::default())
    }

    /// [`FileLoad::new`], reusing the size replays of earlier files of the
    /// same cluster ([`ovsdb_log::SharedReplay`]; handed on in
    /// [`Loaded::shared`]).
    pub fn with_shared(name: &str, ck: &Checker, check: bool, shared: SharedReplay) -> FileLoad {
        Self::with_options(name, ck, check, shared, None)
    }

    /// A walk for the cluster check alone: the summary without the size
    /// replay (which decides nothing the check needs), no lane sizes, no
    /// checkpoints. A second worker runs it beside the load's own walk.
    pub fn check_only(name: &str, ck: &Checker) -> FileLoad {
        Self::walk(name, ck, true, Summarizer::new(false))
    }

    /// [`FileLoad::with_shared`] that keeps checkpoints of the replay
    /// (`Some(policy)`) in [`Loaded::checkpoints`]: the load's one walk
    /// leaves what later jumps to an entry resume from.
    pub fn with_options(
        name: &str,
        ck: &Checker,
        check: bool,
        shared: SharedReplay,
        checkpoints: Option<Policy>,
    ) -> FileLoad {
        let mut sum = Summarizer::new(true);
        if let Some(policy) = checkpoints {
            sum = sum.with_checkpoints(policy);
        }
        sum.share(shared);
        Self::walk(name, ck, check, sum)
    }

    /// A file's walk folding its events into `sum`, the lane and, with
    /// `check`, the file's part of the cluster check.
    fn walk(name: &str, ck: &Checker, check: bool, sum: Summarizer) -> FileLoad {
        FileLoad {
            scan: LogScan::new(sum.options()),
            sum,
            lane: LaneBuilder::new(name),
            check: check.then(|| FileChecking {
                file: ck.begin_file(name),
                mark: ck.mark(),
            }),
            fingerprint: Fingerprint::default(),
        }
    }

    /// Bytes pushed so far.
    pub fn bytes(&self) -> u64 {
        self.scan.bytes()
    }

    fn step(
        sum: &mut Summarizer,
        lane: &mut LaneBuilder,
        check: &mut Option<FileChecking>,
        fp: &mut Fingerprint,
        ck: &mut Checker,
        ev: Event<'_>,
    ) -> Verdict {
        // The summary decides whether a record is usable (it is what
        // `inspect` reports); a record it rejects reaches nobody else and
        // comes back as a skipped span.
        if let v @ Verdict::Reject(_) = sum.on_event(&ev) {
            return v;
        }
        if let Some(c) = check.as_mut() {
            // The check may find a record it cannot use (its own reading of
            // the payload); for the summary and the lane the record stands,
            // for the check it is a skipped span, as in a walk of its own.
            if let (Verdict::Reject(error), Some(raw)) = (c.file.on_event(ck, &ev), ev.raw()) {
                let skip = Skip {
                    record: raw.index,
                    offset: raw.offset,
                    bytes: raw.total_len(),
                    error,
                };
                let _ = c.file.on_event(ck, &Event::Skipped(skip));
            }
        }
        lane.on_event(&ev);
        fp.on_event(&ev);
        Verdict::Keep
    }

    /// The file's lane and summary so far (for a preview while the walk
    /// goes on). It copies the lane: call it now and then, not per chunk.
    pub fn preview(&self) -> (Lane, FileSummary) {
        let (summary, sizes) = self.sum.so_far(&self.scan);
        (self.lane.preview(&summary, sizes), summary)
    }

    /// Takes the next chunk of the file.
    pub fn push(&mut self, ck: &mut Checker, chunk: &[u8]) {
        let FileLoad {
            scan,
            sum,
            lane,
            check,
            fingerprint,
        } = self;
        scan.push(chunk, &mut |ev| {
            Self::step(sum, lane, check, fingerprint, ck, ev)
        });
    }

    /// Ends the walk.
    pub fn finish(self, ck: &mut Checker) -> FileEnd {
        let FileLoad {
            mut scan,
            mut sum,
            mut lane,
            mut check,
            mut fingerprint,
        } = self;
        scan.finish(&mut |ev| {
            Self::step(&mut sum, &mut lane, &mut check, &mut fingerprint, ck, ev)
        });
        let good_end = scan.good_end();
        fingerprint.bytes = scan.bytes();
        let (end, shared, checkpoints) = sum.finish_all(&scan);
        match end {
            SummaryEnd::Done(summary, sizes) => {
                let lane = lane.finish(good_end, &summary, &sizes);
                FileEnd::Done(Box::new(Loaded {
                    lane,
                    summary: *summary,
                    check,
                    fingerprint,
                    shared,
                    checkpoints,
                }))
            }
            SummaryEnd::Again(pass) => FileEnd::Again(Box::new(SecondLoad {
                scan: LogScan::new(pass.options()),
                pass,
                lane,
                good_end,
                check,
                fingerprint,
                shared,
            })),
        }
    }

    /// The whole walk over bytes in memory (a second walk when needed).
    pub fn load_bytes(
        name: &str,
        bytes: &[u8],
        ck: &mut Checker,
        check: bool,
        shared: SharedReplay,
        checkpoints: Option<Policy>,
        progress: &mut dyn FnMut(u64),
    ) -> Loaded {
        const STEP: usize = 1 << 20;
        let mut fl = FileLoad::with_options(name, ck, check, shared, checkpoints);
        for (i, c) in bytes.chunks(STEP).enumerate() {
            fl.push(ck, c);
            progress(((i + 1) * STEP).min(bytes.len()) as u64);
        }
        match fl.finish(ck) {
            FileEnd::Done(l) => *l,
            FileEnd::Again(mut again) => {
                again.push(bytes);
                again.finish()
            }
        }
    }
}

/// The timeline of several files, built from their walks, with the
/// cluster check of the clustered, undamaged ones when asked for.
#[derive(Default)]
pub struct TimelineLoad {
    checker: Checker,
    check: bool,
    /// The size replays so far, for the next file ([`SharedReplay`]);
    /// None: each file replays on its own.
    shared: Option<SharedReplay>,
    lanes: Vec<Lane>,
    summaries: Vec<FileSummary>,
    problems: Vec<String>,
    /// Files handed to the checker.
    checked: usize,
    /// Keep checkpoints of each file's replay ([`TimelineLoad::with_checkpoints`]),
    /// and those kept, by lane name.
    policy: Option<Policy>,
    checkpoints: Vec<(String, Box<Checkpoints>)>,
    /// Only the cluster check ([`TimelineLoad::check_only`]).
    check_only: bool,
}

impl TimelineLoad {
    pub fn new(check: bool) -> TimelineLoad {
        TimelineLoad {
            check,
            shared: Some(SharedReplay::default()),
            ..Default::default()
        }
    }

    /// Only the cluster check of the files (no sizes, no sharing, no
    /// checkpoints): [`TimelineLoad::finish_check`] gives the result that
    /// [`TimelineLoad::finish`] of a load with `check` puts on its
    /// timeline. What a second worker runs while the first one loads.
    pub fn check_only() -> TimelineLoad {
        TimelineLoad {
            check: true,
            check_only: true,
            ..Default::default()
        }
    }

    /// Each file replays its sizes on its own instead of reusing the
    /// common prefix of the files before (for tests and comparisons).
    pub fn without_sharing(mut self) -> TimelineLoad {
        self.shared = None;
        self
    }

    /// Each file's walk keeps checkpoints of its replay
    /// ([`FileLoad::with_options`]); [`TimelineLoad::take_checkpoints`]
    /// gives them by lane.
    pub fn with_checkpoints(mut self, policy: Policy) -> TimelineLoad {
        self.policy = Some(policy);
        self
    }

    /// The checkpoints of the files added, by lane name (files whose walk
    /// could keep none are not there).
    pub fn take_checkpoints(&mut self) -> Vec<(String, Box<Checkpoints>)> {
        std::mem::take(&mut self.checkpoints)
    }

    fn take_shared(&mut self) -> SharedReplay {
        self.shared.as_mut().map(std::mem::take).unwrap_or_default()
    }

    fn keep_shared(&mut self, sh: SharedReplay) {
        if let Some(s) = self.shared.as_mut() {
            *s = sh;
        }
    }

    /// Entries whose sizes were taken from an earlier file's replay.
    pub fn reused_entries(&self) -> u64 {
        self.shared.as_ref().map_or(0, |s| s.reused)
    }

    /// Starts the next file (files keep the order they are started in).
    /// The file reuses the size replays of the files before it: hand its
    /// [`Loaded`] to [`TimelineLoad::add`] or [`TimelineLoad::discard`]
    /// before the next `begin`.
    pub fn begin(&mut self, name: &str) -> FileLoad {
        if self.check_only {
            return FileLoad::check_only(name, &self.checker);
        }
        let sh = self.take_shared();
        FileLoad::with_options(name, &self.checker, self.check, sh, self.policy)
    }

    /// The checker a file's pushes need.
    pub fn checker(&mut self) -> &mut Checker {
        &mut self.checker
    }

    /// Takes a finished file.
    pub fn add(&mut self, mut l: Loaded) {
        self.keep_shared(std::mem::take(&mut l.shared));
        if let Some(c) = l.check {
            let lane = &l.lane;
            if lane.clustered && lane.summary.records > 0 && lane.truncated.is_none() {
                self.checker.end_file(c.file);
                self.checked += 1;
            } else {
                // Not a clustered log, or damaged: not checked (as a check
                // of its own would refuse it), and what its walk told the
                // checker is undone.
                self.checker.rollback(c.mark);
                if lane.clustered && lane.summary.records > 0 {
                    self.problems
                        .push(format!("{}: not checked (the file is damaged)", lane.name));
                }
            }
        }
        if let Some(c) = l.checkpoints.take() {
            self.checkpoints.push((l.lane.name.clone(), c));
        }
        self.lanes.push(l.lane);
        self.summaries.push(l.summary);
    }

    /// Leaves a finished file out (a copy of one already added, say): what
    /// its walk told the checker is undone.
    pub fn discard(&mut self, mut l: Loaded) {
        self.keep_shared(std::mem::take(&mut l.shared));
        if let Some(c) = l.check {
            self.checker.rollback(c.mark);
        }
    }

    /// Files added so far.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// The whole walk of one file in memory (see [`FileLoad::load_bytes`]),
    /// not added yet.
    pub fn load_bytes(
        &mut self,
        name: &str,
        bytes: &[u8],
        progress: &mut dyn FnMut(u64),
    ) -> Loaded {
        let (check, policy) = (self.check, self.policy);
        let sh = self.take_shared();
        FileLoad::load_bytes(name, bytes, &mut self.checker, check, sh, policy, progress)
    }

    /// [`TimelineLoad::load_bytes`], then [`TimelineLoad::add`].
    pub fn add_bytes(&mut self, name: &str, bytes: &[u8], progress: &mut dyn FnMut(u64)) {
        let l = self.load_bytes(name, bytes, progress);
        self.add(l);
    }

    /// The timeline so far, with the file under way (if any) as its last
    /// lane: what a page draws while the load goes on. No check yet.
    pub fn preview(&self, current: Option<&FileLoad>) -> Timeline {
        let mut lanes = self.lanes.clone();
        let mut summaries = self.summaries.clone();
        if let Some(f) = current {
            let (lane, summary) = f.preview();
            if lane.summary.records > 0 {
                lanes.push(lane);
                summaries.push(summary);
            }
        }
        finish_timeline(lanes, &summaries)
    }

    /// The timeline, with the check applied when it was asked for.
    pub fn finish(self) -> Timeline {
        let check = self.check;
        let (mut t, r) = self.finish_parts();
        if check {
            t.apply_check(r);
        }
        t
    }

    /// What the cluster check found, to put on the timeline of a load
    /// of the same files ([`Timeline::apply_check`]).
    pub fn finish_check(self) -> CheckResult {
        self.finish_parts().1
    }

    fn finish_parts(self) -> (Timeline, CheckResult) {
        let mut r = CheckResult {
            problems: self.problems,
            ..Default::default()
        };
        let report = (self.check && self.checked > 0).then(|| self.checker.finish());
        let t = finish_timeline(self.lanes, &self.summaries);
        if let Some(report) = report {
            crate::model::add_report(&mut r, &report, &t);
        }
        (t, r)
    }
}
