//! The log lines that mean something for an incident, as typed events.
//!
//! [`recognize`] maps one parsed line ([`crate::log::LogLine`]) to at most one
//! [`EventKind`]. Server IDs are the 4-hex-digit short IDs ovsdb-server logs
//! (`aa26`), peers are the connection names it logs (`tcp:127.0.0.1:20642`).
//! Lines that are not recognized stay available as raw lines (see
//! [`crate::log::LogFile`]); nothing here is lossy about the log itself.

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// One recognized line of one server's log.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// 0-based line number in the (joined) log.
    pub line: u64,
    /// UTC epoch milliseconds of the line.
    pub time_ms: i64,
    pub kind: EventKind,
}

/// What a recognized line says.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    // ---- identity and process ----
    /// `raft|INFO|local server ID is aa26`
    LocalServerId { sid: String },
    /// `raft|INFO|tcp:127.0.0.1:50760: learned server ID 2f3f`
    LearnedServerId { peer: String, sid: String },
    /// `raft|INFO|tcp:127.0.0.1:50760: learned remote address tcp:127.0.0.1:20642`
    LearnedRemoteAddress { peer: String, address: String },
    /// `raft_rpc|INFO|learned cluster ID 196d`
    LearnedClusterId { cid: String },
    /// `ovsdb_server|INFO|ovsdb-server (Open vSwitch) 3.1.0`
    ServerStart { version: String },
    /// The process ends: `exiting`, a fatal signal, `terminating with signal`.
    ServerExit { reason: String },

    // ---- elections and leaders ----
    /// `raft|INFO|term 2: 1220 ms timeout expired, starting election`
    /// (`timeout_ms` is `None` for `term N: starting election`).
    ElectionStarted { term: u64, timeout_ms: Option<u64> },
    /// `raft|INFO|term 2: elected leader by 2+ of 3 servers`
    ElectionWon { term: u64, votes: u32, servers: u32 },
    /// `raft|INFO|server 2f3f is leader for term 2`
    LeaderIs { sid: String, term: u64 },
    /// `raft|INFO|aa26 truncating 1 entries from end of log`
    Truncating { sid: String, entries: u64 },
    /// `rejecting term 1 < current term 2 received in append_request message from server 2f3f`
    StaleTerm {
        term: u64,
        current: u64,
        message: String,
        from: String,
    },

    // ---- leadership transfer ----
    /// `raft|INFO|Transferring leadership to write a snapshot.` (and other
    /// transfers the leader logs; `reason` is the text after "to", if any).
    TransferStarted { reason: Option<String> },
    /// `raft|INFO|received leadership transfer from aa26 in term 1`
    TransferReceived { from: String, term: u64 },

    // ---- compaction / snapshots written locally ----
    /// `ovsdb_server|INFO|compacting OVN_Northbound database by user request`
    /// (`by_user` false for automatic compaction lines).
    Compacting { database: String, by_user: bool },
    /// A snapshot/compaction finished, with its duration when the line gives one.
    SnapshotWritten { duration_ms: Option<u64> },

    // ---- long polls ----
    /// `timeval|WARN|Unreasonably long 3027ms poll interval (16ms user, 2ms system)`
    LongPoll {
        wall_ms: u64,
        user_ms: u64,
        system_ms: u64,
    },

    /// `poll_loop|INFO|wakeup due to … (99% CPU usage)`: the CPU use that
    /// ovsdb-server reports next to a long poll.
    CpuUsage { percent: u64, detail: String },

    // ---- connections ----
    /// `reconnect|ERR|tcp:…: no response to inactivity probe after 2 seconds, disconnecting`
    ProbeTimeout { peer: String, after_s: u64 },
    /// `reconnect|INFO|tcp:…: connection closed by peer`, `connection dropped`,
    /// `connection attempt failed (Connection refused)`: `reason` is the text
    /// after the peer.
    ConnectionLost { peer: String, reason: String },
    /// `reconnect|INFO|tcp:…: connecting...`
    Connecting { peer: String },
    /// `reconnect|INFO|tcp:…: connected`
    Connected { peer: String },
    /// `reconnect|INFO|tcp:…: waiting 2 seconds before reconnect`
    ReconnectWait { peer: String, seconds: u64 },

    // ---- catch-up ----
    /// `raft|INFO|sending snapshot to server 2f3f, 1:1.` (term:index)
    SnapshotSending { to: String, term: u64, index: u64 },
    /// `raft|INFO|cluster 196d: installed snapshot on server 2f3f  up to 1:1`
    SnapshotInstalled { on: String, term: u64, index: u64 },
    /// `rejecting append_request because previous entry 1,25 not in local log (…)`
    AppendRejected {
        term: u64,
        index: u64,
        reason: String,
    },

    // ---- membership ----
    /// `starting to add server 2f3f (2f3f at tcp:…) to cluster 196d`
    AddingServer { sid: String, address: String },
    /// `adding 2f3f (2f3f at tcp:…) to cluster 196d succeeded (completed)` /
    /// `… failed (not leader)`
    AddServerResult {
        sid: String,
        ok: bool,
        detail: String,
    },
    /// `server 2f3f added to configuration`
    ServerAdded { sid: String },
    /// `server 2f3f removed from configuration`
    ServerRemoved { sid: String },
    /// `aa26: starting to leave cluster 196d`
    Leaving { sid: String },
    /// `aa26: finished leaving cluster 196d`
    Left { sid: String },
    /// `misrouted message (…)`
    Misrouted { detail: String },
    /// `Election timer changed from 1000 to 2000`
    ElectionTimerChanged { from_ms: u64, to_ms: u64 },

    // ---- memory ----
    /// `memory|INFO|8436 kB peak resident set size after 10.0 seconds`
    MemoryPeak { kb: u64, after_s: f64 },
    /// `memory|INFO|peak resident set size grew 51% in last 10.0 seconds, from 8436 kB to 12744 kB`
    MemoryGrew {
        percent: u64,
        seconds: f64,
        from_kb: u64,
        to_kb: u64,
    },
    /// `memory|INFO|atoms:1234 cells:567 monitors:2 … raft-log:66 …`
    MemoryCounts { counts: Vec<(String, u64)> },

    // ---- database ----
    /// `ovsdb_server|INFO|OVN_Northbound: removing database because storage disconnected permanently`
    DatabaseRemoved { database: String, reason: String },
}

