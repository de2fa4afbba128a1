//! Referential integrity at commit: strong references to missing rows
//! fail, weak references to missing rows are removed (by default in
//! ovsdb-server 3.1's order, [`ServerOptions::weak_refs_as_ovs_3_1`]),
//! unreferenced non-root rows are garbage collected; the strong-reference
//! columns and counts the server keeps for this; and the unique-index
//! check ([`first_duplicate`]).
//!
//! [`ServerOptions::weak_refs_as_ovs_3_1`]: crate::ServerOptions::weak_refs_as_ovs_3_1

use crate::{Row, RowRef, Server};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::error::{Error, Result};
use ovsdb::types::Type;
use ovsdb::uuid::Uuid;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

impl Server {
    /// Weak references to missing rows are removed; strong references to
    /// missing rows fail; unreferenced non-root rows are deleted. `order`
    /// lists the rows the operations touched, first touch first.
    pub(crate) fn check_references(
        &self,
        changed: &mut [BTreeMap<Uuid, Option<Row>>],
        order: &[(usize, Uuid)],
    ) -> Result<()> {
        let meta = self.meta.clone();
        let n = meta.tables.len();
        let exists = |changed: &[BTreeMap<Uuid, Option<Row>>], t: usize, u: &Uuid| -> bool {
            match changed[t].get(u) {
                Some(x) => x.is_some(),
                None => self.tables[t].contains_key(u),
            }
        };
        // ovsdb-server 3.1 collects garbage first and then assesses weak
        // references once, in its own order (see `assess_weak_refs_3_1`).
        let ovs31 = self.opts.weak_refs_as_ovs_3_1;
        let mut assessed = false;
        let mut loops = 0;
        loop {
            loops += 1;
            // 1. Remove dangling weak references from every row (committed
            //    rows that point to deleted rows become changed).
            //    (Only without `weak_refs_as_ovs_3_1`.)
            if !ovs31 {
                let deleted: HashSet<Uuid> = changed
                    .iter()
                    .flat_map(|m| m.iter().filter(|(_, r)| r.is_none()).map(|(u, _)| *u))
                    .collect();
                for ti in 0..n {
                    let t = &meta.tables[ti];
                    let weak_cols = &self.weak_cols[ti];
                    if weak_cols.is_empty() {
                        continue;
                    }
                    // Candidates: changed rows, plus committed rows if anything
                    // was deleted.
                    let mut cand: Vec<Uuid> = changed[ti]
                        .iter()
                        .filter(|(_, r)| r.is_some())
                        .map(|(u, _)| *u)
                        .collect();
                    // Only a deletion in a table these columns point into can
                    // leave a committed row with a dangling weak reference.
                    let points_at_deleted = weak_cols.iter().any(|&ci| {
                        let c = &t.columns[ci];
                        [
                            c.ty.key.ref_table.as_ref(),
                            c.ty.value.as_ref().and_then(|v| v.ref_table.as_ref()),
                        ]
                        .into_iter()
                        .flatten()
                        .filter_map(|name| meta.table(name))
                        .any(|tt| changed[tt].values().any(Option::is_none))
                    });
                    if points_at_deleted {
                        cand.extend(
                            self.tables[ti]
                                .keys()
                                .filter(|u| !changed[ti].contains_key(u))
                                .copied(),
                        );
                    }
                    for u in cand {
                        let row = match changed[ti].get(&u) {
                            Some(Some(r)) => r.clone(),
                            Some(None) => continue,
                            None => match self.tables[ti].get(&u) {
                                Some(r) => (**r).clone(),
                                None => continue,
                            },
                        };
                        let mut newrow = row.clone();
                        let mut touched = false;
                        // A committed row outside the transaction is only
                        // visited because it may point at a row deleted now:
                        // only those references go (older dangling ones, which
                        // ovsdb-server 3.1 can leave behind, are not touched).
                        // (Rows the operations rewrote without a real change
                        // count as outside: ovsdb-server drops them first.)
                        let untouched = match (changed[ti].get(&u), self.tables[ti].get(&u)) {
                            (None, _) => true,
                            (Some(Some(n)), Some(o)) => n.cols == o.cols,
                            _ => false,
                        };
                        for &ci in weak_cols {
                            let c = &t.columns[ci];
                            let kt = c.ty.key.ref_table.as_ref().and_then(|n| meta.table(n));
                            let vt =
                                c.ty.value
                                    .as_ref()
                                    .and_then(|v| v.ref_table.as_ref())
                                    .and_then(|n| meta.table(n));
                            let kweak = c.ty.key.is_weak_ref();
                            let vweak =
                                c.ty.value
                                    .as_ref()
                                    .map(|v| v.is_weak_ref())
                                    .unwrap_or(false);
                            let dangling = |a: &Atom, tt: Option<usize>| -> bool {
                                match (a, tt) {
                                    (Atom::Uuid(x), _) if untouched => deleted.contains(x),
                                    (Atom::Uuid(x), Some(tt)) => !exists(changed, tt, x),
                                    _ => false,
                                }
                            };
                            match &mut newrow.cols[ci] {
                                Datum::Set(s) if kweak => {
                                    let before = s.len();
                                    s.retain(|a| !dangling(a, kt));
                                    touched |= s.len() != before;
                                }
                                Datum::Map(m) => {
                                    let before = m.len();
                                    m.retain(|k, v| {
                                        !(kweak && dangling(k, kt) || vweak && dangling(v, vt))
                                    });
                                    touched |= m.len() != before;
                                }
                                _ => {}
                            }
                            if touched {
                                let d = &newrow.cols[ci];
                                if (d.len() as u32) < c.ty.min {
                                    return Err(Error::constraint(format!(
                                    "Deletion of weak reference(s) leaves column {}.{} with too few elements.",
                                    t.name, c.name
                                )));
                                }
                            }
                        }
                        if touched {
                            changed[ti].insert(u, Some(newrow));
                        }
                    }
                }
            }
            // 2. Strong references of the resulting database: the
            //    committed counts plus what the changed rows add and drop.
            let mut delta: HashMap<Uuid, (usize, i64)> = HashMap::new();
            let mut broken = false;
            for ti in 0..n {
                let refcols = &self.strong_cols[ti];
                for (u, r) in &changed[ti] {
                    if !refcols.is_empty() {
                        if let Some(old) = self.tables[ti].get(u) {
                            each_strong_ref(refcols, &old.cols, |tt, x| {
                                delta.entry(x).or_insert((tt, 0)).1 -= 1;
                            });
                        }
                        if let Some(new) = r {
                            each_strong_ref(refcols, &new.cols, |tt, x| {
                                broken |= !exists(changed, tt, &x);
                                delta.entry(x).or_insert((tt, 0)).1 += 1;
                            });
                        }
                    }
                }
            }
            // A deleted row that something still points to.
            for rows in changed.iter() {
                for (u, r) in rows {
                    if r.is_none() {
                        let left = self.strong_refs.get(u).copied().unwrap_or(0) as i64
                            + delta.get(u).map(|d| d.1).unwrap_or(0);
                        broken |= left > 0;
                    }
                }
            }
            if broken {
                // Rare: walk the whole database for the exact error
                // ovsdb-server reports (the first offending reference).
                self.strong_ref_error(changed)?;
                return Err(Error::referential("reference to a deleted row"));
            }
            let count = |x: &Uuid, delta: &HashMap<Uuid, (usize, i64)>| -> i64 {
                self.strong_refs.get(x).copied().unwrap_or(0) as i64
                    + delta.get(x).map(|d| d.1).unwrap_or(0)
            };
            // 3. Garbage-collect unreferenced non-root rows: those the
            //    transaction wrote and those that lost a reference.
            let mut doomed: Vec<(usize, Uuid)> = Vec::new();
            for (ti, tmeta) in meta.tables.iter().enumerate() {
                if tmeta.is_root {
                    continue;
                }
                for (u, r) in &changed[ti] {
                    if r.is_some() && count(u, &delta) <= 0 {
                        doomed.push((ti, *u));
                    }
                }
            }
            for (x, (tt, d)) in &delta {
                if *d < 0
                    && !meta.tables[*tt].is_root
                    && exists(changed, *tt, x)
                    && count(x, &delta) <= 0
                {
                    doomed.push((*tt, *x));
                }
            }
            doomed.sort_unstable();
            doomed.dedup();
            let collected = !doomed.is_empty();
            for (ti, u) in doomed {
                changed[ti].insert(u, None);
            }
            if collected && loops <= 64 {
                continue;
            }
            if ovs31 && !assessed {
                assessed = true;
                // Removing a weak value can drop a strong key of the same
                // map pair: check the strong references once more then.
                if self.assess_weak_refs_3_1(changed, order)? {
                    continue;
                }
            }
            return Ok(());
        }
    }

