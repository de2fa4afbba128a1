//! Byte-exact JSON as ovsdb-server reads and writes it (ovsdb-formats.md §5).
//!
//! * [`parse`] follows the C parser's rules: top level must be an object or
//!   array, numbers are normalized (an integral value that fits in `i64`
//!   becomes [`Json::Integer`], whatever its spelling), nesting is limited to
//!   1000 levels (checked with an explicit stack, so hostile input cannot
//!   overflow the call stack), duplicate members keep the first position and
//!   the last value, errors carry `line`, `column` and `byte` (0-based).
//! * Like the C parser, strings are not validated as UTF-8 here: OVSDB
//!   checks each string atom later ("constraint violation: not a valid UTF-8
//!   string: ..."). A string whose bytes are not UTF-8 (raw bytes, or a `\u`
//!   escape of a lone trailing surrogate, which C writes in its 3-byte form)
//!   parses as [`Json::NonUtf8`]; [`utf8_violation`] words it as OVS's
//!   `utf8_validate` does. One difference is left: a member *name* that is
//!   not UTF-8 is a parse error ("invalid UTF-8 in member name"), as member
//!   names are Rust strings.
//! * The writer emits compact JSON with members in stored order, strings
//!   escaped as in §5.2 and reals formatted like C `printf("%.15g")`.
//! * [`shash_hash`], [`Hmap`] and [`Object::reorder_shash`] emulate the
//!   member order of OVS's hash tables (§5.4, variant M) so that records can
//!   be re-encoded byte for byte.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

mod hash_order;
mod parse;
pub use hash_order::{
    hmap_order, shash_hash, shash_hash_crc32c, shash_order, shash_order_with, HashVariant, Hmap,
};
pub use parse::{parse, parse_value, utf8_violation, JsonError};
pub(crate) use parse::{unescape, Unescape};

/// Maximum nesting depth accepted by the parser (same as ovsdb-server).
pub const MAX_NESTING: usize = 1000;

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Integer(i64),
    Real(f64),
    String(String),
    /// A string whose bytes are not valid UTF-8, kept as OVS's parser keeps
    /// it; OVSDB rejects it where a string atom is read.
    NonUtf8(Vec<u8>),
    Array(Vec<Json>),
    Object(Object),
}

/// A JSON object whose members keep their insertion (or parse) order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Object {
    members: Vec<(String, Json)>,
}

