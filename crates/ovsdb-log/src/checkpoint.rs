//! Checkpoints of a replay, for jumps to any index without replaying the
//! file from its start.
//!
//! A [`ReplayPass`] made [`ReplayPass::with_checkpoints`] keeps, while it
//! walks the file, a copy of the database every so many entries or bytes
//! of records ([`Policy`]), with the place to resume the walk from (a
//! [`ScanPoint`]: byte offset, record number, format, log end). A copy of
//! an [`ovsdb::Database`] shares its rows with the original (persistent
//! row maps), so a checkpoint costs what the entries after it change, not
//! the database. At most [`Policy::max`] are kept: past that every other
//! one is dropped and the spacing doubles.
//!
//! [`Checkpoints::jump`] then gives the database at index I: it takes the
//! nearest checkpoint at or before I and resumes the one replay there
//! ([`Jump`]: the caller pushes the file's bytes from [`Jump::offset`] on,
//! chunk by chunk, until [`Jump::push`] says it has what it needs).

use crate::error::LogError;
use crate::framing::{Format, RawRecord};
use crate::net::{NetChange, Present};
use crate::opindex::OpIndex;
use crate::replay::Db;
use crate::replay_pass::{Plan, Replay, ReplayEnd, ReplayPass, Upto};
use crate::scan::{Event, LogScan, ScanOptions, ScanPoint, Verdict};
use ovsdb::Uuid;
use std::collections::HashSet;
use std::sync::Arc;

/// When a replay keeps a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// After this many entry (or txn) records since the last checkpoint...
    pub every_entries: u64,
    /// ...or this many bytes of records since the last checkpoint.
    pub every_bytes: u64,
    /// At most this many checkpoints besides the start of the file (more
    /// make every other one go and the spacing double).
    pub max: usize,
    /// About how many bytes of rows the checkpoints may hold that the
    /// database no longer does (rows changed or deleted since, as
    /// [`ovsdb::Database::detached_bytes`] counts them); past it, every
    /// other checkpoint goes and the spacing doubles, as past `max`.
    pub budget_bytes: u64,
    /// Also note where each row operation of the records is
    /// ([`OpIndex`], 32 bytes an operation), so that a jump by net change
    /// reads back only the records holding rows alive at its index
    /// instead of walking. The index is held beside the checkpoints, up
    /// to half of `budget_bytes` (past that it is dropped and jumps walk):
    /// with it, the store holds at most 1.5 times the budget.
    pub op_index: bool,
}

impl Default for Policy {
    /// Every 5 000 entries or 4 MiB, at most 256 holding about 384 MiB
    /// of rows: a jump then replays at most that much (BENCHMARKS.md,
    /// "Checkpoints"). No [`OpIndex`].
    fn default() -> Self {
        Policy {
            every_entries: 5_000,
            every_bytes: 4 << 20,
            max: 256,
            budget_bytes: 384 << 20,
            op_index: false,
        }
    }
}

/// One checkpoint: the database after the records before `at`.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// Where the walk resumes.
    pub at: ScanPoint,
    /// Last log index applied (clustered) or txn records applied
    /// (standalone) before `at`.
    pub applied: u64,
    /// Entry (or txn) records before `at`.
    entries: u64,
    /// The database's [`ovsdb::Database::detached_bytes`] when it was
    /// taken, and about how many bytes of rows only it holds.
    detached_at: u64,
    held: u64,
    /// Taken from another file's replay at the same index (`forced`):
    /// its rows are that replay's checkpoint's, held there, so they do
    /// not count against this store's budget.
    shared: bool,
    db: Option<Db>,
    /// Its database's rows as a filter, for a jump by net change that
    /// starts here ([`crate::net::Present`]; None at the start of the
    /// file and for [`Checkpoint::after`]).
    present: Option<Arc<Present>>,
}

impl Checkpoint {
    /// The database there (None at the start of the file).
    pub fn db(&self) -> Option<&Db> {
        self.db.as_ref()
    }

