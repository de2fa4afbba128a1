//! The Contents page's side of the worker: the `contents-*` requests it
//! sends (open, rows, row, history) and the answers it takes in.

use js_sys::{Object, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::MessageEvent;
use yew::prelude::*;

use super::{js_get, s, ContentsPage, Msg, BLOCK, ROW, VIEW};

impl ContentsPage {
    pub(super) fn send(
        &mut self,
        ctx: &Context<Self>,
        kind: &str,
        fields: &[(&str, JsValue)],
    ) -> u32 {
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

    pub(super) fn open(&mut self, ctx: &Context<Self>, at: Option<u64>) {
        let name = ctx
            .props()
            .files
            .get(self.lane)
            .cloned()
            .unwrap_or_default();
        self.loading = true;
        self.error = None;
        self.asked_at = at;
        // A landing the worker announces from now on is an older jump's
        // (its `contents-landed` may cross this request): the rows it
        // would ask for would land this one at once.
        self.landing = None;
        // The rows on screen (and a few around them), which a long jump
        // shows first (`preview`): the same file and table, no query.
        let same_file = self.opened.as_ref().is_some_and(|o| o["name"] == *name);
        let first = (self.scroll_top / ROW) as usize;
        let view = match (&self.table, same_file && self.query.trim().is_empty()) {
            (Some(t), true) => JsValue::from(t.as_str()),
            _ => JsValue::UNDEFINED,
        };
        self.open_id = self.send(
            ctx,
            "contents-open",
            &[
                ("lane", (self.lane as f64).into()),
                ("name", name.into()),
                ("at", at.map_or(JsValue::from(-1.0), |a| (a as f64).into())),
                ("viewTable", view),
                ("viewStart", (first.saturating_sub(5) as f64).into()),
                ("viewCount", ((VIEW + 10) as f64).into()),
            ],
        );
    }

    fn reset_rows(&mut self) {
        self.blocks.clear();
        self.stale.clear();
        self.preview = None;
        self.requested.clear();
    }

    /// What waits for the open database: its blocks of rows, the
    /// overview, the selected row and the sizes.
    fn ask_for_the_rest(&mut self, ctx: &Context<Self>) {
        if self.overview_open() {
            self.overview_id = self.send(ctx, "contents-overview", &[]);
        }
        self.fetch(ctx);
        if let Some(u) = self.selected.clone() {
            self.select(ctx, u);
        }
        if self.sizes.is_some() {
            ctx.link().send_message(Msg::Sizes);
        }
    }

    /// Asks for the blocks the grid's window needs.
    pub(super) fn fetch(&mut self, ctx: &Context<Self>) {
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
    pub(super) fn reselect(&mut self, ctx: &Context<Self>) {
        self.reset_rows();
        self.scroll_top = 0.0;
        self.scroll_to = Some(0);
        self.fetch(ctx);
    }

    pub(super) fn select(&mut self, ctx: &Context<Self>, uuid: String) {
        self.selected = Some(uuid.clone());
        self.row = None;
        self.history = None;
        self.row_id = self.send(ctx, "contents-row", &[("uuid", uuid.as_str().into())]);
        self.history_id = self.send(ctx, "contents-history", &[("uuid", uuid.as_str().into())]);
    }

    pub(super) fn on_worker(&mut self, ctx: &Context<Self>, data: JsValue) -> bool {
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
                let same_table =
                    keep.is_some() && self.opened.as_ref().is_some_and(|o| o["name"] == v["name"]);
                self.table = keep.or_else(|| {
                    // The first table with rows.
                    tables
                        .iter()
                        .find(|t| t["rows"].as_u64().unwrap_or(0) > 0)
                        .or(tables.first())
                        .map(|t| s(&t["name"]))
                });
                let preview = v.get("preview").cloned();
                self.opened = Some(v);
                self.overview = None;
                self.landing = None;
                if same_table {
                    // The same file and table at another index: its rows
                    // stay on screen until the new ones come (`stale`).
                    if !self.blocks.is_empty() {
                        self.stale = std::mem::take(&mut self.blocks);
                    }
                    self.preview = None;
                    self.requested.clear();
                } else {
                    self.reset_rows();
                }
                match preview.filter(|p| p["table"].as_str() == self.table.as_deref()) {
                    Some(p) => {
                        // A long jump: the rows on screen now, the rest
                        // once the worker has landed it.
                        self.total = p["total"].as_u64().unwrap_or(0) as usize;
                        self.columns = p["columns"]
                            .as_array()
                            .map(|a| a.iter().map(s).collect())
                            .unwrap_or_default();
                        self.mode = "all".into();
                        self.note = None;
                        self.shown_query = self.query.clone();
                        let start = p["start"].as_u64().unwrap_or(0) as usize;
                        self.preview =
                            Some((start, p["rows"].as_array().cloned().unwrap_or_default()));
                        self.stale.clear();
                        self.rows_at = self.opened.as_ref().and_then(|o| o["at"].as_u64());
                        self.landing = self.rows_at;
                    }
                    None => self.ask_for_the_rest(ctx),
                }
                true
            }
            "contents-landed" => {
                let at = v["at"].as_u64();
                if at.is_none() || at != self.landing {
                    return false;
                }
                self.landing = None;
                match err {
                    Some(e) => self.error = Some(e),
                    None => self.ask_for_the_rest(ctx),
                }
                true
            }
            "contents-rows" => {
                if let Some(e) = err {
                    self.error = Some(e);
                    self.stale.clear();
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
                self.blocks
                    .insert(b, v["rows"].as_array().cloned().unwrap_or_default());
                if self.requested.is_empty() {
                    self.stale.clear();
                    self.preview = None;
                }
                // The grid says the index of the rows it shows: the new
                // one once none of the old rows are left.
                if self.stale.is_empty() {
                    self.rows_at = v["at"].as_u64();
                }
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

    pub(super) fn range(&self) -> (u64, u64) {
        self.opened.as_ref().map_or((0, 0), |o| {
            (
                o["first"].as_u64().unwrap_or(0),
                o["last"].as_u64().unwrap_or(0),
            )
        })
    }

    pub(super) fn set_at(&mut self, ctx: &Context<Self>, at: u64) {
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

/// Listens to the page's parser worker for this page's replies.
pub(super) fn listen(ctx: &Context<ContentsPage>) -> gloo_events::EventListener {
    let link = ctx.link().clone();
    gloo_events::EventListener::new(&ctx.props().worker.worker, "message", move |ev| {
        let ev: &MessageEvent = ev.unchecked_ref();
        link.send_message(Msg::Worker(ev.data()));
    })
}
