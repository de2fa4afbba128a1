//! The explorer page: load files (picker, drag and drop, bundled samples),
//! parse them in a Web Worker, draw the timeline, inspect entries, switch the
//! storage mode, see the cluster, export, share the view in the URL hash.
//! This file is the component: its messages, its state, and `update`, which
//! hands each message to the module that does that job.

use std::rc::Rc;

use js_sys::{Object, Reflect};
use timeline::axis::{Axis, AxisMode};
use timeline::{EntryDetail, LaneIndex, SizeView, Timeline, Viewport};
use wasm_bindgen::prelude::*;
use web_sys::{Blob, HtmlCanvasElement, KeyboardEvent, Worker};
use yew::prelude::*;

use crate::draw::LogTrack;
use crate::evidence_view::DiagView;
use crate::files::{self, Named};
use crate::hash::{self, HashState};
use crate::samples;
use evidence_ui::{LogFilter, LogPanel};
use load::CheckRun;

mod canvas;
mod evidence_ui;
mod export;
mod input;
mod load;
mod url;
mod view;

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
    /// The entry the keys point at on the focused timeline (`move_cursor`).
    cursor: Option<(usize, usize)>,
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

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

fn js_get(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
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
            cursor: None,
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
            Msg::PickFiles(files) => self.pick_files(ctx, files),
            Msg::Dropped(dropped) => self.read_dropped(ctx, dropped),
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
            } => self.on_blobs(ctx, generation, names, blobs, sample),
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
            Msg::ReopenKept => self.reopen_kept(ctx),
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
                // The canvas widens or narrows (`layout`).
                self.lane_status = !self.lane_status;
                self.dirty = true;
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
            Msg::PointerMove { x, y, buttons } => self.pointer_move(x, y, buttons),
            Msg::PointerUp { x, y } => self.pointer_up(x, y),
            Msg::PointerLeave => {
                self.drag_from = None;
                self.tooltip = None;
                if self.hover_term.take().is_some() {
                    self.dirty = true;
                }
                true
            }
            Msg::Key(ev) => self.key(ctx, ev),
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
        self.page(ctx)
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
