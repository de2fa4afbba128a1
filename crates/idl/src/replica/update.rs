//! Applying `update`, `update2` and `update3` row changes to the replica
//! ([`Idl::apply_table_updates`]): inserting, modifying (whole values or
//! column diffs) and deleting rows, and keeping the indexes up to date.

use super::{
    IRow, Idl, IdlError, IndexPolicy, ALERT, CHANGE_DELETE, CHANGE_INSERT, CHANGE_MODIFY, TRACK,
};
use ovsdb::datum::Datum;
use ovsdb::json::Json;
use ovsdb::uuid::Uuid;

impl Idl {
    fn index_remove(&mut self, t: usize, u: Uuid) {
        let ids = self.tables[t].indexes.clone();
        if ids.is_empty() {
            return;
        }
        if let Some(r) = self.tables[t].rows.get(&u) {
            for i in ids {
                self.indexes[i].remove(u, &r.data);
            }
        }
    }

    fn index_add(&mut self, t: usize, u: Uuid) {
        let ids = self.tables[t].indexes.clone();
        if ids.is_empty() {
            return;
        }
        if let Some(r) = self.tables[t].rows.get(&u) {
            for i in ids {
                self.indexes[i].insert(u, &r.data);
            }
        }
    }

    fn clear_replica(&mut self) {
        self.refs_in.clear();
        for t in 0..self.tables.len() {
            for i in self.tables[t].indexes.clone() {
                self.indexes[i].clear();
            }
            let tt = &mut self.tables[t];
            tt.rows.clear();
            tt.tracked.clear();
            tt.deleted.clear();
        }
        self.seqno += 1;
    }

    /// Applies `<table-updates>` (version 1) or `<table-updates2>` (2 and
    /// 3). With `clear`, the replica is flushed first. Returns whether the
    /// IDL seqno moved.
    pub fn apply_table_updates(
        &mut self,
        version: u8,
        tu: &Json,
        clear: bool,
    ) -> Result<bool, IdlError> {
        let before = self.seqno;
        if clear {
            self.clear_replica();
        }
        let tables = tu
            .as_object()
            .ok_or_else(|| IdlError("<table-updates> is not an object".into()))?;
        for (tname, rows) in tables.iter() {
            let Some(t) = self.meta.table(tname) else {
                continue;
            };
            let rows = rows
                .as_object()
                .ok_or_else(|| IdlError(format!("<table-update> for {tname} is not an object")))?;
            for (us, ru) in rows.iter() {
                let u = Uuid::parse(us).ok_or_else(|| IdlError(format!("bad row UUID {us}")))?;
                let ro = ru
                    .as_object()
                    .ok_or_else(|| IdlError("<row-update> is not an object".into()))?;
                self.rows_applied += 1;
                let changed = if version == 1 {
                    match (ro.get("old"), ro.get("new")) {
                        (_, Some(new)) if !self.tables[t].rows.contains_key(&u) => {
                            self.insert_row(t, u, new)?
                        }
                        (Some(_), Some(new)) => self.modify_row(t, u, new, false)?,
                        (Some(_), None) => self.delete_row(t, u)?,
                        (None, Some(_)) => {
                            return Err(IdlError(format!(
                                "cannot add existing row {u} to table {tname}"
                            )))
                        }
                        (None, None) => {
                            return Err(IdlError("row update has neither old nor new".into()))
                        }
                    }
                } else if let Some(r) = ro.get("initial").or_else(|| ro.get("insert")) {
                    if self.tables[t].rows.contains_key(&u) {
                        return Err(IdlError(format!(
                            "cannot add existing row {u} to table {tname}"
                        )));
                    }
                    self.insert_row(t, u, r)?
                } else if let Some(d) = ro.get("modify") {
                    self.modify_row(t, u, d, true)?
                } else if let Some(d) = ro.get("delete") {
                    if !d.is_null() {
                        return Err(IdlError("delete must carry null".into()));
                    }
                    self.delete_row(t, u)?
                } else {
                    return Err(IdlError("unknown <row-update2>".into()));
                };
                if changed {
                    self.seqno += 1;
                }
            }
        }
        Ok(self.seqno != before)
    }

