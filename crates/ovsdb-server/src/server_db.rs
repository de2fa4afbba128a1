//! The optional `_Server` database of the server model.
//!
//! ovsdb-server serves, next to the user's databases, a read-only database
//! named `_Server` whose `Database` table has one row per database it
//! serves (its own included): `name`, `model` (`standalone`, `clustered`
//! or `relay`), `connected` (to the cluster), `leader`, `schema` (the
//! database schema as JSON text, keys sorted), and for clustered databases
//! `cid` (cluster id), `sid` (server id) and `index` (the last applied log
//! index). The C IDL reads this row before it monitors a clustered
//! database, to avoid followers (when it wants the leader), disconnected
//! members and members with older data than it has seen.
//!
//! Here the row of the served database is set by the caller
//! ([`Server::enable_server_db`], [`Server::set_database_status`]), e.g.
//! by a cluster simulator for each member. `_Server` answers `get_schema`,
//! `list_dbs`, `monitor`, `monitor_cond`, `monitor_cond_since` (with
//! `monitor_cond_change` and `monitor_cancel`) and read-only `transact`;
//! write operations fail with ovsdb-server's `not allowed` error.
//! Checked against ovsdb-server 3.1 by `tests/server_db_real_server.rs`.

use crate::dispatch::{error_reply, reply};
use crate::meta::DbMeta;
use crate::triggers::WaitMode;
use crate::{Json, Object, Outbox, Server, ServerOptions, Session, SessionId};
use ovsdb::error::Error;
use ovsdb::schema::DatabaseSchema;
use ovsdb::uuid::Uuid;

/// The `_Server` schema exactly as ovsdb-server 3.1 returns it from
/// `get_schema`.
pub const SERVER_SCHEMA: &str = r#"{"cksum":"3009684573 744","name":"_Server","version":"1.2.0","tables":{"Database":{"columns":{"name":{"type":"string"},"model":{"type":{"key":{"type":"string","enum":["set",["clustered","relay","standalone"]]}}},"connected":{"type":"boolean"},"leader":{"type":"boolean"},"schema":{"type":{"min":0,"key":"string"}},"sid":{"type":{"min":0,"key":"uuid"}},"cid":{"type":{"min":0,"key":"uuid"}},"index":{"type":{"min":0,"key":"integer"}}}}}}"#;

/// How a database is stored (`_Server` column `model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbModel {
    Standalone,
    Clustered,
    Relay,
}

impl DbModel {
    pub fn as_str(self) -> &'static str {
        match self {
            DbModel::Standalone => "standalone",
            DbModel::Clustered => "clustered",
            DbModel::Relay => "relay",
        }
    }
}

/// What `_Server` says about the served database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatabaseStatus {
    pub model: DbModel,
    /// Connected to its cluster (or relay source); always true for a
    /// standalone database.
    pub connected: bool,
    /// This server is the cluster leader (true for standalone, false for
    /// relay, as ovsdb-server reports them).
    pub leader: bool,
    /// Whether the schema is known (false while a new member has not yet
    /// joined its cluster: `schema` is then empty).
    pub has_schema: bool,
    pub cid: Option<Uuid>,
    pub sid: Option<Uuid>,
    /// Last applied Raft index (absent when 0 or standalone).
    pub index: Option<u64>,
}

impl DatabaseStatus {
    /// A standalone database, as ovsdb-server reports it.
    pub fn standalone() -> DatabaseStatus {
        DatabaseStatus {
            model: DbModel::Standalone,
            connected: true,
            leader: true,
            has_schema: true,
            cid: None,
            sid: None,
            index: None,
        }
    }

    /// A member of a cluster.
    pub fn clustered(cid: Uuid, sid: Uuid, leader: bool, connected: bool, index: u64) -> Self {
        DatabaseStatus {
            model: DbModel::Clustered,
            connected,
            leader,
            has_schema: true,
            cid: Some(cid),
            sid: Some(sid),
            index: (index != 0).then_some(index),
        }
    }
}

/// The `_Server` database: a server model of its own, sharing the outer
/// server's session ids.
#[derive(Debug, Clone)]
pub(super) struct ServerDb {
    pub(super) db: Server,
    status: DatabaseStatus,
    /// UUID of the served database's row.
    row: Uuid,
    /// The served database's schema as the `schema` column holds it.
    schema_text: String,
}

