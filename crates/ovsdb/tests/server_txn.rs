//! The transaction as the ovsdb-server model (crate `ovsdb-server`) uses
//! it: `precommit` then `keep` or a rollback, `commit_unchecked`, and `ReplayOptions::server_checks` (ovsdb-server's words and order).

#![cfg(not(target_arch = "wasm32"))]

use std::sync::Arc;

use ovsdb::{Atom, Database, DatabaseSchema, Datum, ReplayOptions, Uuid};

const SCHEMA: &str = r#"{"name":"S","version":"1.0.0","tables":{
  "R":{"isRoot":true,"columns":{
     "n":{"type":"integer"},
     "kids":{"type":{"key":{"type":"uuid","refTable":"K"},"min":0,"max":"unlimited"}},
     "w":{"type":{"key":{"type":"uuid","refTable":"R","refType":"weak"},"min":0,"max":"unlimited"}},
     "o":{"type":{"key":{"type":"uuid","refTable":"R","refType":"weak"},"min":0,"max":1}},
     "need":{"type":{"key":{"type":"uuid","refTable":"R","refType":"weak"},"min":1,"max":2}}}},
  "K":{"columns":{"v":{"type":"integer"}}}}}"#;

fn db() -> Database {
    Database::new(Arc::new(DatabaseSchema::parse(SCHEMA.as_bytes()).unwrap()))
}

fn uset(ns: &[u128]) -> Datum {
    Datum::set(ns.iter().map(|&n| Atom::Uuid(Uuid(n))))
}

fn server() -> ReplayOptions {
    ReplayOptions {
        server_checks: true,
        ..Default::default()
    }
}

#[test]
fn precommit_then_drop_is_a_dry_run_and_keep_makes_it_final() {
    let mut d = db();
    {
        let mut t = d.begin_with(server());
        t.insert("K", Uuid(1), vec![]).unwrap();
        let row = vec![("kids".into(), uset(&[1])), ("need".into(), uset(&[2]))];
        t.insert("R", Uuid(2), row).unwrap();
        let changes = t.precommit().unwrap();
        assert_eq!(changes.row_count(), 2);
        assert_eq!(t.db().row_count(), 2);
    }
    assert_eq!(d.row_count(), 0, "dropped after precommit: rolled back");
    let mut t = d.begin_with(server());
    t.insert("K", Uuid(1), vec![]).unwrap();
    let row = vec![("kids".into(), uset(&[1])), ("need".into(), uset(&[2]))];
    t.insert("R", Uuid(2), row).unwrap();
    t.precommit().unwrap();
    t.keep();
    assert_eq!(d.row_count(), 2);
    assert_eq!(d.table("K").unwrap().strong_refs(&Uuid(1)), 1);
}

#[test]
fn commit_unchecked_writes_what_it_is_given() {
    // An unreferenced non-root row would be collected by a commit.
    let mut d = db();
    let mut t = d.begin();
    t.insert("K", Uuid(1), vec![]).unwrap();
    t.commit_unchecked();
    assert_eq!(d.row_count(), 1);
    let mut t = d.begin();
    t.insert("K", Uuid(2), vec![]).unwrap();
    t.commit().unwrap();
    assert!(d.row("K", &Uuid(2)).is_none());
}

#[test]
fn server_checks_name_the_first_dangling_strong_reference_before_gc() {
    let mut d = db();
    let mut t = d.begin_with(server());
    let row = vec![("kids".into(), uset(&[9])), ("need".into(), uset(&[5]))];
    t.insert("R", Uuid(5), row).unwrap();
    let e = t.commit().unwrap_err();
    assert_eq!(e.tag, "referential integrity violation");
    assert_eq!(
        e.details,
        format!(
            "Table R column kids row {} references nonexistent row {} in table K.",
            Uuid(5),
            Uuid(9)
        )
    );
    assert_eq!(d.row_count(), 0);
}

