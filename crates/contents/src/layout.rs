//! A byte-level walk of one txn record (`{table: {uuid: row-or-null}}`
//! plus `_date`, `_comment`, `_is_diff`): where each table, row and
//! column sits in the bytes, without building a JSON tree. The history
//! index and the stored-size attribution both read records through it.

use ovsdb_log::skim::skip_value;

/// One column member of a row object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpan {
    pub name: String,
    /// Bytes of `"name":value`, plus the comma before it when it is not
    /// the row's first member.
    pub bytes: u64,
    /// Byte range of the value (relative to the slice walked).
    pub value: (usize, usize),
}

/// One row member of a table object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSpan {
    /// The row key as written (normally a UUID).
    pub key: String,
    /// `None` for a deletion (`null`).
    pub columns: Option<Vec<ColumnSpan>>,
    /// Byte range of the row value.
    pub value: (usize, usize),
}

/// One table member of the txn object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSpan {
    pub name: String,
    /// Bytes of `"name":{...}`, plus the comma before it when it is not
    /// the object's first member.
    pub bytes: u64,
    pub rows: Vec<RowSpan>,
}

/// The layout of a txn object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxnLayout {
    pub tables: Vec<TableSpan>,
    pub date: Option<i64>,
    pub comment: Option<String>,
    pub is_diff: bool,
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

fn string_at(b: &[u8], i: usize) -> Result<(String, usize), String> {
    if b.get(i) != Some(&b'"') {
        return Err(format!("byte {i}: string expected"));
    }
    let end = skip_value(b, i)?;
    let raw = &b[i + 1..end - 1];
    if !raw.contains(&b'\\') {
        let s = std::str::from_utf8(raw).map_err(|_| format!("byte {i}: invalid UTF-8"))?;
        return Ok((s.to_string(), end));
    }
    match ovsdb::json::parse_value(&b[i..end]) {
        Ok(ovsdb::Json::String(s)) => Ok((s, end)),
        _ => Err(format!("byte {i}: bad string")),
    }
}

/// Calls `f(key, key_start, value_start, value_end, preceded_by_comma)`
/// for every member of the object starting at `i`; returns the end.
pub(crate) fn members(
    b: &[u8],
    i: usize,
    mut f: impl FnMut(String, usize, usize, usize, bool) -> Result<(), String>,
) -> Result<usize, String> {
    if b.get(i) != Some(&b'{') {
        return Err(format!("byte {i}: object expected"));
    }
    let mut j = ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Ok(j + 1);
    }
    let mut first = true;
    loop {
        let ks = j;
        let (key, after) = string_at(b, j)?;
        j = ws(b, after);
        if b.get(j) != Some(&b':') {
            return Err(format!("byte {j}: ':' expected"));
        }
        let vs = ws(b, j + 1);
        let ve = skip_value(b, vs)?;
        f(key, ks, vs, ve, !first)?;
        first = false;
        j = ws(b, ve);
        match b.get(j) {
            Some(b',') => j = ws(b, j + 1),
            Some(b'}') => return Ok(j + 1),
            _ => return Err(format!("byte {j}: ',' or '}}' expected")),
        }
    }
}

/// Walks the txn object that starts at byte `i` of `b`. With
/// `with_columns` false, rows carry no column list (faster: the history
/// index only needs row keys).
pub fn walk_txn(b: &[u8], i: usize, with_columns: bool) -> Result<TxnLayout, String> {
    let mut t = TxnLayout::default();
    members(b, i, |name, ks, vs, ve, comma| {
        if name.starts_with('_') {
            match name.as_str() {
                "_date" => {
                    t.date = std::str::from_utf8(&b[vs..ve])
                        .ok()
                        .and_then(|s| s.parse().ok())
                }
                "_comment" => t.comment = string_at(b, vs).ok().map(|(s, _)| s),
                "_is_diff" => t.is_diff = &b[vs..ve] == b"true",
                _ => {}
            }
            return Ok(());
        }
        let mut rows = Vec::new();
        if b.get(vs) == Some(&b'{') {
            members(b, vs, |key, _, rvs, rve, _| {
                let columns = if b.get(rvs) == Some(&b'{') {
                    let mut cols = Vec::new();
                    if with_columns {
                        members(b, rvs, |cn, cks, cvs, cve, c_comma| {
                            cols.push(ColumnSpan {
                                name: cn,
                                bytes: (cve - cks) as u64 + u64::from(c_comma),
                                value: (cvs, cve),
                            });
                            Ok(())
                        })?;
                    }
                    Some(cols)
                } else {
                    None
                };
                rows.push(RowSpan {
                    key,
                    columns,
                    value: (rvs, rve),
                });
                Ok(())
            })?;
        }
        t.tables.push(TableSpan {
            name,
            bytes: (ve - ks) as u64 + u64::from(comma),
            rows,
        });
        Ok(())
    })?;
    Ok(t)
}
