//! A fast, allocation-light reader for the *outer* object of a record: it
//! parses the small members and only delimits the big payload members
//! (`data`, `prev_data`) without building their trees. Used to learn a
//! file's structure (kinds, terms, indexes) before decoding payloads.
//!
//! Skipped payloads are checked for balanced brackets, terminated strings
//! and the nesting limit; their full syntax is checked when they are
//! decoded.

use ovsdb::json::{parse_value, Json, Object, MAX_NESTING};

/// Members of the outer object whose values are delimited, not parsed.
pub const PAYLOAD_MEMBERS: &[&str] = &["data", "prev_data"];

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `x` is `"`, `\\` or below 0x20 (SWAR).
#[inline]
fn special_in(x: u64) -> bool {
    let has = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let quote = has(x ^ (ONES * u64::from(b'"')));
    let backslash = has(x ^ (ONES * u64::from(b'\\')));
    let control = x.wrapping_sub(ONES * 0x20) & !x & HIGHS;
    (quote | backslash | control) != 0
}

/// End (exclusive) of the string starting at `b[i] == '"'`.
fn skip_string(b: &[u8], i: usize) -> Result<usize, String> {
    let mut j = i + 1;
    // Eight bytes at a time while none of them needs attention.
    while let Some(chunk) = b.get(j..j + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        if special_in(u64::from_le_bytes(w)) {
            break;
        }
        j += 8;
    }
    while j < b.len() {
        match b[j] {
            b'"' => return Ok(j + 1),
            b'\\' => j += 2,
            c if c < 0x20 => return Err(format!("byte {j}: control character in string")),
            _ => j += 1,
        }
    }
    Err(format!("byte {i}: unterminated string"))
}

/// End (exclusive) of a UUID atom `["uuid","<36 bytes>"]` at `b[j]`, the
/// commonest value of a database file, in one step: None when the bytes
/// have another shape (the caller then walks them byte by byte). The 36
/// bytes are only checked for what would end or escape the string.
/// (Not inlined: one copy serves every caller of [`skip_value`].)
#[inline(never)]
fn uuid_atom_end(b: &[u8], j: usize) -> Option<usize> {
    let w = b.get(j..j + 47)?;
    if &w[..9] != b"[\"uuid\",\"" || &w[45..] != b"\"]" {
        return None;
    }
    // Without a branch per byte: natively the loop becomes vector code.
    let bad = w[9..45].iter().fold(false, |bad, &c| {
        bad | (c < 0x20) | (c == b'"') | (c == b'\\')
    });
    (!bad).then_some(j + 47)
}

