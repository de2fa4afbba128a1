//! Replaying txn records into an in-memory database (spec §2.4, §3.3, §3.6),
//! with column diffs, strong-reference garbage collection of non-root rows,
//! and per-record size accounting in both storage modes.
//!
//! This is the log crate's own replay state. It uses `ovsdb`'s schema,
//! datum and diff code; it keeps only what replay needs (rows as column
//! vectors, strong reference counts).

use crate::rawtxn::{ColSrc, MemberSrc, RowSrc, TxnSrc};
use ovsdb::json::{Json, Object};
use ovsdb::{DatabaseSchema, Datum, TableSchema, Type, Uuid};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Storage mode of txn records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Full new values for modified columns (`--disable-file-column-diff`).
    Full,
    /// Column diffs for composite columns, `"_is_diff": true` on every record.
    Diff,
}

/// Bytes of `,"_is_diff":true` (one less when it is the only member).
pub const IS_DIFF_MEMBER_LEN: i64 = 16;

/// What applying one txn record changed in size terms: how many bytes the
/// record's body would gain (or lose) if written in each mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SizeDelta {
    pub full: i64,
    pub diff: i64,
}

/// A row: one datum per column of the table schema (`_uuid`/`_version`
/// slots stay empty).
pub type Row = Vec<Datum>;

/// The replayed database.
#[derive(Debug, Clone)]
pub struct Db {
    pub schema: DatabaseSchema,
    /// Rows per table (same order as `schema.tables`), by UUID.
    pub tables: Vec<BTreeMap<Uuid, Row>>,
    /// Strong references pointing at each row.
    refs: HashMap<Uuid, u32>,
}

/// (table index, row, operation).
type RowOp = (usize, Uuid, Op);

enum Op {
    Delete,
    Insert(Row),
    /// (column index, new value) for the changed columns.
    Modify(Vec<(usize, Datum)>),
}

fn strong_targets(ty: &Type) -> bool {
    ty.key.is_strong_ref() || ty.value.as_ref().is_some_and(|v| v.is_strong_ref())
}

fn for_each_strong_ref(ty: &Type, d: &Datum, mut f: impl FnMut(Uuid)) {
    let key_strong = ty.key.is_strong_ref();
    let val_strong = ty.value.as_ref().is_some_and(|v| v.is_strong_ref());
    match d {
        Datum::Set(s) if key_strong => s.iter().filter_map(|a| a.as_uuid()).for_each(&mut f),
        Datum::Map(m) => {
            for (k, v) in m {
                if key_strong {
                    if let Some(u) = k.as_uuid() {
                        f(u)
                    }
                }
                if val_strong {
                    if let Some(u) = v.as_uuid() {
                        f(u)
                    }
                }
            }
        }
        _ => {}
    }
}

/// Strong references added (+1) and removed (-1) when a column goes from
/// `old` to `new`, computed on the changed atoms only.
fn ref_changes(ty: &Type, old: Option<&Datum>, new: Option<&Datum>, mut f: impl FnMut(Uuid, i32)) {
    if let (Some(o), Some(n)) = (old, new) {
        if o == n {
            return;
        }
    }
    let collect = |d: Option<&Datum>| {
        let mut v = Vec::new();
        if let Some(d) = d {
            for_each_strong_ref(ty, d, |u| v.push(u));
        }
        v.sort_unstable();
        v
    };
    let (a, b) = (collect(old), collect(new));
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                f(*x, -1);
                i += 1;
            }
            (Some(_), Some(y)) => {
                f(*y, 1);
                j += 1;
            }
            (Some(x), None) => {
                f(*x, -1);
                i += 1;
            }
            (None, Some(y)) => {
                f(*y, 1);
                j += 1;
            }
            (None, None) => break,
        }
    }
}

impl Db {
    /// An empty database.
    pub fn new(schema: DatabaseSchema) -> Db {
        let n = schema.tables.len();
        Db {
            schema,
            tables: vec![BTreeMap::new(); n],
            refs: HashMap::new(),
        }
    }

