//! The simulator's side of relays (`crate::relay`): their links (the same
//! [`Link`] model as the members' links), their events, a member serving a
//! relay's monitor and forwarded transactions, faults on relays, and the
//! relay invariants. None of it runs when the run has no relays.

use super::{Ev, EventKind, Link, Sim, MAX_SERVERS};
use crate::relay::{Copy, Node, Origin, Relay, RelayCx, RelayMsg, RelayOut, MAX_RELAYS};
use crate::server::{Life, Sid, Time};
use crate::txn::ProposalRef;
use std::collections::HashMap;
use std::rc::Rc;

/// Client ids at or above this one are transactions forwarded by a relay
/// (an index into [`RelayGlue::fwds`] after subtracting it).
pub(super) const RELAY_CLIENT: usize = 1 << 30;
/// Reconnect back-off when no remote of a relay is up (reconnect.c's
/// minimum back-off).
const BACKOFF: Time = 1_000_000;
const NODES: usize = MAX_SERVERS + MAX_RELAYS;
/// Inactivity probe of a relay's connection to its source: the default of
/// OVS's reconnect FSM (`RECONNECT_DEFAULT_PROBE_INTERVAL` in
/// lib/reconnect.h; relay.c sets no other). Silent for one interval, the
/// side that hears nothing sends an echo; silent for a second one, it
/// drops the connection.
const SOURCE_PROBE: Time = 5_000_000;

/// Linux's minimum TCP retransmission timeout (`TCP_RTO_MIN`, 200 ms), and
/// the point past which this model stops doubling it.
const TCP_RTO_MIN: Time = 200_000;
const TCP_RTO_MAX: Time = 6_400_000;

/// A relay-hop message held by a cut link: TCP keeps it and delivers it
/// when the link heals, unless the connection was dropped meanwhile.
#[derive(Clone, Debug)]
pub(super) struct Stalled {
    li: usize,
    epoch: u64,
    from: Node,
    to: Node,
    msg: RelayMsg,
    bytes: u64,
}

/// Figures of the relay hops (all zero without relays).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RelayMetrics {
    pub relays: usize,
    /// Client transaction at the relay it talks to, from the request's
    /// arrival to the source's reply.
    pub forward_us: Vec<u64>,
    /// From the client's start to the moment it sees its own write in an
    /// update from the relay.
    pub visible_us: Vec<u64>,
    pub msgs: u64,
    pub bytes: u64,
    pub full_downloads: u64,
    pub resumed: u64,
    pub reconnects: u64,
    pub canceled: u64,
    /// Relay-hop messages sent again after a loss (`loss` faults).
    pub retransmits: u64,
}

/// Member-side and checker state of the relay hops.
#[derive(Clone, Debug, Default)]
pub(super) struct RelayGlue {
    /// Relays monitoring each member.
    member_subs: Vec<Vec<usize>>,
    /// Forwarded transactions a member executes: (member, relay, id,
    /// the relay's connection).
    fwds: Vec<(Sid, usize, u64, u64)>,
    /// Replies to relays a member owes after its current iteration.
    replies: Vec<(Sid, usize, u64)>,
    /// Committed data entries: eid -> log index, and index -> eid.
    eid_index: HashMap<u64, u64>,
    index_eid: Vec<u64>,
    /// Per relay: log index of the last transaction its copy holds.
    relay_index: Vec<u64>,
    /// Messages held by cut relay hops, in the order they were sent.
    stalled: Vec<Stalled>,
}

impl Sim {
    pub(super) fn relays_init(&mut self) {
        let n = self.knobs.relays.min(MAX_RELAYS);
        if n == 0 {
            return;
        }
        let members = self.servers.len();
        self.relay_links = vec![Link::default(); NODES * NODES];
        self.glue.member_subs = vec![Vec::new(); MAX_SERVERS];
        self.glue.relay_index = vec![0; n];
        self.metrics.relay.relays = n;
        for k in 0..n {
            let remotes = if self.knobs.relay_chain && k > 0 {
                vec![Node::Relay(k - 1)]
            } else {
                // Every member, starting at k's round-robin pick.
                (0..members)
                    .map(|i| Node::Member((k + i) % members))
                    .collect()
            };
            self.relays.push(Relay::new(k, remotes));
            let inc = 0;
            self.push(0, Ev::RelayConnect { relay: k, inc });
        }
    }

