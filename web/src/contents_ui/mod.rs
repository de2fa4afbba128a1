//! The Contents page: the tables and rows of a loaded database file at a
//! chosen index, a row's referrers and history, the `show` overview. It
//! only renders: every query runs in the parser worker (`contents-*`
//! messages, see `src/bin/worker.rs`) on the `contents` core.
//! This file is the component: its messages, its state, `update`, and the
//! page's frame; the modules below ask the worker and draw the panels.

use std::collections::HashMap;

use js_sys::Reflect;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use web_sys::{HtmlElement, KeyboardEvent, Worker};
use yew::prelude::*;

use query::listen;
use sizes::{table_bars, GROWTH_TABLES};

mod query;
mod sizes;
mod view;

/// Height of a grid row in pixels (the CSS `.crow` height).
const ROW: f64 = 24.0;
/// Rows fetched per request.
const BLOCK: usize = 100;
/// Height of the grid's scroll area in rows.
const VIEW: usize = 20;

/// The parser worker, compared by the load it belongs to.
#[derive(Clone)]
pub struct WorkerRef {
    pub worker: Worker,
    pub generation: u32,
}

impl PartialEq for WorkerRef {
    fn eq(&self, o: &Self) -> bool {
        self.generation == o.generation
    }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub worker: WorkerRef,
    /// The loaded database files (the timeline's lanes).
    pub files: Vec<String>,
    pub lane: usize,
    /// The position asked for (None: the last committed entry).
    pub at: Option<u64>,
    /// The user picked another file or position (for the URL hash).
    pub on_change: Callback<(usize, Option<u64>)>,
}

pub enum Msg {
    Worker(JsValue),
    /// The pointer over chart 0 (bytes by table) or 1 (growth), or off it.
    ChartHover(usize, Option<(i32, i32)>),
    ChartsResized,
    SetLane(usize),
    SetAt(u64),
    EditAt(String),
    Step(i64),
    Table(String),
    Query(String),
    Scroll(f64),
    Select(String),
    /// Follow a reference: show `uuid` in `table`.
    GoTo(String, String),
    Key(KeyboardEvent),
    /// Measure where the bytes go (two more walks over the file).
    Sizes,
    EditDiffFrom(String),
    /// Compare the index typed in the diff field with the open one.
    Diff,
    /// The overview panel opened (true) or closed.
    Overview(bool),
}

pub struct ContentsPage {
    /// The worker's messages (removed when dropped).
    listener: gloo_events::EventListener,
    next_id: u32,
    open_id: u32,
    /// The index the last `contents-open` asked for (None: the committed
    /// one).
    asked_at: Option<u64>,
    rows_id: u32,
    row_id: u32,
    history_id: u32,
    lane: usize,
    opened: Option<Value>,
    loading: bool,
    error: Option<String>,
    at_text: String,
    table: Option<String>,
    query: String,
    /// The current selection's size, columns, mode and note.
    total: usize,
    columns: Vec<String>,
    mode: String,
    note: Option<String>,
    filter_ms: f64,
    /// The query the shown figures are for.
    shown_query: String,
    /// The index the rows shown were read at.
    rows_at: Option<u64>,
    /// Fetched blocks of rows (block number → rows).
    blocks: HashMap<usize, Vec<Value>>,
    /// The blocks read at the index before, shown instead of `blocks` until
    /// all the new index's have arrived: a move then changes only the rows
    /// that differ, instead of emptying the grid and filling it again (two
    /// layouts of every row).
    stale: HashMap<usize, Vec<Value>>,
    /// A long jump's rows on screen, read and built on their own by the
    /// worker before the rest of its database (first row, rows): shown
    /// until the blocks of the landed database arrive.
    preview: Option<(usize, Vec<Value>)>,
    /// The index whose landing the worker is still building
    /// (`contents-landed`): the blocks, the overview, the selected row and
    /// the sizes are asked for once it is there.
    landing: Option<u64>,
    requested: Vec<usize>,
    scroll_top: f64,
    selected: Option<String>,
    focus: Option<String>,
    scroll_to: Option<usize>,
    row: Option<Value>,
    history: Option<Value>,
    grid: NodeRef,
    /// The section: focused when it opens, so its keys work at once.
    root: NodeRef,
    sizes_id: u32,
    /// None: not asked; Some(None): being measured.
    sizes: Option<Option<Value>>,
    chart: NodeRef,
    growth_chart: NodeRef,
    chart_drawn: bool,
    /// The size and growth charts' values under the pointer, and the text
    /// of the one hovered.
    hovers: [Option<crate::charts::Hover>; 2],
    hover_text: [Option<String>; 2],
    _resize: gloo_events::EventListener,
    diff_from: String,
    diff_id: u32,
    /// None: not asked; Some(None): being computed.
    diff: Option<Option<Value>>,
    overview_id: u32,
    /// The `show` overview, asked for while its panel is open: the index
    /// it was built at, and its text.
    overview: Option<(u64, String)>,
    /// The panel opened or closed by the reader (None: open when the
    /// database is small, [`view::OVERVIEW_OPEN_ROWS`]).
    overview_open: Option<bool>,
}

