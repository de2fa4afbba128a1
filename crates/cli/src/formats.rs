//! inspect, dump, check, convert (owned by the formats area).
//!
//! All file I/O of the formats area happens here; the library works on
//! byte slices.

use ovsdb::{Json, Object};
use ovsdb_log::{FileSummary, Format};

/// Size of the chunks files are read in: the core's scanner keeps only
/// the record being read, so memory does not grow with the file.
const CHUNK: usize = 4 << 20;

/// Reads `path` in chunks and hands each to `f`.
fn read_chunks(path: &str, f: &mut dyn FnMut(&[u8])) -> Result<(), String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{path}: {e}")),
        };
        crate::progress::advance(n as u64);
        f(&buf[..n]);
    }
}

/// One streaming walk of `path` with the scanner's options `opts`,
/// events to `f`.
fn scan_file(
    path: &str,
    opts: ovsdb_log::ScanOptions,
    f: &mut dyn FnMut(ovsdb_log::Event<'_>) -> ovsdb_log::Verdict,
) -> Result<(), String> {
    let mut scan = ovsdb_log::LogScan::new(opts);
    read_chunks(path, &mut |c| scan.push(c, f))?;
    scan.finish(f);
    Ok(())
}

/// The replay of `path` up to `upto`, read in chunks: one walk, or two
/// when the replay needs a second ([`ovsdb_log::replay_pass::ReplayEnd`]);
/// the file is never held whole.
fn replay_file(path: &str, upto: ovsdb_log::Upto) -> Result<ovsdb_log::Replay, String> {
    use ovsdb_log::replay_pass::{ReplayEnd, ReplayPass};
    let mut pass = ReplayPass::first(upto);
    let mut scan = ovsdb_log::LogScan::new(pass.options());
    let mut f = |ev: ovsdb_log::Event<'_>| {
        pass.on_event(&ev);
        ovsdb_log::Verdict::Keep
    };
    read_chunks(path, &mut |c| scan.push(c, &mut f))?;
    scan.finish(&mut f);
    match pass.end(&scan) {
        ReplayEnd::Done(r) => Ok(*r),
        ReplayEnd::Again(mut pass) => {
            // The first walk verified every hash of a clean file (as the
            // second walk of `summarize_file`).
            let mut scan = ovsdb_log::LogScan::new(ovsdb_log::ScanOptions {
                trust_sha1: pass.plan().damage.is_none(),
                ..pass.options()
            });
            let mut f = |ev: ovsdb_log::Event<'_>| {
                pass.on_event(&ev);
                ovsdb_log::Verdict::Keep
            };
            read_chunks(path, &mut |c| scan.push(c, &mut f))?;
            scan.finish(&mut f);
            match pass.end(&scan) {
                ReplayEnd::Done(r) => Ok(*r),
                ReplayEnd::Again(_) => Err(format!("{path}: replay did not end")),
            }
        }
    }
}

/// `convert` of `path`, read in chunks twice (a plan, then the
/// conversion): the input's size and the converted file or the error
/// that stopped it. Only the output is held whole.
fn convert_file(
    path: &str,
    mode: ovsdb::StorageMode,
) -> Result<(u64, Result<Vec<u8>, ovsdb_log::LogError>), String> {
    use ovsdb_log::convert::Converter;
    use ovsdb_log::replay_pass::Plan;
    let mut plan = Plan::default();
    let mut scan = ovsdb_log::LogScan::new(ovsdb_log::ScanOptions::default());
    let mut f = |ev: ovsdb_log::Event<'_>| {
        plan.on_event(&ev);
        ovsdb_log::Verdict::Keep
    };
    read_chunks(path, &mut |c| scan.push(c, &mut f))?;
    scan.finish(&mut f);
    let size = scan.bytes();
    let mut c = match Converter::new(plan, mode) {
        Ok(c) => c,
        Err(e) => return Ok((size, Err(e))),
    };
    // The first walk found the file clean (else no conversion) and
    // verified every hash.
    let opts = ovsdb_log::ScanOptions {
        trust_sha1: true,
        ..c.options()
    };
    scan_file(path, opts, &mut |ev| {
        c.on_event(&ev);
        ovsdb_log::Verdict::Keep
    })?;
    Ok((size, c.finish()))
}

