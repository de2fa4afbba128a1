//! Every damage kind of issue 3 gets a typed error naming the record and
//! byte offset, and the valid prefix is still summarized.

mod common;

use ovsdb_log::framing::write_record;
use ovsdb_log::{summarize, ErrorKind, Framer};

/// A real file's first `n` records.
fn prefix(n: usize) -> Vec<u8> {
    let bytes = common::sample("election-timer", "s1");
    let end = Framer::new(&bytes).nth(n - 1).unwrap().unwrap().end() as usize;
    bytes[..end].to_vec()
}

fn with_body(body: &[u8]) -> (Vec<u8>, u64) {
    let mut f = prefix(5);
    let off = f.len() as u64;
    write_record(&mut f, "CLUSTER", body);
    (f, off)
}

#[test]
fn record_level_damage_is_typed_and_prefix_survives() {
    // Non-JSON body with valid framing.
    let (f, off) = with_body(b"this is not json\n");
    let s = summarize(&f);
    assert_eq!(s.records, 5);
    let e = s.truncated.unwrap();
    assert_eq!(e.record, 5);
    assert!(e.offset > off, "body offset");
    assert!(matches!(e.kind, ErrorKind::BadJson { .. }), "{e}");

    // Nesting 100000 deep: rejected by the depth limit, no stack overflow.
    let mut deep = vec![b'['; 100_000];
    deep.extend(vec![b']'; 100_000]);
    deep.push(b'\n');
    let (f, _) = with_body(&deep);
    let e = summarize(&f).truncated.unwrap();
    assert_eq!(e.record, 5);
    match &e.kind {
        ErrorKind::BadJson { message } => assert!(message.contains("nesting"), "{message}"),
        k => panic!("{k:?}"),
    }

    // JSON that is not an object.
    let (f, _) = with_body(b"[1,2]\n");
    assert!(matches!(
        summarize(&f).truncated.unwrap().kind,
        ErrorKind::NotObject
    ));

    // Unknown record members (strict Raft parsing).
    let (f, _) = with_body(b"{\"term\":1,\"index\":6,\"colour\":\"red\"}\n");
    let e = summarize(&f).truncated.unwrap();
    assert_eq!(e.record, 5);
    match &e.kind {
        ErrorKind::BadRecord { message } => assert!(message.contains("'colour'"), "{message}"),
        k => panic!("{k:?}"),
    }

    // Wrong magic in the middle of a clustered file.
    let mut f = prefix(5);
    write_record(&mut f, "JSON", b"{}\n");
    let e = summarize(&f).truncated.unwrap();
    assert!(matches!(e.kind, ErrorKind::WrongMagic { .. }));
    assert_eq!(e.offset, prefix(5).len() as u64);

    // Empty file and binary garbage: no records, typed errors.
    let s = summarize(b"");
    assert_eq!((s.records, s.format), (0, None));
    assert!(matches!(s.truncated.unwrap().kind, ErrorKind::EmptyFile));
    let garbage: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8)
        .collect();
    let s = summarize(&garbage);
    assert_eq!(s.records, 0);
    let e = s.truncated.unwrap();
    assert_eq!((e.record, e.offset), (0, 0));

    // Length 2^62 in a header: a short read, no allocation.
    let mut f = prefix(3);
    f.extend_from_slice(
        format!(
            "OVSDB CLUSTER {} 0000000000000000000000000000000000000000\n{{}}\n",
            1u64 << 62
        )
        .as_bytes(),
    );
    let e = summarize(&f).truncated.unwrap();
    assert!(matches!(e.kind, ErrorKind::TruncatedBody { .. }));
    assert_eq!(e.record, 3);
}

#[test]
fn undecodable_record_ends_the_file_for_both_size_paths() {
    // A framed JSON record that is no Raft record (no "term"): the file
    // ends there. The streaming summary and the two-pass replay must give
    // the same sizes for the records before it (found by the log_reader
    // fuzz target: the replay said "unknown", the summary gave totals).
    let (f, _) = with_body(b"{\"index\":7}\n");
    let (s, entries) = ovsdb_log::summarize_detailed(&f);
    let e = s.truncated.as_ref().unwrap();
    assert_eq!(e.record, 5);
    assert!(matches!(e.kind, ErrorKind::BadRecord { .. }), "{e}");
    let r = ovsdb_log::replay(&f, ovsdb_log::Upto::All);
    assert!(matches!(
        r.error.as_ref().unwrap().kind,
        ErrorKind::BadRecord { .. }
    ));
    let (stored, full, diff) = r.totals();
    assert!(full.is_some());
    assert_eq!((s.entry_bytes.full, s.entry_bytes.diff), (full, diff));
    assert_eq!(s.entry_bytes.stored, stored);
    assert_eq!(entries, r.entries);
}

#[test]
fn txn_replay_errors_name_the_record() {
    // A well-framed entry whose txn names an unknown table: the summary of
    // records stands, the replay reports the record.
    let (f, _) = with_body(
        b"{\"eid\":\"79a87ba7-2d00-444d-8403-abfff575112b\",\"data\":[null,{\"No_Such\":{}}],\"term\":1,\"index\":5}\n",
    );
    let s = summarize(&f);
    assert!(s.truncated.is_none());
    assert_eq!((s.entry_bytes.full, s.entry_bytes.diff), (None, None));
    let r = ovsdb_log::replay(&f, ovsdb_log::Upto::All);
    let e = r.error.unwrap();
    assert_eq!(e.record, 5);
    match e.kind {
        ErrorKind::Replay { message } => assert!(message.contains("No table named No_Such")),
        k => panic!("{k:?}"),
    }
}

#[test]
fn extreme_indexes_do_not_panic() {
    use ovsdb_log::writer::{read_clustered, write_clustered};
    use ovsdb_log::{check_cluster, RaftRecord, RecordBody};
    let b = common::sample("compacted", "s1");
    let (h, recs) = read_clustered(&b).unwrap();
    let prev = h.prev_index();
    for index in [prev, 1, u64::MAX, u64::MAX - 1] {
        let mut r = recs.clone();
        r.push(RaftRecord {
            comment: None,
            body: RecordBody::Entry(ovsdb_log::Entry {
                term: u64::MAX,
                index,
                data: None,
                eid: None,
                servers: None,
                election_timer: None,
            }),
        });
        r.push(RaftRecord {
            comment: None,
            body: RecordBody::CommitIndex {
                commit_index: u64::MAX,
            },
        });
        let f = write_clustered(&h, &r);
        let _ = ovsdb_log::summarize(&f);
        let _ = ovsdb_log::replay(&f, ovsdb_log::Upto::Committed);
        let rep = check_cluster(&[("x", &f)]);
        assert_eq!(rep.exit_code(), 1, "index {index}: {:?}", rep.violations);
    }
}

#[test]
fn convert_reports_a_framing_error_before_an_undecodable_record() {
    // A record that is no Raft record, then more good records and a torn
    // tail: convert has always named the framing error first (it framed
    // the whole file before decoding), replay the first damage in file
    // order.
    let (mut f, _) = with_body(b"{\"index\":7}\n");
    let full = common::sample("election-timer", "s1");
    let start = prefix(6).len();
    f.extend_from_slice(&full[start..start + 500]);
    let e = ovsdb_log::convert::convert(&f, ovsdb::StorageMode::Diff).unwrap_err();
    assert!(e.kind.is_framing(), "{e}");
    let r = ovsdb_log::replay(&f, ovsdb_log::Upto::All);
    let e = r.error.unwrap();
    assert_eq!(e.record, 5);
    assert!(matches!(e.kind, ErrorKind::BadRecord { .. }), "{e}");
}
