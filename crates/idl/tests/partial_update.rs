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
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::parse;
use ovsdb_server::DbMeta;
use ovsdb_server::{Server, ServerOptions};
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
        idl.add_column("simple2", c).unwrap();
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
        let r = idl.txn_insert(t, None).unwrap();
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

#[test]
fn partial_update_set_column() {
    let meta = DbMeta::from_text(&scenario::schema_text("idltest")).unwrap();
    let mut server = Server::new(meta.clone(), ServerOptions::default());
    let j = parse(br#"[{"op":"insert","table":"simple3","row":{"name":"mySet1","uset":["set",[["uuid","0005b872-f9e5-43be-ae02-3184b9680e75"],["uuid","000d2f6a-76af-412f-b59d-e7bcd3e84eff"]]]}}]"#).unwrap();
    assert!(server.transact(j.as_array().unwrap()).0.commit.is_some());
    let mut hub = Hub::new(server);
    let mut idl = Idl::new(Arc::new(meta), false);
    for c in ["name", "uset", "uref"] {
        idl.add_column("simple3", c).unwrap();
    }
    idl.add_table("simple4").unwrap();
    idl.add_column("simple4", "name").unwrap();
    let c = hub.add(idl).unwrap();
    let t3 = hub.clients[c].idl.table_index("simple3").unwrap();
    let t4 = hub.clients[c].idl.table_index("simple4").unwrap();
    let col = |idl: &Idl, t: usize, n: &str| idl.column_index(t, n).unwrap();
    let (name, uset, uref, name4) = {
        let idl = &hub.clients[c].idl;
        (
            col(idl, t3, "name"),
            col(idl, t3, "uset"),
            col(idl, t3, "uref"),
            col(idl, t4, "name"),
        )
    };
    let dump = |idl: &Idl, step: usize, out: &mut Vec<String>| {
        for u in idl.row_uuids(t3) {
            let list = |c: usize, live: bool| -> String {
                idl.read(t3, u, c)
                    .keys()
                    .filter_map(|a| a.as_uuid())
                    .filter(|x| !live || idl.exists(t4, *x))
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            out.push(format!(
                "{step:03}: table simple3: name={} uset=[{}] uref=[{}] uuid={u}",
                idl.read(t3, u, name)
                    .as_scalar()
                    .and_then(|a| a.as_str().map(str::to_string))
                    .unwrap_or_default(),
                list(uset, false),
                list(uref, true)
            ));
        }
    };
    let uu = |x: &str| Atom::Uuid(ovsdb::uuid::Uuid::parse(x).unwrap());
    let mut out = Vec::new();
    let mut step = 0;
    let section = |hub: &mut Hub, title: &str, out: &mut Vec<String>, step: &mut usize| {
        let _ = hub.commit(c);
        out.push(format!("{:03}: {title}", *step));
        *step += 1;
        dump(&hub.clients[c].idl, *step, out);
        *step += 1;
    };
    out.push(format!("{step:03}: Getting records"));
    step += 1;
    dump(&hub.clients[c].idl, step, &mut out);
    step += 1;
    let row = hub.clients[c].idl.row_uuids(t3)[0];
    let added = uu("001e43d2-dd3f-4616-ab6a-83a490bb0991");
    {
        let idl = &mut hub.clients[c].idl;
        idl.txn_begin();
        idl.txn_partial(t3, row, uset, PartialOp::SetInsert(added.clone()));
        idl.txn_write(t3, row, name, Datum::scalar(Atom::String("String2".into())));
    }
    section(&mut hub, "After rename+add new value", &mut out, &mut step);
    hub.clients[c].idl.txn_begin();
    hub.clients[c].idl.txn_partial(
        t3,
        row,
        uset,
        PartialOp::SetInsert(uu("0026b3ba-571b-4729-8227-d860a5210ab8")),
    );
    section(&mut hub, "After add new value", &mut out, &mut step);
    hub.clients[c].idl.txn_begin();
    hub.clients[c]
        .idl
        .txn_partial(t3, row, uset, PartialOp::SetDelete(added.clone()));
    section(&mut hub, "After delete value", &mut out, &mut step);
    hub.clients[c].idl.txn_begin();
    hub.clients[c]
        .idl
        .txn_partial(t3, row, uset, PartialOp::SetDelete(added));
    section(
        &mut hub,
        "After trying to delete a deleted value",
        &mut out,
        &mut step,
    );
    {
        // A new simple4 row referenced from the same transaction: the
        // mutate must name it with its uuid-name.
        let idl = &mut hub.clients[c].idl;
        idl.txn_begin();
        let r4 = idl.txn_insert(t4, None).unwrap();
        idl.txn_write(t4, r4, name4, Datum::scalar(Atom::String("test".into())));
        idl.txn_partial(t3, row, uref, PartialOp::SetInsert(Atom::Uuid(r4)));
    }
    section(
        &mut hub,
        "After add to other table + set of strong ref",
        &mut out,
        &mut step,
    );
    {
        let idl = &mut hub.clients[c].idl;
        idl.txn_begin();
        let r = idl.txn_insert(t3, None).unwrap();
        idl.txn_partial(
            t3,
            r,
            uset,
            PartialOp::SetInsert(uu("12345678-dd3f-4616-ab6a-83a490bb0991")),
        );
        idl.txn_write(t3, r, name, Datum::scalar(Atom::String("String2".into())));
        idl.txn_delete(t3, r);
    }
    section(
        &mut hub,
        "After Create element, update set and Delete element",
        &mut out,
        &mut step,
    );
    out.push(format!("{step:03}: End test"));
    let text: String = out.iter().map(|l| format!("{l}\n")).collect();
    let got = uuidfilt(&sort_lines(&text));
    let want: String = std::fs::read_to_string(
        scenario::scenario_dir().join("partial/partial-update-set-column.txt"),
    )
    .unwrap()
    .split_inclusive('\n')
    .filter(|l| !l.starts_with('#'))
    .collect();
    assert_eq!(got, want);
}
