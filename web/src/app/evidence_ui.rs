//! The operator-evidence parts of the explorer page: the inputs panel, the
//! findings list, the servers' last `cluster/status`, the log tracks under
//! the lanes and the virtualized log panel (whose lines the worker serves).
//! A child module of `app`, so it works on `App`'s state directly.

use std::rc::Rc;

use js_sys::{Object, Reflect};
use timeline::axis::Axis;
use timeline::time::utc_datetime;
use wasm_bindgen::prelude::*;
use web_sys::{HtmlElement, HtmlInputElement, HtmlSelectElement, MouseEvent};
use yew::prelude::*;

use super::{js_get, App, Msg};
use crate::draw::{self, human_bytes, LogTrack, TrackMark, TrackSpan};
use crate::evidence_view::{DiagView, ServerView};

/// Height of one log panel row, in CSS pixels.
const ROW: f64 = 18.0;
/// Rows visible in the log panel.
const VIEW: usize = 18;
/// Rows asked of the worker at a time.
const WINDOW: usize = 120;

/// One change of the log panel's filters.
pub enum LogFilter {
    Server(i32),
    Module(String),
    Level(String),
    Text(String),
}

/// The log panel: filters, the worker's selection, the rows loaded around
/// the visible ones.
pub struct LogPanel {
    pub open: bool,
    /// Server index, or -1 for all servers (merged by time).
    pub server: i32,
    pub module: String,
    pub level: String,
    pub text: String,
    /// Id of the last query: answers to older ones are dropped.
    pub query: u32,
    pub total: usize,
    /// Rows `start..start + rows.len()` of the selection: (server, line, text).
    pub start: usize,
    pub rows: Vec<(u32, u32, String)>,
    /// First visible row.
    pub first: usize,
    pub requested: Option<usize>,
    pub scroll_to: Option<usize>,
    pub focus: Option<(usize, u64)>,
}

impl Default for LogPanel {
    fn default() -> Self {
        LogPanel {
            open: false,
            server: -1,
            module: String::new(),
            level: String::new(),
            text: String::new(),
            query: 0,
            total: 0,
            start: 0,
            rows: Vec::new(),
            first: 0,
            requested: None,
            scroll_to: None,
            focus: None,
        }
    }
}

impl LogPanel {
    pub fn apply(&mut self, f: LogFilter) {
        match f {
            LogFilter::Server(s) => self.server = s,
            LogFilter::Module(m) => self.module = m.trim().to_string(),
            LogFilter::Level(l) => self.level = l,
            LogFilter::Text(t) => self.text = t,
        }
    }
}

fn mark(
    ms: i64,
    color: &'static str,
    glyph: &'static str,
    tip: String,
    line: u64,
    term: Option<u64>,
) -> TrackMark {
    TrackMark {
        ms,
        color,
        glyph,
        tip,
        line,
        term,
    }
}

