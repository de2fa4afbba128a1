//! Executing a `transact`: named UUIDs, the operations (insert, select,
//! update, mutate, delete, wait, commit, abort, comment, assert) in a
//! transaction of the core ([`Work`], `core.rs`), which they read their
//! own writes from, then the commit: the core's (references, garbage
//! collection, weak references, `maxRows`, unique indexes) and the real
//! changes, which are kept at once ([`Server::transact`]) or rolled back
//! and installed later ([`Server::prepare`], then [`Server::apply_commit`]).

use crate::cond::{column_list, ColRef, Condition, RowView};
use crate::dispatch::{err_json, uuid_json};
use crate::meta::{DbMeta, TableMeta};
use crate::rng::SplitMix64;
use crate::triggers::{self, WaitMode};
use crate::{
    cols_mut, default_row, Commit, Server, ServerRow, SessionId, TransactOutcome, TxnStats,
};
use ovsdb::atom::Atom;
use ovsdb::datum::{Datum, ParseOptions};
use ovsdb::db::{RowChange, RowMap, RowRef, Txn, TxnChanges};
use ovsdb::error::{Error, Result};
use ovsdb::json::{Json, Object};
use ovsdb::types::{AtomicType, Type};
use ovsdb::uuid::Uuid;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// Working state of a transaction being executed.
struct Work<'a> {
    meta: &'a DbMeta,
    /// Per metadata table: the core's.
    map: Arc<Vec<usize>>,
    /// The core's transaction the operations write into (rows in the
    /// order they first touch them, the order ovsdb-server adds them, and
    /// their tables, to its transaction), and read back from.
    txn: Txn<'a>,
    named: HashMap<String, Uuid>,
    comment: Vec<String>,
    stats: TxnStats,
    wait: WaitMode,
}

impl<'a> Work<'a> {
    /// The rows of metadata table `t` as the transaction has them.
    fn rows(&self, t: usize) -> &RowMap {
        let table = self.txn.db().table_at(self.map[t]);
        &table.expect("a table of the schema").rows
    }

    fn get(&self, t: usize, u: Uuid) -> Option<RowView<'_>> {
        self.rows(t).get(&u).map(|r| r.view())
    }

    /// UUIDs of the rows of table `t` matching `cond` (AND), in UUID order.
    fn matching(&self, t: usize, cond: &Condition) -> Vec<Uuid> {
        if let Some(u) = cond.uuid_eq() {
            return match self.get(t, u) {
                Some(v) if cond.eval_all(&v) => vec![u],
                _ => vec![],
            };
        }
        let rows = self.rows(t).iter();
        rows.filter(|(_, r)| cond.eval_all(&r.view()))
            .map(|(u, _)| *u)
            .collect()
    }
}

fn table_of(meta: &DbMeta, op: &Object) -> Result<usize> {
    let name = op
        .get("table")
        .and_then(Json::as_str)
        .ok_or_else(|| Error::syntax("op requires \"table\""))?;
    meta.table(name)
        .ok_or_else(|| Error::syntax(format!("No table named {name}.")))
}

/// Resolver for named UUIDs within one transaction.
fn named_resolver(named: &HashMap<String, Uuid>) -> impl FnMut(&str) -> Result<Uuid> + '_ {
    move |n: &str| {
        named
            .get(n)
            .copied()
            .ok_or_else(|| Error::syntax(format!("named-uuid \"{n}\" is not defined")))
    }
}

fn parse_value(j: &Json, ty: &Type, named: &HashMap<String, Uuid>, relaxed: bool) -> Result<Datum> {
    let mut f = named_resolver(named);
    Datum::from_json_with(
        j,
        ty,
        ParseOptions {
            relaxed_size: relaxed,
            named_uuid: Some(&mut f),
        },
    )
}

