//! What operators collect: must-gather and sosreport archives, gzip'ed
//! database files, folders of logs. Every input is recognized by its
//! content, never by its name:
//!
//! - containers: gzip (`1f 8b`, multi-member), xz (`fd 37 7a 58 5a 00`, via
//!   lzma-rs) and tar (ustar, GNU and old v7 headers with a valid checksum,
//!   GNU `././@LongLink` names, pax `path`/`size` records), nested in any
//!   order;
//! - leaves: OVSDB database files, ovsdb-server text logs, `cluster/status`,
//!   `memory/show` and `coverage/show` output (small sniffers in
//!   [`sniff`], independent of the log parser).
//!
//! Everything else becomes an [`Ignored`] entry that says why, but for the
//! one file known by its place rather than its content: a folder's
//! `etc/hostname` (a sosreport's root has one), kept as a [`Hostname`]
//! that names the folder's servers.
//!
//! Streaming and bounds: gzip is decoded as it is read, tar members are read
//! one after the other from the decoded stream, and only recognized leaves
//! are kept in memory. Every decoder counts what it produces against
//! [`Limits`]: a ratio bound that applies once a decoder has produced
//! [`Limits::ratio_after_bytes`] (so real 10-20x database files pass and a
//! gzip bomb stops early), a bound on everything decoded from one input, and
//! a bound on the bytes kept over all inputs. One exception to streaming:
//! lzma-rs decodes an xz block whole before handing it on, so xz output is
//! held per block; the xz layer checks the sizes each LZMA2 chunk declares
//! *before* lzma-rs decodes it, against the same bounds and
//! [`Limits::max_buffered_bytes`].
//!
//! Safety: tar members with `..` components or absolute names are refused,
//! links, devices and FIFOs are ignored, nothing is written anywhere, bad
//! input never panics, and an error in one input (or one member) never stops
//! the others; what was read before a truncation or corruption is kept.

use std::cell::Cell;
use std::io::{self, Read};

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

pub mod sniff;
mod tar;
mod xz;

/// What an input turned out to be, by content.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// An OVSDB database file (`OVSDB JSON` / `OVSDB CLUSTER` records).
    Database,
    /// An ovsdb-server text log.
    ServerLog,
    /// `cluster/status` output.
    ClusterStatus,
    /// `memory/show` output.
    MemoryShow,
    /// `coverage/show` output.
    CoverageShow,
}

impl InputKind {
    /// `"database"`, `"log"`, `"cluster-status"`, `"memory-show"`, `"coverage-show"`.
    pub fn name(self) -> &'static str {
        match self {
            InputKind::Database => "database",
            InputKind::ServerLog => "log",
            InputKind::ClusterStatus => "cluster-status",
            InputKind::MemoryShow => "memory-show",
            InputKind::CoverageShow => "coverage-show",
        }
    }
}

/// One recognized input, decompressed and unpacked.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// Path as given, with archive members as `archive.tar.gz/member/path`.
    pub path: String,
    pub kind: InputKind,
    pub bytes: Vec<u8>,
}

/// An input that was not used, and why.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct Ignored {
    pub path: String,
    pub reason: String,
}

/// Everything found in the inputs given to [`Collector::add`].
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Collected {
    pub items: Vec<Item>,
    pub ignored: Vec<Ignored>,
    /// Database files handed to a [`DatabaseSink`] instead of kept
    /// ([`Collector::add_streaming`]), in the order they were read.
    pub streamed: Vec<Streamed>,
    /// The host names of the folders that have an `etc/hostname`.
    pub hostnames: Vec<Hostname>,
}

/// A folder's `etc/hostname` (a sosreport's root has the node's): the
/// name of the host whose files sit below `folder`.
#[derive(Clone, Debug, PartialEq)]
pub struct Hostname {
    /// The folder holding `etc/hostname`, as paths name it
    /// (`sosreport.tar.xz/sosreport-node1-2026-12-01`).
    pub folder: String,
    pub name: String,
}

impl Hostname {
    /// The host name a file `etc/hostname` holds: one line of letters,
    /// digits, '-', '_' and '.' (at most 253 of them, as DNS allows).
    fn read(bytes: &[u8]) -> Option<String> {
        let name = std::str::from_utf8(bytes).ok()?.trim();
        let ok = (1..=253).contains(&name.len())
            && name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
        ok.then(|| name.to_string())
    }

