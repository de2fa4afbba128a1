//! Runs the scenarios ported from ovs `tests/ovsdb-monitor.at` against the
//! in-memory server model. The printed client emulates
//! `ovsdb-client monitor[-cond[-since]] --format=csv -d json`; its output is
//! normalised like the original tests (group sort + UUID filter) and
//! compared with the expected text verbatim.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::filters::{monitor_sort, uuidfilt};
use common::scenario::{self, json_word, word};
use ovsdb::json::{self, Json, Object};
use ovsdb_server::{Server, ServerOptions, SessionId};

struct Printed {
    session: SessionId,
    version: u8,
    table: String,
    columns: Vec<String>,
    out: String,
    first_table: bool,
    last_id: Option<String>,
}

impl Printed {
    fn print_table(&mut self, tu: &Json, initial: bool) {
        let Some(rows) = tu.get(&self.table).and_then(Json::as_object) else {
            return;
        };
        let mut s = String::new();
        if self.first_table {
            self.first_table = false;
        } else {
            s.push('\n');
        }
        let mut head = vec!["row".to_string(), "action".to_string()];
        head.extend(self.columns.iter().cloned());
        s.push_str(&head.iter().map(|h| csv(h)).collect::<Vec<_>>().join(","));
        s.push('\n');
        for (uuid, ru) in rows.iter() {
            let ro = ru.as_object().expect("row update object");
            let mut lines: Vec<(String, String, Option<&Json>)> = Vec::new();
            if self.version == 1 {
                let old = ro.get("old");
                let new = ro.get("new");
                if initial {
                    lines.push((uuid.to_string(), "initial".into(), new));
                } else if old.is_none() {
                    lines.push((uuid.to_string(), "insert".into(), new));
                } else if new.is_none() {
                    lines.push((uuid.to_string(), "delete".into(), old));
                } else {
                    lines.push((uuid.to_string(), "old".into(), old));
                    lines.push((String::new(), "new".into(), new));
                }
            } else {
                for op in ["delete", "initial", "modify", "insert"] {
                    if let Some(r) = ro.get(op) {
                        lines.push((uuid.to_string(), op.to_string(), Some(r)));
                        break;
                    }
                }
            }
            for (u, action, row) in lines {
                let mut cells = vec![csv(&u), csv(&action)];
                if action != "delete" || self.version == 1 {
                    for c in &self.columns {
                        let v = row.and_then(|r| r.get(c));
                        cells.push(match v {
                            Some(v) => csv(&v.sorted_recursive().to_string_compact()),
                            None => String::new(),
                        });
                    }
                } else {
                    for _ in &self.columns {
                        cells.push(String::new());
                    }
                }
                s.push_str(&cells.join(","));
                s.push('\n');
            }
        }
        self.out.push_str(&s);
    }

    fn receive(&mut self, msg: &Json) {
        let method = msg.get("method").and_then(Json::as_str);
        let params = msg.get("params").and_then(Json::as_array);
        match (method, params) {
            (Some("update"), Some(p)) if p.len() == 2 => self.print_table(&p[1], false),
            (Some("update2"), Some(p)) if p.len() == 2 => self.print_table(&p[1], false),
            (Some("update3"), Some(p)) if p.len() == 3 => {
                let id = p[1].as_str().unwrap_or("").to_string();
                self.out.push_str(&format!("\nlast_id: {id}"));
                self.last_id = Some(id);
                self.print_table(&p[2], false);
            }
            _ => {}
        }
    }
}