    /// Where a jump (or any replay of a clustered file) ended, as a
    /// checkpoint a later jump forward may resume from
    /// ([`Checkpoints::jump_database_from`]): stepping through the entries
    /// then reads only the records in between. Its rows are the replay's
    /// database's (shared). None without a database or a clustered entry
    /// applied.
    pub fn after(r: &Replay) -> Option<Checkpoint> {
        Some(Checkpoint {
            at: r.resume_at?,
            applied: r.applied,
            entries: 0,
            detached_at: 0,
            held: 0,
            shared: true,
            db: Some(r.db.clone()?),
            present: None,
        })
    }
}

/// What a jump needs of the whole replay: which entry records are
/// superseded, the commit and snapshot indexes, where the usable records
/// end, the first damage.
#[derive(Debug, Clone)]
struct Sealed {
    superseded: HashSet<usize>,
    commit: u64,
    prev_index: u64,
    records: usize,
    format: Format,
    damage: Option<LogError>,
    /// The replay applied every entry up to this index without error.
    clean_to: u64,
    /// The database's [`ovsdb::Database::implicit_changes`] at the end of
    /// the replay (None when it did not keep it).
    end_implicit: Option<u64>,
}

/// The checkpoints of one replay (see the module documentation).
#[derive(Debug, Clone)]
pub struct Checkpoints {
    policy: Policy,
    every_entries: u64,
    every_bytes: u64,
    /// By record; `list[0]` is the start of the file.
    list: Vec<Checkpoint>,
    /// Entry records seen in this walk.
    seen: u64,
    log_end: u64,
    format: Format,
    sealed: Option<Sealed>,
    /// [`Policy::op_index`]: the records' row operations (None without it,
    /// or once it outgrew half the budget).
    index: Option<Arc<OpIndex>>,
}

impl Checkpoints {
    /// An empty store (the start of the file only), for
    /// [`ReplayPass::resume_with`].
    pub fn new(policy: Policy) -> Checkpoints {
        Checkpoints {
            policy,
            every_entries: policy.every_entries.max(1),
            every_bytes: policy.every_bytes.max(1),
            list: vec![Checkpoint {
                at: ScanPoint::START,
                applied: 0,
                entries: 0,
                detached_at: 0,
                held: 0,
                shared: false,
                db: None,
                present: None,
            }],
            seen: 0,
            log_end: 1,
            format: Format::Clustered,
            sealed: None,
            index: policy.op_index.then(Arc::default),
        }
    }

    /// The row operations noted ([`Policy::op_index`]; None when it was
    /// not asked for or outgrew its share of the budget).
    pub fn op_index(&self) -> Option<&OpIndex> {
        self.index.as_deref()
    }

    /// Notes the row operations of a record the replay has just applied
    /// without error (see [`OpIndex::add`]).
    pub(crate) fn note_ops(
        &mut self,
        db: &Db,
        raw: &RawRecord<'_>,
        data: &[u8],
        wrapped: bool,
        applied: u64,
    ) {
        let Some(index) = self.index.as_mut() else {
            return;
        };
        let index = Arc::make_mut(index);
        index.add(db, raw, data, wrapped, applied);
        if index.bytes() > self.policy.budget_bytes / 2 {
            self.index = None;
        }
    }

    /// The checkpoints, by record (the first is the start of the file).
    pub fn list(&self) -> &[Checkpoint] {
        &self.list
    }

