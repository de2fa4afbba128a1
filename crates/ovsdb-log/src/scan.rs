//! One streaming walk over a log file: [`LogScan`] takes the file as byte
//! chunks of any size (push-based, sans-IO) and hands typed [`Event`]s to a
//! callback, with the framing and salvage rules of [`Framer::next_frame`]
//! (damaged middle records become [`Event::Skipped`], a damaged tail ends
//! the walk with [`Event::Tail`]).
//!
//! Memory: the scanner keeps the bytes of the record being read (a record
//! straddling chunks is kept until its last byte arrives), never the whole
//! input. While it looks for the next good record after damage it keeps
//! the bytes from the candidate header it is checking on. Records are
//! decoded lazily: entry payloads are only delimited (and, on request, read
//! as a transaction on the way, see [`ScanOptions::txn`]).
//!
//! The `[schema, txn]` form of a Raft entry's `data` is unwrapped here
//! only: [`split_data`] on a parsed value, [`split_data_bytes`] on its
//! bytes.

use crate::error::{ErrorKind, LogError};
use crate::framing::{Format, Framer, RawRecord, Resync, Skip};
use crate::raft::{ClusterHeader, Entry};
use crate::rawtxn::TxnSrc;
use crate::record::Record;
use ovsdb::json::Json;

/// What the scanner decodes besides record structure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanOptions {
    /// Read a `[null, txn]` entry payload as a transaction while skimming
    /// the record (for replay without another pass over its bytes).
    pub txn: bool,
    /// Do not compute SHA-1: the caller verified every record's hash
    /// already (e.g. on another thread). Salvage searches still hash.
    pub trust_sha1: bool,
    /// Framing only: every good record is an [`Event::Frame`], nothing is
    /// decoded (to verify a file's framing and hashes on its own).
    pub frames_only: bool,
    /// The bytes were framed, hashed and skimmed without damage by an
    /// earlier walk (with [`ScanOptions::trust_sha1`]): entry payloads
    /// are only delimited by their brackets
    /// ([`crate::skim::container_end`]), not checked again.
    pub known_good: bool,
}

/// A transaction read on the way ([`ScanOptions::txn`]); applied with
/// [`crate::replay::Db::apply_scanned`].
pub struct ScannedTxn<'a>(pub(crate) TxnSrc<'a>);

/// One step of the walk. Records carry their [`RawRecord`] (offset, record
/// number, sizes, body bytes); bytes are only valid inside the callback.
pub enum Event<'a> {
    /// Record 0 of a clustered file (snapshot included).
    Header {
        raw: RawRecord<'a>,
        header: Box<ClusterHeader>,
    },
    /// Record 0 of a standalone file.
    Schema {
        raw: RawRecord<'a>,
        schema: Json,
    },
    /// A txn record of a standalone file (its body is a JSON object).
    Txn {
        raw: RawRecord<'a>,
    },
    /// Before an [`Event::Entry`] whose index is at or below the end of
    /// the log: the entries `from..=to` of earlier records are replaced.
    Truncate {
        record: usize,
        from: u64,
        to: u64,
    },
    /// A log entry. `entry.data` is an empty placeholder when present: the
    /// bytes are in `data`, the transaction (if read) in `txn`.
    Entry {
        raw: RawRecord<'a>,
        entry: Entry,
        comment: Option<String>,
        data: Option<&'a [u8]>,
        txn: Option<ScannedTxn<'a>>,
    },
    Term {
        raw: RawRecord<'a>,
        term: u64,
    },
    Vote {
        raw: RawRecord<'a>,
        term: u64,
        vote: crate::Uuid,
    },
    Leader {
        raw: RawRecord<'a>,
        term: u64,
        leader: crate::Uuid,
    },
    CommitIndex {
        raw: RawRecord<'a>,
        commit_index: u64,
    },
    Note {
        raw: RawRecord<'a>,
        note: String,
        comment: Option<String>,
    },
    /// A good record, not decoded ([`ScanOptions::frames_only`]).
    Frame {
        raw: RawRecord<'a>,
    },
    /// A damaged span between good records, stepped over.
    Skipped(Skip),
    /// The error that ends the walk (a damaged tail); nothing follows.
    Tail(LogError),
}

