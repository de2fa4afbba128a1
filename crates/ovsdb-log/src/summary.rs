//! Per-file summary (`inspect`), tolerant of a damaged tail.

use crate::error::LogError;
use crate::framing::{Format, Skip};
use crate::raft::RecordBody;
use crate::record::Record;
use crate::scan::{Event, LogScan, ScanOptions, Verdict};
use crate::uuid::Uuid;
use ovsdb::json::{Json, Object};

/// Counts of records per kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordKinds {
    pub header: usize,
    pub entry: usize,
    pub term: usize,
    pub vote: usize,
    pub leader: usize,
    pub commit_index: usize,
    pub note: usize,
    pub schema: usize,
    pub txn: usize,
}

impl RecordKinds {
    fn bump(&mut self, kind: &str) {
        match kind {
            "header" => self.header += 1,
            "entry" => self.entry += 1,
            "term" => self.term += 1,
            "vote" => self.vote += 1,
            "leader" => self.leader += 1,
            "commit_index" => self.commit_index += 1,
            "note" => self.note += 1,
            "schema" => self.schema += 1,
            _ => self.txn += 1,
        }
    }
}

/// Bytes (header line + body) of the records that carry transaction data:
/// as stored, and as they would be written with full values / column diffs.
/// `full`/`diff` are `None` when they could not be computed (no schema,
/// replay failure).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryBytes {
    pub stored: u64,
    pub full: Option<u64>,
    pub diff: Option<u64>,
}

/// `(term, server)` from a leader or vote record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermSid {
    pub term: u64,
    pub sid: Uuid,
}

/// Summary of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSummary {
    /// `None` when not even the first header could be read.
    pub format: Option<Format>,
    pub database: Option<String>,
    pub schema_version: Option<String>,
    pub server_id: Option<Uuid>,
    pub cluster_id: Option<Uuid>,
    pub local_address: Option<String>,
    /// A joining file (header with `remote_addresses`).
    pub joining: bool,
    /// Good records, record 0 included.
    pub records: usize,
    pub record_kinds: RecordKinds,
    /// Distinct terms seen (records' terms and the header's `prev_term`),
    /// ascending.
    pub terms: Vec<u64>,
    /// The header's `prev_index`.
    pub snapshot_index: Option<u64>,
    /// Index of the last entry in file order (a later, lower index
    /// supersedes earlier ones); the snapshot index when there is none.
    pub last_index: Option<u64>,
    /// Highest commit-index record.
    pub commit_index: Option<u64>,
    pub leaders: Vec<TermSid>,
    pub votes: Vec<TermSid>,
    /// File size.
    pub bytes: u64,
    pub entry_bytes: EntryBytes,
    /// The error that ended reading, if any (everything above describes
    /// the records before it).
    pub truncated: Option<LogError>,
    /// Damaged spans between good records that reading stepped over (in
    /// file order). Everything above describes the good records on both
    /// sides; `entry_bytes.full`/`diff` are unknown when this is not
    /// empty.
    pub skipped: Vec<Skip>,
}

impl FileSummary {
    fn empty(bytes: u64) -> Self {
        FileSummary {
            format: None,
            database: None,
            schema_version: None,
            server_id: None,
            cluster_id: None,
            local_address: None,
            joining: false,
            records: 0,
            record_kinds: RecordKinds::default(),
            terms: Vec::new(),
            snapshot_index: None,
            last_index: None,
            commit_index: None,
            leaders: Vec::new(),
            votes: Vec::new(),
            bytes,
            entry_bytes: EntryBytes::default(),
            truncated: None,
            skipped: Vec::new(),
        }
    }

