//! The explorer page's HTML: the top bar, progress, banners, summary,
//! inspector, cluster, help, and where the other panels go.

use timeline::axis::{Axis, AxisMode};
use timeline::time::utc_datetime;
use timeline::{MarkerKind, SizeView};
use web_sys::{DragEvent, HtmlInputElement, HtmlSelectElement, MouseEvent};
use yew::prelude::*;

use super::{App, Msg};
use crate::draw::{human_bytes, short_sid};
use crate::files;
use crate::inspector::{folded, Changes, Detail};
use crate::samples;

impl App {
    pub(super) fn page(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let onchange = link.batch_callback(|e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            let files = files::from_list(input.files());
            input.set_value("");
            Some(Msg::PickFiles(files))
        });
        let ondragover = link.callback(|e: DragEvent| {
            e.prevent_default();
            Msg::Dragging(true)
        });
        let ondragleave = link.callback(|e: DragEvent| {
            e.prevent_default();
            Msg::Dragging(false)
        });
        let ondrop = link.batch_callback(|e: DragEvent| {
            e.prevent_default();
            // Entries must be taken now: the items die with the event.
            let dropped = files::from_drop(e.data_transfer());
            vec![Msg::Dragging(false), Msg::Dropped(dropped)]
        });
        let on_sample = link.callback(|e: Event| {
            let s: HtmlSelectElement = e.target_unchecked_into();
            Msg::PickSample(s.value())
        });
        let sample_value = self.sample.clone().unwrap_or_default();