    /// The host name of `path`'s folder: of the deepest folder holding it
    /// that has an `etc/hostname` among `names` (a named folder, not the
    /// working directory).
    pub fn of<'a>(names: &'a [Hostname], path: &str) -> Option<&'a str> {
        names
            .iter()
            .filter(|h| {
                !h.folder.is_empty()
                    && path
                        .strip_prefix(h.folder.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
            .max_by_key(|h| h.folder.len())
            .map(|h| h.name.as_str())
    }
}

/// A database file that went to a [`DatabaseSink`].
#[derive(Clone, Debug, PartialEq)]
pub struct Streamed {
    pub path: String,
    /// Bytes handed to the sink.
    pub bytes: u64,
}

/// Takes database files as they are read, chunk by chunk, instead of the
/// collector keeping them: nothing of a database needs to be held whole
/// (operators' Southbound files reach hundreds of MB). `begin`, any number
/// of `chunk`s, then `end` per file; files never interleave.
pub trait DatabaseSink {
    fn begin(&mut self, path: &str);
    fn chunk(&mut self, bytes: &[u8]);
    /// `keep` false: the read failed in a way that makes the bytes given so
    /// far worthless (the file is listed as ignored); true: use them (a
    /// truncated file is still read up to its tear).
    fn end(&mut self, keep: bool);
}

/// Read size when a database streams to a sink.
const STREAM_CHUNK: usize = 1 << 20;

/// Bytes kept over all inputs of one [`Collector`] (the items' bytes): 1 GiB.
pub const MAX_TOTAL_BYTES: u64 = 1 << 30;
/// Bytes all decoders together may produce from one input given to
/// [`Collector::add`], kept or not (skipped members count too): 4 GiB.
pub const MAX_DECOMPRESSED_BYTES: u64 = 4 << 30;
/// Output:input ratio a decoder may not pass ...
pub const MAX_RATIO: u64 = 100;
/// ... once it has produced this much output: 32 MiB. Below it any ratio is
/// fine (small, very regular files compress far better than 100:1).
pub const RATIO_AFTER_BYTES: u64 = 32 << 20;
/// Decoded xz data held at once (lzma-rs decodes a block whole): 512 MiB.
pub const MAX_BUFFERED_BYTES: u64 = 512 << 20;
/// Containers inside containers (`a.tar.gz` = 2 levels).
pub const MAX_DEPTH: u32 = 8;
/// How much of a leaf the sniffers look at: 64 KiB.
pub const SNIFF_BYTES: usize = 64 << 10;
/// Longest tar member name taken from a GNU long-name or pax record: 64 KiB.
pub const MAX_TAR_NAME_BYTES: u64 = 64 << 10;
/// Largest pax extended header read: 1 MiB.
pub const MAX_PAX_BYTES: u64 = 1 << 20;

/// The bounds a [`Collector`] works within (defaults: the consts above).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// See [`MAX_TOTAL_BYTES`].
    pub max_total_bytes: u64,
    /// See [`MAX_DECOMPRESSED_BYTES`].
    pub max_decompressed_bytes: u64,
    /// See [`MAX_RATIO`].
    pub max_ratio: u64,
    /// See [`RATIO_AFTER_BYTES`].
    pub ratio_after_bytes: u64,
    /// See [`MAX_BUFFERED_BYTES`].
    pub max_buffered_bytes: u64,
    /// See [`MAX_DEPTH`].
    pub max_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_total_bytes: MAX_TOTAL_BYTES,
            max_decompressed_bytes: MAX_DECOMPRESSED_BYTES,
            max_ratio: MAX_RATIO,
            ratio_after_bytes: RATIO_AFTER_BYTES,
            max_buffered_bytes: MAX_BUFFERED_BYTES,
            max_depth: MAX_DEPTH,
        }
    }
}

/// Opens inputs one by one and collects what they hold.
///
/// ```
/// use evidence::collect::{Collector, InputKind, Limits};
/// let mut c = Collector::new(Limits::default());
/// c.add("s1.db", &mut &b"OVSDB JSON 2 0000000000000000000000000000000000000000\n{}\n"[..]);
/// c.add("x.log", &mut &[0u8, 1, 2, 3][..]);
/// let got = c.finish();
/// assert_eq!(got.items[0].kind, InputKind::Database);
/// assert_eq!(got.ignored[0].path, "x.log");
/// ```
#[derive(Debug, Default)]
pub struct Collector {
    limits: Limits,
    out: Collected,
    kept: u64,
}

