#![cfg(not(target_arch = "wasm32"))]
//! The inspector reading a record while its file streams by (replaying the
//! records before it on the way) shows what `inspect_record` shows with the
//! whole file in memory: every entry of every sample and incident file,
//! fed in chunks.

use std::path::PathBuf;
use timeline::inspect::InspectStream;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![
        root().join("static/samples"),
        root().join("tests/fixtures/incidents"),
    ];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "db") {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn streamed_inspection_equals_the_whole_file_one() {
    let mut compared = 0;
    for (name, bytes) in files() {
        let lane = timeline::build_lane(&name, &bytes, &mut |_| {});
        let superseded: Vec<usize> = lane.superseded_records();
        // Every entry of small files; a spread of them in big ones.
        let n = lane.entries.len();
        let step = (n / 12).max(1);
        for e in lane.entries.iter().step_by(step).chain(lane.entries.last()) {
            if e.superseded {
                // Shown as written (the database of its own time), which the
                // whole-file replay of the final log does not give.
                continue;
            }
            let want = timeline::inspect_record(&bytes, lane.clustered, e.record as u64, e.offset);
            let mut s = InspectStream::new(
                lane.clustered,
                e.record as u64,
                e.offset,
                superseded.clone(),
            );
            let mut pushed = 0;
            for c in bytes.chunks(64 << 10) {
                pushed += c.len();
                if s.push(c) {
                    break;
                }
            }
            let got = s.finish();
            assert_eq!(got, want, "{name}: record {}", e.record);
            assert!(
                pushed as u64 <= e.offset + (128 << 10) + want.record_bytes,
                "{name}: read {pushed} bytes for a record at {}",
                e.offset
            );
            compared += 1;
        }
    }
    assert!(compared > 150, "{compared}");
}

#[test]
fn a_wrong_offset_or_a_short_file_is_an_error() {
    let bytes = std::fs::read(root().join("static/samples/leader-failover/s1.db")).unwrap();
    let lane = timeline::build_lane("s1", &bytes, &mut |_| {});
    let e = &lane.entries[5];
    let mut s = InspectStream::new(true, e.record as u64, e.offset + 1, []);
    s.push(&bytes);
    assert!(s.finish().error.unwrap().contains("no record"));
    let mut s = InspectStream::new(true, e.record as u64, e.offset, []);
    s.push(&bytes[..e.offset as usize]);
    assert!(s.finish().error.unwrap().contains("ends before"));
}

#[test]
fn inspections_that_keep_checkpoints_show_the_same_and_read_less() {
    use ovsdb_log::checkpoint::{Checkpoints, Policy};
    let policy = Policy {
        every_entries: 4,
        every_bytes: 4096,
        max: 16,
        budget_bytes: u64::MAX,
        op_index: false,
    };
    let (mut compared, mut resumed, mut by_rows, mut followed_ahead) = (0, 0, [0usize; 2], 0);
    let mut seed: u64 = 0x51ed_2701_a3c4_9e1f;
    for (name, bytes) in files() {
        let lane = timeline::build_lane(&name, &bytes, &mut |_| {});
        let superseded: Vec<usize> = lane.superseded_records();
        let live: Vec<_> = lane.entries.iter().filter(|e| !e.superseded).collect();
        if live.is_empty() {
            continue;
        }
        // One store per file, kept from inspection to inspection, in a
        // random order (later and earlier records than the ones before).
        let mut store = Some(Box::new(Checkpoints::new(policy)));
        for _ in 0..12 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let e = live[(seed % live.len() as u64) as usize];
            let want = timeline::inspect_record(&bytes, lane.clustered, e.record as u64, e.offset);
            // Every other inspection reads the record ahead.
            let ahead = seed.is_multiple_of(2);
            let mut s = if ahead {
                InspectStream::resume_knowing(
                    lane.clustered,
                    e.record as u64,
                    e.offset,
                    superseded.clone(),
                    store.take(),
                    &bytes[e.offset as usize..],
                )
            } else {
                InspectStream::resume(
                    lane.clustered,
                    e.record as u64,
                    e.offset,
                    superseded.clone(),
                    store.take(),
                )
            };
            let from = s.offset();
            if s.follows_rows() {
                by_rows[usize::from(lane.clustered)] += 1;
                followed_ahead += usize::from(ahead);
            }
            for c in bytes[from as usize..].chunks(1000) {
                if s.push(c) {
                    break;
                }
            }
            let (got, back) = s.finish_keeping();
            assert_eq!(got, want, "{name}: record {} from byte {from}", e.record);
            assert!(back.is_some(), "{name}: the store comes back");
            store = back;
            compared += 1;
            if from > 0 {
                resumed += 1;
            }
        }
    }
    assert!(compared > 150, "{compared}");
    assert!(resumed * 2 > compared, "{resumed} of {compared} resumed");
    // Both kinds of file took the path that follows only the entry's rows
    // from a checkpoint, and showed what the full replay shows.
    assert!(
        by_rows[0] >= 5 && by_rows[1] * 3 > compared,
        "{by_rows:?} of {compared} followed rows (standalone, clustered)"
    );
    assert!(followed_ahead * 4 > compared, "{followed_ahead} read ahead");
}

