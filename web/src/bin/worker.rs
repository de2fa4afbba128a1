//! Web Worker of ovsdb-scope: reads the operator's files off the page's
//! thread, and runs the simulation pages' requests.
//!
//! Messages in (plain JS objects):
//! - `{type: "load", names: [String], files: [Blob]}`: read every file (or
//!   sample Blob) in chunks with `FileReaderSync` into the evidence core's
//!   `Collector`, which streams each database file (alone or inside an
//!   archive) through its one walk (`evidence::databases::Databases`:
//!   summary, lane and cluster check at once; the file's bytes are never
//!   held) and keeps the logs and status texts; then diagnoses
//!   (`evidence::diagnose::diagnose_read`). Replies `progress` messages
//!   (`phase` "read", `done`/`total` bytes) and then
//!   `{type: "done", timeline, entries: [Uint8Array], diagnosis}` (see
//!   `src/evidence_view.rs`; timeline and diagnosis as `src/msg.rs` bytes):
//!   the timeline without its lanes' entries, which come per lane in
//!   `timeline::wire`'s binary form (transferred); the timeline carries the
//!   check. While the files are
//!   read, `{type: "preview", timeline, entries, previewEntries}` messages
//!   (same form, no check, no diagnosis) carry the timeline so far: the
//!   first 0.4 s after the start, then at doubling intervals.
//! - `{type: "inspect", lane, name, record, offset}`: decode one record of a
//!   loaded file (found by name, else by position), read back from the
//!   input `Blob` it came from; replies `{type: "detail", detail}` (an
//!   `EntryDetail` as `src/msg.rs` bytes).
//! - `{type: "log-query", id, server, module, level, text, focusServer,
//!   focusLine}`: selects the log lines that pass the filters (server -1: all
//!   servers, merged by time); replies `{type: "log-result", id, total,
//!   focusRow}`.
//! - `{type: "log-lines", id, start, count}`: rows `start..start+count` of
//!   the last selection; replies `{type: "log-lines", id, start, rows: [(server,
//!   line, text)] as `src/msg.rs` bytes}`.
//!
//! - `{type: "contents-open", id, lane, name, at}`: the database of a
//!   loaded file at log index `at` (absent or negative: the last committed
//!   entry; standalone files: after `at` txn records). The first open of a
//!   file streams it from its input once (`contents::stream::Opener`: the
//!   load pass's entry list and row → entries index, and a replay in the
//!   same walk; one more walk when the position is not the end); a later
//!   position replays again (`contents::stream::DatabaseAt`), the previous
//!   database is kept for going back. Replies `{type: "contents-opened",
//!   id, json}` with `{name, database, clustered, first, last, committed,
//!   at, term, date, comment, readError, loadError, tables: [{name,
//!   rows}], rowCount, ms}` or `{error}`.
//! - `{type: "contents-overview", id}`: the `show` overview
//!   (`contents::show`) of the open database; replies `{type:
//!   "contents-overview", id, json: {at, overview}}`.
//! - `{type: "contents-rows", id, table, query, start, count, focus}`: the
//!   rows of a table that `query` selects (`contents::browse::select`:
//!   empty, a substring, or `ovn-nbctl find` conditions), `start..+count`
//!   of them; replies `{type: "contents-rows", id, json: {table, query,
//!   mode, note, total, start, columns, rows: [{uuid, cells: [[segment]]}],
//!   focusRow, ms}}`, a segment being `[text]` or `[text, table, uuid]` (a
//!   reference).
//! - `{type: "contents-row", id, uuid}`: the row whole and its referrers;
//!   replies `{type: "contents-row", id, json: {uuid, table, columns:
//!   [[name, [segment]]], referrers: [{table, column, row}], at}}`.
//! - `{type: "contents-history", id, uuid}`: the row's history, its
//!   records read back from the input by offset (`contents::history`);
//!   replies `{type: "contents-history", id, json}` with the JSON of
//!   `ovsdb-scope history --json` (plus `ms`).
//! - `{type: "contents-sizes", id}`: where the open file's bytes go
//!   (`contents::sizes` through `contents::stream::SizesStream`: a replay
//!   walk for the entries' full and diff sizes, then the breakdown walk;
//!   kept for later requests) with the compaction what-if at the open
//!   position; replies `{type: "contents-sizes", id, json}` with the JSON
//!   of `ovsdb-scope sizes --at AT --json` for the file (plus `ms`, `at`).
//! - `{type: "contents-diff", id, from}`: rows added, removed and changed
//!   from the database at `from` to the open one (`contents::diff`; the
//!   database at `from` replaces the kept previous one); replies
//!   `{type: "contents-diff", id, json}` with the JSON of `ovsdb-scope
//!   diff --from FROM --to AT --json` (plus `from`, `to`, `ms`).
//!
//! - `{type: "run" | "idl" | "export" | "ab_seeds", id, ...}`: the simulation pages'
//!   requests (`src/worker_sim.rs`); the simulation pages start their own
//!   instance of this worker.
//!
//! A panic is reported as `{type: "panic", message}` so the page can say so.
//! Cancelling is done by the page terminating this worker.

