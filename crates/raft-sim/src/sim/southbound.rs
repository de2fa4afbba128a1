//! Southbound workloads in ovn-heater's shape: ovn-northd turns each
//! committed `lsp-add` into a Southbound transaction (a `Port_Binding` for
//! the port, bound to chassis `k mod chassis`, and `lflows_per_port`
//! `Logical_Flow` rows), and `chassis` ovn-controller clients with
//! conditional monitors receive it from the server they are connected to.
//! None of it runs with `chassis = 0`.
//!
//! The smallest honest model (`scenarios/README.md`, "Southbound"):
//! * The Southbound cluster is not a second Raft cluster in the loop. It
//!   runs on the same hosts; its commit of northd's transaction is taken to
//!   take as long as the Northbound cluster took to commit the port (from
//!   the request's arrival to the commit), the same servers and links.
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
//!   its remote list at once and downloads everything its condition
//!   matches (resumption with `monitor_cond_since` is not modelled for
//!   controllers); the run starts with every controller connected and
//!   holding the global rows.

use super::{Ev, Sim};
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
    /// Southbound transactions northd wrote.
    pub txns: u64,
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
}

#[derive(Clone, Debug, Default)]
struct Controller {
    /// Index into [`SbGlue::nodes`].
    node: usize,
    /// When the current download completes (0: nothing pending).
    ready_at: Time,
    /// Total `Port_Binding` bytes of its chassis's rows in the database.
    own_pb: u64,
}

#[derive(Clone, Debug)]
struct Port {
    chassis: usize,
    start: Time,
    pb: u64,
    lf: u64,
}