#[test]
fn an_optional_column_loses_a_missing_target_a_set_keeps_it() {
    // Row 1 refers to row 2 from a set (`w`) and from an optional column
    // (`o`); row 2 is deleted in an earlier transaction by a replay that
    // keeps dangling references (commit_unchecked).
    let mut d = db();
    let mut t = d.begin();
    t.insert("R", Uuid(2), vec![("need".into(), uset(&[2]))])
        .unwrap();
    t.insert(
        "R",
        Uuid(1),
        vec![
            ("w".into(), uset(&[2])),
            ("o".into(), uset(&[2])),
            ("need".into(), uset(&[1])),
        ],
    )
    .unwrap();
    t.insert("R", Uuid(3), vec![("need".into(), uset(&[3]))])
        .unwrap();
    t.commit().unwrap();
    let mut t = d.begin();
    t.delete("R", Uuid(2)).unwrap();
    t.commit_unchecked();
    // Row 1 changes in a transaction that deletes (weak references are
    // assessed): its optional column is re-checked whole, its set only for
    // what it adds.
    let mut t = d.begin_with(server());
    t.set("R", Uuid(1), "n", Datum::scalar(Atom::Integer(7)))
        .unwrap();
    t.delete("R", Uuid(3)).unwrap();
    t.commit().unwrap();
    let r = d.row("R", &Uuid(1)).unwrap();
    let ts = d.table_schema("R").unwrap();
    assert_eq!(r.get(ts, "o"), Some(&uset(&[])));
    assert_eq!(r.get(ts, "w"), Some(&uset(&[2])));
}

#[test]
fn server_checks_word_a_weak_removal_below_the_minimum() {
    let mut d = db();
    let mut t = d.begin();
    t.insert("R", Uuid(2), vec![("need".into(), uset(&[2]))])
        .unwrap();
    t.insert("R", Uuid(1), vec![("need".into(), uset(&[2]))])
        .unwrap();
    t.commit().unwrap();
    let mut t = d.begin_with(server());
    t.delete("R", Uuid(2)).unwrap();
    let e = t.commit().unwrap_err();
    assert_eq!(e.tag, "constraint violation");
    assert_eq!(
        e.details,
        "Deletion of weak reference(s) leaves column R.need with too few elements."
    );
    assert_eq!(d.row_count(), 2);
}

/// The table and column numbers of `R.<column>`.
fn r_col(d: &Database, column: &str) -> (usize, usize) {
    let ti = d.schema().table_index("R").unwrap();
    (ti, d.schema().tables[ti].column_index(column).unwrap())
}

#[test]
fn modify_at_keeps_the_committed_row_and_a_drop_puts_it_back() {
    let mut d = db();
    let mut t = d.begin();
    t.insert("R", Uuid(1), vec![("need".into(), uset(&[1]))])
        .unwrap();
    t.commit().unwrap();
    let (ti, n) = r_col(&d, "n");
    let committed = d.table("R").unwrap().rows.get(&Uuid(1)).cloned().unwrap();
    {
        let mut t = d.begin_with(server());
        for k in [5, 6] {
            t.modify_at(ti, Uuid(1), |c| {
                c[n] = Datum::scalar(Atom::Integer(k));
                Ok(())
            })
            .unwrap();
        }
        let now = t.db().row("R", &Uuid(1)).unwrap();
        assert_eq!(now.columns[n], Datum::scalar(Atom::Integer(6)));
        assert!(Arc::ptr_eq(
            &t.committed_row(ti, Uuid(1)).unwrap(),
            &committed
        ));
        assert!(t.was_committed(ti, Uuid(1)));
    }
    // Dropped: the committed version itself is back.
    let back = d.table("R").unwrap().rows.get(&Uuid(1)).unwrap();
    assert!(Arc::ptr_eq(back, &committed));
}

