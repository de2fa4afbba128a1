//! Permalinks: the URL hash of the simulation pages.
//!
//! - `#sim=ls-add-follower&profile=v2.12-pre-sync&seed=1&set=n:50,delay:100&iv=at 5000 kill s1;at 9000 heal&t=1234.5`
//!   (`text=` carries an edited scenario; `until=` overrides `until_ms`;
//!   `t=` is the playhead position in ms);
//! - `#ab=commit-sync&seed=1`;
//! - `#tour=3`;
//! - `#idl=write-changed-only&rows=1000` (experiment and its knobs).
//!
//! Anything else belongs to the explorer. Values are percent-encoded.

use crate::{fmt_ms, RunSpec};

/// What a URL hash asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    Explorer,
    Sim { spec: RunSpec, t_us: Option<u64> },
    Ab { preset: String, seed: u64 },
    Tour { step: usize },
    Idl { params: Vec<(String, String)> },
}

/// Percent-encodes everything but unreserved characters.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~:,".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes `%XX` (and `+` as a space); invalid escapes are kept as they are.
pub fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        out.push(v);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn pairs(hash: &str) -> Vec<(String, String)> {
    hash.trim_start_matches('#')
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode(k), decode(v)),
            None => (decode(p), String::new()),
        })
        .collect()
}

fn parse_ms(v: &str) -> Option<u64> {
    let f: f64 = v.parse().ok()?;
    (f.is_finite() && (0.0..1e12).contains(&f)).then(|| (f * 1000.0).round() as u64)
}

/// Reads a URL hash (with or without the leading `#`).
pub fn parse_hash(hash: &str) -> Route {
    let p = pairs(hash);
    let Some((first, value)) = p.first() else {
        return Route::Explorer;
    };
    let get = |k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let seed = get("seed").and_then(|s| s.parse().ok()).unwrap_or(1);
    match first.as_str() {
        "sim" => {
            let mut spec = RunSpec::preset(if value.is_empty() {
                "ls-add-follower"
            } else {
                value
            });
            spec.seed = seed;
            spec.text = get("text").map(str::to_string);
            if spec.text.is_some() {
                spec.scenario = "custom".into();
            }
            spec.profile = get("profile").filter(|s| !s.is_empty()).map(str::to_string);
            spec.sets = get("set")
                .map(|s| {
                    s.split(',')
                        .filter_map(|kv| kv.split_once(':'))
                        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                        .collect()
                })
                .unwrap_or_default();
            spec.interventions = get("iv")
                .map(|s| {
                    s.split(';')
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            spec.until_ms = get("until").and_then(|u| u.parse().ok());
            let t_us = get("t").and_then(parse_ms);
            Route::Sim { spec, t_us }
        }
        "ab" => Route::Ab {
            preset: if value.is_empty() {
                "commit-sync".into()
            } else {
                value.clone()
            },
            seed,
        },
        "tour" => Route::Tour {
            step: value.parse().unwrap_or(1).max(1),
        },
        "idl" => Route::Idl { params: p.clone() },
        _ => Route::Explorer,
    }
}

impl Route {
    /// The URL hash (with `#`) of this route.
    pub fn to_hash(&self) -> String {
        match self {
            Route::Explorer => String::new(),
            Route::Sim { spec, t_us } => {
                let mut h = format!("#sim={}", encode(&spec.scenario));
                if let Some(p) = &spec.profile {
                    h.push_str(&format!("&profile={}", encode(p)));
                }
                h.push_str(&format!("&seed={}", spec.seed));
                if !spec.sets.is_empty() {
                    let s: Vec<String> =
                        spec.sets.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                    h.push_str(&format!("&set={}", encode(&s.join(","))));
                }
                if !spec.interventions.is_empty() {
                    h.push_str(&format!("&iv={}", encode(&spec.interventions.join(";"))));
                }
                if let Some(u) = spec.until_ms {
                    h.push_str(&format!("&until={u}"));
                }
                if let Some(t) = &spec.text {
                    h.push_str(&format!("&text={}", encode(t)));
                }
                if let Some(t) = t_us {
                    h.push_str(&format!("&t={}", fmt_ms(*t)));
                }
                h
            }
            Route::Ab { preset, seed } => format!("#ab={}&seed={seed}", encode(preset)),
            Route::Tour { step } => format!("#tour={step}"),
            Route::Idl { params } => {
                let s: Vec<String> = params
                    .iter()
                    .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
                    .collect();
                format!("#{}", s.join("&"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FaultAction, Node, Target};

    #[test]
    fn the_issue_links_open_the_runs_they_name() {
        match parse_hash("#sim=ls-add-follower&profile=v2.12-pre-sync") {
            Route::Sim { spec, t_us } => {
                assert_eq!(spec.scenario, "ls-add-follower");
                assert_eq!(spec.profile.as_deref(), Some("v2.12-pre-sync"));
                assert_eq!(spec.seed, 1);
                assert_eq!(t_us, None);
            }
            r => panic!("{r:?}"),
        }
        assert_eq!(
            parse_hash("#ab=commit-sync"),
            Route::Ab {
                preset: "commit-sync".into(),
                seed: 1
            }
        );
        assert_eq!(parse_hash(""), Route::Explorer);
        assert_eq!(parse_hash("#sample=leader-failover"), Route::Explorer);
    }

    #[test]
    fn a_sim_link_round_trips_with_edits_and_interventions() {
        let mut spec = RunSpec::preset("leader-kill");
        spec.profile = Some("v3.1".into());
        spec.seed = 42;
        spec.sets = vec![("election_timer".into(), "2000".into())];
        spec = spec
            .fork(5_230_500, FaultAction::Kill(Target::Server(0)))
            .fork(
                9_000_000,
                FaultAction::Partition(
                    vec![Node::Member(0)],
                    vec![Node::Member(1), Node::Relay(0)],
                ),
            );
        spec.text = Some("name = x\n# a & b = c; 100%\n".into());
        spec.scenario = "custom".into();
        spec.until_ms = Some(60_000);
        let r = Route::Sim {
            spec,
            t_us: Some(1_234_500),
        };
        assert_eq!(parse_hash(&r.to_hash()), r);
    }

    #[test]
    fn decode_never_panics_on_odd_input() {
        for s in ["%", "%4", "%zz", "a%2", "%%%", "+%41", "é%C3%A9"] {
            let _ = decode(s);
            let _ = parse_hash(s);
        }
        assert_eq!(decode("%41+b"), "A b");
    }
}
