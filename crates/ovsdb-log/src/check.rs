//! Cross-server Raft invariants, as `ovsdb-tool check-cluster` enforces them
//! (spec §6.2). Unlike the C tool, which stops at the first violation, all
//! violations are collected.

use crate::error::LogError;
use crate::raft::{ClusterHeader, RecordBody, Servers};
use crate::scan::{Event, LogScan, ScanOptions, Verdict};
use crate::uuid::Uuid;
use std::collections::BTreeMap;
use std::fmt;

/// One broken invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The file's name as given by the caller.
    pub file: String,
    /// Its server ID, when known.
    pub server: Option<Uuid>,
    pub record: Option<usize>,
    pub term: Option<u64>,
    pub index: Option<u64>,
    /// Short rule name (`log-matching`, `election-safety`, ...).
    pub rule: &'static str,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: server {}",
            self.file,
            self.server.map_or("-".into(), |s| s.short8())
        )?;
        write!(
            f,
            " record {}",
            self.record.map_or("-".into(), |r| r.to_string())
        )?;
        write!(
            f,
            " term {}",
            self.term.map_or("-".into(), |t| t.to_string())
        )?;
        write!(
            f,
            " index {}",
            self.index.map_or("-".into(), |i| i.to_string())
        )?;
        write!(f, ": {}: {}", self.rule, self.message)
    }
}

/// A span of one file that could not be read (a record skipped between
/// good records). The check treats what it may have held as unknown: it
/// neither confirms nor contradicts the other servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownSpan {
    pub file: String,
    pub server: Option<Uuid>,
    /// The record number the span takes, its byte offset and length.
    pub record: usize,
    pub offset: u64,
    pub bytes: u64,
    /// Why it could not be read.
    pub error: LogError,
    /// The log indexes whose entries this span may have held or replaced
    /// (first, last), when any.
    pub indexes: Option<(u64, u64)>,
}

impl fmt::Display for UnknownSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} bytes at offset {} (record {}) skipped: {}",
            self.file, self.bytes, self.offset, self.record, self.error.kind
        )?;
        match self.indexes {
            Some((a, b)) if a == b => write!(f, "; entry {a} unknown"),
            Some((a, b)) => write!(f, "; entries {a}..{b} unknown"),
            None => write!(f, "; no entry index unknown"),
        }
    }
}

/// Log Matching between two files, as counted over their common indexes
/// below the highest index with equal terms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairCount {
    pub a: String,
    pub b: String,
    /// Indexes whose entries were verified to be the same (digests).
    pub agreed: u64,
    /// Indexes where one side's entry is unknown (skipped span).
    pub unknown: u64,
}

/// Result of [`check_cluster`].
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// Informational messages (`check-cluster` prints them on stdout).
    pub warnings: Vec<String>,
    pub violations: Vec<Violation>,
    /// A file that could not be read or parsed (a read error that no good
    /// record follows is fatal, as for `check-cluster`): file name and
    /// error.
    pub unreadable: Vec<(String, LogError)>,
    /// Skipped spans: the rules could not look at what they held.
    pub unknown: Vec<UnknownSpan>,
    /// Per ordered pair of files, the Log Matching tally.
    pub pairs: Vec<PairCount>,
    /// Entries whose data was parsed for their meaning digest: the ones no
    /// file read before held with the same bytes at the same index.
    pub digested: u64,
}

impl CheckReport {
    /// 0 = invariants hold, 1 = violations, 2 = unreadable input, or
    /// unknown spans and no violation (the invariants could not be
    /// verified on the whole input).
    pub fn exit_code(&self) -> u8 {
        if !self.unreadable.is_empty() {
            2
        } else if !self.violations.is_empty() {
            1
        } else if !self.unknown.is_empty() {
            2
        } else {
            0
        }
    }
}

/// What the rules keep of one log entry: a few dozen bytes however large
/// the entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slim {
    term: u64,
    record: usize,
    /// SHA-1 of the record body (verified by the framer).
    body: [u8; 20],
    /// SHA-1 of the entry's meaning: term, eid, servers (sorted) and data
    /// (objects sorted at every depth). Equal digests = the same entry.
    meaning: [u8; 20],
    /// The entry's servers list the file's own server (4 hex digits).
    lists_me: bool,
}

impl Slim {
    fn same(&self, other: &Slim) -> bool {
        self.body == other.body || self.meaning == other.meaning
    }
}

