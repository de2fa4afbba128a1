//! An ovsdb-server relay (`ovsdb-server … relay:DB:REMOTES`, OVS ≥ 2.16),
//! sans IO: not a Raft member, just a copy of the database that a
//! `monitor_cond_since` on its source (a member or another relay) fills and
//! keeps current, and a forwarder of write transactions.
//!
//! Behaviour, per OVS 3.1 `ovsdb/relay.c` and `ovsdb/transaction-forward.c`:
//! * The relay connects to one of its remotes (`leader_only` is off, so a
//!   follower will do) and asks for every table with `monitor_cond_since`
//!   and the last transaction id it has. The source answers with the
//!   transactions after that id when its history still holds them (at most
//!   100 transactions, `ovsdb_txn_history_run`), otherwise with its whole
//!   database, which replaces the copy.
//! * A client's `transact` is queued (`txn_forward_new`) and sent to the
//!   source only while the monitor is established
//!   (`ovsdb_cs_may_send_transaction`); the client's request completes when
//!   the source's reply arrives. The source flushes monitor updates before
//!   any reply on a session (`ovsdb_jsonrpc_session_send`), so the copy
//!   already holds the write when the client hears back.
//! * When the connection to the source drops, transactions sent but not
//!   answered are cancelled (the client gets a `canceled` error,
//!   `ovsdb_txn_forward_cancel_all(db, true)`); unsent ones wait. The relay
//!   connects to the next remote in its list and asks again with its last
//!   transaction id.
//!
//! Simplifications: the copy is kept as the IDL crate's server model (the
//! same one the members use), reads and monitors of clients are served from
//! it without further cost, and a relay that has to re-download its whole
//! copy drops its own downstream relays, which then ask again.

use crate::knobs::Knobs;
use crate::rng::Rng;
use crate::server::{Life, Sid, Time};
use crate::sim::MAX_SERVERS;
use crate::txn::{self, NbState, Op, ProposalRef};
use ovsdb::StorageMode;
use std::collections::VecDeque;
use std::rc::Rc;

/// Highest number of relays a simulation may hold.
pub const MAX_RELAYS: usize = 16;
/// Transactions a source keeps for `monitor_cond_since` resumption.
pub const HISTORY: usize = 100;
/// JSON-RPC framing of one OVSDB message (method, id, params brackets).
const RPC: u64 = 60;
/// A `monitor_cond_since` request naming every Northbound table and column.
const MONITOR_REQUEST: u64 = 1_900;
/// A transact reply (one result with a UUID) or a `canceled` error.
const TRANSACT_REPLY: u64 = 70;

/// One end of a relay hop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    Member(Sid),
    Relay(usize),
}

impl Node {
    /// Dense index for the relay link table: members first, then relays.
    pub fn index(self) -> usize {
        match self {
            Node::Member(s) => s,
            Node::Relay(k) => MAX_SERVERS + k,
        }
    }
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Node::Member(s) => write!(f, "s{}", s + 1),
            Node::Relay(k) => write!(f, "r{}", k + 1),
        }
    }
}

/// A database copy as a monitor reply carries it.
#[derive(Clone, Debug)]
pub struct Copy {
    pub model: ovsdb_server::Server,
    pub db: NbState,
    pub db_bytes: u64,
    /// Id (eid) of the last transaction in it; None before the first.
    pub last_eid: Option<u64>,
}

/// OVSDB protocol messages of a relay hop.
#[derive(Clone, Debug)]
pub enum RelayMsg {
    /// `monitor_cond_since` with the last transaction id the relay has.
    Monitor {
        since: Option<u64>,
    },
    /// Its reply: a whole copy, or the transactions after `since`.
    MonitorReply {
        copy: Option<Rc<Copy>>,
        txns: Rc<Vec<(u64, ProposalRef)>>,
    },
    /// `update3`: one committed transaction.
    Update {
        eid: u64,
        txn: ProposalRef,
    },
    /// A forwarded `transact` (`bytes`: the request's JSON).
    Transact {
        id: u64,
        op: Op,
        bytes: u64,
    },
    TransactReply {
        id: u64,
        canceled: bool,
    },
}

