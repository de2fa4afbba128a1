//! Cluster membership: a joiner's add-server requests, the leader adding
//! (after catch-up) and removing servers one configuration entry at a time,
//! and leaving the cluster.

use super::{
    bit, members, no_entries, Ctx, EntryKind, Life, LogRec, Msg, Out, Peer, RecordKind, Role,
    Server, Sid,
};
use crate::txn;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AddPhase {
    Catchup,
    Committing(u64),
}

impl Server {
    pub(super) fn membership_committed(&mut self, idx: u64, cx: &mut Ctx) {
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
    pub(super) fn membership_step(&mut self, cx: &mut Ctx) {
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

    pub(super) fn send_leave_requests(&mut self, cx: &mut Ctx) {
        for p in members(self.config & !bit(self.id)) {
            self.send(p, Msg::RemoveServer { target: self.id }, cx);
        }
        self.leave_deadline = Some(cx.now + self.et);
    }

    /// A joiner asks every remote to add it, again every `join_retry`.
    pub(super) fn send_join_requests(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        for p in members(self.join_targets & !bit(self.id)) {
            self.emit(p, Msg::AddServer, cx);
        }
        self.join_deadline = Some(now + cx.k.join_retry);
    }

    pub(super) fn handle_add_server(&mut self, from: Sid, cx: &mut Ctx) {
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

    /// The leader added this joiner.
    pub(super) fn handle_add_server_reply(&mut self, ok: bool, cx: &mut Ctx) {
        if ok && self.joining {
            self.joining = false;
            self.join_deadline = None;
            cx.out.push(Out::Joined { server: self.id });
        }
    }

    /// A server asks the leader to remove `target` (itself, when leaving).
    pub(super) fn handle_remove_server(&mut self, from: Sid, target: Sid, cx: &mut Ctx) {
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

    /// The removal of `target` is committed: if that is this server, it
    /// has left.
    pub(super) fn handle_remove_server_reply(&mut self, ok: bool, target: Sid, cx: &mut Ctx) {
        if ok && target == self.id && self.life == Life::Up {
            self.record(cx, RecordKind::Note, txn::note_len());
            self.capture(cx, LogRec::Note { note: "left" });
            self.life = Life::Left;
            self.leave_deadline = None;
            cx.out.push(Out::Left { server: self.id });
        }
    }
}
