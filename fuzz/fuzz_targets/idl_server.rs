//! Fuzz target `idl_server`: the `ovsdb-server` crate's in-memory server
//! model, also every simulated server's database. See README-idl_server.md.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovsdb::json::Json;
use ovsdb_server::{entry_data, Server, ServerOptions};

/// A small schema with the shapes that matter: strong and weak references,
/// a non-root table (garbage collection), maps, optional columns, an index
/// and maxRows.
const SCHEMA: &str = r#"{"name":"F","version":"1.0.0","tables":{
 "R":{"isRoot":true,"indexes":[["name"]],"maxRows":20,"columns":{
   "name":{"type":"string"},
   "n":{"type":{"key":{"type":"integer","minInteger":-5,"maxInteger":50}}},
   "kids":{"type":{"key":{"type":"uuid","refTable":"C"},"min":0,"max":"unlimited"}},
   "peer":{"type":{"key":{"type":"uuid","refTable":"R","refType":"weak"},"min":0,"max":1}},
   "tags":{"type":{"key":"string","value":"integer","min":0,"max":"unlimited"}}}},
 "C":{"columns":{
   "v":{"type":"integer"},
   "back":{"type":{"key":{"type":"uuid","refTable":"R","refType":"weak"},"min":0,"max":"unlimited"}}}}}}"#;

fn server(seed: u64) -> Server {
    Server::from_schema_text(
        SCHEMA,
        ServerOptions {
            clustered: true,
            seed,
            ..Default::default()
        },
    )
    .expect("schema parses")
}

fuzz_target!(|data: &[u8]| {
    let mut leader = server(1);
    let mut full = server(2);
    let mut diff = server(3);
    let session = leader.connect();
    for line in data.split(|b| *b == b'\n') {
        let Ok(j) = ovsdb::json::parse(line) else {
            continue;
        };
        match &j {
            // A transaction's operations: prepared (must not change the
            // database), then installed on the leader and replayed on two
            // replicas from its full-value and diff records: all three
            // databases must stay equal.
            Json::Array(ops) => {
                let before = leader.dump();
                let out = leader.prepare(ops);
                assert_eq!(leader.dump(), before, "prepare changed the database");
                if let Some(c) = out.commit {
                    for (replica, is_diff) in [(&mut full, false), (&mut diff, true)] {
                        let e = entry_data(&leader.meta, &c, is_diff, 0);
                        let rec = &e.as_array().unwrap()[1];
                        replica.apply_record(rec).expect("replica replays the record");
                    }
                    leader.apply_commit(&c).expect("fresh commit installs");
                    let d = leader.dump();
                    assert_eq!(d, full.dump(), "full-value replica differs");
                    assert_eq!(d, diff.dump(), "diff replica differs");
                }
            }
            // Anything else: as a JSON-RPC message, and as a log record
            // (which may fail, but then must change nothing).
            _ => {
                let _ = leader.handle(session, &j);
                let before = full.dump();
                if full.apply_record(&j).is_err() {
                    assert_eq!(full.dump(), before, "a refused record changed rows");
                }
                // Keep the replicas in step with the leader for the next
                // transaction lines.
                full = server(2);
                diff = server(3);
                let d = leader.dump();
                let Some(rows) = d.as_object() else { continue };
                let mut rec = ovsdb::json::Object::new();
                for (t, r) in rows.iter() {
                    rec.insert(t, r.clone());
                }
                let rec = Json::Object(rec);
                full.apply_record(&rec).expect("dump replays");
                diff.apply_record(&rec).expect("dump replays");
            }
        }
    }
});
