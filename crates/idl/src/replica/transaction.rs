//! Client transactions: writes, verifies, deletes, inserts, partial
//! set/map updates and increments recorded against the replica
//! ([`Idl::txn_begin`] … [`Idl::txn_abort`]), the indexes' view of the
//! open transaction, and [`Idl::txn_commit`] building the exact wire
//! `transact` request.

use super::{
    id_key, Commit, Idl, PartialOp, PendingTxn, TxnBuildStats, TxnState, UsageError, WriteResult,
    ALERT, MONITOR, WRITE_CHANGED_ONLY,
};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::{Json, Object};
use ovsdb::uuid::Uuid;
use std::collections::HashSet;

fn uuid_json(u: Uuid) -> Json {
    Json::Array(vec![Json::from("uuid"), Json::String(u.to_string())])
}

fn uuid_where(u: Uuid) -> Json {
    Json::Array(vec![Json::Array(vec![
        Json::from("_uuid"),
        Json::from("=="),
        uuid_json(u),
    ])])
}

fn named_for(u: Uuid) -> String {
    format!("row{}", u.to_string().replace('-', "_"))
}

/// Rewrites `["uuid", U]` into `["named-uuid", "rowU"]` for rows inserted
/// (without a persistent UUID) in the same transaction.
fn substitute_named(j: &mut Json, inserted: &HashSet<Uuid>) {
    if let Json::Array(a) = j {
        if a.len() == 2 && a[0].as_str() == Some("uuid") {
            if let Some(u) = a[1].as_str().and_then(Uuid::parse) {
                if inserted.contains(&u) {
                    *j = Json::Array(vec![Json::from("named-uuid"), Json::String(named_for(u))]);
                }
            }
            return;
        }
        for x in a.iter_mut() {
            substitute_named(x, inserted);
        }
    }
}

impl Idl {
    /// The row's data as the open transaction sees it (None if absent or
    /// deleted in the transaction).
    fn view_data(&self, t: usize, u: Uuid) -> Option<Vec<Datum>> {
        let x = self.txn.as_ref();
        if x.is_some_and(|x| x.deleted.contains(&(t, u))) {
            return None;
        }
        let mut data: Vec<Datum> = if x.is_some_and(|x| x.inserted.contains_key(&(t, u))) {
            self.meta.tables[t]
                .columns
                .iter()
                .map(|c| Datum::default_for(&c.ty))
                .collect()
        } else {
            self.tables[t].rows.get(&u)?.data.clone()
        };
        if let Some(w) = x.and_then(|x| x.written.get(&(t, u))) {
            for (c, d) in w {
                if let Some(slot) = data.get_mut(*c) {
                    *slot = d.clone();
                }
            }
        }
        Some(data)
    }

    fn index_view_remove(&mut self, t: usize, u: Uuid) -> u64 {
        let ids = self.tables[t].indexes.clone();
        if ids.is_empty() {
            return 0;
        }
        if let Some(d) = self.view_data(t, u) {
            for i in &ids {
                self.indexes[*i].remove(u, &d);
            }
            return ids.len() as u64;
        }
        0
    }

    fn index_view_add(&mut self, t: usize, u: Uuid) -> u64 {
        let ids = self.tables[t].indexes.clone();
        if ids.is_empty() {
            return 0;
        }
        if let Some(d) = self.view_data(t, u) {
            for i in &ids {
                self.indexes[*i].insert(u, &d);
            }
            return ids.len() as u64;
        }
        0
    }

    /// Opens a transaction (one at a time, as in the C IDL).
    pub fn txn_begin(&mut self) {
        self.txn_state();
    }

    /// The open transaction, opened if none is.
    fn txn_state(&mut self) -> &mut TxnState {
        self.txn.get_or_insert_with(TxnState::default)
    }

    pub fn txn_is_open(&self) -> bool {
        self.txn.is_some()
    }

    fn txn_touch(&mut self, key: (usize, Uuid)) {
        let x = self.txn_state();
        if x.in_order.insert(key) {
            x.order.push(key);
        }
    }