    fn default_row(t: &TableSchema) -> Row {
        t.columns
            .iter()
            .map(|c| {
                if c.is_implicit() {
                    Datum::default()
                } else {
                    Datum::default_for(&c.ty)
                }
            })
            .collect()
    }

    /// Number of rows over all tables.
    pub fn row_count(&self) -> usize {
        self.tables.iter().map(BTreeMap::len).sum()
    }

    fn datum_of(src: &ColSrc<'_>, ty: &Type, relaxed: bool) -> Result<Datum, String> {
        let from_json = |j: &Json| {
            if relaxed {
                Datum::diff_from_json(j, ty)
            } else {
                Datum::from_json(j, ty)
            }
            .map_err(|e| e.to_string())
        };
        match src {
            ColSrc::Json(j) => from_json(j),
            ColSrc::Raw { fast: Some(d), .. }
                if ty.key.atomic == ovsdb::AtomicType::Uuid && !ty.is_map() =>
            {
                if !relaxed {
                    d.check_size(ty).map_err(|e| e.to_string())?;
                }
                Ok(d.clone())
            }
            ColSrc::Raw { slice, .. } => from_json(&crate::rawtxn::parse_slice(slice)?),
        }
    }

    fn parse_ops(&self, txn: &TxnSrc<'_>) -> Result<(Vec<RowOp>, SizeDelta), String> {
        let diff_mode = txn.diff_mode;
        let mut ops = Vec::new();
        let mut delta = SizeDelta::default();
        for (name, member) in &txn.members {
            let rows = match member {
                MemberSrc::Special => continue,
                MemberSrc::Table(rows) => Some(rows),
                MemberSrc::Other => None,
            };
            let ti = self
                .schema
                .table_index(name)
                .ok_or_else(|| format!("No table named {name}."))?;
            let ts = &self.schema.tables[ti];
            let rows = rows.ok_or_else(|| format!("table {name}: object expected"))?;
            for (us, rs) in rows {
                let uuid = Uuid::parse(us)
                    .filter(|_| us.len() == 36)
                    .ok_or_else(|| format!("\"{us}\" is not a valid UUID"))?;
                let existing = self.tables[ti].get(&uuid);
                let cols = match rs {
                    RowSrc::Delete => {
                        if existing.is_none() {
                            return Err(format!(
                                "transaction deletes row {us} that does not exist"
                            ));
                        }
                        ops.push((ti, uuid, Op::Delete));
                        continue;
                    }
                    RowSrc::Bad => return Err(format!("row {us}: object or null expected")),
                    RowSrc::Cols(c) => c,
                };
                match existing {
                    None => {
                        let mut row = Self::default_row(ts);
                        for (cn, src) in cols {
                            let ci = user_column(ts, cn)?;
                            let ty = &ts.columns[ci].ty;
                            let d = Self::datum_of(src, ty, false)
                                .map_err(|e| format!("{name} column {cn}: {e}"))?;
                            d.check(ty)
                                .map_err(|e| format!("{name} column {cn}: {e}"))?;
                            row[ci] = d;
                        }
                        ops.push((ti, uuid, Op::Insert(row)));
                    }
                    Some(old) => {
                        let mut changes = Vec::with_capacity(cols.len());
                        for (cn, src) in cols {
                            let ci = user_column(ts, cn)?;
                            let ty = &ts.columns[ci].ty;
                            let stored_len = src.stored_len()? as i64;
                            let new = if diff_mode && ty.is_composite() {
                                let d = Self::datum_of(src, ty, true)
                                    .map_err(|e| format!("{name} column {cn}: {e}"))?;
                                let mut n = old[ci].clone();
                                n.apply_diff(&d, ty)
                                    .map_err(|e| format!("{name} column {cn}: {e}"))?;
                                n.check(ty)
                                    .map_err(|e| format!("{name} column {cn}: {e}"))?;
                                n
                            } else {
                                let d = Self::datum_of(src, ty, false)
                                    .map_err(|e| format!("{name} column {cn}: {e}"))?;
                                d.check(ty)
                                    .map_err(|e| format!("{name} column {cn}: {e}"))?;
                                d
                            };
                            let full_len = new.json_len() as i64;
                            let diff_len = if ty.is_composite() {
                                Datum::diff(&old[ci], &new, ty).json_len() as i64
                            } else {
                                full_len
                            };
                            delta.full += full_len - stored_len;
                            delta.diff += diff_len - stored_len;
                            changes.retain(|(c, _)| *c != ci);
                            changes.push((ci, new));
                        }
                        ops.push((ti, uuid, Op::Modify(changes)));
                    }
                }
            }
        }
        // `"_is_diff":true` alone in the object has no comma before it.
        let flag_len = |alone: bool| IS_DIFF_MEMBER_LEN - i64::from(alone);
        if txn.has_flag {
            delta.full -= flag_len(txn.members.len() == 1);
        } else {
            delta.diff += flag_len(txn.members.is_empty());
        }
        Ok((ops, delta))
    }

