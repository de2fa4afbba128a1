//! The server's rows and its commit engine: an `ovsdb::Database`
//! ([`Core`]) holds every committed row (the core's [`Row`]: the columns
//! in [`DbMeta`]'s order, then `_uuid` and `_version`), and a transaction
//! of it ([`Core::begin`]) is where a `transact`'s operations run (they
//! read the rows it has written) and does the commit-time work
//! ovsdb-server's `ovsdb_txn_precommit` does: strong reference counts and
//! their check, garbage collection of unreferenced non-root rows,
//! weak-reference removal in ovsdb-server 3.1's order, `maxRows` and the
//! unique indexes (with `ReplayOptions::server_checks`, in the words and
//! order of a `transact` reply; the indexes through the committed keys the
//! core keeps, `Database::keep_key_indexes`); the rows its change list
//! names are the commit's. A checked commit (a prepared one, a log record)
//! is put in place without a transaction ([`Core::write`]), its rows
//! shared.

use crate::DbMeta;
use ovsdb::db::{Database, ReplayOptions, RowMap, Txn, TxnChanges};
use ovsdb::schema::TableSchema;
use std::sync::Arc;

/// The rows in an `ovsdb::Database` whose tables have the metadata's
/// columns in its order (a row's column numbers are the metadata's), and
/// how its tables (the schema's order) map to the metadata's (name order).
#[derive(Debug, Clone)]
pub(crate) struct Core {
    pub(crate) db: Database,
    /// Per metadata table: the core's.
    ti: Arc<Vec<usize>>,
    /// Per core table: the metadata's.
    meta_of: Arc<Vec<usize>>,
}

impl Core {
    pub(crate) fn new(meta: &DbMeta) -> Core {
        let mut schema = (*meta.schema).clone();
        let mut meta_of = vec![0; schema.tables.len()];
        let mut ti = vec![0; meta.tables.len()];
        for (x, ts) in schema.tables.iter_mut().enumerate() {
            let mt = meta.table(&ts.name).unwrap_or(0);
            meta_of[x] = mt;
            ti[mt] = x;
            let cols = meta.tables[mt].columns.iter();
            let cols = cols.filter_map(|c| ts.column(&c.name).cloned()).collect();
            let indexes = std::mem::take(&mut ts.indexes);
            *ts = TableSchema::in_given_order(
                &ts.name,
                cols,
                ts.mutable,
                ts.is_root,
                ts.max_rows,
                indexes,
            );
        }
        let mut db = Database::new(Arc::new(schema));
        db.keep_key_indexes();
        Core {
            db,
            ti: Arc::new(ti),
            meta_of: Arc::new(meta_of),
        }
    }

    /// Per metadata table: the core's table.
    pub(crate) fn tables(&self) -> Arc<Vec<usize>> {
        self.ti.clone()
    }

    /// Per core table: the metadata's table.
    pub(crate) fn meta_tables(&self) -> Arc<Vec<usize>> {
        self.meta_of.clone()
    }

    /// The committed rows of metadata table `mt`.
    pub(crate) fn rows(&self, mt: usize) -> &RowMap {
        &self
            .db
            .table_at(self.ti[mt])
            .expect("a table of the schema")
            .rows
    }

    /// Puts already checked changes (a prepared commit, a log record) in
    /// place without recomputing their effects: the core then holds each
    /// change's new row itself (shared, not copied).
    pub(crate) fn write(&mut self, changes: &TxnChanges) {
        let map = self.ti.clone();
        let rows = changes
            .rows()
            .map(|(mt, ch)| (map[mt], ch.uuid, ch.new.clone()));
        self.db.place_shared_rows(rows);
    }