#[test]
fn fold_point_cuts_long_values_at_a_char_boundary() {
    use timeline::inspect::fold_point;
    assert_eq!(fold_point("short", 10, 4), None);
    // Exactly at the limit: shown whole.
    assert_eq!(fold_point("0123456789", 10, 4), None);
    assert_eq!(fold_point("0123456789a", 10, 4), Some(4));
    // Multi-byte characters: the cut is after 3 characters (7 bytes).
    let s = "aé✓bcdefghijk";
    let cut = fold_point(s, 5, 3).unwrap();
    assert_eq!(&s[..cut], "aé✓");
}

#[test]
fn table_and_row_totals_agree_with_the_lane_and_the_columns() {
    let path = root().join("static/samples/sb-scale/s1.db");
    let bytes = std::fs::read(&path).unwrap();
    let lane = timeline::build_lane("s1.db", &bytes, &mut |_| {});
    let mut checked = 0;
    for e in lane.entries.iter().filter(|e| e.has_data && !e.superseded) {
        let d = timeline::inspect_record(&bytes, true, e.record as u64, e.offset);
        assert!(d.error.is_none(), "{:?}", d.error);
        // The inspector's counts are the lane's counts of the same entry.
        assert_eq!(d.row_count(), e.rows as usize, "index {}", e.index);
        assert_eq!(d.tables.len(), e.tables as usize, "index {}", e.index);
        let cols: u64 = d
            .tables
            .iter()
            .flat_map(|t| &t.rows)
            .flat_map(|r| &r.columns)
            .map(|c| c.stored_bytes)
            .sum();
        assert_eq!(d.tables.iter().map(|t| t.stored_bytes()).sum::<u64>(), cols);
        for t in &d.tables {
            assert!(t.deletes() <= t.rows.len());
        }
        checked += 1;
    }
    assert!(checked > 10, "{checked}");
}

