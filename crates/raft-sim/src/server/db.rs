//! The OVSDB layer on top of Raft: client transactions (triggers), the
//! commands they become (proposed here or forwarded to the leader),
//! committed entries applied to the databases, and the transaction history
//! that snapshots share.

use super::{Ctx, EntryKind, Msg, Out, Role, Server, Sid, Snap, Status, Time};
use crate::txn::{self, Op, Proposal, ProposalRef};
use ovsdb::json::Json;
use ovsdb::StorageMode;
use std::rc::Rc;
use std::sync::Arc;

/// The data transactions a server applied, in order, as an immutable chain
/// of chunks (one per snapshot). A snapshot names the core database at its
/// index by sharing this chain instead of deep-copying the database (the
/// copy was 15 % of a long run); the database is rebuilt by replay only when
/// a snapshot is installed or a server restarts. Sharing is clone-safe
/// (checkpoints), the chunks never change.
#[derive(Debug, Default)]
pub struct CoreHistory {
    pub prev: Option<Rc<CoreHistory>>,
    pub txns: Vec<ProposalRef>,
}

impl CoreHistory {
    fn chunks(self: &Rc<Self>) -> Vec<&Rc<CoreHistory>> {
        let mut chunks = Vec::new();
        let mut at = Some(self);
        while let Some(h) = at {
            chunks.push(h);
            at = h.prev.as_ref();
        }
        chunks.reverse();
        chunks
    }

    /// Replay the chain's records onto an empty database model (what a
    /// server does when it installs a snapshot or restarts). Returns the
    /// model, its rows' snapshot size and the first record it refused
    /// (none expected).
    pub fn rebuild_model(self: &Rc<Self>) -> (ovsdb_server::Server, u64, Option<String>) {
        let mut model = txn::empty_model();
        let mut bytes = 0u64;
        let mut problem = None;
        for h in self.chunks() {
            for t in &h.txns {
                if let Err(e) = t.replay_on(&mut model, &mut bytes) {
                    problem.get_or_insert(format!("model refused '{}': {e}", t.op.args()));
                }
            }
        }
        (model, bytes, problem)
    }

