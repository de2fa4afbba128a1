//! Installing commits and log records: [`Server::apply_commit`] (a
//! prepared commit), [`Server::apply_record`] (a transaction record as a
//! database log stores it, how every cluster member applies an entry), the
//! install itself (rows, atom counts, the history
//! for `monitor_cond_since`), and the other direction: [`commit_record`]
//! and [`entry_data`], the record a log holds for a commit.

use crate::{
    cols_mut, default_row, set_version, Commit, DbMeta, Outbox, Row, Server, ServerRow, SessionId,
};
use ovsdb::datum::Datum;
use ovsdb::db::{RowChange, TxnChanges};
use ovsdb::error::{Error, Result};
use ovsdb::json::Json;
use ovsdb::uuid::Uuid;
use std::sync::Arc;

/// What one replica's replay of a transaction record did, for others to
/// install ([`Server::apply_record_shared`]).
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The commit (none when the record changed nothing), whose rows'
    /// `old` versions are what it was replayed against.
    commit: Option<Commit>,
    /// The rows the record named without changing them: table, UUID and
    /// the version the replica held.
    unchanged: Vec<(usize, Uuid, Arc<Row>)>,
    /// UUIDs the replay drew: the transaction id and a `_version` per
    /// inserted or modified row.
    draws: usize,
}

impl Replayed {
    /// The commit installed (none when the record changed nothing).
    pub fn commit(&self) -> Option<&Commit> {
        self.commit.as_ref()
    }

    /// What replaying the record of `commit`, made by [`Server::prepare`],
    /// does on a replica holding the rows it was prepared against: it
    /// installs `commit` (the record holds exactly its changes), drawing
    /// the UUIDs a replay would. The proposer of a clustered transaction
    /// knows this before any member applies the entry.
    pub fn prepared(commit: Commit) -> Replayed {
        Replayed {
            draws: replay_draws(&commit),
            commit: Some(commit),
            unchanged: Vec::new(),
        }
    }
}

/// UUIDs a replay that made `commit` drew: the transaction id, and a
/// `_version` per new row version.
fn replay_draws(commit: &Commit) -> usize {
    1 + commit
        .changes
        .rows()
        .filter(|(_, ch)| ch.new.is_some())
        .count()
}

/// The same row version: the same object, or equal columns.
fn same_row(a: &Arc<Row>, b: &Arc<Row>) -> bool {
    Arc::ptr_eq(a, b) || a.cols() == b.cols()
}

impl Server {
    /// Installs a commit made by [`Server::prepare`] (here or on a replica
    /// holding the same rows) and sends the monitors their updates. Fails,
    /// changing nothing, when a row it changes no longer has the value the
    /// commit was prepared against (the prerequisite check of a clustered
    /// commit).
    pub fn apply_commit(&mut self, commit: &Commit) -> Result<Vec<(SessionId, Json)>> {
        if let Some(uuid) = self.first_changed_since(&commit.changes) {
            return Err(match uuid {
                None => Error::syntax("commit names an unknown table"),
                Some(u) => Error::new(
                    "prerequisite check failed",
                    format!("row {u} changed since the commit was prepared"),
                ),
            });
        }
        self.core.write(&commit.changes);
        self.install(commit);
        Ok(self.distribute(commit))
    }

    /// The first row of `changes` whose `old` version (or absence) this
    /// replica no longer holds (`Some(None)`: a table it does not have),
    /// none when it holds them all: the rows are compared by pointer, then
    /// by value.
    fn first_changed_since(&self, changes: &TxnChanges) -> Option<Option<Uuid>> {
        for tc in &changes.tables {
            if tc.table >= self.meta.tables.len() {
                return Some(None);
            }
            let rows = self.core.rows(tc.table);
            for ch in &tc.rows {
                let same = match (rows.get(&ch.uuid), &ch.old) {
                    (None, None) => true,
                    (Some(a), Some(b)) => same_row(a, b),
                    _ => false,
                };
                if !same {
                    return Some(Some(ch.uuid));
                }
            }
        }
        None
    }

    /// Replays a transaction record as a database log stores it,
    /// `{table: {uuid: row or null}}` plus `_date`, `_comment` and
    /// `_is_diff` (with `_is_diff`, composite columns of modified rows hold
    /// column diffs). This is how every member of a cluster applies a
    /// committed entry: the record already carries the effects of garbage
    /// collection and weak-reference removal, so none is recomputed. Rows
    /// get fresh `_version`s. Returns the commit (none when nothing
    /// changed) and the monitors' updates; on error nothing is changed.
    pub fn apply_record(&mut self, txn: &Json) -> Result<(Option<Commit>, Outbox)> {
        self.replay(txn, None)
    }

