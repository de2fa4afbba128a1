//! Where each row operation of the load's records is: what a jump by net
//! change needs so that it reads only the column objects of the rows
//! alive at its index, not every record since its checkpoint.
//!
//! A jump by net change ([`crate::net`]) walks the records after its
//! checkpoint to learn which rows they add, change and delete, and keeps
//! the column objects of the rows left. Between two checkpoints of a
//! Southbound file most of those records write logical flows that a later
//! record deletes again, and the walk reads them all (in the browser,
//! reading and scanning 67 MB took about 0.65 s). The load's replay reads
//! every record anyway; while it does, [`OpIndex`] notes for each record
//! its rows (table, UUID) and where each column object is: 32 bytes
//! an operation, counted in the checkpoints' budget. A jump then folds
//! those notes ([`crate::net::NetChange::take_span`]) and reads back
//! only the records that hold a column object of a row still there
//! ([`crate::net::NetChange::reads`]).
//!
//! A record the net change does not follow (a schema, a row written
//! twice, anything [`crate::net::NetChange::take`] refuses) is noted as
//! such, and a jump across it walks as before.
//!
//! Each operation also names the previous one on the same row
//! ([`IndexedOp::prev`]; a delete ends a row's chain, so the operation
//! after it starts a new one), so that a jump's fold
//! ([`crate::net::NetChange::take_span`]) finds each row's last
//! operation and the ones before it without a map of rows.

use crate::framing::RawRecord;
use crate::replay::Db;
use ovsdb::uuid::RowKeyMap;
use ovsdb::Uuid;

/// No column object: the operation deletes the row.
pub(crate) const DELETE: u32 = u32::MAX;

/// [`IndexedOp::prev`] of an operation that inserts its row: the row
/// was not there before it.
pub(crate) const INSERTS: u32 = u32::MAX;
/// [`IndexedOp::prev`] of an operation on a row that was there but whose
/// last write the index did not note (a snapshot, a record it does not
/// follow).
pub(crate) const UNNOTED: u32 = u32::MAX - 1;

/// One row operation of a record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexedOp {
    /// The row's UUID, as four words (32 bytes an operation, not 56).
    uuid: [u32; 4],
    /// Where its column object starts, from the record's txn bytes
    /// ([`IndexedRec::data`]); [`DELETE`] for a delete.
    pub at: u32,
    /// Its column object's length: a jump reads back exactly that, and
    /// need not look for its end.
    pub len: u32,
    /// The previous operation on the same row (its place in
    /// [`OpIndex`]'s operations), or [`INSERTS`] (it inserts the row), or
    /// [`UNNOTED`].
    pub prev: u32,
    pub table: u16,
}

impl IndexedOp {
    pub fn uuid(&self) -> Uuid {
        Uuid(
            self.uuid
                .iter()
                .rev()
                .fold(0, |u, &w| (u << 32) | u128::from(w)),
        )
    }
}

/// One record the load's replay applied.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexedRec {
    /// Its record number.
    pub record: usize,
    /// Byte offset of its txn bytes in the file.
    pub data: u64,
    /// Byte offset just past the record.
    pub end: u64,
    /// The replay's last index applied after it (a standalone file: txn
    /// records applied).
    pub applied: u64,
    /// Its first operation in [`OpIndex::ops`].
    first: u32,
    /// The record's `_is_diff`.
    pub diff: bool,
    /// The net change follows it (else a jump across it walks).
    pub plain: bool,
}

/// The row operations of the records a load's replay applied, in file
/// order (see the module documentation).
#[derive(Debug, Default, Clone)]
pub struct OpIndex {
    recs: Vec<IndexedRec>,
    ops: Vec<IndexedOp>,
    /// While the load notes records: each row of the database and its last
    /// operation noted (or [`UNNOTED`]), for the next one's
    /// [`IndexedOp::prev`]. Filled again from the database after a record
    /// the index does not follow; dropped by [`OpIndex::seal`].
    last_op: RowKeyMap<(usize, Uuid), u32>,
    /// Rows put in `last_op` from the database so far: past a bound (a file
    /// of many records the index does not follow), it stops noting.
    refilled: u64,
}

/// [`OpIndex::refilled`]'s bound: this many rows, plus four per
/// operation noted.
const REFILL_ROWS: u64 = 1 << 22;