impl Object {
    pub fn new() -> Self {
        Object::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        Object {
            members: Vec::with_capacity(n),
        }
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Value of member `name` (linear scan).
    pub fn get(&self, name: &str) -> Option<&Json> {
        self.members.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut Json> {
        self.members
            .iter_mut()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets member `name`. An existing member keeps its position and gets the
    /// new value (like `shash_replace`); a new member is appended. Returns the
    /// old value, if any.
    pub fn insert(&mut self, name: impl Into<String>, value: Json) -> Option<Json> {
        let name = name.into();
        if let Some(slot) = self.get_mut(&name) {
            return Some(std::mem::replace(slot, value));
        }
        self.members.push((name, value));
        None
    }

    /// Appends a member without checking for duplicates (the caller promises
    /// the name is new).
    pub fn push_unchecked(&mut self, name: impl Into<String>, value: Json) {
        self.members.push((name.into(), value));
    }

    /// Removes member `name` and returns its value.
    pub fn remove(&mut self, name: &str) -> Option<Json> {
        let pos = self.members.iter().position(|(k, _)| k == name)?;
        Some(self.members.remove(pos).1)
    }

    /// Members in stored order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Json)> {
        self.members.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut Json)> {
        self.members.iter_mut().map(|(k, v)| (k.as_str(), v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(k, _)| k.as_str())
    }

    /// Consumes the object, yielding members in stored order.
    pub fn into_members(self) -> Vec<(String, Json)> {
        self.members
    }

    /// Builds an object from members; later duplicates replace the value of
    /// the first occurrence in place.
    pub fn from_members(members: Vec<(String, Json)>) -> Self {
        let mut b = ObjectBuilder::default();
        for (k, v) in members {
            b.put(k, v);
        }
        b.finish()
    }

    /// Reorders the members (taken to be in insertion order) into the
    /// iteration order of an OVS `shash` filled in that order (§5.4, variant M).
    /// Not recursive.
    pub fn reorder_shash(&mut self) {
        self.reorder_shash_with(HashVariant::Murmur);
    }

    /// [`Object::reorder_shash`] for a chosen hash variant.
    pub fn reorder_shash_with(&mut self, variant: HashVariant) {
        let order = shash_order_with(
            variant,
            &self.members.iter().map(|(k, _)| k).collect::<Vec<_>>(),
        );
        let mut old: Vec<Option<(String, Json)>> = std::mem::take(&mut self.members)
            .into_iter()
            .map(Some)
            .collect();
        self.members = order.into_iter().filter_map(|i| old[i].take()).collect();
    }

    /// Sorts members bytewise by name (not recursive).
    pub fn sort(&mut self) {
        crate::order::sort_small_by(&mut self.members, |a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    }
}

impl FromIterator<(String, Json)> for Object {
    fn from_iter<T: IntoIterator<Item = (String, Json)>>(iter: T) -> Self {
        Object::from_members(iter.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Object {
    type Item = (&'a str, &'a Json);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, Json)>,
        fn(&'a (String, Json)) -> (&'a str, &'a Json),
    >;
    fn into_iter(self) -> Self::IntoIter {
        fn f(m: &(String, Json)) -> (&str, &Json) {
            (m.0.as_str(), &m.1)
        }
        self.members.iter().map(f)
    }
}

/// FNV-1a, used only for the duplicate-member index while parsing (a
/// deterministic hasher; the order of members never depends on it).
#[derive(Default)]
struct Fnv(u64);
impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}
type FnvMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// Builds an object with "last value wins at the position of the first"
/// semantics, in O(1) per member.
#[derive(Default)]
struct ObjectBuilder {
    members: Vec<(String, Json)>,
    index: Option<FnvMap<String, usize>>,
}

impl ObjectBuilder {
    const INDEX_THRESHOLD: usize = 8;

    fn put(&mut self, name: String, value: Json) {
        if let Some(index) = &mut self.index {
            if let Some(&i) = index.get(&name) {
                self.members[i].1 = value;
            } else {
                index.insert(name.clone(), self.members.len());
                self.members.push((name, value));
            }
            return;
        }
        if let Some(slot) = self.members.iter_mut().find(|(k, _)| *k == name) {
            slot.1 = value;
            return;
        }
        self.members.push((name, value));
        if self.members.len() >= Self::INDEX_THRESHOLD {
            let mut index = FnvMap::default();
            for (i, (k, _)) in self.members.iter().enumerate() {
                index.insert(k.clone(), i);
            }
            self.index = Some(index);
        }
    }

    fn finish(self) -> Object {
        Object {
            members: self.members,
        }
    }
}

impl Json {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Integer(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Integer(i) => Some(*i as f64),
            Json::Real(r) => Some(*r),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }
    pub fn as_object_mut(&mut self) -> Option<&mut Object> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// Member `name` if this is an object.
    pub fn get(&self, name: &str) -> Option<&Json> {
        self.as_object().and_then(|o| o.get(name))
    }

    /// Name of the JSON type, as OVS error messages spell it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Integer(_) => "integer",
            Json::Real(_) => "real",
            Json::String(_) | Json::NonUtf8(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// Appends the compact serialization (members in stored order).
    pub fn write_compact(&self, out: &mut Vec<u8>) {
        // Explicit stack: deep values (built by code, not the parser) must not
        // overflow the call stack either.
        enum Item<'a> {
            Value(&'a Json),
            Raw(&'static [u8]),
            Member(&'a str, &'a Json),
        }
        let mut stack: Vec<Item> = vec![Item::Value(self)];
        while let Some(item) = stack.pop() {
            match item {
                Item::Raw(b) => out.extend_from_slice(b),
                Item::Member(k, v) => {
                    write_string(k, out);
                    out.push(b':');
                    stack.push(Item::Value(v));
                }
                Item::Value(v) => match v {
                    Json::Null => out.extend_from_slice(b"null"),
                    Json::Bool(true) => out.extend_from_slice(b"true"),
                    Json::Bool(false) => out.extend_from_slice(b"false"),
                    Json::Integer(i) => write_integer(*i, out),
                    Json::Real(r) => write_real(*r, out),
                    Json::String(s) => write_string(s, out),
                    Json::NonUtf8(b) => write_string_bytes(b, out),
                    Json::Array(a) => {
                        out.push(b'[');
                        stack.push(Item::Raw(b"]"));
                        for (i, e) in a.iter().enumerate().rev() {
                            stack.push(Item::Value(e));
                            if i > 0 {
                                stack.push(Item::Raw(b","));
                            }
                        }
                    }
                    Json::Object(o) => {
                        out.push(b'{');
                        stack.push(Item::Raw(b"}"));
                        for (i, (k, v)) in o.members.iter().enumerate().rev() {
                            stack.push(Item::Member(k, v));
                            if i > 0 {
                                stack.push(Item::Raw(b","));
                            }
                        }
                    }
                },
            }
        }
    }

    /// Compact serialization in stored member order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_compact(&mut out);
        out
    }

    /// Compact serialization as a `String`.
    pub fn to_string_compact(&self) -> String {
        // Only a `NonUtf8` string makes the bytes other than UTF-8.
        String::from_utf8_lossy(&self.to_bytes()).into_owned()
    }

    /// Number of bytes `write_compact` would produce.
    pub fn serialized_len(&self) -> usize {
        let mut n = 0usize;
        let mut stack: Vec<&Json> = vec![self];
        let mut buf = Vec::new();
        while let Some(v) = stack.pop() {
            match v {
                Json::Null => n += 4,
                Json::Bool(true) => n += 4,
                Json::Bool(false) => n += 5,
                Json::Integer(_) | Json::Real(_) => {
                    buf.clear();
                    v.write_compact(&mut buf);
                    n += buf.len();
                }
                Json::String(s) => n += string_serialized_len(s),
                Json::NonUtf8(b) => n += bytes_serialized_len(b),
                Json::Array(a) => {
                    n += 2 + a.len().saturating_sub(1);
                    stack.extend(a.iter());
                }
                Json::Object(o) => {
                    n += 2 + (2 * o.len()).saturating_sub(1);
                    for (k, v) in &o.members {
                        n += string_serialized_len(k);
                        stack.push(v);
                    }
                }
            }
        }
        n
    }

    /// A copy with every object's members sorted bytewise, at every depth
    /// (the order of Raft `data`/`prev_data` payloads and of `show-log`).
    pub fn sorted_recursive(&self) -> Json {
        let mut j = self.clone();
        j.sort_recursive();
        j
    }

    /// Sorts every object's members bytewise, at every depth, in place.
    pub fn sort_recursive(&mut self) {
        let mut stack: Vec<&mut Json> = vec![self];
        while let Some(v) = stack.pop() {
            match v {
                Json::Array(a) => stack.extend(a.iter_mut()),
                Json::Object(o) => {
                    o.sort();
                    stack.extend(o.members.iter_mut().map(|(_, v)| v));
                }
                _ => {}
            }
        }
    }

    /// Reorders every object's members, at every depth, from insertion order
    /// to `shash` iteration order (§5.4 variant M).
    pub fn reorder_shash_recursive(&mut self) {
        self.reorder_shash_recursive_with(HashVariant::Murmur);
    }

    /// [`Json::reorder_shash_recursive`] for a chosen hash variant.
    pub fn reorder_shash_recursive_with(&mut self, variant: HashVariant) {
        let mut stack: Vec<&mut Json> = vec![self];
        while let Some(v) = stack.pop() {
            match v {
                Json::Array(a) => stack.extend(a.iter_mut()),
                Json::Object(o) => {
                    o.reorder_shash_with(variant);
                    stack.extend(o.members.iter_mut().map(|(_, v)| v));
                }
                _ => {}
            }
        }
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_compact())
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Self {
        Json::String(s.to_string())
    }
}
impl From<String> for Json {
    fn from(s: String) -> Self {
        Json::String(s)
    }
}
impl From<i64> for Json {
    fn from(i: i64) -> Self {
        Json::Integer(i)
    }
}
impl From<bool> for Json {
    fn from(b: bool) -> Self {
        Json::Bool(b)
    }
}
impl From<Object> for Json {
    fn from(o: Object) -> Self {
        Json::Object(o)
    }
}
impl From<Vec<Json>> for Json {
    fn from(a: Vec<Json>) -> Self {
        Json::Array(a)
    }
}

// ---------------------------------------------------------------------------
// Writer helpers

/// Appends an integer as JSON text.
pub fn write_integer(i: i64, out: &mut Vec<u8>) {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let neg = i < 0;
    let mut u = i.unsigned_abs();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if neg {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[pos..]);
}

/// Writes `r` like C `printf("%.15g", r)`.
/// An object of `members` in order, a repeated name replacing the earlier
/// value as [`Object::insert`] does: the one builder of literal objects for
/// requests, updates and records written by code.
pub fn object<'a>(members: impl IntoIterator<Item = (&'a str, Json)>) -> Json {
    let members = members.into_iter();
    let mut o = Object::new();
    // Room for all at once, not grown member by member.
    o.members.reserve(members.size_hint().0);
    for (k, v) in members {
        o.insert(k, v);
    }
    Json::Object(o)
}

/// A string-to-string OVSDB map, `["map",[[k,v],…]]`, pairs in the given
/// order.
pub fn string_map(pairs: &[(&str, String)]) -> Json {
    Json::Array(vec![
        Json::from("map"),
        Json::Array(
            pairs
                .iter()
                .map(|(k, v)| Json::Array(vec![Json::from(*k), Json::String(v.clone())]))
                .collect(),
        ),
    ])
}

pub fn write_real(r: f64, out: &mut Vec<u8>) {
    out.extend_from_slice(format_g(r, 15).as_bytes());
}

/// C `printf("%.<precision>g", v)` for precision >= 1.
pub fn format_g(v: f64, precision: usize) -> String {
    let p = precision.max(1);
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    // Round to p significant digits (exact decimal rounding, ties to even on
    // the exact binary value — the same as glibc).
    let e_form = format!("{:.*e}", p - 1, v);
    let (mant, exp) = match e_form.split_once('e') {
        Some(x) => x,
        None => return e_form,
    };
    let x: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    if x < -4 || x >= p as i32 {
        // Exponent style: d.ddd e±XX
        let (first, rest) = digits.split_at(1);
        s.push_str(first);
        let rest = rest.trim_end_matches('0');
        if !rest.is_empty() {
            s.push('.');
            s.push_str(rest);
        }
        s.push('e');
        s.push(if x < 0 { '-' } else { '+' });
        let ax = x.unsigned_abs();
        if ax < 10 {
            s.push('0');
        }
        s.push_str(&ax.to_string());
    } else if x >= 0 {
        let int_len = (x as usize) + 1;
        let (int_part, frac) = digits.split_at(int_len.min(digits.len()));
        s.push_str(int_part);
        for _ in digits.len()..int_len {
            s.push('0');
        }
        let frac = frac.trim_end_matches('0');
        if !frac.is_empty() {
            s.push('.');
            s.push_str(frac);
        }
    } else {
        // -4 <= x < 0: 0.000ddd
        let zeros = (-x - 1) as usize;
        let frac = digits.trim_end_matches('0');
        s.push_str("0.");
        for _ in 0..zeros {
            s.push('0');
        }
        s.push_str(frac);
    }
    s
}

/// Appends a string as JSON text: quoted, escaped as §5.2 says.
pub fn write_string(s: &str, out: &mut Vec<u8>) {
    write_string_bytes(s.as_bytes(), out)
}

/// Writes a string's bytes quoted, escaping as §5.2 says; other bytes,
/// including those that are not UTF-8, go out as they are (as in C).
fn write_string_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    // Most strings escape nothing: one counting pass (vectorized, as in
    // `bytes_serialized_len`) finds out, and they are copied whole.
    if bytes.iter().filter(|&&c| needs_escape(c)).count() == 0 {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut start = 0;
    for (i, &c) in bytes.iter().enumerate() {
        let esc: Option<&[u8]> = match c {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            0x08 => Some(b"\\b"),
            0x0c => Some(b"\\f"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            c if c < 0x20 => None,
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        match esc {
            Some(e) => out.extend_from_slice(e),
            None => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(c >> 4) as usize]);
                out.push(HEX[(c & 15) as usize]);
            }
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Whether a string byte is written escaped.
#[inline]
fn needs_escape(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

/// Serialized length of a string, quotes included.
pub fn string_serialized_len(s: &str) -> usize {
    bytes_serialized_len(s.as_bytes())
}

fn bytes_serialized_len(b: &[u8]) -> usize {
    // Most strings escape nothing: one counting pass without early exit
    // (which the compiler vectorizes) finds out, and only the others are
    // measured byte by byte.
    let escaped = b.iter().filter(|&&c| needs_escape(c));
    if escaped.count() == 0 {
        return 2 + b.len();
    }
    let mut n = 2;
    for &c in b {
        n += match c {
            b'"' | b'\\' | 0x08 | 0x0c | b'\n' | b'\r' | b'\t' => 2,
            c if c < 0x20 => 6,
            _ => 1,
        };
    }
    n
}
