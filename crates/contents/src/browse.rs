//! The table browser's view model over one [`Database`]: the tables with
//! their row counts, a selection of a table's rows (everything, a
//! substring over all columns, searched in the table's printed text that a
//! [`TextIndex`] keeps, or `ovn-nbctl find` conditions), the
//! display cells of a page of rows with the UUIDs in them as links to
//! their rows, and who refers to each row.

use crate::find::{headings, parse_condition, Condition};
use ovsdb::strings::datum_to_string;
use ovsdb::{Atom, Database, Row, TableSchema, Uuid};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Bound;

/// A table and its row count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCount {
    pub name: String,
    pub rows: usize,
}

/// The tables by name.
pub fn tables(db: &Database) -> Vec<TableCount> {
    let counts = db
        .schema()
        .tables
        .iter()
        .map(|t| db.table(&t.name).map_or(0, |x| x.len()));
    tables_counted(db.schema(), counts)
}

/// The tables of `schema` with their row counts `counts` (in schema
/// order: a jump's preview knows them before its database): those with
/// rows first, then the empty ones, each part by name (a Northbound has
/// more empty tables than not, and they came first by name).
pub fn tables_counted(
    schema: &ovsdb::DatabaseSchema,
    counts: impl IntoIterator<Item = usize>,
) -> Vec<TableCount> {
    let mut v: Vec<TableCount> = schema
        .tables
        .iter()
        .zip(counts)
        .map(|(t, rows)| TableCount {
            name: t.name.clone(),
            rows,
        })
        .collect();
    ovsdb::order::sort_by(&mut v, |a, b| {
        (a.rows == 0, &a.name).cmp(&(b.rows == 0, &b.name))
    });
    v
}

/// How a query was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Empty query: every row.
    All,
    /// A case-insensitive substring of the UUID or of any column's value
    /// (as the tools print it).
    Text,
    /// Every term is a `find` condition.
    Conditions,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::All => "all",
            Mode::Text => "text",
            Mode::Conditions => "conditions",
        }
    }
}

/// The rows of a table that a query selects, in UUID order (the tools'
/// order).
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub table: String,
    pub mode: Mode,
    pub uuids: Vec<Uuid>,
    /// Why a query that looks like a condition was read as text.
    pub note: Option<String>,
}

impl Selection {
    /// Position of `uuid` in the selection.
    pub fn position(&self, uuid: &Uuid) -> Option<usize> {
        self.uuids.binary_search(uuid).ok()
    }
}

/// Splits a query into terms at blanks outside double quotes, `[]` and
/// `{}` (so `a={x, y}` and `b="two words"` stay whole; `{>=}` is not a
/// nesting).
pub fn terms(q: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = false;
    let mut depth = 0i32;
    let mut chars = q.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if quote => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                continue;
            }
            '"' => quote = !quote,
            '[' | '{' if !quote => {
                // An operator such as `{>=}` or `{in}` is not a brace.
                let rest: String = chars.clone().take(8).collect();
                if c == '{' && is_set_op(&rest) {
                    let close = rest.find('}').unwrap_or(0);
                    cur.push(c);
                    for _ in 0..=close {
                        if let Some(n) = chars.next() {
                            cur.push(n);
                        }
                    }
                    continue;
                }
                depth += 1;
            }
            ']' | '}' if !quote => depth = (depth - 1).max(0),
            c if c.is_whitespace() && !quote && depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn is_set_op(after_brace: &str) -> bool {
    ["=}", "!=}", "<}", ">}", "<=}", ">=}", "in}", "not-in}"]
        .iter()
        .any(|op| after_brace.starts_with(op))
}

fn looks_like_condition(t: &str) -> bool {
    t.contains(['=', '<', '>']) || t.contains("{in}") || t.contains("{not-in}")
}

/// What ends each field of a row's searchable text. The printer never
/// writes it (strings with control characters are quoted, as JSON escapes
/// them), so a match of a needle without it lies inside one field.
const SEP: u8 = 0;

/// The searchable text of one table: per row, in UUID order, the row's
/// UUID and each user column's value as the tools print them, ASCII lower
/// case, each field ended by a separator that no printed value holds. A
/// substring query is then one scan over one buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableText {
    text: String,
    /// End (exclusive) of each row's text in `text`.
    ends: Vec<usize>,
    uuids: Vec<Uuid>,
    /// Whether every row is in (a text under way is only in a
    /// [`TextIndex`], which finishes it before a search).
    complete: bool,
}

