//! The data-driven scenario format shared by the ported OVS tests.
//!
//! A scenario file is a list of commands, one per line; a line that starts
//! with whitespace continues the previous command (so JSON can be wrapped),
//! `#` starts a comment line, and the line `expect:` starts the expected
//! output, which runs to the end of the file verbatim.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub struct Scenario {
    pub path: PathBuf,
    pub commands: Vec<String>,
    pub expected: String,
}

pub fn load(path: &Path) -> Scenario {
    let text = std::fs::read_to_string(path).expect("read scenario");
    let mut commands: Vec<String> = Vec::new();
    let mut expected = String::new();
    let mut in_expect = false;
    for line in text.split_inclusive('\n') {
        if in_expect {
            expected.push_str(line);
            continue;
        }
        let l = line.trim_end_matches(['\n', '\r']);
        if l == "expect:" {
            in_expect = true;
        } else if l.starts_with('#') || l.trim().is_empty() {
            continue;
        } else if l.starts_with(' ') || l.starts_with('\t') {
            if let Some(last) = commands.last_mut() {
                last.push(' ');
                last.push_str(l.trim());
            }
        } else {
            commands.push(l.to_string());
        }
    }
    Scenario {
        path: path.to_path_buf(),
        commands,
        expected,
    }
}

/// Splits off the first whitespace-separated word.
pub fn word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim_start()),
        None => (s, ""),
    }
}

/// Splits off a leading JSON value (array/object) or a plain word.
pub fn json_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let b = s.as_bytes();
    if b.first() == Some(&b'[') || b.first() == Some(&b'{') {
        let mut depth = 0usize;
        let mut in_str = false;
        let mut esc = false;
        for (i, &c) in b.iter().enumerate() {
            if in_str {
                if esc {
                    esc = false;
                } else if c == b'\\' {
                    esc = true;
                } else if c == b'"' {
                    in_str = false;
                }
                continue;
            }
            match c {
                b'"' => in_str = true,
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return (&s[..=i], s[i + 1..].trim_start());
                    }
                }
                _ => {}
            }
        }
        (s, "")
    } else {
        word(s)
    }
}

pub fn scenario_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios")
}

pub fn list(kind: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(scenario_dir().join(kind))
        .expect("scenario dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().map(|x| x == "txt").unwrap_or(false))
        .collect();
    v.sort();
    v
}

pub fn schema_text(name: &str) -> String {
    std::fs::read_to_string(scenario_dir().join(format!("schemas/{name}.ovsschema")))
        .expect("schema file")
}
