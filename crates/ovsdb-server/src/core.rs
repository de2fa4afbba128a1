//! The commit engine. An `ovsdb::Database` ([`Core`]) holds every
//! committed row's references and unique-index keys, and its transaction
//! does the commit-time work ovsdb-server's `ovsdb_txn_precommit` does:
//! strong reference counts and their check, garbage collection of
//! unreferenced non-root rows, weak-reference removal in ovsdb-server 3.1's
//! order, `maxRows` and the unique indexes (with
//! `ReplayOptions::server_checks`, in the words and order of a `transact`
//! reply; the indexes through the committed keys the core keeps,
//! `Database::keep_key_indexes`). The server writes an operation's result
//! into it ([`Server::precommit`]), reads back what the commit changed, and
//! keeps the rows themselves (with their `_version`s, in [`DbMeta`]'s
//! column order) for reads, monitors and the history.
//!
//! Only what the commit's rules read is in the core: its schema has only
//! the columns holding references and those of unique indexes, and rows
//! hold, in the `_version` slot, a change mark, so that a row an operation really changed is a changed
//! row there too (ovsdb-server assesses weak references in the order of
//! the rows its transaction changed). Mirroring the rows whole cost the
//! simulator's one-hour run a fifth of its time.

use crate::{cols_mut, DbMeta, Row, RowRef, Server, ServerRow};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::db::{ChangeKind, Database, ReplayOptions, Txn, TxnChanges};
use ovsdb::error::Result;
use ovsdb::schema::TableSchema;
use ovsdb::types::{BaseType, Type};
use ovsdb::uuid::Uuid;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The rows' references and index keys in an `ovsdb::Database`, and how
/// its tables and columns (the schema's order) map to the metadata's (name
/// order).
#[derive(Debug, Clone)]
pub(crate) struct Core {
    pub(crate) db: Database,
    map: Arc<Vec<CoreTable>>,
    /// Per core table: the metadata's table.
    meta_of: Arc<Vec<usize>>,
    /// The last change mark written.
    mark: u128,
}

/// One metadata table in the core.
#[derive(Debug)]
struct CoreTable {
    /// The core's table.
    ti: usize,
    /// The columns holding references or in a unique index, the only ones
    /// the core has: (the metadata's number, the core's).
    refs: Vec<(usize, usize)>,
    /// Those holding weak references, the only ones the commit changes in
    /// a row the operations wrote.
    weak: Vec<(usize, usize)>,
    /// The core's `_version` column, which holds the change mark.
    mark: usize,
    /// Whether a row with no references may stay out of the core: the
    /// table is a root table, no column refers to it and it has no
    /// `maxRows` and no unique index, so such a row takes no part in any
    /// commit rule.
    sparse: bool,
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

