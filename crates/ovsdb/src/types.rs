//! Column types (ovsdb-formats.md §2.2): atomic types, base types with
//! constraints, and full types with `min`/`max`.

use std::collections::BTreeSet;

use crate::atom::Atom;
use crate::datum::Datum;
use crate::error::{Error, Result};
use crate::json::{shash_order, Json, Object};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AtomicType {
    Integer,
    Real,
    Boolean,
    String,
    Uuid,
}

impl AtomicType {
    pub fn name(self) -> &'static str {
        match self {
            AtomicType::Integer => "integer",
            AtomicType::Real => "real",
            AtomicType::Boolean => "boolean",
            AtomicType::String => "string",
            AtomicType::Uuid => "uuid",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "integer" => AtomicType::Integer,
            "real" => AtomicType::Real,
            "boolean" => AtomicType::Boolean,
            "string" => AtomicType::String,
            "uuid" => AtomicType::Uuid,
            _ => return None,
        })
    }

    /// Parses an atomic type name (`"integer"`, ...).
    pub fn from_json(j: &Json) -> Result<Self> {
        match j {
            Json::String(s) => AtomicType::from_name(s)
                .ok_or_else(|| Error::syntax_at(j, format!("\"{}\" is not an atomic-type", s))),
            _ => Err(Error::syntax_at(j, "atomic-type expected")),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefType {
    Strong,
    Weak,
}

/// A base type: an atomic type plus optional constraints.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseType {
    pub atomic: AtomicType,
    /// Allowed values (`enum`), if constrained.
    pub enum_: Option<BTreeSet<Atom>>,
    pub min_integer: i64,
    pub max_integer: i64,
    pub min_real: f64,
    pub max_real: f64,
    /// String length limits, in characters.
    pub min_length: u32,
    pub max_length: u32,
    pub ref_table: Option<String>,
    pub ref_type: RefType,
}

impl BaseType {
    pub fn new(atomic: AtomicType) -> Self {
        BaseType {
            atomic,
            enum_: None,
            min_integer: i64::MIN,
            max_integer: i64::MAX,
            min_real: -f64::MAX,
            max_real: f64::MAX,
            min_length: 0,
            max_length: u32::MAX,
            ref_table: None,
            ref_type: RefType::Strong,
        }
    }

    pub fn has_constraints(&self) -> bool {
        if self.enum_.is_some() {
            return true;
        }
        match self.atomic {
            AtomicType::Integer => self.min_integer != i64::MIN || self.max_integer != i64::MAX,
            AtomicType::Real => self.min_real != -f64::MAX || self.max_real != f64::MAX,
            AtomicType::Boolean => false,
            AtomicType::String => self.min_length != 0 || self.max_length != u32::MAX,
            AtomicType::Uuid => self.ref_table.is_some(),
        }
    }

    pub fn is_strong_ref(&self) -> bool {
        self.ref_table.is_some() && self.ref_type == RefType::Strong
    }

    pub fn is_weak_ref(&self) -> bool {
        self.ref_table.is_some() && self.ref_type == RefType::Weak
    }

    /// The type used to parse an `enum` constraint: a set of 1..unlimited
    /// atoms of this atomic type.
    pub fn enum_type(atomic: AtomicType) -> Type {
        Type {
            key: BaseType::new(atomic),
            value: None,
            min: 1,
            max: u32::MAX,
        }
    }

    pub fn from_json(j: &Json) -> Result<Self> {
        if let Json::String(_) = j {
            return Ok(BaseType::new(AtomicType::from_json(j)?));
        }
        let o = j
            .as_object()
            .ok_or_else(|| Error::syntax_at(j, "ovsdb type expected"))?;
        let mut p = MemberParser::new(o, "ovsdb type");
        let t = p.required("type", |j| j.as_str().is_some(), "string")?;
        let atomic = AtomicType::from_json(t)?;
        let mut b = BaseType::new(atomic);
        if let Some(e) = p.optional("enum", |_| true, "any")? {
            let d = Datum::from_json(e, &BaseType::enum_type(atomic))?;
            b.enum_ = Some(d.keys().cloned().collect());
        } else {
            match atomic {
                AtomicType::Integer => {
                    if let Some(v) = p.optional("minInteger", is_int, "integer")? {
                        b.min_integer = v.as_i64().unwrap_or(i64::MIN);
                    }
                    if let Some(v) = p.optional("maxInteger", is_int, "integer")? {
                        b.max_integer = v.as_i64().unwrap_or(i64::MAX);
                    }
                    if b.min_integer > b.max_integer {
                        return Err(Error::syntax_at(j, "minInteger exceeds maxInteger"));
                    }
                }
                AtomicType::Real => {
                    if let Some(v) = p.optional("minReal", is_number, "number")? {
                        b.min_real = v.as_f64().unwrap_or(-f64::MAX);
                    }
                    if let Some(v) = p.optional("maxReal", is_number, "number")? {
                        b.max_real = v.as_f64().unwrap_or(f64::MAX);
                    }
                    if b.min_real > b.max_real {
                        return Err(Error::syntax_at(j, "minReal exceeds maxReal"));
                    }
                }
                AtomicType::String => {
                    if let Some(v) = p.optional("minLength", is_int, "integer")? {
                        b.min_length = uint_member("minLength", v)?;
                    }
                    if let Some(v) = p.optional("maxLength", is_int, "integer")? {
                        b.max_length = uint_member("maxLength", v)?;
                    }
                    if b.min_length > b.max_length {
                        return Err(Error::syntax_at(j, "minLength exceeds maxLength"));
                    }
                }
                AtomicType::Uuid => {
                    if let Some(t) = p.optional("refTable", is_id, "id")? {
                        b.ref_table = t.as_str().map(str::to_string);
                        if let Some(rt) = p.optional("refType", is_id, "id")? {
                            b.ref_type = match rt.as_str() {
                                Some("strong") => RefType::Strong,
                                Some("weak") => RefType::Weak,
                                other => {
                                    return Err(Error::syntax_at(
                                        j,
                                        format!(
                                            "refType must be \"strong\" or \"weak\" (not \"{}\")",
                                            other.unwrap_or("")
                                        ),
                                    ))
                                }
                            };
                        }
                    }
                }
                AtomicType::Boolean => {}
            }
        }
        p.finish()?;
        Ok(b)
    }

    /// Normalized JSON, members in the C writer's insertion order.
    pub fn to_json(&self) -> Json {
        if !self.has_constraints() {
            return Json::String(self.atomic.name().into());
        }
        let mut o = Object::new();
        o.push_unchecked("type", Json::String(self.atomic.name().into()));
        if let Some(e) = &self.enum_ {
            let d = Datum::Set(e.iter().cloned().collect());
            o.push_unchecked("enum", d.to_json());
        }
        match self.atomic {
            AtomicType::Integer => {
                if self.min_integer != i64::MIN {
                    o.push_unchecked("minInteger", Json::Integer(self.min_integer));
                }
                if self.max_integer != i64::MAX {
                    o.push_unchecked("maxInteger", Json::Integer(self.max_integer));
                }
            }
            AtomicType::Real => {
                if self.min_real != -f64::MAX {
                    o.push_unchecked("minReal", Json::Real(self.min_real));
                }
                if self.max_real != f64::MAX {
                    o.push_unchecked("maxReal", Json::Real(self.max_real));
                }
            }
            AtomicType::String => {
                if self.min_length != 0 {
                    o.push_unchecked("minLength", Json::Integer(self.min_length.into()));
                }
                if self.max_length != u32::MAX {
                    o.push_unchecked("maxLength", Json::Integer(self.max_length.into()));
                }
            }
            AtomicType::Uuid => {
                if let Some(t) = &self.ref_table {
                    o.push_unchecked("refTable", Json::String(t.clone()));
                    if self.ref_type == RefType::Weak {
                        o.push_unchecked("refType", Json::String("weak".into()));
                    }
                }
            }
            AtomicType::Boolean => {}
        }
        Json::Object(o)
    }
}

fn is_int(j: &Json) -> bool {
    matches!(j, Json::Integer(_))
}
fn is_number(j: &Json) -> bool {
    matches!(j, Json::Integer(_) | Json::Real(_))
}
/// OVSDB "id": `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_id(j: &Json) -> bool {
    j.as_str().is_some_and(is_id_str)
}
pub fn is_id_str(s: &str) -> bool {
    let mut c = s.bytes();
    matches!(c.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && c.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn uint_member(name: &str, v: &Json) -> Result<u32> {
    match v.as_i64() {
        Some(i) if (0..=i64::from(u32::MAX)).contains(&i) => Ok(i as u32),
        _ => Err(Error::syntax_at(
            v,
            format!("{} out of valid range 0 to {}", name, u32::MAX),
        )),
    }
}

/// Strict object member parser in the style of OVS's `ovsdb_parser`: every
/// member must be consumed, else `finish` fails.
pub struct MemberParser<'a> {
    obj: &'a Object,
    used: Vec<bool>,
    what: &'a str,
}

impl<'a> MemberParser<'a> {
    pub fn new(obj: &'a Object, what: &'a str) -> Self {
        MemberParser {
            obj,
            used: vec![false; obj.len()],
            what,
        }
    }

    fn find(&mut self, name: &str) -> Option<&'a Json> {
        for (i, (k, v)) in self.obj.iter().enumerate() {
            if k == name {
                self.used[i] = true;
                return Some(v);
            }
        }
        None
    }

    pub fn optional(
        &mut self,
        name: &str,
        ok: impl Fn(&Json) -> bool,
        _type_desc: &str,
    ) -> Result<Option<&'a Json>> {
        match self.find(name) {
            None => Ok(None),
            Some(v) if ok(v) => Ok(Some(v)),
            Some(_) => Err(self.error(format!("Type mismatch for member '{}'.", name))),
        }
    }

    pub fn required(
        &mut self,
        name: &str,
        ok: impl Fn(&Json) -> bool,
        type_desc: &str,
    ) -> Result<&'a Json> {
        self.optional(name, ok, type_desc)?
            .ok_or_else(|| self.error(format!("Required '{}' member is missing.", name)))
    }

    /// A syntax error about the whole object, worded like
    /// `ovsdb_parser_raise_error`.
    fn error(&self, message: String) -> Error {
        Error::syntax_at(
            &Json::Object(self.obj.clone()),
            format!("Parsing {} failed: {}", self.what, message),
        )
    }

    /// Fails if a member was not asked for, naming the first one in the C
    /// object's (hash) iteration order, and how many others there are.
    pub fn finish(self) -> Result<()> {
        let names: Vec<&str> = self.obj.keys().collect();
        let unused = self.used.iter().filter(|u| !**u).count();
        let Some(first) = shash_order(&names).into_iter().find(|&i| !self.used[i]) else {
            return Ok(());
        };
        Err(self.error(match unused {
            1 => format!("Member '{}' is present but not allowed here.", names[first]),
            n => format!(
                "Member '{}' and {} other member{} are present but not allowed here.",
                names[first],
                n - 1,
                if n > 2 { "s" } else { "" }
            ),
        }))
    }
}

