//! The client-side experiments of ovsdb-idl.md §9.2, as library calls that
//! return plain structs of figures (for the CLI and the web app).
//!
//! The core has no clock: callers pass `clock`, a function returning
//! milliseconds (e.g. `Instant` natively, `performance.now()` in a
//! browser). Counts and byte sizes do not depend on it.
//!
//! One file per experiment: [`write_changed_only()`], [`own_write_echo()`],
//! [`index_vs_hash()`] and [`diff_apply()`]; their parameters, shared by the
//! CLI and the web app, are in [`crate::params`]. This file holds what they
//! share: the [`Clock`] type and the JSON number helpers.

mod diff_apply;
mod index_vs_hash;
mod own_write_echo;
mod write_changed_only;

pub use diff_apply::{diff_apply, DiffApplyPoint, DiffApplyReport, DiffSizePoint, DIFF_SIZES};
pub use index_vs_hash::{index_vs_hash, IndexVsHashParams, IndexVsHashReport, StrategyFigures};
pub use own_write_echo::{own_write_echo, EchoMode, EchoReport};
pub use write_changed_only::{
    port_binding_values, write_changed_only, WcoMode, WcoParams, WcoReport, PORT_BINDING_COLUMNS,
    PORT_BINDING_SCHEMA,
};

use ovsdb::json::Json;

pub type Clock<'a> = &'a mut dyn FnMut() -> f64;

fn f(x: f64) -> Json {
    Json::Real((x * 1000.0).round() / 1000.0)
}

fn n(x: u64) -> Json {
    Json::Integer(x as i64)
}
