//! Fuzz the collector: arbitrary bytes (as gzip, xz, tar, nested, or a
//! leaf) must never panic, and what it keeps stays within its limits.
//!
//! Run (from fuzz/; new inputs go to the first, gitignored, directory):
//! `mkdir -p corpus/collect && cargo +nightly fuzz run collect corpus/collect seeds/collect -- -max_total_time=300 -max_len=65536`
#![no_main]

use std::io::Read;

use evidence::collect::{Collected, Collector, Limits};
use libfuzzer_sys::fuzz_target;

/// Small bounds, so bombs are found quickly and runs stay fast.
const LIMITS: Limits = Limits {
    max_total_bytes: 1 << 20,
    max_decompressed_bytes: 8 << 20,
    max_ratio: 100,
    ratio_after_bytes: 64 << 10,
    max_buffered_bytes: 2 << 20,
    max_depth: 4,
};

/// The same bytes, a few at a time (short reads).
struct Chunked<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.step).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn check(c: Collector) -> Collected {
    let kept = c.kept_bytes();
    let got = c.finish();
    let sum: u64 = got.items.iter().map(|i| i.bytes.len() as u64).sum();
    assert_eq!(sum, kept);
    assert!(sum <= LIMITS.max_total_bytes, "kept {sum} bytes");
    assert!(got.items.iter().all(|i| !i.bytes.is_empty()));
    got
}

fuzz_target!(|data: &[u8]| {
    let mut whole = Collector::new(LIMITS);
    whole.add_bytes("in", data);
    let whole = check(whole);

    let step = data.first().map_or(1, |&b| usize::from(b % 7) + 1);
    let mut chunked = Collector::new(LIMITS);
    chunked.add("in", &mut Chunked { data, step });
    let chunked = check(chunked);

    // How the bytes arrive must not change what is found.
    let found = |c: &Collected| c.items.iter().map(|i| (i.path.clone(), i.kind)).collect::<Vec<_>>();
    assert_eq!(found(&whole), found(&chunked));
});
