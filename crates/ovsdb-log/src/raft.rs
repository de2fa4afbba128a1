//! Typed clustered-file records (spec §3.1, §3.2): the header (record 0)
//! and the six Raft record types, parsed with the C reader's strict
//! "every member must be consumed" rule, and re-encoded byte for byte
//! (outer members in `shash` order, `data`/`prev_data` sorted).

use crate::uuid::Uuid;
use ovsdb::json::{Json, Object};

/// A configuration: server ID → address, in the order the file lists them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Servers(pub Vec<(Uuid, String)>);

impl Servers {
    pub fn contains(&self, sid: &Uuid) -> bool {
        self.0.iter().any(|(s, _)| s == sid)
    }
    pub fn to_json(&self) -> Json {
        let mut o = Object::with_capacity(self.0.len());
        for (sid, addr) in &self.0 {
            o.push_unchecked(sid.to_string(), Json::String(addr.clone()));
        }
        Json::Object(o)
    }
    /// Sorted by server ID (as `show-log` prints them).
    pub fn sorted(&self) -> Vec<(Uuid, String)> {
        let mut v = self.0.clone();
        ovsdb::order::sort(&mut v);
        v
    }
}

/// The snapshot carried by a compacted header (`prev_*` members).
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub index: u64,
    pub term: u64,
    /// `[schema, snapshot txn]` (any JSON as far as the header goes).
    pub data: Json,
    pub eid: Uuid,
    pub election_timer: Option<u64>,
}

/// Record 0 of a clustered file.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterHeader {
    pub server_id: Uuid,
    pub name: String,
    pub local_address: String,
    pub cluster_id: Option<Uuid>,
    /// Present only in a joining file.
    pub remote_addresses: Option<Vec<String>>,
    /// Required unless joining.
    pub prev_servers: Option<Servers>,
    /// `prev_index` ≠ 0.
    pub snapshot: Option<Snapshot>,
}

impl ClusterHeader {
    pub fn is_joining(&self) -> bool {
        self.remote_addresses.is_some()
    }
    /// `prev_index`, or 0.
    pub fn prev_index(&self) -> u64 {
        self.snapshot.as_ref().map_or(0, |s| s.index)
    }
}

/// A log entry (a record with a non-zero `index`).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub term: u64,
    pub index: u64,
    /// `[schema-or-null, txn-or-null]` for entries carrying a database change.
    pub data: Option<Json>,
    pub eid: Option<Uuid>,
    pub servers: Option<Servers>,
    pub election_timer: Option<u64>,
}

/// The six Raft record types.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordBody {
    Entry(Entry),
    Term { term: u64 },
    Vote { term: u64, vote: Uuid },
    Leader { term: u64, leader: Uuid },
    CommitIndex { commit_index: u64 },
    Note { note: String },
}

/// A Raft record (records 1..n of a clustered file).
#[derive(Debug, Clone, PartialEq)]
pub struct RaftRecord {
    pub comment: Option<String>,
    pub body: RecordBody,
}

impl RaftRecord {
    /// The record's term, if it has one (not for commit-index and note).
    pub fn term(&self) -> Option<u64> {
        match &self.body {
            RecordBody::Entry(e) => Some(e.term),
            RecordBody::Term { term }
            | RecordBody::Vote { term, .. }
            | RecordBody::Leader { term, .. } => Some(*term),
            RecordBody::CommitIndex { .. } | RecordBody::Note { .. } => None,
        }
    }
    /// `"entry"`, `"term"`, `"vote"`, `"leader"`, `"commit_index"`, `"note"`.
    pub fn kind_name(&self) -> &'static str {
        match &self.body {
            RecordBody::Entry(_) => "entry",
            RecordBody::Term { .. } => "term",
            RecordBody::Vote { .. } => "vote",
            RecordBody::Leader { .. } => "leader",
            RecordBody::CommitIndex { .. } => "commit_index",
            RecordBody::Note { .. } => "note",
        }
    }
}

// ---------------------------------------------------------------------------
// Strict member parsing (ovs lib/ovsdb-parser.c semantics)

struct Members<'j> {
    members: Vec<(&'j str, &'j Json)>,
    used: Vec<bool>,
}

