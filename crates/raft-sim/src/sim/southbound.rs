//! Southbound workloads in ovn-heater's shape: ovn-northd writes the rows
//! of each committed `lsp-add` (a `Port_Binding` for the port, bound to
//! chassis `k mod chassis`, and `lflows_per_port` `Logical_Flow` rows) to
//! the Southbound, and `chassis` ovn-controller clients with conditional
//! monitors receive them from the server they are connected to. None of it
//! runs with `chassis = 0`.
//!
//! The smallest honest model (`scenarios/README.md`, "Southbound"):
//! * northd batches. Its main loop runs one iteration at a time; an
//!   iteration computes (`northd_delay`) and sends one Southbound
//!   transaction with the rows of every port whose NB commit reached
//!   northd since the last one, and no iteration starts while that
//!   transaction is in flight: the ports that arrive while northd computes
//!   or waits for the reply all go into the next one, which starts when
//!   the reply arrives. Always on, as in every ovn-northd. What it rests
//!   on (OVN main 2411e964d, OVS main d6a632a9b):
//!   - OVS `lib/ovsdb-idl.c`, `ovsdb_idl_loop_run` (the `open_txn`
//!     assignment, l. 4584): a loop opens no new transaction while its
//!     `committing_txn` is set, that is from `ovsdb_idl_loop_commit_and_wait`
//!     (l. 4695–4713), which makes the open transaction the committing
//!     one, until `ovsdb_idl_try_commit_loop_txn` sees it complete (it
//!     stays set while the status is `TXN_INCOMPLETE`, l. 4669) and asks
//!     for an immediate wake-up on success (l. 4640–4647, 4708).
//!   - OVN `northd/ovn-northd.c`, `main` (its loop, l. 1023–1225): each
//!     iteration gets both transactions from `run_idl_loop`, and runs the
//!     incremental engine (`inc_proc_northd_run`, l. 1090–1098), which
//!     writes the Southbound, only when both exist; otherwise it keeps the
//!     IDLs' tracked changes (`clear_idl_track = false`, l. 1117) for the
//!     next run, so every change since the last run goes into the one next
//!     transaction. OVN 22.03 has the same gate in `inc_proc_northd_run`
//!     (`northd/inc-proc-northd.c`, l. 271–273), where a change that came
//!     meanwhile made the next run a full recompute (still one
//!     transaction); 0c1bde1c4 (2023) keeps the tracked changes instead.
//!     The engine's backoff
//!     (`northd-backoff-interval-ms`, `inc_proc_northd_can_run`) is 0 by
//!     default and not modelled.
//!   - OVN `lib/ovn-util.c`, `run_idl_loop` (l. 77–108): at the start of
//!     an iteration northd reads every update its IDL has received (up to
//!     `IDL_LOOP_MAX_DURATION_MS`, 500 ms), so a change that arrives while
//!     it computes is read by the next iteration.
//!
//!   northd's own Northbound transaction (`nb_cfg`, ports' `up`), whose
//!   being in flight gates an iteration too, is not modelled.
//! * The Southbound cluster is not a second Raft cluster in the loop. It
//!   runs on the same hosts; its commit of northd's transaction is taken to
//!   take as long as the Northbound cluster took to commit the port (from
//!   the request's arrival to the commit; for a batch, its slowest port),
//!   the same servers and links. A port whose entry commits while its
//!   client is between two attempts (the dead leader had replicated it)
//!   takes the last port's time instead: the Southbound had no outage.
//! * The Southbound ovsdb-server processes that serve controllers (the
//!   members, or the relays when `relays > 0`) are separate processes: each
//!   has its own CPU time line here, apart from the Northbound server's.
//! * Controllers are aggregated per server: no replica each, only which
//!   server it is connected to, when its data is complete, and the bytes
//!   it received. Every update a server sends is serialized once per
//!   client (each controller's condition is its own), at `cpu_ns_per_byte`,
//!   in connection order; its size is that of the update JSON the model
//!   builds from the rows.
//! * A controller's condition: its own chassis's `Port_Binding` rows, plus
//!   the global tables (`SB_Global`, `Chassis`, `Encap`,
//!   `Datapath_Binding`) and the one logical switch's `Logical_Flow` rows
//!   (every port is on the switch `sw`, so every controller needs them).
//! * When its server dies, a controller connects to the next server in
//!   its remote list at once and asks for the changes since its last
//!   transaction (`monitor_cond_since`, knob `monitor_since`): a server
//!   whose history (the last 100 Southbound transactions, since it
//!   started or, for a relay, restarted) holds that transaction sends only
//!   what it missed; otherwise, or with `monitor_since = false`, it sends
//!   everything the controller's condition matches. The run starts with
//!   every controller connected and holding the global rows. With every
//!   remote down, a controller has no server: the ports bound meanwhile
//!   reach it with its download from the first of its servers to come
//!   back (a relay once it holds its copy again), and their bring-up ends
//!   then.
//!
//! The two seeds (`scenarios/README.md`, "The two seeds"), off by default:
//! * `sb_ports`: bound ports (with their flows) the Southbound holds at the
//!   start, so that it has a realistic size.
//! * `write_changed_only = false`: each of northd's transactions also
//!   rewrites its 6 columns of every `Port_Binding` row already written,
//!   once per transaction whatever the ports in it (they are read/write,
//!   as it tracks them); the leader finds them unchanged, so the log and
//!   the updates stay the same, but northd builds it (`northd_write_ns` per
//!   column, `cpu_ns_per_byte` per byte), sends it and the leader parses it
//!   before the commit.
//! * `routes_per_port`, `route_status`: `Advertised_Route` rows with each
//!   port, and one `Advertised_Route_Status` row per route from the chassis
//!   advertising it; every controller gets every row of both tables.
//!
//! The first version's proxy stays: the Southbound commit of a port's rows
//! takes as long as the port's Northbound commit; only the bytes beyond
//! them (the rewrite, the routes, the status writes) are costed. A
//! chassis writes the status of each port's routes in a transaction of
//! their own, even when one update brought it several ports.

use super::{Ev, EventKind, SbBinding, Sim};
use crate::relay::Node;
use crate::server::{EntryKind, Life, Sid, Time};
use crate::txn::Op;
use ovsdb::json::{object, string_map, Json, Object};

/// JSON-RPC framing of one message (as on the relay hops).
const RPC: u64 = 60;
/// A controller's `monitor_cond_since` request: the tables and columns it
/// monitors and its conditions.
const MONITOR_REQUEST: u64 = 2_400;

