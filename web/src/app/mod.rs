//! The explorer page: load files (picker, drag and drop, bundled samples),
//! parse them in a Web Worker, draw the timeline, inspect entries, switch the
//! storage mode, see the cluster, export, share the view in the URL hash.

use std::rc::Rc;

use js_sys::{Array, Object, Reflect};
use timeline::{
    EntryDetail, Hit, Lane, LaneIndex, Layout, MarkerKind, SizeView, Timeline, Viewport,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{
    Blob, DragEvent, HtmlCanvasElement, HtmlElement, HtmlInputElement, HtmlSelectElement,
    KeyboardEvent, MessageEvent, MouseEvent, WheelEvent, Worker,
};
use yew::prelude::*;

use crate::draw::{self, human_bytes, short_sid, LogTrack};
use crate::evidence_view::DiagView;
use crate::files::{self, Named};
use crate::hash::{self, HashState};
use crate::samples;
use timeline::axis::{Axis, AxisMode};
use timeline::time::utc_datetime;

mod evidence_ui;
use crate::inspector::{folded, Changes, Detail};
use evidence_ui::{LogFilter, LogPanel};

/// The worker bin, built by trunk with a loader shim (see index.html).
const WORKER_URL: &str = "./worker_loader.js";

/// Cores from which a load starts a second worker for its cluster check.
/// Alone, the check repeats the framing, SHA-1 and skimming that it shares
/// with the load's walk: natively on three 300 MB files the check adds
/// 1.4 s to a 7.4 s walk, but takes 4.0 s alone. Two workers then finish in
/// 7.4 s instead of 8.8 s when each has a core to itself, and later when
/// they share two cores with anything else (BENCHMARKS.md, "A second
/// worker for the check").
const CHECK_WORKER_CORES: f64 = 3.0;

pub enum Msg {
    /// The URL's hash was changed by hand.
    HashChanged,
    /// Write the view's pan and zoom into the URL's hash (see
    /// [`App::update_view_hash`]).
    WriteViewHash,
    PickFiles(Vec<Named>),
    /// Dropped files and folders, still to be walked.
    Dropped(Vec<files::Dropped>),
    PickSample(String),
    Blobs {
        generation: u32,
        names: Vec<String>,
        blobs: Vec<Blob>,
        sample: Option<String>,
    },
    ReadFailed(String),
    Worker(JsValue),
    WorkerFailed(String),
    /// A message of the second worker, the one that checks the cluster.
    CheckWorker(JsValue),
    CheckWorkerFailed(String),
    Cancel,
    SetMode(SizeView),
    /// Log-index or wall-time x axis.
    SetAxis(AxisMode),
    /// Show / hide each server's last cluster/status on its lane.
    ToggleLaneStatus,
    Zoom {
        factor: f64,
        anchor: f64,
    },
    Pan(f64),
    Reset,
    PointerMove {
        x: f64,
        y: f64,
        buttons: u16,
    },
    PointerDown {
        x: f64,
    },
    PointerUp {
        x: f64,
        y: f64,
    },
    PointerLeave,
    Key(KeyboardEvent),
    ToggleHelp,
    /// Keep the opened files in this browser (opt-in).
    SetKeep(bool),
    /// What is kept in this browser (None: nothing).
    Kept(Option<crate::store::Meta>),
    /// Reopen the files kept in this browser.
    ReopenKept,
    ForgetKept,
    ExportPng,
    ExportJson,
    Resize,
    Dragging(bool),
    /// Select finding `i` (in the core's order): move the timeline there and
    /// open the log at its first evidence line.
    Finding(usize),
    /// Select the next (+1) or previous (-1) finding in time order.
    StepFinding(i32),
    ToggleLog,
    LogFilter(LogFilter),
    LogScroll(f64),
    /// Show the Contents page (true) or the timeline.
    ShowContents(bool),
    /// The Contents page moved to this file and index.
    ContentsPos(usize, Option<u64>),
}

struct Progress {
    done: f64,
    total: f64,
    label: String,
}

struct Tooltip {
    x: f64,
    y: f64,
    text: String,
}

/// The second worker of a load: it runs the cluster check of the same
/// files (`check` message) while the first one loads them without it
/// (`check: false`), one worker per core (from `CHECK_WORKER_CORES` on).
struct CheckRun {
    worker: Worker,
    listeners: Vec<gloo_events::EventListener>,
    /// The request, sent once the worker says it is ready.
    request: Option<Object>,
    /// The check's result when it came before the load's end.
    result: Option<timeline::CheckResult>,
    /// The load's timeline and diagnosis when they came before the check
    /// (shown with it: the page keeps its preview meanwhile).
    loaded: Option<(Timeline, DiagView)>,
}

impl Drop for CheckRun {
    fn drop(&mut self) {
        // Listeners first: queued events must not reach dropped closures.
        self.listeners.clear();
        self.worker.terminate();
    }
}

pub struct App {
    worker: Option<Worker>,
    /// The check worker of the load under way (see [`CheckRun`]).
    check_run: Option<CheckRun>,
    /// How long the last load's check took in its own worker (ms), and
    /// whether the last load had one.
    check_ms: Option<f64>,
    /// `workers=N` in the URL (1: no check worker, 2: one), else chosen
    /// by the number of cores.
    workers: Option<u8>,
    /// The parser worker's message and error listeners.
    worker_listeners: Vec<gloo_events::EventListener>,
    /// Window and canvas listeners (removed when dropped).
    listeners: Vec<gloo_events::EventListener>,
    /// The timeline is drawn by plotters (`#renderer=plotters`), for the
    /// frame-time comparison in BENCHMARKS.md.
    plotters: bool,
    /// The timeline canvas's wheel listener, on the canvas it was added to.
    wheel: Option<(HtmlCanvasElement, gloo_events::EventListener)>,
    progress: Option<Progress>,
    timeline: Option<Rc<Timeline>>,
    /// Compact per-lane arrays for drawing, built once per load.
    lane_index: Rc<Vec<LaneIndex>>,
    vp: Viewport,
    mode: SizeView,
    sample: Option<String>,
    error: Option<String>,
    notice: Option<String>,
    tooltip: Option<Tooltip>,
    selected: Option<(usize, usize)>,
    detail: Option<Rc<EntryDetail>>,
    help: bool,
    dragging: bool,
    canvas: NodeRef,
    plot: NodeRef,
    width: f64,
    drag_from: Option<f64>,
    dragged: bool,
    pending_view: Option<HashState>,
    /// When the URL's hash was last written (ms), and the write of the
    /// view's pan and zoom waiting for its turn.
    hash_written: f64,
    view_hash: Option<gloo_render::AnimationFrame>,
    dirty: bool,
    load_started: f64,
    first_frame: bool,
    /// The timeline shown is a preview of a load under way (no check, no
    /// diagnosis yet; the summary and panels wait for the end).
    previewing: bool,
    /// When the first frame of the load under way (preview or not) was
    /// drawn, in ms since the load started.
    first_frame_ms: Option<f64>,
    /// Whether opened files are kept in this browser, and what is kept.
    keep: bool,
    kept: Option<crate::store::Meta>,
    /// The load request waiting for the worker to say it is ready (messages
    /// sent before its wasm is initialized would be lost).
    pending_load: Option<Object>,
    /// Time the worker spent building the model, and the page decoding it.
    parse_ms: f64,
    decode_ms: f64,
    /// Bumped by every load request, so a slower earlier one (say the
    /// default sample still being fetched) cannot replace a newer one.
    generation: u32,
    /// The operator evidence of the last load (inputs, servers, findings).
    diag: Option<Rc<DiagView>>,
    /// Each server's memory over time, from the diagnosis.
    memory: Rc<Vec<crate::charts::MemoryLine>>,
    /// Findings in time order (indexes into `diag.findings`).
    finding_order: Rc<Vec<usize>>,
    selected_finding: Option<usize>,
    /// One log track per server with a log, drawn under the lanes.
    tracks: Rc<Vec<LogTrack>>,
    /// Positions of everything on the x axis (log index or wall time).
    axis: Axis,
    /// The axis asked for (the time axis needs a dated entry).
    axis_mode: AxisMode,
    /// The term of the hovered band or log election event: its bands,
    /// election events and findings are highlighted.
    hover_term: Option<u64>,
    /// Whether the servers' last cluster/status boxes are on their lanes.
    lane_status: bool,
    log: LogPanel,
    log_scroll: NodeRef,
    /// Index and time of the selected finding (drawn as a cursor).
    focus: Option<(Option<u64>, Option<i64>)>,
    /// The Contents page is shown instead of the timeline, on this lane's
    /// file at this index (None: the last committed entry).
    contents: bool,
    contents_lane: usize,
    contents_at: Option<u64>,
    /// Bumped by every finished load: the Contents page opens its file
    /// again only then (the worker has the new files).
    loads: u32,
}

/// The shortest time between two writes of the view into the URL's hash
/// while panning and zooming (ms).
const VIEW_HASH_MS: f64 = 150.0;

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

fn js_get(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

impl App {
    fn load_sample(&mut self, ctx: &Context<Self>, name: String) {
        let Some(files) = samples::files(&name) else {
            self.error = Some(format!("There is no bundled sample called \"{name}\"."));
            return;
        };
        let generation = self.begin_load(format!("Fetching sample {name}…"), 0.0);
        let link = ctx.link().clone();
        wasm_bindgen_futures::spawn_local(async move {
            let mut names = Vec::new();
            let mut blobs = Vec::new();
            for f in files {
                match files::fetch_blob(samples::url(&name, f)).await {
                    Ok(b) => {
                        names.push(f.to_string());
                        blobs.push(b);
                    }
                    Err(e) => {
                        link.send_message(Msg::ReadFailed(e));
                        return;
                    }
                }
            }
            link.send_message(Msg::Blobs {
                generation,
                names,
                blobs,
                sample: Some(name),
            });
        });
    }

    /// Starts a new load: stops the one under way and shows `label` with
    /// `total` bytes to read. Returns the generation its buffers carry.
    fn begin_load(&mut self, label: String, total: f64) -> u32 {
        self.stop_worker();
        self.progress = Some(Progress {
            done: 0.0,
            total,
            label,
        });
        self.load_started = now();
        self.first_frame_ms = None;
        self.generation += 1;
        self.generation
    }

    fn stop_worker(&mut self) {
        if let Some(w) = self.worker.take() {
            // Detach the handlers first: events already queued for this
            // worker must not reach closures that are about to be dropped.
            self.worker_listeners.clear();
            w.terminate();
        }
        self.worker_listeners.clear();
        self.pending_load = None;
        self.check_run = None;
    }

    /// Starts the check worker for `names`/`blobs`; false when the page
    /// has one core (or `workers=1`), or the worker cannot start: the load
    /// then checks in its own walk.
    fn start_check(&mut self, ctx: &Context<Self>, names: &Array, blobs: &Array) -> bool {
        let cores = web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency());
        let two = match self.workers {
            Some(n) => n == 2,
            None => cores >= CHECK_WORKER_CORES,
        };
        if !two {
            return false;
        }
        let Ok(w) = Worker::new(WORKER_URL) else {
            return false;
        };
        let link = ctx.link().clone();
        let onmessage = gloo_events::EventListener::new(&w, "message", move |ev| {
            let ev: &MessageEvent = ev.unchecked_ref();
            link.send_message(Msg::CheckWorker(ev.data()));
        });
        let link = ctx.link().clone();
        let onerror = gloo_events::EventListener::new(&w, "error", move |_| {
            link.send_message(Msg::CheckWorkerFailed("it could not start".into()));
        });
        let listeners = vec![onmessage, onerror];
        let msg = Object::new();
        let _ = Reflect::set(&msg, &"type".into(), &"check".into());
        let _ = Reflect::set(&msg, &"names".into(), names);
        let _ = Reflect::set(&msg, &"files".into(), blobs);
        self.check_run = Some(CheckRun {
            worker: w,
            listeners,
            request: Some(msg),
            result: None,
            loaded: None,
        });
        true
    }

    /// The check worker's result: on the load's timeline if that is
    /// waiting for it (then shown), else kept for it.
    fn on_check_result(&mut self, r: timeline::CheckResult) -> bool {
        let Some(c) = self.check_run.as_mut() else {
            return false;
        };
        let Some((mut t, d)) = c.loaded.take() else {
            c.result = Some(r);
            return false;
        };
        self.check_run = None;
        self.progress = None;
        t.apply_check(r);
        self.set_timeline(t);
        self.set_diagnosis(d);
        true
    }

    fn on_check_worker(&mut self, data: JsValue) -> bool {
        match js_get(&data, "type").as_string().as_deref() {
            Some("ready") => {
                let c = self.check_run.as_mut();
                if let Some((w, msg)) = c.and_then(|c| Some((c.worker.clone(), c.request.take()?)))
                {
                    if w.post_message(&msg).is_err() {
                        return self.check_failed("the files could not be handed to it".into());
                    }
                }
                false
            }
            Some("checked") => {
                self.check_ms = js_get(&data, "ms").as_f64();
                match crate::msg::from_bytes::<timeline::CheckResult>(&js_get(&data, "result")) {
                    Ok(r) => self.on_check_result(r),
                    Err(e) => self.check_failed(format!("its answer could not be read: {e}")),
                }
            }
            Some("panic") | Some("error") => {
                self.check_failed(js_get(&data, "message").as_string().unwrap_or_default())
            }
            _ => false,
        }
    }

    /// The check worker stopped: the check says so instead of running on.
    fn check_failed(&mut self, why: String) -> bool {
        self.on_check_result(timeline::CheckResult {
            problems: vec!["check: the checking worker stopped: ".to_string() + &why],
            ..Default::default()
        })
    }

    fn start_worker(&mut self, ctx: &Context<Self>) -> Result<Worker, String> {
        self.stop_worker();
        let w = Worker::new(WORKER_URL)
            .map_err(|e| format!("cannot start the parser worker: {e:?}"))?;
        let link = ctx.link().clone();
        let onmessage = gloo_events::EventListener::new(&w, "message", move |ev| {
            let ev: &MessageEvent = ev.unchecked_ref();
            link.send_message(Msg::Worker(ev.data()));
        });
        let link = ctx.link().clone();
        let onerror = gloo_events::EventListener::new(&w, "error", move |ev| {
            let msg = js_get(ev, "message")
                .as_string()
                .unwrap_or_else(|| "unknown error".into());
            link.send_message(Msg::WorkerFailed(msg));
        });
        self.worker_listeners = vec![onmessage, onerror];
        self.worker = Some(w.clone());
        Ok(w)
    }

    fn send_load(&mut self, ctx: &Context<Self>, names: Vec<String>, blobs: Vec<Blob>) {
        let total: f64 = blobs.iter().map(|b| b.size()).sum();
        self.progress = Some(Progress {
            done: 0.0,
            total,
            label: format!("Reading {}…", short_list(&names)),
        });
        let w = match self.start_worker(ctx) {
            Ok(w) => w,
            Err(e) => {
                self.progress = None;
                self.error = Some(e);
                return;
            }
        };
        let msg = Object::new();
        let names_js: Array = names.iter().map(|n| JsValue::from_str(n)).collect();
        // Blobs (Files) are structured-cloned by reference: the worker reads
        // their bytes itself, in chunks.
        let blobs_js: Array = blobs.iter().cloned().map(JsValue::from).collect();
        let _ = Reflect::set(&msg, &"type".into(), &"load".into());
        let _ = Reflect::set(&msg, &"names".into(), &names_js);
        let _ = Reflect::set(&msg, &"files".into(), &blobs_js);
        let _ = w;
        self.check_ms = None;
        if self.start_check(ctx, &names_js, &blobs_js) {
            let _ = Reflect::set(&msg, &"check".into(), &false.into());
        }
        self.pending_load = Some(msg);
    }

    fn flush_load(&mut self) {
        let (Some(w), Some(msg)) = (&self.worker, self.pending_load.take()) else {
            return;
        };
        if let Err(e) = w.post_message(&msg) {
            self.progress = None;
            self.error = Some(format!("cannot hand the files to the worker: {e:?}"));
        }
    }

    fn on_worker(&mut self, data: JsValue) -> bool {
        match js_get(&data, "type").as_string().as_deref() {
            Some("ready") => {
                self.flush_load();
                false
            }
            Some("progress") => {
                if let Some(p) = &mut self.progress {
                    p.done = js_get(&data, "done").as_f64().unwrap_or(0.0);
                    p.total = js_get(&data, "total").as_f64().unwrap_or(p.total);
                    if js_get(&data, "phase").as_string().as_deref() == Some("parse")
                        && p.label.starts_with("Reading")
                    {
                        p.label = p.label.replacen("Reading", "Parsing", 1);
                    }
                }
                true
            }
            Some("preview") => {
                // A preview that comes after the end (or after a cancel)
                // is stale.
                if self.progress.is_none() {
                    return false;
                }
                match timeline_of(&data) {
                    Ok(t) => self.set_preview(t),
                    Err(_) => false,
                }
            }
            Some("done") => {
                self.progress = None;
                self.loads += 1;
                self.parse_ms = js_get(&data, "parseMs").as_f64().unwrap_or(0.0);
                let t0 = now();
                let parsed = timeline_of(&data);
                let diag = crate::msg::from_bytes::<DiagView>(&js_get(&data, "diagnosis"));
                self.decode_ms = now() - t0;
                match (parsed, diag) {
                    (Ok(mut t), Ok(d)) => match self.check_run.as_mut() {
                        // The check is still running: the preview stays
                        // until it is done.
                        Some(c) if c.result.is_none() => {
                            c.loaded = Some((t, d));
                            self.progress = Some(Progress {
                                done: 1.0,
                                total: 1.0,
                                label: "Checking the cluster…".into(),
                            });
                        }
                        c => {
                            if let Some(r) = c.and_then(|c| c.result.take()) {
                                t.apply_check(r);
                            }
                            self.check_run = None;
                            self.set_timeline(t);
                            self.set_diagnosis(d);
                        }
                    },
                    (Err(e), _) | (_, Err(e)) => {
                        self.error =
                            Some(format!("internal error reading the worker's answer: {e}"))
                    }
                }
                true
            }
            Some("log-result") => self.on_log_result(&data),
            Some("log-lines") => self.on_log_lines(&data),
            Some("detail") => {
                self.detail = crate::msg::from_bytes(&js_get(&data, "detail"))
                    .ok()
                    .map(Rc::new);
                true
            }
            Some("panic") | Some("error") => {
                self.progress = None;
                self.error = Some(format!(
                    "The parser stopped with an internal error: {}. The page still works; try another file.",
                    js_get(&data, "message").as_string().unwrap_or_default()
                ));
                true
            }
            _ => false,
        }
    }

    /// Shows the timeline so far of a load under way: the lanes with
    /// records, fitted to the view, without touching the URL's view state
    /// (the final timeline applies it).
    fn set_preview(&mut self, mut t: Timeline) -> bool {
        t.lanes.retain(|l| l.summary.records > 0);
        if t.lanes.is_empty() {
            return false;
        }
        self.axis = Axis::new(&t, self.axis_mode, None);
        self.vp = self.axis.viewport();
        self.show_timeline(t);
        self.previewing = true;
        true
    }

    /// Makes `t` the timeline drawn (its axis already set): a new lane
    /// index, nothing selected.
    fn show_timeline(&mut self, t: Timeline) {
        self.lane_index = Rc::new(t.lanes.iter().map(LaneIndex::new).collect());
        self.timeline = Some(Rc::new(t));
        self.selected = None;
        self.detail = None;
        self.tooltip = None;
        self.dirty = true;
    }

    fn set_timeline(&mut self, t: Timeline) {
        self.previewing = false;
        let bad: Vec<&Lane> = t.lanes.iter().filter(|l| l.summary.records == 0).collect();
        self.error = if bad.is_empty() {
            None
        } else {
            Some(
                bad.iter()
                    .map(|l| {
                        let why = l.truncated.as_ref().map(|tr| format!(" ({})", tr.reason)).unwrap_or_default();
                        format!(
                            "{} is not an OVSDB database file: it does not start with a valid \"OVSDB JSON\" or \"OVSDB CLUSTER\" record{why}.",
                            l.name
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        };
        let good: Vec<Lane> = t
            .lanes
            .iter()
            .filter(|l| l.summary.records > 0)
            .cloned()
            .collect();
        if good.is_empty() {
            self.timeline = None;
            return;
        }
        let t = if good.len() == t.lanes.len() {
            t
        } else {
            Timeline { lanes: good, ..t }
        };
        let pending = self.pending_view.take();
        if let Some(a) = pending.as_ref().and_then(|h| h.axis) {
            self.axis_mode = a;
        }
        self.axis = Axis::new(&t, self.axis_mode, None);
        self.vp = self.axis.viewport();
        if let Some(h) = &pending {
            if let Some(m) = h.mode {
                self.mode = m;
            }
            if let Some(z) = h.zoom {
                self.vp
                    .set_zoom_level(z, h.center.unwrap_or(self.vp.center()));
            }
        }
        self.show_timeline(t);
        self.first_frame = true;
        // A link's inspector entry: the lane's last entry with that index
        // (the one that survived, when an index was written twice).
        if let Some((li, index)) = pending.as_ref().and_then(|h| h.entry) {
            let found = self.timeline.as_ref().and_then(|t| {
                t.lanes
                    .get(li)?
                    .entries
                    .iter()
                    .rposition(|e| e.index == index)
            });
            match found {
                Some(ei) => self.inspect(li, ei),
                None => {
                    self.notice = Some(format!(
                    "The link asks for index {index} of file {li}, which these files do not have."
                ))
                }
            }
        }
        self.update_hash();
    }

    /// Rebuilds the axis (new log range, new markers, another mode),
    /// keeping the visible range.
    fn rebuild_axis(&mut self) {
        let Some(t) = &self.timeline else { return };
        let ax = Axis::new(t, self.axis_mode, self.log_span());
        self.vp = if ax.mode == self.axis.mode {
            ax.rebound(&self.vp)
        } else {
            ax.convert(&self.axis, &self.vp)
        };
        self.axis = ax;
        self.dirty = true;
    }

    fn set_axis(&mut self, mode: AxisMode) -> bool {
        let Some(t) = &self.timeline else {
            return false;
        };
        if mode == AxisMode::Time && !Axis::has_time(t) {
            self.notice =
                Some("No entry of these files has a date (_date): the time axis needs one.".into());
            return true;
        }
        self.axis_mode = mode;
        self.rebuild_axis();
        self.tooltip = None;
        self.update_hash();
        true
    }

    /// The URL's hash after a pan or zoom: written at once when the last
    /// write is older than [`VIEW_HASH_MS`], else at the first animation
    /// frame after that time.
    /// Holding an arrow key pans 30 times a second, and each
    /// `history.replaceState` costs a few ms; Chromium also ignores them
    /// past a few hundred in 10 s.
    fn update_view_hash(&mut self, ctx: &Context<Self>) {
        if self.view_hash.is_some() {
            return;
        }
        if now() - self.hash_written >= VIEW_HASH_MS {
            self.update_hash();
            return;
        }
        // Asked again at the next frames until the time is up.
        let link = ctx.link().clone();
        self.view_hash = Some(gloo_render::request_animation_frame(move |_| {
            link.send_message(Msg::WriteViewHash)
        }));
    }

    fn update_hash(&mut self) {
        self.hash_written = now();
        let state = HashState {
            sample: self.sample.clone(),
            mode: Some(self.mode),
            axis: (self.axis.mode == AxisMode::Time).then_some(AxisMode::Time),
            zoom: Some(self.vp.zoom_level()),
            center: Some(self.vp.center()),
            contents: self.contents,
            lane: self.contents.then_some(self.contents_lane),
            contents_at: self.contents.then_some(self.contents_at).flatten(),
            plotters: self.plotters,
            workers: self.workers,
            entry: self.selected.and_then(|(li, ei)| {
                let t = self.timeline.as_ref()?;
                Some((li, t.lanes.get(li)?.entries.get(ei)?.index))
            }),
        };
        if let Some(w) = web_sys::window() {
            if let Ok(h) = w.history() {
                let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&hash::format(&state)));
            }
        }
    }

    fn layout(&self) -> Layout {
        Layout::new(self.width.max(320.0))
    }

    fn canvas_point(&self, x: f64, y: f64) -> (f64, f64) {
        (x, y)
    }

    fn canvas_height(&self, lanes: usize) -> f64 {
        draw::height_with_tracks(&self.layout(), lanes, self.tracks.len())
    }

    fn hit(&self, x: f64, y: f64) -> Option<Hit> {
        let t = self.timeline.as_ref()?;
        let (x, y) = self.canvas_point(x, y);
        self.axis.hit(t, &self.layout(), &self.vp, self.mode, x, y)
    }

    fn tooltip_text(&self, hit: Hit) -> Option<String> {
        let t = self.timeline.as_ref()?;
        match hit {
            Hit::Entry { lane, entry } => {
                let l = t.lanes.get(lane)?;
                let e = l.entries.get(entry)?;
                let mut s = if l.clustered {
                    format!("{} · index {} · term {}", l.name, e.index, e.term)
                } else {
                    format!("{} · transaction {}", l.name, e.index)
                };
                if !e.has_data {
                    s.push_str("\nRaft-internal entry (no data)");
                }
                if e.superseded {
                    s.push_str("\nreplaced by a later entry");
                }
                if let Some(c) = &e.comment {
                    s.push_str(&format!("\n“{c}”"));
                }
                if let Some(d) = e.date_ms {
                    s.push_str(&format!("\n{} UTC", utc_datetime(d)));
                }
                s.push_str(&format!(
                    "\n{} tables, {} rows · {} {}",
                    e.tables,
                    e.rows,
                    e.sizes
                        .get(self.mode)
                        .map_or("size not computed".to_string(), |b| human_bytes(b as f64)),
                    self.mode.label()
                ));
                Some(s)
            }
            Hit::Band { lane, band } => {
                let b = t.lanes.get(lane)?.bands.get(band)?;
                let mut s = format!("term {} (indexes {}–{})", b.term, b.start, b.end);
                if self.axis.mode == AxisMode::Time {
                    if let Some(&(p0, p1)) =
                        self.axis.lanes.get(lane).and_then(|a| a.bands.get(band))
                    {
                        s.push_str(&format!(
                            "\n{} – {} UTC",
                            utc_datetime(p0.round() as i64),
                            utc_datetime(p1.round() as i64)
                        ));
                    }
                }
                if let Some(l) = &b.leader {
                    s.push_str(&format!("\nleader {l}"));
                }
                if let Some(v) = &b.vote {
                    s.push_str(&format!("\nvoted for {v}"));
                }
                Some(s)
            }
        }
    }

    fn inspect(&mut self, lane: usize, entry: usize) {
        let Some(t) = &self.timeline else { return };
        let Some(e) = t.lanes.get(lane).and_then(|l| l.entries.get(entry)) else {
            return;
        };
        self.selected = Some((lane, entry));
        self.detail = None;
        if let Some(w) = &self.worker {
            let msg = Object::new();
            let _ = Reflect::set(&msg, &"type".into(), &"inspect".into());
            let _ = Reflect::set(&msg, &"lane".into(), &(lane as f64).into());
            if let Some(l) = t.lanes.get(lane) {
                let _ = Reflect::set(&msg, &"name".into(), &l.name.as_str().into());
            }
            let _ = Reflect::set(&msg, &"record".into(), &(e.record as f64).into());
            let _ = Reflect::set(&msg, &"offset".into(), &(e.offset as f64).into());
            let _ = w.post_message(&msg);
        }
        self.update_hash();
    }

    fn download(&self, href: &str, name: &str) {
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        if let Ok(a) = doc.create_element("a") {
            let _ = a.set_attribute("href", href);
            let _ = a.set_attribute("download", name);
            if let Ok(a) = a.dyn_into::<HtmlElement>() {
                a.click();
            }
        }
    }

    fn export_png(&self) {
        if let Some(c) = self.canvas.cast::<HtmlCanvasElement>() {
            if let Ok(url) = c.to_data_url_with_type("image/png") {
                self.download(&url, "ovsdb-scope-timeline.png");
            }
        }
    }

    fn export_json(&self) {
        let Some(t) = &self.timeline else { return };
        let parts = Array::of1(&JsValue::from_str(&t.cluster.inspect_json));
        let opts = web_sys::BlobPropertyBag::new();
        opts.set_type("application/json");
        if let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) {
            if let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) {
                self.download(&url, "ovsdb-scope-inspect.json");
                let _ = web_sys::Url::revoke_object_url(&url);
            }
        }
    }

    fn measure_width(&mut self) -> bool {
        let w = self
            .plot
            .cast::<HtmlElement>()
            .map_or(1000.0, |e| e.client_width() as f64);
        if (w - self.width).abs() > 0.5 && w > 0.0 {
            self.width = w;
            self.dirty = true;
            return true;
        }
        false
    }

    fn redraw(&mut self) {
        let (Some(t), Some(canvas)) = (&self.timeline, self.canvas.cast::<HtmlCanvasElement>())
        else {
            return;
        };
        let layout = self.layout();
        let ratio = web_sys::window()
            .map_or(1.0, |w| w.device_pixel_ratio())
            .max(1.0);
        let h = self.canvas_height(t.lanes.len());
        let (pw, ph) = ((layout.width * ratio) as u32, (h * ratio) as u32);
        if canvas.width() != pw {
            canvas.set_width(pw);
        }
        if canvas.height() != ph {
            canvas.set_height(ph);
        }
        let _ = canvas.set_attribute("style", &format!("width:{}px;height:{}px", layout.width, h));
        let Some(ctx) = canvas
            .get_context("2d")
            .ok()
            .flatten()
            .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
        else {
            return;
        };
        let t0 = now();
        let scene = draw::Scene {
            t,
            index: &self.lane_index,
            ax: &self.axis,
            vp: &self.vp,
            layout: &layout,
            mode: self.mode,
            highlight: self.hover_term,
        };
        let drawn = if self.plotters {
            // The measurement variant (`#renderer=plotters`): lanes only.
            let _ = ctx.set_transform(1.0, 0.0, 0.0, 1.0, 0.0, 0.0);
            if let Err(e) = crate::timeline_plotters::draw(&canvas, &scene) {
                web_sys::console::warn_1(&format!("plotters timeline: {e}").into());
            }
            draw::Drawn::default()
        } else {
            draw::draw(&ctx, &scene, ratio)
        };
        let lit = draw::draw_tracks(
            &ctx,
            &self.tracks,
            &self.axis,
            &self.vp,
            &layout,
            t.lanes.len(),
            self.hover_term,
        );
        let focus_pos = self.focus.and_then(|(i, ms)| self.axis.place(i, ms));
        if let Some(p) = focus_pos {
            let x = layout.gutter + self.vp.x_of(p, layout.plot_width());
            if x >= layout.gutter {
                ctx.set_stroke_style_str("rgba(220,38,38,0.8)");
                ctx.set_line_width(2.0);
                ctx.begin_path();
                ctx.move_to(x, layout.axis - 2.0);
                ctx.line_to(x, h);
                ctx.stroke();
                ctx.set_line_width(1.0);
            }
        }
        let ms = now() - t0;
        let _ = canvas.set_attribute("data-frame-ms", &format!("{ms:.2}"));
        let _ = canvas.set_attribute("data-zoom", &format!("{:.4}", self.vp.zoom_level()));
        let _ = canvas.set_attribute(
            "data-view",
            &format!("{:.2},{:.2}", self.vp.start, self.vp.end),
        );
        if self.first_frame_ms.is_none() {
            let ms = now() - self.load_started;
            self.first_frame_ms = Some(ms);
            let _ = canvas.set_attribute("data-first-frame-ms", &format!("{ms:.1}"));
        }
        let _ = canvas.set_attribute(
            "data-preview",
            if self.previewing { "true" } else { "false" },
        );
        let _ = canvas.set_attribute(
            "data-entries",
            &t.lanes
                .iter()
                .map(|l| l.entries.len())
                .sum::<usize>()
                .to_string(),
        );
        if self.first_frame && !self.previewing {
            self.first_frame = false;
            let _ =
                canvas.set_attribute("data-load-ms", &format!("{:.1}", now() - self.load_started));
            let _ = canvas.set_attribute("data-parse-ms", &format!("{:.1}", self.parse_ms));
            let _ = canvas.set_attribute("data-decode-ms", &format!("{:.1}", self.decode_ms));
        }
        let _ = canvas.set_attribute("data-tracks", &self.tracks.len().to_string());
        let _ = canvas.set_attribute(
            "data-marks",
            &self
                .tracks
                .iter()
                .map(|t| t.marks.len() + t.spans.len())
                .sum::<usize>()
                .to_string(),
        );
        let _ = canvas.set_attribute(
            "data-focus",
            &focus_pos.map_or(String::new(), |p| format!("{p:.2}")),
        );
        let _ = canvas.set_attribute(
            "data-focus-ms",
            &focus_pos
                .and_then(|p| self.axis.time_at(p))
                .map_or(String::new(), |t| t.to_string()),
        );
        // Test hooks: the axis, its tick labels, the plot's geometry, the
        // log tracks' rows and what the hovered term highlights.
        let _ = canvas.set_attribute("data-axis", self.axis.mode.name());
        let _ = canvas.set_attribute("data-ticks", &drawn.ticks.join(","));
        let _ = canvas.set_attribute(
            "data-plot",
            &format!("{},{}", layout.gutter, layout.plot_width()),
        );
        let _ = canvas.set_attribute(
            "data-track-rows",
            &(0..self.tracks.len())
                .map(|i| format!("{:.0}", draw::track_top(&layout, t.lanes.len(), i)))
                .collect::<Vec<_>>()
                .join(","),
        );
        let _ = canvas.set_attribute(
            "data-highlight-term",
            &self.hover_term.map_or(String::new(), |t| t.to_string()),
        );
        let _ = canvas.set_attribute("data-highlight-bands", &drawn.highlighted_bands.to_string());
        let _ = canvas.set_attribute("data-highlight-marks", &lit.to_string());
        let _ = canvas.set_attribute("data-ready", if self.previewing { "false" } else { "true" });
        self.dirty = false;
    }

    fn listen_window(&mut self, ctx: &Context<Self>) {
        use gloo_events::EventListener;
        let window = gloo_utils::window();
        let link = ctx.link().clone();
        // Not passive: the key handler takes the keys it uses from the page.
        self.listeners.push(EventListener::new_with_options(
            &window,
            "keydown",
            gloo_events::EventListenerOptions::enable_prevent_default(),
            move |ev| link.send_message(Msg::Key(ev.clone().unchecked_into())),
        ));
        let link = ctx.link().clone();
        self.listeners
            .push(EventListener::new(&window, "resize", move |_| {
                link.send_message(Msg::Resize)
            }));
        // A link pasted into an open page: follow its entry.
        let link = ctx.link().clone();
        self.listeners
            .push(EventListener::new(&window, "hashchange", move |_| {
                link.send_message(Msg::HashChanged)
            }));
    }

    fn listen_wheel(&mut self, ctx: &Context<Self>) {
        use gloo_events::{EventListener, EventListenerOptions};
        // Wheel must not be passive so the page does not scroll while zooming.
        let Some(canvas) = self.canvas.cast::<HtmlCanvasElement>() else {
            return;
        };
        if self.wheel.as_ref().is_some_and(|(c, _)| *c == canvas) {
            return;
        }
        let link = ctx.link().clone();
        let gutter = Layout::new(1000.0).gutter;
        let wheel = EventListener::new_with_options(
            &canvas,
            "wheel",
            EventListenerOptions::enable_prevent_default(),
            move |ev| {
                let ev: &WheelEvent = ev.unchecked_ref();
                ev.prevent_default();
                let target: Option<HtmlElement> = ev.target().and_then(|t| t.dyn_into().ok());
                let width = target.map_or(1000.0, |t| t.client_width() as f64);
                let anchor = (ev.offset_x() as f64 - gutter) / (width - gutter).max(1.0);
                let factor = if ev.delta_y() < 0.0 { 1.25 } else { 0.8 };
                link.send_message(Msg::Zoom { factor, anchor });
            },
        );
        self.wheel = Some((canvas, wheel));
    }

    /// The URL's hash changed by hand (not by the page): open the entry it
    /// names, when it names another one.
    fn follow_hash(&mut self) -> bool {
        let h = web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .map(|h| hash::parse(&h))
            .unwrap_or_default();
        if h.plotters != self.plotters {
            self.plotters = h.plotters;
            self.dirty = true;
            return true;
        }
        let Some((li, index)) = h.entry else {
            return false;
        };
        let Some(t) = self.timeline.clone() else {
            return false;
        };
        let current = self
            .selected
            .and_then(|(l, e)| Some((l, t.lanes.get(l)?.entries.get(e)?.index)));
        if current == Some((li, index)) {
            return false;
        }
        match t
            .lanes
            .get(li)
            .and_then(|l| l.entries.iter().rposition(|e| e.index == index))
        {
            Some(ei) => self.inspect(li, ei),
            None => {
                self.notice = Some(format!(
                    "The link asks for index {index} of file {li}, which these files do not have."
                ))
            }
        }
        true
    }
}

impl Component for App {
    type Message = Msg;
    type Properties = ();

    fn create(ctx: &Context<Self>) -> Self {
        let hash_state = web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .map(|h| hash::parse(&h))
            .unwrap_or_default();
        // A bare URL opens the view last chosen; a link says its own.
        let bare = hash_state == HashState::default();
        let mut app = App {
            worker: None,
            check_run: None,
            check_ms: None,
            workers: hash_state.workers,
            worker_listeners: Vec::new(),
            listeners: Vec::new(),
            wheel: None,
            plotters: hash_state.plotters,
            progress: None,
            timeline: None,
            lane_index: Rc::new(Vec::new()),
            vp: Viewport::new(0, 1),
            mode: hash_state
                .mode
                .or_else(crate::prefs::mode)
                .unwrap_or_default(),
            sample: None,
            error: None,
            notice: None,
            tooltip: None,
            selected: None,
            detail: None,
            help: false,
            dragging: false,
            canvas: NodeRef::default(),
            plot: NodeRef::default(),
            width: 1000.0,
            drag_from: None,
            dragged: false,
            pending_view: Some(hash_state.clone()),
            hash_written: 0.0,
            view_hash: None,
            dirty: false,
            load_started: now(),
            first_frame: false,
            previewing: false,
            first_frame_ms: None,
            keep: crate::prefs::keep(),
            kept: None,
            pending_load: None,
            generation: 0,
            parse_ms: 0.0,
            decode_ms: 0.0,
            diag: None,
            memory: Rc::default(),
            finding_order: Rc::new(Vec::new()),
            selected_finding: None,
            tracks: Rc::new(Vec::new()),
            axis: Axis::default(),
            axis_mode: hash_state.axis.unwrap_or_default(),
            hover_term: None,
            lane_status: true,
            log: LogPanel::default(),
            log_scroll: NodeRef::default(),
            focus: None,
            contents: hash_state.contents || (bare && crate::prefs::contents()),
            contents_lane: hash_state.lane.unwrap_or(0),
            contents_at: hash_state.contents_at,
            loads: 0,
        };
        let sample = hash_state
            .sample
            .filter(|s| samples::files(s).is_some())
            .unwrap_or_else(|| samples::DEFAULT.to_string());
        app.listen_window(ctx);
        app.load_sample(ctx, sample);
        if app.keep {
            let link = ctx.link().clone();
            wasm_bindgen_futures::spawn_local(async move {
                link.send_message(Msg::Kept(crate::store::meta().await.ok().flatten()));
            });
        }
        // `#debug-panic` panics on purpose after the first render, so the
        // end-to-end tests can check that the panic hook reports it.
        if web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .is_some_and(|h| h.contains("debug-panic"))
        {
            wasm_bindgen_futures::spawn_local(async {
                panic!("debug-panic requested in the URL");
            });
        }
        app
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::PickFiles(files) => {
                if files.is_empty() {
                    return false;
                }
                self.error = None;
                self.notice = None;
                let generation = self.begin_load(
                    "Reading files…".to_string(),
                    files.iter().map(|f| f.1.size()).sum(),
                );
                let (names, blobs) = files.into_iter().unzip();
                <Self as Component>::update(
                    self,
                    ctx,
                    Msg::Blobs {
                        generation,
                        names,
                        blobs,
                        sample: None,
                    },
                )
            }
            Msg::Dropped(dropped) => {
                if dropped.is_empty() {
                    return false;
                }
                let link = ctx.link().clone();
                wasm_bindgen_futures::spawn_local(async move {
                    match files::walk(dropped).await {
                        Ok(f) => link.send_message(Msg::PickFiles(f)),
                        Err(e) => link.send_message(Msg::ReadFailed(format!(
                            "The browser could not read the dropped files: {e}."
                        ))),
                    }
                });
                false
            }
            Msg::PickSample(name) => {
                self.error = None;
                self.notice = None;
                self.load_sample(ctx, name);
                true
            }
            Msg::Blobs {
                generation,
                names,
                blobs,
                sample,
            } => {
                if generation != self.generation {
                    return false;
                }
                let total: f64 = blobs.iter().map(|b| b.size()).sum();
                let already_kept = self
                    .kept
                    .as_ref()
                    .is_some_and(|m| m.names == names && m.bytes == total);
                if self.keep && sample.is_none() && !already_kept {
                    let (n, b) = (names.clone(), blobs.clone());
                    let link = ctx.link().clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        let saved = match files::buffers(&b).await {
                            Ok(bufs) => crate::store::save(n, bufs).await,
                            Err(e) => Err(e),
                        };
                        match saved {
                            Ok(m) => link.send_message(Msg::Kept(Some(m))),
                            Err(e) => link.send_message(Msg::ReadFailed(format!(
                                "The files are open but could not be kept in this browser: {e}"
                            ))),
                        }
                    });
                }
                self.sample = sample;
                self.send_load(ctx, names, blobs);
                true
            }
            Msg::SetKeep(on) => {
                self.keep = on;
                crate::prefs::set_keep(on);
                if !on {
                    ctx.link().send_message(Msg::ForgetKept);
                }
                true
            }
            Msg::Kept(m) => {
                self.kept = m;
                true
            }
            Msg::ReopenKept => {
                self.error = None;
                self.notice = None;
                let generation = self.begin_load(
                    "Reading the kept files…".to_string(),
                    self.kept.as_ref().map_or(0.0, |m| m.bytes),
                );
                let link = ctx.link().clone();
                wasm_bindgen_futures::spawn_local(async move {
                    match crate::store::load().await {
                        Ok(Some((names, buffers))) => link.send_message(Msg::Blobs {
                            generation,
                            names,
                            blobs: files::blobs(&buffers),
                            sample: None,
                        }),
                        Ok(None) => {
                            link.send_message(Msg::Kept(None));
                            link.send_message(Msg::ReadFailed(
                                "No files are kept in this browser any more.".into(),
                            ));
                        }
                        Err(e) => link.send_message(Msg::ReadFailed(e)),
                    }
                });
                true
            }
            Msg::ForgetKept => {
                self.kept = None;
                wasm_bindgen_futures::spawn_local(async move {
                    let _ = crate::store::forget().await;
                });
                true
            }
            Msg::ReadFailed(e) => {
                self.progress = None;
                self.error = Some(e);
                true
            }
            Msg::Worker(data) => self.on_worker(data),
            Msg::CheckWorker(data) => self.on_check_worker(data),
            Msg::CheckWorkerFailed(e) => self.check_failed(e),
            Msg::WorkerFailed(e) => {
                self.stop_worker();
                self.progress = None;
                self.error = Some(format!(
                    "The parser stopped with an internal error: {e}. The page still works; try another file."
                ));
                true
            }
            Msg::Cancel => {
                self.stop_worker();
                self.progress = None;
                if self.previewing {
                    self.previewing = false;
                    self.timeline = None;
                }
                self.notice = Some("Loading cancelled.".to_string());
                true
            }
            Msg::SetMode(m) => {
                self.mode = m;
                crate::prefs::set_mode(m);
                self.dirty = true;
                self.update_hash();
                true
            }
            Msg::SetAxis(a) => self.set_axis(a),
            Msg::ToggleLaneStatus => {
                self.lane_status = !self.lane_status;
                true
            }
            Msg::Zoom { factor, anchor } => {
                self.vp.zoom(factor, anchor);
                self.dirty = true;
                self.tooltip = None;
                self.update_view_hash(ctx);
                true
            }
            Msg::Pan(f) => {
                self.vp.pan(f);
                self.dirty = true;
                self.tooltip = None;
                self.update_view_hash(ctx);
                true
            }
            Msg::WriteViewHash => {
                self.view_hash = None;
                self.update_view_hash(ctx);
                false
            }
            Msg::Reset => {
                self.vp.reset();
                self.dirty = true;
                self.update_hash();
                true
            }
            Msg::PointerDown { x } => {
                self.drag_from = Some(x);
                self.dragged = false;
                false
            }
            Msg::PointerMove { x, y, buttons } => {
                if let (Some(from), true) = (self.drag_from, buttons & 1 == 1) {
                    let dx = x - from;
                    if dx.abs() >= 1.0 {
                        self.dragged = true;
                        self.drag_from = Some(x);
                        self.vp.pan(-dx / self.layout().plot_width());
                        self.dirty = true;
                        self.tooltip = None;
                        return true;
                    }
                    return false;
                }
                let hit = self.hit(x, y);
                let track = if hit.is_none() {
                    self.track_at(x, y)
                } else {
                    None
                };
                // A term band, or a log election event, links its term.
                let term = match hit {
                    Some(Hit::Band { lane, band }) => self
                        .timeline
                        .as_ref()
                        .and_then(|t| t.lanes.get(lane)?.bands.get(band))
                        .map(|b| b.term),
                    _ => track.as_ref().and_then(|h| h.term),
                };
                if term != self.hover_term {
                    self.hover_term = term;
                    self.dirty = true;
                }
                let tip = hit
                    .and_then(|h| self.tooltip_text(h))
                    .or_else(|| track.map(|h| h.tip));
                self.tooltip = tip.map(|text| Tooltip { x, y, text });
                true
            }
            Msg::PointerUp { x, y } => {
                let was_drag = self.dragged;
                self.drag_from = None;
                self.dragged = false;
                if was_drag {
                    self.update_hash();
                    return false;
                }
                if let Some(Hit::Entry { lane, entry }) = self.hit(x, y) {
                    self.inspect(lane, entry);
                    return true;
                }
                self.click_track(x, y)
            }
            Msg::PointerLeave => {
                self.drag_from = None;
                self.tooltip = None;
                if self.hover_term.take().is_some() {
                    self.dirty = true;
                }
                true
            }
            Msg::Key(ev) => {
                if let Some(t) = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                {
                    let tag = t.tag_name().to_ascii_lowercase();
                    if tag == "input" || tag == "select" || tag == "textarea" {
                        return false;
                    }
                }
                if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
                    return false;
                }
                if self.timeline.is_some() && ev.key() == "v" {
                    ctx.link().send_message(Msg::ShowContents(!self.contents));
                    return false;
                }
                if self.contents && self.timeline.is_some() {
                    // The Contents page has keys of its own.
                    match ev.key().as_str() {
                        "?" => ctx.link().send_message(Msg::ToggleHelp),
                        "Escape" if self.help => ctx.link().send_message(Msg::ToggleHelp),
                        "/" => {
                            ev.prevent_default();
                            focus_search();
                        }
                        _ => {}
                    }
                    return false;
                }
                let msg = match ev.key().as_str() {
                    "?" => Msg::ToggleHelp,
                    "Escape" if self.help => Msg::ToggleHelp,
                    "ArrowLeft" => Msg::Pan(-0.1),
                    "ArrowRight" => Msg::Pan(0.1),
                    "+" | "=" => Msg::Zoom {
                        factor: 1.5,
                        anchor: 0.5,
                    },
                    "-" | "_" => Msg::Zoom {
                        factor: 1.0 / 1.5,
                        anchor: 0.5,
                    },
                    "0" => Msg::Reset,
                    "s" => Msg::SetMode(SizeView::Stored),
                    "f" => Msg::SetMode(SizeView::Full),
                    "d" => Msg::SetMode(SizeView::Diff),
                    "l" => Msg::ToggleLog,
                    "t" => Msg::SetAxis(match self.axis.mode {
                        AxisMode::Index => AxisMode::Time,
                        AxisMode::Time => AxisMode::Index,
                    }),
                    "c" => Msg::ToggleLaneStatus,
                    "n" | "j" => Msg::StepFinding(1),
                    "p" | "k" => Msg::StepFinding(-1),
                    _ => return false,
                };
                ev.prevent_default();
                <Self as Component>::update(self, ctx, msg)
            }
            Msg::ToggleHelp => {
                self.help = !self.help;
                true
            }
            Msg::ExportPng => {
                self.export_png();
                false
            }
            Msg::ExportJson => {
                self.export_json();
                false
            }
            Msg::Resize => self.measure_width(),
            Msg::HashChanged => self.follow_hash(),
            Msg::Dragging(d) => {
                let changed = self.dragging != d;
                self.dragging = d;
                changed
            }
            Msg::Finding(i) => {
                self.focus_finding(i);
                true
            }
            Msg::StepFinding(step) => {
                if self.finding_order.is_empty() {
                    return false;
                }
                let n = self.finding_order.len() as i32;
                let at = self
                    .selected_finding
                    .and_then(|s| self.finding_order.iter().position(|&x| x == s))
                    .map_or(if step > 0 { 0 } else { n - 1 }, |p| {
                        (p as i32 + step).rem_euclid(n)
                    });
                self.focus_finding(self.finding_order[at as usize]);
                true
            }
            Msg::ToggleLog => {
                self.log.open = !self.log.open;
                if self.log.open && self.log.query == 0 {
                    self.query_log(None);
                }
                true
            }
            Msg::LogFilter(f) => {
                self.log.apply(f);
                self.query_log(None);
                true
            }
            Msg::LogScroll(top) => self.log_scrolled(top),
            Msg::ShowContents(on) => {
                self.contents = on;
                crate::prefs::set_contents(on);
                self.tooltip = None;
                self.dirty = true;
                self.update_hash();
                true
            }
            Msg::ContentsPos(lane, at) => {
                self.contents_lane = lane;
                self.contents_at = at;
                self.update_hash();
                false
            }
        }
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let onchange = link.batch_callback(|e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let files = files::from_list(input.files());
            input.set_value("");
            Some(Msg::PickFiles(files))
        });
        let ondragover = link.callback(|e: DragEvent| {
            e.prevent_default();
            Msg::Dragging(true)
        });
        let ondragleave = link.callback(|e: DragEvent| {
            e.prevent_default();
            Msg::Dragging(false)
        });
        let ondrop = link.batch_callback(|e: DragEvent| {
            e.prevent_default();
            // Entries must be taken now: the items die with the event.
            let dropped = files::from_drop(e.data_transfer());
            vec![Msg::Dragging(false), Msg::Dropped(dropped)]
        });
        let on_sample = link.callback(|e: Event| {
            let s: HtmlSelectElement = e.target_unchecked_into();
            Msg::PickSample(s.value())
        });
        let sample_value = self.sample.clone().unwrap_or_default();

        html! {
            <div class={classes!("app", self.dragging.then_some("dragging"))} {ondragover} {ondragleave} {ondrop}>
                <header class="topbar">
                    <h1>{ "ovsdb-scope" }</h1>
                    <label class="picker" title="Database files, ovsdb-server logs, cluster/status and memory/show output, archives (.gz, .xz, .tar, .tar.gz, .tar.xz)">
                        <span>{ "Open files" }</span>
                        <input type="file" multiple=true data-testid="file-input" onchange={onchange.clone()} />
                    </label>
                    <label class="picker" title="A whole folder, e.g. an unpacked must-gather or sosreport">
                        <span>{ "or a folder" }</span>
                        <input type="file" multiple=true webkitdirectory=true data-testid="folder-input" {onchange} />
                    </label>
                    <label class="picker">
                        <span>{ "or a bundled sample" }</span>
                        <select data-testid="sample-picker" onchange={on_sample}>
                            <option value="" selected={sample_value.is_empty()} disabled=true>{ "—" }</option>
                            { for samples::SAMPLES.iter().map(|(n, _)| html! {
                                <option value={*n} selected={sample_value == *n}>{ *n }</option>
                            }) }
                            <optgroup label="incidents (with logs and status)">
                                { for samples::INCIDENTS.iter().map(|(n, _)| html! {
                                    <option value={*n} selected={sample_value == *n}>{ *n }</option>
                                }) }
                            </optgroup>
                        </select>
                    </label>
                    <div class="modes" role="group" aria-label="Storage mode">
                        { for SizeView::ALL.iter().map(|&m| {
                            let onclick = link.callback(move |_| Msg::SetMode(m));
                            html! {
                                <button data-testid={format!("storage-{}", m.name())}
                                    class={classes!((self.mode == m).then_some("active"))}
                                    aria-pressed={(self.mode == m).to_string()} {onclick}>
                                    { m.label() }
                                </button>
                            }
                        }) }
                    </div>
                    { self.view_axis_buttons(ctx) }
                    <button onclick={link.callback(|_| Msg::ExportPng)} data-testid="export-png">{ "PNG" }</button>
                    <button onclick={link.callback(|_| Msg::ExportJson)} data-testid="export-json">{ "JSON" }</button>
                    <button onclick={link.callback(|_| Msg::ToggleHelp)} data-testid="help-button" title="Keys (?)">{ "?" }</button>
                </header>
                <p class="tagline">
                    { "Drop what you collected from one cluster anywhere on the page: .db files, ovsdb-server logs, \
                       cluster/status and memory/show output, folders and archives. \
                       Everything runs in your browser; nothing is uploaded." }
                    <label class="keep" title="Store the files you open in this browser's own storage (IndexedDB), so that after a reload you can reopen them with one click. They never leave the browser; Forget deletes them.">
                        <input type="checkbox" data-testid="keep-files" checked={self.keep}
                            onchange={link.callback(|e: Event| Msg::SetKeep(e.target_unchecked_into::<HtmlInputElement>().checked()))} />
                        { " Keep opened files in this browser" }
                    </label>
                    if let Some(m) = &self.kept {
                        <button data-testid="reopen-kept" data-files={m.names.join(",")}
                            title={format!("Kept {} UTC", utc_datetime(m.saved_ms as i64))}
                            onclick={link.callback(|_| Msg::ReopenKept)}>
                            { format!("Reopen {} ({})", m.names.join(", "), human_bytes(m.bytes)) }
                        </button>
                        <button data-testid="forget-kept" onclick={link.callback(|_| Msg::ForgetKept)}>{ "Forget" }</button>
                    }
                </p>
                { self.view_progress(ctx) }
                if let Some(e) = &self.error {
                    <div class="error" role="alert" data-testid="load-error">{ e.clone() }</div>
                }
                if let Some(n) = &self.notice {
                    <div class="notice" role="status" data-testid="notice">{ n.clone() }</div>
                }
                if !self.previewing {
                    { self.view_damage() }
                    { self.view_summary() }
                    { self.view_contents_tabs(ctx) }
                    if self.contents {
                        { self.view_contents(ctx) }
                    }
                }
                <div class="timeline-view" hidden={self.contents && self.timeline.is_some() && !self.previewing}>
                <section class="plot" ref={self.plot.clone()}>
                    if self.timeline.is_some() {
                        <canvas ref={self.canvas.clone()} data-testid="timeline" tabindex="0"
                            onmousedown={link.callback(|e: MouseEvent| Msg::PointerDown { x: e.offset_x() as f64 })}
                            onmousemove={link.callback(|e: MouseEvent| Msg::PointerMove { x: e.offset_x() as f64, y: e.offset_y() as f64, buttons: e.buttons() })}
                            onmouseup={link.callback(|e: MouseEvent| Msg::PointerUp { x: e.offset_x() as f64, y: e.offset_y() as f64 })}
                            onmouseleave={link.callback(|_| Msg::PointerLeave)} />
                        if let Some(t) = &self.tooltip {
                            <div class="tooltip" data-testid="tooltip"
                                style={if t.x > self.width - 340.0 {
                                    format!("right:{}px;top:{}px", (self.width - t.x + 14.0).max(0.0), t.y + 14.0)
                                } else {
                                    format!("left:{}px;top:{}px", t.x + 14.0, t.y + 14.0)
                                }}>{ t.text.clone() }</div>
                        }
                        { self.view_lane_status() }
                    }
                </section>
                if !self.previewing {
                    { self.view_findings(ctx) }
                    { self.view_log(ctx) }
                    { self.view_inspector() }
                    { self.view_inputs() }
                    { self.view_cluster() }
                    { self.view_status() }
                }
                </div>
                if self.help {
                    { self.view_help(ctx) }
                }
            </div>
        }
    }

    fn rendered(&mut self, ctx: &Context<Self>, first_render: bool) {
        if first_render {
            self.measure_width();
        }
        if self.timeline.is_some() {
            self.listen_wheel(ctx);
            self.measure_width();
            if self.dirty {
                self.redraw();
            }
        }
        self.log_rendered();
    }
}

