//! The log lines that mean something for an incident, as typed events.
//!
//! [`recognize`] maps one parsed line ([`crate::log::LogLine`]) to at most one
//! [`EventKind`]. Server IDs are the 4-hex-digit short IDs ovsdb-server logs
//! (`aa26`), peers are the connection names it logs (`tcp:127.0.0.1:20642`).
//! Lines that are not recognized stay available as raw lines (see
//! [`crate::log::LogFile`]); nothing here is lossy about the log itself.

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::Arc;

/// A text field of an event (a server ID, a peer, a reason): an immutable,
/// shared string that derefs to `str`, compares with `str` and `String`,
/// and serializes as a plain string.
///
/// A log names the same few peers, servers and reasons millions of times,
/// so [`crate::log::LogScanner`] interns them ([`Interner`]): an event then
/// costs no allocation of its own, a clone is a reference count, and the
/// field is one pointer wide, which keeps [`Event`] at 56 bytes.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Text(Arc<Box<str>>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(Arc::new(s.into()))
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(Arc::new(s.into_boxed_str()))
    }
}

impl From<&Text> for String {
    fn from(t: &Text) -> String {
        t.as_str().to_string()
    }
}

impl From<Text> for String {
    fn from(t: Text) -> String {
        t.as_str().to_string()
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! text_eq {
    ($($t:ty),*) => {$(
        impl PartialEq<$t> for Text {
            fn eq(&self, o: &$t) -> bool {
                self.as_str() == &o[..]
            }
        }
        impl PartialEq<Text> for $t {
            fn eq(&self, o: &Text) -> bool {
                &self[..] == o.as_str()
            }
        }
    )*};
}
text_eq!(str, &str, String, &String);

#[cfg(feature = "serde")]
impl Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(feature = "serde")]
impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        String::deserialize(d).map(Text::from)
    }
}

/// Most texts one [`Interner`] keeps; further new texts are allocated
/// alone (hostile input could name a new peer on every line).
pub const MAX_INTERNED: usize = 1 << 16;

/// Most bytes of text one [`Interner`] keeps.
pub const MAX_INTERNED_BYTES: usize = 4 << 20;

/// The texts of one scan's events, each kept once (bounded by
/// [`MAX_INTERNED`] and [`MAX_INTERNED_BYTES`]; past that, texts are still
/// right, only not shared).
#[derive(Debug, Default)]
pub struct Interner {
    set: HashSet<Text, FastHash>,
    bytes: usize,
    off: bool,
}

impl Interner {
    pub fn new() -> Interner {
        Interner::default()
    }

    /// An interner that keeps nothing (each text allocated alone).
    pub fn none() -> Interner {
        Interner {
            off: true,
            ..Interner::default()
        }
    }

    /// `s` as a [`Text`], shared with the last equal one when kept.
    pub fn text(&mut self, s: &str) -> Text {
        if let Some(t) = self.set.get(s) {
            return t.clone();
        }
        let t = Text::from(s);
        if !self.off && self.set.len() < MAX_INTERNED && self.bytes + s.len() <= MAX_INTERNED_BYTES
        {
            self.bytes += s.len();
            self.set.insert(t.clone());
        }
        t
    }
}

/// A fast hash for the short texts hashed on nearly every line (8 bytes
/// a step, rotate and multiply by 2^64/φ); SipHash and then byte-wise FNV showed in
/// profiles, and there is no DoS concern in a local log reader (the maps are
/// bounded).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FastHash;

#[derive(Debug)]
pub(crate) struct FastHasher(u64);

