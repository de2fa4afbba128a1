//! Replaying txn records into an in-memory database (spec §2.4, §3.3, §3.6),
//! with column diffs, and per-record size accounting in both storage modes.
//!
//! The database is `ovsdb`'s [`ovsdb::Database`]: referential integrity,
//! garbage collection of non-root rows and weak-reference cleanup are its
//! commit's (one implementation for the log reader, the simulator and the
//! IDL's server model). This layer reads records, straight from the bytes
//! for common values ([`crate::rawtxn`]), and computes each record's size
//! in the other storage mode.

use crate::rawtxn::{ColSrc, MemberSrc, RowSrc, TxnSrc};
use ovsdb::json::{Json, Object};
use ovsdb::{DatabaseSchema, Datum, StorageMode, TableSchema, Type, Uuid};
use std::collections::{HashMap, HashSet};

/// Bytes of `,"_is_diff":true` (one less when it is the only member).
pub const IS_DIFF_MEMBER_LEN: i64 = 16;

/// What applying one txn record changed in size terms: how many bytes the
/// record's body would gain (or lose) if written in each mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SizeDelta {
    pub full: i64,
    pub diff: i64,
}

/// The replayed database: an [`ovsdb::Database`] plus its schema.
#[derive(Debug, Clone)]
pub struct Db {
    /// The schema, the core's own (`core().schema()`): a clone of the
    /// database (a checkpoint's, at each jump) shares it.
    pub schema: std::sync::Arc<DatabaseSchema>,
    core: ovsdb::Database,
}

/// (table index, row, operation).
type RowOp = (usize, Uuid, Op);

pub(crate) enum Op {
    Delete,
    Insert(Vec<(usize, Datum)>),
    /// (column index, new value) for the changed columns.
    Modify(Vec<(usize, Datum)>),
}

impl Db {
    /// An empty database.
    pub fn new(schema: DatabaseSchema) -> Db {
        let schema = std::sync::Arc::new(schema);
        let core = ovsdb::Database::new(schema.clone());
        Db { schema, core }
    }

    pub(crate) fn row(&self, ti: usize, u: &Uuid) -> Option<&[Datum]> {
        self.core
            .table_at(ti)?
            .rows
            .get(u)
            .map(|r| r.columns.as_slice())
    }

    /// The rows of table `ti` (index into `schema.tables`).
    pub fn table(&self, ti: usize) -> Option<&ovsdb::Table> {
        self.core.table_at(ti)
    }

    /// The underlying core database.
    pub fn core(&self) -> &ovsdb::Database {
        &self.core
    }

    /// Takes the core database out.
    pub fn into_core(self) -> ovsdb::Database {
        self.core
    }

    /// Number of rows over all tables.
    pub fn row_count(&self) -> usize {
        self.core.row_count()
    }

    /// A column's value from its source. A pre-decoded UUID set is taken,
    /// not copied (the one read of the value); without it the bytes are
    /// read.
    fn datum_of(src: &ColSrc<'_>, ty: &Type, relaxed: bool) -> Result<Datum, String> {
        let from_json = |j: &Json| {
            if relaxed {
                Datum::diff_from_json(j, ty)
            } else {
                Datum::from_json(j, ty)
            }
            .map_err(|e| e.to_string())
        };
        let (fast, slice) = match src {
            ColSrc::Json(j) => return from_json(j),
            ColSrc::Raw { fast, slice, .. } => (fast, slice),
        };
        let uuid_set = ty.key.atomic == ovsdb::AtomicType::Uuid && !ty.is_map();
        let d = match fast.take().filter(|_| uuid_set) {
            Some(d) => d,
            None => match crate::rawtxn::plain_datum(slice, ty) {
                Some(d) => d,
                None => return from_json(&crate::rawtxn::parse_slice(slice)?),
            },
        };
        if !relaxed {
            d.check_size(ty).map_err(|e| e.to_string())?;
        }
        Ok(d)
    }

