//! show, find, history, diff, sizes (owned by the contents area): argument
//! parsing, file reading and printing around the `contents` crate.

use contents::{database_reached, Log, Upto};
use ovsdb::Json;

/// `show FILE [--at INDEX] [--json]`
#[derive(clap::Args, Debug)]
#[command(
    about = "Overview of the database, like ovn-nbctl / ovn-sbctl / ovs-vsctl show",
    long_about = "Overview of the database at INDEX (default: the last committed entry; \
standalone files: after all txn records, or after the first INDEX): OVN_Northbound \
like `ovn-nbctl show`, OVN_Southbound like `ovn-sbctl show`, Open_vSwitch like \
`ovs-vsctl show`, other databases a table summary.

--json prints the database itself instead, with what the file is: {\"path\", \"format\" \
(clustered|standalone), \"database\", \"schema_version\", \"at\" (the --at asked, or null), \
\"index\" (the index shown: a log index, or standalone the txn records applied), \"tables\": \
{TABLE: {ROW-UUID: {COLUMN: value}}} (every table; values in OVSDB JSON notation, as \
`ovsdb-tool query` returns rows and `dump --json` prints them), \"error\": null or \
{\"record\", \"offset\", \"reason\"} (the damage the reading stopped at; the tables are \
those before it)}. A file that is not a database gives \"tables\": null and its error.",
    after_help = "Examples:\n  ovsdb-scope show static/samples/standalone/nb.db\n  ovsdb-scope show --json --at 70 static/samples/compacted/s1.db\n\nExit codes: 0 ok, 1 the file is damaged (the output uses the records before the damage), 2 bad input or usage."
)]
pub struct ShowArgs {
    /// A database file (clustered or standalone)
    file: String,
    /// Log index to look at (default: the last committed entry)
    #[arg(long, value_name = "INDEX")]
    at: Option<u64>,
    /// Print the database and the file's facts as JSON (shape above)
    #[arg(long)]
    json: bool,
}

/// `find FILE TABLE [CONDITION...] [--at INDEX] [--json]`
#[derive(clap::Args, Debug)]
#[command(
    about = "Rows of a table that satisfy conditions, like ovn-nbctl find",
    long_about = "Rows of TABLE satisfying every CONDITION, as `ovn-nbctl find` does: \
column[:key]OP value with OP one of = != < > <= >= {=} {!=} {<} {>} {<=} {>=} {in} \
{not-in}; values in the ovs-vsctl syntax ({a=1, b=2}, [x, y], \"quoted\"). --json prints \
{\"data\":[[...]],\"headings\":[...]} like --format=json.",
    after_help = "Example:\n  ovsdb-scope find nb.db Logical_Switch_Port 'addresses{>=}\"0a:00:00:00:01:06 192.0.2.6\"'\n\nExit codes: 0 ok, 1 the file is damaged (the output uses the records before the damage), 2 bad input or usage."
)]
pub struct FindArgs {
    /// A database file
    file: String,
    /// Table name
    table: String,
    /// column[:key]OP value
    conditions: Vec<String>,
    /// Log index to look at (default: the last committed entry)
    #[arg(long, value_name = "INDEX")]
    at: Option<u64>,
    /// Print like `ovn-nbctl --format=json`
    #[arg(long)]
    json: bool,
}

/// `history FILE UUID [--from I] [--to J] [--json]`
#[derive(clap::Args, Debug)]
#[command(
    about = "Every entry that inserted, modified or deleted a row",
    long_about = "Every entry whose record inserts, modifies or deletes row UUID (the \
snapshot too): record, offset, index, term, date, comment, and the column changes \
(old -> new; `stored` is the value as the record holds it). UUID may be the first 4 or \
more hex digits of one, as with ovn-nbctl, when only one row's UUID starts with them.

