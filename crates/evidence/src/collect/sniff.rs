//! Small content sniffers: what a leaf is, from its first bytes only
//! (at most [`super::SNIFF_BYTES`]), without the real parsers.

use super::InputKind;

/// Reason for bytes that are no text.
pub const BINARY: &str = "binary data, not an OVSDB database or a log";
/// Reason for text none of the sniffers knows.
pub const OTHER_TEXT: &str =
    "text, but not an ovsdb-server log, cluster/status, memory/show or coverage/show";

/// Lines looked at for the line-based kinds.
const LINES: usize = 20;

/// What `head` (the first bytes of a stream; `complete` if that is all of
/// it) is, or why it is none of ours.
pub fn classify(head: &[u8], complete: bool) -> Result<InputKind, &'static str> {
    if head.starts_with(b"OVSDB JSON ") || head.starts_with(b"OVSDB CLUSTER ") {
        return Ok(InputKind::Database);
    }
    if head.contains(&0) {
        return Err(BINARY);
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // A character cut by the end of the window is fine.
        Err(e) if e.error_len().is_none() && !complete => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return Err(BINARY),
    };
    // Lines; the last one may be cut by the window (only the log sniffer,
    // which looks at a line's start, uses a cut line).
    let mut lines: Vec<(&str, bool)> = Vec::new();
    let mut rest = text;
    while lines.len() < LINES && !rest.is_empty() {
        match rest.split_once('\n') {
            Some((line, more)) => {
                lines.push((line.strip_suffix('\r').unwrap_or(line), true));
                rest = more;
            }
            None => {
                lines.push((rest, complete));
                rest = "";
            }
        }
    }
    let first = lines.iter().find(|(l, _)| !l.trim().is_empty());
    if let Some((l, _)) = first {
        if l.starts_with("Event coverage, avg rate over last:") {
            return Ok(InputKind::CoverageShow);
        }
    }
    let has = |p: &str| lines.iter().any(|(l, whole)| *whole && l.starts_with(p));
    if has("Cluster ID: ") && has("Server ID: ") {
        return Ok(InputKind::ClusterStatus);
    }
    if let Some((l, true)) = first {
        if is_memory_show(l) {
            return Ok(InputKind::MemoryShow);
        }
    }
    if lines.iter().any(|(l, _)| is_log_line(l)) {
        return Ok(InputKind::ServerLog);
    }
    Err(OTHER_TEXT)
}

/// `atoms:9210 cells:27827 monitors:0 ...`: two or more `name:count`.
pub fn is_memory_show(line: &str) -> bool {
    let mut n = 0;
    for tok in line.split_ascii_whitespace() {
        let Some((name, count)) = tok.split_once(':') else {
            return false;
        };
        let name_ok = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !name_ok || count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        n += 1;
    }
    n >= 2
}

/// The start of a vlog line: `2026-12-01T19:17:56.026Z|00001|vlog|INFO|`
/// (fractional seconds and the `Z` optional).
pub fn is_log_line(line: &str) -> bool {
    let b = line.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && at(10, b'T')
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19))
    {
        return false;
    }
    let mut i = 19;
    if at(i, b'.') {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if at(i, b'Z') {
        i += 1;
    }
    let mut fields = match line.get(i..).and_then(|r| r.strip_prefix('|')) {
        Some(r) => r.splitn(4, '|'),
        None => return false,
    };
    let seq = fields.next().unwrap_or("");
    let module = fields.next().unwrap_or("");
    let level = fields.next().unwrap_or("");
    fields.next().is_some()
        && !seq.is_empty()
        && seq.bytes().all(|c| c.is_ascii_digit())
        && !module.is_empty()
        && module
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        && matches!(level, "EMER" | "ERR" | "WARN" | "INFO" | "DBG")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(
            classify(
                b"2026-12-01T19:17:56.026Z|00001|vlog|INFO|opened log file ./s1.log\n",
                true
            ),
            Ok(InputKind::ServerLog)
        );
        assert_eq!(
            classify(
                b"aa26\nName: OVN_Northbound\nCluster ID: 196d (x)\nServer ID: aa26 (y)\n",
                true
            ),
            Ok(InputKind::ClusterStatus)
        );
        assert_eq!(
            classify(b"atoms:9210 cells:27827 monitors:0 raft-log:66\n", true),
            Ok(InputKind::MemoryShow)
        );
        assert_eq!(
            classify(b"Event coverage, avg rate over last: 5 seconds\n", true),
            Ok(InputKind::CoverageShow)
        );
        assert_eq!(classify(b"hello\n", true), Err(OTHER_TEXT));
        assert_eq!(classify(b"a:1\n", true), Err(OTHER_TEXT));
        assert_eq!(classify(&[0xff, 0xfe, 0x00], true), Err(BINARY));
        // A multi-byte character cut by the window is still text.
        assert_eq!(
            classify(
                "2026-12-01T19:17:56Z|1|raft|WARN|é"
                    .as_bytes()
                    .split_last()
                    .unwrap()
                    .1,
                false
            ),
            Ok(InputKind::ServerLog)
        );
        assert!(!is_log_line("2026-12-01T19:17:56.026Z|00001|vlog|NOTE|x"));
        assert!(!is_log_line("2026-12-01T19:17:56.026Z|00001|vlog|INFO"));
    }
}
