//! The deterministic discrete-event loop: virtual clock in µs, one seeded
//! RNG, network links with delay/bandwidth/FIFO, fsync threads, clients,
//! faults, invariant checks, metrics, an event list and a trace hash.
//!
//! This file holds the event queue, [`Sim`] and its stepping, and the
//! outbox of each server turned into events and metrics; beside it, one
//! concern per file: `network` (links, sending, cuts), `workload` (the
//! client's requests), `faults`, `invariants` (the safety checks),
//! `relays` and `southbound`.

use crate::knobs::{Knobs, Profile};
use crate::relay::{Node, Relay, RelayMsg};
use crate::rng::{Rng, TraceHash};
use crate::scenario::{OpSpec, Scenario, Via};
use crate::server::{Ctx, Life, LogRec, Msg, MsgKind, Out, RecordKind, Server, Sid, Time};
use crate::txn::Op;

mod faults;
mod invariants;
mod network;
mod queue;
mod relays;
mod southbound;
mod workload;
use invariants::Checker;
use network::Link;
use queue::{Place, Queue, NOWHERE};
pub use relays::RelayMetrics;
use relays::{RelayGlue, RELAY_CLIENT};
use southbound::SbGlue;
pub use southbound::SbMetrics;
use workload::{expand_ops, Request};

/// Highest number of servers a simulation may ever hold (joins included).
pub const MAX_SERVERS: usize = 16;

#[derive(Clone, Debug)]
enum Ev {
    Deliver {
        to: Sid,
        from: Sid,
        epoch: u64,
        msg: Msg,
    },
    Fsync {
        server: Sid,
        inc: u64,
        ticket: u64,
    },
    Wake {
        server: Sid,
        gen: u64,
    },
    ClientArrive {
        req: usize,
    },
    ClientReply {
        req: usize,
    },
    Fault {
        idx: usize,
    },
    OpenArrival,
    WorkloadStart,
    /// Inactivity probes gave up on every connection of `server`.
    ConnReset {
        server: Sid,
        inc: u64,
    },
    /// A relay-hop message lands (see `sim::relays`).
    RelayDeliver {
        to: Node,
        from: Node,
        epoch: u64,
        msg: RelayMsg,
    },
    RelayWake {
        relay: usize,
        gen: u64,
    },
    /// Relay `relay` (incarnation `inc`) connects to its next remote.
    RelayConnect {
        relay: usize,
        inc: u64,
    },
    /// Relay `relay`'s connection `session` to its source is checked
    /// (its hop was cut two probe intervals ago).
    RelayProbe {
        relay: usize,
        session: u64,
    },
    /// Northd's Southbound transaction holding pending ports
    /// `first..end` commits (see `sim::southbound`).
    SbCommit {
        first: usize,
        end: usize,
    },
    /// northd's loop wakes: a port's NB commit reached it, or (None) the
    /// reply to its Southbound transaction did.
    SbNorthd {
        port: Option<usize>,
    },
    /// The status rows a chassis wrote for that port's routes commit.
    SbStatus {
        port: usize,
    },
}

impl Ev {
    fn code(&self) -> u64 {
        match self {
            Ev::Deliver { .. } => 1,
            Ev::Fsync { .. } => 2,
            Ev::Wake { .. } => 3,
            Ev::ClientArrive { .. } => 4,
            Ev::ClientReply { .. } => 5,
            Ev::Fault { .. } => 6,
            Ev::OpenArrival => 7,
            Ev::WorkloadStart => 8,
            Ev::ConnReset { .. } => 9,
            Ev::RelayDeliver { .. } => 10,
            Ev::RelayWake { .. } => 11,
            Ev::RelayConnect { .. } => 12,
            Ev::SbCommit { .. } => 13,
            Ev::SbStatus { .. } => 14,
            Ev::RelayProbe { .. } => 15,
            Ev::SbNorthd { .. } => 16,
        }
    }
}

/// A new port's binding as its chassis's controller got it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SbBinding {
    pub chassis: usize,
    pub start: Time,
    pub seen: Option<Time>,
}