/// One file, as the cross-file rules need it.
struct SlimLog {
    file: String,
    server_id: Uuid,
    in_prev_servers: bool,
    log_start: u64,
    /// `None`: unknown (inside or hidden by a skipped span).
    entries: Vec<Option<Slim>>,
    skipped: bool,
    /// An entry read after the file's first violation (when its own rules
    /// stopped, so it is in no place of `entries`) lists the file's server.
    listed_later: bool,
}

impl SlimLog {
    fn log_end(&self) -> u64 {
        self.log_start.saturating_add(self.entries.len() as u64)
    }
    fn entry(&self, index: u64) -> Option<&Option<Slim>> {
        index
            .checked_sub(self.log_start)
            .and_then(|i| self.entries.get(i as usize))
    }
    fn last_term(&self, snap_term: u64) -> Option<u64> {
        match self.entries.last() {
            None => Some(snap_term),
            Some(e) => e.map(|e| e.term),
        }
    }
}

/// Smallest clustered record that can carry an entry: header line with a
/// one-digit length (57 bytes) plus `{"term":1,"index":1}`.
const MIN_ENTRY_RECORD: u64 = 57 + 20;

/// The digest of an entry's meaning (see [`Slim::meaning`]); `data` is
/// the raw `data` value, parsed here and dropped.
fn meaning_digest(
    e: &crate::raft::Entry,
    data: Option<&[u8]>,
    buf: &mut Vec<u8>,
) -> Result<[u8; 20], String> {
    use sha1::{Digest, Sha1};
    let mut h = Sha1::new();
    h.update(e.term.to_le_bytes());
    match e.eid {
        None => h.update([0u8]),
        Some(u) => {
            h.update([1u8]);
            h.update(u.0.to_le_bytes());
        }
    }
    match &e.servers {
        None => h.update([0u8]),
        Some(s) => {
            h.update([1u8]);
            let sorted = s.sorted();
            h.update((sorted.len() as u64).to_le_bytes());
            for (sid, addr) in sorted {
                h.update(sid.0.to_le_bytes());
                h.update((addr.len() as u64).to_le_bytes());
                h.update(addr.as_bytes());
            }
        }
    }
    match data {
        None => h.update([0u8]),
        Some(d) => {
            // The canonical text straight from the bytes; the tree when the
            // fast path steps aside (escapes, reals, bad syntax).
            if crate::canon::canonical(d, buf).is_none() {
                let mut j = ovsdb::json::parse_value(d).map_err(|e| e.to_string())?;
                j.sort_recursive();
                buf.clear();
                j.write_compact(buf);
            }
            h.update([1u8]);
            h.update((buf.len() as u64).to_le_bytes());
            h.update(&buf[..]);
            if buf.capacity() > 1 << 24 {
                *buf = Vec::new();
            }
        }
    }
    Ok(h.finalize().into())
}

/// Streaming cluster checker: files are added one at a time and only what
/// the rules need is kept of each (term, record number and two digests per
/// entry), so the caller can drop a file's bytes before reading the next.
/// [`check_cluster`] is this over files held in memory.
#[derive(Default)]
pub struct Checker {
    unreadable: Vec<(String, LogError)>,
    /// Identity findings come first in the report, then the records'.
    id_warnings: Vec<String>,
    id_violations: Vec<Violation>,
    warnings: Vec<String>,
    violations: Vec<Violation>,
    unknown: Vec<UnknownSpan>,
    first: Option<(Option<Uuid>, String)>,
    sids: Vec<(Uuid, String)>,
    logs: Vec<SlimLog>,
    // term -> (leader sid, file) across files.
    leaders: BTreeMap<u64, (Uuid, String)>,
    // term -> largest log_end of the leader when it recorded itself as leader.
    leader_log_end: BTreeMap<u64, u64>,
    // Terms whose leader's log end is unknown (a skipped span came before).
    leader_log_unknown: std::collections::BTreeSet<u64>,
    // term -> (highest commit index, file).
    commits: BTreeMap<u64, (u64, String)>,
    any_term: bool,
    /// Entries whose data was parsed for their meaning digest.
    digested: u64,
}

#[allow(clippy::too_many_arguments)]
fn violation(
    file: &str,
    server: Option<Uuid>,
    record: Option<usize>,
    term: Option<u64>,
    index: Option<u64>,
    rule: &'static str,
    message: String,
) -> Violation {
    Violation {
        file: file.to_string(),
        server,
        record,
        term,
        index,
        rule,
        message,
    }
}

/// What a [`Checker`] knew before a file's walk began (everything but the
/// files' entry logs, which a walk only adds to at its end): see
/// [`Checker::mark`].
pub struct CheckerMark(Box<Checker>);

