//! Monitors: parsing `monitor`/`monitor_cond`/`monitor_cond_since`
//! requests, the initial contents, per-monitor change sets that coalesce
//! commits ([`merge_changes`]), composing `update`, `update2` and `update3`
//! (with column diffs) from them ([`compose_row`]), distributing a commit to
//! every session, [`Server::flush`] and `monitor_cond_change`.

use crate::cond::Condition;
use crate::dispatch::{err_json, notification, uuid_json};
use crate::meta::TableMeta;
use crate::{Commit, Row, RowRef, Server, ServerRow, SessionId};
use ovsdb::datum::Datum;
use ovsdb::db::TxnChanges;
use ovsdb::json::{Json, Object};
use ovsdb::uuid::Uuid;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Select {
    pub(crate) initial: bool,
    pub(crate) insert: bool,
    pub(crate) delete: bool,
    pub(crate) modify: bool,
}

impl Default for Select {
    fn default() -> Self {
        Select {
            initial: true,
            insert: true,
            delete: true,
            modify: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MonCol {
    Version,
    Col(usize),
}

#[derive(Debug, Clone)]
pub(crate) struct MonTable {
    pub(crate) table: usize,
    pub(crate) columns: Vec<MonCol>,
    pub(crate) select: Select,
    pub(crate) cond: Condition,
}

pub(crate) type ChangeKey = (usize, Uuid);

#[derive(Debug, Clone)]
pub(crate) struct Monitor {
    pub(crate) id: Json,
    pub(crate) version: u8,
    pub(crate) tables: Vec<MonTable>,
    pub(crate) pending: BTreeMap<ChangeKey, (Option<RowRef>, Option<RowRef>)>,
}

fn row_to_json_cols(t: &TableMeta, r: &Row, cols: &[MonCol], skip_default: bool) -> Json {
    let mut o = Object::new();
    for c in cols {
        match c {
            MonCol::Version => {
                o.insert("_version", uuid_json(r.version()));
            }
            MonCol::Col(i) => {
                let d = &r.cols()[*i];
                if skip_default && d.is_default(&t.columns[*i].ty) {
                    continue;
                }
                o.insert(t.columns[*i].name.clone(), d.to_json());
            }
        }
    }
    Json::Object(o)
}

fn col_changed(old: &Row, new: &Row, c: MonCol) -> bool {
    match c {
        MonCol::Version => old.version() != new.version(),
        MonCol::Col(i) => old.cols()[i] != new.cols()[i],
    }
}

impl Server {
    fn parse_monitor_requests(
        &self,
        version: u8,
        reqs: &Json,
    ) -> std::result::Result<Vec<MonTable>, Json> {
        let o = reqs
            .as_object()
            .ok_or_else(|| Json::from("monitor requests must be an object"))?;
        let mut out = Vec::new();
        for (tname, r) in o.iter() {
            let ti = self
                .meta
                .table(tname)
                .ok_or_else(|| Json::from(format!("no table named {tname}")))?;
            let t = &self.meta.tables[ti];
            let list: Vec<&Json> = match r {
                Json::Array(a) => a.iter().collect(),
                other => vec![other],
            };
            for one in list {
                let ro = one
                    .as_object()
                    .ok_or_else(|| Json::from("monitor request must be an object"))?;
                let columns = match ro.get("columns").and_then(Json::as_array) {
                    Some(cols) => {
                        let mut v = Vec::new();
                        for c in cols {
                            let cn = c.as_str().unwrap_or("");
                            if cn == "_version" {
                                v.push(MonCol::Version);
                            } else if let Some(i) = t.column(cn) {
                                v.push(MonCol::Col(i));
                            } else {
                                return Err(Json::from(format!("no column {cn} in table {tname}")));
                            }
                        }
                        v
                    }
                    None => (0..t.columns.len()).map(MonCol::Col).collect(),
                };
                let mut select = Select::default();
                if let Some(so) = ro.get("select").and_then(Json::as_object) {
                    let b = |k: &str| so.get(k).and_then(Json::as_bool).unwrap_or(true);
                    select = Select {
                        initial: b("initial"),
                        insert: b("insert"),
                        delete: b("delete"),
                        modify: b("modify"),
                    };
                }
                let cond = match (version, ro.get("where")) {
                    (2 | 3, Some(w)) => {
                        Condition::from_json(w, t, None).map_err(|e| err_json(&e))?
                    }
                    _ => Condition::always(),
                };
                out.push(MonTable {
                    table: ti,
                    columns,
                    select,
                    cond,
                });
            }
        }
        Ok(out)
    }

    pub(crate) fn monitor(
        &mut self,
        s: SessionId,
        version: u8,
        params: &[Json],
    ) -> std::result::Result<Json, Json> {
        if params.first().and_then(Json::as_str) != Some(self.meta.name.as_str()) {
            return Err(Json::from("unknown database"));
        }
        if params.len() < 3
            || (version == 3 && params.len() > 4)
            || (version < 3 && params.len() > 3)
        {
            return Err(Json::from("syntax error"));
        }
        let id = params.get(1).cloned().unwrap_or(Json::Null);
        let reqs = params
            .get(2)
            .cloned()
            .unwrap_or(Json::Object(Object::new()));
        let tables = self.parse_monitor_requests(version, &reqs)?;
        let Some(sess) = self.sessions.get(&s) else {
            return Err(Json::from("no session"));
        };
        if sess.monitors.iter().any(|m| m.id == id) {
            return Err(Json::from("duplicate monitor ID"));
        }
        let mut mon = Monitor {
            id,
            version,
            tables,
            pending: BTreeMap::new(),
        };
        let result = if version == 3 {
            let last = params
                .get(3)
                .and_then(Json::as_str)
                .and_then(Uuid::parse)
                .unwrap_or(Uuid::NIL);
            let found = self.opts.clustered
                && !last.is_nil()
                && (last == self.last_txn_id || self.history.iter().any(|c| c.txn_id == last));
            if found {
                // Replay the history after `last` as one change set.
                let mut pending = BTreeMap::new();
                let mut after = last == self.last_txn_id;
                if !after {
                    for c in &self.history {
                        if after {
                            merge_changes(&mut pending, &c.changes, |_| true);
                        }
                        if c.txn_id == last {
                            after = true;
                        }
                    }
                }
                mon.pending = pending;
                let tu = self.compose(&mut mon);
                Json::Array(vec![
                    Json::Bool(true),
                    Json::String(self.last_txn_id().to_string()),
                    tu,
                ])
            } else {
                let tu = self.initial(&mon);
                Json::Array(vec![
                    Json::Bool(false),
                    Json::String(self.last_txn_id().to_string()),
                    tu,
                ])
            }
        } else {
            self.initial(&mon)
        };
        if let Some(sess) = self.sessions.get_mut(&s) {
            sess.monitors.push(mon);
        }
        Ok(result)
    }

    fn initial(&self, mon: &Monitor) -> Json {
        let mut tu = Object::new();
        for mt in &mon.tables {
            if !mt.select.initial {
                continue;
            }
            let t = &self.meta.tables[mt.table];
            let mut rows = Object::new();
            for (u, r) in self.core.rows(mt.table) {
                if mon.version > 1 && !mt.cond.eval_any(&r.view()) {
                    continue;
                }
                let mut ru = Object::new();
                if mon.version == 1 {
                    ru.insert("new", row_to_json_cols(t, r, &mt.columns, false));
                } else {
                    ru.insert("initial", row_to_json_cols(t, r, &mt.columns, true));
                }
                rows.insert(u.to_text(), Json::Object(ru));
            }
            if !rows.is_empty() {
                merge_table(&mut tu, &t.name, rows);
            }
        }
        Json::Object(tu)
    }

    /// Composes the pending change set of a monitor (and clears it).
    fn compose(&self, mon: &mut Monitor) -> Json {
        let pending = std::mem::take(&mut mon.pending);
        let mut tu = Object::new();
        for mt in &mon.tables {
            let t = &self.meta.tables[mt.table];
            let mut rows = Object::new();
            for ((ti, u), (old, new)) in pending.range((mt.table, Uuid::NIL)..) {
                if *ti != mt.table {
                    break;
                }
                if let Some(ru) = compose_row(t, mt, mon.version, old.as_deref(), new.as_deref()) {
                    rows.insert(u.to_text(), ru);
                }
            }
            if !rows.is_empty() {
                merge_table(&mut tu, &t.name, rows);
            }
        }
        Json::Object(tu)
    }

    /// Adds a commit to every monitor's change set and flushes sessions
    /// that are not held.
    pub(crate) fn distribute(&mut self, c: &Commit) -> Vec<(SessionId, Json)> {
        let ids: Vec<SessionId> = self.sessions.keys().copied().collect();
        for sid in &ids {
            if let Some(sess) = self.sessions.get_mut(sid) {
                for m in &mut sess.monitors {
                    m.merge(&c.changes);
                }
            }
        }
        let mut out = Vec::new();
        for sid in ids {
            let hold = self.sessions.get(&sid).map(|s| s.hold).unwrap_or(true);
            if !hold {
                out.extend(self.flush(sid));
            }
        }
        out
    }

    /// Sends (returns) the accumulated updates of session `s`.
    pub fn flush(&mut self, s: SessionId) -> Vec<(SessionId, Json)> {
        let Some(mut sess) = self.sessions.remove(&s) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for m in &mut sess.monitors {
            if m.pending.is_empty() {
                continue;
            }
            let tu = self.compose(m);
            if tu.as_object().map(|o| o.is_empty()).unwrap_or(true) {
                continue;
            }
            out.push((s, self.update_message(m, tu)));
        }
        self.sessions.insert(s, sess);
        if let Some(sd) = self.server_db.as_mut() {
            out.extend(sd.db.flush(s));
        }
        out
    }

    fn update_message(&self, m: &Monitor, tu: Json) -> Json {
        match m.version {
            1 => notification("update", vec![m.id.clone(), tu]),
            2 => notification("update2", vec![m.id.clone(), tu]),
            _ => notification(
                "update3",
                vec![
                    m.id.clone(),
                    Json::String(self.last_txn_id().to_string()),
                    tu,
                ],
            ),
        }
    }

    pub(crate) fn monitor_cond_change(
        &mut self,
        s: SessionId,
        params: &[Json],
    ) -> std::result::Result<(Vec<Json>, Json), Json> {
        let old_id = params.first().cloned().unwrap_or(Json::Null);
        let new_id = params.get(1).cloned().unwrap_or(Json::Null);
        let reqs = params
            .get(2)
            .and_then(Json::as_object)
            .ok_or_else(|| Json::from("syntax error"))?
            .clone();
        let Some(mut sess) = self.sessions.remove(&s) else {
            return Err(Json::from("unknown monitor"));
        };
        let Some(pos) = sess.monitors.iter().position(|m| m.id == old_id) else {
            self.sessions.insert(s, sess);
            return Err(Json::from("unknown monitor"));
        };
        if old_id != new_id && sess.monitors.iter().any(|m| m.id == new_id) {
            self.sessions.insert(s, sess);
            return Err(Json::from("duplicate monitor ID"));
        }
        let mut msgs = Vec::new();
        // Flush what is pending under the old condition first.
        {
            let m = &mut sess.monitors[pos];
            if !m.pending.is_empty() {
                let tu = self.compose(m);
                if !tu.as_object().map(|o| o.is_empty()).unwrap_or(true) {
                    msgs.push(self.update_message(m, tu));
                }
            }
        }
        let mut tu = Object::new();
        {
            let m = &mut sess.monitors[pos];
            for (tname, r) in reqs.iter() {
                let Some(ti) = self.meta.table(tname) else {
                    self.sessions.insert(s, sess);
                    return Err(Json::from(format!("no table named {tname}")));
                };
                let t = &self.meta.tables[ti];
                let list: Vec<&Json> = match r {
                    Json::Array(a) => a.iter().collect(),
                    other => vec![other],
                };
                for one in list {
                    let Some(ro) = one.as_object() else { continue };
                    if ro.contains_key("columns") {
                        self.sessions.insert(s, sess);
                        return Err(Json::from("changing columns is not supported"));
                    }
                    let newc = match ro.get("where") {
                        Some(w) => match Condition::from_json(w, t, None) {
                            Ok(c) => c,
                            Err(e) => {
                                self.sessions.insert(s, sess);
                                return Err(err_json(&e));
                            }
                        },
                        None => Condition::always(),
                    };
                    let mut rows = Object::new();
                    for mt in m.tables.iter_mut().filter(|mt| mt.table == ti) {
                        for (u, row) in self.core.rows(ti) {
                            let was = mt.cond.eval_any(&row.view());
                            let now = newc.eval_any(&row.view());
                            if !was && now {
                                let mut ru = Object::new();
                                ru.insert("insert", row_to_json_cols(t, row, &mt.columns, true));
                                rows.insert(u.to_text(), Json::Object(ru));
                            } else if was && !now {
                                let mut ru = Object::new();
                                ru.insert("delete", Json::Null);
                                rows.insert(u.to_text(), Json::Object(ru));
                            }
                        }
                        mt.cond = newc.clone();
                    }
                    if !rows.is_empty() {
                        merge_table(&mut tu, &t.name, rows);
                    }
                }
            }
            m.id = new_id;
        }
        if !tu.is_empty() {
            let m = &sess.monitors[pos];
            msgs.push(self.update_message(m, Json::Object(tu)));
        }
        self.sessions.insert(s, sess);
        Ok((msgs, Json::Object(Object::new())))
    }
}

fn merge_table(tu: &mut Object, name: &str, rows: Object) {
    match tu.get_mut(name).and_then(Json::as_object_mut) {
        Some(existing) => {
            for (k, v) in rows.into_members() {
                existing.insert(k, v);
            }
        }
        None => {
            tu.insert(name.to_string(), Json::Object(rows));
        }
    }
}

impl Monitor {
    /// Adds a commit's changes to the tables this monitor watches to its
    /// change set.
    pub(crate) fn merge(&mut self, changes: &TxnChanges) {
        let tables = &self.tables;
        merge_changes(&mut self.pending, changes, |t| {
            tables.iter().any(|mt| mt.table == t)
        });
    }
}

/// Adds a commit's changes to the tables `watched` accepts to a change
/// set, each row's coalesced with what the set holds for it (its first
/// old version, its last new one).
pub(crate) fn merge_changes(
    pending: &mut BTreeMap<ChangeKey, (Option<RowRef>, Option<RowRef>)>,
    changes: &TxnChanges,
    watched: impl Fn(usize) -> bool,
) {
    for tc in changes.tables.iter().filter(|tc| watched(tc.table)) {
        for ch in &tc.rows {
            let key = (tc.table, ch.uuid);
            match pending.get_mut(&key) {
                Some(entry) => {
                    entry.1 = ch.new.clone();
                    if entry.0.is_none() && entry.1.is_none() {
                        pending.remove(&key);
                    }
                }
                None => {
                    pending.insert(key, (ch.old.clone(), ch.new.clone()));
                }
            }
        }
    }
}

fn compose_row(
    t: &TableMeta,
    mt: &MonTable,
    version: u8,
    old: Option<&Row>,
    new: Option<&Row>,
) -> Option<Json> {
    let mut ru = Object::new();
    if version == 1 {
        match (old, new) {
            (None, Some(n)) => {
                if !mt.select.insert {
                    return None;
                }
                ru.insert("new", row_to_json_cols(t, n, &mt.columns, false));
            }
            (Some(o), None) => {
                if !mt.select.delete {
                    return None;
                }
                ru.insert("old", row_to_json_cols(t, o, &mt.columns, false));
            }
            (Some(o), Some(n)) => {
                let changed: Vec<MonCol> = mt
                    .columns
                    .iter()
                    .copied()
                    .filter(|c| col_changed(o, n, *c))
                    .collect();
                if !mt.select.modify || !changed_data(o, n, &mt.columns) {
                    return None;
                }
                ru.insert("old", row_to_json_cols(t, o, &changed, false));
                ru.insert("new", row_to_json_cols(t, n, &mt.columns, false));
            }
            (None, None) => return None,
        }
        return Some(Json::Object(ru));
    }
    let old_m = old.map(|o| mt.cond.eval_any(&o.view())).unwrap_or(false);
    let new_m = new.map(|n| mt.cond.eval_any(&n.view())).unwrap_or(false);
    match (old_m, new_m) {
        (false, false) => return None,
        (false, true) => {
            if !mt.select.insert {
                return None;
            }
            let n = new?;
            ru.insert("insert", row_to_json_cols(t, n, &mt.columns, true));
        }
        (true, false) => {
            if !mt.select.delete {
                return None;
            }
            ru.insert("delete", Json::Null);
        }
        (true, true) => {
            let (o, n) = (old?, new?);
            // Columns used only by the condition are monitored internally
            // by ovsdb-server: their change alone yields an empty modify.
            let cond_changed = mt
                .cond
                .columns()
                .iter()
                .any(|&c| !mt.columns.contains(&MonCol::Col(c)) && o.cols()[c] != n.cols()[c]);
            if !mt.select.modify || !(changed_data(o, n, &mt.columns) || cond_changed) {
                return None;
            }
            let mut diff = Object::new();
            for c in &mt.columns {
                match c {
                    MonCol::Version => {
                        if o.version() != n.version() {
                            diff.insert("_version", uuid_json(n.version()));
                        }
                    }
                    MonCol::Col(i) => {
                        if o.cols()[*i] != n.cols()[*i] {
                            let ty = &t.columns[*i].ty;
                            diff.insert(
                                t.columns[*i].name.clone(),
                                Datum::diff(&o.cols()[*i], &n.cols()[*i], ty).to_json(),
                            );
                        }
                    }
                }
            }
            ru.insert("modify", Json::Object(diff));
        }
    }
    Some(Json::Object(ru))
}

/// Did any monitored data column change? (A change of `_version` alone,
/// e.g. a row changed and changed back, is not reported.)
fn changed_data(o: &Row, n: &Row, cols: &[MonCol]) -> bool {
    cols.iter().any(|c| match c {
        MonCol::Col(i) => o.cols()[*i] != n.cols()[*i],
        MonCol::Version => false,
    })
}

#[cfg(test)]
mod tests {
    use crate::testkit::{json, server, shown, tx, U1, U2};
    use crate::{Server, ServerOptions, SessionId};

    /// A session with monitor `m` (of `method`) on R's `name` and `s`
    /// (`where` as given, for the conditional methods); returns its reply.
    fn watch(srv: &mut Server, method: &str, cond: &str) -> (SessionId, String) {
        let s = srv.connect();
        let req = json(&format!(
            r#"{{"id":1,"method":"{method}","params":["t","m",{{"R":{{"columns":["name","s"]{cond}}}}}]}}"#
        ));
        let out = srv.handle(s, &req);
        (s, out[0].1.to_string_compact())
    }

    #[test]
    fn update2_carries_set_diffs_and_update_carries_old_and_new() {
        let mut srv = server(ServerOptions::default());
        tx(
            &mut srv,
            &format!(
                r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a","s":["set",[1,2]]}}}}]"#
            ),
        );
        let (s2, initial) = watch(&mut srv, "monitor_cond", "");
        assert_eq!(
            initial,
            format!(
                r#"{{"id":1,"result":{{"R":{{"{U1}":{{"initial":{{"name":"a","s":["set",[1,2]]}}}}}}}},"error":null}}"#
            )
        );
        let (s1, _) = watch(&mut srv, "monitor", "");
        let ops = json(
            r#"[{"op":"mutate","table":"R","where":[],"mutations":[["s","delete",1],["s","insert",3]]},
                           {"op":"update","table":"R","where":[],"row":{"n":5}}]"#,
        );
        let (_, msgs) = srv.transact(ops.as_array().unwrap());
        assert_eq!(
            shown(&msgs),
            [
                (
                    s2,
                    format!(
                        r#"{{"id":null,"method":"update2","params":["m",{{"R":{{"{U1}":{{"modify":{{"s":["set",[1,3]]}}}}}}}}]}}"#
                    )
                ),
                (
                    s1,
                    format!(
                        r#"{{"id":null,"method":"update","params":["m",{{"R":{{"{U1}":{{"old":{{"s":["set",[1,2]]}},"new":{{"name":"a","s":["set",[2,3]]}}}}}}}}]}}"#
                    )
                ),
            ]
        );
        // A change of an unmonitored column alone sends nothing.
        let (_, msgs) = srv.transact(
            json(r#"[{"op":"update","table":"R","where":[],"row":{"n":6}}]"#)
                .as_array()
                .unwrap(),
        );
        assert!(msgs.is_empty(), "{msgs:?}");
    }

    #[test]
    fn a_held_session_coalesces_and_a_condition_turns_leaving_rows_into_deletes() {
        let mut srv = server(ServerOptions::default());
        let (s, initial) = watch(
            &mut srv,
            "monitor_cond",
            r#","where":[["name","!=","gone"]]"#,
        );
        assert_eq!(initial, r#"{"id":1,"result":{},"error":null}"#);
        srv.set_hold(s, true);
        // Inserted and deleted while held: nothing to say.
        tx(
            &mut srv,
            &format!(r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"x"}}}}]"#),
        );
        tx(&mut srv, r#"[{"op":"delete","table":"R","where":[]}]"#);
        assert!(srv.flush(s).is_empty());
        // Inserted then modified while held: one insert with the last value.
        tx(
            &mut srv,
            &format!(r#"[{{"op":"insert","table":"R","uuid":"{U2}","row":{{"name":"y"}}}}]"#),
        );
        tx(
            &mut srv,
            r#"[{"op":"mutate","table":"R","where":[],"mutations":[["s","insert",7]]}]"#,
        );
        assert_eq!(
            shown(&srv.flush(s)),
            [(
                s,
                format!(
                    r#"{{"id":null,"method":"update2","params":["m",{{"R":{{"{U2}":{{"insert":{{"name":"y","s":7}}}}}}}}]}}"#
                )
            )]
        );
        // Leaving the condition is a delete for this monitor.
        srv.set_hold(s, false);
        let (_, msgs) = srv.transact(
            json(r#"[{"op":"update","table":"R","where":[],"row":{"name":"gone"}}]"#)
                .as_array()
                .unwrap(),
        );
        assert_eq!(
            shown(&msgs),
            [(
                s,
                format!(
                    r#"{{"id":null,"method":"update2","params":["m",{{"R":{{"{U2}":{{"delete":null}}}}}}]}}"#
                )
            )]
        );
    }
}
