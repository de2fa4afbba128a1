//! Transactions shaped like the ones `ovn-nbctl` sends against the real
//! OVN_Northbound schema, executed by the IDL crate's server model
//! (`ovsdb_server`), and the on-disk record sizes of §1.2.
//!
//! A server that proposes a write builds the `transact` request a client
//! would send ([`NbState::request`]), executes it on its own database model
//! without installing it ([`ovsdb_server::Server::prepare`], as a clustered
//! ovsdb-server does before it hands the result to Raft) and turns the
//! resulting commit into the log record ([`Proposal::from_commit`]) in both
//! storage modes: full rows (`--disable-file-column-diff`) and column diffs
//! (`"_is_diff":true`). Every member installs the committed record by
//! replaying it on its model (`apply_record`). Byte sizes are therefore
//! those of records a real schema-driven execution makes, not templates.

use crate::rng::Rng;
use ovsdb::json::{object, Json};
use ovsdb::StorageMode;
use ovsdb_server::DbMeta;
use ovsdb_server::{commit_record, write_txn_record, Commit, ServerRow};
use std::fmt::Write as _;
use std::rc::Rc;
use std::sync::Arc;

pub type Uuid = [u8; 36];

fn us(u: &Uuid) -> &str {
    // Uuids are produced by Rng::uuid and are always ASCII hex + '-'.
    std::str::from_utf8(u).unwrap_or("00000000-0000-0000-0000-000000000000")
}

/// One workload operation, as typed on the ovn-nbctl command line.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Init,
    LsAdd(u64),
    PgAdd,
    AclAdd(u64),
    /// Delete up to `batch` ACLs, lowest priorities first, in one transaction.
    AclDelBatch(u64),
    PgDel,
    LspAdd(u64),
    /// `lsp-add lsJ lspK`: port K on the switches in turn (`pod-add`).
    PodAdd(u64),
}

impl Op {
    pub fn args(&self) -> String {
        match self {
            Op::Init => "init".into(),
            Op::LsAdd(k) => format!("ls-add ls{k}"),
            Op::PgAdd => "pg-add pg1".into(),
            Op::AclAdd(p) => format!("--log acl-add pg1 from-lport {p} udp drop"),
            Op::AclDelBatch(_) => "acl-del".into(),
            Op::PgDel => "pg-del pg1".into(),
            Op::LspAdd(k) => format!("lsp-add sw lsp{k}"),
            Op::PodAdd(k) => format!("pod-add lsp{k}"),
        }
    }
}

/// What the client (ovn-nbctl) knows of the OVN_Northbound rows the
/// workloads touch, to name them in its requests; every server keeps one
/// and updates it from committed transactions. The database itself is the
/// server's `ovsdb_server` model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NbState {
    /// The switch `lsp-add sw` adds ports to: the last one created.
    pub last_switch: Option<Uuid>,
    /// Every switch created, with its number (`pod-add` takes them in turn).
    pub switches: Vec<(u64, Uuid)>,
    pub pg: Option<Uuid>,
    /// (priority, uuid) of ACLs in the port group.
    pub acls: Vec<(u64, Uuid)>,
}

/// A `transact` request as the client sends it (without the database
/// name), and what it means for the client's view.
#[derive(Clone, Debug)]
pub struct Request {
    pub ops: Vec<Json>,
    pub inserted: Option<Uuid>,
}

/// A proposed transaction: the workload op and the log record the
/// proposing server's database model made for it.
#[derive(Clone, Debug)]
pub struct Proposal {
    pub op: Op,
    pub inserted: Option<Uuid>,
    /// The record as written to the log, as compact JSON text: built once,
    /// small, and parsed only by a replica that replays it
    /// ([`Proposal::record`]).
    record: Box<[u8]>,
    /// Serialized size of the record in full-value (`[0]`) and diff
    /// (`[1]`) storage.
    pub lens: [usize; 2],
    /// The same without `_date`, `_comment` and `_is_diff`: the size of
    /// the bare table object, which the `ovsdb` crate's database computes
    /// independently (`core_db` cross-check).
    pub table_lens: [usize; 2],
    /// Sizes already cross-checked against the `ovsdb` crate's database
    /// (the record is the same for every server, so once is enough).
    pub size_checked: std::cell::Cell<bool>,
    /// The last `core_db` check of this record that the core database
    /// accepted: the database it was applied to and the one it made. A
    /// server whose check database is that same one (the servers apply the
    /// same records from the same empty database, so they share it) takes
    /// the result instead of replaying the record again. Weak: a result no
    /// server holds any more is not kept.
    pub core_memo: std::cell::RefCell<Option<CoreMemo>>,
    /// What replaying the record does: at first the commit it was made
    /// from, else what the first database model to replay it did. A member
    /// or relay holding the same rows installs that instead of decoding
    /// the record again ([`Proposal::replay_on`]). None once released
    /// ([`Proposal::release`]).
    pub replayed: std::cell::RefCell<Option<ovsdb_server::Replayed>>,
    /// [`db_bytes_delta`] of the commit in `replayed`, once measured.
    pub db_delta: std::cell::Cell<Option<i64>>,
}