        html! {
            <div class={classes!("app", self.dragging.then_some("dragging"))} {ondragover} {ondragleave} {ondrop}>
                <header class="topbar">
                    <h1>{ "ovsdb-scope" }</h1>
                    <label class="picker" title="Database files, ovsdb-server logs, cluster/status and memory/show output, archives (.gz, .xz, .tar, .tar.gz, .tar.xz)">
                        <span>{ "Open files" }</span>
                        <input type="file" multiple=true data-testid="file-input" onchange={onchange.clone()} />
                    </label>
                    <label class="picker" title="A whole folder, e.g. an unpacked must-gather or sosreport">
                        <span>{ "or a folder" }</span>
                        <input type="file" multiple=true webkitdirectory=true data-testid="folder-input" {onchange} />
                    </label>
                    <label class="picker" title="Recorded clusters that come with the app">
                        <span>{ "or a bundled sample" }</span>
                        <select data-testid="sample-picker" onchange={on_sample}>
                            <option value="" selected={sample_value.is_empty()} disabled=true>{ "—" }</option>
                            { for samples::SAMPLES.iter().map(|(n, _)| html! {
                                <option value={*n} selected={sample_value == *n}>{ *n }</option>
                            }) }
                            <optgroup label="incidents (with logs and status)">
                                { for samples::INCIDENTS.iter().map(|(n, _)| html! {
                                    <option value={*n} selected={sample_value == *n}>{ *n }</option>
                                }) }
                            </optgroup>
                        </select>
                    </label>
                    <div class="modes" role="group" aria-label="Storage mode">
                        { for SizeView::ALL.iter().map(|&m| {
                            let onclick = link.callback(move |_| Msg::SetMode(m));
                            html! {
                                <button data-testid={format!("storage-{}", m.name())}
                                    class={classes!((self.mode == m).then_some("active"))}
                                    aria-pressed={(self.mode == m).to_string()} {onclick}
                                    title="Entry sizes: as stored, with full values or with column diffs (s f d)">
                                    { m.label() }
                                </button>
                            }
                        }) }
                    </div>
                    { self.view_axis_buttons(ctx) }
                    <button onclick={link.callback(|_| Msg::ExportPng)} data-testid="export-png" title="Save the timeline as a PNG image">{ "PNG" }</button>
                    <button onclick={link.callback(|_| Msg::ExportJson)} data-testid="export-json" title="Save the figures as JSON (as inspect --json)">{ "JSON" }</button>
                    <button onclick={link.callback(|_| Msg::ToggleHelp)} data-testid="help-button" title="Keys (?)">{ "?" }</button>
                </header>
                <p class="tagline">
                    { "Drop what you collected from one cluster anywhere on the page: .db files, ovsdb-server logs, \
                       cluster/status and memory/show output, folders and archives. \
                       Everything runs in your browser; nothing is uploaded." }
                    <label class="keep" title="Store the files you open in this browser's own storage (IndexedDB), so that after a reload you can reopen them with one click. They never leave the browser; Forget deletes them.">
                        <input type="checkbox" data-testid="keep-files" checked={self.keep}
                            onchange={link.callback(|e: Event| Msg::SetKeep(e.target_unchecked_into::<HtmlInputElement>().checked()))} />
                        { " Keep opened files in this browser" }
                    </label>
                    if let Some(m) = &self.kept {
                        <button data-testid="reopen-kept" data-files={m.names.join(",")}
                            title={format!("Kept {} UTC", utc_datetime(m.saved_ms as i64))}
                            onclick={link.callback(|_| Msg::ReopenKept)}>
                            { format!("Reopen {} ({})", m.names.join(", "), human_bytes(m.bytes)) }
                        </button>
                        <button data-testid="forget-kept" title="Delete the kept files from this browser" onclick={link.callback(|_| Msg::ForgetKept)}>{ "Forget" }</button>
                    }
                </p>
                { self.view_progress(ctx) }
                if let Some(e) = &self.error {
                    <div class="error" role="alert" data-testid="load-error">{ e.clone() }</div>
                }
                if let Some(n) = &self.notice {
                    <div class="notice" role="status" data-testid="notice">{ n.clone() }</div>
                }
                if !self.previewing {
                    { self.view_damage() }
                    { self.view_summary() }
                    { self.view_contents_tabs(ctx) }
                    if self.contents {
                        { self.view_contents(ctx) }
                    }
                }
                <div class="timeline-view" hidden={self.contents && self.timeline.is_some() && !self.previewing}>
                <section class="plot" ref={self.plot.clone()}>
                    if self.timeline.is_some() {
                        <canvas ref={self.canvas.clone()} data-testid="timeline" tabindex="0"
                            onmousedown={link.callback(|e: MouseEvent| Msg::PointerDown { x: e.offset_x() as f64 })}
                            onmousemove={link.callback(|e: MouseEvent| Msg::PointerMove { x: e.offset_x() as f64, y: e.offset_y() as f64, buttons: e.buttons() })}
                            onmouseup={link.callback(|e: MouseEvent| Msg::PointerUp { x: e.offset_x() as f64, y: e.offset_y() as f64 })}
                            onmouseleave={link.callback(|_| Msg::PointerLeave)} />
                        if let Some(t) = &self.tooltip {
                            <div class="tooltip" data-testid="tooltip"
                                style={if t.x > self.width - 340.0 {
                                    format!("right:{}px;top:{}px", (self.width - t.x + 14.0).max(0.0), t.y + 14.0)
                                } else {
                                    format!("left:{}px;top:{}px", t.x + 14.0, t.y + 14.0)
                                }}>{ t.text.clone() }</div>
                        }
                        { self.view_lane_status() }
                    }
                </section>
                if let Some(l) = self.timeline.as_ref().and_then(|t| t.lanes.iter().find(|l| l.entries.is_empty())) {
                    <p class="hint" data-testid="no-entries">{ l.name.clone() }{ ": no transactions to draw (the file holds its schema only)." }</p>
                }
                if !self.previewing {
                    { self.view_findings(ctx) }
                    { self.view_log(ctx) }
                    { self.view_inspector() }
                    { self.view_inputs() }
                    { self.view_cluster() }
                    { self.view_status() }
                }
                </div>
                if self.help {
                    { self.view_help(ctx) }
                }
            </div>
        }
    }
}

impl App {
    /// The first finding (in time order) of the most severe kind there is,
    /// that kind, and the button's label: how many findings, how many of
    /// that kind.
    fn worst_finding(&self) -> Option<(usize, &'static str, String)> {
        let f = &self.diag.as_ref()?.findings;
        let worst = f.iter().map(|v| v.finding.severity).max()?;
        let of = |&i: &usize| f[i].finding.severity == worst;
        let first = *self.finding_order.iter().find(|i| of(i))?;
        let k = self.finding_order.iter().filter(|i| of(i)).count();
        let s = if k > 1 && worst.name() != "info" {
            "s"
        } else {
            ""
        };
        let name = worst.name();
        Some((
            first,
            name,
            format!("Findings: {} · {k} {name}{s} ↓", f.len()),
        ))
    }
}

