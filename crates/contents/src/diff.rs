//! `diff --from I --to J`: rows added, removed and changed per table
//! between the databases at two indexes, with column diffs.

use ovsdb::strings::datum_to_string;
use ovsdb::{Database, Json, Object, Uuid};

/// A changed column: values in the tools' string syntax.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnChange {
    pub column: String,
    pub old: String,
    pub new: String,
}

/// Differences of one table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableDiff {
    pub table: String,
    pub added: Vec<Uuid>,
    pub removed: Vec<Uuid>,
    pub changed: Vec<(Uuid, Vec<ColumnChange>)>,
}

impl TableDiff {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Per table (by name, sorted), rows in UUID order. Tables of either
/// schema take part; columns are compared by name (a column only one
/// schema has compares against its type's default).
pub fn diff(from: &Database, to: &Database) -> Vec<TableDiff> {
    let mut names: Vec<String> = from
        .schema()
        .tables
        .iter()
        .chain(to.schema().tables.iter())
        .map(|t| t.name.clone())
        .collect();
    ovsdb::order::sort(&mut names);
    names.dedup();
    let empty = ovsdb::Table::default();
    let mut out = Vec::new();
    for name in names {
        let (a, b) = (
            from.table(&name).unwrap_or(&empty),
            to.table(&name).unwrap_or(&empty),
        );
        let (sa, sb) = (from.table_schema(&name), to.table_schema(&name));
        let mut td = TableDiff {
            table: name.clone(),
            ..Default::default()
        };
        td.removed = a
            .rows
            .keys()
            .filter(|u| !b.rows.contains_key(*u))
            .copied()
            .collect();
        td.added = b
            .rows
            .keys()
            .filter(|u| !a.rows.contains_key(*u))
            .copied()
            .collect();
        if let (Some(sa), Some(sb)) = (sa, sb) {
            let mut cols: Vec<&str> = sb
                .columns
                .iter()
                .filter(|c| !c.is_implicit())
                .map(|c| c.name.as_str())
                .collect();
            ovsdb::order::sort(&mut cols);
            for (u, rb) in &b.rows {
                let Some(ra) = a.rows.get(u) else { continue };
                let mut changes = Vec::new();
                for &c in &cols {
                    let Some(cb) = sb.column(c) else { continue };
                    let nb = rb.get(sb, c).cloned().unwrap_or_default();
                    let na = match sa.column(c) {
                        Some(_) => ra.get(sa, c).cloned().unwrap_or_default(),
                        None => ovsdb::Datum::default_for(&cb.ty),
                    };
                    if na != nb {
                        changes.push(ColumnChange {
                            column: c.to_string(),
                            old: datum_to_string(&na, &cb.ty),
                            new: datum_to_string(&nb, &cb.ty),
                        });
                    }
                }
                if !changes.is_empty() {
                    td.changed.push((*u, changes));
                }
            }
        }
        if !td.is_empty() {
            out.push(td);
        }
    }
    out
}

/// Text: one block per table with `+ uuid`, `- uuid`, `~ uuid` lines and
/// `column: old -> new` under changed rows.
pub fn diff_text(d: &[TableDiff]) -> String {
    let mut out = String::new();
    for t in d {
        out.push_str(&format!(
            "table {}: {} added, {} removed, {} changed\n",
            t.table,
            t.added.len(),
            t.removed.len(),
            t.changed.len()
        ));
        for u in &t.added {
            out.push_str(&format!("  + {u}\n"));
        }
        for u in &t.removed {
            out.push_str(&format!("  - {u}\n"));
        }
        for (u, cols) in &t.changed {
            out.push_str(&format!("  ~ {u}\n"));
            for c in cols {
                out.push_str(&format!("      {}: {} -> {}\n", c.column, c.old, c.new));
            }
        }
    }
    if d.is_empty() {
        out.push_str("no differences\n");
    }
    out
}

/// JSON: `{"tables":[{"table","added":[uuid],"removed":[uuid],
/// "changed":[{"uuid","columns":[{"column","old","new"}]}]}]}`.
pub fn diff_json(d: &[TableDiff]) -> Json {
    let uuids = |v: &[Uuid]| Json::Array(v.iter().map(|u| Json::String(u.to_string())).collect());
    let tables = d
        .iter()
        .map(|t| {
            let mut o = Object::new();
            o.push_unchecked("table", Json::String(t.table.clone()));
            o.push_unchecked("added", uuids(&t.added));
            o.push_unchecked("removed", uuids(&t.removed));
            let changed = t
                .changed
                .iter()
                .map(|(u, cols)| {
                    let mut r = Object::new();
                    r.push_unchecked("uuid", Json::String(u.to_string()));
                    r.push_unchecked(
                        "columns",
                        Json::Array(
                            cols.iter()
                                .map(|c| {
                                    let mut co = Object::new();
                                    co.push_unchecked("column", Json::String(c.column.clone()));
                                    co.push_unchecked("old", Json::String(c.old.clone()));
                                    co.push_unchecked("new", Json::String(c.new.clone()));
                                    Json::Object(co)
                                })
                                .collect(),
                        ),
                    );
                    Json::Object(r)
                })
                .collect();
            o.push_unchecked("changed", Json::Array(changed));
            Json::Object(o)
        })
        .collect();
    let mut top = Object::new();
    top.push_unchecked("tables", Json::Array(tables));
    Json::Object(top)
}
