//! Loading files into the explorer: the picker, drops, bundled samples and
//! kept files, the parser worker and the second worker that checks the
//! cluster, their progress, and taking in the timeline a load returns.

use std::rc::Rc;

use js_sys::{Array, Object, Reflect};
use timeline::axis::Axis;
use timeline::{Lane, LaneIndex, Timeline};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, MessageEvent, Worker};
use yew::prelude::*;

use super::{js_get, now, App, Msg, Progress};
use crate::evidence_view::DiagView;
use crate::files::{self, Named};
use crate::samples;

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

/// The second worker of a load: it runs the cluster check of the same
/// files (`check` message) while the first one loads them without it
/// (`check: false`), one worker per core (from `CHECK_WORKER_CORES` on).
pub(super) struct CheckRun {
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

impl App {
    /// Opens picked files (or those found in a drop).
    pub(super) fn pick_files(&mut self, ctx: &Context<Self>, files: Vec<Named>) -> bool {
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

    /// Walks dropped files and folders, then opens what they hold.
    pub(super) fn read_dropped(&self, ctx: &Context<Self>, dropped: Vec<files::Dropped>) -> bool {
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

    /// The files of a load, read or fetched: kept in this browser when asked,
    /// then handed to the parser worker.
    pub(super) fn on_blobs(
        &mut self,
        ctx: &Context<Self>,
        generation: u32,
        names: Vec<String>,
        blobs: Vec<Blob>,
        sample: Option<String>,
    ) -> bool {
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

    /// Reopens the files kept in this browser.
    pub(super) fn reopen_kept(&mut self, ctx: &Context<Self>) -> bool {
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

    pub(super) fn load_sample(&mut self, ctx: &Context<Self>, name: String) {
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

    pub(super) fn stop_worker(&mut self) {
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

    pub(super) fn on_check_worker(&mut self, data: JsValue) -> bool {
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
    pub(super) fn check_failed(&mut self, why: String) -> bool {
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

    pub(super) fn on_worker(&mut self, data: JsValue) -> bool {
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
        self.cursor = None;
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