/// Figures of the Southbound clients (all zero with `chassis = 0`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SbMetrics {
    pub chassis: usize,
    /// Per port: from the NB write's start to the moment its chassis's
    /// controller holds its `Port_Binding`.
    pub bringup_us: Vec<u64>,
    /// Southbound transactions northd wrote (committed): one per
    /// iteration of its loop, each holding every port it had heard of
    /// since the one before.
    pub txns: u64,
    /// Ports those transactions held, and the most one of them held.
    pub ports: u64,
    pub ports_max: u64,
    /// Bytes of the `Port_Binding` row updates northd's transactions made
    /// (each once, as all chassis together would need them).
    pub port_binding_bytes: u64,
    /// Update bytes sent to controllers (all of them).
    pub update_bytes: u64,
    /// CPU the serving servers spent on controllers' updates and
    /// downloads, µs.
    pub cpu_us: f64,
    /// Per controller: bytes received, and of those in `Port_Binding` rows.
    pub received: Vec<u64>,
    pub port_binding_received: Vec<u64>,
    /// Controllers that reconnected after their server went away.
    pub reconnects: u64,
    /// Bytes of the downloads those reconnections made.
    pub download_bytes: u64,
    /// Per storm (a serving server going away with clients): time from the
    /// loss until every one of them has its data again.
    pub converge_us: Vec<u64>,
    /// The run uses the knobs of the second version (`sb_ports`,
    /// `write_changed_only = false`, `routes_per_port`): the figures below
    /// are printed (the first version's transcripts keep theirs).
    pub extended: bool,
    /// Request bytes of northd's transactions (sum and largest), their
    /// replies, and the columns northd wrote into them.
    pub northd_txn_bytes: u64,
    pub northd_txn_bytes_max: u64,
    pub northd_reply_bytes: u64,
    pub northd_columns: u64,
    /// northd's CPU to build and serialize its transactions, µs.
    pub northd_build_us: f64,
    /// CPU the Southbound leader spent parsing and executing the
    /// transactions it received (northd's, the controllers' status
    /// writes), µs.
    pub parse_us: f64,
    /// Controllers' `Advertised_Route_Status` transactions and their bytes.
    pub status_txns: u64,
    pub status_bytes: u64,
    /// The Southbound database at the end, as an update carries it.
    pub db_bytes: u64,
    /// Largest memory of one Southbound server in the model: its database
    /// plus the updates and downloads it had built and not yet sent.
    pub peak_mem_bytes: u64,
}

#[derive(Clone, Debug, Default)]
struct Controller {
    /// Index into [`SbGlue::nodes`].
    node: usize,
    /// When the current download completes (0: nothing pending).
    ready_at: Time,
    /// Total `Port_Binding` bytes of its chassis's rows in the database.
    own_pb: u64,
    /// Starts of its ports that committed while it had no server (every
    /// one of its remotes down): their bring-up ends with its next
    /// download.
    missed: Vec<Time>,
    /// Its server went away and none of its remotes was up: it waits for
    /// one to come back.
    stranded: bool,
    /// How many Southbound transactions it has received (its last
    /// transaction id, for `monitor_cond_since`).
    seen_txns: u64,
    /// During a fan-out only: 1 + the index of its chassis in the
    /// transaction's owners (0: it owns none of its ports).
    owner: usize,
}

/// Transactions a server keeps for `monitor_cond_since` (ovsdb-server's
/// history is trimmed to 100 transactions).
const HISTORY: u64 = 100;

/// One Southbound transaction in the servers' history: what a controller
/// that missed it gets when it resumes.
#[derive(Clone, Debug, Default)]
struct Past {
    /// What every controller gets.
    common: u64,
    /// The chassis with new ports in it, and what each of them gets.
    owners: Vec<Owned>,
}

/// A chassis's update from a transaction that binds ports to it.
#[derive(Clone, Copy, Debug, Default)]
struct Owned {
    chassis: usize,
    bytes: u64,
    /// Its `Port_Binding` bytes in it.
    pb: u64,
}

#[derive(Clone, Debug, Default)]
struct Port {
    chassis: usize,
    start: Time,
    pb: u64,
    lf: u64,
    /// Update bytes of the port's `Advertised_Route` rows.
    routes: u64,
    /// Its routes' `Advertised_Route_Status` rows: the chassis's request
    /// and the update the servers send (0: none).
    status_req: u64,
    status: u64,
    /// How long the NB cluster took to commit the port: the commit time the
    /// model takes for a Southbound transaction.
    commit: Time,
    /// Its rows as northd's operations (`Port_Binding`, flows and routes),
    /// the routes' alone, and the `update` that rewrites its
    /// `Port_Binding` in later transactions.
    ops: Written,
    route_ops: Written,
    rewrite: u64,
}

/// The Southbound side's state.
#[derive(Clone, Debug, Default)]
pub(super) struct SbGlue {
    /// The servers controllers connect to (members, or relays).
    nodes: Vec<Node>,
    /// Per node: when its serving CPU is free again.
    busy_until: Vec<Time>,
    ctrls: Vec<Controller>,
    /// Per node: its controllers, in index order ([`SbGlue::by_node`]
    /// makes it from `ctrls` whenever one moves).
    node_ctrls: Vec<Vec<usize>>,
    /// Ports northd has been asked to bind, in the order of their NB
    /// commits (so also of their arrival at northd).
    pending: Vec<Port>,
    /// northd's loop: the ports that reached it are `pending[..heard]`,
    /// those its transactions took `pending[..sent]`; the rest wait while
    /// an iteration runs or its transaction is in flight (`busy`).
    heard: usize,
    sent: usize,
    busy: bool,
    /// The last port's NB commit time.
    last_commit: Time,
    /// Bytes of the global tables (SB_Global, Chassis, Encap, the
    /// switch's Datapath_Binding) as an update carries them.
    global: u64,
    /// Bytes of every `Logical_Flow` row so far, as an update carries them.
    lflows: u64,
    /// Bytes of every `Port_Binding` row, as an update carries them.
    pbs: u64,
    /// `Port_Binding` rows, and the bytes of the `update` operations that
    /// rewrite northd's columns of all of them.
    pb_rows: u64,
    rewrite: u64,
    /// Bytes of every `Advertised_Route` and `Advertised_Route_Status` row.
    routes: u64,
    status: u64,
    /// Southbound transactions so far, and the last [`HISTORY`] of them.
    txns: u64,
    past: std::collections::VecDeque<Past>,
    /// Per node: the first transaction its history can hold (it started,
    /// or loaded its copy, after the ones before).
    history_from: Vec<u64>,
    /// Sizes of a port's rows ([`port_rows`] and [`rewrite_op`]) by
    /// [`size_key`]: built once per combination of its numbers' widths.
    sizes: std::collections::BTreeMap<SizeKey, PortSizes>,
}

impl SbGlue {
    /// Each node's controllers, in index order (a fan-out visits each
    /// controller once, not once per node).
    fn by_node(&mut self) {
        let mut lists = vec![Vec::new(); self.nodes.len()];
        for (c, ctrl) in self.ctrls.iter().enumerate() {
            lists[ctrl.node].push(c);
        }
        self.node_ctrls = lists;
    }
}

/// Port rows' sizes: `Port_Binding`, `Logical_Flow` and the rewrite.
type PortSizes = (Written, Written, u64);

/// What the sizes of port `k`'s rows on chassis `c` with `lflows` flows
/// depend on: the decimal widths of the numbers written in them (the name,
/// the tunnel key, the MAC's address bytes, the chassis) and the widest
/// UUID's hex digits (fixed at 12 below 2^48); the rest is the same for
/// every port.
type SizeKey = [u32; 8];