impl Collector {
    pub fn new(limits: Limits) -> Self {
        Collector {
            limits,
            out: Collected::default(),
            kept: 0,
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Reads one input (a file's contents) to its end or to the first thing
    /// that stops it. `path` names it in the results; members of archives
    /// are `path/member/path`, and a compressed single file drops its
    /// `.gz`/`.xz`. Problems are recorded as [`Ignored`] entries; nothing
    /// here fails or panics, so the next input always gets its turn.
    pub fn add(&mut self, path: &str, input: &mut dyn Read) {
        self.run(path, input, None);
    }

    /// [`Collector::add`], with the database files (alone or inside
    /// archives) streamed to `sink` rather than kept: they are listed in
    /// [`Collected::streamed`] and count against no bound on bytes kept.
    pub fn add_streaming(&mut self, path: &str, input: &mut dyn Read, sink: &mut dyn DatabaseSink) {
        self.run(path, input, Some(sink));
    }

    fn run(&mut self, path: &str, input: &mut dyn Read, sink: Option<&mut dyn DatabaseSink>) {
        let meter = Meter {
            limits: self.limits,
            produced: Cell::new(0),
        };
        let mut run = Run {
            meter: &meter,
            out: &mut self.out,
            kept: &mut self.kept,
            sink,
        };
        let _ = run.open(path, path, input, 0);
    }

    /// [`Collector::add`] over bytes in memory.
    pub fn add_bytes(&mut self, path: &str, bytes: &[u8]) {
        self.add(path, &mut &bytes[..]);
    }

    /// What was collected so far.
    pub fn collected(&self) -> &Collected {
        &self.out
    }

    /// Bytes kept so far (the sum of the items' lengths).
    pub fn kept_bytes(&self) -> u64 {
        self.kept
    }

    pub fn finish(self) -> Collected {
        self.out
    }
}

/// Where a rotated log belongs: `(base, n)` with `n` = 0 for the live file
/// and `n` = N for logrotate's `.N` suffix.
///
/// `…/ovsdb-server-nb.log` → `("…/ovsdb-server-nb.log", 0)`,
/// `…/ovsdb-server-nb.log.1` → `(…, 1)`, `…/ovsdb-server-nb.log.2` (from
/// `.log.2.gz`, whose `.gz` the collector strips) → `(…, 2)`. A leftover
/// `.gz`/`.xz` is stripped too. Names that do not end in `.log` or
/// `.log.N` give `None` (the caller keeps such a log on its own). Join the
/// parts of one base from the highest `n` (oldest) down to 0 (newest); see
/// [`log_groups`]. Date suffixes (`-20261201`) are not rotations here.
pub fn rotation(path: &str) -> Option<(&str, u32)> {
    let p = path
        .strip_suffix(".gz")
        .or_else(|| path.strip_suffix(".xz"))
        .unwrap_or(path);
    if p.ends_with(".log") {
        return Some((p, 0));
    }
    let (base, n) = p.rsplit_once('.')?;
    if base.ends_with(".log")
        && !n.is_empty()
        && n.len() <= 6
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        return Some((base, n.parse().ok()?));
    }
    None
}

/// Rotated parts of one log, oldest first, as indexes into the items given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogGroup {
    pub base: String,
    pub parts: Vec<usize>,
}

/// Groups the [`InputKind::ServerLog`] items by [`rotation`] base (a log
/// whose name is no rotation is a group of its own, named by its path), in
/// order of first appearance, each group's parts oldest (highest `n`) first.
pub fn log_groups(items: &[Item]) -> Vec<LogGroup> {
    let mut groups: Vec<(LogGroup, Vec<u32>)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.kind != InputKind::ServerLog {
            continue;
        }
        let (base, n) = rotation(&item.path).unwrap_or((&item.path, 0));
        match groups.iter_mut().find(|(g, _)| g.base == base) {
            Some((g, ns)) => {
                g.parts.push(i);
                ns.push(n);
            }
            None => groups.push((
                LogGroup {
                    base: base.to_string(),
                    parts: vec![i],
                },
                vec![n],
            )),
        }
    }
    groups
        .into_iter()
        .map(|(mut g, ns)| {
            let mut both: Vec<(u32, usize)> = ns.into_iter().zip(g.parts).collect();
            ovsdb::order::sort_by(&mut both, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            g.parts = both.into_iter().map(|(_, i)| i).collect();
            g
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Errors passed through readers.

/// A decoder's verdict, carried inside an `io::Error` up to whoever reads.
#[derive(Debug)]
pub(crate) struct Broken {
    pub(crate) reason: String,
    /// Truncation or corruption (what came before is good) rather than a
    /// bound (what came before is suspect).
    pub(crate) keep: bool,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Broken {}

pub(crate) fn broken(reason: String, keep: bool) -> io::Error {
    io::Error::other(Broken { reason, keep })
}

/// The reason to report for a read error, and whether to keep what came
/// before it.
pub(crate) fn describe(e: &io::Error) -> (String, bool) {
    let inner = e.get_ref();
    if let Some(b) = inner.and_then(|x| x.downcast_ref::<Broken>()) {
        return (b.reason.clone(), b.keep);
    }
    if let Some(p) = inner.and_then(|x| x.downcast_ref::<Partial>()) {
        return (p.reason.clone(), p.keep);
    }
    (format!("read error: {e}"), true)
}

/// The bounds of one input, shared by its decoders.
pub(crate) struct Meter {
    pub(crate) limits: Limits,
    /// Bytes produced by all decoders of this input.
    pub(crate) produced: Cell<u64>,
}

impl Meter {
    /// Counts `n` more bytes from a `what` decoder that has now produced
    /// `out` from `input` bytes.
    pub(crate) fn count(&self, what: &str, n: u64, out: u64, input: u64) -> Result<(), String> {
        let l = &self.limits;
        let total = self.produced.get().saturating_add(n);
        self.produced.set(total);
        if out > l.ratio_after_bytes && out > input.saturating_mul(l.max_ratio) {
            return Err(format!(
                "{what} data expands past the {}:1 bound: possible decompression bomb ({out} bytes from {input})",
                l.max_ratio
            ));
        }
        if total > l.max_decompressed_bytes {
            return Err(format!(
                "decompressed data passes the bound of {} bytes for one input",
                l.max_decompressed_bytes
            ));
        }
        Ok(())
    }
}

/// Counts the bytes read through it.
pub(crate) struct Counted<R> {
    pub(crate) inner: R,
    pub(crate) n: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n += k as u64;
        Ok(k)
    }
}

/// gzip (every member) as it is read, with its bounds.
struct Gz<'a, R: Read> {
    dec: flate2::read::MultiGzDecoder<Counted<R>>,
    meter: &'a Meter,
    out: u64,
    failed: Option<(String, bool)>,
}

impl<R: Read> Read for Gz<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some((r, k)) = &self.failed {
            return Err(broken(r.clone(), *k));
        }
        let consumed = self.dec.get_ref().n;
        let res = match self.dec.read(buf) {
            Ok(n) => {
                self.out += n as u64;
                let consumed = self.dec.get_ref().n;
                match self.meter.count("gzip", n as u64, self.out, consumed) {
                    Ok(()) => return Ok(n),
                    Err(r) => (r, false),
                }
            }
            Err(e) => match e.get_ref().and_then(|x| x.downcast_ref::<Broken>()) {
                Some(b) => (b.reason.clone(), b.keep),
                None if e.kind() == io::ErrorKind::UnexpectedEof => (
                    format!(
                        "gzip data truncated at byte {}",
                        self.dec.get_ref().n.max(consumed)
                    ),
                    true,
                ),
                None => (
                    format!("gzip data corrupt near byte {}: {e}", self.dec.get_ref().n),
                    true,
                ),
            },
        };
        self.failed = Some(res.clone());
        Err(broken(res.0, res.1))
    }
}

/// Reads until `buf` is full or the input ends; returns the count. On an
/// error, the count read before it is in the error (see
/// [`read_full_count`]).
pub(crate) fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                let (reason, keep) = describe(&e);
                return Err(io::Error::other(Partial { reason, keep, n }));
            }
        }
    }
    Ok(n)
}

