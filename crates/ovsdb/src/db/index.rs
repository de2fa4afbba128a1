//! Unique indexes: the one check at commit ([`Txn`]'s, run unless
//! [`ReplayOptions::skip_index_check`]), for a file's replay and for the
//! ovsdb-server model (whose core database holds its tables' index
//! columns), and the committed keys by hash ([`KeyIndex`]) a database
//! keeps on request ([`Database::keep_key_indexes`]), so that a commit
//! looks up the keys it writes instead of comparing every row.
//!
//! As ovsdb-server's `check_index_uniqueness`, only the rows the
//! transaction wrote (inserted, changed or joined, and kept) are checked
//! against the others: each written row, in UUID order, against the rows
//! the transaction left alone, then against the written rows before it.
//! The pair named is the first two rows found equal in that order.

use super::{restore_keys, ColTrack, Database, Row, RowMap, Txn};
use crate::atom::Atom;
use crate::datum::Datum;
use crate::error::{Error, Result};
use crate::uuid::Uuid;
use std::collections::BTreeMap;
use std::sync::Arc;

#[cfg(doc)]
use super::ReplayOptions;

/// The committed rows' keys of one unique index, by a 64-bit hash of the
/// key: hash → row (the hash in a `Uuid`). `pure` is false once two
/// committed rows were seen with one hash (the same key, from rows
/// committed without the check, or a collision); the check then compares
/// rows again.
#[derive(Debug, Clone)]
pub(super) struct KeyIndex {
    rows: BTreeMap<Uuid, Uuid>,
    pure: bool,
}

impl Default for KeyIndex {
    fn default() -> Self {
        KeyIndex {
            rows: BTreeMap::new(),
            pure: true,
        }
    }
}

impl KeyIndex {
    /// Row `u` lets go of key hash `h`.
    fn remove(&mut self, h: Uuid, u: Uuid) {
        if self.rows.get(&h) == Some(&u) {
            self.rows.remove(&h);
        }
    }

    /// Row `u` holds key hash `h`.
    fn insert(&mut self, h: Uuid, u: Uuid) {
        if let Some(other) = self.rows.insert(h, u) {
            if other != u {
                self.pure = false;
            }
        }
    }
}

