//! The contents commands against the real tools as the oracle:
//! * `show` equals `ovn-nbctl show` / `ovn-sbctl show` / `ovs-vsctl show`
//!   (normalized only for order) from an `ovsdb-server` serving the same
//!   file (clustered files: a standalone copy by `ovsdb-tool
//!   cluster-to-standalone`), on the samples and the external files;
//! * `find --json` returns the rows of `ovn-nbctl --format=json find`;
//! * `diff --from I --to J` equals the difference of `ovsdb-tool query`
//!   selects of the file cut after entry I and after entry J (each cut
//!   made standalone by `cluster-to-standalone`);
//! * `sizes --by table|column` sum to `inspect --json`'s entry bytes, on
//!   every sample in every storage mode;
//! * `history` lists exactly the records that name the row as a row key
//!   (found by an independent scan of the raw records);
//! * the compaction what-if's snapshot, by table and column, equals the
//!   data record `ovsdb-tool compact` writes for the same database, and
//!   its size is the compacted file's.

mod common;

use common::*;
use ovsdb::json::{parse, Json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn external(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures/external").join(name)
}

struct Server {
    child: Child,
    sock: String,
}

impl Server {
    fn start(dir: &TempDir, db: &Path) -> Option<Server> {
        let sock = dir.path("db.sock").display().to_string();
        let child = Command::new(ovsdb_server_bin())
            .arg("--no-chdir")
            .arg(format!("--remote=punix:{sock}"))
            .arg(format!("--unixctl={}", dir.path("ctl").display()))
            .arg(format!("--log-file={}", dir.path("server.log").display()))
            .arg(db)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ovsdb-server");
        let mut s = Server { child, sock };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = s.child.try_wait() {
                return None;
            }
            if Path::new(&s.sock).exists() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
    fn db(&self) -> String {
        format!("unix:{}", self.sock)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn db_name(path: &Path) -> String {
    let o = tool(&["db-name", &path.display().to_string()]);
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn is_clustered(path: &Path) -> bool {
    tool(&["db-is-clustered", &path.display().to_string()])
        .status
        .success()
}

/// A standalone copy of `src` in `dir`.
fn standalone_copy(dir: &TempDir, src: &Path) -> PathBuf {
    let out = dir.path("standalone.db");
    if is_clustered(src) {
        let o = tool(&[
            "cluster-to-standalone",
            &out.display().to_string(),
            &src.display().to_string(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    } else {
        std::fs::copy(src, &out).unwrap();
    }
    out
}

/// Show output as a tree of indented lines, children sorted: equal for
/// two outputs that differ only in the order of rows.
fn normalize(text: &str) -> String {
    fn build(lines: &[(usize, String)], i: &mut usize, depth: usize) -> Vec<String> {
        let mut nodes = Vec::new();
        while *i < lines.len() && lines[*i].0 == depth {
            let head = lines[*i].1.clone();
            *i += 1;
            let kids = build(lines, i, depth + 1);
            let mut s = head;
            for k in kids {
                s.push_str("\n  ");
                s.push_str(&k.replace('\n', "\n  "));
            }
            nodes.push(s);
        }
        nodes.sort();
        nodes
    }
    let lines: Vec<(usize, String)> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let n = l.len() - l.trim_start().len();
            let t = l.trim_start();
            // Gateway chassis are printed in one line: sort them too.
            let t = match t
                .strip_prefix("gateway chassis: [")
                .and_then(|r| r.strip_suffix(']'))
            {
                Some(list) => {
                    let mut v: Vec<&str> = list.split(' ').collect();
                    v.sort();
                    format!("gateway chassis: [{}]", v.join(" "))
                }
                None => t.to_string(),
            };
            (n / 4, t)
        })
        .collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < lines.len() {
        let depth = lines[i].0;
        out.extend(build(&lines, &mut i, depth));
    }
    out.sort();
    out.join("\n")
}

fn ours_ok(args: &[&str]) -> Vec<u8> {
    let o = ours(args);
    assert!(
        o.status.success(),
        "ovsdb-scope {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// Compares `show` with the real tool; returns false (with a printed
/// reason) when the file cannot be served.
fn check_show(path: &Path) -> bool {
    let what = path.display().to_string();
    let dir = TempDir::new("show");
    let copy = standalone_copy(&dir, path);
    let name = db_name(&copy);
    let Some(srv) = Server::start(&dir, &copy) else {
        eprintln!("SKIPPED show of {what}: ovsdb-server 3.1 does not serve it");
        return false;
    };
    let (prog, extra): (&str, &[&str]) = match name.as_str() {
        "OVN_Northbound" => ("ovn-nbctl", &[]),
        "OVN_Southbound" => ("ovn-sbctl", &[]),
        "Open_vSwitch" => ("ovs-vsctl", &["--no-wait"]),
        other => panic!("{what}: no show tool for {other}"),
    };
    // Ours first: ovs-vsctl commits an Open_vSwitch row when there is none.
    let mine = ours_ok(&["show", &copy.display().to_string()]);
    if prog == "ovs-vsctl" && mine.is_empty() {
        eprintln!(
            "SKIPPED show of {what}: no Open_vSwitch row; ovs-vsctl inserts one itself \
             (and prints its temporary UUID), so there is nothing to compare"
        );
        return false;
    }
    let real = Command::new(prog)
        .args(extra)
        .arg(format!("--db={}", srv.db()))
        .arg("--timeout=10")
        .arg("show")
        .output()
        .expect("run show tool");
    assert!(
        real.status.success(),
        "{prog} show on {what}: {}",
        String::from_utf8_lossy(&real.stderr)
    );
    // The standalone copy holds every entry: `mine` is at the last one.
    let (a, b) = (
        normalize(&String::from_utf8_lossy(&mine)),
        normalize(&String::from_utf8_lossy(&real.stdout)),
    );
    assert!(
        a == b,
        "{what}: show differs\n--- ours\n{a}\n--- {prog}\n{b}"
    );
    // And on the original (clustered) file at its last committed entry.
    if is_clustered(path) {
        let orig = ours_ok(&["show", &what]);
        assert_eq!(
            normalize(&String::from_utf8_lossy(&orig)),
            b,
            "{what} (clustered)"
        );
    }
    true
}

#[test]
fn show_equals_real_tools_on_samples() {
    if !ovs_tools("show_equals_real_tools_on_samples") {
        return;
    }
    let mut files: Vec<PathBuf> = CLUSTERS.iter().map(|c| sample_path(c, "s1")).collect();
    files.push(sample_path("standalone", "nb"));
    for f in files {
        assert!(check_show(&f), "{} must be servable", f.display());
    }
}

#[test]
fn show_equals_real_tools_on_external_files() {
    if !ovs_tools("show_equals_real_tools_on_external_files") {
        return;
    }
    let files = [
        "ovn-fake-multinode-flaviof/ovnnb_db.db",
        "pipette-iqtlabs/conf.db",
        "devstack-kherox/conf.db",
        "microstack-jischak/conf.db",
        "quantum-thariman-network/conf.db",
        "openstack-yokolab/conf.db",
        "openstack-adrieth-net1/conf.db",
        "ovs-hyperv-cloudbase/conf.db",
    ];
    let mut served = 0;
    for f in files {
        if check_show(&external(f)) {
            served += 1;
        }
    }
    assert!(served >= 6, "only {served} external files could be served");
}

/// `ovn-nbctl --format=json find` rows as (heading → cell) maps, sorted.
fn rows_of(j: &Json) -> Vec<BTreeMap<String, String>> {
    let heads: Vec<String> = j
        .get("headings")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap().to_string())
        .collect();
    let mut rows: Vec<BTreeMap<String, String>> = j
        .get("data")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            heads
                .iter()
                .cloned()
                .zip(
                    r.as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c.sorted_recursive().to_string_compact()),
                )
                .collect()
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn find_returns_the_rows_of_ovn_nbctl_find() {
    if !ovs_tools("find_returns_the_rows_of_ovn_nbctl_find") {
        return;
    }
    let cases: &[(&str, &str, &[&str])] = &[
        ("nb", "Logical_Switch_Port", &["name=ls6-vm1"]),
        ("nb", "Logical_Switch_Port", &["addresses!=[]"]),
        (
            "nb",
            "Logical_Switch_Port",
            &["addresses{>=}\"0a:00:00:00:01:07 192.0.2.7\""],
        ),
        ("nb", "Logical_Switch_Port", &["name>ls5", "name<=ls8-vm1"]),
        ("nb", "Logical_Switch", &["ports{=}[]"]),
        ("nb", "Logical_Switch", &["ports{!=}[]", "name!=ls6"]),
        (
            "nb",
            "Logical_Router_Port",
            &["networks{<=}[\"10.5.0.1/24\", \"10.6.0.1/24\"]"],
        ),
        (
            "nb",
            "Logical_Router_Port",
            &["networks{<}[\"10.5.0.1/24\", \"10.6.0.1/24\"]"],
        ),
        ("nb", "Logical_Switch", &["external_ids{>=}{}"]),
        ("nb", "Logical_Switch", &["other_config:foo=bar"]),
        ("nb", "Logical_Switch", &["other_config:foo{=}[]"]),
        ("ext", "Logical_Switch_Port", &["type=router"]),
        (
            "ext",
            "Logical_Switch_Port",
            &["external_ids:\"neutron:device_owner\"=\"network:router_interface\""],
        ),
        (
            "ext",
            "Logical_Switch_Port",
            &["up=true", "enabled{>=}[true]"],
        ),
        ("ext", "NAT", &["type=snat"]),
        ("ext", "ACL", &["priority>=1002", "direction=to-lport"]),
        (
            "ext",
            "Logical_Switch",
            &["external_ids:\"neutron:mtu\"{in}[1442, 1500]"],
        ),
        ("ext", "ACL", &["match{not-in}[\"x\"]", "action!=drop"]),
    ];
    let dir = TempDir::new("find");
    let nb = standalone_copy(&dir, &sample_path("standalone", "nb"));
    let dir2 = TempDir::new("find-ext");
    let ext = standalone_copy(&dir2, &external("ovn-fake-multinode-flaviof/ovnnb_db.db"));
    let s1 = Server::start(&dir, &nb).expect("serve nb");
    let s2 = Server::start(&dir2, &ext).expect("serve ext");
    for (which, table, conds) in cases {
        let (srv, file) = if *which == "nb" {
            (&s1, &nb)
        } else {
            (&s2, &ext)
        };
        let real = Command::new("ovn-nbctl")
            .arg(format!("--db={}", srv.db()))
            .args(["--timeout=10", "--format=json", "find", table])
            .args(*conds)
            .output()
            .unwrap();
        assert!(
            real.status.success(),
            "{table} {conds:?}: {}",
            String::from_utf8_lossy(&real.stderr)
        );
        let mut args = vec!["find", file.to_str().unwrap(), table];
        args.extend(conds.iter());
        args.push("--json");
        let mine = parse(&ours_ok(&args)).unwrap();
        let theirs = parse(&real.stdout).unwrap();
        // The tool lists the columns of its own (23.03) schema; an older
        // file lacks some: compare the columns both have.
        let (mut a, mut b) = (rows_of(&mine), rows_of(&theirs));
        let common: BTreeSet<String> = a
            .first()
            .map(|r| {
                r.keys()
                    .filter(|k| b[0].contains_key(*k))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        for r in a.iter_mut().chain(b.iter_mut()) {
            r.retain(|k, _| common.contains(k));
        }
        assert_eq!(a.len(), b.len(), "{table} {conds:?}: row count");
        assert_eq!(a, b, "{table} {conds:?}");
    }
}

#[test]
fn find_rejects_bad_conditions_with_exit_2() {
    let nb = sample_path("standalone", "nb").display().to_string();
    for conds in [
        vec!["nosuchcolumn=1"],
        vec!["name"],
        vec!["name:key=1"],
        vec!["tag=abc"],
        vec!["addresses=[a"],
    ] {
        let mut args = vec!["find", nb.as_str(), "Logical_Switch_Port"];
        args.extend(conds.iter());
        let o = ours(&args);
        assert_eq!(o.status.code(), Some(2), "{conds:?}");
        assert!(!o.stderr.is_empty());
    }
    assert_eq!(ours(&["find", &nb, "NoTable"]).status.code(), Some(2));
    assert_eq!(ours(&["find"]).status.code(), Some(2));
    assert_eq!(ours(&["find", "--help"]).status.code(), Some(0));
}

/// Record boundaries of a file: (offset, end, body).
fn records(bytes: &[u8]) -> Vec<(usize, usize, &[u8])> {
    let mut v = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let nl = i + bytes[i..].iter().position(|&b| b == b'\n').unwrap();
        let header = std::str::from_utf8(&bytes[i..nl]).unwrap();
        let len: usize = header.split(' ').nth(2).unwrap().parse().unwrap();
        let body = &bytes[nl + 1..nl + 1 + len];
        v.push((i, nl + 1 + len, body));
        i = nl + 1 + len;
    }
    v
}

/// All rows of every table of a standalone file, by `ovsdb-tool query`.
fn query_all(path: &Path) -> BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>> {
    let name = db_name(path);
    let schema = Command::new("ovsdb-tool")
        .args(["schema-name", path.to_str().unwrap()])
        .output()
        .unwrap();
    let _ = schema;
    // The table names from our own schema reading would be circular; take
    // them from the file's first record instead.
    let bytes = std::fs::read(path).unwrap();
    let recs = records(&bytes);
    let schema = parse(recs[0].2).unwrap();
    let tables: Vec<String> = schema
        .get("tables")
        .unwrap()
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, _)| k.to_string())
        .collect();
    let ops: Vec<String> = tables
        .iter()
        .map(|t| format!("{{\"op\":\"select\",\"table\":\"{t}\",\"where\":[]}}"))
        .collect();
    let txn = format!("[\"{name}\",{}]", ops.join(","));
    let o = tool(&["query", path.to_str().unwrap(), &txn]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let res = parse(&o.stdout).unwrap();
    let mut out = BTreeMap::new();
    for (t, r) in tables.iter().zip(res.as_array().unwrap()) {
        let mut rows = BTreeMap::new();
        for row in r.get("rows").unwrap().as_array().unwrap() {
            let o = row.as_object().unwrap();
            let uuid = o.get("_uuid").unwrap().as_array().unwrap()[1]
                .as_str()
                .unwrap()
                .to_string();
            let cols: BTreeMap<String, String> = o
                .iter()
                .filter(|(k, _)| !k.starts_with('_'))
                .map(|(k, v)| (k.to_string(), v.sorted_recursive().to_string_compact()))
                .collect();
            rows.insert(uuid, cols);
        }
        out.insert(t.clone(), rows);
    }
    out
}

/// The file cut after the entry with log index `i` (clustered) or after
/// `i` txn records (standalone), made standalone.
fn cut_at(dir: &TempDir, src: &Path, i: u64, tag: &str) -> PathBuf {
    let bytes = std::fs::read(src).unwrap();
    let recs = records(&bytes);
    let clustered = bytes.starts_with(b"OVSDB CLUSTER");
    let mut end = recs[0].1;
    for (n, (_, e, body)) in recs.iter().enumerate().skip(1) {
        let keep = if clustered {
            let j = parse(body).unwrap();
            match j.get("index").and_then(Json::as_i64) {
                Some(x) => (x as u64) <= i,
                None => true,
            }
        } else {
            (n as u64) <= i
        };
        if !keep {
            break;
        }
        end = *e;
    }
    let cut = dir.path(&format!("cut-{tag}.db"));
    std::fs::write(&cut, &bytes[..end]).unwrap();
    if clustered {
        let out = dir.path(&format!("cut-{tag}-standalone.db"));
        let o = tool(&[
            "cluster-to-standalone",
            out.to_str().unwrap(),
            cut.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    } else {
        cut
    }
}

/// (added, removed, changed uuid → columns) of one table.
type TableChange = (
    BTreeSet<String>,
    BTreeSet<String>,
    BTreeMap<String, BTreeSet<String>>,
);

#[test]
fn diff_equals_the_difference_of_real_dumps() {
    if !ovs_tools("diff_equals_the_difference_of_real_dumps") {
        return;
    }
    let cases: &[(&str, &str, u64, u64)] = &[
        ("ls-add-follower", "s1", 2, 8),
        ("acl-portgroup-diff", "s1", 3, 12),
        ("acl-portgroup-full", "s2", 4, 9),
        ("sb-scale", "s1", 10, 40),
        ("standalone", "nb", 1, 7),
    ];
    let mut checked = 0;
    for &(scen, stem, i, j) in cases {
        let path = sample_path(scen, stem);
        let dir = TempDir::new("diff");
        let a = query_all(&cut_at(&dir, &path, i, "a"));
        let b = query_all(&cut_at(&dir, &path, j, "b"));
        let mut want: BTreeMap<String, TableChange> = BTreeMap::new();
        let names: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        let empty = BTreeMap::new();
        for t in names {
            let (ra, rb) = (a.get(t).unwrap_or(&empty), b.get(t).unwrap_or(&empty));
            let added: BTreeSet<String> = rb
                .keys()
                .filter(|u| !ra.contains_key(*u))
                .cloned()
                .collect();
            let removed: BTreeSet<String> = ra
                .keys()
                .filter(|u| !rb.contains_key(*u))
                .cloned()
                .collect();
            let mut changed = BTreeMap::new();
            for (u, cb) in rb {
                if let Some(ca) = ra.get(u) {
                    let cols: BTreeSet<String> = cb
                        .iter()
                        .filter(|(k, v)| ca.get(*k) != Some(v))
                        .map(|(k, _)| k.clone())
                        .collect();
                    if !cols.is_empty() {
                        changed.insert(u.clone(), cols);
                    }
                }
            }
            if !(added.is_empty() && removed.is_empty() && changed.is_empty()) {
                want.insert(t.clone(), (added, removed, changed));
            }
        }
        let p = path.display().to_string();
        let (is, js) = (i.to_string(), j.to_string());
        let mine = parse(&ours_ok(&[
            "diff", &p, "--from", &is, "--to", &js, "--json",
        ]))
        .unwrap();
        let mut got = BTreeMap::new();
        for t in mine.get("tables").unwrap().as_array().unwrap() {
            let set = |k: &str| -> BTreeSet<String> {
                t.get(k)
                    .unwrap()
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|u| u.as_str().unwrap().to_string())
                    .collect()
            };
            let changed = t
                .get("changed")
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c.get("uuid").unwrap().as_str().unwrap().to_string(),
                        c.get("columns")
                            .unwrap()
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.get("column").unwrap().as_str().unwrap().to_string())
                            .collect(),
                    )
                })
                .collect();
            got.insert(
                t.get("table").unwrap().as_str().unwrap().to_string(),
                (set("added"), set("removed"), changed),
            );
        }
        assert!(
            !want.is_empty(),
            "{scen}/{stem} {i}..{j}: pick indexes with changes"
        );
        checked += 1;
        assert_eq!(got, want, "{scen}/{stem} --from {i} --to {j}");
    }
    assert_eq!(checked, cases.len());
}

fn sum_of(o: &Json, key: &str, mode: &str) -> u64 {
    o.get(key)
        .unwrap()
        .as_object()
        .unwrap()
        .iter()
        .map(|(_, v)| v.get(mode).and_then(Json::as_i64).unwrap_or(0) as u64)
        .sum()
}

#[test]
fn sizes_by_table_and_column_sum_to_inspect_entry_bytes() {
    let dir = TempDir::new("sizes");
    let mut files: Vec<PathBuf> = Vec::new();
    for c in CLUSTERS {
        for s in ["s1", "s2", "s3"] {
            files.push(sample_path(c, s));
        }
    }
    files.push(sample_path("standalone", "nb"));
    files.push(sample_path(
        "standalone",
        "ls-add-follower-s1.cluster-to-standalone",
    ));
    // Every storage mode: each file also rewritten with full values and
    // with diffs.
    let mut all = Vec::new();
    for (n, f) in files.iter().enumerate() {
        all.push(f.clone());
        for mode in ["full", "diff"] {
            let out = dir.path(&format!("{n}-{mode}.db"));
            let o = ours(&[
                "convert",
                "--to",
                mode,
                f.to_str().unwrap(),
                out.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            all.push(out);
        }
    }
    for f in &all {
        let p = f.display().to_string();
        let insp = parse(&ours_ok(&["inspect", "--json", &p])).unwrap();
        let eb = insp.get("files").unwrap().as_array().unwrap()[0]
            .get("entry_bytes")
            .unwrap()
            .clone();
        let s = parse(&ours_ok(&["sizes", "--json", &p])).unwrap();
        let s = &s.as_array().unwrap()[0];
        for mode in ["stored", "full", "diff"] {
            let want = eb.get(mode).and_then(Json::as_i64).map(|x| x as u64);
            let Some(want) = want else { continue };
            assert_eq!(sum_of(s, "by_table", mode), want, "{p} by_table {mode}");
            assert_eq!(sum_of(s, "by_column", mode), want, "{p} by_column {mode}");
        }
        for by in ["table", "column"] {
            let s = parse(&ours_ok(&["sizes", "--by", by, "--json", &p])).unwrap();
            let s = &s.as_array().unwrap()[0];
            let want = eb.get("stored").and_then(Json::as_i64).unwrap() as u64;
            assert_eq!(
                sum_of(s, &format!("by_{by}"), "stored"),
                want,
                "{p} --by {by}"
            );
        }
    }
}

#[test]
fn sizes_sum_on_external_files() {
    for f in [
        "ovn-fake-multinode-flaviof/ovnnb_db.db",
        "devstack-kherox/conf.db",
        "quantum-thariman-network/conf.db",
    ] {
        let p = external(f).display().to_string();
        let insp = parse(&ours_ok(&["inspect", "--json", &p])).unwrap();
        let eb = insp.get("files").unwrap().as_array().unwrap()[0]
            .get("entry_bytes")
            .unwrap()
            .clone();
        let s = parse(&ours_ok(&["sizes", "--json", &p])).unwrap();
        let s = &s.as_array().unwrap()[0];
        let want = eb.get("stored").and_then(Json::as_i64).unwrap() as u64;
        assert_eq!(sum_of(s, "by_table", "stored"), want, "{p}");
        assert_eq!(sum_of(s, "by_column", "stored"), want, "{p}");
        assert_eq!(sum_of(s, "by_client", "stored"), want, "{p}");
    }
}

/// Bytes of each table member and of each column member (without the
/// comma before it) of a txn object as the real tool wrote it.
fn members_of(body: &[u8]) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let layout = contents::layout::walk_txn(body, 0, true).unwrap();
    // The object's first member (`_date` or a table) has no comma before it.
    let text = std::str::from_utf8(body).unwrap();
    let first = text.trim_start().trim_start_matches('{');
    let first = &first[1..first[1..].find('"').unwrap() + 1];
    let mut tables = BTreeMap::new();
    let mut columns = BTreeMap::new();
    for t in &layout.tables {
        tables.insert(t.name.clone(), t.bytes - u64::from(t.name != first));
        for r in &t.rows {
            for (ci, c) in r.columns.iter().flatten().enumerate() {
                *columns.entry(format!("{}.{}", t.name, c.name)).or_insert(0) +=
                    c.bytes - u64::from(ci > 0);
            }
        }
    }
    (tables, columns)
}

fn object_u64(o: &Json, key: &str) -> BTreeMap<String, u64> {
    o.get(key)
        .unwrap()
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.to_string(), v.as_i64().unwrap() as u64))
        .collect()
}

#[test]
fn snapshot_breakdown_equals_a_real_compaction() {
    let mut files: Vec<PathBuf> = CLUSTERS.iter().map(|c| sample_path(c, "s1")).collect();
    files.push(sample_path("standalone", "nb"));
    for f in [
        "ovn-fake-multinode-flaviof/ovnnb_db.db",
        "devstack-kherox/conf.db",
        "quantum-thariman-network/conf.db",
    ] {
        files.push(external(f));
    }
    let mut compared = 0;
    for (n, f) in files.iter().enumerate() {
        let dir = TempDir::new(&format!("compact-{n}"));
        let copy = standalone_copy(&dir, f);
        let compacted = dir.path("compacted.db");
        let o = tool(&[
            "compact",
            &copy.display().to_string(),
            &compacted.display().to_string(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let real = std::fs::read(&compacted).unwrap();
        let recs = records(&real);
        // A schema record, then one record with every row (none when the
        // database is empty).
        let (want_tables, want_columns) = match recs.get(1) {
            Some((_, _, body)) => members_of(body),
            None => Default::default(),
        };
        let p = f.display().to_string();
        let s = parse(&ours_ok(&["sizes", "--json", &p])).unwrap();
        let c = s.as_array().unwrap()[0].get("compaction").unwrap().clone();
        let mut tables = object_u64(&c, "by_table");
        let record = tables.remove("(record)").unwrap();
        let mut columns = object_u64(&c, "by_column");
        columns.remove("(record)");
        columns.retain(|k, _| !k.ends_with(".(rows)"));
        assert_eq!(tables, want_tables, "{p}: snapshot by table");
        assert_eq!(columns, want_columns, "{p}: snapshot by column");
        let snapshot = c.get("snapshot_bytes").and_then(Json::as_i64).unwrap() as u64;
        assert_eq!(tables.values().sum::<u64>() + record, snapshot, "{p}");
        if !is_clustered(f) {
            // A standalone what-if is the compacted file itself, but for
            // the comment: the tool writes its own where the server's
            // online compaction writes "compacting database online".
            let data = recs[1].2;
            let comment = contents::layout::walk_txn(data, 0, false)
                .unwrap()
                .comment
                .unwrap();
            assert!(comment.starts_with("compacted by ovsdb-tool"), "{comment}");
            // And the tool turns column diffs off, where a server that
            // wrote diffs marks its snapshot `"_is_diff":true`.
            let diffs = std::fs::read_to_string(f)
                .unwrap()
                .contains("\"_is_diff\":true");
            let want = real.len() as u64 - comment.len() as u64
                + "compacting database online".len() as u64
                + if diffs {
                    ",\"_is_diff\":true".len() as u64
                } else {
                    0
                };
            assert_eq!(snapshot, want, "{p}: snapshot bytes");
        }
        compared += 1;
    }
    assert_eq!(compared, files.len());
}

#[test]
fn compaction_what_if_equals_the_snapshot_the_real_server_wrote() {
    // In the `compacted` sample, ovsdb-server/compact wrote a snapshot at
    // index 65 into s1 and s2; s3 kept its whole log. The what-if on s3 at
    // 65 is the header record s1's server wrote (their addresses and IDs
    // have the same lengths).
    let s1 = std::fs::read(sample_path("compacted", "s1")).unwrap();
    let header = records(&s1)[0];
    let at = "65";
    assert!(std::str::from_utf8(header.2)
        .unwrap()
        .contains(&format!("\"prev_index\":{at}")));
    let s3 = sample_path("compacted", "s3").display().to_string();
    let s = parse(&ours_ok(&["sizes", "--json", "--at", at, &s3])).unwrap();
    let c = s.as_array().unwrap()[0].get("compaction").unwrap().clone();
    assert_eq!(
        c.get("snapshot_bytes").and_then(Json::as_i64).unwrap() as usize,
        header.1 - header.0,
        "what-if at {at} against the real snapshot record"
    );
}

/// Records naming `uuid` as a row key, by a scan of the raw records with
/// the JSON parser (header snapshot, entries' `data[1]`, standalone txns).
fn records_naming(bytes: &[u8], uuid: &str) -> Vec<usize> {
    let recs = records(bytes);
    let clustered = bytes.starts_with(b"OVSDB CLUSTER");
    let mut out = Vec::new();
    for (n, (_, _, body)) in recs.iter().enumerate() {
        if !clustered && n == 0 {
            continue;
        }
        let j = parse(body).unwrap();
        let txn = if clustered {
            let data = j.get("data").or_else(|| j.get("prev_data"));
            match data.and_then(Json::as_array) {
                Some(a) if a.len() == 2 => a[1].clone(),
                _ => continue,
            }
        } else {
            j
        };
        let Some(o) = txn.as_object() else { continue };
        let named = o
            .iter()
            .filter(|(k, _)| !k.starts_with('_'))
            .any(|(_, rows)| rows.as_object().is_some_and(|r| r.contains_key(uuid)));
        if named {
            out.push(n);
        }
    }
    out
}

#[test]
fn history_lists_exactly_the_records_naming_the_row() {
    let mut checked = 0;
    for (scen, stem) in [
        ("ls-add-follower", "s1"),
        ("acl-portgroup-diff", "s2"),
        ("compacted", "s1"),
        ("sb-scale", "s1"),
        ("standalone", "nb"),
        ("leader-failover", "s3"),
    ] {
        let path = sample_path(scen, stem);
        let p = path.display().to_string();
        let bytes = std::fs::read(&path).unwrap();
        // Every row UUID of the final database, plus a few deleted ones:
        // every key that appears in any record.
        let mut uuids = BTreeSet::new();
        for (n, (_, _, body)) in records(&bytes).iter().enumerate() {
            let text = String::from_utf8_lossy(body);
            for (i, _) in text.match_indices("\":{\"").take(3) {
                if i >= 36 && ovsdb::Uuid::parse(&text[i - 36..i]).is_some() {
                    uuids.insert(text[i - 36..i].to_string());
                }
            }
            let _ = n;
        }
        for u in uuids.iter().take(25) {
            let want = records_naming(&bytes, u);
            let h = parse(&ours_ok(&["history", &p, u, "--json"])).unwrap();
            let got: Vec<usize> = h
                .get("entries")
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.get("record").unwrap().as_i64().unwrap() as usize)
                .collect();
            assert_eq!(got, want, "{scen}/{stem} {u}");
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} rows checked");
    assert_eq!(
        ours(&["history", "x.db", "not-a-uuid"]).status.code(),
        Some(2)
    );
}

/// `show --json`'s tables in `query_all`'s form (columns' values sorted).
fn json_tables(tables: &Json) -> BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>> {
    let mut out = BTreeMap::new();
    for (t, rows) in tables.as_object().unwrap().iter() {
        let mut rs = BTreeMap::new();
        for (u, cols) in rows.as_object().unwrap().iter() {
            let cols: BTreeMap<String, String> = cols
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.to_string(), v.sorted_recursive().to_string_compact()))
                .collect();
            rs.insert(u.to_string(), cols);
        }
        out.insert(t.to_string(), rs);
    }
    out
}

fn str_at<'a>(j: &'a Json, key: &str) -> Option<&'a str> {
    j.get(key).and_then(Json::as_str)
}

/// `show --json` holds the rows `ovsdb-tool query` selects from the same
/// database (clustered files: at the index asked, cut there and made
/// standalone), and the facts `ovsdb-tool` gives of the file.
#[test]
fn show_json_rows_and_facts_equal_ovsdb_tool() {
    if !ovs_tools("show_json_rows_and_facts_equal_ovsdb_tool") {
        return;
    }
    let mut files: Vec<PathBuf> = CLUSTERS.iter().map(|c| sample_path(c, "s1")).collect();
    files.push(sample_path("standalone", "nb"));
    files.push(external("devstack-kherox/conf.db"));
    files.push(external("ovn-fake-multinode-flaviof/ovnnb_db.db"));
    for f in &files {
        let what = f.display().to_string();
        let dir = TempDir::new("showjson");
        let j = parse(&ours_ok(&["show", "--json", &what])).unwrap();
        assert_eq!(str_at(&j, "path"), Some(what.as_str()));
        assert_eq!(str_at(&j, "database"), Some(db_name(f).as_str()), "{what}");
        // db-version reads standalone files only.
        let copy = standalone_copy(&dir, f);
        let version = tool(&["db-version", copy.to_str().unwrap()]);
        let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
        assert_eq!(
            str_at(&j, "schema_version"),
            Some(version.as_str()),
            "{what}"
        );
        let format = if is_clustered(f) {
            "clustered"
        } else {
            "standalone"
        };
        assert_eq!(str_at(&j, "format"), Some(format), "{what}");
        assert_eq!(j.get("error"), Some(&Json::Null), "{what}");
        assert_eq!(j.get("at"), Some(&Json::Null), "{what}");
        // The default, the last committed entry: every entry of these files.
        let want = query_all(&copy);
        assert!(
            json_tables(j.get("tables").unwrap()) == want,
            "{what}: rows differ from ovsdb-tool query"
        );
        // An index in the middle.
        let Some(Json::Integer(last)) = j.get("index") else {
            panic!("{what}: no index")
        };
        let mid = (*last as u64).div_ceil(2).max(1);
        let j = parse(&ours_ok(&[
            "show",
            "--json",
            "--at",
            &mid.to_string(),
            &what,
        ]))
        .unwrap();
        if j.get("index") != Some(&Json::Integer(mid as i64)) {
            // A compacted file starts later: its first index is shown.
            assert!(
                matches!(j.get("index"), Some(Json::Integer(i)) if *i as u64 > mid),
                "{what}: {:?}",
                j.get("index")
            );
            continue;
        }
        let want = query_all(&cut_at(&dir, f, mid, "mid"));
        assert!(
            json_tables(j.get("tables").unwrap()) == want,
            "{what} --at {mid}: rows differ from ovsdb-tool query"
        );
    }
}

/// A damaged file still gives its JSON: the rows read before the damage
/// (those of the sound file at the index reached), the error where the
/// text output's error line puts it, exit code 1; input that is no
/// database gives null tables and exit code 2.
#[test]
fn show_json_of_damaged_input_keeps_what_was_read_and_the_exit_codes() {
    let dir = TempDir::new("showjson-damaged");
    let good = sample_path("leader-failover", "s1");
    let mut bytes = std::fs::read(&good).unwrap();
    let n = bytes.len() / 2;
    bytes[n] ^= 0x20;
    let damaged = dir.path("mid.db");
    std::fs::write(&damaged, &bytes).unwrap();
    let d = damaged.display().to_string();
    let o = ours(&["show", "--json", &d]);
    assert_eq!(o.status.code(), Some(1));
    let j = parse(&o.stdout).unwrap();
    let e = j.get("error").unwrap();
    let (Some(Json::Integer(rec)), Some(Json::Integer(off))) = (e.get("record"), e.get("offset"))
    else {
        panic!("{e:?}")
    };
    // The text form names the same place.
    let text = ours(&["show", &d]);
    assert_eq!(text.status.code(), Some(1));
    let err = String::from_utf8_lossy(&text.stderr);
    assert!(
        err.contains(&format!("record {rec} at byte offset {off}: ")),
        "{err} vs {e:?}"
    );
    assert!(err.contains(str_at(e, "reason").unwrap()), "{err}");
    // The offset lies in that record of the file.
    let sound_bytes = std::fs::read(&good).unwrap();
    let (start, end, _) = records(&sound_bytes)[*rec as usize];
    assert!(
        (start..end).contains(&(*off as usize)),
        "{start}..{end}: {off}"
    );
    let Some(Json::Integer(index)) = j.get("index") else {
        panic!("no index")
    };
    let sound = parse(&ours_ok(&[
        "show",
        "--json",
        "--at",
        &index.to_string(),
        &good.display().to_string(),
    ]))
    .unwrap();
    assert_eq!(j.get("tables"), sound.get("tables"));
    // Not a database at all.
    let garbage = dir.path("garbage.db");
    std::fs::write(&garbage, b"\x00\x01binary, not OVSDB\n").unwrap();
    let o = ours(&["show", "--json", &garbage.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    let j = parse(&o.stdout).unwrap();
    assert_eq!(j.get("tables"), Some(&Json::Null));
    assert_eq!(j.get("database"), Some(&Json::Null));
    let e = j.get("error").unwrap();
    assert_eq!(e.get("record"), Some(&Json::Integer(0)));
    assert_eq!(e.get("offset"), Some(&Json::Integer(0)));
}
