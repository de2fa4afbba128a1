//! IDL benchmarks (`cargo bench -p idl`), printing figures for
//! BENCHMARKS.md:
//! * replica apply rate for update2 messages (modify with column diffs,
//!   inserts, deletes);
//! * transaction build time at 10000 rows (read/write default vs
//!   WRITE_CHANGED_ONLY), including request serialisation.

use idl::experiments::{self, WcoParams};
use idl::replica::{Commit, Idl, IndexPolicy};
use ovsdb::json::{object, Json, Object};
use ovsdb::uuid::Uuid;
use ovsdb_server::DbMeta;
use std::sync::Arc;
use std::time::Instant;

const SCHEMA: &str = r#"{"name":"SB","version":"1.0.0","tables":{
 "Port_Binding":{"isRoot":true,"columns":{
   "logical_port":{"type":"string"},
   "tunnel_key":{"type":"integer"},
   "up":{"type":{"key":"boolean","min":0,"max":1}},
   "chassis":{"type":{"key":"uuid","min":0,"max":1}},
   "options":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}},
   "external_ids":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}}}}}}"#;

fn uuid(i: usize) -> String {
    Uuid::from_u128(0x1234_5678_9abc_def0_1111_2222_0000_0000 + i as u128).to_string()
}

fn tu(rows: Vec<(String, Json)>) -> Json {
    let mut r = Object::new();
    for (u, v) in rows {
        r.insert(u, v);
    }
    object(vec![("Port_Binding", Json::Object(r))])
}

fn bench_apply(n_rows: usize, per_msg: usize, with_index: Option<IndexPolicy>) -> (f64, f64) {
    let meta = Arc::new(DbMeta::from_text(SCHEMA).unwrap());
    let mut idl = Idl::new(meta, true);
    if let Some(p) = with_index {
        idl.index_create("Port_Binding", &["logical_port"]);
        idl.index_policy = p;
    }
    let initial: Vec<(String, Json)> = (0..n_rows)
        .map(|i| {
            (
                uuid(i),
                object(vec![(
                    "initial",
                    object(vec![
                        ("logical_port", Json::String(format!("lp{i}"))),
                        ("tunnel_key", Json::Integer(i as i64 + 1)),
                        (
                            "options",
                            Json::Array(vec![
                                Json::from("map"),
                                Json::Array(vec![Json::Array(vec![
                                    Json::from("requested-chassis"),
                                    Json::String(format!("ch{}", i % 30)),
                                ])]),
                            ]),
                        ),
                    ]),
                )]),
            )
        })
        .collect();
    idl.apply_table_updates(2, &tu(initial), true).unwrap();
    // Messages: each modifies `per_msg` rows: flips `up` and adds/removes
    // an external_ids key (a map diff).
    let n_msgs = 2000;
    let msgs: Vec<Json> = (0..n_msgs)
        .map(|m| {
            let rows = (0..per_msg)
                .map(|k| {
                    let i = (m * per_msg + k) % n_rows;
                    let round = (m * per_msg + k) / n_rows;
                    (
                        uuid(i),
                        object(vec![(
                            "modify",
                            object(vec![
                                ("up", Json::Bool(round.is_multiple_of(2))),
                                (
                                    "external_ids",
                                    Json::Array(vec![
                                        Json::from("map"),
                                        Json::Array(vec![Json::Array(vec![
                                            Json::from("iface-id-ver"),
                                            Json::from("1"),
                                        ])]),
                                    ]),
                                ),
                            ]),
                        )]),
                    )
                })
                .collect();
            object(vec![
                ("method", Json::from("update2")),
                (
                    "params",
                    Json::Array(vec![
                        Json::Array(vec![Json::from("monid"), Json::from("SB")]),
                        tu(rows),
                    ]),
                ),
                ("id", Json::Null),
            ])
        })
        .collect();
    let bytes: Vec<Vec<u8>> = msgs.iter().map(|m| m.to_bytes()).collect();
    let t = Instant::now();
    for b in &bytes {
        let m = ovsdb::json::parse(b).unwrap();
        let tu = &m.get("params").unwrap().as_array().unwrap()[1];
        idl.apply_table_updates(2, tu, false).unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    (n_msgs as f64 / secs, (n_msgs * per_msg) as f64 / secs)
}

fn main() {
    println!("== idl bench: replica apply rate for update2 messages (parse + apply)");
    for (rows, per, idx, label) in [
        (10_000, 1, None, "no index"),
        (10_000, 100, None, "no index"),
        (
            10_000,
            1,
            Some(IndexPolicy::EveryModify),
            "1 index, C policy",
        ),
        (
            10_000,
            1,
            Some(IndexPolicy::IndexedColumnsChanged),
            "1 index, changed-only",
        ),
    ] {
        let (mps, rps) = bench_apply(rows, per, idx);
        println!(
            "table {rows} rows, {per} row(s)/message, {label:<22}: {mps:>10.0} messages/s, {rps:>10.0} rows/s"
        );
    }

    println!("== idl bench: transaction build at 10000 rows x 6 columns, 1 changed");
    let mut best = [f64::MAX; 3];
    let mut bytes = [0usize; 3];
    for _ in 0..3 {
        let start = Instant::now();
        let mut clock = move || start.elapsed().as_secs_f64() * 1000.0;
        let r = experiments::write_changed_only(WcoParams::default(), &mut clock);
        for (i, m) in r.modes.iter().enumerate() {
            best[i] = best[i].min(m.build_ms);
            bytes[i] = m.request_bytes;
        }
    }
    for (i, name) in ["read/write default", "write-changed-only", "write-only"]
        .iter()
        .enumerate()
    {
        println!(
            "{name:<20}: build {:>8.2} ms (best of 3), request {:>9} bytes",
            best[i], bytes[i]
        );
    }

    // Serialisation alone of the default-mode request.
    let meta = Arc::new(DbMeta::from_text(SCHEMA).unwrap());
    let mut idl = Idl::new(meta, true);
    let initial: Vec<(String, Json)> = (0..10_000)
        .map(|i| {
            (
                uuid(i),
                object(vec![(
                    "initial",
                    object(vec![("logical_port", Json::String(format!("lp{i}")))]),
                )]),
            )
        })
        .collect();
    idl.apply_table_updates(2, &tu(initial), true).unwrap();
    let t = idl.table_index("Port_Binding").unwrap();
    let c = idl.column_index(t, "tunnel_key").unwrap();
    let uuids = idl.row_uuids(t);
    let start = Instant::now();
    idl.txn_begin();
    for (i, u) in uuids.iter().enumerate() {
        idl.txn_write(
            t,
            *u,
            c,
            ovsdb::datum::Datum::scalar(ovsdb::atom::Atom::Integer(i as i64 + 7)),
        );
    }
    let commit = idl.txn_commit();
    let build = start.elapsed().as_secs_f64() * 1000.0;
    if let Commit::Sent { request, .. } = commit {
        let s = Instant::now();
        let b = request.to_bytes();
        println!(
            "10000 single-column updates: build {:.2} ms, serialise {:.2} ms ({} bytes)",
            build,
            s.elapsed().as_secs_f64() * 1000.0,
            b.len()
        );
    }
}
