//! Output normalisation used by the ported scenarios, re-implemented from
//! the description of ovs `tests/uuidfilt.py` and `tests/ovsdb-monitor-sort.py`:
//! UUIDs become `<N>` in order of first appearance, and monitor output lines
//! are sorted within blank-line separated groups.

#![allow(dead_code)]

use std::cmp::Ordering;
use std::collections::HashMap;

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// Does `s` start with a textual UUID (8-4-4-4-12 hex digits)?
pub fn starts_with_uuid(s: &[u8]) -> bool {
    if s.len() < 36 {
        return false;
    }
    for (i, &c) in s[..36].iter().enumerate() {
        let dash = matches!(i, 8 | 13 | 18 | 23);
        if dash {
            if c != b'-' {
                return false;
            }
        } else if !is_hex(c) {
            return false;
        }
    }
    true
}

/// Replaces every UUID by `<N>` (first appearance gets 0), skipping UUIDs
/// whose first group is `ffffffff` as the original filter does, then sorts
/// the members of `["set",[["uuid","<a>"],...]]` lists numerically.
pub fn uuidfilt(text: &str) -> String {
    let mut map: HashMap<String, usize> = HashMap::new();
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let b = line.as_bytes();
        let mut i = 0;
        let mut l = String::new();
        while i < b.len() {
            if starts_with_uuid(&b[i..])
                && !b[i..i + 8].eq_ignore_ascii_case(b"ffffffff")
                && (i == 0 || !is_hex(b[i - 1]))
            {
                let u = &line[i..i + 36];
                let n = map.len();
                let k = *map.entry(u.to_string()).or_insert(n);
                l.push_str(&format!("<{k}>"));
                i += 36;
            } else {
                let ch = line[i..].chars().next().unwrap_or(' ');
                l.push(ch);
                i += ch.len_utf8().max(1);
            }
        }
        out.push_str(&sort_uuid_sets(&l));
    }
    out
}

fn sort_uuid_sets(line: &str) -> String {
    let pat = "[\"set\",[";
    let mut out = String::new();
    let mut rest = line;
    while let Some(p) = rest.find(pat) {
        out.push_str(&rest[..p]);
        let after = &rest[p + pat.len()..];
        // Try to parse a run of ["uuid","<n>"] separated by commas, then "]]".
        let mut nums = Vec::new();
        let mut cur = after;
        let mut ok = false;
        loop {
            let item = "[\"uuid\",\"<";
            if let Some(r) = cur.strip_prefix(item) {
                let end = r.find('>').unwrap_or(0);
                match r[..end].parse::<usize>() {
                    Ok(n) if end > 0 && r[end..].starts_with(">\"]") => {
                        nums.push(n);
                        cur = &r[end + 3..];
                        if let Some(r2) = cur.strip_prefix(',') {
                            cur = r2;
                            continue;
                        }
                        if let Some(r2) = cur.strip_prefix("]]") {
                            cur = r2;
                            ok = true;
                        }
                        break;
                    }
                    _ => break,
                }
            } else {
                break;
            }
        }
        if ok && !nums.is_empty() {
            nums.sort_unstable();
            out.push_str(pat);
            let items: Vec<String> = nums
                .iter()
                .map(|n| format!("[\"uuid\",\"<{n}>\"]"))
                .collect();
            out.push_str(&items.join(","));
            out.push_str("]]");
            rest = cur;
        } else {
            out.push_str(pat);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn compare_monitor_lines(a: &str, b: &str) -> Ordering {
    let ua = starts_with_uuid(a.as_bytes());
    let ub = starts_with_uuid(b.as_bytes());
    match (ua, ub) {
        (true, true) => a[36..].cmp(&b[36..]),
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.cmp(b),
    }
}

/// Sorts monitor output within blank-line separated groups; a line that
/// starts with ',' (the "new" half of a v1 modify) sticks to the line
/// before it.
pub fn monitor_sort(text: &str) -> String {
    let mut out = String::new();
    let mut group: Vec<String> = Vec::new();
    let flush = |group: &mut Vec<String>, out: &mut String| {
        group.sort_by(|a, b| compare_monitor_lines(a, b));
        for g in group.drain(..) {
            out.push_str(&g);
        }
    };
    for line in text.split_inclusive('\n') {
        if line.trim_end().is_empty() {
            flush(&mut group, &mut out);
            out.push_str(line);
        } else if line.starts_with(',') && !group.is_empty() {
            if let Some(last) = group.last_mut() {
                last.push_str(line);
            }
        } else {
            group.push(line.to_string());
        }
    }
    flush(&mut group, &mut out);
    out
}

/// Plain `sort` of lines (byte order, as with LC_ALL=C).
pub fn sort_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    let mut out = String::new();
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}