    /// The `inspect --json` object for this file (keys of issue 3), with
    /// `path` set to the given value (null when `None`).
    pub fn to_json(&self, path: Option<&str>) -> Json {
        let mut o = Object::new();
        let s = |v: Option<String>| v.map_or(Json::Null, Json::String);
        let u = |v: Option<u64>| v.map_or(Json::Null, |x| Json::Integer(x as i64));
        o.push_unchecked("path", s(path.map(str::to_string)));
        o.push_unchecked("format", s(self.format.map(|f| f.name().to_string())));
        o.push_unchecked("database", s(self.database.clone()));
        o.push_unchecked("schema_version", s(self.schema_version.clone()));
        o.push_unchecked("server_id", s(self.server_id.map(|x| x.to_string())));
        o.push_unchecked("cluster_id", s(self.cluster_id.map(|x| x.to_string())));
        o.push_unchecked("local_address", s(self.local_address.clone()));
        o.push_unchecked("joining", Json::Bool(self.joining));
        o.push_unchecked("records", Json::Integer(self.records as i64));
        let k = &self.record_kinds;
        let mut kinds = Object::new();
        let pairs: Vec<(&str, usize)> = if self.format == Some(Format::Standalone) {
            vec![("schema", k.schema), ("txn", k.txn)]
        } else {
            vec![
                ("header", k.header),
                ("entry", k.entry),
                ("term", k.term),
                ("vote", k.vote),
                ("leader", k.leader),
                ("commit_index", k.commit_index),
                ("note", k.note),
            ]
        };
        for (name, n) in pairs {
            kinds.push_unchecked(name, Json::Integer(n as i64));
        }
        o.push_unchecked("record_kinds", Json::Object(kinds));
        o.push_unchecked(
            "terms",
            Json::Array(
                self.terms
                    .iter()
                    .map(|&t| Json::Integer(t as i64))
                    .collect(),
            ),
        );
        o.push_unchecked("snapshot_index", u(self.snapshot_index));
        o.push_unchecked("last_index", u(self.last_index));
        o.push_unchecked("commit_index", u(self.commit_index));
        let ts = |v: &[TermSid], key: &str| {
            Json::Array(
                v.iter()
                    .map(|x| {
                        let mut e = Object::new();
                        e.push_unchecked("term", Json::Integer(x.term as i64));
                        e.push_unchecked(key, Json::String(x.sid.to_string()));
                        Json::Object(e)
                    })
                    .collect(),
            )
        };
        o.push_unchecked("leaders", ts(&self.leaders, "leader"));
        o.push_unchecked("votes", ts(&self.votes, "vote"));
        o.push_unchecked("bytes", Json::Integer(self.bytes as i64));
        let mut eb = Object::new();
        eb.push_unchecked("stored", Json::Integer(self.entry_bytes.stored as i64));
        eb.push_unchecked("full", u(self.entry_bytes.full));
        eb.push_unchecked("diff", u(self.entry_bytes.diff));
        o.push_unchecked("entry_bytes", Json::Object(eb));
        o.push_unchecked(
            "truncated",
            match &self.truncated {
                None => Json::Null,
                Some(e) => {
                    let mut t = Object::new();
                    t.push_unchecked("record", Json::Integer(e.record as i64));
                    t.push_unchecked("offset", Json::Integer(e.offset as i64));
                    t.push_unchecked("reason", Json::String(e.kind.to_string()));
                    t.push_unchecked("code", Json::String(e.kind.code().to_string()));
                    Json::Object(t)
                }
            },
        );
        // Only when something was skipped, so that the output of files
        // without damage in the middle stays as it was.
        if !self.skipped.is_empty() {
            o.push_unchecked("skipped", skipped_json(&self.skipped));
        }
        Json::Object(o)
    }
}

/// Summarizes a file held in memory: format, identity, record counts and
/// kinds, terms, indexes, leaders, votes, entry sizes (stored; full and diff
/// when the data replays). Never fails: a damaged tail (or a damaged first
/// record) is reported in `truncated` and the summary covers the records
/// before it.
pub fn summarize(bytes: &[u8]) -> FileSummary {
    summarize_impl(bytes, true).0
}

/// [`summarize`] plus the size of every transaction-carrying record (as
/// stored, with full values, with diffs), in file order. Empty when the
/// sizes could not be computed (`entry_bytes.full` is then `None`).
pub fn summarize_detailed(bytes: &[u8]) -> (FileSummary, Vec<crate::sizes::EntrySize>) {
    summarize_impl(bytes, true)
}

/// Like [`summarize`] but without the full/diff size computation (which
/// replays the data): only framing and Raft/txn record decoding.
pub fn summarize_records(bytes: &[u8]) -> FileSummary {
    summarize_impl(bytes, false).0
}