#[test]
fn the_load_walks_checkpoints_serve_the_first_inspection() {
    use ovsdb_log::checkpoint::Policy;
    use timeline::load::TimelineLoad;
    let policy = Policy {
        every_entries: 4,
        every_bytes: 4096,
        max: 16,
        budget_bytes: u64::MAX,
        op_index: false,
    };
    // The files of a folder load together, as the page loads a cluster's.
    let mut by_dir: std::collections::BTreeMap<PathBuf, Vec<(String, Vec<u8>)>> =
        Default::default();
    for (name, bytes) in files() {
        let dir = PathBuf::from(&name).parent().unwrap().to_path_buf();
        by_dir.entry(dir).or_default().push((name, bytes));
    }
    let (mut compared, mut resumed, mut later_files, mut by_rows) = (0usize, 0, 0, 0);
    for files in by_dir.values() {
        let mut load = TimelineLoad::new(true).with_checkpoints(policy);
        for (name, bytes) in files {
            load.add_bytes(name, bytes, &mut |_| {});
        }
        let stores = load.take_checkpoints();
        let t = load.finish();
        for (i, (name, bytes)) in files.iter().enumerate() {
            let lane = t.lanes.iter().find(|l| l.name == *name).unwrap();
            let Some((_, store)) = stores.iter().find(|(n, _)| n == name) else {
                continue;
            };
            if i > 0 && !store.is_empty() {
                later_files += 1;
            }
            let superseded: Vec<usize> = lane.superseded_records();
            let live: Vec<_> = lane.entries.iter().filter(|e| !e.superseded).collect();
            let step = (live.len() / 8).max(1);
            for e in live.iter().step_by(step).chain(live.last()) {
                // Each inspection is a first one: a fresh copy of the
                // load's store, as the page has after the load.
                let want =
                    timeline::inspect_record(bytes, lane.clustered, e.record as u64, e.offset);
                let mut s = if compared.is_multiple_of(2) {
                    InspectStream::resume(
                        lane.clustered,
                        e.record as u64,
                        e.offset,
                        superseded.clone(),
                        Some(store.clone()),
                    )
                } else {
                    // The record read ahead: only what is needed of it.
                    let head = &bytes[e.offset as usize..];
                    let len = timeline::inspect::record_len(head).expect("a record") as usize;
                    InspectStream::resume_knowing(
                        lane.clustered,
                        e.record as u64,
                        e.offset,
                        superseded.clone(),
                        Some(store.clone()),
                        &head[..len],
                    )
                };
                let from = s.offset();
                by_rows += usize::from(s.follows_rows());
                for c in bytes[from as usize..].chunks(4096) {
                    if s.push(c) {
                        break;
                    }
                }
                assert_eq!(s.finish(), want, "{name}: record {} from {from}", e.record);
                compared += 1;
                if from > 0 {
                    resumed += 1;
                }
            }
        }
    }
    assert!(compared > 100, "{compared}");
    assert!(resumed * 2 > compared, "{resumed} of {compared} resumed");
    assert!(later_files >= 3, "{later_files} later files of a cluster");
    assert!(
        by_rows * 2 > compared,
        "{by_rows} of {compared} followed rows"
    );
}

/// A conversion (`[schema, null]`) between the checkpoint and the entry
/// may change every row: the walk then follows the whole database through
/// the transactions it kept, and still shows what a full replay shows.
#[test]
fn a_conversion_between_the_checkpoint_and_the_entry_is_followed_whole() {
    use ovsdb::json::Json;
    use ovsdb_log::checkpoint::{Checkpoints, Policy};
    use ovsdb_log::raft::{Entry, RaftRecord, RecordBody};
    let bytes = std::fs::read(root().join("static/samples/ls-add-follower/s1.db")).unwrap();
    let (header, mut records) = ovsdb_log::writer::read_clustered(&bytes).unwrap();
    let (term, index, switch) = records
        .iter()
        .rev()
        .find_map(|r| match &r.body {
            RecordBody::Entry(e) => {
                let (_, txn) = e.data.as_ref().and_then(ovsdb_log::split_data)?;
                let (uuid, _) = txn.get("Logical_Switch")?.as_object()?.iter().next()?;
                Some((e.term, e.index, uuid.to_string()))
            }
            _ => None,
        })
        .expect("an entry that writes a Logical_Switch");
    let last = records
        .iter()
        .filter_map(|r| match &r.body {
            RecordBody::Entry(e) => Some(e.index),
            _ => None,
        })
        .max()
        .unwrap();
    assert!(index <= last);
    // The schema with one more Logical_Switch column, as a conversion
    // would bring it.
    let mut schema = header.snapshot.as_ref().unwrap().data.as_array().unwrap()[0].clone();
    let text = schema.to_string_compact().replacen(
        "\"Logical_Switch\":{\"columns\":{",
        "\"Logical_Switch\":{\"columns\":{\"extra\":{\"type\":{\"key\":\"string\",\"value\":\"string\",\"min\":0,\"max\":\"unlimited\"}},",
        1,
    );
    assert_ne!(
        text,
        schema.to_string_compact(),
        "the schema has a Logical_Switch"
    );
    schema = ovsdb::json::parse(text.as_bytes()).unwrap();
    let entry = |i: u64, data: Json| RaftRecord {
        comment: None,
        body: RecordBody::Entry(Entry {
            term,
            index: i,
            data: Some(data),
            eid: Some(ovsdb_log::Uuid::parse("5a1f0c2e-0000-4000-8000-000000000001").unwrap()),
            servers: None,
            election_timer: None,
        }),
    };
    let txn = |k: &str| {
        ovsdb::json::parse(
            format!(
                r#"{{"Logical_Switch":{{"{switch}":{{"external_ids":["map",[["{k}","1"]]]}}}}}}"#
            )
            .as_bytes(),
        )
        .unwrap()
    };
    records.push(entry(
        last + 1,
        Json::Array(vec![Json::Null, txn("before")]),
    ));
    records.push(entry(last + 2, Json::Array(vec![schema, Json::Null])));
    records.push(entry(last + 3, Json::Array(vec![Json::Null, txn("after")])));
    let file = ovsdb_log::writer::write_clustered(&header, &records);
    let lane = timeline::build_lane("s1.db", &file, &mut |_| {});
    let e = lane
        .entries
        .iter()
        .find(|e| e.index == last + 3)
        .expect("the last entry");
    let want = timeline::inspect_record(&file, true, e.record as u64, e.offset);
    assert!(want.tables[0].rows[0].columns[0].diff.is_some(), "{want:?}");
    // A checkpoint at every entry: the nearest is before the conversion.
    let policy = Policy {
        every_entries: 1,
        every_bytes: 1,
        max: 4096,
        budget_bytes: u64::MAX,
        op_index: false,
    };
    let mut store = Some(Box::new(Checkpoints::new(policy)));
    let before = lane.entries.iter().find(|x| x.index == last + 1).unwrap();
    let mut s = InspectStream::resume(true, before.record as u64, before.offset, [], store.take());
    s.push(&file);
    let (_, back) = s.finish_keeping();
    let store = back.expect("the store");
    let cp = store.before_record(e.record as usize);
    assert!(cp.applied <= last + 1, "checkpoint at {}", cp.applied);
    let mut s = InspectStream::resume(true, e.record as u64, e.offset, [], Some(store.clone()));
    assert!(s.follows_rows());
    s.push(&file[s.offset() as usize..]);
    assert_eq!(s.finish(), want);
    // Read ahead, the walk keeps only the entry's rows: across a
    // conversion their state is not known, and the detail says so (no
    // value in the other modes) rather than show a wrong one.
    let mut s = InspectStream::resume_knowing(
        true,
        e.record as u64,
        e.offset,
        [],
        Some(store.clone()),
        &file[e.offset as usize..],
    );
    assert!(s.follows_rows());
    s.push(&file[s.offset() as usize..]);
    let got = s.finish();
    let c = &got.tables[0].rows[0].columns[0];
    assert_eq!((c.full.as_ref(), c.diff.as_ref()), (None, None));
    assert_eq!(got.tables.len(), want.tables.len());
    assert_eq!(got.record_bytes, want.record_bytes);
}