/// What happened, for timelines (recorded when `record_events` is on).
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    Message {
        from: Sid,
        to: Sid,
        kind: MsgKind,
        bytes: u64,
        send: Time,
        recv: Time,
        dropped: bool,
    },
    /// A message of a relay hop (OVSDB protocol: `monitor_cond_since`,
    /// `update3`, `transact`, their replies).
    RelayMessage {
        from: Node,
        to: Node,
        kind: &'static str,
        bytes: u64,
        send: Time,
        recv: Time,
        dropped: bool,
    },
    ElectionStarted {
        server: Sid,
        term: u64,
        prevote: bool,
        transfer: bool,
    },
    BecameLeader {
        server: Sid,
        term: u64,
    },
    SteppedDown {
        server: Sid,
        term: u64,
    },
    TermChanged {
        server: Sid,
        term: u64,
    },
    Commit {
        server: Sid,
        index: u64,
    },
    ClientWrite {
        req: usize,
        server: Sid,
        start: Time,
        end: Time,
    },
    EntryWritten {
        server: Sid,
        bytes: u64,
        /// Its size in the other storage mode (full values vs diffs).
        alt_bytes: u64,
    },
    ElectionTimerChanged {
        server: Sid,
        ms: u64,
    },
    Fault {
        text: String,
    },
    Joined {
        server: Sid,
    },
    Left {
        server: Sid,
    },
    Snapshot {
        server: Sid,
        index: u64,
    },
    /// A Southbound transaction reached the controllers (`chassis > 0`):
    /// `served` of them got `bytes` in all, the last at `last`; each of
    /// `bindings` is a new port's `Port_Binding` its chassis got (NB write
    /// started at `start`, seen at `seen`; None: it had no server and gets
    /// it with its next download). northd's transaction may bind several.
    SbUpdate {
        served: u32,
        last: Time,
        bytes: u64,
        bindings: Vec<SbBinding>,
    },
    /// Controller `chassis` connected to a server and downloaded what it
    /// monitors (`bytes`), complete at `ready`.
    SbDownload {
        chassis: usize,
        ready: Time,
        bytes: u64,
    },
    /// A client's transaction ended without a log entry: refused by the
    /// client (`ovn-nbctl`), failed on the server, or changed nothing
    /// (`error` None).
    TxnRejected {
        server: Sid,
        op: String,
        error: Option<String>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct SimEvent {
    pub t: Time,
    pub kind: EventKind,
}

/// Figures of one run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metrics {
    pub sim_time_us: Time,
    pub txn_latencies_us: Vec<u64>,
    pub txn_first_start: Option<Time>,
    pub txn_last_end: Option<Time>,
    pub elections: u64,
    pub prevote_rounds: u64,
    pub max_term: u64,
    pub leaderless_us: u64,
    pub time_to_leader_us: Vec<u64>,
    pub first_leader_us: Option<Time>,
    pub log_written: u64,
    /// What `log_written` would be in the other storage mode (entries
    /// re-sized, every other record the same; snapshots excluded).
    pub log_written_alt: u64,
    pub per_server_file_bytes: Vec<u64>,
    pub per_server_written: Vec<u64>,
    pub bytes_sent: u64,
    pub msgs_sent: u64,
    pub msgs_dropped: u64,
    pub heartbeats: u64,
    pub prereq_failures: u64,
    /// Client transactions that ended without an entry (see
    /// [`EventKind::TxnRejected`]).
    pub rejected: u64,
    pub timeouts: u64,
    /// Events taken from the queue: deliveries, fsyncs, wake-ups, client
    /// and fault events. A wake-up moved to another time is one event, not
    /// two (see `queue.rs`); an event dropped on arrival (a dead server, an
    /// old connection) still counts.
    pub events: u64,
    pub fsyncs: u64,
    /// Completed fsyncs per server (each may cover several records, §1.4).
    pub per_server_fsyncs: Vec<u64>,
    /// append_replies that acknowledged entries not yet durable (a window
    /// raft.c has after log truncation; see `Server::emit`).
    pub early_acks: u64,
    /// The run hit `max_events` and stopped early.
    pub truncated: bool,
    pub violations: Vec<String>,
    /// Relay hops (empty without relays).
    pub relay: RelayMetrics,
    /// Southbound clients (empty with `chassis = 0`).
    pub sb: SbMetrics,
    /// When each leadership began (every `BecameLeader`, in order).
    pub leader_starts: Vec<Time>,
    /// Compactions per server (scheduled and forced).
    pub compactions: Vec<u64>,
    /// Compactions the snapshot scheduler started (`ovsdb_storage_should_snapshot`).
    pub scheduled_compactions: u64,
}