fn summarize_impl(bytes: &[u8], with_sizes: bool) -> (FileSummary, Vec<crate::sizes::EntrySize>) {
    let mut sum = Summarizer::new(with_sizes);
    let mut scan = LogScan::new(sum.options());
    scan.push(bytes, &mut |ev| sum.on_event(&ev));
    scan.finish(&mut |ev| sum.on_event(&ev));
    match sum.finish(&scan) {
        SummaryEnd::Done(s, e) => (*s, e),
        SummaryEnd::Again(mut pass) => {
            LogScan::scan_all(bytes, pass.options(), &mut |ev| {
                pass.on_event(&ev);
                Verdict::Keep
            });
            (*pass).finish()
        }
    }
}

/// The per-file summary as a consumer of [`LogScan`] events: feed it
/// every event of one walk, then [`Summarizer::finish`].
pub struct Summarizer {
    s: FileSummary,
    with_sizes: bool,
    terms: std::collections::BTreeSet<u64>,
    last_entry: Option<u64>,
    structure: crate::replay_pass::Structure,
    stream: crate::shared_replay::Stream,
    /// Standalone files: the replay runs in the same pass.
    standalone: Option<crate::replay_pass::ReplayPass>,
    /// Keep checkpoints of the replay ([`Summarizer::with_checkpoints`]).
    checkpoints: Option<crate::checkpoint::Policy>,
}

/// How a summary ends: done, or (clustered files whose log replaces its
/// own entries, or whose payloads the one-pass replay could not apply) a
/// second walk over the same bytes is needed for the sizes.
pub enum SummaryEnd {
    Done(Box<FileSummary>, Vec<crate::sizes::EntrySize>),
    Again(Box<SecondPass>),
}

/// The second walk of [`SummaryEnd::Again`]: feed every event of a new
/// [`LogScan`] (with [`SecondPass::options`]) over the same bytes.
pub struct SecondPass {
    s: FileSummary,
    pass: crate::replay_pass::ReplayPass,
}

impl SecondPass {
    pub fn options(&self) -> ScanOptions {
        ScanOptions {
            txn: true,
            ..ScanOptions::default()
        }
    }
    pub fn on_event(&mut self, ev: &Event<'_>) {
        self.pass.on_event(ev);
    }
    /// The summary without the second walk: full/diff sizes unknown (when
    /// the bytes cannot be read again).
    pub fn without_sizes(self) -> FileSummary {
        let mut s = self.s;
        s.entry_bytes.full = None;
        s.entry_bytes.diff = None;
        s
    }

    pub fn finish(self) -> (FileSummary, Vec<crate::sizes::EntrySize>) {
        let (s, entries, _) = self.finish_keeping();
        (s, entries)
    }

    /// [`SecondPass::finish`], and the checkpoints of the replay when the
    /// first walk was asked for them ([`Summarizer::with_checkpoints`]).
    pub fn finish_keeping(
        self,
    ) -> (
        FileSummary,
        Vec<crate::sizes::EntrySize>,
        Option<Box<crate::checkpoint::Checkpoints>>,
    ) {
        let mut s = self.s;
        let mut r = self.pass.finish(s.truncated.clone());
        let checkpoints = r.checkpoints.take();
        let mut entries = Vec::new();
        let (_, full, diff) = r.totals();
        s.entry_bytes.full = full;
        s.entry_bytes.diff = diff;
        if full.is_some() {
            entries = r.entries;
        }
        (s, entries, checkpoints)
    }
}

impl Summarizer {
    /// `with_sizes`: also the full/diff sizes (replays the data).
    pub fn new(with_sizes: bool) -> Summarizer {
        Summarizer {
            s: FileSummary::empty(0),
            with_sizes,
            terms: Default::default(),
            last_entry: None,
            structure: Default::default(),
            stream: crate::shared_replay::Stream::new(),
            standalone: None,
            checkpoints: None,
        }
    }

    /// Keeps checkpoints of the size replay on the way
    /// ([`crate::checkpoint`]), so that a later replay to any index (the
    /// inspector's, time travel's) starts from the nearest one instead of
    /// the start of the file; [`Summarizer::finish_all`] gives them.
    /// Files of a cluster that share their replay
    /// ([`Summarizer::share`]) share the checkpoints' rows too.
    pub fn with_checkpoints(mut self, policy: crate::checkpoint::Policy) -> Summarizer {
        self.checkpoints = Some(policy);
        self.stream.ckpt = Some(Box::new(crate::checkpoint::Checkpoints::new(policy)));
        self
    }

