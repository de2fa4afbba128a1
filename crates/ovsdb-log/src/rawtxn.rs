//! A txn-record reader that works on bytes: it walks tables, rows and
//! columns once and decodes the common column values (UUID atoms and sets
//! of UUIDs, canonical form) straight into datums, without building a JSON
//! tree. Anything unusual (escapes in names, duplicate members, other
//! value shapes) makes the caller fall back to the JSON path, which gives
//! the same result and the proper error messages.

use crate::skim::skip_value;
use ovsdb::json::Json;
use ovsdb::sets::MapBuilder;
use ovsdb::{Atom, AtomMap, AtomSet, Datum, Uuid};
use std::borrow::Cow;

/// Where a column value comes from.
pub(crate) enum ColSrc<'a> {
    Json(&'a Json),
    Raw {
        slice: &'a [u8],
        /// Pre-decoded UUID set (canonical form), if the value had that
        /// shape: taken (not copied) by the one read of the value, which
        /// reads `slice` again if it is gone.
        fast: std::cell::Cell<Option<Datum>>,
        /// The value had that shape (`slice` is its canonical text).
        canonical: bool,
    },
}

impl ColSrc<'_> {
    /// Serialized length of the stored value.
    pub(crate) fn stored_len(&self) -> Result<usize, String> {
        match self {
            ColSrc::Json(j) => Ok(j.serialized_len()),
            ColSrc::Raw {
                slice,
                canonical: true,
                ..
            } => Ok(slice.len()),
            ColSrc::Raw { slice, .. } => Ok(parse_slice(slice)?.serialized_len()),
        }
    }
}

pub(crate) fn parse_slice(slice: &[u8]) -> Result<Json, String> {
    ovsdb::json::parse_value(slice).map_err(|e| e.to_string())
}

pub(crate) enum RowSrc<'a> {
    Delete,
    Cols(Vec<(Cow<'a, str>, ColSrc<'a>)>),
    /// Neither null nor an object.
    Bad,
}

impl<'a> RowSrc<'a> {
    /// A row of a txn record given as JSON: null, or an object of columns.
    pub(crate) fn from_json(r: &'a Json) -> RowSrc<'a> {
        match r {
            Json::Null => RowSrc::Delete,
            Json::Object(cols) => RowSrc::Cols(
                cols.iter()
                    .map(|(c, v)| (Cow::Borrowed(c), ColSrc::Json(v)))
                    .collect(),
            ),
            _ => RowSrc::Bad,
        }
    }
}

/// Whether a txn record's member `name` with value `v` is one a replay
/// passes over: `_date` (an integer), `_is_diff` (a boolean) or
/// `_comment`.
pub(crate) fn is_special(name: &str, v: &Json) -> bool {
    matches!(
        (name, v),
        ("_date", Json::Integer(_)) | ("_is_diff", Json::Bool(_)) | ("_comment", _)
    )
}

pub(crate) enum MemberSrc<'a> {
    /// `_date` (integer), `_is_diff` (boolean) or `_comment`: ignored.
    Special,
    Table(Vec<(Cow<'a, str>, RowSrc<'a>)>),
    /// Anything else (an error when applied: unknown table / not an object).
    Other,
}

pub(crate) struct TxnSrc<'a> {
    pub members: Vec<(Cow<'a, str>, MemberSrc<'a>)>,
    pub diff_mode: bool,
    pub has_flag: bool,
}

