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
//! its rows (table, UUID) and where each column object is: 28 bytes
//! an operation, counted in the checkpoints' budget. A jump then folds
//! those notes ([`crate::net::NetChange::take_indexed`]) and reads back
//! only the records that hold a column object of a row still there
//! ([`crate::net::NetChange::reads`]).
//!
//! A record the net change does not follow (a schema, a row written
//! twice, anything [`crate::net::NetChange::take`] refuses) is noted as
//! such, and a jump across it walks as before.

use crate::framing::RawRecord;
use crate::replay::Db;
use ovsdb::Uuid;

/// No column object: the operation deletes the row.
pub(crate) const DELETE: u32 = u32::MAX;

/// One row operation of a record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexedOp {
    /// The row's UUID, as four words (28 bytes an operation, not 48).
    uuid: [u32; 4],
    /// Where its column object starts, from the record's txn bytes
    /// ([`IndexedRec::data`]); [`DELETE`] for a delete.
    pub at: u32,
    /// Its column object's length: a jump reads back exactly that, and
    /// need not look for its end.
    pub len: u32,
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
}

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
        let rows = within.and_then(|_| crate::net::plain_rows(db, data, wrapped));
        if let Some((rows, diff)) = rows {
            let fits =
                data.len() < DELETE as usize && db.schema.tables.len() <= usize::from(u16::MAX);
            if fits && first.checked_add(rows.len() as u32).is_some() {
                rec.plain = true;
                rec.diff = diff;
                for (ti, u, cols) in rows {
                    self.ops.push(IndexedOp {
                        uuid: [0, 32, 64, 96].map(|s| (u.0 >> s) as u32),
                        at: cols.map_or(DELETE, |c| (c.as_ptr() as usize - base) as u32),
                        len: cols.map_or(0, |c| c.len() as u32),
                        table: ti as u16,
                    });
                }
            }
        }
        self.recs.push(rec);
    }

    /// Forgets everything (a replay's second walk notes the records
    /// again).
    pub(crate) fn clear(&mut self) {
        self.recs.clear();
        self.ops.clear();
    }

    /// Bytes of its notes (while the load grows them, their vectors may
    /// hold up to twice that; [`OpIndex::seal`] gives the rest back).
    pub fn bytes(&self) -> u64 {
        (self.recs.len() * std::mem::size_of::<IndexedRec>()
            + self.ops.len() * std::mem::size_of::<IndexedOp>()) as u64
    }

    /// The load is over: no more notes.
    pub(crate) fn seal(&mut self) {
        self.recs.shrink_to_fit();
        self.ops.shrink_to_fit();
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

    /// The operations of the record at position `k`.
    pub(crate) fn ops_of(&self, k: usize) -> &[IndexedOp] {
        let end = self
            .recs
            .get(k + 1)
            .map_or(self.ops.len(), |r| r.first as usize);
        &self.ops[self.recs[k].first as usize..end]
    }
}
