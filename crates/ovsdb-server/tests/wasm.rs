//! Browser tests (wasm32, run by the project test script with
//! chromedriver): the server model executes, notifies monitors and expires
//! a waiting transaction on its virtual clock the same in the browser as
//! natively.
#![cfg(target_arch = "wasm32")]

use ovsdb::json::parse;
use ovsdb_server::{DbMeta, Server, ServerOptions};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const SCHEMA: &str = r#"{"name":"t","version":"1.0.0","tables":{
 "T":{"isRoot":true,"columns":{"name":{"type":"string"},
   "set":{"type":{"key":"integer","min":0,"max":"unlimited"}}}}}}"#;

#[wasm_bindgen_test]
fn transact_and_monitor_in_the_browser() {
    let meta = DbMeta::from_text(SCHEMA).unwrap();
    let mut srv = Server::new(meta, ServerOptions::default());
    let s = srv.connect();
    let mon = parse(
        br#"{"method":"monitor_cond","params":["t","m",{"T":[{"columns":["name"]}]}],"id":1}"#,
    )
    .unwrap();
    let out = srv.handle(s, &mon);
    assert_eq!(out.len(), 1, "the monitor's reply");
    let ins = parse(br#"{"method":"transact","params":["t",{"op":"insert","table":"T","row":{"name":"a"}}],"id":2}"#)
        .unwrap();
    let out = srv.handle(s, &ins);
    // The update2 comes before the transaction's reply, as ovsdb-server
    // sends them.
    assert_eq!(out.len(), 2);
    assert!(out[0].1.to_string_compact().contains(r#""update2""#));
    assert!(out[1].1.to_string_compact().contains(r#""uuid""#));
    assert_eq!(srv.row_count("T"), 1);
}

#[wasm_bindgen_test]
fn waiting_transaction_expires_on_the_virtual_clock() {
    let meta = DbMeta::from_text(SCHEMA).unwrap();
    let mut srv = Server::new(meta, ServerOptions::default());
    let s = srv.connect();
    let req = parse(br#"{"method":"transact","params":["t",{"op":"wait","table":"T","where":[],"until":"!=","rows":[],"timeout":50}],"id":1}"#).unwrap();
    assert!(srv.handle(s, &req).is_empty());
    let out = srv.advance(60);
    assert!(out[0]
        .1
        .to_string_compact()
        .contains(r#""wait\" timed out after 60 ms"#));
}
