//! Fuzz the Contents page's streaming walks as the web worker makes them:
//! arbitrary bytes as a database file, cut into chunks of an arbitrary
//! size, through `contents::stream`'s `Opener` (load pass and replay in
//! one walk, and the `DatabaseAt` walk it may ask for), a `DatabaseAt` to
//! the end followed by the `SizesStream` walk, and `history_with` over
//! the records read back by offset. Nothing may panic, and the streamed
//! results must equal the in-memory ones (`Log::load`, `database_at`,
//! `sizes::sizes`, `history::history`).
//!
//! Input: byte 0 picks the chunk size (1..=64, or 4096 when 0), byte 1
//! the position (0: the last committed entry; else index byte-1), the
//! rest is the file.
//!
//! Run (from fuzz/):
//! `mkdir -p corpus/contents_stream && cargo +nightly fuzz run contents_stream corpus/contents_stream seeds/contents_stream -- -max_total_time=180 -max_len=65536`
#![no_main]

use contents::stream::{DatabaseAt, Opener, SizesStream};
use contents::{Log, Upto};
use libfuzzer_sys::fuzz_target;
use ovsdb_log::{Event, LogScan, ScanOptions, Verdict};

/// One walk of `bytes` in `step`-byte chunks.
fn walk(bytes: &[u8], step: usize, opts: ScanOptions, on: &mut dyn FnMut(&Event<'_>) -> Verdict) -> LogScan {
    let mut scan = LogScan::new(opts);
    let mut f = |ev: Event<'_>| on(&ev);
    for c in bytes.chunks(step) {
        scan.push(c, &mut f);
    }
    scan.finish(&mut f);
    scan
}

fn walks(bytes: &[u8], step: usize, d: &mut DatabaseAt) {
    while let Some(opts) = d.next_walk() {
        let scan = walk(bytes, step, opts, &mut |ev| {
            d.on_event(ev);
            Verdict::Keep
        });
        d.end(&scan);
    }
}

fuzz_target!(|data: &[u8]| {
    let (step, at, bytes) = match data {
        [s, a, rest @ ..] => {
            let step = if *s == 0 { 4096 } else { usize::from(s % 64) + 1 };
            (step, (*a > 0).then(|| u64::from(*a - 1)), rest)
        }
        _ => (1, None, data),
    };

    // The first open, as `contents-open` makes it.
    let mut op = Opener::new(at);
    let opts = op.options();
    let scan = walk(bytes, step, opts, &mut |ev| op.on_event(ev));
    let mut opened = op.finish(&scan);
    if let Some(mut d) = opened.again.take() {
        walks(bytes, step, &mut d);
        opened.db = d.finish();
    }
    let log = Log::load(bytes);
    assert_eq!(opened.log.entries, log.entries);
    assert_eq!(opened.log.history, log.history);
    let db = opened.db.as_ref().ok().map(|(db, _)| db.dump_json(true));
    let want = contents::database_at(bytes, Upto::Index(opened.at));
    if let (Some(got), Ok((w, _))) = (&db, &want) {
        assert_eq!(got, &w.dump_json(true));
    }

    // The sizes walk after a replay walk, as `contents-sizes` makes it.
    let mut all = DatabaseAt::new(Upto::All);
    walks(bytes, step, &mut all);
    if let Some(replay) = all.into_replay() {
        let mut st = SizesStream::new(&opened.log, &replay);
        let scan = walk(bytes, step, ScanOptions::default(), &mut |ev| {
            st.on_event(&opened.log, ev);
            Verdict::Keep
        });
        drop(scan);
        for c in bytes.chunks(step) {
            st.chunk(c);
        }
        let len = st.bytes();
        let mut got = st.finish();
        if let Some(db) = replay.db {
            got.compaction = contents::sizes::compaction_of(&log, &db.into_core(), None, len);
            let want = contents::sizes::sizes(&log, None);
            assert_eq!(got, want);
        }
    }

    // Each row's history from its records read back by offset, as
    // `contents-history` reads them.
    for u in opened.log.history.rows().take(16) {
        let got = contents::history::history_with(&opened.log, u, |e| {
            let (off, len, body) = Log::record_span(e);
            let rec = bytes.get(off as usize..(off + len) as usize)?;
            rec.get(body..body + e.body_len)
        });
        let want = contents::history::history(&log, u);
        assert_eq!(got.is_ok(), want.is_ok());
        if let (Ok(g), Ok(w)) = (got, want) {
            assert_eq!(g, w);
        }
    }
});