--from I and --to J keep the entries that changed the row between the database at index \
I and at index J (standalone: after I and after J txn records): those after I, up to J \
included, whose net change is what `diff --from I --to J` shows of the row. Either may \
be left out; an index outside the file is taken as its nearest end, with a note.",
    after_help = "Examples:\n  ovsdb-scope history static/samples/sb-scale/s1.db 01c61942-44cd-4e15-b19d-e23123b6b735\n  ovsdb-scope history --from 14 --to 38 static/samples/sb-scale/s1.db ffe37a9c\n\nExit codes: 0 ok, 1 the file is damaged (the output uses the records before the damage), 2 bad input or usage."
)]
pub struct HistoryArgs {
    /// A database file
    file: String,
    /// The row's UUID, or its first 4 or more hex digits
    uuid: String,
    /// Only entries after the database at index I
    #[arg(long, value_name = "I")]
    from: Option<u64>,
    /// Only entries up to the database at index J (included)
    #[arg(long, value_name = "J")]
    to: Option<u64>,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

/// `diff FILE --from I --to J [--json]`
#[derive(clap::Args, Debug)]
#[command(
    about = "Rows added, removed and changed between two indexes",
    long_about = "Rows added, removed and changed per table between the database at index \
I and at index J (standalone: after I and after J txn records), with the changed \
columns (old -> new).",
    after_help = "Example:\n  ovsdb-scope diff static/samples/ls-add-follower/s1.db --from 5 --to 10\n\nExit codes: 0 ok, 1 the file is damaged (the output uses the records before the damage), 2 bad input or usage."
)]
pub struct DiffArgs {
    /// A database file
    file: String,
    /// The older index
    #[arg(long, value_name = "I")]
    from: u64,
    /// The newer index
    #[arg(long, value_name = "J")]
    to: u64,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

/// What `sizes --by` breaks the bytes down by.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    Table,
    Column,
    Client,
    /// Bytes by table accumulated over the log
    Growth,
}

impl By {
    fn name(self) -> &'static str {
        match self {
            By::Table => "table",
            By::Column => "column",
            By::Client => "client",
            By::Growth => "growth",
        }
    }
}

