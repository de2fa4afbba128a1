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
        self.members
            .sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
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

fn write_integer(i: i64, out: &mut Vec<u8>) {
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

fn write_string(s: &str, out: &mut Vec<u8>) {
    write_string_bytes(s.as_bytes(), out)
}

/// Writes a string's bytes quoted, escaping as §5.2 says; other bytes,
/// including those that are not UTF-8, go out as they are (as in C).
fn write_string_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
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

/// Serialized length of a string, quotes included.
pub fn string_serialized_len(s: &str) -> usize {
    bytes_serialized_len(s.as_bytes())
}

fn bytes_serialized_len(b: &[u8]) -> usize {
    // Most strings escape nothing: one counting pass without early exit
    // (which the compiler vectorizes) finds out, and only the others are
    // measured byte by byte.
    let escaped = b.iter().filter(|&&c| c < 0x20 || c == b'"' || c == b'\\');
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

// ---------------------------------------------------------------------------
// Parser

/// A JSON syntax error, positioned like the C parser reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// 0-based byte offset of the character at which the error was detected.
    pub offset: usize,
    /// 0-based line number.
    pub line: usize,
    /// 0-based column (bytes since the last LF).
    pub column: usize,
    /// What went wrong, in the C parser's words where it has them.
    pub message: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}, byte {}: {}",
            self.line, self.column, self.offset, self.message
        )
    }
}

impl std::error::Error for JsonError {}

