//! Lanes, entries, bands and markers built from the bytes of one or more
//! database files.

use ovsdb_log::Format;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// Which size of an entry the views show (the page's storage toggle): the
/// bytes as stored in the file, or the bytes the same change would take if
/// written in either [`ovsdb::StorageMode`] (full values or column diffs).
/// A choice of view, not a way of writing a file, hence its own name.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SizeView {
    #[default]
    Stored,
    Full,
    Diff,
}

impl SizeView {
    pub const ALL: [SizeView; 3] = [SizeView::Stored, SizeView::Full, SizeView::Diff];

    /// `"stored"`, `"full"` or `"diff"` (URL hash, test ids, JSON keys).
    pub fn name(self) -> &'static str {
        match self {
            SizeView::Stored => "stored",
            SizeView::Full => "full",
            SizeView::Diff => "diff",
        }
    }

    pub fn from_name(s: &str) -> Option<SizeView> {
        SizeView::ALL.into_iter().find(|m| m.name() == s)
    }

    pub fn label(self) -> &'static str {
        match self {
            SizeView::Stored => "as stored",
            SizeView::Full => "full values",
            SizeView::Diff => "diffs",
        }
    }
}

/// Sizes of one record (header line + body), per storage mode. `full` and
/// `diff` are `None` where the core could not compute them.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Sizes {
    pub stored: u64,
    pub full: Option<u64>,
    pub diff: Option<u64>,
}

impl Sizes {
    pub fn get(&self, mode: SizeView) -> Option<u64> {
        match mode {
            SizeView::Stored => Some(self.stored),
            SizeView::Full => self.full,
            SizeView::Diff => self.diff,
        }
    }

    /// The size in `mode`, falling back to the stored size when unknown.
    pub fn or_stored(&self, mode: SizeView) -> u64 {
        self.get(mode).unwrap_or(self.stored)
    }
}

/// One log entry (clustered) or transaction (standalone).
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Raft log index; for standalone files the record number.
    pub index: u64,
    /// Raft term (0 for standalone files).
    pub term: u64,
    /// Record number in the file (0 = header/schema).
    pub record: u32,
    /// Byte offset of the record's header line.
    pub offset: u64,
    /// Carries a database change (`data`), as opposed to a Raft-internal entry.
    pub has_data: bool,
    /// A later entry with an index at or below this one replaced it.
    pub superseded: bool,
    pub eid: Option<String>,
    /// The transaction's `_comment`.
    pub comment: Option<String>,
    /// The transaction's `_date`, in ms since the epoch.
    pub date_ms: Option<i64>,
    /// Number of tables / rows the change touches.
    pub tables: u32,
    pub rows: u32,
    pub sizes: Sizes,
    /// New configuration carried by the entry (membership change).
    pub servers: Option<Vec<(String, String)>>,
    pub election_timer: Option<u64>,
}

/// A term as one server saw it.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct TermBand {
    pub term: u64,
    /// Log index where the term starts in this lane (the next index to be
    /// written when the term was first seen).
    pub start: u64,
    /// Last index covered (inclusive); `start - 1` for an empty term.
    pub end: u64,
    pub leader: Option<String>,
    /// Whom this server voted for in the term.
    pub vote: Option<String>,
}

/// A commit-index record: at `at_index` (last index in the log when it was
/// written) the server learned that everything up to `commit_index` was
/// committed.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitPoint {
    pub record: u32,
    pub at_index: u64,
    pub commit_index: u64,
}

#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub enum MarkerKind {
    /// The file starts with a snapshot up to this index (compaction).
    Snapshot { term: u64 },
    /// A configuration change entry.
    Membership { servers: Vec<String> },
    /// An election-timer change entry.
    ElectionTimer { ms: u64 },
    /// A Raft note (`transfer leadership`, `left`).
    Note {
        note: String,
        comment: Option<String>,
    },
    /// Entries from this index on were replaced by later ones.
    Superseded { count: u32 },
    /// A `check` violation of the core, at this index.
    Check { rule: String, message: String },
    /// A leader record.
    Leader { term: u64, sid: String },
    /// A vote record.
    Vote { term: u64, sid: String },
    /// A damaged span between good records that reading stepped over:
    /// what it held is unknown (`record` of the marker is the number the
    /// span takes).
    Skipped {
        offset: u64,
        bytes: u64,
        reason: String,
        code: String,
    },
}

#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    pub index: u64,
    pub record: u32,
    pub kind: MarkerKind,
}

