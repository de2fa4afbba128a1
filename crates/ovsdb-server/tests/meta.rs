//! DbMeta is built from `ovsdb`'s parsed schema: the same tables, columns,
//! types and constraints, in name order, with OVS's root-table rule.
#![cfg(not(target_arch = "wasm32"))]

use ovsdb::DatabaseSchema;
use ovsdb_server::DbMeta;

fn repo_file(rel: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn real_schemas_agree_with_ovsdb_schema() {
    for f in ["ovn-nb.ovsschema", "ovn-sb.ovsschema"] {
        let text = repo_file(&format!("static/samples/schemas/{f}"));
        let meta = DbMeta::from_text(&text).unwrap();
        let schema = DatabaseSchema::parse(text.as_bytes()).unwrap();
        assert_eq!(meta.name, schema.name);
        assert_eq!(meta.version, schema.version);
        assert_eq!(meta.tables.len(), schema.tables.len(), "{f}");
        let names: Vec<&str> = meta.tables.iter().map(|t| t.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted, "{f}: tables in name order");
        for (ti, t) in meta.tables.iter().enumerate() {
            assert_eq!(meta.table(&t.name), Some(ti));
            let ts = schema.table(&t.name).unwrap();
            assert_eq!(t.columns.len(), ts.user_columns().count(), "{}", t.name);
            assert_eq!(t.is_root, ts.is_root, "{}", t.name);
            assert_eq!(t.max_rows, ts.max_rows.map(u64::from));
            assert_eq!(t.indexes.len(), ts.indexes.len());
            for (ix, names) in t.indexes.iter().zip(&ts.indexes) {
                let got: Vec<&str> = ix.iter().map(|&c| t.columns[c].name.as_str()).collect();
                assert_eq!(&got, names);
            }
            for (ci, c) in t.columns.iter().enumerate() {
                assert_eq!(t.column(&c.name), Some(ci));
                let cs = ts.column(&c.name).unwrap();
                assert_eq!(c.ty, cs.ty, "{}.{}", t.name, c.name);
                assert_eq!(c.mutable, cs.mutable, "{}.{}", t.name, c.name);
            }
        }
    }
}

#[test]
fn root_rule_and_validation() {
    // No table is a root table (all say false): OVS makes all of them roots.
    let m = DbMeta::from_text(
        r#"{"name":"d","tables":{"A":{"isRoot":false,"columns":{"x":{"type":"integer"}}},
            "B":{"columns":{"y":{"type":"integer"}}}}}"#,
    )
    .unwrap();
    assert!(m.tables.iter().all(|t| t.is_root));
    let m = DbMeta::from_text(
        r#"{"name":"d","tables":{"A":{"isRoot":true,"columns":{"x":{"type":"integer"}}},
            "B":{"columns":{"y":{"type":"integer"}}}}}"#,
    )
    .unwrap();
    assert!(m.tables[0].is_root && !m.tables[1].is_root);
    // The schema parser's checks apply: unknown refTable, bad version,
    // index of an unknown column, unknown members.
    for bad in [
        r#"{"name":"d","tables":{"A":{"columns":{"r":{"type":{"key":{"type":"uuid","refTable":"Z"}}}}}}}"#,
        r#"{"name":"d","version":"1.0","tables":{"A":{"columns":{"x":{"type":"integer"}}}}}"#,
        r#"{"name":"d","tables":{"A":{"columns":{"x":{"type":"integer"}},"indexes":[["y"]]}}}"#,
        r#"{"name":"d","tables":{"A":{"columns":{"x":{"type":"integer"}}}},"extra":1}"#,
        r#"{"name":"d","tables":{"A":{"columns":{"x":{"type":"nonsense"}}}}}"#,
    ] {
        assert!(DbMeta::from_text(bad).is_err(), "{bad}");
    }
}