#[path = "../evidence_view.rs"]
#[allow(dead_code)]
mod evidence_view;

use std::cell::RefCell;

#[path = "../msg.rs"]
mod msg;

#[path = "../worker_contents.rs"]
mod worker_contents;

#[path = "../worker_sim.rs"]
mod worker_sim;

use evidence::collect::{Collector, DatabaseSink, Limits};
use evidence::databases::Databases;
use evidence::diagnose::{diagnose_read, Options};
use evidence::findings::Knobs;
use evidence::log::Level;
use evidence_view::{DiagView, EventView, FindingView, ServerView};
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, DedicatedWorkerGlobalScope, FileReaderSync, MessageEvent};

/// A database file on the timeline: where to read it back from (the input
/// it was found in, a file or an archive, and its path there).
struct Loaded {
    name: String,
    input: Blob,
    input_name: String,
    clustered: bool,
    /// Record numbers of the entries a later entry replaces (not replayed
    /// by the inspector).
    superseded: Vec<usize>,
    /// The inspector's checkpoints of the file's replay, kept from one
    /// inspection to the next (a jump then reads the file from the
    /// nearest checkpoint before its record, not from the start).
    checkpoints: std::cell::RefCell<Option<Box<ovsdb_log::checkpoint::Checkpoints>>>,
}

/// One server's joined log, with the byte offset of every line.
struct LogText {
    text: Vec<u8>,
    starts: Vec<usize>,
    /// Its times never step back (`LogFile::time_steps_back` is 0): line
    /// order is time order.
    in_order: bool,
}

impl LogText {
    fn new(text: Vec<u8>, in_order: bool) -> LogText {
        let mut starts = vec![0];
        for (i, &b) in text.iter().enumerate() {
            if b == b'\n' && i + 1 < text.len() {
                starts.push(i + 1);
            }
        }
        if text.is_empty() {
            starts.clear();
        }
        LogText {
            text,
            starts,
            in_order,
        }
    }

    fn line(&self, n: usize) -> &[u8] {
        let Some(&s) = self.starts.get(n) else {
            return &[];
        };
        let e = self.starts.get(n + 1).map_or(self.text.len(), |&e| e - 1);
        let e = e.min(s + 4096).max(s);
        let l = &self.text[s..e];
        // The last line ends at the text's end, LF included.
        let l = l.strip_suffix(b"\n").unwrap_or(l);
        l.strip_suffix(b"\r").unwrap_or(l)
    }
}

thread_local! {
    static FILES: RefCell<Vec<Loaded>> = const { RefCell::new(Vec::new()) };
    static LOGS: RefCell<Vec<LogText>> = const { RefCell::new(Vec::new()) };
    /// The log panel's current selection.
    static ROWS: RefCell<Selection> = const { RefCell::new(Selection::Rows(Vec::new())) };
}

/// The rows of the log panel's last query.
enum Selection {
    /// Every line of one server's log, in order: nothing kept per row (a
    /// million-line log is listed whole most of the time).
    All { server: u32, lines: u32 },
    /// (server, line) per row.
    Rows(Vec<(u32, u32)>),
}

impl Selection {
    fn len(&self) -> usize {
        match self {
            Selection::All { lines, .. } => *lines as usize,
            Selection::Rows(r) => r.len(),
        }
    }

    fn get(&self, row: usize) -> Option<(u32, u32)> {
        match self {
            Selection::All { server, lines } => {
                (row < *lines as usize).then_some((*server, row as u32))
            }
            Selection::Rows(r) => r.get(row).copied(),
        }
    }

