//! The table browser's substring filter on a generated Southbound with
//! 100 000 `Logical_Flow` rows (the shape of the e2e figure: `generate
//! southbound --datapaths 500 --flows-per-datapath 200 --entries 200`).
//! Run: `cargo bench -p contents --bench browse`. Prints figures; no
//! assertions on time.
//!
//! * before: every row's values printed and searched per query (what
//!   `select` did without a text index);
//! * the table's [`TextIndex`] built once, then each query a scan of it;
//! * `select` without a kept index (build and scan for one query).

use std::hint::black_box;
use std::time::Instant;

use contents::browse::{select, TableText, TextIndex};
use ovsdb::strings::datum_to_string;
use ovsdb::{Database, Uuid};

fn generated() -> Database {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let schema = std::fs::read(root.join("static/samples/schemas/ovn-sb.ovsschema")).unwrap();
    let schema = ovsdb::json::parse(&schema).unwrap();
    let shape = ovsdb_log::synth_sb::SbShape {
        datapaths: 500,
        flows_per_datapath: 200,
        entries: 200,
        ..Default::default()
    };
    let mut file = Vec::new();
    ovsdb_log::synth_sb::southbound(&shape, &schema, &mut |i, b| {
        if i == 0 {
            file.extend_from_slice(b)
        }
    });
    let t = Instant::now();
    let db = contents::database_at(&file, contents::Upto::Committed)
        .unwrap()
        .0;
    println!(
        "file {:.1} MB, replayed in {:.2} s",
        file.len() as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    db
}

/// The search before the index: per row, the UUID and each value printed
/// and compared, stopping at the first field that holds the needle.
fn row_by_row(db: &Database, table: &str, needle_lower: &str) -> Vec<Uuid> {
    let ts = db.table_schema(table).unwrap();
    let has = |hay: &str| {
        let (h, n) = (hay.as_bytes(), needle_lower.as_bytes());
        h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
    };
    db.table(table)
        .unwrap()
        .rows
        .values()
        .filter(|r| {
            has(&r.uuid.to_string())
                || ts
                    .columns
                    .iter()
                    .enumerate()
                    .any(|(i, c)| !c.is_implicit() && has(&datum_to_string(&r.columns[i], &c.ty)))
        })
        .map(|r| r.uuid)
        .collect()
}

/// Best of `n` runs, in ms.
fn best<T>(n: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = None;
    let mut ms = f64::MAX;
    for _ in 0..n {
        let t = Instant::now();
        let v = black_box(f());
        ms = ms.min(t.elapsed().as_secs_f64() * 1e3);
        out = Some(v);
    }
    (ms, out.unwrap())
}

fn main() {
    let db = generated();
    let table = "Logical_Flow";
    let rows = db.table(table).unwrap().len();
    let (build_ms, text) = best(3, || TableText::build(&db, table).unwrap());
    println!(
        "{table}: {rows} rows; text index built in {build_ms:.1} ms, {:.1} MB",
        text.bytes() as f64 / 1e6
    );
    let some = db.table(table).unwrap().rows.keys().nth(rows / 2).unwrap();
    let uuid_piece = some.to_string()[9..18].to_ascii_uppercase();
    let queries = [
        "ct_next".to_string(),
        "reg0[7]".to_string(),
        "no-such-text".to_string(),
        uuid_piece,
    ];
    let mut ix = TextIndex::new();
    ix.table(&db, table);
    println!("| query | rows | before (row by row) | index scan | select, kept index | select, no index |");
    println!("|---|---|---|---|---|---|");
    for q in &queries {
        let needle = q.to_ascii_lowercase();
        let (before_ms, before) = best(3, || row_by_row(&db, table, &needle));
        let (scan_ms, after) = best(5, || text.matching(&needle));
        assert_eq!(before, after, "{q}");
        let (kept_ms, s) = best(5, || select(&db, table, q, Some(&mut ix)).unwrap());
        assert_eq!(s.uuids, after);
        let (none_ms, _) = best(3, || select(&db, table, q, None).unwrap());
        println!(
            "| `{q}` | {} | {before_ms:.1} ms | {scan_ms:.1} ms | {kept_ms:.1} ms | {none_ms:.1} ms |",
            after.len()
        );
    }
}
