//! Datum JSON codec and column diffs: vectors from ovsdb-data.at and
//! ovsdb-formats.md §4.5, plus a property test of apply(old, diff) == new.

#![cfg(not(target_arch = "wasm32"))]

use ovsdb::json::{parse_value, Json};
use ovsdb::{Atom, Datum, Type, Uuid};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

fn ty(s: &str) -> Type {
    Type::from_json(&parse_value(s.as_bytes()).unwrap()).unwrap()
}
fn j(s: &str) -> Json {
    parse_value(s.as_bytes()).unwrap()
}
fn datum(t: &Type, s: &str) -> Datum {
    Datum::from_json(&j(s), t).unwrap()
}
fn show(d: &Datum) -> String {
    d.to_json().to_string_compact()
}

#[test]
fn atoms_from_json() {
    let int = ty(r#""integer""#);
    for (i, o) in [
        ("0", "0"),
        ("-1", "-1"),
        ("1e3", "1000"),
        ("9223372036854775807", "9223372036854775807"),
    ] {
        assert_eq!(show(&datum(&int, i)), o);
    }
    let real = ty(r#""real""#);
    for (i, o) in [
        ("0", "0"),
        ("0.0", "0"),
        ("-0.0", "0"),
        ("-1.25", "-1.25"),
        ("1e3", "1000"),
        ("1e37", "1e+37"),
        ("0.00390625", "0.00390625"),
    ] {
        assert_eq!(show(&datum(&real, i)), o);
    }
    let s = ty(r#""string""#);
    assert_eq!(
        show(&datum(&s, r#""\"\\\/\b\f\n\r\t""#)),
        r#""\"\\/\b\f\n\r\t""#
    );
    let u = ty(r#""uuid""#);
    assert_eq!(
        show(&datum(
            &u,
            r#"["uuid", "550e8400-e29b-41d4-a716-446655440000"]"#
        )),
        r#"["uuid","550e8400-e29b-41d4-a716-446655440000"]"#
    );
    // rejections
    assert!(Datum::from_json(&j("0.5"), &int).is_err());
    assert!(Datum::from_json(&j(r#""true""#), &ty(r#""boolean""#)).is_err());
    assert!(Datum::from_json(&j("1"), &s).is_err());
    assert!(Datum::from_json(&j(r#""550e8400-e29b-41d4-a716-446655440000""#), &u).is_err());
    assert!(Datum::from_json(&j(r#"["named-uuid", "x"]"#), &u).is_err());
}

#[test]
fn atom_sorting() {
    let t = ty(r#"{"key":"real","min":0,"max":"unlimited"}"#);
    assert!(
        Datum::from_json(&j(r#"["set",[1.25,1.23,0.0,-0.0,-1e99]]"#), &t).is_err(),
        "0.0 and -0.0 are duplicates"
    );
    assert_eq!(
        show(&datum(&t, r#"["set",[1.25,1.23,0.0,-1e99]]"#)),
        r#"["set",[-1e+99,0,1.23,1.25]]"#
    );
    let t = ty(r#"{"key":"string","min":0,"max":"unlimited"}"#);
    assert_eq!(
        show(&datum(&t, r#"["set",["abd","abc","\b","xxx"]]"#)),
        r#"["set",["\b","abc","abd","xxx"]]"#
    );
    // UUIDs order by their text.
    let mut texts: Vec<String> = (0..32)
        .map(|i| {
            let v: u128 = 1u128 << (4 * i);
            Uuid(v).to_string()
        })
        .collect();
    let t = ty(r#"{"key":"uuid","min":0,"max":"unlimited"}"#);
    let input = format!(
        "[\"set\",[{}]]",
        texts
            .iter()
            .map(|s| format!("[\"uuid\",\"{s}\"]"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let d = datum(&t, &input);
    texts.sort();
    let got: Vec<String> = d.keys().map(|a| a.as_uuid().unwrap().to_string()).collect();
    assert_eq!(got, texts);
}

#[test]
fn constraints() {
    let e = |t: &str, v: &str| Datum::from_json(&j(v), &ty(t)).unwrap_err().to_string();
    assert_eq!(
        e(
            r#"{"key":{"type":"integer","enum":["set",[1,6,8,10]]}}"#,
            "0"
        ),
        "constraint violation: 0 is not one of the allowed values ([1, 6, 8, 10])"
    );
    assert_eq!(
        e(
            r#"{"key":{"type":"string","enum":["set",["abc","def"]]}}"#,
            r#""""#
        ),
        "constraint violation: \"\" is not one of the allowed values ([abc, def])"
    );
    assert_eq!(
        e(r#"{"key":{"type":"integer","minInteger":5}}"#, "4"),
        "constraint violation: 4 is less than minimum allowed value 5"
    );
    assert_eq!(
        e(r#"{"key":{"type":"integer","maxInteger":-1}}"#, "0"),
        "constraint violation: 0 is greater than maximum allowed value -1"
    );
    assert_eq!(
        e(
            r#"{"key":{"type":"real","minReal":-10,"maxReal":10}}"#,
            "11"
        ),
        "constraint violation: 11 is not in the valid range -10 to 10 (inclusive)"
    );
    assert_eq!(
        e(
            r#"{"key":{"type":"string","minLength":2}}"#,
            r#""\ud834\udd1e""#
        ),
        "constraint violation: \"\u{1d11e}\" length 1 is less than minimum allowed length 2"
    );
    assert_eq!(
        e(r#"{"key":{"type":"string","maxLength":2}}"#, r#""abc""#),
        "constraint violation: \"abc\" length 3 is greater than maximum allowed length 2"
    );
    let b = ty(r#"{"key":{"type":"boolean","enum":false}}"#);
    assert!(Datum::from_json(&j("false"), &b).is_ok());
    assert!(Datum::from_json(&j("true"), &b).is_err());
}

#[test]
fn sets_and_maps() {
    let t = ty(r#"{"key": "boolean", "min": 0}"#);
    assert_eq!(show(&datum(&t, "true")), "true");
    assert_eq!(show(&datum(&t, r#"["set",[false]]"#)), "false");
    assert_eq!(show(&datum(&t, r#"["set",[]]"#)), r#"["set",[]]"#);
    let t = ty(r#"{"key": "string", "min": 0, "max": 3}"#);
    assert_eq!(
        show(&datum(
            &t,
            r#"["set", ["zzz", "short string", "a relatively long string"]]"#
        )),
        r#"["set",["a relatively long string","short string","zzz"]]"#
    );
    assert!(Datum::from_json(&j(r#"["set",["a","b","c","d"]]"#), &t).is_err());
    for (tt, v) in [
        (
            r#"{"key": "boolean", "max": 5}"#,
            r#"["set", [true, true]]"#,
        ),
        (
            r#"{"key": "integer", "max": 5}"#,
            r#"["set", [1, 2, 3, 1]]"#,
        ),
        (
            r#"{"key": "string", "max": 5}"#,
            r#"["set", ["asdf", "ASDF", "asdf"]]"#,
        ),
    ] {
        assert!(Datum::from_json(&j(v), &ty(tt))
            .unwrap_err()
            .details
            .contains("duplicate"));
    }
    let t = ty(r#"{"key": "integer", "value": "boolean", "max": "unlimited"}"#);
    assert_eq!(
        show(&datum(
            &t,
            r#"["map", [[3, false], [0, true], [4, false]]]"#
        )),
        r#"["map",[[0,true],[3,false],[4,false]]]"#
    );
    assert!(
        Datum::from_json(&j(r#"["map", [[1, true], [2, false], [1, false]]]"#), &t)
            .unwrap_err()
            .details
            .contains("duplicate key")
    );
    let t = ty(r#"{"key": "uuid", "value": "real", "min": 1, "max": 5}"#);
    assert_eq!(
        show(&datum(
            &t,
            r#"["map", [[["uuid", "cad8542b-6ee1-486b-971b-7dcbf6e14979"], 1.0], [["uuid", "1c92b8ca-d5e4-4628-a85d-1dc2d099a99a"], 5.0]]]"#
        )),
        r#"["map",[[["uuid","1c92b8ca-d5e4-4628-a85d-1dc2d099a99a"],5],[["uuid","cad8542b-6ee1-486b-971b-7dcbf6e14979"],1]]]"#
    );
    // a one-element map is still written as a map; a map requires ["map",..]
    let t = ty(r#"{"key": "integer", "value": "boolean"}"#);
    assert_eq!(
        show(&datum(&t, r#"["map", [[1, true]]]"#)),
        r#"["map",[[1,true]]]"#
    );
    assert!(Datum::from_json(&j("1"), &t).is_err());
    // write_json and json_len agree with to_json
    for (tt, v) in [
        (
            r#"{"key": "uuid", "value": "real", "min": 1, "max": 5}"#,
            r#"["map", [[["uuid", "cad8542b-6ee1-486b-971b-7dcbf6e14979"], 1.5]]]"#,
        ),
        (
            r#"{"key": "string", "min": 0, "max": 3}"#,
            r#"["set", ["a\n", "b"]]"#,
        ),
        (r#"{"key": "string", "min": 0, "max": 3}"#, r#"["set", []]"#),
        (
            r#""uuid""#,
            r#"["uuid", "cad8542b-6ee1-486b-971b-7dcbf6e14979"]"#,
        ),
        (
            r#"{"key": "boolean", "value": "integer", "min": 0, "max": 2}"#,
            r#"["map", [[true, -5], [false, 7]]]"#,
        ),
    ] {
        let d = datum(&ty(tt), v);
        let mut w = Vec::new();
        d.write_json(&mut w);
        assert_eq!(w, d.to_json().to_bytes());
        assert_eq!(d.json_len(), w.len());
    }
}

#[test]
fn defaults() {
    assert_eq!(show(&Datum::default_for(&ty(r#""integer""#))), "0");
    assert_eq!(
        show(&Datum::default_for(&ty(r#""uuid""#))),
        r#"["uuid","00000000-0000-0000-0000-000000000000"]"#
    );
    assert_eq!(
        show(&Datum::default_for(&ty(
            r#"{"key":"string","min":0,"max":1}"#
        ))),
        r#"["set",[]]"#
    );
    assert_eq!(
        show(&Datum::default_for(&ty(
            r#"{"key":"string","value":"real"}"#
        ))),
        r#"["map",[["",0]]]"#
    );
    let t = ty(r#""real""#);
    assert!(Datum::scalar(Atom::Real(-0.0)).is_default(&t));
    assert!(!datum(&t, "1").is_default(&t));
}

/// Runs one `diff-data` vector: diff, apply, check.
fn diff_case(t: &Type, old: &str, new: &str, want_diff: &str) {
    let old = Datum::diff_from_json(&j(old), t).unwrap();
    let new = Datum::diff_from_json(&j(new), t).unwrap();
    let d = Datum::diff(&old, &new, t);
    assert_eq!(show(&d), want_diff);
    // round trip through JSON (relaxed) like a file reader
    let d2 = Datum::diff_from_json(&d.to_json(), t).unwrap();
    assert_eq!(d2, d);
    let mut cur = old.clone();
    cur.apply_diff(&d2, t).unwrap();
    assert_eq!(cur, new);
}

#[test]
fn upstream_diff_vectors() {
    diff_case(&ty(r#""integer""#), "0", "2", "2");
    diff_case(&ty(r#""boolean""#), "true", "false", "false");
    diff_case(&ty(r#""string""#), r#""AAA""#, r#""BBB""#, r#""BBB""#);
    let set = ty(r#"{"key": "integer", "min":0, "max": 3}"#);
    diff_case(
        &set,
        r#"["set", [0, 1]]"#,
        r#"["set", [1,2]]"#,
        r#"["set",[0,2]]"#,
    );
    diff_case(&set, r#"["set", [0, 1]]"#, r#"["set", [1]]"#, "0");
    diff_case(
        &set,
        r#"["set", []]"#,
        r#"["set", [0, 1]]"#,
        r#"["set",[0,1]]"#,
    );
    diff_case(
        &set,
        r#"["set", [0, 1]]"#,
        r#"["set", []]"#,
        r#"["set",[0,1]]"#,
    );
    // size error: [0,1] -> [1,2,3,4] with max 3
    let old = datum(&set, r#"["set", [0, 1]]"#);
    let new = Datum::diff_from_json(&j(r#"["set", [1, 2, 3, 4]]"#), &set).unwrap();
    let d = Datum::diff(&old, &new, &set);
    assert_eq!(show(&d), r#"["set",[0,2,3,4]]"#);
    let mut cur = old.clone();
    let err = cur.apply_diff(&d, &set).unwrap_err();
    assert_eq!(err.details, "Datum crated by diff has size error");
    assert_eq!(cur, old, "failed apply leaves the value unchanged");

    let map = ty(r#"{"key": "string", "value": "string", "min":0, "max": 3}"#);
    let g = r#"["map", [["2 gills", "1 chopin"]]]"#;
    diff_case(
        &map,
        g,
        r#"["map", [["2 pints", "1 quart"]]]"#,
        r#"["map",[["2 gills","1 chopin"],["2 pints","1 quart"]]]"#,
    );
    diff_case(&map, g, g, r#"["map",[]]"#);
    diff_case(
        &map,
        g,
        r#"["map", []]"#,
        r#"["map",[["2 gills","1 chopin"]]]"#,
    );
    diff_case(
        &map,
        r#"["map", []]"#,
        r#"["map", [["2 pints", "1 quart"]]]"#,
        r#"["map",[["2 pints","1 quart"]]]"#,
    );
    diff_case(
        &map,
        g,
        r#"["map", [["2 gills", "1 gallon"]]]"#,
        r#"["map",[["2 gills","1 gallon"]]]"#,
    );
    let new = Datum::diff_from_json(
        &j(r#"["map", [["2 gills", "1 gallon"], ["2 pints", "1 quart"], ["2 quarts", "1 pottle"], ["2 gallons", "1 peck"]]]"#),
        &map,
    )
    .unwrap();
    let old = datum(&map, g);
    let d = Datum::diff(&old, &new, &map);
    assert_eq!(
        old.clone().apply_diff(&d, &map).unwrap_err().details,
        "Datum crated by diff has size error"
    );
}

#[test]
fn spec_worked_examples() {
    // §4.5 B: one map value changed.
    let m = ty(r#"{"key":"string","value":"string","min":0,"max":"unlimited"}"#);
    diff_case(
        &m,
        r#"["map",[["a","1"],["b","2"],["c","3"]]]"#,
        r#"["map",[["a","1"],["b","20"],["c","3"]]]"#,
        r#"["map",[["b","20"]]]"#,
    );
    // C: a key removed (old value) and another added.
    diff_case(
        &m,
        r#"["map",[["k1","v1"],["k2","v2"]]]"#,
        r#"["map",[["k2","v2"],["k3","v3"]]]"#,
        r#"["map",[["k1","v1"],["k3","v3"]]]"#,
    );
    // E: non-composite columns are full replacements.
    diff_case(&ty(r#""integer""#), "0", "5", "5");
    diff_case(
        &ty(r#"{"key":"string","min":0,"max":1}"#),
        r#""x""#,
        r#"["set",[]]"#,
        r#"["set",[]]"#,
    );
    // F: diff applied to a default-valued min-1 set.
    let f = ty(r#"{"key":"string","min":1,"max":"unlimited"}"#);
    let mut cur = Datum::default_for(&f);
    let d = Datum::diff_from_json(&j(r#""x""#), &f).unwrap();
    cur.apply_diff(&d, &f).unwrap();
    assert_eq!(show(&cur), r#"["set",["","x"]]"#);
    // A: a 4000-element uuid set gains one element; the diff is a bare atom.
    let a = ty(r#"{"key":"uuid","min":0,"max":"unlimited"}"#);
    let old = Datum::set((1..=4000u128).map(|i| Atom::Uuid(Uuid(i << 64 | i))));
    let mut new = old.clone();
    new.union_with(&Datum::scalar(Atom::Uuid(Uuid(4001u128 << 64 | 4001))));
    let d = Datum::diff(&old, &new, &a);
    assert_eq!(d.len(), 1);
    assert_eq!(d.json_len(), 47);
    assert_eq!(new.json_len(), 48 * 4001 + 9);
    let mut cur = old.clone();
    cur.apply_diff(&d, &a).unwrap();
    assert_eq!(cur, new);
}

// ---------------------------------------------------------------------------
// Property test over random typed datums.

fn arb_atomic() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("integer"),
        Just("real"),
        Just("boolean"),
        Just("string"),
        Just("uuid")
    ]
}

fn arb_atom(t: &'static str) -> BoxedStrategy<Atom> {
    match t {
        "integer" => (-20i64..20).prop_map(Atom::Integer).boxed(),
        "real" => (-20i32..20)
            .prop_map(|i| Atom::Real(f64::from(i) / 4.0))
            .boxed(),
        "boolean" => any::<bool>().prop_map(Atom::Boolean).boxed(),
        "string" => "[a-c]{0,3}".prop_map(Atom::String).boxed(),
        _ => (0u128..40)
            .prop_map(|i| Atom::Uuid(Uuid(i * 0x1234_5678_9abc_def1)))
            .boxed(),
    }
}

/// (type, old, new) with old and new valid for the type.
fn arb_case() -> impl Strategy<Value = (Type, Datum, Datum)> {
    (
        arb_atomic(),
        proptest::option::of(arb_atomic()),
        0u32..2,
        prop_oneof![Just(1u32), Just(2), Just(5), Just(u32::MAX)],
    )
        .prop_flat_map(|(k, v, min, max)| {
            let tj = match v {
                Some(v) => format!(
                    r#"{{"key":"{k}","value":"{v}","min":{min},"max":{}}}"#,
                    if max == u32::MAX {
                        "\"unlimited\"".to_string()
                    } else {
                        max.to_string()
                    }
                ),
                None => format!(
                    r#"{{"key":"{k}","min":{min},"max":{}}}"#,
                    if max == u32::MAX {
                        "\"unlimited\"".to_string()
                    } else {
                        max.to_string()
                    }
                ),
            };
            let t = ty(&tj);
            let cap = if max == u32::MAX { 8 } else { max as usize };
            let elems = match v {
                Some(v) => {
                    proptest::collection::btree_map(arb_atom(k), arb_atom(v), min as usize..=cap)
                        .prop_map(|m| Datum::Map(m.into_iter().collect()))
                        .boxed()
                }
                None => proptest::collection::btree_set(arb_atom(k), min as usize..=cap)
                    .prop_map(|s| Datum::Set(s.into_iter().collect()))
                    .boxed(),
            };
            (Just(t), elems.clone(), elems)
        })
        .prop_filter("sizes within type", |(t, a, b)| {
            a.check_size(t).is_ok() && b.check_size(t).is_ok()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)))]
    #[test]
    fn apply_diff_inverts_diff((t, old, new) in arb_case()) {
        let d = Datum::diff(&old, &new, &t);
        // serialize + parse the diff relaxed, as a log reader would
        let back = Datum::diff_from_json(&d.to_json(), &t).unwrap();
        prop_assert_eq!(&back, &d);
        let mut cur = old.clone();
        cur.apply_diff(&back, &t).unwrap();
        prop_assert_eq!(&cur, &new);
        // the value itself round-trips through JSON with full checks
        prop_assert_eq!(Datum::from_json(&new.to_json(), &t).unwrap(), new.clone());
        // diff of equal values is empty for composite types
        if t.is_composite() {
            prop_assert!(Datum::diff(&new, &new, &t).is_empty());
        }
    }
}

/// (type, old, new) for unlimited integer sets and maps of up to 100
/// elements: across the small (`Vec`) and large (B-tree) forms.
fn arb_large_case() -> impl Strategy<Value = (Type, Datum, Datum)> {
    any::<bool>().prop_flat_map(|is_map| {
        let key = || (-150i64..150).prop_map(Atom::Integer);
        if is_map {
            let t = ty(r#"{"key":"integer","value":"integer","min":0,"max":"unlimited"}"#);
            let m = || {
                proptest::collection::btree_map(key(), (0i64..3).prop_map(Atom::Integer), 0..100)
                    .prop_map(|m| Datum::Map(m.into_iter().collect()))
            };
            (Just(t), m(), m()).boxed()
        } else {
            let t = ty(r#"{"key":"integer","min":0,"max":"unlimited"}"#);
            let s = || {
                proptest::collection::btree_set(key(), 0..100)
                    .prop_map(|s| Datum::Set(s.into_iter().collect()))
            };
            (Just(t), s(), s()).boxed()
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)))]
    /// Diffs, ordering and JSON of large values behave as they did on
    /// `BTreeSet`/`BTreeMap`, whatever form each side is in.
    #[test]
    fn large_values_as_btree((t, old, new) in arb_large_case()) {
        let d = Datum::diff(&old, &new, &t);
        let back = Datum::diff_from_json(&d.to_json(), &t).unwrap();
        prop_assert_eq!(&back, &d);
        let mut cur = old.clone();
        cur.apply_diff(&back, &t).unwrap();
        prop_assert_eq!(&cur, &new);
        prop_assert_eq!(Datum::from_json(&new.to_json(), &t).unwrap(), new.clone());
        let mut buf = Vec::new();
        cur.write_json(&mut buf);
        prop_assert_eq!(buf.len(), cur.json_len());
        prop_assert_eq!(buf, new.to_json().to_string_compact().into_bytes());
        match (&old, &new) {
            (Datum::Set(a), Datum::Set(b)) => {
                let (x, y): (BTreeSet<Atom>, BTreeSet<Atom>) =
                    (a.iter().cloned().collect(), b.iter().cloned().collect());
                prop_assert_eq!(old.cmp(&new), x.cmp(&y));
                let sd: Vec<&Atom> = x.symmetric_difference(&y).collect();
                prop_assert!(d.keys().eq(sd));
            }
            (Datum::Map(a), Datum::Map(b)) => {
                let (x, y): (BTreeMap<Atom, Atom>, BTreeMap<Atom, Atom>) = (
                    a.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                    b.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                );
                prop_assert_eq!(old.cmp(&new), x.cmp(&y));
            }
            _ => prop_assert!(false),
        }
        // Removing everything one by one (through diffs) ends empty.
        let mut cur = new.clone();
        let all = Datum::diff(&Datum::empty(&t), &new, &t);
        cur.apply_diff(&all, &t).unwrap();
        prop_assert!(cur.is_empty());
        prop_assert_eq!(cur, Datum::empty(&t));
    }
}