    fn add_refs(&mut self, ti: usize, row: &Row, sign: i64, zeroed: &mut Vec<Uuid>) {
        let ts = &self.schema.tables[ti];
        for (c, d) in ts.columns.iter().zip(row) {
            if !strong_targets(&c.ty) {
                continue;
            }
            for_each_strong_ref(&c.ty, d, |u| {
                let e = self.refs.entry(u).or_insert(0);
                if sign > 0 {
                    *e += 1;
                } else {
                    *e = e.saturating_sub(1);
                    if *e == 0 {
                        zeroed.push(u);
                    }
                }
            });
        }
    }

    /// Applies one txn record (the JSON object of §2.3) to the database:
    /// row existence decides insert vs modify, `_is_diff` decides diff vs
    /// replace, then strong references are checked and unreferenced
    /// non-root rows are garbage-collected. On error the database is
    /// unchanged. Returns the record's size change in each storage mode.
    pub fn apply_txn(&mut self, txn: &Json) -> Result<SizeDelta, String> {
        let o = txn.as_object().ok_or("txn record is not a JSON object")?;
        let (ops, delta) = self.parse_ops(&TxnSrc::from_json(o))?;
        self.commit(ops)?;
        Ok(delta)
    }

    /// Applies a Raft `data` value (`[schema-or-null, txn-or-null]`) given
    /// as bytes, when its schema slot is null: like [`Db::apply_txn`] on
    /// the txn, but reading common values straight from the bytes. Returns
    /// None when the value has another shape (the caller then parses it).
    pub fn apply_data_bytes(&mut self, data: &[u8]) -> Option<Result<SizeDelta, String>> {
        let t = crate::rawtxn::parse_raw_data(data)?;
        Some(self.parse_ops(&t).and_then(|(ops, delta)| {
            self.commit(ops)?;
            Ok(delta)
        }))
    }

    /// Applies an already-read txn source.
    pub(crate) fn apply_src(&mut self, t: &TxnSrc<'_>) -> Result<SizeDelta, String> {
        let (ops, delta) = self.parse_ops(t)?;
        self.commit(ops)?;
        Ok(delta)
    }

