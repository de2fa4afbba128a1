//! A/B design review: two runs of the same seed on a shared time axis, the
//! metrics table with deltas and ratios, and the latency distribution.

use std::rc::Rc;

use simview::ab::{ab_preset, figure, latency_histogram, rows, AbRow, AB_PRESETS};
use simview::RunResult;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use super::page::format_num;
use super::view::{self, Window};
use super::{Reply, SimWorker};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub preset: String,
    pub seed: u64,
}

pub enum Msg {
    Worker(Reply),
    Seek(u64),
    Toggle,
    Frame(f64),
    Zoom(f64),
    /// The pointer over the latency chart (canvas pixels), or off it.
    Hover(Option<(i32, i32)>),
    /// The window was resized: charts redraw to their new width.
    Resize,
    /// Run both sides over this many seeds (from the page's seed).
    Seeds(u64),
}

/// Seed counts the page offers for the table over seeds.
const SEED_COUNTS: &[u64] = &[10, 20, 50];

pub struct AbPage {
    _worker: SimWorker,
    a: Option<Rc<RunResult>>,
    b: Option<Rc<RunResult>>,
    error: Option<String>,
    playhead: u64,
    playing: bool,
    last_ts: Option<f64>,
    window_ms: f64,
    /// The next playback frame (cancelled when dropped).
    frame: Option<gloo_render::AnimationFrame>,
    link: html::Scope<Self>,
    canvas_a: NodeRef,
    canvas_b: NodeRef,
    canvas_h: NodeRef,
    /// The latency chart's value under the pointer.
    hover: Rc<RefCell<Option<crate::charts::Hover>>>,
    hover_text: Option<String>,
    /// The latency chart is drawn for the runs shown (it does not move
    /// with the playhead).
    latency_drawn: bool,
    _resize: gloo_events::EventListener,
    /// The table over seeds, its progress (runs done, runs in all) while
    /// the worker runs it.
    seeds: Option<Rc<simview::ab::SeedsTable>>,
    seeds_progress: Option<(f64, f64)>,
}

fn cell(v: Option<f64>) -> String {
    v.map_or("–".into(), format_num)
}

impl AbPage {
    fn request_frame(&mut self) {
        let link = self.link.clone();
        self.frame = Some(gloo_render::request_animation_frame(move |ts| {
            link.send_message(Msg::Frame(ts))
        }));
    }

    fn end(&self) -> u64 {
        let e = |r: &Option<Rc<RunResult>>| r.as_ref().map_or(0, |r| r.trace.end);
        e(&self.a).max(e(&self.b))
    }

    fn draw(&self) {
        let win = Window::around(self.playhead, self.window_ms * 1000.0);
        for (r, c, label) in [
            (&self.a, &self.canvas_a, "A"),
            (&self.b, &self.canvas_b, "B"),
        ] {
            let (Some(r), Some(canvas)) = (r, c.cast::<HtmlCanvasElement>()) else {
                continue;
            };
            if let Some((ctx, g)) = view::context(&canvas, r.trace.lanes(), 0) {
                let _ = view::draw(&ctx, &g, &r.trace, win, label, None, true);
            }
        }
    }

    fn draw_latency(&mut self) {
        if self.latency_drawn {
            return;
        }
        if let (Some(a), Some(b), Some(c)) =
            (&self.a, &self.b, self.canvas_h.cast::<HtmlCanvasElement>())
        {
            self.latency_drawn = true;
            let (edges, ca, cb) = if a.latencies_us.is_empty() && b.latencies_us.is_empty() {
                (Vec::new(), Vec::new(), Vec::new())
            } else {
                latency_histogram(&a.latencies_us, &b.latencies_us, 40)
            };
            match crate::charts::draw_latency(&c, &edges, &ca, &cb) {
                Ok(h) => *self.hover.borrow_mut() = Some(h),
                Err(e) => web_sys::console::warn_1(&format!("latency chart: {e}").into()),
            }
        }
    }
}