    /// Number of checkpoints besides the start of the file.
    pub fn len(&self) -> usize {
        self.list.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// About how many bytes of rows the checkpoints hold that the
    /// database at the end of the walk does not (an estimate: rows each
    /// one shared when the walk changed or deleted them), with their row
    /// filters ([`Present`]).
    pub fn held_bytes(&self) -> u64 {
        // A shared checkpoint's rows are another store's; its row filter
        // is this store's own.
        let rows = |c: &Checkpoint| if c.shared { 0 } else { c.held };
        let filter = |c: &Checkpoint| c.present.as_ref().map_or(0, |p| p.bytes());
        self.list.iter().map(|c| rows(c) + filter(c)).sum()
    }

    /// The checkpoint a jump to `index` starts from: the last one that
    /// applied at most `index`.
    pub fn nearest(&self, index: u64) -> &Checkpoint {
        let i = self.list.partition_point(|c| c.applied <= index);
        &self.list[i.saturating_sub(1)]
    }

    /// The checkpoint a walk to record `record` starts from: the last one
    /// at or before it.
    pub fn before_record(&self, record: usize) -> &Checkpoint {
        let i = self.list.partition_point(|c| c.at.record <= record);
        &self.list[i.saturating_sub(1)]
    }

    /// A walk resumed at `cp` (one of these checkpoints) that keeps adding
    /// checkpoints past the last one.
    pub(crate) fn resume_at(&mut self, cp: &Checkpoint) {
        self.seen = cp.entries;
        self.log_end = cp.at.log_end;
        self.format = cp.at.format;
    }

    /// A new walk (the second of a replay): counting starts again, and
    /// the checkpoints of the first walk are kept only up to its first
    /// superseded record (after it they hold entries the final log does
    /// not).
    pub(crate) fn restart(&mut self, superseded: &HashSet<usize>) {
        if let Some(&first) = superseded.iter().min() {
            self.list.retain(|c| c.at.record <= first);
        }
        if let Some(index) = self.index.as_mut() {
            Arc::make_mut(index).clear();
        }
        self.seen = 0;
        self.log_end = 1;
    }

    /// Takes one record event of the walk, after the pass applied it;
    /// `usable`: the pass is still applying and the record is before any
    /// damage (a checkpoint may be taken).
    pub(crate) fn on_record(
        &mut self,
        ev: &Event<'_>,
        raw: &RawRecord<'_>,
        usable: bool,
        db: Option<&Db>,
        applied: u64,
    ) {
        match ev {
            Event::Header { header, .. } => {
                self.format = Format::Clustered;
                self.log_end = header.prev_index().saturating_add(1);
            }
            Event::Schema { .. } => self.format = Format::Standalone,
            Event::Entry { entry, .. } => {
                self.seen += 1;
                self.log_end = entry.index.saturating_add(1);
            }
            Event::Txn { .. } => self.seen += 1,
            _ => {}
        }
        let writes = match ev {
            Event::Header { header, .. } => header.snapshot.is_some(),
            Event::Entry { data, .. } => data.is_some(),
            Event::Txn { .. } => true,
            _ => false,
        };
        if let Some(index) = self.index.as_mut().filter(|_| writes) {
            Arc::make_mut(index).saw_record(raw.index, db);
        }
        let Some(db) = db.filter(|_| usable) else {
            return;
        };
        let at = ScanPoint {
            offset: raw.end(),
            record: raw.index + 1,
            format: self.format,
            log_end: self.log_end,
        };
        self.offer(at, applied, self.seen, db, false);
    }

    /// A checkpoint at `at` with `db`, the database after the records
    /// before it (`applied`: the last index applied; `entries`: entry
    /// records before it), kept if the spacing since the last one is
    /// reached or `forced` (one another walk of the same log already
    /// spaced out). For walks that know the database at a record boundary
    /// behind the one they read (the summary's one-pass replay applies an
    /// entry when it is known final, records after it).
    pub(crate) fn offer(
        &mut self,
        at: ScanPoint,
        applied: u64,
        entries: u64,
        db: &Db,
        forced: bool,
    ) {
        let last = self.list.last().expect("the start is always there");
        if at.record <= last.at.record
            || (!forced
                && entries.saturating_sub(last.entries) < self.every_entries
                && at.offset.saturating_sub(last.at.offset) < self.every_bytes)
        {
            return;
        }
        let detached = db.core().detached_bytes();
        if let Some(prev) = self.list.last_mut().filter(|c| c.db.is_some()) {
            prev.held = detached.saturating_sub(prev.detached_at);
        }
        self.list.push(Checkpoint {
            at,
            applied,
            entries,
            detached_at: detached,
            held: 0,
            shared: forced,
            db: Some(db.clone()),
            present: Some(Arc::new(Present::of(db))),
        });
        while self.len() > 1
            && (self.len() > self.policy.max.max(1) || self.held_bytes() > self.policy.budget_bytes)
        {
            self.thin();
        }
    }

    /// Every other checkpoint goes (the start stays), and the spacing
    /// doubles. What a dropped one held is mostly freed when the rows
    /// changed again before the next (it is counted as the larger of the
    /// two intervals' for the one kept).
    fn thin(&mut self) {
        let old = std::mem::take(&mut self.list);
        let mut it = old.into_iter();
        self.list.extend(it.next());
        while let Some(mut kept) = it.next() {
            if let Some(dropped) = it.next() {
                kept.held = kept.held.max(dropped.held);
            }
            self.list.push(kept);
        }
        self.every_entries = self.every_entries.saturating_mul(2);
        self.every_bytes = self.every_bytes.saturating_mul(2);
    }

    /// The end of the replay: what a jump needs of it.
    pub(crate) fn seal(
        &mut self,
        plan: &Plan,
        format: Format,
        damage: Option<LogError>,
        end_db: Option<&Db>,
        clean_to: u64,
    ) {
        if let (Some(last), Some(db)) = (self.list.last_mut(), end_db) {
            if last.db.is_some() {
                last.held = db.core().detached_bytes().saturating_sub(last.detached_at);
            }
        }
        if let Some(index) = self.index.as_mut() {
            Arc::make_mut(index).seal();
        }
        // What the last checkpoint holds is known only now.
        while self.len() > 1 && self.held_bytes() > self.policy.budget_bytes {
            self.thin();
        }
        let s = &plan.structure;
        self.sealed = Some(Sealed {
            superseded: s.superseded.clone(),
            commit: s.commit,
            prev_index: s.prev_index,
            records: plan.records,
            format,
            damage,
            clean_to,
            end_implicit: end_db.map(|d| d.core().implicit_changes()),
        });
    }

    /// The replay to `index` from the nearest checkpoint: push the file's
    /// bytes from [`Jump::offset`] on. Its [`Replay`] has the database and
    /// `applied` a replay from the start to `index` has; its `entries`
    /// are those from the checkpoint on. None before the replay ended.
    pub fn jump(&self, index: u64) -> Option<Jump> {
        self.jump_with(index, false, self.nearest(index))
    }

    /// Like [`Checkpoints::jump`], for the database alone: when the
    /// replay that kept the checkpoints went through `index` without an
    /// error, and no commit between the checkpoint and the next one (or
    /// the end) deleted or changed a row on its own (garbage collection,
    /// weak references: [`ovsdb::Database::implicit_changes`]), the jump
    /// reaches the database by the records' net change ([`crate::net`]),
    /// skipping the rows they add and delete again. Its `entries` then
    /// keep their stored sizes in every mode.
    pub fn jump_database(&self, index: u64) -> Option<Jump> {
        self.jump_database_from(index, None)
    }

    /// [`Checkpoints::jump_database`], starting at the best of `recent`
    /// (where earlier jumps landed, [`Checkpoint::after`]) instead of the
    /// nearest checkpoint when one is closer: at or before `index`, past
    /// the nearest checkpoint and before the next one (the interval whose
    /// records the load's replay vouched for).
    pub fn jump_database_from<'a>(
        &self,
        index: u64,
        recent: impl IntoIterator<Item = &'a Checkpoint>,
    ) -> Option<Jump> {
        let s = self.sealed.as_ref()?;
        let i = self.list.partition_point(|c| c.applied <= index);
        let nearest = &self.list[i.saturating_sub(1)];
        let cp = recent
            .into_iter()
            .filter(|r| {
                r.db.is_some()
                    && r.applied <= index
                    && r.applied > nearest.applied
                    && r.at.record > nearest.at.record
                    && self.list.partition_point(|c| c.applied <= r.applied) == i
            })
            .max_by_key(|r| r.applied)
            .unwrap_or(nearest);
        let implicit = |c: &Checkpoint| c.db.as_ref().map_or(0, |d| d.core().implicit_changes());
        let base = implicit(nearest);
        let next = match self.list.get(i) {
            Some(c) => Some(implicit(c)),
            None => s.end_implicit,
        };
        let exact = index <= s.clean_to && next == Some(base);
        let mut j = self.jump_with(index, exact, cp)?;
        if exact {
            j.indexed = self.indexed(index, cp);
        }
        Some(j)
    }