impl TableText {
    /// Prints every row of `table` once.
    pub fn build(db: &Database, table: &str) -> Option<TableText> {
        let mut t = TableText::default();
        t.extend(db, table, usize::MAX)?;
        Some(t)
    }

    /// Prints up to `max_rows` (at least one) more rows, after the last
    /// one in, and says whether every row is in. None: no such table.
    fn extend(&mut self, db: &Database, table: &str, max_rows: usize) -> Option<bool> {
        let ts = db.table_schema(table)?;
        let Some(rows) = db.table(table).map(|t| &t.rows) else {
            self.complete = true;
            return Some(true);
        };
        let cols: Vec<(usize, &ovsdb::Type)> = ts
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.is_implicit())
            .map(|(i, c)| (i, &c.ty))
            .collect();
        let rest = match self.uuids.last() {
            Some(last) => rows.range((Bound::Excluded(*last), Bound::Unbounded)),
            None => rows.range::<_, ovsdb::Uuid>(..),
        };
        let mut rest = rest.peekable();
        for (_, row) in rest.by_ref().take(max_rows.max(1)) {
            let start = self.text.len();
            let _ = write!(self.text, "{}", row.uuid);
            self.text.push(SEP as char);
            for &(i, ty) in &cols {
                self.text.push_str(&datum_to_string(&row.columns[i], ty));
                self.text.push(SEP as char);
            }
            self.text[start..].make_ascii_lowercase();
            self.ends.push(self.text.len());
            self.uuids.push(row.uuid);
        }
        self.complete = rest.peek().is_none();
        if self.complete {
            self.text.shrink_to_fit();
            self.ends.shrink_to_fit();
            self.uuids.shrink_to_fit();
        }
        Some(self.complete)
    }

    /// Rows in the table.
    pub fn rows(&self) -> usize {
        self.uuids.len()
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.text.capacity()
            + self.ends.capacity() * std::mem::size_of::<usize>()
            + self.uuids.capacity() * std::mem::size_of::<Uuid>()
    }

    /// The rows (in UUID order) whose UUID or some user column's text
    /// contains `needle_lower` (ASCII lower case; empty: every row).
    pub fn matching(&self, needle_lower: &str) -> Vec<Uuid> {
        let needle = needle_lower.as_bytes();
        if needle.is_empty() {
            return self.uuids.clone();
        }
        if needle.contains(&SEP) {
            return Vec::new();
        }
        let hay = self.text.as_bytes();
        let finder = memchr::memmem::Finder::new(needle);
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(off) = finder.find(&hay[pos..]) {
            // The match ends before its row's last separator: the row is
            // the first whose end lies past the match.
            let row = self.ends.partition_point(|&e| e <= pos + off);
            out.push(self.uuids[row]);
            pos = self.ends[row];
        }
        out
    }
}

/// The [`TableText`]s of one database, each built on the first substring
/// query of its table (or before it, a slice at a time, by
/// [`TextIndex::prepare`]) and kept until the database is dropped (a caller
/// keeps it beside the database it was built from, and a new database
/// takes a new index).
#[derive(Debug, Clone, Default)]
pub struct TextIndex {
    tables: HashMap<String, TableText>,
}

impl TextIndex {
    pub fn new() -> TextIndex {
        TextIndex::default()
    }

    /// The text of `table` in `db`, built (or finished) now if it is
    /// not yet. None: no such table.
    pub fn table(&mut self, db: &Database, table: &str) -> Option<&TableText> {
        if !self.has(table) {
            self.prepare(db, table, usize::MAX)?;
        }
        self.tables.get(table)
    }

    /// Prints up to `rows` more rows of `table`'s text (so a caller can
    /// build it a slice at a time between other work) and says whether it
    /// is complete. None: no such table.
    pub fn prepare(&mut self, db: &Database, table: &str, rows: usize) -> Option<bool> {
        if self.has(table) {
            return Some(true);
        }
        db.table_schema(table)?;
        self.tables
            .entry(table.to_string())
            .or_default()
            .extend(db, table, rows)
    }

    /// Whether `table`'s text is complete.
    pub fn has(&self, table: &str) -> bool {
        self.tables.get(table).is_some_and(|t| t.complete)
    }

    /// Bytes held by every table's text.
    pub fn bytes(&self) -> usize {
        self.tables.values().map(TableText::bytes).sum()
    }
}