    /// The scanner options this consumer needs.
    pub fn options(&self) -> ScanOptions {
        // The one-pass replay holds each entry's data bytes until it is
        // final and reads the transaction then, so the scanner need not.
        ScanOptions::default()
    }

    /// Takes one event of the walk.
    pub fn on_event(&mut self, ev: &Event<'_>) -> Verdict {
        let s = &mut self.s;
        let raw = match ev {
            Event::Skipped(k) => {
                s.skipped.push(k.clone());
                self.stream.skipped();
                return Verdict::Keep;
            }
            Event::Tail(e) => {
                s.truncated = Some(e.clone());
                return Verdict::Keep;
            }
            Event::Truncate { .. } => return Verdict::Keep,
            _ => match ev.raw() {
                Some(r) => r,
                None => return Verdict::Keep,
            },
        };
        // Conversion entries (schema slot not null): their schema version
        // is wanted, so they are decoded fully.
        let mut conversion_version = None;
        if let Event::Entry { data: Some(d), .. } = ev {
            if is_schema_payload(d) {
                match raw.decode(Format::Clustered) {
                    Ok(Record::Raft(r)) => {
                        if let RecordBody::Entry(e) = &r.body {
                            conversion_version =
                                e.data.as_ref().and_then(schema_version_of_payload);
                        }
                    }
                    Ok(_) => {}
                    Err(e) => return Verdict::Reject(e),
                }
            }
        }
        match ev {
            Event::Header { .. } => s.format = Some(Format::Clustered),
            Event::Schema { .. } => s.format = Some(Format::Standalone),
            _ => {}
        }
        if self.with_sizes {
            match ev {
                Event::Header { raw, header } => {
                    self.structure.on_event(ev);
                    self.stream.header(raw, header);
                }
                Event::Entry {
                    raw, entry, data, ..
                } => {
                    self.structure.on_event(ev);
                    self.stream.entry(raw, entry, *data);
                }
                Event::CommitIndex { commit_index, .. } => {
                    self.structure.on_event(ev);
                    self.stream.commit(*commit_index);
                }
                Event::Schema { .. } => {
                    let mut p =
                        crate::replay_pass::ReplayPass::standalone(crate::replay_pass::Upto::All);
                    if let Some(policy) = self.checkpoints {
                        p = p.with_checkpoints(policy);
                    }
                    p.on_event(ev);
                    self.standalone = Some(p);
                }
                Event::Txn { .. } => {
                    if let Some(p) = self.standalone.as_mut() {
                        p.on_event(ev);
                    }
                }
                _ => {}
            }
        }
        s.records += 1;
        if let Some(k) = ev.kind_name() {
            s.record_kinds.bump(k);
        }
        let terms = &mut self.terms;
        match ev {
            Event::Header { header: h, .. } => {
                s.database = Some(h.name.clone());
                s.server_id = Some(h.server_id);
                s.cluster_id = h.cluster_id;
                s.local_address = Some(h.local_address.clone());
                s.joining = h.is_joining();
                if let Some(snap) = &h.snapshot {
                    s.snapshot_index = Some(snap.index);
                    terms.insert(snap.term);
                    s.schema_version = schema_version_of_payload(&snap.data);
                }
            }
            Event::Entry { raw, entry: e, .. } => {
                terms.insert(e.term);
                self.last_entry = Some(e.index);
                if e.data.is_some() {
                    s.entry_bytes.stored += raw.total_len();
                    if let Some(v) = conversion_version {
                        s.schema_version = Some(v);
                    }
                }
            }
            Event::Term { term, .. } => {
                terms.insert(*term);
            }
            Event::Vote { term, vote, .. } => {
                terms.insert(*term);
                s.votes.push(TermSid {
                    term: *term,
                    sid: *vote,
                })
            }
            Event::Leader { term, leader, .. } => {
                terms.insert(*term);
                s.leaders.push(TermSid {
                    term: *term,
                    sid: *leader,
                })
            }
            Event::CommitIndex { commit_index, .. } => {
                s.commit_index = Some(s.commit_index.unwrap_or(0).max(*commit_index))
            }
            Event::Schema { schema: j, .. } => {
                s.database = j.get("name").and_then(Json::as_str).map(str::to_string);
                s.schema_version = j.get("version").and_then(Json::as_str).map(str::to_string);
            }
            Event::Txn { raw } => s.entry_bytes.stored += raw.total_len(),
            _ => {}
        }
        Verdict::Keep
    }