/// A column type: key base type, optional value base type (maps), and the
/// number of elements allowed (`max == u32::MAX` means "unlimited").
#[derive(Debug, Clone, PartialEq)]
pub struct Type {
    pub key: BaseType,
    pub value: Option<BaseType>,
    pub min: u32,
    pub max: u32,
}

/// `max` value meaning "unlimited".
pub const UNLIMITED: u32 = u32::MAX;

impl Type {
    pub fn scalar(atomic: AtomicType) -> Self {
        Type {
            key: BaseType::new(atomic),
            value: None,
            min: 1,
            max: 1,
        }
    }

    pub fn set(key: BaseType, min: u32, max: u32) -> Self {
        Type {
            key,
            value: None,
            min,
            max,
        }
    }

    pub fn map(key: BaseType, value: BaseType, min: u32, max: u32) -> Self {
        Type {
            key,
            value: Some(value),
            min,
            max,
        }
    }

    pub fn is_map(&self) -> bool {
        self.value.is_some()
    }
    pub fn is_set(&self) -> bool {
        self.value.is_none() && !(self.min == 1 && self.max == 1)
    }
    pub fn is_scalar(&self) -> bool {
        self.value.is_none() && self.min == 1 && self.max == 1
    }
    pub fn is_optional_scalar(&self) -> bool {
        self.value.is_none() && self.min == 0 && self.max == 1
    }
    /// "Composite" in the diff code's sense: more than one element allowed.
    pub fn is_composite(&self) -> bool {
        self.max > 1
    }
    /// Same type with the size limits relaxed to 0..unlimited (for diffs).
    pub fn relaxed(&self) -> Type {
        Type {
            min: 0,
            max: UNLIMITED,
            ..self.clone()
        }
    }