    /// Writes a column. A write-only column (mode exactly MONITOR) or a
    /// WRITE_CHANGED_ONLY column drops a write equal to the value it would
    /// read; anything else is recorded (and re-indexed).
    pub fn txn_write(
        &mut self,
        table: usize,
        uuid: Uuid,
        column: usize,
        value: Datum,
    ) -> WriteResult {
        if !self.valid(table, column) {
            return WriteResult::Discarded;
        }
        self.txn_begin();
        let mode = self.modes[table][column];
        let write_only = mode & MONITOR != 0 && mode & ALERT == 0;
        if let Some(x) = self.txn.as_mut() {
            x.stats.writes += 1;
        }
        if (write_only || mode & WRITE_CHANGED_ONLY != 0)
            && self.read_equals(table, uuid, column, &value)
        {
            if let Some(x) = self.txn.as_mut() {
                x.stats.discarded += 1;
            }
            return WriteResult::Discarded;
        }
        let key = (table, uuid);
        self.txn_touch(key);
        // As the C IDL: remove the row from the table's indexes and re-add
        // it with the written value, so index queries see uncommitted data.
        let removed = self.index_view_remove(table, uuid);
        let x = self.txn_state();
        x.written.entry(key).or_default().insert(column, value);
        let added = self.index_view_add(table, uuid);
        if let Some(x) = self.txn.as_mut() {
            x.stats.reindex_ops += removed + added;
        }
        WriteResult::Written
    }

    /// Records that `column` must still hold the value read (a `wait`).
    pub fn txn_verify(&mut self, table: usize, uuid: Uuid, column: usize) {
        if !self.valid(table, column) {
            return;
        }
        self.txn_begin();
        let key = (table, uuid);
        let x = self.txn_state();
        if x.inserted.contains_key(&key)
            || x.written
                .get(&key)
                .map(|w| w.contains_key(&column))
                .unwrap_or(false)
        {
            return;
        }
        self.txn_touch(key);
        let x = self.txn_state();
        x.prereqs.entry(key).or_default().insert(column);
    }

    pub fn txn_delete(&mut self, table: usize, uuid: Uuid) {
        if table >= self.tables.len() {
            return;
        }
        self.txn_begin();
        let key = (table, uuid);
        self.index_view_remove(table, uuid);
        let x = self.txn_state();
        if x.inserted.remove(&key).is_some() {
            x.written.remove(&key);
            x.order.retain(|k| *k != key);
            x.in_order.remove(&key);
            return;
        }
        x.written.remove(&key);
        x.deleted.insert(key);
        self.txn_touch(key);
    }

    /// Inserts a row with a provisional UUID (or `persist`: a UUID the
    /// server must keep). [`UsageError::NoSuchTable`] for a table
    /// position outside the schema (no transaction is opened then).
    pub fn txn_insert(&mut self, table: usize, persist: Option<Uuid>) -> Result<Uuid, UsageError> {
        if table >= self.tables.len() {
            return Err(UsageError::NoSuchTable(table));
        }
        let u = persist.unwrap_or_else(|| self.rng.uuid());
        let key = (table, u);
        self.txn_state().inserted.insert(key, persist.is_some());
        self.txn_touch(key);
        self.index_view_add(table, u);
        Ok(u)
    }

    pub fn txn_partial(&mut self, table: usize, uuid: Uuid, column: usize, op: PartialOp) {
        if !self.valid(table, column) {
            return;
        }
        self.txn_begin();
        let key = (table, uuid);
        self.txn_touch(key);
        self.txn_state()
            .partial
            .entry(key)
            .or_default()
            .push((column, op));
    }

    pub fn txn_increment(&mut self, table: usize, uuid: Uuid, column: usize) {
        if !self.valid(table, column) {
            return;
        }
        self.txn_state().increment = Some((table, uuid, column));
    }

    pub fn txn_add_comment(&mut self, comment: &str) {
        self.txn_state().comments.push(comment.to_string());
    }

    pub fn txn_set_dry_run(&mut self) {
        self.txn_state().dry_run = true;
    }

    /// Drops the open transaction (local edits are rolled back).
    pub fn txn_abort(&mut self) {
        self.txn_disassemble();
    }

