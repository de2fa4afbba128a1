//! The explorer's files in the worker (`src/bin/worker.rs`, through
//! `#[path]`): loading them, checking them, and reading a record back for
//! the inspector. Each file is read from its input `Blob` in chunks and
//! never held whole; what is kept of a database file is where to read it
//! again ([`Loaded`], also read by `src/worker_contents.rs`).
//!
//! Messages in (plain JS objects):
//! - `{type: "load", names: [String], files: [Blob], check}`: read every
//!   file (or sample Blob) in chunks with `FileReaderSync` into the
//!   evidence core's `Collector`, which streams each database file (alone
//!   or inside an archive) through its one walk
//!   (`evidence::databases::Databases`: summary, lane and cluster check at
//!   once, no check with `check: false`; the file's bytes are never held)
//!   and keeps the logs and status texts; then diagnoses
//!   (`evidence::diagnose::diagnose_read`). Replies `progress` messages
//!   (`phase` "read", `done`/`total` bytes) and then `{type: "done",
//!   timeline, entries: [Uint8Array], diagnosis, parseMs}` (see
//!   `src/evidence_view.rs`; timeline and diagnosis as `src/msg.rs` bytes):
//!   the timeline without its lanes' entries, which come per lane in
//!   `timeline::wire`'s binary form (transferred); the timeline carries the
//!   check. While the files are read, `{type: "preview", timeline, entries,
//!   previewEntries}` messages (same form, no check, no diagnosis) carry
//!   the timeline so far: the first 0.4 s after the start, then at doubling
//!   intervals.
//! - `{type: "check", names, files}`: the cluster check of the database
//!   files alone (`Databases::check_only`; logs and status texts are not
//!   kept), run by a second worker while the first loads the same files
//!   with `check: false`. Replies `progress` messages (`phase` "check"),
//!   then `{type: "checked", result, ms}` (a `timeline::CheckResult` as
//!   `msg` bytes, for `Timeline::apply_check`).
//! - `{type: "inspect", lane, name, record, offset}`: decode one record of a
//!   loaded file (found by name, else by position), read back from the
//!   input `Blob` it came from; replies `{type: "detail", lane, detail}`
//!   (an `EntryDetail` as `src/msg.rs` bytes).
//!
//! A load or check that cannot read its files replies `{type: "error",
//! message}`.

use std::cell::RefCell;

use evidence::collect::{Collector, DatabaseSink, Limits};
use evidence::databases::Databases;
use evidence::diagnose::{diagnose_read, Options};
use evidence::findings::Knobs;
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, FileReaderSync};

use super::evidence_view::{DiagView, FindingView, ServerView};
use super::worker_logs::{self, event_view, LogText};
use super::{get, msg, note_memory, now, post, scope, worker_contents};

/// A database file on the timeline: where to read it back from (the input
/// it was found in, a file or an archive, and its path there).
pub struct Loaded {
    pub name: String,
    pub input: Blob,
    pub input_name: String,
    clustered: bool,
    /// Record numbers of the entries a later entry replaces (not replayed
    /// by the inspector).
    superseded: Vec<usize>,
    /// The inspector's checkpoints of the file's replay, kept from one
    /// inspection to the next (a jump then reads the file from the
    /// nearest checkpoint before its record, not from the start).
    checkpoints: std::cell::RefCell<Option<Box<ovsdb_log::checkpoint::Checkpoints>>>,
}

thread_local! {
    /// The database files of the last load.
    pub static FILES: RefCell<Vec<Loaded>> = const { RefCell::new(Vec::new()) };
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

/// `{type: "check", names, files}` (see the module doc).
pub fn check(msg: &JsValue) {
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

/// `{type: "load", names, files, check}` (see the module doc).
pub fn load(msg: &JsValue) {
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
                let (role, term) = s.role_term(&d.timeline);
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
                cluster: d.cluster_label(f),
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
    worker_logs::keep(logs);
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
pub fn read_blob(blob: &Blob, start: f64, end: f64) -> Result<Vec<u8>, String> {
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
pub fn stream_file(f: &Loaded, sink: &mut dyn FnMut(&[u8]) -> bool) -> Result<(), String> {
    stream_file_from(f, 0, sink)
}

/// [`stream_file`] from byte `from` of the file on: a plain file is
/// sliced there (`Blob.slice`); a file in an archive is unpacked again
/// and its first `from` bytes passed over.
pub fn stream_file_from(
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

/// `{type: "inspect", lane, name, record, offset}` (see the module doc).
pub fn inspect(msg: &JsValue) {
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
