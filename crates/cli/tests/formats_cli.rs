//! CLI behaviour of inspect, dump, check and convert that does not need
//! the OVS tools: exit codes, one clear error line, summaries of damaged
//! files.

mod common;
use common::*;
use ovsdb::json::{parse, Json};

fn s(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn inspect_damaged_file_prints_prefix_summary_and_one_error_line() {
    let dir = TempDir::new("cli");
    let src = std::fs::read(sample_path("election-timer", "s1")).unwrap();
    let p = dir.path("torn.db");
    std::fs::write(&p, &src[..src.len() - 11]).unwrap();
    let o = ours(&["inspect", "--json", &p.display().to_string()]);
    let (out, err) = s(&o);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("record 52") && err.contains("byte offset"),
        "{err}"
    );
    let j = parse(out.as_bytes()).unwrap();
    let f = &j.get("files").unwrap().as_array().unwrap()[0];
    assert_eq!(f.get("records"), Some(&Json::Integer(52)));
    let t = f.get("truncated").unwrap();
    assert_eq!(t.get("record"), Some(&Json::Integer(52)));
    assert_eq!(t.get("code").and_then(Json::as_str), Some("truncated-body"));

    // Binary garbage: no prefix, still one line.
    let g = dir.path("garbage.db");
    std::fs::write(
        &g,
        (0..5000u32)
            .map(|i| (i * 7919 % 251) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    // Binary garbage is not a database: bad input, 2, as `show` says.
    let o = ours(&["inspect", &g.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(s(&o).1.lines().count(), 1);

    // Missing file: exit 2.
    let o = ours(&["inspect", &dir.path("nope.db").display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn inspect_cluster_summary_for_several_files() {
    let paths: Vec<String> = ["s1", "s2", "s3"]
        .iter()
        .map(|x| sample_path("leader-failover", x).display().to_string())
        .collect();
    let mut args = vec!["inspect", "--json"];
    args.extend(paths.iter().map(String::as_str));
    let o = ours(&args);
    assert!(o.status.success());
    let j = parse(&o.stdout).unwrap();
    assert_eq!(j.get("files").unwrap().as_array().unwrap().len(), 3);
    let c = j.get("cluster").unwrap();
    assert_eq!(c.get("servers").unwrap().as_array().unwrap().len(), 3);
    assert_eq!(c.get("problems").unwrap().as_array().unwrap().len(), 0);
    let terms = c.get("terms").unwrap().as_array().unwrap();
    assert!(terms.len() >= 2, "leader-failover has several terms");
}

#[test]
fn dump_at_index_and_check_exit_codes() {
    let p = sample_path("compacted", "s3").display().to_string();
    let early = ours(&["dump", "--json", "--at", "10", &p]);
    let late = ours(&["dump", "--json", &p]);
    assert!(early.status.success() && late.status.success());
    let rows = |o: &std::process::Output| -> usize {
        let j = parse(&o.stdout).unwrap();
        j.as_object()
            .unwrap()
            .iter()
            .map(|(_, t)| t.as_object().unwrap().len())
            .sum()
    };
    assert!(rows(&early) < rows(&late));
    // Text form lists tables.
    let t = ours(&["dump", &p]);
    assert!(String::from_utf8_lossy(&t.stdout).contains("table Logical_Switch"));

    let dir = TempDir::new("cli-check");
    let good: Vec<String> = ["s1", "s2", "s3"]
        .iter()
        .map(|x| sample_path("compacted", x).display().to_string())
        .collect();
    let mut a = vec!["check"];
    a.extend(good.iter().map(String::as_str));
    assert_eq!(ours(&a).status.code(), Some(0));
    let torn = dir.path("torn.db");
    let b = std::fs::read(&good[0]).unwrap();
    std::fs::write(&torn, &b[..b.len() - 3]).unwrap();
    let o = ours(&["check", &torn.display().to_string(), &good[1]]);
    assert_eq!(o.status.code(), Some(2));
    let mixed = ours(&[
        "check",
        &good[0],
        &sample_path("election-timer", "s1").display().to_string(),
    ]);
    assert_eq!(mixed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&mixed.stdout).contains("identity"));
}

#[test]
fn convert_round_trip_and_usage() {
    let dir = TempDir::new("cli-convert");
    let src = sample_path("acl-portgroup-diff", "s2");
    let full = dir.path("full.db");
    let back = dir.path("back.db");
    let o = ours(&[
        "convert",
        "--to",
        "full",
        &src.display().to_string(),
        &full.display().to_string(),
    ]);
    assert!(o.status.success(), "{:?}", s(&o));
    let o = ours(&[
        "convert",
        "--to",
        "diff",
        &full.display().to_string(),
        &back.display().to_string(),
    ]);
    assert!(o.status.success());
    // diff -> full -> diff gives back the original bytes.
    assert!(std::fs::read(&back).unwrap() == std::fs::read(&src).unwrap());
    assert_eq!(
        ours(&["convert", "--to", "zip", "a", "b"]).status.code(),
        Some(2)
    );
}

#[test]
fn dump_into_a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    // The reader takes one byte and closes the pipe; the rest of the dump
    // then hits EPIPE. No panic message, status 141 (as for SIGPIPE).
    let mut child = Command::new(env!("CARGO_BIN_EXE_ovsdb-scope"))
        .args(["dump", &sample_path("sb-scale", "s1").display().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut one = [0u8; 1];
    out.read_exact(&mut one).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(141), "{err}");
}

/// Every command that prints, into a pipe whose reader is already gone
/// (`ovsdb-scope ... | head -1` once head has exited): status 141 and
/// nothing on stderr, never a panic.
#[test]
fn every_command_into_a_closed_pipe_ends_quietly() {
    use std::process::{Command, Stdio};
    let s1 = sample_path("leader-failover", "s1").display().to_string();
    let incident = repo_root()
        .join("tests/fixtures/incidents/leader-pause")
        .display()
        .to_string();
    let runs: &[&[&str]] = &[
        &["inspect", &s1],
        &["show", &s1],
        &["diagnose", &incident],
        &["simulate", "ls-add-follower", "--set", "n=3"],
        &["simulate", "leader-kill", "--seeds", "2"],
        &["simulate", "--list-knobs"],
        &["compare", "ls-add-follower", "--a", "n=2", "--b", "n=3"],
        &["compare", "commit-sync", "--set", "n=2"],
        &[
            "idl-experiment",
            "diff-apply",
            "--sizes",
            "10",
            "--diffs",
            "10",
        ],
        &["completions", "bash"],
    ];
    for args in runs {
        // The reading end is closed before the command starts.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let child = Command::new(env!("CARGO_BIN_EXE_ovsdb-scope"))
            .args(*args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err, "", "{args:?}");
        assert_eq!(o.status.code(), Some(141), "{args:?}");
    }
}

#[test]
fn inspect_and_check_report_skipped_spans() {
    // The must-gather fragment: record 0 (a header without server_id) is
    // skipped, records 1-3 are read.
    let frag = repo_root()
        .join("tests/fixtures/external/openshift-must-gather-pr245/cluster-fragment.records");
    let o = ours(&["inspect", "--json", &frag.display().to_string()]);
    let (out, err) = s(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("skipped 217 bytes"), "{err}");
    let j = parse(out.as_bytes()).unwrap();
    let f = &j.get("files").unwrap().as_array().unwrap()[0];
    assert_eq!(f.get("records"), Some(&Json::Integer(3)));
    assert_eq!(f.get("truncated"), Some(&Json::Null));
    let k = &f.get("skipped").unwrap().as_array().unwrap()[0];
    assert_eq!(k.get("record"), Some(&Json::Integer(0)));
    assert_eq!(k.get("offset"), Some(&Json::Integer(0)));
    assert_eq!(k.get("bytes"), Some(&Json::Integer(217)));
    assert_eq!(k.get("code").and_then(Json::as_str), Some("bad-record"));

    // check: a body byte of one server's middle record flipped. The span
    // is reported and the verdict is "not verified" (2), not "hold" (0).
    let dir = TempDir::new("cli-salvage");
    let mut paths = Vec::new();
    for stem in ["s1", "s2", "s3"] {
        let mut b = std::fs::read(sample_path("election-timer", stem)).unwrap();
        if stem == "s1" {
            // Two bytes into the body of the first record header after
            // the middle of the file.
            let n = b.len() / 2;
            let h = n + b[n..].windows(7).position(|w| w == b"\nOVSDB ").unwrap() + 1;
            let body = h + b[h..].iter().position(|&c| c == b'\n').unwrap() + 1;
            b[body + 2] ^= 1;
        }
        let p = dir.path(&format!("{stem}.db"));
        std::fs::write(&p, &b).unwrap();
        paths.push(p.display().to_string());
    }
    let mut args = vec!["check"];
    args.extend(paths.iter().map(String::as_str));
    let o = ours(&args);
    let (out, _) = s(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("skipped: SHA-1 mismatch"), "{out}");
    assert!(out.contains("could not be checked"), "{out}");
}

/// show, find, history, diff and sizes: 2 for input that is not a
/// database, 1 for a damaged one (the output still uses the records before
/// the damage, and stderr names the record and offset), 0 for a sound one.
#[test]
fn contents_commands_exit_by_what_the_file_is() {
    let dir = TempDir::new("exits");
    let good = sample_path("leader-failover", "s1");
    let bytes = std::fs::read(&good).unwrap();
    // One byte changed in the middle: a SHA-1 mismatch there.
    let mut mid = bytes.clone();
    let n = mid.len() / 2;
    mid[n] ^= 0x20;
    let damaged = dir.path("mid.db");
    std::fs::write(&damaged, &mid).unwrap();
    let garbage = dir.path("garbage.db");
    std::fs::write(
        &garbage,
        (0..3000u32)
            .map(|i| (i * 7919 % 251) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let empty = dir.path("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let uuid = "00000000-0000-0000-0000-000000000000";
    let commands = |f: &str| -> Vec<Vec<String>> {
        [
            vec!["show", f],
            vec!["find", f, "Logical_Switch"],
            vec!["history", f, uuid],
            vec!["history", "--json", f, uuid],
            vec!["diff", f, "--from", "1", "--to", "5"],
            vec!["sizes", f],
            vec!["sizes", "--json", f],
            vec!["inspect", f],
            vec!["inspect", "--json", f],
            vec!["dump", f],
            vec!["dump", "--json", f],
        ]
        .into_iter()
        .map(|v| v.into_iter().map(String::from).collect())
        .collect()
    };
    for (file, want) in [
        (good.display().to_string(), 0),
        (damaged.display().to_string(), 1),
        (garbage.display().to_string(), 2),
        (empty.display().to_string(), 2),
    ] {
        for args in commands(&file) {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = ours(&a);
            let (out, err) = s(&o);
            assert_eq!(o.status.code(), Some(want), "{a:?}\n{out}\n{err}");
            match want {
                0 => assert!(err.is_empty(), "{a:?}: {err}"),
                1 => {
                    assert!(!out.is_empty(), "{a:?}: nothing printed");
                    assert!(
                        err.contains("record ") && err.contains("byte offset"),
                        "{err}"
                    );
                }
                _ => assert_eq!(err.lines().count(), 1, "{a:?}: {err}"),
            }
        }
    }
    // convert: damage in the middle is 1 (nothing written), a file that
    // is not a database 2, like every command above.
    let out = dir.path("converted.db").display().to_string();
    for (file, want) in [(&damaged, 1), (&garbage, 2), (&empty, 2)] {
        let f = file.display().to_string();
        let o = ours(&["convert", "--to", "full", &f, &out]);
        assert_eq!(o.status.code(), Some(want), "{f}: {}", s(&o).1);
        assert_eq!(s(&o).1.lines().count(), 1, "{f}");
    }
    // Binary input is named as such, not echoed byte by byte.
    let (_, err) = s(&ours(&["show", &garbage.display().to_string()]));
    assert!(err.contains("binary data, not an OVSDB database"), "{err}");
}

/// `convert` may write its output over its input: the result is whole.
#[test]
fn convert_into_its_own_input_leaves_the_converted_file() {
    let dir = TempDir::new("inplace");
    let p = dir.path("s1.db");
    std::fs::copy(sample_path("acl-portgroup-diff", "s1"), &p).unwrap();
    let path = p.display().to_string();
    let want = ours(&["dump", &path]).stdout;
    let o = ours(&["convert", "--to", "full", &path, &path]);
    assert_eq!(o.status.code(), Some(0), "{:?}", s(&o));
    let o = ours(&["inspect", "--json", &path]);
    assert_eq!(o.status.code(), Some(0), "{:?}", s(&o));
    let j = parse(&o.stdout).unwrap();
    let f = &j.get("files").unwrap().as_array().unwrap()[0];
    let b = f.get("entry_bytes").unwrap();
    // Stored with full values now (the sample was written with diffs).
    assert_eq!(b.get("stored"), b.get("full"), "{j:?}");
    assert_ne!(b.get("stored"), b.get("diff"), "{j:?}");
    assert_eq!(ours(&["dump", &path]).stdout, want);
    let left: Vec<_> = std::fs::read_dir(dir.path("."))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
}

/// `sizes --by X` prints that breakdown alone; without it, every part.
#[test]
fn sizes_by_shows_that_breakdown_alone() {
    let f = sample_path("sb-scale", "s1").display().to_string();
    let text = |args: &[&str]| String::from_utf8(ours(args).stdout).unwrap();
    let parts = [
        "by table:",
        "by column:",
        "by client:",
        "largest entries:",
        "growth (",
        "compaction at",
    ];
    let all = text(&["sizes", &f]);
    for p in parts {
        assert!(all.contains(p), "{p}: {all}");
    }
    for (by, part) in [
        ("table", "by table:"),
        ("column", "by column:"),
        ("client", "by client:"),
        ("growth", "growth ("),
    ] {
        let t = text(&["sizes", "--by", by, &f]);
        for p in parts {
            assert_eq!(t.contains(p), p == part, "--by {by}, {p}: {t}");
        }
    }
}

/// `inspect` of files that are not one cluster names each odd file by its
/// path.
#[test]
fn inspect_names_the_files_that_do_not_fit_by_path() {
    let a = sample_path("leader-failover", "s1").display().to_string();
    let b = sample_path("election-timer", "s2").display().to_string();
    let c = sample_path("standalone", "nb").display().to_string();
    let o = ours(&["inspect", &a, &b, &c]);
    let (out, _) = s(&o);
    let problems: Vec<&str> = out.lines().filter(|l| l.contains("problem:")).collect();
    assert_eq!(problems.len(), 2, "{out}");
    assert!(
        problems[0].contains(&format!("{b} belongs to cluster")),
        "{out}"
    );
    assert!(
        problems[1].contains(&format!("{c} is not a clustered database")),
        "{out}"
    );
    let j = parse(&ours(&["inspect", "--json", &a, &b, &c]).stdout).unwrap();
    let p = j
        .get("cluster")
        .unwrap()
        .get("problems")
        .unwrap()
        .as_array()
        .unwrap();
    assert!(p[0].as_str().unwrap().starts_with(&b), "{p:?}");
}

/// `history` takes a row's UUID or its first hex digits when only one row
/// of the file starts with them, as `ovn-nbctl` does.
#[test]
fn history_takes_a_uuid_prefix_that_names_one_row() {
    let f = sample_path("sb-scale", "s1").display().to_string();
    let full = ours(&["history", &f, "01c61942-44cd-4e15-b19d-e23123b6b735"]);
    assert_eq!(full.status.code(), Some(0));
    assert!(!full.stdout.is_empty());
    let short = ours(&["history", &f, "01C61942"]);
    assert_eq!(short.status.code(), Some(0), "{:?}", s(&short));
    assert_eq!(short.stdout, full.stdout);
    // Several rows start with 0163 in this file: it says which.
    let (_, err) = s(&ours(&["history", &f, "0163"]));
    assert!(err.contains("row UUIDs start with it (0163"), "{err}");
    for bad in ["016", "zzzz", "ffffffff"] {
        let o = ours(&["history", &f, bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert_eq!(s(&o).1.lines().count(), 1, "{bad}");
    }
}

/// `history --from I --to J`: the row's entries after the database at I up
/// to J, on the scale `diff` takes (log indexes; standalone, txn records
/// applied), whose net change is `diff --from I --to J`'s for the row; an
/// index outside the file is its nearest end, with `--at`'s note.
#[test]
fn history_from_to_keeps_the_entries_between_two_databases() {
    let indexes = |args: &[&str], key: &str| -> Vec<i64> {
        let o = ours(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {:?}", s(&o));
        let j = parse(&o.stdout).unwrap();
        j.get("entries")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.get(key).unwrap().as_i64().unwrap())
            .collect()
    };
    // Clustered: a Port_Binding of sb-scale written at indexes 14, 38, 44.
    let f = sample_path("sb-scale", "s1").display().to_string();
    let row = "ffe37a9c-9119-431e-89dc-ba3aa73f58d9";
    let all = indexes(&["history", "--json", &f, row], "index");
    assert_eq!(all, [14, 38, 44]);
    for (from, to) in [(13, 44), (14, 38), (14, 43), (0, 37), (38, 44), (44, 50)] {
        let want: Vec<i64> = all
            .iter()
            .copied()
            .filter(|&i| i > from && i <= to)
            .collect();
        let (i, j) = (from.to_string(), to.to_string());
        let args = ["history", "--json", "--from", &i, "--to", &j, &f, row];
        assert_eq!(indexes(&args, "index"), want, "--from {from} --to {to}");
        // The row is in diff's changes exactly when an entry is between.
        let d = ours(&["diff", "--json", "--from", &i, "--to", &j, &f]);
        let named = String::from_utf8_lossy(&d.stdout).contains(row);
        assert_eq!(named, !want.is_empty(), "--from {from} --to {to}");
    }
    // One bound alone.
    assert_eq!(
        indexes(&["history", "--json", "--to", "38", &f, row], "index"),
        [14, 38]
    );
    assert_eq!(
        indexes(&["history", "--json", "--from", "14", &f, row], "index"),
        [38, 44]
    );
    // Standalone: the Logical_Router whose ports txn records 13, 14 and 15
    // add one at a time; the first one's old value and the last one's new
    // are diff's for the same span.
    let f = sample_path("standalone", "nb").display().to_string();
    let row = "fe486d65-570a-42de-ab21-8a5806ff074b";
    let o = ours(&["history", "--json", "--from", "12", "--to", "15", &f, row]);
    let h = parse(&o.stdout).unwrap();
    let entries = h.get("entries").unwrap().as_array().unwrap();
    let records: Vec<i64> = entries
        .iter()
        .map(|e| e.get("record").unwrap().as_i64().unwrap())
        .collect();
    assert_eq!(records, [13, 14, 15]);
    let ports = |e: &Json, k: &str| {
        let cols = e.get("columns").unwrap().as_array().unwrap();
        let c = cols
            .iter()
            .find(|c| c.get("column").and_then(|c| c.as_str()) == Some("ports"))
            .unwrap();
        c.get(k).unwrap().as_str().unwrap().to_string()
    };
    let d = ours(&["diff", "--json", "--from", "12", "--to", "15", &f]);
    let d = String::from_utf8_lossy(&d.stdout).to_string();
    let old = ports(&entries[0], "old");
    let new = ports(&entries[2], "new");
    assert_eq!(old, "[]");
    let escaped = |v: &str| Json::String(v.to_string()).to_string_compact();
    assert!(
        d.contains(&format!(
            "\"old\":{},\"new\":{}",
            escaped(&old),
            escaped(&new)
        )),
        "{d}"
    );
    // Outside the file: its end, with the note the other commands give.
    let all = ours(&["history", &f, row]);
    let past = ours(&["history", "--to", "99", &f, row]);
    assert_eq!(past.stdout, all.stdout);
    assert_eq!(
        s(&past).1,
        format!("note: {f}: --to 99 is past the last transaction (40); using 40\n")
    );
    let o = ours(&["history", "--from", "15", "--to", "12", &f, row]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(s(&o).1, "ovsdb-scope: --from 15 is after --to 12\n");
    let (out, _) = s(&ours(&["history", "--from", "30", "--to", "40", &f, row]));
    assert_eq!(
        out,
        format!("no entry after index 30 up to 40 mentions {row}\n")
    );
}

/// An index past the end of the file (or before a compacted file's first
/// one) lands on that end, as it always did, and says so on stderr; the
/// output is the one at that end. The ends are `inspect --json`'s.
#[test]
fn an_index_outside_the_file_lands_on_its_end_with_a_note() {
    let run = |args: &[&str]| {
        let o = ours(args);
        let (out, err) = s(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        (out, err)
    };
    let ends = |path: &str| {
        let (out, _) = run(&["inspect", "--json", path]);
        let j = parse(out.as_bytes()).unwrap();
        let f = &j.get("files").unwrap().as_array().unwrap()[0];
        let n = |k: &str| match f.get(k) {
            Some(Json::Integer(i)) => Some(*i as u64),
            _ => None,
        };
        match n("last_index") {
            Some(last) => (n("snapshot_index").unwrap_or(1), last),
            // Standalone: positions count txn records, 0 is the schema.
            None => match f.get("record_kinds").and_then(|k| k.get("txn")) {
                Some(Json::Integer(t)) => (0, *t as u64),
                other => panic!("{other:?}"),
            },
        }
    };
    // A compacted file: its first index is the snapshot's.
    let f = sample_path("compacted", "s1").display().to_string();
    let (first, last) = ends(&f);
    assert!(first > 1 && last > first, "{first} {last}");
    let (at_last, quiet) = run(&["show", &f, "--at", &last.to_string()]);
    assert_eq!(quiet, "", "no note at the last index itself");
    let (at_first, quiet) = run(&["show", &f, "--at", &first.to_string()]);
    assert_eq!(quiet, "", "no note at the first index itself");
    assert_ne!(at_first, at_last);
    let past = last + 400;
    let (out, err) = run(&["show", &f, "--at", &past.to_string()]);
    assert_eq!(out, at_last);
    assert_eq!(
        err,
        format!("note: {f}: --at {past} is past the last transaction ({last}); showing {last}\n")
    );
    let (out, err) = run(&["show", &f, "--at", "1"]);
    assert_eq!(out, at_first);
    assert_eq!(
        err,
        format!("note: {f}: --at 1 is before the file's first index ({first}); showing {first}\n")
    );
    // diff: each end on its own.
    let (want, _) = run(&[
        "diff",
        &f,
        "--from",
        &first.to_string(),
        "--to",
        &last.to_string(),
    ]);
    let (out, err) = run(&["diff", &f, "--from", "0", "--to", &past.to_string()]);
    assert_eq!(out, want);
    let notes: Vec<&str> = err.lines().collect();
    assert_eq!(notes.len(), 2, "{err}");
    assert!(
        notes[0].contains("--from 0 is before the file's first index"),
        "{err}"
    );
    assert!(
        notes[1].contains(&format!("--to {past} is past the last transaction")),
        "{err}"
    );
    // find, and sizes' what-if, which now names the index it is at.
    let (want, _) = run(&["find", &f, "Logical_Switch", "--at", &last.to_string()]);
    let (out, err) = run(&["find", &f, "Logical_Switch", "--at", &past.to_string()]);
    assert_eq!(out, want);
    assert!(err.contains("is past the last transaction"), "{err}");
    let (want, _) = run(&["sizes", &f, "--at", &last.to_string()]);
    let (out, err) = run(&["sizes", &f, "--at", &past.to_string()]);
    assert_eq!(out, want);
    assert!(out.contains(&format!("compaction at {last}:")), "{out}");
    assert!(err.contains(&format!("--at {past} is past")), "{err}");
    // dump, the same.
    let (want, _) = run(&["dump", &f, "--at", &last.to_string()]);
    let (out, err) = run(&["dump", &f, "--at", &past.to_string()]);
    assert_eq!(out, want);
    assert_eq!(
        err,
        format!("note: {f}: --at {past} is past the last transaction ({last}); dumping {last}\n")
    );
    // A standalone file: positions are txn records.
    let f = sample_path("standalone", "nb").display().to_string();
    let (_, txns) = ends(&f);
    let (all, _) = run(&["show", &f]);
    let (out, err) = run(&["show", &f, "--at", &(txns + 1).to_string()]);
    assert_eq!(out, all);
    assert_eq!(
        err,
        format!(
            "note: {f}: --at {} is past the last transaction ({txns}); showing {txns}\n",
            txns + 1
        )
    );
    // A file damaged in the middle: its end is the last transaction
    // before the damage, which the note says (exit code 1, as before).
    let dir = TempDir::new("outside");
    let mut bytes = std::fs::read(sample_path("leader-failover", "s1")).unwrap();
    let n = bytes.len() / 2;
    bytes[n] ^= 0x20;
    let damaged = dir.path("mid.db");
    std::fs::write(&damaged, &bytes).unwrap();
    let d = damaged.display().to_string();
    let o = ours(&["show", &d, "--at", "100000"]);
    let (out, err) = s(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!out.is_empty());
    assert!(
        err.contains("is past the last transaction before the damage ("),
        "{err}"
    );
}

/// An index inside the log on entries that carry no transaction: in
/// ls-add-follower's s1.db (as `ovsdb-tool show-log` lists it) index 2
/// is the leader's no-op and 3 and 4 add servers; the first row arrives
/// at 5. The database there is the one as of 1, and the note says why
/// instead of calling index 3 past the end of a 245-entry log.
#[test]
fn an_index_on_entries_without_a_transaction_is_not_past_the_end() {
    let f = sample_path("ls-add-follower", "s1").display().to_string();
    let show_log = std::process::Command::new("ovsdb-tool")
        .args(["show-log", &f])
        .output();
    if let Ok(o) = show_log {
        // The oracle, where installed: indexes 2 to 4 carry no data (no
        // eid, which show-log prints for an entry with data), 5 does.
        let text = String::from_utf8_lossy(&o.stdout);
        let records: Vec<&str> = text.split("\n\n").collect();
        for i in 2..=5 {
            let r = records
                .iter()
                .find(|r| r.lines().any(|l| l.trim() == format!("index: {i}")))
                .unwrap();
            assert_eq!(r.contains(" eid:"), i == 5, "{r}");
        }
    }
    let run = |args: &[&str]| {
        let o = ours(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        s(&o)
    };
    let (at1, quiet) = run(&["dump", "--at", "1", &f]);
    assert_eq!(quiet, "");
    for (cmd, verb) in [("dump", "dumping"), ("show", "showing")] {
        let (out, err) = run(&[cmd, "--at", "3", &f]);
        assert_eq!(
            err,
            format!(
                "note: {f}: --at 3: entries 2 to 3 hold no transaction (no-op or membership entries); {verb} the database as of 1\n"
            )
        );
        if cmd == "dump" {
            assert_eq!(out, at1);
        }
    }
    let (_, err) = run(&["show", "--json", "--at", "2", &f]);
    assert!(
        err.contains("--at 2: entry 2 holds no transaction"),
        "{err}"
    );
    let (_, err) = run(&["diff", &f, "--from", "4", "--to", "8"]);
    assert!(err.contains("--from 4: entries 2 to 4 hold no"), "{err}");
    let (_, err) = run(&["find", "--at", "3", &f, "NB_Global"]);
    assert!(!err.contains("past the last"), "{err}");
    // Past the real end, the note is the one it was.
    let (_, err) = run(&["dump", "--at", "100000", &f]);
    assert!(
        err.contains("--at 100000 is past the last transaction (245)"),
        "{err}"
    );
}
