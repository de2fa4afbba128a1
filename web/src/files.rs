//! What the user hands the page, as `Blob`s with paths: picked files (with
//! their folder path when a folder was picked), dropped files and folders
//! (walked recursively through `webkitGetAsEntry`), bundled samples
//! (fetched as Blobs) and the copies kept in IndexedDB. The page never reads
//! the bytes: the worker reads them in chunks.

use js_sys::{Array, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Blob, DataTransfer, File, FileList, FileSystemDirectoryEntry, FileSystemDirectoryReader,
    FileSystemEntry, FileSystemFileEntry,
};

/// A file to read and the path it is known by.
pub type Named = (String, Blob);

/// The files of a picker: `webkitRelativePath` when a folder was picked.
pub fn from_list(list: Option<FileList>) -> Vec<Named> {
    let mut out = Vec::new();
    let Some(list) = list else { return out };
    for i in 0..list.length() {
        if let Some(f) = list.get(i) {
            let rel = Reflect::get(&f, &"webkitRelativePath".into())
                .ok()
                .and_then(|v| v.as_string())
                .filter(|s| !s.is_empty());
            out.push((rel.unwrap_or_else(|| f.name()), f.into()));
        }
    }
    out
}

/// What a drop holds, taken synchronously (the items die with the event):
/// file-system entries where the browser gives them, else plain files.
pub enum Dropped {
    Entry(FileSystemEntry),
    File(File),
}

pub fn from_drop(dt: Option<DataTransfer>) -> Vec<Dropped> {
    let mut out = Vec::new();
    let Some(dt) = dt else { return out };
    let items = dt.items();
    for i in 0..items.length() {
        let Some(item) = items.get(i) else { continue };
        if item.kind() != "file" {
            continue;
        }
        match item.webkit_get_as_entry() {
            Ok(Some(e)) => out.push(Dropped::Entry(e)),
            _ => {
                if let Ok(Some(f)) = item.get_as_file() {
                    out.push(Dropped::File(f));
                }
            }
        }
    }
    if out.is_empty() {
        if let Some(list) = dt.files() {
            for i in 0..list.length() {
                if let Some(f) = list.get(i) {
                    out.push(Dropped::File(f));
                }
            }
        }
    }
    out
}

fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            Reflect::get(&e, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

async fn read_entries(r: &FileSystemDirectoryReader) -> Result<Array, String> {
    let p = Promise::new(&mut |ok, fail| {
        if let Err(e) = r.read_entries_with_callback_and_callback(&ok, &fail) {
            let _ = fail.call1(&JsValue::NULL, &e);
        }
    });
    JsFuture::from(p)
        .await
        .map(|v| v.unchecked_into())
        .map_err(js_err)
}

async fn entry_file(e: &FileSystemFileEntry) -> Result<File, String> {
    let p = Promise::new(&mut |ok, fail| e.file_with_callback_and_callback(&ok, &fail));
    JsFuture::from(p)
        .await
        .map(|v| v.unchecked_into())
        .map_err(js_err)
}

/// Every file under the dropped entries, folders walked recursively (each
/// folder's files in name order), as `folder/sub/file` paths.
pub async fn walk(dropped: Vec<Dropped>) -> Result<Vec<Named>, String> {
    let mut out = Vec::new();
    for d in dropped {
        match d {
            Dropped::File(f) => out.push((f.name(), f.into())),
            Dropped::Entry(e) if e.is_file() => {
                let f = entry_file(e.unchecked_ref()).await?;
                out.push((f.name(), f.into()));
            }
            Dropped::Entry(e) => {
                let mut found = Vec::new();
                let mut dirs = vec![e];
                while let Some(dir) = dirs.pop() {
                    let reader = dir
                        .unchecked_ref::<FileSystemDirectoryEntry>()
                        .create_reader();
                    // readEntries gives the entries in batches until an empty one.
                    loop {
                        let batch = read_entries(&reader).await?;
                        if batch.length() == 0 {
                            break;
                        }
                        for x in batch.iter() {
                            let x: FileSystemEntry = x.unchecked_into();
                            if x.is_directory() {
                                dirs.push(x);
                            } else if x.is_file() {
                                let path = x.full_path().trim_start_matches('/').to_string();
                                let f = entry_file(x.unchecked_ref()).await?;
                                found.push((path, Blob::from(f)));
                            }
                        }
                    }
                }
                ovsdb::order::sort_by(&mut found, |a, b| a.0.cmp(&b.0));
                out.extend(found);
            }
        }
    }
    Ok(out)
}

/// A bundled file, fetched as a Blob.
pub async fn fetch_blob(url: String) -> Result<Blob, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_str(&url))
        .await
        .map_err(|e| format!("{url}: {}", js_err(e)))?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "bad response")?;
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let b = JsFuture::from(resp.blob().map_err(js_err)?)
        .await
        .map_err(|e| format!("{url}: {}", js_err(e)))?;
    b.dyn_into::<Blob>().map_err(|_| "not a Blob".to_string())
}

/// The bytes of Blobs, for the copies kept in IndexedDB (only when the
/// user asks to keep the files).
pub async fn buffers(blobs: &[Blob]) -> Result<Vec<js_sys::ArrayBuffer>, String> {
    let mut out = Vec::new();
    for b in blobs {
        let v = JsFuture::from(b.array_buffer()).await.map_err(js_err)?;
        out.push(v.unchecked_into());
    }
    Ok(out)
}

/// Blobs over kept bytes.
pub fn blobs(buffers: &[js_sys::ArrayBuffer]) -> Vec<Blob> {
    buffers
        .iter()
        .filter_map(|b| Blob::new_with_buffer_source_sequence(&Array::of1(b)).ok())
        .collect()
}
