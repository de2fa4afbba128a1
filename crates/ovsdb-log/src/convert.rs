//! `convert --to full|diff`: re-encodes every transaction in the chosen
//! storage mode; everything else is copied byte for byte.

use crate::error::{ErrorKind, LogError};
use crate::framing::{write_record, Format, Framer, RawRecord};
use crate::raft::{RaftRecord, RecordBody};
use crate::record::{Record, TxnRecord};
use crate::replay::{Db, Mode};
use crate::sizes::scan_clustered;
use ovsdb::json::Json;
use ovsdb::DatabaseSchema;

fn err(raw: &RawRecord<'_>, message: String) -> LogError {
    raw.error(ErrorKind::Replay { message })
}

fn copy_raw(out: &mut Vec<u8>, bytes: &[u8], raw: &RawRecord<'_>) {
    out.extend_from_slice(&bytes[raw.offset as usize..raw.end() as usize]);
}

/// Converts a whole file (either format) to `mode`. Any read or replay
/// error is returned (conversion needs the whole file).
///
/// Clustered: the header and every non-entry record are copied verbatim;
/// each entry with data gets its txn rewritten against the database state
/// before it and is re-encoded (byte-exact encoding of the other members).
/// Entries superseded by a later, lower index are copied unchanged.
/// Standalone: the schema record is copied; txn records are rewritten.
pub fn convert(bytes: &[u8], mode: Mode) -> Result<Vec<u8>, LogError> {
    let mut fr = Framer::new(bytes);
    let mut all = Vec::new();
    for raw in fr.by_ref() {
        all.push(raw?);
    }
    let format = fr.format().unwrap_or(Format::Clustered);
    let mut out = Vec::with_capacity(bytes.len());
    let mut db: Option<Db> = None;
    if format == Format::Standalone {
        for raw in &all {
            let j = raw.json()?;
            if raw.index == 0 {
                let s = DatabaseSchema::from_json(&j)
                    .map_err(|e| err(raw, format!("bad schema: {e}")))?;
                db = Some(Db::new(s));
                copy_raw(&mut out, bytes, raw);
                continue;
            }
            let d = db.as_mut().ok_or_else(|| err(raw, "no schema".into()))?;
            let t = d.transform_txn(&j, mode).map_err(|m| err(raw, m))?;
            d.apply_txn(&j).map_err(|m| err(raw, m))?;
            let body = crate::raft::body_bytes(
                &TxnRecord::from_json(&t).map_err(|m| err(raw, m))?.to_json(),
            );
            write_record(&mut out, format.magic(), &body);
        }
        return Ok(out);
    }
    let scan = scan_clustered(&all);
    if let Some(e) = scan.error {
        return Err(e);
    }
    for raw in &all {
        let rec = raw.decode(Format::Clustered)?;
        match rec {
            Record::Header(h) => {
                if let Some(s) = &h.snapshot {
                    if let Some([schema, txn]) = s.data.as_array() {
                        let sc = DatabaseSchema::from_json(schema)
                            .map_err(|e| err(raw, format!("bad schema: {e}")))?;
                        let mut d = Db::new(sc);
                        if !txn.is_null() {
                            d.apply_txn(txn).map_err(|m| err(raw, m))?;
                        }
                        db = Some(d);
                    }
                }
                copy_raw(&mut out, bytes, raw);
            }
            Record::Raft(RaftRecord {
                comment,
                body: RecordBody::Entry(mut e),
            }) if e.data.is_some() && !scan.superseded.contains(&raw.index) => {
                let data = e.data.take().unwrap_or(Json::Null);
                let Some([schema, txn]) = data.as_array() else {
                    return Err(err(raw, "invalid commit format".into()));
                };
                let new_txn = match (schema, txn) {
                    (_, Json::Null) => {
                        let sc = DatabaseSchema::from_json(schema)
                            .map_err(|e| err(raw, format!("bad schema: {e}")))?;
                        let cur = db.as_ref().ok_or_else(|| err(raw, "no schema".into()))?;
                        db = Some(cur.convert(sc).map_err(|m| err(raw, m))?);
                        Json::Null
                    }
                    (Json::Null, txn) => {
                        let d = db.as_mut().ok_or_else(|| err(raw, "no schema".into()))?;
                        let t = d.transform_txn(txn, mode).map_err(|m| err(raw, m))?;
                        d.apply_txn(txn).map_err(|m| err(raw, m))?;
                        t
                    }
                    (schema, txn) => {
                        let sc = DatabaseSchema::from_json(schema)
                            .map_err(|e| err(raw, format!("bad schema: {e}")))?;
                        let mut d = Db::new(sc);
                        let t = d.transform_txn(txn, mode).map_err(|m| err(raw, m))?;
                        d.apply_txn(txn).map_err(|m| err(raw, m))?;
                        db = Some(d);
                        t
                    }
                };
                e.data = Some(Json::Array(vec![schema.clone(), new_txn]));
                let rec = RaftRecord {
                    comment,
                    body: RecordBody::Entry(e),
                };
                write_record(&mut out, format.magic(), &rec.encode());
            }
            _ => copy_raw(&mut out, bytes, raw),
        }
    }
    Ok(out)
}
