//! A transaction on a [`Database`]: its operations (insert, set, modify,
//! delete, with per-column tracking for rollback), its commit (reference
//! checks, garbage collection of unreferenced non-root rows, the
//! weak-reference clean-up in ovsdb-server 3.1's order, unique indexes),
//! its change list ([`TxnChanges`]) and its rollback. The database's own
//! state and reference counting are in the parent module.

use super::*;

/// A transaction in progress on a [`Database`]. Dropping it without
/// [`Txn::commit`] rolls it back.
pub struct Txn<'a> {
    pub(super) db: &'a mut Database,
    pub(super) st: TxnState,
    pub(super) done: bool,
}

impl<'a> Txn<'a> {
    /// The database as modified so far by this transaction.
    pub fn db(&self) -> &Database {
        self.db
    }

    pub(super) fn table_index(&self, table: &str) -> Result<usize> {
        self.db
            .schema
            .table_index(table)
            .ok_or_else(|| Error::syntax(format!("No table named {}.", table)))
    }

    pub(super) fn column_index(&self, ti: usize, column: &str) -> Result<usize> {
        let ts = &self.db.schema.tables[ti];
        ts.column_index(column)
            .filter(|_| !column.starts_with('_'))
            .ok_or_else(|| Error::syntax(format!("No column {} in table {}.", column, ts.name)))
    }

