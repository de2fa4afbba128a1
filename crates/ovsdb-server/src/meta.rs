//! Table and column metadata used by the server model and the replica,
//! built from `ovsdb`'s parsed [`DatabaseSchema`] (one schema parser for
//! the whole workspace), with positions in name order.

use ovsdb::error::{Error, Result};
use ovsdb::json::Json;
use ovsdb::schema::{ColumnSchema, DatabaseSchema, TableSchema};
use ovsdb::types::Type;
use ovsdb::uuid::RowKeyMap;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct ColumnMeta {
    pub name: String,
    pub ty: Type,
    pub mutable: bool,
}

#[derive(Debug, Clone)]
pub struct TableMeta {
    pub name: String,
    pub columns: Vec<ColumnMeta>,
    /// Column positions by name. The names are the schema's own, so the
    /// row-key hasher serves (a multiply per 8 bytes, not SipHash): every
    /// replayed record looks its tables and columns up here.
    pub col_index: RowKeyMap<String, usize>,
    pub is_root: bool,
    pub max_rows: Option<u64>,
    /// Unique indexes (server-side constraints), as column positions.
    pub indexes: Vec<Vec<usize>>,
}

impl TableMeta {
    pub fn column(&self, name: &str) -> Option<usize> {
        self.col_index.get(name).copied()
    }

    /// [`TableMeta::column`], or ovsdb-server's "unknown column" error.
    pub fn known_column(&self, name: &str, at: &Json) -> Result<usize> {
        self.column(name).ok_or_else(|| {
            Error::new(
                "unknown column",
                format!("No column {name} in table {}.", self.name),
            )
            .with_syntax(at)
        })
    }
}

#[derive(Debug, Clone)]
pub struct DbMeta {
    pub name: String,
    pub version: String,
    pub tables: Vec<TableMeta>,
    /// Table positions by name (hashed as `col_index`).
    pub table_index: RowKeyMap<String, usize>,
    /// The schema's JSON as given (returned by `get_schema`).
    pub json: Json,
    /// The parsed schema (the server keeps its rows in an
    /// `ovsdb::Database` of it).
    pub schema: Arc<DatabaseSchema>,
}

impl DbMeta {
    pub fn table(&self, name: &str) -> Option<usize> {
        self.table_index.get(name).copied()
    }

    pub fn from_text(text: &str) -> Result<DbMeta> {
        let j = ovsdb::json::parse(text.as_bytes())
            .map_err(|e| Error::syntax(format!("schema: {e}")))?;
        DbMeta::from_json(&j)
    }

    /// Parses a database schema with `ovsdb`'s schema parser (same
    /// validation as the log reader) and builds the metadata from it.
    pub fn from_json(j: &Json) -> Result<DbMeta> {
        let schema = DatabaseSchema::from_json(j)?;
        DbMeta::from_schema(&schema, j.clone())
    }

    /// The metadata of a parsed schema; `json` is what `get_schema`
    /// returns. Tables are kept in name order (as OVS keeps them in a
    /// sorted shash when it prints), user columns in name order too.
    /// Root-ness is the schema's: `ovsdb::DatabaseSchema` already applies
    /// OVS's rule that when no table is a root table every table is one
    /// (also when tables say `"isRoot": false`).
    pub fn from_schema(schema: &DatabaseSchema, json: Json) -> Result<DbMeta> {
        let mut sorted: Vec<&TableSchema> = schema.tables.iter().collect();
        ovsdb::order::sort_by(&mut sorted, |a, b| a.name.cmp(&b.name));
        let mut tables = Vec::new();
        for ts in sorted {
            let mut cols: Vec<&ColumnSchema> = ts.user_columns().collect();
            ovsdb::order::sort_by(&mut cols, |a, b| a.name.cmp(&b.name));
            let columns: Vec<ColumnMeta> = cols
                .into_iter()
                .map(|c| ColumnMeta {
                    name: c.name.clone(),
                    ty: c.ty.clone(),
                    mutable: c.mutable,
                })
                .collect();
            let col_index: RowKeyMap<String, usize> = columns
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name.clone(), i))
                .collect();
            let indexes = ts
                .indexes
                .iter()
                .map(|ix| {
                    ix.iter()
                        .map(|cn| {
                            col_index.get(cn).copied().ok_or_else(|| {
                                Error::syntax(format!("index names unknown column {cn}"))
                            })
                        })
                        .collect::<Result<Vec<usize>>>()
                })
                .collect::<Result<Vec<_>>>()?;
            tables.push(TableMeta {
                name: ts.name.clone(),
                columns,
                col_index,
                is_root: ts.is_root,
                max_rows: ts.max_rows.map(u64::from),
                indexes,
            });
        }
        let table_index = tables
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        Ok(DbMeta {
            name: schema.name.clone(),
            version: schema.version.clone(),
            tables,
            table_index,
            json,
            schema: Arc::new(schema.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_ness_comes_from_the_schema() {
        // No table says isRoot true (one says false, one says nothing):
        // as in OVS, both are roots, in the schema and in the metadata.
        let text = r#"{"name":"d","tables":{"A":{"isRoot":false,"columns":{"x":{"type":"integer"}}},
            "B":{"columns":{"y":{"type":"integer"}}}}}"#;
        let j = ovsdb::json::parse(text.as_bytes()).unwrap();
        let schema = DatabaseSchema::from_json(&j).unwrap();
        let m = DbMeta::from_schema(&schema, j).unwrap();
        assert_eq!(m.tables.len(), 2);
        assert!(schema.tables.iter().all(|t| t.is_root));
        assert!(m.tables.iter().all(|t| t.is_root));
        // One explicit root: the other table is not one, in both.
        let text = r#"{"name":"d","tables":{"A":{"isRoot":true,"columns":{"x":{"type":"integer"}}},
            "B":{"isRoot":false,"columns":{"y":{"type":"integer"}}}}}"#;
        let j = ovsdb::json::parse(text.as_bytes()).unwrap();
        let schema = DatabaseSchema::from_json(&j).unwrap();
        let m = DbMeta::from_schema(&schema, j).unwrap();
        for t in &m.tables {
            assert_eq!(t.is_root, t.name == "A", "{}", t.name);
            assert_eq!(t.is_root, schema.table(&t.name).unwrap().is_root);
        }
    }
}
