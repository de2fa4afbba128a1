//! The Contents page: the tables and rows of a loaded database file at a
//! chosen index, a row's referrers and history, the `show` overview. It
//! only renders: every query runs in the parser worker (`contents-*`
//! messages, see `src/bin/worker.rs`) on the `contents` core.

use std::collections::HashMap;

use js_sys::{Object, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{HtmlElement, HtmlInputElement, KeyboardEvent, MessageEvent, Worker};
use yew::prelude::*;

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
    requested: Vec<usize>,
    scroll_top: f64,
    selected: Option<String>,
    focus: Option<String>,
    scroll_to: Option<usize>,
    row: Option<Value>,
    history: Option<Value>,
    grid: NodeRef,
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
    /// database is small, [`OVERVIEW_OPEN_ROWS`]).
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

impl ContentsPage {
    fn send(&mut self, ctx: &Context<Self>, kind: &str, fields: &[(&str, JsValue)]) -> u32 {
        self.next_id += 1;
        let msg = Object::new();
        let _ = Reflect::set(&msg, &"type".into(), &kind.into());
        let _ = Reflect::set(&msg, &"id".into(), &(self.next_id as f64).into());
        for (k, v) in fields {
            let _ = Reflect::set(&msg, &JsValue::from_str(k), v);
        }
        let _ = ctx.props().worker.worker.post_message(&msg);
        self.next_id
    }

    fn open(&mut self, ctx: &Context<Self>, at: Option<u64>) {
        let name = ctx
            .props()
            .files
            .get(self.lane)
            .cloned()
            .unwrap_or_default();
        self.loading = true;
        self.error = None;
        self.asked_at = at;
        self.open_id = self.send(
            ctx,
            "contents-open",
            &[
                ("lane", (self.lane as f64).into()),
                ("name", name.into()),
                ("at", at.map_or(JsValue::from(-1.0), |a| (a as f64).into())),
            ],
        );
    }

    fn reset_rows(&mut self) {
        self.blocks.clear();
        self.requested.clear();
    }

    /// Asks for the blocks the grid's window needs.
    fn fetch(&mut self, ctx: &Context<Self>) {
        let Some(table) = self.table.clone() else {
            return;
        };
        let first = (self.scroll_top / ROW) as usize;
        let want = [first / BLOCK, (first + VIEW) / BLOCK];
        for b in want {
            if self.blocks.contains_key(&b) || self.requested.contains(&b) {
                continue;
            }
            if b > 0 && b * BLOCK >= self.total {
                continue;
            }
            self.requested.push(b);
            self.rows_id = self.send(
                ctx,
                "contents-rows",
                &[
                    ("table", table.as_str().into()),
                    ("query", self.query.as_str().into()),
                    ("start", ((b * BLOCK) as f64).into()),
                    ("count", (BLOCK as f64).into()),
                    (
                        "focus",
                        self.focus
                            .as_deref()
                            .map_or(JsValue::UNDEFINED, JsValue::from),
                    ),
                ],
            );
        }
    }

    /// A new selection (table or query): drop the rows, start from the top.
    fn reselect(&mut self, ctx: &Context<Self>) {
        self.reset_rows();
        self.scroll_top = 0.0;
        self.scroll_to = Some(0);
        self.fetch(ctx);
    }

    fn select(&mut self, ctx: &Context<Self>, uuid: String) {
        self.selected = Some(uuid.clone());
        self.row = None;
        self.history = None;
        self.row_id = self.send(ctx, "contents-row", &[("uuid", uuid.as_str().into())]);
        self.history_id = self.send(ctx, "contents-history", &[("uuid", uuid.as_str().into())]);
    }

    fn on_worker(&mut self, ctx: &Context<Self>, data: JsValue) -> bool {
        let kind = js_get(&data, "type").as_string().unwrap_or_default();
        if !kind.starts_with("contents-") {
            return false;
        }
        let id = js_get(&data, "id").as_f64().unwrap_or(0.0) as u32;
        let text = js_get(&data, "json").as_string().unwrap_or_default();
        let v: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                self.error = Some(format!("the worker's reply did not decode: {e}"));
                return true;
            }
        };
        let err = v.get("error").map(s);
        match kind.as_str() {
            "contents-opened" if id == self.open_id => {
                self.loading = false;
                if let Some(e) = err {
                    self.error = Some(e);
                    self.opened = None;
                    return true;
                }
                self.at_text = s(&v["at"]);
                let tables = v["tables"].as_array().cloned().unwrap_or_default();
                let keep = self
                    .table
                    .as_ref()
                    .filter(|t| tables.iter().any(|x| x["name"] == **t))
                    .cloned();
                self.table = keep.or_else(|| {
                    // The first table with rows.
                    tables
                        .iter()
                        .find(|t| t["rows"].as_u64().unwrap_or(0) > 0)
                        .or(tables.first())
                        .map(|t| s(&t["name"]))
                });
                self.opened = Some(v);
                self.overview = None;
                if self.overview_open() {
                    self.overview_id = self.send(ctx, "contents-overview", &[]);
                }
                self.reset_rows();
                self.fetch(ctx);
                if let Some(u) = self.selected.clone() {
                    self.select(ctx, u);
                }
                if self.sizes.is_some() {
                    ctx.link().send_message(Msg::Sizes);
                }
                true
            }
            "contents-rows" => {
                if let Some(e) = err {
                    self.error = Some(e);
                    return true;
                }
                if v["table"].as_str() != self.table.as_deref()
                    || v["query"].as_str() != Some(self.query.as_str())
                {
                    return false;
                }
                let start = v["start"].as_u64().unwrap_or(0) as usize;
                let b = start / BLOCK;
                self.requested.retain(|x| *x != b);
                self.total = v["total"].as_u64().unwrap_or(0) as usize;
                self.columns = v["columns"]
                    .as_array()
                    .map(|a| a.iter().map(s).collect())
                    .unwrap_or_default();
                self.mode = s(&v["mode"]);
                self.note = v["note"].as_str().map(str::to_string);
                self.filter_ms = v["ms"].as_f64().unwrap_or(0.0);
                self.shown_query = self.query.clone();
                self.rows_at = v["at"].as_u64();
                self.blocks
                    .insert(b, v["rows"].as_array().cloned().unwrap_or_default());
                if let (Some(f), Some(p)) = (self.focus.take(), v["focusRow"].as_u64()) {
                    let p = p as usize;
                    self.scroll_to = Some(p.saturating_sub(VIEW / 2));
                    self.scroll_top = p.saturating_sub(VIEW / 2) as f64 * ROW;
                    self.select(ctx, f);
                    self.fetch(ctx);
                }
                if self.blocks.len() > 40 {
                    let keep = (self.scroll_top / ROW) as usize / BLOCK;
                    self.blocks.retain(|k, _| k.abs_diff(keep) <= 2);
                }
                true
            }
            "contents-overview" if id == self.overview_id => {
                match err {
                    Some(e) => self.error = Some(e),
                    None => {
                        let at = v["at"].as_u64().unwrap_or(0);
                        self.overview = Some((at, s(&v["overview"])));
                    }
                }
                true
            }
            "contents-row" if id == self.row_id => {
                self.row = Some(v);
                true
            }
            "contents-history" if id == self.history_id => {
                self.history = Some(v);
                true
            }
            "contents-diff" if id == self.diff_id => {
                self.diff = Some(Some(v));
                true
            }
            "contents-sizes" if id == self.sizes_id => {
                self.sizes = Some(Some(v));
                self.chart_drawn = false;
                true
            }
            _ => false,
        }
    }

    fn range(&self) -> (u64, u64) {
        self.opened.as_ref().map_or((0, 0), |o| {
            (
                o["first"].as_u64().unwrap_or(0),
                o["last"].as_u64().unwrap_or(0),
            )
        })
    }

    fn set_at(&mut self, ctx: &Context<Self>, at: u64) {
        let (lo, hi) = self.range();
        let at = at.clamp(lo, hi.max(lo));
        self.at_text = at.to_string();
        // Enter and the field's change event both ask for the index it
        // holds: the worker gets one request (after an error, a retry).
        if self.asked_at == Some(at) && self.error.is_none() {
            return;
        }
        ctx.props().on_change.emit((self.lane, Some(at)));
        self.open(ctx, Some(at));
    }
}

