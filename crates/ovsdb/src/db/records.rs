//! A [`Database`] and the JSON of its files: a txn record applied
//! (§2.4), a transaction's changes written with full values or column
//! diffs (§2.3, §4) and their length, the whole database as a dump or as
//! a snapshot.

use super::*;

impl Database {
    /// Applies a txn record (§2.3/§2.4): the row's existence decides insert
    /// vs modify, `"_is_diff": true` makes modifications diffs. The whole
    /// record is committed with integrity checks and GC; on error the
    /// database is unchanged.
    pub fn apply_txn_json(&mut self, txn: &Json, opts: ReplayOptions) -> Result<TxnChanges> {
        let obj = txn
            .as_object()
            .ok_or_else(|| Error::syntax("transaction is not a JSON object"))?;
        let diff_mode = matches!(obj.get("_is_diff"), Some(Json::Bool(true)));
        let schema = self.schema.clone();
        let mut t = self.begin();
        t.st.track_old = opts.track_old;
        t.st.skip_index_check = opts.skip_index_check;
        t.st.skip_changes = opts.skip_changes;
        t.st.file_record_order = true;
        for (name, value) in obj.iter() {
            let ti = match schema.table_index(name) {
                Some(ti) => ti,
                None => {
                    let special = match name {
                        "_date" => matches!(value, Json::Integer(_)),
                        "_is_diff" => matches!(value, Json::Bool(_)),
                        "_comment" => true,
                        _ => false,
                    };
                    if special || opts.converting {
                        continue;
                    }
                    return Err(Error::syntax(format!("No table named {}.", name)));
                }
            };
            let ts = &schema.tables[ti];
            let rows = value
                .as_object()
                .ok_or_else(|| Error::syntax(format!("table {}: object expected", name)))?;
            for (uuid_s, row_json) in rows.iter() {
                let uuid = Uuid::parse(uuid_s)
                    .ok_or_else(|| Error::syntax(format!("\"{}\" is not a valid UUID", uuid_s)))?;
                match row_json {
                    Json::Null => {
                        if !t.db.tables[ti].rows.contains_key(&uuid) {
                            return Err(Error::syntax(format!(
                                "transaction deletes row {} that does not exist",
                                uuid
                            )));
                        }
                        t.delete_at(ti, uuid)?;
                    }
                    Json::Object(cols) => {
                        let exists = t.db.tables[ti].rows.contains_key(&uuid);
                        if !exists {
                            t.insert_at(ti, uuid, Vec::new())?;
                        }
                        for (cname, cj) in cols.iter() {
                            let ci = match ts.column_index(cname) {
                                Some(ci) if !cname.starts_with('_') => ci,
                                _ if opts.converting => continue,
                                _ => {
                                    return Err(Error::syntax(format!(
                                        "No column {} in table {}.",
                                        cname, name
                                    )))
                                }
                            };
                            let ty = &ts.columns[ci].ty;
                            let ctx =
                                |e: Error| e.context(format!("{}.{} row {}", name, cname, uuid));
                            if exists && diff_mode {
                                let d = Datum::diff_from_json(cj, ty).map_err(ctx)?;
                                t.apply_diff_at(ti, uuid, ci, &d).map_err(ctx)?;
                            } else {
                                let d = Datum::from_json(cj, ty).map_err(ctx)?;
                                t.set_at(ti, uuid, ci, d).map_err(ctx)?;
                            }
                        }
                    }
                    _ => {
                        return Err(Error::syntax(format!(
                            "row {} in table {}: object or null expected",
                            uuid, name
                        )))
                    }
                }
            }
        }
        t.commit()
    }

    /// Re-encodes a transaction's table changes as a txn record would carry
    /// them (`{table: {uuid: row-or-null}}`), without the `_date`,
    /// `_comment` and `_is_diff` members. Must be called on the database
    /// state right after the transaction (inserted and modified rows' new
    /// values are read from it). Inserts carry all non-default persistent
    /// columns; modifications carry the changed persistent columns as full
    /// values or, in [`StorageMode::Diff`], as diffs for composite columns.
    /// Tables and rows keep the change order; columns follow the schema's
    /// column order. Objects are in insertion order: call
    /// [`Object::reorder_shash`] / `Json::reorder_shash_recursive` for the
    /// C writer's hash order.
    pub fn txn_to_json(&self, changes: &TxnChanges, mode: StorageMode) -> Object {
        let mut out = Object::new();
        for tc in &changes.tables {
            let Some(ts) = self.schema.tables.get(tc.table) else {
                continue;
            };
            let mut rows = Object::new();
            for rc in &tc.rows {
                if let Some(row_json) = self.row_change_json(ts, tc.table, rc, mode) {
                    rows.push_unchecked(rc.uuid.to_text(), row_json);
                }
            }
            if !rows.is_empty() {
                out.push_unchecked(ts.name.clone(), Json::Object(rows));
            }
        }
        out
    }

