//! Storage-size accounting: each transaction-carrying record's size as
//! stored, as written with full values, and as written with column diffs.

/// Totals over a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SizeTotals {
    pub full: Option<u64>,
    pub diff: Option<u64>,
}

/// Full/diff totals; `None` until replay support is available for the file.
pub fn entry_sizes(_bytes: &[u8]) -> SizeTotals {
    SizeTotals::default()
}
