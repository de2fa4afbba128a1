//! `memory/show` text (contract; implementation in progress).

/// `atoms:9210 cells:27827 monitors:0 …` as name/value pairs, in order.
pub fn parse_memory_show(text: &str) -> Option<Vec<(String, u64)>> {
    let _ = text;
    None
}