/// The Southbound side's state.
#[derive(Clone, Debug, Default)]
pub(super) struct SbGlue {
    /// The servers controllers connect to (members, or relays).
    nodes: Vec<Node>,
    /// Per node: when its serving CPU is free again.
    busy_until: Vec<Time>,
    ctrls: Vec<Controller>,
    /// Ports northd has been asked to bind (by NB port number).
    pending: Vec<Port>,
    /// Bytes of the global tables (SB_Global, Chassis, Encap, the
    /// switch's Datapath_Binding) as an update carries them.
    global: u64,
    /// Bytes of every `Logical_Flow` row so far, as an update carries them.
    lflows: u64,
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

/// Sizes of the rows northd writes for port `k` on chassis `c`:
/// (`Port_Binding` update, `Logical_Flow` update).
fn port_rows(k: u64, c: usize, lflows: u64) -> (u64, u64) {
    let pb = object(vec![
        ("logical_port", Json::String(format!("lsp{k}"))),
        ("datapath", uuid(0xd, 1)),
        ("tunnel_key", Json::Integer(k as i64 + 1)),
        ("chassis", uuid(0xc, c as u64)),
        (
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
        ),
        ("type", Json::from("")),
        ("up", Json::Bool(false)),
        ("external_ids", string_map(&[("name", format!("lsp{k}"))])),
    ]);
    let pb = table_update("Port_Binding", 0xb, vec![(k, pb)]);
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
    let lf = if lflows == 0 {
        0
    } else {
        table_update("Logical_Flow", 0xf, rows)
    };
    (pb, lf)
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

impl Sim {
    pub(super) fn sb_init(&mut self) {
        let n = self.knobs.chassis;
        if n == 0 {
            return;
        }
        self.metrics.sb.chassis = n;
        let nodes: Vec<Node> = if self.relays.is_empty() {
            (0..self.servers.len()).map(Node::Member).collect()
        } else {
            (0..self.relays.len()).map(Node::Relay).collect()
        };
        self.sb.busy_until = vec![0; nodes.len()];
        self.sb.ctrls = (0..n)
            .map(|c| Controller {
                node: c % nodes.len(),
                ..Default::default()
            })
            .collect();
        self.sb.nodes = nodes;
        self.sb.global = global_rows(n);
        self.metrics.sb.received = vec![0; n];
        self.metrics.sb.port_binding_received = vec![0; n];
    }

    /// Bytes of everything controller `c`'s condition matches now: what a
    /// download brings it (framing included).
    pub fn sb_monitored_bytes(&self, c: usize) -> u64 {
        self.sb
            .ctrls
            .get(c)
            .map_or(0, |x| RPC + self.sb.global + self.sb.lflows + x.own_pb)
    }

    /// The serving server controller `c` is connected to.
    pub fn sb_controller_node(&self, c: usize) -> Option<Node> {
        self.sb.ctrls.get(c).map(|x| self.sb.nodes[x.node])
    }

    /// Entry `index` committed for the first time (at `server`): an
    /// `lsp-add` wakes northd.
    pub(super) fn sb_nb_committed(&mut self, server: Sid, index: u64) {
        let Some(EntryKind::Data { txn, .. }) = self.servers[server].entry(index).map(|e| &e.kind)
        else {
            return;
        };
        let (Op::LspAdd(k) | Op::PodAdd(k)) = txn.op else {
            return;
        };
        let Some(start) = self
            .requests
            .iter()
            .rev()
            .find(|r| r.op == txn.op)
            .map(|r| r.start)
        else {
            return;
        };
        let arrived = start + self.knobs.client_overhead + self.knobs.client_delay;
        let nb_commit = self.now.saturating_sub(arrived);
        let chassis = (k % self.knobs.chassis as u64) as usize;
        let (pb, lf) = port_rows(k, chassis, self.knobs.lflows_per_port);
        let port = self.sb.pending.len();
        self.sb.pending.push(Port {
            chassis,
            start,
            pb,
            lf,
        });
        // northd hears the commit from its NB server, computes, sends its
        // transaction to the SB leader, which commits it.
        let at = self.now + 2 * self.knobs.client_delay + self.knobs.northd_delay + nb_commit;
        self.push(at, Ev::SbCommit { port });
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

    /// Northd's transaction for pending port `port` commits: every
    /// connected controller gets its update.
    pub(super) fn sb_commit(&mut self, port: usize) {
        let Some(p) = self.sb.pending.get(port).cloned() else {
            return;
        };
        self.metrics.sb.txns += 1;
        self.metrics.sb.port_binding_bytes += p.pb;
        self.sb.lflows += p.lf;
        self.sb.ctrls[p.chassis].own_pb += p.pb;
        self.hash.add(0x5B00 ^ port as u64);
        // Merging the two tables into one update object saves one byte.
        let common = RPC + p.lf;
        let owned = common + p.pb - (p.lf > 0) as u64;
        let mut seen = None;
        for ni in 0..self.sb.nodes.len() {
            let node = self.sb.nodes[ni];
            if !self.sb_node_up(node) {
                continue;
            }
            let mut t = self
                .sb_available(node, self.now)
                .max(self.sb.busy_until[ni]) as f64;
            for c in 0..self.sb.ctrls.len() {
                if self.sb.ctrls[c].node != ni {
                    continue;
                }
                let mine = c == p.chassis;
                let bytes = if mine { owned } else { common };
                t += self.cpu(bytes);
                self.metrics.sb.update_bytes += bytes;
                self.metrics.sb.received[c] += bytes;
                if mine {
                    self.metrics.sb.port_binding_received[c] += p.pb;
                    // A controller still downloading gets it after.
                    let got = (t as Time + self.wire(bytes)).max(self.sb.ctrls[c].ready_at);
                    seen = Some(got);
                }
            }
            self.sb.busy_until[ni] = t as Time;
        }
        if let Some(got) = seen {
            self.metrics.sb.bringup_us.push(got.saturating_sub(p.start));
        }
    }

    /// Serving node `n` went away: its controllers connect to their next
    /// remote at once and download their data again.
    pub(super) fn sb_node_down(&mut self, n: Node) {
        let Some(ni) = self.sb.nodes.iter().position(|x| *x == n) else {
            return;
        };
        let count = self.sb.nodes.len();
        let mut last = None;
        for c in 0..self.sb.ctrls.len() {
            if self.sb.ctrls[c].node != ni {
                continue;
            }
            let Some(to) = (1..count)
                .map(|d| (ni + d) % count)
                .find(|&j| self.sb_node_up(self.sb.nodes[j]))
            else {
                continue;
            };
            self.sb.ctrls[c].node = to;
            self.metrics.sb.reconnects += 1;
            let bytes = self.sb_monitored_bytes(c);
            self.metrics.sb.download_bytes += bytes;
            self.metrics.sb.received[c] += bytes;
            self.metrics.sb.port_binding_received[c] += self.sb.ctrls[c].own_pb;
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
            last = last.max(Some(ready));
        }
        if let Some(last) = last {
            self.hash.add(0x5B5B ^ last);
            self.metrics.sb.converge_us.push(last - self.now);
        }
    }
}
