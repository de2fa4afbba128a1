//! Schema parsing and the C member order of the normalized schema record.

#![cfg(not(target_arch = "wasm32"))]

use ovsdb::json::{parse, Json};
use ovsdb::{AtomicType, DatabaseSchema, RefType};

fn repo_file(rel: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Splits an OVSDB log into record bodies (test helper; the real reader
/// lives in ovsdb-log).
fn records(file: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < file.len() {
        let nl = pos + file[pos..].iter().position(|&b| b == b'\n').unwrap();
        let header = std::str::from_utf8(&file[pos..nl]).unwrap();
        let len: usize = header.split(' ').nth(2).unwrap().parse().unwrap();
        out.push(&file[nl + 1..nl + 1 + len]);
        pos = nl + 1 + len;
    }
    out
}

#[test]
fn parse_nb_and_sb_schemas() {
    let nb = DatabaseSchema::parse(&repo_file("static/samples/schemas/ovn-nb.ovsschema")).unwrap();
    assert_eq!(nb.name, "OVN_Northbound");
    assert_eq!(nb.version, "7.0.0");
    let ls = nb.table("Logical_Switch").unwrap();
    assert!(ls.is_root);
    let ports = ls.column("ports").unwrap();
    assert_eq!(ports.ty.key.atomic, AtomicType::Uuid);
    assert_eq!(
        ports.ty.key.ref_table.as_deref(),
        Some("Logical_Switch_Port")
    );
    assert_eq!(ports.ty.key.ref_type, RefType::Strong);
    assert_eq!((ports.ty.min, ports.ty.max), (0, u32::MAX));
    assert!(!nb.table("Logical_Switch_Port").unwrap().is_root);
    assert!(ls.column("_uuid").is_some() && ls.column("_version").is_some());
    let acl = nb.table("ACL").unwrap();
    let dir = acl.column("direction").unwrap();
    assert_eq!(dir.ty.key.enum_.as_ref().map(|e| e.len()), Some(2));
    let g = nb.table("NB_Global").unwrap();
    assert_eq!(g.max_rows, Some(1));
    assert!(!nb.table("Load_Balancer_Group").unwrap().indexes.is_empty());

    let sb = DatabaseSchema::parse(&repo_file("static/samples/schemas/ovn-sb.ovsschema")).unwrap();
    assert_eq!(sb.name, "OVN_Southbound");
    assert!(sb.tables.len() > 30);
    // Re-parsing our own normalized output gives the same schema.
    for s in [&nb, &sb] {
        let again = DatabaseSchema::from_json(&s.to_json()).unwrap();
        assert_eq!(
            again.to_json().sorted_recursive(),
            s.to_json().sorted_recursive()
        );
    }
}

#[test]
fn schema_record_bytes_match_ovsdb_server() {
    // The standalone sample was created from the same .ovsschema file; its
    // record 0 is the normalized schema in hash-table order.
    let file = repo_file("static/samples/standalone/nb.db");
    let rec0 = records(&file)[0];
    let text = repo_file("static/samples/schemas/ovn-nb.ovsschema");
    let schema = DatabaseSchema::parse(&text).unwrap();
    let mut ours = schema.to_json_hash_order().to_bytes();
    ours.push(b'\n');
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(rec0)
    );
}

#[test]
fn schema_record_round_trip_and_sorted_form() {
    let file = repo_file("static/samples/standalone/nb.db");
    let rec0 = records(&file)[0];
    let j = parse(rec0).unwrap();
    let s = DatabaseSchema::from_json(&j).unwrap();
    // Parsed form re-encodes byte for byte.
    assert_eq!(j.to_bytes(), rec0[..rec0.len() - 1]);
    // Sorted form equals the sorted re-encoding of the record.
    assert_eq!(s.to_json().sorted_recursive(), j.sorted_recursive());
}

#[test]
fn schema_errors() {
    let bad: &[&str] = &[
        r#"{"name":"x","tables":{"_t":{"columns":{"a":{"type":"integer"}}}}}"#,
        r#"{"name":"x","tables":{"t":{"columns":{}}}}"#,
        r#"{"name":"x","tables":{"t":{"columns":{"_a":{"type":"integer"}}}}}"#,
        r#"{"name":"x","version":"1.2","tables":{"t":{"columns":{"a":{"type":"integer"}}}}}"#,
        r#"{"name":"x","tables":{"t":{"columns":{"a":{"type":{"key":{"type":"uuid","refTable":"nope"}}}}}}}"#,
        r#"{"name":"x","tables":{"t":{"columns":{"a":{"type":"integer"}},"extra":1}}}"#,
        r#"{"name":"x","tables":{"t":{"columns":{"a":{"type":{"key":"integer","min":2,"max":3}}}}}}"#,
        r#"{"name":"x","tables":{"t":{"maxRows":0,"columns":{"a":{"type":"integer"}}}}}"#,
        r#"{"name":"x","tables":{"t":{"columns":{"a":{"type":"integer"}},"indexes":[["b"]]}}}"#,
        r#"{"tables":{}}"#,
    ];
    for b in bad {
        assert!(DatabaseSchema::parse(b.as_bytes()).is_err(), "{b}");
    }
    // No isRoot anywhere: all tables are roots, and isRoot is not written.
    let s = DatabaseSchema::parse(
        br#"{"name":"x","tables":{"a":{"columns":{"c":{"type":"integer"}}},"b":{"columns":{"c":{"type":"integer"}}}}}"#,
    )
    .unwrap();
    assert!(s.tables.iter().all(|t| t.is_root));
    assert!(!s.to_json().to_string_compact().contains("isRoot"));
    let j = s.to_json();
    assert!(matches!(j.get("tables"), Some(Json::Object(_))));
}

#[test]
fn no_true_is_root_means_every_table_is_a_root() {
    // OVS (ovsdb_schema_from_json) counts the tables whose isRoot is true;
    // when there are none, every table becomes a root table, also when
    // some or all tables say `"isRoot": false` explicitly.
    let refs =
        r#""r":{"type":{"key":{"type":"uuid","refTable":"b"},"min":0,"max":1},"ephemeral":true}"#;
    for (a, b) in [
        ("", ""),
        (r#""isRoot":false,"#, r#""isRoot":false,"#),
        (r#""isRoot":false,"#, ""),
    ] {
        let txt = format!(
            r#"{{"name":"x","tables":{{"a":{{{a}"columns":{{{refs}}}}},"b":{{{b}"columns":{{"c":{{"type":"integer"}}}}}}}}}}"#
        );
        let s = DatabaseSchema::parse(txt.as_bytes()).unwrap();
        assert!(s.tables.iter().all(|t| t.is_root), "{txt}");
        // b is a root, so the ephemeral strong reference to it stays
        // ephemeral (OVS forces it persistent only for non-root targets).
        let r = s.table("a").unwrap();
        let col = &r.columns[r.column_index("r").unwrap()];
        assert!(!col.persistent, "{txt}");
        // All roots: isRoot is not written (C's default_is_root).
        assert!(!s.to_json().to_string_compact().contains("isRoot"), "{txt}");
    }
    // One explicit true: the others are not roots, and the ephemeral
    // strong reference to the non-root table becomes persistent.
    let txt = format!(
        r#"{{"name":"x","tables":{{"a":{{"isRoot":true,"columns":{{{refs}}}}},"b":{{"isRoot":false,"columns":{{"c":{{"type":"integer"}}}}}}}}}}"#
    );
    let s = DatabaseSchema::parse(txt.as_bytes()).unwrap();
    assert!(s.table("a").unwrap().is_root);
    assert!(!s.table("b").unwrap().is_root);
    let r = s.table("a").unwrap();
    assert!(r.columns[r.column_index("r").unwrap()].persistent);
}