    /// What the summary says so far, in the middle of a walk (for a
    /// preview): the figures of the records read, and the full/diff sizes
    /// of the entries already replayed (committed ones; the totals stay
    /// unknown until the end).
    pub fn so_far(&self, scan: &LogScan) -> (FileSummary, &[crate::sizes::EntrySize]) {
        let mut s = self.s.clone();
        s.bytes = scan.bytes();
        s.terms = self.terms.iter().copied().collect();
        s.last_index = self.last_entry.or(s.snapshot_index);
        if s.format.is_none() {
            s.format = scan.format();
        }
        (s, &self.stream.entries)
    }

    /// Reuses what the replays of earlier files of the same cluster left
    /// (see [`crate::SharedReplay`]); call before the walk.
    pub fn share(&mut self, shared: crate::SharedReplay) {
        let ckpt = self.stream.ckpt.take();
        #[cfg(not(target_arch = "wasm32"))]
        let ahead = self.stream.ahead.to.take();
        self.stream = crate::shared_replay::Stream::with_shared(shared);
        self.stream.ckpt = ckpt;
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.stream.ahead.to = ahead;
        }
    }

    /// Hands each entry's data to `ahead` as the walk meets it, and takes
    /// its read back when the size replay applies the entry
    /// ([`crate::ahead`]): a caller with a spare core reads transactions
    /// there. The summary is the same with or without it. While reads are
    /// not done, up to a few hundred final entries wait, so
    /// [`Summarizer::so_far`] may show fewer entries' sizes. Native only:
    /// the browser's worker has no thread to read on.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read_ahead(&mut self, ahead: Box<dyn crate::ahead::ReadAhead>) {
        self.stream.ahead.to = Some(ahead);
    }

    /// Ends the summary of a walk that `scan` made (for its format and
    /// size).
    pub fn finish(self, scan: &LogScan) -> SummaryEnd {
        self.finish_shared(scan).0
    }

    /// [`Summarizer::finish`], and what this file's replay leaves to the
    /// next file of the cluster.
    pub fn finish_shared(self, scan: &LogScan) -> (SummaryEnd, crate::SharedReplay) {
        let (end, shared, _) = self.finish_all(scan);
        (end, shared)
    }

    /// [`Summarizer::finish_shared`], and the checkpoints of the replay
    /// ([`Summarizer::with_checkpoints`]; None when not asked for, when
    /// the file needs a second walk, or has a skipped span).
    pub fn finish_all(
        self,
        scan: &LogScan,
    ) -> (
        SummaryEnd,
        crate::SharedReplay,
        Option<Box<crate::checkpoint::Checkpoints>>,
    ) {
        let mut shared = crate::SharedReplay::default();
        let mut ckpt = None;
        let end = self.finish_inner(scan, &mut shared, &mut ckpt);
        (end, shared, ckpt)
    }

    fn finish_inner(
        self,
        scan: &LogScan,
        shared: &mut crate::SharedReplay,
        ckpt: &mut Option<Box<crate::checkpoint::Checkpoints>>,
    ) -> SummaryEnd {
        let mut s = self.s;
        s.bytes = scan.bytes();
        let mut entries = Vec::new();
        if s.format.is_none() {
            // Record 0 unread: the format is the magic of the first good
            // header, if any.
            let empty = s
                .truncated
                .as_ref()
                .is_some_and(|e| matches!(e.kind, crate::ErrorKind::EmptyFile));
            if (s.records == 0 && s.truncated.is_some() && !empty) || !s.skipped.is_empty() {
                s.format = scan.format();
            }
        }
        s.terms = self.terms.into_iter().collect();
        s.last_index = self.last_entry.or(s.snapshot_index);
        let mut stream = self.stream;
        if !self.with_sizes || !s.skipped.is_empty() {
            // What a skipped span held is unknown, so is every size that
            // depends on replaying through it.
            *shared = stream.pass_on();
            return SummaryEnd::Done(Box::new(s), entries);
        }
        stream.finish();
        let r = match s.format {
            Some(Format::Clustered) if stream.ok && stream.db.is_some() => {
                s.entry_bytes.full = Some(stream.full);
                s.entry_bytes.diff = Some(stream.diff);
                entries = std::mem::take(&mut stream.entries);
                let end_db = (!stream.behind()).then(|| stream.db.clone()).flatten();
                *shared = stream.take_shared();
                if let Some(mut c) = stream.ckpt.take() {
                    let plan = crate::replay_pass::Plan {
                        structure: self.structure.clone(),
                        records: s.records,
                        format: Some(Format::Clustered),
                        damage: s.truncated.clone(),
                        ..Default::default()
                    };
                    c.seal(
                        &plan,
                        Format::Clustered,
                        s.truncated.clone(),
                        end_db.as_ref(),
                        stream.applied,
                    );
                    *ckpt = Some(c);
                }
                None
            }
            Some(Format::Clustered) => {
                *shared = stream.pass_on();
                let st = self.structure;
                let mut pass = crate::replay_pass::ReplayPass::new(
                    st.superseded,
                    st.commit,
                    st.prev_index,
                    s.records,
                    crate::replay_pass::Upto::All,
                );
                // The one-pass replay gave up, and its checkpoints with it:
                // the second walk keeps its own.
                if let Some(policy) = self.checkpoints {
                    pass = pass.with_checkpoints(policy);
                }
                return SummaryEnd::Again(Box::new(SecondPass { s, pass }));
            }
            Some(Format::Standalone) => Some(
                self.standalone
                    .unwrap_or_else(|| {
                        crate::replay_pass::ReplayPass::standalone(crate::replay_pass::Upto::All)
                    })
                    .finish(s.truncated.clone()),
            ),
            None => None,
        };
        if let Some(mut r) = r {
            *ckpt = r.checkpoints.take();
            let (_, full, diff) = r.totals();
            s.entry_bytes.full = full;
            s.entry_bytes.diff = diff;
            if full.is_some() {
                entries = r.entries;
            }
        }
        SummaryEnd::Done(Box::new(s), entries)
    }
}

