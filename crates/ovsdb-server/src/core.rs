//! The server's rows and its commit engine: an `ovsdb::Database`
//! ([`Core`]) holds every committed row (the core's [`Row`]: the columns
//! in [`DbMeta`]'s order, then `_uuid` and `_version`), and its
//! transaction does the commit-time work ovsdb-server's
//! `ovsdb_txn_precommit` does: strong reference counts and their check,
//! garbage collection of unreferenced non-root rows, weak-reference
//! removal in ovsdb-server 3.1's order, `maxRows` and the unique indexes
//! (with `ReplayOptions::server_checks`, in the words and order of a
//! `transact` reply; the indexes through the committed keys the core
//! keeps, `Database::keep_key_indexes`). The operations' result is
//! written into it ([`Core::precommit`]); the rows its change list names
//! are the commit's. A checked commit (a prepared one, a log record) is
//! put in place without a transaction ([`Core::write`]), its rows shared.

use crate::{DbMeta, Row, RowRef, ServerRow};
use ovsdb::db::{ChangeKind, Database, ReplayOptions, RowMap, Txn, TxnChanges};
use ovsdb::error::Result;
use ovsdb::schema::TableSchema;
use ovsdb::types::{BaseType, Type};
use ovsdb::uuid::Uuid;
use std::collections::BTreeMap;
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
    /// Per metadata table: its columns holding references, and whether
    /// no commit rule concerns a row of it that holds none (a root table
    /// nothing refers to, without `maxRows` or unique indexes): such a
    /// row's change is the operations' own, and is put in place without
    /// the core's transaction (the simulator's logical switches).
    refs: Arc<Vec<(Vec<usize>, bool)>>,
}

/// What becomes of a row the commit changes.
#[derive(Debug)]
pub(crate) enum After {
    /// Deleted.
    Gone,
    /// Kept, as the core's transaction holds it.
    InCore,
    /// As the operations wrote it (`None`: deleted), outside the core's
    /// transaction (a row no commit rule concerns, see [`Core`]'s `refs`).
    Aside(Option<Row>),
}

/// The rows one transaction's operations wrote (`None`: deleted), per
/// metadata table. A table's map is made at its first write: a transaction
/// writes few of the schema's tables, and dropping an empty `BTreeMap`
/// still costs a walk (about 60 instructions, for each of the Northbound
/// schema's tables at every transaction).
#[derive(Debug, Default)]
pub(crate) struct Written(Vec<Option<BTreeMap<Uuid, Option<Row>>>>);

impl Written {
    /// Nothing written yet, in a schema of `tables` tables.
    pub(crate) fn new(tables: usize) -> Written {
        Written((0..tables).map(|_| None).collect())
    }

    /// What the operations left of row `u` of table `t`, if they wrote it.
    pub(crate) fn get(&self, t: usize, u: &Uuid) -> Option<&Option<Row>> {
        self.0[t].as_ref()?.get(u)
    }

    pub(crate) fn contains(&self, t: usize, u: &Uuid) -> bool {
        self.get(t, u).is_some()
    }

    pub(crate) fn insert(&mut self, t: usize, u: Uuid, row: Option<Row>) {
        self.0[t].get_or_insert_with(BTreeMap::new).insert(u, row);
    }

    pub(crate) fn remove(&mut self, t: usize, u: &Uuid) -> Option<Option<Row>> {
        self.0[t].as_mut()?.remove(u)
    }

    /// The rows written in table `t`, in UUID order.
    pub(crate) fn table(&self, t: usize) -> impl Iterator<Item = (&Uuid, &Option<Row>)> {
        self.0[t].iter().flatten()
    }
}

