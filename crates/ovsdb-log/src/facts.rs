//! What a view shows of a transaction without building it: its `_date`,
//! `_comment`, and how many tables and rows it touches. Read from the
//! record's bytes in one pass that only delimits the table data (the
//! timeline needs these for every entry of files with millions of them).
//!
//! Anything unusual (escapes in member names, a shape other than an
//! object) falls back to the JSON tree, which gives the same answer.

use crate::record::TxnRecord;
use crate::skim::skip_value;
use ovsdb::json::Json;

/// The facts of one txn object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxnFacts {
    /// `_date` in milliseconds ([`TxnRecord::date_ms`]).
    pub date_ms: Option<i64>,
    /// `_comment`, when it is a string.
    pub comment: Option<String>,
    /// Members other than `_date`, `_comment` and `_is_diff`.
    pub tables: u32,
    /// Rows over those members (members of each table object).
    pub rows: u32,
    /// `_is_diff` is `true`.
    pub diff: bool,
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Walks the members of the object at `b[i]`, calling `f(name, value
/// start, value end)`; returns the end of the object. None on anything the
/// fast path does not handle.
fn members(b: &[u8], i: usize, mut f: impl FnMut(&[u8], usize, usize)) -> Option<usize> {
    let mut i = ws(b, i);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        let (name, e) = crate::rawtxn::name_at(b, i)?;
        let name = name.as_bytes();
        i = ws(b, e);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let v = ws(b, i + 1);
        let end = skip_value(b, v).ok()?;
        f(name, v, end);
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}

fn fast(b: &[u8], i: usize) -> Option<(TxnFacts, usize)> {
    let mut t = TxnFacts::default();
    let mut ok = true;
    let end = members(b, i, |name, v, e| {
        let value = &b[v..e];
        match name {
            b"_date" => match ovsdb::json::parse_value(value) {
                Ok(j) => {
                    t.date_ms = TxnRecord {
                        tables: Vec::new(),
                        date: Some(j),
                        comment: None,
                        is_diff: None,
                    }
                    .date_ms()
                }
                Err(_) => ok = false,
            },
            b"_comment" => match ovsdb::json::parse_value(value) {
                Ok(Json::String(s)) => t.comment = Some(s.to_string()),
                Ok(_) => {}
                Err(_) => ok = false,
            },
            b"_is_diff" => t.diff = value == b"true",
            _ => {
                t.tables += 1;
                if value.first() == Some(&b'{') {
                    let mut rows = 0u32;
                    if members(b, v, |_, _, _| rows += 1).is_none() {
                        ok = false;
                    }
                    t.rows += rows;
                }
            }
        }
    })?;
    ok.then_some((t, end))
}

fn from_json(j: &Json) -> Option<TxnFacts> {
    let t = TxnRecord::from_json(j).ok()?;
    let rows: usize = t
        .tables
        .iter()
        .map(|(_, rows)| rows.as_object().map_or(0, |o| o.len()))
        .sum();
    Some(TxnFacts {
        date_ms: t.date_ms(),
        comment: t.comment_str().map(str::to_string),
        tables: t.tables.len() as u32,
        rows: rows as u32,
        diff: t.diff_mode(),
    })
}

/// The facts of a txn object given as bytes (a standalone txn record's
/// body). None when it is not a JSON object.
pub fn txn_facts(obj: &[u8]) -> Option<TxnFacts> {
    if let Some((t, end)) = fast(obj, 0) {
        if ws(obj, end) == obj.len() {
            return Some(t);
        }
    }
    from_json(&ovsdb::json::parse_value(obj).ok()?)
}

/// The facts of the txn of a Raft entry's `data` bytes (`[schema, txn]`).
/// None when the txn slot is `null` or the value has another shape.
pub fn entry_txn_facts(data: &[u8]) -> Option<TxnFacts> {
    let b = data;
    let i = ws(b, 0);
    if b.get(i) == Some(&b'[') {
        let first = ws(b, i + 1);
        if let Ok(e) = skip_value(b, first) {
            let comma = ws(b, e);
            if b.get(comma) == Some(&b',') {
                let v = ws(b, comma + 1);
                if b.get(v..v + 4) == Some(b"null") {
                    let close = ws(b, v + 4);
                    if b.get(close) == Some(&b']') && ws(b, close + 1) == b.len() {
                        return None;
                    }
                } else if let Some((t, end)) = fast(b, v) {
                    let close = ws(b, end);
                    if b.get(close) == Some(&b']') && ws(b, close + 1) == b.len() {
                        return Some(t);
                    }
                }
            }
        }
    }
    let j = ovsdb::json::parse_value(data).ok()?;
    let (_, txn) = crate::scan::split_data(&j)?;
    if txn.is_null() {
        return None;
    }
    from_json(txn)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(obj: &str) -> Option<TxnFacts> {
        let j = ovsdb::json::parse_value(obj.as_bytes()).ok();
        let slow = j.as_ref().and_then(from_json);
        let quick = txn_facts(obj.as_bytes());
        assert_eq!(quick, slow, "{obj}");
        let data = format!("[null,{obj}]");
        let quick_entry = entry_txn_facts(data.as_bytes());
        if j.as_ref().is_some_and(|j| j.as_object().is_some()) {
            assert_eq!(quick_entry, slow, "{data}");
        }
        quick
    }

    #[test]
    fn fast_path_agrees_with_the_json_tree() {
        let t = both(
            r#"{"Logical_Switch":{"0bd2f9d4-8a2c-4a3b-9a0e-0e7d1a1c2b3d":{"name":"ls0"},
               "1bd2f9d4-8a2c-4a3b-9a0e-0e7d1a1c2b3d":null},
               "NB_Global":{"a":{}},"_date":1764450858237,"_comment":"ovn-nbctl: ls-add ls0",
               "_is_diff":true}"#,
        )
        .unwrap();
        assert_eq!(t.tables, 2);
        assert_eq!(t.rows, 3);
        assert_eq!(t.date_ms, Some(1764450858237));
        assert_eq!(t.comment.as_deref(), Some("ovn-nbctl: ls-add ls0"));
        assert!(t.diff);
        // Seconds, as old files write it.
        assert_eq!(
            both(r#"{"_date":1300000000}"#).unwrap().date_ms,
            Some(1300000000000)
        );
        // Escapes fall back to the tree.
        let t = both(r#"{"T\u0061ble":{"x":null},"_comment":"a\"b"}"#).unwrap();
        assert_eq!((t.tables, t.rows), (1, 1));
        assert_eq!(t.comment.as_deref(), Some("a\"b"));
        // Other shapes.
        assert_eq!(both(r#"{"T":[1,2]}"#).unwrap().rows, 0);
        assert!(both("[1]").is_none());
        assert!(both("{").is_none());
        assert_eq!(both("{}").unwrap(), TxnFacts::default());
    }

    #[test]
    fn entry_data_shapes() {
        assert_eq!(entry_txn_facts(b"[null,null]"), None);
        assert_eq!(entry_txn_facts(b"[{\"name\":\"x\"},null]"), None);
        let t = entry_txn_facts(b" [ {\"name\":\"x\"} , {\"T\":{\"u\":{}}} ] ").unwrap();
        assert_eq!((t.tables, t.rows), (1, 1));
        assert_eq!(entry_txn_facts(b"[1,2,3]"), None);
        assert_eq!(entry_txn_facts(b"nonsense"), None);
    }
}