    fn insert_row(&mut self, t: usize, u: Uuid, row: &Json) -> Result<bool, IdlError> {
        let meta = self.meta.clone();
        let tm = &meta.tables[t];
        let ro = row
            .as_object()
            .ok_or_else(|| IdlError("<row> is not an object".into()))?;
        // Parse everything first so that a bad value leaves no trace.
        let mut data: Vec<Datum> = tm
            .columns
            .iter()
            .map(|c| Datum::default_for(&c.ty))
            .collect();
        let mut changed_cols = Vec::new();
        for (cn, v) in ro.iter() {
            let Some(ci) = tm.column(cn) else { continue };
            let d = Datum::from_json(v, &tm.columns[ci].ty)
                .map_err(|e| IdlError(format!("{}.{cn}: {e}", tm.name)))?;
            if data[ci] != d {
                data[ci] = d;
                changed_cols.push(ci);
            }
        }
        let n = data.len();
        // A tracked row deleted earlier and re-inserted: forget the copy.
        self.tables[t].deleted.remove(&u);
        self.tables[t].rows.insert(
            u,
            IRow {
                data,
                change_seqno: [0; 3],
                updated: vec![false; n],
                tracked: false,
            },
        );
        for ci in changed_cols {
            self.note_change(t, u, CHANGE_INSERT, ci);
        }
        self.index_add(t, u);
        self.refs_add(t, u);
        self.track_referrers(u);
        Ok(true)
    }

    fn modify_row(&mut self, t: usize, u: Uuid, row: &Json, diff: bool) -> Result<bool, IdlError> {
        let meta = self.meta.clone();
        let tm = &meta.tables[t];
        if !self.tables[t].rows.contains_key(&u) {
            return Err(IdlError(format!(
                "cannot modify missing row {u} in table {}",
                tm.name
            )));
        }
        let ro = row
            .as_object()
            .ok_or_else(|| IdlError("<row> is not an object".into()))?;
        // Which columns arrive, to decide about re-indexing.
        let ids = self.tables[t].indexes.clone();
        let reindex = !ids.is_empty()
            && match self.index_policy {
                IndexPolicy::EveryModify => true,
                IndexPolicy::IndexedColumnsChanged => ids.iter().any(|&i| {
                    self.indexes[i]
                        .columns
                        .iter()
                        .any(|&c| ro.contains_key(&tm.columns[c].name))
                }),
            };
        if reindex {
            self.index_remove(t, u);
        }
        // Parse every value first so that malformed input leaves the row
        // untouched; diffs are then applied in place (O(d·log n); each
        // apply checks the resulting size before mutating).
        let mut parsed: Vec<(usize, Datum)> = Vec::new();
        for (cn, v) in ro.iter() {
            let Some(ci) = tm.column(cn) else { continue };
            let ty = &tm.columns[ci].ty;
            let d = if diff {
                Datum::diff_from_json(v, ty)
            } else {
                Datum::from_json(v, ty)
            };
            match d {
                Ok(d) => parsed.push((ci, d)),
                Err(e) => {
                    if reindex {
                        self.index_add(t, u);
                    }
                    return Err(IdlError(format!("{}.{cn}: {e}", tm.name)));
                }
            }
        }
        let mut changed = false;
        let mut tracked_change = false;
        let mut failure = None;
        self.refs_remove(t, u);
        for (ci, d) in parsed {
            let ty = &tm.columns[ci].ty;
            let Some(r) = self.tables[t].rows.get_mut(&u) else {
                break;
            };
            let col_changed = if diff {
                match r.data[ci].apply_diff(&d, ty) {
                    Ok(()) => true,
                    Err(e) => {
                        failure = Some(IdlError(format!(
                            "{}.{}: {e}",
                            tm.name, tm.columns[ci].name
                        )));
                        break;
                    }
                }
            } else if r.data[ci] != d {
                r.data[ci] = d;
                true
            } else {
                false
            };
            if col_changed {
                if self.modes[t][ci] & ALERT != 0 {
                    changed = true;
                }
                if self.modes[t][ci] & TRACK != 0 {
                    tracked_change = true;
                }
                self.note_change(t, u, CHANGE_MODIFY, ci);
            }
        }
        self.refs_add(t, u);
        if tracked_change {
            self.track_referrers(u);
        }
        if let Some(e) = failure {
            if reindex {
                self.index_add(t, u);
            }
            return Err(e);
        }
        if reindex {
            self.index_add(t, u);
        }
        Ok(changed)
    }

