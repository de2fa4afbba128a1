//! What a server asks of the world: the [`Out`] outbox inside the per-call
//! [`Ctx`], and sending, which holds a message back until the term, vote
//! or log entries it vouches for are durable (the waiters).

use super::{LogRec, Msg, RecordKind, Role, Server, Sid, Time};
use crate::knobs::Knobs;
use crate::rng::Rng;
use crate::txn::{Op, ProposalRef};

#[derive(Clone, Debug)]
pub(super) enum Waiter {
    Entry {
        ticket: u64,
        index: u64,
    },
    TermVote {
        ticket: u64,
        term: u64,
        vote: Option<Sid>,
    },
    Rpc {
        to: Sid,
        msg: Msg,
    },
}

#[derive(Clone, Debug)]
pub enum Out {
    /// An append_reply acknowledged entries not yet durable (see `emit`).
    EarlyAck {
        server: Sid,
    },
    /// A client's transaction ended without an entry (`error` is None for
    /// a transaction that changed nothing).
    TxnRejected {
        server: Sid,
        op: Op,
        error: Option<String>,
    },
    /// A database refused a committed record, or the two databases
    /// disagree on its size.
    CoreMismatch {
        server: Sid,
        index: u64,
        msg: String,
    },
    Log {
        server: Sid,
        rec: LogRec,
    },
    /// A server made a proposal: the loop keeps the latest ones' install
    /// memos (`Sim::recent_proposals`) and releases older ones.
    Proposed {
        txn: ProposalRef,
    },
    Send {
        from: Sid,
        to: Sid,
        msg: Msg,
        at: Time,
    },
    FsyncDone {
        server: Sid,
        at: Time,
        ticket: u64,
    },
    ClientDone {
        server: Sid,
        client: usize,
        at: Time,
    },
    Record {
        server: Sid,
        kind: RecordKind,
        bytes: u64,
        /// The same record's size in the other storage mode.
        alt_bytes: u64,
    },
    Commit {
        server: Sid,
        index: u64,
        term: u64,
        uid: u64,
    },
    Truncate {
        server: Sid,
        from_index: u64,
        commit_index: u64,
    },
    BecameLeader {
        server: Sid,
        term: u64,
    },
    SteppedDown {
        server: Sid,
        term: u64,
    },
    ElectionStarted {
        server: Sid,
        term: u64,
        prevote: bool,
        transfer: bool,
    },
    TermChanged {
        server: Sid,
        term: u64,
    },
    ElectionTimerChanged {
        server: Sid,
        ms: u64,
    },
    Joined {
        server: Sid,
    },
    Left {
        server: Sid,
    },
    Snapshotted {
        server: Sid,
        index: u64,
        /// By the snapshot scheduler (not `ovsdb-server/compact`).
        scheduled: bool,
    },
    PrereqFailure {
        server: Sid,
    },
    Timeout {
        server: Sid,
    },
}

/// Per-call context: virtual time, accumulated CPU cost, knobs, RNG, outbox.
pub struct Ctx<'a> {
    pub now: Time,
    /// CPU time spent so far in this iteration (µs); sends leave at now+cost.
    pub cost: f64,
    pub k: &'a Knobs,
    pub rng: &'a mut Rng,
    pub out: &'a mut Vec<Out>,
    /// Source of globally unique ids (eids, entry uids).
    pub ids: &'a mut u64,
    /// Per-server fsync slowness factor (slow-disk fault).
    pub disk_factor: f64,
    /// Epoch for `_date` in composed transactions, ms.
    pub date_base_ms: u64,
    pub comment_prefix: &'a str,
    /// Which peers are currently reachable (for transfer target choice).
    pub reachable: u64,
    /// Emit [`Out::Log`] for every record written.
    pub capture: bool,
}

impl Ctx<'_> {
    pub(super) fn at(&self) -> Time {
        self.now + self.cost as u64
    }
    pub(super) fn new_id(&mut self) -> u64 {
        *self.ids += 1;
        *self.ids
    }
    pub(super) fn cpu(&mut self, bytes: u64) {
        self.cost += bytes as f64 * self.k.cpu_ns_per_byte / 1000.0;
    }
}

