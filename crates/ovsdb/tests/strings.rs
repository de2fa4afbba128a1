//! The ovs-vsctl/ovn-nbctl string syntax: values of each kind of column
//! type, printing, comparison, and every error kind.

use ovsdb::strings::{
    compare_3way, datum_from_string, datum_to_string, excludes_all, includes_all, parse_token,
    StringsError,
};
use ovsdb::{Atom, AtomicType, BaseType, Datum, Json, Type, Uuid, UNLIMITED};
use std::cmp::Ordering;

fn ty(j: &str) -> Type {
    Type::from_json(&ovsdb::json::parse_value(j.as_bytes()).unwrap()).unwrap()
}

fn s(v: &str) -> Atom {
    Atom::String(v.into())
}

#[test]
fn tokens() {
    assert_eq!(parse_token("abc=def").unwrap(), ("abc".into(), "=def"));
    assert_eq!(parse_token("a\\=b=c").unwrap(), ("a=b".into(), "=c"));
    assert_eq!(
        parse_token("\"a,b\\n\",x").unwrap(),
        ("\"a,b\\n\"".into(), ",x")
    );
    assert!(matches!(
        parse_token("abc\\"),
        Err(StringsError::TrailingBackslash { .. })
    ));
    assert!(matches!(
        parse_token("\"abc"),
        Err(StringsError::UnterminatedQuote { .. })
    ));
}

#[test]
fn scalars() {
    let int = Type::scalar(AtomicType::Integer);
    assert_eq!(datum_from_string(&int, "-42").unwrap(), Datum::scalar(-42));
    assert_eq!(datum_from_string(&int, " 7 ").unwrap(), Datum::scalar(7));
    let b = Type::scalar(AtomicType::Boolean);
    for (t, v) in [
        ("true", true),
        ("yes", true),
        ("on", true),
        ("1", true),
        ("off", false),
        ("0", false),
    ] {
        assert_eq!(datum_from_string(&b, t).unwrap(), Datum::scalar(v), "{t}");
    }
    let st = Type::scalar(AtomicType::String);
    assert_eq!(
        datum_from_string(&st, "sw0").unwrap(),
        Datum::scalar(s("sw0"))
    );
    assert_eq!(
        datum_from_string(&st, "\"00:00:00:00:00:01 10.0.0.1\"").unwrap(),
        Datum::scalar(s("00:00:00:00:00:01 10.0.0.1"))
    );
    assert_eq!(
        datum_from_string(&st, "\"\"").unwrap(),
        Datum::scalar(s(""))
    );
    let u = Type::scalar(AtomicType::Uuid);
    let id = "3e9f0d5c-5c7b-4b7a-9a0e-0123456789ab";
    assert_eq!(
        datum_from_string(&u, id).unwrap(),
        Datum::scalar(Uuid::parse(id).unwrap())
    );
    let r = Type::scalar(AtomicType::Real);
    assert_eq!(datum_from_string(&r, "2.5").unwrap(), Datum::scalar(2.5));
}