/// The summary of one file, read in chunks on two threads: a reader
/// thread reads the file and verifies every record's SHA-1 (a framing-only
/// walk) while this thread summarizes the same chunks trusting the
/// hashes. When the verifier finds any damage the trusting result is
/// thrown away and the file is summarized again with the hashes checked,
/// so the result is always that of `ovsdb_log::summarize`.
///
/// `shared`: what the size replays of the files before (of the same
/// cluster) leave, taken and handed on for the next file.
fn summarize_file(path: &str, shared: &mut ovsdb_log::SharedReplay) -> Result<FileSummary, String> {
    use ovsdb_log::summary::{Summarizer, SummaryEnd};
    use ovsdb_log::{Event, LogScan, ScanOptions, Verdict};
    use std::sync::{mpsc, Arc};
    let (tx, rx) = mpsc::sync_channel::<Arc<Vec<u8>>>(4);
    // Chunks come back to be read into again (no new zeroed pages).
    let (back, spare) = mpsc::channel::<Vec<u8>>();
    let owned = path.to_string();
    let verifier = std::thread::spawn(move || -> Result<bool, String> {
        use std::io::Read;
        let mut file = std::fs::File::open(&owned).map_err(|e| format!("{owned}: {e}"))?;
        let mut scan = LogScan::new(ScanOptions {
            frames_only: true,
            ..ScanOptions::default()
        });
        let mut clean = true;
        let mut f = |ev: Event<'_>| {
            if matches!(ev, Event::Skipped(_) | Event::Tail(_)) {
                clean = false;
            }
            Verdict::Keep
        };
        let mut mine: Option<Vec<u8>> = None;
        loop {
            // The chunk whichever side pushed last let go of.
            let mut buf = mine
                .take()
                .or_else(|| spare.try_recv().ok())
                .unwrap_or_default();
            buf.resize(CHUNK, 0);
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("{owned}: {e}")),
            };
            buf.truncate(n);
            crate::progress::advance(n as u64);
            let chunk = Arc::new(buf);
            // The summarizing side may have stopped; keep verifying.
            let _ = tx.send(Arc::clone(&chunk));
            scan.push(&chunk, &mut f);
            mine = Arc::try_unwrap(chunk).ok();
        }
        drop(tx);
        scan.finish(&mut f);
        Ok(clean)
    });
    let mut sum = Summarizer::new(true);
    sum.share(std::mem::take(shared));
    sum.read_ahead(Box::new(ReaderThread::start()));
    let mut scan = LogScan::new(ScanOptions {
        trust_sha1: true,
        ..sum.options()
    });
    for chunk in rx.iter() {
        scan.push(&chunk, &mut |ev| sum.on_event(&ev));
        if let Ok(buf) = Arc::try_unwrap(chunk) {
            let _ = back.send(buf);
        }
    }
    scan.finish(&mut |ev| sum.on_event(&ev));
    let clean = verifier
        .join()
        .map_err(|_| format!("{path}: reader thread failed"))??;
    let trust = clean;
    let (end, sh) = if clean {
        sum.finish_shared(&scan)
    } else {
        // Damaged: summarized again with the hashes checked, on its own
        // (what the trusting walk replayed is not trusted either).
        let mut sum = Summarizer::new(true);
        let mut scan = LogScan::new(sum.options());
        read_chunks(path, &mut |c| scan.push(c, &mut |ev| sum.on_event(&ev)))?;
        scan.finish(&mut |ev| sum.on_event(&ev));
        sum.finish_shared(&scan)
    };
    *shared = sh;
    match end {
        SummaryEnd::Done(s, _) => Ok(*s),
        SummaryEnd::Again(mut pass) => {
            let opts = ScanOptions {
                trust_sha1: trust,
                ..pass.options()
            };
            scan_file(path, opts, &mut |ev| {
                pass.on_event(&ev);
                Verdict::Keep
            })?;
            Ok((*pass).finish().0)
        }
    }
}

