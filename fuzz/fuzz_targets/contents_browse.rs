//! Fuzz the table browser (`contents::browse`) and `find`: the input is
//! either a query typed into the search box, run on every table of two
//! sample databases (a Northbound and a Southbound), or transactions
//! replayed on a sample's schema and then browsed whole. `select` (with
//! a kept text index), the display cells of the selected rows, `find_row`
//! and `Referrers` must not panic; a substring selection must equal the
//! row-by-row search, and a condition selection `find`'s.
//!
//! Input: byte 0 even: the rest is a query (lossy UTF-8); odd: the rest,
//! split at newlines, is a standalone file's transaction records after
//! the Northbound sample's schema record.
//!
//! Run (from fuzz/):
//! `mkdir -p corpus/contents_browse && cargo +nightly fuzz run contents_browse corpus/contents_browse seeds/contents_browse -- -max_total_time=180 -max_len=4096`
#![no_main]

use contents::browse::{self, Mode, Referrers, TextIndex};
use libfuzzer_sys::fuzz_target;
use ovsdb::strings::datum_to_string;
use ovsdb::{Database, TableSchema, Uuid};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

const NB: &[u8] = include_bytes!("../../static/samples/standalone/nb.db");
const SB: &[u8] = include_bytes!("../../static/samples/sb-scale/s1.db");

/// A database, its text index (every table built) and, per table, each
/// row's UUID and printed fields in lower case (the row-by-row search's
/// input, printed once).
struct Sample {
    db: Database,
    texts: Mutex<TextIndex>,
    fields: HashMap<String, Vec<(Uuid, Vec<String>)>>,
    refs: Referrers,
}

fn sample(bytes: &[u8]) -> Sample {
    let db = contents::database_at(bytes, contents::Upto::Committed).unwrap().0;
    let mut texts = TextIndex::new();
    let mut fields = HashMap::new();
    for ts in &db.schema().tables {
        texts.table(&db, &ts.name);
        fields.insert(ts.name.clone(), printed(&db, ts));
    }
    Sample {
        refs: Referrers::build(&db),
        db,
        texts: Mutex::new(texts),
        fields,
    }
}

fn printed(db: &Database, ts: &TableSchema) -> Vec<(Uuid, Vec<String>)> {
    db.table(&ts.name)
        .into_iter()
        .flat_map(|t| t.rows.values())
        .map(|r| {
            let mut f = vec![r.uuid.to_string()];
            for (i, c) in ts.columns.iter().enumerate() {
                if !c.is_implicit() {
                    f.push(datum_to_string(&r.columns[i], &c.ty).to_ascii_lowercase());
                }
            }
            (r.uuid, f)
        })
        .collect()
}

fn samples() -> &'static [Sample] {
    static DBS: OnceLock<Vec<Sample>> = OnceLock::new();
    DBS.get_or_init(|| [NB, SB].iter().map(|b| sample(b)).collect())
}

/// The substring rule, one row and one printed value at a time.
fn naive(rows: &[(Uuid, Vec<String>)], query: &str) -> Vec<Uuid> {
    let needle = query.trim().to_ascii_lowercase();
    rows.iter()
        .filter(|(_, f)| f.iter().any(|v| v.contains(needle.as_str())))
        .map(|(u, _)| *u)
        .collect()
}

/// Browses every table of `db` with each query: selections checked
/// against `find` and the row-by-row search (`fields`: printed rows per
/// table, None: print them now), cells, `find_row`, referrers.
fn browse_all(
    db: &Database,
    ix: &mut TextIndex,
    fields: Option<&HashMap<String, Vec<(Uuid, Vec<String>)>>>,
    refs: &Referrers,
    queries: &[&str],
) {
    for t in browse::tables(db) {
        let ts = db.table_schema(&t.name).unwrap();
        let owned;
        let rows = match fields {
            Some(f) => &f[&t.name],
            None => {
                owned = printed(db, ts);
                &owned
            }
        };
        for q in queries {
            let s = browse::select(db, &t.name, q, Some(ix)).unwrap();
            match s.mode {
                Mode::Text => assert_eq!(s.uuids, naive(rows, q)),
                Mode::Conditions => {
                    let terms = browse::terms(q);
                    let (_, found) = contents::find::find(db, &t.name, &terms).unwrap();
                    assert_eq!(s.uuids, found.iter().map(|r| r.uuid).collect::<Vec<_>>());
                }
                Mode::All => assert_eq!(s.uuids.len(), t.rows),
            }
            for u in s.uuids.iter().take(8) {
                let row = db.row(&t.name, u).unwrap();
                for (_, ci) in browse::columns(ts) {
                    let _ = browse::cell(ts, row, ci, browse::GRID_CELL_CHARS);
                    let _ = browse::cell(ts, row, ci, 3);
                }
                assert!(browse::find_row(db, u).is_some());
                let _ = refs.of(u);
                assert_eq!(s.position(u).map(|p| s.uuids[p]), Some(*u));
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let q = String::from_utf8_lossy(rest);
        for s in samples() {
            let mut ix = s.texts.lock().unwrap();
            browse_all(&s.db, &mut ix, Some(&s.fields), &s.refs, &[&q]);
        }
        return;
    }
    // The Northbound sample's schema record, then the input's lines as
    // transaction records.
    let mut file = Vec::new();
    let schema_end = {
        let nl = NB.iter().position(|&b| b == b'\n').unwrap();
        let header = std::str::from_utf8(&NB[..nl]).unwrap();
        let len: usize = header.split(' ').nth(2).unwrap().parse().unwrap();
        nl + 1 + len
    };
    file.extend_from_slice(&NB[..schema_end]);
    for line in rest.split(|&b| b == b'\n') {
        ovsdb_log::framing::write_record(&mut file, "JSON", line);
    }
    if let Ok((db, _)) = contents::database_at(&file, contents::Upto::All) {
        let _ = contents::show::show(&db);
        let queries = ["", "a", "name=x", "_uuid!=00000000-0000-0000-0000-000000000000"];
        browse_all(&db, &mut TextIndex::new(), None, &Referrers::build(&db), &queries);
    }
});
