//! What the parser worker hands the page about the operator evidence: the
//! `evidence::diagnose::Diagnosis` without its timeline (sent on its own, as
//! before) and without the log text (the worker keeps it and serves line
//! ranges), plus the text of the lines the findings cite.
//!
//! Shared by the page (`src/main.rs`) and the worker (`src/bin/worker.rs`,
//! through `#[path]`); plain data, no logic.

use evidence::collect::Ignored;
use evidence::diagnose::InputUse;
use evidence::findings::Finding;
use evidence::status::ClusterStatus;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DiagView {
    pub inputs: Vec<InputUse>,
    pub ignored: Vec<Ignored>,
    pub servers: Vec<ServerView>,
    /// In the core's order (by time).
    pub findings: Vec<FindingView>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ServerView {
    /// 4-hex short ID, or "" when no input names it.
    pub short: String,
    pub name: String,
    pub server_id: Option<String>,
    pub address: Option<String>,
    /// Name of its database file's lane in the timeline.
    pub lane_name: Option<String>,
    pub role: Option<String>,
    pub term: Option<u64>,
    pub log_parts: Vec<String>,
    /// Lines of its joined log (0 without a log).
    pub lines: u64,
    pub events: Vec<EventView>,
    pub status: Option<ClusterStatus>,
    pub memory: Option<Vec<(String, u64)>>,
}

impl ServerView {
    /// The short ID, or the name when no input names the server.
    pub fn label(&self) -> &str {
        if self.short.is_empty() {
            &self.name
        } else {
            &self.short
        }
    }
}

/// One recognized log line (`evidence::events::Event`) as the page draws
/// it: the worker resolves the kind to its name, its text and the one field
/// a mark uses, so the page carries no decoder of every event kind (57 KB
/// of its wasm).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EventView {
    /// 0-based line number in the (joined) log.
    pub line: u64,
    pub time_ms: i64,
    /// `EventKind::name`.
    pub kind: String,
    /// The mark's tooltip: the name, term, peer and amount.
    pub text: String,
    /// The term of an election event.
    pub term: Option<u64>,
    /// The peer of a probe timeout, a lost connection or a connection.
    pub peer: Option<String>,
    /// A long poll's wall ms; a memory report's kB.
    pub amount: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FindingView {
    pub finding: Finding,
    /// `Diagnosis::server_short` of the finding ("" for none).
    pub server: String,
    /// `Diagnosis::cluster_label` of the finding: `196d OVN_Northbound`.
    pub cluster: String,
    /// The cited lines: server index, 0-based line, text.
    pub evidence: Vec<(usize, u64, String)>,
}
