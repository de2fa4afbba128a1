//! The worker's side of the Contents page (`src/bin/worker.rs`, through
//! `#[path]`): messages `contents-*`. Everything here is plumbing between
//! the page's requests, the input `Blob`s and the `contents` core: the
//! file is streamed from its input for every walk and never held; what is
//! kept is the load pass's entry list and history index, the database at
//! the chosen position (and the one before, for going back), the current
//! row selection, the referrers and the tables' searchable text
//! (`browse::TextIndex`) of the current database.
//!
//! Messages in (plain JS objects):
//! - `{type: "contents-open", id, lane, name, at, viewTable, viewStart,
//!   viewCount}`: the database of a loaded file at log index `at` (absent
//!   or negative: the last committed entry; standalone files: after `at`
//!   txn records). A long jump (reads back more than [`PREVIEW_BYTES`],
//!   or a step on from one not landed yet) through the op index is
//!   answered by its preview first when the page says which rows it shows
//!   (`viewTable`, no query): the reply then has `preview: {table, start,
//!   total, columns, rows}` (the rows on screen, read and built on their
//!   own) and the tables' counts at `at`, and the rest lands between
//!   messages (`{type: "contents-landed", json: {at}}` once it has; any
//!   request that needs the database lands it first, a new
//!   `contents-open` drops it or steps it on). The first open of a
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

use std::cell::RefCell;
use std::collections::HashMap;

use contents::browse::{self, Referrers, Selection, TextIndex};
use contents::stream::{DatabaseAt, Opener, Range};
use contents::Log;
use ovsdb::json::{object, Json};
use ovsdb::{Database, Uuid};
use ovsdb_log::checkpoint::{Checkpoint, Policy};
use ovsdb_log::{Event, LogScan, Verdict};
use wasm_bindgen::JsValue;

use super::worker_load::{read_blob, stream_file, stream_file_from, Loaded, FILES};
use super::{get, now, post};

struct Db {
    at: u64,
    db: Database,
    /// A read error after which the replay stopped (the database is the
    /// one before it).
    error: Option<String>,
    referrers: Option<Referrers>,
    /// Each table's searchable text, built on its first substring query.
    texts: TextIndex,
    /// Where its replay landed: a step forward starts there.
    landing: Option<Checkpoint>,
}

struct Open {
    name: String,
    log: Log<'static>,
    range: Range,
    cur: Db,
    prev: Option<Db>,
    /// (table, query) of the selection and the selection.
    selection: Option<(String, String, Selection)>,
    /// The size report of the whole log (without its compaction what-if)
    /// and the file's length, once asked for.
    sizes: Option<(contents::sizes::SizeReport, u64)>,
    /// Whether a background slice of the viewed table's text is
    /// scheduled.
    preparing: bool,
    /// The open's replay checkpoints: another index is replayed from the
    /// nearest one, the file read from its offset.
    checkpoints: Option<Box<ovsdb_log::checkpoint::Checkpoints>>,
    /// A long jump shown by its preview, whose landing is still being
    /// read and built (`cur` is the database before it until then).
    pending: Option<Pending>,
}

/// A long jump whose preview the page shows ([`open`]): its landing is
/// read and built between messages ([`complete_later`]), or at once when
/// a request needs the database ([`settle`]). A new `contents-open`
/// drops it.
struct Pending {
    /// Which pending landing this is ([`PENDING_GEN`]).
    generation: u32,
    at: u64,
    d: DatabaseAt,
}

impl Open {
    /// Where its two databases' replays landed (a step forward from one of
    /// them reads only the records in between).
    fn landings(&self) -> impl Iterator<Item = &Checkpoint> {
        [Some(&self.cur), self.prev.as_ref()]
            .into_iter()
            .flatten()
            .filter_map(|d| d.landing.as_ref())
    }
}

