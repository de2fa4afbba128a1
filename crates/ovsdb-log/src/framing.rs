//! Record framing (spec §1): `OVSDB <magic> <length> <sha1>\n<body>`.
//!
//! The reader copies the C reader's leniency (§1.2): `strtoul`-style lengths
//! (leading whitespace and a sign), upper-case hex, bodies that need not end in
//! LF. It never allocates from a length read in the input: bodies are slices
//! of the input buffer.

use crate::error::{ErrorKind, LogError};
use sha1::{Digest, Sha1};

/// Longest header line the C reader can parse, LF included (128-byte buffer
/// read with `fgets`).
pub const MAX_HEADER_LINE: usize = 127;

/// Magic of standalone files.
pub const MAGIC_STANDALONE: &str = "JSON";
/// Magic of clustered files.
pub const MAGIC_CLUSTERED: &str = "CLUSTER";

/// The two file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Standalone,
    Clustered,
}

impl Format {
    pub fn magic(self) -> &'static str {
        match self {
            Format::Standalone => MAGIC_STANDALONE,
            Format::Clustered => MAGIC_CLUSTERED,
        }
    }
    pub fn from_magic(magic: &str) -> Option<Format> {
        match magic {
            MAGIC_STANDALONE => Some(Format::Standalone),
            MAGIC_CLUSTERED => Some(Format::Clustered),
            _ => None,
        }
    }
    /// `"standalone"` or `"clustered"`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Standalone => "standalone",
            Format::Clustered => "clustered",
        }
    }
}