fn set_or_empty(v: Option<Json>) -> Json {
    v.unwrap_or_else(|| Json::Array(vec![Json::from("set"), Json::Array(Vec::new())]))
}

fn uuid_atom(u: Uuid) -> Json {
    Json::Array(vec![Json::from("uuid"), Json::String(u.to_text())])
}

/// The columns of a `Database` row.
fn row_json(name: &str, st: &DatabaseStatus, schema: Option<&str>) -> Json {
    let mut o = Object::new();
    o.insert("name", Json::from(name));
    o.insert("model", Json::from(st.model.as_str()));
    o.insert("connected", Json::Bool(st.connected));
    o.insert(
        "leader",
        Json::Bool(st.leader && st.model != DbModel::Relay),
    );
    o.insert(
        "schema",
        set_or_empty(schema.filter(|_| st.has_schema).map(Json::from)),
    );
    o.insert("cid", set_or_empty(st.cid.map(uuid_atom)));
    o.insert("sid", set_or_empty(st.sid.map(uuid_atom)));
    o.insert(
        "index",
        set_or_empty(
            st.index
                .filter(|i| *i != 0)
                .map(|i| Json::Integer(i64::try_from(i).unwrap_or(i64::MAX))),
        ),
    );
    Json::Object(o)
}

fn op(members: Vec<(&str, Json)>) -> Json {
    let mut o = Object::new();
    for (k, v) in members {
        o.insert(k, v);
    }
    Json::Object(o)
}

/// The `schema` column text of a database: the normalized schema with
/// keys sorted, compact. Clustered databases have no ephemeral columns
/// (ovsdb-tool makes them persistent when it creates the cluster).
fn schema_column(meta: &DbMeta, clustered: bool) -> String {
    match DatabaseSchema::from_json(&meta.json) {
        Ok(mut s) => {
            if clustered {
                for t in &mut s.tables {
                    for c in &mut t.columns {
                        c.persistent = true;
                    }
                }
            }
            s.to_json().sorted_recursive().to_string_compact()
        }
        Err(_) => meta.json.sorted_recursive().to_string_compact(),
    }
}

const WRITE_OPS: [&str; 4] = ["insert", "update", "mutate", "delete"];

impl Server {
    /// Adds the `_Server` database, describing this server's database with
    /// `status`. Idempotent: a second call only sets the status (and
    /// returns the monitors' updates, as [`Server::set_database_status`]).
    pub fn enable_server_db(&mut self, status: DatabaseStatus) -> Outbox {
        if self.server_db.is_some() {
            return self.set_database_status(status);
        }
        let meta = match DbMeta::from_text(SERVER_SCHEMA) {
            Ok(m) => m,
            Err(_) => return Vec::new(), // a constant: cannot happen
        };
        let mut db = Server::new(
            meta,
            ServerOptions {
                seed: self.opts.seed ^ 0x5e5e_5e5e_5e5e_5e5e,
                ..ServerOptions::default()
            },
        );
        for s in self.sessions.keys() {
            db.sessions.insert(*s, Session::default());
        }
        let own_schema = db.meta.json.sorted_recursive().to_string_compact();
        let schema_text = schema_column(&self.meta, status.model == DbModel::Clustered);
        let ops = [
            op(vec![
                ("op", Json::from("insert")),
                ("table", Json::from("Database")),
                (
                    "row",
                    row_json("_Server", &DatabaseStatus::standalone(), Some(&own_schema)),
                ),
            ]),
            op(vec![
                ("op", Json::from("insert")),
                ("table", Json::from("Database")),
                (
                    "row",
                    row_json(&self.meta.name, &status, Some(&schema_text)),
                ),
            ]),
        ];
        let (outcome, _) = db.transact(&ops);
        let row = outcome
            .result
            .as_array()
            .and_then(|r| r.get(1))
            .and_then(|r| r.get("uuid"))
            .and_then(Json::as_array)
            .and_then(|a| a.get(1))
            .and_then(Json::as_str)
            .and_then(Uuid::parse)
            .unwrap_or(Uuid::NIL);
        self.server_db = Some(Box::new(ServerDb {
            db,
            status,
            row,
            schema_text,
        }));
        Vec::new()
    }

