//! Port of ovs tests/ovsdb-idl.at "Compound_index, single column test":
//! ordered iteration by a string and an integer index, equal-range and
//! range scans, and index queries inside a transaction seeing uncommitted
//! inserts/deletes/updates. The output is filtered the same ways as the
//! original (order of `s=` lines, sorted full lines, order of `i=` lines,
//! sorted full lines) and compared with the original expected texts.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::scenario;
use idl::hub::Hub;
use idl::replica::{Idl, TxnStatus};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::json::parse;
use ovsdb::uuid::Uuid;
use ovsdb_server::DbMeta;
use ovsdb_server::{Server, ServerOptions};
use std::sync::Arc;

fn line(idl: &Idl, step: usize, u: Uuid, by_s: bool) -> String {
    let t = idl.table_index("simple").unwrap();
    let col = |n: &str| idl.read(t, u, idl.column_index(t, n).unwrap());
    let s = col("s")
        .as_scalar()
        .and_then(|a| a.as_str())
        .unwrap_or("")
        .to_string();
    let i = col("i").as_scalar().and_then(|a| a.as_i64()).unwrap_or(0);
    let b = if col("b") == Datum::scalar(Atom::Boolean(true)) {
        "True"
    } else {
        "False"
    };
    let r = match col("r").as_scalar() {
        Some(Atom::Real(r)) => *r,
        _ => 0.0,
    };
    if by_s {
        format!("{step:03}: s={s} i={i} b={b} r={r:.6}")
    } else {
        format!("{step:03}: i={i} s={s} b={b} r={r:.6}")
    }
}

fn int(i: i64) -> Vec<Datum> {
    vec![Datum::scalar(Atom::Integer(i))]
}

