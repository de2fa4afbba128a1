//! The string syntax of `ovs-vsctl`, `ovn-nbctl` and `ovn-sbctl` values:
//! atoms (`42`, `true`, `"quoted string"`, `bare-string`, a UUID), sets
//! (`[a, b]`, or bare `a,b`) and maps (`{k=v, k2=v2}`), parsed for a given
//! column [`Type`], and printed back the way those tools print them.
//!
//! The rules are those of Open vSwitch's `lib/ovsdb-data.c` (3.1):
//! `ovsdb_token_parse` (a token ends at one of `:=, []{}!<>` unless the
//! delimiter is backslash-escaped or inside double quotes; quotes are kept
//! in the token), `ovsdb_atom_from_string` (booleans also `yes/on/1` and
//! `no/off/0`; strings in double quotes are unescaped like JSON strings,
//! other strings are taken as they are and may not be empty; integer set
//! keys may be ranges `a-b` of at most 4096 values),
//! `ovsdb_datum_from_string` (optional `[]`/`{}` around a set or map,
//! required when empty; elements separated by spaces or commas; the
//! element count is checked against the type, then duplicates are errors)
//! and `ovsdb_datum_to_string` (brackets only when the type allows more
//! than one element or the datum is empty). Error messages are worded as
//! those functions word them (OVS's own vectors in `testdata/` check them).
//! This module is written from those facts, not copied.

use crate::atom::{string_needs_quotes, Atom};
use crate::datum::Datum;
use crate::json::Unescape;
use crate::types::{AtomicType, BaseType, Type};
use crate::uuid::Uuid;
use std::cmp::Ordering;
use std::fmt;

/// Largest integer range `a-b` accepted in a set (OVS's
/// `MAX_OVSDB_ATOM_RANGE_SIZE`): `b - a` must be less than this.
pub const MAX_RANGE: u64 = 4096;

/// Why a string did not parse as a value of the wanted type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StringsError {
    /// A backslash ends the argument.
    TrailingBackslash {
        input: String,
    },
    /// A double quote is never closed.
    UnterminatedQuote {
        input: String,
    },
    /// `""`-less empty string where a string atom was wanted.
    EmptyString,
    /// A quoted string that does not unescape.
    BadQuotedString {
        input: String,
        message: String,
    },
    /// Not an integer (or integer range).
    BadInteger {
        input: String,
    },
    /// A range whose end is before its start (`input` is the token), or
    /// (`too_big`) one of more than [`MAX_RANGE`] values (`input` is
    /// `start-end` as numbers; OVS reports this as a constraint violation).
    BadRange {
        input: String,
        too_big: bool,
    },
    BadReal {
        input: String,
    },
    BadBoolean {
        input: String,
    },
    BadUuid {
        input: String,
    },
    /// `{}`/`[]` needed for an empty map/set.
    EmptyNeedsBrackets {
        map: bool,
    },
    /// A delimiter where an atom was expected; `what` is the type in
    /// words (`ovsdb_type_to_english`).
    UnexpectedChar {
        input: String,
        found: char,
        what: String,
    },
    /// A map key not followed by `=`; `input` is the text from the key on,
    /// `found` the character seen instead (`None` at the end).
    ExpectedEquals {
        input: String,
        found: Option<char>,
    },
    /// The closing `]`/`}` is missing.
    MissingEnd {
        input: String,
        end: char,
    },
    /// Text after the closing `]`/`}`.
    TrailingGarbage {
        input: String,
        end: char,
    },
    /// Too few or too many elements for the type.
    Count {
        input: String,
        n: usize,
        min: u32,
        max: u32,
        map: bool,
    },
    /// A map key given twice.
    DuplicateKey {
        input: String,
    },
    /// A set element given twice.
    DuplicateValue {
        input: String,
    },
    /// An atom violates its type's constraints (enum, range, length);
    /// `message` is the error as OVS prints it (`constraint violation: …`).
    Constraint {
        input: String,
        message: String,
    },
}

