//! What operators collect (contract; implementation in progress).

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// What an input turned out to be, by content.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// An OVSDB database file (`OVSDB JSON` / `OVSDB CLUSTER` records).
    Database,
    /// An ovsdb-server text log.
    ServerLog,
    /// `cluster/status` output.
    ClusterStatus,
    /// `memory/show` output.
    MemoryShow,
    /// `coverage/show` output.
    CoverageShow,
}

impl InputKind {
    /// `"database"`, `"log"`, `"cluster-status"`, `"memory-show"`, `"coverage-show"`.
    pub fn name(self) -> &'static str {
        match self {
            InputKind::Database => "database",
            InputKind::ServerLog => "log",
            InputKind::ClusterStatus => "cluster-status",
            InputKind::MemoryShow => "memory-show",
            InputKind::CoverageShow => "coverage-show",
        }
    }
}

/// One recognized input, decompressed and unpacked.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// Path as given, with archive members as `archive.tar.gz/member/path`.
    pub path: String,
    pub kind: InputKind,
    pub bytes: Vec<u8>,
}

/// An input that was not used, and why.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq)]
pub struct Ignored {
    pub path: String,
    pub reason: String,
}

/// Everything found in the inputs given to [`Collector::add`].
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Collected {
    pub items: Vec<Item>,
    pub ignored: Vec<Ignored>,
}