/// `sizes FILE... [--by table|column|client|growth] [--at INDEX] [--json]`
#[derive(clap::Args, Debug)]
#[command(
    about = "What made the file big: bytes by table, column and client",
    long_about = "Bytes of the entry records by table, by column and by client (the \
`_comment` up to its first ':'), as stored, with full values and with diffs; the 20 \
largest entries; and the compaction what-if (a snapshot at INDEX, default the last, \
against the bytes after the header/schema). Attribution: each table member \
`\"T\":{...}` (with its leading comma) goes to table T, each `\"col\":value` in it to \
T.col, the rest of the member to T.(rows); the header line, Raft envelope, _date, \
_comment and _is_diff go to (record). So --by table and --by column sum exactly to \
`inspect --json`'s entry_bytes.stored (and full/diff to its full/diff). The what-if's \
snapshot is broken down by table and column too (commas between members go to (rows) \
and (record): the server writes a snapshot in its own order), and --by growth gives the \
bytes by table accumulated over the log at about 200 points.",
    after_help = "Example:\n  ovsdb-scope sizes --by table static/samples/sb-scale/s1.db\n\nExit codes: 0 ok, 1 the file is damaged (the output uses the records before the damage), 2 bad input or usage."
)]
pub struct SizesArgs {
    /// Database files
    #[arg(required = true)]
    files: Vec<String>,
    /// Show only this breakdown
    #[arg(long, value_enum)]
    by: Option<By>,
    /// Index of the compaction what-if's snapshot (default: the last)
    #[arg(long, value_name = "INDEX")]
    at: Option<u64>,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

fn read(path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{path}: {e}"))
}

/// The command's exit code: 0, 1 when the file is damaged (the output used
/// the records before the damage), 2 for input that is not a database.
fn run(f: impl FnOnce() -> Result<u8, String>) -> u8 {
    crate::exit_code(f())
}

fn upto(at: Option<u64>) -> Upto {
    at.map_or(Upto::Committed, Upto::Index)
}

/// Says on stderr where the file is damaged; 1 when it is (the exit code).
fn warn(path: &str, e: &Option<ovsdb_log::LogError>) -> u8 {
    match e {
        Some(e) => {
            errln!("{path}: {e} (using the records before it)");
            1
        }
        None => 0,
    }
}

/// Says on stderr when `flag`'s index `asked` lies outside the file, whose
/// replay landed on `reached` instead (the nearest end: the first index a
/// compacted file holds, the last transaction, the last one before the
/// `damaged` part). `later` tells that the file holds a transaction after
/// `reached`: then `asked` is inside the log, on entries that change no
/// rows (the leader's no-op, a membership change), and the note says so.
pub(crate) fn note_outside(
    path: &str,
    flag: &str,
    asked: u64,
    reached: u64,
    later: bool,
    verb: &str,
    damaged: bool,
) {
    if asked > reached && later {
        let entries = if asked == reached + 1 {
            format!("entry {asked} holds no transaction (a no-op or membership entry)")
        } else {
            let first = reached + 1;
            format!("entries {first} to {asked} hold no transaction (no-op or membership entries)")
        };
        eprintln!("note: {path}: {flag} {asked}: {entries}; {verb} the database as of {reached}");
    } else if asked > reached {
        let before = if damaged { " before the damage" } else { "" };
        eprintln!(
            "note: {path}: {flag} {asked} is past the last transaction{before} ({reached}); {verb} {reached}"
        );
    } else if asked < reached {
        eprintln!(
            "note: {path}: {flag} {asked} is before the file's first index ({reached}); {verb} {reached}"
        );
    }
}

/// `flag`'s index `asked`, brought within the indexes the file holds
/// (its nearest end when outside, with [`note_outside`]'s note).
fn within_file(path: &str, log: &Log<'_>, flag: &str, asked: u64, verb: &str) -> u64 {
    let r = contents::stream::range(log);
    let at = asked.clamp(r.first, r.last.max(r.first));
    note_outside(path, flag, asked, at, false, verb, log.error.is_some());
    at
}

/// [`note_outside`] for a replay of the file `bytes` that landed on
/// `reached` where `asked` was asked for. Only an index past a clean
/// file's end reads the file again, for a transaction after `reached`
/// (then `asked` sits on entries that change no rows).
fn note_reached(
    path: &str,
    bytes: &[u8],
    flag: &str,
    asked: u64,
    (reached, damaged): (u64, bool),
    verb: &str,
) {
    let later = asked > reached && !damaged && {
        let log = Log::load(bytes);
        log.format == Some(ovsdb_log::Format::Clustered)
            && log.error.is_none()
            && contents::stream::range(&log).last > reached
    };
    note_outside(path, flag, asked, reached, later, verb, damaged);
}

/// The database at `at` (None: the last committed entry), the damage
/// met, and the index it is at; a note on stderr when `at` is outside
/// the file.
fn database(
    path: &str,
    bytes: &[u8],
    flag: &str,
    at: Option<u64>,
    verb: &str,
) -> Result<(ovsdb::Database, Option<ovsdb_log::LogError>, u64), String> {
    let r = database_reached(bytes, upto(at)).map_err(|e| format!("{path}: {e}"))?;
    let db = match (r.db, &r.error) {
        (Some(db), _) => db,
        (None, Some(e)) => return Err(format!("{path}: {e}")),
        (None, None) => return Err(format!("{path}: no schema in this file")),
    };
    if let Some(asked) = at {
        note_reached(path, bytes, flag, asked, (r.index, r.error.is_some()), verb);
    }
    Ok((db, r.error, r.index))
}

/// A loaded log, or the error when not even its first record was read
/// (not a database at all: exit code 2).
fn load<'a>(path: &str, bytes: &'a [u8]) -> Result<(Log<'a>, u8), String> {
    let log = Log::load(bytes);
    match &log.error {
        Some(e) if log.format.is_none() => Err(format!("{path}: {e}")),
        e => {
            let code = warn(path, e);
            Ok((log, code))
        }
    }
}