/// The rows the commit changes, each with its committed version and what
/// becomes of it.
pub(crate) type Found = BTreeMap<(usize, Uuid), (Option<RowRef>, After)>;

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
        let refs = meta
            .tables
            .iter()
            .map(|t| {
                let cols = t.columns.iter().enumerate();
                let refs = cols.filter(|(_, c)| has_ref(&c.ty)).map(|(i, _)| i);
                let target = meta.tables.iter().flat_map(|o| &o.columns).any(|c| {
                    let to = |b: &BaseType| b.ref_table.as_deref() == Some(t.name.as_str());
                    to(&c.ty.key) || c.ty.value.as_ref().is_some_and(to)
                });
                let aside = t.is_root && !target && t.max_rows.is_none() && t.indexes.is_empty();
                (refs.collect(), aside)
            })
            .collect();
        let mut db = Database::new(Arc::new(schema));
        db.keep_key_indexes();
        Core {
            db,
            ti: Arc::new(ti),
            meta_of: Arc::new(meta_of),
            refs: Arc::new(refs),
        }
    }

    /// Per metadata table: the core's table.
    pub(crate) fn tables(&self) -> Arc<Vec<usize>> {
        self.ti.clone()
    }

    /// The committed rows of metadata table `mt`.
    pub(crate) fn rows(&self, mt: usize) -> &RowMap {
        &self
            .db
            .table_at(self.ti[mt])
            .expect("a table of the schema")
            .rows
    }

    /// Puts already checked changes (a prepared commit, a log record, the
    /// rows a commit changed outside the core's transaction) in place
    /// without recomputing their effects: the core then holds each
    /// change's new row itself (shared, not copied).
    pub(crate) fn write(&mut self, changes: &TxnChanges) {
        let map = self.ti.clone();
        let rows = changes
            .rows()
            .map(|(mt, ch)| (map[mt], ch.uuid, ch.new.clone()));
        self.db.place_shared_rows(rows);
    }

    /// Writes the operations' result (`written`, rows in `order` of first
    /// touch) into a core transaction and runs the commit's checks and
    /// work: `Ok` holds the transaction (to keep or to drop, which rolls it
    /// back) and every row the commit changes, in table and UUID order,
    /// with its committed version and what becomes of it.
    pub(crate) fn precommit(
        &mut self,
        mut written: Written,
        order: &[(usize, Uuid)],
    ) -> Result<(Txn<'_>, Found)> {
        let map = self.ti.clone();
        let meta_of = self.meta_of.clone();
        let refs = self.refs.clone();
        let mut found = Found::new();
        let mut txn = self.db.begin_with(ReplayOptions {
            server_checks: true,
            atoms_checked: true,
            ..Default::default()
        });
        // The committed versions of the rows the operations wrote.
        let mut olds = BTreeMap::new();
        for &(mt, u) in order {
            let ti = map[mt];
            let old = txn.db().table_at(ti).and_then(|t| t.rows.get(&u)).cloned();
            let (cols, aside) = &refs[mt];
            let quiet = |r: &Row| *aside && cols.iter().all(|&c| r.columns[c].is_empty());
            match (&old, written.remove(mt, &u)) {
                (_, Some(Some(r))) if quiet(&r) && old.as_deref().is_none_or(quiet) => {
                    if old.as_ref().is_none_or(|o| o.cols() != r.cols()) {
                        found.insert((mt, u), (old, After::Aside(Some(r))));
                    }
                    continue;
                }
                (Some(o), Some(None)) if quiet(o) => {
                    found.insert((mt, u), (old, After::Aside(None)));
                    continue;
                }
                // Inserted and deleted again: it still took its place.
                (None, Some(None)) => {
                    txn.insert_at(ti, u, Vec::new())?;
                    txn.delete_at(ti, u)?;
                }
                (Some(_), Some(None)) => txn.delete_at(ti, u)?,
                (None, Some(Some(r))) => txn.insert_row(ti, Arc::new(r))?,
                (Some(o), Some(Some(r))) => {
                    if o.cols() == r.cols() {
                        txn.join(ti, u)?;
                    } else {
                        let n = r.cols().len();
                        for (ci, d) in r.columns.into_iter().take(n).enumerate() {
                            if o.columns[ci] != d {
                                txn.set_at(ti, u, ci, d)?;
                            }
                        }
                    }
                }
                _ => {}
            }
            olds.insert((mt, u), old);
        }
        let changes = txn.precommit()?;
        for tc in &changes.tables {
            let mt = meta_of[tc.table];
            for rc in &tc.rows {
                let u = rc.uuid;
                let old = match olds.remove(&(mt, u)) {
                    Some(old) => old,
                    // A row the commit changed on its own (garbage
                    // collected, or weak references dropped).
                    None => txn.committed_row(tc.table, u),
                };
                let after = match rc.kind {
                    ChangeKind::Delete => After::Gone,
                    _ => After::InCore,
                };
                found.insert((mt, u), (old, after));
            }
        }
        Ok((txn, found))
    }
}

/// Whether a column type holds references.
fn has_ref(ty: &Type) -> bool {
    let hit = |b: &BaseType| b.ref_table.is_some();
    hit(&ty.key) || ty.value.as_ref().is_some_and(hit)
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

    /// A row of a root table nothing refers to is written outside the
    /// core's transaction while it holds no reference, and through it when
    /// it gains one; the core holds it either way, and its children are
    /// collected when it goes.
    #[test]
    fn rows_without_references_of_unreferenced_root_tables_skip_the_transaction() {
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
