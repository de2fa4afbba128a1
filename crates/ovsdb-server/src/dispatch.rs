//! The JSON-RPC face of the server: sessions ([`Server::connect`],
//! [`Server::disconnect`], [`Server::restart`], [`Server::set_hold`]),
//! [`Server::handle`] dispatching each method, locks (`lock`, `steal`,
//! `unlock`) and the shapes of replies, error replies and notifications.

use crate::triggers::TxnStep;
use crate::{Json, Object, Outbox, Server, Session, SessionId};
use ovsdb::error::Error;
use ovsdb::uuid::Uuid;
use std::collections::VecDeque;

/// An error as ovsdb-server puts it in a reply (`ovsdb_error_to_json`):
/// its tag, details, and the JSON it is about as `syntax` when it names
/// one (an RFC 7047 extension).
pub(crate) fn err_json(e: &Error) -> Json {
    let mut o = Object::new();
    o.insert("error", Json::from(e.tag));
    o.insert("details", Json::from(e.details.as_str()));
    if let Some(s) = &e.syntax {
        o.insert("syntax", Json::from(s.as_str()));
    }
    Json::Object(o)
}

pub(crate) fn reply(id: &Json, result: Json) -> Json {
    let mut o = Object::new();
    o.insert("id", id.clone());
    o.insert("result", result);
    o.insert("error", Json::Null);
    Json::Object(o)
}

/// An error reply carries no `result` member (as ovsdb-server sends it).
pub(crate) fn error_reply(id: &Json, error: Json) -> Json {
    let mut o = Object::new();
    o.insert("id", id.clone());
    o.insert("error", error);
    Json::Object(o)
}

pub(crate) fn notification(method: &str, params: Vec<Json>) -> Json {
    let mut o = Object::new();
    o.insert("id", Json::Null);
    o.insert("method", Json::from(method));
    o.insert("params", Json::Array(params));
    Json::Object(o)
}

pub(crate) fn uuid_json(u: Uuid) -> Json {
    Json::Array(vec![Json::from("uuid"), Json::String(u.to_text())])
}

impl Server {
    pub fn connect(&mut self) -> SessionId {
        let id = self.next_session;
        self.next_session += 1;
        self.sessions.insert(id, Session::default());
        if let Some(sd) = self.server_db.as_mut() {
            sd.db.sessions.insert(id, Session::default());
        }
        id
    }

    /// Drops a session; locks it held pass to the next waiting session,
    /// which is told with a `locked` notification (returned).
    pub fn disconnect(&mut self, s: SessionId) -> Vec<(SessionId, Json)> {
        self.sessions.remove(&s);
        // Its waiting transactions go without a reply (as ovsdb-server).
        self.triggers.retain(|t| t.session != s);
        if let Some(sd) = self.server_db.as_mut() {
            sd.db.disconnect(s);
        }
        for q in self.lock_waiters.values_mut() {
            q.retain(|w| *w != s);
        }
        let held: Vec<String> = self
            .lock_owners
            .iter()
            .filter(|(_, o)| **o == s)
            .map(|(n, _)| n.clone())
            .collect();
        let mut out = Vec::new();
        for name in held {
            out.extend(self.release_lock(&name));
        }
        out
    }

    /// Gives lock `name` to the next waiter, if any.
    fn release_lock(&mut self, name: &str) -> Vec<(SessionId, Json)> {
        self.lock_owners.remove(name);
        let next = self
            .lock_waiters
            .get_mut(name)
            .and_then(VecDeque::pop_front);
        match next {
            Some(w) => {
                self.lock_owners.insert(name.to_string(), w);
                if let Some(sess) = self.sessions.get_mut(&w) {
                    sess.locks.insert(name.to_string());
                }
                vec![(w, notification("locked", vec![Json::from(name)]))]
            }
            None => Vec::new(),
        }
    }

    /// Simulates a server restart: every session is dropped; data and (for
    /// clustered databases, rebuilt from the log) history are kept.
    pub fn restart(&mut self) {
        self.sessions.clear();
        self.lock_owners.clear();
        self.lock_waiters.clear();
        self.triggers.clear();
        if let Some(sd) = self.server_db.as_mut() {
            sd.db.restart();
        }
    }

