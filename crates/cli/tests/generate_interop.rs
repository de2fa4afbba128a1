//! `ovsdb-scope generate southbound` writes files the real tools accept:
//! `ovsdb-tool check-cluster` passes them, and the database the real
//! `ovsdb-tool` reads from them (through `cluster-to-standalone`) has the
//! rows we replay, table by table.

mod common;
use common::*;

fn row_counts_ours(path: &str) -> Vec<(String, usize)> {
    let o = ours(&["dump", path]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let mut v: Vec<(String, usize)> = text
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("table ")?;
            let (name, n) = rest.split_once(" (")?;
            Some((name.to_string(), n.trim_end_matches(" rows)").parse().ok()?))
        })
        .collect();
    v.sort();
    v
}

fn row_count_real(db: &str, table: &str) -> usize {
    let q = format!(
        r#"["OVN_Southbound",{{"op":"select","table":"{table}","where":[],"columns":["_uuid"]}}]"#
    );
    let o = tool(&["query", db, &q]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .matches("\"_uuid\"")
        .count()
}

#[test]
fn generated_southbound_passes_check_cluster_and_replays_like_ovsdb_tool() {
    if !ovs_tools("generated_southbound_passes_check_cluster_and_replays_like_ovsdb_tool") {
        return;
    }
    for full in [false, true] {
        let dir = TempDir::new(if full { "gen-sb-full" } else { "gen-sb-diff" });
        let out = dir.path("");
        let out = out.to_str().unwrap();
        let mut args = vec![
            "generate",
            "southbound",
            out,
            "--chassis",
            "12",
            "--datapaths",
            "6",
            "--ports-per-datapath",
            "5",
            "--flows-per-datapath",
            "30",
            "--entries",
            "150",
        ];
        if full {
            args.push("--full");
        }
        let g = ours(&args);
        assert!(g.status.success(), "{}", String::from_utf8_lossy(&g.stderr));
        let files: Vec<String> = (1..=3)
            .map(|i| dir.path(&format!("s{i}.db")).display().to_string())
            .collect();
        let mut c = vec!["check-cluster"];
        c.extend(files.iter().map(String::as_str));
        let r = tool(&c);
        assert!(
            r.status.success(),
            "check-cluster: {}{}",
            String::from_utf8_lossy(&r.stdout),
            String::from_utf8_lossy(&r.stderr)
        );
        let mut ch = vec!["check"];
        ch.extend(files.iter().map(String::as_str));
        assert!(ours(&ch).status.success());
        let standalone = dir.path("standalone.db").display().to_string();
        let r = tool(&["cluster-to-standalone", &standalone, &files[0]]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let counts = row_counts_ours(&files[0]);
        assert_eq!(counts.len(), 5, "{counts:?}");
        for (table, n) in &counts {
            assert_eq!(row_count_real(&standalone, table), *n, "{table}");
        }
        // The snapshot's Logical_Flow rows: 6 datapaths x 30 flows, kept
        // constant by the entries (each adds as many flows as it removes).
        assert!(
            counts.contains(&("Logical_Flow".to_string(), 180)),
            "{counts:?}"
        );
    }
}
