//! Where the bytes go: the Contents page's size panel, its charts' data,
//! and the what-if snapshot by table.

use serde_json::Value;
use yew::prelude::*;

use super::{s, ContentsPage, Msg};

/// The by-table figures, largest stored first.
pub(super) fn table_bars(v: &Value) -> Vec<crate::charts::Bars> {
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
pub(super) const GROWTH_TABLES: usize = 8;

fn bytes(v: &Value) -> String {
    v.as_u64()
        .map_or("–".into(), |b| crate::draw::human_bytes(b as f64))
}

impl ContentsPage {
    pub(super) fn view_sizes(&self, ctx: &Context<Self>) -> Html {
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
}
