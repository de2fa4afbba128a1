//! The database some records later, reached by their net change: what a
//! jump to an index needs when it does not need the records' sizes (the
//! contents explorer's time travel).
//!
//! A replay applies every record as one transaction: every row a record
//! writes is built, counted against its references and, when a later
//! record deletes it, taken apart again. Between two checkpoints of a
//! Southbound file most rows are logical flows that ovn-northd adds and
//! removes again, so most of that work is for rows the index no longer
//! has. [`NetChange`] reads each record only as far as its rows (table,
//! UUID, deleted or the bytes of its columns) and holds, per row, the
//! column objects written since the last delete; a delete drops them.
//! [`NetChange::apply`] then builds the rows that are left and puts them
//! in place, reference counts kept, without a transaction's checks
//! ([`ovsdb::Database::place_rows`]).
//!
//! That is exact where a replay already applied the same records without
//! error and no commit among them deleted or changed a row on its own
//! (garbage collection, weak references): every record then names every
//! row its transaction changed, as ovsdb-server writes them, and the state
//! reached is one a replay checked. [`crate::checkpoint::Checkpoints::jump_database`]
//! uses it only there. `tests/checkpoints.rs` holds it to a replay from
//! the start (the rows and the reference counts) on every sample, fixture
//! and damaged copy.

use crate::rawtxn::{ColSrc, RowSrc};
use crate::replay::{apply_row_op, row_op, Db};
use crate::skim::skip_value;
use ovsdb::{Datum, Uuid};
use std::borrow::Cow;
use std::collections::HashMap;

/// The net change of records read since a database (see the module
/// documentation).
#[derive(Debug, Default)]
pub struct NetChange {
    /// Row → its place in `held`.
    at: HashMap<(usize, Uuid), u32, BuildFold>,
    /// In the order rows were first written.
    held: Vec<Held>,
    /// The column objects of the operations held, back to back.
    bytes: Vec<u8>,
    /// The operations held; each row's form a list in record order.
    ops: Vec<HeldOp>,
    /// Bytes of `bytes` no operation holds any more (rows deleted since).
    dead: usize,
    /// Records taken.
    records: u64,
}

const NONE: u32 = u32::MAX;

#[derive(Debug)]
struct Held {
    ti: usize,
    uuid: Uuid,
    /// A delete was read: the row as the database has it is gone.
    deleted: bool,
    /// Its operations since (the last delete): the first and last in
    /// `ops`, NONE when there are none.
    first: u32,
    last: u32,
}

#[derive(Debug, Clone, Copy)]
struct HeldOp {
    start: usize,
    len: u32,
    /// The record's `_is_diff`.
    diff: bool,
    next: u32,
}

/// One row of a record: its table, UUID and column object (None: deleted).
type RowRef<'a> = (usize, Uuid, Option<&'a [u8]>);

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// A hasher for keys that hold a UUID, random already: it folds the
/// words written with one multiplication each.
#[derive(Debug, Default, Clone, Copy)]
struct BuildFold;

struct Fold(u64);

impl std::hash::BuildHasher for BuildFold {
    type Hasher = Fold;
    fn build_hasher(&self) -> Fold {
        Fold(0)
    }
}

impl std::hash::Hasher for Fold {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(23) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

impl NetChange {
    pub fn new() -> NetChange {
        NetChange::default()
    }

    /// Records taken since the database.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Takes a Raft `data` value `[null, txn]` (`wrapped`) or a standalone
    /// txn record's body. False, taking nothing, when it is not a plain
    /// transaction this reader follows (a schema, escapes, an unknown
    /// table, a row written twice, a delete of a row that is not there):
    /// the caller then applies the change so far and that record as a
    /// replay does, which gives the same database or the same error.
    pub fn take(&mut self, db: &Db, b: &[u8], wrapped: bool) -> bool {
        let Some((rows, diff)) = rows_of(db, b, wrapped) else {
            return false;
        };
        // Check every row before taking any: a transaction names a row
        // once, and deletes only rows that are there.
        for (k, &(ti, u, op)) in rows.iter().enumerate() {
            if rows[..k].iter().any(|r| r.0 == ti && r.1 == u) {
                return false;
            }
            if op.is_none() && !self.exists(db, ti, u) {
                return false;
            }
        }
        for (ti, u, op) in rows {
            let i = *self.at.entry((ti, u)).or_insert_with(|| {
                self.held.push(Held {
                    ti,
                    uuid: u,
                    deleted: false,
                    first: NONE,
                    last: NONE,
                });
                (self.held.len() - 1) as u32
            }) as usize;
            match op {
                None => {
                    let h = &mut self.held[i];
                    h.deleted = true;
                    let mut k = std::mem::replace(&mut h.first, NONE);
                    h.last = NONE;
                    while k != NONE {
                        let o = self.ops[k as usize];
                        self.dead += o.len as usize;
                        k = o.next;
                    }
                }
                Some(cols) => {
                    let k = self.ops.len() as u32;
                    self.ops.push(HeldOp {
                        start: self.bytes.len(),
                        len: cols.len() as u32,
                        diff,
                        next: NONE,
                    });
                    self.bytes.extend_from_slice(cols);
                    let h = &mut self.held[i];
                    match h.last {
                        NONE => h.first = k,
                        last => self.ops[last as usize].next = k,
                    }
                    h.last = k;
                }
            }
        }
        self.records += 1;
        if self.dead > (1 << 20) && self.dead > self.bytes.len() / 2 {
            self.compact();
        }
        true
    }

