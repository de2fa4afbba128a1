//! Operator evidence: what operators collect from a sick cluster, read by the
//! same core as the database files, and joined with the files' Raft history.
//!
//! - [`log`]: ovsdb-server's text log format, read line by line from a stream
//!   of byte chunks (`2026-11-29T21:14:18.237Z|00033|raft|INFO|text`).
//! - [`events`]: the lines that mean something for Raft and the server
//!   (elections, leaders, transfers, long polls, probes, snapshots, memory).
//! - [`status`]: `cluster/status` text; [`memory`]: `memory/show` text.
//! - [`collect`]: what a dropped folder or archive holds (gzip, xz, tar),
//!   recognized by content, with bounds on expansion.
//! - [`findings`]: the incident findings over all of it.
//!
//! Sans-IO: every function takes bytes (or a `std::io::Read` over bytes the
//! caller owns) and returns values; nothing opens files, clocks or sockets.

pub mod collect;
pub mod databases;
pub mod diagnose;
pub mod events;
pub mod findings;
pub mod log;
pub mod memory;
pub mod status;
