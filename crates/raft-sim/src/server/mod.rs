//! One ovsdb-server's Raft + OVSDB-trigger state machine, sans IO.
//!
//! The server never touches a clock, a socket or a disk: it is driven by the
//! simulator through [`Server::iterate`] (one poll-loop iteration, steps in the
//! profile's order, §4.8), [`Server::deliver`] (a message lands in its
//! socket buffer), [`Server::fsync_done`] (the afsync thread finished) and
//! [`Server::client_request`]. Everything it wants done — messages, fsyncs,
//! client replies, observations for tracing and invariants — goes into the
//! [`Ctx`] outbox.

use crate::knobs::{Knobs, SuppressMode, TransferPolicy};
use crate::rng::Rng;
use crate::txn::{self, NbState, Op, Proposal, ProposalRef};
use ovsdb::json::Json;
use std::collections::VecDeque;
use std::rc::Rc;

pub type Time = u64;
pub type Sid = usize;

#[derive(Clone, Debug)]
pub enum EntryKind {
    Noop,
    Data { eid: u64, txn: ProposalRef },
    Servers(u64),
    ElectionTimer(u64),
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub term: u64,
    /// Globally unique id of this entry (identity for invariant checks).
    pub uid: u64,
    pub kind: EntryKind,
}

impl Entry {
    pub fn eid(&self) -> u64 {
        match &self.kind {
            EntryKind::Data { eid, .. } => *eid,
            _ => 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Success,
    NotLeader,
    PrereqFailed,
    InProgress,
    LostLeadership,
}

#[derive(Clone, Debug)]
pub enum Msg {
    Append {
        term: u64,
        prev_index: u64,
        prev_term: u64,
        leader_commit: u64,
        entries: Rc<Vec<Entry>>,
    },
    AppendReply {
        term: u64,
        log_end: u64,
        prev_index: u64,
        n_entries: u64,
        ok: bool,
    },
    Vote {
        term: u64,
        last_index: u64,
        last_term: u64,
        transfer: bool,
        prevote: bool,
    },
    VoteReply {
        term: u64,
        vote: Sid,
        prevote: bool,
    },
    Snapshot {
        term: u64,
        snap: Rc<Snap>,
    },
    SnapshotReply {
        term: u64,
        last_index: u64,
        last_term: u64,
    },
    BecomeLeader {
        term: u64,
    },
    Exec {
        eid: u64,
        prereq: u64,
        txn: ProposalRef,
    },
    ExecReply {
        eid: u64,
        status: Status,
        commit_index: u64,
    },
    AddServer,
    AddServerReply {
        ok: bool,
    },
    RemoveServer {
        target: Sid,
    },
    RemoveServerReply {
        ok: bool,
        target: Sid,
    },
}

/// Coarse message kinds for event lists and counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgKind {
    Append,
    Heartbeat,
    AppendReply,
    Vote,
    PreVote,
    VoteReply,
    Snapshot,
    SnapshotReply,
    BecomeLeader,
    Exec,
    ExecReply,
    Membership,
}

impl MsgKind {
    pub fn name(self) -> &'static str {
        match self {
            MsgKind::Append => "append_request",
            MsgKind::Heartbeat => "heartbeat",
            MsgKind::AppendReply => "append_reply",
            MsgKind::Vote => "vote_request",
            MsgKind::PreVote => "prevote_request",
            MsgKind::VoteReply => "vote_reply",
            MsgKind::Snapshot => "install_snapshot_request",
            MsgKind::SnapshotReply => "install_snapshot_reply",
            MsgKind::BecomeLeader => "become_leader",
            MsgKind::Exec => "execute_command_request",
            MsgKind::ExecReply => "execute_command_reply",
            MsgKind::Membership => "membership",
        }
    }
    pub fn code(self) -> u64 {
        self as u64
    }
}

impl Msg {
    pub fn kind(&self) -> MsgKind {
        match self {
            Msg::Append { entries, .. } if entries.is_empty() => MsgKind::Heartbeat,
            Msg::Append { .. } => MsgKind::Append,
            Msg::AppendReply { .. } => MsgKind::AppendReply,
            Msg::Vote { prevote: true, .. } => MsgKind::PreVote,
            Msg::Vote { .. } => MsgKind::Vote,
            Msg::VoteReply { .. } => MsgKind::VoteReply,
            Msg::Snapshot { .. } => MsgKind::Snapshot,
            Msg::SnapshotReply { .. } => MsgKind::SnapshotReply,
            Msg::BecomeLeader { .. } => MsgKind::BecomeLeader,
            Msg::Exec { .. } => MsgKind::Exec,
            Msg::ExecReply { .. } => MsgKind::ExecReply,
            _ => MsgKind::Membership,
        }
    }

    pub fn term(&self) -> u64 {
        match self {
            Msg::Append { term, .. }
            | Msg::AppendReply { term, .. }
            | Msg::Vote { term, .. }
            | Msg::VoteReply { term, .. }
            | Msg::Snapshot { term, .. }
            | Msg::SnapshotReply { term, .. }
            | Msg::BecomeLeader { term } => *term,
            _ => 0,
        }
    }

    /// Approximate JSON-RPC size on the wire, bytes (header members
    /// `cluster`, `from`, `to` are three UUIDs plus method name framing).
    pub fn wire_bytes(&self, column_diff: bool) -> u64 {
        const COMMON: u64 = 170;
        match self {
            Msg::Append { entries, .. } => {
                let mut b = COMMON + 90;
                for e in entries.iter() {
                    b += 30
                        + match &e.kind {
                            EntryKind::Data { txn, .. } => 50 + txn.len(column_diff) as u64,
                            EntryKind::Servers(s) => 60 * s.count_ones() as u64,
                            _ => 20,
                        };
                }
                b
            }
            Msg::Snapshot { snap, .. } => COMMON + txn::NB_HEADER_JSON + snap.db_bytes,
            Msg::Exec { txn, .. } => COMMON + 100 + txn.len(column_diff) as u64,
            Msg::ExecReply { .. } => COMMON + 80,
            _ => COMMON + 60,
        }
    }
}

/// A snapshot (what the file header holds after compaction).
#[derive(Clone, Debug)]
pub struct Snap {
    pub index: u64,
    pub term: u64,
    pub servers: u64,
    pub et: u64,
    pub last_eid: u64,
    pub db: Rc<NbState>,
    /// JSON size of the database's rows in a snapshot record.
    pub db_bytes: u64,
    /// The database at `index`, as the chain of committed transactions
    /// that builds it (see [`CoreHistory`]); None before a joiner has one.
    pub core: Option<Rc<CoreHistory>>,
}

/// The data transactions a server applied, in order, as an immutable chain
/// of chunks (one per snapshot). A snapshot names the core database at its
/// index by sharing this chain instead of deep-copying the database (the
/// copy was 15 % of a long run); the database is rebuilt by replay only when
/// a snapshot is installed or a server restarts. Sharing is clone-safe
/// (checkpoints), the chunks never change.
#[derive(Debug, Default)]
pub struct CoreHistory {
    pub prev: Option<Rc<CoreHistory>>,
    pub txns: Vec<ProposalRef>,
}

impl CoreHistory {
    fn chunks(self: &Rc<Self>) -> Vec<&Rc<CoreHistory>> {
        let mut chunks = Vec::new();
        let mut at = Some(self);
        while let Some(h) = at {
            chunks.push(h);
            at = h.prev.as_ref();
        }
        chunks.reverse();
        chunks
    }

    /// Replay the chain's records onto an empty database model (what a
    /// server does when it installs a snapshot or restarts). Returns the
    /// model, its rows' snapshot size and the first record it refused
    /// (none expected).
    pub fn rebuild_model(self: &Rc<Self>) -> (ovsdb_server::Server, u64, Option<String>) {
        let mut model = txn::empty_model();
        let mut bytes = 0u64;
        let mut problem = None;
        for h in self.chunks() {
            for t in &h.txns {
                match model.apply_record(&t.record) {
                    Ok((Some(c), _)) => bytes = txn::grow_db_bytes(bytes, &model.meta, &c),
                    Ok((None, _)) => {}
                    Err(e) => {
                        problem.get_or_insert(format!("model refused {:?}: {e}", t.op));
                    }
                }
            }
        }
        (model, bytes, problem)
    }

