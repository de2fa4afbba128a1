//! The view model compiled to wasm and run in a browser gives the same
//! figures as natively (sample bytes are embedded at compile time).
#![cfg(target_arch = "wasm32")]

use timeline::{build_timeline, SizeView, Viewport};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const S1: &[u8] = include_bytes!("../../../static/samples/leader-failover/s1.db");
const NB: &[u8] = include_bytes!("../../../static/samples/standalone/nb.db");

#[wasm_bindgen_test]
fn leader_failover_in_the_browser() {
    let t = build_timeline(&[("s1.db", S1)], &mut |_| {});
    let l = &t.lanes[0];
    assert_eq!(l.summary.records, 265);
    assert_eq!(l.entries.len(), 155);
    assert_eq!(l.summary.commit_index, Some(156));
    assert_eq!(l.summary.terms, vec![1, 2]);
    let cum = l.cumulative(SizeView::Stored);
    let last = l.entries.last().unwrap();
    assert_eq!(*cum.last().unwrap(), last.offset + last.sizes.stored);
    let mut vp = Viewport::for_timeline(&t);
    vp.zoom(2.0, 0.0);
    assert!(vp.start <= 2.0);
}

#[wasm_bindgen_test]
fn standalone_and_garbage_in_the_browser() {
    let t = build_timeline(&[("nb.db", NB)], &mut |_| {});
    assert_eq!(t.lanes[0].entries.len(), 40);
    let t = build_timeline(&[("junk", b"not a database\n")], &mut |_| {});
    assert_eq!(t.lanes[0].summary.records, 0);
    assert!(t.lanes[0].truncated.is_some());
}

#[wasm_bindgen_test]
fn chunked_load_wire_and_inspect_stream_in_the_browser() {
    use timeline::load::{FileEnd, TimelineLoad};
    let whole = build_timeline(&[("s1.db", S1)], &mut |_| {});
    let mut load = TimelineLoad::new(true);
    let mut f = load.begin("s1.db");
    for c in S1.chunks(4096) {
        f.push(load.checker(), c);
    }
    let FileEnd::Done(l) = f.finish(load.checker()) else {
        panic!("one pass expected");
    };
    load.add(*l);
    let t = load.finish();
    assert_eq!(t, whole);
    let mut light = t.clone();
    let blobs = timeline::wire::split(&mut light);
    let refs: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
    timeline::wire::join(&mut light, &refs).unwrap();
    assert_eq!(light, whole);
    let e = &t.lanes[0].entries[100];
    let want = timeline::inspect_record(S1, true, e.record as u64, e.offset);
    let mut s = timeline::inspect::InspectStream::new(true, e.record as u64, e.offset, []);
    for c in S1.chunks(4096) {
        if s.push(c) {
            break;
        }
    }
    assert_eq!(s.finish(), want);
}
