//! The IDL panel: the `write-changed-only` and `index-vs-hash` experiments
//! of the `idl` crate, run in the simulation worker with the knobs set
//! here, shown as a table and bar charts of bytes and operations.

use serde_json::Value;
use simview::link::Route;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};
use yew::prelude::*;

use super::page::format_num;
use super::{replace_hash, Reply, SimWorker};

/// (experiment, [(knob, default)]).
pub const EXPERIMENTS: &[(&str, &[(&str, &str)])] = &[
    (
        "write-changed-only",
        &[("rows", "2000"), ("columns", "6"), ("changed", "1")],
    ),
    (
        "index-vs-hash",
        &[
            ("load_balancers", "1000"),
            ("service_monitors", "4000"),
            ("updates_per_sec", "1000"),
            ("evaluations_per_sec", "1"),
            ("lookups_per_evaluation", "16"),
            ("seconds", "2"),
        ],
    ),
];

/// Figures charted per experiment: (key in each item, label).
fn charted(experiment: &str) -> (&'static str, &'static [(&'static str, &'static str)]) {
    if experiment == "index-vs-hash" {
        (
            "strategies",
            &[
                ("model_ops", "model cost (operations)"),
                ("index_comparisons", "index comparisons"),
                ("hash_inserts", "hash inserts"),
                ("lookups", "lookups"),
                ("tracked_rows_walked", "tracked rows walked"),
                ("ms", "measured ms (this browser)"),
            ],
        )
    } else {
        (
            "modes",
            &[
                ("request_bytes", "request bytes"),
                ("request_ops", "request operations"),
                ("update_bytes", "update bytes to other clients"),
                ("reply_bytes", "reply bytes"),
                ("rows_changed_on_server", "rows changed on the server"),
                ("server_ms", "server ms (this browser)"),
            ],
        )
    }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub params: Vec<(String, String)>,
}

pub enum Msg {
    Worker(Reply),
    Knob(usize, String),
    Run,
}

pub struct IdlPanel {
    worker: SimWorker,
    experiment: String,
    knobs: Vec<(String, String)>,
    report: Option<Value>,
    error: Option<String>,
    busy: bool,
    id: u32,
    canvas: NodeRef,
}

fn knobs_for(experiment: &str, given: &[(String, String)]) -> Vec<(String, String)> {
    let defaults = EXPERIMENTS
        .iter()
        .find(|(e, _)| *e == experiment)
        .map_or(&[][..], |(_, k)| *k);
    defaults
        .iter()
        .map(|(k, d)| {
            let v = given
                .iter()
                .find(|(n, _)| n == k)
                .map_or(d.to_string(), |(_, v)| v.clone());
            (k.to_string(), v)
        })
        .collect()
}

impl IdlPanel {
    fn run(&mut self) {
        self.id += 1;
        self.busy = true;
        self.error = None;
        self.worker.idl(self.id, &self.experiment, &self.knobs);
        let mut params = vec![("idl".to_string(), self.experiment.clone())];
        params.extend(self.knobs.iter().cloned());
        replace_hash(&Route::Idl { params }.to_hash());
    }

    fn draw(&self) {
        let (Some(report), Some(canvas)) = (&self.report, self.canvas.cast::<HtmlCanvasElement>())
        else {
            return;
        };
        let (list_key, figures) = charted(&self.experiment);
        let Some(items) = report.get(list_key).and_then(Value::as_array) else {
            return;
        };
        let name_key = if list_key == "modes" {
            "mode"
        } else {
            "strategy"
        };
        let w = (canvas.client_width() as f64).max(320.0);
        let row_h = 16.0;
        let panel_h = 22.0 + items.len() as f64 * row_h + 8.0;
        let cols = 2.0;
        let rows = (figures.len() as f64 / cols).ceil();
        let h = rows * panel_h;
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
        let colors = ["#c8553d", "#2a6fdb", "#3a9d5d", "#8d3aa8"];
        let pw = w / cols;
        for (fi, (key, label)) in figures.iter().enumerate() {
            let px = (fi % 2) as f64 * pw;
            let py = (fi / 2) as f64 * panel_h;
            ctx.set_fill_style_str("#222");
            ctx.set_font("bold 12px sans-serif");
            let _ = ctx.fill_text(label, px + 6.0, py + 14.0);
            ctx.set_font("11px sans-serif");
            let vals: Vec<f64> = items
                .iter()
                .map(|i| i.get(*key).and_then(Value::as_f64).unwrap_or(0.0))
                .collect();
            let max = vals.iter().copied().fold(0.0, f64::max).max(1e-9);
            let label_w = 150.0;
            let bar_max = pw - label_w - 90.0;
            for (ii, (item, v)) in items.iter().zip(&vals).enumerate() {
                let y = py + 22.0 + ii as f64 * row_h;
                let name = item.get(name_key).and_then(Value::as_str).unwrap_or("?");
                ctx.set_fill_style_str("#333");
                let _ = ctx.fill_text(name, px + 6.0, y + 11.0);
                ctx.set_fill_style_str(colors[ii % colors.len()]);
                let bw = (v / max * bar_max).max(if *v > 0.0 { 1.0 } else { 0.0 });
                ctx.fill_rect(px + label_w, y + 2.0, bw, row_h - 4.0);
                ctx.set_fill_style_str("#333");
                let _ = ctx.fill_text(&format_num(*v), px + label_w + bw + 4.0, y + 11.0);
            }
        }
    }
}