impl RelayMsg {
    pub fn name(&self) -> &'static str {
        match self {
            RelayMsg::Monitor { .. } => "monitor_cond_since",
            RelayMsg::MonitorReply { .. } => "monitor_reply",
            RelayMsg::Update { .. } => "update3",
            RelayMsg::Transact { .. } => "transact",
            RelayMsg::TransactReply { .. } => "transact_reply",
        }
    }

    /// Approximate JSON-RPC size on the wire, bytes.
    pub fn wire_bytes(&self, storage: StorageMode) -> u64 {
        RPC + match self {
            RelayMsg::Monitor { .. } => MONITOR_REQUEST,
            RelayMsg::MonitorReply { copy, txns } => {
                copy.as_ref().map_or(0, |c| c.db_bytes)
                    + txns.iter().map(|(_, t)| t.len(storage) as u64).sum::<u64>()
            }
            RelayMsg::Update { txn, .. } => txn.len(storage) as u64,
            RelayMsg::Transact { bytes, .. } => *bytes,
            RelayMsg::TransactReply { .. } => TRANSACT_REPLY,
        }
    }
}

/// Who a forwarded transaction answers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The simulated client's request number.
    Client(usize),
    /// A downstream relay and the id it sent.
    Relay(usize, u64),
}

#[derive(Clone, Debug)]
struct Fwd {
    id: u64,
    origin: Origin,
    op: Op,
    received: Time,
}

/// What a relay asks the world to do.
#[derive(Clone, Debug)]
pub enum RelayOut {
    Send {
        from: Node,
        to: Node,
        msg: RelayMsg,
        at: Time,
    },
    /// The client's request ends (`canceled`: with the `canceled` error).
    ClientDone {
        req: usize,
        at: Time,
        canceled: bool,
    },
    /// The copy now holds the client's write (its update leaves at `at`).
    Visible { req: usize, at: Time },
    /// A client's transaction came back from the source after `latency`.
    Forwarded { latency: u64 },
    /// A transaction was applied to the copy.
    Applied { relay: usize, eid: u64 },
    /// The copy was (re)loaded: whole (`full`) or by resumption, and held
    /// transaction `last_eid` then (the poll that read the reply may apply
    /// updates behind it before the simulator sees this).
    Loaded {
        relay: usize,
        full: bool,
        last_eid: Option<u64>,
    },
    /// These downstream relays lose their connection (the copy was
    /// replaced, so their monitors cannot continue).
    DropSubscribers { subs: Vec<usize> },
    /// The copy refused a transaction.
    Refused { relay: usize, msg: String },
}

/// Per-call context: virtual time, CPU spent, knobs, RNG, outbox.
pub struct RelayCx<'a> {
    pub now: Time,
    pub cost: f64,
    pub k: &'a Knobs,
    pub rng: &'a mut Rng,
    pub out: &'a mut Vec<RelayOut>,
    pub comment_prefix: &'a str,
}

impl RelayCx<'_> {
    fn at(&self) -> Time {
        self.now + self.cost as u64
    }
    fn cpu(&mut self, bytes: u64) {
        self.cost += bytes as f64 * self.k.cpu_ns_per_byte / 1000.0;
    }
}

