//! Configuration: which tables and columns are replicated and how
//! (the per-column [`MONITOR`], [`ALERT`], [`TRACK`] and
//! [`WRITE_CHANGED_ONLY`] modes), the monitor version, the lock the
//! client wants, and the ordered indexes (creating and querying them).

use super::{Idl, State, UsageError, ALERT, MONITOR, TRACK, WRITE_CHANGED_ONLY};
use crate::index::{Index, IndexStats};
use ovsdb::datum::Datum;
use ovsdb::json::Json;
use ovsdb::uuid::Uuid;

impl Idl {
    /// Positions of `table`.`column`, or the error naming what is unknown.
    fn tc(&self, table: &str, column: &str) -> Result<(usize, usize), UsageError> {
        let t = self
            .meta
            .table(table)
            .ok_or_else(|| UsageError::UnknownTable(table.to_string()))?;
        let c = self.meta.tables[t]
            .column(column)
            .ok_or_else(|| UsageError::UnknownColumn {
                table: table.to_string(),
                column: column.to_string(),
            })?;
        Ok((t, c))
    }

    pub(super) fn valid(&self, table: usize, column: usize) -> bool {
        self.meta
            .tables
            .get(table)
            .is_some_and(|t| column < t.columns.len())
    }

    pub fn table_index(&self, table: &str) -> Option<usize> {
        self.meta.table(table)
    }

    pub fn column_index(&self, table: usize, column: &str) -> Option<usize> {
        self.meta.tables.get(table).and_then(|t| t.column(column))
    }

    /// The column's mode bits (0 for an unknown column).
    pub fn mode(&self, table: &str, column: &str) -> u8 {
        self.tc(table, column)
            .map(|(t, c)| self.modes[t][c])
            .unwrap_or(0)
    }

