//! Must-show: every record of every clustered sample re-encodes from its
//! typed form to the identical bytes (header line length and SHA-1
//! included); standalone records re-encode to the same length.

use ovsdb_log::framing::{header_line, Framer};
use ovsdb_log::record::Record;
use ovsdb_log::Format;

mod common;

#[test]
fn clustered_samples_reencode_byte_for_byte() {
    let mut checked = 0;
    for (scen, stem, bytes) in common::all_samples() {
        let mut fr = Framer::new(&bytes);
        if fr.clone().format() == Some(Format::Standalone) || scen == "standalone" {
            continue;
        }
        let mut out = Vec::with_capacity(bytes.len());
        for raw in fr.by_ref() {
            let raw = raw.unwrap();
            let rec = raw.decode(Format::Clustered).unwrap();
            let body = match &rec {
                Record::Header(h) => h.encode(),
                Record::Raft(r) => r.encode(),
                other => panic!("unexpected {other:?}"),
            };
            let line = header_line("CLUSTER", &body);
            let orig = &bytes[raw.offset as usize..raw.end() as usize];
            let mut mine = line.into_bytes();
            mine.extend_from_slice(&body);
            assert!(
                orig == mine.as_slice(),
                "{scen}/{stem} record {}:\n orig {}\n mine {}",
                raw.index,
                String::from_utf8_lossy(&orig[..orig.len().min(400)]),
                String::from_utf8_lossy(&mine[..mine.len().min(400)])
            );
            out.extend_from_slice(&mine);
            checked += 1;
        }
        assert_eq!(out, bytes, "{scen}/{stem}");
    }
    assert!(checked > 3000, "only {checked} records checked");
}

#[test]
fn standalone_samples_reencode_to_same_length() {
    for (scen, stem, bytes) in common::all_samples() {
        if scen != "standalone" {
            continue;
        }
        let mut total = 0u64;
        for raw in Framer::new(&bytes) {
            let raw = raw.unwrap();
            let body = match raw.decode(Format::Standalone).unwrap() {
                Record::Schema(j) => ovsdb_log::raft::body_bytes(&j),
                Record::Txn(t) => ovsdb_log::raft::body_bytes(&t.to_json()),
                other => panic!("unexpected {other:?}"),
            };
            assert_eq!(body.len(), raw.body.len(), "{stem} record {}", raw.index);
            total += (header_line("JSON", &body).len() + body.len()) as u64;
        }
        assert_eq!(total, bytes.len() as u64, "{stem}");
    }
}
