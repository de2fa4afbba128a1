//! Details of one entry for the inspector: what it changed, table by table,
//! row by row, column by column, with the bytes each value takes.

use ovsdb::json::Json;
use ovsdb_log::record::{Record, TxnRecord};
use ovsdb_log::{Format, Framer, RecordBody};

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnChange {
    pub column: String,
    /// The value as written in the file (a full value, or a diff when the
    /// record is in diff mode), as compact JSON text.
    pub stored: String,
    /// Bytes of `"column":value` as stored.
    pub stored_bytes: u64,
    /// The same column written with full values / as a diff, with its
    /// bytes; `None` when the state before the entry could not be replayed.
    pub full: Option<String>,
    pub full_bytes: Option<u64>,
    pub diff: Option<String>,
    pub diff_bytes: Option<u64>,
}

#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct RowChange {
    pub uuid: String,
    /// `"insert/modify"` (row object) or `"delete"` (null).
    pub op: String,
    pub columns: Vec<ColumnChange>,
}

#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct TableChange {
    pub table: String,
    pub rows: Vec<RowChange>,
}

/// What the inspector shows for one record.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EntryDetail {
    pub record: u64,
    pub offset: u64,
    /// `entry`, `txn`, `term`, ...
    pub kind: String,
    pub term: Option<u64>,
    pub index: Option<u64>,
    pub eid: Option<String>,
    pub comment: Option<String>,
    pub date_ms: Option<i64>,
    /// `_is_diff` is true: modified columns hold diffs, not full values.
    pub diff_mode: bool,
    /// The entry carries a new schema (conversion).
    pub schema_change: bool,
    pub tables: Vec<TableChange>,
    pub record_bytes: u64,
    /// Set when the record could not be read.
    pub error: Option<String>,
}

fn member_bytes(name: &str, value_text: &str) -> u64 {
    (ovsdb::json::string_serialized_len(name) + 1 + value_text.len()) as u64
}

/// Looks up `table/row/column` in a rewritten txn object.
fn column_of<'j>(txn: &'j Json, table: &str, row: &str, column: &str) -> Option<&'j Json> {
    txn.get(table)?.get(row)?.get(column)
}

fn txn_tables(t: &TxnRecord) -> Vec<TableChange> {
    t.tables
        .iter()
        .map(|(table, rows)| TableChange {
            table: table.clone(),
            rows: rows
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(uuid, row)| RowChange {
                            uuid: uuid.to_string(),
                            op: if row.is_null() {
                                "delete".to_string()
                            } else {
                                "insert/modify".to_string()
                            },
                            columns: row
                                .as_object()
                                .map(|cols| {
                                    cols.iter()
                                        .map(|(c, v)| {
                                            let text = v.to_string_compact();
                                            ColumnChange {
                                                column: c.to_string(),
                                                stored_bytes: member_bytes(c, &text),
                                                stored: text,
                                                full: None,
                                                full_bytes: None,
                                                diff: None,
                                                diff_bytes: None,
                                            }
                                        })
                                        .collect()
                                })
                                .unwrap_or_default(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// Decodes record number `record` that starts at byte `offset` of `bytes`
/// (as listed in a lane's entries). Never panics on bad input: problems are
/// reported in `error`.
pub fn inspect_record(
    bytes: &[u8],
    format_clustered: bool,
    record: u64,
    offset: u64,
) -> EntryDetail {
    let mut d = EntryDetail {
        record,
        offset,
        ..EntryDetail::default()
    };
    let Some(tail) = usize::try_from(offset).ok().and_then(|o| bytes.get(o..)) else {
        d.error = Some(format!("offset {offset} is outside the file"));
        return d;
    };
    let mut framer = Framer::new(tail);
    let mut raw = match framer.next() {
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            d.error = Some(e.to_string());
            return d;
        }
        None => {
            d.error = Some("no record there".to_string());
            return d;
        }
    };
    raw.index = record as usize;
    d.record_bytes = raw.total_len();
    let format = if format_clustered {
        Format::Clustered
    } else {
        Format::Standalone
    };
    let rec = match raw.decode(format) {
        Ok(r) => r,
        Err(e) => {
            d.error = Some(e.kind.to_string());
            return d;
        }
    };
    d.kind = rec.kind_name().to_string();
    // The txn object as stored, and how many txns/indexes come before it.
    let mut txn_json: Option<Json> = None;
    let mut before: Option<u64> = None;
    match rec {
        Record::Txn(t) => {
            d.comment = t.comment_str().map(str::to_string);
            d.date_ms = t.date_ms();
            d.diff_mode = t.diff_mode();
            d.tables = txn_tables(&t);
            txn_json = raw.json().ok();
            before = record.checked_sub(1);
        }
        Record::Raft(r) => {
            d.term = r.term();
            if let RecordBody::Entry(e) = &r.body {
                d.index = Some(e.index);
                d.eid = e.eid.map(|x| x.to_string());
                if let Some(arr) = e.data.as_ref().and_then(Json::as_array) {
                    d.schema_change = arr.first().is_some_and(|s| !s.is_null());
                    let tj = arr.get(1).filter(|t| !t.is_null());
                    if let Some(t) = tj.and_then(|t| TxnRecord::from_json(t).ok()) {
                        d.comment = t.comment_str().map(str::to_string);
                        d.date_ms = t.date_ms();
                        d.diff_mode = t.diff_mode();
                        d.tables = txn_tables(&t);
                        if !d.schema_change {
                            txn_json = tj.cloned();
                            before = e.index.checked_sub(1);
                        }
                    }
                }
            }
            if d.comment.is_none() {
                d.comment = r.comment.clone();
            }
        }
        Record::Header(_) | Record::Schema(_) => {}
    }
    if let (Some(txn), Some(before)) = (txn_json, before) {
        add_modes(bytes, &txn, before, &mut d);
    }
    d
}

/// Rewrites the entry for both storage modes against the database as it was
/// just before it (replayed by the core) and records each column's value
/// and bytes in each mode.
fn add_modes(bytes: &[u8], txn: &Json, before: u64, d: &mut EntryDetail) {
    let rep = ovsdb_log::replay(bytes, ovsdb_log::Upto::Index(before));
    let Some(db) = rep.db else { return };
    let full = db.transform_txn(txn, ovsdb_log::Mode::Full).ok();
    let diff = db.transform_txn(txn, ovsdb_log::Mode::Diff).ok();
    for t in d.tables.iter_mut() {
        for r in t.rows.iter_mut() {
            for c in r.columns.iter_mut() {
                if let Some(v) = full
                    .as_ref()
                    .and_then(|j| column_of(j, &t.table, &r.uuid, &c.column))
                {
                    let text = v.to_string_compact();
                    c.full_bytes = Some(member_bytes(&c.column, &text));
                    c.full = Some(text);
                }
                if let Some(v) = diff
                    .as_ref()
                    .and_then(|j| column_of(j, &t.table, &r.uuid, &c.column))
                {
                    let text = v.to_string_compact();
                    c.diff_bytes = Some(member_bytes(&c.column, &text));
                    c.diff = Some(text);
                }
            }
        }
    }
}