impl Server {
    pub(super) fn rpc_synced(&self, msg: &Msg) -> bool {
        if msg.term() > self.synced_term {
            return false;
        }
        let min_index = match msg {
            Msg::AppendReply { log_end, .. } => log_end.saturating_sub(1),
            Msg::Vote { last_index, .. } => *last_index,
            Msg::Snapshot { snap, .. } => snap.index,
            Msg::SnapshotReply { last_index, .. } => *last_index,
            _ => 0,
        };
        if min_index > self.log_synced {
            return false;
        }
        if let Msg::VoteReply {
            vote,
            prevote: false,
            ..
        } = msg
        {
            if self.synced_vote != Some(*vote) {
                return false;
            }
        }
        true
    }

    pub(super) fn send(&mut self, to: Sid, msg: Msg, cx: &mut Ctx) {
        if to == self.id {
            return;
        }
        if self.rpc_synced(&msg) {
            self.emit(to, msg, cx);
        } else {
            self.waiters.push_back(Waiter::Rpc { to, msg });
        }
    }

    pub(super) fn emit(&mut self, to: Sid, msg: Msg, cx: &mut Ctx) {
        // §9 says a follower never acknowledges entries before they are
        // durable. raft.c can: after a truncation, an older entry waiter
        // completing sets log_synced to its index although the entry
        // re-written there is not yet synced, so a reply passes the send
        // gate early. Mirrored faithfully and counted, not hidden.
        if let Msg::AppendReply {
            ok: true, log_end, ..
        } = &msg
        {
            if self.durable_end < *log_end {
                cx.out.push(Out::EarlyAck { server: self.id });
            }
        }
        cx.cpu(msg.wire_bytes(cx.k.storage));
        cx.out.push(Out::Send {
            from: self.id,
            to,
            msg,
            at: cx.at(),
        });
    }

    pub(super) fn drain_waiters(&mut self, cx: &mut Ctx) {
        while let Some(w) = self.waiters.front() {
            match w {
                Waiter::Entry { ticket, index } => {
                    if *ticket > self.ticket_done {
                        break;
                    }
                    let index = *index;
                    self.waiters.pop_front();
                    if index < self.log_end() {
                        self.log_synced = self.log_synced.max(index);
                    }
                    if self.role == Role::Leader {
                        self.check_commit(cx);
                    }
                }
                Waiter::TermVote { ticket, term, vote } => {
                    if *ticket > self.ticket_done {
                        break;
                    }
                    self.synced_term = *term;
                    self.synced_vote = *vote;
                    self.waiters.pop_front();
                }
                Waiter::Rpc { .. } => {
                    if let Some(Waiter::Rpc { to, msg }) = self.waiters.pop_front() {
                        if msg.term() == self.term || msg.term() == 0 {
                            self.emit(to, msg, cx);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{show, World};
    use super::super::{Entry, EntryKind, Msg, Out};
    use std::rc::Rc;

    #[test]
    fn sends_leave_at_now_plus_the_cpu_spent_so_far() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(0);
        let at = s.election_deadline;
        let out = w.call(at, |cx| s.iterate(cx));
        // Loop cost 15 µs, then each 230-byte pre-vote request costs
        // 230 B x 5 ns = 1.15 µs of encoding before it leaves.
        let wire = Msg::Vote {
            term: 1,
            last_index: 1,
            last_term: 1,
            transfer: false,
            prevote: true,
        }
        .wire_bytes(ovsdb::StorageMode::Diff);
        assert_eq!(wire, 230);
        let departures: Vec<(usize, u64)> = out
            .iter()
            .filter_map(|o| match o {
                Out::Send { to, at: t, .. } => Some((*to, t - at)),
                _ => None,
            })
            .collect();
        assert_eq!(departures, [(1, 16), (2, 17)]);
    }

    #[test]
    fn a_held_reply_of_an_older_term_is_dropped_not_sent() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
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
        // The reply waits for the entry's fsync ...
        w.call(10, |cx| s.handle(0, append, cx));
        // ... meanwhile a candidate of term 2 (shorter log: no vote) moves
        // this server to term 2.
        let now = s.election_base + s.et;
        let vote = Msg::Vote {
            term: 2,
            last_index: 1,
            last_term: 1,
            transfer: false,
            prevote: false,
        };
        w.call(now, |cx| s.handle(2, vote, cx));
        assert_eq!(s.term, 2);
        // The entry is durable now, but its term-1 reply is stale.
        let out = w.call(now + 1000, |cx| {
            s.fsync_done(1, cx);
            s.iterate(cx);
        });
        assert_eq!(show(&out), ["fsync 2"]);
        assert_eq!(s.log_synced, 2);
    }
}