/// One relay server.
#[derive(Clone, Debug)]
pub struct Relay {
    pub id: usize,
    pub life: Life,
    /// Its `relay:DB:REMOTES` list, in order; the first is tried first.
    pub remotes: Vec<Node>,
    next_remote: usize,
    /// The source it is connected to (monitor requested).
    pub source: Option<Node>,
    /// The monitor reply arrived: transactions may be forwarded.
    pub monitoring: bool,
    pub copy: Option<Copy>,
    /// Whole copies loaded so far (kept across restarts).
    pub copy_gen: u64,
    /// Connections made so far (kept across restarts): a source answers
    /// on the connection a request came by, never on a later one.
    pub session: u64,
    history: VecDeque<(u64, ProposalRef)>,
    fwd_new: VecDeque<Fwd>,
    fwd_sent: Vec<Fwd>,
    next_fwd: u64,
    /// Downstream relays monitoring this one.
    pub subscribers: Vec<usize>,
    /// Downstream relays that asked before this relay had a copy.
    waiting: Vec<(usize, Option<u64>)>,
    pub inbox: VecDeque<(Node, RelayMsg)>,
    // poll loop bookkeeping (owned by the simulator)
    pub busy_until: Time,
    pub wake_at: Option<Time>,
    pub wake_gen: u64,
    /// Where in the simulator's queue its last wake-up went (a slot and a
    /// sequence number; see `Sim::push_wake`).
    pub wake_place: (usize, u64),
    pub incarnation: u64,
}

impl Relay {
    pub fn new(id: usize, remotes: Vec<Node>) -> Relay {
        Relay {
            id,
            life: Life::Up,
            remotes,
            next_remote: 0,
            source: None,
            monitoring: false,
            copy: None,
            copy_gen: 0,
            session: 0,
            history: VecDeque::new(),
            fwd_new: VecDeque::new(),
            fwd_sent: Vec::new(),
            next_fwd: 0,
            subscribers: Vec::new(),
            waiting: Vec::new(),
            inbox: VecDeque::new(),
            busy_until: 0,
            wake_at: None,
            wake_gen: 0,
            wake_place: (usize::MAX, 0),
            incarnation: 0,
        }
    }

    fn me(&self) -> Node {
        Node::Relay(self.id)
    }

    /// Transactions waiting to be sent or answered.
    pub fn pending(&self) -> usize {
        self.fwd_new.len() + self.fwd_sent.len()
    }

    /// The remote to try next: the first that `up` accepts, starting at
    /// the current position of the list (ovsdb-cs walks its remotes).
    pub fn pick_remote(&mut self, up: impl Fn(Node) -> bool) -> Option<Node> {
        let n = self.remotes.len();
        for i in 0..n {
            let r = self.remotes[(self.next_remote + i) % n];
            if up(r) {
                self.next_remote = (self.next_remote + i) % n;
                return Some(r);
            }
        }
        None
    }

    /// Connect to `to` and ask for the database since the last
    /// transaction the copy has.
    pub fn connect(&mut self, to: Node, cx: &mut RelayCx) {
        self.source = Some(to);
        self.monitoring = false;
        self.session += 1;
        let since = self.copy.as_ref().and_then(|c| c.last_eid);
        self.send(to, RelayMsg::Monitor { since }, cx);
    }

    /// The connection to the source dropped: answered-never transactions
    /// are cancelled, unsent ones wait; the next connect tries the next
    /// remote.
    pub fn source_lost(&mut self, cx: &mut RelayCx) {
        self.source = None;
        self.monitoring = false;
        if !self.remotes.is_empty() {
            self.next_remote = (self.next_remote + 1) % self.remotes.len();
        }
        for f in std::mem::take(&mut self.fwd_sent) {
            self.answer(f, true, cx);
        }
    }

    /// A downstream relay's connection dropped.
    pub fn subscriber_lost(&mut self, j: usize) {
        self.subscribers.retain(|s| *s != j);
        self.waiting.retain(|(s, _)| *s != j);
    }

    /// The process dies: everything in memory is gone. Returns the client
    /// requests it held (their connections drop).
    pub fn kill(&mut self) -> Vec<usize> {
        let held = self
            .fwd_new
            .iter()
            .chain(&self.fwd_sent)
            .filter_map(|f| match f.origin {
                Origin::Client(r) => Some(r),
                Origin::Relay(..) => None,
            })
            .collect();
        let (id, remotes) = (self.id, std::mem::take(&mut self.remotes));
        let (inc, gen, session, fwd) =
            (self.incarnation, self.copy_gen, self.session, self.next_fwd);
        *self = Relay::new(id, remotes);
        self.life = Life::Down;
        self.incarnation = inc + 1;
        self.copy_gen = gen;
        self.session = session;
        self.next_fwd = fwd;
        held
    }