/// One `core_db` check's databases, before and after a record (see
/// [`Proposal::core_memo`]).
#[derive(Clone, Debug)]
pub struct CoreMemo {
    pub before: std::sync::Weak<ovsdb::Database>,
    pub after: std::sync::Weak<ovsdb::Database>,
}

/// The OVN_Northbound 7.0.0 schema exactly as ovsdb-server 3.1 stores it in
/// a clustered header (`prev_data[0]`): extracted byte for byte from the
/// real `static/samples/ls-add-follower/s2.db` (ephemeral columns already
/// made persistent, members in the server's order).
pub const NB_SCHEMA: &str = include_str!("../data/ovn-nb.clustered-schema.json");

/// The NB schema as the IDL server model's metadata, parsed once per
/// process (None only if the embedded schema failed to parse).
pub fn nb_meta() -> Option<Arc<DbMeta>> {
    use std::sync::OnceLock;
    static META: OnceLock<Option<Arc<DbMeta>>> = OnceLock::new();
    META.get_or_init(|| DbMeta::from_text(NB_SCHEMA).ok().map(Arc::new))
        .clone()
}

/// An empty database model of a cluster member. It keeps no monitor
/// history (the simulator has no monitoring clients).
///
/// The schema is a constant of this crate, checked by its tests; it
/// cannot fail to parse at run time.
pub fn empty_model() -> ovsdb_server::Server {
    let meta = nb_meta().expect("embedded OVN_Northbound schema parses");
    ovsdb_server::Server::with_meta(
        meta,
        ovsdb_server::ServerOptions {
            clustered: false,
            seed: 0x5eed,
            ..Default::default()
        },
    )
}

/// The empty core database (`ovsdb::Database`) with the NB schema that
/// every server's `core_db` check starts from, made once per process: one
/// object, so the servers' checks share their results (see
/// [`Proposal::core_memo`]).
pub fn shared_empty_core_db() -> Option<Arc<ovsdb::Database>> {
    use std::sync::OnceLock;
    static EMPTY: OnceLock<Option<Arc<ovsdb::Database>>> = OnceLock::new();
    EMPTY
        .get_or_init(|| {
            ovsdb::DatabaseSchema::parse(NB_SCHEMA.as_bytes())
                .ok()
                .map(|s| Arc::new(ovsdb::Database::new(Arc::new(s))))
        })
        .clone()
}

/// An empty core database with the NB schema, of its own.
pub fn empty_core_db() -> Option<ovsdb::Database> {
    shared_empty_core_db().map(Arc::unwrap_or_clone)
}

/// Where a storage mode's size sits in a [`Proposal`]'s per-mode sizes:
/// full values first, then column diffs.
fn slot(storage: StorageMode) -> usize {
    match storage {
        StorageMode::Full => 0,
        StorageMode::Diff => 1,
    }
}

/// The storage mode a run does not use, whose sizes are kept alongside
/// (the entries' `alt` sizes, the page's "sizes as" view).
pub fn other_mode(storage: StorageMode) -> StorageMode {
    match storage {
        StorageMode::Full => StorageMode::Diff,
        StorageMode::Diff => StorageMode::Full,
    }
}

impl Proposal {
    /// The log record of `commit` (made by `meta`'s model) with its date,
    /// in the storage mode of the run, and its size in both modes.
    pub fn from_commit(
        meta: &DbMeta,
        op: &Op,
        req: &Request,
        commit: &Commit,
        date_ms: u64,
        storage: StorageMode,
    ) -> Proposal {
        let date = date_ms.min(i64::MAX as u64) as i64;
        // Only modified rows differ between the modes: the other mode's
        // sizes come with the record, from the values that differ.
        let diff = storage == StorageMode::Diff;
        let mut text = Vec::with_capacity(256);
        let sizes = write_txn_record(meta, commit, diff, date, &mut text);
        let record = text.into_boxed_slice();
        let (this, other) = (slot(storage), slot(other_mode(storage)));
        let mut lens = [0; 2];
        (lens[this], lens[other]) = (record.len(), sizes.other);
        let mut table_lens = [0; 2];
        (table_lens[this], table_lens[other]) = (sizes.tables, sizes.other_tables);
        // The tests' (debug) builds measure both records as built.
        debug_assert_eq!(
            table_lens[this],
            commit_record(meta, commit, diff).serialized_len()
        );
        debug_assert_eq!(
            table_lens[other],
            commit_record(meta, commit, !diff).serialized_len()
        );
        debug_assert_eq!(
            lens[other],
            ovsdb_server::txn_record(meta, commit, !diff, date).serialized_len()
        );
        Proposal {
            op: op.clone(),
            inserted: req.inserted,
            record,
            lens,
            table_lens,
            size_checked: std::cell::Cell::new(false),
            core_memo: std::cell::RefCell::new(None),
            // Members holding the rows it was prepared against (the
            // proposer's, usually) install the commit itself.
            replayed: std::cell::RefCell::new(Some(ovsdb_server::Replayed::prepared(
                commit.clone(),
            ))),
            db_delta: std::cell::Cell::new(None),
        }
    }

