//! ovsdb-server's text log format, read from a stream of byte chunks.
//!
//! # The format
//!
//! ovsdb-server writes its log file with vlog's default file pattern
//! `%D{%Y-%m-%dT%H:%M:%S.###Z}|%05N|%c%T|%p|%m` (lib/vlog.c), one message a
//! line:
//!
//! ```text
//! 2026-11-29T21:14:18.237Z|00033|raft|INFO|term 3: 1220 ms timeout expired, starting election
//! ^ UTC time, ms           ^ seq ^module^level^ text (may itself hold '|')
//! ```
//!
//! - time: exactly `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC), checked as a real date;
//! - seq: the process's message counter, at least one decimal digit (vlog pads
//!   it to 5 digits; it grows past 99999);
//! - module: `[A-Za-z0-9_-]+`, optionally followed by the thread name in
//!   parentheses for threads other than the main one (`daemon_unix(monitor)`);
//! - level: `EMER`, `ERR`, `WARN`, `INFO` or `DBG`;
//! - text: the rest of the line, valid UTF-8 without NUL (C strings), may be
//!   empty. A trailing CR (a log edited on Windows) is dropped.
//!
//! [`parse_line`] is strict about all of this and allocates nothing. Lines
//! that are not in the format (multi-line messages' continuations, a
//! truncated first line after rotation, garbage) are *unparsed*: counted in
//! [`LogFile::unparsed`], still present in [`LogFile::index`] so that a UI
//! can show and search them.
//!
//! # Streaming
//!
//! [`LogScanner`] takes the input in chunks of any size ([`LogScanner::push`])
//! and never keeps line text: it keeps at most one partial line of at most
//! [`MAX_LINE`] bytes between chunks. [`LogFile`] holds the recognized
//! [`Event`]s and a compact per-line [`LineInfo`] (offset, length, time,
//! interned module, level); the text is read back from the caller's bytes
//! with [`LogFile::line_text`]. A line longer than [`MAX_LINE`] is cut (only
//! its first [`MAX_LINE`] bytes are parsed), counted in
//! [`LogFile::overlong`], and the rest of it is skipped without buffering:
//! memory does not grow with line length. The result never depends on how
//! the input was chunked.
//!
//! # Not text
//!
//! A binary file named `.log` is reported, not refused: [`LogFile::not_text`]
//! is set (with [`LogFile::not_text_reason`]) when a NUL byte occurs in the
//! first [`SNIFF_BYTES`] bytes, or when more than half of the bytes are in
//! lines that are not valid UTF-8 or contain NUL. (A real log after a crash
//! may hold a run of NULs where the file system had allocated blocks that
//! were never written: that is counted in [`LogFile::nul_bytes`] but does not
//! make a long log "not text".)
//!
//! # Rotation
//!
//! `ovsdb-server.log`, `.log.1`, `.log.2.gz` (decompressed by the caller)
//! are scanned separately and joined with [`join`], which orders the parts by
//! time, renumbers lines and events, and records in [`LineInfo::part`] which
//! input each line came from.
//!
//! # Recognized lines
//!
//! See [`crate::events::recognize`] and [`crate::events::EventKind`]: one
//! event at most per parsed line.

use crate::events::{cluster_named, recognize_in, Event, EventKind, FastHash, Interner, Text};
use std::collections::{BTreeMap, HashMap};

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// Longest line parsed; longer lines are cut to this many bytes (64 KiB).
pub const MAX_LINE: usize = 64 * 1024;

/// A NUL byte in this many first bytes of the input means "not text".
pub const SNIFF_BYTES: u64 = 8 * 1024;

/// Most distinct module names interned (hostile input could have millions);
/// lines of further modules get [`LineInfo::module`] = [`MODULE_OTHER`].
pub const MAX_MODULES: usize = 1024;

/// Module id of unparsed lines and of modules beyond [`MAX_MODULES`].
pub const MODULE_OTHER: u16 = u16::MAX;

/// Log levels of OVS's vlog.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Emer,
    Err,
    Warn,
    Info,
    Dbg,
}