impl<'a> TxnSrc<'a> {
    pub(crate) fn from_json(o: &'a ovsdb::json::Object) -> TxnSrc<'a> {
        let mut t = TxnSrc {
            members: Vec::with_capacity(o.len()),
            diff_mode: matches!(o.get("_is_diff"), Some(Json::Bool(true))),
            has_flag: o.contains_key("_is_diff"),
        };
        for (name, v) in o.iter() {
            let m = match v {
                _ if is_special(name, v) => MemberSrc::Special,
                Json::Object(rows) => MemberSrc::Table(
                    rows.iter()
                        .map(|(u, r)| (Cow::Borrowed(u), RowSrc::from_json(r)))
                        .collect(),
                ),
                _ => MemberSrc::Other,
            };
            t.members.push((Cow::Borrowed(name), m));
        }
        t
    }
}

pub(crate) fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// A member name without escapes, borrowed.
pub(crate) fn name_at(b: &[u8], i: usize) -> Option<(&str, usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let start = i + 1;
    let mut j = start;
    while j < b.len() {
        match b[j] {
            b'"' => return std::str::from_utf8(&b[start..j]).ok().map(|s| (s, j + 1)),
            b'\\' => return None,
            c if c < 0x20 => return None,
            _ => j += 1,
        }
    }
    None
}

const UUID_ATOM_LEN: usize = 47; // ["uuid","<36>"]

fn uuid_atom_at(b: &[u8], i: usize) -> Option<Uuid> {
    let s = b.get(i..i + UUID_ATOM_LEN)?;
    if !s.starts_with(b"[\"uuid\",\"") || !s.ends_with(b"\"]") {
        return None;
    }
    Uuid::parse_bytes(&s[9..45])
}

/// `["uuid",…]`, `["set",[]]` or `["set",[["uuid",…],…]]` in canonical
/// compact form, as a datum; returns it and the end offset.
pub(crate) fn fast_uuid_datum(b: &[u8], i: usize) -> Option<(Datum, usize)> {
    if let Some(u) = uuid_atom_at(b, i) {
        return Some((Datum::Set(AtomSet::one(Atom::Uuid(u))), i + UUID_ATOM_LEN));
    }
    let rest = b.get(i..)?;
    if !rest.starts_with(b"[\"set\",[") {
        return None;
    }
    let mut j = i + 8;
    // Each element takes 48 bytes (47 and a comma) up to the set's `]]`:
    // room for them all.
    let end = memchr::memmem::find(&b[j..], b"]]").map_or(0, |k| k + 1);
    let mut atoms: Vec<Uuid> = Vec::with_capacity(end / (UUID_ATOM_LEN + 1) + 1);
    if b.get(j..j + 2) == Some(b"]]") {
        return Some((Datum::Set(AtomSet::new()), j + 2));
    }
    loop {
        let u = uuid_atom_at(b, j)?;
        atoms.push(u);
        j += UUID_ATOM_LEN;
        match b.get(j) {
            Some(b',') => j += 1,
            Some(b']') if b.get(j + 1) == Some(&b']') => {
                j += 2;
                break;
            }
            _ => return None,
        }
    }
    // Canonical sets are sorted and unique; anything else takes the slow
    // path (which reports duplicates).
    if atoms.windows(2).any(|w| w[0] >= w[1]) {
        return None;
    }
    Some((Datum::Set(atoms.into_iter().map(Atom::Uuid).collect()), j))
}

/// A string at `b[i]` with at most the one-character escapes (`\"`,
/// `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`), unescaped as the JSON
/// parser does; returns it and the end offset. None for `\u` escapes,
/// control characters and anything else (the JSON path then reads it, or
/// gives its error). Logical flows' matches quote port names: `\"` is
/// common there.
fn string_atom_at(b: &[u8], i: usize) -> Option<(String, usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let start = i + 1;
    let mut j = start;
    // The unescaped bytes, once an escape is met; `run`: where the bytes
    // not yet copied start.
    let mut out: Option<Vec<u8>> = None;
    let mut run = start;
    while j < b.len() {
        match b[j] {
            b'"' => {
                let s = match out {
                    None => std::str::from_utf8(&b[start..j]).ok()?.to_string(),
                    Some(mut o) => {
                        o.extend_from_slice(&b[run..j]);
                        String::from_utf8(o).ok()?
                    }
                };
                return Some((s, j + 1));
            }
            b'\\' => {
                let e = match *b.get(j + 1)? {
                    c @ (b'"' | b'\\' | b'/') => c,
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    _ => return None,
                };
                let o = out.get_or_insert_with(|| Vec::with_capacity(j - start + 16));
                o.extend_from_slice(&b[run..j]);
                o.push(e);
                j += 2;
                run = j;
            }
            c if c < 0x20 => return None,
            _ => j += 1,
        }
    }
    None
}

/// An atom of `t` in plain form at `b[i]`: a string with at most
/// one-character escapes ([`string_atom_at`]), an
/// integer of at most 18 digits, `true`/`false`, or a canonical
/// `["uuid",…]`. Returns it and the end offset; None for anything else.
pub(crate) fn plain_atom_at(b: &[u8], i: usize, t: ovsdb::AtomicType) -> Option<(Atom, usize)> {
    use ovsdb::AtomicType as T;
    match t {
        T::String => string_atom_at(b, i).map(|(s, end)| (Atom::String(s), end)),
        T::Integer => {
            let neg = b.get(i) == Some(&b'-');
            let start = i + usize::from(neg);
            let mut j = start;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let digits = &b[start..j];
            // No leading zeros (but "0"), no fraction or exponent after.
            if digits.is_empty()
                || digits.len() > 18
                || (digits[0] == b'0' && (digits.len() > 1 || neg))
                || matches!(b.get(j), Some(b'.' | b'e' | b'E'))
            {
                return None;
            }
            let mut v: i64 = 0;
            for &d in digits {
                v = v * 10 + i64::from(d - b'0');
            }
            Some((Atom::Integer(if neg { -v } else { v }), j))
        }
        T::Boolean => {
            if b[i..].starts_with(b"true") {
                Some((Atom::Boolean(true), i + 4))
            } else if b[i..].starts_with(b"false") {
                Some((Atom::Boolean(false), i + 5))
            } else {
                None
            }
        }
        T::Uuid => uuid_atom_at(b, i).map(|u| (Atom::Uuid(u), i + UUID_ATOM_LEN)),
        T::Real => None,
    }
}

/// A column value in compact plain form, decoded straight from its bytes
/// for type `ty`: a bare atom of a set type, or `["map",[[k,v],…]]`, with
/// atoms as [`plain_atom_at`] reads them, each within its constraints, and
/// no duplicate keys. None = take the JSON path (which gives the same
/// datum when it succeeds, and the proper error otherwise). The size is
/// not checked.
pub(crate) fn plain_datum(slice: &[u8], ty: &ovsdb::Type) -> Option<Datum> {
    plain_datum_at(slice, 0, ty).and_then(|(d, end)| (end == slice.len()).then_some(d))
}

/// [`plain_datum`] of the value at `b[i]`, and where it ends.
pub(crate) fn plain_datum_at(b: &[u8], i: usize, ty: &ovsdb::Type) -> Option<(Datum, usize)> {
    let ok = |a: &Atom, base: &ovsdb::BaseType| a.check_constraints(base).is_ok();
    match &ty.value {
        None => {
            let (a, end) = plain_atom_at(b, i, ty.key.atomic)?;
            ok(&a, &ty.key).then(|| (Datum::Set(AtomSet::one(a)), end))
        }
        Some(vt) => {
            const HEAD: &[u8] = b"[\"map\",[";
            if !b.get(i..)?.starts_with(HEAD) {
                return None;
            }
            let mut j = i + HEAD.len();
            if b.get(j..j + 2) == Some(b"]]") {
                return Some((Datum::Map(AtomMap::new()), j + 2));
            }
            let mut m = MapBuilder::with_capacity(0);
            loop {
                if b.get(j) != Some(&b'[') {
                    return None;
                }
                let (k, e) = plain_atom_at(b, j + 1, ty.key.atomic)?;
                if b.get(e) != Some(&b',') {
                    return None;
                }
                let (v, e) = plain_atom_at(b, e + 1, vt.atomic)?;
                if b.get(e) != Some(&b']') || !ok(&k, &ty.key) || !ok(&v, vt) {
                    return None;
                }
                if !m.push(k, v) {
                    return None;
                }
                j = e + 1;
                match b.get(j) {
                    Some(b',') => j += 1,
                    Some(b']') if b.get(j + 1) == Some(&b']') => {
                        return Some((Datum::Map(m.finish()), j + 2))
                    }
                    _ => return None,
                }
            }
        }
    }
}

/// Parses the object at `b[i]` into a txn source; returns it and the end
/// offset. `None` = use the JSON path instead.
pub(crate) fn parse_raw_txn(b: &[u8], i: usize) -> Option<(TxnSrc<'_>, usize)> {
    let mut i = ws(b, i);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut t = TxnSrc {
        members: Vec::new(),
        diff_mode: false,
        has_flag: false,
    };
    i = ws(b, i);
    if b.get(i) == Some(&b'}') {
        return Some((t, i + 1));
    }
    loop {
        i = ws(b, i);
        let (name, k) = name_at(b, i)?;
        i = ws(b, k);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        if t.members.iter().any(|(n, _)| n == name) {
            return None;
        }
        let member = if name.starts_with('_') {
            let end = skip_value(b, i).ok()?;
            let v = parse_slice(&b[i..end]).ok()?;
            i = end;
            if name == "_is_diff" {
                t.has_flag = true;
                t.diff_mode = matches!(v, Json::Bool(true));
            }
            if is_special(name, &v) {
                MemberSrc::Special
            } else {
                MemberSrc::Other
            }
        } else if b.get(i) == Some(&b'{') {
            let (rows, end) = parse_rows(b, i)?;
            i = end;
            MemberSrc::Table(rows)
        } else {
            i = skip_value(b, i).ok()?;
            MemberSrc::Other
        };
        t.members.push((Cow::Borrowed(name), member));
        i = ws(b, i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Some((t, i + 1)),
            _ => return None,
        }
    }
}

type Rows<'a> = Vec<(Cow<'a, str>, RowSrc<'a>)>;

fn parse_rows(b: &[u8], i: usize) -> Option<(Rows<'_>, usize)> {
    let mut i = ws(b, i + 1);
    let mut rows: Rows<'_> = Vec::new();
    // Duplicate rows take the JSON path. A transaction touches a few rows
    // (a linear check, no allocation); a snapshot, many (a hash set).
    const LINEAR: usize = 32;
    let mut seen = std::collections::HashSet::new();
    if b.get(i) == Some(&b'}') {
        return Some((rows, i + 1));
    }
    loop {
        i = ws(b, i);
        let (uuid, k) = name_at(b, i)?;
        if rows.len() < LINEAR {
            if rows.iter().any(|(u, _)| u == uuid) {
                return None;
            }
        } else {
            if seen.is_empty() {
                seen.extend(rows.iter().map(|(u, _)| u.clone()));
            }
            if !seen.insert(Cow::Borrowed(uuid)) {
                return None;
            }
        }
        i = ws(b, k);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        let row = match b.get(i) {
            Some(b'n') if b.get(i..i + 4) == Some(b"null") => {
                i += 4;
                RowSrc::Delete
            }
            Some(b'{') => {
                let (cols, end) = parse_cols(b, i)?;
                i = end;
                RowSrc::Cols(cols)
            }
            _ => {
                i = skip_value(b, i).ok()?;
                RowSrc::Bad
            }
        };
        rows.push((Cow::Borrowed(uuid), row));
        i = ws(b, i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Some((rows, i + 1)),
            _ => return None,
        }
    }
}

pub(crate) type Cols<'a> = Vec<(Cow<'a, str>, ColSrc<'a>)>;

pub(crate) fn parse_cols(b: &[u8], i: usize) -> Option<(Cols<'_>, usize)> {
    let mut i = ws(b, i + 1);
    let mut cols: Cols<'_> = Vec::new();
    if b.get(i) == Some(&b'}') {
        return Some((cols, i + 1));
    }
    loop {
        i = ws(b, i);
        let (name, k) = name_at(b, i)?;
        if cols.iter().any(|(n, _)| n == name) {
            return None;
        }
        i = ws(b, k);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        let (fast, end) = match fast_uuid_datum(b, i) {
            Some((d, end)) => (Some(d), end),
            None => (None, skip_value(b, i).ok()?),
        };
        cols.push((
            Cow::Borrowed(name),
            ColSrc::Raw {
                slice: &b[i..end],
                canonical: fast.is_some(),
                fast: std::cell::Cell::new(fast),
            },
        ));
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Some((cols, i + 1)),
            _ => return None,
        }
    }
}