fn make_error(input: &[u8], offset: usize, message: String) -> JsonError {
    let offset = offset.min(input.len());
    let before = &input[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count();
    let column = match before.iter().rposition(|&b| b == b'\n') {
        Some(p) => offset - p - 1,
        None => offset,
    };
    JsonError {
        offset,
        line,
        column,
        message,
    }
}

#[derive(Debug)]
enum Tok {
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Colon,
    Comma,
    Value(Json),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    End,
    ObjectInit,
    ObjectName,
    ObjectColon,
    ObjectValue,
    ObjectNext,
    ArrayInit,
    ArrayValue,
    ArrayNext,
}

enum Frame {
    Array(Vec<Json>),
    Object(ObjectBuilder, Option<String>),
}

/// Parses one JSON document (top level object or array, optionally
/// surrounded by whitespace), exactly as ovsdb-server's parser accepts it.
pub fn parse(input: &[u8]) -> Result<Json, JsonError> {
    Parser::new(input, false).run()
}

/// Like [`parse`], but also accepts a bare scalar at the top level (a
/// convenience for tests and tools; OVS itself never accepts that).
pub fn parse_value(input: &[u8]) -> Result<Json, JsonError> {
    Parser::new(input, true).run()
}

struct Parser<'a> {
    input: &'a [u8],
    any_top: bool,
    state: State,
    stack: Vec<Frame>,
    result: Option<Json>,
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a> Parser<'a> {
    fn new(input: &'a [u8], any_top: bool) -> Self {
        Parser {
            input,
            any_top,
            state: State::Start,
            stack: Vec::new(),
            result: None,
        }
    }

    fn err(&self, offset: usize, msg: impl Into<String>) -> JsonError {
        make_error(self.input, offset, msg.into())
    }

    fn run(mut self) -> Result<Json, JsonError> {
        let input = self.input;
        let n = input.len();
        let mut i = 0;
        while i < n {
            let c = input[i];
            if is_ws(c) {
                i += 1;
                continue;
            }
            match c {
                b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                    let t = match c {
                        b'{' => Tok::LBrace,
                        b'}' => Tok::RBrace,
                        b'[' => Tok::LBracket,
                        b']' => Tok::RBracket,
                        b':' => Tok::Colon,
                        _ => Tok::Comma,
                    };
                    self.token(t, i)?;
                    i += 1;
                }
                b'a'..=b'z' => {
                    let start = i;
                    let mut j = i;
                    while j < n && input[j].is_ascii_alphabetic() {
                        j += 1;
                    }
                    let word = &input[start..j];
                    let v = match word {
                        b"true" => Json::Bool(true),
                        b"false" => Json::Bool(false),
                        b"null" => Json::Null,
                        _ => {
                            return Err(self.err(
                                j,
                                format!("invalid keyword '{}'", String::from_utf8_lossy(word)),
                            ))
                        }
                    };
                    self.token(Tok::Value(v), j)?;
                    i = j;
                }
                b'-' | b'0'..=b'9' => {
                    let start = i;
                    let mut j = i;
                    while j < n && b".0123456789eE-+".contains(&input[j]) {
                        j += 1;
                    }
                    let v = lex_number(&input[start..j]).map_err(|m| self.err(j, m))?;
                    self.token(Tok::Value(v), j)?;
                    i = j;
                }
                b'"' => {
                    let start = i + 1;
                    let mut j = start;
                    let mut has_escape = false;
                    loop {
                        // Skip 8 plain bytes at a time.
                        while j + 8 <= n && !swar_special(&input[j..j + 8]) {
                            j += 8;
                        }
                        if j >= n {
                            return Err(self.err(n, "unexpected end of input in quoted string"));
                        }
                        let d = input[j];
                        if d == b'\\' {
                            has_escape = true;
                            // The escaped byte is taken verbatim by the lexer.
                            j += 2;
                            continue;
                        }
                        if d == b'"' {
                            break;
                        }
                        if d < 0x20 {
                            return Err(self
                                .err(j, format!("U+{:04X} must be escaped in quoted string", d)));
                        }
                        j += 1;
                    }
                    let raw = &input[start..j];
                    let v = if has_escape {
                        match String::from_utf8(unescape_bytes(raw).map_err(|m| self.err(j, m))?) {
                            Ok(s) => Json::String(s),
                            Err(e) => Json::NonUtf8(e.into_bytes()),
                        }
                    } else {
                        match std::str::from_utf8(raw) {
                            Ok(s) => Json::String(s.to_string()),
                            Err(_) => Json::NonUtf8(raw.to_vec()),
                        }
                    };
                    self.token(Tok::Value(v), j)?;
                    i = j + 1;
                }
                _ => {
                    let msg = if (0x20..0x7f).contains(&c) {
                        format!("invalid character '{}'", c as char)
                    } else {
                        format!("invalid character U+{:04x}", c)
                    };
                    return Err(self.err(i, msg));
                }
            }
        }
        match self.state {
            State::Start => Err(self.err(n, "empty input stream")),
            State::End => self
                .result
                .take()
                .ok_or_else(|| self.err(n, "empty input stream")),
            _ => Err(self.err(n, "unexpected end of input")),
        }
    }

    fn push(&mut self, frame: Frame, state: State, pos: usize) -> Result<(), JsonError> {
        if self.stack.len() >= MAX_NESTING {
            return Err(self.err(
                pos,
                format!("input exceeds maximum nesting depth {}", MAX_NESTING),
            ));
        }
        self.stack.push(frame);
        self.state = state;
        Ok(())
    }

    /// Adds a complete value to the innermost container (or finishes).
    fn put_value(&mut self, v: Json) {
        match self.stack.last_mut() {
            Some(Frame::Array(a)) => {
                a.push(v);
                self.state = State::ArrayNext;
            }
            Some(Frame::Object(o, name)) => {
                let name = name.take().unwrap_or_default();
                o.put(name, v);
                self.state = State::ObjectNext;
            }
            None => {
                self.result = Some(v);
                self.state = State::End;
            }
        }
    }

    fn pop(&mut self) {
        let v = match self.stack.pop() {
            Some(Frame::Array(a)) => Json::Array(a),
            Some(Frame::Object(o, _)) => Json::Object(o.finish()),
            None => return,
        };
        self.put_value(v);
    }

    fn value(&mut self, t: Tok, pos: usize) -> Result<(), JsonError> {
        match t {
            Tok::LBrace => self.push(
                Frame::Object(ObjectBuilder::default(), None),
                State::ObjectInit,
                pos,
            ),
            Tok::LBracket => self.push(Frame::Array(Vec::with_capacity(2)), State::ArrayInit, pos),
            Tok::Value(v) => {
                self.put_value(v);
                Ok(())
            }
            _ => Err(self.err(pos, "syntax error expecting value")),
        }
    }

    fn token(&mut self, t: Tok, pos: usize) -> Result<(), JsonError> {
        match self.state {
            State::Start => match t {
                Tok::LBrace | Tok::LBracket => self.value(t, pos),
                Tok::Value(v) if self.any_top => {
                    self.put_value(v);
                    Ok(())
                }
                _ => Err(self.err(pos, "syntax error at beginning of input")),
            },
            State::End => Err(self.err(pos, "trailing garbage at end of input")),
            State::ObjectInit | State::ObjectName => {
                if self.state == State::ObjectInit && matches!(t, Tok::RBrace) {
                    self.pop();
                    return Ok(());
                }
                match t {
                    Tok::Value(Json::String(s)) => {
                        if let Some(Frame::Object(_, name)) = self.stack.last_mut() {
                            *name = Some(s);
                        }
                        self.state = State::ObjectColon;
                        Ok(())
                    }
                    Tok::Value(Json::NonUtf8(_)) => {
                        Err(self.err(pos, "invalid UTF-8 in member name"))
                    }
                    _ => Err(self.err(pos, "syntax error parsing object expecting string")),
                }
            }
            State::ObjectColon => match t {
                Tok::Colon => {
                    self.state = State::ObjectValue;
                    Ok(())
                }
                _ => Err(self.err(pos, "syntax error parsing object expecting ':'")),
            },
            State::ObjectValue => self.value(t, pos),
            State::ObjectNext => match t {
                Tok::Comma => {
                    self.state = State::ObjectName;
                    Ok(())
                }
                Tok::RBrace => {
                    self.pop();
                    Ok(())
                }
                _ => Err(self.err(pos, "syntax error expecting '}' or ','")),
            },
            State::ArrayInit | State::ArrayValue => {
                if self.state == State::ArrayInit && matches!(t, Tok::RBracket) {
                    self.pop();
                    return Ok(());
                }
                self.value(t, pos)
            }
            State::ArrayNext => match t {
                Tok::Comma => {
                    self.state = State::ArrayValue;
                    Ok(())
                }
                Tok::RBracket => {
                    self.pop();
                    Ok(())
                }
                _ => Err(self.err(pos, "syntax error expecting ']' or ','")),
            },
        }
    }
}