/// Reads the size replay's transactions ahead on a thread of its own
/// (`ovsdb_log::ahead`): the summarizing thread applies them, the reader
/// thread verifies hashes, and this one reads the transactions, so a
/// summary uses a second core for more than SHA-1. Entries cross in
/// batches: a wake-up of the other thread per entry cost more than a
/// small entry's read.
struct ReaderThread {
    to: Option<std::sync::mpsc::Sender<Batch<Vec<u8>>>>,
    from: std::sync::mpsc::Receiver<Batch<ovsdb_log::ahead::Prepared>>,
    /// Entries handed over, not sent yet, and their bytes.
    out: Batch<Vec<u8>>,
    out_bytes: usize,
    /// Reads received, not taken yet.
    done: ovsdb_log::ahead::Reads,
}

type Batch<T> = Vec<(u64, T)>;

/// A batch goes at this many entries or bytes (or when a read is awaited).
const BATCH_ENTRIES: usize = 32;
const BATCH_BYTES: usize = 1 << 20;

impl ReaderThread {
    fn start() -> ReaderThread {
        use std::sync::mpsc::channel;
        let (to, work) = channel::<Batch<Vec<u8>>>();
        let (done, from) = channel();
        std::thread::spawn(move || {
            for batch in work {
                let read: Batch<_> = batch
                    .into_iter()
                    .map(|(seq, data)| (seq, ovsdb_log::ahead::Prepared::new(data)))
                    .collect();
                if done.send(read).is_err() {
                    return;
                }
            }
        });
        ReaderThread {
            to: Some(to),
            from,
            out: Vec::new(),
            out_bytes: 0,
            done: Default::default(),
        }
    }

    fn flush(&mut self) {
        if self.out.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.out);
        self.out_bytes = 0;
        if let Some(to) = &self.to {
            if to.send(batch).is_err() {
                self.to = None;
            }
        }
    }
}

impl ovsdb_log::ahead::ReadAhead for ReaderThread {
    fn submit(&mut self, seq: u64, data: Vec<u8>) {
        self.out_bytes += data.len();
        self.out.push((seq, data));
        if self.out.len() >= BATCH_ENTRIES || self.out_bytes >= BATCH_BYTES {
            self.flush();
        }
    }

    fn take(&mut self, seq: u64, wait: bool) -> Option<ovsdb_log::ahead::Prepared> {
        if wait {
            self.flush();
        }
        let from = &self.from;
        self.done.take_or(seq, |done| {
            let batch = if wait {
                from.recv().ok()
            } else {
                from.try_recv().ok()
            };
            batch.map(|b| done.extend(b)).is_some()
        })
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".to_string(), |x| x.to_string())
}

fn print_summary_text(path: &str, s: &FileSummary) {
    let fmt = s.format.map_or("unknown format", |f| f.name());
    outln!("{path}: {fmt} {}", s.database.as_deref().unwrap_or("?"));
    if let Some(v) = &s.schema_version {
        outln!("  schema version: {v}");
    }
    if s.format == Some(Format::Clustered) {
        outln!(
            "  server_id: {}  cluster_id: {}  local_address: {}{}",
            opt(s.server_id),
            opt(s.cluster_id),
            s.local_address.as_deref().unwrap_or("-"),
            if s.joining { "  (joining)" } else { "" }
        );
    }
    let k = &s.record_kinds;
    if s.format == Some(Format::Standalone) {
        outln!(
            "  records: {} (schema {}, txn {})",
            s.records,
            k.schema,
            k.txn
        );
    } else {
        outln!(
            "  records: {} (header {}, entry {}, term {}, vote {}, leader {}, commit_index {}, note {})",
            s.records, k.header, k.entry, k.term, k.vote, k.leader, k.commit_index, k.note
        );
        let terms: Vec<String> = s.terms.iter().map(u64::to_string).collect();
        outln!("  terms: [{}]", terms.join(", "));
        outln!(
            "  snapshot_index: {}  last_index: {}  commit_index: {}",
            opt(s.snapshot_index),
            opt(s.last_index),
            opt(s.commit_index)
        );
        for l in &s.leaders {
            outln!("  leader of term {}: {}", l.term, l.sid);
        }
        for v in &s.votes {
            outln!("  vote in term {}: {}", v.term, v.sid);
        }
    }
    outln!("  bytes: {}", s.bytes);
    outln!(
        "  entry bytes: stored {}  full {}  diff {}",
        s.entry_bytes.stored,
        opt(s.entry_bytes.full),
        opt(s.entry_bytes.diff)
    );
    for k in &s.skipped {
        outln!(
            "  skipped: {} bytes from offset {} (record {}): {}",
            k.bytes,
            k.offset,
            k.record,
            k.error
        );
    }
    if let Some(e) = &s.truncated {
        outln!("  truncated: {e}");
    }
}

/// `inspect [--json] FILE...`
#[derive(clap::Args, Debug)]
#[command(
    about = "Summary of database files: records, terms, leaders, sizes per storage mode",
    long_about = "Summary of each database file (clustered or standalone): format, \
database, server and cluster IDs, record kinds, terms, leaders and votes, snapshot, \
commit and last index, and the entry bytes as stored, with full values and with column \
diffs; with several files of one cluster, the cluster's view. Damage in the middle of a \
file is stepped over and reported (record, offset, reason, bytes skipped).",
    after_help = "Example:\n  ovsdb-scope inspect --json static/samples/ls-add-follower/s*.db\n\nExit codes: 0 ok, 1 a file is damaged (the rest is still read), 2 bad input or usage."
)]
pub struct InspectArgs {
    /// Database files
    #[arg(required = true)]
    files: Vec<String>,
    /// Print JSON (the shape the web page shows)
    #[arg(long)]
    json: bool,
}

