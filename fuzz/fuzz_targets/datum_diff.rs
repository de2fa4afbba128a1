//! Fuzzes the JSON parser/writer, the type/schema parsers and the datum
//! codec plus column diffs. Invariants checked:
//! * nothing panics on any input;
//! * parsed JSON re-serializes to text that parses back to the same value;
//! * for two datums of one type: apply(old, diff(old, new)) == new, and the
//!   diff survives its own JSON round trip (relaxed parse);
//! * applying an arbitrary diff either errors (leaving the value unchanged)
//!   or yields a value within the type's size limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovsdb::json::{parse, parse_value, Json};
use ovsdb::{Database, DatabaseSchema, Datum, ReplayOptions, Type};
use std::sync::{Arc, OnceLock};

/// A small schema with strong and weak references, maps, an index and
/// maxRows, for replaying fuzzed txn records.
const SCHEMA: &str = r#"{"name":"F","tables":{
  "G":{"isRoot":true,"indexes":[["n"]],"columns":{
     "n":{"type":"string"},
     "m":{"type":{"key":{"type":"uuid","refTable":"I"},"min":0,"max":"unlimited"}},
     "w":{"type":{"key":{"type":"uuid","refTable":"I","refType":"weak"},"min":0,"max":3}},
     "b":{"type":{"key":"string","value":{"type":"uuid","refTable":"I","refType":"weak"},"min":0,"max":"unlimited"}},
     "k":{"type":{"key":{"type":"integer","minInteger":0,"maxInteger":9},"min":1,"max":4}}}},
  "I":{"columns":{"x":{"type":{"key":"real","min":0,"max":1}}}},
  "One":{"isRoot":true,"maxRows":1,"columns":{"v":{"type":"boolean"}}}}}"#;

fn schema() -> Arc<DatabaseSchema> {
    static S: OnceLock<Arc<DatabaseSchema>> = OnceLock::new();
    S.get_or_init(|| Arc::new(DatabaseSchema::parse(SCHEMA.as_bytes()).expect("schema")))
        .clone()
}

const ATOMS: [&str; 5] = ["integer", "real", "boolean", "string", "uuid"];

fn pick_type(b: &[u8]) -> Type {
    let k = ATOMS[(b.first().copied().unwrap_or(0) as usize) % 5];
    let v = b.get(1).copied().unwrap_or(0) as usize % 6;
    let min = b.get(2).copied().unwrap_or(0) as u32 % 2;
    let max = match b.get(3).copied().unwrap_or(0) % 4 {
        0 => "1".to_string(),
        1 => "2".to_string(),
        2 => "5".to_string(),
        _ => "\"unlimited\"".to_string(),
    };
    let j = if v < 5 {
        format!(
            r#"{{"key":"{k}","value":"{}","min":{min},"max":{max}}}"#,
            ATOMS[v]
        )
    } else {
        format!(r#"{{"key":"{k}","min":{min},"max":{max}}}"#)
    };
    Type::from_json(&parse_value(j.as_bytes()).expect("type json")).expect("type")
}

fuzz_target!(|data: &[u8]| {
    // JSON round trip.
    if let Ok(j) = parse(data) {
        let text = j.to_bytes();
        let again = parse(&text).expect("writer output must parse");
        // Reals are written with 15 digits and integral values re-parse as
        // integers (as in C), so the text is a fixed point only after one
        // normalization round.
        let text2 = again.to_bytes();
        assert_eq!(parse(&text2).expect("reparse").to_bytes(), text2);
        assert_eq!(j.serialized_len(), text.len());
        let _ = Type::from_json(&j);
        let _ = DatabaseSchema::from_json(&j);
        // Replay: a JSON array is a sequence of txn records applied to an
        // empty database; invariants must hold after each, and a failed
        // record must leave the database unchanged.
        if let Json::Array(txns) = &j {
            let mut db = Database::new(schema());
            for t in txns.iter().take(16) {
                let before = db.dump_json(true);
                if db.apply_txn_json(t, ReplayOptions::default()).is_err() {
                    assert_eq!(db.dump_json(true), before);
                }
                db.check_integrity().expect("integrity");
            }
        }
    }
    if data.len() < 4 {
        return;
    }
    let ty = pick_type(&data[..4]);
    let Ok(Json::Array(items)) = parse(&data[4..]) else {
        return;
    };
    let parsed: Vec<Option<Datum>> = items
        .iter()
        .map(|j| Datum::from_json(j, &ty).ok())
        .collect();
    // diff/apply between consecutive valid datums
    for w in parsed.windows(2) {
        if let (Some(old), Some(new)) = (&w[0], &w[1]) {
            let d = Datum::diff(old, new, &ty);
            let back = Datum::diff_from_json(&d.to_json(), &ty).expect("diff round trip");
            assert_eq!(back, d);
            let mut cur = old.clone();
            cur.apply_diff(&back, &ty).expect("apply own diff");
            assert_eq!(&cur, new);
        }
    }
    // arbitrary diffs against the first valid datum
    if let Some(Some(base)) = parsed.first() {
        for j in &items[1..] {
            if let Ok(d) = Datum::diff_from_json(j, &ty) {
                let mut cur = base.clone();
                match cur.apply_diff(&d, &ty) {
                    Ok(()) => assert!(cur.check_size(&ty).is_ok()),
                    Err(_) => assert_eq!(&cur, base),
                }
            }
        }
    }
});