impl<'a> Event<'a> {
    /// The record of a record event.
    pub fn raw(&self) -> Option<&RawRecord<'a>> {
        match self {
            Event::Header { raw, .. }
            | Event::Schema { raw, .. }
            | Event::Txn { raw }
            | Event::Entry { raw, .. }
            | Event::Term { raw, .. }
            | Event::Vote { raw, .. }
            | Event::Leader { raw, .. }
            | Event::CommitIndex { raw, .. }
            | Event::Note { raw, .. }
            | Event::Frame { raw } => Some(raw),
            _ => None,
        }
    }

    /// Kind name as `inspect` counts it (`header`, `entry`, ..., `schema`,
    /// `txn`), for record events.
    pub fn kind_name(&self) -> Option<&'static str> {
        Some(match self {
            Event::Header { .. } => "header",
            Event::Schema { .. } => "schema",
            Event::Txn { .. } => "txn",
            Event::Entry { .. } => "entry",
            Event::Term { .. } => "term",
            Event::Vote { .. } => "vote",
            Event::Leader { .. } => "leader",
            Event::CommitIndex { .. } => "commit_index",
            Event::Note { .. } => "note",
            _ => return None,
        })
    }
}

/// What the callback tells the scanner about a record event.
#[derive(Debug)]
pub enum Verdict {
    Keep,
    /// The record cannot be used (e.g. its payload does not parse): like
    /// [`Framer::reject`], it becomes a skipped span if a good record
    /// follows, else the error that ends the walk.
    Reject(LogError),
}

/// The two members of a Raft `data` value `[schema-or-null, txn-or-null]`,
/// `None` when it has another shape. The one place that unwraps a parsed
/// value ([`split_data_bytes`] does it on bytes).
pub fn split_data(data: &Json) -> Option<(&Json, &Json)> {
    match data.as_array() {
        Some([schema, txn]) => Some((schema, txn)),
        _ => None,
    }
}

/// Byte ranges of the schema and of the txn in a Raft `data` value,
/// each `None` when `null`.
pub type DataParts = (Option<(usize, usize)>, Option<(usize, usize)>);

/// [`split_data`] on bytes: for the `data` value `[schema-or-null,
/// txn-or-null]` that starts at `b[i]`, the byte ranges (within `b`) of
/// its two members, without parsing them. An error names the byte where
/// the value is not a 2-element array.
pub fn split_data_bytes(b: &[u8], i: usize) -> Result<DataParts, String> {
    let ws = |mut i: usize| {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        i
    };
    if b.get(i) != Some(&b'[') {
        return Err(format!("byte {i}: data is not an array"));
    }
    let s0 = ws(i + 1);
    let s1 = crate::skim::skip_value(b, s0)?;
    let j = ws(s1);
    if b.get(j) != Some(&b',') {
        return Err(format!("byte {j}: data is not a 2-element array"));
    }
    let t0 = ws(j + 1);
    let t1 = crate::skim::skip_value(b, t0)?;
    let k = ws(t1);
    if b.get(k) != Some(&b']') {
        return Err(format!("byte {k}: data is not a 2-element array"));
    }
    let part = |a: usize, z: usize| (&b[a..z] != b"null").then_some((a, z));
    Ok((part(s0, s1), part(t0, t1)))
}

/// Where a record sits in the buffer (so no borrow outlives a step).
#[derive(Debug, Clone, Copy)]
struct Desc {
    at: usize,
    index: usize,
    header_len: usize,
    body_len: usize,
    sha1: [u8; 20],
}

enum Step {
    Record(Desc),
    Skipped(Skip),
    Tail(LogError),
    NeedMore,
    End,
}

/// Where a walk can start again ([`LogScan::resume`]): the record boundary
/// just after a good record, with what the scanner knows there. Record 0
/// at offset 0 is the start of the file (format and log end are then
/// read from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanPoint {
    /// Byte offset of the next record.
    pub offset: u64,
    /// Its record number.
    pub record: usize,
    pub format: Format,
    /// The index after the last entry read (for [`Event::Truncate`]).
    pub log_end: u64,
}

impl ScanPoint {
    /// The start of a file.
    pub const START: ScanPoint = ScanPoint {
        offset: 0,
        record: 0,
        format: Format::Clustered,
        log_end: 1,
    };
}

