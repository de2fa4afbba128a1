//! ovsdb-server's text log format (contract; implementation in progress).
//!
//! `2026-11-29T21:14:18.237Z|00033|raft|INFO|term 3: 1220 ms timeout expired, starting election`

use crate::events::Event;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// Log levels of OVS's vlog.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Emer,
    Err,
    Warn,
    Info,
    Dbg,
}

/// One line in the log format, borrowed from the input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogLine<'a> {
    pub time_ms: i64,
    pub seq: u64,
    pub module: &'a str,
    pub level: Level,
    pub text: &'a str,
}

/// Parses one line (without its LF).
pub fn parse_line(line: &[u8]) -> Option<LogLine<'_>> {
    let _ = line;
    None
}

/// What a whole log (one server's, rotated parts joined) says.
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LogFile {
    pub lines: u64,
    /// Lines that are not in the log format.
    pub unparsed: u64,
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
    pub events: Vec<Event>,
}

/// Reads a whole log held in memory.
pub fn read_log(bytes: &[u8]) -> LogFile {
    let _ = bytes;
    LogFile::default()
}
