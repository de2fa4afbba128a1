//! OVSDB core: byte-exact JSON, atoms/datums/types/schemas, column diffs,
//! an in-memory database and a transact/monitor server model.
//!
//! Sans-IO: nothing here touches files, sockets or clocks.

pub mod json;
