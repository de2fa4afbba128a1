//! The simulation pages' requests to the one worker (`src/bin/worker.rs`,
//! through `#[path]`): runs `raft-sim` off the page's thread. One wasm for
//! the parser's and the simulator's requests keeps the code they share
//! (std, ovsdb, imbl) in one download.
//!
//! Messages in (plain JS objects):
//! - `{type: "run", id, spec: simview::RunSpec}`: runs it to the end;
//!   replies `{type: "progress", id, now, stop}` (virtual µs) now and then,
//!   then `{type: "result", id, result: simview::RunResult, ms}` where
//!   `ms` is the wall time the run took in this worker (for events/s).
//!   Spec and result cross as bytes (`src/msg.rs`).
//!
//! - `{type: "export", id, spec}`: runs it with log capture and replies
//!   `{type: "files", id, names: [String], buffers: [ArrayBuffer], json}`:
//!   one clustered `.db` file per server and the `simulate --json` metrics.
//! - `{type: "idl", id, experiment, params: {knob: "value"}}`: runs the IDL
//!   experiment (`write-changed-only` or `index-vs-hash`); replies
//!   `{type: "idl", id, report}` with the report's JSON (as the CLI's).
//!
//! - `{type: "ab_seeds", id, preset, seed, seeds}`: both sides of an A/B
//!   preset on `seeds` seeds from `seed` (figures only); replies progress
//!   `{type: "progress", id, now, stop}` (runs done, runs in all), then
//!   `{type: "seeds", id, table: simview::ab::SeedsTable}` (bytes).
//!
//! - `{type: "knobs"}`: every knob the Knobs field takes; replies
//!   `{type: "knobs", list}`, one knob a line: name, kind and description
//!   separated by tabs (`raft_sim::Knobs::NAMES` and `ABOUT`, from the
//!   table `simulate --list-knobs` prints; the page holds none of it).
//!
//! Errors come back as `{type: "error", id, message}`; a panic as
//! `{type: "panic", message}` (the worker's panic hook).

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{get, now, post};

fn error(id: &JsValue, message: String) {
    post(&[
        ("type", "error".into()),
        ("id", id.clone()),
        ("message", message.into()),
    ]);
}

fn spec_of(msg: &JsValue) -> Result<simview::RunSpec, String> {
    super::msg::from_bytes(&get(msg, "spec")).map_err(|e| format!("bad run request: {e}"))
}

/// A simulation request (`type` "run", "idl", "export", "ab_seeds" or
/// "knobs").
pub fn handle(msg: &JsValue) {
    let id = get(msg, "id");
    match get(msg, "type").as_string().as_deref() {
        Some("run") => match spec_of(msg) {
            Ok(spec) => run(&id, &spec),
            Err(e) => error(&id, e),
        },
        Some("idl") => idl(&id, msg),
        Some("ab_seeds") => ab_seeds(&id, msg),
        Some("knobs") => {
            let mut list = String::new();
            for (name, about) in raft_sim::Knobs::NAMES
                .iter()
                .zip(raft_sim::Knobs::ABOUT.lines())
            {
                list.push_str(name);
                list.push('\t');
                list.push_str(about);
                list.push('\n');
            }
            post(&[("type", "knobs".into()), ("list", list.into())])
        }
        Some("export") => match spec_of(msg) {
            Ok(spec) => export(&id, &spec),
            Err(e) => error(&id, e),
        },
        other => error(&id, format!("unknown request {other:?}")),
    }
}

/// Posts `{type: "progress", id, now, stop}` at most every 100 ms.
fn progress_to(id: &JsValue) -> impl FnMut(f64, f64) + '_ {
    let mut last = now();
    move |at, stop| {
        let t = now();
        if t - last > 100.0 {
            last = t;
            post(&[
                ("type", "progress".into()),
                ("id", id.clone()),
                ("now", at.into()),
                ("stop", stop.into()),
            ]);
        }
    }
}

fn ab_seeds(id: &JsValue, msg: &JsValue) {
    let name = get(msg, "preset").as_string().unwrap_or_default();
    let Some(p) = simview::ab::ab_preset(&name) else {
        return error(id, format!("unknown A/B preset '{name}'"));
    };
    let seed = get(msg, "seed").as_f64().unwrap_or(1.0) as u64;
    let seeds = (get(msg, "seeds").as_f64().unwrap_or(10.0) as u64).clamp(1, 1000);
    let mut progress = progress_to(id);
    let result = simview::ab::over_seeds(p, seed, seeds, &mut |done, total| {
        progress(done as f64, total as f64)
    });
    match result {
        Ok(t) => post(&[
            ("type", "seeds".into()),
            ("id", id.clone()),
            ("table", super::msg::to_bytes(&t).into()),
        ]),
        Err(e) => error(id, e),
    }
}

fn run(id: &JsValue, spec: &simview::RunSpec) {
    let started = now();
    let mut progress = progress_to(id);
    let result = simview::run_keeping_sim(spec, &mut |at, stop| progress(at as f64, stop as f64));
    let ms = now() - started;
    match result {
        Ok((r, sim)) => {
            post(&[
                ("type", "result".into()),
                ("id", id.clone()),
                ("result", super::msg::to_bytes(&r).into()),
                ("ms", ms.into()),
            ]);
            // Freed once the page has its answer.
            drop(sim);
        }
        Err(e) => error(id, e),
    }
}

fn idl(id: &JsValue, msg: &JsValue) {
    // The page's knobs as (name, value) pairs, read by the one spec
    // (`idl::params`, the CLI's too).
    let params = get(msg, "params");
    let given: Vec<(String, String)> = js_sys::Object::entries(&params.clone().unchecked_into())
        .iter()
        .filter_map(|kv| {
            let kv = Array::from(&kv);
            Some((kv.get(0).as_string()?, kv.get(1).as_string()?))
        })
        .collect();
    let experiment = get(msg, "experiment").as_string().unwrap_or_default();
    let mut clock = now;
    match idl::params::parse(&experiment, &given) {
        Ok(v) => {
            let (_, j) = idl::params::run(&v, &mut clock);
            post(&[
                ("type", "idl".into()),
                ("id", id.clone()),
                ("report", j.to_string_compact().into()),
            ])
        }
        Err(e) => error(id, e.to_string()),
    }
}

fn export(id: &JsValue, spec: &simview::RunSpec) {
    match simview::export(spec) {
        Ok(ex) => {
            let names = Array::new();
            let buffers = Array::new();
            for (name, bytes) in &ex.files {
                names.push(&JsValue::from_str(name));
                buffers.push(&Uint8Array::from(bytes.as_slice()).buffer());
            }
            post(&[
                ("type", "files".into()),
                ("id", id.clone()),
                ("names", names.into()),
                ("buffers", buffers.into()),
                ("json", ex.json.into()),
            ]);
        }
        Err(e) => error(id, e),
    }
}