fn size_key(k: u64, c: usize, lflows: u64) -> SizeKey {
    let width = |x: u64| x.checked_ilog10().unwrap_or(0);
    let hex = |x: u64| x.checked_ilog2().unwrap_or(0) / 4;
    let widest = k
        .max(c as u64)
        .max(k.saturating_mul(1000).saturating_add(lflows));
    [
        width(k),
        width(k + 1),
        width((k >> 16) & 0xff),
        width((k >> 8) & 0xff),
        width(k & 0xff),
        width(c as u64),
        hex(widest).max(11),
        lflows as u32,
    ]
}

impl SbGlue {
    /// [`port_rows`] and [`rewrite_op`] of port `k` on chassis `c`, from
    /// the rows of an earlier port of the same [`size_key`] when there is
    /// one: building and measuring them per port was most of the
    /// Southbound hour's CPU.
    fn port_sizes(&mut self, k: u64, c: usize, lflows: u64) -> PortSizes {
        *self.sizes.entry(size_key(k, c, lflows)).or_insert_with(|| {
            let (pb, lf) = port_rows(k, c, lflows);
            (pb, lf, rewrite_op(k))
        })
    }

    /// The database as an update carries it.
    fn db_bytes(&self) -> u64 {
        self.global + self.lflows + self.pbs + self.routes + self.status
    }
}

/// Columns of a `Port_Binding` row northd writes (`logical_port`,
/// `datapath`, `tunnel_key`, `mac`, `type`, `external_ids`; `chassis` and
/// `up` are the controllers').
const NORTHD_PB_COLUMNS: u64 = 6;
/// `{"op":"comment","comment":"ovn-northd"}` and
/// `{"op":"assert","lock":"ovn_northd"}` and `"OVN_Southbound"`, with
/// their commas.
const NORTHD_TXN_EXTRA: u64 = 40 + 36 + DB_NAME;
/// `"OVN_Southbound",`: all a controller's transaction adds to its
/// operations.
const DB_NAME: u64 = 17;
/// One `{"count":1}` result of an update, with its comma.
const UPDATE_RESULT: u64 = 12;
/// One `{"uuid":["uuid","…"]}` result of an insert, with its comma.
const INSERT_RESULT: u64 = 57;

/// Serialized sizes of rows written as operations of a transaction.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Written {
    /// `{"TABLE":{"UUID":{"insert":ROW},…}}`: what an update carries.
    update: u64,
    /// `{"op":"insert","table":"TABLE","row":ROW},` per row.
    insert_ops: u64,
    /// Columns written.
    columns: u64,
    rows: u64,
}

impl Written {
    fn add(&mut self, o: &Written) {
        self.update += o.update;
        self.insert_ops += o.insert_ops;
        self.columns += o.columns;
        self.rows += o.rows;
    }
}

/// Several ports' `{"TABLE":{…}}` update objects of one table merged into
/// one: each after the first loses its `{"TABLE":{` and `}}` and adds a
/// comma.
#[derive(Clone, Copy, Debug, Default)]
struct Join {
    bytes: u64,
    parts: u64,
}

impl Join {
    fn add(&mut self, bytes: u64) {
        if bytes > 0 {
            self.bytes += bytes;
            self.parts += 1;
        }
    }

    fn of(&self, table: &str) -> u64 {
        self.bytes - self.parts.saturating_sub(1) * (table.len() as u64 + 6)
    }
}

fn written(table: &str, kind: u32, rows: Vec<(u64, Json)>) -> Written {
    let mut w = Written::default();
    for (_, row) in &rows {
        if let Json::Object(o) = row {
            w.columns += o.len() as u64;
        }
        let op = object(vec![
            ("op", Json::from("insert")),
            ("table", Json::from(table)),
            ("row", row.clone()),
        ]);
        w.insert_ops += op.serialized_len() as u64 + 1;
        w.rows += 1;
    }
    if !rows.is_empty() {
        w.update = table_update(table, kind, rows);
    }
    w
}

/// Bytes of the update operation that rewrites northd's columns of port
/// `k`'s `Port_Binding` (as in ovsdb-idl.md §4.4), comma included.
fn rewrite_op(k: u64) -> u64 {
    let row = pb_row(k, None);
    object(vec![
        ("op", Json::from("update")),
        ("table", Json::from("Port_Binding")),
        (
            "where",
            Json::Array(vec![Json::Array(vec![
                Json::from("_uuid"),
                Json::from("=="),
                uuid(0xb, k),
            ])]),
        ),
        ("row", row),
    ])
    .serialized_len() as u64
        + 1
}

/// Merged update objects of several tables: one `{…}` instead of one each.
fn merged(parts: &[u64]) -> u64 {
    let nz = parts.iter().filter(|x| **x > 0).count() as u64;
    parts.iter().sum::<u64>() - nz.saturating_sub(1)
}

fn uuid(kind: u32, n: u64) -> Json {
    Json::Array(vec![
        Json::from("uuid"),
        Json::String(format!("{kind:08x}-0000-4000-8000-{n:012x}")),
    ])
}

/// `{"TABLE":{"UUID":{"insert":ROW},…}}` of the given rows, serialized size.
fn table_update(table: &str, kind: u32, rows: Vec<(u64, Json)>) -> u64 {
    let mut t = Object::new();
    for (n, row) in rows {
        let Json::Array(u) = uuid(kind, n) else {
            continue;
        };
        let id = match &u[1] {
            Json::String(s) => s.clone(),
            _ => continue,
        };
        t.insert(id, object(vec![("insert", row)]));
    }
    object(vec![(table, Json::Object(t))]).serialized_len() as u64
}

/// Port `k`'s `Port_Binding` row: with the controllers' columns when
/// bound to chassis `c`, northd's columns alone for `None`.
fn pb_row(k: u64, c: Option<usize>) -> Json {
    let mut cols = vec![
        ("logical_port", Json::String(format!("lsp{k}"))),
        ("datapath", uuid(0xd, 1)),
        ("tunnel_key", Json::Integer(k as i64 + 1)),
    ];
    if let Some(c) = c {
        cols.push(("chassis", uuid(0xc, c as u64)));
    }
    cols.push((
        "mac",
        Json::String(format!(
            "0a:00:00:{:02x}:{:02x}:{:02x} 10.{}.{}.{}",
            (k >> 16) & 0xff,
            (k >> 8) & 0xff,
            k & 0xff,
            (k >> 16) & 0xff,
            (k >> 8) & 0xff,
            k & 0xff
        )),
    ));
    cols.push(("type", Json::from("")));
    if c.is_some() {
        cols.push(("up", Json::Bool(false)));
    }
    cols.push(("external_ids", string_map(&[("name", format!("lsp{k}"))])));
    object(cols)
}

