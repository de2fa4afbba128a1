//! Growth over time by table (`SizeReport::growth`): on every sample and
//! fixture, the points are in file order, never shrink, are at most
//! `GROWTH_POINTS` (+1 for the last entry), and the last point is the
//! whole log's bytes by table.
#![cfg(not(target_arch = "wasm32"))]

use contents::sizes::{sizes, GROWTH_POINTS};
use contents::Log;

mod common;

fn inputs() -> Vec<(String, Vec<u8>)> {
    common::inputs(&["db"])
}

#[test]
fn growth_points_accumulate_to_the_totals_by_table() {
    let mut with_growth = 0;
    for (name, bytes) in inputs() {
        let log = Log::load(&bytes);
        let r = sizes(&log, None);
        if r.entries == 0 {
            assert!(r.growth.is_empty(), "{name}");
            continue;
        }
        with_growth += 1;
        assert!(
            r.growth.len() <= GROWTH_POINTS + 1,
            "{name}: {}",
            r.growth.len()
        );
        // Evenly spaced: small logs have a point per entry.
        if r.entries <= GROWTH_POINTS {
            assert_eq!(r.growth.len(), r.entries, "{name}");
        }
        let last = r.growth.last().unwrap();
        assert_eq!(last.by_table, r.by_table, "{name}: last point = totals");
        let final_record = log
            .entries
            .iter()
            .filter(|e| e.kind != contents::load::EntryKind::Snapshot)
            .map(|e| e.record)
            .max();
        assert_eq!(Some(last.record), final_record, "{name}");
        for w in r.growth.windows(2) {
            assert!(w[0].record < w[1].record, "{name}: file order");
            for (t, b) in &w[0].by_table {
                let n = w[1].by_table.get(t).copied().unwrap_or_default();
                assert!(
                    n.stored >= b.stored && n.full >= b.full && n.diff >= b.diff,
                    "{name}: {t} shrank"
                );
            }
        }
    }
    assert!(with_growth > 20, "{with_growth}");
}

#[test]
fn growth_of_a_long_log_is_sampled() {
    // A standalone log of 1000 small transactions, as an OVSDB 2.x server
    // writes them (schema record, then one txn record each).
    let schema =
        r#"{"name":"T","version":"1.0.0","tables":{"R":{"columns":{"n":{"type":"integer"}}}}}"#;
    let mut file = Vec::new();
    let mut rec = |body: &str| ovsdb_log::framing::write_record(&mut file, "JSON", body.as_bytes());
    rec(schema);
    for i in 0..1000 {
        rec(&format!(
            r#"{{"R":{{"{:08x}-0000-4000-8000-000000000000":{{"n":{i}}}}},"_date":{}}}"#,
            i,
            1_700_000_000_000i64 + i
        ));
    }
    let log = Log::load(&file);
    assert!(log.error.is_none(), "{:?}", log.error);
    let r = sizes(&log, None);
    assert_eq!(r.entries, 1000);
    assert_eq!(r.growth.len(), 200);
    // Every 5th entry, dated.
    assert_eq!(r.growth[0].record, 5);
    assert_eq!(r.growth[0].date_ms, Some(1_700_000_000_004));
    assert_eq!(r.growth.last().unwrap().record, 1000);
    assert_eq!(r.growth.last().unwrap().by_table, r.by_table);
}
