//! `convert --to full|diff`: re-encodes every transaction in the chosen
//! storage mode; everything else is copied byte for byte.
//!
//! Two walks of [`LogScan`]: a [`Plan`] (any damage ends the conversion
//! before anything is written; which entries a later one supersedes),
//! then a [`Converter`] that writes the new file record by record.

use crate::error::{ErrorKind, LogError};
use crate::framing::{write_record, Format, RawRecord};
use crate::raft::{RaftRecord, RecordBody};
use crate::record::TxnRecord;
use crate::replay::Db;
use crate::replay_pass::Plan;
use crate::scan::{split_data, Event, LogScan, ScanOptions, Verdict};
use ovsdb::json::Json;
use ovsdb::DatabaseSchema;
use ovsdb::StorageMode;

fn err(raw: &RawRecord<'_>, message: String) -> LogError {
    raw.error(ErrorKind::Replay { message })
}

fn copy_raw(out: &mut Vec<u8>, raw: &RawRecord<'_>) {
    out.extend_from_slice(raw.line);
    out.extend_from_slice(raw.body);
}

fn schema_of(raw: &RawRecord<'_>, j: &Json) -> Result<DatabaseSchema, LogError> {
    DatabaseSchema::from_json(j).map_err(|e| err(raw, format!("bad schema: {e}")))
}

/// Converts a whole file (either format) to `mode`. Any read or replay
/// error is returned (conversion needs the whole file).
///
/// Clustered: the header and every non-entry record are copied verbatim;
/// each entry with data gets its txn rewritten against the database state
/// before it and is re-encoded (byte-exact encoding of the other members).
/// Entries superseded by a later, lower index are copied unchanged.
/// Standalone: the schema record is copied; txn records are rewritten.
pub fn convert(bytes: &[u8], mode: StorageMode) -> Result<Vec<u8>, LogError> {
    let mut plan = Plan::default();
    LogScan::scan_all(bytes, ScanOptions::default(), &mut |ev| {
        plan.on_event(&ev);
        Verdict::Keep
    });
    let mut c = Converter::new(plan, mode)?;
    // The first walk verified every record's hash.
    let opts = ScanOptions {
        trust_sha1: true,
        ..c.options()
    };
    LogScan::scan_all(bytes, opts, &mut |ev| {
        c.on_event(&ev);
        Verdict::Keep
    });
    c.finish()
}

/// The second walk of [`convert`], as a consumer of [`LogScan`] events:
/// writes the converted file as the records arrive. Keeps the database
/// being replayed, the plan (superseded entry record numbers) and the
/// output written so far; not the input.
pub struct Converter {
    plan: Plan,
    mode: StorageMode,
    format: Format,
    db: Option<Db>,
    out: Vec<u8>,
    error: Option<LogError>,
}

impl Converter {
    /// A conversion to `mode` of the file a first walk planned. Damage
    /// is the error (nothing is converted): the first framing error if
    /// there is one, else the first record that does not decode (the
    /// order in which the conversion always checked).
    pub fn new(plan: Plan, mode: StorageMode) -> Result<Converter, LogError> {
        if let Some(e) = plan.framing.as_ref().or(plan.damage.as_ref()) {
            return Err(e.clone());
        }
        Ok(Converter {
            format: plan.format.unwrap_or(Format::Clustered),
            plan,
            mode,
            db: None,
            out: Vec::new(),
            error: None,
        })
    }

    /// The scanner options this consumer needs.
    pub fn options(&self) -> ScanOptions {
        ScanOptions::default()
    }

    /// Takes one event of the walk.
    pub fn on_event(&mut self, ev: &Event<'_>) {
        if self.error.is_some() {
            return;
        }
        let res = match ev {
            Event::Skipped(k) => Err(k.error.clone()),
            Event::Tail(e) => Err(e.clone()),
            _ => match ev.raw() {
                Some(raw) if raw.index < self.plan.records => self.record(ev, raw),
                _ => Ok(()),
            },
        };
        if let Err(e) = res {
            self.error = Some(e);
        }
    }

    fn record(&mut self, ev: &Event<'_>, raw: &RawRecord<'_>) -> Result<(), LogError> {
        match ev {
            Event::Schema { schema, .. } => {
                self.db = Some(Db::new(schema_of(raw, schema)?));
                copy_raw(&mut self.out, raw);
            }
            Event::Txn { .. } => {
                let j = raw.json()?;
                let d = self
                    .db
                    .as_mut()
                    .ok_or_else(|| err(raw, "no schema".into()))?;
                let t = d.transform_txn(&j, self.mode).map_err(|m| err(raw, m))?;
                d.apply_txn(&j).map_err(|m| err(raw, m))?;
                let body = crate::raft::body_bytes(
                    &TxnRecord::from_json(&t).map_err(|m| err(raw, m))?.to_json(),
                );
                write_record(&mut self.out, self.format.magic(), &body);
            }
            Event::Header { header, .. } => {
                if let Some((schema, txn)) =
                    header.snapshot.as_ref().and_then(|s| split_data(&s.data))
                {
                    let mut d = Db::new(schema_of(raw, schema)?);
                    if !txn.is_null() {
                        d.apply_txn(txn).map_err(|m| err(raw, m))?;
                    }
                    self.db = Some(d);
                }
                copy_raw(&mut self.out, raw);
            }
            Event::Entry {
                entry,
                comment,
                data: Some(bytes),
                ..
            } if !self.plan.structure.superseded.contains(&raw.index) => {
                let data = crate::rawtxn::parse_slice(bytes)
                    .map_err(|m| raw.error(ErrorKind::BadJson { message: m }))?;
                let Some((schema, txn)) = split_data(&data) else {
                    return Err(err(raw, "invalid commit format".into()));
                };
                let new_txn = self.rewrite(raw, schema, txn)?;
                let mut e = entry.clone();
                e.data = Some(Json::Array(vec![schema.clone(), new_txn]));
                let rec = RaftRecord {
                    comment: comment.clone(),
                    body: RecordBody::Entry(e),
                };
                write_record(&mut self.out, self.format.magic(), &rec.encode());
            }
            _ => copy_raw(&mut self.out, raw),
        }
        Ok(())
    }

    /// The entry's txn in the target mode (null for a conversion without
    /// data), applied to the database.
    fn rewrite(
        &mut self,
        raw: &RawRecord<'_>,
        schema: &Json,
        txn: &Json,
    ) -> Result<Json, LogError> {
        let mode = self.mode;
        Ok(match (schema, txn) {
            (_, Json::Null) => {
                let sc = schema_of(raw, schema)?;
                let cur = self
                    .db
                    .as_ref()
                    .ok_or_else(|| err(raw, "no schema".into()))?;
                self.db = Some(cur.convert(sc).map_err(|m| err(raw, m))?);
                Json::Null
            }
            (Json::Null, txn) => {
                let d = self
                    .db
                    .as_mut()
                    .ok_or_else(|| err(raw, "no schema".into()))?;
                let t = d.transform_txn(txn, mode).map_err(|m| err(raw, m))?;
                d.apply_txn(txn).map_err(|m| err(raw, m))?;
                t
            }
            (schema, txn) => {
                let mut d = Db::new(schema_of(raw, schema)?);
                let t = d.transform_txn(txn, mode).map_err(|m| err(raw, m))?;
                d.apply_txn(txn).map_err(|m| err(raw, m))?;
                self.db = Some(d);
                t
            }
        })
    }

    /// The converted file, or the first error.
    pub fn finish(self) -> Result<Vec<u8>, LogError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
}
