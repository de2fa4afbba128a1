//! `cluster/status` text (contract; implementation in progress).

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// One peer line under `Servers:`.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StatusPeer {
    pub sid: String,
    pub address: String,
    pub is_self: bool,
    pub next_index: Option<u64>,
    pub match_index: Option<u64>,
    pub last_msg_ms: Option<u64>,
}

/// A parsed `ovs-appctl cluster/status DB`.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ClusterStatus {
    pub name: String,
    /// Short (4 hex) and full cluster ID.
    pub cluster_sid: String,
    pub cluster_id: Option<String>,
    pub sid: String,
    pub server_id: Option<String>,
    pub address: String,
    pub status: String,
    pub role: String,
    pub term: u64,
    /// `self`, a short ID, or `unknown`.
    pub leader: String,
    pub vote: String,
    pub election_timer_ms: Option<u64>,
    pub log_first: Option<u64>,
    pub log_last: Option<u64>,
    pub not_committed: Option<u64>,
    pub not_applied: Option<u64>,
    pub servers: Vec<StatusPeer>,
}

/// Parses `cluster/status` output; `None` when the text is not one.
pub fn parse_cluster_status(text: &str) -> Option<ClusterStatus> {
    let _ = text;
    None
}