/// One server's log events as marks and spans at their wall times.
fn track(si: usize, s: &ServerView) -> LogTrack {
    let mut tr = LogTrack {
        server: si,
        label: format!("{} log", s.name),
        sub: match (&s.short, &s.role, s.term) {
            (sid, Some(r), Some(t)) => format!("{sid} {r} t{t}"),
            (sid, _, _) => format!("server {sid}"),
        },
        ..Default::default()
    };
    let mut down: Vec<(String, i64, u64)> = Vec::new();
    let tip = |ms: i64, line: u64, what: String| {
        format!(
            "{} · {} UTC · line {}\n{what}",
            s.label(),
            utc_datetime(ms),
            line + 1
        )
    };
    let mut last_ms = None;
    for e in &s.events {
        let p = e.time_ms;
        last_ms = Some(p);
        let t = tip(p, e.line, e.text.clone());
        let m = |c, g| Some(mark(p, c, g, t.clone(), e.line, None));
        // Election events carry their term: hovering one highlights the
        // term's bands in the lanes.
        let elected = |c, g| Some(mark(p, c, g, t.clone(), e.line, e.term));
        let peer = e.peer.clone().unwrap_or_default();
        let amount = e.amount.unwrap_or(0);
        let mk = match e.kind.as_str() {
            "election-started" => elected("#d97706", "E"),
            "election-won" => elected("#1d2430", "L"),
            "leader-is" => elected("#64748b", ""),
            "transfer-started" | "transfer-received" => m("#7c3aed", "T"),
            "probe-timeout" => {
                if !down.iter().any(|d| d.0 == peer) {
                    down.push((peer, p, e.line));
                }
                m("#dc2626", "P")
            }
            "snapshot-sending" | "snapshot-installed" => m("#7c3aed", "S"),
            "compacting" | "snapshot-written" => m("#0f766e", "C"),
            "server-start" => m("#111827", "▶"),
            "server-exit" => m("#111827", "■"),
            "truncating" | "stale-term" | "append-rejected" => m("#b45309", "!"),
            "adding-server" | "add-server-result" | "server-added" | "server-removed"
            | "leaving" | "left" => m("#d97706", "M"),
            "long-poll" => {
                // The warning is logged when the poll ends: the span ends there.
                tr.spans.push(TrackSpan {
                    from_ms: p - amount as i64,
                    to_ms: p,
                    color: "rgba(220,38,38,0.35)",
                    tip: t.clone(),
                    line: e.line,
                });
                None
            }
            "connection-lost" => {
                if !down.iter().any(|d| d.0 == peer) {
                    down.push((peer, p, e.line));
                }
                None
            }
            "connected" => {
                if let Some(k) = down.iter().position(|d| d.0 == peer) {
                    let (peer, from, line) = down.remove(k);
                    tr.spans.push(TrackSpan {
                        from_ms: from,
                        to_ms: p,
                        color: "rgba(100,116,139,0.3)",
                        tip: tip(from, line, format!("disconnected from {peer}")),
                        line,
                    });
                }
                None
            }
            "memory-peak" | "memory-grew" => {
                tr.memory.push((p, amount as f64));
                None
            }
            _ => None,
        };
        tr.marks.extend(mk);
    }
    if let Some(end) = last_ms {
        for (peer, from, line) in down {
            tr.spans.push(TrackSpan {
                from_ms: from,
                to_ms: end,
                color: "rgba(100,116,139,0.3)",
                tip: tip(
                    from,
                    line,
                    format!("disconnected from {peer} (to the end of the log)"),
                ),
                line,
            });
        }
    }
    tr
}

fn when(ms: Option<i64>) -> String {
    ms.map_or("—".to_string(), utc_datetime)
}

impl App {
    pub(super) fn set_diagnosis(&mut self, d: DiagView) {
        let mut order: Vec<usize> = (0..d.findings.len()).collect();
        ovsdb::order::sort_by_key(&mut order, |&i| {
            d.findings[i].finding.time_ms.unwrap_or(i64::MAX)
        });
        self.finding_order = Rc::new(order);
        self.selected_finding = None;
        self.focus = None;
        // Log events are placed by their time: on the index axis through
        // the entries' dates, so without any dated entry only the time
        // axis could show them (and it needs a dated entry too).
        let placeable = self.timeline.as_ref().is_some_and(|t| Axis::has_time(t));
        self.tracks = Rc::new(if placeable {
            d.servers
                .iter()
                .enumerate()
                .filter(|(_, s)| s.lines > 0)
                .map(|(i, s)| track(i, s))
                .collect()
        } else {
            Vec::new()
        });
        self.hover_term = None;
        self.rebuild_axis();
        if d.inputs.is_empty() && !d.ignored.is_empty() {
            let why: Vec<String> = d
                .ignored
                .iter()
                .map(|i| {
                    format!(
                        "{} is not an OVSDB database file, ovsdb-server log, cluster/status or memory/show output ({}).",
                        i.path, i.reason
                    )
                })
                .collect();
            self.error = Some(match self.error.take() {
                Some(e) => format!("{e}\n{}", why.join("\n")),
                None => why.join("\n"),
            });
        }
        self.log.query = 0;
        self.log.total = 0;
        self.log.rows.clear();
        self.log.requested = None;
        self.log.focus = None;
        if self.log.server >= d.servers.len() as i32 {
            self.log.server = -1;
        }
        self.memory = Rc::new(memory_lines(&d));
        self.diag = Some(Rc::new(d));
        if self.log.open {
            self.query_log(None);
        }
        self.dirty = true;
    }