thread_local! {
    static OPEN: RefCell<Option<Open>> = const { RefCell::new(None) };
    /// Counts pending landings: a slice scheduled for one that is gone
    /// does nothing.
    static PENDING_GEN: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// A jump reads back more than this: it is shown by its preview first
/// (the rows on screen, read and built on their own) and lands later. A
/// step reads a record or two and lands at once.
const PREVIEW_BYTES: u64 = 2 << 20;

/// Rows of a pending landing built per turn of the worker's event loop:
/// about 10 ms on the 1 GB Southbound file's logical flows.
const BUILD_SLICE: usize = 1_000;

/// The rows the page shows of a table (`viewTable`, `viewStart`,
/// `viewCount` of `contents-open`), for a preview.
fn view_hint(msg: &JsValue) -> Option<(String, usize, usize)> {
    let table = get(msg, "viewTable").as_string()?;
    let start = get(msg, "viewStart").as_f64()?.max(0.0) as usize;
    let count = get(msg, "viewCount").as_f64()?.clamp(0.0, 100.0) as usize;
    Some((table, start, count))
}

/// Forgets the open file (a new load replaces the files).
pub fn reset() {
    OPEN.with(|o| *o.borrow_mut() = None);
}

fn reply(kind: &str, id: JsValue, v: Json) {
    post(&[
        ("type", kind.into()),
        ("id", id),
        ("json", v.to_string_compact().into()),
    ]);
}

fn error_reply(kind: &str, id: JsValue, e: String) {
    reply(kind, id, object([("error", e.into())]));
}

/// An index or a count (far below `i64::MAX`).
fn num(n: impl TryInto<i64>) -> Json {
    Json::Integer(n.try_into().unwrap_or(i64::MAX))
}

/// `null` for `None`.
fn opt(v: Option<impl Into<Json>>) -> Json {
    v.map_or(Json::Null, Into::into)
}

/// A core's JSON document with the worker's own members added (or
/// replaced) at the end.
fn with(mut v: Json, members: impl IntoIterator<Item = (&'static str, Json)>) -> Json {
    if let Json::Object(o) = &mut v {
        for (k, x) in members {
            o.insert(k, x);
        }
    }
    v
}

/// Streams `f` once through `on_event` over a fresh scanner.
fn walk(
    f: &Loaded,
    opts: ovsdb_log::ScanOptions,
    on_event: &mut dyn FnMut(&Event<'_>) -> Verdict,
) -> Result<LogScan, String> {
    let mut scan = LogScan::new(opts);
    let mut cb = |ev: Event<'_>| on_event(&ev);
    stream_file(f, &mut |chunk: &[u8]| {
        scan.push(chunk, &mut cb);
        false
    })?;
    scan.finish(&mut cb);
    Ok(scan)
}

/// Walks `f` as often as the replay `d` asks (one walk or two), each from
/// where `d` starts (a checkpoint's offset) and until it has what it needs.
fn replay_walks(f: &Loaded, d: &mut DatabaseAt) -> Result<(), String> {
    // A jump through the op index reads back a few ranges, no walk.
    for (a, b) in d.reads() {
        let bytes = read_blob(&f.input, a as f64, b as f64)?;
        d.fill(a, &bytes);
    }
    walks_after_reads(f, d)
}

/// [`replay_walks`] once the ranges of [`DatabaseAt::reads`] are in.
fn walks_after_reads(f: &Loaded, d: &mut DatabaseAt) -> Result<(), String> {
    while let Some(opts) = d.next_walk() {
        let at = d.start();
        let mut scan = LogScan::resume(opts, &at);
        stream_file_from(f, at.offset, &mut |chunk: &[u8]| {
            scan.push(chunk, &mut |ev| {
                d.on_event(&ev);
                Verdict::Keep
            });
            d.reached()
        })?;
        scan.finish(&mut |ev| {
            d.on_event(&ev);
            Verdict::Keep
        });
        d.end(&scan);
    }
    Ok(())
}

fn database_at(f: &Loaded, mut d: DatabaseAt, at: u64) -> Result<Db, String> {
    replay_walks(f, &mut d)?;
    landed(d, at)
}

/// The database a replay that has walked reached.
fn landed(d: DatabaseAt, at: u64) -> Result<Db, String> {
    let landing = d.landing();
    let (db, err) = d.finish()?;
    Ok(Db {
        at,
        db,
        error: err.map(|e| e.to_string()),
        referrers: None,
        texts: TextIndex::new(),
        landing,
    })
}

fn find_file<'a>(files: &'a [Loaded], msg: &JsValue) -> Option<&'a Loaded> {
    let lane = get(msg, "lane").as_f64().unwrap_or(-1.0);
    match get(msg, "name").as_string() {
        Some(n) => files.iter().find(|f| f.name == n),
        None => (lane >= 0.0).then(|| files.get(lane as usize)).flatten(),
    }
}

/// `contents-open {id, lane, name, at}`: the tables at `at` (absent or
/// negative: the last committed entry).
pub fn open(msg: &JsValue) {
    let id = get(msg, "id");
    let at = get(msg, "at")
        .as_f64()
        .filter(|a| *a >= 0.0)
        .map(|a| a as u64);
    let started = now();
    // The database a jump replaces goes after the reply is posted, and
    // after the page's request for the rows it shows (`free_later`).
    let mut gone: Option<Db> = None;
    let mut later = None;
    let mut preview = None;
    let res = FILES.with(|cell| {
        let files = cell.borrow();
        let f = find_file(&files, msg).ok_or("that file is no longer loaded")?;
        OPEN.with(|o| {
            let mut o = o.borrow_mut();
            if o.as_ref().is_some_and(|x| x.name == f.name) {
                let x = o.as_mut().unwrap();
                // A landing still under way is dropped (the reader moved
                // on), or moved on by a step forward.
                let pending = x.pending.take();
                let want = at
                    .unwrap_or(x.range.committed)
                    .clamp(x.range.first, x.range.last.max(x.range.first));
                if x.cur.at != want {
                    let stepped = pending
                        .filter(|p| want > p.at)
                        .and_then(|p| p.d.step(x.checkpoints.as_deref(), want).ok());
                    if stepped.is_none() && x.prev.as_ref().is_some_and(|p| p.at == want) {
                        std::mem::swap(&mut x.cur, x.prev.as_mut().unwrap());
                    } else {
                        let moved = stepped.is_some();
                        let d = stepped.unwrap_or_else(|| {
                            DatabaseAt::from_checkpoints_near(
                                x.checkpoints.as_deref(),
                                want,
                                x.landings(),
                            )
                        });
                        let reads = d.reads();
                        let bytes: u64 = reads.iter().map(|(a, b)| b - a).sum();
                        if let Some((table, start, count)) =
                            view_hint(msg).filter(|_| moved || bytes > PREVIEW_BYTES)
                        {
                            if let Some(p) = d.preview(&table) {
                                let window: Vec<Uuid> =
                                    p.uuids.iter().skip(start).take(count).copied().collect();
                                let reads = d.preview_reads(&table, &window);
                                let pv = Preview {
                                    d,
                                    at: want,
                                    table,
                                    start,
                                    window,
                                    p,
                                };
                                preview = Some((pv, reads, f.input.clone()));
                                return Ok(());
                            }
                        }
                        if !reads.is_empty() {
                            // Through the op index: its ranges are read
                            // all at once, without blocking (see
                            // `read_back`).
                            later = Some((d, want, reads, f.input.clone()));
                            return Ok(());
                        }
                        let d = database_at(f, d, want)?;
                        gone = x.prev.replace(std::mem::replace(&mut x.cur, d));
                    }
                    x.selection = None;
                }
                return Ok::<(), String>(());
            }
            *o = None;
            // A plain file is read back by offset: its jumps go through
            // the op index (one inside an archive is only walked again).
            let mut op = Opener::with_policy(
                at,
                Policy {
                    op_index: f.input_name == f.name,
                    ..Policy::default()
                },
            );
            let opts = op.options();
            let scan = walk(f, opts, &mut |ev| op.on_event(ev))?;
            let mut opened = op.finish(&scan);
            let cur = match opened.again.take() {
                Some(d) => database_at(f, d, opened.at)?,
                None => {
                    let (db, err) = opened.db?;
                    Db {
                        at: opened.at,
                        db,
                        error: err.map(|e| e.to_string()),
                        referrers: None,
                        texts: TextIndex::new(),
                        landing: None,
                    }
                }
            };
            *o = Some(Open {
                name: f.name.clone(),
                log: opened.log,
                range: opened.range,
                cur,
                prev: None,
                selection: None,
                sizes: None,
                preparing: false,
                checkpoints: opened.checkpoints,
                pending: None,
            });
            Ok(())
        })
    });
    if let (Ok(()), Some((pv, reads, input))) = (&res, preview) {
        read_then(
            input,
            reads,
            true,
            Box::new(move |bytes| preview_landed(id, started, pv, bytes)),
        );
        return;
    }
    if let (Ok(()), Some((d, want, reads, input))) = (&res, later) {
        read_then(
            input,
            reads,
            true,
            Box::new(move |bytes| jump_landed(id, started, d, want, bytes)),
        );
        return;
    }
    opened_reply(id, started, res);
    free_later(gone);
    super::note_memory();
}

/// Reads the byte ranges of a jump through the op index all at once: a
/// `Blob.arrayBuffer()` promise per range, awaited together. In Chromium
/// that takes about half the time of `FileReaderSync` calls one after
/// another (40 MB in 5 ranges: 57-78 ms against 79-154 ms, BENCHMARKS.md
/// "A faster landing, reads that do not block").
async fn read_back(input: &web_sys::Blob, reads: &[(u64, u64)]) -> Result<Vec<Vec<u8>>, String> {
    use wasm_bindgen::JsCast;
    let promises = js_sys::Array::new();
    for &(a, b) in reads {
        let part = input
            .slice_with_f64_and_f64(a as f64, b as f64)
            .map_err(|e| format!("cannot slice the file: {e:?}"))?;
        promises.push(&part.array_buffer());
    }
    let all = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::all(&promises))
        .await
        .map_err(|e| format!("the browser could not read the file: {e:?}"))?;
    let all: js_sys::Array = all.unchecked_into();
    Ok(all
        .iter()
        .map(|ab| js_sys::Uint8Array::new(&ab).to_vec())
        .collect())
}

