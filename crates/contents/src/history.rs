//! `history UUID`: every entry whose record inserts, modifies or deletes
//! a row, with the column changes, from the [`HistoryIndex`] of the load
//! pass. Only the row's own entries are read again; the row's value is
//! rebuilt from them (insert values, then each modification: full values
//! replace, `_is_diff` diffs apply), so old and new values need no
//! replay of the whole log.

use crate::layout::walk_txn;
use crate::load::{EntryInfo, Log};
use ovsdb::strings::datum_to_string;
use ovsdb::{Datum, Json, Row, Uuid};

/// What an entry did to the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Insert,
    Modify,
    Delete,
    /// The row as a snapshot or schema conversion carries it.
    Snapshot,
    /// The entry was superseded and never applied.
    Superseded,
}

impl Change {
    pub fn name(self) -> &'static str {
        match self {
            Change::Insert => "insert",
            Change::Modify => "modify",
            Change::Delete => "delete",
            Change::Snapshot => "snapshot",
            Change::Superseded => "superseded",
        }
    }
}

/// One changed column: old and new values in the tools' string syntax
/// (None: the row did not exist / no longer exists), and the value as the
/// record stores it (JSON text; a diff in `_is_diff` records).
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDiff {
    pub column: String,
    pub old: Option<String>,
    pub new: Option<String>,
    pub stored: String,
}

/// One entry of a row's history.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryItem<'l> {
    pub entry: &'l EntryInfo,
    /// The entry's place in [`Log::entries`].
    pub pos: usize,
    pub table: String,
    pub change: Change,
    pub columns: Vec<ColumnDiff>,
}

/// Errors of a history query (bad records name record and offset).
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryError {
    pub record: usize,
    pub offset: u64,
    pub message: String,
}

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "record {} at offset {}: {}",
            self.record, self.offset, self.message
        )
    }
}

/// The history of row `uuid`, in file order.
pub fn history<'l>(log: &'l Log<'_>, uuid: &Uuid) -> Result<Vec<HistoryItem<'l>>, HistoryError> {
    history_with(log, uuid, |e| Some(log.body(e)))
}

/// The history of row `uuid` with the entries' bodies read back by
/// `body` (the web worker reads them from the file by offset: its [`Log`]
/// holds no bytes). Only the entries of the row's [`crate::HistoryIndex`]
/// are asked for; None is an error naming the record.
pub fn history_with<'l, 'b>(
    log: &'l Log<'_>,
    uuid: &Uuid,
    body: impl Fn(&EntryInfo) -> Option<&'b [u8]>,
) -> Result<Vec<HistoryItem<'l>>, HistoryError> {
    let mut out = Vec::new();
    let mut state: Option<Row> = None;
    for &pos in log.history.entries_for(uuid) {
        let e = &log.entries[pos as usize];
        let err = |m: String| HistoryError {
            record: e.record,
            offset: e.offset,
            message: m,
        };
        let Some((t0, _)) = e.txn else { continue };
        let body = body(e).ok_or_else(|| err("the record could not be read again".into()))?;
        let layout = walk_txn(body, t0, true).map_err(err)?;
        let schema = log
            .schema_at(pos as usize)
            .ok_or_else(|| err("no schema before this record".into()))?;
        for t in &layout.tables {
            for r in t.rows.iter().filter(|r| Uuid::parse(&r.key) == Some(*uuid)) {
                let ts = schema
                    .table(&t.name)
                    .ok_or_else(|| err(format!("no table {} in the schema", t.name)))?;
                let fresh = e.schema.is_some() || e.kind == crate::load::EntryKind::Snapshot;
                let change = if e.superseded {
                    Change::Superseded
                } else if r.columns.is_none() {
                    Change::Delete
                } else if fresh {
                    Change::Snapshot
                } else if state.is_none() {
                    Change::Insert
                } else {
                    Change::Modify
                };
                let mut cols = Vec::new();
                let text = |d: &Datum, ci: usize| datum_to_string(d, &ts.columns[ci].ty);
                match (&r.columns, change) {
                    (_, Change::Superseded) => {
                        for c in r.columns.iter().flatten() {
                            cols.push(ColumnDiff {
                                column: c.name.clone(),
                                old: None,
                                new: None,
                                stored: String::from_utf8_lossy(&body[c.value.0..c.value.1])
                                    .into_owned(),
                            });
                        }
                    }
                    (None, _) => {
                        if let Some(old) = state.take() {
                            for (ci, c) in ts.columns.iter().enumerate() {
                                if c.is_implicit() || old.columns[ci].is_default(&c.ty) {
                                    continue;
                                }
                                cols.push(ColumnDiff {
                                    column: c.name.clone(),
                                    old: Some(text(&old.columns[ci], ci)),
                                    new: None,
                                    stored: "null".into(),
                                });
                            }
                        }
                    }
                    (Some(columns), _) => {
                        let before = if matches!(change, Change::Modify) {
                            state.clone()
                        } else {
                            None
                        };
                        let mut row = before
                            .clone()
                            .unwrap_or_else(|| Row::new_default(ts, *uuid));
                        for c in columns {
                            let ci = ts
                                .column_index(&c.name)
                                .ok_or_else(|| err(format!("no column {}.{}", t.name, c.name)))?;
                            let ty = &ts.columns[ci].ty;
                            let j = ovsdb::json::parse_value(&body[c.value.0..c.value.1])
                                .map_err(|x| err(x.to_string()))?;
                            let stored = j.to_string_compact();
                            let ctx = |x: ovsdb::Error| err(format!("{}.{}: {x}", t.name, c.name));
                            if before.is_some() && layout.is_diff && ty.is_composite() {
                                let d = Datum::diff_from_json(&j, ty).map_err(ctx)?;
                                row.columns[ci].apply_diff(&d, ty).map_err(ctx)?;
                            } else {
                                row.columns[ci] = Datum::from_json(&j, ty).map_err(ctx)?;
                            }
                            cols.push(ColumnDiff {
                                column: c.name.clone(),
                                old: before.as_ref().map(|b| text(&b.columns[ci], ci)),
                                new: Some(text(&row.columns[ci], ci)),
                                stored,
                            });
                        }
                        state = Some(row);
                    }
                }
                out.push(HistoryItem {
                    entry: e,
                    pos: pos as usize,
                    table: t.name.clone(),
                    change,
                    columns: cols,
                });
            }
        }
    }
    Ok(out)
}

