//! The page: pick or drop a `.db` file, see what the core says about it.

use web_sys::{DragEvent, File, HtmlInputElement};
use yew::prelude::*;

use crate::core::{self, SummaryView};

#[derive(Clone, PartialEq)]
enum Load {
    Idle,
    Reading {
        name: String,
    },
    Done {
        name: String,
        size: f64,
        view: SummaryView,
    },
    Failed {
        name: String,
        message: String,
    },
}

#[function_component(App)]
pub fn app() -> Html {
    let load = use_state(|| Load::Idle);
    let dragging = use_state(|| false);

    let open_file = {
        let load = load.clone();
        Callback::from(move |file: File| {
            let load = load.clone();
            let name = file.name();
            let size = file.size();
            load.set(Load::Reading { name: name.clone() });
            wasm_bindgen_futures::spawn_local(async move {
                let next = match read_bytes(&file).await {
                    Ok(bytes) => match core::summarize(&bytes) {
                        Ok(view) => Load::Done { name, size, view },
                        Err(message) => Load::Failed { name, message },
                    },
                    Err(e) => Load::Failed {
                        name,
                        message: format!("The browser could not read the file: {e}."),
                    },
                };
                load.set(next);
            });
        })
    };

    let onchange = {
        let open_file = open_file.clone();
        Callback::from(move |e: Event| {
            let input: HtmlInputElement = e.target_unchecked_into();
            if let Some(file) = input.files().and_then(|f| f.get(0)) {
                open_file.emit(file);
            }
            // Allow picking the same file again.
            input.set_value("");
        })
    };

    let ondragover = {
        let dragging = dragging.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            if !*dragging {
                dragging.set(true);
            }
        })
    };
    let ondragleave = {
        let dragging = dragging.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(false);
        })
    };
    let ondrop = {
        let dragging = dragging.clone();
        let open_file = open_file.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            dragging.set(false);
            let file = e
                .data_transfer()
                .and_then(|dt| dt.files())
                .and_then(|files| files.get(0));
            if let Some(file) = file {
                open_file.emit(file);
            }
        })
    };

    let zone_class = classes!("dropzone", dragging.then_some("dragging"));

    html! {
        <div class="app" {ondragover} {ondragleave} {ondrop}>
            <header class="topbar">
                <h1>{ "ovsdb-scope" }</h1>
                <p class="tagline">
                    { "Look inside OVSDB database files (standalone and Raft clustered). \
                       Everything runs in your browser; nothing is uploaded." }
                </p>
            </header>
            <main>
                <section class={zone_class} aria-label="Open a database file">
                    <label class="picker">
                        <span>{ "Open a .db file" }</span>
                        <input type="file" data-testid="file-input" accept=".db,application/octet-stream,*/*" {onchange} />
                    </label>
                    <span class="hint">{ "or drop it anywhere on this page" }</span>
                </section>
                { render_load(&load) }
            </main>
        </div>
    }
}

/// Reads a whole file into memory (the browser's File API; nothing leaves the page).
async fn read_bytes(file: &File) -> Result<Vec<u8>, String> {
    let buffer = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| e.as_string().unwrap_or_else(|| format!("{e:?}")))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

fn render_load(load: &Load) -> Html {
    match load {
        Load::Idle => html! {
            <p class="empty">{ "No file loaded yet. Pick the .db file of an ovsdb-server (for example /etc/ovn/ovnnb_db.db)." }</p>
        },
        Load::Reading { name } => html! {
            <p class="busy" data-testid="loading">{ format!("Reading {name}…") }</p>
        },
        Load::Failed { name, message } => html! {
            <div class="error" role="alert" data-testid="load-error">
                <strong>{ format!("Cannot open {name}. ") }</strong>
                { message.clone() }
            </div>
        },
        Load::Done { name, size, view } => render_summary(name, *size, view),
    }
}

fn render_summary(name: &str, size: f64, view: &SummaryView) -> Html {
    html! {
        <section class="summary" aria-label="File summary">
            <h2>{ name.to_string() }<span class="size">{ format!(" {} bytes", size as u64) }</span></h2>
            if let Some(warning) = &view.warning {
                <div class="warning" role="status" data-testid="load-warning">{ warning.clone() }</div>
            }
            <dl>
                <dt>{ "File kind" }</dt>
                <dd data-testid="summary-format" data-value={view.format}>{ view.format_label() }</dd>
                <dt>{ "Database" }</dt>
                <dd data-testid="summary-database" data-value={view.database.clone()}>{ view.database.clone() }</dd>
                <dt>{ "Records" }</dt>
                <dd data-testid="summary-records" data-value={view.records.to_string()}>{ view.records.to_string() }</dd>
                { for view.details.iter().map(|d| html! {
                    <>
                        <dt>{ d.label }</dt>
                        <dd data-testid={d.test_id} data-value={d.value.clone()}>{ d.text.clone() }</dd>
                    </>
                }) }
            </dl>
        </section>
    }
}
