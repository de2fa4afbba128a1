//! `show`: the overviews operators know. OVN_Northbound like
//! `ovn-nbctl show` (its `print_ls`/`print_lr`), OVN_Southbound like
//! `ovn-sbctl show` and Open_vSwitch like `ovs-vsctl show` (both the
//! generic `cmd_show` of OVS's `lib/db-ctl-base.c` over a table list:
//! a row prints as `Table name` or its UUID, then its listed columns:
//! references to a listed table recurse one level deeper, a map to such
//! rows prints `key=name` lines, other columns print `column: value` when
//! not default; a table already being printed higher up the same branch
//! prints only its heading line; rows of a "weak reference" table that
//! point at the row print as `Table name`). Other databases: a table
//! summary. Rows come in UUID order (the tools use hash order).

use ovsdb::strings::datum_to_string;
use ovsdb::{Atom, Database, Datum, Row, TableSchema, Uuid};
use std::collections::HashMap;

struct ShowTable {
    table: &'static str,
    name_column: Option<&'static str>,
    columns: &'static [&'static str],
    /// (table, name column, reference column) of rows printed under the
    /// row they refer to.
    wref: Option<(&'static str, &'static str, &'static str)>,
}

const SB_TABLES: &[ShowTable] = &[
    ShowTable {
        table: "Chassis",
        name_column: Some("name"),
        columns: &["hostname", "encaps"],
        wref: Some(("Port_Binding", "logical_port", "chassis")),
    },
    ShowTable {
        table: "Encap",
        name_column: Some("type"),
        columns: &["ip", "options"],
        wref: None,
    },
];

const VS_TABLES: &[ShowTable] = &[
    ShowTable {
        table: "Open_vSwitch",
        name_column: None,
        columns: &["manager_options", "bridges", "ovs_version"],
        wref: None,
    },
    ShowTable {
        table: "Bridge",
        name_column: Some("name"),
        columns: &["controller", "fail_mode", "datapath_type", "ports"],
        wref: None,
    },
    ShowTable {
        table: "Port",
        name_column: Some("name"),
        columns: &["tag", "trunks", "interfaces"],
        wref: None,
    },
    ShowTable {
        table: "Interface",
        name_column: Some("name"),
        columns: &["type", "options", "error", "bfd_status"],
        wref: None,
    },
    ShowTable {
        table: "Controller",
        name_column: Some("target"),
        columns: &["is_connected"],
        wref: None,
    },
    ShowTable {
        table: "Manager",
        name_column: Some("target"),
        columns: &["is_connected"],
        wref: None,
    },
];

/// The overview text of `db`.
pub fn show(db: &Database) -> String {
    match db.schema().name.as_str() {
        "OVN_Northbound" => show_nb(db),
        "OVN_Southbound" => show_generic(db, SB_TABLES),
        "Open_vSwitch" => show_generic(db, VS_TABLES),
        _ => show_summary(db),
    }
}

/// One line per table: name and row count.
pub fn show_summary(db: &Database) -> String {
    let s = db.schema();
    let mut out = format!("database {} (schema {})\n", s.name, s.version);
    let mut names: Vec<&String> = s.tables.iter().map(|t| &t.name).collect();
    ovsdb::order::sort(&mut names);
    for n in names {
        let len = db.table(n).map_or(0, |t| t.len());
        out.push_str(&format!("    table {n}: {len} rows\n"));
    }
    out
}

fn get<'a>(db: &'a Database, ts: &TableSchema, row: &'a Row, col: &str) -> Option<&'a Datum> {
    let _ = db;
    row.get(ts, col)
}

fn str_col(ts: &TableSchema, row: &Row, col: &str) -> String {
    row.get(ts, col)
        .and_then(|d| d.as_scalar())
        .and_then(Atom::as_str)
        .unwrap_or("")
        .to_string()
}

fn opt_str(ts: &TableSchema, row: &Row, col: &str) -> Option<String> {
    row.get(ts, col)
        .and_then(|d| d.keys().next())
        .and_then(Atom::as_str)
        .map(str::to_string)
}

fn smap_get(ts: &TableSchema, row: &Row, col: &str, key: &str) -> Option<String> {
    row.get(ts, col)
        .and_then(Datum::as_map)
        .and_then(|m| m.get(&Atom::String(key.into())))
        .and_then(Atom::as_str)
        .map(str::to_string)
}

