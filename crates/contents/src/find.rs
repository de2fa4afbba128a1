//! `find TABLE [CONDITION...]`: rows whose columns satisfy every
//! condition, with the semantics of `ovn-nbctl find` / `ovs-vsctl find`
//! (`check_condition` and `evaluate_relop` in OVS's `lib/db-ctl-base.c`,
//! see ovs-vsctl(8) "Database Values" and "find"):
//!
//! * `column[:key]OP value`, the operator being the longest of `=`, `!=`,
//!   `<`, `>`, `<=`, `>=`, `{=}`, `{!=}`, `{<}`, `{>}`, `{<=}`, `{>=}`,
//!   `{in}`, `{not-in}` found right after the column (and key), with a
//!   non-empty value after it. The column name may be abbreviated to a
//!   unique prefix.
//! * Without a key, the value is parsed as a datum of the column's type;
//!   `=`/`{=}` and `!=`/`{!=}` compare for (in)equality, `<`, `>`, `<=`,
//!   `>=` compare in `ovsdb_datum_compare_3way` order (fewer elements
//!   first, then elements in order); `{<=}`/`{in}`: the column's elements
//!   are all in the value; `{>=}`: the value's elements are all in the
//!   column; `{<}`/`{>}` the same, strictly larger; `{not-in}`: none of
//!   the column's elements is in the value.
//! * With `key` (map columns only), the value is a set of the map's value
//!   type, compared with the one-element set holding the value at `key`;
//!   a missing key fails every non-set operator and is the empty set for
//!   the `{...}` operators.
//!
//! As an addition, `_uuid` may be used as a column (a UUID scalar).

use ovsdb::strings::{
    atom_from_string, compare_3way, datum_from_string, excludes_all, includes_all, parse_token,
    StringsError,
};
use ovsdb::{AtomicType, Database, Datum, Json, Object, Row, TableSchema, Type, UNLIMITED};
use std::cmp::Ordering;

/// The relational operators, in the order OVS lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relop {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    SetEq,
    SetNe,
    SetLt,
    SetGt,
    SetLe,
    SetGe,
    SetIn,
    SetNotIn,
}

const OPS: &[(&str, Relop)] = &[
    ("=", Relop::Eq),
    ("!=", Relop::Ne),
    ("<", Relop::Lt),
    (">", Relop::Gt),
    ("<=", Relop::Le),
    (">=", Relop::Ge),
    ("{=}", Relop::SetEq),
    ("{!=}", Relop::SetNe),
    ("{<}", Relop::SetLt),
    ("{>}", Relop::SetGt),
    ("{<=}", Relop::SetLe),
    ("{>=}", Relop::SetGe),
    ("{in}", Relop::SetIn),
    ("{not-in}", Relop::SetNotIn),
];

impl Relop {
    fn is_set(self) -> bool {
        matches!(
            self,
            Relop::SetEq
                | Relop::SetNe
                | Relop::SetLt
                | Relop::SetGt
                | Relop::SetLe
                | Relop::SetGe
                | Relop::SetIn
                | Relop::SetNotIn
        )
    }

    /// `evaluate_relop(a, b)`: `a` is the row's value, `b` the wanted one.
    pub fn eval(self, a: &Datum, b: &Datum) -> bool {
        let c = || compare_3way(a, b);
        match self {
            Relop::Eq | Relop::SetEq => c() == Ordering::Equal,
            Relop::Ne | Relop::SetNe => c() != Ordering::Equal,
            Relop::Lt => c() == Ordering::Less,
            Relop::Gt => c() == Ordering::Greater,
            Relop::Le => c() != Ordering::Greater,
            Relop::Ge => c() != Ordering::Less,
            Relop::SetLt => b.len() > a.len() && includes_all(a, b),
            Relop::SetGt => a.len() > b.len() && includes_all(b, a),
            Relop::SetLe | Relop::SetIn => includes_all(a, b),
            Relop::SetGe => includes_all(b, a),
            Relop::SetNotIn => excludes_all(a, b),
        }
    }
}

