//! `sizes`: where a file's bytes go.
//!
//! Attribution rule (stored bytes, exact): every entry record's bytes
//! (header line + body; the same records `inspect --json` counts in
//! `entry_bytes.stored`) are split into
//! * for each table member of the txn: `"Table":{...}` plus the comma
//!   before it (when it is not the first member) → that table; inside it,
//!   each `"column":value` plus the comma before it → that column, and
//!   the rest of the table member (its name, braces, row UUID keys,
//!   commas between rows, `null` of deleted rows) → pseudo-column
//!   `(rows)` of the table;
//! * everything else (header line, the Raft envelope `term`/`index`/`eid`,
//!   `_date`, `_comment`, `_is_diff`, braces) → pseudo-table `(record)`.
//!
//! So `--by table` and `--by column` sum to the stored entry bytes.
//! Full-value and diff sizes use the same rule on the record as
//! `ovsdb_log::Db::transform_txn` rewrites it for that storage mode; the
//! `(record)` row takes the difference to `ovsdb_log`'s per-entry size
//! ([`ovsdb_log::EntrySize`]), so those columns sum to `inspect`'s
//! `entry_bytes.full`/`diff`. Records never applied (superseded, or after a
//! replay error) count at their stored size in every mode.

use crate::layout::{walk_txn, TxnLayout};
use crate::load::{EntryInfo, EntryKind, Log};
use ovsdb::{Json, Object};
use std::collections::BTreeMap;

/// Bytes in the three storage views.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bytes {
    pub stored: u64,
    pub full: u64,
    pub diff: u64,
}

impl Bytes {
    fn add(&mut self, o: Bytes) {
        self.stored += o.stored;
        self.full += o.full;
        self.diff += o.diff;
    }
}

/// One of the largest entries.
#[derive(Debug, Clone, PartialEq)]
pub struct BigEntry {
    pub record: usize,
    pub offset: u64,
    pub index: Option<u64>,
    pub stored: u64,
    pub comment: Option<String>,
    /// The table with the most bytes in it.
    pub top_table: Option<String>,
}

/// The compaction what-if.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// Index (clustered) or txn count (standalone) of the snapshot.
    pub at: u64,
    /// Bytes of a record holding `[schema, all rows]` (clustered) or of the
    /// schema record plus one txn record with all rows (standalone).
    pub snapshot_bytes: u64,
    /// Bytes the file holds after its header (clustered) or schema record
    /// (standalone): what compaction would replace.
    pub log_bytes: u64,
    /// The snapshot's bytes by table: `"Table":{...}` of its data; the
    /// rest (schema, record header, envelope, the commas between tables)
    /// is pseudo-table `(record)`, so these sum to `snapshot_bytes`.
    pub by_table: BTreeMap<String, u64>,
    /// (table, column) → bytes of its `"column":value` members; the row
    /// keys, braces and commas of a table are its `(rows)`. Commas go to
    /// the pseudo-columns, not to a member: ovsdb-server writes a
    /// snapshot's members in its own hash order, so a member's share does
    /// not depend on the order.
    pub by_column: BTreeMap<(String, String), u64>,
}

/// The log's bytes by table so far, after some entry: one point of the
/// growth over time.
#[derive(Debug, Clone, PartialEq)]
pub struct GrowthPoint {
    /// The last entry counted: its record number, log index (clustered)
    /// and `_date`.
    pub record: usize,
    pub index: Option<u64>,
    pub date_ms: Option<i64>,
    /// Bytes of every entry up to here, by table (as in `by_table`).
    pub by_table: BTreeMap<String, Bytes>,
}

/// Growth over time is reported at about this many points, evenly spaced
/// by entries (the last entry is always one).
pub const GROWTH_POINTS: usize = 200;