    pub(crate) fn get_mut(&mut self, t: usize, u: &Uuid) -> Option<&mut Option<Row>> {
        self.0[t].as_mut()?.get_mut(u)
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

/// The rows the commit changes, each with its committed version (the new
/// one is in [`Written`]).
pub(crate) type Found = BTreeMap<(usize, Uuid), Option<RowRef>>;

impl Core {
    pub(crate) fn new(meta: &DbMeta) -> Core {
        // The schema with only the columns holding references and those
        // of unique indexes.
        let mut schema = (*meta.schema).clone();
        for ts in &mut schema.tables {
            let keyed = |name: &str| ts.indexes.iter().flatten().any(|c| c == name);
            let kept = ts
                .user_columns()
                .filter(|c| has_ref(&c.ty, false) || keyed(&c.name));
            let kept = kept.cloned().collect();
            let indexes = std::mem::take(&mut ts.indexes);
            *ts = TableSchema::new(&ts.name, kept, ts.mutable, ts.is_root, ts.max_rows, indexes);
        }
        let mut meta_of = vec![0; schema.tables.len()];
        let map = meta
            .tables
            .iter()
            .enumerate()
            .map(|(mi, t)| {
                let ti = schema.table_index(&t.name).unwrap_or(0);
                meta_of[ti] = mi;
                let ts = &schema.tables[ti];
                let pick = |weak: bool| {
                    let cols = t.columns.iter().enumerate();
                    cols.filter(|(i, c)| {
                        has_ref(&c.ty, weak) || !weak && t.indexes.iter().flatten().any(|x| x == i)
                    })
                    .filter_map(|(i, c)| ts.column_index(&c.name).map(|x| (i, x)))
                    .collect()
                };
                let target = meta.tables.iter().flat_map(|o| &o.columns).any(|c| {
                    let to = |b: &BaseType| b.ref_table.as_deref() == Some(t.name.as_str());
                    to(&c.ty.key) || c.ty.value.as_ref().is_some_and(to)
                });
                CoreTable {
                    ti,
                    refs: pick(false),
                    weak: pick(true),
                    mark: ts.column_index("_version").unwrap_or(0),
                    sparse: t.is_root && !target && t.max_rows.is_none() && t.indexes.is_empty(),
                }
            })
            .collect();
        let mut db = Database::new(Arc::new(schema));
        db.keep_key_indexes();
        Core {
            db,
            map: Arc::new(map),
            meta_of: Arc::new(meta_of),
            mark: 0,
        }
    }

    /// Writes already checked changes (a prepared commit, a log record)
    /// without recomputing their effects.
    pub(crate) fn write(&mut self, changes: &TxnChanges) -> Result<()> {
        let map = self.map.clone();
        let mut txn = self.db.begin_with(ReplayOptions {
            skip_changes: true,
            atoms_checked: true,
            skip_index_check: true,
            ..Default::default()
        });
        for tc in &changes.tables {
            let t = &map[tc.table];
            for ch in &tc.rows {
                let u = ch.uuid;
                let held = has_row(&txn, t.ti, u);
                match (&ch.old, &ch.new) {
                    (_, Some(n)) if !held && t.holds(n) => {
                        txn.insert_at(t.ti, u, t.references(n))?;
                    }
                    // A row the core does not need.
                    (_, Some(_)) if !held => {}
                    (_, None) if held => txn.delete_at(t.ti, u)?,
                    (Some(o), Some(n)) => {
                        for &(ci, x) in &t.refs {
                            if o.cols()[ci] != n.cols()[ci] {
                                txn.set_at(t.ti, u, x, n.cols()[ci].clone())?;
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        txn.commit_unchecked();
        Ok(())
    }
}

/// Whether the core holds row `u` of table `ti` (so far in `txn`).
fn has_row(txn: &Txn<'_>, ti: usize, u: Uuid) -> bool {
    txn.db().table_at(ti).is_some_and(|t| t.get(&u).is_some())
}

impl CoreTable {
    /// Whether the core must hold row `r` of this table.
    fn holds(&self, r: &Row) -> bool {
        !self.sparse || self.refs.iter().any(|&(ci, _)| !r.cols()[ci].is_empty())
    }

    /// Row `r`'s columns the core has, as the core's columns.
    fn references(&self, r: &Row) -> Vec<(usize, Datum)> {
        self.refs
            .iter()
            .map(|&(ci, x)| (x, r.cols()[ci].clone()))
            .collect()
    }
}

/// Whether a column type holds references (with `weak`, weak ones).
fn has_ref(ty: &Type, weak: bool) -> bool {
    let hit = |b: &BaseType| b.ref_table.is_some() && (!weak || b.is_weak_ref());
    hit(&ty.key) || ty.value.as_ref().is_some_and(hit)
}

impl Server {
    /// Writes the operations' result (`written`, rows in `order` of first
    /// touch) into a core transaction and runs the commit's checks and
    /// work: `Ok` holds the transaction (to keep or to drop, which rolls it
    /// back) and every row the commit changes, in table and UUID order.
    /// `written` is left with those rows as they end up (beside the rows
    /// the operations wrote without a change).
    pub(crate) fn precommit<'a>(
        tables: &[BTreeMap<Uuid, RowRef>],
        core: &'a mut Core,
        written: &mut Written,
        order: &[(usize, Uuid)],
    ) -> Result<(Txn<'a>, Found)> {
        let map = core.map.clone();
        let meta_of = core.meta_of.clone();
        core.mark += 1;
        let mark = Datum::scalar(Atom::Uuid(Uuid(core.mark)));
        let mut txn = core.db.begin_with(ReplayOptions {
            server_checks: true,
            atoms_checked: true,
            ..Default::default()
        });
        let mut outside = Vec::new();
        for &(mt, u) in order {
            let t = &map[mt];
            let held = has_row(&txn, t.ti, u);
            match (tables[mt].get(&u), written.get(mt, &u)) {
                // Inserted and deleted again: it still took its place.
                (None, Some(None)) => {
                    txn.insert_at(t.ti, u, Vec::new())?;
                    txn.delete_at(t.ti, u)?;
                }
                (_, Some(None)) if held => txn.delete_at(t.ti, u)?,
                (_, Some(Some(r))) if !held && t.holds(r) => {
                    txn.insert_at(t.ti, u, t.references(r))?;
                }
                // A row the core does not hold, deleted or written.
                (Some(_), Some(None)) | (_, Some(Some(_))) if !held => outside.push((mt, u)),
                (Some(o), Some(Some(r))) => {
                    if o.cols() == r.cols() {
                        txn.join(t.ti, u)?;
                        continue;
                    }
                    txn.set_at(t.ti, u, t.mark, mark.clone())?;
                    for &(ci, x) in &t.refs {
                        if o.cols()[ci] != r.cols()[ci] {
                            txn.set_at(t.ti, u, x, r.cols()[ci].clone())?;
                        }
                    }
                }
                _ => {}
            }
        }
        let changes = txn.precommit()?;
        let db = txn.db();
        let mut found = Found::new();
        for tc in &changes.tables {
            let mt = meta_of[tc.table];
            let t = &map[mt];
            for rc in &tc.rows {
                let u = rc.uuid;
                let old = tables[mt].get(&u).cloned();
                let now = db.table_at(tc.table).and_then(|x| x.get(&u));
                match (&rc.kind, now, written.get_mut(mt, &u), &old) {
                    (ChangeKind::Delete, ..) | (_, None, ..) => {
                        written.insert(mt, u, None);
                    }
                    (_, Some(now), Some(Some(r)), _) => {
                        // Only weak references can have changed; if that
                        // undid the operations' change, nothing changed.
                        for &(ci, x) in &t.weak {
                            if r.cols()[ci] != now.columns[x] {
                                cols_mut(r)[ci] = now.columns[x].clone();
                            }
                        }
                        if old.as_ref().is_some_and(|o| o.cols() == r.cols()) {
                            continue;
                        }
                    }
                    (ChangeKind::Modify { columns }, Some(now), _, Some(o)) => {
                        // A row the operations left alone lost weak
                        // references.
                        let mut r = (**o).clone();
                        for c in columns {
                            if let Some(&(ci, x)) = t.refs.iter().find(|r| r.1 == c.column) {
                                cols_mut(&mut r)[ci] = now.columns[x].clone();
                            }
                        }
                        written.insert(mt, u, Some(r));
                    }
                    // An insert is always one of the operations' rows.
                    _ => continue,
                }
                found.insert((mt, u), old);
            }
        }
        for (mt, u) in outside {
            let old = tables[mt].get(&u);
            let new = written.get(mt, &u).and_then(Option::as_ref);
            let same = match (old, new) {
                (Some(o), Some(n)) => o.cols() == n.cols(),
                (o, n) => o.is_none() && n.is_none(),
            };
            if !same {
                found.insert((mt, u), old.cloned());
            }
        }
        Ok((txn, found))
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{json, server, tx, U1, U2, U3};
    use crate::ServerOptions;

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

    /// A root table nothing refers to keeps a row out of the core while it
    /// holds no reference; the row joins it when it gains one, and its
    /// children are collected when it goes.
    #[test]
    fn rows_without_references_of_unreferenced_root_tables_stay_out_of_the_core() {
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
        assert_eq!((s.row_count("S"), s.core.db.row_count()), (1, 0));
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
}