/// Selects the rows of `table` for `query`: empty → all rows; every term
/// a valid `find` condition → the rows matching all of them; otherwise the
/// whole query as a case-insensitive substring of the row's UUID or of
/// some user column's printed value, searched in `texts` (the database's
/// [`TextIndex`], which keeps the table's text for the next query; `None`:
/// the table is printed for this query only). Err only for a table the
/// database lacks.
pub fn select(
    db: &Database,
    table: &str,
    query: &str,
    texts: Option<&mut TextIndex>,
) -> Result<Selection, String> {
    let ts = db
        .table_schema(table)
        .ok_or_else(|| format!("no table {table} in this database"))?;
    let rows = db.table(table).map(|t| &t.rows);
    let all = || rows.into_iter().flat_map(|r| r.values());
    let q = query.trim();
    if q.is_empty() {
        return Ok(Selection {
            table: table.into(),
            mode: Mode::All,
            uuids: all().map(|r| r.uuid).collect(),
            note: None,
        });
    }
    let ts_terms = terms(q);
    let parsed: Vec<Result<Condition, String>> = ts_terms
        .iter()
        .map(|t| parse_condition(ts, t).map_err(|e| e.to_string()))
        .collect();
    if parsed.iter().all(Result::is_ok) {
        let conds: Vec<Condition> = parsed.into_iter().flatten().collect();
        return Ok(Selection {
            table: table.into(),
            mode: Mode::Conditions,
            uuids: all()
                .filter(|r| conds.iter().all(|c| c.matches(r)))
                .map(|r| r.uuid)
                .collect(),
            note: None,
        });
    }
    let note = ts_terms
        .iter()
        .zip(&parsed)
        .find(|(t, p)| p.is_err() && looks_like_condition(t))
        .and_then(|(_, p)| p.clone().err())
        .map(|e| format!("searched as text: {e}"));
    let needle = q.to_ascii_lowercase();
    let uuids = match texts {
        Some(ix) => ix.table(db, table).map(|t| t.matching(&needle)),
        None => TableText::build(db, table).map(|t| t.matching(&needle)),
    }
    .unwrap_or_default();
    Ok(Selection {
        table: table.into(),
        mode: Mode::Text,
        uuids,
        note,
    })
}

/// A piece of a cell's text, a link to a row when it is a reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub text: String,
    /// (table, row) the text names.
    pub link: Option<(String, Uuid)>,
}

/// The column names of the grid (`_uuid`, then the user columns by
/// name, as `find` prints them) and their schema positions.
pub fn columns(ts: &TableSchema) -> Vec<(String, Option<usize>)> {
    headings(ts)
}

/// Cells longer than this are cut in the grid (the row panel shows them
/// whole).
pub const GRID_CELL_CHARS: usize = 160;

/// One cell: the value's text split at the references it holds, cut
/// after `limit` characters (with `…`).
pub fn cell(ts: &TableSchema, row: &Row, column: Option<usize>, limit: usize) -> Vec<Segment> {
    let mut targets: Vec<(Uuid, &str)> = Vec::new();
    let text = match column {
        None => row.uuid.to_string(),
        Some(ci) => datum_to_string(&row.columns[ci], &ts.columns[ci].ty),
    };
    if let Some(ci) = column {
        refs_of_cell(ts, row, ci, &mut targets);
    }
    let mut out = Vec::new();
    let mut rest = text.as_str();
    let mut used = 0usize;
    let mut push = |s: &str, link: Option<(String, Uuid)>, out: &mut Vec<Segment>| -> bool {
        let n = s.chars().count();
        if used + n > limit {
            let keep: String = s.chars().take(limit.saturating_sub(used)).collect();
            out.push(Segment {
                text: format!("{keep}…"),
                link: None,
            });
            return false;
        }
        used += n;
        out.push(Segment {
            text: s.to_string(),
            link,
        });
        true
    };
    // UUIDs print as 36 characters; find each reference in order.
    while !rest.is_empty() {
        let next = targets
            .iter()
            .filter_map(|(u, t)| rest.find(&u.to_string()).map(|p| (p, *u, *t)))
            .min_by_key(|(p, _, _)| *p);
        let Some((p, u, t)) = next else {
            push(rest, None, &mut out);
            break;
        };
        if p > 0 && !push(&rest[..p], None, &mut out) {
            break;
        }
        if !push(&rest[p..p + 36], Some((t.to_string(), u)), &mut out) {
            break;
        }
        rest = &rest[p + 36..];
    }
    if out.is_empty() {
        out.push(Segment {
            text: String::new(),
            link: None,
        });
    }
    out
}

