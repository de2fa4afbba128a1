//! Real clustered `.db` files from a simulation (`--write-logs`): every
//! record each server wrote, serialized by `ovsdb-log`'s byte-exact writer
//! (ovsdb-server's format: `OVSDB CLUSTER` framing, SHA-1, shash member
//! order). Transactions are the real-shaped OVN_Northbound transactions the
//! simulated clients sent; snapshots carry the OVN_Northbound schema and the
//! simulated database rows.

use crate::server::{EntryKind, LogRec, Sid, Snap};
use crate::sim::Sim;
use ovsdb::json::{parse, Json};
use ovsdb_log::raft::{ClusterHeader, Entry, RaftRecord, RecordBody, Servers, Snapshot};
use ovsdb_log::uuid::Uuid;
use ovsdb_log::writer::ClusteredWriter;

pub use crate::txn::NB_SCHEMA;

struct Names {
    seed: u64,
}

impl Names {
    fn sid(&self, s: Sid) -> Uuid {
        Uuid::from_seed(
            self.seed
                .wrapping_mul(0x1000)
                .wrapping_add(0x5151_0000 + s as u64),
        )
    }
    fn cid(&self) -> Uuid {
        Uuid::from_seed(self.seed ^ 0xC1C1_C1C1_0000_0000)
    }
    fn eid(&self, eid: u64) -> Uuid {
        Uuid::from_seed(self.seed.rotate_left(32) ^ 0xE1D0_0000_0000_0000 ^ eid)
    }
    fn addr(s: Sid) -> String {
        format!("tcp:127.0.0.1:{}", 17640 + s + 1)
    }
    fn servers(&self, mask: u64) -> Servers {
        Servers(
            (0..64)
                .filter(|i| mask & (1u64 << i) != 0)
                .map(|i| (self.sid(i), Self::addr(i)))
                .collect(),
        )
    }
}

fn header(n: &Names, s: Sid, snap: &Snap, schema: &Json) -> Result<ClusterHeader, String> {
    // The database at the snapshot: its history replayed on a model.
    let data = match &snap.core {
        Some(h) => {
            let (model, _, problem) = h.rebuild_model();
            if let Some(p) = problem {
                return Err(format!("snapshot database: {p}"));
            }
            crate::txn::snapshot_record(&model)
        }
        None => Json::Object(Default::default()),
    };
    Ok(ClusterHeader {
        server_id: n.sid(s),
        name: "OVN_Northbound".into(),
        local_address: Names::addr(s),
        cluster_id: Some(n.cid()),
        remote_addresses: None,
        prev_servers: Some(n.servers(snap.servers)),
        snapshot: Some(Snapshot {
            index: snap.index,
            term: snap.term,
            data: Json::Array(vec![schema.clone(), data]),
            eid: n.eid(snap.last_eid),
            election_timer: Some(snap.et / 1000),
        }),
    })
}

/// One `(file name, bytes)` per server: `s1.db`, `s2.db`, …
/// The simulation must have been run with [`Sim::capture_logs`] on.
pub fn write_logs(sim: &Sim) -> Result<Vec<(String, Vec<u8>)>, String> {
    if sim.logs().is_empty() {
        return Err("log capture was not enabled (Sim::capture_logs)".into());
    }
    let schema = parse(NB_SCHEMA.as_bytes()).map_err(|e| format!("schema: {e:?}"))?;
    let n = Names { seed: sim.seed };
    let initial = sim
        .servers
        .first()
        .map(|s| s.snap_config_at_start())
        .unwrap_or(1);
    let members: Vec<Sid> = (0..64).filter(|i| initial & (1u64 << i) != 0).collect();
    let mut files = Vec::new();
    for (s, recs) in sim.logs().iter().enumerate() {
        let mut w: Option<ClusteredWriter> = None;
        for r in recs {
            let body = match r {
                LogRec::Create { joining } => {
                    let h = if *joining {
                        ClusterHeader {
                            server_id: n.sid(s),
                            name: "OVN_Northbound".into(),
                            local_address: Names::addr(s),
                            cluster_id: None,
                            remote_addresses: Some(
                                members.iter().map(|m| Names::addr(*m)).collect(),
                            ),
                            prev_servers: None,
                            snapshot: None,
                        }
                    } else {
                        let snap = Snap {
                            index: 1,
                            term: 1,
                            servers: initial,
                            et: sim.knobs.election_timer,
                            last_eid: 0,
                            db: Default::default(),
                            db_bytes: 0,
                            core: None,
                        };
                        header(&n, s, &snap, &schema)?
                    };
                    w = Some(ClusteredWriter::new(&h));
                    continue;
                }
                LogRec::Rewrite { snap } => {
                    w = Some(ClusteredWriter::new(&header(&n, s, snap, &schema)?));
                    continue;
                }
                LogRec::Entry { index, entry } => {
                    let mut e = Entry {
                        term: entry.term,
                        index: *index,
                        data: None,
                        eid: None,
                        servers: None,
                        election_timer: None,
                    };
                    match &entry.kind {
                        EntryKind::Noop => {}
                        EntryKind::Data { eid, txn } => {
                            let record = txn.ordered_record().map_err(|e| e.to_string())?;
                            e.data = Some(Json::Array(vec![Json::Null, record]));
                            e.eid = Some(n.eid(*eid));
                        }
                        EntryKind::Servers(m) => e.servers = Some(n.servers(*m)),
                        EntryKind::ElectionTimer(us) => e.election_timer = Some(us / 1000),
                    }
                    RecordBody::Entry(e)
                }
                LogRec::Term { term } => RecordBody::Term { term: *term },
                LogRec::Vote { term, vote } => RecordBody::Vote {
                    term: *term,
                    vote: n.sid(*vote),
                },
                LogRec::Leader { term, leader } => RecordBody::Leader {
                    term: *term,
                    leader: n.sid(*leader),
                },
                LogRec::Commit { index } => RecordBody::CommitIndex {
                    commit_index: *index,
                },
                LogRec::Note { note } => RecordBody::Note {
                    note: note.to_string(),
                },
            };
            let comment = match r {
                LogRec::Note { note } => Some(format!("simulated: {note}")),
                _ => None,
            };
            if let Some(w) = w.as_mut() {
                w.push(&RaftRecord { comment, body });
            }
        }
        if let Some(w) = w {
            files.push((format!("s{}.db", s + 1), w.finish()));
        }
    }
    Ok(files)
}
