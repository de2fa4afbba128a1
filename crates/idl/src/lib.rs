//! idl: the OVSDB client side, sans-IO.
//!
//! * [`server`]: an in-memory OVSDB server model (transact + monitors),
//!   used by tests, experiments and the Raft simulator to make entries.
//! * [`replica`]: the IDL client replica (column modes, update/update2/
//!   update3, change tracking, indexes) and its transaction builder.
//! * [`experiments`]: the client-side experiments as library calls that
//!   return plain structs of figures.
//! * [`timetravel`]: the replica at any index of a loaded database log.
//! * [`hub`]: an in-process link between replicas and the server model.
//!
//! Quick tour:
//!
//! ```
//! use idl::{hub::Hub, replica::TxnStatus, DbMeta, Idl, Server, ServerOptions};
//! use ovsdb::{atom::Atom, datum::Datum};
//! use std::sync::Arc;
//!
//! let meta = DbMeta::from_text(
//!     r#"{"name":"db","version":"1.0.0","tables":{"T":{"columns":{"name":{"type":"string"}}}}}"#,
//! )
//! .unwrap();
//! let mut hub = Hub::new(Server::new(meta.clone(), ServerOptions::default()));
//! let c = hub.add(Idl::new(Arc::new(meta), true)).unwrap();
//! let idl = &mut hub.clients[c].idl;
//! let t = idl.table_index("T").unwrap();
//! let name = idl.column_index(t, "name").unwrap();
//! idl.txn_begin();
//! let row = idl.txn_insert(t, None).unwrap();
//! idl.txn_write(t, row, name, Datum::scalar(Atom::String("x".into())));
//! assert_eq!(hub.commit(c).unwrap(), TxnStatus::Success);
//! assert_eq!(hub.clients[c].idl.row_count(t), 1);
//! ```
//!
//! The server model is checked against the real ovsdb-server 3.1 by a
//! differential test (random transactions; results and `update`/`update2`
//! messages identical), and reproduces 3.1's weak-reference behaviour by
//! default ([`ServerOptions::weak_refs_as_ovs_3_1`]: which references to a
//! row deleted in a transaction survive depends on the hash order in
//! which ovsdb-server assesses the transaction's rows; checked against the
//! real server by `tests/weak_refs_real_server.rs`).
//!
//! A session's transaction with an unsatisfied `wait` waits as in
//! ovsdb-server (re-run after every commit, expired on a virtual clock:
//! [`Server::advance`]); checked against the real server by
//! `tests/triggers_real_server.rs`.
//!
//! The server model can serve the `_Server` database with a cluster
//! status set by the caller ([`Server::enable_server_db`]), and the
//! replica can do the C client's `_Server` handshake before monitoring
//! ([`Idl::enable_server_handshake`]: leader-only, connected, not stale),
//! reporting an unusable server as [`replica::Event::ServerUnusable`];
//! both checked against the real server by `tests/server_db_real_server.rs`.

pub mod cond;
pub mod experiments;
pub mod hub;
pub mod index;
pub mod meta;
pub mod params;
pub mod replica;
pub mod rng;
pub mod server;
pub mod timetravel;

pub use meta::DbMeta;
pub use replica::Idl;
pub use server::{Server, ServerOptions};
