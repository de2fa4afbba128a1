//! `ovs-appctl cluster/status DB` text (ovsdb/raft.c
//! `raft_unixctl_status`):
//!
//! ```text
//! 2f3f                                   (newer versions: the local nickname)
//! Name: OVN_Northbound
//! Cluster ID: 196d (196d550d-56b3-4961-a41b-6d418494e788)   (or "not yet known")
//! Server ID: 2f3f (2f3fe4f0-11cf-494a-8ce2-33bee5156455)
//! Address: tcp:127.0.0.1:20642
//! Status: cluster member
//! Remotes for joining: tcp:… tcp:…        (while joining)
//! Adding server 3581 (3581 at tcp:…) (catchup)   (leader only)
//! Removing server 3581 (3581 at tcp:…) (committing)
//! Role: leader
//! Term: 2
//! Leader: self
//! Vote: self
//!
//! Last Election started 3965 ms ago, reason: timeout
//! Last Election won: 3964 ms ago
//! Election timer: 1000                   (leader: " (changing to 2000)")
//! Log: [2, 68]                           (log_start, log_end: one past the last entry)
//! Entries not yet committed: 0
//! Entries not yet applied: 0
//! Connections: ->0000 <-aa26 <-3581 ->3581   ("(->x)": not connected)
//! Disconnections: 0
//! Servers:
//!     2f3f (2f3f at tcp:127.0.0.1:20642) (self) next_index=36 match_index=67
//!     3581 (3581 at tcp:127.0.0.1:20643) next_index=68 match_index=67 last msg 204 ms ago
//! ```
//!
//! `next_index`/`match_index` are only printed by a leader, `(voted for X)`
//! only by a candidate. Lines not listed are ignored (newer versions may add
//! some). Error replies (`unknown cluster`, `"cluster/status" is not a valid
//! command …`) are not a status: [`parse_cluster_status`] returns `None`.

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
    /// The full ID's short form as printed inside the parentheses (usually
    /// equal to `sid`, the nickname).
    pub short_id: String,
    /// A phase other than stable (`catchup`, `caught up`, `committing`, `remove`).
    pub phase: Option<String>,
    /// Candidate's view: whom this server voted for.
    pub voted_for: Option<String>,
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
    /// `Log: [first, last]` as printed: `log_first` is the first index in the
    /// log, `log_last` is ovsdb-server's `log_end`, one past the last entry.
    pub log_first: Option<u64>,
    pub log_last: Option<u64>,
    pub not_committed: Option<u64>,
    pub not_applied: Option<u64>,
    pub servers: Vec<StatusPeer>,

    /// The line before `Name:` (the local nickname), if present.
    pub nickname: Option<String>,
    /// `Election timer: 1000 (changing to 2000)`.
    pub election_timer_changing_to_ms: Option<u64>,
    pub last_election_started_ms_ago: Option<u64>,
    /// `timeout` or `leadership_transfer`.
    pub last_election_reason: Option<String>,
    pub last_election_won_ms_ago: Option<u64>,
    /// `Connections:` items as printed (`->2f3f`, `<-aa26`, `(->3581)`).
    pub connections: Vec<String>,
    pub disconnections: Option<u64>,
    /// `Remotes for joining:` addresses.
    pub remotes_for_joining: Vec<String>,
    /// `Adding server …` / `Removing server …` lines (leader), as
    /// (nickname, address, phase, adding).
    pub membership_changes: Vec<(String, String, String, bool)>,
}

impl ClusterStatus {
    /// The commit index: `log_end - 1 - not_committed` (as ovsdb-server
    /// computes "Entries not yet committed").
    pub fn commit_index(&self) -> Option<u64> {
        self.log_last?
            .checked_sub(1)?
            .checked_sub(self.not_committed?)
    }

    /// The last applied index, likewise.
    pub fn applied_index(&self) -> Option<u64> {
        self.log_last?
            .checked_sub(1)?
            .checked_sub(self.not_applied?)
    }

