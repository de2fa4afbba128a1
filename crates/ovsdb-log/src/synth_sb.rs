//! A generator of large clustered OVN Southbound files for benchmarks and
//! size tests: three servers' files of one cluster, each starting with a
//! snapshot of a Southbound database of a chosen shape (chassis with encaps,
//! datapaths with port bindings and logical flows), followed by many
//! entries shaped like what ovn-northd and ovn-controller write (new and
//! removed logical flows, port bindings claimed by a chassis and set up),
//! each followed by a commit-index record.
//!
//! Records are framed by this crate's byte-exact writer (C member order,
//! LF-terminated bodies, lengths and SHA-1s), so `ovsdb-tool check-cluster`
//! and `show-log` read the files as they read the real server's.
//!
//! Sans-IO: the caller gives a sink per server; nothing is held but the
//! current record. The same [`SbShape`] and seed always give the same bytes.

use ovsdb::json::{object, string_map, Json, Object};

use crate::framing::write_record;
use crate::raft::{ClusterHeader, Entry, RaftRecord, RecordBody, Servers, Snapshot};
use crate::uuid::Uuid;

/// The size knobs of a generated cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct SbShape {
    pub chassis: usize,
    pub datapaths: usize,
    pub ports_per_datapath: usize,
    pub flows_per_datapath: usize,
    /// Entries after the snapshot (ignored when `target_bytes` is set).
    pub entries: usize,
    /// Grow the log until each file is at least this large.
    pub target_bytes: Option<u64>,
    /// Logical flows added (and as many removed) per entry.
    pub flows_per_entry: usize,
    /// Port bindings claimed per entry.
    pub ports_per_entry: usize,
    /// How changed set/map columns are written (column diffs are the 2.15+
    /// default).
    pub storage: ovsdb::StorageMode,
    pub seed: u64,
}

impl Default for SbShape {
    fn default() -> Self {
        SbShape {
            chassis: 120,
            datapaths: 200,
            ports_per_datapath: 20,
            flows_per_datapath: 100,
            entries: 10_000,
            target_bytes: None,
            flows_per_entry: 8,
            ports_per_entry: 2,
            storage: ovsdb::StorageMode::Diff,
            seed: 1,
        }
    }
}

/// splitmix64: a small deterministic generator for UUIDs and choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn uuid(&mut self) -> Uuid {
        let bits = (u128::from(self.next()) << 64) | u128::from(self.next());
        Uuid::new_v4(bits)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn s(v: &str) -> Json {
    Json::String(v.to_string())
}

fn int(v: u64) -> Json {
    Json::Integer(v as i64)
}

fn uuid_ref(u: Uuid) -> Json {
    Json::Array(vec![s("uuid"), s(&u.to_string())])
}

/// What the generator keeps between entries: row UUIDs, not rows.
struct State {
    rng: Rng,
    chassis: Vec<Uuid>,
    datapaths: Vec<Uuid>,
    ports: Vec<(Uuid, usize)>,
    flows: Vec<Uuid>,
    flow_serial: u64,
}

fn flow_row(st: &mut State, dp: usize) -> (Uuid, Json) {
    st.flow_serial += 1;
    let n = st.flow_serial;
    let u = st.rng.uuid();
    let table = st.rng.below(30) as u64;
    let row = object(vec![
        ("logical_datapath", uuid_ref(st.datapaths[dp])),
        (
            "pipeline",
            s(if n.is_multiple_of(2) {
                "ingress"
            } else {
                "egress"
            }),
        ),
        ("table_id", int(table)),
        ("priority", int(50 + (n % 60) * 10)),
        (
            "match",
            s(&format!(
                "inport == \"lsp-{dp}-{}\" && eth.src == 0a:00:{:02x}:{:02x}:{:02x}:{:02x} && ip4.src == 10.{}.{}.{}",
                n % 997,
                (n >> 24) & 255,
                (n >> 16) & 255,
                (n >> 8) & 255,
                n & 255,
                dp % 250,
                (n >> 8) % 250,
                n % 250
            )),
        ),
        (
            "actions",
            s(&format!(
                "reg0[{}] = 1; ct_next(dnat); next(pipeline=ingress, table={});",
                n % 16,
                (table + 1) % 30
            )),
        ),
        (
            "external_ids",
            string_map(&[
                ("source", format!("northd.c:{}", 1000 + n % 9000)),
                ("stage-name", format!("ls_in_stage_{table}")),
            ]),
        ),
    ]);
    (u, row)
}