    /// Whether a value [`Db::datum_of`] read from `src` already satisfies
    /// `ty` atom by atom: a decoded UUID set (every atom a UUID) of a
    /// UUID column without an enumeration, whose atoms have nothing else
    /// to check ([`ovsdb::Atom::check_constraints`]).
    fn atoms_known_good(src: &ColSrc<'_>, ty: &Type) -> bool {
        matches!(
            src,
            ColSrc::Raw {
                canonical: true,
                ..
            }
        ) && ty.key.atomic == ovsdb::AtomicType::Uuid
            && ty.key.enum_.is_none()
            && !ty.is_map()
    }

    fn parse_ops(&self, txn: &TxnSrc<'_>) -> Result<(Vec<RowOp>, SizeDelta), String> {
        parse_ops_in(&self.schema, &|ti, u| self.row(ti, u), txn, None, true)
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

    /// [`Db::apply_data_bytes`] on bytes that may have been read ahead
    /// ([`crate::ahead::Prepared`]): their read is used, not made again.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn apply_prepared(
        &mut self,
        p: &mut crate::ahead::Prepared,
    ) -> Option<Result<SizeDelta, String>> {
        match p.take_src() {
            Some(t) => Some(self.apply_src(&t)),
            None => self.apply_data_bytes(p.data()),
        }
    }

    /// Applies a Raft `data` value `[schema|null, txn|null]`: a
    /// transaction, a conversion to a new schema (`[schema, null]`), or a
    /// new database (`[schema, txn]`, as a snapshot writes it).
    pub fn apply_data(&mut self, data: &Json) -> Result<SizeDelta, String> {
        let Some((schema, txn)) = crate::scan::split_data(data) else {
            return Err("invalid commit format (data is not a 2-element array)".into());
        };
        let schema = match schema {
            Json::Null => None,
            s => Some(DatabaseSchema::from_json(s).map_err(|e| format!("bad schema: {e}"))?),
        };
        match (schema, txn) {
            (None, Json::Null) => Err("data is [null, null]".into()),
            (None, txn) => self.apply_txn(txn),
            (Some(s), Json::Null) => {
                *self = self.convert(s)?;
                Ok(SizeDelta::default())
            }
            (Some(s), txn) => {
                let mut d = Db::new(s);
                let delta = d.apply_txn(txn)?;
                *self = d;
                Ok(delta)
            }
        }
    }

    /// Applies a transaction the scanner read on the way
    /// ([`crate::scan::ScanOptions::txn`]).
    pub fn apply_scanned(&mut self, t: &crate::scan::ScannedTxn<'_>) -> Result<SizeDelta, String> {
        self.apply_src(&t.0)
    }

    /// Applies an already-read txn source.
    pub(crate) fn apply_src(&mut self, t: &TxnSrc<'_>) -> Result<SizeDelta, String> {
        let (ops, delta) = self.parse_ops(t)?;
        self.commit(ops)?;
        Ok(delta)
    }

    /// Applies the operations as one `ovsdb::Database` transaction: its
    /// commit checks strong references, collects unreferenced non-root rows
    /// and drops weak references to missing rows; on error nothing changes.
    /// (Unique indexes are not re-checked: files written by ovsdb-server
    /// satisfy them, and the check costs O(rows) per transaction.)
    fn commit(&mut self, ops: Vec<RowOp>) -> Result<(), String> {
        let mut t = self.core.begin_with(ovsdb::ReplayOptions {
            skip_index_check: true,
            skip_changes: true,
            file_record_order: true,
            // `parse_ops` checked every value against its column type.
            atoms_checked: true,
            ..Default::default()
        });
        for (ti, u, op) in ops {
            match op {
                Op::Delete => t.delete_at(ti, u),
                Op::Insert(vals) => t.insert_at(ti, u, vals),
                Op::Modify(ch) => ch
                    .into_iter()
                    .try_for_each(|(ci, d)| t.set_at(ti, u, ci, d)),
            }
            .map_err(|e| e.to_string())?;
        }
        t.commit().map(|_| ()).map_err(|e| e.to_string())
    }