/// The size report of one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SizeReport {
    pub entries: usize,
    pub total: Bytes,
    /// Whether full/diff could be computed (no replay error).
    pub modes: bool,
    pub by_table: BTreeMap<String, Bytes>,
    /// (table, column) → bytes; pseudo-columns `(rows)`, `(record)`.
    pub by_column: BTreeMap<(String, String), Bytes>,
    /// Client (the `_comment` up to its first `:` or space; `(none)`).
    pub by_client: BTreeMap<String, Bytes>,
    pub largest: Vec<BigEntry>,
    pub compaction: Option<Compaction>,
    /// Bytes by table accumulated over the log ([`GROWTH_POINTS`] points).
    pub growth: Vec<GrowthPoint>,
}

pub const RECORD: &str = "(record)";
pub const ROWS: &str = "(rows)";

/// The client of a `_comment`: text before the first `:` (or space).
pub fn client_of(comment: Option<&str>) -> String {
    match comment.map(str::trim) {
        Some(c) if !c.is_empty() => c
            .split([':', ' '])
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or(c)
            .to_string(),
        _ => "(none)".into(),
    }
}

type Split = (BTreeMap<String, u64>, BTreeMap<(String, String), u64>);

fn split(layout: &TxnLayout) -> Split {
    let mut t = BTreeMap::new();
    let mut c = BTreeMap::new();
    for ts in &layout.tables {
        *t.entry(ts.name.clone()).or_insert(0) += ts.bytes;
        let mut cols = 0;
        for r in &ts.rows {
            for col in r.columns.iter().flatten() {
                *c.entry((ts.name.clone(), col.name.clone())).or_insert(0) += col.bytes;
                cols += col.bytes;
            }
        }
        *c.entry((ts.name.clone(), ROWS.to_string())).or_insert(0) += ts.bytes - cols;
    }
    (t, c)
}

fn layout_of_json(j: &Json) -> Option<TxnLayout> {
    let s = j.to_string_compact();
    walk_txn(s.as_bytes(), 0, true).ok()
}

/// Computes the report; `at` picks the compaction snapshot's index
/// (default: the last applied).
pub fn sizes(log: &Log<'_>, at: Option<u64>) -> SizeReport {
    let replay = ovsdb_log::replay(log.bytes, ovsdb_log::Upto::All);
    let mut pass = SizesPass::new(log, &replay);
    for e in &log.entries {
        pass.entry(e, log.body(e));
    }
    let mut rep = pass.finish();
    rep.compaction = compaction(log, at);
    rep
}

/// The report's accumulation, one entry at a time in file order (each
/// with its record's body): over a file in memory ([`sizes`]) or one
/// streaming by (the web worker, after a first walk for the replay's
/// per-entry sizes). Keeps the breakdowns and a replayed database, never
/// the records.
pub struct SizesPass {
    rep: SizeReport,
    per_entry: BTreeMap<usize, ovsdb_log::EntrySize>,
    /// A replay with ovsdb_log's Db to rewrite each record in both modes.
    db: Option<ovsdb_log::Db>,
    replay_ok: bool,
    /// Entries per growth point, the entries counted since the last point,
    /// and the last entry counted (record, index, date).
    every: usize,
    since: usize,
    last: Option<(usize, Option<u64>, Option<i64>)>,
}

impl SizesPass {
    /// `replay`: the replay of the whole file (`Upto::All`), for each
    /// entry's size in the other storage modes.
    pub fn new(log: &Log<'_>, replay: &ovsdb_log::Replay) -> SizesPass {
        let mut rep = SizeReport::default();
        let (_, full, diff) = replay.totals();
        rep.modes = full.is_some() && diff.is_some();
        let counted = log
            .entries
            .iter()
            .filter(|e| e.kind != EntryKind::Snapshot)
            .count();
        SizesPass {
            every: counted.div_ceil(GROWTH_POINTS).max(1),
            since: 0,
            last: None,
            per_entry: ovsdb::order::btree_map(replay.entries.iter().map(|e| (e.record, *e))),
            db: log
                .schema
                .as_ref()
                .map(|s| ovsdb_log::Db::new((**s).clone())),
            replay_ok: rep.modes,
            rep,
        }
    }