    pub(super) fn focus_finding(&mut self, i: usize) {
        let Some(d) = self.diag.clone() else { return };
        let Some(fv) = d.findings.get(i) else { return };
        self.selected_finding = Some(i);
        let f = &fv.finding;
        if let (Some(p), true) = (self.axis.place(f.index, f.time_ms), self.timeline.is_some()) {
            let z = self.vp.zoom_level();
            self.vp.set_zoom_level(z, p);
            self.focus = Some((f.index, f.time_ms));
            self.dirty = true;
            self.update_hash();
        }
        if let Some(&(s, line, _)) = fv.evidence.first() {
            self.open_log_at(s, line);
        }
    }

    fn open_log_at(&mut self, server: usize, line: u64) {
        self.log.open = true;
        if self.log.server >= 0 && self.log.server != server as i32 {
            self.log.server = server as i32;
        }
        self.query_log(Some((server, line)));
    }

    pub(super) fn query_log(&mut self, focus: Option<(usize, u64)>) {
        let Some(w) = &self.worker else { return };
        self.log.query += 1;
        self.log.focus = focus;
        self.log.rows.clear();
        self.log.requested = None;
        let msg = Object::new();
        let set = |k: &str, v: JsValue| {
            let _ = Reflect::set(&msg, &k.into(), &v);
        };
        set("type", "log-query".into());
        set("id", self.log.query.into());
        set("server", self.log.server.into());
        set("module", self.log.module.as_str().into());
        set("level", self.log.level.as_str().into());
        set("text", self.log.text.as_str().into());
        if let Some((s, l)) = focus {
            set("focusServer", (s as f64).into());
            set("focusLine", (l as f64).into());
        }
        let _ = w.post_message(&msg);
    }

    fn request_rows(&mut self) {
        let lp = &self.log;
        let end = (lp.first + VIEW).min(lp.total);
        let loaded = lp.start <= lp.first && lp.start + lp.rows.len() >= end;
        let from = lp.first.saturating_sub(WINDOW / 4);
        if loaded || lp.total == 0 || lp.requested == Some(from) {
            return;
        }
        let Some(w) = &self.worker else { return };
        let msg = Object::new();
        let _ = Reflect::set(&msg, &"type".into(), &"log-lines".into());
        let _ = Reflect::set(&msg, &"id".into(), &lp.query.into());
        let _ = Reflect::set(&msg, &"start".into(), &(from as f64).into());
        let _ = Reflect::set(&msg, &"count".into(), &(WINDOW as f64).into());
        let _ = w.post_message(&msg);
        self.log.requested = Some(from);
    }

    pub(super) fn on_log_result(&mut self, data: &JsValue) -> bool {
        if js_get(data, "id").as_f64() != Some(self.log.query as f64) {
            return false;
        }
        self.log.total = js_get(data, "total").as_f64().unwrap_or(0.0) as usize;
        let row = js_get(data, "focusRow").as_f64().map(|r| r as usize);
        self.log.first = row.unwrap_or(0).saturating_sub(3);
        self.log.scroll_to = Some(self.log.first);
        self.request_rows();
        true
    }

    pub(super) fn on_log_lines(&mut self, data: &JsValue) -> bool {
        if js_get(data, "id").as_f64() != Some(self.log.query as f64) {
            return false;
        }
        let start = js_get(data, "start").as_f64().unwrap_or(0.0) as usize;
        // Only the window asked for last: an older answer arriving after a
        // newer one must not replace it.
        if self.log.requested.is_some_and(|r| r != start) {
            return false;
        }
        self.log.start = start;
        self.log.rows = crate::msg::from_bytes(&js_get(data, "rows")).unwrap_or_default();
        self.log.requested = None;
        // The view may have scrolled on while the rows were on their way.
        self.request_rows();
        true
    }

    pub(super) fn log_scrolled(&mut self, top: f64) -> bool {
        let first = (top / ROW).floor().max(0.0) as usize;
        if first == self.log.first {
            return false;
        }
        self.log.first = first;
        self.request_rows();
        true
    }

    /// After a render: scroll the log panel to where a query asked.
    pub(super) fn log_rendered(&mut self) {
        if !self.log.open {
            return;
        }
        if let (Some(r), Some(el)) = (self.log.scroll_to, self.log_scroll.cast::<HtmlElement>()) {
            self.log.scroll_to = None;
            el.set_scroll_top((r as f64 * ROW) as i32);
        }
    }