impl Component for IdlPanel {
    type Message = Msg;
    type Properties = Props;

    fn create(ctx: &Context<Self>) -> Self {
        let params = &ctx.props().params;
        let experiment = params
            .first()
            .map(|(_, v)| v.clone())
            .filter(|e| EXPERIMENTS.iter().any(|(n, _)| n == e))
            .unwrap_or_else(|| "write-changed-only".to_string());
        let knobs = knobs_for(&experiment, params);
        let mut p = IdlPanel {
            worker: SimWorker::new(ctx.link().callback(Msg::Worker)),
            experiment,
            knobs,
            report: None,
            error: None,
            busy: false,
            id: 0,
            canvas: NodeRef::default(),
        };
        p.run();
        p
    }

    fn update(&mut self, _ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::Worker(Reply::Idl { id, report }) => {
                if id != self.id {
                    return false;
                }
                self.busy = false;
                match serde_json::from_str::<Value>(&report) {
                    Ok(v) => self.report = Some(v),
                    Err(e) => self.error = Some(format!("cannot read the report: {e}")),
                }
            }
            Msg::Worker(Reply::Error { message, .. }) => {
                self.busy = false;
                self.error = Some(message);
            }
            Msg::Worker(_) => return false,
            Msg::Knob(i, v) => {
                if let Some(k) = self.knobs.get_mut(i) {
                    k.1 = v;
                }
                return false;
            }
            Msg::Run => self.run(),
        }
        true
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let (list_key, figures) = charted(&self.experiment);
        let items = self
            .report
            .as_ref()
            .and_then(|r| r.get(list_key))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let name_key = if list_key == "modes" {
            "mode"
        } else {
            "strategy"
        };
        let headline = |key: &str| {
            self.report
                .as_ref()
                .and_then(|r| r.get(key))
                .and_then(Value::as_f64)
        };
        let (head_id, head_label, head_key) = if self.experiment == "index-vs-hash" {
            (
                "idl-crossover",
                "Evaluations/s above which the persistent index is cheaper (model)",
                "crossover_evaluations_per_sec",
            )
        } else {
            (
                "idl-ratio",
                "Request bytes, default / write-changed-only",
                "ratio_default_over_wco",
            )
        };
        let head = headline(head_key);
        html! {
            <div class="sim-page idl-panel" data-testid="idl-panel">
                <p class="presets">{ "Experiments: " }
                    { for EXPERIMENTS.iter().map(|(e, _)| html! {
                        <a href={format!("#idl={e}")} data-testid={format!("idl-{e}")}>{ *e }{ " " }</a>
                    }) }
                </p>
                <h2>{ format!("IDL experiment: {}", self.experiment) }</h2>
                <div class="controls">
                    { for self.knobs.iter().enumerate().map(|(i, (k, v))| html! {
                        <label>{ format!(" {k} ") }
                            <input size="7" value={v.clone()} data-testid={format!("idl-knob-{k}")}
                                onchange={link.callback(move |e: Event| Msg::Knob(i, super::page::value_of(&e)))} />
                        </label>
                    }) }
                    <button data-testid="idl-run" onclick={link.callback(|_| Msg::Run)}>{ "Run" }</button>
                    if self.busy {
                        <span class="busy" data-testid="idl-status" data-value="running">{ " running in the worker…" }</span>
                    }
                </div>
                if let Some(e) = &self.error {
                    <div class="error" role="alert">{ e.clone() }</div>
                }
                <dl class="figures">
                    <dt>{ head_label }</dt>
                    <dd data-testid={head_id} data-value={head.map(|v| v.to_string()).unwrap_or_default()}>
                        { head.map_or("–".into(), format_num) }
                    </dd>
                </dl>
                <table class="ab-table" data-testid="idl-table">
                    <thead><tr><th>{ name_key }</th>{ for figures.iter().map(|(_, l)| html! { <th>{ *l }</th> }) }</tr></thead>
                    <tbody>
                        { for items.iter().map(|it| html! {
                            <tr>
                                <td>{ it.get(name_key).and_then(Value::as_str).unwrap_or("?").to_string() }</td>
                                { for figures.iter().map(|(k, _)| html! {
                                    <td>{ it.get(*k).and_then(Value::as_f64).map_or("–".into(), format_num) }</td>
                                }) }
                            </tr>
                        }) }
                    </tbody>
                </table>
                <canvas ref={self.canvas.clone()} class="sim-canvas" data-testid="idl-chart" />
            </div>
        }
    }

    fn rendered(&mut self, _ctx: &Context<Self>, _first: bool) {
        self.draw();
    }
}