fn parse_cond(j: Option<&Json>, t: &TableMeta, named: &HashMap<String, Uuid>) -> Result<Condition> {
    match j {
        None => Err(Error::syntax("op requires \"where\"")),
        Some(j) => {
            let mut f = named_resolver(named);
            Condition::from_json(j, t, Some(&mut f))
        }
    }
}

impl Server {
    /// Executes a transaction outside any session (as `ovsdb-tool transact`
    /// would): `ops` excludes the database name. Monitors still see it.
    pub fn transact(&mut self, ops: &[Json]) -> (TransactOutcome, Vec<(SessionId, Json)>) {
        let outcome = self.transact_for(None, ops);
        let mut msgs = match &outcome.commit {
            Some(c) => self.distribute(c),
            None => Vec::new(),
        };
        if outcome.commit.is_some() && !self.triggers.is_empty() {
            msgs.extend(self.run_triggers());
        }
        (outcome, msgs)
    }

    fn transact_for(&mut self, session: Option<SessionId>, ops: &[Json]) -> TransactOutcome {
        self.execute(session, ops, true, WaitMode::NoWait)
    }

    /// Executes `ops` against the committed database without changing it,
    /// as a clustered ovsdb-server does before it proposes the result to
    /// Raft: the outcome's `commit` is what [`Server::apply_commit`] (on
    /// this server) or [`Server::apply_record`] of its [`entry_data`] (on
    /// any replica) installs once the entry is committed.
    pub fn prepare(&mut self, ops: &[Json]) -> TransactOutcome {
        self.execute(None, ops, false, WaitMode::Prepare)
    }

    pub(crate) fn execute(
        &mut self,
        session: Option<SessionId>,
        ops: &[Json],
        install: bool,
        wait: WaitMode,
    ) -> TransactOutcome {
        let meta = self.meta.clone();
        let locks: BTreeSet<String> = session
            .and_then(|s| self.sessions.get(&s))
            .map(|s| s.locks.clone())
            .unwrap_or_default();
        // Named UUIDs may be referenced before the insert that declares
        // them, so allocate them all first.
        let mut named = HashMap::new();
        let mut fresh: Vec<(Option<String>, Uuid)> = Vec::new();
        for op in ops {
            if let Some(o) = op.as_object() {
                if o.get("op").and_then(Json::as_str) == Some("insert") {
                    let given = o.get("uuid").and_then(|u| u.as_str()).and_then(Uuid::parse);
                    let u = given.unwrap_or_else(|| self.rng.uuid());
                    let name = o
                        .get("uuid-name")
                        .and_then(Json::as_str)
                        .map(str::to_string);
                    if let Some(n) = &name {
                        named.insert(n.clone(), u);
                    }
                    fresh.push((name, u));
                }
            }
        }
        let map = self.core.tables();
        let meta_of = self.core.meta_tables();
        let mut work = Work {
            meta: &meta,
            map,
            txn: self.core.begin(),
            named,
            comment: Vec::new(),
            stats: TxnStats::default(),
            wait,
        };
        let mut fresh_iter = fresh.into_iter();
        let mut results: Vec<Json> = Vec::new();
        let mut failed = false;
        for op in ops {
            work.stats.ops += 1;
            let r = execute_op(&mut work, op, &mut fresh_iter, &locks);
            match r {
                Ok(j) => results.push(j),
                Err(e) => {
                    results.push(err_json(&e));
                    failed = true;
                    break;
                }
            }
        }
        let stats_before = work.stats;
        if failed {
            while results.len() < ops.len() {
                results.push(Json::Null);
            }
            return TransactOutcome {
                result: Json::Array(results),
                commit: None,
                stats: stats_before,
            };
        }
        let comment = if work.comment.is_empty() {
            None
        } else {
            Some(work.comment.join("\n"))
        };
        let txn_id = self.rng.uuid();
        // (Moved whole: what is left of it lets go of the core.)
        let Work { txn, .. } = { work };
        let done = finish_commit(txn, &meta, &meta_of, &mut self.rng, install);
        let done = done.map(|changes| {
            (!changes.is_empty()).then_some(Commit {
                txn_id,
                changes,
                comment,
            })
        });
        match done {
            Ok(commit) => {
                if let Some(c) = commit.as_ref().filter(|_| install) {
                    self.install(c);
                }
                let mut stats = stats_before;
                stats.rows_changed = commit.as_ref().map_or(0, |c| c.changes.row_count());
                TransactOutcome {
                    result: Json::Array(results),
                    commit,
                    stats,
                }
            }
            Err(e) => {
                results.push(err_json(&e));
                TransactOutcome {
                    result: Json::Array(results),
                    commit: None,
                    stats: stats_before,
                }
            }
        }
    }
}