#[test]
fn sets_and_maps() {
    let set = ty(r#"{"key":"string","min":0,"max":"unlimited"}"#);
    let want = Datum::set([s("a"), s("b c")]);
    assert_eq!(datum_from_string(&set, "[a, \"b c\"]").unwrap(), want);
    assert_eq!(datum_from_string(&set, "a,\"b c\"").unwrap(), want);
    assert_eq!(datum_from_string(&set, "[]").unwrap(), Datum::set([]));
    // A set given twice the same element is an error, as in OVS
    // (`ovsdb_datum_from_string`; the vector "duplicate string not allowed
    // in string set" in testdata/ovsdb-data.txt).
    assert!(matches!(
        datum_from_string(&set, "[b, a, b]"),
        Err(StringsError::DuplicateValue { .. })
    ));
    let ints = ty(r#"{"key":"integer","min":0,"max":"unlimited"}"#);
    assert_eq!(
        datum_from_string(&ints, "[1, 3-5]").unwrap(),
        Datum::set([1i64, 3, 4, 5].map(Atom::Integer))
    );
    let map = ty(r#"{"key":"string","value":"string","min":0,"max":"unlimited"}"#);
    assert_eq!(
        datum_from_string(&map, "{a=1, b=\"x y\"}").unwrap(),
        Datum::map([(s("a"), s("1")), (s("b"), s("x y"))])
    );
    assert_eq!(datum_from_string(&map, "a=1").unwrap().len(), 1);
    assert_eq!(datum_from_string(&map, "{}").unwrap(), Datum::map([]));
    let imap = ty(r#"{"key":"integer","value":{"type":"uuid"},"min":0,"max":"unlimited"}"#);
    let u = "3e9f0d5c-5c7b-4b7a-9a0e-0123456789ab";
    assert_eq!(
        datum_from_string(&imap, &format!("{{10={u}}}")).unwrap(),
        Datum::map([(Atom::Integer(10), Atom::Uuid(Uuid::parse(u).unwrap()))])
    );
}

#[test]
fn errors() {
    let int = Type::scalar(AtomicType::Integer);
    let st = Type::scalar(AtomicType::String);
    let set = ty(r#"{"key":"string","min":0,"max":"unlimited"}"#);
    let map = ty(r#"{"key":"string","value":"string","min":0,"max":"unlimited"}"#);
    let opt = ty(r#"{"key":"string","min":0,"max":1}"#);
    let e = |t: &Type, v: &str| datum_from_string(t, v).unwrap_err();
    assert!(matches!(e(&int, "x1"), StringsError::BadInteger { .. }));
    assert!(matches!(e(&int, "1.5"), StringsError::BadInteger { .. }));
    assert!(matches!(
        e(&Type::scalar(AtomicType::Boolean), "maybe"),
        StringsError::BadBoolean { .. }
    ));
    assert!(matches!(
        e(&Type::scalar(AtomicType::Real), "abc"),
        StringsError::BadReal { .. }
    ));
    assert!(matches!(
        e(&Type::scalar(AtomicType::Uuid), "1234"),
        StringsError::BadUuid { .. }
    ));
    assert!(matches!(
        e(&st, ""),
        StringsError::EmptyNeedsBrackets { map: false }
    ));
    assert!(matches!(
        e(&map, "  "),
        StringsError::EmptyNeedsBrackets { map: true }
    ));
    assert!(matches!(
        e(&set, "[a"),
        StringsError::MissingEnd { end: ']', .. }
    ));
    assert!(matches!(
        e(&set, "[a] b"),
        StringsError::TrailingGarbage { .. }
    ));
    assert!(matches!(
        e(&set, "[=a]"),
        StringsError::UnexpectedChar { found: '=', .. }
    ));
    assert!(matches!(
        e(&map, "{a}"),
        StringsError::ExpectedEquals { .. }
    ));
    assert!(matches!(
        e(&map, "{a=1, a=2}"),
        StringsError::DuplicateKey { .. }
    ));
    assert!(matches!(
        e(&opt, "[a, b]"),
        StringsError::Count { n: 2, max: 1, .. }
    ));
    assert!(matches!(
        e(&st, "[]"),
        StringsError::Count { n: 0, min: 1, .. }
    ));
    assert!(matches!(
        e(&st, "\"abc\\q\""),
        StringsError::BadQuotedString { .. }
    ));
    let ints = ty(r#"{"key":"integer","min":0,"max":"unlimited"}"#);
    assert!(matches!(e(&ints, "[5-3]"), StringsError::BadRange { .. }));
    assert!(matches!(
        e(&ints, "[0-99999]"),
        StringsError::BadRange { .. }
    ));
    let en = ty(r#"{"key":{"type":"string","enum":["set",["snat","dnat"]]}}"#);
    assert!(matches!(e(&en, "masq"), StringsError::Constraint { .. }));
    assert_eq!(
        datum_from_string(&en, "snat").unwrap(),
        Datum::scalar(s("snat"))
    );
    let ranged = ty(r#"{"key":{"type":"integer","minInteger":0,"maxInteger":4095}}"#);
    assert!(matches!(
        e(&ranged, "4096"),
        StringsError::Constraint { .. }
    ));
    // Every error prints a message naming the input.
    assert!(e(&set, "[a").to_string().contains("[a"));
}

#[test]
fn printing() {
    let opt = ty(r#"{"key":"string","min":0,"max":1}"#);
    assert_eq!(datum_to_string(&Datum::set([s("x y")]), &opt), "\"x y\"");
    assert_eq!(datum_to_string(&Datum::set([]), &opt), "[]");
    let set = ty(r#"{"key":"string","min":0,"max":"unlimited"}"#);
    assert_eq!(
        datum_to_string(&Datum::set([s("b"), s("a")]), &set),
        "[a, b]"
    );
    let map = ty(r#"{"key":"string","value":"string","min":0,"max":"unlimited"}"#);
    let m = Datum::map([(s("k"), s("1.2")), (s("a"), s("b"))]);
    assert_eq!(datum_to_string(&m, &map), "{a=b, k=\"1.2\"}");
    assert_eq!(datum_to_string(&Datum::map([]), &map), "{}");
    // Round trip.
    assert_eq!(
        datum_from_string(&map, &datum_to_string(&m, &map)).unwrap(),
        m
    );
    let _ = (BaseType::new(AtomicType::String), UNLIMITED, Json::Null);
}

#[test]
fn comparisons() {
    let a = Datum::set([s("a")]);
    let ab = Datum::set([s("a"), s("b")]);
    let z = Datum::set([s("z")]);
    assert_eq!(compare_3way(&a, &ab), Ordering::Less);
    assert_eq!(
        compare_3way(&z, &ab),
        Ordering::Less,
        "fewer elements first"
    );
    assert_eq!(compare_3way(&a, &z), Ordering::Less);
    assert!(includes_all(&a, &ab) && !includes_all(&ab, &a));
    assert!(excludes_all(&z, &ab) && !excludes_all(&a, &ab));
    let m1 = Datum::map([(s("k"), s("1"))]);
    let m2 = Datum::map([(s("k"), s("2")), (s("j"), s("1"))]);
    assert!(!includes_all(&m1, &m2) && excludes_all(&m1, &m2));
}

/// Messages the vectors in testdata/ do not reach, worded as OVS 3.1's
/// `ovsdb_datum_from_string` and `json_string_unescape` word them.
#[test]
fn messages_as_ovs_words_them() {
    let msg = |t: &Type, v: &str| datum_from_string(t, v).unwrap_err().to_string();
    let map = ty(r#"{"key":"string","value":"integer","min":0,"max":3}"#);
    assert_eq!(
        msg(&map, "{a=1, b 2}"),
        "b 2}: syntax error at \"2\" expecting \"=\""
    );
    assert_eq!(
        msg(&map, "{=1}"),
        "{=1}: unexpected \"=\" parsing map of up to 3 (string, integer) pairs"
    );
    assert_eq!(
        msg(&map, "a=1 b=2 c=3 d=4"),
        "a=1 b=2 c=3 d=4: 4 pair(s) specified but the maximum number is 3"
    );
    let ints = ty(r#"{"key":"integer","min":1,"max":"unlimited"}"#);
    assert_eq!(
        msg(&ints, "[]"),
        "[]: 0 value(s) specified but the minimum number is 1"
    );
    assert_eq!(msg(&ints, "[1] 2"), "[1] 2: trailing garbage after \"]\"");
    let st = Type::scalar(AtomicType::String);
    assert_eq!(msg(&st, r#""a\q""#), r#""a\q": bad escape \q"#);
    assert_eq!(
        msg(&st, r#""\udc00""#),
        "constraint violation: not a valid UTF-8 string: invalid UTF-8 sequence 0xed 0xb0"
    );
    assert_eq!(
        Type::from_json(&Json::String("integer".into()))
            .unwrap()
            .to_english(),
        "integer"
    );
    assert_eq!(ints.to_english(), "set of 1 or more integers");
}
