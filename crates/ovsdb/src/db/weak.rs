//! Weak references at commit: ovsdb-server 3.1's assessment of a
//! transaction's rows (`assess_weak_refs` run by `for_each_txn_row` in its
//! ovsdb/transaction.c) and the removal of a row's references to a row
//! that is gone.

use super::{net_diff, ColTrack, Database, RefCol, RefTarget, Result, Txn, TxnState};
use crate::atom::Atom;
use crate::datum::Datum;
use crate::sets::AtomMap;
use crate::uuid::Uuid;
use std::collections::{BTreeMap, BTreeSet};

impl Txn<'_> {
    /// Removes every atom referring to (`tt`, `tu`) from row (`ti`, `u`)'s
    /// weak-reference columns (with `optional_only`, its max-1 ones).
    pub(super) fn drop_weak_refs(
        &mut self,
        ti: usize,
        u: Uuid,
        tt: usize,
        tu: Uuid,
        optional_only: bool,
    ) -> Result<()> {
        let cols: Vec<RefCol> = self.db.meta[ti]
            .ref_cols
            .iter()
            .filter(|rc| {
                rc.key.is_some_and(|k| k.weak && k.table == tt)
                    || rc.value.is_some_and(|v| v.weak && v.table == tt)
            })
            .filter(|rc| {
                !optional_only || !self.db.schema.tables[ti].columns[rc.col].ty.is_composite()
            })
            .cloned()
            .collect();
        let target = Atom::Uuid(tu);
        for rc in cols {
            let Some(row) = self.db.tables[ti].rows.get(&u) else {
                return Ok(());
            };
            let cur = &row.columns[rc.col];
            let key_hit = rc.key.is_some_and(|k| k.weak && k.table == tt);
            let val_hit = rc.value.is_some_and(|v| v.weak && v.table == tt);
            let diff = match cur {
                Datum::Set(s) => {
                    if key_hit && s.contains(&target) {
                        Datum::scalar(target.clone())
                    } else {
                        continue;
                    }
                }
                Datum::Map(m) => {
                    let pairs: AtomMap = m
                        .iter()
                        .filter(|(k, v)| (key_hit && **k == target) || (val_hit && **v == target))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    if pairs.is_empty() {
                        continue;
                    }
                    Datum::Map(pairs)
                }
            };
            let ty = self.db.schema.tables[ti].columns[rc.col].ty.clone();
            self.st.implicit += 1;
            if !ty.is_composite() {
                // A scalar or optional column (max 1): a "diff" of such a
                // column is its new value, so `apply_diff_at` would write
                // the dangling reference back. Remove it instead (the
                // column becomes empty; with min 1 the size check at
                // commit rejects the transaction, as ovsdb-server does).
                let mut v = cur.clone();
                v.subtract(&diff);
                self.set_at(ti, u, rc.col, v)?;
                self.server_weak_size_check(ti, u, rc.col)?;
                continue;
            }
            // Removing never grows the value; a min violation is reported at
            // commit by the size check.
            self.apply_diff_at(ti, u, rc.col, &diff).or_else(|_| {
                let mut v = self.db.tables[ti]
                    .rows
                    .get(&u)
                    .map(|r| r.columns[rc.col].clone())
                    .unwrap_or_else(|| Datum::empty(&ty));
                v.subtract(&diff);
                self.set_at(ti, u, rc.col, v)
            })?;
            self.server_weak_size_check(ti, u, rc.col)?;
        }
        Ok(())
    }

    /// Removes weak references to the rows in `deleted` the way
    /// ovsdb-server 3.1 does (`assess_weak_refs`, run over the
    /// transaction's rows by `for_each_txn_row` in ovsdb/transaction.c):
    /// rows are assessed table by table, in the order the tables joined the
    /// transaction, and within a table in `hmap` order (first UUID word).
    /// Assessing a deleted row queues the removal of its weak referrers'
    /// references, adding untouched referrers to the transaction; a
    /// referrer drops the queued references when it is assessed. A
    /// referrer that was assessed earlier keeps its reference: it dangles.
    /// (References a row adds in this transaction are checked separately,
    /// whatever the order.)
    pub(super) fn assess_weak_refs(
        &mut self,
        deleted: &BTreeSet<(usize, Uuid)>,
        n_ops_tables: usize,
        n_ops_rows: usize,
    ) -> Result<()> {
        use crate::json::{shash_order, Hmap};
        struct Order {
            nodes: Vec<(usize, Uuid)>,
            done: Vec<bool>,
            index: BTreeMap<(usize, Uuid), usize>,
            tables: Vec<(usize, Hmap)>,
            table_pos: BTreeMap<usize, usize>,
        }
        impl Order {
            fn add(&mut self, ti: usize, u: Uuid) -> usize {
                if let Some(&id) = self.index.get(&(ti, u)) {
                    return id;
                }
                let id = self.nodes.len();
                self.nodes.push((ti, u));
                self.done.push(false);
                self.index.insert((ti, u), id);
                let tp = *self.table_pos.entry(ti).or_insert_with(|| {
                    self.tables.push((ti, Hmap::new()));
                    self.tables.len() - 1
                });
                self.tables[tp].1.insert(u.first_word(), id);
                id
            }
        }
        let mut o = Order {
            nodes: Vec::new(),
            done: Vec::new(),
            index: BTreeMap::new(),
            tables: Vec::new(),
            table_pos: BTreeMap::new(),
        };
        let file = self.st.file_record_order;
        let exists = |db: &Database, ti: usize, u: &Uuid| db.tables[ti].rows.contains_key(u);
        // The common case: no deleted row has weak referrers, so nothing
        // gets queued, and no row of the transaction has a max-1 weak
        // column pointing at a missing row. Then the assessment below would
        // drop nothing, whatever its order: skip building the order (the
        // rows checked here are a superset of the ones it assesses).
        let has_referrers = deleted.iter().any(|(ti, u)| {
            self.db.tables[*ti]
                .weak_in
                .get(u)
                .is_some_and(|m| !m.is_empty())
        });
        if !has_referrers {
            let mut rows = self.st.order.iter().chain(self.st.strong_touched.iter());
            let drops_any = rows.any(|&(ti, u)| {
                !deleted.contains(&(ti, u))
                    && exists(self.db, ti, &u)
                    && !self.missing_scalar_weak_targets(ti, u).is_empty()
            });
            if !drops_any {
                return Ok(());
            }
        }
        // Which rows are transaction rows when ovsdb-server assesses weak
        // references: rows whose operations really changed them (it drops
        // no-op modifications first, and a table left empty with them),
        // rows deleted or collected that existed before, and rows whose
        // strong reference count changed. Rows inserted and collected again
        // are gone by then.
        let changed = |st: &TxnState, db: &Database, ti: usize, u: &Uuid| -> bool {
            let Some(rt) = st.rows.get(&(ti, *u)) else {
                return false;
            };
            if rt.inserted || rt.deleted {
                return true;
            }
            let Some(row) = db.tables[ti].rows.get(u) else {
                return true;
            };
            rt.cols.iter().any(|(&ci, tr)| match tr {
                ColTrack::Old(o) => *o != row.columns[ci],
                ColTrack::Keys(k) => !net_diff(&row.columns[ci], k).is_empty(),
            })
        };
        let in_txn =
            |st: &TxnState, db: &Database, ti: usize, u: &Uuid| match st.rows.get(&(ti, *u)) {
                Some(rt) if rt.inserted => exists(db, ti, u),
                Some(rt) if rt.deleted => true,
                _ => exists(db, ti, u),
            };
        // The operations' tables, in record (hash) order or operation
        // order, keep their place if a row of theirs survives the no-op
        // check; rows in record (hash) or operation order.
        let mut op_tables: Vec<usize> = self.st.table_order[..n_ops_tables].to_vec();
        if file {
            let names: Vec<&str> = op_tables
                .iter()
                .map(|&t| self.db.schema.tables[t].name.as_str())
                .collect();
            op_tables = shash_order(&names)
                .into_iter()
                .map(|i| op_tables[i])
                .collect();
        }
        let mut op_rows: BTreeMap<usize, Vec<Uuid>> = BTreeMap::new();
        for &(ti, u) in &self.st.order[..n_ops_rows] {
            op_rows.entry(ti).or_default().push(u);
        }
        // Each table's rows, with their place in the assessment.
        #[derive(Clone, Copy, PartialEq)]
        enum Place {
            /// An operation's row that is assessed.
            Stays,
            /// An operation's row that only takes a slot in the hash table
            /// (`ReplayOptions::server_checks`).
            Slot,
            /// A row that joins after the operations' rows.
            Later,
        }
        let mut per_table: Vec<(usize, Vec<(Uuid, Place)>)> = Vec::new();
        let mut placed: BTreeSet<(usize, Uuid)> = BTreeSet::new();
        let server = self.st.server_checks;
        for ti in op_tables {
            let rows = op_rows.remove(&ti).unwrap_or_default();
            if !rows.iter().any(|u| changed(&self.st, self.db, ti, u)) {
                continue;
            }
            let order: Vec<usize> = if file {
                let text: Vec<String> = rows.iter().map(Uuid::to_string).collect();
                shash_order(&text)
            } else {
                (0..rows.len()).collect()
            };
            let mut v = Vec::new();
            for i in order {
                let u = rows[i];
                if changed(&self.st, self.db, ti, &u) && in_txn(&self.st, self.db, ti, &u) {
                    placed.insert((ti, u));
                    v.push((u, Place::Stays));
                } else if server {
                    v.push((u, Place::Slot));
                }
            }
            per_table.push((ti, v));
        }
        // Then rows whose strong reference count changed (collected ones
        // among them), appended to their table or, for tables not placed
        // yet, to new tables at the end.
        let mut later: Vec<(usize, Uuid)> = self.st.order[n_ops_rows..]
            .iter()
            .chain(self.st.strong_touched.iter())
            .copied()
            .collect();
        if server {
            self.server_order(&mut later);
        }
        for (ti, u) in later {
            if placed.contains(&(ti, u)) || !in_txn(&self.st, self.db, ti, &u) {
                continue;
            }
            placed.insert((ti, u));
            match per_table.iter_mut().find(|(t, _)| *t == ti) {
                Some((_, v)) => v.push((u, Place::Later)),
                None => per_table.push((ti, vec![(u, Place::Later)])),
            }
        }
        // A table whose rows are all gone (collected inserts) was dropped.
        // The operations' rows first, then (`Later`) the others.
        for pass in [Place::Stays, Place::Later] {
            for (ti, rows) in &per_table {
                let mut slots = Vec::new();
                for &(u, place) in rows {
                    if (place == Place::Later) != (pass == Place::Later) {
                        continue;
                    }
                    let id = o.add(*ti, u);
                    if place == Place::Slot {
                        slots.push((u, id));
                    }
                }
                // The rows that only took a slot leave again (as
                // ovsdb-server drops its unchanged rows), having grown the
                // hash table.
                for (u, id) in slots {
                    o.index.remove(&(*ti, u));
                    o.done[id] = true;
                    if let Some(&tp) = o.table_pos.get(ti) {
                        o.tables[tp].1.remove(u.first_word(), id);
                    }
                }
            }
        }
        // for_each_txn_row: passes until no table has unassessed rows.
        let mut queued: BTreeMap<(usize, Uuid), Vec<(usize, Uuid)>> = BTreeMap::new();
        loop {
            let mut any = false;
            let mut tp = 0;
            while tp < o.tables.len() {
                loop {
                    let mut did = false;
                    let mut cur = o.tables[tp].1.first();
                    while let Some(id) = cur {
                        let (ti, u) = o.nodes[id];
                        // HMAP_FOR_EACH_SAFE takes the next node first.
                        let next = o.tables[tp].1.next(u.first_word(), id);
                        if !o.done[id] {
                            o.done[id] = true;
                            did = true;
                            any = true;
                            if deleted.contains(&(ti, u)) {
                                let mut referrers: Vec<(usize, Uuid)> = self.db.tables[ti]
                                    .weak_in
                                    .get(&u)
                                    .map(|m| m.keys().copied().collect())
                                    .unwrap_or_default();
                                if server {
                                    self.server_order(&mut referrers);
                                }
                                for (si, su) in referrers {
                                    if !exists(self.db, si, &su) {
                                        continue;
                                    }
                                    let sid = o.add(si, su);
                                    if !o.done[sid] {
                                        queued.entry((si, su)).or_default().push((ti, u));
                                    }
                                }
                            } else if exists(self.db, ti, &u) {
                                // Queued references go from every column;
                                // a missing target of an optional column
                                // only from those columns (a set or map
                                // keeps what it had).
                                for (tt, tu) in queued.remove(&(ti, u)).unwrap_or_default() {
                                    self.drop_weak_refs(ti, u, tt, tu, false)?;
                                }
                                for (tt, tu) in self.missing_scalar_weak_targets(ti, u) {
                                    self.drop_weak_refs(ti, u, tt, tu, true)?;
                                }
                            }
                        }
                        cur = next;
                    }
                    if !did {
                        break;
                    }
                }
                tp += 1;
            }
            if !any {
                break;
            }
        }
        Ok(())
    }

    /// Targets of weak references to missing rows in row (`ti`, `u`)'s
    /// non-composite (max 1) weak columns. ovsdb-server re-checks every
    /// atom of such a column when it assesses a row of the transaction
    /// (for them "added" is the whole new value), unlike set and map
    /// columns, where only added atoms are checked.
    fn missing_scalar_weak_targets(&self, ti: usize, u: Uuid) -> Vec<(usize, Uuid)> {
        let mut out = Vec::new();
        let ts = &self.db.schema.tables[ti];
        let scalar_weak = |rc: &RefCol| {
            let weak = |t: Option<RefTarget>| t.is_some_and(|t| t.weak);
            !ts.columns[rc.col].ty.is_composite() && (weak(rc.key) || weak(rc.value))
        };
        // (Most tables have none: the row is not looked up.)
        if !self.db.meta[ti].ref_cols.iter().any(scalar_weak) {
            return out;
        }
        let Some(row) = self.db.tables[ti].rows.get(&u) else {
            return out;
        };
        for rc in &self.db.meta[ti].ref_cols {
            if ts.columns[rc.col].ty.is_composite() {
                continue;
            }
            let mut check = |target: Option<RefTarget>, a: &Atom| {
                if let (Some(t), Some(x)) = (target.filter(|t| t.weak), a.as_uuid()) {
                    if !self.db.tables[t.table].rows.contains_key(&x) {
                        out.push((t.table, x));
                    }
                }
            };
            match &row.columns[rc.col] {
                Datum::Set(s) => s.iter().for_each(|a| check(rc.key, a)),
                Datum::Map(m) => m.iter().for_each(|(k, v)| {
                    check(rc.key, k);
                    check(rc.value, v);
                }),
            }
        }
        out
    }
}
