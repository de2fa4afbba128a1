//! Transactions on the in-memory database: GC, weak references, integrity
//! errors, rollback, no-op dropping and change encoding.

#![cfg(not(target_arch = "wasm32"))]

use std::sync::Arc;

use proptest::prelude::*;

use ovsdb::json::parse;
use ovsdb::{Atom, ChangeKind, Database, DatabaseSchema, Datum, ReplayOptions, StorageMode, Uuid};

const SCHEMA: &str = r#"{"name":"T","version":"1.0.0","tables":{
  "Group":{"isRoot":true,"columns":{
     "name":{"type":"string"},
     "members":{"type":{"key":{"type":"uuid","refTable":"Item"},"min":0,"max":"unlimited"}},
     "watch":{"type":{"key":{"type":"uuid","refTable":"Item","refType":"weak"},"min":0,"max":"unlimited"}},
     "byname":{"type":{"key":"string","value":{"type":"uuid","refTable":"Item","refType":"weak"},"min":0,"max":"unlimited"}},
     "tags":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}},
     "prio":{"type":"integer"}},
   "indexes":[["name"]]},
  "Item":{"columns":{"name":{"type":"string"}}},
  "One":{"isRoot":true,"maxRows":1,"columns":{"x":{"type":"integer"}}}}}"#;

fn db() -> Database {
    Database::new(Arc::new(DatabaseSchema::parse(SCHEMA.as_bytes()).unwrap()))
}
fn u(n: u128) -> Uuid {
    Uuid(n)
}
fn s(x: &str) -> Datum {
    Datum::scalar(Atom::from(x))
}
fn uset(ns: &[u128]) -> Datum {
    Datum::set(ns.iter().map(|&n| Atom::Uuid(u(n))))
}

fn setup() -> Database {
    let mut d = db();
    let mut t = d.begin();
    t.insert("Item", u(1), vec![("name".into(), s("i1"))])
        .unwrap();
    t.insert("Item", u(2), vec![("name".into(), s("i2"))])
        .unwrap();
    t.insert("Item", u(3), vec![("name".into(), s("i3"))])
        .unwrap();
    t.insert(
        "Group",
        u(10),
        vec![
            ("name".into(), s("g")),
            ("members".into(), uset(&[1, 2, 3])),
            ("watch".into(), uset(&[1, 2])),
            (
                "byname".into(),
                Datum::map([
                    (Atom::from("a"), Atom::Uuid(u(1))),
                    (Atom::from("b"), Atom::Uuid(u(3))),
                ]),
            ),
        ],
    )
    .unwrap();
    let c = t.commit().unwrap();
    assert_eq!(c.row_count(), 4);
    d
}

#[test]
fn unreferenced_insert_is_garbage_collected() {
    let mut d = db();
    let mut t = d.begin();
    t.insert("Item", u(1), vec![("name".into(), s("lonely"))])
        .unwrap();
    let c = t.commit().unwrap();
    assert!(c.is_empty(), "{c:?}");
    assert_eq!(d.table("Item").unwrap().len(), 0);
}

