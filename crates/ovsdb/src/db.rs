//! In-memory database: tables of rows, transactions with referential
//! integrity, garbage collection of unreferenced non-root rows and
//! weak-reference cleanup (like ovsdb-server's commit), replay of txn
//! records (§2.4), and re-encoding of a transaction's changes with full
//! values or column diffs (§2.3, §4).
//!
//! Costs: applying a d-element diff to an n-element column is O(d log n),
//! reference counts and weak back-references are maintained incrementally,
//! and rollback after a failed commit uses the per-column change tracking
//! (no row copies). Rows and reference maps are persistent maps
//! ([`RowMap`]): cloning a database is O(tables), the clone shares every
//! row, and a later change copies only the B-tree path and the row it
//! touches (what a replay's checkpoints rely on).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use imbl::OrdMap;

use crate::atom::Atom;
use crate::datum::Datum;
use crate::error::{Error, Result};
use crate::json::{hmap_order, Json, Object};
use crate::schema::{DatabaseSchema, TableSchema};
use crate::sets::AtomMap;
use crate::types::{RefType, Type};
use crate::uuid::Uuid;

mod index;
mod records;
mod refs;
mod server;
mod txn;
mod weak;

pub use txn::Txn;
use txn::{net_diff, restore_keys};

/// One row: its UUID and one datum per column of the table schema, indexed
/// like [`TableSchema::columns`]. The `_uuid` and `_version` slots are kept
/// empty (the UUID is [`Row::uuid`]): a one-element datum is a B-tree node
/// allocation, two of them per row were most of a row's memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub uuid: Uuid,
    pub columns: Vec<Datum>,
}

impl Row {
    /// A row with every user column at its default (`_uuid` and
    /// `_version` empty).
    pub fn new_default(ts: &TableSchema, uuid: Uuid) -> Row {
        let columns = ts
            .columns
            .iter()
            .map(|c| {
                if c.is_implicit() {
                    Datum::default()
                } else {
                    Datum::default_for(&c.ty)
                }
            })
            .collect();
        Row { uuid, columns }
    }

    /// Column value by name.
    pub fn get<'a>(&'a self, ts: &TableSchema, name: &str) -> Option<&'a Datum> {
        ts.column_index(name).and_then(|i| self.columns.get(i))
    }

    /// About how many bytes of memory the row takes: the row and its
    /// datums, their atoms and the text of their strings, each allocation
    /// rounded up to 16 bytes plus 16 of allocator overhead, and a share
    /// of a B-tree node.
    pub fn approx_bytes(&self) -> usize {
        const ALLOC: usize = 16;
        let round = |n: usize| n.div_ceil(ALLOC) * ALLOC + ALLOC;
        let atom = |a: &Atom| match a {
            Atom::String(s) if !s.is_empty() => std::mem::size_of::<Atom>() + round(s.len()),
            _ => std::mem::size_of::<Atom>(),
        };
        // The `Arc`'s allocation (counts and row), the columns' vector and
        // the row's slot in a copied B-tree node.
        let mut n = round(2 * std::mem::size_of::<usize>() + std::mem::size_of::<Row>())
            + round(self.columns.len() * std::mem::size_of::<Datum>())
            + 64;
        for d in &self.columns {
            n += match d {
                Datum::Set(s) => s.iter().map(atom).sum::<usize>(),
                Datum::Map(m) => m.iter().map(|(k, v)| atom(k) + atom(v)).sum(),
            };
            if d.len() > 1 {
                n += ALLOC;
            }
        }
        n
    }
}

/// One version of a row, shared: a database, its clones and the change
/// lists ([`RowChange`]) that name the version hold the same allocation.
pub type RowRef = Arc<Row>;