impl Checker {
    pub fn new() -> Self {
        Checker::default()
    }

    /// Notes the cross-file state (per term and per finding, small) so that
    /// a walk that turns out not to count can be undone with
    /// [`Checker::rollback`]: a file read in one pass with others whose
    /// damage is only known at its end.
    pub fn mark(&self) -> CheckerMark {
        CheckerMark(Box::new(Checker {
            unreadable: self.unreadable.clone(),
            id_warnings: self.id_warnings.clone(),
            id_violations: self.id_violations.clone(),
            warnings: self.warnings.clone(),
            violations: self.violations.clone(),
            unknown: self.unknown.clone(),
            first: self.first.clone(),
            sids: self.sids.clone(),
            logs: Vec::new(),
            leaders: self.leaders.clone(),
            leader_log_end: self.leader_log_end.clone(),
            leader_log_unknown: self.leader_log_unknown.clone(),
            commits: self.commits.clone(),
            any_term: self.any_term,
            digested: self.digested,
        }))
    }

    /// Forgets everything done since `m` was taken, except files ended
    /// with [`Checker::end_file`] since (do not end a file you roll back).
    pub fn rollback(&mut self, m: CheckerMark) {
        let logs = std::mem::take(&mut self.logs);
        *self = *m.0;
        self.logs = logs;
    }

    /// Reads one clustered file and checks its own records. Nothing of
    /// `bytes` is kept.
    pub fn add_file(&mut self, name: &str, bytes: &[u8]) {
        self.add_file_chunks(name, [bytes]);
    }

