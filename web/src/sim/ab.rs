//! A/B design review: two runs of the same seed on a shared time axis, the
//! metrics table with deltas and ratios, and the latency distribution.

use std::rc::Rc;

use simview::ab::{ab_preset, latency_histogram, rows, AB_PRESETS};
use simview::RunResult;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
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
}

pub struct AbPage {
    _worker: SimWorker,
    a: Option<Rc<RunResult>>,
    b: Option<Rc<RunResult>>,
    error: Option<String>,
    playhead: u64,
    playing: bool,
    last_ts: Option<f64>,
    window_ms: f64,
    raf: Closure<dyn FnMut(f64)>,
    canvas_a: NodeRef,
    canvas_b: NodeRef,
    canvas_h: NodeRef,
}

fn cell(v: Option<f64>) -> String {
    v.map_or("–".into(), format_num)
}

impl AbPage {
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
            if let Some((ctx, g)) = view::context(&canvas, r.trace.servers()) {
                let _ = view::draw(&ctx, &g, &r.trace, win, label, None);
            }
        }
        if let (Some(a), Some(b), Some(c)) =
            (&self.a, &self.b, self.canvas_h.cast::<HtmlCanvasElement>())
        {
            draw_histogram(&c, &a.latencies_us, &b.latencies_us);
        }
    }
}

fn draw_histogram(canvas: &HtmlCanvasElement, a: &[u64], b: &[u64]) {
    let w = (canvas.client_width() as f64).max(320.0);
    let h = 180.0;
    canvas.set_width(w as u32);
    canvas.set_height(h as u32);
    let Some(ctx) = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    ctx.set_fill_style_str("#fff");
    ctx.fill_rect(0.0, 0.0, w, h);
    ctx.set_font("11px sans-serif");
    ctx.set_fill_style_str("#333");
    if a.is_empty() && b.is_empty() {
        let _ = ctx.fill_text("No client writes in these runs.", 10.0, 20.0);
        return;
    }
    let bins = 40;
    let (edges, ca, cb) = latency_histogram(a, b, bins);
    let max = ca.iter().chain(&cb).copied().max().unwrap_or(1).max(1) as f64;
    let (l, r, top, bottom) = (40.0, w - 10.0, 20.0, h - 24.0);
    let bw = (r - l) / bins as f64;
    for (i, (&x, &y)) in ca.iter().zip(&cb).enumerate() {
        let xx = l + i as f64 * bw;
        ctx.set_fill_style_str("rgba(200,60,40,0.75)");
        let ha = x as f64 / max * (bottom - top);
        ctx.fill_rect(xx, bottom - ha, bw * 0.48, ha);
        ctx.set_fill_style_str("rgba(40,90,200,0.75)");
        let hb = y as f64 / max * (bottom - top);
        ctx.fill_rect(xx + bw * 0.5, bottom - hb, bw * 0.48, hb);
    }
    ctx.set_fill_style_str("#333");
    for i in (0..bins).step_by(8) {
        let _ = ctx.fill_text(&format!("{:.2} ms", edges[i]), l + i as f64 * bw, h - 8.0);
    }
    let _ = ctx.fill_text(&format!("{}", max as u64), 4.0, top + 8.0);
    ctx.set_fill_style_str("rgba(200,60,40,0.9)");
    let _ = ctx.fill_text("A", r - 60.0, 14.0);
    ctx.set_fill_style_str("rgba(40,90,200,0.9)");
    let _ = ctx.fill_text("B", r - 30.0, 14.0);
}

impl Component for AbPage {
    type Message = Msg;
    type Properties = Props;

