//! Fuzz the log reader: framing, lazy decoding, summary and cluster check
//! must never panic on any input.
//!
//! Run: `cargo +nightly fuzz run log_reader -- -max_total_time=600`
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovsdb_log::{check_cluster, summarize, Format, Framer};

fuzz_target!(|data: &[u8]| {
    let s = summarize(data);
    let _ = s.to_json(Some("fuzz"));
    let mut fr = Framer::new(data);
    let mut format = None;
    while let Some(Ok(raw)) = fr.next() {
        let f = *format.get_or_insert(fr.format().unwrap_or(Format::Clustered));
        let _ = raw.decode(f);
    }
    // Split the input in two "servers" and check them together.
    let mid = data.len() / 2;
    let _ = check_cluster(&[("a", &data[..mid]), ("b", &data[mid..]), ("c", data)]);
});
