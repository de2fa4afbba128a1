//! `ovsdb-scope check` gives the same verdict as `ovsdb-tool check-cluster`
//! on the real clusters and on damaged copies.

mod common;
use common::*;

fn verdicts(paths: &[String]) -> (i32, i32, String) {
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut a = vec!["check"];
    a.extend(&args);
    let o = ours(&a);
    let mut t = vec!["check-cluster"];
    t.extend(&args);
    let c = tool(&t);
    (
        o.status.code().unwrap_or(-1),
        c.status.code().unwrap_or(-1),
        format!(
            "ours: {}{}\nC: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&c.stdout),
            String::from_utf8_lossy(&c.stderr)
        ),
    )
}

/// `files` (name, bytes) written into a new temporary directory (removed
/// when dropped), and their paths.
fn written(dir: &str, files: &[(String, Vec<u8>)]) -> (TempDir, Vec<String>) {
    let dir = TempDir::new(dir);
    let paths = files
        .iter()
        .map(|(f, b)| {
            let p = dir.path(f);
            std::fs::write(&p, b).unwrap();
            p.display().to_string()
        })
        .collect();
    (dir, paths)
}

/// The damaged copies (`ovsdb_log::check::damage::all`) of two sample
/// clusters, each set written to a directory of its own: its name
/// (`scenario/damage`), the directory (removed when dropped) and its paths.
fn damaged_copies() -> Vec<(String, TempDir, Vec<String>)> {
    let mut out = Vec::new();
    for scen in ["leader-failover", "ls-add-follower"] {
        let files: Vec<(String, Vec<u8>)> = ["s1", "s2", "s3"]
            .iter()
            .map(|s| {
                (
                    format!("{s}.db"),
                    std::fs::read(sample_path(scen, s)).unwrap(),
                )
            })
            .collect();
        let damaged = ovsdb_log::check::damage::all(&files);
        assert_eq!(damaged.len(), 4, "{scen}");
        for (name, set) in damaged {
            let (dir, paths) = written(name, &set);
            out.push((format!("{scen}/{name}"), dir, paths));
        }
    }
    out
}

#[test]
fn check_agrees_with_check_cluster() {
    if !ovs_tools("check_agrees_with_check_cluster") {
        return;
    }
    for scen in CLUSTERS {
        let paths: Vec<String> = ["s1", "s2", "s3"]
            .iter()
            .map(|s| sample_path(scen, s).display().to_string())
            .collect();
        let (o, c, text) = verdicts(&paths);
        assert_eq!((o, c), (0, 0), "{scen}\n{text}");
    }
    // Damaged copies of two clusters.
    for (name, _dir, paths) in damaged_copies() {
        let (o, c, text) = verdicts(&paths);
        assert_ne!(c, 0, "{name}: check-cluster accepted the damage\n{text}");
        assert_eq!(o, 1, "{name}: ours\n{text}");
        eprintln!("{name}: both reject\n{text}");
    }
    // Files of two different clusters.
    let paths = vec![
        sample_path("compacted", "s1").display().to_string(),
        sample_path("election-timer", "s2").display().to_string(),
    ];
    let (o, c, text) = verdicts(&paths);
    assert_ne!(c, 0, "{text}");
    assert_eq!(o, 1, "{text}");
}

/// Record start offsets of a file, by its header lines (an independent
/// framing: `OVSDB <magic> <length> <sha1>\n` then the body).
fn record_starts(bytes: &[u8]) -> Vec<u64> {
    let mut starts = Vec::new();
    let mut i = 0;
    while let Some(nl) = bytes[i..].iter().position(|&b| b == b'\n') {
        let header = String::from_utf8_lossy(&bytes[i..i + nl]);
        let Some(len) = header
            .split(' ')
            .nth(2)
            .and_then(|l| l.parse::<usize>().ok())
        else {
            break;
        };
        starts.push(i as u64);
        i += nl + 1 + len;
        if i >= bytes.len() {
            break;
        }
    }
    starts
}