    /// Changes what `_Server` says about the served database; returns the
    /// updates for sessions monitoring it. Nothing without `_Server`.
    pub fn set_database_status(&mut self, status: DatabaseStatus) -> Outbox {
        let name = self.meta.name.clone();
        let Some(sd) = self.server_db.as_mut() else {
            return Vec::new();
        };
        sd.status = status;
        let upd = op(vec![
            ("op", Json::from("update")),
            ("table", Json::from("Database")),
            (
                "where",
                Json::Array(vec![Json::Array(vec![
                    Json::from("_uuid"),
                    Json::from("=="),
                    uuid_atom(sd.row),
                ])]),
            ),
            ("row", row_json(&name, &status, Some(&sd.schema_text))),
        ]);
        sd.db.transact(&[upd]).1
    }

    /// The status `_Server` reports, if it is enabled.
    pub fn database_status(&self) -> Option<DatabaseStatus> {
        self.server_db.as_ref().map(|sd| sd.status)
    }

    /// The `_Server` database itself (to inspect or dump), if enabled.
    pub fn server_db(&self) -> Option<&Server> {
        self.server_db.as_ref().map(|sd| &sd.db)
    }

    /// Handles `msg` if it is meant for `_Server` (or is `list_dbs`, which
    /// then names both databases).
    pub(super) fn route_server_db(
        &mut self,
        s: SessionId,
        id: &Json,
        method: &str,
        params: &[Json],
        msg: &Json,
    ) -> Option<Outbox> {
        let sd = self.server_db.as_ref()?;
        let server_name = sd.db.meta.name.clone();
        let db_param = params.first().and_then(Json::as_str);
        let for_server = db_param == Some(server_name.as_str());
        let for_own = db_param == Some(self.meta.name.as_str());
        // Monitor ids are unique per session across databases.
        let mid = if method == "monitor_cond_change" || method == "monitor_cancel" {
            params.first()
        } else {
            params.get(1)
        };
        let in_own = has_monitor(self, s, mid);
        let in_server = has_monitor(&sd.db, s, mid);
        let answer = |r: std::result::Result<Json, Json>| -> Outbox {
            if id.is_null() {
                Vec::new()
            } else {
                vec![(
                    s,
                    match r {
                        Ok(x) => reply(id, x),
                        Err(e) => error_reply(id, e),
                    },
                )]
            }
        };
        let is_monitor = matches!(method, "monitor" | "monitor_cond" | "monitor_cond_since");
        if method == "list_dbs" {
            return Some(answer(Ok(Json::Array(vec![
                Json::from(self.meta.name.as_str()),
                Json::from(server_name.as_str()),
            ]))));
        }
        if is_monitor && ((for_server && in_own) || (for_own && in_server)) {
            return Some(answer(Err(Json::from("duplicate monitor ID"))));
        }
        let sd = self.server_db.as_mut()?;
        match method {
            "transact" if for_server => {
                let ops = &params[1..];
                let outcome = sd.db.execute(Some(s), ops, false, WaitMode::NoWait);
                Some(answer(Ok(read_only(ops, outcome.result))))
            }
            "get_schema" if for_server => Some(sd.db.handle(s, msg)),
            _ if is_monitor && for_server => Some(sd.db.handle(s, msg)),
            "monitor_cond_change" | "monitor_cancel" if in_server && !in_own => {
                Some(sd.db.handle(s, msg))
            }
            _ => None,
        }
    }
}

fn has_monitor(srv: &Server, s: SessionId, mid: Option<&Json>) -> bool {
    mid.is_some_and(|mid| {
        srv.sessions
            .get(&s)
            .is_some_and(|x| x.monitors.iter().any(|m| m.id == *mid))
    })
}

/// `_Server` is read-only: the first write operation that executed
/// without error fails with `not allowed` (as ovsdb-server checks it after
/// executing each operation), and later results are `null`.
fn read_only(ops: &[Json], result: Json) -> Json {
    let Json::Array(mut results) = result else {
        return result;
    };
    for (i, o) in ops.iter().enumerate() {
        let failed = results.get(i).is_none_or(|r| r.get("error").is_some());
        if failed {
            break;
        }
        let name = o.get("op").and_then(Json::as_str).unwrap_or("");
        if WRITE_OPS.contains(&name) {
            let e = Error::new(
                "not allowed",
                format!("{name} operation not allowed on table in reserved database _Server"),
            );
            let mut eo = Object::new();
            eo.insert("error", Json::from(e.tag));
            eo.insert("details", Json::from(e.details.as_str()));
            results.truncate(i);
            results.push(Json::Object(eo));
            while results.len() < ops.len() {
                results.push(Json::Null);
            }
            break;
        }
    }
    Json::Array(results)
}
