//! Findings: what the evidence says happened, ordered by time.
//!
//! The engine reads each server's recognized log events ([`crate::events`]),
//! its last `cluster/status` and the Raft history of the database files (the
//! timeline's lanes), and emits [`Finding`]s. Every threshold is a field of
//! [`Knobs`]; the defaults are documented there.
//!
//! Finding kinds (`Finding::kind`):
//!
//! | kind | when | severity |
//! |---|---|---|
//! | `leader-change` | a term has a leader different from (or later than) the previous term's; `cause` from the evidence | warning (info for a snapshot transfer) |
//! | `election-storm` | at least `storm_changes` leader changes within `storm_window_ms` | error |
//! | `compaction-transfer` | a leader transferred leadership to write a snapshot | info |
//! | `long-poll` | `Unreasonably long N ms poll interval` with N ≥ `long_poll_ms`; `cause` is `process-stopped`, `compaction`, `snapshot-install`, `large-transaction` or `unknown` | warning |
//! | `probe-disconnect` | a peer dropped for not answering the inactivity probe | warning |
//! | `reconnect-loop` | an established connection to a peer lost at least `reconnect_drops` times within `reconnect_window_ms` | error |
//! | `peer-down` | a peer's connection lost and the attempts since refused (or timed out): it is down, from then to the line that shows it back | warning |
//! | `snapshot-install` | a member (not a joining server) needed a snapshot to catch up | warning |
//! | `leaderless` | no leader for at least `leaderless_ms` | warning |
//! | `membership` | a server added, removed or leaving | info |
//! | `membership-mismatch` | a server ID no file of its cluster knows, or a server that left but is still configured | warning |
//! | `memory-growth` | the server's own report of peak RSS growth ≥ `memory_growth_percent` | warning |
//! | `damaged-file` | a database file with a damaged record: `index` where it sits, time the date of the last transaction before it (it was written after), `cause` the reader's error code | error in the middle, warning for a damaged tail |
//! | `recovery` | no quorum is left: which file holds the highest committed index (advice) | error |

use std::collections::BTreeMap;

use crate::events::{Event, EventKind};
use crate::status::ClusterStatus;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// Thresholds of the findings, with their defaults.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct Knobs {
    /// A poll interval at least this long is a `long-poll` (default 1000 ms,
    /// ovsdb-server warns from 1000 ms on).
    pub long_poll_ms: u64,
    /// A long poll is `process-stopped` when its wall time is at least this
    /// many times its CPU time (default 4).
    pub stopped_ratio: f64,
    /// `election-storm`: this many leader changes (default 5, as hotsos)...
    pub storm_changes: usize,
    /// ...within this window (default one hour).
    pub storm_window_ms: i64,
    /// `reconnect-loop`: this many drops of one peer (default 3)...
    pub reconnect_drops: usize,
    /// ...within this window (default 60 s).
    pub reconnect_window_ms: i64,
    /// Report spans without a leader from this long on (default 1000 ms).
    pub leaderless_ms: u64,
    /// `memory-growth` from this growth on (default 50 %, the step at which
    /// ovsdb-server itself reports).
    pub memory_growth_percent: u64,
    /// How far around an event the engine looks for its cause (default 5 s).
    pub cause_window_ms: i64,
    /// An entry at least this large near a long poll makes it a
    /// `large-transaction` (default 1 MiB).
    pub large_entry_bytes: u64,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            long_poll_ms: 1000,
            stopped_ratio: 4.0,
            storm_changes: 5,
            storm_window_ms: 3_600_000,
            reconnect_drops: 3,
            reconnect_window_ms: 60_000,
            leaderless_ms: 1000,
            memory_growth_percent: 50,
            cause_window_ms: 5000,
            large_entry_bytes: 1 << 20,
        }
    }
}

/// Why [`Knobs::set`] refused a knob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KnobError {
    /// No knob has this name (a front end may suggest the nearest of
    /// [`Knobs::NAMES`]).
    Unknown(String),
    /// The knob's value does not read as what it takes.
    Value {
        knob: String,
        value: String,
        expected: &'static str,
    },
}

impl std::fmt::Display for KnobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KnobError::Unknown(name) => write!(f, "unknown knob '{name}'"),
            KnobError::Value {
                knob,
                value,
                expected,
            } => write!(f, "{knob}: '{value}' is not {expected}"),
        }
    }
}

impl Knobs {
    /// Sets a knob by name (`long_poll_ms=2000`), for the CLI's `--set`.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), KnobError> {
        let bad = |expected| KnobError::Value {
            knob: name.to_string(),
            value: value.to_string(),
            expected,
        };
        let int = || value.parse::<i64>().map_err(|_| bad("a whole number"));
        match name {
            "long_poll_ms" => self.long_poll_ms = int()?.max(0) as u64,
            "stopped_ratio" => self.stopped_ratio = value.parse().map_err(|_| bad("a number"))?,
            "storm_changes" => self.storm_changes = int()?.max(1) as usize,
            "storm_window_ms" => self.storm_window_ms = int()?,
            "reconnect_drops" => self.reconnect_drops = int()?.max(1) as usize,
            "reconnect_window_ms" => self.reconnect_window_ms = int()?,
            "leaderless_ms" => self.leaderless_ms = int()?.max(0) as u64,
            "memory_growth_percent" => self.memory_growth_percent = int()?.max(0) as u64,
            "cause_window_ms" => self.cause_window_ms = int()?,
            "large_entry_bytes" => self.large_entry_bytes = int()?.max(0) as u64,
            _ => return Err(KnobError::Unknown(name.to_string())),
        }
        Ok(())
    }

    /// Names of the knobs, for help texts.
    pub const NAMES: [&'static str; 10] = [
        "long_poll_ms",
        "stopped_ratio",
        "storm_changes",
        "storm_window_ms",
        "reconnect_drops",
        "reconnect_window_ms",
        "leaderless_ms",
        "memory_growth_percent",
        "cause_window_ms",
        "large_entry_bytes",
    ];
}

#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A line of a server's log that a finding rests on.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineRef {
    /// Index into the servers given to [`find`].
    pub server: usize,
    /// Line number in that server's joined log.
    pub line: u64,
}

/// One finding.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// `leader-change`, `long-poll`, … (see the module docs).
    pub kind: String,
    pub severity: Severity,
    /// Index into the servers given to [`find`].
    pub server: Option<usize>,
    /// UTC epoch milliseconds: the start of what was found.
    pub time_ms: Option<i64>,
    pub term: Option<u64>,
    pub cause: Option<String>,
    pub duration_ms: Option<u64>,
    /// One sentence for people.
    pub summary: String,
    /// Short IDs of the servers a leader change went from and to.
    pub from: Option<String>,
    pub to: Option<String>,
    /// A Raft log index the timeline can move to.
    pub index: Option<u64>,
    pub evidence: Vec<LineRef>,
    /// The cluster it is about: an index into
    /// `evidence::diagnose::Diagnosis::clusters` (set by the diagnosis,
    /// which runs the rules on each cluster's servers apart).
    pub cluster: Option<usize>,
}