    /// [`Server::apply_record`] for a record other replicas apply too
    /// (`txn` gives the record, asked for only if it must be replayed, and
    /// may fail: a record kept as text is parsed then): when
    /// `memo` holds what another replica's replay of it did and this one
    /// holds the same versions of every row the record names, that commit
    /// is installed without decoding the record again (the first replay
    /// decodes every value; installing a commit only looks rows up).
    /// Otherwise the record is replayed, and `memo` remembers this replay.
    /// Returns the monitors' updates and whether the record was replayed;
    /// either way `memo` then holds the commit installed
    /// ([`Replayed::commit`]; none when the record changed nothing).
    ///
    /// Either way the result is the same rows and the same monitor updates;
    /// a shared commit's new rows are the same objects on every replica (so
    /// the next check is a pointer comparison), and the row versions and
    /// transaction id are the first replica's, as a cluster's are the
    /// leader's. This replica's random sequence moves on as if it had drawn
    /// them, so what it draws next is unchanged.
    pub fn apply_record_shared(
        &mut self,
        txn: impl FnOnce() -> Result<Json>,
        memo: &mut Option<Replayed>,
    ) -> Result<(Outbox, bool)> {
        if let Some(r) = memo.as_ref() {
            if self.holds_before(r) {
                self.rng.skip_uuids(r.draws);
                let Some(commit) = &r.commit else {
                    return Ok((Vec::new(), false));
                };
                self.core.write(&commit.changes);
                self.install(commit);
                return Ok((self.distribute(commit), false));
            }
        }
        let mut unchanged = Vec::new();
        let (commit, msgs) = self.replay(&txn()?, Some(&mut unchanged))?;
        // Replicas apply a log in the same order: the next one most likely
        // holds what this one held.
        *memo = Some(Replayed {
            draws: commit.as_ref().map_or(0, replay_draws),
            commit,
            unchanged,
        });
        Ok((msgs, true))
    }

    /// Does this replica hold the rows `r` was replayed against: every
    /// changed row's old version (or its absence) and every row the record
    /// named without changing it?
    fn holds_before(&self, r: &Replayed) -> bool {
        r.commit
            .as_ref()
            .is_none_or(|c| self.first_changed_since(&c.changes).is_none())
            && r.unchanged.iter().all(|(ti, uuid, row)| {
                *ti < self.meta.tables.len()
                    && self
                        .core
                        .rows(*ti)
                        .get(uuid)
                        .is_some_and(|a| same_row(a, row))
            })
    }

    /// The replay of [`Server::apply_record`]; the rows the record names
    /// without changing them go to `unchanged` when given.
    fn replay(
        &mut self,
        txn: &Json,
        mut unchanged: Option<&mut Vec<(usize, Uuid, Arc<Row>)>>,
    ) -> Result<(Option<Commit>, Outbox)> {
        let obj = txn
            .as_object()
            .ok_or_else(|| Error::syntax("transaction record is not an object"))?;
        let is_diff = matches!(obj.get("_is_diff"), Some(Json::Bool(true)));
        let comment = obj
            .get("_comment")
            .and_then(Json::as_str)
            .map(str::to_string);
        let meta = self.meta.clone();
        let mut changes = TxnChanges::default();
        for (tname, rows) in obj.iter() {
            if tname.starts_with('_') {
                continue;
            }
            let ti = meta
                .table(tname)
                .ok_or_else(|| Error::syntax(format!("No table named {tname}.")))?;
            let t = &meta.tables[ti];
            let rows = rows
                .as_object()
                .ok_or_else(|| Error::syntax(format!("table {tname} is not an object")))?;
            for (ustr, rowj) in rows.iter() {
                let uuid = Uuid::parse(ustr)
                    .ok_or_else(|| Error::syntax(format!("{ustr} is not a UUID")))?;
                let old = self.core.rows(ti).get(&uuid).cloned();
                let new = match rowj {
                    Json::Null => {
                        if old.is_none() {
                            return Err(Error::syntax(format!(
                                "record deletes row {uuid}, which is not in table {tname}"
                            )));
                        }
                        None
                    }
                    Json::Object(cols) => {
                        let mut row = match &old {
                            Some(o) => Row::clone(o),
                            None => default_row(uuid, t),
                        };
                        for (cname, v) in cols.iter() {
                            let ci = t.column(cname).ok_or_else(|| {
                                Error::syntax(format!("No column {cname} in table {tname}."))
                            })?;
                            let ty = &t.columns[ci].ty;
                            let col = &mut cols_mut(&mut row)[ci];
                            if is_diff && old.is_some() && ty.is_composite() {
                                let d = Datum::diff_from_json(v, ty)?;
                                col.apply_diff(&d, ty)?;
                            } else {
                                *col = Datum::from_json(v, ty)?;
                            }
                        }
                        if let Some(o) = old.as_ref().filter(|o| o.cols() == row.cols()) {
                            if let Some(u) = unchanged.as_deref_mut() {
                                u.push((ti, uuid, o.clone()));
                            }
                            continue;
                        }
                        set_version(&mut row, self.rng.uuid());
                        Some(Arc::new(row))
                    }
                    _ => {
                        return Err(Error::syntax(format!(
                            "row {uuid} of table {tname} is neither an object nor null"
                        )))
                    }
                };
                // (Never absent on both sides: a delete needs the row.)
                if let Some(ch) = RowChange::between(uuid, old, new) {
                    changes.push(ti, ch);
                }
            }
        }
        if changes.is_empty() {
            return Ok((None, Vec::new()));
        }
        let commit = Commit {
            txn_id: self.rng.uuid(),
            changes,
            comment,
        };
        self.core.write(&commit.changes);
        self.install(&commit);
        let msgs = self.distribute(&commit);
        Ok((Some(commit), msgs))
    }

