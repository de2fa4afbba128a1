//! Log replication: the leader appends entries and sends them (append
//! requests, heartbeats, catch-up), followers accept or refuse them, and
//! the commit index advances once a majority has an entry.

use super::outbox::Waiter;
use super::{
    bit, members, no_entries, Ctx, Entry, EntryKind, LogRec, Msg, Out, RecordKind, Role, Server,
    Sid, Status, Targets,
};
use crate::txn;
use std::rc::Rc;

impl Server {
    pub(super) fn command_initiate(&mut self, kind: EntryKind, cx: &mut Ctx) -> u64 {
        let idx = self.log_end();
        let uid = cx.new_id();
        let e = Entry {
            term: self.term,
            uid,
            kind,
        };
        let bytes = self.entry_record_len(&e, idx, cx.k.storage);
        let alt = self.entry_record_len(&e, idx, txn::other_mode(cx.k.storage));
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
    pub(super) fn targets(&self) -> Targets {
        let mut mask = self.config;
        for (s, _) in &self.adding {
            mask |= bit(*s);
        }
        Targets(mask & !bit(self.id))
    }

    pub(super) fn send_heartbeats(&mut self, in_progress: bool, cx: &mut Ctx) {
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

    pub(super) fn send_missing(&mut self, p: Sid, cx: &mut Ctx) {
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

    pub(super) fn check_commit(&mut self, cx: &mut Ctx) {
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

    pub(super) fn update_commit(&mut self, new: u64, cx: &mut Ctx) {
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

    /// An append request or heartbeat: refused with this server's term
    /// when it comes from an older one, else handled as its follower.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn handle_append_request(
        &mut self,
        from: Sid,
        term: u64,
        prev_index: u64,
        prev_term: u64,
        leader_commit: u64,
        entries: &[Entry],
        cx: &mut Ctx,
    ) {
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
        self.handle_append(from, prev_index, prev_term, leader_commit, entries, cx);
    }

    pub(super) fn set_leader(&mut self, from: Sid, cx: &mut Ctx) {
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

    pub(super) fn handle_append(
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
            let bytes = self.entry_record_len(e, idx, cx.k.storage);
            let alt = self.entry_record_len(e, idx, txn::other_mode(cx.k.storage));
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

    /// An append reply at the leader: advance or back off the peer's next
    /// and match index, send what it still misses, and try to commit.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn handle_append_reply(
        &mut self,
        from: Sid,
        term: u64,
        log_end: u64,
        prev_index: u64,
        n_entries: u64,
        ok: bool,
        cx: &mut Ctx,
    ) {
        if !self.receive_term(term, cx) || self.role != Role::Leader {
            return;
        }
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
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{show, World};
    use super::super::{Entry, EntryKind, Msg, Role, Server};
    use std::rc::Rc;

    fn noop(term: u64, uid: u64) -> Entry {
        Entry {
            term,
            uid,
            kind: EntryKind::Noop,
        }
    }

    fn append(term: u64, prev: (u64, u64), commit: u64, entries: Vec<Entry>) -> Msg {
        Msg::Append {
            term,
            prev_index: prev.0,
            prev_term: prev.1,
            leader_commit: commit,
            entries: Rc::new(entries),
        }
    }

    /// Server 0 of a fresh three-member cluster made leader in term 1: its
    /// no-op is entry 2 (uid 101), sent to both followers, not yet durable.
    fn leader(w: &mut World) -> Server {
        let mut s = w.cluster(3).remove(0);
        let out = w.call(0, |cx| s.become_leader(cx));
        let noop = "Append { term: 1, prev_index: 1, prev_term: 1, leader_commit: 1, \
                    entries: [Entry { term: 1, uid: 101, kind: Noop }] }";
        assert_eq!(
            show(&out),
            [
                "record Leader".to_string(),
                "BecameLeader { server: 0, term: 1 }".into(),
                "record Entry".into(),
                "fsync 1".into(),
                format!("send 0->1 {noop}"),
                format!("send 0->2 {noop}"),
            ]
        );
        s
    }

    #[test]
    fn an_append_with_a_mismatching_prev_term_is_refused_naming_the_log_end() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
        let out = w.call(10, |cx| {
            s.handle(0, append(1, (1, 2), 1, vec![noop(2, 5)]), cx)
        });
        assert_eq!(
            show(&out),
            [
                "record Leader",
                "send 1->0 AppendReply { term: 1, log_end: 2, prev_index: 1, n_entries: 1, ok: false }",
            ]
        );
        assert_eq!((s.leader, s.log_end()), (Some(0), 2));
    }

    #[test]
    fn an_append_past_the_log_end_is_refused_naming_the_log_end() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
        let out = w.call(10, |cx| s.handle(0, append(1, (5, 1), 1, vec![]), cx));
        assert_eq!(
            show(&out),
            [
                "record Leader",
                "send 1->0 AppendReply { term: 1, log_end: 2, prev_index: 5, n_entries: 0, ok: false }",
            ]
        );
    }

    #[test]
    fn an_append_from_an_older_term_is_refused_with_the_current_term() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
        w.call(0, |cx| {
            s.set_term(2, None, cx);
            s.fsync_done(1, cx);
            s.drain_waiters(cx);
        });
        let out = w.call(10, |cx| {
            s.handle(0, append(1, (1, 1), 1, vec![noop(1, 5)]), cx)
        });
        assert_eq!(
            show(&out),
            ["send 1->0 AppendReply { term: 2, log_end: 2, prev_index: 1, n_entries: 1, ok: false }"]
        );
        assert_eq!((s.leader, s.log_end()), (None, 2));
    }

    #[test]
    fn a_matching_append_is_written_committed_and_acknowledged_after_its_fsync() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
        let out = w.call(10, |cx| {
            s.handle(0, append(1, (1, 1), 2, vec![noop(1, 7)]), cx)
        });
        // The leader's commit index covers the new entry: committed at once,
        // but the reply waits for the entry to be on disk.
        assert_eq!(
            show(&out),
            [
                "record Leader",
                "record Entry",
                "fsync 1",
                "Commit { server: 1, index: 2, term: 1, uid: 7 }",
                "record Commit",
            ]
        );
        assert_eq!((s.log_end(), s.commit_index, s.log_synced), (3, 2, 1));
        let out = w.call(2000, |cx| {
            s.fsync_done(1, cx);
            s.iterate(cx);
        });
        assert_eq!(
            show(&out),
            ["send 1->0 AppendReply { term: 1, log_end: 3, prev_index: 1, n_entries: 1, ok: true }"]
        );
        assert_eq!((s.log_synced, s.last_applied), (2, 2));
    }

    #[test]
    fn an_entry_of_another_term_truncates_the_log_from_there() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
        w.call(10, |cx| {
            s.handle(0, append(1, (1, 1), 1, vec![noop(1, 7), noop(1, 8)]), cx)
        });
        let out = w.call(20, |cx| {
            s.handle(2, append(2, (2, 1), 1, vec![noop(2, 9)]), cx)
        });
        assert_eq!(
            show(&out),
            [
                "record Term",
                "TermChanged { server: 1, term: 2 }",
                "record Leader",
                "Truncate { server: 1, from_index: 3, commit_index: 1 }",
                "record Entry",
            ]
        );
        let terms: Vec<(u64, u64)> = s.log.iter().map(|e| (e.term, e.uid)).collect();
        assert_eq!(terms, [(1, 7), (2, 9)]);
    }

    #[test]
    fn the_leader_commits_once_a_majority_including_itself_has_the_entry() {
        let mut w = World::main();
        let mut s = leader(&mut w);
        let ok = Msg::AppendReply {
            term: 1,
            log_end: 3,
            prev_index: 1,
            n_entries: 1,
            ok: true,
        };
        // One follower has it, the leader's own write is not durable yet.
        let out = w.call(100, |cx| s.handle(1, ok, cx));
        assert!(out.is_empty(), "{:?}", show(&out));
        assert_eq!((s.peers[1].match_index, s.commit_index), (2, 1));
        let out = w.call(2000, |cx| {
            s.fsync_done(1, cx);
            s.iterate(cx);
        });
        let beat = "Append { term: 1, prev_index: 2, prev_term: 1, leader_commit: 2, entries: [] }";
        assert_eq!(
            show(&out),
            [
                "Commit { server: 0, index: 2, term: 1, uid: 101 }".to_string(),
                "record Commit".into(),
                format!("send 0->1 {beat}"),
                format!("send 0->2 {beat}"),
            ]
        );
        assert_eq!((s.commit_index, s.last_applied), (2, 2));
    }

    #[test]
    fn a_refused_append_backs_off_and_resends_the_missing_entries() {
        let mut w = World::main();
        let mut s = leader(&mut w);
        let refused = Msg::AppendReply {
            term: 1,
            log_end: 2,
            prev_index: 2,
            n_entries: 0,
            ok: false,
        };
        let out = w.call(100, |cx| s.handle(1, refused, cx));
        assert_eq!(
            show(&out),
            [
                "send 0->1 Append { term: 1, prev_index: 1, prev_term: 1, leader_commit: 1, \
              entries: [Entry { term: 1, uid: 101, kind: Noop }] }"
            ]
        );
        assert_eq!(s.peers[1].next_index, 3);
        assert_eq!(s.role, Role::Leader);
    }
}
