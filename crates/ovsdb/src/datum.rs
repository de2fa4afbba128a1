//! Datums (column values): sets and maps of atoms, kept sorted with unique
//! keys (in [`AtomSet`]/[`AtomMap`]: a sorted `Vec` while small, a B-tree
//! when large), with the JSON codec of §2.5 and column diffs of §4.

use crate::atom::{Atom, NamedUuidFn};
use crate::error::{Error, Result};
use crate::json::Json;
use crate::sets::{AtomMap, AtomSet, MapBuilder, SetBuilder};
use crate::types::Type;

/// A column value. Scalars and sets are `Set`s (a scalar is a one-element
/// set); map-typed columns are `Map`s. Elements are always sorted and
/// unique. Datums order by variant, then lexicographically over their
/// sorted elements (as when these were `BTreeSet`/`BTreeMap`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Datum {
    Set(AtomSet),
    Map(AtomMap),
}

/// Options for [`Datum::from_json_with`].
#[derive(Default)]
pub struct ParseOptions<'a> {
    /// Accept any number of elements (diffs, §4.3).
    pub relaxed_size: bool,
    /// Resolver for `["named-uuid", name]` (wire protocol only).
    pub named_uuid: Option<&'a mut NamedUuidFn<'a>>,
}

impl Default for Datum {
    fn default() -> Self {
        Datum::Set(AtomSet::new())
    }
}

impl Datum {
    /// An empty value of the given type's shape.
    pub fn empty(ty: &Type) -> Datum {
        if ty.is_map() {
            Datum::Map(AtomMap::new())
        } else {
            Datum::Set(AtomSet::new())
        }
    }

    /// The type's default value (§2.5.4): `min` copies of the default atom
    /// (0 or 1 element).
    pub fn default_for(ty: &Type) -> Datum {
        if ty.min == 0 {
            return Datum::empty(ty);
        }
        let k = Atom::default_for(ty.key.atomic);
        match &ty.value {
            Some(v) => Datum::Map(AtomMap::from([(k, Atom::default_for(v.atomic))])),
            None => Datum::Set(AtomSet::one(k)),
        }
    }

    /// Whether this equals the type's default (§2.5.4).
    #[inline]
    pub fn is_default(&self, ty: &Type) -> bool {
        let n = self.len();
        if n != ty.min as usize {
            return false;
        }
        // An empty value (`min` 0, the common case) needs no iterator.
        n == 0 || self.elements_default()
    }

    fn elements_default(&self) -> bool {
        match self {
            Datum::Set(s) => s.iter().all(Atom::is_default),
            Datum::Map(m) => m.iter().all(|(k, v)| k.is_default() && v.is_default()),
        }
    }

    pub fn scalar(a: impl Into<Atom>) -> Datum {
        Datum::Set(AtomSet::one(a.into()))
    }

    pub fn set(atoms: impl IntoIterator<Item = Atom>) -> Datum {
        Datum::Set(atoms.into_iter().collect())
    }

    pub fn map(pairs: impl IntoIterator<Item = (Atom, Atom)>) -> Datum {
        Datum::Map(pairs.into_iter().collect())
    }

    pub fn len(&self) -> usize {
        match self {
            Datum::Set(s) => s.len(),
            Datum::Map(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_map(&self) -> bool {
        matches!(self, Datum::Map(_))
    }

    /// Keys (set elements, or map keys), ascending.
    pub fn keys(&self) -> Box<dyn Iterator<Item = &Atom> + '_> {
        match self {
            Datum::Set(s) => Box::new(s.iter()),
            Datum::Map(m) => Box::new(m.keys()),
        }
    }

    /// Values of a map, ascending by key (empty for sets).
    pub fn values(&self) -> Box<dyn Iterator<Item = &Atom> + '_> {
        match self {
            Datum::Set(_) => Box::new(std::iter::empty()),
            Datum::Map(m) => Box::new(m.values()),
        }
    }

    /// Every atom (keys and, for maps, values).
    pub fn atoms(&self) -> Box<dyn Iterator<Item = &Atom> + '_> {
        match self {
            Datum::Set(s) => Box::new(s.iter()),
            Datum::Map(m) => Box::new(m.iter().flat_map(|(k, v)| [k, v])),
        }
    }

    pub fn contains_key(&self, k: &Atom) -> bool {
        match self {
            Datum::Set(s) => s.contains(k),
            Datum::Map(m) => m.contains_key(k),
        }
    }

    /// The single element of a one-element set.
    pub fn as_scalar(&self) -> Option<&Atom> {
        match self {
            Datum::Set(s) if s.len() == 1 => s.iter().next(),
            _ => None,
        }
    }

