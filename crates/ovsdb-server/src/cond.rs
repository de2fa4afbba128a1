//! Conditions (`where` clauses): parsing and evaluation, shared by the
//! server model (transact `where`, monitor conditions) and the replica.
//!
//! In `transact` the clauses are ANDed; in monitor conditions they are ORed
//! (an empty monitor condition means "every row").

use crate::meta::TableMeta;
use ovsdb::atom::Atom;
use ovsdb::datum::{Datum, ParseOptions};
use ovsdb::error::{Error, Result};
use ovsdb::json::Json;
use ovsdb::types::{AtomicType, BaseType, Type};
use ovsdb::uuid::Uuid;

/// What a clause looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColRef {
    Uuid,
    Version,
    Col(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Lt,
    Le,
    Eq,
    Ne,
    Ge,
    Gt,
    Includes,
    Excludes,
}

impl Func {
    pub fn parse(s: &str) -> Option<Func> {
        Some(match s {
            "<" => Func::Lt,
            "<=" => Func::Le,
            "==" => Func::Eq,
            "!=" => Func::Ne,
            ">=" => Func::Ge,
            ">" => Func::Gt,
            "includes" => Func::Includes,
            "excludes" => Func::Excludes,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Func::Lt => "<",
            Func::Le => "<=",
            Func::Eq => "==",
            Func::Ne => "!=",
            Func::Ge => ">=",
            Func::Gt => ">",
            Func::Includes => "includes",
            Func::Excludes => "excludes",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Clause {
    Const(bool),
    Cmp {
        col: ColRef,
        column: String,
        func: Func,
        arg: Datum,
    },
}

/// Resolves `["named-uuid", name]` references.
pub type NamedResolver<'a> = &'a mut dyn FnMut(&str) -> Result<Uuid>;

/// A list of clauses; how they combine depends on where it is used.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Condition {
    pub clauses: Vec<Clause>,
}

/// The type of the special columns.
pub fn uuid_type() -> Type {
    Type::scalar(AtomicType::Uuid)
}

fn column_type(t: &TableMeta, col: ColRef) -> Type {
    match col {
        ColRef::Uuid | ColRef::Version => uuid_type(),
        ColRef::Col(i) => t.columns[i].ty.clone(),
    }
}

/// A column named in a clause (`at`), with ovsdb-server's error.
fn clause_column(t: &TableMeta, name: &str, at: &Json) -> Result<ColRef> {
    match name {
        "_uuid" => Ok(ColRef::Uuid),
        "_version" => Ok(ColRef::Version),
        _ => t.known_column(name, at).map(ColRef::Col),
    }
}

/// The columns of a `select`'s or `wait`'s `columns` array `at`, with
/// ovsdb-server's error for a name the table does not have.
pub fn column_list(t: &TableMeta, at: &Json) -> Result<Vec<ColRef>> {
    at.as_array()
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let name = c.as_str().unwrap_or("");
            clause_column(t, name, at).map_err(|_| {
                Error::syntax(format!("{name} is not a valid column name")).with_syntax(at)
            })
        })
        .collect()
}

impl Condition {
    pub fn always() -> Condition {
        Condition {
            clauses: Vec::new(),
        }
    }

    /// Parses a JSON array of clauses against table `t`. `named` resolves
    /// `["named-uuid", …]` inside a transaction.
    pub fn from_json(
        j: &Json,
        t: &TableMeta,
        mut named: Option<NamedResolver<'_>>,
    ) -> Result<Condition> {
        let arr = j
            .as_array()
            .ok_or_else(|| Error::syntax("condition must be an array"))?;
        let mut clauses = Vec::with_capacity(arr.len());
        for c in arr {
            match c {
                Json::Bool(b) => clauses.push(Clause::Const(*b)),
                Json::Array(parts) if parts.len() == 3 => {
                    let column = parts[0]
                        .as_str()
                        .ok_or_else(|| Error::syntax("clause column must be a string"))?;
                    let fname = parts[1]
                        .as_str()
                        .ok_or_else(|| Error::syntax("clause function must be a string"))?;
                    // The column first, then the function, as ovsdb-server.
                    let col = clause_column(t, column, c)?;
                    let func = Func::parse(fname).ok_or_else(|| {
                        Error::new("unknown function", format!("No function named {fname}."))
                    })?;
                    let ty = column_type(t, col);
                    let arg_ty = match func {
                        Func::Lt | Func::Le | Func::Gt | Func::Ge => {
                            let ok = ty.value.is_none()
                                && ty.max == 1
                                && matches!(ty.key.atomic, AtomicType::Integer | AtomicType::Real);
                            if !ok {
                                return Err(Error::syntax(format!(
                                    "Type mismatch: \"{fname}\" operator may not be applied to column {column} of type {}.",
                                    ty.to_english()
                                ))
                                .with_syntax(c));
                            }
                            // The argument must satisfy the column's
                            // constraints, as in ovsdb-server.
                            Type {
                                key: ty.key.clone(),
                                value: None,
                                min: 1,
                                max: 1,
                            }
                        }
                        Func::Eq | Func::Ne => Type {
                            min: 0,
                            ..ty.clone()
                        },
                        Func::Includes | Func::Excludes => ty.relaxed(),
                    };
                    let mut resolve = |n: &str| -> Result<Uuid> {
                        match named.as_mut() {
                            Some(g) => g(n),
                            None => Err(Error::syntax(format!(
                                "named-uuid \"{n}\" not allowed here"
                            ))),
                        }
                    };
                    let arg = Datum::from_json_with(
                        &parts[2],
                        &arg_ty,
                        ParseOptions {
                            relaxed_size: false,
                            named_uuid: Some(&mut resolve),
                        },
                    )?;
                    clauses.push(Clause::Cmp {
                        col,
                        column: column.to_string(),
                        func,
                        arg,
                    });
                }
                _ => {
                    return Err(Error::syntax(
                        "clause must be a 3-element array or a boolean",
                    ))
                }
            }
        }
        Ok(Condition { clauses })
    }