/// FNV-1a over a key's atoms.
fn key_hash<'a>(key: impl IntoIterator<Item = &'a Datum>) -> Uuid {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for &x in b {
            h ^= u64::from(x);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    let mut atom = |a: &Atom| match a {
        Atom::Integer(n) => eat(&n.to_le_bytes()),
        Atom::Real(x) => eat(&x.to_bits().to_le_bytes()),
        Atom::Boolean(b) => eat(&[u8::from(*b)]),
        Atom::String(s) => {
            eat(s.as_bytes());
            eat(&[0xff]);
        }
        Atom::Uuid(u) => eat(&u.as_u128().to_le_bytes()),
    };
    for d in key {
        match d {
            Datum::Set(s) => s.iter().for_each(&mut atom),
            Datum::Map(m) => m.iter().for_each(|(k, v)| {
                atom(k);
                atom(v);
            }),
        }
        atom(&Atom::Boolean(true));
    }
    Uuid(u128::from(h))
}

/// Row columns `cols`' key in index `idx` (column numbers).
fn row_key(idx: &[usize], cols: &[Datum]) -> Uuid {
    key_hash(idx.iter().map(|&c| &cols[c]))
}

impl Database {
    /// Keeps every unique index's committed keys from now on (built here
    /// from the rows, then kept by every transaction's commit), so that the
    /// check of a commit writing a few rows looks their keys up instead of
    /// comparing every row of the table: for a database that checks
    /// indexes on every commit, such as the ovsdb-server model's.
    pub fn keep_key_indexes(&mut self) {
        self.key_indexes = true;
        for (t, m) in self
            .tables
            .iter_mut()
            .map(Arc::make_mut)
            .zip(self.meta.iter())
        {
            t.keys = m
                .indexes
                .iter()
                .map(|idx| {
                    let mut k = KeyIndex::default();
                    for (u, r) in &t.rows {
                        k.insert(row_key(idx, &r.columns), *u);
                    }
                    k
                })
                .collect();
        }
    }

    /// Row `r` of table `ti` left its place (outside a transaction): its
    /// keys leave the kept indexes.
    pub(super) fn drop_row_keys(&mut self, ti: usize, r: &Row) {
        let meta = self.meta.clone();
        let t = self.table_mut(ti);
        for (k, idx) in t.keys.iter_mut().zip(meta[ti].indexes.iter()) {
            k.remove(row_key(idx, &r.columns), r.uuid);
        }
    }

    /// Row `r` of table `ti` took its place (outside a transaction): its
    /// keys join the kept indexes.
    pub(super) fn add_row_keys(&mut self, ti: usize, r: &Row) {
        let meta = self.meta.clone();
        let t = self.table_mut(ti);
        for (k, idx) in t.keys.iter_mut().zip(meta[ti].indexes.iter()) {
            k.insert(row_key(idx, &r.columns), r.uuid);
        }
    }
}

impl Txn<'_> {
    /// The unique-index check over the tables the transaction wrote
    /// (tables in the order they joined it; with
    /// [`ReplayOptions::server_checks`], in name order, as the server model
    /// reports the first).
    pub(super) fn check_indexes(&self) -> Result<()> {
        let db = &*self.db;
        let mut tables: Vec<usize> = self
            .st
            .table_order
            .iter()
            .copied()
            .filter(|&t| !db.meta[t].indexes.is_empty())
            .collect();
        if self.st.server_checks && tables.len() > 1 {
            let names = &db.schema.tables;
            crate::order::sort_by(&mut tables, |a, b| names[*a].name.cmp(&names[*b].name));
        }
        for ti in tables {
            let rows = &db.tables[ti].rows;
            let touched = |u: &Uuid| self.st.rows.contains_key(&(ti, *u));
            // The rows written and kept, in UUID order.
            let written: Vec<(Uuid, &[Datum])> = self
                .st
                .rows
                .range((ti, Uuid(0))..=(ti, Uuid(u128::MAX)))
                .filter_map(|(&(_, u), _)| rows.get(&u).map(|r| (u, &r.columns[..])))
                .collect();
            if written.is_empty() {
                continue;
            }
            for (ix, idx) in db.meta[ti].indexes.iter().enumerate() {
                let keys = db.tables[ti].keys.get(ix);
                if let Some((a, b)) = first_duplicate(idx, keys, rows, &written, &touched) {
                    return Err(self.duplicate_error(ti, ix, a, b));
                }
            }
        }
        Ok(())
    }

    /// The error naming rows `first` and `second` of table `ti`, equal in
    /// its index `ix`: in the server model's words with
    /// [`ReplayOptions::server_checks`].
    fn duplicate_error(&self, ti: usize, ix: usize, first: Uuid, second: Uuid) -> Error {
        let ts = &self.db.schema.tables[ti];
        let idx = &self.db.meta[ti].indexes[ix];
        if self.st.server_checks {
            let names: Vec<&str> = idx.iter().map(|&c| ts.columns[c].name.as_str()).collect();
            return Error::constraint(format!(
                "Transaction causes multiple rows in \"{}\" table to have identical values for ({}) ({} and {}).",
                ts.name,
                names.join(", "),
                first,
                second
            ));
        }
        let values: Vec<String> = match self.db.tables[ti].rows.get(&second) {
            Some(row) => idx
                .iter()
                .map(|&c| row.columns[c].to_json().to_string_compact())
                .collect(),
            None => Vec::new(),
        };
        Error::constraint(format!(
            "Transaction causes multiple rows in \"{}\" table to have identical values ({}) for index on columns {:?}. First row, with UUID {}, and second row, with UUID {}.",
            ts.name,
            values.join(", "),
            ts.indexes[ix],
            first,
            second
        ))
    }

    /// A successful commit's keys into the kept key indexes (if any):
    /// every old key goes before any new one comes (a transaction may pass
    /// a key from one row to another).
    pub(super) fn keep_keys(&mut self) {
        let db = &mut *self.db;
        let st = &self.st;
        if !db.key_indexes || st.table_order.iter().all(|&t| db.tables[t].keys.is_empty()) {
            return;
        }
        // The keys the rows take: (table, index, hash, row).
        let mut taken: Vec<(usize, usize, Uuid, Uuid)> = Vec::new();
        for (&(ti, u), rt) in &st.rows {
            if db.tables[ti].keys.is_empty() {
                continue;
            }
            let t = Arc::make_mut(&mut db.tables[ti]);
            for (ix, idx) in db.meta[ti].indexes.iter().enumerate() {
                let keys = &mut t.keys[ix];
                if rt.deleted {
                    if let Some(o) = &rt.original {
                        keys.remove(row_key(idx, &o.columns), u);
                    }
                    continue;
                }
                if !rt.inserted && !idx.iter().any(|c| rt.cols.contains_key(c)) {
                    continue;
                }
                let Some(r) = t.rows.get(&u) else {
                    continue;
                };
                if !rt.inserted {
                    // The key before the transaction.
                    let old: Vec<Datum> = idx
                        .iter()
                        .map(|c| match rt.cols.get(c) {
                            Some(ColTrack::Old(o)) => o.clone(),
                            Some(ColTrack::Keys(k)) => restore_keys(r.columns[*c].clone(), k),
                            None => r.columns[*c].clone(),
                        })
                        .collect();
                    keys.remove(key_hash(&old), u);
                }
                taken.push((ti, ix, row_key(idx, &r.columns), u));
            }
        }
        for (ti, ix, h, u) in taken {
            db.table_mut(ti).keys[ix].insert(h, u);
        }
    }
}

