//! Fuzz the ovsdb-server text log reader (crates/evidence): any bytes, in
//! any chunking, never panic; the result does not depend on the chunking;
//! joining the same parts in any order does not panic; the cluster/status,
//! memory/show and coverage/show parsers never panic.
//!
//! Run (from fuzz/):
//! `mkdir -p corpus/server_log && cargo +nightly fuzz run server_log corpus/server_log -- -max_total_time=300 -max_len=65536`
#![no_main]

use evidence::log::{join, parse_line, read_log, LogScanner};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let whole = read_log(data);
    assert!(whole.lines >= whole.unparsed);
    assert_eq!(whole.index.len() as u64, whole.lines);
    assert_eq!(whole.bytes, data.len() as u64);

    // Chunk sizes from the first byte: 1..=64, and a split at every LF.
    let n = data.first().map_or(1, |b| (*b as usize % 64) + 1);
    let mut s = LogScanner::new();
    for c in data.chunks(n) {
        s.push(c);
    }
    assert!(s.finish() == whole, "chunks of {n}");
    let mut s = LogScanner::new();
    for c in data.split_inclusive(|&b| b == b'\n') {
        s.push(c);
    }
    assert!(s.finish() == whole, "split at LF");

    // Every line is readable back; parsed lines re-parse the same.
    for i in 0..whole.lines {
        let t = whole.line_text(i, data).expect("line in range");
        let info = whole.index[i as usize];
        if info.flags & evidence::log::flags::OVERLONG == 0 {
            assert_eq!(parse_line(t).is_some(), info.parsed());
        }
    }

    // Rotated parts: cut at the middle LF, join in reverse order.
    if let Some(mid) = data[data.len() / 2..].iter().position(|&b| b == b'\n') {
        let cut = data.len() / 2 + mid + 1;
        let j = join(vec![read_log(&data[cut..]), read_log(&data[..cut])]);
        assert_eq!(j.lines, whole.lines);
        assert_eq!(j.events.len(), whole.events.len());
    }

    let text = String::from_utf8_lossy(data);
    let _ = evidence::status::parse_cluster_status(&text);
    let _ = evidence::memory::parse_memory_show(&text);
    let _ = evidence::memory::parse_coverage_show(&text);
});