    fn commit(&mut self, ops: Vec<RowOp>) -> Result<(), String> {
        // Referential integrity of the new values (strong refs must point
        // at rows that exist after the transaction).
        let deleted: HashSet<(usize, Uuid)> = ops
            .iter()
            .filter(|(_, _, op)| matches!(op, Op::Delete))
            .map(|(t, u, _)| (*t, *u))
            .collect();
        let inserted: HashSet<Uuid> = ops
            .iter()
            .filter(|(_, _, op)| matches!(op, Op::Insert(_)))
            .map(|(_, u, _)| *u)
            .collect();
        for (ti, uuid, op) in &ops {
            let changed: Vec<(usize, &Datum)> = match op {
                Op::Insert(r) => r.iter().enumerate().collect(),
                Op::Modify(ch) => ch.iter().map(|(c, d)| (*c, d)).collect(),
                Op::Delete => continue,
            };
            let ts = &self.schema.tables[*ti];
            let old_row = self.tables[*ti].get(uuid);
            for (ci, d) in changed {
                let c = &ts.columns[ci];
                if !strong_targets(&c.ty) {
                    continue;
                }
                let target =
                    c.ty.key
                        .ref_table
                        .as_deref()
                        .or(c.ty.value.as_ref().and_then(|v| v.ref_table.as_deref()))
                        .and_then(|t| self.schema.table_index(t));
                let Some(tt) = target else { continue };
                let mut missing = None;
                let check = |u: Uuid, missing: &mut Option<Uuid>| {
                    let exists = (self.tables[tt].contains_key(&u) && !deleted.contains(&(tt, u)))
                        || inserted.contains(&u);
                    if !exists && missing.is_none() {
                        *missing = Some(u);
                    }
                };
                if deleted.is_empty() {
                    // Only references this transaction adds can dangle.
                    ref_changes(&c.ty, old_row.map(|r| &r[ci]), Some(d), |u, delta| {
                        if delta > 0 {
                            check(u, &mut missing)
                        }
                    });
                } else {
                    for_each_strong_ref(&c.ty, d, |u| check(u, &mut missing));
                }
                if let Some(u) = missing {
                    return Err(format!(
                        "referential integrity violation: {}.{} refers to missing row {u}",
                        ts.name, c.name
                    ));
                }
            }
        }
        // Commit.
        let deleted_tables: HashSet<usize> = deleted.iter().map(|(t, _)| *t).collect();
        let touched: Vec<(usize, Uuid)> = ops
            .iter()
            .filter(|(_, _, op)| !matches!(op, Op::Delete))
            .map(|(t, u, _)| (*t, *u))
            .collect();
        let mut zeroed = Vec::new();
        let mut gc_candidates: Vec<(usize, Uuid)> = Vec::new();
        for (ti, uuid, op) in ops {
            let ts = &self.schema.tables[ti];
            let old = self.tables[ti].get(&uuid);
            let cols: Vec<(usize, Option<&Datum>)> = match &op {
                Op::Delete => (0..ts.columns.len()).map(|c| (c, None)).collect(),
                Op::Insert(row) => row.iter().enumerate().map(|(c, d)| (c, Some(d))).collect(),
                Op::Modify(ch) => ch.iter().map(|(c, d)| (*c, Some(d))).collect(),
            };
            for (ci, new) in cols {
                let c = &ts.columns[ci];
                if !strong_targets(&c.ty) {
                    continue;
                }
                let refs = &mut self.refs;
                ref_changes(&c.ty, old.map(|r| &r[ci]), new, |u, delta| {
                    let e = refs.entry(u).or_insert(0);
                    if delta > 0 {
                        *e += 1;
                    } else {
                        *e = e.saturating_sub(1);
                        if *e == 0 {
                            zeroed.push(u);
                        }
                    }
                });
            }
            let is_root = ts.is_root;
            match op {
                Op::Delete => {
                    self.tables[ti].remove(&uuid);
                }
                Op::Insert(row) => {
                    if !is_root {
                        gc_candidates.push((ti, uuid));
                    }
                    self.tables[ti].insert(uuid, row);
                }
                Op::Modify(changes) => {
                    if !is_root {
                        gc_candidates.push((ti, uuid));
                    }
                    if let Some(row) = self.tables[ti].get_mut(&uuid) {
                        for (ci, d) in changes {
                            row[ci] = d;
                        }
                    }
                }
            }
        }
        let mut emptied = deleted_tables;
        self.collect_garbage(gc_candidates, zeroed, &mut emptied);
        self.drop_dangling_weak_refs(&emptied, &touched);
        Ok(())
    }

