//! The replay of `ovsdb-scope inspect` beside `sha1sum`, on one file in
//! one run: the file is read in 4 MiB chunks both times, once into a
//! SHA-1 digest and once into the streaming summary with sizes (frame and
//! SHA-1 every record, replay every entry on the database, size it as
//! stored / full / diff: `summary::Summarizer`, one thread). Prints user
//! CPU time, wall time, throughput (on user CPU) and the peak RSS of each
//! phase (VmHWM, reset between phases through /proc/self/clear_refs).
//!   cargo run --release -p ovsdb-log --example inspect_bench -- FILE [RUNS=1]
//! Linux only (reads /proc/self); CPU times assume 100 clock ticks a second.
use std::io::Read;
use std::time::Instant;

const CHUNK: usize = 4 << 20;

/// User CPU seconds of this process so far (/proc/self/stat field 14).
fn user_cpu() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) is in parentheses and may hold spaces.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: f64 = rest
        .split_whitespace()
        .nth(11)
        .and_then(|t| t.parse().ok())
        .unwrap_or(0.0);
    ticks / 100.0
}

/// Peak RSS in MB since the last reset.
fn peak_rss_mb() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn read_chunks(path: &str, f: &mut dyn FnMut(&[u8])) {
    let mut file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut buf = vec![0u8; CHUNK];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => f(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => panic!("{path}: {e}"),
        }
    }
}

fn measure<T>(name: &str, bytes: u64, f: impl FnOnce() -> T) -> T {
    reset_peak();
    let (c0, t0) = (user_cpu(), Instant::now());
    let v = f();
    let (cpu, wall) = (user_cpu() - c0, t0.elapsed().as_secs_f64());
    let mb = bytes as f64 / 1e6;
    println!(
        "{name:<26} user {cpu:>6.2} s  wall {wall:>6.2} s  {:>7.1} MB/s (user)  peak RSS {:>6.0} MB",
        mb / cpu.max(0.01),
        peak_rss_mb()
    );
    v
}

fn main() {
    use ovsdb_log::summary::{Summarizer, SummaryEnd};
    use ovsdb_log::{LogScan, Verdict};
    use sha1::{Digest, Sha1};
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: inspect_bench FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let bytes = std::fs::metadata(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .len();
    println!("file: {path} ({bytes} bytes)");
    for _ in 0..runs.max(1) {
        let digest = measure("sha1 (4 MiB chunks)", bytes, || {
            let mut h = Sha1::new();
            read_chunks(&path, &mut |c| h.update(c));
            h.finalize()
        });
        let sizes = measure("inspect replay (summary)", bytes, || {
            let mut sum = Summarizer::new(true);
            let mut scan = LogScan::new(sum.options());
            read_chunks(&path, &mut |c| scan.push(c, &mut |ev| sum.on_event(&ev)));
            scan.finish(&mut |ev| sum.on_event(&ev));
            match sum.finish(&scan) {
                SummaryEnd::Done(s, e) => (s.entry_bytes, e.len()),
                SummaryEnd::Again(mut pass) => {
                    let mut scan = LogScan::new(pass.options());
                    let mut f = |ev: ovsdb_log::Event<'_>| {
                        pass.on_event(&ev);
                        Verdict::Keep
                    };
                    read_chunks(&path, &mut |c| scan.push(c, &mut f));
                    scan.finish(&mut f);
                    let (s, e) = (*pass).finish();
                    (s.entry_bytes, e.len())
                }
            }
        });
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        println!(
            "  sha1 {hex}; entry bytes stored {} full {:?} diff {:?}; {} sized entries",
            sizes.0.stored, sizes.0.full, sizes.0.diff, sizes.1
        );
    }
}
