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

use crate::opindex::{OpIndex, DELETE, INSERTS, UNNOTED};
use crate::rawtxn::{ws, RowSrc};
use crate::replay::{apply_row_op, row_op, Db};
use crate::skim::skip_value;
use ovsdb::db::{PlacedRow, Row};
use ovsdb::schema::TableSchema;
use ovsdb::uuid::RowKeyMap;
use ovsdb::{Datum, Uuid};

/// The net change of records read since a database (see the module
/// documentation).
#[derive(Debug, Default)]
pub struct NetChange {
    /// Row → its place in `held`.
    at: RowKeyMap<(usize, Uuid), u32>,
    /// In the order rows were first written.
    held: Vec<Held>,
    /// The column objects of the operations held, back to back in chunks
    /// of [`CHUNK`] bytes or more (never moved once written).
    bytes: Vec<Vec<u8>>,
    /// Bytes in `bytes`.
    stored: usize,
    /// The operations held; each row's form a list in record order.
    ops: Vec<HeldOp>,
    /// Bytes of `bytes` no operation holds any more (rows deleted since).
    dead: usize,
    /// Records taken.
    records: u64,
    /// The rows of the database the change is taken against, when the
    /// caller knows them ([`NetChange::against`]): a row it does not
    /// have needs no lookup when applying.
    present: Option<std::sync::Arc<Present>>,
    /// The pending operations held, by file offset, in file order (made
    /// by [`NetChange::take_span`]).
    wanted: Vec<(u64, u32)>,
    /// The landing built so far ([`NetChange::build`]).
    build: Option<Box<Build>>,
}

/// Rows of a landing built ahead of placing them ([`NetChange::build`]).
#[derive(Default)]
struct Build {
    /// Held rows built so far.
    next: usize,
    rows: Vec<PlacedRow>,
    /// Each table's row of defaults, cloned for the rows inserted.
    protos: Vec<Option<Vec<Datum>>>,
    /// Each table's columns in the order its last object named them.
    orders: Vec<Vec<usize>>,
}

impl std::fmt::Debug for Build {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Build({} of the held rows)", self.next)
    }
}

impl Build {
    fn new(tables: usize) -> Build {
        Build {
            protos: vec![None; tables],
            orders: vec![Vec::new(); tables],
            ..Build::default()
        }
    }
}

/// What a jump's database holds before its rows are built
/// ([`NetChange::preview`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// The rows of the table asked for, in UUID order.
    pub uuids: Vec<Uuid>,
    /// Every table's row count, in schema order.
    pub counts: Vec<usize>,
}

const NONE: u32 = u32::MAX;

/// [`NetChange::reads`]: ranges closer than this are read as one (in a
/// browser each `FileReaderSync` call costs about 1.5 ms: read exactly,
/// a long jump on a 1 GB file made 9 400 of them)...
pub const READ_GAP: u64 = 4 << 10;
/// ...up to this many bytes.
pub const READ_MAX: u64 = 8 << 20;

/// The size of the chunks of held bytes.
const CHUNK: usize = 1 << 20;

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
    /// Where its column object is: `chunk << 32 | start` in `bytes`, or,
    /// while `pending`, its byte offset in the file.
    src: u64,
    /// The column object's length.
    len: u32,
    /// The record's `_is_diff`.
    diff: bool,
    /// Taken from an [`OpIndex`]: its bytes are still to be read
    /// ([`NetChange::reads`], [`NetChange::fill`]).
    pending: bool,
    next: u32,
}

/// One row of a record: its table, UUID and column object (None: deleted).
type RowRef<'a> = (usize, Uuid, Option<&'a [u8]>);

impl NetChange {
    pub fn new() -> NetChange {
        NetChange::default()
    }

    /// A change taken against a database whose rows `present` lists
    /// (built from it by [`Present::of`]).
    pub fn against(present: Option<std::sync::Arc<Present>>) -> NetChange {
        NetChange {
            present,
            ..NetChange::default()
        }
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
        let Some((rows, diff)) = plain_rows(db, b, wrapped) else {
            return false;
        };
        // Check every row before taking any: a transaction deletes only
        // rows that are there.
        if rows
            .iter()
            .any(|&(ti, u, op)| op.is_none() && !self.exists(db, ti, u))
        {
            return false;
        }
        for (ti, u, op) in rows {
            let i = self.held_row(ti, u);
            match op {
                None => self.delete(i),
                Some(cols) => {
                    let src = self.store(cols);
                    self.push_op(i, src, cols.len() as u32, diff, false);
                }
            }
        }
        self.end_record();
        true
    }

