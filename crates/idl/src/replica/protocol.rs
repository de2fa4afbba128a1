//! The JSON-RPC side: request ids, monitor requests (`monitor`,
//! `monitor_cond`, `monitor_cond_since`) and their fallbacks, connecting
//! and disconnecting, conditions (`monitor_cond_change`), locks, and
//! [`Idl::receive`] dispatching replies and notifications (monitor
//! replies, updates, transaction replies).

use super::{id_key, Event, Idl, IdlError, PendingTxn, State, TxnStatus, UsageError, MONITOR};
use ovsdb::json::{Json, Object};
use ovsdb::uuid::Uuid;
use ovsdb_server::cond::{Clause, Condition};

impl Idl {
    fn next_request_id(&mut self) -> Json {
        let id = Json::Integer(self.next_id);
        self.next_id += 1;
        id
    }

    pub(super) fn request(&mut self, method: &str, params: Vec<Json>) -> (Json, Json) {
        let id = self.next_request_id();
        let mut o = Object::new();
        o.insert("method", Json::from(method));
        o.insert("params", Json::Array(params));
        o.insert("id", id.clone());
        (id, Json::Object(o))
    }

    fn monitor_id(&self) -> Json {
        Json::Array(vec![
            Json::from("monid"),
            Json::from(self.meta.name.as_str()),
        ])
    }

    fn cond_where(c: &Option<Condition>) -> Option<Json> {
        match c {
            None => None,
            Some(c) if c.clauses.is_empty() => Some(Json::Array(vec![Json::Bool(false)])),
            Some(c) => Some(c.to_json()),
        }
    }

    /// The monitor request the replica would send now.
    pub fn monitor_requests(&mut self, use_latest: bool) -> Json {
        let mut reqs = Object::new();
        for (ti, t) in self.meta.tables.iter().enumerate() {
            let cols: Vec<Json> = t
                .columns
                .iter()
                .enumerate()
                .filter(|(ci, _)| self.modes[ti][*ci] & MONITOR != 0)
                .map(|(_, c)| Json::from(c.name.as_str()))
                .collect();
            if cols.is_empty() && !self.needed[ti] {
                continue;
            }
            let mut r = Object::new();
            r.insert("columns", Json::Array(cols));
            if self.monitor_version >= 2 {
                let slots = &mut self.cond[ti];
                let c = if use_latest {
                    let latest = slots
                        .new
                        .take()
                        .or_else(|| slots.req.take())
                        .unwrap_or_else(|| slots.ack.clone());
                    slots.req = Some(latest.clone());
                    latest
                } else {
                    slots.ack.clone()
                };
                if let Some(w) = Self::cond_where(&c) {
                    r.insert("where", w);
                }
            }
            reqs.insert(t.name.clone(), Json::Object(r));
        }
        Json::Object(reqs)
    }

    /// Starts (or restarts after a reconnect) monitoring: returns the
    /// monitor request to send. With a known last-txn-id the acknowledged
    /// conditions are used, pending ones follow as `monitor_cond_change`.
    /// With [`Idl::enable_server_handshake`] it returns the first request
    /// of the `_Server` handshake instead; the monitor request follows
    /// (through [`Idl::take_outgoing`]) once the server passes the check.
    pub fn connect(&mut self) -> Json {
        if let Some(first) = self.handshake_start() {
            return first;
        }
        self.data_monitor_request()
    }

    /// The monitor request of the replicated database.
    pub(super) fn data_monitor_request(&mut self) -> Json {
        // Outstanding transactions are lost with the old connection.
        self.state = State::MonitorRequested;
        let use_latest = self.last_id.is_nil() || self.monitor_version < 3;
        let reqs = self.monitor_requests(use_latest);
        let mut params = vec![Json::from(self.meta.name.as_str()), self.monitor_id(), reqs];
        let method = match self.monitor_version {
            1 => "monitor",
            2 => "monitor_cond",
            _ => {
                params.push(Json::String(self.last_id.to_string()));
                "monitor_cond_since"
            }
        };
        let (id, msg) = self.request(method, params);
        self.monitor_req_id = Some(id);
        msg
    }