/// The end of a jump whose ranges [`read_back`] read: the walk it may still
/// need (when applying them failed), then the reply.
fn jump_landed(id: JsValue, started: f64, mut d: DatabaseAt, want: u64, parts: ReadBack) {
    let mut gone: Option<Db> = None;
    let res = FILES.with(|cell| {
        let files = cell.borrow();
        OPEN.with(|o| {
            let mut o = o.borrow_mut();
            let x = o.as_mut().ok_or("no file is open")?;
            let f = files
                .iter()
                .find(|f| f.name == x.name)
                .ok_or("that file is no longer loaded")?;
            fill(&mut d, parts?);
            walks_after_reads(f, &mut d)?;
            let d = landed(d, want)?;
            gone = x.prev.replace(std::mem::replace(&mut x.cur, d));
            x.selection = None;
            Ok::<(), String>(())
        })
    });
    opened_reply(id, started, res);
    free_later(gone);
    super::note_memory();
}

/// A long jump's preview, its ranges being read ([`open`]).
struct Preview {
    d: DatabaseAt,
    at: u64,
    table: String,
    /// The first row of `window` in the table.
    start: usize,
    window: Vec<Uuid>,
    p: ovsdb_log::net::Preview,
}

/// The end of a preview's reads: the reply with the rows on screen, then
/// the landing under way ([`complete_later`]).
fn preview_landed(id: JsValue, started: f64, mut pv: Preview, parts: ReadBack) {
    let res = with_open(|x| {
        fill(&mut pv.d, parts?);
        let db = &x.cur.db;
        let tables = browse::tables_counted(db.schema(), pv.p.counts.iter().copied());
        let mut v = opened_json(x, pv.at, None, &tables, started);
        // The rows on screen. Without them (a value that does not read:
        // the landing will walk) the page asks for its rows, which land
        // the jump first.
        let rows = pv.d.preview_rows(&pv.table, &pv.window);
        if let (Ok(rows), Some(ts)) = (rows, db.table_schema(&pv.table)) {
            let cols = browse::columns(ts);
            let out: Vec<Json> = rows
                .iter()
                .flatten()
                .map(|r| row_json(ts, &cols, r))
                .collect();
            let shown = object([
                ("table", pv.table.as_str().into()),
                ("start", num(pv.start)),
                ("total", num(pv.p.uuids.len())),
                (
                    "columns",
                    Json::Array(cols.iter().map(|(n, _)| n.as_str().into()).collect()),
                ),
                ("rows", out.into()),
            ]);
            v = with(v, [("preview", shown)]);
        }
        let generation = PENDING_GEN.with(|g| {
            g.set(g.get().wrapping_add(1));
            g.get()
        });
        x.pending = Some(Pending {
            generation,
            at: pv.at,
            d: pv.d,
        });
        Ok((v, generation))
    });
    match res {
        Err(e) => error_reply("contents-opened", id, e),
        Ok((v, generation)) => {
            reply("contents-opened", id, v);
            complete_later(generation);
        }
    }
    super::note_memory();
}

