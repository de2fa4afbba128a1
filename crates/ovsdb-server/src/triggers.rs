//! Transactions that wait (ovsdb-server's triggers), modelled sans-IO.
//!
//! In ovsdb-server every `transact` is a trigger. When one of its `wait`
//! operations is not satisfied and that wait has a `timeout` greater than
//! the time the transaction has waited so far (or no `timeout` at all,
//! which means forever), the whole transaction is set aside without a
//! reply. It is executed again from scratch after every commit to the
//! database, and when the smallest timeout among the waits it has
//! evaluated passes; the reply goes out when an attempt finishes (success
//! or any error). An expired wait fails with `timed out` and the details
//! `"wait" timed out after N ms`; a wait with `timeout` 0 fails on the
//! first attempt with the details `"where" clause test failed`.
//!
//! A `cancel` notification naming the request id drops the trigger; the
//! client gets a `canceled` error reply only if it declared itself
//! `set_db_change_aware` (otherwise no reply at all). A second `transact`
//! with the id of a waiting one is refused ("duplicate request ID"). A
//! disconnect drops the session's triggers without replies. (All checked
//! against ovsdb-server 3.1 by `tests/triggers_real_server.rs`.)
//!
//! Time is virtual: [`Server::advance`] moves the clock and expires
//! triggers whose deadline passed. Commits made through
//! [`Server::handle`] and [`Server::transact`] re-run the triggers
//! themselves; after [`Server::apply_commit`] or [`Server::apply_record`]
//! the caller runs them with [`Server::run_triggers`].

use crate::dispatch::{error_reply, reply};
use crate::{Json, Object, Outbox, Server, SessionId, TransactOutcome};
use ovsdb::db::TxnChanges;
use ovsdb::error::Error;

/// How an unsatisfied `wait` behaves in one execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WaitMode {
    /// [`Server::prepare`]: fails at once with `timed out` (unchanged
    /// behaviour the simulator relies on).
    Prepare,
    /// A session-less transaction ([`Server::transact`]): it cannot wait,
    /// so it fails at once; with `timeout` 0 with the real server's
    /// details.
    NoWait,
    /// A session's transaction, executed this many ms after it arrived.
    Trigger(i64),
}

/// The error of a `wait` whose rows did not match. In [`WaitMode::Trigger`]
/// a wait that may still be satisfied yields ovsdb-server's internal
/// `not supported` error, which turns the transaction into a trigger.
pub(super) fn unsatisfied_wait(timeout: Option<i64>, mode: WaitMode) -> Error {
    match (mode, timeout) {
        (WaitMode::Prepare, _) => Error::new("timed out", "\"wait\" timed out"),
        (WaitMode::Trigger(elapsed), Some(t)) if elapsed >= t => {
            if elapsed > 0 {
                Error::new(
                    "timed out",
                    format!("\"wait\" timed out after {elapsed} ms"),
                )
            } else {
                Error::new("timed out", "\"where\" clause test failed")
            }
        }
        (WaitMode::Trigger(_), _) => Error::new(NOT_SUPPORTED, TRIGGERS_NOT_SUPPORTED),
        (WaitMode::NoWait, Some(0)) => Error::new("timed out", "\"where\" clause test failed"),
        (WaitMode::NoWait, _) => Error::new("timed out", "\"wait\" timed out"),
    }
}

const NOT_SUPPORTED: &str = "not supported";
const TRIGGERS_NOT_SUPPORTED: &str = "triggers not supported";

/// A transaction waiting in the server.
#[derive(Debug, Clone)]
pub(super) struct Trigger {
    pub(super) session: SessionId,
    pub(super) id: Json,
    /// The operations (without the database name).
    pub(super) ops: Vec<Json>,
    pub(super) created: i64,
    /// Smallest timeout of the waits evaluated in the last attempt; `None`
    /// waits until the database changes.
    pub(super) timeout: Option<i64>,
}

