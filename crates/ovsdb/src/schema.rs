//! Database, table and column schemas (ovsdb-formats.md §2.2), with the
//! column and table iteration orders the C server uses (§5.4), so writers
//! can reproduce its byte order.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::json::{shash_order, Json, Object};
use crate::types::{is_id_str, AtomicType, MemberParser, Type};

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSchema {
    pub name: String,
    pub ty: Type,
    pub mutable: bool,
    /// `false` for ephemeral columns.
    pub persistent: bool,
}

impl ColumnSchema {
    fn implicit(name: &str) -> Self {
        ColumnSchema {
            name: name.to_string(),
            ty: Type::scalar(AtomicType::Uuid),
            mutable: false,
            persistent: true,
        }
    }

    /// Whether this is `_uuid` or `_version`.
    pub fn is_implicit(&self) -> bool {
        self.name.starts_with('_')
    }

    pub fn from_json(name: &str, j: &Json) -> Result<Self> {
        let o = j
            .as_object()
            .ok_or_else(|| Error::syntax(format!("column {}: object expected", name)))?;
        let what = format!("schema for column {}", name);
        let mut p = MemberParser::new(o, &what);
        let mutable = p.optional("mutable", |j| j.as_bool().is_some(), "boolean")?;
        let ephemeral = p.optional("ephemeral", |j| j.as_bool().is_some(), "boolean")?;
        let ty = p.required("type", |_| true, "type")?;
        p.finish()?;
        let ty = Type::from_json(ty).map_err(|e| e.context(format!("column {}", name)))?;
        let mut mutable = mutable.and_then(Json::as_bool).unwrap_or(true);
        if !mutable && (ty.key.is_weak_ref() || ty.value.as_ref().is_some_and(|v| v.is_weak_ref()))
        {
            // Weak references must be able to change when targets vanish.
            mutable = true;
        }
        Ok(ColumnSchema {
            name: name.to_string(),
            ty,
            mutable,
            persistent: !ephemeral.and_then(Json::as_bool).unwrap_or(false),
        })
    }