impl<'j> Members<'j> {
    fn new(o: &'j Object) -> Self {
        let members: Vec<_> = o.iter().collect();
        let used = vec![false; members.len()];
        Members { members, used }
    }
    fn get(&mut self, name: &str) -> Option<&'j Json> {
        let i = self.members.iter().position(|(k, _)| *k == name)?;
        self.used[i] = true;
        Some(self.members[i].1)
    }
    fn required(&mut self, name: &str) -> Result<&'j Json, String> {
        self.get(name)
            .ok_or_else(|| format!("Required '{name}' member is missing."))
    }
    fn opt_string(&mut self, name: &str) -> Result<Option<&'j str>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Json::String(s)) => Ok(Some(s)),
            Some(_) => Err(mismatch(name)),
        }
    }
    fn req_string(&mut self, name: &str) -> Result<&'j str, String> {
        match self.required(name)? {
            Json::String(s) => Ok(s),
            _ => Err(mismatch(name)),
        }
    }
    fn opt_u64(&mut self, name: &str) -> Result<Option<u64>, String> {
        match self.get(name) {
            None => Ok(None),
            // uint64 values >= 2^63 are stored as negative integers.
            Some(Json::Integer(i)) => Ok(Some(*i as u64)),
            Some(_) => Err(mismatch(name)),
        }
    }
    fn req_u64(&mut self, name: &str) -> Result<u64, String> {
        self.opt_u64(name)?
            .ok_or_else(|| format!("Required '{name}' member is missing."))
    }
    fn opt_uuid(&mut self, name: &str) -> Result<Option<Uuid>, String> {
        match self.opt_string(name)? {
            None => Ok(None),
            Some(s) => Uuid::parse(s)
                .map(Some)
                .ok_or_else(|| format!("\"{s}\" is not a valid UUID")),
        }
    }
    fn req_uuid(&mut self, name: &str) -> Result<Uuid, String> {
        self.opt_uuid(name)?
            .ok_or_else(|| format!("Required '{name}' member is missing."))
    }
    fn finish(self) -> Result<(), String> {
        match self.used.iter().position(|u| !u) {
            Some(i) => Err(format!(
                "Member '{}' is present but not allowed here.",
                self.members[i].0
            )),
            None => Ok(()),
        }
    }
}

fn mismatch(name: &str) -> String {
    format!("Type mismatch for member '{name}'.")
}

/// Checks a Raft address: `tcp:HOST:PORT`, `ssl:HOST:PORT` or `unix:PATH`.
pub fn validate_address(addr: &str) -> Result<(), String> {
    if addr.starts_with("unix:") {
        return Ok(());
    }
    let rest = addr
        .strip_prefix("tcp:")
        .or_else(|| addr.strip_prefix("ssl:"))
        .ok_or_else(|| format!("{addr}: expected \"tcp\" or \"ssl\" address"))?;
    let (host, port) = rest
        .rsplit_once(':')
        .ok_or_else(|| format!("{addr}: port number must be specified"))?;
    if host.is_empty() || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{addr}: bad address"));
    }
    Ok(())
}

fn parse_servers(j: &Json, name: &str) -> Result<Servers, String> {
    let o = j.as_object().ok_or_else(|| mismatch(name))?;
    if o.is_empty() {
        return Err(format!("{name}: must have at least one server"));
    }
    let mut v = Vec::with_capacity(o.len());
    for (k, a) in o.iter() {
        let sid = Uuid::parse(k).ok_or_else(|| format!("{name}: \"{k}\" is not a valid UUID"))?;
        let addr = a
            .as_str()
            .ok_or_else(|| format!("{name}: address for {k} is not a string"))?;
        validate_address(addr)?;
        v.push((sid, addr.to_string()));
    }
    Ok(Servers(v))
}

/// Parses record 0 of a clustered file (`Parsing raft header failed: …`).
pub fn parse_header(j: &Json) -> Result<ClusterHeader, String> {
    parse_header_inner(j).map_err(|e| format!("Parsing raft header failed: {e}"))
}

fn parse_header_inner(j: &Json) -> Result<ClusterHeader, String> {
    let o = j.as_object().ok_or("header is not a JSON object")?;
    let mut p = Members::new(o);
    let server_id = p.req_uuid("server_id")?;
    let name = p.req_string("name")?.to_string();
    let local_address = p.req_string("local_address")?.to_string();
    let mut h = ClusterHeader {
        server_id,
        name,
        local_address,
        cluster_id: None,
        remote_addresses: None,
        prev_servers: None,
        snapshot: None,
    };
    if let Some(ra) = p.get("remote_addresses") {
        let arr = ra.as_array().ok_or_else(|| mismatch("remote_addresses"))?;
        let mut addrs = Vec::new();
        for a in arr {
            let s = a.as_str().ok_or("remote_addresses: expected string")?;
            validate_address(s)?;
            addrs.push(s.to_string());
        }
        if !addrs.iter().any(|a| *a != h.local_address) {
            return Err("remote_addresses: no remote addresses".into());
        }
        h.remote_addresses = Some(addrs);
        h.cluster_id = p.opt_uuid("cluster_id")?;
    } else {
        h.cluster_id = Some(p.req_uuid("cluster_id")?);
        h.prev_servers = Some(parse_servers(p.required("prev_servers")?, "prev_servers")?);
        let prev_index = p.opt_u64("prev_index")?.unwrap_or(0);
        if prev_index != 0 {
            let term = p.req_u64("prev_term")?;
            let data = p.required("prev_data")?.clone();
            let eid = p.req_uuid("prev_eid")?;
            let election_timer = p.opt_u64("prev_election_timer")?;
            h.snapshot = Some(Snapshot {
                index: prev_index,
                term,
                data,
                eid,
                election_timer,
            });
        }
    }
    p.finish()?;
    Ok(h)
}

