//! Issue 5 says the simulator should make its entries with the IDL's server
//! model. This cross-check runs every workload op of the simulator as a
//! real `transact` request on `idl::server::Server` (same row UUIDs, same
//! comment and date) and compares the entry text `idl::server::entry_data`
//! makes with the simulator's templates, in both storage modes. They agree
//! byte for byte in size (the sizes are what the cost model and the
//! acl-portgroup calibration use; member order may differ).

use idl::server::{entry_data, Server, ServerOptions};
use ovsdb::Json;
use raft_sim::rng::Rng;
use raft_sim::txn::{NbState, Op, NB_SCHEMA};

fn j(text: &str) -> Json {
    ovsdb::json::parse(text.as_bytes()).unwrap()
}

fn uuid_str(u: &[u8; 36]) -> String {
    String::from_utf8(u.to_vec()).unwrap()
}

/// The transact request ovn-nbctl would send for `op` (as the simulator
/// composed it: same new row UUID).
fn request(op: &Op, st: &NbState, new: Option<String>, comment: &str) -> Vec<Json> {
    let uu = |u: &[u8; 36]| format!("[\"uuid\",\"{}\"]", uuid_str(u));
    let new = new.unwrap_or_default();
    let mut ops: Vec<String> = Vec::new();
    match op {
        Op::Init => ops.push(format!(
            r#"{{"op":"insert","table":"NB_Global","row":{{}},"uuid":"{new}"}}"#
        )),
        Op::LsAdd(k) => ops.push(format!(
            r#"{{"op":"insert","table":"Logical_Switch","row":{{"name":"ls{k}"}},"uuid":"{new}"}}"#
        )),
        Op::PgAdd => ops.push(format!(
            r#"{{"op":"insert","table":"Port_Group","row":{{"name":"pg1"}},"uuid":"{new}"}}"#
        )),
        Op::AclAdd(p) => {
            ops.push(format!(
                r#"{{"op":"insert","table":"ACL","row":{{"action":"drop","direction":"from-lport","log":true,"match":"udp","priority":{p}}},"uuid":"{new}"}}"#
            ));
            let pg = uu(st.pg.as_ref().unwrap());
            ops.push(format!(
                r#"{{"op":"mutate","table":"Port_Group","where":[["_uuid","==",{pg}]],"mutations":[["acls","insert",["uuid","{new}"]]]}}"#
            ));
        }
        Op::AclDelBatch(b) => {
            let mut sorted = st.acls.clone();
            sorted.sort();
            let gone: Vec<String> = sorted
                .iter()
                .take(*b as usize)
                .map(|(_, u)| uu(u))
                .collect();
            let pg = uu(st.pg.as_ref().unwrap());
            ops.push(format!(
                r#"{{"op":"mutate","table":"Port_Group","where":[["_uuid","==",{pg}]],"mutations":[["acls","delete",["set",[{}]]]]}}"#,
                gone.join(",")
            ));
        }
        Op::PgDel => {
            let pg = uu(st.pg.as_ref().unwrap());
            ops.push(format!(
                r#"{{"op":"delete","table":"Port_Group","where":[["_uuid","==",{pg}]]}}"#
            ));
        }
        Op::LspAdd(k) => {
            ops.push(format!(
                r#"{{"op":"insert","table":"Logical_Switch_Port","row":{{"name":"lsp{k}"}},"uuid":"{new}"}}"#
            ));
            let sw = uu(st.last_switch.as_ref().unwrap());
            ops.push(format!(
                r#"{{"op":"mutate","table":"Logical_Switch","where":[["_uuid","==",{sw}]],"mutations":[["ports","insert",["uuid","{new}"]]]}}"#
            ));
        }
    }
    let mut v: Vec<Json> = vec![Json::String("OVN_Northbound".into())];
    v.extend(ops.iter().map(|o| j(o)));
    let c = Json::String(comment.into()).to_string_compact();
    v.push(j(&format!(r#"{{"op":"comment","comment":{c}}}"#)));
    v
}

#[test]
fn idl_server_model_makes_entries_of_the_simulators_sizes() {
    let mut server = Server::from_schema_text(NB_SCHEMA, ServerOptions::default()).unwrap();
    let mut st = NbState::default();
    let mut rng = Rng::new(7);
    let mut ops = vec![Op::Init, Op::PgAdd];
    ops.extend((0..40).map(|p| Op::AclAdd(1000 + p)));
    ops.push(Op::AclDelBatch(10));
    ops.push(Op::LsAdd(1));
    ops.extend((1..=20).map(Op::LspAdd));
    ops.push(Op::LsAdd(2));
    // 30 ACLs are still in the group: deleting it garbage-collects them.
    ops.push(Op::PgDel);
    let prefix = "ovn-nbctl: ovn-nbctl --db=unix:s1.sock";
    let mut worst: f64 = 0.0;
    for (i, op) in ops.iter().enumerate() {
        let t = st.compose(op, prefix, 1_795_986_960_000 + i as u64, &mut rng);
        let full = j(&t.full);
        let obj = full.as_object().unwrap();
        let comment = obj
            .get("_comment")
            .and_then(|c| c.as_str())
            .unwrap()
            .to_string();
        let date = match obj.get("_date") {
            Some(Json::Integer(d)) => *d,
            _ => panic!("no _date"),
        };
        let req = request(op, &st, t.inserted.as_ref().map(uuid_str), &comment);
        let (out, _) = server.transact(&req[1..]);
        let commit = out
            .commit
            .unwrap_or_else(|| panic!("{op:?}: no commit: {}", out.result.to_string_compact()));
        for diff in [false, true] {
            let e = entry_data(&server.meta, &commit, diff, date);
            let txn = &e.as_array().unwrap()[1];
            let idl_len = txn.to_string_compact().len();
            let sim_len = t.text(diff).len();
            let rel = (idl_len as f64 - sim_len as f64).abs() / sim_len as f64;
            worst = worst.max(rel);
            assert_eq!(
                idl_len,
                sim_len,
                "{op:?} diff={diff}:\n idl {}\n sim {}",
                txn.to_string_compact(),
                t.text(diff)
            );
        }
        st.apply(&t);
    }
    println!("worst relative size difference: {worst}");
}