    /// ovsdb-server 3.1's weak-reference assessment (`assess_weak_refs`,
    /// run by `for_each_txn_row` in its ovsdb/transaction.c), after garbage
    /// collection. The transaction's rows are assessed table by table (in
    /// the order the tables joined the transaction) and within a table in
    /// OVS `hmap` order of the UUID's first word ([`ovsdb::json::Hmap`],
    /// shared with `ovsdb::Database`'s replay of the same rule). Assessing
    /// a deleted row queues the removal of its referrers' references to it
    /// and adds untouched referrers to the transaction (at the end of their
    /// table's hmap); a referrer drops the queued references when it is
    /// assessed, so one assessed *before* the deleted row keeps them: they
    /// dangle. Every assessed row also drops references it adds that point
    /// to missing rows; in optional (max 1) columns the whole value counts
    /// as added, so those never keep a dangling reference.
    ///
    /// The transaction's rows: those the operations really changed (an
    /// `update` writing the values a row already has never joins; other
    /// no-op modifications are dropped first, with a table left empty by that,
    /// after growing the hmap), in first-touch order; then rows collected as garbage and rows whose
    /// strong reference count changed (in table and UUID order, an
    /// approximation of the order ovsdb-server adds them in, which only
    /// matters between rows of the same hash bucket).
    ///
    /// Returns whether a column holding strong references changed.
    fn assess_weak_refs_3_1(
        &self,
        changed: &mut [BTreeMap<Uuid, Option<Row>>],
        order: &[(usize, Uuid)],
    ) -> Result<bool> {
        use ovsdb::json::Hmap;
        let meta = self.meta.clone();
        let n = meta.tables.len();
        // Rows deleted by the transaction (that existed before it).
        let deleted: BTreeSet<(usize, Uuid)> = (0..n)
            .flat_map(|ti| {
                changed[ti]
                    .iter()
                    .filter(move |(u, r)| r.is_none() && self.tables[ti].contains_key(u))
                    .map(move |(u, _)| (ti, *u))
            })
            .collect();
        if deleted.is_empty() && !self.any_weak_added(changed) {
            return Ok(false);
        }
        let real_change = |changed: &[BTreeMap<Uuid, Option<Row>>], ti: usize, u: &Uuid| match (
            changed[ti].get(u),
            self.tables[ti].get(u),
        ) {
            (Some(None), Some(_)) => true,
            (Some(Some(_)), None) => true,
            (Some(Some(a)), Some(b)) => a.cols != b.cols,
            _ => false,
        };
        // The transaction's tables (each with its hmap of row ids) and rows.
        let mut nodes: Vec<(usize, Uuid)> = Vec::new();
        let mut index: HashMap<(usize, Uuid), usize> = HashMap::new();
        let mut tables: Vec<Hmap> = Vec::new();
        let mut table_pos: Vec<Option<usize>> = vec![None; n];
        // The operations' rows go into their table's hmap in first-touch
        // order; rows that turn out not to change (no-op modifications,
        // inserts deleted or collected again) are removed from it again.
        // They still grew the hmap, which decides the order of the others
        // in a bucket. A table left empty is dropped.
        let mut table_order: Vec<usize> = Vec::new();
        for &(ti, _) in order {
            if !table_order.contains(&ti) {
                table_order.push(ti);
            }
        }
        for ti in table_order {
            let mut h = Hmap::new();
            let mut ids: Vec<(usize, Uuid)> = Vec::new();
            for &(t, u) in order {
                if t == ti {
                    let id = nodes.len();
                    nodes.push((ti, u));
                    h.insert(u.first_word(), id);
                    ids.push((id, u));
                }
            }
            let mut kept = false;
            for (id, u) in ids {
                if real_change(changed, ti, &u) {
                    index.insert((ti, u), id);
                    kept = true;
                } else {
                    h.remove(u.first_word(), id);
                }
            }
            if kept {
                table_pos[ti] = Some(tables.len());
                tables.push(h);
            }
        }
        let mut add =
            |nodes: &mut Vec<(usize, Uuid)>, tables: &mut Vec<Hmap>, ti: usize, u: Uuid| -> usize {
                if let Some(&id) = index.get(&(ti, u)) {
                    return id;
                }
                let id = nodes.len();
                nodes.push((ti, u));
                index.insert((ti, u), id);
                let tp = *table_pos[ti].get_or_insert_with(|| {
                    tables.push(Hmap::new());
                    tables.len() - 1
                });
                if let Some(h) = tables.get_mut(tp) {
                    h.insert(u.first_word(), id);
                }
                id
            };
        // Collected rows, and rows whose strong reference count changed.
        let mut later: BTreeSet<(usize, Uuid)> = BTreeSet::new();
        for (ti, rows) in changed.iter().enumerate() {
            let refcols = &self.strong_cols[ti];
            for (u, r) in rows.iter() {
                if r.is_none() && self.tables[ti].contains_key(u) {
                    later.insert((ti, *u));
                }
                if refcols.is_empty() {
                    continue;
                }
                let mut old_refs: BTreeMap<(usize, Uuid), i64> = BTreeMap::new();
                if let Some(o) = self.tables[ti].get(u) {
                    each_strong_ref(refcols, &o.cols, |tt, x| {
                        *old_refs.entry((tt, x)).or_insert(0) -= 1;
                    });
                }
                if let Some(nr) = r {
                    each_strong_ref(refcols, &nr.cols, |tt, x| {
                        *old_refs.entry((tt, x)).or_insert(0) += 1;
                    });
                }
                for ((tt, x), d) in old_refs {
                    if d != 0 && self.tables[tt].contains_key(&x) {
                        later.insert((tt, x));
                    }
                }
            }
        }
        for (ti, u) in later {
            add(&mut nodes, &mut tables, ti, u);
        }
        // Referrers of each deleted row: committed rows that weakly
        // reference it (ovsdb-server's `dst_refs`).
        let mut referrers: BTreeMap<(usize, Uuid), Vec<(usize, Uuid)>> = BTreeMap::new();
        if !deleted.is_empty() {
            for si in 0..n {
                for &ci in &self.weak_cols[si] {
                    let c = &meta.tables[si].columns[ci];
                    let kt = c.ty.key.ref_table.as_ref().and_then(|x| meta.table(x));
                    let vt =
                        c.ty.value
                            .as_ref()
                            .filter(|v| v.is_weak_ref())
                            .and_then(|v| v.ref_table.as_ref())
                            .and_then(|x| meta.table(x));
                    let kt = kt.filter(|_| c.ty.key.is_weak_ref());
                    // Only columns pointing into a table with deletions.
                    let hit =
                        |t: Option<usize>| t.is_some_and(|t| deleted.iter().any(|d| d.0 == t));
                    if !hit(kt) && !hit(vt) {
                        continue;
                    }
                    for (su, row) in &self.tables[si] {
                        let mut note = |tt: Option<usize>, a: &Atom| {
                            if let (Some(tt), Atom::Uuid(x)) = (tt, a) {
                                if deleted.contains(&(tt, *x)) {
                                    let v = referrers.entry((tt, *x)).or_default();
                                    if !v.contains(&(si, *su)) {
                                        v.push((si, *su));
                                    }
                                }
                            }
                        };
                        match row.cols.get(ci) {
                            Some(Datum::Set(s)) => s.iter().for_each(|a| note(kt, a)),
                            Some(Datum::Map(m)) => m.iter().for_each(|(k, v)| {
                                note(kt, k);
                                note(vt, v);
                            }),
                            None => {}
                        }
                    }
                }
            }
        }
        // for_each_txn_row: passes until a pass assesses no row.
        let mut done: Vec<bool> = Vec::new();
        let mut queued: HashMap<(usize, Uuid), BTreeSet<(usize, Uuid)>> = HashMap::new();
        let mut strong_changed = false;
        loop {
            let mut any = false;
            let mut tp = 0;
            while tp < tables.len() {
                loop {
                    let mut did = false;
                    let mut cur = tables.get(tp).and_then(Hmap::first);
                    while let Some(id) = cur {
                        let Some(&(ti, u)) = nodes.get(id) else {
                            break;
                        };
                        // HMAP_FOR_EACH_SAFE takes the next node first.
                        cur = tables.get(tp).and_then(|h| h.next(u.first_word(), id));
                        if done.len() < nodes.len() {
                            done.resize(nodes.len(), false);
                        }
                        if done[id] {
                            continue;
                        }
                        done[id] = true;
                        did = true;
                        any = true;
                        if deleted.contains(&(ti, u)) {
                            for &(si, su) in referrers.get(&(ti, u)).into_iter().flatten() {
                                if !exists_now(self, changed, si, &su) {
                                    continue;
                                }
                                let sid = add(&mut nodes, &mut tables, si, su);
                                if done.get(sid).copied() != Some(true) {
                                    queued.entry((si, su)).or_default().insert((ti, u));
                                }
                            }
                        } else if exists_now(self, changed, ti, &u) {
                            let q = queued.remove(&(ti, u)).unwrap_or_default();
                            strong_changed |= self.assess_row_3_1(changed, ti, u, &q)?;
                        }
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
        Ok(strong_changed)
    }

    /// Whether a row of the transaction adds a weak reference (to be
    /// checked even when nothing was deleted).
    fn any_weak_added(&self, changed: &[BTreeMap<Uuid, Option<Row>>]) -> bool {
        changed.iter().enumerate().any(|(ti, rows)| {
            !self.weak_cols[ti].is_empty()
                && rows.iter().any(|(u, r)| match (r, self.tables[ti].get(u)) {
                    (Some(nr), Some(o)) => self.weak_cols[ti]
                        .iter()
                        .any(|&ci| nr.cols.get(ci) != o.cols.get(ci)),
                    (Some(_), None) => true,
                    _ => false,
                })
        })
    }

    /// Assesses one row (`assess_weak_refs` for a row that exists after
    /// the transaction): drops the references to `queued` deleted rows
    /// that it already had, and added references to rows that do not
    /// exist (for an optional column, its whole value). Fails when that
    /// leaves a column below its minimum size. Returns whether a column
    /// holding strong references changed.
    fn assess_row_3_1(
        &self,
        changed: &mut [BTreeMap<Uuid, Option<Row>>],
        ti: usize,
        u: Uuid,
        queued: &BTreeSet<(usize, Uuid)>,
    ) -> Result<bool> {
        let meta = self.meta.clone();
        let t = &meta.tables[ti];
        let old = self.tables[ti].get(&u).cloned();
        let mut row = match changed[ti].get(&u) {
            Some(Some(r)) => r.clone(),
            Some(None) => return Ok(false),
            None => match &old {
                Some(o) => (**o).clone(),
                None => return Ok(false),
            },
        };
        let mut touched = false;
        let mut strong_changed = false;
        for &ci in &self.weak_cols[ti] {
            let Some(c) = t.columns.get(ci) else {
                continue;
            };
            let weak_target = |ty: Option<&ovsdb::types::BaseType>| {
                ty.filter(|b| b.is_weak_ref())
                    .and_then(|b| b.ref_table.as_ref())
                    .and_then(|x| meta.table(x))
            };
            let kt = weak_target(Some(&c.ty.key));
            let vt = weak_target(c.ty.value.as_ref());
            let composite = c.ty.is_composite();
            let old_d = old.as_ref().and_then(|o| o.cols.get(ci));
            let is_queued = |tt: Option<usize>, a: &Atom| match (tt, a) {
                (Some(tt), Atom::Uuid(x)) => queued.contains(&(tt, *x)),
                _ => false,
            };
            let missing = |tt: Option<usize>, a: &Atom| match (tt, a) {
                (Some(tt), Atom::Uuid(x)) => !exists_now(self, changed, tt, x),
                _ => false,
            };
            let Some(d) = row.cols.get(ci) else {
                continue;
            };
            let before = d.len();
            let new_d = match d {
                Datum::Set(s) => {
                    let had = |a: &Atom| matches!(old_d, Some(Datum::Set(o)) if o.contains(a));
                    let mut s = s.clone();
                    s.retain(|a| {
                        let added = !composite || !had(a);
                        !(is_queued(kt, a) || added && missing(kt, a))
                    });
                    Datum::Set(s)
                }
                Datum::Map(m) => {
                    let had = |k: &Atom, v: &Atom| matches!(old_d, Some(Datum::Map(o)) if o.get(k) == Some(v));
                    let mut m = m.clone();
                    m.retain(|k, v| {
                        let q = had(k, v) && (is_queued(kt, k) || is_queued(vt, v));
                        let added = !composite || !had(k, v);
                        !(q || added && (missing(kt, k) || missing(vt, v)))
                    });
                    Datum::Map(m)
                }
            };
            if new_d.len() != before {
                if (new_d.len() as u32) < c.ty.min {
                    return Err(Error::constraint(format!(
                        "Deletion of weak reference(s) leaves column {}.{} with too few elements.",
                        t.name, c.name
                    )));
                }
                touched = true;
                strong_changed |= self.strong_cols[ti].iter().any(|rc| rc.col == ci);
                if let Some(slot) = row.cols.get_mut(ci) {
                    *slot = new_d;
                }
            }
        }
        if touched {
            changed[ti].insert(u, Some(row));
        }
        Ok(strong_changed)
    }

    /// The first strong reference of the resulting database to a row that
    /// does not exist, as an error (in table and row order, like the
    /// whole-database check it stands for). Only called once the
    /// incremental counts found a problem.
    fn strong_ref_error(&self, changed: &[BTreeMap<Uuid, Option<Row>>]) -> Result<()> {
        let meta = self.meta.clone();
        let exists = |t: usize, u: &Uuid| -> bool {
            match changed[t].get(u) {
                Some(x) => x.is_some(),
                None => self.tables[t].contains_key(u),
            }
        };
        for (ti, t) in meta.tables.iter().enumerate() {
            let refcols = &self.strong_cols[ti];
            if refcols.is_empty() {
                continue;
            }
            for (src, cols) in rows_after(&self.tables[ti], &changed[ti]) {
                // Column by column, as ovsdb-server reports the first one.
                for rc in refcols {
                    let mut first = None;
                    each_strong_ref(std::slice::from_ref(rc), cols, |tt, x| {
                        if first.is_none() && !exists(tt, &x) {
                            first = Some((tt, x));
                        }
                    });
                    if let Some((tt, x)) = first {
                        return Err(Error::referential(format!(
                            "Table {} column {} row {} references nonexistent row {} in table {}.",
                            t.name, t.columns[rc.col].name, src, x, meta.tables[tt].name
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A table's rows as they are after a transaction's writes (`changed`:
/// `None` = deleted): the committed rows it did not write, then the rows
/// it wrote and kept.
fn rows_after<'a>(
    committed: &'a BTreeMap<Uuid, RowRef>,
    changed: &'a BTreeMap<Uuid, Option<Row>>,
) -> impl Iterator<Item = (Uuid, &'a Vec<Datum>)> + 'a {
    committed
        .iter()
        .filter(|(u, _)| !changed.contains_key(u))
        .map(|(u, r)| (*u, &r.cols))
        .chain(
            changed
                .iter()
                .filter_map(|(u, r)| r.as_ref().map(|r| (*u, &r.cols))),
        )
}

/// The committed rows' keys of one unique index, by a 64-bit hash of the
/// key: hash → row (the hash in a `Uuid`, so the map is the same type as a
/// table's and adds no code to the wasm). `pure` is false once two
/// committed rows were seen with one hash (the same key, from rows
/// replayed without the check, or a collision); the check then compares
/// rows again, as before.
#[derive(Debug, Clone)]
pub(crate) struct KeyIndex {
    rows: BTreeMap<Uuid, RowRef>,
    pure: bool,
}

impl Default for KeyIndex {
    fn default() -> Self {
        KeyIndex {
            rows: BTreeMap::new(),
            pure: true,
        }
    }
}

/// FNV-1a over the key's atoms (the index's columns of `cols`).
fn key_hash(idx: &[usize], cols: &[Datum]) -> Uuid {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for &x in b {
            h ^= u64::from(x);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    let mut atom = |a: &Atom| match a {
        Atom::Integer(n) => eat(&n.to_le_bytes()),
        Atom::Real(x) => eat(&x.to_bits().to_le_bytes()),
        Atom::Boolean(b) => eat(&[u8::from(*b)]),
        Atom::String(s) => {
            eat(s.as_bytes());
            eat(&[0xff]);
        }
        Atom::Uuid(u) => eat(&u.as_u128().to_le_bytes()),
    };
    for &c in idx {
        match &cols[c] {
            Datum::Set(s) => s.iter().for_each(&mut atom),
            Datum::Map(m) => m.iter().for_each(|(k, v)| {
                atom(k);
                atom(v);
            }),
        }
        atom(&Atom::Boolean(true));
    }
    Uuid(u128::from(h))
}

impl KeyIndex {
    /// Row `old` lets go of its key (an install's first pass).
    pub(crate) fn remove(&mut self, idx: &[usize], old: &RowRef) {
        let h = key_hash(idx, &old.cols);
        if self.rows.get(&h).is_some_and(|r| r.uuid == old.uuid) {
            self.rows.remove(&h);
        }
    }

    /// Row `new` holds its key (an install's second pass).
    pub(crate) fn insert(&mut self, idx: &[usize], new: &RowRef) {
        if let Some(other) = self.rows.insert(key_hash(idx, &new.cols), new.clone()) {
            if other.uuid != new.uuid {
                self.pure = false;
            }
        }
    }
}

/// [`first_duplicate`] through the committed rows' keys, for a few
/// written rows: each written row, in UUID order, looks up the committed
/// row that holds its key (if the transaction leaves that row alone) and
/// the written rows before it. The scan reads the committed rows it left
/// alone first, then the written ones in UUID order (`rows_after`), so the
/// first written row with an earlier holder is the scan's answer. Many
/// written rows, or keys that are not pure, take the scan itself.
/// Whether commits keep and use [`KeyIndex`]: not in the web worker, whose
/// gzipped wasm is held under 1 MB (BENCHMARKS.md); there the check scans,
/// with the same result (`the_key_lookup_finds_the_pair_the_scan_finds`).
pub(crate) const KEY_INDEX: bool = cfg!(not(target_arch = "wasm32"));

pub(crate) fn first_duplicate_indexed(
    idx: &[usize],
    keys: &KeyIndex,
    committed: &BTreeMap<Uuid, RowRef>,
    changed: &BTreeMap<Uuid, Option<Row>>,
) -> Option<(Uuid, Uuid)> {
    if !KEY_INDEX {
        return first_duplicate(idx, committed, changed);
    }
    let written: Vec<(Uuid, Uuid, &[Datum])> = changed
        .iter()
        .filter_map(|(u, r)| {
            r.as_ref()
                .map(|r| (key_hash(idx, &r.cols), *u, &r.cols[..]))
        })
        .collect();
    if !keys.pure || written.len() > 32 {
        return first_duplicate(idx, committed, changed);
    }
    let same = |a: &[Datum], b: &[Datum]| idx.iter().all(|&c| a[c] == b[c]);
    for (i, (h, u, cols)) in written.iter().enumerate() {
        let held = keys
            .rows
            .get(h)
            .filter(|r| !changed.contains_key(&r.uuid) && same(&r.cols, cols))
            .map(|r| r.uuid)
            .or_else(|| {
                written[..i]
                    .iter()
                    .find(|(h2, _, c2)| h2 == h && same(c2, cols))
                    .map(|w| w.1)
            });
        if let Some(first) = held {
            return Some((first, *u));
        }
    }
    None
}

/// The first two rows, in [`rows_after`] order, that unique index `idx`
/// (column numbers) finds equal after the transaction: `(earlier, later)`.
///
/// The committed rows satisfy the index, so a duplicate always involves a
/// row the transaction wrote: with few written rows only the rows whose key
/// equals a written row's key are tracked, which keeps the check one pass
/// of comparisons instead of a map of every row's key per transaction (the
/// simulator's hour runs commit thousands of ports into one index). With
/// many written rows it builds the map. Both give the same pair.
pub(crate) fn first_duplicate(
    idx: &[usize],
    committed: &BTreeMap<Uuid, RowRef>,
    changed: &BTreeMap<Uuid, Option<Row>>,
) -> Option<(Uuid, Uuid)> {
    let same = |a: &[Datum], b: &[Datum]| {
        idx.iter()
            .all(|&c| a[c].cmp(&b[c]) == std::cmp::Ordering::Equal)
    };
    let written: Vec<&Vec<Datum>> = changed
        .values()
        .filter_map(|r| r.as_ref().map(|r| &r.cols))
        .collect();
    if written.len() > 32 {
        let mut seen: BTreeMap<Vec<&Datum>, Uuid> = BTreeMap::new();
        for (u, cols) in rows_after(committed, changed) {
            let key: Vec<&Datum> = idx.iter().map(|&c| &cols[c]).collect();
            if let Some(other) = seen.insert(key, u) {
                return Some((other, u));
            }
        }
        return None;
    }
    // Per written key (by its first holder in `written`), the first row seen
    // with it.
    let mut first: Vec<Option<Uuid>> = vec![None; written.len()];
    for (u, cols) in rows_after(committed, changed) {
        let Some(k) = written.iter().position(|w| same(w, cols)) else {
            continue;
        };
        match first[k] {
            Some(other) => return Some((other, u)),
            None => first[k] = Some(u),
        }
    }
    None
}

/// A column holding strong references: its index and the tables its keys
/// and values point into.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RefCol {
    pub(crate) col: usize,
    pub(crate) key: Option<usize>,
    pub(crate) value: Option<usize>,
}

/// Calls `f(target table, uuid)` for every strong reference in `cols`.
pub(crate) fn each_strong_ref(refcols: &[RefCol], cols: &[Datum], mut f: impl FnMut(usize, Uuid)) {
    for rc in refcols {
        match &cols[rc.col] {
            Datum::Set(s) => {
                if let Some(kt) = rc.key {
                    for a in s {
                        if let Atom::Uuid(x) = a {
                            f(kt, *x);
                        }
                    }
                }
            }
            Datum::Map(m) => {
                for (k, v) in m {
                    if let (Some(kt), Atom::Uuid(x)) = (rc.key, k) {
                        f(kt, *x);
                    }
                    if let (Some(vt), Atom::Uuid(x)) = (rc.value, v) {
                        f(vt, *x);
                    }
                }
            }
        }
    }
}

/// Whether row `u` of table `t` exists once the transaction's `changed`
/// rows are applied.
fn exists_now(s: &Server, changed: &[BTreeMap<Uuid, Option<Row>>], t: usize, u: &Uuid) -> bool {
    match changed.get(t).and_then(|m| m.get(u)) {
        Some(x) => x.is_some(),
        None => s.tables.get(t).is_some_and(|m| m.contains_key(u)),
    }
}

pub(crate) fn has_ref(ty: &Type) -> bool {
    ty.key.ref_table.is_some()
        || ty
            .value
            .as_ref()
            .map(|v| v.ref_table.is_some())
            .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::{first_duplicate, first_duplicate_indexed, KeyIndex};
    use crate::testkit::{json, server, tx, U1, U2, U3};
    use crate::{Row, ServerOptions};
    use ovsdb::datum::Datum;
    use ovsdb::uuid::Uuid;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    #[test]
    fn a_strong_reference_to_a_missing_row_names_table_column_and_rows() {
        let mut s = server(ServerOptions::default());
        let r = tx(
            &mut s,
            &format!(
                r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a","kids":["uuid","{U3}"]}}}}]"#
            ),
        );
        assert_eq!(
            r,
            format!(
                r#"[{{"uuid":["uuid","{U1}"]}},{{"error":"referential integrity violation","details":"Table R column kids row {U1} references nonexistent row {U3} in table K."}}]"#
            )
        );
    }

    #[test]
    fn unreferenced_children_are_collected_and_weak_references_dropped() {
        // Off: every weak reference to a deleted row goes at once.
        let mut s = server(ServerOptions {
            weak_refs_as_ovs_3_1: false,
            ..Default::default()
        });
        let r = tx(
            &mut s,
            &format!(
                r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a","kids":["named-uuid","k"]}}}},
                    {{"op":"insert","table":"K","uuid":"{U3}","uuid-name":"k","row":{{"v":1}}}},
                    {{"op":"insert","table":"K","row":{{"v":2}}}},
                    {{"op":"insert","table":"R","uuid":"{U2}","row":{{"name":"b","w":["uuid","{U1}"]}}}}]"#
            ),
        );
        assert!(!r.contains("error"), "{r}");
        // The K row nothing refers to was collected at commit.
        assert_eq!(s.row_count("K"), 1);
        let ops = json(r#"[{"op":"delete","table":"R","where":[["name","==","a"]]}]"#);
        let (out, _) = s.transact(ops.as_array().unwrap());
        let mut changed: Vec<(usize, String, bool, bool)> = out
            .commit
            .unwrap()
            .changes
            .iter()
            .map(|c| {
                (
                    c.table,
                    c.uuid.to_string(),
                    c.old.is_some(),
                    c.new.is_some(),
                )
            })
            .collect();
        changed.sort();
        // Tables by name (K = 0, R = 1): `a` deleted, its only child
        // collected, `b` lost its weak reference.
        assert_eq!(
            changed,
            [
                (0, U3.to_string(), true, false),
                (1, U1.to_string(), true, false),
                (1, U2.to_string(), true, true),
            ]
        );
        assert_eq!(
            s.dump().to_string_compact(),
            format!(
                r#"{{"R":{{"{U2}":{{"kids":["set",[]],"m":["map",[]],"n":0,"name":"b","s":["set",[]],"w":["set",[]]}}}}}}"#
            )
        );
    }

    #[test]
    fn first_duplicate_finds_the_earlier_and_the_later_row() {
        let row = |u: &str, name: &str| Row {
            uuid: Uuid::parse(u).unwrap(),
            version: Uuid::NIL,
            cols: vec![Datum::scalar(ovsdb::atom::Atom::String(name.into()))],
        };
        let (u1, u2, u3) = (
            Uuid::parse(U1).unwrap(),
            Uuid::parse(U2).unwrap(),
            Uuid::parse(U3).unwrap(),
        );
        let committed =
            BTreeMap::from([(u1, Arc::new(row(U1, "x"))), (u3, Arc::new(row(U3, "y")))]);
        // Writing `y` into U2 clashes with the committed U3.
        let changed = BTreeMap::from([(u2, Some(row(U2, "y")))]);
        assert_eq!(first_duplicate(&[0], &committed, &changed), Some((u3, u2)));
        // Rewriting U3 to `z` at the same time removes the clash.
        let changed = BTreeMap::from([(u2, Some(row(U2, "y"))), (u3, Some(row(U3, "z")))]);
        assert_eq!(first_duplicate(&[0], &committed, &changed), None);
        // Deleting U1 and reusing its key elsewhere is fine too.
        let changed = BTreeMap::from([(u1, None), (u2, Some(row(U2, "x")))]);
        assert_eq!(first_duplicate(&[0], &committed, &changed), None);
    }

    /// On random tables and transactions (keys from a small alphabet, so
    /// duplicates are common, rows that pass keys between them, deletes),
    /// the lookup through the committed keys names the same pair as the
    /// scan of every row, and none when there is none.
    #[test]
    fn the_key_lookup_finds_the_pair_the_scan_finds() {
        let mut rng = crate::rng::SplitMix64::new(7);
        let mut below = |n: u64| rng.next_u64() % n;
        let name = |k: u64| Datum::scalar(ovsdb::atom::Atom::String(format!("k{k}")));
        let uuid = |n: u64| Uuid::parse(&format!("00000000-0000-0000-0000-{n:012x}")).unwrap();
        let mut found = 0;
        for _ in 0..3000 {
            let rows = below(12);
            let mut committed = BTreeMap::new();
            let mut keys = KeyIndex::default();
            for (i, k) in (0..rows).map(|i| (i, i * 3)) {
                let r = Row {
                    uuid: uuid(i * 7 + 1),
                    version: Uuid::NIL,
                    cols: vec![name(k)],
                };
                let r = Arc::new(r);
                keys.insert(&[0], &r);
                committed.insert(r.uuid, r);
            }
            let mut changed = BTreeMap::new();
            for _ in 0..1 + below(6) {
                let u = uuid(1 + below(rows * 7 + 8));
                let row = (below(5) > 0).then(|| Row {
                    uuid: u,
                    version: Uuid::NIL,
                    cols: vec![name(below(rows * 3 + 2))],
                });
                changed.insert(u, row);
            }
            let scan = first_duplicate(&[0], &committed, &changed);
            let lookup = first_duplicate_indexed(&[0], &keys, &committed, &changed);
            assert_eq!(lookup, scan, "{committed:?} {changed:?}");
            found += usize::from(scan.is_some());
        }
        assert!(found > 300, "{found}");
    }
}
