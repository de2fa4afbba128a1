//! Terms, votes and roles: the election timer, elections with and without
//! pre-vote, vote requests and replies, becoming leader or follower, and
//! leadership transfer (§2.7) and election timer changes.

use super::outbox::Waiter;
use super::{
    bit, members, Ctx, EntryKind, Life, LogRec, Msg, Out, Peer, RecordKind, Role, Server, Sid,
    Status, Time,
};
use crate::knobs::{Knobs, SuppressMode, TransferPolicy};
use crate::rng::Rng;
use crate::txn;

impl Server {
    pub(super) fn reset_election_timer(&mut self, k: &Knobs, now: Time, rng: &mut Rng) {
        self.election_base = now;
        let jitter = rng.below(k.election_range / 1000) * 1000;
        self.election_deadline = now + self.et + jitter;
    }

    /// The election timer expired (`cx.now` reached `election_deadline`):
    /// a leader that lost touch with its followers steps down and starts an
    /// election (`leader_stepdown`), a follower or candidate in the
    /// configuration starts one.
    pub(super) fn election_timeout(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        match self.role {
            Role::Leader => {
                if cx.k.leader_stepdown {
                    let others = self.config & !bit(self.id);
                    let replied = members(others).filter(|p| self.peers[*p].replied).count() as u32;
                    if replied >= self.n_config() / 2 {
                        for p in &mut self.peers {
                            p.replied = false;
                        }
                        self.reset_election_timer(cx.k, now, cx.rng);
                    } else {
                        self.become_follower(cx);
                        self.start_election(true, false, cx);
                    }
                } else {
                    self.election_deadline = Time::MAX / 2;
                }
            }
            _ => {
                if !self.joining && self.config & bit(self.id) != 0 {
                    self.start_election(true, false, cx);
                } else {
                    self.reset_election_timer(cx.k, now, cx.rng);
                }
            }
        }
    }

    pub(super) fn set_term(&mut self, term: u64, vote: Option<Sid>, cx: &mut Ctx) {
        self.term = term;
        self.vote = vote;
        let bytes = if vote.is_some() {
            txn::vote_len(term)
        } else {
            txn::term_len(term)
        };
        self.record(
            cx,
            if vote.is_some() {
                RecordKind::Vote
            } else {
                RecordKind::Term
            },
            bytes,
        );
        let rec = match vote {
            Some(v) => LogRec::Vote { term, vote: v },
            None => LogRec::Term { term },
        };
        self.capture(cx, rec);
        let ticket = self.request_sync(cx);
        self.waiters
            .push_back(Waiter::TermVote { ticket, term, vote });
        cx.out.push(Out::TermChanged {
            server: self.id,
            term,
        });
    }

    /// Term processing of an incoming RPC. Returns false if it must be dropped.
    pub(super) fn receive_term(&mut self, term: u64, cx: &mut Ctx) -> bool {
        if term > self.term {
            self.set_term(term, None, cx);
            self.become_follower(cx);
            true
        } else {
            term == self.term
        }
    }

    pub(super) fn become_follower(&mut self, cx: &mut Ctx) {
        self.leader = None;
        if self.role == Role::Follower {
            return;
        }
        let was_leader = self.role == Role::Leader;
        self.role = Role::Follower;
        self.reset_election_timer(cx.k, cx.now, cx.rng);
        if was_leader {
            cx.out.push(Out::SteppedDown {
                server: self.id,
                term: self.term,
            });
            self.adding.clear();
            self.removing = None;
            self.pending_et = None;
            if cx.k.fail_cmds_on_stepdown {
                let cmds = std::mem::take(&mut self.commands);
                for c in cmds {
                    if let Some(f) = c.from {
                        self.send(
                            f,
                            Msg::ExecReply {
                                eid: c.eid,
                                status: Status::LostLeadership,
                                commit_index: 0,
                            },
                            cx,
                        );
                    }
                    if c.local {
                        self.fail_trigger(c.eid);
                    }
                }
            } else {
                for c in &mut self.commands {
                    c.from = None;
                }
                self.commands.retain(|c| c.local);
            }
        }
    }