pub fn inspect(a: InspectArgs) -> u8 {
    let (json, files) = (a.json, a.files);
    crate::progress::start_files(&files, "inspect");
    let mut summaries: Vec<FileSummary> = Vec::new();
    let mut code = 0u8;
    // The files of one cluster replay their common committed prefix once.
    let mut shared = ovsdb_log::SharedReplay::default();
    for path in &files {
        match summarize_file(path, &mut shared) {
            Ok(s) => {
                for k in &s.skipped {
                    errln!("{path}: skipped {} bytes: {}", k.bytes, k.error);
                    code = code.max(1);
                }
                if let Some(e) = &s.truncated {
                    errln!("{path}: {e}");
                    // Not even record 0 read: not a database (bad input).
                    code = code.max(if s.format.is_none() { 2 } else { 1 });
                }
                summaries.push(s);
            }
            Err(e) => {
                errln!("{e}");
                return 2;
            }
        }
    }
    crate::progress::finish();
    let names: Vec<&str> = files.iter().map(String::as_str).collect();
    if json {
        outln!("{}", ovsdb_log::inspect_document(&names, &summaries));
    } else {
        let cluster = ovsdb_log::cluster_summary(&names, &summaries);
        for (p, s) in names.iter().zip(&summaries) {
            print_summary_text(p, s);
        }
        if let Some(c) = &cluster {
            outln!(
                "cluster: {} {}",
                opt(c.cluster_id),
                c.database.as_deref().unwrap_or("?")
            );
            let sids: Vec<String> = c.servers.iter().map(|s| s.short8()).collect();
            outln!("  servers: {}", sids.join(", "));
            let terms: Vec<String> = c.terms.iter().map(u64::to_string).collect();
            outln!("  terms: [{}]", terms.join(", "));
            for l in &c.leaders {
                outln!("  leader of term {}: {}", l.term, l.sid);
            }
            outln!(
                "  commit_index: {}  last_index: {}",
                opt(c.commit_index),
                opt(c.last_index)
            );
            for p in &c.problems {
                outln!("  problem: {p}");
            }
        }
    }
    code
}