/// A file whose one-pass replay gives up (an entry replaces one it had
/// already applied, so the load walks the file a second time) keeps the
/// checkpoints of that second walk, and inspections from them show what
/// a full replay shows.
#[test]
fn a_file_loaded_in_two_walks_keeps_the_second_walks_checkpoints() {
    use ovsdb_log::checkpoint::Policy;
    use ovsdb_log::raft::RecordBody;
    use timeline::load::TimelineLoad;
    let bytes = std::fs::read(root().join("static/samples/ls-add-follower/s1.db")).unwrap();
    let (header, mut records) = ovsdb_log::writer::read_clustered(&bytes).unwrap();
    let commit = records
        .iter()
        .filter_map(|r| match r.body {
            RecordBody::CommitIndex { commit_index } => Some(commit_index),
            _ => None,
        })
        .max()
        .expect("a commit index record");
    // The committed entry at `commit` written again with other data: the
    // one-pass replay applied it already and cannot take it back.
    let mut again = records
        .iter()
        .find_map(|r| match &r.body {
            RecordBody::Entry(e) if e.index == commit && e.data.is_some() => Some(r.clone()),
            _ => None,
        })
        .expect("the committed entry");
    if let RecordBody::Entry(e) = &mut again.body {
        e.eid = Some(ovsdb_log::Uuid::parse("5a1f0c2e-0000-4000-8000-000000000002").unwrap());
    }
    records.push(again);
    let file = ovsdb_log::writer::write_clustered(&header, &records);
    let policy = Policy {
        every_entries: 2,
        every_bytes: 2048,
        max: 64,
        budget_bytes: u64::MAX,
        op_index: false,
    };
    let mut load = TimelineLoad::new(false).with_checkpoints(policy);
    load.add_bytes("s1.db", &file, &mut |_| {});
    let stores = load.take_checkpoints();
    let t = load.finish();
    let lane = &t.lanes[0];
    let superseded = lane.superseded_records();
    assert!(!superseded.is_empty(), "the replaced entry is superseded");
    let (_, store) = stores
        .iter()
        .find(|(n, _)| n == "s1.db")
        .expect("the second walk's checkpoints");
    assert!(store.len() >= 3, "{} checkpoints", store.len());
    let (mut compared, mut by_rows) = (0, 0);
    for e in lane.entries.iter().filter(|e| !e.superseded && e.has_data) {
        let want = timeline::inspect_record(&file, true, e.record as u64, e.offset);
        let mut s = InspectStream::resume_knowing(
            true,
            e.record as u64,
            e.offset,
            superseded.clone(),
            Some(store.clone()),
            &file[e.offset as usize..],
        );
        by_rows += usize::from(s.follows_rows());
        s.push(&file[s.offset() as usize..]);
        assert_eq!(s.finish(), want, "record {}", e.record);
        compared += 1;
    }
    assert!(
        compared >= 5 && by_rows * 2 > compared,
        "{by_rows} of {compared}"
    );
}

