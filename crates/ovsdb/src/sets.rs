//! The element containers of a [`Datum`](crate::Datum): [`AtomSet`] and
//! [`AtomMap`], always sorted with unique keys.
//!
//! Most column values hold 0, 1 or a few atoms, and a B-tree spends a whole
//! leaf node (~370 bytes for a set, ~720 for a map) on even one element.
//! So a small container is a sorted `Vec` with exact capacity (no
//! allocation when empty, one of `n` elements otherwise; a boxed slice,
//! so that a `Datum` is 24 bytes), and only a large
//! one (Port_Group ports, Address_Set addresses: thousands of elements,
//! changed by small diffs) is a B-tree, so that a d-element diff still
//! costs O(d log n). A container turns into a B-tree when it grows past
//! [`SMALL_MAX`] elements and back into a slice when it shrinks to
//! [`SMALL_BACK`]; the form is invisible: iteration order, equality,
//! ordering (lexicographic over the sorted elements, as `BTreeSet`'s and
//! `BTreeMap`'s) and `Debug` output are those of the B-tree containers.

use std::cmp::Ordering;
use std::collections::{btree_map, btree_set, BTreeMap, BTreeSet};
use std::fmt;
use std::iter::FusedIterator;

use crate::atom::Atom;

/// A container with more elements than this is a B-tree.
pub const SMALL_MAX: usize = 32;
/// A B-tree container that shrinks to this many elements becomes a slice
/// again (the gap keeps a value that hovers around one size from
/// converting back and forth).
pub const SMALL_BACK: usize = 16;

// ----------------------------------------------------------------------
// AtomSet

/// A sorted set of atoms (the elements of a set-typed datum).
///
/// Inserting into or removing from a small set reallocates it (there is
/// no spare capacity): O(n) for n ≤ [`SMALL_MAX`]; build a value with
/// `collect` or [`SetBuilder`] rather than by repeated inserts.
#[derive(Clone)]
pub struct AtomSet(SetRepr);

enum SetRepr {
    /// Exactly one element, inline: a scalar column costs no allocation
    /// beyond the atom's own (a datum stays 24 bytes: the other variants
    /// fit in `Atom`'s niche).
    One(Atom),
    /// Sorted, unique, 0 or 2..=`SMALL_MAX` elements.
    Small(Box<[Atom]>),
    /// Boxed, so that a datum is 24 bytes.
    #[allow(clippy::box_collection)]
    Large(Box<BTreeSet<Atom>>),
}

impl Clone for SetRepr {
    /// An empty set is the most common value of all (a column's default)
    /// and is made anew, without a call to copy a slice of nothing.
    #[inline]
    fn clone(&self) -> SetRepr {
        match self {
            SetRepr::One(a) => SetRepr::One(a.clone()),
            SetRepr::Small(v) if v.is_empty() => SetRepr::Small(Box::default()),
            SetRepr::Small(v) => SetRepr::Small(v.clone()),
            SetRepr::Large(b) => SetRepr::Large(b.clone()),
        }
    }
}

impl AtomSet {
    /// The empty set (no allocation).
    pub fn new() -> AtomSet {
        AtomSet(SetRepr::Small(Box::default()))
    }

    /// The set of one element (no allocation).
    pub fn one(a: Atom) -> AtomSet {
        AtomSet(SetRepr::One(a))
    }

    /// A set of the elements of `v` (sorted here if they are not); `None`
    /// if two are equal.
    pub fn try_from_vec(mut v: Vec<Atom>) -> Option<AtomSet> {
        if !v.windows(2).all(|w| w[0] < w[1]) {
            sort_atoms(&mut v);
            if v.windows(2).any(|w| w[0] == w[1]) {
                return None;
            }
        }
        Some(AtomSet::from_sorted_unique(v))
    }

    /// A set from elements that are already sorted and unique.
    fn from_sorted_unique(mut v: Vec<Atom>) -> AtomSet {
        debug_assert!(v.windows(2).all(|w| w[0] < w[1]));
        match v.len() {
            1 => AtomSet(SetRepr::One(v.pop().expect("one element"))),
            n if n <= SMALL_MAX => AtomSet(SetRepr::Small(v.into_boxed_slice())),
            _ => AtomSet(SetRepr::Large(Box::new(v.into_iter().collect()))),
        }
    }