    /// A jump through the op index that has not landed yet, moved on to
    /// `index` (at or after where it lands, in the same checkpoint
    /// interval): the records in between are taken into its net change,
    /// without folding the span from its checkpoint again. What was read
    /// back stays; the new operations are read by [`Jump::reads`] (and a
    /// preview's by [`Jump::preview_reads`]). `Err` gives it back when it
    /// cannot move (then jump anew).
    pub fn step_jump(&self, mut j: Box<Jump>, index: u64) -> Result<Box<Jump>, Box<Jump>> {
        let (Some(s), Some(ops)) = (self.sealed.as_ref(), self.index.as_deref()) else {
            return Err(j);
        };
        let fits = |x: &Indexed| {
            !x.failed
                && index >= x.applied
                && index <= s.clean_to
                && self.list.partition_point(|c| c.applied <= index) == x.interval
        };
        let Some(mut x) = j.indexed.take_if(|x| fits(x)) else {
            return Err(j);
        };
        let Some(span) = ops.span(x.next_record, index) else {
            j.indexed = Some(x);
            return Err(j);
        };
        let Some(mut moved) = self.jump_with(index, true, &x.cp) else {
            j.indexed = Some(x);
            return Err(j);
        };
        x.net.extend_span(ops, span.clone());
        if let Some(rec) = span.last().map(|k| ops.rec(k)) {
            x.applied = rec.applied;
            x.next_record = rec.record + 1;
            x.resume_at = Some(ScanPoint {
                offset: rec.end,
                record: rec.record + 1,
                format: x.cp.at.format,
                log_end: rec.applied.saturating_add(1),
            })
            .filter(|r| r.format == Format::Clustered);
        }
        moved.indexed = Some(x);
        Ok(Box::new(moved))
    }