    /// Started again, with an empty copy and its remotes from the top.
    pub fn restart(&mut self) {
        self.life = Life::Up;
    }

    pub fn deliver(&mut self, from: Node, msg: RelayMsg) {
        self.inbox.push_back((from, msg));
    }

    /// A transaction from the client or a downstream relay.
    pub fn request(&mut self, origin: Origin, op: Op, now: Time) {
        self.next_fwd += 1;
        self.fwd_new.push_back(Fwd {
            id: self.next_fwd,
            origin,
            op,
            received: now,
        });
    }

    fn send(&mut self, to: Node, msg: RelayMsg, cx: &mut RelayCx) {
        cx.cpu(msg.wire_bytes(cx.k.storage));
        let at = cx.at();
        cx.out.push(RelayOut::Send {
            from: self.me(),
            to,
            msg,
            at,
        });
    }

    fn answer(&mut self, f: Fwd, canceled: bool, cx: &mut RelayCx) {
        match f.origin {
            Origin::Client(req) => {
                if !canceled {
                    cx.out.push(RelayOut::Forwarded {
                        latency: cx.now.saturating_sub(f.received),
                    });
                }
                cx.out.push(RelayOut::ClientDone {
                    req,
                    at: cx.at(),
                    canceled,
                })
            }
            Origin::Relay(j, id) => {
                self.send(Node::Relay(j), RelayMsg::TransactReply { id, canceled }, cx)
            }
        }
    }

    /// One poll-loop iteration: read every message, then forward what
    /// waits (`ovsdb_relay_run`).
    pub fn iterate(&mut self, cx: &mut RelayCx) {
        if self.life != Life::Up {
            return;
        }
        cx.cost += cx.k.loop_cost as f64;
        while let Some((from, msg)) = self.inbox.pop_front() {
            cx.cpu(msg.wire_bytes(cx.k.storage));
            self.handle(from, msg, cx);
        }
        if !self.monitoring {
            return;
        }
        let Some(src) = self.source else { return };
        while let Some(f) = self.fwd_new.pop_front() {
            let bytes = self.request_bytes(&f.op, cx);
            let msg = RelayMsg::Transact {
                id: f.id,
                op: f.op.clone(),
                bytes,
            };
            self.send(src, msg, cx);
            self.fwd_sent.push(f);
        }
    }

    /// Size of the `transact` the client sent for `op`, built the way the
    /// client builds it from what the copy holds.
    fn request_bytes(&self, op: &Op, cx: &mut RelayCx) -> u64 {
        let built = self
            .copy
            .as_ref()
            .and_then(|c| c.db.request(op, cx.comment_prefix, cx.rng).ok());
        match built {
            Some(r) => {
                let ops: u64 = r
                    .ops
                    .iter()
                    .map(|o| o.to_string_compact().len() as u64 + 1)
                    .sum();
                ops + 40
            }
            None => 300,
        }
    }

    fn handle(&mut self, from: Node, msg: RelayMsg, cx: &mut RelayCx) {
        let from_source = self.source == Some(from);
        match msg {
            RelayMsg::MonitorReply { copy, txns } if from_source => {
                let full = copy.is_some();
                if let Some(c) = copy {
                    self.copy = Some((*c).clone());
                    self.history.clear();
                    let subs = std::mem::take(&mut self.subscribers);
                    if !subs.is_empty() {
                        cx.out.push(RelayOut::DropSubscribers { subs });
                    }
                }
                self.monitoring = true;
                if full {
                    self.copy_gen += 1;
                }
                cx.out.push(RelayOut::Loaded {
                    relay: self.id,
                    full,
                    last_eid: self.copy.as_ref().and_then(|c| c.last_eid),
                });
                for (eid, t) in txns.iter() {
                    self.apply(*eid, t.clone(), cx);
                }
                for (j, since) in std::mem::take(&mut self.waiting) {
                    self.serve_monitor(j, since, cx);
                }
            }
            RelayMsg::Update { eid, txn } if from_source && self.monitoring => {
                self.apply(eid, txn, cx)
            }
            RelayMsg::TransactReply { id, canceled } if from_source => {
                if let Some(i) = self.fwd_sent.iter().position(|f| f.id == id) {
                    let f = self.fwd_sent.remove(i);
                    self.answer(f, canceled, cx);
                }
            }
            RelayMsg::Transact { id, op, .. } => {
                if let Node::Relay(j) = from {
                    self.request(Origin::Relay(j, id), op, cx.now);
                }
            }
            RelayMsg::Monitor { since } => {
                if let Node::Relay(j) = from {
                    self.subscriber_lost(j);
                    if self.monitoring {
                        self.serve_monitor(j, since, cx);
                    } else {
                        self.waiting.push((j, since));
                    }
                }
            }
            // Left over from an earlier connection.
            _ => {}
        }
    }