/// Why a condition or table is not usable.
#[derive(Debug, Clone, PartialEq)]
pub enum FindError {
    NoTable(String),
    /// Column unknown, or an ambiguous abbreviation.
    Column {
        arg: String,
        message: String,
    },
    MissingOperator(String),
    KeyOnNonMap {
        arg: String,
        column: String,
    },
    Value {
        arg: String,
        error: StringsError,
    },
}

impl std::fmt::Display for FindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FindError::NoTable(t) => write!(f, "unknown table \"{t}\""),
            FindError::Column { arg, message } => write!(f, "{arg}: {message}"),
            FindError::MissingOperator(arg) => write!(
                f,
                "{arg}: argument does not end in \"=\", \"!=\", \"<\", \">\", \"<=\", \">=\", \
                 \"{{=}}\", \"{{!=}}\", \"{{<}}\", \"{{>}}\", \"{{<=}}\", \"{{>=}}\", \"{{in}}\" \
                 or \"{{not-in}}\" followed by a value"
            ),
            FindError::KeyOnNonMap { arg, column } => {
                write!(
                    f,
                    "{arg}: cannot specify key to check for non-map column {column}"
                )
            }
            FindError::Value { arg, error } => write!(f, "{arg}: {error}"),
        }
    }
}

impl std::error::Error for FindError {}

/// A parsed condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// Column index in the table schema (`None`: `_uuid`).
    pub column: Option<usize>,
    pub key: Option<ovsdb::Atom>,
    pub op: Relop,
    pub value: Datum,
}

fn uuid_type() -> Type {
    Type::scalar(AtomicType::Uuid)
}

fn column_of(ts: &TableSchema, arg: &str, name: &str) -> Result<Option<usize>, FindError> {
    if name == "_uuid" {
        return Ok(None);
    }
    if let Some(i) = ts.column_index(name).filter(|_| !name.starts_with('_')) {
        return Ok(Some(i));
    }
    let matches: Vec<usize> = ts
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.is_implicit() && c.name.starts_with(name))
        .map(|(i, _)| i)
        .collect();
    match matches.as_slice() {
        [i] => Ok(Some(*i)),
        [] => Err(FindError::Column {
            arg: arg.into(),
            message: format!(
                "{} does not contain a column whose name matches \"{name}\"",
                ts.name
            ),
        }),
        _ => Err(FindError::Column {
            arg: arg.into(),
            message: format!(
                "{} contains more than one column whose name matches \"{name}\"",
                ts.name
            ),
        }),
    }
}

/// Parses one condition for table `ts`.
pub fn parse_condition(ts: &TableSchema, arg: &str) -> Result<Condition, FindError> {
    let verr = |error| FindError::Value {
        arg: arg.into(),
        error,
    };
    let (name, mut rest) = parse_token(arg).map_err(verr)?;
    if name.is_empty() {
        return Err(FindError::Column {
            arg: arg.into(),
            message: "missing column name".into(),
        });
    }
    let column = column_of(ts, arg, &name)?;
    let col_ty = column.map_or_else(uuid_type, |i| ts.columns[i].ty.clone());
    let mut key_text = None;
    if let Some(r) = rest.strip_prefix(':') {
        let (k, r2) = parse_token(r).map_err(verr)?;
        key_text = Some(k);
        rest = r2;
    }
    let mut best: Option<(&str, Relop)> = None;
    for &(op, relop) in OPS {
        if rest.len() > op.len()
            && rest.starts_with(op)
            && best.is_none_or(|(b, _)| op.len() > b.len())
        {
            best = Some((op, relop));
        }
    }
    let Some((op_text, op)) = best else {
        return Err(FindError::MissingOperator(arg.into()));
    };
    let value_text = &rest[op_text.len()..];
    let (key, value) = match key_text {
        Some(k) => {
            let Some(vt) = col_ty.value.clone() else {
                return Err(FindError::KeyOnNonMap {
                    arg: arg.into(),
                    column: name,
                });
            };
            let key = atom_from_string(&col_ty.key, &k).map_err(verr)?;
            let ty = Type {
                key: vt,
                value: None,
                min: col_ty.min,
                max: UNLIMITED,
            };
            (Some(key), datum_from_string(&ty, value_text).map_err(verr)?)
        }
        None => (None, datum_from_string(&col_ty, value_text).map_err(verr)?),
    };
    Ok(Condition {
        column,
        key,
        op,
        value,
    })
}

