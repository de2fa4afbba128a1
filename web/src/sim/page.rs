//! Simulation mode: pick a preset or edit a scenario, run it in the worker,
//! play it back on the space-time diagram, and fork it with interventions.

use std::rc::Rc;

use ovsdb::StorageMode;
use simview::trace::{Trace, DOWN, UP};
use simview::{Fault, FaultAction, Node, Route, RunResult, RunSpec, Target};
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use super::view::{self, Window};
use super::{replace_hash, Reply, SimWorker};

const SPEEDS: &[f64] = &[0.1, 0.25, 1.0, 4.0, 16.0, 64.0];

#[derive(Properties, PartialEq)]
pub struct Props {
    pub spec: RunSpec,
    #[prop_or_default]
    pub t_us: Option<u64>,
    /// Inside the tour: leave the URL hash alone.
    #[prop_or_default]
    pub embedded: bool,
    /// Initial width of the visible window, ms.
    #[prop_or_default]
    pub window_ms: Option<f64>,
    /// Draw no messages (a tour step about entry sizes).
    #[prop_or_default]
    pub hide_messages: bool,
}

pub enum Msg {
    Worker(Reply),
    Toggle,
    Frame(f64),
    Seek(u64),
    Step(bool),
    Speed(f64),
    Zoom(f64),
    /// An action at the playhead, and maybe a second fault at its own time
    /// ("drop the next message" ends its loss after the next send).
    Intervene(FaultAction, Option<Fault>),
    BackToParent,
    Target(usize),
    Peer(usize),
    Timer(String),
    EditText(String),
    EditProfile(String),
    EditSeed(String),
    EditSets(String),
    EditScenario(String),
    Apply,
    Key(KeyboardEvent),
    /// Draw entry sizes as stored (None), as column diffs or full values.
    SizesAs(Option<StorageMode>),
    ExportJson,
    ExportDb,
    /// Draw one Southbound chassis's controller as a lane of its own
    /// (`None`: only the aggregated lane).
    Expand(Option<u32>),
}

pub struct SimPage {
    worker: SimWorker,
    spec: RunSpec,
    parents: Vec<(RunSpec, Rc<RunResult>)>,
    run_id: u32,
    result: Option<Rc<RunResult>>,
    progress: Option<f64>,
    error: Option<String>,
    run_ms: f64,
    /// Runs this page's worker has answered: its first is slower (the
    /// browser compiles the simulator's hot code while it runs).
    runs: u32,
    playhead: u64,
    playing: bool,
    speed: f64,
    window_ms: f64,
    /// Entry sizes drawn as stored (None), as diffs or as full values.
    sizes_as: Option<StorageMode>,
    /// The Southbound chassis drawn on a lane of its own (0-based).
    expanded: Option<u32>,
    last_ts: Option<f64>,
    /// The next playback frame (cancelled when dropped), and the link that
    /// asks for it.
    frame: Option<gloo_render::AnimationFrame>,
    link: html::Scope<Self>,
    canvas: NodeRef,
    frame_ms: f64,
    frames: u32,
    target: usize,
    peer: usize,
    timer: String,
    edit_text: String,
    /// The scenario text was typed in since the last run or reset: Run
    /// runs it as a custom scenario.
    edit_dirty: bool,
    edit_profile: String,
    edit_seed: String,
    edit_sets: String,
    autoplay: bool,
    hide_messages: bool,
    embedded: bool,
    exporting: bool,
    /// The knobs the Knobs field takes, as the worker lists them
    /// ([`Reply::Knobs`]), for the editor's help.
    knobs: String,
}