    pub(super) fn start_election(&mut self, use_prevote: bool, transfer: bool, cx: &mut Ctx) {
        if self.joining || self.life != Life::Up {
            return;
        }
        if !cx.k.complete_on_eid_commit {
            // Before 5a9b53a51 starting an election failed pending commands.
            let cmds = std::mem::take(&mut self.commands);
            for c in cmds {
                if c.local {
                    self.fail_trigger(c.eid);
                }
            }
        }
        // A timeout election (the pre-vote phase when enabled) or a transfer
        // election: disconnected if no leader was seen since the last one.
        if use_prevote || transfer {
            self.candidate_retrying = !self.had_leader;
            self.had_leader = false;
        }
        self.role = Role::Candidate;
        self.leader = None;
        self.reset_election_timer(cx.k, cx.now, cx.rng);
        self.votes = bit(self.id);
        let prevote = use_prevote && cx.k.prevote && self.n_config() > 1 && !transfer;
        let (li, lt) = (self.last_index(), self.last_term());
        if prevote {
            self.prevote_passed = false;
            cx.out.push(Out::ElectionStarted {
                server: self.id,
                term: self.term,
                prevote: true,
                transfer,
            });
            for p in members(self.config) {
                self.send(
                    p,
                    Msg::Vote {
                        term: self.term,
                        last_index: li,
                        last_term: lt,
                        transfer: false,
                        prevote: true,
                    },
                    cx,
                );
            }
        } else {
            self.prevote_passed = true;
            let t = self.term + 1;
            self.set_term(t, Some(self.id), cx);
            cx.out.push(Out::ElectionStarted {
                server: self.id,
                term: t,
                prevote: false,
                transfer,
            });
            if self.majority(self.votes) {
                self.become_leader(cx);
                return;
            }
            for p in members(self.config) {
                self.send(
                    p,
                    Msg::Vote {
                        term: t,
                        last_index: li,
                        last_term: lt,
                        transfer,
                        prevote: false,
                    },
                    cx,
                );
            }
        }
    }