/// End (exclusive) of the JSON value starting at `i` (after whitespace).
pub fn skip_value(b: &[u8], i: usize) -> Result<usize, String> {
    match b.get(i) {
        None => Err(format!("byte {i}: value expected")),
        Some(b'"') => skip_string(b, i),
        Some(b'{') | Some(b'[') => {
            let mut stack: Vec<u8> = Vec::new();
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'[' if !stack.is_empty() && stack.len() < MAX_NESTING => {
                        if let Some(end) = uuid_atom_end(b, j) {
                            j = end;
                            continue;
                        }
                        stack.push(b']');
                    }
                    b'{' | b'[' => {
                        if stack.len() >= MAX_NESTING {
                            return Err(format!(
                                "byte {j}: input exceeds maximum nesting depth {MAX_NESTING}"
                            ));
                        }
                        stack.push(if b[j] == b'{' { b'}' } else { b']' });
                    }
                    c @ (b'}' | b']') => {
                        if stack.pop() != Some(c) {
                            return Err(format!("byte {j}: unbalanced '{}'", c as char));
                        }
                        if stack.is_empty() {
                            return Ok(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            Err(format!("byte {i}: unterminated value"))
        }
        Some(_) => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            if j == i {
                return Err(format!("byte {i}: value expected"));
            }
            Ok(j)
        }
    }
}

/// Parses a body whose top level is an object, building every member
/// except those named in `PAYLOAD_MEMBERS`, which are replaced by an empty
/// array placeholder and returned as raw slices.
/// A payload member's name and raw value.
pub type Payload<'a> = (&'static str, &'a [u8]);

pub fn skim_object(body: &[u8]) -> Result<(Json, Vec<Payload<'_>>), String> {
    skim_object_hook(body, |_, _| None::<((), usize)>).map(|(j, p, _)| (j, p))
}

/// [`skim_object`] with a hook that may parse the `data` member itself:
/// called with the body and the value's offset, it returns its own result
/// and the value's end, or None to have the value skipped.
pub(crate) fn skim_object_hook<'a, T>(
    body: &'a [u8],
    mut hook: impl FnMut(&'a [u8], usize) -> Option<(T, usize)>,
) -> Result<(Json, Vec<Payload<'a>>, Option<T>), String> {
    let mut hooked = None;
    let b = body;
    let mut i = ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return Err(if matches!(b.get(i), Some(b'[')) {
            // Syntax errors (e.g. the nesting limit) come first, like the
            // C reader, which parses before checking the type.
            skip_value(b, i)?;
            "not a JSON object".into()
        } else {
            format!("line 0, column {i}, byte {i}: syntax error at beginning of input")
        });
    }
    i += 1;
    let mut obj = Object::new();
    let mut raws = Vec::new();
    i = ws(b, i);
    if b.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            i = ws(b, i);
            if b.get(i) != Some(&b'"') {
                return Err(format!("byte {i}: member name expected"));
            }
            let kend = skip_string(b, i)?;
            let key_raw = &b[i..kend];
            let key = if key_raw.contains(&b'\\') {
                match parse_value(key_raw) {
                    Ok(Json::String(s)) => s,
                    _ => return Err(format!("byte {i}: bad member name")),
                }
            } else {
                String::from_utf8(key_raw[1..key_raw.len() - 1].to_vec())
                    .map_err(|_| format!("byte {i}: invalid UTF-8 in member name"))?
            };
            i = ws(b, kend);
            if b.get(i) != Some(&b':') {
                return Err(format!("byte {i}: ':' expected"));
            }
            i = ws(b, i + 1);
            let vend = match (key.as_str(), hooked.is_none()) {
                ("data", true) => match hook(b, i) {
                    Some((t, end)) => {
                        hooked = Some(t);
                        end
                    }
                    None => skip_value(b, i)?,
                },
                _ => skip_value(b, i)?,
            };
            let slice = &b[i..vend];
            if let Some(&name) = PAYLOAD_MEMBERS.iter().find(|&&n| n == key) {
                raws.retain(|(n, _)| *n != name);
                raws.push((name, slice));
                let placeholder = match slice.first() {
                    Some(b'{') => Json::Object(Object::new()),
                    Some(b'[') => Json::Array(Vec::new()),
                    // Keep scalars as they are (the record parser rejects them).
                    _ => parse_value(slice).map_err(|e| e.to_string())?,
                };
                obj.insert(key, placeholder);
            } else {
                let v = parse_value(slice).map_err(|e| e.to_string())?;
                obj.insert(key, v);
            }
            i = ws(b, vend);
            match b.get(i) {
                Some(b',') => i += 1,
                Some(b'}') => {
                    i += 1;
                    break;
                }
                _ => return Err(format!("byte {i}: ',' or '}}' expected")),
            }
        }
    }
    i = ws(b, i);
    if i != b.len() {
        return Err(format!("byte {i}: trailing garbage at end of input"));
    }
    Ok((Json::Object(obj), raws, hooked))
}