/// The `?` help: each key and what it does.
const KEYS: &[(&str, &str)] = &[
    ("? Esc", "show / hide this help; Esc closes it"),
    ("← →", "pan; on the focused timeline (Tab to it): the previous / next entry, ↑ ↓ its neighbour in another lane, Enter or Space inspects it"),
    ("+ −", "zoom in / out (or the mouse wheel)"),
    ("0", "show everything"),
    ("s f d", "sizes as stored / with full values / with diffs"),
    ("drag", "pan; click an entry to inspect it, a log mark to see its line"),
    ("n p (j k)", "next / previous finding"),
    ("l", "show / hide the log panel"),
    ("t", "x axis: log index / wall time (UTC, from the entries' _date and the logs)"),
    ("c", "show / hide each server's last cluster/status beside its lane"),
    ("v", "timeline / contents (the tables and rows at an index)"),
    ("/", "contents: search (text, or find conditions)"),
    ("[ ]", "contents: previous / next index"),
    ("↑ ↓", "contents: previous / next row in the grid"),
    ("hover", "a term band highlights its elections in the logs and its findings; an election in a log highlights its term's bands"),
];

fn value_dd(id: &'static str, value: String, text: String) -> Html {
    html! { <dd data-testid={id} data-value={value}>{ text }</dd> }
}

impl App {
    fn view_contents_tabs(&self, ctx: &Context<Self>) -> Html {
        if self.timeline.is_none() {
            return html! {};
        }
        let link = ctx.link();
        html! {
            <nav class="views" aria-label="View">
                <button data-testid="view-timeline" title="The Raft history of the files (v)"
                    class={classes!((!self.contents).then_some("active"))}
                    onclick={link.callback(|_| Msg::ShowContents(false))}>{ "Timeline" }</button>
                <button data-testid="view-contents" title="The tables and rows at any index (v)"
                    class={classes!(self.contents.then_some("active"))}
                    onclick={link.callback(|_| Msg::ShowContents(true))}>{ "Contents" }</button>
                if let (Some((i, worst, label)), false) = (self.worst_finding(), self.contents) {
                    <button data-testid="to-findings" title="Go down to the findings, to the first of the most severe, on the timeline and in the log (n / p: next / previous)"
                        onclick={link.callback(move |_| {
                            // The list is in time order, as finding_order.
                            super::input::focus(&format!("[data-testid=finding][data-severity={worst}]"));
                            Msg::Finding(i)
                        })}>
                        { label }
                    </button>
                }
            </nav>
        }
    }

    fn view_contents(&self, ctx: &Context<Self>) -> Html {
        let (Some(t), Some(w)) = (&self.timeline, &self.worker) else {
            return html! {};
        };
        if self.progress.is_some() {
            // The worker is reading new files: the page opens them when
            // they are loaded.
            return html! { <p class="hint" data-testid="contents-waiting">{ "Loading the files…" }</p> };
        }
        let files: Vec<String> = t.lanes.iter().map(|l| l.name.clone()).collect();
        if files.is_empty() {
            return html! { <p class="hint">{ "No database file is loaded." }</p> };
        }
        let worker = crate::contents_ui::WorkerRef {
            worker: w.clone(),
            generation: self.loads,
        };
        let on_change = ctx
            .link()
            .callback(|(lane, at): (usize, Option<u64>)| Msg::ContentsPos(lane, at));
        html! {
            <crate::contents_ui::ContentsPage {worker} {files} lane={self.contents_lane}
                at={self.contents_at} {on_change} />
        }
    }

    fn view_axis_buttons(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let mode = self.axis.mode;
        let can_time = self.timeline.as_ref().is_some_and(|t| Axis::has_time(t));
        let has_status = self.has_status();
        html! {
            <>
            <div class="modes" role="group" aria-label="X axis">
                <button data-testid="axis-index" class={classes!((mode == AxisMode::Index).then_some("active"))}
                    aria-pressed={(mode == AxisMode::Index).to_string()}
                    title="X axis: Raft log index (t toggles)"
                    onclick={link.callback(|_| Msg::SetAxis(AxisMode::Index))}>{ "index" }</button>
                <button data-testid="axis-time" class={classes!((mode == AxisMode::Time).then_some("active"))}
                    aria-pressed={(mode == AxisMode::Time).to_string()} disabled={!can_time}
                    title={if can_time {
                        "X axis: wall time, UTC (t toggles). Entries sit at their _date, records without one between their dated neighbours, log events at their own time."
                    } else {
                        "No entry of these files has a date (_date): the time axis needs one."
                    }}
                    onclick={link.callback(|_| Msg::SetAxis(AxisMode::Time))}>{ "time" }</button>
            </div>
            if has_status {
                <button data-testid="lane-status-toggle" aria-pressed={self.lane_status.to_string()}
                    title="Show / hide each server's last cluster/status on its lane (c)"
                    onclick={link.callback(|_| Msg::ToggleLaneStatus)}>{ "status" }</button>
            }
            </>
        }
    }

