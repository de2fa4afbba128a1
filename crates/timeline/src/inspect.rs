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
                                                stored_bytes: (ovsdb::json::string_serialized_len(
                                                    c,
                                                ) + 1
                                                    + text.len())
                                                    as u64,
                                                stored: text,
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
    match rec {
        Record::Txn(t) => {
            d.comment = t.comment_str().map(str::to_string);
            d.date_ms = t.date_ms();
            d.diff_mode = t.diff_mode();
            d.tables = txn_tables(&t);
        }
        Record::Raft(r) => {
            d.term = r.term();
            if let RecordBody::Entry(e) = &r.body {
                d.index = Some(e.index);
                d.eid = e.eid.map(|x| x.to_string());
                if let Some(arr) = e.data.as_ref().and_then(Json::as_array) {
                    d.schema_change = arr.first().is_some_and(|s| !s.is_null());
                    if let Some(t) = arr
                        .get(1)
                        .filter(|t| !t.is_null())
                        .and_then(|t| TxnRecord::from_json(t).ok())
                    {
                        d.comment = t.comment_str().map(str::to_string);
                        d.date_ms = t.date_ms();
                        d.diff_mode = t.diff_mode();
                        d.tables = txn_tables(&t);
                    }
                }
            }
            if d.comment.is_none() {
                d.comment = r.comment.clone();
            }
        }
        Record::Header(_) | Record::Schema(_) => {}
    }
    d
}