impl std::hash::BuildHasher for FastHash {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl FastHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        // Spread the high bits down: hashbrown takes its bucket from the
        // low bits and its tag from the top 7.
        self.0 ^ (self.0 >> 29)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut c = bytes.chunks_exact(8);
        for w in &mut c {
            self.add(u64::from_le_bytes(w.try_into().unwrap()));
        }
        let r = c.remainder();
        if !r.is_empty() {
            let mut b = [0u8; 8];
            b[..r.len()].copy_from_slice(r);
            self.add(u64::from_le_bytes(b) ^ ((r.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

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
    LocalServerId { sid: Text },
    /// `raft|INFO|tcp:127.0.0.1:50760: learned server ID 2f3f`
    LearnedServerId { peer: Text, sid: Text },
    /// `raft|INFO|tcp:127.0.0.1:50760: learned remote address tcp:127.0.0.1:20642`
    LearnedRemoteAddress { peer: Text, address: Text },
    /// `raft_rpc|INFO|learned cluster ID 196d`
    LearnedClusterId { cid: Text },
    /// `ovsdb_server|INFO|ovsdb-server (Open vSwitch) 3.1.0`
    ServerStart { version: Text },
    /// The process ends: `exiting`, a fatal signal, `terminating with signal`.
    ServerExit { reason: Text },

    // ---- elections and leaders ----
    /// `raft|INFO|term 2: 1220 ms timeout expired, starting election`
    /// (`timeout_ms` is `None` for `term N: starting election`).
    ElectionStarted { term: u64, timeout_ms: Option<u64> },
    /// `raft|INFO|term 2: elected leader by 2+ of 3 servers`
    ElectionWon { term: u64, votes: u32, servers: u32 },
    /// `raft|INFO|server 2f3f is leader for term 2`
    LeaderIs { sid: Text, term: u64 },
    /// `raft|INFO|aa26 truncating 1 entries from end of log`
    Truncating { sid: Text, entries: u64 },
    /// `rejecting term 1 < current term 2 received in append_request message from server 2f3f`
    StaleTerm {
        term: u64,
        current: u64,
        message: Text,
        from: Text,
    },

    /// `aa26 received "lost leadership" reply from ecc0 for unknown command`
    /// (ovsdb/raft.c `raft_handle_execute_command_reply`): the reply to a
    /// command this server forwarded to a leader came back after the
    /// command was forgotten, typically across a change of leader. `status`
    /// is the quoted status (`lost leadership`, `not leader`, …).
    StrayCommandReply { status: Text, from: Text },

    // ---- leadership transfer ----
    /// `raft|INFO|Transferring leadership to write a snapshot.` (and other
    /// transfers the leader logs; `reason` is the text after "to", if any).
    TransferStarted { reason: Option<Text> },
    /// `raft|INFO|received leadership transfer from aa26 in term 1`
    TransferReceived { from: Text, term: u64 },

    // ---- compaction / snapshots written locally ----
    /// `ovsdb_server|INFO|compacting OVN_Northbound database by user request`
    /// (`by_user` false for automatic compaction lines).
    Compacting { database: Text, by_user: bool },
    /// A snapshot/compaction finished, with its duration when the line gives one.
    SnapshotWritten { duration_ms: Option<u64> },

    // ---- long polls ----
    /// `timeval|WARN|Unreasonably long 3027ms poll interval (16ms user, 2ms system)`
    /// (lib/timeval.c `log_poll_interval`; when getrusage fails the line has
    /// no parenthesis and `user_ms`/`system_ms` are 0).
    LongPoll {
        wall_ms: u64,
        user_ms: u64,
        system_ms: u64,
    },

    /// `poll_loop|INFO|wakeup due to [POLLIN] on fd 17 (…) at lib/stream-fd.c:157 (101% CPU usage)`
    /// or `wakeup due to 0-ms timeout at … (53% CPU usage)`: logged after a
    /// wakeup when the process used more than 50% CPU recently (lib/poll-loop.c
    /// `log_wakeup`), typically right after a long poll. `cause` is the text
    /// between `wakeup due to ` and the CPU figure.
    PollWakeup { cpu_percent: u64, cause: Text },

    // ---- connections ----
    /// `reconnect|ERR|tcp:…: no response to inactivity probe after 2 seconds, disconnecting`
    ProbeTimeout { peer: Text, after_s: u64 },
    /// `reconnect|INFO|tcp:…: connection closed by peer`, `connection dropped`,
    /// `connection attempt failed (Connection refused)`: `reason` is the text
    /// after the peer.
    ConnectionLost { peer: Text, reason: Text },
    /// `reconnect|INFO|tcp:…: connecting...`
    Connecting { peer: Text },
    /// `reconnect|INFO|tcp:…: connected`
    Connected { peer: Text },
    /// `reconnect|INFO|tcp:…: waiting 2 seconds before reconnect`
    ReconnectWait { peer: Text, seconds: u64 },

    // ---- catch-up ----
    /// `raft|INFO|sending snapshot to server 2f3f, 1:1.` (term:index)
    SnapshotSending { to: Text, term: u64, index: u64 },
    /// `raft|INFO|cluster 196d: installed snapshot on server 2f3f  up to 1:1`
    SnapshotInstalled { on: Text, term: u64, index: u64 },
    /// `rejecting append_request because previous entry 1,25 not in local log (…)`
    AppendRejected { term: u64, index: u64, reason: Text },

    // ---- membership ----
    /// `starting to add server 2f3f (2f3f at tcp:…) to cluster 196d`
    AddingServer { sid: Text, address: Text },
    /// `adding 2f3f (2f3f at tcp:…) to cluster 196d succeeded (completed)` /
    /// `… failed (not leader)`
    AddServerResult { sid: Text, ok: bool, detail: Text },
    /// `request by 2f3f to remove itself from cluster 196d succeeded (completed)`,
    /// `request by aa26 to remove 3581 from cluster 196d failed (not leader)`
    /// (ovsdb/raft.c `raft_send_remove_server_reply`; `target` is the
    /// requester for "itself").
    RemoveServerResult {
        requester: Text,
        target: Text,
        ok: bool,
        detail: Text,
    },
    /// `server 2f3f added to configuration`
    ServerAdded { sid: Text },
    /// `server 2f3f removed from configuration`
    ServerRemoved { sid: Text },
    /// `aa26: starting to leave cluster 196d`
    Leaving { sid: Text },
    /// `aa26: finished leaving cluster 196d`
    Left { sid: Text },
    /// `misrouted message (…)`
    Misrouted { detail: Text },
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
    MemoryCounts { counts: Vec<(Text, u64)> },

    // ---- database ----
    /// `ovsdb_server|INFO|OVN_Northbound: removing database because storage disconnected permanently`
    DatabaseRemoved { database: Text, reason: Text },
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
            EventKind::StrayCommandReply { .. } => "stray-command-reply",
            EventKind::TransferStarted { .. } => "transfer-started",
            EventKind::TransferReceived { .. } => "transfer-received",
            EventKind::Compacting { .. } => "compacting",
            EventKind::SnapshotWritten { .. } => "snapshot-written",
            EventKind::LongPoll { .. } => "long-poll",
            EventKind::PollWakeup { .. } => "poll-wakeup",
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
            EventKind::RemoveServerResult { .. } => "remove-server-result",
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

/// The event a line means, if any.
///
/// Matched on the module and the exact wording of ovsdb-server 3.1 (and
/// newer, where it differs); each arm names the OVS function that writes the
/// line. A line that looks like one of these but does not fit (a number that
/// does not parse, a missing part) is not recognized: no guessing.
///
/// Each call allocates the event's texts afresh; a scan of many lines uses
/// [`recognize_in`] with one [`Interner`].
pub fn recognize(line: &crate::log::LogLine<'_>) -> Option<EventKind> {
    recognize_in(line, &mut Interner::none())
}

/// [`recognize`], with the event's texts taken from `ix`: a line that names
/// a peer, server or reason seen before shares its text instead of
/// allocating one.
pub fn recognize_in(line: &crate::log::LogLine<'_>, ix: &mut Interner) -> Option<EventKind> {
    let t = line.text;
    if line.level == crate::log::Level::Emer {
        // lib/vlog.c vlog_abort_valist: EMER is only written by ovs_abort()
        // and failed assertions, right before abort().
        return Some(EventKind::ServerExit { reason: ix.text(t) });
    }
    match line.module {
        "raft" => raft(t, ix),
        "raft_rpc" => {
            // ovsdb/raft-rpc.c raft_rpc_from_jsonrpc
            let cid = t.strip_prefix("learned cluster ID ")?;
            Some(EventKind::LearnedClusterId {
                cid: ix.text(word(cid)?),
            })
        }
        "reconnect" => reconnect(t, ix),
        "timeval" => long_poll(t),
        "poll_loop" => poll_wakeup(t, ix),
        "memory" => memory(t, ix),
        "ovsdb_server" => ovsdb_server(t, ix),
        "ovsdb" => ovsdb(t, ix),
        // lib/fatal-signal.c fatal_signal_run
        "fatal_signal" if t.starts_with("terminating with signal ") => {
            Some(EventKind::ServerExit { reason: ix.text(t) })
        }
        // lib/daemon-unix.c monitor_daemon: "pid N died, <status>, exiting"
        // (monitor exits too) or "…, restarting" (monitor restarts it).
        "daemon_unix"
            if t.starts_with("pid ")
                && find(t, " died, ").is_some()
                && (t.ends_with(", exiting") || t.ends_with(", restarting")) =>
        {
            Some(EventKind::ServerExit { reason: ix.text(t) })
        }
        _ => None,
    }
}

/// The cluster a membership or snapshot line names: `… to cluster 196d …`,
/// `cluster 196d: installed snapshot …`, `… leave cluster 196d`,
/// `… from cluster 196d …` (ovsdb/raft.c writes the short cluster ID in
/// each). `text` is the line's message, `kind` what it was recognized as.
pub fn cluster_named<'a>(kind: &EventKind, text: &'a str) -> Option<&'a str> {
    use EventKind::*;
    if !matches!(
        kind,
        AddingServer { .. }
            | AddServerResult { .. }
            | RemoveServerResult { .. }
            | SnapshotInstalled { .. }
            | Leaving { .. }
            | Left { .. }
    ) {
        return None;
    }
    let (_, r) = cut(text, "cluster ")?;
    let id = r.split([' ', ':']).next()?;
    (!id.is_empty() && id.bytes().all(|c| c.is_ascii_hexdigit())).then_some(id)
}

/// Position of `pat` in `s`. A plain scan for the first byte, then a
/// compare: the texts are short, and std's `str::find(&str)` sets up a
/// two-way searcher on every call (it showed in profiles).
fn find(s: &str, pat: &str) -> Option<usize> {
    let (h, n) = (s.as_bytes(), pat.as_bytes());
    let (first, lastb) = (*n.first()?, n[n.len() - 1]);
    let last = h.len().checked_sub(n.len())?;
    let mut i = 0;
    while i <= last {
        if h[i] == first && h[i + n.len() - 1] == lastb && &h[i..i + n.len()] == n {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// `s.split_once(pat)` with [`find`].
fn cut<'a>(s: &'a str, pat: &str) -> Option<(&'a str, &'a str)> {
    let i = find(s, pat)?;
    Some((&s[..i], &s[i + pat.len()..]))
}

/// `s.rsplit_once(pat)`.
fn rcut<'a>(s: &'a str, pat: &str) -> Option<(&'a str, &'a str)> {
    let (h, n) = (s.as_bytes(), pat.as_bytes());
    let mut i = h.len().checked_sub(n.len())?;
    loop {
        if &h[i..i + n.len()] == n {
            return Some((&s[..i], &s[i + n.len()..]));
        }
        i = i.checked_sub(1)?;
    }
}

/// All ASCII digits, as a number.
fn num(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Leading digits as a number, and the rest.
fn lead_num(s: &str) -> Option<(u64, &str)> {
    let n = s.bytes().take_while(|c| c.is_ascii_digit()).count();
    Some((num(&s[..n])?, &s[n..]))
}

/// A non-empty token without spaces (server nicknames, cluster IDs).
fn word(s: &str) -> Option<&str> {
    (!s.is_empty() && !s.contains(' ')).then_some(s)
}

/// A `%.1f` / `%.3g` number of seconds.
fn secs(s: &str) -> Option<f64> {
    if s.is_empty()
        || !s
            .bytes()
            .all(|c| c.is_ascii_digit() || b".e+-".contains(&c))
    {
        return None;
    }
    s.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
}

/// `T:I` or `T,I`.
fn pair(s: &str, sep: char) -> Option<(u64, u64)> {
    let (a, b) = s.split_once(sep)?;
    Some((num(a)?, num(b)?))
}

/// `NICK (SID at ADDRESS)` → (NICK, ADDRESS), and the rest after `)`.
fn server_at(s: &str) -> Option<(&str, &str, &str)> {
    let (nick, rest) = cut(s, " (")?;
    let (_sid, rest) = cut(rest, " at ")?;
    let (addr, rest) = rest.split_once(')')?;
    Some((word(nick)?, word(addr)?, rest))
}

/// `succeeded (detail)` / `failed (detail)` / without detail.
fn outcome(s: &str) -> Option<(bool, &str)> {
    let (ok, rest) = if let Some(r) = s.strip_prefix("succeeded") {
        (true, r)
    } else {
        (false, s.strip_prefix("failed")?)
    };
    let detail = match rest {
        "" => "",
        r => r.strip_prefix(" (")?.strip_suffix(')')?,
    };
    Some((ok, detail))
}

fn raft(t: &str, ix: &mut Interner) -> Option<EventKind> {
    use EventKind::*;
    // ovsdb/raft.c raft_open__
    if let Some(s) = t.strip_prefix("local server ID is ") {
        return Some(LocalServerId {
            sid: ix.text(word(s)?),
        });
    }
    // ovsdb/raft.c raft_start_election: 3.1 "term N: M ms timeout expired,
    // starting election" / "term N: starting election"; newer versions add
    // " (pre-vote)" or " (vote)".
    if let Some(s) = t.strip_prefix("term ") {
        let (term, rest) = lead_num(s)?;
        let rest = rest.strip_prefix(": ")?;
        if let Some(r) = rest.strip_prefix("elected leader by ") {
            // ovsdb/raft.c raft_become_leader
            let (votes, r) = lead_num(r)?;
            let r = r.strip_prefix("+ of ")?;
            let (servers, r) = lead_num(r)?;
            if r != " servers" {
                return None;
            }
            return Some(ElectionWon {
                term,
                votes: u32::try_from(votes).ok()?,
                servers: u32::try_from(servers).ok()?,
            });
        }
        let (timeout_ms, r) = match lead_num(rest) {
            Some((ms, r)) => (Some(ms), r.strip_prefix(" ms timeout expired, ")?),
            None => (None, rest),
        };
        let r = r.strip_prefix("starting election")?;
        if !(r.is_empty() || r == " (vote)" || r == " (pre-vote)") {
            return None;
        }
        return Some(ElectionStarted { term, timeout_ms });
    }
    // ovsdb/raft.c raft_update_leader
    if let Some(s) = t.strip_prefix("server ") {
        let (sid, rest) = s.split_once(' ')?;
        if let Some(term) = rest.strip_prefix("is leader for term ") {
            return Some(LeaderIs {
                sid: ix.text(word(sid)?),
                term: num(term)?,
            });
        }
        // ovsdb/raft.c raft_set_servers
        return match rest {
            "added to configuration" => Some(ServerAdded {
                sid: ix.text(word(sid)?),
            }),
            "removed from configuration" => Some(ServerRemoved {
                sid: ix.text(word(sid)?),
            }),
            _ => None,
        };
    }
    // ovsdb/raft.c raft_receive_term__
    if let Some(s) = t.strip_prefix("rejecting term ") {
        let (term, r) = lead_num(s)?;
        let r = r.strip_prefix(" < current term ")?;
        let (current, r) = lead_num(r)?;
        let r = r.strip_prefix(" received in ")?;
        let (message, from) = cut(r, " message from server ")?;
        return Some(StaleTerm {
            term,
            current,
            message: ix.text(word(message)?),
            from: ix.text(word(from)?),
        });
    }
    // ovsdb/raft.c raft_handle_append_request
    if let Some(s) = t.strip_prefix("rejecting append_request because previous entry ") {
        let (ti, r) = cut(s, " not in local log (")?;
        let (term, index) = pair(ti, ',')?;
        return Some(AppendRejected {
            term,
            index,
            reason: ix.text(r.strip_suffix(')')?),
        });
    }
    // ovsdb/raft.c raft_store_snapshot (3.1 and newer): the only transfer
    // that is logged is "Transferring leadership to write a snapshot."; the
    // other callers of raft_transfer_leadership (leaving, shutting down) only
    // write a note into the database file.
    if let Some(s) = t.strip_prefix("Transferring leadership") {
        let reason = s
            .strip_prefix(" to ")
            .map(|r| ix.text(r.strip_suffix('.').unwrap_or(r)));
        return Some(TransferStarted { reason });
    }
    // ovsdb/raft.c raft_handle_become_leader
    if let Some(s) = t.strip_prefix("received leadership transfer from ") {
        let (from, term) = cut(s, " in term ")?;
        return Some(TransferReceived {
            from: ix.text(word(from)?),
            term: num(term)?,
        });
    }
    // ovsdb/raft.c raft_send_install_snapshot_request
    if let Some(s) = t.strip_prefix("sending snapshot to server ") {
        let (to, ti) = cut(s, ", ")?;
        let (term, index) = pair(ti.strip_suffix('.')?, ':')?;
        return Some(SnapshotSending {
            to: ix.text(word(to)?),
            term,
            index,
        });
    }
    // ovsdb/raft.c raft_handle_install_snapshot_reply ("… server %s " " up
    // to": two spaces)
    if let Some(s) = t.strip_prefix("cluster ") {
        let (_cid, r) = cut(s, ": installed snapshot on server ")?;
        let (on, ti) = cut(r, " up to ")?;
        let (term, index) = pair(ti, ':')?;
        return Some(SnapshotInstalled {
            on: ix.text(word(on.trim_end())?),
            term,
            index,
        });
    }
    // ovsdb/raft.c raft_handle_add_server_request
    if let Some(s) = t.strip_prefix("starting to add server ") {
        let (sid, address, rest) = server_at(s)?;
        rest.strip_prefix(" to cluster ")?;
        return Some(AddingServer {
            sid: ix.text(sid),
            address: ix.text(address),
        });
    }
    // ovsdb/raft.c raft_send_add_server_reply
    if let Some(s) = t.strip_prefix("adding ") {
        let (sid, _address, rest) = server_at(s)?;
        let rest = rest.strip_prefix(" to cluster ")?;
        let (_cid, res) = rest.split_once(' ')?;
        let (ok, detail) = outcome(res)?;
        return Some(AddServerResult {
            sid: ix.text(sid),
            ok,
            detail: ix.text(detail),
        });
    }
    // ovsdb/raft.c raft_send_remove_server_reply
    if let Some(s) = t.strip_prefix("request by ") {
        let (requester, r) = cut(s, " to remove ")?;
        let (target, r) = cut(r, " from cluster ")?;
        let target = target.strip_suffix(" (ourselves)").unwrap_or(target);
        let target = if target == "itself" {
            requester
        } else {
            target
        };
        let (_cid, res) = r.split_once(' ')?;
        let (ok, detail) = outcome(res)?;
        return Some(RemoveServerResult {
            requester: ix.text(word(requester)?),
            target: ix.text(word(target)?),
            ok,
            detail: ix.text(detail),
        });
    }
    // ovsdb/raft.c raft_handle_append_entries / raft_truncate
    if let Some((sid, rest)) = cut(t, " truncating ") {
        if let Some(n) = rest.strip_suffix(" entries from end of log") {
            return Some(Truncating {
                sid: ix.text(word(sid)?),
                entries: num(n)?,
            });
        }
    }
    // ovsdb/raft.c raft_handle_execute_command_reply
    if let Some((_me, r)) = cut(t, " received \"") {
        if let Some((status, r)) = cut(r, "\" reply from ") {
            if let Some(from) = r.strip_suffix(" for unknown command") {
                return Some(StrayCommandReply {
                    status: ix.text(status),
                    from: ix.text(word(from)?),
                });
            }
        }
    }
    // ovsdb/raft.c raft_leave__ / raft_finished_leaving_cluster
    if let Some((sid, rest)) = cut(t, ": ") {
        if rest.starts_with("starting to leave cluster ") {
            return Some(Leaving {
                sid: ix.text(word(sid)?),
            });
        }
        if rest.starts_with("finished leaving cluster ") {
            return Some(Left {
                sid: ix.text(word(sid)?),
            });
        }
        // ovsdb/raft.c raft_conn_receive
        if let Some(s) = rest.strip_prefix("learned server ID ") {
            return Some(LearnedServerId {
                peer: ix.text(word(sid)?),
                sid: ix.text(word(s)?),
            });
        }
        // ovsdb/raft.c raft_conn_receive
        if let Some(a) = rest.strip_prefix("learned remote address ") {
            return Some(LearnedRemoteAddress {
                peer: ix.text(word(sid)?),
                address: ix.text(word(a)?),
            });
        }
    }
    // ovsdb/raft-rpc.c raft_rpc_from_jsonrpc raises "misrouted message
    // (addressed to X but we're Y)"; ovsdb/raft.c raft_conn_receive logs it
    // as "<conn>: <error tag>: … misrouted message (…)".
    if let Some(i) = find(t, "misrouted message (") {
        let d = &t[i + "misrouted message (".len()..];
        let d = d.rfind(')').map_or(d, |j| &d[..j]);
        return Some(Misrouted { detail: ix.text(d) });
    }
    // ovsdb/raft.c raft_update_commit_index
    if let Some(s) = t.strip_prefix("Election timer changed from ") {
        let (a, b) = cut(s, " to ")?;
        return Some(ElectionTimerChanged {
            from_ms: num(a)?,
            to_ms: num(b)?,
        });
    }
    None
}

/// lib/reconnect.c: `reconnect_disconnected`, `reconnect_connecting`,
/// `reconnect_connected`, `reconnect_run`; every line is `<name>: <what>`.
fn reconnect(t: &str, ix: &mut Interner) -> Option<EventKind> {
    use EventKind::*;
    let (peer, what) = cut(t, ": ")?;
    let peer = word(peer)?;
    if what == "connecting..." {
        return Some(Connecting {
            peer: ix.text(peer),
        });
    }
    if what == "connected" {
        return Some(Connected {
            peer: ix.text(peer),
        });
    }
    if let Some(s) = what.strip_prefix("no response to inactivity probe after ") {
        let s = s.strip_suffix(" seconds, disconnecting")?;
        return Some(ProbeTimeout {
            peer: ix.text(peer),
            after_s: secs(s)?.round() as u64,
        });
    }
    if let Some(s) = what.strip_prefix("waiting ") {
        let s = s.strip_suffix(" seconds before reconnect")?;
        return Some(ReconnectWait {
            peer: ix.text(peer),
            seconds: secs(s)?.round() as u64,
        });
    }
    if what == "connection closed by peer"
        || what.starts_with("connection dropped")
        || what.starts_with("connection attempt failed")
        || what == "connection attempt timed out"
    {
        return Some(ConnectionLost {
            peer: ix.text(peer),
            reason: ix.text(what),
        });
    }
    None
}

/// lib/timeval.c log_poll_interval.
fn long_poll(t: &str) -> Option<EventKind> {
    let s = t.strip_prefix("Unreasonably long ")?;
    let (wall_ms, r) = lead_num(s)?;
    let r = r.strip_prefix("ms poll interval")?;
    if r.is_empty() {
        return Some(EventKind::LongPoll {
            wall_ms,
            user_ms: 0,
            system_ms: 0,
        });
    }
    let r = r.strip_prefix(" (")?;
    let (user_ms, r) = lead_num(r)?;
    let r = r.strip_prefix("ms user, ")?;
    let (system_ms, r) = lead_num(r)?;
    if r != "ms system)" {
        return None;
    }
    Some(EventKind::LongPoll {
        wall_ms,
        user_ms,
        system_ms,
    })
}

/// lib/poll-loop.c log_wakeup.
fn poll_wakeup(t: &str, ix: &mut Interner) -> Option<EventKind> {
    let s = t.strip_prefix("wakeup due to ")?;
    let s = s.strip_suffix("% CPU usage)")?;
    let (cause, pct) = rcut(s, " (")?;
    Some(EventKind::PollWakeup {
        cpu_percent: num(pct)?,
        cause: ix.text(cause),
    })
}

/// lib/memory.c memory_run / memory_report.
fn memory(t: &str, ix: &mut Interner) -> Option<EventKind> {
    if let Some(s) = t.strip_prefix("peak resident set size grew ") {
        let (percent, r) = lead_num(s)?;
        let r = r.strip_prefix("% in last ")?;
        let (seconds, r) = cut(r, " seconds, from ")?;
        let (from, to) = cut(r, " kB to ")?;
        return Some(EventKind::MemoryGrew {
            percent,
            seconds: secs(seconds)?,
            from_kb: num(from)?,
            to_kb: num(to.strip_suffix(" kB")?)?,
        });
    }
    if let Some((kb, r)) = cut(t, " kB peak resident set size after ") {
        return Some(EventKind::MemoryPeak {
            kb: num(kb)?,
            after_s: secs(r.strip_suffix(" seconds")?)?,
        });
    }
    let counts = crate::memory::parse_memory_pairs(t, |name| ix.text(name))?;
    Some(EventKind::MemoryCounts { counts })
}

fn ovsdb_server(t: &str, ix: &mut Interner) -> Option<EventKind> {
    // ovsdb/ovsdb-server.c main: "%s (Open vSwitch) %s", program_name, VERSION
    if let Some((_prog, v)) = cut(t, " (Open vSwitch) ") {
        return Some(EventKind::ServerStart {
            version: ix.text(word(v)?),
        });
    }
    // ovsdb/ovsdb-server.c ovsdb_server_compact
    if let Some(s) = t.strip_prefix("compacting ") {
        let db = s.strip_suffix(" database by user request")?;
        return Some(EventKind::Compacting {
            database: ix.text(word(db)?),
            by_user: true,
        });
    }
    // ovsdb/ovsdb-server.c main_loop
    if let Some((db, reason)) = cut(t, ": removing database because ") {
        return Some(EventKind::DatabaseRemoved {
            database: ix.text(word(db)?),
            reason: ix.text(reason),
        });
    }
    None
}

/// ovsdb/ovsdb.c ovsdb_snapshot (3.1 and newer): "DB: Database compaction
/// took N ms (init: …)" at INFO when the write took more than 1 s, else at
/// DBG; the compaction thread's "DB: Compaction thread started." (DBG) is
/// the start of an automatic or user compaction (the only start line for an
/// automatic one: 3.1 logs none at INFO).
fn ovsdb(t: &str, ix: &mut Interner) -> Option<EventKind> {
    let (db, rest) = cut(t, ": ")?;
    if let Some(s) = rest.strip_prefix("Database compaction took ") {
        let (ms, r) = lead_num(s)?;
        if !r.starts_with("ms") {
            return None;
        }
        return Some(EventKind::SnapshotWritten {
            duration_ms: Some(ms),
        });
    }
    if rest == "Compaction thread started." {
        return Some(EventKind::Compacting {
            database: ix.text(word(db)?),
            by_user: false,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interner_shares_equal_texts_and_is_bounded() {
        let mut ix = Interner::new();
        let a = ix.text("tcp:127.0.0.1:6643");
        let b = ix.text("tcp:127.0.0.1:6643");
        assert!(Arc::ptr_eq(&a.0, &b.0));
        for n in 0..MAX_INTERNED + 10 {
            ix.text(&format!("peer-{n}"));
        }
        assert!(ix.set.len() <= MAX_INTERNED);
        // Past the bound, texts are still right, only not shared.
        let c = ix.text("never seen before");
        assert_eq!(c, "never seen before");
        let mut none = Interner::none();
        let d = none.text("x");
        assert_eq!(d, none.text("x"));
        assert!(none.set.is_empty());
    }

    #[test]
    fn text_compares_and_prints_as_its_string() {
        let t = Text::from("aa26");
        assert_eq!(t, "aa26");
        assert_eq!("aa26", t);
        assert_eq!(t, String::from("aa26"));
        assert_eq!(format!("{t} {t:?}"), "aa26 \"aa26\"");
        assert_eq!(String::from(&t), "aa26");
    }
}
