//! The scenario's faults: whom a fault line names, and what each fault
//! does to servers, links and the disk.

use super::{bit, Ev, EventKind, Sim, MAX_SERVERS};
use crate::relay::Node;
use crate::scenario::{FaultAction, Target};
use crate::server::{Life, LogRec, Role, Server, Sid};

impl Sim {
    pub(super) fn resolve(&self, t: &Target) -> Option<Sid> {
        match t {
            Target::Relay(_) => None,
            Target::Server(s) => Some(*s).filter(|s| *s < self.servers.len()),
            Target::Leader => self
                .servers
                .iter()
                .filter(|s| s.life == Life::Up && s.role == Role::Leader)
                .max_by_key(|s| s.term)
                .map(|s| s.id),
            Target::Follower => self
                .servers
                .iter()
                .find(|s| s.life == Life::Up && s.role == Role::Follower)
                .map(|s| s.id),
        }
    }

    pub(super) fn fault(&mut self, idx: usize) {
        let f = self.scenario.faults[idx].clone();
        self.note(EventKind::Fault {
            text: f.action.to_string(),
        });
        self.hash.add(0xF0 + idx as u64);
        match f.action {
            FaultAction::Kill(Target::Relay(k)) => {
                let up = self.relays.get(k).is_some_and(|r| r.life == Life::Up);
                self.relay_kill(k);
                if up && self.knobs.chassis > 0 {
                    self.sb_node_down(Node::Relay(k));
                }
            }
            FaultAction::Restart(Target::Relay(k)) => self.relay_restart(k),
            FaultAction::Kill(t) => {
                if let Some(s) = self.resolve(&t) {
                    if self.servers[s].life == Life::Up {
                        self.servers[s].life = Life::Down;
                        self.servers[s].incarnation += 1;
                        self.servers[s].wake_at = None;
                        self.leader_gone(s);
                        // Peers see the connection drop: a snapshot in
                        // flight to s is forgotten (resent after reconnect).
                        for o in 0..self.servers.len() {
                            self.servers[o].peers[s].snap_inflight = false;
                        }
                        for o in 0..MAX_SERVERS {
                            self.links[o * MAX_SERVERS + s].epoch += 1;
                            self.links[o * MAX_SERVERS + s].inflight = 0;
                            self.links[s * MAX_SERVERS + o].epoch += 1;
                            self.links[s * MAX_SERVERS + o].inflight = 0;
                        }
                        self.clients_reconnect(s);
                        if !self.relays.is_empty() {
                            self.relays_member_gone(s);
                        }
                        if self.knobs.chassis > 0 {
                            self.sb_node_down(Node::Member(s));
                        }
                    }
                }
            }
            FaultAction::Restart(t) => {
                if let Some(s) = self.resolve(&t) {
                    if self.servers[s].life == Life::Down {
                        self.with_server(s, 0.0, |srv, cx| srv.restart(cx));
                        self.schedule_wake(s);
                        if self.knobs.chassis > 0 {
                            self.sb_history_restarts(Node::Member(s));
                            self.sb_node_back(Node::Member(s));
                        }
                    }
                }
            }
            FaultAction::Partition(a, b) => {
                for &x in &a {
                    for &y in &b {
                        self.link_cut(x, y);
                        self.link_cut(y, x);
                    }
                }
            }
            FaultAction::Cut(a, b) => self.link_cut(a, b),
            FaultAction::Heal => {
                for a in 0..MAX_SERVERS {
                    for b in 0..MAX_SERVERS {
                        self.cut(a, b, false);
                        self.links[a * MAX_SERVERS + b].extra_delay = 0;
                    }
                }
                self.relay_links_heal();
                self.loss = 0.0;
            }
            FaultAction::Loss(p) => self.loss = p,
            FaultAction::LinkDelay(a, b, us) => match (a, b) {
                (Node::Member(a), Node::Member(b)) => {
                    if a < MAX_SERVERS && b < MAX_SERVERS {
                        self.links[a * MAX_SERVERS + b].extra_delay = us;
                    }
                }
                _ => self.relay_link_delay(a, b, us),
            },
            FaultAction::Pause(t, dur) => {
                if let Some(s) = self.resolve(&t) {
                    let srv = &mut self.servers[s];
                    srv.paused_until = self.now + dur;
                    srv.wake_at = None;
                    srv.wake_gen += 1;
                    let inc = srv.incarnation;
                    self.wake_at(s, self.now + dur);
                    // Peers hear nothing from it: after one probe interval
                    // they send an echo, after a second one they drop and
                    // re-create the connection (§2.10).
                    let et = self.servers[s].et;
                    if let Some(probe) = self.knobs.probe(et) {
                        if dur > 2 * probe {
                            self.push(self.now + 2 * probe, Ev::ConnReset { server: s, inc });
                        }
                    }
                }
            }
            FaultAction::SlowDisk(t, factor) => {
                if let Some(s) = self.resolve(&t) {
                    self.servers[s].disk_factor = factor;
                }
            }
            FaultAction::Transfer => {
                if let Some(s) = self.resolve(&Target::Leader) {
                    // The leader stays leader until the target wins.
                    self.with_server(s, 0.0, |srv, cx| {
                        srv.transfer_leadership(cx);
                    });
                }
            }
            FaultAction::ElectionTimer(ms) => {
                if let Some(s) = self.resolve(&Target::Leader) {
                    self.with_server(s, 0.0, |srv, cx| {
                        let _ = srv.change_election_timer(ms, cx);
                    });
                }
            }
            FaultAction::Join(s) => {
                if s < MAX_SERVERS && s >= self.servers.len() {
                    let remotes: u64 = (0..self.servers.len()).fold(0, |m, i| m | bit(i));
                    while self.servers.len() <= s {
                        let id = self.servers.len();
                        let mut j =
                            Server::new_joiner(id, remotes, &self.knobs, self.now, &mut self.rng);
                        if id != s {
                            j.life = Life::Down;
                        }
                        if self.capture {
                            if self.logs.len() <= id {
                                self.logs.resize(id + 1, Vec::new());
                            }
                            self.logs[id].push(LogRec::Create { joining: true });
                        }
                        self.servers.push(j);
                    }
                    self.schedule_wake(s);
                }
            }
            FaultAction::Leave(t) => {
                if let Some(s) = self.resolve(&t) {
                    self.with_server(s, 0.0, |srv, cx| srv.start_leave(cx));
                }
            }
            FaultAction::Compact(t) => {
                if let Some(s) = self.resolve(&t) {
                    let cost = self.with_server(s, 0.0, |srv, cx| srv.compact(cx));
                    let srv = &mut self.servers[s];
                    srv.busy_until = srv.busy_until.max(self.now + cost as u64);
                }
            }
        }
        for i in 0..self.servers.len() {
            self.servers[i].wake_at = None;
            self.servers[i].wake_gen += 1;
            self.schedule_wake(i);
        }
    }

    /// Cuts the link a -> b (until `heal`): between members the Raft link,
    /// otherwise a relay hop.
    fn link_cut(&mut self, a: Node, b: Node) {
        match (a, b) {
            (Node::Member(x), Node::Member(y)) => {
                if x < MAX_SERVERS && y < MAX_SERVERS {
                    self.cut(x, y, true);
                }
            }
            _ => self.relay_link_cut(a, b),
        }
    }
}