/// The rows northd writes for port `k` on chassis `c`: its
/// `Port_Binding` and its `Logical_Flow` rows.
fn port_rows(k: u64, c: usize, lflows: u64) -> (Written, Written) {
    // Controllers get the row bound; northd inserts it without the
    // controllers' columns.
    let pb = Written {
        update: table_update("Port_Binding", 0xb, vec![(k, pb_row(k, Some(c)))]),
        ..written("Port_Binding", 0xb, vec![(k, pb_row(k, None))])
    };
    let stages = [
        ("ingress", 0, "ls_in_port_sec_l2", "next;"),
        ("ingress", 1, "ls_in_port_sec_ip", "next;"),
        ("ingress", 2, "ls_in_port_sec_nd", "next;"),
        (
            "ingress",
            23,
            "ls_in_l2_lkup",
            "outport = \\\"lsp\\\"; output;",
        ),
        ("egress", 8, "ls_out_port_sec_ip", "next;"),
        ("egress", 9, "ls_out_port_sec_l2", "output;"),
        ("ingress", 17, "ls_in_arp_rsp", "eth.dst = eth.src; output;"),
        ("ingress", 20, "ls_in_dhcp_options", "next;"),
    ];
    let rows = (0..lflows)
        .map(|i| {
            let (pipe, table, stage, actions) = stages[i as usize % stages.len()];
            let row = object(vec![
                ("logical_datapath", uuid(0xd, 1)),
                ("pipeline", Json::from(pipe)),
                ("table_id", Json::Integer(table)),
                ("priority", Json::Integer(50 + i as i64)),
                (
                    "match",
                    Json::String(format!(
                        "inport == \"lsp{k}\" && eth.src == {{0a:00:00:00:00:01}}"
                    )),
                ),
                ("actions", Json::from(actions)),
                (
                    "external_ids",
                    string_map(&[
                        ("source", "northd.c:5000".into()),
                        ("stage-name", stage.into()),
                    ]),
                ),
            ]);
            (k * 1000 + i, row)
        })
        .collect();
    (pb, written("Logical_Flow", 0xf, rows))
}

/// The `n` `Advertised_Route` rows northd writes with port `k` (routes to
/// the pod's addresses through the cluster router, tracked by the port),
/// and, when `status`, the `Advertised_Route_Status` rows chassis `c`
/// writes for them. OVN has no such table (ovsdb-idl.md §5.4: an unmerged
/// series, its schema in no copy found); the row here is the smallest one
/// the series' status strings need: the route, the chassis, the status.
fn route_rows(k: u64, c: usize, n: u64, status: bool) -> (Written, Written) {
    let id = |i: u64| k * 10_000 + i;
    let routes = (0..n)
        .map(|i| {
            let row = object(vec![
                ("datapath", uuid(0xd, 2)),
                ("logical_port", uuid(0xb, k)),
                (
                    "ip_prefix",
                    Json::String(format!(
                        "10.{}.{}.{}/32",
                        (k >> 8) & 0xff,
                        k & 0xff,
                        i & 0xff
                    )),
                ),
                ("tracked_port", uuid(0xb, k)),
                ("external_ids", string_map(&[("source", "lb".into())])),
            ]);
            (id(i), row)
        })
        .collect();
    let statuses = if status {
        (0..n)
            .map(|i| {
                let row = object(vec![
                    ("advertised_route", uuid(0x7, id(i))),
                    ("chassis", uuid(0xc, c as u64)),
                    ("status", Json::from("advertised")),
                ]);
                (id(i), row)
            })
            .collect()
    } else {
        Vec::new()
    };
    (
        written("Advertised_Route", 0x7, routes),
        written("Advertised_Route_Status", 0x8, statuses),
    )
}

/// Sizes of the global tables with `n` chassis.
fn global_rows(n: usize) -> u64 {
    let chassis: Vec<(u64, Json)> = (0..n as u64)
        .map(|c| {
            let row = object(vec![
                ("name", Json::String(format!("chassis-{c}"))),
                ("hostname", Json::String(format!("node-{c}"))),
                ("encaps", uuid(0xe, c)),
                ("nb_cfg", Json::Integer(0)),
                (
                    "other_config",
                    string_map(&[
                        ("datapath-type", "system".into()),
                        ("is-interconn", "false".into()),
                    ]),
                ),
            ]);
            (c, row)
        })
        .collect();
    let encaps: Vec<(u64, Json)> = (0..n as u64)
        .map(|c| {
            let row = object(vec![
                ("type", Json::from("geneve")),
                (
                    "ip",
                    Json::String(format!("172.16.{}.{}", c >> 8, c & 0xff)),
                ),
                ("chassis_name", Json::String(format!("chassis-{c}"))),
                ("options", string_map(&[("csum", "true".into())])),
            ]);
            (c, row)
        })
        .collect();
    let global = object(vec![("nb_cfg", Json::Integer(0))]);
    let dp = object(vec![
        ("tunnel_key", Json::Integer(1)),
        ("external_ids", string_map(&[("name", "sw".into())])),
    ]);
    table_update("SB_Global", 0xa, vec![(0, global)])
        + table_update("Chassis", 0xc, chassis)
        + table_update("Encap", 0xe, encaps)
        + table_update("Datapath_Binding", 0xd, vec![(1, dp)])
}

/// Number of the `i`-th port the Southbound holds at the start
/// (`sb_ports`), apart from the Northbound's `lspK`.
const EARLIER_PORT: u64 = 1_000_000;

impl Sim {
    pub(super) fn sb_init(&mut self) {
        let n = self.knobs.chassis;
        if n == 0 {
            return;
        }
        self.metrics.sb.chassis = n;
        self.metrics.sb.extended = self.knobs.sb_ports > 0
            || !self.knobs.write_changed_only
            || self.knobs.routes_per_port > 0;
        let nodes: Vec<Node> = if self.relays.is_empty() {
            (0..self.servers.len()).map(Node::Member).collect()
        } else {
            (0..self.relays.len()).map(Node::Relay).collect()
        };
        self.sb.busy_until = vec![0; nodes.len()];
        self.sb.history_from = vec![0; nodes.len()];
        self.sb.ctrls = (0..n)
            .map(|c| Controller {
                node: c % nodes.len(),
                ..Default::default()
            })
            .collect();
        self.sb.nodes = nodes;
        self.sb.by_node();
        self.sb.global = global_rows(n);
        self.metrics.sb.received = vec![0; n];
        self.metrics.sb.port_binding_received = vec![0; n];
        // The ports of earlier pods, already bound, and their flows. Their
        // sizes depend only on the widths of the numbers in them (the
        // UUIDs and the MAC are fixed-width), so rows are built once per
        // combination of widths.
        for i in 0..self.knobs.sb_ports {
            let k = EARLIER_PORT + i;
            let c = (i % n as u64) as usize;
            let (pb, lf, rewrite) = self.sb.port_sizes(k, c, self.knobs.lflows_per_port);
            let (pb, lf) = (pb.update, lf.update);
            self.sb.ctrls[c].own_pb += pb;
            self.sb.pbs += pb;
            self.sb.lflows += lf;
            self.sb.pb_rows += 1;
            self.sb.rewrite += rewrite;
        }
        if self.metrics.sb.extended {
            self.sb_peak(0);
        }
    }