fn strings(ts: &TableSchema, row: &Row, col: &str) -> Vec<String> {
    row.get(ts, col)
        .map(|d| {
            d.keys()
                .filter_map(Atom::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn refs(ts: &TableSchema, row: &Row, col: &str) -> Vec<Uuid> {
    row.get(ts, col)
        .map(|d| d.keys().filter_map(Atom::as_uuid).collect())
        .unwrap_or_default()
}

fn alias(out: &mut String, ts: &TableSchema, row: &Row, key: &str) {
    if let Some(a) = smap_get(ts, row, "external_ids", key).filter(|a| !a.is_empty()) {
        out.push_str(&format!(" (aka {a})"));
    }
}

fn quoted_list(v: &[String]) -> String {
    let parts: Vec<String> = v.iter().map(|s| format!("\"{s}\"")).collect();
    format!("[{}]", parts.join(", "))
}

fn show_nb(db: &Database) -> String {
    let mut out = String::new();
    let table = |n: &str| db.table_schema(n).zip(db.table(n));
    if let Some((ts, t)) = table("Logical_Switch") {
        let lsp = table("Logical_Switch_Port");
        for row in t.rows.values() {
            out.push_str(&format!(
                "switch {} ({})",
                row.uuid,
                str_col(ts, row, "name")
            ));
            alias(&mut out, ts, row, "neutron:network_name");
            out.push('\n');
            let Some((ps, pt)) = lsp else { continue };
            for u in refs(ts, row, "ports") {
                let Some(p) = pt.get(&u) else { continue };
                out.push_str(&format!("    port {}", str_col(ps, p, "name")));
                alias(&mut out, ps, p, "neutron:port_name");
                out.push('\n');
                let ty = str_col(ps, p, "type");
                if !ty.is_empty() {
                    out.push_str(&format!("        type: {ty}\n"));
                }
                if let Some(parent) = opt_str(ps, p, "parent_name") {
                    out.push_str(&format!("        parent: {parent}\n"));
                }
                if let Some(tag) = get(db, ps, p, "tag").and_then(|d| d.keys().next()) {
                    out.push_str(&format!("        tag: {tag}\n"));
                }
                let addrs = strings(ps, p, "addresses");
                if !(addrs.is_empty() || addrs.len() == 1 && addrs[0] == "router") {
                    out.push_str(&format!("        addresses: {}\n", quoted_list(&addrs)));
                }
                if let Some(rp) = smap_get(ps, p, "options", "router-port") {
                    out.push_str(&format!("        router-port: {rp}\n"));
                }
            }
        }
    }
    if let Some((ts, t)) = table("Logical_Router") {
        let lrp = table("Logical_Router_Port");
        let nat = table("NAT");
        let gwc = table("Gateway_Chassis");
        for row in t.rows.values() {
            out.push_str(&format!(
                "router {} ({})",
                row.uuid,
                str_col(ts, row, "name")
            ));
            alias(&mut out, ts, row, "neutron:router_name");
            out.push('\n');
            if let Some((ps, pt)) = lrp {
                for u in refs(ts, row, "ports") {
                    let Some(p) = pt.get(&u) else { continue };
                    out.push_str(&format!("    port {}\n", str_col(ps, p, "name")));
                    out.push_str(&format!("        mac: \"{}\"\n", str_col(ps, p, "mac")));
                    let nets = strings(ps, p, "networks");
                    if !nets.is_empty() {
                        out.push_str(&format!("        networks: {}\n", quoted_list(&nets)));
                    }
                    if let Some(rt) = smap_get(ps, p, "options", "route_table") {
                        out.push_str(&format!("        route-table: {rt}\n"));
                    }
                    let gcs = refs(ps, p, "gateway_chassis");
                    if let (false, Some((gs, gt))) = (gcs.is_empty(), gwc) {
                        // Highest priority first, then name descending
                        // (compare_chassis_prio_ in ovn-nbctl.c).
                        let mut v: Vec<(i64, String, String)> = gcs
                            .iter()
                            .filter_map(|u| gt.get(u))
                            .map(|g| {
                                let prio = g
                                    .get(gs, "priority")
                                    .and_then(|d| d.as_scalar())
                                    .and_then(Atom::as_i64)
                                    .unwrap_or(0);
                                (prio, str_col(gs, g, "name"), str_col(gs, g, "chassis_name"))
                            })
                            .collect();
                        ovsdb::order::sort_by(&mut v, |a, b| {
                            b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1))
                        });
                        let names: Vec<&str> = v.iter().map(|x| x.2.as_str()).collect();
                        out.push_str(&format!("        gateway chassis: [{}]\n", names.join(" ")));
                    }
                }
            }
            if let Some((ns, nt)) = nat {
                for u in refs(ts, row, "nat") {
                    let Some(n) = nt.get(&u) else { continue };
                    out.push_str(&format!("    nat {}\n", n.uuid));
                    out.push_str(&format!(
                        "        external ip: \"{}\"\n",
                        str_col(ns, n, "external_ip")
                    ));
                    let range = str_col(ns, n, "external_port_range");
                    if !range.is_empty() {
                        out.push_str(&format!("        external port(s): \"{range}\"\n"));
                    }
                    out.push_str(&format!(
                        "        logical ip: \"{}\"\n",
                        str_col(ns, n, "logical_ip")
                    ));
                    out.push_str(&format!("        type: \"{}\"\n", str_col(ns, n, "type")));
                }
            }
        }
    }
    out
}

fn show_generic(db: &Database, tables: &[ShowTable]) -> String {
    let mut out = String::new();
    let Some(first) = tables.first() else {
        return out;
    };
    let mut shown: Vec<&str> = Vec::new();
    let mut wrefs = Wrefs::default();
    if let Some(t) = db.table(first.table) {
        for row in t.rows.values() {
            show_row(db, tables, first, row, 0, &mut shown, &mut wrefs, &mut out);
        }
    }
    out
}

/// Per (table, column) of a [`ShowTable::wref`], the rows of that table by
/// the row their column points to, in the table's order: one pass over
/// the table for all the rows shown, where asking each row was a pass
/// each (120 chassis × 4 000 port bindings on a Southbound database).
type Wrefs<'d> = HashMap<(&'static str, &'static str), HashMap<Uuid, Vec<&'d Row>>>;

fn wref_rows<'w, 'd>(
    db: &'d Database,
    wrefs: &'w mut Wrefs<'d>,
    wt: &'static str,
    ref_col: &'static str,
) -> &'w HashMap<Uuid, Vec<&'d Row>> {
    wrefs.entry((wt, ref_col)).or_insert_with(|| {
        let mut by: HashMap<Uuid, Vec<&'d Row>> = HashMap::new();
        if let (Some(ws), Some(t)) = (db.table_schema(wt), db.table(wt)) {
            for r in t.rows.values() {
                let to = r
                    .get(ws, ref_col)
                    .and_then(|d| d.keys().next())
                    .and_then(Atom::as_uuid);
                if let Some(u) = to {
                    by.entry(u).or_default().push(r);
                }
            }
        }
        by
    })
}

fn indent(out: &mut String, level: usize) {
    out.push_str(&" ".repeat(level * 4));
}

#[allow(clippy::too_many_arguments)]
fn show_row<'t, 'd>(
    db: &'d Database,
    tables: &'t [ShowTable],
    show: &'t ShowTable,
    row: &Row,
    level: usize,
    shown: &mut Vec<&'t str>,
    wrefs: &mut Wrefs<'d>,
    out: &mut String,
) {
    let Some(ts) = db.table_schema(show.table) else {
        return;
    };
    indent(out, level);
    match show
        .name_column
        .and_then(|c| ts.column(c).map(|cs| (c, cs)))
    {
        Some((c, cs)) => {
            let d = row.get(ts, c).cloned().unwrap_or_default();
            out.push_str(&format!("{} {}", show.table, datum_to_string(&d, &cs.ty)));
        }
        None if show.name_column.is_some() => {
            // Column unknown to this schema: the IDL reads its default.
            out.push_str(&format!("{} \"\"", show.table));
        }
        None => out.push_str(&row.uuid.to_string()),
    }
    out.push('\n');
    if shown.contains(&show.table) {
        return;
    }
    shown.push(show.table);
    let find = |name: &str| tables.iter().find(|t| t.table == name);
    for &col in show.columns {
        let Some(cs) = ts.column(col) else { continue };
        let d = row.get(ts, col).cloned().unwrap_or_default();
        let ty = &cs.ty;
        if let Some(rt) = ty.key.ref_table.as_deref() {
            if let Some(rs) = find(rt) {
                if let Some(t) = db.table(rt) {
                    for u in d.keys().filter_map(Atom::as_uuid) {
                        if let Some(r) = t.get(&u) {
                            show_row(db, tables, rs, r, level + 1, shown, wrefs, out);
                        }
                    }
                }
                continue;
            }
        } else if let (Some(vt), Datum::Map(m)) = (ty.value.as_ref(), &d) {
            if let Some(rt) = vt.ref_table.as_deref() {
                if let Some((rs, name_col)) = find(rt).and_then(|r| r.name_column.map(|n| (r, n))) {
                    indent(out, level + 1);
                    out.push_str(&format!("{col}:\n"));
                    let rts = db.table_schema(rs.table);
                    for (k, v) in m {
                        indent(out, level + 2);
                        out.push_str(&format!("{k}="));
                        let target = v
                            .as_uuid()
                            .and_then(|u| db.row(rs.table, &u))
                            .zip(rts)
                            .and_then(|(r, s)| Some((r.get(s, name_col)?, s.column(name_col)?)));
                        match target {
                            Some((nd, ncs)) => out.push_str(&datum_to_string(nd, &ncs.ty)),
                            None => out.push_str("\"<null>\""),
                        }
                        out.push('\n');
                    }
                    continue;
                }
            }
        }
        if !d.is_default(ty) {
            indent(out, level + 1);
            out.push_str(&format!("{col}: {}\n", datum_to_string(&d, ty)));
        }
    }
    if let Some((wt, name_col, ref_col)) = show.wref {
        if let Some(ws) = db.table_schema(wt) {
            let ncs = ws.column(name_col);
            let pointing = wref_rows(db, wrefs, wt, ref_col).get(&row.uuid);
            for r in pointing.into_iter().flatten() {
                indent(out, level + 1);
                let name = match (r.get(ws, name_col), ncs) {
                    (Some(d), Some(c)) => datum_to_string(d, &c.ty),
                    _ => "\"\"".into(),
                };
                out.push_str(&format!("{wt} {name}\n"));
            }
        }
    }
    shown.retain(|t| *t != show.table);
}