    /// Adds entry `e` whose record body is `body`.
    pub fn entry(&mut self, e: &EntryInfo, body: &[u8]) {
        let rep = &mut self.rep;
        let db = &mut self.db;
        let replay_ok = &mut self.replay_ok;
        let parsed = e
            .txn
            .and_then(|(a, b)| body.get(a..b))
            .and_then(|t| ovsdb::json::parse_value(t).ok());
        if e.kind == EntryKind::Snapshot {
            if let (Some(s), Some(t)) = (&e.schema, &parsed) {
                let mut d = ovsdb_log::Db::new((**s).clone());
                *replay_ok &= d.apply_txn(t).is_ok();
                *db = Some(d);
            }
            return;
        }
        let layout = e
            .txn
            .and_then(|(a, _)| walk_txn(body, a, true).ok())
            .unwrap_or_default();
        let (st, sc) = split(&layout);
        let sum_t: u64 = st.values().sum();
        let mut modes: Option<(Split, Split)> = None;
        if *replay_ok && !e.superseded {
            match (&e.schema, &parsed) {
                (Some(s), Some(t)) => {
                    let mut d = ovsdb_log::Db::new((**s).clone());
                    let f = d.transform_txn(t, ovsdb::StorageMode::Full).ok();
                    let df = d.transform_txn(t, ovsdb::StorageMode::Diff).ok();
                    *replay_ok &= d.apply_txn(t).is_ok();
                    *db = Some(d);
                    modes = f.zip(df).and_then(|(f, df)| {
                        Some((split(&layout_of_json(&f)?), split(&layout_of_json(&df)?)))
                    });
                }
                (Some(s), None) => {
                    *db = db.take().and_then(|d| d.convert((**s).clone()).ok());
                    *replay_ok &= db.is_some();
                }
                (None, Some(t)) => match db.as_mut() {
                    Some(d) => {
                        let f = d.transform_txn(t, ovsdb::StorageMode::Full).ok();
                        let df = d.transform_txn(t, ovsdb::StorageMode::Diff).ok();
                        *replay_ok &= d.apply_txn(t).is_ok();
                        modes = f.zip(df).and_then(|(f, df)| {
                            Some((split(&layout_of_json(&f)?), split(&layout_of_json(&df)?)))
                        });
                    }
                    None => *replay_ok = false,
                },
                (None, None) => {}
            }
        }
        let sizes = self.per_entry.get(&e.record);
        let efull = sizes.map_or(e.stored, |s| s.full);
        let ediff = sizes.map_or(e.stored, |s| s.diff);
        let ((ft, fc), (dt, dc)) = match modes {
            Some(m) if sizes.is_some() => m,
            _ => ((st.clone(), sc.clone()), (st.clone(), sc.clone())),
        };
        let sum_ft: u64 = ft.values().sum();
        let sum_dt: u64 = dt.values().sum();
        let rec = Bytes {
            stored: e.stored - sum_t,
            full: efull.saturating_sub(sum_ft),
            diff: ediff.saturating_sub(sum_dt),
        };
        let mut tables: BTreeMap<String, Bytes> = BTreeMap::new();
        for (k, v) in &st {
            tables.entry(k.clone()).or_default().stored += v;
        }
        for (k, v) in &ft {
            tables.entry(k.clone()).or_default().full += v;
        }
        for (k, v) in &dt {
            tables.entry(k.clone()).or_default().diff += v;
        }
        let mut cols: BTreeMap<(String, String), Bytes> = BTreeMap::new();
        for (k, v) in &sc {
            cols.entry(k.clone()).or_default().stored += v;
        }
        for (k, v) in &fc {
            cols.entry(k.clone()).or_default().full += v;
        }
        for (k, v) in &dc {
            cols.entry(k.clone()).or_default().diff += v;
        }
        let top = st.iter().max_by_key(|(_, v)| **v).map(|(k, _)| k.clone());
        for (k, v) in tables {
            rep.by_table.entry(k).or_default().add(v);
        }
        rep.by_table.entry(RECORD.into()).or_default().add(rec);
        self.last = Some((e.record, e.index, e.date_ms));
        self.since += 1;
        if self.since == self.every {
            self.since = 0;
            rep.growth.push(GrowthPoint {
                record: e.record,
                index: e.index,
                date_ms: e.date_ms,
                by_table: rep.by_table.clone(),
            });
        }
        for (k, v) in cols {
            rep.by_column.entry(k).or_default().add(v);
        }
        rep.by_column
            .entry((RECORD.into(), RECORD.into()))
            .or_default()
            .add(rec);
        let all = Bytes {
            stored: e.stored,
            full: rec.full + sum_ft,
            diff: rec.diff + sum_dt,
        };
        rep.by_client
            .entry(client_of(e.comment.as_deref()))
            .or_default()
            .add(all);
        rep.total.add(all);
        rep.entries += 1;
        rep.largest.push(BigEntry {
            record: e.record,
            offset: e.offset,
            index: e.index,
            stored: e.stored,
            comment: e.comment.clone(),
            top_table: top,
        });
        // Only the 20 largest are reported: keep the list short on the way.
        if rep.largest.len() >= 400 {
            sort_largest(&mut rep.largest);
        }
    }

