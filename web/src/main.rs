//! ovsdb-scope web app: explore OVSDB database files in the browser.
//!
//! Everything runs locally: files are read with the File API and parsed in a
//! Web Worker (src/bin/worker.rs) by the shared Rust core (`ovsdb-log`,
//! `timeline`) compiled to wasm. This crate holds no protocol logic; it only
//! calls the core and renders the view model it returns.

mod app;
mod charts;
mod contents_ui;
mod draw;
mod evidence_view;
mod files;
mod hash;
mod inspector;
mod msg;
mod panic;
mod prefs;
mod samples;
mod shell;
mod sim;
mod store;
#[cfg(feature = "plotters-timeline")]
mod timeline_plotters;

fn main() {
    panic::install();
    yew::Renderer::<shell::Shell>::new().render();
}
