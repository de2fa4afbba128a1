//! Keeping the last opened files in this browser (opt-in), so a reload can
//! reopen them: IndexedDB database `ovsdb-scope`, object store `files`, key
//! `last` (names and contents) and key `meta` (names, total bytes, time
//! saved; read at start without loading the contents). Nothing leaves the
//! browser. The choice itself is a preference (`crate::prefs::keep`).

use js_sys::{Array, ArrayBuffer, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbObjectStore, IdbOpenDbRequest, IdbRequest, IdbTransactionMode};

const DB: &str = "ovsdb-scope";
const STORE: &str = "files";

/// What is stored, without the contents.
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    pub names: Vec<String>,
    pub bytes: f64,
    pub saved_ms: f64,
}

fn js_err(what: &str, e: JsValue) -> String {
    format!(
        "{what}: {}",
        e.as_string().unwrap_or_else(|| format!("{e:?}"))
    )
}

/// Waits for an IndexedDB request and returns its result.
async fn done(req: &IdbRequest) -> Result<JsValue, String> {
    let req2 = req.clone();
    let promise = Promise::new(&mut |resolve, reject| {
        let r = req2.clone();
        let ok = Closure::once_into_js(move |_e: web_sys::Event| {
            let _ = resolve.call1(&JsValue::NULL, &r.result().unwrap_or(JsValue::UNDEFINED));
        });
        let r = req2.clone();
        let fail = Closure::once_into_js(move |_e: web_sys::Event| {
            let msg = r
                .error()
                .ok()
                .flatten()
                .map(|e| e.message())
                .unwrap_or_else(|| "request failed".into());
            let _ = reject.call1(&JsValue::NULL, &JsValue::from_str(&msg));
        });
        req2.set_onsuccess(Some(ok.unchecked_ref()));
        req2.set_onerror(Some(fail.unchecked_ref()));
    });
    JsFuture::from(promise)
        .await
        .map_err(|e| js_err("browser storage", e))
}

async fn open() -> Result<IdbDatabase, String> {
    let factory = web_sys::window()
        .and_then(|w| w.indexed_db().ok().flatten())
        .ok_or("this browser has no IndexedDB")?;
    let req: IdbOpenDbRequest = factory
        .open_with_u32(DB, 1)
        .map_err(|e| js_err("open browser storage", e))?;
    let r = req.clone();
    let upgrade = Closure::once_into_js(move |_e: web_sys::Event| {
        if let Ok(db) = r.result().and_then(|d| d.dyn_into::<IdbDatabase>()) {
            if !db.object_store_names().contains(STORE) {
                let _ = db.create_object_store(STORE);
            }
        }
    });
    req.set_onupgradeneeded(Some(upgrade.unchecked_ref()));
    let db = done(&req).await?;
    db.dyn_into::<IdbDatabase>()
        .map_err(|_| "browser storage did not open".to_string())
}

fn store(db: &IdbDatabase, mode: IdbTransactionMode) -> Result<IdbObjectStore, String> {
    db.transaction_with_str_and_mode(STORE, mode)
        .and_then(|t| t.object_store(STORE))
        .map_err(|e| js_err("browser storage", e))
}

fn meta_js(m: &Meta) -> JsValue {
    let o = js_sys::Object::new();
    let names: Array = m.names.iter().map(|n| JsValue::from_str(n)).collect();
    let _ = Reflect::set(&o, &"names".into(), &names);
    let _ = Reflect::set(&o, &"bytes".into(), &m.bytes.into());
    let _ = Reflect::set(&o, &"saved".into(), &m.saved_ms.into());
    o.into()
}

fn names_of(v: &JsValue) -> Vec<String> {
    Reflect::get(v, &"names".into())
        .ok()
        .map(|a| {
            Array::from(&a)
                .iter()
                .filter_map(|n| n.as_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Stores copies of `buffers` (the originals may be transferred to the
/// parser worker) under `names`, replacing what was kept before.
pub async fn save(names: Vec<String>, buffers: Vec<ArrayBuffer>) -> Result<Meta, String> {
    let copies: Array = buffers.iter().map(|b| JsValue::from(b.slice(0))).collect();
    let meta = Meta {
        bytes: buffers.iter().map(|b| b.byte_length() as f64).sum(),
        names,
        saved_ms: js_sys::Date::now(),
    };
    let db = open().await?;
    let st = store(&db, IdbTransactionMode::Readwrite)?;
    let o = meta_js(&meta);
    let _ = Reflect::set(&o, &"buffers".into(), &copies);
    let req = st
        .put_with_key(&o, &"last".into())
        .map_err(|e| js_err("store the files", e))?;
    done(&req).await?;
    let req = st
        .put_with_key(&meta_js(&meta), &"meta".into())
        .map_err(|e| js_err("store the file list", e))?;
    done(&req).await?;
    db.close();
    Ok(meta)
}

/// The value stored under `key`, if any.
async fn get(key: &str) -> Result<Option<JsValue>, String> {
    let db = open().await?;
    let st = store(&db, IdbTransactionMode::Readonly)?;
    let req = st
        .get(&key.into())
        .map_err(|e| js_err("read browser storage", e))?;
    let v = done(&req).await?;
    db.close();
    Ok(Some(v).filter(|v| !v.is_undefined() && !v.is_null()))
}

/// What is kept, without reading the contents.
pub async fn meta() -> Result<Option<Meta>, String> {
    let Some(v) = get("meta").await? else {
        return Ok(None);
    };
    let num = |k: &str| {
        Reflect::get(&v, &k.into())
            .ok()
            .and_then(|x| x.as_f64())
            .unwrap_or(0.0)
    };
    Ok(Some(Meta {
        names: names_of(&v),
        bytes: num("bytes"),
        saved_ms: num("saved"),
    }))
}

/// The kept files' names and contents.
pub async fn load() -> Result<Option<(Vec<String>, Vec<ArrayBuffer>)>, String> {
    let Some(v) = get("last").await? else {
        return Ok(None);
    };
    let names = names_of(&v);
    let buffers: Vec<ArrayBuffer> = Reflect::get(&v, &"buffers".into())
        .ok()
        .map(|a| {
            Array::from(&a)
                .iter()
                .filter_map(|b| b.dyn_into::<ArrayBuffer>().ok())
                .collect()
        })
        .unwrap_or_default();
    if names.len() != buffers.len() || names.is_empty() {
        return Err("the kept files are incomplete; open them again".into());
    }
    Ok(Some((names, buffers)))
}

/// Deletes what is kept.
pub async fn forget() -> Result<(), String> {
    let db = open().await?;
    let st = store(&db, IdbTransactionMode::Readwrite)?;
    let req = st.clear().map_err(|e| js_err("forget the files", e))?;
    done(&req).await?;
    db.close();
    Ok(())
}