/// A waiting transaction, as [`Server::pending_transactions`] lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingTransaction {
    pub session: SessionId,
    /// The JSON-RPC id of the `transact` request.
    pub id: Json,
    /// Virtual time (ms) at which it arrived.
    pub created_ms: i64,
    /// When it will be tried for the last time, if it has a deadline.
    pub deadline_ms: Option<i64>,
}

/// What [`Server::handle`] does with a `transact`.
pub(super) enum TxnStep {
    /// Reply now: `before` goes out before the reply, `after` after it.
    Reply {
        before: Outbox,
        result: std::result::Result<Json, Json>,
        after: Outbox,
    },
    /// The transaction waits: no reply yet.
    Pending,
}

/// Index of the result entry that says "this transaction must wait".
fn waiting_at(result: &Json) -> Option<usize> {
    result.as_array()?.iter().position(|r| {
        r.get("error").and_then(Json::as_str) == Some(NOT_SUPPORTED)
            && r.get("details").and_then(Json::as_str) == Some(TRIGGERS_NOT_SUPPORTED)
    })
}

/// The transaction's timeout after an attempt that stopped at operation
/// `upto`: the smallest `timeout` of the waits executed so far.
fn min_timeout(ops: &[Json], upto: usize) -> Option<i64> {
    ops.iter()
        .take(upto.saturating_add(1))
        .filter(|o| o.get("op").and_then(Json::as_str) == Some("wait"))
        .filter_map(|o| o.get("timeout").and_then(Json::as_i64))
        .filter(|t| *t >= 0)
        .min()
}

impl Server {
    /// The virtual clock, in ms.
    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    /// Moves the virtual clock to `now_ms` (it never goes back) and
    /// retries the waiting transactions whose deadline has passed; returns
    /// their replies (and the updates their commits cause).
    pub fn advance(&mut self, now_ms: i64) -> Outbox {
        self.now_ms = self.now_ms.max(now_ms);
        if self.triggers.is_empty() {
            return Vec::new();
        }
        self.trigger_passes(true)
    }

    /// Retries every waiting transaction (ovsdb-server does this after each
    /// commit). Needed only after [`Server::apply_commit`] or
    /// [`Server::apply_record`]; other commits run it themselves.
    pub fn run_triggers(&mut self) -> Outbox {
        if self.triggers.is_empty() {
            return Vec::new();
        }
        self.trigger_passes(false)
    }

    /// The transactions waiting now, oldest first.
    pub fn pending_transactions(&self) -> Vec<PendingTransaction> {
        self.triggers
            .iter()
            .map(|t| PendingTransaction {
                session: t.session,
                id: t.id.clone(),
                created_ms: t.created,
                deadline_ms: t.timeout.map(|x| t.created.saturating_add(x)),
            })
            .collect()
    }

    /// A `transact` request from session `s`.
    pub(super) fn session_transact(&mut self, s: SessionId, id: &Json, params: &[Json]) -> TxnStep {
        let now_reply = |result| TxnStep::Reply {
            before: Vec::new(),
            result,
            after: Vec::new(),
        };
        if params.first().and_then(Json::as_str) != Some(self.meta.name.as_str()) {
            return now_reply(Err(Json::from("unknown database")));
        }
        if !id.is_null() && self.triggers.iter().any(|t| t.session == s && t.id == *id) {
            let mut e = Object::new();
            e.insert("error", Json::from("syntax error"));
            e.insert("details", Json::from("transact: duplicate request ID"));
            e.insert(
                "syntax",
                Json::String(
                    Json::Array(params.to_vec())
                        .sorted_recursive()
                        .to_string_compact(),
                ),
            );
            return now_reply(Err(Json::Object(e)));
        }
        let ops = &params[1..];
        match self.attempt(s, ops, 0) {
            Err(timeout) => {
                self.triggers.push(Trigger {
                    session: s,
                    id: id.clone(),
                    ops: ops.to_vec(),
                    created: self.now_ms,
                    timeout,
                });
                TxnStep::Pending
            }
            Ok(outcome) => {
                let (before, after) = match &outcome.commit {
                    None => (Vec::new(), Vec::new()),
                    // Without waiting transactions, as always: every
                    // session's updates, then the reply.
                    Some(c) if self.triggers.is_empty() => (self.distribute(c), Vec::new()),
                    // Otherwise the waiting transactions run after the
                    // reply, and other sessions get their updates only
                    // then (merged with the triggers' own changes, as
                    // ovsdb-server's main loop does).
                    Some(c) => {
                        self.merge_commit(&c.changes);
                        let before = self.flush_unless_held(s);
                        (before, self.trigger_passes(false))
                    }
                };
                TxnStep::Reply {
                    before,
                    result: Ok(outcome.result),
                    after,
                }
            }
        }
    }