    /// Like ovsdb-server's commit: weak references to rows that no longer
    /// (or never) exist are removed from the referring columns (map
    /// entries go when their key or value is such a reference). Rows are
    /// scanned when their table has weak columns into a table that lost
    /// rows in this transaction, or when the transaction wrote them.
    /// (ovsdb-server also rejects the transaction when this takes a
    /// column below its minimum; files it wrote never need that.)
    fn drop_dangling_weak_refs(&mut self, emptied: &HashSet<usize>, touched: &[(usize, Uuid)]) {
        for st in 0..self.schema.tables.len() {
            let weak: Vec<(usize, Option<usize>, Option<usize>)> = self.schema.tables[st]
                .columns
                .iter()
                .enumerate()
                .filter_map(|(ci, c)| {
                    let t = |b: &ovsdb::BaseType| {
                        b.is_weak_ref()
                            .then(|| {
                                b.ref_table
                                    .as_deref()
                                    .and_then(|n| self.schema.table_index(n))
                            })
                            .flatten()
                    };
                    let k = t(&c.ty.key);
                    let v = c.ty.value.as_ref().and_then(t);
                    (k.is_some() || v.is_some()).then_some((ci, k, v))
                })
                .collect();
            if weak.is_empty() {
                continue;
            }
            let all = weak.iter().any(|(_, k, v)| {
                k.is_some_and(|t| emptied.contains(&t)) || v.is_some_and(|t| emptied.contains(&t))
            });
            let rows: Vec<Uuid> = if all {
                self.tables[st].keys().copied().collect()
            } else {
                touched
                    .iter()
                    .filter(|(t, _)| *t == st)
                    .map(|(_, u)| *u)
                    .collect()
            };
            let tables = &mut self.tables;
            for u in rows {
                for &(ci, kt, vt) in &weak {
                    let live =
                        |t: Option<usize>, a: &ovsdb::Atom, tables: &Vec<BTreeMap<Uuid, Row>>| {
                            match (t, a.as_uuid()) {
                                (Some(t), Some(x)) => tables[t].contains_key(&x),
                                _ => true,
                            }
                        };
                    let Some(row) = tables[st].get(&u) else {
                        continue;
                    };
                    let d = match &row[ci] {
                        Datum::Set(s) if s.iter().all(|a| live(kt, a, tables)) => continue,
                        Datum::Map(m)
                            if m.iter()
                                .all(|(k, v)| live(kt, k, tables) && live(vt, v, tables)) =>
                        {
                            continue
                        }
                        Datum::Set(s) => {
                            Datum::Set(s.iter().filter(|a| live(kt, a, tables)).cloned().collect())
                        }
                        Datum::Map(m) => Datum::Map(
                            m.iter()
                                .filter(|(k, v)| live(kt, k, tables) && live(vt, v, tables))
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect(),
                        ),
                    };
                    if let Some(row) = tables[st].get_mut(&u) {
                        row[ci] = d;
                    }
                }
            }
        }
    }

    /// Deletes unreferenced rows of non-root tables, cascading.
    fn collect_garbage(
        &mut self,
        mut candidates: Vec<(usize, Uuid)>,
        zeroed: Vec<Uuid>,
        emptied: &mut HashSet<usize>,
    ) {
        let mut zeroed = zeroed;
        loop {
            for u in zeroed.drain(..) {
                for (ti, t) in self.tables.iter().enumerate() {
                    if t.contains_key(&u) {
                        candidates.push((ti, u));
                    }
                }
            }
            let mut progress = false;
            for (ti, u) in std::mem::take(&mut candidates) {
                if self.schema.tables[ti].is_root || self.refs.get(&u).copied().unwrap_or(0) > 0 {
                    continue;
                }
                if let Some(row) = self.tables[ti].remove(&u) {
                    emptied.insert(ti);
                    self.refs.remove(&u);
                    self.add_refs(ti, &row, -1, &mut zeroed);
                    progress = true;
                }
            }
            if !progress && zeroed.is_empty() {
                break;
            }
        }
    }

