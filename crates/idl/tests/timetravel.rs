//! Time travel over the real sample logs: on every sample file, the replica
//! at the last committed index equals `ovsdb-client dump` of a real
//! ovsdb-server serving a copy of that file; and the row-level changes
//! between consecutive indexes are exactly the rows of the txn record.
#![cfg(not(target_arch = "wasm32"))]

mod common;
#[path = "common/dump.rs"]
mod dump;
#[path = "../../ovsdb-server/tests/common/net.rs"]
mod net;

use dump::{parse_dump, replica_rows};
use idl::timetravel::{ChangeKind, Timeline};
use net::{ensure_packages, Server, TempDir};
use ovsdb::uuid::Uuid;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Serves a copy of `path` and dumps it; None if the server cannot serve
/// it (a server that left its cluster).
fn served_dump(path: &Path, db: &str) -> Option<String> {
    let dir = TempDir::new("tt");
    let copy = dir.0.join("copy.db");
    std::fs::write(&copy, std::fs::read(path).unwrap()).unwrap();
    let mut server = Server::start(&dir.0, &copy).ok()?;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(15) {
        if let Ok(Some(_)) = server.child.try_wait() {
            return None;
        }
        let out = Command::new("ovsdb-client")
            .args(["--timeout=5", "-f", "json", "dump", &server.remote(), db])
            .output()
            .expect("ovsdb-client");
        if out.status.success() && !out.stdout.is_empty() {
            server.stop();
            return Some(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn replica_at_last_committed_index_equals_server_dump_on_every_sample() {
    assert!(ensure_packages(), "openvswitch/ovn packages unavailable");
    let mut compared = 0;
    for path in common::sample_files() {
        let bytes = std::fs::read(&path).unwrap();
        let tl = Timeline::load(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let idl = tl
            .replica_at(tl.last_committed())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let db = idl.meta.name.clone();
        let Some(text) = served_dump(&path, &db) else {
            // Only the server that left its cluster cannot be restarted.
            assert!(
                path.display().to_string().contains("membership"),
                "{}: not served",
                path.display()
            );
            continue;
        };
        let want = parse_dump(&idl.meta, &text);
        let got = replica_rows(&idl);
        assert!(
            got == want,
            "{}: replica at {} differs from the server's dump ({} vs {} tables)",
            path.display(),
            tl.last_committed(),
            got.len(),
            want.len()
        );
        compared += 1;
    }
    assert!(compared >= 20, "only {compared} samples compared");
}

#[test]
fn changes_between_consecutive_indexes_are_the_records_rows() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/samples/acl-portgroup-diff/s1.db");
    let tl = Timeline::load(&std::fs::read(path).unwrap()).unwrap();
    let mut checked = 0;
    for s in tl.steps.iter().filter(|s| s.txn.is_some()).step_by(9) {
        let txn = s.txn.as_ref().unwrap();
        let mut expect: BTreeSet<(String, Uuid)> = BTreeSet::new();
        for (k, v) in txn.as_object().unwrap().iter() {
            if k.starts_with('_') {
                continue;
            }
            for (u, _) in v.as_object().unwrap().iter() {
                expect.insert((k.to_string(), Uuid::parse(u).unwrap()));
            }
        }
        let d = tl.changes_between(s.index - 1, s.index).unwrap();
        let got: BTreeSet<(String, Uuid)> = d.iter().map(|r| (r.table.clone(), r.uuid)).collect();
        assert_eq!(got, expect, "index {}", s.index);
        for r in &d {
            let row = txn
                .get(&r.table)
                .and_then(|t| t.get(&r.uuid.to_string()))
                .unwrap();
            match r.kind {
                ChangeKind::Deleted => assert!(row.is_null()),
                _ => assert!(!row.is_null()),
            }
        }
        checked += 1;
    }
    assert!(checked > 10);
    // A wider window: from the first ACL to the end, the port group's ACL
    // set changed and the ACL rows were inserted and later deleted.
    let all = tl.changes_between(0, tl.last_committed()).unwrap();
    assert!(all.iter().all(|r| r.kind != ChangeKind::Deleted));
}

#[test]
fn cursor_moves_forward_and_back_like_fresh_replays() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/samples/leader-failover/s2.db");
    let tl = Timeline::load(&std::fs::read(path).unwrap()).unwrap();
    let mut c = tl.cursor();
    let last = tl.last_committed();
    for target in [3, last / 2, last, 5, last] {
        c.seek(target).unwrap();
        assert!(c.index() <= target);
        let fresh = tl.replica_at(target).unwrap();
        assert_eq!(
            replica_rows(c.replica().unwrap()),
            replica_rows(&fresh),
            "index {target}"
        );
    }
    let deltas = tl.changes_between(last / 2, last).unwrap();
    assert!(!deltas.is_empty());
    let j = deltas[0].to_json().to_string_compact();
    assert!(j.starts_with(r#"{"table":""#), "{j}");
}

#[test]
fn damaged_files_give_errors_or_a_usable_prefix() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/samples/acl-portgroup-diff/s1.db");
    let bytes = std::fs::read(path).unwrap();
    let full = Timeline::load(&bytes).unwrap();
    // Truncated tail: the prefix is still usable.
    let cut = &bytes[..bytes.len() - 700];
    let tl = Timeline::load(cut).unwrap();
    assert!(tl.error.is_some());
    assert!(tl.last_index() < full.last_index());
    let idl = tl.replica_at(tl.last_index()).unwrap();
    assert_eq!(
        replica_rows(&idl),
        replica_rows(&full.replica_at(tl.last_index()).unwrap())
    );
    // Garbage and empty input: errors, no panic.
    assert!(Timeline::load(b"").is_err());
    assert!(Timeline::load(b"OVSDB CLUSTER 5 0000\n{}\n").is_err());
    let mut junk = bytes.clone();
    for (i, b) in junk.iter_mut().enumerate().skip(3000).step_by(97) {
        *b ^= (i % 251) as u8;
    }
    if let Ok(tl) = Timeline::load(&junk) {
        let _ = tl.replica_at(tl.last_index());
        let _ = tl.changes_between(0, tl.last_index());
    }
}