    fn delete_row(&mut self, t: usize, u: Uuid) -> Result<bool, IdlError> {
        if !self.tables[t].rows.contains_key(&u) {
            return Err(IdlError(format!(
                "cannot delete missing row {u} from table {}",
                self.meta.tables[t].name
            )));
        }
        self.index_remove(t, u);
        self.refs_remove(t, u);
        self.track_referrers(u);
        let tracked = self.table_tracked(t);
        let s = self.seqno + 1;
        let tt = &mut self.tables[t];
        let Some(mut r) = tt.rows.remove(&u) else {
            return Ok(false);
        };
        if tracked {
            r.change_seqno[CHANGE_DELETE] = s;
            tt.change_seqno[CHANGE_DELETE] = s;
            if !r.tracked {
                r.tracked = true;
                tt.tracked.push(u);
            }
            tt.deleted.insert(u, r);
        } else {
            tt.change_seqno[CHANGE_DELETE] = s;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{idl, json, shown, update2, uuid, P, TAGS, U1, U2, V};
    use super::super::IdlError;

    #[test]
    fn update2_applies_set_diffs_and_update_replaces_whole_values() {
        let mut i = idl();
        let s0 = i.seqno();
        assert!(update2(
            &mut i,
            &format!(r#"{{"P":{{"{U1}":{{"insert":{{"name":"a","tags":["set",["x","y"]]}}}}}}}}"#)
        ));
        // A diff toggles members: x leaves, z arrives.
        update2(
            &mut i,
            &format!(r#"{{"P":{{"{U1}":{{"modify":{{"tags":["set",["x","z"]],"v":4}}}}}}}}"#),
        );
        assert_eq!(shown(&i.read(P, uuid(U1), TAGS)), r#"["set",["y","z"]]"#);
        assert_eq!(shown(&i.read(P, uuid(U1), V)), "4");
        // Version 1: `new` holds whole values.
        let tu = json(&format!(
            r#"{{"P":{{"{U1}":{{"old":{{"v":4}},"new":{{"name":"a","tags":"q","v":5}}}}}}}}"#
        ));
        assert!(i.apply_table_updates(1, &tu, false).unwrap());
        assert_eq!(shown(&i.read(P, uuid(U1), TAGS)), r#""q""#);
        assert_eq!(i.seqno(), s0 + 3);
        // Unknown tables are skipped; clearing empties the replica first.
        let tu = json(&format!(
            r#"{{"Nope":{{}},"P":{{"{U2}":{{"initial":{{"name":"b"}}}}}}}}"#
        ));
        assert!(i.apply_table_updates(3, &tu, true).unwrap());
        assert_eq!(i.row_uuids(P), [uuid(U2)]);
    }

    #[test]
    fn inconsistent_updates_are_refused_with_the_reason() {
        let mut i = idl();
        update2(
            &mut i,
            &format!(r#"{{"P":{{"{U1}":{{"insert":{{"name":"a"}}}}}}}}"#),
        );
        let apply = |i: &mut super::super::Idl, tu: String| {
            i.apply_table_updates(2, &json(&tu), false).unwrap_err()
        };
        assert_eq!(
            apply(&mut i, format!(r#"{{"P":{{"{U1}":{{"insert":{{}}}}}}}}"#)),
            IdlError(format!("cannot add existing row {U1} to table P"))
        );
        assert_eq!(
            apply(&mut i, format!(r#"{{"P":{{"{U2}":{{"delete":null}}}}}}"#)),
            IdlError(format!("cannot delete missing row {U2} from table P"))
        );
        assert_eq!(
            apply(&mut i, format!(r#"{{"P":{{"{U1}":{{"delete":{{}}}}}}}}"#)),
            IdlError("delete must carry null".into())
        );
        assert_eq!(
            apply(&mut i, format!(r#"{{"P":{{"{U1}":{{"frob":{{}}}}}}}}"#)),
            IdlError("unknown <row-update2>".into())
        );
        // The row is as it was.
        assert_eq!(shown(&i.read(P, uuid(U1), 0)), r#""a""#);
    }
}
