//! OVSDB core: byte-exact JSON, atoms/datums/types/schemas, column diffs,
//! and an in-memory database with ovsdb-server's commit semantics.
//!
//! Sans-IO: nothing here touches files, sockets, clocks or randomness.
//!
//! * [`json`] — parser and compact writer that follow ovsdb-server's rules
//!   (number normalization, `%.15g` reals, nesting limit 1000, error
//!   positions), [`Object`] keeping member order, and the emulation of the
//!   C hash-table member order ([`json::shash_hash`], [`json::shash_order`],
//!   [`json::Hmap`], [`Object::reorder_shash`], [`Json::sorted_recursive`]).
//! * [`Uuid`], [`Atom`], [`BaseType`]/[`Type`], [`Datum`] — the data model
//!   with the §2.5 JSON codec, defaults, constraint checks and column diffs
//!   ([`Datum::diff`], [`Datum::apply_diff`], [`Datum::diff_from_json`]);
//!   a datum's elements live in an [`AtomSet`] or [`AtomMap`] (a sorted
//!   `Vec` while small, a B-tree when large).
//! * [`Error`] — OVS's error: tag, details and the offending JSON, printed
//!   as `ovsdb_error_to_string` prints it (checked by OVS's own vectors in
//!   `testdata/`, run by `tests/vectors.rs`).
//! * [`DatabaseSchema`]/[`TableSchema`]/[`ColumnSchema`] — schema parsing
//!   with the C column/table iteration orders and normalized output.
//! * [`Database`] — tables of rows; [`Txn`] transactions with strong/weak
//!   reference bookkeeping, garbage collection, integrity checks and
//!   rollback; [`Database::apply_txn_json`] replays txn records (§2.4);
//!   [`Database::txn_to_json`]/[`Database::txn_json_len`] re-encode a
//!   transaction's [`TxnChanges`] in either [`StorageMode`].

pub mod atom;
pub mod datum;
pub mod db;
pub mod error;
pub mod json;
pub mod order;
pub mod schema;
pub mod sets;
pub mod strings;
pub mod types;
pub mod uuid;

pub use atom::Atom;
pub use datum::{Datum, ParseOptions};
pub use db::{
    ChangeKind, ColumnChange, Database, ReplayOptions, Row, RowChange, RowRef, StorageMode, Table,
    TableChanges, Txn, TxnChanges,
};
pub use error::{Error, Result};
pub use json::{Json, JsonError, Object};
pub use schema::{ColumnSchema, DatabaseSchema, TableSchema};
pub use sets::{AtomMap, AtomSet};
pub use types::{AtomicType, BaseType, RefType, Type, UNLIMITED};
pub use uuid::Uuid;
