//! The findings against the ground truth of the real incidents: each
//! scenario of `tests/fixtures/incidents/` was caused on purpose on real
//! ovsdb-server 3.1 clusters, and its `facts.json` records what was caused
//! and when (UTC ms). The calm samples of `tests/fixtures/samples/` must give
//! no incident findings.

use std::path::{Path, PathBuf};

use evidence::collect::{Collector, Limits};
use evidence::diagnose::{diagnose, Diagnosis};
use evidence::findings::{Finding, Knobs};
use ovsdb::json::Json;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn facts(scenario: &str) -> Json {
    let p = root().join(format!("tests/fixtures/incidents/{scenario}/facts.json"));
    ovsdb::json::parse(&std::fs::read(p).unwrap()).unwrap()
}

/// Diagnoses the given files (paths relative to the repo root).
fn diagnose_files(files: &[PathBuf]) -> Diagnosis {
    let mut c = Collector::new(Limits::default());
    for f in files {
        let bytes = std::fs::read(f).unwrap();
        c.add(&f.to_string_lossy(), &mut &bytes[..]);
    }
    diagnose(c.finish(), &Knobs::default(), &mut |_| {})
}

/// The servers' database files, logs and final cluster/status of a folder.
fn scenario_inputs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            n.ends_with(".db")
                || n.ends_with(".ovsdb-server.log")
                || n.ends_with(".cluster-status.txt")
                || n.ends_with(".memory-show.txt")
        })
        .collect();
    out.sort();
    out
}

fn incident(scenario: &str) -> Diagnosis {
    diagnose_files(&scenario_inputs(
        &root().join(format!("tests/fixtures/incidents/{scenario}")),
    ))
}

fn short_of(facts: &Json, name: &str) -> String {
    facts
        .get("servers")
        .and_then(|s| s.get(name))
        .and_then(|s| s.get("cluster_status_at_end"))
        .and_then(|s| s.get("server_id_short"))
        .and_then(Json::as_str)
        .unwrap_or_else(|| panic!("no short id of {name} in facts"))
        .to_string()
}

fn int(j: &Json, path: &[&str]) -> i64 {
    let mut v = j;
    for p in path {
        v = v.get(p).unwrap_or_else(|| panic!("no {p} in {path:?}"));
    }
    v.as_i64()
        .unwrap_or_else(|| panic!("{path:?} is not an integer"))
}

/// The first fault of `kind` the incident's facts record as injected.
fn injected<'a>(facts: &'a Json, kind: &str) -> &'a Json {
    facts
        .get("injected")
        .and_then(Json::as_array)
        .and_then(|a| {
            a.iter()
                .find(|i| i.get("kind").and_then(Json::as_str) == Some(kind))
        })
        .unwrap_or_else(|| panic!("no {kind} among the injected faults"))
}

fn of_kind<'a>(d: &'a Diagnosis, kind: &str) -> Vec<&'a Finding> {
    d.findings.iter().filter(|f| f.kind == kind).collect()
}

