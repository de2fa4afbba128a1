//! Atoms: the scalar values OVSDB stores (§2.5.1), their order (§2.5.3),
//! JSON form and constraint checks.

use std::cmp::Ordering;
use std::fmt;

use crate::error::{Error, Result};
use crate::json::Json;
use crate::types::{AtomicType, BaseType};
use crate::uuid::Uuid;

/// Resolver for `["named-uuid", name]` atoms.
pub type NamedUuidFn<'a> = dyn FnMut(&str) -> Result<Uuid> + 'a;

/// One value of an atomic type.
#[derive(Debug, Clone)]
pub enum Atom {
    Integer(i64),
    Real(f64),
    Boolean(bool),
    String(String),
    Uuid(Uuid),
}

impl Atom {
    pub fn atomic_type(&self) -> AtomicType {
        match self {
            Atom::Integer(_) => AtomicType::Integer,
            Atom::Real(_) => AtomicType::Real,
            Atom::Boolean(_) => AtomicType::Boolean,
            Atom::String(_) => AtomicType::String,
            Atom::Uuid(_) => AtomicType::Uuid,
        }
    }

    /// The default atom of a type: 0, 0.0, false, "", all-zero UUID.
    pub fn default_for(t: AtomicType) -> Atom {
        match t {
            AtomicType::Integer => Atom::Integer(0),
            AtomicType::Real => Atom::Real(0.0),
            AtomicType::Boolean => Atom::Boolean(false),
            AtomicType::String => Atom::String(String::new()),
            AtomicType::Uuid => Atom::Uuid(Uuid::NIL),
        }
    }

    /// Whether this is the default atom of its type (`-0.0` counts).
    pub fn is_default(&self) -> bool {
        match self {
            Atom::Integer(i) => *i == 0,
            Atom::Real(r) => *r == 0.0,
            Atom::Boolean(b) => !*b,
            Atom::String(s) => s.is_empty(),
            Atom::Uuid(u) => u.is_nil(),
        }
    }

    pub fn as_uuid(&self) -> Option<Uuid> {
        match self {
            Atom::Uuid(u) => Some(*u),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Atom::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Atom::Integer(i) => Some(*i),
            _ => None,
        }
    }

    /// JSON form: a JSON scalar, or `["uuid","…"]`.
    pub fn to_json(&self) -> Json {
        match self {
            Atom::Integer(i) => Json::Integer(*i),
            Atom::Real(r) => Json::Real(*r),
            Atom::Boolean(b) => Json::Bool(*b),
            Atom::String(s) => Json::String(s.clone()),
            Atom::Uuid(u) => {
                Json::Array(vec![Json::String("uuid".into()), Json::String(u.to_text())])
            }
        }
    }

    /// Parses an atom of type `base` (constraints checked). `named` resolves
    /// `["named-uuid", name]` (only the wire protocol allows those; pass
    /// `None` for files).
    pub fn from_json(
        j: &Json,
        base: &BaseType,
        named: Option<&mut NamedUuidFn<'_>>,
    ) -> Result<Atom> {
        let a = Atom::from_json_unchecked(j, base.atomic, named)?;
        a.check_constraints(base)?;
        Ok(a)
    }