    /// Reads one clustered file given as chunks (a [`LogScan`] walk per
    /// file; nothing of the bytes is kept) and checks its own records.
    pub fn add_file_chunks<'c>(&mut self, name: &str, chunks: impl IntoIterator<Item = &'c [u8]>) {
        let mut fc = FileCheck::new(name);
        let mut scan = LogScan::new(ScanOptions::default());
        for c in chunks {
            scan.push(c, &mut |ev| fc.on_event(self, &ev));
        }
        scan.finish(&mut |ev| fc.on_event(self, &ev));
        self.end_file(fc);
    }

    /// Starts a file for a walk the caller drives: feed every event of a
    /// [`LogScan`] (default options) to [`FileCheck::on_event`], then
    /// [`Checker::end_file`].
    pub fn begin_file(&self, name: &str) -> FileCheck {
        FileCheck::new(name)
    }

    /// Ends a file started with [`Checker::begin_file`].
    pub fn end_file(&mut self, fc: FileCheck) {
        let name = fc.name.clone();
        match fc.end() {
            Err(e) => self.unreadable.push((name, e)),
            Ok(Some(log)) => self.logs.push(log),
            Ok(None) => {}
        }
    }

    fn header(&mut self, name: &str, header: &ClusterHeader) -> FileState {
        let sid = Some(header.server_id);
        if let Some((_, other)) = self.sids.iter().find(|(s, _)| *s == header.server_id) {
            self.id_violations.push(violation(
                name,
                sid,
                Some(0),
                None,
                None,
                "identity",
                format!(
                    "{name} and {other} have the same server ID {}",
                    header.server_id
                ),
            ));
        }
        self.sids.push((header.server_id, name.to_string()));
        // A file of another cluster (or database) is only told apart: its
        // terms and entries would break every cross-file rule for nothing.
        let mut foreign = false;
        match &self.first {
            None => self.first = Some((header.cluster_id, header.name.clone())),
            Some((cid, dbname)) => {
                foreign = *cid != header.cluster_id || *dbname != header.name;
                if *cid != header.cluster_id {
                    self.id_violations.push(violation(
                        name,
                        sid,
                        Some(0),
                        None,
                        None,
                        "identity",
                        format!(
                            "cluster ID {} differs from the first file's {}",
                            header.cluster_id.map_or("-".into(), |c| c.to_string()),
                            cid.map_or("-".into(), |c| c.to_string())
                        ),
                    ));
                }
                if *dbname != header.name {
                    self.id_violations.push(violation(
                        name,
                        sid,
                        Some(0),
                        None,
                        None,
                        "identity",
                        format!(
                            "database name {} differs from the first file's {dbname}",
                            header.name
                        ),
                    ));
                }
            }
        }
        let me = header.server_id.short4();
        let in_servers = |s: &Servers| s.0.iter().any(|(id, _)| id.short4() == me);
        let prev_index = header.prev_index();
        let log = SlimLog {
            file: name.to_string(),
            server_id: header.server_id,
            in_prev_servers: header.prev_servers.as_ref().is_some_and(in_servers),
            log_start: prev_index.saturating_add(1),
            entries: Vec::new(),
            skipped: false,
            listed_later: false,
        };
        let snap_term = header.snapshot.as_ref().map_or(0, |s| s.term);
        if snap_term != 0 {
            self.any_term = true;
        }
        let commit_index = prev_index;
        let before = self.violations.len();
        if foreign {
            self.warnings.push(format!(
                "{name}: not checked against the other files (another cluster)"
            ));
        }
        FileState {
            sid,
            me,
            log,
            snap_term,
            term: 0,
            vote: None,
            leader: None,
            commit_index,
            before,
            pending: None,
            buf: Vec::new(),
            stopped: foreign,
            foreign,
        }
    }

    /// Election Safety across files: record `k` of file `name` says `l`
    /// leads term `t`; a file read before may have said another did.
    fn leader_elsewhere(&mut self, name: &str, sid: Option<Uuid>, k: usize, t: u64, l: Uuid) {
        match self.leaders.get(&t) {
            Some((other, f)) if *other != l => {
                self.violations.push(violation(
                    name,
                    sid,
                    Some(k),
                    Some(t),
                    None,
                    "election-safety",
                    format!("term {t} has two different leaders: {other} (per {f}) and {l}"),
                ));
            }
            Some(_) => {}
            None => {
                self.leaders.insert(t, (l, name.to_string()));
            }
        }
    }

    /// The cross-file rules, and the report.
    pub fn finish(self) -> CheckReport {
        let mut rep = CheckReport::default();
        if !self.unreadable.is_empty() {
            rep.unreadable = self.unreadable;
            return rep;
        }
        rep.warnings = self.id_warnings;
        rep.warnings.extend(self.warnings);
        rep.violations = self.id_violations;
        rep.violations.extend(self.violations);
        rep.unknown = self.unknown;
        rep.digested = self.digested;
        let logs = self.logs;
        let any_skipped = logs.iter().any(|l| l.skipped);

        if !self.any_term && !any_skipped && rep.violations.is_empty() && !logs.is_empty() {
            rep.violations.push(Violation {
                file: logs.first().map_or(String::new(), |l| l.file.clone()),
                server: None,
                record: None,
                term: None,
                index: None,
                rule: "non-empty",
                message: "all logs are empty".into(),
            });
        }

        // Leader Completeness.
        let (leaders, leader_log_end, commits) =
            (&self.leaders, &self.leader_log_end, &self.commits);
        let mut committed = 0u64;
        let mut all_terms: Vec<u64> = leaders.keys().chain(commits.keys()).copied().collect();
        ovsdb::order::sort(&mut all_terms);
        all_terms.dedup();
        for t in all_terms {
            if let (Some((l, f)), Some(&le)) = (leaders.get(&t), leader_log_end.get(&t)) {
                if le > 0 && le - 1 < committed && !self.leader_log_unknown.contains(&t) {
                    rep.violations.push(Violation {
                        file: f.clone(),
                        server: Some(*l),
                        record: None,
                        term: Some(t),
                        index: Some(committed),
                        rule: "leader-completeness",
                        message: format!(
                            "leader {l} for term {t} has log entries only up to index {}, but index {committed} was committed in a previous term",
                            le - 1
                        ),
                    });
                }
            }
            if let Some((c, _)) = commits.get(&t) {
                committed = committed.max(*c);
            }
        }

        // Log Matching: below the highest common index with equal terms,
        // every common index must hold the same entry (digests compared).
        // An unknown entry neither sets that point nor counts as agreement.
        for a in 0..logs.len() {
            for b in 0..logs.len() {
                if a == b {
                    continue;
                }
                let (x, y) = (&logs[a], &logs[b]);
                let mut pair = PairCount {
                    a: x.file.clone(),
                    b: y.file.clone(),
                    ..PairCount::default()
                };
                let lo = x.log_start.max(y.log_start);
                let hi = x.log_end().min(y.log_end());
                let mut matching = false;
                let mut i = hi;
                while i > lo {
                    i -= 1;
                    let (Some(ex), Some(ey)) = (x.entry(i), y.entry(i)) else {
                        continue;
                    };
                    let (Some(ex), Some(ey)) = (ex, ey) else {
                        if matching {
                            pair.unknown += 1;
                        }
                        continue;
                    };
                    if !matching && ex.term == ey.term {
                        matching = true;
                    }
                    if !matching {
                        continue;
                    }
                    if ex.same(ey) {
                        pair.agreed += 1;
                    } else {
                        rep.violations.push(Violation {
                            file: x.file.clone(),
                            server: Some(x.server_id),
                            record: Some(ex.record),
                            term: Some(ex.term),
                            index: Some(i),
                            rule: "log-matching",
                            message: format!(
                                "entry {i} differs from {} (record {}, term {}) although a later common index has equal terms",
                                y.file, ey.record, ey.term
                            ),
                        });
                        break;
                    }
                }
                rep.pairs.push(pair);
            }
        }

        // Membership (first 4 hex digits, like check-cluster).
        for log in &logs {
            let found = log.in_prev_servers
                || log.listed_later
                || log.entries.iter().flatten().any(|e| e.lists_me);
            if found {
                continue;
            }
            if log.skipped {
                rep.warnings.push(format!(
                    "{}: membership of server {} unknown (its servers may be in a skipped span)",
                    log.file, log.server_id
                ));
                continue;
            }
            rep.violations.push(Violation {
                file: log.file.clone(),
                server: Some(log.server_id),
                record: None,
                term: None,
                index: None,
                rule: "membership",
                message: format!(
                    "server {} is not in its snapshot's servers nor in any entry's servers",
                    log.server_id
                ),
            });
        }
        rep
    }
}