fn snapshot_data(st: &mut State, shape: &SbShape) -> Json {
    let mut tables = Object::new();
    let mut encaps = Object::new();
    let mut chassis = Object::new();
    for c in 0..shape.chassis {
        let cu = st.rng.uuid();
        let eu = st.rng.uuid();
        st.chassis.push(cu);
        let name = format!("chassis-{c:04}");
        encaps.insert(
            eu.to_string(),
            object(vec![
                ("type", s("geneve")),
                ("ip", s(&format!("172.16.{}.{}", c / 250, c % 250 + 1))),
                ("chassis_name", s(&name)),
                ("options", string_map(&[("csum", "true".into())])),
            ]),
        );
        chassis.insert(
            cu.to_string(),
            object(vec![
                ("name", s(&name)),
                ("hostname", s(&format!("node-{c:04}.example"))),
                ("encaps", uuid_ref(eu)),
                (
                    "other_config",
                    string_map(&[
                        ("datapath-type", "system".into()),
                        ("ovn-bridge-mappings", "physnet:br-ex".into()),
                    ]),
                ),
            ]),
        );
    }
    let mut dps = Object::new();
    for d in 0..shape.datapaths {
        let u = st.rng.uuid();
        st.datapaths.push(u);
        dps.insert(
            u.to_string(),
            object(vec![
                ("tunnel_key", int(d as u64 + 1)),
                (
                    "external_ids",
                    string_map(&[
                        ("logical-switch", st.rng.uuid().to_string()),
                        ("name", format!("ls-{d}")),
                    ]),
                ),
            ]),
        );
    }
    let mut pbs = Object::new();
    for d in 0..shape.datapaths {
        for p in 0..shape.ports_per_datapath {
            let u = st.rng.uuid();
            st.ports.push((u, d));
            pbs.insert(
                u.to_string(),
                object(vec![
                    ("logical_port", s(&format!("lsp-{d}-{p}"))),
                    ("datapath", uuid_ref(st.datapaths[d])),
                    ("tunnel_key", int(p as u64 + 1)),
                    // A one-element set is written as its atom.
                    (
                        "mac",
                        s(&format!(
                            "0a:58:{:02x}:{:02x}:{:02x}:{:02x} 10.{}.{}.{}",
                            d >> 8,
                            d & 255,
                            p >> 8,
                            p & 255,
                            d % 250,
                            p / 250,
                            p % 250 + 2
                        )),
                    ),
                ]),
            );
        }
    }
    let mut flows = Object::new();
    for d in 0..shape.datapaths {
        for _ in 0..shape.flows_per_datapath {
            let (u, row) = flow_row(st, d);
            st.flows.push(u);
            flows.insert(u.to_string(), row);
        }
    }
    tables.insert("Encap", Json::Object(encaps));
    tables.insert("Chassis", Json::Object(chassis));
    tables.insert("Datapath_Binding", Json::Object(dps));
    tables.insert("Port_Binding", Json::Object(pbs));
    tables.insert("Logical_Flow", Json::Object(flows));
    Json::Object(tables)
}

/// One entry's transaction: flows added and removed on one datapath, and
/// port bindings claimed by a chassis.
fn entry_txn(st: &mut State, shape: &SbShape, date: i64) -> Json {
    let mut txn = Object::new();
    let dp = st.rng.below(st.datapaths.len());
    let mut flows = Object::new();
    let mut added = Vec::with_capacity(shape.flows_per_entry);
    for _ in 0..shape.flows_per_entry {
        let (u, row) = flow_row(st, dp);
        flows.insert(u.to_string(), row);
        added.push(u);
        // Remove an older flow for each new one: the table keeps its size.
        if !st.flows.is_empty() {
            let k = st.rng.below(st.flows.len());
            let old = st.flows.swap_remove(k);
            flows.insert(old.to_string(), Json::Null);
        }
    }
    st.flows.extend(added);
    if !flows.is_empty() {
        txn.insert("Logical_Flow", Json::Object(flows));
    }
    let mut pbs = Object::new();
    for _ in 0..shape.ports_per_entry {
        if st.ports.is_empty() || st.chassis.is_empty() {
            break;
        }
        let (pu, _) = st.ports[st.rng.below(st.ports.len())];
        let ch = st.chassis[st.rng.below(st.chassis.len())];
        pbs.insert(
            pu.to_string(),
            object(vec![("chassis", uuid_ref(ch)), ("up", Json::Bool(true))]),
        );
    }
    if !pbs.is_empty() {
        txn.insert("Port_Binding", Json::Object(pbs));
    }
    txn.insert("_date", Json::Integer(date));
    txn.insert("_comment", s("ovn-northd"));
    if shape.storage == ovsdb::StorageMode::Diff {
        txn.insert("_is_diff", Json::Bool(true));
    }
    Json::Object(txn)
}