/// The items of a row's history (`items`, from `log`) that changed the
/// database after index `from` and up to index `to`, included (None: no
/// bound), indexes as [`Log::index_after`] places them: the changes that
/// `diff` between the databases at `from` and at `to` sums up.
pub fn between<'l>(
    log: &Log<'_>,
    items: Vec<HistoryItem<'l>>,
    from: Option<u64>,
    to: Option<u64>,
) -> Vec<HistoryItem<'l>> {
    items
        .into_iter()
        .filter(|it| {
            let at = log.index_after(it.pos);
            from.is_none_or(|f| at.is_some_and(|a| a > f))
                && to.is_none_or(|t| at.is_some_and(|a| a <= t))
        })
        .collect()
}

/// The history as JSON (`{"uuid":..,"entries":[{record, offset, index,
/// term, date, comment, table, change, columns:[{column, old, new,
/// stored}]}]}`).
pub fn history_json(uuid: &Uuid, items: &[HistoryItem<'_>]) -> Json {
    use ovsdb::Object;
    let opt_s = |v: &Option<String>| v.clone().map_or(Json::Null, Json::String);
    let opt_i = |v: Option<u64>| v.map_or(Json::Null, |x| Json::Integer(x as i64));
    let mut arr = Vec::new();
    for it in items {
        let e = it.entry;
        let mut o = Object::new();
        o.push_unchecked("record", Json::Integer(e.record as i64));
        o.push_unchecked("offset", Json::Integer(e.offset as i64));
        o.push_unchecked("index", opt_i(e.index));
        o.push_unchecked("term", opt_i(e.term));
        o.push_unchecked(
            "date",
            e.date_ms.map_or(Json::Null, |d| {
                Json::String(timeline::time::utc_datetime(d))
            }),
        );
        o.push_unchecked("comment", opt_s(&e.comment));
        o.push_unchecked("table", Json::String(it.table.clone()));
        o.push_unchecked("change", Json::String(it.change.name().into()));
        let cols = it
            .columns
            .iter()
            .map(|c| {
                let mut co = Object::new();
                co.push_unchecked("column", Json::String(c.column.clone()));
                co.push_unchecked("old", opt_s(&c.old));
                co.push_unchecked("new", opt_s(&c.new));
                co.push_unchecked("stored", Json::String(c.stored.clone()));
                Json::Object(co)
            })
            .collect();
        o.push_unchecked("columns", Json::Array(cols));
        arr.push(Json::Object(o));
    }
    let mut top = Object::new();
    top.push_unchecked("uuid", Json::String(uuid.to_string()));
    top.push_unchecked("entries", Json::Array(arr));
    Json::Object(top)
}