impl Metrics {
    pub fn txn_count(&self) -> usize {
        self.txn_latencies_us.len()
    }
    pub fn txn_total_us(&self) -> u64 {
        match (self.txn_first_start, self.txn_last_end) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        }
    }
    /// Leaderships after the first one.
    pub fn leader_changes(&self) -> usize {
        self.leader_starts.len().saturating_sub(1)
    }
    /// Gaps between consecutive leader changes (the first leadership's
    /// start excluded: it is the cluster's start, not a change), µs.
    pub fn leader_change_intervals_us(&self) -> Vec<u64> {
        let changes = self.leader_starts.get(1..).unwrap_or(&[]);
        changes.windows(2).map(|w| w[1] - w[0]).collect()
    }
    pub fn time_to_leader_mean_us(&self) -> Option<f64> {
        if self.time_to_leader_us.is_empty() {
            return None;
        }
        Some(
            self.time_to_leader_us.iter().sum::<u64>() as f64 / self.time_to_leader_us.len() as f64,
        )
    }
}

/// How many of the latest proposals keep their install memos. Members
/// apply an entry a few round trips after it is proposed; one that is
/// further behind replays the record.
const RECENT_PROPOSALS: usize = 32;

/// A whole simulated cluster. `Clone` makes a checkpoint.
#[derive(Clone, Debug)]
pub struct Sim {
    pub knobs: Knobs,
    pub scenario: Scenario,
    pub seed: u64,
    rng: Rng,
    now: Time,
    seq: u64,
    queue: Queue,
    pub servers: Vec<Server>,
    links: Vec<Link>,
    loss: f64,
    ids: u64,
    requests: Vec<Request>,
    ops: Vec<Op>,
    ops_tail: Option<(OpSpec, u64)>,
    next_op: usize,
    target: Option<Sid>,
    workload_started: bool,
    workload_done_at: Option<Time>,
    stop_at: Time,
    current_leader: Option<(Sid, u64)>,
    leaderless_since: Option<Time>,
    leaderless_initial: bool,
    checker: Checker,
    metrics: Metrics,
    hash: TraceHash,
    pub record_events: bool,
    events: Vec<SimEvent>,
    /// Capture every record each server writes (for `--write-logs`);
    /// set before the first step, or use [`Sim::capture_logs`].
    capture: bool,
    /// The one server the last step could have changed ([`Sim::stepped`]).
    stepped: Option<Sid>,
    logs: Vec<Vec<LogRec>>,
    out: Vec<Out>,
    /// The latest proposals, whose install memos members and relays still
    /// use; older ones are released (`Proposal::release`), so memory does
    /// not keep a commit per entry.
    recent_proposals: std::collections::VecDeque<crate::txn::ProposalRef>,
    date_base_ms: u64,
    /// Relay servers (`relays` knob) and the links of their hops, indexed
    /// by [`Node::index`] pairs; both empty without relays.
    pub relays: Vec<Relay>,
    relay_links: Vec<Link>,
    glue: RelayGlue,
    target_relay: Option<usize>,
    /// ovn-northd and the ovn-controllers (`chassis` knob); empty without.
    sb: SbGlue,
}

fn bit(s: Sid) -> u64 {
    1u64 << s
}

impl Sim {
    /// Build a simulation from scenario text, an optional profile name,
    /// knob overrides (`--set`) and a seed.
    pub fn from_text(
        text: &str,
        profile: Option<&str>,
        overrides: &[(String, String)],
        seed: u64,
    ) -> Result<Sim, String> {
        Sim::from_scenario(Scenario::parse(text)?, profile, overrides, seed)
    }

