//! Ordered IDL indexes (the C IDL's skiplists), as B-trees keyed by
//! (column values, row UUID), with a count of the key comparisons and
//! insert/delete operations they cost.

use ovsdb::datum::Datum;
use ovsdb::uuid::Uuid;
use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;

thread_local! {
    static COMPARISONS: Cell<u64> = const { Cell::new(0) };
}

/// Total key comparisons made by index operations on this thread.
pub fn comparisons() -> u64 {
    COMPARISONS.with(|c| c.get())
}

#[derive(Debug, Clone)]
struct Key {
    values: Vec<Datum>,
    /// Bit j set: column j sorts in descending order.
    desc: u64,
    uuid: Uuid,
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        COMPARISONS.with(|c| c.set(c.get() + 1));
        // Generic datum order as the C comparator: size first, then
        // elements; ties broken by row UUID.
        for (j, (a, b)) in self.values.iter().zip(other.values.iter()).enumerate() {
            let mut o = a.len().cmp(&b.len()).then_with(|| a.cmp(b));
            if j < 64 && self.desc & (1 << j) != 0 {
                o = o.reverse();
            }
            if o != Ordering::Equal {
                return o;
            }
        }
        self.uuid.cmp(&other.uuid)
    }
}

/// Counters of one index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexStats {
    pub inserts: u64,
    pub deletes: u64,
    pub lookups: u64,
}

/// One ordered index over some columns of a table.
#[derive(Debug, Clone)]
pub struct Index {
    pub table: usize,
    pub columns: Vec<usize>,
    desc: u64,
    set: BTreeSet<Key>,
    pub stats: IndexStats,
}

impl Index {
    pub fn new(table: usize, columns: Vec<usize>) -> Index {
        Index::with_order(table, columns, &[])
    }

    /// An index whose columns flagged in `desc` sort in descending order.
    pub fn with_order(table: usize, columns: Vec<usize>, desc: &[bool]) -> Index {
        let mut bits = 0u64;
        for (j, d) in desc.iter().enumerate().take(64) {
            if *d {
                bits |= 1 << j;
            }
        }
        Index {
            table,
            columns,
            desc: bits,
            set: BTreeSet::new(),
            stats: IndexStats::default(),
        }
    }

    fn key(&self, uuid: Uuid, data: &[Datum]) -> Key {
        Key {
            values: self
                .columns
                .iter()
                .map(|&c| data.get(c).cloned().unwrap_or_default())
                .collect(),
            desc: self.desc,
            uuid,
        }
    }

    pub fn insert(&mut self, uuid: Uuid, data: &[Datum]) {
        self.stats.inserts += 1;
        let k = self.key(uuid, data);
        self.set.insert(k);
    }

    pub fn remove(&mut self, uuid: Uuid, data: &[Datum]) {
        self.stats.deletes += 1;
        let k = self.key(uuid, data);
        self.set.remove(&k);
    }

    pub fn clear(&mut self) {
        self.stats.deletes += self.set.len() as u64;
        self.set.clear();
    }

    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Rows whose indexed columns equal `values`, in index order.
    pub fn find_eq(&mut self, values: &[Datum]) -> Vec<Uuid> {
        self.stats.lookups += 1;
        let lo = Key {
            values: values.to_vec(),
            desc: self.desc,
            uuid: Uuid::NIL,
        };
        let hi = Key {
            values: values.to_vec(),
            desc: self.desc,
            uuid: Uuid(u128::MAX),
        };
        self.set
            .range((Bound::Included(lo), Bound::Included(hi)))
            .map(|k| k.uuid)
            .collect()
    }

    /// Rows with keys in `[from, to]` (either bound optional), in order.
    pub fn range(&mut self, from: Option<&[Datum]>, to: Option<&[Datum]>) -> Vec<Uuid> {
        self.stats.lookups += 1;
        let lo = match from {
            Some(v) => Bound::Included(Key {
                values: v.to_vec(),
                desc: self.desc,
                uuid: Uuid::NIL,
            }),
            None => Bound::Unbounded,
        };
        let hi = match to {
            Some(v) => Bound::Included(Key {
                values: v.to_vec(),
                desc: self.desc,
                uuid: Uuid(u128::MAX),
            }),
            None => Bound::Unbounded,
        };
        self.set.range((lo, hi)).map(|k| k.uuid).collect()
    }

    /// Every row in index order.
    pub fn all(&self) -> Vec<Uuid> {
        self.set.iter().map(|k| k.uuid).collect()
    }
}