/// `dump [--at INDEX] [--json] FILE`: the database after replaying up to
/// INDEX (default: the last committed entry; standalone: every record).
#[derive(clap::Args, Debug)]
#[command(
    about = "The database's rows at an index",
    long_about = "Every table and row of the database after replaying the log up to INDEX \
(default: the last committed entry; standalone files: every transaction, or the first \
INDEX). --json prints the database as one JSON object (tables by name, rows by UUID).",
    after_help = "Example:\n  ovsdb-scope dump --at 5 static/samples/ls-add-follower/s1.db\n\nExit codes: 0 ok, 1 the log is damaged (the rows before the damage are printed), 2 bad input or usage."
)]
pub struct DumpArgs {
    /// A database file
    file: String,
    /// Log index to replay up to
    #[arg(long, value_name = "INDEX")]
    at: Option<u64>,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

pub fn dump(a: DumpArgs) -> u8 {
    let (json, at, path) = (a.json, a.at, a.file);
    crate::progress::start_files(std::slice::from_ref(&path), "dump");
    let upto = at.map_or(ovsdb_log::Upto::Committed, ovsdb_log::Upto::Index);
    let r = match replay_file(&path, upto) {
        Ok(r) => r,
        Err(e) => {
            errln!("{e}");
            return 2;
        }
    };
    crate::progress::finish();
    // Not a database at all (nothing before the first damage): bad input,
    // 2, as for show; damage after the schema: 1, with the rows before it.
    let Some(db) = &r.db else {
        match &r.error {
            Some(e) => errln!("{path}: {e}"),
            None => errln!("{path}: no database contents (no schema read)"),
        }
        return 2;
    };
    let mut code = 0;
    if let Some(e) = &r.error {
        errln!("{path}: {e}");
        code = 1;
    }
    if let Some(asked) = at {
        let damaged = r.error.is_some();
        // The entries the replay stepped over past its limit are listed
        // too: one with a transaction after the index reached means the
        // index asked is inside the log.
        let later = !damaged
            && r.entries
                .iter()
                .any(|e| !e.superseded && e.index.is_some_and(|i| i > r.applied));
        crate::contents::note_outside(&path, "--at", asked, r.applied, later, "dumping", damaged);
    }
    if json {
        outln!("{}", db.to_json());
    } else {
        outln!(
            "{} ({} rows) after log index {}",
            db.schema.name,
            db.row_count(),
            r.applied
        );
        for (ti, ts) in db.schema.tables.iter().enumerate() {
            let Some(table) = db.table(ti).filter(|t| !t.is_empty()) else {
                continue;
            };
            outln!("table {} ({} rows)", ts.name, table.len());
            for (u, row) in &table.rows {
                outln!("  {u}");
                let mut cols: Vec<_> = ts
                    .columns
                    .iter()
                    .zip(&row.columns)
                    .filter(|(c, _)| !c.is_implicit())
                    .collect();
                cols.sort_by(|a, b| a.0.name.cmp(&b.0.name));
                for (c, d) in cols {
                    outln!("    {}={}", c.name, d.to_text(&c.ty));
                }
            }
        }
    }
    code
}

/// The storage mode `convert --to` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum To {
    /// Every changed column with its complete new value
    Full,
    /// Set and map columns as diffs (ovsdb-server 2.15 and later)
    Diff,
}

/// `convert --to full|diff IN OUT`
#[derive(clap::Args, Debug)]
#[command(
    about = "Rewrite a file with full values or with column diffs",
    long_about = "Writes OUT with the same records as IN, every transaction re-encoded in \
the chosen storage mode (full values, or column diffs as ovsdb-server 2.15+ writes); \
records, hashes and lengths are rewritten so `ovsdb-tool` reads the result. OUT is \
written beside itself and renamed into place, so it is never left half written and OUT \
may be IN.\n\nConvert every member of a cluster alike: `ovsdb-tool check-cluster` and \
`ovsdb-scope check` compare the members' entries as written, so one converted file next \
to unconverted peers reads as entries that differ, although they make the same changes.",
    after_help = "Example:\n  ovsdb-scope convert --to full s1.db s1-full.db\n\nExit codes: 0 written, 1 the input is damaged, 2 bad input or usage."
)]
pub struct ConvertArgs {
    /// Storage mode to write
    #[arg(long, value_enum)]
    to: To,
    /// Input file
    input: String,
    /// Output file
    output: String,
}

/// Writes `bytes` to a file beside `path`, then renames it over `path`:
/// an interrupted write never leaves half a database there, and converting
/// a file into itself (`convert --to diff x.db x.db`) is safe.
fn write_whole(path: &str, bytes: &[u8]) -> std::io::Result<()> {
    let p = std::path::Path::new(path);
    let name = p.file_name().map_or("out".into(), |n| n.to_string_lossy());
    let tmp = p.with_file_name(format!(".{name}.ovsdb-scope-{}", std::process::id()));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, p))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

