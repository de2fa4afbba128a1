//! OVSDB core: byte-exact JSON, atoms/datums/types/schemas, column diffs,
//! and an in-memory database.
//!
//! Sans-IO: nothing here touches files, sockets or clocks.

pub mod atom;
pub mod datum;
pub mod db;
pub mod error;
pub mod json;
pub mod schema;
pub mod types;
pub mod uuid;

pub use atom::Atom;
pub use datum::{Datum, ParseOptions};
pub use db::{
    ChangeKind, ColumnChange, Database, ReplayOptions, Row, RowChange, StorageMode, TableChanges,
    Txn, TxnChanges,
};
pub use error::{Error, Result};
pub use json::{Json, JsonError, Object};
pub use schema::{ColumnSchema, DatabaseSchema, TableSchema};
pub use types::{AtomicType, BaseType, RefType, Type, UNLIMITED};
pub use uuid::Uuid;