    /// The connection dropped: in-flight transactions complete with
    /// TRY_AGAIN; a condition change in flight invalidates the last id.
    pub fn disconnect(&mut self) -> Vec<Event> {
        let mut ev = Vec::new();
        let mut ids: Vec<String> = self.pending_txns.keys().cloned().collect();
        ovsdb::order::sort(&mut ids);
        for k in ids {
            self.pending_txns.remove(&k);
            ev.push(Event::TxnDone {
                id: ovsdb::json::parse_value(k.as_bytes()).unwrap_or(Json::Null),
                status: TxnStatus::TryAgain,
                inserted: Vec::new(),
                increment: None,
                error: None,
            });
        }
        if self.cond_req_id.take().is_some() {
            self.last_id = Uuid::NIL;
            for s in &mut self.cond {
                if let Some(r) = s.req.take() {
                    if s.new.is_none() {
                        s.new = Some(r);
                    }
                }
            }
        }
        self.state = State::Idle;
        self.handshake_disconnect();
        self.monitor_req_id = None;
        self.lock_req_id = None;
        self.has_lock = false;
        self.outgoing.clear();
        ev
    }

    pub fn is_monitoring(&self) -> bool {
        self.state == State::Monitoring
    }

    /// Messages queued for the server (condition changes).
    pub fn take_outgoing(&mut self) -> Vec<Json> {
        std::mem::take(&mut self.outgoing)
    }

    /// Sets the condition of a table. `clauses` uses the C IDL's meaning:
    /// a `true` clause makes the condition always true, `false` clauses
    /// are dropped, no clauses matches nothing. Returns the condition
    /// seqno at which the replica will reflect it, or
    /// [`UsageError::UnknownTable`] (nothing changes then).
    pub fn set_condition(&mut self, table: &str, clauses: Vec<Clause>) -> Result<u64, UsageError> {
        let t = self
            .meta
            .table(table)
            .ok_or_else(|| UsageError::UnknownTable(table.to_string()))?;
        let c: Option<Condition> = if clauses.contains(&Clause::Const(true)) {
            None
        } else {
            Some(Condition {
                clauses: clauses
                    .into_iter()
                    .filter(|c| *c != Clause::Const(false))
                    .collect(),
            })
        };
        let slots = &self.cond[t];
        let latest = slots
            .new
            .clone()
            .or_else(|| slots.req.clone())
            .unwrap_or_else(|| slots.ack.clone());
        if latest != c {
            self.cond[t].new = Some(c);
            self.send_cond_change();
        }
        let any_new = self.cond.iter().any(|s| s.new.is_some());
        let any_req = self.cond_req_id.is_some()
            || (self.state != State::Monitoring && self.cond.iter().any(|s| s.req.is_some()));
        Ok(self.cond_seqno + u64::from(any_req) + u64::from(any_new))
    }

    fn send_cond_change(&mut self) {
        if self.state != State::Monitoring || self.cond_req_id.is_some() || self.monitor_version < 2
        {
            return;
        }
        let mut reqs = Object::new();
        for ti in 0..self.cond.len() {
            if let Some(c) = self.cond[ti].new.take() {
                let mut r = Object::new();
                r.insert(
                    "where",
                    Self::cond_where(&c).unwrap_or_else(|| Json::Array(vec![Json::Bool(true)])),
                );
                reqs.insert(
                    self.meta.tables[ti].name.clone(),
                    Json::Array(vec![Json::Object(r)]),
                );
                self.cond[ti].req = Some(c);
            }
        }
        if reqs.is_empty() {
            return;
        }
        let mid = self.monitor_id();
        let (id, msg) = self.request(
            "monitor_cond_change",
            vec![mid.clone(), mid, Json::Object(reqs)],
        );
        self.cond_req_id = Some(id);
        self.outgoing.push(msg);
    }

