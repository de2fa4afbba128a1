//! The C IDL's `_Server` handshake (ovs `lib/ovsdb-cs.c`), opt-in.
//!
//! With [`Idl::enable_server_handshake`], [`Idl::connect`] first asks for
//! the `_Server` schema, then monitors `_Server`'s `Database` table
//! (`monitor_cond`, monitor id `["monid","_Server"]`, the columns name,
//! model, connected, leader, schema, cid and index that the server has),
//! finds the row of the replicated database and only then sends the data
//! monitor request. The server is unusable (the C client reconnects to
//! another one) when there is no such row; when the row has no schema
//! (a cluster member that has not joined yet, a relay without its source);
//! when a clustered or relay database is disconnected from its cluster or
//! source; in leader-only mode, when a clustered server is not the leader
//! or the database is a relay; and when a clustered server's applied index
//! is lower than the highest one this client has seen (stale data).
//! `_Server` keeps being monitored, so a later change (the leader steps
//! down, the member loses the cluster) is reported as well.
//!
//! Sans-IO, the replica cannot reconnect by itself: it reports an
//! [`Event::ServerUnusable`] and keeps the problem in
//! [`Idl::server_problem`]; the caller disconnects ([`Idl::disconnect`])
//! and connects elsewhere. (If it stays, and a later `_Server` update
//! makes the server usable, the data monitor request follows then.) A
//! server without `_Server` (error reply) is used directly, as the C
//! client does with old servers.

use super::{Event, Idl, State};
use ovsdb::json::{Json, Object};
use ovsdb::uuid::Uuid;
use std::collections::BTreeMap;
use std::fmt;

/// Columns of `_Server.Database` the C IDL monitors.
const SERVER_COLUMNS: [&str; 7] = [
    "name",
    "model",
    "connected",
    "leader",
    "schema",
    "cid",
    "index",
];

/// Why the connected server cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerProblem {
    /// `_Server` has no row for the database.
    NoDatabase,
    /// The row has no schema: a cluster member that has not joined yet, a
    /// relay not yet connected to its source, or a missing schema.
    NoSchema,
    /// A clustered or relay database disconnected from its cluster (or
    /// relay source).
    NotConnected,
    /// Leader-only mode and the server is not the cluster leader (a relay
    /// never is).
    NotLeader,
    /// The server's applied index is lower than one this client has
    /// already seen.
    Stale { index: u64, min_index: u64 },
}

impl fmt::Display for ServerProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerProblem::NoDatabase => f.write_str("server does not have the database"),
            ServerProblem::NoSchema => f.write_str("server has no schema for the database yet"),
            ServerProblem::NotConnected => {
                f.write_str("server is disconnected from its cluster or relay source")
            }
            ServerProblem::NotLeader => f.write_str("server is not the cluster leader"),
            ServerProblem::Stale { index, min_index } => write!(
                f,
                "server has stale data (index {index} < {min_index} already seen)"
            ),
        }
    }
}