    /// Makes `commit`, whose rows the core already holds, the database's
    /// newest state: the transaction id, the atom counts and the history.
    pub(crate) fn install(&mut self, commit: &Commit) {
        self.last_txn_id = commit.txn_id;
        for (_, ch) in commit.changes.rows() {
            self.db_atoms += ch.new.as_deref().map(row_atoms).unwrap_or(0);
            self.db_atoms = self
                .db_atoms
                .saturating_sub(ch.old.as_deref().map(row_atoms).unwrap_or(0));
        }
        if self.opts.clustered {
            self.history_atoms += commit_atoms(commit);
            self.history.push_back(commit.clone());
            // As ovsdb-server: at most `history_max` transactions and no
            // more atoms than the database holds, keeping at least one.
            while self.history.len() > 1
                && (self.history.len() > self.opts.history_max.max(1)
                    || self.history_atoms > self.db_atoms)
            {
                if let Some(c) = self.history.pop_front() {
                    self.history_atoms = self.history_atoms.saturating_sub(commit_atoms(&c));
                }
            }
        }
    }
}

/// Atoms in a row (map pairs count twice).
fn row_atoms(r: &Row) -> usize {
    r.cols()
        .iter()
        .map(|d| if d.is_map() { 2 * d.len() } else { d.len() })
        .sum()
}

/// Atoms a history entry keeps alive (its new row versions, or the old
/// ones for deletions).
fn commit_atoms(c: &Commit) -> usize {
    c.changes
        .rows()
        .map(|(_, ch)| {
            ch.new
                .as_deref()
                .or(ch.old.as_deref())
                .map(row_atoms)
                .unwrap_or(0)
        })
        .sum()
}

/// Builds the transaction record a database log would hold for `commit`
/// (`{table: {uuid: row|null}}`): inserted rows with their non-default
/// columns, modified rows with their changed columns (as column diffs when
/// `diff` is set, else full values), deleted rows as `null`. The caller
/// adds `_date`, `_comment` and `_is_diff` as its log format needs.
pub fn commit_record(meta: &DbMeta, commit: &Commit, diff: bool) -> Json {
    let mut out = Vec::new();
    write_commit_record(meta, commit, diff, &mut out);
    parse_own(&out)
}

/// Our own record text as JSON: it always parses (the tests check every
/// writer against the parser).
fn parse_own(text: &[u8]) -> Json {
    let parsed = ovsdb::json::parse(text);
    debug_assert!(parsed.is_ok(), "{parsed:?}");
    parsed.unwrap_or(Json::Null)
}

/// Appends [`commit_record`] as compact JSON text, written straight from
/// the commit without building the tree: the one writer of a record's
/// tables, which the simulator's log records and [`txn_record`] use.
/// Tables in the order the change list first names them, each table's rows
/// in the list's order (a table the list names twice is one object).
/// Returns the length the record has in the other storage mode, which
/// differs only in modified rows' set and map columns (those values are
/// measured, not written).
pub fn write_commit_record(meta: &DbMeta, commit: &Commit, diff: bool, out: &mut Vec<u8>) -> usize {
    use ovsdb::json::write_string;
    let tables = &commit.changes.tables;
    let start = out.len();
    // The other mode's bytes less this one's.
    let mut other = 0isize;
    out.push(b'{');
    let mut first_table = true;
    for (i, tc) in tables.iter().enumerate() {
        let named_before = tables[..i]
            .iter()
            .any(|x| x.table == tc.table && !x.rows.is_empty());
        if tc.rows.is_empty() || named_before {
            continue;
        }
        let t = &meta.tables[tc.table];
        if !first_table {
            out.push(b',');
        }
        first_table = false;
        write_string(&t.name, out);
        out.extend_from_slice(b":{");
        let mut first_row = true;
        for same in tables[i..].iter().filter(|x| x.table == tc.table) {
            for ch in &same.rows {
                if !first_row {
                    out.push(b',');
                }
                first_row = false;
                out.push(b'"');
                out.extend_from_slice(&ch.uuid.to_ascii());
                out.extend_from_slice(b"\":");
                if ch.new.is_none() {
                    out.extend_from_slice(b"null");
                    continue;
                }
                out.push(b'{');
                let mut first_col = true;
                record_columns(t, ch, diff, |name, v, alt| {
                    if !first_col {
                        out.push(b',');
                    }
                    first_col = false;
                    write_string(name, out);
                    out.push(b':');
                    let at = out.len();
                    v.write_json(out);
                    if let Some(alt) = alt {
                        other += alt as isize - (out.len() - at) as isize;
                    }
                });
                out.push(b'}');
            }
        }
        out.push(b'}');
    }
    out.push(b'}');
    (out.len() - start).saturating_add_signed(other)
}