/// One row for [`Database::place_rows`]: its table index and UUID, the
/// version the database holds now if the caller looked it up (a row left
/// with the same values then stays shared), and its new values in schema
/// column order (None: the row goes).
pub struct PlacedRow {
    pub table: usize,
    pub uuid: Uuid,
    pub old: Option<RowRef>,
    pub new: Option<Vec<Datum>>,
}

/// The rows of a table, by UUID: a persistent B-tree whose clone is O(1)
/// and shares every node (and, through the `Arc`, every row) with the
/// original, so a copy of a [`Database`] costs O(tables) and only the
/// nodes and rows one of them changes afterwards are copied.
pub type RowMap = OrdMap<Uuid, RowRef>;

/// Weak references into a table's rows: target row -> (table, row) -> count.
type WeakIn = OrdMap<Uuid, OrdMap<(usize, Uuid), u32>>;

/// The rows of one table. Cloning it is O(1) (persistent maps).
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub rows: RowMap,
    /// Strong references into each row (counted per referencing atom).
    strong_in: OrdMap<Uuid, u32>,
    /// Weak references into each row: referencing (table, row) -> count.
    weak_in: WeakIn,
    /// Bytes ([`Row::approx_bytes`]) of the row versions this table let go
    /// of (changed or removed) while a clone still shared them.
    detached: u64,
    /// Per unique index, the committed keys, when the database keeps them
    /// ([`Database::keep_key_indexes`]).
    keys: Vec<index::KeyIndex>,
}

impl Table {
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    pub fn get(&self, uuid: &Uuid) -> Option<&Row> {
        self.rows.get(uuid).map(|r| &**r)
    }
    /// The row to change, copied first if a clone of the table shares it.
    fn row_mut(&mut self, uuid: &Uuid) -> Option<&mut Row> {
        let r = self.rows.get_mut(uuid)?;
        if Arc::strong_count(r) > 1 {
            self.detached += r.approx_bytes() as u64;
        }
        Some(Arc::make_mut(r))
    }

    fn remove_row(&mut self, uuid: &Uuid) -> Option<Arc<Row>> {
        let r = self.rows.remove(uuid)?;
        if Arc::strong_count(&r) > 1 {
            self.detached += r.approx_bytes() as u64;
        }
        Some(r)
    }
    /// Number of strong references to `uuid` (0 if none).
    pub fn strong_refs(&self, uuid: &Uuid) -> u32 {
        self.strong_in.get(uuid).copied().unwrap_or(0)
    }
}

#[derive(Debug, Clone, Copy)]
struct RefTarget {
    table: usize,
    weak: bool,
}

#[derive(Debug, Clone)]
struct RefCol {
    col: usize,
    key: Option<RefTarget>,
    value: Option<RefTarget>,
}

#[derive(Debug, Clone, Default)]
struct TableMeta {
    ref_cols: Vec<RefCol>,
    /// Index into `ref_cols` for each column, if it carries references.
    ref_of_col: Vec<Option<usize>>,
    /// The unique indexes, as column numbers.
    indexes: Vec<Vec<usize>>,
}

/// An in-memory OVSDB database.
#[derive(Debug, Clone)]
pub struct Database {
    schema: Arc<DatabaseSchema>,
    /// Each table behind its own `Arc`: a clone of the database copies one
    /// pointer per table, and a table is copied (its maps' roots, O(1))
    /// only when a clone writes to it ([`Database::table_mut`]). Copying
    /// and dropping every table's maps at each clone was most of what the
    /// simulator's `core_db` check spent per record besides the replay.
    tables: Vec<Arc<Table>>,
    /// Derived from the schema and never changed: shared by clones.
    meta: Arc<[TableMeta]>,
    /// Rows that commits deleted or changed on their own (garbage
    /// collection, weak references dropped), over all commits.
    implicit: u64,
    /// Whether its tables keep their unique indexes' keys.
    key_indexes: bool,
}