    /// Takes the records at positions `span` of an [`OpIndex`] (records
    /// the load's replay applied without error, each row named once in
    /// each), from their notes: their column objects are not read yet
    /// ([`NetChange::reads`]). Only a change with nothing taken yet.
    ///
    /// No map of every row the span writes: a row's last operation in the
    /// span is one that no later operation there names as its
    /// [`IndexedOp::prev`], and the operations before it are found by
    /// following `prev` back to the span's start or to the insert that
    /// began it. A delete ends such a chain, so a row deleted and inserted
    /// again in the span has two: its chain from the checkpoint, ending
    /// in the delete, then goes (only these rows need a lookup, in a map
    /// of the rows inserted that the checkpoint's filter may have).
    pub(crate) fn take_span(&mut self, index: &OpIndex, span: std::ops::Range<usize>) {
        debug_assert!(self.held.is_empty() && self.records == 0);
        if span.is_empty() {
            return;
        }
        let a = index.op_range(span.start).start;
        let b = index.op_range(span.end - 1).end;
        let within = |p: u32| p < UNNOTED && p as usize >= a;
        // Each operation's record, and whether a later one names it.
        let mut rec_of = Vec::with_capacity(b - a);
        let mut named = vec![false; b - a];
        // The operation held for each, if any.
        let mut pushed = vec![NONE; b - a];
        for k in span.clone() {
            for i in index.op_range(k) {
                rec_of.push(k as u32);
                let p = index.op(i).prev;
                if within(p) {
                    named[p as usize - a] = true;
                }
            }
        }
        // Rows inserted in the span (and there at its end) that the
        // checkpoint may have had: deleted in the span first.
        let mut again: RowKeyMap<(usize, Uuid), u32> = RowKeyMap::default();
        let mut chain = Vec::new();
        for i in a..b {
            if named[i - a] {
                continue;
            }
            chain.clear();
            let mut c = i;
            loop {
                chain.push(c);
                match index.op(c).prev {
                    p if within(p) => c = p as usize,
                    _ => break,
                }
            }
            let op = index.op(i);
            let (ti, uuid) = (usize::from(op.table), op.uuid());
            let inserts = index.op(c).prev == INSERTS;
            if op.at == DELETE {
                // A row inserted and deleted again is not there before or
                // after (if the checkpoint had it, a chain that ends in an
                // earlier delete says so).
                if !inserts {
                    self.held.push(Held {
                        ti,
                        uuid,
                        deleted: true,
                        first: NONE,
                        last: NONE,
                    });
                }
                continue;
            }
            if inserts && self.present.as_ref().is_none_or(|p| p.may_have(ti, uuid)) {
                again.insert((ti, uuid), 0);
            }
            let h = self.held.len();
            self.held.push(Held {
                ti,
                uuid,
                // An insert starts from no row.
                deleted: inserts,
                first: NONE,
                last: NONE,
            });
            for &c in chain.iter().rev() {
                let rec = index.rec(rec_of[c - a] as usize);
                let o = index.op(c);
                pushed[c - a] = self.ops.len() as u32;
                self.push_op(h, rec.data + u64::from(o.at), o.len, rec.diff, true);
            }
        }
        if !again.is_empty() {
            self.held
                .retain(|h| h.first != NONE || !again.contains_key(&(h.ti, h.uuid)));
        }
        // What `reads` reads, in file order (the index's order) as it is.
        self.wanted = pushed
            .iter()
            .filter(|&&k| k != NONE)
            .map(|&k| (self.ops[k as usize].src, k))
            .collect();
        if !self.wanted.is_sorted() {
            self.wanted.sort_unstable();
        }
        self.records += span.len() as u64;
    }

    /// Takes the records at positions `span` of an [`OpIndex`] that
    /// follow those [`NetChange::take_span`] took (a step forward from a
    /// jump not landed yet): each operation goes on its row's held list,
    /// found through the map of held rows (made on the first step). What
    /// was built ([`NetChange::build`]) is built again.
    pub(crate) fn extend_span(&mut self, index: &OpIndex, span: std::ops::Range<usize>) {
        if span.is_empty() {
            return;
        }
        self.build = None;
        if self.at.is_empty() {
            for (k, h) in self.held.iter().enumerate() {
                self.at.insert((h.ti, h.uuid), k as u32);
            }
        }
        for k in span.clone() {
            let rec = index.rec(k);
            for i in index.op_range(k) {
                let op = index.op(i);
                let (ti, uuid) = (usize::from(op.table), op.uuid());
                // A row not held yet is added at the end.
                let held = self.held.len();
                let h = self.held_row(ti, uuid);
                let known = h < held;
                if op.at == DELETE {
                    self.delete(h);
                    continue;
                }
                // An insert of a row not held starts from no row (one the
                // checkpoint had and the span deleted is held as deleted).
                if !known && op.prev == INSERTS {
                    self.held[h].deleted = true;
                }
                let start = rec.data + u64::from(op.at);
                let n = self.ops.len() as u32;
                self.push_op(h, start, op.len, rec.diff, true);
                self.wanted.push((start, n));
            }
        }
        debug_assert!(self.wanted.is_sorted());
        self.records += span.len() as u64;
    }