    /// The report (without the compaction what-if: see [`compaction_of`]).
    pub fn finish(self) -> SizeReport {
        let mut rep = self.rep;
        if let (Some((record, index, date_ms)), true) = (self.last, self.since > 0) {
            rep.growth.push(GrowthPoint {
                record,
                index,
                date_ms,
                by_table: rep.by_table.clone(),
            });
        }
        rep.modes &= self.replay_ok;
        sort_largest(&mut rep.largest);
        rep
    }
}

fn sort_largest(v: &mut Vec<BigEntry>) {
    ovsdb::order::sort_by(v, |a, b| {
        b.stored.cmp(&a.stored).then(a.record.cmp(&b.record))
    });
    v.truncate(20);
}

fn compaction(log: &Log<'_>, at: Option<u64>) -> Option<Compaction> {
    log.format?;
    let upto = at.map_or(ovsdb_log::Upto::All, ovsdb_log::Upto::Index);
    let (db, _) = ovsdb_log::replay_database(log.bytes, upto);
    compaction_of(log, &db?, at, log.bytes.len() as u64)
}

/// The compaction what-if for database `db` (the file replayed to `at`,
/// None: to its end) of a loaded file `file_len` bytes long.
pub fn compaction_of(
    log: &Log<'_>,
    db: &ovsdb::Database,
    at: Option<u64>,
    file_len: u64,
) -> Option<Compaction> {
    let format = log.format?;
    let schema = db.schema().to_json();
    let data = Json::Object(db.snapshot_json());
    let at = match (at, format) {
        (Some(i), _) => i,
        (None, ovsdb_log::Format::Clustered) => log
            .entries
            .iter()
            .filter(|e| !e.superseded)
            .filter_map(|e| e.index)
            .max()
            .unwrap_or(0),
        (None, ovsdb_log::Format::Standalone) => log.entries.len() as u64,
    };
    // A record's body is its JSON and a line feed.
    let rs = |n: usize| ovsdb_log::sizes::record_size(format, n as u64 + 1);
    // The data as ovsdb-server/compact writes it: the rows, a `_date`, its
    // `_comment`, and `"_is_diff":true` when the server writes diffs.
    let data_len = data.serialized_len()
        + usize::from(data.as_object().is_some_and(|o| !o.is_empty()))
        + ONLINE_STAMP_LEN
        + if log.diffs {
            ",\"_is_diff\":true".len()
        } else {
            0
        };
    let snapshot_bytes = match format {
        ovsdb_log::Format::Standalone => rs(schema.serialized_len()) + rs(data_len),
        ovsdb_log::Format::Clustered => {
            rs(snapshot_header_len(log, at) + 1 + schema.serialized_len() + 1 + data_len + 1)
        }
    };
    let (by_table, by_column) = snapshot_split(&data, snapshot_bytes);
    let first_len = log.first_record;
    let log_bytes = log
        .error
        .as_ref()
        .map_or(file_len, |e| e.offset)
        .saturating_sub(first_len);
    Some(Compaction {
        at,
        snapshot_bytes,
        log_bytes,
        by_table,
        by_column,
    })
}