/// The streaming scanner. Feed it with [`LogScan::push`], end with
/// [`LogScan::finish`]; both call `f` for every event decided so far.
pub struct LogScan {
    opts: ScanOptions,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    base: u64,
    /// Next read position in `buf`.
    pos: usize,
    finished: bool,
    ended: bool,
    record: usize,
    magic: Option<String>,
    /// A failed read whose resynchronisation is under way: (start offset,
    /// error, buffer position to search from).
    damage: Option<(u64, LogError, usize)>,
    damage_at: Option<u64>,
    rejected: Option<Skip>,
    ahead: Option<Step>,
    /// Log end (next index) for truncation events.
    log_end: u64,
    bytes: u64,
    /// Bytes copied into `buf` (what straddles chunks).
    copied: u64,
}

impl Default for LogScan {
    fn default() -> Self {
        LogScan::new(ScanOptions::default())
    }
}

impl LogScan {
    pub fn new(opts: ScanOptions) -> LogScan {
        LogScan {
            opts,
            buf: Vec::new(),
            base: 0,
            pos: 0,
            finished: false,
            ended: false,
            record: 0,
            magic: None,
            damage: None,
            damage_at: None,
            rejected: None,
            ahead: None,
            log_end: 1,
            bytes: 0,
            copied: 0,
        }
    }

    /// A walk that starts at a record boundary in the middle of a file:
    /// the chunks pushed start at byte `at.offset`, whose record is number
    /// `at.record`, of a file of `at.format` whose log (clustered) ends
    /// before index `at.log_end`. Events carry the file's own offsets and
    /// record numbers, as a walk from the start would (from that record
    /// on; a [`ScanPoint`] is only taken where no damage is pending).
    pub fn resume(opts: ScanOptions, at: &ScanPoint) -> LogScan {
        let mut s = LogScan::new(opts);
        if at.record > 0 {
            s.base = at.offset;
            s.record = at.record;
            s.magic = Some(at.format.magic().to_string());
            s.log_end = at.log_end;
        }
        s
    }

    /// The file's format, once the first header line was read.
    pub fn format(&self) -> Option<Format> {
        self.magic.as_deref().and_then(Format::from_magic)
    }

    /// Bytes pushed so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Bytes of those copied into the scanner's own buffer (records that
    /// straddle chunks, damage being searched through), the rest read
    /// where they were pushed.
    pub fn copied(&self) -> u64 {
        self.copied
    }

    /// Offset just past the last good record before the first damage (see
    /// [`Framer::good_end`]).
    pub fn good_end(&self) -> u64 {
        self.damage_at.unwrap_or(self.base + self.pos as u64)
    }