/// Reads the rest of a pending landing's ranges without holding messages,
/// then builds its rows a slice per turn of the event loop
/// ([`build_slice`]).
fn complete_later(generation: u32) {
    let wanted = with_open_file(|f, x| match &x.pending {
        Some(p) if p.generation == generation => Ok(Some((p.d.reads(), f.input.clone()))),
        _ => Ok(None),
    });
    let Ok(Some((reads, input))) = wanted else {
        return;
    };
    read_then(
        input,
        reads,
        false,
        Box::new(move |parts| {
            let filled = with_open(|x| match x.pending.as_mut() {
                Some(p) if p.generation == generation => {
                    fill(&mut p.d, parts?);
                    Ok(true)
                }
                _ => Ok(false),
            });
            // A read that failed: the landing reads again when needed.
            if let Ok(true) = filled {
                build_slice(generation);
            }
        }),
    );
}

/// Ranges read back: each one's offset and bytes.
type ReadBack = Result<Vec<(u64, Vec<u8>)>, String>;

/// What to do with the ranges [`read_back`] read.
type ThenFn = Box<dyn FnOnce(ReadBack)>;

/// Gives a replay the ranges read back for it.
fn fill(d: &mut DatabaseAt, parts: Vec<(u64, Vec<u8>)>) {
    for (a, b) in parts {
        d.fill(a, &b);
    }
}

/// Reads `reads` of `input` ([`read_back`]) without blocking, then calls
/// `then`; `hold`: other messages wait meanwhile (a jump's own reads).
fn read_then(input: web_sys::Blob, reads: Vec<(u64, u64)>, hold: bool, then: ThenFn) {
    if hold {
        super::hold_messages();
    }
    wasm_bindgen_futures::spawn_local(async move {
        let bytes = read_back(&input, &reads).await;
        then(bytes.map(|b| reads.iter().map(|r| r.0).zip(b).collect()));
        if hold {
            super::release_messages();
        }
    });
}