fn js_get(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn s(v: &Value) -> String {
    match v {
        Value::String(x) => x.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl Component for ContentsPage {
    type Message = Msg;
    type Properties = Props;

    fn create(ctx: &Context<Self>) -> Self {
        let mut page = ContentsPage {
            listener: listen(ctx),
            next_id: 0,
            open_id: 0,
            asked_at: None,
            rows_id: 0,
            row_id: 0,
            history_id: 0,
            lane: ctx
                .props()
                .lane
                .min(ctx.props().files.len().saturating_sub(1)),
            opened: None,
            loading: false,
            error: None,
            at_text: String::new(),
            table: None,
            query: String::new(),
            total: 0,
            columns: Vec::new(),
            mode: String::new(),
            note: None,
            filter_ms: 0.0,
            shown_query: String::new(),
            rows_at: None,
            blocks: HashMap::new(),
            stale: HashMap::new(),
            preview: None,
            landing: None,
            requested: Vec::new(),
            scroll_top: 0.0,
            selected: None,
            focus: None,
            scroll_to: None,
            row: None,
            history: None,
            grid: NodeRef::default(),
            root: NodeRef::default(),
            sizes_id: 0,
            sizes: None,
            chart: NodeRef::default(),
            growth_chart: NodeRef::default(),
            chart_drawn: false,
            hovers: [None, None],
            hover_text: [None, None],
            _resize: {
                let link = ctx.link().clone();
                crate::charts::on_resize(move || link.send_message(Msg::ChartsResized))
            },
            diff_from: String::new(),
            diff_id: 0,
            diff: None,
            overview_id: 0,
            overview: None,
            overview_open: None,
        };
        page.open(ctx, ctx.props().at);
        page
    }

    fn changed(&mut self, ctx: &Context<Self>, old: &Props) -> bool {
        let p = ctx.props();
        if p.worker != old.worker {
            self.listener = listen(ctx);
            self.lane = p.lane.min(p.files.len().saturating_sub(1));
            self.opened = None;
            self.table = None;
            self.selected = None;
            self.open(ctx, p.at);
        }
        true
    }

    fn update(&mut self, ctx: &Context<Self>, msg: Msg) -> bool {
        match msg {
            Msg::Worker(d) => self.on_worker(ctx, d),
            Msg::ChartHover(k, at) => {
                let text = at.and_then(|(x, y)| self.hovers[k].as_ref().and_then(|h| h(x, y)));
                if text == self.hover_text[k] {
                    return false;
                }
                self.hover_text[k] = text;
                true
            }
            Msg::ChartsResized => {
                self.chart_drawn = false;
                true
            }
            Msg::SetLane(l) => {
                self.lane = l;
                self.selected = None;
                self.row = None;
                self.history = None;
                ctx.props().on_change.emit((l, None));
                self.open(ctx, None);
                true
            }
            Msg::EditAt(t) => {
                self.at_text = t;
                true
            }
            Msg::SetAt(a) => {
                self.set_at(ctx, a);
                true
            }
            Msg::Step(d) => {
                let cur = self.opened.as_ref().and_then(|o| o["at"].as_u64());
                if let Some(c) = cur {
                    self.set_at(ctx, c.saturating_add_signed(d));
                }
                true
            }
            Msg::Table(t) => {
                self.table = Some(t);
                self.reselect(ctx);
                true
            }
            Msg::Query(q) => {
                self.query = q;
                self.reselect(ctx);
                true
            }
            Msg::Scroll(top) => {
                self.scroll_top = top;
                self.fetch(ctx);
                true
            }
            Msg::Select(u) => {
                self.select(ctx, u);
                true
            }
            Msg::GoTo(table, uuid) => {
                self.table = Some(table);
                self.query.clear();
                self.focus = Some(uuid);
                self.reselect(ctx);
                true
            }
            Msg::EditDiffFrom(t) => {
                self.diff_from = t;
                false
            }
            Msg::Diff => {
                let Ok(from) = self.diff_from.trim().parse::<u64>() else {
                    self.diff = Some(Some(
                        serde_json::json!({"error": "Type the index to compare with."}),
                    ));
                    return true;
                };
                self.diff = Some(None);
                self.diff_id = self.send(ctx, "contents-diff", &[("from", (from as f64).into())]);
                true
            }
            Msg::Overview(open) => {
                if open == self.overview_open() {
                    return false;
                }
                self.overview_open = Some(open);
                let at = self.opened.as_ref().and_then(|o| o["at"].as_u64());
                if open && self.overview.as_ref().is_none_or(|(a, _)| Some(*a) != at) {
                    self.overview_id = self.send(ctx, "contents-overview", &[]);
                }
                true
            }
            Msg::Sizes => {
                self.sizes = Some(None);
                self.sizes_id = self.send(ctx, "contents-sizes", &[]);
                true
            }
            Msg::Key(ev) => {
                if crate::shell::key_target(&ev) == "input"
                    || ev.ctrl_key()
                    || ev.meta_key()
                    || ev.alt_key()
                {
                    return false;
                }
                match ev.key().as_str() {
                    "[" => ctx.link().send_message(Msg::Step(-1)),
                    "]" => ctx.link().send_message(Msg::Step(1)),
                    "ArrowDown" | "ArrowUp" => {
                        ev.prevent_default();
                        let rows: Vec<&Value> =
                            self.visible_rows().into_iter().map(|(_, r)| r).collect();
                        let pos = self
                            .selected
                            .as_ref()
                            .and_then(|u| rows.iter().position(|r| r["uuid"].as_str() == Some(u)));
                        let next = match (pos, ev.key().as_str()) {
                            (Some(p), "ArrowDown") => (p + 1).min(rows.len().saturating_sub(1)),
                            (Some(p), _) => p.saturating_sub(1),
                            (None, _) => 0,
                        };
                        if let Some(r) = rows.get(next) {
                            let u = s(&r["uuid"]);
                            ctx.link().send_message(Msg::Select(u));
                        }
                    }
                    _ => return false,
                }
                false
            }
        }
    }

    fn rendered(&mut self, _ctx: &Context<Self>, first: bool) {
        if first {
            if let Some(el) = self.root.cast::<HtmlElement>() {
                let _ = el.focus();
            }
        }
        if let (false, Some(Some(v)), Some(c)) = (
            self.chart_drawn,
            &self.sizes,
            self.chart.cast::<web_sys::HtmlCanvasElement>(),
        ) {
            self.chart_drawn = true;
            let bars = table_bars(v);
            match crate::charts::draw(&c, &bars) {
                Ok(h) => self.hovers[0] = Some(h),
                Err(e) => self.error = Some(format!("the size chart could not be drawn: {e}")),
            }
            if let Some(g) = self.growth_chart.cast::<web_sys::HtmlCanvasElement>() {
                let lines = crate::charts::growth_lines(&v["growth"], GROWTH_TABLES);
                let x = if v["growth"][0][1].is_u64() {
                    "index"
                } else {
                    "record"
                };
                match crate::charts::draw_growth(&g, &lines, x) {
                    Ok(h) => self.hovers[1] = Some(h),
                    Err(e) => {
                        self.error = Some(format!("the growth chart could not be drawn: {e}"))
                    }
                }
            }
        }
        if let (Some(r), Some(el)) = (self.scroll_to, self.grid.cast::<HtmlElement>()) {
            self.scroll_to = None;
            el.set_scroll_top((r as f64 * ROW) as i32);
        }
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let p = ctx.props();
        let onkey = link.callback(Msg::Key);
        html! {
            <section class="contents" data-testid="contents" onkeydown={onkey} tabindex="-1" ref={self.root.clone()}
                data-state={if self.loading { "loading" } else if self.opened.is_some() { "ready" } else { "none" }}
                data-file={self.opened.as_ref().map(|o| s(&o["name"]))}
                data-first={self.opened.as_ref().map(|o| s(&o["first"]))}
                data-last={self.opened.as_ref().map(|o| s(&o["last"]))}
                data-committed={self.opened.as_ref().map(|o| s(&o["committed"]))}>
                <div class="contents-bar">
                    if p.files.len() > 1 {
                        <label title="Which server's file to look into">{ "File " }
                            <select data-testid="contents-file"
                                onchange={link.callback(|e: Event| Msg::SetLane(
                                    e.target_unchecked_into::<web_sys::HtmlSelectElement>().selected_index().max(0) as usize))}>
                                { for p.files.iter().enumerate().map(|(i, f)| html! {
                                    <option value={i.to_string()} selected={i == self.lane}>{ f.clone() }</option>
                                }) }
                            </select>
                        </label>
                    }
                    { self.view_position(ctx) }
                    if self.loading {
                        <span class="hint" data-testid="contents-loading">{ "Reading…" }</span>
                    }
                </div>
                if let Some(e) = &self.error {
                    <div class="error" role="alert" data-testid="contents-error">{ e.clone() }</div>
                }
                if let Some(o) = &self.opened {
                    if let Some(e) = o["readError"].as_str().or(o["loadError"].as_str()) {
                        <div class="notice" role="status">{ format!("The file is damaged; shown up to the damage: {e}") }</div>
                    }
                    <div class="contents-main">
                        { self.view_tables(ctx, o) }
                        <div class="contents-right">
                            { self.view_search(ctx) }
                            { self.view_grid(ctx) }
                            { self.view_row(ctx) }
                        </div>
                    </div>
                    { self.view_diff(ctx) }
                    { self.view_sizes(ctx) }
                    { self.view_overview(ctx, o) }
                }
            </section>
        }
    }
}