/// Loads the rows of the original test and connects a replica with the
/// six indexes test-ovsdb creates: s, i, (s,i), (s,i desc), (i,s),
/// (i desc,s).
fn setup() -> (Hub, usize, [usize; 6]) {
    let meta = DbMeta::from_text(&scenario::schema_text("idltest")).unwrap();
    let mut server = Server::new(meta.clone(), ServerOptions::default());
    let rows = [
        ("List000", 1, true, 101.0),
        ("List000", 2, false, 102.0),
        ("List000", 10, true, 110.0),
        ("List001", 1, false, 110.0),
        ("List001", 2, true, 120.0),
        ("List001", 2, true, 122.0),
        ("List001", 4, true, 130.0),
        ("List005", 5, true, 130.0),
        ("List020", 20, true, 220.0),
        ("List020", 19, true, 219.0),
    ];
    let ops: Vec<String> = rows
        .iter()
        .map(|(s, i, b, r)| {
            format!(r#"{{"op":"insert","table":"simple","row":{{"s":"{s}","i":{i},"b":{b},"r":{r:.1}}}}}"#)
        })
        .collect();
    let j = parse(format!("[{}]", ops.join(",")).as_bytes()).unwrap();
    assert!(server.transact(j.as_array().unwrap()).0.commit.is_some());
    let mut hub = Hub::new(server);
    let mut idl = Idl::new(Arc::new(meta), false);
    for c in ["s", "i", "r", "b"] {
        idl.add_column("simple", c).unwrap();
    }
    let ix = [
        idl.index_create("simple", &["s"]).unwrap(),
        idl.index_create("simple", &["i"]).unwrap(),
        idl.index_create("simple", &["s", "i"]).unwrap(),
        idl.index_create_ordered("simple", &[("s", false), ("i", true)])
            .unwrap(),
        idl.index_create("simple", &["i", "s"]).unwrap(),
        idl.index_create_ordered("simple", &[("i", true), ("s", false)])
            .unwrap(),
    ];
    let c = hub.add(idl).unwrap();
    (hub, c, ix)
}

/// Applies the original's filters to `out` and compares with the four
/// expected sections of `file`; `cut_s`/`cut_i` are where the first and
/// third filters cut the lines.
fn check(out: &[String], file: &str, cut_s: &str, cut_i: &str) {
    let pick = |prefix: &str, cut: &str| -> String {
        out.iter()
            .filter(|l| l[5..].starts_with(prefix))
            .map(|l| match l.find(cut) {
                Some(p) => format!("{}\n", &l[..p]),
                None => format!("{l}\n"),
            })
            .collect()
    };
    let sorted = |prefix: &str| -> String {
        let mut v: Vec<&String> = out.iter().filter(|l| l[5..].starts_with(prefix)).collect();
        v.sort_by(|a, b| {
            let fa: Vec<&str> = a.split(' ').collect();
            let fb: Vec<&str> = b.split(' ').collect();
            let na: u32 = fa[0].trim_end_matches(':').parse().unwrap();
            let nb: u32 = fb[0].trim_end_matches(':').parse().unwrap();
            na.cmp(&nb)
                .then(fa[1].cmp(fb[1]))
                .then(fa[2].cmp(fb[2]))
                .then(a.cmp(b))
        });
        v.iter().map(|l| format!("{l}\n")).collect()
    };
    let expected =
        std::fs::read_to_string(scenario::scenario_dir().join(format!("index/{file}"))).unwrap();
    let parts: Vec<&str> = expected.split("\n--\n").collect();
    assert_eq!(
        parts.len(),
        5,
        "expected file has 4 sections after the header"
    );
    assert_eq!(
        pick("s=", cut_s),
        format!("{}\n", parts[1].trim_end()),
        "order of s= lines"
    );
    assert_eq!(
        sorted("s="),
        format!("{}\n", parts[2].trim_end()),
        "s= rows"
    );
    assert_eq!(
        pick("i=", cut_i),
        format!("{}\n", parts[3].trim_end()),
        "order of i= lines"
    );
    assert_eq!(
        sorted("i="),
        format!("{}\n", parts[4].trim_end()),
        "i= rows"
    );
}

#[test]
fn compound_index_single_column() {
    let (mut hub, c, ix) = setup();
    let (s_index, i_index) = (ix[0], ix[1]);
    let mut out: Vec<String> = Vec::new();
    let t = hub.clients[c].idl.table_index("simple").unwrap();
    let (ci, cs) = {
        let idl = &hub.clients[c].idl;
        (
            idl.column_index(t, "i").unwrap(),
            idl.column_index(t, "s").unwrap(),
        )
    };

    // 1: by string index; 2: by integer index.
    for u in hub.clients[c].idl.index_all(s_index) {
        out.push(line(&hub.clients[c].idl, 1, u, true));
    }
    for u in hub.clients[c].idl.index_all(i_index) {
        out.push(line(&hub.clients[c].idl, 2, u, false));
    }
    // 3: s == "List001"; 4: i == 5; 5: i in [3, 7].
    for u in hub.clients[c]
        .idl
        .index_find_eq(s_index, &[Datum::scalar(Atom::String("List001".into()))])
    {
        out.push(line(&hub.clients[c].idl, 3, u, true));
    }
    for u in hub.clients[c].idl.index_find_eq(i_index, &int(5)) {
        out.push(line(&hub.clients[c].idl, 4, u, false));
    }
    for u in hub.clients[c]
        .idl
        .index_range(i_index, Some(&int(3)), Some(&int(7)))
    {
        out.push(line(&hub.clients[c].idl, 5, u, false));
    }
    // 6: delete i=4 and insert i=54 in a transaction; the index sees both
    // before the commit.
    {
        let idl = &mut hub.clients[c].idl;
        let del = idl.index_find_eq(i_index, &int(4));
        assert_eq!(del.len(), 1);
        idl.txn_begin();
        idl.txn_delete(t, del[0]);
        assert!(idl.index_find_eq(i_index, &int(4)).is_empty());
        let n = idl.txn_insert(t, None).unwrap();
        idl.txn_write(t, n, ci, Datum::scalar(Atom::Integer(54)));
        idl.txn_write(t, n, cs, Datum::scalar(Atom::String("Lista054".into())));
        assert_eq!(idl.index_find_eq(i_index, &int(54)), vec![n]);
    }
    assert_eq!(hub.commit(c).unwrap(), TxnStatus::Success);
    for u in hub.clients[c]
        .idl
        .index_range(i_index, Some(&int(3)), Some(&int(60)))
    {
        out.push(line(&hub.clients[c].idl, 6, u, false));
    }
    // 7: update i=10 to 30.
    {
        let idl = &mut hub.clients[c].idl;
        let up = idl.index_find_eq(i_index, &int(10));
        assert_eq!(up.len(), 1);
        idl.txn_begin();
        idl.txn_write(t, up[0], ci, Datum::scalar(Atom::Integer(30)));
        assert!(idl.index_find_eq(i_index, &int(10)).is_empty());
    }
    assert_eq!(hub.commit(c).unwrap(), TxnStatus::Success);
    for u in hub.clients[c]
        .idl
        .index_range(i_index, Some(&int(3)), Some(&int(60)))
    {
        out.push(line(&hub.clients[c].idl, 7, u, false));
    }
    // 8: the whole index.
    for u in hub.clients[c].idl.index_range(i_index, None, None) {
        out.push(line(&hub.clients[c].idl, 8, u, false));
    }

    check(&out, "compound-index-single-column.txt", " i=", " s=");
}

#[test]
fn compound_index_double_column() {
    let (mut hub, c, ix) = setup();
    let idl = &mut hub.clients[c].idl;
    let mut out: Vec<String> = Vec::new();
    let (si, sid, is, ids) = (ix[2], ix[3], ix[4], ix[5]);
    let s = |x: &str| Datum::scalar(Atom::String(x.into()));
    for u in idl.index_all(si) {
        out.push(line(idl, 1, u, true));
    }
    for u in idl.index_all(sid) {
        out.push(line(idl, 2, u, true));
    }
    for u in idl.index_find_eq(si, &[s("List000"), Datum::scalar(Atom::Integer(10))]) {
        out.push(line(idl, 3, u, true));
    }
    let from = [s("List001"), Datum::scalar(Atom::Integer(0))];
    let to = [s("List005"), Datum::scalar(Atom::Integer(100))];
    for u in idl.index_range(si, Some(&from), Some(&to)) {
        out.push(line(idl, 4, u, true));
    }
    for u in idl.index_all(is) {
        out.push(line(idl, 5, u, false));
    }
    for u in idl.index_all(ids) {
        out.push(line(idl, 6, u, false));
    }
    check(&out, "compound-index-double-column.txt", " b=", " b=");
}