    pub fn to_json(&self) -> Json {
        Json::Array(
            self.clauses
                .iter()
                .map(|c| match c {
                    Clause::Const(b) => Json::Bool(*b),
                    Clause::Cmp {
                        column, func, arg, ..
                    } => Json::Array(vec![
                        Json::from(column.as_str()),
                        Json::from(func.name()),
                        arg.to_json(),
                    ]),
                })
                .collect(),
        )
    }

    /// All clauses true (transact `where`).
    pub fn eval_all(&self, row: &RowView<'_>) -> bool {
        self.clauses.iter().all(|c| eval_clause(c, row))
    }

    /// Any clause true, empty = true (monitor conditions).
    pub fn eval_any(&self, row: &RowView<'_>) -> bool {
        self.clauses.is_empty() || self.clauses.iter().any(|c| eval_clause(c, row))
    }

    /// If a clause pins `_uuid == U`, returns U (lets callers look rows up
    /// directly instead of scanning the table).
    pub fn uuid_eq(&self) -> Option<Uuid> {
        self.clauses.iter().find_map(|c| match c {
            Clause::Cmp {
                col: ColRef::Uuid,
                func: Func::Eq,
                arg,
                ..
            } => arg.as_scalar().and_then(Atom::as_uuid),
            _ => None,
        })
    }

    /// Columns the clauses read.
    pub fn columns(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .clauses
            .iter()
            .filter_map(|c| match c {
                Clause::Cmp {
                    col: ColRef::Col(i),
                    ..
                } => Some(*i),
                _ => None,
            })
            .collect();
        ovsdb::order::sort(&mut v);
        v.dedup();
        v
    }
}

fn first_num(d: &Datum) -> Option<f64> {
    match d.as_set()?.iter().next()? {
        Atom::Integer(i) => Some(*i as f64),
        Atom::Real(r) => Some(*r),
        _ => None,
    }
}

fn first_atom(d: &Datum) -> Option<&Atom> {
    d.as_set()?.iter().next()
}

/// A row as conditions see it.
pub struct RowView<'a> {
    pub uuid: Uuid,
    pub version: Uuid,
    pub cols: &'a [Datum],
}

pub fn eval_clause(c: &Clause, row: &RowView<'_>) -> bool {
    match c {
        Clause::Const(b) => *b,
        Clause::Cmp { col, func, arg, .. } => {
            let tmp;
            let empty = Datum::default();
            let v: &Datum = match col {
                ColRef::Uuid => {
                    tmp = Datum::scalar(Atom::Uuid(row.uuid));
                    &tmp
                }
                ColRef::Version => {
                    tmp = Datum::scalar(Atom::Uuid(row.version));
                    &tmp
                }
                ColRef::Col(i) => row.cols.get(*i).unwrap_or(&empty),
            };
            match func {
                Func::Eq => v == arg,
                Func::Ne => v != arg,
                Func::Includes => v.includes_all_of(arg),
                Func::Excludes => match (v, arg) {
                    (Datum::Set(a), Datum::Set(b)) => b.iter().all(|x| !a.contains(x)),
                    (Datum::Map(a), Datum::Map(b)) => b.iter().all(|(k, x)| a.get(k) != Some(x)),
                    _ => true,
                },
                Func::Lt | Func::Le | Func::Gt | Func::Ge => {
                    // Integers compare exactly; reals numerically.
                    let ord = match (first_atom(v), first_atom(arg)) {
                        (Some(Atom::Integer(a)), Some(Atom::Integer(b))) => a.cmp(b),
                        _ => match (first_num(v), first_num(arg)) {
                            (Some(a), Some(b)) => match a.partial_cmp(&b) {
                                Some(o) => o,
                                None => return false,
                            },
                            _ => return false,
                        },
                    };
                    match func {
                        Func::Lt => ord.is_lt(),
                        Func::Le => ord.is_le(),
                        Func::Gt => ord.is_gt(),
                        _ => ord.is_ge(),
                    }
                }
            }
        }
    }
}

/// Base type helper used by callers that build clauses programmatically.
pub fn scalar_base(t: AtomicType) -> BaseType {
    BaseType::new(t)
}
