//! The experiments assert behaviour through counts and byte sizes (never
//! timing; timings are reported by the CLI and the benchmark).
#![cfg(not(target_arch = "wasm32"))]

use idl::experiments::{self, IndexVsHashParams, WcoParams};

fn no_clock() -> impl FnMut() -> f64 {
    let mut t = 0.0;
    move || {
        t += 1.0;
        t
    }
}

#[test]
fn write_changed_only_at_10000_rows_6_columns_1_changed() {
    let mut clock = no_clock();
    let r = experiments::write_changed_only(WcoParams::default(), &mut clock);
    let [default, wco, wo] = [&r.modes[0], &r.modes[1], &r.modes[2]];
    // The default request carries every rewritten row; WCO only the delta.
    assert!(
        default.request_bytes >= 1000 * wco.request_bytes,
        "default {} B vs wco {} B",
        default.request_bytes,
        wco.request_bytes
    );
    assert_eq!(default.request_ops, 10_000 + 1); // updates + comment
    assert_eq!(wco.request_ops, 2); // one update + comment
    assert_eq!(wco.writes, 60_000);
    assert_eq!(wco.writes_discarded, 59_999);
    assert_eq!(wo.writes_discarded, 59_999);
    assert_eq!(default.writes_discarded, 0);
    for m in &r.modes {
        assert_eq!(m.status, "success", "{}", m.mode);
        // Nothing changed → nothing sent, in every mode.
        assert_eq!(m.status_when_nothing_changed, "unchanged", "{}", m.mode);
        // The server committed exactly one row change in every mode, so a
        // monitoring client receives the same update.
        assert_eq!(m.rows_changed_on_server, 1, "{}", m.mode);
        assert_eq!(m.update_bytes, default.update_bytes, "{}", m.mode);
    }
}

#[test]
fn own_write_echo_tracked_vs_write_only() {
    let r = experiments::own_write_echo(20, 6);
    let tracked = &r.modes[0];
    let write_only = &r.modes[1];
    assert_eq!(tracked.iterations_with_tracked_rows, 6);
    assert_eq!(tracked.tracked_rows_total, 6 * 20);
    assert_eq!(tracked.seqno_moves, 6);
    assert_eq!(write_only.iterations_with_tracked_rows, 0);
    assert_eq!(write_only.tracked_rows_total, 0);
    assert_eq!(write_only.seqno_moves, 0);
}

#[test]
fn index_vs_hash_counts_follow_the_cost_model() {
    let p = IndexVsHashParams {
        load_balancers: 50,
        service_monitors: 400,
        updates_per_sec: 100,
        evaluations_per_sec: 2,
        lookups_per_evaluation: 4,
        seconds: 2,
    };
    let mut clock = no_clock();
    let r = experiments::index_vs_hash(p, &mut clock);
    let updates = (p.updates_per_sec * p.seconds) as u64;
    let evals = (p.evaluations_per_sec * p.seconds) as u64;
    let c = &r.strategies[0];
    let opt = &r.strategies[1];
    let hash = &r.strategies[2];
    let tracked = &r.strategies[3];
    // C policy: every received modify removes and re-inserts the row.
    assert_eq!(c.index_inserts, updates);
    assert_eq!(c.index_deletes, updates);
    assert!(
        c.index_comparisons > 2 * updates * 5,
        "{}",
        c.index_comparisons
    );
    // Optimised policy: status flips never touch the index.
    assert_eq!(opt.index_inserts, 0);
    assert_eq!(opt.index_deletes, 0);
    assert_eq!(opt.lookups, evals * p.lookups_per_evaluation as u64);
    // Temporary hash: m inserts per evaluation, nothing per update.
    assert_eq!(hash.evaluations_run, evals);
    assert_eq!(hash.hash_inserts, evals * p.service_monitors as u64);
    assert_eq!(hash.index_comparisons, 0);
    // Tracking filter walks each changed row once.
    assert_eq!(tracked.tracked_rows_walked, updates);
    assert!(tracked.evaluations_run <= evals);
    assert!(r.crossover_evaluations_per_sec > 0.0);
    assert!(r.measured_crossover_evaluations_per_sec > 0.0);
}

#[test]
fn diff_apply_messages_do_not_grow_with_the_set() {
    let mut clock = no_clock();
    let r = experiments::diff_apply(&[1000, 10_000, 30_000], 50, &mut clock);
    let d0 = r.points[0].diff_message_bytes;
    for p in &r.points {
        assert_eq!(p.diff_message_bytes, d0);
        // A full value grows with n (≈ 48 bytes per UUID).
        assert!(p.full_message_bytes > 40 * p.set_size);
    }
}

#[test]
fn degenerate_parameters_do_not_panic() {
    let mut clock = no_clock();
    let r = experiments::write_changed_only(
        WcoParams {
            rows: 0,
            columns: 9,
            changed: 3,
        },
        &mut clock,
    );
    assert!(r.modes.iter().all(|m| m.status == "unchanged"));
    let p = IndexVsHashParams {
        load_balancers: 0,
        service_monitors: 0,
        updates_per_sec: 10,
        evaluations_per_sec: 0,
        lookups_per_evaluation: 0,
        seconds: 1,
    };
    let r = experiments::index_vs_hash(p, &mut clock);
    assert!(r.strategies.iter().all(|s| s.evaluations_run == 0));
    let r = experiments::diff_apply(&[1], 0, &mut clock);
    assert_eq!(r.points.len(), 1);
    let r = experiments::own_write_echo(0, 2);
    assert_eq!(r.modes[0].tracked_rows_total, 0);
}
