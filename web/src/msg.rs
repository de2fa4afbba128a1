//! The typed parts of the messages between the worker and the page
//! (timeline, diagnosis, inspector detail, log rows, simulation runs) as
//! bytes: bincode 1's default form of their serde types, fields in order and
//! no field names. Decoding the same types from JSON instantiated a map
//! visitor, field-name matching and the JSON reader for every type: about
//! 150 KB of the page's wasm (BENCHMARKS.md, "Gzipped wasm", 2026-12-04).
//! Both ends are this crate's two binaries, built together, so the form
//! never has to be read by anything else.
//!
//! Shared by the page (`src/main.rs`) and the worker (`src/bin/worker.rs`,
//! through `#[path]`).

use js_sys::Uint8Array;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};

/// `v` as bytes in a new JS `Uint8Array`.
pub fn to_bytes<T: Serialize + ?Sized>(v: &T) -> Uint8Array {
    let mut out = Vec::new();
    // Writing into a Vec fails only on a sequence of unknown length, which
    // none of the messages' types has.
    let _ = bincode::serialize_into(&mut out, v);
    Uint8Array::from(out.as_slice())
}

/// The value [`to_bytes`] wrote into the `Uint8Array` `v`.
pub fn from_bytes<T: DeserializeOwned>(v: &JsValue) -> Result<T, String> {
    let a = v
        .dyn_ref::<Uint8Array>()
        .ok_or_else(|| "no bytes in the message".to_string())?;
    // Both ends are built together, so bytes that do not decode are a bug
    // of this crate; bincode's own wording (its error's `Display`) pulled
    // every `std::io::ErrorKind` text into the page.
    bincode::deserialize(&a.to_vec()).map_err(|_| "a message does not decode".to_string())
}