/// One file of a [`Checker`] while its walk is under way.
pub struct FileCheck {
    name: String,
    state: Option<FileState>,
    joining: bool,
    error: Option<LogError>,
    started: bool,
}

struct FileState {
    sid: Option<Uuid>,
    me: String,
    log: SlimLog,
    snap_term: u64,
    term: u64,
    vote: Option<Uuid>,
    leader: Option<Uuid>,
    commit_index: u64,
    before: usize,
    /// A skipped span whose entries are not placed yet: (position in
    /// `unknown`, entries it can hold at most).
    pending: Option<(usize, u64)>,
    buf: Vec<u8>,
    stopped: bool,
    /// Of another cluster than the first file's: left out of the
    /// cross-file rules.
    foreign: bool,
}

impl FileCheck {
    fn new(name: &str) -> FileCheck {
        FileCheck {
            name: name.to_string(),
            state: None,
            joining: false,
            error: None,
            started: false,
        }
    }

    fn end(self) -> Result<Option<SlimLog>, LogError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.started {
            return Err(LogError {
                record: 0,
                offset: 0,
                kind: crate::ErrorKind::EmptyFile,
            });
        }
        Ok(self.state.filter(|s| !s.foreign).map(|s| s.log))
    }

    /// Takes one event of the file's walk.
    pub fn on_event(&mut self, ck: &mut Checker, ev: &Event<'_>) -> Verdict {
        if self.error.is_some() {
            return Verdict::Keep;
        }
        let first = !self.started;
        self.started = true;
        let name = self.name.clone();
        let name = name.as_str();
        if first {
            // Record 0: the header; no header, no identity.
            match ev {
                Event::Tail(e) => self.error = Some(e.clone()),
                Event::Skipped(k) => self.error = Some(k.error.clone()),
                Event::Header { header, .. } => {
                    if header.is_joining() {
                        ck.id_warnings
                            .push(format!("{name} has not joined the cluster, omitting"));
                        self.joining = true;
                    } else {
                        self.state = Some(ck.header(name, header));
                    }
                }
                other => {
                    // check-cluster's "cannot identify file type", in words
                    // that say what the file is.
                    if let Some(raw) = other.raw() {
                        self.error = Some(raw.error(crate::ErrorKind::NotClustered));
                    }
                }
            }
            return Verdict::Keep;
        }
        if let Event::Tail(e) = ev {
            // Like check-cluster, the rest of the file must still read.
            self.error = Some(e.clone());
            return Verdict::Keep;
        }
        let Some(st) = self.state.as_mut() else {
            return Verdict::Keep;
        };
        let sid = st.sid;
        let me = st.me.clone();
        let in_servers = |s: &Servers| s.0.iter().any(|(id, _)| id.short4() == me);
        let snap_term = st.snap_term;
        let raw = match ev {
            Event::Skipped(k) => {
                let log = &mut st.log;
                log.skipped = true;
                // The span may have replaced any entry not committed
                // yet, and added entries after the last one.
                let from = st.commit_index.saturating_add(1).max(log.log_start);
                let mut indexes = None;
                for i in from..log.log_end() {
                    log.entries[(i - log.log_start) as usize] = None;
                    indexes = Some((indexes.map_or(i, |(a, _)| a), i));
                }
                let most = k.bytes / MIN_ENTRY_RECORD;
                st.pending = Some((ck.unknown.len(), most));
                ck.unknown.push(UnknownSpan {
                    file: name.to_string(),
                    server: sid,
                    record: k.record,
                    offset: k.offset,
                    bytes: k.bytes,
                    error: k.error.clone(),
                    indexes,
                });
                return Verdict::Keep;
            }
            _ => match ev.raw() {
                Some(r) => r,
                None => return Verdict::Keep,
            },
        };
        let r = match ev {
            Event::Entry { entry, .. } => RecordBody::Entry(entry.clone()),
            Event::Term { term, .. } => RecordBody::Term { term: *term },
            Event::Vote { term, vote, .. } => RecordBody::Vote {
                term: *term,
                vote: *vote,
            },
            Event::Leader { term, leader, .. } => RecordBody::Leader {
                term: *term,
                leader: *leader,
            },
            Event::CommitIndex { commit_index, .. } => RecordBody::CommitIndex {
                commit_index: *commit_index,
            },
            Event::Note { note, .. } => RecordBody::Note { note: note.clone() },
            _ => return Verdict::Keep,
        };
        let r = crate::raft::RaftRecord {
            comment: None,
            body: r,
        };
        let k = raw.index;

        let slim = match &r.body {
            RecordBody::Entry(e) => {
                let data = match ev {
                    Event::Entry { data, .. } => *data,
                    _ => None,
                };
                // The servers of one cluster write the same entry as the
                // same bytes: when a file already read holds this index
                // with this very body (SHA-1 compared, so it is verified,
                // not assumed), its meaning is this one's, and the data
                // need not be parsed again. Only bodies that differ are
                // digested, so a cluster's common log is parsed once.
                let known = ck.logs.iter().find_map(|l| match l.entry(e.index) {
                    Some(Some(s)) if s.body == raw.sha1 => Some(s.meaning),
                    _ => None,
                });
                let meaning = match known {
                    Some(m) => Ok(m),
                    None => {
                        ck.digested += 1;
                        meaning_digest(e, data, &mut st.buf)
                    }
                };
                match meaning {
                    Ok(meaning) => Some(Slim {
                        term: e.term,
                        record: k,
                        body: raw.sha1,
                        meaning,
                        lists_me: e.servers.as_ref().is_some_and(in_servers),
                    }),
                    Err(m) => {
                        return Verdict::Reject(
                            raw.error(crate::ErrorKind::BadJson { message: m }),
                        );
                    }
                }
            }
            _ => None,
        };
        // Like check-cluster, which stops at the first violation, stop
        // checking this file's records after its first one (later records
        // would only repeat it); the rest must still read.
        if !st.stopped && ck.violations.len() > st.before {
            ck.warnings.push(format!(
                "{name}: records from {k} on checked only for membership and election safety"
            ));
            st.stopped = true;
        }
        if st.stopped {
            // What a record says on its own still counts across files,
            // where leaving it out could only invent a violation (a server
            // "in no entry's servers") or hide one: an entry listing this
            // server, a leader for a term. A file of another cluster gives
            // nothing.
            if !st.foreign {
                match r.body {
                    RecordBody::Entry(_) => {
                        st.log.listed_later |= slim.is_some_and(|s| s.lists_me);
                    }
                    RecordBody::Leader { term, leader } => {
                        ck.leader_elsewhere(name, sid, k, term, leader);
                    }
                    _ => {}
                }
            }
            return Verdict::Keep;
        }
        if let Some(t) = r.term() {
            if t != 0 {
                ck.any_term = true;
            }
            if t > st.term {
                st.term = t;
                st.vote = None;
                st.leader = None;
            }
        }
        match r.body {
            RecordBody::Entry(e) => {
                let slim = slim.expect("entries have a digest");
                let v = |rule, msg| {
                    violation(name, sid, Some(k), Some(e.term), Some(e.index), rule, msg)
                };
                if e.index < st.commit_index {
                    let log_end = st.log.log_end();
                    ck.violations.push(v(
                            "no-truncate-committed",
                            format!(
                                "attempts to truncate log from {log_end} to {} entries, but commit index is already {}",
                                e.index,
                                st.commit_index
                            ),
                        ));
                    return Verdict::Keep;
                }
                if e.index > st.log.log_end() {
                    // Entries a skipped span held (as many as it can).
                    let gap = e.index - st.log.log_end();
                    match st.pending {
                        Some((u, most)) if gap <= most => {
                            let first = st.log.log_end();
                            st.log
                                .entries
                                .resize(st.log.entries.len() + gap as usize, None);
                            let span = &mut ck.unknown[u];
                            let lo = span.indexes.map_or(first, |(a, _)| a);
                            span.indexes = Some((lo, e.index - 1));
                        }
                        _ => {
                            let log_end = st.log.log_end();
                            ck.violations
                                .push(v("no-skip", format!("skips past expected index {log_end}")));
                            return Verdict::Keep;
                        }
                    }
                }
                st.pending = None;
                let log_end = st.log.log_end();
                if e.index < log_end {
                    if st.leader == sid {
                        ck.violations.push(v(
                            "leader-append-only",
                            format!(
                                "truncates log from {log_end} to {} entries while server is leader",
                                e.index
                            ),
                        ));
                    } else {
                        ck.warnings.push(format!(
                            "{name}: record {k} truncates log from {log_end} to {} entries",
                            e.index
                        ));
                    }
                    st.log
                        .entries
                        .truncate((e.index.saturating_sub(st.log.log_start)) as usize);
                }
                // Unknown previous term: nothing to compare with.
                if let Some(prev_term) = st.log.last_term(snap_term) {
                    if e.term < prev_term {
                        ck.violations.push(v(
                            "term-order",
                            format!("term {} precedes previous entry's term {prev_term}", e.term),
                        ));
                    }
                }
                st.log.entries.push(Some(slim));
            }
            RecordBody::Term { .. } => {}
            RecordBody::Vote { term: t, vote: v } => {
                if t < st.term {
                    ck.violations.push(violation(
                        name,
                        sid,
                        Some(k),
                        Some(t),
                        None,
                        "vote-term",
                        format!("votes for {v} in term {t} but current term is {}", st.term),
                    ));
                } else if let Some(old) = st.vote.filter(|o| *o != v) {
                    ck.violations.push(violation(
                        name,
                        sid,
                        Some(k),
                        Some(t),
                        None,
                        "one-vote-per-term",
                        format!("votes for {v} in term {t} but already voted for {old}"),
                    ));
                } else {
                    st.vote = Some(v);
                }
            }
            RecordBody::Note { note } => {
                if note == "left" {
                    ck.warnings.push(format!(
                        "{name}: record {k} shows that the server left the cluster"
                    ));
                }
            }
            RecordBody::CommitIndex { commit_index: c } => {
                let log_end = st.log.log_end();
                if c < st.commit_index {
                    ck.violations.push(violation(
                        name,
                        sid,
                        Some(k),
                        None,
                        Some(c),
                        "commit-monotonic",
                        format!("commit index regresses from {} to {c}", st.commit_index),
                    ));
                    return Verdict::Keep;
                }
                if c >= log_end {
                    // A skipped span may have held the entries up to c.
                    let gap = c + 1 - log_end;
                    match &mut st.pending {
                        Some((u, most)) if gap <= *most => {
                            st.log
                                .entries
                                .resize(st.log.entries.len() + gap as usize, None);
                            *most -= gap;
                            let span = &mut ck.unknown[*u];
                            let lo = span.indexes.map_or(log_end, |(a, _)| a);
                            span.indexes = Some((lo, c));
                        }
                        _ => {
                            ck.violations.push(violation(
                                name,
                                sid,
                                Some(k),
                                None,
                                Some(c),
                                "commit-within-log",
                                format!(
                                    "advances commit index to {c} but last log index is {}",
                                    log_end - 1
                                ),
                            ));
                            return Verdict::Keep;
                        }
                    }
                }
                st.commit_index = c;
                let slot = ck.commits.entry(st.term).or_insert((0, name.to_string()));
                if c > slot.0 {
                    *slot = (c, name.to_string());
                }
            }
            RecordBody::Leader { term: t, leader: l } => {
                if let Some(old) = st.leader.filter(|o| *o != l && t == st.term) {
                    ck.violations.push(violation(
                        name,
                        sid,
                        Some(k),
                        Some(t),
                        None,
                        "election-safety",
                        format!("term {t} has two different leaders {old} and {l} in this file"),
                    ));
                }
                if t == st.term {
                    st.leader = Some(l);
                }
                ck.leader_elsewhere(name, sid, k, t, l);
                if Some(l) == sid {
                    if st.pending.is_some() {
                        ck.leader_log_unknown.insert(t);
                    }
                    let le = ck.leader_log_end.entry(t).or_insert(0);
                    *le = (*le).max(st.log.log_end());
                }
            }
        }
        Verdict::Keep
    }
}