/// `"_date":1795986968083,"_comment":"compacting database online"`: what
/// ovsdb-server's online compaction adds to the rows (a 13-digit date).
const ONLINE_STAMP: &str = "compacting database online";
const ONLINE_STAMP_LEN: usize = 8 + 13 + 1 + 11 + ONLINE_STAMP.len() + 2;

/// Bytes of the JSON of the snapshot header ovsdb-server would write at
/// index `at`, without its `prev_data` value (which the caller adds): the
/// file's own header with the term, entry ID, configuration and election
/// timer in effect at `at`. A file without a header gives the bytes of
/// `{"prev_data":}`.
fn snapshot_header_len(log: &Log<'_>, at: u64) -> usize {
    let Some(h) = &log.raft.header else {
        return ovsdb::json::string_serialized_len("prev_data") + 3;
    };
    let mut h = h.clone();
    let snap = h.snapshot.take();
    let mut term = snap.as_ref().map_or(0, |s| s.term);
    let mut eid = snap.as_ref().map(|s| s.eid);
    let mut timer = snap.as_ref().and_then(|s| s.election_timer);
    for e in log.entries.iter().filter(|e| !e.superseded) {
        match e.index {
            Some(i) if i <= at => {
                term = term.max(e.term.unwrap_or(0));
                eid = e.eid.or(eid);
            }
            _ => {}
        }
    }
    for (i, t, servers, et) in &log.raft.changes {
        if *i <= at {
            term = term.max(*t);
            if let Some(s) = servers {
                h.prev_servers = Some(s.clone());
            }
            timer = et.or(timer);
        }
    }
    h.remote_addresses = None;
    h.snapshot = Some(ovsdb_log::Snapshot {
        index: at,
        term,
        data: Json::Null,
        eid: eid.unwrap_or_default(),
        // A running server always has a timer (1000 ms unless changed).
        election_timer: Some(timer.unwrap_or(1000)),
    });
    h.to_json().serialized_len() - "null".len()
}

/// A snapshot's bytes by table and column (see [`Compaction::by_table`]):
/// `data` is its `{table: {uuid: row}}` object, `total` the whole record's
/// (or records') bytes.
fn snapshot_split(data: &Json, total: u64) -> Split {
    let mut tables = BTreeMap::new();
    let mut columns = BTreeMap::new();
    let member = |name: &str, value: &Json| {
        (ovsdb::json::string_serialized_len(name) + 1 + value.serialized_len()) as u64
    };
    let mut in_tables = 0;
    for (t, rows) in data.as_object().into_iter().flat_map(|o| o.iter()) {
        let tb = member(t, rows);
        in_tables += tb;
        tables.insert(t.to_string(), tb);
        let mut in_columns = 0;
        for (_, row) in rows.as_object().into_iter().flat_map(|o| o.iter()) {
            for (c, v) in row.as_object().into_iter().flat_map(|o| o.iter()) {
                let cb = member(c, v);
                in_columns += cb;
                *columns.entry((t.to_string(), c.to_string())).or_insert(0) += cb;
            }
        }
        columns.insert((t.to_string(), ROWS.to_string()), tb - in_columns);
    }
    let rest = total.saturating_sub(in_tables);
    tables.insert(RECORD.to_string(), rest);
    columns.insert((RECORD.to_string(), RECORD.to_string()), rest);
    (tables, columns)
}

/// `Table.column` (or `(record)`), the key of a column's bytes in JSON.
pub fn column_key(table: &str, column: &str) -> String {
    if table == RECORD {
        RECORD.to_string()
    } else {
        format!("{table}.{column}")
    }
}