    /// The row of (server, line), else the first later line of that server.
    fn find(&self, key: (u32, u32)) -> Option<usize> {
        match self {
            Selection::All { server, lines } => {
                (key.0 == *server && key.1 < *lines).then_some(key.1 as usize)
            }
            Selection::Rows(rows) => rows
                .iter()
                .position(|&r| r == key)
                .or_else(|| rows.iter().position(|&r| r.0 == key.0 && r.1 >= key.1)),
        }
    }
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(fields: &[(&str, JsValue)]) {
    let o = Object::new();
    for (k, v) in fields {
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    let _ = scope().post_message(&o);
}

fn get(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn main() {
    std::panic::set_hook(Box::new(|info| {
        post(&[
            ("type", "panic".into()),
            ("message", info.to_string().into()),
        ]);
    }));
    // The worker lives as long as the page keeps it: so does its listener.
    gloo_events::EventListener::new(&scope(), "message", |ev| {
        handle(ev.unchecked_ref::<MessageEvent>().data())
    })
    .forget();
    post(&[("type", "ready".into())]);
}

thread_local! {
    /// Messages that came while an asynchronous request was under way
    /// (a time-travel jump reading its ranges): handled after it, in order.
    static HELD: RefCell<Option<std::collections::VecDeque<JsValue>>> =
        const { RefCell::new(None) };
}

/// From now on, messages wait until [`release_messages`].
fn hold_messages() {
    HELD.with(|h| {
        h.borrow_mut().get_or_insert_with(Default::default);
    });
}

/// Whether messages are held ([`hold_messages`]): a jump is reading.
fn holding() -> bool {
    HELD.with(|h| h.borrow().is_some())
}

/// Handles the messages held since [`hold_messages`], in order (until one
/// of them holds them again).
fn release_messages() {
    let held = HELD.with(|h| h.borrow_mut().take());
    let mut queue = held.unwrap_or_default();
    while let Some(msg) = queue.pop_front() {
        handle(msg);
        if holding() {
            // Put the rest back in front of anything newer.
            HELD.with(|h| {
                let mut h = h.borrow_mut();
                let q = h.get_or_insert_with(Default::default);
                while let Some(m) = queue.pop_back() {
                    q.push_front(m);
                }
            });
            return;
        }
    }
}

fn handle(msg: JsValue) {
    let held = HELD.with(|h| match h.borrow_mut().as_mut() {
        Some(q) => {
            q.push_back(msg.clone());
            true
        }
        None => false,
    });
    if held {
        return;
    }
    match get(&msg, "type").as_string().as_deref() {
        Some("load") => load(&msg),
        Some("check") => check(&msg),
        Some("inspect") => inspect(&msg),
        Some("log-query") => log_query(&msg),
        Some("log-lines") => log_lines(&msg),
        Some("contents-open") => worker_contents::open(&msg),
        Some("contents-rows") => worker_contents::rows(&msg),
        Some("contents-row") => worker_contents::row(&msg),
        Some("contents-overview") => worker_contents::overview(&msg),
        Some("contents-history") => worker_contents::history(&msg),
        Some("contents-sizes") => worker_contents::sizes(&msg),
        Some("contents-diff") => worker_contents::diff(&msg),
        Some("run" | "idl" | "export" | "ab_seeds") => worker_sim::handle(&msg),
        other => post(&[
            ("type", "error".into()),
            ("message", format!("unknown request {other:?}").into()),
        ]),
    }
}

/// Chunk size of the reads from a `File` (a few MB: the whole file is never
/// one JS buffer).
const CHUNK: f64 = 4.0 * 1024.0 * 1024.0;

/// A `Blob` as a `std::io::Read`, in chunks read synchronously (workers only).
struct BlobReader<'a> {
    blob: Blob,
    reader: &'a FileReaderSync,
    pos: f64,
    buf: Vec<u8>,
    at: usize,
    progress: &'a mut dyn FnMut(usize),
}

impl BlobReader<'_> {
    /// The next slice of the blob, read into the one buffer the reader
    /// keeps (no allocation per slice); None at the end.
    fn next_slice(&mut self) -> std::io::Result<Option<&[u8]>> {
        let size = self.blob.size();
        if self.pos >= size {
            return Ok(None);
        }
        let end = (self.pos + CHUNK).min(size);
        let err = |e: JsValue| {
            std::io::Error::other(
                e.as_string()
                    .or_else(|| get(&e, "message").as_string())
                    .unwrap_or_else(|| "the browser could not read the file".into()),
            )
        };
        let part = self
            .blob
            .slice_with_f64_and_f64(self.pos, end)
            .map_err(err)?;
        let ab = Uint8Array::new(&self.reader.read_as_array_buffer(&part).map_err(err)?.into());
        self.buf.resize(ab.length() as usize, 0);
        ab.copy_to(&mut self.buf);
        self.at = 0;
        self.pos = end;
        (self.progress)(self.buf.len());
        Ok(Some(&self.buf))
    }
}

impl std::io::Read for BlobReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.at >= self.buf.len() && self.next_slice()?.is_none() {
            return Ok(0);
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Posts a timeline with `fields`: the entries (most of the model) cross
/// as bytes, moved, not copied (`entries`); the rest as `msg` bytes
/// (`timeline`). The timeline is left without its entries.
fn post_timeline(t: &mut timeline::Timeline, fields: &[(&str, JsValue)]) {
    let lanes = timeline::wire::split(t);
    let rest = msg::to_bytes(&*t);
    let entries = Array::new();
    let transfer = Array::new();
    for b in &lanes {
        let a = Uint8Array::new_with_length(b.len() as u32);
        a.copy_from(b);
        transfer.push(&a.buffer());
        entries.push(&a);
    }
    drop(lanes);
    let o = Object::new();
    for (k, v) in fields
        .iter()
        .cloned()
        .chain([("timeline", rest.into()), ("entries", entries.into())])
    {
        let _ = Reflect::set(&o, &JsValue::from_str(k), &v);
    }
    let _ = scope().post_message_with_transfer(&o, &transfer);
}

/// The first preview of a load comes this long after it starts; each next
/// one waits twice as long as the one before (and at least ten times what
/// building the last one took), so previews cost a small share of the load
/// however long it is.
const FIRST_PREVIEW_MS: f64 = 400.0;

/// When the next preview is due.
struct Preview {
    next_at: f64,
    every: f64,
}

/// The database sink of a load: the one walk of each file
/// ([`Databases`]), plus now and then a `preview` message with the
/// timeline so far, so the page draws while the files are read.
struct Previewing<'a> {
    dbs: &'a mut Databases,
    preview: &'a mut Preview,
}

impl Previewing<'_> {
    fn maybe_preview(&mut self) {
        let t0 = now();
        if t0 < self.preview.next_at {
            return;
        }
        let mut t = self.dbs.preview();
        if t.lanes.is_empty() {
            return;
        }
        let entries: usize = t.lanes.iter().map(|l| l.entries.len()).sum();
        post_timeline(
            &mut t,
            &[
                ("type", JsValue::from("preview")),
                ("previewEntries", (entries as f64).into()),
            ],
        );
        let cost = now() - t0;
        self.preview.every = (self.preview.every * 2.0).max(cost * 10.0);
        self.preview.next_at = now() + self.preview.every;
    }
}

