//! Storage-size accounting: each transaction-carrying record's size as
//! stored, as written with full values, and as written with column diffs
//! ([`EntrySize`]). The replays compute them: [`crate::replay_pass`], and
//! for the summary's one walk [`crate::shared_replay`].

use crate::framing::{Format, RawRecord};
use crate::replay_pass::{replay, Upto};

/// Totals over a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SizeTotals {
    pub full: Option<u64>,
    pub diff: Option<u64>,
}

/// Sizes of one transaction-carrying record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntrySize {
    /// Record number in the file.
    pub record: usize,
    /// Log index (clustered) or `None` (standalone).
    pub index: Option<u64>,
    /// Header line + body, as stored.
    pub stored: u64,
    /// As it would be written with full values.
    pub full: u64,
    /// As it would be written with column diffs.
    pub diff: u64,
    /// Superseded by a later entry with the same index (never applied;
    /// counted at its stored size in every mode).
    pub superseded: bool,
}

/// Decimal digits of `n`.
fn digits(n: u64) -> u64 {
    n.checked_ilog10().map_or(1, |d| u64::from(d) + 1)
}

/// Total record size (header line + body) for a body of `body` bytes.
pub fn record_size(format: Format, body: u64) -> u64 {
    6 + format.magic().len() as u64 + 1 + digits(body) + 1 + 40 + 1 + body
}

pub(crate) fn resized(format: Format, raw: &RawRecord<'_>, delta: i64) -> u64 {
    let body = (raw.body.len() as i64 + delta).max(0) as u64;
    record_size(format, body)
}

/// Full/diff totals of a file (None when replay fails before the end).
pub fn entry_sizes(bytes: &[u8]) -> SizeTotals {
    let r = replay(bytes, Upto::All);
    let (_, full, diff) = r.totals();
    SizeTotals { full, diff }
}