    fn node_up(&self, n: Node) -> bool {
        match n {
            Node::Member(s) => self.servers.get(s).is_some_and(|x| x.life == Life::Up),
            Node::Relay(k) => self.relays.get(k).is_some_and(|x| x.life == Life::Up),
        }
    }

    fn with_relay<F: FnOnce(&mut Relay, &mut RelayCx)>(&mut self, k: usize, f: F) -> f64 {
        let mut out = Vec::new();
        let cost = {
            let mut cx = RelayCx {
                now: self.now,
                cost: 0.0,
                k: &self.knobs,
                rng: &mut self.rng,
                out: &mut out,
                comment_prefix: &self.scenario.workload.comment_prefix,
            };
            f(&mut self.relays[k], &mut cx);
            cx.cost
        };
        for o in out {
            self.relay_out(o);
        }
        cost
    }

    pub(super) fn relay_wake_at(&mut self, k: usize, t: Time) {
        let now = self.now;
        let r = &mut self.relays[k];
        if r.life != Life::Up {
            return;
        }
        let t = t.max(now).max(r.busy_until);
        if r.wake_at.is_some_and(|w| w <= t) {
            return;
        }
        r.wake_gen += 1;
        r.wake_at = Some(t);
        let (gen, previous) = (r.wake_gen, r.wake_place);
        self.relays[k].wake_place = self.push_wake(previous, t, Ev::RelayWake { relay: k, gen });
    }

    pub(super) fn relay_wake(&mut self, k: usize, gen: u64) {
        let r = &mut self.relays[k];
        if r.wake_gen != gen || r.life != Life::Up {
            return;
        }
        r.wake_at = None;
        if self.now < r.busy_until {
            let t = r.busy_until;
            self.relay_wake_at(k, t);
            return;
        }
        self.hash.add(0x5E00 ^ k as u64);
        let cost = self.with_relay(k, |r, cx| r.iterate(cx));
        let r = &mut self.relays[k];
        r.busy_until = self.now + cost as u64;
        if !r.inbox.is_empty() {
            let t = r.busy_until;
            self.relay_wake_at(k, t);
        }
    }

    pub(super) fn relay_connect(&mut self, k: usize, inc: u64) {
        if self.relays[k].life != Life::Up || self.relays[k].incarnation != inc {
            return;
        }
        let up: Vec<bool> = self.relays[k]
            .remotes
            .iter()
            .map(|n| self.node_up(*n) && self.hop_open(Node::Relay(k), *n))
            .collect();
        let remotes = self.relays[k].remotes.clone();
        let pick = self.relays[k]
            .pick_remote(|n| remotes.iter().position(|x| *x == n).is_some_and(|i| up[i]));
        match pick {
            Some(to) => {
                self.with_relay(k, |r, cx| r.connect(to, cx));
                self.relay_wake_at(k, self.now);
            }
            None => self.push(self.now + BACKOFF, Ev::RelayConnect { relay: k, inc }),
        }
    }

    /// Relay `k`'s connection to its source dropped.
    fn relay_source_lost(&mut self, k: usize) {
        if self.relays[k].life != Life::Up || self.relays[k].source.is_none() {
            return;
        }
        let (src, inc) = (self.relays[k].source, self.relays[k].incarnation);
        match src {
            Some(Node::Member(s)) => self.glue.member_subs[s].retain(|x| *x != k),
            Some(Node::Relay(j)) => self.relays[j].subscriber_lost(k),
            None => {}
        }
        if let Some(src) = src {
            self.bump_epochs(Node::Relay(k), src);
        }
        self.metrics.relay.reconnects += 1;
        self.note(EventKind::Fault {
            text: format!("r{} lost its source, reconnecting", k + 1),
        });
        self.with_relay(k, |r, cx| r.source_lost(cx));
        // With several remotes the next one is tried at once
        // (backoff-free tries); a single remote waits the back-off.
        let delay = if self.relays[k].remotes.len() > 1 {
            0
        } else {
            BACKOFF
        };
        self.push(self.now + delay, Ev::RelayConnect { relay: k, inc });
    }