impl DatabaseSink for Previewing<'_> {
    fn begin(&mut self, path: &str) {
        self.dbs.begin(path);
    }
    fn chunk(&mut self, bytes: &[u8]) {
        self.dbs.chunk(bytes);
        self.maybe_preview();
    }
    fn end(&mut self, keep: bool) {
        self.dbs.end(keep);
    }
}

fn progress(phase: &str, done: f64, total: f64) {
    post(&[
        ("type", "progress".into()),
        ("phase", phase.into()),
        ("done", done.into()),
        ("total", total.into()),
    ]);
}

/// The `names` and `files` of a load or check message, as (name, Blob).
fn inputs_of(msg: &JsValue) -> Vec<(String, Blob)> {
    let names: Array = get(msg, "names")
        .dyn_into()
        .unwrap_or_else(|_| Array::new());
    let blobs: Array = get(msg, "files")
        .dyn_into()
        .unwrap_or_else(|_| Array::new());
    names
        .iter()
        .zip(blobs.iter())
        .filter_map(|(n, b)| {
            Some((
                n.as_string().unwrap_or_default(),
                b.dyn_into::<Blob>().ok()?,
            ))
        })
        .collect()
}

/// Reads every input in chunks into `collector`, its database files into
/// `sink`, posting `progress` messages of `phase`; returns the inputs that
/// held a database file (to read them back later).
fn read_inputs(
    inputs: &[(String, Blob)],
    collector: &mut Collector,
    sink: &mut dyn DatabaseSink,
    phase: &str,
) -> Result<Vec<(String, Blob)>, String> {
    let reader = FileReaderSync::new().map_err(|e| format!("no FileReaderSync: {e:?}"))?;
    let total: f64 = inputs.iter().map(|(_, b)| b.size()).sum();
    let mut done = 0f64;
    let mut last_post = 0f64;
    let mut with_databases = Vec::new();
    for (name, blob) in inputs {
        let mut on_chunk = |n: usize| {
            done += n as f64;
            if done - last_post >= CHUNK || done >= total {
                last_post = done;
                progress(phase, done, total);
            }
        };
        let mut r = BlobReader {
            blob: blob.clone(),
            reader: &reader,
            pos: 0.0,
            buf: Vec::new(),
            at: 0,
            progress: &mut on_chunk,
        };
        let before = collector.collected().streamed.len();
        collector.add_streaming(name, &mut r, sink);
        if collector.collected().streamed.len() > before {
            with_databases.push((name.clone(), blob.clone()));
        }
    }
    Ok(with_databases)
}

/// `{type: "check", names, files}`: the cluster check of the database
/// files alone (`Databases::check_only`; logs and status texts are not
/// kept), run by a second worker while the first loads the same files
/// with `check: false`. Replies `{type: "checked", result, ms}` (a
/// `timeline::CheckResult` as `msg` bytes, for `Timeline::apply_check`).
fn check(msg: &JsValue) {
    let started = now();
    let inputs = inputs_of(msg);
    let mut collector = Collector::new(Limits {
        max_total_bytes: 0,
        ..Limits::default()
    });
    let mut dbs = Databases::check_only();
    if let Err(e) = read_inputs(&inputs, &mut collector, &mut dbs, "check") {
        post(&[("type", "error".into()), ("message", e.into())]);
        return;
    }
    let result = dbs.finish_check();
    post(&[
        ("type", "checked".into()),
        ("result", msg::to_bytes(&result).into()),
        ("ms", (now() - started).into()),
    ]);
}