/// How a transaction's modifications are encoded (§4). The default is
/// full values, what a database without `_is_diff` records holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StorageMode {
    /// Every changed column carries its complete new value.
    #[default]
    Full,
    /// Changed set/map columns with `max > 1` carry a diff.
    Diff,
}

/// One changed column of a modified row.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnChange {
    /// Index into [`TableSchema::columns`].
    pub column: usize,
    /// The diff (§4.2) from the old to the new value; for non-composite
    /// types this is the new value.
    pub diff: Datum,
    /// The old value, when the transaction was run with `track_old`.
    pub old: Option<Datum>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ChangeKind {
    /// The row was inserted ([`RowChange::new`]).
    Insert,
    /// The row was deleted ([`RowChange::old`]).
    Delete,
    /// The row was modified: its changed columns, in schema column order.
    /// A change list that carries both versions of a modified row (the
    /// ovsdb-server model's commits, whose monitors compare them column by
    /// column) lists none.
    Modify { columns: Vec<ColumnChange> },
}

/// One row a transaction changed: what happened to it, and the row's
/// versions on either side, shared ([`RowRef`]) rather than copied.
#[derive(Debug, Clone, PartialEq)]
pub struct RowChange {
    pub uuid: Uuid,
    pub kind: ChangeKind,
    /// The row before the transaction: a deleted row's last committed
    /// version, and a modified row's where the change list keeps it (the
    /// ovsdb-server model's commits do; a core [`Txn`] changes its rows in
    /// place and keeps a modified row's old values per column instead,
    /// [`ColumnChange::old`], with [`ReplayOptions::track_old`]).
    pub old: Option<RowRef>,
    /// The row the transaction leaves, inserted or modified: the version
    /// the database holds.
    pub new: Option<RowRef>,
}

impl RowChange {
    /// The change of row `uuid` from version `old` to version `new`
    /// (`None`: absent), its kind read from them (a modify lists no
    /// columns: its readers compare the versions); `None` when the row is
    /// absent on both sides.
    pub fn between(uuid: Uuid, old: Option<RowRef>, new: Option<RowRef>) -> Option<RowChange> {
        let kind = match (&old, &new) {
            (None, None) => return None,
            (None, Some(_)) => ChangeKind::Insert,
            (Some(_), None) => ChangeKind::Delete,
            (Some(_), Some(_)) => ChangeKind::Modify {
                columns: Vec::new(),
            },
        };
        Some(RowChange {
            uuid,
            kind,
            old,
            new,
        })
    }
}

/// Changes of one table, rows in the order the transaction first touched
/// them.
#[derive(Debug, Clone, PartialEq)]
pub struct TableChanges {
    /// Index into [`DatabaseSchema::tables`] (in the ovsdb-server model's
    /// commits: into its metadata's tables, which are in name order), which
    /// names the table.
    pub table: usize,
    pub rows: Vec<RowChange>,
}

/// What a committed transaction changed (no-op changes dropped), tables in
/// first-touched order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TxnChanges {
    pub tables: Vec<TableChanges>,
}

impl TxnChanges {
    /// Every changed row with its table's index, table by table.
    pub fn rows(&self) -> impl Iterator<Item = (usize, &RowChange)> + '_ {
        self.tables
            .iter()
            .flat_map(|t| t.rows.iter().map(move |r| (t.table, r)))
    }

    /// Appends a change to table `table`: to the last table's changes when
    /// it is that table, else as the next table's.
    pub fn push(&mut self, table: usize, change: RowChange) {
        match self.tables.last_mut() {
            Some(tc) if tc.table == table => tc.rows.push(change),
            _ => {
                // A Vec's first capacity (not `vec![change]`'s one): a
                // one-row list freed at once would leave a fastbin-sized
                // hole per commit among long-lived rows, which made the
                // simulator's exit (freeing them) a quarter slower.
                let mut rows = Vec::with_capacity(4);
                rows.push(change);
                self.tables.push(TableChanges { table, rows })
            }
        }
    }

    /// Row iteration order the C server would use for this transaction's
    /// rows within each table (an `hmap` keyed by the UUID's first 32 bits,
    /// filled in first-touch order): reorders `changes` in place.
    pub fn hash_order_rows(&mut self) {
        for tc in &mut self.tables {
            let hashes: Vec<u32> = tc.rows.iter().map(|r| r.uuid.first_word()).collect();
            let order = hmap_order(&hashes);
            let mut slots: Vec<Option<RowChange>> = tc.rows.drain(..).map(Some).collect();
            tc.rows = order.into_iter().filter_map(|i| slots[i].take()).collect();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.tables.iter().all(|t| t.rows.is_empty())
    }
    /// Number of changed rows.
    pub fn row_count(&self) -> usize {
        self.tables.iter().map(|t| t.rows.len()).sum()
    }
}