    pub(super) fn track_at(&self, x: f64, y: f64) -> Option<draw::TrackHit> {
        let t = self.timeline.as_ref()?;
        draw::track_hit(
            &self.tracks,
            &self.axis,
            &self.vp,
            &self.layout(),
            t.lanes.len(),
            x,
            y,
        )
    }

    pub(super) fn click_track(&mut self, x: f64, y: f64) -> bool {
        let Some(h) = self.track_at(x, y) else {
            return false;
        };
        let server = self.tracks[h.track].server;
        self.open_log_at(server, h.line);
        true
    }

    /// The time range of the log tracks (the time axis spans it).
    pub(super) fn log_span(&self) -> Option<(i64, i64)> {
        self.tracks
            .iter()
            .filter_map(|t| t.span())
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
    }

    /// Each server's last `cluster/status`, on its database lane: role,
    /// term, leader, log range, entries not yet committed / applied, and
    /// the next / match index of each peer (a leader prints them).
    pub(super) fn view_lane_status(&self) -> Html {
        let (Some(d), Some(t), true) = (&self.diag, &self.timeline, self.lane_status) else {
            return html! {};
        };
        let layout = self.layout();
        let opt = |v: Option<u64>| v.map_or("—".to_string(), |x| x.to_string());
        html! {
            { for d.servers.iter().filter_map(|s| {
                let st = s.status.as_ref()?;
                let li = t.lanes.iter().position(|l| Some(&l.name) == s.lane_name.as_ref())
                    .or_else(|| t.lanes.iter().position(|l| {
                        !s.short.is_empty() && l.summary.server_id.as_deref().is_some_and(|id| id.starts_with(&s.short))
                    }))?;
                Some((s, st, li))
            }).map(|(s, st, li)| {
                let top = layout.lane_top(li) + layout.band + 2.0;
                let leader = match st.leader.as_str() {
                    "self" => format!("self ({})", s.label()),
                    l => l.to_string(),
                };
                let peers: Vec<_> = st.servers.iter().filter(|p| !p.is_self).collect();
                let tip = format!(
                    "Last cluster/status of {} ({}){}\nStatus: {} · election timer {} ms\nConnections: {}",
                    s.label(), s.name,
                    st.server_id.as_ref().map_or(String::new(), |id| format!("\nServer ID {id}")),
                    st.status, opt(st.election_timer_ms), st.connections.join(" "),
                );
                html! {
                    <div class="lane-status" data-testid="lane-status" data-server={s.short.clone()}
                        data-lane={t.lanes[li].name.clone()} data-role={st.role.clone()} data-term={st.term.to_string()}
                        data-leader={st.leader.clone()}
                        data-log={format!("{},{}", opt(st.log_first), opt(st.log_last))}
                        data-not-committed={opt(st.not_committed)} data-not-applied={opt(st.not_applied)}
                        title={tip}
                        style={format!("top:{top}px;right:6px")}>
                        <div class="ls-head"><b data-role={st.role.clone()}>{ st.role.clone() }</b>
                            { format!(" · term {} · leader {}", st.term, leader) }</div>
                        <div>{ format!("Log: [{}, {}] · not committed {} · not applied {}",
                            opt(st.log_first), opt(st.log_last), opt(st.not_committed), opt(st.not_applied)) }</div>
                        <div class="ls-peers">
                            { for peers.iter().map(|p| html! {
                                <span data-testid="lane-status-peer" data-sid={p.sid.clone()}
                                    data-next={p.next_index.map_or(String::new(), |x| x.to_string())}
                                    data-match={p.match_index.map_or(String::new(), |x| x.to_string())}>
                                    { format!("{} next {} match {}", p.sid, opt(p.next_index), opt(p.match_index)) }
                                </span>
                            }) }
                            if peers.is_empty() { <span>{ "no peers" }</span> }
                        </div>
                    </div>
                }
            }) }
        }
    }

    fn server_label(&self, i: Option<usize>) -> String {
        self.diag
            .as_ref()
            .and_then(|d| i.and_then(|i| d.servers.get(i)))
            .map_or("—".to_string(), |s| {
                if s.short.is_empty() {
                    s.name.clone()
                } else {
                    format!("{} ({})", s.short, s.name)
                }
            })
    }

