//! Fuzz a load's one pass and the parsers around it: arbitrary bytes as a
//! database file go through `timeline::load` whole and in chunks (same
//! timeline, never a panic); two copies as one cluster load the same with
//! and without sharing the size replay; the lane's entries survive the `timeline::wire`
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
    load.finish()
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

    let mut light = whole.clone();
    let blobs = timeline::wire::split(&mut light);
    let refs: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
    timeline::wire::join(&mut light, &refs).unwrap();
    assert_eq!(light, whole);
    let _ = timeline::wire::decode_entries(data);

    let mut out = Vec::new();
    if ovsdb_log::canon::canonical(data, &mut out).is_some() {
        let mut j = ovsdb::json::parse_value(data).expect("canon accepted what the parser refuses");
        j.sort_recursive();
        let mut want = Vec::new();
        j.write_compact(&mut want);
        assert_eq!(out, want);
    }
});