    /// A parsed scenario with a profile (by name) and knob overrides: the
    /// knobs are checked together (a relay named by `via` must exist).
    pub fn from_scenario(
        sc: Scenario,
        profile: Option<&str>,
        overrides: &[(String, String)],
        seed: u64,
    ) -> Result<Sim, String> {
        let p = match profile {
            Some(p) => Some(Profile::parse(p).ok_or_else(|| format!("unknown profile '{p}'"))?),
            None => None,
        };
        let k = sc.knobs(p, overrides)?;
        if let Via::Relay(r) = k.via.as_ref().unwrap_or(&sc.workload.via) {
            if *r >= k.relays {
                return Err(format!(
                    "via r{} needs relays >= {} (the run has {})",
                    r + 1,
                    r + 1,
                    k.relays
                ));
            }
        }
        Ok(Sim::new(sc, k, seed))
    }

    pub fn new(scenario: Scenario, knobs: Knobs, seed: u64) -> Sim {
        let mut rng = Rng::new(seed);
        let n = knobs.servers.clamp(1, MAX_SERVERS);
        let config: u64 = (0..n).fold(0, |m, i| m | bit(i));
        let servers = (0..n)
            .map(|i| Server::new_member(i, config, &knobs, 0, &mut rng))
            .collect();
        let stop_at = scenario.until_ms * 1000;
        let ops = expand_ops(&scenario.workload.ops, knobs.n);
        let mut sim = Sim {
            knobs,
            seed,
            rng,
            now: 0,
            seq: 0,
            queue: Queue::default(),
            servers,
            links: vec![Link::default(); MAX_SERVERS * MAX_SERVERS],
            loss: 0.0,
            ids: 0,
            requests: Vec::new(),
            ops_tail: ops.1,
            ops: ops.0,
            next_op: 0,
            target: None,
            workload_started: false,
            workload_done_at: None,
            stop_at,
            current_leader: None,
            leaderless_since: Some(0),
            leaderless_initial: true,
            checker: Checker::default(),
            metrics: Metrics::default(),
            hash: TraceHash::default(),
            record_events: false,
            events: Vec::new(),
            capture: false,
            stepped: None,
            logs: Vec::new(),
            out: Vec::new(),
            recent_proposals: Default::default(),
            date_base_ms: 1_795_986_960_000,
            relays: Vec::new(),
            relay_links: Vec::new(),
            glue: RelayGlue::default(),
            target_relay: None,
            sb: SbGlue::default(),
            scenario,
        };
        sim.relays_init();
        sim.sb_init();
        for i in 0..sim.faults_len() {
            let f = &sim.scenario.faults[i];
            let at = match f.at_max {
                Some(max) if max > f.at => f.at + sim.rng.below(max - f.at),
                _ => f.at,
            };
            sim.push(at, Ev::Fault { idx: i });
        }
        if let Some(ms) = sim.scenario.workload.start_ms {
            sim.push(ms * 1000, Ev::WorkloadStart);
        }
        for i in 0..n {
            sim.schedule_wake(i);
        }
        sim
    }

    fn faults_len(&self) -> usize {
        self.scenario.faults.len()
    }

    pub fn now(&self) -> Time {
        self.now
    }
    /// The one server whose state the last [`Sim::step`] could have
    /// changed: a message delivered to it, its fsync done or its wake-up
    /// (what it sends only reaches others in later steps). `None` when the
    /// step may have changed any server (faults, clients, relays,
    /// membership, the Southbound). A recorder reads just that server.
    pub fn stepped(&self) -> Option<Sid> {
        self.stepped
    }
    pub fn trace_hash(&self) -> u64 {
        self.hash.0
    }
    pub fn events(&self) -> &[SimEvent] {
        &self.events
    }
    pub fn take_events(&mut self) -> Vec<SimEvent> {
        std::mem::take(&mut self.events)
    }
    pub fn finished(&self) -> bool {
        self.queue.is_empty() || self.now >= self.stop_at
    }
    pub fn stop_at(&self) -> Time {
        self.stop_at
    }

    fn push(&mut self, at: Time, ev: Ev) {
        self.seq += 1;
        self.queue.push(NOWHERE, at, self.seq, ev);
    }

    /// Queue a wake-up at `at`, moving the one last queued at `previous`
    /// if it still waits, rather than leaving it behind as a no-op (every
    /// other event keeps its order: the moved one takes a new sequence
    /// number, as a new push would). Returns where it waits.
    fn push_wake(&mut self, previous: Place, at: Time, ev: Ev) -> Place {
        self.seq += 1;
        self.queue.push(previous, at, self.seq, ev)
    }