/// Commit-time work: the core's (references, garbage collection, weak
/// references, `maxRows`, unique indexes; `Txn::precommit`), then new
/// `_version`s: the real changes, in table and UUID order, each row with a
/// new `_version`, kept in the core with `install` (the caller installs
/// them) or rolled back here (a prepared transaction, installed later by
/// `apply_commit`). (A row the commit finds absent before and after is
/// never one of them.)
fn finish_commit(
    mut txn: Txn<'_>,
    meta: &DbMeta,
    meta_of: &[usize],
    rng: &mut SplitMix64,
    install: bool,
) -> Result<TxnChanges> {
    // Every row the commit changes, in metadata table and UUID order, with
    // its committed version and whether it stays. (Which rows only: a
    // change list would share each row, and each `_version` below would
    // copy it.)
    let mut found = txn.precommit_rows()?;
    found.sort_unstable_by_key(|f| (meta_of[f.0], f.1));
    // Each row that stays gets a new `_version`, in that order. A row a
    // prepared (rolled back) transaction inserted gets it after the
    // rollback, which hands the row over (`Later`): written in the core
    // first, it would be searched for twice more and taken out anyway.
    enum New {
        Gone,
        Row(RowRef),
        Later(Uuid),
    }
    let mut rows: Vec<(usize, Uuid, Option<RowRef>, New)> = Vec::with_capacity(found.len());
    let mut later = false;
    for (ti, u, old, stays) in found {
        let mt = meta_of[ti];
        let new = if !stays {
            New::Gone
        } else {
            let v = rng.uuid();
            if !install && old.is_none() {
                later = true;
                New::Later(v)
            } else {
                let ci = meta.tables[mt].columns.len() + 1;
                New::Row(txn.set_at_shared(ti, u, ci, Datum::scalar(Atom::Uuid(v)))?)
            }
        };
        rows.push((mt, u, old, new));
    }
    if later {
        txn.roll_back_taking_inserted(|ti, u, mut row| {
            let at = rows.binary_search_by_key(&(meta_of[ti], u), |r| (r.0, r.1));
            if let Some((mt, _, _, new)) = at.ok().map(|at| &mut rows[at]) {
                if let New::Later(v) = *new {
                    // Its only holder: written in place.
                    let ci = meta.tables[*mt].columns.len() + 1;
                    Arc::make_mut(&mut row).columns[ci] = Datum::scalar(Atom::Uuid(v));
                    *new = New::Row(row);
                }
            }
        });
    } else if install
        && rows
            .iter()
            .any(|r| r.2.is_some() || !matches!(r.3, New::Gone))
    {
        // (A change needs a version on one side.)
        txn.keep();
    }
    let mut changes = TxnChanges::default();
    for (mt, u, old, new) in rows {
        let new = match new {
            New::Gone => None,
            New::Row(r) => Some(r),
            New::Later(_) => unreachable!("an inserted row the rollback hands over"),
        };
        if let Some(ch) = RowChange::between(u, old, new) {
            changes.push(mt, ch);
        }
    }
    Ok(changes)
}

