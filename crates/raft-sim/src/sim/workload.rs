//! The workload: the client's target server, its requests (closed loop or
//! open arrivals) and their replies, and the scenario's op list expanded.

use super::{Ev, EventKind, Sim};
use crate::scenario::{Count, OpSpec, Via, WorkloadKind};
use crate::server::{Life, Sid, Time};
use crate::txn::Op;

#[derive(Clone, Debug)]
pub(super) struct Request {
    pub(super) op: Op,
    pub(super) start: Time,
    pub(super) server: Sid,
    pub(super) done: bool,
    /// The relay the client talks to, if any.
    pub(super) relay: Option<usize>,
    /// When the client saw its write in an update from the relay.
    pub(super) seen: Option<Time>,
    /// The relay's copy generation when it acknowledged the write.
    pub(super) relay_gen: u64,
    /// When the request last reached a member, where it waits for the
    /// reply (a kill of that member sends it again,
    /// [`Sim::clients_reconnect`]).
    pub(super) arrived: Option<Time>,
}

impl Sim {
    pub(super) fn resolve_target(&self) -> Option<Sid> {
        match self
            .knobs
            .via
            .as_ref()
            .unwrap_or(&self.scenario.workload.via)
        {
            Via::Relay(_) => None,
            Via::Server(s) => Some(*s).filter(|s| *s < self.servers.len()),
            Via::Leader => self.current_leader.map(|(s, _)| s),
            Via::Follower => {
                let l = self.current_leader.map(|(s, _)| s);
                (0..self.servers.len()).find(|i| Some(*i) != l && self.servers[*i].life == Life::Up)
            }
        }
    }

    pub(super) fn next_op(&mut self) -> Option<Op> {
        let op = if self.next_op < self.ops.len() {
            self.ops[self.next_op].clone()
        } else {
            // A `forever` tail repeats its op kind with fresh numbers.
            let (kind, first) = self.ops_tail.as_ref()?;
            let k = first + (self.next_op - self.ops.len()) as u64;
            match kind {
                OpSpec::AclAdd(_) => Op::AclAdd(1000 + k),
                OpSpec::LspAdd(_) => Op::LspAdd(k),
                OpSpec::PodAdd(_) => Op::PodAdd(k),
                _ => Op::LsAdd(k),
            }
        };
        self.next_op += 1;
        Some(op)
    }

    pub(super) fn start_workload(&mut self) {
        self.workload_started = true;
        if self.scenario.workload.kind == WorkloadKind::None {
            return;
        }
        self.target = self.resolve_target().or(Some(0));
        if let Some(Via::Relay(k)) = self
            .knobs
            .via
            .as_ref()
            .or(Some(&self.scenario.workload.via))
        {
            self.target_relay = Some(*k).filter(|k| *k < self.relays.len());
        }
        match self.scenario.workload.kind {
            WorkloadKind::Closed => self.issue(self.now),
            WorkloadKind::Open { .. } => self.open_arrival(),
            WorkloadKind::None => {}
        }
    }

    /// Closed loop: begin the next transaction at `t` (client overhead first).
    pub(super) fn issue(&mut self, t: Time) {
        let Some(op) = self.next_op() else {
            self.workload_done_at = Some(t);
            // Stop after the settle time, but never before the last fault.
            let last_fault = self
                .scenario
                .faults
                .iter()
                .map(|f| f.at_max.unwrap_or(f.at).max(f.at))
                .max()
                .unwrap_or(0);
            self.stop_at = self
                .stop_at
                .min(t.max(last_fault) + self.scenario.settle_ms * 1000);
            return;
        };
        self.send_request(op, t);
    }

    /// The client starts `op` at `t`: it reaches its server (or relay)
    /// after the client's overhead and delay.
    fn send_request(&mut self, op: Op, t: Time) {
        let server = self.target.unwrap_or(0);
        let req = self.requests.len();
        self.requests.push(Request {
            op,
            start: t,
            server,
            done: false,
            relay: self.target_relay,
            seen: None,
            relay_gen: 0,
            arrived: None,
        });
        if self.metrics.txn_first_start.is_none() {
            self.metrics.txn_first_start = Some(t);
        }
        let at = t + self.knobs.client_overhead + self.knobs.client_delay;
        self.push(at, Ev::ClientArrive { req });
    }

    pub(super) fn open_arrival(&mut self) {
        let WorkloadKind::Open { rate } = self.scenario.workload.kind else {
            return;
        };
        let Some(op) = self.next_op() else {
            self.workload_done_at = Some(self.now);
            return;
        };
        self.send_request(op, self.now);
        let gap = self.rng.exp(1e6 / rate).max(1.0) as u64;
        self.push(self.now + gap, Ev::OpenArrival);
    }