    /// The row's place in `held`, added if new.
    fn held_row(&mut self, ti: usize, u: Uuid) -> usize {
        *self.at.entry((ti, u)).or_insert_with(|| {
            self.held.push(Held {
                ti,
                uuid: u,
                deleted: false,
                first: NONE,
                last: NONE,
            });
            (self.held.len() - 1) as u32
        }) as usize
    }

    /// A delete of held row `i`: what it held goes.
    fn delete(&mut self, i: usize) {
        let h = &mut self.held[i];
        h.deleted = true;
        let mut k = std::mem::replace(&mut h.first, NONE);
        h.last = NONE;
        while k != NONE {
            let o = self.ops[k as usize];
            if !o.pending {
                self.dead += o.len as usize;
            }
            k = o.next;
        }
    }

    /// An operation on held row `i`, after its others.
    fn push_op(&mut self, i: usize, src: u64, len: u32, diff: bool, pending: bool) {
        let k = self.ops.len() as u32;
        self.ops.push(HeldOp {
            src,
            len,
            diff,
            pending,
            next: NONE,
        });
        let h = &mut self.held[i];
        match h.last {
            NONE => h.first = k,
            last => self.ops[last as usize].next = k,
        }
        h.last = k;
    }

    fn end_record(&mut self) {
        self.records += 1;
        if self.dead > CHUNK && self.dead > self.stored / 2 {
            self.compact();
        }
    }

    /// The byte ranges of the file that hold the column objects of the
    /// pending operations still held (taken by
    /// [`NetChange::take_span`] and not yet given to [`NetChange::fill`]),
    /// in order: each such object exactly, those less than [`READ_GAP`]
    /// apart as one (up to [`READ_MAX`] bytes). Read each and give it to
    /// [`NetChange::fill`].
    pub fn reads(&self) -> Vec<(u64, u64)> {
        let pending = self
            .wanted
            .iter()
            .map(|&(at, k)| (at, self.ops[k as usize]))
            .filter(|(_, o)| o.pending);
        merge_reads(pending.map(|(at, o)| (at, at + u64::from(o.len))))
    }

    /// [`NetChange::reads`] for the rows `uuids` of table `ti` alone:
    /// what [`NetChange::rows_of`] needs read for them.
    pub fn reads_for(&self, ti: usize, uuids: &[Uuid]) -> Vec<(u64, u64)> {
        // As `wanted` lists them: (offset, operation).
        let mut mine: Vec<(u64, u32)> = Vec::new();
        for h in self.held_of(ti, uuids) {
            let mut k = h.first;
            while k != NONE {
                let o = self.ops[k as usize];
                if o.pending {
                    mine.push((o.src, k));
                }
                k = o.next;
            }
        }
        // (The instance `take_span` sorts `wanted` with.)
        mine.sort_unstable();
        merge_reads(
            mine.iter()
                .map(|&(at, k)| (at, at + u64::from(self.ops[k as usize].len))),
        )
    }

    /// The file's bytes from offset `start` on (one of
    /// [`NetChange::reads`]' ranges): the column objects of the pending
    /// operations in them are read.
    pub fn fill(&mut self, start: u64, bytes: &[u8]) {
        let end = start + bytes.len() as u64;
        let from = self.wanted.partition_point(|&(at, _)| at < start);
        let mut k = from;
        while let Some(&(at, op)) = self.wanted.get(k) {
            if at >= end {
                break;
            }
            k += 1;
            let o = self.ops[op as usize];
            let rel = (at - start) as usize;
            let Some(cols) = bytes.get(rel..rel + o.len as usize).filter(|_| o.pending) else {
                continue;
            };
            let src = self.store(cols);
            self.ops[op as usize] = HeldOp {
                src,
                pending: false,
                ..o
            };
        }
    }

    /// Copies `b` into the chunks: where it went (a [`HeldOp::src`]).
    fn store(&mut self, b: &[u8]) -> u64 {
        let fits = |c: &Vec<u8>| c.capacity() - c.len() >= b.len();
        if !self.bytes.last().is_some_and(fits) {
            self.bytes.push(Vec::with_capacity(CHUNK.max(b.len())));
        }
        let n = self.bytes.len() - 1;
        let c = &mut self.bytes[n];
        let start = c.len();
        c.extend_from_slice(b);
        self.stored += b.len();
        ((n as u64) << 32) | start as u64
    }

    /// The bytes of a held operation (read: not pending).
    fn bytes_of(&self, o: HeldOp) -> &[u8] {
        let start = (o.src & u64::from(u32::MAX)) as usize;
        &self.bytes[(o.src >> 32) as usize][start..start + o.len as usize]
    }