fn execute_op(
    w: &mut Work<'_>,
    op: &Json,
    fresh: &mut dyn Iterator<Item = (Option<String>, Uuid)>,
    locks: &BTreeSet<String>,
) -> Result<Json> {
    let o = op
        .as_object()
        .ok_or_else(|| Error::syntax("operation must be an object"))?;
    let name = o
        .get("op")
        .and_then(Json::as_str)
        .ok_or_else(|| Error::syntax("operation has no \"op\" member"))?;
    let meta = w.meta;
    match name {
        "insert" => {
            let ti = table_of(meta, o)?;
            let t = &meta.tables[ti];
            let (_, u) = fresh
                .next()
                .ok_or_else(|| Error::syntax("internal: insert uuid missing"))?;
            let duplicate = || {
                Error::new(
                    "duplicate uuid",
                    format!("This UUID would duplicate a UUID already present within the table or deleted within the same transaction: {u}"),
                )
            };
            // A committed row of any table, or a row this transaction
            // inserted: the first error. (A row of this table that is
            // there is found by the insert, or looked for when the row is
            // bad; the row's values counted as if never parsed.)
            if w.txn.uuid_taken_elsewhere(w.map[ti], u) {
                return Err(duplicate());
            }
            let stats = w.stats;
            let mut build = || -> Result<ovsdb::db::Row> {
                let mut new = default_row(u, t);
                let cols = cols_mut(&mut new);
                if let Some(row) = o.get("row") {
                    let ro = shash_ordered(
                        row.as_object()
                            .ok_or_else(|| Error::syntax("row must be an object"))?,
                    );
                    for (cn, v) in ro {
                        let ci = t.known_column(cn, row)?;
                        w.stats.values_parsed += 1;
                        cols[ci] = parse_value(v, &t.columns[ci].ty, &w.named, false)?;
                    }
                }
                Ok(new)
            };
            let new = match build() {
                Ok(new) => new,
                Err(e) => {
                    if w.rows(ti).contains_key(&u) {
                        w.stats = stats;
                        return Err(duplicate());
                    }
                    return Err(e);
                }
            };
            match w.txn.insert_row(w.map[ti], Arc::new(new)) {
                Ok(()) => {}
                Err(e) if e.tag == "duplicate uuid" => {
                    w.stats = stats;
                    return Err(duplicate());
                }
                Err(e) => return Err(e),
            }
            w.stats.rows_touched += 1;
            let mut r = Object::new();
            r.insert("uuid", uuid_json(u));
            Ok(Json::Object(r))
        }
        "select" => {
            let ti = table_of(meta, o)?;
            let t = &meta.tables[ti];
            let cond = parse_cond(o.get("where"), t, &w.named)?;
            let cols: Vec<ColRef> = match o.get("columns").filter(|c| c.as_array().is_some()) {
                Some(c) => column_list(t, c)?,
                None => {
                    let mut v = vec![ColRef::Uuid, ColRef::Version];
                    v.extend((0..t.columns.len()).map(ColRef::Col));
                    v
                }
            };
            let mut rows = Vec::new();
            for u in w.matching(ti, &cond) {
                if let Some(r) = w.get(ti, u) {
                    rows.push(project(t, &r, &cols));
                }
            }
            let mut r = Object::new();
            r.insert("rows", Json::Array(rows));
            Ok(Json::Object(r))
        }
        "update" | "mutate" => {
            let ti = table_of(meta, o)?;
            let t = &meta.tables[ti];
            let cond = parse_cond(o.get("where"), t, &w.named)?;
            let mut updates: Vec<(usize, Datum)> = Vec::new();
            let mut mutations: Vec<(usize, String, Datum)> = Vec::new();
            if name == "update" {
                let row = o.get("row").unwrap_or(&Json::Null);
                let ro = shash_ordered(
                    row.as_object()
                        .ok_or_else(|| Error::syntax("update requires \"row\""))?,
                );
                for (cn, v) in ro {
                    let ci = t.known_column(cn, row)?;
                    if !t.columns[ci].mutable {
                        return Err(Error::constraint(format!(
                            "Cannot update immutable column {cn} in table {}.",
                            t.name
                        )));
                    }
                    w.stats.values_parsed += 1;
                    let d = parse_value(v, &t.columns[ci].ty, &w.named, false)?;
                    updates.push((ci, d));
                }
            } else {
                let ms = o
                    .get("mutations")
                    .and_then(Json::as_array)
                    .ok_or_else(|| Error::syntax("mutate requires \"mutations\""))?;
                for m in ms {
                    let parts = m
                        .as_array()
                        .filter(|a| a.len() == 3)
                        .ok_or_else(|| Error::syntax("mutation must be a 3-element array"))?;
                    let cn = parts[0].as_str().unwrap_or("");
                    let ci = t.known_column(cn, m)?;
                    if !t.columns[ci].mutable {
                        return Err(Error::constraint(format!(
                            "Cannot mutate immutable column {cn} in table {}.",
                            t.name
                        )));
                    }
                    let mutator = parts[1].as_str().unwrap_or("").to_string();
                    let ty = &t.columns[ci].ty;
                    // As ovsdb-server's mutation parser: which mutators a
                    // column's type takes, and the argument's type.
                    let numeric = matches!(ty.key.atomic, AtomicType::Integer | AtomicType::Real);
                    let fits = match mutator.as_str() {
                        "+=" | "-=" | "*=" | "/=" => numeric && !ty.is_map(),
                        "%=" => ty.key.atomic == AtomicType::Integer && !ty.is_map(),
                        "insert" | "delete" => !ty.is_scalar(),
                        _ => true,
                    };
                    if !fits {
                        return Err(Error::syntax(format!(
                            "Type mismatch: \"{mutator}\" operator may not be applied to column {cn} of type {}.",
                            ty.to_english()
                        ))
                        .with_syntax(m));
                    }
                    let arg = match mutator.as_str() {
                        "+=" | "-=" | "*=" | "/=" | "%=" => {
                            let at = Type::scalar(ty.key.atomic);
                            parse_value(&parts[2], &at, &w.named, false)?
                        }
                        "insert" => {
                            let at = Type {
                                min: 0,
                                ..ty.clone()
                            };
                            parse_value(&parts[2], &at, &w.named, false)?
                        }
                        "delete" => match parse_value(&parts[2], &ty.relaxed(), &w.named, true) {
                            Ok(d) => d,
                            Err(e) => {
                                if ty.is_map() {
                                    let kt = Type::set(ty.key.clone(), 0, u32::MAX);
                                    parse_value(&parts[2], &kt, &w.named, true)?
                                } else {
                                    return Err(e);
                                }
                            }
                        },
                        other => {
                            return Err(Error::new(
                                "unknown mutator",
                                format!("No mutator named {other}."),
                            ))
                        }
                    };
                    w.stats.values_parsed += 1;
                    mutations.push((ci, mutator, arg));
                }
            }
            let uuids = w.matching(ti, &cond);
            let count = uuids.len();
            for u in uuids {
                let Some(row) = w.get(ti, u) else {
                    continue;
                };
                // ovsdb-server (execution.c, `update_row_cb`) leaves a row
                // out of the transaction when an update writes the values
                // it already has: it does not decide where the row's table
                // joins the transaction (weak references, see the core's
                // `server_checks`). A mutation always joins.
                if name == "update" && updates.iter().all(|(ci, d)| row.cols[*ci] == *d) {
                    w.stats.rows_touched += 1;
                    continue;
                }
                w.txn.modify_at(w.map[ti], u, |cols| {
                    for (ci, d) in &updates {
                        cols[*ci] = d.clone();
                    }
                    for (ci, mutator, arg) in &mutations {
                        let ty = &t.columns[*ci].ty;
                        mutate(&mut cols[*ci], ty, mutator, arg)?;
                    }
                    Ok(())
                })?;
                w.stats.rows_touched += 1;
            }
            let mut r = Object::new();
            r.insert("count", Json::Integer(count as i64));
            Ok(Json::Object(r))
        }
        "delete" => {
            let ti = table_of(meta, o)?;
            let t = &meta.tables[ti];
            let cond = parse_cond(o.get("where"), t, &w.named)?;
            let uuids = w.matching(ti, &cond);
            let count = uuids.len();
            for u in uuids {
                w.txn.delete_at(w.map[ti], u)?;
                w.stats.rows_touched += 1;
            }
            let mut r = Object::new();
            r.insert("count", Json::Integer(count as i64));
            Ok(Json::Object(r))
        }
        "wait" => {
            let ti = table_of(meta, o)?;
            let t = &meta.tables[ti];
            let cond = parse_cond(o.get("where"), t, &w.named)?;
            let cols: Vec<ColRef> = match o.get("columns").filter(|c| c.as_array().is_some()) {
                Some(c) => column_list(t, c)?,
                None => (0..t.columns.len()).map(ColRef::Col).collect(),
            };
            let timeout = match o.get("timeout") {
                None => None,
                Some(Json::Integer(n)) if *n >= 0 => Some(*n),
                Some(j @ Json::Integer(_)) => {
                    return Err(Error::syntax_at(j, "timeout must be nonnegative"))
                }
                Some(_) => return Err(Error::syntax("Type mismatch for member 'timeout'.")),
            };
            let until = o.get("until").and_then(Json::as_str).unwrap_or("==");
            let expected_rows = o
                .get("rows")
                .and_then(Json::as_array)
                .ok_or_else(|| Error::syntax("wait requires \"rows\""))?;
            // Expected rows, projected and parsed with the column types.
            let mut expected: Vec<Vec<Datum>> = Vec::new();
            for er in expected_rows {
                let eo = er
                    .as_object()
                    .ok_or_else(|| Error::syntax("wait row must be an object"))?;
                let mut v = Vec::new();
                for c in &cols {
                    let (cn, ty) = match c {
                        ColRef::Uuid => ("_uuid".to_string(), crate::cond::uuid_type()),
                        ColRef::Version => ("_version".to_string(), crate::cond::uuid_type()),
                        ColRef::Col(i) => (t.columns[*i].name.clone(), t.columns[*i].ty.clone()),
                    };
                    let d = match eo.get(&cn) {
                        Some(j) => parse_value(j, &ty, &w.named, false)?,
                        None => Datum::default_for(&ty),
                    };
                    v.push(d);
                }
                expected.push(v);
            }
            let mut actual: Vec<Vec<Datum>> = Vec::new();
            for u in w.matching(ti, &cond) {
                if let Some(r) = w.get(ti, u) {
                    actual.push(cols.iter().map(|c| col_value(&r, *c)).collect());
                }
            }
            // Compared as sets of projected rows, as ovsdb-server does
            // (each side must contain all rows of the other).
            ovsdb::order::sort(&mut expected);
            expected.dedup();
            ovsdb::order::sort(&mut actual);
            actual.dedup();
            let equal = expected == actual;
            let ok = if until == "==" { equal } else { !equal };
            if ok {
                Ok(Json::Object(Object::new()))
            } else {
                Err(triggers::unsatisfied_wait(timeout, w.wait))
            }
        }
        "commit" => Ok(Json::Object(Object::new())),
        "abort" => Err(Error::new("aborted", "aborted by request")),
        "comment" => {
            if let Some(c) = o.get("comment").and_then(Json::as_str) {
                w.comment.push(c.to_string());
            }
            Ok(Json::Object(Object::new()))
        }
        "assert" => {
            let l = o.get("lock").and_then(Json::as_str).unwrap_or("");
            if locks.contains(l) {
                Ok(Json::Object(Object::new()))
            } else {
                Err(Error::new(
                    "not owner",
                    format!("Asserted lock {l} not held."),
                ))
            }
        }
        other => Err(Error::syntax(format!("No operation named {other}."))),
    }
}