    fn view_progress(&self, ctx: &Context<Self>) -> Html {
        let Some(p) = &self.progress else {
            return html! {};
        };
        let pct = if p.total > 0.0 {
            (p.done / p.total * 100.0).min(100.0)
        } else {
            0.0
        };
        html! {
            <div class="progress" data-testid="progress" data-value={format!("{}", p.done)} data-total={format!("{}", p.total)}>
                <span>{ p.label.clone() }</span>
                <progress max="100" value={format!("{pct:.1}")}></progress>
                <span>{ format!("{} of {}", human_bytes(p.done), human_bytes(p.total)) }</span>
                <button data-testid="cancel" title="Stop reading the files" onclick={ctx.link().callback(|_| Msg::Cancel)}>{ "Cancel" }</button>
            </div>
        }
    }

    fn view_damage(&self) -> Html {
        let Some(t) = &self.timeline else {
            return html! {};
        };
        // Damage in the middle was stepped over (the rest of the file is
        // read); damage at the end stops the file.
        let skipped = t.lanes.iter().flat_map(|l| {
            l.markers.iter().filter_map(move |m| match &m.kind {
                MarkerKind::Skipped {
                    offset,
                    bytes,
                    reason,
                    ..
                } => Some((l, m.record, *offset, *bytes, reason)),
                _ => None,
            })
        });
        html! {
            <>
            { for skipped.map(|(l, record, offset, bytes, reason)| html! {
                <div class="warning" role="status" data-testid="damage-banner" data-kind="skipped"
                    data-record={record.to_string()} data-offset={offset.to_string()}
                    data-bytes={bytes.to_string()}>
                    { format!(
                        "{} is damaged at record {record} (byte offset {offset}): {reason}. \
                         {bytes} bytes were skipped; reading went on at the next valid record.",
                        l.name,
                        reason = reason.trim_end_matches('.')
                    ) }
                </div>
            }) }
            { for t.lanes.iter().filter_map(|l| l.truncated.as_ref().map(|tr| (l, tr))).map(|(l, tr)| html! {
                <div class="warning" role="status" data-testid="damage-banner" data-kind="truncated"
                    data-record={tr.record.to_string()} data-offset={tr.offset.to_string()}>
                    { format!(
                        "{} is damaged at record {} (byte offset {}): {}. The {} records before it are shown.",
                        l.name, tr.record, tr.offset, tr.reason, l.summary.records
                    ) }
                </div>
            }) }
            </>
        }
    }