    pub fn as_set(&self) -> Option<&AtomSet> {
        match self {
            Datum::Set(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&AtomMap> {
        match self {
            Datum::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Checks that the number of elements lies in `[ty.min, ty.max]`.
    pub fn check_size(&self, ty: &Type) -> Result<()> {
        let n = self.len();
        if n < ty.min as usize || n > ty.max as usize {
            return Err(Error::constraint(format!(
                "{} values when type requires between {} and {}",
                n,
                ty.min,
                if ty.max == u32::MAX {
                    "unlimited".to_string()
                } else {
                    ty.max.to_string()
                }
            )));
        }
        Ok(())
    }

    /// Checks shape, size and atom constraints against `ty`.
    pub fn check(&self, ty: &Type) -> Result<()> {
        self.check_size(ty)?;
        self.check_atoms(ty)
    }

    /// Checks shape and atom constraints against `ty`, not the size (what
    /// a diff must satisfy).
    pub fn check_atoms(&self, ty: &Type) -> Result<()> {
        if self.is_map() != ty.is_map() {
            return Err(Error::syntax("datum shape does not match type"));
        }
        match self {
            Datum::Set(s) => {
                for a in s {
                    a.check_constraints(&ty.key)?;
                }
            }
            Datum::Map(m) => {
                let vt = ty
                    .value
                    .as_ref()
                    .ok_or_else(|| Error::syntax("not a map type"))?;
                for (k, v) in m {
                    k.check_constraints(&ty.key)?;
                    v.check_constraints(vt)?;
                }
            }
        }
        Ok(())
    }

    /// Parses a datum of type `ty` (§2.5.2), with size limits enforced.
    pub fn from_json(j: &Json, ty: &Type) -> Result<Datum> {
        Datum::from_json_with(j, ty, ParseOptions::default())
    }

    /// Parses a column diff of type `ty`: like `from_json` but with the
    /// size limits relaxed (§4.3).
    pub fn diff_from_json(j: &Json, ty: &Type) -> Result<Datum> {
        Datum::from_json_with(
            j,
            ty,
            ParseOptions {
                relaxed_size: true,
                named_uuid: None,
            },
        )
    }

    /// The general parser behind [`Datum::from_json`] and
    /// [`Datum::diff_from_json`], following OVS's `ovsdb_datum_from_json`:
    /// a `["set", […]]` or `["map", […]]` form has its element count checked
    /// before its atoms are parsed; duplicates are reported once every atom
    /// has parsed (`ovsdb error: set contains duplicate`).
    pub fn from_json_with(j: &Json, ty: &Type, mut opts: ParseOptions<'_>) -> Result<Datum> {
        let is_map = ty.is_map();
        let tagged = is_map || matches!(j.as_array(), Some([Json::String(t), ..]) if t == "set");
        if !tagged {
            let a = Atom::from_json(j, &ty.key, opts.named_uuid.as_deref_mut())?;
            return Ok(Datum::scalar(a));
        }
        let class = if is_map { "map" } else { "set" };
        let inner = unwrap_tagged(j, class)
            .ok_or_else(|| Error::syntax_at(j, format!("expected [\"{class}\", <array>]")))?;
        let n = inner.len();
        if !opts.relaxed_size && (n < ty.min as usize || n > ty.max as usize) {
            return Err(Error::syntax_at(
                j,
                if ty.min == 1 && ty.max == 1 {
                    format!("{class} must have exactly one member but {n} are present")
                } else {
                    format!(
                        "{class} must have {} to {} members but {n} are present",
                        ty.min, ty.max
                    )
                },
            ));
        }
        let mut duplicate = false;
        let d = if let Some(vt) = &ty.value {
            let mut m = MapBuilder::with_capacity(n);
            for pair in inner {
                let (kj, vj) = match pair.as_array() {
                    Some([k, v]) => (k, v),
                    _ => return Err(Error::syntax_at(pair, "expected 2-element array")),
                };
                let k = Atom::from_json(kj, &ty.key, opts.named_uuid.as_deref_mut())?;
                let v = Atom::from_json(vj, vt, opts.named_uuid.as_deref_mut())?;
                duplicate |= !m.push(k, v);
            }
            Datum::Map(m.finish())
        } else {
            let mut s = SetBuilder::with_capacity(n);
            for e in inner {
                let a = Atom::from_json(e, &ty.key, opts.named_uuid.as_deref_mut())?;
                duplicate |= !s.push(a);
            }
            Datum::Set(s.finish())
        };
        if duplicate {
            return Err(Error::ovsdb(if is_map {
                "map contains duplicate key"
            } else {
                "set contains duplicate"
            }));
        }
        Ok(d)
    }

    /// JSON form (§2.5.2): `["map",[[k,v],…]]` for maps, the bare atom for
    /// one-element sets, `["set",[…]]` otherwise.
    pub fn to_json(&self) -> Json {
        match self {
            Datum::Map(m) => Json::Array(vec![
                Json::String("map".into()),
                Json::Array(
                    m.iter()
                        .map(|(k, v)| Json::Array(vec![k.to_json(), v.to_json()]))
                        .collect(),
                ),
            ]),
            Datum::Set(s) if s.len() == 1 => {
                s.iter().next().map(Atom::to_json).unwrap_or(Json::Null)
            }
            Datum::Set(s) => Json::Array(vec![
                Json::String("set".into()),
                Json::Array(s.iter().map(Atom::to_json).collect()),
            ]),
        }
    }

    /// Appends the compact JSON form directly (same bytes as
    /// `to_json().write_compact()`, without building the tree).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Datum::Map(m) => {
                out.extend_from_slice(b"[\"map\",[");
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.push(b'[');
                    write_atom(k, out);
                    out.push(b',');
                    write_atom(v, out);
                    out.push(b']');
                }
                out.extend_from_slice(b"]]");
            }
            Datum::Set(s) if s.len() == 1 => {
                if let Some(a) = s.iter().next() {
                    write_atom(a, out);
                }
            }
            Datum::Set(s) => {
                out.extend_from_slice(b"[\"set\",[");
                for (i, a) in s.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_atom(a, out);
                }
                out.extend_from_slice(b"]]");
            }
        }
    }