    /// Replay the chain onto an empty core database. Returns the database
    /// and the first disagreement found (none expected: every transaction
    /// was executed when it was first applied).
    pub fn rebuild(self: &Rc<Self>) -> (Option<ovsdb::Database>, Option<String>) {
        let Some(mut db) = txn::empty_core_db() else {
            return (None, Some("schema does not parse".into()));
        };
        let mut problem = None;
        for h in self.chunks() {
            for t in &h.txns {
                if let Some(p) = core_apply(&mut db, t) {
                    problem.get_or_insert(p);
                }
            }
        }
        (Some(db), problem)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum TState {
    Idle,
    Waiting(u64),
    Applying(u64),
}

#[derive(Clone, Debug)]
pub(super) struct Trigger {
    pub(super) client: usize,
    pub(super) op: Op,
    pub(super) state: TState,
    /// Applied eid at the last proposal that failed its prerequisite: the
    /// retry waits until the local database changes (a retry before that
    /// would carry the same stale prerequisite and fail again; the real
    /// server spins on it, which only costs CPU).
    pub(super) failed_prereq: Option<u64>,
}

#[derive(Clone, Debug)]
pub(super) struct Command {
    pub(super) eid: u64,
    pub(super) prereq: u64,
    /// Leader side: follower that forwarded it (cleared on step-down).
    pub(super) from: Option<Sid>,
    /// A trigger on this server waits for it.
    pub(super) local: bool,
    /// Follower side: a forwarded request counts against follower_max_inflight.
    pub(super) forwarded: bool,
    pub(super) touched: Time,
}

/// Execute a committed transaction on the core database and check that the
/// core's own serialization of the changes has the entry's size in both
/// storage modes. Returns a description of any disagreement.
fn core_apply(core: &mut ovsdb::Database, txn: &txn::Proposal) -> Option<String> {
    let j = match txn.record() {
        Ok(j) => j,
        Err(e) => return Some(format!("'{}': {e}", txn.op.args())),
    };
    // The record is the same on every server: its sizes are compared once,
    // so later replays need no change list.
    let opts = ovsdb::db::ReplayOptions {
        skip_index_check: true,
        skip_changes: txn.size_checked.get(),
        ..Default::default()
    };
    match core.apply_txn_json(&j, opts) {
        Err(e) => Some(format!("core database rejected '{}': {e}", txn.op.args())),
        Ok(_) if txn.size_checked.get() => None,
        Ok(changes) => {
            txn.size_checked.set(true);
            for mode in [StorageMode::Full, StorageMode::Diff] {
                let core_len = core.txn_json_len(&changes, mode);
                let ours = txn.tables_len(mode);
                if core_len != ours {
                    return Some(format!(
                        "'{}' in {} mode: IDL server model {ours} B, ovsdb database {core_len} B",
                        txn.op.args(),
                        if mode == StorageMode::Diff {
                            "diff"
                        } else {
                            "full"
                        }
                    ));
                }
            }
            None
        }
    }
}

/// The `core_db` check of `txn` on a server's check database `state`: the
/// result another server's check left in the record's memo when `state` is
/// the database that check started from (the same object, shared: the
/// result is then the same), else the record replayed ([`core_apply`]),
/// into a database of its own, and remembered.
fn core_check(state: &mut Arc<ovsdb::Database>, txn: &txn::Proposal) -> Option<String> {
    if let Some(m) = txn.core_memo.borrow().as_ref() {
        // The memo's `before` keeps its allocation: no other database
        // can have its address.
        if std::ptr::eq(m.before.as_ptr(), Arc::as_ptr(state)) {
            if let Some(after) = m.after.upgrade() {
                *state = after;
                return None;
            }
        }
    }
    let before = Arc::downgrade(state);
    // A new allocation (`before` is weak, others may share it).
    let problem = core_apply(Arc::make_mut(state), txn);
    if problem.is_none() {
        *txn.core_memo.borrow_mut() = Some(txn::CoreMemo {
            before,
            after: Arc::downgrade(state),
        });
    }
    problem
}

impl Server {
    pub(super) fn fail_trigger(&mut self, eid: u64) {
        for t in &mut self.triggers {
            if t.state == TState::Waiting(eid) {
                t.state = TState::Idle;
            }
        }
    }

    pub(super) fn complete_eid(&mut self, eid: u64, idx: u64, cx: &mut Ctx) {
        let Some(pos) = self.commands.iter().position(|c| c.eid == eid) else {
            return;
        };
        let is_leader = self.role == Role::Leader;
        if !is_leader && !cx.k.complete_on_eid_commit {
            return;
        }
        let c = self.commands.remove(pos);
        if let (true, Some(f)) = (is_leader, c.from) {
            self.send(
                f,
                Msg::ExecReply {
                    eid,
                    status: Status::Success,
                    commit_index: idx,
                },
                cx,
            );
        }
        if c.local {
            for t in &mut self.triggers {
                if t.state == TState::Waiting(eid) {
                    t.state = TState::Applying(idx);
                }
            }
        }
    }

    /// Commands unanswered for `command_timeout` are dropped; a trigger of
    /// this server waiting for one is tried again.
    pub(super) fn expire_commands(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        let limit = cx.k.command_timeout(self.et);
        let mut expired = Vec::new();
        self.commands.retain(|c| {
            let keep = now.saturating_sub(c.touched) < limit;
            if !keep && c.local {
                expired.push(c.eid);
            }
            keep
        });
        for eid in expired {
            cx.out.push(Out::Timeout { server: self.id });
            self.fail_trigger(eid);
        }
    }

    pub(super) fn apply_committed(&mut self, cx: &mut Ctx) {
        while self.last_applied < self.commit_index {
            let idx = self.last_applied + 1;
            if let Some(e) = self.entry(idx) {
                if let EntryKind::Data { eid, txn } = &e.kind {
                    let (eid, txn) = (*eid, txn.clone());
                    // Every member, the proposer included, installs the
                    // committed record, as ovsdb-server replays it (the
                    // commit it was made of, where the rows are the same).
                    if let Err(e) = txn.replay_on(&mut self.db, &mut self.db_bytes) {
                        cx.out.push(Out::CoreMismatch {
                            server: self.id,
                            index: idx,
                            msg: format!("database model refused '{}': {e}", txn.op.args()),
                        });
                    }
                    if let Some(core) = self.check_db.as_mut() {
                        if let Some(msg) = core_check(core, &txn) {
                            cx.out.push(Out::CoreMismatch {
                                server: self.id,
                                index: idx,
                                msg,
                            });
                        }
                    }
                    self.core_pending.push(txn.clone());
                    self.client_view.apply(&txn);
                    self.applied_eid = eid;
                    self.applied_since_snap += 1;
                }
            }
            self.last_applied = idx;
        }
    }

    pub(super) fn trigger_run(&mut self, cx: &mut Ctx) {
        let mut i = 0;
        while i < self.triggers.len() {
            match self.triggers[i].state {
                TState::Applying(idx) if self.last_applied >= idx => {
                    let t = self.triggers.remove(i);
                    cx.out.push(Out::ClientDone {
                        server: self.id,
                        client: t.client,
                        at: cx.at(),
                    });
                    continue;
                }
                TState::Idle => self.try_propose(i, cx),
                _ => {}
            }
            i += 1;
        }
    }

    pub(super) fn try_propose(&mut self, i: usize, cx: &mut Ctx) {
        let is_leader = self.role == Role::Leader;
        let can_forward = self.role == Role::Follower && self.leader.is_some() && !self.joining;
        if !is_leader && !can_forward {
            return; // "not leader": retried at the next wake-up
        }
        let prereq = self.applied_eid;
        if cx.k.prereq_precheck && self.log_last_eid != prereq {
            return;
        }
        if self.triggers[i].failed_prereq == Some(prereq) {
            return;
        }
        if !is_leader && cx.k.follower_max_inflight > 0 {
            let n = self.commands.iter().filter(|c| c.forwarded).count() as u64;
            if n >= cx.k.follower_max_inflight {
                return;
            }
        }
        let op = self.triggers[i].op.clone();
        let date = cx.date_base_ms + cx.now / 1000;
        // Execute the client's request on this server's database without
        // installing it; the commit becomes the entry.
        let outcome = self
            .client_view
            .request(&op, cx.comment_prefix, cx.rng)
            .map(|req| (self.db.prepare(&req.ops), req));
        let (commit, req) = match outcome {
            Ok((out, req)) => match out.commit {
                Some(c) => (c, req),
                None => {
                    // ovsdb-server answers at once: an error, or success
                    // with nothing to write.
                    let error = out
                        .result
                        .as_array()
                        .and_then(|r| r.iter().find_map(|x| x.get("details")))
                        .and_then(Json::as_str)
                        .map(str::to_string);
                    self.reject(i, op, error, cx);
                    return;
                }
            },
            Err(msg) => {
                self.reject(i, op, Some(msg), cx);
                return;
            }
        };
        let t = Rc::new(Proposal::from_commit(
            &self.db.meta,
            &op,
            &req,
            &commit,
            date,
            cx.k.storage,
        ));
        cx.cpu(t.len(cx.k.storage) as u64);
        cx.out.push(Out::Proposed { txn: t.clone() });
        let eid = cx.new_id();
        if is_leader {
            if self.log_last_eid != prereq {
                cx.out.push(Out::PrereqFailure { server: self.id });
                self.triggers[i].failed_prereq = Some(prereq);
                return;
            }
            self.commands.push(Command {
                eid,
                prereq,
                from: None,
                local: true,
                forwarded: false,
                touched: cx.now,
            });
            self.command_initiate(EntryKind::Data { eid, txn: t }, cx);
        } else {
            let Some(l) = self.leader else { return };
            self.commands.push(Command {
                eid,
                prereq,
                from: None,
                local: true,
                forwarded: true,
                touched: cx.now,
            });
            self.send(
                l,
                Msg::Exec {
                    eid,
                    prereq,
                    txn: t,
                },
                cx,
            );
        }
        self.triggers[i].state = TState::Waiting(eid);
    }

    /// A command forwarded by a follower: proposed if this server leads and
    /// the prerequisite holds, else refused at once.
    pub(super) fn handle_exec(
        &mut self,
        from: Sid,
        eid: u64,
        prereq: u64,
        txn: ProposalRef,
        cx: &mut Ctx,
    ) {
        let status = if self.role != Role::Leader {
            Status::NotLeader
        } else if prereq != self.log_last_eid {
            Status::PrereqFailed
        } else {
            self.commands.push(Command {
                eid,
                prereq,
                from: Some(from),
                local: false,
                forwarded: false,
                touched: cx.now,
            });
            self.command_initiate(EntryKind::Data { eid, txn }, cx);
            return;
        };
        if status == Status::PrereqFailed {
            cx.out.push(Out::PrereqFailure { server: self.id });
        }
        self.send(
            from,
            Msg::ExecReply {
                eid,
                status,
                commit_index: 0,
            },
            cx,
        );
    }

    /// The leader's answer to a forwarded command: still in progress,
    /// committed (the trigger waits for it to be applied), or failed (the
    /// trigger retries).
    pub(super) fn handle_exec_reply(
        &mut self,
        eid: u64,
        status: Status,
        commit_index: u64,
        cx: &mut Ctx,
    ) {
        let Some(pos) = self.commands.iter().position(|c| c.eid == eid) else {
            return;
        };
        match status {
            Status::InProgress => self.commands[pos].touched = cx.now,
            Status::Success => {
                let c = self.commands.remove(pos);
                if c.local {
                    for t in &mut self.triggers {
                        if t.state == TState::Waiting(eid) {
                            t.state = TState::Applying(commit_index);
                        }
                    }
                }
            }
            _ => {
                let c = self.commands.remove(pos);
                for t in &mut self.triggers {
                    if t.state == TState::Waiting(eid) {
                        t.state = TState::Idle;
                        if status == Status::PrereqFailed {
                            t.failed_prereq = Some(c.prereq);
                        }
                    }
                }
            }
        }
    }

    /// Rebuild the databases at the snapshot's index (restart, install):
    /// `db` and, with the `core_db` knob, `check_db`, replayed from the
    /// snapshot's history.
    pub(super) fn databases_from_snapshot(&mut self, snap: &Rc<Snap>, cx: &mut Ctx) {
        self.core_pending.clear();
        let Some(h) = snap.core.as_ref() else {
            *self.db = txn::empty_model();
            self.db_bytes = 0;
            if cx.k.core_db {
                self.check_db = txn::shared_empty_core_db();
            }
            return;
        };
        let (model, bytes, mut problem) = h.rebuild_model();
        *self.db = model;
        self.db_bytes = bytes;
        if cx.k.core_db {
            let (db, p) = h.rebuild();
            self.check_db = db.map(Arc::new);
            problem = problem.or(p);
        }
        if let Some(msg) = problem {
            cx.out.push(Out::CoreMismatch {
                server: self.id,
                index: snap.index,
                msg: format!("rebuilding the snapshot's database: {msg}"),
            });
        }
    }

    /// The client's transaction ends without an entry: ovn-nbctl refused
    /// the command, or the server's reply is an error or a no-op.
    pub(super) fn reject(&mut self, i: usize, op: Op, error: Option<String>, cx: &mut Ctx) {
        cx.out.push(Out::TxnRejected {
            server: self.id,
            op,
            error,
        });
        // Answered at the next pass, as a finished transaction.
        self.triggers[i].state = TState::Applying(self.last_applied);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{show, World};
    use super::super::{Entry, EntryKind, Msg, Out, Status};
    use super::{core_apply, core_check};
    use crate::rng::Rng;
    use crate::txn::{self, NbState, Op, Proposal};
    use ovsdb::StorageMode;
    use std::rc::Rc;
    use std::sync::Arc;

    #[test]
    fn servers_at_the_same_check_database_share_its_result() {
        // Five records as a server proposes them.
        let (mut rng, mut st, mut model) = (Rng::new(7), NbState::default(), txn::empty_model());
        let mut props = Vec::new();
        for op in [
            Op::Init,
            Op::LsAdd(1),
            Op::PgAdd,
            Op::AclAdd(3),
            Op::AclDelBatch(1),
        ] {
            let req = st.request(&op, "c", &mut rng).unwrap();
            let c = model.prepare(&req.ops).commit.unwrap();
            let t = Proposal::from_commit(&model.meta, &op, &req, &c, 0, StorageMode::Diff);
            model.apply_commit(&c).unwrap();
            st.apply(&t);
            props.push(t);
        }
        let dump = |db: &ovsdb::Database| db.dump_json(true).to_string_compact();
        // The replay the check did before: each database its own.
        let mut alone = txn::empty_core_db().unwrap();
        let mut want = Vec::new();
        for t in &props {
            assert_eq!(core_apply(&mut alone, t), None);
            want.push(dump(&alone));
            t.size_checked.set(false);
        }
        // Three servers from the shared empty database: the first replays
        // each record, the others take its result (the same object).
        let mut dbs = vec![txn::shared_empty_core_db().unwrap(); 3];
        for (t, want) in props.iter().zip(&want) {
            for db in dbs.iter_mut() {
                assert_eq!(core_check(db, t), None);
                assert_eq!(&dump(db), want);
            }
            assert!(Arc::ptr_eq(&dbs[0], &dbs[1]) && Arc::ptr_eq(&dbs[0], &dbs[2]));
        }
        // A database of its own (rebuilt from a snapshot) replays the
        // record: same result, not the shared object.
        let mut own = Arc::new(txn::empty_core_db().unwrap());
        for (t, want) in props.iter().zip(&want) {
            assert_eq!(core_check(&mut own, t), None);
            assert_eq!(&dump(&own), want);
            assert!(!Arc::ptr_eq(&own, &dbs[0]));
        }
        // A record the database refuses (the ACL is gone) is refused on
        // every server, none taking another's result.
        let mut fresh = vec![txn::shared_empty_core_db().unwrap(); 2];
        for db in fresh.iter_mut() {
            let msg = core_check(db, &props[4]).expect("refused");
            assert!(msg.starts_with("core database rejected 'acl-del'"), "{msg}");
        }
        assert!(!Arc::ptr_eq(&fresh[0], &fresh[1]));
    }

    #[test]
    fn a_follower_forwards_one_transaction_at_a_time_and_answers_once_applied() {
        let mut w = World::main(); // follower_max_inflight = 1
        let mut s = w.cluster(3).remove(1);
        let beat = Msg::Append {
            term: 1,
            prev_index: 1,
            prev_term: 1,
            leader_commit: 1,
            entries: Rc::new(vec![]),
        };
        w.call(10, |cx| s.handle(0, beat, cx));
        assert_eq!(s.leader, Some(0));
        s.client_request(7, Op::LsAdd(1));
        s.client_request(8, Op::LsAdd(2));
        let out = w.call(100, |cx| s.iterate(cx));
        assert_eq!(
            show(&out),
            ["send 1->0 Exec { eid: 101, prereq: 0, op: LsAdd(1) }"]
        );
        let Some(Out::Send {
            msg: Msg::Exec { txn, .. },
            ..
        }) = out.into_iter().find(|o| matches!(o, Out::Send { .. }))
        else {
            unreachable!()
        };
        assert_eq!((s.pending_commands(), s.pending_triggers()), (1, 2));
        // The leader committed it at index 2: the client waits until this
        // server has applied index 2.
        let done = Msg::ExecReply {
            eid: 101,
            status: Status::Success,
            commit_index: 2,
        };
        let out = w.call(200, |cx| s.handle(0, done, cx));
        assert!(out.is_empty(), "{:?}", show(&out));
        assert_eq!(s.pending_commands(), 0);
        let entry = Entry {
            term: 1,
            uid: 500,
            kind: EntryKind::Data { eid: 101, txn },
        };
        let append = Msg::Append {
            term: 1,
            prev_index: 1,
            prev_term: 1,
            leader_commit: 2,
            entries: Rc::new(vec![entry]),
        };
        w.call(300, |cx| s.handle(0, append, cx));
        // Applied in the next iteration (15 µs of loop cost in): the first
        // client is answered and the second transaction goes to the leader
        // on top of the first.
        let out = w.call(400, |cx| s.iterate(cx));
        assert_eq!(
            show(&out),
            [
                "ClientDone { server: 1, client: 7, at: 415 }",
                "send 1->0 Exec { eid: 102, prereq: 101, op: LsAdd(2) }",
            ]
        );
        assert_eq!((s.last_applied, s.applied_eid), (2, 101));
        assert_eq!(s.db.row_count("Logical_Switch"), 1);
    }

    #[test]
    fn a_leader_refuses_a_forwarded_command_on_a_stale_prerequisite() {
        let mut w = World::main();
        let mut s = w.cluster(3).remove(0);
        w.call(0, |cx| s.become_leader(cx));
        // Take a real transaction from a follower that proposes one.
        let mut f = w.cluster(3).remove(1);
        f.leader = Some(0);
        f.client_request(7, Op::LsAdd(1));
        let out = w.call(10, |cx| f.iterate(cx));
        let Some(Out::Send {
            msg: Msg::Exec { txn, .. },
            ..
        }) = out.into_iter().find(|o| matches!(o, Out::Send { .. }))
        else {
            unreachable!()
        };
        let stale = Msg::Exec {
            eid: 900,
            prereq: 5,
            txn,
        };
        let out = w.call(20, |cx| s.handle(1, stale, cx));
        assert_eq!(
            show(&out),
            [
                "PrereqFailure { server: 0 }",
                "send 0->1 ExecReply { eid: 900, status: PrereqFailed, commit_index: 0 }",
            ]
        );
        assert_eq!(s.pending_commands(), 0);
    }
}