    fn txn_disassemble(&mut self) -> TxnBuildStats {
        let Some(order) = self.txn.as_ref().map(|x| x.order.clone()) else {
            return TxnBuildStats::default();
        };
        // Rolling back re-indexes every touched row (C behaviour): out
        // with the transaction's view, back in with the committed data.
        let mut ops = 0;
        for (t, u) in &order {
            ops += self.index_view_remove(*t, *u);
        }
        let Some(x) = self.txn.take() else {
            return TxnBuildStats::default();
        };
        let mut stats = x.stats;
        for (t, u) in &order {
            ops += self.index_view_add(*t, *u);
        }
        stats.reindex_ops += ops;
        stats
    }

    /// Builds the `transact` request for the open transaction, then rolls
    /// the local edits back (the replica changes when the server's update
    /// arrives). Returns [`Commit::Unchanged`] when nothing really changes.
    pub fn txn_commit(&mut self) -> Commit {
        if self.txn.is_none() {
            return Commit::Unchanged;
        }
        if self.lock.is_some() && !self.has_lock {
            self.txn_disassemble();
            return Commit::NotLocked;
        }
        let Some(x) = self.txn.as_ref() else {
            return Commit::Unchanged;
        };
        let meta = self.meta.clone();
        let mut ops: Vec<Json> = vec![Json::from(meta.name.as_str())];
        let mut any_updates = false;
        let inserted_named: HashSet<Uuid> = x
            .inserted
            .iter()
            .filter(|(_, persist)| !**persist)
            .map(|((_, u), _)| *u)
            .collect();
        // 1. Prerequisites.
        for key in &x.order {
            let Some(cols) = x.prereqs.get(key) else {
                continue;
            };
            let (t, u) = *key;
            let tm = &meta.tables[t];
            let Some(r) = self.tables[t].rows.get(&u) else {
                continue;
            };
            let mut row = Object::new();
            for &c in cols {
                row.insert(tm.columns[c].name.clone(), r.data[c].to_json());
            }
            let mut o = Object::new();
            o.insert("op", Json::from("wait"));
            o.insert("table", Json::from(tm.name.as_str()));
            o.insert("timeout", Json::Integer(0));
            o.insert("where", uuid_where(u));
            o.insert("until", Json::from("=="));
            o.insert(
                "columns",
                Json::Array(
                    cols.iter()
                        .map(|&c| Json::from(tm.columns[c].name.as_str()))
                        .collect(),
                ),
            );
            o.insert("rows", Json::Array(vec![Json::Object(row)]));
            ops.push(Json::Object(o));
        }
        // 2. Singleton tables going from 0 to 1 row.
        for (ti, tm) in meta.tables.iter().enumerate() {
            if tm.max_rows == Some(1)
                && self.tables[ti].rows.is_empty()
                && x.inserted.keys().any(|(t, _)| *t == ti)
            {
                let mut o = Object::new();
                o.insert("op", Json::from("wait"));
                o.insert("table", Json::from(tm.name.as_str()));
                o.insert("where", Json::Array(vec![]));
                o.insert("timeout", Json::Integer(0));
                o.insert("until", Json::from("=="));
                o.insert("rows", Json::Array(vec![]));
                ops.push(Json::Object(o));
            }
        }
        // 3. Row operations.
        let mut insert_ops = Vec::new();
        for key in &x.order {
            let (t, u) = *key;
            let tm = &meta.tables[t];
            if x.deleted.contains(key) {
                if tm.is_root {
                    let mut o = Object::new();
                    o.insert("op", Json::from("delete"));
                    o.insert("table", Json::from(tm.name.as_str()));
                    o.insert("where", uuid_where(u));
                    ops.push(Json::Object(o));
                    any_updates = true;
                }
                continue;
            }
            if let Some(&persist) = x.inserted.get(key) {
                let mut row = Object::new();
                if let Some(w) = x.written.get(key) {
                    for (&c, d) in w {
                        if !d.is_default(&tm.columns[c].ty) {
                            let mut j = d.to_json();
                            substitute_named(&mut j, &inserted_named);
                            row.insert(tm.columns[c].name.clone(), j);
                        }
                    }
                }
                let mut o = Object::new();
                o.insert("op", Json::from("insert"));
                o.insert("table", Json::from(tm.name.as_str()));
                if persist {
                    o.insert("uuid", Json::String(u.to_string()));
                } else {
                    o.insert("uuid-name", Json::String(named_for(u)));
                }
                o.insert("row", Json::Object(row));
                insert_ops.push((ops.len() - 1, u));
                ops.push(Json::Object(o));
                any_updates = true;
            } else if let Some(w) = x.written.get(key) {
                let committed = self.tables[t].rows.get(&u);
                let mut row = Object::new();
                for (&c, d) in w {
                    if committed.map(|r| r.data[c] != *d).unwrap_or(true) {
                        any_updates = true;
                    }
                    let mut j = d.to_json();
                    substitute_named(&mut j, &inserted_named);
                    row.insert(tm.columns[c].name.clone(), j);
                }
                if !row.is_empty() {
                    let mut o = Object::new();
                    o.insert("op", Json::from("update"));
                    o.insert("table", Json::from(tm.name.as_str()));
                    o.insert("where", uuid_where(u));
                    o.insert("row", Json::Object(row));
                    ops.push(Json::Object(o));
                }
            }
            if let Some(parts) = x.partial.get(key) {
                let committed = self.tables[t].rows.get(&u);
                let mut muts = Vec::new();
                for (c, p) in parts {
                    let name = Json::from(tm.columns[*c].name.as_str());
                    let cur = committed.map(|r| &r.data[*c]);
                    // References to rows inserted in this transaction
                    // become named UUIDs here too.
                    let one = |a: &Atom| {
                        let mut j =
                            Json::Array(vec![Json::from("set"), Json::Array(vec![a.to_json()])]);
                        substitute_named(&mut j, &inserted_named);
                        j
                    };
                    let pair = |k: &Atom, v: &Atom| {
                        let mut j = Json::Array(vec![
                            Json::from("map"),
                            Json::Array(vec![Json::Array(vec![k.to_json(), v.to_json()])]),
                        ]);
                        substitute_named(&mut j, &inserted_named);
                        j
                    };
                    match p {
                        PartialOp::MapSet(k, v) => {
                            let old = cur.and_then(|d| d.as_map()).and_then(|m| m.get(k));
                            if old == Some(v) {
                                continue; // same value: dropped
                            }
                            if old.is_some() {
                                muts.push(Json::Array(vec![
                                    name.clone(),
                                    Json::from("delete"),
                                    one(k),
                                ]));
                            }
                            muts.push(Json::Array(vec![name, Json::from("insert"), pair(k, v)]));
                        }
                        PartialOp::MapDelete(k) => {
                            if cur.map(|d| d.contains_key(k)).unwrap_or(false) {
                                muts.push(Json::Array(vec![name, Json::from("delete"), one(k)]));
                            }
                        }
                        PartialOp::SetInsert(a) => {
                            muts.push(Json::Array(vec![name, Json::from("insert"), one(a)]));
                        }
                        PartialOp::SetDelete(a) => {
                            if cur.map(|d| d.contains_key(a)).unwrap_or(false) {
                                muts.push(Json::Array(vec![name, Json::from("delete"), one(a)]));
                            }
                        }
                    }
                }
                if !muts.is_empty() {
                    let mut o = Object::new();
                    o.insert("op", Json::from("mutate"));
                    o.insert("table", Json::from(tm.name.as_str()));
                    o.insert("where", uuid_where(u));
                    o.insert("mutations", Json::Array(muts));
                    ops.push(Json::Object(o));
                    any_updates = true;
                }
            }
        }
        // 4. Increment.
        let mut increment_op = None;
        if let Some((t, u, c)) = x.increment {
            let tm = &meta.tables[t];
            let cname = tm.columns[c].name.clone();
            let mut o = Object::new();
            o.insert("op", Json::from("mutate"));
            o.insert("table", Json::from(tm.name.as_str()));
            o.insert("where", uuid_where(u));
            o.insert(
                "mutations",
                Json::Array(vec![Json::Array(vec![
                    Json::from(cname.as_str()),
                    Json::from("+="),
                    Json::Integer(1),
                ])]),
            );
            ops.push(Json::Object(o));
            let mut s = Object::new();
            s.insert("op", Json::from("select"));
            s.insert("table", Json::from(tm.name.as_str()));
            s.insert("where", uuid_where(u));
            s.insert("columns", Json::Array(vec![Json::from(cname.as_str())]));
            increment_op = Some((ops.len() - 1, cname));
            ops.push(Json::Object(s));
            any_updates = true;
        }
        // 5. Comment, dry run, lock.
        if !x.comments.is_empty() {
            let mut o = Object::new();
            o.insert("op", Json::from("comment"));
            o.insert("comment", Json::String(x.comments.join("\n")));
            ops.push(Json::Object(o));
        }
        let dry_run = x.dry_run;
        if dry_run {
            let mut o = Object::new();
            o.insert("op", Json::from("abort"));
            ops.push(Json::Object(o));
        }
        if let Some(l) = &self.lock {
            let mut o = Object::new();
            o.insert("op", Json::from("assert"));
            o.insert("lock", Json::from(l.as_str()));
            ops.push(Json::Object(o));
        }
        let stats = self.txn_disassemble();
        if !any_updates {
            return Commit::Unchanged;
        }
        let (id, msg) = self.request("transact", ops.split_off(0));
        self.pending_txns.insert(
            id_key(&id),
            PendingTxn {
                insert_ops,
                increment_op,
                dry_run,
            },
        );
        Commit::Sent {
            id,
            request: msg,
            stats,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{idl, update2, uuid, NAME, P, U1, U2, V};
    use super::super::{Commit, TxnBuildStats, WriteResult};
    use ovsdb::atom::Atom;
    use ovsdb::datum::Datum;

    fn int(n: i64) -> Datum {
        Datum::scalar(Atom::Integer(n))
    }

    #[test]
    fn commit_builds_the_transact_request_with_named_inserts_and_verifies() {
        let mut i = idl();
        update2(
            &mut i,
            &format!(r#"{{"P":{{"{U1}":{{"insert":{{"name":"a"}}}}}}}}"#),
        );
        i.txn_begin();
        let new = i.txn_insert(P, None).unwrap();
        i.txn_write(P, new, NAME, Datum::scalar(Atom::String("b".into())));
        i.txn_write(P, new, 1, Datum::scalar(Atom::Uuid(uuid(U1))));
        i.txn_verify(P, uuid(U1), NAME);
        i.txn_write(P, uuid(U1), V, int(5));
        // A reference to the row being inserted goes out as its name.
        i.txn_write(P, uuid(U1), 1, Datum::scalar(Atom::Uuid(new)));
        i.txn_add_comment("hi");
        let Commit::Sent { id, request, stats } = i.txn_commit() else {
            panic!("nothing sent")
        };
        assert_eq!(id.to_string_compact(), "1");
        assert_eq!(
            stats,
            TxnBuildStats {
                writes: 4,
                discarded: 0,
                reindex_ops: 0
            }
        );
        let named = format!("row{}", new.to_string().replace('-', "_"));
        // Verifies first (a wait on the value read), then the rows in the
        // order they were first touched, then the comment.
        assert_eq!(
            request.to_string_compact(),
            format!(
                r#"{{"method":"transact","params":["d",{{"op":"wait","table":"P","timeout":0,"where":[["_uuid","==",["uuid","{U1}"]]],"until":"==","columns":["name"],"rows":[{{"name":"a"}}]}},{{"op":"insert","table":"P","uuid-name":"{named}","row":{{"name":"b","q":["uuid","{U1}"]}}}},{{"op":"update","table":"P","where":[["_uuid","==",["uuid","{U1}"]]],"row":{{"q":["named-uuid","{named}"],"v":5}}}},{{"op":"comment","comment":"hi"}}],"id":1}}"#
            )
        );
    }

    #[test]
    fn equal_writes_to_write_changed_only_columns_leave_nothing_to_send() {
        let mut i = idl();
        update2(
            &mut i,
            &format!(r#"{{"P":{{"{U2}":{{"insert":{{"v":4}}}}}}}}"#),
        );
        i.set_write_changed_only("P", "v", true).unwrap();
        assert_eq!(i.txn_write(P, uuid(U2), V, int(4)), WriteResult::Discarded);
        assert!(i.txn_is_open());
        assert_eq!(i.txn_commit(), Commit::Unchanged);
        assert!(!i.txn_is_open());
        // An aborted transaction sends nothing either.
        assert_eq!(i.txn_write(P, uuid(U2), V, int(6)), WriteResult::Written);
        i.txn_abort();
        assert_eq!(i.txn_commit(), Commit::Unchanged);
    }
}