    /// Length of the compact JSON form, computed without serializing.
    pub fn json_len(&self) -> usize {
        match self {
            Datum::Map(m) => {
                // ["map",[ ... ]] = 10 bytes + pairs "[k,v]" + commas
                10 + m
                    .iter()
                    .map(|(k, v)| 3 + k.json_len() + v.json_len())
                    .sum::<usize>()
                    + m.len().saturating_sub(1)
            }
            Datum::Set(s) if s.len() == 1 => s.iter().next().map_or(0, Atom::json_len),
            Datum::Set(s) => {
                10 + s.iter().map(Atom::json_len).sum::<usize>() + s.len().saturating_sub(1)
            }
        }
    }

    // ------------------------------------------------------------------
    // Column diffs (§4)

    /// The diff that turns `old` into `new` for a column of type `ty`
    /// (§4.2): the new value for non-composite types, the symmetric
    /// difference for sets, and for maps removed keys with their old value
    /// plus added/changed keys with their new value.
    pub fn diff(old: &Datum, new: &Datum, ty: &Type) -> Datum {
        if !ty.is_composite() {
            return new.clone();
        }
        match (old, new) {
            (Datum::Set(a), Datum::Set(b)) => {
                Datum::Set(a.symmetric_difference(b).cloned().collect())
            }
            (Datum::Map(a), Datum::Map(b)) => {
                let mut out = Vec::new();
                let mut ia = a.iter().peekable();
                let mut ib = b.iter().peekable();
                loop {
                    match (ia.peek(), ib.peek()) {
                        (None, None) => break,
                        (Some((ka, va)), None) => {
                            out.push(((*ka).clone(), (*va).clone()));
                            ia.next();
                        }
                        (None, Some((kb, vb))) => {
                            out.push(((*kb).clone(), (*vb).clone()));
                            ib.next();
                        }
                        (Some((ka, va)), Some((kb, vb))) => match ka.cmp(kb) {
                            std::cmp::Ordering::Less => {
                                out.push(((*ka).clone(), (*va).clone()));
                                ia.next();
                            }
                            std::cmp::Ordering::Greater => {
                                out.push(((*kb).clone(), (*vb).clone()));
                                ib.next();
                            }
                            std::cmp::Ordering::Equal => {
                                if va != vb {
                                    out.push(((*kb).clone(), (*vb).clone()));
                                }
                                ia.next();
                                ib.next();
                            }
                        },
                    }
                }
                // Pushed in ascending key order.
                Datum::Map(out.into_iter().collect())
            }
            // Shape mismatch: fall back to a full replacement.
            _ => new.clone(),
        }
    }