    /// The elements as a slice, unless this is a B-tree.
    #[inline]
    fn small(&self) -> Option<&[Atom]> {
        match &self.0 {
            SetRepr::One(a) => Some(std::slice::from_ref(a)),
            SetRepr::Small(v) => Some(v),
            SetRepr::Large(_) => None,
        }
    }

    /// Takes the elements of a small set out as a vector (leaving it
    /// empty); `None` for a B-tree.
    fn take_small(&mut self) -> Option<Vec<Atom>> {
        match std::mem::replace(&mut self.0, SetRepr::Small(Box::default())) {
            SetRepr::One(a) => {
                let mut v = Vec::with_capacity(2);
                v.push(a);
                Some(v)
            }
            SetRepr::Small(b) => Some(b.into_vec()),
            large => {
                self.0 = large;
                None
            }
        }
    }

    /// After a removal from a B-tree: back to the small form when short.
    fn settle_large(&mut self) {
        if let SetRepr::Large(s) = &mut self.0 {
            if s.len() <= SMALL_BACK {
                let v: Vec<Atom> = std::mem::take(&mut **s).into_iter().collect();
                *self = AtomSet::from_sorted_unique(v);
            }
        }
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            SetRepr::One(_) => 1,
            SetRepr::Small(v) => v.len(),
            SetRepr::Large(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements, ascending.
    pub fn iter(&self) -> SetIter<'_> {
        match &self.0 {
            SetRepr::Large(s) => SetIter(SetIterRepr::Large(s.iter())),
            _ => SetIter(SetIterRepr::Small(self.small().unwrap_or_default().iter())),
        }
    }

    pub fn contains(&self, a: &Atom) -> bool {
        match self.small() {
            Some(v) => v.binary_search(a).is_ok(),
            None => matches!(&self.0, SetRepr::Large(s) if s.contains(a)),
        }
    }

    /// The stored element equal to `a`.
    pub fn get(&self, a: &Atom) -> Option<&Atom> {
        match &self.0 {
            SetRepr::Large(s) => s.get(a),
            _ => {
                let v = self.small()?;
                v.binary_search(a).ok().map(|i| &v[i])
            }
        }
    }

    pub fn first(&self) -> Option<&Atom> {
        match &self.0 {
            SetRepr::Large(s) => s.first(),
            _ => self.small()?.first(),
        }
    }

    pub fn last(&self) -> Option<&Atom> {
        match &self.0 {
            SetRepr::Large(s) => s.last(),
            _ => self.small()?.last(),
        }
    }

    /// Adds `a`; false (and the stored element kept) if an equal element
    /// was present, as `BTreeSet::insert`.
    pub fn insert(&mut self, a: Atom) -> bool {
        if let SetRepr::Large(s) = &mut self.0 {
            return s.insert(a);
        }
        let pos = match self.small().unwrap_or_default().binary_search(&a) {
            Ok(_) => return false,
            Err(pos) => pos,
        };
        let mut v = self.take_small().unwrap_or_default();
        if v.is_empty() {
            self.0 = SetRepr::One(a);
        } else if v.len() >= SMALL_MAX {
            let mut s: BTreeSet<Atom> = v.into_iter().collect();
            s.insert(a);
            self.0 = SetRepr::Large(Box::new(s));
        } else {
            v.reserve_exact(1);
            v.insert(pos, a);
            self.0 = SetRepr::Small(v.into_boxed_slice());
        }
        true
    }

    /// Removes the element equal to `a`; whether it was present.
    pub fn remove(&mut self, a: &Atom) -> bool {
        if let SetRepr::Large(s) = &mut self.0 {
            let had = s.remove(a);
            if had {
                self.settle_large();
            }
            return had;
        }
        let Ok(pos) = self.small().unwrap_or_default().binary_search(a) else {
            return false;
        };
        let mut v = self.take_small().unwrap_or_default();
        v.remove(pos);
        *self = AtomSet::from_sorted_unique(v);
        true
    }

    /// Keeps the elements for which `f` is true.
    pub fn retain(&mut self, mut f: impl FnMut(&Atom) -> bool) {
        if let SetRepr::Large(s) = &mut self.0 {
            s.retain(|a| f(a));
            self.settle_large();
            return;
        }
        let mut v = self.take_small().unwrap_or_default();
        v.retain(|a| f(a));
        *self = AtomSet::from_sorted_unique(v);
    }

    /// The elements in exactly one of `self` and `other`, ascending.
    pub fn symmetric_difference<'a>(&'a self, other: &'a AtomSet) -> SymmetricDifference<'a> {
        SymmetricDifference {
            a: self.iter().peekable(),
            b: other.iter().peekable(),
        }
    }
}

impl Default for AtomSet {
    fn default() -> AtomSet {
        AtomSet::new()
    }
}

impl fmt::Debug for AtomSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl PartialEq for AtomSet {
    fn eq(&self, other: &AtomSet) -> bool {
        match (self.small(), other.small()) {
            (Some(a), Some(b)) => a == b,
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl Eq for AtomSet {}

impl PartialOrd for AtomSet {
    fn partial_cmp(&self, other: &AtomSet) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for AtomSet {
    /// Lexicographic over the sorted elements, as `BTreeSet`'s.
    fn cmp(&self, other: &AtomSet) -> Ordering {
        match (self.small(), other.small()) {
            (Some(a), Some(b)) => a.cmp(b),
            _ => self.iter().cmp(other.iter()),
        }
    }
}

impl FromIterator<Atom> for AtomSet {
    /// Sorted and deduplicated; of equal elements the last is kept, as
    /// `BTreeSet::from_iter` does.
    fn from_iter<I: IntoIterator<Item = Atom>>(iter: I) -> AtomSet {
        let mut v: Vec<Atom> = iter.into_iter().collect();
        if !v.windows(2).all(|w| w[0] < w[1]) {
            sort_atoms(&mut v);
            dedup_keep_last(&mut v, |a, b| a == b);
        }
        AtomSet::from_sorted_unique(v)
    }
}

impl<const N: usize> From<[Atom; N]> for AtomSet {
    fn from(a: [Atom; N]) -> AtomSet {
        a.into_iter().collect()
    }
}

impl Extend<Atom> for AtomSet {
    fn extend<I: IntoIterator<Item = Atom>>(&mut self, iter: I) {
        for a in iter {
            self.insert(a);
        }
    }
}

impl<'a> IntoIterator for &'a AtomSet {
    type Item = &'a Atom;
    type IntoIter = SetIter<'a>;
    fn into_iter(self) -> SetIter<'a> {
        self.iter()
    }
}

impl IntoIterator for AtomSet {
    type Item = Atom;
    type IntoIter = SetIntoIter;
    fn into_iter(self) -> SetIntoIter {
        match self.0 {
            SetRepr::One(a) => SetIntoIter(SetIntoIterRepr::One(Some(a).into_iter())),
            SetRepr::Small(v) => SetIntoIter(SetIntoIterRepr::Small(v.into_vec().into_iter())),
            SetRepr::Large(s) => SetIntoIter(SetIntoIterRepr::Large(s.into_iter())),
        }
    }
}

/// Removes consecutive duplicates of a sorted vector, keeping the last of
/// each run (what the B-tree containers' `from_iter` keep).
fn dedup_keep_last<T>(v: &mut Vec<T>, same: impl Fn(&T, &T) -> bool) {
    v.dedup_by(|later, kept| {
        if same(later, kept) {
            std::mem::swap(later, kept);
            true
        } else {
            false
        }
    });
}

/// Iterator over an [`AtomSet`], ascending.
#[derive(Clone)]
pub struct SetIter<'a>(SetIterRepr<'a>);

#[derive(Clone)]
enum SetIterRepr<'a> {
    Small(std::slice::Iter<'a, Atom>),
    Large(btree_set::Iter<'a, Atom>),
}

impl<'a> Iterator for SetIter<'a> {
    type Item = &'a Atom;
    #[inline]
    fn next(&mut self) -> Option<&'a Atom> {
        match &mut self.0 {
            SetIterRepr::Small(i) => i.next(),
            SetIterRepr::Large(i) => i.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            SetIterRepr::Small(i) => i.size_hint(),
            SetIterRepr::Large(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for SetIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            SetIterRepr::Small(i) => i.next_back(),
            SetIterRepr::Large(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for SetIter<'_> {}
impl FusedIterator for SetIter<'_> {}

/// Owning iterator over an [`AtomSet`], ascending.
pub struct SetIntoIter(SetIntoIterRepr);

enum SetIntoIterRepr {
    One(std::option::IntoIter<Atom>),
    Small(std::vec::IntoIter<Atom>),
    Large(btree_set::IntoIter<Atom>),
}

impl Iterator for SetIntoIter {
    type Item = Atom;
    fn next(&mut self) -> Option<Atom> {
        match &mut self.0 {
            SetIntoIterRepr::One(i) => i.next(),
            SetIntoIterRepr::Small(i) => i.next(),
            SetIntoIterRepr::Large(i) => i.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            SetIntoIterRepr::One(i) => i.size_hint(),
            SetIntoIterRepr::Small(i) => i.size_hint(),
            SetIntoIterRepr::Large(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for SetIntoIter {
    fn next_back(&mut self) -> Option<Atom> {
        match &mut self.0 {
            SetIntoIterRepr::One(i) => i.next_back(),
            SetIntoIterRepr::Small(i) => i.next_back(),
            SetIntoIterRepr::Large(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for SetIntoIter {}
impl FusedIterator for SetIntoIter {}

/// The elements in exactly one of two sets, ascending (see
/// [`AtomSet::symmetric_difference`]).
pub struct SymmetricDifference<'a> {
    a: std::iter::Peekable<SetIter<'a>>,
    b: std::iter::Peekable<SetIter<'a>>,
}

impl<'a> Iterator for SymmetricDifference<'a> {
    type Item = &'a Atom;
    fn next(&mut self) -> Option<&'a Atom> {
        loop {
            match (self.a.peek(), self.b.peek()) {
                (None, None) => return None,
                (Some(_), None) => return self.a.next(),
                (None, Some(_)) => return self.b.next(),
                (Some(x), Some(y)) => match x.cmp(y) {
                    Ordering::Less => return self.a.next(),
                    Ordering::Greater => return self.b.next(),
                    Ordering::Equal => {
                        self.a.next();
                        self.b.next();
                    }
                },
            }
        }
    }
}

impl FusedIterator for SymmetricDifference<'_> {}

/// Builds an [`AtomSet`] from elements in any order, reporting a duplicate
/// as soon as it is pushed. Elements that come in ascending order (as OVSDB
/// writes them) are appended to a `Vec` of the final size; the first one out
/// of order moves the rest into a B-tree.
pub struct SetBuilder {
    v: Vec<Atom>,
    tree: Option<BTreeSet<Atom>>,
}

impl SetBuilder {
    /// A builder for about `n` elements.
    pub fn with_capacity(n: usize) -> SetBuilder {
        SetBuilder {
            v: Vec::with_capacity(n),
            tree: None,
        }
    }

    /// Adds `a`; false if an equal element is already in.
    pub fn push(&mut self, a: Atom) -> bool {
        if let Some(t) = &mut self.tree {
            return t.insert(a);
        }
        match self.v.last() {
            Some(l) if a <= *l => {
                if a == *l {
                    return false;
                }
                let mut t: BTreeSet<Atom> = std::mem::take(&mut self.v).into_iter().collect();
                let fresh = t.insert(a);
                self.tree = Some(t);
                fresh
            }
            _ => {
                self.v.push(a);
                true
            }
        }
    }

    pub fn finish(self) -> AtomSet {
        match self.tree {
            Some(t) => t.into_iter().collect(),
            None => AtomSet::try_from_vec(self.v).unwrap_or_default(),
        }
    }
}

/// Builds an [`AtomMap`] from pairs in any key order, reporting a duplicate
/// key as soon as it is pushed (see [`SetBuilder`]).
pub struct MapBuilder {
    v: Vec<(Atom, Atom)>,
    tree: Option<BTreeMap<Atom, Atom>>,
}

impl MapBuilder {
    /// A builder for about `n` pairs.
    pub fn with_capacity(n: usize) -> MapBuilder {
        MapBuilder {
            v: Vec::with_capacity(n),
            tree: None,
        }
    }

    /// Adds the pair; false (and the map unchanged) if `k` is already in.
    pub fn push(&mut self, k: Atom, v: Atom) -> bool {
        if let Some(t) = &mut self.tree {
            if t.contains_key(&k) {
                return false;
            }
            t.insert(k, v);
            return true;
        }
        match self.v.last() {
            Some((l, _)) if k <= *l => {
                if k == *l {
                    return false;
                }
                let mut t = crate::order::btree_map(std::mem::take(&mut self.v));
                let fresh = !t.contains_key(&k);
                if fresh {
                    t.insert(k, v);
                }
                self.tree = Some(t);
                fresh
            }
            _ => {
                self.v.push((k, v));
                true
            }
        }
    }

    pub fn finish(self) -> AtomMap {
        match self.tree {
            Some(t) => t.into_iter().collect(),
            None => AtomMap::try_from_vec(self.v).unwrap_or_default(),
        }
    }
}

// ----------------------------------------------------------------------
// AtomMap

/// A map from atoms to atoms, sorted by key (the pairs of a map-typed
/// datum); small maps reallocate on insert and remove, as [`AtomSet`].
#[derive(Clone)]
pub struct AtomMap(MapRepr);

enum MapRepr {
    /// Sorted by key, unique keys, at most `SMALL_MAX` pairs.
    Small(Box<[(Atom, Atom)]>),
    /// Boxed, so that a datum is 24 bytes.
    #[allow(clippy::box_collection)]
    Large(Box<BTreeMap<Atom, Atom>>),
}

impl Clone for MapRepr {
    /// As [`SetRepr`]'s: an empty map made anew.
    #[inline]
    fn clone(&self) -> MapRepr {
        match self {
            MapRepr::Small(v) if v.is_empty() => MapRepr::Small(Box::default()),
            MapRepr::Small(v) => MapRepr::Small(v.clone()),
            MapRepr::Large(b) => MapRepr::Large(b.clone()),
        }
    }
}

impl AtomMap {
    /// The empty map (no allocation).
    pub fn new() -> AtomMap {
        AtomMap(MapRepr::Small(Box::default()))
    }

    /// A map of the pairs of `v` (sorted here by key if they are not);
    /// `None` if two keys are equal.
    pub fn try_from_vec(mut v: Vec<(Atom, Atom)>) -> Option<AtomMap> {
        if !v.windows(2).all(|w| w[0].0 < w[1].0) {
            sort_pairs(&mut v);
            if v.windows(2).any(|w| w[0].0 == w[1].0) {
                return None;
            }
        }
        Some(AtomMap::from_sorted_unique(v))
    }

    fn from_sorted_unique(v: Vec<(Atom, Atom)>) -> AtomMap {
        debug_assert!(v.windows(2).all(|w| w[0].0 < w[1].0));
        if v.len() <= SMALL_MAX {
            AtomMap(MapRepr::Small(v.into_boxed_slice()))
        } else {
            AtomMap(MapRepr::Large(Box::new(crate::order::btree_map(v))))
        }
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            MapRepr::Small(v) => v.len(),
            MapRepr::Large(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pairs, ascending by key.
    pub fn iter(&self) -> MapIter<'_> {
        match &self.0 {
            MapRepr::Small(v) => MapIter(MapIterRepr::Small(v.iter())),
            MapRepr::Large(m) => MapIter(MapIterRepr::Large(m.iter())),
        }
    }

    /// The keys, ascending.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Atom> + ExactSizeIterator + Clone {
        self.iter().map(|(k, _)| k)
    }

    /// The values, ascending by key.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Atom> + ExactSizeIterator + Clone {
        self.iter().map(|(_, v)| v)
    }

    fn small_pos(v: &[(Atom, Atom)], k: &Atom) -> Result<usize, usize> {
        v.binary_search_by(|(x, _)| x.cmp(k))
    }

    pub fn get(&self, k: &Atom) -> Option<&Atom> {
        match &self.0 {
            MapRepr::Small(v) => Self::small_pos(v, k).ok().map(|i| &v[i].1),
            MapRepr::Large(m) => m.get(k),
        }
    }

    pub fn get_mut(&mut self, k: &Atom) -> Option<&mut Atom> {
        match &mut self.0 {
            MapRepr::Small(v) => Self::small_pos(v, k).ok().map(|i| &mut v[i].1),
            MapRepr::Large(m) => m.get_mut(k),
        }
    }

    /// The stored key equal to `k` and its value.
    pub fn get_key_value(&self, k: &Atom) -> Option<(&Atom, &Atom)> {
        match &self.0 {
            MapRepr::Small(v) => Self::small_pos(v, k).ok().map(|i| (&v[i].0, &v[i].1)),
            MapRepr::Large(m) => m.get_key_value(k),
        }
    }

    pub fn contains_key(&self, k: &Atom) -> bool {
        self.get(k).is_some()
    }

    pub fn first_key_value(&self) -> Option<(&Atom, &Atom)> {
        match &self.0 {
            MapRepr::Small(v) => v.first().map(|(k, v)| (k, v)),
            MapRepr::Large(m) => m.first_key_value(),
        }
    }

    pub fn last_key_value(&self) -> Option<(&Atom, &Atom)> {
        match &self.0 {
            MapRepr::Small(v) => v.last().map(|(k, v)| (k, v)),
            MapRepr::Large(m) => m.last_key_value(),
        }
    }

    /// Sets `k` to `v`; the old value if `k` was present (its stored key is
    /// kept), as `BTreeMap::insert`.
    pub fn insert(&mut self, k: Atom, v: Atom) -> Option<Atom> {
        match &mut self.0 {
            MapRepr::Small(b) => match Self::small_pos(b, &k) {
                Ok(i) => Some(std::mem::replace(&mut b[i].1, v)),
                Err(pos) => {
                    let mut p = std::mem::take(b).into_vec();
                    if p.len() >= SMALL_MAX {
                        let mut m = crate::order::btree_map(p);
                        m.insert(k, v);
                        self.0 = MapRepr::Large(Box::new(m));
                    } else {
                        p.reserve_exact(1);
                        p.insert(pos, (k, v));
                        *b = p.into_boxed_slice();
                    }
                    None
                }
            },
            MapRepr::Large(m) => m.insert(k, v),
        }
    }

    /// Removes `k`; its value if it was present.
    pub fn remove(&mut self, k: &Atom) -> Option<Atom> {
        match &mut self.0 {
            MapRepr::Small(b) => match Self::small_pos(b, k) {
                Ok(i) => {
                    let mut p = std::mem::take(b).into_vec();
                    let (_, v) = p.remove(i);
                    *b = p.into_boxed_slice();
                    Some(v)
                }
                Err(_) => None,
            },
            MapRepr::Large(m) => {
                let old = m.remove(k);
                if old.is_some() && m.len() <= SMALL_BACK {
                    self.0 = MapRepr::Small(std::mem::take(&mut **m).into_iter().collect());
                }
                old
            }
        }
    }

    /// Keeps the pairs for which `f` is true.
    pub fn retain(&mut self, mut f: impl FnMut(&Atom, &mut Atom) -> bool) {
        match &mut self.0 {
            MapRepr::Small(b) => {
                let mut p = std::mem::take(b).into_vec();
                p.retain_mut(|(k, v)| f(k, v));
                *b = p.into_boxed_slice();
            }
            MapRepr::Large(m) => {
                m.retain(|k, v| f(k, v));
                if m.len() <= SMALL_BACK {
                    self.0 = MapRepr::Small(std::mem::take(&mut **m).into_iter().collect());
                }
            }
        }
    }
}

impl Default for AtomMap {
    fn default() -> AtomMap {
        AtomMap::new()
    }
}

impl fmt::Debug for AtomMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl PartialEq for AtomMap {
    fn eq(&self, other: &AtomMap) -> bool {
        match (&self.0, &other.0) {
            (MapRepr::Small(a), MapRepr::Small(b)) => a == b,
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl Eq for AtomMap {}

impl PartialOrd for AtomMap {
    fn partial_cmp(&self, other: &AtomMap) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for AtomMap {
    /// Lexicographic over the (key, value) pairs in key order, as
    /// `BTreeMap`'s.
    fn cmp(&self, other: &AtomMap) -> Ordering {
        match (&self.0, &other.0) {
            (MapRepr::Small(a), MapRepr::Small(b)) => a[..].cmp(&b[..]),
            _ => self.iter().cmp(other.iter()),
        }
    }
}

impl FromIterator<(Atom, Atom)> for AtomMap {
    /// Sorted by key; of pairs with equal keys the last is kept, as
    /// `BTreeMap::from_iter` does.
    fn from_iter<I: IntoIterator<Item = (Atom, Atom)>>(iter: I) -> AtomMap {
        AtomMap::from_vec_keep_last(iter.into_iter().collect())
    }
}

impl AtomMap {
    /// [`FromIterator`]'s work, apart from the iterator's type (one
    /// instance of the sort for all of them).
    fn from_vec_keep_last(mut v: Vec<(Atom, Atom)>) -> AtomMap {
        if !v.windows(2).all(|w| w[0].0 < w[1].0) {
            sort_pairs(&mut v);
            dedup_keep_last(&mut v, |a, b| a.0 == b.0);
        }
        AtomMap::from_sorted_unique(v)
    }
}

/// Pairs sorted stably by key. Most maps are small: by insertion, with no
/// sort instance of their own (the web worker's wasm is held under 1 MB).
#[inline(never)]
fn sort_pairs(v: &mut [(Atom, Atom)]) {
    crate::order::sort_small_by(v, |a, b| a.0.cmp(&b.0));
}

/// Atoms sorted (stably), as [`sort_pairs`] sorts pairs.
#[inline(never)]
fn sort_atoms(v: &mut [Atom]) {
    crate::order::sort_small_by(v, Atom::cmp);
}

impl<const N: usize> From<[(Atom, Atom); N]> for AtomMap {
    fn from(a: [(Atom, Atom); N]) -> AtomMap {
        a.into_iter().collect()
    }
}

impl Extend<(Atom, Atom)> for AtomMap {
    fn extend<I: IntoIterator<Item = (Atom, Atom)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<'a> IntoIterator for &'a AtomMap {
    type Item = (&'a Atom, &'a Atom);
    type IntoIter = MapIter<'a>;
    fn into_iter(self) -> MapIter<'a> {
        self.iter()
    }
}

impl IntoIterator for AtomMap {
    type Item = (Atom, Atom);
    type IntoIter = MapIntoIter;
    fn into_iter(self) -> MapIntoIter {
        match self.0 {
            MapRepr::Small(v) => MapIntoIter(MapIntoIterRepr::Small(v.into_vec().into_iter())),
            MapRepr::Large(m) => MapIntoIter(MapIntoIterRepr::Large(m.into_iter())),
        }
    }
}

/// Iterator over an [`AtomMap`]'s pairs, ascending by key.
#[derive(Clone)]
pub struct MapIter<'a>(MapIterRepr<'a>);

#[derive(Clone)]
enum MapIterRepr<'a> {
    Small(std::slice::Iter<'a, (Atom, Atom)>),
    Large(btree_map::Iter<'a, Atom, Atom>),
}

impl<'a> Iterator for MapIter<'a> {
    type Item = (&'a Atom, &'a Atom);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            MapIterRepr::Small(i) => i.next().map(|(k, v)| (k, v)),
            MapIterRepr::Large(i) => i.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            MapIterRepr::Small(i) => i.size_hint(),
            MapIterRepr::Large(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for MapIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            MapIterRepr::Small(i) => i.next_back().map(|(k, v)| (k, v)),
            MapIterRepr::Large(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for MapIter<'_> {}
impl FusedIterator for MapIter<'_> {}

/// Owning iterator over an [`AtomMap`]'s pairs, ascending by key.
pub struct MapIntoIter(MapIntoIterRepr);

enum MapIntoIterRepr {
    Small(std::vec::IntoIter<(Atom, Atom)>),
    Large(btree_map::IntoIter<Atom, Atom>),
}

impl Iterator for MapIntoIter {
    type Item = (Atom, Atom);
    fn next(&mut self) -> Option<(Atom, Atom)> {
        match &mut self.0 {
            MapIntoIterRepr::Small(i) => i.next(),
            MapIntoIterRepr::Large(i) => i.next(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            MapIntoIterRepr::Small(i) => i.size_hint(),
            MapIntoIterRepr::Large(i) => i.size_hint(),
        }
    }
}

impl DoubleEndedIterator for MapIntoIter {
    fn next_back(&mut self) -> Option<(Atom, Atom)> {
        match &mut self.0 {
            MapIntoIterRepr::Small(i) => i.next_back(),
            MapIntoIterRepr::Large(i) => i.next_back(),
        }
    }
}

impl ExactSizeIterator for MapIntoIter {}
impl FusedIterator for MapIntoIter {}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: i64) -> Atom {
        Atom::Integer(n)
    }

    /// Random inserts/removes across the Vec/B-tree boundary agree with
    /// `BTreeSet`/`BTreeMap` in contents, order, equality and ordering.
    #[test]
    fn same_as_btree_across_forms() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for range in [4, 40, 100, 400] {
            let mut a = AtomSet::new();
            let mut b = BTreeSet::new();
            let mut m = AtomMap::new();
            let mut bm = BTreeMap::new();
            for _ in 0..5000 {
                let k = s(rnd(range) as i64);
                let v = s(rnd(3) as i64);
                // Bias towards inserts while small, so both forms are hit.
                if rnd(10) < if a.len() < 50 { 7 } else { 4 } {
                    assert_eq!(a.insert(k.clone()), b.insert(k.clone()));
                    assert_eq!(m.insert(k.clone(), v.clone()), bm.insert(k, v));
                } else {
                    assert_eq!(a.remove(&k), b.remove(&k));
                    assert_eq!(m.remove(&k), bm.remove(&k));
                }
                assert_eq!(a.len(), b.len());
                assert!(a.iter().eq(b.iter()));
                assert!(a.iter().rev().eq(b.iter().rev()));
                assert_eq!(a.first(), b.first());
                assert_eq!(a.last(), b.last());
                assert_eq!(m.len(), bm.len());
                assert!(m.iter().eq(bm.iter()));
                assert!(m.iter().rev().eq(bm.iter().rev()));
                let cm: AtomMap = bm.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                assert_eq!(m, cm);
                let c: AtomSet = b.iter().cloned().collect();
                assert_eq!(a, c);
                assert_eq!(a.cmp(&c), Ordering::Equal);
                assert_eq!(format!("{:?}", a), format!("{:?}", b));
                assert_eq!(format!("{:?}", m), format!("{:?}", bm));
            }
        }
    }

    /// What a row pays per column and per atom.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn sizes() {
        assert_eq!(std::mem::size_of::<Atom>(), 24);
        assert_eq!(std::mem::size_of::<AtomSet>(), 24);
        assert_eq!(std::mem::size_of::<AtomMap>(), 16);
        assert_eq!(std::mem::size_of::<crate::Datum>(), 24);
    }

    #[test]
    fn ordering_matches_btree() {
        let sets: Vec<Vec<i64>> = vec![
            vec![],
            vec![1],
            vec![1, 2],
            vec![2],
            vec![1, 3],
            (0..50).collect(),
            (0..49).collect(),
            (1..60).collect(),
            (0..40).chain([100]).collect(),
        ];
        for x in &sets {
            for y in &sets {
                let (ax, ay): (AtomSet, AtomSet) = (
                    x.iter().map(|&n| s(n)).collect(),
                    y.iter().map(|&n| s(n)).collect(),
                );
                let (bx, by): (BTreeSet<Atom>, BTreeSet<Atom>) = (
                    x.iter().map(|&n| s(n)).collect(),
                    y.iter().map(|&n| s(n)).collect(),
                );
                assert_eq!(ax.cmp(&ay), bx.cmp(&by), "{x:?} {y:?}");
                assert_eq!(ax == ay, bx == by);
                let mx: AtomMap = x.iter().map(|&n| (s(n), s(n % 3))).collect();
                let my: AtomMap = y.iter().map(|&n| (s(n), s(n % 3))).collect();
                let bmx: BTreeMap<Atom, Atom> = x.iter().map(|&n| (s(n), s(n % 3))).collect();
                let bmy: BTreeMap<Atom, Atom> = y.iter().map(|&n| (s(n), s(n % 3))).collect();
                assert_eq!(mx.cmp(&my), bmx.cmp(&bmy), "{x:?} {y:?}");
                let sd: Vec<&Atom> = ax.symmetric_difference(&ay).collect();
                let bsd: Vec<&Atom> = bx.symmetric_difference(&by).collect();
                assert_eq!(sd, bsd);
            }
        }
    }

    #[test]
    fn from_iter_keeps_last_duplicate() {
        let m: AtomMap = [(s(2), s(1)), (s(1), s(1)), (s(2), s(7))]
            .into_iter()
            .collect();
        let b: BTreeMap<Atom, Atom> = [(s(2), s(1)), (s(1), s(1)), (s(2), s(7))]
            .into_iter()
            .collect();
        assert!(m.iter().eq(b.iter()));
        // 0.0 == -0.0: the set keeps the last one, as BTreeSet does.
        let z: AtomSet = [Atom::Real(0.0), Atom::Real(-0.0)].into_iter().collect();
        let bz: BTreeSet<Atom> = [Atom::Real(0.0), Atom::Real(-0.0)].into_iter().collect();
        assert_eq!(
            z.iter().next().map(|a| a.to_string()),
            bz.iter().next().map(|a| a.to_string())
        );
    }
}