    fn n_from_json(j: &Json) -> Result<u32> {
        match j.as_i64() {
            Some(i) if (0..i64::from(u32::MAX)).contains(&i) => Ok(i as u32),
            _ => Err(Error::syntax_at(j, "bad min or max value")),
        }
    }

    pub fn from_json(j: &Json) -> Result<Self> {
        match j {
            Json::String(_) => Ok(Type {
                key: BaseType::from_json(j)?,
                value: None,
                min: 1,
                max: 1,
            }),
            Json::Object(o) => {
                let mut p = MemberParser::new(o, "ovsdb type");
                let is_base = |j: &Json| matches!(j, Json::String(_) | Json::Object(_));
                let key = p.required("key", is_base, "string or object")?;
                let value = p.optional("value", is_base, "string or object")?;
                let min = p.optional("min", is_int, "integer")?;
                let max = p.optional(
                    "max",
                    |j| matches!(j, Json::Integer(_) | Json::String(_)),
                    "integer or string",
                )?;
                p.finish()?;
                let key = BaseType::from_json(key)?;
                let value = value.map(BaseType::from_json).transpose()?;
                let min = min.map(Type::n_from_json).transpose()?.unwrap_or(1);
                let max = match max {
                    Some(Json::String(s)) if s == "unlimited" => UNLIMITED,
                    Some(m) => Type::n_from_json(m)?,
                    None => 1,
                };
                if min > 1 || max < 1 || min > max {
                    return Err(Error::syntax_at(j, "ovsdb type fails constraint checks"));
                }
                Ok(Type {
                    key,
                    value,
                    min,
                    max,
                })
            }
            _ => Err(Error::syntax_at(j, "ovsdb type expected")),
        }
    }