/// `show --json`: the database at the index asked for with what the file
/// is, and the damage met; exit codes as the text's (1 damaged, 2 not a
/// database, with the JSON still printed).
fn show_json(path: &str, bytes: &[u8], at: Option<u64>) -> Result<u8, String> {
    let r = database_reached(bytes, upto(at)).map_err(|e| format!("{path}: {e}"))?;
    if let (Some(asked), Some(_)) = (at, &r.db) {
        let landed = (r.index, r.error.is_some());
        note_reached(path, bytes, "--at", asked, landed, "showing");
    }
    let s = |v: &str| Json::String(v.to_string());
    let n = |v: u64| Json::Integer(v as i64);
    let mut o = ovsdb::Object::new();
    o.push_unchecked("path", s(path));
    o.push_unchecked(
        "format",
        r.format.map_or(Json::Null, |f| {
            s(match f {
                ovsdb_log::Format::Clustered => "clustered",
                ovsdb_log::Format::Standalone => "standalone",
            })
        }),
    );
    let schema = r.db.as_ref().map(|db| db.schema());
    o.push_unchecked("database", schema.map_or(Json::Null, |sc| s(&sc.name)));
    o.push_unchecked(
        "schema_version",
        schema.map_or(Json::Null, |sc| s(&sc.version)),
    );
    o.push_unchecked("at", at.map_or(Json::Null, n));
    o.push_unchecked("index", r.db.as_ref().map_or(Json::Null, |_| n(r.index)));
    o.push_unchecked(
        "tables",
        r.db.as_ref().map_or(Json::Null, |db| db.dump_json(true)),
    );
    let error = match (&r.error, &r.db) {
        (Some(e), _) => {
            let mut e_o = ovsdb::Object::new();
            e_o.push_unchecked("record", n(e.record as u64));
            e_o.push_unchecked("offset", n(e.offset));
            e_o.push_unchecked("reason", s(&e.kind.to_string()));
            Json::Object(e_o)
        }
        (None, None) => {
            let mut e_o = ovsdb::Object::new();
            e_o.push_unchecked("record", Json::Null);
            e_o.push_unchecked("offset", Json::Null);
            e_o.push_unchecked("reason", s("no schema in this file"));
            Json::Object(e_o)
        }
        (None, Some(_)) => Json::Null,
    };
    o.push_unchecked("error", error);
    out!("{}\n", Json::Object(o).to_string_compact());
    Ok(match (&r.db, &r.error) {
        (None, e) => {
            let why = e
                .as_ref()
                .map_or("no schema in this file".to_string(), |e| e.to_string());
            errln!("{path}: {why}");
            2
        }
        (Some(_), e) => warn(path, e),
    })
}

pub fn show(a: ShowArgs) -> u8 {
    run(|| {
        let path = &a.file;
        let bytes = read(path)?;
        if a.json {
            return show_json(path, &bytes, a.at);
        }
        let (db, err, _) = database(path, &bytes, "--at", a.at, "showing")?;
        let code = warn(path, &err);
        out!("{}", contents::show::show(&db));
        Ok(code)
    })
}

pub fn find(a: FindArgs) -> u8 {
    run(|| {
        let (path, table, conds) = (&a.file, &a.table, &a.conditions);
        let bytes = read(path)?;
        let (db, err, _) = database(path, &bytes, "--at", a.at, "searching")?;
        let code = warn(path, &err);
        let (ts, rows) = contents::find::find(&db, table, conds).map_err(|e| e.to_string())?;
        if a.json {
            out!(
                "{}\n",
                contents::find::find_json(ts, &rows).to_string_compact()
            );
        } else {
            out!("{}", contents::find::find_text(ts, &rows));
        }
        Ok(code)
    })
}