/// A parsed header line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderLine<'a> {
    pub magic: &'a str,
    pub length: u64,
    pub sha1: [u8; 20],
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Lower-case hex of a digest.
pub fn hex(digest: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(digest.len() * 2);
    for &b in digest {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// SHA-1 of `bytes`.
pub fn sha1(bytes: &[u8]) -> [u8; 20] {
    let mut h = Sha1::new();
    h.update(bytes);
    h.finalize().into()
}

/// Parses one header line, `line` including its final LF, as the C reader
/// does (§1.2). Returns the reason on failure.
pub fn parse_header_line(line: &[u8]) -> Result<HeaderLine<'_>, &'static str> {
    if line.len() > MAX_HEADER_LINE {
        return Err("header line longer than 127 bytes");
    }
    let rest = line
        .strip_prefix(b"OVSDB ")
        .ok_or("does not start with \"OVSDB \"")?;
    // Magic: the longest run of bytes other than space (and NUL, which ends
    // a C string), then exactly one space.
    let mlen = rest
        .iter()
        .position(|&b| b == b' ' || b == 0 || b == b'\n')
        .unwrap_or(rest.len());
    let magic = std::str::from_utf8(&rest[..mlen]).map_err(|_| "magic is not text")?;
    let rest = &rest[mlen..];
    let rest = rest.strip_prefix(b" ").ok_or("no space after magic")?;
    // Length: strtoul(…, 10) semantics.
    let mut i = 0;
    while i < rest.len() && matches!(rest[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let mut negative = false;
    if i < rest.len() && (rest[i] == b'+' || rest[i] == b'-') {
        negative = rest[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut value: u64 = 0;
    let mut overflow = false;
    while i < rest.len() && rest[i].is_ascii_digit() {
        let d = u64::from(rest[i] - b'0');
        match value.checked_mul(10).and_then(|v| v.checked_add(d)) {
            Some(v) => value = v,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return Err("no length");
    }
    if overflow {
        return Err("length out of range");
    }
    let length = if negative {
        value.wrapping_neg()
    } else {
        value
    };
    if length == 0 {
        return Err("zero length");
    }
    if length == u64::MAX {
        return Err("length out of range");
    }
    let rest = &rest[i..];
    let rest = rest.strip_prefix(b" ").ok_or("no space after length")?;
    if rest.len() < 40 {
        return Err("SHA-1 is not 40 hex digits");
    }
    let mut sha = [0u8; 20];
    for (k, pair) in rest[..40].chunks(2).enumerate() {
        let hi = hex_val(pair[0]).ok_or("SHA-1 is not 40 hex digits")?;
        let lo = hex_val(pair[1]).ok_or("SHA-1 is not 40 hex digits")?;
        sha[k] = (hi << 4) | lo;
    }
    match &rest[40..] {
        b"\n" => Ok(HeaderLine {
            magic,
            length,
            sha1: sha,
        }),
        [b'\r', ..] => Err("CR before LF (CRLF line ends are rejected)"),
        _ => Err("garbage after SHA-1"),
    }
}

/// Builds the strict header line for a body (§1.1).
pub fn header_line(magic: &str, body: &[u8]) -> String {
    format!("OVSDB {} {} {}\n", magic, body.len(), hex(&sha1(body)))
}

/// Appends one framed record (header line + body) to `out`.
pub fn write_record(out: &mut Vec<u8>, magic: &str, body: &[u8]) {
    out.extend_from_slice(header_line(magic, body).as_bytes());
    out.extend_from_slice(body);
}

/// One framed record: a verified header line plus its body, as a slice of the
/// input. Decoding the body is left to the caller (lazy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord<'a> {
    /// 0-based record number.
    pub index: usize,
    /// Byte offset of the header line.
    pub offset: u64,
    /// Length of the header line, LF included.
    pub header_len: usize,
    /// The header line as stored, LF included (`header_len` bytes): with
    /// the body, the record byte for byte.
    pub line: &'a [u8],
    /// The body (`length` bytes, SHA-1 verified).
    pub body: &'a [u8],
    /// The body's SHA-1 (the header's, verified).
    pub sha1: [u8; 20],
}

impl<'a> RawRecord<'a> {
    /// Byte offset of the body.
    pub fn body_offset(&self) -> u64 {
        self.offset + self.header_len as u64
    }
    /// Header line + body size.
    pub fn total_len(&self) -> u64 {
        self.header_len as u64 + self.body.len() as u64
    }
    /// Offset just past the record.
    pub fn end(&self) -> u64 {
        self.offset + self.total_len()
    }
    /// An error about this record's body.
    pub fn error(&self, kind: ErrorKind) -> LogError {
        LogError {
            record: self.index,
            offset: self.body_offset(),
            kind,
        }
    }
}

/// Sequential reader of record boundaries over a byte buffer.
///
/// Yields `Ok(RawRecord)` for each good record; on the first failure yields
/// one `Err` and then stops (the failure is also kept in [`Framer::error`]).
/// [`Framer::good_end`] is the offset just past the last good record, where a
/// writer would truncate.
#[derive(Debug, Clone)]
pub struct Framer<'a> {
    data: &'a [u8],
    pos: usize,
    record: usize,
    good: usize,
    magic: Option<&'a str>,
    accept_any_magic: bool,
    error: Option<LogError>,
    /// Salvage: where the first damage started (the prefix end).
    damage_at: Option<usize>,
    /// Salvage: a record the caller rejected, held until we know whether
    /// a good record follows it.
    rejected: Option<Skip>,
    /// Salvage: a frame read ahead while deciding about `rejected`.
    ahead: Option<Result<Frame<'a>, LogError>>,
    /// Window mode ([`crate::scan`]): file offset of `data[0]`.
    base: u64,
    /// Window mode: more bytes may follow `data` (a decision that depends
    /// on where the data ends is put off: `need_more` is set instead).
    partial: bool,
    /// Window mode: the last read could not be decided on this window.
    pub(crate) need_more: bool,
    /// Window mode: trust the header's SHA-1 (a caller verified it).
    pub(crate) trust_sha1: bool,
}

/// A span of the file that salvage reading stepped over: one damaged
/// record (or garbage) between two good records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// The record number the span takes (the next good record is
    /// `record + 1`).
    pub record: usize,
    /// Byte offset where the span starts (a header line, or garbage).
    pub offset: u64,
    /// Length of the span: the next good record starts at
    /// `offset + bytes`.
    pub bytes: u64,
    /// Why the span could not be read (its own record number and the
    /// offset of the problem, as a strict reader reports it).
    pub error: LogError,
}

impl Skip {
    /// Offset just past the span (the next good record's header).
    pub fn end(&self) -> u64 {
        self.offset + self.bytes
    }
}

/// One step of a salvage walk ([`Framer::next_frame`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame<'a> {
    Record(RawRecord<'a>),
    Skipped(Skip),
}

impl<'a> Framer<'a> {
    /// A reader that accepts files whose first magic is `JSON` or `CLUSTER`.
    pub fn new(data: &'a [u8]) -> Self {
        Framer {
            data,
            pos: 0,
            record: 0,
            good: 0,
            magic: None,
            accept_any_magic: false,
            error: None,
            damage_at: None,
            rejected: None,
            ahead: None,
            base: 0,
            partial: false,
            need_more: false,
            trust_sha1: false,
        }
    }

    /// A reader over a window of a file: `data` starts at file offset
    /// `base` with record number `record`; `magic` is the file's magic if
    /// a header was read before the window. With `partial`, a read whose
    /// outcome depends on where the data ends sets `need_more` and yields
    /// nothing, leaving the reader where it was.
    pub(crate) fn window(
        data: &'a [u8],
        base: u64,
        record: usize,
        magic: Option<&'a str>,
        partial: bool,
    ) -> Self {
        let mut f = Framer::new(data);
        f.base = base;
        f.record = record;
        f.magic = magic;
        f.partial = partial;
        f
    }

    /// A reader that accepts any space-free first magic (the log layer's own
    /// behaviour; the unit tests of OVS use `MORE_MAGIC`).
    pub fn any_magic(data: &'a [u8]) -> Self {
        let mut f = Framer::new(data);
        f.accept_any_magic = true;
        f
    }

    /// The file's magic, once the first header was read.
    pub fn magic(&self) -> Option<&'a str> {
        self.magic
    }

    /// The file's format, once the first header was read.
    pub fn format(&self) -> Option<Format> {
        self.magic.and_then(Format::from_magic)
    }

    /// Offset just past the last good record of the undamaged prefix:
    /// where a writer would truncate. A salvage walk that stepped over
    /// damage keeps it at the start of the first damaged span.
    pub fn good_end(&self) -> u64 {
        self.damage_at.unwrap_or(self.pos) as u64
    }

    /// Number of good records read so far (records rejected by the
    /// caller of a salvage walk included).
    pub fn records_read(&self) -> usize {
        self.good
    }

    /// The error that stopped the reader, if any.
    pub fn error(&self) -> Option<&LogError> {
        self.error.as_ref()
    }

    fn fail(&mut self, offset: usize, kind: ErrorKind) -> LogError {
        let e = LogError {
            record: self.record,
            offset: self.base + offset as u64,
            kind,
        };
        self.error = Some(e.clone());
        e
    }

    pub(crate) fn read_one(&mut self) -> Option<Result<RawRecord<'a>, LogError>> {
        let data = self.data;
        let start = self.pos;
        if start >= data.len() {
            if self.partial {
                self.need_more = true;
                return None;
            }
            if start == 0 && self.base == 0 {
                return Some(Err(self.fail(0, ErrorKind::EmptyFile)));
            }
            return None;
        }
        let rest = &data[start..];
        // The C reader reads at most 127 bytes of header line.
        let window = &rest[..rest.len().min(MAX_HEADER_LINE)];
        let line = match window.iter().position(|&b| b == b'\n') {
            Some(p) => &window[..=p],
            None => {
                if rest.len() < MAX_HEADER_LINE && self.partial {
                    self.need_more = true;
                    return None;
                }
                if rest.len() < MAX_HEADER_LINE {
                    let kind = if b"OVSDB ".starts_with(&rest[..rest.len().min(6)])
                        || rest.starts_with(b"OVSDB ")
                    {
                        ErrorKind::TruncatedHeader {
                            available: rest.len(),
                        }
                    } else {
                        ErrorKind::BadHeader {
                            line: lossy_line(rest),
                            reason: "not a header line",
                        }
                    };
                    return Some(Err(self.fail(start, kind)));
                }
                return Some(Err(self.fail(
                    start,
                    ErrorKind::BadHeader {
                        line: lossy_line(window),
                        reason: "no LF within 127 bytes",
                    },
                )));
            }
        };
        let header = match parse_header_line(line) {
            Ok(h) => h,
            Err(reason) => {
                return Some(Err(self.fail(
                    start,
                    ErrorKind::BadHeader {
                        line: lossy_line(line),
                        reason,
                    },
                )))
            }
        };
        match self.magic {
            None => {
                if !self.accept_any_magic && Format::from_magic(header.magic).is_none() {
                    return Some(Err(self.fail(
                        start,
                        ErrorKind::UnknownMagic {
                            magic: header.magic.to_string(),
                        },
                    )));
                }
                self.magic = Some(header.magic);
            }
            Some(m) if m != header.magic => {
                return Some(Err(self.fail(
                    start,
                    ErrorKind::WrongMagic {
                        expected: m.to_string(),
                        found: header.magic.to_string(),
                    },
                )));
            }
            Some(_) => {}
        }
        let body_start = start + line.len();
        let available = (data.len() - body_start) as u64;
        let body_rest = &data[body_start..];
        if header.length > available {
            if self.partial {
                self.need_more = true;
                return None;
            }
            if let Some(actual) = alternative_length(body_rest, &header) {
                return Some(Err(self.fail(
                    body_start,
                    ErrorKind::LengthMismatch {
                        declared: header.length,
                        actual,
                    },
                )));
            }
            return Some(Err(self.fail(
                body_start,
                ErrorKind::TruncatedBody {
                    length: header.length,
                    available,
                },
            )));
        }
        // header.length <= available, which fits in usize.
        let len = header.length as usize;
        let body = &body_rest[..len];
        let actual = if self.trust_sha1 {
            header.sha1
        } else {
            sha1(body)
        };
        if actual != header.sha1 {
            if self.partial && !first_line_known(body_rest) {
                self.need_more = true;
                return None;
            }
            if let Some(actual_len) = alternative_length(body_rest, &header) {
                return Some(Err(self.fail(
                    body_start,
                    ErrorKind::LengthMismatch {
                        declared: header.length,
                        actual: actual_len,
                    },
                )));
            }
            return Some(Err(self.fail(
                body_start,
                ErrorKind::BadSha1 {
                    expected: hex(&header.sha1),
                    actual: hex(&actual),
                },
            )));
        }
        let rec = RawRecord {
            index: self.record,
            offset: self.base + start as u64,
            header_len: line.len(),
            line,
            body,
            sha1: actual,
        };
        self.pos = body_start + len;
        self.record += 1;
        self.good += 1;
        Some(Ok(rec))
    }

    /// The first good record header at or after `from`: a line
    /// `OVSDB <magic> <length> <sha1>` with the file's magic (any known
    /// magic before the first header was read) whose body is there and
    /// hashes to the header's SHA-1.
    fn resync_from(&self, from: usize) -> Option<usize> {
        match self.resync_window(from) {
            Resync::Found(p) => Some(p),
            Resync::NotFound | Resync::NeedMore(_) => None,
        }
    }

    /// [`Framer::resync_from`] on a window: with `partial`, a candidate
    /// that cannot be decided yet (or the end of the window reached)
    /// gives `NeedMore` with the position to search again from.
    pub(crate) fn resync_window(&self, from: usize) -> Resync {
        let data = self.data;
        let mut at = from;
        let more = |at: usize| {
            if self.partial {
                Resync::NeedMore(at)
            } else {
                Resync::NotFound
            }
        };
        while at < data.len() {
            let Some(q) = find(&data[at..], b"OVSDB ") else {
                // A header may start in the last 5 bytes.
                return more(data.len().saturating_sub(5).max(at));
            };
            let p = at + q;
            at = p + 1;
            let window = &data[p..data.len().min(p + MAX_HEADER_LINE)];
            let Some(lf) = window.iter().position(|&b| b == b'\n') else {
                if self.partial && window.len() < MAX_HEADER_LINE {
                    return Resync::NeedMore(p);
                }
                continue;
            };
            let Ok(h) = parse_header_line(&window[..=lf]) else {
                continue;
            };
            let magic_ok = match self.magic {
                Some(m) => m == h.magic,
                None => self.accept_any_magic || Format::from_magic(h.magic).is_some(),
            };
            let body_start = p + lf + 1;
            if !magic_ok {
                continue;
            }
            if h.length > (data.len() - body_start) as u64 {
                if self.partial {
                    return Resync::NeedMore(p);
                }
                continue;
            }
            if sha1(&data[body_start..body_start + h.length as usize]) == h.sha1 {
                return Resync::Found(p);
            }
        }
        more(at.min(data.len()))
    }

    /// Salvage walk: like the iterator, but damage followed by a good
    /// record is yielded as [`Frame::Skipped`] (the span from the damaged
    /// record up to the next good record header, which gets the next
    /// record number) and reading goes on. Damage with no good record
    /// after it ends the walk with one `Err`, as the strict reader does
    /// (a torn tail). Records the caller cannot decode are handed back
    /// with [`Framer::reject`] and follow the same rule. Use either this
    /// or the iterator on one `Framer`, not both.
    pub fn next_frame(&mut self) -> Option<Result<Frame<'a>, LogError>> {
        if self.error.is_some() {
            return None;
        }
        let next = match self.ahead.take() {
            Some(f) => Some(f),
            None => self.read_salvaging(),
        };
        let Some(skip) = self.rejected.take() else {
            return next;
        };
        match next {
            Some(Ok(f)) => {
                self.ahead = Some(Ok(f));
                Some(Ok(Frame::Skipped(skip)))
            }
            // Nothing good after the rejected record: it ends the file.
            _ => {
                self.error = Some(skip.error.clone());
                Some(Err(skip.error))
            }
        }
    }

    /// Salvage walk: the caller could not decode `raw` (bad JSON, not a
    /// record of this format...): it becomes a skipped span of its own if
    /// a good record follows, else the error that ends the walk.
    pub fn reject(&mut self, raw: &RawRecord<'a>, error: LogError) {
        self.good = self.good.saturating_sub(1);
        self.damage_at.get_or_insert(raw.offset as usize);
        self.rejected = Some(Skip {
            record: raw.index,
            offset: raw.offset,
            bytes: raw.total_len(),
            error,
        });
    }

    fn read_salvaging(&mut self) -> Option<Result<Frame<'a>, LogError>> {
        let start = self.pos;
        match self.read_one()? {
            Ok(r) => Some(Ok(Frame::Record(r))),
            Err(e) if matches!(e.kind, ErrorKind::EmptyFile) => Some(Err(e)),
            Err(e) => match self.resync_from(start + 1) {
                None => Some(Err(e)),
                Some(next) => {
                    self.error = None;
                    self.damage_at.get_or_insert(start);
                    self.pos = next;
                    self.record += 1;
                    Some(Ok(Frame::Skipped(Skip {
                        record: e.record,
                        offset: start as u64,
                        bytes: (next - start) as u64,
                        error: e,
                    })))
                }
            },
        }
    }
}