    /// Consumes one JSON-RPC message from the server.
    pub fn receive(&mut self, msg: &Json) -> Result<Vec<Event>, IdlError> {
        let mut ev = Vec::new();
        let Some(o) = msg.as_object() else {
            return Err(IdlError("message is not an object".into()));
        };
        if let Some(method) = o.get("method").and_then(Json::as_str) {
            let empty = Vec::new();
            let params = o.get("params").and_then(Json::as_array).unwrap_or(&empty);
            if let Some(e) = self.handshake_update(method, params) {
                return Ok(e);
            }
            let mid = self.monitor_id();
            match method {
                "update" | "update2" if params.len() == 2 && params[0] == mid => {
                    let v = if method == "update" { 1 } else { 2 };
                    if self.apply_table_updates(v, &params[1], false)? {
                        ev.push(Event::Updated);
                    }
                }
                "locked" | "stolen"
                    if params.first().and_then(Json::as_str) == self.lock.as_deref()
                        && self.lock.is_some() =>
                {
                    self.has_lock = method == "locked";
                    ev.push(Event::Lock {
                        held: self.has_lock,
                    });
                }
                "update3" if params.len() == 3 && params[0] == mid => {
                    if self.apply_table_updates(3, &params[2], false)? {
                        ev.push(Event::Updated);
                    }
                    if let Some(u) = params[1].as_str().and_then(Uuid::parse) {
                        self.last_id = u;
                    }
                }
                _ => {}
            }
            return Ok(ev);
        }
        let id = o.get("id").cloned().unwrap_or(Json::Null);
        let error = o.get("error").filter(|e| !e.is_null()).cloned();
        let result = o.get("result").cloned().unwrap_or(Json::Null);
        if let Some(e) = self.handshake_reply(&id, error.as_ref(), &result) {
            return Ok(e);
        }
        if self.monitor_req_id.as_ref() == Some(&id) {
            self.monitor_req_id = None;
            if let Some(e) = error {
                // Older or restricted servers: fall back monitor_cond_since
                // → monitor_cond → monitor, as the C client does.
                if self.monitor_version > 1 {
                    self.monitor_version -= 1;
                    let req = self.data_monitor_request();
                    self.outgoing.push(req);
                    return Ok(ev);
                }
                return Err(IdlError(format!("monitor request failed: {e}")));
            }
            let (found, tu) = if self.monitor_version == 3 {
                let a = result
                    .as_array()
                    .filter(|a| a.len() == 3)
                    .ok_or_else(|| IdlError("bad monitor_cond_since reply".into()))?;
                let found = a[0].as_bool().unwrap_or(false);
                if let Some(u) = a[1].as_str().and_then(Uuid::parse) {
                    self.last_id = u;
                }
                (found, a[2].clone())
            } else {
                (false, result)
            };
            // The historical bump for monitor replies.
            self.seqno += 1;
            self.apply_table_updates(self.monitor_version.min(2), &tu, !found)?;
            // Conditions sent in the request are now acknowledged.
            let mut acked = false;
            for s in &mut self.cond {
                if let Some(r) = s.req.take() {
                    s.ack = r;
                    acked = true;
                }
            }
            if acked {
                self.cond_seqno += 1;
            }
            self.state = State::Monitoring;
            ev.push(Event::Monitoring { found });
            ev.push(Event::Updated);
            self.send_cond_change();
            if self.lock.is_some() && !self.has_lock && self.lock_req_id.is_none() {
                self.request_lock();
            }
            return Ok(ev);
        }
        if self.lock_req_id.as_ref() == Some(&id) {
            self.lock_req_id = None;
            self.has_lock = result.get("locked").and_then(Json::as_bool) == Some(true);
            ev.push(Event::Lock {
                held: self.has_lock,
            });
            return Ok(ev);
        }
        if self.cond_req_id.as_ref() == Some(&id) {
            self.cond_req_id = None;
            if let Some(e) = error {
                return Err(IdlError(format!("monitor_cond_change failed: {e}")));
            }
            for s in &mut self.cond {
                if let Some(r) = s.req.take() {
                    s.ack = r;
                }
            }
            self.cond_seqno += 1;
            ev.push(Event::CondAcked {
                cond_seqno: self.cond_seqno,
            });
            self.send_cond_change();
            return Ok(ev);
        }
        if let Some(p) = self.pending_txns.remove(&id_key(&id)) {
            ev.push(self.txn_reply(id, p, error, &result));
        }
        Ok(ev)
    }

