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
//! * [`database_at`] — the database at an index (`ovsdb_log::replay`);
//!   [`database_reached`] tells the index it landed on.
//! * [`stream`] — the same over a file walked in chunks and never held
//!   (the web worker): [`stream::Opener`] (load pass and replay in one
//!   walk), [`stream::DatabaseAt`].
//! * [`browse`] — the table browser's view model: tables with row counts,
//!   a row selection by substring (a scan of the table's printed text,
//!   kept in a [`browse::TextIndex`] per database) or `find` conditions,
//!   display cells with their references, and the referrers of every row.

pub mod browse;
pub mod diff;
pub mod find;
pub mod history;
pub mod layout;
pub mod load;
pub mod show;
pub mod sizes;
pub mod stream;

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
    // `ovsdb_log`'s replay pass (the byte-level reader, unique indexes
    // not re-checked) rather than `replay_database` (JSON trees, index
    // check on every commit: minutes on a 300 MB file), through the same
    // consumer the worker feeds chunk by chunk.
    stream::database_at_bytes(bytes, upto)
}

/// [`database_at`] with the file's format and the position the database
/// is at ([`stream::Reached`]): the last log index applied (clustered) or
/// the txn records applied (standalone), which differs from an
/// `Upto::Index` outside the file's range (it lands on the nearest end).
/// A file whose schema could not be read gives a `Reached` without a
/// database, with the error when there is one.
pub fn database_reached(bytes: &[u8], upto: Upto) -> Result<stream::Reached, String> {
    stream::database_reached_bytes(bytes, upto)
}