impl EventKind {
    /// Stable lower-case name (JSON, test ids, filters), e.g. `"long-poll"`.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::LocalServerId { .. } => "local-server-id",
            EventKind::LearnedServerId { .. } => "learned-server-id",
            EventKind::LearnedRemoteAddress { .. } => "learned-remote-address",
            EventKind::LearnedClusterId { .. } => "learned-cluster-id",
            EventKind::ServerStart { .. } => "server-start",
            EventKind::ServerExit { .. } => "server-exit",
            EventKind::ElectionStarted { .. } => "election-started",
            EventKind::ElectionWon { .. } => "election-won",
            EventKind::LeaderIs { .. } => "leader-is",
            EventKind::Truncating { .. } => "truncating",
            EventKind::StaleTerm { .. } => "stale-term",
            EventKind::TransferStarted { .. } => "transfer-started",
            EventKind::TransferReceived { .. } => "transfer-received",
            EventKind::Compacting { .. } => "compacting",
            EventKind::SnapshotWritten { .. } => "snapshot-written",
            EventKind::LongPoll { .. } => "long-poll",
            EventKind::CpuUsage { .. } => "cpu-usage",
            EventKind::ProbeTimeout { .. } => "probe-timeout",
            EventKind::ConnectionLost { .. } => "connection-lost",
            EventKind::Connecting { .. } => "connecting",
            EventKind::Connected { .. } => "connected",
            EventKind::ReconnectWait { .. } => "reconnect-wait",
            EventKind::SnapshotSending { .. } => "snapshot-sending",
            EventKind::SnapshotInstalled { .. } => "snapshot-installed",
            EventKind::AppendRejected { .. } => "append-rejected",
            EventKind::AddingServer { .. } => "adding-server",
            EventKind::AddServerResult { .. } => "add-server-result",
            EventKind::ServerAdded { .. } => "server-added",
            EventKind::ServerRemoved { .. } => "server-removed",
            EventKind::Leaving { .. } => "leaving",
            EventKind::Left { .. } => "left",
            EventKind::Misrouted { .. } => "misrouted",
            EventKind::ElectionTimerChanged { .. } => "election-timer-changed",
            EventKind::MemoryPeak { .. } => "memory-peak",
            EventKind::MemoryGrew { .. } => "memory-grew",
            EventKind::MemoryCounts { .. } => "memory-counts",
            EventKind::DatabaseRemoved { .. } => "database-removed",
        }
    }
}

/// The event a line means, if any. Implemented by the log reader's author;
/// see the variant docs for the exact texts.
pub fn recognize(line: &crate::log::LogLine<'_>) -> Option<EventKind> {
    let _ = line;
    None
}