    /// A transaction for one `transact`: its operations write into it, and
    /// its [`Txn::precommit`] runs the commit's checks and work; kept
    /// ([`Txn::keep`]) or dropped, which rolls it back.
    pub(crate) fn begin(&mut self) -> Txn<'_> {
        self.db.begin_with(ReplayOptions {
            server_checks: true,
            atoms_checked: true,
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{json, server, tx, U1, U2, U3};
    use crate::{ServerOptions, ServerRow};
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
        let mut s = server(ServerOptions::default());
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
            .rows()
            .map(|(t, c)| (t, c.uuid.to_string(), c.old.is_some(), c.new.is_some()))
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

    /// A row of a root table nothing refers to goes through the core's
    /// transaction like any other, with or without references; the core
    /// holds it, and its children are collected when it goes.
    #[test]
    fn rows_of_unreferenced_root_tables_go_through_the_transaction() {
        let schema = r#"{"name":"s","version":"1.0.0","tables":{
          "S":{"isRoot":true,"columns":{"n":{"type":"integer"},
            "to":{"type":{"key":{"type":"uuid","refTable":"K"},"min":0,"max":"unlimited"}}}},
          "K":{"columns":{"v":{"type":"integer"}}}}}"#;
        let mut s = crate::Server::from_schema_text(schema, ServerOptions::default()).unwrap();
        let r = tx(
            &mut s,
            &format!(r#"[{{"op":"insert","table":"S","uuid":"{U1}","row":{{"n":1}}}}]"#),
        );
        assert!(!r.contains("error"), "{r}");
        assert_eq!((s.row_count("S"), s.core.db.row_count()), (1, 1));
        let r = tx(
            &mut s,
            r#"[{"op":"insert","table":"K","uuid-name":"k","row":{"v":2}},
                {"op":"update","table":"S","where":[],"row":{"to":["named-uuid","k"]}}]"#,
        );
        assert!(!r.contains("error"), "{r}");
        assert_eq!((s.row_count("K"), s.core.db.row_count()), (1, 2));
        let (out, _) = s.transact(
            json(r#"[{"op":"delete","table":"S","where":[]}]"#)
                .as_array()
                .unwrap(),
        );
        // The child went with its only parent.
        assert_eq!(out.commit.unwrap().changes.row_count(), 2);
        assert_eq!((s.row_count("K"), s.core.db.row_count()), (0, 0));
    }

    /// The committed rows are the core's own: a commit's new rows are the
    /// ones the core holds, a prepared commit leaves them alone (its old
    /// rows are the committed ones), and installing it keeps its rows and
    /// `_version`s.
    #[test]
    fn commits_share_the_cores_rows_and_a_prepare_leaves_them_alone() {
        let mut s = server(ServerOptions::default());
        let ops = format!(r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a"}}}}]"#);
        let (out, _) = s.transact(json(&ops).as_array().unwrap());
        let commit = out.commit.unwrap();
        let u1 = U1.parse().unwrap();
        let committed = s.get_row(1, u1).unwrap().clone();
        let first = |c: &crate::Commit| c.changes.rows().next().unwrap().1.clone();
        assert!(Arc::ptr_eq(
            first(&commit).new.as_ref().unwrap(),
            &committed
        ));
        assert!(!committed.version().is_nil());
        let ops = json(r#"[{"op":"update","table":"R","where":[],"row":{"n":5}}]"#);
        let prepared = s.prepare(ops.as_array().unwrap()).commit.unwrap();
        let now = s.get_row(1, u1).unwrap();
        assert_eq!(
            (now.cols(), now.version()),
            (committed.cols(), committed.version())
        );
        assert!(Arc::ptr_eq(
            first(&prepared).old.as_ref().unwrap(),
            &committed
        ));
        s.apply_commit(&prepared).unwrap();
        let now = s.get_row(1, u1).unwrap();
        let new = first(&prepared).new.unwrap();
        assert!(Arc::ptr_eq(now, &new));
        assert_eq!(now.cols()[2].to_json().to_string_compact(), "5");
        assert_eq!(s.core.db.row_count(), 1);
    }
}
