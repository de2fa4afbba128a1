//! Cross-server Raft invariants, as `ovsdb-tool check-cluster` enforces them
//! (spec §6.2). Unlike the C tool, which stops at the first violation, all
//! violations are collected.

use crate::error::LogError;
use crate::framing::{Format, Framer};
use crate::raft::{ClusterHeader, RecordBody, Servers};
use crate::record::Record;
use crate::uuid::Uuid;
use ovsdb::json::Json;
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

/// Result of [`check_cluster`].
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// Informational messages (`check-cluster` prints them on stdout).
    pub warnings: Vec<String>,
    pub violations: Vec<Violation>,
    /// A file that could not be read or parsed (every read error is fatal
    /// for `check-cluster`): file name and error.
    pub unreadable: Vec<(String, LogError)>,
}

impl CheckReport {
    /// 0 = invariants hold, 1 = violations, 2 = unreadable input.
    pub fn exit_code(&self) -> u8 {
        if !self.unreadable.is_empty() {
            2
        } else if !self.violations.is_empty() {
            1
        } else {
            0
        }
    }
}

#[derive(Debug, Clone)]
struct LogEntry<'a> {
    term: u64,
    eid: Option<Uuid>,
    servers: Option<Servers>,
    data: Option<Json>,
    record: usize,
    body: &'a [u8],
}

struct ServerLog<'a> {
    file: String,
    header: ClusterHeader,
    log_start: u64,
    entries: Vec<LogEntry<'a>>,
}

impl<'a> ServerLog<'a> {
    fn log_end(&self) -> u64 {
        self.log_start.saturating_add(self.entries.len() as u64)
    }
    fn entry(&self, index: u64) -> Option<&LogEntry<'a>> {
        index
            .checked_sub(self.log_start)
            .and_then(|i| self.entries.get(i as usize))
    }
}

/// Record number, record, raw body.
type NumberedRecord<'a> = (usize, crate::RaftRecord, &'a [u8]);

/// Reads one clustered file completely (any error is fatal).
fn read_all(bytes: &[u8]) -> Result<(ClusterHeader, Vec<NumberedRecord<'_>>), LogError> {
    let mut fr = Framer::new(bytes);
    let mut header = None;
    let mut recs = Vec::new();
    for raw in fr.by_ref() {
        let raw = raw?;
        if raw.index == 0 && Format::from_magic(fr_magic(bytes)) != Some(Format::Clustered) {
            return Err(raw.error(crate::ErrorKind::UnknownMagic {
                magic: fr_magic(bytes).to_string(),
            }));
        }
        match raw.decode(Format::Clustered)? {
            Record::Header(h) => header = Some(h),
            Record::Raft(r) => recs.push((raw.index, r, raw.body)),
            _ => {}
        }
    }
    match header {
        Some(h) => Ok((h, recs)),
        None => Err(LogError {
            record: 0,
            offset: 0,
            kind: crate::ErrorKind::EmptyFile,
        }),
    }
}

fn fr_magic(bytes: &[u8]) -> &str {
    let line = &bytes[..bytes.len().min(crate::framing::MAX_HEADER_LINE)];
    let rest = line.strip_prefix(b"OVSDB ").unwrap_or(b"");
    let end = rest.iter().position(|&b| b == b' ').unwrap_or(0);
    std::str::from_utf8(&rest[..end]).unwrap_or("")
}

fn same_entry(a: &LogEntry<'_>, b: &LogEntry<'_>) -> bool {
    if a.body == b.body {
        return true;
    }
    let servers_eq = match (&a.servers, &b.servers) {
        (None, None) => true,
        (Some(x), Some(y)) => x.sorted() == y.sorted(),
        _ => false,
    };
    let data_eq = match (&a.data, &b.data) {
        (None, None) => true,
        (Some(x), Some(y)) => x == y || x.sorted_recursive() == y.sorted_recursive(),
        _ => false,
    };
    a.term == b.term && a.eid == b.eid && servers_eq && data_eq
}

