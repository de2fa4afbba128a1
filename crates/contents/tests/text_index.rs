//! A substring selection through the table's [`TextIndex`] selects the
//! same rows as testing every row's printed values one by one (the way
//! `select` worked before the index), on every sample and fixture
//! database and on a generated Southbound, for pieces of the rows' own
//! text in mixed case and for random queries.
#![cfg(not(target_arch = "wasm32"))]

use contents::browse::{select, Mode, TableText, TextIndex};
use ovsdb::strings::datum_to_string;
use ovsdb::{Database, Row, TableSchema, Uuid};
use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The reference: the row's UUID or one user column's printed value
/// contains the query, ASCII case folded.
fn naive(db: &Database, table: &str, query: &str) -> Vec<Uuid> {
    let ts = db.table_schema(table).unwrap();
    let needle = query.trim().to_ascii_lowercase();
    let has = |hay: &str| {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
    };
    let row_has = |ts: &TableSchema, row: &Row| {
        has(&row.uuid.to_string())
            || ts
                .columns
                .iter()
                .enumerate()
                .any(|(i, c)| !c.is_implicit() && has(&datum_to_string(&row.columns[i], &c.ty)))
    };
    db.table(table)
        .into_iter()
        .flat_map(|t| t.rows.values())
        .filter(|r| row_has(ts, r))
        .map(|r| r.uuid)
        .collect()
}

struct Case {
    name: String,
    db: Database,
    /// Each table's name and the printed fields of up to 20 of its rows.
    pieces: Vec<(String, Vec<String>)>,
}

fn case(name: String, db: Database) -> Case {
    let pieces = db
        .schema()
        .tables
        .iter()
        .map(|ts| {
            let mut texts = Vec::new();
            for row in db
                .table(&ts.name)
                .into_iter()
                .flat_map(|t| t.rows.values())
                .take(20)
            {
                texts.push(row.uuid.to_string());
                for (i, c) in ts.columns.iter().enumerate() {
                    if !c.is_implicit() {
                        texts.push(datum_to_string(&row.columns[i], &c.ty));
                    }
                }
            }
            (ts.name.clone(), texts)
        })
        .collect();
    Case { name, db, pieces }
}

fn generated() -> Database {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let schema = std::fs::read(root.join("static/samples/schemas/ovn-sb.ovsschema")).unwrap();
    let schema = ovsdb::json::parse(&schema).unwrap();
    let shape = ovsdb_log::synth_sb::SbShape {
        chassis: 8,
        datapaths: 10,
        ports_per_datapath: 5,
        flows_per_datapath: 100,
        entries: 20,
        ..Default::default()
    };
    let mut file = Vec::new();
    ovsdb_log::synth_sb::southbound(&shape, &schema, &mut |i, b| {
        if i == 0 {
            file.extend_from_slice(b)
        }
    });
    contents::database_at(&file, contents::Upto::Committed)
        .unwrap()
        .0
}

mod common;

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut out = Vec::new();
        for (name, bytes) in common::inputs(&["db"]) {
            if let Ok((db, _)) = contents::database_at(&bytes, contents::Upto::Committed) {
                out.push(case(name, db));
            }
        }
        assert!(out.len() >= 20, "samples not found");
        out.push(case("generated southbound".into(), generated()));
        out
    })
}

/// Checks one query on one table through a kept index (and, when
/// `fresh`, also without one).
fn check(c: &Case, ix: &mut TextIndex, table: &str, query: &str, fresh: bool) {
    let with = select(&c.db, table, query, Some(ix)).unwrap();
    if fresh {
        let without = select(&c.db, table, query, None).unwrap();
        assert_eq!(with, without, "{}: {table}: {query:?}", c.name);
    }
    if with.mode == Mode::Text {
        assert_eq!(
            with.uuids,
            naive(&c.db, table, query),
            "{}: {table}: {query:?}",
            c.name
        );
    }
}

/// Flips the case of the ASCII letters at the positions `mask` sets.
fn mixed_case(s: &str, mask: u64) -> String {
    s.chars()
        .enumerate()
        .map(|(i, ch)| {
            if mask >> (i % 64) & 1 == 1 {
                ch.to_ascii_uppercase()
            } else {
                ch
            }
        })
        .collect()
}

#[test]
fn every_table_matches_the_row_by_row_search_on_fixed_queries() {
    let fixed = [
        "a",
        "A",
        "-",
        "0",
        "1",
        "\"",
        "=",
        ":",
        "{",
        "[]",
        "{}",
        "true",
        "ct_next",
        "lsp",
        "\0",
        "a\0b",
        "\n",
        "é",
        "zzzzzzzz",
        "00000000-",
        "\\",
    ];
    let mut tables = 0;
    for c in cases() {
        let mut ix = TextIndex::new();
        for (table, texts) in &c.pieces {
            tables += 1;
            for q in fixed {
                check(c, &mut ix, table, q, q == "a");
            }
            // Every field's whole text, its halves and a middle piece.
            for t in texts.iter().take(24) {
                let n = t.len();
                let cuts = [(0, n), (0, n / 2), (n / 2, n), (n / 3, 2 * n / 3)];
                for (a, b) in cuts {
                    if let Some(q) = t.get(a..b) {
                        check(
                            c,
                            &mut ix,
                            table,
                            &mixed_case(q, 0x5555_5555_5555_5555),
                            false,
                        );
                    }
                }
            }
        }
    }
    assert!(tables > 100, "tables checked: {tables}");
}

#[test]
fn a_text_built_in_slices_equals_one_built_at_once() {
    for c in cases() {
        let mut ix = TextIndex::new();
        for (table, _) in &c.pieces {
            let mut slices = 0;
            while !ix.prepare(&c.db, table, 3).unwrap() {
                slices += 1;
                assert!(!ix.has(table));
            }
            let rows = c.db.table(table).map_or(0, |t| t.len());
            assert_eq!(slices, rows.saturating_sub(1) / 3, "{table}");
            let whole = TableText::build(&c.db, table).unwrap();
            assert_eq!(whole.rows(), rows);
            assert_eq!(ix.table(&c.db, table), Some(&whole), "{}: {table}", c.name);
        }
        assert_eq!(ix.prepare(&c.db, "No_Such_Table", 3), None);
        assert!(ix.table(&c.db, "No_Such_Table").is_none());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn pieces_of_row_text_select_as_row_by_row(
        pick in any::<(usize, usize, usize)>(),
        cut in (0usize..200, 1usize..40),
        mask in any::<u64>(),
    ) {
        let cs = cases();
        let c = &cs[pick.0 % cs.len()];
        let (table, texts) = &c.pieces[pick.1 % c.pieces.len()];
        let mut ix = TextIndex::new();
        match texts.get(pick.2 % texts.len().max(1)) {
            None => check(c, &mut ix, table, "x", true),
            Some(t) => {
                let chars: Vec<char> = t.chars().collect();
                let a = cut.0 % chars.len().max(1);
                let q: String = chars[a.min(chars.len())..].iter().take(cut.1).collect();
                check(c, &mut ix, table, &mixed_case(&q, mask), true);
            }
        }
    }

    #[test]
    fn random_queries_select_as_row_by_row(
        pick in any::<(usize, usize)>(),
        q in "[a-fA-F0-9_=:.\\-\" {}\\[\\],\\x00\\n\\\\é]{1,8}",
    ) {
        let cs = cases();
        let c = &cs[pick.0 % cs.len()];
        let (table, _) = &c.pieces[pick.1 % c.pieces.len()];
        let mut ix = TextIndex::new();
        check(c, &mut ix, table, &q, true);
    }
}
