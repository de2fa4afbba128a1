//! Web Worker of ovsdb-scope: parses files off the page's thread.
//!
//! Messages in (plain JS objects):
//! - `{type: "load", names: [String], buffers: [ArrayBuffer]}`: build the
//!   timeline of these files (one lane each); replies `progress` messages
//!   (`done`/`total` bytes) and then `{type: "done", timeline: JSON}`.
//! - `{type: "inspect", lane, name, record, offset}`: decode one record of a
//!   loaded file (found by name, else by position); replies
//!   `{type: "detail", detail: JSON}`.
//!
//! After `done`, the cluster check follows as `{type: "check", check: JSON}`.
//!
//! A panic is reported as `{type: "panic", message}` so the page can say so.
//! Cancelling is done by the page terminating this worker.

use std::cell::RefCell;

use js_sys::{Array, ArrayBuffer, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

struct Loaded {
    name: String,
    bytes: Vec<u8>,
    clustered: bool,
}

thread_local! {
    static FILES: RefCell<Vec<Loaded>> = const { RefCell::new(Vec::new()) };
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(fields: &[(&str, JsValue)]) {
    let o = Object::new();
    for (k, v) in fields {
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    let _ = scope().post_message(&o);
}

fn get(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn main() {
    std::panic::set_hook(Box::new(|info| {
        post(&[
            ("type", "panic".into()),
            ("message", info.to_string().into()),
        ]);
    }));
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(|ev: MessageEvent| handle(ev.data()));
    scope().set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    post(&[("type", "ready".into())]);
}

fn handle(msg: JsValue) {
    match get(&msg, "type").as_string().as_deref() {
        Some("load") => load(&msg),
        Some("inspect") => inspect(&msg),
        other => post(&[
            ("type", "error".into()),
            ("message", format!("unknown request {other:?}").into()),
        ]),
    }
}

fn load(msg: &JsValue) {
    let names: Array = get(msg, "names")
        .dyn_into()
        .unwrap_or_else(|_| Array::new());
    let buffers: Array = get(msg, "buffers")
        .dyn_into()
        .unwrap_or_else(|_| Array::new());
    let mut files = Vec::new();
    for (name, buf) in names.iter().zip(buffers.iter()) {
        let Ok(buf) = buf.dyn_into::<ArrayBuffer>() else {
            continue;
        };
        files.push(Loaded {
            name: name.as_string().unwrap_or_default(),
            bytes: Uint8Array::new(&buf).to_vec(),
            clustered: false,
        });
    }
    let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    let started = now();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|f| (f.name.as_str(), f.bytes.as_slice()))
        .collect();
    let t = timeline::build_timeline_unchecked(&refs, &mut |done| {
        post(&[
            ("type", "progress".into()),
            ("done", (done as f64).into()),
            ("total", (total as f64).into()),
        ]);
    });
    let parse_ms = now() - started;
    let json = serde_json::to_string(&t).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    post(&[
        ("type", "done".into()),
        ("timeline", json.into()),
        ("parseMs", parse_ms.into()),
    ]);
    // The cluster check costs about another pass: the page draws first.
    let check = timeline::check_files(&refs, &t);
    post(&[
        ("type", "check".into()),
        (
            "check",
            serde_json::to_string(&check).unwrap_or_default().into(),
        ),
    ]);
    drop(refs);
    for (f, l) in files.iter_mut().zip(&t.lanes) {
        f.clustered = l.clustered;
    }
    FILES.with(|cell| *cell.borrow_mut() = files);
}

fn inspect(msg: &JsValue) {
    let lane = get(msg, "lane").as_f64().unwrap_or(-1.0);
    // The page may have dropped lanes of files that are not OVSDB logs, so
    // it names the file too.
    let name = get(msg, "name").as_string();
    let record = get(msg, "record").as_f64().unwrap_or(0.0) as u64;
    let offset = get(msg, "offset").as_f64().unwrap_or(0.0) as u64;
    let detail = FILES.with(|cell| {
        let files = cell.borrow();
        let f = match &name {
            Some(n) => files.iter().find(|f| &f.name == n),
            None => (lane >= 0.0).then(|| files.get(lane as usize)).flatten(),
        };
        match f {
            Some(f) => timeline::inspect_record(&f.bytes, f.clustered, record, offset),
            None => timeline::EntryDetail {
                error: Some("that file is no longer loaded".to_string()),
                ..Default::default()
            },
        }
    });
    let json = serde_json::to_string(&detail).unwrap_or_default();
    post(&[
        ("type", "detail".into()),
        ("lane", lane.into()),
        ("detail", json.into()),
    ]);
}

fn now() -> f64 {
    scope().performance().map_or(0.0, |p| p.now())
}