    /// Drops the bytes and operations of deleted rows.
    fn compact(&mut self) {
        let old = NetChange {
            at: RowKeyMap::default(),
            held: Vec::new(),
            bytes: std::mem::take(&mut self.bytes),
            stored: 0,
            ops: std::mem::take(&mut self.ops),
            dead: 0,
            records: 0,
            present: None,
            wanted: Vec::new(),
            build: None,
        };
        self.stored = 0;
        self.dead = 0;
        let mut held = std::mem::take(&mut self.held);
        for h in &mut held {
            let mut k = h.first;
            let mut prev = NONE;
            while k != NONE {
                let o = old.ops[k as usize];
                let n = self.ops.len() as u32;
                let src = match o.pending {
                    true => o.src,
                    false => self.store(old.bytes_of(o)),
                };
                self.ops.push(HeldOp {
                    src,
                    next: NONE,
                    ..o
                });
                match prev {
                    NONE => h.first = n,
                    p => self.ops[p as usize].next = n,
                }
                prev = n;
                k = o.next;
            }
            h.last = prev;
        }
        self.held = held;
    }

    /// Whether the row is there after the records taken. With the
    /// database's filter ([`Present`]), a row it may have counts as there
    /// without a lookup: in the records a replay vouched for (the only
    /// ones a jump takes this way), a delete names a row that is there, and
    /// a fingerprint that matches by chance makes the delete of a row that
    /// is not there, which [`NetChange::apply`] then passes over.
    fn exists(&self, db: &Db, ti: usize, u: Uuid) -> bool {
        let in_db = || match &self.present {
            Some(p) => p.may_have(ti, u),
            None => db.row(ti, &u).is_some(),
        };
        match self.at.get(&(ti, u)).map(|&i| &self.held[i as usize]) {
            Some(h) => h.first != NONE || (!h.deleted && in_db()),
            None => in_db(),
        }
    }

    /// Applies the change to `db` (the database it was taken against) and
    /// empties it. On error (a value that does not read) `db` is
    /// unchanged. The rows [`NetChange::build`] built already are placed
    /// as they are.
    pub fn apply(&mut self, db: &mut Db) -> Result<(), String> {
        let built = self.build(db, usize::MAX);
        let all = std::mem::take(self);
        built?;
        db.place_rows(all.build.map_or_else(Vec::new, |b| b.rows));
        Ok(())
    }

    /// Builds up to `budget` more of the rows the change leaves, without
    /// placing them (`db` is the database it was taken against, as
    /// [`NetChange::apply`] will get it): the landing a slice at a time.
    /// True once every row is built. Nothing may be taken after it.
    pub fn build(&mut self, db: &Db, budget: usize) -> Result<bool, String> {
        let mut b = self
            .build
            .take()
            .unwrap_or_else(|| Box::new(Build::new(db.schema.tables.len())));
        let end = b.next.saturating_add(budget).min(self.held.len());
        let mut vals = Vec::new();
        let mut res = Ok(());
        while b.next < end {
            match self.build_row(db, &self.held[b.next], &mut b, &mut vals) {
                Ok(Some(r)) => b.rows.push(r),
                Ok(None) => {}
                Err(e) => {
                    res = Err(e);
                    break;
                }
            }
            b.next += 1;
        }
        let done = b.next == self.held.len();
        self.build = Some(b);
        res.map(|()| done)
    }

    /// Held row `h` as it lands: its new values built from its operations
    /// (None: its delete, when the database had it; nothing to place when
    /// it was added and deleted again).
    fn build_row(
        &self,
        db: &Db,
        h: &Held,
        b: &mut Build,
        vals: &mut Vec<(usize, Datum)>,
    ) -> Result<Option<PlacedRow>, String> {
        // Most rows a jump holds were added since the checkpoint (and
        // many deleted again): the filter spares their lookups.
        let absent = self
            .present
            .as_ref()
            .is_some_and(|p| !p.may_have(h.ti, h.uuid));
        if h.deleted && h.first == NONE {
            // Deleted: the row goes as `place_rows` takes it out (none
            // when it was added and deleted again).
            return Ok((!absent).then_some(PlacedRow {
                table: h.ti,
                uuid: h.uuid,
                old: None,
                new: None,
            }));
        }
        let old = match absent {
            true => None,
            false => db.row_ref(h.ti, &h.uuid),
        };
        let ts = &db.schema.tables[h.ti];
        let mut row: Option<Vec<Datum>> = match (h.deleted, &old) {
            (false, Some(r)) => Some(r.columns.clone()),
            _ => None,
        };
        let mut k = h.first;
        while k != NONE {
            let o = self.ops[k as usize];
            if o.pending {
                return Err("a column object was not read back".into());
            }
            let cols = self.bytes_of(o);
            vals.clear();
            let order = &mut b.orders[h.ti];
            if quick_values(ts, order, row.is_some(), cols, o.diff, vals).is_some() {
                match &mut row {
                    Some(r) => {
                        for (ci, d) in vals.drain(..) {
                            r[ci] = d;
                        }
                    }
                    None => {
                        // An insert: the values given, defaults for the rest.
                        let proto = b.protos[h.ti]
                            .get_or_insert_with(|| Row::new_default(ts, h.uuid).columns);
                        let mut new = Vec::with_capacity(proto.len());
                        for (ci, d) in proto.iter().enumerate() {
                            new.push(match vals.iter_mut().find(|v| v.0 == ci) {
                                Some(v) => std::mem::take(&mut v.1),
                                None => d.clone(),
                            });
                        }
                        row = Some(new);
                    }
                }
            } else {
                let op = one_row_op(db, h.ti, row.as_deref(), cols, o.diff)?;
                apply_row_op(ts, h.uuid, &mut row, op);
            }
            k = o.next;
        }
        Ok(Some(PlacedRow {
            table: h.ti,
            uuid: h.uuid,
            old,
            new: row,
        }))
    }

