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
mod server;
mod weak;

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

/// A transaction in progress on a [`Database`]. Dropping it without
/// [`Txn::commit`] rolls it back.
pub struct Txn<'a> {
    db: &'a mut Database,
    st: TxnState,
    done: bool,
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

    /// Applies a txn record (§2.3/§2.4): the row's existence decides insert
    /// vs modify, `"_is_diff": true` makes modifications diffs. The whole
    /// record is committed with integrity checks and GC; on error the
    /// database is unchanged.
    pub fn apply_txn_json(&mut self, txn: &Json, opts: ReplayOptions) -> Result<TxnChanges> {
        let obj = txn
            .as_object()
            .ok_or_else(|| Error::syntax("transaction is not a JSON object"))?;
        let diff_mode = matches!(obj.get("_is_diff"), Some(Json::Bool(true)));
        let schema = self.schema.clone();
        let mut t = self.begin();
        t.st.track_old = opts.track_old;
        t.st.skip_index_check = opts.skip_index_check;
        t.st.skip_changes = opts.skip_changes;
        t.st.file_record_order = true;
        for (name, value) in obj.iter() {
            let ti = match schema.table_index(name) {
                Some(ti) => ti,
                None => {
                    let special = match name {
                        "_date" => matches!(value, Json::Integer(_)),
                        "_is_diff" => matches!(value, Json::Bool(_)),
                        "_comment" => true,
                        _ => false,
                    };
                    if special || opts.converting {
                        continue;
                    }
                    return Err(Error::syntax(format!("No table named {}.", name)));
                }
            };
            let ts = &schema.tables[ti];
            let rows = value
                .as_object()
                .ok_or_else(|| Error::syntax(format!("table {}: object expected", name)))?;
            for (uuid_s, row_json) in rows.iter() {
                let uuid = Uuid::parse(uuid_s)
                    .ok_or_else(|| Error::syntax(format!("\"{}\" is not a valid UUID", uuid_s)))?;
                match row_json {
                    Json::Null => {
                        if !t.db.tables[ti].rows.contains_key(&uuid) {
                            return Err(Error::syntax(format!(
                                "transaction deletes row {} that does not exist",
                                uuid
                            )));
                        }
                        t.delete_at(ti, uuid)?;
                    }
                    Json::Object(cols) => {
                        let exists = t.db.tables[ti].rows.contains_key(&uuid);
                        if !exists {
                            t.insert_at(ti, uuid, Vec::new())?;
                        }
                        for (cname, cj) in cols.iter() {
                            let ci = match ts.column_index(cname) {
                                Some(ci) if !cname.starts_with('_') => ci,
                                _ if opts.converting => continue,
                                _ => {
                                    return Err(Error::syntax(format!(
                                        "No column {} in table {}.",
                                        cname, name
                                    )))
                                }
                            };
                            let ty = &ts.columns[ci].ty;
                            let ctx =
                                |e: Error| e.context(format!("{}.{} row {}", name, cname, uuid));
                            if exists && diff_mode {
                                let d = Datum::diff_from_json(cj, ty).map_err(ctx)?;
                                t.apply_diff_at(ti, uuid, ci, &d).map_err(ctx)?;
                            } else {
                                let d = Datum::from_json(cj, ty).map_err(ctx)?;
                                t.set_at(ti, uuid, ci, d).map_err(ctx)?;
                            }
                        }
                    }
                    _ => {
                        return Err(Error::syntax(format!(
                            "row {} in table {}: object or null expected",
                            uuid, name
                        )))
                    }
                }
            }
        }
        t.commit()
    }

    /// Re-encodes a transaction's table changes as a txn record would carry
    /// them (`{table: {uuid: row-or-null}}`), without the `_date`,
    /// `_comment` and `_is_diff` members. Must be called on the database
    /// state right after the transaction (inserted and modified rows' new
    /// values are read from it). Inserts carry all non-default persistent
    /// columns; modifications carry the changed persistent columns as full
    /// values or, in [`StorageMode::Diff`], as diffs for composite columns.
    /// Tables and rows keep the change order; columns follow the schema's
    /// column order. Objects are in insertion order: call
    /// [`Object::reorder_shash`] / `Json::reorder_shash_recursive` for the
    /// C writer's hash order.
    pub fn txn_to_json(&self, changes: &TxnChanges, mode: StorageMode) -> Object {
        let mut out = Object::new();
        for tc in &changes.tables {
            let Some(ts) = self.schema.tables.get(tc.table) else {
                continue;
            };
            let mut rows = Object::new();
            for rc in &tc.rows {
                if let Some(row_json) = self.row_change_json(ts, tc.table, rc, mode) {
                    rows.push_unchecked(rc.uuid.to_string(), row_json);
                }
            }
            if !rows.is_empty() {
                out.push_unchecked(ts.name.clone(), Json::Object(rows));
            }
        }
        out
    }

    fn row_change_json(
        &self,
        ts: &TableSchema,
        ti: usize,
        rc: &RowChange,
        mode: StorageMode,
    ) -> Option<Json> {
        match &rc.kind {
            ChangeKind::Delete => Some(Json::Null),
            ChangeKind::Insert => {
                let row = self.tables[ti].rows.get(&rc.uuid)?;
                let mut o = Object::new();
                for (ci, c) in ts.columns.iter().enumerate() {
                    if c.is_implicit() || !c.persistent {
                        continue;
                    }
                    let d = &row.columns[ci];
                    if !d.is_default(&c.ty) {
                        o.push_unchecked(c.name.clone(), d.to_json());
                    }
                }
                Some(Json::Object(o))
            }
            ChangeKind::Modify { columns } => {
                let row = self.tables[ti].rows.get(&rc.uuid)?;
                let mut o = Object::new();
                for cc in columns {
                    let c = &ts.columns[cc.column];
                    if c.is_implicit() || !c.persistent {
                        continue;
                    }
                    let v = if mode == StorageMode::Diff && c.ty.is_composite() {
                        cc.diff.to_json()
                    } else {
                        row.columns[cc.column].to_json()
                    };
                    o.push_unchecked(c.name.clone(), v);
                }
                if o.is_empty() {
                    None
                } else {
                    Some(Json::Object(o))
                }
            }
        }
    }

    /// Serialized length of [`Database::txn_to_json`]'s output, computed
    /// without building it (for storage-size accounting).
    pub fn txn_json_len(&self, changes: &TxnChanges, mode: StorageMode) -> usize {
        use crate::json::string_serialized_len as slen;
        let mut n_tables = 0usize;
        let mut total = 0usize;
        for tc in &changes.tables {
            let Some(ts) = self.schema.tables.get(tc.table) else {
                continue;
            };
            let mut n_rows = 0usize;
            let mut rows_len = 0usize;
            for rc in &tc.rows {
                let row_len = match &rc.kind {
                    ChangeKind::Delete => Some(4),
                    ChangeKind::Insert => self.tables[tc.table].rows.get(&rc.uuid).map(|row| {
                        let mut n = 0usize;
                        let mut len = 0usize;
                        for (ci, c) in ts.columns.iter().enumerate() {
                            if c.is_implicit() || !c.persistent {
                                continue;
                            }
                            let d = &row.columns[ci];
                            if !d.is_default(&c.ty) {
                                n += 1;
                                len += slen(&c.name) + 1 + d.json_len();
                            }
                        }
                        2 + len + n.saturating_sub(1)
                    }),
                    ChangeKind::Modify { columns } => {
                        self.tables[tc.table].rows.get(&rc.uuid).and_then(|row| {
                            let mut n = 0usize;
                            let mut len = 0usize;
                            for cc in columns {
                                let c = &ts.columns[cc.column];
                                if c.is_implicit() || !c.persistent {
                                    continue;
                                }
                                let v = if mode == StorageMode::Diff && c.ty.is_composite() {
                                    cc.diff.json_len()
                                } else {
                                    row.columns[cc.column].json_len()
                                };
                                n += 1;
                                len += slen(&c.name) + 1 + v;
                            }
                            (n > 0).then(|| 2 + len + n - 1)
                        })
                    }
                };
                if let Some(l) = row_len {
                    n_rows += 1;
                    rows_len += 38 + 1 + l; // "uuid": + value
                }
            }
            if n_rows > 0 {
                n_tables += 1;
                total += slen(&ts.name) + 1 + 2 + rows_len + (n_rows - 1);
            }
        }
        2 + total + n_tables.saturating_sub(1)
    }

    /// The whole database as `{table: {uuid: {column: datum}}}`: tables in
    /// name order, rows in UUID order, columns in name order. With
    /// `include_defaults` every user column is listed, else only non-default
    /// ones. `_uuid`/`_version` are not included.
    pub fn dump_json(&self, include_defaults: bool) -> Json {
        let mut tables: Vec<(usize, &TableSchema)> =
            self.schema.tables.iter().enumerate().collect();
        crate::order::sort_by(&mut tables, |a, b| a.1.name.cmp(&b.1.name));
        let mut out = Object::new();
        for (ti, ts) in tables {
            let mut cols: Vec<(usize, &str)> = ts
                .columns
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.is_implicit())
                .map(|(i, c)| (i, c.name.as_str()))
                .collect();
            crate::order::sort_by(&mut cols, |a, b| a.1.cmp(b.1));
            let mut rows = Object::new();
            for (u, row) in &self.tables[ti].rows {
                let mut o = Object::new();
                for &(ci, name) in &cols {
                    let d = &row.columns[ci];
                    if include_defaults || !d.is_default(&ts.columns[ci].ty) {
                        o.push_unchecked(name, d.to_json());
                    }
                }
                rows.push_unchecked(u.to_string(), Json::Object(o));
            }
            out.push_unchecked(ts.name.clone(), Json::Object(rows));
        }
        Json::Object(out)
    }

    /// A snapshot txn record body (`{table:{uuid:{...}}}`, full values,
    /// defaults omitted) of the whole database — what compaction writes —
    /// with tables in schema order and rows in UUID order.
    pub fn snapshot_json(&self) -> Object {
        let mut out = Object::new();
        for (ti, ts) in self.schema.tables.iter().enumerate() {
            if self.tables[ti].rows.is_empty() {
                continue;
            }
            let mut rows = Object::new();
            for (u, row) in &self.tables[ti].rows {
                let mut o = Object::new();
                for (ci, c) in ts.columns.iter().enumerate() {
                    if c.is_implicit() || !c.persistent {
                        continue;
                    }
                    if !row.columns[ci].is_default(&c.ty) {
                        o.push_unchecked(c.name.clone(), row.columns[ci].to_json());
                    }
                }
                rows.push_unchecked(u.to_string(), Json::Object(o));
            }
            out.push_unchecked(ts.name.clone(), Json::Object(rows));
        }
        out
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

    fn adjust_ref(
        &mut self,
        st: &mut TxnState,
        src: (usize, Uuid),
        target: RefTarget,
        atom: &Atom,
        col: usize,
        delta: i32,
    ) {
        let Some(tu) = atom.as_uuid() else {
            return;
        };
        let tt = target.table;
        let Some(table) = self.tables.get_mut(tt).map(Arc::make_mut) else {
            return;
        };
        if target.weak {
            let e = table.weak_in.entry(tu).or_default();
            let c = e.entry(src).or_insert(0);
            if delta > 0 {
                *c += 1;
                if !st.replaying_undo {
                    st.weak_added.push((src.0, src.1, col, tt, tu));
                }
            } else {
                *c = c.saturating_sub(1);
                if *c == 0 {
                    e.remove(&src);
                }
                if e.is_empty() {
                    table.weak_in.remove(&tu);
                }
            }
        } else if let Some(batch) = st.strong_batch.as_mut() {
            *batch.entry((tt, tu)).or_insert(0) += i64::from(delta.signum());
        } else {
            let c = table.strong_in.entry(tu).or_insert(0);
            if delta > 0 {
                *c += 1;
            } else {
                *c = c.saturating_sub(1);
            }
            let zero = *c == 0;
            if zero {
                table.strong_in.remove(&tu);
            }
            if !st.replaying_undo {
                st.strong_touched.insert((tt, tu));
                if zero && !self.schema.tables[tt].is_root {
                    st.gc_candidates.push((tt, tu));
                }
            }
        }
    }

    /// Adjusts references for every atom of `d` in column `col` of a row.
    fn adjust_datum_refs(
        &mut self,
        st: &mut TxnState,
        src: (usize, Uuid),
        col: usize,
        d: &Datum,
        delta: i32,
    ) {
        // Most reference columns of most rows are empty (a new logical
        // switch's ports, ACLs, ...): nothing to count.
        if d.is_empty() {
            return;
        }
        let Some(rc) =
            self.meta[src.0].ref_of_col[col].map(|i| self.meta[src.0].ref_cols[i].clone())
        else {
            return;
        };
        match d {
            Datum::Set(s) => {
                if let Some(k) = rc.key {
                    for a in s {
                        self.adjust_ref(st, src, k, a, col, delta);
                    }
                }
            }
            Datum::Map(m) => {
                for (k, v) in m {
                    if let Some(kt) = rc.key {
                        self.adjust_ref(st, src, kt, k, col, delta);
                    }
                    if let Some(vt) = rc.value {
                        self.adjust_ref(st, src, vt, v, col, delta);
                    }
                }
            }
        }
    }

    /// Adjusts references for a column changing from `old` to `new`,
    /// touching only the elements that differ (a merge walk).
    fn adjust_refs_delta(
        &mut self,
        st: &mut TxnState,
        src: (usize, Uuid),
        col: usize,
        old: &Datum,
        new: &Datum,
    ) {
        use std::cmp::Ordering;
        match (old, new) {
            (Datum::Set(a), Datum::Set(b)) => {
                let (mut ia, mut ib) = (a.iter().peekable(), b.iter().peekable());
                loop {
                    match (ia.peek(), ib.peek()) {
                        (None, None) => break,
                        (Some(x), None) => {
                            self.adjust_pair_refs(st, src, col, x, None, -1);
                            ia.next();
                        }
                        (None, Some(y)) => {
                            self.adjust_pair_refs(st, src, col, y, None, 1);
                            ib.next();
                        }
                        (Some(x), Some(y)) => match x.cmp(y) {
                            Ordering::Less => {
                                self.adjust_pair_refs(st, src, col, x, None, -1);
                                ia.next();
                            }
                            Ordering::Greater => {
                                self.adjust_pair_refs(st, src, col, y, None, 1);
                                ib.next();
                            }
                            Ordering::Equal => {
                                ia.next();
                                ib.next();
                            }
                        },
                    }
                }
            }
            (Datum::Map(a), Datum::Map(b)) => {
                let (mut ia, mut ib) = (a.iter().peekable(), b.iter().peekable());
                loop {
                    match (ia.peek(), ib.peek()) {
                        (None, None) => break,
                        (Some((k, v)), None) => {
                            self.adjust_pair_refs(st, src, col, k, Some(v), -1);
                            ia.next();
                        }
                        (None, Some((k, v))) => {
                            self.adjust_pair_refs(st, src, col, k, Some(v), 1);
                            ib.next();
                        }
                        (Some((ka, va)), Some((kb, vb))) => match ka.cmp(kb) {
                            Ordering::Less => {
                                self.adjust_pair_refs(st, src, col, ka, Some(va), -1);
                                ia.next();
                            }
                            Ordering::Greater => {
                                self.adjust_pair_refs(st, src, col, kb, Some(vb), 1);
                                ib.next();
                            }
                            Ordering::Equal => {
                                if va != vb {
                                    let vt = self.meta[src.0].ref_of_col[col]
                                        .and_then(|i| self.meta[src.0].ref_cols[i].value);
                                    if let Some(vt) = vt {
                                        self.adjust_ref(st, src, vt, va, col, -1);
                                        self.adjust_ref(st, src, vt, vb, col, 1);
                                    }
                                }
                                ia.next();
                                ib.next();
                            }
                        },
                    }
                }
            }
            _ => {
                self.adjust_datum_refs(st, src, col, old, -1);
                self.adjust_datum_refs(st, src, col, new, 1);
            }
        }
    }

    fn adjust_pair_refs(
        &mut self,
        st: &mut TxnState,
        src: (usize, Uuid),
        col: usize,
        k: &Atom,
        v: Option<&Atom>,
        delta: i32,
    ) {
        let Some(rc) =
            self.meta[src.0].ref_of_col[col].map(|i| self.meta[src.0].ref_cols[i].clone())
        else {
            return;
        };
        if let Some(kt) = rc.key {
            self.adjust_ref(st, src, kt, k, col, delta);
        }
        if let (Some(vt), Some(v)) = (rc.value, v) {
            self.adjust_ref(st, src, vt, v, col, delta);
        }
    }

    fn has_refs(&self, ti: usize, col: usize) -> bool {
        self.meta[ti]
            .ref_of_col
            .get(col)
            .is_some_and(|r| r.is_some())
    }
}

