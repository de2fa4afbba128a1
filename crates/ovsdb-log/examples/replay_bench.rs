//! Replay timings on one file: the log's own replay (`replay`, the path of
//! `inspect`), the streaming summary (`summarize_detailed`) and the core
//! database (`replay_database`, `ovsdb::Database`). Best of N runs.
//!   cargo run --release -p ovsdb-log --example replay_bench -- FILE [RUNS=3] [ONLY]
//! ONLY = `replay`, `summary` or `core` runs just that one (so that the
//! process's CPU time, e.g. from `/usr/bin/time`, is that function's).
use std::time::{Duration, Instant};

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let v = f();
        best = best.min(t0.elapsed());
        out = Some(v);
    }
    (best, out.expect("at least one run"))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: replay_bench FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let only = args.next();
    let want = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mb = bytes.len() as f64 / 1e6;
    let show = |name: &str, d: Duration, what: String| {
        println!(
            "{name:<28} {:>9.1} ms  {:>7.1} MB/s  ({what})",
            d.as_secs_f64() * 1e3,
            mb / d.as_secs_f64()
        );
    };
    println!("file: {path} ({} bytes), best of {runs}", bytes.len());
    if want("replay") {
        let (d, r) = best(runs, || ovsdb_log::replay(&bytes, ovsdb_log::Upto::All));
        show(
            "replay (log Db)",
            d,
            format!(
                "{} entries, {} rows",
                r.entries.len(),
                r.db.as_ref().map_or(0, |d| d.row_count())
            ),
        );
    }
    if want("summary") {
        let (d, (s, e)) = best(runs, || ovsdb_log::summarize_detailed(&bytes));
        show(
            "summarize_detailed",
            d,
            format!("{} records, {} sizes", s.records, e.len()),
        );
    }
    if want("core") {
        let (d, (db, err)) = best(runs, || {
            ovsdb_log::replay_database(&bytes, ovsdb_log::Upto::All)
        });
        show(
            "replay_database (core)",
            d,
            format!(
                "{} rows, error: {}",
                db.as_ref().map_or(0, |d| d.row_count()),
                err.is_some()
            ),
        );
    }
}