    fn note(&mut self, kind: EventKind) {
        if self.record_events {
            self.events.push(SimEvent { t: self.now, kind });
        }
    }

    fn schedule_wake(&mut self, s: Sid) {
        let srv = &self.servers[s];
        let Some(d) = srv.next_deadline(&self.knobs) else {
            return;
        };
        self.wake_at(s, d);
    }

    fn wake_at(&mut self, s: Sid, t: Time) {
        let srv = &mut self.servers[s];
        if srv.life != Life::Up {
            return;
        }
        let t = t.max(self.now).max(srv.busy_until).max(srv.paused_until);
        if srv.wake_at.is_some_and(|w| w <= t) {
            return;
        }
        srv.wake_gen += 1;
        srv.wake_at = Some(t);
        let (gen, previous) = (srv.wake_gen, srv.wake_place);
        self.servers[s].wake_place = self.push_wake(previous, t, Ev::Wake { server: s, gen });
    }

    /// Process one event. Returns false when the run is over.
    pub fn step(&mut self) -> bool {
        let Some(q) = self.queue.pop() else {
            return false;
        };
        if q.at >= self.stop_at {
            self.now = self.stop_at;
            self.queue.clear();
            return false;
        }
        if self.metrics.events >= self.knobs.max_events {
            self.metrics.truncated = true;
            self.stop_at = self.now;
            self.queue.clear();
            return false;
        }
        self.now = q.at;
        self.stepped = match q.ev {
            Ev::Deliver { to, .. } => Some(to),
            Ev::Fsync { server, .. } | Ev::Wake { server, .. } => Some(server),
            _ => None,
        };
        self.metrics.events += 1;
        self.hash.add(q.at);
        self.hash.add(q.ev.code());
        match q.ev {
            Ev::Deliver {
                to,
                from,
                epoch,
                msg,
            } => {
                let li = from * MAX_SERVERS + to;
                let link = &mut self.links[li];
                link.inflight = link.inflight.saturating_sub(1);
                link.inflight_bytes = link
                    .inflight_bytes
                    .saturating_sub(msg.wire_bytes(self.knobs.storage));
                if link.epoch != epoch || self.servers[to].life != Life::Up {
                    return true;
                }
                self.hash.add(to as u64);
                self.servers[to].deliver(from, msg);
                self.wake_at(to, self.now + self.knobs.wake_latency);
            }
            Ev::Fsync {
                server,
                inc,
                ticket,
            } => {
                if self.servers[server].incarnation != inc || self.servers[server].life != Life::Up
                {
                    return true;
                }
                self.metrics.fsyncs += 1;
                if self.metrics.per_server_fsyncs.len() <= server {
                    self.metrics.per_server_fsyncs.resize(server + 1, 0);
                }
                self.metrics.per_server_fsyncs[server] += 1;
                self.with_server(server, 0.0, |s, cx| s.fsync_done(ticket, cx));
                self.wake_at(server, self.now + self.knobs.wake_latency);
            }
            Ev::Wake { server, gen } => {
                let srv = &mut self.servers[server];
                if srv.wake_gen != gen || srv.life != Life::Up {
                    return true;
                }
                srv.wake_at = None;
                if self.now < srv.busy_until.max(srv.paused_until) {
                    let t = srv.busy_until.max(srv.paused_until);
                    self.wake_at(server, t);
                    return true;
                }
                self.hash.add(server as u64);
                let cost = self.with_server(server, 0.0, |s, cx| s.iterate(cx));
                let srv = &mut self.servers[server];
                srv.busy_until = self.now + cost as u64;
                if !srv.inbox.is_empty() {
                    let t = srv.busy_until;
                    self.wake_at(server, t);
                }
            }
            Ev::ClientArrive { req } => {
                if !self.client_arrive(req) {
                    return true;
                }
            }
            Ev::ClientReply { req } => self.client_reply(req),
            Ev::Fault { idx } => self.fault(idx),
            Ev::OpenArrival => self.open_arrival(),
            Ev::WorkloadStart => self.start_workload(),
            Ev::ConnReset { server, inc } => {
                if self.servers[server].incarnation == inc && self.servers[server].life == Life::Up
                {
                    self.reset_connections(server);
                }
            }
            Ev::RelayDeliver {
                to,
                from,
                epoch,
                msg,
            } => self.relay_deliver(to, from, epoch, msg),
            Ev::RelayWake { relay, gen } => self.relay_wake(relay, gen),
            Ev::RelayConnect { relay, inc } => self.relay_connect(relay, inc),
            Ev::RelayProbe { relay, session } => self.relay_probe(relay, session),
            Ev::SbCommit { first, end } => self.sb_commit(first, end),
            Ev::SbNorthd { port } => self.sb_northd(port),
            Ev::SbStatus { port } => self.sb_status(port),
        }
        let n = self.servers.len();
        for i in 0..n {
            if self.servers[i].wake_at.is_none() {
                self.schedule_wake(i);
            }
        }
        true
    }