/// Whether an 8-byte chunk may contain `"`, `\\` or a byte < 0x20 (no false
/// negatives; false positives only after a real hit in the same chunk).
#[inline]
fn swar_special(chunk: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut b = [0u8; 8];
    b.copy_from_slice(chunk);
    let w = u64::from_le_bytes(b);
    let q = w ^ (ONES * u64::from(b'"'));
    let bs = w ^ (ONES * u64::from(b'\\'));
    let has_q = q.wrapping_sub(ONES) & !q;
    let has_bs = bs.wrapping_sub(ONES) & !bs;
    let has_ctl = w.wrapping_sub(ONES * 0x20) & !w;
    (has_q | has_bs | has_ctl) & HIGH != 0
}

/// Number lexing with the C parser's normalization rules (§5.3).
fn lex_number(text: &[u8]) -> Result<Json, String> {
    let mut cp = 0;
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let mut significand: u64 = 0;
    let mut imprecise = false;
    let mut negative = false;
    let mut pow10: i64 = 0;
    if at(cp) == b'-' {
        negative = true;
        cp += 1;
    }
    if at(cp) == b'0' {
        cp += 1;
        if at(cp).is_ascii_digit() {
            return Err("leading zeros not allowed".into());
        }
    } else if at(cp).is_ascii_digit() {
        while at(cp).is_ascii_digit() {
            let d = u64::from(at(cp) - b'0');
            if significand <= u64::MAX / 10 {
                significand = significand.wrapping_mul(10).wrapping_add(d);
            } else {
                pow10 += 1;
                if d != 0 {
                    imprecise = true;
                }
            }
            cp += 1;
        }
    } else {
        return Err("'-' must be followed by digit".into());
    }
    if at(cp) == b'.' {
        cp += 1;
        if !at(cp).is_ascii_digit() {
            return Err("decimal point must be followed by digit".into());
        }
        while at(cp).is_ascii_digit() {
            let d = u64::from(at(cp) - b'0');
            if significand <= u64::MAX / 10 {
                significand = significand.wrapping_mul(10).wrapping_add(d);
                pow10 -= 1;
            } else if d != 0 {
                imprecise = true;
            }
            cp += 1;
        }
    }
    if at(cp) == b'e' || at(cp) == b'E' {
        cp += 1;
        let mut neg_exp = false;
        if at(cp) == b'+' {
            cp += 1;
        } else if at(cp) == b'-' {
            neg_exp = true;
            cp += 1;
        }
        if !at(cp).is_ascii_digit() {
            return Err("exponent must contain at least one digit".into());
        }
        let mut exponent: i64 = 0;
        while at(cp).is_ascii_digit() {
            if exponent >= i64::from(i32::MAX / 10) {
                return Err("exponent outside valid range".into());
            }
            exponent = exponent * 10 + i64::from(at(cp) - b'0');
            cp += 1;
        }
        pow10 += if neg_exp { -exponent } else { exponent };
    }
    if cp != text.len() {
        return Err("syntax error in number".into());
    }
    if significand == 0 {
        return Ok(Json::Integer(0));
    }
    if !imprecise {
        while pow10 > 0 && significand < u64::MAX / 10 {
            significand *= 10;
            pow10 -= 1;
        }
        while pow10 < 0 && significand.is_multiple_of(10) {
            significand /= 10;
            pow10 += 1;
        }
        let limit = if negative {
            (i64::MAX as u64) + 1
        } else {
            i64::MAX as u64
        };
        if pow10 == 0 && significand <= limit {
            let v = if negative {
                (significand as i64).wrapping_neg()
            } else {
                significand as i64
            };
            return Ok(Json::Integer(v));
        }
    }
    let s = std::str::from_utf8(text).map_err(|_| "syntax error in number".to_string())?;
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() => Ok(Json::Real(if r == 0.0 { 0.0 } else { r })),
        _ => Err("number outside valid range".into()),
    }
}

