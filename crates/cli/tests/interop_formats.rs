//! Interop with the real OVS tools on every sample:
//! * `inspect --json` agrees with a live `ovsdb-tool -mm show-log`;
//! * `dump --json` equals `ovsdb-client dump` from an `ovsdb-server`
//!   serving a copy of the same file;
//! * files made by `convert` pass `ovsdb-tool check-cluster` and are served
//!   by `ovsdb-server` with the same dump.

mod common;
#[path = "../../ovsdb-log/tests/showlog.rs"]
mod showlog;

use common::*;
use ovsdb::json::{parse, Json, Object};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn all_sample_files() -> Vec<(String, String)> {
    let mut v = Vec::new();
    for scen in CLUSTERS {
        for s in ["s1", "s2", "s3"] {
            v.push((scen.to_string(), s.to_string()));
        }
    }
    v.push(("standalone".into(), "nb".into()));
    v.push((
        "standalone".into(),
        "ls-add-follower-s1.cluster-to-standalone".into(),
    ));
    v
}

fn json_u64(j: &Json) -> Option<u64> {
    j.as_i64().map(|i| i as u64)
}

#[test]
fn inspect_agrees_with_live_show_log() {
    if !ovs_tools("inspect_agrees_with_live_show_log") {
        return;
    }
    for (scen, stem) in all_sample_files() {
        let path = sample_path(&scen, &stem);
        let p = path.display().to_string();
        let live = tool(&["-mm", "show-log", &p]);
        assert!(live.status.success(), "{p}");
        let shown = showlog::parse(&String::from_utf8_lossy(&live.stdout));
        let o = ours(&["inspect", "--json", &p]);
        assert!(
            o.status.success(),
            "{p}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let j = parse(&o.stdout).unwrap();
        let f = &j.get("files").unwrap().as_array().unwrap()[0];
        let what = format!("{scen}/{stem}");
        assert_eq!(
            json_u64(f.get("records").unwrap()),
            Some(shown.records as u64),
            "{what}"
        );
        let kinds = f.get("record_kinds").unwrap().as_object().unwrap();
        for (k, n) in kinds.iter() {
            assert_eq!(
                json_u64(n),
                Some(shown.kinds.get(k).copied().unwrap_or(0) as u64),
                "{what}: kind {k}"
            );
        }
        if !shown.clustered {
            assert_eq!(f.get("format").unwrap().as_str(), Some("standalone"));
            continue;
        }
        let terms: Vec<u64> = f
            .get("terms")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .filter_map(json_u64)
            .collect();
        assert_eq!(
            terms,
            shown.terms.iter().copied().collect::<Vec<_>>(),
            "{what}"
        );
        assert_eq!(
            f.get("snapshot_index").and_then(json_u64),
            shown.prev_index,
            "{what}"
        );
        assert_eq!(
            f.get("last_index").and_then(json_u64),
            shown.last_index.or(shown.prev_index),
            "{what}"
        );
        assert_eq!(
            f.get("commit_index").and_then(json_u64),
            shown.max_commit,
            "{what}"
        );
        let pairs = |key: &str, member: &str| -> Vec<(u64, String)> {
            f.get(key)
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    (
                        json_u64(e.get("term").unwrap()).unwrap(),
                        e.get(member).unwrap().as_str().unwrap()[..4].to_string(),
                    )
                })
                .collect()
        };
        assert_eq!(pairs("votes", "vote"), shown.votes, "{what}");
        assert_eq!(pairs("leaders", "leader"), shown.leaders, "{what}");
        assert_eq!(
            f.get("database").unwrap().as_str(),
            shown.name.as_deref(),
            "{what}"
        );
    }
}

/// An `ovsdb-server` serving one file on a unix socket in a temp dir.
struct Server {
    child: Child,
    sock: String,
    log: std::path::PathBuf,
}