    pub(super) fn touch(&mut self, ti: usize, u: Uuid) -> &mut RowTrack {
        // One search of the tracking, not one to test and one to enter.
        let st = &mut self.st;
        match st.rows.entry((ti, u)) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                st.order.push((ti, u));
                if !st.table_order.contains(&ti) {
                    st.table_order.push(ti);
                }
                e.insert(RowTrack::default())
            }
        }
    }

    /// Inserts row `uuid` into `table` with the given column values (others
    /// default).
    pub fn insert(&mut self, table: &str, uuid: Uuid, values: Vec<(String, Datum)>) -> Result<()> {
        let ti = self.table_index(table)?;
        let mut cols = Vec::with_capacity(values.len());
        for (c, d) in values {
            cols.push((self.column_index(ti, &c)?, d));
        }
        self.insert_at(ti, uuid, cols)
    }

    /// Replaces a column's value.
    pub fn set(&mut self, table: &str, uuid: Uuid, column: &str, value: Datum) -> Result<()> {
        let ti = self.table_index(table)?;
        let ci = self.column_index(ti, column)?;
        self.set_at(ti, uuid, ci, value)
    }

    /// Applies a column diff (§4.3).
    pub fn apply_diff(
        &mut self,
        table: &str,
        uuid: Uuid,
        column: &str,
        diff: &Datum,
    ) -> Result<()> {
        let ti = self.table_index(table)?;
        let ci = self.column_index(ti, column)?;
        self.apply_diff_at(ti, uuid, ci, diff)
    }

    /// Deletes a row.
    pub fn delete(&mut self, table: &str, uuid: Uuid) -> Result<()> {
        let ti = self.table_index(table)?;
        self.delete_at(ti, uuid)
    }

    /// Inserts a row given column indexes.
    pub fn insert_at(&mut self, ti: usize, u: Uuid, values: Vec<(usize, Datum)>) -> Result<()> {
        let Some(ts) = self.db.schema.tables.get(ti) else {
            return Err(Error::syntax("no such table"));
        };
        let dup = || duplicate(ts, u);
        // A row the transaction tracks, first; a row in the table is found
        // by the insert itself (below), unless a value is bad: then the
        // duplicate is still the error reported.
        if self.st.rows.contains_key(&(ti, u)) {
            return Err(dup());
        }
        let present = |db: &Database| db.tables[ti].rows.contains_key(&u);
        // Given values are moved in; only the other columns get their
        // defaults (a default with `min` 1 is an allocation).
        let n = ts.columns.len();
        let mut columns: Vec<Datum> = Vec::with_capacity(n);
        columns.resize_with(n, Datum::default);
        let mut given = vec![false; n];
        for (ci, d) in values {
            let Some(c) = ts.columns.get(ci) else {
                return Err(if present(self.db) {
                    dup()
                } else {
                    Error::syntax("no such column")
                });
            };
            if !self.st.atoms_checked {
                if let Err(e) = d.check_atoms(&c.ty) {
                    return Err(if present(self.db) {
                        dup()
                    } else {
                        e.context(format!("column {}", c.name))
                    });
                }
            }
            columns[ci] = d;
            given[ci] = true;
        }
        for (ci, c) in ts.columns.iter().enumerate() {
            if !given[ci] && !c.is_implicit() {
                columns[ci] = Datum::default_for(&c.ty);
            }
        }
        if !self.put_new_row(ti, Arc::new(Row { uuid: u, columns })) {
            return Err(duplicate(&self.db.schema.tables[ti], u));
        }
        Ok(())
    }

    /// Inserts a row given whole (a value for every column of the table,
    /// in its order, `_uuid` and `_version` included as the caller keeps
    /// them), held as it is: the caller may share it.
    pub fn insert_row(&mut self, ti: usize, row: RowRef) -> Result<()> {
        let Some(ts) = self.db.schema.tables.get(ti) else {
            return Err(Error::syntax("no such table"));
        };
        let u = row.uuid;
        let dup = || duplicate(ts, u);
        // A row this transaction inserted and deleted again may come back.
        let again = match self.st.rows.get(&(ti, u)) {
            None => false,
            Some(rt) if rt.inserted => true,
            Some(_) => return Err(dup()),
        };
        // A row in the table is found by the insert itself (below), unless
        // the row is bad: then the duplicate is still the error reported.
        let mut bad = Ok(());
        if row.columns.len() != ts.columns.len() {
            bad = Err(Error::syntax("row does not have the table's columns"));
        } else if !self.st.atoms_checked {
            bad = ts
                .columns
                .iter()
                .zip(&row.columns)
                .filter(|(c, _)| !c.is_implicit())
                .try_for_each(|(c, d)| {
                    d.check_atoms(&c.ty)
                        .map_err(|e| e.context(format!("column {}", c.name)))
                });
        }
        if let Err(e) = bad {
            return Err(if self.db.tables[ti].rows.contains_key(&u) {
                dup()
            } else {
                e
            });
        }
        if !self.put_new_row(ti, row) {
            return Err(duplicate(&self.db.schema.tables[ti], u));
        }
        if again {
            self.st.explicitly_deleted.remove(&(ti, u));
            self.st.deleted_queue.retain(|&r| r != (ti, u));
        }
        Ok(())
    }

    /// The rest of an insert: the row in place, the new row's references
    /// counted (its empty columns skipped), the transaction told. False,
    /// and nothing changed, when the table has a row with its UUID (the
    /// insert is the search for one).
    #[must_use]
    pub(super) fn put_new_row(&mut self, ti: usize, row: RowRef) -> bool {
        let u = row.uuid;
        let table = self.db.table_mut(ti);
        if let Some(there) = table.rows.insert(u, row.clone()) {
            table.rows.insert(u, there);
            return false;
        }
        self.count_row_refs(ti, &row, 1);
        drop(row);
        let rt = self.touch(ti, u);
        rt.inserted = true;
        rt.gone = false;
        if !self.db.schema.tables[ti].is_root {
            self.st.gc_candidates.push((ti, u));
        }
        true
    }

    pub(super) fn check_column(&self, ti: usize, ci: usize) -> Result<()> {
        match self.db.schema.tables.get(ti) {
            Some(ts) if ci < ts.columns.len() => Ok(()),
            _ => Err(Error::syntax(format!("no column #{} in table #{}", ci, ti))),
        }
    }

    pub(super) fn check_row(&self, ti: usize, u: Uuid) -> Result<()> {
        if self
            .db
            .tables
            .get(ti)
            .is_some_and(|t| t.rows.contains_key(&u))
        {
            Ok(())
        } else {
            Err(Error::new(
                "not found",
                format!(
                    "no row {} in table {}",
                    u,
                    self.db
                        .schema
                        .tables
                        .get(ti)
                        .map_or("?", |t| t.name.as_str())
                ),
            ))
        }
    }

    /// Replaces a column given its index.
    pub fn set_at(&mut self, ti: usize, u: Uuid, ci: usize, value: Datum) -> Result<()> {
        self.write_at(ti, u, ci, value, false).map(drop)
    }

    /// [`Txn::set_at`], then the row as it now is, shared (the server
    /// model's commit writes a row's `_version` and keeps the row).
    pub fn set_at_shared(&mut self, ti: usize, u: Uuid, ci: usize, value: Datum) -> Result<RowRef> {
        let row = self.write_at(ti, u, ci, value, true)?;
        Ok(row.expect("a row just written"))
    }

    /// [`Txn::set_at`], and the row written when `want` it. A column
    /// without references is written where the row is found (one search
    /// of the table).
    pub(super) fn write_at(
        &mut self,
        ti: usize,
        u: Uuid,
        ci: usize,
        value: Datum,
        want: bool,
    ) -> Result<Option<RowRef>> {
        let column = self.check_column(ti, ci);
        let has_refs = column.is_ok() && self.db.has_refs(ti, ci) && !self.st.refs_pending;
        if has_refs || column.is_err() || ti >= self.db.tables.len() {
            self.set_at_counted(ti, u, ci, value)?;
            let now = || self.db.tables[ti].rows.get(&u).cloned();
            return Ok(if want { now() } else { None });
        }
        let db = &mut *self.db;
        let table = Arc::make_mut(&mut db.tables[ti]);
        let Some(r) = table.rows.get_mut(&u) else {
            return Err(self.check_row(ti, u).expect_err("a missing row"));
        };
        if !self.st.atoms_checked {
            value.check_atoms(&db.schema.tables[ti].columns[ci].ty)?;
        }
        // As `Table::row_mut`.
        if Arc::strong_count(r) > 1 {
            table.detached += r.approx_bytes() as u64;
        }
        let old = std::mem::replace(&mut Arc::make_mut(r).columns[ci], value);
        let row = want.then(|| r.clone());
        self.track_set(ti, u, ci, old);
        Ok(row)
    }

    /// [`Txn::set_at`] the long way: each check, then the column's
    /// references counted (a row without them too).
    pub(super) fn set_at_counted(
        &mut self,
        ti: usize,
        u: Uuid,
        ci: usize,
        value: Datum,
    ) -> Result<()> {
        self.check_row(ti, u)?;
        self.check_column(ti, ci)?;
        if !self.st.atoms_checked {
            value.check_atoms(&self.db.schema.tables[ti].columns[ci].ty)?;
        }
        let has_refs = self.db.has_refs(ti, ci) && !self.st.refs_pending;
        let Some(row) = self.db.table_mut(ti).row_mut(&u) else {
            return Ok(());
        };
        let old = if has_refs {
            // The column stays empty while the counts are adjusted (no
            // copy), and only the counts of elements that actually changed
            // are touched.
            let old = std::mem::take(&mut row.columns[ci]);
            self.db
                .adjust_refs_delta(&mut self.st, (ti, u), ci, &old, &value);
            if let Some(r) = self.db.table_mut(ti).row_mut(&u) {
                r.columns[ci] = value;
            }
            old
        } else {
            std::mem::replace(&mut row.columns[ci], value)
        };
        self.track_set(ti, u, ci, old);
        Ok(())
    }

    /// The tracking of a column written: its value before the transaction
    /// kept, unless the transaction inserted the row.
    pub(super) fn track_set(&mut self, ti: usize, u: Uuid, ci: usize, old: Datum) {
        if self.st.replaying_undo {
            return;
        }
        let rt = self.touch(ti, u);
        if rt.inserted {
            return;
        }
        use std::collections::btree_map::Entry;
        match rt.cols.entry(ci) {
            Entry::Vacant(e) => {
                e.insert(ColTrack::Old(old));
            }
            Entry::Occupied(mut e) => {
                if let ColTrack::Keys(keys) = e.get() {
                    // Rebuild the original from `old` plus the touched keys.
                    let orig = restore_keys(old, keys);
                    e.insert(ColTrack::Old(orig));
                }
            }
        }
    }

    /// Applies a diff to a column given its index: O(d log n).
    pub fn apply_diff_at(&mut self, ti: usize, u: Uuid, ci: usize, diff: &Datum) -> Result<()> {
        self.check_row(ti, u)?;
        self.check_column(ti, ci)?;
        let ty = self.db.schema.tables[ti].columns[ci].ty.clone();
        diff.check_atoms(&ty)?;
        if !ty.is_composite() {
            diff.check_size(&ty)
                .map_err(|_| Error::constraint("Datum crated by diff has size error"))?;
            return self.set_at(ti, u, ci, diff.clone());
        }
        // Size check first (no mutation on error).
        if let Some(row) = self.db.tables[ti].rows.get(&u) {
            let mut probe_n = row.columns[ci].len() as i64;
            match (&row.columns[ci], diff) {
                (Datum::Set(cur), Datum::Set(d)) => {
                    for k in d {
                        probe_n += if cur.contains(k) { -1 } else { 1 };
                    }
                }
                (Datum::Map(cur), Datum::Map(d)) => {
                    for (k, v) in d {
                        match cur.get(k) {
                            None => probe_n += 1,
                            Some(o) if o != v => {}
                            Some(_) => probe_n -= 1,
                        }
                    }
                }
                _ => return Err(Error::syntax("diff shape does not match column value")),
            }
            if probe_n < i64::from(ty.min) || probe_n > i64::from(ty.max) {
                return Err(Error::constraint("Datum crated by diff has size error"));
            }
        }
        let has_refs = self.db.has_refs(ti, ci) && !self.st.refs_pending;
        let tracking = !self.st.replaying_undo;
        if tracking {
            let rt = self.touch(ti, u);
            if !rt.inserted && !rt.cols.contains_key(&ci) {
                rt.cols.insert(ci, ColTrack::Keys(BTreeMap::new()));
            }
        }
        match diff {
            Datum::Set(d) => {
                for k in d {
                    let present = self.db.tables[ti]
                        .rows
                        .get(&u)
                        .is_some_and(|r| r.columns[ci].contains_key(k));
                    self.record_key(ti, u, ci, k, if present { Some(k.clone()) } else { None });
                    if let Some(Datum::Set(cur)) = self
                        .db
                        .table_mut(ti)
                        .row_mut(&u)
                        .map(|r| &mut r.columns[ci])
                    {
                        if present {
                            cur.remove(k);
                        } else {
                            cur.insert(k.clone());
                        }
                    }
                    if has_refs {
                        self.db.adjust_pair_refs(
                            &mut self.st,
                            (ti, u),
                            ci,
                            k,
                            None,
                            if present { -1 } else { 1 },
                        );
                    }
                }
            }
            Datum::Map(d) => {
                for (k, v) in d {
                    let old_v = self.db.tables[ti]
                        .rows
                        .get(&u)
                        .and_then(|r| r.columns[ci].as_map())
                        .and_then(|m| m.get(k).cloned());
                    self.record_key(ti, u, ci, k, old_v.clone());
                    let Some(Datum::Map(cur)) = self
                        .db
                        .table_mut(ti)
                        .row_mut(&u)
                        .map(|r| &mut r.columns[ci])
                    else {
                        continue;
                    };
                    match &old_v {
                        None => {
                            cur.insert(k.clone(), v.clone());
                            if has_refs {
                                self.db
                                    .adjust_pair_refs(&mut self.st, (ti, u), ci, k, Some(v), 1);
                            }
                        }
                        Some(o) if o != v => {
                            cur.insert(k.clone(), v.clone());
                            if has_refs {
                                // key ref unchanged; value ref replaced
                                if let Some(vt) = self.db.meta[ti].ref_of_col[ci]
                                    .and_then(|i| self.db.meta[ti].ref_cols[i].value)
                                {
                                    self.db.adjust_ref(&mut self.st, (ti, u), vt, o, ci, -1);
                                    self.db.adjust_ref(&mut self.st, (ti, u), vt, v, ci, 1);
                                }
                            }
                        }
                        Some(o) => {
                            cur.remove(k);
                            if has_refs {
                                let o = o.clone();
                                self.db.adjust_pair_refs(
                                    &mut self.st,
                                    (ti, u),
                                    ci,
                                    k,
                                    Some(&o),
                                    -1,
                                );
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn record_key(
        &mut self,
        ti: usize,
        u: Uuid,
        ci: usize,
        k: &Atom,
        orig: Option<Atom>,
    ) {
        if self.st.replaying_undo {
            return;
        }
        if let Some(rt) = self.st.rows.get_mut(&(ti, u)) {
            if let Some(ColTrack::Keys(keys)) = rt.cols.get_mut(&ci) {
                keys.entry(k.clone()).or_insert(orig);
            }
        }
    }

    /// Deletes a row given its table index.
    pub fn delete_at(&mut self, ti: usize, u: Uuid) -> Result<()> {
        self.check_row(ti, u)?;
        self.st.explicitly_deleted.insert((ti, u));
        self.remove_row(ti, u);
        Ok(())
    }

    pub(super) fn remove_row(&mut self, ti: usize, u: Uuid) {
        // Shared with the checkpoints a replay keeps: the row is not copied.
        let Some(mut row) = self.unplace_row(ti, u) else {
            return;
        };
        if self.st.replaying_undo {
            return;
        }
        self.st.deleted_queue.push((ti, u));
        let rt = self.touch(ti, u);
        if rt.inserted {
            rt.cols.clear();
            rt.gone = true;
            return;
        }
        rt.deleted = true;
        if rt.original.is_some() {
            rt.cols.clear();
            return;
        }
        // Restore the pre-transaction value of touched columns.
        for (ci, track) in std::mem::take(&mut rt.cols) {
            let r = Arc::make_mut(&mut row);
            let cur = std::mem::take(&mut r.columns[ci]);
            r.columns[ci] = match track {
                ColTrack::Old(o) => o,
                ColTrack::Keys(keys) => restore_keys(cur, &keys),
            };
        }
        rt.original = Some(row);
    }

    /// Counts the references of row `row` of table `ti` in (`delta` 1) or
    /// out (-1), unless the operations' counts are pending
    /// ([`TxnState::refs_pending`]).
    fn count_row_refs(&mut self, ti: usize, row: &Row, delta: i32) {
        if self.st.refs_pending {
            return;
        }
        for k in 0..self.db.meta[ti].ref_cols.len() {
            let ci = self.db.meta[ti].ref_cols[k].col;
            if !row.columns[ci].is_empty() {
                self.db.adjust_datum_refs(
                    &mut self.st,
                    (ti, row.uuid),
                    ci,
                    &row.columns[ci],
                    delta,
                );
            }
        }
    }

    /// A row out of its table, its references no longer counted (unless
    /// they are pending); not tracked.
    pub(super) fn unplace_row(&mut self, ti: usize, u: Uuid) -> Option<RowRef> {
        let row = self.db.table_mut(ti).remove_row(&u)?;
        self.count_row_refs(ti, &row, -1);
        Some(row)
    }

    /// Commits: GC, weak-reference cleanup, integrity and size checks. On
    /// error everything is rolled back.
    pub fn commit(mut self) -> Result<TxnChanges> {
        if let Err(e) = self.finish() {
            self.rollback();
            self.done = true;
            return Err(e);
        }
        self.done = true;
        self.db.implicit += self.st.implicit;
        self.keep_keys();
        if self.st.skip_changes {
            return Ok(TxnChanges::default());
        }
        Ok(self.build_changes())
    }

    /// The commit's work and checks (garbage collection, weak references,
    /// integrity), leaving the outcome in the database.
    pub(super) fn finish(&mut self) -> Result<()> {
        if self.st.refs_pending {
            self.count_pending_refs();
        }
        // Tables and rows the operations touched (GC appends after them).
        let (n_ops_tables, n_ops_rows) = (self.st.table_order.len(), self.st.order.len());
        if self.st.server_checks {
            // ovsdb-server counts references before it collects garbage.
            self.server_strong_ref_check()?;
        }
        // GC and weak-reference cleanup to a fixpoint.
        loop {
            let mut progressed = false;
            while let Some((tt, tu)) = self.st.gc_candidates.pop() {
                progressed = true;
                if self.db.schema.tables[tt].is_root {
                    continue;
                }
                if self.db.tables[tt].rows.contains_key(&tu)
                    && self.db.tables[tt].strong_refs(&tu) == 0
                {
                    self.remove_row(tt, tu);
                    self.st.implicit += 1;
                }
            }
            if !self.st.deleted_queue.is_empty() {
                progressed = true;
                // Built by insertion: `collect` would sort with an instance
                // of its own (the web worker's wasm is held under 1 MB).
                let deleted: BTreeSet<(usize, Uuid)> =
                    crate::order::btree_set(std::mem::take(&mut self.st.deleted_queue));
                self.assess_weak_refs(&deleted, n_ops_tables, n_ops_rows)?;
            }
            let added = std::mem::take(&mut self.st.weak_added);
            for (si, su, _col, tt, tu) in added {
                progressed = true;
                if self.db.tables[si].rows.contains_key(&su)
                    && !self.db.tables[tt].rows.contains_key(&tu)
                {
                    self.drop_weak_refs(si, su, tt, tu, false)?;
                }
            }
            if !progressed {
                break;
            }
        }
        // Strong references must point at existing rows.
        let mut to_check: Vec<(usize, Uuid)> = self.st.strong_touched.iter().copied().collect();
        to_check.extend(self.st.explicitly_deleted.iter().copied());
        for &(tt, tu) in &to_check {
            let n = self.db.tables[tt].strong_refs(&tu);
            if n > 0 && !self.db.tables[tt].rows.contains_key(&tu) {
                let tname = &self.db.schema.tables[tt].name;
                return Err(if self.st.explicitly_deleted.contains(&(tt, tu)) {
                    Error::referential(format!(
                        "cannot delete {} row {} because of {} remaining reference(s)",
                        tname, tu, n
                    ))
                } else {
                    Error::referential(format!(
                        "reference to nonexistent row {} in table {}",
                        tu, tname
                    ))
                });
            }
        }
        // Sizes of changed columns (the server model checks each value as
        // it parses or mutates it, and weak removals as they happen);
        // maxRows.
        let sized = if self.st.server_checks {
            None
        } else {
            Some(&self.st.rows)
        };
        for (&(ti, u), rt) in sized.into_iter().flatten() {
            let ts = &self.db.schema.tables[ti];
            let Some(row) = self.db.tables[ti].rows.get(&u) else {
                continue;
            };
            // The bounds compared here, the error built only for a value
            // out of them (most columns of most rows are checked).
            let check = |ci: usize| -> Result<()> {
                let (d, ty) = (&row.columns[ci], &ts.columns[ci].ty);
                let n = d.len();
                if n >= ty.min as usize && n <= ty.max as usize {
                    return Ok(());
                }
                d.check_size(ty).map_err(|e| {
                    e.context(format!("{}.{} row {}", ts.name, ts.columns[ci].name, u))
                })
            };
            if rt.inserted {
                for ci in 0..row.columns.len() {
                    if !ts.columns[ci].is_implicit() {
                        check(ci)?;
                    }
                }
            } else {
                for &ci in rt.cols.keys() {
                    check(ci)?;
                }
            }
        }
        for &ti in &self.st.table_order {
            let ts = &self.db.schema.tables[ti];
            if let Some(m) = ts.max_rows {
                if self.db.tables[ti].rows.len() > m as usize {
                    return Err(Error::constraint(format!(
                        "transaction causes \"{}\" table to contain {} rows, greater than the schema-defined limit of {} row(s)",
                        ts.name,
                        self.db.tables[ti].rows.len(),
                        m
                    )));
                }
            }
        }
        if !self.st.skip_index_check {
            self.check_indexes()?;
        }
        Ok(())
    }

    /// The change list from the tracking, which it leaves in place (a
    /// rollback after [`Txn::precommit`] still needs it).
    pub(super) fn build_changes(&self) -> TxnChanges {
        // Tables in the order their first change comes, put in the order
        // they joined the transaction at the end if that differs (no map
        // of tables to build and free for the one a commit mostly has).
        let mut out = TxnChanges::default();
        for (ti, u) in &self.st.order {
            let Some(rt) = self.st.rows.get(&(*ti, *u)) else {
                continue;
            };
            let ts = &self.db.schema.tables[*ti];
            let (kind, old, new) = if rt.inserted {
                let Some(row) = self.db.tables[*ti].rows.get(u) else {
                    continue;
                };
                (ChangeKind::Insert, None, Some(row.clone()))
            } else if rt.deleted {
                (ChangeKind::Delete, rt.original.clone(), None)
            } else {
                let Some(row) = self.db.tables[*ti].rows.get(u) else {
                    continue;
                };
                let mut cols = Vec::new();
                // Schema column order.
                for (&ci, track) in &rt.cols {
                    let ty = &ts.columns[ci].ty;
                    let cur = &row.columns[ci];
                    let track_old = self.st.track_old;
                    let (diff, old) = match track {
                        ColTrack::Old(o) => {
                            if o == cur {
                                continue;
                            }
                            (Datum::diff(o, cur, ty), track_old.then(|| o.clone()))
                        }
                        ColTrack::Keys(keys) => {
                            let d = net_diff(cur, keys);
                            if d.is_empty() {
                                continue;
                            }
                            (d, track_old.then(|| restore_keys(cur.clone(), keys)))
                        }
                    };
                    cols.push(ColumnChange {
                        column: ci,
                        diff,
                        old,
                    });
                }
                if cols.is_empty() {
                    continue;
                }
                (
                    ChangeKind::Modify { columns: cols },
                    None,
                    Some(row.clone()),
                )
            };
            let change = RowChange {
                uuid: *u,
                kind,
                old,
                new,
            };
            match out.tables.iter_mut().rev().find(|tc| tc.table == *ti) {
                Some(tc) => tc.rows.push(change),
                None => {
                    // (A Vec's first capacity, as `TxnChanges::push`.)
                    let mut rows = Vec::with_capacity(4);
                    rows.push(change);
                    out.tables.push(TableChanges { table: *ti, rows });
                }
            }
        }
        if out.tables.len() > 1 {
            let order = &self.st.table_order;
            let at = |tc: &TableChanges| order.iter().position(|&t| t == tc.table);
            if !out.tables.windows(2).all(|w| at(&w[0]) < at(&w[1])) {
                crate::order::sort_small_by(&mut out.tables, |a, b| at(a).cmp(&at(b)));
            }
        }
        out
    }

    /// Undoes everything this transaction did.
    pub(super) fn rollback(&mut self) {
        self.rollback_into(None);
    }

    /// [`Txn::rollback`], the rows it inserted that are still there handed
    /// to `taken` (if given) as they leave their tables.
    pub(super) fn rollback_into(&mut self, mut taken: Option<&mut dyn FnMut(usize, Uuid, RowRef)>) {
        self.st.replaying_undo = true;
        let order = std::mem::take(&mut self.st.order);
        let mut rows = std::mem::take(&mut self.st.rows);
        for (ti, u) in order.into_iter().rev() {
            let Some(rt) = rows.remove(&(ti, u)) else {
                continue;
            };
            if rt.inserted {
                let row = self.unplace_row(ti, u);
                if let (Some(taken), Some(row)) = (taken.as_mut(), row) {
                    taken(ti, u, row);
                }
                continue;
            }
            if rt.deleted {
                let Some(orig) = rt.original else {
                    continue;
                };
                for ci in 0..orig.columns.len() {
                    if self.db.has_refs(ti, ci) && !self.st.refs_pending {
                        self.db
                            .adjust_datum_refs(&mut self.st, (ti, u), ci, &orig.columns[ci], 1);
                    }
                }
                self.db.table_mut(ti).rows.insert(u, orig);
                continue;
            }
            if let Some(orig) = rt.original {
                // Modified in place ([`Txn::modify_at`]): the version
                // before comes back whole, its counts with it.
                if !self.st.refs_pending {
                    if let Some(cur) = self.db.tables[ti].rows.get(&u).cloned() {
                        for &ci in rt.cols.keys() {
                            if self.db.has_refs(ti, ci) {
                                let (o, n) = (&cur.columns[ci], &orig.columns[ci]);
                                self.db.adjust_refs_delta(&mut self.st, (ti, u), ci, o, n);
                            }
                        }
                    }
                }
                self.db.table_mut(ti).rows.insert(u, orig);
                continue;
            }
            for (ci, track) in rt.cols {
                let cur = match self.db.tables[ti].rows.get(&u) {
                    Some(r) => r.columns[ci].clone(),
                    None => continue,
                };
                let orig = match track {
                    ColTrack::Old(o) => o,
                    ColTrack::Keys(keys) => restore_keys(cur, &keys),
                };
                let _ = self.set_at(ti, u, ci, orig);
            }
        }
        self.st = TxnState::default();
    }
}

impl Drop for Txn<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.rollback();
        }
    }
}

/// The error of an insert whose UUID table `ts` has.
pub(super) fn duplicate(ts: &TableSchema, u: Uuid) -> Error {
    Error::new(
        "duplicate uuid",
        format!("row {} already exists in table {}", u, ts.name),
    )
}

/// The value before the transaction, from the current value and the
/// original state of the touched keys.
pub(super) fn restore_keys(mut cur: Datum, keys: &BTreeMap<Atom, Option<Atom>>) -> Datum {
    match &mut cur {
        Datum::Set(s) => {
            for (k, orig) in keys {
                if orig.is_some() {
                    s.insert(k.clone());
                } else {
                    s.remove(k);
                }
            }
        }
        Datum::Map(m) => {
            for (k, orig) in keys {
                match orig {
                    Some(v) => {
                        m.insert(k.clone(), v.clone());
                    }
                    None => {
                        m.remove(k);
                    }
                }
            }
        }
    }
    cur
}

/// The diff from the original state of the touched keys to `cur` (§4.2).
pub(super) fn net_diff(cur: &Datum, keys: &BTreeMap<Atom, Option<Atom>>) -> Datum {
    match cur {
        Datum::Set(s) => Datum::Set(
            keys.iter()
                .filter(|(k, orig)| orig.is_some() != s.contains(k))
                .map(|(k, _)| k.clone())
                .collect(),
        ),
        Datum::Map(m) => {
            let mut d = AtomMap::new();
            for (k, orig) in keys {
                match (orig, m.get(k)) {
                    (None, Some(v)) => {
                        d.insert(k.clone(), v.clone());
                    }
                    (Some(o), None) => {
                        d.insert(k.clone(), o.clone());
                    }
                    (Some(o), Some(v)) if o != v => {
                        d.insert(k.clone(), v.clone());
                    }
                    _ => {}
                }
            }
            Datum::Map(d)
        }
    }
}
