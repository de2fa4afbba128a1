//! The IDL panel: the `write-changed-only` and `index-vs-hash` experiments
//! of the `idl` crate, run in the simulation worker with the knobs set
//! here, shown as a table and bar charts of bytes and operations.

use serde_json::Value;
use simview::link::Route;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use super::page::format_num;
use super::{replace_hash, Reply, SimWorker};

/// The experiments this page runs (their knobs, defaults and bounds are
/// `idl::params`, shared with the CLI).
pub const SHOWN: [&str; 2] = ["write-changed-only", "index-vs-hash"];

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
    /// The pointer over the chart (canvas pixels), or off it.
    Hover(Option<(i32, i32)>),
    Resize,
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
    /// The chart shows the report held.
    drawn: bool,
    hover: Option<crate::charts::Hover>,
    hover_text: Option<String>,
    _resize: gloo_events::EventListener,
}

fn knobs_for(experiment: &str, given: &[(String, String)]) -> Vec<(String, String)> {
    let params = idl::params::experiment(experiment).map_or(&[][..], |e| e.params);
    params
        .iter()
        .map(|p| {
            let v = given
                .iter()
                .find(|(n, _)| n == p.name)
                .map_or(p.default.to_string(), |(_, v)| v.clone());
            (p.name.to_string(), v)
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

    fn draw(&mut self) {
        if self.drawn {
            return;
        }
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
        let names: Vec<String> = items
            .iter()
            .map(|i| {
                i.get(name_key)
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string()
            })
            .collect();
        let panels: Vec<crate::charts::Panel> = figures
            .iter()
            .map(|(key, label)| crate::charts::Panel {
                title: label.to_string(),
                values: items
                    .iter()
                    .map(|i| i.get(*key).and_then(Value::as_f64).unwrap_or(0.0))
                    .collect(),
            })
            .collect();
        self.drawn = true;
        match crate::charts::draw_panels(&canvas, &names, &panels) {
            Ok(h) => self.hover = Some(h),
            Err(e) => self.error = Some(format!("the chart could not be drawn: {e}")),
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
            .filter(|e| SHOWN.contains(&e.as_str()))
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
            drawn: false,
            hover: None,
            hover_text: None,
            _resize: {
                let link = ctx.link().clone();
                crate::charts::on_resize(move || link.send_message(Msg::Resize))
            },
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
                self.drawn = false;
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
            Msg::Hover(at) => {
                let text = at.and_then(|(x, y)| self.hover.as_ref().and_then(|h| h(x, y)));
                if text == self.hover_text {
                    return false;
                }
                self.hover_text = text;
            }
            Msg::Resize => self.drawn = false,
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
        let stale = self.error.is_some() && self.report.is_some();
        html! {
            <div class={classes!("sim-page", "idl-panel", stale.then_some("stale"))} data-testid="idl-panel">
                <p class="presets">{ "Experiments: " }
                    { for SHOWN.iter().map(|e| html! {
                        <a href={format!("#idl={e}")} data-testid={format!("idl-{e}")}>{ *e }{ " " }</a>
                    }) }
                </p>
                <h1>{ format!("IDL experiment: {}", self.experiment) }</h1>
                <div class="controls">
                    { for self.knobs.iter().enumerate().map(|(i, (k, v))| html! {
                        <label title={idl::params::experiment(&self.experiment)
                            .and_then(|e| e.params.iter().find(|p| p.name == k))
                            .map_or("", |p| p.help)}>{ format!(" {k} ") }
                            <input size="7" value={v.clone()} data-testid={format!("idl-knob-{k}")}
                                onchange={link.callback(move |e: Event| Msg::Knob(i, super::page::value_of(&e)))} />
                        </label>
                    }) }
                    <button data-testid="idl-run" title="Run the experiment with these parameters" onclick={link.callback(|_| Msg::Run)}>{ "Run" }</button>
                    if self.busy {
                        <span class="busy" data-testid="idl-status" data-value="running">{ " running in the worker…" }</span>
                    }
                </div>
                if let Some(e) = &self.error {
                    <div class="error" role="alert" data-testid="idl-error">{ e.clone() }
                        if stale { { super::STALE } }
                    </div>
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
                <canvas ref={self.canvas.clone()} class="sim-canvas" data-testid="idl-chart"
                    data-panels={charted(&self.experiment).1.len().to_string()}
                    title={self.hover_text.clone().unwrap_or_default()}
                    data-hover={self.hover_text.clone().unwrap_or_default()}
                    onmousemove={link.callback(|e: MouseEvent| Msg::Hover(Some((e.offset_x(), e.offset_y()))))}
                    onmouseleave={link.callback(|_| Msg::Hover(None))} />
            </div>
        }
    }

    fn rendered(&mut self, _ctx: &Context<Self>, _first: bool) {
        self.draw();
    }
}