pub fn value_of(e: &Event) -> String {
    e.target()
        .and_then(|t| js_sys::Reflect::get(&t, &JsValue::from_str("value")).ok())
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

fn sets_text(spec: &RunSpec) -> String {
    spec.sets
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn fig(r: Option<&RunResult>, name: &str) -> (String, String) {
    match r.and_then(|r| r.figure(name)) {
        Some(v) => (v.to_string(), format_num(v)),
        None => (String::new(), "–".into()),
    }
}

pub fn format_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

impl SimPage {
    fn start(&mut self, ctx: &Context<Self>) {
        self.run_id += 1;
        self.progress = Some(0.0);
        self.error = None;
        self.worker.run(self.run_id, &self.spec);
        let _ = ctx;
    }

    fn trace(&self) -> Option<&Trace> {
        self.result.as_ref().map(|r| &r.trace)
    }

    fn end(&self) -> u64 {
        self.trace().map_or(0, |t| t.end)
    }

    fn request_frame(&mut self) {
        let link = self.link.clone();
        self.frame = Some(gloo_render::request_animation_frame(move |ts| {
            link.send_message(Msg::Frame(ts))
        }));
    }

    fn update_hash(&self) {
        if self.embedded {
            return;
        }
        replace_hash(
            &Route::Sim {
                spec: self.spec.clone(),
                t_us: Some(self.playhead),
            }
            .to_hash(),
        );
    }

    fn reset_edits(&mut self) {
        // The spec's own text, else the last run's (the page holds no
        // preset texts; a run brings its text, `RunResult::base_text`).
        self.edit_text = self
            .spec
            .text
            .clone()
            .or_else(|| self.result.as_ref().map(|r| r.base_text.clone()))
            .unwrap_or_default();
        self.edit_dirty = false;
        self.edit_profile = self.spec.profile.clone().unwrap_or_default();
        self.edit_seed = self.spec.seed.to_string();
        self.edit_sets = sets_text(&self.spec);
    }

    fn draw(&mut self) {
        let Some(r) = self.result.clone() else { return };
        let Some(canvas) = self.canvas.cast::<HtmlCanvasElement>() else {
            return;
        };
        let t0 = now_ms();
        let mut drawn = 0;
        let bands = view::sb_bands(&r.trace, self.expanded);
        let win = Window::around(self.playhead, self.window_ms * 1000.0);
        let mut delivered = 0;
        if let Some((ctx, g)) = view::context(&canvas, r.trace.lanes(), bands) {
            drawn = view::draw(
                &ctx,
                &g,
                &r.trace,
                win,
                "",
                self.sizes_as,
                !self.hide_messages,
            );
            delivered = view::draw_controllers(&ctx, &g, &r.trace, win, self.expanded);
        }
        if let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| {
            d.query_selector("[data-testid=sim-controllers]")
                .ok()
                .flatten()
        }) {
            let _ = el.set_attribute("data-in-view", &delivered.to_string());
        }
        let dt = now_ms() - t0;
        self.frames += 1;
        self.frame_ms = if self.frames == 1 {
            dt
        } else {
            self.frame_ms * 0.9 + dt * 0.1
        };
        if let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| {
            d.query_selector("[data-testid=sim-frame-ms]")
                .ok()
                .flatten()
        }) {
            let _ = el.set_attribute("data-value", &format!("{:.3}", self.frame_ms));
            let _ = el.set_attribute("data-last", &format!("{dt:.3}"));
            let _ = el.set_attribute("data-frames", &self.frames.to_string());
            let _ = el.set_attribute("data-messages", &drawn.to_string());
            el.set_text_content(Some(&format!("{:.2} ms", self.frame_ms)));
        }
    }

    /// Under the diagram of a run with Southbound controllers: what the
    /// aggregated lane holds, and the chassis to expand.
    fn controllers_bar(&self, ctx: &Context<Self>) -> Html {
        let Some(tr) = self.trace() else {
            return html! {};
        };
        let sb = &tr.sb;
        if sb.chassis == 0 {
            return html! {};
        }
        let shown = self.expanded.filter(|c| *c < sb.chassis);
        let (own, downloads) = shown.map(|c| sb.of_chassis(c)).unwrap_or_default();
        let seen = own.iter().filter(|b| b.seen.is_some()).count();
        let onchange = ctx.link().callback(|e: Event| {
            let v = value_of(&e);
            Msg::Expand(
                v.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|c| *c > 0)
                    .map(|c| c - 1),
            )
        });
        html! {
            <div class="controls" data-testid="sim-controllers" data-chassis={sb.chassis.to_string()}
                 data-updates={sb.updates.len().to_string()} data-deliveries={sb.deliveries().to_string()}
                 data-downloads={sb.downloads.len().to_string()}>
                <span title="Each Southbound update once, with how many ovn-controllers got it (blue, per pixel column); downloads after a reconnect in orange">
                    { format!("Controllers: {} chassis, {} updates, {} deliveries, {} downloads. ",
                        sb.chassis, sb.updates.len(), sb.deliveries(), sb.downloads.len()) }
                </span>
                <label title="Draw one chassis's ovn-controller on a lane of its own: each of its ports from the NB write to the binding it holds (ovn-heater's bring-up), and its downloads (key c clears)">
                    { "Expand chassis " }
                    <input type="number" min="0" max={sb.chassis.to_string()} data-testid="sim-expand-chassis"
                           value={shown.map_or(String::new(), |c| (c + 1).to_string())}
                           placeholder="1…" {onchange} />
                </label>
                if let Some(c) = shown {
                    <span data-testid="sim-chassis-lane" data-chassis={(c + 1).to_string()}
                          data-bindings={own.len().to_string()} data-seen={seen.to_string()}
                          data-downloads={downloads.len().to_string()}>
                        { format!(" chassis {}: {} ports ({} bound at its controller), {} downloads", c + 1, own.len(), seen, downloads.len()) }
                    </span>
                }
            </div>
        }
    }

    fn intervention_buttons(&self, ctx: &Context<Self>) -> Html {
        let Some(tr) = self.trace() else {
            return html! {};
        };
        // Members then relays, as the lanes are drawn; any of them can be
        // isolated or cut off, members and relays alike.
        let n = tr.lanes();
        let t = self.playhead;
        let s = self.target.min(n.saturating_sub(1));
        let peer = self.peer.min(n.saturating_sub(1));
        let node = tr.lane_node(s);
        let others: Vec<Node> = (0..n)
            .filter(|&i| i != s)
            .map(|i| tr.lane_node(i))
            .collect();
        let relay = tr.is_relay_lane(s);
        let leader = tr.leader_at(t);
        let link = ctx.link();
        let iv = |action: FaultAction| link.callback(move |_| Msg::Intervene(action.clone(), None));
        let me = match node {
            Node::Relay(k) => Target::Relay(k),
            Node::Member(m) => Target::Server(m),
        };
        // "Drop the next message": all loss from now until just after the
        // next send (a burst sent at the same instant is dropped together).
        let next_send = tr
            .messages
            .get(tr.first_message_from(t + 1))
            .map(|m| m.send);
        let state = tr.lane_state_at(s, t);
        let is_up = state.is_some_and(|p| p.life == UP);
        let is_down = state.is_some_and(|p| p.life == DOWN);
        html! {
            <div class="interventions" aria-label="Interventions">
                <strong>{ "Intervene at the playhead: " }</strong>
                <select aria-label="server or relay" data-testid="iv-target" title="The server the buttons act on"
                        onchange={link.callback(|e: Event| Msg::Target(value_of(&e).parse().unwrap_or(0)))}>
                    { for (0..n).map(|i| html! {
                        <option value={i.to_string()} selected={i == s}>{ tr.lane_name(i) }</option>
                    }) }
                </select>
                <button data-testid="iv-kill" title="Stop this server at the playhead" disabled={!is_up} onclick={iv(FaultAction::Kill(me))}>{ "Kill" }</button>
                <button data-testid="iv-restart" title="Start this server again" disabled={!is_down} onclick={iv(FaultAction::Restart(me))}>{ "Restart" }</button>
                <button data-testid="iv-pause" disabled={!is_up || relay} title={if relay { "Pause acts on members only" } else { "The server stops for 2 s: no messages, no timers" }} onclick={iv(FaultAction::Pause(me, 2_000_000))}>{ "Pause 2 s" }</button>
                <button data-testid="iv-partition" title="Cut every link of this server or relay, both ways, until Heal (a relay's source connection waits, then gives up after two 5 s probe intervals)" onclick={iv(FaultAction::Partition(vec![node], others))}>{ "Isolate" }</button>
                <span>{ " one-way cut to " }</span>
                <select aria-label="peer" data-testid="iv-peer" title="The peer a cut isolates it from"
                        onchange={link.callback(|e: Event| Msg::Peer(value_of(&e).parse().unwrap_or(0)))}>
                    { for (0..n).map(|i| html! {
                        <option value={i.to_string()} selected={i == self.peer}>{ tr.lane_name(i) }</option>
                    }) }
                </select>
                <button data-testid="iv-cut" title="Drop this server's messages to the peer, until Heal" onclick={iv(FaultAction::Cut(node, tr.lane_node(peer)))}>{ "Cut" }</button>
                <button data-testid="iv-heal" title="Restore every cut link" onclick={iv(FaultAction::Heal)}>{ "Heal" }</button>
                if let Some(ns) = next_send {
                    <button data-testid="iv-drop-next" title="Lose the next message sent" onclick={
                        link.callback(move |_| Msg::Intervene(
                            FaultAction::Loss(1.0),
                            Some(Fault::at(ns + 1, FaultAction::Loss(0.0))),
                        ))
                    }>{ "Drop next message" }</button>
                }
                <input size="6" aria-label="election timer (ms)" title="New election timer, ms" value={self.timer.clone()}
                       oninput={link.callback(|e: InputEvent| Msg::Timer(value_of(&e)))} />
                <button data-testid="iv-timer" onclick={iv(FaultAction::ElectionTimer(self.timer.trim().parse().unwrap_or(1000)))}
                        title="ms; the leader appends the change to the log; as in ovsdb-server, at most twice the current timer">{ "Set election timer" }</button>
                if let Some(l) = leader {
                    <button data-testid="iv-kill-leader" title="Stop the server that leads now" onclick={iv(FaultAction::Kill(Target::Server(l)))}>
                        { format!("Kill the leader (s{})", l + 1) }
                    </button>
                }
                if !self.parents.is_empty() {
                    <button data-testid="iv-undo" title="Drop the last intervention" onclick={link.callback(|_| Msg::BackToParent)}>
                        { format!("Back to the run before ({} intervention(s))", self.parents.len()) }
                    </button>
                }
            </div>
        }
    }

    fn editor(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        html! {
            <details class="editor">
                <summary>{ "Edit the scenario (profile, knobs, faults, workload, seed)" }</summary>
                <div class="row">
                    <label>{ "Preset " }
                        <select data-testid="sim-preset" title="The scenario to run" onchange={link.callback(|e: Event| Msg::EditScenario(value_of(&e)))}>
                            { for raft_sim::PRESET_NAMES.iter().map(|n| html! {
                                <option value={*n} selected={*n == self.spec.scenario}>{ *n }</option>
                            }) }
                            <option value="custom" selected={self.spec.scenario == "custom"}>{ "custom" }</option>
                        </select>
                    </label>
                    <label>{ " Profile " }
                        <select data-testid="sim-profile" title="The OVS version whose behaviour the servers follow" onchange={link.callback(|e: Event| Msg::EditProfile(value_of(&e)))}>
                            <option value="" selected={self.edit_profile.is_empty()}>{ "(scenario's)" }</option>
                            { for simview::profile_names().map(|p| html! {
                                <option value={p} selected={p == self.edit_profile}>{ p }</option>
                            }) }
                        </select>
                    </label>
                    <label>{ " Seed " }
                        <input data-testid="sim-seed" size="6" title="Same seed, same run" value={self.edit_seed.clone()}
                               oninput={link.callback(|e: InputEvent| Msg::EditSeed(value_of(&e)))} />
                    </label>
                    <label>{ " Knobs " }
                        <input data-testid="sim-sets" size="40" title="Settings that override the scenario's, name=value" placeholder="n=50, election_timer=2000"
                               value={self.edit_sets.clone()}
                               oninput={link.callback(|e: InputEvent| Msg::EditSets(value_of(&e)))} />
                    </label>
                    <button data-testid="sim-apply" title="Run with these settings" onclick={link.callback(|_| Msg::Apply)}>{ "Run" }</button>
                </div>
                <details data-testid="sim-knobs">
                    <summary>{ "Knobs: the names the Knobs field takes (name=value)" }</summary>
                    <table class="ab-table">
                        <tr><th>{ "knob" }</th><th>{ "kind" }</th><th>{ "what it changes" }</th></tr>
                        { for self.knobs.lines().map(|l| html! {
                            <tr>{ for l.split('\t').map(|c| html! { <td>{ c.to_string() }</td> }) }</tr>
                        }) }
                    </table>
                </details>
                <textarea data-testid="sim-text" rows="14" cols="100" spellcheck="false"
                          value={self.edit_text.clone()}
                          oninput={link.callback(|e: InputEvent| Msg::EditText(value_of(&e)))} />
                if !self.spec.interventions.is_empty() {
                    <p>{ "Interventions so far (fault lines added to the scenario):" }</p>
                    <pre data-testid="sim-interventions">{ self.spec.interventions.join("\n") }</pre>
                }
            </details>
        }
    }
}

