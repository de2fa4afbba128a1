//! The poll loop: the inputs (messages, client requests), one iteration's
//! steps in the profile's order, message dispatch to the handlers of each
//! concern, the next wake-up, and restarting after a crash.

use super::db::{TState, Trigger};
use super::{bit, Ctx, Entry, EntryKind, Life, Msg, Role, Server, Sid, Time};
use crate::knobs::Knobs;
use crate::txn::Op;

impl Server {
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

    pub(super) fn raft_run(&mut self, cx: &mut Ctx) {
        self.drain_waiters(cx);
        while let Some((from, msg)) = self.inbox.pop_front() {
            if self.life != Life::Up {
                return;
            }
            cx.cpu(msg.wire_bytes(cx.k.storage));
            self.handle(from, msg, cx);
        }
        if self.life != Life::Up {
            return;
        }
        let now = cx.now;
        if now >= self.election_deadline {
            self.election_timeout(cx);
        }
        if now >= self.ping_deadline {
            if self.role == Role::Leader {
                self.send_heartbeats(true, cx);
            } else {
                self.ping_deadline = now + cx.k.ping(self.et);
            }
            self.expire_commands(cx);
        }
        if self.join_deadline.is_some_and(|t| now >= t) {
            self.send_join_requests(cx);
        }
        if self.leave_deadline.is_some_and(|t| now >= t) {
            self.send_leave_requests(cx);
        }
        if self.role == Role::Leader {
            self.membership_step(cx);
        }
    }

    pub(super) fn handle(&mut self, from: Sid, msg: Msg, cx: &mut Ctx) {
        match msg {
            Msg::Append {
                term,
                prev_index,
                prev_term,
                leader_commit,
                entries,
            } => self.handle_append_request(
                from,
                term,
                prev_index,
                prev_term,
                leader_commit,
                &entries,
                cx,
            ),
            Msg::AppendReply {
                term,
                log_end,
                prev_index,
                n_entries,
                ok,
            } => self.handle_append_reply(from, term, log_end, prev_index, n_entries, ok, cx),
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
            } => self.handle_vote_reply(from, term, vote, prevote, cx),
            Msg::Snapshot { term, snap } => self.handle_snapshot(from, term, snap, cx),
            Msg::SnapshotReply {
                term,
                last_index,
                last_term,
            } => self.handle_snapshot_reply(from, term, last_index, last_term, cx),
            Msg::BecomeLeader { term } => self.handle_become_leader(term, cx),
            Msg::Exec { eid, prereq, txn } => self.handle_exec(from, eid, prereq, txn, cx),
            Msg::ExecReply {
                eid,
                status,
                commit_index,
            } => self.handle_exec_reply(eid, status, commit_index, cx),
            Msg::AddServer => self.handle_add_server(from, cx),
            Msg::AddServerReply { ok } => self.handle_add_server_reply(ok, cx),
            Msg::RemoveServer { target } => self.handle_remove_server(from, target, cx),
            Msg::RemoveServerReply { ok, target } => {
                self.handle_remove_server_reply(ok, target, cx)
            }
        }
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
        self.client_view = (*self.snap.db).clone();
        let snap = self.snap.clone();
        self.databases_from_snapshot(&snap, cx);
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
}
