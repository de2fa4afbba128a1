//! `inspect --json`: every key issue 3 lists, on clustered samples and on the
//! standalone samples, with the values checked against sources that do not
//! go through `ovsdb_log::summarize`: the file size from the file system,
//! the counts recorded from the real ovsdb-server run in
//! `tests/fixtures/samples/*/facts.json`, a minimal framing walk written
//! here, and the sizes of the files that `convert` writes.

mod common;
use common::*;
use ovsdb::json::{parse, Json};

const FILE_KEYS: &[&str] = &[
    "path",
    "format",
    "database",
    "server_id",
    "cluster_id",
    "local_address",
    "records",
    "record_kinds",
    "terms",
    "snapshot_index",
    "last_index",
    "commit_index",
    "leaders",
    "votes",
    "bytes",
    "entry_bytes",
    "truncated",
];
const CLUSTERED_KINDS: &[&str] = &[
    "header",
    "entry",
    "term",
    "vote",
    "leader",
    "commit_index",
    "note",
];

fn facts(scen: &str) -> Json {
    let p = repo_root().join(format!("tests/fixtures/samples/{scen}/facts.json"));
    parse(&std::fs::read(&p).unwrap()).unwrap()
}

fn int(j: &Json) -> i64 {
    j.as_i64().unwrap_or_else(|| panic!("not an integer: {j}"))
}

