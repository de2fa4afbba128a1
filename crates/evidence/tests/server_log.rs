//! The log reader against every real ovsdb-server 3.1 log in the fixtures,
//! checked with counts made independently of the reader: plain substring
//! counts over the raw lines, and the generator's own facts.json.

use evidence::events::EventKind;
use evidence::log::{join, parse_line, read_log, LogFile, LogScanner};
use evidence::memory::{parse_coverage_show, parse_memory_show};
use evidence::status::parse_cluster_status;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// Every `<folder>/<server>.ovsdb-server.log`, as (folder, server, bytes).
fn logs() -> Vec<(PathBuf, String, Vec<u8>)> {
    let mut out = Vec::new();
    for group in ["incidents", "samples"] {
        let mut dirs: Vec<_> = std::fs::read_dir(fixtures().join(group))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for d in dirs {
            let mut files: Vec<_> = std::fs::read_dir(&d)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            files.sort();
            for f in files {
                let name = f.file_name().unwrap().to_str().unwrap().to_string();
                if let Some(server) = name.strip_suffix(".ovsdb-server.log") {
                    out.push((d.clone(), server.to_string(), std::fs::read(&f).unwrap()));
                }
            }
        }
    }
    assert!(out.len() >= 40, "fixture logs found: {}", out.len());
    out
}

fn facts(dir: &Path) -> Option<Value> {
    let t = std::fs::read_to_string(dir.join("facts.json")).ok()?;
    Some(serde_json::from_str(&t).unwrap())
}

fn text_lines(bytes: &[u8]) -> Vec<&str> {
    std::str::from_utf8(bytes).unwrap().lines().collect()
}

fn count(f: &LogFile, name: &str) -> usize {
    f.events.iter().filter(|e| e.kind.name() == name).count()
}

fn chunked(bytes: &[u8], n: usize) -> LogFile {
    let mut s = LogScanner::new();
    for c in bytes.chunks(n) {
        s.push(c);
    }
    s.finish()
}

#[test]
fn every_line_counted_and_parsed() {
    for (dir, server, bytes) in logs() {
        let f = read_log(&bytes);
        let lf = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        let tail = u64::from(!bytes.is_empty() && *bytes.last().unwrap() != b'\n');
        assert_eq!(f.lines, lf + tail, "{dir:?} {server}");
        assert_eq!(f.index.len() as u64, f.lines);
        assert_eq!(f.unparsed, 0, "{dir:?} {server}");
        assert!(!f.not_text && f.overlong == 0 && f.nul_bytes == 0);
        assert_eq!(f.bytes, bytes.len() as u64);
        assert_eq!(f.level_counts.iter().sum::<u64>(), f.lines);
        // Text read back by offset is the line.
        for (n, line) in text_lines(&bytes).iter().enumerate() {
            assert_eq!(f.line_text(n as u64, &bytes), Some(line.as_bytes()));
            let info = f.index[n];
            let p = parse_line(line.as_bytes()).unwrap();
            assert_eq!(f.module_name(info.module), Some(p.module));
            assert_eq!(info.time_ms, p.time_ms);
        }
        assert!(f.first_ms <= f.last_ms);
        // The generator's own counts (facts.json log_line_counts: wc -l).
        if let Some(c) =
            facts(&dir).and_then(|v| v["log_line_counts"][&server]["total_lines"].as_u64())
        {
            assert_eq!(f.lines, c, "{dir:?} {server}");
        }
    }
}

#[test]
fn chunking_does_not_matter() {
    for (dir, server, bytes) in logs() {
        let whole = read_log(&bytes);
        for n in [1, 7, 4096] {
            assert!(
                chunked(&bytes, n) == whole,
                "{dir:?} {server} chunks of {n}"
            );
        }
    }
}

/// Lines containing `needle`, counted on the raw text.
fn grep(bytes: &[u8], needle: &str) -> usize {
    text_lines(bytes)
        .iter()
        .filter(|l| l.contains(needle))
        .count()
}

