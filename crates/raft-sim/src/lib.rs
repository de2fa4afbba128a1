//! raft-sim: a deterministic discrete-event simulator of ovsdb-server's Raft
//! (behaviour per `ovsdb-raft.md`, not the Raft paper), sans IO: no clock,
//! no sockets, no files; one seeded xoshiro256** RNG ([`rng::Rng`]) so that
//! native and wasm builds produce the same trace ([`Sim::trace_hash`]).
//!
//! # Using it
//!
//! ```
//! use raft_sim::{preset, Sim};
//! let over = vec![("election_timer".to_string(), "2000".to_string())];
//! let mut sim = Sim::from_text(preset("leader-kill").unwrap(), Some("main"), &over, 7).unwrap();
//! sim.record_events = true;            // keep an event list (for timelines)
//! sim.run_until(5_000_000);            // virtual µs
//! let checkpoint = sim.clone();        // snapshot / checkpoint
//! let m = sim.run();                   // to the end
//! assert!(m.violations.is_empty());
//! assert!(sim.events().len() > 10);
//! # let _ = checkpoint;
//! ```
//!
//! * Build: [`Sim::from_text`] (scenario text, optional profile name, knob
//!   overrides as `(name, value)`, seed) or [`Sim::new`] (parsed
//!   [`Scenario`] + [`Knobs`]). Presets: [`PRESETS`] / [`preset`]. Knob
//!   names: [`knobs::KNOBS`] (each with its kind and a line of description;
//!   [`Knobs::NAMES`] the names alone), values via [`Knobs::set`] (durations
//!   in ms).
//! * Drive: [`Sim::step`] (one event), [`Sim::run_until`] (virtual µs),
//!   [`Sim::run`], [`Sim::finish`] (figures so far), [`Sim::now`],
//!   [`Sim::stop_at`], [`Sim::finished`].
//! * Observe: [`Sim::events`] / [`Sim::take_events`] ([`SimEvent`] with
//!   [`EventKind`]: messages with from/to/send/recv times and sizes,
//!   elections, leaders, step-downs, term changes, commits per server,
//!   client writes with start/end, entry sizes, faults, membership,
//!   snapshots), [`Sim::servers`] (per-server [`Server`] state: role, term,
//!   log, commit/applied, election timer, `is_connected()`, databases),
//!   [`Metrics`], [`report`] (figures, JSON, seed aggregation, A/B).
//! * Files: [`Sim::capture_logs`] + [`logs::write_logs`] give real
//!   clustered `.db` files (ovsdb-log's writer).

pub mod knobs;
pub mod logs;
pub mod relay;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod server;
pub mod sim;
pub mod txn;

pub use knobs::{Knobs, Profile};
pub use scenario::{preset, Scenario, PRESETS, PRESET_NAMES};
pub use server::{MsgKind, Role, Server, Time};
pub use sim::{EventKind, Metrics, SbBinding, SbMetrics, Sim, SimEvent};