/// Checks the files of one cluster: `(name, bytes)` per server.
pub fn check_cluster(files: &[(&str, &[u8])]) -> CheckReport {
    let mut c = Checker::new();
    for (name, bytes) in files {
        c.add_file(name, bytes);
    }
    c.finish()
}

/// Damaged copies of a healthy cluster, for tests of checkers (ours and
/// `ovsdb-tool check-cluster`). Each damage keeps the framing valid.
pub mod damage {
    use crate::raft::{RaftRecord, RecordBody};
    use crate::writer::{read_clustered, write_clustered};

    type Files = Vec<(String, Vec<u8>)>;

    fn edit(
        files: &Files,
        which: usize,
        f: impl FnOnce(&mut crate::ClusterHeader, &mut Vec<RaftRecord>),
    ) -> Option<Files> {
        let mut out = files.clone();
        let (mut h, mut recs) = read_clustered(&out.get(which)?.1).ok()?;
        f(&mut h, &mut recs);
        out[which].1 = write_clustered(&h, &recs);
        Some(out)
    }

    /// The leader record with the highest term in any file: (file, term, sid).
    fn some_leader(files: &Files) -> Option<(usize, u64, crate::Uuid)> {
        let mut best = None;
        for (i, (_, b)) in files.iter().enumerate() {
            let (_, recs) = read_clustered(b).ok()?;
            for r in recs {
                if let RecordBody::Leader { term, leader } = r.body {
                    if best.is_none_or(|(_, t, _)| term > t) {
                        best = Some((i, term, leader));
                    }
                }
            }
        }
        best
    }