impl Finding {
    fn new(kind: &str, severity: Severity, summary: String) -> Finding {
        Finding {
            kind: kind.to_string(),
            severity,
            server: None,
            time_ms: None,
            term: None,
            cause: None,
            duration_ms: None,
            summary,
            from: None,
            to: None,
            index: None,
            evidence: Vec::new(),
            cluster: None,
        }
    }

    /// A finding about one logged event of server `i`: the event's time,
    /// the term the server's log was in then, the newest entry of its
    /// database file by then, and the event's line as evidence.
    fn at_event(
        kind: &str,
        severity: Severity,
        summary: String,
        (i, s): (usize, &ServerInput<'_>),
        lk: &Lookup,
        e: &Event,
    ) -> Finding {
        let mut f = Finding::new(kind, severity, summary);
        f.server = Some(i);
        f.time_ms = Some(e.time_ms);
        f.term = lk.term_at(s, e.time_ms);
        f.index = s.lane.and_then(|l| index_at_time(l, e.time_ms));
        f.evidence = vec![LineRef {
            server: i,
            line: e.line,
        }];
        f
    }
}

/// What the engine knows of one server.
#[derive(Clone, Debug, Default)]
pub struct ServerInput<'a> {
    /// 4-hex short ID (may be empty when unknown).
    pub short: String,
    /// Display name (file stem or short ID).
    pub name: String,
    /// Raft address (`tcp:127.0.0.1:6643`), if known.
    pub address: Option<String>,
    /// Recognized events of its joined log, in line order.
    pub events: &'a [Event],
    /// Its last `cluster/status`.
    pub status: Option<&'a ClusterStatus>,
    /// Its database file's lane.
    pub lane: Option<&'a timeline::Lane>,
}

/// A leader as the evidence shows it.
#[derive(Clone, Debug)]
struct Leadership {
    term: u64,
    leader: String,
    /// Earliest time any server logged it (or a file's first dated entry).
    time_ms: Option<i64>,
    evidence: Vec<LineRef>,
}

fn short_of(s: &str) -> String {
    s.chars().take(4).collect()
}