/// Options for replaying a txn record.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplayOptions {
    /// `ovsdb-tool convert` mode: unknown tables/columns are ignored.
    pub converting: bool,
    /// Keep old column values in [`ColumnChange::old`].
    pub track_old: bool,
    /// Skip the unique-index check at commit. It costs O(rows) per
    /// transaction for tables with indexes; files written by ovsdb-server
    /// already satisfy it, so long replays may skip it.
    pub skip_index_check: bool,
    /// Commit returns an empty [`TxnChanges`]. Building the change list
    /// compares and diffs every changed column against its old value;
    /// a replay that only needs the resulting database skips that.
    pub skip_changes: bool,
    /// The transaction applies one file record, operations in the record's
    /// text order: weak references are then assessed in the order
    /// ovsdb-server uses when it reads the record (its tables and rows in
    /// the C hash-table order of their names and UUID strings) instead of
    /// the order the operations touched them (a live transaction's).
    /// [`Database::apply_txn_json`] always does this.
    pub file_record_order: bool,
    /// The caller has already checked every value's atoms against its
    /// column type (as the log replay does while it reads the record), so
    /// inserts and replaced columns skip that check.
    pub atoms_checked: bool,
    /// The transaction is a live `transact` of the ovsdb-server model
    /// (crate `ovsdb-server`): strong references are checked before garbage
    /// collection and reported, like weak references whose removal leaves
    /// a column too small, in the words ovsdb-server's reply uses; column
    /// sizes are not checked again (the model checks each value as it
    /// parses or mutates it, and may leave columns without references
    /// empty: only references matter here); rows the
    /// operations touched without changing them still take their slot in
    /// the weak-reference assessment's hash tables; rows that join the
    /// assessment later, and a deleted row's referrers, join in table-name
    /// and UUID order (see `db/server.rs`); and the operations' references
    /// are counted at commit, from each row's net change (as ovsdb-server
    /// counts them from a row's old and new versions): a reference written
    /// and removed again neither counts nor brings its target into the
    /// commit.
    pub server_checks: bool,
}

// ---------------------------------------------------------------------------
// Transaction state

#[derive(Debug, Clone)]
enum ColTrack {
    /// The column's value before the transaction.
    Old(Datum),
    /// Original state of the keys a diff touched: `None` = absent; for sets
    /// `Some(key)`, for maps `Some(value)`.
    Keys(BTreeMap<Atom, Option<Atom>>),
}

#[derive(Debug, Default, Clone)]
struct RowTrack {
    inserted: bool,
    /// A row the transaction inserted that has left its table again
    /// (deleted or collected), until it is inserted again.
    gone: bool,
    /// A pre-existing row the transaction deleted ([`RowTrack::original`]
    /// holds it).
    deleted: bool,
    /// The row's version before the transaction, shared: kept when the
    /// transaction deletes a pre-existing row, and when [`Txn::modify_at`]
    /// first changes one (a pointer also keeps `TxnState::rows` B-tree
    /// nodes under 1 KiB: larger allocations take glibc's slow path,
    /// fastbin consolidation, on every small transaction).
    original: Option<Arc<Row>>,
    cols: BTreeMap<usize, ColTrack>,
}