impl Server {
    fn start(dir: &TempDir, db: &Path) -> Server {
        let sock = dir.path("db.sock").display().to_string();
        let log = dir.path("server.log");
        let child = Command::new(ovsdb_server_bin())
            .arg("--no-chdir")
            .arg(format!("--remote=punix:{sock}"))
            .arg(format!("--unixctl={}", dir.path("ctl").display()))
            .arg(format!("--log-file={}", log.display()))
            .arg(format!("--pidfile={}", dir.path("pid").display()))
            .arg(db)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path("stderr.txt")).unwrap())
            .spawn()
            .expect("start ovsdb-server");
        Server { child, sock, log }
    }

    /// `ovsdb-client -f json dump` as `{table: {uuid: {column: datum}}}`,
    /// retried until the server answers (None after 15 s or if it exited).
    fn dump(&mut self, db: &str) -> Option<Json> {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(15) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return None;
            }
            let out = Command::new("ovsdb-client")
                .args(["--timeout=5", "-f", "json", "dump"])
                .arg(format!("unix:{}", self.sock))
                .arg(db)
                .output()
                .expect("ovsdb-client");
            if out.status.success() && !out.stdout.is_empty() {
                return Some(client_dump_to_json(&out.stdout));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client_dump_to_json(out: &[u8]) -> Json {
    let mut tables = Object::new();
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let t = parse(line).expect("client JSON");
        let name = t
            .get("caption")
            .and_then(Json::as_str)
            .unwrap()
            .trim_end_matches(" table")
            .to_string();
        let heads: Vec<&str> = t
            .get("headings")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap())
            .collect();
        let mut rows = Object::new();
        for row in t.get("data").unwrap().as_array().unwrap() {
            let vals = row.as_array().unwrap();
            let mut uuid = String::new();
            let mut cols = Object::new();
            for (h, v) in heads.iter().zip(vals) {
                if *h == "_uuid" {
                    uuid = v.as_array().unwrap()[1].as_str().unwrap().to_string();
                } else if !h.starts_with('_') {
                    cols.push_unchecked(*h, v.clone());
                }
            }
            cols.sort();
            rows.push_unchecked(uuid, Json::Object(cols));
        }
        rows.sort();
        tables.push_unchecked(name, Json::Object(rows));
    }
    tables.sort();
    Json::Object(tables)
}

