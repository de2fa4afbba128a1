//! Fuzz the table browser (`contents::browse`) and `find`: the input is
//! either a query typed into the search box, run on every table of two
//! sample databases (a Northbound and a Southbound), or transactions
//! replayed on a sample's schema and then browsed whole. `select` (with
//! a kept text index and without), the display cells of the selected
//! rows, `find_row` and `Referrers` must not panic; a substring selection
//! must equal the row-by-row search, and a condition selection `find`'s.
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
use ovsdb::{Database, Uuid};
use std::sync::OnceLock;

const NB: &[u8] = include_bytes!("../../static/samples/standalone/nb.db");
const SB: &[u8] = include_bytes!("../../static/samples/sb-scale/s1.db");

fn samples() -> &'static [Database] {
    static DBS: OnceLock<Vec<Database>> = OnceLock::new();
    DBS.get_or_init(|| {
        [NB, SB]
            .iter()
            .map(|b| contents::database_at(b, contents::Upto::Committed).unwrap().0)
            .collect()
    })
}

/// The substring rule, one row and one printed value at a time.
fn naive(db: &Database, table: &str, query: &str) -> Vec<Uuid> {
    let ts = db.table_schema(table).unwrap();
    let needle = query.trim().to_ascii_lowercase();
    let has = |hay: &str| {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
    };
    db.table(table)
        .into_iter()
        .flat_map(|t| t.rows.values())
        .filter(|r| {
            has(&r.uuid.to_string())
                || ts.columns.iter().enumerate().any(|(i, c)| {
                    !c.is_implicit() && has(&datum_to_string(&r.columns[i], &c.ty))
                })
        })
        .map(|r| r.uuid)
        .collect()
}

fn browse_all(db: &Database, queries: &[&str], check: bool) {
    let refs = Referrers::build(db);
    let mut ix = TextIndex::new();
    for t in browse::tables(db) {
        let ts = db.table_schema(&t.name).unwrap();
        for q in queries {
            let s = browse::select(db, &t.name, q, Some(&mut ix)).unwrap();
            if check {
                assert_eq!(browse::select(db, &t.name, q, None).unwrap(), s);
                match s.mode {
                    Mode::Text => assert_eq!(s.uuids, naive(db, &t.name, q)),
                    Mode::Conditions => {
                        let terms = browse::terms(q);
                        let (_, rows) = contents::find::find(db, &t.name, &terms).unwrap();
                        assert_eq!(s.uuids, rows.iter().map(|r| r.uuid).collect::<Vec<_>>());
                    }
                    Mode::All => assert_eq!(s.uuids.len(), t.rows),
                }
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
        for db in samples() {
            browse_all(db, &[&q], true);
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
        browse_all(&db, &["", "a", "name=x", "_uuid!=00000000-0000-0000-0000-000000000000"], true);
    }
});