/// `check --json`: the same exit code as the text form (and a rejection
/// where `check-cluster` rejects), each violation the text prints with
/// its rule and message, record numbers whose offsets are those records'
/// starts in the file, and counts that add up.
#[test]
fn check_json_reports_what_the_text_and_check_cluster_do() {
    use ovsdb::json::{parse, Json};
    if !ovs_tools("check_json_reports_what_the_text_and_check_cluster_do") {
        return;
    }
    let check = |paths: &[String]| {
        let mut a = vec!["check", "--json"];
        a.extend(paths.iter().map(String::as_str));
        let o = ours(&a);
        let j = parse(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"));
        (o.status.code().unwrap(), j)
    };
    let copies = damaged_copies();
    let mut sets: Vec<(String, Vec<String>)> = copies
        .iter()
        .map(|(name, _, paths)| (name.clone(), paths.clone()))
        .collect();
    sets.push((
        "two clusters".into(),
        vec![
            sample_path("compacted", "s1").display().to_string(),
            sample_path("election-timer", "s2").display().to_string(),
        ],
    ));
    let sound: Vec<String> = ["s1", "s2", "s3"]
        .iter()
        .map(|s| sample_path("leader-failover", s).display().to_string())
        .collect();
    sets.push(("sound".into(), sound));
    for (what, paths) in &sets {
        let (code, j) = check(paths);
        let (text_code, real_code, text) = verdicts(paths);
        assert_eq!(code, text_code, "{what}\n{text}");
        assert_eq!(code == 0, real_code == 0, "{what}\n{text}");
        let summary = j.get("summary").unwrap();
        let count = |k: &str| match summary.get(k) {
            Some(Json::Integer(n)) => *n as usize,
            other => panic!("{k}: {other:?}"),
        };
        assert_eq!(count("exit_code"), code as usize);
        assert_eq!(count("files"), paths.len());
        let problems = j.get("problems").unwrap().as_array().unwrap();
        assert_eq!(
            problems.len(),
            count("violations") + count("skipped_spans") + count("unreadable"),
            "{what}"
        );
        let mut violations = 0;
        for p in problems {
            let rule = p.get("rule").and_then(Json::as_str).unwrap();
            let file = p.get("file").and_then(Json::as_str).unwrap();
            let message = p.get("message").and_then(Json::as_str).unwrap();
            assert!(paths.iter().any(|f| f == file), "{what}: {file}");
            if rule != "skipped-span" && rule != "unreadable" {
                violations += 1;
                assert!(
                    text.lines().any(|l| {
                        let l = l.trim_start_matches("ours: ");
                        l.starts_with(file) && l.ends_with(&format!(": {rule}: {message}"))
                    }),
                    "{what}: {rule}: {message} not in\n{text}"
                );
            }
            match (p.get("record"), p.get("offset")) {
                (Some(Json::Integer(r)), Some(Json::Integer(o))) if rule != "unreadable" => {
                    let starts = record_starts(&std::fs::read(file).unwrap());
                    assert_eq!(starts.get(*r as usize), Some(&(*o as u64)), "{what}: {p:?}");
                }
                (Some(Json::Null), Some(Json::Null)) => {}
                (r, o) => assert_eq!(rule, "unreadable", "{what}: {r:?} {o:?}"),
            }
        }
        assert_eq!(violations, count("violations"), "{what}");
        if what == "sound" {
            assert_eq!(code, 0);
        } else {
            assert!(violations > 0, "{what}: {j:?}");
        }
    }
}

/// A Northbound cluster's files checked with a Southbound cluster's (the
/// slip of a `check *.db` in a folder holding both): check-cluster
/// refuses on the cluster ID; ours says so for each stray file and checks
/// nothing else across them (no election-safety or membership noise from
/// comparing two clusters' terms), and the Northbound files alone still
/// check clean.
#[test]
fn files_of_another_cluster_are_only_told_apart() {
    let nb: Vec<String> = ["s1", "s2", "s3"]
        .iter()
        .map(|s| sample_path("leader-failover", s).display().to_string())
        .collect();
    let sb: Vec<String> = ["s1", "s2", "s3"]
        .iter()
        .map(|s| sample_path("sb-scale", s).display().to_string())
        .collect();
    let all: Vec<&str> = nb.iter().chain(&sb).map(String::as_str).collect();
    let mut args = vec!["check", "--json"];
    args.extend(&all);
    let o = ours(&args);
    assert_eq!(o.status.code(), Some(1));
    let j = ovsdb::json::parse(&o.stdout).unwrap();
    let problems = j.get("problems").unwrap().as_array().unwrap();
    assert_eq!(problems.len(), 6, "{j}");
    for p in problems {
        assert_eq!(
            p.get("rule").and_then(|r| r.as_str()),
            Some("identity"),
            "{p}"
        );
        let file = p.get("file").and_then(|f| f.as_str()).unwrap();
        assert!(sb.iter().any(|s| s == file), "{p}");
    }
    let warnings = j.get("warnings").unwrap().as_array().unwrap();
    for s in &sb {
        let w = format!("{s}: not checked against the other files (another cluster)");
        assert!(
            warnings.iter().any(|x| x.as_str() == Some(w.as_str())),
            "{j}"
        );
    }
    if ovs_tools("files_of_another_cluster_are_only_told_apart") {
        let mut t = vec!["check-cluster"];
        t.extend(&all);
        let c = tool(&t);
        assert_ne!(c.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&c.stderr).contains("has cluster ID"));
    }
}

