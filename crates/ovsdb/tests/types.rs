//! Type parsing and normalized re-serialization (vectors from
//! ovs tests/ovsdb-types.at; outputs compared with sorted members, as the
//! upstream test prints them).

use ovsdb::json::parse_value;
use ovsdb::{BaseType, Type};

fn base(s: &str) -> Result<String, String> {
    BaseType::from_json(&parse_value(s.as_bytes()).unwrap())
        .map(|b| b.to_json().sorted_recursive().to_string_compact())
        .map_err(|e| e.to_string())
}
fn full(s: &str) -> Result<String, String> {
    Type::from_json(&parse_value(s.as_bytes()).unwrap())
        .map(|t| t.to_json().sorted_recursive().to_string_compact())
        .map_err(|e| e.to_string())
}

#[test]
fn base_types() {
    let ok: &[(&str, &str)] = &[
        (r#""integer""#, r#""integer""#),
        (
            r#"{"type": "integer", "enum": ["set", [-1, 4, 5]]}"#,
            r#"{"enum":["set",[-1,4,5]],"type":"integer"}"#,
        ),
        (
            r#"{"type": "integer", "minInteger": 5}"#,
            r#"{"minInteger":5,"type":"integer"}"#,
        ),
        (
            r#"{"type": "integer", "maxInteger": 7}"#,
            r#"{"maxInteger":7,"type":"integer"}"#,
        ),
        (
            r#"{"type": "integer", "minInteger": -5, "maxInteger": 10}"#,
            r#"{"maxInteger":10,"minInteger":-5,"type":"integer"}"#,
        ),
        (
            r#"{"type": "real", "enum": ["set", [1.5, 0, 2.75]]}"#,
            r#"{"enum":["set",[0,1.5,2.75]],"type":"real"}"#,
        ),
        (
            r#"{"type": "real", "minReal": -1.5}"#,
            r#"{"minReal":-1.5,"type":"real"}"#,
        ),
        (
            r#"{"type": "real", "maxReal": 1e5}"#,
            r#"{"maxReal":100000,"type":"real"}"#,
        ),
        (r#"{"type": "boolean"}"#, r#""boolean""#),
        (
            r#"{"type": "boolean", "enum": true}"#,
            r#"{"enum":true,"type":"boolean"}"#,
        ),
        (
            r#"{"type": "string", "enum": ["set", ["def", "abc"]]}"#,
            r#"{"enum":["set",["abc","def"]],"type":"string"}"#,
        ),
        (
            r#"{"type": "string", "minLength": 1, "maxLength": 5}"#,
            r#"{"maxLength":5,"minLength":1,"type":"string"}"#,
        ),
        (
            r#"{"type": "uuid", "enum": ["uuid", "36bf19c0-ad9d-4232-bb85-b3d73dfe2123"]}"#,
            r#"{"enum":["uuid","36bf19c0-ad9d-4232-bb85-b3d73dfe2123"],"type":"uuid"}"#,
        ),
        (
            r#"{"type": "uuid", "refTable": "myTable"}"#,
            r#"{"refTable":"myTable","type":"uuid"}"#,
        ),
        (
            r#"{"type": "uuid", "refTable": "myTable", "refType": "weak"}"#,
            r#"{"refTable":"myTable","refType":"weak","type":"uuid"}"#,
        ),
        (
            r#"{"type": "uuid", "refTable": "myTable", "refType": "strong"}"#,
            r#"{"refTable":"myTable","type":"uuid"}"#,
        ),
    ];
    for (i, o) in ok {
        assert_eq!(base(i).as_deref(), Ok(*o), "{i}");
    }
    let bad: &[(&str, &str)] = &[
        (r#""void""#, "\"void\" is not an atomic-type"),
        (
            r#"{"type": "integer", "minInteger": 5, "maxInteger": 3}"#,
            "minInteger exceeds maxInteger",
        ),
        (
            r#"{"type": "real", "minReal": 555, "maxReal": 444}"#,
            "minReal exceeds maxReal",
        ),
        (
            r#"{"type": "string", "minLength": 5, "maxLength": 3}"#,
            "minLength exceeds maxLength",
        ),
        (
            r#"{"type": "string", "maxLength": -1}"#,
            "maxLength out of valid range 0 to 4294967295",
        ),
        (
            r#"{"type": "uuid", "refTable": "a-b-c"}"#,
            "Type mismatch for member 'refTable'",
        ),
        (
            r#"{}"#,
            "Parsing ovsdb type failed: Required 'type' member is missing.",
        ),
        (
            r#"{"type": "uuid", "refTable": "t", "refType": "medium"}"#,
            "refType must be",
        ),
        (
            r#"{"type": "integer", "minReal": 1}"#,
            "is present but not allowed here",
        ),
    ];
    for (i, e) in bad {
        let got = base(i).unwrap_err();
        assert!(got.contains(e), "{i}: {got}");
    }
}

#[test]
fn full_types() {
    let ok: &[(&str, &str)] = &[
        (r#"{"key": "integer"}"#, r#""integer""#),
        (r#"{"key": "real", "min": 1, "max": 1}"#, r#""real""#),
        (
            r#"{"key": "boolean", "min": 0}"#,
            r#"{"key":"boolean","min":0}"#,
        ),
        (
            r#"{"key": "uuid", "min": 1, "max": 3}"#,
            r#"{"key":"uuid","max":3}"#,
        ),
        (
            r#"{"key": "string", "min": 0, "max": 3}"#,
            r#"{"key":"string","max":3,"min":0}"#,
        ),
        (
            r#"{"key": "integer", "min": 0, "max": "unlimited"}"#,
            r#"{"key":"integer","max":"unlimited","min":0}"#,
        ),
        (
            r#"{"key": "real", "min": 1, "max": "unlimited"}"#,
            r#"{"key":"real","max":"unlimited"}"#,
        ),
        (
            r#"{"key": "integer", "value": "boolean"}"#,
            r#"{"key":"integer","value":"boolean"}"#,
        ),
        (
            r#"{"key": "boolean", "value": "integer", "min": 1, "max": 1}"#,
            r#"{"key":"boolean","value":"integer"}"#,
        ),
        (
            r#"{"key": {"type": "integer", "minInteger": 0}, "value": {"type": "string", "maxLength": 3}, "min": 0, "max": "unlimited"}"#,
            r#"{"key":{"minInteger":0,"type":"integer"},"max":"unlimited","min":0,"value":{"maxLength":3,"type":"string"}}"#,
        ),
        (
            r#"{"key": {"type": "integer", "minInteger": 3}}"#,
            r#"{"key":{"minInteger":3,"type":"integer"}}"#,
        ),
    ];
    for (i, o) in ok {
        assert_eq!(full(i).as_deref(), Ok(*o), "{i}");
    }
    let bad: &[(&str, &str)] = &[
        (r#"{}"#, "Required 'key' member is missing."),
        (r#""void""#, "\"void\" is not an atomic-type"),
        (
            r#"{"key": "real", "min": 5, "max": 3}"#,
            "ovsdb type fails constraint checks",
        ),
        (r#"{"key": "real", "max": -1}"#, "bad min or max value"),
        (r#"{"key": "real", "min": -1}"#, "bad min or max value"),
        (
            r#"{"key": "real", "min": 10, "max": "unlimited"}"#,
            "ovsdb type fails constraint checks",
        ),
        (r#"{"key": "real", "max": "lots"}"#, "bad min or max value"),
        (
            r#"{"key": "real", "max": 0}"#,
            "ovsdb type fails constraint checks",
        ),
        (r#"5"#, "ovsdb type expected"),
    ];
    for (i, e) in bad {
        let got = full(i).unwrap_err();
        assert!(got.contains(e), "{i}: {got}");
    }
}