#[derive(Debug, Default)]
struct TxnState {
    order: Vec<(usize, Uuid)>,
    rows: BTreeMap<(usize, Uuid), RowTrack>,
    table_order: Vec<usize>,
    gc_candidates: Vec<(usize, Uuid)>,
    deleted_queue: Vec<(usize, Uuid)>,
    weak_added: Vec<(usize, Uuid, usize, usize, Uuid)>,
    strong_touched: BTreeSet<(usize, Uuid)>,
    explicitly_deleted: BTreeSet<(usize, Uuid)>,
    track_old: bool,
    skip_index_check: bool,
    skip_changes: bool,
    file_record_order: bool,
    atoms_checked: bool,
    server_checks: bool,
    /// Set while rolling back: no tracking.
    replaying_undo: bool,
    /// [`ReplayOptions::server_checks`]: the operations' reference counts
    /// are not taken yet ([`Txn::count_pending_refs`] takes them at commit).
    refs_pending: bool,
    /// [`Database::place_rows`]: strong reference counts are summed here
    /// per target row and written once at the end (a jump places tens of
    /// thousands of logical flows that all count on a few datapaths).
    strong_batch: Option<crate::uuid::RowKeyMap<(usize, Uuid), i64>>,
    /// Rows garbage collection deleted or weak references changed.
    implicit: u64,
}

impl Database {
    pub fn new(schema: Arc<DatabaseSchema>) -> Database {
        let mut meta = Vec::new();
        for ts in &schema.tables {
            let indexes = ts.indexes.iter();
            let mut m = TableMeta {
                ref_cols: Vec::new(),
                ref_of_col: vec![None; ts.columns.len()],
                indexes: indexes
                    .map(|ix| ix.iter().filter_map(|c| ts.column_index(c)).collect())
                    .collect(),
            };
            for (ci, c) in ts.columns.iter().enumerate() {
                let target = |b: &crate::types::BaseType| {
                    b.ref_table.as_ref().and_then(|rt| {
                        schema.table_index(rt).map(|t| RefTarget {
                            table: t,
                            weak: b.ref_type == RefType::Weak,
                        })
                    })
                };
                let key = target(&c.ty.key);
                let value = c.ty.value.as_ref().and_then(target);
                if key.is_some() || value.is_some() {
                    m.ref_of_col[ci] = Some(m.ref_cols.len());
                    m.ref_cols.push(RefCol {
                        col: ci,
                        key,
                        value,
                    });
                }
            }
            meta.push(m);
        }
        Database {
            tables: (0..schema.tables.len()).map(|_| Arc::default()).collect(),
            schema,
            meta: meta.into(),
            implicit: 0,
            key_indexes: false,
        }
    }

    pub fn schema(&self) -> &Arc<DatabaseSchema> {
        &self.schema
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.schema.table_index(name).map(|i| &*self.tables[i])
    }

    pub fn table_at(&self, index: usize) -> Option<&Table> {
        self.tables.get(index).map(|t| &**t)
    }

    /// Table `ti`, to change: copied first if a clone shares it.
    fn table_mut(&mut self, ti: usize) -> &mut Table {
        Arc::make_mut(&mut self.tables[ti])
    }

    pub fn table_schema(&self, name: &str) -> Option<&TableSchema> {
        self.schema.table(name)
    }

    pub fn row(&self, table: &str, uuid: &Uuid) -> Option<&Row> {
        self.table(table).and_then(|t| t.get(uuid))
    }