fn load(msg: &JsValue) {
    let started = now();
    let inputs = inputs_of(msg);
    // `check: false`: a second worker checks the files (see `check`).
    let with_check = get(msg, "check").as_bool().unwrap_or(true);
    let mut collector = Collector::new(Limits::default());
    // The load's one walk keeps checkpoints of each file's replay: the
    // inspector's first jump to any entry resumes from the nearest one.
    let mut dbs =
        Databases::new(with_check).with_checkpoints(ovsdb_log::checkpoint::Policy::default());
    let mut preview = Preview {
        next_at: started + FIRST_PREVIEW_MS,
        every: FIRST_PREVIEW_MS,
    };
    let mut sink = Previewing {
        dbs: &mut dbs,
        preview: &mut preview,
    };
    let inputs = match read_inputs(&inputs, &mut collector, &mut sink, "read") {
        Ok(i) => i,
        Err(e) => {
            post(&[("type", "error".into()), ("message", e.into())]);
            return;
        }
    };
    let collected = collector.finish();
    // Where each database file can be read again (for the inspector).
    let sources: Vec<(String, Blob, String)> = collected
        .streamed
        .iter()
        .filter_map(|s| {
            inputs
                .iter()
                .rev()
                .find(|(n, _)| {
                    s.path == *n || s.path.starts_with(&format!("{n}/")) || strip_ext(&s.path, n)
                })
                .map(|(n, b)| (s.path.clone(), b.clone(), n.clone()))
        })
        .collect();
    let mut read = dbs.finish();
    let mut checkpoints = std::mem::take(&mut read.checkpoints);
    let opts = Options {
        knobs: Knobs::default(),
        skip_check: false,
    };
    let mut d = diagnose_read(collected, read, &opts);
    let parse_ms = now() - started;
    let logs: Vec<LogText> = d
        .servers
        .iter_mut()
        .map(|s| {
            let in_order = s.log.as_ref().is_none_or(|l| l.time_steps_back == 0);
            LogText::new(std::mem::take(&mut s.log_text), in_order)
        })
        .collect();
    let view = DiagView {
        inputs: d.inputs.clone(),
        ignored: d.ignored.clone(),
        servers: d
            .servers
            .iter()
            .zip(&logs)
            .map(|(s, log)| {
                let (role, term) = s.role_term();
                ServerView {
                    short: s.short.clone(),
                    name: s.name.clone(),
                    server_id: s.server_id.clone(),
                    address: s.address.clone(),
                    lane_name: s
                        .lane
                        .and_then(|l| d.timeline.lanes.get(l))
                        .map(|l| l.name.clone()),
                    role,
                    term,
                    log_parts: s.log_parts.clone(),
                    lines: log.starts.len() as u64,
                    events: s
                        .log
                        .as_ref()
                        .map_or_else(Vec::new, |l| l.events.iter().map(event_view).collect()),
                    status: s.status.clone(),
                    memory: s.memory.clone(),
                }
            })
            .collect(),
        findings: d
            .findings
            .iter()
            .map(|f| FindingView {
                finding: f.clone(),
                server: d.server_short(f),
                evidence: f
                    .evidence
                    .iter()
                    .map(|r| {
                        let text = logs.get(r.server).map_or(String::new(), |l| {
                            String::from_utf8_lossy(l.line(r.line as usize)).into_owned()
                        });
                        (r.server, r.line, text)
                    })
                    .collect(),
            })
            .collect(),
    };
    let mut t = d.timeline;
    let files: Vec<Loaded> = t
        .lanes
        .iter()
        .filter_map(|l| {
            let (_, blob, input_name) = sources.iter().find(|(p, _, _)| *p == l.name)?;
            Some(Loaded {
                name: l.name.clone(),
                input: blob.clone(),
                input_name: input_name.clone(),
                clustered: l.clustered,
                superseded: l.superseded_records(),
                checkpoints: std::cell::RefCell::new(
                    checkpoints
                        .iter()
                        .position(|(n, _)| *n == l.name)
                        .map(|i| checkpoints.swap_remove(i).1),
                ),
            })
        })
        .collect();
    post_timeline(
        &mut t,
        &[
            ("type", JsValue::from("done")),
            ("diagnosis", msg::to_bytes(&view).into()),
            ("parseMs", parse_ms.into()),
        ],
    );
    drop(t);
    LOGS.with(|c| *c.borrow_mut() = logs);
    ROWS.with(|c| *c.borrow_mut() = Selection::Rows(Vec::new()));
    note_memory();
    FILES.with(|cell| *cell.borrow_mut() = files);
    worker_contents::reset();
}