/// The members of a `row` in the order ovsdb-server visits them (its
/// hash-table order), so that the first error reported is the same.
/// The members of `o` in ovsdb-server's `shash` order (the order it reads
/// a row object in), borrowed: reordering a copy cloned every value.
fn shash_ordered(o: &Object) -> Vec<(&str, &Json)> {
    let members: Vec<(&str, &Json)> = o.iter().collect();
    if members.len() < 2 {
        // One order only: no names to hash, no further vectors.
        return members;
    }
    let names: Vec<&str> = members.iter().map(|m| m.0).collect();
    ovsdb::json::shash_order(&names)
        .into_iter()
        .map(|i| members[i])
        .collect()
}

fn col_value(r: &RowView<'_>, c: ColRef) -> Datum {
    match c {
        ColRef::Uuid => Datum::scalar(Atom::Uuid(r.uuid)),
        ColRef::Version => Datum::scalar(Atom::Uuid(r.version)),
        ColRef::Col(i) => r.cols.get(i).cloned().unwrap_or_default(),
    }
}

fn project(t: &TableMeta, r: &RowView<'_>, cols: &[ColRef]) -> Json {
    let mut o = Object::new();
    for c in cols {
        let name = match c {
            ColRef::Uuid => "_uuid".to_string(),
            ColRef::Version => "_version".to_string(),
            ColRef::Col(i) => t.columns[*i].name.clone(),
        };
        o.insert(name, col_value(r, *c).to_json());
    }
    Json::Object(o)
}