impl Level {
    /// The name vlog writes: `EMER`, `ERR`, `WARN`, `INFO`, `DBG`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Emer => "EMER",
            Level::Err => "ERR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Dbg => "DBG",
        }
    }

    fn from_bytes(b: &[u8]) -> Option<Level> {
        Some(match b {
            b"EMER" => Level::Emer,
            b"ERR" => Level::Err,
            b"WARN" => Level::Warn,
            b"INFO" => Level::Info,
            b"DBG" => Level::Dbg,
            _ => return None,
        })
    }
}

/// One line in the log format, borrowed from the input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogLine<'a> {
    pub time_ms: i64,
    pub seq: u64,
    /// The module name, without the thread (`daemon_unix`).
    pub module: &'a str,
    pub level: Level,
    pub text: &'a str,
    /// The thread name for threads other than the main one (`monitor` in
    /// `daemon_unix(monitor)`), else empty.
    pub thread: &'a str,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn digits(b: &[u8]) -> Option<i64> {
    let mut v: i64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as i64;
    }
    Some(v)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` (24 bytes) to UTC epoch milliseconds.
pub fn parse_time(t: &[u8]) -> Option<i64> {
    if t.len() != 24
        || t[4] != b'-'
        || t[7] != b'-'
        || t[10] != b'T'
        || t[13] != b':'
        || t[16] != b':'
        || t[19] != b'.'
        || t[23] != b'Z'
    {
        return None;
    }
    let y = digits(&t[0..4])?;
    let mo = digits(&t[5..7])?;
    let d = digits(&t[8..10])?;
    let h = digits(&t[11..13])?;
    let mi = digits(&t[14..16])?;
    let s = digits(&t[17..19])?;
    let ms = digits(&t[20..23])?;
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mdays = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if d < 1 || d > mdays || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    Some(((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + ms)
}

/// The last minute a scanner parsed: consecutive lines almost always share
/// `YYYY-MM-DDTHH:MM`, so only the seconds and milliseconds of the next
/// one need reading. Gives exactly what [`parse_time`] gives.
#[derive(Clone, Copy, Debug, Default)]
struct MinuteCache {
    /// `YYYY-MM-DDTHH:MM` of the last time parsed, if any.
    key: Option<[u8; 16]>,
    /// Its epoch ms at second 0.
    base: i64,
}

impl MinuteCache {
    #[inline]
    fn parse(&mut self, t: &[u8]) -> Option<i64> {
        if t.len() != 24 {
            return None;
        }
        if self.key.is_some_and(|k| k[..] == t[..16]) {
            if t[16] != b':' || t[19] != b'.' || t[23] != b'Z' {
                return None;
            }
            let s = digits(&t[17..19])?;
            let ms = digits(&t[20..23])?;
            if s > 60 {
                return None;
            }
            return Some(self.base + s * 1000 + ms);
        }
        let v = parse_time(t)?;
        // parse_time checked these.
        let s = digits(&t[17..19])?;
        let ms = digits(&t[20..23])?;
        self.base = v - s * 1000 - ms;
        self.key = t[..16].try_into().ok();
        Some(v)
    }
}

fn is_module_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// Parses one line (without its LF). Strict (see the module docs); no
/// allocation.
pub fn parse_line(line: &[u8]) -> Option<LogLine<'_>> {
    if memchr::memchr(0, line).is_some() {
        return None;
    }
    parse_nul_free(line, &mut MinuteCache::default())
}

/// [`parse_line`] of a line the caller knows holds no NUL byte.
///
/// One UTF-8 check covers the whole line: every field ends at an ASCII
/// delimiter, so the line is valid UTF-8 exactly when each field is.
#[inline]
fn parse_nul_free<'a>(line: &'a [u8], minute: &mut MinuteCache) -> Option<LogLine<'a>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() < 24 + 1 + 1 + 1 + 1 + 1 + 3 + 1 || line[24] != b'|' {
        return None;
    }
    let time_ms = minute.parse(&line[..24])?;
    // seq: 1 to 20 digits, then '|'
    let mut at = 25;
    let mut seq: u64 = 0;
    while let Some(&c) = line.get(at).filter(|c| c.is_ascii_digit()) {
        seq = seq.checked_mul(10)?.checked_add((c - b'0') as u64)?;
        at += 1;
    }
    if at == 25 || at - 25 > 20 || line.get(at) != Some(&b'|') {
        return None;
    }
    at += 1;
    // module, optional (thread)
    let m0 = at;
    while line.get(at).is_some_and(|&c| is_module_byte(c)) {
        at += 1;
    }
    if at == m0 || at == line.len() {
        return None;
    }
    let module = (m0, at);
    let mut thread = (at, at);
    if line[at] == b'(' {
        let close = line[at..].iter().position(|&c| c == b')' || c == b'|')?;
        if line[at + close] != b')' || close == 1 {
            return None;
        }
        thread = (at + 1, at + close);
        at += close + 1;
    }
    if line.get(at) != Some(&b'|') {
        return None;
    }
    at += 1;
    let l = line[at..].iter().take(5).position(|&c| c == b'|')?;
    let level = Level::from_bytes(&line[at..at + l])?;
    let text = at + l + 1;
    let s = std::str::from_utf8(line).ok()?;
    Some(LogLine {
        time_ms,
        seq,
        module: &s[module.0..module.1],
        level,
        text: &s[text..],
        thread: &s[thread.0..thread.1],
    })
}

/// Per-line flags in [`LineInfo::flags`].
pub mod flags {
    /// The line was longer than [`super::MAX_LINE`]; only its start was parsed.
    pub const OVERLONG: u8 = 1;
    /// The last line of its part, with no LF after it.
    pub const NO_LF: u8 = 2;
    /// The line holds a NUL byte or is not valid UTF-8 (in its first
    /// [`super::MAX_LINE`] bytes for overlong lines, plus NULs anywhere).
    pub const NOT_TEXT: u8 = 4;
}

/// What the index keeps of one line (24 bytes).
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineInfo {
    /// Byte offset of the line's first byte in its part.
    pub offset: u64,
    /// UTC epoch ms of the line; for unparsed lines, that of the last parsed
    /// line before it in the same part (0 if none).
    pub time_ms: i64,
    /// Length in bytes without LF (and without a CR before it), saturated at
    /// `u32::MAX`.
    pub len: u32,
    /// Index into [`LogFile::modules`], or [`MODULE_OTHER`].
    pub module: u16,
    /// `None`: the line is not in the log format (unparsed).
    pub level: Option<Level>,
    /// [`flags`] bits.
    pub flags: u8,
    /// Which part (input of [`join`]) the line is in; 0 for a single scan.
    pub part: u16,
}

impl LineInfo {
    pub fn parsed(&self) -> bool {
        self.level.is_some()
    }
}

/// One input of [`join`] (or the single input of a scan).
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PartInfo {
    /// Position of this part in the `parts` given to [`join`].
    pub source: usize,
    pub first_line: u64,
    pub lines: u64,
    pub bytes: u64,
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
}

/// What a whole log (one server's, rotated parts joined) says.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LogFile {
    /// Lines: LF-terminated ones plus a last one without LF, if any.
    pub lines: u64,
    /// Lines that are not in the log format.
    pub unparsed: u64,
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
    pub events: Vec<Event>,

    /// One entry per line, in line order.
    pub index: Vec<LineInfo>,
    /// Interned module names ([`LineInfo::module`]).
    pub modules: Vec<String>,
    /// Parsed lines per level: EMER, ERR, WARN, INFO, DBG.
    pub level_counts: [u64; 5],
    /// Input bytes.
    pub bytes: u64,
    /// Lines longer than [`MAX_LINE`].
    pub overlong: u64,
    /// NUL bytes anywhere in the input.
    pub nul_bytes: u64,
    /// Lines holding a NUL or invalid UTF-8.
    pub not_text_lines: u64,
    /// The input is not a text log (see the module docs).
    pub not_text: bool,
    pub not_text_reason: Option<String>,
    /// Parsed lines whose time is earlier than the line before (clock steps,
    /// or parts joined in the wrong order).
    pub time_steps_back: u64,

    /// Last `local server ID is …` (short ID).
    pub server_id: Option<String>,
    /// Last `learned cluster ID …` (short ID), else the cluster the first
    /// membership or snapshot line names (`adding … to cluster 196d`).
    pub cluster_id: Option<String>,
    /// Last `ovsdb-server (Open vSwitch) …` version.
    pub version: Option<String>,
    /// Server short ID to address, from `learned server ID` on a connection
    /// joined with that connection's `learned remote address` (or its name,
    /// for outgoing connections), and from `starting to add server`.
    pub servers: BTreeMap<String, String>,
    /// The inputs, in joined (time) order.
    pub parts: Vec<PartInfo>,
}

impl LogFile {
    /// The byte range of line `n` in its part, and that part's `source`.
    pub fn line_range(&self, n: u64) -> Option<(usize, std::ops::Range<usize>)> {
        let li = self.index.get(usize::try_from(n).ok()?)?;
        let source = self.parts.get(li.part as usize).map_or(0, |p| p.source);
        let start = usize::try_from(li.offset).ok()?;
        Some((source, start..start.checked_add(li.len as usize)?))
    }

    /// The bytes of line `n` (without LF), read back from `source`, the
    /// bytes of the part the line is in (see [`LogFile::line_range`]).
    /// `None` if the line does not exist or `source` is too short.
    pub fn line_text<'a>(&self, n: u64, source: &'a [u8]) -> Option<&'a [u8]> {
        let (_, r) = self.line_range(n)?;
        source.get(r)
    }

    /// Line numbers whose text contains `needle` (case-sensitive);
    /// `sources[i]` are the bytes of input `i` of [`join`] (one for a scan).
    pub fn find<'s>(
        &'s self,
        sources: &'s [&'s [u8]],
        needle: &'s [u8],
    ) -> impl Iterator<Item = u64> + 's {
        (0..self.lines).filter(move |&n| {
            let Some((src, r)) = self.line_range(n) else {
                return false;
            };
            let Some(text) = sources.get(src).and_then(|s| s.get(r)) else {
                return false;
            };
            needle.is_empty() || text.windows(needle.len()).any(|w| w == needle)
        })
    }

    /// Name of a module id ([`LineInfo::module`]).
    pub fn module_name(&self, id: u16) -> Option<&str> {
        self.modules.get(id as usize).map(|s| s.as_str())
    }
}

/// Streaming reader of one log part: [`push`](LogScanner::push) chunks,
/// then [`finish`](LogScanner::finish).
#[derive(Debug, Default)]
pub struct LogScanner {
    out: LogFile,
    /// [`LogScanner::index_only`].
    skip_events: bool,
    /// The partial line carried over between chunks (at most MAX_LINE bytes).
    carry: Vec<u8>,
    /// Offset of the current (partial) line's first byte.
    line_start: u64,
    /// Total length so far of the current partial line.
    line_len: u64,
    /// NULs seen in the current partial line.
    line_nuls: u64,
    /// Input offset of the next byte.
    pos: u64,
    first_nul: Option<u64>,
    not_text_bytes: u64,
    last_time: i64,
    modules: HashMap<Box<[u8]>, u16>,
    // connection name -> learned sid / remote address / outgoing.
    conn_sid: HashMap<Text, Text, FastHash>,
    conn_addr: HashMap<Text, Text, FastHash>,
    /// The events' texts.
    texts: Interner,
    minute: MinuteCache,
}

impl LogScanner {
    pub fn new() -> LogScanner {
        LogScanner::default()
    }

    /// A scanner that keeps the line index, counts and identity fields but
    /// not [`LogFile::events`] (a UI listing millions of lines can recognize
    /// the lines it shows with [`parse_line`] and [`recognize`] later). Events
    /// are most of the memory and half of the time of a full scan.
    pub fn index_only() -> LogScanner {
        LogScanner {
            skip_events: true,
            ..LogScanner::default()
        }
    }

    /// Feeds the next bytes of the input.
    pub fn push(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while !rest.is_empty() {
            match memchr::memchr2(b'\n', 0, rest) {
                Some(p) if rest[p] == 0 => {
                    let nul_at = self.pos + p as u64;
                    if self.first_nul.is_none() {
                        self.first_nul = Some(nul_at);
                    }
                    self.out.nul_bytes += 1;
                    self.line_nuls += 1;
                    self.take_partial(&rest[..=p]);
                    rest = &rest[p + 1..];
                }
                Some(p) => {
                    let body = &rest[..p];
                    if self.line_len == 0 {
                        // Whole line in this chunk: no copy.
                        self.line_len = body.len() as u64;
                        self.pos += p as u64 + 1;
                        self.end_line(Some(body), false);
                    } else {
                        self.take_partial(body);
                        self.pos += 1;
                        self.end_line(None, false);
                    }
                    rest = &rest[p + 1..];
                }
                None => {
                    self.take_partial(rest);
                    rest = &[];
                }
            }
        }
    }

    /// Adds bytes of the current line (no LF among them).
    fn take_partial(&mut self, b: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.carry.len());
        if self.line_len == 0 && self.carry.is_empty() {
            self.carry.reserve(b.len().min(MAX_LINE));
        }
        self.carry.extend_from_slice(&b[..b.len().min(room)]);
        self.line_len += b.len() as u64;
        self.pos += b.len() as u64;
    }

    fn end_line(&mut self, direct: Option<&[u8]>, no_lf: bool) {
        let carry = std::mem::take(&mut self.carry);
        let bytes: &[u8] = direct.unwrap_or(&carry);
        let full_len = self.line_len;
        let overlong = full_len > MAX_LINE as u64;
        let bytes = &bytes[..bytes.len().min(MAX_LINE)];
        let body = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let len = if overlong {
            full_len
        } else {
            body.len() as u64
        };
        let line_no = self.out.lines;
        let mut fl = 0u8;
        if overlong {
            fl |= flags::OVERLONG;
            self.out.overlong += 1;
        }
        if no_lf {
            fl |= flags::NO_LF;
        }
        let mut info = LineInfo {
            offset: self.line_start,
            time_ms: self.last_time,
            len: u32::try_from(len).unwrap_or(u32::MAX),
            module: MODULE_OTHER,
            level: None,
            flags: fl,
            part: 0,
        };
        let parsed = if self.line_nuls == 0 {
            parse_nul_free(body, &mut self.minute)
        } else {
            None
        };
        match parsed {
            Some(l) => {
                info.level = Some(l.level);
                info.time_ms = l.time_ms;
                info.module = self.intern(l.module.as_bytes());
                self.out.level_counts[l.level as usize] += 1;
                if l.time_ms < self.last_time && self.out.first_ms.is_some() {
                    self.out.time_steps_back += 1;
                }
                self.last_time = l.time_ms;
                if self.out.first_ms.is_none() {
                    self.out.first_ms = Some(l.time_ms);
                }
                self.out.last_ms = Some(self.out.last_ms.map_or(l.time_ms, |t| t.max(l.time_ms)));
                if let Some(kind) = recognize_in(&l, &mut self.texts) {
                    self.note(&kind);
                    if self.out.cluster_id.is_none() {
                        if let Some(cid) = cluster_named(&kind, l.text) {
                            self.out.cluster_id = Some(cid.to_string());
                        }
                    }
                    if self.skip_events {
                        return self.next_line(info, carry);
                    }
                    self.out.events.push(Event {
                        line: line_no,
                        time_ms: l.time_ms,
                        kind,
                    });
                }
            }
            None => {
                self.out.unparsed += 1;
                if self.line_nuls > 0 || std::str::from_utf8(body).is_err() {
                    info.flags |= flags::NOT_TEXT;
                    self.out.not_text_lines += 1;
                    self.not_text_bytes += full_len + u64::from(!no_lf);
                }
            }
        }
        self.next_line(info, carry);
    }

    fn next_line(&mut self, info: LineInfo, carry: Vec<u8>) {
        self.out.index.push(info);
        self.out.lines += 1;
        self.carry = carry;
        self.carry.clear();
        if self.carry.capacity() > MAX_LINE * 2 {
            self.carry = Vec::new();
        }
        self.line_start = self.pos;
        self.line_len = 0;
        self.line_nuls = 0;
    }

    fn intern(&mut self, m: &[u8]) -> u16 {
        // Real logs have a dozen modules: a linear scan beats hashing.
        if let Some(i) = self
            .out
            .modules
            .iter()
            .take(32)
            .position(|x| x.as_bytes() == m)
        {
            return i as u16;
        }
        if let Some(&id) = self.modules.get(m) {
            return id;
        }
        if self.out.modules.len() >= MAX_MODULES {
            return MODULE_OTHER;
        }
        let id = self.out.modules.len() as u16;
        self.modules.insert(m.into(), id);
        // ASCII by parse_line.
        self.out
            .modules
            .push(String::from_utf8_lossy(m).into_owned());
        id
    }

    /// Identity facts a caller wants without walking the events.
    fn note(&mut self, kind: &EventKind) {
        match kind {
            EventKind::LocalServerId { sid } => self.out.server_id = Some(sid.to_string()),
            EventKind::LearnedClusterId { cid } => self.out.cluster_id = Some(cid.to_string()),
            EventKind::ServerStart { version } => self.out.version = Some(version.to_string()),
            EventKind::LearnedServerId { peer, sid } => {
                if self.conn_sid.get(peer) != Some(sid) && self.conn_sid.len() < 4096 {
                    self.conn_sid.insert(peer.clone(), sid.clone());
                }
                if let Some(a) = self.conn_addr.get(peer) {
                    insert_server(&mut self.out.servers, sid, a);
                }
            }
            EventKind::LearnedRemoteAddress { peer, address } => {
                if self.conn_addr.get(peer) != Some(address) && self.conn_addr.len() < 4096 {
                    self.conn_addr.insert(peer.clone(), address.clone());
                }
                if let Some(s) = self.conn_sid.get(peer) {
                    insert_server(&mut self.out.servers, s, address);
                }
            }
            EventKind::Connecting { peer } => {
                // An outgoing connection is named by the address it goes to.
                if self.conn_addr.get(peer) != Some(peer) && self.conn_addr.len() < 4096 {
                    self.conn_addr.insert(peer.clone(), peer.clone());
                }
                if let Some(s) = self.conn_sid.get(peer) {
                    insert_server(&mut self.out.servers, s, peer);
                }
            }
            EventKind::AddingServer { sid, address } => {
                insert_server(&mut self.out.servers, sid, address)
            }
            _ => {}
        }
    }

    /// Ends the input; a last line without LF counts as a line.
    pub fn finish(mut self) -> LogFile {
        if self.line_len > 0 {
            self.end_line(None, true);
        }
        let mut out = self.out;
        out.bytes = self.pos;
        if let Some(at) = self.first_nul.filter(|&at| at < SNIFF_BYTES) {
            out.not_text = true;
            out.not_text_reason = Some(format!("NUL byte at offset {at}"));
        } else if self.not_text_bytes * 2 > out.bytes {
            out.not_text = true;
            out.not_text_reason = Some(format!(
                "{} of {} bytes are in lines with NUL bytes or invalid UTF-8",
                self.not_text_bytes, out.bytes
            ));
        }
        out.parts = vec![PartInfo {
            source: 0,
            first_line: 0,
            lines: out.lines,
            bytes: out.bytes,
            first_ms: out.first_ms,
            last_ms: out.last_ms,
        }];
        out
    }
}

fn insert_server(map: &mut BTreeMap<String, String>, sid: &str, address: &str) {
    if map.get(sid).map(|a| a.as_str()) == Some(address) {
        return;
    }
    if map.len() < 4096 || map.contains_key(sid) {
        map.insert(sid.to_string(), address.to_string());
    }
}

/// Reads a whole log held in memory.
pub fn read_log(bytes: &[u8]) -> LogFile {
    let mut s = LogScanner::new();
    s.push(bytes);
    s.finish()
}

/// Joins rotated parts of one server's log (each read with [`LogScanner`]
/// or [`read_log`]) into one, in time order: parts are sorted by their first
/// time (parts without any parsed line keep their place after the part
/// before them in `parts`), lines and events renumbered, module ids
/// re-interned, [`LineInfo::part`] set to the position in the joined order
/// (see [`LogFile::parts`] for each one's `source`, its position in
/// `parts`). Identity fields come from the latest part that has them.
pub fn join(parts: Vec<LogFile>) -> LogFile {
    // Stable sort by first time; timeless parts inherit the key of the part
    // before them so they stay next to it.
    let mut keyed: Vec<(i64, usize, LogFile)> = Vec::with_capacity(parts.len());
    let mut prev = i64::MIN;
    for (i, p) in parts.into_iter().enumerate() {
        let k = p.first_ms.unwrap_or(prev);
        prev = k;
        keyed.push((k, i, p));
    }
    ovsdb::order::sort_by_key(&mut keyed, |(k, i, _)| (*k, *i));

    let mut out = LogFile::default();
    let mut names: HashMap<String, u16> = HashMap::new();
    let mut last_time: Option<i64> = None;
    for (pos, (_, source, p)) in keyed.into_iter().enumerate() {
        let base = out.lines;
        let map: Vec<u16> = p
            .modules
            .iter()
            .map(|m| {
                if let Some(&id) = names.get(m) {
                    id
                } else if out.modules.len() >= MAX_MODULES {
                    MODULE_OTHER
                } else {
                    let id = out.modules.len() as u16;
                    names.insert(m.clone(), id);
                    out.modules.push(m.clone());
                    id
                }
            })
            .collect();
        out.index.reserve(p.index.len());
        for li in &p.index {
            let mut li = *li;
            li.part = u16::try_from(pos).unwrap_or(u16::MAX);
            if li.module != MODULE_OTHER {
                li.module = map.get(li.module as usize).copied().unwrap_or(MODULE_OTHER);
            }
            out.index.push(li);
        }
        out.events.extend(p.events.into_iter().map(|mut e| {
            e.line += base;
            e
        }));
        if let (Some(a), Some(b)) = (last_time, p.first_ms) {
            if b < a {
                out.time_steps_back += 1;
            }
        }
        if p.last_ms.is_some() {
            last_time = p.last_ms;
        }
        out.lines += p.lines;
        out.unparsed += p.unparsed;
        out.first_ms = match (out.first_ms, p.first_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        out.last_ms = out.last_ms.max(p.last_ms);
        for (a, b) in out.level_counts.iter_mut().zip(p.level_counts) {
            *a += b;
        }
        out.bytes += p.bytes;
        out.overlong += p.overlong;
        out.nul_bytes += p.nul_bytes;
        out.not_text_lines += p.not_text_lines;
        out.time_steps_back += p.time_steps_back;
        if p.not_text && !out.not_text {
            out.not_text = true;
            out.not_text_reason = p.not_text_reason.map(|r| format!("part {source}: {r}"));
        }
        if p.server_id.is_some() {
            out.server_id = p.server_id;
        }
        if p.cluster_id.is_some() {
            out.cluster_id = p.cluster_id;
        }
        if p.version.is_some() {
            out.version = p.version;
        }
        out.servers.extend(p.servers);
        out.parts.push(PartInfo {
            source,
            first_line: base,
            lines: p.lines,
            bytes: p.bytes,
            first_ms: p.first_ms,
            last_ms: p.last_ms,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_doc_line() {
        let l = parse_line(
            b"2026-11-29T21:14:18.237Z|00033|raft|INFO|term 3: 1220 ms timeout expired, starting election",
        )
        .unwrap();
        assert_eq!(l.seq, 33);
        assert_eq!(l.module, "raft");
        assert_eq!(l.thread, "");
        assert_eq!(l.level, Level::Info);
        assert_eq!(l.text, "term 3: 1220 ms timeout expired, starting election");
        // `date -u -d 2026-11-29T21:14:18Z +%s` = 1795986858
        assert_eq!(l.time_ms, 1_795_986_858_237);
        // facts.json of leader-pause: "generated_utc": "2026-12-01T19:17:55.952Z",
        // "generated_utc_ms": 1796152675952
        assert_eq!(parse_time(b"2026-12-01T19:17:55.952Z"), Some(1796152675952));
        assert_eq!(parse_time(b"1970-01-01T00:00:00.000Z"), Some(0));
    }

    #[test]
    fn thread_and_pipes_in_text() {
        let l =
            parse_line(b"2026-11-29T21:14:18.237Z|00001|daemon_unix(monitor)|INFO|a|b").unwrap();
        assert_eq!(
            (l.module, l.thread, l.text),
            ("daemon_unix", "monitor", "a|b")
        );
    }

    #[test]
    fn strictness() {
        for bad in [
            &b"2026-02-30T21:14:18.237Z|00033|raft|INFO|x"[..],
            b"2026-11-29T24:14:18.237Z|00033|raft|INFO|x",
            b"2026-11-29T21:14:18.237|00033|raft|INFO|x",
            b"2026-11-29T21:14:18.237Z||raft|INFO|x",
            b"2026-11-29T21:14:18.237Z|0003a|raft|INFO|x",
            b"2026-11-29T21:14:18.237Z|00033||INFO|x",
            b"2026-11-29T21:14:18.237Z|00033|raft|NOTE|x",
            b"2026-11-29T21:14:18.237Z|00033|raft|INFO",
            b"2026-11-29T21:14:18.237Z|00033|raft()|INFO|x",
            b"2026-11-29T21:14:18.237Z|00033|raft|INFO|x\0y",
            b"2026-11-29T21:14:18.237Z|00033|raft|INFO|\xff",
            b"2026-11-29T21:14:18.237Z|99999999999999999999999|raft|INFO|x",
            b"",
            b"    continuation",
        ] {
            assert!(
                parse_line(bad).is_none(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(parse_line(b"2024-02-29T00:00:00.000Z|1|m|DBG|").is_some());
        assert!(parse_line(b"2026-11-29T21:14:18.237Z|00033|raft|INFO|x\r").is_some());
    }

    #[test]
    fn minute_cache_gives_what_parse_time_gives() {
        let mut c = MinuteCache::default();
        for t in [
            &b"2026-11-29T21:14:18.237Z"[..],
            b"2026-11-29T21:14:59.999Z",
            b"2026-11-29T21:14:60.000Z",
            b"2026-11-29T21:14:61.000Z",
            b"2026-11-29T21:14:1x.000Z",
            b"2026-11-29T21:14:18,237Z",
            b"2026-11-29T21:14:18.237",
            b"2026-11-29T21:14:18.23xZ",
            b"2026-11-29T21:15:00.000Z",
            b"2026-11-29T21:14:00.001Z",
            b"2026-02-30T21:14:00.001Z",
            b"2026-02-30T21:14:00.002Z",
            b"2024-02-29T23:59:59.999Z",
        ] {
            assert_eq!(c.parse(t), parse_time(t), "{}", String::from_utf8_lossy(t));
        }
    }

    #[test]
    fn scanner_interns_texts_and_parses_as_parse_line() {
        let text =
            b"2026-11-29T21:14:18.237Z|00001|reconnect|INFO|tcp:10.0.0.2:6643: connecting...\n\
2026-11-29T21:14:18.238Z|00002|reconnect|INFO|tcp:10.0.0.2:6643: connected\n\
2026-11-29T21:14:18.239Z|00003|raft|INFO|caf\xc3\xa9 | x\n\
2026-11-29T21:14:18.240Z|00004|raft(t\xff)|INFO|x\n";
        let f = read_log(text);
        assert_eq!(f.events.len(), 2);
        let peer = |k: &EventKind| match k {
            EventKind::Connecting { peer } | EventKind::Connected { peer } => peer.clone(),
            _ => panic!("{k:?}"),
        };
        let (a, b) = (peer(&f.events[0].kind), peer(&f.events[1].kind));
        assert_eq!(a, "tcp:10.0.0.2:6643");
        assert_eq!(a, b);
        for (n, line) in text.split(|&c| c == b'\n').take(4).enumerate() {
            assert_eq!(f.index[n].parsed(), parse_line(line).is_some(), "line {n}");
        }
        assert_eq!(f.unparsed, 1);
    }

    #[test]
    fn overlong_line_is_cut_and_not_buffered() {
        let mut s = LogScanner::new();
        s.push(b"2026-11-29T21:14:18.237Z|00001|raft|INFO|local server ID is aa26");
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..10 {
            s.push(&chunk);
            assert!(s.carry.capacity() <= 2 * MAX_LINE);
        }
        s.push(b"\n2026-11-29T21:14:18.238Z|00002|raft|INFO|local server ID is bb26\n");
        let f = s.finish();
        assert_eq!(f.lines, 2);
        assert_eq!(f.overlong, 1);
        // 64 bytes of the first push, then 10 MiB.
        assert_eq!(f.index[0].len as usize, 10 * (1 << 20) + 64);
        assert_eq!(f.index[1].offset, 10 * (1 << 20) + 65);
        assert_eq!(f.server_id.as_deref(), Some("bb26"));
    }

    #[test]
    fn binary_is_not_text() {
        let f = read_log(b"\x7fELF\0\0\0\x01\x02garbage\nmore");
        assert!(f.not_text);
        assert_eq!(f.lines, 2);
        assert_eq!(f.nul_bytes, 3);
        let f = read_log(&[0xff; 100]);
        assert!(f.not_text);
        let f = read_log(b"2026-11-29T21:14:18.237Z|00001|raft|INFO|x\n");
        assert!(!f.not_text);
        assert_eq!(f.unparsed, 0);
    }
}