/// Builds one slice of a pending landing, and lands it once all is built
/// (then tells the page: `contents-landed {at}`).
fn build_slice(generation: u32) {
    if super::holding() {
        gloo_timers::callback::Timeout::new(20, move || build_slice(generation)).forget();
        return;
    }
    let done = with_open(|x| match x.pending.as_mut() {
        Some(p) if p.generation == generation => Ok(Some(p.d.build(BUILD_SLICE))),
        _ => Ok(None),
    });
    match done {
        Ok(Some(false)) => {
            gloo_timers::callback::Timeout::new(0, move || build_slice(generation)).forget();
        }
        Ok(Some(true)) => {
            let _ = with_open_file(settle);
        }
        _ => {}
    }
}

/// Lands the pending jump now, if there is one: its remaining ranges are
/// read, its rows built and placed, and it becomes the open database;
/// the page is told (`contents-landed`).
fn settle(f: &Loaded, x: &mut Open) -> Result<(), String> {
    let Some(p) = x.pending.take() else {
        return Ok(());
    };
    // (The ranges not read yet are read now, by `replay_walks`.) A landing
    // that fails is said too: the page shows the preview's index, and the
    // database open is still the one before.
    let d = database_at(f, p.d, p.at);
    let mut told = vec![("at", num(p.at))];
    if let Err(e) = &d {
        told.push(("error", e.as_str().into()));
    }
    post(&[
        ("type", "contents-landed".into()),
        ("id", JsValue::NULL),
        ("json", object(told).to_string_compact().into()),
    ]);
    let gone = x.prev.replace(std::mem::replace(&mut x.cur, d?));
    x.selection = None;
    free_later(gone);
    Ok(())
}

thread_local! {
    /// Rows of replaced databases still to free, a slice at a time.
    static TRASH: RefCell<Vec<ovsdb::db::RowRef>> = const { RefCell::new(Vec::new()) };
}

/// Rows freed per turn of the worker's event loop: about 5 ms of work on
/// the 1 GB Southbound file's logical flows.
const FREE_SLICE: usize = 1_000;

/// Frees a database a jump replaced, later and in slices. Freeing the rows
/// a long jump built on the 1 GB Southbound file takes about 100 ms in
/// Chromium; done at once, it held up the next jump whenever the reader
/// moved on within a fraction of a second (BENCHMARKS.md, "A replaced
/// database freed in slices"). Only its row maps go now; its rows wait
/// in [`TRASH`]. The page's request for the rows of the new database comes
/// a few milliseconds after the jump's reply, so no row goes before 100
/// ms; then each turn of the event loop frees [`FREE_SLICE`] rows, and a
/// message that arrives meanwhile waits at most one slice; none is freed
/// while a jump reads its ranges.
fn free_later(gone: Option<Db>) {
    let Some(g) = gone else { return };
    TRASH.with(|t| t.borrow_mut().extend(g.db.into_rows()));
    gloo_timers::callback::Timeout::new(100, free_slice).forget();
}

/// Frees one slice of [`TRASH`], and schedules the next while any is left
/// (none while a jump reads: its own work comes first). (The wasm memory
/// does not shrink: what is freed serves the next jump.)
fn free_slice() {
    let wait = match super::holding() {
        true => 20,
        false => {
            let left = TRASH.with(|t| {
                let mut t = t.borrow_mut();
                let keep = t.len().saturating_sub(FREE_SLICE);
                t.truncate(keep);
                if keep == 0 {
                    *t = Vec::new();
                }
                keep
            });
            if left == 0 {
                return;
            }
            0
        }
    };
    gloo_timers::callback::Timeout::new(wait, free_slice).forget();
}

/// The reply to `contents-open`: the open file's current database.
fn opened_reply(id: JsValue, started: f64, res: Result<(), String>) {
    match res {
        Err(e) => error_reply("contents-opened", id, e),
        Ok(()) => OPEN.with(|o| {
            let o = o.borrow();
            let x = o.as_ref().unwrap();
            let tables = browse::tables(&x.cur.db);
            let v = opened_json(x, x.cur.at, x.cur.error.clone(), &tables, started);
            reply("contents-opened", id, v);
        }),
    }
}