    fn view_summary(&self) -> Html {
        let Some(t) = &self.timeline else {
            return html! {};
        };
        let Some(l) = t.lanes.first() else {
            return html! {};
        };
        let s = &l.summary;
        let opt = |v: Option<u64>| v.map_or(String::new(), |x| x.to_string());
        let terms: Vec<String> = s.terms.iter().map(u64::to_string).collect();
        let eb = s.entry_bytes.get(self.mode);
        let stored_total = t.entry_bytes(SizeView::Stored).unwrap_or(0) as f64;
        html! {
            <section class="summary" aria-label="Summary" data-testid="summary"
                data-files={t.lanes.iter().map(|l| l.name.clone()).collect::<Vec<_>>().join(",")}>
                <div>
                    <h2>{ format!("{}{}", l.name, if t.lanes.len() > 1 { format!(" (first of {} files)", t.lanes.len()) } else { String::new() }) }</h2>
                    <dl>
                        <dt>{ "File kind" }</dt>
                        { value_dd("summary-format", s.format.clone(), if l.clustered { "clustered (Raft)".into() } else { "standalone".into() }) }
                        <dt>{ "Database" }</dt>
                        { value_dd("summary-database", s.database.clone(), s.database.clone()) }
                        <dt>{ "Records" }</dt>
                        { value_dd("summary-records", s.records.to_string(), s.records.to_string()) }
                        <dt>{ if l.clustered { "Log entries" } else { "Transactions" } }</dt>
                        { value_dd("summary-entries", s.entries.to_string(), s.entries.to_string()) }
                        <dt>{ "Terms" }</dt>
                        { value_dd("summary-terms", terms.join(","), if terms.is_empty() { "—".into() } else { terms.join(", ") }) }
                        <dt>{ "Last index" }</dt>
                        { value_dd("summary-last-index", opt(s.last_index), opt(s.last_index)) }
                        <dt>{ "Commit index" }</dt>
                        { value_dd("summary-commit-index", opt(s.commit_index), opt(s.commit_index)) }
                        <dt>{ format!("Entry bytes ({})", self.mode.label()) }</dt>
                        { value_dd("summary-entry-bytes", eb.map_or(String::new(), |b| b.to_string()),
                            eb.map_or("not computed by the core for this file".into(), |b| format!("{b} ({})", human_bytes(b as f64)))) }
                        <dt>{ "File bytes" }</dt>
                        { value_dd("summary-bytes", s.bytes.to_string(), format!("{} ({})", s.bytes, human_bytes(s.bytes as f64))) }
                    </dl>
                </div>
                <div>
                    <h2>{ "Storage: entry bytes of all files" }</h2>
                    <table class="storage" data-testid="storage-summary">
                        <tr><th>{ "mode" }</th><th>{ "bytes" }</th><th>{ "vs stored" }</th></tr>
                        { for SizeView::ALL.iter().map(|&m| {
                            let v = t.entry_bytes(m);
                            html! {
                                <tr class={classes!((m == self.mode).then_some("active"))}>
                                    <td>{ m.label() }</td>
                                    <td data-testid={format!("total-{}", m.name())} data-value={v.map_or(String::new(), |b| b.to_string())}>
                                        { v.map_or("not computed".into(), |b| human_bytes(b as f64)) }
                                    </td>
                                    <td>{ v.map_or("—".into(), |b| if stored_total > 0.0 { format!("{:.2}×", b as f64 / stored_total) } else { "—".into() }) }</td>
                                </tr>
                            }
                        }) }
                    </table>
                </div>
            </section>
        }
    }

    fn view_inspector(&self) -> Html {
        // Nothing to click without a timeline (only logs, or no file read).
        let Some(t) = &self.timeline else {
            return html! {};
        };
        let Some((li, ei)) = self.selected else {
            return html! {
                <section class="inspector" data-testid="inspector" data-state="empty">
                    <h2>{ "Inspector" }</h2>
                    <p class="hint">{ "Click an entry on the timeline to see what it changed." }</p>
                </section>
            };
        };
        let Some(l) = t.lanes.get(li) else {
            return html! {};
        };
        let Some(e) = l.entries.get(ei) else {
            return html! {};
        };
        let size = |m: SizeView| {
            e.sizes
                .get(m)
                .map_or("not computed".to_string(), |b| format!("{b} B"))
        };
        html! {
            <section class="inspector" data-testid="inspector" data-state="entry" data-index={e.index.to_string()}>
                <h2>{ format!("{} · {} {}", l.name, if l.clustered { "index" } else { "transaction" }, e.index) }</h2>
                <dl>
                    <dt>{ "Kind" }</dt><dd data-testid="inspector-kind">{ if e.has_data { "entry with data" } else if l.clustered { "Raft-internal entry" } else { "transaction" } }</dd>
                    <dt>{ "Term" }</dt><dd data-testid="inspector-term" data-value={e.term.to_string()}>{ e.term }</dd>
                    <dt>{ "Index" }</dt><dd data-testid="inspector-index" data-value={e.index.to_string()}>{ e.index }</dd>
                    <dt>{ "Record / offset" }</dt><dd data-testid="inspector-offset" data-value={e.offset.to_string()}>{ format!("{} @ {}", e.record, e.offset) }</dd>
                    <dt>{ "Entry ID" }</dt><dd data-testid="inspector-eid" data-value={e.eid.clone().unwrap_or_default()}>{ e.eid.clone().unwrap_or_else(|| "—".into()) }</dd>
                    <dt>{ "Comment" }</dt><dd data-testid="inspector-comment">{ e.comment.as_deref().map_or_else(|| html! { "—" }, folded) }</dd>
                    <dt>{ "Date" }</dt><dd data-testid="inspector-date" data-value={e.date_ms.map_or(String::new(), |d| d.to_string())}>{ e.date_ms.map_or("—".into(), |d| format!("{} UTC ({d} ms)", utc_datetime(d))) }</dd>
                    <dt>{ "Bytes" }</dt><dd data-testid="inspector-bytes" data-value={e.sizes.get(self.mode).map_or(String::new(), |b| b.to_string())}>{ format!("as stored {} · full values {} · diffs {}", size(SizeView::Stored), size(SizeView::Full), size(SizeView::Diff)) }</dd>
                </dl>
                { match &self.detail {
                    None => html! { <p class="hint">{ "Decoding…" }</p> },
                    Some(d) if d.error.is_some() => html! { <p class="error">{ d.error.clone().unwrap_or_default() }</p> },
                    Some(d) => html! {
                        <Changes key={format!("{li}:{}", e.offset)} detail={Detail(d.clone())} />
                    },
                } }
            </section>
        }
    }