    /// The held rows of table `ti` among `uuids`.
    fn held_of<'a>(&'a self, ti: usize, uuids: &'a [Uuid]) -> impl Iterator<Item = &'a Held> {
        self.held
            .iter()
            .filter(move |h| h.ti == ti && uuids.contains(&h.uuid))
    }

    /// What the database holds after the change, before any row is built
    /// or read back: the rows of table `ti` in UUID order, and every
    /// table's row count (`db`: the database the change was taken
    /// against). A jump shows these first and builds the rest later.
    pub fn preview(&self, db: &Db, ti: usize) -> Preview {
        let core = db.core();
        let tables = db.schema.tables.len();
        // The held rows of each table, by their place in `held`.
        let mut by_table: Vec<Vec<u32>> = vec![Vec::new(); tables];
        for (k, h) in self.held.iter().enumerate() {
            if let Some(v) = by_table.get_mut(h.ti) {
                v.push(k as u32);
            }
        }
        let mut uuids = Vec::new();
        let mut counts = Vec::with_capacity(tables);
        for (t, mine) in by_table.iter().enumerate() {
            let rows = core.table_at(t);
            if mine.is_empty() && t != ti {
                counts.push(rows.map_or(0, |r| r.len()));
                continue;
            }
            let held = self.sorted_by_uuid(mine);
            // The table's rows and the held ones, merged in UUID order:
            // each held row as the change leaves it.
            let mut out = Vec::new();
            let mut next = held.iter().map(|&k| &self.held[k as usize]).peekable();
            for &u in rows.into_iter().flat_map(|r| r.rows.keys()) {
                while let Some(h) = next.next_if(|h| h.uuid < u) {
                    if h.first != NONE {
                        out.push(h.uuid);
                    }
                }
                match next.next_if(|h| h.uuid == u) {
                    Some(h) if h.first == NONE => {}
                    _ => out.push(u),
                }
            }
            out.extend(next.filter(|h| h.first != NONE).map(|h| h.uuid));
            counts.push(out.len());
            if t == ti {
                uuids = out;
            }
        }
        Preview { uuids, counts }
    }

    /// Held rows `mine` (places in `held`) in UUID order. Sorted as
    /// (high 64 bits, place) pairs, the one sort instance `wanted` uses
    /// too (the web worker's wasm is held under 1 MB), then ties of those
    /// bits put in order by the whole UUID.
    fn sorted_by_uuid(&self, mine: &[u32]) -> Vec<u32> {
        let uuid = |k: u32| self.held[k as usize].uuid;
        let mut keys: Vec<(u64, u32)> = mine
            .iter()
            .map(|&k| ((uuid(k).0 >> 64) as u64, k))
            .collect();
        keys.sort_unstable();
        // By insertion, in place: `ovsdb::order::sort_small_by` on each run
        // of ties would be one more sort instance (472 bytes of the
        // worker's gzipped wasm).
        for i in 1..keys.len() {
            let mut j = i;
            while j > 0 && keys[j - 1].0 == keys[j].0 && uuid(keys[j - 1].1) > uuid(keys[j].1) {
                keys.swap(j - 1, j);
                j -= 1;
            }
        }
        keys.into_iter().map(|x| x.1).collect()
    }