    pub(super) fn view_inputs(&self) -> Html {
        let Some(d) = &self.diag else {
            return html! {};
        };
        html! {
            <section class="inputs" aria-label="Inputs">
                <h2 data-testid="inputs-found" data-value={d.inputs.len().to_string()}>
                    { format!("Inputs: {} used", d.inputs.len()) }
                </h2>
                if !d.inputs.is_empty() {
                    <table>
                        <tr><th>{ "input" }</th><th>{ "kind" }</th><th>{ "server" }</th><th>{ "bytes" }</th></tr>
                        { for d.inputs.iter().map(|i| html! {
                            <tr data-testid="input-row" data-path={i.path.clone()} data-kind={i.kind.name()}
                                data-server={i.server.and_then(|k| d.servers.get(k)).map_or(String::new(), |s| s.short.clone())}>
                                <td class="path">{ i.path.clone() }</td>
                                <td>{ i.kind.name() }</td>
                                <td>{ self.server_label(i.server) }</td>
                                <td class="num">{ human_bytes(i.bytes as f64) }</td>
                            </tr>
                        }) }
                    </table>
                }
                <h3 data-testid="inputs-ignored" data-value={d.ignored.len().to_string()}>
                    { format!("Ignored: {}", d.ignored.len()) }
                </h3>
                if !d.ignored.is_empty() {
                    <table>
                        <tr><th>{ "input" }</th><th>{ "why" }</th></tr>
                        { for d.ignored.iter().map(|i| html! {
                            <tr data-testid="ignored-row" data-path={i.path.clone()}>
                                <td class="path">{ i.path.clone() }</td><td>{ i.reason.clone() }</td>
                            </tr>
                        }) }
                    </table>
                }
            </section>
        }
    }

    pub(super) fn view_findings(&self, ctx: &Context<Self>) -> Html {
        // No input used: the load's error says why, and there is no finding.
        let Some(d) = self.diag.as_ref().filter(|d| !d.inputs.is_empty()) else {
            return html! {};
        };
        let link = ctx.link();
        html! {
            <FindingsList diag={d.clone()} order={self.finding_order.clone()}
                selected={self.selected_finding} hover_term={self.hover_term} log_open={self.log.open}
                on_finding={link.callback(Msg::Finding)} on_toggle_log={link.callback(|_| Msg::ToggleLog)} />
        }
    }

    pub(super) fn view_log(&self, ctx: &Context<Self>) -> Html {
        let (Some(d), true) = (&self.diag, self.log.open) else {
            return html! {};
        };
        let link = ctx.link();
        let lp = &self.log;
        let lo = lp.first.saturating_sub(5);
        let hi = lp.first + VIEW + 5;
        let label = |s: u32| {
            d.servers
                .get(s as usize)
                .map_or("?".to_string(), |x| x.name.clone())
        };
        html! {
            <section class="logpanel" data-testid="log-panel" data-total={lp.total.to_string()}
                data-server={lp.server.to_string()} aria-label="Log">
                <div class="logfilters">
                    <select data-testid="log-server" title="Server"
                        onchange={link.callback(|e: Event| Msg::LogFilter(LogFilter::Server(
                            e.target_unchecked_into::<HtmlSelectElement>().value().parse().unwrap_or(-1))))}>
                        <option value="-1" selected={lp.server < 0}>{ "all servers" }</option>
                        { for d.servers.iter().enumerate().filter(|(_, s)| s.lines > 0).map(|(i, s)| html! {
                            <option value={i.to_string()} selected={lp.server == i as i32}>{ format!("{} ({})", s.name, s.label()) }</option>
                        }) }
                    </select>
                    <input data-testid="log-module" placeholder="module: raft, reconnect…" value={lp.module.clone()} title="Module"
                        oninput={link.callback(|e: InputEvent| Msg::LogFilter(LogFilter::Module(e.target_unchecked_into::<HtmlInputElement>().value())))} />
                    <select data-testid="log-level" title="Level and above"
                        onchange={link.callback(|e: Event| Msg::LogFilter(LogFilter::Level(e.target_unchecked_into::<HtmlSelectElement>().value())))}>
                        { for [("", "any level"), ("err", "ERR and worse"), ("warn", "WARN and worse"), ("info", "INFO and worse"), ("dbg", "DBG and worse")].iter().map(|(v, t)| html! {
                            <option value={*v} selected={lp.level == *v}>{ *t }</option>
                        }) }
                    </select>
                    <input data-testid="log-text" placeholder="text" value={lp.text.clone()} title="Lines containing this text (any case)"
                        oninput={link.callback(|e: InputEvent| Msg::LogFilter(LogFilter::Text(e.target_unchecked_into::<HtmlInputElement>().value())))} />
                    <span data-testid="log-total" data-value={lp.total.to_string()}>{ format!("{} lines", lp.total) }</span>
                    <button onclick={link.callback(|_| Msg::ToggleLog)} title="Close (l)">{ "×" }</button>
                </div>
                <div class="logscroll" ref={self.log_scroll.clone()} style={format!("height:{}px", VIEW as f64 * ROW)}
                    onscroll={link.callback(|e: Event| Msg::LogScroll(e.target_unchecked_into::<HtmlElement>().scroll_top() as f64))}>
                    <div class="logspace" style={format!("height:{}px", lp.total as f64 * ROW)}>
                        { for lp.rows.iter().enumerate().map(|(k, r)| (lp.start + k, r)).filter(|(row, _)| *row >= lo && *row < hi).map(|(row, (s, n, text))| {
                            let focus = lp.focus == Some((*s as usize, *n as u64));
                            html! {
                                <div data-testid="log-line" data-server={d.servers.get(*s as usize).map_or(String::new(), |x| x.label().to_string())}
                                    data-line={(n + 1).to_string()} data-row={row.to_string()}
                                    class={classes!("log-line", focus.then_some("focus"))}
                                    style={format!("top:{}px", row as f64 * ROW)}>
                                    <span class="ln">{ format!("{}:{}", label(*s), n + 1) }</span>{ text.clone() }
                                </div>
                            }
                        }) }
                    </div>
                </div>
            </section>
        }
    }