    /// The net change from `cp` to `index` taken from the op index, when
    /// it has every record in between.
    fn indexed(&self, index: u64, cp: &Checkpoint) -> Option<Box<Indexed>> {
        let ops = self.index.as_deref()?;
        cp.db.as_ref()?;
        let span = ops.span(cp.at.record, index)?;
        let mut net = NetChange::against(cp.present.clone());
        net.take_span(ops, span.clone());
        // It lands after the last record folded (or where it started).
        let last = span.last().map(|k| ops.rec(k));
        let resume_at = last.map(|rec| ScanPoint {
            offset: rec.end,
            record: rec.record + 1,
            format: cp.at.format,
            log_end: rec.applied.saturating_add(1),
        });
        Some(Box::new(Indexed {
            net,
            applied: last.map_or(cp.applied, |rec| rec.applied),
            resume_at: resume_at.filter(|r| r.format == Format::Clustered),
            failed: false,
            cp: cp.clone(),
            interval: self.list.partition_point(|c| c.applied <= index),
            next_record: last.map_or(cp.at.record, |rec| rec.record + 1),
        }))
    }

    fn jump_with(&self, index: u64, net: bool, cp: &Checkpoint) -> Option<Jump> {
        let s = self.sealed.as_ref()?;
        let upto = Upto::Index(index);
        let mut pass = match s.format {
            Format::Clustered => ReplayPass::new(
                s.superseded.clone(),
                s.commit,
                s.prev_index,
                s.records,
                upto,
            ),
            Format::Standalone => ReplayPass::first(upto),
        };
        pass.resume_at(&cp.at, cp.db.clone(), cp.applied);
        let (pass, fallback) = if net {
            (
                pass.net(cp.present.clone()),
                self.jump_with(index, false, cp).map(Box::new),
            )
        } else {
            (pass, None)
        };
        Some(Jump {
            scan: LogScan::resume(jump_options(net, &s.damage), &cp.at),
            pass,
            start: cp.at,
            damage: s.damage.clone(),
            fallback,
            indexed: None,
        })
    }
}

/// A jump by net change taken from the op index: the change, waiting
/// for the bytes it reads back, and where it lands.
struct Indexed {
    net: NetChange,
    applied: u64,
    resume_at: Option<ScanPoint>,
    /// Building ahead ([`Jump::build`]) met a value that does not read:
    /// the landing will fail too and walk plainly.
    failed: bool,
    /// Where it started, the checkpoint interval it lies in (the place
    /// in [`Checkpoints::list`] of the next checkpoint) and the record
    /// after the last one folded: a step moves it on
    /// ([`Checkpoints::step_jump`]).
    cp: Checkpoint,
    interval: usize,
    next_record: usize,
}

