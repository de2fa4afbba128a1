//! The canonical text of a JSON value (every object's members sorted by
//! name, no whitespace: what `Json::sort_recursive` then `write_compact`
//! give) written straight from the value's bytes, without building a tree.
//! The cluster check digests each entry's data this way (entries of
//! different servers carry the same change with members in other orders).
//!
//! The fast path handles what servers write: member names without
//! escapes, strings (escapes decoded and written again as the tree's writer
//! does), integers, `true`/`false`/`null`. Anything else (an escaped member
//! name, a surrogate, a real number, a duplicate member, bad syntax) returns `None`
//! and the caller takes the tree path, which gives the same text or the
//! proper error.

use crate::skim::skip_value;

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// A string at `b[i]` with no escapes and valid UTF-8: its end.
fn plain_string(b: &[u8], i: usize) -> Option<usize> {
    let end = skip_value(b, i).ok()?;
    let inner = &b[i + 1..end - 1];
    if inner.contains(&b'\\') {
        return None;
    }
    std::str::from_utf8(inner).ok()?;
    Some(end)
}

/// Writes the canonical text of the string at `b[i]` (escapes decoded, then
/// written as the tree's writer escapes: `"`, `\\`, `\b \f \n \r \t`,
/// other control characters as `\u00XX`); returns its end.
fn string(b: &[u8], i: usize, out: &mut Vec<u8>) -> Option<usize> {
    let end = skip_value(b, i).ok()?;
    let inner = &b[i + 1..end - 1];
    if !inner.contains(&b'\\') {
        std::str::from_utf8(inner).ok()?;
        out.extend_from_slice(&b[i..end]);
        return Some(end);
    }
    let mut text: Vec<u8> = Vec::with_capacity(inner.len());
    let mut k = 0;
    while k < inner.len() {
        let c = inner[k];
        if c != b'\\' {
            text.push(c);
            k += 1;
            continue;
        }
        let e = *inner.get(k + 1)?;
        k += 2;
        let ch = match e {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hex = std::str::from_utf8(inner.get(k..k + 4)?).ok()?;
                let v = u32::from_str_radix(hex, 16).ok()?;
                k += 4;
                // Surrogates (pairs or not): the tree path.
                if (0xd800..0xe000).contains(&v) {
                    return None;
                }
                char::from_u32(v)?
            }
            _ => return None,
        };
        let mut tmp = [0u8; 4];
        text.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
    }
    let text = std::str::from_utf8(&text).ok()?;
    let mut j = Vec::with_capacity(text.len() + 2);
    ovsdb::json::Json::String(text.into()).write_compact(&mut j);
    out.extend_from_slice(&j);
    Some(end)
}