    /// Applies `diff` (as produced by [`Datum::diff`] or read from a file)
    /// in place (§4.3). Costs O(d log n) for a diff of d elements. The
    /// resulting size must satisfy `ty`; on error `self` is unchanged.
    pub fn apply_diff(&mut self, diff: &Datum, ty: &Type) -> Result<()> {
        if !ty.is_composite() {
            if diff.is_map() != ty.is_map() {
                return Err(Error::syntax("diff shape does not match type"));
            }
            diff.check_size(ty)
                .map_err(|_| Error::ovsdb("Datum crated by diff has size error"))?;
            *self = diff.clone();
            return Ok(());
        }
        // First compute the resulting size without mutating.
        let mut n = self.len() as i64;
        match (&*self, diff) {
            (Datum::Set(cur), Datum::Set(d)) => {
                for k in d {
                    n += if cur.contains(k) { -1 } else { 1 };
                }
            }
            (Datum::Map(cur), Datum::Map(d)) => {
                for (k, v) in d {
                    match cur.get(k) {
                        None => n += 1,
                        Some(old) if old != v => {}
                        Some(_) => n -= 1,
                    }
                }
            }
            _ => return Err(Error::syntax("diff shape does not match column value")),
        }
        if n < i64::from(ty.min) || n > i64::from(ty.max) {
            return Err(Error::ovsdb("Datum crated by diff has size error"));
        }
        match (self, diff) {
            (Datum::Set(cur), Datum::Set(d)) => {
                for k in d {
                    if !cur.remove(k) {
                        cur.insert(k.clone());
                    }
                }
            }
            (Datum::Map(cur), Datum::Map(d)) => {
                for (k, v) in d {
                    match cur.get_mut(k) {
                        None => {
                            cur.insert(k.clone(), v.clone());
                        }
                        Some(old) if old != v => *old = v.clone(),
                        Some(_) => {
                            cur.remove(k);
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Returns `self` with `diff` applied (see [`Datum::apply_diff`]).
    pub fn with_diff(&self, diff: &Datum, ty: &Type) -> Result<Datum> {
        let mut d = self.clone();
        d.apply_diff(diff, ty)?;
        Ok(d)
    }

    // ------------------------------------------------------------------
    // Set algebra used by `mutate`

    /// Adds every element of `other` not yet present (maps: keys already
    /// present keep their value, as OVSDB's `insert` mutator does).
    pub fn union_with(&mut self, other: &Datum) {
        match (self, other) {
            (Datum::Set(a), Datum::Set(b)) => a.extend(b.iter().cloned()),
            (Datum::Map(a), Datum::Map(b)) => {
                for (k, v) in b {
                    if !a.contains_key(k) {
                        a.insert(k.clone(), v.clone());
                    }
                }
            }
            _ => {}
        }
    }

    /// Removes elements of `other` from `self`. For a map `self`, `other`
    /// may be a set of keys (remove those keys) or a map (remove pairs that
    /// match exactly).
    pub fn subtract(&mut self, other: &Datum) {
        match (self, other) {
            (Datum::Set(a), Datum::Set(b)) => {
                for k in b {
                    a.remove(k);
                }
            }
            (Datum::Map(a), Datum::Set(b)) => {
                for k in b {
                    a.remove(k);
                }
            }
            (Datum::Map(a), Datum::Map(b)) => {
                for (k, v) in b {
                    if a.get(k) == Some(v) {
                        a.remove(k);
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether every element of `self` is in `other` (maps: same pairs).
    pub fn includes_all_of(&self, other: &Datum) -> bool {
        match (self, other) {
            (Datum::Set(a), Datum::Set(b)) => b.iter().all(|x| a.contains(x)),
            (Datum::Map(a), Datum::Map(b)) => b.iter().all(|(k, v)| a.get(k) == Some(v)),
            _ => false,
        }
    }

    /// OVSDB text syntax (`[a, b]`, `{k=v}`, bare atom for a scalar), as
    /// `ovsdb-client` and `show-log -mm` print values.
    pub fn to_text(&self, ty: &Type) -> String {
        match self {
            Datum::Map(m) => {
                let parts: Vec<String> = m.iter().map(|(k, v)| format!("{}={}", k, v)).collect();
                format!("{{{}}}", parts.join(", "))
            }
            Datum::Set(s) => {
                if ty.is_scalar() && s.len() == 1 {
                    s.iter().next().map(|a| a.to_string()).unwrap_or_default()
                } else {
                    let parts: Vec<String> = s.iter().map(|a| a.to_string()).collect();
                    format!("[{}]", parts.join(", "))
                }
            }
        }
    }
}

/// For `["tag", [elements]]` returns the elements.
fn unwrap_tagged<'a>(j: &'a Json, tag: &str) -> Option<&'a [Json]> {
    match j.as_array()? {
        [Json::String(t), Json::Array(inner)] if t == tag => Some(inner),
        _ => None,
    }
}

fn write_atom(a: &Atom, out: &mut Vec<u8>) {
    use crate::json::write_string;
    match a {
        Atom::Uuid(u) => {
            out.extend_from_slice(b"[\"uuid\",\"");
            out.extend_from_slice(&u.to_ascii());
            out.extend_from_slice(b"\"]");
        }
        Atom::String(s) => write_string(s, out),
        other => other.to_json().write_compact(out),
    }
}