/// The `contents-opened` document of the open file at `at`, with its
/// tables' row counts (`tables`, in name order).
fn opened_json(
    x: &Open,
    at: u64,
    read_error: Option<String>,
    tables: &[browse::TableCount],
    started: f64,
) -> Json {
    let db = &x.cur.db;
    let entry = x
        .log
        .entries
        .iter()
        .rev()
        .find(|e| !e.superseded && e.index == Some(at));
    object([
        ("name", x.name.as_str().into()),
        ("database", db.schema().name.as_str().into()),
        (
            "clustered",
            (x.log.format == Some(ovsdb_log::Format::Clustered)).into(),
        ),
        ("first", num(x.range.first)),
        ("last", num(x.range.last)),
        ("committed", num(x.range.committed)),
        ("at", num(at)),
        ("term", entry.and_then(|e| e.term).map_or(Json::Null, num)),
        (
            "date",
            opt(entry
                .and_then(|e| e.date_ms)
                .map(timeline::time::utc_datetime)),
        ),
        ("comment", opt(entry.and_then(|e| e.comment.clone()))),
        ("readError", opt(read_error)),
        (
            "loadError",
            opt(x.log.error.as_ref().map(|e| e.to_string())),
        ),
        (
            "tables",
            tables
                .iter()
                .map(|t| object([("name", t.name.as_str().into()), ("rows", num(t.rows))]))
                .collect::<Vec<Json>>()
                .into(),
        ),
        (
            "rowCount",
            num(tables.iter().map(|t| t.rows).sum::<usize>()),
        ),
        ("ms", Json::Real(now() - started)),
    ])
}

/// A row of the grid: `{uuid, cells}` for the columns `cols`.
fn row_json(
    ts: &ovsdb::schema::TableSchema,
    cols: &[(String, Option<usize>)],
    r: &ovsdb::db::Row,
) -> Json {
    let cells: Vec<Json> = cols
        .iter()
        .map(|(_, ci)| segments(browse::cell(ts, r, *ci, browse::GRID_CELL_CHARS)))
        .collect();
    object([("uuid", r.uuid.to_string().into()), ("cells", cells.into())])
}

fn with_open<T>(f: impl FnOnce(&mut Open) -> Result<T, String>) -> Result<T, String> {
    OPEN.with(|o| match o.borrow_mut().as_mut() {
        Some(x) => f(x),
        None => Err("no file is open in Contents".into()),
    })
}

/// [`with_open`], with the loaded file the open view reads back from.
fn with_open_file<T>(f: impl FnOnce(&Loaded, &mut Open) -> Result<T, String>) -> Result<T, String> {
    FILES.with(|cell| {
        let files = cell.borrow();
        with_open(|x| {
            let file = files
                .iter()
                .find(|l| l.name == x.name)
                .ok_or("that file is no longer loaded")?;
            f(file, x)
        })
    })
}

fn segments(segs: Vec<browse::Segment>) -> Json {
    Json::Array(
        segs.into_iter()
            .map(|s| {
                Json::Array(match s.link {
                    None => vec![s.text.into()],
                    Some((t, u)) => vec![s.text.into(), t.into(), u.to_string().into()],
                })
            })
            .collect(),
    )
}

/// `contents-rows {id, table, query, start, count, focus}`: rows
/// `start..start+count` of the table's selection for `query` (`focus`: a
/// row UUID whose position to report).
pub fn rows(msg: &JsValue) {
    let id = get(msg, "id");
    let table = get(msg, "table").as_string().unwrap_or_default();
    let query = get(msg, "query").as_string().unwrap_or_default();
    let start = get(msg, "start").as_f64().unwrap_or(0.0).max(0.0) as usize;
    let count = get(msg, "count").as_f64().unwrap_or(0.0).clamp(0.0, 500.0) as usize;
    let focus = get(msg, "focus").as_string().and_then(|s| Uuid::parse(&s));
    let started = now();
    let res = with_open_file(|f, x| {
        settle(f, x)?;
        let fresh = !matches!(&x.selection, Some((t, q, _)) if *t == table && *q == query);
        if fresh {
            let s = browse::select(&x.cur.db, &table, &query, Some(&mut x.cur.texts))?;
            x.selection = Some((table.clone(), query.clone(), s));
        }
        let (_, _, sel) = x.selection.as_ref().unwrap();
        let db = &x.cur.db;
        let ts = db.table_schema(&table).ok_or("no such table")?;
        let cols = browse::columns(ts);
        let out: Vec<Json> = sel
            .uuids
            .iter()
            .skip(start)
            .take(count)
            .filter_map(|u| db.row(&table, u))
            .map(|r| row_json(ts, &cols, r))
            .collect();
        Ok(object([
            ("table", table.as_str().into()),
            ("query", query.as_str().into()),
            ("at", num(x.cur.at)),
            ("mode", sel.mode.name().into()),
            ("note", opt(sel.note.clone())),
            ("total", num(sel.uuids.len())),
            ("start", num(start)),
            (
                "columns",
                Json::Array(cols.iter().map(|(n, _)| n.as_str().into()).collect()),
            ),
            ("rows", out.into()),
            (
                "focusRow",
                focus.and_then(|u| sel.position(&u)).map_or(Json::Null, num),
            ),
            ("ms", Json::Real(now() - started)),
        ]))
    });
    match res {
        Ok(v) => reply("contents-rows", id, v),
        Err(e) => error_reply("contents-rows", id, e),
    }
    schedule_text();
}

