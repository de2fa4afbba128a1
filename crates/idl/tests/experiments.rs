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

/// The work of a diff apply grows with d·log n, the work of a full-value
/// apply with n: counted deterministically as atom comparisons on the
/// instrumented set that replays the same messages as the replica.
#[test]
fn diff_apply_work_grows_with_d_log_n_and_full_with_n() {
    let mut clock = no_clock();
    let r = experiments::diff_apply(&[1000, 100_000], 10, &mut clock);
    eprintln!("{}", r.to_text());
    let (small, big) = (&r.points[0], &r.points[1]);
    for p in &r.points {
        assert!(p.model_matches_replica, "n={}: replay diverged", p.set_size);
        assert!(p.diff_comparisons_per_apply > 0.0);
    }
    let diff_ratio = big.diff_comparisons_per_apply / small.diff_comparisons_per_apply;
    let full_ratio = big.full_comparisons_per_apply / small.full_comparisons_per_apply;
    // log2(100 000) / log2(1 000) ≈ 1.67; n grows 100×.
    assert!(diff_ratio < 3.0, "diff work ratio {diff_ratio}");
    assert!(full_ratio > 50.0, "full-value work ratio {full_ratio}");
    // A single-element diff at n = 100 000 costs about log2 n comparisons
    // per B-tree operation, not anything like n.
    assert!(big.diff_comparisons_per_apply < 20.0 * big.model_d_log_n);
    // Diffs of d elements: work ~ d (per-element cost within 3× of d = 1).
    let one = r.diff_sizes[0].comparisons as f64;
    assert_eq!(r.diff_sizes[0].diff_elements, 1);
    for p in &r.diff_sizes[1..] {
        let per = p.comparisons as f64 / p.diff_elements as f64;
        assert!(
            per > one / 3.0 && per < one * 3.0,
            "d={}: {per} comparisons per element vs {one} for d=1",
            p.diff_elements
        );
    }
    let j = r.to_json().to_string_compact();
    assert!(j.contains("\"diff_comparisons_per_apply\""));
    assert!(j.contains("\"diff_sizes\""));
    assert!(r.to_text().contains("diff cmp"));
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
