//! Stable sorts through one instance of the standard library's stable sort,
//! for lists off the hot paths (tables, findings, a trace's messages, the
//! web page's lists): each `sort_by`/`sort_by_key` call site instantiates
//! the whole sort for its closure, about 3.7 KB of wasm at opt-level "z",
//! and the browser's two wasm files had 52 of them (BENCHMARKS.md,
//! "Gzipped wasm under 1 MB again"). Same results as `slice::sort_by`
//! (stable, same order), at the cost of a `dyn` comparison of two indices:
//! keep `slice::sort*` where a sort is hot.
//!
//! The same cost hides in `collect`: `BTreeMap`'s and `BTreeSet`'s
//! `FromIterator` sort the items with a closure of their own per iterator
//! type, so maps and sets off the hot paths are built by insertion
//! ([`btree_map`], [`btree_set`]), and `AtomMap`'s `FromIterator` hands its
//! vector to one non-generic function.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// `v` sorted stably by `cmp`, as `v.sort_by(cmp)`.
pub fn sort_by<T>(v: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let mut order: Vec<usize> = (0..v.len()).collect();
    sort_indices(&mut order, &|a, b| cmp(&v[a], &v[b]));
    let mut items: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
    v.extend(order.into_iter().filter_map(|i| items[i].take()));
}

/// `v` sorted, as `v.sort()` (and as `v.sort_unstable()`: elements that
/// compare equal are equal).
pub fn sort<T: Ord>(v: &mut Vec<T>) {
    sort_by(v, T::cmp);
}

/// `v` sorted stably by `key`, as `v.sort_by_key(key)`.
pub fn sort_by_key<T, K: Ord>(v: &mut Vec<T>, key: impl Fn(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// The map of `items`, as `collect` gives it (of equal keys the last
/// counts), built by insertion: no sort instance of its own.
pub fn btree_map<K: Ord, V>(items: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut m = BTreeMap::new();
    for (k, v) in items {
        m.insert(k, v);
    }
    m
}

/// The set of `items`, as `collect` gives it, built by insertion.
pub fn btree_set<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut s = BTreeSet::new();
    for x in items {
        s.insert(x);
    }
    s
}

/// `v` sorted stably by `cmp`, as `v.sort_by(cmp)`, for lists that are
/// mostly short (an object's members, a commit's tables): an insertion
/// sort up to [`SMALL`] items, a few dozen bytes of code for each call
/// site, and the one instance of the stable sort beyond.
pub fn sort_small_by<T>(v: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    if v.len() > SMALL {
        let mut order: Vec<usize> = (0..v.len()).collect();
        sort_indices(&mut order, &|a, b| cmp(&v[a], &v[b]));
        permute(v, &mut order);
        return;
    }
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && cmp(&v[j - 1], &v[j]) == Ordering::Greater {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Up to this many items [`sort_small_by`] sorts by insertion.
pub const SMALL: usize = 20;

/// Puts the item at `order[k]` at `k`, for every `k`, by swaps along each
/// cycle of the permutation (`order` is used up).
fn permute<T>(v: &mut [T], order: &mut [usize]) {
    for start in 0..v.len() {
        let mut k = start;
        while order[k] != usize::MAX {
            let from = std::mem::replace(&mut order[k], usize::MAX);
            if from == start {
                break;
            }
            v.swap(k, from);
            k = from;
        }
    }
}

/// The one instance of the stable sort: `order` (indices, or any numbers)
/// sorted stably by `cmp` of its values, as `order.sort_by`. A caller
/// whose list already is indices (a lane's entries in view) sorts it
/// directly.
#[inline(never)]
pub fn sort_indices(order: &mut [usize], cmp: &dyn Fn(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| cmp(a, b));
}

#[cfg(test)]
mod tests {
    #[test]
    fn small_sorts_agree_with_the_standard_stable_sort() {
        // Lengths on both sides of `SMALL`, keys with ties.
        let mut x: u64 = 0x9e37_79b9;
        for n in [0, 1, 2, 5, super::SMALL, super::SMALL + 1, 57, 300] {
            let items: Vec<(u64, usize)> = (0..n)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 7, i)
                })
                .collect();
            let mut want = items.clone();
            want.sort_by_key(|p| p.0);
            let mut got = items;
            super::sort_small_by(&mut got, |a, b| a.0.cmp(&b.0));
            assert_eq!(got, want, "{n} items");
        }
    }

    #[test]
    fn same_order_as_the_standard_stable_sort() {
        let items: Vec<(u32, char)> = vec![(3, 'a'), (1, 'b'), (3, 'c'), (0, 'd'), (1, 'e')];
        let mut want = items.clone();
        want.sort_by_key(|x| x.0);
        let mut got = items.clone();
        super::sort_by_key(&mut got, |x| x.0);
        assert_eq!(got, want);
        // Descending, ties kept in order (not the reverse of the above).
        let mut want = items.clone();
        want.sort_by_key(|x| std::cmp::Reverse(x.0));
        let mut got = items.clone();
        super::sort_by(&mut got, |a, b| b.0.cmp(&a.0));
        assert_eq!(got, want);
        // By the elements' own order.
        let mut want = items.clone();
        want.sort_unstable();
        let mut got = items;
        super::sort(&mut got);
        assert_eq!(got, want);
    }

    #[test]
    fn maps_and_sets_by_insertion_equal_collect() {
        use std::collections::{BTreeMap, BTreeSet};
        // Equal keys: the last one's value stays, as `collect` keeps it.
        let pairs = [(3, 'a'), (1, 'b'), (3, 'c'), (0, 'd'), (1, 'e')];
        let want: BTreeMap<u32, char> = pairs.into_iter().collect();
        assert_eq!(super::btree_map(pairs), want);
        let want: BTreeSet<u32> = pairs.iter().map(|p| p.0).collect();
        assert_eq!(super::btree_set(pairs.iter().map(|p| p.0)), want);
    }
}