/// What `convert --help` tells: one member converted alone reads as
/// entries that differ, to `check-cluster` and to `check` alike; every
/// member converted, the cluster checks clean again.
#[test]
fn converting_one_member_alone_differs_and_all_of_them_agrees() {
    if !ovs_tools("converting_one_member_alone_differs_and_all_of_them_agrees") {
        return;
    }
    let dir = TempDir::new("convert-members");
    let paths: Vec<String> = ["s1", "s2", "s3"]
        .iter()
        .map(|s| {
            let p = dir.path(&format!("{s}.db"));
            std::fs::copy(sample_path("leader-failover", s), &p).unwrap();
            p.display().to_string()
        })
        .collect();
    let convert = |p: &str| {
        let o = ours(&["convert", "--to", "full", p, p]);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
    };
    let (o, c, text) = verdicts(&paths);
    assert_eq!((o, c), (0, 0), "{text}");
    convert(&paths[0]);
    let (o, c, text) = verdicts(&paths);
    assert_ne!(c, 0, "{text}");
    assert_eq!(o, 1, "{text}");
    assert!(text.contains("differ"), "{text}");
    convert(&paths[1]);
    convert(&paths[2]);
    let (o, c, text) = verdicts(&paths);
    assert_eq!((o, c), (0, 0), "{text}");
    let help = ours(&["convert", "--help"]);
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("Convert every member of a cluster alike")
    );
}

/// A violation early in a file stops the checks of its records, not the
/// facts later records give the cross-file rules: the membership sample's
/// s3 joined the cluster (its snapshot lists s1 alone) and is first listed
/// by its record 46; with a commit index past its log's end at record 1,
/// that violation is the one reported, not also "not in any entry's
/// servers" (the file does list it). check-cluster stops at the same first
/// violation.
#[test]
fn a_violation_early_in_a_file_leaves_its_later_membership_in() {
    let files: Vec<(String, Vec<u8>)> = ["s1", "s2", "s3"]
        .iter()
        .map(|s| {
            let bytes = std::fs::read(sample_path("membership", s)).unwrap();
            (format!("{s}.db"), bytes)
        })
        .collect();
    let damaged = ovsdb_log::check::damage::commit_past_end_first(&files, 2).unwrap();
    let (_dir, paths) = written("early-violation", &damaged);
    let mut args = vec!["check", "--json"];
    args.extend(paths.iter().map(String::as_str));
    let o = ours(&args);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let j = ovsdb::json::parse(&o.stdout).unwrap();
    let rules: Vec<(&str, &str)> = j
        .get("problems")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let s = |k| p.get(k).and_then(|v| v.as_str()).unwrap();
            (s("rule"), s("file"))
        })
        .collect();
    assert_eq!(rules, [("commit-within-log", paths[2].as_str())], "{j}");
    if ovs_tools("a_violation_early_in_a_file_leaves_its_later_membership_in") {
        let (o, c, text) = verdicts(&paths);
        assert_ne!(c, 0, "{text}");
        assert_eq!(o, 1, "{text}");
        assert!(text.contains("commit index"), "{text}");
    }
}
