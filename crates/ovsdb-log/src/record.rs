//! Lazy decoding of framed records into typed records, for both formats.

use crate::error::{ErrorKind, LogError};
use crate::framing::{Format, RawRecord};
use crate::raft::{self, ClusterHeader, RaftRecord};
use ovsdb::json::{self, Json, Object};

impl<'a> RawRecord<'a> {
    /// Parses the body as JSON; the log layer requires an object.
    pub fn json(&self) -> Result<Json, LogError> {
        match json::parse(self.body) {
            Ok(j @ Json::Object(_)) => Ok(j),
            Ok(_) => Err(self.error(ErrorKind::NotObject)),
            Err(e) => Err(self.error(ErrorKind::BadJson {
                message: e.to_string(),
            })),
        }
    }

    /// Decodes the record as record number `self.index` of a file of
    /// `format`.
    pub fn decode(&self, format: Format) -> Result<Record, LogError> {
        let j = self.json()?;
        let bad = |m: String| self.error(ErrorKind::BadRecord { message: m });
        Ok(match (format, self.index) {
            (Format::Clustered, 0) => Record::Header(raft::parse_header(&j).map_err(bad)?),
            (Format::Clustered, _) => Record::Raft(raft::parse_record(&j).map_err(bad)?),
            (Format::Standalone, 0) => Record::Schema(j),
            (Format::Standalone, _) => Record::Txn(TxnRecord::from_json(&j).map_err(bad)?),
        })
    }
}

impl<'a> RawRecord<'a> {
    /// Like [`RawRecord::decode`], but the big payloads (`data` and
    /// `prev_data` of clustered records, the tables of standalone txn
    /// records) are only delimited, not decoded: they come back as empty
    /// placeholders. Record 0 of a standalone file (the schema) is decoded
    /// fully. Much faster; for learning a file's structure.
    pub fn decode_light(&self, format: Format) -> Result<Record, LogError> {
        self.decode_light_payload(format).map(|(r, _)| r)
    }

    /// [`RawRecord::decode_light`], plus the byte range (within the body)
    /// of a clustered record's `data` member, if any.
    pub fn decode_light_payload(
        &self,
        format: Format,
    ) -> Result<(Record, Option<(usize, usize)>), LogError> {
        self.decode_light_payload_with(format, false)
    }

    /// [`RawRecord::decode_light_payload`]; `known_good`: the record is one
    /// an earlier walk read without damage, so its `data` is delimited by
    /// its brackets alone ([`crate::skim::container_end`]).
    pub fn decode_light_payload_with(
        &self,
        format: Format,
        known_good: bool,
    ) -> Result<(Record, Option<(usize, usize)>), LogError> {
        let bad = |m: String| self.error(ErrorKind::BadRecord { message: m });
        let badjson = |m: String| {
            if m == "not a JSON object" {
                self.error(ErrorKind::NotObject)
            } else {
                self.error(ErrorKind::BadJson { message: m })
            }
        };
        match (format, self.index) {
            (Format::Standalone, 0) => self.decode(format).map(|r| (r, None)),
            (Format::Standalone, _) => {
                let b = self.body;
                let i = b
                    .iter()
                    .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
                    .unwrap_or(b.len());
                if b.get(i) != Some(&b'{') {
                    return Err(if b.get(i) == Some(&b'[') {
                        match crate::skim::skip_value(b, i) {
                            Err(m) => badjson(m),
                            Ok(_) => self.error(ErrorKind::NotObject),
                        }
                    } else {
                        badjson(format!(
                            "line 0, column {i}, byte {i}: syntax error at beginning of input"
                        ))
                    });
                }
                let end = crate::skim::skip_value(b, i).map_err(badjson)?;
                if b[end..]
                    .iter()
                    .any(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
                {
                    return Err(badjson(format!(
                        "byte {end}: trailing garbage at end of input"
                    )));
                }
                Ok((
                    Record::Txn(TxnRecord {
                        tables: Vec::new(),
                        date: None,
                        comment: None,
                        is_diff: None,
                    }),
                    None,
                ))
            }
            (Format::Clustered, idx) => {
                let (j, raws, _) = crate::skim::skim_object_hook(self.body, |b, i| {
                    known_good
                        .then(|| crate::skim::container_end(b, i))
                        .flatten()
                        .map(|end| ((), end))
                })
                .map_err(badjson)?;
                let base = self.body.as_ptr() as usize;
                let data = raws.iter().find(|(n, _)| *n == "data").map(|(_, v)| {
                    let a = v.as_ptr() as usize - base;
                    (a, a + v.len())
                });
                Ok(if idx == 0 {
                    (Record::Header(raft::parse_header(&j).map_err(bad)?), None)
                } else {
                    (Record::Raft(raft::parse_record(&j).map_err(bad)?), data)
                })
            }
        }
    }
}

/// A light-decoded record, its data range and its pre-read txn.
pub(crate) type Streamed<'a> = (
    Record,
    Option<(usize, usize)>,
    Option<crate::rawtxn::TxnSrc<'a>>,
);