impl Component for SimPage {
    type Message = Msg;
    type Properties = Props;

    fn create(ctx: &Context<Self>) -> Self {
        let worker = SimWorker::new(ctx.link().callback(Msg::Worker));
        let spec = ctx.props().spec.clone();
        let mut page = SimPage {
            worker,
            spec,
            parents: Vec::new(),
            run_id: 0,
            result: None,
            progress: None,
            error: None,
            run_ms: 0.0,
            runs: 0,
            playhead: ctx.props().t_us.unwrap_or(0),
            playing: false,
            speed: 1.0,
            window_ms: ctx.props().window_ms.unwrap_or(1500.0),
            sizes_as: None,
            expanded: None,
            last_ts: None,
            frame: None,
            link: ctx.link().clone(),
            canvas: NodeRef::default(),
            frame_ms: 0.0,
            frames: 0,
            target: 0,
            peer: 1,
            timer: "2000".into(),
            edit_text: String::new(),
            edit_dirty: false,
            edit_profile: String::new(),
            edit_seed: String::new(),
            edit_sets: String::new(),
            autoplay: ctx.props().t_us.is_none(),
            embedded: ctx.props().embedded,
            hide_messages: ctx.props().hide_messages,
            exporting: false,
            knobs: String::new(),
        };
        page.worker.knobs();
        page.reset_edits();
        page.start(ctx);
        page
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::Worker(Reply::Progress { id, now, stop }) => {
                if id != self.run_id {
                    return false;
                }
                self.progress = Some((now / stop.max(1.0)).clamp(0.0, 1.0));
            }
            Msg::Worker(Reply::Result { id, result, ms }) => {
                if id != self.run_id {
                    return false;
                }
                self.progress = None;
                self.run_ms = ms;
                self.runs += 1;
                self.playhead = self.playhead.min(result.trace.end);
                if !self.edit_dirty {
                    self.edit_text = result.base_text.clone();
                }
                self.result = Some(result);
                self.update_hash();
                if self.autoplay {
                    self.autoplay = false;
                    self.playing = true;
                    self.last_ts = None;
                    self.request_frame();
                }
            }
            Msg::Worker(Reply::Error { id, message }) => {
                if id != 0 && id != self.run_id {
                    return false;
                }
                self.progress = None;
                self.error = Some(message);
            }
            Msg::Worker(Reply::Knobs(list)) => self.knobs = list,
            Msg::Worker(Reply::Idl { .. } | Reply::Seeds { .. }) => return false,
            Msg::Worker(Reply::Files { id, files }) => {
                if id != u32::MAX - self.run_id {
                    return false;
                }
                self.exporting = false;
                for (name, bytes) in &files {
                    super::download(name, bytes, "application/octet-stream");
                }
            }
            Msg::ExportDb => {
                self.exporting = true;
                // Export ids count down so they never match a run's id.
                self.worker.export(u32::MAX - self.run_id, &self.spec);
            }
            Msg::ExportJson => {
                if let Some(r) = &self.result {
                    let name =
                        format!("{}-{}-seed{}.json", r.scenario_name, r.profile, r.spec.seed);
                    super::download(&name, r.json.as_bytes(), "application/json");
                }
                return false;
            }
            Msg::Toggle => {
                if self.result.is_none() {
                    return false;
                }
                self.playing = !self.playing;
                if self.playing {
                    if self.playhead >= self.end() {
                        self.playhead = 0;
                    }
                    self.last_ts = None;
                    self.request_frame();
                } else {
                    self.update_hash();
                }
            }
            Msg::Frame(ts) => {
                if !self.playing {
                    return false;
                }
                if let Some(last) = self.last_ts {
                    let dt = (ts - last).clamp(0.0, 100.0);
                    let adv = (dt * 1000.0 * self.speed) as u64;
                    self.playhead = (self.playhead + adv).min(self.end());
                }
                self.last_ts = Some(ts);
                if self.playhead >= self.end() {
                    self.playing = false;
                    self.update_hash();
                } else {
                    self.request_frame();
                }
            }
            Msg::Seek(t) => {
                self.playhead = t.min(self.end());
                self.update_hash();
            }
            Msg::Step(forward) => {
                let Some(tr) = self.trace() else { return false };
                let next = if forward {
                    tr.next_time(self.playhead)
                } else {
                    tr.prev_time(self.playhead)
                };
                if let Some(t) = next {
                    self.playing = false;
                    self.playhead = t;
                    self.update_hash();
                }
            }
            Msg::Speed(s) => self.speed = s,
            Msg::Zoom(f) => self.window_ms = (self.window_ms * f).clamp(5.0, 600_000.0),
            Msg::SizesAs(v) => self.sizes_as = v,
            Msg::Expand(c) => self.expanded = c,
            Msg::Intervene(action, then) => {
                let Some(r) = self.result.clone() else {
                    return false;
                };
                let mut faults = vec![Fault::at(self.playhead, action)];
                faults.extend(then);
                let spec = self.spec.fork_faults(&faults);
                self.parents.push((self.spec.clone(), r));
                self.spec = spec;
                self.playing = false;
                self.reset_edits();
                self.start(ctx);
                self.update_hash();
            }
            Msg::BackToParent => {
                if let Some((spec, r)) = self.parents.pop() {
                    self.run_id += 1;
                    self.spec = spec;
                    self.playhead = self.playhead.min(r.trace.end);
                    self.result = Some(r);
                    self.progress = None;
                    self.error = None;
                    self.reset_edits();
                    self.update_hash();
                }
            }
            Msg::Target(s) => self.target = s,
            Msg::Peer(s) => self.peer = s,
            Msg::Timer(t) => self.timer = t,
            Msg::EditText(t) => {
                self.edit_text = t;
                self.edit_dirty = true;
                return false;
            }
            Msg::EditProfile(p) => self.edit_profile = p,
            Msg::EditSeed(s) => self.edit_seed = s,
            Msg::EditSets(s) => self.edit_sets = s,
            Msg::EditScenario(name) => {
                // "custom": the text below is the scenario. A preset runs at
                // once: its text comes with the run.
                self.edit_dirty = name == "custom";
                if !self.edit_dirty {
                    self.spec.text = None;
                    ctx.link().send_message(Msg::Apply);
                }
                self.spec.scenario = name;
            }
            Msg::Apply => {
                let custom = std::mem::take(&mut self.edit_dirty);
                let spec = RunSpec {
                    scenario: if custom {
                        "custom".into()
                    } else {
                        self.spec.scenario.clone()
                    },
                    text: if custom {
                        Some(self.edit_text.clone())
                    } else {
                        self.spec.text.clone()
                    },
                    profile: Some(self.edit_profile.clone()).filter(|p| !p.is_empty()),
                    sets: self
                        .edit_sets
                        .split(',')
                        .filter_map(|kv| kv.split_once('='))
                        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                        .collect(),
                    seed: self.edit_seed.trim().parse().unwrap_or(1),
                    interventions: Vec::new(),
                    until_ms: self.spec.until_ms,
                };
                self.spec = spec;
                self.parents.clear();
                self.playhead = 0;
                self.autoplay = true;
                self.start(ctx);
                self.update_hash();
            }
            Msg::Key(e) => {
                if crate::shell::typing(&crate::shell::key_target(&e)) {
                    return false;
                }
                let link = ctx.link();
                match e.key().as_str() {
                    " " | "k" => link.send_message(Msg::Toggle),
                    "ArrowRight" | "." => link.send_message(Msg::Step(true)),
                    "ArrowLeft" | "," => link.send_message(Msg::Step(false)),
                    "+" | "=" => link.send_message(Msg::Zoom(0.5)),
                    "-" => link.send_message(Msg::Zoom(2.0)),
                    // Cycle entry sizes: as stored, full values, diffs.
                    "d" => link.send_message(Msg::SizesAs(match self.sizes_as {
                        None => Some(StorageMode::Full),
                        Some(StorageMode::Full) => Some(StorageMode::Diff),
                        Some(StorageMode::Diff) => None,
                    })),
                    "c" if self.expanded.is_some() => link.send_message(Msg::Expand(None)),
                    _ => return false,
                }
                e.prevent_default();
                return false;
            }
        }
        true
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let r = self.result.as_deref();
        let (total_v, total_t) = fig(r, "txns.total_ms");
        let (txns_v, txns_t) = fig(r, "txns.count");
        let (terms_v, terms_t) = fig(r, "terms");
        let (ll_v, ll_t) = fig(r, "leaderless_ms");
        let (p50_v, p50_t) = fig(r, "txns.latency_ms.p50");
        let (p99_v, p99_t) = fig(r, "txns.latency_ms.p99");
        let end = self.end();
        let term_now = self.trace().map_or(0, |t| t.max_term_at(self.playhead));
        let leader_now = self
            .trace()
            .and_then(|t| t.leader_at(self.playhead))
            .map_or(String::new(), |l| format!("s{}", l + 1));
        let events = r.and_then(|r| r.figure("events")).unwrap_or(0.0);
        let eps = if self.run_ms > 0.0 {
            events / (self.run_ms / 1000.0)
        } else {
            0.0
        };
        let storage = self.trace().map(|t| match t.storage {
            StorageMode::Diff => "diff",
            StorageMode::Full => "full",
        });
        let (log_v, log_t) = fig(r, "bytes.log_written");
        let (alt_v, alt_t) = fig(r, "bytes.log_written_other_mode");
        let other = match storage {
            Some("diff") => "full values",
            Some(_) => "column diffs",
            None => "the other mode",
        };
        let sizes_value = match self.sizes_as {
            None => "stored",
            Some(StorageMode::Full) => "full",
            Some(StorageMode::Diff) => "diff",
        };
        let onkeydown = link.callback(Msg::Key);
        // The last run failed: what the page shows is the run before it's.
        let stale = self.error.is_some() && r.is_some();
        html! {
            <div class={classes!("sim-page", stale.then_some("stale"))} tabindex="0" {onkeydown} data-testid="sim-page">
                <section class="sim-head">
                    // The page's heading; inside the tour, the step's title is.
                    <@{if self.embedded { "h2" } else { "h1" }}>{ "Simulate: " }{ r.map_or(self.spec.scenario.clone(), |r| r.scenario_name.clone()) }
                        <span class="sub">{ format!(" profile {} · seed {}", r.map_or("…".to_string(), |r| r.profile.clone()), self.spec.seed) }</span>
                    </@>
                    if let Some(d) = r.map(|r| &r.description).filter(|d| !d.is_empty()) {
                        <p class="about" data-testid="sim-about">{ d.clone() }</p>
                    }
                    <p class="presets">
                        { "Presets: " }
                        { for raft_sim::PRESET_NAMES.iter().map(|n| html! {
                            <a href={format!("#sim={n}")}>{ *n }{ " " }</a>
                        }) }
                        <a href="#sim=ls-add-follower&profile=v2.12-pre-sync">{ "ls-add-follower (pre-sync)" }</a>
                    </p>
                    if let Some(p) = self.progress {
                        <p class="busy" data-testid="sim-status" data-value="running">
                            <progress max="1" value={p.to_string()} />{ " simulating in the worker…" }
                        </p>
                    } else if r.is_some() {
                        <span data-testid="sim-status" data-value="ready" hidden=true />
                    }
                    if let Some(e) = &self.error {
                        <div class="error" role="alert" data-testid="sim-error">{ e.clone() }
                            if stale { { super::STALE } }
                        </div>
                    }
                    <dl class="figures">
                        <dt>{ "Total write time" }</dt><dd data-testid="sim-total-ms" data-value={total_v}>{ total_t }{ " ms" }</dd>
                        <dt>{ "Writes" }</dt><dd data-testid="sim-txns" data-value={txns_v}>{ txns_t }</dd>
                        <dt>{ "Latency p50 / p99" }</dt><dd data-testid="sim-p50-ms" data-value={p50_v}>{ p50_t }{ " / " }<span data-testid="sim-p99-ms" data-value={p99_v}>{ p99_t }</span>{ " ms" }</dd>
                        <dt>{ "Terms" }</dt><dd data-testid="sim-terms" data-value={terms_v}>{ terms_t }</dd>
                        <dt>{ "Leaderless" }</dt><dd data-testid="sim-leaderless-ms" data-value={ll_v}>{ ll_t }{ " ms" }</dd>
                        <dt>{ "Storage" }</dt><dd data-testid="sim-storage" data-value={storage.unwrap_or("")}>{ storage.unwrap_or("–") }</dd>
                        <dt title="Bytes of log records written by all servers; the second figure is the same run's log with every entry stored the other way (each record is sized in both modes from the same commit)">{ "Log written" }</dt>
                        <dd data-testid="sim-log-bytes" data-value={log_v}>{ log_t }{ " B" }
                            <span class="sub" data-testid="sim-log-bytes-other" data-value={alt_v}>{ format!(" · {alt_t} B as {other}") }</span>
                        </dd>
                        <dt title="The run's wall time in the simulation worker. A tab's first run includes the browser compiling the simulator's hot code; later runs (Run, another seed) show its speed">{ "Simulated" }</dt>
                        <dd data-testid="sim-events-per-s" data-value={format!("{eps:.0}")} data-first-run={(self.runs == 1).to_string()}>
                            { format!("{} events in {:.0} ms ({:.0} events/s)", events, self.run_ms, eps) }
                            if self.runs == 1 { <span class="sub">{ " · first run in this tab" }</span> }
                        </dd>
                        <dt>{ "Frame" }</dt><dd data-testid="sim-frame-ms" data-value="">{ "–" }</dd>
                    </dl>
                </section>
                <section class="controls" aria-label="Playback">
                    <button data-testid="sim-play" title="Play / pause (space)" onclick={link.callback(|_| Msg::Toggle)}>
                        { if self.playing { "Pause" } else { "Play" } }
                    </button>
                    <button data-testid="sim-step-back" title="Previous event (←)" onclick={link.callback(|_| Msg::Step(false))}>{ "◀ Step" }</button>
                    <button data-testid="sim-step" title="Next event (→)" onclick={link.callback(|_| Msg::Step(true))}>{ "Step ▶" }</button>
                    <label>{ " Speed " }
                        <select data-testid="sim-speed" title="Simulated time per second of playback" onchange={link.callback(|e: Event| Msg::Speed(value_of(&e).parse().unwrap_or(1.0)))}>
                            { for SPEEDS.iter().map(|s| html! {
                                <option value={s.to_string()} selected={*s == self.speed}>{ format!("{s}×") }</option>
                            }) }
                        </select>
                    </label>
                    <label title="Draw each entry's size as the run stores it, or as it would be with full values or with column diffs (key d)">{ " Entry sizes " }
                        <select data-testid="sim-sizes-as" onchange={link.callback(|e: Event| Msg::SizesAs(match value_of(&e).as_str() {
                            "full" => Some(StorageMode::Full),
                            "diff" => Some(StorageMode::Diff),
                            _ => None,
                        }))}>
                            <option value="stored" selected={sizes_value == "stored"}>{ "as stored" }</option>
                            <option value="full" selected={sizes_value == "full"}>{ "full values" }</option>
                            <option value="diff" selected={sizes_value == "diff"}>{ "column diffs" }</option>
                        </select>
                    </label>
                    <button onclick={link.callback(|_| Msg::Zoom(0.5))} title="zoom in (+)">{ "+" }</button>
                    <button onclick={link.callback(|_| Msg::Zoom(2.0))} title="zoom out (-)">{ "−" }</button>
                    <span class="window">{ format!(" window {:.0} ms ", self.window_ms) }</span>
                    <input type="range" class="scrub" data-testid="sim-scrub" title="Move the playhead" min="0" max={end.to_string()}
                           value={self.playhead.to_string()} step="1000"
                           oninput={link.callback(|e: InputEvent| {
                               let t: Option<web_sys::EventTarget> = e.target();
                               let v = t.and_then(|t| js_sys::Reflect::get(&t, &JsValue::from_str("value")).ok())
                                   .and_then(|v| v.as_string()).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
                               Msg::Seek(v as u64)
                           })} />
                    <span data-testid="sim-position-ms" data-value={(self.playhead as f64 / 1000.0).to_string()}>
                        { format!("{:.1} ms / {:.1} ms", self.playhead as f64 / 1000.0, end as f64 / 1000.0) }
                    </span>
                    <span>{ " · term " }</span>
                    <span data-testid="sim-term-now" data-value={term_now.to_string()}>{ term_now }</span>
                    <span>{ " · leader " }</span>
                    <span data-testid="sim-leader-now" data-value={leader_now.clone()}>{ if leader_now.is_empty() { "none".to_string() } else { leader_now.clone() } }</span>
                </section>
                { self.intervention_buttons(ctx) }
                <div class="controls">
                    <button data-testid="sim-export-json" title="This run's figures as one JSON file" disabled={r.is_none()}
                            onclick={link.callback(|_| Msg::ExportJson)}>{ "Download metrics JSON (as simulate --json)" }</button>
                    <button data-testid="sim-export-db" title="Each server's log as a .db file" disabled={r.is_none() || self.exporting}
                            onclick={link.callback(|_| Msg::ExportDb)}>
                        { if self.exporting { "Writing the .db files…" } else { "Download the run as .db files (one per server)" } }
                    </button>
                    <span class="hint">{ " The files open in the Explorer tab and in ovsdb-tool." }</span>
                </div>
                <canvas ref={self.canvas.clone()} class="sim-canvas" data-testid="sim-timeline" />
                { self.controllers_bar(ctx) }
                <p class="legend">
                    { "Bands: leader (gold), candidate (orange), follower (light), down (dark). Lines: append (blue), \
                       reply (light blue), votes (red), forwarded client requests (green); dropped messages end in ×; \
                       heartbeats are ticks at the lane top. Green step line: commit index. Bars at the lane bottom: \
                       bytes of each entry written (log scale). Client lane: each write from request to reply with its latency. \
                       Controllers lane (Southbound runs): updates per pixel column, downloads in orange; expand one chassis below it. \
                       Keys: space play/pause, ←/→ step, +/− zoom, d entry sizes as stored / full values / diffs, c closes an expanded chassis." }
                </p>
                { self.editor(ctx) }
                if let Some(r) = r {
                    if !r.violations.is_empty() {
                        <div class="warning" data-testid="sim-violations">{ format!("Invariant violations: {}", r.violations.join("; ")) }</div>
                    }
                }
            </div>
        }
    }

    fn rendered(&mut self, _ctx: &Context<Self>, _first: bool) {
        self.draw();
    }
}
