//! Weak references to deleted rows on a real file: both replays drop them
//! like ovsdb-server 3.1.

mod common;

use ovsdb::json::{parse, Json};
use ovsdb::ReplayOptions;
use ovsdb_log::{replay, replay_database, Upto};

/// Rows of `table` in a `{table: {uuid: {column: value}}}` dump.
fn rows<'a>(dump: &'a Json, table: &str) -> Vec<(&'a str, &'a Json)> {
    dump.get(table)
        .and_then(Json::as_object)
        .map(|o| o.iter().collect())
        .unwrap_or_default()
}

#[test]
fn deleting_a_chassis_empties_the_optional_weak_port_binding_chassis() {
    // The real sb-scale file: 30 chassis, 600 Port_Bindings bound round
    // robin (`lsp-bind`), so each chassis is the `chassis` (an optional
    // weak reference, min 0 max 1) of 20 Port_Bindings. Deleting one
    // chassis (what `ovn-sbctl chassis-del` writes) must empty those 20
    // columns. Checked against ovsdb-server 3.1.0: `ovsdb-tool
    // cluster-to-standalone` of this file plus this txn record, then
    // `ovsdb-tool query` shows 20 Port_Bindings with an empty chassis, 29
    // chassis and 29 Encaps (the deleted chassis' Encap is collected).
    let bytes = common::sample("sb-scale", "s1");
    let (core, err) = replay_database(&bytes, Upto::Committed);
    assert!(err.is_none(), "{err:?}");
    let mut core = core.unwrap();
    let mut mine = replay(&bytes, Upto::Committed).db.unwrap();
    let before = core.dump_json(true);
    let (victim, _) = rows(&before, "Chassis")
        .into_iter()
        .find(|(_, r)| r.get("name").and_then(Json::as_str) == Some("chassis-001"))
        .expect("chassis-001");
    let bound = |dump: &Json, ch: &str| {
        rows(dump, "Port_Binding")
            .into_iter()
            .filter(|(_, r)| {
                r.get("chassis").map(|c| c.to_string()) == Some(format!(r#"["uuid","{ch}"]"#))
            })
            .count()
    };
    assert_eq!(bound(&before, victim), 20);

    let txn = parse(format!(r#"{{"Chassis":{{"{victim}":null}},"_date":1}}"#).as_bytes()).unwrap();
    core.apply_txn_json(&txn, ReplayOptions::default()).unwrap();
    mine.apply_txn(&txn).unwrap();
    let after = core.dump_json(true);
    assert_eq!(bound(&after, victim), 0, "dangling chassis references left");
    let unbound = rows(&after, "Port_Binding")
        .into_iter()
        .filter(|(_, r)| {
            r.get("chassis").map(|c| c.to_string()).as_deref() == Some(r#"["set",[]]"#)
        })
        .count();
    assert_eq!(unbound, 20);
    assert_eq!(rows(&after, "Chassis").len(), 29);
    assert_eq!(rows(&after, "Encap").len(), 29);
    core.check_integrity().unwrap();
    // The log's own replay reaches the same contents, weak columns included.
    assert_eq!(mine.to_json(), after);
}