    fn view_cluster(&self) -> Html {
        let Some(t) = &self.timeline else {
            return html! {};
        };
        let c = &t.cluster;
        if c.servers.is_empty() && c.problems.is_empty() {
            // Standalone files: no servers, terms or invariants to show.
            return html! {
                <section class="cluster" aria-label="Cluster">
                    <h2 data-testid="cluster-servers" data-value="0">{ "No Raft cluster in these files: nothing to check" }</h2>
                    <div data-testid="check-results" data-value="0" data-state={if c.checked { "done" } else { "running" }} />
                </section>
            };
        }
        html! {
            <section class="cluster" aria-label="Cluster">
                <h2 data-testid="cluster-servers" data-value={c.servers.len().to_string()}>
                    { format!("Cluster: {} server(s){}", c.servers.len(), c.cluster_id.as_ref().map_or(String::new(), |id| format!(" · cluster {id}"))) }
                </h2>
                <table class="servers">
                    <tr><th>{ "server" }</th><th>{ "address" }</th><th>{ "file" }</th><th>{ "commit index" }</th></tr>
                    { for c.servers.iter().map(|s| html! {
                        <tr>
                            <td title={s.sid.clone()}>{ short_sid(&s.sid).to_string() }</td>
                            <td>{ s.address.clone() }</td>
                            <td>{ s.lane.and_then(|i| t.lanes.get(i)).map_or("—".to_string(), |l| l.name.clone()) }</td>
                            <td data-testid="server-commit-index" data-value={s.lane.and_then(|i| c.commit_index.get(i).copied().flatten()).map_or(String::new(), |x| x.to_string())}>
                                { s.lane.and_then(|i| c.commit_index.get(i).copied().flatten()).map_or("—".to_string(), |x| x.to_string()) }
                            </td>
                        </tr>
                    }) }
                </table>
                <table class="terms">
                    <tr><th>{ "term" }</th><th>{ "leader" }</th><th>{ "votes (file → for)" }</th></tr>
                    { for c.terms.iter().map(|tm| html! {
                        <tr>
                            <td data-testid="term" data-value={tm.term.to_string()}>{ tm.term }</td>
                            <td>{ tm.leaders.iter().map(|l| short_sid(l).to_string()).collect::<Vec<_>>().join(", ") }</td>
                            <td>{ tm.votes.iter().map(|(f, v)| format!("{f} → {}", short_sid(v))).collect::<Vec<_>>().join("; ") }</td>
                        </tr>
                    }) }
                </table>
                <div data-testid="check-results" data-value={c.violations.len().to_string()}
                    data-state={if c.checked { "done" } else { "running" }}
                    data-worker={if self.check_ms.is_some() { "own" } else { "load" }}
                    data-loads={self.loads.to_string()}
                    data-ms={self.check_ms.map(|m| (m as u64).to_string()).unwrap_or_default()}>
                    if !c.checked {
                        <p class="hint" title="The cluster check runs in a second worker, on another core, while the files load">{ "check: running…" }</p>
                    } else if c.violations.is_empty() && c.problems.is_empty() {
                        <p class="ok">{ "check: the cluster invariants hold for these files." }</p>
                    }
                    { for c.violations.iter().chain(c.problems.iter()).map(|v| html! { <p class="error">{ v.clone() }</p> }) }
                </div>
            </section>
        }
    }

    fn view_help(&self, ctx: &Context<Self>) -> Html {
        html! {
            <div class="help" role="dialog" data-testid="help" onclick={ctx.link().callback(|_| Msg::ToggleHelp)}>
                <div class="helpbox">
                    <h2>{ "Keys" }</h2>
                    <table>
                        { for KEYS.iter().map(|(k, what)| html! { <tr><td>{ *k }</td><td>{ *what }</td></tr> }) }
                    </table>
                    <p>{ "The URL keeps the sample, zoom, storage mode and axis: copy it to share this view." }</p>
                </div>
            </div>
        }
    }
}