/// Files other people committed (old conf.db files, a must-gather's
/// fragment without a header) and damaged copies of the samples (a byte
/// flipped in a record in the middle, a torn tail): every walk answers
/// with a detail or an error, never a panic, and where the full replay of
/// the whole file has the database, the two row-following walks show
/// what it shows.
#[test]
fn the_walks_answer_on_foreign_and_damaged_files() {
    use ovsdb_log::checkpoint::Policy;
    use timeline::load::TimelineLoad;
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut dirs = vec![root().join("tests/fixtures/external")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_none_or(|x| x != "txt") {
                inputs.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    for (name, bytes) in files().into_iter().take(6) {
        let mut flipped = bytes.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x20;
        inputs.push((format!("{name} (flipped)"), flipped));
        inputs.push((
            format!("{name} (torn)"),
            bytes[..bytes.len() * 3 / 4].to_vec(),
        ));
    }
    let policy = Policy {
        every_entries: 3,
        every_bytes: 2048,
        max: 32,
        budget_bytes: u64::MAX,
        op_index: false,
    };
    let (mut walks, mut compared) = (0, 0);
    for (name, bytes) in &inputs {
        let mut load = TimelineLoad::new(false).with_checkpoints(policy);
        load.add_bytes(name, bytes, &mut |_| {});
        let store = load.take_checkpoints().into_iter().next().map(|(_, s)| s);
        let t = load.finish();
        let Some(lane) = t.lanes.first() else {
            continue;
        };
        let superseded = lane.superseded_records();
        // A dozen entries spread over the file: each reference answer is a
        // replay from the start, so every entry would be quadratic.
        let live: Vec<_> = lane.entries.iter().filter(|e| !e.superseded).collect();
        let step = live.len().div_ceil(12).max(1);
        for e in live.into_iter().step_by(step) {
            let want = timeline::inspect_record(bytes, lane.clustered, e.record as u64, e.offset);
            let (record, offset) = (e.record as u64, e.offset);
            let head = &bytes[offset as usize..];
            let ways = [
                InspectStream::resume(
                    lane.clustered,
                    record,
                    offset,
                    superseded.clone(),
                    store.clone(),
                ),
                InspectStream::resume_knowing(
                    lane.clustered,
                    record,
                    offset,
                    superseded.clone(),
                    store.clone(),
                    head,
                ),
            ];
            for mut s in ways {
                let follows = s.follows_rows();
                let from = s.offset() as usize;
                for c in bytes[from..].chunks(777) {
                    if s.push(c) {
                        break;
                    }
                }
                let got = s.finish();
                walks += 1;
                if follows && want.error.is_none() && got.error.is_none() {
                    let modes = |d: &timeline::EntryDetail| {
                        d.tables
                            .iter()
                            .flat_map(|t| &t.rows)
                            .flat_map(|r| &r.columns)
                            .any(|c| c.full.is_some())
                    };
                    if modes(&want) && modes(&got) {
                        assert_eq!(got, want, "{name}: record {record}");
                        compared += 1;
                    }
                }
            }
        }
    }
    assert!(
        walks > 100 && compared > 30,
        "{walks} walks, {compared} compared"
    );
}