    /// The database taken apart, for a caller that frees a large one a
    /// little at a time (in a browser, the rows a time-travel jump built
    /// on the 1 GB Southbound file take about 100 ms to free): every row,
    /// each shared, in table and UUID order. The rest (row maps, reference
    /// counts, kept keys) goes now; a row goes when the last of its
    /// holders does.
    pub fn into_rows(self) -> Vec<RowRef> {
        let n = self.tables.iter().map(|t| t.rows.len()).sum();
        let mut rows = Vec::with_capacity(n);
        for t in &self.tables {
            rows.extend(t.rows.values().cloned());
        }
        rows
    }

    /// About how many bytes of row versions this database let go of
    /// (changed or removed) while a clone shared them ([`Row::approx_bytes`];
    /// a clone starts with its original's count): what the clones taken
    /// along the way hold that the database itself no longer does.
    pub fn detached_bytes(&self) -> u64 {
        self.tables.iter().map(|t| t.detached).sum()
    }

    /// How many rows commits deleted or changed on their own so far
    /// (garbage collection, weak references dropped): a replay of records
    /// that name every row they change, as ovsdb-server writes them,
    /// keeps it at 0.
    pub fn implicit_changes(&self) -> u64 {
        self.implicit
    }

    /// Total number of rows.
    pub fn row_count(&self) -> usize {
        self.tables.iter().map(|t| t.len()).sum()
    }

