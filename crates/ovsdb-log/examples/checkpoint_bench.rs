//! Jumps to random indexes of a large file through the checkpoints of its
//! load (`ovsdb_log::checkpoint`), the file read from disk in 4 MB chunks
//! as the web worker reads a `File`: the load's time with and without
//! checkpoints, the process's memory after it, and the time of each jump
//! (resume at the nearest checkpoint, read from its offset, replay to the
//! index).
//!   cargo run --release -p ovsdb-log --example checkpoint_bench -- FILE [JUMPS=50] [none|plain]
//! Then 5 × 10 steps of one entry forward, each from where the last one
//! landed (`Checkpoint::after`, the explorer's `]` key).
//! `none` loads without checkpoints (compare the memory of two runs);
//! `plain` jumps replay every record, as the inspector's do, instead of
//! reaching the database by the records' net change (time travel's).
//! `index` keeps the op index and jumps through it; `preview` too, and
//! each jump first shows its preview (`Jump::preview`: the largest
//! table's rows in order, 30 of them read and built on their own), timed
//! apart from the rest of its landing, as the Contents page shows a long
//! jump.
use ovsdb_log::checkpoint::Policy;
use ovsdb_log::replay_pass::{ReplayEnd, ReplayPass};
use ovsdb_log::{LogScan, Replay, Upto, Verdict};
use std::io::{Read, Seek, SeekFrom};
use std::time::Instant;

const CHUNK: usize = 4 << 20;

/// The process's resident and peak resident memory, in MB (Linux).
fn memory_mb() -> (f64, f64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |key: &str| {
        s.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1024.0
    };
    (kb("VmRSS:"), kb("VmHWM:"))
}

/// CPU time of this thread so far, in ms (Linux's schedstat: nanoseconds
/// on a CPU, whatever else runs on the machine), or 0 elsewhere.
fn cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e6)
}

/// Feeds the file from `offset` on to `push` until it says stop; bytes read.
fn read_from(path: &str, offset: u64, push: &mut dyn FnMut(&[u8]) -> bool) -> u64 {
    let mut f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    f.seek(SeekFrom::Start(offset)).expect("seek");
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0;
    loop {
        let n = f.read(&mut buf).expect("read");
        if n == 0 {
            return total;
        }
        total += n as u64;
        if push(&buf[..n]) {
            return total;
        }
    }
}

thread_local! {
    /// Byte ranges read back, over all jumps.
    static RANGES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Reads back the byte ranges a jump through the op index asks for
/// ([`ovsdb_log::checkpoint::Jump::reads`]); bytes read.
fn read_ranges(path: &str, j: &mut ovsdb_log::checkpoint::Jump) -> u64 {
    let ranges = j.reads();
    if ranges.is_empty() {
        return 0;
    }
    RANGES.with(|r| r.set(r.get() + ranges.len()));
    let mut f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut total = 0;
    let mut buf = Vec::new();
    for (a, b) in ranges {
        f.seek(SeekFrom::Start(a)).expect("seek");
        buf.resize(usize::try_from(b - a).expect("a range fits"), 0);
        let n = read_full(&mut f, &mut buf);
        total += n as u64;
        j.fill(a, &buf[..n]);
    }
    total
}

fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]).expect("read") {
            0 => break,
            k => n += k,
        }
    }
    n
}