    pub(super) fn row_change_json(
        &self,
        ts: &TableSchema,
        ti: usize,
        rc: &RowChange,
        mode: StorageMode,
    ) -> Option<Json> {
        match &rc.kind {
            ChangeKind::Delete => Some(Json::Null),
            ChangeKind::Insert => {
                let row = self.tables[ti].rows.get(&rc.uuid)?;
                let mut o = Object::new();
                for (ci, c) in ts.columns.iter().enumerate() {
                    if c.is_implicit() || !c.persistent {
                        continue;
                    }
                    let d = &row.columns[ci];
                    if !d.is_default(&c.ty) {
                        o.push_unchecked(c.name.clone(), d.to_json());
                    }
                }
                Some(Json::Object(o))
            }
            ChangeKind::Modify { columns } => {
                let row = self.tables[ti].rows.get(&rc.uuid)?;
                let mut o = Object::new();
                for cc in columns {
                    let c = &ts.columns[cc.column];
                    if c.is_implicit() || !c.persistent {
                        continue;
                    }
                    let v = if mode == StorageMode::Diff && c.ty.is_composite() {
                        cc.diff.to_json()
                    } else {
                        row.columns[cc.column].to_json()
                    };
                    o.push_unchecked(c.name.clone(), v);
                }
                if o.is_empty() {
                    None
                } else {
                    Some(Json::Object(o))
                }
            }
        }
    }

    /// Serialized length of [`Database::txn_to_json`]'s output, computed
    /// without building it (for storage-size accounting).
    pub fn txn_json_len(&self, changes: &TxnChanges, mode: StorageMode) -> usize {
        use crate::json::string_serialized_len as slen;
        let mut n_tables = 0usize;
        let mut total = 0usize;
        for tc in &changes.tables {
            let Some(ts) = self.schema.tables.get(tc.table) else {
                continue;
            };
            let mut n_rows = 0usize;
            let mut rows_len = 0usize;
            for rc in &tc.rows {
                let row_len = match &rc.kind {
                    ChangeKind::Delete => Some(4),
                    ChangeKind::Insert => self.tables[tc.table].rows.get(&rc.uuid).map(|row| {
                        let mut n = 0usize;
                        let mut len = 0usize;
                        for (ci, c) in ts.columns.iter().enumerate() {
                            if c.is_implicit() || !c.persistent {
                                continue;
                            }
                            let d = &row.columns[ci];
                            if !d.is_default(&c.ty) {
                                n += 1;
                                len += slen(&c.name) + 1 + d.json_len();
                            }
                        }
                        2 + len + n.saturating_sub(1)
                    }),
                    ChangeKind::Modify { columns } => {
                        self.tables[tc.table].rows.get(&rc.uuid).and_then(|row| {
                            let mut n = 0usize;
                            let mut len = 0usize;
                            for cc in columns {
                                let c = &ts.columns[cc.column];
                                if c.is_implicit() || !c.persistent {
                                    continue;
                                }
                                let v = if mode == StorageMode::Diff && c.ty.is_composite() {
                                    cc.diff.json_len()
                                } else {
                                    row.columns[cc.column].json_len()
                                };
                                n += 1;
                                len += slen(&c.name) + 1 + v;
                            }
                            (n > 0).then(|| 2 + len + n - 1)
                        })
                    }
                };
                if let Some(l) = row_len {
                    n_rows += 1;
                    rows_len += 38 + 1 + l; // "uuid": + value
                }
            }
            if n_rows > 0 {
                n_tables += 1;
                total += slen(&ts.name) + 1 + 2 + rows_len + (n_rows - 1);
            }
        }
        2 + total + n_tables.saturating_sub(1)
    }

    /// The whole database as `{table: {uuid: {column: datum}}}`: tables in
    /// name order, rows in UUID order, columns in name order. With
    /// `include_defaults` every user column is listed, else only non-default
    /// ones. `_uuid`/`_version` are not included.
    pub fn dump_json(&self, include_defaults: bool) -> Json {
        let mut tables: Vec<(usize, &TableSchema)> =
            self.schema.tables.iter().enumerate().collect();
        crate::order::sort_by(&mut tables, |a, b| a.1.name.cmp(&b.1.name));
        let mut out = Object::new();
        for (ti, ts) in tables {
            let mut cols: Vec<(usize, &str)> = ts
                .columns
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.is_implicit())
                .map(|(i, c)| (i, c.name.as_str()))
                .collect();
            crate::order::sort_by(&mut cols, |a, b| a.1.cmp(b.1));
            let mut rows = Object::new();
            for (u, row) in &self.tables[ti].rows {
                let mut o = Object::new();
                for &(ci, name) in &cols {
                    let d = &row.columns[ci];
                    if include_defaults || !d.is_default(&ts.columns[ci].ty) {
                        o.push_unchecked(name, d.to_json());
                    }
                }
                rows.push_unchecked(u.to_text(), Json::Object(o));
            }
            out.push_unchecked(ts.name.clone(), Json::Object(rows));
        }
        Json::Object(out)
    }

    /// A snapshot txn record body (`{table:{uuid:{...}}}`, full values,
    /// defaults omitted) of the whole database — what compaction writes —
    /// with tables in schema order and rows in UUID order.
    pub fn snapshot_json(&self) -> Object {
        let mut out = Object::new();
        for (ti, ts) in self.schema.tables.iter().enumerate() {
            if self.tables[ti].rows.is_empty() {
                continue;
            }
            let mut rows = Object::new();
            for (u, row) in &self.tables[ti].rows {
                let mut o = Object::new();
                for (ci, c) in ts.columns.iter().enumerate() {
                    if c.is_implicit() || !c.persistent {
                        continue;
                    }
                    if !row.columns[ci].is_default(&c.ty) {
                        o.push_unchecked(c.name.clone(), row.columns[ci].to_json());
                    }
                }
                rows.push_unchecked(u.to_text(), Json::Object(o));
            }
            out.push_unchecked(ts.name.clone(), Json::Object(rows));
        }
        out
    }
}