fn bytes_json(b: &Bytes, modes: bool) -> Json {
    let mut o = Object::new();
    o.push_unchecked("stored", Json::Integer(b.stored as i64));
    let m = |v: u64| {
        if modes {
            Json::Integer(v as i64)
        } else {
            Json::Null
        }
    };
    o.push_unchecked("full", m(b.full));
    o.push_unchecked("diff", m(b.diff));
    Json::Object(o)
}

/// The JSON report (`by` limits the breakdowns to one of `table`,
/// `column`, `client`; None gives all).
pub fn sizes_json(r: &SizeReport, by: Option<&str>) -> Json {
    let mut o = Object::new();
    o.push_unchecked("entries", Json::Integer(r.entries as i64));
    o.push_unchecked("total", bytes_json(&r.total, r.modes));
    let want = |k: &str| by.is_none_or(|b| b == k);
    if want("table") {
        let mut t = Object::new();
        for (k, v) in &r.by_table {
            t.push_unchecked(k.clone(), bytes_json(v, r.modes));
        }
        o.push_unchecked("by_table", Json::Object(t));
    }
    if want("column") {
        let mut t = Object::new();
        for ((tb, c), v) in &r.by_column {
            t.push_unchecked(column_key(tb, c), bytes_json(v, r.modes));
        }
        o.push_unchecked("by_column", Json::Object(t));
    }
    if want("client") {
        let mut t = Object::new();
        for (k, v) in &r.by_client {
            t.push_unchecked(k.clone(), bytes_json(v, r.modes));
        }
        o.push_unchecked("by_client", Json::Object(t));
    }
    if want("growth") {
        // Each point: [record, index, date_ms, {table: [stored, full, diff]}].
        let points = r
            .growth
            .iter()
            .map(|p| {
                let mut t = Object::new();
                for (k, v) in &p.by_table {
                    let m = |x: u64| {
                        if r.modes {
                            Json::Integer(x as i64)
                        } else {
                            Json::Null
                        }
                    };
                    t.push_unchecked(
                        k.clone(),
                        Json::Array(vec![Json::Integer(v.stored as i64), m(v.full), m(v.diff)]),
                    );
                }
                let opt = |x: Option<i64>| x.map_or(Json::Null, Json::Integer);
                Json::Array(vec![
                    Json::Integer(p.record as i64),
                    opt(p.index.map(|i| i as i64)),
                    opt(p.date_ms),
                    Json::Object(t),
                ])
            })
            .collect();
        o.push_unchecked("growth", Json::Array(points));
    }
    let largest = r
        .largest
        .iter()
        .map(|b| {
            let mut e = Object::new();
            e.push_unchecked("record", Json::Integer(b.record as i64));
            e.push_unchecked("offset", Json::Integer(b.offset as i64));
            e.push_unchecked(
                "index",
                b.index.map_or(Json::Null, |i| Json::Integer(i as i64)),
            );
            e.push_unchecked("stored", Json::Integer(b.stored as i64));
            e.push_unchecked(
                "comment",
                b.comment.clone().map_or(Json::Null, Json::String),
            );
            e.push_unchecked(
                "top_table",
                b.top_table.clone().map_or(Json::Null, Json::String),
            );
            Json::Object(e)
        })
        .collect();
    o.push_unchecked("largest", Json::Array(largest));
    o.push_unchecked(
        "compaction",
        r.compaction.as_ref().map_or(Json::Null, |c| {
            let mut e = Object::new();
            e.push_unchecked("at", Json::Integer(c.at as i64));
            e.push_unchecked("snapshot_bytes", Json::Integer(c.snapshot_bytes as i64));
            e.push_unchecked("log_bytes", Json::Integer(c.log_bytes as i64));
            let mut t = Object::new();
            for (k, v) in &c.by_table {
                t.push_unchecked(k.clone(), Json::Integer(*v as i64));
            }
            e.push_unchecked("by_table", Json::Object(t));
            let mut t = Object::new();
            for ((tb, col), v) in &c.by_column {
                t.push_unchecked(column_key(tb, col), Json::Integer(*v as i64));
            }
            e.push_unchecked("by_column", Json::Object(t));
            Json::Object(e)
        }),
    );
    Json::Object(o)
}