fn load(path: &str, keep: bool, op_index: bool) -> Replay {
    let mut pass = ReplayPass::first(Upto::All);
    if keep {
        let mut policy = Policy {
            op_index,
            ..Policy::default()
        };
        if let Some(mb) = std::env::var("BUDGET_MB")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            policy.budget_bytes = mb << 20;
        }
        pass = pass.with_checkpoints(policy);
    }
    let walk = |pass: &mut ReplayPass| {
        let mut scan = LogScan::new(pass.options());
        read_from(path, 0, &mut |c| {
            scan.push(c, &mut |ev| {
                pass.on_event(&ev);
                Verdict::Keep
            });
            false
        });
        scan.finish(&mut |ev| {
            pass.on_event(&ev);
            Verdict::Keep
        });
        scan
    };
    let scan = walk(&mut pass);
    match pass.end(&scan) {
        ReplayEnd::Done(r) => *r,
        ReplayEnd::Again(mut pass) => {
            walk(&mut pass);
            pass.finish(None)
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: checkpoint_bench FILE [JUMPS] [none|plain]");
        std::process::exit(2);
    };
    let jumps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(50);
    let mode = args.next();
    let keep = mode.as_deref() != Some("none");
    // `plain`: jumps that replay every record (and give their sizes), not
    // the database alone by the records' net change.
    let plain = mode.as_deref() == Some("plain");
    // `index`: the load keeps the op index too, and jumps by net change
    // read back only the records it names (`Policy::op_index`).
    let preview = mode.as_deref() == Some("preview");
    let op_index = mode.as_deref() == Some("index") || preview;
    let mut previews = Vec::new();
    let mut preview_ranges = 0usize;
    let t0 = Instant::now();
    let r = load(&path, keep, op_index);
    let load_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (rss, peak) = memory_mb();
    println!(
        "load {}: {load_ms:.0} ms, {} entries applied (last index {}), RSS {rss:.0} MB, peak {peak:.0} MB",
        if keep { "with checkpoints" } else { "without checkpoints" },
        r.entries.len(),
        r.applied
    );
    let Some(ck) = r.checkpoints.as_deref() else {
        return;
    };
    let spacing = ck
        .list()
        .windows(2)
        .map(|w| w[1].at.offset - w[0].at.offset)
        .max()
        .unwrap_or(0);
    println!(
        "{} checkpoints, up to {:.1} MB apart, holding about {:.0} MB of rows (estimate)",
        ck.len(),
        spacing as f64 / 1e6,
        ck.held_bytes() as f64 / 1e6
    );
    if let Some(ix) = ck.op_index() {
        println!(
            "  and the op index beside them: {} operations, {:.0} MB",
            ix.ops_len(),
            ix.bytes() as f64 / 1e6
        );
    }
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut times = Vec::new();
    // Per jump: the walk (reading, framing, taking the records) and the
    // landing (building and placing the rows, or the replay's end).
    let mut walks = Vec::new();
    let mut lands = Vec::new();
    let mut read_total = 0u64;
    let (mut walk_cpu, mut land_cpu) = (0.0, 0.0);
    for _ in 0..jumps {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let index = seed % (r.applied + 1);
        let t = Instant::now();
        let c0 = cpu_ms();
        let mut j = if plain {
            ck.jump(index)
        } else {
            ck.jump_database(index)
        }
        .expect("sealed");
        let folded = t.elapsed().as_secs_f64() * 1e3;
        if preview && j.by_index() {
            // The table with the most rows, 30 of them from a random start.
            let names: Vec<String> = ck.list()[0]
                .db()
                .or(r.db.as_ref())
                .map(|d| d.schema.tables.iter().map(|t| t.name.clone()).collect())
                .unwrap_or_default();
            // The counts of the first preview pick the table.
            let largest = names.first().and_then(|n| j.preview(n)).and_then(|p| {
                let k = (0..p.counts.len()).max_by_key(|&k| p.counts[k])?;
                names.get(k)
            });
            let shown = largest.and_then(|n| Some((n, j.preview(n)?)));
            if let Some((table, p)) = shown {
                let t_order = Instant::now();
                let _ = j.preview(table);
                let order_ms = t_order.elapsed().as_secs_f64() * 1e3;
                let start = (seed >> 8) as usize % (p.uuids.len().saturating_sub(30) + 1);
                let window: Vec<ovsdb::Uuid> = p.uuids[start..].iter().take(30).copied().collect();
                let ranges = j.preview_reads(table, &window);
                preview_ranges += ranges.len();
                let mut f = std::fs::File::open(&path).expect("open");
                for (a, b) in ranges {
                    let mut buf = vec![0u8; usize::try_from(b - a).expect("a range fits")];
                    f.seek(SeekFrom::Start(a)).expect("seek");
                    let n = read_full(&mut f, &mut buf);
                    j.fill(a, &buf[..n]);
                }
                let rows = j.preview_rows(table, &window).expect("a preview");
                assert!(rows.iter().all(Option::is_some), "every row shown is there");
                previews.push(t.elapsed().as_secs_f64() * 1e3);
                if std::env::var_os("PREVIEW_PARTS").is_some() {
                    println!(
                        "    fold {folded:.1} ms, one preview {order_ms:.1} ms, whole {:.1} ms",
                        t.elapsed().as_secs_f64() * 1e3
                    );
                    // Three steps on before landing, each previewed.
                    let mut s = Box::new(ck.jump_database(index).expect("sealed"));
                    for k in 1..=3 {
                        let t1 = Instant::now();
                        s = match ck.step_jump(s, index + k) {
                            Ok(s) => s,
                            Err(_) => break,
                        };
                        let stepped = t1.elapsed().as_secs_f64() * 1e3;
                        let t2 = Instant::now();
                        let _ = s.preview(table);
                        println!(
                            "      step {k}: moved on {stepped:.1} ms, preview {:.1} ms",
                            t2.elapsed().as_secs_f64() * 1e3
                        );
                    }
                }
            }
        }
        // A jump through the op index folds it when it is made: counted
        // with its reads as the walk they replace.
        let mut w = t;
        let mut c0 = c0;
        read_total += read_ranges(&path, &mut j);
        let got = loop {
            if !j.by_index() {
                read_total += read_from(&path, j.offset(), &mut |c| j.push(c));
            }
            walks.push(w.elapsed().as_secs_f64() * 1e3);
            let l = Instant::now();
            let c1 = cpu_ms();
            let landed = j.finish();
            lands.push(l.elapsed().as_secs_f64() * 1e3);
            let c2 = cpu_ms();
            walk_cpu += c1 - c0;
            land_cpu += c2 - c1;
            match landed {
                Ok(r) => break r,
                Err(again) => j = *again,
            }
            w = Instant::now();
            c0 = cpu_ms();
        };
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(got.applied.min(index), got.applied, "index {index}");
    }
    times.sort_by(f64::total_cmp);
    walks.sort_by(f64::total_cmp);
    lands.sort_by(f64::total_cmp);
    if let (Some(&max), Some(&median)) = (times.last(), times.get(times.len() / 2)) {
        println!(
            "{jumps} random jumps: median {median:.1} ms, max {max:.1} ms, {:.1} MB read per jump on average",
            read_total as f64 / jumps as f64 / 1e6
        );
        let ranges = RANGES.with(|r| r.get());
        if ranges > 0 {
            println!(
                "  read back through the op index in {:.0} ranges per jump on average",
                ranges as f64 / jumps as f64
            );
        }
        println!(
            "  of which the walk: median {:.1} ms, max {:.1} ms; the landing: median {:.1} ms, max {:.1} ms",
            walks[walks.len() / 2],
            walks[walks.len() - 1],
            lands[lands.len() / 2],
            lands[lands.len() - 1]
        );
        println!(
            "  CPU time per jump on average (the thread's, whatever else runs): walk {:.1} ms, landing {:.1} ms",
            walk_cpu / jumps as f64,
            land_cpu / jumps as f64
        );
        if !previews.is_empty() {
            previews.sort_by(f64::total_cmp);
            println!(
                "  {} previews (counts, order, 30 rows read and built on their own): median {:.1} ms, max {:.1} ms, {:.0} ranges each on average",
                previews.len(),
                previews[previews.len() / 2],
                previews[previews.len() - 1],
                preview_ranges as f64 / previews.len() as f64
            );
        }
    }
    // Stepping forward one entry at a time from where the last jump
    // landed (the explorer's `]` key): 5 random starts, 10 steps each.
    if !plain && jumps > 0 {
        let mut steps = Vec::new();
        let mut read_steps = 0u64;
        for _ in 0..5 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let first = seed % (r.applied.saturating_sub(10) + 1);
            let mut landing = None;
            for (k, index) in (first..first + 11).enumerate() {
                let t = Instant::now();
                let mut j = ck
                    .jump_database_from(index, landing.as_ref())
                    .expect("sealed");
                let mut n = read_ranges(&path, &mut j);
                let got = loop {
                    if !j.by_index() {
                        n += read_from(&path, j.offset(), &mut |c| j.push(c));
                    }
                    if k > 0 {
                        read_steps += std::mem::take(&mut n);
                    }
                    match j.finish() {
                        Ok(r) => break r,
                        Err(again) => j = *again,
                    }
                };
                if k > 0 {
                    steps.push(t.elapsed().as_secs_f64() * 1e3);
                }
                landing = ovsdb_log::checkpoint::Checkpoint::after(&got);
            }
        }
        steps.sort_by(f64::total_cmp);
        println!(
            "{} steps forward from the last landing: median {:.1} ms, max {:.1} ms, {:.2} MB read per step on average",
            steps.len(),
            steps[steps.len() / 2],
            steps[steps.len() - 1],
            read_steps as f64 / steps.len() as f64 / 1e6
        );
    }
    // The load's rows go with the process, not one by one.
    std::mem::forget(r);
}
