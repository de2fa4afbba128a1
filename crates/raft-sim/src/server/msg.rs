//! The messages servers exchange ([`Msg`]), their coarse kinds for event
//! lists and counters ([`MsgKind`]) and their approximate size on the wire.

use super::{Entry, EntryKind, Sid, Snap};
use crate::txn::{self, ProposalRef};
use ovsdb::StorageMode;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Success,
    NotLeader,
    PrereqFailed,
    InProgress,
    LostLeadership,
}

#[derive(Clone, Debug)]
pub enum Msg {
    Append {
        term: u64,
        prev_index: u64,
        prev_term: u64,
        leader_commit: u64,
        entries: Rc<Vec<Entry>>,
    },
    AppendReply {
        term: u64,
        log_end: u64,
        prev_index: u64,
        n_entries: u64,
        ok: bool,
    },
    Vote {
        term: u64,
        last_index: u64,
        last_term: u64,
        transfer: bool,
        prevote: bool,
    },
    VoteReply {
        term: u64,
        vote: Sid,
        prevote: bool,
    },
    Snapshot {
        term: u64,
        snap: Rc<Snap>,
    },
    SnapshotReply {
        term: u64,
        last_index: u64,
        last_term: u64,
    },
    BecomeLeader {
        term: u64,
    },
    Exec {
        eid: u64,
        prereq: u64,
        txn: ProposalRef,
    },
    ExecReply {
        eid: u64,
        status: Status,
        commit_index: u64,
    },
    AddServer,
    AddServerReply {
        ok: bool,
    },
    RemoveServer {
        target: Sid,
    },
    RemoveServerReply {
        ok: bool,
        target: Sid,
    },
}

/// Coarse message kinds for event lists and counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgKind {
    Append,
    Heartbeat,
    AppendReply,
    Vote,
    PreVote,
    VoteReply,
    Snapshot,
    SnapshotReply,
    BecomeLeader,
    Exec,
    ExecReply,
    Membership,
}

impl MsgKind {
    pub fn name(self) -> &'static str {
        match self {
            MsgKind::Append => "append_request",
            MsgKind::Heartbeat => "heartbeat",
            MsgKind::AppendReply => "append_reply",
            MsgKind::Vote => "vote_request",
            MsgKind::PreVote => "prevote_request",
            MsgKind::VoteReply => "vote_reply",
            MsgKind::Snapshot => "install_snapshot_request",
            MsgKind::SnapshotReply => "install_snapshot_reply",
            MsgKind::BecomeLeader => "become_leader",
            MsgKind::Exec => "execute_command_request",
            MsgKind::ExecReply => "execute_command_reply",
            MsgKind::Membership => "membership",
        }
    }
    pub fn code(self) -> u64 {
        self as u64
    }
}

impl Msg {
    pub fn kind(&self) -> MsgKind {
        match self {
            Msg::Append { entries, .. } if entries.is_empty() => MsgKind::Heartbeat,
            Msg::Append { .. } => MsgKind::Append,
            Msg::AppendReply { .. } => MsgKind::AppendReply,
            Msg::Vote { prevote: true, .. } => MsgKind::PreVote,
            Msg::Vote { .. } => MsgKind::Vote,
            Msg::VoteReply { .. } => MsgKind::VoteReply,
            Msg::Snapshot { .. } => MsgKind::Snapshot,
            Msg::SnapshotReply { .. } => MsgKind::SnapshotReply,
            Msg::BecomeLeader { .. } => MsgKind::BecomeLeader,
            Msg::Exec { .. } => MsgKind::Exec,
            Msg::ExecReply { .. } => MsgKind::ExecReply,
            _ => MsgKind::Membership,
        }
    }

    pub fn term(&self) -> u64 {
        match self {
            Msg::Append { term, .. }
            | Msg::AppendReply { term, .. }
            | Msg::Vote { term, .. }
            | Msg::VoteReply { term, .. }
            | Msg::Snapshot { term, .. }
            | Msg::SnapshotReply { term, .. }
            | Msg::BecomeLeader { term } => *term,
            _ => 0,
        }
    }

    /// Approximate JSON-RPC size on the wire, bytes (header members
    /// `cluster`, `from`, `to` are three UUIDs plus method name framing).
    pub fn wire_bytes(&self, storage: StorageMode) -> u64 {
        const COMMON: u64 = 170;
        match self {
            Msg::Append { entries, .. } => {
                let mut b = COMMON + 90;
                for e in entries.iter() {
                    b += 30
                        + match &e.kind {
                            EntryKind::Data { txn, .. } => 50 + txn.len(storage) as u64,
                            EntryKind::Servers(s) => 60 * s.count_ones() as u64,
                            _ => 20,
                        };
                }
                b
            }
            Msg::Snapshot { snap, .. } => COMMON + txn::NB_HEADER_JSON + snap.db_bytes,
            Msg::Exec { txn, .. } => COMMON + 100 + txn.len(storage) as u64,
            Msg::ExecReply { .. } => COMMON + 80,
            _ => COMMON + 60,
        }
    }
}