/// The first two rows that unique index `idx` (column numbers) finds equal
/// after a transaction, `(earlier, later)`: `rows` as the transaction
/// leaves them, `written` those it wrote and kept (UUID order), `touched`
/// whether it wrote or deleted a row.
///
/// With the committed keys (`keys`, pure) and a few written rows, each
/// written row looks up the row that held its key (if the transaction left
/// it alone) and the written rows before it. Otherwise the rows are read,
/// those left alone first, then the written ones: with a few written rows
/// only keys equal to a written row's are followed (one pass of
/// comparisons instead of a map of every row's key: the simulator's hour
/// commits thousands of ports into one index); with many, every key goes
/// into a map. All three give the same pair.
fn first_duplicate(
    idx: &[usize],
    keys: Option<&KeyIndex>,
    rows: &RowMap,
    written: &[(Uuid, &[Datum])],
    touched: &dyn Fn(&Uuid) -> bool,
) -> Option<(Uuid, Uuid)> {
    const FEW: usize = 32;
    if let Some(keys) = keys.filter(|k| k.pure && written.len() <= FEW) {
        let same = |a: &[Datum], b: &[Datum]| idx.iter().all(|&c| a[c] == b[c]);
        let hashes: Vec<Uuid> = written.iter().map(|(_, c)| row_key(idx, c)).collect();
        for (i, &(u, cols)) in written.iter().enumerate() {
            let h = hashes[i];
            let held = keys
                .rows
                .get(&h)
                .filter(|v| !touched(v) && rows.get(*v).is_some_and(|r| same(&r.columns, cols)))
                .copied()
                .or_else(|| {
                    (0..i)
                        .find(|&j| hashes[j] == h && same(written[j].1, cols))
                        .map(|j| written[j].0)
                });
            if let Some(first) = held {
                return Some((first, u));
            }
        }
        return None;
    }
    let after = rows
        .iter()
        .filter(|(u, _)| !touched(u))
        .map(|(u, r)| (*u, &r.columns[..]))
        .chain(written.iter().copied());
    if written.len() > FEW {
        let mut seen: BTreeMap<Vec<&Datum>, Uuid> = BTreeMap::new();
        for (u, cols) in after {
            let key: Vec<&Datum> = idx.iter().map(|&c| &cols[c]).collect();
            if let Some(other) = seen.insert(key, u) {
                return Some((other, u));
            }
        }
        return None;
    }
    let same = |a: &[Datum], b: &[Datum]| {
        idx.iter()
            .all(|&c| a[c].cmp(&b[c]) == std::cmp::Ordering::Equal)
    };
    // Per written key (by its first holder in `written`), the first row
    // seen with it.
    let mut first: Vec<Option<Uuid>> = vec![None; written.len()];
    for (u, cols) in after {
        let Some(k) = written.iter().position(|w| same(w.1, cols)) else {
            continue;
        };
        match first[k] {
            Some(other) => return Some((other, u)),
            None => first[k] = Some(u),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{first_duplicate, row_key, KeyIndex};
    use crate::atom::Atom;
    use crate::datum::Datum;
    use crate::db::{Row, RowMap};
    use crate::uuid::Uuid;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    fn name(k: u64) -> Datum {
        Datum::scalar(Atom::String(format!("k{k}")))
    }

    /// The rows after `changed` (`None`: deleted) and the written rows.
    fn after(committed: &BTreeMap<Uuid, Datum>, changed: &BTreeMap<Uuid, Option<Datum>>) -> RowMap {
        let mut rows = RowMap::new();
        for (u, d) in committed {
            rows.insert(
                *u,
                Arc::new(Row {
                    uuid: *u,
                    columns: vec![d.clone()],
                }),
            );
        }
        for (u, d) in changed {
            match d {
                Some(d) => rows.insert(
                    *u,
                    Arc::new(Row {
                        uuid: *u,
                        columns: vec![d.clone()],
                    }),
                ),
                None => rows.remove(u),
            };
        }
        rows
    }

    fn dup(
        committed: &BTreeMap<Uuid, Datum>,
        changed: &BTreeMap<Uuid, Option<Datum>>,
        keyed: bool,
    ) -> Option<(Uuid, Uuid)> {
        let rows = after(committed, changed);
        let mut keys = KeyIndex::default();
        for (u, d) in committed {
            keys.insert(row_key(&[0], std::slice::from_ref(d)), *u);
        }
        let written: Vec<(Uuid, &[Datum])> = changed
            .keys()
            .filter_map(|u| rows.get(u).map(|r| (*u, &r.columns[..])))
            .collect();
        let touched = |u: &Uuid| changed.contains_key(u);
        first_duplicate(&[0], keyed.then_some(&keys), &rows, &written, &touched)
    }

    #[test]
    fn the_first_duplicate_names_the_earlier_and_the_later_row() {
        let (u1, u2, u3) = (Uuid(1), Uuid(2), Uuid(3));
        let committed = BTreeMap::from([(u1, name(1)), (u3, name(3))]);
        for keyed in [false, true] {
            // Writing U3's key into U2 clashes with the committed U3.
            let changed = BTreeMap::from([(u2, Some(name(3)))]);
            assert_eq!(dup(&committed, &changed, keyed), Some((u3, u2)));
            // Rewriting U3 at the same time removes the clash.
            let changed = BTreeMap::from([(u2, Some(name(3))), (u3, Some(name(4)))]);
            assert_eq!(dup(&committed, &changed, keyed), None);
            // Deleting U1 and reusing its key elsewhere is fine too.
            let changed = BTreeMap::from([(u1, None), (u2, Some(name(1)))]);
            assert_eq!(dup(&committed, &changed, keyed), None);
        }
    }

    /// On random tables and transactions (keys from a small alphabet, so
    /// duplicates are common, rows that pass keys between them, deletes),
    /// the lookup through the committed keys names the same pair as the
    /// scan of every row, and none when there is none.
    #[test]
    fn the_key_lookup_finds_the_pair_the_scan_finds() {
        let mut state: u64 = 7;
        let mut below = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut found = 0;
        for _ in 0..3000 {
            let rows = below(12);
            let committed: BTreeMap<Uuid, Datum> = (0..rows)
                .map(|i| (Uuid(u128::from(i * 7 + 1)), name(i * 3)))
                .collect();
            let mut changed = BTreeMap::new();
            for _ in 0..1 + below(6) {
                let u = Uuid(u128::from(1 + below(rows * 7 + 8)));
                let d = (below(5) > 0).then(|| name(below(rows * 3 + 2)));
                changed.insert(u, d);
            }
            let scan = dup(&committed, &changed, false);
            let lookup = dup(&committed, &changed, true);
            assert_eq!(lookup, scan, "{committed:?} {changed:?}");
            found += usize::from(scan.is_some());
        }
        assert!(found > 300, "{found}");
    }
}
