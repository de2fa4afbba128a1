//! Web Worker of ovsdb-scope: reads the operator's files off the page's
//! thread, and runs the simulation pages' requests. This file is the
//! worker's entry point and its message dispatch (`handle`): messages
//! that come while an asynchronous request is under way wait for it
//! (`hold_messages`). The modules that handle the messages document them.
//!
//! Messages in (plain JS objects, by `type`), and their replies:
//! - `load`, `check`, `inspect` (`src/worker_load.rs`): the explorer's
//!   files read into a timeline and diagnosis (`progress`, `preview`,
//!   `done`), their cluster check in a second worker (`progress`,
//!   `checked`), one record read back for the inspector (`detail`).
//! - `log-query`, `log-lines` (`src/worker_logs.rs`): the log panel's
//!   selection (`log-result`) and its rows (`log-lines`).
//! - `contents-open`, `contents-overview`, `contents-rows`,
//!   `contents-row`, `contents-history`, `contents-sizes`,
//!   `contents-diff` (`src/worker_contents.rs`): the Contents page's
//!   database at a chosen position; each replies under its own type
//!   (`contents-open` as `contents-opened`).
//! - `run`, `idl`, `export`, `ab_seeds`, `knobs` (`src/worker_sim.rs`): the
//!   simulation pages' requests; the simulation pages start their own
//!   instance of this worker.
//!
//! `{type: "ready"}` says the worker listens; an unknown request is
//! answered `{type: "error", message}`. A panic is reported as
//! `{type: "panic", message}` so the page can say so. Cancelling is done
//! by the page terminating this worker.

#[path = "../evidence_view.rs"]
#[allow(dead_code)]
mod evidence_view;

use std::cell::RefCell;

#[path = "../msg.rs"]
mod msg;

#[path = "../worker_contents.rs"]
mod worker_contents;

#[path = "../worker_load.rs"]
mod worker_load;

#[path = "../worker_logs.rs"]
mod worker_logs;

#[path = "../worker_sim.rs"]
mod worker_sim;

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

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
    // The worker lives as long as the page keeps it: so does its listener.
    gloo_events::EventListener::new(&scope(), "message", |ev| {
        handle(ev.unchecked_ref::<MessageEvent>().data())
    })
    .forget();
    post(&[("type", "ready".into())]);
}

thread_local! {
    /// Messages that came while an asynchronous request was under way
    /// (a time-travel jump reading its ranges): handled after it, in order.
    static HELD: RefCell<Option<std::collections::VecDeque<JsValue>>> =
        const { RefCell::new(None) };
}

/// From now on, messages wait until [`release_messages`].
fn hold_messages() {
    HELD.with(|h| {
        h.borrow_mut().get_or_insert_with(Default::default);
    });
}

/// Whether messages are held ([`hold_messages`]): a jump is reading.
fn holding() -> bool {
    HELD.with(|h| h.borrow().is_some())
}

/// Handles the messages held since [`hold_messages`], in order (until one
/// of them holds them again).
fn release_messages() {
    let held = HELD.with(|h| h.borrow_mut().take());
    let mut queue = held.unwrap_or_default();
    while let Some(msg) = queue.pop_front() {
        handle(msg);
        if holding() {
            // Put the rest back in front of anything newer.
            HELD.with(|h| {
                let mut h = h.borrow_mut();
                let q = h.get_or_insert_with(Default::default);
                while let Some(m) = queue.pop_back() {
                    q.push_front(m);
                }
            });
            return;
        }
    }
}

fn handle(msg: JsValue) {
    let held = HELD.with(|h| match h.borrow_mut().as_mut() {
        Some(q) => {
            q.push_back(msg.clone());
            true
        }
        None => false,
    });
    if held {
        return;
    }
    match get(&msg, "type").as_string().as_deref() {
        Some("load") => worker_load::load(&msg),
        Some("check") => worker_load::check(&msg),
        Some("inspect") => worker_load::inspect(&msg),
        Some("log-query") => worker_logs::log_query(&msg),
        Some("log-lines") => worker_logs::log_lines(&msg),
        Some("contents-open") => worker_contents::open(&msg),
        Some("contents-rows") => worker_contents::rows(&msg),
        Some("contents-row") => worker_contents::row(&msg),
        Some("contents-overview") => worker_contents::overview(&msg),
        Some("contents-history") => worker_contents::history(&msg),
        Some("contents-sizes") => worker_contents::sizes(&msg),
        Some("contents-diff") => worker_contents::diff(&msg),
        Some("run" | "idl" | "export" | "ab_seeds" | "knobs") => worker_sim::handle(&msg),
        other => post(&[
            ("type", "error".into()),
            ("message", format!("unknown request {other:?}").into()),
        ]),
    }
}

/// The worker's wasm memory in bytes (it only grows, so this is the peak
/// so far), left on the worker's global scope as `ovsdbScopeWasmBytes` for
/// benchmarks and tests to read.
fn note_memory() {
    let bytes = Reflect::get(&wasm_bindgen::memory(), &JsValue::from_str("buffer"))
        .and_then(|b| Reflect::get(&b, &JsValue::from_str("byteLength")))
        .unwrap_or(JsValue::UNDEFINED);
    let _ = Reflect::set(&scope(), &JsValue::from_str("ovsdbScopeWasmBytes"), &bytes);
}

fn now() -> f64 {
    scope().performance().map_or(0.0, |p| p.now())
}
