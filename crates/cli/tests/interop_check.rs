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
        assert_eq!(damaged.len(), 4);
        for (name, set) in damaged {
            let dir = TempDir::new(name);
            let mut paths = Vec::new();
            for (f, b) in &set {
                let p = dir.path(f);
                std::fs::write(&p, b).unwrap();
                paths.push(p.display().to_string());
            }
            let (o, c, text) = verdicts(&paths);
            assert_ne!(
                c, 0,
                "{scen}/{name}: check-cluster accepted the damage\n{text}"
            );
            assert_eq!(o, 1, "{scen}/{name}: ours\n{text}");
            eprintln!("{scen}/{name}: both reject\n{text}");
        }
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