/// Splits a Raft `data` value `[schema, txn]` when the schema slot is
/// `null`: returns the txn source (None = use the JSON path).
pub(crate) fn parse_raw_data(b: &[u8]) -> Option<TxnSrc<'_>> {
    let (t, end) = parse_raw_data_at(b, 0)?;
    (ws(b, end) == b.len()).then_some(t)
}

/// Where the txn of a Raft `data` value `[null, txn]` at `b[i]` starts
/// (after the comma), or None when the value does not start `[null,`.
pub(crate) fn after_null_schema(b: &[u8], i: usize) -> Option<usize> {
    let mut i = ws(b, i);
    if b.get(i) != Some(&b'[') {
        return None;
    }
    i = ws(b, i + 1);
    if b.get(i..i + 4) != Some(b"null") {
        return None;
    }
    i = ws(b, i + 4);
    (b.get(i) == Some(&b',')).then_some(i + 1)
}

/// Like [`parse_raw_data`] for the value at `b[i]`; returns the end offset.
pub(crate) fn parse_raw_data_at(b: &[u8], i: usize) -> Option<(TxnSrc<'_>, usize)> {
    let (t, end) = parse_raw_txn(b, after_null_schema(b, i)?)?;
    let i = ws(b, end);
    if b.get(i) != Some(&b']') {
        return None;
    }
    Some((t, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_datums_agree_with_the_json_path() {
        let ty = |t: &str| {
            ovsdb::Type::from_json(&ovsdb::json::parse_value(t.as_bytes()).unwrap()).unwrap()
        };
        let a = "00000000-0000-4000-8000-000000000001";
        let set = r#"{"key":"string","min":0,"max":"unlimited"}"#;
        let smap = r#"{"key":"string","value":"string","min":0,"max":"unlimited"}"#;
        let imap = r#"{"key":"string","value":"integer","min":0,"max":"unlimited"}"#;
        let umap = r#"{"key":"string","value":{"type":"uuid"},"min":0,"max":"unlimited"}"#;
        let cases: Vec<(&str, String)> = vec![
            (r#""string""#, r#""abc""#.into()),
            (r#""string""#, r#""""#.into()),
            (r#""string""#, r#""caf\u00e9""#.into()),
            (r#""string""#, "\"é ü\"".into()),
            (r#""string""#, r#""inport == \"lsp-1\" && x""#.into()),
            (r#""string""#, r#""\\\/\b\f\n\r\t\"""#.into()),
            (r#""string""#, r#""a\\""#.into()),
            (r#""string""#, r#""a\x""#.into()),
            (r#""string""#, r#""a\u0041\n""#.into()),
            (r#""string""#, "\"tab\there\"".into()),
            (r#""string""#, r#""unterminated\""#.into()),
            (smap, r#"["map",[["k\"","v\\"]]]"#.into()),
            (r#""integer""#, "0".into()),
            (r#""integer""#, "-17".into()),
            (r#""integer""#, "-0".into()),
            (r#""integer""#, "007".into()),
            (r#""integer""#, "1e3".into()),
            (r#""integer""#, "123456789012345678".into()),
            (r#""integer""#, "1234567890123456789".into()),
            (
                r#"{"key":{"type":"integer","minInteger":0,"maxInteger":10}}"#,
                "11".into(),
            ),
            (r#""boolean""#, "true".into()),
            (r#""boolean""#, "false".into()),
            (r#""real""#, "1".into()),
            (set, r#""x""#.into()),
            (set, r#"["set",["x","y"]]"#.into()),
            (
                r#"{"key":{"type":"string","enum":["set",["a","b"]]}}"#,
                r#""c""#.into(),
            ),
            (smap, r#"["map",[]]"#.into()),
            (smap, r#"["map",[["b","1"],["a","2"]]]"#.into()),
            (smap, r#"["map",[["a","1"],["a","2"]]]"#.into()),
            (imap, r#"["map",[["a",1]]]"#.into()),
            (imap, r#"["map", [["a",1]]]"#.into()),
            (umap, format!(r#"["map",[["a",["uuid","{a}"]]]]"#)),
            (
                r#"{"key":"uuid","min":0,"max":1}"#,
                format!(r#"["uuid","{a}"]"#),
            ),
        ];
        let mut plain = 0;
        for (t, v) in &cases {
            let ty = ty(t);
            let via_json = ovsdb::json::parse_value(v.as_bytes())
                .ok()
                .and_then(|j| Datum::diff_from_json(&j, &ty).ok());
            if let Some(d) = plain_datum(v.as_bytes(), &ty) {
                plain += 1;
                assert_eq!(Some(d), via_json, "{t} {v}");
            }
        }
        assert!(plain >= 16, "{plain}");
    }

    #[test]
    fn fast_uuid_sets() {
        let a = "00000000-0000-4000-8000-000000000001";
        let b2 = "00000000-0000-4000-8000-000000000002";
        let one = format!(r#"["uuid","{a}"]"#);
        let (d, end) = fast_uuid_datum(one.as_bytes(), 0).unwrap();
        assert_eq!((d.len(), end), (1, one.len()));
        let two = format!(r#"["set",[["uuid","{a}"],["uuid","{b2}"]]]"#);
        let (d, end) = fast_uuid_datum(two.as_bytes(), 0).unwrap();
        assert_eq!((d.len(), end), (2, two.len()));
        assert_eq!(d.json_len(), two.len());
        let unsorted = format!(r#"["set",[["uuid","{b2}"],["uuid","{a}"]]]"#);
        assert!(fast_uuid_datum(unsorted.as_bytes(), 0).is_none());
        assert!(fast_uuid_datum(br#"["set",[]]"#, 0).is_some());
        assert!(fast_uuid_datum(br#"["set",[1]]"#, 0).is_none());
        assert!(fast_uuid_datum(br#"["uuid","x"]"#, 0).is_none());
        let txn = format!(
            r#"[null,{{"T":{{"{a}":{{"c":{two},"n":5}},"{b2}":null}},"_date":1,"_is_diff":true}}]"#
        );
        let t = parse_raw_data(txn.as_bytes()).unwrap();
        assert!(t.diff_mode && t.has_flag);
        assert_eq!(t.members.len(), 3);
        // Duplicate rows fall back to the JSON path.
        let dup = format!(r#"[null,{{"T":{{"{a}":null,"{a}":null}}}}]"#);
        assert!(parse_raw_data(dup.as_bytes()).is_none());
    }
}