    /// Parses an atom of atomic type `t` without constraint checks.
    pub fn from_json_unchecked(
        j: &Json,
        t: AtomicType,
        named: Option<&mut NamedUuidFn<'_>>,
    ) -> Result<Atom> {
        let bad = || Error::syntax_at(j, format!("expected {}", t.name()));
        Ok(match t {
            AtomicType::Integer => match j {
                Json::Integer(i) => Atom::Integer(*i),
                _ => return Err(bad()),
            },
            AtomicType::Real => match j {
                Json::Integer(i) => Atom::Real(*i as f64),
                Json::Real(r) => Atom::Real(if *r == 0.0 { 0.0 } else { *r }),
                _ => return Err(bad()),
            },
            AtomicType::Boolean => match j {
                Json::Bool(b) => Atom::Boolean(*b),
                _ => return Err(bad()),
            },
            AtomicType::String => match j {
                Json::String(s) => {
                    if s.as_bytes().contains(&0) {
                        return Err(Error::constraint("string contains a NUL byte"));
                    }
                    Atom::String(s.clone())
                }
                // OVS stores the bytes, then its constraint check rejects them.
                Json::NonUtf8(b) => {
                    return Err(Error::constraint(format!(
                        "not a valid UTF-8 string: {}",
                        crate::json::utf8_violation(b).unwrap_or_default()
                    )))
                }
                _ => return Err(bad()),
            },
            // As OVS's `ovsdb_atom_parse_uuid`: `["uuid", "…"]`, or, where
            // names are allowed, `["named-uuid", id]`; anything else is
            // reported as not being the first form.
            AtomicType::Uuid => match (j.as_array(), named) {
                (Some([Json::String(tag), Json::String(v)]), _) if tag == "uuid" => {
                    Atom::Uuid(Uuid::parse(v).ok_or_else(|| {
                        Error::syntax_at(j, format!("\"{}\" is not a valid UUID", v))
                    })?)
                }
                (Some([Json::String(tag), Json::String(name)]), Some(f)) if tag == "named-uuid" => {
                    if !crate::types::is_id_str(name) {
                        return Err(Error::syntax_at(j, "named-uuid string is not a valid <id>"));
                    }
                    Atom::Uuid(f(name)?)
                }
                _ => return Err(Error::syntax_at(j, "expected [\"uuid\", <string>]")),
            },
        })
    }