/// Builds the viewed table's searchable text a slice at a time between
/// messages (one `setTimeout` turn each, ~15 ms of work), so the first
/// substring query finds it ready and the scrolling before it waits for
/// one slice at most.
fn schedule_text() {
    let wanted = with_open(|x| {
        let table = x.selection.as_ref().map(|(t, _, _)| t.clone());
        let todo = table.is_some_and(|t| !x.cur.texts.has(&t)) && !x.preparing;
        x.preparing |= todo;
        Ok(todo)
    });
    if !matches!(wanted, Ok(true)) {
        return;
    }
    // One turn of the worker's event loop per slice.
    gloo_timers::callback::Timeout::new(0, || {
        let again = with_open(|x| {
            x.preparing = false;
            let Some((table, _, _)) = x.selection.as_ref() else {
                return Ok(false);
            };
            let started = now();
            while now() - started < 15.0 {
                match x.cur.texts.prepare(&x.cur.db, table, 500) {
                    Some(false) => {}
                    _ => return Ok(false),
                }
            }
            Ok(true)
        });
        if matches!(again, Ok(true)) {
            schedule_text();
        }
    })
    .forget();
}

/// `contents-row {id, uuid}`: one row whole (every column, references as
/// links) and who refers to it.
pub fn row(msg: &JsValue) {
    let id = get(msg, "id");
    let uuid = get(msg, "uuid").as_string().unwrap_or_default();
    let res = with_open_file(|f, x| {
        settle(f, x)?;
        let u = Uuid::parse(&uuid).ok_or_else(|| format!("{uuid:?} is not a UUID"))?;
        let db = &x.cur.db;
        let referrers = x.cur.referrers.get_or_insert_with(|| Referrers::build(db));
        let Some((ts, r)) = browse::find_row(db, &u) else {
            return Ok(object([
                ("uuid", uuid.as_str().into()),
                ("missing", true.into()),
                ("at", num(x.cur.at)),
            ]));
        };
        let cols: Vec<Json> = browse::columns(ts)
            .iter()
            .map(|(n, ci)| {
                Json::Array(vec![
                    n.as_str().into(),
                    segments(browse::cell(ts, r, *ci, usize::MAX)),
                ])
            })
            .collect();
        let refs: Vec<Json> = referrers
            .of(&u)
            .into_iter()
            .map(|r| {
                object([
                    ("table", r.table.as_str().into()),
                    ("column", r.column.as_str().into()),
                    ("row", r.row.to_string().into()),
                ])
            })
            .collect();
        Ok(object([
            ("uuid", uuid.as_str().into()),
            ("table", ts.name.as_str().into()),
            ("columns", cols.into()),
            ("referrers", refs.into()),
            ("at", num(x.cur.at)),
        ]))
    });
    match res {
        Ok(v) => reply("contents-row", id, v),
        Err(e) => error_reply("contents-row", id, e),
    }
}

/// `contents-overview {id}`: the `show` overview of the open database,
/// asked for while the page shows it; replies `{type: "contents-overview",
/// id, json: {at, overview}}`. (It came with each `contents-opened`
/// reply before: on the 1 GB Southbound file, 4 600 lines that took about
/// 15 ms of each jump to build, shown or not.)
pub fn overview(msg: &JsValue) {
    let id = get(msg, "id");
    let res = with_open_file(|f, x| {
        settle(f, x)?;
        Ok(object([
            ("at", num(x.cur.at)),
            ("overview", contents::show::show(&x.cur.db).into()),
        ]))
    });
    match res {
        Ok(v) => reply("contents-overview", id, v),
        Err(e) => error_reply("contents-overview", id, e),
    }
}

/// Reads the byte ranges `spans` (offset, length) of file `f` back: a
/// plain file by slicing its `Blob`, a file inside an archive by
/// unpacking it again up to the last span.
fn read_spans(f: &Loaded, spans: &[(u64, u64)]) -> Result<HashMap<u64, Vec<u8>>, String> {
    let mut out: HashMap<u64, Vec<u8>> = HashMap::new();
    if f.input_name == f.name {
        for &(off, len) in spans {
            out.insert(off, read_blob(&f.input, off as f64, (off + len) as f64)?);
        }
        return Ok(out);
    }
    let end = spans.iter().map(|(o, l)| o + l).max().unwrap_or(0);
    let mut pos = 0u64;
    stream_file(f, &mut |chunk: &[u8]| {
        let (a, b) = (pos, pos + chunk.len() as u64);
        for &(off, len) in spans {
            let (s, e) = (off.max(a), (off + len).min(b));
            if s < e {
                out.entry(off)
                    .or_default()
                    .extend_from_slice(&chunk[(s - a) as usize..(e - a) as usize]);
            }
        }
        pos = b;
        pos >= end
    })?;
    Ok(out)
}