/// ovsdb-server's error for an arithmetic mutation whose result does not fit.
fn out_of_range(op: &str) -> Error {
    Error::new(
        "range error",
        format!("Result of \"{op}\" operation is out of range."),
    )
}

fn arith(a: &Atom, op: &str, arg: &Atom) -> Result<Atom> {
    match (a, arg) {
        (Atom::Integer(x), Atom::Integer(y)) => {
            let r = match op {
                "+=" => x.checked_add(*y),
                "-=" => x.checked_sub(*y),
                "*=" => x.checked_mul(*y),
                "/=" => {
                    if *y == 0 {
                        return Err(Error::new("domain error", "Division by zero."));
                    }
                    x.checked_div(*y)
                }
                _ => {
                    if *y == 0 {
                        return Err(Error::new("domain error", "Division by zero."));
                    }
                    x.checked_rem(*y)
                }
            };
            r.map(Atom::Integer).ok_or_else(|| out_of_range(op))
        }
        (Atom::Real(x), Atom::Real(y)) => {
            let r = match op {
                "+=" => x + y,
                "-=" => x - y,
                "*=" => x * y,
                "/=" => {
                    if *y == 0.0 {
                        return Err(Error::new("domain error", "Division by zero."));
                    }
                    x / y
                }
                _ => return Err(Error::syntax("%= is not valid for reals")),
            };
            if !r.is_finite() {
                return Err(out_of_range(op));
            }
            Ok(Atom::Real(r))
        }
        _ => Err(Error::syntax("arithmetic mutator on a non-numeric column")),
    }
}