impl Indexed {
    /// The checkpoint's database, the change's base (an indexed jump
    /// starts only where there is one): a preview's rows and the
    /// landing's are built against it.
    fn base(&self) -> Option<&Db> {
        self.cp.db.as_ref()
    }

    /// The base and the place of table `table` in its schema.
    fn table(&self, table: &str) -> Option<(&Db, usize)> {
        let db = self.base()?;
        Some((db, db.schema.table_index(table)?))
    }
}

/// The scanner options of a jump's walk: a plain jump reads each txn on
/// the way; a jump by net change (`net`) reads the bytes itself and, in a
/// file without damage, trusts the hashes (the replay that kept the
/// checkpoints verified them, as a replay's second walk trusts its
/// first's).
fn jump_options(net: bool, damage: &Option<LogError>) -> ScanOptions {
    ScanOptions {
        txn: !net,
        trust_sha1: net && damage.is_none(),
        known_good: net && damage.is_none(),
        ..ScanOptions::default()
    }
}

/// A replay resumed at a checkpoint ([`Checkpoints::jump`]).
pub struct Jump {
    scan: LogScan,
    pass: ReplayPass,
    start: ScanPoint,
    damage: Option<LogError>,
    /// A jump by net change: the plain jump to walk again with if
    /// applying the net change fails.
    fallback: Option<Box<Jump>>,
    /// A jump by net change through the op index: no walk, the byte
    /// ranges of [`Jump::reads`] instead.
    indexed: Option<Box<Indexed>>,
}

/// The end of a [`Jump`]'s walk.
pub type Landing = Result<Replay, Box<Jump>>;

impl Jump {
    /// The byte offset the chunks pushed must start at.
    pub fn offset(&self) -> u64 {
        self.start.offset
    }

    /// Whether it reaches the database by the records' net change
    /// ([`Checkpoints::jump_database`] found that exact).
    pub fn by_net_change(&self) -> bool {
        self.fallback.is_some()
    }

    /// The checkpoint it resumed at.
    pub fn start(&self) -> ScanPoint {
        self.start
    }

    /// A jump through the op index ([`Policy::op_index`]) needs no walk:
    /// the caller reads these byte ranges of the file, gives each to
    /// [`Jump::fill`], then calls [`Jump::finish`] without pushing
    /// anything. Empty for a jump that walks (from [`Jump::offset`] on),
    /// and once every range is in (a preview's ranges,
    /// [`Jump::preview_reads`], are not read again).
    pub fn reads(&self) -> Vec<(u64, u64)> {
        self.indexed
            .as_ref()
            .map_or_else(Vec::new, |x| x.net.reads())
    }

    /// A jump through the op index, before anything is read back: what
    /// the database at the index holds (the rows of table `table` in UUID
    /// order, every table's row count), from the net change alone. A
    /// reader is shown that, and the few rows on screen
    /// ([`Jump::preview_reads`], [`Jump::preview_rows`]), before the
    /// landing builds the rest. None for another jump or an unknown
    /// table.
    pub fn preview(&self, table: &str) -> Option<crate::net::Preview> {
        let x = self.indexed.as_ref()?;
        let (db, ti) = x.table(table)?;
        Some(x.net.preview(db, ti))
    }

    /// The byte ranges that hold what rows `uuids` of `table` need (give
    /// them to [`Jump::fill`]).
    pub fn preview_reads(&self, table: &str, uuids: &[Uuid]) -> Vec<(u64, u64)> {
        let Some(x) = self.indexed.as_ref() else {
            return Vec::new();
        };
        match x.table(table) {
            Some((_, ti)) => x.net.reads_for(ti, uuids),
            None => Vec::new(),
        }
    }

    /// Rows `uuids` of `table` at the index (None: not there), built on
    /// their own once [`Jump::preview_reads`] are in.
    pub fn preview_rows(
        &self,
        table: &str,
        uuids: &[Uuid],
    ) -> Result<Vec<Option<ovsdb::db::RowRef>>, String> {
        let x = self
            .indexed
            .as_ref()
            .ok_or("not a jump through the op index")?;
        let (db, ti) = x.table(table).ok_or_else(|| format!("no table {table}"))?;
        x.net.rows_of(db, ti, uuids)
    }