/// `contents-history {id, uuid}`: every entry that changed the row
/// (`contents::history` over the records the load pass's index names,
/// read back by offset); the JSON of `ovsdb-scope history --json`.
pub fn history(msg: &JsValue) {
    let id = get(msg, "id");
    let uuid = get(msg, "uuid").as_string().unwrap_or_default();
    let started = now();
    let res = with_open_file(|f, x| {
        let u = Uuid::parse(&uuid).ok_or_else(|| format!("{uuid:?} is not a UUID"))?;
        let spans: Vec<(u64, u64)> = x
            .log
            .history
            .entries_for(&u)
            .iter()
            .map(|&p| {
                let (off, len, _) = Log::record_span(&x.log.entries[p as usize]);
                (off, len)
            })
            .collect();
        let records = read_spans(f, &spans)?;
        let items = contents::history::history_with(&x.log, &u, |e| {
            let (off, _, body) = Log::record_span(e);
            records
                .get(&off)
                .and_then(|r| r.get(body..body + e.body_len))
        })
        .map_err(|e| e.to_string())?;
        let v = contents::history::history_json(&u, &items);
        Ok(with(v, [("ms", Json::Real(now() - started))]))
    });
    match res {
        Ok(v) => reply("contents-history", id, v),
        Err(e) => error_reply("contents-history", id, e),
    }
}

/// `contents-sizes {id}`: where the file's bytes go
/// (`contents::sizes`, the JSON of `ovsdb-scope sizes --json` for one
/// file), the compaction what-if at the open position. The first request
/// walks the file twice (a replay for each entry's full and diff sizes,
/// then the breakdowns); later ones reuse the report.
pub fn sizes(msg: &JsValue) {
    let id = get(msg, "id");
    let started = now();
    let res = with_open_file(|f, x| {
        settle(f, x)?;
        if x.sizes.is_none() {
            let mut d = DatabaseAt::new(ovsdb_log::Upto::All);
            replay_walks(f, &mut d)?;
            let replay = d.into_replay().ok_or("the replay did not end")?;
            let mut st = contents::stream::SizesStream::new(&x.log, &replay);
            drop(replay);
            let log = &x.log;
            let mut scan = LogScan::new(ovsdb_log::ScanOptions::default());
            stream_file(f, &mut |chunk: &[u8]| {
                st.chunk(chunk);
                let mut cb = |ev: Event<'_>| {
                    st.on_event(log, &ev);
                    Verdict::Keep
                };
                scan.push(chunk, &mut cb);
                false
            })?;
            scan.finish(&mut |ev: Event<'_>| {
                st.on_event(log, &ev);
                Verdict::Keep
            });
            let len = st.bytes();
            x.sizes = Some((st.finish(), len));
        }
        let (rep, len) = x.sizes.as_ref().unwrap();
        let mut rep = rep.clone();
        rep.compaction = contents::sizes::compaction_of(&x.log, &x.cur.db, Some(x.cur.at), *len);
        let v = contents::sizes::sizes_json(&rep, None);
        Ok(with(
            v,
            [("ms", Json::Real(now() - started)), ("at", num(x.cur.at))],
        ))
    });
    match res {
        Ok(v) => reply("contents-sizes", id, v),
        Err(e) => error_reply("contents-sizes", id, e),
    }
    super::note_memory();
}

/// `contents-diff {id, from}`: rows added, removed and changed per table
/// from the database at index `from` to the one open (`contents::diff`,
/// the JSON of `ovsdb-scope diff --from FROM --to AT --json`, plus
/// `from`, `to`, `ms`).
pub fn diff(msg: &JsValue) {
    let id = get(msg, "id");
    let from = get(msg, "from").as_f64().unwrap_or(0.0).max(0.0) as u64;
    let started = now();
    let res = with_open_file(|f, x| {
        settle(f, x)?;
        let from = from.clamp(x.range.first, x.range.last.max(x.range.first));
        if x.cur.at != from && x.prev.as_ref().is_none_or(|p| p.at != from) {
            let d = DatabaseAt::from_checkpoints_near(x.checkpoints.as_deref(), from, x.landings());
            let d = database_at(f, d, from)?;
            x.prev = Some(d);
        }
        let old = if x.cur.at == from {
            &x.cur.db
        } else {
            &x.prev.as_ref().unwrap().db
        };
        let d = contents::diff::diff(old, &x.cur.db);
        let v = contents::diff::diff_json(&d);
        Ok(with(
            v,
            [
                ("from", num(from)),
                ("to", num(x.cur.at)),
                ("ms", Json::Real(now() - started)),
            ],
        ))
    });
    match res {
        Ok(v) => reply("contents-diff", id, v),
        Err(e) => error_reply("contents-diff", id, e),
    }
}
