//! The server logs in the worker (`src/bin/worker.rs`, through `#[path]`):
//! the log panel's queries over the logs of the last load, and what the
//! page draws of each log event.
//!
//! Messages in (plain JS objects):
//! - `{type: "log-query", id, server, module, level, text, focusServer,
//!   focusLine}`: selects the log lines that pass the filters (server -1: all
//!   servers, merged by time); replies `{type: "log-result", id, total,
//!   focusRow}`.
//! - `{type: "log-lines", id, start, count}`: rows `start..start+count` of
//!   the last selection; replies `{type: "log-lines", id, start, rows: [(server,
//!   line, text)] as `src/msg.rs` bytes}`.

use std::cell::RefCell;

use evidence::log::Level;
use wasm_bindgen::prelude::*;

use super::evidence_view::EventView;
use super::{get, msg, post};

/// One server's joined log, with the byte offset of every line.
pub struct LogText {
    text: Vec<u8>,
    pub starts: Vec<usize>,
    /// Its times never step back (`LogFile::time_steps_back` is 0): line
    /// order is time order.
    in_order: bool,
}

impl LogText {
    pub fn new(text: Vec<u8>, in_order: bool) -> LogText {
        let mut starts = vec![0];
        for (i, &b) in text.iter().enumerate() {
            if b == b'\n' && i + 1 < text.len() {
                starts.push(i + 1);
            }
        }
        if text.is_empty() {
            starts.clear();
        }
        LogText {
            text,
            starts,
            in_order,
        }
    }

    pub fn line(&self, n: usize) -> &[u8] {
        let Some(&s) = self.starts.get(n) else {
            return &[];
        };
        let e = self.starts.get(n + 1).map_or(self.text.len(), |&e| e - 1);
        let e = e.min(s + 4096).max(s);
        let l = &self.text[s..e];
        // The last line ends at the text's end, LF included.
        let l = l.strip_suffix(b"\n").unwrap_or(l);
        l.strip_suffix(b"\r").unwrap_or(l)
    }
}

thread_local! {
    static LOGS: RefCell<Vec<LogText>> = const { RefCell::new(Vec::new()) };
    /// The log panel's current selection.
    static ROWS: RefCell<Selection> = const { RefCell::new(Selection::Rows(Vec::new())) };
}

/// Keeps the logs of a new load (one per server), with no selection yet.
pub fn keep(logs: Vec<LogText>) {
    LOGS.with(|c| *c.borrow_mut() = logs);
    ROWS.with(|c| *c.borrow_mut() = Selection::Rows(Vec::new()));
}

/// The rows of the log panel's last query.
enum Selection {
    /// Every line of one server's log, in order: nothing kept per row (a
    /// million-line log is listed whole most of the time).
    All { server: u32, lines: u32 },
    /// (server, line) per row.
    Rows(Vec<(u32, u32)>),
}

impl Selection {
    fn len(&self) -> usize {
        match self {
            Selection::All { lines, .. } => *lines as usize,
            Selection::Rows(r) => r.len(),
        }
    }

    fn get(&self, row: usize) -> Option<(u32, u32)> {
        match self {
            Selection::All { server, lines } => {
                (row < *lines as usize).then_some((*server, row as u32))
            }
            Selection::Rows(r) => r.get(row).copied(),
        }
    }

    /// The row of (server, line), else the first later line of that server.
    fn find(&self, key: (u32, u32)) -> Option<usize> {
        match self {
            Selection::All { server, lines } => {
                (key.0 == *server && key.1 < *lines).then_some(key.1 as usize)
            }
            Selection::Rows(rows) => rows
                .iter()
                .position(|&r| r == key)
                .or_else(|| rows.iter().position(|&r| r.0 == key.0 && r.1 >= key.1)),
        }
    }
}

fn level_of(name: &str) -> Option<Level> {
    Some(match name {
        "emer" => Level::Emer,
        "err" => Level::Err,
        "warn" => Level::Warn,
        "info" => Level::Info,
        "dbg" => Level::Dbg,
        _ => return None,
    })
}

/// `hay` holds `needle` (ASCII case folded; `needle` lower-case). Jumps
/// from one candidate first byte to the next with memchr: a text filter
/// reads every line of every log.
fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    if hay.len() < needle.len() {
        return false;
    }
    let last = hay.len() - needle.len();
    let hit = |i: usize| i <= last && hay[i + 1..i + needle.len()].eq_ignore_ascii_case(rest);
    if first.is_ascii_alphabetic() {
        memchr::memchr2_iter(first, first.to_ascii_uppercase(), &hay[..=last]).any(hit)
    } else {
        memchr::memchr_iter(first, &hay[..=last]).any(hit)
    }
}