    pub(super) fn view_status(&self) -> Html {
        let Some(d) = &self.diag else {
            return html! {};
        };
        if d.servers.is_empty() {
            return html! {};
        }
        let opt = |v: Option<u64>| v.map_or("—".to_string(), |x| x.to_string());
        html! {
            <section class="status" aria-label="Servers">
                <h2>{ "Servers: the evidence of each" }</h2>
                <table>
                    <tr><th>{ "server" }</th><th>{ "address" }</th><th>{ "file" }</th><th>{ "log" }</th>
                        <th>{ "role · term" }</th><th>{ "leader" }</th><th>{ "log range" }</th>
                        <th>{ "not committed / applied" }</th><th>{ "peers: next / match" }</th><th>{ "memory" }</th></tr>
                    { for d.servers.iter().map(|s| {
                        let st = s.status.as_ref();
                        html! {
                            <tr data-testid="server-status" data-server={s.short.clone()}
                                data-role={s.role.clone().unwrap_or_default()} data-term={s.term.map_or(String::new(), |t| t.to_string())}>
                                <td title={s.server_id.clone().unwrap_or_default()}>{ format!("{} ({})", s.label(), s.name) }</td>
                                <td>{ s.address.clone().unwrap_or_else(|| "—".into()) }</td>
                                <td>{ s.lane_name.clone().unwrap_or_else(|| "—".into()) }</td>
                                <td title={s.log_parts.join("\n")}>{ if s.lines > 0 { format!("{} lines", s.lines) } else { "—".into() } }</td>
                                <td>{ format!("{} · {}", s.role.clone().unwrap_or_else(|| "—".into()), opt(s.term)) }</td>
                                <td>{ st.map_or("—".to_string(), |st| st.leader.clone()) }</td>
                                <td>{ st.map_or("—".to_string(), |st| format!("[{}, {}]", opt(st.log_first), opt(st.log_last))) }</td>
                                <td>{ st.map_or("—".to_string(), |st| format!("{} / {}", opt(st.not_committed), opt(st.not_applied))) }</td>
                                <td>{ st.map_or("—".to_string(), |st| st.servers.iter().filter(|p| !p.is_self)
                                        .map(|p| format!("{} {}/{}", p.sid, opt(p.next_index), opt(p.match_index)))
                                        .collect::<Vec<_>>().join(", ")) }</td>
                                <td>{ s.memory.as_ref().map_or("—".to_string(), |m| m.iter().take(4)
                                        .map(|(k, v)| format!("{k}:{v}")).collect::<Vec<_>>().join(" ")) }</td>
                            </tr>
                        }
                    }) }
                </table>
                <MemoryChart lines={self.memory.clone()} />
            </section>
        }
    }
}