fn inspect_one(path: &str) -> Json {
    let o = ours(&["inspect", "--json", path]);
    assert!(
        o.status.success(),
        "{path}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j = parse(&o.stdout).unwrap();
    let files = j.get("files").unwrap().as_array().unwrap();
    assert_eq!(files.len(), 1);
    files[0].clone()
}

/// `[{"term":T, key:SID}]` as (T, SID) pairs, in order.
fn pairs(j: &Json, key: &str) -> Vec<(i64, String)> {
    j.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                int(e.get("term").unwrap()),
                e.get(key).unwrap().as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// One framed record: (total bytes incl. header line, body).
fn frames(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let nl = at + bytes[at..].iter().position(|&b| b == b'\n').unwrap();
        let line = std::str::from_utf8(&bytes[at..nl]).unwrap();
        // "OVSDB <MAGIC> <len> <sha1>"
        let len: usize = line.split(' ').nth(2).unwrap().parse().unwrap();
        let body = &bytes[nl + 1..nl + 1 + len];
        out.push((nl + 1 + len - at, body));
        at = nl + 1 + len;
    }
    out
}

/// `convert --to MODE` into a temp file; its size.
fn converted_size(dir: &TempDir, path: &str, mode: &str) -> u64 {
    let out = dir.path(&format!("{mode}.db"));
    let o = ours(&["convert", "--to", mode, path, &out.display().to_string()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::metadata(&out).unwrap().len()
}

/// Key set and the values every format shares.
fn check_common(f: &Json, path: &str, file_facts: &Json, dir: &TempDir) -> u64 {
    let keys: Vec<&str> = f.as_object().unwrap().keys().collect();
    for k in FILE_KEYS {
        assert!(keys.contains(k), "{path}: key {k} missing in {keys:?}");
    }
    assert_eq!(f.get("path").unwrap().as_str(), Some(path));
    let size = std::fs::metadata(path).unwrap().len();
    assert_eq!(int(f.get("bytes").unwrap()) as u64, size, "{path}: bytes");
    assert_eq!(
        int(file_facts.get("size_bytes").unwrap()) as u64,
        size,
        "{path}: facts.json size"
    );
    assert_eq!(
        f.get("records"),
        file_facts.get("records"),
        "{path}: records"
    );
    assert!(f.get("truncated").unwrap().is_null(), "{path}");

    // entry_bytes: stored is the framed size of the data-carrying records
    // (counted here), full/diff are what `convert` writes (header and
    // Raft records unchanged, so the size difference is the entries').
    let eb = f.get("entry_bytes").unwrap();
    let ek: Vec<&str> = eb.as_object().unwrap().keys().collect();
    assert_eq!(ek, ["stored", "full", "diff"], "{path}");
    let stored = int(eb.get("stored").unwrap()) as u64;
    for mode in ["full", "diff"] {
        let m = int(eb.get(mode).unwrap()) as u64;
        assert_eq!(
            converted_size(dir, path, mode),
            size - stored + m,
            "{path}: entry_bytes.{mode} vs convert --to {mode}"
        );
    }
    stored
}

#[test]
fn inspect_json_keys_and_values_on_clustered_samples() {
    let dir = TempDir::new("inspect-json");
    // leader-failover: a term-only record, votes, two leaders;
    // membership: note records; compacted s1: a snapshot past index 1.
    for (scen, stem) in [
        ("leader-failover", "s1"),
        ("membership", "s1"),
        ("compacted", "s1"),
        ("election-timer", "s2"),
    ] {
        let path = sample_path(scen, stem).display().to_string();
        let ff = facts(scen);
        let fx = ff.get("files").unwrap().get(&format!("{stem}.db")).unwrap();
        let h = fx.get("header").unwrap();
        let f = inspect_one(&path);
        let stored = check_common(&f, &path, fx, &dir);

        assert_eq!(f.get("format").unwrap().as_str(), Some("clustered"));
        assert_eq!(f.get("database"), ff.get("database"), "{path}");
        assert_eq!(f.get("server_id"), h.get("server_id"), "{path}");
        assert_eq!(f.get("cluster_id"), h.get("cluster_id"), "{path}");
        assert_eq!(f.get("local_address"), h.get("local_address"), "{path}");

        let kinds = f.get("record_kinds").unwrap();
        let names: Vec<&str> = kinds.as_object().unwrap().keys().collect();
        assert_eq!(names, CLUSTERED_KINDS, "{path}");
        let fk = fx.get("record_kinds").unwrap();
        assert_eq!(int(kinds.get("header").unwrap()), 1, "{path}");
        for (ours_name, facts_name) in [
            ("entry", "entry"),
            ("term", "term_only"),
            ("vote", "vote"),
            ("leader", "leader"),
            ("commit_index", "commit_index"),
            ("note", "note"),
        ] {
            assert_eq!(
                kinds.get(ours_name),
                fk.get(facts_name),
                "{path}: record_kinds.{ours_name}"
            );
        }
        let total: i64 = CLUSTERED_KINDS
            .iter()
            .map(|k| int(kinds.get(k).unwrap()))
            .sum();
        assert_eq!(total, int(f.get("records").unwrap()), "{path}");

        assert_eq!(f.get("terms"), fx.get("terms_seen"), "{path}: terms");
        assert_eq!(
            f.get("snapshot_index"),
            h.get("prev_index"),
            "{path}: snapshot_index"
        );
        assert_eq!(
            f.get("last_index"),
            fx.get("last_entry_index"),
            "{path}: last_index"
        );
        assert_eq!(
            f.get("commit_index"),
            fx.get("max_commit_index_record"),
            "{path}: commit_index"
        );
        assert_eq!(
            pairs(f.get("leaders").unwrap(), "leader"),
            pairs(fx.get("leader_records").unwrap(), "leader"),
            "{path}: leaders"
        );
        assert_eq!(
            pairs(f.get("votes").unwrap(), "vote"),
            pairs(fx.get("votes").unwrap(), "vote"),
            "{path}: votes"
        );
        for (list, key) in [("leaders", "leader"), ("votes", "vote")] {
            for e in f.get(list).unwrap().as_array().unwrap() {
                let k: Vec<&str> = e.as_object().unwrap().keys().collect();
                assert_eq!(k, ["term", key], "{path}: {list}");
            }
        }

        // Framing walk: record count, and the data-carrying entries'
        // count (facts) and framed size (stored).
        let bytes = std::fs::read(&path).unwrap();
        let fr = frames(&bytes);
        assert_eq!(fr.len() as i64, int(f.get("records").unwrap()));
        let with_data: Vec<usize> = fr[1..]
            .iter()
            .filter(|(_, body)| {
                let j = parse(body).unwrap();
                j.get("index").is_some() && j.get("data").is_some_and(|d| !d.is_null())
            })
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(
            Some(with_data.len() as i64),
            fk.get("entry_with_data").and_then(Json::as_i64),
            "{path}: entries with data"
        );
        assert_eq!(
            with_data.iter().sum::<usize>() as u64,
            stored,
            "{path}: entry_bytes.stored"
        );
    }
}

#[test]
fn inspect_json_keys_and_values_on_standalone_samples() {
    let dir = TempDir::new("inspect-json-sa");
    let ff = facts("standalone");
    for stem in ["nb", "ls-add-follower-s1.cluster-to-standalone"] {
        let path = sample_path("standalone", stem).display().to_string();
        let fx = ff.get("files").unwrap().get(&format!("{stem}.db")).unwrap();
        let f = inspect_one(&path);
        let stored = check_common(&f, &path, fx, &dir);

        assert_eq!(f.get("format").unwrap().as_str(), Some("standalone"));
        assert_eq!(f.get("database"), fx.get("schema_name"), "{path}");
        for k in ["server_id", "cluster_id", "local_address"] {
            assert!(f.get(k).unwrap().is_null(), "{path}: {k}");
        }
        let kinds = f.get("record_kinds").unwrap();
        let names: Vec<&str> = kinds.as_object().unwrap().keys().collect();
        assert_eq!(names, ["schema", "txn"], "{path}");
        assert_eq!(int(kinds.get("schema").unwrap()), 1);
        assert_eq!(kinds.get("txn"), fx.get("transactions"), "{path}");
        assert_eq!(f.get("terms"), Some(&Json::Array(vec![])));
        assert_eq!(f.get("leaders"), Some(&Json::Array(vec![])));
        assert_eq!(f.get("votes"), Some(&Json::Array(vec![])));
        for k in ["snapshot_index", "last_index", "commit_index"] {
            assert!(f.get(k).unwrap().is_null(), "{path}: {k}");
        }
        // Every record after the schema is a transaction.
        let bytes = std::fs::read(&path).unwrap();
        let fr = frames(&bytes);
        assert_eq!(fr.len() as i64, int(f.get("records").unwrap()));
        let txn_bytes: usize = fr[1..].iter().map(|(n, _)| n).sum();
        assert_eq!(txn_bytes as u64, stored, "{path}: entry_bytes.stored");
    }
}

/// The web's JSON export (`timeline`'s `inspect_json`, built by the load walk
/// the worker runs) is the CLI's `inspect --json` document byte for byte: one
/// file of a cluster (cluster `null`), a whole cluster, one standalone file
/// and two standalone files (a cluster object naming the problem).
#[test]
fn the_web_export_is_the_cli_document_byte_for_byte() {
    let s = |scen: &str, stem: &str| sample_path(scen, stem).display().to_string();
    let cases: Vec<Vec<String>> = vec![
        vec![s("leader-failover", "s2")],
        (1..=3).map(|i| s("compacted", &format!("s{i}"))).collect(),
        vec![s("standalone", "nb")],
        vec![s("standalone", "nb"), s("election-timer", "s1")],
    ];
    for files in cases {
        let args: Vec<&str> = ["inspect", "--json"]
            .into_iter()
            .chain(files.iter().map(String::as_str))
            .collect();
        let o = ours(&args);
        let cli = String::from_utf8(o.stdout).unwrap();
        let bytes: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
        let named: Vec<(&str, &[u8])> = files
            .iter()
            .map(String::as_str)
            .zip(bytes.iter().map(Vec::as_slice))
            .collect();
        let web = timeline::build_timeline(&named, &mut |_| {})
            .cluster
            .inspect_json;
        assert_eq!(cli.trim_end(), web, "{files:?}");
    }
}