pub fn history(a: HistoryArgs) -> u8 {
    run(|| {
        let (path, uuid) = (&a.file, &a.uuid);
        let bytes = read(path)?;
        let (log, code) = load(path, &bytes)?;
        let u = match ovsdb::Uuid::parse(uuid) {
            Some(u) => u,
            None => by_prefix(&log, uuid)?,
        };
        if let (Some(i), Some(j)) = (a.from, a.to) {
            if i > j {
                return Err(format!("--from {i} is after --to {j}"));
            }
        }
        let from = a
            .from
            .map(|i| within_file(path, &log, "--from", i, "using"));
        let to = a.to.map(|j| within_file(path, &log, "--to", j, "using"));
        let items = contents::history::history(&log, &u).map_err(|e| format!("{path}: {e}"))?;
        let items = contents::history::between(&log, items, from, to);
        if a.json {
            out!(
                "{}\n",
                contents::history::history_json(&u, &items).to_string_compact()
            );
            return Ok(code);
        }
        if items.is_empty() {
            let between = match (from, to) {
                (None, None) => String::new(),
                (Some(i), None) => format!(" after index {i}"),
                (None, Some(j)) => format!(" up to index {j}"),
                (Some(i), Some(j)) => format!(" after index {i} up to {j}"),
            };
            out!("no entry{between} mentions {u}\n");
        }
        for it in &items {
            let e = it.entry;
            let opt = |v: Option<u64>| v.map_or("-".into(), |x: u64| x.to_string());
            out!(
                "record {} (offset {}) index {} term {} {} {} {}{}\n",
                e.record,
                e.offset,
                opt(e.index),
                opt(e.term),
                e.date_ms.map_or("-".into(), timeline::time::utc_datetime),
                it.change.name(),
                it.table,
                e.comment
                    .as_ref()
                    .map_or(String::new(), |c| format!("  \"{}\"", short(c)))
            );
            for c in &it.columns {
                out!(
                    "    {}: {} -> {}\n",
                    c.column,
                    c.old.as_deref().unwrap_or("-"),
                    c.new.as_deref().unwrap_or("-")
                );
            }
        }
        Ok(code)
    })
}

/// The one row UUID of the file that starts with `prefix` (4 hex digits or
/// more, as `ovn-nbctl` takes a record's UUID prefix).
fn by_prefix(log: &Log<'_>, prefix: &str) -> Result<ovsdb::Uuid, String> {
    let p = prefix.to_ascii_lowercase();
    if p.len() < 4 || !p.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-') {
        return Err(format!(
            "{prefix}: not a UUID, nor its first 4 or more hex digits"
        ));
    }
    let mut hits: Vec<ovsdb::Uuid> = log
        .history
        .rows()
        .filter(|u| u.to_string().starts_with(&p))
        .copied()
        .collect();
    hits.sort();
    match hits.as_slice() {
        [u] => Ok(*u),
        [] => Err(format!("{prefix}: no row UUID of this file starts with it")),
        many => {
            let shown: Vec<String> = many.iter().take(5).map(|u| u.to_string()).collect();
            Err(format!(
                "{prefix}: {} row UUIDs start with it ({}{}); give more digits",
                many.len(),
                shown.join(", "),
                if many.len() > 5 { ", ..." } else { "" }
            ))
        }
    }
}

pub fn diff(a: DiffArgs) -> u8 {
    run(|| {
        let (path, i, j) = (&a.file, a.from, a.to);
        let bytes = read(path)?;
        let (from, e1, _) = database(path, &bytes, "--from", Some(i), "using")?;
        let (to, e2, _) = database(path, &bytes, "--to", Some(j), "using")?;
        let code = warn(path, &e1.or(e2));
        let d = contents::diff::diff(&from, &to);
        if a.json {
            out!("{}\n", contents::diff::diff_json(&d).to_string_compact());
        } else {
            out!("{}", contents::diff::diff_text(&d));
        }
        Ok(code)
    })
}

