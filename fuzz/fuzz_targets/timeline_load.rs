//! Fuzz a load's one pass and the parsers around it: arbitrary bytes as a
//! database file go through `timeline::load` whole and in chunks (same
//! timeline, never a panic); two copies as one cluster load the same with
//! and without sharing the size replay, and the check run alone gives the
//! load's check; the lane's entries survive the `timeline::wire`
//! round trip; `wire::decode_entries` of the raw bytes is an error or a
//! value, never a panic; `ovsdb_log::canon` of the bytes, when it answers,
//! gives the JSON tree's canonical text.
//!
//! Run (from fuzz/):
//! `mkdir -p corpus/timeline_load && cargo +nightly fuzz run timeline_load corpus/timeline_load seeds/log_reader -- -max_total_time=300 -max_len=65536`
#![no_main]

use libfuzzer_sys::fuzz_target;
use timeline::load::{FileEnd, TimelineLoad};

fn load_all(mut load: TimelineLoad, files: &[&[u8]], step: usize) -> timeline::Timeline {
    feed(&mut load, files, step);
    load.finish()
}

/// Every file's walk into `load`, in chunks of `step` bytes.
fn feed(load: &mut TimelineLoad, files: &[&[u8]], step: usize) {
    for data in files {
        let mut f = load.begin("f");
        for c in data.chunks(step) {
            f.push(load.checker(), c);
        }
        let l = match f.finish(load.checker()) {
            FileEnd::Done(l) => *l,
            FileEnd::Again(mut a) => {
                for c in data.chunks(step) {
                    a.push(c);
                }
                a.finish()
            }
        };
        load.add(l);
    }
}

fn chunked(data: &[u8], step: usize) -> timeline::Timeline {
    load_all(TimelineLoad::new(true), &[data], step)
}

fuzz_target!(|data: &[u8]| {
    let whole = timeline::build_timeline(&[("f", data)], &mut |_| {});
    let step = data.first().map_or(1, |&b| usize::from(b % 13) + 1);
    assert_eq!(chunked(data, step), whole);
    // Two copies as one cluster's files: the second reuses the first's
    // size replay, with the same result as replaying both.
    let twice = [data, data];
    assert_eq!(
        load_all(TimelineLoad::new(true), &twice, step),
        load_all(TimelineLoad::new(true).without_sharing(), &twice, step)
    );
    // The check alone (the page's second worker) puts on a load without
    // its own check what the load's check puts on its timeline.
    let mut alone = TimelineLoad::check_only();
    feed(&mut alone, &twice, step);
    let mut apart = load_all(TimelineLoad::new(false), &twice, step);
    apart.apply_check(alone.finish_check());
    let with = load_all(TimelineLoad::new(true), &twice, step);
    assert_eq!(apart.cluster, with.cluster);
    let markers = |t: &timeline::Timeline| {
        t.lanes
            .iter()
            .map(|l| l.markers.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(markers(&apart), markers(&with));

    let mut light = whole.clone();
    let blobs = timeline::wire::split(&mut light);
    let refs: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
    timeline::wire::join(&mut light, &refs).unwrap();
    assert_eq!(light, whole);
    let _ = timeline::wire::decode_entries(data);

    inspect_first_entries(data, step);

    let mut out = Vec::new();
    if ovsdb_log::canon::canonical(data, &mut out).is_some() {
        let mut j = ovsdb::json::parse_value(data).expect("canon accepted what the parser refuses");
        j.sort_recursive();
        let mut want = Vec::new();
        j.write_compact(&mut want);
        assert_eq!(out, want);
    }
});

/// Inspects the first entries three ways: from the start, from the load's
/// checkpoints, and with the record read first (`resume_knowing`).
fn inspect_first_entries(data: &[u8], step: usize) {
    use ovsdb_log::checkpoint::Policy;
    use timeline::inspect::{record_len, InspectStream};
    let _ = record_len(data);
    let policy = Policy {
        every_entries: 1,
        every_bytes: 1,
        max: 8,
        budget_bytes: u64::MAX,
    };
    let mut load = TimelineLoad::new(false).with_checkpoints(policy);
    load.add_bytes("f", data, &mut |_| {});
    let stores = load.take_checkpoints();
    let t = load.finish();
    let Some(lane) = t.lanes.first() else {
        return;
    };
    let store = stores.into_iter().next().map(|(_, s)| s);
    let superseded = lane.superseded_records();
    for e in lane.entries.iter().take(4) {
        let (record, offset) = (e.record as u64, e.offset);
        let head = data.get(offset as usize..).unwrap_or_default();
        for s in [
            InspectStream::new(lane.clustered, record, offset, superseded.clone()),
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
        ] {
            let mut s = s;
            let from = (s.offset() as usize).min(data.len());
            for c in data[from..].chunks(step) {
                if s.push(c) {
                    break;
                }
            }
            let _ = s.finish();
        }
    }
}
