//! The diff-apply experiment: single-element column diffs (update2) against
//! full values (update v1) on big sets, timed and counted in comparisons.

use super::{f, n, Clock};
use crate::replica::Idl;
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::{object, Json, Object};
use ovsdb::uuid::Uuid;
use ovsdb_server::meta::DbMeta;
use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

const SET_SCHEMA: &str = r#"{"name":"D","version":"1.0.0","tables":{
 "Port_Group":{"isRoot":true,"columns":{
   "name":{"type":"string"},
   "ports":{"type":{"key":"uuid","min":0,"max":"unlimited"}}}}}}"#;

thread_local! {
    static SET_COMPARISONS: Cell<u64> = const { Cell::new(0) };
}

/// An atom whose comparisons are counted: the instrumented set the
/// diff-apply experiment replays every message on, with the same sequence
/// of B-tree operations as `Datum::from_json`/`diff_from_json` (one
/// insert per element, in message order) and `Datum::apply_diff` (a
/// `contains` per diff element for the size check, then `remove` or
/// `insert`). Comparisons count the work deterministically, with no clock.
#[derive(Debug, Clone)]
struct Counted(Atom);

impl PartialEq for Counted {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Counted {}
impl PartialOrd for Counted {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Counted {
    fn cmp(&self, other: &Self) -> Ordering {
        SET_COMPARISONS.with(|c| c.set(c.get() + 1));
        self.0.cmp(&other.0)
    }
}

/// Runs `f` and returns the atom comparisons it made on counted sets.
fn counting<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = SET_COMPARISONS.with(|c| c.get());
    let r = f();
    (r, SET_COMPARISONS.with(|c| c.get()) - before)
}

/// The set a message's datum parses into (one insert per element, in the
/// message's order, which is sorted order for a serialized set).
fn counted_parse(d: &Datum) -> BTreeSet<Counted> {
    let mut s = BTreeSet::new();
    for a in d.atoms() {
        s.insert(Counted(a.clone()));
    }
    s
}

/// `Datum::apply_diff` on a set, step for step.
fn counted_apply_diff(cur: &mut BTreeSet<Counted>, diff: &Datum) {
    let d = counted_parse(diff);
    let mut n = cur.len() as i64;
    for k in &d {
        n += if cur.contains(k) { -1 } else { 1 };
    }
    debug_assert!(n >= 0);
    for k in d {
        if !cur.remove(&k) {
            cur.insert(k);
        }
    }
}

/// A full value replacing the column: parse, then compare with the old
/// value (the replica only stores it if it differs).
fn counted_apply_full(cur: &mut BTreeSet<Counted>, full: &Datum) {
    let new = counted_parse(full);
    if *cur != new {
        *cur = new;
    }
}

fn same_set(counted: &BTreeSet<Counted>, d: Option<&Datum>) -> bool {
    match d.and_then(Datum::as_set) {
        Some(s) => s.len() == counted.len() && s.iter().zip(counted).all(|(a, b)| *a == b.0),
        None => false,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct DiffApplyPoint {
    pub set_size: usize,
    pub diffs: usize,
    /// Bytes of one single-element update2 modify message.
    pub diff_message_bytes: usize,
    /// Bytes the same change costs as a v1 full-value update.
    pub full_message_bytes: usize,
    pub diff_us_per_apply: f64,
    pub full_us_per_apply: f64,
    /// d·log2(n): the model cost of a diff apply.
    pub model_d_log_n: f64,
    /// Atom comparisons per single-element diff apply (parse + apply), on
    /// the instrumented set replaying the same messages.
    pub diff_comparisons_per_apply: f64,
    /// Atom comparisons per full-value apply (parse + compare).
    pub full_comparisons_per_apply: f64,
    /// The instrumented set ended equal to the replica's column after the
    /// diffs and after the full values (the replay follows the replica).
    pub model_matches_replica: bool,
}

/// Cost of one diff of `d` elements (all new to the set) at set size n.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffSizePoint {
    pub set_size: usize,
    pub diff_elements: usize,
    /// Atom comparisons to parse and apply the diff.
    pub comparisons: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DiffApplyReport {
    pub points: Vec<DiffApplyPoint>,
    /// Diffs of growing size d at the largest n: comparisons grow ~d.
    pub diff_sizes: Vec<DiffSizePoint>,
}

/// Diff sizes measured by [`diff_apply`] at its largest set size.
pub const DIFF_SIZES: [usize; 4] = [1, 10, 100, 1000];

fn uuid_n(i: usize) -> Uuid {
    Uuid::from_u128(0x9e37_79b9_7f4a_7c15_u128.wrapping_mul(i as u128 + 1) | 1)
}

/// Applies single-element diffs (update2 `modify`) to a replica row whose
/// set column holds n UUIDs, for each n in `sizes`, and compares with
/// receiving the full value (update v1).
pub fn diff_apply(sizes: &[usize], diffs: usize, clock: Clock<'_>) -> DiffApplyReport {
    let meta = Arc::new(DbMeta::from_text(SET_SCHEMA).expect("schema"));
    let mut points = Vec::new();
    for &size in sizes {
        let mut idl = Idl::new(meta.clone(), true);
        let row = Uuid::from_u128(42);
        let set: ovsdb::AtomSet = (0..size).map(|i| Atom::Uuid(uuid_n(i))).collect();
        let full = Datum::Set(set);
        let mut rows = Object::new();
        rows.insert(
            row.to_string(),
            object(vec![(
                "initial",
                object(vec![("name", Json::from("pg")), ("ports", full.to_json())]),
            )]),
        );
        let tu = object(vec![("Port_Group", Json::Object(rows))]);
        idl.apply_table_updates(2, &tu, true).expect("initial");
        let t = idl.table_index("Port_Group").unwrap_or(0);
        let ports = idl.column_index(t, "ports").unwrap_or(0);
        let mut model = counted_parse(&full);
        // Messages: alternately add and remove element `size + k`.
        let mk = |k: usize| -> Json {
            let a = Atom::Uuid(uuid_n(size + (k / 2) % 64));
            let mut rows = Object::new();
            rows.insert(
                row.to_string(),
                object(vec![(
                    "modify",
                    object(vec![("ports", Datum::scalar(a).to_json())]),
                )]),
            );
            object(vec![("Port_Group", Json::Object(rows))])
        };
        let diffs = diffs.max(1);
        let diff_msgs: Vec<Json> = (0..diffs).map(mk).collect();
        let diff_bytes = diff_msgs.first().map(Json::serialized_len).unwrap_or(0);
        let t0 = clock();
        for m in &diff_msgs {
            idl.apply_table_updates(2, m, false).expect("diff applies");
        }
        let diff_ms = clock() - t0;
        let ((), diff_cmps) = counting(|| {
            for k in 0..diffs {
                let a = Atom::Uuid(uuid_n(size + (k / 2) % 64));
                counted_apply_diff(&mut model, &Datum::scalar(a));
            }
        });
        let mut matches = same_set(&model, idl.committed(t, row).and_then(|r| r.get(ports)));
        // Full-value (v1) updates of the same changes: every message holds
        // the whole set (prepared outside the timed loop).
        let reps = diffs.clamp(1, 20);
        let mut cur = full.clone();
        let mut full_values = Vec::new();
        let mut full_msgs = Vec::new();
        for k in 0..reps {
            let a = Atom::Uuid(uuid_n(size + 1000 + k));
            if let Datum::Set(s) = &mut cur {
                s.insert(a);
            }
            full_values.push(cur.clone());
            let mut rows = Object::new();
            rows.insert(
                row.to_string(),
                object(vec![
                    ("old", object(vec![])),
                    (
                        "new",
                        object(vec![("name", Json::from("pg")), ("ports", cur.to_json())]),
                    ),
                ]),
            );
            full_msgs.push(object(vec![("Port_Group", Json::Object(rows))]));
        }
        let full_bytes = full_msgs.first().map(Json::serialized_len).unwrap_or(0);
        let t1 = clock();
        for m in &full_msgs {
            idl.apply_table_updates(1, m, false).expect("full applies");
        }
        let full_ms = clock() - t1;
        let ((), full_cmps) = counting(|| {
            for v in &full_values {
                counted_apply_full(&mut model, v);
            }
        });
        matches &= same_set(&model, idl.committed(t, row).and_then(|r| r.get(ports)));
        points.push(DiffApplyPoint {
            set_size: size,
            diffs,
            diff_message_bytes: diff_bytes,
            full_message_bytes: full_bytes,
            diff_us_per_apply: diff_ms * 1000.0 / diffs.max(1) as f64,
            full_us_per_apply: full_ms * 1000.0 / reps as f64,
            model_d_log_n: (size.max(2) as f64).log2(),
            diff_comparisons_per_apply: diff_cmps as f64 / diffs as f64,
            full_comparisons_per_apply: full_cmps as f64 / reps as f64,
            model_matches_replica: matches,
        });
    }
    let n = sizes.iter().copied().max().unwrap_or(0);
    let base = ovsdb::order::btree_set((0..n).map(|i| Counted(Atom::Uuid(uuid_n(i)))));
    let diff_sizes = DIFF_SIZES
        .iter()
        .map(|&d| {
            let diff = Datum::set((0..d).map(|k| Atom::Uuid(uuid_n(n + 1 + k))));
            let mut set = base.clone();
            let ((), comparisons) = counting(|| counted_apply_diff(&mut set, &diff));
            DiffSizePoint {
                set_size: n,
                diff_elements: d,
                comparisons,
            }
        })
        .collect();
    DiffApplyReport { points, diff_sizes }
}

impl DiffApplyReport {
    pub fn to_json(&self) -> Json {
        object(vec![
            ("experiment", Json::from("diff-apply")),
            (
                "points",
                Json::Array(
                    self.points
                        .iter()
                        .map(|p| {
                            object(vec![
                                ("set_size", n(p.set_size as u64)),
                                ("diffs", n(p.diffs as u64)),
                                ("diff_message_bytes", n(p.diff_message_bytes as u64)),
                                ("full_message_bytes", n(p.full_message_bytes as u64)),
                                ("diff_us_per_apply", f(p.diff_us_per_apply)),
                                ("full_us_per_apply", f(p.full_us_per_apply)),
                                ("model_d_log_n", f(p.model_d_log_n)),
                                (
                                    "diff_comparisons_per_apply",
                                    f(p.diff_comparisons_per_apply),
                                ),
                                (
                                    "full_comparisons_per_apply",
                                    f(p.full_comparisons_per_apply),
                                ),
                                ("model_matches_replica", Json::Bool(p.model_matches_replica)),
                            ])
                        })
                        .collect(),
                ),
            ),
            (
                "diff_sizes",
                Json::Array(
                    self.diff_sizes
                        .iter()
                        .map(|p| {
                            object(vec![
                                ("set_size", n(p.set_size as u64)),
                                ("diff_elements", n(p.diff_elements as u64)),
                                ("comparisons", n(p.comparisons)),
                            ])
                        })
                        .collect(),
                ),
            ),
        ])
    }

    pub fn to_text(&self) -> String {
        let mut s = String::from(
            "diff-apply: single-element diffs (update2 modify) vs full values (update v1)\n",
        );
        s.push_str(&format!(
            "{:>9} {:>7} {:>11} {:>12} {:>14} {:>14} {:>9} {:>11} {:>11}\n",
            "set size",
            "diffs",
            "diff msg B",
            "full msg B",
            "diff us/apply",
            "full us/apply",
            "log2 n",
            "diff cmp",
            "full cmp"
        ));
        for p in &self.points {
            s.push_str(&format!(
                "{:>9} {:>7} {:>11} {:>12} {:>14.3} {:>14.1} {:>9.1} {:>11.1} {:>11.0}\n",
                p.set_size,
                p.diffs,
                p.diff_message_bytes,
                p.full_message_bytes,
                p.diff_us_per_apply,
                p.full_us_per_apply,
                p.model_d_log_n,
                p.diff_comparisons_per_apply,
                p.full_comparisons_per_apply
            ));
        }
        s.push_str(
            "cmp = atom comparisons per apply (parse + apply), counted on an instrumented set\n",
        );
        for p in &self.diff_sizes {
            s.push_str(&format!(
                "diff of {:>5} new elements at n = {}: {} comparisons ({:.1} per element)\n",
                p.diff_elements,
                p.set_size,
                p.comparisons,
                p.comparisons as f64 / p.diff_elements.max(1) as f64
            ));
        }
        s
    }
}