/// Runs every rule. `files_servers` are the short IDs of the servers the
/// database files know (header and configurations); `cluster_ids` the
/// cluster IDs of the files.
pub fn find(servers: &[ServerInput<'_>], knobs: &Knobs) -> Vec<Finding> {
    let mut out = Vec::new();
    let lk: Vec<Lookup> = servers.iter().map(|s| Lookup::new(s.events)).collect();
    let leaders = leaderships(servers);
    leader_changes(servers, &leaders, knobs, &mut out);
    storms(&mut out, knobs);
    compaction_transfers(servers, &lk, &mut out);
    long_polls(servers, &lk, knobs, &mut out);
    connections(servers, &lk, knobs, &mut out);
    snapshot_installs(servers, &mut out);
    leaderless(servers, &leaders, knobs, &mut out);
    leaderless_at_end(servers, &leaders, knobs, &mut out);
    membership(servers, &lk, &mut out);
    memory(servers, &lk, knobs, &mut out);
    recovery(servers, &mut out);
    // The cluster's times (when a leader was known, how long none was)
    // are when the servers whose logs we have learned of them: say so when
    // other members' logs are missing.
    if let Some(view) = partial_view(servers) {
        for f in &mut out {
            if matches!(
                f.kind.as_str(),
                "leader-change" | "election-storm" | "leaderless"
            ) {
                f.summary.push_str(&view);
            }
        }
    }
    // A line cited twice (a leader's announcement that is also the
    // cause's evidence) is listed once, where it first came.
    for f in &mut out {
        let mut seen = Vec::with_capacity(f.evidence.len());
        f.evidence.retain(|r| {
            let new = !seen.contains(r);
            seen.push(*r);
            new
        });
    }
    sort(&mut out);
    out
}

/// `", as aa26 saw it (no log of 2f3f, 3581)"` when some members of the
/// cluster (as the files, statuses and logs name them) have no log among
/// the inputs; `None` when every member's log is there, or none is.
fn partial_view(servers: &[ServerInput<'_>]) -> Option<String> {
    let mut members: Vec<String> = Vec::new();
    let mut add = |sid: &str| {
        let sid = short_of(sid);
        if !sid.is_empty() && !members.contains(&sid) {
            members.push(sid);
        }
    };
    for s in servers {
        add(&s.short);
        if let Some(l) = s.lane {
            for cfg in l.entries.iter().filter_map(|e| e.servers.as_ref()) {
                cfg.iter().for_each(|(sid, _)| add(sid));
            }
        }
        if let Some(st) = s.status {
            st.servers.iter().for_each(|p| add(&p.sid));
        }
        for e in s.events {
            match &e.kind {
                EventKind::AddServerResult { sid, ok: true, .. }
                | EventKind::LeaderIs { sid, .. }
                | EventKind::LearnedServerId { sid, .. } => add(sid),
                _ => {}
            }
        }
    }
    let seen: Vec<&str> = servers
        .iter()
        .filter(|s| !s.events.is_empty() && !s.short.is_empty())
        .map(|s| s.short.as_str())
        .collect();
    let missing: Vec<&str> = members
        .iter()
        .map(String::as_str)
        .filter(|m| !seen.contains(m))
        .collect();
    if seen.is_empty() || missing.is_empty() {
        return None;
    }
    Some(format!(
        ", as {} saw it (no log of {})",
        seen.join(" and "),
        missing.join(", ")
    ))
}

/// The findings' order: by time (undated last), then server, then kind.
pub fn sort(out: &mut Vec<Finding>) {
    ovsdb::order::sort_by(out, |a, b| {
        (a.time_ms.unwrap_or(i64::MAX), a.server, &a.kind).cmp(&(
            b.time_ms.unwrap_or(i64::MAX),
            b.server,
            &b.kind,
        ))
    });
}

fn server_by_short(servers: &[ServerInput<'_>], sid: &str) -> Option<usize> {
    if sid.is_empty() {
        return None;
    }
    servers.iter().position(|s| {
        !s.short.is_empty() && (s.short.starts_with(sid) || sid.starts_with(&s.short))
    })
}

fn server_by_address(servers: &[ServerInput<'_>], addr: &str) -> Option<usize> {
    servers
        .iter()
        .position(|s| s.address.as_deref() == Some(addr))
}

/// Peer address → short ID, from every log's `learned remote address` /
/// `learned server ID` pairs and the statuses' server lists.
fn peer_names(servers: &[ServerInput<'_>]) -> BTreeMap<String, String> {
    let mut by_conn: BTreeMap<(usize, String), String> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (i, s) in servers.iter().enumerate() {
        if let (Some(a), false) = (&s.address, s.short.is_empty()) {
            out.insert(a.clone(), s.short.clone());
        }
        if let Some(st) = s.status {
            for p in &st.servers {
                out.insert(p.address.clone(), p.sid.clone());
            }
        }
        for e in s.events {
            match &e.kind {
                EventKind::LearnedServerId { peer, sid } => {
                    by_conn.insert((i, peer.to_string()), sid.to_string());
                }
                EventKind::LearnedRemoteAddress { peer, address } => {
                    if let Some(sid) = by_conn.get(&(i, peer.to_string())) {
                        out.insert(address.to_string(), sid.clone());
                    }
                }
                EventKind::AddingServer { sid, address } => {
                    out.insert(address.to_string(), sid.to_string());
                }
                _ => {}
            }
        }
    }
    out
}

fn note_leader(
    by_term: &mut BTreeMap<u64, Leadership>,
    term: u64,
    leader: String,
    t: Option<i64>,
    ev: Option<LineRef>,
) {
    let l = by_term.entry(term).or_insert_with(|| Leadership {
        term,
        leader,
        time_ms: t,
        evidence: Vec::new(),
    });
    if let Some(t) = t {
        if l.time_ms.is_none_or(|x| t < x) {
            l.time_ms = Some(t);
        }
    }
    if let Some(ev) = ev {
        if l.evidence.len() < 4 {
            l.evidence.push(ev);
        }
    }
}

fn leaderships(servers: &[ServerInput<'_>]) -> Vec<Leadership> {
    let mut by_term: BTreeMap<u64, Leadership> = BTreeMap::new();
    for (i, s) in servers.iter().enumerate() {
        for e in s.events {
            let ev = Some(LineRef {
                server: i,
                line: e.line,
            });
            match &e.kind {
                EventKind::LeaderIs { sid, term } => {
                    note_leader(&mut by_term, *term, sid.to_string(), Some(e.time_ms), ev)
                }
                EventKind::ElectionWon { term, .. } if !s.short.is_empty() => {
                    note_leader(&mut by_term, *term, s.short.clone(), Some(e.time_ms), ev)
                }
                _ => {}
            }
        }
    }
    // Terms only the files know: their leader records, timed by the first
    // dated entry of the term.
    for s in servers {
        let Some(lane) = s.lane else { continue };
        for band in &lane.bands {
            let Some(leader) = &band.leader else { continue };
            if by_term.contains_key(&band.term) {
                continue;
            }
            let t = lane
                .entries
                .iter()
                .filter(|e| e.term == band.term)
                .find_map(|e| e.date_ms);
            note_leader(&mut by_term, band.term, short_of(leader), t, None);
        }
    }
    by_term.into_values().collect()
}

fn within(t: i64, lo: i64, hi: i64) -> bool {
    lo <= t && t <= hi
}

/// The span `[start, end]` of a long poll that ends at the line's time.
fn poll_span(e: &Event, wall_ms: u64) -> (i64, i64) {
    (e.time_ms - wall_ms as i64, e.time_ms)
}

fn is_stopped(wall: u64, user: u64, system: u64, knobs: &Knobs) -> bool {
    let cpu = user + system;
    wall as f64 >= knobs.stopped_ratio * cpu as f64
        && wall.saturating_sub(cpu) >= knobs.long_poll_ms
}

fn leader_changes(
    servers: &[ServerInput<'_>],
    leaders: &[Leadership],
    knobs: &Knobs,
    out: &mut Vec<Finding>,
) {
    let peers = peer_names(servers);
    for pair in leaders.windows(2) {
        let (old, new) = (&pair[0], &pair[1]);
        let t = new.time_ms;
        let from_i = server_by_short(servers, &old.leader);
        let to_i = server_by_short(servers, &new.leader);
        let mut f = Finding::new("leader-change", Severity::Warning, String::new());
        f.server = to_i;
        f.time_ms = t;
        f.term = Some(new.term);
        f.from = Some(old.leader.clone());
        f.to = Some(new.leader.clone());
        f.evidence = new.evidence.clone();
        let (cause, ev) = match (t, from_i) {
            (Some(t), Some(fi)) => change_cause(servers, fi, to_i, &old.leader, t, &peers, knobs),
            _ => ("unknown".to_string(), Vec::new()),
        };
        f.evidence.extend(ev);
        if cause == "snapshot-transfer" {
            f.severity = Severity::Info;
        }
        let why = match cause.as_str() {
            "snapshot-transfer" => "the old leader transferred leadership to write a snapshot",
            "transfer" => "the old leader transferred leadership",
            "leader-stopped" => "the old leader's process was stopped (long poll with little CPU)",
            "leader-busy" => "the old leader was busy in one long poll",
            "leader-unreachable" => {
                "the old leader did not answer in time and only learned of the new term later"
            }
            "leader-restarted" => "the old leader's process ended and was started again",
            "leader-exited" => "the old leader's process ended",
            "leader-left" => "the old leader left the cluster",
            "election-timer-changed" => "the election timer had just been changed",
            _ => "no cause found in the evidence",
        };
        f.summary = format!(
            "leader {} -> {} in term {}: {why}",
            old.leader, new.leader, new.term
        );
        f.cause = Some(cause);
        f.index = servers
            .iter()
            .filter_map(|s| s.lane)
            .flat_map(|l| l.bands.iter())
            .find(|b| b.term == new.term)
            .map(|b| b.start);
        out.push(f);
    }
}

#[allow(clippy::too_many_arguments)]
fn change_cause(
    servers: &[ServerInput<'_>],
    from: usize,
    to: Option<usize>,
    old_leader: &str,
    t: i64,
    peers: &BTreeMap<String, String>,
    knobs: &Knobs,
) -> (String, Vec<LineRef>) {
    let w = knobs.cause_window_ms;
    let old = &servers[from];
    let r = |server: usize, e: &Event| LineRef {
        server,
        line: e.line,
    };
    // A transfer on the old leader just before the change.
    for e in old.events {
        if let EventKind::TransferStarted { reason } = &e.kind {
            if within(e.time_ms, t - w, t + 50) {
                let snap = reason.as_deref().is_some_and(|r| r.contains("snapshot"));
                let c = if snap {
                    "snapshot-transfer"
                } else {
                    "transfer"
                };
                return (c.into(), vec![r(from, e)]);
            }
        }
    }
    if let Some(ti) = to {
        for e in servers[ti].events {
            if let EventKind::TransferReceived { .. } = &e.kind {
                if within(e.time_ms, t - w, t + 50) {
                    return ("transfer".into(), vec![r(ti, e)]);
                }
            }
        }
    }
    // A long poll on the old leader that covers the change.
    for e in old.events {
        if let EventKind::LongPoll {
            wall_ms,
            user_ms,
            system_ms,
        } = &e.kind
        {
            let (s, end) = poll_span(e, *wall_ms);
            if *wall_ms >= knobs.long_poll_ms && within(t, s, end + 1000) {
                let c = if is_stopped(*wall_ms, *user_ms, *system_ms, knobs) {
                    "leader-stopped"
                } else {
                    "leader-busy"
                };
                return (c.into(), vec![r(from, e)]);
            }
        }
    }
    // The old leader left, exited or was restarted around the change.
    let before = old.events.iter().rev().find(|e| e.time_ms <= t);
    let after = old.events.iter().find(|e| e.time_ms > t);
    for e in old.events {
        if within(e.time_ms, t - w, t + 50) {
            match &e.kind {
                EventKind::Leaving { .. } | EventKind::Left { .. } => {
                    return ("leader-left".into(), vec![r(from, e)])
                }
                EventKind::ServerExit { .. } => return ("leader-exited".into(), vec![r(from, e)]),
                _ => {}
            }
        }
    }
    if let Some(a) = after {
        if matches!(a.kind, EventKind::ServerStart { .. })
            || old
                .events
                .iter()
                .filter(|e| e.time_ms > t)
                .take(4)
                .any(|e| matches!(e.kind, EventKind::ServerStart { .. }))
        {
            let mut ev = vec![r(from, a)];
            if let Some(b) = before {
                ev.insert(0, r(from, b));
            }
            return ("leader-restarted".into(), ev);
        }
        // Still acting as leader after the new one was elected: it did not
        // hear the others in time (stopped in poll, or cut off).
        let acted = old
            .events
            .iter()
            .filter(|e| e.time_ms >= t - 50)
            .take(3)
            .find(|e| match &e.kind {
                EventKind::LeaderIs { sid, .. } => sid != old_leader,
                EventKind::Truncating { .. } => true,
                _ => false,
            });
        // A healthy leader logs nothing when idle, so silence alone says
        // little; silence up to the change and then learning of the new
        // leader (or truncating its uncommitted tail) is how a leader that
        // was stopped in poll() or cut off looks from its own log.
        let silent_before = before.is_none_or(|b| t - b.time_ms >= 1000);
        if let Some(e) = acted {
            if silent_before && e.time_ms - t <= w {
                return ("leader-unreachable".into(), vec![r(from, e)]);
            }
        }
    }
    // Others lost the old leader just before.
    for (i, s) in servers.iter().enumerate() {
        if i == from {
            continue;
        }
        for e in s.events {
            if let EventKind::ProbeTimeout { peer, .. } | EventKind::ConnectionLost { peer, .. } =
                &e.kind
            {
                let names_old = peers.get(peer.as_str()).is_some_and(|p| p == old_leader)
                    || server_by_address(servers, peer) == Some(from);
                if names_old && within(e.time_ms, t - w, t) {
                    return ("leader-unreachable".into(), vec![r(i, e)]);
                }
            }
        }
    }
    for (i, s) in servers.iter().enumerate() {
        for e in s.events {
            if matches!(e.kind, EventKind::ElectionTimerChanged { .. })
                && within(e.time_ms, t - w, t)
            {
                return ("election-timer-changed".into(), vec![r(i, e)]);
            }
        }
    }
    ("unknown".into(), Vec::new())
}

/// Damaged database files, from what their one walk reported
/// (`ovsdb_log::scan::LogScan`'s skipped spans and torn tails, kept on each
/// lane): a damaged record in the middle (an `error`: what it held is lost,
/// and ovsdb-server stops reading the log there) and a damaged tail (a
/// `warning`: a write cut short, which ovsdb-server drops when it opens the
/// file). `lanes` are the files with the server each belongs to.
pub fn damaged_files<'a>(
    lanes: impl Iterator<Item = (&'a timeline::Lane, Option<usize>)>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (lane, server) in lanes {
        let mut found = |sev, record: u64, offset: u64, reason: &str, code: &str, index, what| {
            let mut f = Finding::new(
                "damaged-file",
                sev,
                format!(
                    "{}: record {record} at byte offset {offset}: {reason} ({what})",
                    lane.name
                ),
            );
            f.server = server;
            f.cause = Some(code.to_string());
            f.index = Some(index);
            // A file carries no time of its own, but its transactions are
            // dated: the damage was written after the last one before it.
            f.time_ms = lane
                .entries
                .iter()
                .filter(|e| u64::from(e.record) < record)
                .filter_map(|e| e.date_ms)
                .max();
            out.push(f);
        };
        for m in &lane.markers {
            if let timeline::MarkerKind::Skipped {
                offset,
                bytes,
                reason,
                code,
            } = &m.kind
            {
                let what = format!("{bytes} bytes skipped; what they held is lost");
                let r = u64::from(m.record);
                found(Severity::Error, r, *offset, reason, code, m.index, what);
            }
        }
        if let Some(t) = &lane.truncated {
            let what = "a damaged tail: reading stopped there".to_string();
            let (r, o) = (t.record, t.offset);
            found(
                Severity::Warning,
                r,
                o,
                &t.reason,
                &t.code,
                t.at_index,
                what,
            );
        }
    }
    out
}

fn compaction_transfers(servers: &[ServerInput<'_>], lk: &[Lookup], out: &mut Vec<Finding>) {
    for (i, s) in servers.iter().enumerate() {
        for e in s.events {
            let EventKind::TransferStarted { reason } = &e.kind else {
                continue;
            };
            if !reason.as_deref().is_some_and(|r| r.contains("snapshot")) {
                continue;
            }
            let mut f = Finding::at_event(
                "compaction-transfer",
                Severity::Info,
                format!(
                    "{} gave up leadership to write a snapshot (automatic compaction of a leader)",
                    label(s)
                ),
                (i, s),
                &lk[i],
                e,
            );
            f.cause = Some("snapshot".into());
            out.push(f);
        }
    }
}

fn storms(out: &mut Vec<Finding>, knobs: &Knobs) {
    let mut changes: Vec<&Finding> = out
        .iter()
        .filter(|f| f.kind == "leader-change" && f.time_ms.is_some())
        .collect();
    ovsdb::order::sort_by_key(&mut changes, |f| f.time_ms);
    let n = knobs.storm_changes.max(1);
    let mut storms = Vec::new();
    let mut i = 0;
    while i + n <= changes.len() {
        let t0 = changes[i].time_ms.unwrap_or(0);
        let mut j = i;
        while j + 1 < changes.len()
            && changes[j + 1].time_ms.unwrap_or(0) - t0 <= knobs.storm_window_ms
        {
            j += 1;
        }
        let count = j - i + 1;
        if count >= n {
            let t1 = changes[j].time_ms.unwrap_or(t0);
            let mut f = Finding::new(
                "election-storm",
                Severity::Error,
                format!(
                    "{count} leader changes in {:.1} s (terms {} to {})",
                    (t1 - t0) as f64 / 1000.0,
                    changes[i].term.unwrap_or(0),
                    changes[j].term.unwrap_or(0)
                ),
            );
            f.time_ms = Some(t0);
            f.duration_ms = Some((t1 - t0).max(0) as u64);
            f.term = changes[i].term;
            f.index = changes[i].index;
            f.evidence = changes[i..=j]
                .iter()
                .filter_map(|c| c.evidence.first().copied())
                .collect();
            storms.push(f);
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out.extend(storms);
}

fn long_polls(servers: &[ServerInput<'_>], lk: &[Lookup], knobs: &Knobs, out: &mut Vec<Finding>) {
    for (i, s) in servers.iter().enumerate() {
        for (k, e) in s.events.iter().enumerate() {
            let EventKind::LongPoll {
                wall_ms,
                user_ms,
                system_ms,
            } = &e.kind
            else {
                continue;
            };
            if *wall_ms < knobs.long_poll_ms {
                continue;
            }
            let (start, end) = poll_span(e, *wall_ms);
            let mut ev = vec![LineRef {
                server: i,
                line: e.line,
            }];
            // The CPU-usage line that follows, if any.
            if let Some(next) = s.events.get(k + 1) {
                if matches!(next.kind, EventKind::PollWakeup { .. })
                    && next.time_ms - e.time_ms < 100
                {
                    ev.push(LineRef {
                        server: i,
                        line: next.line,
                    });
                }
            }
            let cause = if is_stopped(*wall_ms, *user_ms, *system_ms, knobs) {
                "process-stopped".to_string()
            } else {
                busy_cause(s, &lk[i], i, start, end, knobs, &mut ev)
            };
            let mut f = Finding::new(
                "long-poll",
                Severity::Warning,
                format!(
                    "{} ms poll interval on {} ({} ms user, {} ms system): {}",
                    wall_ms,
                    label(s),
                    user_ms,
                    system_ms,
                    match cause.as_str() {
                        "process-stopped" => "the process was not running (stopped or starved)",
                        "compaction" => "it was writing a snapshot (compaction)",
                        "snapshot-install" => "it was installing or sending a snapshot",
                        "large-transaction" => "it was processing a large transaction",
                        _ => "cause not found in the evidence",
                    }
                ),
            );
            f.server = Some(i);
            f.time_ms = Some(start);
            f.duration_ms = Some(*wall_ms);
            f.cause = Some(cause);
            f.term = lk[i].term_at(s, end);
            f.index = s.lane.and_then(|l| index_at_time(l, end));
            f.evidence = ev;
            out.push(f);
        }
    }
}

fn busy_cause(
    s: &ServerInput<'_>,
    lk: &Lookup,
    i: usize,
    start: i64,
    end: i64,
    knobs: &Knobs,
    ev: &mut Vec<LineRef>,
) -> String {
    let w = knobs.cause_window_ms.min(2000);
    if let Some((k, c)) = lk.first_cause(s.events, start - w, end + w) {
        ev.push(LineRef {
            server: i,
            line: s.events[k].line,
        });
        return c.into();
    }
    if let Some(lane) = s.lane {
        let big = lane.entries.iter().any(|e| {
            e.sizes.stored >= knobs.large_entry_bytes
                && e.date_ms.is_some_and(|d| within(d, start - w, end + w))
        });
        if big {
            return "large-transaction".into();
        }
    }
    "unknown".into()
}

fn label(s: &ServerInput<'_>) -> String {
    if s.short.is_empty() {
        s.name.clone()
    } else {
        s.short.clone()
    }
}

/// What the rules look up by time in one server's events, built once (a
/// rule that asked the whole event list for each of its findings was
/// quadratic: minutes on a million-line log with a long poll every few
/// seconds). Answers exactly what a scan of the events in line order does.
struct Lookup {
    /// The events' times never step back, so line order is time order and
    /// a time is found by binary search (else the scans run as they are).
    sorted: bool,
    /// (position in the events, term) of each event that names a term.
    terms: Vec<(usize, u64)>,
    /// (position, cause) of each event that explains a busy poll.
    causes: Vec<(usize, &'static str)>,
}

impl Lookup {
    fn new(events: &[Event]) -> Lookup {
        let mut terms = Vec::new();
        let mut causes = Vec::new();
        for (k, e) in events.iter().enumerate() {
            if let Some(t) = term_of(e) {
                terms.push((k, t));
            }
            if let Some(c) = cause_of(e) {
                causes.push((k, c));
            }
        }
        Lookup {
            sorted: events.windows(2).all(|w| w[0].time_ms <= w[1].time_ms),
            terms,
            causes,
        }
    }

    /// The term a server's log says it was in at `t`: that of the last
    /// term-naming event before the first event later than `t`.
    fn term_at(&self, s: &ServerInput<'_>, t: i64) -> Option<u64> {
        if !self.sorted {
            return term_at(s, t);
        }
        let p = s.events.partition_point(|e| e.time_ms <= t);
        let q = self.terms.partition_point(|&(k, _)| k < p);
        q.checked_sub(1).map(|q| self.terms[q].1)
    }

    /// The first event (in line order) in `[lo, hi]` that explains a busy
    /// poll: its position and cause.
    fn first_cause(&self, events: &[Event], lo: i64, hi: i64) -> Option<(usize, &'static str)> {
        if self.sorted {
            let c = self
                .causes
                .partition_point(|&(k, _)| events[k].time_ms < lo);
            return self
                .causes
                .get(c)
                .copied()
                .filter(|&(k, _)| within(events[k].time_ms, lo, hi));
        }
        self.causes
            .iter()
            .copied()
            .find(|&(k, _)| within(events[k].time_ms, lo, hi))
    }
}

fn term_of(e: &Event) -> Option<u64> {
    match &e.kind {
        EventKind::LeaderIs { term, .. }
        | EventKind::ElectionStarted { term, .. }
        | EventKind::ElectionWon { term, .. } => Some(*term),
        _ => None,
    }
}

/// What a busy poll near this event was doing.
fn cause_of(e: &Event) -> Option<&'static str> {
    Some(match &e.kind {
        EventKind::Compacting { .. } | EventKind::SnapshotWritten { .. } => "compaction",
        EventKind::TransferStarted { reason }
            if reason.as_deref().is_some_and(|r| r.contains("snapshot")) =>
        {
            "compaction"
        }
        EventKind::SnapshotInstalled { .. } | EventKind::SnapshotSending { .. } => {
            "snapshot-install"
        }
        _ => return None,
    })
}

/// The term a server's log says it was in at `t` (a scan; see
/// [`Lookup::term_at`]).
fn term_at(s: &ServerInput<'_>, t: i64) -> Option<u64> {
    s.events
        .iter()
        .take_while(|e| e.time_ms <= t)
        .filter_map(term_of)
        .last()
}

/// The last entry of a lane dated at or before `t`.
fn index_at_time(lane: &timeline::Lane, t: i64) -> Option<u64> {
    lane.entries
        .iter()
        .filter(|e| e.date_ms.is_some_and(|d| d <= t))
        .map(|e| e.index)
        .max()
}

/// What one line says of a connection to a peer.
enum Link {
    /// An established connection lost (closed by the peer, dropped, or no
    /// reply to the probe).
    Lost,
    /// An attempt to connect that failed: the peer is not there.
    Failed,
    /// Connected to it, or it connected to us.
    Up,
}

/// A peer that stayed away, as one server saw it: its connection lost and
/// every attempt since refused (or timed out).
struct Down<'e> {
    observer: usize,
    peer: &'e str,
    start: &'e Event,
    failures: Vec<&'e Event>,
    /// The line that shows it back, if any.
    back: Option<&'e Event>,
}

/// One server's connection to one peer, as its lines go.
struct PeerLink<'e> {
    peer: &'e str,
    /// Losses of an established connection.
    drops: Vec<&'e Event>,
    /// The span it is down in, an index into the `Down`s.
    open: Option<usize>,
    /// The last loss, while no line shows the peer back.
    last_lost: Option<&'e Event>,
}

fn link_of(e: &Event) -> Option<(&str, Link)> {
    Some(match &e.kind {
        EventKind::ProbeTimeout { peer, .. } => (peer.as_str(), Link::Lost),
        // lib/reconnect.c reconnect_connect_failed: "connection attempt
        // failed (%s)" / "connection attempt timed out".
        EventKind::ConnectionLost { peer, reason } if reason.starts_with("connection attempt") => {
            (peer.as_str(), Link::Failed)
        }
        EventKind::ConnectionLost { peer, .. } => (peer.as_str(), Link::Lost),
        EventKind::Connected { peer } => (peer.as_str(), Link::Up),
        // ovsdb/raft.c raft_conn_receive: the peer connected to us.
        EventKind::LearnedRemoteAddress { address, .. } => (address.as_str(), Link::Up),
        _ => return None,
    })
}

/// Why attempts failed, from the first failure's line: `connection
/// refused` for `connection attempt failed (Connection refused)`.
fn failure_reason(e: &Event) -> String {
    match &e.kind {
        EventKind::ConnectionLost { reason, .. } => match reason.split_once('(') {
            Some((_, r)) => r.trim_end_matches(')').to_ascii_lowercase(),
            None => reason.trim_start_matches("connection attempt ").to_string(),
        },
        _ => String::new(),
    }
}

fn connections(servers: &[ServerInput<'_>], lk: &[Lookup], knobs: &Knobs, out: &mut Vec<Finding>) {
    let peers = peer_names(servers);
    let mut downs: Vec<Down<'_>> = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        // Per peer: the losses of an established connection (a loop when
        // they come often), and the spans in which the peer was down.
        // (A server has a few peers: a list, not another map type in the
        // page's wasm.)
        let mut links: Vec<PeerLink<'_>> = Vec::new();
        for e in s.events {
            if let EventKind::ProbeTimeout { peer, after_s } = &e.kind {
                let who = peers
                    .get(peer.as_str())
                    .cloned()
                    .unwrap_or_else(|| peer.to_string());
                let mut f = Finding::at_event(
                    "probe-disconnect",
                    Severity::Warning,
                    format!(
                        "{} dropped {who} ({peer}): no reply to the inactivity probe within {after_s} s",
                        label(s)
                    ),
                    (i, s),
                    &lk[i],
                    e,
                );
                f.duration_ms = Some(after_s * 1000);
                f.cause = Some(who);
                out.push(f);
            }
            let Some((peer, link)) = link_of(e) else {
                continue;
            };
            let st = match links.iter().position(|l| l.peer == peer) {
                Some(k) => &mut links[k],
                None => {
                    links.push(PeerLink {
                        peer,
                        drops: Vec::new(),
                        open: None,
                        last_lost: None,
                    });
                    links.last_mut().unwrap()
                }
            };
            match link {
                Link::Lost => {
                    if st.open.is_none() {
                        st.drops.push(e);
                        st.last_lost = Some(e);
                    }
                }
                Link::Failed => match st.open {
                    Some(d) => downs[d].failures.push(e),
                    None => {
                        // The loss just before belongs to the span: the
                        // peer went away, it did not flap.
                        let start = match st.last_lost.take() {
                            Some(l) => {
                                st.drops.retain(|x| !std::ptr::eq(*x, l));
                                l
                            }
                            None => e,
                        };
                        st.open = Some(downs.len());
                        downs.push(Down {
                            observer: i,
                            peer,
                            start,
                            failures: vec![e],
                            back: None,
                        });
                    }
                },
                Link::Up => {
                    st.last_lost = None;
                    if let Some(d) = st.open.take() {
                        downs[d].back = Some(e);
                    }
                }
            }
        }
        let n = knobs.reconnect_drops.max(1);
        for PeerLink {
            peer, drops: evs, ..
        } in links
        {
            let mut k = 0;
            while k + n <= evs.len() {
                let t0 = evs[k].time_ms;
                let mut j = k;
                while j + 1 < evs.len() && evs[j + 1].time_ms - t0 <= knobs.reconnect_window_ms {
                    j += 1;
                }
                if j + 1 - k >= n {
                    let who = peers.get(peer).cloned().unwrap_or_else(|| peer.to_string());
                    let t1 = evs[j].time_ms;
                    let mut f = Finding::new(
                        "reconnect-loop",
                        Severity::Error,
                        format!(
                            "{} lost {who} ({peer}) {} times in {:.1} s",
                            label(s),
                            j + 1 - k,
                            (t1 - t0) as f64 / 1000.0
                        ),
                    );
                    f.server = Some(i);
                    f.time_ms = Some(t0);
                    f.duration_ms = Some((t1 - t0) as u64);
                    f.cause = Some(who);
                    f.term = lk[i].term_at(s, t0);
                    f.evidence = evs[k..=j]
                        .iter()
                        .map(|e| LineRef {
                            server: i,
                            line: e.line,
                        })
                        .collect();
                    out.push(f);
                    k = j + 1;
                } else {
                    k += 1;
                }
            }
        }
    }
    peers_down(servers, &peers, downs, out);
}

/// One `peer-down` finding per peer and span, joining what every server
/// saw of it: from the first loss to the first line that shows it back.
fn peers_down(
    servers: &[ServerInput<'_>],
    peers: &BTreeMap<String, String>,
    downs: Vec<Down<'_>>,
    out: &mut Vec<Finding>,
) {
    let name = |peer: &str| peers.get(peer).cloned().unwrap_or_else(|| peer.to_string());
    // Spans of one peer that overlap, whoever saw them: (peer, start, end,
    // the spans). Few spans: joined by a scan, not a sort.
    let mut groups: Vec<(String, i64, Option<i64>, Vec<usize>)> = Vec::new();
    for (k, d) in downs.iter().enumerate() {
        let (who, t0, t1) = (name(d.peer), d.start.time_ms, d.back.map(|e| e.time_ms));
        let joins = |g: &&mut (String, i64, Option<i64>, Vec<usize>)| {
            g.0 == who && g.2.is_none_or(|e| t0 <= e) && t1.is_none_or(|e| g.1 <= e)
        };
        match groups.iter_mut().find(joins) {
            Some(g) => {
                g.1 = g.1.min(t0);
                g.2 = match (g.2, t1) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                g.3.push(k);
            }
            None => groups.push((who, t0, t1, vec![k])),
        }
    }
    for (who, t0, end, members) in groups {
        let group: Vec<&Down<'_>> = members.iter().map(|&k| &downs[k]).collect();
        let first = group
            .iter()
            .find(|d| d.start.time_ms == t0)
            .unwrap_or(&group[0]);
        let reason = failure_reason(first.failures[0]);
        let mut seen_by: Vec<&str> = Vec::new();
        for d in &group {
            let s = &servers[d.observer];
            let l = if s.short.is_empty() {
                &s.name
            } else {
                &s.short
            };
            if !seen_by.contains(&l.as_str()) {
                seen_by.push(l);
            }
        }
        // Where the observers' logs end, for a peer never seen back.
        let log_end = group
            .iter()
            .filter_map(|d| servers[d.observer].events.last())
            .map(|e| e.time_ms)
            .max()
            .unwrap_or(t0);
        let clock = |t: i64| format!("{}.{:03}", timeline::time::utc_clock(t), t.rem_euclid(1000));
        let until = match end {
            Some(t) => format!("to {}", clock(t)),
            None => "until the logs end".to_string(),
        };
        let d = end.unwrap_or(log_end) - t0;
        let mut f = Finding::new(
            "peer-down",
            Severity::Warning,
            format!(
                "{who} ({}) down ({reason}) from {} {until}, {:.1} s, as {} saw it",
                first.peer,
                clock(t0),
                d as f64 / 1000.0,
                seen_by.join(" and ")
            ),
        );
        f.server =
            server_by_short(servers, &who).or_else(|| server_by_address(servers, first.peer));
        f.time_ms = Some(t0);
        f.duration_ms = Some(d.max(0) as u64);
        f.cause = Some(reason);
        for d in &group {
            let at = |e: &Event| LineRef {
                server: d.observer,
                line: e.line,
            };
            f.evidence.push(at(d.start));
            f.evidence.push(at(d.failures[0]));
            f.evidence.extend(d.back.map(at));
        }
        f.evidence.dedup();
        out.push(f);
    }
}

fn snapshot_installs(servers: &[ServerInput<'_>], out: &mut Vec<Finding>) {
    let peers = peer_names(servers);
    for (i, s) in servers.iter().enumerate() {
        // Servers being added by this leader get a snapshot as part of the
        // join: not an incident.
        let mut joining: Vec<&str> = Vec::new();
        for e in s.events {
            match &e.kind {
                EventKind::AddingServer { sid, .. } => joining.push(sid),
                EventKind::AddServerResult { sid, .. } => joining.retain(|j| j != sid),
                EventKind::SnapshotInstalled { on, term, index } => {
                    if joining.iter().any(|j| j == on) {
                        continue;
                    }
                    let target = server_by_short(servers, on);
                    // How long the member was away: from when this leader
                    // last lost its connection to it.
                    let addr = peers
                        .iter()
                        .find(|(_, sid)| sid.as_str() == on.as_str())
                        .map(|(a, _)| a.clone());
                    let lost = s
                        .events
                        .iter()
                        .filter(|x| x.time_ms <= e.time_ms)
                        .filter(|x| match &x.kind {
                            EventKind::ConnectionLost { peer, .. }
                            | EventKind::ProbeTimeout { peer, .. } => {
                                addr.as_ref().is_some_and(|a| peer == a)
                            }
                            _ => false,
                        })
                        .map(|x| (x.time_ms, x.line))
                        .next();
                    // Where the member's log ended: the last entry its own
                    // file holds from before it was lost (unknown when the
                    // snapshot replaced that file, as installing one does).
                    let behind = target.and_then(|t| servers[t].lane).and_then(|l| {
                        let cut = lost.map_or(e.time_ms, |l| l.0);
                        l.entries
                            .iter()
                            .filter(|x| x.date_ms.is_some_and(|d| d < cut) && x.index < *index)
                            .map(|x| x.index)
                            .max()
                    });
                    let mut f = Finding::new(
                        "snapshot-install",
                        Severity::Warning,
                        format!(
                            "{on} needed a snapshot up to {term}:{index} to catch up{}{}",
                            behind.map_or(String::new(), |b| format!(
                                " ({} entries behind: its log ended at index {b})",
                                index.saturating_sub(b)
                            )),
                            lost.map_or(String::new(), |(t0, _)| format!(
                                ", {:.1} s after the leader lost it",
                                (e.time_ms - t0) as f64 / 1000.0
                            ))
                        ),
                    );
                    f.server = target;
                    f.time_ms = Some(e.time_ms);
                    f.term = Some(*term);
                    f.index = Some(*index);
                    f.cause = Some(match behind {
                        Some(b) => format!("lag {}", index.saturating_sub(b)),
                        None => "lag unknown".into(),
                    });
                    f.duration_ms = lost.map(|(t0, _)| (e.time_ms - t0).max(0) as u64);
                    if let Some((_, line)) = lost {
                        f.evidence.push(LineRef { server: i, line });
                    }
                    f.evidence.push(LineRef {
                        server: i,
                        line: e.line,
                    });
                    out.push(f);
                }
                _ => {}
            }
        }
    }
}

fn leaderless(
    servers: &[ServerInput<'_>],
    leaders: &[Leadership],
    knobs: &Knobs,
    out: &mut Vec<Finding>,
) {
    // Elections started (by anyone) in terms after a known leader's term,
    // up to the time the next leader is known.
    for pair in leaders.windows(2) {
        let (old, new) = (&pair[0], &pair[1]);
        let Some(t_new) = new.time_ms else { continue };
        let mut start: Option<(i64, LineRef)> = None;
        for (i, s) in servers.iter().enumerate() {
            for e in s.events {
                let begin = match &e.kind {
                    EventKind::ElectionStarted { term, .. }
                        if *term > old.term && *term <= new.term =>
                    {
                        Some(e.time_ms)
                    }
                    // The old leader stopped: the cluster lost it at the
                    // start of the long poll.
                    EventKind::LongPoll { wall_ms, .. } if s.short == old.leader => {
                        let (a, b) = poll_span(e, *wall_ms);
                        within(t_new, a, b + 1000).then_some(a)
                    }
                    _ => None,
                };
                if let Some(b) = begin {
                    if b <= t_new && start.is_none_or(|(x, _)| b < x) {
                        start = Some((
                            b,
                            LineRef {
                                server: i,
                                line: e.line,
                            },
                        ));
                    }
                }
            }
        }
        let Some((t0, ev)) = start else { continue };
        let d = (t_new - t0).max(0) as u64;
        if d < knobs.leaderless_ms {
            continue;
        }
        let mut f = Finding::new(
            "leaderless",
            Severity::Warning,
            format!(
                "no leader for {:.1} s before {} won term {}",
                d as f64 / 1000.0,
                new.leader,
                new.term
            ),
        );
        f.time_ms = Some(t0);
        f.duration_ms = Some(d);
        f.term = Some(new.term);
        f.evidence = vec![ev];
        f.evidence.extend(new.evidence.first().copied());
        out.push(f);
    }
}

/// After the last known leader: elections that never produced one, up to
/// the end of the evidence.
fn leaderless_at_end(
    servers: &[ServerInput<'_>],
    leaders: &[Leadership],
    knobs: &Knobs,
    out: &mut Vec<Finding>,
) {
    let last_term = leaders.last().map_or(0, |l| l.term);
    let mut start: Option<(i64, LineRef, u64)> = None;
    let mut end: Option<i64> = None;
    for (i, s) in servers.iter().enumerate() {
        if let Some(e) = s.events.last() {
            end = Some(end.map_or(e.time_ms, |x: i64| x.max(e.time_ms)));
        }
        for e in s.events {
            if let EventKind::ElectionStarted { term, .. } = &e.kind {
                if *term > last_term && start.is_none_or(|(x, _, _)| e.time_ms < x) {
                    start = Some((
                        e.time_ms,
                        LineRef {
                            server: i,
                            line: e.line,
                        },
                        *term,
                    ));
                }
            }
        }
    }
    let (Some((t0, ev, term)), Some(t1)) = (start, end) else {
        return;
    };
    let d = (t1 - t0).max(0) as u64;
    // A status taken after the logs end may say it is still unresolved.
    let confirmed = servers
        .iter()
        .filter_map(|s| s.status)
        .any(|st| st.term >= term && st.leader == "unknown" && st.role == "candidate");
    if d < knobs.leaderless_ms && !confirmed {
        return;
    }
    let mut f = Finding::new(
        "leaderless",
        Severity::Error,
        format!(
            "no leader since elections began for term {term}; still none {}",
            if confirmed {
                "in the last cluster/status".to_string()
            } else {
                format!("{:.1} s later, where the logs end", d as f64 / 1000.0)
            }
        ),
    );
    f.time_ms = Some(t0);
    f.duration_ms = Some(d);
    f.term = Some(term);
    f.cause = Some("unresolved".into());
    f.evidence = vec![ev];
    out.push(f);
}

fn membership(servers: &[ServerInput<'_>], lk: &[Lookup], out: &mut Vec<Finding>) {
    let mut left: Vec<(String, usize, u64)> = Vec::new();
    // Summaries of the membership findings so far (a set: a long log has
    // thousands of findings, and asking all of them per line was quadratic).
    let mut seen: std::collections::HashSet<String> = out
        .iter()
        .filter(|f| f.kind == "membership")
        .map(|f| f.summary.clone())
        .collect();
    for (i, s) in servers.iter().enumerate() {
        for e in s.events {
            let text = match &e.kind {
                EventKind::AddServerResult { sid, ok: true, .. } => {
                    format!("{sid} joined the cluster")
                }
                EventKind::ServerRemoved { sid } => format!("{sid} removed from the configuration"),
                EventKind::Left { sid } => {
                    left.push((sid.to_string(), i, e.line));
                    format!("{sid} left the cluster")
                }
                _ => continue,
            };
            // The same change is logged by several servers: keep the first.
            if !seen.insert(text.clone()) {
                continue;
            }
            out.push(Finding::at_event(
                "membership",
                Severity::Info,
                text,
                (i, s),
                &lk[i],
                e,
            ));
        }
    }
    // Server IDs the evidence names that no database file knows.
    let mut known: Vec<String> = Vec::new();
    for s in servers {
        if let Some(l) = s.lane {
            if let Some(id) = &l.summary.server_id {
                known.push(short_of(id));
            }
            for e in &l.entries {
                if let Some(cfg) = &e.servers {
                    known.extend(cfg.iter().map(|(sid, _)| short_of(sid)));
                }
            }
            for m in &l.markers {
                if let timeline::MarkerKind::Membership { servers } = &m.kind {
                    known.extend(servers.iter().map(|x| short_of(x)));
                }
            }
        }
    }
    if !known.is_empty() {
        for (i, s) in servers.iter().enumerate() {
            if !s.short.is_empty() && !known.contains(&s.short) {
                let mut f = Finding::new(
                    "membership-mismatch",
                    Severity::Warning,
                    format!(
                        "{} (server ID {}) appears in the logs or status, but no database file knows it",
                        s.name, s.short
                    ),
                );
                f.server = Some(i);
                f.cause = Some("unknown-server".into());
                f.time_ms = s.events.first().map(|e| e.time_ms);
                out.push(f);
            }
        }
    }
    for (sid, i, line) in left {
        for (j, s) in servers.iter().enumerate() {
            if j == i {
                continue;
            }
            if let Some(st) = s.status {
                if st.servers.iter().any(|p| p.sid == sid) {
                    let mut f = Finding::new(
                        "membership-mismatch",
                        Severity::Warning,
                        format!(
                            "{sid} left the cluster but is still in {}'s configuration",
                            label(s)
                        ),
                    );
                    f.server = Some(j);
                    f.cause = Some("left-but-configured".into());
                    f.evidence = vec![LineRef { server: i, line }];
                    out.push(f);
                }
            }
        }
    }
}

fn memory(servers: &[ServerInput<'_>], lk: &[Lookup], knobs: &Knobs, out: &mut Vec<Finding>) {
    for (i, s) in servers.iter().enumerate() {
        for e in s.events {
            let EventKind::MemoryGrew {
                percent,
                seconds,
                from_kb,
                to_kb,
            } = &e.kind
            else {
                continue;
            };
            if *percent < knobs.memory_growth_percent {
                continue;
            }
            let mut f = Finding::at_event(
                "memory-growth",
                Severity::Warning,
                format!(
                    "peak RSS of {} grew {percent}% in {seconds:.1} s, {from_kb} kB to {to_kb} kB",
                    label(s)
                ),
                (i, s),
                &lk[i],
                e,
            );
            // The growth started the logged span before the line.
            f.time_ms = Some(e.time_ms - (*seconds * 1000.0) as i64);
            f.duration_ms = Some((*seconds * 1000.0) as u64);
            out.push(f);
        }
    }
}

/// No quorum left: every status says there is no leader, or a majority of
/// the servers' logs end with the process exiting.
fn recovery(servers: &[ServerInput<'_>], out: &mut Vec<Finding>) {
    let members = servers
        .iter()
        .filter(|s| s.lane.is_some_and(|l| l.clustered))
        .count();
    if members == 0 {
        return;
    }
    let statuses: Vec<&ClusterStatus> = servers.iter().filter_map(|s| s.status).collect();
    let no_leader = !statuses.is_empty()
        && statuses
            .iter()
            .all(|st| st.leader == "unknown" || st.role == "candidate");
    let exited = servers
        .iter()
        .filter(|s| {
            s.events.last().is_some_and(|e| {
                matches!(
                    e.kind,
                    EventKind::ServerExit { .. } | EventKind::DatabaseRemoved { .. }
                )
            })
        })
        .count();
    if !no_leader && exited * 2 <= members {
        return;
    }
    let best = servers
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let l = s.lane?;
            // Highest commit, then longest log, then a server still running
            // (it has a status), then the first file.
            Some((
                l.summary.commit_index.unwrap_or(0),
                l.summary.last_index.unwrap_or(0),
                s.status.is_some(),
                std::cmp::Reverse(i),
            ))
        })
        .max();
    let Some((commit, last, _, std::cmp::Reverse(i))) = best else {
        return;
    };
    let mut f = Finding::new(
        "recovery",
        Severity::Error,
        format!(
            "no quorum is left; {} holds the highest committed index ({commit}, log up to {last}). \
             `ovsdb-tool cluster-to-standalone` of that file would keep the database as of its \
             last entry (advice only: back up every file first)",
            servers[i].name
        ),
    );
    f.server = Some(i);
    f.index = Some(commit);
    f.time_ms = servers
        .iter()
        .filter_map(|s| s.events.last())
        .map(|e| e.time_ms)
        .max();
    f.cause = Some(
        if no_leader {
            "no-leader"
        } else {
            "servers-exited"
        }
        .into(),
    );
    out.push(f);
}