    /// Request `req` reaches its server (or relay). A member that is down
    /// refuses the connection: the client moves on to the next remote it
    /// may use (for `via = leader`, the leader once there is one), or
    /// tries again shortly. Returns whether it reached a member (the
    /// event loop then looks at every member's wake-up).
    pub(super) fn client_arrive(&mut self, req: usize) -> bool {
        if self.requests[req].done {
            // The reply was on its way when the server died.
            return false;
        }
        if let Some(k) = self.requests[req].relay {
            self.relay_client_arrive(k, req);
            return false;
        }
        let mut s = self.requests[req].server;
        if self.servers[s].life != Life::Up {
            match self
                .resolve_target()
                .filter(|t| self.servers[*t].life == Life::Up)
            {
                Some(t) => {
                    s = t;
                    self.target = Some(t);
                    self.requests[req].server = t;
                }
                None => {
                    self.push(self.now + 100_000, Ev::ClientArrive { req });
                    return false;
                }
            }
        }
        self.requests[req].arrived = Some(self.now);
        let op = self.requests[req].op.clone();
        self.servers[s].client_request(req, op);
        self.wake_at(s, self.now + self.knobs.wake_latency);
        true
    }

    /// Member `s` died: the clients whose request waited there see the
    /// connection close (the process is gone, so at once), reconnect and
    /// run their command again, as ovn-nbctl does when its transaction
    /// comes back "try again". The new attempt starts with the client's
    /// overhead and picks its server when it arrives (`Ev::ClientArrive`).
    /// A write that the dead leader had already replicated may then commit
    /// twice or be refused as a duplicate, as it can be in real life.
    pub(super) fn clients_reconnect(&mut self, s: Sid) {
        let at = self.now + self.knobs.client_overhead + self.knobs.client_delay;
        for req in 0..self.requests.len() {
            let r = &mut self.requests[req];
            if !r.done && r.arrived.is_some() && r.relay.is_none() && r.server == s {
                r.arrived = None;
                self.push(at, Ev::ClientArrive { req });
            }
        }
    }

    pub(super) fn client_reply(&mut self, req: usize) {
        let Some(r) = self.requests.get_mut(req) else {
            return;
        };
        if r.done {
            return;
        }
        r.done = true;
        if let Some(k) = r.relay {
            r.relay_gen = self.relays[k].copy_gen;
        }
        let (start, server) = (r.start, r.server);
        let lat = self.now - start;
        self.metrics.txn_latencies_us.push(lat);
        self.metrics.txn_last_end = Some(self.now);
        self.hash.add(0xA0 ^ req as u64);
        self.note(EventKind::ClientWrite {
            req,
            server,
            start,
            end: self.now,
        });
        if self.scenario.workload.kind == WorkloadKind::Closed {
            self.issue(self.now);
        }
    }
}

/// Expand op specs into a concrete op list. Row names are numbered across
/// the whole workload (ls1, ls2, … never repeat, as OVN's name indexes
/// require). A `forever` count ends the list: the returned tail is the op
/// kind to repeat and its next number.
pub(super) fn expand_ops(specs: &[OpSpec], n: u64) -> (Vec<Op>, Option<(OpSpec, u64)>) {
    let mut ops = Vec::new();
    let mut acls = 0u64;
    let (mut ls, mut acl, mut lsp) = (0u64, 0u64, 0u64);
    let cap = 1_000_000u64;
    for s in specs {
        match s {
            OpSpec::Init => ops.push(Op::Init),
            OpSpec::PgAdd => ops.push(Op::PgAdd),
            OpSpec::PgDel => ops.push(Op::PgDel),
            OpSpec::LsAdd(c) | OpSpec::AclAdd(c) | OpSpec::LspAdd(c) | OpSpec::PodAdd(c) => {
                let k = match c {
                    Count::N => n,
                    Count::Fixed(x) => *x,
                    Count::Forever => {
                        let next = match s {
                            OpSpec::LsAdd(_) => ls,
                            OpSpec::AclAdd(_) => acl,
                            _ => lsp,
                        };
                        return (ops, Some((s.clone(), next + 1)));
                    }
                };
                for _ in 0..k.min(cap) {
                    ops.push(match s {
                        OpSpec::LsAdd(_) => {
                            ls += 1;
                            Op::LsAdd(ls)
                        }
                        OpSpec::AclAdd(_) => {
                            acls += 1;
                            acl += 1;
                            Op::AclAdd(1000 + acl)
                        }
                        OpSpec::PodAdd(_) => {
                            lsp += 1;
                            Op::PodAdd(lsp)
                        }
                        _ => {
                            lsp += 1;
                            Op::LspAdd(lsp)
                        }
                    });
                }
            }
            OpSpec::AclDelAll(b) => {
                let mut left = acls;
                while left > 0 {
                    ops.push(Op::AclDelBatch(*b));
                    left = left.saturating_sub(*b);
                }
                acls = 0;
            }
        }
    }
    (ops, None)
}