impl<'a> RawRecord<'a> {
    /// [`RawRecord::decode_light_payload`] for a clustered record after
    /// the header, reading a `[null, txn]` data payload on the way (so it
    /// can be applied without another pass over its bytes).
    pub(crate) fn decode_streaming(&self) -> Result<Streamed<'a>, LogError> {
        let bad = |m: String| self.error(ErrorKind::BadRecord { message: m });
        let badjson = |m: String| {
            if m == "not a JSON object" {
                self.error(ErrorKind::NotObject)
            } else {
                self.error(ErrorKind::BadJson { message: m })
            }
        };
        let body: &'a [u8] = self.body;
        let (j, raws, txn) = crate::skim::skim_object_hook(body, crate::rawtxn::parse_raw_data_at)
            .map_err(badjson)?;
        let base = body.as_ptr() as usize;
        let data = raws.iter().find(|(n, _)| *n == "data").map(|(_, v)| {
            let a = v.as_ptr() as usize - base;
            (a, a + v.len())
        });
        Ok((
            Record::Raft(raft::parse_record(&j).map_err(bad)?),
            data,
            txn,
        ))
    }
}

/// A decoded record.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// Clustered record 0.
    Header(ClusterHeader),
    /// Clustered records 1..n.
    Raft(RaftRecord),
    /// Standalone record 0 (schema JSON; parse it with `ovsdb` schema code).
    Schema(Json),
    /// Standalone records 1..n.
    Txn(TxnRecord),
}

impl Record {
    /// Kind name as `inspect` counts it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Record::Header(_) => "header",
            Record::Raft(r) => r.kind_name(),
            Record::Schema(_) => "schema",
            Record::Txn(_) => "txn",
        }
    }
}

/// A txn record (§2.3): per-table changes plus `_date`, `_comment`,
/// `_is_diff`. Table members keep file order.
#[derive(Debug, Clone, PartialEq)]
pub struct TxnRecord {
    /// `(table name, {uuid: row-or-null})` in file order. Members whose name
    /// starts with `_` other than the three special ones are kept here too
    /// (replay rejects them as unknown tables, like ovsdb-server).
    pub tables: Vec<(String, Json)>,
    pub date: Option<Json>,
    pub comment: Option<Json>,
    pub is_diff: Option<Json>,
}

impl TxnRecord {
    /// Splits a txn object into tables and special members. Fails only if
    /// `j` is not an object.
    pub fn from_json(j: &Json) -> Result<TxnRecord, String> {
        let o = j.as_object().ok_or("txn record is not a JSON object")?;
        let mut t = TxnRecord {
            tables: Vec::new(),
            date: None,
            comment: None,
            is_diff: None,
        };
        for (k, v) in o.iter() {
            match k {
                "_date" => t.date = Some(v.clone()),
                "_comment" => t.comment = Some(v.clone()),
                "_is_diff" => t.is_diff = Some(v.clone()),
                _ => t.tables.push((k.to_string(), v.clone())),
            }
        }
        Ok(t)
    }

    /// `_is_diff` is exactly `true`.
    pub fn diff_mode(&self) -> bool {
        matches!(self.is_diff, Some(Json::Bool(true)))
    }

    /// `_date` in milliseconds (values below 2^31-1 are seconds, §2.3).
    pub fn date_ms(&self) -> Option<i64> {
        match self.date {
            Some(Json::Integer(d)) if d < i64::from(i32::MAX) => Some(d.saturating_mul(1000)),
            Some(Json::Integer(d)) => Some(d),
            _ => None,
        }
    }

    pub fn comment_str(&self) -> Option<&str> {
        self.comment.as_ref().and_then(Json::as_str)
    }

    /// The record object as the C writer builds it: tables, then
    /// `_comment`, `_is_diff`, `_date`, emitted in `shash` order. Nested
    /// objects keep their stored order.
    pub fn to_json(&self) -> Json {
        let mut o = Object::with_capacity(self.tables.len() + 3);
        for (k, v) in &self.tables {
            o.push_unchecked(k.clone(), v.clone());
        }
        if let Some(c) = &self.comment {
            o.push_unchecked("_comment", c.clone());
        }
        if let Some(d) = &self.is_diff {
            o.push_unchecked("_is_diff", d.clone());
        }
        if let Some(d) = &self.date {
            o.push_unchecked("_date", d.clone());
        }
        o.reorder_shash();
        Json::Object(o)
    }

    /// The record with every object sorted (Raft payload form).
    pub fn to_json_sorted(&self) -> Json {
        let mut j = self.to_json();
        j.sort_recursive();
        j
    }
}
