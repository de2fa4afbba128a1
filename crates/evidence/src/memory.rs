//! `memory/show` and `coverage/show` text.
//!
//! `memory/show` (ovsdb/ovsdb-server.c, lib/memory.c `memory_report`) is
//! one line of `name:value` pairs: `atoms:9210 cells:27827 monitors:0 …`;
//! ovsdb-server logs the same pairs in its `memory|INFO|` lines.

/// `atoms:9210 cells:27827 monitors:0 …` as name/value pairs, in order.
/// `None` unless every whitespace-separated token is `name:number` (and
/// there is at least one).
pub fn parse_memory_show(text: &str) -> Option<Vec<(String, u64)>> {
    parse_memory_pairs(text, |name| name.to_string())
}

/// [`parse_memory_show`], with each name made by `name`.
pub fn parse_memory_pairs<N>(text: &str, mut name: impl FnMut(&str) -> N) -> Option<Vec<(N, u64)>> {
    let mut out = Vec::new();
    for tok in text.split_ascii_whitespace() {
        let (n, v) = tok.split_once(':')?;
        if n.is_empty()
            || !n
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
            || v.is_empty()
            || !v.bytes().all(|c| c.is_ascii_digit())
        {
            return None;
        }
        out.push((name(n), v.parse().ok()?));
    }
    (!out.is_empty()).then_some(out)
}

/// One counter of `coverage/show`.
#[derive(Clone, Debug, PartialEq)]
pub struct Coverage {
    pub name: String,
    /// The three rates: last 5 s, last minute, last hour (events/s).
    pub rates: [f64; 3],
    pub total: u64,
}

/// `coverage/show` (lib/coverage.c `coverage_read`):
///
/// ```text
/// Event coverage, avg rate over last: 5 seconds, last minute, last hour,  hash=e566308e:
/// raft_entry_serialize      12.8/sec     1.067/sec        0.0178/sec   total: 64
/// 120 events never hit
/// ```
///
/// `None` when the header is missing or a counter line does not fit.
pub fn parse_coverage_show(text: &str) -> Option<Vec<Coverage>> {
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty());
    if !lines
        .next()?
        .starts_with("Event coverage, avg rate over last:")
    {
        return None;
    }
    let mut out = Vec::new();
    for l in lines {
        let l = l.trim();
        if l.is_empty() || l.ends_with(" events never hit") {
            continue;
        }
        let mut it = l.split_ascii_whitespace();
        let name = it.next()?;
        let mut rates = [0.0; 3];
        for r in &mut rates {
            *r = it
                .next()?
                .strip_suffix("/sec")?
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())?;
        }
        if it.next()? != "total:" {
            return None;
        }
        let total = it.next()?.parse().ok()?;
        if it.next().is_some() {
            return None;
        }
        out.push(Coverage {
            name: name.to_string(),
            rates,
            total,
        });
    }
    Some(out)
}
