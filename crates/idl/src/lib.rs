//! idl: the OVSDB client side, sans-IO.
//!
//! The server it talks to in-process is the `ovsdb-server` crate's model
//! (transact, monitors, triggers, `_Server`); the table metadata
//! ([`DbMeta`](ovsdb_server::DbMeta)) and the conditions are that crate's too.
//!
//! * [`replica`]: the IDL client replica (column modes, update/update2/
//!   update3, change tracking, indexes) and its transaction builder.
//! * [`experiments`]: the client-side experiments as library calls that
//!   return plain structs of figures.
//! * [`timetravel`]: the replica at any index of a loaded database log.
//! * [`hub`]: an in-process link between replicas and the server model.
//! * [`index`]: the replica's indexes.
//!
//! Quick tour:
//!
//! ```
//! use idl::{hub::Hub, replica::TxnStatus, Idl};
//! use ovsdb_server::{DbMeta, Server, ServerOptions};
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
//! The replica's opt-in `_Server` handshake before monitoring
//! ([`Idl::enable_server_handshake`]: leader-only, connected, not stale)
//! reports an unusable server as [`replica::Event::ServerUnusable`];
//! checked against the real server by `tests/server_db_real_server.rs`.

pub mod experiments;
pub mod hub;
pub mod index;
pub mod params;
pub mod replica;
pub mod timetravel;

pub use replica::Idl;