    /// Another file appends a Leader record naming itself for a term that
    /// already has a different leader.
    pub fn two_leaders(files: &Files) -> Option<Files> {
        let (_, term, leader) = some_leader(files)?;
        let other = files
            .iter()
            .position(|(_, b)| read_clustered(b).is_ok_and(|(h, _)| h.server_id != leader))?;
        edit(files, other, |h, recs| {
            let me = h.server_id;
            recs.push(RaftRecord {
                comment: None,
                body: RecordBody::Leader { term, leader: me },
            })
        })
    }

    /// One server's entry in the middle of the log gets another term.
    pub fn same_index_other_term(files: &Files) -> Option<Files> {
        edit(files, 1, |_, recs| {
            let entries: Vec<usize> = recs
                .iter()
                .enumerate()
                .filter(|(_, r)| matches!(r.body, RecordBody::Entry(ref e) if e.data.is_some()))
                .map(|(i, _)| i)
                .collect();
            if let Some(&i) = entries.get(entries.len() / 2) {
                if let RecordBody::Entry(e) = &mut recs[i].body {
                    e.term += 1;
                }
            }
        })
    }

    /// A commit index beyond the last entry is appended.
    pub fn commit_past_end(files: &Files) -> Option<Files> {
        edit(files, 0, |_, recs| {
            let last = recs
                .iter()
                .filter_map(|r| match &r.body {
                    RecordBody::Entry(e) => Some(e.index),
                    _ => None,
                })
                .next_back()
                .unwrap_or(1);
            recs.push(RaftRecord {
                comment: None,
                body: RecordBody::CommitIndex {
                    commit_index: last.saturating_add(5),
                },
            })
        })
    }

