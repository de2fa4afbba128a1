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

/// Bounds on what inputs may expand to (placeholder until the archive reader lands).
#[derive(Clone, Debug, Default)]
pub struct Limits {}

/// Collects inputs (placeholder: plain files only, by their first bytes).
#[derive(Debug, Default)]
pub struct Collector {
    out: Collected,
}

impl Collector {
    pub fn new(_limits: Limits) -> Collector {
        Collector::default()
    }
    pub fn add(&mut self, path: &str, input: &mut dyn std::io::Read) {
        let mut bytes = Vec::new();
        if let Err(e) = input.read_to_end(&mut bytes) {
            self.out.ignored.push(Ignored {
                path: path.into(),
                reason: e.to_string(),
            });
            return;
        }
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).into_owned();
        let kind = if bytes.starts_with(b"OVSDB ") {
            InputKind::Database
        } else if text.contains("Cluster ID:") {
            InputKind::ClusterStatus
        } else if text.starts_with("atoms:") || text.contains("cells:") {
            InputKind::MemoryShow
        } else if text.starts_with("Event coverage") {
            InputKind::CoverageShow
        } else if text.len() > 24 && text.as_bytes()[4] == b'-' && text.as_bytes()[23] == b'Z' {
            InputKind::ServerLog
        } else {
            self.out.ignored.push(Ignored {
                path: path.into(),
                reason: "not recognized".into(),
            });
            return;
        };
        self.out.items.push(Item {
            path: path.into(),
            kind,
            bytes,
        });
    }
    pub fn finish(self) -> Collected {
        self.out
    }
}

/// `(base, n)` of a rotated log part: `x.log` → `(x.log, 0)`, `x.log.2` → `(x.log, 2)`.
pub fn rotation(path: &str) -> Option<(&str, u32)> {
    if let Some((base, n)) = path.rsplit_once('.') {
        if let Ok(n) = n.parse::<u32>() {
            if base.ends_with(".log") {
                return Some((base, n));
            }
        }
    }
    path.ends_with(".log").then_some((path, 0))
}
