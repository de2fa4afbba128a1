//! Transactions that wait (triggers): one script of requests, sleeps and
//! disconnects runs against the real ovsdb-server (Debian package, started
//! on a unix socket in a temp dir) and against the server model on its
//! virtual clock; every session must receive the same messages in the
//! same order (UUIDs numbered by first appearance, the measured time in
//! "timed out after N ms" checked for plausibility and then masked).
#![cfg(not(target_arch = "wasm32"))]

mod common;
#[path = "common/net.rs"]
mod net;

use common::filters::uuidfilt;
use net::{ensure_packages, Conn, Server, TempDir};
use ovsdb::json::{parse, Json};
use ovsdb_server::{Server as Model, ServerOptions, SessionId};
use std::time::{Duration, Instant};

const SCHEMA: &str = r#"{"name":"db","version":"1.0.0","tables":{"T":{"isRoot":true,"columns":{"name":{"type":"string"},"n":{"type":"integer"}}}}}"#;

enum Step {
    /// Session opens a connection.
    Open(usize),
    /// Session sends a message.
    Send(usize, String),
    /// Time passes (ms).
    Sleep(u64),
    /// Session disconnects.
    Close(usize),
}

fn wait(name: &str, rows: &str, timeout: Option<i64>) -> String {
    let t = timeout
        .map(|t| format!(",\"timeout\":{t}"))
        .unwrap_or_default();
    format!(
        r#"{{"op":"wait","table":"T","where":[["name","==","{name}"]],"columns":["name"],"until":"==","rows":{rows}{t}}}"#
    )
}