/// Checks the files of one cluster: `(name, bytes)` per server.
pub fn check_cluster(files: &[(&str, &[u8])]) -> CheckReport {
    let mut rep = CheckReport::default();
    let mut logs: Vec<ServerLog<'_>> = Vec::new();
    let mut parsed = Vec::new();
    for (name, bytes) in files {
        match read_all(bytes) {
            Ok((h, recs)) => parsed.push((name.to_string(), h, recs)),
            Err(e) => rep.unreadable.push((name.to_string(), e)),
        }
    }
    if !rep.unreadable.is_empty() {
        return rep;
    }
    let violation = |file: &str,
                     server: Option<Uuid>,
                     record: Option<usize>,
                     term: Option<u64>,
                     index: Option<u64>,
                     rule: &'static str,
                     message: String| Violation {
        file: file.to_string(),
        server,
        record,
        term,
        index,
        rule,
        message,
    };

    // Identity checks.
    let mut first: Option<(Option<Uuid>, String)> = None;
    let mut sids: Vec<(Uuid, String)> = Vec::new();
    let mut members = Vec::new();
    for (name, h, recs) in parsed {
        if h.is_joining() {
            rep.warnings
                .push(format!("{name} has not joined the cluster, omitting"));
            continue;
        }
        let sid = Some(h.server_id);
        if let Some((_, other)) = sids.iter().find(|(s, _)| *s == h.server_id) {
            rep.violations.push(violation(
                &name,
                sid,
                Some(0),
                None,
                None,
                "identity",
                format!("{name} and {other} have the same server ID {}", h.server_id),
            ));
        }
        sids.push((h.server_id, name.clone()));
        match &first {
            None => first = Some((h.cluster_id, h.name.clone())),
            Some((cid, dbname)) => {
                if *cid != h.cluster_id {
                    rep.violations.push(violation(
                        &name,
                        sid,
                        Some(0),
                        None,
                        None,
                        "identity",
                        format!(
                            "cluster ID {} differs from the first file's {}",
                            h.cluster_id.map_or("-".into(), |c| c.to_string()),
                            cid.map_or("-".into(), |c| c.to_string())
                        ),
                    ));
                }
                if *dbname != h.name {
                    rep.violations.push(violation(
                        &name,
                        sid,
                        Some(0),
                        None,
                        None,
                        "identity",
                        format!(
                            "database name {} differs from the first file's {dbname}",
                            h.name
                        ),
                    ));
                }
            }
        }
        members.push((name, h, recs));
    }

    // term -> (leader sid, file) across files.
    let mut leaders: BTreeMap<u64, (Uuid, String)> = BTreeMap::new();
    // term -> largest log_end of the leader when it recorded itself as leader.
    let mut leader_log_end: BTreeMap<u64, u64> = BTreeMap::new();
    // term -> (highest commit index, file).
    let mut commits: BTreeMap<u64, (u64, String)> = BTreeMap::new();
    let mut any_term = false;

    for (name, h, recs) in members {
        let sid = Some(h.server_id);
        let prev_index = h.prev_index();
        let mut log = ServerLog {
            file: name.clone(),
            log_start: prev_index.saturating_add(1),
            entries: Vec::new(),
            header: h,
        };
        let snap_term = log.header.snapshot.as_ref().map_or(0, |s| s.term);
        if snap_term != 0 {
            any_term = true;
        }
        let mut term = 0u64;
        let mut vote: Option<Uuid> = None;
        let mut leader: Option<Uuid> = None;
        let mut commit_index = prev_index;
        let before = rep.violations.len();
        for (k, r, body) in recs {
            // Like check-cluster, which stops at the first violation, stop
            // replaying this file after its first one (later records would
            // only repeat it).
            if rep.violations.len() > before {
                rep.warnings
                    .push(format!("{name}: records from {k} on not checked"));
                break;
            }
            if let Some(t) = r.term() {
                if t != 0 {
                    any_term = true;
                }
                if t > term {
                    term = t;
                    vote = None;
                    leader = None;
                }
            }
            match r.body {
                RecordBody::Entry(e) => {
                    let log_end = log.log_end();
                    let v = |rule, msg| {
                        violation(&name, sid, Some(k), Some(e.term), Some(e.index), rule, msg)
                    };
                    if e.index < commit_index {
                        rep.violations.push(v(
                            "no-truncate-committed",
                            format!(
                                "attempts to truncate log from {} to {} entries, but commit index is already {commit_index}",
                                log_end - log.log_start,
                                e.index.saturating_sub(log.log_start)
                            ),
                        ));
                        continue;
                    }
                    if e.index > log_end {
                        rep.violations
                            .push(v("no-skip", format!("skips past expected index {log_end}")));
                        continue;
                    }
                    if e.index < log_end {
                        if leader == sid {
                            rep.violations.push(v(
                                "leader-append-only",
                                format!(
                                    "leader truncates its own log from {} to {} entries",
                                    log_end - log.log_start,
                                    e.index.saturating_sub(log.log_start)
                                ),
                            ));
                        } else {
                            rep.warnings.push(format!(
                                "{name}: record {k} truncates log from {} to {} entries",
                                log_end - log.log_start,
                                e.index.saturating_sub(log.log_start)
                            ));
                        }
                        log.entries
                            .truncate((e.index.saturating_sub(log.log_start)) as usize);
                    }
                    let prev_term = log.entries.last().map_or(snap_term, |p| p.term);
                    if e.term < prev_term {
                        rep.violations.push(v(
                            "term-order",
                            format!("term {} precedes previous entry's term {prev_term}", e.term),
                        ));
                    }
                    log.entries.push(LogEntry {
                        term: e.term,
                        eid: e.eid,
                        servers: e.servers,
                        data: e.data,
                        record: k,
                        body,
                    });
                }
                RecordBody::Term { .. } => {}
                RecordBody::Vote { term: t, vote: v } => {
                    if t < term {
                        rep.violations.push(violation(
                            &name,
                            sid,
                            Some(k),
                            Some(t),
                            None,
                            "vote-term",
                            format!("votes for {v} in term {t} but current term is {term}"),
                        ));
                    } else if let Some(old) = vote.filter(|o| *o != v) {
                        rep.violations.push(violation(
                            &name,
                            sid,
                            Some(k),
                            Some(t),
                            None,
                            "one-vote-per-term",
                            format!("votes for {v} in term {t} but already voted for {old}"),
                        ));
                    } else {
                        vote = Some(v);
                    }
                }
                RecordBody::Note { note } => {
                    if note == "left" {
                        rep.warnings.push(format!(
                            "{name}: record {k} shows that the server left the cluster"
                        ));
                    }
                }
                RecordBody::CommitIndex { commit_index: c } => {
                    let log_end = log.log_end();
                    if c < commit_index {
                        rep.violations.push(violation(
                            &name,
                            sid,
                            Some(k),
                            None,
                            Some(c),
                            "commit-monotonic",
                            format!("commit index regresses from {commit_index} to {c}"),
                        ));
                    } else if c >= log_end {
                        rep.violations.push(violation(
                            &name,
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
                    } else {
                        commit_index = c;
                        let slot = commits.entry(term).or_insert((0, name.clone()));
                        if c > slot.0 {
                            *slot = (c, name.clone());
                        }
                    }
                }
                RecordBody::Leader { term: t, leader: l } => {
                    if let Some(old) = leader.filter(|o| *o != l && t == term) {
                        rep.violations.push(violation(
                            &name,
                            sid,
                            Some(k),
                            Some(t),
                            None,
                            "election-safety",
                            format!(
                                "term {t} has two different leaders {old} and {l} in this file"
                            ),
                        ));
                    }
                    if t == term {
                        leader = Some(l);
                    }
                    match leaders.get(&t) {
                        Some((other, f)) if *other != l => {
                            rep.violations.push(violation(
                                &name,
                                sid,
                                Some(k),
                                Some(t),
                                None,
                                "election-safety",
                                format!(
                                    "term {t} has two different leaders: {other} (per {f}) and {l}"
                                ),
                            ));
                        }
                        Some(_) => {}
                        None => {
                            leaders.insert(t, (l, name.clone()));
                        }
                    }
                    if Some(l) == sid {
                        let le = leader_log_end.entry(t).or_insert(0);
                        *le = (*le).max(log.log_end());
                    }
                }
            }
        }
        logs.push(log);
    }

    if !any_term && rep.violations.is_empty() && !logs.is_empty() {
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
    let mut committed = 0u64;
    let mut all_terms: Vec<u64> = leaders.keys().chain(commits.keys()).copied().collect();
    all_terms.sort_unstable();
    all_terms.dedup();
    for t in all_terms {
        if let (Some((l, f)), Some(&le)) = (leaders.get(&t), leader_log_end.get(&t)) {
            if le > 0 && le - 1 < committed {
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

    // Log Matching.
    for a in 0..logs.len() {
        for b in 0..logs.len() {
            if a == b {
                continue;
            }
            let (x, y) = (&logs[a], &logs[b]);
            let lo = x.log_start.max(y.log_start);
            let hi = x.log_end().min(y.log_end());
            let mut matching = false;
            let mut i = hi;
            while i > lo {
                i -= 1;
                let (Some(ex), Some(ey)) = (x.entry(i), y.entry(i)) else {
                    continue;
                };
                if !matching && ex.term == ey.term {
                    matching = true;
                }
                if matching && !same_entry(ex, ey) {
                    rep.violations.push(Violation {
                        file: x.file.clone(),
                        server: Some(x.header.server_id),
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
        }
    }

    // Membership (first 4 hex digits, like check-cluster).
    for log in &logs {
        let me = log.header.server_id.short4();
        let in_servers = |s: &Servers| s.0.iter().any(|(id, _)| id.short4() == me);
        let found = log.header.prev_servers.as_ref().is_some_and(in_servers)
            || log
                .entries
                .iter()
                .any(|e| e.servers.as_ref().is_some_and(in_servers));
        if !found {
            rep.violations.push(Violation {
                file: log.file.clone(),
                server: Some(log.header.server_id),
                record: None,
                term: None,
                index: None,
                rule: "membership",
                message: format!(
                    "server {} is not in its snapshot's servers nor in any entry's servers",
                    log.header.server_id
                ),
            });
        }
    }
    rep
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