    pub(super) fn become_leader(&mut self, cx: &mut Ctx) {
        self.role = Role::Leader;
        self.leader = Some(self.id);
        self.learned_leader();
        let end = self.log_end();
        for p in &mut self.peers {
            *p = Peer {
                next_index: end,
                match_index: 0,
                replied: false,
                snap_inflight: false,
            };
        }
        self.pending_et = None;
        self.reset_election_timer(cx.k, cx.now, cx.rng);
        self.record(cx, RecordKind::Leader, txn::leader_len(self.term));
        self.capture(
            cx,
            LogRec::Leader {
                term: self.term,
                leader: self.id,
            },
        );
        cx.out.push(Out::BecameLeader {
            server: self.id,
            term: self.term,
        });
        if cx.k.heartbeat_on_elect {
            self.send_heartbeats(false, cx);
        }
        self.command_initiate(EntryKind::Noop, cx);
        self.ping_deadline = cx.at() + cx.k.ping(self.et);
        self.check_commit(cx);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn handle_vote(
        &mut self,
        from: Sid,
        term: u64,
        last_index: u64,
        last_term: u64,
        transfer: bool,
        prevote: bool,
        cx: &mut Ctx,
    ) {
        let mut skip_term = false;
        if !transfer && cx.k.suppress_mode != SuppressMode::Off {
            let disruptive = match self.role {
                Role::Leader => true,
                Role::Follower => cx.now < self.election_base + self.et,
                Role::Candidate => false,
            };
            if disruptive {
                if cx.k.suppress_mode == SuppressMode::Drop || self.role == Role::Leader {
                    return;
                }
                skip_term = true;
            }
        }
        if !skip_term {
            if term > self.term {
                self.set_term(term, None, cx);
                self.become_follower(cx);
            } else if term < self.term {
                return;
            }
        }
        let up_to_date = cx.k.unsafe_vote_any_log
            || last_term > self.last_term()
            || (last_term == self.last_term() && last_index >= self.last_index());
        if prevote {
            let grant = if !cx.k.prevote_log_check && self.vote.is_some() {
                true
            } else {
                up_to_date
            };
            if grant {
                let m = Msg::VoteReply {
                    term: self.term,
                    vote: from,
                    prevote: true,
                };
                self.send(from, m, cx);
            }
            return;
        }
        if skip_term && term != self.term {
            return;
        }
        match self.vote {
            Some(v) => {
                let m = Msg::VoteReply {
                    term: self.term,
                    vote: v,
                    prevote: false,
                };
                self.send(from, m, cx);
            }
            None => {
                if !up_to_date {
                    return;
                }
                let t = self.term;
                self.set_term(t, Some(from), cx);
                self.reset_election_timer(cx.k, cx.now, cx.rng);
                let m = Msg::VoteReply {
                    term: t,
                    vote: from,
                    prevote: false,
                };
                self.send(from, m, cx);
            }
        }
    }

    /// A vote reply: pre-votes from a majority start the real election,
    /// votes from a majority make this candidate the leader.
    pub(super) fn handle_vote_reply(
        &mut self,
        from: Sid,
        term: u64,
        vote: Sid,
        prevote: bool,
        cx: &mut Ctx,
    ) {
        if !self.receive_term(term, cx) || self.role != Role::Candidate || vote != self.id {
            return;
        }
        if prevote {
            if self.prevote_passed {
                return;
            }
            self.votes |= bit(from);
            if self.majority(self.votes) {
                self.start_election(false, false, cx);
            }
        } else {
            if !self.prevote_passed {
                return;
            }
            self.votes |= bit(from);
            if self.majority(self.votes) {
                self.become_leader(cx);
            }
        }
    }

    /// The leader hands over leadership: a follower starts a transfer
    /// election at once.
    pub(super) fn handle_become_leader(&mut self, term: u64, cx: &mut Ctx) {
        if !self.receive_term(term, cx) {
            return;
        }
        if self.role == Role::Follower {
            self.start_election(false, true, cx);
        }
    }

    /// Hand leadership to another server (§2.7).
    pub fn transfer_leadership(&mut self, cx: &mut Ctx) -> bool {
        if self.role != Role::Leader {
            return false;
        }
        let others: Vec<Sid> = members(self.config & !bit(self.id)).collect();
        if others.is_empty() {
            return false;
        }
        let target = match cx.k.transfer_target_policy {
            TransferPolicy::First => others[0],
            TransferPolicy::Best => {
                let reach: Vec<Sid> = others
                    .iter()
                    .copied()
                    .filter(|p| cx.reachable & bit(*p) != 0)
                    .collect();
                let pool = if reach.is_empty() {
                    others.clone()
                } else {
                    reach
                };
                let best = pool
                    .iter()
                    .map(|p| self.peers[*p].match_index)
                    .max()
                    .unwrap_or(0);
                let cands: Vec<Sid> = pool
                    .into_iter()
                    .filter(|p| self.peers[*p].match_index == best)
                    .collect();
                cands[cx.rng.below(cands.len() as u64) as usize]
            }
        };
        self.send(target, Msg::BecomeLeader { term: self.term }, cx);
        self.record(cx, RecordKind::Note, txn::note_len());
        self.capture(
            cx,
            LogRec::Note {
                note: "transfer leadership",
            },
        );
        true
    }

    /// Leader asks to change the election timer (`cluster/change-election-timer`).
    pub fn change_election_timer(&mut self, ms: u64, cx: &mut Ctx) -> Result<(), &'static str> {
        if self.role != Role::Leader {
            return Err("not leader");
        }
        if self.pending_et.is_some() {
            return Err("change pending");
        }
        let us = ms * 1000;
        if !(100_000..=600_000_000).contains(&us) || us > 2 * self.et {
            return Err("out of range");
        }
        if us == self.et {
            return Ok(());
        }
        self.pending_et = Some(us);
        self.command_initiate(EntryKind::ElectionTimer(us), cx);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{show, World};
    use super::super::{Entry, EntryKind, Msg, Role, Server};
    use crate::knobs::{Knobs, Profile};
    use std::rc::Rc;

    /// Server 0 of a fresh three-member cluster, and its world.
    fn member0(w: &mut World) -> Server {
        w.cluster(3).remove(0)
    }

    /// Server 0 after its election timer fired with pre-vote on: a candidate
    /// collecting pre-votes in term 1. Returns the time it fired.
    fn prevoting(w: &mut World, s: &mut Server) -> u64 {
        let at = s.election_deadline;
        w.call(at, |cx| s.iterate(cx));
        at
    }

    /// Server 0 took an entry at index 2 (term 1) from leader 2, at time 0.
    fn with_an_entry_from_server_2(w: &mut World, s: &mut Server) {
        let append = Msg::Append {
            term: 1,
            prev_index: 1,
            prev_term: 1,
            leader_commit: 1,
            entries: Rc::new(vec![Entry {
                term: 1,
                uid: 7,
                kind: EntryKind::Noop,
            }]),
        };
        let out = w.call(0, |cx| s.handle(2, append, cx));
        assert_eq!(show(&out), ["record Leader", "record Entry", "fsync 1"]);
        assert_eq!((s.last_index(), s.last_term()), (2, 1));
    }

    #[test]
    fn timer_with_prevote_sends_prevote_requests_and_keeps_the_term() {
        let mut w = World::main();
        let mut s = member0(&mut w);
        let at = s.election_deadline;
        let out = w.call(at, |cx| s.iterate(cx));
        let ask = "Vote { term: 1, last_index: 1, last_term: 1, transfer: false, prevote: true }";
        assert_eq!(
            show(&out),
            [
                "ElectionStarted { server: 0, term: 1, prevote: true, transfer: false }".into(),
                format!("send 0->1 {ask}"),
                format!("send 0->2 {ask}"),
            ]
        );
        assert_eq!((s.role, s.term, s.vote), (Role::Candidate, 1, None));
        assert!(s.election_deadline >= at + s.et, "timer re-armed");
        // No leader seen since the last election: "disconnected" (§2.8).
        assert!(s.candidate_retrying && !s.is_connected());
    }

    #[test]
    fn timer_without_prevote_votes_for_itself_and_asks_once_the_vote_is_durable() {
        let mut k = Knobs::for_profile(Profile::Main);
        k.prevote = false;
        let mut w = World::new(k);
        let mut s = member0(&mut w);
        let at = s.election_deadline;
        let out = w.call(at, |cx| s.iterate(cx));
        assert_eq!(
            show(&out),
            [
                "record Vote",
                "fsync 1",
                "TermChanged { server: 0, term: 2 }",
                "ElectionStarted { server: 0, term: 2, prevote: false, transfer: false }",
            ]
        );
        assert_eq!((s.role, s.term, s.vote), (Role::Candidate, 2, Some(0)));
        // The vote requests wait for the term and vote record's fsync.
        let out = w.call(at + 1000, |cx| {
            s.fsync_done(1, cx);
            s.iterate(cx);
        });
        let ask = "Vote { term: 2, last_index: 1, last_term: 1, transfer: false, prevote: false }";
        assert_eq!(
            show(&out),
            [format!("send 0->1 {ask}"), format!("send 0->2 {ask}")]
        );
    }

    #[test]
    fn a_vote_request_from_a_shorter_log_is_refused_but_its_term_is_taken() {
        let mut w = World::main();
        let mut s = member0(&mut w);
        with_an_entry_from_server_2(&mut w, &mut s);
        // Past the leader lease, so the request is not suppressed.
        let now = s.election_base + s.et;
        let vote = Msg::Vote {
            term: 2,
            last_index: 1,
            last_term: 1,
            transfer: false,
            prevote: false,
        };
        let out = w.call(now, |cx| s.handle(1, vote, cx));
        // The entry's fsync still runs: the term record waits its turn.
        assert_eq!(
            show(&out),
            ["record Term", "TermChanged { server: 0, term: 2 }"]
        );
        assert_eq!((s.term, s.vote, s.role), (2, None, Role::Follower));
    }

    #[test]
    fn a_prevote_from_a_shorter_log_gets_no_reply() {
        let mut w = World::main();
        let mut s = member0(&mut w);
        with_an_entry_from_server_2(&mut w, &mut s);
        let now = s.election_base + s.et;
        let prevote = Msg::Vote {
            term: 1,
            last_index: 1,
            last_term: 1,
            transfer: false,
            prevote: true,
        };
        let out = w.call(now, |cx| s.handle(1, prevote, cx));
        assert!(out.is_empty(), "{:?}", show(&out));
        assert_eq!((s.term, s.vote), (1, None));
    }

    #[test]
    fn a_granted_vote_is_sent_only_once_the_vote_record_is_durable() {
        let mut w = World::main();
        let mut s = member0(&mut w);
        let now = s.election_base + s.et;
        let vote = Msg::Vote {
            term: 2,
            last_index: 1,
            last_term: 1,
            transfer: false,
            prevote: false,
        };
        let out = w.call(now, |cx| s.handle(1, vote, cx));
        // The term record's fsync is running; the vote record queues a
        // second ticket behind it.
        assert_eq!(
            show(&out),
            [
                "record Term",
                "fsync 1",
                "TermChanged { server: 0, term: 2 }",
                "record Vote",
                "TermChanged { server: 0, term: 2 }",
            ]
        );
        assert_eq!((s.term, s.vote), (2, Some(1)));
        // The term is durable, the vote not yet: the reply still waits.
        let out = w.call(now + 1000, |cx| {
            s.fsync_done(1, cx);
            s.iterate(cx);
        });
        assert_eq!(show(&out), ["fsync 2"]);
        let out = w.call(now + 2000, |cx| {
            s.fsync_done(2, cx);
            s.iterate(cx);
        });
        assert_eq!(
            show(&out),
            ["send 0->1 VoteReply { term: 2, vote: 1, prevote: false }"]
        );
    }

    #[test]
    fn a_vote_request_inside_the_leader_lease_is_dropped() {
        let mut w = World::main(); // suppress_mode = drop
        let mut s = member0(&mut w);
        let now = s.election_base + s.et - 1;
        let vote = Msg::Vote {
            term: 2,
            last_index: 1,
            last_term: 1,
            transfer: false,
            prevote: false,
        };
        let out = w.call(now, |cx| s.handle(1, vote, cx));
        assert!(out.is_empty(), "{:?}", show(&out));
        assert_eq!((s.term, s.vote), (1, None));
    }

    #[test]
    fn prevotes_from_a_majority_start_the_real_election() {
        let mut w = World::main();
        let mut s = member0(&mut w);
        let at = prevoting(&mut w, &mut s);
        let granted = Msg::VoteReply {
            term: 1,
            vote: 0,
            prevote: true,
        };
        let out = w.call(at + 100, |cx| s.handle(1, granted, cx));
        assert_eq!(
            show(&out),
            [
                "record Vote",
                "fsync 1",
                "TermChanged { server: 0, term: 2 }",
                "ElectionStarted { server: 0, term: 2, prevote: false, transfer: false }",
            ]
        );
        assert_eq!((s.role, s.term, s.vote), (Role::Candidate, 2, Some(0)));
    }

    #[test]
    fn votes_from_a_majority_make_the_candidate_leader_and_it_appends_a_noop() {
        let mut w = World::main();
        let mut s = member0(&mut w);
        let at = prevoting(&mut w, &mut s);
        s.deliver(
            1,
            Msg::VoteReply {
                term: 1,
                vote: 0,
                prevote: true,
            },
        );
        w.call(at + 100, |cx| s.iterate(cx));
        let out = w.call(at + 1000, |cx| {
            s.fsync_done(1, cx);
            s.iterate(cx);
        });
        assert_eq!(out.len(), 2, "the held vote requests: {:?}", show(&out));
        s.deliver(
            2,
            Msg::VoteReply {
                term: 2,
                vote: 0,
                prevote: false,
            },
        );
        let out = w.call(at + 2000, |cx| s.iterate(cx));
        let append = "Append { term: 2, prev_index: 1, prev_term: 1, leader_commit: 1, \
                      entries: [Entry { term: 2, uid: 101, kind: Noop }] }";
        assert_eq!(
            show(&out),
            [
                "record Leader".to_string(),
                "BecameLeader { server: 0, term: 2 }".into(),
                "record Entry".into(),
                "fsync 2".into(),
                format!("send 0->1 {append}"),
                format!("send 0->2 {append}"),
            ]
        );
        assert_eq!((s.role, s.leader), (Role::Leader, Some(0)));
        assert!(s.is_connected());
    }

    #[test]
    fn become_leader_makes_a_follower_start_a_transfer_election_without_prevote() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
        let out = w.call(10, |cx| s.handle(0, Msg::BecomeLeader { term: 1 }, cx));
        assert_eq!(
            show(&out),
            [
                "record Vote",
                "fsync 1",
                "TermChanged { server: 1, term: 2 }",
                "ElectionStarted { server: 1, term: 2, prevote: false, transfer: true }",
            ]
        );
        assert_eq!((s.role, s.term, s.vote), (Role::Candidate, 2, Some(1)));
    }
}