    pub fn begin(&mut self) -> Txn<'_> {
        Txn {
            db: self,
            st: TxnState::default(),
            done: false,
        }
    }

    /// Begins a transaction with replay options: `track_old`,
    /// `skip_index_check` and `skip_changes` apply (`converting` is for
    /// [`Database::apply_txn_json`] only).
    pub fn begin_with(&mut self, opts: ReplayOptions) -> Txn<'_> {
        let mut t = self.begin();
        t.st.track_old = opts.track_old;
        t.st.skip_index_check = opts.skip_index_check;
        t.st.skip_changes = opts.skip_changes;
        t.st.file_record_order = opts.file_record_order;
        t.st.atoms_checked = opts.atoms_checked;
        t.st.server_checks = opts.server_checks;
        t.st.refs_pending = opts.server_checks;
        t
    }

    /// Begins a transaction that records old column values in its changes.
    pub fn begin_tracking_old(&mut self) -> Txn<'_> {
        let mut t = self.begin();
        t.st.track_old = true;
        t
    }

    /// Converts the database to `new_schema` (§3.3 "convert yourself"):
    /// common tables keep their rows; common columns keep values (re-parsed
    /// through JSON when the type changed); new columns get defaults.
    /// Puts rows in place as given (table index, UUID, values in schema
    /// column order; None: absent), reference counts kept, without a
    /// transaction: nothing is checked, collected or cleaned. For a state
    /// known to be consistent, such as the net change of log records a
    /// replay already applied without error (`ovsdb_log::net`). The rows
    /// it lets go of are not counted in [`Database::detached_bytes`].
    ///
    /// A row may come with the version the database holds now (`old`, as
    /// the caller looked it up): when its values are the same, it stays
    /// (and stays shared). Strong reference counts are summed per target
    /// row and written once: a jump places tens of thousands of rows that
    /// point at a few.
    pub fn place_rows(&mut self, rows: Vec<PlacedRow>) {
        let rows = rows.into_iter().filter_map(|r| match (r.old, r.new) {
            (Some(o), Some(n)) if o.columns == n => None,
            (_, new) => Some((
                r.table,
                r.uuid,
                new.map(|columns| {
                    Arc::new(Row {
                        uuid: r.uuid,
                        columns,
                    })
                }),
            )),
        });
        self.place(rows, true);
    }

    /// Puts rows given whole and shared in place, each held as it is
    /// (`None`: the row goes): for the ovsdb-server model, whose checked
    /// commits (a prepared one, a log record) carry the rows it keeps.
    /// Reference counts and kept unique-index keys follow; nothing is
    /// checked, and the rows it lets go of are the caller's to share (not
    /// counted in [`Database::detached_bytes`]).
    pub fn place_shared_rows(
        &mut self,
        rows: impl IntoIterator<Item = (usize, Uuid, Option<RowRef>)>,
    ) {
        self.place(rows, false);
    }

    /// [`Database::place_rows`] and [`Database::place_shared_rows`]:
    /// `batch`, strong reference counts summed per target and written at
    /// the end.
    fn place(
        &mut self,
        rows: impl IntoIterator<Item = (usize, Uuid, Option<RowRef>)>,
        batch: bool,
    ) {
        let mut st = TxnState {
            replaying_undo: true,
            strong_batch: batch.then(Default::default),
            ..TxnState::default()
        };
        // Every old key leaves before a new one comes.
        let mut keyed = Vec::new();
        for (ti, u, new) in rows {
            if ti >= self.tables.len() {
                continue;
            }
            let table = self.table_mut(ti);
            let old = match &new {
                Some(row) => table.rows.insert(u, row.clone()),
                None => table.rows.remove(&u),
            };
            self.place_refs(
                &mut st,
                (ti, u),
                old.as_deref().map(|o| &o.columns[..]),
                new.as_deref().map(|n| &n.columns[..]),
            );
            // Kept keys only (a jump's database keeps none): compared
            // only then.
            if !self.key_indexes || self.tables[ti].keys.is_empty() {
                continue;
            }
            let keys_moved = match (&old, &new) {
                (Some(o), Some(n)) => {
                    let cols = self.meta[ti].indexes.iter().flatten();
                    !cols.copied().all(|c| o.columns[c] == n.columns[c])
                }
                _ => true,
            };
            if keys_moved {
                if let Some(o) = &old {
                    self.drop_row_keys(ti, o);
                }
                if let Some(n) = new {
                    keyed.push((ti, n));
                }
            }
        }
        for (ti, n) in keyed {
            self.add_row_keys(ti, &n);
        }
        for ((tt, tu), delta) in st.strong_batch.take().unwrap_or_default() {
            if delta == 0 {
                continue;
            }
            let table = self.table_mut(tt);
            let c = i64::from(table.strong_in.get(&tu).copied().unwrap_or(0)) + delta;
            match u32::try_from(c) {
                Ok(c) if c > 0 => {
                    table.strong_in.insert(tu, c);
                }
                _ => {
                    table.strong_in.remove(&tu);
                }
            }
        }
    }

    /// The reference counts of row `src` placed with columns `new` where
    /// it had `old`. Empty columns are skipped here, not in the callee:
    /// most reference columns of most rows are empty.
    fn place_refs(
        &mut self,
        st: &mut TxnState,
        src: (usize, Uuid),
        old: Option<&[Datum]>,
        new: Option<&[Datum]>,
    ) {
        for k in 0..self.meta[src.0].ref_cols.len() {
            let ci = self.meta[src.0].ref_cols[k].col;
            let o = old.map(|o| &o[ci]).filter(|d| !d.is_empty());
            let n = new.map(|n| &n[ci]).filter(|d| !d.is_empty());
            match (o, n) {
                (Some(o), Some(n)) if o != n => self.adjust_refs_delta(st, src, ci, o, n),
                (Some(_), Some(_)) | (None, None) => {}
                (Some(o), None) => self.adjust_datum_refs(st, src, ci, o, -1),
                (None, Some(n)) => self.adjust_datum_refs(st, src, ci, n, 1),
            }
        }
    }

    pub fn convert(&self, new_schema: Arc<DatabaseSchema>) -> Result<Database> {
        let mut db = Database::new(new_schema.clone());
        {
            let mut t = db.begin();
            for (nti, nts) in new_schema.tables.iter().enumerate() {
                let Some(oti) = self.schema.table_index(&nts.name) else {
                    continue;
                };
                let ots = &self.schema.tables[oti];
                for (u, row) in &self.tables[oti].rows {
                    let mut cols = Vec::new();
                    for (nci, nc) in nts.columns.iter().enumerate() {
                        if nc.is_implicit() {
                            continue;
                        }
                        let Some(oci) = ots.column_index(&nc.name) else {
                            continue;
                        };
                        let old = &row.columns[oci];
                        let v = if ots.columns[oci].ty == nc.ty {
                            old.clone()
                        } else {
                            Datum::from_json(&old.to_json(), &nc.ty)
                                .map_err(|e| e.context(format!("{}.{}", nts.name, nc.name)))?
                        };
                        cols.push((nci, v));
                    }
                    t.insert_at(nti, *u, cols)?;
                }
            }
            t.commit()?;
        }
        db.implicit = self.implicit;
        Ok(db)
    }

    /// Verifies the database's invariants from scratch (for tests and
    /// debugging; O(size of the database)): the maintained strong and weak
    /// reference counts equal a recount, no strong reference dangles, every
    /// non-root row is strongly referenced, and every column satisfies its
    /// type. (Weak references may dangle: ovsdb-server 3.1 leaves them in
    /// some rows of a transaction that deletes their target, see
    /// `Txn::assess_weak_refs`.)
    pub fn check_integrity(&self) -> Result<()> {
        let mut strong: Vec<OrdMap<Uuid, u32>> = vec![OrdMap::new(); self.tables.len()];
        let mut weak: Vec<WeakIn> = vec![OrdMap::new(); self.tables.len()];
        for (ti, t) in self.tables.iter().enumerate() {
            let ts = &self.schema.tables[ti];
            for (u, row) in &t.rows {
                if row.uuid != *u {
                    return Err(Error::new(
                        "integrity",
                        format!("row {} keyed as {}", row.uuid, u),
                    ));
                }
                for (ci, c) in ts.columns.iter().enumerate() {
                    if c.is_implicit() {
                        continue;
                    }
                    row.columns[ci]
                        .check(&c.ty)
                        .map_err(|e| e.context(format!("{}.{} row {}", ts.name, c.name, u)))?;
                }
                for rc in &self.meta[ti].ref_cols {
                    let mut count = |target: Option<RefTarget>, a: &Atom| {
                        let (Some(tg), Some(tu)) = (target, a.as_uuid()) else {
                            return;
                        };
                        if tg.weak {
                            *weak[tg.table]
                                .entry(tu)
                                .or_default()
                                .entry((ti, *u))
                                .or_insert(0) += 1;
                        } else {
                            *strong[tg.table].entry(tu).or_insert(0) += 1;
                        }
                    };
                    match &row.columns[rc.col] {
                        Datum::Set(set) => set.iter().for_each(|a| count(rc.key, a)),
                        Datum::Map(m) => m.iter().for_each(|(k, v)| {
                            count(rc.key, k);
                            count(rc.value, v);
                        }),
                    }
                }
            }
        }
        for (ti, t) in self.tables.iter().enumerate() {
            let name = &self.schema.tables[ti].name;
            if t.strong_in != strong[ti] {
                return Err(Error::new(
                    "integrity",
                    format!("strong reference counts of {} drifted", name),
                ));
            }
            if t.weak_in != weak[ti] {
                return Err(Error::new(
                    "integrity",
                    format!("weak back-references of {} drifted", name),
                ));
            }
            for u in strong[ti].keys() {
                if !t.rows.contains_key(u) {
                    return Err(Error::referential(format!(
                        "dangling strong reference to {} row {}",
                        name, u
                    )));
                }
            }
            if !self.schema.tables[ti].is_root {
                for u in t.rows.keys() {
                    if !strong[ti].contains_key(u) {
                        return Err(Error::referential(format!(
                            "unreferenced non-root {} row {}",
                            name, u
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------
    // Reference bookkeeping
}

/// Whether a column type is written as a diff in [`StorageMode::Diff`].
pub fn is_diffable(ty: &Type) -> bool {
    ty.is_composite()
}
