//! Log replay: the database at a log index, and each transaction-carrying
//! record's sizes on the way ([`Replay`]). The replay is a consumer of
//! [`LogScan`] events ([`ReplayPass`], whose first walk is a [`Plan`] when
//! it needs two); [`replay`] and [`replay_database`] are wrappers for a
//! file held in memory. Applying one record is [`crate::replay::Db`]'s.

use crate::checkpoint::{Checkpoints, Policy};
use crate::error::{ErrorKind, LogError};
use crate::framing::{Format, RawRecord, Skip};
use crate::replay::{Db, SizeDelta};
use crate::scan::{split_data, Event, LogScan, ScanOptions, ScanPoint, Verdict};
use crate::sizes::{resized, EntrySize};
use ovsdb::json::Json;
use ovsdb::DatabaseSchema;

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
pub(crate) fn apply_data(
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
