//! Synthetic workloads for benchmarks, written with this crate's byte-exact
//! writer: the `acl-portgroup` scenario of the real samples (one port group,
//! N ACLs added one per transaction) scaled up.

use crate::framing::Framer;
use crate::raft::{Entry, RaftRecord, RecordBody};
use crate::record::Record;
use crate::uuid::Uuid;
use crate::writer::ClusteredWriter;
use crate::Format;
use ovsdb::json::{Json, Object};
use ovsdb::StorageMode;

/// Extends a real `acl-portgroup` clustered file: keeps its records up to
/// and including the commit of the `pg-add` entry, then appends `n`
/// transactions that each insert one ACL and add it to the port group,
/// written in `mode` (Full: the whole `acls` set every time, like
/// `--disable-file-column-diff`; Diff: one UUID and `_is_diff`), each
/// followed by a commit-index record. UUIDs come from a fixed seed.
///
/// Returns None if `template` is not such a file.
pub fn acl_portgroup(template: &[u8], n: usize, mode: StorageMode) -> Option<Vec<u8>> {
    let mut fr = Framer::new(template);
    let mut w: Option<ClusteredWriter> = None;
    let mut pg: Option<String> = None;
    let mut term = 1;
    let mut index = 0;
    let mut date = 1_795_986_963_271i64;
    for raw in fr.by_ref() {
        let raw = raw.ok()?;
        let rec = raw.decode(Format::Clustered).ok()?;
        match &rec {
            Record::Header(h) => w = Some(ClusteredWriter::new(h)),
            Record::Raft(r) => {
                w.as_mut()?.push_body(raw.body);
                match &r.body {
                    RecordBody::Entry(e) => {
                        term = e.term;
                        index = e.index;
                        if let Some(d) = &e.data {
                            let (_, txn) = crate::scan::split_data(d)?;
                            if let Some(Json::Object(rows)) = txn.get("Port_Group") {
                                pg = rows.keys().next().map(str::to_string);
                            }
                            if let Some(Json::Integer(t)) = txn.get("_date") {
                                date = *t;
                            }
                        }
                    }
                    RecordBody::CommitIndex { commit_index }
                        if pg.is_some() && *commit_index == index =>
                    {
                        break;
                    }
                    _ => {}
                }
            }
            _ => return None,
        }
    }
    let mut w = w?;
    let pg = pg?;
    let mut acls: Vec<String> = Vec::with_capacity(n);
    for k in 1..=n {
        let acl = Uuid::from_seed(0x5eed_0000 + k as u64).to_string();
        let prio = 1000 + k as i64;
        let mut row = Object::new();
        row.push_unchecked("action", Json::String("drop".into()));
        row.push_unchecked("direction", Json::String("from-lport".into()));
        row.push_unchecked("log", Json::Bool(true));
        row.push_unchecked("match", Json::String("udp".into()));
        row.push_unchecked("priority", Json::Integer(prio));
        let mut acl_t = Object::new();
        acl_t.push_unchecked(acl.clone(), Json::Object(row));
        let pos = acls.binary_search(&acl).unwrap_or_else(|p| p);
        acls.insert(pos, acl.clone());
        let uuid_atom =
            |u: &str| Json::Array(vec![Json::String("uuid".into()), Json::String(u.into())]);
        let value = match mode {
            StorageMode::Full if acls.len() == 1 => uuid_atom(&acls[0]),
            StorageMode::Full => Json::Array(vec![
                Json::String("set".into()),
                Json::Array(acls.iter().map(|u| uuid_atom(u)).collect()),
            ]),
            StorageMode::Diff => uuid_atom(&acl),
        };
        let mut pg_row = Object::new();
        pg_row.push_unchecked("acls", value);
        let mut pg_t = Object::new();
        pg_t.push_unchecked(pg.clone(), Json::Object(pg_row));
        let mut txn = Object::new();
        txn.push_unchecked("ACL", Json::Object(acl_t));
        txn.push_unchecked("Port_Group", Json::Object(pg_t));
        txn.push_unchecked(
            "_comment",
            Json::String(format!(
                "ovn-nbctl: ovn-nbctl --db=unix:s1.sock,unix:s2.sock,unix:s3.sock --log acl-add pg1 from-lport {prio} udp drop"
            )),
        );
        date += 5;
        txn.push_unchecked("_date", Json::Integer(date));
        if mode == StorageMode::Diff {
            txn.push_unchecked("_is_diff", Json::Bool(true));
        }
        index += 1;
        w.push(&RaftRecord {
            comment: None,
            body: RecordBody::Entry(Entry {
                term,
                index,
                data: Some(Json::Array(vec![Json::Null, Json::Object(txn)])),
                eid: Some(Uuid::from_seed(0xe1d0_0000 + k as u64)),
                servers: None,
                election_timer: None,
            }),
        });
        w.push(&RaftRecord {
            comment: None,
            body: RecordBody::CommitIndex {
                commit_index: index,
            },
        });
    }
    Some(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_files_replay_and_agree_across_modes() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/samples");
        let t = std::fs::read(root.join("acl-portgroup-full/s1.db")).unwrap();
        let full = acl_portgroup(&t, 40, StorageMode::Full).unwrap();
        let diff = acl_portgroup(&t, 40, StorageMode::Diff).unwrap();
        let sf = crate::summarize(&full);
        let sd = crate::summarize(&diff);
        assert!(sf.truncated.is_none() && sd.truncated.is_none());
        // (The two template entries kept at the start have no `_is_diff`.)
        assert_eq!(sf.entry_bytes.diff, sd.entry_bytes.diff);
        assert_eq!(sd.entry_bytes.diff, Some(sd.entry_bytes.stored + 2 * 16));
        assert_eq!(sd.entry_bytes.full, Some(sf.entry_bytes.stored));
        assert_eq!(
            crate::convert::convert(&diff, StorageMode::Full).unwrap(),
            full
        );
        let a = crate::replay(&full, crate::Upto::All).db.unwrap();
        assert_eq!(
            a.to_json(),
            crate::replay(&diff, crate::Upto::All).db.unwrap().to_json()
        );
    }
}