    /// Bytes held right now (the partial record).
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.keep_from(self.buf.len())
    }

    /// Feeds the next chunk of the file.
    ///
    /// The chunk is read where it is: only what a record that straddles
    /// chunks needs is copied (the end of the chunk it starts in, then as
    /// much of the next as completes it, in pieces that double), so a walk
    /// copies each byte about once less than it reads it.
    pub fn push(&mut self, chunk: &[u8], f: &mut dyn FnMut(Event<'_>) -> Verdict) {
        self.bytes += chunk.len() as u64;
        let mut rest = chunk;
        while !self.ended && !rest.is_empty() {
            self.compact();
            if self.buf.is_empty() {
                self.run(rest, f);
                let k = self.keep_from(rest.len());
                self.shift(k);
                self.buf.extend_from_slice(&rest[k..]);
                self.copied += (rest.len() - k) as u64;
                return;
            }
            let n = rest.len().min(self.buf.len().max(64 << 10));
            self.buf.extend_from_slice(&rest[..n]);
            self.copied += n as u64;
            self.run_held(f);
            // What is still held and all came from this piece goes back to
            // be read where it is.
            let held = self.buf.len() - self.keep_from(self.buf.len());
            if held <= n {
                self.buf.truncate(self.buf.len() - held);
                self.copied -= held as u64;
                rest = &rest[n - held..];
            } else {
                rest = &rest[n..];
            }
        }
    }

    /// The end of the file: decides what was put off and ends the walk.
    pub fn finish(&mut self, f: &mut dyn FnMut(Event<'_>) -> Verdict) {
        self.finished = true;
        if !self.ended {
            self.run_held(f);
        }
        self.buf = Vec::new();
    }

    /// [`LogScan::run`] over the bytes held.
    fn run_held(&mut self, f: &mut dyn FnMut(Event<'_>) -> Verdict) {
        let buf = std::mem::take(&mut self.buf);
        self.run(&buf, f);
        self.buf = buf;
    }

    /// Scans a whole file held in memory.
    pub fn scan_all(bytes: &[u8], opts: ScanOptions, f: &mut dyn FnMut(Event<'_>) -> Verdict) {
        let mut s = LogScan::new(opts);
        s.push(bytes, f);
        s.finish(f);
    }

    /// Where the bytes still needed start, in a buffer of `len` bytes
    /// that the walk has read.
    fn keep_from(&self, len: usize) -> usize {
        let mut k = self.pos;
        if let Some((_, _, from)) = &self.damage {
            k = k.min(*from);
        }
        if let Some(Step::Record(d)) = &self.ahead {
            k = k.min(d.at);
        }
        k.min(len)
    }

    fn compact(&mut self) {
        let k = self.keep_from(self.buf.len());
        if k == 0 {
            return;
        }
        self.buf.drain(..k);
        self.shift(k);
    }

    /// The buffer's first `k` bytes are gone: positions move back.
    fn shift(&mut self, k: usize) {
        self.base += k as u64;
        self.pos -= k;
        if let Some((_, _, from)) = self.damage.as_mut() {
            *from -= k;
        }
        if let Some(Step::Record(d)) = self.ahead.as_mut() {
            d.at -= k;
        }
    }

    /// One salvage step (the logic of `Framer::read_salvaging`).
    fn read_salvaging(&mut self, buf: &[u8]) -> Step {
        let partial = !self.finished;
        loop {
            if let Some((start, err, from)) = self.damage.take() {
                let fr = Framer::window(
                    &buf[from..],
                    self.base + from as u64,
                    self.record,
                    self.magic.as_deref(),
                    partial,
                );
                match fr.resync_window(0) {
                    Resync::Found(p) => {
                        let next = from + p;
                        self.damage_at.get_or_insert(start);
                        self.pos = next;
                        self.record += 1;
                        let next_abs = self.base + next as u64;
                        return Step::Skipped(Skip {
                            record: err.record,
                            offset: start,
                            bytes: next_abs - start,
                            error: err,
                        });
                    }
                    Resync::NotFound => return Step::Tail(err),
                    Resync::NeedMore(p) => {
                        self.damage = Some((start, err, from + p));
                        return Step::NeedMore;
                    }
                }
            }
            let start = self.pos;
            let mut fr = Framer::window(
                &buf[start..],
                self.base + start as u64,
                self.record,
                self.magic.as_deref(),
                partial,
            );
            fr.trust_sha1 = self.opts.trust_sha1;
            let got = fr.read_one();
            if fr.need_more {
                return Step::NeedMore;
            }
            let magic = match self.magic {
                None => fr.magic().map(str::to_string),
                Some(_) => None,
            };
            match got {
                None => return Step::End,
                Some(Ok(r)) => {
                    let d = Desc {
                        at: start,
                        index: r.index,
                        header_len: r.header_len,
                        body_len: r.body.len(),
                        sha1: r.sha1,
                    };
                    if self.magic.is_none() {
                        self.magic = magic;
                    }
                    self.pos = start + d.header_len + d.body_len;
                    self.record += 1;
                    return Step::Record(d);
                }
                Some(Err(e)) => {
                    if self.magic.is_none() {
                        self.magic = magic;
                    }
                    if matches!(e.kind, ErrorKind::EmptyFile) {
                        return Step::Tail(e);
                    }
                    let at = self.base + start as u64;
                    self.damage = Some((at, e, start + 1));
                }
            }
        }
    }

    /// One step of `Framer::next_frame`.
    fn next_frame(&mut self, buf: &[u8]) -> Step {
        let next = match self.ahead.take() {
            Some(s) => s,
            None => self.read_salvaging(buf),
        };
        if matches!(next, Step::NeedMore) {
            return next;
        }
        let Some(skip) = self.rejected.take() else {
            return next;
        };
        match next {
            Step::Record(_) | Step::Skipped(_) => {
                self.ahead = Some(next);
                Step::Skipped(skip)
            }
            _ => Step::Tail(skip.error),
        }
    }

    fn raw<'b>(&self, buf: &'b [u8], d: &Desc) -> RawRecord<'b> {
        let b = d.at + d.header_len;
        RawRecord {
            index: d.index,
            offset: self.base + d.at as u64,
            header_len: d.header_len,
            line: &buf[d.at..b],
            body: &buf[b..b + d.body_len],
            sha1: d.sha1,
        }
    }

    /// Walks `buf` (the bytes from `base` on) as far as it goes.
    fn run(&mut self, buf: &[u8], f: &mut dyn FnMut(Event<'_>) -> Verdict) {
        while !self.ended {
            let d = match self.next_frame(buf) {
                Step::NeedMore => return,
                Step::End => {
                    self.ended = true;
                    return;
                }
                Step::Tail(e) => {
                    self.ended = true;
                    f(Event::Tail(e));
                    return;
                }
                Step::Skipped(k) => {
                    f(Event::Skipped(k));
                    continue;
                }
                Step::Record(d) => d,
            };
            let format = self.format().unwrap_or(Format::Clustered);
            let raw = self.raw(buf, &d);
            if self.opts.frames_only {
                f(Event::Frame { raw });
                continue;
            }
            let (verdict, log_end) = match decode(raw, format, self.opts, self.log_end) {
                Err(e) => (Verdict::Reject(e), None),
                Ok((ev, trunc, log_end)) => {
                    if let Some((from, to)) = trunc {
                        f(Event::Truncate {
                            record: d.index,
                            from,
                            to,
                        });
                    }
                    (f(ev), log_end)
                }
            };
            match verdict {
                Verdict::Keep => {
                    if let Some(l) = log_end {
                        self.log_end = l;
                    }
                }
                Verdict::Reject(e) => {
                    self.damage_at.get_or_insert(self.base + d.at as u64);
                    self.rejected = Some(Skip {
                        record: d.index,
                        offset: self.base + d.at as u64,
                        bytes: (d.header_len + d.body_len) as u64,
                        error: e,
                    });
                }
            }
        }
    }
}

type Decoded<'a> = (Event<'a>, Option<(u64, u64)>, Option<u64>);

/// Decodes one framed record into its event, the truncation it implies
/// and the new log end.
fn decode(
    raw: RawRecord<'_>,
    format: Format,
    opts: ScanOptions,
    log_end: u64,
) -> Result<Decoded<'_>, LogError> {
    use crate::raft::RecordBody as B;
    match (format, raw.index) {
        (Format::Standalone, 0) => match raw.decode(format)? {
            Record::Schema(schema) => Ok((Event::Schema { raw, schema }, None, None)),
            _ => Err(raw.error(ErrorKind::NotObject)),
        },
        (Format::Standalone, _) => {
            raw.decode_light(format)?;
            Ok((Event::Txn { raw }, None, None))
        }
        (Format::Clustered, 0) => match raw.decode(format)? {
            Record::Header(h) => {
                let end = h.prev_index().saturating_add(1);
                Ok((
                    Event::Header {
                        raw,
                        header: Box::new(h),
                    },
                    None,
                    Some(end),
                ))
            }
            _ => Err(raw.error(ErrorKind::NotObject)),
        },
        (Format::Clustered, _) => {
            let (rec, range, txn) = if opts.txn {
                raw.decode_streaming()?
            } else {
                let (rec, range) = raw.decode_light_payload_with(format, opts.known_good)?;
                (rec, range, None)
            };
            let Record::Raft(r) = rec else {
                return Err(raw.error(ErrorKind::NotObject));
            };
            Ok(match r.body {
                B::Entry(entry) => {
                    let data = range.and_then(|(a, b)| raw.body.get(a..b));
                    let trunc = (entry.index < log_end).then(|| (entry.index, log_end - 1));
                    let end = entry.index.saturating_add(1);
                    (
                        Event::Entry {
                            raw,
                            entry,
                            comment: r.comment,
                            data,
                            txn: txn.map(ScannedTxn),
                        },
                        trunc,
                        Some(end),
                    )
                }
                B::Term { term } => (Event::Term { raw, term }, None, None),
                B::Vote { term, vote } => (Event::Vote { raw, term, vote }, None, None),
                B::Leader { term, leader } => (Event::Leader { raw, term, leader }, None, None),
                B::CommitIndex { commit_index } => {
                    (Event::CommitIndex { raw, commit_index }, None, None)
                }
                B::Note { note } => (
                    Event::Note {
                        raw,
                        note,
                        comment: r.comment,
                    },
                    None,
                    None,
                ),
            })
        }
    }
}