fn hex4(raw: &[u8], i: usize) -> Result<u32, String> {
    let Some(h) = raw.get(i..i + 4) else {
        return Err("quoted string ends within \\u escape".into());
    };
    let mut v = 0u32;
    for &c in h {
        let d = (c as char)
            .to_digit(16)
            .ok_or_else(|| "malformed \\u escape".to_string())?;
        v = v * 16 + d;
    }
    if v == 0 {
        return Err("null bytes not supported in quoted strings".into());
    }
    Ok(v)
}

/// Why a quoted string did not unescape to a Rust string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unescape {
    /// `json_string_unescape`'s message.
    Bad(String),
    /// It unescaped to bytes that are not UTF-8 (a `\uXXXX` of a lone
    /// trailing surrogate, which C writes in its 3-byte form); the caller
    /// words it, with [`utf8_violation`].
    NotUtf8(Vec<u8>),
}

/// The inside of a double-quoted string as a Rust string ([`unescape_bytes`]).
pub(crate) fn unescape(raw: &[u8]) -> Result<String, Unescape> {
    let bytes = unescape_bytes(raw).map_err(Unescape::Bad)?;
    String::from_utf8(bytes).map_err(|e| Unescape::NotUtf8(e.into_bytes()))
}

/// The inside of a double-quoted string, unescaped the way OVS's
/// `json_string_unescape` does it, with its messages: for JSON strings (the
/// lexer never passes an unescaped `"`) and for the quoted strings of the
/// ovs-vsctl syntax (`strings`). The bytes need not be UTF-8.
fn unescape_bytes(raw: &[u8]) -> Result<Vec<u8>, String> {
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c == b'"' {
            return Err("quoted string may not include unescaped \"".into());
        }
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let Some(&e) = raw.get(i + 1) else {
            return Err("quoted string may not end with backslash".into());
        };
        i += 2;
        match e {
            b'"' | b'\\' | b'/' => out.push(e),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'u' => {
                let c0 = hex4(raw, i)?;
                i += 4;
                let cp = if (0xd800..0xdc00).contains(&c0) {
                    if raw.get(i) != Some(&b'\\') || raw.get(i + 1) != Some(&b'u') {
                        return Err("malformed escaped surrogate pair".into());
                    }
                    i += 2;
                    let c1 = hex4(raw, i)?;
                    i += 4;
                    if !(0xdc00..0xe000).contains(&c1) {
                        return Err(
                            "second half of escaped surrogate pair is not trailing surrogate"
                                .into(),
                        );
                    }
                    0x10000 + ((c0 - 0xd800) << 10) + (c1 - 0xdc00)
                } else {
                    c0
                };
                match char::from_u32(cp) {
                    Some(ch) => {
                        let mut b = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                    }
                    // A lone trailing surrogate: its 3-byte form, as C's
                    // `ds_put_utf8` writes it (not valid UTF-8).
                    None => out.extend_from_slice(&[
                        0xe0 | (cp >> 12) as u8,
                        0x80 | ((cp >> 6) & 0x3f) as u8,
                        0x80 | (cp & 0x3f) as u8,
                    ]),
                }
            }
            _ => return Err(format!("bad escape \\{}", e as char)),
        }
    }
    Ok(out)
}