fn refs_of_cell<'t>(ts: &'t TableSchema, row: &Row, ci: usize, out: &mut Vec<(Uuid, &'t str)>) {
    let c = &ts.columns[ci];
    if let Some(t) = &c.ty.key.ref_table {
        out.extend(
            row.columns[ci]
                .keys()
                .filter_map(|a| uuid_of(a).map(|u| (u, t.as_str()))),
        );
    }
    if let Some(t) = c.ty.value.as_ref().and_then(|v| v.ref_table.as_ref()) {
        out.extend(
            row.columns[ci]
                .values()
                .filter_map(|a| uuid_of(a).map(|u| (u, t.as_str()))),
        );
    }
}

fn uuid_of(a: &Atom) -> Option<Uuid> {
    match a {
        Atom::Uuid(u) => Some(*u),
        _ => None,
    }
}

/// Finds a row by UUID in any table.
pub fn find_row<'d>(db: &'d Database, uuid: &Uuid) -> Option<(&'d TableSchema, &'d Row)> {
    db.schema()
        .tables
        .iter()
        .find_map(|ts| db.row(&ts.name, uuid).map(|r| (ts, r)))
}

/// A reference to a row: the referring table, column and row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Referrer {
    pub table: String,
    pub column: String,
    pub row: Uuid,
}

/// Every row's referrers, built once per database (one pass over the
/// reference columns).
#[derive(Debug, Default, Clone)]
pub struct Referrers {
    /// target → (table position, column position, referring row).
    by_target: HashMap<Uuid, Vec<(u32, u32, Uuid)>>,
    names: Vec<(String, Vec<String>)>,
}