    /// Bytes of everything controller `c`'s condition matches now: what a
    /// download brings it (framing included).
    pub fn sb_monitored_bytes(&self, c: usize) -> u64 {
        self.sb.ctrls.get(c).map_or(0, |x| {
            RPC + self.sb.global + self.sb.lflows + x.own_pb + self.sb.routes + self.sb.status
        })
    }

    /// The serving server controller `c` is connected to (None while it
    /// has none).
    pub fn sb_controller_node(&self, c: usize) -> Option<Node> {
        self.sb
            .ctrls
            .get(c)
            .filter(|x| !x.stranded)
            .map(|x| self.sb.nodes[x.node])
    }

    /// A server holds the database and `burst` bytes of output it built.
    fn sb_peak(&mut self, burst: u64) {
        self.metrics.sb.db_bytes = self.sb.db_bytes();
        let m = self.metrics.sb.db_bytes + burst;
        self.metrics.sb.peak_mem_bytes = self.metrics.sb.peak_mem_bytes.max(m);
    }

    /// Entry `index` committed for the first time (at `server`): an
    /// `lsp-add` reaches northd one hop later ([`Sim::sb_northd`]).
    pub(super) fn sb_nb_committed(&mut self, server: Sid, index: u64) {
        let Some(EntryKind::Data { txn, .. }) = self.servers[server].entry(index).map(|e| &e.kind)
        else {
            return;
        };
        let (Op::LspAdd(k) | Op::PodAdd(k)) = txn.op else {
            return;
        };
        let Some((start, arrived, relay)) = self
            .requests
            .iter()
            .rev()
            .find(|r| r.op == txn.op)
            .map(|r| (r.start, r.arrived, r.relay.is_some()))
        else {
            return;
        };
        // The commit of the attempt that got through: a command sent again
        // after its server died does not charge the outage to the
        // Southbound commit (the proxy below). One that commits while the
        // client is between attempts (the dead leader had replicated it)
        // takes the last commit time measured: the Southbound cluster had
        // no outage, and northd's one transaction in flight would carry it
        // to every port behind.
        let nb_commit = match arrived {
            Some(a) => self.now.saturating_sub(a),
            None if !relay && !self.sb.pending.is_empty() => self.sb.last_commit,
            None => self
                .now
                .saturating_sub(start + self.knobs.client_overhead + self.knobs.client_delay),
        };
        self.sb.last_commit = nb_commit;
        self.sb_port(k, start, nb_commit);
    }

    /// Port `k` (whose NB write started at `start` and took `nb_commit` to
    /// commit) committed now: northd hears of it one hop later.
    fn sb_port(&mut self, k: u64, start: Time, nb_commit: Time) {
        let chassis = (k % self.knobs.chassis as u64) as usize;
        let (pb, lf, rewrite) = self.sb.port_sizes(k, chassis, self.knobs.lflows_per_port);
        let (routes, status) = route_rows(
            k,
            chassis,
            self.knobs.routes_per_port,
            self.knobs.route_status,
        );
        let mut ops = pb;
        ops.add(&lf);
        ops.add(&routes);
        let port = self.sb.pending.len();
        self.sb.pending.push(Port {
            chassis,
            start,
            pb: pb.update,
            lf: lf.update,
            routes: routes.update,
            status_req: RPC + DB_NAME + status.insert_ops,
            status: status.update,
            commit: nb_commit,
            ops,
            route_ops: routes,
            rewrite,
        });
        // northd hears of the commit from its NB server.
        let at = self.now + self.knobs.client_delay;
        self.push(at, Ev::SbNorthd { port: Some(port) });
    }

    /// northd's loop wakes: pending port `port`'s NB commit reached it, or
    /// (None) the reply to its transaction in flight did. It starts an
    /// iteration unless one runs or its transaction is in flight
    /// (`ovsdb_idl_loop_run` opens no transaction while one commits); the
    /// ports that came meanwhile wait for the next one.
    pub(super) fn sb_northd(&mut self, port: Option<usize>) {
        match port {
            Some(p) => self.sb.heard = self.sb.heard.max(p + 1),
            None => self.sb.busy = false,
        }
        if !self.sb.busy && self.sb.sent < self.sb.heard {
            self.northd_run();
        }
    }

    /// One iteration of northd's loop: it computes (`northd_delay`), builds
    /// one transaction holding the rows of every port it heard of since
    /// the last one, and sends it to the leader, which commits it
    /// ([`Sim::sb_commit`]); the reply reaches northd one hop after the
    /// commit, and only then can the next iteration start.
    fn northd_run(&mut self) {
        let (first, end) = (self.sb.sent, self.sb.heard);
        self.sb.sent = end;
        self.sb.busy = true;
        let (mut ops, mut routes, mut commit, mut rewrite) =
            (Written::default(), Written::default(), 0, 0);
        for p in &self.sb.pending[first..end] {
            ops.add(&p.ops);
            routes.add(&p.route_ops);
            commit = commit.max(p.commit);
            rewrite += p.rewrite;
        }
        let extra = self.northd_txn(&ops, &routes);
        // Later transactions rewrite these rows too.
        self.sb.pb_rows += (end - first) as u64;
        self.sb.rewrite += rewrite;
        // The proxy: the Southbound commit of the transaction takes as long
        // as the slowest NB commit among its ports.
        let at = self.now + self.knobs.northd_delay + self.knobs.client_delay + commit + extra;
        self.push(at, Ev::SbCommit { first, end });
        self.push(at + self.knobs.client_delay, Ev::SbNorthd { port: None });
    }

    /// Figures of northd's transaction holding the operations `ops` (of
    /// which `routes` are the routes'), and the time it takes beyond the
    /// first version's model, µs. That model takes the Southbound commit
    /// of the rows to take as long as a Northbound commit; what this adds
    /// are the bytes beyond them: the rewritten columns of every
    /// `Port_Binding` row already written (without `write_changed_only`,
    /// once per transaction) and the routes, which northd builds and
    /// serializes, sends, and the leader parses, and their results in the
    /// reply.
    fn northd_txn(&mut self, ops: &Written, routes: &Written) -> Time {
        if !self.metrics.sb.extended {
            return 0;
        }
        let (wco, cpu_ns, write_ns, bandwidth) = (
            self.knobs.write_changed_only,
            self.knobs.cpu_ns_per_byte,
            self.knobs.northd_write_ns,
            self.knobs.bandwidth,
        );
        let (rewrite, rewritten) = if wco {
            (0, 0)
        } else {
            (self.sb.rewrite, self.sb.pb_rows)
        };
        let request = RPC + NORTHD_TXN_EXTRA + ops.insert_ops + rewrite;
        let reply = RPC + 2 * 3 + ops.rows * INSERT_RESULT + rewritten * UPDATE_RESULT;
        let columns = ops.columns + rewritten * NORTHD_PB_COLUMNS;
        let per_byte = cpu_ns / 1000.0;
        let build =
            |cols: u64, bytes: u64| cols as f64 * write_ns / 1000.0 + bytes as f64 * per_byte;
        let m = &mut self.metrics.sb;
        m.northd_txn_bytes += request;
        m.northd_txn_bytes_max = m.northd_txn_bytes_max.max(request);
        m.northd_reply_bytes += reply;
        m.northd_columns += columns;
        m.northd_build_us += build(columns, request);
        m.parse_us += request as f64 * per_byte;
        // The leader holds the request while it parses it.
        self.sb_peak(request);
        // Beyond the first version: the rewrites and the routes.
        let more = rewrite + routes.insert_ops;
        let more_reply = rewritten * UPDATE_RESULT + routes.rows * INSERT_RESULT;
        let more_cols = rewritten * NORTHD_PB_COLUMNS + routes.columns;
        let tx = |b: u64| {
            if bandwidth > 0.0 {
                b as f64 / bandwidth
            } else {
                0.0
            }
        };
        let t = build(more_cols, more)
            + tx(more)
            + more as f64 * per_byte
            + more_reply as f64 * 2.0 * per_byte
            + tx(more_reply);
        t as Time
    }