impl Condition {
    /// Whether `row` satisfies the condition.
    pub fn matches(&self, row: &Row) -> bool {
        let uuid_datum;
        let have = match self.column {
            Some(i) => &row.columns[i],
            None => {
                uuid_datum = Datum::scalar(row.uuid);
                &uuid_datum
            }
        };
        match &self.key {
            None => self.op.eval(have, &self.value),
            Some(k) => {
                let found = have.as_map().and_then(|m| m.get(k));
                match found {
                    None if !self.op.is_set() => false,
                    None => self.op.eval(&Datum::set([]), &self.value),
                    Some(v) => self.op.eval(&Datum::set([v.clone()]), &self.value),
                }
            }
        }
    }
}

/// The rows of `table` matching all `conditions`, in UUID order.
pub fn find<'d>(
    db: &'d Database,
    table: &str,
    conditions: &[String],
) -> Result<(&'d TableSchema, Vec<&'d Row>), FindError> {
    let ts = db
        .table_schema(table)
        .ok_or_else(|| FindError::NoTable(table.into()))?;
    let conds: Vec<Condition> = conditions
        .iter()
        .map(|c| parse_condition(ts, c))
        .collect::<Result<_, _>>()?;
    let rows = db
        .table(table)
        .map(|t| {
            t.rows
                .values()
                .filter(|r| conds.iter().all(|c| c.matches(r)))
                .map(|r| &**r)
                .collect()
        })
        .unwrap_or_default();
    Ok((ts, rows))
}

/// Headings of the output: `_uuid`, then the user columns by name (the
/// order of the tools' generated IDL).
pub fn headings(ts: &TableSchema) -> Vec<(String, Option<usize>)> {
    let mut cols: Vec<(String, Option<usize>)> = ts
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.is_implicit())
        .map(|(i, c)| (c.name.clone(), Some(i)))
        .collect();
    ovsdb::order::sort(&mut cols);
    cols.insert(0, ("_uuid".into(), None));
    cols
}

/// `--format=json` output: `{"data":[[cell...]...],"headings":[...]}`,
/// cells in the OVSDB JSON notation.
pub fn find_json(ts: &TableSchema, rows: &[&Row]) -> Json {
    let heads = headings(ts);
    let data = rows
        .iter()
        .map(|r| {
            Json::Array(
                heads
                    .iter()
                    .map(|(_, ci)| match ci {
                        Some(i) => r.columns[*i].to_json(),
                        None => Datum::scalar(r.uuid).to_json(),
                    })
                    .collect(),
            )
        })
        .collect();
    let mut o = Object::new();
    o.push_unchecked("data", Json::Array(data));
    o.push_unchecked(
        "headings",
        Json::Array(heads.into_iter().map(|(n, _)| Json::String(n)).collect()),
    );
    Json::Object(o)
}

/// The text output of `ovn-nbctl find` (`list` format): one block per
/// row, `name : value` lines with names padded, blank line between rows.
pub fn find_text(ts: &TableSchema, rows: &[&Row]) -> String {
    let heads = headings(ts);
    let width = heads.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for (n, ci) in &heads {
            let v = match ci {
                Some(c) => ovsdb::strings::datum_to_string(&r.columns[*c], &ts.columns[*c].ty),
                None => r.uuid.to_string(),
            };
            out.push_str(&format!("{n:width$} : {v}\n"));
        }
    }
    out
}
