//! What the ovsdb-server model (crate `ovsdb-server`) needs from a
//! transaction beyond a file replay's: its checks and their words
//! ([`ReplayOptions::server_checks`]), a commit in two steps whose first
//! can be undone ([`Txn::precommit`], then [`Txn::keep`] or a rollback: the
//! dry run with which a clustered server prepares a transaction it proposes
//! to Raft), a commit of a result already checked
//! ([`Txn::commit_unchecked`]), the operations' own access to the rows
//! (a row changed in place, [`Txn::modify_at`]; the committed version of a
//! row, [`Txn::committed_row`] and [`Txn::was_committed`]; whether an
//! insert's UUID is taken, [`Txn::uuid_taken_elsewhere`]) and their
//! references counted at commit ([`Txn::count_pending_refs`]); for a
//! commit that only needs which rows it changes, [`Txn::precommit_rows`],
//! and for a dry run whose new rows outlive it,
//! [`Txn::roll_back_taking_inserted`].

use super::{restore_keys, ColTrack, Result, RowRef, RowTrack, Txn, TxnChanges};
use crate::atom::Atom;
use crate::datum::Datum;
use crate::error::Error;
use crate::uuid::Uuid;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

#[cfg(doc)]
use super::ReplayOptions;

/// A row a commit changes ([`Txn::precommit_rows`]): its table, its UUID,
/// its committed version and whether it stays.
pub type CommitRow = (usize, Uuid, Option<RowRef>, bool);