pub fn convert(a: ConvertArgs) -> u8 {
    let mode = match a.to {
        To::Full => ovsdb::StorageMode::Full,
        To::Diff => ovsdb::StorageMode::Diff,
    };
    let (input, output) = (&a.input, &a.output);
    crate::progress::start_files(std::slice::from_ref(input), "convert");
    let (size, converted) = match convert_file(input, mode) {
        Ok(r) => r,
        Err(e) => {
            errln!("{e}");
            return 2;
        }
    };
    crate::progress::finish();
    match converted {
        Ok(out) => {
            if let Err(e) = write_whole(output, &out) {
                errln!("{output}: {e}");
                return 2;
            }
            outln!("{input} ({size} bytes) -> {output} ({} bytes)", out.len());
            0
        }
        Err(e) => {
            errln!("{input}: {e}");
            // Damage at record 0: not a database at all (bad input).
            if e.record == 0 {
                2
            } else {
                1
            }
        }
    }
}
/// `check [--json] FILE...`: exit 0 when the §6.2 invariants hold, 1 with one line
/// per violation, 2 for unreadable input or when skipped spans (damage in
/// the middle of a file) could not be checked and nothing was violated.
#[derive(clap::Args, Debug)]
#[command(
    about = "Check the Raft invariants across a cluster's files (like ovsdb-tool check-cluster)",
    long_about = "Checks the files of one cluster against Raft's invariants (one leader per \
term, entries that agree at the same index and term, commits that stay, identities) and \
the files' own records, keeping a few digests per entry, never the entries. Damage in \
the middle of a file is an unknown span, never agreement. After a file's first violation \
its records are no longer checked against its own rules (as check-cluster stops there), \
but their servers lists and leaders still count across the files (membership, election \
safety).

--json prints {\"files\": [PATH...], \"problems\": [{\"rule\", \"file\", \"server\", \
\"record\", \"offset\", \"message\", \"term\", \"index\"}...], \"warnings\": [TEXT...], \
\"summary\": {\"files\", \"violations\", \"skipped_spans\", \"unreadable\", \"warnings\", \
\"exit_code\"}}. A problem's rule is the invariant's name (log-matching, \
election-safety, ...), skipped-span for damage stepped over (with \"bytes\" and the entry \
\"indexes\" [first, last] it may have held) or unreadable; record and offset locate the \
record (null when the rule is about no one record), server, term and index are null when \
unknown.",
    after_help = "Examples:\n  ovsdb-scope check static/samples/leader-failover/s*.db\n  ovsdb-scope check --json static/samples/leader-failover/s*.db\n\nExit codes: 0 the invariants hold, 1 a violation, 2 unreadable input or usage, or skipped spans that could not be checked."
)]
pub struct CheckArgs {
    /// The cluster's database files
    #[arg(required = true)]
    files: Vec<String>,
    /// Print the problems and counts as JSON (shape above)
    #[arg(long)]
    json: bool,
}

/// The byte offsets of records `wanted` of file `path`: a framing-only
/// walk, made only for the files a violation names by record (the
/// checker keeps record numbers, not offsets).
fn record_offsets(
    path: &str,
    wanted: &std::collections::BTreeSet<usize>,
) -> std::collections::BTreeMap<usize, u64> {
    let mut found = std::collections::BTreeMap::new();
    let opts = ovsdb_log::ScanOptions {
        frames_only: true,
        ..Default::default()
    };
    // Unreadable now, when it was read a moment ago: the offsets stay null.
    let _ = scan_file(path, opts, &mut |ev| {
        if let Some(raw) = ev.raw() {
            if wanted.contains(&raw.index) {
                found.insert(raw.index, raw.offset);
            }
        }
        ovsdb_log::Verdict::Keep
    });
    found
}