/// With `server_checks`, the operations' references are counted at commit
/// from each row's net change: dropped before, nothing was counted; a weak
/// reference removed and written back is not one the row adds, so a
/// dangling one stays (as ovsdb-server, which compares old and new rows).
#[test]
fn server_checks_count_references_from_the_net_change() {
    let mut d = db();
    let mut t = d.begin();
    t.insert("R", Uuid(2), vec![("need".into(), uset(&[2]))])
        .unwrap();
    t.insert(
        "R",
        Uuid(1),
        vec![("w".into(), uset(&[2])), ("need".into(), uset(&[1]))],
    )
    .unwrap();
    t.commit().unwrap();
    let mut t = d.begin();
    t.delete("R", Uuid(2)).unwrap();
    t.commit_unchecked();
    let (ti, w) = r_col(&d, "w");
    let (_, kids) = r_col(&d, "kids");
    {
        let mut t = d.begin_with(server());
        t.insert("K", Uuid(7), vec![]).unwrap();
        t.modify_at(ti, Uuid(1), |c| {
            c[kids] = uset(&[7]);
            Ok(())
        })
        .unwrap();
        t.delete("R", Uuid(1)).unwrap();
    }
    d.check_integrity().unwrap();
    let mut t = d.begin_with(server());
    for v in [uset(&[]), uset(&[2])] {
        t.modify_at(ti, Uuid(1), |c| {
            c[w] = v;
            Ok(())
        })
        .unwrap();
    }
    t.insert("K", Uuid(7), vec![]).unwrap();
    t.modify_at(ti, Uuid(1), |c| {
        c[kids] = uset(&[7]);
        Ok(())
    })
    .unwrap();
    t.commit().unwrap();
    let ts = d.table_schema("R").unwrap();
    let r = d.row("R", &Uuid(1)).unwrap();
    assert_eq!(r.get(ts, "w"), Some(&uset(&[2])));
    assert_eq!(d.table("K").unwrap().strong_refs(&Uuid(7)), 1);
}

/// `precommit_rows` names the rows `precommit`'s change list would (not a
/// row collected at commit, not a column set back to its value), a dry
/// run's rollback hands over the rows it inserted, unshared, and an
/// insert finds a duplicate itself, reported before a bad row.
#[test]
fn precommit_rows_and_a_rollback_that_hands_over_inserted_rows() {
    let mut d = db();
    let (r, n) = r_col(&d, "n");
    let k = d.schema().table_index("K").unwrap();
    let mut t = d.begin_with(server());
    t.insert("R", Uuid(7), vec![("need".into(), uset(&[7]))])
        .unwrap();
    t.commit().unwrap();
    let mut t = d.begin_with(server());
    t.insert("K", Uuid(1), vec![]).unwrap();
    let row = vec![("kids".into(), uset(&[1])), ("need".into(), uset(&[2]))];
    t.insert("R", Uuid(2), row).unwrap();
    t.insert("K", Uuid(3), vec![]).unwrap();
    t.set_at(r, Uuid(7), n, Datum::scalar(Atom::Integer(5)))
        .unwrap();
    t.set_at(r, Uuid(7), n, Datum::scalar(Atom::Integer(0)))
        .unwrap();
    let bad = ovsdb::db::Row {
        uuid: Uuid(7),
        columns: vec![],
    };
    let e = t.insert_row(r, Arc::new(bad)).unwrap_err();
    assert_eq!(e.tag, "duplicate uuid");
    assert!(t.uuid_taken_elsewhere(k, Uuid(7)));
    assert!(
        !t.uuid_taken_elsewhere(r, Uuid(7)),
        "table r's own row: the insert's"
    );
    assert!(
        !t.uuid_taken_elsewhere(k, Uuid(2)),
        "inserted, not committed"
    );
    let rows = t.precommit_rows().unwrap();
    let named: Vec<_> = rows
        .iter()
        .map(|c| (c.0, c.1, c.2.is_some(), c.3))
        .collect();
    assert_eq!(
        named,
        [(k, Uuid(1), false, true), (r, Uuid(2), false, true)]
    );
    let mut taken = Vec::new();
    t.roll_back_taking_inserted(|ti, u, row| taken.push((ti, u, row)));
    taken.sort_by_key(|t| (t.0, t.1));
    let got: Vec<_> = taken.iter().map(|t| (t.0, t.1, t.2.uuid)).collect();
    let mut want = vec![(k, Uuid(1), Uuid(1)), (r, Uuid(2), Uuid(2))];
    want.sort();
    assert_eq!(got, want);
    assert!(taken.iter().all(|t| Arc::strong_count(&t.2) == 1));
    assert_eq!(d.row_count(), 1);
    assert_eq!(d.table("K").unwrap().strong_refs(&Uuid(1)), 0);
}
