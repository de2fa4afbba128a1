//! Speed of the log scanner on a large generated log, next to `wc -l` and
//! `grep -c` on the same file.
//!
//! `cargo run --release -p evidence --example log_speed -- [MB] [path]`
//! (default 300 MB at /tmp/evidence-log-speed.log; the file is written once
//! from the fixture logs' lines with increasing times and reused if its size
//! fits; it is never committed).

use evidence::log::LogScanner;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn civil(days: i64) -> (i64, i64, i64) {
    // H. Hinnant's civil_from_days.
    let z = days + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

fn stamp(ms: i64) -> String {
    let (y, mo, d) = civil(ms.div_euclid(86_400_000));
    let t = ms.rem_euclid(86_400_000);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        t / 3_600_000,
        t / 60_000 % 60,
        t / 1000 % 60,
        t % 1000
    )
}

fn fixture_lines() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut out = Vec::new();
    for group in ["incidents", "samples"] {
        let mut dirs: Vec<_> = std::fs::read_dir(root.join(group))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        dirs.sort();
        for d in dirs.into_iter().filter(|d| d.is_dir()) {
            let mut fs: Vec<_> = std::fs::read_dir(&d)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            fs.sort();
            for f in fs {
                if f.to_string_lossy().ends_with(".ovsdb-server.log") {
                    let t = std::fs::read_to_string(&f).unwrap();
                    // Keep everything after the time stamp.
                    out.extend(
                        t.lines()
                            .filter(|l| l.len() > 24)
                            .map(|l| l[24..].to_string()),
                    );
                }
            }
        }
    }
    out
}

fn generate(path: &Path, bytes: u64) {
    let lines = fixture_lines();
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let (mut written, mut ms, mut i) = (0u64, 1_796_152_675_952i64, 0usize);
    while written < bytes {
        let l = format!("{}{}\n", stamp(ms), lines[i % lines.len()]);
        w.write_all(l.as_bytes()).unwrap();
        written += l.len() as u64;
        ms += 3;
        i += 1;
    }
    w.flush().unwrap();
}

fn timed(cmd: &str, args: &[&str]) -> Option<(f64, String)> {
    let t = Instant::now();
    let out = std::process::Command::new(cmd).args(args).output().ok()?;
    Some((
        t.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
    ))
}

/// CPU time of this thread (Linux /proc; None elsewhere): the box may be
/// shared, so wall time alone says little.
fn cpu_s() -> Option<f64> {
    let t = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(t.split_whitespace().next()?.parse::<f64>().ok()? / 1e9)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mb: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(300);
    let path = PathBuf::from(args.next().unwrap_or("/tmp/evidence-log-speed.log".into()));
    let want = mb << 20;
    if std::fs::metadata(&path)
        .map(|m| m.len() < want || m.len() > want + 4096)
        .unwrap_or(true)
    {
        eprintln!("writing {} ({mb} MB)…", path.display());
        generate(&path, want);
    }
    let data = std::fs::read(&path).unwrap();
    let size = data.len() as f64 / 1e6;
    // Warm the page cache for the external tools too.
    let _ = timed("wc", &["-l", path.to_str().unwrap()]);

    let mut best = f64::MAX;
    let mut best_cpu = f64::MAX;
    let mut lines = 0;
    let mut events = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let c0 = cpu_s();
        let mut s = LogScanner::new();
        for c in data.chunks(64 << 10) {
            s.push(c);
        }
        let f = s.finish();
        best = best.min(t.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (c0, cpu_s()) {
            best_cpu = best_cpu.min(b - a);
        }
        lines = f.lines;
        events = f.events.len();
        assert_eq!(f.unparsed, 0);
    }
    println!(
        "LogScanner: {size:.0} MB, {lines} lines, {events} events in {best:.3} s = {:.0} MB/s (best of 3, 64 KiB chunks)",
        size / best
    );
    if best_cpu < f64::MAX {
        println!(
            "LogScanner CPU time: {best_cpu:.3} s = {:.0} MB/s of CPU",
            size / best_cpu
        );
    }
    let mut best_idx = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let c0 = cpu_s();
        let mut s = LogScanner::index_only();
        for c in data.chunks(64 << 10) {
            s.push(c);
        }
        let f = s.finish();
        let wall = t.elapsed().as_secs_f64();
        let cpu = c0.and_then(|a| Some(cpu_s()? - a)).unwrap_or(f64::NAN);
        if wall < best_idx {
            best_idx = wall;
            println!(
                "LogScanner::index_only: {} lines in {wall:.3} s = {:.0} MB/s wall, {:.0} MB/s of CPU",
                f.lines,
                size / wall,
                size / cpu
            );
        }
    }
    let p = path.to_str().unwrap();
    for (cmd, a) in [("wc", vec!["-l", p]), ("grep", vec!["-c", "raft", p])] {
        if let Some((t, out)) = timed(cmd, &a) {
            println!(
                "{cmd} {}: {t:.3} s wall = {:.0} MB/s ({out})",
                a[0],
                size / t
            );
        }
    }
}