    /// Replay the chain onto an empty core database. Returns the database
    /// and the first disagreement found (none expected: every transaction
    /// was executed when it was first applied).
    pub fn rebuild(self: &Rc<Self>) -> (Option<ovsdb::Database>, Option<String>) {
        let Some(mut db) = txn::empty_core_db() else {
            return (None, Some("schema does not parse".into()));
        };
        let mut problem = None;
        for h in self.chunks() {
            for t in &h.txns {
                if let Some(p) = core_apply(&mut db, t) {
                    problem.get_or_insert(p);
                }
            }
        }
        (Some(db), problem)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Follower,
    Candidate,
    Leader,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Follower => "follower",
            Role::Candidate => "candidate",
            Role::Leader => "leader",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Life {
    Up,
    Down,
    Left,
}

#[derive(Clone, Debug, Default)]
pub struct Peer {
    pub next_index: u64,
    pub match_index: u64,
    pub replied: bool,
    pub snap_inflight: bool,
}

#[derive(Clone, Debug)]
enum Waiter {
    Entry {
        ticket: u64,
        index: u64,
    },
    TermVote {
        ticket: u64,
        term: u64,
        vote: Option<Sid>,
    },
    Rpc {
        to: Sid,
        msg: Msg,
    },
}

#[derive(Clone, Debug, PartialEq)]
enum TState {
    Idle,
    Waiting(u64),
    Applying(u64),
}

#[derive(Clone, Debug)]
struct Trigger {
    client: usize,
    op: Op,
    state: TState,
    /// Applied eid at the last proposal that failed its prerequisite: the
    /// retry waits until the local database changes (a retry before that
    /// would carry the same stale prerequisite and fail again; the real
    /// server spins on it, which only costs CPU).
    failed_prereq: Option<u64>,
}

#[derive(Clone, Debug)]
struct Command {
    eid: u64,
    prereq: u64,
    /// Leader side: follower that forwarded it (cleared on step-down).
    from: Option<Sid>,
    /// A trigger on this server waits for it.
    local: bool,
    /// Follower side: a forwarded request counts against follower_max_inflight.
    forwarded: bool,
    touched: Time,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AddPhase {
    Catchup,
    Committing(u64),
}

/// What a record write was, for the per-kind byte accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    Header,
    Entry,
    Term,
    Vote,
    Leader,
    Commit,
    Note,
}

/// One record of a server's clustered log file, captured (when
/// [`Ctx::capture`] is on) so that real `.db` files can be written.
#[derive(Clone, Debug)]
pub enum LogRec {
    /// The file starts: member (snapshot at index 1) or joining header.
    Create {
        joining: bool,
    },
    Entry {
        index: u64,
        entry: Entry,
    },
    Term {
        term: u64,
    },
    Vote {
        term: u64,
        vote: Sid,
    },
    Leader {
        term: u64,
        leader: Sid,
    },
    Commit {
        index: u64,
    },
    Note {
        note: &'static str,
    },
    /// The file is replaced by a new one whose header holds `snap`; the
    /// records that follow belong to the new file.
    Rewrite {
        snap: Rc<Snap>,
    },
}

/// Everything a server asks the world to do.
#[derive(Clone, Debug)]
pub enum Out {
    /// An append_reply acknowledged entries not yet durable (see `emit`).
    EarlyAck {
        server: Sid,
    },
    /// A client's transaction ended without an entry (`error` is None for
    /// a transaction that changed nothing).
    TxnRejected {
        server: Sid,
        op: Op,
        error: Option<String>,
    },
    /// A database refused a committed record, or the two databases
    /// disagree on its size.
    CoreMismatch {
        server: Sid,
        index: u64,
        msg: String,
    },
    Log {
        server: Sid,
        rec: LogRec,
    },
    Send {
        from: Sid,
        to: Sid,
        msg: Msg,
        at: Time,
    },
    FsyncDone {
        server: Sid,
        at: Time,
        ticket: u64,
    },
    ClientDone {
        server: Sid,
        client: usize,
        at: Time,
    },
    Record {
        server: Sid,
        kind: RecordKind,
        bytes: u64,
        /// The same record's size in the other storage mode.
        alt_bytes: u64,
    },
    Commit {
        server: Sid,
        index: u64,
        term: u64,
        uid: u64,
    },
    Truncate {
        server: Sid,
        from_index: u64,
        commit_index: u64,
    },
    BecameLeader {
        server: Sid,
        term: u64,
    },
    SteppedDown {
        server: Sid,
        term: u64,
    },
    ElectionStarted {
        server: Sid,
        term: u64,
        prevote: bool,
        transfer: bool,
    },
    TermChanged {
        server: Sid,
        term: u64,
    },
    ElectionTimerChanged {
        server: Sid,
        ms: u64,
    },
    Joined {
        server: Sid,
    },
    Left {
        server: Sid,
    },
    Snapshotted {
        server: Sid,
        index: u64,
        /// By the snapshot scheduler (not `ovsdb-server/compact`).
        scheduled: bool,
    },
    PrereqFailure {
        server: Sid,
    },
    Timeout {
        server: Sid,
    },
}

/// Per-call context: virtual time, accumulated CPU cost, knobs, RNG, outbox.
pub struct Ctx<'a> {
    pub now: Time,
    /// CPU time spent so far in this iteration (µs); sends leave at now+cost.
    pub cost: f64,
    pub k: &'a Knobs,
    pub rng: &'a mut Rng,
    pub out: &'a mut Vec<Out>,
    /// Source of globally unique ids (eids, entry uids).
    pub ids: &'a mut u64,
    /// Per-server fsync slowness factor (slow-disk fault).
    pub disk_factor: f64,
    /// Epoch for `_date` in composed transactions, ms.
    pub date_base_ms: u64,
    pub comment_prefix: &'a str,
    /// Which peers are currently reachable (for transfer target choice).
    pub reachable: u64,
    /// Emit [`Out::Log`] for every record written.
    pub capture: bool,
}

impl Ctx<'_> {
    fn at(&self) -> Time {
        self.now + self.cost as u64
    }
    fn new_id(&mut self) -> u64 {
        *self.ids += 1;
        *self.ids
    }
    fn cpu(&mut self, bytes: u64) {
        self.cost += bytes as f64 * self.k.cpu_ns_per_byte / 1000.0;
    }
}

#[derive(Clone, Debug)]
pub struct Server {
    pub id: Sid,
    pub life: Life,
    pub role: Role,
    pub term: u64,
    pub vote: Option<Sid>,
    pub leader: Option<Sid>,
    pub log_start: u64,
    pub log: Vec<Entry>,
    pub snap: Rc<Snap>,
    pub commit_index: u64,
    pub last_applied: u64,
    /// Latest appended configuration (bitmask of server ids).
    pub config: u64,
    initial_config: u64,
    /// Current election timer, µs.
    pub et: u64,
    pub pending_et: Option<u64>,
    pub election_base: Time,
    pub election_deadline: Time,
    pub ping_deadline: Time,
    pub peers: Vec<Peer>,
    votes: u64,
    prevote_passed: bool,
    /// §2.8 "connected" bookkeeping.
    pub candidate_retrying: bool,
    had_leader: bool,
    pub ever_had_leader: bool,
    pub joining: bool,
    pub leaving: bool,
    join_deadline: Option<Time>,
    leave_deadline: Option<Time>,
    join_targets: u64,
    adding: Vec<(Sid, AddPhase)>,
    removing: Option<(Sid, Sid, Option<u64>)>,
    snapshot_after_transfer: bool,
    // disk
    ticket_req: u64,
    ticket_done: u64,
    fsync_busy: bool,
    waiters: VecDeque<Waiter>,
    synced_term: u64,
    synced_vote: Option<Sid>,
    pub log_synced: u64,
    /// Ground truth for the durability observation: log end that is really
    /// on disk, and entry writes whose fsync is pending (ticket, log end).
    durable_end: u64,
    pending_writes: VecDeque<(u64, u64)>,
    // ovsdb layer
    /// The database: the IDL crate's server model, which executes the
    /// transactions this server proposes and installs committed entries.
    pub model: Box<ovsdb_server::Server>,
    /// JSON size of the model's rows in a snapshot record.
    pub db_bytes: u64,
    /// An independent second database, the `ovsdb` crate's, that replays
    /// the same entries and checks their sizes (`core_db` knob).
    pub core: Option<Box<ovsdb::Database>>,
    /// Data transactions applied since the last snapshot (the next
    /// [`CoreHistory`] chunk).
    core_pending: Vec<ProposalRef>,
    /// What clients know of the rows, to name them in requests.
    pub db: NbState,
    pub applied_eid: u64,
    log_last_eid: u64,
    new_clients: Vec<(usize, Op)>,
    triggers: Vec<Trigger>,
    commands: Vec<Command>,
    pub inbox: VecDeque<(Sid, Msg)>,
    // file / snapshot scheduling
    pub file_bytes: u64,
    pub file_bytes_after_snap: u64,
    pub applied_since_snap: u64,
    next_snapshot_check: Time,
    snapshot_deadline: Time,
    // poll loop bookkeeping (owned by the simulator)
    pub busy_until: Time,
    pub paused_until: Time,
    pub wake_at: Option<Time>,
    pub wake_gen: u64,
    pub incarnation: u64,
    pub disk_factor: f64,
}

/// Execute a committed transaction on the core database and check that the
/// core's own serialization of the changes has the entry's size in both
/// storage modes. Returns a description of any disagreement.
fn core_apply(core: &mut ovsdb::Database, txn: &txn::Proposal) -> Option<String> {
    let j = &txn.record;
    // The record is the same on every server: its sizes are compared once,
    // so later replays need no change list.
    let opts = ovsdb::db::ReplayOptions {
        skip_index_check: true,
        skip_changes: txn.size_checked.get(),
        ..Default::default()
    };
    match core.apply_txn_json(j, opts) {
        Err(e) => Some(format!("core database rejected {:?}: {e}", txn.op)),
        Ok(_) if txn.size_checked.get() => None,
        Ok(changes) => {
            txn.size_checked.set(true);
            for (mode, diff) in [
                (ovsdb::db::StorageMode::Full, false),
                (ovsdb::db::StorageMode::Diff, true),
            ] {
                let core_len = core.txn_json_len(&changes, mode);
                let ours = txn.tables_len(diff);
                if core_len != ours {
                    return Some(format!(
                        "{:?} in {} mode: IDL server model {ours} B, ovsdb database {core_len} B",
                        txn.op,
                        if diff { "diff" } else { "full" }
                    ));
                }
            }
            None
        }
    }
}

/// Iterator over the server ids of a bitmask, lowest first (no allocation).
struct Targets(u64);
impl Iterator for Targets {
    type Item = Sid;
    fn next(&mut self) -> Option<Sid> {
        if self.0 == 0 {
            return None;
        }
        let s = self.0.trailing_zeros() as Sid;
        self.0 &= self.0 - 1;
        Some(s)
    }
}

thread_local! {
    static NO_ENTRIES: Rc<Vec<Entry>> = Rc::new(Vec::new());
}

fn no_entries() -> Rc<Vec<Entry>> {
    NO_ENTRIES.with(|e| e.clone())
}

fn bit(s: Sid) -> u64 {
    1u64 << s
}

fn members(mask: u64) -> impl Iterator<Item = Sid> {
    Targets(mask)
}