    /// Normalized JSON (C insertion order: mutable, ephemeral, type).
    pub fn to_json(&self) -> Json {
        let mut o = Object::new();
        if !self.mutable {
            o.push_unchecked("mutable", Json::Bool(false));
        }
        if !self.persistent {
            o.push_unchecked("ephemeral", Json::Bool(true));
        }
        o.push_unchecked("type", self.ty.to_json());
        Json::Object(o)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableSchema {
    pub name: String,
    /// Every column, `_uuid` and `_version` included, in the iteration order
    /// of the C table schema's column map (the order txn records list
    /// columns in).
    pub columns: Vec<ColumnSchema>,
    index: BTreeMap<String, usize>,
    pub mutable: bool,
    pub is_root: bool,
    /// `None` = unlimited.
    pub max_rows: Option<u32>,
    /// Unique indexes: lists of column names.
    pub indexes: Vec<Vec<String>>,
}

impl TableSchema {
    /// Builds a table schema from user columns given in "parsed object
    /// iteration order" (C semantics: `_uuid`, `_version` are added first).
    pub fn new(
        name: &str,
        columns_in_order: Vec<ColumnSchema>,
        mutable: bool,
        is_root: bool,
        max_rows: Option<u32>,
        indexes: Vec<Vec<String>>,
    ) -> Self {
        let mut all = vec![
            ColumnSchema::implicit("_uuid"),
            ColumnSchema::implicit("_version"),
        ];
        all.extend(columns_in_order);
        let order = shash_order(&all.iter().map(|c| c.name.as_str()).collect::<Vec<_>>());
        let mut slots: Vec<Option<ColumnSchema>> = all.into_iter().map(Some).collect();
        let columns: Vec<ColumnSchema> =
            order.into_iter().filter_map(|i| slots[i].take()).collect();
        let index = name_index(columns.iter().map(|c| c.name.as_str()));
        TableSchema {
            name: name.to_string(),
            columns,
            index,
            mutable,
            is_root,
            max_rows,
            indexes,
        }
    }

    /// A table schema whose user columns keep the order given, with
    /// `_uuid` and `_version` after them, so that a row's first columns
    /// are the caller's in its own numbering: for a database read by
    /// column number from outside, such as the ovsdb-server model's rows.
    pub fn in_given_order(
        name: &str,
        user_columns: Vec<ColumnSchema>,
        mutable: bool,
        is_root: bool,
        max_rows: Option<u32>,
        indexes: Vec<Vec<String>>,
    ) -> Self {
        let mut columns = user_columns;
        columns.push(ColumnSchema::implicit("_uuid"));
        columns.push(ColumnSchema::implicit("_version"));
        let index = name_index(columns.iter().map(|c| c.name.as_str()));
        TableSchema {
            name: name.to_string(),
            columns,
            index,
            mutable,
            is_root,
            max_rows,
            indexes,
        }
    }

    /// Looks up a column (including `_uuid` and `_version`).
    pub fn column(&self, name: &str) -> Option<&ColumnSchema> {
        self.index.get(name).map(|&i| &self.columns[i])
    }

    /// Position of a column in [`TableSchema::columns`].
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// User columns (no `_uuid`/`_version`) in C iteration order.
    pub fn user_columns(&self) -> impl Iterator<Item = &ColumnSchema> {
        self.columns.iter().filter(|c| !c.is_implicit())
    }

    /// Parses a table schema. `is_root` is the default to use when the JSON
    /// has no `isRoot` member (resolved by [`DatabaseSchema::from_json`]).
    pub fn from_json(name: &str, j: &Json) -> Result<(Self, Option<bool>)> {
        let o = j
            .as_object()
            .ok_or_else(|| Error::syntax(format!("table {}: object expected", name)))?;
        let what = format!("table schema for table {}", name);
        let mut p = MemberParser::new(o, &what);
        let columns = p.required("columns", |j| j.as_object().is_some(), "object")?;
        let mutable = p.optional("mutable", |j| j.as_bool().is_some(), "boolean")?;
        let max_rows = p.optional("maxRows", |j| j.as_i64().is_some(), "integer")?;
        let is_root = p.optional("isRoot", |j| j.as_bool().is_some(), "boolean")?;
        let indexes = p.optional("indexes", |j| j.as_array().is_some(), "array")?;
        p.finish()?;
        let max_rows = match max_rows.and_then(Json::as_i64) {
            None => None,
            Some(n) if n <= 0 => return Err(Error::syntax("maxRows must be at least 1")),
            Some(n) => Some(n.min(i64::from(u32::MAX)) as u32),
        };
        let columns = columns.as_object().cloned().unwrap_or_default();
        if columns.is_empty() {
            return Err(Error::syntax("table must have at least one column"));
        }
        let names: Vec<&str> = columns.keys().collect();
        let mut cols = Vec::new();
        for i in shash_order(&names) {
            let (cname, cj) = match columns.iter().nth(i) {
                Some(x) => x,
                None => continue,
            };
            if cname.starts_with('_') {
                return Err(Error::syntax("names beginning with \"_\" are reserved"));
            }
            if !is_id_str(cname) {
                return Err(Error::syntax("name must be a valid id"));
            }
            cols.push(ColumnSchema::from_json(cname, cj)?);
        }
        let mut idx = Vec::new();
        if let Some(list) = indexes.and_then(Json::as_array) {
            for ix in list {
                let arr = ix
                    .as_array()
                    .ok_or_else(|| Error::syntax("index must be an array of column names"))?;
                let mut names = Vec::new();
                for c in arr {
                    let n = c
                        .as_str()
                        .ok_or_else(|| Error::syntax("index must be an array of column names"))?;
                    names.push(n.to_string());
                }
                if names.is_empty() {
                    return Err(Error::syntax("index must have at least one column"));
                }
                idx.push(names);
            }
        }
        let explicit_root = is_root.and_then(Json::as_bool);
        let t = TableSchema::new(
            name,
            cols,
            mutable.and_then(Json::as_bool).unwrap_or(true),
            explicit_root.unwrap_or(false),
            max_rows,
            idx,
        );
        for ix in &t.indexes {
            for c in ix {
                match t.column(c) {
                    None => return Err(Error::syntax(format!("{} is not a valid column name", c))),
                    Some(col) if !col.persistent => {
                        return Err(Error::syntax(format!(
                            "ephemeral columns (such as {}) may not be indexed",
                            c
                        )))
                    }
                    _ => {}
                }
            }
        }
        Ok((t, explicit_root))
    }

    /// Normalized JSON in C insertion order.
    pub fn to_json(&self, default_is_root: bool) -> Json {
        let mut o = Object::new();
        if !self.mutable {
            o.push_unchecked("mutable", Json::Bool(false));
        }
        if default_is_root != self.is_root {
            o.push_unchecked("isRoot", Json::Bool(self.is_root));
        }
        let mut cols = Object::new();
        for c in self.user_columns() {
            cols.push_unchecked(c.name.clone(), c.to_json());
        }
        o.push_unchecked("columns", Json::Object(cols));
        if let Some(m) = self.max_rows {
            o.push_unchecked("maxRows", Json::Integer(m.into()));
        }
        if !self.indexes.is_empty() {
            o.push_unchecked(
                "indexes",
                Json::Array(
                    self.indexes
                        .iter()
                        .map(|ix| Json::Array(ix.iter().map(|c| Json::String(c.clone())).collect()))
                        .collect(),
                ),
            );
        }
        Json::Object(o)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DatabaseSchema {
    pub name: String,
    pub version: String,
    pub cksum: String,
    /// Tables in the iteration order of the C schema's table map.
    pub tables: Vec<TableSchema>,
    index: BTreeMap<String, usize>,
}

/// Name → position; of equal names the last counts.
fn name_index<'a>(names: impl Iterator<Item = &'a str>) -> BTreeMap<String, usize> {
    crate::order::btree_map(names.enumerate().map(|(i, n)| (n.to_string(), i)))
}

fn valid_version(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 10 && p.bytes().all(|b| b.is_ascii_digit()))
}

impl DatabaseSchema {
    /// Parses a schema (an `.ovsschema` file, a standalone record 0, or the
    /// schema slot of Raft data). Member order of the JSON objects matters
    /// only for the derived column/table orders (§5.4).
    pub fn from_json(j: &Json) -> Result<Self> {
        let o = j
            .as_object()
            .ok_or_else(|| Error::syntax("database schema must be an object"))?;
        let mut p = MemberParser::new(o, "database schema");
        let name = p.required("name", crate::types::is_id, "id")?;
        let version = p.optional("version", |j| j.as_str().is_some(), "string")?;
        let cksum = p.optional("cksum", |j| j.as_str().is_some(), "string")?;
        let tables = p.required("tables", |j| j.as_object().is_some(), "object")?;
        p.finish()?;
        let version = version.and_then(Json::as_str).unwrap_or("").to_string();
        if !version.is_empty() && !valid_version(&version) {
            return Err(Error::syntax_at(
                j,
                format!("schema version \"{}\" not in format x.y.z", version),
            ));
        }
        let tables = tables.as_object().cloned().unwrap_or_default();
        let names: Vec<&str> = tables.keys().collect();
        let mut parsed = Vec::new();
        let mut any_root = false;
        for i in shash_order(&names) {
            let (tname, tj) = match tables.iter().nth(i) {
                Some(x) => x,
                None => continue,
            };
            if tname.starts_with('_') {
                return Err(Error::syntax("names beginning with \"_\" are reserved"));
            }
            if !is_id_str(tname) {
                return Err(Error::syntax("name must be a valid id"));
            }
            let (t, _explicit) = TableSchema::from_json(tname, tj)?;
            any_root |= t.is_root;
            parsed.push(t);
        }
        if !any_root {
            // Pre-GC schemas: every table is a root table. Like OVS
            // (`ovsdb_schema_from_json` counts the tables whose `is_root`
            // is true), this also holds when tables say `"isRoot": false`
            // explicitly but none says `true`.
            for t in &mut parsed {
                t.is_root = true;
            }
        }
        // Table map iteration order.
        let order = shash_order(&parsed.iter().map(|t| t.name.as_str()).collect::<Vec<_>>());
        let mut slots: Vec<Option<TableSchema>> = parsed.into_iter().map(Some).collect();
        let tables: Vec<TableSchema> = order.into_iter().filter_map(|i| slots[i].take()).collect();
        let index = name_index(tables.iter().map(|t| t.name.as_str()));
        let mut schema = DatabaseSchema {
            name: name.as_str().unwrap_or("").to_string(),
            version,
            cksum: cksum.and_then(Json::as_str).unwrap_or("").to_string(),
            tables,
            index,
        };
        // Reference targets must exist; ephemeral strong refs to non-root
        // tables become persistent.
        // Each table's `is_root`, by the table's name.
        let roots: Vec<bool> = schema.tables.iter().map(|t| t.is_root).collect();
        let root = |name: &str| schema.index.get(name).map(|&i| roots[i]);
        for t in &mut schema.tables {
            for c in &mut t.columns {
                let bases = std::iter::once(("key", &c.ty.key))
                    .chain(c.ty.value.iter().map(|v| ("value", v)));
                for (which, b) in bases {
                    if let Some(rt) = &b.ref_table {
                        if root(rt).is_none() {
                            return Err(Error::syntax(format!(
                                "column {} {} refers to undefined table {}",
                                c.name, which, rt
                            )));
                        }
                    }
                }
                if !c.persistent {
                    let strong_nonroot =
                        std::iter::once(&c.ty.key)
                            .chain(c.ty.value.iter())
                            .any(|b| {
                                b.is_strong_ref()
                                    && b.ref_table
                                        .as_ref()
                                        .is_some_and(|rt| root(rt) == Some(false))
                            });
                    if strong_nonroot {
                        c.persistent = true;
                    }
                }
            }
        }
        Ok(schema)
    }

    /// Parses schema text (e.g. an `.ovsschema` file's bytes).
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let j = crate::json::parse(bytes).map_err(|e| Error::syntax(e.to_string()))?;
        DatabaseSchema::from_json(&j)
    }

    pub fn table(&self, name: &str) -> Option<&TableSchema> {
        self.index.get(name).map(|&i| &self.tables[i])
    }

    pub fn table_index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// Normalized JSON with objects in C *insertion* order. Use
    /// [`DatabaseSchema::to_json_hash_order`] for the bytes a standalone
    /// file's record 0 has, or `.sorted_recursive()` for Raft payloads.
    pub fn to_json(&self) -> Json {
        let default_is_root = self.tables.iter().all(|t| t.is_root);
        let mut o = Object::new();
        o.push_unchecked("name", Json::String(self.name.clone()));
        if !self.version.is_empty() {
            o.push_unchecked("version", Json::String(self.version.clone()));
        }
        if !self.cksum.is_empty() {
            o.push_unchecked("cksum", Json::String(self.cksum.clone()));
        }
        let mut tables = Object::new();
        for t in &self.tables {
            tables.push_unchecked(t.name.clone(), t.to_json(default_is_root));
        }
        o.push_unchecked("tables", Json::Object(tables));
        Json::Object(o)
    }

    /// The schema JSON with every object in `shash` iteration order (§5.4
    /// variant M), as ovsdb-server writes it into a standalone file.
    pub fn to_json_hash_order(&self) -> Json {
        let mut j = self.to_json();
        j.reorder_shash_recursive();
        j
    }
}