    /// The record as written to the log in the run's storage mode
    /// (`{table: {uuid: row or null}}` with `_date`, `_comment` and, for
    /// diffs, `_is_diff`), members in insertion order (see
    /// [`Proposal::ordered_record`]), parsed from its text.
    pub fn record(&self) -> ovsdb::error::Result<Json> {
        ovsdb::json::parse(&self.record)
            .map_err(|e| ovsdb::error::Error::syntax(format!("log record: {e}")))
    }

    /// Let go of the install memo, keeping the record: the memo holds whole
    /// row versions (a set that grows by one element per transaction would
    /// be kept once per version), the record what changed. A member or
    /// relay that applies the entry later replays the record.
    pub fn release(&self) {
        self.replayed.take();
        self.db_delta.set(None);
    }

    /// Install the committed record on a member's or relay's database
    /// model, as ovsdb-server replays an entry (sharing the first model's
    /// replay: [`ovsdb_server::Server::apply_record_shared`]), and grow
    /// `bytes`, the size of the model's rows in a snapshot, by what it
    /// changed ([`grow_db_bytes`], measured once per commit installed).
    pub fn replay_on(
        &self,
        model: &mut ovsdb_server::Server,
        bytes: &mut u64,
    ) -> ovsdb::error::Result<()> {
        let mut memo = self.replayed.borrow_mut();
        // Released: replayed, and the memo that replay leaves let go of
        // again (nothing else would free it).
        let released = memo.is_none();
        let (_, replayed) = model.apply_record_shared(|| self.record(), &mut memo)?;
        if replayed {
            self.db_delta.set(None);
        }
        if let Some(c) = memo.as_ref().and_then(|r| r.commit()) {
            let delta = self.db_delta.get().unwrap_or_else(|| {
                let d = db_bytes_delta(&model.meta, c);
                self.db_delta.set(Some(d));
                d
            });
            *bytes = (*bytes as i64 + delta).max(0) as u64;
        }
        if released {
            *memo = None;
            self.db_delta.set(None);
        }
        Ok(())
    }

    /// The record with its members in ovsdb-server's hash order, as
    /// written to a file (sizes do not depend on the order).
    pub fn ordered_record(&self) -> ovsdb::error::Result<Json> {
        let mut r = self.record()?;
        r.reorder_shash_recursive();
        Ok(r)
    }

    /// Serialized size of the record in the given storage mode.
    pub fn len(&self, storage: StorageMode) -> usize {
        self.lens[slot(storage)]
    }

    /// Size of the bare table object (without `_comment`/`_date`/`_is_diff`).
    pub fn tables_len(&self, storage: StorageMode) -> usize {
        self.table_lens[slot(storage)]
    }

    /// The record's JSON text as written to the log.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.record).into_owned()
    }
}

fn uuid_json(u: &Uuid) -> Json {
    Json::Array(vec![Json::from("uuid"), Json::String(us(u).to_string())])
}

fn uuid_eq(u: &Uuid) -> Json {
    Json::Array(vec![Json::Array(vec![
        Json::from("_uuid"),
        Json::from("=="),
        uuid_json(u),
    ])])
}

fn uuid_set(set: &[&Uuid]) -> Json {
    Json::Array(vec![
        Json::from("set"),
        Json::Array(set.iter().map(|u| uuid_json(u)).collect()),
    ])
}

fn insert(table: &str, row: Vec<(&str, Json)>, uuid: &Uuid) -> Json {
    object(vec![
        ("op", Json::from("insert")),
        ("table", Json::from(table)),
        ("row", object(row)),
        ("uuid", Json::String(us(uuid).to_string())),
    ])
}