    /// Rewrites a txn record for `mode`, given the database state *before*
    /// the record (call before [`Db::apply_txn`]). Modified composite
    /// columns get diffs (Diff) or full values (Full); `_is_diff` is
    /// added/removed; everything else, member order included, is kept.
    pub fn transform_txn(&self, txn: &Json, mode: Mode) -> Result<Json, String> {
        let o = txn.as_object().ok_or("txn record is not a JSON object")?;
        let diff_mode = matches!(o.get("_is_diff"), Some(Json::Bool(true)));
        let mut out = Object::with_capacity(o.len() + 1);
        for (name, tj) in o.iter() {
            if name == "_is_diff" {
                continue;
            }
            let Some(ti) = self.schema.table_index(name) else {
                if name == "_comment" {
                    out.push_unchecked(name, tj.clone());
                    if mode == Mode::Diff {
                        out.push_unchecked("_is_diff", Json::Bool(true));
                    }
                } else {
                    out.push_unchecked(name, tj.clone());
                }
                continue;
            };
            let ts = &self.schema.tables[ti];
            let Some(rows) = tj.as_object() else {
                out.push_unchecked(name, tj.clone());
                continue;
            };
            let mut nrows = Object::with_capacity(rows.len());
            for (us, rj) in rows.iter() {
                let old = Uuid::parse(us).and_then(|u| self.tables[ti].get(&u));
                let (Some(old), Some(cols)) = (old, rj.as_object()) else {
                    nrows.push_unchecked(us, rj.clone());
                    continue;
                };
                let mut ncols = Object::with_capacity(cols.len());
                for (cn, cj) in cols.iter() {
                    let ci = user_column(ts, cn)?;
                    let ty = &ts.columns[ci].ty;
                    if !ty.is_composite() {
                        ncols.push_unchecked(cn, cj.clone());
                        continue;
                    }
                    let new = if diff_mode {
                        let d = Datum::diff_from_json(cj, ty).map_err(|e| e.to_string())?;
                        old[ci].with_diff(&d, ty).map_err(|e| e.to_string())?
                    } else {
                        Datum::from_json(cj, ty).map_err(|e| e.to_string())?
                    };
                    let v = match mode {
                        Mode::Full => new.to_json(),
                        Mode::Diff => Datum::diff(&old[ci], &new, ty).to_json(),
                    };
                    ncols.push_unchecked(cn, v);
                }
                nrows.push_unchecked(us, Json::Object(ncols));
            }
            out.push_unchecked(name, Json::Object(nrows));
        }
        if mode == Mode::Diff && !out.contains_key("_is_diff") {
            // Keep the C insertion order: tables, _comment, _is_diff, _date.
            let members = out.into_members();
            let mut o2 = Object::with_capacity(members.len() + 1);
            let mut placed = false;
            for (k, v) in members {
                if k == "_date" && !placed {
                    o2.push_unchecked("_is_diff", Json::Bool(true));
                    placed = true;
                }
                o2.push_unchecked(k, v);
            }
            if !placed {
                o2.push_unchecked("_is_diff", Json::Bool(true));
            }
            out = o2;
        }
        Ok(Json::Object(out))
    }

    /// Converts the database to another schema (no-data conversion
    /// entries, §3.3): rows of tables present in both are kept, columns
    /// present in both are copied (re-parsed when the type changed), new
    /// columns get defaults.
    pub fn convert(&self, schema: DatabaseSchema) -> Result<Db, String> {
        let mut db = Db::new(schema);
        for (nti, nts) in db.schema.tables.clone().iter().enumerate() {
            let Some(oti) = self.schema.table_index(&nts.name) else {
                continue;
            };
            let ots = &self.schema.tables[oti];
            for (u, orow) in &self.tables[oti] {
                let mut row = Self::default_row(nts);
                for (ci, c) in nts.columns.iter().enumerate() {
                    if c.is_implicit() {
                        continue;
                    }
                    let Some(oci) = ots.column_index(&c.name) else {
                        continue;
                    };
                    row[ci] = if ots.columns[oci].ty == c.ty {
                        orow[oci].clone()
                    } else {
                        Datum::from_json(&orow[oci].to_json(), &c.ty)
                            .map_err(|e| format!("converting {}.{}: {e}", nts.name, c.name))?
                    };
                }
                let mut z = Vec::new();
                db.add_refs(nti, &row, 1, &mut z);
                db.tables[nti].insert(*u, row);
            }
        }
        Ok(db)
    }

