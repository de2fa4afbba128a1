//! Every simulated server's database is the `ovsdb-server` crate's model:
//! the proposer executes the client's request on it and
//! the commit becomes the entry; every member installs committed entries by
//! replaying the record. These tests check the consequences on whole runs:
//!
//! * state-machine safety on real data: members that applied the same
//!   index hold identical rows;
//! * the exported log files replay (with the IDL time-travel replica, an
//!   independent reader of the file) to exactly the rows of the model that
//!   wrote them;
//! * with `core_db`, the `ovsdb` crate's database replays the same records
//!   and agrees on every record size in both storage modes (a mismatch is a
//!   violation).
//!
//! They live in `idl` (moved from `raft-sim`) so that the simulator does
//! not depend on the client crate, even for tests.

use idl::timetravel::Timeline;
use ovsdb::datum::Datum;
use ovsdb::uuid::Uuid;
use ovsdb_server::ServerRow;
use raft_sim::logs::write_logs;
use raft_sim::{preset, Sim};
use std::collections::BTreeMap;

type Rows = BTreeMap<String, BTreeMap<Uuid, Vec<Datum>>>;

fn model_rows(m: &ovsdb_server::Server) -> Rows {
    let mut out = Rows::new();
    for (t, tm) in m.meta.tables.iter().enumerate() {
        for r in m.rows(t) {
            out.entry(tm.name.clone())
                .or_default()
                .insert(r.uuid, r.cols().to_vec());
        }
    }
    out
}

fn replica_rows(idl: &idl::Idl) -> Rows {
    let mut out = Rows::new();
    for (t, tm) in idl.meta.tables.iter().enumerate() {
        for u in idl.row_uuids(t) {
            let cols = (0..tm.columns.len()).map(|c| idl.read(t, u, c)).collect();
            out.entry(tm.name.clone()).or_default().insert(u, cols);
        }
    }
    out
}

fn run(name: &str, kv: &[(&str, &str)], seed: u64) -> Sim {
    run_m(name, kv, seed).0
}

fn run_m(name: &str, kv: &[(&str, &str)], seed: u64) -> (Sim, raft_sim::Metrics) {
    let over: Vec<(String, String)> = kv
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut sim = Sim::from_text(preset(name).unwrap(), None, &over, seed).unwrap();
    sim.capture_logs();
    let m = sim.run();
    assert!(m.violations.is_empty(), "{name}: {:?}", m.violations);
    assert_eq!(m.rejected, 0, "{name}: no preset write is refused");
    (sim, m)
}

#[test]
fn members_at_the_same_index_hold_the_same_rows() {
    for (name, kv) in [
        ("acl-portgroup", vec![("n", "40")]),
        ("acl-portgroup", vec![("n", "40"), ("column_diff", "false")]),
        ("leader-kill", vec![]),
        ("membership", vec![]),
    ] {
        for seed in 1..=3 {
            let sim = run(name, &kv, seed);
            let mut by_index: BTreeMap<u64, Rows> = BTreeMap::new();
            let mut compared = 0;
            for s in &sim.servers {
                let rows = model_rows(&s.db);
                match by_index.get(&s.last_applied) {
                    Some(r) => {
                        assert_eq!(*r, rows, "{name} seed {seed} at {}", s.last_applied);
                        compared += 1;
                    }
                    None => {
                        by_index.insert(s.last_applied, rows);
                    }
                }
            }
            // A finished run has every live member at the last index.
            assert!(
                compared >= 1,
                "{name} seed {seed}: no two members to compare"
            );
        }
    }
}

#[test]
fn exported_files_replay_to_the_model_that_wrote_them() {
    for (name, kv) in [
        ("acl-portgroup", vec![("n", "60")]),
        ("acl-portgroup", vec![("n", "60"), ("column_diff", "false")]),
        ("ls-add-follower", vec![("n", "30")]),
        ("membership", vec![]),
    ] {
        let sim = run(name, &kv, 5);
        let files = write_logs(&sim).unwrap();
        let mut checked = 0;
        for (fname, bytes) in &files {
            let s: usize = fname
                .trim_start_matches('s')
                .trim_end_matches(".db")
                .parse()
                .unwrap();
            let server = &sim.servers[s - 1];
            let tl = Timeline::load(bytes).unwrap();
            if tl.last_committed() != server.last_applied {
                continue; // the file's commit index lags what it applied
            }
            let replica = tl.replica_at(tl.last_committed()).unwrap();
            assert_eq!(
                replica_rows(&replica),
                model_rows(&server.db),
                "{name} {fname}"
            );
            checked += 1;
        }
        assert!(
            checked >= 1,
            "{name}: no file at its server's applied index"
        );
    }
}

#[test]
fn the_ovsdb_crate_database_agrees_on_every_record() {
    // core_db replays each committed record on ovsdb::Database as well and
    // reports any refusal or size difference as a violation (run() fails).
    for (name, kv) in [
        ("acl-portgroup", vec![("n", "50"), ("core_db", "true")]),
        (
            "acl-portgroup",
            vec![("n", "50"), ("core_db", "true"), ("column_diff", "false")],
        ),
        ("leader-kill", vec![("core_db", "true")]),
    ] {
        let sim = run(name, &kv, 9);
        assert!(sim.servers.iter().all(|s| s.check_db.is_some()), "{name}");
    }
}

#[test]
fn one_run_also_reports_its_entries_in_the_other_storage_mode() {
    // Each record is sized in both modes from the same commit, so a diff
    // run knows what its log would weigh with full values and vice versa.
    // The two runs differ only in timing (bytes cost CPU and disk time), so
    // the cross-mode figures agree closely with the other run's own.
    let figure = |diff: &str| {
        let (_, m) = run_m("acl-portgroup", &[("n", "80"), ("column_diff", diff)], 4);
        (m.log_written, m.log_written_alt)
    };
    let (diff_own, diff_as_full) = figure("true");
    let (full_own, full_as_diff) = figure("false");
    assert!(diff_own < full_own / 3, "{diff_own} vs {full_own}");
    let close = |a: u64, b: u64| (a as f64 - b as f64).abs() / (b as f64) < 0.02;
    assert!(
        close(diff_as_full, full_own),
        "{diff_as_full} vs {full_own}"
    );
    assert!(
        close(full_as_diff, diff_own),
        "{full_as_diff} vs {diff_own}"
    );
}
