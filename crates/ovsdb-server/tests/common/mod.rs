//! Helpers shared by the server model's tests and, through `#[path]`, by
//! the `idl` crate's tests (one copy of each).
#![allow(dead_code)]
pub mod filters;
pub mod scenario;