    fn txn_reply(&self, id: Json, p: PendingTxn, error: Option<Json>, result: &Json) -> Event {
        if let Some(e) = error {
            let status = if e.as_str() == Some("canceled") {
                TxnStatus::TryAgain
            } else {
                TxnStatus::Error
            };
            return Event::TxnDone {
                id,
                status,
                inserted: Vec::new(),
                increment: None,
                error: Some(e.to_string_compact()),
            };
        }
        let empty = Vec::new();
        let results = result.as_array().unwrap_or(&empty);
        let mut hard = false;
        let mut soft = false;
        let mut not_locked = false;
        let mut first_error = None;
        for r in results {
            if let Some(e) = r.get("error").and_then(Json::as_str) {
                if first_error.is_none() {
                    first_error = Some(r.to_string_compact());
                }
                match e {
                    "timed out" => soft = true,
                    "not owner" => not_locked = true,
                    "aborted" if p.dry_run => {}
                    _ => hard = true,
                }
            } else if r.is_null() {
                soft = true;
            }
        }
        let status = if hard {
            TxnStatus::Error
        } else if not_locked {
            TxnStatus::NotLocked
        } else if soft {
            TxnStatus::TryAgain
        } else {
            TxnStatus::Success
        };
        let mut inserted = Vec::new();
        let mut increment = None;
        if status == TxnStatus::Success {
            for (pos, prov) in &p.insert_ops {
                if let Some(u) = results
                    .get(*pos)
                    .and_then(|r| r.get("uuid"))
                    .and_then(Json::as_array)
                    .and_then(|a| a.get(1))
                    .and_then(Json::as_str)
                    .and_then(Uuid::parse)
                {
                    inserted.push((*prov, u));
                }
            }
            if let Some((pos, col)) = &p.increment_op {
                increment = results
                    .get(*pos)
                    .and_then(|r| r.get("rows"))
                    .and_then(Json::as_array)
                    .and_then(|rows| rows.first())
                    .and_then(|r| r.get(col))
                    .and_then(Json::as_i64);
            }
        }
        Event::TxnDone {
            id,
            status,
            inserted,
            increment,
            error: first_error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{idl, json, uuid, P, U1, U2};
    use super::super::Event;
    use ovsdb::atom::Atom;
    use ovsdb::datum::Datum;
    use ovsdb_server::cond::{Clause, ColRef, Func};

    #[test]
    fn the_monitor_request_falls_back_to_older_methods_on_error() {
        let mut i = idl();
        i.omit("P", "tags").unwrap();
        assert_eq!(
            i.connect().to_string_compact(),
            r#"{"method":"monitor_cond_since","params":["d",["monid","d"],{"P":{"columns":["name","q","v"]},"Q":{"columns":["x"]}},"00000000-0000-0000-0000-000000000000"],"id":1}"#
        );
        // A server without monitor_cond_since: the next request goes out.
        let ev = i
            .receive(&json(r#"{"id":1,"result":null,"error":"unknown method"}"#))
            .unwrap();
        assert_eq!(ev, []);
        assert_eq!(
            i.take_outgoing()
                .iter()
                .map(|m| m.to_string_compact())
                .collect::<Vec<_>>(),
            [
                r#"{"method":"monitor_cond","params":["d",["monid","d"],{"P":{"columns":["name","q","v"]},"Q":{"columns":["x"]}}],"id":2}"#
            ]
        );
        assert_eq!(i.monitor_version(), 2);
    }

    #[test]
    fn a_monitor_reply_then_updates_and_a_condition_change() {
        let mut i = idl();
        i.connect();
        let reply = json(&format!(
            r#"{{"id":1,"error":null,"result":[false,"{U2}",{{"P":{{"{U1}":{{"initial":{{"name":"a"}}}}}}}}]}}"#
        ));
        let ev = i.receive(&reply).unwrap();
        assert_eq!(ev, [Event::Monitoring { found: false }, Event::Updated]);
        assert!(i.is_monitoring());
        assert_eq!(i.last_id(), uuid(U2));
        assert_eq!(i.row_uuids(P), [uuid(U1)]);
        // update3 moves the last transaction id.
        let upd = json(&format!(
            r#"{{"id":null,"method":"update3","params":[["monid","d"],"{U1}",{{"P":{{"{U1}":{{"modify":{{"v":3}}}}}}}}]}}"#
        ));
        assert_eq!(i.receive(&upd).unwrap(), [Event::Updated]);
        assert_eq!(i.last_id(), uuid(U1));
        // A condition while monitoring is sent at once as monitor_cond_change.
        let seq = i
            .set_condition(
                "P",
                vec![Clause::Cmp {
                    col: ColRef::Col(3),
                    column: "v".into(),
                    func: Func::Ge,
                    arg: Datum::scalar(Atom::Integer(2)),
                }],
            )
            .unwrap();
        // The monitor reply acknowledged the request's (empty) conditions:
        // seqno 1; this one will be 2 once acknowledged.
        assert_eq!((i.cond_seqno(), seq), (1, 2));
        assert_eq!(
            i.take_outgoing()
                .iter()
                .map(|m| m.to_string_compact())
                .collect::<Vec<_>>(),
            [
                r#"{"method":"monitor_cond_change","params":[["monid","d"],["monid","d"],{"P":[{"where":[["v",">=",2]]}]}],"id":2}"#
            ]
        );
        let ack = json(r#"{"id":2,"error":null,"result":{}}"#);
        assert_eq!(
            i.receive(&ack).unwrap(),
            [Event::CondAcked { cond_seqno: 2 }]
        );
    }
}