/// `{type: "log-query", ...}` (see the module doc).
pub fn log_query(msg: &JsValue) {
    let id = get(msg, "id");
    let server = get(msg, "server").as_f64().unwrap_or(-1.0);
    let module = get(msg, "module").as_string().unwrap_or_default();
    let level = level_of(&get(msg, "level").as_string().unwrap_or_default());
    let text = get(msg, "text")
        .as_string()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let needle = text.as_bytes();
    let focus_server = get(msg, "focusServer").as_f64();
    let focus_line = get(msg, "focusLine").as_f64();
    let rows = LOGS.with(|c| {
        let logs = c.borrow();
        let chosen: Vec<usize> = (0..logs.len())
            .filter(|&si| server < 0.0 || si == server as usize)
            .filter(|&si| !logs[si].starts.is_empty())
            .collect();
        let filtered = !module.is_empty() || level.is_some() || !needle.is_empty();
        // All servers are merged by time (a stable sort, so each log keeps
        // its order): nothing to sort for one log whose times never step
        // back.
        let sort = server < 0.0 && !(chosen.len() == 1 && logs[chosen[0]].in_order);
        if let ([si], false, false) = (&chosen[..], filtered, sort) {
            if let Ok(lines) = u32::try_from(logs[*si].starts.len()) {
                return Selection::All {
                    server: *si as u32,
                    lines,
                };
            }
        }
        let parse = sort || !module.is_empty() || level.is_some();
        let mut rows: Vec<(i64, u32, u32)> = Vec::new();
        for &si in &chosen {
            let log = &logs[si];
            let mut last_ms = i64::MIN;
            for n in 0..log.starts.len() {
                let line = log.line(n);
                let parsed = if parse {
                    evidence::log::parse_line(line)
                } else {
                    None
                };
                if let Some(p) = &parsed {
                    last_ms = p.time_ms;
                }
                if !module.is_empty() && parsed.as_ref().is_none_or(|p| p.module != module) {
                    continue;
                }
                if let Some(lv) = level {
                    if parsed.as_ref().is_none_or(|p| p.level > lv) {
                        continue;
                    }
                }
                if !contains_ci(line, needle) {
                    continue;
                }
                rows.push((last_ms, si as u32, n as u32));
            }
        }
        if sort {
            ovsdb::order::sort_by_key(&mut rows, |r| r.0);
        }
        Selection::Rows(rows.into_iter().map(|(_, s, l)| (s, l)).collect())
    });
    let focus_row = match (focus_server, focus_line) {
        (Some(s), Some(l)) => rows
            .find((s as u32, l as u32))
            .map_or(JsValue::NULL, |p| (p as f64).into()),
        _ => JsValue::NULL,
    };
    let total = rows.len() as f64;
    ROWS.with(|c| *c.borrow_mut() = rows);
    post(&[
        ("type", "log-result".into()),
        ("id", id),
        ("total", total.into()),
        ("focusRow", focus_row),
    ]);
}

/// `{type: "log-lines", id, start, count}` (see the module doc).
pub fn log_lines(msg: &JsValue) {
    let id = get(msg, "id");
    let start = get(msg, "start").as_f64().unwrap_or(0.0).max(0.0) as usize;
    let count = get(msg, "count").as_f64().unwrap_or(0.0).clamp(0.0, 2000.0) as usize;
    let out: Vec<(u32, u32, String)> = ROWS.with(|r| {
        LOGS.with(|l| {
            let rows = r.borrow();
            let logs = l.borrow();
            (start..start.saturating_add(count))
                .map_while(|row| rows.get(row))
                .map(|(s, n)| {
                    let text = logs.get(s as usize).map_or(String::new(), |log| {
                        String::from_utf8_lossy(log.line(n as usize)).into_owned()
                    });
                    (s, n, text)
                })
                .collect()
        })
    });
    post(&[
        ("type", "log-lines".into()),
        ("id", id),
        ("start", (start as f64).into()),
        ("rows", msg::to_bytes(&out).into()),
    ]);
}

/// An event's tooltip: its name and what the timeline knows of it
/// (`election-started · term 2`, `long-poll · 1520 ms`). The full line is
/// one click away in the log panel; a `Debug` dump of every event kind
/// cost 850 bytes of gzipped wasm.
fn event_text(name: &str, term: Option<u64>, peer: Option<&str>, amount: Option<u64>) -> String {
    let mut t = name.to_string();
    if let Some(n) = term {
        t.push_str(&format!(" · term {n}"));
    }
    let unit = match name {
        "long-poll" => " ms",
        "memory-peak" | "memory-grew" => " kB",
        _ => "",
    };
    for part in [
        peer.map(str::to_string),
        amount.map(|a| format!("{a}{unit}")),
    ]
    .into_iter()
    .flatten()
    {
        t.push_str(" · ");
        t.push_str(&part);
    }
    t
}

/// What the page draws of one event (`evidence_view::EventView`).
pub fn event_view(e: &evidence::events::Event) -> EventView {
    use evidence::events::EventKind as K;
    let (term, peer, amount) = match &e.kind {
        K::ElectionStarted { term, .. }
        | K::ElectionWon { term, .. }
        | K::LeaderIs { term, .. } => (Some(*term), None, None),
        K::ProbeTimeout { peer, .. } | K::ConnectionLost { peer, .. } | K::Connected { peer } => {
            (None, Some(peer.as_str().to_string()), None)
        }
        K::LongPoll { wall_ms, .. } => (None, None, Some(*wall_ms)),
        K::MemoryPeak { kb, .. } => (None, None, Some(*kb)),
        K::MemoryGrew { to_kb, .. } => (None, None, Some(*to_kb)),
        _ => (None, None, None),
    };
    EventView {
        line: e.line,
        time_ms: e.time_ms,
        kind: e.kind.name().to_string(),
        text: event_text(e.kind.name(), term, peer.as_deref(), amount),
        term,
        peer,
        amount,
    }
}