impl AbPage {
    /// Both sides over several seeds: each figure's mean, p50 and p99 (as
    /// `ovsdb-scope compare NAME --seeds N` prints them).
    fn seeds_view(&self, ctx: &Context<Self>, p: &simview::ab::AbPreset) -> Html {
        let link = ctx.link();
        let busy = self.seeds_progress.is_some();
        let buttons = html! {
            <p class="controls" title="One seed can mislead (an election timer drawn early or late): run both sides over several seeds and compare each figure's mean, p50 and p99">
                { "Over several seeds: " }
                { for SEED_COUNTS.iter().map(|&n| html! {
                    <button data-testid={format!("ab-seeds-{n}")} disabled={busy}
                        onclick={link.callback(move |_| Msg::Seeds(n))}>{ format!("{n} seeds") }</button>
                }) }
                if let Some((done, all)) = self.seeds_progress {
                    <progress data-testid="ab-seeds-progress" value={done.to_string()} max={all.to_string()} />
                    <span>{ format!(" {done:.0} of {all:.0} seeds") }</span>
                }
            </p>
        };
        let Some(t) = &self.seeds else {
            return buttons;
        };
        let three = |v: &[f64; 3]| {
            format!(
                "{} / {} / {}",
                format_num(v[0]),
                format_num(v[1]),
                format_num(v[2])
            )
        };
        html! {
            <>
                { buttons }
                <table class="ab-table" data-testid="ab-seeds-table" data-seeds={t.seeds.to_string()}
                       data-first-seed={t.first_seed.to_string()} data-violations={t.violations.len().to_string()}>
                    <caption>{ format!("{}: seeds {}–{} (mean / p50 / p99); A = {}, B = {}", t.preset, t.first_seed,
                        t.first_seed + t.seeds - 1, p.a_label, p.b_label) }</caption>
                    <thead><tr><th>{ "Figure" }</th><th>{ "A" }</th><th>{ "B" }</th><th>{ "A / B (means)" }</th></tr></thead>
                    <tbody>
                        { for t.rows.iter().map(|r| html! {
                            <tr data-name={r.name.clone()} data-a={r.a[0].to_string()} data-b={r.b[0].to_string()}>
                                <td title={r.name.clone()}>{ figure(&r.name).map_or(r.name.as_str(), |f| f.label) }</td>
                                <td>{ three(&r.a) }</td><td>{ three(&r.b) }</td>
                                <td>{ if r.b[0] != 0.0 { format!("{:.2}", r.a[0] / r.b[0]) } else { "–".to_string() } }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            </>
        }
    }
}

impl Component for AbPage {
    type Message = Msg;
    type Properties = Props;

    fn create(ctx: &Context<Self>) -> Self {
        let worker = SimWorker::new(ctx.link().callback(Msg::Worker));
        let mut error = None;
        match ab_preset(&ctx.props().preset) {
            Some(p) => {
                worker.run(1, &p.spec_a(ctx.props().seed));
                worker.run(2, &p.spec_b(ctx.props().seed));
            }
            None => error = Some(format!("unknown comparison '{}'", ctx.props().preset)),
        }
        AbPage {
            _worker: worker,
            a: None,
            b: None,
            error,
            playhead: 0,
            playing: false,
            last_ts: None,
            window_ms: 3000.0,
            frame: None,
            link: ctx.link().clone(),
            canvas_a: NodeRef::default(),
            canvas_b: NodeRef::default(),
            canvas_h: NodeRef::default(),
            hover: Rc::default(),
            hover_text: None,
            latency_drawn: false,
            seeds: None,
            seeds_progress: None,
            _resize: {
                let link = ctx.link().clone();
                crate::charts::on_resize(move || link.send_message(Msg::Resize))
            },
        }
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::Seeds(n) => {
                self.seeds = None;
                self.seeds_progress = Some((0.0, n as f64));
                self._worker
                    .ab_seeds(3, &ctx.props().preset, ctx.props().seed, n);
            }
            Msg::Worker(Reply::Seeds { id: 3, table }) => {
                self.seeds = Some(table);
                self.seeds_progress = None;
            }
            Msg::Worker(Reply::Progress { id: 3, now, stop }) => {
                self.seeds_progress = Some((now, stop));
            }
            Msg::Worker(Reply::Result { id, result, .. }) => {
                if id == 1 {
                    self.a = Some(result);
                    self.latency_drawn = false;
                } else {
                    self.b = Some(result);
                    self.latency_drawn = false;
                }
                if let (Some(a), Some(b)) = (&self.a, &self.b) {
                    // Start where the writes start.
                    let first = |r: &RunResult| r.trace.writes.first().map(|w| w.start);
                    self.playhead = first(a).or(first(b)).unwrap_or(0);
                }
            }
            Msg::Worker(Reply::Error { message, id }) => {
                if id == 3 {
                    self.seeds_progress = None;
                }
                self.error = Some(message)
            }
            Msg::Worker(
                Reply::Progress { .. }
                | Reply::Idl { .. }
                | Reply::Files { .. }
                | Reply::Seeds { .. }
                | Reply::Knobs(_),
            ) => return false,
            Msg::Seek(t) => self.playhead = t.min(self.end()),
            Msg::Hover(at) => {
                let text = at.and_then(|(x, y)| self.hover.borrow().as_ref().and_then(|h| h(x, y)));
                if text == self.hover_text {
                    return false;
                }
                self.hover_text = text;
            }
            Msg::Resize => self.latency_drawn = false,
            Msg::Zoom(f) => self.window_ms = (self.window_ms * f).clamp(5.0, 600_000.0),
            Msg::Toggle => {
                self.playing = !self.playing;
                self.last_ts = None;
                if self.playing {
                    self.request_frame();
                }
            }
            Msg::Frame(ts) => {
                if !self.playing {
                    return false;
                }
                if let Some(last) = self.last_ts {
                    self.playhead = (self.playhead
                        + ((ts - last).clamp(0.0, 100.0) * 1000.0) as u64)
                        .min(self.end());
                }
                self.last_ts = Some(ts);
                if self.playhead >= self.end() {
                    self.playing = false;
                } else {
                    self.request_frame();
                }
            }
        }
        true
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let p = ab_preset(&ctx.props().preset);
        let seed = ctx.props().seed;
        let nav = html! {
            <p class="presets">{ "Comparisons: " }
                { for AB_PRESETS.iter().map(|p| html! {
                    <a href={format!("#ab={}&seed={seed}", p.name)} data-testid={format!("ab-preset-{}", p.name)}>{ p.name }{ " " }</a>
                }) }
                <label>{ " seed " }
                    <input size="6" data-testid="ab-seed" title="Seed of both runs" value={seed.to_string()}
                        onchange={
                            let preset = ctx.props().preset.clone();
                            Callback::from(move |e: Event| {
                                let v = super::page::value_of(&e);
                                if let (Ok(seed), Some(w)) = (v.trim().parse::<u64>(), web_sys::window()) {
                                    let _ = w.location().set_hash(&format!("ab={preset}&seed={seed}"));
                                }
                            })
                        } />
                </label>
            </p>
        };
        let Some(p) = p else {
            return html! { <div class="ab-page">{ nav }<div class="error" role="alert">{ self.error.clone().unwrap_or_default() }</div></div> };
        };
        let (a, b) = (self.a.as_deref(), self.b.as_deref());
        let table = match (a, b) {
            (Some(a), Some(b)) => rows(a, b),
            _ => Vec::new(),
        };
        let head = p.headline_row(&table);
        let unit = |r: &AbRow| {
            if r.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.unit)
            }
        };
        let end = self.end();
        html! {
            <div class="ab-page" data-testid="ab-page">
                { nav }
                <h1>{ p.words().title }</h1>
                <p>{ p.words().explain }</p>
                <p>{ format!("Scenario {} · seed {seed} · A = {} · B = {}", p.scenario, p.a_label, p.b_label) }</p>
                if let Some(e) = &self.error {
                    <div class="error" role="alert">{ e.clone() }</div>
                }
                if a.is_none() || b.is_none() {
                    <p class="busy" data-testid="ab-status" data-value="running">{ "simulating both runs in the worker…" }</p>
                }
                if let Some(h) = head {
                    <dl class="figures" data-testid="ab-headline" data-name={h.name}>
                        <dt>{ format!("A ({}): {}", p.a_label, h.label) }</dt>
                        <dd data-testid="ab-a-head" data-value={h.a.unwrap_or_default().to_string()}>{ cell(h.a) }{ " " }{ h.unit }</dd>
                        <dt>{ format!("B ({}): {}", p.b_label, h.label) }</dt>
                        <dd data-testid="ab-b-head" data-value={h.b.unwrap_or_default().to_string()}>{ cell(h.b) }{ " " }{ h.unit }</dd>
                        <dt>{ format!("Ratio A/B of {}", h.label) }</dt>
                        <dd data-testid="ab-ratio" data-value={h.ratio().map(|v| v.to_string()).unwrap_or_default()}>{ h.ratio().map_or("–".into(), |r| format!("{r:.1}×")) }</dd>
                    </dl>
                } else if !table.is_empty() {
                    <p data-testid="ab-headline">{ "No headline: the two runs do not both have this comparison's figure." }</p>
                }
                <table class="ab-table" data-testid="ab-table">
                    <thead><tr><th>{ "Figure" }</th><th>{ "A" }</th><th>{ "B" }</th><th>{ "B − A" }</th><th>{ "A / B" }</th></tr></thead>
                    <tbody>
                        { for table.iter().map(|r| html! {
                            <tr>
                                <td>{ r.label }{ unit(r) }</td>
                                <td>{ cell(r.a) }</td><td>{ cell(r.b) }</td>
                                <td>{ cell(r.delta()) }</td>
                                <td>{ r.ratio().map_or("–".into(), |x| format!("{x:.2}")) }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
                { self.seeds_view(ctx, p) }
                <section class="controls">
                    <button data-testid="ab-play" title="Play / pause both runs" onclick={link.callback(|_| Msg::Toggle)}>{ if self.playing { "Pause" } else { "Play" } }</button>
                    <button onclick={link.callback(|_| Msg::Zoom(0.5))} title="zoom in">{ "+" }</button>
                    <button onclick={link.callback(|_| Msg::Zoom(2.0))} title="zoom out">{ "−" }</button>
                    <input type="range" class="scrub" title="Move the playhead" min="0" max={end.to_string()} value={self.playhead.to_string()} step="1000"
                        oninput={link.callback(|e: InputEvent| {
                            let t: Option<web_sys::EventTarget> = e.target();
                            let v = t.and_then(|t| js_sys::Reflect::get(&t, &JsValue::from_str("value")).ok())
                                .and_then(|v| v.as_string()).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
                            Msg::Seek(v as u64)
                        })} />
                    <span>{ format!(" {:.1} ms (shared time axis, window {:.0} ms)", self.playhead as f64 / 1000.0, self.window_ms) }</span>
                </section>
                <canvas ref={self.canvas_a.clone()} class="sim-canvas" data-testid="ab-timeline-a" />
                <canvas ref={self.canvas_b.clone()} class="sim-canvas" data-testid="ab-timeline-b" />
                <h3>{ "Write latency distribution (log-scale bins; A red, B blue)" }</h3>
                <canvas ref={self.canvas_h.clone()} class="sim-canvas" data-testid="ab-histogram"
                    data-writes-a={self.a.as_ref().map_or(0, |r| r.latencies_us.len()).to_string()}
                    data-writes-b={self.b.as_ref().map_or(0, |r| r.latencies_us.len()).to_string()}
                    title={self.hover_text.clone().unwrap_or_default()}
                    data-hover={self.hover_text.clone().unwrap_or_default()}
                    onmousemove={link.callback(|e: MouseEvent| Msg::Hover(Some((e.offset_x(), e.offset_y()))))}
                    onmouseleave={link.callback(|_| Msg::Hover(None))} />
            </div>
        }
    }

    fn rendered(&mut self, _ctx: &Context<Self>, _first: bool) {
        self.draw();
        self.draw_latency();
    }
}