/// Writes three servers' files. `sink(server, bytes)` receives each file's
/// bytes in order (server 0, 1, 2 interleaved record by record).
/// `schema` is the OVN_Southbound schema JSON.
pub fn southbound(shape: &SbShape, schema: &Json, sink: &mut dyn FnMut(usize, &[u8])) {
    let mut st = State {
        rng: Rng(shape.seed),
        chassis: Vec::new(),
        datapaths: Vec::new(),
        ports: Vec::new(),
        flows: Vec::new(),
        flow_serial: 0,
    };
    let cluster = st.rng.uuid();
    let sids: Vec<Uuid> = (0..3).map(|_| st.rng.uuid()).collect();
    let addrs: Vec<String> = (0..3)
        .map(|i| format!("tcp:10.0.0.{}:6644", i + 1))
        .collect();
    let servers = Servers(sids.iter().copied().zip(addrs.iter().cloned()).collect());
    let data = snapshot_data(&mut st, shape);
    let snapshot = Snapshot {
        index: 1,
        term: 1,
        data: Json::Array(vec![schema.clone(), data]),
        eid: st.rng.uuid(),
        election_timer: Some(1000),
    };
    let mut written = [0u64; 3];
    let mut buf = Vec::new();
    let mut emit = |i: usize, body: &[u8], written: &mut [u64; 3]| {
        buf.clear();
        write_record(&mut buf, "CLUSTER", body);
        written[i] += buf.len() as u64;
        sink(i, &buf);
    };
    for i in 0..3 {
        let h = ClusterHeader {
            server_id: sids[i],
            name: "OVN_Southbound".into(),
            local_address: addrs[i].clone(),
            cluster_id: Some(cluster),
            remote_addresses: None,
            prev_servers: Some(servers.clone()),
            snapshot: Some(snapshot.clone()),
        };
        emit(i, &h.encode(), &mut written);
        let rec = RaftRecord {
            comment: None,
            body: if i == 0 {
                RecordBody::Vote {
                    term: 1,
                    vote: sids[0],
                }
            } else {
                RecordBody::Term { term: 1 }
            },
        };
        emit(i, &rec.encode(), &mut written);
    }
    let mut date = 1_796_000_000_000i64;
    let mut index = 1u64;
    loop {
        let done = match shape.target_bytes {
            Some(t) => written.iter().all(|&w| w >= t),
            None => index > shape.entries as u64,
        };
        if done {
            break;
        }
        index += 1;
        date += 37 + st.rng.below(200) as i64;
        let txn = entry_txn(&mut st, shape, date);
        let entry = RaftRecord {
            comment: None,
            body: RecordBody::Entry(Entry {
                term: 1,
                index,
                data: Some(Json::Array(vec![Json::Null, txn])),
                eid: Some(st.rng.uuid()),
                servers: None,
                election_timer: None,
            }),
        }
        .encode();
        let commit = RaftRecord {
            comment: None,
            body: RecordBody::CommitIndex {
                commit_index: index,
            },
        }
        .encode();
        for i in 0..3 {
            emit(i, &entry, &mut written);
            emit(i, &commit, &mut written);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Framer;

    fn tiny_schema() -> Json {
        ovsdb::json::parse(br#"{"name":"OVN_Southbound","version":"1.0.0","tables":{}}"#).unwrap()
    }

    #[test]
    fn three_files_that_frame_and_agree() {
        let shape = SbShape {
            chassis: 3,
            datapaths: 2,
            ports_per_datapath: 3,
            flows_per_datapath: 4,
            entries: 25,
            ..Default::default()
        };
        let mut files = vec![Vec::new(), Vec::new(), Vec::new()];
        southbound(&shape, &tiny_schema(), &mut |i, b| {
            files[i].extend_from_slice(b)
        });
        for f in &files {
            let recs: Vec<_> = Framer::new(f).collect::<Result<_, _>>().unwrap();
            // header + vote/term + 25 × (entry + commit)
            assert_eq!(recs.len(), 2 + 50);
        }
        // Entries are the same bytes on every server.
        let tail = |f: &Vec<u8>| {
            let recs: Vec<_> = Framer::new(f).collect::<Result<Vec<_>, _>>().unwrap();
            recs[2..]
                .iter()
                .map(|r| r.body.to_vec())
                .collect::<Vec<_>>()
        };
        assert_eq!(tail(&files[0]), tail(&files[1]));
        assert_eq!(tail(&files[1]), tail(&files[2]));
        // Deterministic.
        let mut again = vec![Vec::new(), Vec::new(), Vec::new()];
        southbound(&shape, &tiny_schema(), &mut |i, b| {
            again[i].extend_from_slice(b)
        });
        assert_eq!(files, again);
    }

    #[test]
    fn target_size_is_reached() {
        let shape = SbShape {
            chassis: 2,
            datapaths: 2,
            ports_per_datapath: 2,
            flows_per_datapath: 2,
            target_bytes: Some(200_000),
            ..Default::default()
        };
        let mut sizes = [0u64; 3];
        southbound(&shape, &tiny_schema(), &mut |i, b| {
            sizes[i] += b.len() as u64
        });
        assert!(
            sizes.iter().all(|&s| (200_000..220_000).contains(&s)),
            "{sizes:?}"
        );
    }
}
