//! Differential test against the real ovsdb-server: the same random
//! transactions (inserts with explicit UUIDs, updates, mutations, deletes,
//! garbage-collected children, failing constraints) run on a real server
//! and on the model; the transaction results (error tags) and the
//! `update2` notifications of a `monitor_cond` client, the `update`s of a
//! v1 `monitor` client and those of a conditional `monitor_cond` client
//! must be identical.
#![cfg(not(target_arch = "wasm32"))]

mod common;
#[path = "common/net.rs"]
mod net;

use net::{ensure_packages, Conn, Server, TempDir};
use ovsdb::json::{parse, Json, Object};
use ovsdb_server::rng::SplitMix64;
use ovsdb_server::{Server as Model, ServerOptions};
use std::time::Duration;

const SCHEMA: &str = r#"{"name":"diff","version":"1.0.0","tables":{
 "T":{"isRoot":true,"indexes":[["name"]],"columns":{
   "k":{"type":{"key":{"type":"integer","minInteger":0,"maxInteger":20}}},
   "name":{"type":"string"},
   "set":{"type":{"key":"integer","min":0,"max":4}},
   "map":{"type":{"key":"string","value":"integer","min":0,"max":"unlimited"}},
   "opt":{"type":{"key":"string","min":0,"max":1}},
   "child":{"type":{"key":{"type":"uuid","refTable":"C"},"min":0,"max":1}},
   "peers":{"type":{"key":{"type":"uuid","refTable":"T","refType":"weak"},"min":0,"max":"unlimited"}}}},
 "C":{"isRoot":false,"columns":{"v":{"type":"integer"}}}}}"#;

fn uuid(rng: &mut SplitMix64) -> String {
    rng.uuid().to_string()
}

