//! The commit engine: every committed row is also held by an
//! `ovsdb::Database` ([`Core`]), whose transaction does the commit-time
//! work ovsdb-server's `ovsdb_txn_precommit` does: strong reference counts
//! and their check, garbage collection of unreferenced non-root rows,
//! weak-reference removal in ovsdb-server 3.1's order, column sizes and
//! `maxRows` (with `ReplayOptions::server_checks`, in the words and order of
//! a `transact` reply). The server writes an operation's result into it
//! ([`Server::precommit`]), reads back what the commit changed, and keeps
//! its own copy of the rows (with their `_version`s, in [`DbMeta`]'s column
//! order) for reads, monitors and the history.

use crate::{DbMeta, Row, RowChange, RowRef, Server};
use ovsdb::db::{ChangeKind, Database, ReplayOptions, Txn};
use ovsdb::error::Result;
use ovsdb::uuid::Uuid;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The rows in an `ovsdb::Database`, and how its tables and columns
/// (the schema's order) map to the metadata's (name order).
#[derive(Debug, Clone)]
pub(crate) struct Core {
    pub(crate) db: Database,
    map: Arc<CoreMap>,
}

#[derive(Debug)]
struct CoreMap {
    /// Per metadata table: the core's table and, per column, its column.
    tables: Vec<(usize, Vec<usize>)>,
    /// Per core table: the metadata's table.
    meta_of: Vec<usize>,
    /// Per metadata table: the columns holding weak references, the only
    /// ones the commit changes in a row the operations wrote.
    weak_cols: Vec<Vec<usize>>,
}

/// The rows one transaction's operations wrote (`None`: deleted), per
/// metadata table.
pub(crate) type Written = Vec<BTreeMap<Uuid, Option<Row>>>;

/// The rows the commit changes, each with its committed version (the new
/// one is in [`Written`]).
pub(crate) type Found = BTreeMap<(usize, Uuid), Option<RowRef>>;

impl Core {
    pub(crate) fn new(meta: &DbMeta) -> Core {
        let schema = meta.schema.clone();
        let mut meta_of = vec![0; schema.tables.len()];
        let tables = meta
            .tables
            .iter()
            .enumerate()
            .map(|(mi, t)| {
                let ti = schema.table_index(&t.name).unwrap_or(0);
                meta_of[ti] = mi;
                let ts = &schema.tables[ti];
                let cols = t
                    .columns
                    .iter()
                    .map(|c| ts.column_index(&c.name).unwrap_or(0))
                    .collect();
                (ti, cols)
            })
            .collect();
        let weak_cols = meta
            .tables
            .iter()
            .map(|t| {
                let weak = |c: &crate::meta::ColumnMeta| {
                    c.ty.key.is_weak_ref() || c.ty.value.as_ref().is_some_and(|v| v.is_weak_ref())
                };
                (0..t.columns.len())
                    .filter(|&i| weak(&t.columns[i]))
                    .collect()
            })
            .collect();
        Core {
            db: Database::new(schema),
            map: Arc::new(CoreMap {
                tables,
                meta_of,
                weak_cols,
            }),
        }
    }

    /// Writes already checked changes (a prepared commit, a log record)
    /// without recomputing their effects.
    pub(crate) fn write(&mut self, changes: &[RowChange]) -> Result<()> {
        let map = self.map.clone();
        let mut txn = self.db.begin_with(ReplayOptions {
            skip_changes: true,
            atoms_checked: true,
            skip_index_check: true,
            ..Default::default()
        });
        for ch in changes {
            let (ti, cols) = &map.tables[ch.table];
            match (&ch.old, &ch.new) {
                (None, Some(n)) => {
                    let values = cols.iter().copied().zip(n.cols.iter().cloned());
                    txn.insert_at(*ti, ch.uuid, values.collect())?;
                }
                (Some(_), None) => txn.delete_at(*ti, ch.uuid)?,
                (Some(o), Some(n)) => {
                    for (ci, d) in n.cols.iter().enumerate() {
                        if o.cols[ci] != *d {
                            txn.set_at(*ti, ch.uuid, cols[ci], d.clone())?;
                        }
                    }
                }
                (None, None) => {}
            }
        }
        txn.commit_unchecked();
        Ok(())
    }
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
        let mut txn = core.db.begin_with(ReplayOptions {
            server_checks: true,
            skip_index_check: true,
            atoms_checked: true,
            ..Default::default()
        });
        for &(mt, u) in order {
            let (ti, cols) = &map.tables[mt];
            let old = tables[mt].get(&u);
            match (old, written[mt].get(&u)) {
                (None, Some(Some(r))) => {
                    let values = cols.iter().copied().zip(r.cols.iter().cloned());
                    txn.insert_at(*ti, u, values.collect())?;
                }
                // Inserted and deleted again: it still took its place.
                (None, Some(None)) => {
                    txn.insert_at(*ti, u, Vec::new())?;
                    txn.delete_at(*ti, u)?;
                }
                (Some(_), Some(None)) => txn.delete_at(*ti, u)?,
                (Some(o), Some(Some(r))) => {
                    let mut same = true;
                    for (ci, d) in r.cols.iter().enumerate() {
                        if o.cols[ci] != *d {
                            same = false;
                            txn.set_at(*ti, u, cols[ci], d.clone())?;
                        }
                    }
                    if same {
                        txn.join(*ti, u)?;
                    }
                }
                (_, None) => {}
            }
        }
        let changes = txn.precommit()?;
        let db = txn.db();
        let mut found = Found::new();
        for tc in &changes.tables {
            let mt = map.meta_of[tc.table];
            let cols = &map.tables[mt].1;
            for rc in &tc.rows {
                let u = rc.uuid;
                let old = tables[mt].get(&u).cloned();
                let now = db.table_at(tc.table).and_then(|t| t.get(&u));
                match (&rc.kind, now) {
                    (ChangeKind::Delete { .. }, _) | (_, None) => {
                        written[mt].insert(u, None);
                    }
                    (kind, Some(now)) => match (written[mt].get_mut(&u), &old, kind) {
                        (Some(Some(r)), _, _) => {
                            // Only weak references can have changed.
                            for &ci in &map.weak_cols[mt] {
                                if r.cols[ci] != now.columns[cols[ci]] {
                                    r.cols[ci] = now.columns[cols[ci]].clone();
                                }
                            }
                        }
                        (_, Some(o), ChangeKind::Modify { columns }) => {
                            let mut r = (**o).clone();
                            for c in columns {
                                if let Some(ci) = cols.iter().position(|&x| x == c.column) {
                                    r.cols[ci] = now.columns[c.column].clone();
                                }
                            }
                            written[mt].insert(u, Some(r));
                        }
                        _ => {
                            let r = Row {
                                uuid: u,
                                version: Uuid::NIL,
                                cols: cols.iter().map(|&c| now.columns[c].clone()).collect(),
                            };
                            written[mt].insert(u, Some(r));
                        }
                    },
                }
                found.insert((mt, u), old);
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
}