    /// Checks `base`'s constraints (enum, ranges, string length in
    /// characters). Reference targets are checked at commit time instead.
    pub fn check_constraints(&self, base: &BaseType) -> Result<()> {
        if self.atomic_type() != base.atomic {
            return Err(Error::syntax(format!(
                "expected {}, got {}",
                base.atomic.name(),
                self.atomic_type().name()
            )));
        }
        if let Some(e) = &base.enum_ {
            if !e.contains(self) {
                return Err(Error::constraint(format!(
                    "{} is not one of the allowed values ([{}])",
                    self,
                    e.iter()
                        .map(|a| a.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            return Ok(());
        }
        match self {
            Atom::Integer(i) => {
                if *i < base.min_integer || *i > base.max_integer {
                    return Err(range_error(
                        &i.to_string(),
                        (base.min_integer != i64::MIN).then(|| base.min_integer.to_string()),
                        (base.max_integer != i64::MAX).then(|| base.max_integer.to_string()),
                    ));
                }
            }
            Atom::Real(r) => {
                if *r < base.min_real || *r > base.max_real {
                    let g = |v: f64| crate::json::format_g(v, 15);
                    return Err(range_error(
                        &g(*r),
                        (base.min_real != -f64::MAX).then(|| g(base.min_real)),
                        (base.max_real != f64::MAX).then(|| g(base.max_real)),
                    ));
                }
            }
            Atom::String(s) => {
                let n = s.chars().count() as u64;
                if n < u64::from(base.min_length) {
                    return Err(Error::constraint(format!(
                        "\"{}\" length {} is less than minimum allowed length {}",
                        s, n, base.min_length
                    )));
                }
                if n > u64::from(base.max_length) {
                    return Err(Error::constraint(format!(
                        "\"{}\" length {} is greater than maximum allowed length {}",
                        s, n, base.max_length
                    )));
                }
            }
            Atom::Boolean(_) | Atom::Uuid(_) => {}
        }
        Ok(())
    }

    fn type_rank(&self) -> u8 {
        match self {
            Atom::Integer(_) => 0,
            Atom::Real(_) => 1,
            Atom::Boolean(_) => 2,
            Atom::String(_) => 3,
            Atom::Uuid(_) => 4,
        }
    }

    /// Serialized JSON length of this atom.
    pub fn json_len(&self) -> usize {
        match self {
            Atom::Integer(_) | Atom::Real(_) => self.to_json().serialized_len(),
            Atom::Boolean(true) => 4,
            Atom::Boolean(false) => 5,
            Atom::String(s) => crate::json::string_serialized_len(s),
            Atom::Uuid(_) => 47,
        }
    }
}

impl PartialEq for Atom {
    /// Equal exactly when [`Ord::cmp`] says so. Integers, booleans, strings
    /// and UUIDs compare as values (a string's length first, then its bytes,
    /// not a three-way walk); reals go through `cmp` (`0.0 == -0.0`, a NaN
    /// equal to itself), and atoms of different types are never equal.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Atom::Integer(a), Atom::Integer(b)) => a == b,
            (Atom::Boolean(a), Atom::Boolean(b)) => a == b,
            (Atom::String(a), Atom::String(b)) => a == b,
            (Atom::Uuid(a), Atom::Uuid(b)) => a == b,
            _ => self.cmp(other) == Ordering::Equal,
        }
    }
}
impl Eq for Atom {}

impl PartialOrd for Atom {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Atom {
    /// §2.5.3: numeric for integers/reals (`0.0 == -0.0`), false < true,
    /// bytewise for strings, textual order for UUIDs. Atoms of different
    /// types (never mixed in one datum) order by type.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Atom::Integer(a), Atom::Integer(b)) => a.cmp(b),
            (Atom::Real(a), Atom::Real(b)) => a.partial_cmp(b).unwrap_or_else(|| a.total_cmp(b)),
            (Atom::Boolean(a), Atom::Boolean(b)) => a.cmp(b),
            (Atom::String(a), Atom::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Atom::Uuid(a), Atom::Uuid(b)) => a.cmp(b),
            _ => self.type_rank().cmp(&other.type_rank()),
        }
    }
}

impl fmt::Display for Atom {
    /// OVSDB text syntax (as `ovsdb-client`/`show-log -mm` print atoms):
    /// strings bare when they look like an identifier, quoted otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Integer(i) => write!(f, "{}", i),
            Atom::Real(r) => f.write_str(&crate::json::format_g(*r, 15)),
            Atom::Boolean(b) => write!(f, "{}", b),
            Atom::String(s) => {
                if string_needs_quotes(s) {
                    f.write_str(&Json::String(s.clone()).to_string_compact())
                } else {
                    f.write_str(s)
                }
            }
            Atom::Uuid(u) => write!(f, "{}", u),
        }
    }
}

/// Whether the OVSDB text syntax must quote a string (mirrors the rule that
/// a bare string must look like an id and not a keyword, number or UUID).
pub fn string_needs_quotes(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return true;
    };
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return true;
    }
    if !b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-' || *c == b'.')
    {
        return true;
    }
    matches!(s, "true" | "false") || Uuid::parse(s).is_some()
}

fn range_error(v: &str, min: Option<String>, max: Option<String>) -> Error {
    Error::constraint(match (min, max) {
        (Some(a), Some(b)) => format!("{} is not in the valid range {} to {} (inclusive)", v, a, b),
        (Some(a), None) => format!("{} is less than minimum allowed value {}", v, a),
        (None, Some(b)) => format!("{} is greater than maximum allowed value {}", v, b),
        (None, None) => format!("{} is out of range", v),
    })
}

impl From<i64> for Atom {
    fn from(v: i64) -> Self {
        Atom::Integer(v)
    }
}
impl From<&str> for Atom {
    fn from(v: &str) -> Self {
        Atom::String(v.to_string())
    }
}
impl From<String> for Atom {
    fn from(v: String) -> Self {
        Atom::String(v)
    }
}
impl From<bool> for Atom {
    fn from(v: bool) -> Self {
        Atom::Boolean(v)
    }
}
impl From<Uuid> for Atom {
    fn from(v: Uuid) -> Self {
        Atom::Uuid(v)
    }
}
impl From<f64> for Atom {
    fn from(v: f64) -> Self {
        Atom::Real(v)
    }
}
