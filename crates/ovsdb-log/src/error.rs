//! Typed errors: every failure names the record number and a byte offset.

use std::fmt;

/// An error found while reading a log file.
///
/// `record` is the 0-based number of the record being read when the error
/// occurred (the header/schema record is record 0). `offset` is a byte offset
/// from the start of the file: the start of the header line for header
/// problems, the start of the body for body problems (as `ovsdb-tool` reports
/// them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogError {
    pub record: usize,
    pub offset: u64,
    pub kind: ErrorKind,
}

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file holds no bytes at all.
    EmptyFile,
    /// End of file inside a header line (no LF).
    TruncatedHeader { available: usize },
    /// A header line that does not parse (garbage, CRLF, zero length, bad
    /// hash text, longer than 127 bytes...).
    BadHeader { line: String, reason: &'static str },
    /// The first header's magic is neither `JSON` nor `CLUSTER`.
    UnknownMagic { magic: String },
    /// A later header carries another magic than the first one.
    WrongMagic { expected: String, found: String },
    /// The body is shorter than the header's length.
    TruncatedBody { length: u64, available: u64 },
    /// The header's length does not match the body that follows it: the body
    /// line that follows has another length and hashes to the header's SHA-1.
    LengthMismatch { declared: u64, actual: u64 },
    /// The SHA-1 of the body differs from the header's.
    BadSha1 { expected: String, actual: String },
    /// The body is not valid JSON (includes the nesting limit).
    BadJson { message: String },
    /// The body is valid JSON but not an object.
    NotObject,
    /// The body is a JSON object that does not parse as the expected record
    /// (missing/mistyped/unknown members, invalid UUIDs...).
    BadRecord { message: String },
    /// The record parses but breaks a replay rule (Raft §3.6, txn §2.4).
    Replay { message: String },
    /// A standalone database where only a clustered one will do (`check`:
    /// a standalone file has no Raft log).
    NotClustered,
}

impl ErrorKind {
    /// True for framing failures that `ovsdb-server` treats as a torn tail
    /// (everything before them is usable and the next write truncates them).
    pub fn is_framing(&self) -> bool {
        matches!(
            self,
            ErrorKind::TruncatedHeader { .. }
                | ErrorKind::BadHeader { .. }
                | ErrorKind::WrongMagic { .. }
                | ErrorKind::TruncatedBody { .. }
                | ErrorKind::LengthMismatch { .. }
                | ErrorKind::BadSha1 { .. }
                | ErrorKind::BadJson { .. }
                | ErrorKind::NotObject
        )
    }

    /// A short stable slug for machine-readable output.
    pub fn code(&self) -> &'static str {
        match self {
            ErrorKind::EmptyFile => "empty-file",
            ErrorKind::TruncatedHeader { .. } => "truncated-header",
            ErrorKind::BadHeader { .. } => "bad-header",
            ErrorKind::UnknownMagic { .. } => "unknown-magic",
            ErrorKind::WrongMagic { .. } => "wrong-magic",
            ErrorKind::TruncatedBody { .. } => "truncated-body",
            ErrorKind::LengthMismatch { .. } => "length-mismatch",
            ErrorKind::BadSha1 { .. } => "bad-sha1",
            ErrorKind::BadJson { .. } => "bad-json",
            ErrorKind::NotObject => "not-object",
            ErrorKind::BadRecord { .. } => "bad-record",
            ErrorKind::Replay { .. } => "replay",
            ErrorKind::NotClustered => "not-clustered",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::EmptyFile => write!(f, "empty file"),
            ErrorKind::TruncatedHeader { available } => {
                write!(
                    f,
                    "file ends inside a header line ({available} bytes, no LF)"
                )
            }
            ErrorKind::BadHeader { line, reason } => {
                // Bytes that are not text say more by what they are than
                // by an escaped copy of them.
                if line.chars().any(|c| {
                    c == char::REPLACEMENT_CHARACTER || (c.is_control() && c != '\t' && c != '\r')
                }) {
                    write!(f, "binary data, not an OVSDB database ({reason})")
                } else {
                    write!(f, "bad header line {line:?}: {reason}")
                }
            }
            ErrorKind::UnknownMagic { magic } => {
                write!(f, "cannot identify file type (magic {magic:?})")
            }
            ErrorKind::WrongMagic { expected, found } => {
                write!(
                    f,
                    "header magic {found:?} differs from the file's {expected:?}"
                )
            }
            ErrorKind::TruncatedBody { length, available } => write!(
                f,
                "truncated body: header says {length} bytes, only {available} remain"
            ),
            ErrorKind::LengthMismatch { declared, actual } => write!(
                f,
                "length mismatch: header says {declared} bytes but the body is {actual} bytes"
            ),
            ErrorKind::BadSha1 { expected, actual } => {
                write!(
                    f,
                    "SHA-1 mismatch: body hashes to {actual}, header says {expected}"
                )
            }
            ErrorKind::BadJson { message } => write!(f, "body is not valid JSON ({message})"),
            ErrorKind::NotObject => write!(f, "body is not a JSON object"),
            ErrorKind::BadRecord { message } => write!(f, "bad record: {message}"),
            ErrorKind::Replay { message } => write!(f, "replay failed: {message}"),
            ErrorKind::NotClustered => write!(
                f,
                "a standalone database (magic \"OVSDB JSON\"), not a clustered one"
            ),
        }
    }
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "record {} at byte offset {}: {}",
            self.record, self.offset, self.kind
        )
    }
}

impl std::error::Error for LogError {}
