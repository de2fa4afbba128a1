//! Snapshots: compaction (`ovsdb-server/compact` or the scheduler),
//! sending one to a follower behind the leader's log start, and installing
//! one received.

use super::{bit, CoreHistory, Ctx, EntryKind, LogRec, Msg, Out, RecordKind, Role, Server, Sid};
use crate::txn::{self, NbState};
use std::rc::Rc;

#[derive(Clone, Debug)]
pub struct Snap {
    pub index: u64,
    pub term: u64,
    pub servers: u64,
    pub et: u64,
    pub last_eid: u64,
    pub db: Rc<NbState>,
    /// JSON size of the database's rows in a snapshot record.
    pub db_bytes: u64,
    /// The database at `index`, as the chain of committed transactions
    /// that builds it (see [`CoreHistory`]); None before a joiner has one.
    pub core: Option<Rc<CoreHistory>>,
}

impl Server {
    /// Compact the log up to `last_applied` (ovsdb-server/compact).
    pub fn compact(&mut self, cx: &mut Ctx) {
        self.compact_as(false, cx);
    }

    /// Compact, forced (`compact`) or because the scheduler said so.
    pub(super) fn compact_as(&mut self, scheduled: bool, cx: &mut Ctx) {
        let idx = self.last_applied;
        if idx < self.log_start || self.joining {
            return;
        }
        let term = self.term_at(idx);
        let servers = self
            .log
            .iter()
            .enumerate()
            .filter(|(i, _)| self.log_start + (*i as u64) <= idx)
            .rev()
            .find_map(|(_, e)| match e.kind {
                EntryKind::Servers(s) => Some(s),
                _ => None,
            })
            .unwrap_or(self.snap.servers);
        self.snap = Rc::new(Snap {
            index: idx,
            term,
            servers,
            et: self.et,
            last_eid: self.applied_eid,
            db: Rc::new(self.client_view.clone()),
            db_bytes: self.db_bytes,
            core: Some(Rc::new(CoreHistory {
                prev: self.snap.core.clone(),
                txns: std::mem::take(&mut self.core_pending),
            })),
        });
        let drop_n = (idx + 1 - self.log_start) as usize;
        self.log.drain(..drop_n.min(self.log.len()));
        self.log_start = idx + 1;
        // New file: header with the data, remaining entries, term/vote, commit.
        let mut bytes = txn::framed(txn::NB_HEADER_JSON + self.db_bytes + 150);
        self.file_bytes_after_snap = bytes;
        for (i, e) in self.log.iter().enumerate() {
            bytes += self.entry_record_len(e, self.log_start + i as u64, cx.k.storage);
        }
        bytes += txn::vote_len(self.term) + txn::commit_len(self.commit_index);
        self.file_bytes = bytes;
        if cx.capture {
            self.capture(
                cx,
                LogRec::Rewrite {
                    snap: self.snap.clone(),
                },
            );
            for (i, e) in self.log.iter().enumerate() {
                let rec = LogRec::Entry {
                    index: self.log_start + i as u64,
                    entry: e.clone(),
                };
                self.capture(cx, rec);
            }
            self.capture(cx, self.term_record());
            if self.commit_index > self.snap.index {
                let rec = LogRec::Commit {
                    index: self.commit_index,
                };
                self.capture(cx, rec);
            }
        }
        self.written(cx, RecordKind::Header, bytes, bytes);
        if !cx.k.snapshot_in_thread {
            cx.cost += cx.k.snapshot_block as f64 * 4.0;
        } else {
            cx.cost += cx.k.snapshot_block as f64;
        }
        self.applied_since_snap = 0;
        cx.out.push(Out::Snapshotted {
            server: self.id,
            index: idx,
            scheduled,
        });
    }

    pub(super) fn snapshot_check(&mut self, cx: &mut Ctx) {
        if cx.now < self.next_snapshot_check {
            return;
        }
        let k = cx.k;
        let grown = self.applied_since_snap >= k.snapshot_min_entries
            && self.file_bytes > k.snapshot_min_bytes
            && self.file_bytes > 2 * self.file_bytes_after_snap;
        let due = cx.now >= self.snapshot_deadline && self.applied_since_snap > 0;
        if !(grown || due || self.snapshot_after_transfer) {
            let span = k
                .snapshot_recheck_max
                .saturating_sub(k.snapshot_recheck_min);
            self.next_snapshot_check = cx.now + k.snapshot_recheck_min + cx.rng.below(span.max(1));
            return;
        }
        let may = !self.joining
            && !self.leaving
            && (!k.snapshot_followers_only || self.role == Role::Follower || self.n_config() == 1);
        if !may {
            if self.role == Role::Leader
                && k.transfer_before_snapshot
                && self.transfer_leadership(cx)
            {
                self.become_follower(cx);
                self.snapshot_after_transfer = true;
                self.next_snapshot_check = cx.now + 1000;
            } else {
                self.next_snapshot_check = cx.now + 1000;
            }
            return;
        }
        self.snapshot_after_transfer = false;
        self.compact_as(true, cx);
        let span = k.snapshot_max.saturating_sub(k.snapshot_min);
        self.next_snapshot_check = cx.now + k.snapshot_min + cx.rng.below(span.max(1));
        self.snapshot_deadline = cx.now + k.snapshot_deadline;
    }

