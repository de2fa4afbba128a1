//! The invariant checks (election safety, leader completeness, state
//! machine safety, log matching, acknowledged writes) and the leader
//! bookkeeping they share with the metrics.

use super::{Ev, EventKind, Sim};
use crate::server::{Life, Sid, Time};
use crate::txn::Op;

#[derive(Clone, Debug, Default)]
pub(super) struct Checker {
    pub(super) leaders: Vec<(u64, Sid)>,
    pub(super) committed: Vec<(u64, u64)>, // index -> (term, uid); index 0 unused
    pub(super) commit_seen: Vec<u64>,
    pub(super) violations: Vec<String>,
    pub(super) checks: u64,
}

impl Checker {
    pub(super) fn fail(&mut self, seed: u64, t: Time, msg: String) {
        if self.violations.len() < 20 {
            self.violations.push(format!("seed {seed} t={t}us: {msg}"));
        }
    }
}

impl Sim {
    pub(super) fn check_commit(&mut self, server: Sid, index: u64, term: u64, uid: u64) {
        self.checker.checks += 1;
        if !self.relays.is_empty() {
            self.relay_note_commit(server, index);
        }
        self.note(EventKind::Commit { server, index });
        self.hash.add(0xC0 ^ index);
        let (seed, now) = (self.seed, self.now);
        let c = &mut self.checker;
        if c.commit_seen.len() <= server {
            c.commit_seen.resize(server + 1, 0);
        }
        if index < c.commit_seen[server] {
            c.fail(
                seed,
                now,
                format!("s{} commit index went back to {index}", server + 1),
            );
        }
        c.commit_seen[server] = index;
        let i = index as usize;
        if c.committed.len() <= i {
            c.committed.resize(i + 1, (0, 0));
        }
        let first = c.committed[i] == (0, 0);
        if first {
            c.committed[i] = (term, uid);
        } else if c.committed[i] != (term, uid) {
            let prev = c.committed[i];
            c.fail(
                seed,
                now,
                format!(
                    "s{} committed entry (term {term}, uid {uid}) at index {index} but (term {}, uid {}) was committed there before",
                    server + 1,
                    prev.0,
                    prev.1
                ),
            );
        }
        if first && self.knobs.chassis > 0 {
            self.sb_nb_committed(server, index);
        }
    }

    pub(super) fn became_leader(&mut self, server: Sid, term: u64) {
        self.note(EventKind::BecameLeader { server, term });
        self.hash.add(0xB0 ^ term);
        let (seed, now) = (self.seed, self.now);
        self.checker.checks += 1;
        if let Some(&(_, other)) = self.checker.leaders.iter().find(|(t, _)| *t == term) {
            if other != server {
                self.checker.fail(
                    seed,
                    now,
                    format!(
                        "two leaders in term {term}: s{} and s{}",
                        other + 1,
                        server + 1
                    ),
                );
            }
        } else {
            self.checker.leaders.push((term, server));
        }
        // Leader completeness: every committed entry is in the new leader's log.
        let srv = &self.servers[server];
        let mut bad = None;
        for (i, &(t, uid)) in self.checker.committed.iter().enumerate() {
            if t == 0 || (i as u64) < srv.log_start {
                continue;
            }
            match srv.entry(i as u64) {
                Some(e) if e.term == t && e.uid == uid => {}
                _ => {
                    bad = Some(i);
                    break;
                }
            }
        }
        if let Some(i) = bad {
            self.checker.fail(
                seed,
                now,
                format!(
                    "leader s{} of term {term} lacks committed index {i}",
                    server + 1
                ),
            );
        }
        self.metrics.leader_starts.push(now);
        if self.metrics.first_leader_us.is_none() {
            self.metrics.first_leader_us = Some(now);
        }
        if let Some(since) = self.leaderless_since.take() {
            let gap = now - since;
            self.metrics.leaderless_us += gap;
            if !self.leaderless_initial {
                self.metrics.time_to_leader_us.push(gap);
            }
        }
        self.leaderless_initial = false;
        self.current_leader = Some((server, term));
        if !self.workload_started && self.scenario.workload.start_ms.is_none() {
            self.workload_started = true;
            self.push(now + 50_000, Ev::WorkloadStart);
        }
    }

    pub(super) fn leader_gone(&mut self, server: Sid) {
        if self.current_leader.is_some_and(|(s, _)| s == server) {
            self.current_leader = None;
            if self.leaderless_since.is_none() {
                self.leaderless_since = Some(self.now);
            }
        }
    }

    /// At-least-once (§9.2 torture tests): every acknowledged `ls-add` is in
    /// the database of the server that applied the most entries.
    pub(super) fn check_acknowledged_writes(&mut self) {
        let Some(best) = self
            .servers
            .iter()
            .filter(|s| s.life != Life::Left)
            .max_by_key(|s| s.last_applied)
        else {
            return;
        };
        // The switches in that server's database ("lsK" names).
        let present: std::collections::HashSet<u64> =
            crate::txn::switch_numbers(&best.db).into_iter().collect();
        let mut missing = None;
        for r in &self.requests {
            if let (true, Op::LsAdd(k)) = (r.done, &r.op) {
                if !present.contains(k) {
                    missing = Some(*k);
                    break;
                }
            }
        }
        self.checker.checks += 1;
        if let Some(k) = missing {
            let (seed, now, id) = (self.seed, self.now, best.id);
            self.checker.fail(
                seed,
                now,
                format!("acknowledged write ls-add ls{k} is missing from s{} (applied the most entries)", id + 1),
            );
        }
    }

    pub(super) fn check_log_matching(&mut self) {
        let n = self.servers.len();
        let (seed, now) = (self.seed, self.now);
        for a in 0..n {
            for b in a + 1..n {
                let (sa, sb) = (&self.servers[a], &self.servers[b]);
                let lo = sa.log_start.max(sb.log_start);
                let hi = sa.log_end().min(sb.log_end());
                let mut matched = false;
                let mut idx = hi;
                let mut bad = None;
                while idx > lo {
                    idx -= 1;
                    let (Some(x), Some(y)) = (sa.entry(idx), sb.entry(idx)) else {
                        continue;
                    };
                    if matched {
                        if x.uid != y.uid || x.term != y.term {
                            bad = Some(idx);
                            break;
                        }
                    } else if x.term == y.term {
                        matched = true;
                        if x.uid != y.uid {
                            bad = Some(idx);
                            break;
                        }
                    }
                }
                self.checker.checks += 1;
                if let Some(i) = bad {
                    self.checker.fail(
                        seed,
                        now,
                        format!(
                            "log matching broken between s{} and s{} at index {i}",
                            a + 1,
                            b + 1
                        ),
                    );
                }
            }
        }
    }
}
