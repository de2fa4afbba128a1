//! `check_cluster` accepts every real cluster and flags the damaged copies
//! that the interop tests also feed to `ovsdb-tool check-cluster`.

mod common;

use ovsdb_log::writer::{read_clustered, write_clustered};
use ovsdb_log::{check_cluster, RecordBody};

const CLUSTERS: &[&str] = &[
    "acl-portgroup-diff",
    "acl-portgroup-full",
    "compacted",
    "election-timer",
    "leader-failover",
    "ls-add-follower",
    "membership",
    "sb-scale",
];

fn cluster(scen: &str) -> Vec<(String, Vec<u8>)> {
    ["s1", "s2", "s3"]
        .iter()
        .map(|s| (format!("{scen}/{s}.db"), common::sample(scen, s)))
        .collect()
}

fn run(files: &[(String, Vec<u8>)]) -> ovsdb_log::CheckReport {
    let v: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    check_cluster(&v)
}

#[test]
fn real_clusters_pass() {
    for scen in CLUSTERS {
        let rep = run(&cluster(scen));
        assert_eq!(rep.exit_code(), 0, "{scen}: {:#?}", rep.violations);
    }
}

#[test]
fn damaged_copies_fail() {
    let all = ovsdb_log::check::damage::all(&cluster("leader-failover"));
    assert_eq!(all.len(), 4);
    for (name, damaged) in all {
        let rep = run(&damaged);
        assert_eq!(rep.exit_code(), 1, "{name}: {:#?}", rep);
        for v in &rep.violations {
            // Every violation line names file, server, record, term, index and rule.
            let line = v.to_string();
            assert!(
                line.contains(" record ") && line.contains(" term ") && line.contains(" index ")
            );
        }
    }
    // Two different clusters.
    let mut mixed = cluster("compacted");
    mixed[2] = cluster("election-timer").remove(2);
    let rep = run(&mixed);
    assert_eq!(rep.exit_code(), 1);
    assert!(rep.violations.iter().any(|v| v.rule == "identity"));
    // Unreadable input.
    let mut torn = cluster("compacted");
    let n = torn[1].1.len();
    torn[1].1.truncate(n - 10);
    assert_eq!(run(&torn).exit_code(), 2);
    // Sanity: the damage helpers change only what they claim.
    let base = cluster("leader-failover");
    let (h, recs) = read_clustered(&base[0].1).unwrap();
    assert_eq!(write_clustered(&h, &recs), base[0].1);
    assert!(recs
        .iter()
        .any(|r| matches!(r.body, RecordBody::Leader { .. })));
}

/// Per entry event of one file, in order: its index and its body's bytes.
fn entry_bodies(bytes: &[u8]) -> Vec<(u64, Vec<u8>)> {
    use ovsdb_log::{Event, LogScan, ScanOptions, Verdict};
    let mut out = Vec::new();
    let mut on = |ev: Event<'_>| {
        if let (Event::Entry { entry, .. }, Some(raw)) = (&ev, ev.raw()) {
            out.push((entry.index, raw.body.to_vec()));
        }
        Verdict::Keep
    };
    let mut scan = LogScan::new(ScanOptions::default());
    scan.push(bytes, &mut on);
    scan.finish(&mut on);
    out
}

/// The servers of a cluster write their common entries as the same bytes;
/// the check parses an entry's data only when no file read before holds
/// that index with that very body, so each common entry is parsed once.
#[test]
fn a_clusters_common_entries_are_parsed_once() {
    use std::collections::BTreeMap;
    for scen in CLUSTERS {
        let files = cluster(scen);
        let mut read: Vec<BTreeMap<u64, Vec<u8>>> = Vec::new();
        let (mut expected, mut total) = (0u64, 0u64);
        for (_, bytes) in &files {
            let mut last = BTreeMap::new();
            for (index, body) in entry_bodies(bytes) {
                total += 1;
                if !read.iter().any(|m| m.get(&index) == Some(&body)) {
                    expected += 1;
                }
                // A later entry at the same index replaces the earlier one.
                last.split_off(&index);
                last.insert(index, body);
            }
            read.push(last);
        }
        let rep = run(&files);
        assert_eq!(rep.exit_code(), 0, "{scen}");
        assert_eq!(rep.digested, expected, "{scen}: {total} entries in all");
        // The real servers' common entries are byte-identical.
        let first = entry_bodies(&files[0].1).len() as u64;
        assert!(
            expected < total && expected >= first,
            "{scen}: {expected} of {total}"
        );
    }
}