    fn serve_monitor(&mut self, j: usize, since: Option<u64>, cx: &mut RelayCx) {
        let Some(c) = self.copy.as_ref() else { return };
        let resume = since.and_then(|e| {
            if c.last_eid == Some(e) {
                return Some(Vec::new());
            }
            let i = self.history.iter().position(|(x, _)| *x == e)?;
            Some(self.history.iter().skip(i + 1).cloned().collect())
        });
        let msg = match resume {
            Some(txns) => RelayMsg::MonitorReply {
                copy: None,
                txns: Rc::new(txns),
            },
            None => RelayMsg::MonitorReply {
                copy: Some(Rc::new(c.clone())),
                txns: Rc::new(Vec::new()),
            },
        };
        self.subscribers.push(j);
        self.send(Node::Relay(j), msg, cx);
    }

    fn apply(&mut self, eid: u64, t: ProposalRef, cx: &mut RelayCx) {
        let Some(c) = self.copy.as_mut() else { return };
        if let Err(e) = t.replay_on(&mut c.model, &mut c.db_bytes) {
            cx.out.push(RelayOut::Refused {
                relay: self.id,
                msg: format!("relay copy refused '{}': {e}", t.op.args()),
            });
        }
        c.db.apply(&t);
        c.last_eid = Some(eid);
        self.history.push_back((eid, t.clone()));
        while self.history.len() > HISTORY {
            self.history.pop_front();
        }
        cx.out.push(RelayOut::Applied {
            relay: self.id,
            eid,
        });
        for j in self.subscribers.clone() {
            self.send(
                Node::Relay(j),
                RelayMsg::Update {
                    eid,
                    txn: t.clone(),
                },
                cx,
            );
        }
        // The client that wrote it sees it with this update (sent before
        // the reply on the same connection).
        let at = cx.at();
        for f in &self.fwd_sent {
            if let Origin::Client(req) = f.origin {
                if f.op == t.op {
                    cx.out.push(RelayOut::Visible { req, at });
                }
            }
        }
    }

