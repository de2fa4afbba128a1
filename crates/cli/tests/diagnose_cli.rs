//! `ovsdb-scope diagnose` on what operators collect: archives give exactly
//! the findings of the same files unpacked; exit codes; the JSON shape; bad
//! inputs are named and the rest still loads.

mod common;
use common::*;
use ovsdb::json::Json;

fn fixture(p: &str) -> String {
    repo_root()
        .join("tests/fixtures/incidents")
        .join(p)
        .display()
        .to_string()
}

fn run(paths: &[String]) -> (i32, Json, String) {
    let mut args = vec!["diagnose", "--json"];
    args.extend(paths.iter().map(String::as_str));
    let o = ours(&args);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    let j = ovsdb::json::parse(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{stderr}",
            String::from_utf8_lossy(&o.stdout)
        )
    });
    (o.status.code().unwrap_or(-1), j, stderr)
}

/// The findings without what depends on paths (evidence texts are kept:
/// they are the servers' own lines).
fn findings(j: &Json) -> Vec<String> {
    j.get("findings")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .map(|f| f.to_string_compact())
        .collect()
}

fn unpacked(names: &[&str]) -> Vec<String> {
    let mut v = Vec::new();
    for n in names {
        v.push(fixture(&format!("leader-pause/{n}.db")));
        v.push(fixture(&format!("leader-pause/{n}.ovsdb-server.log")));
    }
    v
}

#[test]
fn must_gather_tarball_gives_the_findings_of_its_files_unpacked() {
    let (code_a, a, _) = run(&[fixture("must-gather/cluster.tar.gz")]);
    let (code_b, b, _) = run(&unpacked(&["s1", "s2", "s3"]));
    assert_eq!(code_a, code_b);
    assert_eq!(code_a, 1, "the paused leader is at least a warning");
    assert_eq!(findings(&a), findings(&b));
    assert!(findings(&a)
        .iter()
        .any(|f| f.contains("\"process-stopped\"")));
    // Every member was matched to its server by what it says.
    let inputs = a.get("inputs").and_then(Json::as_array).unwrap();
    assert_eq!(inputs.len(), 6);
    for i in inputs {
        assert!(
            i.get("server").and_then(Json::as_str).is_some(),
            "{}",
            i.to_string_compact()
        );
    }
}

#[test]
fn sosreport_gives_the_findings_of_its_files_unpacked() {
    let (_, a, _) = run(&[fixture("must-gather/sosreport-like.tar.xz")]);
    let files: Vec<String> = [
        "s1.db",
        "s1.ovsdb-server.log",
        "s1.cluster-status.txt",
        "s1.memory-show.txt",
        "s1.coverage-show.txt",
    ]
    .iter()
    .map(|f| fixture(&format!("leader-pause/{f}")))
    .collect();
    let (_, b, _) = run(&files);
    assert_eq!(findings(&a), findings(&b));
    let kinds: Vec<String> = a
        .get("inputs")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .map(|i| i.get("kind").and_then(Json::as_str).unwrap().to_string())
        .collect();
    for k in [
        "database",
        "log",
        "cluster-status",
        "memory-show",
        "coverage-show",
    ] {
        assert!(kinds.iter().any(|x| x == k), "{k} not found in {kinds:?}");
    }
    // The status names the server and its role at the end.
    let servers = a.get("servers").and_then(Json::as_array).unwrap();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0].get("short").and_then(Json::as_str), Some("aa26"));
    // Named by the report's etc/hostname, not its folder.
    assert_eq!(
        servers[0].get("name").and_then(Json::as_str),
        Some("ovn-central-1")
    );
    assert_eq!(
        servers[0].get("role").and_then(Json::as_str),
        Some("follower")
    );
    assert_eq!(servers[0].get("term").and_then(Json::as_i64), Some(2));
}

#[test]
fn gzipped_leader_db_equals_the_plain_file() {
    let (ca, a, _) = run(&[fixture("must-gather/leader_nbdb.gz")]);
    let (cb, b, _) = run(&[fixture("leader-pause/s2.db")]);
    assert_eq!((ca, findings(&a)), (cb, findings(&b)));
    let i = &a.get("inputs").and_then(Json::as_array).unwrap()[0];
    assert_eq!(i.get("kind").and_then(Json::as_str), Some("database"));
    assert_eq!(i.get("server").and_then(Json::as_str), Some("2f3f"));
}