#[test]
fn losing_last_strong_ref_collects_and_cleans_weak_refs() {
    let mut d = setup();
    // A second group that only watches item 1 (weakly).
    let mut t = d.begin();
    t.insert(
        "Group",
        u(11),
        vec![("name".into(), s("g2")), ("watch".into(), uset(&[1]))],
    )
    .unwrap();
    t.commit().unwrap();
    let mut t = d.begin();
    // Remove item 1 from g's members: it is collected. As in ovsdb-server
    // 3.1, the untouched g2 loses its weak reference (it joins the
    // transaction when item 1 is assessed, and is assessed after it), but
    // g itself, part of the transaction and assessed before item 1 (its
    // table joined first), keeps its weak references to item 1: they
    // dangle. (Checked with ovsdb-tool 3.1.0 `query` on a standalone file
    // with this schema and these two records: `watch` and `byname` of g
    // still name item 1.)
    t.apply_diff("Group", u(10), "members", &uset(&[1]))
        .unwrap();
    let c = t.commit().unwrap();
    assert!(d.row("Item", &u(1)).is_none());
    let ts = d.table_schema("Group").unwrap();
    let g2 = d.row("Group", &u(11)).unwrap();
    assert_eq!(g2.get(ts, "watch").unwrap(), &uset(&[]));
    let g = d.row("Group", &u(10)).unwrap();
    assert_eq!(g.get(ts, "watch").unwrap(), &uset(&[1, 2]));
    assert_eq!(
        g.get(ts, "byname").unwrap(),
        &Datum::map([
            (Atom::from("a"), Atom::Uuid(u(1))),
            (Atom::from("b"), Atom::Uuid(u(3)))
        ])
    );
    d.check_integrity().unwrap();
    let body = ovsdb::Json::Object(d.txn_to_json(&c, StorageMode::Diff))
        .sorted_recursive()
        .to_string_compact();
    assert_eq!(
        body,
        format!(
            r#"{{"Group":{{"{g}":{{"members":["uuid","{i1}"]}},"{g2}":{{"watch":["uuid","{i1}"]}}}},"Item":{{"{i1}":null}}}}"#,
            g = u(10),
            g2 = u(11),
            i1 = u(1)
        )
    );
    // Full mode carries the new values.
    let full = ovsdb::Json::Object(d.txn_to_json(&c, StorageMode::Full))
        .sorted_recursive()
        .to_string_compact();
    assert!(full.contains(r#""watch":["set",[]]"#), "{full}");
    for m in [StorageMode::Full, StorageMode::Diff] {
        assert_eq!(
            d.txn_json_len(&c, m),
            ovsdb::Json::Object(d.txn_to_json(&c, m)).to_bytes().len()
        );
    }
}

#[test]
fn deleting_root_cascades() {
    let mut d = setup();
    let mut t = d.begin();
    t.delete("Group", u(10)).unwrap();
    let c = t.commit().unwrap();
    assert_eq!(d.row_count(), 0);
    assert_eq!(c.row_count(), 4);
    assert!(c
        .tables
        .iter()
        .flat_map(|t| &t.rows)
        .all(|r| matches!(r.kind, ChangeKind::Delete)));
}

#[test]
fn dangling_strong_ref_is_rejected_and_rolled_back() {
    let mut d = setup();
    let before = d.dump_json(true);
    let mut t = d.begin();
    t.set("Group", u(10), "name", s("renamed")).unwrap();
    t.apply_diff("Group", u(10), "members", &uset(&[99]))
        .unwrap();
    let e = t.commit().unwrap_err();
    assert_eq!(e.tag, "referential integrity violation");
    assert_eq!(d.dump_json(true), before);
    // Explicit delete of a referenced non-root row.
    let mut t = d.begin();
    t.delete("Item", u(2)).unwrap();
    let e = t.commit().unwrap_err();
    assert!(e.details.contains("remaining reference"), "{e}");
    assert_eq!(d.dump_json(true), before);
    // Refcounts survived the rollbacks: removing the last ref still GCs.
    let mut t = d.begin();
    t.apply_diff("Group", u(10), "members", &uset(&[2]))
        .unwrap();
    t.commit().unwrap();
    assert!(d.row("Item", &u(2)).is_none());
}

#[test]
fn dropped_txn_rolls_back() {
    let mut d = setup();
    let before = d.dump_json(true);
    {
        let mut t = d.begin();
        t.delete("Group", u(10)).unwrap();
        t.insert("Item", u(7), vec![]).unwrap();
        t.apply_diff("Group", u(10), "members", &uset(&[1]))
            .unwrap_err(); // row gone
    }
    assert_eq!(d.dump_json(true), before);
}

#[test]
fn weak_ref_to_missing_row_is_dropped() {
    let mut d = setup();
    let mut t = d.begin();
    t.apply_diff("Group", u(10), "watch", &uset(&[3, 42]))
        .unwrap();
    let c = t.commit().unwrap();
    let g = d.row("Group", &u(10)).unwrap();
    assert_eq!(
        g.get(d.table_schema("Group").unwrap(), "watch").unwrap(),
        &uset(&[1, 2, 3])
    );
    let ChangeKind::Modify { columns } = &c.tables[0].rows[0].kind else {
        panic!()
    };
    assert_eq!(columns[0].diff, uset(&[3]));
}

#[test]
fn no_op_changes_are_dropped_and_diffs_compose() {
    let mut d = setup();
    let mut t = d.begin();
    t.set("Group", u(10), "name", s("g")).unwrap();
    t.apply_diff("Group", u(10), "members", &uset(&[4]))
        .unwrap(); // dangling: error at commit
    let c = t.commit();
    assert!(c.is_err());
    let mut t = d.begin();
    t.set("Group", u(10), "name", s("g")).unwrap();
    t.apply_diff(
        "Group",
        u(10),
        "tags",
        &Datum::map([(Atom::from("k"), Atom::from("v"))]),
    )
    .unwrap();
    t.apply_diff(
        "Group",
        u(10),
        "tags",
        &Datum::map([(Atom::from("k"), Atom::from("v"))]),
    )
    .unwrap();
    let c = t.commit().unwrap();
    assert!(c.is_empty(), "{c:?}");
    // Two diffs on one column compose into the net diff.
    let mut t = d.begin_tracking_old();
    t.apply_diff(
        "Group",
        u(10),
        "tags",
        &Datum::map([(Atom::from("k"), Atom::from("v"))]),
    )
    .unwrap();
    t.apply_diff(
        "Group",
        u(10),
        "tags",
        &Datum::map([
            (Atom::from("k"), Atom::from("w")),
            (Atom::from("z"), Atom::from("1")),
        ]),
    )
    .unwrap();
    t.set("Group", u(10), "prio", Datum::scalar(Atom::Integer(5)))
        .unwrap();
    let c = t.commit().unwrap();
    let ChangeKind::Modify { columns } = &c.tables[0].rows[0].kind else {
        panic!()
    };
    let ts = d.table_schema("Group").unwrap();
    let names: Vec<&str> = columns
        .iter()
        .map(|cc| ts.columns[cc.column].name.as_str())
        .collect();
    let mut expect = names.clone();
    expect.sort_by_key(|n| ts.column_index(n));
    assert_eq!(names, expect, "schema column order");
    let tags = columns
        .iter()
        .find(|cc| ts.columns[cc.column].name == "tags")
        .unwrap();
    assert_eq!(
        tags.diff,
        Datum::map([
            (Atom::from("k"), Atom::from("w")),
            (Atom::from("z"), Atom::from("1"))
        ])
    );
    assert_eq!(tags.old, Some(Datum::map(Vec::<(Atom, Atom)>::new())));
}

#[test]
fn constraints_at_commit() {
    let mut d = setup();
    // index uniqueness
    let mut t = d.begin();
    t.insert("Group", u(11), vec![("name".into(), s("g"))])
        .unwrap();
    assert_eq!(t.commit().unwrap_err().tag, "constraint violation");
    // maxRows
    let mut t = d.begin();
    t.insert("One", u(20), vec![]).unwrap();
    t.insert("One", u(21), vec![]).unwrap();
    assert_eq!(t.commit().unwrap_err().tag, "constraint violation");
    assert_eq!(d.table("One").unwrap().len(), 0);
}

#[test]
fn replay_errors_leave_database_unchanged() {
    let mut d = setup();
    let before = d.dump_json(true);
    let g = u(10);
    for bad in [
        r#"{"Nope":{}}"#.to_string(),
        r#"{"_date":"x"}"#.to_string(),
        format!(r#"{{"Group":{{"{g}":{{"nope":1}}}}}}"#),
        format!(r#"{{"Group":{{"{g}":{{"prio":"x"}}}}}}"#),
        r#"{"Group":{"not-a-uuid":null}}"#.to_string(),
        format!(r#"{{"Group":{{"{}":null}}}}"#, u(77)),
        format!(r#"{{"Group":{{"{g}":{{"name":"h"}},"{}":null}}}}"#, u(77)),
        format!(r#"{{"Group":{{"{g}":5}}}}"#),
        "[]".to_string(),
    ] {
        let j = parse(bad.as_bytes()).unwrap();
        assert!(
            d.apply_txn_json(&j, ReplayOptions::default()).is_err(),
            "{bad}"
        );
        assert_eq!(d.dump_json(true), before, "{bad}");
    }
    // converting mode ignores unknown tables/columns
    let j = parse(format!(r#"{{"Nope":{{}},"Group":{{"{g}":{{"nope":1,"prio":3}}}}}}"#).as_bytes())
        .unwrap();
    let opts = ReplayOptions {
        converting: true,
        ..Default::default()
    };
    assert_eq!(d.apply_txn_json(&j, opts).unwrap().row_count(), 1);
}

#[test]
fn hash_order_rows_follows_hmap() {
    let mut d = db();
    let mut t = d.begin();
    for i in 0..5u128 {
        t.insert(
            "Group",
            u((i + 1) << 96),
            vec![("name".into(), s(&format!("g{i}")))],
        )
        .unwrap();
    }
    let mut c = t.commit().unwrap();
    c.hash_order_rows();
    let firsts: Vec<u32> = c.tables[0]
        .rows
        .iter()
        .map(|r| r.uuid.first_word())
        .collect();
    // hashes 1..5 inserted in order: mask grows to 3 at n=2 and 7? no (n/2>mask only at 8) -> buckets by h&3
    let order = ovsdb::json::hmap_order(&[1, 2, 3, 4, 5]);
    let want: Vec<u32> = order.iter().map(|&i| i as u32 + 1).collect();
    assert_eq!(firsts, want);
}

// ---------------------------------------------------------------------------
// Property test: random transactions keep every invariant; failed or
// dropped transactions change nothing; a committed transaction re-encoded
// as a txn record (diff or full mode) and replayed on the old state gives
// the new state.

#[derive(Debug, Clone)]
enum Op {
    InsItem(u8),
    InsGroup(u8, Vec<u8>, Vec<u8>, Vec<(u8, u8)>, u8),
    DelItem(u8),
    DelGroup(u8),
    Members(u8, Vec<u8>),
    Watch(u8, Vec<u8>),
    ByName(u8, Vec<(u8, u8)>),
    Tags(u8, Vec<(u8, u8)>),
    Name(u8, u8),
    SetMembers(u8, Vec<u8>),
    SetByName(u8, Vec<(u8, u8)>),
}

fn item(i: u8) -> Uuid {
    u(0x1000 + u128::from(i % 6))
}
fn group(g: u8) -> Uuid {
    u(0x2000 + u128::from(g % 3))
}

fn arb_op() -> impl Strategy<Value = Op> {
    let ids = || proptest::collection::vec(0u8..6, 0..4);
    let pairs = || proptest::collection::vec((0u8..3, 0u8..6), 0..3);
    prop_oneof![
        (0u8..6).prop_map(Op::InsItem),
        (0u8..3, ids(), ids(), pairs(), 0u8..3)
            .prop_map(|(g, m, w, b, n)| Op::InsGroup(g, m, w, b, n)),
        (0u8..6).prop_map(Op::DelItem),
        (0u8..3).prop_map(Op::DelGroup),
        (0u8..3, ids()).prop_map(|(g, m)| Op::Members(g, m)),
        (0u8..3, ids()).prop_map(|(g, m)| Op::Watch(g, m)),
        (0u8..3, pairs()).prop_map(|(g, p)| Op::ByName(g, p)),
        (0u8..3, pairs()).prop_map(|(g, p)| Op::Tags(g, p)),
        (0u8..3, 0u8..3).prop_map(|(g, n)| Op::Name(g, n)),
        (0u8..3, ids()).prop_map(|(g, m)| Op::SetMembers(g, m)),
        (0u8..3, pairs()).prop_map(|(g, p)| Op::SetByName(g, p)),
    ]
}

fn ids_set(v: &[u8]) -> Datum {
    Datum::set(v.iter().map(|&i| Atom::Uuid(item(i))))
}
fn byname(v: &[(u8, u8)]) -> Datum {
    Datum::map(
        v.iter()
            .map(|&(k, i)| (Atom::from(format!("k{k}")), Atom::Uuid(item(i)))),
    )
}
fn tags(v: &[(u8, u8)]) -> Datum {
    Datum::map(
        v.iter()
            .map(|&(k, i)| (Atom::from(format!("k{k}")), Atom::from(format!("v{i}")))),
    )
}

fn run_op(t: &mut ovsdb::Txn<'_>, op: &Op) -> ovsdb::Result<()> {
    match op {
        Op::InsItem(i) => t.insert("Item", item(*i), vec![("name".into(), s(&format!("i{i}")))]),
        Op::InsGroup(g, m, w, b, n) => t.insert(
            "Group",
            group(*g),
            vec![
                ("name".into(), s(&format!("g{n}"))),
                ("members".into(), ids_set(m)),
                ("watch".into(), ids_set(w)),
                ("byname".into(), byname(b)),
            ],
        ),
        Op::DelItem(i) => t.delete("Item", item(*i)),
        Op::DelGroup(g) => t.delete("Group", group(*g)),
        Op::Members(g, m) => t.apply_diff("Group", group(*g), "members", &ids_set(m)),
        Op::Watch(g, m) => t.apply_diff("Group", group(*g), "watch", &ids_set(m)),
        Op::ByName(g, p) => t.apply_diff("Group", group(*g), "byname", &byname(p)),
        Op::Tags(g, p) => t.set("Group", group(*g), "tags", tags(p)),
        Op::Name(g, n) => t.set("Group", group(*g), "name", s(&format!("g{n}"))),
        Op::SetMembers(g, m) => t.set("Group", group(*g), "members", ids_set(m)),
        Op::SetByName(g, p) => t.set("Group", group(*g), "byname", byname(p)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300)))]
    #[test]
    fn random_transactions_keep_invariants(
        txns in proptest::collection::vec((proptest::collection::vec(arb_op(), 1..5), any::<bool>()), 1..12)
    ) {
        let mut d = db();
        for (ops, drop_it) in txns {
            let before = d.clone();
            let before_dump = d.dump_json(true);
            let result = {
                let mut t = d.begin();
                for op in &ops {
                    let _ = run_op(&mut t, op);
                }
                if drop_it { None } else { Some(t.commit()) }
            };
            d.check_integrity().map_err(|e| TestCaseError::fail(format!("{e} after {ops:?}")))?;
            match result {
                None | Some(Err(_)) => prop_assert_eq!(d.dump_json(true), before_dump),
                Some(Ok(changes)) => {
                    for mode in [StorageMode::Diff, StorageMode::Full] {
                        let mut rec = d.txn_to_json(&changes, mode);
                        prop_assert_eq!(
                            d.txn_json_len(&changes, mode),
                            ovsdb::Json::Object(rec.clone()).to_bytes().len()
                        );
                        if mode == StorageMode::Diff {
                            rec.insert("_is_diff", ovsdb::Json::Bool(true));
                        }
                        let mut replayed = before.clone();
                        replayed
                            .apply_txn_json(&ovsdb::Json::Object(rec.clone()), ReplayOptions::default())
                            .map_err(|e| TestCaseError::fail(format!("{e}: {}", ovsdb::Json::Object(rec.clone()))))?;
                        prop_assert_eq!(replayed.dump_json(true), d.dump_json(true));
                        replayed.check_integrity().map_err(|e| TestCaseError::fail(e.to_string()))?;
                    }
                }
            }
        }
    }
}

#[test]
fn typed_api_rejects_bad_values_without_panicking() {
    let mut d = setup();
    let mut t = d.begin();
    // wrong atom type, wrong shape, bad column index, bad table index
    assert!(t.set("Group", u(10), "prio", s("x")).is_err());
    assert!(t.set("Group", u(10), "tags", s("x")).is_err());
    assert!(t.apply_diff("Group", u(10), "members", &s("x")).is_err());
    assert!(t.set_at(0, u(10), 999, s("x")).is_err());
    assert!(t.apply_diff_at(99, u(10), 0, &s("x")).is_err());
    assert!(t.insert_at(99, u(50), vec![]).is_err());
    assert!(t
        .insert("Group", u(51), vec![("prio".into(), s("x"))])
        .is_err());
    assert!(t
        .insert("Group", u(52), vec![("nope".into(), s("x"))])
        .is_err());
    assert!(t.delete("Nope", u(10)).is_err());
    let c = t.commit().unwrap();
    assert!(c.is_empty());
    d.check_integrity().unwrap();
}

#[test]
fn deleted_target_leaves_optional_weak_columns_empty() {
    // Optional (max 1) and required (min 1) weak references: for such
    // columns a "diff" is the new value, so the cleanup must remove the
    // atom rather than apply it as a diff (which wrote it back).
    let schema = r#"{"name":"W","tables":{
      "P":{"isRoot":true,"columns":{
        "opt":{"type":{"key":{"type":"uuid","refTable":"C","refType":"weak"},"min":0,"max":1}},
        "req":{"type":{"key":{"type":"uuid","refTable":"C","refType":"weak"},"min":1,"max":1}},
        "n":{"type":"integer"}}},
      "C":{"isRoot":true,"columns":{"n":{"type":"integer"}}}}}"#;
    let mut d = Database::new(Arc::new(DatabaseSchema::parse(schema.as_bytes()).unwrap()));
    let txn = |s: &str| parse(s.as_bytes()).unwrap();
    let (p, c1, c2) = (
        "00000000-0000-4000-8000-000000000001",
        "00000000-0000-4000-8000-0000000000c1",
        "00000000-0000-4000-8000-0000000000c2",
    );
    d.apply_txn_json(
        &txn(&format!(
            r#"{{"C":{{"{c1}":{{"n":1}},"{c2}":{{"n":2}}}},"P":{{"{p}":{{"opt":["uuid","{c1}"],"req":["uuid","{c2}"]}}}}}}"#
        )),
        ReplayOptions::default(),
    )
    .unwrap();
    d.apply_txn_json(
        &txn(&format!(r#"{{"C":{{"{c1}":null}}}}"#)),
        ReplayOptions::default(),
    )
    .unwrap();
    let row = d.row("P", &Uuid::parse(p).unwrap()).unwrap();
    let ts = d.table_schema("P").unwrap();
    assert_eq!(row.get(ts, "opt").unwrap(), &Datum::Set(Default::default()));
    d.check_integrity().unwrap();
    // Deleting the target of a min-1 weak reference would leave the column
    // empty: the transaction fails (ovsdb-server: constraint violation)
    // and the database is unchanged.
    let before = d.dump_json(true);
    assert!(d
        .apply_txn_json(
            &txn(&format!(r#"{{"C":{{"{c2}":null}}}}"#)),
            ReplayOptions::default()
        )
        .is_err());
    assert_eq!(d.dump_json(true), before);
}

#[test]
fn a_clone_shares_rows_and_keeps_its_state_when_the_original_changes() {
    let mut a = setup();
    let before = a.dump_json(true);
    let b = a.clone();
    // The clone shares the rows themselves, not copies of them.
    let (ra, rb) = (
        a.table("Item").unwrap().rows.get(&u(1)).unwrap(),
        b.table("Item").unwrap().rows.get(&u(1)).unwrap(),
    );
    assert!(Arc::ptr_eq(ra, rb));
    // Changes to the original (a modified row, a deleted row whose
    // referrers lose it, a collected row) leave the clone as it was.
    let mut t = a.begin();
    t.set("Group", u(10), "members", uset(&[1])).unwrap();
    t.set("Item", u(1), "name", s("renamed")).unwrap();
    t.commit().unwrap();
    assert_eq!(a.table("Item").unwrap().len(), 1);
    assert_eq!(b.dump_json(true), before);
    assert_eq!(b.table("Item").unwrap().len(), 3);
    b.check_integrity().unwrap();
    a.check_integrity().unwrap();
    // The rows nobody changed are still shared.
    let g = |d: &Database| d.table("Group").unwrap().rows.len();
    assert_eq!((g(&a), g(&b)), (1, 1));
    assert!(!Arc::ptr_eq(
        a.table("Item").unwrap().rows.get(&u(1)).unwrap(),
        b.table("Item").unwrap().rows.get(&u(1)).unwrap()
    ));
    // And the clone goes on on its own.
    let mut b = b;
    let mut t = b.begin();
    t.delete("Group", u(10)).unwrap();
    t.commit().unwrap();
    // Its items go with the group; the original keeps its own.
    assert_eq!(b.row_count(), 0);
    assert_eq!(a.row_count(), 2);
    a.check_integrity().unwrap();
}

#[test]
fn a_database_taken_apart_gives_its_rows_and_frees_each_with_its_last_holder() {
    let a = setup();
    let b = a.clone();
    let count = a.row_count();
    let kept = b.table("Item").unwrap().rows.get(&u(1)).unwrap().clone();
    let rows = a.into_rows();
    assert_eq!(rows.len(), count);
    // In table order (by schema), each table's rows by UUID.
    let mut want = Vec::new();
    for ts in &b.schema().tables {
        want.extend(b.table(&ts.name).unwrap().rows.values().cloned());
    }
    assert_eq!(rows.len(), want.len());
    assert!(rows.iter().zip(&want).all(|(x, y)| Arc::ptr_eq(x, y)));
    drop(want);
    // A row the clone still holds outlives the taken-apart database's
    // share of it: the clone's map, `kept` and the list.
    assert_eq!(Arc::strong_count(&kept), 3);
    drop(rows);
    assert_eq!(Arc::strong_count(&kept), 2);
    b.check_integrity().unwrap();
}