/// `path` is `input` without a `.gz`/`.xz` the collector took off.
fn strip_ext(path: &str, input: &str) -> bool {
    [".gz", ".xz", ".GZ", ".XZ"]
        .iter()
        .any(|x| input.strip_suffix(x) == Some(path))
}

/// Bytes `start..end` of a `Blob`, read synchronously (workers only).
fn read_blob(blob: &Blob, start: f64, end: f64) -> Result<Vec<u8>, String> {
    let reader = FileReaderSync::new().map_err(|e| format!("no FileReaderSync: {e:?}"))?;
    let part = blob
        .slice_with_f64_and_f64(start, end)
        .map_err(|e| format!("cannot slice the file: {e:?}"))?;
    let ab = reader
        .read_as_array_buffer(&part)
        .map_err(|e| format!("the browser could not read the file: {e:?}"))?;
    Ok(Uint8Array::new(&ab).to_vec())
}

/// Feeds one database file of an input read again to a chunk consumer.
struct ToChunks<'a> {
    path: &'a str,
    on: bool,
    found: bool,
    sink: &'a mut dyn FnMut(&[u8]) -> bool,
    done: bool,
}

impl DatabaseSink for ToChunks<'_> {
    fn begin(&mut self, path: &str) {
        self.on = path == self.path && !self.found;
    }
    fn chunk(&mut self, bytes: &[u8]) {
        if self.on && !self.done {
            self.done = (self.sink)(bytes);
        }
    }
    fn end(&mut self, _keep: bool) {
        if self.on {
            self.found = true;
        }
        self.on = false;
    }
}

/// Streams loaded file `f` again from its input, chunk by chunk, into
/// `sink` (which returns true to stop): a plain file in `CHUNK` reads, a
/// file inside an archive unpacked again through the collector. Nothing
/// of the file is held.
fn stream_file(f: &Loaded, sink: &mut dyn FnMut(&[u8]) -> bool) -> Result<(), String> {
    stream_file_from(f, 0, sink)
}

/// [`stream_file`] from byte `from` of the file on: a plain file is
/// sliced there (`Blob.slice`); a file in an archive is unpacked again
/// and its first `from` bytes passed over.
fn stream_file_from(
    f: &Loaded,
    from: u64,
    sink: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<(), String> {
    let reader = FileReaderSync::new().map_err(|e| format!("no FileReaderSync: {e:?}"))?;
    let mut nothing = |_: usize| {};
    let plain = f.input_name == f.name;
    let mut r = BlobReader {
        blob: f.input.clone(),
        reader: &reader,
        pos: if plain { from as f64 } else { 0.0 },
        buf: Vec::new(),
        at: 0,
        progress: &mut nothing,
    };
    if plain {
        // Each slice goes to the sink from the reader's own buffer.
        while let Some(chunk) = r.next_slice().map_err(|e| e.to_string())? {
            if sink(chunk) {
                break;
            }
        }
        return Ok(());
    }
    let mut skip = from;
    let mut skipping = |chunk: &[u8]| {
        let n = chunk.len().min(usize::try_from(skip).unwrap_or(usize::MAX));
        skip -= n as u64;
        n < chunk.len() && sink(&chunk[n..])
    };
    let mut to = ToChunks {
        path: &f.name,
        on: false,
        found: false,
        sink: &mut skipping,
        done: false,
    };
    let mut c = Collector::new(Limits::default());
    c.add_streaming(&f.input_name, &mut r, &mut to);
    if to.found {
        Ok(())
    } else {
        Err(format!(
            "{} was not found again in {}",
            f.name, f.input_name
        ))
    }
}

/// The record at `offset` of loaded file `f`, when `f` is a plain file
/// (one inside an archive is read only by unpacking it again): its first
/// line says how long it is.
fn read_record_at(f: &Loaded, offset: u64) -> Option<Vec<u8>> {
    if f.input_name != f.name {
        return None;
    }
    let at = offset as f64;
    let size = f.input.size();
    let head = read_blob(&f.input, at, (at + 128.0).min(size)).ok()?;
    let len = timeline::inspect::record_len(&head)? as f64;
    read_blob(&f.input, at, (at + len).min(size)).ok()
}

/// Inspects record `record` at `offset` of loaded file `f`, reading the
/// file again from its input ([`stream_file_from`]) up to the record, from
/// the nearest checkpoint an earlier inspection of the file kept. Nothing
/// of the file is held but the record, the database replayed up to it
/// and the checkpoints (rows shared with it; `Policy::default`'s bounds).
fn inspect_file(f: &Loaded, record: u64, offset: u64) -> timeline::EntryDetail {
    use ovsdb_log::checkpoint::{Checkpoints, Policy};
    let store = f
        .checkpoints
        .borrow_mut()
        .take()
        .unwrap_or_else(|| Box::new(Checkpoints::new(Policy::default())));
    let mut stream = match read_record_at(f, offset) {
        // A plain file is read at any offset: the record first, so the
        // walk from the nearest checkpoint follows only its rows.
        Some(head) => timeline::inspect::InspectStream::resume_knowing(
            f.clustered,
            record,
            offset,
            f.superseded.iter().copied(),
            Some(store),
            &head,
        ),
        None => timeline::inspect::InspectStream::resume(
            f.clustered,
            record,
            offset,
            f.superseded.iter().copied(),
            Some(store),
        ),
    };
    let from = stream.offset();
    if let Err(e) = stream_file_from(f, from, &mut |chunk| stream.push(chunk)) {
        return timeline::EntryDetail {
            error: Some(e),
            ..Default::default()
        };
    }
    let (detail, store) = stream.finish_keeping();
    *f.checkpoints.borrow_mut() = store;
    detail
}

fn level_of(name: &str) -> Option<Level> {
    Some(match name {
        "emer" => Level::Emer,
        "err" => Level::Err,
        "warn" => Level::Warn,
        "info" => Level::Info,
        "dbg" => Level::Dbg,
        _ => return None,
    })
}

/// `hay` holds `needle` (ASCII case folded; `needle` lower-case). Jumps
/// from one candidate first byte to the next with memchr: a text filter
/// reads every line of every log.
fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    if hay.len() < needle.len() {
        return false;
    }
    let last = hay.len() - needle.len();
    let hit = |i: usize| i <= last && hay[i + 1..i + needle.len()].eq_ignore_ascii_case(rest);
    if first.is_ascii_alphabetic() {
        memchr::memchr2_iter(first, first.to_ascii_uppercase(), &hay[..=last]).any(hit)
    } else {
        memchr::memchr_iter(first, &hay[..=last]).any(hit)
    }
}