#[test]
fn json_shape_and_exit_codes() {
    // A calm cluster: exit 0; every finding below warning.
    let calm: Vec<String> = ["s1", "s2", "s3"]
        .iter()
        .map(|s| sample_path("ls-add-follower", s).display().to_string())
        .collect();
    let (code, j, _) = run(&calm);
    assert_eq!(code, 0, "{}", j.to_string_compact());
    for key in ["inputs", "servers", "findings"] {
        assert!(j.get(key).and_then(Json::as_array).is_some(), "{key}");
    }
    for s in j.get("servers").and_then(Json::as_array).unwrap() {
        for k in ["server_id", "short", "address", "role", "term"] {
            assert!(s.get(k).is_some(), "server lacks {k}");
        }
        assert_eq!(s.get("short").and_then(Json::as_str).unwrap().len(), 4);
    }
    // A paused leader: exit 1, findings carry every documented key.
    let (code, j, _) = run(&unpacked(&["s1", "s2", "s3"]));
    assert_eq!(code, 1);
    for f in j.get("findings").and_then(Json::as_array).unwrap() {
        for k in [
            "kind",
            "severity",
            "server",
            "time_ms",
            "term",
            "cause",
            "duration_ms",
            "evidence",
        ] {
            assert!(
                f.get(k).is_some(),
                "finding lacks {k}: {}",
                f.to_string_compact()
            );
        }
    }
    // Nothing readable: exit 2 with a message.
    let dir = TempDir::new("diag-empty");
    std::fs::write(dir.path("notes.txt"), "hello\n").unwrap();
    let o = ours(&["diagnose", dir.path("notes.txt").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing usable"));
    let o = ours(&["diagnose", "/nonexistent/path"]);
    assert_eq!(o.status.code(), Some(2));
    // Help and bad usage.
    let o = ours(&["diagnose", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Exit codes"));
    assert_eq!(
        ours(&["diagnose", "--set", "nope=1", "x"]).status.code(),
        Some(2)
    );
}

#[test]
fn bad_inputs_are_named_and_the_rest_loads() {
    let dir = TempDir::new("diag-bad");
    // A binary file named like a log.
    let bin: Vec<u8> = (0..70_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 11) as u8)
        .collect();
    std::fs::write(dir.path("ovsdb-server-nb.log"), &bin).unwrap();
    // A truncated gzip of a real database file.
    let gz = std::fs::read(fixture("must-gather/s1.db.gz")).unwrap();
    std::fs::write(dir.path("s1.db.gz"), &gz[..gz.len() / 2]).unwrap();
    // A 10 MB line with no newline.
    std::fs::write(dir.path("long.log"), vec![b'x'; 10 << 20]).unwrap();
    // A log of another cluster: a server log of the election-storm cluster.
    let other = std::fs::read_to_string(fixture("election-storm/s2.ovsdb-server.log")).unwrap();
    std::fs::write(dir.path("other-cluster.log"), other).unwrap();
    let mut paths: Vec<String> = [
        "ovsdb-server-nb.log",
        "s1.db.gz",
        "long.log",
        "other-cluster.log",
    ]
    .iter()
    .map(|n| dir.path(n).display().to_string())
    .collect();
    paths.extend(unpacked(&["s2", "s3"]));
    let (code, j, _) = run(&paths);
    assert_eq!(code, 1, "the good files still give their findings");
    let ignored = j.get("ignored").and_then(Json::as_array).unwrap();
    let reason = |name: &str| {
        ignored
            .iter()
            .find(|i| {
                i.get("path")
                    .and_then(Json::as_str)
                    .is_some_and(|p| p.contains(name))
            })
            .and_then(|i| i.get("reason").and_then(Json::as_str))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("{name} is not listed as ignored: {}", j.to_string_compact()))
    };
    assert!(reason("ovsdb-server-nb.log").contains("binary"));
    assert!(reason("s1.db").contains("truncated"), "{}", reason("s1.db"));
    assert!(!reason("long.log").is_empty());
    // The good files, the readable prefix of the truncated one and the log
    // of another cluster are used.
    let used = j.get("inputs").and_then(Json::as_array).unwrap();
    assert_eq!(used.len(), 6, "{}", j.to_string_compact());
    assert!(reason("s1.db").contains("kept the first"));
    // The log of another cluster is that cluster's, analysed apart: its
    // leaders never follow or precede the files' cluster's.
    let other = used
        .iter()
        .find(|i| {
            i.get("path")
                .and_then(Json::as_str)
                .is_some_and(|p| p.ends_with("other-cluster.log"))
        })
        .unwrap();
    assert_eq!(other.get("server").and_then(Json::as_str), Some("ecc0"));
    let clusters = j.get("clusters").and_then(Json::as_array).unwrap();
    assert_eq!(clusters.len(), 2, "{}", j.to_string_compact());
    let members = |id: &str| -> Vec<String> {
        clusters
            .iter()
            .find(|c| c.get("id").and_then(Json::as_str) == Some(id))
            .and_then(|c| c.get("servers").and_then(Json::as_array))
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    for f in j.get("findings").and_then(Json::as_array).unwrap() {
        if f.get("kind").and_then(Json::as_str) != Some("leader-change") {
            continue;
        }
        let id = f.get("cluster").and_then(Json::as_str).unwrap();
        let m = members(id);
        let from = f.get("from").and_then(Json::as_str).unwrap();
        let to = f.get("to").and_then(Json::as_str).unwrap();
        if id.starts_with("1a9e") {
            assert_eq!(m, ["ecc0"], "{}", f.to_string_compact());
        } else {
            assert!(
                !["e47d", "ecc0", "ac72"].contains(&from)
                    && !["e47d", "ecc0", "ac72"].contains(&to),
                "{}",
                f.to_string_compact()
            );
        }
    }
}

#[test]
fn damaged_database_files_are_findings_and_set_the_exit_code() {
    // A calm file: exit 0. The same file damaged in the middle (an error)
    // or cut short (a warning): exit 1, the finding naming file, record,
    // byte offset and reason.
    let good = std::fs::read(sample_path("ls-add-follower", "s1")).unwrap();
    let (code, j, _) = run(&[sample_path("ls-add-follower", "s1").display().to_string()]);
    assert_eq!(code, 0, "{}", j.to_string_compact());
    let dir = TempDir::new("diag-damaged");
    let mut mid = good.clone();
    let m = mid.len() / 2;
    for b in &mut mid[m..m + 8] {
        *b ^= 0x55;
    }
    std::fs::write(dir.path("mid.db"), &mid).unwrap();
    std::fs::write(dir.path("cut.db"), &good[..good.len() - 50]).unwrap();
    for (name, severity) in [("mid.db", "error"), ("cut.db", "warning")] {
        let p = dir.path(name).display().to_string();
        let (code, j, _) = run(std::slice::from_ref(&p));
        assert_eq!(code, 1, "{name}: {}", j.to_string_compact());
        let f = j
            .get("findings")
            .and_then(Json::as_array)
            .unwrap()
            .iter()
            .find(|f| f.get("kind").and_then(Json::as_str) == Some("damaged-file"))
            .unwrap_or_else(|| panic!("{name}: {}", j.to_string_compact()))
            .clone();
        assert_eq!(f.get("severity").and_then(Json::as_str), Some(severity));
        let summary = f.get("summary").and_then(Json::as_str).unwrap();
        assert!(summary.starts_with(&format!("{p}: record ")), "{summary}");
        assert!(summary.contains(" at byte offset "), "{summary}");
        assert!(f.get("cause").and_then(Json::as_str).is_some());
    }
}

/// A sosreport names its server after its etc/hostname, longer than `s1`:
/// the text's columns widen to it, so in "inputs" every path and in
/// "servers" every address starts where the others do.
#[test]
fn text_columns_line_up_with_a_sosreport_server_name() {
    let o = ours(&[
        "diagnose",
        &fixture("must-gather/sosreport-like.tar.xz"),
        &fixture("sb-memory/s1.db"),
        &fixture("sb-memory/s1.ovsdb-server.log"),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    let section = |title: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.starts_with(title))
            .skip(1)
            .take_while(|l| !l.is_empty() && !l.starts_with("  ignored"))
            .map(str::to_string)
            .collect()
    };
    let inputs = section("inputs");
    assert!(inputs.len() >= 5, "{text}");
    let starts: Vec<usize> = inputs.iter().map(|l| l.find("tests/").unwrap()).collect();
    assert!(starts.windows(2).all(|w| w[0] == w[1]), "{text}");
    let servers = section("servers:");
    assert_eq!(servers.len(), 2, "{text}");
    assert!(servers[0].contains(" ovn-central-1 "), "{text}");
    let starts: Vec<usize> = servers.iter().map(|l| l.find("tcp:").unwrap()).collect();
    assert_eq!(starts[0], starts[1], "{text}");
}

/// A mistyped `--set` knob gets the nearest knob's name, as `simulate
/// --set` does (the one rule, `raft_sim::knobs::closest_in`), and where the
/// list is; a name near none gets the list alone, and a bad value says
/// what the knob takes. All before any input is read.
#[test]
fn a_mistyped_knob_gets_the_nearest_name() {
    let leader = fixture("leader-pause/s2.db");
    let err = |set: &str| {
        let o = ours(&["diagnose", "--set", set, &leader]);
        assert_eq!(o.status.code(), Some(2), "{set}");
        assert!(o.stdout.is_empty(), "{set}");
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let e = err("long_pol_ms=2000");
    assert!(
        e.contains("unknown knob 'long_pol_ms'; did you mean 'long_poll_ms'? (ovsdb-scope diagnose --help lists them)"),
        "{e}"
    );
    let e = err("storm_window=60000");
    assert!(e.contains("did you mean 'storm_window_ms'?"), "{e}");
    let e = err("no_such_knob=1");
    assert!(!e.contains("did you mean"), "{e}");
    assert!(
        e.contains("unknown knob 'no_such_knob' (ovsdb-scope diagnose --help lists them)"),
        "{e}"
    );
    let e = err("stopped_ratio=x");
    assert!(e.contains("stopped_ratio: 'x' is not a number"), "{e}");
    // The knobs --help lists are the ones --set takes.
    let help = ours(&["diagnose", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    for k in evidence::findings::Knobs::NAMES {
        assert!(help.contains(&format!("{k}=")), "{k}");
    }
}
