//! The JSON parser, after the C parser's rules and messages (see the
//! parent module): a lexer over the bytes, an explicit stack for nesting,
//! strings unescaped as `json_string_unescape` does, numbers normalized.

use super::{Json, ObjectBuilder, MAX_NESTING};
use std::fmt;

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
