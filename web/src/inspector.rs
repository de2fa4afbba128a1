//! The entry inspector: what one entry changed, readable at any size.
//! Tables start collapsed (with their row counts and bytes) unless the
//! entry is small, rows are expandable, a table lists its rows a page at
//! a time, and long values are folded to their first characters.

use std::rc::Rc;

use timeline::inspect::{fold_point, EntryDetail, InspectedColumn, InspectedRow, TableChange};
use yew::prelude::*;

use crate::draw::human_bytes;

/// Rows a table lists before "show more".
pub const ROWS_PAGE: usize = 50;
/// Values longer than this many characters are folded...
const FOLD_LIMIT: usize = 160;
/// ...to their first this many.
const FOLD_KEEP: usize = 120;
/// An entry with at most this many rows opens its rows too...
const SMALL_ENTRY_ROWS: usize = 3;
/// ...and with at most this many, its tables.
const OPEN_TABLES_ROWS: usize = 20;

/// A detail compared by pointer: the page hands the same `Rc` until the
/// worker sends a new one, so a re-render never compares the rows.
#[derive(Clone)]
pub struct Detail(pub Rc<EntryDetail>);

impl PartialEq for Detail {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Properties, PartialEq)]
pub struct ChangesProps {
    pub detail: Detail,
}

/// A value shown whole when short, else folded: its first characters,
/// with the whole text one click away.
pub fn folded(text: &str) -> Html {
    match fold_point(text, FOLD_LIMIT, FOLD_KEEP) {
        None => html! { { text.to_string() } },
        Some(cut) => {
            let n = text.chars().count();
            html! {
                <details class="fold" data-testid="folded" data-length={n.to_string()}>
                    <summary title="Show or fold the whole value">
                        <span class="head">{ format!("{}…", &text[..cut]) }</span>
                        <span class="more">{ format!(" ({n} characters)") }</span>
                        <span class="less">{ "fold ▴" }</span>
                    </summary>
                    <pre class="whole">{ text.to_string() }</pre>
                </details>
            }
        }
    }
}

fn bytes_cell(b: Option<u64>) -> Html {
    html! {
        <td class="num" data-value={b.map_or(String::new(), |b| b.to_string())}>
            { b.map_or("—".into(), |b| format!("{b} B")) }
        </td>
    }
}

fn view_column(c: &InspectedColumn) -> Html {
    html! {
        <tr data-testid="inspector-column">
            <td class="col">{ c.column.clone() }</td>
            <td class="val">{ c.full.as_deref().map_or_else(|| html! { "—" }, folded) }</td>
            { bytes_cell(c.full_bytes) }
            <td class="val">{ c.diff.as_deref().map_or_else(|| html! { "—" }, folded) }</td>
            { bytes_cell(c.diff_bytes) }
            <td class="num" title={c.stored.clone()}>{ format!("{} B", c.stored_bytes) }</td>
        </tr>
    }
}

fn view_row(r: &InspectedRow, open: bool) -> Html {
    let what = if r.is_delete() {
        "delete".to_string()
    } else {
        format!(
            "{} · {} column{} · {}",
            r.op,
            r.columns.len(),
            if r.columns.len() == 1 { "" } else { "s" },
            human_bytes(r.stored_bytes() as f64)
        )
    };
    html! {
        <details class="row" data-testid="inspector-row" data-uuid={r.uuid.clone()} {open}>
            <summary class="rowhead"><span class="uuid">{ r.uuid.clone() }</span>{ format!(" · {what}") }</summary>
            if !r.columns.is_empty() {
                <table>
                    <tr><th>{ "column" }</th><th>{ "full value" }</th><th>{ "bytes" }</th><th>{ "diff" }</th><th>{ "bytes" }</th><th>{ "stored" }</th></tr>
                    { for r.columns.iter().map(view_column) }
                </table>
            }
        </details>
    }
}

fn table_summary(t: &TableChange) -> String {
    let n = t.rows.len();
    let del = t.deletes();
    let ops = match (n - del, del) {
        (_, 0) => String::new(),
        (0, d) => format!(", {d} deleted"),
        (k, d) => format!(", {k} inserted or modified, {d} deleted"),
    };
    format!(
        "{} — {n} row{}{ops} · {}",
        t.table,
        if n == 1 { "" } else { "s" },
        human_bytes(t.stored_bytes() as f64)
    )
}

/// The tables and rows an entry changed.
#[function_component(Changes)]
pub fn changes(p: &ChangesProps) -> Html {
    let d = &p.detail.0;
    // Rows listed per table, grown a page at a time ("show more"); a
    // new entry is a new component (its key).
    let shown = use_state(|| vec![ROWS_PAGE; d.tables.len()]);
    let small = d.row_count() <= SMALL_ENTRY_ROWS;
    html! {
        <div class="changes" data-testid="inspector-changes"
            data-tables={d.tables.len().to_string()} data-rows={d.row_count().to_string()}>
            <p>
                { format!(
                    "{} table{}, {} row{}, {} record. ",
                    d.tables.len(),
                    if d.tables.len() == 1 { "" } else { "s" },
                    d.row_count(),
                    if d.row_count() == 1 { "" } else { "s" },
                    human_bytes(d.record_bytes as f64)
                ) }
                { if d.diff_mode { "Modified columns are stored as diffs (_is_diff)." } else { "Columns are stored as full values." } }
                { if d.schema_change { " This entry carries a new schema." } else { "" } }
            </p>
            { for d.tables.iter().enumerate().map(|(ti, t)| {
                let limit = shown.get(ti).copied().unwrap_or(ROWS_PAGE);
                let left = t.rows.len().saturating_sub(limit);
                let more = {
                    let shown = shown.clone();
                    Callback::from(move |_: MouseEvent| {
                        let mut m = (*shown).clone();
                        if let Some(n) = m.get_mut(ti) {
                            *n = limit + ROWS_PAGE;
                        }
                        shown.set(m);
                    })
                };
                html! {
                    <details class="table" data-testid="inspector-table" data-table={t.table.clone()}
                        data-rows={t.rows.len().to_string()} data-bytes={t.stored_bytes().to_string()}
                        open={d.row_count() <= OPEN_TABLES_ROWS || d.tables.len() == 1 && t.rows.len() <= ROWS_PAGE}>
                        <summary>{ table_summary(t) }</summary>
                        { for t.rows.iter().take(limit).map(|r| view_row(r, small || t.rows.len() == 1)) }
                        if left > 0 {
                            <button class="more" data-testid="inspector-more" onclick={more}
                                title="List the next rows of this table">
                                { format!("Show {} more ({left} not shown)", left.min(ROWS_PAGE)) }
                            </button>
                        }
                    </details>
                }
            }) }
        </div>
    }
}