/// Bit `k` of each mask is set when byte `k` of the 64-byte block is a
/// quote, a backslash, an opening bracket (`{` or `[`), a closing one.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block_masks(block: &[u8; 64]) -> (u64, u64, u64, u64) {
    use std::arch::x86_64::*;
    // SSE2 is part of the x86_64 baseline: these are always available.
    unsafe {
        let mut q = 0u64;
        let mut s = 0u64;
        let mut o = 0u64;
        let mut c = 0u64;
        let quote = _mm_set1_epi8(b'"' as i8);
        let bslash = _mm_set1_epi8(b'\\' as i8);
        let brace = _mm_set1_epi8(b'{' as i8);
        let bracket = _mm_set1_epi8(b'[' as i8);
        let cbrace = _mm_set1_epi8(b'}' as i8);
        let cbracket = _mm_set1_epi8(b']' as i8);
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i);
            let m = |x: __m128i| u64::from(_mm_movemask_epi8(x) as u16) << (16 * k);
            q |= m(_mm_cmpeq_epi8(v, quote));
            s |= m(_mm_cmpeq_epi8(v, bslash));
            o |= m(_mm_or_si128(
                _mm_cmpeq_epi8(v, brace),
                _mm_cmpeq_epi8(v, bracket),
            ));
            c |= m(_mm_or_si128(
                _mm_cmpeq_epi8(v, cbrace),
                _mm_cmpeq_epi8(v, cbracket),
            ));
        }
        (q, s, o, c)
    }
}

/// End (exclusive) of the object or array at `b[i]` of JSON already known
/// to be well-formed (a record the load verified), 64 bytes at a time:
/// the quotes not escaped delimit the strings (a running parity of
/// quotes), and only the brackets outside them count. Natively only;
/// elsewhere (and for any other start) [`skip_value`].
#[cfg(target_arch = "x86_64")]
pub fn container_end(b: &[u8], i: usize) -> Option<usize> {
    if !matches!(b.get(i), Some(b'{' | b'[')) {
        return skip_value(b, i).ok();
    }
    let mut depth = 0u32;
    // Whether the block starts inside a string, and with its first byte
    // escaped (the last block ended on a backslash that escapes).
    let mut in_string = 0u64;
    let mut escape_carry = 0u64;
    let mut pos = i;
    let mut tail = [b' '; 64];
    while pos < b.len() {
        let block: &[u8; 64] = match b.get(pos..pos + 64) {
            Some(s) => s.try_into().expect("64 bytes"),
            None => {
                let n = b.len() - pos;
                tail[..n].copy_from_slice(&b[pos..]);
                tail[n..].fill(b' ');
                &tail
            }
        };
        let (quote, bslash, open, close) = block_masks(block);
        // The bytes a backslash escapes: each backslash not itself escaped
        // escapes the next byte.
        let mut escaped = escape_carry;
        escape_carry = 0;
        let mut bs = bslash & !escaped;
        while bs != 0 {
            let k = bs.trailing_zeros();
            if k == 63 {
                escape_carry = 1;
                bs = 0;
            } else {
                escaped |= 2 << k;
                bs &= !(3 << k);
            }
        }
        let quote = quote & !escaped;
        // Prefix parity of the quotes: set from an opening quote up to
        // (not including) its closing one.
        let mut inside = quote;
        inside ^= inside << 1;
        inside ^= inside << 2;
        inside ^= inside << 4;
        inside ^= inside << 8;
        inside ^= inside << 16;
        inside ^= inside << 32;
        inside ^= in_string;
        in_string = ((inside as i64) >> 63) as u64;
        let open = open & !inside;
        let close = close & !inside;
        let mut marks = open | close;
        while marks != 0 {
            let k = marks.trailing_zeros();
            if open >> k & 1 == 1 {
                depth += 1;
            } else {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    // (The padding of a short last block has no brackets.)
                    return Some(pos + k as usize + 1);
                }
            }
            marks &= marks - 1;
        }
        pos += 64;
    }
    None
}

