//! raft-sim: a deterministic discrete-event simulator of ovsdb-server's Raft
//! (behaviour per `ovsdb-raft.md`), sans IO.
//!
//! Entry points: [`Sim::from_text`] (scenario text + profile + `--set`
//! overrides + seed), [`Sim::step`] / [`Sim::run_until`] / [`Sim::run`],
//! [`Sim::events`] (with `record_events = true`), [`Sim::trace_hash`],
//! [`Metrics`], and `Sim: Clone` for checkpoints. See [`report`] for the
//! JSON figures printed by the CLI and aggregation over seeds.

pub mod knobs;
pub mod logs;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod server;
pub mod sim;
pub mod txn;

pub use knobs::{Knobs, Profile};
pub use scenario::{preset, Scenario, PRESETS};
pub use server::{MsgKind, Role, Server, Time};
pub use sim::{EventKind, Metrics, Sim, SimEvent};