fn mutate(d: &mut Datum, ty: &Type, mutator: &str, arg: &Datum) -> Result<()> {
    match mutator {
        // (The column's type was checked against the mutator when the
        // mutation was parsed.)
        "+=" | "-=" | "*=" | "/=" | "%=" => {
            let a = arg
                .as_scalar()
                .ok_or_else(|| Error::syntax("mutator argument must be a scalar"))?;
            match d {
                Datum::Set(s) => {
                    // As ovsdb-server: every element first, then their
                    // constraints, then duplicates.
                    let done = s
                        .iter()
                        .map(|x| arith(x, mutator, a))
                        .collect::<Result<Vec<Atom>>>()?;
                    for r in &done {
                        r.check_constraints(&ty.key)?;
                    }
                    let n = done.len();
                    let out: BTreeSet<Atom> = done.into_iter().collect();
                    if out.len() != n {
                        return Err(Error::constraint(format!(
                            "Result of \"{mutator}\" operation contains duplicates."
                        )));
                    }
                    *s = out.into_iter().collect();
                }
                Datum::Map(_) => {
                    return Err(Error::constraint("arithmetic mutator on a map column"));
                }
            }
        }
        "insert" => d.union_with(arg),
        "delete" => d.subtract(arg),
        _ => {
            return Err(Error::new(
                "unknown mutator",
                format!("No mutator named {mutator}."),
            ))
        }
    }
    d.check_size(ty).map_err(|_| {
        Error::constraint(format!(
            "Attempted to store {} elements in {}.",
            d.len(),
            ty.to_english()
        ))
    })
}