    pub(super) fn send_snapshot(&mut self, p: Sid, cx: &mut Ctx) {
        if self.peers[p].snap_inflight {
            return;
        }
        self.peers[p].snap_inflight = true;
        let mut snap = (*self.snap).clone();
        snap.et = self.et;
        self.send(
            p,
            Msg::Snapshot {
                term: self.term,
                snap: Rc::new(snap),
            },
            cx,
        );
    }

    /// A snapshot from the leader: installed if it reaches past this
    /// server's log, acknowledged either way.
    pub(super) fn handle_snapshot(&mut self, from: Sid, term: u64, snap: Rc<Snap>, cx: &mut Ctx) {
        if !self.receive_term(term, cx) {
            return;
        }
        if self.role == Role::Candidate {
            self.become_follower(cx);
        }
        self.set_leader(from, cx);
        self.reset_election_timer(cx.k, cx.now, cx.rng);
        if snap.index >= self.last_index() {
            self.install_snapshot(&snap, cx);
        }
        let m = Msg::SnapshotReply {
            term: self.term,
            last_index: snap.index,
            last_term: snap.term,
        };
        self.send(from, m, cx);
    }

    /// A snapshot reply at the leader: the follower continues from the
    /// snapshot, or is sent the current one again.
    pub(super) fn handle_snapshot_reply(
        &mut self,
        from: Sid,
        term: u64,
        last_index: u64,
        last_term: u64,
        cx: &mut Ctx,
    ) {
        if !self.receive_term(term, cx) || self.role != Role::Leader {
            return;
        }
        self.peers[from].snap_inflight = false;
        self.peers[from].replied = true;
        if last_index == self.snap.index && last_term == self.snap.term {
            self.peers[from].next_index = self.log_start;
            self.peers[from].match_index = self.peers[from].match_index.max(last_index);
            self.send_missing(from, cx);
            self.membership_step(cx);
        } else {
            self.send_snapshot(from, cx);
        }
    }

