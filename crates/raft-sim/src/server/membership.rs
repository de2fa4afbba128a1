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

#[cfg(test)]
mod tests {
    use super::super::testkit::{show, World};
    use super::super::{Life, Msg, Server};

    #[test]
    fn a_joiner_asks_every_remote_to_add_it_and_asks_again_after_join_retry() {
        let mut w = World::main();
        let mut s = Server::new_joiner(3, 0b111, &w.k, 0, &mut w.rng);
        let asks = [
            "send 3->0 AddServer",
            "send 3->1 AddServer",
            "send 3->2 AddServer",
        ];
        let out = w.call(0, |cx| s.iterate(cx));
        assert_eq!(show(&out), asks);
        let out = w.call(500_000, |cx| s.iterate(cx));
        assert!(out.is_empty(), "{:?}", show(&out));
        let out = w.call(w.k.join_retry, |cx| s.iterate(cx));
        assert_eq!(show(&out), asks);
        assert!(s.joining && !s.is_connected());
    }

    #[test]
    fn the_leader_adds_a_joiner_once_it_caught_up_and_answers_when_that_commits() {
        let mut w = World::main();
        // The only member, leader in term 1 with its no-op (index 2) committed.
        let mut s = w.cluster(1).remove(0);
        w.call(0, |cx| s.become_leader(cx));
        w.call(2000, |cx| {
            s.fsync_done(1, cx);
            s.iterate(cx);
        });
        assert_eq!((s.commit_index, s.config), (2, 0b1));
        // Server 1 asks to join: probed with a heartbeat at the log end.
        let out = w.call(3000, |cx| s.handle(1, Msg::AddServer, cx));
        assert_eq!(
            show(&out),
            ["send 0->1 Append { term: 1, prev_index: 2, prev_term: 1, leader_commit: 2, entries: [] }"]
        );
        // Its log is empty: it gets the snapshot, then the entries after it.
        let refused = Msg::AppendReply {
            term: 1,
            log_end: 1,
            prev_index: 2,
            n_entries: 0,
            ok: false,
        };
        let out = w.call(4000, |cx| s.handle(1, refused, cx));
        assert_eq!(
            show(&out),
            ["send 0->1 Snapshot { term: 1, index: 1, snap_term: 1 }"]
        );
        let installed = Msg::SnapshotReply {
            term: 1,
            last_index: 1,
            last_term: 1,
        };
        let out = w.call(5000, |cx| s.handle(1, installed, cx));
        assert_eq!(
            show(&out),
            [
                "send 0->1 Append { term: 1, prev_index: 1, prev_term: 1, leader_commit: 2, \
              entries: [Entry { term: 1, uid: 101, kind: Noop }] }"
            ]
        );
        assert_eq!(s.config, 0b1, "not added before it caught up");
        // Caught up: the new configuration is appended and sent.
        let caught_up = Msg::AppendReply {
            term: 1,
            log_end: 3,
            prev_index: 1,
            n_entries: 1,
            ok: true,
        };
        let out = w.call(6000, |cx| s.handle(1, caught_up, cx));
        assert_eq!(
            show(&out),
            [
                "record Entry",
                "fsync 2",
                "send 0->1 Append { term: 1, prev_index: 2, prev_term: 1, leader_commit: 2, \
                 entries: [Entry { term: 1, uid: 102, kind: Servers(3) }] }",
            ]
        );
        assert_eq!(s.config, 0b11);
        // Committed once both members of the new configuration have it.
        let has_it = Msg::AppendReply {
            term: 1,
            log_end: 4,
            prev_index: 2,
            n_entries: 1,
            ok: true,
        };
        let out = w.call(7000, |cx| s.handle(1, has_it, cx));
        assert!(out.is_empty(), "{:?}", show(&out));
        let out = w.call(8000, |cx| {
            s.fsync_done(2, cx);
            s.iterate(cx);
        });
        assert_eq!(
            show(&out),
            [
                "Commit { server: 0, index: 3, term: 1, uid: 102 }",
                "send 0->1 AddServerReply { ok: true }",
                "record Commit",
                "send 0->1 Append { term: 1, prev_index: 3, prev_term: 1, leader_commit: 3, entries: [] }",
            ]
        );
    }

    #[test]
    fn a_follower_refuses_to_remove_a_server() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
        let out = w.call(10, |cx| s.handle(2, Msg::RemoveServer { target: 2 }, cx));
        assert_eq!(
            show(&out),
            ["send 1->2 RemoveServerReply { ok: false, target: 2 }"]
        );
    }

    #[test]
    fn a_server_told_its_removal_committed_has_left() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
        let reply = Msg::RemoveServerReply {
            ok: true,
            target: 1,
        };
        let out = w.call(10, |cx| s.handle(0, reply, cx));
        assert_eq!(show(&out), ["record Note", "Left { server: 1 }"]);
        assert_eq!(s.life, Life::Left);
        // A reply naming another server changes nothing.
        let mut s = w.cluster(3).remove(1);
        let other = Msg::RemoveServerReply {
            ok: true,
            target: 2,
        };
        let out = w.call(10, |cx| s.handle(0, other, cx));
        assert!(out.is_empty() && s.life == Life::Up);
    }
}
