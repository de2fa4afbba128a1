#![cfg(not(target_arch = "wasm32"))]
//! The consumers folded onto the streaming scanner (replay, the core
//! replay, convert) give the same results fed in chunks of 1, 7 and 4096
//! bytes as with the whole file in one push: on every sample and fixture
//! and on damaged copies of them.

mod common;

use ovsdb::StorageMode;
use ovsdb_log::convert::Converter;
use ovsdb_log::replay_pass::{CorePass, Plan, ReplayEnd, ReplayPass};
use ovsdb_log::{Event, LogScan, Replay, ScanOptions, Upto, Verdict};

/// One walk of `bytes` in chunks of `chunk`, events to `f`.
fn walk(
    bytes: &[u8],
    chunk: usize,
    opts: ScanOptions,
    f: &mut dyn FnMut(Event<'_>) -> Verdict,
) -> LogScan {
    let mut s = LogScan::new(opts);
    for c in bytes.chunks(chunk.max(1)) {
        s.push(c, f);
    }
    s.finish(f);
    s
}

fn show(r: &Replay) -> String {
    format!(
        "{:?} {} {:?} {:?} {:?} {:?} {:?}",
        r.format,
        r.db.as_ref()
            .map_or("-".into(), |d| d.to_json().to_string()),
        r.applied,
        r.commit_index,
        r.entries,
        r.error,
        r.skipped
    )
}

fn replay_chunked(bytes: &[u8], chunk: usize, upto: Upto) -> String {
    let mut pass = ReplayPass::first(upto);
    let opts = pass.options();
    let scan = walk(bytes, chunk, opts, &mut |ev| {
        pass.on_event(&ev);
        Verdict::Keep
    });
    let r = match pass.end(&scan) {
        ReplayEnd::Done(r) => *r,
        ReplayEnd::Again(mut pass) => {
            let opts = pass.options();
            let scan = walk(bytes, chunk, opts, &mut |ev| {
                pass.on_event(&ev);
                Verdict::Keep
            });
            match pass.end(&scan) {
                ReplayEnd::Done(r) => *r,
                ReplayEnd::Again(_) => panic!("a third walk"),
            }
        }
    };
    show(&r)
}

fn plan_chunked(bytes: &[u8], chunk: usize) -> Plan {
    let mut plan = Plan::default();
    walk(bytes, chunk, ScanOptions::default(), &mut |ev| {
        plan.on_event(&ev);
        Verdict::Keep
    });
    plan
}

fn core_chunked(bytes: &[u8], chunk: usize, upto: Upto) -> String {
    let mut pass = CorePass::new(plan_chunked(bytes, chunk), upto);
    walk(bytes, chunk, ScanOptions::default(), &mut |ev| {
        pass.on_event(&ev);
        Verdict::Keep
    });
    let (db, e) = pass.finish();
    format!("{:?} {e:?}", db.map(|d| d.dump_json(true).to_string()))
}

fn convert_chunked(bytes: &[u8], chunk: usize, mode: StorageMode) -> Result<Vec<u8>, String> {
    let mut c = Converter::new(plan_chunked(bytes, chunk), mode).map_err(|e| e.to_string())?;
    let opts = c.options();
    walk(bytes, chunk, opts, &mut |ev| {
        c.on_event(&ev);
        Verdict::Keep
    });
    c.finish().map_err(|e| e.to_string())
}

#[test]
fn folded_consumers_give_the_same_results_in_chunks() {
    let mut n = 0;
    let mut converted = 0;
    for (name, bytes) in common::distinct_inputs() {
        let mut cases = vec![("as is".to_string(), bytes.clone())];
        cases.extend(common::damaged_copies(&bytes));
        for (what, b) in cases {
            let whole = b.len().max(1);
            let intact = what == "as is";
            let uptos: &[Upto] = if intact {
                &[Upto::Committed, Upto::All, Upto::Index(7)]
            } else {
                &[Upto::Committed]
            };
            let modes: &[StorageMode] = if intact {
                &[StorageMode::Diff, StorageMode::Full]
            } else {
                &[StorageMode::Diff]
            };
            let replays: Vec<String> = uptos
                .iter()
                .map(|&u| {
                    let r = show(&ovsdb_log::replay(&b, u));
                    assert_eq!(replay_chunked(&b, whole, u), r, "{name} {what}: {u:?}");
                    r
                })
                .collect();
            let core = {
                let (db, e) = ovsdb_log::replay_database(&b, Upto::Committed);
                format!("{:?} {e:?}", db.map(|d| d.dump_json(true).to_string()))
            };
            let convs: Vec<Result<Vec<u8>, String>> = modes
                .iter()
                .map(|&m| ovsdb_log::convert::convert(&b, m).map_err(|e| e.to_string()))
                .collect();
            converted += convs.iter().filter(|c| c.is_ok()).count();
            for chunk in [1usize, 7, 4096] {
                if chunk == 1 && b.len() > 256 << 10 {
                    continue;
                }
                for (u, r) in uptos.iter().zip(&replays) {
                    assert_eq!(
                        &replay_chunked(&b, chunk, *u),
                        r,
                        "{name} {what}: replay {u:?} in chunks of {chunk}"
                    );
                }
                assert_eq!(
                    core_chunked(&b, chunk, Upto::Committed),
                    core,
                    "{name} {what}: core replay in chunks of {chunk}"
                );
                for (m, c) in modes.iter().zip(&convs) {
                    assert!(
                        convert_chunked(&b, chunk, *m) == *c,
                        "{name} {what}: convert {m:?} in chunks of {chunk}"
                    );
                }
                n += 1;
            }
        }
    }
    assert!(n > 100, "{n}");
    assert!(converted > 30, "{converted}");
}
