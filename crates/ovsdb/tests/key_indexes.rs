//! The unique-index check through kept keys (`Database::keep_key_indexes`)
//! against the check that compares rows: on random transactions (inserts,
//! keys replaced, passed between rows, set keys changed by diffs, deletes,
//! some committed, some rolled back, some dry runs), both databases agree
//! on every outcome, error words included.

#![cfg(not(target_arch = "wasm32"))]

use std::sync::Arc;

use ovsdb::{Atom, Database, DatabaseSchema, Datum, ReplayOptions, Uuid};

const SCHEMA: &str = r#"{"name":"S","version":"1.0.0","tables":{
  "T":{"isRoot":true,"indexes":[["k"],["s","v"]],"columns":{
     "k":{"type":"integer"},
     "v":{"type":"integer"},
     "s":{"type":{"key":"integer","min":0,"max":2}}}}}}"#;

/// A small linear congruential generator: `below(n)` in `0..n`.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

#[derive(Clone, Copy)]
enum Op {
    Insert(u128, i64, i64),
    SetK(u128, i64),
    SetV(u128, i64),
    Flip(u128, i64),
    Delete(u128),
}

fn int(n: i64) -> Datum {
    Datum::scalar(Atom::Integer(n))
}

/// Runs `ops` on `d`; `end`: 0 commit, 1 precommit then keep, 2 precommit
/// then drop, 3 commit without the index check (duplicates then get in).
/// The outcome as text.
fn run(d: &mut Database, ops: &[Op], server: bool, end: u64) -> String {
    let opts = ReplayOptions {
        server_checks: server,
        skip_index_check: end == 3,
        ..Default::default()
    };
    let mut t = d.begin_with(opts);
    let ts = t.db().schema().table("T").unwrap().clone();
    let (k, v, s) = (
        ts.column_index("k").unwrap(),
        ts.column_index("v").unwrap(),
        ts.column_index("s").unwrap(),
    );
    for op in ops {
        let has = |t: &ovsdb::Txn<'_>, u: u128| t.db().table("T").unwrap().get(&Uuid(u)).is_some();
        let _ = match *op {
            Op::Insert(u, a, b) if !has(&t, u) => {
                t.insert_at(0, Uuid(u), vec![(k, int(a)), (v, int(b))])
            }
            Op::SetK(u, a) if has(&t, u) => t.set_at(0, Uuid(u), k, int(a)),
            Op::SetV(u, b) if has(&t, u) => t.set_at(0, Uuid(u), v, int(b)),
            Op::Flip(u, x) if has(&t, u) => {
                t.apply_diff_at(0, Uuid(u), s, &Datum::set([Atom::Integer(x)]))
            }
            Op::Delete(u) if has(&t, u) => t.delete_at(0, Uuid(u)),
            _ => Ok(()),
        };
    }
    let out = match end {
        0 | 3 => t.commit().map(|c| c.row_count()),
        _ => match t.precommit() {
            Ok(c) if end == 1 => {
                t.keep();
                Ok(c.row_count())
            }
            Ok(c) => Ok(c.row_count()),
            Err(e) => Err(e),
        },
    };
    match out {
        Ok(n) => format!("ok {n}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn kept_keys_and_compared_rows_give_the_same_outcomes() {
    let schema = Arc::new(DatabaseSchema::parse(SCHEMA.as_bytes()).unwrap());
    let mut rng = Rng(11);
    let (mut failed, mut committed) = (0, 0);
    for round in 0..300 {
        let server = round % 2 == 0;
        let mut plain = Database::new(schema.clone());
        let mut keyed = Database::new(schema.clone());
        if round % 3 == 0 {
            keyed.keep_key_indexes();
        }
        for batch in 0..40 {
            let mut ops = Vec::new();
            let most = if rng.below(8) == 0 { 40 } else { 4 };
            for _ in 0..1 + rng.below(most) {
                let u = u128::from(1 + rng.below(24));
                let a = rng.below(30) as i64;
                ops.push(match rng.below(6) {
                    0 | 1 => Op::Insert(u, a, rng.below(3) as i64),
                    2 => Op::SetK(u, a),
                    3 => Op::SetV(u, rng.below(3) as i64),
                    4 => Op::Flip(u, rng.below(3) as i64),
                    _ => Op::Delete(u),
                });
            }
            // Kept from the start in one round of three, from rows already
            // there in the others.
            if round % 3 != 0 && batch == 10 {
                keyed.keep_key_indexes();
            }
            let end = if rng.below(50) == 0 { 3 } else { rng.below(3) };
            let a = run(&mut plain, &ops, server, end);
            let b = run(&mut keyed, &ops, server, end);
            assert_eq!(a, b);
            failed += usize::from(!a.starts_with("ok"));
            committed += usize::from(a.starts_with("ok") && end != 2);
            assert_eq!(plain.dump_json(true), keyed.dump_json(true));
        }
    }
    assert!(failed > 1000 && committed > 1000, "{failed} {committed}");
}