/// Where reading stopped on a damaged file.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct Truncation {
    pub record: u64,
    pub offset: u64,
    pub reason: String,
    pub code: String,
    /// Index after the last good entry: where the damage sits on the x axis.
    pub at_index: u64,
}

/// The figures `ovsdb-scope inspect --json` reports for the file, as
/// computed by `ovsdb_log::summarize`.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LaneSummary {
    /// `"standalone"` / `"clustered"`.
    pub format: String,
    pub database: String,
    pub schema_version: Option<String>,
    pub server_id: Option<String>,
    pub cluster_id: Option<String>,
    pub local_address: Option<String>,
    pub records: u64,
    /// Entries (clustered) or transactions (standalone).
    pub entries: u64,
    pub terms: Vec<u64>,
    pub snapshot_index: Option<u64>,
    pub last_index: Option<u64>,
    pub commit_index: Option<u64>,
    pub bytes: u64,
    pub entry_bytes: Sizes,
}

/// One file: one server of a cluster, or a standalone database.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// File name as given.
    pub name: String,
    pub summary: LaneSummary,
    pub clustered: bool,
    /// Index of the snapshot the file starts from (0 if none).
    pub snapshot_index: u64,
    /// Entries in file order.
    pub entries: Vec<Entry>,
    /// True when `entries` is sorted by index (no superseded entries).
    pub monotonic: bool,
    pub bands: Vec<TermBand>,
    pub commits: Vec<CommitPoint>,
    pub markers: Vec<Marker>,
    /// Bytes of the file before the first entry (header/schema record and
    /// any Raft bookkeeping records before it).
    pub base_bytes: u64,
    pub truncated: Option<Truncation>,
}

/// A server of the cluster as the files describe it.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct ServerInfo {
    pub sid: String,
    pub address: String,
    /// Lane of the file written by this server, if it was loaded.
    pub lane: Option<usize>,
}

/// A term across the cluster: its leader and who voted for whom.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct TermInfo {
    pub term: u64,
    pub leaders: Vec<String>,
    /// `(voter lane name, voted-for sid)`.
    pub votes: Vec<(String, String)>,
}

#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ClusterInfo {
    pub cluster_id: Option<String>,
    pub servers: Vec<ServerInfo>,
    pub terms: Vec<TermInfo>,
    /// Per lane: highest commit index recorded.
    pub commit_index: Vec<Option<u64>>,
    /// Whether the core's check has run (see [`Timeline::check`]).
    pub checked: bool,
    /// Check results (empty when invariants hold); also marked on lanes.
    pub violations: Vec<String>,
    pub problems: Vec<String>,
    /// `{"files":[...],"cluster":...}` exactly as `inspect --json` prints it.
    pub inspect_json: String,
}

/// Everything the renderer needs.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub lanes: Vec<Lane>,
    /// Smallest and largest index over all lanes (the x range).
    pub min_index: u64,
    pub max_index: u64,
    pub cluster: ClusterInfo,
}

pub(crate) fn json_servers(s: &ovsdb_log::Servers) -> Vec<(String, String)> {
    s.0.iter()
        .map(|(sid, addr)| (sid.to_string(), addr.clone()))
        .collect()
}

pub(crate) fn summary_of(s: &ovsdb_log::FileSummary) -> LaneSummary {
    let clustered = s.format == Some(Format::Clustered);
    LaneSummary {
        format: s.format.map_or("", |f| f.name()).to_string(),
        database: s.database.clone().unwrap_or_default(),
        schema_version: s.schema_version.clone(),
        server_id: s.server_id.map(|x| x.to_string()),
        cluster_id: s.cluster_id.map(|x| x.to_string()),
        local_address: s.local_address.clone(),
        records: s.records as u64,
        entries: if clustered {
            s.record_kinds.entry as u64
        } else {
            s.record_kinds.txn as u64
        },
        terms: s.terms.clone(),
        snapshot_index: s.snapshot_index,
        last_index: s.last_index,
        commit_index: s.commit_index,
        bytes: s.bytes,
        entry_bytes: Sizes {
            stored: s.entry_bytes.stored,
            full: s.entry_bytes.full,
            diff: s.entry_bytes.diff,
        },
    }
}

/// Builds one lane from a file's bytes. Never fails: a file that is not an
/// OVSDB log gives a lane with no records (check `summary.records`), and a
/// damaged tail is reported in `truncated` with everything before it kept.
/// `progress` is called now and then with the number of bytes read.
pub fn build_lane(name: &str, bytes: &[u8], progress: &mut dyn FnMut(u64)) -> Lane {
    let mut ck = ovsdb_log::Checker::new();
    crate::load::FileLoad::load_bytes(
        name,
        bytes,
        &mut ck,
        false,
        Default::default(),
        None,
        progress,
    )
    .lane
}