    /// An entry record in the middle of one file is removed.
    pub fn record_dropped(files: &Files) -> Option<Files> {
        edit(files, 2, |_, recs| {
            let entries: Vec<usize> = recs
                .iter()
                .enumerate()
                .filter(|(_, r)| matches!(r.body, RecordBody::Entry(_)))
                .map(|(i, _)| i)
                .collect();
            if let Some(&i) = entries.get(entries.len() / 2) {
                recs.remove(i);
            }
        })
    }

    /// File `which` opens with a commit index past its log's end (its
    /// snapshot), a violation (commit-within-log) at its first record:
    /// every later record of the file, its entries' server lists included,
    /// comes after it.
    pub fn commit_past_end_first(files: &Files, which: usize) -> Option<Files> {
        edit(files, which, |h, recs| {
            recs.insert(
                0,
                RaftRecord {
                    comment: None,
                    body: RecordBody::CommitIndex {
                        commit_index: h.prev_index().saturating_add(5),
                    },
                },
            )
        })
    }

    /// All four damages, named.
    pub fn all(files: &Files) -> Vec<(&'static str, Files)> {
        let mut v = Vec::new();
        for (name, f) in [
            ("two-leaders", two_leaders as fn(&Files) -> Option<Files>),
            ("same-index-other-term", same_index_other_term),
            ("commit-past-end", commit_past_end),
            ("record-dropped", record_dropped),
        ] {
            if let Some(d) = f(files) {
                v.push((name, d));
            }
        }
        v
    }
}