    /// Builds up to `budget` more rows of the landing of a jump through
    /// the op index once its reads are in, ahead of [`Jump::finish`]
    /// (which then only places them): the landing a slice at a time.
    /// True once none is left to build (or building failed: the finish
    /// then walks plainly, as it would have).
    pub fn build(&mut self, budget: usize) -> bool {
        let Some(x) = self.indexed.as_mut() else {
            return true;
        };
        let Some(db) = x.cp.db.as_ref().filter(|_| !x.failed) else {
            return true;
        };
        match x.net.build(db, budget) {
            Ok(done) => done,
            Err(_) => {
                x.failed = true;
                true
            }
        }
    }

    /// The file's bytes from `start` on: one of [`Jump::reads`]' ranges.
    pub fn fill(&mut self, start: u64, bytes: &[u8]) {
        if let Some(x) = self.indexed.as_mut() {
            x.net.fill(start, bytes);
        }
    }

    /// Whether it goes through the op index (no walk).
    pub fn by_index(&self) -> bool {
        self.indexed.is_some()
    }

    /// Only check the framing, not the SHA-1 of each record (the walk
    /// that made the checkpoints verified them).
    pub fn trust_sha1(mut self) -> Jump {
        let opts = ScanOptions {
            trust_sha1: true,
            ..self.scan_options()
        };
        self.scan = LogScan::resume(opts, &self.start);
        self
    }

    /// Takes the next chunk; true once the database is reached (push no
    /// more).
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        if self.indexed.is_some() {
            // Nothing to walk (see `Jump::reads`).
            return true;
        }
        let pass = &mut self.pass;
        if !pass.reached() {
            self.scan.push(chunk, &mut |ev| {
                pass.on_event(&ev);
                Verdict::Keep
            });
        }
        pass.reached()
    }

    /// The replay (to the end of the file if it came first); `Err`: a jump
    /// by net change that failed, and the plain jump to walk again with
    /// (from [`Jump::offset`]).
    pub fn finish(self) -> Landing {
        let Jump {
            mut scan, mut pass, ..
        } = self;
        if !pass.reached() && self.indexed.is_none() {
            scan.finish(&mut |ev| {
                pass.on_event(&ev);
                Verdict::Keep
            });
        }
        Jump { scan, pass, ..self }.end_with(None)
    }

    /// For a caller that walks the file itself (a [`LogScan::resume`] at
    /// [`Jump::start`] with these options, over the bytes from
    /// [`Jump::offset`]): the scanner's options.
    pub fn scan_options(&self) -> ScanOptions {
        jump_options(self.fallback.is_some(), &self.damage)
    }

    /// Takes one event of the caller's walk.
    pub fn on_event(&mut self, ev: &Event<'_>) {
        if !self.reached() {
            self.pass.on_event(ev);
        }
    }

    /// The database is reached: the walk may stop.
    pub fn reached(&self) -> bool {
        self.indexed.is_some() || self.pass.reached()
    }

    /// The replay, after the caller's walk `scan` (`Err`: as
    /// [`Jump::finish`]).
    pub fn end(self, scan: &LogScan) -> Landing {
        self.end_with(Some(scan))
    }

    fn end_with(self, scan: Option<&LogScan>) -> Landing {
        let Jump {
            scan: own,
            pass,
            damage,
            fallback,
            indexed,
            ..
        } = self;
        let mut pass = pass;
        if let Some(x) = indexed {
            // Applied below, as a walk's net change.
            pass.landed(x.net, x.applied, x.resume_at);
        }
        pass.flush_net();
        let failed = pass.net_failed();
        let mut r = if pass.is_second() {
            pass.finish(damage.clone())
        } else {
            match pass.end(scan.unwrap_or(&own)) {
                ReplayEnd::Done(r) => *r,
                // A standalone walk never needs a second one.
                ReplayEnd::Again(p) => p.finish(damage.clone()),
            }
        };
        if failed {
            if let Some(plain) = fallback {
                return Err(plain);
            }
        }
        // The walk may have stopped before the damage the load met.
        if r.error.is_none() {
            r.error = damage;
        }
        Ok(r)
    }
}