pub fn sizes(a: SizesArgs) -> u8 {
    run(|| {
        let by = a.by.map(By::name);
        let (mut all, mut code) = (Vec::new(), 0);
        for path in &a.files {
            let bytes = read(path)?;
            let (log, c) = load(path, &bytes)?;
            code = code.max(c);
            // The what-if's snapshot at an index the file holds, and
            // named by it.
            let at =
                a.at.map(|asked| within_file(path, &log, "--at", asked, "using"));
            let r = contents::sizes::sizes(&log, at);
            if a.json {
                let mut j = contents::sizes::sizes_json(&r, by);
                if let Json::Object(o) = &mut j {
                    let mut p = ovsdb::Object::new();
                    p.push_unchecked("path", Json::String(path.clone()));
                    for (k, v) in o.iter() {
                        p.push_unchecked(k.to_string(), v.clone());
                    }
                    j = Json::Object(p);
                }
                all.push(j);
            } else {
                print_sizes(path, &r, by);
            }
        }
        if a.json {
            out!("{}\n", Json::Array(all).to_string_compact());
        }
        Ok(code)
    })
}

fn print_sizes(path: &str, r: &contents::sizes::SizeReport, by: Option<&str>) {
    let m = |v: u64| if r.modes { v.to_string() } else { "-".into() };
    out!(
        "{path}: {} transactions, stored {} full {} diff {}\n",
        r.entries,
        r.total.stored,
        m(r.total.full),
        m(r.total.diff)
    );
    let want = |k: &str| by.is_none_or(|b| b == k);
    let table = |title: &str, rows: Vec<(String, contents::sizes::Bytes)>| {
        out!(
            "  by {title}:{:>w$}{:>12}{:>12}{:>12}\n",
            "",
            "stored",
            "full",
            "diff",
            w = 40usize.saturating_sub(title.len() + 4)
        );
        let mut rows = rows;
        rows.sort_by(|a, b| b.1.stored.cmp(&a.1.stored).then(a.0.cmp(&b.0)));
        for (k, v) in rows {
            out!(
                "    {k:<38}{:>12}{:>12}{:>12}\n",
                v.stored,
                m(v.full),
                m(v.diff)
            );
        }
    };
    if want("table") {
        table(
            "table",
            r.by_table.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        );
    }
    if want("column") {
        table(
            "column",
            r.by_column
                .iter()
                .map(|((t, c), v)| (contents::sizes::column_key(t, c), *v))
                .collect(),
        );
    }
    if want("client") {
        table(
            "client",
            r.by_client.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        );
    }
    // `--by` shows that breakdown alone: no largest entries, no what-if.
    let all = by.is_none();
    if all {
        out!("  largest entries:\n");
        for b in &r.largest {
            out!(
                "    record {:>7} index {:>9} {:>10} bytes  {}  {}\n",
                b.record,
                b.index.map_or("-".into(), |i| i.to_string()),
                b.stored,
                b.top_table.as_deref().unwrap_or("-"),
                short(b.comment.as_deref().unwrap_or(""))
            );
        }
    }
    if want("growth") && !r.growth.is_empty() {
        // Ten of the points, with the three largest tables at each.
        out!("  growth (bytes stored so far, largest tables):\n");
        let n = r.growth.len();
        let picks: Vec<usize> = (1..=10.min(n)).map(|k| k * n / 10.min(n) - 1).collect();
        for &i in &picks {
            let p = &r.growth[i];
            let total: u64 = p.by_table.values().map(|b| b.stored).sum();
            let mut top: Vec<(&String, u64)> = p
                .by_table
                .iter()
                .filter(|(k, _)| k.as_str() != contents::sizes::RECORD)
                .map(|(k, b)| (k, b.stored))
                .collect();
            top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let top: Vec<String> = top
                .iter()
                .take(3)
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            out!(
                "    record {:>7} index {:>9} {:>12}  {}\n",
                p.record,
                p.index.map_or("-".into(), |i| i.to_string()),
                total,
                top.join(", ")
            );
        }
    }
    if let Some(c) = r.compaction.as_ref().filter(|_| all) {
        out!(
            "  compaction at {}: snapshot {} bytes vs {} bytes of log after the header\n",
            c.at,
            c.snapshot_bytes,
            c.log_bytes
        );
        let mut rows: Vec<(&String, &u64)> = c.by_table.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        out!("    snapshot by table:\n");
        for (k, v) in rows {
            out!("      {k:<36}{v:>12}\n");
        }
    }
}

fn short(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(57).collect::<String>())
    } else {
        s.to_string()
    }
}
