#![cfg(not(target_arch = "wasm32"))]
//! A summary whose size replay reads its transactions ahead
//! (`Summarizer::read_ahead`, what `inspect` does on a second thread) is
//! the summary without it, whatever the reads' lag: on every sample and
//! fixture, on damaged copies, and across the files of a cluster that
//! share their replay. The reads are really used (counted).

mod common;

use ovsdb_log::ahead::{InlineReadAhead, Prepared, ReadAhead};
use ovsdb_log::summary::{Summarizer, SummaryEnd};
use ovsdb_log::{LogScan, SharedReplay, Verdict};
use std::cell::Cell;
use std::rc::Rc;

/// An inline read ahead that counts the reads the replay took.
struct Counted {
    inner: InlineReadAhead,
    taken: Rc<Cell<u64>>,
}

impl ReadAhead for Counted {
    fn submit(&mut self, seq: u64, data: Vec<u8>) {
        self.inner.submit(seq, data);
    }
    fn take(&mut self, seq: u64, wait: bool) -> Option<Prepared> {
        let r = self.inner.take(seq, wait);
        if r.is_some() {
            self.taken.set(self.taken.get() + 1);
        }
        r
    }
}

/// The summary JSON and per-entry sizes of `bytes` in 64 KiB chunks,
/// reading ahead with `lag` when given; what the replays leave for the
/// next file goes through `shared`.
fn summary(
    bytes: &[u8],
    lag: Option<usize>,
    shared: &mut SharedReplay,
    taken: &Rc<Cell<u64>>,
) -> String {
    let mut sum = Summarizer::new(true);
    sum.share(std::mem::take(shared));
    if let Some(lag) = lag {
        sum.read_ahead(Box::new(Counted {
            inner: InlineReadAhead::with_lag(lag),
            taken: Rc::clone(taken),
        }));
    }
    let mut scan = LogScan::new(sum.options());
    for c in bytes.chunks(64 << 10) {
        scan.push(c, &mut |ev| sum.on_event(&ev));
    }
    scan.finish(&mut |ev| sum.on_event(&ev));
    let (end, sh) = sum.finish_shared(&scan);
    *shared = sh;
    let (s, e) = match end {
        SummaryEnd::Done(s, e) => (*s, e),
        SummaryEnd::Again(mut p) => {
            let mut scan = LogScan::new(p.options());
            let mut f = |ev: ovsdb_log::Event<'_>| {
                p.on_event(&ev);
                Verdict::Keep
            };
            scan.push(bytes, &mut f);
            scan.finish(&mut f);
            (*p).finish()
        }
    };
    format!("{} {e:?}", s.to_json(None))
}

const LAGS: [usize; 4] = [0, 1, 5, 100_000];

#[test]
fn reading_ahead_changes_no_summary() {
    let taken = Rc::new(Cell::new(0));
    let mut files = 0;
    for (name, bytes) in common::distinct_inputs() {
        let mut cases = vec![("as is".to_string(), bytes.clone())];
        cases.extend(common::damaged_copies(&bytes));
        for (what, b) in cases {
            let plain = summary(&b, None, &mut SharedReplay::default(), &taken);
            for lag in LAGS {
                let ahead = summary(&b, Some(lag), &mut SharedReplay::default(), &taken);
                assert_eq!(ahead, plain, "{name} {what}: lag {lag}");
            }
            files += 1;
        }
    }
    assert!(files > 100, "{files} files");
    // The replays took thousands of reads made ahead, not their bytes.
    assert!(taken.get() > 1_000, "{} reads taken", taken.get());
}

#[test]
fn reading_ahead_changes_no_cluster_summary() {
    let taken = Rc::new(Cell::new(0));
    let mut by_scenario: std::collections::BTreeMap<String, Vec<Vec<u8>>> = Default::default();
    for (scen, _stem, bytes) in common::all_samples() {
        by_scenario.entry(scen).or_default().push(bytes);
    }
    let mut clusters = 0;
    for (scen, files) in by_scenario.into_iter().filter(|(_, f)| f.len() > 1) {
        for lag in LAGS {
            let (mut plain_sh, mut ahead_sh) = (SharedReplay::default(), SharedReplay::default());
            for (i, b) in files.iter().enumerate() {
                let plain = summary(b, None, &mut plain_sh, &taken);
                let ahead = summary(b, Some(lag), &mut ahead_sh, &taken);
                assert_eq!(ahead, plain, "{scen} file {i}: lag {lag}");
            }
            // The later files took the first one's sizes as often either way.
            assert_eq!(ahead_sh.reused, plain_sh.reused, "{scen}: lag {lag}");
        }
        clusters += 1;
    }
    assert!(clusters >= 5, "{clusters} clusters");
    assert!(taken.get() > 100, "{} reads taken", taken.get());
}
