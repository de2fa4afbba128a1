//! The unique-index check at commit ([`first_duplicate`], and natively
//! its lookup through the committed rows' keys, [`KeyIndex`]), which
//! reports the pair of rows in ovsdb-server's words. (References, garbage
//! collection and weak references are the commit engine's, `core`.)

use crate::{Row, RowRef, ServerRow};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::uuid::Uuid;
use std::collections::BTreeMap;

/// A table's rows as they are after a transaction's writes (`changed`:
/// `None` = deleted): the committed rows it did not write, then the rows
/// it wrote and kept.
fn rows_after<'a>(
    committed: &'a BTreeMap<Uuid, RowRef>,
    changed: &'a BTreeMap<Uuid, Option<Row>>,
) -> impl Iterator<Item = (Uuid, &'a [Datum])> + 'a {
    committed
        .iter()
        .filter(|(u, _)| !changed.contains_key(u))
        .map(|(u, r)| (*u, r.cols()))
        .chain(
            changed
                .iter()
                .filter_map(|(u, r)| r.as_ref().map(|r| (*u, r.cols()))),
        )
}

/// The committed rows' keys of one unique index, by a 64-bit hash of the
/// key: hash → row (the hash in a `Uuid`, so the map is the same type as a
/// table's and adds no code to the wasm). `pure` is false once two
/// committed rows were seen with one hash (the same key, from rows
/// replayed without the check, or a collision); the check then compares
/// rows again, as before.
#[derive(Debug, Clone)]
pub(crate) struct KeyIndex {
    rows: BTreeMap<Uuid, RowRef>,
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

/// FNV-1a over the key's atoms (the index's columns of `cols`).
fn key_hash(idx: &[usize], cols: &[Datum]) -> Uuid {
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
    for &c in idx {
        match &cols[c] {
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

impl KeyIndex {
    /// Row `old` lets go of its key (an install's first pass).
    pub(crate) fn remove(&mut self, idx: &[usize], old: &RowRef) {
        let h = key_hash(idx, old.cols());
        if self.rows.get(&h).is_some_and(|r| r.uuid == old.uuid) {
            self.rows.remove(&h);
        }
    }

    /// Row `new` holds its key (an install's second pass).
    pub(crate) fn insert(&mut self, idx: &[usize], new: &RowRef) {
        if let Some(other) = self.rows.insert(key_hash(idx, new.cols()), new.clone()) {
            if other.uuid != new.uuid {
                self.pure = false;
            }
        }
    }
}

/// [`first_duplicate`] through the committed rows' keys, for a few
/// written rows: each written row, in UUID order, looks up the committed
/// row that holds its key (if the transaction leaves that row alone) and
/// the written rows before it. The scan reads the committed rows it left
/// alone first, then the written ones in UUID order (`rows_after`), so the
/// first written row with an earlier holder is the scan's answer. Many
/// written rows, or keys that are not pure, take the scan itself.
pub(crate) fn first_duplicate_indexed(
    idx: &[usize],
    keys: &KeyIndex,
    committed: &BTreeMap<Uuid, RowRef>,
    changed: &BTreeMap<Uuid, Option<Row>>,
) -> Option<(Uuid, Uuid)> {
    let written: Vec<(Uuid, Uuid, &[Datum])> = changed
        .iter()
        .filter_map(|(u, r)| r.as_ref().map(|r| (key_hash(idx, r.cols()), *u, r.cols())))
        .collect();
    if !keys.pure || written.len() > 32 {
        return first_duplicate(idx, committed, changed);
    }
    let same = |a: &[Datum], b: &[Datum]| idx.iter().all(|&c| a[c] == b[c]);
    for (i, (h, u, cols)) in written.iter().enumerate() {
        let held = keys
            .rows
            .get(h)
            .filter(|r| !changed.contains_key(&r.uuid) && same(r.cols(), cols))
            .map(|r| r.uuid)
            .or_else(|| {
                written[..i]
                    .iter()
                    .find(|(h2, _, c2)| h2 == h && same(c2, cols))
                    .map(|w| w.1)
            });
        if let Some(first) = held {
            return Some((first, *u));
        }
    }
    None
}

/// The first two rows, in [`rows_after`] order, that unique index `idx`
/// (column numbers) finds equal after the transaction: `(earlier, later)`.
///
/// The committed rows satisfy the index, so a duplicate always involves a
/// row the transaction wrote: with few written rows only the rows whose key
/// equals a written row's key are tracked, which keeps the check one pass
/// of comparisons instead of a map of every row's key per transaction (the
/// simulator's hour runs commit thousands of ports into one index). With
/// many written rows it builds the map. Both give the same pair.
pub(crate) fn first_duplicate(
    idx: &[usize],
    committed: &BTreeMap<Uuid, RowRef>,
    changed: &BTreeMap<Uuid, Option<Row>>,
) -> Option<(Uuid, Uuid)> {
    let same = |a: &[Datum], b: &[Datum]| {
        idx.iter()
            .all(|&c| a[c].cmp(&b[c]) == std::cmp::Ordering::Equal)
    };
    let written: Vec<&[Datum]> = changed
        .values()
        .filter_map(|r| r.as_ref().map(|r| r.cols()))
        .collect();
    if written.len() > 32 {
        let mut seen: BTreeMap<Vec<&Datum>, Uuid> = BTreeMap::new();
        for (u, cols) in rows_after(committed, changed) {
            let key: Vec<&Datum> = idx.iter().map(|&c| &cols[c]).collect();
            if let Some(other) = seen.insert(key, u) {
                return Some((other, u));
            }
        }
        return None;
    }
    // Per written key (by its first holder in `written`), the first row seen
    // with it.
    let mut first: Vec<Option<Uuid>> = vec![None; written.len()];
    for (u, cols) in rows_after(committed, changed) {
        let Some(k) = written.iter().position(|w| same(w, cols)) else {
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
    use super::{first_duplicate, first_duplicate_indexed, KeyIndex};
    use crate::testkit::{U1, U2, U3};
    use crate::Row;
    use ovsdb::datum::Datum;
    use ovsdb::uuid::Uuid;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    /// A row whose one column is `name`.
    fn new_row(uuid: Uuid, name: Datum) -> Row {
        let columns = vec![name, Datum::default(), Datum::default()];
        Row { uuid, columns }
    }

    #[test]
    fn first_duplicate_finds_the_earlier_and_the_later_row() {
        let row = |u: &str, name: &str| {
            let name = Datum::scalar(ovsdb::atom::Atom::String(name.into()));
            new_row(Uuid::parse(u).unwrap(), name)
        };
        let (u1, u2, u3) = (
            Uuid::parse(U1).unwrap(),
            Uuid::parse(U2).unwrap(),
            Uuid::parse(U3).unwrap(),
        );
        let committed =
            BTreeMap::from([(u1, Arc::new(row(U1, "x"))), (u3, Arc::new(row(U3, "y")))]);
        // Writing `y` into U2 clashes with the committed U3.
        let changed = BTreeMap::from([(u2, Some(row(U2, "y")))]);
        assert_eq!(first_duplicate(&[0], &committed, &changed), Some((u3, u2)));
        // Rewriting U3 to `z` at the same time removes the clash.
        let changed = BTreeMap::from([(u2, Some(row(U2, "y"))), (u3, Some(row(U3, "z")))]);
        assert_eq!(first_duplicate(&[0], &committed, &changed), None);
        // Deleting U1 and reusing its key elsewhere is fine too.
        let changed = BTreeMap::from([(u1, None), (u2, Some(row(U2, "x")))]);
        assert_eq!(first_duplicate(&[0], &committed, &changed), None);
    }

    /// On random tables and transactions (keys from a small alphabet, so
    /// duplicates are common, rows that pass keys between them, deletes),
    /// the lookup through the committed keys names the same pair as the
    /// scan of every row, and none when there is none.
    #[test]
    fn the_key_lookup_finds_the_pair_the_scan_finds() {
        let mut rng = crate::rng::SplitMix64::new(7);
        let mut below = |n: u64| rng.next_u64() % n;
        let name = |k: u64| Datum::scalar(ovsdb::atom::Atom::String(format!("k{k}")));
        let uuid = |n: u64| Uuid::parse(&format!("00000000-0000-0000-0000-{n:012x}")).unwrap();
        let mut found = 0;
        for _ in 0..3000 {
            let rows = below(12);
            let mut committed = BTreeMap::new();
            let mut keys = KeyIndex::default();
            for (i, k) in (0..rows).map(|i| (i, i * 3)) {
                let r = new_row(uuid(i * 7 + 1), name(k));
                let r = Arc::new(r);
                keys.insert(&[0], &r);
                committed.insert(r.uuid, r);
            }
            let mut changed = BTreeMap::new();
            for _ in 0..1 + below(6) {
                let u = uuid(1 + below(rows * 7 + 8));
                let row = (below(5) > 0).then(|| new_row(u, name(below(rows * 3 + 2))));
                changed.insert(u, row);
            }
            let scan = first_duplicate(&[0], &committed, &changed);
            let lookup = first_duplicate_indexed(&[0], &keys, &committed, &changed);
            assert_eq!(lookup, scan, "{committed:?} {changed:?}");
            found += usize::from(scan.is_some());
        }
        assert!(found > 300, "{found}");
    }
}