    /// Rows `uuids` of table `ti` as they are after the change (None:
    /// not there), built alone, nothing placed: a preview's rows. The held
    /// ones need their column objects read ([`NetChange::reads_for`]).
    pub fn rows_of(
        &self,
        db: &Db,
        ti: usize,
        uuids: &[Uuid],
    ) -> Result<Vec<Option<ovsdb::db::RowRef>>, String> {
        let mut b = Build::new(db.schema.tables.len());
        let mut vals = Vec::new();
        let mut held: Vec<Option<ovsdb::db::RowRef>> = vec![None; uuids.len()];
        let mut seen = vec![false; uuids.len()];
        for h in self.held_of(ti, uuids) {
            let Some(p) = uuids.iter().position(|u| *u == h.uuid) else {
                continue;
            };
            seen[p] = true;
            held[p] = self
                .build_row(db, h, &mut b, &mut vals)?
                .and_then(|r| r.new)
                .map(|columns| {
                    std::sync::Arc::new(Row {
                        uuid: h.uuid,
                        columns,
                    })
                });
        }
        Ok(uuids
            .iter()
            .zip(held)
            .zip(seen)
            .map(|((u, r), seen)| match seen {
                true => r,
                false => db.row_ref(ti, u),
            })
            .collect())
    }
}

/// Ranges (start, end) in file order merged as [`NetChange::reads`]
/// merges them.
fn merge_reads(spans: impl Iterator<Item = (u64, u64)>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (at, end) in spans {
        match out.last_mut() {
            Some(last) if at <= last.1 + READ_GAP && end - last.0 <= READ_MAX => {
                last.1 = last.1.max(end);
            }
            _ => out.push((at, end)),
        }
    }
    out
}

/// The rows of a database as a filter: whether a row may be there
/// (false: it is not). Fingerprints of (table, UUID) in an open-addressed
/// table at most half full, 4 bytes a slot: a lookup reads one or two
/// slots where the database's row map walks a tree.
#[derive(Debug)]
pub struct Present {
    slots: Vec<u32>,
}

impl Present {
    /// The filter of `db`'s rows.
    pub fn of(db: &Db) -> Present {
        let core = db.core();
        let n: usize = (0..db.schema.tables.len())
            .filter_map(|ti| core.table_at(ti))
            .map(|t| t.len())
            .sum();
        let mut slots = vec![0u32; (2 * n).next_power_of_two().max(16)];
        let mask = slots.len() - 1;
        for ti in 0..db.schema.tables.len() {
            let Some(t) = core.table_at(ti) else { continue };
            for u in t.rows.keys() {
                let (mut i, f) = Present::slot(ti, *u, mask);
                while slots[i] != 0 && slots[i] != f {
                    i = (i + 1) & mask;
                }
                slots[i] = f;
            }
        }
        Present { slots }
    }

    /// The slot to start at and the fingerprint (never 0, the empty
    /// slot's).
    fn slot(ti: usize, u: Uuid, mask: usize) -> (usize, u32) {
        use std::hash::BuildHasher;
        let h =
            std::hash::BuildHasherDefault::<ovsdb::uuid::RowKeyHasher>::default().hash_one((ti, u));
        ((h as usize) & mask, ((h >> 32) as u32) | 1)
    }

    /// Whether the row may be in the database (false: it is not).
    pub fn may_have(&self, ti: usize, u: Uuid) -> bool {
        let mask = self.slots.len() - 1;
        let (mut i, f) = Present::slot(ti, u, mask);
        loop {
            match self.slots[i] {
                0 => return false,
                x if x == f => return true,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Bytes it holds.
    pub fn bytes(&self) -> u64 {
        (self.slots.len() * 4) as u64
    }
}

/// The values of a held column object (an insert's or a modify's), read
/// straight from its bytes when each is in a compact form
/// ([`crate::rawtxn::plain_datum`] and the like) and none is the diff of a
/// set or map of a row that is there (`exists`). The load's replay applied
/// these bytes without error, so sizes are not checked again. None: read
/// the object as a replay does ([`one_row_op`]).
fn quick_values(
    ts: &TableSchema,
    order: &mut Vec<usize>,
    exists: bool,
    b: &[u8],
    diff: bool,
    out: &mut Vec<(usize, Datum)>,
) -> Option<()> {
    if b.first() != Some(&b'{') {
        return None;
    }
    let mut i = ws(b, 1);
    if b.get(i) == Some(&b'}') {
        return Some(());
    }
    loop {
        let (name, k) = crate::rawtxn::name_at(b, ws(b, i))?;
        i = ws(b, k);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        // Objects of a table name their columns in the same order: the
        // last object's order is tried before a lookup.
        let n = out.len();
        let ci = match order.get(n) {
            Some(&c) if ts.columns[c].name == name => c,
            _ => {
                let c = ts
                    .column_index(name)
                    .filter(|&c| !ts.columns[c].is_implicit())?;
                order.truncate(n);
                order.push(c);
                c
            }
        };
        let ty = &ts.columns[ci].ty;
        if (diff && exists && ty.is_composite()) || out.iter().any(|&(c, _)| c == ci) {
            return None;
        }
        let (d, end) = quick_datum(b, i, ty)?;
        out.push((ci, d));
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return (ws(b, i + 1) == b.len()).then_some(()),
            _ => return None,
        }
    }
}

/// A column value at `b[i]` in a compact form, and its end.
fn quick_datum(b: &[u8], i: usize, ty: &ovsdb::Type) -> Option<(Datum, usize)> {
    if ty.key.atomic == ovsdb::AtomicType::Uuid && ty.value.is_none() {
        if let Some(x) = crate::rawtxn::fast_uuid_datum(b, i) {
            return Some(x);
        }
    }
    match b.get(i)? {
        // A map, read to its end in one pass.
        b'[' if ty.value.is_some() => crate::rawtxn::plain_datum_at(b, i, ty),
        b'[' => {
            let end = crate::skim::container_end(b, i)?;
            Some((crate::rawtxn::plain_datum(&b[i..end], ty)?, end))
        }
        _ if ty.value.is_none() => {
            let (a, end) = crate::rawtxn::plain_atom_at(b, i, ty.key.atomic)?;
            Some((Datum::Set(ovsdb::AtomSet::one(a)), end))
        }
        _ => None,
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
            RowSrc::from_json(&json)
        }
    };
    // Held rows are objects, never deletes: the UUID's text (for the
    // errors of those) is not needed.
    row_op(ts, "", before, &row, diff, None)
}

/// The rows a transaction writes, each named once, and its diff flag, or
/// None when it is not a plain one (see [`NetChange::take`]).
pub(crate) fn plain_rows<'a>(
    db: &Db,
    b: &'a [u8],
    wrapped: bool,
) -> Option<(Vec<RowRef<'a>>, bool)> {
    let (rows, diff) = rows_of(db, b, wrapped)?;
    let twice = if rows.len() <= 32 {
        (1..rows.len()).any(|k| {
            rows[..k]
                .iter()
                .any(|r| r.0 == rows[k].0 && r.1 == rows[k].1)
        })
    } else {
        let mut seen = std::collections::HashSet::with_capacity(rows.len());
        !rows.iter().all(|r| seen.insert((r.0, r.1)))
    };
    (!twice).then_some((rows, diff))
}