/// Writes the canonical text of the value at `b[i]` (after whitespace);
/// returns the end of the value.
fn value(b: &[u8], i: usize, out: &mut Vec<u8>, depth: usize) -> Option<usize> {
    if depth > ovsdb::json::MAX_NESTING {
        return None;
    }
    let i = ws(b, i);
    match *b.get(i)? {
        b'"' => string(b, i, out),
        b'[' => {
            out.push(b'[');
            let mut j = ws(b, i + 1);
            if b.get(j) == Some(&b']') {
                out.push(b']');
                return Some(j + 1);
            }
            loop {
                j = value(b, j, out, depth + 1)?;
                j = ws(b, j);
                match b.get(j)? {
                    b',' => {
                        out.push(b',');
                        j += 1;
                    }
                    b']' => {
                        out.push(b']');
                        return Some(j + 1);
                    }
                    _ => return None,
                }
            }
        }
        b'{' => {
            // (name start, name end, value start) of each member.
            let mut members: Vec<(usize, usize, usize)> = Vec::new();
            let mut j = ws(b, i + 1);
            let end;
            if b.get(j) == Some(&b'}') {
                end = j + 1;
            } else {
                loop {
                    if b.get(j) != Some(&b'"') {
                        return None;
                    }
                    let ne = plain_string(b, j)?;
                    let c = ws(b, ne);
                    if b.get(c) != Some(&b':') {
                        return None;
                    }
                    let v = ws(b, c + 1);
                    let ve = skip_value(b, v).ok()?;
                    members.push((j, ne, v));
                    j = ws(b, ve);
                    match b.get(j)? {
                        b',' => j = ws(b, j + 1),
                        b'}' => {
                            end = j + 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            // Names compare as their bytes without the quotes (as the tree's
            // sort does); a duplicate name takes the tree path.
            let name = |m: &(usize, usize, usize)| &b[m.0 + 1..m.1 - 1];
            ovsdb::order::sort_small_by(&mut members, |x, y| name(x).cmp(name(y)));
            if members.windows(2).any(|w| name(&w[0]) == name(&w[1])) {
                return None;
            }
            out.push(b'{');
            for (k, m) in members.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(&b[m.0..m.1]);
                out.push(b':');
                value(b, m.2, out, depth + 1)?;
            }
            out.push(b'}');
            Some(end)
        }
        b't' | b'f' | b'n' => {
            for lit in [&b"true"[..], b"false", b"null"] {
                if b[i..].starts_with(lit) {
                    let e = i + lit.len();
                    if b.get(e).is_some_and(|c| {
                        !matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                    }) {
                        return None;
                    }
                    out.extend_from_slice(lit);
                    return Some(e);
                }
            }
            None
        }
        b'-' | b'0'..=b'9' => {
            let mut e = i;
            while e < b.len() && matches!(b[e], b'-' | b'0'..=b'9') {
                e += 1;
            }
            if b.get(e)
                .is_some_and(|c| !matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                // A real number (or garbage).
                return None;
            }
            let t = &b[i..e];
            let digits = t.strip_prefix(b"-").unwrap_or(t);
            if digits.is_empty()
                || digits.len() > 18
                || digits.contains(&b'-')
                || (digits[0] == b'0' && (digits.len() > 1 || t.len() > 1))
            {
                return None;
            }
            out.extend_from_slice(t);
            Some(e)
        }
        _ => None,
    }
}

/// The canonical text of the JSON text `b` (one value, whitespace around
/// it allowed) into `out` (cleared first); `None` when the fast path does
/// not apply.
pub fn canonical(b: &[u8], out: &mut Vec<u8>) -> Option<()> {
    out.clear();
    let end = value(b, 0, out, 0)?;
    (ws(b, end) == b.len()).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow(b: &[u8]) -> Option<Vec<u8>> {
        let mut j = ovsdb::json::parse_value(b).ok()?;
        j.sort_recursive();
        let mut v = Vec::new();
        j.write_compact(&mut v);
        Some(v)
    }

    #[test]
    fn agrees_with_the_tree_or_steps_aside() {
        let cases: &[&str] = &[
            r#"[null,{"b":{"x":["set",[["uuid","2"],["uuid","1"]]]},"a":1,"_date":1764450858237}]"#,
            r#" { "z" : [ 1 , -2 , 0 , true , false , null ] , "y" : { } , "x" : [ ] } "#,
            r#"{"é":"ü","e":"plain"}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":"x\"y"}"#,
            r#"{"a":1.5}"#,
            r#"{"a":1e3}"#,
            r#"{"a":-0}"#,
            r#"{"a":007}"#,
            r#"{"a":12345678901234567890}"#,
            r#"{"a":tru}"#,
            r#"{"a":truex}"#,
            r#"{"a":1}x"#,
            r#"{"a"}"#,
            r#"[1,]"#,
            "",
            "[",
            r#""\u0041""#,
            r#"{"m":"inport == \"lsp1\" && ip4.src == 10.0.0.1\/32","t":"a\tb\u00e9\u0001\n"}"#,
            r#""\ud83d\ude00""#,
            r#""bad \x escape""#,
        ];
        for c in cases {
            let mut out = Vec::new();
            // None: the tree path decides.
            if canonical(c.as_bytes(), &mut out).is_some() {
                assert_eq!(Some(out), slow(c.as_bytes()), "{c}");
            }
        }
        let mut out = Vec::new();
        assert!(canonical(br#"{"b":1,"a":{"d":[],"c":"x"}}"#, &mut out).is_some());
        assert_eq!(out, br#"{"a":{"c":"x","d":[]},"b":1}"#);
        assert!(canonical(br#"{"a":1,"a":2}"#, &mut out).is_none());
        assert!(canonical(br#"{"a":1.5}"#, &mut out).is_none());
    }
}