fn mutate(table: &str, row: &Uuid, column: &str, mutator: &str, arg: Json) -> Json {
    object(vec![
        ("op", Json::from("mutate")),
        ("table", Json::from(table)),
        ("where", uuid_eq(row)),
        (
            "mutations",
            Json::Array(vec![Json::Array(vec![
                Json::from(column),
                Json::from(mutator),
                arg,
            ])]),
        ),
    ])
}

impl NbState {
    /// The switch (number, row) `pod-add` puts port `k` on: the switches in
    /// turn, in the order they were made.
    fn pod_switch(&self, k: u64) -> Result<(u64, Uuid), String> {
        let n = self.switches.len() as u64;
        if n == 0 {
            return Err("pod-add: no logical switch yet".to_string());
        }
        Ok(self.switches[(k.saturating_sub(1) % n) as usize])
    }

    /// The `transact` request ovn-nbctl would send for `op` against this
    /// view (the proposing server's applied database), with new row UUIDs
    /// from `rng`. An error is what ovn-nbctl says when the command cannot
    /// run (it then sends nothing).
    pub fn request(&self, op: &Op, comment_prefix: &str, rng: &mut Rng) -> Result<Request, String> {
        let comment = match op {
            Op::AclDelBatch(b) => {
                let mut sorted = self.acls.clone();
                ovsdb::order::sort(&mut sorted);
                let mut c = comment_prefix.to_string();
                for (p, _) in sorted.iter().take(*b as usize) {
                    let _ = write!(c, " -- acl-del pg1 from-lport {p} udp");
                }
                c
            }
            Op::PodAdd(k) => {
                let (j, _) = self.pod_switch(*k)?;
                format!("{comment_prefix} lsp-add ls{j} lsp{k}")
            }
            // (Not `format!` with the args' own: one formatting per
            // request, not two.)
            _ => [comment_prefix, " ", &op.args()].concat(),
        };
        let need_pg = || {
            self.pg
                .ok_or_else(|| "pg1: port group name not found".to_string())
        };
        let inserted = match op {
            Op::Init | Op::LsAdd(_) | Op::PgAdd | Op::AclAdd(_) | Op::LspAdd(_) | Op::PodAdd(_) => {
                Some(rng.uuid())
            }
            _ => None,
        };
        let new = inserted.unwrap_or([b'0'; 36]);
        let mut ops = Vec::new();
        match op {
            Op::Init => ops.push(insert("NB_Global", vec![], &new)),
            Op::LsAdd(k) => ops.push(insert(
                "Logical_Switch",
                vec![("name", Json::String(format!("ls{k}")))],
                &new,
            )),
            Op::PgAdd => ops.push(insert(
                "Port_Group",
                vec![("name", Json::from("pg1"))],
                &new,
            )),
            Op::AclAdd(p) => {
                let pg = need_pg()?;
                ops.push(insert(
                    "ACL",
                    vec![
                        ("action", Json::from("drop")),
                        ("direction", Json::from("from-lport")),
                        ("log", Json::Bool(true)),
                        ("match", Json::from("udp")),
                        ("priority", Json::Integer(*p as i64)),
                    ],
                    &new,
                ));
                ops.push(mutate("Port_Group", &pg, "acls", "insert", uuid_json(&new)));
            }
            Op::AclDelBatch(b) => {
                let pg = need_pg()?;
                let mut sorted = self.acls.clone();
                ovsdb::order::sort(&mut sorted);
                let gone: Vec<&Uuid> = sorted.iter().take(*b as usize).map(|(_, u)| u).collect();
                // Removing them from the group garbage-collects the rows.
                ops.push(mutate("Port_Group", &pg, "acls", "delete", uuid_set(&gone)));
            }
            Op::PgDel => {
                let pg = need_pg()?;
                // ACLs still in the group lose their only (strong)
                // reference and are garbage-collected with it.
                ops.push(object(vec![
                    ("op", Json::from("delete")),
                    ("table", Json::from("Port_Group")),
                    ("where", uuid_eq(&pg)),
                ]));
            }
            Op::LspAdd(k) | Op::PodAdd(k) => {
                let sw = if let Op::PodAdd(_) = op {
                    self.pod_switch(*k)?.1
                } else {
                    self.last_switch
                        .ok_or_else(|| "sw: switch name not found".to_string())?
                };
                ops.push(insert(
                    "Logical_Switch_Port",
                    vec![("name", Json::String(format!("lsp{k}")))],
                    &new,
                ));
                ops.push(mutate(
                    "Logical_Switch",
                    &sw,
                    "ports",
                    "insert",
                    uuid_json(&new),
                ));
            }
        }
        ops.push(object(vec![
            ("op", Json::from("comment")),
            ("comment", Json::String(comment)),
        ]));
        Ok(Request { ops, inserted })
    }