    fn sb_node_up(&self, n: Node) -> bool {
        match n {
            Node::Member(s) => self.servers.get(s).is_some_and(|x| x.life == Life::Up),
            Node::Relay(k) => self.relays.get(k).is_some_and(|x| x.life == Life::Up),
        }
    }

    /// When a serving node holds a Southbound commit made at `t`.
    fn sb_available(&self, n: Node, t: Time) -> Time {
        match n {
            // A member: its copy of the commit (one hop behind the
            // leader's).
            Node::Member(_) => t + self.knobs.delay,
            // A relay: one more hop from its member.
            Node::Relay(_) => t + 2 * self.knobs.delay,
        }
    }

    fn wire(&self, bytes: u64) -> Time {
        let b = self.knobs.bandwidth;
        let tx = if b > 0.0 { bytes as f64 / b } else { 0.0 };
        self.knobs.client_delay + tx as Time
    }

    fn cpu(&mut self, bytes: u64) -> f64 {
        let c = bytes as f64 * self.knobs.cpu_ns_per_byte / 1000.0;
        self.metrics.sb.cpu_us += c;
        c
    }

    /// Every connected controller gets transaction `tx`'s update: its
    /// `common` bytes, or those of its chassis among `tx.owners`. `ports`
    /// are the pending ports it binds (for the timeline). Returns when each
    /// owner holds it (None: it has no server).
    fn sb_fan_out(&mut self, tx: Past, ports: std::ops::Range<usize>) -> Vec<Option<Time>> {
        let (mut served, mut last, mut sent) = (0u32, 0, 0);
        let mut seen = vec![None; tx.owners.len()];
        self.sb.txns += 1;
        // What a controller that owns none of the ports gets, and its
        // cost: the same for most of them.
        let common_cpu = tx.common as f64 * self.knobs.cpu_ns_per_byte / 1000.0;
        let common_wire = self.wire(tx.common);
        // Each owner's cost, and its controller marked with it (the first
        // owner of a chassis, as a search would find): the loop below
        // visits every controller, and most own nothing.
        let own_cost: Vec<(f64, Time)> = tx
            .owners
            .iter()
            .map(|o| {
                let cpu = o.bytes as f64 * self.knobs.cpu_ns_per_byte / 1000.0;
                (cpu, self.wire(o.bytes))
            })
            .collect();
        for (o, w) in tx.owners.iter().enumerate().rev() {
            if let Some(ctrl) = self.sb.ctrls.get_mut(w.chassis) {
                ctrl.owner = o + 1;
            }
        }
        let txns = self.sb.txns;
        for ni in 0..self.sb.nodes.len() {
            let node = self.sb.nodes[ni];
            if !self.sb_node_up(node) {
                continue;
            }
            let mut t = self
                .sb_available(node, self.now)
                .max(self.sb.busy_until[ni]) as f64;
            // `t` at the last controller that owns nothing, if any.
            let (mut any_common, mut last_common) = (false, 0.0);
            // Controllers served, and the bytes the owners among them got:
            // the common ones' bytes are a product after the loop.
            let (mut n, mut owned_bytes) = (0u64, 0u64);
            // Local borrows and sums: the stores into the counters would
            // otherwise make every field be read again per controller.
            let SbGlue {
                ctrls, node_ctrls, ..
            } = &mut self.sb;
            let m = &mut self.metrics.sb;
            let mut cpu_us = m.cpu_us;
            // As long as `ctrls` (made together): a controller's index in
            // bounds for one is for both, checked once.
            let received = &mut m.received[..ctrls.len()];
            let pb_received = &mut m.port_binding_received[..ctrls.len()];
            let mut owners = 0u64;
            for &c in &node_ctrls[ni] {
                let ctrl = &mut ctrls[c];
                if ctrl.stranded {
                    continue;
                }
                ctrl.seen_txns = txns;
                n += 1;
                match ctrl.owner {
                    0 => {
                        // The CPU sums stay in controller order (floating
                        // point).
                        cpu_us += common_cpu;
                        t += common_cpu;
                        received[c] += tx.common;
                        // `t` never decreases (CPU costs are not
                        // negative): the last of these gets it last.
                        last_common = t;
                        any_common = true;
                    }
                    o => {
                        let o = o - 1;
                        let (cpu, wire) = own_cost[o];
                        let bytes = tx.owners[o].bytes;
                        cpu_us += cpu;
                        t += cpu;
                        owners += 1;
                        owned_bytes += bytes;
                        received[c] += bytes;
                        last = last.max(t as Time + wire);
                        pb_received[c] += tx.owners[o].pb;
                        // A controller still downloading gets it after.
                        let got = (t as Time + wire).max(ctrl.ready_at);
                        seen[o] = Some(got);
                    }
                }
            }
            let burst = (n - owners) * tx.common + owned_bytes;
            served += n as u32;
            sent += burst;
            m.cpu_us = cpu_us;
            m.update_bytes += burst;
            if any_common {
                last = last.max(last_common as Time + common_wire);
            }
            self.sb.busy_until[ni] = t as Time;
            if self.metrics.sb.extended {
                self.sb_peak(burst);
            }
        }
        for w in &tx.owners {
            if let Some(ctrl) = self.sb.ctrls.get_mut(w.chassis) {
                ctrl.owner = 0;
            }
        }
        if self.record_events {
            let bindings = ports
                .map(|i| {
                    let p = &self.sb.pending[i];
                    let o = tx.owners.iter().position(|o| o.chassis == p.chassis);
                    SbBinding {
                        chassis: p.chassis,
                        start: p.start,
                        seen: o.and_then(|o| seen[o]),
                    }
                })
                .collect();
            self.note(EventKind::SbUpdate {
                served,
                last,
                bytes: sent,
                bindings,
            });
        }
        if self.sb.past.len() as u64 == HISTORY {
            self.sb.past.pop_front();
        }
        self.sb.past.push_back(tx);
        seen
    }