/// A [`read_full`] error: what stopped it, after how many bytes.
#[derive(Debug)]
struct Partial {
    reason: String,
    keep: bool,
    n: usize,
}

impl std::fmt::Display for Partial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Partial {}

/// Bytes [`read_full`] read before the error `e`.
fn read_full_count(e: &io::Error) -> usize {
    e.get_ref()
        .and_then(|x| x.downcast_ref::<Partial>())
        .map_or(0, |p| p.n)
}

/// `name` without `suffix` (ASCII case ignored), if it has more before it.
fn strip_ci<'a>(name: &'a str, suffix: &str) -> Option<&'a str> {
    let cut = name.len().checked_sub(suffix.len())?;
    if cut == 0 || !name.is_char_boundary(cut) || name[..cut].ends_with('/') {
        return None;
    }
    name[cut..]
        .eq_ignore_ascii_case(suffix)
        .then(|| &name[..cut])
}

/// A stream that has failed: its failure, again.
struct Failed(Option<(String, bool)>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match &self.0 {
            Some((reason, keep)) => Err(broken(reason.clone(), *keep)),
            None => Ok(0),
        }
    }
}

/// Stopped: the stream under us is unusable, and it was reported.
pub(crate) struct Stop;

/// One input's pass.
pub(crate) struct Run<'a, 's> {
    pub(crate) meter: &'a Meter,
    pub(crate) out: &'a mut Collected,
    pub(crate) kept: &'a mut u64,
    pub(crate) sink: Option<&'s mut dyn DatabaseSink>,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const XZ_MAGIC: [u8; 6] = [0xfd, b'7', b'z', b'X', b'Z', 0];

impl Run<'_, '_> {
    pub(crate) fn ignore(&mut self, path: &str, reason: impl Into<String>) {
        self.out.ignored.push(Ignored {
            path: path.to_string(),
            reason: reason.into(),
        });
    }