/// Each server's memory over time, from the log's memory lines
/// (`memory-peak`, `memory-grew`): servers with at least one report.
fn memory_lines(d: &DiagView) -> Vec<crate::charts::MemoryLine> {
    d.servers
        .iter()
        .map(|s| crate::charts::MemoryLine {
            server: s.label().to_string(),
            points: s
                .events
                .iter()
                .filter_map(|e| match e.kind.as_str() {
                    "memory-peak" | "memory-grew" => Some((e.time_ms, e.amount? as f64)),
                    _ => None,
                })
                .collect(),
        })
        .filter(|l| !l.points.is_empty())
        .collect()
}

#[derive(Properties)]
pub struct MemoryChartProps {
    pub lines: Rc<Vec<crate::charts::MemoryLine>>,
}

impl PartialEq for MemoryChartProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.lines, &o.lines)
    }
}

/// The servers' memory over time, drawn by plotters (hidden when no log
/// reports memory); the value under the pointer is its title.
#[function_component(MemoryChart)]
pub fn memory_chart(p: &MemoryChartProps) -> Html {
    let canvas = use_node_ref();
    let hover = use_mut_ref(|| None::<crate::charts::Hover>);
    let text = use_state(|| None::<String>);
    let width = use_state(|| 0);
    {
        // Redrawn when the lines change and when the window is resized.
        let width = width.clone();
        use_effect_with((), move |_| {
            let l = crate::charts::on_resize(move || {
                width.set(
                    gloo_utils::window()
                        .inner_width()
                        .ok()
                        .and_then(|w| w.as_f64())
                        .unwrap_or(0.0) as i32,
                )
            });
            move || drop(l)
        });
    }
    {
        let (canvas, hover, lines) = (canvas.clone(), hover.clone(), p.lines.clone());
        use_effect_with((Rc::as_ptr(&p.lines) as usize, *width), move |_| {
            if let Some(c) = canvas.cast::<web_sys::HtmlCanvasElement>() {
                match crate::charts::draw_memory(&c, &lines) {
                    Ok(h) => *hover.borrow_mut() = Some(h),
                    Err(e) => web_sys::console::warn_1(&format!("memory chart: {e}").into()),
                }
            }
        });
    }
    if p.lines.is_empty() {
        return html! {};
    }
    let onmousemove = {
        let (hover, text) = (hover.clone(), text.clone());
        Callback::from(move |e: MouseEvent| {
            let t = hover
                .borrow()
                .as_ref()
                .and_then(|h| h(e.offset_x(), e.offset_y()));
            if t != *text {
                text.set(t);
            }
        })
    };
    let onmouseleave = {
        let text = text.clone();
        Callback::from(move |_: MouseEvent| text.set(None))
    };
    let points: usize = p.lines.iter().map(|l| l.points.len()).sum();
    html! {
        <figure class="memory-chart">
            <figcaption>{ "Memory over time, from the servers' logs" }</figcaption>
            <canvas ref={canvas} class="sim-canvas" data-testid="memory-chart" width="900" height="240"
                data-lines={p.lines.len().to_string()} data-points={points.to_string()}
                title={(*text).clone().unwrap_or_default()} data-hover={(*text).clone().unwrap_or_default()}
                {onmousemove} {onmouseleave} />
        </figure>
    }
}

/// What the findings list shows. Compared by pointer (the diagnosis and the
/// order are shared, not copied) and by the selection: the list is rebuilt
/// only when one of them changes, not on every render of the page (a
/// million-line log can give tens of thousands of findings, and the log
/// panel re-renders the page on each row it scrolls). The callbacks are
/// left out of the comparison: they always send the same messages.
#[derive(Properties)]
pub struct FindingsProps {
    pub diag: Rc<DiagView>,
    pub order: Rc<Vec<usize>>,
    pub selected: Option<usize>,
    pub hover_term: Option<u64>,
    pub log_open: bool,
    pub on_finding: Callback<usize>,
    pub on_toggle_log: Callback<()>,
}

impl PartialEq for FindingsProps {
    fn eq(&self, o: &Self) -> bool {
        Rc::ptr_eq(&self.diag, &o.diag)
            && Rc::ptr_eq(&self.order, &o.order)
            && self.selected == o.selected
            && self.hover_term == o.hover_term
            && self.log_open == o.log_open
    }
}

