//! OVSDB file formats: framing with SHA-1 verification, standalone and
//! clustered records, lazy decoding, writer, replay, storage-size accounting,
//! cluster checks, conversion between storage modes and the inspect summary.
//!
//! Sans-IO: every function works on byte slices; the CLI does the I/O.

pub mod ahead;
pub mod canon;
pub mod check;
pub mod checkpoint;
pub mod convert;
pub mod error;
pub mod facts;
pub mod framing;
pub mod net;
pub mod opindex;
pub mod raft;
mod rawtxn;
pub mod record;
pub mod replay;
pub mod replay_pass;
pub mod scan;
pub mod shared_replay;
pub mod sizes;
pub mod skim;
pub mod summary;
pub mod synth;
pub mod synth_sb;
pub mod uuid;
pub mod writer;

pub use check::{
    check_cluster, CheckReport, Checker, FileCheck, PairCount, UnknownSpan, Violation,
};
pub use error::{ErrorKind, LogError};
pub use framing::{Format, Frame, Framer, RawRecord, Skip};
pub use raft::{ClusterHeader, Entry, RaftRecord, RecordBody, Servers, Snapshot};
pub use replay::Db;
pub use replay_pass::{replay, replay_database, Replay, Upto};
pub use scan::{split_data, Event, LogScan, ScanOptions, ScanPoint, Verdict};
pub use shared_replay::SharedReplay;
pub use sizes::EntrySize;
pub use summary::{
    cluster_summary, inspect_document, summarize, summarize_cluster, summarize_detailed,
    summarize_records, ClusterSummary, EntryBytes, FileSummary, RecordKinds, TermSid,
};
pub use uuid::Uuid;