/// Builds the timeline of several files of one cluster (or one file).
/// `files` are `(name, bytes)`; lanes keep the given order.
pub fn build_timeline(files: &[(&str, &[u8])], progress: &mut dyn FnMut(u64)) -> Timeline {
    build_timeline_with(files, true, progress)
}

fn build_timeline_with(
    files: &[(&str, &[u8])],
    check: bool,
    progress: &mut dyn FnMut(u64),
) -> Timeline {
    let mut load = crate::load::TimelineLoad::new(check);
    let mut done = 0u64;
    for (name, bytes) in files {
        let base = done;
        load.add_bytes(name, bytes, &mut |n| progress(base + n));
        done += bytes.len() as u64;
    }
    load.finish()
}

/// Assembles lanes into a timeline: x range and cluster view (the check is
/// added by [`Timeline::apply_check`]).
pub fn finish_timeline(lanes: Vec<Lane>, summaries: &[ovsdb_log::FileSummary]) -> Timeline {
    let mut min_index = u64::MAX;
    let mut max_index = 0u64;
    for l in &lanes {
        if let Some(first) = l.entries.iter().map(|e| e.index).min() {
            min_index = min_index.min(first.min(l.snapshot_index.max(1)));
        } else if l.snapshot_index > 0 {
            min_index = min_index.min(l.snapshot_index);
        }
        max_index = max_index.max(l.entries.iter().map(|e| e.index).max().unwrap_or(0));
        max_index = max_index.max(l.snapshot_index);
    }
    if min_index == u64::MAX {
        min_index = 0;
    }
    if max_index < min_index {
        max_index = min_index;
    }
    let cluster = cluster_info(&lanes, summaries);
    Timeline {
        lanes,
        min_index,
        max_index,
        cluster,
    }
}

fn cluster_info(lanes: &[Lane], summaries: &[ovsdb_log::FileSummary]) -> ClusterInfo {
    let mut info = ClusterInfo {
        commit_index: lanes.iter().map(|l| l.summary.commit_index).collect(),
        ..ClusterInfo::default()
    };
    let names: Vec<&str> = lanes.iter().map(|l| l.name.as_str()).collect();
    info.inspect_json = ovsdb_log::inspect_document(&names, summaries).to_string_compact();
    let clustered = summaries
        .iter()
        .any(|s| s.format == Some(Format::Clustered));
    if clustered {
        let cs = ovsdb_log::summarize_cluster(&names, summaries);
        info.cluster_id = cs.cluster_id.map(|x| x.to_string());
        info.problems = cs.problems;
    }

    // Servers: every configuration seen (header prev_servers, membership
    // entries), with the lane of the file each server wrote.
    let mut servers: Vec<ServerInfo> = Vec::new();
    let mut add = |sid: String, address: String| {
        if let Some(s) = servers.iter_mut().find(|s| s.sid == sid) {
            if s.address.is_empty() {
                s.address = address;
            }
        } else {
            servers.push(ServerInfo {
                sid,
                address,
                lane: None,
            });
        }
    };
    for l in lanes.iter() {
        if let (Some(sid), Some(addr)) = (&l.summary.server_id, &l.summary.local_address) {
            add(sid.clone(), addr.clone());
        }
        for e in &l.entries {
            if let Some(s) = &e.servers {
                for (sid, addr) in s {
                    add(sid.clone(), addr.clone());
                }
            }
        }
    }
    for s in servers.iter_mut() {
        s.lane = lanes
            .iter()
            .position(|l| l.summary.server_id.as_deref() == Some(s.sid.as_str()));
    }
    info.servers = servers;

    // Terms: leaders and votes from every lane.
    let mut terms: Vec<TermInfo> = Vec::new();
    for l in lanes.iter() {
        for b in &l.bands {
            let t = match terms.iter_mut().find(|t| t.term == b.term) {
                Some(t) => t,
                None => {
                    terms.push(TermInfo {
                        term: b.term,
                        leaders: Vec::new(),
                        votes: Vec::new(),
                    });
                    terms.last_mut().expect("just pushed")
                }
            };
            if let Some(ld) = &b.leader {
                if !t.leaders.contains(ld) {
                    t.leaders.push(ld.clone());
                }
            }
            if let Some(v) = &b.vote {
                t.votes.push((l.name.clone(), v.clone()));
            }
        }
    }
    ovsdb::order::sort_by_key(&mut terms, |t| t.term);
    info.terms = terms;

    info
}

