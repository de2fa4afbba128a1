//! Fuzz time travel's jumps: arbitrary bytes as a database file, loaded
//! with checkpoints close together, then jumps to several indexes by the
//! records' net change (`Checkpoints::jump_database`, which delimits
//! records with `skim::container_end` and skips lookups through the
//! checkpoints' row filters, or folds the op index and reads back the
//! column objects it names) and steps forward from where each landed
//! (`jump_database_from`). With the op index, a jump is also shown by its
//! preview first (`Jump::preview`: each table's rows and counts; a few rows
//! built on their own), stepped on before landing (`step_jump`) and landed
//! a slice at a time (`Jump::build`). Nothing may panic, and every landing
//! and preview must be the database (and the reference counts) a replay
//! from the start reaches at that index.
//!
//! Input: byte 0 picks the chunk size (1..=64, or 4096 when 0), whether
//! the checkpoints are thinned (odd: a budget of a few KB) and whether
//! the load keeps the op index (bit 6: jumps then read back the ranges
//! it names instead of walking), byte 1 seeds the indexes tried, the
//! rest is the file.
//!
//! Run (from fuzz/):
//! `mkdir -p corpus/checkpoint_jump && cargo +nightly fuzz run checkpoint_jump corpus/checkpoint_jump seeds/contents_stream -- -max_total_time=180 -max_len=65536`
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovsdb_log::checkpoint::{Checkpoint, Checkpoints, Policy};
use ovsdb_log::replay_pass::{ReplayEnd, ReplayPass};
use ovsdb_log::{replay, Event, LogScan, Replay, Upto, Verdict};

fn walk(bytes: &[u8], step: usize, pass: &mut ReplayPass) -> LogScan {
    let mut s = LogScan::new(pass.options());
    let mut f = |ev: Event<'_>| {
        pass.on_event(&ev);
        Verdict::Keep
    };
    for c in bytes.chunks(step) {
        s.push(c, &mut f);
    }
    s.finish(&mut f);
    s
}

fn load(bytes: &[u8], step: usize, policy: Policy) -> Replay {
    let mut pass = ReplayPass::first(Upto::All).with_checkpoints(policy);
    let scan = walk(bytes, step, &mut pass);
    match pass.end(&scan) {
        ReplayEnd::Done(r) => *r,
        ReplayEnd::Again(mut pass) => {
            walk(bytes, step, &mut pass);
            pass.finish(None)
        }
    }
}

fn jump(bytes: &[u8], ck: &Checkpoints, index: u64, step: usize, from: Option<&Checkpoint>) -> Replay {
    let mut j = ck.jump_database_from(index, from).expect("the load is over");
    // Through the op index: the ranges it names, read back.
    read_back(bytes, &mut j);
    loop {
        let Some(tail) = usize::try_from(j.offset()).ok().and_then(|o| bytes.get(o..)) else {
            panic!("a jump starts past the end of the file");
        };
        for c in tail.chunks(step) {
            if j.push(c) {
                break;
            }
        }
        match j.finish() {
            Ok(r) => return r,
            Err(plain) => j = *plain,
        }
    }
}

/// Reads back the ranges a jump through the op index names.
fn read_back(bytes: &[u8], j: &mut ovsdb_log::checkpoint::Jump) {
    fill(bytes, j, j.reads());
}

fn fill(bytes: &[u8], j: &mut ovsdb_log::checkpoint::Jump, ranges: Vec<(u64, u64)>) {
    for (a, b) in ranges {
        let range = usize::try_from(a).ok().zip(usize::try_from(b).ok());
        let Some(got) = range.and_then(|(a, b)| bytes.get(a..b)) else {
            panic!("a read back past the end of the file: {a}..{b}");
        };
        j.fill(a, got);
    }
}