/// The `skipped` array of `inspect --json`: record, offset and length of
/// each span, the offset of the problem and the reason.
pub fn skipped_json(skipped: &[Skip]) -> Json {
    Json::Array(
        skipped
            .iter()
            .map(|k| {
                let mut t = Object::new();
                t.push_unchecked("record", Json::Integer(k.record as i64));
                t.push_unchecked("offset", Json::Integer(k.offset as i64));
                t.push_unchecked("bytes", Json::Integer(k.bytes as i64));
                t.push_unchecked("error_offset", Json::Integer(k.error.offset as i64));
                t.push_unchecked("reason", Json::String(k.error.kind.to_string()));
                t.push_unchecked("code", Json::String(k.error.kind.code().to_string()));
                Json::Object(t)
            })
            .collect(),
    )
}

/// Whether a raw `data` value has a non-null schema slot (a conversion).
fn is_schema_payload(data: &[u8]) -> bool {
    let t: Vec<u8> = data
        .iter()
        .copied()
        .filter(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        .take(5)
        .collect();
    t.starts_with(b"[") && !t.starts_with(b"[null")
}

fn schema_version_of_payload(data: &Json) -> Option<String> {
    let schema = data.as_array()?.first()?;
    schema.get("version")?.as_str().map(str::to_string)
}

/// The cluster part of `inspect`: the files' cluster summary when more than
/// one file was read, `None` for a single file. The one rule, for the CLI's
/// text and JSON and for the web's export.
pub fn cluster_summary(names: &[&str], files: &[FileSummary]) -> Option<ClusterSummary> {
    (files.len() > 1).then(|| summarize_cluster(names, files))
}

/// The `inspect --json` document, `{"files":[...],"cluster":...}`: one object
/// per file (`names[i]` is `files[i]`'s path as given) and the cluster summary
/// of [`cluster_summary`] (`null` for one file). Built only here: the CLI
/// prints it and the web exports it.
pub fn inspect_document(names: &[&str], files: &[FileSummary]) -> Json {
    let mut o = Object::new();
    o.push_unchecked(
        "files",
        Json::Array(
            names
                .iter()
                .zip(files)
                .map(|(n, s)| s.to_json(Some(n)))
                .collect(),
        ),
    );
    o.push_unchecked(
        "cluster",
        cluster_summary(names, files).map_or(Json::Null, |c| c.to_json()),
    );
    Json::Object(o)
}

/// Summary of several files of one cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSummary {
    pub cluster_id: Option<Uuid>,
    pub database: Option<String>,
    /// Server IDs of the files, in the order given.
    pub servers: Vec<Uuid>,
    /// Distinct terms over all files.
    pub terms: Vec<u64>,
    /// One entry per (term, leader) seen in any file, by term.
    pub leaders: Vec<TermSid>,
    /// Highest commit index recorded by any file.
    pub commit_index: Option<u64>,
    /// Highest last index of any file.
    pub last_index: Option<u64>,
    /// Files whose identity does not fit (other cluster, other database,
    /// duplicate server ID, standalone or unreadable files).
    pub problems: Vec<String>,
}