    fn bump_epochs(&mut self, a: Node, b: Node) {
        for li in [a.index() * NODES + b.index(), b.index() * NODES + a.index()] {
            let l = &mut self.relay_links[li];
            l.epoch += 1;
            l.inflight = 0;
            l.inflight_bytes = 0;
        }
    }

    fn relay_out(&mut self, o: RelayOut) {
        match o {
            RelayOut::Send { from, to, msg, at } => self.relay_send(from, to, msg, at),
            RelayOut::ClientDone { req, at, canceled } => {
                if canceled {
                    // ovn-nbctl reports the error; the workload's client
                    // runs the same command again.
                    self.metrics.relay.canceled += 1;
                    let at = at + 2 * self.knobs.client_delay;
                    self.push(at, Ev::ClientArrive { req });
                } else {
                    let at = at + self.knobs.client_delay;
                    self.push(at, Ev::ClientReply { req });
                }
            }
            RelayOut::Visible { req, at } => {
                if let Some(r) = self.requests.get_mut(req) {
                    if r.seen.is_none() {
                        let t = at + self.knobs.client_delay;
                        r.seen = Some(t);
                        self.metrics
                            .relay
                            .visible_us
                            .push(t.saturating_sub(r.start));
                    }
                }
            }
            RelayOut::Forwarded { latency } => self.metrics.relay.forward_us.push(latency),
            RelayOut::Applied { relay, eid } => self.check_relay_apply(relay, eid),
            RelayOut::Loaded {
                relay,
                full,
                last_eid,
            } => {
                if self.knobs.chassis > 0 {
                    // Controllers left with no server come to it once it
                    // holds a copy.
                    self.sb_node_back(Node::Relay(relay));
                }
                if full {
                    self.metrics.relay.full_downloads += 1;
                    // The copy as the reply brought it, not as it is now:
                    // the same poll may have applied updates behind it.
                    self.glue.relay_index[relay] = last_eid
                        .and_then(|e| self.glue.eid_index.get(&e).copied())
                        .unwrap_or(0);
                } else {
                    self.metrics.relay.resumed += 1;
                }
                self.note(EventKind::Fault {
                    text: format!(
                        "r{} {} its copy",
                        relay + 1,
                        if full { "downloaded" } else { "resumed" }
                    ),
                });
            }
            RelayOut::DropSubscribers { subs } => {
                for j in subs {
                    self.relay_source_lost(j);
                }
            }
            RelayOut::Refused { relay, msg } => {
                let (seed, now) = (self.seed, self.now);
                self.checker.checks += 1;
                self.checker
                    .fail(seed, now, format!("r{}: {msg}", relay + 1));
            }
        }
    }

    /// A relay-hop message over the shared link model.
    fn relay_send(&mut self, from: Node, to: Node, msg: RelayMsg, at: Time) {
        let bytes = msg.wire_bytes(self.knobs.storage);
        self.metrics.relay.msgs += 1;
        self.metrics.relay.bytes += bytes;
        let li = from.index() * NODES + to.index();
        if self.relay_links[li].cut {
            let epoch = self.relay_links[li].epoch;
            self.glue.stalled.push(Stalled {
                li,
                epoch,
                from,
                to,
                msg,
                bytes,
            });
            return;
        }
        // Loss on a relay hop costs time, not the connection: TCP sends the
        // segment again after its retransmission timeout, doubled at each
        // further loss, and what follows waits behind it (the link is
        // FIFO).
        let mut at = at;
        if self.loss > 0.0 && self.node_up(to) {
            let mut rto = TCP_RTO_MIN;
            while self.rng.chance(self.loss) && rto < TCP_RTO_MAX {
                at += rto;
                rto *= 2;
                self.metrics.relay.retransmits += 1;
            }
        }
        self.relay_transmit(li, from, to, msg, at, bytes);
    }

