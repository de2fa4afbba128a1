//! wasm32 tests (run in a browser by the project test script with
//! chromedriver): the Contents page's core on real samples embedded in
//! the binary, opened as the web worker opens a file (`stream::Opener`
//! in small chunks), agrees with the in-memory load and replay; the
//! table browser's substring and condition selections and one row's
//! history work.
#![cfg(target_arch = "wasm32")]

use contents::browse::{self, Mode, TextIndex};
use contents::stream::{Opened, Opener};
use contents::{Log, Upto};
use ovsdb_log::{Event, LogScan, Verdict};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

static CLUSTERED: &[u8] = include_bytes!("../../../static/samples/acl-portgroup-diff/s2.db");
static STANDALONE: &[u8] = include_bytes!("../../../static/samples/standalone/nb.db");
/// What the real ovsdb-server's tools said about the standalone sample.
static FACTS: &[u8] = include_bytes!("../../../tests/fixtures/samples/standalone/facts.json");

fn open_chunked(bytes: &[u8], chunk: usize) -> Opened {
    let mut o = Opener::new(None);
    let mut scan = LogScan::new(o.options());
    let mut f = |ev: Event<'_>| o.on_event(&ev);
    for c in bytes.chunks(chunk) {
        scan.push(c, &mut f);
    }
    scan.finish(&mut f);
    let mut opened = o.finish(&scan);
    if let Some(mut d) = opened.again.take() {
        while let Some(opts) = d.next_walk() {
            let mut scan = LogScan::new(opts);
            let mut f = |ev: Event<'_>| {
                d.on_event(&ev);
                Verdict::Keep
            };
            for c in bytes.chunks(chunk) {
                scan.push(c, &mut f);
            }
            scan.finish(&mut f);
            d.end(&scan);
        }
        opened.db = d.finish();
    }
    opened
}

#[wasm_bindgen_test]
fn streamed_open_lists_the_tables_of_the_in_memory_replay() {
    for bytes in [CLUSTERED, STANDALONE] {
        let o = open_chunked(bytes, 97);
        let log = Log::load(bytes);
        assert_eq!(o.log.entries, log.entries);
        assert_eq!(o.log.history, log.history);
        let (db, err) = o.db.unwrap();
        assert!(err.is_none());
        let (want, _) = contents::database_at(bytes, Upto::Index(o.at)).unwrap();
        let tables = browse::tables(&db);
        assert_eq!(tables, browse::tables(&want));
        assert_eq!(tables.len(), db.schema().tables.len());
        assert!(tables.iter().map(|t| t.rows).sum::<usize>() > 0);
        assert_eq!(db.dump_json(true), want.dump_json(true));
    }
    // The standalone sample's entries are the transactions `show-log` listed.
    let facts = ovsdb::json::parse(FACTS).unwrap();
    let want = facts
        .get("files")
        .and_then(|f| f.get("nb.db"))
        .and_then(|f| f.get("transactions"))
        .and_then(|t| t.as_i64())
        .unwrap();
    let o = open_chunked(STANDALONE, 13);
    let txns = o
        .log
        .entries
        .iter()
        .filter(|e| e.kind == contents::EntryKind::Txn)
        .count();
    assert_eq!(txns as i64, want);
}

#[wasm_bindgen_test]
fn substring_and_condition_selections_work() {
    let (db, _) = open_chunked(STANDALONE, 64).db.unwrap();
    let table = browse::tables(&db)
        .into_iter()
        .find(|t| t.rows > 1)
        .expect("a table with rows")
        .name;
    let ts = db.table_schema(&table).unwrap();
    let all = browse::select(&db, &table, "", None).unwrap();
    assert_eq!(all.mode, Mode::All);
    // A piece of one row's UUID, in upper case, selects that row.
    let u = all.uuids[all.uuids.len() / 2];
    let piece = u.to_string()[4..13].to_ascii_uppercase();
    let mut ix = TextIndex::new();
    let text = browse::select(&db, &table, &piece, Some(&mut ix)).unwrap();
    assert_eq!(text.mode, Mode::Text);
    assert!(text.position(&u).is_some());
    assert!(ix.has(&table));
    // Every row's UUID names it: `_uuid=U` is a condition selecting it.
    let cond = format!("_uuid={u}");
    let c = browse::select(&db, &table, &cond, Some(&mut ix)).unwrap();
    assert_eq!(c.mode, Mode::Conditions);
    assert_eq!(c.uuids, vec![u]);
    let (_, rows) = contents::find::find(&db, &table, &[cond]).unwrap();
    assert_eq!(rows.len(), 1);
    let row = db.row(&table, &u).unwrap();
    let cells: Vec<_> = browse::columns(ts)
        .into_iter()
        .map(|(_, ci)| browse::cell(ts, row, ci, browse::GRID_CELL_CHARS))
        .collect();
    assert_eq!(cells[0][0].text, u.to_string());
}

#[wasm_bindgen_test]
fn one_rows_history_from_records_read_back() {
    let o = open_chunked(CLUSTERED, 4096);
    let log = Log::load(CLUSTERED);
    let u = *log
        .history
        .rows()
        .max_by_key(|u| log.history.entries_for(u).len())
        .unwrap();
    let want = contents::history::history(&log, &u).unwrap();
    let got = contents::history::history_with(&o.log, &u, |e| {
        let (off, len, body) = Log::record_span(e);
        let rec = &CLUSTERED[off as usize..(off + len) as usize];
        rec.get(body..body + e.body_len)
    })
    .unwrap();
    assert_eq!(got, want);
    assert_eq!(got.len(), log.history.entries_for(&u).len());
    assert!(got.len() > 1);
}