fn describe(d: &Diagnosis) -> String {
    d.findings
        .iter()
        .map(|f| {
            format!(
                "{} {} {:?} {:?} {}",
                f.kind,
                d.server_short(f),
                f.time_ms,
                f.cause,
                f.summary
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn leader_pause_is_a_stopped_process_then_a_leader_change() {
    let f = facts("leader-pause");
    let d = incident("leader-pause");
    let all = describe(&d);
    let inj = &f.get("injected").unwrap().as_array().unwrap()[0];
    let paused = short_of(&f, inj.get("server").unwrap().as_str().unwrap());
    let stop = int(inj, &["pause", "stop_utc_ms"]);
    let actual = int(inj, &["pause", "actual_ms"]) as f64;
    let polls = of_kind(&d, "long-poll");
    let p = polls
        .iter()
        .find(|p| d.server_short(p) == paused)
        .unwrap_or_else(|| panic!("no long-poll on {paused}:\n{all}"));
    assert_eq!(p.cause.as_deref(), Some("process-stopped"), "{all}");
    assert!((p.time_ms.unwrap() - stop).abs() <= 1000, "{all}");
    let dur = p.duration_ms.unwrap() as f64;
    assert!((dur - actual).abs() <= 0.2 * actual, "{dur} vs {actual}");
    // Followed by the leader change to the server observed after the pause.
    let after = f
        .get("leaders_observed")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l.get("label").and_then(Json::as_str) == Some("after_pause"))
        .unwrap();
    let new_leader = after.get("sid").unwrap().as_str().unwrap();
    let c = of_kind(&d, "leader-change");
    let c = c
        .iter()
        .find(|c| c.to.as_deref() == Some(new_leader))
        .unwrap_or_else(|| panic!("no leader change to {new_leader}:\n{all}"));
    assert_eq!(c.from.as_deref(), Some(paused.as_str()));
    assert_eq!(c.term, Some(int(after, &["term"]) as u64));
    assert_eq!(c.cause.as_deref(), Some("leader-stopped"), "{all}");
    assert!(c.time_ms.unwrap() >= p.time_ms.unwrap());
    assert!(c.time_ms.unwrap() <= int(after, &["utc_ms"]));
    assert!(d.exit_code() == 1);
}

#[test]
fn election_storm_every_pause_is_a_leader_change_and_a_storm() {
    let f = facts("election-storm");
    let d = incident("election-storm");
    let all = describe(&d);
    let changes = of_kind(&d, "leader-change");
    for inj in f.get("injected").unwrap().as_array().unwrap() {
        let who = short_of(&f, inj.get("server").unwrap().as_str().unwrap());
        let stop = int(inj, &["pause", "stop_utc_ms"]);
        let cont = int(inj, &["pause", "cont_utc_ms"]);
        let c = changes
            .iter()
            .find(|c| {
                c.from.as_deref() == Some(who.as_str())
                    && c.time_ms.is_some_and(|t| t >= stop && t <= cont + 1000)
            })
            .unwrap_or_else(|| {
                panic!("no leader change away from {who} during {stop}..{cont}:\n{all}")
            });
        assert_eq!(c.cause.as_deref(), Some("leader-unreachable"), "{all}");
    }
    let storms = of_kind(&d, "election-storm");
    assert_eq!(storms.len(), 1, "{all}");
    let n_changes = int(&f, &["storm", "leader_changes"]) as usize;
    assert!(storms[0].evidence.len() >= n_changes, "{all}");
}

#[test]
fn automatic_compaction_transfers_leadership() {
    let f = facts("compaction-auto-transfer");
    let d = incident("compaction-auto-transfer");
    let all = describe(&d);
    let lines = f
        .get("auto")
        .unwrap()
        .get("transfer_lines")
        .unwrap()
        .as_str()
        .unwrap();
    let changes = of_kind(&d, "leader-change");
    let transfers = of_kind(&d, "compaction-transfer");
    let mut n = 0;
    for l in lines.lines() {
        // "s1.log:2026-12-01T19:28:19.784Z|00024|raft|INFO|Transferring ..."
        let (file, line) = l.split_once(':').unwrap();
        let name = file.trim_end_matches(".log");
        let who = short_of(&f, name);
        let t = evidence::log::parse_line(line.as_bytes()).unwrap().time_ms;
        let tr = transfers
            .iter()
            .find(|x| d.server_short(x) == who && (x.time_ms.unwrap() - t).abs() <= 1000)
            .unwrap_or_else(|| panic!("no compaction-transfer on {who} at {t}:\n{all}"));
        assert_eq!(tr.severity.name(), "info");
        let c = changes
            .iter()
            .find(|c| {
                c.from.as_deref() == Some(who.as_str()) && (c.time_ms.unwrap() - t).abs() <= 1000
            })
            .unwrap_or_else(|| panic!("no leader change from {who} at {t}:\n{all}"));
        assert_eq!(c.cause.as_deref(), Some("snapshot-transfer"), "{all}");
        n += 1;
    }
    assert_eq!(n, 2);
}

#[test]
fn manual_compaction_moves_no_leader() {
    let d = incident("compaction-transfer");
    let all = describe(&d);
    assert!(of_kind(&d, "leader-change").is_empty(), "{all}");
    assert!(of_kind(&d, "compaction-transfer").is_empty(), "{all}");
}

#[test]
fn follower_that_needed_a_snapshot() {
    let f = facts("follower-catchup-snapshot");
    let d = incident("follower-catchup-snapshot");
    let all = describe(&d);
    let killed = injected(&f, "SIGKILL");
    let who = short_of(&f, killed.get("server").unwrap().as_str().unwrap());
    let restart = int(&f, &["catchup", "restart_utc_ms"]);
    let s = of_kind(&d, "snapshot-install");
    assert_eq!(s.len(), 1, "{all}");
    let s = s[0];
    assert_eq!(d.server_short(s), who);
    assert!((s.time_ms.unwrap() - restart).abs() <= 1000, "{all}");
    // How far: the snapshot's index against where the killed log ended.
    let start_after = int(&f, &["catchup", "leader_log_start_after_compact"]) as u64;
    assert_eq!(s.index, Some(start_after - 1));
    // The restarted member's file was replaced by the snapshot and both other
    // files were compacted, so no file says where its log ended before: the
    // lag in entries is honestly unknown here (facts: killed_log_end).
    assert_eq!(s.cause.as_deref(), Some("lag unknown"));
    // How long: from the kill to the install.
    let kill = int(killed, &["utc_ms"]);
    let dur = s.duration_ms.unwrap() as i64;
    assert!((dur - (s.time_ms.unwrap() - kill)).abs() <= 1000, "{all}");
}

#[test]
fn southbound_memory_growth() {
    let f = facts("sb-memory");
    let d = incident("sb-memory");
    let all = describe(&d);
    let grew = of_kind(&d, "memory-growth");
    let lines = f.get("log_lines_of_interest").unwrap().as_object().unwrap();
    let mut expected = 0;
    for (name, v) in lines.iter() {
        let who = short_of(&f, name);
        for l in v.get("memory").and_then(Json::as_array).unwrap_or(&[]) {
            let l = l.as_str().unwrap();
            if !l.contains(" grew ") {
                continue;
            }
            expected += 1;
            let t = evidence::log::parse_line(l.as_bytes()).unwrap().time_ms;
            assert!(
                grew.iter().any(|g| d.server_short(g) == who
                    && g.evidence.iter().any(|_| true)
                    && (g.time_ms.unwrap() + g.duration_ms.unwrap() as i64 - t).abs() <= 1000),
                "no memory-growth on {who} at {t}:\n{all}"
            );
        }
    }
    assert!(expected > 0);
    assert_eq!(grew.len(), expected, "{all}");
}

#[test]
fn calm_samples_give_no_incident_findings() {
    for scen in [
        "ls-add-follower",
        "acl-portgroup-diff",
        "acl-portgroup-full",
        "election-timer",
        "standalone",
        "sb-scale",
    ] {
        let mut files = scenario_inputs(&root().join(format!("tests/fixtures/samples/{scen}")));
        let dbs = std::fs::read_dir(root().join(format!("static/samples/{scen}"))).unwrap();
        files.extend(dbs.filter_map(|e| e.ok().map(|e| e.path())));
        let d = diagnose_files(&files);
        let all = describe(&d);
        for k in [
            "election-storm",
            "long-poll",
            "probe-disconnect",
            "reconnect-loop",
        ] {
            assert!(of_kind(&d, k).is_empty(), "{scen}: {k}\n{all}");
        }
    }
}

#[test]
fn no_quorum_left_gives_recovery_advice() {
    let f = facts("no-quorum");
    let d = incident("no-quorum");
    let all = describe(&d);
    let kill = &f.get("injected").unwrap().as_array().unwrap()[0];
    let t_kill = int(kill, &["utc_ms"]);
    // The survivor names itself in the first line of its cluster/status.
    let status = std::fs::read_to_string(
        root().join("tests/fixtures/incidents/no-quorum/s1.cluster-status.txt"),
    )
    .unwrap();
    let survivor = status.lines().next().unwrap().trim().to_string();
    let rec = of_kind(&d, "recovery");
    assert_eq!(rec.len(), 1, "{all}");
    assert_eq!(
        d.server_short(rec[0]),
        survivor,
        "the running server's file, on a tie"
    );
    assert_eq!(rec[0].severity.name(), "error");
    let lane = &d.timeline.lanes[d.servers[rec[0].server.unwrap()].lane.unwrap()];
    assert_eq!(rec[0].index, lane.summary.commit_index);
    let unresolved = of_kind(&d, "leaderless");
    assert!(
        unresolved
            .iter()
            .any(|l| l.cause.as_deref() == Some("unresolved")),
        "{all}"
    );
    // The survivor's attempts to reach the killed peers are refused: they
    // are down (to the end of the logs), not flapping.
    assert!(of_kind(&d, "reconnect-loop").is_empty(), "{all}");
    let down = of_kind(&d, "peer-down");
    assert_eq!(down.len(), 2, "{all}");
    let mut killed: Vec<String> = down.iter().map(|p| d.server_short(p)).collect();
    killed.sort();
    let mut want: Vec<String> = ["s2", "s3"]
        .iter()
        .map(|s| {
            d.servers
                .iter()
                .find(|x| x.name == *s)
                .unwrap()
                .short
                .clone()
        })
        .collect();
    want.sort();
    assert_eq!(killed, want, "{all}");
    for p in down {
        assert!((p.time_ms.unwrap() - t_kill).abs() <= 1000, "{all}");
        assert_eq!(p.cause.as_deref(), Some("connection refused"));
        assert!(p.summary.contains("until the logs end"), "{}", p.summary);
        assert!(p
            .evidence
            .iter()
            .all(|r| d.servers[r.server].short == survivor));
    }
    assert_eq!(d.exit_code(), 1);
}

#[test]
fn a_log_that_never_names_its_server_is_matched_by_the_peers_it_dials() {
    let dir = root().join("tests/fixtures/incidents/leader-pause");
    let log = std::fs::read_to_string(dir.join("s3.ovsdb-server.log")).unwrap();
    // What a rotated-away start leaves: no "local server ID" line.
    let cut: String = log
        .lines()
        .filter(|l| !l.contains("local server ID is"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(cut.len() < log.len());
    let mut c = Collector::new(Limits::default());
    for s in ["s1", "s2", "s3"] {
        let p = dir.join(format!("{s}.db"));
        c.add_bytes(&p.to_string_lossy(), &std::fs::read(&p).unwrap());
    }
    c.add_bytes("elsewhere/unnamed.log", cut.as_bytes());
    let d = diagnose(c.finish(), &Knobs::default(), &mut |_| {});
    let f = facts("leader-pause");
    let want = short_of(&f, "s3");
    let used = d
        .inputs
        .iter()
        .find(|i| i.path == "elsewhere/unnamed.log")
        .expect("the log is used");
    let k = used.server.expect("matched to a server");
    assert_eq!(d.servers[k].short, want);
}

#[test]
fn evidence_lines_are_the_servers_own_lines() {
    for scen in [
        "leader-pause",
        "election-storm",
        "follower-catchup-snapshot",
        "no-quorum",
    ] {
        let d = incident(scen);
        let mut checked = 0;
        for f in &d.findings {
            // Each line once in a finding.
            let mut lines = f.evidence.clone();
            lines.sort();
            lines.dedup();
            assert_eq!(lines.len(), f.evidence.len(), "{scen}: {f:?}");
            for r in &f.evidence {
                let s = &d.servers[r.server];
                // One part per server here: its text split by LF, independently.
                let path = root().join(&s.log_parts[0]);
                let text = std::fs::read_to_string(path).unwrap();
                let want = text.lines().nth(r.line as usize).unwrap();
                assert_eq!(s.line_text(r.line).as_deref(), Some(want), "{scen}");
                checked += 1;
            }
        }
        assert!(checked > 0, "{scen}");
    }
}

fn cluster_id_of(facts: &Json) -> String {
    facts
        .get("servers")
        .and_then(|s| s.get("s1"))
        .and_then(|s| s.get("cluster_status_at_end"))
        .and_then(|s| s.get("cluster_id"))
        .and_then(Json::as_str)
        .unwrap()
        .to_string()
}

/// What a finding says, without the indexes that depend on the other inputs.
fn said(d: &Diagnosis, f: &Finding) -> String {
    format!(
        "{} {} {} {:?} {:?} {:?} {}",
        f.kind,
        f.severity.name(),
        d.server_short(f),
        f.time_ms,
        f.term,
        f.cause,
        f.summary
    )
}

#[test]
fn two_clusters_are_analysed_apart() {
    let mut files = scenario_inputs(&root().join("tests/fixtures/incidents/leader-pause"));
    files.extend(scenario_inputs(
        &root().join("tests/fixtures/incidents/election-storm"),
    ));
    let d = diagnose_files(&files);
    let all = describe(&d);
    let pause_id = cluster_id_of(&facts("leader-pause"));
    let storm_id = cluster_id_of(&facts("election-storm"));
    let ids: Vec<&str> = d.clusters.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.contains(&pause_id.as_str()) && ids.contains(&storm_id.as_str()));
    for c in &d.clusters {
        assert_eq!(c.servers.len(), 3);
        assert_eq!(c.database.as_deref(), Some("OVN_Northbound"));
        assert!(c.label().ends_with(" OVN_Northbound"), "{}", c.label());
    }
    // Every finding is about one cluster, and rests on that cluster's lines.
    for f in &d.findings {
        let c = f
            .cluster
            .unwrap_or_else(|| panic!("no cluster: {}", said(&d, f)));
        let members = &d.clusters[c].servers;
        assert!(f.server.is_none_or(|s| members.contains(&s)), "{all}");
        assert!(
            f.evidence.iter().all(|r| members.contains(&r.server)),
            "{all}"
        );
        assert!(!d.cluster_label(f).is_empty());
    }
    // The inputs of each folder belong to that folder's servers, the
    // memory/show of `s1` too (two servers are named s1).
    for i in &d.inputs {
        let s = &d.servers[i.server.unwrap()];
        let c = &d.clusters[s.cluster.unwrap()];
        let want = if i.path.contains("leader-pause") {
            &pause_id
        } else {
            &storm_id
        };
        assert_eq!(&c.id, want, "{}", i.path);
    }
    // Each cluster's findings are what it gives alone: no leader change
    // across clusters, one storm, of the right cluster.
    for (scen, id) in [("leader-pause", &pause_id), ("election-storm", &storm_id)] {
        let alone = incident(scen);
        let mut want: Vec<String> = alone.findings.iter().map(|f| said(&alone, f)).collect();
        let mut got: Vec<String> = d
            .findings
            .iter()
            .filter(|f| &d.clusters[f.cluster.unwrap()].id == id)
            .map(|f| said(&d, f))
            .collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{scen}");
    }
    assert!(
        !d.findings.iter().any(|f| f.kind == "membership-mismatch"),
        "{all}"
    );
    // The JSON names each finding's cluster and database.
    let j = d.to_json();
    for f in j.get("findings").unwrap().as_array().unwrap() {
        assert!(f.get("cluster").and_then(Json::as_str).is_some());
        assert_eq!(
            f.get("database").and_then(Json::as_str),
            Some("OVN_Northbound")
        );
    }
    assert!(d
        .to_text()
        .contains("[1a9e OVN_Northbound] 9 leader changes"));
}

#[test]
fn a_server_with_only_a_log_is_tied_to_the_cluster_that_lists_it() {
    // Both clusters' files but election-storm's s3, and s3's log with every
    // line that names the cluster cut: its server ID, in the configuration
    // of the election-storm files, ties it to that cluster.
    let storm = root().join("tests/fixtures/incidents/election-storm");
    let pause = root().join("tests/fixtures/incidents/leader-pause");
    let mut c = Collector::new(Limits::default());
    for (dir, s) in [
        (&pause, "s1"),
        (&pause, "s2"),
        (&pause, "s3"),
        (&storm, "s1"),
        (&storm, "s2"),
    ] {
        let p = dir.join(format!("{s}.db"));
        c.add_bytes(&p.to_string_lossy(), &std::fs::read(&p).unwrap());
    }
    let log = std::fs::read_to_string(storm.join("s3.ovsdb-server.log")).unwrap();
    let cut: String = log
        .lines()
        .filter(|l| !l.contains("cluster"))
        .map(|l| format!("{l}\n"))
        .collect();
    c.add_bytes("node3/ovsdb-server-nb.log", cut.as_bytes());
    let d = diagnose(c.finish(), &Knobs::default(), &mut |_| {});
    let k = d
        .servers
        .iter()
        .position(|s| s.short == short_of(&facts("election-storm"), "s3"))
        .expect("the log's server");
    let c = d.servers[k].cluster.expect("tied to a cluster");
    assert_eq!(d.clusters[c].id, cluster_id_of(&facts("election-storm")));
}

#[test]
fn a_log_names_its_cluster_in_its_membership_lines() {
    // The first server of a cluster never logs "learned cluster ID": it
    // created the cluster. Its "adding … to cluster 1a9e" lines name it.
    let p = root().join("tests/fixtures/incidents/election-storm/s1.ovsdb-server.log");
    let log = evidence::log::read_log(&std::fs::read(p).unwrap());
    assert_eq!(log.cluster_id.as_deref(), Some("1a9e"));
}

/// Where each record of a database file starts (its `OVSDB CLUSTER`
/// header line).
fn record_starts(bytes: &[u8]) -> Vec<usize> {
    let magic = b"OVSDB CLUSTER ";
    (0..bytes.len().saturating_sub(magic.len()))
        .filter(|&i| &bytes[i..i + magic.len()] == magic && (i == 0 || bytes[i - 1] == b'\n'))
        .collect()
}

/// The latest `"_date"` written in `bytes` (ms since the epoch), read
/// straight from the text.
fn latest_date(bytes: &[u8]) -> Option<i64> {
    let text = String::from_utf8_lossy(bytes);
    text.split("\"_date\":")
        .skip(1)
        .filter_map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .max()
}

fn diagnose_bytes(path: &str, bytes: &[u8]) -> Diagnosis {
    let mut c = Collector::new(Limits::default());
    c.add_bytes(path, bytes);
    diagnose(c.finish(), &Knobs::default(), &mut |_| {})
}

#[test]
fn a_record_damaged_mid_file_is_an_error_naming_record_and_offset() {
    let good = std::fs::read(root().join("static/samples/leader-failover/s1.db")).unwrap();
    let starts = record_starts(&good);
    assert!(starts.len() > 100);
    // Record 77 (the header is record 0): flip bytes in the middle of its body.
    let mut bad = good.clone();
    let (at, next) = (starts[77], starts[78]);
    let body = at + bad[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let mid = body + (next - body) / 2;
    for b in &mut bad[mid..mid + 4] {
        *b ^= 0x55;
    }
    let d = diagnose_bytes("copies/s1.db", &bad);
    let all = describe(&d);
    let dmg = of_kind(&d, "damaged-file");
    assert_eq!(dmg.len(), 1, "{all}");
    let f = dmg[0];
    assert_eq!(f.severity.name(), "error");
    assert!(f.summary.contains("copies/s1.db"), "{}", f.summary);
    assert!(f.summary.contains("record 77 "), "{}", f.summary);
    assert!(
        f.summary.contains(&format!("byte offset {at}:")),
        "{} (record 77 starts at {at})",
        f.summary
    );
    assert!(f.summary.contains("SHA-1"), "{}", f.summary);
    assert!(f.cause.is_some());
    // Dated by the last transaction written before the damaged record.
    assert!(latest_date(&good[..at]).is_some());
    assert_eq!(f.time_ms, latest_date(&good[..at]));
    assert_eq!(d.server_short(f), d.servers[0].short);
    assert_eq!(d.exit_code(), 1);
    // The good file has none.
    let d = diagnose_bytes("copies/s1.db", &good);
    assert!(of_kind(&d, "damaged-file").is_empty(), "{}", describe(&d));
}

#[test]
fn a_file_with_crlf_line_ends_is_listed_unreadable_with_record_and_offset() {
    let good = std::fs::read(root().join("static/samples/standalone/nb.db")).unwrap();
    let mut crlf = Vec::with_capacity(good.len() * 2);
    for &b in &good {
        if b == b'\n' {
            crlf.push(b'\r');
        }
        crlf.push(b);
    }
    let d = diagnose_bytes("copies/nb.db", &crlf);
    assert!(
        d.inputs.iter().all(|i| i.path != "copies/nb.db"),
        "{:?}",
        d.inputs
    );
    let ig = d
        .ignored
        .iter()
        .find(|i| i.path == "copies/nb.db")
        .expect("listed");
    assert!(
        ig.reason
            .starts_with("damaged, unreadable: record 0 at byte offset 0: "),
        "{}",
        ig.reason
    );
    assert!(ig.reason.contains("CR"), "{}", ig.reason);
    assert_eq!(of_kind(&d, "damaged-file").len(), 1, "{}", describe(&d));
    // The good file is used.
    let d = diagnose_bytes("copies/nb.db", &good);
    assert!(
        d.ignored.is_empty() && d.inputs.len() == 1,
        "{:?}",
        d.ignored
    );
}

#[test]
fn a_file_cut_mid_record_is_a_warning_naming_record_and_offset() {
    let good = std::fs::read(root().join("static/samples/leader-failover/s1.db")).unwrap();
    let starts = record_starts(&good);
    let last = *starts.last().unwrap();
    let cut = &good[..good.len() - 20];
    assert!(cut.len() > last);
    let d = diagnose_bytes("copies/s1.db", cut);
    let all = describe(&d);
    let dmg = of_kind(&d, "damaged-file");
    assert_eq!(dmg.len(), 1, "{all}");
    let f = dmg[0];
    assert_eq!(f.severity.name(), "warning");
    // The last record, at the offset where its bytes run out (its header
    // line is whole; its body is not).
    let n = starts.len() - 1;
    let head = format!("copies/s1.db: record {n} at byte offset ");
    let off: usize = f
        .summary
        .strip_prefix(&head)
        .and_then(|r| r.split(':').next())
        .and_then(|o| o.parse().ok())
        .unwrap_or_else(|| panic!("{}", f.summary));
    assert!(
        last <= off && off < cut.len(),
        "{off} not in {last}..{}",
        cut.len()
    );
    assert!(f.summary.contains("truncated"), "{}", f.summary);
    assert_eq!(f.time_ms, latest_date(&good[..last]));
    assert_eq!(d.exit_code(), 1);
}

#[test]
fn a_killed_peer_refusing_connections_is_down_not_a_reconnect_loop() {
    let f = facts("follower-catchup-snapshot");
    let d = incident("follower-catchup-snapshot");
    let all = describe(&d);
    let killed = injected(&f, "SIGKILL");
    let who = short_of(&f, killed.get("server").unwrap().as_str().unwrap());
    let kill = int(killed, &["utc_ms"]);
    let restart = int(&f, &["catchup", "restart_utc_ms"]);
    assert!(of_kind(&d, "reconnect-loop").is_empty(), "{all}");
    let down = of_kind(&d, "peer-down");
    assert_eq!(down.len(), 1, "one span, seen by both others:\n{all}");
    let p = down[0];
    assert_eq!(d.server_short(p), who);
    assert_eq!(p.severity.name(), "warning");
    assert_eq!(p.cause.as_deref(), Some("connection refused"));
    assert!((p.time_ms.unwrap() - kill).abs() <= 1000, "{all}");
    let back = p.time_ms.unwrap() + p.duration_ms.unwrap() as i64;
    assert!((back - restart).abs() <= 1000, "{back} vs {restart}\n{all}");
    assert!(
        p.summary.starts_with(&format!("{who} (tcp:")),
        "{}",
        p.summary
    );
    assert!(p.summary.contains(" to 19:19:25."), "{}", p.summary);
    // Both other servers saw it.
    let observers: std::collections::BTreeSet<usize> =
        p.evidence.iter().map(|r| r.server).collect();
    assert_eq!(observers.len(), 2, "{all}");
}

#[test]
fn paused_peers_that_come_back_each_time_are_a_reconnect_loop() {
    // election-storm: SIGSTOP/SIGCONT; the connections are lost and come
    // back, and no attempt is refused.
    let d = incident("election-storm");
    let all = describe(&d);
    assert!(!of_kind(&d, "reconnect-loop").is_empty(), "{all}");
    assert!(of_kind(&d, "peer-down").is_empty(), "{all}");
}

#[test]
fn one_servers_figures_are_labelled_as_its_view() {
    // The paused server's inputs alone (what its sosreport holds): the
    // cluster was leaderless ~1.5 s, but that server saw 3 s. Its figures
    // are labelled as its own view; with every member's log they are not.
    let dir = root().join("tests/fixtures/incidents/leader-pause");
    let files: Vec<PathBuf> = scenario_inputs(&dir)
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("s1."))
        .collect();
    let one = diagnose_files(&files);
    let all = describe(&one);
    let f = facts("leader-pause");
    let me = short_of(&f, "s1");
    let (s2, s3) = (short_of(&f, "s2"), short_of(&f, "s3"));
    let label = format!(", as {me} saw it (no log of {s2}, {s3})");
    for kind in ["leaderless", "leader-change"] {
        let found = of_kind(&one, kind);
        assert!(!found.is_empty(), "{kind}\n{all}");
        for x in found {
            assert!(x.summary.ends_with(&label), "{}", x.summary);
        }
    }
    // Findings of one server's own log are not relabelled.
    for x in of_kind(&one, "long-poll") {
        assert!(!x.summary.contains(" saw it"), "{}", x.summary);
    }
    let whole = incident("leader-pause");
    for x in &whole.findings {
        assert!(!x.summary.contains(" saw it ("), "{}", x.summary);
    }
}

#[test]
fn database_files_alone_give_each_server_its_last_term() {
    // No log and no cluster/status: the term is the highest a server's own
    // file records (read here straight from the file's text).
    let dir = root().join("tests/fixtures/incidents/no-quorum");
    let files: Vec<PathBuf> = ["s1.db", "s2.db", "s3.db"]
        .iter()
        .map(|f| dir.join(f))
        .collect();
    let d = diagnose_files(&files);
    assert_eq!(d.servers.len(), 3, "{}", describe(&d));
    let mut terms = Vec::new();
    for (s, path) in d.servers.iter().zip(&files) {
        let text = String::from_utf8(std::fs::read(path).unwrap()).unwrap();
        let highest = text
            .split("\"term\":")
            .skip(1)
            .filter_map(|r| {
                let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
                digits.parse::<u64>().ok()
            })
            .max();
        let (role, term) = s.role_term(&d.timeline);
        assert_eq!(role, None, "a file does not say the role");
        assert!(highest.is_some());
        assert_eq!(term, highest, "{}", s.name);
        terms.push(term.unwrap());
    }
    // The text names them too.
    let text = d.to_text();
    for t in terms {
        assert!(text.contains(&format!("term {t}\n")), "{text}");
    }
}

/// A sosreport's server takes the host name of its `etc/hostname`, more
/// readable than the report's folder (`sosreport-ovn-central-1-2026-12-01-
/// incident`), and that file is used, not ignored. The same files unpacked
/// under a folder: named by its `etc/hostname` when it has one that reads
/// as a host name, by the folder otherwise; a file named for its server
/// (`s1.db`) keeps its own name.
#[test]
fn a_sosreport_server_is_named_by_its_hostname() {
    let sos = root().join("tests/fixtures/incidents/must-gather/sosreport-like.tar.xz");
    let d = diagnose_files(&[sos]);
    let names: Vec<&str> = d.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ovn-central-1"]);
    assert!(
        !d.ignored.iter().any(|i| i.path.ends_with("etc/hostname")),
        "{:?}",
        d.ignored
    );

    let pause = root().join("tests/fixtures/incidents/leader-pause");
    let db = std::fs::read(pause.join("s1.db")).unwrap();
    let log = std::fs::read(pause.join("s1.ovsdb-server.log")).unwrap();
    let named = |files: &[(&str, &[u8])]| -> (Vec<String>, usize) {
        let mut c = Collector::new(Limits::default());
        for (p, b) in files {
            c.add(p, &mut &b[..]);
        }
        let d = diagnose(c.finish(), &Knobs::default(), &mut |_| {});
        let names = d.servers.iter().map(|s| s.name.clone()).collect();
        (names, d.ignored.len())
    };
    let node = "collected/sosreport-node1-2026";
    let db_at = format!("{node}/var/lib/ovn/etc/ovnnb_db.db");
    let log_at = format!("{node}/var/log/ovn/ovsdb-server-nb.log");
    let host_at = format!("{node}/etc/hostname");
    let files = [(db_at.as_str(), &db[..]), (log_at.as_str(), &log[..])];
    assert_eq!(named(&files), (vec!["sosreport-node1-2026".to_string()], 0));
    let with = |host: &'static [u8]| {
        let mut v = files.to_vec();
        v.push((host_at.as_str(), host));
        named(&v)
    };
    assert_eq!(
        with(b"node1.example.com\n"),
        (vec!["node1.example.com".to_string()], 0)
    );
    // Not a host name: the folder's name, and the file is ignored.
    assert_eq!(
        with(b"two words\n"),
        (vec!["sosreport-node1-2026".to_string()], 1)
    );
    // Another folder's host name names nothing here.
    let mut v = files.to_vec();
    v.push(("collected/other-node/etc/hostname", b"node2\n"));
    assert_eq!(named(&v).0, ["sosreport-node1-2026"]);
    // A file named for its server keeps its name.
    let own = format!("{node}/s1.db");
    let v = [(own.as_str(), &db[..]), (host_at.as_str(), b"node1\n")];
    assert_eq!(named(&v).0, ["s1"]);
}