impl Server {
    /// A member of a freshly formed cluster: snapshot at index 1 holding the
    /// empty database and configuration `config`.
    pub fn new_member(id: Sid, config: u64, k: &Knobs, now: Time, rng: &mut Rng) -> Server {
        let snap = Rc::new(Snap {
            index: 1,
            term: 1,
            servers: config,
            et: k.election_timer,
            last_eid: 0,
            db: Rc::new(NbState::default()),
            db_bytes: 0,
            core: Some(Rc::new(CoreHistory::default())),
        });
        let mut s = Server::blank(id, snap, k);
        s.term = 1;
        s.synced_term = 1;
        s.config = config;
        s.commit_index = 1;
        s.last_applied = 1;
        s.log_synced = 1;
        s.durable_end = s.log_end();
        s.file_bytes = txn::framed(txn::NB_HEADER_JSON) + txn::term_len(1);
        s.file_bytes_after_snap = s.file_bytes;
        s.reset_timers(k, now, rng);
        s
    }

    /// A server created with `ovsdb-tool join-cluster`: no snapshot yet.
    pub fn new_joiner(id: Sid, remotes: u64, k: &Knobs, now: Time, rng: &mut Rng) -> Server {
        let snap = Rc::new(Snap {
            index: 0,
            term: 0,
            servers: 0,
            et: k.election_timer,
            last_eid: 0,
            db: Rc::new(NbState::default()),
            db_bytes: 0,
            core: None,
        });
        let mut s = Server::blank(id, snap, k);
        s.log_start = 1;
        s.durable_end = 1;
        s.joining = true;
        s.join_targets = remotes;
        s.join_deadline = Some(now);
        s.file_bytes = txn::framed(200);
        s.file_bytes_after_snap = s.file_bytes;
        s.reset_timers(k, now, rng);
        s
    }

    fn blank(id: Sid, snap: Rc<Snap>, k: &Knobs) -> Server {
        let core = if k.core_db {
            txn::empty_core_db().map(Box::new)
        } else {
            None
        };
        Server {
            model: Box::new(txn::empty_model()),
            db_bytes: 0,
            core,
            core_pending: Vec::new(),
            id,
            life: Life::Up,
            role: Role::Follower,
            term: 0,
            vote: None,
            leader: None,
            log_start: snap.index + 1,
            log: Vec::new(),
            commit_index: snap.index,
            last_applied: snap.index,
            config: snap.servers,
            initial_config: snap.servers,
            et: snap.et,
            snap,
            pending_et: None,
            election_base: 0,
            election_deadline: 0,
            ping_deadline: 0,
            peers: vec![Peer::default(); 64],
            votes: 0,
            prevote_passed: false,
            candidate_retrying: false,
            had_leader: false,
            ever_had_leader: false,
            joining: false,
            leaving: false,
            join_deadline: None,
            leave_deadline: None,
            join_targets: 0,
            adding: Vec::new(),
            removing: None,
            snapshot_after_transfer: false,
            ticket_req: 0,
            ticket_done: 0,
            fsync_busy: false,
            waiters: VecDeque::new(),
            synced_term: 0,
            synced_vote: None,
            log_synced: 0,
            durable_end: 0,
            pending_writes: VecDeque::new(),
            db: NbState::default(),
            applied_eid: 0,
            log_last_eid: 0,
            new_clients: Vec::new(),
            triggers: Vec::new(),
            commands: Vec::new(),
            inbox: VecDeque::new(),
            file_bytes: 0,
            file_bytes_after_snap: 0,
            applied_since_snap: 0,
            next_snapshot_check: 0,
            snapshot_deadline: k.snapshot_deadline,
            busy_until: 0,
            paused_until: 0,
            wake_at: None,
            wake_gen: 0,
            incarnation: 0,
            disk_factor: 1.0,
        }
    }

    fn reset_timers(&mut self, k: &Knobs, now: Time, rng: &mut Rng) {
        self.reset_election_timer(k, now, rng);
        self.ping_deadline = now + k.ping(self.et);
        let span = k.snapshot_max.saturating_sub(k.snapshot_min);
        self.next_snapshot_check = now + k.snapshot_min + rng.below(span.max(1));
        self.snapshot_deadline = now + k.snapshot_deadline;
    }

    // ------------------------------------------------------------ log access

    pub fn log_end(&self) -> u64 {
        self.log_start + self.log.len() as u64
    }
    pub fn last_index(&self) -> u64 {
        self.log_end() - 1
    }
    pub fn entry(&self, idx: u64) -> Option<&Entry> {
        if idx < self.log_start {
            return None;
        }
        self.log.get((idx - self.log_start) as usize)
    }
    /// Term of `idx`, or 0 when unknown (compacted away / beyond the end).
    pub fn term_at(&self, idx: u64) -> u64 {
        if idx + 1 == self.log_start {
            return self.snap.term;
        }
        self.entry(idx).map(|e| e.term).unwrap_or(0)
    }
    pub fn last_term(&self) -> u64 {
        self.term_at(self.last_index())
    }
    fn n_config(&self) -> u32 {
        self.config.count_ones()
    }
    fn majority(&self, set: u64) -> bool {
        2 * (set & self.config).count_ones() > self.n_config()
    }
    /// `_Server.Database.connected` / cluster/status "disconnected" (§2.8):
    /// not retrying elections, not joining/leaving/left, and a leader was
    /// seen at least once.
    pub fn is_connected(&self) -> bool {
        self.life == Life::Up
            && !self.candidate_retrying
            && !self.joining
            && !self.leaving
            && self.ever_had_leader
    }

    fn learned_leader(&mut self) {
        self.had_leader = true;
        self.ever_had_leader = true;
        self.candidate_retrying = false;
    }

    /// Configuration of the server's original snapshot (index 1).
    pub fn snap_config_at_start(&self) -> u64 {
        self.initial_config
    }
    pub fn pending_commands(&self) -> usize {
        self.commands.len()
    }
    pub fn pending_triggers(&self) -> usize {
        self.triggers.len() + self.new_clients.len()
    }
    pub fn is_up(&self) -> bool {
        self.life == Life::Up
    }