    /// Puts a relay-hop message on its link.
    fn relay_transmit(
        &mut self,
        li: usize,
        from: Node,
        to: Node,
        msg: RelayMsg,
        at: Time,
        bytes: u64,
    ) {
        let lost = !self.node_up(to);
        let arrive = self.relay_links[li].arrival(&self.knobs, &mut self.rng, bytes, at);
        if self.record_events {
            self.note(EventKind::RelayMessage {
                from,
                to,
                kind: msg.name(),
                bytes,
                send: at,
                recv: arrive,
                dropped: lost,
            });
        }
        if lost {
            return;
        }
        let link = &mut self.relay_links[li];
        link.last_arrival = arrive;
        link.inflight += 1;
        link.inflight_bytes += bytes;
        let epoch = link.epoch;
        self.hash
            .add(0x5D00 ^ ((from.index() as u64) << 8 | to.index() as u64));
        self.hash.add(arrive);
        self.push(
            arrive,
            Ev::RelayDeliver {
                to,
                from,
                epoch,
                msg,
            },
        );
    }

    /// Whether the hop between `a` and `b` passes both ways.
    fn hop_open(&self, a: Node, b: Node) -> bool {
        let (x, y) = (a.index(), b.index());
        !self.relay_links[x * NODES + y].cut && !self.relay_links[y * NODES + x].cut
    }

    /// The relay whose connection to its source is the hop `a`–`b`.
    fn connection_of(&self, a: Node, b: Node) -> Option<usize> {
        [(a, b), (b, a)].into_iter().find_map(|(x, y)| match x {
            Node::Relay(k) => self
                .relays
                .get(k)
                .filter(|r| r.source == Some(y))
                .map(|_| k),
            Node::Member(_) => None,
        })
    }

    /// Cuts the relay hop a -> b (until `heal`). Messages sent over a cut
    /// hop wait (TCP holds them); a relay whose source connection is cut
    /// gives it up after two probe intervals without hearing from the
    /// other side, and connects to the next remote it can reach.
    pub(super) fn relay_link_cut(&mut self, a: Node, b: Node) {
        let (x, y) = (a.index(), b.index());
        if self.relay_links.is_empty() || x >= NODES || y >= NODES {
            return;
        }
        let l = &mut self.relay_links[x * NODES + y];
        if l.cut {
            return;
        }
        l.cut = true;
        if let Some(k) = self.connection_of(a, b) {
            let session = self.relays[k].session;
            self.push(
                self.now + 2 * SOURCE_PROBE,
                Ev::RelayProbe { relay: k, session },
            );
        }
    }

    /// Extra one-way delay on the relay hop a -> b, µs.
    pub(super) fn relay_link_delay(&mut self, a: Node, b: Node, us: Time) {
        let (x, y) = (a.index(), b.index());
        if !self.relay_links.is_empty() && x < NODES && y < NODES {
            self.relay_links[x * NODES + y].extra_delay = us;
        }
    }

    /// `heal` on the relay hops: no cuts, no extra delays; the messages
    /// the cuts held go out now, except on connections dropped meanwhile.
    pub(super) fn relay_links_heal(&mut self) {
        for l in &mut self.relay_links {
            l.cut = false;
            l.extra_delay = 0;
        }
        for m in std::mem::take(&mut self.glue.stalled) {
            if self.relay_links[m.li].epoch == m.epoch {
                self.relay_transmit(m.li, m.from, m.to, m.msg, self.now, m.bytes);
            }
        }
    }