    /// Opens one stream: `archive` names it if it turns out to be a tar,
    /// `leaf` if it is anything else (the two differ once a `.gz` or `.xz`
    /// has been taken off). `Err(Stop)` means the stream failed under us
    /// (reported); the caller must stop reading it.
    pub(crate) fn open(
        &mut self,
        archive: &str,
        leaf: &str,
        r: &mut dyn Read,
        depth: u32,
    ) -> Result<(), Stop> {
        let mut head = [0u8; 512];
        let (n, failed) = match read_full(r, &mut head) {
            Ok(n) => (n, None),
            Err(e) => (read_full_count(&e), Some(describe(&e))),
        };
        // After a failure, the bytes before it go on, then the failure again.
        let mut again = Failed(failed.clone());
        let r: &mut dyn Read = if failed.is_some() { &mut again } else { r };
        let head = &head[..n];
        let is_gzip = head.starts_with(&GZIP_MAGIC);
        let is_xz = head.starts_with(&XZ_MAGIC);
        let is_tar = n == 512 && tar::is_header(head);
        if (is_gzip || is_xz || is_tar) && depth >= self.meter.limits.max_depth {
            self.ignore(
                leaf,
                format!(
                    "archives nested deeper than {} levels",
                    self.meter.limits.max_depth
                ),
            );
            return Ok(());
        }
        if is_gzip {
            let mut gz = Gz {
                dec: flate2::read::MultiGzDecoder::new(Counted {
                    inner: head.chain(r),
                    n: 0,
                }),
                meter: self.meter,
                out: 0,
                failed: None,
            };
            let inner = strip_ci(leaf, ".gz").unwrap_or(leaf);
            self.open(archive, inner, &mut gz, depth + 1)
        } else if is_xz {
            let inner = strip_ci(leaf, ".xz").unwrap_or(leaf);
            self.xz(archive, inner, &mut head.chain(r), depth)
        } else if is_tar {
            let mut first = [0u8; 512];
            first.copy_from_slice(head);
            tar::read(self, archive, first, r, depth + 1)
        } else {
            self.leaf(leaf, &mut head.chain(r))
        }
    }

    fn xz(&mut self, archive: &str, leaf: &str, r: &mut dyn Read, depth: u32) -> Result<(), Stop> {
        let (data, error) = xz::decode(r, self.meter);
        if let Some(reason) = error {
            self.ignore(leaf, reason);
            if data.is_empty() {
                return Err(Stop);
            }
        }
        self.open(archive, leaf, &mut &data[..], depth + 1)
    }