/// The rows a transaction writes and its diff flag, or None when it is
/// not a plain one.
fn rows_of<'a>(db: &Db, b: &'a [u8], wrapped: bool) -> Option<(Vec<RowRef<'a>>, bool)> {
    let mut i = match wrapped {
        true => ws(b, crate::rawtxn::after_null_schema(b, 0)?),
        false => ws(b, 0),
    };
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
                // What a replay passes over, read as it reads it.
                let end = skip_value(b, i).ok()?;
                let v = crate::rawtxn::parse_slice(&b[i..end]).ok()?;
                if !crate::rawtxn::is_special(name, &v) {
                    return None;
                }
                diff |= name == "_is_diff" && v == ovsdb::json::Json::Bool(true);
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

/// The UUID naming a row at `b[i]` (a quoted 36-character UUID) and the
/// end of the name.
fn row_name_at(b: &[u8], i: usize) -> Option<(Uuid, usize)> {
    match b.get(i..i + 38) {
        Some(s) if s[0] == b'"' && s[37] == b'"' => Some((Uuid::parse_bytes(&s[1..37])?, i + 38)),
        _ => None,
    }
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
        let (u, k) = row_name_at(b, ws(b, i))?;
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
                let end = crate::skim::container_end(b, i)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use ovsdb::json::parse;
    use ovsdb::DatabaseSchema;

    /// Held rows come out in UUID order, also those whose high 64 bits
    /// are the same (sorted by those bits first, then ties by the rest).
    #[test]
    fn held_rows_sort_by_the_whole_uuid() {
        let mut n = NetChange::new();
        let mut x: u64 = 0x2545_f491;
        let mut want = Vec::new();
        for k in 0..300u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Few distinct high halves: many ties.
            let u = Uuid((u128::from(x % 5) << 64) | u128::from(x.rotate_left(17) ^ k));
            want.push(u);
            n.held.push(Held {
                ti: 0,
                uuid: u,
                deleted: false,
                first: NONE,
                last: NONE,
            });
        }
        want.sort();
        let mine: Vec<u32> = (0..300).collect();
        let got: Vec<Uuid> = n
            .sorted_by_uuid(&mine)
            .into_iter()
            .map(|k| n.held[k as usize].uuid)
            .collect();
        assert_eq!(got, want);
    }

    /// The quick read of a column object gives the row a replay's read
    /// gives, for inserts and modifies, or leaves it to that read.
    #[test]
    fn quick_values_agree_with_the_replays_read() {
        let schema = r#"{"name":"D","tables":{
            "T":{"isRoot":true,"columns":{
                "s":{"type":"string"},
                "e":{"type":{"key":{"type":"string","enum":["set",["in","out"]]}}},
                "n":{"type":"integer"},
                "b":{"type":"boolean"},
                "r":{"type":"real"},
                "u":{"type":{"key":{"type":"uuid","refTable":"T"},"min":0,"max":1}},
                "us":{"type":{"key":{"type":"uuid","refTable":"T"},"min":0,"max":"unlimited"}},
                "ss":{"type":{"key":"string","min":0,"max":"unlimited"}},
                "m":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}}}}}}"#;
        let db = Db::new(DatabaseSchema::parse(schema.as_bytes()).unwrap());
        let ts = &db.schema.tables[0];
        let u1 = "00000000-0000-4000-8000-000000000001";
        let u2 = "00000000-0000-4000-8000-000000000002";
        let objects = [
            r#"{}"#.to_string(),
            r#"{"s":"inport == \"lsp-1\" && ip4","e":"out","n":-17,"b":true}"#.into(),
            format!(r#"{{"u":["uuid","{u1}"],"us":["set",[["uuid","{u1}"],["uuid","{u2}"]]]}}"#),
            r#"{"m":["map",[["source","northd.c:1"],["stage-name","ls_in"]]],"ss":"x"}"#.into(),
            r#"{"ss":["set",["a","b"]],"r":1.5,"s":"caf\u00e9"}"#.into(),
            r#"{"n":3,"n":4}"#.into(),
            r#"{"m":["map",[["k","v"]]],"s":"tab\there"}"#.into(),
        ];
        let mut order = Vec::new();
        let mut quick = 0;
        for diff in [false, true] {
            for before in [None, Some(Row::new_default(ts, Uuid(1)).columns)] {
                for o in &objects {
                    let b = o.as_bytes();
                    let mut vals = Vec::new();
                    let got = quick_values(ts, &mut order, before.is_some(), b, diff, &mut vals);
                    let Some(()) = got else { continue };
                    quick += 1;
                    let mut want = before.clone();
                    let op = one_row_op(&db, 0, before.as_deref(), b, diff).unwrap();
                    apply_row_op(ts, Uuid(1), &mut want, op);
                    let mut row = before
                        .clone()
                        .unwrap_or_else(|| Row::new_default(ts, Uuid(1)).columns);
                    for (ci, d) in vals {
                        row[ci] = d;
                    }
                    assert_eq!(
                        Some(row),
                        want,
                        "{o} (diff {diff}, before {})",
                        before.is_some()
                    );
                }
            }
        }
        // The objects with a `\u` escape, a real, a duplicate column or
        // (in diff mode, on a row that is there) a set take the replay's read.
        assert!(quick >= 12, "{quick} read quickly");
        let mut slow = |o: &str, exists: bool, diff: bool| {
            quick_values(ts, &mut order, exists, o.as_bytes(), diff, &mut Vec::new()).is_none()
        };
        assert!(slow(&objects[4], false, false));
        assert!(slow(&objects[5], false, false));
        assert!(slow(&objects[3], true, true));
    }

    /// The filter has every row of the database (no false "absent"), in
    /// every table, and says "absent" for nearly every row it lacks.
    #[test]
    fn the_row_filter_has_every_row_and_few_others() {
        let schema = r#"{"name":"D","tables":{
            "A":{"isRoot":true,"columns":{"n":{"type":"integer"}}},
            "B":{"isRoot":true,"columns":{"n":{"type":"integer"}}}}}"#;
        let mut db = Db::new(DatabaseSchema::parse(schema.as_bytes()).unwrap());
        let uuid = |k: u64| {
            Uuid(0x1234_5678_9abc_4def_8000_0000_0000_0000 | (u128::from(k) * 0x9e37_79b9))
        };
        let mut rows = Vec::new();
        for k in 0..3_000u64 {
            let table = if k % 3 == 0 { "B" } else { "A" };
            let txn = format!(r#"{{"{table}":{{"{}":{{"n":{k}}}}}}}"#, uuid(k));
            db.apply_txn(&parse(txn.as_bytes()).unwrap()).unwrap();
            rows.push((usize::from(k % 3 == 0), uuid(k)));
        }
        let present = Present::of(&db);
        let ti = |name: &str| db.schema.table_index(name).unwrap();
        for &(b, u) in &rows {
            let t = if b == 1 { ti("B") } else { ti("A") };
            assert!(present.may_have(t, u), "{u}");
        }
        // The same UUIDs in the other table, and UUIDs never written.
        let others = rows
            .iter()
            .map(|&(b, u)| (if b == 1 { ti("A") } else { ti("B") }, u))
            .chain((3_000..6_000u64).map(|k| (ti("A"), uuid(k))));
        let (mut maybe, mut n) = (0, 0);
        for (t, u) in others {
            n += 1;
            maybe += usize::from(present.may_have(t, u));
        }
        assert!(
            maybe * 1000 < n,
            "{maybe} of {n} absent rows pass the filter"
        );
        assert!(present.bytes() >= 4 * 2 * 3_000);
    }
}