fn our_dump(path: &Path) -> Json {
    let o = ours(&["dump", "--json", &path.display().to_string()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    parse(&o.stdout).unwrap()
}

fn served_copy(src: &Path, dbname: &str) -> (Option<Json>, String) {
    let dir = TempDir::new("dump");
    let copy = dir.path("copy.db");
    std::fs::write(&copy, std::fs::read(src).unwrap()).unwrap();
    let mut srv = Server::start(&dir, &copy);
    let d = srv.dump(dbname);
    let mut log = std::fs::read_to_string(&srv.log).unwrap_or_default();
    log += &std::fs::read_to_string(dir.path("stderr.txt")).unwrap_or_default();
    (d, log)
}

fn db_name(path: &Path) -> String {
    let o = tool(&["db-name", &path.display().to_string()]);
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A standalone file whose transactions leave weak references dangling
/// (a referred-to row deleted; a reference to a row that never existed),
/// as a hand-made or foreign writer may: ovsdb-server drops them when it
/// replays the file, and so must `dump`.
#[test]
fn dump_drops_dangling_weak_refs_like_ovsdb_server() {
    if !ovs_tools("dump_drops_dangling_weak_refs_like_ovsdb_server") {
        return;
    }
    let schema = parse(
        br#"{"name":"W","version":"1.0.0","tables":{
        "A":{"isRoot":true,"columns":{"n":{"type":"integer"},
          "w":{"type":{"key":{"type":"uuid","refTable":"A","refType":"weak"},"min":0,"max":"unlimited"}},
          "m":{"type":{"key":"string","value":{"type":"uuid","refTable":"B","refType":"weak"},"min":0,"max":"unlimited"}}}},
        "B":{"isRoot":true,"columns":{"v":{"type":"integer"}}}}}"#,
    )
    .unwrap();
    let a = |i: u32| format!("00000000-0000-4000-8000-0000000000a{i}");
    let b = |i: u32| format!("00000000-0000-4000-8000-0000000000b{i}");
    let txns = [
        format!(
            r#"{{"A":{{"{}":{{"n":1}},"{}":{{"n":2,"w":["set",[["uuid","{}"],["uuid","{}"]]],"m":["map",[["x",["uuid","{}"]],["y",["uuid","{}"]]]]}}}},"B":{{"{}":{{"v":1}},"{}":{{"v":2}}}}}}"#,
            a(1),
            a(2),
            a(1),
            a(3),
            b(1),
            b(2),
            b(1),
            b(2)
        ),
        format!(r#"{{"A":{{"{}":null}},"B":{{"{}":null}}}}"#, a(1), b(2)),
        format!(
            r#"{{"A":{{"{}":{{"n":3,"w":["uuid","{}"]}}}}}}"#,
            a(4),
            a(9)
        ),
    ];
    let mut w = ovsdb_log::writer::StandaloneWriter::new(&schema);
    for t in &txns {
        w.push_json(&parse(t.as_bytes()).unwrap());
    }
    let dir = TempDir::new("weak");
    let path = dir.path("w.db");
    std::fs::write(&path, w.finish()).unwrap();
    let (served, log) = served_copy(&path, "W");
    let served = served.unwrap_or_else(|| panic!("ovsdb-server did not serve:\n{log}"));
    let ours = our_dump(&path);
    assert_eq!(ours, served, "ours vs ovsdb-server");
    // Not vacuous: the served row A2 lost exactly the dangling references.
    let a2 = served.get("A").unwrap().get(&a(2)).unwrap();
    assert_eq!(a2.get("w").unwrap().to_string(), r#"["set",[]]"#);
    assert_eq!(
        a2.get("m").unwrap().to_string(),
        format!(r#"["map",[["x",["uuid","{}"]]]]"#, b(1))
    );
}

#[test]
fn dump_equals_ovsdb_client_dump() {
    if !ovs_tools("dump_equals_ovsdb_client_dump") {
        return;
    }
    let mut compared = 0;
    for (scen, stem) in all_sample_files() {
        let path = sample_path(&scen, &stem);
        let (served, log) = served_copy(&path, &db_name(&path));
        let Some(served) = served else {
            // The server that left its cluster cannot restart (spec §3.6).
            assert!(
                scen == "membership" && log.contains("has left the cluster"),
                "{scen}/{stem}: server did not serve:\n{log}"
            );
            continue;
        };
        assert!(served == our_dump(&path), "{scen}/{stem}: dumps differ");
        compared += 1;
    }
    assert!(compared >= 25, "{compared}");
}

#[test]
fn converted_files_pass_check_cluster_and_serve_same_dump() {
    if !ovs_tools("converted_files_pass_check_cluster_and_serve_same_dump") {
        return;
    }
    for (scen, to) in [
        ("acl-portgroup-diff", "full"),
        ("acl-portgroup-full", "diff"),
        ("leader-failover", "full"),
        ("compacted", "full"),
    ] {
        let dir = TempDir::new("convert");
        let mut outs = Vec::new();
        for s in ["s1", "s2", "s3"] {
            let src = sample_path(scen, s);
            let dst = dir.path(&format!("{s}.db"));
            let o = ours(&[
                "convert",
                "--to",
                to,
                &src.display().to_string(),
                &dst.display().to_string(),
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            outs.push(dst.display().to_string());
        }
        let mut args = vec!["check-cluster"];
        args.extend(outs.iter().map(String::as_str));
        let c = tool(&args);
        assert!(
            c.status.success(),
            "{scen} -> {to}: check-cluster: {}",
            String::from_utf8_lossy(&c.stderr)
        );
        // show-log reads every record of the converted file.
        assert!(tool(&["-mm", "show-log", &outs[0]]).status.success());
        let conv = Path::new(&outs[0]);
        let (served, log) = served_copy(conv, &db_name(conv));
        let served = served.unwrap_or_else(|| panic!("{scen}: not served:\n{log}"));
        assert!(
            served == our_dump(&sample_path(scen, "s1")),
            "{scen} -> {to}: served dump differs from the original's"
        );
    }
    // Standalone files: converted in both directions, read by show-log and
    // served by ovsdb-server with the original's contents.
    for stem in ["nb", "ls-add-follower-s1.cluster-to-standalone"] {
        for to in ["full", "diff"] {
            let dir = TempDir::new("convert-sa");
            let src = sample_path("standalone", stem);
            let dst = dir.path("out.db");
            let o = ours(&[
                "convert",
                "--to",
                to,
                &src.display().to_string(),
                &dst.display().to_string(),
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(tool(&["-mm", "show-log", &dst.display().to_string()])
                .status
                .success());
            let (served, log) = served_copy(&dst, &db_name(&dst));
            let served = served.unwrap_or_else(|| panic!("{stem} -> {to}: not served:\n{log}"));
            assert!(
                served == our_dump(&src),
                "{stem} -> {to}: served dump differs from the original's"
            );
        }
    }
}
