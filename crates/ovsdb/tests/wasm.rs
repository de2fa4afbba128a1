//! Browser tests (wasm32, headless Chromium via wasm-bindgen-test-runner):
//! the core JSON codec, hash order, datum diffs and the database run the
//! same in the browser as natively.
#![cfg(target_arch = "wasm32")]

use std::sync::Arc;

use ovsdb::json::{parse, shash_hash, shash_order, Json};
use ovsdb::{Atom, Database, DatabaseSchema, Datum, ReplayOptions, StorageMode, Type, Uuid};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn json_round_trip_and_numbers() {
    let text = br#"{"a":[1.0,2.1230e3,0.1,1e37,-0.0,"\u0041\n"],"b":{"c":null,"d":true}}"#;
    let j = parse(text).unwrap();
    assert_eq!(
        j.to_string_compact(),
        r#"{"a":[1,2123,0.1,1e+37,0,"A\n"],"b":{"c":null,"d":true}}"#
    );
    assert_eq!(j.serialized_len(), j.to_bytes().len());
    let deep = "[".repeat(100_000);
    assert!(parse(deep.as_bytes()).is_err());
}

#[wasm_bindgen_test]
fn hash_order_matches_native_vectors() {
    assert_eq!(shash_hash(b"_is_diff"), 0x75ceafcb);
    let ins = ["term", "index", "data", "eid"];
    let order: Vec<&str> = shash_order(&ins).into_iter().map(|i| ins[i]).collect();
    assert_eq!(order, ["eid", "data", "term", "index"]);
}

#[wasm_bindgen_test]
fn diff_apply_round_trip() {
    let ty = Type::from_json(
        &parse(br#"{"key":"string","value":"string","min":0,"max":"unlimited"}"#).unwrap(),
    )
    .unwrap();
    let old = Datum::map([
        (Atom::from("a"), Atom::from("1")),
        (Atom::from("b"), Atom::from("2")),
    ]);
    let new = Datum::map([
        (Atom::from("b"), Atom::from("20")),
        (Atom::from("c"), Atom::from("3")),
    ]);
    let d = Datum::diff(&old, &new, &ty);
    assert_eq!(
        d.to_json().to_string_compact(),
        r#"["map",[["a","1"],["b","20"],["c","3"]]]"#
    );
    let mut cur = old.clone();
    cur.apply_diff(&d, &ty).unwrap();
    assert_eq!(cur, new);
}

#[wasm_bindgen_test]
fn database_replay_in_browser() {
    let schema = DatabaseSchema::parse(
        br#"{"name":"T","tables":{"G":{"isRoot":true,"columns":{"m":{"type":{"key":{"type":"uuid","refTable":"I"},"min":0,"max":"unlimited"}}}},"I":{"columns":{"n":{"type":"integer"}}}}}"#,
    )
    .unwrap();
    let mut db = Database::new(Arc::new(schema));
    let g = Uuid(1 << 100);
    let i = Uuid(2 << 100);
    let t1 = parse(
        format!(
            r#"{{"I":{{"{i}":{{"n":1}}}},"G":{{"{g}":{{"m":["uuid","{i}"]}}}},"_is_diff":true}}"#
        )
        .as_bytes(),
    )
    .unwrap();
    db.apply_txn_json(&t1, ReplayOptions::default()).unwrap();
    let t2 =
        parse(format!(r#"{{"G":{{"{g}":{{"m":["uuid","{i}"]}}}},"_is_diff":true}}"#).as_bytes())
            .unwrap();
    let c = db.apply_txn_json(&t2, ReplayOptions::default()).unwrap();
    // removing the only reference garbage-collects the row
    assert!(db.row("I", &i).is_none());
    assert_eq!(c.row_count(), 2);
    let full = Json::Object(db.txn_to_json(&c, StorageMode::Full)).sorted_recursive();
    assert_eq!(
        full.to_string_compact(),
        format!(r#"{{"G":{{"{g}":{{"m":["set",[]]}}}},"I":{{"{i}":null}}}}"#)
    );
}