    /// northd's transaction holding pending ports `first..end` commits:
    /// every connected controller gets one update with their flows and
    /// routes, and each of their chassis its own ports' bindings too.
    pub(super) fn sb_commit(&mut self, first: usize, end: usize) {
        if first >= end || end > self.sb.pending.len() {
            return;
        }
        let n = (end - first) as u64;
        let m = &mut self.metrics.sb;
        m.txns += 1;
        m.ports += n;
        m.ports_max = m.ports_max.max(n);
        let (mut lf, mut routes) = (Join::default(), Join::default());
        let mut pbs: Vec<(usize, Join)> = Vec::new();
        for i in first..end {
            let p = &self.sb.pending[i];
            let (c, pb) = (p.chassis, p.pb);
            lf.add(p.lf);
            routes.add(p.routes);
            self.sb.lflows += p.lf;
            self.sb.routes += p.routes;
            self.sb.pbs += pb;
            self.metrics.sb.port_binding_bytes += pb;
            self.sb.ctrls[c].own_pb += pb;
            match pbs.iter_mut().find(|x| x.0 == c) {
                Some(x) => x.1.add(pb),
                None => pbs.push((
                    c,
                    Join {
                        bytes: pb,
                        parts: 1,
                    },
                )),
            }
            self.hash.add(0x5B00 ^ i as u64);
        }
        // The tables merged into one update object.
        let (lf, routes) = (lf.of("Logical_Flow"), routes.of("Advertised_Route"));
        let owners = pbs
            .iter()
            .map(|&(chassis, pb)| {
                let pb = pb.of("Port_Binding");
                Owned {
                    chassis,
                    bytes: RPC + merged(&[pb, lf, routes]),
                    pb,
                }
            })
            .collect();
        let tx = Past {
            common: RPC + merged(&[lf, routes]),
            owners,
        };
        let seen = self.sb_fan_out(tx, first..end);
        for i in first..end {
            let (c, start) = (self.sb.pending[i].chassis, self.sb.pending[i].start);
            let o = pbs.iter().position(|x| x.0 == c).unwrap_or(0);
            let Some(got) = seen[o] else {
                // Its controller has no server: it gets the binding with
                // its next download.
                self.sb.ctrls[c].missed.push(start);
                continue;
            };
            self.metrics.sb.bringup_us.push(got.saturating_sub(start));
            let p = &self.sb.pending[i];
            if p.status > 0 {
                // The chassis writes its routes' status through its server
                // to the leader, which parses and commits it.
                let req = p.status_req;
                let parse = req as f64 * self.knobs.cpu_ns_per_byte / 1000.0;
                let at = got + self.wire(req) + self.knobs.delay + parse as Time + p.commit;
                self.metrics.sb.parse_us += parse;
                self.push(at, Ev::SbStatus { port: i });
            }
        }
    }

    /// A chassis's `Advertised_Route_Status` rows for pending port `port`
    /// commit: every controller monitors the table (no condition, as for
    /// `Service_Monitor`), and northd gets them from the leader.
    pub(super) fn sb_status(&mut self, port: usize) {
        let Some(p) = self.sb.pending.get(port) else {
            return;
        };
        let (req, status) = (p.status_req, p.status);
        self.metrics.sb.status_txns += 1;
        self.metrics.sb.status_bytes += req;
        self.sb.status += status;
        self.hash.add(0x5B57 ^ port as u64);
        let bytes = RPC + status;
        // northd's copy.
        self.cpu(bytes);
        let tx = Past {
            common: bytes,
            owners: Vec::new(),
        };
        self.sb_fan_out(tx, 0..0);
    }

    /// Serving node `n` went away: its controllers connect to their next
    /// remote that is up at once and download their data again. With
    /// every remote down, they stay without a server until one comes back
    /// ([`Sim::sb_node_back`]).
    pub(super) fn sb_node_down(&mut self, n: Node) {
        let Some(ni) = self.sb.nodes.iter().position(|x| *x == n) else {
            return;
        };
        let count = self.sb.nodes.len();
        let mut moves = Vec::new();
        for &c in &self.sb.node_ctrls[ni] {
            if self.sb.ctrls[c].stranded {
                continue;
            }
            match (1..count)
                .map(|d| (ni + d) % count)
                .find(|&j| self.sb_node_up(self.sb.nodes[j]))
            {
                Some(to) => moves.push((c, to)),
                None => self.sb.ctrls[c].stranded = true,
            }
        }
        self.sb_reconnect(&moves);
    }

    /// Serving node `n` is up again (a member or relay restarted): the
    /// controllers left with no server (every remote of theirs was down)
    /// connect to it and download their data; the others stay where they
    /// are, as ovn-controller does.
    pub(super) fn sb_node_back(&mut self, n: Node) {
        let Some(to) = self.sb.nodes.iter().position(|x| *x == n) else {
            return;
        };
        if self.sb.ctrls.is_empty() || !self.sb_node_up(n) {
            return;
        }
        let moves: Vec<(usize, usize)> = (0..self.sb.ctrls.len())
            .filter(|&c| self.sb.ctrls[c].stranded)
            .map(|c| (c, to))
            .collect();
        self.sb_reconnect(&moves);
    }

    /// With `monitor_since`: the reply to controller `c`'s
    /// `monitor_cond_since` at node `to` when that node's history still
    /// holds the controller's last transaction: its bytes (the
    /// transactions after it, as that controller gets them, its own rows
    /// for the ports bound to it) and the `Port_Binding` bytes of its own
    /// among them. None: the node answers with everything.
    fn sb_resume_bytes(&self, c: usize, to: usize) -> Option<(u64, u64)> {
        if !self.knobs.monitor_since {
            return None;
        }
        // Found only if the controller's last transaction is itself in
        // the node's history: among the last ones kept, and after the node
        // (re)started its history. A controller that has seen nothing asks
        // with the zero id.
        let seen = self.sb.ctrls[c].seen_txns;
        let kept_from = self.sb.txns + 1 - self.sb.past.len() as u64;
        if seen == 0 || seen < kept_from.max(self.sb.history_from[to] + 1) {
            return None;
        }
        let missed = (self.sb.txns - seen) as usize;
        let skip = self.sb.past.len() - missed;
        let (mut bytes, mut pb) = (RPC, 0);
        for p in self.sb.past.iter().skip(skip) {
            match p.owners.iter().find(|o| o.chassis == c) {
                Some(o) => {
                    bytes += o.bytes;
                    pb += o.pb;
                }
                None => bytes += p.common,
            }
        }
        Some((bytes, pb))
    }

    /// Node `n` starts with an empty history (a member restarted, a relay
    /// loaded its copy again): controllers that resume there get
    /// everything until it holds their last transaction.
    pub(super) fn sb_history_restarts(&mut self, n: Node) {
        if let Some(i) = self.sb.nodes.iter().position(|x| *x == n) {
            self.sb.history_from[i] = self.sb.txns;
        }
    }