/// `check --json`'s document (its shape is in the command's help).
fn check_json(files: &[String], rep: &ovsdb_log::check::CheckReport) -> Json {
    use std::collections::{BTreeMap, BTreeSet};
    let s = |v: &str| Json::String(v.to_string());
    let n = |v: u64| Json::Integer(v as i64);
    let opt = |v: Option<u64>| v.map_or(Json::Null, n);
    let mut wanted: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for v in &rep.violations {
        if let Some(r) = v.record {
            wanted.entry(v.file.as_str()).or_default().insert(r);
        }
    }
    let offsets: BTreeMap<&str, BTreeMap<usize, u64>> = wanted
        .iter()
        .map(|(f, recs)| (*f, record_offsets(f, recs)))
        .collect();
    let problem = |rule: &str,
                   file: &str,
                   server: Option<ovsdb_log::Uuid>,
                   record: Option<usize>,
                   offset: Option<u64>,
                   message: String| {
        let mut o = Object::new();
        o.push_unchecked("rule", s(rule));
        o.push_unchecked("file", s(file));
        o.push_unchecked("server", server.map_or(Json::Null, |u| s(&u.to_string())));
        o.push_unchecked("record", opt(record.map(|r| r as u64)));
        o.push_unchecked("offset", opt(offset));
        o.push_unchecked("message", s(&message));
        o
    };
    let mut problems = Vec::new();
    for (f, e) in &rep.unreadable {
        let mut o = problem(
            "unreadable",
            f,
            None,
            Some(e.record),
            Some(e.offset),
            e.kind.to_string(),
        );
        o.push_unchecked("term", Json::Null);
        o.push_unchecked("index", Json::Null);
        problems.push(Json::Object(o));
    }
    for u in &rep.unknown {
        let mut o = problem(
            "skipped-span",
            &u.file,
            u.server,
            Some(u.record),
            Some(u.offset),
            u.error.kind.to_string(),
        );
        o.push_unchecked("term", Json::Null);
        o.push_unchecked("index", Json::Null);
        o.push_unchecked("bytes", n(u.bytes));
        o.push_unchecked(
            "indexes",
            u.indexes
                .map_or(Json::Null, |(a, b)| Json::Array(vec![n(a), n(b)])),
        );
        problems.push(Json::Object(o));
    }
    for v in &rep.violations {
        let offset = v
            .record
            .and_then(|r| offsets.get(v.file.as_str())?.get(&r).copied());
        let mut o = problem(
            v.rule,
            &v.file,
            v.server,
            v.record,
            offset,
            v.message.clone(),
        );
        o.push_unchecked("term", opt(v.term));
        o.push_unchecked("index", opt(v.index));
        problems.push(Json::Object(o));
    }
    let mut summary = Object::new();
    summary.push_unchecked("files", n(files.len() as u64));
    summary.push_unchecked("violations", n(rep.violations.len() as u64));
    summary.push_unchecked("skipped_spans", n(rep.unknown.len() as u64));
    summary.push_unchecked("unreadable", n(rep.unreadable.len() as u64));
    summary.push_unchecked("warnings", n(rep.warnings.len() as u64));
    summary.push_unchecked("exit_code", n(u64::from(rep.exit_code())));
    let mut doc = Object::new();
    doc.push_unchecked("files", Json::Array(files.iter().map(|f| s(f)).collect()));
    doc.push_unchecked("problems", Json::Array(problems));
    doc.push_unchecked(
        "warnings",
        Json::Array(rep.warnings.iter().map(|w| s(w)).collect()),
    );
    doc.push_unchecked("summary", Json::Object(summary));
    Json::Object(doc)
}

pub fn check(a: CheckArgs) -> u8 {
    let args = &a.files;
    crate::progress::start_files(args, "check");
    // One file in memory at a time: the checker keeps only what its rules
    // need of each (a few digests per entry).
    let mut checker = ovsdb_log::Checker::new();
    for path in args {
        // Read in chunks: one record of one file in memory at a time.
        let mut fc = checker.begin_file(path);
        let read = scan_file(path, ovsdb_log::ScanOptions::default(), &mut |ev| {
            fc.on_event(&mut checker, &ev)
        });
        if let Err(e) = read {
            errln!("{e}");
            return 2;
        }
        checker.end_file(fc);
    }
    crate::progress::finish();
    let rep = checker.finish();
    if a.json {
        for (f, e) in &rep.unreadable {
            errln!("{f}: {e}");
        }
        outln!("{}", check_json(args, &rep).to_string_compact());
        return rep.exit_code();
    }
    for w in &rep.warnings {
        outln!("{w}");
    }
    for (f, e) in &rep.unreadable {
        errln!("{f}: {e}");
    }
    for u in &rep.unknown {
        outln!("{u}");
    }
    for v in &rep.violations {
        outln!("{v}");
    }
    let files = match args.len() {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    if rep.exit_code() == 0 {
        outln!("{files} checked: cluster invariants hold");
    } else if rep.violations.is_empty() && rep.unreadable.is_empty() {
        outln!(
            "{files} checked: no violation found, but {} skipped span(s) could not be checked",
            rep.unknown.len()
        );
    }
    rep.exit_code()
}
