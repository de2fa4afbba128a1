//! The contents explorer: what is inside a database file. Sans-IO: every
//! function takes the file's bytes (or a [`Log`] loaded from them).
//!
//! * [`load::Log`] — the one walk over a file that lists its entries and
//!   builds the [`load::HistoryIndex`] (row UUID → entries naming it).
//! * [`show`] — `ovn-nbctl show` / `ovn-sbctl show` / `ovs-vsctl show`
//!   overviews, a table summary for other databases.
//! * [`find`] — `ovn-nbctl find` conditions over a table.
//! * [`history`] — every entry that inserted, modified or deleted a row.
//! * [`diff`] — rows added, removed and changed between two indexes.
//! * [`sizes`] — bytes by table, column and client; largest entries;
//!   the compaction what-if.
//! * [`database_at`] — the database at an index (`ovsdb_log`'s replay).

pub mod diff;
pub mod find;
pub mod history;
pub mod layout;
pub mod load;
pub mod show;
pub mod sizes;

pub use load::{EntryInfo, EntryKind, HistoryIndex, Log};
pub use ovsdb_log::Upto;

/// The database at `upto` (default for the CLI: [`Upto::Committed`];
/// standalone files: `Index(n)` is after the first n txn records). Errors
/// name the record and offset; a file whose schema could not be read
/// gives `Err`, a damaged later record gives the database before it and
/// the error.
pub fn database_at(
    bytes: &[u8],
    upto: Upto,
) -> Result<(ovsdb::Database, Option<ovsdb_log::LogError>), String> {
    match ovsdb_log::replay_database(bytes, upto) {
        (Some(db), err) => Ok((db, err)),
        (None, Some(e)) => Err(e.to_string()),
        (None, None) => Err("no schema in this file".into()),
    }
}
