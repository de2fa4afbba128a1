//! Core benchmarks (run: `cargo bench -p ovsdb --bench core`). Prints
//! figures; no assertions on time.
//!
//! * JSON parse / serialize throughput on a real full-value clustered file;
//! * replay throughput (parse + apply + full/diff size accounting);
//! * single-element diff application on sets of 1k..1M elements, to show
//!   the O(d log n) cost (vs. O(n) for a full-value replacement).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use ovsdb::json::{parse, Json};
use ovsdb::{Atom, Database, DatabaseSchema, Datum, ReplayOptions, StorageMode, Type, Uuid};

fn repo_file(rel: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(rel),
    )
    .unwrap()
}

fn bodies(file: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < file.len() {
        let nl = pos + file[pos..].iter().position(|&b| b == b'\n').unwrap();
        let header = std::str::from_utf8(&file[pos..nl]).unwrap();
        let len: usize = header.split(' ').nth(2).unwrap().parse().unwrap();
        out.push(&file[nl + 1..nl + 1 + len]);
        pos = nl + 1 + len;
    }
    out
}

fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

fn main() {
    // OVSDB_BENCH_FILE=path: parse every record body of that file once
    // (read + frame + parse; SHA-1 is ovsdb-log's business) and exit.
    if let Ok(path) = std::env::var("OVSDB_BENCH_FILE") {
        let t = Instant::now();
        let file = std::fs::read(&path).unwrap();
        let mut n = 0usize;
        for b in bodies(&file) {
            black_box(parse(b).unwrap());
            n += 1;
        }
        let dt = t.elapsed().as_secs_f64();
        println!(
            "{path}: {n} records, {} bytes, {:.2} s, {:.1} MB/s",
            file.len(),
            dt,
            mbps(file.len(), dt)
        );
        return;
    }
    let file = repo_file("static/samples/acl-portgroup-full/s1.db");
    let bodies = bodies(&file);
    let total: usize = bodies.iter().map(|b| b.len()).sum();
    let reps = 20;
    if let Ok(n) = std::env::var("OVSDB_BENCH_PARSE_ONLY") {
        let n: usize = n.parse().unwrap_or(200);
        let t = Instant::now();
        for _ in 0..n {
            for b in &bodies {
                black_box(parse(b).unwrap());
            }
        }
        println!(
            "json parse only : {:8.1} MB/s",
            mbps(total * n, t.elapsed().as_secs_f64())
        );
        return;
    }

    let t = Instant::now();
    let mut parsed = Vec::new();
    for _ in 0..reps {
        parsed = bodies
            .iter()
            .map(|b| parse(b).unwrap())
            .collect::<Vec<Json>>();
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "json parse      : {:8.1} MB/s ({} bytes x {reps})",
        mbps(total * reps, dt),
        total
    );

    let t = Instant::now();
    let mut out = Vec::with_capacity(total);
    for _ in 0..reps {
        out.clear();
        for j in &parsed {
            j.write_compact(&mut out);
        }
    }
    let dt = t.elapsed().as_secs_f64();
    println!("json serialize  : {:8.1} MB/s", mbps(total * reps, dt));

    // Replay: schema from the header's prev_data, then every entry's txn.
    let t = Instant::now();
    let mut full_sum = 0usize;
    let mut diff_sum = 0usize;
    for _ in 0..reps {
        let hdr = &parsed[0];
        let Some(Json::Array(pd)) = hdr.get("prev_data") else {
            panic!()
        };
        let schema = Arc::new(DatabaseSchema::from_json(&pd[0]).unwrap());
        let mut db = Database::new(schema);
        db.apply_txn_json(&pd[1], ReplayOptions::default()).unwrap();
        for r in &parsed[1..] {
            if let Some(Json::Array(d)) = r.get("data") {
                if let Some(txn) = d.get(1).filter(|t| !t.is_null()) {
                    let c = db.apply_txn_json(txn, ReplayOptions::default()).unwrap();
                    full_sum += db.txn_json_len(&c, StorageMode::Full);
                    diff_sum += db.txn_json_len(&c, StorageMode::Diff);
                }
            }
        }
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "replay+sizes    : {:8.1} MB/s of file (full {} / diff {} table bytes per pass)",
        mbps(file.len() * reps, dt),
        full_sum / reps,
        diff_sum / reps
    );

    // Diff application cost vs set size.
    let ty =
        Type::from_json(&parse(br#"{"key":"uuid","min":0,"max":"unlimited"}"#).unwrap()).unwrap();
    println!("apply 1-element diff to a uuid set (mean over 10000 applies):");
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let mut set = Datum::set((0..n as u128).map(|i| {
            Atom::Uuid(Uuid(
                i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835),
            ))
        }));
        let iters = 10_000u128;
        let t = Instant::now();
        for i in 0..iters {
            let d = Datum::scalar(Atom::Uuid(Uuid(u128::MAX - i)));
            set.apply_diff(&d, &ty).unwrap();
        }
        let per = t.elapsed().as_secs_f64() / iters as f64;
        // full replacement of the same change for comparison
        let t = Instant::now();
        let full_iters = 20;
        for _ in 0..full_iters {
            black_box(set.clone());
        }
        let per_full = t.elapsed().as_secs_f64() / full_iters as f64;
        println!(
            "  n = {:>8}: diff apply {:8.3} us   (copying the full value: {:10.1} us)",
            n,
            per * 1e6,
            per_full * 1e6
        );
        black_box(&set);
    }
}