/// Findings listed at first, and added by each "more" (the page's work per
/// frame grows with its element count: 20 000 findings in the page made
/// every frame of the log panel's scrolling take 100–400 ms).
const FINDINGS_SHOWN: usize = 200;

/// The findings, in time order, each a `data-testid="finding"` item: the
/// first [`FINDINGS_SHOWN`] (and always up to the selected one), then a
/// button for more.
#[function_component(FindingsList)]
pub fn findings_list(p: &FindingsProps) -> Html {
    let d = &p.diag;
    let shown = use_state(|| FINDINGS_SHOWN);
    let upto = p
        .selected
        .and_then(|s| p.order.iter().position(|&i| i == s))
        .map_or(0, |k| k + 1);
    let n = (*shown).max(upto).min(p.order.len());
    let more = {
        let shown = shown.clone();
        Callback::from(move |_: MouseEvent| shown.set(n + FINDINGS_SHOWN))
    };
    html! {
        <section class="findings" aria-label="Findings">
            <h2 data-testid="findings-count" data-value={d.findings.len().to_string()}>
                { format!("Findings: {}", d.findings.len()) }
                <button data-testid="log-toggle" title="Show / hide the log panel (l)"
                    aria-pressed={p.log_open.to_string()} onclick={p.on_toggle_log.reform(|_| ())}>{ "Log" }</button>
            </h2>
            if d.findings.is_empty() {
                <p class="hint">{ "Nothing found in these inputs." }</p>
            }
            <ol>
                { for p.order.iter().take(n).map(|&i| {
                    let fv = &d.findings[i];
                    let f = &fv.finding;
                    let onclick = p.on_finding.reform(move |_| i);
                    let selected = p.selected == Some(i);
                    let linked = p.hover_term.is_some() && f.term == p.hover_term;
                    html! {
                        <li data-testid="finding" data-kind={f.kind.clone()} data-server={fv.server.clone()}
                            data-term={f.term.map_or(String::new(), |t| t.to_string())}
                            data-linked={linked.to_string()}
                            data-time-ms={f.time_ms.map_or(String::new(), |t| t.to_string())}
                            data-severity={f.severity.name()} data-cause={f.cause.clone().unwrap_or_default()}
                            data-index={f.index.map_or(String::new(), |x| x.to_string())}
                            data-selected={selected.to_string()}
                            class={classes!("finding", format!("sev-{}", f.severity.name()), selected.then_some("selected"), linked.then_some("linked"))}
                            title="Show on the timeline and in the log (n / p: next / previous)"
                            tabindex="0" {onclick}>
                            <div class="fhead">
                                <span class="sev">{ f.severity.name() }</span>
                                <b>{ f.kind.clone() }</b>
                                <span class="who">{ if fv.server.is_empty() { String::new() } else { format!("server {}", fv.server) } }</span>
                                <span data-testid="finding-cluster">{ fv.cluster.clone() }</span>
                                <span class="when">{ when(f.time_ms) }</span>
                                if let Some(c) = &f.cause { <span class="cause">{ format!("cause: {c}") }</span> }
                                if let Some(ms) = f.duration_ms { <span>{ format!("{ms} ms") }</span> }
                                if let Some(x) = f.index { <span>{ format!("index {x}") }</span> }
                                if let Some(t) = f.term { <span>{ format!("term {t}") }</span> }
                            </div>
                            <p>{ f.summary.clone() }</p>
                            if !fv.evidence.is_empty() {
                                <ul class="evidence">
                                    { for fv.evidence.iter().take(6).map(|(s, line, text)| html! {
                                        <li data-testid="finding-evidence">
                                            <code>{ format!("{}:{}", d.servers.get(*s).map_or("?", |x| x.name.as_str()), line + 1) }</code>
                                            { " " }{ text.clone() }
                                        </li>
                                    }) }
                                </ul>
                            }
                        </li>
                    }
                }) }
            </ol>
            if n < p.order.len() {
                <p class="hint" data-testid="findings-shown" data-value={n.to_string()}>
                    { format!("Showing the first {n} of {} findings, in time order. ", p.order.len()) }
                    <button data-testid="findings-more" title="List more of the findings" onclick={more}>{ format!("Show {} more", FINDINGS_SHOWN.min(p.order.len() - n)) }</button>
                </p>
            }
        </section>
    }
}