/// `None` if `b` is valid UTF-8; otherwise the message OVS's
/// `utf8_validate` gives: "invalid UTF-8 sequence" and the bytes of the first
/// bad sequence up to and including the byte that broke it (a sequence cut
/// short by the end shows C's terminating `0x00`).
pub fn utf8_violation(b: &[u8]) -> Option<String> {
    const TAIL: (u8, u8) = (0x80, 0xbf);
    let mut at = 0;
    while at < b.len() {
        let lead = b[at];
        if lead < 0x80 {
            at += 1;
            continue;
        }
        // The ranges the bytes after `lead` must fall in (RFC 3629).
        let follow: &[(u8, u8)] = match lead {
            0xc2..=0xdf => &[TAIL],
            0xe0 => &[(0xa0, 0xbf), TAIL],
            0xe1..=0xec | 0xee..=0xef => &[TAIL, TAIL],
            0xed => &[(0x80, 0x9f), TAIL],
            0xf0 => &[(0x90, 0xbf), TAIL, TAIL],
            0xf1..=0xf3 => &[TAIL, TAIL, TAIL],
            0xf4 => &[(0x80, 0x8f), TAIL, TAIL],
            _ => &[],
        };
        let byte = |k: usize| b.get(at + k).copied().unwrap_or(0);
        let broke = if follow.is_empty() {
            Some(1)
        } else {
            (1..=follow.len())
                .find(|&k| !(follow[k - 1].0..=follow[k - 1].1).contains(&byte(k)))
                .map(|k| k + 1)
        };
        if let Some(n) = broke {
            let mut msg = String::from("invalid UTF-8 sequence");
            for k in 0..n {
                msg.push_str(&format!(" 0x{:02x}", byte(k)));
            }
            return Some(msg);
        }
        at += 1 + follow.len();
    }
    None
}