    /// A stream that is no container: sniff its head, keep it if it is one
    /// of ours.
    fn leaf(&mut self, path: &str, r: &mut dyn Read) -> Result<(), Stop> {
        let mut buf = vec![0u8; SNIFF_BYTES];
        let (n, mut failure) = match read_full(r, &mut buf) {
            Ok(n) => (n, None),
            Err(e) => (read_full_count(&e), Some(describe(&e))),
        };
        buf.truncate(n);
        if let Some(folder) = path.strip_suffix("/etc/hostname") {
            if let Some(name) = Hostname::read(&buf).filter(|_| failure.is_none()) {
                self.out.hostnames.push(Hostname {
                    folder: folder.to_string(),
                    name,
                });
                return Ok(());
            }
        }
        if n == 0 {
            match failure {
                Some((reason, _)) => {
                    self.ignore(path, reason);
                    return Err(Stop);
                }
                None => {
                    self.ignore(path, "empty file");
                    return Ok(());
                }
            }
        }
        let kind = sniff::classify(&buf, failure.is_some() || n < SNIFF_BYTES);
        let kind = match (kind, failure) {
            (Ok(kind), f) => {
                failure = f;
                kind
            }
            (Err(_), Some((reason, _))) => {
                self.ignore(path, reason);
                return Err(Stop);
            }
            (Err(reason), None) => {
                self.ignore(path, reason);
                return Ok(());
            }
        };
        if kind == InputKind::Database && self.sink.is_some() {
            return self.stream_database(path, buf, failure, r);
        }
        let room = self.meter.limits.max_total_bytes.saturating_sub(*self.kept);
        if n as u64 > room {
            self.ignore(path, self.cap_reason(kind));
            return if failure.is_some() { Err(Stop) } else { Ok(()) };
        }
        if failure.is_none() {
            let left = room - n as u64;
            match r.take(left.saturating_add(1)).read_to_end(&mut buf) {
                Ok(_) if buf.len() as u64 > room => {
                    self.ignore(path, self.cap_reason(kind));
                    return Ok(());
                }
                Ok(_) => {}
                Err(e) => failure = Some(describe(&e)),
            }
        }
        let stop = failure.is_some();
        if let Some((reason, keep)) = failure {
            if !keep {
                self.ignore(path, reason);
                return Err(Stop);
            }
            self.ignore(
                path,
                format!(
                    "{reason}; kept the first {} bytes as a {}",
                    buf.len(),
                    kind.name()
                ),
            );
        }
        *self.kept += buf.len() as u64;
        self.out.items.push(Item {
            path: path.to_string(),
            kind,
            bytes: buf,
        });
        if stop {
            Err(Stop)
        } else {
            Ok(())
        }
    }

    /// A database leaf to the sink: its sniffed head, then the rest in
    /// chunks.
    fn stream_database(
        &mut self,
        path: &str,
        mut buf: Vec<u8>,
        mut failure: Option<(String, bool)>,
        r: &mut dyn Read,
    ) -> Result<(), Stop> {
        let Some(sink) = self.sink.as_deref_mut() else {
            return Ok(());
        };
        sink.begin(path);
        sink.chunk(&buf);
        let mut total = buf.len() as u64;
        if failure.is_none() {
            buf.resize(STREAM_CHUNK, 0);
            loop {
                match read_full(r, &mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        sink.chunk(&buf[..n]);
                        total += n as u64;
                        if n < buf.len() {
                            break;
                        }
                    }
                    Err(e) => {
                        let n = read_full_count(&e);
                        sink.chunk(&buf[..n]);
                        total += n as u64;
                        failure = Some(describe(&e));
                        break;
                    }
                }
            }
        }
        let keep = failure.as_ref().is_none_or(|f| f.1);
        sink.end(keep);
        let stop = failure.is_some();
        if let Some((reason, keep)) = failure {
            if !keep {
                self.ignore(path, reason);
                return Err(Stop);
            }
            self.ignore(
                path,
                format!("{reason}; kept the first {total} bytes as a database"),
            );
        }
        self.out.streamed.push(Streamed {
            path: path.to_string(),
            bytes: total,
        });
        if stop {
            Err(Stop)
        } else {
            Ok(())
        }
    }

    fn cap_reason(&self, kind: InputKind) -> String {
        format!(
            "a {} past the cap of {} bytes kept over all inputs",
            kind.name(),
            self.meter.limits.max_total_bytes
        )
    }
}