/// Combines the summaries of several files of one cluster (`names[i]` is
/// `files[i]`'s name, as the problems call it; the index when missing).
pub fn summarize_cluster(names: &[&str], files: &[FileSummary]) -> ClusterSummary {
    let mut c = ClusterSummary {
        cluster_id: None,
        database: None,
        servers: Vec::new(),
        terms: Vec::new(),
        leaders: Vec::new(),
        commit_index: None,
        last_index: None,
        problems: Vec::new(),
    };
    let mut terms = std::collections::BTreeSet::new();
    let mut leaders = std::collections::BTreeSet::new();
    for (i, f) in files.iter().enumerate() {
        let i = names
            .get(i)
            .map_or_else(|| format!("file {i}"), |n| n.to_string());
        if f.format != Some(Format::Clustered) {
            c.problems.push(format!("{i} is not a clustered database"));
            continue;
        }
        match (c.cluster_id, f.cluster_id) {
            (None, Some(id)) => c.cluster_id = Some(id),
            (Some(a), Some(b)) if a != b => c
                .problems
                .push(format!("{i} belongs to cluster {b}, not {a}")),
            _ => {}
        }
        match (&c.database, &f.database) {
            (None, Some(d)) => c.database = Some(d.clone()),
            (Some(a), Some(b)) if a != b => {
                c.problems.push(format!("{i} holds database {b}, not {a}"))
            }
            _ => {}
        }
        if let Some(sid) = f.server_id {
            if c.servers.contains(&sid) {
                c.problems
                    .push(format!("{i} has the same server ID {sid} as another file"));
            }
            c.servers.push(sid);
        }
        terms.extend(f.terms.iter().copied());
        for l in &f.leaders {
            leaders.insert((l.term, l.sid));
        }
        if let Some(ci) = f.commit_index {
            c.commit_index = Some(c.commit_index.unwrap_or(0).max(ci));
        }
        if let Some(li) = f.last_index {
            c.last_index = Some(c.last_index.unwrap_or(0).max(li));
        }
    }
    c.terms = terms.into_iter().collect();
    c.leaders = leaders
        .into_iter()
        .map(|(term, sid)| TermSid { term, sid })
        .collect();
    c
}

impl ClusterSummary {
    /// The `"cluster"` object of `inspect --json`.
    pub fn to_json(&self) -> Json {
        let mut o = Object::new();
        let s = |v: Option<String>| v.map_or(Json::Null, Json::String);
        let u = |v: Option<u64>| v.map_or(Json::Null, |x| Json::Integer(x as i64));
        o.push_unchecked("cluster_id", s(self.cluster_id.map(|x| x.to_string())));
        o.push_unchecked("database", s(self.database.clone()));
        o.push_unchecked(
            "servers",
            Json::Array(
                self.servers
                    .iter()
                    .map(|x| Json::String(x.to_string()))
                    .collect(),
            ),
        );
        o.push_unchecked(
            "terms",
            Json::Array(
                self.terms
                    .iter()
                    .map(|&t| Json::Integer(t as i64))
                    .collect(),
            ),
        );
        o.push_unchecked(
            "leaders",
            Json::Array(
                self.leaders
                    .iter()
                    .map(|l| {
                        let mut e = Object::new();
                        e.push_unchecked("term", Json::Integer(l.term as i64));
                        e.push_unchecked("leader", Json::String(l.sid.to_string()));
                        Json::Object(e)
                    })
                    .collect(),
            ),
        );
        o.push_unchecked("commit_index", u(self.commit_index));
        o.push_unchecked("last_index", u(self.last_index));
        o.push_unchecked(
            "problems",
            Json::Array(
                self.problems
                    .iter()
                    .map(|p| Json::String(p.clone()))
                    .collect(),
            ),
        );
        Json::Object(o)
    }
}