    /// Run until simulated time `t` (µs) or the end. Returns whether events remain.
    pub fn run_until(&mut self, t: Time) -> bool {
        while let Some(at) = self.queue.next_at() {
            if at > t {
                self.now = self.now.max(t.min(self.stop_at));
                return true;
            }
            if !self.step() {
                return false;
            }
        }
        false
    }

    /// Run to the end and return the metrics.
    pub fn run(&mut self) -> Metrics {
        while self.step() {}
        self.finish()
    }

    /// Final checks and figures (may be called at any time).
    pub fn finish(&mut self) -> Metrics {
        self.check_log_matching();
        self.check_acknowledged_writes();
        if !self.relays.is_empty() {
            self.check_relay_copies();
        }
        let mut m = self.metrics.clone();
        m.sim_time_us = self.now;
        m.per_server_file_bytes = self.servers.iter().map(|s| s.file_bytes).collect();
        m.compactions
            .resize(self.servers.len().max(m.compactions.len()), 0);
        m.max_term = self.servers.iter().map(|s| s.term).max().unwrap_or(0);
        if let Some(since) = self.leaderless_since {
            m.leaderless_us += self.now.saturating_sub(since);
        }
        m.violations = self.checker.violations.clone();
        m
    }

    /// Start capturing the records every server writes. Call before the
    /// first step (servers created later are captured from their creation).
    pub fn capture_logs(&mut self) {
        if self.capture {
            return;
        }
        self.capture = true;
        self.logs = (0..self.servers.len())
            .map(|_| vec![LogRec::Create { joining: false }, LogRec::Term { term: 1 }])
            .collect();
    }