    /// `cancel [id]` from session `s`.
    pub(super) fn cancel_trigger(&mut self, s: SessionId, params: &[Json]) -> Outbox {
        let [id] = params else {
            return Vec::new();
        };
        let Some(pos) = self
            .triggers
            .iter()
            .position(|t| t.session == s && t.id == *id)
        else {
            return Vec::new();
        };
        let t = self.triggers.remove(pos);
        let aware = self.sessions.get(&s).is_some_and(|x| x.db_change_aware);
        if aware {
            vec![(s, error_reply(&t.id, Json::from("canceled")))]
        } else {
            Vec::new()
        }
    }

    /// Executes a session's transaction `elapsed` ms after it arrived:
    /// the outcome, or `Err(timeout)` if it has to keep waiting.
    fn attempt(
        &mut self,
        s: SessionId,
        ops: &[Json],
        elapsed: i64,
    ) -> std::result::Result<TransactOutcome, Option<i64>> {
        let outcome = self.execute(Some(s), ops, true, WaitMode::Trigger(elapsed));
        match waiting_at(&outcome.result) {
            Some(pos) => Err(min_timeout(ops, pos)),
            None => Ok(outcome),
        }
    }

    /// Runs the waiting transactions until no attempt commits anything
    /// (each commit may satisfy another wait). With `expired_only`, the
    /// first pass tries only those whose deadline has passed.
    fn trigger_passes(&mut self, expired_only: bool) -> Outbox {
        let mut out = Vec::new();
        let mut first = true;
        loop {
            let mut committed = false;
            let mut i = 0;
            while i < self.triggers.len() {
                let (s, created, timeout) = {
                    let t = &self.triggers[i];
                    (t.session, t.created, t.timeout)
                };
                let elapsed = self.now_ms.saturating_sub(created).max(0);
                if first && expired_only && timeout.is_none_or(|x| elapsed < x) {
                    i += 1;
                    continue;
                }
                let ops = std::mem::take(&mut self.triggers[i].ops);
                match self.attempt(s, &ops, elapsed) {
                    Err(timeout) => {
                        let t = &mut self.triggers[i];
                        t.ops = ops;
                        t.timeout = timeout;
                        i += 1;
                    }
                    Ok(outcome) => {
                        let t = self.triggers.remove(i);
                        if let Some(c) = &outcome.commit {
                            self.merge_commit(&c.changes);
                            committed = true;
                        }
                        out.extend(self.flush_unless_held(t.session));
                        out.push((t.session, reply(&t.id, outcome.result)));
                    }
                }
            }
            first = false;
            if !committed {
                break;
            }
        }
        for s in self.sessions.keys().copied().collect::<Vec<_>>() {
            out.extend(self.flush_unless_held(s));
        }
        out
    }

    /// Adds committed changes to every monitor's change set, without
    /// sending anything yet.
    fn merge_commit(&mut self, changes: &TxnChanges) {
        for sess in self.sessions.values_mut() {
            for m in &mut sess.monitors {
                m.merge(changes);
            }
        }
    }

    fn flush_unless_held(&mut self, s: SessionId) -> Outbox {
        match self.sessions.get(&s) {
            Some(sess) if !sess.hold => self.flush(s),
            _ => Vec::new(),
        }
    }
}