#[test]
fn events_match_substring_counts() {
    let pairs: &[(&str, &[&str])] = &[
        ("is leader for term", &["leader-is"]),
        ("starting election", &["election-started"]),
        ("elected leader by", &["election-won"]),
        ("local server ID is", &["local-server-id"]),
        ("learned server ID", &["learned-server-id"]),
        ("learned remote address", &["learned-remote-address"]),
        ("learned cluster ID", &["learned-cluster-id"]),
        ("(Open vSwitch)", &["server-start"]),
        ("connecting...", &["connecting"]),
        (": connected", &["connected"]),
        ("inactivity probe", &["probe-timeout"]),
        ("before reconnect", &["reconnect-wait"]),
        ("Unreasonably long", &["long-poll"]),
        ("CPU usage", &["poll-wakeup"]),
        ("peak resident set size after", &["memory-peak"]),
        ("peak resident set size grew", &["memory-grew"]),
        ("memory|INFO|atoms:", &["memory-counts"]),
        ("sending snapshot to server", &["snapshot-sending"]),
        ("installed snapshot on server", &["snapshot-installed"]),
        ("truncating", &["truncating"]),
        ("Transferring leadership", &["transfer-started"]),
        ("received leadership transfer", &["transfer-received"]),
        ("added to configuration", &["server-added"]),
        ("removed from configuration", &["server-removed"]),
        ("starting to add server", &["adding-server"]),
        ("|adding ", &["add-server-result"]),
        ("to remove itself", &["remove-server-result"]),
        ("starting to leave cluster", &["leaving"]),
        ("finished leaving cluster", &["left"]),
        ("Election timer changed", &["election-timer-changed"]),
        ("by user request", &["compacting"]),
        ("removing database", &["database-removed"]),
        ("rejecting term", &["stale-term"]),
        ("rejecting append_request", &["append-rejected"]),
        ("for unknown command", &["stray-command-reply"]),
        (
            "reconnect|INFO|",
            &[
                "connecting",
                "connected",
                "connection-lost",
                "reconnect-wait",
            ],
        ),
        ("reconnect|ERR|", &["probe-timeout"]),
    ];
    let mut seen = std::collections::BTreeMap::new();
    for (dir, server, bytes) in logs() {
        let f = read_log(&bytes);
        for (needle, names) in pairs {
            let want = grep(&bytes, needle);
            let got: usize = names.iter().map(|n| count(&f, n)).sum();
            assert_eq!(got, want, "{dir:?} {server}: {needle:?}");
            *seen.entry(*needle).or_insert(0) += want;
        }
    }
    // The fixtures hold each of these at least once (else the check is empty).
    for needle in [
        "is leader for term",
        "inactivity probe",
        "Unreasonably long",
        "peak resident set size grew",
        "Transferring leadership",
        "removed from configuration",
        "finished leaving cluster",
        "Election timer changed",
        "by user request",
    ] {
        assert!(seen[needle] > 0, "{needle}");
    }
}