#[cfg(test)]
mod tests {
    use crate::testkit::{json, server, tx, U1, U2};
    use crate::ServerOptions;

    #[test]
    fn a_failing_operation_reports_its_error_and_pads_the_rest_with_null() {
        let mut s = server(ServerOptions::default());
        let r = tx(
            &mut s,
            &format!(
                r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a","n":9223372036854775807}}}},
                    {{"op":"mutate","table":"R","where":[["name","==","a"]],"mutations":[["n","+=",1]]}},
                    {{"op":"comment","comment":"never reached"}}]"#
            ),
        );
        assert_eq!(
            r,
            format!(
                r#"[{{"uuid":["uuid","{U1}"]}},{{"error":"range error","details":"Result of \"+=\" operation is out of range."}},null]"#
            )
        );
        // Nothing was committed.
        assert_eq!(s.row_count("R"), 0);
    }

    #[test]
    fn select_projects_columns_of_matching_rows_in_uuid_order() {
        let mut s = server(ServerOptions::default());
        // Inserted out of UUID order; a mutate and an update in between.
        let r = tx(
            &mut s,
            &format!(
                r#"[{{"op":"insert","table":"R","uuid":"{U2}","row":{{"name":"b","n":2,"s":["set",[1]]}}}},
                    {{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a","n":1}}}},
                    {{"op":"mutate","table":"R","where":[],"mutations":[["s","insert",["set",[5,6]]]]}},
                    {{"op":"update","table":"R","where":[["n","<",2]],"row":{{"m":["map",[["k","v"]]]}}}},
                    {{"op":"select","table":"R","where":[["n",">=",1]],"columns":["_uuid","name","s","m"]}}]"#
            ),
        );
        assert_eq!(
            r,
            format!(
                r#"[{{"uuid":["uuid","{U2}"]}},{{"uuid":["uuid","{U1}"]}},{{"count":2}},{{"count":1}},{{"rows":[{{"_uuid":["uuid","{U1}"],"name":"a","s":["set",[5,6]],"m":["map",[["k","v"]]]}},{{"_uuid":["uuid","{U2}"],"name":"b","s":["set",[1,5,6]],"m":["map",[]]}}]}}]"#
            )
        );
    }

    #[test]
    fn prepare_leaves_the_database_alone_and_duplicates_fail_at_commit() {
        let mut s = server(ServerOptions::default());
        let ops = json(&format!(
            r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a"}}}}]"#
        ));
        let out = s.prepare(ops.as_array().unwrap());
        let commit = out.commit.expect("a real change");
        assert_eq!(commit.changes.row_count(), 1);
        assert_eq!(s.row_count("R"), 0);
        s.apply_commit(&commit).unwrap();
        assert_eq!(s.row_count("R"), 1);
        let r = tx(
            &mut s,
            &format!(r#"[{{"op":"insert","table":"R","uuid":"{U2}","row":{{"name":"a"}}}}]"#),
        );
        assert_eq!(
            r,
            format!(
                r#"[{{"uuid":["uuid","{U2}"]}},{{"error":"constraint violation","details":"Transaction causes multiple rows in \"R\" table to have identical values for (name) ({U1} and {U2})."}}]"#
            )
        );
    }
}