/// The columns [`commit_record`] writes for row change `ch` of table `t`
/// (one that leaves a row): an inserted row's non-default ones, a
/// modified row's changed ones (as diffs when `diff` is set, for composite
/// types), in the schema's order. A composite column of a modified row
/// comes with the length of its value in the other storage mode.
fn record_columns(
    t: &crate::meta::TableMeta,
    ch: &RowChange,
    diff: bool,
    mut f: impl FnMut(&str, &Datum, Option<usize>),
) {
    let Some(n) = &ch.new else { return };
    match &ch.old {
        None => {
            for (c, d) in t.columns.iter().zip(n.cols()) {
                if !d.is_default(&c.ty) {
                    f(&c.name, d, None);
                }
            }
        }
        Some(old) => {
            for ((c, o), n) in t.columns.iter().zip(old.cols()).zip(n.cols()) {
                if o == n {
                    continue;
                }
                if !c.ty.is_composite() {
                    f(&c.name, n, None);
                } else if diff {
                    f(&c.name, &Datum::diff(o, n, &c.ty), Some(n.json_len()));
                } else {
                    f(&c.name, n, Some(Datum::diff(o, n, &c.ty).json_len()));
                }
            }
        }
    }
}

/// The `data` of a Raft log entry for `commit`: `[null, txn]` where `txn`
/// is its [`txn_record`].
pub fn entry_data(meta: &DbMeta, commit: &Commit, diff: bool, date_ms: i64) -> Json {
    Json::Array(vec![Json::Null, txn_record(meta, commit, diff, date_ms)])
}

/// The transaction record a database log holds for `commit`:
/// [`commit_record`] plus `_date` (ms), `_comment` (if any) and
/// `"_is_diff": true` when written with column diffs.
pub fn txn_record(meta: &DbMeta, commit: &Commit, diff: bool, date_ms: i64) -> Json {
    let mut out = Vec::with_capacity(256);
    write_txn_record(meta, commit, diff, date_ms, &mut out);
    parse_own(&out)
}

/// A log record's sizes in both storage modes, as [`write_txn_record`]
/// wrote one and measured the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordSizes {
    /// The tables' object (the record less `_date`, `_comment` and
    /// `_is_diff`), as written.
    pub tables: usize,
    /// The tables' object in the other storage mode.
    pub other_tables: usize,
    /// The whole record in the other storage mode.
    pub other: usize,
}

/// Appends [`txn_record`] as the compact JSON text a log holds (the same
/// bytes as its `to_string_compact`), written without building the tree,
/// and returns its sizes, those of the other storage mode measured on the
/// way (see [`write_commit_record`]).
pub fn write_txn_record(
    meta: &DbMeta,
    commit: &Commit,
    diff: bool,
    date_ms: i64,
    out: &mut Vec<u8>,
) -> RecordSizes {
    let start = out.len();
    let other_tables = write_commit_record(meta, commit, diff, out);
    let tables = out.len() - start;
    // Reopen the table object for the members that follow the tables.
    if out.pop().is_some() && out.last() != Some(&b'{') {
        out.push(b',');
    }
    out.extend_from_slice(b"\"_date\":");
    ovsdb::json::write_integer(date_ms, out);
    if let Some(c) = &commit.comment {
        out.extend_from_slice(b",\"_comment\":");
        ovsdb::json::write_string(c, out);
    }
    const IS_DIFF: &[u8] = b",\"_is_diff\":true";
    if diff {
        out.extend_from_slice(IS_DIFF);
    }
    out.push(b'}');
    // The other mode's record: its tables, the same members but for
    // `_is_diff`, which only the diff record has.
    let members = out.len() - start - tables;
    let other = if diff {
        other_tables + members - IS_DIFF.len()
    } else {
        other_tables + members + IS_DIFF.len()
    };
    RecordSizes {
        tables,
        other_tables,
        other,
    }
}