    /// While held, a session's monitors accumulate changes (coalescing, as
    /// when the client has an output backlog) until [`Server::flush`].
    pub fn set_hold(&mut self, s: SessionId, hold: bool) {
        if let Some(sess) = self.sessions.get_mut(&s) {
            sess.hold = hold;
        }
        if let Some(sd) = self.server_db.as_mut() {
            sd.db.set_hold(s, hold);
        }
    }

    /// Handles one JSON-RPC message from session `s`; returns the messages
    /// to deliver, in order, with their destination sessions.
    pub fn handle(&mut self, s: SessionId, msg: &Json) -> Vec<(SessionId, Json)> {
        let mut out = Vec::new();
        let Some(o) = msg.as_object() else {
            return out;
        };
        let id = o.get("id").cloned().unwrap_or(Json::Null);
        let Some(method) = o.get("method").and_then(Json::as_str) else {
            return out; // replies (e.g. to our echo) are ignored
        };
        let empty = Vec::new();
        let params: &[Json] = o.get("params").and_then(Json::as_array).unwrap_or(&empty);
        let cond_method = matches!(
            method,
            "monitor_cond" | "monitor_cond_since" | "monitor_cond_change"
        );
        let method = if cond_method && self.opts.disable_monitor_cond {
            "disabled"
        } else {
            method
        };
        if let Some(out) = self.route_server_db(s, &id, method, params, msg) {
            return out;
        }
        // A transaction that waits gets no reply now; messages caused by
        // a reply (re-run triggers) go after it.
        let mut no_reply = false;
        let mut after: Outbox = Vec::new();
        let r: std::result::Result<Json, Json> = match method {
            "echo" => Ok(Json::Array(params.to_vec())),
            "list_dbs" => Ok(Json::Array(vec![Json::from(self.meta.name.as_str())])),
            "get_schema" => {
                if params.first().and_then(Json::as_str) == Some(self.meta.name.as_str()) {
                    Ok(self.meta.json.clone())
                } else {
                    Err(Json::from("unknown database"))
                }
            }
            "transact" => match self.session_transact(s, &id, params) {
                TxnStep::Reply {
                    before,
                    result,
                    after: a,
                } => {
                    out.extend(before);
                    after = a;
                    result
                }
                TxnStep::Pending => {
                    no_reply = true;
                    Ok(Json::Null)
                }
            },
            // RFC 7047 `cancel` is a notification; as a request ovsdb-server
            // answers "unknown method" (below).
            "cancel" if id.is_null() => {
                out.extend(self.cancel_trigger(s, params));
                Ok(Json::Null)
            }
            "set_db_change_aware" => match params {
                [Json::Bool(b)] => {
                    if let Some(sess) = self.sessions.get_mut(&s) {
                        sess.db_change_aware = *b;
                    }
                    Ok(Json::Object(Object::new()))
                }
                _ => Err(err_json(&Error::syntax(
                    "set_db_change_aware: true or false parameter expected",
                ))),
            },
            "monitor" | "monitor_cond" | "monitor_cond_since" => {
                let version = match method {
                    "monitor" => 1,
                    "monitor_cond" => 2,
                    _ => 3,
                };
                self.monitor(s, version, params)
            }
            "monitor_cond_change" => match self.monitor_cond_change(s, params) {
                Ok((upd, res)) => {
                    out.extend(upd.into_iter().map(|m| (s, m)));
                    Ok(res)
                }
                Err(e) => Err(e),
            },
            "monitor_cancel" => {
                let mid = params.first().cloned().unwrap_or(Json::Null);
                match self.sessions.get_mut(&s) {
                    Some(sess) => {
                        let before = sess.monitors.len();
                        sess.monitors.retain(|m| m.id != mid);
                        if sess.monitors.len() < before {
                            Ok(Json::Object(Object::new()))
                        } else {
                            Err(Json::from("unknown monitor"))
                        }
                    }
                    None => Err(Json::from("unknown monitor")),
                }
            }
            "lock" | "steal" => {
                let name = params
                    .first()
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .to_string();
                let owner = self.lock_owners.get(&name).copied();
                let got = match owner {
                    None => true,
                    Some(o) if o == s => true,
                    Some(o) if method == "steal" => {
                        if let Some(sess) = self.sessions.get_mut(&o) {
                            sess.locks.remove(&name);
                        }
                        out.push((o, notification("stolen", vec![Json::from(name.as_str())])));
                        true
                    }
                    _ => false,
                };
                if got {
                    self.lock_owners.insert(name.clone(), s);
                    if let Some(sess) = self.sessions.get_mut(&s) {
                        sess.locks.insert(name.clone());
                    }
                } else {
                    let q = self.lock_waiters.entry(name.clone()).or_default();
                    if !q.contains(&s) {
                        q.push_back(s);
                    }
                }
                let mut r = Object::new();
                r.insert("locked", Json::Bool(got));
                Ok(Json::Object(r))
            }
            "unlock" => {
                let name = params
                    .first()
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .to_string();
                if let Some(sess) = self.sessions.get_mut(&s) {
                    sess.locks.remove(&name);
                }
                if let Some(q) = self.lock_waiters.get_mut(&name) {
                    q.retain(|w| *w != s);
                }
                if self.lock_owners.get(&name) == Some(&s) {
                    out.extend(self.release_lock(&name));
                }
                Ok(Json::Object(Object::new()))
            }
            _ => Err(Json::from("unknown method")),
        };
        if !id.is_null() && !no_reply {
            out.push((
                s,
                match r {
                    Ok(res) => reply(&id, res),
                    Err(e) => error_reply(&id, e),
                },
            ));
        }
        out.extend(after);
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::testkit::{json, server, shown};
    use crate::ServerOptions;

    #[test]
    fn a_lock_passes_to_the_next_waiter_on_disconnect_and_can_be_stolen() {
        let mut srv = server(ServerOptions::default());
        let (a, b, c) = (srv.connect(), srv.connect(), srv.connect());
        let lock =
            |id: u64, m: &str| json(&format!(r#"{{"id":{id},"method":"{m}","params":["L"]}}"#));
        assert_eq!(
            shown(&srv.handle(a, &lock(1, "lock"))),
            [(
                a,
                r#"{"id":1,"result":{"locked":true},"error":null}"#.to_string()
            )]
        );
        assert_eq!(
            shown(&srv.handle(b, &lock(2, "lock"))),
            [(
                b,
                r#"{"id":2,"result":{"locked":false},"error":null}"#.to_string()
            )]
        );
        // `a` goes: the waiter `b` is told it has the lock.
        assert_eq!(
            shown(&srv.disconnect(a)),
            [(
                b,
                r#"{"id":null,"method":"locked","params":["L"]}"#.to_string()
            )]
        );
        // `c` steals it: `b` is told first, then `c` gets its reply.
        assert_eq!(
            shown(&srv.handle(c, &lock(3, "steal"))),
            [
                (
                    b,
                    r#"{"id":null,"method":"stolen","params":["L"]}"#.to_string()
                ),
                (
                    c,
                    r#"{"id":3,"result":{"locked":true},"error":null}"#.to_string()
                ),
            ]
        );
    }

    #[test]
    fn replies_errors_and_notifications_have_ovsdb_servers_shapes() {
        let mut srv = server(ServerOptions::default());
        let s = srv.connect();
        let echo = json(r#"{"id":"e","method":"echo","params":[1,"x"]}"#);
        assert_eq!(
            shown(&srv.handle(s, &echo)),
            [(s, r#"{"id":"e","result":[1,"x"],"error":null}"#.to_string())]
        );
        // An error reply has no `result`.
        let bad = json(r#"{"id":7,"method":"frobnicate","params":[]}"#);
        assert_eq!(
            shown(&srv.handle(s, &bad)),
            [(s, r#"{"id":7,"error":"unknown method"}"#.to_string())]
        );
        let schema = json(r#"{"id":8,"method":"get_schema","params":["nope"]}"#);
        assert_eq!(
            shown(&srv.handle(s, &schema)),
            [(s, r#"{"id":8,"error":"unknown database"}"#.to_string())]
        );
        // Notifications (no id) and replies to us get no answer.
        let note = json(r#"{"id":null,"method":"echo","params":[]}"#);
        assert!(srv.handle(s, &note).is_empty());
        let answer = json(r#"{"id":3,"result":[],"error":null}"#);
        assert!(srv.handle(s, &answer).is_empty());
    }
}