    /// Relay `k`'s connection `session` is checked: dropped when its hop
    /// is still cut two probe intervals after the cut.
    pub(super) fn relay_probe(&mut self, k: usize, session: u64) {
        let r = &self.relays[k];
        let Some(src) = r.source else { return };
        if r.life != Life::Up || r.session != session {
            return;
        }
        if !self.hop_open(Node::Relay(k), src) {
            self.hash.add(0x5DE0 ^ k as u64);
            self.note(EventKind::Fault {
                text: format!(
                    "r{} heard nothing from {src} for two probe intervals",
                    k + 1
                ),
            });
            self.relay_source_lost(k);
        }
    }

    pub(super) fn relay_deliver(&mut self, to: Node, from: Node, epoch: u64, msg: RelayMsg) {
        let li = from.index() * NODES + to.index();
        let bytes = msg.wire_bytes(self.knobs.storage);
        let link = &mut self.relay_links[li];
        link.inflight = link.inflight.saturating_sub(1);
        link.inflight_bytes = link.inflight_bytes.saturating_sub(bytes);
        if link.epoch != epoch || !self.node_up(to) {
            return;
        }
        match (to, from) {
            (Node::Relay(k), _) => {
                self.relays[k].deliver(from, msg);
                self.relay_wake_at(k, self.now + self.knobs.wake_latency);
            }
            (Node::Member(s), Node::Relay(k)) => self.member_serves(s, k, msg, bytes),
            (Node::Member(_), Node::Member(_)) => {}
        }
    }

    /// A member reads a relay's request (its parse cost lands on the
    /// member's poll loop).
    fn member_serves(&mut self, s: Sid, k: usize, msg: RelayMsg, bytes: u64) {
        let mut cost = bytes as f64 * self.knobs.cpu_ns_per_byte / 1000.0;
        match msg {
            RelayMsg::Monitor { since } => {
                let reply = self.member_monitor_reply(s, since);
                let rb = reply.wire_bytes(self.knobs.storage);
                cost += rb as f64 * self.knobs.cpu_ns_per_byte / 1000.0;
                self.glue.member_subs[s].retain(|x| *x != k);
                self.glue.member_subs[s].push(k);
                let srv = &mut self.servers[s];
                let start = (self.now + self.knobs.wake_latency).max(srv.busy_until);
                srv.busy_until = start + cost as u64;
                let at = srv.busy_until;
                self.relay_send(Node::Member(s), Node::Relay(k), reply, at);
            }
            RelayMsg::Transact { id, op, .. } => {
                let srv = &mut self.servers[s];
                srv.busy_until = srv.busy_until.max(self.now) + cost as u64;
                let fwd = self.glue.fwds.len();
                let session = self.relays[k].session;
                self.glue.fwds.push((s, k, id, session));
                self.servers[s].client_request(RELAY_CLIENT + fwd, op);
                self.wake_at(s, self.now + self.knobs.wake_latency);
            }
            _ => {}
        }
    }

    /// What member `s` answers a `monitor_cond_since`: the transactions
    /// after `since` if its log still has them (at most the history's
    /// length), or its whole database.
    fn member_monitor_reply(&self, s: Sid, since: Option<u64>) -> RelayMsg {
        let srv = &self.servers[s];
        let mut txns: Vec<(u64, ProposalRef)> = Vec::new();
        let mut found = since.is_some() && since == Some(srv.applied_eid);
        if let (Some(e), false) = (since, found) {
            for idx in srv.log_start..=srv.last_applied {
                let Some(en) = srv.entry(idx) else { continue };
                if let crate::server::EntryKind::Data { eid, txn } = &en.kind {
                    if found {
                        txns.push((*eid, txn.clone()));
                    } else if *eid == e {
                        found = true;
                    }
                }
            }
        }
        if found && txns.len() <= crate::relay::HISTORY {
            return RelayMsg::MonitorReply {
                copy: None,
                txns: Rc::new(txns),
            };
        }
        let copy = Copy {
            model: (*srv.db).clone(),
            db: srv.client_view.clone(),
            db_bytes: srv.db_bytes,
            last_eid: Some(srv.applied_eid).filter(|e| *e != 0),
        };
        RelayMsg::MonitorReply {
            copy: Some(Rc::new(copy)),
            txns: Rc::new(Vec::new()),
        }
    }

