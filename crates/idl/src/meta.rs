//! Table and column metadata used by the server model and the replica,
//! built from a schema's JSON (`.ovsschema`) with `ovsdb`'s type parser.

use ovsdb::error::{Error, Result};
use ovsdb::json::Json;
use ovsdb::types::Type;
use std::collections::HashMap;

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
    pub col_index: HashMap<String, usize>,
    pub is_root: bool,
    pub max_rows: Option<u64>,
    /// Unique indexes (server-side constraints), as column positions.
    pub indexes: Vec<Vec<usize>>,
}

impl TableMeta {
    pub fn column(&self, name: &str) -> Option<usize> {
        self.col_index.get(name).copied()
    }
}

#[derive(Debug, Clone)]
pub struct DbMeta {
    pub name: String,
    pub version: String,
    pub tables: Vec<TableMeta>,
    pub table_index: HashMap<String, usize>,
    /// The schema's JSON as given (returned by `get_schema`).
    pub json: Json,
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

    /// Parses a database schema. Tables are kept in name order (as OVS keeps
    /// them in a sorted shash when it prints), columns in name order too.
    /// As in OVS, if no table is marked `isRoot`, every table is a root
    /// table (RFC 7047 compatibility rule).
    pub fn from_json(j: &Json) -> Result<DbMeta> {
        let o = j
            .as_object()
            .ok_or_else(|| Error::syntax("schema must be an object"))?;
        let name = o
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| Error::syntax("schema has no name"))?
            .to_string();
        let version = o
            .get("version")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let tables_j = o
            .get("tables")
            .and_then(Json::as_object)
            .ok_or_else(|| Error::syntax("schema has no tables"))?;
        let mut names: Vec<&str> = tables_j.keys().collect();
        names.sort_unstable();
        let mut tables = Vec::new();
        let mut any_root = false;
        for tname in names {
            let t = tables_j
                .get(tname)
                .and_then(Json::as_object)
                .ok_or_else(|| Error::syntax(format!("table {tname} is not an object")))?;
            let cols_j = t
                .get("columns")
                .and_then(Json::as_object)
                .ok_or_else(|| Error::syntax(format!("table {tname} has no columns")))?;
            let mut cnames: Vec<&str> = cols_j.keys().collect();
            cnames.sort_unstable();
            let mut columns = Vec::new();
            let mut col_index = HashMap::new();
            for cname in cnames {
                let c = cols_j
                    .get(cname)
                    .and_then(Json::as_object)
                    .ok_or_else(|| Error::syntax(format!("column {cname} is not an object")))?;
                let ty = Type::from_json(
                    c.get("type")
                        .ok_or_else(|| Error::syntax(format!("column {cname} has no type")))?,
                )
                .map_err(|e| e.context(format!("{tname}.{cname}")))?;
                let mutable = c.get("mutable").and_then(Json::as_bool).unwrap_or(true);
                col_index.insert(cname.to_string(), columns.len());
                columns.push(ColumnMeta {
                    name: cname.to_string(),
                    ty,
                    mutable,
                });
            }
            let is_root = t.get("isRoot").and_then(Json::as_bool).unwrap_or(false);
            any_root |= is_root;
            let max_rows = t
                .get("maxRows")
                .and_then(Json::as_i64)
                .map(|v| v.max(0) as u64);
            let mut indexes = Vec::new();
            if let Some(ix) = t.get("indexes").and_then(Json::as_array) {
                for one in ix {
                    let mut cols = Vec::new();
                    for c in one.as_array().unwrap_or(&[]) {
                        let cn = c.as_str().unwrap_or("");
                        let i = col_index.get(cn).copied().ok_or_else(|| {
                            Error::syntax(format!("index names unknown column {cn}"))
                        })?;
                        cols.push(i);
                    }
                    indexes.push(cols);
                }
            }
            tables.push(TableMeta {
                name: tname.to_string(),
                columns,
                col_index,
                is_root,
                max_rows,
                indexes,
            });
        }
        if !any_root {
            for t in &mut tables {
                t.is_root = true;
            }
        }
        let table_index = tables
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        Ok(DbMeta {
            name,
            version,
            tables,
            table_index,
            json: j.clone(),
        })
    }
}