/// Parses a Raft record (`Parsing raft log record failed: …`).
pub fn parse_record(j: &Json) -> Result<RaftRecord, String> {
    parse_record_inner(j).map_err(|e| format!("Parsing raft log record failed: {e}"))
}

fn parse_record_inner(j: &Json) -> Result<RaftRecord, String> {
    let o = j.as_object().ok_or("record is not a JSON object")?;
    let mut p = Members::new(o);
    let comment = p.opt_string("comment")?.map(str::to_string);
    let body = if let Some(note) = p.get("note") {
        let note = note.as_str().ok_or_else(|| mismatch("note"))?.to_string();
        RecordBody::Note { note }
    } else if let Some(ci) = p.opt_u64("commit_index")?.filter(|&c| c != 0) {
        RecordBody::CommitIndex { commit_index: ci }
    } else {
        let term = p.req_u64("term")?;
        if let Some(l) = p.get("leader") {
            let s = l.as_str().ok_or_else(|| mismatch("leader"))?;
            let leader = Uuid::parse(s).ok_or_else(|| format!("\"{s}\" is not a valid UUID"))?;
            if leader.is_zero() {
                return Err("null leader".into());
            }
            RecordBody::Leader { term, leader }
        } else if let Some(v) = p.get("vote") {
            let s = v.as_str().ok_or_else(|| mismatch("vote"))?;
            let vote = Uuid::parse(s).ok_or_else(|| format!("\"{s}\" is not a valid UUID"))?;
            if vote.is_zero() {
                return Err("null vote".into());
            }
            RecordBody::Vote { term, vote }
        } else if let Some(index) = p.opt_u64("index")?.filter(|&i| i != 0) {
            let servers = match p.get("servers") {
                Some(s) => Some(parse_servers(s, "servers")?),
                None => None,
            };
            let election_timer = p.opt_u64("election_timer")?;
            let data = match p.get("data") {
                None => None,
                Some(d @ (Json::Object(_) | Json::Array(_))) => Some(d.clone()),
                Some(_) => return Err(mismatch("data")),
            };
            let eid = if data.is_some() {
                Some(p.req_uuid("eid")?)
            } else {
                None
            };
            RecordBody::Entry(Entry {
                term,
                index,
                data,
                eid,
                servers,
                election_timer,
            })
        } else {
            RecordBody::Term { term }
        }
    };
    p.finish()?;
    Ok(RaftRecord { comment, body })
}

// ---------------------------------------------------------------------------
// Encoding

fn u64_json(v: u64) -> Json {
    Json::Integer(v as i64)
}

