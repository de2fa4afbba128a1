//! idl: the OVSDB client side, sans-IO.
//!
//! * [`server`]: an in-memory OVSDB server model (transact + monitors),
//!   used by tests, experiments and the Raft simulator to make entries.
//! * [`replica`]: the IDL client replica (column modes, update/update2/
//!   update3, change tracking, indexes) and its transaction builder.
//! * [`experiments`]: the client-side experiments as library calls that
//!   return plain structs of figures.
//! * [`timetravel`]: the replica at any index of a loaded database log.

pub mod cond;
pub mod experiments;
pub mod hub;
pub mod index;
pub mod meta;
pub mod replica;
pub mod rng;
pub mod server;
pub mod timetravel;

pub use meta::DbMeta;
pub use replica::Idl;
pub use server::{Server, ServerOptions};