fn log_query(msg: &JsValue) {
    let id = get(msg, "id");
    let server = get(msg, "server").as_f64().unwrap_or(-1.0);
    let module = get(msg, "module").as_string().unwrap_or_default();
    let level = level_of(&get(msg, "level").as_string().unwrap_or_default());
    let text = get(msg, "text")
        .as_string()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let needle = text.as_bytes();
    let focus_server = get(msg, "focusServer").as_f64();
    let focus_line = get(msg, "focusLine").as_f64();
    let rows = LOGS.with(|c| {
        let logs = c.borrow();
        let chosen: Vec<usize> = (0..logs.len())
            .filter(|&si| server < 0.0 || si == server as usize)
            .filter(|&si| !logs[si].starts.is_empty())
            .collect();
        let filtered = !module.is_empty() || level.is_some() || !needle.is_empty();
        // All servers are merged by time (a stable sort, so each log keeps
        // its order): nothing to sort for one log whose times never step
        // back.
        let sort = server < 0.0 && !(chosen.len() == 1 && logs[chosen[0]].in_order);
        if let ([si], false, false) = (&chosen[..], filtered, sort) {
            if let Ok(lines) = u32::try_from(logs[*si].starts.len()) {
                return Selection::All {
                    server: *si as u32,
                    lines,
                };
            }
        }
        let parse = sort || !module.is_empty() || level.is_some();
        let mut rows: Vec<(i64, u32, u32)> = Vec::new();
        for &si in &chosen {
            let log = &logs[si];
            let mut last_ms = i64::MIN;
            for n in 0..log.starts.len() {
                let line = log.line(n);
                let parsed = if parse {
                    evidence::log::parse_line(line)
                } else {
                    None
                };
                if let Some(p) = &parsed {
                    last_ms = p.time_ms;
                }
                if !module.is_empty() && parsed.as_ref().is_none_or(|p| p.module != module) {
                    continue;
                }
                if let Some(lv) = level {
                    if parsed.as_ref().is_none_or(|p| p.level > lv) {
                        continue;
                    }
                }
                if !contains_ci(line, needle) {
                    continue;
                }
                rows.push((last_ms, si as u32, n as u32));
            }
        }
        if sort {
            ovsdb::order::sort_by_key(&mut rows, |r| r.0);
        }
        Selection::Rows(rows.into_iter().map(|(_, s, l)| (s, l)).collect())
    });
    let focus_row = match (focus_server, focus_line) {
        (Some(s), Some(l)) => rows
            .find((s as u32, l as u32))
            .map_or(JsValue::NULL, |p| (p as f64).into()),
        _ => JsValue::NULL,
    };
    let total = rows.len() as f64;
    ROWS.with(|c| *c.borrow_mut() = rows);
    post(&[
        ("type", "log-result".into()),
        ("id", id),
        ("total", total.into()),
        ("focusRow", focus_row),
    ]);
}