fn insert(name: &str) -> String {
    format!(r#"{{"op":"insert","table":"T","row":{{"name":"{name}"}}}}"#)
}

fn transact(s: usize, id: i64, ops: &[String]) -> Step {
    Step::Send(
        s,
        format!(
            r#"{{"method":"transact","params":["db",{}],"id":{id}}}"#,
            ops.join(",")
        ),
    )
}

fn script() -> Vec<Step> {
    let a_rows = r#"[{"name":"a"}]"#;
    vec![
        Step::Open(0),
        Step::Open(1),
        Step::Send(
            0,
            r#"{"method":"monitor_cond","params":["db","m",{"T":[{"columns":["name"]}]}],"id":"mon"}"#.into(),
        ),
        // Timeout 0: fails at once.
        transact(0, 1, &[wait("a", a_rows, Some(0))]),
        // Timeout 300: waits, then times out.
        transact(0, 2, &[wait("a", a_rows, Some(300)), insert("x")]),
        Step::Sleep(500),
        // No timeout: waits for the commit that satisfies it.
        transact(0, 3, &[wait("a", a_rows, None), insert("y")]),
        transact(0, 3, &[wait("a", a_rows, None)]),
        transact(1, 1, &[insert("other")]),
        transact(1, 2, &[insert("a")]),
        // cancel: silent unless db-change-aware; as a request unknown.
        transact(0, 4, &[wait("a", "[]", Some(10_000))]),
        Step::Send(0, r#"{"method":"cancel","params":[4],"id":null}"#.into()),
        Step::Send(0, r#"{"method":"cancel","params":[4],"id":5}"#.into()),
        Step::Send(
            0,
            r#"{"method":"set_db_change_aware","params":[true],"id":6}"#.into(),
        ),
        transact(0, 7, &[wait("a", "[]", Some(10_000))]),
        Step::Send(0, r#"{"method":"cancel","params":[7],"id":null}"#.into()),
        // The smallest timeout among the waits run so far.
        transact(
            0,
            8,
            &[wait("a", a_rows, Some(5000)), wait("a", "[]", Some(200))],
        ),
        Step::Sleep(400),
        transact(0, 9, &[wait("a", "[]", Some(-1))]),
        // A disconnect drops the waiting transaction.
        Step::Open(2),
        transact(2, 1, &[wait("zz", r#"[{"name":"zz"}]"#, None), insert("z2")]),
        Step::Close(2),
        transact(1, 3, &[insert("zz")]),
        Step::Send(
            1,
            r#"{"method":"transact","params":["db",{"op":"select","table":"T","where":[],"columns":["name"]}],"id":4}"#.into(),
        ),
    ]
}

/// Canonical text of one message: keys sorted, rows of table updates
/// ordered by content (their UUID keys differ between servers), and the
/// measured wait time masked after a plausibility check.
fn canon(msg: &Json) -> String {
    let mut m = msg.sorted_recursive();
    if let Json::Object(o) = &mut m {
        let method = o.get("method").and_then(Json::as_str).map(str::to_string);
        if method.as_deref() == Some("update2") {
            if let Some(Json::Array(p)) = o.get_mut("params") {
                if let Some(Json::Object(tu)) = p.get_mut(1) {
                    for (_, rows) in tu.iter_mut() {
                        if let Json::Object(r) = rows {
                            let mut v: Vec<Json> = r
                                .iter()
                                .map(|(u, ru)| Json::Array(vec![Json::from(u), ru.clone()]))
                                .collect();
                            v.sort_by_key(|x| x.as_array().unwrap()[1].to_string_compact());
                            *rows = Json::Array(v);
                        }
                    }
                }
            }
        }
        if let Some(Json::Array(rs)) = o.get_mut("result") {
            for r in rs.iter_mut() {
                if let Json::Object(ro) = r {
                    if let Some(Json::Array(rows)) = ro.get_mut("rows") {
                        rows.sort_by_key(|x| x.to_string_compact());
                    }
                }
            }
        }
    }
    let text = m.to_string_compact();
    mask_elapsed(&text)
}

fn mask_elapsed(text: &str) -> String {
    let pat = "timed out after ";
    let Some(p) = text.find(pat) else {
        return text.to_string();
    };
    let rest = &text[p + pat.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let n: u64 = digits.parse().expect("elapsed ms");
    // Every expiring wait in the script has a timeout of 200 or 300 ms and
    // is given at most 500 ms.
    assert!(
        (200..3000).contains(&n),
        "implausible elapsed time {n} in {text}"
    );
    format!("{}{pat}<N>{}", &text[..p], &rest[digits.len()..])
}

/// Runs the script on the real server: per step, the messages each
/// session received.
fn run_real(sock: &std::path::Path) -> String {
    let mut conns: Vec<Option<Conn>> = vec![None, None, None];
    let mut log = String::new();
    for (i, step) in script().into_iter().enumerate() {
        match step {
            Step::Open(s) => conns[s] = Some(Conn::connect(sock).expect("connect")),
            Step::Close(s) => conns[s] = None,
            Step::Send(s, text) => {
                let msg = parse(text.as_bytes()).unwrap();
                conns[s].as_mut().unwrap().send(&msg).expect("send");
            }
            Step::Sleep(ms) => std::thread::sleep(Duration::from_millis(ms)),
        }
        // Collect from every session until all have been quiet for a
        // while; logged per session in arrival order.
        let mut got: Vec<Vec<Json>> = vec![Vec::new(); conns.len()];
        let mut quiet_since = Instant::now();
        while quiet_since.elapsed() < Duration::from_millis(120) {
            for (s, c) in conns.iter_mut().enumerate() {
                if let Some(c) = c {
                    while let Some(m) = c.recv(Duration::from_millis(3)).expect("socket") {
                        got[s].push(m);
                        quiet_since = Instant::now();
                    }
                }
            }
        }
        for (s, msgs) in got.iter().enumerate() {
            for m in msgs {
                log.push_str(&format!("step {i} session {s}: {}\n", canon(m)));
            }
        }
    }
    uuidfilt(&log)
}

fn run_model() -> String {
    let mut srv = Model::from_schema_text(SCHEMA, ServerOptions::default()).unwrap();
    let mut ids: Vec<Option<SessionId>> = vec![None, None, None];
    let mut now = 0i64;
    let mut log = String::new();
    for (i, step) in script().into_iter().enumerate() {
        let out = match step {
            Step::Open(s) => {
                ids[s] = Some(srv.connect());
                Vec::new()
            }
            Step::Close(s) => srv.disconnect(ids[s].take().unwrap()),
            Step::Send(s, text) => srv.handle(ids[s].unwrap(), &parse(text.as_bytes()).unwrap()),
            Step::Sleep(ms) => {
                now += ms as i64;
                srv.advance(now)
            }
        };
        for (s, id) in ids.iter().enumerate() {
            for (to, m) in &out {
                if Some(*to) == *id {
                    log.push_str(&format!("step {i} session {s}: {}\n", canon(m)));
                }
            }
        }
    }
    uuidfilt(&log)
}

#[test]
fn waiting_transactions_behave_as_on_the_real_server() {
    assert!(
        ensure_packages(),
        "openvswitch packages are not installed and apt-get could not install them"
    );
    let dir = TempDir::new("triggers");
    let schema = dir.0.join("db.ovsschema");
    std::fs::write(&schema, SCHEMA).unwrap();
    let server = Server::create(&dir.0, "db.db", &schema).expect("ovsdb-server starts");
    let real = run_real(&server.sock);
    let model = run_model();
    // The script exercises what it claims to (guards against a vacuous
    // comparison, e.g. if the real server stopped answering).
    for needle in [
        r#""where\" clause test failed"#,
        "timed out after <N> ms",
        "duplicate request ID",
        r#""error":"canceled""#,
        r#""error":"unknown method""#,
        "timeout must be nonnegative",
        r#"{"name":"y"}"#,
    ] {
        assert!(
            real.contains(needle),
            "real transcript lacks {needle}:\n{real}"
        );
    }
    assert!(!real.contains("z2"), "dropped trigger committed:\n{real}");
    assert_eq!(model, real, "model:\n{model}\nreal:\n{real}");
}
