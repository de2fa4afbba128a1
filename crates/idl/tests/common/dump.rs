//! Shared by the interop tests: `ovsdb-client dump -f json` output and an IDL
//! replica, both as comparable row maps.

use idl::Idl;
use ovsdb::datum::Datum;
use ovsdb::json::{self, Json};
use ovsdb::uuid::Uuid;
use ovsdb_server::DbMeta;
use std::collections::BTreeMap;

pub type Rows = BTreeMap<String, BTreeMap<Uuid, BTreeMap<String, Datum>>>;

/// Parses `ovsdb-client dump -f json` output (one object per table).
pub fn parse_dump(meta: &DbMeta, text: &str) -> Rows {
    let mut out = Rows::new();
    for line in text.lines().filter(|l| l.starts_with('{')) {
        let j = json::parse(line.as_bytes()).expect("dump line is JSON");
        let caption = j.get("caption").and_then(Json::as_str).unwrap();
        let table = caption.trim_end_matches(" table").to_string();
        let t = meta.table(&table).expect("known table");
        let tm = &meta.tables[t];
        let heads: Vec<&str> = j
            .get("headings")
            .and_then(Json::as_array)
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap())
            .collect();
        let rows = out.entry(table.clone()).or_default();
        for r in j.get("data").and_then(Json::as_array).unwrap() {
            let cells = r.as_array().unwrap();
            let mut uuid = Uuid::NIL;
            let mut cols = BTreeMap::new();
            for (h, v) in heads.iter().zip(cells) {
                if *h == "_uuid" {
                    uuid = Uuid::parse(v.as_array().unwrap()[1].as_str().unwrap()).unwrap();
                } else {
                    let ci = tm.column(h).unwrap();
                    cols.insert(
                        h.to_string(),
                        Datum::from_json(v, &tm.columns[ci].ty).unwrap(),
                    );
                }
            }
            rows.insert(uuid, cols);
        }
    }
    out.retain(|_, v| !v.is_empty());
    out
}

pub fn replica_rows(idl: &Idl) -> Rows {
    let mut out = Rows::new();
    for (t, tm) in idl.meta.tables.iter().enumerate() {
        for u in idl.row_uuids(t) {
            let mut cols = BTreeMap::new();
            for (ci, c) in tm.columns.iter().enumerate() {
                cols.insert(c.name.clone(), idl.read(t, u, ci));
            }
            out.entry(tm.name.clone()).or_default().insert(u, cols);
        }
    }
    out
}