    /// A member's `ClientDone` for a transaction a relay forwarded: the
    /// reply goes out after the member's monitor updates.
    pub(super) fn relay_reply_due(&mut self, client: usize) {
        let Some(&(s, k, id, session)) = self.glue.fwds.get(client - RELAY_CLIENT) else {
            return;
        };
        // The connection the request came by is gone: no one to answer.
        let r = &self.relays[k];
        if r.life == Life::Up && r.source == Some(Node::Member(s)) && r.session == session {
            self.glue.replies.push((s, k, id));
        }
    }

    /// After member `s` ran (`applied_before`: its last applied index
    /// before): monitor updates for what it applied, then the replies it
    /// owes, all at `at`. Returns the CPU spent serializing them.
    pub(super) fn member_flush(&mut self, s: Sid, applied_before: u64, at: Time) -> f64 {
        let mut cost = 0.0;
        let after = self.servers[s].last_applied;
        let subs = self.glue.member_subs.get(s).cloned().unwrap_or_default();
        if after > applied_before && !subs.is_empty() {
            let mut updates = Vec::new();
            let mut gap = false;
            for idx in applied_before + 1..=after {
                match self.servers[s].entry(idx) {
                    Some(e) => {
                        if let crate::server::EntryKind::Data { eid, txn } = &e.kind {
                            updates.push((*eid, txn.clone()));
                        }
                    }
                    None => gap = true,
                }
            }
            if gap {
                // A snapshot replaced the member's database: its monitors
                // start over.
                for k in subs {
                    self.relay_source_lost(k);
                }
            } else {
                for (eid, txn) in updates {
                    for &k in &subs {
                        let msg = RelayMsg::Update {
                            eid,
                            txn: txn.clone(),
                        };
                        cost += msg.wire_bytes(self.knobs.storage) as f64
                            * self.knobs.cpu_ns_per_byte
                            / 1000.0;
                        self.relay_send(Node::Member(s), Node::Relay(k), msg, at + cost as u64);
                    }
                }
            }
        }
        let replies: Vec<_> = self.glue.replies.drain(..).collect();
        for (m, k, id) in replies {
            let msg = RelayMsg::TransactReply {
                id,
                canceled: false,
            };
            cost += msg.wire_bytes(self.knobs.storage) as f64 * self.knobs.cpu_ns_per_byte / 1000.0;
            self.relay_send(Node::Member(m), Node::Relay(k), msg, at + cost as u64);
        }
        cost
    }

    /// A client request reaches relay `k`.
    pub(super) fn relay_client_arrive(&mut self, k: usize, req: usize) {
        if self.relays[k].life != Life::Up {
            // Connection refused: the client tries again shortly.
            self.push(self.now + 100_000, Ev::ClientArrive { req });
            return;
        }
        let op = self.requests[req].op.clone();
        let now = self.now;
        self.relays[k].request(Origin::Client(req), op, now);
        self.relay_wake_at(k, now + self.knobs.wake_latency);
    }

    /// Fault: relay `k` dies.
    pub(super) fn relay_kill(&mut self, k: usize) {
        if k >= self.relays.len() || self.relays[k].life != Life::Up {
            return;
        }
        if let Some(src) = self.relays[k].source {
            match src {
                Node::Member(s) => self.glue.member_subs[s].retain(|x| *x != k),
                Node::Relay(j) => self.relays[j].subscriber_lost(k),
            }
        }
        let subs = self.relays[k].subscribers.clone();
        let held = self.relays[k].kill();
        for o in 0..NODES {
            let n = if o < MAX_SERVERS {
                Node::Member(o)
            } else {
                Node::Relay(o - MAX_SERVERS)
            };
            self.bump_epochs(Node::Relay(k), n);
        }
        // Its clients' connections drop: they run the command again.
        for req in held {
            self.push(self.now + 100_000, Ev::ClientArrive { req });
        }
        for j in subs {
            self.relay_source_lost(j);
        }
    }