    /// Sets the column's mode bits. An unknown table or column is an
    /// error naming it (the C IDL asserts instead); nothing changes then.
    /// The same holds for every mode call below.
    pub fn set_mode(&mut self, table: &str, column: &str, mode: u8) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        self.modes[t][c] = mode;
        if mode & MONITOR != 0 {
            self.needed[t] = true;
        }
        Ok(())
    }

    /// `add_column`: MONITOR|ALERT.
    pub fn add_column(&mut self, table: &str, column: &str) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        self.modes[t][c] |= MONITOR | ALERT;
        self.needed[t] = true;
        Ok(())
    }

    /// `add_table`: replicate the table's rows even with no columns.
    pub fn add_table(&mut self, table: &str) -> Result<(), UsageError> {
        let t = self
            .meta
            .table(table)
            .ok_or_else(|| UsageError::UnknownTable(table.to_string()))?;
        self.needed[t] = true;
        Ok(())
    }

    /// `omit`: mode 0.
    pub fn omit(&mut self, table: &str, column: &str) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        self.modes[t][c] = 0;
        Ok(())
    }

    /// `omit_alert`: clears ALERT and TRACK (the column becomes write-only).
    pub fn omit_alert(&mut self, table: &str, column: &str) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        self.modes[t][c] &= !(ALERT | TRACK);
        self.modes[t][c] |= MONITOR;
        self.needed[t] = true;
        Ok(())
    }

    /// `track_add_column`: a column without ALERT is first added (so a
    /// write-only column silently becomes read/write), then TRACK is set.
    pub fn track_add_column(&mut self, table: &str, column: &str) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        if self.modes[t][c] & ALERT == 0 {
            self.modes[t][c] |= MONITOR | ALERT;
        }
        self.modes[t][c] |= TRACK;
        self.needed[t] = true;
        Ok(())
    }

    pub fn track_add_all(&mut self) {
        for t in 0..self.modes.len() {
            for c in 0..self.modes[t].len() {
                if self.modes[t][c] & ALERT == 0 {
                    self.modes[t][c] |= MONITOR | ALERT;
                }
                self.modes[t][c] |= TRACK;
            }
            self.needed[t] = true;
        }
    }

    pub fn set_write_changed_only(
        &mut self,
        table: &str,
        column: &str,
        on: bool,
    ) -> Result<(), UsageError> {
        let (t, c) = self.tc(table, column)?;
        if on {
            self.modes[t][c] |= WRITE_CHANGED_ONLY;
        } else {
            self.modes[t][c] &= !WRITE_CHANGED_ONLY;
        }
        Ok(())
    }

    pub fn set_write_changed_only_all(&mut self, on: bool) {
        for t in &mut self.modes {
            for m in t.iter_mut() {
                if on {
                    *m |= WRITE_CHANGED_ONLY;
                } else {
                    *m &= !WRITE_CHANGED_ONLY;
                }
            }
        }
    }

    /// Which monitor method to use: 3 = `monitor_cond_since` (default),
    /// 2 = `monitor_cond`, 1 = `monitor`.
    pub fn set_monitor_version(&mut self, v: u8) {
        self.monitor_version = v.clamp(1, 3);
    }

    /// The monitor method version in use (after any fallback).
    pub fn monitor_version(&self) -> u8 {
        self.monitor_version
    }

    /// Sets the lock this client needs (C `ovsdb_idl_set_lock`): it is
    /// requested when monitoring starts (or now, if already monitoring);
    /// transactions assert it and are not sent while it is not held.
    pub fn set_lock(&mut self, name: Option<&str>) {
        self.lock = name.map(str::to_string);
        self.has_lock = false;
        if self.state == State::Monitoring {
            self.request_lock();
        }
    }

    /// Whether the configured lock is held.
    pub fn has_lock(&self) -> bool {
        self.has_lock
    }

    pub(super) fn request_lock(&mut self) {
        if let Some(l) = self.lock.clone() {
            let (id, msg) = self.request("lock", vec![Json::String(l)]);
            self.lock_req_id = Some(id);
            self.outgoing.push(msg);
        }
    }

    /// Creates an ordered index on `columns` of `table`; returns its id
    /// (None for an unknown table or column).
    pub fn index_create(&mut self, table: &str, columns: &[&str]) -> Option<usize> {
        let cols: Vec<(&str, bool)> = columns.iter().map(|c| (*c, false)).collect();
        self.index_create_ordered(table, &cols)
    }

    /// Like [`Idl::index_create`], with a descending flag per column
    /// (`OVSDB_INDEX_DESC`).
    pub fn index_create_ordered(&mut self, table: &str, columns: &[(&str, bool)]) -> Option<usize> {
        let t = self.meta.table(table)?;
        let cols: Vec<usize> = columns
            .iter()
            .map(|(c, _)| self.meta.tables[t].column(c))
            .collect::<Option<_>>()?;
        let desc: Vec<bool> = columns.iter().map(|(_, d)| *d).collect();
        let mut idx = Index::with_order(t, cols, &desc);
        for (u, r) in &self.tables[t].rows {
            idx.insert(*u, &r.data);
        }
        self.indexes.push(idx);
        let id = self.indexes.len() - 1;
        self.tables[t].indexes.push(id);
        Some(id)
    }

    pub fn index_stats(&self, id: usize) -> IndexStats {
        self.indexes.get(id).map(|i| i.stats).unwrap_or_default()
    }

    pub fn index_find_eq(&mut self, id: usize, values: &[Datum]) -> Vec<Uuid> {
        self.indexes
            .get_mut(id)
            .map(|i| i.find_eq(values))
            .unwrap_or_default()
    }

    pub fn index_range(
        &mut self,
        id: usize,
        from: Option<&[Datum]>,
        to: Option<&[Datum]>,
    ) -> Vec<Uuid> {
        self.indexes
            .get_mut(id)
            .map(|i| i.range(from, to))
            .unwrap_or_default()
    }

    pub fn index_all(&self, id: usize) -> Vec<Uuid> {
        self.indexes.get(id).map(|i| i.all()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{idl, update2, uuid, P, U1, U2, U3};
    use super::super::{UsageError, ALERT, MONITOR, TRACK, WRITE_CHANGED_ONLY};
    use ovsdb::atom::Atom;
    use ovsdb::datum::Datum;
    use ovsdb_server::meta::DbMeta;
    use std::sync::Arc;

    #[test]
    fn modes_combine_as_the_c_idl_sets_them_and_unknown_names_are_errors() {
        let meta = Arc::new(DbMeta::from_text(super::super::testkit::SCHEMA).unwrap());
        let mut i = super::super::Idl::new(meta, false);
        assert_eq!(i.mode("P", "v"), 0);
        i.add_column("P", "v").unwrap();
        assert_eq!(i.mode("P", "v"), MONITOR | ALERT);
        i.omit_alert("P", "v").unwrap();
        assert_eq!(i.mode("P", "v"), MONITOR);
        // Tracking a write-only column makes it read/write again.
        i.track_add_column("P", "v").unwrap();
        assert_eq!(i.mode("P", "v"), MONITOR | ALERT | TRACK);
        i.set_write_changed_only("P", "v", true).unwrap();
        assert_eq!(
            i.mode("P", "v"),
            MONITOR | ALERT | TRACK | WRITE_CHANGED_ONLY
        );
        i.omit("P", "v").unwrap();
        assert_eq!(i.mode("P", "v"), 0);
        assert_eq!(
            i.add_column("Nope", "v"),
            Err(UsageError::UnknownTable("Nope".into()))
        );
        assert_eq!(
            i.track_add_column("P", "nope"),
            Err(UsageError::UnknownColumn {
                table: "P".into(),
                column: "nope".into()
            })
        );
    }

    #[test]
    fn an_index_follows_the_updates_and_answers_equality_and_ranges() {
        let mut i = idl();
        let by_v = i.index_create("P", &["v"]).unwrap();
        assert_eq!(i.index_create("P", &["nope"]), None);
        update2(
            &mut i,
            &format!(
                r#"{{"P":{{"{U1}":{{"insert":{{"v":2}}}},"{U2}":{{"insert":{{"v":1}}}},"{U3}":{{"insert":{{"v":2}}}}}}}}"#
            ),
        );
        let two = [Datum::scalar(Atom::Integer(2))];
        assert_eq!(i.index_find_eq(by_v, &two), [uuid(U1), uuid(U3)]);
        assert_eq!(i.index_all(by_v), [uuid(U2), uuid(U1), uuid(U3)]);
        update2(
            &mut i,
            &format!(r#"{{"P":{{"{U1}":{{"modify":{{"v":5}}}}}}}}"#),
        );
        assert_eq!(i.index_find_eq(by_v, &two), [uuid(U3)]);
        assert_eq!(i.index_all(by_v), [uuid(U2), uuid(U3), uuid(U1)]);
        let (lo, hi) = (
            [Datum::scalar(Atom::Integer(2))],
            [Datum::scalar(Atom::Integer(9))],
        );
        assert_eq!(
            i.index_range(by_v, Some(&lo), Some(&hi)),
            [uuid(U3), uuid(U1)]
        );
        // As the C IDL, a modify removes and re-inserts the row.
        let s = i.index_stats(by_v);
        assert_eq!((s.inserts, s.deletes), (4, 1));
        assert_eq!(i.row_count(P), 3);
    }
}