    /// Captured records per server (see [`Sim::capture_logs`]).
    pub fn logs(&self) -> &[Vec<LogRec>] {
        &self.logs
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
    pub fn invariant_checks(&self) -> u64 {
        self.checker.checks
    }

    fn with_server<F: FnOnce(&mut Server, &mut Ctx)>(&mut self, s: Sid, cost0: f64, f: F) -> f64 {
        let mut out = std::mem::take(&mut self.out);
        let reachable = self.reachable_from(s);
        let applied_before = self.servers[s].last_applied;
        let cost = {
            let srv = &mut self.servers[s];
            let mut cx = Ctx {
                now: self.now,
                cost: cost0,
                k: &self.knobs,
                rng: &mut self.rng,
                out: &mut out,
                ids: &mut self.ids,
                disk_factor: srv.disk_factor,
                date_base_ms: self.date_base_ms,
                comment_prefix: &self.scenario.workload.comment_prefix,
                reachable,
                capture: self.capture,
            };
            f(srv, &mut cx);
            cx.cost
        };
        for o in out.drain(..) {
            self.handle_out(o);
        }
        self.out = out;
        if self.relays.is_empty() {
            return cost;
        }
        let at = self.now + cost as u64;
        cost + self.member_flush(s, applied_before, at)
    }

    /// Keep the latest proposals' install memos; release the oldest.
    /// (Out of line: most events propose nothing.)
    #[inline(never)]
    fn proposed(&mut self, txn: crate::txn::ProposalRef) {
        self.recent_proposals.push_back(txn);
        if self.recent_proposals.len() > RECENT_PROPOSALS {
            if let Some(old) = self.recent_proposals.pop_front() {
                old.release();
            }
        }
    }

    fn handle_out(&mut self, o: Out) {
        match o {
            Out::Send { from, to, msg, at } => self.send(from, to, msg, at),
            Out::FsyncDone { server, at, ticket } => {
                let inc = self.servers[server].incarnation;
                self.push(
                    at,
                    Ev::Fsync {
                        server,
                        inc,
                        ticket,
                    },
                );
            }
            Out::ClientDone {
                server: _,
                client,
                at: _,
            } if client >= RELAY_CLIENT => self.relay_reply_due(client),
            Out::ClientDone {
                server: _,
                client,
                at,
            } => {
                let at = at + self.knobs.client_delay;
                self.push(at, Ev::ClientReply { req: client });
            }
            Out::Record {
                server,
                kind,
                bytes,
                alt_bytes,
            } => {
                self.metrics.log_written += bytes;
                self.metrics.log_written_alt += alt_bytes;
                if self.metrics.per_server_written.len() <= server {
                    self.metrics.per_server_written.resize(server + 1, 0);
                }
                self.metrics.per_server_written[server] += bytes;
                if kind == RecordKind::Entry {
                    self.note(EventKind::EntryWritten {
                        server,
                        bytes,
                        alt_bytes,
                    });
                }
            }
            Out::Commit {
                server,
                index,
                term,
                uid,
            } => self.check_commit(server, index, term, uid),
            Out::Truncate {
                server,
                from_index,
                commit_index,
            } => {
                self.checker.checks += 1;
                if from_index <= commit_index {
                    let (seed, now) = (self.seed, self.now);
                    self.checker.fail(
                        seed,
                        now,
                        format!("s{} truncated its log at {from_index} below commit index {commit_index}", server + 1),
                    );
                }
            }
            Out::BecameLeader { server, term } => self.became_leader(server, term),
            Out::Proposed { txn } => self.proposed(txn),
            Out::EarlyAck { .. } => self.metrics.early_acks += 1,
            Out::TxnRejected { server, op, error } => {
                self.metrics.rejected += 1;
                self.note(EventKind::TxnRejected {
                    server,
                    op: op.args(),
                    error,
                });
            }
            Out::CoreMismatch { server, index, msg } => {
                let (seed, now) = (self.seed, self.now);
                self.checker.checks += 1;
                self.checker
                    .fail(seed, now, format!("s{} index {index}: {msg}", server + 1));
            }
            Out::Log { server, rec } => {
                if self.logs.len() <= server {
                    self.logs.resize(server + 1, Vec::new());
                }
                self.logs[server].push(rec);
            }
            Out::SteppedDown { server, term } => {
                self.note(EventKind::SteppedDown { server, term });
                self.leader_gone(server);
            }
            Out::ElectionStarted {
                server,
                term,
                prevote,
                transfer,
            } => {
                if prevote {
                    self.metrics.prevote_rounds += 1;
                } else {
                    self.metrics.elections += 1;
                }
                self.hash.add(0xE1 ^ term);
                self.note(EventKind::ElectionStarted {
                    server,
                    term,
                    prevote,
                    transfer,
                });
            }
            Out::TermChanged { server, term } => self.note(EventKind::TermChanged { server, term }),
            Out::ElectionTimerChanged { server, ms } => {
                self.note(EventKind::ElectionTimerChanged { server, ms })
            }
            Out::Joined { server } => self.note(EventKind::Joined { server }),
            Out::Left { server } => {
                self.note(EventKind::Left { server });
                self.leader_gone(server);
            }
            Out::Snapshotted {
                server,
                index,
                scheduled,
            } => {
                if self.metrics.compactions.len() <= server {
                    self.metrics.compactions.resize(server + 1, 0);
                }
                self.metrics.compactions[server] += 1;
                self.metrics.scheduled_compactions += u64::from(scheduled);
                self.note(EventKind::Snapshot { server, index })
            }
            Out::PrereqFailure { .. } => self.metrics.prereq_failures += 1,
            Out::Timeout { .. } => self.metrics.timeouts += 1,
        }
    }
}