    /// Controllers `c` connect to node `to` and get what they miss (a
    /// resumption) or everything their condition matches, served in the
    /// order they come; the reconnect storm's figures.
    fn sb_reconnect(&mut self, moves: &[(usize, usize)]) {
        let mut last = None;
        let mut burst = vec![0; self.sb.nodes.len()];
        for &(c, to) in moves {
            self.sb.ctrls[c].node = to;
            self.sb.ctrls[c].stranded = false;
            self.metrics.sb.reconnects += 1;
            let (bytes, pb) = self
                .sb_resume_bytes(c, to)
                .unwrap_or_else(|| (self.sb_monitored_bytes(c), self.sb.ctrls[c].own_pb));
            self.metrics.sb.port_binding_received[c] += pb;
            self.sb.ctrls[c].seen_txns = self.sb.txns;
            self.metrics.sb.download_bytes += bytes;
            self.metrics.sb.received[c] += bytes;
            self.metrics.sb.update_bytes += bytes;
            // The request reaches the server, which reads it and writes
            // the reply, in the order the controllers come.
            let arrive = self.now + self.wire(MONITOR_REQUEST);
            let mut t = arrive.max(self.sb.busy_until[to]) as f64;
            t += self.cpu(MONITOR_REQUEST);
            t += self.cpu(bytes);
            self.sb.busy_until[to] = t as Time;
            let ready = t as Time + self.wire(bytes);
            self.sb.ctrls[c].ready_at = ready;
            for start in std::mem::take(&mut self.sb.ctrls[c].missed) {
                self.metrics.sb.bringup_us.push(ready.saturating_sub(start));
            }
            self.note(EventKind::SbDownload {
                chassis: c,
                ready,
                bytes,
            });
            burst[to] += bytes;
            last = last.max(Some(ready));
        }
        if !moves.is_empty() {
            self.sb.by_node();
        }
        if self.metrics.sb.extended {
            let b = burst.iter().copied().max().unwrap_or(0);
            self.sb_peak(b);
        }
        if let Some(last) = last {
            self.hash.add(0x5B5B ^ last);
            self.metrics.sb.converge_us.push(last - self.now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{EventKind, Sim};
    use super::{port_rows, table_update, Join};
    use crate::server::Time;

    /// Four chassis, northd taking 50 ms an iteration, no NB workload:
    /// each test hands northd its ports itself. One-way client hop 20 µs.
    fn sim(knobs: &str) -> Sim {
        let text = format!(
            "name = t\nprofile = v3.1\nuntil_ms = 10000\n[knobs]\nchassis = 4\n\
             northd_delay = 50\n{knobs}\n[workload]\ntype = none\n"
        );
        let mut s = Sim::from_text(&text, None, &[], 1).unwrap();
        s.record_events = true;
        s
    }

    /// At each time, port `k` (NB write started at `k` µs) commits on the
    /// NB side after 5 ms; then the run goes on to 1 s.
    fn ports_at(s: &mut Sim, at: &[(Time, u64)]) {
        for &(t, k) in at {
            s.run_until(t);
            s.now = t;
            s.sb_port(k, k, 5_000);
        }
        s.run_until(1_000_000);
    }

    /// northd's transactions as they commit: time, and the ports they bind
    /// (by their start).
    fn txns(s: &mut Sim) -> Vec<String> {
        s.take_events()
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::SbUpdate { bindings, .. } if !bindings.is_empty() => {
                    let ks: Vec<Time> = bindings.iter().map(|b| b.start).collect();
                    Some(format!("{} {ks:?}", e.t))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_port_that_finds_northd_idle_is_one_transaction_as_before() {
        let mut s = sim("");
        ports_at(&mut s, &[(100_000, 1)]);
        // Heard at +20 µs, 50 ms of compute, 20 µs to the leader, the
        // port's 5 ms commit: the first version's time.
        assert_eq!(txns(&mut s), ["155040 [1]"]);
        let m = &s.metrics.sb;
        assert_eq!((m.txns, m.ports, m.ports_max), (1, 1, 1));
        assert_eq!(m.bringup_us.len(), 1);
    }

    #[test]
    fn ports_that_reach_northd_while_its_transaction_is_in_flight_all_go_into_the_next_one() {
        let mut s = sim("");
        // Port 1 starts an iteration (commit at 155 040, reply at 155 060).
        // Ports 2 and 3 come while it computes, port 4 after the commit but
        // before the reply: all three wait and go in the next transaction,
        // which starts at the reply. Port 5 finds northd idle again.
        ports_at(
            &mut s,
            &[
                (100_000, 1),
                (120_000, 2),
                (130_000, 3),
                (155_030, 4),
                (300_000, 5),
            ],
        );
        assert_eq!(
            txns(&mut s),
            ["155040 [1]", "210080 [2, 3, 4]", "355040 [5]"]
        );
        let m = &s.metrics.sb;
        assert_eq!((m.txns, m.ports, m.ports_max), (3, 5, 3));
        // Bring-up still per port, from its own start.
        assert_eq!(m.bringup_us.len(), 5);
    }

    #[test]
    fn without_write_changed_only_northd_rewrites_every_row_once_per_transaction() {
        let mut s = sim("sb_ports = 10\nwrite_changed_only = false");
        ports_at(
            &mut s,
            &[(100_000, 1), (120_000, 2), (130_000, 3), (140_000, 4)],
        );
        let cols = |k: u64| {
            let (pb, lf) = port_rows(k, (k % 4) as usize, 8);
            pb.columns + lf.columns
        };
        // Two transactions: port 1 with the 10 earlier rows rewritten, then
        // ports 2–4 with those and port 1's, 6 columns each, once.
        assert_eq!(s.metrics.sb.txns, 2);
        assert_eq!(
            s.metrics.sb.northd_columns,
            cols(1) + 10 * 6 + cols(2) + cols(3) + cols(4) + 11 * 6
        );
    }

    #[test]
    fn ports_of_one_size_key_have_the_same_sizes() {
        // Every width boundary of the numbers in a port's rows, and the
        // UUIDs' growth past 12 hex digits.
        let mut ks: Vec<u64> = (0..300).collect();
        for b in [9, 99, 255, 999, 9_999, 65_535, 99_999, 999_999, 16_777_215] {
            ks.extend(b - 1..b + 3);
        }
        ks.extend([(1 << 48) / 1000 - 1, (1 << 48) / 1000, 1 << 48]);
        let mut glue = super::SbGlue::default();
        for (i, &k) in ks.iter().enumerate() {
            for c in [0, 7, 9, 10, 99, 100, 499] {
                let lflows = [8, 1, 0][i % 3];
                let (pb, lf) = port_rows(k, c, lflows);
                let fresh = (pb, lf, super::rewrite_op(k));
                assert_eq!(glue.port_sizes(k, c, lflows), fresh, "port {k} chassis {c}");
            }
        }
    }

    #[test]
    fn a_joined_update_is_the_update_of_all_its_rows() {
        let rows = |ks: &[u64]| {
            ks.iter()
                .map(|&k| (k, super::pb_row(k, Some(1))))
                .collect::<Vec<_>>()
        };
        let mut j = Join::default();
        for k in [7, 80, 900] {
            j.add(table_update("Port_Binding", 0xb, rows(&[k])));
        }
        let all = table_update("Port_Binding", 0xb, rows(&[7, 80, 900]));
        assert_eq!(j.of("Port_Binding"), all);
        // An empty part is no part.
        j.add(0);
        assert_eq!(j.of("Port_Binding"), all);
    }
}