/// The overview panel starts open for a database of at most this many
/// rows. Each jump's overview is built by the worker only while the panel
/// is open: on the 1 GB Southbound file (about 24 000 rows, 4 600 lines)
/// that took about 15 ms of the worker's time at each jump.
const OVERVIEW_OPEN_ROWS: u64 = 5_000;

impl ContentsPage {
    /// Whether the overview panel is open.
    fn overview_open(&self) -> bool {
        let rows = self.opened.as_ref().and_then(|o| o["rowCount"].as_u64());
        self.overview_open
            .unwrap_or(rows.is_some_and(|r| r <= OVERVIEW_OPEN_ROWS))
    }

    /// The `show` overview, built by the worker while the panel is open.
    fn view_overview(&self, ctx: &Context<Self>, o: &Value) -> Html {
        let open = self.overview_open();
        let at = o["at"].as_u64();
        let (built, text) = match &self.overview {
            Some((a, t)) if Some(*a) == at => (Some(*a), t.clone()),
            _ => (None, String::new()),
        };
        let title = format!(
            "Overview ({}, {} rows)",
            s(&o["database"]),
            s(&o["rowCount"])
        );
        let ontoggle = ctx.link().callback(|e: Event| {
            let open = e
                .target()
                .map(|t| js_get(&t, "open").as_bool() == Some(true));
            Msg::Overview(open == Some(true))
        });
        html! {
            <details class="overview-box" {open} {ontoggle}>
                <summary title="What ovn-nbctl show, ovn-sbctl show or ovs-vsctl show prints at this index (built while open)">{ title }</summary>
                <pre data-testid="overview" data-at={built.map(|a| a.to_string())}>{ text }</pre>
            </details>
        }
    }
}