    /// Puts rows in place as given (None: absent), without a transaction
    /// ([`ovsdb::Database::place_rows`]): for the net change of records
    /// ([`crate::net`]).
    pub(crate) fn place_rows(&mut self, rows: Vec<ovsdb::db::PlacedRow>) {
        self.core.place_rows(rows);
    }

    /// The row as the database holds it (shared).
    pub(crate) fn row_ref(&self, ti: usize, u: &Uuid) -> Option<ovsdb::db::RowRef> {
        self.core.table_at(ti)?.rows.get(u).cloned()
    }

    /// Rewrites a txn record for `mode`, given the database state *before*
    /// the record (call before [`Db::apply_txn`]). Modified composite
    /// columns get diffs (Diff) or full values (Full); `_is_diff` is
    /// added/removed; everything else, member order included, is kept.
    pub fn transform_txn(&self, txn: &Json, mode: StorageMode) -> Result<Json, String> {
        transform_txn_in(&self.schema, &|ti, u| self.row(ti, u), txn, mode)
    }

    /// Converts the database to another schema (no-data conversion
    /// entries, §3.3): rows of tables present in both are kept, columns
    /// present in both are copied (re-parsed when the type changed), new
    /// columns get defaults.
    pub fn convert(&self, schema: DatabaseSchema) -> Result<Db, String> {
        let schema = std::sync::Arc::new(schema);
        let core = self
            .core
            .convert(schema.clone())
            .map_err(|e| e.to_string())?;
        Ok(Db { schema, core })
    }