fn random_txn(rng: &mut SplitMix64, known: &mut Vec<String>) -> String {
    let mut ops = Vec::new();
    for _ in 0..1 + rng.next_u64() % 3 {
        let k = rng.next_u64() % 22; // 21 violates maxInteger sometimes
        let a = rng.next_u64() % 5;
        let b = rng.next_u64() % 5;
        let peer = known
            .get((rng.next_u64() as usize) % known.len().max(1))
            .cloned();
        ops.push(match rng.next_u64() % 10 {
            8 => format!(
                r#"{{"op":"select","table":"T","where":[["k","<",{k}],["set","includes",{a}]],"columns":["k","name","set","map","opt"]}}"#
            ),
            9 => format!(
                r#"{{"op":"wait","table":"T","timeout":0,"where":[["k","==",{k}]],"columns":["k"],"until":"{}","rows":[{{"k":{k}}}]}}"#,
                if a.is_multiple_of(2) { "==" } else { "!=" }
            ),
            0 | 1 => {
                let tu = uuid(rng);
                let cu = uuid(rng);
                known.push(tu.clone());
                let peers = peer
                    .map(|p| format!(r#","peers":["set",[["uuid","{p}"]]]"#))
                    .unwrap_or_default();
                format!(
                    r#"{{"op":"insert","table":"T","uuid":"{tu}","row":{{"k":{k},"name":"n{k}-{a}","set":["set",[{a},{b}]],"map":["map",[["x{a}",{b}]]],"child":["uuid","{cu}"]{peers}}}}},
                       {{"op":"insert","table":"C","uuid":"{cu}","row":{{"v":{b}}}}}"#
                )
            }
            2 => format!(r#"{{"op":"update","table":"T","where":[["k","==",{k}]],"row":{{"opt":["set",["o{b}"]],"k":{}}}}}"#, k % 21),
            3 => format!(
                r#"{{"op":"mutate","table":"T","where":[["k","<=",{k}]],"mutations":[["set","insert",["set",[{a}]]],["map","insert",["map",[["y{b}",{a}]]]],["map","delete",["set",["x{a}"]]]]}}"#
            ),
            4 => format!(r#"{{"op":"mutate","table":"T","where":[["k",">=",{k}]],"mutations":[["set","delete",{b}],["k","+=",1]]}}"#),
            5 => format!(r#"{{"op":"update","table":"T","where":[["k","<",{k}]],"row":{{"child":["set",[]]}}}}"#),
            6 => format!(r#"{{"op":"delete","table":"T","where":[["k","==",{k}]]}}"#),
            _ => format!(r#"{{"op":"update","table":"T","where":[["name","==","n{k}-{a}"]],"row":{{"name":"n{b}-{a}"}}}}"#),
        });
    }
    format!(r#"["diff",{}]"#, ops.join(","))
}

/// A JSON-RPC request, as the model takes it.
fn rpc(method: &str, params: Json, id: i64) -> Json {
    let mut o = Object::new();
    o.insert("method", Json::from(method));
    o.insert("params", params);
    o.insert("id", Json::Integer(id));
    Json::Object(o)
}

/// Error tags (or "ok") per result entry: details wording may differ.
fn shape(result: &Json) -> Vec<String> {
    result
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| match r.get("error").and_then(Json::as_str) {
                    Some(e) => e.to_string(),
                    None if r.is_null() => "null".into(),
                    None => match r.get("rows").and_then(Json::as_array) {
                        // Row order of a select is the server's hash order.
                        Some(rows) => {
                            let mut v: Vec<String> = rows
                                .iter()
                                .map(|x| x.sorted_recursive().to_string_compact())
                                .collect();
                            v.sort();
                            format!("rows {v:?}")
                        }
                        None => r.sorted_recursive().to_string_compact(),
                    },
                })
                .collect()
        })
        .unwrap_or_default()
}

fn monitor_request() -> Json {
    parse(
        br#"["diff",["monid","diff"],{"T":{"columns":["k","name","set","map","opt","child","peers"]},"C":{"columns":["v"]}}]"#,
    )
    .unwrap()
}

/// Collects notifications until `n` arrived (or 2 s passed), plus any that
/// follow within 2 ms (so extra messages are noticed too).
fn drain_n(conn: &mut Conn, n: usize) -> Vec<Json> {
    let mut v = std::mem::take(&mut conn.backlog);
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while v.len() < n && std::time::Instant::now() < deadline {
        if let Some(m) = conn.recv(Duration::from_millis(50)).unwrap() {
            v.push(m);
        }
    }
    v.extend(conn.drain(Duration::from_millis(2)).unwrap());
    v
}

/// Rows with k < 8 or a given name, columns k/set/map only.
fn cond_request() -> Json {
    parse(
        br#"["diff",["monid","cond"],{"T":{"columns":["k","set","map"],"where":[["k","<",8],["name","==","n3-1"]]}}]"#,
    )
    .unwrap()
}

#[test]
fn model_matches_real_server_on_random_transactions() {
    assert!(ensure_packages(), "openvswitch packages unavailable");
    for seed in [20261129, 7, 424242] {
        run_seed(seed, 250);
    }
}

fn run_seed(seed: u64, steps: usize) {
    let dir = TempDir::new("diff");
    let schema = dir.0.join("diff.ovsschema");
    std::fs::write(&schema, SCHEMA).unwrap();
    let real = Server::create(&dir.0, "diff.db", &schema).expect("ovsdb-server");
    let mut conn = Conn::connect(&real.sock).unwrap();
    let reply = conn.call("monitor_cond", monitor_request()).unwrap();
    assert!(reply.get("error").unwrap().is_null(), "{reply}");
    // A second client with a v1 `monitor` and a conditional monitor.
    let mut conn1 = Conn::connect(&real.sock).unwrap();
    let reply = conn1.call("monitor", monitor_request()).unwrap();
    assert!(reply.get("error").unwrap().is_null(), "{reply}");
    let mut conn2 = Conn::connect(&real.sock).unwrap();
    let reply = conn2.call("monitor_cond", cond_request()).unwrap();
    assert!(reply.get("error").unwrap().is_null(), "{reply}");

    let mut model = Model::from_schema_text(SCHEMA, ServerOptions::default()).unwrap();
    let sess = model.connect();
    model.handle(sess, &rpc("monitor_cond", monitor_request(), 1));
    let sess1 = model.connect();
    model.handle(sess1, &rpc("monitor", monitor_request(), 1));
    let sess2 = model.connect();
    model.handle(sess2, &rpc("monitor_cond", cond_request(), 1));

    let mut rng = SplitMix64::new(seed);
    let mut known = Vec::new();
    let mut compared_updates = 0;
    for step in 0..steps {
        let text = random_txn(&mut rng, &mut known);
        let params = parse(text.as_bytes()).unwrap();
        // Real server.
        let reply = conn.call("transact", params.clone()).unwrap();
        let mut real_updates: Vec<Json> = std::mem::take(&mut conn.backlog);
        real_updates.extend(conn.drain(Duration::from_millis(5)).unwrap());
        // Model.
        let out = model.handle(sess, &rpc("transact", params, 2));
        let (mut model_updates, mut model_reply) = (Vec::new(), Json::Null);
        let (mut model_v1, mut model_cond) = (Vec::new(), Vec::new());
        for (to, m) in out {
            if to == sess1 {
                model_v1.push(m);
            } else if to == sess2 {
                model_cond.push(m);
            } else if m.get("method").is_some() {
                model_updates.push(m);
            } else {
                model_reply = m;
            }
        }
        let real_v1 = drain_n(&mut conn1, model_v1.len());
        let real_cond = drain_n(&mut conn2, model_cond.len());
        assert_eq!(
            shape(reply.get("result").unwrap()),
            shape(model_reply.get("result").unwrap()),
            "seed {seed} step {step}: results differ for {text}\nreal: {reply}\nmodel: {model_reply}"
        );
        let norm = |v: &[Json]| -> Vec<String> {
            v.iter()
                .filter(|m| {
                    matches!(
                        m.get("method").and_then(Json::as_str),
                        Some("update2" | "update")
                    )
                })
                .map(|m| {
                    m.get("params")
                        .unwrap()
                        .sorted_recursive()
                        .to_string_compact()
                })
                .collect()
        };
        assert_eq!(
            norm(&real_v1),
            norm(&model_v1),
            "seed {seed} step {step}: v1 update differs for {text}"
        );
        assert_eq!(
            norm(&real_cond),
            norm(&model_cond),
            "seed {seed} step {step}: conditional update2 differs for {text}"
        );
        assert_eq!(
            norm(&real_updates),
            norm(&model_updates),
            "seed {seed} step {step}: update2 differs for {text}"
        );
        compared_updates += norm(&real_updates).len();
    }
    assert!(
        compared_updates > 40,
        "only {compared_updates} updates compared"
    );
}

/// [`errors_of`], each printed, and each of the model's the same as the
/// real server's.
fn same_errors_as_the_real_server(texts: &[Vec<u8>]) -> Vec<(String, String, String)> {
    let got = errors_of(texts);
    for (text, real, model) in &got {
        eprintln!("{text}\n  real  {real}\n  model {model}");
    }
    for (text, real, model) in &got {
        assert_eq!(model, real, "{text}");
    }
    got
}

/// Sends each transaction text to the real server and to the model, and
/// returns (text, real result, model result) with each result's first
/// error object, or "ok".
fn errors_of(texts: &[Vec<u8>]) -> Vec<(String, String, String)> {
    let dir = TempDir::new("errors");
    let schema = dir.0.join("diff.ovsschema");
    std::fs::write(&schema, SCHEMA).unwrap();
    let real = Server::create(&dir.0, "diff.db", &schema).expect("ovsdb-server");
    let mut conn = Conn::connect(&real.sock).unwrap();
    let mut model = Model::from_schema_text(SCHEMA, ServerOptions::default()).unwrap();
    let sess = model.connect();
    // The first error object of a result, or "ok" (an insert's UUID differs).
    let outcome = |r: &Json| {
        r.as_array()
            .and_then(|a| a.iter().find(|x| x.get("error").is_some()))
            .map_or("ok".to_string(), |e| {
                e.sorted_recursive().to_string_compact()
            })
    };
    let mut out = Vec::new();
    for text in texts {
        let params = parse(text).unwrap();
        let reply = conn.call("transact", params.clone()).unwrap();
        let model_reply = model
            .handle(sess, &rpc("transact", params, 2))
            .into_iter()
            .map(|(_, m)| m)
            .find(|m| m.get("result").is_some())
            .expect("a reply");
        out.push((
            String::from_utf8_lossy(text).into_owned(),
            outcome(reply.get("result").unwrap()),
            outcome(model_reply.get("result").unwrap()),
        ));
    }
    out
}

/// A string column written with bytes that are not UTF-8: the real server
/// takes the JSON (its parser keeps any bytes) and fails the operation with
/// its UTF-8 check's words; the model must reply the same error object.
#[test]
fn strings_that_are_not_utf8_fail_as_on_the_real_server() {
    assert!(ensure_packages(), "openvswitch packages unavailable");
    // Raw bytes: a byte no sequence starts with, a surrogate's form, a
    // sequence cut by the end of the string, one cut by an ASCII byte, a
    // good two-byte character first; then a `\u` escape of a lone trailing
    // surrogate; then a good string, which must commit on both.
    let names: [&[u8]; 7] = [
        b"\"a\xc0b\"",
        b"\"\xed\xa0\x80\"",
        b"\"ab\xc3\"",
        b"\"\xe2\x82x\"",
        b"\"\xc3\xa9\xf0\x9f\x98\"",
        b"\"x\\udc00y\"",
        b"\"caf\\u00e9\"",
    ];
    let texts: Vec<Vec<u8>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut t = format!(r#"["diff",{{"op":"insert","table":"T","row":{{"k":{i},"name":"#)
                .into_bytes();
            t.extend_from_slice(name);
            t.extend_from_slice(b"}}]");
            t
        })
        .collect();
    let got = same_errors_as_the_real_server(&texts);
    let rejected = got
        .iter()
        .filter(|g| g.1.contains("not a valid UTF-8 string"))
        .count();
    assert_eq!(rejected, 6, "every string but the last is rejected");
}

/// Operations whose values are wrong: the model replies the real server's
/// error object, tag and details both.
#[test]
fn bad_values_fail_with_the_real_servers_words() {
    assert!(ensure_packages(), "openvswitch packages unavailable");
    let texts: Vec<Vec<u8>> = [
        r#"["diff",{"op":"insert","table":"T","row":{"k":21}}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":"x"}}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"set":["set",[1,2,3,4,5]]}}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"set":["set",[1,1]]}}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"map":["map",[["a",1],["a",2]]]}}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"name":1.5}}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"nope":1}}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"update","table":"T","where":[],"row":{"k":-1}}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"mutate","table":"T","where":[],"mutations":[["k","+=",100]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"mutate","table":"T","where":[],"mutations":[["k","+=","x"]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"mutate","table":"T","where":[],"mutations":[["set","insert",["set",[1,2,3,4,5]]]]}]"#,
        r#"["diff",{"op":"select","table":"T","where":[["k","==","x"]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"set":["set",[1,2]]}},{"op":"mutate","table":"T","where":[],"mutations":[["set","insert",["set",[3,4,5]]]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"mutate","table":"T","where":[],"mutations":[["set","delete",["set",[1,2,3,4,5,6]]]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"mutate","table":"T","where":[],"mutations":[["nope","+=",1]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"update","table":"T","where":[],"row":{"nope":1}}]"#,
        r#"["diff",{"op":"select","table":"T","where":[["nope","==",1]]}]"#,
        r#"["diff",{"op":"select","table":"T","where":[],"columns":["nope"]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"mutate","table":"T","where":[],"mutations":[["k","/=",0]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"mutate","table":"T","where":[],"mutations":[["name","+=",1]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"mutate","table":"T","where":[],"mutations":[["k","insert",1]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"mutate","table":"T","where":[],"mutations":[["k","%=",0]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"set":["set",[1,2]]}},{"op":"mutate","table":"T","where":[],"mutations":[["set","*=",0]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"set":["set",[1,2]]}},{"op":"mutate","table":"T","where":[],"mutations":[["set","+=",9223372036854775807]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"map":["map",[["a",1]]]}},{"op":"mutate","table":"T","where":[],"mutations":[["map","+=",1]]}]"#,
        r#"["diff",{"op":"insert","table":"T","row":{"k":1}},{"op":"mutate","table":"T","where":[],"mutations":[["k","<<",1]]}]"#,
        r#"["diff",{"op":"select","table":"T","where":[["name","<",1]]}]"#,
        r#"["diff",{"op":"select","table":"T","where":[["k","includes","x"]]}]"#,
        r#"["diff",{"op":"select","table":"T","where":[["k","like",1]]}]"#,
        r#"["diff",{"op":"select","table":"T","where":[["nope","like",1]]}]"#,
        r#"["diff",{"op":"select","table":"T","where":[["map","<",1]]}]"#,
    ]
    .iter()
    .map(|t| t.as_bytes().to_vec())
    .collect();
    same_errors_as_the_real_server(&texts);
}