fn finish_object(members: Vec<(&'static str, Json)>) -> Json {
    let mut o = Object::with_capacity(members.len());
    for (k, v) in members {
        o.push_unchecked(k, v);
    }
    o.reorder_shash();
    Json::Object(o)
}

impl ClusterHeader {
    /// The header as ovsdb-server builds it: members inserted in the
    /// writer's fixed order, emitted in `shash` order; `prev_data` sorted.
    pub fn to_json(&self) -> Json {
        let mut m: Vec<(&'static str, Json)> = Vec::with_capacity(10);
        m.push(("server_id", Json::String(self.server_id.to_string())));
        if let Some(cid) = self.cluster_id.filter(|c| !c.is_zero()) {
            m.push(("cluster_id", Json::String(cid.to_string())));
        }
        m.push(("local_address", Json::String(self.local_address.clone())));
        m.push(("name", Json::String(self.name.clone())));
        if let Some(ra) = &self.remote_addresses {
            m.push((
                "remote_addresses",
                Json::Array(ra.iter().map(|a| Json::String(a.clone())).collect()),
            ));
        }
        if let Some(ps) = &self.prev_servers {
            m.push(("prev_servers", ps.to_json()));
        }
        if let Some(s) = &self.snapshot {
            m.push(("prev_index", u64_json(s.index)));
            m.push(("prev_term", u64_json(s.term)));
            m.push(("prev_data", s.data.sorted_recursive()));
            m.push(("prev_eid", Json::String(s.eid.to_string())));
            if let Some(t) = s.election_timer.filter(|&t| t != 0) {
                m.push(("prev_election_timer", u64_json(t)));
            }
        }
        finish_object(m)
    }

    /// Body bytes (compact JSON + LF).
    pub fn encode(&self) -> Vec<u8> {
        body_bytes(&self.to_json())
    }
}

impl RaftRecord {
    pub fn to_json(&self) -> Json {
        let mut m: Vec<(&'static str, Json)> = Vec::with_capacity(6);
        if let Some(c) = &self.comment {
            m.push(("comment", Json::String(c.clone())));
        }
        match &self.body {
            RecordBody::Entry(e) => {
                m.push(("term", u64_json(e.term)));
                m.push(("index", u64_json(e.index)));
                if let Some(d) = &e.data {
                    m.push(("data", d.sorted_recursive()));
                }
                if let Some(s) = &e.servers {
                    m.push(("servers", s.to_json()));
                }
                if let Some(t) = e.election_timer.filter(|&t| t != 0) {
                    m.push(("election_timer", u64_json(t)));
                }
                if let Some(eid) = e.eid.filter(|e| !e.is_zero()) {
                    m.push(("eid", Json::String(eid.to_string())));
                }
            }
            RecordBody::Term { term } => m.push(("term", u64_json(*term))),
            RecordBody::Vote { term, vote } => {
                m.push(("term", u64_json(*term)));
                m.push(("vote", Json::String(vote.to_string())));
            }
            RecordBody::Leader { term, leader } => {
                m.push(("term", u64_json(*term)));
                m.push(("leader", Json::String(leader.to_string())));
            }
            RecordBody::CommitIndex { commit_index } => {
                m.push(("commit_index", u64_json(*commit_index)))
            }
            RecordBody::Note { note } => m.push(("note", Json::String(note.clone()))),
        }
        finish_object(m)
    }

    /// Body bytes (compact JSON + LF).
    pub fn encode(&self) -> Vec<u8> {
        body_bytes(&self.to_json())
    }
}

/// Compact serialization plus the final LF.
pub fn body_bytes(j: &Json) -> Vec<u8> {
    let mut v = Vec::new();
    j.write_compact(&mut v);
    v.push(b'\n');
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use ovsdb::json::parse;

    fn rec(s: &str) -> Result<RaftRecord, String> {
        parse_record(&parse(s.as_bytes()).unwrap())
    }

    #[test]
    fn classification_rules() {
        let sid = "a586165a-5a71-47a4-9d00-3ea7a483331e";
        assert!(matches!(rec("{\"commit_index\":0}"), Err(e) if e.contains("'term'")));
        assert!(matches!(
            rec("{\"term\":3,\"index\":0}").unwrap().body,
            RecordBody::Term { term: 3 }
        ));
        let e = rec(&format!("{{\"term\":3,\"vote\":\"{sid}\",\"index\":4}}")).unwrap_err();
        assert!(
            e.contains("Member 'index' is present but not allowed here."),
            "{e}"
        );
        let e = rec(&format!("{{\"term\":3,\"index\":4,\"eid\":\"{sid}\"}}")).unwrap_err();
        assert!(e.contains("'eid'"), "{e}");
        let e = rec("{\"term\":1,\"index\":2,\"bogus\":1}").unwrap_err();
        assert!(e.contains("'bogus'"), "{e}");
        assert!(rec("{\"term\":\"1\"}")
            .unwrap_err()
            .contains("Type mismatch"));
        let n = rec("{\"comment\":\"bye\",\"note\":\"left\"}").unwrap();
        assert_eq!(n.comment.as_deref(), Some("bye"));
        // uint64 >= 2^63 is written as a negative integer.
        let t = rec("{\"term\":-1}").unwrap();
        assert_eq!(t.term(), Some(u64::MAX));
        assert_eq!(t.encode(), b"{\"term\":-1}\n");
    }

    #[test]
    fn member_orders_of_spec_table() {
        // §5.4: entry inserted term,index,data,eid comes out eid,data,term,index.
        let r = rec(&format!(
            "{{\"term\":1,\"index\":3,\"data\":[null,{{\"b\":1,\"a\":2}}],\"eid\":\"{}\"}}",
            "79a87ba7-2d00-444d-8403-abfff575112b"
        ))
        .unwrap();
        let out = String::from_utf8(r.encode()).unwrap();
        assert!(out.starts_with("{\"eid\":"), "{out}");
        assert!(out.contains("\"data\":[null,{\"a\":2,\"b\":1}],\"term\":1,\"index\":3}"));
    }
}