    /// Fault: relay `k` starts again, with an empty copy.
    pub(super) fn relay_restart(&mut self, k: usize) {
        if k >= self.relays.len() || self.relays[k].life != Life::Down {
            return;
        }
        self.relays[k].restart();
        if self.knobs.chassis > 0 {
            self.sb_history_restarts(Node::Relay(k));
        }
        self.glue.relay_index[k] = 0;
        let inc = self.relays[k].incarnation;
        self.push(self.now, Ev::RelayConnect { relay: k, inc });
    }

    /// Member `s` died: the relays it served lose their source.
    pub(super) fn relays_member_gone(&mut self, s: Sid) {
        let subs = std::mem::take(&mut self.glue.member_subs[s]);
        for k in 0..self.relays.len() {
            if subs.contains(&k) || self.relays[k].source == Some(Node::Member(s)) {
                self.relay_source_lost(k);
            }
        }
    }

    // ------------------------------------------------------------ invariants

    pub(super) fn relay_note_commit(&mut self, server: Sid, index: u64) {
        let Some(eid) = self.servers[server].entry(index).map(|e| e.eid()) else {
            return;
        };
        if eid == 0 || self.glue.eid_index.contains_key(&eid) {
            return;
        }
        self.glue.eid_index.insert(eid, index);
        let i = index as usize;
        if self.glue.index_eid.len() <= i {
            self.glue.index_eid.resize(i + 1, 0);
        }
        self.glue.index_eid[i] = eid;
    }

    /// A relay's copy takes committed transactions in commit order, none
    /// skipped.
    fn check_relay_apply(&mut self, k: usize, eid: u64) {
        self.checker.checks += 1;
        let (seed, now) = (self.seed, self.now);
        let last = self.glue.relay_index[k];
        let Some(&idx) = self.glue.eid_index.get(&eid) else {
            self.checker.fail(
                seed,
                now,
                format!(
                    "r{} applied transaction {eid}, which no member committed",
                    k + 1
                ),
            );
            return;
        };
        let lo = (last + 1) as usize;
        let hi = (idx as usize).min(self.glue.index_eid.len());
        let skipped = idx <= last || self.glue.index_eid[lo.min(hi)..hi].iter().any(|e| *e != 0);
        if skipped {
            self.checker.fail(
                seed,
                now,
                format!(
                    "r{} applied index {idx} after index {last}: out of commit order",
                    k + 1
                ),
            );
        }
        self.glue.relay_index[k] = idx;
    }

    /// Read-your-writes through a relay: every `ls-add` a running relay
    /// acknowledged since it last loaded a whole copy is in its copy. (A
    /// whole copy from a lagging follower may be older: OVS allows that.)
    pub(super) fn check_relay_copies(&mut self) {
        for k in 0..self.relays.len() {
            let r = &self.relays[k];
            if r.life != Life::Up || r.copy.is_none() {
                continue;
            }
            let have: std::collections::HashSet<u64> = r.switches().into_iter().collect();
            let missing = self.requests.iter().find_map(|q| match (&q.op, q.done) {
                (crate::txn::Op::LsAdd(n), true)
                    if q.relay == Some(k) && q.relay_gen == r.copy_gen && !have.contains(n) =>
                {
                    Some(*n)
                }
                _ => None,
            });
            self.checker.checks += 1;
            if let Some(n) = missing {
                let (seed, now) = (self.seed, self.now);
                self.checker.fail(
                    seed,
                    now,
                    format!("r{} acknowledged ls-add ls{n} but its copy lacks it", k + 1),
                );
            }
        }
    }
}

impl Sim {
    /// Log index of the last transaction relay `k`'s copy holds (0 for an
    /// empty copy or no such relay).
    pub fn relay_copy_index(&self, k: usize) -> u64 {
        self.glue.relay_index.get(k).copied().unwrap_or(0)
    }
}