    /// Names of the switches (`lsK`) in the copy, for the checks.
    pub fn switches(&self) -> Vec<u64> {
        let Some(c) = self.copy.as_ref() else {
            return Vec::new();
        };
        txn::switch_numbers(&c.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knobs::Profile;
    use crate::txn::Proposal;

    /// A committed `ls-add lsK` as a member's model makes it.
    fn ls_add(
        model: &mut ovsdb_server::Server,
        db: &NbState,
        k: u64,
        rng: &mut Rng,
    ) -> ProposalRef {
        let op = Op::LsAdd(k);
        let req = db.request(&op, "ovn-nbctl: test", rng).unwrap();
        let commit = model.prepare(&req.ops).commit.unwrap();
        Rc::new(Proposal::from_commit(
            &model.meta,
            &op,
            &req,
            &commit,
            0,
            StorageMode::Diff,
        ))
    }

    fn run(
        r: &mut Relay,
        k: &Knobs,
        rng: &mut Rng,
        f: impl FnOnce(&mut Relay, &mut RelayCx),
    ) -> Vec<RelayOut> {
        let mut out = Vec::new();
        let mut cx = RelayCx {
            now: 1_000,
            cost: 0.0,
            k,
            rng,
            out: &mut out,
            comment_prefix: "ovn-nbctl: test",
        };
        f(r, &mut cx);
        out
    }

    fn empty_copy() -> Rc<Copy> {
        Rc::new(Copy {
            model: txn::empty_model(),
            db: NbState::default(),
            db_bytes: 0,
            last_eid: None,
        })
    }

    #[test]
    fn forwards_only_once_monitoring_and_answers_the_client_on_reply() {
        let k = Knobs::for_profile(Profile::V3_1);
        let mut rng = Rng::new(1);
        let mut r = Relay::new(0, vec![Node::Member(0), Node::Member(1)]);
        let out = run(&mut r, &k, &mut rng, |r, cx| r.connect(Node::Member(0), cx));
        assert!(matches!(
            out[..],
            [RelayOut::Send {
                to: Node::Member(0),
                msg: RelayMsg::Monitor { since: None },
                ..
            }]
        ));
        // A request before the monitor reply waits.
        r.request(Origin::Client(7), Op::LsAdd(1), 1_000);
        let out = run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx));
        assert!(out.is_empty(), "{out:?}");
        r.deliver(
            Node::Member(0),
            RelayMsg::MonitorReply {
                copy: Some(empty_copy()),
                txns: Rc::new(Vec::new()),
            },
        );
        let out = run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx));
        let id = out
            .iter()
            .find_map(|o| match o {
                RelayOut::Send {
                    to: Node::Member(0),
                    msg: RelayMsg::Transact { id, op, bytes },
                    ..
                } => {
                    assert_eq!(*op, Op::LsAdd(1));
                    assert!(*bytes > 100, "{bytes}");
                    Some(*id)
                }
                _ => None,
            })
            .expect("transact forwarded");
        assert_eq!(r.pending(), 1);
        // A reply from another node is not the source's: ignored.
        r.deliver(
            Node::Member(1),
            RelayMsg::TransactReply {
                id,
                canceled: false,
            },
        );
        assert!(run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx))
            .iter()
            .all(|o| !matches!(o, RelayOut::ClientDone { .. })));
        r.deliver(
            Node::Member(0),
            RelayMsg::TransactReply {
                id,
                canceled: false,
            },
        );
        let out = run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx));
        assert!(out.iter().any(|o| matches!(
            o,
            RelayOut::ClientDone {
                req: 7,
                canceled: false,
                ..
            }
        )));
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn a_lost_source_cancels_sent_transactions_and_moves_to_the_next_remote() {
        let k = Knobs::for_profile(Profile::V3_1);
        let mut rng = Rng::new(1);
        let mut r = Relay::new(0, vec![Node::Member(0), Node::Member(1)]);
        run(&mut r, &k, &mut rng, |r, cx| r.connect(Node::Member(0), cx));
        r.deliver(
            Node::Member(0),
            RelayMsg::MonitorReply {
                copy: Some(empty_copy()),
                txns: Rc::new(Vec::new()),
            },
        );
        r.request(Origin::Client(3), Op::LsAdd(1), 1_000);
        run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx));
        let out = run(&mut r, &k, &mut rng, |r, cx| r.source_lost(cx));
        assert!(out.iter().any(|o| matches!(
            o,
            RelayOut::ClientDone {
                req: 3,
                canceled: true,
                ..
            }
        )));
        assert!(!r.monitoring);
        assert_eq!(r.pick_remote(|_| true), Some(Node::Member(1)));
        assert_eq!(
            r.pick_remote(|n| n == Node::Member(0)),
            Some(Node::Member(0))
        );
        assert_eq!(r.pick_remote(|_| false), None);
    }

    #[test]
    fn updates_fill_the_copy_reach_downstream_relays_and_resume_from_history() {
        let k = Knobs::for_profile(Profile::V3_1);
        let mut rng = Rng::new(1);
        let mut src_model = txn::empty_model();
        let mut src_db = NbState::default();
        let mut r = Relay::new(0, vec![Node::Member(0)]);
        run(&mut r, &k, &mut rng, |r, cx| r.connect(Node::Member(0), cx));
        r.deliver(
            Node::Member(0),
            RelayMsg::MonitorReply {
                copy: Some(empty_copy()),
                txns: Rc::new(Vec::new()),
            },
        );
        // r2 monitors r1.
        r.deliver(Node::Relay(1), RelayMsg::Monitor { since: None });
        run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx));
        assert_eq!(r.subscribers, vec![1]);
        r.request(Origin::Client(0), Op::LsAdd(1), 1_000);
        run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx));
        let mut eids = Vec::new();
        for n in 1..=3 {
            let t = ls_add(&mut src_model, &src_db, n, &mut rng);
            src_model.apply_record(&t.record().unwrap()).unwrap();
            src_db.apply(&t);
            r.deliver(
                Node::Member(0),
                RelayMsg::Update {
                    eid: 10 + n,
                    txn: t,
                },
            );
            eids.push(10 + n);
            let out = run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx));
            assert!(out.iter().any(|o| matches!(
                o,
                RelayOut::Send {
                    to: Node::Relay(1),
                    msg: RelayMsg::Update { .. },
                    ..
                }
            )));
            // Only the client's own write is "visible" to it.
            let visible = out
                .iter()
                .any(|o| matches!(o, RelayOut::Visible { req: 0, .. }));
            assert_eq!(visible, n == 1, "{n}");
        }
        assert_eq!(r.switches().len(), 3);
        assert_eq!(r.copy.as_ref().unwrap().last_eid, Some(13));
        // A downstream relay that has eid 11 gets 12 and 13 only.
        r.deliver(Node::Relay(1), RelayMsg::Monitor { since: Some(11) });
        let out = run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx));
        let got: Vec<u64> = out
            .iter()
            .find_map(|o| match o {
                RelayOut::Send {
                    msg: RelayMsg::MonitorReply { copy: None, txns },
                    ..
                } => Some(txns.iter().map(|(e, _)| *e).collect()),
                _ => None,
            })
            .expect("resumed reply");
        assert_eq!(got, vec![12, 13]);
        // An unknown id gets the whole copy.
        r.deliver(Node::Relay(1), RelayMsg::Monitor { since: Some(99) });
        let out = run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx));
        assert!(out.iter().any(|o| matches!(
            o,
            RelayOut::Send {
                msg: RelayMsg::MonitorReply { copy: Some(_), .. },
                ..
            }
        )));
    }

    #[test]
    fn a_copy_and_an_update_read_in_one_poll_report_the_copy_as_it_came() {
        let k = Knobs::for_profile(Profile::V3_1);
        let mut rng = Rng::new(1);
        let mut src_model = txn::empty_model();
        let src_db = NbState::default();
        let mut r = Relay::new(0, vec![Node::Member(0)]);
        run(&mut r, &k, &mut rng, |r, cx| r.connect(Node::Member(0), cx));
        let copy = Copy {
            last_eid: Some(5),
            ..(*empty_copy()).clone()
        };
        r.deliver(
            Node::Member(0),
            RelayMsg::MonitorReply {
                copy: Some(Rc::new(copy)),
                txns: Rc::new(Vec::new()),
            },
        );
        let t = ls_add(&mut src_model, &src_db, 1, &mut rng);
        r.deliver(Node::Member(0), RelayMsg::Update { eid: 6, txn: t });
        let out = run(&mut r, &k, &mut rng, |r, cx| r.iterate(cx));
        let seen: Vec<String> = out
            .iter()
            .filter_map(|o| match o {
                RelayOut::Loaded { last_eid, .. } => Some(format!("loaded {last_eid:?}")),
                RelayOut::Applied { eid, .. } => Some(format!("applied {eid}")),
                _ => None,
            })
            .collect();
        assert_eq!(seen, ["loaded Some(5)", "applied 6"]);
        assert_eq!(r.copy.as_ref().unwrap().last_eid, Some(6));
    }
}