    /// The last index in the log (`log_end - 1`).
    pub fn last_log_index(&self) -> Option<u64> {
        self.log_last?.checked_sub(1)
    }
}

fn num(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `196d (196d550d-…)` → ("196d", Some("196d550d-…")).
fn short_and_full(s: &str) -> (String, Option<String>) {
    match s.split_once(" (") {
        Some((a, b)) => (
            a.trim().to_string(),
            b.strip_suffix(')').map(|f| f.to_string()),
        ),
        None => (s.trim().to_string(), None),
    }
}

/// `NICK (SID at ADDR)` and the rest.
fn server_at(s: &str) -> Option<(&str, &str, &str, &str)> {
    let (nick, rest) = s.split_once(" (")?;
    let (sid, rest) = rest.split_once(" at ")?;
    let (addr, rest) = rest.split_once(')')?;
    Some((nick, sid, addr, rest))
}

fn parse_peer(s: &str) -> Option<StatusPeer> {
    let (nick, sid, addr, mut rest) = server_at(s.trim())?;
    let mut p = StatusPeer {
        sid: nick.to_string(),
        short_id: sid.to_string(),
        address: addr.to_string(),
        ..StatusPeer::default()
    };
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        if let Some(r) = rest.strip_prefix("(self)") {
            p.is_self = true;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("(voted for ") {
            let (v, r) = r.split_once(')')?;
            p.voted_for = Some(v.to_string());
            rest = r;
        } else if let Some(r) = rest.strip_prefix('(') {
            let (v, r) = r.split_once(')')?;
            p.phase = Some(v.to_string());
            rest = r;
        } else if let Some(r) = rest.strip_prefix("next_index=") {
            let (v, r) = r.split_once(' ').unwrap_or((r, ""));
            p.next_index = Some(num(v)?);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("match_index=") {
            let (v, r) = r.split_once(' ').unwrap_or((r, ""));
            p.match_index = Some(num(v)?);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("last msg ") {
            let (v, r) = r.split_once(" ms ago")?;
            p.last_msg_ms = Some(num(v)?);
            rest = r;
        } else {
            return None;
        }
    }
    Some(p)
}

/// Parses `cluster/status` output; `None` when the text is not one (it must
/// have `Name:`, `Server ID:`, `Role:` and `Term:` lines).
pub fn parse_cluster_status(text: &str) -> Option<ClusterStatus> {
    let mut st = ClusterStatus::default();
    let (mut has_name, mut has_sid, mut has_role, mut has_term) = (false, false, false, false);
    let mut in_servers = false;
    let mut first = true;
    for raw in text.lines() {
        let line = raw.trim_end();
        if line.is_empty() {
            continue;
        }
        if first {
            first = false;
            // The nickname line: one token, before "Name:".
            if !line.contains(':') && !line.contains(' ') {
                st.nickname = Some(line.to_string());
                continue;
            }
        }
        if in_servers && raw.starts_with(' ') {
            st.servers.push(parse_peer(line)?);
            continue;
        }
        in_servers = false;
        if line == "Servers:" {
            in_servers = true;
            continue;
        }
        if let Some(s) = line.strip_prefix("Adding server ") {
            let (nick, _, addr, rest) = server_at(s)?;
            let phase = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
            st.membership_changes
                .push((nick.into(), addr.into(), phase.into(), true));
            continue;
        }
        if let Some(s) = line.strip_prefix("Removing server ") {
            let (nick, _, addr, rest) = server_at(s)?;
            let phase = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
            st.membership_changes
                .push((nick.into(), addr.into(), phase.into(), false));
            continue;
        }
        if let Some(s) = line.strip_prefix("Last Election started ") {
            let (ms, r) = s.split_once(" ms ago")?;
            st.last_election_started_ms_ago = Some(num(ms)?);
            st.last_election_reason = r.strip_prefix(", reason: ").map(|x| x.to_string());
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            "Name" => {
                st.name = value.to_string();
                has_name = true;
            }
            "Cluster ID" if value != "not yet known" => {
                let (s, f) = short_and_full(value);
                st.cluster_sid = s;
                st.cluster_id = f;
            }
            "Server ID" => {
                let (s, f) = short_and_full(value);
                st.sid = s;
                st.server_id = f;
                has_sid = true;
            }
            "Address" => st.address = value.to_string(),
            "Status" => st.status = value.to_string(),
            "Remotes for joining" => {
                st.remotes_for_joining = value.split_whitespace().map(String::from).collect()
            }
            "Role" => {
                st.role = value.to_string();
                has_role = true;
            }
            "Term" => {
                st.term = num(value)?;
                has_term = true;
            }
            "Leader" => st.leader = value.to_string(),
            "Vote" => st.vote = value.to_string(),
            "Last Election won" => {
                st.last_election_won_ms_ago = Some(num(value.strip_suffix(" ms ago")?)?)
            }
            "Election timer" => {
                let (a, b) = match value.split_once(" (changing to ") {
                    Some((a, b)) => (a, Some(num(b.strip_suffix(')')?)?)),
                    None => (value, None),
                };
                st.election_timer_ms = Some(num(a)?);
                st.election_timer_changing_to_ms = b;
            }
            "Log" => {
                let v = value.strip_prefix('[')?.strip_suffix(']')?;
                let (a, b) = v.split_once(',')?;
                st.log_first = Some(num(a)?);
                st.log_last = Some(num(b)?);
            }
            "Entries not yet committed" => st.not_committed = Some(num(value)?),
            "Entries not yet applied" => st.not_applied = Some(num(value)?),
            "Connections" => st.connections = value.split_whitespace().map(String::from).collect(),
            "Disconnections" => st.disconnections = Some(num(value)?),
            _ => {}
        }
    }
    (has_name && has_sid && has_role && has_term).then_some(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_not_a_status() {
        assert_eq!(parse_cluster_status("unknown cluster\n"), None);
        assert_eq!(
            parse_cluster_status(
                "\"cluster/status\" is not a valid command (use \"list-commands\" to see a list of valid commands)\n"
            ),
            None
        );
        assert_eq!(parse_cluster_status(""), None);
    }

    #[test]
    fn candidate_and_phases() {
        // Shapes from raft_unixctl_status (ovsdb/raft.c), values made up.
        let t = "Name: OVN_Southbound\nCluster ID: not yet known\nServer ID: 1111 (11111111-0000-0000-0000-000000000000)\n\
                 Address: ssl:10.0.0.1:6644\nStatus: joining cluster\nRemotes for joining: ssl:10.0.0.2:6644 ssl:10.0.0.3:6644\n\
                 Role: candidate\nTerm: 7\nLeader: unknown\nVote: self\n\nElection timer: 1000\nLog: [1, 1]\n\
                 Entries not yet committed: 0\nEntries not yet applied: 0\nConnections: (->0000) ->2222\nDisconnections: 3\nServers:\n\
                 \x20   1111 (1111 at ssl:10.0.0.1:6644) (self) (voted for 1111)\n\
                 \x20   2222 (2222 at ssl:10.0.0.2:6644) (catchup) last msg 12 ms ago\n";
        let s = parse_cluster_status(t).unwrap();
        assert_eq!(s.nickname, None);
        assert_eq!(s.cluster_id, None);
        assert_eq!(s.role, "candidate");
        assert_eq!(s.remotes_for_joining.len(), 2);
        assert_eq!(s.connections, ["(->0000)", "->2222"]);
        assert_eq!(s.servers[0].voted_for.as_deref(), Some("1111"));
        assert!(s.servers[0].is_self);
        assert_eq!(s.servers[1].phase.as_deref(), Some("catchup"));
        assert_eq!(s.servers[1].last_msg_ms, Some(12));
        assert_eq!(s.commit_index(), Some(0));
    }
}