/// [`container_end`] off x86_64: the skimmer.
#[cfg(not(target_arch = "x86_64"))]
pub fn container_end(b: &[u8], i: usize) -> Option<usize> {
    skip_value(b, i).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_skip_string(b: &[u8], i: usize) -> Result<usize, ()> {
        let mut j = i + 1;
        while j < b.len() {
            match b[j] {
                b'"' => return Ok(j + 1),
                b'\\' => j += 2,
                c if c < 0x20 => return Err(()),
                _ => j += 1,
            }
        }
        Err(())
    }

    #[test]
    fn word_at_a_time_string_scan_matches_bytewise() {
        let alphabet = [
            b'a', b'"', b'\\', 0x1f, 0x7f, 0xc3, b'x', b' ', 0x20, 0x00, 0xff, b'0',
        ];
        let mut seed = 0x1234_5678_9abc_def0u64;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let mut v = vec![b'"'];
            let mut x = seed;
            for _ in 0..len {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pick = (x >> 60) as usize % alphabet.len();
                // Mostly plain bytes, sometimes a special one.
                v.push(if (x >> 40).is_multiple_of(5) {
                    alphabet[pick]
                } else {
                    b'a' + (pick as u8)
                });
            }
            v.push(b'"');
            assert_eq!(
                skip_string(&v, 0).ok(),
                naive_skip_string(&v, 0).ok(),
                "{v:?}"
            );
        }
    }

    /// `skip_value` for containers without the one-step UUID atom.
    fn skip_value_bytewise(b: &[u8], i: usize) -> Result<usize, ()> {
        let mut stack = Vec::new();
        let mut j = i;
        while j < b.len() {
            match b[j] {
                b'"' => {
                    j = naive_skip_string(b, j)?;
                    continue;
                }
                b'{' | b'[' => {
                    if stack.len() >= MAX_NESTING {
                        return Err(());
                    }
                    stack.push(if b[j] == b'{' { b'}' } else { b']' });
                }
                c @ (b'}' | b']') => {
                    if stack.pop() != Some(c) {
                        return Err(());
                    }
                    if stack.is_empty() {
                        return Ok(j + 1);
                    }
                }
                _ => {}
            }
            j += 1;
        }
        Err(())
    }

    #[test]
    fn uuid_atoms_in_one_step_match_the_bytewise_walk() {
        let good = br#"["uuid","6406d516-5d1a-46fc-84a6-77eefe27fd14"]"#;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let specials = [b'"', b'\\', 0x1f, b']', b'[', b'{', b'}', 0x00, b'x'];
        for n in 0..30_000u32 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // A set of a few atoms, one byte of one of them changed.
            let atoms = 1 + (seed % 3) as usize;
            let mut v = b"[\"set\",[".to_vec();
            for k in 0..atoms {
                if k > 0 {
                    v.push(b',');
                }
                v.extend_from_slice(good);
            }
            v.extend_from_slice(b"]]");
            if n % 4 != 0 {
                let at = 8 + (seed >> 8) as usize % (v.len() - 8);
                v[at] = specials[(seed >> 32) as usize % specials.len()];
            }
            if n % 7 == 0 {
                v.truncate((seed >> 16) as usize % v.len());
            }
            assert_eq!(
                skip_value(&v, 0).ok(),
                skip_value_bytewise(&v, 0).ok(),
                "{}",
                String::from_utf8_lossy(&v)
            );
        }
        // At the nesting limit the atom's bracket is one too many either way.
        let mut deep = vec![b'['; MAX_NESTING];
        deep.extend_from_slice(good);
        deep.extend(vec![b']'; MAX_NESTING]);
        assert_eq!(
            skip_value(&deep, 0).is_err(),
            skip_value_bytewise(&deep, 0).is_err()
        );
        assert!(skip_value(&deep, 0).is_err());
        deep.remove(0);
        deep.pop();
        assert_eq!(skip_value(&deep, 0).ok(), Some(deep.len()));
    }

    #[test]
    fn skims_and_matches_full_parse_outside_payloads() {
        let body = br#"{"eid":"79a87ba7-2d00-444d-8403-abfff575112b","data":[null,{"T":{"a\"}":[1,{"x":"]"}]}}],"term":1,"index":5}
"#;
        let (j, raws) = skim_object(body).unwrap();
        assert_eq!(raws.len(), 1);
        assert_eq!(raws[0].1, &br#"[null,{"T":{"a\"}":[1,{"x":"]"}]}}]"#[..]);
        assert_eq!(j.get("index"), Some(&Json::Integer(5)));
        assert!(skim_object(b"{\"data\":[1,2}").is_err());
        assert!(skim_object(b"{\"data\":\"abc}").is_err());
        assert!(skim_object(b"{\"a\":1} x").is_err());
        assert!(skim_object(b"[1]").is_err());
        let mut deep = b"{\"data\":".to_vec();
        deep.extend(vec![b'['; 5000]);
        deep.extend(vec![b']'; 5000]);
        deep.push(b'}');
        assert!(skim_object(&deep).unwrap_err().contains("nesting"));
    }

    /// A random well-formed JSON value: strings full of escapes, quotes,
    /// backslash runs and brackets, nested containers, some padding.
    fn random_json(seed: &mut u64, depth: u32, out: &mut Vec<u8>) {
        fn next_of(seed: &mut u64, n: u64) -> u64 {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed % n
        }
        let kind = if depth >= 5 {
            next_of(seed, 3)
        } else {
            next_of(seed, 6)
        };
        match kind {
            0 => out.extend_from_slice(b"12.5e3"),
            1 | 2 => {
                out.push(b'"');
                for _ in 0..next_of(seed, 90) {
                    match next_of(seed, 12) {
                        0 => out.extend_from_slice(b"\\\""),
                        1 => out.extend_from_slice(b"\\\\"),
                        2 => out.extend_from_slice(b"\\u007d"),
                        3 => out.push(b'{'),
                        4 => out.push(b']'),
                        5 => out.extend_from_slice("é".as_bytes()),
                        _ => out.push(b'a' + next_of(seed, 26) as u8),
                    }
                }
                out.push(b'"');
            }
            k => {
                let object = k == 3;
                out.push(if object { b'{' } else { b'[' });
                let n = next_of(seed, 6);
                for m in 0..n {
                    if m > 0 {
                        out.push(b',');
                    }
                    for _ in 0..next_of(seed, 3) {
                        out.push(b' ');
                    }
                    if object {
                        out.extend_from_slice(b"\"k\\\"\":");
                    }
                    random_json(seed, depth + 1, out);
                }
                out.push(if object { b'}' } else { b']' });
            }
        }
    }

    #[test]
    fn container_end_agrees_with_the_skimmer() {
        let cases: [&[u8]; 8] = [
            br#"{}"#,
            br#"{"a":1}"#,
            br#"{"a":"}{","b":{"c":[1,{"d":"\"}"}]}}"#,
            br#"{"s":"\\","t":"\\\"}"}"#,
            br#"{"m":["map",[["k","v{"],["}","x"]]]}"#,
            br#"{ "x" : { } , "y" : "\u007d" }"#,
            br#"[null,{"Logical_Flow":{"0c1a5e2e-2b1c-4b7e-9d7a-1c2b3d4e5f60":null}}]"#,
            br#"{"a":{"b":{"c":{}}},"z":"]"}"#,
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut inputs: Vec<Vec<u8>> = cases.iter().map(|c| c.to_vec()).collect();
        for _ in 0..3_000 {
            let mut v = Vec::new();
            random_json(&mut seed, 0, &mut v);
            if matches!(v.first(), Some(b'{' | b'[')) {
                inputs.push(v);
            }
        }
        for c in &inputs {
            // At every offset of a 64-byte block, with more after it.
            for pad in 0..70 {
                let mut b = vec![b' '; pad];
                b.extend_from_slice(c);
                let tail = b.len();
                b.extend_from_slice(br#","after":{"x":"\\"}}"#);
                assert_eq!(
                    container_end(&b, pad),
                    skip_value(&b, pad).ok(),
                    "{}",
                    String::from_utf8_lossy(c)
                );
                assert_eq!(container_end(&b, pad), Some(tail));
            }
        }
        // Unbalanced or cut short: no end.
        for c in [&br#"{"a":1"#[..], br#"{"a":"}"#, br#"{"a":"\"#, br#"[[]"#] {
            assert_eq!(container_end(c, 0), None, "{}", String::from_utf8_lossy(c));
        }
    }
}
