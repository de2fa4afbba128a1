//! ovsdb-scope web app: explore OVSDB database files in the browser.
//!
//! Everything runs locally: files are read with the File API and parsed by
//! the shared Rust core (`ovsdb-log`) compiled to wasm. This crate holds no
//! protocol logic; it only calls the core and renders what it returns.

mod app;
mod core;
mod panic;

fn main() {
    panic::install();
    yew::Renderer::<app::App>::new().render();
}