    /// Apply a committed transaction.
    pub fn apply(&mut self, t: &Proposal) {
        match &t.op {
            Op::Init | Op::LspAdd(_) | Op::PodAdd(_) => {}
            Op::LsAdd(k) => {
                self.last_switch = t.inserted;
                if let Some(u) = t.inserted {
                    self.switches.push((*k, u));
                }
            }
            Op::PgAdd => {
                self.pg = t.inserted;
                self.acls.clear();
            }
            Op::AclAdd(p) => {
                if let Some(u) = t.inserted {
                    self.acls.push((*p, u));
                }
            }
            Op::AclDelBatch(b) => {
                ovsdb::order::sort(&mut self.acls);
                let k = (*b as usize).min(self.acls.len());
                self.acls.drain(..k);
            }
            Op::PgDel => {
                self.pg = None;
                self.acls.clear();
            }
        }
    }
}

/// JSON size of one row in a snapshot record: `"<uuid>":{...},` with the
/// row's non-default columns.
fn row_snapshot_len(meta: &DbMeta, table: usize, row: &ovsdb_server::Row) -> u64 {
    let Some(t) = meta.tables.get(table) else {
        return 0;
    };
    let mut n = 38 + 1 + 2 + 1; // quoted uuid, ':', braces, ','
    let mut members = 0;
    for (c, d) in t.columns.iter().zip(row.cols()) {
        if !d.is_default(&c.ty) {
            n += c.name.len() + 3 + d.json_len();
            members += 1;
        }
    }
    (n + members.max(1) - 1) as u64
}