    fn recompute_log_last_eid(&mut self) {
        self.log_last_eid = self
            .log
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                EntryKind::Data { eid, .. } => Some(*eid),
                _ => None,
            })
            .unwrap_or(self.snap.last_eid);
    }
    fn recompute_config(&mut self) {
        self.config = self
            .log
            .iter()
            .rev()
            .find_map(|e| match e.kind {
                EntryKind::Servers(s) => Some(s),
                _ => None,
            })
            .unwrap_or(self.snap.servers);
    }
    fn config_uncommitted(&self) -> bool {
        // Only entries above the commit index matter: scan back to it.
        let uncommitted = self.log_end().saturating_sub(self.commit_index + 1) as usize;
        self.log
            .iter()
            .rev()
            .take(uncommitted)
            .any(|e| matches!(e.kind, EntryKind::Servers(_)))
    }

    // ------------------------------------------------------------ disk

    /// A record appended to the server's file.
    fn record(&mut self, cx: &mut Ctx, kind: RecordKind, bytes: u64) {
        self.file_bytes += bytes;
        self.written(cx, kind, bytes, bytes);
    }

    /// An entry record of `bytes`, which would be `alt` bytes in the other
    /// storage mode (full values vs column diffs).
    fn record_entry(&mut self, cx: &mut Ctx, bytes: u64, alt: u64) {
        self.file_bytes += bytes;
        self.written(cx, RecordKind::Entry, bytes, alt);
    }

    /// Bytes written to disk, appended or as a new file: their CPU cost and
    /// the world's accounting.
    fn written(&self, cx: &mut Ctx, kind: RecordKind, bytes: u64, alt_bytes: u64) {
        cx.cpu(bytes);
        cx.out.push(Out::Record {
            server: self.id,
            kind,
            bytes,
            alt_bytes,
        });
    }

    fn capture(&self, cx: &mut Ctx, rec: LogRec) {
        if cx.capture {
            cx.out.push(Out::Log {
                server: self.id,
                rec,
            });
        }
    }

    /// Bytes of the entry's record in the given storage mode.
    fn entry_record_len(&self, e: &Entry, idx: u64, column_diff: bool) -> u64 {
        match &e.kind {
            EntryKind::Noop => txn::noop_entry_len(e.term, idx),
            EntryKind::Data { txn, .. } => {
                txn::data_entry_len(txn.len(column_diff) as u64, e.term, idx)
            }
            EntryKind::Servers(s) => txn::servers_entry_len(s.count_ones() as u64, e.term, idx),
            EntryKind::ElectionTimer(us) => txn::et_entry_len(us / 1000, e.term, idx),
        }
    }

    fn request_sync(&mut self, cx: &mut Ctx) -> u64 {
        self.ticket_req += 1;
        if !self.fsync_busy {
            self.start_fsync(cx, cx.at());
        }
        self.ticket_req
    }

    fn start_fsync(&mut self, cx: &mut Ctx, at: Time) {
        self.fsync_busy = true;
        let jitter = cx.rng.below(cx.k.fsync_jitter + 1);
        let dur = ((cx.k.fsync + jitter) as f64 * self.disk_factor.max(0.0)) as u64;
        cx.out.push(Out::FsyncDone {
            server: self.id,
            at: at + dur.max(1),
            ticket: self.ticket_req,
        });
    }

    /// The afsync thread finished an fsync covering tickets up to `ticket`.
    pub fn fsync_done(&mut self, ticket: u64, cx: &mut Ctx) {
        self.ticket_done = self.ticket_done.max(ticket);
        while let Some(&(t, end)) = self.pending_writes.front() {
            if t > self.ticket_done {
                break;
            }
            self.durable_end = end;
            self.pending_writes.pop_front();
        }
        self.fsync_busy = false;
        if self.ticket_req > self.ticket_done {
            self.start_fsync(cx, cx.now);
        }
    }

    fn rpc_synced(&self, msg: &Msg) -> bool {
        if msg.term() > self.synced_term {
            return false;
        }
        let min_index = match msg {
            Msg::AppendReply { log_end, .. } => log_end.saturating_sub(1),
            Msg::Vote { last_index, .. } => *last_index,
            Msg::Snapshot { snap, .. } => snap.index,
            Msg::SnapshotReply { last_index, .. } => *last_index,
            _ => 0,
        };
        if min_index > self.log_synced {
            return false;
        }
        if let Msg::VoteReply {
            vote,
            prevote: false,
            ..
        } = msg
        {
            if self.synced_vote != Some(*vote) {
                return false;
            }
        }
        true
    }

    fn send(&mut self, to: Sid, msg: Msg, cx: &mut Ctx) {
        if to == self.id {
            return;
        }
        if self.rpc_synced(&msg) {
            self.emit(to, msg, cx);
        } else {
            self.waiters.push_back(Waiter::Rpc { to, msg });
        }
    }

    fn emit(&mut self, to: Sid, msg: Msg, cx: &mut Ctx) {
        // §9 says a follower never acknowledges entries before they are
        // durable. raft.c can: after a truncation, an older entry waiter
        // completing sets log_synced to its index although the entry
        // re-written there is not yet synced, so a reply passes the send
        // gate early. Mirrored faithfully and counted, not hidden.
        if let Msg::AppendReply {
            ok: true, log_end, ..
        } = &msg
        {
            if self.durable_end < *log_end {
                cx.out.push(Out::EarlyAck { server: self.id });
            }
        }
        cx.cpu(msg.wire_bytes(cx.k.column_diff));
        cx.out.push(Out::Send {
            from: self.id,
            to,
            msg,
            at: cx.at(),
        });
    }

    fn drain_waiters(&mut self, cx: &mut Ctx) {
        while let Some(w) = self.waiters.front() {
            match w {
                Waiter::Entry { ticket, index } => {
                    if *ticket > self.ticket_done {
                        break;
                    }
                    let index = *index;
                    self.waiters.pop_front();
                    if index < self.log_end() {
                        self.log_synced = self.log_synced.max(index);
                    }
                    if self.role == Role::Leader {
                        self.check_commit(cx);
                    }
                }
                Waiter::TermVote { ticket, term, vote } => {
                    if *ticket > self.ticket_done {
                        break;
                    }
                    self.synced_term = *term;
                    self.synced_vote = *vote;
                    self.waiters.pop_front();
                }
                Waiter::Rpc { .. } => {
                    if let Some(Waiter::Rpc { to, msg }) = self.waiters.pop_front() {
                        if msg.term() == self.term || msg.term() == 0 {
                            self.emit(to, msg, cx);
                        }
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------ timers

    fn reset_election_timer(&mut self, k: &Knobs, now: Time, rng: &mut Rng) {
        self.election_base = now;
        let jitter = rng.below(k.election_range / 1000) * 1000;
        self.election_deadline = now + self.et + jitter;
    }

    /// The earliest time this server's poll loop would wake on its own.
    pub fn next_deadline(&self, k: &Knobs) -> Option<Time> {
        if self.life != Life::Up {
            return None;
        }
        let mut d = Time::MAX;
        let follower_like = self.role != Role::Leader;
        if (follower_like && !self.joining) || (self.role == Role::Leader && k.leader_stepdown) {
            d = d.min(self.election_deadline);
        }
        if self.role == Role::Leader || !self.commands.is_empty() {
            d = d.min(self.ping_deadline);
        }
        if let Some(t) = self.join_deadline {
            d = d.min(t);
        }
        if let Some(t) = self.leave_deadline {
            d = d.min(t);
        }
        if !self.new_clients.is_empty() {
            d = 0;
        }
        d = d.min(self.next_snapshot_check);
        (d != Time::MAX).then_some(d)
    }

    // ------------------------------------------------------------ terms/roles

    fn set_term(&mut self, term: u64, vote: Option<Sid>, cx: &mut Ctx) {
        self.term = term;
        self.vote = vote;
        let bytes = if vote.is_some() {
            txn::vote_len(term)
        } else {
            txn::term_len(term)
        };
        self.record(
            cx,
            if vote.is_some() {
                RecordKind::Vote
            } else {
                RecordKind::Term
            },
            bytes,
        );
        let rec = match vote {
            Some(v) => LogRec::Vote { term, vote: v },
            None => LogRec::Term { term },
        };
        self.capture(cx, rec);
        let ticket = self.request_sync(cx);
        self.waiters
            .push_back(Waiter::TermVote { ticket, term, vote });
        cx.out.push(Out::TermChanged {
            server: self.id,
            term,
        });
    }

    /// Term processing of an incoming RPC. Returns false if it must be dropped.
    fn receive_term(&mut self, term: u64, cx: &mut Ctx) -> bool {
        if term > self.term {
            self.set_term(term, None, cx);
            self.become_follower(cx);
            true
        } else {
            term == self.term
        }
    }

    fn become_follower(&mut self, cx: &mut Ctx) {
        self.leader = None;
        if self.role == Role::Follower {
            return;
        }
        let was_leader = self.role == Role::Leader;
        self.role = Role::Follower;
        self.reset_election_timer(cx.k, cx.now, cx.rng);
        if was_leader {
            cx.out.push(Out::SteppedDown {
                server: self.id,
                term: self.term,
            });
            self.adding.clear();
            self.removing = None;
            self.pending_et = None;
            if cx.k.fail_cmds_on_stepdown {
                let cmds = std::mem::take(&mut self.commands);
                for c in cmds {
                    if let Some(f) = c.from {
                        self.send(
                            f,
                            Msg::ExecReply {
                                eid: c.eid,
                                status: Status::LostLeadership,
                                commit_index: 0,
                            },
                            cx,
                        );
                    }
                    if c.local {
                        self.fail_trigger(c.eid);
                    }
                }
            } else {
                for c in &mut self.commands {
                    c.from = None;
                }
                self.commands.retain(|c| c.local);
            }
        }
    }

    fn fail_trigger(&mut self, eid: u64) {
        for t in &mut self.triggers {
            if t.state == TState::Waiting(eid) {
                t.state = TState::Idle;
            }
        }
    }

    fn start_election(&mut self, use_prevote: bool, transfer: bool, cx: &mut Ctx) {
        if self.joining || self.life != Life::Up {
            return;
        }
        if !cx.k.complete_on_eid_commit {
            // Before 5a9b53a51 starting an election failed pending commands.
            let cmds = std::mem::take(&mut self.commands);
            for c in cmds {
                if c.local {
                    self.fail_trigger(c.eid);
                }
            }
        }
        // A timeout election (the pre-vote phase when enabled) or a transfer
        // election: disconnected if no leader was seen since the last one.
        if use_prevote || transfer {
            self.candidate_retrying = !self.had_leader;
            self.had_leader = false;
        }
        self.role = Role::Candidate;
        self.leader = None;
        self.reset_election_timer(cx.k, cx.now, cx.rng);
        self.votes = bit(self.id);
        let prevote = use_prevote && cx.k.prevote && self.n_config() > 1 && !transfer;
        let (li, lt) = (self.last_index(), self.last_term());
        if prevote {
            self.prevote_passed = false;
            cx.out.push(Out::ElectionStarted {
                server: self.id,
                term: self.term,
                prevote: true,
                transfer,
            });
            for p in members(self.config) {
                self.send(
                    p,
                    Msg::Vote {
                        term: self.term,
                        last_index: li,
                        last_term: lt,
                        transfer: false,
                        prevote: true,
                    },
                    cx,
                );
            }
        } else {
            self.prevote_passed = true;
            let t = self.term + 1;
            self.set_term(t, Some(self.id), cx);
            cx.out.push(Out::ElectionStarted {
                server: self.id,
                term: t,
                prevote: false,
                transfer,
            });
            if self.majority(self.votes) {
                self.become_leader(cx);
                return;
            }
            for p in members(self.config) {
                self.send(
                    p,
                    Msg::Vote {
                        term: t,
                        last_index: li,
                        last_term: lt,
                        transfer,
                        prevote: false,
                    },
                    cx,
                );
            }
        }
    }

    fn become_leader(&mut self, cx: &mut Ctx) {
        self.role = Role::Leader;
        self.leader = Some(self.id);
        self.learned_leader();
        let end = self.log_end();
        for p in &mut self.peers {
            *p = Peer {
                next_index: end,
                match_index: 0,
                replied: false,
                snap_inflight: false,
            };
        }
        self.pending_et = None;
        self.reset_election_timer(cx.k, cx.now, cx.rng);
        self.record(cx, RecordKind::Leader, txn::leader_len(self.term));
        self.capture(
            cx,
            LogRec::Leader {
                term: self.term,
                leader: self.id,
            },
        );
        cx.out.push(Out::BecameLeader {
            server: self.id,
            term: self.term,
        });
        if cx.k.heartbeat_on_elect {
            self.send_heartbeats(false, cx);
        }
        self.command_initiate(EntryKind::Noop, cx);
        self.ping_deadline = cx.at() + cx.k.ping(self.et);
        self.check_commit(cx);
    }

    // ------------------------------------------------------------ leader side

    fn command_initiate(&mut self, kind: EntryKind, cx: &mut Ctx) -> u64 {
        let idx = self.log_end();
        let uid = cx.new_id();
        let e = Entry {
            term: self.term,
            uid,
            kind,
        };
        let bytes = self.entry_record_len(&e, idx, cx.k.column_diff);
        let alt = self.entry_record_len(&e, idx, !cx.k.column_diff);
        match &e.kind {
            EntryKind::Data { eid, .. } => self.log_last_eid = *eid,
            EntryKind::Servers(s) => self.config = *s,
            _ => {}
        }
        self.log.push(e.clone());
        self.record_entry(cx, bytes, alt);
        self.capture(
            cx,
            LogRec::Entry {
                index: idx,
                entry: e.clone(),
            },
        );
        let ticket = self.request_sync(cx);
        self.pending_writes.push_back((ticket, idx + 1));
        self.waiters.push_back(Waiter::Entry { ticket, index: idx });
        let entries = Rc::new(vec![e]);
        for p in self.targets() {
            if self.peers[p].next_index == idx {
                self.peers[p].next_index = idx + 1;
                let m = Msg::Append {
                    term: self.term,
                    prev_index: idx - 1,
                    prev_term: self.term_at(idx - 1),
                    leader_commit: self.commit_index,
                    entries: entries.clone(),
                };
                self.send(p, m, cx);
            }
        }
        if cx.k.ping_rearm_on_append {
            self.ping_deadline = cx.at() + cx.k.ping(self.et);
        }
        idx
    }

    /// Servers the leader replicates to: configuration plus joiners.
    fn targets(&self) -> Targets {
        let mut mask = self.config;
        for (s, _) in &self.adding {
            mask |= bit(*s);
        }
        Targets(mask & !bit(self.id))
    }

    fn send_heartbeats(&mut self, in_progress: bool, cx: &mut Ctx) {
        for p in self.targets() {
            let next = self.peers[p].next_index;
            if next < self.log_start {
                self.send_snapshot(p, cx);
                continue;
            }
            let prev = next - 1;
            let m = Msg::Append {
                term: self.term,
                prev_index: prev,
                prev_term: self.term_at(prev),
                leader_commit: self.commit_index,
                entries: no_entries(),
            };
            self.send(p, m, cx);
        }
        if in_progress {
            let pending: Vec<(Sid, u64)> = self
                .commands
                .iter()
                .filter_map(|c| c.from.map(|f| (f, c.eid)))
                .collect();
            for (f, eid) in pending {
                self.send(
                    f,
                    Msg::ExecReply {
                        eid,
                        status: Status::InProgress,
                        commit_index: 0,
                    },
                    cx,
                );
            }
        }
        self.ping_deadline = cx.at() + cx.k.ping(self.et);
    }

    fn send_snapshot(&mut self, p: Sid, cx: &mut Ctx) {
        if self.peers[p].snap_inflight {
            return;
        }
        self.peers[p].snap_inflight = true;
        let mut snap = (*self.snap).clone();
        snap.et = self.et;
        self.send(
            p,
            Msg::Snapshot {
                term: self.term,
                snap: Rc::new(snap),
            },
            cx,
        );
    }

    fn send_missing(&mut self, p: Sid, cx: &mut Ctx) {
        let next = self.peers[p].next_index;
        if next < self.log_start {
            self.send_snapshot(p, cx);
            return;
        }
        let end = self.log_end();
        if next >= end {
            return;
        }
        let stop = if cx.k.catchup_batch == 0 {
            end
        } else {
            (next + cx.k.catchup_batch).min(end)
        };
        let entries: Vec<Entry> = (next..stop)
            .filter_map(|i| self.entry(i).cloned())
            .collect();
        self.peers[p].next_index = stop;
        let m = Msg::Append {
            term: self.term,
            prev_index: next - 1,
            prev_term: self.term_at(next - 1),
            leader_commit: self.commit_index,
            entries: Rc::new(entries),
        };
        self.send(p, m, cx);
    }

    fn check_commit(&mut self, cx: &mut Ctx) {
        if self.role != Role::Leader {
            return;
        }
        let mut idx = self.last_index();
        while idx > self.commit_index {
            if self.term_at(idx) != self.term {
                break;
            }
            let mut set = 0u64;
            for p in members(self.config) {
                let m = if p == self.id {
                    self.log_synced
                } else {
                    self.peers[p].match_index
                };
                if m >= idx {
                    set |= bit(p);
                }
            }
            if self.majority(set) {
                self.update_commit(idx, cx);
                return;
            }
            idx -= 1;
        }
    }

    fn update_commit(&mut self, new: u64, cx: &mut Ctx) {
        if new <= self.commit_index {
            return;
        }
        let old = self.commit_index;
        self.commit_index = new;
        for idx in old + 1..=new {
            let Some(e) = self.entry(idx).cloned() else {
                continue;
            };
            cx.out.push(Out::Commit {
                server: self.id,
                index: idx,
                term: e.term,
                uid: e.uid,
            });
            match &e.kind {
                EntryKind::Data { eid, .. } => self.complete_eid(*eid, idx, cx),
                EntryKind::ElectionTimer(us) => {
                    self.et = *us;
                    if self.pending_et == Some(*us) {
                        self.pending_et = None;
                    }
                    cx.out.push(Out::ElectionTimerChanged {
                        server: self.id,
                        ms: us / 1000,
                    });
                }
                EntryKind::Servers(s) => {
                    if self.joining && s & bit(self.id) != 0 {
                        self.joining = false;
                        self.join_deadline = None;
                        cx.out.push(Out::Joined { server: self.id });
                    }
                    if self.role == Role::Leader {
                        self.membership_committed(idx, cx);
                    }
                }
                EntryKind::Noop => {}
            }
        }
        self.record(cx, RecordKind::Commit, txn::commit_len(new));
        self.capture(cx, LogRec::Commit { index: new });
        if self.role == Role::Leader && cx.k.commit_sync_immediate {
            self.send_heartbeats(false, cx);
        }
    }

    fn complete_eid(&mut self, eid: u64, idx: u64, cx: &mut Ctx) {
        let Some(pos) = self.commands.iter().position(|c| c.eid == eid) else {
            return;
        };
        let is_leader = self.role == Role::Leader;
        if !is_leader && !cx.k.complete_on_eid_commit {
            return;
        }
        let c = self.commands.remove(pos);
        if let (true, Some(f)) = (is_leader, c.from) {
            self.send(
                f,
                Msg::ExecReply {
                    eid,
                    status: Status::Success,
                    commit_index: idx,
                },
                cx,
            );
        }
        if c.local {
            for t in &mut self.triggers {
                if t.state == TState::Waiting(eid) {
                    t.state = TState::Applying(idx);
                }
            }
        }
    }

    fn membership_committed(&mut self, idx: u64, cx: &mut Ctx) {
        let done: Vec<Sid> = self
            .adding
            .iter()
            .filter(|(_, ph)| matches!(ph, AddPhase::Committing(i) if *i <= idx))
            .map(|(s, _)| *s)
            .collect();
        self.adding.retain(|(s, _)| !done.contains(s));
        for s in done {
            self.send(s, Msg::AddServerReply { ok: true }, cx);
        }
        if let Some((target, requester, Some(i))) = self.removing {
            if i <= idx {
                self.removing = None;
                self.send(requester, Msg::RemoveServerReply { ok: true, target }, cx);
                if requester != target {
                    self.send(target, Msg::RemoveServerReply { ok: true, target }, cx);
                }
            }
        }
        self.membership_step(cx);
    }

    /// Start the next configuration change if none is uncommitted.
    fn membership_step(&mut self, cx: &mut Ctx) {
        if self.role != Role::Leader || self.config_uncommitted() {
            return;
        }
        if let Some((target, requester, None)) = self.removing {
            let cfg = self.config & !bit(target);
            let idx = self.command_initiate(EntryKind::Servers(cfg), cx);
            self.removing = Some((target, requester, Some(idx)));
            return;
        }
        let end = self.log_end();
        let ready = self
            .adding
            .iter()
            .position(|(s, ph)| *ph == AddPhase::Catchup && self.peers[*s].match_index + 1 >= end);
        if let Some(pos) = ready {
            let s = self.adding[pos].0;
            let cfg = self.config | bit(s);
            let idx = self.command_initiate(EntryKind::Servers(cfg), cx);
            self.adding[pos].1 = AddPhase::Committing(idx);
        }
    }

    /// Hand leadership to another server (§2.7).
    pub fn transfer_leadership(&mut self, cx: &mut Ctx) -> bool {
        if self.role != Role::Leader {
            return false;
        }
        let others: Vec<Sid> = members(self.config & !bit(self.id)).collect();
        if others.is_empty() {
            return false;
        }
        let target = match cx.k.transfer_target_policy {
            TransferPolicy::First => others[0],
            TransferPolicy::Best => {
                let reach: Vec<Sid> = others
                    .iter()
                    .copied()
                    .filter(|p| cx.reachable & bit(*p) != 0)
                    .collect();
                let pool = if reach.is_empty() {
                    others.clone()
                } else {
                    reach
                };
                let best = pool
                    .iter()
                    .map(|p| self.peers[*p].match_index)
                    .max()
                    .unwrap_or(0);
                let cands: Vec<Sid> = pool
                    .into_iter()
                    .filter(|p| self.peers[*p].match_index == best)
                    .collect();
                cands[cx.rng.below(cands.len() as u64) as usize]
            }
        };
        self.send(target, Msg::BecomeLeader { term: self.term }, cx);
        self.record(cx, RecordKind::Note, txn::note_len());
        self.capture(
            cx,
            LogRec::Note {
                note: "transfer leadership",
            },
        );
        true
    }

    /// Leader asks to change the election timer (`cluster/change-election-timer`).
    pub fn change_election_timer(&mut self, ms: u64, cx: &mut Ctx) -> Result<(), &'static str> {
        if self.role != Role::Leader {
            return Err("not leader");
        }
        if self.pending_et.is_some() {
            return Err("change pending");
        }
        let us = ms * 1000;
        if !(100_000..=600_000_000).contains(&us) || us > 2 * self.et {
            return Err("out of range");
        }
        if us == self.et {
            return Ok(());
        }
        self.pending_et = Some(us);
        self.command_initiate(EntryKind::ElectionTimer(us), cx);
        Ok(())
    }

    pub fn start_leave(&mut self, cx: &mut Ctx) {
        if self.leaving || self.joining || self.life != Life::Up {
            return;
        }
        self.leaving = true;
        if self.role == Role::Leader {
            self.transfer_leadership(cx);
            self.become_follower(cx);
            let tenth = self.et / 10;
            self.leave_deadline = Some(cx.now + tenth + cx.rng.below(tenth.max(1)));
        } else {
            self.send_leave_requests(cx);
        }
    }

    fn send_leave_requests(&mut self, cx: &mut Ctx) {
        for p in members(self.config & !bit(self.id)) {
            self.send(p, Msg::RemoveServer { target: self.id }, cx);
        }
        self.leave_deadline = Some(cx.now + self.et);
    }

    // ------------------------------------------------------------ snapshots

    /// Compact the log up to `last_applied` (ovsdb-server/compact).
    pub fn compact(&mut self, cx: &mut Ctx) {
        self.compact_as(false, cx);
    }

    /// Compact, forced (`compact`) or because the scheduler said so.
    fn compact_as(&mut self, scheduled: bool, cx: &mut Ctx) {
        let idx = self.last_applied;
        if idx < self.log_start || self.joining {
            return;
        }
        let term = self.term_at(idx);
        let servers = self
            .log
            .iter()
            .enumerate()
            .filter(|(i, _)| self.log_start + (*i as u64) <= idx)
            .rev()
            .find_map(|(_, e)| match e.kind {
                EntryKind::Servers(s) => Some(s),
                _ => None,
            })
            .unwrap_or(self.snap.servers);
        self.snap = Rc::new(Snap {
            index: idx,
            term,
            servers,
            et: self.et,
            last_eid: self.applied_eid,
            db: Rc::new(self.db.clone()),
            db_bytes: self.db_bytes,
            core: Some(Rc::new(CoreHistory {
                prev: self.snap.core.clone(),
                txns: std::mem::take(&mut self.core_pending),
            })),
        });
        let drop_n = (idx + 1 - self.log_start) as usize;
        self.log.drain(..drop_n.min(self.log.len()));
        self.log_start = idx + 1;
        // New file: header with the data, remaining entries, term/vote, commit.
        let mut bytes = txn::framed(txn::NB_HEADER_JSON + self.db_bytes + 150);
        self.file_bytes_after_snap = bytes;
        for (i, e) in self.log.iter().enumerate() {
            bytes += self.entry_record_len(e, self.log_start + i as u64, cx.k.column_diff);
        }
        bytes += txn::vote_len(self.term) + txn::commit_len(self.commit_index);
        self.file_bytes = bytes;
        if cx.capture {
            self.capture(
                cx,
                LogRec::Rewrite {
                    snap: self.snap.clone(),
                },
            );
            for (i, e) in self.log.iter().enumerate() {
                let rec = LogRec::Entry {
                    index: self.log_start + i as u64,
                    entry: e.clone(),
                };
                self.capture(cx, rec);
            }
            let rec = match self.vote {
                Some(v) => LogRec::Vote {
                    term: self.term,
                    vote: v,
                },
                None => LogRec::Term { term: self.term },
            };
            self.capture(cx, rec);
            if self.commit_index > self.snap.index {
                let rec = LogRec::Commit {
                    index: self.commit_index,
                };
                self.capture(cx, rec);
            }
        }
        self.written(cx, RecordKind::Header, bytes, bytes);
        if !cx.k.snapshot_in_thread {
            cx.cost += cx.k.snapshot_block as f64 * 4.0;
        } else {
            cx.cost += cx.k.snapshot_block as f64;
        }
        self.applied_since_snap = 0;
        cx.out.push(Out::Snapshotted {
            server: self.id,
            index: idx,
            scheduled,
        });
    }

    fn snapshot_check(&mut self, cx: &mut Ctx) {
        if cx.now < self.next_snapshot_check {
            return;
        }
        let k = cx.k;
        let grown = self.applied_since_snap >= k.snapshot_min_entries
            && self.file_bytes > k.snapshot_min_bytes
            && self.file_bytes > 2 * self.file_bytes_after_snap;
        let due = cx.now >= self.snapshot_deadline && self.applied_since_snap > 0;
        if !(grown || due || self.snapshot_after_transfer) {
            let span = k
                .snapshot_recheck_max
                .saturating_sub(k.snapshot_recheck_min);
            self.next_snapshot_check = cx.now + k.snapshot_recheck_min + cx.rng.below(span.max(1));
            return;
        }
        let may = !self.joining
            && !self.leaving
            && (!k.snapshot_followers_only || self.role == Role::Follower || self.n_config() == 1);
        if !may {
            if self.role == Role::Leader
                && k.transfer_before_snapshot
                && self.transfer_leadership(cx)
            {
                self.become_follower(cx);
                self.snapshot_after_transfer = true;
                self.next_snapshot_check = cx.now + 1000;
            } else {
                self.next_snapshot_check = cx.now + 1000;
            }
            return;
        }
        self.snapshot_after_transfer = false;
        self.compact_as(true, cx);
        let span = k.snapshot_max.saturating_sub(k.snapshot_min);
        self.next_snapshot_check = cx.now + k.snapshot_min + cx.rng.below(span.max(1));
        self.snapshot_deadline = cx.now + k.snapshot_deadline;
    }

    // ------------------------------------------------------------ restart

    /// Restart after a crash: keep what was written, lose volatile state.
    pub fn restart(&mut self, cx: &mut Ctx) {
        self.life = Life::Up;
        self.incarnation += 1;
        self.role = Role::Follower;
        self.leader = None;
        self.candidate_retrying = false;
        self.had_leader = false;
        self.ever_had_leader = false;
        self.inbox.clear();
        self.waiters.clear();
        self.ticket_done = self.ticket_req;
        self.fsync_busy = false;
        self.synced_term = self.term;
        self.synced_vote = self.vote;
        self.log_synced = self.last_index();
        self.durable_end = self.log_end();
        self.pending_writes.clear();
        self.triggers.clear();
        self.new_clients.clear();
        self.commands.clear();
        self.adding.clear();
        self.removing = None;
        self.pending_et = None;
        self.snapshot_after_transfer = false;
        self.busy_until = cx.now;
        self.paused_until = 0;
        // Rebuild the database from the snapshot plus committed entries.
        self.db = (*self.snap.db).clone();
        let snap = self.snap.clone();
        self.core_from_snapshot(&snap, cx);
        self.applied_eid = self.snap.last_eid;
        self.last_applied = self.snap.index.max(self.log_start.saturating_sub(1));
        self.commit_index = self.commit_index.min(self.last_index());
        // Election timer from the snapshot and the newest committed ET entry.
        self.et = self.snap.et;
        for i in self.log_start..=self.commit_index {
            if let Some(Entry {
                kind: EntryKind::ElectionTimer(us),
                ..
            }) = self.entry(i)
            {
                self.et = *us;
            }
        }
        self.recompute_config();
        self.recompute_log_last_eid();
        self.apply_committed(cx);
        self.reset_timers(cx.k, cx.now, cx.rng);
        if self.leaving {
            self.leave_deadline = Some(cx.now);
        }
        if self.joining {
            self.join_deadline = Some(cx.now);
        }
        if self.n_config() == 1 && self.config & bit(self.id) != 0 {
            self.start_election(false, false, cx);
        }
    }

    // ------------------------------------------------------------ inputs

    pub fn deliver(&mut self, from: Sid, msg: Msg) {
        self.inbox.push_back((from, msg));
    }

    pub fn client_request(&mut self, client: usize, op: Op) {
        self.new_clients.push((client, op));
    }

    /// One poll-loop iteration at `cx.now`, steps in the profile's order.
    pub fn iterate(&mut self, cx: &mut Ctx) {
        if self.life != Life::Up {
            return;
        }
        cx.cost += cx.k.loop_cost as f64;
        // Client step: new transactions are tried immediately.
        let fresh = std::mem::take(&mut self.new_clients);
        for (client, op) in fresh {
            self.triggers.push(Trigger {
                client,
                op,
                state: TState::Idle,
                failed_prereq: None,
            });
            let i = self.triggers.len() - 1;
            self.try_propose(i, cx);
        }
        if cx.k.same_iteration_completion {
            self.raft_run(cx);
            self.apply_committed(cx);
            self.trigger_run(cx);
        } else {
            self.trigger_run(cx);
            self.raft_run(cx);
            self.apply_committed(cx);
        }
        if self.life == Life::Up {
            self.snapshot_check(cx);
        }
    }

    fn raft_run(&mut self, cx: &mut Ctx) {
        self.drain_waiters(cx);
        while let Some((from, msg)) = self.inbox.pop_front() {
            if self.life != Life::Up {
                return;
            }
            cx.cpu(msg.wire_bytes(cx.k.column_diff));
            self.handle(from, msg, cx);
        }
        if self.life != Life::Up {
            return;
        }
        let now = cx.now;
        if now >= self.election_deadline {
            match self.role {
                Role::Leader => {
                    if cx.k.leader_stepdown {
                        let others = self.config & !bit(self.id);
                        let replied =
                            members(others).filter(|p| self.peers[*p].replied).count() as u32;
                        if replied >= self.n_config() / 2 {
                            for p in &mut self.peers {
                                p.replied = false;
                            }
                            self.reset_election_timer(cx.k, now, cx.rng);
                        } else {
                            self.become_follower(cx);
                            self.start_election(true, false, cx);
                        }
                    } else {
                        self.election_deadline = Time::MAX / 2;
                    }
                }
                _ => {
                    if !self.joining && self.config & bit(self.id) != 0 {
                        self.start_election(true, false, cx);
                    } else {
                        self.reset_election_timer(cx.k, now, cx.rng);
                    }
                }
            }
        }
        if now >= self.ping_deadline {
            if self.role == Role::Leader {
                self.send_heartbeats(true, cx);
            } else {
                self.ping_deadline = now + cx.k.ping(self.et);
            }
            let limit = cx.k.command_timeout(self.et);
            let mut expired = Vec::new();
            self.commands.retain(|c| {
                let keep = now.saturating_sub(c.touched) < limit;
                if !keep && c.local {
                    expired.push(c.eid);
                }
                keep
            });
            for eid in expired {
                cx.out.push(Out::Timeout { server: self.id });
                self.fail_trigger(eid);
            }
        }
        if self.join_deadline.is_some_and(|t| now >= t) {
            for p in members(self.join_targets & !bit(self.id)) {
                self.emit(p, Msg::AddServer, cx);
            }
            self.join_deadline = Some(now + cx.k.join_retry);
        }
        if self.leave_deadline.is_some_and(|t| now >= t) {
            self.send_leave_requests(cx);
        }
        if self.role == Role::Leader {
            self.membership_step(cx);
        }
    }

    fn apply_committed(&mut self, cx: &mut Ctx) {
        while self.last_applied < self.commit_index {
            let idx = self.last_applied + 1;
            if let Some(e) = self.entry(idx) {
                if let EntryKind::Data { eid, txn } = &e.kind {
                    let (eid, txn) = (*eid, txn.clone());
                    // Every member, the proposer included, installs the
                    // committed record by replaying it, as ovsdb-server.
                    match self.model.apply_record(&txn.record) {
                        Ok((Some(c), _)) => {
                            self.db_bytes = txn::grow_db_bytes(self.db_bytes, &self.model.meta, &c)
                        }
                        Ok((None, _)) => {}
                        Err(e) => cx.out.push(Out::CoreMismatch {
                            server: self.id,
                            index: idx,
                            msg: format!("database model refused {:?}: {e}", txn.op),
                        }),
                    }
                    if let Some(core) = self.core.as_mut() {
                        if let Some(msg) = core_apply(core, &txn) {
                            cx.out.push(Out::CoreMismatch {
                                server: self.id,
                                index: idx,
                                msg,
                            });
                        }
                    }
                    self.core_pending.push(txn.clone());
                    self.db.apply(&txn);
                    self.applied_eid = eid;
                    self.applied_since_snap += 1;
                }
            }
            self.last_applied = idx;
        }
    }

    fn trigger_run(&mut self, cx: &mut Ctx) {
        let mut i = 0;
        while i < self.triggers.len() {
            match self.triggers[i].state {
                TState::Applying(idx) if self.last_applied >= idx => {
                    let t = self.triggers.remove(i);
                    cx.out.push(Out::ClientDone {
                        server: self.id,
                        client: t.client,
                        at: cx.at(),
                    });
                    continue;
                }
                TState::Idle => self.try_propose(i, cx),
                _ => {}
            }
            i += 1;
        }
    }

    fn try_propose(&mut self, i: usize, cx: &mut Ctx) {
        let is_leader = self.role == Role::Leader;
        let can_forward = self.role == Role::Follower && self.leader.is_some() && !self.joining;
        if !is_leader && !can_forward {
            return; // "not leader": retried at the next wake-up
        }
        let prereq = self.applied_eid;
        if cx.k.prereq_precheck && self.log_last_eid != prereq {
            return;
        }
        if self.triggers[i].failed_prereq == Some(prereq) {
            return;
        }
        if !is_leader && cx.k.follower_max_inflight > 0 {
            let n = self.commands.iter().filter(|c| c.forwarded).count() as u64;
            if n >= cx.k.follower_max_inflight {
                return;
            }
        }
        let op = self.triggers[i].op.clone();
        let date = cx.date_base_ms + cx.now / 1000;
        // Execute the client's request on this server's database without
        // installing it; the commit becomes the entry.
        let outcome = self
            .db
            .request(&op, cx.comment_prefix, cx.rng)
            .map(|req| (self.model.prepare(&req.ops), req));
        let (commit, req) = match outcome {
            Ok((out, req)) => match out.commit {
                Some(c) => (c, req),
                None => {
                    // ovsdb-server answers at once: an error, or success
                    // with nothing to write.
                    let error = out
                        .result
                        .as_array()
                        .and_then(|r| r.iter().find_map(|x| x.get("details")))
                        .and_then(Json::as_str)
                        .map(str::to_string);
                    self.reject(i, op, error, cx);
                    return;
                }
            },
            Err(msg) => {
                self.reject(i, op, Some(msg), cx);
                return;
            }
        };
        let t = Rc::new(Proposal::from_commit(
            &self.model.meta,
            &op,
            &req,
            &commit,
            date,
            cx.k.column_diff,
        ));
        cx.cpu(t.len(cx.k.column_diff) as u64);
        let eid = cx.new_id();
        if is_leader {
            if self.log_last_eid != prereq {
                cx.out.push(Out::PrereqFailure { server: self.id });
                self.triggers[i].failed_prereq = Some(prereq);
                return;
            }
            self.commands.push(Command {
                eid,
                prereq,
                from: None,
                local: true,
                forwarded: false,
                touched: cx.now,
            });
            self.command_initiate(EntryKind::Data { eid, txn: t }, cx);
        } else {
            let Some(l) = self.leader else { return };
            self.commands.push(Command {
                eid,
                prereq,
                from: None,
                local: true,
                forwarded: true,
                touched: cx.now,
            });
            self.send(
                l,
                Msg::Exec {
                    eid,
                    prereq,
                    txn: t,
                },
                cx,
            );
        }
        self.triggers[i].state = TState::Waiting(eid);
    }

    // ------------------------------------------------------------ handlers

    fn handle(&mut self, from: Sid, msg: Msg, cx: &mut Ctx) {
        match msg {
            Msg::Append {
                term,
                prev_index,
                prev_term,
                leader_commit,
                entries,
            } => {
                if term < self.term {
                    let m = Msg::AppendReply {
                        term: self.term,
                        log_end: self.log_end(),
                        prev_index,
                        n_entries: entries.len() as u64,
                        ok: false,
                    };
                    self.send(from, m, cx);
                    return;
                }
                self.receive_term(term, cx);
                self.handle_append(from, prev_index, prev_term, leader_commit, &entries, cx);
            }
            Msg::AppendReply {
                term,
                log_end,
                prev_index,
                n_entries,
                ok,
            } => {
                if !self.receive_term(term, cx) || self.role != Role::Leader {
                    return;
                }
                self.handle_append_reply(from, log_end, prev_index, n_entries, ok, cx);
            }
            Msg::Vote {
                term,
                last_index,
                last_term,
                transfer,
                prevote,
            } => self.handle_vote(from, term, last_index, last_term, transfer, prevote, cx),
            Msg::VoteReply {
                term,
                vote,
                prevote,
            } => {
                if !self.receive_term(term, cx) || self.role != Role::Candidate || vote != self.id {
                    return;
                }
                if prevote {
                    if self.prevote_passed {
                        return;
                    }
                    self.votes |= bit(from);
                    if self.majority(self.votes) {
                        self.start_election(false, false, cx);
                    }
                } else {
                    if !self.prevote_passed {
                        return;
                    }
                    self.votes |= bit(from);
                    if self.majority(self.votes) {
                        self.become_leader(cx);
                    }
                }
            }
            Msg::Snapshot { term, snap } => {
                if !self.receive_term(term, cx) {
                    return;
                }
                if self.role == Role::Candidate {
                    self.become_follower(cx);
                }
                self.set_leader(from, cx);
                self.reset_election_timer(cx.k, cx.now, cx.rng);
                if snap.index >= self.last_index() {
                    self.install_snapshot(&snap, cx);
                }
                let m = Msg::SnapshotReply {
                    term: self.term,
                    last_index: snap.index,
                    last_term: snap.term,
                };
                self.send(from, m, cx);
            }
            Msg::SnapshotReply {
                term,
                last_index,
                last_term,
            } => {
                if !self.receive_term(term, cx) || self.role != Role::Leader {
                    return;
                }
                self.peers[from].snap_inflight = false;
                self.peers[from].replied = true;
                if last_index == self.snap.index && last_term == self.snap.term {
                    self.peers[from].next_index = self.log_start;
                    self.peers[from].match_index = self.peers[from].match_index.max(last_index);
                    self.send_missing(from, cx);
                    self.membership_step(cx);
                } else {
                    self.send_snapshot(from, cx);
                }
            }
            Msg::BecomeLeader { term } => {
                if !self.receive_term(term, cx) {
                    return;
                }
                if self.role == Role::Follower {
                    self.start_election(false, true, cx);
                }
            }
            Msg::Exec { eid, prereq, txn } => {
                let status = if self.role != Role::Leader {
                    Status::NotLeader
                } else if prereq != self.log_last_eid {
                    Status::PrereqFailed
                } else {
                    self.commands.push(Command {
                        eid,
                        prereq,
                        from: Some(from),
                        local: false,
                        forwarded: false,
                        touched: cx.now,
                    });
                    self.command_initiate(EntryKind::Data { eid, txn }, cx);
                    return;
                };
                if status == Status::PrereqFailed {
                    cx.out.push(Out::PrereqFailure { server: self.id });
                }
                self.send(
                    from,
                    Msg::ExecReply {
                        eid,
                        status,
                        commit_index: 0,
                    },
                    cx,
                );
            }
            Msg::ExecReply {
                eid,
                status,
                commit_index,
            } => {
                let Some(pos) = self.commands.iter().position(|c| c.eid == eid) else {
                    return;
                };
                match status {
                    Status::InProgress => self.commands[pos].touched = cx.now,
                    Status::Success => {
                        let c = self.commands.remove(pos);
                        if c.local {
                            for t in &mut self.triggers {
                                if t.state == TState::Waiting(eid) {
                                    t.state = TState::Applying(commit_index);
                                }
                            }
                        }
                    }
                    _ => {
                        let c = self.commands.remove(pos);
                        for t in &mut self.triggers {
                            if t.state == TState::Waiting(eid) {
                                t.state = TState::Idle;
                                if status == Status::PrereqFailed {
                                    t.failed_prereq = Some(c.prereq);
                                }
                            }
                        }
                    }
                }
            }
            Msg::AddServer => self.handle_add_server(from, cx),
            Msg::AddServerReply { ok } => {
                if ok && self.joining {
                    self.joining = false;
                    self.join_deadline = None;
                    cx.out.push(Out::Joined { server: self.id });
                }
            }
            Msg::RemoveServer { target } => {
                if self.role != Role::Leader {
                    self.send(from, Msg::RemoveServerReply { ok: false, target }, cx);
                } else if self.config & bit(target) == 0 {
                    self.adding.retain(|(s, _)| *s != target);
                    self.send(from, Msg::RemoveServerReply { ok: true, target }, cx);
                } else if self.removing.is_none() && self.config.count_ones() > 1 {
                    self.removing = Some((target, from, None));
                    self.membership_step(cx);
                }
            }
            Msg::RemoveServerReply { ok, target } => {
                if ok && target == self.id && self.life == Life::Up {
                    self.record(cx, RecordKind::Note, txn::note_len());
                    self.capture(cx, LogRec::Note { note: "left" });
                    self.life = Life::Left;
                    self.leave_deadline = None;
                    cx.out.push(Out::Left { server: self.id });
                }
            }
        }
    }

    fn set_leader(&mut self, from: Sid, cx: &mut Ctx) {
        self.learned_leader();
        if self.leader != Some(from) {
            self.leader = Some(from);
            self.record(cx, RecordKind::Leader, txn::leader_len(self.term));
            self.capture(
                cx,
                LogRec::Leader {
                    term: self.term,
                    leader: from,
                },
            );
        }
    }

    fn handle_append(
        &mut self,
        from: Sid,
        prev_index: u64,
        prev_term: u64,
        leader_commit: u64,
        entries: &[Entry],
        cx: &mut Ctx,
    ) {
        if self.role == Role::Leader {
            return; // "usurped leadership"
        }
        if self.role == Role::Candidate {
            self.become_follower(cx);
        }
        self.set_leader(from, cx);
        self.reset_election_timer(cx.k, cx.now, cx.rng);
        let n = entries.len() as u64;
        let reply_fail = |s: &Self| Msg::AppendReply {
            term: s.term,
            log_end: s.log_end(),
            prev_index,
            n_entries: n,
            ok: false,
        };
        if prev_index >= self.log_end() {
            let m = reply_fail(self);
            self.send(from, m, cx);
            return;
        }
        if prev_index + 1 >= self.log_start && self.term_at(prev_index) != prev_term {
            let m = reply_fail(self);
            self.send(from, m, cx);
            return;
        }
        let mut wrote = false;
        let mut config_touched = false;
        for (i, e) in entries.iter().enumerate() {
            let idx = prev_index + 1 + i as u64;
            if idx < self.log_start {
                continue;
            }
            if idx < self.log_end() {
                if self.term_at(idx) == e.term {
                    continue;
                }
                cx.out.push(Out::Truncate {
                    server: self.id,
                    from_index: idx,
                    commit_index: self.commit_index,
                });
                let keep = (idx - self.log_start) as usize;
                if self.log[keep..]
                    .iter()
                    .any(|x| matches!(x.kind, EntryKind::Servers(_)))
                {
                    config_touched = true;
                }
                self.log.truncate(keep);
                self.log_synced = self.log_synced.min(idx - 1);
                self.durable_end = self.durable_end.min(idx);
                for p in &mut self.pending_writes {
                    p.1 = p.1.min(idx);
                }
                self.recompute_log_last_eid();
            }
            let bytes = self.entry_record_len(e, idx, cx.k.column_diff);
            let alt = self.entry_record_len(e, idx, !cx.k.column_diff);
            match &e.kind {
                EntryKind::Data { eid, .. } => self.log_last_eid = *eid,
                EntryKind::Servers(_) => config_touched = true,
                _ => {}
            }
            self.log.push(e.clone());
            self.record_entry(cx, bytes, alt);
            self.capture(
                cx,
                LogRec::Entry {
                    index: idx,
                    entry: e.clone(),
                },
            );
            wrote = true;
        }
        if config_touched {
            self.recompute_config();
        }
        if wrote {
            let ticket = self.request_sync(cx);
            self.pending_writes.push_back((ticket, self.log_end()));
            self.waiters.push_back(Waiter::Entry {
                ticket,
                index: self.last_index(),
            });
        }
        let new_commit = leader_commit.min(prev_index + n).min(self.last_index());
        if new_commit > self.commit_index {
            self.update_commit(new_commit, cx);
        }
        let m = Msg::AppendReply {
            term: self.term,
            log_end: self.log_end(),
            prev_index,
            n_entries: n,
            ok: true,
        };
        self.send(from, m, cx);
    }

    fn handle_append_reply(
        &mut self,
        from: Sid,
        log_end: u64,
        prev_index: u64,
        n_entries: u64,
        ok: bool,
        cx: &mut Ctx,
    ) {
        let p = &mut self.peers[from];
        p.replied = true;
        let mut grew = false;
        if ok {
            p.next_index = p.next_index.max(prev_index + n_entries + 1);
            if prev_index + n_entries > p.match_index {
                p.match_index = prev_index + n_entries;
                grew = true;
            }
        } else {
            p.next_index = p.next_index.saturating_sub(1).min(log_end).max(1);
        }
        let next = p.next_index;
        if next < self.log_start {
            self.send_snapshot(from, cx);
        } else if next < self.log_end() {
            self.send_missing(from, cx);
        }
        if grew {
            self.check_commit(cx);
        }
        if self.adding.iter().any(|(s, _)| *s == from) {
            self.membership_step(cx);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn handle_vote(
        &mut self,
        from: Sid,
        term: u64,
        last_index: u64,
        last_term: u64,
        transfer: bool,
        prevote: bool,
        cx: &mut Ctx,
    ) {
        let mut skip_term = false;
        if !transfer && cx.k.suppress_mode != SuppressMode::Off {
            let disruptive = match self.role {
                Role::Leader => true,
                Role::Follower => cx.now < self.election_base + self.et,
                Role::Candidate => false,
            };
            if disruptive {
                if cx.k.suppress_mode == SuppressMode::Drop || self.role == Role::Leader {
                    return;
                }
                skip_term = true;
            }
        }
        if !skip_term {
            if term > self.term {
                self.set_term(term, None, cx);
                self.become_follower(cx);
            } else if term < self.term {
                return;
            }
        }
        let up_to_date = cx.k.unsafe_vote_any_log
            || last_term > self.last_term()
            || (last_term == self.last_term() && last_index >= self.last_index());
        if prevote {
            let grant = if !cx.k.prevote_log_check && self.vote.is_some() {
                true
            } else {
                up_to_date
            };
            if grant {
                let m = Msg::VoteReply {
                    term: self.term,
                    vote: from,
                    prevote: true,
                };
                self.send(from, m, cx);
            }
            return;
        }
        if skip_term && term != self.term {
            return;
        }
        match self.vote {
            Some(v) => {
                let m = Msg::VoteReply {
                    term: self.term,
                    vote: v,
                    prevote: false,
                };
                self.send(from, m, cx);
            }
            None => {
                if !up_to_date {
                    return;
                }
                let t = self.term;
                self.set_term(t, Some(from), cx);
                self.reset_election_timer(cx.k, cx.now, cx.rng);
                let m = Msg::VoteReply {
                    term: t,
                    vote: from,
                    prevote: false,
                };
                self.send(from, m, cx);
            }
        }
    }

    fn handle_add_server(&mut self, from: Sid, cx: &mut Ctx) {
        if self.role != Role::Leader {
            self.emit(from, Msg::AddServerReply { ok: false }, cx);
            return;
        }
        if self.config & bit(from) != 0 {
            self.emit(from, Msg::AddServerReply { ok: true }, cx);
            return;
        }
        if self.adding.iter().any(|(s, _)| *s == from) {
            return;
        }
        self.adding.push((from, AddPhase::Catchup));
        self.peers[from] = Peer {
            next_index: self.log_end(),
            match_index: 0,
            replied: false,
            snap_inflight: false,
        };
        let prev = self.last_index();
        let m = Msg::Append {
            term: self.term,
            prev_index: prev,
            prev_term: self.term_at(prev),
            leader_commit: self.commit_index,
            entries: no_entries(),
        };
        self.send(from, m, cx);
    }

    /// Rebuild the core database at the snapshot's index (restart, install).
    /// The databases at the snapshot: the model (and the `core_db`
    /// cross-check database) rebuilt from the snapshot's history.
    fn core_from_snapshot(&mut self, snap: &Rc<Snap>, cx: &mut Ctx) {
        self.core_pending.clear();
        let Some(h) = snap.core.as_ref() else {
            *self.model = txn::empty_model();
            self.db_bytes = 0;
            if cx.k.core_db {
                self.core = txn::empty_core_db().map(Box::new);
            }
            return;
        };
        let (model, bytes, mut problem) = h.rebuild_model();
        *self.model = model;
        self.db_bytes = bytes;
        if cx.k.core_db {
            let (db, p) = h.rebuild();
            self.core = db.map(Box::new);
            problem = problem.or(p);
        }
        if let Some(msg) = problem {
            cx.out.push(Out::CoreMismatch {
                server: self.id,
                index: snap.index,
                msg: format!("rebuilding the snapshot's database: {msg}"),
            });
        }
    }

    /// The client's transaction ends without an entry: ovn-nbctl refused
    /// the command, or the server's reply is an error or a no-op.
    fn reject(&mut self, i: usize, op: Op, error: Option<String>, cx: &mut Ctx) {
        cx.out.push(Out::TxnRejected {
            server: self.id,
            op,
            error,
        });
        // Answered at the next pass, as a finished transaction.
        self.triggers[i].state = TState::Applying(self.last_applied);
    }

    fn install_snapshot(&mut self, snap: &Rc<Snap>, cx: &mut Ctx) {
        self.log.clear();
        self.log_start = snap.index + 1;
        self.snap = snap.clone();
        self.commit_index = self.commit_index.max(snap.index);
        self.last_applied = snap.index;
        self.log_synced = snap.index;
        self.durable_end = self.log_end();
        self.pending_writes.clear();
        self.db = (*snap.db).clone();
        self.core_from_snapshot(snap, cx);
        self.applied_eid = snap.last_eid;
        self.log_last_eid = snap.last_eid;
        self.config = snap.servers;
        self.et = snap.et;
        let bytes =
            txn::framed(txn::NB_HEADER_JSON + 25 + snap.db_bytes) + txn::term_len(self.term);
        self.file_bytes = bytes;
        self.file_bytes_after_snap = bytes;
        self.applied_since_snap = 0;
        self.capture(cx, LogRec::Rewrite { snap: snap.clone() });
        let rec = match self.vote {
            Some(v) => LogRec::Vote {
                term: self.term,
                vote: v,
            },
            None => LogRec::Term { term: self.term },
        };
        self.capture(cx, rec);
        self.written(cx, RecordKind::Header, bytes, bytes);
        if self.joining && snap.servers & bit(self.id) != 0 {
            self.joining = false;
            self.join_deadline = None;
            cx.out.push(Out::Joined { server: self.id });
        }
    }
}
