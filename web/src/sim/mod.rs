//! The simulation pages (issue 7): Simulate, A/B, Tour and IDL (the shell
//! in `crate::shell` routes to them by the URL hash), and the client of the
//! simulation worker (src/worker_sim.rs, in the one worker src/bin/worker.rs) they share.

pub mod ab;
pub mod idl_panel;
pub mod page;
pub mod tour;
mod view;

use std::rc::Rc;

use simview::{RunResult, RunSpec};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker};
use yew::prelude::*;

/// A reply of the simulation worker.
pub enum Reply {
    /// The JSON report of an IDL experiment.
    Idl {
        id: u32,
        report: String,
    },
    /// Exported files: (name, bytes).
    Files {
        id: u32,
        files: Vec<(String, Vec<u8>)>,
    },
    Progress {
        id: u32,
        now: f64,
        stop: f64,
    },
    Result {
        id: u32,
        result: Rc<RunResult>,
        ms: f64,
    },
    /// An A/B preset over several seeds.
    Seeds {
        id: u32,
        table: Rc<simview::ab::SeedsTable>,
    },
    Error {
        id: u32,
        message: String,
    },
    /// The knobs: a line each, name, kind and description between tabs.
    Knobs(String),
}

/// Said after the error of a run that failed where an earlier one's
/// results stay on the page (dimmed: the class `stale`).
const STALE: &str = " · The results on this page are the previous run's, not this one's.";