    pub(super) fn install_snapshot(&mut self, snap: &Rc<Snap>, cx: &mut Ctx) {
        self.log.clear();
        self.log_start = snap.index + 1;
        self.snap = snap.clone();
        self.commit_index = self.commit_index.max(snap.index);
        self.last_applied = snap.index;
        self.log_synced = snap.index;
        self.durable_end = self.log_end();
        self.pending_writes.clear();
        self.client_view = (*snap.db).clone();
        self.databases_from_snapshot(snap, cx);
        self.applied_eid = snap.last_eid;
        self.log_last_eid = snap.last_eid;
        self.config = snap.servers;
        self.et = snap.et;
        let bytes =
            txn::framed(txn::NB_HEADER_JSON + 25 + snap.db_bytes) + txn::term_len(self.term);
        self.file_bytes = bytes;
        self.file_bytes_after_snap = bytes;
        self.applied_since_snap = 0;
        self.capture(cx, LogRec::Rewrite { snap: snap.clone() });
        self.capture(cx, self.term_record());
        self.written(cx, RecordKind::Header, bytes, bytes);
        if self.joining && snap.servers & bit(self.id) != 0 {
            self.joining = false;
            self.join_deadline = None;
            cx.out.push(Out::Joined { server: self.id });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{show, World};
    use super::super::{CoreHistory, Entry, EntryKind, Msg, Server, Snap};
    use crate::txn::NbState;
    use std::rc::Rc;

    /// Server 0 of a fresh three-member cluster made leader in term 1 (its
    /// no-op at index 2 sent to both followers, peers' next index 3).
    fn leader(w: &mut World, n: usize) -> Server {
        let mut s = w.cluster(n).remove(0);
        w.call(0, |cx| s.become_leader(cx));
        s
    }

    /// A snapshot at `index` of term 1 of the three-member configuration,
    /// with an empty database and a 2 s election timer.
    fn snap(index: u64) -> Rc<Snap> {
        Rc::new(Snap {
            index,
            term: 1,
            servers: 0b111,
            et: 2_000_000,
            last_eid: 0,
            db: Rc::new(NbState::default()),
            db_bytes: 0,
            core: Some(Rc::new(CoreHistory::default())),
        })
    }

    #[test]
    fn a_follower_whose_log_ends_before_the_log_start_is_sent_the_snapshot_once() {
        let mut w = World::main();
        let mut s = leader(&mut w, 3);
        // A joiner's log ends at index 1, before the leader's log start 2.
        let refused = || Msg::AppendReply {
            term: 1,
            log_end: 1,
            prev_index: 2,
            n_entries: 0,
            ok: false,
        };
        let out = w.call(100, |cx| s.handle(1, refused(), cx));
        assert_eq!(
            show(&out),
            ["send 0->1 Snapshot { term: 1, index: 1, snap_term: 1 }"]
        );
        assert!(s.peers[1].snap_inflight);
        // While it is in flight, another refusal sends nothing.
        let out = w.call(200, |cx| s.handle(1, refused(), cx));
        assert!(out.is_empty(), "{:?}", show(&out));
    }

    #[test]
    fn a_reply_for_the_current_snapshot_resumes_appends_after_it() {
        let mut w = World::main();
        let mut s = leader(&mut w, 3);
        s.peers[1].next_index = 1;
        w.call(100, |cx| s.send_snapshot(1, cx));
        let reply = Msg::SnapshotReply {
            term: 1,
            last_index: 1,
            last_term: 1,
        };
        let out = w.call(200, |cx| s.handle(1, reply, cx));
        assert_eq!(
            show(&out),
            [
                "send 0->1 Append { term: 1, prev_index: 1, prev_term: 1, leader_commit: 1, \
              entries: [Entry { term: 1, uid: 101, kind: Noop }] }"
            ]
        );
        let p = &s.peers[1];
        assert_eq!(
            (p.snap_inflight, p.match_index, p.next_index),
            (false, 1, 3)
        );
    }

    #[test]
    fn a_follower_installs_a_snapshot_past_its_log_and_acknowledges_it() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
        let out = w.call(10, |cx| {
            s.handle(
                0,
                Msg::Snapshot {
                    term: 1,
                    snap: snap(5),
                },
                cx,
            )
        });
        assert_eq!(
            show(&out),
            [
                "record Leader",
                "record Header",
                "send 1->0 SnapshotReply { term: 1, last_index: 5, last_term: 1 }",
            ]
        );
        assert_eq!((s.log_start, s.commit_index, s.last_applied), (6, 5, 5));
        assert_eq!((s.et, s.log_synced, s.leader), (2_000_000, 5, Some(0)));
    }

    #[test]
    fn a_snapshot_older_than_the_log_is_acknowledged_but_not_installed() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(1);
        let e = |uid| Entry {
            term: 1,
            uid,
            kind: EntryKind::Noop,
        };
        let append = Msg::Append {
            term: 1,
            prev_index: 1,
            prev_term: 1,
            leader_commit: 1,
            entries: Rc::new(vec![e(7), e(8)]),
        };
        w.call(10, |cx| s.handle(0, append, cx));
        w.call(2000, |cx| {
            s.fsync_done(1, cx);
            s.iterate(cx);
        });
        assert_eq!((s.last_index(), s.log_synced), (3, 3));
        let out = w.call(3000, |cx| {
            s.handle(
                0,
                Msg::Snapshot {
                    term: 1,
                    snap: snap(2),
                },
                cx,
            )
        });
        assert_eq!(
            show(&out),
            ["send 1->0 SnapshotReply { term: 1, last_index: 2, last_term: 1 }"]
        );
        assert_eq!((s.log_start, s.snap.index, s.last_index()), (2, 1, 3));
    }

    #[test]
    fn compaction_moves_the_applied_entries_into_the_snapshot() {
        let mut w = World::main();
        let mut s = leader(&mut w, 1);
        // Nothing applied past the snapshot yet: nothing to compact.
        let out = w.call(10, |cx| s.compact(cx));
        assert!(out.is_empty(), "{:?}", show(&out));
        // Alone in its configuration, the leader commits its no-op as soon
        // as it is durable.
        w.call(2000, |cx| {
            s.fsync_done(1, cx);
            s.iterate(cx);
        });
        assert_eq!(s.last_applied, 2);
        let out = w.call(3000, |cx| s.compact(cx));
        assert_eq!(
            show(&out),
            [
                "record Header",
                "Snapshotted { server: 0, index: 2, scheduled: false }"
            ]
        );
        assert_eq!((s.snap.index, s.snap.term, s.snap.servers), (2, 1, 1));
        assert_eq!((s.log_start, s.log.len(), s.applied_since_snap), (3, 0, 0));
    }
}