#[test]
fn lines_of_interest_from_facts() {
    // facts.json log_lines_of_interest: the generator's own selection of lines
    // by category; each must be recognized as the matching event.
    let kinds = |cat: &str| -> &'static [&'static str] {
        match cat {
            "elected" => &["election-won"],
            "leader_for_term" => &["leader-is"],
            "starting_election" => &["election-started"],
            "unreasonably_long" => &["long-poll"],
            "snapshot" => &[
                "snapshot-sending",
                "snapshot-installed",
                "transfer-started",
                "snapshot-written",
            ],
            "memory" => &["memory-peak", "memory-grew", "memory-counts"],
            "inactivity_probe" => &["probe-timeout"],
            "leadership" => &[
                "transfer-started",
                "transfer-received",
                "stray-command-reply",
            ],
            "compact" => &["compacting", "snapshot-written"],
            other => panic!("unknown category {other}"),
        }
    };
    let mut checked = 0;
    for (dir, server, bytes) in logs() {
        let Some(v) = facts(&dir) else { continue };
        let Some(cats) = v["log_lines_of_interest"][&server].as_object() else {
            continue;
        };
        let f = read_log(&bytes);
        let lines = text_lines(&bytes);
        for (cat, list) in cats {
            for want in list.as_array().unwrap() {
                let want = want.as_str().unwrap();
                if want.contains("|vlog|INFO|opened log file ") {
                    // The generator's "compact" and "snapshot" selections also
                    // caught the first line of some logs, "vlog|INFO|opened
                    // log file ./s1.log", which is neither.
                    continue;
                }
                let n = lines.iter().position(|l| *l == want).expect(want) as u64;
                let e = f
                    .events
                    .iter()
                    .find(|e| e.line == n)
                    .unwrap_or_else(|| panic!("{dir:?} {server}: {want}"));
                assert!(
                    kinds(cat).contains(&e.kind.name()),
                    "{cat}: {want} -> {:?}",
                    e.kind
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "{checked}");
}

fn short(uuid: &str) -> &str {
    &uuid[..4]
}

#[test]
fn identity_matches_facts() {
    for (dir, server, bytes) in logs() {
        let Some(v) = facts(&dir) else { continue };
        let f = read_log(&bytes);
        let db = format!("{server}.db");
        let header = &v["files"][&db]["header"];
        let Some(sid) = header["server_id"].as_str() else {
            continue;
        };
        assert_eq!(f.server_id.as_deref(), Some(short(sid)), "{dir:?} {server}");
        // All LocalServerId events of a log name the same server.
        for e in &f.events {
            if let EventKind::LocalServerId { sid: s } = &e.kind {
                assert_eq!(s, short(sid));
            }
        }
        if let Some(cid) = header["cluster_id"].as_str() {
            if f.cluster_id.is_some() {
                assert_eq!(
                    f.cluster_id.as_deref(),
                    Some(short(cid)),
                    "{dir:?} {server}"
                );
            }
        }
        // incidents/README.md: "the real ovsdb-server (Open vSwitch) 3.1.0".
        assert_eq!(f.version.as_deref(), Some("3.1.0"));
        // Other servers' addresses learned from the log equal their files'
        // local_address.
        for (other, fv) in v["files"].as_object().unwrap() {
            let (Some(osid), Some(addr)) = (
                fv["header"]["server_id"].as_str(),
                fv["header"]["local_address"].as_str(),
            ) else {
                continue;
            };
            if let Some(a) = f.servers.get(short(osid)) {
                assert_eq!(a, addr, "{dir:?} {server}: {other}");
            }
        }
    }
}

#[test]
fn observed_leaders_are_in_the_logs() {
    // facts.json leaders_observed (read from cluster/status by the
    // generator): each leader of a term is either announced ("server X is
    // leader for term T") in some log of the folder or elected in its own.
    let mut checked = 0;
    for group in ["incidents"] {
        for d in std::fs::read_dir(fixtures().join(group)).unwrap() {
            let dir = d.unwrap().path();
            let Some(v) = facts(&dir) else { continue };
            let Some(obs) = v["leaders_observed"].as_array() else {
                continue;
            };
            let files: Vec<LogFile> = (1..=3)
                .filter_map(|i| std::fs::read(dir.join(format!("s{i}.ovsdb-server.log"))).ok())
                .map(|b| read_log(&b))
                .collect();
            for o in obs {
                let sid = o["sid"].as_str().unwrap();
                let term = o["term"].as_u64().unwrap();
                let announced = files.iter().flat_map(|f| &f.events).any(|e| {
                    matches!(&e.kind, EventKind::LeaderIs { sid: s, term: t } if s == sid && *t == term)
                });
                let elected = files.iter().filter(|f| f.server_id.as_deref() == Some(sid)).any(|f| {
                    f.events
                        .iter()
                        .any(|e| matches!(e.kind, EventKind::ElectionWon { term: t, .. } if t == term))
                });
                assert!(announced || elected, "{dir:?}: {sid} term {term}");
                checked += 1;
            }
            // The final term is the highest term won in any log.
            let max_won = files
                .iter()
                .flat_map(|f| &f.events)
                .filter_map(|e| match e.kind {
                    EventKind::ElectionWon { term, .. } => Some(term),
                    _ => None,
                })
                .max();
            assert_eq!(max_won, v["final_term"].as_u64(), "{dir:?}");
        }
    }
    assert!(checked >= 10, "{checked}");
}

#[test]
fn long_poll_figures() {
    // incidents/leader-pause README: the leader (s1) was stopped for 3 s while
    // busy; its log has the warning with the rusage figures.
    let b = std::fs::read(fixtures().join("incidents/leader-pause/s1.ovsdb-server.log")).unwrap();
    let f = read_log(&b);
    let lp: Vec<_> = f
        .events
        .iter()
        .filter(|e| e.kind.name() == "long-poll")
        .collect();
    assert_eq!(lp.len(), 1);
    let line = std::str::from_utf8(f.line_text(lp[0].line, &b).unwrap()).unwrap();
    assert!(line.ends_with("Unreasonably long 3027ms poll interval (16ms user, 2ms system)"));
    assert_eq!(
        lp[0].kind,
        EventKind::LongPoll {
            wall_ms: 3027,
            user_ms: 16,
            system_ms: 2
        }
    );
    let v = facts(&fixtures().join("incidents/leader-pause")).unwrap();
    let pause = &v["injected"][0]["pause"];
    let actual = pause["actual_ms"].as_u64().unwrap();
    let EventKind::LongPoll { wall_ms, .. } = lp[0].kind else {
        unreachable!()
    };
    assert!(wall_ms >= actual, "the long poll covers the stop");
    // The warning is logged after SIGCONT.
    assert!(lp[0].time_ms >= pause["cont_utc_ms"].as_i64().unwrap());
}

#[test]
fn rotated_parts_join_in_time_order() {
    for (dir, server, bytes) in logs().into_iter().take(12) {
        let whole = read_log(&bytes);
        if whole.lines < 6 {
            continue;
        }
        // Cut at line boundaries into 3 parts: newest is "ovsdb-server.log",
        // then ".log.1", ".log.2"; given to join() newest first.
        let lines: Vec<usize> = bytes
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i + 1)
            .collect();
        let (a, b) = (lines[lines.len() / 3], lines[2 * lines.len() / 3]);
        let parts = [&bytes[b..], &bytes[a..b], &bytes[..a]];
        let j = join(parts.iter().map(|p| read_log(p)).collect());
        assert_eq!(j.lines, whole.lines);
        assert_eq!(j.events, whole.events, "{dir:?} {server}");
        assert_eq!((j.first_ms, j.last_ms), (whole.first_ms, whole.last_ms));
        assert_eq!(
            j.parts.iter().map(|p| p.source).collect::<Vec<_>>(),
            [2, 1, 0]
        );
        for n in 0..j.lines {
            let (src, r) = j.line_range(n).unwrap();
            assert_eq!(&parts[src][r], whole.line_text(n, &bytes).unwrap());
            let (x, y) = (j.index[n as usize], whole.index[n as usize]);
            assert_eq!((x.time_ms, x.level), (y.time_ms, y.level));
            assert_eq!(j.module_name(x.module), whole.module_name(y.module));
        }
        assert_eq!(j.server_id, whole.server_id);
        assert_eq!(j.servers, whole.servers);
        assert_eq!(j.time_steps_back, 0);
        let found: Vec<u64> = j.find(&parts, b"raft|INFO|").collect();
        assert_eq!(found.len(), grep(&bytes, "raft|INFO|"));
    }
}

#[test]
fn cluster_status_matches_facts() {
    let mut checked = 0;
    for (dir, server, _) in logs() {
        let Ok(text) = std::fs::read_to_string(dir.join(format!("{server}.cluster-status.txt")))
        else {
            continue;
        };
        let v = facts(&dir).unwrap();
        if v["servers"][&server].is_null() {
            // Folders made by their own gen.sh (no-quorum) record no parsed
            // status; their tests check the status's use instead.
            continue;
        }
        let want = &v["servers"][&server]["cluster_status_at_end"];
        let got = parse_cluster_status(&text);
        if want["role"].is_null() {
            // standalone ("not a valid command") and the server that left the
            // cluster in membership ("unknown cluster"): error replies.
            assert_eq!(got, None, "{dir:?} {server}");
            continue;
        }
        let s = got.unwrap_or_else(|| panic!("{dir:?} {server}"));
        assert_eq!(s.nickname.as_deref(), want["raw_first_line"].as_str());
        assert_eq!(s.sid, want["server_id_short"].as_str().unwrap());
        assert_eq!(s.server_id.as_deref(), want["server_id"].as_str());
        // Also the file's header (a second, independent source).
        let header_sid = v["files"][format!("{server}.db")]["header"]["server_id"].as_str();
        assert_eq!(s.server_id.as_deref(), header_sid);
        assert_eq!(s.cluster_id.as_deref(), want["cluster_id"].as_str());
        assert_eq!(s.address, want["address"].as_str().unwrap());
        assert_eq!(s.status, want["status"].as_str().unwrap());
        assert_eq!(s.role, want["role"].as_str().unwrap());
        assert_eq!(s.term, want["term"].as_u64().unwrap());
        assert_eq!(s.leader, want["leader"].as_str().unwrap());
        assert_eq!(s.vote, want["vote"].as_str().unwrap());
        assert_eq!(s.election_timer_ms, want["election_timer_ms"].as_u64());
        assert_eq!(s.log_first, want["log_start"].as_u64());
        assert_eq!(s.log_last, want["log_end"].as_u64());
        assert_eq!(s.not_committed, want["uncommitted"].as_u64());
        assert_eq!(s.not_applied, want["unapplied"].as_u64());
        assert_eq!(s.commit_index(), want["commit_index"].as_u64());
        assert_eq!(s.last_log_index(), want["last_log_index"].as_u64());
        // Servers: one line each, exactly one is self, and it is this server.
        let n = text
            .lines()
            .skip_while(|l| *l != "Servers:")
            .skip(1)
            .filter(|l| l.starts_with("    "))
            .count();
        assert_eq!(s.servers.len(), n);
        let me: Vec<_> = s.servers.iter().filter(|p| p.is_self).collect();
        assert_eq!(me.len(), 1);
        assert_eq!(me[0].sid, s.sid);
        assert_eq!(me[0].address, s.address);
        // next_index/match_index are printed by leaders only.
        let leader = s.role == "leader";
        assert!(s
            .servers
            .iter()
            .all(|p| p.next_index.is_some() == leader && p.match_index.is_some() == leader));
        if leader {
            // facts: the leader's cluster is caught up at the end (uncommitted 0):
            // every follower has matched the last log index.
            for p in s.servers.iter().filter(|p| !p.is_self) {
                assert_eq!(
                    p.match_index,
                    want["last_log_index"].as_u64(),
                    "{dir:?} {server}"
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 40, "{checked}");
}

#[test]
fn last_commit_index_and_leader_from_status() {
    for group in ["incidents", "samples"] {
        for d in std::fs::read_dir(fixtures().join(group)).unwrap() {
            let dir = d.unwrap().path();
            let Some(v) = facts(&dir) else { continue };
            let Some(leader) = v["leader_at_end"]["name"].as_str() else {
                continue;
            };
            let Ok(t) = std::fs::read_to_string(dir.join(format!("{leader}.cluster-status.txt")))
            else {
                continue;
            };
            let s = parse_cluster_status(&t).unwrap();
            assert_eq!(s.role, "leader", "{dir:?}");
            assert_eq!(s.commit_index(), v["last_commit_index"].as_u64(), "{dir:?}");
        }
    }
}

#[test]
fn memory_and_coverage_show() {
    let mut checked = 0;
    for (dir, server, _) in logs() {
        let Ok(text) = std::fs::read_to_string(dir.join(format!("{server}.memory-show.txt")))
        else {
            continue;
        };
        let pairs = parse_memory_show(&text).unwrap();
        let back: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        if let Some(want) = facts(&dir).and_then(|v| {
            v["servers"][&server]["memory_show"]
                .as_str()
                .map(String::from)
        }) {
            assert_eq!(back.join(" "), want.trim());
        }
        checked += 1;
        if let Ok(cov) = std::fs::read_to_string(dir.join(format!("{server}.coverage-show.txt"))) {
            let c = parse_coverage_show(&cov).unwrap();
            assert_eq!(
                c.len(),
                cov.lines().filter(|l| l.contains("total:")).count()
            );
            for (e, l) in c.iter().zip(cov.lines().filter(|l| l.contains("total:"))) {
                assert!(l.starts_with(&e.name));
                assert!(l.ends_with(&format!("total: {}", e.total)));
            }
        }
    }
    assert!(checked >= 40);
    assert_eq!(parse_memory_show("unknown command"), None);
    assert_eq!(parse_coverage_show("atoms:1"), None);
}