/// Focuses the Contents page's search field (the `/` key).
fn focus_search() {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("[data-testid=search]").ok().flatten())
        .and_then(|e| e.dyn_into::<HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

fn value_dd(id: &'static str, value: String, text: String) -> Html {
    html! { <dd data-testid={id} data-value={value}>{ text }</dd> }
}

impl App {
    fn view_contents_tabs(&self, ctx: &Context<Self>) -> Html {
        if self.timeline.is_none() {
            return html! {};
        }
        let link = ctx.link();
        html! {
            <nav class="views" aria-label="View">
                <button data-testid="view-timeline" title="The Raft history of the files (v)"
                    class={classes!((!self.contents).then_some("active"))}
                    onclick={link.callback(|_| Msg::ShowContents(false))}>{ "Timeline" }</button>
                <button data-testid="view-contents" title="The tables and rows at any index (v)"
                    class={classes!(self.contents.then_some("active"))}
                    onclick={link.callback(|_| Msg::ShowContents(true))}>{ "Contents" }</button>
            </nav>
        }
    }

    fn view_contents(&self, ctx: &Context<Self>) -> Html {
        let (Some(t), Some(w)) = (&self.timeline, &self.worker) else {
            return html! {};
        };
        if self.progress.is_some() {
            // The worker is reading new files: the page opens them when
            // they are loaded.
            return html! { <p class="hint" data-testid="contents-waiting">{ "Loading the files…" }</p> };
        }
        let files: Vec<String> = t.lanes.iter().map(|l| l.name.clone()).collect();
        if files.is_empty() {
            return html! { <p class="hint">{ "No database file is loaded." }</p> };
        }
        let worker = crate::contents_ui::WorkerRef {
            worker: w.clone(),
            generation: self.loads,
        };
        let on_change = ctx
            .link()
            .callback(|(lane, at): (usize, Option<u64>)| Msg::ContentsPos(lane, at));
        html! {
            <crate::contents_ui::ContentsPage {worker} {files} lane={self.contents_lane}
                at={self.contents_at} {on_change} />
        }
    }

    fn view_axis_buttons(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let mode = self.axis.mode;
        let can_time = self.timeline.as_ref().is_some_and(|t| Axis::has_time(t));
        let has_status = self
            .diag
            .as_ref()
            .is_some_and(|d| d.servers.iter().any(|s| s.status.is_some()));
        html! {
            <>
            <div class="modes" role="group" aria-label="X axis">
                <button data-testid="axis-index" class={classes!((mode == AxisMode::Index).then_some("active"))}
                    aria-pressed={(mode == AxisMode::Index).to_string()}
                    title="X axis: Raft log index (t toggles)"
                    onclick={link.callback(|_| Msg::SetAxis(AxisMode::Index))}>{ "index" }</button>
                <button data-testid="axis-time" class={classes!((mode == AxisMode::Time).then_some("active"))}
                    aria-pressed={(mode == AxisMode::Time).to_string()} disabled={!can_time}
                    title={if can_time {
                        "X axis: wall time, UTC (t toggles). Entries sit at their _date, records without one between their dated neighbours, log events at their own time."
                    } else {
                        "No entry of these files has a date (_date): the time axis needs one."
                    }}
                    onclick={link.callback(|_| Msg::SetAxis(AxisMode::Time))}>{ "time" }</button>
            </div>
            if has_status {
                <button data-testid="lane-status-toggle" aria-pressed={self.lane_status.to_string()}
                    title="Show / hide each server's last cluster/status on its lane (c)"
                    onclick={link.callback(|_| Msg::ToggleLaneStatus)}>{ "status" }</button>
            }
            </>
        }
    }

    fn view_progress(&self, ctx: &Context<Self>) -> Html {
        let Some(p) = &self.progress else {
            return html! {};
        };
        let pct = if p.total > 0.0 {
            (p.done / p.total * 100.0).min(100.0)
        } else {
            0.0
        };
        html! {
            <div class="progress" data-testid="progress" data-value={format!("{}", p.done)} data-total={format!("{}", p.total)}>
                <span>{ p.label.clone() }</span>
                <progress max="100" value={format!("{pct:.1}")}></progress>
                <span>{ format!("{} of {}", human_bytes(p.done), human_bytes(p.total)) }</span>
                <button data-testid="cancel" onclick={ctx.link().callback(|_| Msg::Cancel)}>{ "Cancel" }</button>
            </div>
        }
    }

    fn view_damage(&self) -> Html {
        let Some(t) = &self.timeline else {
            return html! {};
        };
        // Damage in the middle was stepped over (the rest of the file is
        // read); damage at the end stops the file.
        let skipped = t.lanes.iter().flat_map(|l| {
            l.markers.iter().filter_map(move |m| match &m.kind {
                MarkerKind::Skipped {
                    offset,
                    bytes,
                    reason,
                    ..
                } => Some((l, m.record, *offset, *bytes, reason)),
                _ => None,
            })
        });
        html! {
            <>
            { for skipped.map(|(l, record, offset, bytes, reason)| html! {
                <div class="warning" role="status" data-testid="damage-banner" data-kind="skipped"
                    data-record={record.to_string()} data-offset={offset.to_string()}
                    data-bytes={bytes.to_string()}>
                    { format!(
                        "{} is damaged at record {record} (byte offset {offset}): {reason}. \
                         {bytes} bytes were skipped; reading went on at the next valid record.",
                        l.name
                    ) }
                </div>
            }) }
            { for t.lanes.iter().filter_map(|l| l.truncated.as_ref().map(|tr| (l, tr))).map(|(l, tr)| html! {
                <div class="warning" role="status" data-testid="damage-banner" data-kind="truncated"
                    data-record={tr.record.to_string()} data-offset={tr.offset.to_string()}>
                    { format!(
                        "{} is damaged at record {} (byte offset {}): {}. The {} records before it are shown.",
                        l.name, tr.record, tr.offset, tr.reason, l.summary.records
                    ) }
                </div>
            }) }
            </>
        }
    }

    fn view_summary(&self) -> Html {
        let Some(t) = &self.timeline else {
            return html! {};
        };
        let Some(l) = t.lanes.first() else {
            return html! {};
        };
        let s = &l.summary;
        let opt = |v: Option<u64>| v.map_or(String::new(), |x| x.to_string());
        let terms: Vec<String> = s.terms.iter().map(u64::to_string).collect();
        let eb = s.entry_bytes.get(self.mode);
        let stored_total = t.entry_bytes(SizeView::Stored).unwrap_or(0) as f64;
        html! {
            <section class="summary" aria-label="Summary" data-testid="summary"
                data-files={t.lanes.iter().map(|l| l.name.clone()).collect::<Vec<_>>().join(",")}>
                <div>
                    <h2>{ format!("{}{}", l.name, if t.lanes.len() > 1 { format!(" (first of {} files)", t.lanes.len()) } else { String::new() }) }</h2>
                    <dl>
                        <dt>{ "File kind" }</dt>
                        { value_dd("summary-format", s.format.clone(), if l.clustered { "clustered (Raft)".into() } else { "standalone".into() }) }
                        <dt>{ "Database" }</dt>
                        { value_dd("summary-database", s.database.clone(), s.database.clone()) }
                        <dt>{ "Records" }</dt>
                        { value_dd("summary-records", s.records.to_string(), s.records.to_string()) }
                        <dt>{ if l.clustered { "Log entries" } else { "Transactions" } }</dt>
                        { value_dd("summary-entries", s.entries.to_string(), s.entries.to_string()) }
                        <dt>{ "Terms" }</dt>
                        { value_dd("summary-terms", terms.join(","), if terms.is_empty() { "—".into() } else { terms.join(", ") }) }
                        <dt>{ "Last index" }</dt>
                        { value_dd("summary-last-index", opt(s.last_index), opt(s.last_index)) }
                        <dt>{ "Commit index" }</dt>
                        { value_dd("summary-commit-index", opt(s.commit_index), opt(s.commit_index)) }
                        <dt>{ format!("Entry bytes ({})", self.mode.label()) }</dt>
                        { value_dd("summary-entry-bytes", eb.map_or(String::new(), |b| b.to_string()),
                            eb.map_or("not computed by the core for this file".into(), |b| format!("{b} ({})", human_bytes(b as f64)))) }
                        <dt>{ "File bytes" }</dt>
                        { value_dd("summary-bytes", s.bytes.to_string(), format!("{} ({})", s.bytes, human_bytes(s.bytes as f64))) }
                    </dl>
                </div>
                <div>
                    <h2>{ "Storage: entry bytes of all files" }</h2>
                    <table class="storage" data-testid="storage-summary">
                        <tr><th>{ "mode" }</th><th>{ "bytes" }</th><th>{ "vs stored" }</th></tr>
                        { for SizeView::ALL.iter().map(|&m| {
                            let v = t.entry_bytes(m);
                            html! {
                                <tr class={classes!((m == self.mode).then_some("active"))}>
                                    <td>{ m.label() }</td>
                                    <td data-testid={format!("total-{}", m.name())} data-value={v.map_or(String::new(), |b| b.to_string())}>
                                        { v.map_or("not computed".into(), |b| human_bytes(b as f64)) }
                                    </td>
                                    <td>{ v.map_or("—".into(), |b| if stored_total > 0.0 { format!("{:.2}×", b as f64 / stored_total) } else { "—".into() }) }</td>
                                </tr>
                            }
                        }) }
                    </table>
                </div>
            </section>
        }
    }

    fn view_inspector(&self) -> Html {
        let Some((li, ei)) = self.selected else {
            return html! {
                <section class="inspector" data-testid="inspector" data-state="empty">
                    <h2>{ "Inspector" }</h2>
                    <p class="hint">{ "Click an entry on the timeline to see what it changed." }</p>
                </section>
            };
        };
        let Some(t) = &self.timeline else {
            return html! {};
        };
        let Some(l) = t.lanes.get(li) else {
            return html! {};
        };
        let Some(e) = l.entries.get(ei) else {
            return html! {};
        };
        let size = |m: SizeView| {
            e.sizes
                .get(m)
                .map_or("not computed".to_string(), |b| format!("{b} B"))
        };
        html! {
            <section class="inspector" data-testid="inspector" data-state="entry" data-index={e.index.to_string()}>
                <h2>{ format!("{} · {} {}", l.name, if l.clustered { "index" } else { "transaction" }, e.index) }</h2>
                <dl>
                    <dt>{ "Kind" }</dt><dd data-testid="inspector-kind">{ if e.has_data { "entry with data" } else if l.clustered { "Raft-internal entry" } else { "transaction" } }</dd>
                    <dt>{ "Term" }</dt><dd data-testid="inspector-term" data-value={e.term.to_string()}>{ e.term }</dd>
                    <dt>{ "Index" }</dt><dd data-testid="inspector-index" data-value={e.index.to_string()}>{ e.index }</dd>
                    <dt>{ "Record / offset" }</dt><dd data-testid="inspector-offset" data-value={e.offset.to_string()}>{ format!("{} @ {}", e.record, e.offset) }</dd>
                    <dt>{ "Entry ID" }</dt><dd data-testid="inspector-eid" data-value={e.eid.clone().unwrap_or_default()}>{ e.eid.clone().unwrap_or_else(|| "—".into()) }</dd>
                    <dt>{ "Comment" }</dt><dd data-testid="inspector-comment">{ e.comment.as_deref().map_or_else(|| html! { "—" }, folded) }</dd>
                    <dt>{ "Date" }</dt><dd data-testid="inspector-date" data-value={e.date_ms.map_or(String::new(), |d| d.to_string())}>{ e.date_ms.map_or("—".into(), |d| format!("{} UTC ({d} ms)", utc_datetime(d))) }</dd>
                    <dt>{ "Bytes" }</dt><dd data-testid="inspector-bytes" data-value={e.sizes.get(self.mode).map_or(String::new(), |b| b.to_string())}>{ format!("as stored {} · full values {} · diffs {}", size(SizeView::Stored), size(SizeView::Full), size(SizeView::Diff)) }</dd>
                </dl>
                { match &self.detail {
                    None => html! { <p class="hint">{ "Decoding…" }</p> },
                    Some(d) if d.error.is_some() => html! { <p class="error">{ d.error.clone().unwrap_or_default() }</p> },
                    Some(d) => html! {
                        <Changes key={format!("{li}:{}", e.offset)} detail={Detail(d.clone())} />
                    },
                } }
            </section>
        }
    }

    fn view_cluster(&self) -> Html {
        let Some(t) = &self.timeline else {
            return html! {};
        };
        let c = &t.cluster;
        html! {
            <section class="cluster" aria-label="Cluster">
                <h2 data-testid="cluster-servers" data-value={c.servers.len().to_string()}>
                    { format!("Cluster: {} server(s){}", c.servers.len(), c.cluster_id.as_ref().map_or(String::new(), |id| format!(" · cluster {id}"))) }
                </h2>
                <table class="servers">
                    <tr><th>{ "server" }</th><th>{ "address" }</th><th>{ "file" }</th><th>{ "commit index" }</th></tr>
                    { for c.servers.iter().map(|s| html! {
                        <tr>
                            <td title={s.sid.clone()}>{ short_sid(&s.sid).to_string() }</td>
                            <td>{ s.address.clone() }</td>
                            <td>{ s.lane.and_then(|i| t.lanes.get(i)).map_or("—".to_string(), |l| l.name.clone()) }</td>
                            <td data-testid="server-commit-index" data-value={s.lane.and_then(|i| c.commit_index.get(i).copied().flatten()).map_or(String::new(), |x| x.to_string())}>
                                { s.lane.and_then(|i| c.commit_index.get(i).copied().flatten()).map_or("—".to_string(), |x| x.to_string()) }
                            </td>
                        </tr>
                    }) }
                </table>
                <table class="terms">
                    <tr><th>{ "term" }</th><th>{ "leader" }</th><th>{ "votes (file → for)" }</th></tr>
                    { for c.terms.iter().map(|tm| html! {
                        <tr>
                            <td data-testid="term" data-value={tm.term.to_string()}>{ tm.term }</td>
                            <td>{ tm.leaders.iter().map(|l| short_sid(l).to_string()).collect::<Vec<_>>().join(", ") }</td>
                            <td>{ tm.votes.iter().map(|(f, v)| format!("{f} → {}", short_sid(v))).collect::<Vec<_>>().join("; ") }</td>
                        </tr>
                    }) }
                </table>
                <div data-testid="check-results" data-value={c.violations.len().to_string()}
                    data-state={if c.checked { "done" } else { "running" }}
                    data-worker={if self.check_ms.is_some() { "own" } else { "load" }}
                    data-loads={self.loads.to_string()}
                    data-ms={self.check_ms.map(|m| (m as u64).to_string()).unwrap_or_default()}>
                    if !c.checked {
                        <p class="hint" title="The cluster check runs in a second worker, on another core, while the files load">{ "check: running…" }</p>
                    } else if c.violations.is_empty() && c.problems.is_empty() {
                        <p class="ok">{ "check: the cluster invariants hold for these files." }</p>
                    }
                    { for c.violations.iter().chain(c.problems.iter()).map(|v| html! { <p class="error">{ v.clone() }</p> }) }
                </div>
            </section>
        }
    }

    fn view_help(&self, ctx: &Context<Self>) -> Html {
        html! {
            <div class="help" role="dialog" data-testid="help" onclick={ctx.link().callback(|_| Msg::ToggleHelp)}>
                <div class="helpbox">
                    <h2>{ "Keys" }</h2>
                    <table>
                        <tr><td>{ "?" }</td><td>{ "show / hide this help" }</td></tr>
                        <tr><td>{ "← →" }</td><td>{ "pan" }</td></tr>
                        <tr><td>{ "+ −" }</td><td>{ "zoom in / out (or the mouse wheel)" }</td></tr>
                        <tr><td>{ "0" }</td><td>{ "show everything" }</td></tr>
                        <tr><td>{ "s f d" }</td><td>{ "sizes as stored / with full values / with diffs" }</td></tr>
                        <tr><td>{ "drag" }</td><td>{ "pan; click an entry to inspect it, a log mark to see its line" }</td></tr>
                        <tr><td>{ "n p (j k)" }</td><td>{ "next / previous finding" }</td></tr>
                        <tr><td>{ "l" }</td><td>{ "show / hide the log panel" }</td></tr>
                        <tr><td>{ "t" }</td><td>{ "x axis: log index / wall time (UTC, from the entries' _date and the logs)" }</td></tr>
                        <tr><td>{ "c" }</td><td>{ "show / hide each server's last cluster/status on its lane" }</td></tr>
                        <tr><td>{ "v" }</td><td>{ "timeline / contents (the tables and rows at an index)" }</td></tr>
                        <tr><td>{ "/" }</td><td>{ "contents: search (text, or find conditions)" }</td></tr>
                        <tr><td>{ "[ ]" }</td><td>{ "contents: previous / next index" }</td></tr>
                        <tr><td>{ "↑ ↓" }</td><td>{ "contents: previous / next row in the grid" }</td></tr>
                        <tr><td>{ "hover" }</td><td>{ "a term band highlights its elections in the logs and its findings; an election in a log highlights its term's bands" }</td></tr>
                    </table>
                    <p>{ "The URL keeps the sample, zoom, storage mode and axis: copy it to share this view." }</p>
                </div>
            </div>
        }
    }
}

/// `a, b, c` or `a, b and 12 more`, for progress labels.
fn short_list(names: &[String]) -> String {
    if names.len() <= 4 {
        names.join(", ")
    } else {
        format!("{} and {} more", names[..3].join(", "), names.len() - 3)
    }
}

/// The timeline of a `done` or `preview` message: without the entries
/// (`crate::msg` bytes), and each lane's entries as bytes (`timeline::wire`).
fn timeline_of(data: &JsValue) -> Result<Timeline, String> {
    let mut t = crate::msg::from_bytes::<Timeline>(&js_get(data, "timeline"))?;
    let lanes: Vec<Vec<u8>> = js_sys::Array::from(&js_get(data, "entries"))
        .iter()
        .map(|a| js_sys::Uint8Array::new(&a).to_vec())
        .collect();
    let refs: Vec<&[u8]> = lanes.iter().map(Vec::as_slice).collect();
    timeline::wire::join(&mut t, &refs)?;
    Ok(t)
}
