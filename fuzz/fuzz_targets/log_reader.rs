//! Fuzz the log reader: framing, lazy decoding, summary (streaming sizes
//! and the two-pass fallback), replay into both database models, and the
//! cluster check must never panic or overflow on any input.
//!
//! Run (from fuzz/; new inputs go to the first, gitignored, directory):
//! `mkdir -p corpus/log_reader && cargo +nightly fuzz run log_reader corpus/log_reader seeds/log_reader -- -max_total_time=600 -max_len=32768`
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovsdb_log::{check_cluster, replay, replay_database, summarize_detailed, Format, Framer, Upto};

fuzz_target!(|data: &[u8]| {
    // summarize() is summarize_detailed().0; the detailed form also returns
    // the per-entry sizes of the streaming pass (or of its fallback).
    let (s, entries) = summarize_detailed(data);
    let _ = s.to_json(Some("fuzz"));
    if s.entry_bytes.full.is_some() {
        // Streaming and two-pass accounting must agree entry by entry.
        let r = replay(data, Upto::All);
        assert_eq!(entries, r.entries, "streaming vs two-pass entry sizes");
        let (_, full, diff) = r.totals();
        assert_eq!((s.entry_bytes.full, s.entry_bytes.diff), (full, diff));
    } else {
        assert!(entries.is_empty());
    }

    let mut fr = Framer::new(data);
    let mut format = None;
    while let Some(Ok(raw)) = fr.next() {
        let f = *format.get_or_insert(fr.format().unwrap_or(Format::Clustered));
        let _ = raw.decode(f);
    }

    // Replay through the core's JSON txn reader with two limits, and
    // compare with the log replay (byte-level reader) when both succeed.
    // Both end in an ovsdb::Database, so this checks the readers. Extremes are
    // included (saturating index arithmetic): the last byte picks the
    // index, 255 meaning u64::MAX. (Upto::All is replayed above.)
    let pick = match data.last().copied().unwrap_or(0) {
        255 => u64::MAX,
        b => b as u64,
    };
    for upto in [Upto::Committed, Upto::Index(pick)] {
        let (core, err) = replay_database(data, upto);
        let mine = replay(data, upto);
        if let (Some(core), None, Some(db), None) = (core, err, mine.db, mine.error) {
            // Everything must be equal, weak-reference columns included
            // (both drop weak references to deleted or missing rows).
            assert_eq!(db.to_json(), core.dump_json(true), "{upto:?}");
        }
    }

    // Split the input in two "servers" and check them together.
    let mid = data.len() / 2;
    let _ = check_cluster(&[("a", &data[..mid]), ("b", &data[mid..]), ("c", data)]);
});