fn log_lines(msg: &JsValue) {
    let id = get(msg, "id");
    let start = get(msg, "start").as_f64().unwrap_or(0.0).max(0.0) as usize;
    let count = get(msg, "count").as_f64().unwrap_or(0.0).clamp(0.0, 2000.0) as usize;
    let out: Vec<(u32, u32, String)> = ROWS.with(|r| {
        LOGS.with(|l| {
            let rows = r.borrow();
            let logs = l.borrow();
            (start..start.saturating_add(count))
                .map_while(|row| rows.get(row))
                .map(|(s, n)| {
                    let text = logs.get(s as usize).map_or(String::new(), |log| {
                        String::from_utf8_lossy(log.line(n as usize)).into_owned()
                    });
                    (s, n, text)
                })
                .collect()
        })
    });
    post(&[
        ("type", "log-lines".into()),
        ("id", id),
        ("start", (start as f64).into()),
        ("rows", msg::to_bytes(&out).into()),
    ]);
}

fn inspect(msg: &JsValue) {
    let lane = get(msg, "lane").as_f64().unwrap_or(-1.0);
    // The page may have dropped lanes of files that are not OVSDB logs, so
    // it names the file too.
    let name = get(msg, "name").as_string();
    let record = get(msg, "record").as_f64().unwrap_or(0.0) as u64;
    let offset = get(msg, "offset").as_f64().unwrap_or(0.0) as u64;
    let detail = FILES.with(|cell| {
        let files = cell.borrow();
        let f = match &name {
            Some(n) => files.iter().find(|f| &f.name == n),
            None => (lane >= 0.0).then(|| files.get(lane as usize)).flatten(),
        };
        let gone = |e: String| timeline::EntryDetail {
            error: Some(e),
            ..Default::default()
        };
        match f {
            Some(f) => inspect_file(f, record, offset),
            None => gone("that file is no longer loaded".to_string()),
        }
    });
    note_memory();
    post(&[
        ("type", "detail".into()),
        ("lane", lane.into()),
        ("detail", msg::to_bytes(&detail).into()),
    ]);
}

/// The worker's wasm memory in bytes (it only grows, so this is the peak
/// so far), left on the worker's global scope as `ovsdbScopeWasmBytes` for
/// benchmarks and tests to read.
fn note_memory() {
    let bytes = Reflect::get(&wasm_bindgen::memory(), &JsValue::from_str("buffer"))
        .and_then(|b| Reflect::get(&b, &JsValue::from_str("byteLength")))
        .unwrap_or(JsValue::UNDEFINED);
    let _ = Reflect::set(&scope(), &JsValue::from_str("ovsdbScopeWasmBytes"), &bytes);
}

/// An event's tooltip: its name and what the timeline knows of it
/// (`election-started · term 2`, `long-poll · 1520 ms`). The full line is
/// one click away in the log panel; a `Debug` dump of every event kind
/// cost 850 bytes of gzipped wasm.
fn event_text(name: &str, term: Option<u64>, peer: Option<&str>, amount: Option<u64>) -> String {
    let mut t = name.to_string();
    if let Some(n) = term {
        t.push_str(&format!(" · term {n}"));
    }
    let unit = match name {
        "long-poll" => " ms",
        "memory-peak" | "memory-grew" => " kB",
        _ => "",
    };
    for part in [
        peer.map(str::to_string),
        amount.map(|a| format!("{a}{unit}")),
    ]
    .into_iter()
    .flatten()
    {
        t.push_str(" · ");
        t.push_str(&part);
    }
    t
}

/// What the page draws of one event (`evidence_view::EventView`).
fn event_view(e: &evidence::events::Event) -> EventView {
    use evidence::events::EventKind as K;
    let (term, peer, amount) = match &e.kind {
        K::ElectionStarted { term, .. }
        | K::ElectionWon { term, .. }
        | K::LeaderIs { term, .. } => (Some(*term), None, None),
        K::ProbeTimeout { peer, .. } | K::ConnectionLost { peer, .. } | K::Connected { peer } => {
            (None, Some(peer.as_str().to_string()), None)
        }
        K::LongPoll { wall_ms, .. } => (None, None, Some(*wall_ms)),
        K::MemoryPeak { kb, .. } => (None, None, Some(*kb)),
        K::MemoryGrew { to_kb, .. } => (None, None, Some(*to_kb)),
        _ => (None, None, None),
    };
    EventView {
        line: e.line,
        time_ms: e.time_ms,
        kind: e.kind.name().to_string(),
        text: event_text(e.kind.name(), term, peer.as_deref(), amount),
        term,
        peer,
        amount,
    }
}

fn now() -> f64 {
    scope().performance().map_or(0.0, |p| p.now())
}