/// `bytes` (the rows' share of a snapshot record) after `commit`.
/// The numbers K of the switches named `lsK` in a model's database (what
/// the `ls-add` workload wrote), for the checks that acknowledged writes
/// are there.
pub fn switch_numbers(m: &ovsdb_server::Server) -> Vec<u64> {
    m.meta
        .table("Logical_Switch")
        .and_then(|t| Some((t, m.meta.tables[t].column("name")?)))
        .map(|(t, name)| {
            m.rows(t)
                .filter_map(|r| {
                    r.cols()[name]
                        .as_scalar()?
                        .as_str()?
                        .strip_prefix("ls")?
                        .parse()
                        .ok()
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn grow_db_bytes(bytes: u64, meta: &DbMeta, commit: &Commit) -> u64 {
    (bytes as i64 + db_bytes_delta(meta, commit)).max(0) as u64
}

/// How much `commit` changes the size of a snapshot's rows.
pub fn db_bytes_delta(meta: &DbMeta, commit: &Commit) -> i64 {
    let mut b = 0i64;
    for tc in &commit.changes.tables {
        for ch in &tc.rows {
            match (&ch.old, &ch.new) {
                (Some(o), Some(n)) => b += modify_snapshot_delta(meta, tc.table, o, n),
                (o, n) => {
                    if let Some(o) = o {
                        b -= row_snapshot_len(meta, tc.table, o) as i64;
                    }
                    if let Some(n) = n {
                        b += row_snapshot_len(meta, tc.table, n) as i64;
                    }
                }
            }
        }
    }
    b
}

/// `row_snapshot_len` of `new` less that of `old`, from the columns that
/// differ: an equal column adds the same to both (a modify changes few of
/// a row's columns, and comparing is cheaper than measuring twice). The members' commas need the counts of non-default
/// columns only when one side may have none: when no equal column is
/// non-default.
fn modify_snapshot_delta(
    meta: &DbMeta,
    table: usize,
    old: &ovsdb_server::Row,
    new: &ovsdb_server::Row,
) -> i64 {
    let Some(t) = meta.tables.get(table) else {
        return 0;
    };
    let (mut d, mut members_old, mut members_new) = (0i64, 0i64, 0i64);
    let mut shared_member = false;
    for ((c, a), b) in t.columns.iter().zip(old.cols()).zip(new.cols()) {
        // Equal datums serialize alike, but for reals (`0.0 == -0.0`).
        let real = |b: &ovsdb::types::BaseType| b.atomic == ovsdb::types::AtomicType::Real;
        if !real(&c.ty.key) && !c.ty.value.as_ref().is_some_and(real) && a == b {
            shared_member = shared_member || !a.is_default(&c.ty);
            continue;
        }
        if !a.is_default(&c.ty) {
            d -= (c.name.len() + 3 + a.json_len()) as i64;
            members_old += 1;
        }
        if !b.is_default(&c.ty) {
            d += (c.name.len() + 3 + b.json_len()) as i64;
            members_new += 1;
        }
    }
    if shared_member {
        d + members_new - members_old
    } else {
        d + members_new.max(1) - members_old.max(1)
    }
}

/// The whole database as the `data` half of a snapshot (`prev_data[1]`):
/// one object per table, rows with their non-default columns, in
/// ovsdb-server's hash order.
pub fn snapshot_record(model: &ovsdb_server::Server) -> Json {
    use ovsdb::json::Object;
    let meta = &model.meta;
    let mut out = Object::new();
    for (ti, t) in meta.tables.iter().enumerate() {
        let mut rows = Object::new();
        for r in model.rows(ti) {
            let mut o = Object::new();
            for (c, d) in t.columns.iter().zip(r.cols()) {
                if !d.is_default(&c.ty) {
                    o.insert(c.name.clone(), d.to_json());
                }
            }
            rows.insert(r.uuid.to_string(), Json::Object(o));
        }
        if !rows.is_empty() {
            out.insert(t.name.clone(), Json::Object(rows));
        }
    }
    let mut j = Json::Object(out);
    j.reorder_shash_recursive();
    j
}

/// Shared handle used inside log entries.
pub type ProposalRef = Rc<Proposal>;

// ---------------------------------------------------------------- record sizes

/// Decimal digits of n.
pub fn digits(mut n: u64) -> u64 {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Bytes of one framed record whose JSON (including the trailing newline) is
/// `json_len` bytes: `OVSDB CLUSTER <len> <40 hex>\n` + JSON.
pub fn framed(json_len: u64) -> u64 {
    14 + digits(json_len) + 1 + 40 + 1 + json_len
}

/// `{"eid":"…","data":[null,TXN],"term":T,"index":I}\n`
pub fn data_entry_len(txn_len: u64, term: u64, index: u64) -> u64 {
    framed(8 + 36 + 15 + txn_len + 9 + digits(term) + 9 + digits(index) + 2)
}
/// `{"term":T,"index":I}\n`
pub fn noop_entry_len(term: u64, index: u64) -> u64 {
    framed(8 + digits(term) + 9 + digits(index) + 2)
}
/// `{"servers":{"<sid>":"tcp:127.0.0.1:NNNNN",…},"term":T,"index":I}\n`
pub fn servers_entry_len(n_servers: u64, term: u64, index: u64) -> u64 {
    let per = 1 + 36 + 3 + 19 + 1; // "sid":"tcp:127.0.0.1:17641"
    framed(
        12 + n_servers * per
            + n_servers.saturating_sub(1)
            + 1
            + 8
            + digits(term)
            + 9
            + digits(index)
            + 2,
    )
}
/// `{"election_timer":MS,"term":T,"index":I}\n`
pub fn et_entry_len(ms: u64, term: u64, index: u64) -> u64 {
    framed(18 + digits(ms) + 8 + digits(term) + 9 + digits(index) + 2)
}
/// `{"commit_index":N}\n`
pub fn commit_len(index: u64) -> u64 {
    framed(16 + digits(index) + 2)
}
/// `{"term":T}\n`
pub fn term_len(term: u64) -> u64 {
    framed(8 + digits(term) + 2)
}
/// `{"vote":"<sid>","term":T}\n` and `{"leader":"<sid>","term":T}\n`
pub fn vote_len(term: u64) -> u64 {
    framed(9 + 36 + 9 + digits(term) + 2)
}
pub fn leader_len(term: u64) -> u64 {
    framed(11 + 36 + 9 + digits(term) + 2)
}
/// `{"note":"transfer leadership","comment":"…"}\n` (comment is short text)
pub fn note_len() -> u64 {
    framed(60)
}
/// JSON size of the snapshot header of a fresh OVN_Northbound cluster
/// (the schema inside `prev_data` dominates). Measured on the real 3.1
/// samples: 14779 bytes of JSON for `s1.db` of every NB scenario; joiners'
/// headers carry `"prev_election_timer":1000` in addition (+25 bytes).
pub const NB_HEADER_JSON: u64 = 14_779;

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn record_lengths_match_sample_records() {
        // Lengths of real records from static/samples/acl-portgroup-diff/s2.db
        assert_eq!(noop_entry_len(1, 2), 58 + 21);
        assert_eq!(commit_len(2), 58 + 19);
        assert_eq!(commit_len(170), 58 + 21);
        assert_eq!(term_len(1), 58 + 11);
        assert_eq!(vote_len(2), 58 + 57);
        assert_eq!(leader_len(2), 58 + 59);
        assert_eq!(servers_entry_len(2, 1, 3), 59 + 155);
        assert_eq!(servers_entry_len(3, 1, 4), 59 + 216);
        assert_eq!(framed(14779), 61 + 14779);
    }

    /// Propose `op` the way a server does: request, prepare on the model,
    /// record; then install it.
    fn propose(
        model: &mut ovsdb_server::Server,
        st: &mut NbState,
        op: Op,
        date: u64,
        rng: &mut Rng,
    ) -> Proposal {
        let pfx = "ovn-nbctl: ovn-nbctl --db=unix:s1.sock,unix:s2.sock,unix:s3.sock";
        let req = st.request(&op, pfx, rng).unwrap();
        let out = model.prepare(&req.ops);
        let c = out.commit.expect("commits");
        let t = Proposal::from_commit(&model.meta, &op, &req, &c, date, StorageMode::Diff);
        model.apply_commit(&c).unwrap();
        st.apply(&t);
        t
    }

    #[test]
    fn model_made_records_have_the_real_samples_sizes() {
        let mut rng = Rng::new(1);
        let mut st = NbState::default();
        let mut m = empty_model();
        let t = propose(&mut m, &mut st, Op::Init, 1795986962030, &mut rng);
        // Real record sizes, static/samples/acl-portgroup{,-diff}/s2.db:
        // the whole entry at index 5 is 259 (diff) / 243 (full) bytes.
        assert_eq!(
            data_entry_len(t.len(StorageMode::Diff) as u64, 1, 5),
            59 + 259
        );
        assert_eq!(
            data_entry_len(t.len(StorageMode::Full) as u64, 1, 5),
            59 + 243
        );
        let t = propose(&mut m, &mut st, Op::PgAdd, 1795986962037, &mut rng);
        assert_eq!(
            data_entry_len(t.len(StorageMode::Diff) as u64, 1, 6),
            59 + 278
        );
        let t = propose(&mut m, &mut st, Op::AclAdd(1001), 1795986962046, &mut rng);
        assert_eq!(
            data_entry_len(t.len(StorageMode::Diff) as u64, 1, 7),
            59 + 483
        );
        assert_eq!(
            data_entry_len(t.len(StorageMode::Full) as u64, 1, 7),
            59 + 467
        );
        let t = propose(&mut m, &mut st, Op::AclAdd(1002), 1795986962051, &mut rng);
        assert_eq!(
            data_entry_len(t.len(StorageMode::Full) as u64, 1, 8),
            59 + 525
        );
        // The record is the diff-mode one and says so.
        let record = t.record().unwrap();
        assert_eq!(record.get("_is_diff"), Some(&Json::Bool(true)));
        assert_eq!(t.text().len(), t.len(StorageMode::Diff));
        // The text is the tree's serialization, and parses back to it.
        assert_eq!(record.to_string_compact(), t.text());
        assert_eq!(
            t.ordered_record().unwrap().serialized_len(),
            t.len(StorageMode::Diff)
        );
    }

    #[test]
    fn ops_read_as_ovn_nbctl_arguments() {
        assert_eq!(Op::Init.args(), "init");
        assert_eq!(Op::LsAdd(0).args(), "ls-add ls0");
        assert_eq!(
            Op::AclAdd(1002).args(),
            "--log acl-add pg1 from-lport 1002 udp drop"
        );
        assert_eq!(Op::PodAdd(30).args(), "pod-add lsp30");
        let mut rng = Rng::new(1);
        let req = NbState::default()
            .request(&Op::LsAdd(3), "ovn-nbctl:", &mut rng)
            .unwrap();
        let comment = req.ops.last().and_then(|o| o.get("comment"));
        assert_eq!(comment, Some(&Json::from("ovn-nbctl: ls-add ls3")));
    }

    #[test]
    fn commands_ovn_nbctl_refuses_send_nothing() {
        let mut rng = Rng::new(1);
        let st = NbState::default();
        for op in [Op::AclAdd(1), Op::AclDelBatch(3), Op::PgDel, Op::LspAdd(1)] {
            assert!(st.request(&op, "x", &mut rng).is_err(), "{op:?}");
        }
    }

    #[test]
    fn snapshot_size_follows_the_model() {
        let mut rng = Rng::new(3);
        let mut st = NbState::default();
        let mut m = empty_model();
        let mut bytes = 0;
        for op in [
            Op::Init,
            Op::PgAdd,
            Op::AclAdd(5),
            Op::AclAdd(6),
            Op::LsAdd(1),
            Op::LspAdd(1),
        ] {
            let req = st.request(&op, "c", &mut rng).unwrap();
            let c = m.prepare(&req.ops).commit.unwrap();
            let t = Proposal::from_commit(&m.meta, &op, &req, &c, 0, StorageMode::Full);
            assert_eq!(t.text().len(), t.len(StorageMode::Full), "{op:?}");
            m.apply_commit(&c).unwrap();
            st.apply(&t);
            bytes = grow_db_bytes(bytes, &m.meta, &c);
            // `bytes` counts each row with a comma after it; the record
            // adds the outer braces and, per table, `"name":{}` and a
            // comma, less the last one: exactly one byte per table more.
            let rec = snapshot_record(&m);
            let tables = rec.as_object().unwrap();
            let names: usize = tables.keys().map(|k| k.len() + 3 + 2).sum();
            assert_eq!(bytes as usize + names + 1, rec.serialized_len(), "{op:?}");
        }
        let before = bytes;
        let req = st.request(&Op::PgDel, "c", &mut rng).unwrap();
        let c = m.prepare(&req.ops).commit.unwrap();
        m.apply_commit(&c).unwrap();
        assert!(grow_db_bytes(before, &m.meta, &c) < before);
        assert_eq!(
            m.row_count("ACL"),
            0,
            "ACLs garbage-collected with the group"
        );
    }

    /// Members install what the proposer prepared, sharing its rows; a
    /// released proposal keeps only its record, which a late member
    /// replays to the same rows and the same snapshot size.
    #[test]
    fn released_proposals_replay_their_record() {
        let mut rng = Rng::new(7);
        let mut st = NbState::default();
        let mut proposer = empty_model();
        let (mut member, mut late) = (empty_model(), empty_model());
        let (mut b_member, mut b_late, mut b_proposer) = (0, 0, 0);
        for op in [
            Op::Init,
            Op::PgAdd,
            Op::AclAdd(5),
            Op::AclAdd(6),
            Op::AclDelBatch(1),
        ] {
            let req = st.request(&op, "c", &mut rng).unwrap();
            let c = proposer.prepare(&req.ops).commit.unwrap();
            let t = Proposal::from_commit(&proposer.meta, &op, &req, &c, 9, StorageMode::Diff);
            t.replay_on(&mut proposer, &mut b_proposer).unwrap();
            t.replay_on(&mut member, &mut b_member).unwrap();
            let record = t.record().unwrap();
            t.release();
            assert!(t.replayed.borrow().is_none());
            assert_eq!(t.record().unwrap(), record, "{op:?}");
            t.replay_on(&mut late, &mut b_late).unwrap();
            assert!(t.replayed.borrow().is_none(), "no memo after release");
            st.apply(&t);
            assert_eq!(late.dump(), member.dump(), "{op:?}");
            assert_eq!((b_late, b_member), (b_proposer, b_proposer), "{op:?}");
        }
        // The proposer and the member share row objects; the late member
        // has its own.
        let pg = proposer.meta.table("Port_Group").unwrap();
        let (a, b, c) = (
            proposer.rows(pg).next().unwrap(),
            member.rows(pg).next().unwrap(),
            late.rows(pg).next().unwrap(),
        );
        assert!(Arc::ptr_eq(a, b) && !Arc::ptr_eq(a, c));
    }

    #[test]
    fn pod_add_puts_the_ports_on_the_switches_in_turn() {
        let mut rng = Rng::new(5);
        let mut st = NbState::default();
        let mut m = empty_model();
        assert!(st.request(&Op::PodAdd(1), "c", &mut rng).is_err());
        let mut ops = vec![Op::Init, Op::LsAdd(1), Op::LsAdd(2), Op::LsAdd(3)];
        ops.extend((1..=7).map(Op::PodAdd));
        let mut comments = Vec::new();
        for op in ops {
            let req = st.request(&op, "c", &mut rng).unwrap();
            let c = m.prepare(&req.ops).commit.unwrap();
            let t = Proposal::from_commit(&m.meta, &op, &req, &c, 0, StorageMode::Diff);
            m.apply_commit(&c).unwrap();
            st.apply(&t);
            if let Op::PodAdd(_) = op {
                let last = req.ops.last().unwrap();
                comments.push(last.get("comment").unwrap().as_str().unwrap().to_string());
            }
        }
        // Port k on switch (k-1) mod 3 + 1, and the comment names it as
        // ovn-nbctl's command would.
        let want: Vec<String> = (1..=7u64)
            .map(|k| format!("c lsp-add ls{} lsp{k}", (k - 1) % 3 + 1))
            .collect();
        assert_eq!(comments, want);
        assert_eq!(m.row_count("Logical_Switch_Port"), 7);
        let rec = snapshot_record(&m);
        let switches = rec.get("Logical_Switch").unwrap().as_object().unwrap();
        let mut sizes: Vec<usize> = switches
            .iter()
            .map(|(_, row)| match row.get("ports") {
                Some(Json::Array(a)) if a.first().and_then(Json::as_str) == Some("set") => {
                    a[1].as_array().map_or(0, <[Json]>::len)
                }
                Some(_) => 1,
                None => 0,
            })
            .collect();
        ovsdb::order::sort(&mut sizes);
        assert_eq!(sizes, vec![2, 2, 3]);
    }
}