/// A jump's preview at `index` against the replay's database there: every
/// table's rows and counts, and the first rows of each built on their own.
fn check_preview(bytes: &[u8], j: &mut ovsdb_log::checkpoint::Jump, want: &Replay, index: u64) {
    let Some(db) = want.db.as_ref() else { return };
    let count = |t: &str| db.core().table(t).map_or(0, |r| r.len());
    let counts: Vec<usize> = db.schema.tables.iter().map(|t| count(&t.name)).collect();
    for ts in &db.schema.tables {
        let p = j.preview(&ts.name).expect("a jump through the index");
        assert_eq!(p.counts, counts, "index {index}: counts");
        let keys: Vec<ovsdb::Uuid> =
            db.core().table(&ts.name).map(|t| t.rows.keys().copied().collect()).unwrap_or_default();
        assert_eq!(p.uuids, keys, "index {index}: rows of {}", ts.name);
        let window: Vec<ovsdb::Uuid> = p.uuids.iter().take(3).copied().collect();
        let reads = j.preview_reads(&ts.name, &window);
        fill(bytes, j, reads);
        let rows = j.preview_rows(&ts.name, &window).expect("its ranges are in");
        for (u, r) in window.iter().zip(rows) {
            let w = db.core().table(&ts.name).and_then(|t| t.rows.get(u));
            assert_eq!(r.map(|r| r.columns.clone()), w.map(|r| r.columns.clone()), "index {index}: row {u}");
        }
    }
}

fn state(r: &Replay) -> (Option<String>, u64, Option<Result<(), String>>) {
    (
        r.db.as_ref().map(|d| d.to_json().to_string()),
        r.applied,
        r.db
            .as_ref()
            .map(|d| d.core().check_integrity().map_err(|e| e.to_string())),
    )
}

fuzz_target!(|data: &[u8]| {
    let (step, thin, op_index, mut seed, bytes) = match data {
        [s, k, rest @ ..] => {
            let step = if *s == 0 { 4096 } else { usize::from(s % 64) + 1 };
            (step, s % 2 == 1, (s / 64) % 2 == 1, u64::from(*k) | 0x100, rest)
        }
        _ => return,
    };
    let policy = Policy {
        every_entries: 2,
        every_bytes: 1024,
        max: 6,
        budget_bytes: if thin { 4096 } else { u64::MAX },
        op_index,
    };
    let loaded = load(bytes, step, policy);
    let Some(ck) = loaded.checkpoints.as_deref() else {
        return;
    };
    let top = loaded.applied + 2;
    for _ in 0..4 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let index = seed % (top + 1);
        let got = jump(bytes, ck, index, step, None);
        assert_eq!(state(&got), state(&replay(bytes, Upto::Index(index))), "index {index}");
        // Two steps forward from the landing, as the `]` key makes them.
        let mut landing = Checkpoint::after(&got);
        for next in index + 1..index + 3 {
            let got = jump(bytes, ck, next, step, landing.as_ref());
            assert_eq!(state(&got), state(&replay(bytes, Upto::Index(next))), "step to {next}");
            landing = Checkpoint::after(&got);
        }
        // Shown by its preview, stepped on once before landing, landed a
        // slice at a time.
        let Some(mut j) = ck.jump_database(index).filter(|j| j.by_index()) else {
            continue;
        };
        let mut at = index;
        check_preview(bytes, &mut j, &replay(bytes, Upto::Index(at)), at);
        let mut j = match ck.step_jump(Box::new(j), index + 1) {
            Ok(moved) => {
                at = index + 1;
                *moved
            }
            Err(back) => *back,
        };
        let want = replay(bytes, Upto::Index(at));
        check_preview(bytes, &mut j, &want, at);
        read_back(bytes, &mut j);
        while !j.build(2) {}
        let got = loop {
            match j.finish() {
                Ok(r) => break r,
                Err(plain) => {
                    let mut plain = *plain;
                    let tail = &bytes[usize::try_from(plain.offset()).unwrap()..];
                    for c in tail.chunks(step) {
                        if plain.push(c) {
                            break;
                        }
                    }
                    j = plain;
                }
            }
        };
        assert_eq!(state(&got), state(&want), "preview, step to {at}, landing");
    }
});