#[cfg(test)]
mod tests {
    use super::{commit_record, entry_data, txn_record, write_commit_record};
    use crate::testkit::{json, server, shown, tx, U1, U2, U3};
    use crate::{Server, ServerOptions, ServerRow};
    use std::sync::Arc;

    /// Replicas applying the same records: one replays each record and
    /// remembers it, one installs what the first did, one only replays.
    /// The second ends every step with the same rows and sends its monitor
    /// the same updates as the third, holding the first one's row objects;
    /// a replica whose rows differ replays instead of taking the memo.
    #[test]
    fn a_shared_replay_installs_what_a_replay_would() {
        let mut leader = server(ServerOptions::default());
        let steps = [
            format!(
                r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a","s":["set",[1,2]],"m":["map",[["k","v"]]]}}}},
                    {{"op":"insert","table":"R","uuid":"{U2}","row":{{"name":"b"}}}}]"#
            ),
            r#"[{"op":"mutate","table":"R","where":[["name","==","a"]],"mutations":[["s","insert",3]]},
                {"op":"update","table":"R","where":[["name","==","b"]],"row":{"n":7}}]"#
                .to_string(),
            r#"[{"op":"mutate","table":"R","where":[["name","==","a"]],"mutations":[["m","delete",["set",["k"]]]]}]"#
                .to_string(),
            r#"[{"op":"delete","table":"R","where":[["name","==","b"]]}]"#.to_string(),
        ];
        let mut records: Vec<_> = steps
            .iter()
            .enumerate()
            .map(|(i, ops)| {
                let c = leader
                    .transact(json(ops).as_array().unwrap())
                    .0
                    .commit
                    .unwrap();
                txn_record(&leader.meta, &c, i % 2 == 0, 1000 + i as i64)
            })
            .collect();
        // A record naming a row with the values it already has: no change.
        records.insert(2, json(&format!(r#"{{"R":{{"{U1}":{{"name":"a"}}}}}}"#)));
        let opts = ServerOptions {
            seed: 9,
            ..Default::default()
        };
        let (mut first, mut shared, mut alone) = (server(opts), server(opts), server(opts));
        let watch = |s: &mut Server| {
            let sid = s.connect();
            let req = json(
                r#"{"id":1,"method":"monitor_cond","params":["t","m",{"R":{"columns":["name","n","s","m"]}}]}"#,
            );
            s.handle(sid, &req);
        };
        watch(&mut shared);
        watch(&mut alone);
        // Steps after which row a is held (and compared by pointer).
        let mut held = 0;
        for rec in &records {
            let mut memo = None;
            let (_, replayed) = first
                .apply_record_shared(|| Ok(rec.clone()), &mut memo)
                .unwrap();
            assert!(replayed);
            let made = memo.as_ref().unwrap().commit().map(|c| c.txn_id);
            let (b, replayed) = shared
                .apply_record_shared(|| Ok(rec.clone()), &mut memo)
                .unwrap();
            assert!(!replayed);
            // The memo is the one `first` made.
            assert_eq!(memo.as_ref().unwrap().commit().map(|c| c.txn_id), made);
            let c = alone.apply_record(rec).unwrap();
            assert_eq!(made.is_some(), c.0.is_some());
            assert_eq!(shown(&b), shown(&c.1));
            assert_eq!(shared.dump(), alone.dump());
            let r = first.meta.table("R").unwrap();
            for u in [U1, U2] {
                let u = ovsdb::uuid::Uuid::parse(u).unwrap();
                match (first.get_row(r, u), shared.get_row(r, u)) {
                    (Some(x), Some(y)) => assert!(Arc::ptr_eq(x, y)),
                    (x, y) => assert_eq!(x.is_none(), y.is_none()),
                }
            }
            held += usize::from(
                first
                    .get_row(r, ovsdb::uuid::Uuid::parse(U1).unwrap())
                    .is_some(),
            );
        }
        assert_eq!(held, records.len());
        assert_eq!(alone.dump(), leader.dump());
        // The random sequence moved on as if the UUIDs had been drawn.
        let rec = json(&format!(r#"{{"R":{{"{U3}":{{"name":"c"}}}}}}"#));
        let (x, y) = (
            shared.apply_record(&rec).unwrap().0.unwrap(),
            alone.apply_record(&rec).unwrap().0.unwrap(),
        );
        assert_eq!(x.txn_id, y.txn_id);
        // `shared` now holds row c and `first` does not: a record changing
        // c, remembered by `first` (c absent), is replayed by `shared`.
        let rec = json(&format!(r#"{{"R":{{"{U3}":{{"name":"d"}}}}}}"#));
        let mut memo = None;
        first
            .apply_record_shared(|| Ok(rec.clone()), &mut memo)
            .unwrap();
        let (_, replayed) = shared
            .apply_record_shared(|| Ok(rec.clone()), &mut memo)
            .unwrap();
        assert!(replayed);
        let (y, _) = alone.apply_record(&rec).unwrap();
        let c = memo.unwrap().commit().unwrap().clone();
        assert_eq!(c.changes.rows().count(), 1);
        assert!(c.changes.rows().all(|(_, ch)| ch.old.is_some()));
        assert_eq!(c.txn_id, y.unwrap().txn_id);
        assert_eq!(shared.dump(), alone.dump());
    }

    /// The proposer's memo: the commit it prepared. Replicas holding the
    /// rows it was prepared against install it (the proposer too); when
    /// an earlier entry changed one of them, the record is replayed.
    #[test]
    fn a_prepared_commit_is_installed_where_its_rows_are_held() {
        use super::Replayed;
        let opts = ServerOptions::default();
        let (mut proposer, mut member, mut alone) = (server(opts), server(opts), server(opts));
        let insert = format!(
            r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a","s":["set",[1]]}}}}]"#
        );
        let prepare = |s: &mut Server, ops: &str| {
            let c = s.prepare(json(ops).as_array().unwrap()).commit.unwrap();
            let rec = txn_record(&s.meta, &c, true, 1);
            (Some(Replayed::prepared(c)), rec)
        };
        let (mut memo, rec) = prepare(&mut proposer, &insert);
        for s in [&mut proposer, &mut member] {
            assert!(
                !s.apply_record_shared(|| Ok(rec.clone()), &mut memo)
                    .unwrap()
                    .1
            );
        }
        alone.apply_record(&rec).unwrap();
        let u1 = ovsdb::uuid::Uuid::parse(U1).unwrap();
        let r = proposer.meta.table("R").unwrap();
        let held = |s: &Server| s.get_row(r, u1).unwrap().clone();
        assert!(Arc::ptr_eq(&held(&proposer), &held(&member)));
        // Two commits prepared against the same rows; the second's entry
        // comes after the first's, which changed row a.
        let ops = |n: i64| {
            format!(
                r#"[{{"op":"mutate","table":"R","where":[["name","==","a"]],"mutations":[["s","insert",{n}]]}}]"#
            )
        };
        let (mut first, rec1) = prepare(&mut proposer, &ops(2));
        let (mut second, rec2) = prepare(&mut proposer, &ops(3));
        let mut replays = Vec::new();
        for (memo, rec) in [(&mut first, &rec1), (&mut second, &rec2)] {
            for s in [&mut proposer, &mut member] {
                replays.push(s.apply_record_shared(|| Ok(rec.clone()), memo).unwrap().1);
            }
            alone.apply_record(rec).unwrap();
            assert_eq!(proposer.dump(), alone.dump());
            assert_eq!(member.dump(), alone.dump());
        }
        // The stale memo was replaced by the proposer's replay, which the
        // member then installed.
        assert_eq!(replays, [false, false, true, false]);
        assert!(Arc::ptr_eq(&held(&proposer), &held(&member)));
        assert!(!Arc::ptr_eq(&held(&proposer), &held(&alone)));
        let s = proposer.dump().to_string_compact();
        assert!(s.contains(r#""s":["set",[1,2,3]]"#), "{s}");
        // Every replica drew what a replay would have.
        let rec = json(&format!(r#"{{"R":{{"{U2}":{{"name":"b"}}}}}}"#));
        let ids: Vec<_> = [&mut proposer, &mut member, &mut alone]
            .into_iter()
            .map(|s| s.apply_record(&rec).unwrap().0.unwrap().txn_id)
            .collect();
        assert_eq!(ids[1], ids[2]);
    }

    #[test]
    fn a_commit_is_recorded_as_column_diffs_or_full_values() {
        let mut s = server(ServerOptions::default());
        tx(
            &mut s,
            &format!(
                r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a","s":["set",[1,2]]}}}},
                    {{"op":"insert","table":"R","uuid":"{U2}","row":{{"name":"b"}}}}]"#
            ),
        );
        let ops = json(
            r#"[{"op":"mutate","table":"R","where":[["name","==","a"]],"mutations":[["s","insert",3]]},
                {"op":"update","table":"R","where":[["name","==","a"]],"row":{"n":4}},
                {"op":"delete","table":"R","where":[["name","==","b"]]},
                {"op":"comment","comment":"c"}]"#,
        );
        let commit = s.transact(ops.as_array().unwrap()).0.commit.unwrap();
        // Modified rows carry their changed columns only; sets as a diff
        // (here the added 3) or whole; deleted rows are null.
        assert_eq!(
            commit_record(&s.meta, &commit, true).to_string_compact(),
            format!(r#"{{"R":{{"{U1}":{{"n":4,"s":3}},"{U2}":null}}}}"#)
        );
        assert_eq!(
            commit_record(&s.meta, &commit, false).to_string_compact(),
            format!(r#"{{"R":{{"{U1}":{{"n":4,"s":["set",[1,2,3]]}},"{U2}":null}}}}"#)
        );
        assert_eq!(
            entry_data(&s.meta, &commit, true, 1000).to_string_compact(),
            format!(
                r#"[null,{{"R":{{"{U1}":{{"n":4,"s":3}},"{U2}":null}},"_date":1000,"_comment":"c","_is_diff":true}}]"#
            )
        );
    }

    /// The record text is JSON, exactly its own compact serialization
    /// (escapes, numbers, separators), so its length is the record's size.
    /// Each mode's text also tells the other's length.
    fn assert_compact_json(meta: &crate::DbMeta, c: &crate::Commit, diff: bool) {
        let (mut text, mut other_text) = (Vec::new(), Vec::new());
        let other = write_commit_record(meta, c, diff, &mut text);
        let back = write_commit_record(meta, c, !diff, &mut other_text);
        assert_eq!((other, back), (other_text.len(), text.len()), "diff={diff}");
        // The whole log record's sizes too, `_comment` and `_is_diff` in.
        let (mut rec, mut other_rec) = (Vec::new(), Vec::new());
        let sizes = super::write_txn_record(meta, c, diff, 1_700_000_000_000, &mut rec);
        super::write_txn_record(meta, c, !diff, 1_700_000_000_000, &mut other_rec);
        let want = super::RecordSizes {
            tables: text.len(),
            other_tables: other_text.len(),
            other: other_rec.len(),
        };
        assert_eq!(sizes, want, "diff={diff}");
        let parsed = ovsdb::json::parse(&text).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&parsed.to_bytes()),
            String::from_utf8_lossy(&text),
            "diff={diff}"
        );
    }

    #[test]
    fn a_record_is_written_as_its_compact_json_in_both_modes() {
        let mut s = server(ServerOptions::default());
        let steps = [
            // Two tables, strings to escape, a map, references; then a row
            // that changes nothing, diffs of a map and sets, garbage.
            format!(
                r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a\"\\\u0001é","m":["map",[["k","v"],["x\n","y"]]],"kids":["named-uuid","k1"]}}}},
                    {{"op":"insert","table":"K","uuid-name":"k1","row":{{"v":7}}}},
                    {{"op":"insert","table":"R","uuid":"{U2}","row":{{"name":"b","s":["set",[1,2,3]],"w":["uuid","{U1}"]}}}}]"#
            ),
            r#"[{"op":"update","table":"R","where":[["name","==","b"]],"row":{"name":"b"}}]"#
                .to_string(),
            r#"[{"op":"mutate","table":"R","where":[["name","==","b"]],"mutations":[["s","delete",2],["m","insert",["map",[["q","r"]]]]]},
                {"op":"update","table":"R","where":[["name","==","b"]],"row":{"n":-12,"kids":["set",[]]}}]"#
                .to_string(),
            r#"[{"op":"update","table":"R","where":[],"row":{"kids":["set",[]],"m":["map",[]]}}]"#
                .to_string(),
            format!(r#"[{{"op":"delete","table":"R","where":[["_uuid","==",["uuid","{U1}"]]]}}]"#),
        ];
        let (mut commits, mut first) = (0, None);
        for ops in &steps {
            let j = json(ops);
            let Some(c) = s.transact(j.as_array().unwrap()).0.commit else {
                continue;
            };
            commits += 1;
            first.get_or_insert_with(|| c.clone());
            for diff in [true, false] {
                assert_compact_json(&s.meta, &c, diff);
            }
        }
        assert_eq!(commits, 4);
        // A change list naming a table twice, and none.
        let mut c = first.unwrap();
        let mut twice = c.changes.tables.clone();
        twice.extend(c.changes.tables.iter().cloned().map(|mut t| {
            t.rows
                .iter_mut()
                .for_each(|r| r.uuid = ovsdb::Uuid(r.uuid.0 + 100));
            t
        }));
        c.changes.tables = twice;
        for diff in [true, false] {
            assert_compact_json(&s.meta, &c, diff);
        }
        // One object per table, its rows in the list's order.
        let rec = commit_record(&s.meta, &c, false);
        let names: Vec<_> = rec
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, _)| k.to_string())
            .collect();
        assert_eq!(names, ["K", "R"]);
        let r = rec.get("R").unwrap().as_object().unwrap();
        let moved = |u: &str| ovsdb::Uuid(ovsdb::Uuid::parse(u).unwrap().0 + 100).to_string();
        let rows: Vec<_> = r.iter().map(|(k, _)| k.to_string()).collect();
        assert_eq!(rows, [U1.to_string(), U2.to_string(), moved(U1), moved(U2)]);
        // The log record's text: the tables, then its own members.
        let mut text = Vec::new();
        super::write_txn_record(&s.meta, &c, true, 5, &mut text);
        let parsed = ovsdb::json::parse(&text).unwrap();
        assert_eq!(parsed.to_bytes(), text);
        assert_eq!(parsed.get("_is_diff"), Some(&ovsdb::json::Json::Bool(true)));
        c.changes.tables.clear();
        assert_eq!(commit_record(&s.meta, &c, true).to_string_compact(), "{}");
        let mut text = Vec::new();
        let sizes = super::write_txn_record(&s.meta, &c, false, 5, &mut text);
        assert_eq!(String::from_utf8(text).unwrap(), r#"{"_date":5}"#);
        // `{}` either way; the diff record adds `,"_is_diff":true`.
        assert_eq!((sizes.tables, sizes.other_tables, sizes.other), (2, 2, 27));
    }

    /// A record's rows are placed in the core without a transaction; the
    /// unique index's kept keys move with them, so that the next
    /// transaction's check finds a key a record gave and not one it took.
    #[test]
    fn records_move_the_kept_index_keys() {
        let mut s = server(ServerOptions::default());
        let rec = json(&format!(
            r#"{{"R":{{"{U1}":{{"name":"a"}},"{U2}":{{"name":"b"}}}}}}"#
        ));
        s.apply_record(&rec).unwrap();
        let rec = json(&format!(r#"{{"R":{{"{U1}":{{"name":"c"}}}}}}"#));
        s.apply_record(&rec).unwrap();
        let r = tx(
            &mut s,
            r#"[{"op":"insert","table":"R","row":{"name":"c"}}]"#,
        );
        assert!(r.contains("constraint violation") && r.contains(U1), "{r}");
        let r = tx(
            &mut s,
            r#"[{"op":"insert","table":"R","row":{"name":"a"}}]"#,
        );
        assert!(!r.contains("error"), "{r}");
        assert_eq!(s.row_count("R"), 3);
    }

    #[test]
    fn apply_record_replays_a_diff_and_tells_the_monitors() {
        let mut s = server(ServerOptions::default());
        tx(
            &mut s,
            &format!(
                r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a","s":["set",[1,2]]}}}}]"#
            ),
        );
        let sid = s.connect();
        s.handle(
            sid,
            &json(r#"{"id":1,"method":"monitor_cond","params":["t","m",{"R":{"columns":["s"]}}]}"#),
        );
        // With _is_diff, `s: 1` toggles 1 out of the set; without it, a
        // composite column's value replaces the old one.
        let rec = json(&format!(r#"{{"R":{{"{U1}":{{"s":1}}}},"_is_diff":true}}"#));
        let (commit, out) = s.apply_record(&rec).unwrap();
        assert_eq!(commit.unwrap().changes.row_count(), 1);
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].1.to_string_compact(),
            format!(
                r#"{{"id":null,"method":"update2","params":["m",{{"R":{{"{U1}":{{"modify":{{"s":1}}}}}}}}]}}"#
            )
        );
        assert_eq!(
            s.get_row(1, U1.parse().unwrap()).unwrap().cols()[4]
                .to_json()
                .to_string_compact(),
            "2"
        );
        let rec = json(&format!(r#"{{"R":{{"{U1}":{{"s":["set",[5,6]]}}}}}}"#));
        s.apply_record(&rec).unwrap();
        assert_eq!(
            s.get_row(1, U1.parse().unwrap()).unwrap().cols()[4]
                .to_json()
                .to_string_compact(),
            r#"["set",[5,6]]"#
        );
        // A record that changes nothing is no commit; a bad one changes nothing.
        assert!(s.apply_record(&rec).unwrap().0.is_none());
        let bad = json(&format!(r#"{{"R":{{"{U2}":null}}}}"#));
        assert_eq!(
            s.apply_record(&bad).unwrap_err().details,
            format!("record deletes row {U2}, which is not in table R")
        );
    }

    #[test]
    fn apply_commit_refuses_a_commit_prepared_against_an_older_row() {
        let mut s = server(ServerOptions::default());
        tx(
            &mut s,
            &format!(r#"[{{"op":"insert","table":"R","uuid":"{U1}","row":{{"name":"a"}}}}]"#),
        );
        let ops = json(r#"[{"op":"update","table":"R","where":[],"row":{"n":1}}]"#);
        let prepared = s.prepare(ops.as_array().unwrap()).commit.unwrap();
        tx(
            &mut s,
            r#"[{"op":"update","table":"R","where":[],"row":{"n":2}}]"#,
        );
        let e = s.apply_commit(&prepared).unwrap_err();
        assert_eq!(e.tag, "prerequisite check failed");
        assert_eq!(
            e.details,
            format!("row {U1} changed since the commit was prepared")
        );
        assert_eq!(
            s.get_row(1, U1.parse().unwrap()).unwrap().cols()[2]
                .to_json()
                .to_string_compact(),
            "2"
        );
    }
}