    /// `{table: {uuid: {column: datum}}}` with every persistent user column,
    /// tables, rows and columns sorted (OVSDB JSON notation for datums).
    pub fn to_json(&self) -> Json {
        let mut out = Object::new();
        for (ti, ts) in self.schema.tables.iter().enumerate() {
            let Some(t) = self.core.table_at(ti) else {
                continue;
            };
            let mut rows = Object::with_capacity(t.len());
            for (u, row) in &t.rows {
                let row = &row.columns;
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

/// The operations of one txn record against the rows `row` gives (the
/// database before the record), with the record's size in each storage
/// mode; `only`: consider these rows alone (the others are not looked at).
fn parse_ops_in<'r>(
    schema: &DatabaseSchema,
    row: &dyn Fn(usize, &Uuid) -> Option<&'r [Datum]>,
    txn: &TxnSrc<'_>,
    only: Option<&HashSet<(usize, Uuid)>>,
    sizes: bool,
) -> Result<(Vec<RowOp>, SizeDelta), String> {
    let diff_mode = txn.diff_mode;
    let mut ops = Vec::new();
    let mut delta = SizeDelta::default();
    for (name, member) in &txn.members {
        let rows = match member {
            MemberSrc::Special => continue,
            MemberSrc::Table(rows) => Some(rows),
            MemberSrc::Other => None,
        };
        let ti = schema
            .table_index(name)
            .ok_or_else(|| format!("No table named {name}."))?;
        let ts = &schema.tables[ti];
        let rows = rows.ok_or_else(|| format!("table {name}: object expected"))?;
        for (us, rs) in rows {
            let uuid = Uuid::parse(us)
                .filter(|_| us.len() == 36)
                .ok_or_else(|| format!("\"{us}\" is not a valid UUID"))?;
            if only.is_some_and(|o| !o.contains(&(ti, uuid))) {
                continue;
            }
            let op = row_op(
                ts,
                us,
                row(ti, &uuid),
                rs,
                diff_mode,
                sizes.then_some(&mut delta),
            )?;
            ops.push((ti, uuid, op));
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

/// The operation a record's row `us` of table `ts` makes on the row as
/// it is (`existing`), read as a replay reads it; with `sizes`, adds the
/// row's size change in each storage mode.
pub(crate) fn row_op(
    ts: &TableSchema,
    us: &str,
    existing: Option<&[Datum]>,
    rs: &RowSrc<'_>,
    diff_mode: bool,
    mut sizes: Option<&mut SizeDelta>,
) -> Result<Op, String> {
    let cols = match rs {
        RowSrc::Delete => {
            if existing.is_none() {
                return Err(format!("transaction deletes row {us} that does not exist"));
            }
            return Ok(Op::Delete);
        }
        RowSrc::Bad => return Err(format!("row {us}: object or null expected")),
        RowSrc::Cols(c) => c,
    };
    // An insert's columns over the defaults, or a modify's new values.
    let mut vals: Vec<(usize, Datum)> = Vec::with_capacity(cols.len());
    for (cn, src) in cols {
        let ci = user_column(ts, cn)?;
        let ty = &ts.columns[ci].ty;
        let old = existing.map(|o| &o[ci]);
        // (Read first: a value that is not JSON fails here, as before.)
        let stored_len = match (&sizes, old) {
            (Some(_), Some(_)) => src.stored_len()? as i64,
            _ => 0,
        };
        let new = column_value(src, ty, old.filter(|_| diff_mode))
            .map_err(|e| format!("{} column {cn}: {e}", ts.name))?;
        if let (Some(delta), Some(old)) = (sizes.as_deref_mut(), old) {
            let full_len = new.json_len() as i64;
            let diff_len = if ty.is_composite() {
                Datum::diff(old, &new, ty).json_len() as i64
            } else {
                full_len
            };
            delta.full += full_len - stored_len;
            delta.diff += diff_len - stored_len;
        }
        vals.retain(|(c, _)| *c != ci);
        vals.push((ci, new));
    }
    Ok(match existing {
        None => Op::Insert(vals),
        Some(_) => Op::Modify(vals),
    })
}

/// A column's value as a record gives it: the value itself, or, given
/// the value before (`diff_before`, in a diff-mode record), that value
/// with the record's diff applied to a set or map.
fn column_value(src: &ColSrc<'_>, ty: &Type, diff_before: Option<&Datum>) -> Result<Datum, String> {
    let new = match diff_before.filter(|_| ty.is_composite()) {
        Some(old) => {
            let d = Db::datum_of(src, ty, true)?;
            let mut n = old.clone();
            n.apply_diff(&d, ty).map_err(|e| e.to_string())?;
            n
        }
        None => {
            // Its size was checked as it was read.
            let d = Db::datum_of(src, ty, false)?;
            if !Db::atoms_known_good(src, ty) {
                d.check_atoms(ty).map_err(|e| e.to_string())?;
            }
            return Ok(d);
        }
    };
    new.check(ty).map_err(|e| e.to_string())?;
    Ok(new)
}

/// [`Db::transform_txn`] against the rows `row` gives.
fn transform_txn_in<'r>(
    schema: &DatabaseSchema,
    row: &dyn Fn(usize, &Uuid) -> Option<&'r [Datum]>,
    txn: &Json,
    mode: StorageMode,
) -> Result<Json, String> {
    let o = txn.as_object().ok_or("txn record is not a JSON object")?;
    let diff_mode = matches!(o.get("_is_diff"), Some(Json::Bool(true)));
    let mut out = Object::with_capacity(o.len() + 1);
    for (name, tj) in o.iter() {
        if name == "_is_diff" {
            continue;
        }
        let Some(ti) = schema.table_index(name) else {
            if name == "_comment" {
                out.push_unchecked(name, tj.clone());
                if mode == StorageMode::Diff {
                    out.push_unchecked("_is_diff", Json::Bool(true));
                }
            } else {
                out.push_unchecked(name, tj.clone());
            }
            continue;
        };
        let ts = &schema.tables[ti];
        let Some(rows) = tj.as_object() else {
            out.push_unchecked(name, tj.clone());
            continue;
        };
        let mut nrows = Object::with_capacity(rows.len());
        for (us, rj) in rows.iter() {
            let old = Uuid::parse(us).and_then(|u| row(ti, &u));
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
                    StorageMode::Full => new.to_json(),
                    StorageMode::Diff => Datum::diff(&old[ci], &new, ty).to_json(),
                };
                ncols.push_unchecked(cn, v);
            }
            nrows.push_unchecked(us, Json::Object(ncols));
        }
        out.push_unchecked(name, Json::Object(nrows));
    }
    if mode == StorageMode::Diff && !out.contains_key("_is_diff") {
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

/// The database after some txn records, followed for a few rows only: a
/// base database (a checkpoint's) and the changes later records make to
/// the chosen rows. What the inspector needs to show one entry in both
/// storage modes is the state before it of the rows it writes; following
/// only those from the nearest checkpoint skips building every other row
/// of the records in between (BENCHMARKS.md, "Inspector jumps that follow
/// only the entry's rows").
///
/// It relies on what ovsdb-server writes: a record lists every row its
/// transaction changed, the rows garbage collection deleted and the weak
/// references it dropped included, so a row's state follows from the
/// records that name it. `tests/inspect_stream.rs` in `timeline` holds it
/// to a full replay on every sample.
#[derive(Debug, Clone)]
pub struct RowsAt {
    base: Db,
    /// The rows followed (table index, UUID); None: all of them (the base
    /// is the whole database and is kept up to date).
    only: Option<HashSet<(usize, Uuid)>>,
    /// Followed rows the records changed: their values, None once deleted.
    changed: HashMap<(usize, Uuid), Option<Vec<Datum>>>,
    /// The followed rows' UUIDs, whatever their table.
    uuids: HashSet<Uuid>,
    /// Their texts (as ovsdb-server writes them), sorted.
    texts: Vec<[u8; 36]>,
}

impl RowsAt {
    /// The whole database `db` (every row is there).
    pub fn whole(db: Db) -> RowsAt {
        RowsAt {
            base: db,
            only: None,
            changed: HashMap::new(),
            uuids: HashSet::new(),
            texts: Vec::new(),
        }
    }

    /// The rows the txn record `txn` (a JSON object of tables of rows)
    /// writes, as they are in `base`; then [`RowsAt::apply_data_bytes`]
    /// and [`RowsAt::apply_txn_bytes`] follow them through later records.
    pub fn for_txn(base: Db, txn: &Json) -> RowsAt {
        let mut only = HashSet::new();
        for (name, rows) in txn.as_object().into_iter().flat_map(|o| o.iter()) {
            let (Some(ti), Some(rows)) = (base.schema.table_index(name), rows.as_object()) else {
                continue;
            };
            for (u, _) in rows.iter() {
                if let Some(u) = Uuid::parse(u) {
                    only.insert((ti, u));
                }
            }
        }
        let uuids: HashSet<Uuid> = only.iter().map(|(_, u)| *u).collect();
        let mut texts: Vec<[u8; 36]> = uuids.iter().map(|u| u.to_ascii()).collect();
        ovsdb::order::sort(&mut texts);
        RowsAt {
            base,
            uuids,
            texts,
            only: Some(only),
            changed: HashMap::new(),
        }
    }

    /// Whether the txn or Raft `data` bytes `b` may write a followed row:
    /// they name one of their UUIDs as a JSON string (or hold a `\u`
    /// escape, which could spell one). False lets a walk pass a record by
    /// without parsing it.
    pub fn mentions(&self, b: &[u8]) -> bool {
        if self.only.is_none() || memchr::memmem::find(b, b"\\u").is_some() {
            return true;
        }
        let dash = |i: usize| b[i] == b'-';
        memchr::memchr_iter(b'"', b).any(|i| {
            if !(i + 37 < b.len()
                && b[i + 37] == b'"'
                && dash(i + 9)
                && dash(i + 14)
                && dash(i + 19)
                && dash(i + 24))
            {
                return false;
            }
            let text = &b[i + 1..i + 37];
            // ovsdb-server writes UUIDs in lower case: the sorted texts
            // answer; another spelling goes through the parser.
            self.texts
                .binary_search_by(|k| k.as_slice().cmp(text))
                .is_ok()
                || (text.iter().any(u8::is_ascii_uppercase)
                    && std::str::from_utf8(text)
                        .ok()
                        .and_then(Uuid::parse)
                        .is_some_and(|u| self.uuids.contains(&u)))
        })
    }

    /// Whether the Raft `data` bytes `b` carry a schema (a conversion):
    /// anything but `[null, ...]`.
    pub fn carries_schema(b: &[u8]) -> bool {
        let ws = |i: usize| {
            (i..b.len())
                .find(|&k| !matches!(b[k], b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(b.len())
        };
        let i = ws(0);
        !(b.get(i) == Some(&b'[') && b[ws(i + 1)..].starts_with(b"null"))
    }

    /// How many rows are followed (None: all).
    pub fn followed(&self) -> Option<usize> {
        self.only.as_ref().map(HashSet::len)
    }

    fn row(&self, ti: usize, u: &Uuid) -> Option<&[Datum]> {
        match self.changed.get(&(ti, *u)) {
            Some(r) => r.as_deref(),
            None => self.base.row(ti, u),
        }
    }

    /// Applies a Raft `data` value given as bytes. When only some rows are
    /// followed: None when it carries a schema (a conversion, which may
    /// change every row: the caller follows the whole database instead,
    /// [`RowsAt::whole`]); the whole database takes conversions too.
    pub fn apply_data_bytes(&mut self, data: &[u8]) -> Option<Result<(), String>> {
        if self.only.is_none() {
            if let Some(r) = self.base.apply_data_bytes(data) {
                return Some(r.map(|_| ()));
            }
            return Some(
                crate::rawtxn::parse_slice(data).and_then(|j| self.base.apply_data(&j).map(|_| ())),
            );
        }
        if let Some(t) = crate::rawtxn::parse_raw_data(data) {
            return Some(self.apply_src(&t));
        }
        let j = match crate::rawtxn::parse_slice(data) {
            Ok(j) => j,
            Err(e) => return Some(Err(e)),
        };
        match crate::scan::split_data(&j) {
            Some((Json::Null, Json::Object(o))) => Some(self.apply_src(&TxnSrc::from_json(o))),
            Some((Json::Null, Json::Null)) => Some(Err("data is [null, null]".into())),
            Some((Json::Null, _)) => Some(Err("txn record is not a JSON object".into())),
            Some(_) => None,
            None => Some(Err(
                "invalid commit format (data is not a 2-element array)".into()
            )),
        }
    }

    /// Applies a standalone file's txn record body.
    pub fn apply_txn_bytes(&mut self, body: &[u8]) -> Result<(), String> {
        if let Some((t, _)) = crate::rawtxn::parse_raw_txn(body, 0) {
            return self.apply_src(&t);
        }
        let j = crate::rawtxn::parse_slice(body)?;
        let o = j.as_object().ok_or("txn record is not a JSON object")?;
        self.apply_src(&TxnSrc::from_json(o))
    }

    fn apply_src(&mut self, t: &TxnSrc<'_>) -> Result<(), String> {
        let Some(only) = self.only.as_ref() else {
            return self.base.apply_src(t).map(|_| ());
        };
        let (ops, _) = parse_ops_in(
            &self.base.schema,
            &|ti, u| self.row(ti, u),
            t,
            Some(only),
            false,
        )?;
        for (ti, u, op) in ops {
            let ts = &self.base.schema.tables[ti];
            let mut row = match op {
                Op::Modify(_) => self.row(ti, &u).map(<[Datum]>::to_vec),
                _ => None,
            };
            apply_row_op(ts, u, &mut row, op);
            self.changed.insert((ti, u), row);
        }
        Ok(())
    }

    /// [`Db::transform_txn`] against these rows (the state before `txn`).
    pub fn transform_txn(&self, txn: &Json, mode: StorageMode) -> Result<Json, String> {
        transform_txn_in(&self.base.schema, &|ti, u| self.row(ti, u), txn, mode)
    }
}

/// Applies one operation to a row's values (None: absent).
pub(crate) fn apply_row_op(ts: &TableSchema, u: Uuid, row: &mut Option<Vec<Datum>>, op: Op) {
    match op {
        Op::Delete => *row = None,
        Op::Insert(vals) => {
            let mut new = ovsdb::db::Row::new_default(ts, u).columns;
            for (ci, d) in vals {
                new[ci] = d;
            }
            *row = Some(new);
        }
        Op::Modify(ch) => {
            let row = row.get_or_insert_with(Vec::new);
            for (ci, d) in ch {
                if let Some(slot) = row.get_mut(ci) {
                    *slot = d;
                }
            }
        }
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
        db.table(db.schema.table_index(t).unwrap()).unwrap().len()
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
        let root = d.table(d.schema.table_index("Root").unwrap()).unwrap();
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
        let full = d.transform_txn(&diff, StorageMode::Full).unwrap();
        assert_eq!(
            full.to_string(),
            format!(
                r#"{{"Root":{{"{R}":{{"kids":["set",[["uuid","{K1}"],["uuid","{K2}"]]]}}}},"_date":5}}"#
            )
        );
        // Back to diff mode: `_is_diff` is re-inserted before `_date` (the
        // C writer's insertion order).
        let back = d.transform_txn(&full, StorageMode::Diff).unwrap();
        assert_eq!(
            back.to_string(),
            format!(r#"{{"Root":{{"{R}":{{"kids":["uuid","{K2}"]}}}},"_is_diff":true,"_date":5}}"#)
        );
    }
    #[test]
    fn rows_at_follows_the_chosen_rows_and_finds_them_in_bytes() {
        let mut d = db();
        d.apply_txn(&txn(&format!(
            r#"{{"Root":{{"{R}":{{"kids":["uuid","{K1}"]}}}},"Kid":{{"{K1}":{{"name":"a"}}}}}}"#
        )))
        .unwrap();
        // The next record modifies K1 and inserts K2: follow those two.
        let next = txn(&format!(
            r#"{{"Kid":{{"{K1}":{{"name":"b"}},"{K2}":{{"name":"c"}}}}}}"#
        ));
        let mut rows = RowsAt::for_txn(d.clone(), &next);
        assert_eq!(rows.followed(), Some(2));
        // A record that names K1 (and R, not followed) changes K1 only.
        let t = format!(
            r#"{{"Root":{{"{R}":{{"tags":["map",[["x","y"]]]}}}},"Kid":{{"{K1}":{{"name":"z"}}}}}}"#
        );
        assert!(rows.mentions(t.as_bytes()));
        rows.apply_txn_bytes(t.as_bytes()).unwrap();
        let full = rows.transform_txn(&next, StorageMode::Full).unwrap();
        assert_eq!(full, next, "full values stay as written");
        let ti = d.schema.table_index("Kid").unwrap();
        let k1 = Uuid::parse(K1).unwrap();
        assert_eq!(
            rows.row(ti, &k1).unwrap()[ti_col(&d, "Kid", "name")].to_json(),
            Json::String("z".into())
        );
        // Not followed: R keeps the base's value.
        let root = d.schema.table_index("Root").unwrap();
        let r = Uuid::parse(R).unwrap();
        assert_eq!(rows.row(root, &r), d.row(root, &r));
        // Bytes that name no followed row, in any spelling, are passed by;
        // another spelling of a followed one, or an escape, is not.
        assert!(!rows.mentions(format!(r#"{{"Pet":{{"{P}":{{"n":1}}}}}}"#).as_bytes()));
        assert!(!rows.mentions(K2.as_bytes()), "not as a JSON string");
        assert!(rows.mentions(format!(r#"["uuid","{}"]"#, K2.to_uppercase()).as_bytes()));
        assert!(rows.mentions(br#"{"Kid":{"\u0030000":null}}"#));
        // A delete of a followed row; deleting it again is the error a
        // full replay gives.
        let del = format!(r#"{{"Kid":{{"{K1}":null}}}}"#);
        rows.apply_txn_bytes(del.as_bytes()).unwrap();
        assert!(rows.row(ti, &k1).is_none());
        let again = rows.apply_txn_bytes(del.as_bytes()).unwrap_err();
        assert!(again.contains("does not exist"), "{again}");
    }

    fn ti_col(d: &Db, table: &str, col: &str) -> usize {
        let ts = &d.schema.tables[d.schema.table_index(table).unwrap()];
        user_column(ts, col).unwrap()
    }
}