/// The truncation warnings name log indexes as `ovsdb-tool check-cluster`
/// prints them: the election-storm incident's own `check-cluster` output,
/// recorded beside its files by the real tool.
#[test]
fn truncation_warnings_read_as_check_cluster_prints_them() {
    let dir = common::repo_root().join("tests/fixtures/incidents/election-storm");
    let files: Vec<(String, Vec<u8>)> = ["s1.db", "s2.db", "s3.db"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap()))
        .collect();
    let rep = run(&files);
    let real = std::fs::read_to_string(dir.join("check-cluster.txt")).unwrap();
    let want: Vec<&str> = real.lines().filter(|l| l.contains("truncates")).collect();
    assert!(want.len() >= 2, "{real}");
    let got: Vec<&str> = rep
        .warnings
        .iter()
        .map(String::as_str)
        .filter(|l| l.contains("truncates"))
        .collect();
    assert_eq!(got, want);
}

/// Every Raft rule a file can break is reported under its own plain name
/// with a message in the words `ovsdb-tool check-cluster` uses.
#[test]
fn each_broken_rule_is_named_plainly() {
    use ovsdb_log::raft::{Entry, RaftRecord};
    let base = cluster("leader-failover");
    let (h, recs) = read_clustered(&base[0].1).unwrap();
    let me = h.server_id;
    let other = read_clustered(&base[1].1).unwrap().0.server_id;
    let (last_index, last_term) = recs
        .iter()
        .filter_map(|r| match &r.body {
            RecordBody::Entry(e) => Some((e.index, e.term)),
            _ => None,
        })
        .next_back()
        .unwrap();
    let top_term = recs.iter().filter_map(RaftRecord::term).max().unwrap();
    assert!(
        last_term >= 2,
        "the sample's last entry is of term {last_term}"
    );
    let rec = |body| RaftRecord {
        comment: None,
        body,
    };
    let entry = |term, index| {
        rec(RecordBody::Entry(Entry {
            term,
            index,
            data: None,
            eid: None,
            servers: None,
            election_timer: None,
        }))
    };
    let next = top_term + 1;
    let cases: Vec<(&str, String, Vec<RaftRecord>)> = vec![
        (
            "vote-term",
            "but current term is".into(),
            vec![rec(RecordBody::Vote { term: 1, vote: me })],
        ),
        (
            "one-vote-per-term",
            "but already voted for".into(),
            vec![
                rec(RecordBody::Vote {
                    term: next,
                    vote: me,
                }),
                rec(RecordBody::Vote {
                    term: next,
                    vote: other,
                }),
            ],
        ),
        (
            "term-order",
            format!("term 1 precedes previous entry's term {last_term}"),
            vec![entry(1, last_index + 1)],
        ),
        (
            "leader-append-only",
            format!(
                "truncates log from {} to {} entries while server is leader",
                last_index + 2,
                last_index + 1
            ),
            vec![
                rec(RecordBody::Leader {
                    term: next,
                    leader: me,
                }),
                entry(next, last_index + 1),
                entry(next, last_index + 1),
            ],
        ),
        (
            "no-truncate-committed",
            "but commit index is already".into(),
            vec![entry(last_term, 1)],
        ),
    ];
    for (rule, words, tail) in cases {
        let mut files = base.clone();
        let mut r = recs.clone();
        r.extend(tail);
        files[0].1 = write_clustered(&h, &r);
        let rep = run(&files);
        let hit = rep.violations.iter().find(|v| v.rule == rule);
        assert!(
            hit.is_some_and(|v| v.message.contains(&words)),
            "{rule}: {:#?}",
            rep.violations
        );
        for v in &rep.violations {
            assert!(!v.rule.contains('.') && !v.message.contains("st."), "{v}");
        }
    }
    // The two-leaders damage is the election-safety rule.
    let two = ovsdb_log::check::damage::two_leaders(&base).unwrap();
    let rep = run(&two);
    assert!(rep
        .violations
        .iter()
        .any(|v| v.rule == "election-safety" && v.message.contains("has two different leaders")));
}

/// A file's own rules stop at its first violation, but a leader it records
/// later still meets the other files' leaders: a damaged copy of the
/// leader-failover cluster where a second server claims a term already
/// led (`damage::two_leaders`) and, before that claim, breaks a rule of
/// its own at its first record (`damage::commit_past_end_first`) reports
/// both, in whichever order the files are read.
#[test]
fn a_leader_recorded_after_a_files_first_violation_still_meets_the_others() {
    use ovsdb_log::check::damage;
    let base = cluster("leader-failover");
    let two = damage::two_leaders(&base).unwrap();
    let claimer = (0..base.len()).find(|&i| two[i] != base[i]).unwrap();
    let both = damage::commit_past_end_first(&two, claimer).unwrap();
    let mut files = both.clone();
    for _ in 0..2 {
        let rep = run(&files);
        let rules: Vec<(&str, &str)> = rep
            .violations
            .iter()
            .map(|v| (v.rule, v.file.as_str()))
            .collect();
        let claimer = base[claimer].0.as_str();
        assert!(rules.contains(&("commit-within-log", claimer)), "{rules:?}");
        assert!(
            rules.iter().any(|(r, _)| *r == "election-safety"),
            "{rules:?}"
        );
        files.reverse();
    }
}