/// What `ovsdb_log::check_cluster` found, ready to be put on the lanes.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CheckResult {
    pub violations: Vec<String>,
    pub problems: Vec<String>,
    /// `(lane name, marker)` for each violation that names a loaded file.
    pub markers: Vec<(String, Marker)>,
}

/// Puts a check report's unknown spans and violations on `r`.
pub(crate) fn add_report(r: &mut CheckResult, report: &ovsdb_log::CheckReport, t: &Timeline) {
    for u in &report.unknown {
        r.problems.push(format!("check: {u}"));
    }
    for v in &report.violations {
        r.violations
            .push(format!("{}: {} ({})", v.file, v.message, v.rule));
        if let Some(lane) = t.lanes.iter().find(|l| l.name == v.file) {
            r.markers.push((
                lane.name.clone(),
                Marker {
                    index: v.index.unwrap_or(lane.snapshot_index),
                    record: v.record.unwrap_or(0) as u32,
                    kind: MarkerKind::Check {
                        rule: v.rule.to_string(),
                        message: v.message.clone(),
                    },
                },
            ));
        }
    }
}

impl Lane {
    /// Record numbers of the entries a later entry replaces (not
    /// replayed when the file is read again: the inspector's walks).
    pub fn superseded_records(&self) -> Vec<usize> {
        self.entries
            .iter()
            .filter(|e| e.superseded)
            .map(|e| e.record as usize)
            .collect()
    }

    /// Entries whose index lies in `[lo, hi]`, as a range of `entries`
    /// (binary search when the lane is monotonic).
    pub fn visible(&self, lo: f64, hi: f64) -> std::ops::Range<usize> {
        if !self.monotonic {
            return 0..self.entries.len();
        }
        let a = self.entries.partition_point(|e| (e.index as f64) < lo);
        let b = self.entries.partition_point(|e| (e.index as f64) <= hi);
        a..b.max(a)
    }

    /// Cumulative file size after each entry (same order as `entries`), in
    /// the given storage mode: every record before and including the entry,
    /// with data-carrying entries counted at their size in `mode`.
    pub fn cumulative(&self, mode: SizeView) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.entries.len());
        let mut delta: i64 = 0;
        for e in &self.entries {
            if e.has_data {
                delta += e.sizes.or_stored(mode) as i64 - e.sizes.stored as i64;
            }
            let end = e.offset + e.sizes.stored;
            out.push((end as i64 + delta).max(0) as u64);
        }
        out
    }

    /// Total bytes of data-carrying entries in `mode` (the core's figure
    /// when it has one).
    pub fn entry_bytes(&self, mode: SizeView) -> Option<u64> {
        self.summary.entry_bytes.get(mode)
    }

    /// The term band covering `index`, if any.
    pub fn band_at(&self, index: u64) -> Option<&TermBand> {
        self.bands
            .iter()
            .rev()
            .find(|b| b.start <= index && index <= b.end.max(b.start))
    }

    /// Largest entry size in `mode` (for scaling the bars).
    pub fn max_entry_size(&self, mode: SizeView) -> u64 {
        self.entries
            .iter()
            .map(|e| e.sizes.or_stored(mode))
            .max()
            .unwrap_or(0)
    }
}

impl Timeline {
    /// Puts a check result on the timeline (cluster view and lane markers).
    pub fn apply_check(&mut self, r: CheckResult) {
        self.cluster.checked = true;
        self.cluster.violations = r.violations;
        self.cluster.problems.extend(r.problems);
        for (name, m) in r.markers {
            if let Some(l) = self.lanes.iter_mut().find(|l| l.name == name) {
                l.markers.push(m);
            }
        }
    }

    /// The date of the entry nearest to `index` that has one (time axis).
    pub fn date_at(&self, index: u64) -> Option<i64> {
        let mut best: Option<(u64, i64)> = None;
        for l in &self.lanes {
            let i = l.entries.partition_point(|e| e.index < index);
            for e in l.entries[i.saturating_sub(8)..(i + 8).min(l.entries.len())].iter() {
                if let Some(d) = e.date_ms {
                    let dist = e.index.abs_diff(index);
                    if best.is_none_or(|(b, _)| dist < b) {
                        best = Some((dist, d));
                    }
                }
            }
        }
        best.map(|(_, d)| d)
    }

    /// Total entry bytes in `mode` over all lanes (`None` if any lane lacks it).
    pub fn entry_bytes(&self, mode: SizeView) -> Option<u64> {
        self.lanes.iter().map(|l| l.entry_bytes(mode)).sum()
    }
}
