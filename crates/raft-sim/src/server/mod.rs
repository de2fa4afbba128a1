//! One ovsdb-server's Raft + OVSDB-trigger state machine, sans IO.
//!
//! The server never touches a clock, a socket or a disk: it is driven by the
//! simulator through [`Server::iterate`] (one poll-loop iteration, steps in the
//! profile's order, §4.8), [`Server::deliver`] (a message lands in its
//! socket buffer), [`Server::fsync_done`] (the afsync thread finished) and
//! [`Server::client_request`]. Everything it wants done — messages, fsyncs,
//! client replies, observations for tracing and invariants — goes into the
//! [`Ctx`] outbox.
//!
//! One file per concern, each adding its own `impl Server` block: `msg`
//! (the messages), `outbox` (the [`Out`] outbox, [`Ctx`], sending behind
//! durability), `disk` (records, fsyncs), `election` (terms, votes,
//! roles, transfer), `replication` (append entries, commit), `membership`
//! (join, add, remove, leave), `snapshot` (compaction, install), `db` (the
//! OVSDB layer: triggers, commands, applying to the databases) and `poll`
//! (one poll-loop iteration, dispatch, restart). This file holds the
//! [`Server`] state, its constructors and the log accessors.

mod db;
mod disk;
mod election;
mod membership;
mod msg;
mod outbox;
mod poll;
mod replication;
mod snapshot;
#[cfg(test)]
mod testkit;

pub use db::CoreHistory;
pub use disk::{LogRec, RecordKind};
pub use msg::{Msg, MsgKind, Status};
pub use outbox::{Ctx, Out};
pub use snapshot::Snap;

use crate::knobs::Knobs;
use crate::rng::Rng;
use crate::txn::{self, NbState, Op, ProposalRef};
use db::{Command, Trigger};
use membership::AddPhase;
use outbox::Waiter;
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
    /// The database (IDL crate's server model): runs proposals, installs commits.
    pub db: Box<ovsdb_server::Server>,
    /// JSON size of the database's rows in a snapshot record.
    pub db_bytes: u64,
    /// Second, independent database (`ovsdb` crate) checking sizes (`core_db` knob).
    pub check_db: Option<std::sync::Arc<ovsdb::Database>>,
    /// Data transactions applied since the last snapshot (the next
    /// [`CoreHistory`] chunk).
    core_pending: Vec<ProposalRef>,
    /// What clients know of the rows, to name them in requests.
    pub client_view: NbState,
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
    /// Where in the simulator's queue its last wake-up went (a slot and a
    /// sequence number; see `Sim::push_wake`).
    pub wake_place: (usize, u64),
    pub incarnation: u64,
    pub disk_factor: f64,
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

    pub(super) fn blank(id: Sid, snap: Rc<Snap>, k: &Knobs) -> Server {
        let check_db = if k.core_db {
            txn::shared_empty_core_db()
        } else {
            None
        };
        Server {
            db: Box::new(txn::empty_model()),
            db_bytes: 0,
            check_db,
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
            client_view: NbState::default(),
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
            wake_place: (usize::MAX, 0),
            incarnation: 0,
            disk_factor: 1.0,
        }
    }

    pub(super) fn reset_timers(&mut self, k: &Knobs, now: Time, rng: &mut Rng) {
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
    pub(super) fn n_config(&self) -> u32 {
        self.config.count_ones()
    }
    pub(super) fn majority(&self, set: u64) -> bool {
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

    pub(super) fn learned_leader(&mut self) {
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

    pub(super) fn recompute_log_last_eid(&mut self) {
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
    pub(super) fn recompute_config(&mut self) {
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
    pub(super) fn config_uncommitted(&self) -> bool {
        // Only entries above the commit index matter: scan back to it.
        let uncommitted = self.log_end().saturating_sub(self.commit_index + 1) as usize;
        self.log
            .iter()
            .rev()
            .take(uncommitted)
            .any(|e| matches!(e.kind, EntryKind::Servers(_)))
    }
}