impl Txn<'_> {
    /// The commit's work and checks (garbage collection, weak references,
    /// integrity; ovsdb-server's `ovsdb_txn_precommit`) without ending the
    /// transaction: the database holds the outcome and the changes are
    /// returned; [`Txn::keep`] then makes it final, and dropping the
    /// transaction rolls it back (a dry run: how a clustered server
    /// prepares a transaction it proposes to Raft). On error the caller
    /// drops it.
    pub fn precommit(&mut self) -> Result<TxnChanges> {
        self.finish()?;
        if self.st.skip_changes {
            return Ok(TxnChanges::default());
        }
        Ok(self.build_changes())
    }

    /// [`Txn::precommit`] for a caller that needs only which rows its
    /// change list would name: each as (table, UUID, its committed version
    /// ([`Txn::committed_row`]), whether it stays), in the list's order
    /// within each table. No row the transaction leaves is shared, no
    /// diff computed.
    pub fn precommit_rows(&mut self) -> Result<Vec<CommitRow>> {
        self.finish()?;
        if self.st.skip_changes {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        // The rows `build_changes` names, and no other.
        for &(ti, u) in &self.st.order {
            let Some(rt) = self.st.rows.get(&(ti, u)) else {
                continue;
            };
            if rt.inserted {
                // (Its being there told by the tracking, not searched for.)
                if !rt.gone {
                    out.push((ti, u, None, true));
                }
                continue;
            }
            if rt.deleted {
                out.push((ti, u, self.committed_version(ti, u, Some(rt)), false));
                continue;
            }
            let Some(row) = self.db.tables[ti].rows.get(&u) else {
                continue;
            };
            let changed = rt.cols.iter().any(|(&ci, track)| {
                let cur = &row.columns[ci];
                match track {
                    ColTrack::Old(o) => o != cur,
                    ColTrack::Keys(keys) => !super::net_diff(cur, keys).is_empty(),
                }
            });
            if changed {
                out.push((ti, u, self.committed_version(ti, u, Some(rt)), true));
            }
        }
        Ok(out)
    }

    /// Rolls back a transaction (a dry run after [`Txn::precommit`]) and
    /// hands over the rows it inserted that are still there, as (table,
    /// UUID, row): the rollback takes them out of their tables anyway, and
    /// a caller that keeps them (a prepared commit's new rows) need not
    /// copy them.
    pub fn roll_back_taking_inserted(mut self, mut take: impl FnMut(usize, Uuid, RowRef)) {
        self.rollback_into(Some(&mut take));
        self.done = true;
    }

    /// Ends a transaction after a successful [`Txn::precommit`], keeping
    /// its outcome.
    pub fn keep(mut self) {
        self.done = true;
        self.db.implicit += self.st.implicit;
        self.keep_keys();
    }

    /// Commits without garbage collection, weak-reference removal or any
    /// check: for a transaction that writes the outcome of one already
    /// checked (a prepared commit, a record a log holds), whose effects it
    /// carries.
    pub fn commit_unchecked(mut self) -> TxnChanges {
        if self.st.refs_pending {
            self.count_pending_refs();
        }
        self.done = true;
        self.keep_keys();
        if self.st.skip_changes {
            TxnChanges::default()
        } else {
            self.build_changes()
        }
    }

    /// Row `u` of table `ti` as it was before this transaction (after a
    /// [`Txn::precommit`] too): the committed version itself when the
    /// transaction left the row alone, deleted it or changed it through
    /// [`Txn::modify_at`], otherwise a copy with the columns it changed put
    /// back; `None` for a row it inserted.
    pub fn committed_row(&self, ti: usize, u: Uuid) -> Option<RowRef> {
        self.committed_version(ti, u, self.st.rows.get(&(ti, u)))
    }

    /// [`Txn::committed_row`], given the row's tracking.
    fn committed_version(&self, ti: usize, u: Uuid, rt: Option<&RowTrack>) -> Option<RowRef> {
        let now = || self.db.tables.get(ti).and_then(|t| t.rows.get(&u));
        let Some(rt) = rt else {
            return now().cloned();
        };
        if rt.inserted {
            return None;
        }
        if let Some(orig) = &rt.original {
            return Some(orig.clone());
        }
        let mut row = super::Row::clone(now()?);
        for (&ci, track) in &rt.cols {
            row.columns[ci] = match track {
                ColTrack::Old(o) => o.clone(),
                ColTrack::Keys(keys) => restore_keys(row.columns[ci].clone(), keys),
            };
        }
        Some(Arc::new(row))
    }

    /// Whether row `u` of table `ti` was there before this transaction
    /// (whether the transaction has changed or deleted it since).
    #[inline]
    pub fn was_committed(&self, ti: usize, u: Uuid) -> bool {
        let Some(t) = self.db.tables.get(ti) else {
            return false;
        };
        if !t.rows.is_empty() && t.rows.contains_key(&u) {
            return self.st.rows.get(&(ti, u)).is_none_or(|rt| !rt.inserted);
        }
        // Gone: deleted by the transaction, or collected at its commit.
        let none_gone = self.st.explicitly_deleted.is_empty() && self.st.implicit == 0;
        !none_gone && self.st.rows.get(&(ti, u)).is_some_and(|rt| rt.deleted)
    }

    /// Whether a new row of table `ti` may not have UUID `u`, as
    /// ovsdb-server's insert decides, but for a row `u` that table `ti`
    /// has now (which [`Txn::insert_row`] finds): a row of any table was
    /// there before this transaction ([`Txn::was_committed`]).
    pub fn uuid_taken_elsewhere(&self, ti: usize, u: Uuid) -> bool {
        let none_gone = self.st.explicitly_deleted.is_empty() && self.st.implicit == 0;
        let tracked = |t: usize| self.st.rows.get(&(t, u));
        for (t, table) in self.db.tables.iter().enumerate() {
            let there = t != ti && !table.rows.is_empty() && table.rows.contains_key(&u);
            if there && tracked(t).is_none_or(|rt| !rt.inserted) {
                return true;
            }
            // Gone: deleted by the transaction, or collected at its commit.
            if !there && !none_gone && tracked(t).is_some_and(|rt| rt.deleted) {
                return true;
            }
        }
        false
    }

    /// Changes row `u` of table `ti` in place, as an ovsdb-server operation
    /// does: `f` gets its values (every column of the table, in its order)
    /// as the transaction has them and changes what it will; the columns it
    /// changed are tracked (and their references counted, unless they are
    /// pending). The row joins the transaction even when `f` changes
    /// nothing (a `mutate` whose result equals the old value still takes
    /// its place in the weak-reference assessment's order), and a row the
    /// transaction did not insert keeps its committed version whole, shared
    /// ([`Txn::committed_row`]). When `f` fails, the row keeps what it
    /// changed until the transaction is dropped, which rolls it back.
    pub fn modify_at<T>(
        &mut self,
        ti: usize,
        u: Uuid,
        f: impl FnOnce(&mut [Datum]) -> Result<T>,
    ) -> Result<T> {
        let Some(cur) = self.db.tables.get(ti).and_then(|t| t.rows.get(&u)).cloned() else {
            return Err(self.check_row(ti, u).expect_err("a missing row"));
        };
        let pending = self.st.refs_pending;
        let rt = self.touch(ti, u);
        let inserted = rt.inserted;
        if !inserted && rt.original.is_none() && rt.cols.is_empty() {
            rt.original = Some(cur.clone());
        }
        // What the values are compared with: the version before `f` when
        // its references are counted now (or the row changed before
        // without its committed version kept), else the committed version;
        // a row the transaction inserted is not tracked. (Not holding the
        // version before lets `f` change a row the transaction already
        // copied without copying it again.)
        let base = if !pending || (!inserted && rt.original.is_none()) {
            Some(cur)
        } else if inserted {
            None
        } else {
            rt.original.clone()
        };
        let row = self.db.table_mut(ti).row_mut(&u).expect("a row just read");
        let out = f(&mut row.columns);
        let Some(base) = base else {
            return out;
        };
        let changed: Vec<usize> = (0..row.columns.len())
            .filter(|&ci| row.columns[ci] != base.columns[ci])
            .collect();
        if changed.is_empty() {
            return out;
        }
        if !pending {
            let now = self.db.tables[ti].rows.get(&u).cloned().expect("a row");
            for &ci in &changed {
                if self.db.has_refs(ti, ci) {
                    let (o, n) = (&base.columns[ci], &now.columns[ci]);
                    self.db.adjust_refs_delta(&mut self.st, (ti, u), ci, o, n);
                }
            }
        }
        if !inserted {
            let rt = self.st.rows.get_mut(&(ti, u)).expect("a row just touched");
            for ci in changed {
                rt.cols
                    .entry(ci)
                    .or_insert_with(|| ColTrack::Old(base.columns[ci].clone()));
            }
        }
        out
    }

    /// [`ReplayOptions::server_checks`]: the references the operations
    /// left, counted at commit from each row's net change (a deleted row's
    /// references go, an inserted row's come, a changed column's differing
    /// atoms go and come), rows in the order they joined the transaction,
    /// columns in the table's order: the order in which ovsdb-server's
    /// commit meets them, and the weak references it then checks.
    pub(super) fn count_pending_refs(&mut self) {
        self.st.refs_pending = false;
        let order = std::mem::take(&mut self.st.order);
        let rows = std::mem::take(&mut self.st.rows);
        for &(ti, u) in &order {
            let Some(rt) = rows.get(&(ti, u)) else {
                continue;
            };
            let now = self.db.tables[ti].rows.get(&u).cloned();
            let src = (ti, u);
            match (&now, rt.deleted) {
                (_, true) => {
                    if let Some(o) = &rt.original {
                        self.db
                            .place_refs(&mut self.st, src, Some(&o.columns[..]), None);
                    }
                }
                (Some(n), false) if rt.inserted => {
                    self.db
                        .place_refs(&mut self.st, src, None, Some(&n.columns[..]));
                }
                (Some(n), false) => {
                    for (&ci, track) in &rt.cols {
                        if !self.db.has_refs(ti, ci) {
                            continue;
                        }
                        let cur = &n.columns[ci];
                        let old = match track {
                            ColTrack::Old(o) => std::borrow::Cow::Borrowed(o),
                            ColTrack::Keys(k) => {
                                std::borrow::Cow::Owned(restore_keys(cur.clone(), k))
                            }
                        };
                        if *old != *cur {
                            self.db.adjust_refs_delta(&mut self.st, src, ci, &old, cur);
                        }
                    }
                }
                (None, false) => {}
            }
        }
        self.st.order = order;
        self.st.rows = rows;
    }

    /// [`ReplayOptions::server_checks`]: before garbage collection, a
    /// strong reference to a missing row (added by the operations, or left
    /// to a row they deleted) fails the transaction with the words of
    /// ovsdb-server's reply, naming the first such reference: tables in
    /// name order, the rows the operations left alone before the ones they
    /// wrote (each in UUID order), columns in name order.
    pub(super) fn server_strong_ref_check(&self) -> Result<()> {
        let db = &*self.db;
        let missing = |t: usize, u: &Uuid| !db.tables[t].rows.contains_key(u);
        let broken = self
            .st
            .strong_touched
            .iter()
            .chain(self.st.explicitly_deleted.iter())
            .any(|(t, u)| db.tables[*t].strong_refs(u) > 0 && missing(*t, u));
        if !broken {
            return Ok(());
        }
        for ti in self.by_name() {
            let ts = &db.schema.tables[ti];
            let mut cols: Vec<(&str, usize)> = db.meta[ti]
                .ref_cols
                .iter()
                .enumerate()
                .filter(|(_, rc)| {
                    rc.key.is_some_and(|k| !k.weak) || rc.value.is_some_and(|v| !v.weak)
                })
                .map(|(i, rc)| (ts.columns[rc.col].name.as_str(), i))
                .collect();
            if cols.is_empty() {
                continue;
            }
            crate::order::sort_by_key(&mut cols, |c| c.0);
            let written = |u: &Uuid| self.st.rows.contains_key(&(ti, *u));
            let untouched = db.tables[ti].rows.iter().filter(|(u, _)| !written(u));
            let touched = db.tables[ti].rows.iter().filter(|(u, _)| written(u));
            for (src, row) in untouched.chain(touched) {
                for &(name, i) in &cols {
                    let rc = &db.meta[ti].ref_cols[i];
                    let strong = |t: Option<super::RefTarget>| t.filter(|t| !t.weak);
                    let hit = |t: Option<super::RefTarget>, a: &Atom| {
                        strong(t).and_then(|t| match a {
                            Atom::Uuid(x) if missing(t.table, x) => Some((t.table, *x)),
                            _ => None,
                        })
                    };
                    let first = match &row.columns[rc.col] {
                        Datum::Set(s) => s.iter().find_map(|a| hit(rc.key, a)),
                        Datum::Map(m) => m
                            .iter()
                            .find_map(|(k, v)| hit(rc.key, k).or_else(|| hit(rc.value, v))),
                    };
                    if let Some((tt, x)) = first {
                        return Err(Error::referential(format!(
                            "Table {} column {} row {} references nonexistent row {} in table {}.",
                            ts.name, name, src, x, db.schema.tables[tt].name
                        )));
                    }
                }
            }
        }
        Err(Error::referential("reference to a deleted row"))
    }

    /// [`ReplayOptions::server_checks`]: removing weak references left
    /// column `ci` of row `u` below its minimum size.
    pub(super) fn server_weak_size_check(&self, ti: usize, u: Uuid, ci: usize) -> Result<()> {
        if !self.st.server_checks {
            return Ok(());
        }
        let ts = &self.db.schema.tables[ti];
        let c = &ts.columns[ci];
        match self.db.tables[ti].rows.get(&u) {
            Some(r) if (r.columns[ci].len() as u64) < u64::from(c.ty.min) => {
                Err(Error::constraint(format!(
                    "Deletion of weak reference(s) leaves column {}.{} with too few elements.",
                    ts.name, c.name
                )))
            }
            _ => Ok(()),
        }
    }

    /// [`ReplayOptions::server_checks`]: rows in table-name and UUID order,
    /// each once.
    pub(super) fn server_order(&self, rows: &mut Vec<(usize, Uuid)>) {
        // (Inserted one by one: collecting into a B-tree sorts, and each
        // element type's sort is one more instance in the browser's wasm.)
        let mut rank = vec![0usize; self.db.schema.tables.len()];
        for (r, t) in self.by_name().into_iter().enumerate() {
            rank[t] = r;
        }
        let mut sorted = BTreeSet::new();
        for &(t, u) in rows.iter() {
            sorted.insert((rank[t], u, t));
        }
        *rows = sorted.into_iter().map(|(_, u, t)| (t, u)).collect();
    }

    /// Table indexes in table-name order.
    fn by_name(&self) -> Vec<usize> {
        let mut names = BTreeMap::new();
        for (i, t) in self.db.schema.tables.iter().enumerate() {
            names.insert(t.name.as_str(), i);
        }
        names.into_values().collect()
    }
}