impl Referrers {
    pub fn build(db: &Database) -> Referrers {
        let mut r = Referrers::default();
        for (ti, ts) in db.schema().tables.iter().enumerate() {
            r.names.push((
                ts.name.clone(),
                ts.columns.iter().map(|c| c.name.clone()).collect(),
            ));
            let refcols: Vec<(usize, bool, bool)> = ts
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    (
                        i,
                        c.ty.key.ref_table.is_some(),
                        c.ty.value.as_ref().is_some_and(|v| v.ref_table.is_some()),
                    )
                })
                .filter(|(_, k, v)| *k || *v)
                .collect();
            if refcols.is_empty() {
                continue;
            }
            let Some(t) = db.table(&ts.name) else {
                continue;
            };
            for row in t.rows.values() {
                for &(ci, k, v) in &refcols {
                    let d = &row.columns[ci];
                    let keys = k.then(|| d.keys()).into_iter().flatten();
                    let vals = v.then(|| d.values()).into_iter().flatten();
                    for a in keys.chain(vals) {
                        if let Some(u) = uuid_of(a) {
                            let e = r.by_target.entry(u).or_default();
                            let item = (ti as u32, ci as u32, row.uuid);
                            if e.last() != Some(&item) {
                                e.push(item);
                            }
                        }
                    }
                }
            }
        }
        r
    }

    /// Who refers to `uuid` (table, column, row), in table then row order.
    pub fn of(&self, uuid: &Uuid) -> Vec<Referrer> {
        let mut v: Vec<Referrer> = self
            .by_target
            .get(uuid)
            .into_iter()
            .flatten()
            .map(|&(t, c, row)| Referrer {
                table: self.names[t as usize].0.clone(),
                column: self.names[t as usize].1[c as usize].clone(),
                row,
            })
            .collect();
        ovsdb::order::sort_by(&mut v, |a, b| {
            (&a.table, &a.column, a.row).cmp(&(&b.table, &b.column, b.row))
        });
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nb() -> Database {
        sample("ls-add-follower/s1.db")
    }

    fn sample(rel: &str) -> Database {
        let p = format!("{}/../../static/samples/{rel}", env!("CARGO_MANIFEST_DIR"));
        crate::database_at(&std::fs::read(p).unwrap(), ovsdb_log::Upto::Committed)
            .unwrap()
            .0
    }

    #[test]
    fn tables_list_every_schema_table_with_its_rows() {
        let db = nb();
        let t = tables(&db);
        assert_eq!(t.len(), db.schema().tables.len());
        // Tables with rows first, then the empty ones, each part by name.
        let key = |x: &TableCount| (x.rows == 0, x.name.clone());
        assert!(t.windows(2).all(|w| key(&w[0]) < key(&w[1])));
        assert!(t.iter().any(|x| x.rows == 0) && t[0].rows > 0);
        let total: usize = t.iter().map(|x| x.rows).sum();
        assert_eq!(total, db.row_count());
    }

    #[test]
    fn terms_keep_quotes_sets_and_set_operators_whole() {
        assert_eq!(
            terms(r#"name="a b"  addresses{>=}"x y" ids={1, 2} k:v=[a, b]"#),
            vec![
                r#"name="a b""#,
                r#"addresses{>=}"x y""#,
                "ids={1, 2}",
                "k:v=[a, b]"
            ]
        );
        assert_eq!(terms("  "), Vec::<String>::new());
    }

    #[test]
    fn select_reads_conditions_like_find_and_the_rest_as_text() {
        let db = nb();
        let table = "Logical_Switch";
        let all = select(&db, table, "", None).unwrap();
        assert_eq!(all.mode, Mode::All);
        assert_eq!(all.uuids.len(), db.table(table).unwrap().len());
        assert!(all.uuids.windows(2).all(|w| w[0] < w[1]));
        let some = all.uuids.first().copied().expect("a switch");
        let row = db.row(table, &some).unwrap();
        let ts = db.table_schema(table).unwrap();
        let name = datum_to_string(
            row.get(ts, "name").unwrap(),
            &ts.columns[ts.column_index("name").unwrap()].ty,
        );
        // A condition: the same rows as `find`.
        let cond = format!("name={name}");
        let s = select(&db, table, &cond, None).unwrap();
        assert_eq!(s.mode, Mode::Conditions);
        let (_, want) = crate::find::find(&db, table, &[cond]).unwrap();
        assert_eq!(s.uuids, want.iter().map(|r| r.uuid).collect::<Vec<_>>());
        assert!(s.position(&some).is_some());
        // Text: a piece of the UUID, case folded.
        let piece = some.to_string()[..8].to_ascii_uppercase();
        let mut ix = TextIndex::new();
        let t = select(&db, table, &piece, Some(&mut ix)).unwrap();
        assert!(ix.has(table));
        assert_eq!(select(&db, table, &piece, None).unwrap(), t);
        assert_eq!(t.mode, Mode::Text);
        assert!(t.uuids.contains(&some));
        assert!(t.note.is_none());
        // A condition on a column that does not exist is searched as text,
        // and says why.
        let bad = select(&db, table, "nosuchcolumn=1", None).unwrap();
        assert_eq!(bad.mode, Mode::Text);
        assert!(bad.note.is_some());
        assert!(select(&db, "No_Such_Table", "", None).is_err());
    }

    #[test]
    fn cells_link_references_and_referrers_invert_them() {
        // The scenario deletes what it made: look at every index.
        let p = format!(
            "{}/../../static/samples/acl-portgroup-diff/s2.db",
            env!("CARGO_MANIFEST_DIR")
        );
        let bytes = std::fs::read(p).unwrap();
        let r = crate::stream::range(&crate::Log::load(&bytes));
        let mut links = 0;
        for i in r.first..=r.last {
            let db = crate::database_at(&bytes, ovsdb_log::Upto::Index(i))
                .unwrap()
                .0;
            links += check_links(&db);
        }
        assert!(links > 0, "the sample has references");
    }

    fn check_links(db: &Database) -> usize {
        let refs = Referrers::build(db);
        let mut links = 0;
        for ts in &db.schema().tables {
            for row in db.table(&ts.name).unwrap().rows.values() {
                for (_, ci) in columns(ts) {
                    let segs = cell(ts, row, ci, usize::MAX);
                    let text: String = segs.iter().map(|s| s.text.as_str()).collect();
                    match ci {
                        Some(c) => {
                            assert_eq!(text, datum_to_string(&row.columns[c], &ts.columns[c].ty))
                        }
                        None => assert_eq!(text, row.uuid.to_string()),
                    }
                    for s in &segs {
                        if let Some((t, u)) = &s.link {
                            links += 1;
                            assert_eq!(s.text, u.to_string());
                            let col = &ts.columns[ci.unwrap()].name;
                            // The target lists this row among its referrers.
                            assert!(refs.of(u).iter().any(|r| r.table == ts.name
                                && &r.column == col
                                && r.row == row.uuid));
                            if let Some((found, _)) = find_row(db, u) {
                                assert_eq!(&found.name, t);
                            }
                        }
                    }
                }
            }
        }
        links
    }

    #[test]
    fn long_cells_are_cut() {
        let db = nb();
        let ts = db.table_schema("Logical_Switch").unwrap();
        let row = db
            .table("Logical_Switch")
            .unwrap()
            .rows
            .values()
            .next()
            .unwrap();
        let segs = cell(ts, row, None, 10);
        let text: String = segs.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(text.chars().count(), 11);
        assert!(text.ends_with('…'));
    }
}
