//! Writers for both formats: records are serialized as ovsdb-server does
//! (compact JSON + LF, strict header line with length and lower-case SHA-1).

use crate::framing::{write_record, MAGIC_CLUSTERED, MAGIC_STANDALONE};
use crate::raft::{body_bytes, ClusterHeader, RaftRecord};
use crate::record::TxnRecord;
use ovsdb::json::Json;

/// Builds a clustered file in memory.
#[derive(Debug, Default, Clone)]
pub struct ClusteredWriter {
    out: Vec<u8>,
    records: usize,
}

impl ClusteredWriter {
    /// Starts a file with its header record.
    pub fn new(header: &ClusterHeader) -> Self {
        let mut w = ClusteredWriter::default();
        write_record(&mut w.out, MAGIC_CLUSTERED, &header.encode());
        w.records = 1;
        w
    }
    /// Appends a Raft record.
    pub fn push(&mut self, rec: &RaftRecord) {
        write_record(&mut self.out, MAGIC_CLUSTERED, &rec.encode());
        self.records += 1;
    }
    /// Appends an already-encoded body (compact JSON + LF).
    pub fn push_body(&mut self, body: &[u8]) {
        write_record(&mut self.out, MAGIC_CLUSTERED, body);
        self.records += 1;
    }
    pub fn records(&self) -> usize {
        self.records
    }
    pub fn len(&self) -> usize {
        self.out.len()
    }
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }
    pub fn bytes(&self) -> &[u8] {
        &self.out
    }
    pub fn finish(self) -> Vec<u8> {
        self.out
    }
}

/// Builds a standalone file in memory.
#[derive(Debug, Default, Clone)]
pub struct StandaloneWriter {
    out: Vec<u8>,
    records: usize,
}

impl StandaloneWriter {
    /// Starts a file with its schema record (the schema JSON object as it
    /// should appear in the file).
    pub fn new(schema: &Json) -> Self {
        let mut w = StandaloneWriter::default();
        write_record(&mut w.out, MAGIC_STANDALONE, &body_bytes(schema));
        w.records = 1;
        w
    }
    /// Appends a txn record (members in the C writer's `shash` order).
    pub fn push(&mut self, txn: &TxnRecord) {
        write_record(&mut self.out, MAGIC_STANDALONE, &body_bytes(&txn.to_json()));
        self.records += 1;
    }
    /// Appends a txn record given as JSON, serialized as is.
    pub fn push_json(&mut self, txn: &Json) {
        write_record(&mut self.out, MAGIC_STANDALONE, &body_bytes(txn));
        self.records += 1;
    }
    pub fn records(&self) -> usize {
        self.records
    }
    pub fn len(&self) -> usize {
        self.out.len()
    }
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }
    pub fn finish(self) -> Vec<u8> {
        self.out
    }
}

/// Decodes a whole clustered file (any error is returned).
pub fn read_clustered(bytes: &[u8]) -> Result<(ClusterHeader, Vec<RaftRecord>), crate::LogError> {
    let mut header = None;
    let mut recs = Vec::new();
    for raw in crate::Framer::new(bytes) {
        let raw = raw?;
        match raw.decode(crate::Format::Clustered)? {
            crate::record::Record::Header(h) => header = Some(h),
            crate::record::Record::Raft(r) => recs.push(r),
            _ => {}
        }
    }
    let header = header.ok_or(crate::LogError {
        record: 0,
        offset: 0,
        kind: crate::ErrorKind::EmptyFile,
    })?;
    Ok((header, recs))
}

/// Writes a clustered file from typed records.
pub fn write_clustered(header: &ClusterHeader, records: &[RaftRecord]) -> Vec<u8> {
    let mut w = ClusteredWriter::new(header);
    for r in records {
        w.push(r);
    }
    w.finish()
}