impl<'a> Txn<'a> {
    /// The database as modified so far by this transaction.
    pub fn db(&self) -> &Database {
        self.db
    }

    fn table_index(&self, table: &str) -> Result<usize> {
        self.db
            .schema
            .table_index(table)
            .ok_or_else(|| Error::syntax(format!("No table named {}.", table)))
    }

    fn column_index(&self, ti: usize, column: &str) -> Result<usize> {
        let ts = &self.db.schema.tables[ti];
        ts.column_index(column)
            .filter(|_| !column.starts_with('_'))
            .ok_or_else(|| Error::syntax(format!("No column {} in table {}.", column, ts.name)))
    }

    fn touch(&mut self, ti: usize, u: Uuid) -> &mut RowTrack {
        // One search of the tracking, not one to test and one to enter.
        let st = &mut self.st;
        match st.rows.entry((ti, u)) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                st.order.push((ti, u));
                if !st.table_order.contains(&ti) {
                    st.table_order.push(ti);
                }
                e.insert(RowTrack::default())
            }
        }
    }

    /// Inserts row `uuid` into `table` with the given column values (others
    /// default).
    pub fn insert(&mut self, table: &str, uuid: Uuid, values: Vec<(String, Datum)>) -> Result<()> {
        let ti = self.table_index(table)?;
        let mut cols = Vec::with_capacity(values.len());
        for (c, d) in values {
            cols.push((self.column_index(ti, &c)?, d));
        }
        self.insert_at(ti, uuid, cols)
    }

    /// Replaces a column's value.
    pub fn set(&mut self, table: &str, uuid: Uuid, column: &str, value: Datum) -> Result<()> {
        let ti = self.table_index(table)?;
        let ci = self.column_index(ti, column)?;
        self.set_at(ti, uuid, ci, value)
    }

    /// Applies a column diff (§4.3).
    pub fn apply_diff(
        &mut self,
        table: &str,
        uuid: Uuid,
        column: &str,
        diff: &Datum,
    ) -> Result<()> {
        let ti = self.table_index(table)?;
        let ci = self.column_index(ti, column)?;
        self.apply_diff_at(ti, uuid, ci, diff)
    }

    /// Deletes a row.
    pub fn delete(&mut self, table: &str, uuid: Uuid) -> Result<()> {
        let ti = self.table_index(table)?;
        self.delete_at(ti, uuid)
    }

    /// Inserts a row given column indexes.
    pub fn insert_at(&mut self, ti: usize, u: Uuid, values: Vec<(usize, Datum)>) -> Result<()> {
        let Some(ts) = self.db.schema.tables.get(ti) else {
            return Err(Error::syntax("no such table"));
        };
        let dup = || duplicate(ts, u);
        // A row the transaction tracks, first; a row in the table is found
        // by the insert itself (below), unless a value is bad: then the
        // duplicate is still the error reported.
        if self.st.rows.contains_key(&(ti, u)) {
            return Err(dup());
        }
        let present = |db: &Database| db.tables[ti].rows.contains_key(&u);
        // Given values are moved in; only the other columns get their
        // defaults (a default with `min` 1 is an allocation).
        let n = ts.columns.len();
        let mut columns: Vec<Datum> = Vec::with_capacity(n);
        columns.resize_with(n, Datum::default);
        let mut given = vec![false; n];
        for (ci, d) in values {
            let Some(c) = ts.columns.get(ci) else {
                return Err(if present(self.db) {
                    dup()
                } else {
                    Error::syntax("no such column")
                });
            };
            if !self.st.atoms_checked {
                if let Err(e) = d.check_atoms(&c.ty) {
                    return Err(if present(self.db) {
                        dup()
                    } else {
                        e.context(format!("column {}", c.name))
                    });
                }
            }
            columns[ci] = d;
            given[ci] = true;
        }
        for (ci, c) in ts.columns.iter().enumerate() {
            if !given[ci] && !c.is_implicit() {
                columns[ci] = Datum::default_for(&c.ty);
            }
        }
        if !self.put_new_row(ti, Arc::new(Row { uuid: u, columns })) {
            return Err(duplicate(&self.db.schema.tables[ti], u));
        }
        Ok(())
    }

    /// Inserts a row given whole (a value for every column of the table,
    /// in its order, `_uuid` and `_version` included as the caller keeps
    /// them), held as it is: the caller may share it.
    pub fn insert_row(&mut self, ti: usize, row: RowRef) -> Result<()> {
        let Some(ts) = self.db.schema.tables.get(ti) else {
            return Err(Error::syntax("no such table"));
        };
        let u = row.uuid;
        let dup = || duplicate(ts, u);
        // A row this transaction inserted and deleted again may come back.
        let again = match self.st.rows.get(&(ti, u)) {
            None => false,
            Some(rt) if rt.inserted => true,
            Some(_) => return Err(dup()),
        };
        // A row in the table is found by the insert itself (below), unless
        // the row is bad: then the duplicate is still the error reported.
        let mut bad = Ok(());
        if row.columns.len() != ts.columns.len() {
            bad = Err(Error::syntax("row does not have the table's columns"));
        } else if !self.st.atoms_checked {
            bad = ts
                .columns
                .iter()
                .zip(&row.columns)
                .filter(|(c, _)| !c.is_implicit())
                .try_for_each(|(c, d)| {
                    d.check_atoms(&c.ty)
                        .map_err(|e| e.context(format!("column {}", c.name)))
                });
        }
        if let Err(e) = bad {
            return Err(if self.db.tables[ti].rows.contains_key(&u) {
                dup()
            } else {
                e
            });
        }
        if !self.put_new_row(ti, row) {
            return Err(duplicate(&self.db.schema.tables[ti], u));
        }
        if again {
            self.st.explicitly_deleted.remove(&(ti, u));
            self.st.deleted_queue.retain(|&r| r != (ti, u));
        }
        Ok(())
    }

    /// The rest of an insert: the row in place, the new row's references
    /// counted (its empty columns skipped), the transaction told. False,
    /// and nothing changed, when the table has a row with its UUID (the
    /// insert is the search for one).
    #[must_use]
    fn put_new_row(&mut self, ti: usize, row: RowRef) -> bool {
        let u = row.uuid;
        let table = self.db.table_mut(ti);
        if let Some(there) = table.rows.insert(u, row.clone()) {
            table.rows.insert(u, there);
            return false;
        }
        let refs = if self.st.refs_pending {
            0
        } else {
            self.db.meta[ti].ref_cols.len()
        };
        for k in 0..refs {
            let ci = self.db.meta[ti].ref_cols[k].col;
            if !row.columns[ci].is_empty() {
                self.db
                    .adjust_datum_refs(&mut self.st, (ti, u), ci, &row.columns[ci], 1);
            }
        }
        drop(row);
        let rt = self.touch(ti, u);
        rt.inserted = true;
        rt.gone = false;
        if !self.db.schema.tables[ti].is_root {
            self.st.gc_candidates.push((ti, u));
        }
        true
    }

    fn check_column(&self, ti: usize, ci: usize) -> Result<()> {
        match self.db.schema.tables.get(ti) {
            Some(ts) if ci < ts.columns.len() => Ok(()),
            _ => Err(Error::syntax(format!("no column #{} in table #{}", ci, ti))),
        }
    }

    fn check_row(&self, ti: usize, u: Uuid) -> Result<()> {
        if self
            .db
            .tables
            .get(ti)
            .is_some_and(|t| t.rows.contains_key(&u))
        {
            Ok(())
        } else {
            Err(Error::new(
                "not found",
                format!(
                    "no row {} in table {}",
                    u,
                    self.db
                        .schema
                        .tables
                        .get(ti)
                        .map_or("?", |t| t.name.as_str())
                ),
            ))
        }
    }

    /// Replaces a column given its index.
    pub fn set_at(&mut self, ti: usize, u: Uuid, ci: usize, value: Datum) -> Result<()> {
        self.write_at(ti, u, ci, value, false).map(drop)
    }

    /// [`Txn::set_at`], then the row as it now is, shared (the server
    /// model's commit writes a row's `_version` and keeps the row).
    pub fn set_at_shared(&mut self, ti: usize, u: Uuid, ci: usize, value: Datum) -> Result<RowRef> {
        let row = self.write_at(ti, u, ci, value, true)?;
        Ok(row.expect("a row just written"))
    }

    /// [`Txn::set_at`], and the row written when `want` it. A column
    /// without references is written where the row is found (one search
    /// of the table).
    fn write_at(
        &mut self,
        ti: usize,
        u: Uuid,
        ci: usize,
        value: Datum,
        want: bool,
    ) -> Result<Option<RowRef>> {
        let column = self.check_column(ti, ci);
        let has_refs = column.is_ok() && self.db.has_refs(ti, ci) && !self.st.refs_pending;
        if has_refs || column.is_err() || ti >= self.db.tables.len() {
            self.set_at_counted(ti, u, ci, value)?;
            let now = || self.db.tables[ti].rows.get(&u).cloned();
            return Ok(if want { now() } else { None });
        }
        let db = &mut *self.db;
        let table = Arc::make_mut(&mut db.tables[ti]);
        let Some(r) = table.rows.get_mut(&u) else {
            return Err(self.check_row(ti, u).expect_err("a missing row"));
        };
        if !self.st.atoms_checked {
            value.check_atoms(&db.schema.tables[ti].columns[ci].ty)?;
        }
        // As `Table::row_mut`.
        if Arc::strong_count(r) > 1 {
            table.detached += r.approx_bytes() as u64;
        }
        let old = std::mem::replace(&mut Arc::make_mut(r).columns[ci], value);
        let row = want.then(|| r.clone());
        self.track_set(ti, u, ci, old);
        Ok(row)
    }

    /// [`Txn::set_at`] the long way: each check, then the column's
    /// references counted (a row without them too).
    fn set_at_counted(&mut self, ti: usize, u: Uuid, ci: usize, value: Datum) -> Result<()> {
        self.check_row(ti, u)?;
        self.check_column(ti, ci)?;
        if !self.st.atoms_checked {
            value.check_atoms(&self.db.schema.tables[ti].columns[ci].ty)?;
        }
        let has_refs = self.db.has_refs(ti, ci) && !self.st.refs_pending;
        let Some(row) = self.db.table_mut(ti).row_mut(&u) else {
            return Ok(());
        };
        let old = if has_refs {
            // The column stays empty while the counts are adjusted (no
            // copy), and only the counts of elements that actually changed
            // are touched.
            let old = std::mem::take(&mut row.columns[ci]);
            self.db
                .adjust_refs_delta(&mut self.st, (ti, u), ci, &old, &value);
            if let Some(r) = self.db.table_mut(ti).row_mut(&u) {
                r.columns[ci] = value;
            }
            old
        } else {
            std::mem::replace(&mut row.columns[ci], value)
        };
        self.track_set(ti, u, ci, old);
        Ok(())
    }

    /// The tracking of a column written: its value before the transaction
    /// kept, unless the transaction inserted the row.
    fn track_set(&mut self, ti: usize, u: Uuid, ci: usize, old: Datum) {
        if self.st.replaying_undo {
            return;
        }
        let rt = self.touch(ti, u);
        if rt.inserted {
            return;
        }
        use std::collections::btree_map::Entry;
        match rt.cols.entry(ci) {
            Entry::Vacant(e) => {
                e.insert(ColTrack::Old(old));
            }
            Entry::Occupied(mut e) => {
                if let ColTrack::Keys(keys) = e.get() {
                    // Rebuild the original from `old` plus the touched keys.
                    let orig = restore_keys(old, keys);
                    e.insert(ColTrack::Old(orig));
                }
            }
        }
    }

    /// Applies a diff to a column given its index: O(d log n).
    pub fn apply_diff_at(&mut self, ti: usize, u: Uuid, ci: usize, diff: &Datum) -> Result<()> {
        self.check_row(ti, u)?;
        self.check_column(ti, ci)?;
        let ty = self.db.schema.tables[ti].columns[ci].ty.clone();
        diff.check_atoms(&ty)?;
        if !ty.is_composite() {
            diff.check_size(&ty)
                .map_err(|_| Error::constraint("Datum crated by diff has size error"))?;
            return self.set_at(ti, u, ci, diff.clone());
        }
        // Size check first (no mutation on error).
        if let Some(row) = self.db.tables[ti].rows.get(&u) {
            let mut probe_n = row.columns[ci].len() as i64;
            match (&row.columns[ci], diff) {
                (Datum::Set(cur), Datum::Set(d)) => {
                    for k in d {
                        probe_n += if cur.contains(k) { -1 } else { 1 };
                    }
                }
                (Datum::Map(cur), Datum::Map(d)) => {
                    for (k, v) in d {
                        match cur.get(k) {
                            None => probe_n += 1,
                            Some(o) if o != v => {}
                            Some(_) => probe_n -= 1,
                        }
                    }
                }
                _ => return Err(Error::syntax("diff shape does not match column value")),
            }
            if probe_n < i64::from(ty.min) || probe_n > i64::from(ty.max) {
                return Err(Error::constraint("Datum crated by diff has size error"));
            }
        }
        let has_refs = self.db.has_refs(ti, ci) && !self.st.refs_pending;
        let tracking = !self.st.replaying_undo;
        if tracking {
            let rt = self.touch(ti, u);
            if !rt.inserted && !rt.cols.contains_key(&ci) {
                rt.cols.insert(ci, ColTrack::Keys(BTreeMap::new()));
            }
        }
        match diff {
            Datum::Set(d) => {
                for k in d {
                    let present = self.db.tables[ti]
                        .rows
                        .get(&u)
                        .is_some_and(|r| r.columns[ci].contains_key(k));
                    self.record_key(ti, u, ci, k, if present { Some(k.clone()) } else { None });
                    if let Some(Datum::Set(cur)) = self
                        .db
                        .table_mut(ti)
                        .row_mut(&u)
                        .map(|r| &mut r.columns[ci])
                    {
                        if present {
                            cur.remove(k);
                        } else {
                            cur.insert(k.clone());
                        }
                    }
                    if has_refs {
                        self.db.adjust_pair_refs(
                            &mut self.st,
                            (ti, u),
                            ci,
                            k,
                            None,
                            if present { -1 } else { 1 },
                        );
                    }
                }
            }
            Datum::Map(d) => {
                for (k, v) in d {
                    let old_v = self.db.tables[ti]
                        .rows
                        .get(&u)
                        .and_then(|r| r.columns[ci].as_map())
                        .and_then(|m| m.get(k).cloned());
                    self.record_key(ti, u, ci, k, old_v.clone());
                    let Some(Datum::Map(cur)) = self
                        .db
                        .table_mut(ti)
                        .row_mut(&u)
                        .map(|r| &mut r.columns[ci])
                    else {
                        continue;
                    };
                    match &old_v {
                        None => {
                            cur.insert(k.clone(), v.clone());
                            if has_refs {
                                self.db
                                    .adjust_pair_refs(&mut self.st, (ti, u), ci, k, Some(v), 1);
                            }
                        }
                        Some(o) if o != v => {
                            cur.insert(k.clone(), v.clone());
                            if has_refs {
                                // key ref unchanged; value ref replaced
                                if let Some(vt) = self.db.meta[ti].ref_of_col[ci]
                                    .and_then(|i| self.db.meta[ti].ref_cols[i].value)
                                {
                                    self.db.adjust_ref(&mut self.st, (ti, u), vt, o, ci, -1);
                                    self.db.adjust_ref(&mut self.st, (ti, u), vt, v, ci, 1);
                                }
                            }
                        }
                        Some(o) => {
                            cur.remove(k);
                            if has_refs {
                                let o = o.clone();
                                self.db.adjust_pair_refs(
                                    &mut self.st,
                                    (ti, u),
                                    ci,
                                    k,
                                    Some(&o),
                                    -1,
                                );
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn record_key(&mut self, ti: usize, u: Uuid, ci: usize, k: &Atom, orig: Option<Atom>) {
        if self.st.replaying_undo {
            return;
        }
        if let Some(rt) = self.st.rows.get_mut(&(ti, u)) {
            if let Some(ColTrack::Keys(keys)) = rt.cols.get_mut(&ci) {
                keys.entry(k.clone()).or_insert(orig);
            }
        }
    }

    /// Deletes a row given its table index.
    pub fn delete_at(&mut self, ti: usize, u: Uuid) -> Result<()> {
        self.check_row(ti, u)?;
        self.st.explicitly_deleted.insert((ti, u));
        self.remove_row(ti, u);
        Ok(())
    }

    fn remove_row(&mut self, ti: usize, u: Uuid) {
        // Shared with the checkpoints a replay keeps: the row is not copied.
        let Some(mut row) = self.unplace_row(ti, u) else {
            return;
        };
        if self.st.replaying_undo {
            return;
        }
        self.st.deleted_queue.push((ti, u));
        let rt = self.touch(ti, u);
        if rt.inserted {
            rt.cols.clear();
            rt.gone = true;
            return;
        }
        rt.deleted = true;
        if rt.original.is_some() {
            rt.cols.clear();
            return;
        }
        // Restore the pre-transaction value of touched columns.
        for (ci, track) in std::mem::take(&mut rt.cols) {
            let r = Arc::make_mut(&mut row);
            let cur = std::mem::take(&mut r.columns[ci]);
            r.columns[ci] = match track {
                ColTrack::Old(o) => o,
                ColTrack::Keys(keys) => restore_keys(cur, &keys),
            };
        }
        rt.original = Some(row);
    }

    /// A row out of its table, its references no longer counted (unless
    /// they are pending); not tracked.
    fn unplace_row(&mut self, ti: usize, u: Uuid) -> Option<RowRef> {
        let row = self.db.table_mut(ti).remove_row(&u)?;
        let refs = if self.st.refs_pending {
            0
        } else {
            self.db.meta[ti].ref_cols.len()
        };
        for k in 0..refs {
            let ci = self.db.meta[ti].ref_cols[k].col;
            if !row.columns[ci].is_empty() {
                self.db
                    .adjust_datum_refs(&mut self.st, (ti, u), ci, &row.columns[ci], -1);
            }
        }
        Some(row)
    }

    /// Commits: GC, weak-reference cleanup, integrity and size checks. On
    /// error everything is rolled back.
    pub fn commit(mut self) -> Result<TxnChanges> {
        if let Err(e) = self.finish() {
            self.rollback();
            self.done = true;
            return Err(e);
        }
        self.done = true;
        self.db.implicit += self.st.implicit;
        self.keep_keys();
        if self.st.skip_changes {
            return Ok(TxnChanges::default());
        }
        Ok(self.build_changes())
    }

    /// The commit's work and checks (garbage collection, weak references,
    /// integrity), leaving the outcome in the database.
    fn finish(&mut self) -> Result<()> {
        if self.st.refs_pending {
            self.count_pending_refs();
        }
        // Tables and rows the operations touched (GC appends after them).
        let (n_ops_tables, n_ops_rows) = (self.st.table_order.len(), self.st.order.len());
        if self.st.server_checks {
            // ovsdb-server counts references before it collects garbage.
            self.server_strong_ref_check()?;
        }
        // GC and weak-reference cleanup to a fixpoint.
        loop {
            let mut progressed = false;
            while let Some((tt, tu)) = self.st.gc_candidates.pop() {
                progressed = true;
                if self.db.schema.tables[tt].is_root {
                    continue;
                }
                if self.db.tables[tt].rows.contains_key(&tu)
                    && self.db.tables[tt].strong_refs(&tu) == 0
                {
                    self.remove_row(tt, tu);
                    self.st.implicit += 1;
                }
            }
            if !self.st.deleted_queue.is_empty() {
                progressed = true;
                let deleted: BTreeSet<(usize, Uuid)> = std::mem::take(&mut self.st.deleted_queue)
                    .into_iter()
                    .collect();
                self.assess_weak_refs(&deleted, n_ops_tables, n_ops_rows)?;
            }
            let added = std::mem::take(&mut self.st.weak_added);
            for (si, su, _col, tt, tu) in added {
                progressed = true;
                if self.db.tables[si].rows.contains_key(&su)
                    && !self.db.tables[tt].rows.contains_key(&tu)
                {
                    self.drop_weak_refs(si, su, tt, tu, false)?;
                }
            }
            if !progressed {
                break;
            }
        }
        // Strong references must point at existing rows.
        let mut to_check: Vec<(usize, Uuid)> = self.st.strong_touched.iter().copied().collect();
        to_check.extend(self.st.explicitly_deleted.iter().copied());
        for &(tt, tu) in &to_check {
            let n = self.db.tables[tt].strong_refs(&tu);
            if n > 0 && !self.db.tables[tt].rows.contains_key(&tu) {
                let tname = &self.db.schema.tables[tt].name;
                return Err(if self.st.explicitly_deleted.contains(&(tt, tu)) {
                    Error::referential(format!(
                        "cannot delete {} row {} because of {} remaining reference(s)",
                        tname, tu, n
                    ))
                } else {
                    Error::referential(format!(
                        "reference to nonexistent row {} in table {}",
                        tu, tname
                    ))
                });
            }
        }
        // Sizes of changed columns (the server model checks each value as
        // it parses or mutates it, and weak removals as they happen);
        // maxRows.
        let sized = if self.st.server_checks {
            None
        } else {
            Some(&self.st.rows)
        };
        for (&(ti, u), rt) in sized.into_iter().flatten() {
            let ts = &self.db.schema.tables[ti];
            let Some(row) = self.db.tables[ti].rows.get(&u) else {
                continue;
            };
            // The bounds compared here, the error built only for a value
            // out of them (most columns of most rows are checked).
            let check = |ci: usize| -> Result<()> {
                let (d, ty) = (&row.columns[ci], &ts.columns[ci].ty);
                let n = d.len();
                if n >= ty.min as usize && n <= ty.max as usize {
                    return Ok(());
                }
                d.check_size(ty).map_err(|e| {
                    e.context(format!("{}.{} row {}", ts.name, ts.columns[ci].name, u))
                })
            };
            if rt.inserted {
                for ci in 0..row.columns.len() {
                    if !ts.columns[ci].is_implicit() {
                        check(ci)?;
                    }
                }
            } else {
                for &ci in rt.cols.keys() {
                    check(ci)?;
                }
            }
        }
        for &ti in &self.st.table_order {
            let ts = &self.db.schema.tables[ti];
            if let Some(m) = ts.max_rows {
                if self.db.tables[ti].rows.len() > m as usize {
                    return Err(Error::constraint(format!(
                        "transaction causes \"{}\" table to contain {} rows, greater than the schema-defined limit of {} row(s)",
                        ts.name,
                        self.db.tables[ti].rows.len(),
                        m
                    )));
                }
            }
        }
        if !self.st.skip_index_check {
            self.check_indexes()?;
        }
        Ok(())
    }

    /// The change list from the tracking, which it leaves in place (a
    /// rollback after [`Txn::precommit`] still needs it).
    fn build_changes(&self) -> TxnChanges {
        // Tables in the order their first change comes, put in the order
        // they joined the transaction at the end if that differs (no map
        // of tables to build and free for the one a commit mostly has).
        let mut out = TxnChanges::default();
        for (ti, u) in &self.st.order {
            let Some(rt) = self.st.rows.get(&(*ti, *u)) else {
                continue;
            };
            let ts = &self.db.schema.tables[*ti];
            let (kind, old, new) = if rt.inserted {
                let Some(row) = self.db.tables[*ti].rows.get(u) else {
                    continue;
                };
                (ChangeKind::Insert, None, Some(row.clone()))
            } else if rt.deleted {
                (ChangeKind::Delete, rt.original.clone(), None)
            } else {
                let Some(row) = self.db.tables[*ti].rows.get(u) else {
                    continue;
                };
                let mut cols = Vec::new();
                // Schema column order.
                for (&ci, track) in &rt.cols {
                    let ty = &ts.columns[ci].ty;
                    let cur = &row.columns[ci];
                    let track_old = self.st.track_old;
                    let (diff, old) = match track {
                        ColTrack::Old(o) => {
                            if o == cur {
                                continue;
                            }
                            (Datum::diff(o, cur, ty), track_old.then(|| o.clone()))
                        }
                        ColTrack::Keys(keys) => {
                            let d = net_diff(cur, keys);
                            if d.is_empty() {
                                continue;
                            }
                            (d, track_old.then(|| restore_keys(cur.clone(), keys)))
                        }
                    };
                    cols.push(ColumnChange {
                        column: ci,
                        diff,
                        old,
                    });
                }
                if cols.is_empty() {
                    continue;
                }
                (
                    ChangeKind::Modify { columns: cols },
                    None,
                    Some(row.clone()),
                )
            };
            let change = RowChange {
                uuid: *u,
                kind,
                old,
                new,
            };
            match out.tables.iter_mut().rev().find(|tc| tc.table == *ti) {
                Some(tc) => tc.rows.push(change),
                None => {
                    // (A Vec's first capacity, as `TxnChanges::push`.)
                    let mut rows = Vec::with_capacity(4);
                    rows.push(change);
                    out.tables.push(TableChanges { table: *ti, rows });
                }
            }
        }
        if out.tables.len() > 1 {
            let order = &self.st.table_order;
            let at = |tc: &TableChanges| order.iter().position(|&t| t == tc.table);
            if !out.tables.windows(2).all(|w| at(&w[0]) < at(&w[1])) {
                out.tables.sort_unstable_by_key(at);
            }
        }
        out
    }

    /// Undoes everything this transaction did.
    fn rollback(&mut self) {
        self.rollback_into(None);
    }

    /// [`Txn::rollback`], the rows it inserted that are still there handed
    /// to `taken` (if given) as they leave their tables.
    fn rollback_into(&mut self, mut taken: Option<&mut dyn FnMut(usize, Uuid, RowRef)>) {
        self.st.replaying_undo = true;
        let order = std::mem::take(&mut self.st.order);
        let mut rows = std::mem::take(&mut self.st.rows);
        for (ti, u) in order.into_iter().rev() {
            let Some(rt) = rows.remove(&(ti, u)) else {
                continue;
            };
            if rt.inserted {
                let row = self.unplace_row(ti, u);
                if let (Some(taken), Some(row)) = (taken.as_mut(), row) {
                    taken(ti, u, row);
                }
                continue;
            }
            if rt.deleted {
                let Some(orig) = rt.original else {
                    continue;
                };
                for ci in 0..orig.columns.len() {
                    if self.db.has_refs(ti, ci) && !self.st.refs_pending {
                        self.db
                            .adjust_datum_refs(&mut self.st, (ti, u), ci, &orig.columns[ci], 1);
                    }
                }
                self.db.table_mut(ti).rows.insert(u, orig);
                continue;
            }
            if let Some(orig) = rt.original {
                // Modified in place ([`Txn::modify_at`]): the version
                // before comes back whole, its counts with it.
                if !self.st.refs_pending {
                    if let Some(cur) = self.db.tables[ti].rows.get(&u).cloned() {
                        for &ci in rt.cols.keys() {
                            if self.db.has_refs(ti, ci) {
                                let (o, n) = (&cur.columns[ci], &orig.columns[ci]);
                                self.db.adjust_refs_delta(&mut self.st, (ti, u), ci, o, n);
                            }
                        }
                    }
                }
                self.db.table_mut(ti).rows.insert(u, orig);
                continue;
            }
            for (ci, track) in rt.cols {
                let cur = match self.db.tables[ti].rows.get(&u) {
                    Some(r) => r.columns[ci].clone(),
                    None => continue,
                };
                let orig = match track {
                    ColTrack::Old(o) => o,
                    ColTrack::Keys(keys) => restore_keys(cur, &keys),
                };
                let _ = self.set_at(ti, u, ci, orig);
            }
        }
        self.st = TxnState::default();
    }
}

impl Drop for Txn<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.rollback();
        }
    }
}

/// The error of an insert whose UUID table `ts` has.
fn duplicate(ts: &TableSchema, u: Uuid) -> Error {
    Error::new(
        "duplicate uuid",
        format!("row {} already exists in table {}", u, ts.name),
    )
}

/// The value before the transaction, from the current value and the
/// original state of the touched keys.
fn restore_keys(mut cur: Datum, keys: &BTreeMap<Atom, Option<Atom>>) -> Datum {
    match &mut cur {
        Datum::Set(s) => {
            for (k, orig) in keys {
                if orig.is_some() {
                    s.insert(k.clone());
                } else {
                    s.remove(k);
                }
            }
        }
        Datum::Map(m) => {
            for (k, orig) in keys {
                match orig {
                    Some(v) => {
                        m.insert(k.clone(), v.clone());
                    }
                    None => {
                        m.remove(k);
                    }
                }
            }
        }
    }
    cur
}

/// The diff from the original state of the touched keys to `cur` (§4.2).
fn net_diff(cur: &Datum, keys: &BTreeMap<Atom, Option<Atom>>) -> Datum {
    match cur {
        Datum::Set(s) => Datum::Set(
            keys.iter()
                .filter(|(k, orig)| orig.is_some() != s.contains(k))
                .map(|(k, _)| k.clone())
                .collect(),
        ),
        Datum::Map(m) => {
            let mut d = AtomMap::new();
            for (k, orig) in keys {
                match (orig, m.get(k)) {
                    (None, Some(v)) => {
                        d.insert(k.clone(), v.clone());
                    }
                    (Some(o), None) => {
                        d.insert(k.clone(), o.clone());
                    }
                    (Some(o), Some(v)) if o != v => {
                        d.insert(k.clone(), v.clone());
                    }
                    _ => {}
                }
            }
            Datum::Map(d)
        }
    }
}

/// Whether a column type is written as a diff in [`StorageMode::Diff`].
pub fn is_diffable(ty: &Type) -> bool {
    ty.is_composite()
}