    /// `{table: {uuid: {column: datum}}}` with every persistent user column,
    /// tables, rows and columns sorted (OVSDB JSON notation for datums).
    pub fn to_json(&self) -> Json {
        let mut out = Object::new();
        for (ti, ts) in self.schema.tables.iter().enumerate() {
            let mut rows = Object::with_capacity(self.tables[ti].len());
            for (u, row) in &self.tables[ti] {
                let mut cols = Object::new();
                for (c, d) in ts.columns.iter().zip(row) {
                    if c.is_implicit() {
                        continue;
                    }
                    cols.push_unchecked(c.name.clone(), d.to_json());
                }
                cols.sort();
                rows.push_unchecked(u.to_string(), Json::Object(cols));
            }
            out.push_unchecked(ts.name.clone(), Json::Object(rows));
        }
        out.sort();
        Json::Object(out)
    }
}

fn user_column(ts: &TableSchema, name: &str) -> Result<usize, String> {
    match ts.column_index(name) {
        Some(i) if !ts.columns[i].is_implicit() => Ok(i),
        _ => Err(format!("No column {name} in table {}.", ts.name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ovsdb::json::parse;

    const SCHEMA: &str = r#"{"name":"D","tables":{
        "Root":{"isRoot":true,"columns":{"kids":{"type":{"key":{"type":"uuid","refTable":"Kid"},"min":0,"max":"unlimited"}},
                                          "tags":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}}}},
        "Kid":{"columns":{"name":{"type":"string"},"pet":{"type":{"key":{"type":"uuid","refTable":"Pet"},"min":0,"max":1}}}},
        "Pet":{"columns":{"n":{"type":"integer"}}}}}"#;
    const R: &str = "00000000-0000-4000-8000-000000000001";
    const K1: &str = "00000000-0000-4000-8000-0000000000a1";
    const K2: &str = "00000000-0000-4000-8000-0000000000a2";
    const P: &str = "00000000-0000-4000-8000-0000000000b1";

    fn db() -> Db {
        Db::new(DatabaseSchema::parse(SCHEMA.as_bytes()).unwrap())
    }
    fn txn(s: &str) -> Json {
        parse(s.as_bytes()).unwrap()
    }
    fn count(db: &Db, t: &str) -> usize {
        db.tables[db.schema.table_index(t).unwrap()].len()
    }

    #[test]
    fn is_diff_flag_alone_has_no_comma() {
        // `{}` gains `"_is_diff":true` (15 bytes) in diff mode;
        // `{"_is_diff":true}` loses the same 15 in full mode; with other
        // members the flag costs `,"_is_diff":true` (16).
        let mut d = db();
        let e = d.apply_txn(&txn("{}")).unwrap();
        assert_eq!((e.full, e.diff), (0, 15));
        let e = d.apply_txn(&txn(r#"{"_is_diff":true}"#)).unwrap();
        assert_eq!((e.full, e.diff), (-15, 0));
        let e = d.apply_txn(&txn(r#"{"_date":1}"#)).unwrap();
        assert_eq!((e.full, e.diff), (0, IS_DIFF_MEMBER_LEN));
        let e = d.apply_txn(&txn(r#"{"_date":1,"_is_diff":true}"#)).unwrap();
        assert_eq!((e.full, e.diff), (-IS_DIFF_MEMBER_LEN, 0));
        // The raw-bytes path agrees.
        let e = d.apply_data_bytes(b"[null,{}]").unwrap().unwrap();
        assert_eq!((e.full, e.diff), (0, 15));
    }

    #[test]
    fn diffs_gc_and_integrity() {
        let mut d = db();
        d.apply_txn(&txn(&format!(
            r#"{{"Pet":{{"{P}":{{"n":1}}}},"Kid":{{"{K1}":{{"name":"a","pet":["uuid","{P}"]}},"{K2}":{{"name":"b"}}}},
                "Root":{{"{R}":{{"kids":["set",[["uuid","{K1}"],["uuid","{K2}"]]],"tags":["map",[["x","1"],["y","2"]]]}}}},"_is_diff":true}}"#
        )))
        .unwrap();
        assert_eq!((count(&d, "Kid"), count(&d, "Pet")), (2, 1));
        // Diff: removing K1 from the set (bare atom = one-element diff) and
        // updating map key y; K1 loses its last reference and is collected,
        // and with it Pet P (cascade).
        let delta = d
            .apply_txn(&txn(&format!(
                r#"{{"Root":{{"{R}":{{"kids":["uuid","{K1}"],"tags":["map",[["y","3"]]]}}}},"_is_diff":true}}"#
            )))
            .unwrap();
        assert_eq!((count(&d, "Kid"), count(&d, "Pet")), (1, 0));
        let root = &d.tables[d.schema.table_index("Root").unwrap()];
        let j = d.to_json();
        let row = j.get("Root").unwrap().get(R).unwrap();
        assert_eq!(
            row.get("kids").unwrap().to_string(),
            format!(r#"["uuid","{K2}"]"#)
        );
        assert_eq!(
            row.get("tags").unwrap().to_string(),
            r#"["map",[["x","1"],["y","3"]]]"#
        );
        assert_eq!(root.len(), 1);
        // Full mode would carry the whole new values and no _is_diff.
        let full_kids = format!(r#"["uuid","{K2}"]"#).len() as i64;
        let stored = (format!(r#"["uuid","{K1}"]"#).len() + r#"["map",[["y","3"]]]"#.len()) as i64;
        let full_tags = r#"["map",[["x","1"],["y","3"]]]"#.len() as i64;
        assert_eq!(
            delta.full,
            full_kids + full_tags - stored - IS_DIFF_MEMBER_LEN
        );
        assert_eq!(delta.diff, 0);
        // Integrity: a strong reference to a missing row fails and leaves
        // the database unchanged.
        let before = d.to_json();
        let e = d
            .apply_txn(&txn(&format!(
                r#"{{"Kid":{{"{K2}":{{"pet":["uuid","{P}"]}}}}}}"#
            )))
            .unwrap_err();
        assert!(e.contains("referential integrity"), "{e}");
        assert_eq!(d.to_json(), before);
        // Deleting a row that does not exist fails.
        assert!(d
            .apply_txn(&txn(&format!(r#"{{"Kid":{{"{K1}":null}}}}"#)))
            .unwrap_err()
            .contains("does not exist"));
        // Unknown table / column.
        assert!(d
            .apply_txn(&txn(r#"{"Nope":{}}"#))
            .unwrap_err()
            .contains("No table named Nope"));
        assert!(d
            .apply_txn(&txn(&format!(r#"{{"Kid":{{"{K2}":{{"zzz":1}}}}}}"#)))
            .is_err());
    }

    #[test]
    fn transform_round_trips_between_modes() {
        let mut d = db();
        let ins = txn(&format!(
            r#"{{"Kid":{{"{K1}":{{"name":"a"}},"{K2}":{{"name":"b"}}}},"Root":{{"{R}":{{"kids":["uuid","{K1}"]}}}},"_is_diff":true}}"#
        ));
        d.apply_txn(&ins).unwrap();
        let diff = txn(&format!(
            r#"{{"Root":{{"{R}":{{"kids":["uuid","{K2}"]}}}},"_date":5,"_is_diff":true}}"#
        ));
        let full = d.transform_txn(&diff, Mode::Full).unwrap();
        assert_eq!(
            full.to_string(),
            format!(
                r#"{{"Root":{{"{R}":{{"kids":["set",[["uuid","{K1}"],["uuid","{K2}"]]]}}}},"_date":5}}"#
            )
        );
        // Back to diff mode: `_is_diff` is re-inserted before `_date` (the
        // C writer's insertion order).
        let back = d.transform_txn(&full, Mode::Diff).unwrap();
        assert_eq!(
            back.to_string(),
            format!(r#"{{"Root":{{"{R}":{{"kids":["uuid","{K2}"]}}}},"_is_diff":true,"_date":5}}"#)
        );
    }
}