impl OpIndex {
    /// Notes a record the replay has just applied without error: `data`,
    /// its txn bytes (inside `raw.body`), a Raft `data` value when
    /// `wrapped`; `applied`, the replay's last index applied after it.
    pub(crate) fn add(
        &mut self,
        db: &Db,
        raw: &RawRecord<'_>,
        data: &[u8],
        wrapped: bool,
        applied: u64,
    ) {
        if self.recs.last().is_some_and(|r| r.record >= raw.index) {
            // A second walk applies the records the first kept again.
            return;
        }
        let first = self.ops.len() as u32;
        let base = data.as_ptr() as usize;
        let within = (base as u64)
            .checked_sub(raw.body.as_ptr() as u64)
            .filter(|d| d + data.len() as u64 <= raw.body.len() as u64);
        let mut rec = IndexedRec {
            record: raw.index,
            data: raw.body_offset() + within.unwrap_or(0),
            end: raw.end(),
            applied,
            first,
            diff: false,
            plain: false,
        };
        let rows = within
            .filter(|_| self.noting())
            .and_then(|_| crate::net::plain_rows(db, data, wrapped));
        let fits = data.len() < DELETE as usize
            && db.schema.tables.len() <= usize::from(u16::MAX)
            && rows.as_ref().is_some_and(|r| {
                first
                    .checked_add(r.0.len() as u32)
                    .is_some_and(|n| n < UNNOTED)
            });
        match rows {
            Some((rows, diff)) if fits => {
                rec.plain = true;
                rec.diff = diff;
                for (ti, u, cols) in rows {
                    let k = self.ops.len() as u32;
                    let key = (ti, u);
                    let prev = match cols {
                        None => self.last_op.remove(&key),
                        Some(_) => self.last_op.insert(key, k),
                    };
                    self.ops.push(IndexedOp {
                        uuid: [0, 32, 64, 96].map(|s| (u.0 >> s) as u32),
                        at: cols.map_or(DELETE, |c| (c.as_ptr() as usize - base) as u32),
                        len: cols.map_or(0, |c| c.len() as u32),
                        prev: prev.unwrap_or(INSERTS),
                        table: ti as u16,
                    });
                }
            }
            // Its rows are not known: every row of the database after it
            // is there, its last write not noted.
            _ => self.refill(Some(db)),
        }
        self.recs.push(rec);
    }

    /// The load's replay has read record number `record`, which may
    /// change rows (a snapshot, an entry with data, a txn), and `db` is
    /// its database after it (None: it stopped applying). Unless the
    /// record was noted ([`OpIndex::add`]), the rows it may have added or
    /// deleted are not in `last_op`: it is filled again from `db`.
    pub(crate) fn saw_record(&mut self, record: usize, db: Option<&Db>) {
        // (A walk that resumes behind the last record noted reads records
        // noted before: nothing changed.)
        if self.recs.last().is_none_or(|r| r.record < record) {
            self.refill(db);
        }
    }

    /// Whether records are still noted: the rows refilled so far are
    /// within [`REFILL_ROWS`].
    fn noting(&self) -> bool {
        self.refilled <= REFILL_ROWS + 4 * self.ops.len() as u64
    }

    /// `last_op` from the database: its rows, none of their writes noted.
    /// Past [`REFILL_ROWS`] (or without a database) nothing more is noted.
    fn refill(&mut self, db: Option<&Db>) {
        self.last_op.clear();
        let Some(db) = db.filter(|_| self.noting()) else {
            self.refilled = u64::MAX;
            return;
        };
        let core = db.core();
        for ti in 0..db.schema.tables.len().min(usize::from(u16::MAX)) {
            let Some(t) = core.table_at(ti) else { continue };
            self.refilled = self.refilled.saturating_add(t.len() as u64);
            self.last_op.reserve(t.len());
            for u in t.rows.keys() {
                self.last_op.insert((ti, *u), UNNOTED);
            }
        }
    }

    /// Forgets everything (a replay's second walk notes the records
    /// again).
    pub(crate) fn clear(&mut self) {
        self.recs.clear();
        self.ops.clear();
        self.last_op.clear();
        self.refilled = 0;
    }

    /// Bytes of its notes (while the load grows them, their vectors may
    /// hold up to twice that, and the map of each row's last operation
    /// about 40 bytes a row alive; [`OpIndex::seal`] gives those back).
    pub fn bytes(&self) -> u64 {
        (self.recs.len() * std::mem::size_of::<IndexedRec>()
            + self.ops.len() * std::mem::size_of::<IndexedOp>()
            + self.last_op.capacity() * 40) as u64
    }

    /// The load is over: no more notes.
    pub(crate) fn seal(&mut self) {
        self.recs.shrink_to_fit();
        self.ops.shrink_to_fit();
        self.last_op = RowKeyMap::default();
    }

    /// Operations noted.
    pub fn ops_len(&self) -> usize {
        self.ops.len()
    }

    /// The records (as positions for [`OpIndex::rec`]) from record
    /// number `from` on whose replay applied at most `index`: None when
    /// one of them is not plain (a jump across it walks).
    pub(crate) fn span(&self, from: usize, index: u64) -> Option<std::ops::Range<usize>> {
        let a = self.recs.partition_point(|r| r.record < from);
        let b = a + self.recs[a..].partition_point(|r| r.applied <= index);
        self.recs[a..b].iter().all(|r| r.plain).then_some(a..b)
    }

    /// The record at position `k`.
    pub(crate) fn rec(&self, k: usize) -> &IndexedRec {
        &self.recs[k]
    }

    /// Where the operations of the record at position `k` are in
    /// [`OpIndex::op`]'s numbering.
    pub(crate) fn op_range(&self, k: usize) -> std::ops::Range<usize> {
        let end = self
            .recs
            .get(k + 1)
            .map_or(self.ops.len(), |r| r.first as usize);
        self.recs[k].first as usize..end
    }

    /// Operation number `i`.
    pub(crate) fn op(&self, i: usize) -> &IndexedOp {
        &self.ops[i]
    }
}