/// The `_Server.Database` row of the replicated database, as received
/// (absent columns are `None`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerRow {
    pub name: Option<String>,
    pub model: Option<String>,
    pub connected: Option<bool>,
    pub leader: Option<bool>,
    pub schema: Option<String>,
    pub cid: Option<Uuid>,
    pub index: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Phase {
    #[default]
    Idle,
    SchemaRequested,
    MonitorRequested,
    /// The data monitor was requested (or `_Server` is not available).
    Done,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Handshake {
    leader_only: bool,
    min_index: u64,
    phase: Phase,
    req_id: Option<Json>,
    rows: BTreeMap<Uuid, ServerRow>,
    problem: Option<ServerProblem>,
}

fn server_monitor_id() -> Json {
    Json::Array(vec![Json::from("monid"), Json::from("_Server")])
}

/// The single value of an optional column (`["set",[]]` = none).
fn optional(v: &Json) -> Option<&Json> {
    match v.as_array() {
        Some([tag, items]) if tag.as_str() == Some("set") => items.as_array()?.first(),
        _ => Some(v),
    }
}

fn uuid_of(v: &Json) -> Option<Uuid> {
    match v.as_array() {
        Some([tag, u]) if tag.as_str() == Some("uuid") => u.as_str().and_then(Uuid::parse),
        _ => None,
    }
}

impl ServerRow {
    /// Sets the columns present in `cols` (every column is a scalar or an
    /// optional scalar, so a `modify` carries new values too).
    fn update(&mut self, cols: &Object) {
        for (name, v) in cols.iter() {
            let v = optional(v);
            match name {
                "name" => self.name = v.and_then(Json::as_str).map(str::to_string),
                "model" => self.model = v.and_then(Json::as_str).map(str::to_string),
                "connected" => self.connected = v.and_then(Json::as_bool),
                "leader" => self.leader = v.and_then(Json::as_bool),
                "schema" => self.schema = v.and_then(Json::as_str).map(str::to_string),
                "cid" => self.cid = v.and_then(uuid_of),
                "index" => {
                    self.index = v.and_then(Json::as_i64).and_then(|i| u64::try_from(i).ok())
                }
                _ => {}
            }
        }
    }
}

impl Handshake {
    fn apply(&mut self, tu: &Json) {
        let Some(rows) = tu.get("Database").and_then(Json::as_object) else {
            return;
        };
        for (u, ru) in rows.iter() {
            let Some(u) = Uuid::parse(u) else { continue };
            let Some(ru) = ru.as_object() else { continue };
            for (kind, body) in ru.iter() {
                match kind {
                    "initial" | "insert" => {
                        let mut row = ServerRow::default();
                        if let Some(o) = body.as_object() {
                            row.update(o);
                        }
                        self.rows.insert(u, row);
                    }
                    "modify" => {
                        if let (Some(row), Some(o)) = (self.rows.get_mut(&u), body.as_object()) {
                            row.update(o);
                        }
                    }
                    "delete" => {
                        self.rows.remove(&u);
                    }
                    _ => {}
                }
            }
        }
    }

    fn row(&self, db: &str) -> Option<&ServerRow> {
        self.rows.values().find(|r| r.name.as_deref() == Some(db))
    }

    /// The C IDL's check of the database's row.
    fn check(&mut self, db: &str) -> Result<(), ServerProblem> {
        let leader_only = self.leader_only;
        let min_index = self.min_index;
        let row = self.row(db).ok_or(ServerProblem::NoDatabase)?;
        let connected = row.connected.unwrap_or(false);
        let has_schema = row.schema.is_some();
        match row.model.as_deref().unwrap_or("") {
            "clustered" => {
                let index = row.index.unwrap_or(0);
                if !has_schema {
                    Err(ServerProblem::NoSchema)
                } else if !connected {
                    Err(ServerProblem::NotConnected)
                } else if leader_only && !row.leader.unwrap_or(false) {
                    Err(ServerProblem::NotLeader)
                } else if index < min_index {
                    Err(ServerProblem::Stale { index, min_index })
                } else {
                    self.min_index = index;
                    Ok(())
                }
            }
            "relay" => {
                if !has_schema {
                    Err(ServerProblem::NoSchema)
                } else if !connected {
                    Err(ServerProblem::NotConnected)
                } else if leader_only {
                    Err(ServerProblem::NotLeader)
                } else {
                    Ok(())
                }
            }
            _ if !has_schema => Err(ServerProblem::NoSchema),
            _ => Ok(()),
        }
    }
}

impl Idl {
    /// Opts in to the `_Server` handshake (see the module docs). With
    /// `leader_only` (the C IDL's default) a clustered server must be the
    /// leader. Takes effect at the next [`Idl::connect`].
    pub fn enable_server_handshake(&mut self, leader_only: bool) {
        let hs = self.handshake.get_or_insert_with(Handshake::default);
        hs.leader_only = leader_only;
    }

    /// Changes leader-only mode (C `ovsdb_cs_set_leader_only`). Once the
    /// `_Server` row is known it is checked again at once; the returned
    /// events say whether the server became unusable.
    pub fn set_leader_only(&mut self, leader_only: bool) -> Vec<Event> {
        let Some(hs) = self.handshake.as_mut() else {
            return Vec::new();
        };
        hs.leader_only = leader_only;
        if hs.phase == Phase::Done && !hs.rows.is_empty() {
            return self.recheck_server();
        }
        Vec::new()
    }

    /// The `_Server` row of the database, once received.
    pub fn server_row(&self) -> Option<&ServerRow> {
        self.handshake.as_ref()?.row(&self.meta.name)
    }

    /// Why the current server cannot be used, if it cannot (cleared by the
    /// next [`Idl::connect`]).
    pub fn server_problem(&self) -> Option<&ServerProblem> {
        self.handshake.as_ref()?.problem.as_ref()
    }

    /// The highest clustered index seen (servers below it are stale).
    pub fn min_index(&self) -> u64 {
        self.handshake.as_ref().map(|h| h.min_index).unwrap_or(0)
    }

    /// Forgets the highest index seen (C `ovsdb_cs_reset_min_index`), e.g.
    /// after the cluster was recreated from a backup.
    pub fn reset_min_index(&mut self) {
        if let Some(hs) = self.handshake.as_mut() {
            hs.min_index = 0;
        }
    }

    /// With the handshake: the `get_schema` request for `_Server`.
    pub(super) fn handshake_start(&mut self) -> Option<Json> {
        self.handshake.as_ref()?;
        let (id, msg) = self.request("get_schema", vec![Json::from("_Server")]);
        let hs = self.handshake.as_mut()?;
        hs.phase = Phase::SchemaRequested;
        hs.req_id = Some(id);
        hs.rows.clear();
        hs.problem = None;
        self.state = State::Handshake;
        Some(msg)
    }

    pub(super) fn handshake_disconnect(&mut self) {
        if let Some(hs) = self.handshake.as_mut() {
            hs.phase = Phase::Idle;
            hs.req_id = None;
            hs.rows.clear();
        }
    }

    /// Handles a reply to a handshake request; `None` if it is not one.
    pub(super) fn handshake_reply(
        &mut self,
        id: &Json,
        error: Option<&Json>,
        result: &Json,
    ) -> Option<Vec<Event>> {
        let hs = self.handshake.as_mut()?;
        if hs.req_id.as_ref() != Some(id) {
            return None;
        }
        hs.req_id = None;
        match (hs.phase, error) {
            (Phase::SchemaRequested, None) => {
                let cols: Vec<Json> = match result
                    .get("tables")
                    .and_then(|t| t.get("Database"))
                    .and_then(|t| t.get("columns"))
                    .and_then(Json::as_object)
                {
                    Some(have) => SERVER_COLUMNS
                        .iter()
                        .filter(|c| have.contains_key(c))
                        .map(|c| Json::from(*c))
                        .collect(),
                    None => Vec::new(),
                };
                let mut reqs = Object::new();
                if !cols.is_empty() {
                    let mut r = Object::new();
                    r.insert("columns", Json::Array(cols));
                    reqs.insert("Database", Json::Array(vec![Json::Object(r)]));
                }
                let (rid, msg) = self.request(
                    "monitor_cond",
                    vec![
                        Json::from("_Server"),
                        server_monitor_id(),
                        Json::Object(reqs),
                    ],
                );
                if let Some(hs) = self.handshake.as_mut() {
                    hs.phase = Phase::MonitorRequested;
                    hs.req_id = Some(rid);
                }
                self.outgoing.push(msg);
                Some(Vec::new())
            }
            (Phase::MonitorRequested, None) => {
                hs.apply(result);
                hs.phase = Phase::Done;
                let name = self.meta.name.clone();
                let hs = self.handshake.as_mut()?;
                match hs.check(&name) {
                    Ok(()) => {
                        let req = self.data_monitor_request();
                        self.outgoing.push(req);
                        Some(Vec::new())
                    }
                    Err(p) => {
                        hs.problem = Some(p.clone());
                        self.state = State::Idle;
                        Some(vec![Event::ServerUnusable(p)])
                    }
                }
            }
            // No `_Server` (old server) or it cannot be monitored: use the
            // server directly.
            _ => {
                hs.phase = Phase::Done;
                let req = self.data_monitor_request();
                self.outgoing.push(req);
                Some(Vec::new())
            }
        }
    }

    /// Handles an update notification of the `_Server` monitor; `None` if
    /// it is not one.
    pub(super) fn handshake_update(&mut self, method: &str, params: &[Json]) -> Option<Vec<Event>> {
        let hs = self.handshake.as_mut()?;
        if method != "update2" || params.len() != 2 || params[0] != server_monitor_id() {
            return None;
        }
        hs.apply(&params[1]);
        if hs.phase != Phase::Done {
            return Some(Vec::new());
        }
        Some(self.recheck_server())
    }

    fn recheck_server(&mut self) -> Vec<Event> {
        let name = self.meta.name.clone();
        let Some(hs) = self.handshake.as_mut() else {
            return Vec::new();
        };
        match hs.check(&name) {
            Ok(()) => {
                let was_refused = hs.problem.take().is_some();
                // Still connected to a server refused at the handshake
                // (the caller did not reconnect) that is now usable: go on
                // to monitor the data.
                if was_refused && self.state == State::Idle {
                    let req = self.data_monitor_request();
                    self.outgoing.push(req);
                }
                Vec::new()
            }
            Err(p) => {
                let new = hs.problem.as_ref() != Some(&p);
                hs.problem = Some(p.clone());
                if new {
                    vec![Event::ServerUnusable(p)]
                } else {
                    Vec::new()
                }
            }
        }
    }
}