fn get(o: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// The simulation worker: requests wait until it has started.
pub struct SimWorker {
    worker: Option<Worker>,
    ready: Rc<std::cell::Cell<bool>>,
    queue: Rc<std::cell::RefCell<Vec<JsValue>>>,
    _onmessage: Option<gloo_events::EventListener>,
}

impl SimWorker {
    pub fn new(on: Callback<Reply>) -> SimWorker {
        let ready = Rc::new(std::cell::Cell::new(false));
        let queue: Rc<std::cell::RefCell<Vec<JsValue>>> = Rc::default();
        let Ok(worker) = Worker::new("./worker_loader.js") else {
            on.emit(Reply::Error {
                id: 0,
                message: "this browser cannot start the simulation worker".into(),
            });
            return SimWorker {
                worker: None,
                ready,
                queue,
                _onmessage: None,
            };
        };
        let (r, q, w) = (ready.clone(), queue.clone(), worker.clone());
        let onmessage = gloo_events::EventListener::new(&worker, "message", move |ev| {
            let d = ev.unchecked_ref::<MessageEvent>().data();
            let id = get(&d, "id").as_f64().unwrap_or(0.0) as u32;
            match get(&d, "type").as_string().as_deref() {
                Some("ready") => {
                    r.set(true);
                    for m in q.borrow_mut().drain(..) {
                        let _ = w.post_message(&m);
                    }
                }
                Some("progress") => on.emit(Reply::Progress {
                    id,
                    now: get(&d, "now").as_f64().unwrap_or(0.0),
                    stop: get(&d, "stop").as_f64().unwrap_or(1.0),
                }),
                Some("result") => match crate::msg::from_bytes::<RunResult>(&get(&d, "result")) {
                    Ok(result) => on.emit(Reply::Result {
                        id,
                        result: Rc::new(result),
                        ms: get(&d, "ms").as_f64().unwrap_or(0.0),
                    }),
                    Err(e) => on.emit(Reply::Error {
                        id,
                        message: format!("cannot read the worker's answer: {e}"),
                    }),
                },
                Some("files") => {
                    let names = js_sys::Array::from(&get(&d, "names"));
                    let buffers = js_sys::Array::from(&get(&d, "buffers"));
                    let files = names
                        .iter()
                        .zip(buffers.iter())
                        .map(|(n, b)| {
                            (
                                n.as_string().unwrap_or_default(),
                                js_sys::Uint8Array::new(&b).to_vec(),
                            )
                        })
                        .collect();
                    on.emit(Reply::Files { id, files })
                }
                Some("seeds") => match crate::msg::from_bytes(&get(&d, "table")) {
                    Ok(t) => on.emit(Reply::Seeds {
                        id,
                        table: Rc::new(t),
                    }),
                    Err(e) => on.emit(Reply::Error {
                        id,
                        message: format!("bad seeds table: {e}"),
                    }),
                },
                Some("knobs") => on.emit(Reply::Knobs(
                    get(&d, "list").as_string().unwrap_or_default(),
                )),
                Some("idl") => on.emit(Reply::Idl {
                    id,
                    report: get(&d, "report").as_string().unwrap_or_default(),
                }),
                Some("panic") => on.emit(Reply::Error {
                    id,
                    message: format!(
                        "the simulator crashed: {}",
                        get(&d, "message").as_string().unwrap_or_default()
                    ),
                }),
                _ => on.emit(Reply::Error {
                    id,
                    message: get(&d, "message").as_string().unwrap_or_default(),
                }),
            }
        });
        SimWorker {
            worker: Some(worker),
            ready,
            queue,
            _onmessage: Some(onmessage),
        }
    }

    fn send(&self, msg: JsValue) {
        let Some(w) = &self.worker else { return };
        if self.ready.get() {
            let _ = w.post_message(&msg);
        } else {
            self.queue.borrow_mut().push(msg);
        }
    }

    /// Sends request `kind` with its `id` and `fields` (one helper for
    /// every request of the simulation pages).
    fn request(&self, kind: &str, id: u32, fields: &[(&str, JsValue)]) {
        let o = js_sys::Object::new();
        let set = |k: &str, v: &JsValue| {
            let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), v);
        };
        set("type", &kind.into());
        set("id", &id.into());
        for (k, v) in fields {
            set(k, v);
        }
        self.send(o.into());
    }

    /// Asks for both sides of A/B preset `preset` over `seeds` seeds.
    pub fn ab_seeds(&self, id: u32, preset: &str, seed: u64, seeds: u64) {
        self.request(
            "ab_seeds",
            id,
            &[
                ("preset", preset.into()),
                ("seed", (seed as f64).into()),
                ("seeds", (seeds as f64).into()),
            ],
        );
    }

    /// Asks for the knobs' list ([`Reply::Knobs`]).
    pub fn knobs(&self) {
        self.request("knobs", 0, &[]);
    }

    /// Asks for a run; the answer comes back with the same `id`.
    pub fn run(&self, id: u32, spec: &RunSpec) {
        self.request("run", id, &[("spec", crate::msg::to_bytes(spec).into())]);
    }

    /// Asks for the run's files (`.db` per server and metrics JSON).
    pub fn export(&self, id: u32, spec: &RunSpec) {
        self.request("export", id, &[("spec", crate::msg::to_bytes(spec).into())]);
    }

    /// Asks for an IDL experiment with these knobs.
    pub fn idl(&self, id: u32, experiment: &str, knobs: &[(String, String)]) {
        let params = js_sys::Object::new();
        for (k, v) in knobs {
            let _ = js_sys::Reflect::set(&params, &JsValue::from_str(k), &JsValue::from_str(v));
        }
        self.request(
            "idl",
            id,
            &[("experiment", experiment.into()), ("params", params.into())],
        );
    }
}

impl Drop for SimWorker {
    fn drop(&mut self) {
        if let Some(w) = &self.worker {
            w.terminate();
        }
    }
}

/// Offers `bytes` as a download named `name` (a Blob URL; nothing leaves the page).
pub fn download(name: &str, bytes: &[u8], mime: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    if let Ok(a) = doc.create_element("a") {
        if let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>() {
            a.set_href(&url);
            a.set_download(name);
            a.click();
        }
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Sets the URL hash without adding a history entry or firing `hashchange`.
pub fn replace_hash(hash: &str) {
    if let Some(w) = web_sys::window() {
        if let Ok(h) = w.history() {
            let url = if hash.is_empty() { "#" } else { hash };
            let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(url));
        }
    }
}