/// Outcome of a resynchronisation search on a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resync {
    Found(usize),
    NotFound,
    NeedMore(usize),
}

/// Whether [`alternative_length`] can decide on `body_rest` (its first LF
/// is there, or the 1 GiB scan limit is reached).
fn first_line_known(body_rest: &[u8]) -> bool {
    body_rest.len() >= 1 << 30 || body_rest.contains(&b'\n')
}

/// Position of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let first = needle[0];
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        let p = i + hay[i..].iter().position(|&b| b == first)?;
        if hay[p..].starts_with(needle) {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// When a body does not match its header, checks whether the body's first
/// line (up to and including LF) has another length and the header's SHA-1:
/// then the header's length is what is wrong.
fn alternative_length(body_rest: &[u8], header: &HeaderLine<'_>) -> Option<u64> {
    let scan = &body_rest[..body_rest.len().min(1 << 30)];
    let end = scan.iter().position(|&b| b == b'\n').map(|p| p + 1)?;
    if end as u64 == header.length {
        return None;
    }
    (sha1(&body_rest[..end]) == header.sha1).then_some(end as u64)
}

fn lossy_line(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(MAX_HEADER_LINE)];
    String::from_utf8_lossy(cut)
        .trim_end_matches('\n')
        .to_string()
}

impl<'a> Iterator for Framer<'a> {
    type Item = Result<RawRecord<'a>, LogError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.error.is_some() {
            return None;
        }
        self.read_one()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(magic: &str, body: &str) -> Vec<u8> {
        let mut v = Vec::new();
        write_record(&mut v, magic, body.as_bytes());
        v
    }

    #[test]
    fn upstream_vector_three_records() {
        // ovs tests/ovsdb-log.at: {"x":0} is an 8-byte body with a 54-byte header.
        let mut f = Vec::new();
        for b in ["{\"x\":0}\n", "{\"x\":1}\n", "{\"x\":2}\n"] {
            write_record(&mut f, "JSON", b.as_bytes());
        }
        assert_eq!(
            &f[..54],
            b"OVSDB JSON 8 1ba3ca340bcf7c975bf730e953aa884f416dd2ec\n"
        );
        assert_eq!(f.len(), 186);
        let recs: Vec<_> = Framer::new(&f).collect::<Result<_, _>>().unwrap();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[2].body_offset(), 178);
        assert_eq!(recs[2].end(), 186);
        assert_eq!(
            hex(&sha1(b"{\"x\":1}\n")),
            "e53c0e03e58bfdbf3031a9d1d2a90d4e68f7adc6"
        );
        assert_eq!(
            hex(&sha1(b"null\n")),
            "d910b02871075d3156ec8675dfc95b7d5d640aa6"
        );
    }

    #[test]
    fn leniency_of_c_reader() {
        let sha = "1ba3ca340bcf7c975bf730e953aa884f416dd2ec";
        for hdr in [
            format!("OVSDB JSON  8 {sha}\n"),
            format!("OVSDB JSON +8 {sha}\n"),
            format!("OVSDB JSON 8 {}\n", sha.to_uppercase()),
        ] {
            let h = parse_header_line(hdr.as_bytes()).unwrap();
            assert_eq!(h.length, 8);
        }
        assert!(parse_header_line(format!("OVSDB JSON 8 {sha}\r\n").as_bytes()).is_err());
        assert!(parse_header_line(format!("OVSDB JSON 0 {sha}\n").as_bytes()).is_err());
        assert!(parse_header_line(format!("ovsdb JSON 8 {sha}\n").as_bytes()).is_err());
        // A negative length wraps (then fails as a short read).
        let neg = format!("OVSDB JSON -8 {sha}\n");
        assert_eq!(
            parse_header_line(neg.as_bytes()).unwrap().length,
            u64::MAX - 7
        );
        // Body need not end in LF; pretty bodies are fine at this layer.
        let mut f = Vec::new();
        write_record(&mut f, "JSON", b"{\n \"a\": 1}");
        write_record(&mut f, "JSON", b"{}");
        assert_eq!(Framer::new(&f).filter(|r| r.is_ok()).count(), 2);
    }

    fn first_err(data: &[u8]) -> LogError {
        Framer::new(data).find_map(|r| r.err()).expect("an error")
    }

    #[test]
    fn damage_kinds() {
        let good = rec("JSON", "{\"x\":0}\n");
        assert_eq!(first_err(b"").kind, ErrorKind::EmptyFile);
        // Truncated inside the second header line.
        let mut t = good.clone();
        t.extend_from_slice(&good[..20]);
        let e = first_err(&t);
        assert_eq!((e.record, e.offset), (1, 62));
        assert!(matches!(
            e.kind,
            ErrorKind::TruncatedHeader { available: 20 }
        ));
        // Truncated inside a body.
        let mut t = good.clone();
        t.extend_from_slice(&good[..58]);
        let e = first_err(&t);
        assert_eq!((e.record, e.offset), (1, 116));
        assert!(matches!(
            e.kind,
            ErrorKind::TruncatedBody {
                length: 8,
                available: 4
            }
        ));
        // Bad SHA-1 (a byte of the body changed).
        let mut t = good.clone();
        t[58] = b'y';
        let e = first_err(&t);
        assert_eq!((e.record, e.offset), (0, 54));
        assert!(matches!(e.kind, ErrorKind::BadSha1 { .. }));
        // Length mismatch: header length edited.
        let t = String::from_utf8(good.clone())
            .unwrap()
            .replace(" 8 ", " 7 ");
        let e = first_err(t.as_bytes());
        assert!(
            matches!(
                e.kind,
                ErrorKind::LengthMismatch {
                    declared: 7,
                    actual: 8
                }
            ),
            "{e}"
        );
        // Length 2^62: no allocation, a short read.
        let t = format!(
            "OVSDB JSON {} 1ba3ca340bcf7c975bf730e953aa884f416dd2ec\n{{}}\n",
            1u64 << 62
        );
        let e = first_err(t.as_bytes());
        assert!(matches!(e.kind, ErrorKind::TruncatedBody { .. }), "{e}");
        // Wrong magic in a later record.
        let mut t = good.clone();
        t.extend_from_slice(&rec("CLUSTER", "{}\n"));
        let e = first_err(&t);
        assert_eq!((e.record, e.offset), (1, 62));
        assert!(matches!(e.kind, ErrorKind::WrongMagic { .. }));
        // Unknown first magic.
        let e = first_err(&rec("MORE_MAGIC", "{}\n"));
        assert!(matches!(e.kind, ErrorKind::UnknownMagic { .. }));
        assert_eq!(Framer::any_magic(&rec("MORE_MAGIC", "{}\n")).count(), 1);
        // Binary garbage.
        let garbage: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let e = first_err(&garbage);
        assert_eq!((e.record, e.offset), (0, 0));
        assert!(matches!(e.kind, ErrorKind::BadHeader { .. }));
        // `xxx` garbage line after three records (ovsdb-log.at: offset 186).
        let mut t = Vec::new();
        for _ in 0..3 {
            t.extend_from_slice(&good);
        }
        t.extend_from_slice(b"xxx\n");
        let mut fr = Framer::new(&t);
        assert_eq!(fr.by_ref().filter(|r| r.is_ok()).count(), 3);
        assert_eq!(fr.error().unwrap().offset, 186);
        assert_eq!(fr.good_end(), 186);
    }
}