/// Listens to the page's parser worker for this page's replies.
fn listen(ctx: &Context<ContentsPage>) -> gloo_events::EventListener {
    let link = ctx.link().clone();
    gloo_events::EventListener::new(&ctx.props().worker.worker, "message", move |ev| {
        let ev: &MessageEvent = ev.unchecked_ref();
        link.send_message(Msg::Worker(ev.data()));
    })
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
            requested: Vec::new(),
            scroll_top: 0.0,
            selected: None,
            focus: None,
            scroll_to: None,
            row: None,
            history: None,
            grid: NodeRef::default(),
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
                let tag = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                    .map(|e| e.tag_name().to_ascii_lowercase())
                    .unwrap_or_default();
                if tag == "input" || ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
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

    fn rendered(&mut self, _ctx: &Context<Self>, _first: bool) {
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
            <section class="contents" data-testid="contents" onkeydown={onkey} tabindex="-1"
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

impl ContentsPage {
    fn view_position(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let Some(o) = &self.opened else {
            return html! {};
        };
        let (lo, hi) = self.range();
        let at = o["at"].as_u64().unwrap_or(0);
        let committed = o["committed"].as_u64().unwrap_or(hi);
        let label = if o["clustered"].as_bool() == Some(true) {
            "Index"
        } else {
            "After txn"
        };
        let parse = |v: String| v.trim().parse::<u64>().ok();
        let on_enter = link.batch_callback(move |e: KeyboardEvent| {
            if e.key() == "Enter" {
                let v = e.target_unchecked_into::<HtmlInputElement>().value();
                parse(v).map(Msg::SetAt)
            } else {
                None
            }
        });
        html! {
            <span class="position">
                <label title="The database after this log entry ([ and ] step; Enter applies)">{ format!("{label} ") }
                    <input type="number" data-testid="at-index" data-value={at.to_string()}
                        min={lo.to_string()} max={hi.to_string()} value={self.at_text.clone()}
                        oninput={link.callback(|e: InputEvent| Msg::EditAt(e.target_unchecked_into::<HtmlInputElement>().value()))}
                        onkeydown={on_enter}
                        onchange={link.batch_callback(move |e: Event| parse(e.target_unchecked_into::<HtmlInputElement>().value()).map(Msg::SetAt))} />
                </label>
                <button title="Previous index ([)" onclick={link.callback(|_| Msg::Step(-1))}>{ "◀" }</button>
                <input type="range" data-testid="at-slider" min={lo.to_string()} max={hi.to_string()}
                    value={at.to_string()} title="Drag to choose the position"
                    onchange={link.batch_callback(move |e: Event| parse(e.target_unchecked_into::<HtmlInputElement>().value()).map(Msg::SetAt))} />
                <button title="Next index (])" onclick={link.callback(|_| Msg::Step(1))}>{ "▶" }</button>
                <button title="The last committed entry" data-testid="at-committed"
                    onclick={link.callback(move |_| Msg::SetAt(committed))}>{ format!("committed {committed}") }</button>
                <span class="hint" data-testid="at-entry">
                    { format!("{}–{} · term {} · {} · {}", lo, hi, s(&o["term"]), s(&o["date"]), s(&o["comment"])) }
                </span>
            </span>
        }
    }

    fn view_tables(&self, ctx: &Context<Self>, o: &Value) -> Html {
        let link = ctx.link();
        let tables = o["tables"].as_array().cloned().unwrap_or_default();
        html! {
            <ul class="tables" data-testid="tables" data-value={tables.len().to_string()}>
                { for tables.iter().map(|t| {
                    let name = s(&t["name"]);
                    let rows = t["rows"].as_u64().unwrap_or(0);
                    let n = name.clone();
                    let active = self.table.as_deref() == Some(name.as_str());
                    html! {
                        <li>
                            <button data-testid="table-row-count" data-table={name.clone()} data-value={rows.to_string()}
                                class={classes!(active.then_some("active"), (rows == 0).then_some("empty"))}
                                title={format!("{name}: {rows} rows")}
                                onclick={link.callback(move |_| Msg::Table(n.clone()))}>
                                <span class="tname">{ name.clone() }</span><span class="tcount">{ rows }</span>
                            </button>
                        </li>
                    }
                }) }
            </ul>
        }
    }

    fn view_search(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        html! {
            <div class="search">
                <input type="search" data-testid="search" value={self.query.clone()}
                    placeholder="Search: text, or find conditions like name=sw0 external_ids:k=v ports{>=}UUID"
                    title="A substring of any column, or ovn-nbctl find conditions (column=value, !=, <, >, {>=} for sets and maps, key:column=value); all conditions must hold"
                    oninput={link.callback(|e: InputEvent| Msg::Query(e.target_unchecked_into::<HtmlInputElement>().value()))} />
                <span class="hint" data-testid="search-count" data-value={self.total.to_string()} data-mode={self.mode.clone()}
                    data-query={self.shown_query.clone()} data-table={self.table.clone()}>
                    { format!("{} rows · {} · {:.0} ms", self.total, self.mode, self.filter_ms) }
                </span>
                if let Some(n) = &self.note {
                    <span class="hint warn" data-testid="search-note">{ n.clone() }</span>
                }
            </div>
        }
    }

    fn visible_rows(&self) -> Vec<(usize, &Value)> {
        let first = (self.scroll_top / ROW) as usize;
        let from = first.saturating_sub(5);
        let to = (first + VIEW + 5).min(self.total);
        (from..to)
            .filter_map(|i| {
                self.blocks
                    .get(&(i / BLOCK))
                    .and_then(|b| b.get(i % BLOCK))
                    .map(|r| (i, r))
            })
            .collect()
    }

    fn view_segments(&self, ctx: &Context<Self>, segs: &Value) -> Html {
        let link = ctx.link();
        html! {
            { for segs.as_array().into_iter().flatten().map(|seg| {
                let text = s(&seg[0]);
                match (seg.get(1), seg.get(2)) {
                    (Some(t), Some(u)) => {
                        let (t, u) = (s(t), s(u));
                        let title = format!("Go to {t} row {u}");
                        let (t2, u2) = (t.clone(), u.clone());
                        html! {
                            <a href="#" class="ref" data-ref-table={t} data-ref-uuid={u} {title}
                                onclick={link.callback(move |e: MouseEvent| {
                                    e.prevent_default();
                                    e.stop_propagation();
                                    Msg::GoTo(t2.clone(), u2.clone())
                                })}>{ text }</a>
                        }
                    }
                    _ => html! { <span>{ text }</span> },
                }
            }) }
        }
    }

    fn view_grid(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let width = self.columns.len().max(1) * 200;
        let style_w = format!("width:{width}px");
        html! {
            <div class="cgrid" ref={self.grid.clone()} data-testid="row-grid" tabindex="0"
                data-at={self.rows_at.map(|a| a.to_string())}
                title="↑ ↓ select a row"
                style={format!("height:{}px", (VIEW + 1) as f64 * ROW)}
                onscroll={link.callback(|e: Event| Msg::Scroll(e.target_unchecked_into::<HtmlElement>().scroll_top() as f64))}>
                <div class="chead" style={style_w.clone()}>
                    { for self.columns.iter().map(|c| html! { <span class="ccell" title={c.clone()}>{ c.clone() }</span> }) }
                </div>
                <div class="cbody" style={format!("height:{}px;{style_w}", self.total as f64 * ROW)}>
                    { for self.visible_rows().into_iter().map(|(i, r)| {
                        let uuid = s(&r["uuid"]);
                        let u = uuid.clone();
                        let sel = self.selected.as_deref() == Some(uuid.as_str());
                        html! {
                            <div class={classes!("crow", sel.then_some("selected"))} data-testid="row" data-uuid={uuid}
                                data-pos={i.to_string()}
                                style={format!("top:{}px;{style_w}", i as f64 * ROW)}
                                onclick={link.callback(move |_| Msg::Select(u.clone()))}>
                                { for r["cells"].as_array().into_iter().flatten().map(|c| {
                                    let full: String = c.as_array().into_iter().flatten().map(|x| s(&x[0])).collect();
                                    html! { <span class="ccell" title={full}>{ self.view_segments(ctx, c) }</span> }
                                }) }
                            </div>
                        }
                    }) }
                </div>
            </div>
        }
    }

    fn view_row(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let Some(uuid) = &self.selected else {
            return html! { <p class="hint">{ "Click a row (or use ↑ ↓ in the grid) to see it whole, who refers to it and its history." }</p> };
        };
        let row = match &self.row {
            None => html! { <p class="hint">{ "Reading the row…" }</p> },
            Some(r) if r.get("error").is_some() => {
                html! { <div class="error" role="alert">{ s(&r["error"]) }</div> }
            }
            Some(r) if r["missing"] == Value::Bool(true) => html! {
                <p class="hint" data-testid="row-missing">{ format!("No row {uuid} at this index (see its history below).") }</p>
            },
            Some(r) => {
                let refs = r["referrers"].as_array().cloned().unwrap_or_default();
                html! {
                    <>
                        <h3>{ format!("{} {}", s(&r["table"]), uuid) }</h3>
                        <table class="rowcols">
                            { for r["columns"].as_array().into_iter().flatten().map(|c| html! {
                                <tr><th>{ s(&c[0]) }</th><td class="fold">{ self.view_segments(ctx, &c[1]) }</td></tr>
                            }) }
                        </table>
                        <h4>{ format!("Referred to by ({})", refs.len()) }</h4>
                        <ul class="referrers" data-testid="referrers" data-value={refs.len().to_string()}>
                            { for refs.iter().map(|x| {
                                let (t, u) = (s(&x["table"]), s(&x["row"]));
                                let (t2, u2) = (t.clone(), u.clone());
                                html! {
                                    <li data-testid="referrer" data-table={t.clone()} data-uuid={u.clone()}>
                                        <a href="#" class="ref" title={format!("Go to {t} row {u}")}
                                            onclick={link.callback(move |e: MouseEvent| { e.prevent_default(); Msg::GoTo(t2.clone(), u2.clone()) })}>
                                            { format!("{t}.{} ← {u}", s(&x["column"])) }</a>
                                    </li>
                                }
                            }) }
                        </ul>
                    </>
                }
            }
        };
        let history = match &self.history {
            None => html! { <p class="hint">{ "Reading the row's history…" }</p> },
            Some(h) if h.get("error").is_some() => {
                html! { <div class="error" role="alert">{ s(&h["error"]) }</div> }
            }
            Some(h) => {
                let items = h["entries"].as_array().cloned().unwrap_or_default();
                html! {
                    <>
                        <h4>{ format!("History ({} entries, {:.0} ms)", items.len(), h["ms"].as_f64().unwrap_or(0.0)) }</h4>
                        <ol class="row-history">
                            { for items.iter().map(|e| {
                                let idx = s(&e["index"]);
                                let idx2 = e["index"].as_u64();
                                html! {
                                    <li data-testid="row-history" data-index={idx.clone()} data-record={s(&e["record"])} data-change={s(&e["change"])}>
                                        <div class="hhead">
                                            if let Some(i) = idx2 {
                                                <a href="#" title="Show the database at this index"
                                                    onclick={link.callback(move |ev: MouseEvent| { ev.prevent_default(); Msg::SetAt(i) })}>{ format!("#{i}") }</a>
                                            } else {
                                                <span>{ format!("record {}", s(&e["record"])) }</span>
                                            }
                                            { format!(" · {} · term {} · {} · {}", s(&e["change"]), s(&e["term"]), s(&e["date"]), s(&e["comment"])) }
                                        </div>
                                        <table class="coldiff">
                                            { for e["columns"].as_array().into_iter().flatten().map(|c| html! {
                                                <tr>
                                                    <th>{ s(&c["column"]) }</th>
                                                    <td class="fold old">{ s(&c["old"]) }</td>
                                                    <td>{ "→" }</td>
                                                    <td class="fold new">{ s(&c["new"]) }</td>
                                                </tr>
                                            }) }
                                        </table>
                                    </li>
                                }
                            }) }
                        </ol>
                    </>
                }
            }
        };
        html! {
            <div class="rowpanel" data-testid="row-panel" data-uuid={uuid.clone()}>
                { row }
                { history }
            </div>
        }
    }
}

/// The by-table figures, largest stored first.
fn table_bars(v: &Value) -> Vec<crate::charts::Bars> {
    let mut bars: Vec<crate::charts::Bars> = v["by_table"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(t, b)| crate::charts::Bars {
            table: t.clone(),
            stored: b["stored"].as_u64().unwrap_or(0),
            full: b["full"].as_u64(),
            diff: b["diff"].as_u64(),
        })
        .collect();
    ovsdb::order::sort_by(&mut bars, |a, b| {
        b.stored.cmp(&a.stored).then(a.table.cmp(&b.table))
    });
    bars
}

/// Tables drawn as their own line in the growth chart (the rest: one line).
const GROWTH_TABLES: usize = 8;

fn bytes(v: &Value) -> String {
    v.as_u64()
        .map_or("–".into(), |b| crate::draw::human_bytes(b as f64))
}

impl ContentsPage {
    fn view_sizes(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let body = match &self.sizes {
            None => html! {
                <button data-testid="sizes-measure" title="Reads the file twice: a replay for the full and diff sizes, then the breakdown"
                    onclick={link.callback(|_| Msg::Sizes)}>{ "Measure where the bytes go" }</button>
            },
            Some(None) => {
                html! { <p class="hint" data-testid="sizes-loading">{ "Measuring…" }</p> }
            }
            Some(Some(v)) if v.get("error").is_some() => html! {
                <div class="error" role="alert">{ s(&v["error"]) }</div>
            },
            Some(Some(v)) => {
                let bars = table_bars(v);
                let attr = |x: &Option<u64>| x.map(|b| b.to_string()).unwrap_or_default();
                let c = &v["compaction"];
                let mut clients: Vec<(&String, &Value)> =
                    v["by_client"].as_object().into_iter().flatten().collect();
                ovsdb::order::sort_by_key(&mut clients, |(_, b)| {
                    std::cmp::Reverse(b["stored"].as_u64().unwrap_or(0))
                });
                let mut cols: Vec<(&String, &Value)> =
                    v["by_column"].as_object().into_iter().flatten().collect();
                ovsdb::order::sort_by_key(&mut cols, |(_, b)| {
                    std::cmp::Reverse(b["stored"].as_u64().unwrap_or(0))
                });
                html! {
                    <>
                        <p class="hint">{ format!("{} entries · {} stored, {} with full values, {} with diffs · measured in {:.0} ms",
                            s(&v["entries"]), bytes(&v["total"]["stored"]), bytes(&v["total"]["full"]), bytes(&v["total"]["diff"]),
                            v["ms"].as_f64().unwrap_or(0.0)) }</p>
                        if !c.is_null() {
                            <p data-testid="compaction-whatif" data-snapshot-bytes={s(&c["snapshot_bytes"])}
                                data-log-bytes={s(&c["log_bytes"])} data-at={s(&c["at"])}
                                title="What ovsdb-server/compact at this index would write, against what the log holds after its header">
                                { format!("Compaction at {}: a snapshot of {} replaces {} of log", s(&c["at"]),
                                    bytes(&c["snapshot_bytes"]), bytes(&c["log_bytes"])) }
                            </p>
                        }
                        if !c.is_null() {
                            { self.view_snapshot(c, v) }
                        }
                        <canvas ref={self.chart.clone()} class="size-chart" data-testid="size-chart" width="900" height="200"
                            title={self.hover_text[0].clone().unwrap_or_default()} data-hover={self.hover_text[0].clone().unwrap_or_default()}
                            onmousemove={link.callback(|e: MouseEvent| Msg::ChartHover(0, Some((e.offset_x(), e.offset_y()))))}
                            onmouseleave={link.callback(|_| Msg::ChartHover(0, None))} />
                        <h4>{ "Growth over time, by table" }</h4>
                        <canvas ref={self.growth_chart.clone()} class="size-chart" data-testid="growth-chart"
                            data-points={v["growth"].as_array().map_or(0, Vec::len).to_string()}
                            data-lines={crate::charts::growth_lines(&v["growth"], GROWTH_TABLES).len().to_string()}
                            width="900" height="320"
                            title={self.hover_text[1].clone().unwrap_or_default()} data-hover={self.hover_text[1].clone().unwrap_or_default()}
                            onmousemove={link.callback(|e: MouseEvent| Msg::ChartHover(1, Some((e.offset_x(), e.offset_y()))))}
                            onmouseleave={link.callback(|_| Msg::ChartHover(1, None))} />
                        <table class="sizes" data-testid="sizes-by-table">
                            <tr><th>{ "table" }</th><th>{ "as stored" }</th><th>{ "full values" }</th><th>{ "diffs" }</th></tr>
                            { for bars.iter().map(|b| html! {
                                <tr data-testid="size-by-table" data-table={b.table.clone()} data-bytes-stored={b.stored.to_string()}
                                    data-bytes-full={attr(&b.full)} data-bytes-diff={attr(&b.diff)}>
                                    <td>{ b.table.clone() }</td>
                                    <td>{ crate::draw::human_bytes(b.stored as f64) }</td>
                                    <td>{ b.full.map_or("–".into(), |x| crate::draw::human_bytes(x as f64)) }</td>
                                    <td>{ b.diff.map_or("–".into(), |x| crate::draw::human_bytes(x as f64)) }</td>
                                </tr>
                            }) }
                        </table>
                        <details>
                            <summary>{ format!("By column ({})", cols.len()) }</summary>
                            <table class="sizes">
                                { for cols.iter().map(|(k, b)| html! {
                                    <tr data-testid="size-by-column" data-column={(*k).clone()} data-bytes-stored={s(&b["stored"])}>
                                        <td>{ (*k).clone() }</td><td>{ bytes(&b["stored"]) }</td><td>{ bytes(&b["full"]) }</td><td>{ bytes(&b["diff"]) }</td>
                                    </tr>
                                }) }
                            </table>
                        </details>
                        <h4>{ "By client (the _comment's prefix)" }</h4>
                        <table class="sizes">
                            { for clients.iter().map(|(k, b)| html! {
                                <tr data-testid="size-by-client" data-client={(*k).clone()} data-bytes-stored={s(&b["stored"])}>
                                    <td>{ (*k).clone() }</td><td>{ bytes(&b["stored"]) }</td><td>{ bytes(&b["full"]) }</td><td>{ bytes(&b["diff"]) }</td>
                                </tr>
                            }) }
                        </table>
                        <h4>{ "The 20 largest entries" }</h4>
                        <ol class="largest">
                            { for v["largest"].as_array().into_iter().flatten().map(|e| {
                                let i = e["index"].as_u64();
                                html! {
                                    <li data-testid="largest-entry" data-record={s(&e["record"])} data-bytes={s(&e["stored"])}>
                                        if let Some(i) = i {
                                            <a href="#" title="Show the database at this index"
                                                onclick={link.callback(move |ev: MouseEvent| { ev.prevent_default(); Msg::SetAt(i) })}>{ format!("#{i}") }</a>
                                        } else {
                                            <span>{ format!("record {}", s(&e["record"])) }</span>
                                        }
                                        { format!(" · {} · mostly {} · {}", bytes(&e["stored"]), s(&e["top_table"]), s(&e["comment"])) }
                                    </li>
                                }
                            }) }
                        </ol>
                    </>
                }
            }
        };
        html! {
            <section class="sizes-box" data-testid="sizes">
                <h3>{ "What made it big" }</h3>
                { body }
            </section>
        }
    }
}

impl ContentsPage {
    /// The what-if's snapshot by table, beside what the log holds of each.
    fn view_snapshot(&self, c: &Value, v: &Value) -> Html {
        let mut rows: Vec<(&String, u64)> = c["by_table"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(t, b)| (t, b.as_u64().unwrap_or(0)))
            .collect();
        ovsdb::order::sort_by(&mut rows, |a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        html! {
            <details class="snapshot" data-testid="snapshot-sizes">
                <summary title="The snapshot ovsdb-server/compact would write at this index, by table, against the bytes of each table in the log">
                    { format!("Snapshot at {}: {} by table, against the log", s(&c["at"]), bytes(&c["snapshot_bytes"])) }
                </summary>
                <table class="sizes">
                    <tr><th>{ "table" }</th><th>{ "in the snapshot" }</th><th>{ "in the log (as stored)" }</th></tr>
                    { for rows.iter().map(|(t, b)| html! {
                        <tr data-testid="snapshot-by-table" data-table={(*t).clone()} data-bytes={b.to_string()}>
                            <td>{ (*t).clone() }</td>
                            <td>{ crate::draw::human_bytes(*b as f64) }</td>
                            <td>{ bytes(&v["by_table"][t.as_str()]["stored"]) }</td>
                        </tr>
                    }) }
                </table>
            </details>
        }
    }

    fn view_diff(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let on_enter =
            link.batch_callback(|e: KeyboardEvent| (e.key() == "Enter").then_some(Msg::Diff));
        let result = match &self.diff {
            None => html! {},
            Some(None) => html! { <p class="hint">{ "Comparing…" }</p> },
            Some(Some(v)) if v.get("error").is_some() => {
                html! { <div class="error" role="alert">{ s(&v["error"]) }</div> }
            }
            Some(Some(v)) => {
                let tables: Vec<&Value> = v["tables"].as_array().into_iter().flatten().collect();
                let uuid_list = |table: &str, list: &Value| -> Html {
                    html! {
                        { for list.as_array().into_iter().flatten().map(|u| {
                            let (t, u) = (table.to_string(), s(u));
                            let (t2, u2) = (t.clone(), u.clone());
                            html! {
                                <li><a href="#" class="ref" data-ref-table={t} data-ref-uuid={u.clone()} title="Go to this row (at the open index)"
                                    onclick={link.callback(move |e: MouseEvent| { e.prevent_default(); Msg::GoTo(t2.clone(), u2.clone()) })}>{ u }</a></li>
                            }
                        }) }
                    }
                };
                html! {
                    <div data-testid="diff" data-from={s(&v["from"])} data-to={s(&v["to"])}>
                        <p class="hint">{ format!("From index {} to {}: {} tables changed ({:.0} ms)", s(&v["from"]), s(&v["to"]), tables.len(), v["ms"].as_f64().unwrap_or(0.0)) }</p>
                        { for tables.iter().map(|t| {
                            let name = s(&t["table"]);
                            let n = |k: &str| t[k].as_array().map_or(0, Vec::len);
                            html! {
                                <details class="diff-table" data-testid="diff-table" data-table={name.clone()}
                                    data-added={n("added").to_string()} data-removed={n("removed").to_string()} data-changed={n("changed").to_string()}>
                                    <summary>{ format!("{name}: +{} added, −{} removed, ~{} changed", n("added"), n("removed"), n("changed")) }</summary>
                                    if n("added") > 0 {
                                        <h5>{ "Added" }</h5><ul class="uuids">{ uuid_list(&name, &t["added"]) }</ul>
                                    }
                                    if n("removed") > 0 {
                                        <h5>{ "Removed" }</h5><ul class="uuids">{ for t["removed"].as_array().into_iter().flatten().map(|u| html! { <li>{ s(u) }</li> }) }</ul>
                                    }
                                    { for t["changed"].as_array().into_iter().flatten().map(|r| html! {
                                        <details class="diff-row" data-uuid={s(&r["uuid"])}>
                                            <summary>{ format!("{} ({} columns)", s(&r["uuid"]), r["columns"].as_array().map_or(0, Vec::len)) }</summary>
                                            <table class="coldiff">
                                                { for r["columns"].as_array().into_iter().flatten().map(|c| html! {
                                                    <tr><th>{ s(&c["column"]) }</th><td class="fold old">{ s(&c["old"]) }</td><td>{ "→" }</td><td class="fold new">{ s(&c["new"]) }</td></tr>
                                                }) }
                                            </table>
                                        </details>
                                    }) }
                                </details>
                            }
                        }) }
                    </div>
                }
            }
        };
        html! {
            <section class="diff-box rowpanel">
                <h3>{ "Compare two indexes" }</h3>
                <label title="Rows added, removed and changed from this index to the open one (Enter)">{ "From index " }
                    <input type="number" data-testid="diff-from" value={self.diff_from.clone()}
                        oninput={link.callback(|e: InputEvent| Msg::EditDiffFrom(e.target_unchecked_into::<HtmlInputElement>().value()))}
                        onkeydown={on_enter} />
                </label>
                <button data-testid="diff-run" title="Compare (Enter)" onclick={link.callback(|_| Msg::Diff)}>{ "Compare with the open index" }</button>
                { result }
            </section>
        }
    }
}