    /// The type in words, as OVS's `ovsdb_type_to_english` puts it
    /// (`integer`, `set of up to 3 strings`, `map of 1 or more (string,
    /// integer) pairs`).
    pub fn to_english(&self) -> String {
        let key = self.key.atomic.name();
        if self.is_scalar() {
            return key.to_string();
        }
        let mut s = String::from(if self.is_map() { "map" } else { "set" });
        if self.max == UNLIMITED {
            if self.min > 0 {
                s.push_str(&format!(" of {} or more", self.min));
            } else {
                s.push_str(" of");
            }
        } else if self.min > 0 {
            s.push_str(&format!(" of {} to {}", self.min, self.max));
        } else {
            s.push_str(&format!(" of up to {}", self.max));
        }
        match &self.value {
            None => s.push_str(&format!(" {}s", key)),
            Some(v) => s.push_str(&format!(" ({}, {}) pairs", key, v.atomic.name())),
        }
        s
    }

    /// Normalized JSON, members in the C writer's insertion order
    /// (`key`, `value`, `min`, `max`).
    pub fn to_json(&self) -> Json {
        if self.is_scalar() && !self.key.has_constraints() {
            return self.key.to_json();
        }
        let mut o = Object::new();
        o.push_unchecked("key", self.key.to_json());
        if let Some(v) = &self.value {
            o.push_unchecked("value", v.to_json());
        }
        if self.min != 1 {
            o.push_unchecked("min", Json::Integer(self.min.into()));
        }
        if self.max == UNLIMITED {
            o.push_unchecked("max", Json::String("unlimited".into()));
        } else if self.max != 1 {
            o.push_unchecked("max", Json::Integer(self.max.into()));
        }
        Json::Object(o)
    }
}