// ---------------------------------------------------------------------------
// Hash-table order emulation (§5.4)

fn mhash_add(h: u32, w: u32) -> u32 {
    let mut h = h;
    if w != 0 {
        let mut w = w.wrapping_mul(0xcc9e_2d51);
        w = w.rotate_left(15);
        w = w.wrapping_mul(0x1b87_3593);
        h ^= w;
    }
    h = h.rotate_left(13);
    h.wrapping_mul(5).wrapping_add(0xe654_6b64)
}

fn mhash_finish(h: u32, len: u32) -> u32 {
    let mut h = h ^ len;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// OVS `hash_bytes(key, len, 0)` (murmur-style variant M, little-endian) —
/// the hash `shash` uses for member names.
pub fn shash_hash(key: &[u8]) -> u32 {
    let mut h = 0u32;
    let mut chunks = key.chunks_exact(4);
    for c in &mut chunks {
        h = mhash_add(h, u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        let mut b = [0u8; 4];
        b[..rem.len()].copy_from_slice(rem);
        h = mhash_add(h, u32::from_le_bytes(b));
    }
    mhash_finish(h, key.len() as u32)
}

/// Emulation of OVS's `hmap` bucket structure: which order an `hmap`
/// iterates its nodes in, given their hashes and the insertion/removal
/// history. Nodes are identified by the caller's `usize` ids.
#[derive(Debug, Clone)]
pub struct Hmap {
    mask: usize,
    n: usize,
    /// Each bucket's chain, stored back to front (the front is the last
    /// element, so "push at front" is `Vec::push`).
    buckets: Vec<Vec<(u32, usize)>>,
}

impl Default for Hmap {
    fn default() -> Self {
        Hmap::new()
    }
}

fn calc_mask(capacity: usize) -> usize {
    let mut mask = capacity / 2;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    #[cfg(target_pointer_width = "64")]
    {
        mask |= mask >> 32;
    }
    if mask & 1 != 0 {
        mask |= 2;
    }
    mask
}

impl Hmap {
    pub fn new() -> Self {
        Hmap {
            mask: 0,
            n: 0,
            buckets: vec![Vec::new()],
        }
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// `hmap_insert`: push at the front of its bucket, then grow if needed.
    pub fn insert(&mut self, hash: u32, id: usize) {
        let b = (hash as usize) & self.mask;
        self.buckets[b].push((hash, id));
        self.n += 1;
        if self.n / 2 > self.mask {
            let m = calc_mask(self.n);
            if m > self.mask {
                self.resize(m);
            }
        }
    }

    /// `hmap_remove` (never shrinks). Returns whether the node was present.
    pub fn remove(&mut self, hash: u32, id: usize) -> bool {
        let b = (hash as usize) & self.mask;
        if let Some(p) = self.buckets[b].iter().position(|&(_, i)| i == id) {
            self.buckets[b].remove(p);
            self.n -= 1;
            true
        } else {
            false
        }
    }

    fn resize(&mut self, new_mask: usize) {
        let mut nb: Vec<Vec<(u32, usize)>> = vec![Vec::new(); new_mask + 1];
        for chain in &self.buckets {
            // front to back
            for &(h, id) in chain.iter().rev() {
                nb[(h as usize) & new_mask].push((h, id));
            }
        }
        self.buckets = nb;
        self.mask = new_mask;
    }

    /// `hmap_first`: the first node in iteration order.
    pub fn first(&self) -> Option<usize> {
        self.first_from(0)
    }

    fn first_from(&self, bucket: usize) -> Option<usize> {
        self.buckets
            .iter()
            .skip(bucket)
            .find_map(|chain| chain.last().map(|&(_, id)| id))
    }

    /// `hmap_next`: the node after `id` (inserted with `hash`) in the
    /// current layout, as `HMAP_FOR_EACH_SAFE` computes it before running
    /// the loop body. None at the end or if `id` is not in the map.
    pub fn next(&self, hash: u32, id: usize) -> Option<usize> {
        let b = (hash as usize) & self.mask;
        let chain = self.buckets.get(b)?;
        let p = chain.iter().position(|&(_, i)| i == id)?;
        // Chains are stored back to front: the next node is at p - 1.
        match p.checked_sub(1) {
            Some(q) => chain.get(q).map(|&(_, i)| i),
            None => self.first_from(b + 1),
        }
    }

    /// Node ids in iteration order (buckets ascending, chains front to back).
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.buckets
            .iter()
            .flat_map(|chain| chain.iter().rev().map(|&(_, id)| id))
    }

    /// Iteration order as a vector.
    pub fn order(&self) -> Vec<usize> {
        self.iter().collect()
    }
}

/// Iteration order of an OVS `shash` into which `insertion` was inserted
/// in this order: indexes into `insertion`. A repeated name keeps the
/// position of its first insertion and contributes only that index.
pub fn shash_order<K: AsRef<str>>(insertion: &[K]) -> Vec<usize> {
    shash_order_with(HashVariant::Murmur, insertion)
}

/// [`shash_order`] for a chosen build variant of the hash function.
pub fn shash_order_with<K: AsRef<str>>(variant: HashVariant, insertion: &[K]) -> Vec<usize> {
    // One name or none has one order: no hash table to build (a request's
    // one-column row is common).
    if insertion.len() < 2 {
        return (0..insertion.len()).collect();
    }
    let mut map = Hmap::new();
    let mut seen: FnvMap<&str, ()> = FnvMap::default();
    for (i, k) in insertion.iter().enumerate() {
        let k = k.as_ref();
        if seen.insert(k, ()).is_some() {
            continue;
        }
        map.insert(variant.hash(k.as_bytes()), i);
    }
    map.order()
}

/// Which `hash_bytes` an OVS build uses (§5.4): chosen at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HashVariant {
    /// Murmur-style (variant M): the portable default, e.g. Debian's
    /// x86-64 and aarch64 packages.
    #[default]
    Murmur,
    /// CRC32-C (variant C): builds targeting SSE4.2 or the ARMv8 CRC
    /// extension.
    Crc32c,
}

impl HashVariant {
    pub fn hash(self, key: &[u8]) -> u32 {
        match self {
            HashVariant::Murmur => shash_hash(key),
            HashVariant::Crc32c => shash_hash_crc32c(key),
        }
    }
}

const fn crc32c_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC32C: [u32; 256] = crc32c_table();

/// CRC-32C (reflected, no initial or final inversion) of `bytes` from
/// state `crc` — what the SSE4.2 `crc32` instruction computes.
fn crc32c_update(mut crc: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        crc = CRC32C[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// OVS `hash_bytes(key, len, 0)` for builds with hardware CRC32-C
/// (variant C of §5.4).
pub fn shash_hash_crc32c(key: &[u8]) -> u32 {
    let mut h = 0u32;
    let mut chunks = key.chunks_exact(4);
    for c in &mut chunks {
        h = crc32c_update(h, c);
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        let mut b = [0u8; 4];
        b[..rem.len()].copy_from_slice(rem);
        h = crc32c_update(h, &b);
    }
    let x = crc32c_update(h, &(key.len() as u64).to_le_bytes()).wrapping_mul(0x8052_04f3);
    x ^ (x >> 16)
}

/// Iteration order of an `hmap` keyed by arbitrary 32-bit hashes inserted
/// in this order (e.g. txn rows keyed by a UUID's first 32 bits): indexes
/// into `hashes`.
pub fn hmap_order(hashes: &[u32]) -> Vec<usize> {
    let mut map = Hmap::new();
    for (i, &h) in hashes.iter().enumerate() {
        map.insert(h, i);
    }
    map.order()
}