fn csv(s: &str) -> String {
    if s.contains(['\n', '"', ',']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn deliver(server: &mut Server, printed: &mut Option<Printed>, msgs: Vec<(SessionId, Json)>) {
    for (to, m) in msgs {
        if let Some(p) = printed.as_mut() {
            if p.session == to {
                p.receive(&m);
            }
        }
    }
    let _ = server;
}

struct MonitorSpec {
    version: u8,
    table: String,
    request: Json,
    columns: Vec<String>,
    last: Option<String>,
}

/// Parses `monitor DB TABLE [COLS]`, `monitor-cond DB COND TABLE [COLS]`,
/// `monitor-cond-since DB LAST COND TABLE [COLS]` (LAST: a UUID, `zero`,
/// or `last` = the last id the previous printed client saw).
fn parse_monitor(cmd: &str, rest: &str, server: &Server, prev_last: Option<&str>) -> MonitorSpec {
    let (_db, rest) = word(rest);
    let (version, last, cond, rest) = match cmd {
        "monitor" => (1, None, None, rest),
        "monitor-cond" => {
            let (c, r) = json_word(rest);
            (2, None, Some(c), r)
        }
        _ => {
            let (l, r) = word(rest);
            let last = match l {
                "zero" => "00000000-0000-0000-0000-000000000000".to_string(),
                "last" => prev_last.expect("no previous last_id").to_string(),
                u => u.to_string(),
            };
            let (c, r) = json_word(r);
            (3, Some(last), Some(c), r)
        }
    };
    let (table, rest) = word(rest);
    let (colspec, _) = json_word(rest);
    let ti = server.meta.table(table).expect("table");
    let t = &server.meta.tables[ti];
    let mut columns: Vec<String> = Vec::new();
    let mut select = Object::new();
    if colspec.starts_with('[') {
        let j = json::parse(colspec.as_bytes()).expect("columns json");
        for c in j.as_array().unwrap() {
            columns.push(c.as_str().unwrap().to_string());
        }
    } else if !colspec.is_empty() {
        for item in colspec.split(',') {
            if let Some(op) = item.strip_prefix('!') {
                select.insert(op, Json::Bool(false));
            } else {
                columns.push(item.to_string());
            }
        }
    }
    if columns.is_empty() {
        columns = t.columns.iter().map(|c| c.name.clone()).collect();
        columns.push("_version".to_string());
    }
    let mut req = Object::new();
    req.insert(
        "columns",
        Json::Array(columns.iter().map(|c| Json::from(c.as_str())).collect()),
    );
    if let Some(c) = cond {
        req.insert("where", json::parse(c.as_bytes()).expect("cond json"));
    }
    if !select.is_empty() {
        req.insert("select", Json::Object(select));
    }
    let mut reqs = Object::new();
    reqs.insert(table, Json::Object(req));
    MonitorSpec {
        version,
        table: table.to_string(),
        request: Json::Object(reqs),
        columns,
        last,
    }
}

fn start_monitor(server: &mut Server, spec: &MonitorSpec) -> (SessionId, Json) {
    let s = server.connect();
    let method = match spec.version {
        1 => "monitor",
        2 => "monitor_cond",
        _ => "monitor_cond_since",
    };
    let mut params = vec![
        Json::from(server.db_name()),
        Json::from(spec.table.as_str()),
        spec.request.clone(),
    ];
    if let Some(l) = &spec.last {
        params.push(Json::from(l.as_str()));
    }
    let mut o = Object::new();
    o.insert("method", Json::from(method));
    o.insert("params", Json::Array(params));
    o.insert("id", Json::Integer(1));
    let out = server.handle(s, &Json::Object(o));
    let reply = out
        .into_iter()
        .find(|(to, m)| *to == s && m.get("id") == Some(&Json::Integer(1)))
        .expect("monitor reply")
        .1;
    assert!(
        reply.get("error").map(Json::is_null).unwrap_or(true),
        "monitor failed: {}",
        reply
    );
    (s, reply.get("result").cloned().unwrap_or(Json::Null))
}

fn run(path: &std::path::Path) -> (String, String) {
    let sc = scenario::load(path);
    let mut server: Option<Server> = None;
    let mut schema = String::new();
    let mut clustered = false;
    let mut printed: Option<Printed> = None;
    let mut prev_last: Option<String> = None;
    for cmd in &sc.commands {
        let (name, rest) = word(cmd);
        match name {
            "schema" => schema = scenario::schema_text(rest.trim()),
            "cluster" => clustered = true,
            _ => {
                if server.is_none() {
                    server = Some(
                        Server::from_schema_text(
                            &schema,
                            ServerOptions {
                                clustered,
                                seed: 7,
                                ..Default::default()
                            },
                        )
                        .expect("schema"),
                    );
                }
                let srv = server.as_mut().unwrap();
                match name {
                    "pre" | "txn" => {
                        let j = json::parse(rest.as_bytes()).expect("txn json");
                        let ops = &j.as_array().unwrap()[1..];
                        let (outcome, msgs) = srv.transact(ops);
                        assert!(
                            !outcome.result.to_string_compact().contains("\"error\""),
                            "{}: transaction failed: {}",
                            path.display(),
                            outcome.result
                        );
                        deliver(srv, &mut printed, msgs);
                    }
                    "monitor" | "monitor-cond" | "monitor-cond-since" => {
                        if let Some(p) = printed.take() {
                            prev_last = p.last_id.clone();
                            srv.disconnect(p.session);
                        }
                        let spec = parse_monitor(name, rest, srv, prev_last.as_deref());
                        let (s, result) = start_monitor(srv, &spec);
                        let mut p = Printed {
                            session: s,
                            version: spec.version,
                            table: spec.table.clone(),
                            columns: spec.columns.clone(),
                            out: String::new(),
                            first_table: true,
                            last_id: None,
                        };
                        if spec.version == 3 {
                            let a = result.as_array().unwrap();
                            let id = a[1].as_str().unwrap().to_string();
                            p.out.push_str(&format!(
                                "found: {}, last_id: {}\n",
                                a[0].as_bool().unwrap(),
                                id
                            ));
                            p.last_id = Some(id);
                            p.print_table(&a[2], true);
                        } else {
                            p.print_table(&result, true);
                        }
                        printed = Some(p);
                    }
                    "sessions" => {
                        let (n, r) = word(rest);
                        let (cmd2, r2) = word(r);
                        let spec = parse_monitor(cmd2, r2, srv, None);
                        for _ in 0..n.parse::<usize>().unwrap() {
                            start_monitor(srv, &spec);
                        }
                    }
                    "cond-change" => {
                        let (table, r) = word(rest);
                        let (c, _) = json_word(r);
                        let p = printed.as_ref().expect("printed client");
                        let mut tr = Object::new();
                        let mut w = Object::new();
                        w.insert("where", json::parse(c.as_bytes()).unwrap());
                        tr.insert(table, Json::Array(vec![Json::Object(w)]));
                        let mut o = Object::new();
                        o.insert("method", Json::from("monitor_cond_change"));
                        o.insert(
                            "params",
                            Json::Array(vec![
                                Json::from(table),
                                Json::from(table),
                                Json::Object(tr),
                            ]),
                        );
                        o.insert("id", Json::Integer(2));
                        let s = p.session;
                        let out = srv.handle(s, &Json::Object(o));
                        for (to, m) in &out {
                            if m.get("id") == Some(&Json::Integer(2)) {
                                assert!(m.get("error").unwrap().is_null(), "cond change: {m}");
                            }
                            let _ = to;
                        }
                        deliver(srv, &mut printed, out);
                    }
                    "server-restart" => {
                        if let Some(p) = printed.take() {
                            prev_last = p.last_id.clone();
                        }
                        srv.restart();
                    }
                    "client-stop" => {
                        if let Some(p) = printed.take() {
                            prev_last = p.last_id.clone();
                            srv.disconnect(p.session);
                        }
                    }
                    other => panic!("{}: unknown command {other}", path.display()),
                }
            }
        }
    }
    let out = printed.map(|p| p.out).unwrap_or_default();
    (uuidfilt(&monitor_sort(&out)), sc.expected)
}

#[test]
fn ported_monitor_scenarios() {
    let files = scenario::list("monitor");
    assert!(files.len() >= 25, "expected at least 25 monitor scenarios");
    let mut failures = Vec::new();
    for f in &files {
        let (got, want) = run(f);
        if got != want {
            failures.push(format!(
                "=== {}\n--- expected\n{}--- got\n{}",
                f.display(),
                want,
                got
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scenarios differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