impl fmt::Display for StringsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use StringsError::*;
        match self {
            TrailingBackslash { input } => write!(f, "{input}: backslash at end of argument"),
            UnterminatedQuote { input } => {
                write!(f, "{input}: quoted string extends past end of argument")
            }
            EmptyString => f.write_str(
                "An empty string is not valid as input; use \"\" to represent the empty string",
            ),
            BadQuotedString { input, message } => write!(f, "{input}: {message}"),
            BadInteger { input } => write!(f, "\"{input}\" is not a valid integer or range"),
            BadRange {
                input,
                too_big: false,
            } => write!(
                f,
                "\"{input}\" is not a valid range. Range end cannot be before start."
            ),
            BadRange {
                input,
                too_big: true,
            } => write!(
                f,
                "constraint violation: Range \"{input}\" is too big. \
                 Maximum allowed size is {MAX_RANGE}."
            ),
            BadReal { input } => write!(f, "\"{input}\" is not a valid real number"),
            BadBoolean { input } => write!(
                f,
                "\"{input}\" is not a valid boolean (use \"true\" or \"false\")"
            ),
            BadUuid { input } => write!(f, "\"{input}\" is not a valid UUID"),
            EmptyNeedsBrackets { map: true } => f.write_str("use \"{}\" to specify the empty map"),
            EmptyNeedsBrackets { map: false } => f.write_str("use \"[]\" to specify the empty set"),
            UnexpectedChar { input, found, what } => {
                write!(f, "{input}: unexpected \"{found}\" parsing {what}")
            }
            ExpectedEquals { input, found } => {
                write!(f, "{input}: syntax error at \"")?;
                if let Some(c) = found {
                    write!(f, "{c}")?;
                }
                f.write_str("\" expecting \"=\"")
            }
            MissingEnd { input, end } => write!(f, "{input}: missing \"{end}\" at end of data"),
            TrailingGarbage { input, end } => {
                write!(f, "{input}: trailing garbage after \"{end}\"")
            }
            Count {
                input,
                n,
                min,
                max,
                map,
            } => {
                let what = if *map { "pair(s)" } else { "value(s)" };
                if *n < *min as usize {
                    write!(
                        f,
                        "{input}: {n} {what} specified but the minimum number is {min}"
                    )
                } else {
                    write!(
                        f,
                        "{input}: {n} {what} specified but the maximum number is {max}"
                    )
                }
            }
            DuplicateKey { input } => write!(f, "{input}: map contains duplicate key"),
            DuplicateValue { input } => write!(f, "{input}: set contains duplicate value"),
            Constraint { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for StringsError {}

/// Whether `c` ends a token (`ovsdb_token_is_delim`).
pub fn is_delim(c: char) -> bool {
    ":=, []{}!<>".contains(c)
}

/// Reads one token from the start of `s`: up to the first unescaped,
/// unquoted delimiter. Backslash escapes a character (outside quotes the
/// backslash is dropped, inside it is kept); double quotes are kept.
/// Returns the token and the rest of `s` (starting at the delimiter).
pub fn parse_token(s: &str) -> Result<(String, &str), StringsError> {
    let mut out = String::new();
    let mut in_quotes = false;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if c == '\\' {
            if in_quotes {
                out.push('\\');
            }
            match it.next() {
                Some((_, n)) => out.push(n),
                None => {
                    return Err(StringsError::TrailingBackslash {
                        input: s.to_string(),
                    })
                }
            }
        } else if !in_quotes && is_delim(c) {
            return Ok((out, &s[i..]));
        } else {
            out.push(c);
            if c == '"' {
                in_quotes = !in_quotes;
            }
        }
    }
    if in_quotes {
        return Err(StringsError::UnterminatedQuote {
            input: s.to_string(),
        });
    }
    Ok((out, ""))
}

/// `strtoll` in base 10 over a prefix of `s`: optional leading white
/// space, optional sign, at least one digit. Returns the value and the
/// rest; `None` when there are no digits or the value overflows.
fn strtoll_prefix(s: &str) -> Option<(i64, &str)> {
    let t = s.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let sign = usize::from(t.starts_with(['+', '-']));
    let digits = t[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let end = sign + digits;
    let text = t[..end].strip_prefix('+').unwrap_or(&t[..end]);
    Some((text.parse().ok()?, &t[end..]))
}

/// A whole string as one base-10 integer (`str_to_llong`).
fn parse_i64(s: &str) -> Option<i64> {
    match strtoll_prefix(s)? {
        (v, "") => Some(v),
        _ => None,
    }
}

/// `a-b` as two integers (`str_to_llong_range`): an integer prefix, a
/// hyphen, then an integer to the end.
fn parse_range(s: &str) -> Option<(i64, i64)> {
    let (a, rest) = strtoll_prefix(s)?;
    Some((a, parse_i64(rest.strip_prefix('-')?)?))
}

fn constraint(input: &str, e: crate::Error) -> StringsError {
    StringsError::Constraint {
        input: input.to_string(),
        message: e.to_string(),
    }
}

/// Parses one atom of `base` from a whole token (quotes included, as
/// [`parse_token`] returns it) and checks its constraints.
pub fn atom_from_string(base: &BaseType, s: &str) -> Result<Atom, StringsError> {
    let atom = atom_unchecked(base, s)?;
    atom.check_constraints(base).map_err(|e| constraint(s, e))?;
    Ok(atom)
}

/// Like [`atom_from_string`], but an integer token may also be a range
/// `a-b` (`ovsdb_atom_from_string` with a range end): returns the start
/// and, for a range, the end. Every value of the range must meet an enum
/// constraint (else the end must meet the range constraints), and the
/// range may hold at most [`MAX_RANGE`] values.
pub fn atom_range_from_string(
    base: &BaseType,
    s: &str,
) -> Result<(Atom, Option<Atom>), StringsError> {
    if base.atomic != AtomicType::Integer {
        return atom_from_string(base, s).map(|a| (a, None));
    }
    let Some((a, b)) = parse_range(s) else {
        return atom_from_string(base, s).map(|a| (a, None));
    };
    if b < a {
        return Err(StringsError::BadRange {
            input: s.to_string(),
            too_big: false,
        });
    }
    let start = Atom::Integer(a);
    start
        .check_constraints(base)
        .map_err(|e| constraint(s, e))?;
    if base.enum_.is_some() {
        // Stops at the first value outside the enum, so a huge range
        // costs at most the enum's size plus one.
        for i in a.saturating_add(1)..=b {
            Atom::Integer(i)
                .check_constraints(base)
                .map_err(|e| constraint(s, e))?;
        }
    } else {
        Atom::Integer(b)
            .check_constraints(base)
            .map_err(|e| constraint(s, e))?;
    }
    if (b as u64).wrapping_sub(a as u64) >= MAX_RANGE {
        return Err(StringsError::BadRange {
            input: format!("{a}-{b}"),
            too_big: true,
        });
    }
    Ok((start, Some(Atom::Integer(b))))
}

fn atom_unchecked(base: &BaseType, s: &str) -> Result<Atom, StringsError> {
    let input = || s.to_string();
    Ok(match base.atomic {
        AtomicType::Integer => {
            Atom::Integer(parse_i64(s).ok_or(StringsError::BadInteger { input: input() })?)
        }
        AtomicType::Real => {
            let v: f64 = s
                .trim_start()
                .parse()
                .map_err(|_| StringsError::BadReal { input: input() })?;
            if !v.is_finite() {
                return Err(StringsError::BadReal { input: input() });
            }
            Atom::Real(if v == 0.0 { 0.0 } else { v })
        }
        AtomicType::Boolean => match s {
            "true" | "yes" | "on" | "1" => Atom::Boolean(true),
            "false" | "no" | "off" | "0" => Atom::Boolean(false),
            _ => return Err(StringsError::BadBoolean { input: input() }),
        },
        AtomicType::String => {
            if s.is_empty() {
                return Err(StringsError::EmptyString);
            }
            if let Some(quoted) = s.strip_prefix('"') {
                let Some(inner) = quoted.strip_suffix('"') else {
                    return Err(StringsError::BadQuotedString {
                        input: input(),
                        message: "missing quote at end of quoted string".into(),
                    });
                };
                match crate::json::unescape(inner.as_bytes()) {
                    Ok(v) => Atom::String(v),
                    Err(Unescape::Bad(message)) => {
                        return Err(StringsError::BadQuotedString {
                            input: input(),
                            message,
                        })
                    }
                    // OVS would store bytes that are not UTF-8, which its
                    // UTF-8 check of the atom then rejects.
                    Err(Unescape::NotUtf8(bytes)) => {
                        return Err(StringsError::Constraint {
                            input: input(),
                            message: format!(
                                "constraint violation: not a valid UTF-8 string: {}",
                                crate::json::utf8_violation(&bytes).unwrap_or_default()
                            ),
                        })
                    }
                }
            } else {
                Atom::String(s.to_string())
            }
        }
        AtomicType::Uuid => {
            Atom::Uuid(Uuid::parse(s).ok_or(StringsError::BadUuid { input: input() })?)
        }
    })
}

fn skip_spaces(s: &str) -> &str {
    s.trim_start_matches(|c: char| c.is_ascii_whitespace())
}

/// Parses a datum of type `ty` from the string syntax (see the module
/// documentation). The element count is checked against `ty.min`/`ty.max`
/// (a range counts each of its values), then duplicates, and every atom
/// against its constraints.
pub fn datum_from_string(ty: &Type, s: &str) -> Result<Datum, StringsError> {
    let is_map = ty.is_map();
    let input = || s.to_string();
    let mut p = skip_spaces(s);
    let end = if p.starts_with(if is_map { '{' } else { '[' }) {
        p = skip_spaces(&p[1..]);
        Some(if is_map { '}' } else { ']' })
    } else if p.is_empty() {
        return Err(StringsError::EmptyNeedsBrackets { map: is_map });
    } else {
        None
    };
    let mut keys: Vec<Atom> = Vec::new();
    let mut pairs: Vec<(Atom, Atom)> = Vec::new();
    loop {
        match p.chars().next() {
            None => break,
            Some(c) if Some(c) == end => break,
            Some(c) if is_delim(c) => {
                return Err(StringsError::UnexpectedChar {
                    input: input(),
                    found: c,
                    what: ty.to_english(),
                })
            }
            Some(_) => {}
        }
        let start = p;
        let (tok, rest) = parse_token(p)?;
        p = rest;
        match &ty.value {
            None => {
                let (a, range_end) = atom_range_from_string(&ty.key, &tok)?;
                match (a, range_end) {
                    (Atom::Integer(a), Some(Atom::Integer(b))) => {
                        keys.extend((a..=b).map(Atom::Integer));
                    }
                    (a, _) => keys.push(a),
                }
            }
            Some(vt) => {
                let key = atom_from_string(&ty.key, &tok)?;
                p = skip_spaces(p);
                let Some(rest) = p.strip_prefix('=') else {
                    return Err(StringsError::ExpectedEquals {
                        input: start.to_string(),
                        found: p.chars().next(),
                    });
                };
                let (vtok, rest) = parse_token(skip_spaces(rest))?;
                p = rest;
                pairs.push((key, atom_from_string(vt, &vtok)?));
            }
        }
        p = skip_spaces(p);
        if let Some(rest) = p.strip_prefix(',') {
            p = skip_spaces(rest);
        }
    }
    match end {
        Some(e) => {
            let Some(rest) = p.strip_prefix(e) else {
                return Err(StringsError::MissingEnd {
                    input: input(),
                    end: e,
                });
            };
            if !skip_spaces(rest).is_empty() {
                return Err(StringsError::TrailingGarbage {
                    input: input(),
                    end: e,
                });
            }
        }
        None => debug_assert!(p.is_empty()),
    }
    let n = if is_map { pairs.len() } else { keys.len() };
    if n < ty.min as usize || n > ty.max as usize {
        return Err(StringsError::Count {
            input: input(),
            n,
            min: ty.min,
            max: ty.max,
            map: is_map,
        });
    }
    let d = if is_map {
        let map: crate::AtomMap = pairs.into_iter().collect();
        if map.len() != n {
            return Err(StringsError::DuplicateKey { input: input() });
        }
        Datum::Map(map)
    } else {
        let set: crate::AtomSet = keys.into_iter().collect();
        if set.len() != n {
            return Err(StringsError::DuplicateValue { input: input() });
        }
        Datum::Set(set)
    };
    Ok(d)
}

/// One atom as the tools print it: strings bare when they look like an
/// identifier, quoted (JSON) otherwise; UUIDs, numbers, booleans bare.
pub fn atom_to_string(a: &Atom) -> String {
    a.to_string()
}

/// A datum as `ovs-vsctl list`/`show` print it (`ovsdb_datum_to_string`):
/// `[...]`/`{...}` when the type allows more than one element or the
/// datum is empty, the bare element(s) otherwise.
pub fn datum_to_string(d: &Datum, ty: &Type) -> String {
    let brackets = ty.max > 1 || d.is_empty();
    let mut out = String::new();
    match d {
        Datum::Map(m) => {
            if brackets {
                out.push('{');
            }
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&k.to_string());
                out.push('=');
                out.push_str(&v.to_string());
            }
            if brackets {
                out.push('}');
            }
        }
        Datum::Set(s) => {
            let map = ty.is_map();
            if brackets {
                out.push(if map { '{' } else { '[' });
            }
            for (i, a) in s.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&a.to_string());
            }
            if brackets {
                out.push(if map { '}' } else { ']' });
            }
        }
    }
    out
}

