#![allow(dead_code)]
pub mod filters;
pub mod scenario;