    /// Drops the bytes and operations of deleted rows.
    fn compact(&mut self) {
        let mut bytes = Vec::with_capacity(self.bytes.len() - self.dead);
        let mut ops = Vec::new();
        for h in &mut self.held {
            let mut k = h.first;
            let mut prev = NONE;
            while k != NONE {
                let o = self.ops[k as usize];
                let n = ops.len() as u32;
                ops.push(HeldOp {
                    start: bytes.len(),
                    next: NONE,
                    ..o
                });
                bytes.extend_from_slice(&self.bytes[o.start..o.start + o.len as usize]);
                match prev {
                    NONE => h.first = n,
                    p => ops[p as usize].next = n,
                }
                prev = n;
                k = o.next;
            }
            h.last = prev;
        }
        self.bytes = bytes;
        self.ops = ops;
        self.dead = 0;
    }

    /// Whether the row is there after the records taken.
    fn exists(&self, db: &Db, ti: usize, u: Uuid) -> bool {
        match self.at.get(&(ti, u)).map(|&i| &self.held[i as usize]) {
            Some(h) => h.first != NONE || (!h.deleted && db.row(ti, &u).is_some()),
            None => db.row(ti, &u).is_some(),
        }
    }

    /// Applies the change to `db` (the database it was taken against) and
    /// empties it. On error (a value that does not read) `db` is
    /// unchanged.
    pub fn apply(&mut self, db: &mut Db) -> Result<(), String> {
        let NetChange {
            held, bytes, ops, ..
        } = std::mem::take(self);
        let mut rows = Vec::with_capacity(held.len());
        for h in held {
            if h.deleted && h.first == NONE && db.row(h.ti, &h.uuid).is_none() {
                // Added and deleted again.
                continue;
            }
            let ts = &db.schema.tables[h.ti];
            let mut row: Option<Vec<Datum>> = if h.deleted {
                None
            } else {
                db.row(h.ti, &h.uuid).map(<[Datum]>::to_vec)
            };
            let mut k = h.first;
            while k != NONE {
                let o = ops[k as usize];
                let cols = &bytes[o.start..o.start + o.len as usize];
                let op = one_row_op(db, h.ti, row.as_deref(), cols, o.diff)?;
                apply_row_op(ts, h.uuid, &mut row, op);
                k = o.next;
            }
            rows.push((h.ti, h.uuid, row));
        }
        db.place_rows(rows);
        Ok(())
    }
}

/// The operation one held column object makes on a row whose values are
/// `before`, read as a replay reads it.
fn one_row_op(
    db: &Db,
    ti: usize,
    before: Option<&[Datum]>,
    cols: &[u8],
    diff: bool,
) -> Result<crate::replay::Op, String> {
    let ts = &db.schema.tables[ti];
    let json;
    let row = match crate::rawtxn::parse_cols(cols, 0) {
        Some((c, _)) => RowSrc::Cols(c),
        None => {
            json = crate::rawtxn::parse_slice(cols)?;
            match json.as_object() {
                Some(o) => RowSrc::Cols(
                    o.iter()
                        .map(|(c, v)| (Cow::Borrowed(c), ColSrc::Json(v)))
                        .collect(),
                ),
                None => RowSrc::Bad,
            }
        }
    };
    // Held rows are objects, never deletes: the UUID's text (for the
    // errors of those) is not needed.
    row_op(ts, "", before, &row, diff, None)
}

/// The rows a transaction writes and its diff flag, or None when it is
/// not a plain one (see [`NetChange::take`]).
fn rows_of<'a>(db: &Db, b: &'a [u8], wrapped: bool) -> Option<(Vec<RowRef<'a>>, bool)> {
    let mut i = ws(b, 0);
    if wrapped {
        if b.get(i) != Some(&b'[') {
            return None;
        }
        i = ws(b, i + 1);
        if b.get(i..i + 4) != Some(b"null") {
            return None;
        }
        i = ws(b, i + 4);
        if b.get(i) != Some(&b',') {
            return None;
        }
        i = ws(b, i + 1);
    }
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut rows = Vec::new();
    let mut diff = false;
    let mut names: Vec<&str> = Vec::new();
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            let (name, k) = crate::rawtxn::name_at(b, ws(b, i))?;
            if names.contains(&name) {
                return None;
            }
            names.push(name);
            i = ws(b, k);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = ws(b, i + 1);
            if name.starts_with('_') {
                let end = skip_value(b, i).ok()?;
                match (name, &b[i..end]) {
                    ("_is_diff", b"true") => diff = true,
                    ("_is_diff", b"false") => {}
                    ("_comment", _) => {}
                    ("_date", v) if !v.is_empty() && v.iter().all(u8::is_ascii_digit) => {}
                    _ => return None,
                }
                i = end;
            } else {
                let ti = db.schema.table_index(name)?;
                i = table_rows(b, i, ti, &mut rows)?;
            }
            i = ws(b, i);
            match b.get(i) {
                Some(b',') => i += 1,
                Some(b'}') => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    if wrapped {
        i = ws(b, i);
        if b.get(i) != Some(&b']') {
            return None;
        }
        i += 1;
    }
    (ws(b, i) == b.len()).then_some((rows, diff))
}

/// The rows of one table member (the object at `b[i]`); its end.
fn table_rows<'a>(b: &'a [u8], i: usize, ti: usize, rows: &mut Vec<RowRef<'a>>) -> Option<usize> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        let (text, k) = crate::rawtxn::name_at(b, ws(b, i))?;
        let u = Uuid::parse(text).filter(|_| text.len() == 36)?;
        i = ws(b, k);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        match b.get(i) {
            Some(b'n') if b.get(i..i + 4) == Some(b"null") => {
                rows.push((ti, u, None));
                i += 4;
            }
            Some(b'{') => {
                let end = skip_value(b, i).ok()?;
                rows.push((ti, u, Some(&b[i..end])));
                i = end;
            }
            _ => return None,
        }
        i = ws(b, i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}
