//! Port of ovs tests/ovsdb-idl.at "map, simple2 idl-partial-update-map-column,
//! initially populated": partial map updates become `mutate` operations
//! that the server applies; duplicate and missing keys are dropped; partial
//! updates of rows deleted in the same transaction vanish.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::filters::{sort_lines, uuidfilt};
use common::scenario;
use idl::hub::Hub;
use idl::replica::{Idl, PartialOp};
use idl::server::{Server, ServerOptions};
use idl::DbMeta;
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::parse;
use std::sync::Arc;

fn dump(idl: &Idl, step: usize, out: &mut Vec<String>) {
    let t = idl.table_index("simple2").unwrap();
    let col = |u, n: &str| idl.read(t, u, idl.column_index(t, n).unwrap());
    for u in idl.row_uuids(t) {
        let name = col(u, "name")
            .as_scalar()
            .and_then(|a| a.as_str().map(str::to_string))
            .unwrap_or_default();
        let map_text = |d: Datum| -> String {
            d.as_map()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            let k = match k {
                                Atom::Integer(i) => i.to_string(),
                                other => other.as_str().unwrap_or("").to_string(),
                            };
                            format!("[{k} : {}]", v.as_str().unwrap_or(""))
                        })
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or_default()
        };
        out.push(format!(
            "{step:03}: name={name} smap=[{}] imap=[{}]",
            map_text(col(u, "smap")),
            map_text(col(u, "imap"))
        ));
    }
}

#[test]
fn partial_update_map_column() {
    let meta = DbMeta::from_text(&scenario::schema_text("idltest")).unwrap();
    let mut server = Server::new(meta.clone(), ServerOptions::default());
    let j = parse(br#"[{"op":"insert","table":"simple2","row":{"name":"myString1","smap":["map",[["key1","value1"],["key2","value2"]]]}}]"#).unwrap();
    assert!(server.transact(j.as_array().unwrap()).0.commit.is_some());
    let mut hub = Hub::new(server);
    let mut idl = Idl::new(Arc::new(meta), false);
    for c in ["name", "smap", "imap"] {
        idl.add_column("simple2", c);
    }
    let c = hub.add(idl).unwrap();
    let t = hub.clients[c].idl.table_index("simple2").unwrap();
    let (name, smap, imap) = {
        let idl = &hub.clients[c].idl;
        (
            idl.column_index(t, "name").unwrap(),
            idl.column_index(t, "smap").unwrap(),
            idl.column_index(t, "imap").unwrap(),
        )
    };
    let s = |x: &str| Atom::String(x.into());
    let mut out = Vec::new();
    let mut step = 0;
    out.push(format!("{step:03}: Getting records"));
    step += 1;
    dump(&hub.clients[c].idl, step, &mut out);
    step += 1;
    let row = hub.clients[c].idl.row_uuids(t)[0];

    // Insert new elements in both map columns and rename.
    {
        let idl = &mut hub.clients[c].idl;
        idl.txn_begin();
        idl.txn_partial(t, row, smap, PartialOp::MapSet(s("key1"), s("myList1")));
        idl.txn_partial(
            t,
            row,
            imap,
            PartialOp::MapSet(Atom::Integer(3), s("myids2")),
        );
        idl.txn_write(t, row, name, Datum::scalar(s("String2")));
    }
    hub.commit(c).unwrap();
    out.push(format!("{step:03}: After insert element"));
    step += 1;
    dump(&hub.clients[c].idl, step, &mut out);
    step += 1;

    // The same key/value again: dropped (nothing to send).
    hub.clients[c].idl.txn_begin();
    hub.clients[c]
        .idl
        .txn_partial(t, row, smap, PartialOp::MapSet(s("key1"), s("myList1")));
    hub.commit(c).unwrap();
    out.push(format!("{step:03}: After insert duplicated element"));
    step += 1;
    dump(&hub.clients[c].idl, step, &mut out);
    step += 1;

    // Delete the first key.
    let first_key = hub.clients[c]
        .idl
        .read(t, row, smap)
        .as_map()
        .and_then(|m| m.keys().next().cloned())
        .unwrap();
    hub.clients[c].idl.txn_begin();
    hub.clients[c]
        .idl
        .txn_partial(t, row, smap, PartialOp::MapDelete(first_key.clone()));
    hub.commit(c).unwrap();
    out.push(format!("{step:03}: After delete element"));
    step += 1;
    dump(&hub.clients[c].idl, step, &mut out);
    step += 1;

    // Deleting it again: dropped.
    hub.clients[c].idl.txn_begin();
    hub.clients[c]
        .idl
        .txn_partial(t, row, smap, PartialOp::MapDelete(first_key));
    hub.commit(c).unwrap();
    out.push(format!(
        "{step:03}: After trying to delete a deleted element"
    ));
    step += 1;
    dump(&hub.clients[c].idl, step, &mut out);
    step += 1;

    // Insert a row, update it and delete it in one transaction.
    {
        let idl = &mut hub.clients[c].idl;
        idl.txn_begin();
        let r = idl.txn_insert(t, None);
        idl.txn_partial(t, r, smap, PartialOp::MapSet(s("key3"), s("myList3")));
        idl.txn_write(t, r, name, Datum::scalar(s("String2")));
        idl.txn_delete(t, r);
    }
    hub.commit(c).unwrap();
    out.push(format!(
        "{step:03}: After Create element, update smap and Delete element"
    ));
    step += 1;
    dump(&hub.clients[c].idl, step, &mut out);
    step += 1;

    // Update and delete the existing row in one transaction.
    {
        let idl = &mut hub.clients[c].idl;
        idl.txn_begin();
        idl.txn_partial(t, row, smap, PartialOp::MapSet(s("key4"), s("myList4")));
        idl.txn_write(t, row, name, Datum::scalar(s("String3")));
        idl.txn_delete(t, row);
    }
    hub.commit(c).unwrap();
    out.push(format!("{step:03}: After update smap and Delete element"));
    step += 1;
    dump(&hub.clients[c].idl, step, &mut out);
    step += 1;
    out.push(format!("{step:03}: End test"));

    let text: String = out.iter().map(|l| format!("{l}\n")).collect();
    let got = uuidfilt(&sort_lines(&text));
    let want = std::fs::read_to_string(
        scenario::scenario_dir().join("partial/partial-update-map-column.txt"),
    )
    .unwrap();
    let want: String = want
        .split_inclusive('\n')
        .filter(|l| !l.starts_with('#'))
        .collect();
    assert_eq!(got, want);
}
