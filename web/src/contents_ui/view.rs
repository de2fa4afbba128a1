//! The Contents page's panels: position, tables, search, the row grid,
//! the row with its referrers and history, the comparison of two indexes,
//! and the `show` overview.

use serde_json::Value;
use web_sys::{HtmlElement, HtmlInputElement, KeyboardEvent};
use yew::prelude::*;

use super::{js_get, s, ContentsPage, Msg, BLOCK, ROW, VIEW};

impl ContentsPage {
    pub(super) fn view_position(&self, ctx: &Context<Self>) -> Html {
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

    pub(super) fn view_tables(&self, ctx: &Context<Self>, o: &Value) -> Html {
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

    pub(super) fn view_search(&self, ctx: &Context<Self>) -> Html {
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

    pub(super) fn visible_rows(&self) -> Vec<(usize, &Value)> {
        // The old index's rows until all of the new one's are there: never
        // a mix of the two (a row's key, its UUID, must be unique).
        let blocks = match self.stale.is_empty() {
            true => &self.blocks,
            false => &self.stale,
        };
        let first = (self.scroll_top / ROW) as usize;
        let from = first.saturating_sub(5);
        let to = (first + VIEW + 5).min(self.total);
        if let Some((start, rows)) = &self.preview {
            // A long jump's rows on screen, until its blocks come.
            return (from.max(*start)..to.min(start + rows.len()))
                .map(|i| (i, &rows[i - start]))
                .collect();
        }
        (from..to)
            .filter_map(|i| {
                blocks
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

    pub(super) fn view_grid(&self, ctx: &Context<Self>) -> Html {
        let link = ctx.link();
        let width = self.columns.len().max(1) * 200;
        let style_w = format!("width:{width}px");
        html! {
            <div class="cgrid" ref={self.grid.clone()} data-testid="row-grid" tabindex="0"
                data-at={self.rows_at.map(|a| a.to_string())}
                data-preview={self.preview.is_some().then_some("true")}
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
                            <div key={uuid.clone()} class={classes!("crow", sel.then_some("selected"))} data-testid="row" data-uuid={uuid}
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

    pub(super) fn view_row(&self, ctx: &Context<Self>) -> Html {
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

/// The overview panel starts open for a database of at most this many
/// rows. Each jump's overview is built by the worker only while the panel
/// is open: on the 1 GB Southbound file (about 24 000 rows, 4 600 lines)
/// that took about 15 ms of the worker's time at each jump.
pub(super) const OVERVIEW_OPEN_ROWS: u64 = 5_000;

impl ContentsPage {
    /// Whether the overview panel is open.
    pub(super) fn overview_open(&self) -> bool {
        let rows = self.opened.as_ref().and_then(|o| o["rowCount"].as_u64());
        self.overview_open
            .unwrap_or(rows.is_some_and(|r| r <= OVERVIEW_OPEN_ROWS))
    }

    /// The `show` overview, built by the worker while the panel is open.
    pub(super) fn view_overview(&self, ctx: &Context<Self>, o: &Value) -> Html {
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

impl ContentsPage {
    pub(super) fn view_diff(&self, ctx: &Context<Self>) -> Html {
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