/// Whether a string atom would be printed in quotes.
pub fn needs_quotes(s: &str) -> bool {
    string_needs_quotes(s)
}

/// `ovsdb_datum_compare_3way`: fewer elements first, then the keys in
/// order, then (maps) the values in order.
pub fn compare_3way(a: &Datum, b: &Datum) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| match (a, b) {
        (Datum::Map(x), Datum::Map(y)) => x
            .keys()
            .cmp(y.keys())
            .then_with(|| x.values().cmp(y.values())),
        _ => a.keys().cmp(b.keys()),
    })
}

/// `ovsdb_datum_includes_all(a, b)`: every element of `a` (key, and value
/// for maps) is in `b`.
pub fn includes_all(a: &Datum, b: &Datum) -> bool {
    match (a, b) {
        (Datum::Map(x), Datum::Map(y)) => x.iter().all(|(k, v)| y.get(k) == Some(v)),
        (Datum::Set(x), Datum::Set(y)) => x.iter().all(|k| y.contains(k)),
        _ => a.is_empty(),
    }
}

/// `ovsdb_datum_excludes_all(a, b)`: no element of `a` is in `b`.
pub fn excludes_all(a: &Datum, b: &Datum) -> bool {
    match (a, b) {
        (Datum::Map(x), Datum::Map(y)) => x.iter().all(|(k, v)| y.get(k) != Some(v)),
        (Datum::Set(x), Datum::Set(y)) => x.iter().all(|k| !y.contains(k)),
        _ => true,
    }
}