    fn create(ctx: &Context<Self>) -> Self {
        let worker = SimWorker::new(ctx.link().callback(Msg::Worker));
        let link = ctx.link().clone();
        let raf = Closure::<dyn FnMut(f64)>::new(move |ts: f64| link.send_message(Msg::Frame(ts)));
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
            raf,
            canvas_a: NodeRef::default(),
            canvas_b: NodeRef::default(),
            canvas_h: NodeRef::default(),
        }
    }

    fn update(&mut self, _ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::Worker(Reply::Result { id, result, .. }) => {
                if id == 1 {
                    self.a = Some(result);
                } else {
                    self.b = Some(result);
                }
                if let (Some(a), Some(b)) = (&self.a, &self.b) {
                    // Start where the writes start.
                    let first = |r: &RunResult| r.trace.writes.first().map(|w| w.start);
                    self.playhead = first(a).or(first(b)).unwrap_or(0);
                }
            }
            Msg::Worker(Reply::Error { message, .. }) => self.error = Some(message),
            Msg::Worker(Reply::Progress { .. } | Reply::Idl { .. } | Reply::Files { .. }) => {
                return false
            }
            Msg::Seek(t) => self.playhead = t.min(self.end()),
            Msg::Zoom(f) => self.window_ms = (self.window_ms * f).clamp(5.0, 600_000.0),
            Msg::Toggle => {
                self.playing = !self.playing;
                self.last_ts = None;
                if self.playing {
                    if let Some(w) = web_sys::window() {
                        let _ = w.request_animation_frame(self.raf.as_ref().unchecked_ref());
                    }
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
                } else if let Some(w) = web_sys::window() {
                    let _ = w.request_animation_frame(self.raf.as_ref().unchecked_ref());
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
                    <input size="6" data-testid="ab-seed" value={seed.to_string()}
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
        let total = |r: Option<&RunResult>| r.and_then(|r| r.figure("txns.total_ms"));
        let head = |r: Option<&RunResult>| r.and_then(|r| r.figure(p.headline));
        let ratio = match (head(a), head(b)) {
            (Some(x), Some(y)) if y != 0.0 => Some(x / y),
            _ => None,
        };
        let table = match (a, b) {
            (Some(a), Some(b)) => rows(a, b),
            _ => Vec::new(),
        };
        let end = self.end();
        html! {
            <div class="ab-page" data-testid="ab-page">
                { nav }
                <h2>{ p.title }</h2>
                <p>{ p.explain }</p>
                <p>{ format!("Scenario {} · seed {seed} · A = {} · B = {}", p.scenario, p.a_label, p.b_label) }</p>
                if let Some(e) = &self.error {
                    <div class="error" role="alert">{ e.clone() }</div>
                }
                if a.is_none() || b.is_none() {
                    <p class="busy" data-testid="ab-status" data-value="running">{ "simulating both runs in the worker…" }</p>
                }
                <dl class="figures">
                    <dt>{ format!("A ({}) total write time", p.a_label) }</dt>
                    <dd data-testid="ab-a-total-ms" data-value={total(a).map(|v| v.to_string()).unwrap_or_default()}>{ cell(total(a)) }{ " ms" }</dd>
                    <dt>{ format!("B ({}) total write time", p.b_label) }</dt>
                    <dd data-testid="ab-b-total-ms" data-value={total(b).map(|v| v.to_string()).unwrap_or_default()}>{ cell(total(b)) }{ " ms" }</dd>
                    <dt>{ format!("Ratio A/B of {}", p.headline) }</dt>
                    <dd data-testid="ab-ratio" data-value={ratio.map(|v| v.to_string()).unwrap_or_default()}>{ ratio.map_or("–".into(), |r| format!("{r:.1}×")) }</dd>
                </dl>
                <table class="ab-table" data-testid="ab-table">
                    <thead><tr><th>{ "Figure" }</th><th>{ "A" }</th><th>{ "B" }</th><th>{ "B − A" }</th><th>{ "A / B" }</th></tr></thead>
                    <tbody>
                        { for table.iter().map(|r| html! {
                            <tr>
                                <td>{ r.label }{ if r.unit.is_empty() { String::new() } else { format!(" ({})", r.unit) } }</td>
                                <td>{ cell(r.a) }</td><td>{ cell(r.b) }</td>
                                <td>{ cell(r.delta()) }</td>
                                <td>{ r.ratio().map_or("–".into(), |x| format!("{x:.2}")) }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
                <section class="controls">
                    <button data-testid="ab-play" onclick={link.callback(|_| Msg::Toggle)}>{ if self.playing { "Pause" } else { "Play" } }</button>
                    <button onclick={link.callback(|_| Msg::Zoom(0.5))}>{ "+" }</button>
                    <button onclick={link.callback(|_| Msg::Zoom(2.0))}>{ "−" }</button>
                    <input type="range" class="scrub" min="0" max={end.to_string()} value={self.playhead.to_string()} step="1000"
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
                <canvas ref={self.canvas_h.clone()} class="sim-canvas" data-testid="ab-histogram" />
            </div>
        }
    }

    fn rendered(&mut self, _ctx: &Context<Self>, _first: bool) {
        self.draw();
    }
}
