//! The IDL experiments' parameters, one spec for every front end: the CLI
//! (`ovsdb-scope idl-experiment write-changed-only --rows 500`) and the web
//! page (`#idl=write-changed-only&rows=500`) both hand (name, value) pairs
//! to [`parse`] and run the result with [`run`]. Names, defaults and bounds
//! live only here.

use crate::experiments::{self, IndexVsHashParams, WcoParams};
use ovsdb::json::Json;
use std::collections::BTreeMap;

/// One parameter: its name (as the CLI's `--name` and the page's knob),
/// default, accepted range and what it means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    pub name: &'static str,
    /// Default; a list parameter's is comma-separated.
    pub default: &'static str,
    pub min: usize,
    pub max: usize,
    /// A comma-separated list of numbers (else one number).
    pub list: bool,
    pub help: &'static str,
}

/// An experiment and its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Experiment {
    pub name: &'static str,
    pub help: &'static str,
    pub params: &'static [Param],
}

const fn n(
    name: &'static str,
    default: &'static str,
    min: usize,
    max: usize,
    help: &'static str,
) -> Param {
    Param {
        name,
        default,
        min,
        max,
        list: false,
        help,
    }
}

pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "write-changed-only",
        help: "Write only the columns that changed (seed 001)",
        params: &[
            n("rows", "10000", 1, 200_000, "Port_Binding rows written"),
            n("columns", "6", 1, 6, "columns per row"),
            n(
                "changed",
                "1",
                0,
                200_000,
                "rows that really change (a new external_ids)",
            ),
        ],
    },
    Experiment {
        name: "own-write-echo",
        help: "Updates the server echoes back for the client's own writes",
        params: &[
            n("rows", "100", 1, 200_000, "rows written"),
            n("iterations", "20", 1, 100_000, "writes"),
        ],
    },
    Experiment {
        name: "index-vs-hash",
        help: "A persistent index against a temporary hash per evaluation",
        params: &[
            n("load-balancers", "1000", 1, 100_000, "Load_Balancer rows"),
            n(
                "service-monitors",
                "4000",
                1,
                200_000,
                "Service_Monitor rows",
            ),
            n(
                "updates-per-sec",
                "1000",
                0,
                1_000_000,
                "status flips per second",
            ),
            n(
                "evaluations-per-sec",
                "1",
                0,
                100_000,
                "route-gate evaluations per second",
            ),
            n(
                "lookups",
                "16",
                0,
                100_000,
                "backends checked per evaluation",
            ),
            n("seconds", "5", 1, 60, "seconds simulated"),
        ],
    },
    Experiment {
        name: "diff-apply",
        help: "Applying column diffs to big sets and maps",
        params: &[
            Param {
                name: "sizes",
                default: "1000,10000,100000",
                min: 1,
                max: 10_000_000,
                list: true,
                help: "set or map sizes",
            },
            n("diffs", "2000", 1, 1_000_000, "diffs applied per size"),
        ],
    },
];

/// The spec of experiment `name`.
pub fn experiment(name: &str) -> Option<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.name == name)
}

/// Every parameter's value (a number parameter has one).
#[derive(Debug, Clone, PartialEq)]
pub struct Values {
    pub experiment: &'static Experiment,
    values: BTreeMap<&'static str, Vec<usize>>,
}

impl Values {
    /// The value of number parameter `name` (0 if it has none).
    pub fn get(&self, name: &str) -> usize {
        self.values
            .get(name)
            .and_then(|v| v.first())
            .copied()
            .unwrap_or(0)
    }
    pub fn list(&self, name: &str) -> &[usize] {
        self.values.get(name).map_or(&[], Vec::as_slice)
    }
}

/// Why given parameters were refused: the parameter (None: the experiment
/// name) and the reason. Each front end names the parameter its own way
/// (`--rows` on the command line, `rows` on the page).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError {
    pub param: Option<String>,
    pub reason: String,
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.param {
            Some(p) => write!(f, "{p}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

fn bad(p: &str, reason: String) -> ParamError {
    ParamError {
        param: Some(p.to_string()),
        reason,
    }
}

fn numbers(p: &Param, v: &str) -> Result<Vec<usize>, ParamError> {
    let parts: Vec<&str> = if p.list {
        v.split(',').map(str::trim).collect()
    } else {
        vec![v.trim()]
    };
    let mut out = Vec::new();
    for x in parts {
        let n: usize = x
            .parse()
            .map_err(|_| bad(p.name, format!("'{x}' is not a whole number")))?;
        if !(p.min..=p.max).contains(&n) {
            return Err(bad(
                p.name,
                format!("must be {}..{} (got {n})", p.min, p.max),
            ));
        }
        out.push(n);
    }
    Ok(out)
}

/// Reads `given` (name, value) pairs for experiment `name`: missing ones take
/// their defaults; an unknown name, a value that is not a number or one out
/// of range is an error that names it.
pub fn parse(name: &str, given: &[(String, String)]) -> Result<Values, ParamError> {
    let e = experiment(name).ok_or_else(|| {
        let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
        ParamError {
            param: None,
            reason: format!(
                "unknown IDL experiment '{name}' (one of {})",
                names.join(", ")
            ),
        }
    })?;
    let mut values = BTreeMap::new();
    for p in e.params {
        values.insert(p.name, numbers(p, p.default)?);
    }
    for (k, v) in given {
        let p = e
            .params
            .iter()
            .find(|p| p.name == k)
            .ok_or_else(|| bad(k, format!("not a parameter of {name}")))?;
        values.insert(p.name, numbers(p, v)?);
    }
    Ok(Values {
        experiment: e,
        values,
    })
}

/// Runs the experiment: its report as text and as JSON. `clock` gives
/// milliseconds (the core has none).
pub fn run(v: &Values, clock: &mut dyn FnMut() -> f64) -> (String, Json) {
    match v.experiment.name {
        "write-changed-only" => {
            let p = WcoParams {
                rows: v.get("rows"),
                columns: v.get("columns"),
                changed: v.get("changed").min(v.get("rows")),
            };
            let r = experiments::write_changed_only(p, clock);
            (r.to_text(), r.to_json())
        }
        "own-write-echo" => {
            let r = experiments::own_write_echo(v.get("rows"), v.get("iterations"));
            (r.to_text(), r.to_json())
        }
        "index-vs-hash" => {
            let p = IndexVsHashParams {
                load_balancers: v.get("load-balancers"),
                service_monitors: v.get("service-monitors"),
                updates_per_sec: v.get("updates-per-sec"),
                evaluations_per_sec: v.get("evaluations-per-sec"),
                lookups_per_evaluation: v.get("lookups"),
                seconds: v.get("seconds"),
            };
            let r = experiments::index_vs_hash(p, clock);
            (r.to_text(), r.to_json())
        }
        _ => {
            let r = experiments::diff_apply(v.list("sizes"), v.get("diffs"), clock);
            (r.to_text(), r.to_json())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_parse_and_given_values_override_them() {
        for e in EXPERIMENTS {
            let v = parse(e.name, &[]).unwrap();
            for p in e.params {
                assert!(!v.list(p.name).is_empty(), "{} {}", e.name, p.name);
            }
        }
        let v = parse("write-changed-only", &pairs(&[("rows", "500")])).unwrap();
        assert_eq!((v.get("rows"), v.get("columns")), (500, 6));
        let v = parse("diff-apply", &pairs(&[("sizes", "10, 20")])).unwrap();
        assert_eq!(v.list("sizes"), &[10, 20]);
    }

    #[test]
    fn bad_names_and_values_are_errors_that_name_them() {
        let e = parse("write-changed-only", &pairs(&[("lookups", "3")])).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("lookups"));
        assert_eq!(
            e.to_string(),
            "lookups: not a parameter of write-changed-only"
        );
        let e = parse("write-changed-only", &pairs(&[("columns", "7")])).unwrap_err();
        assert_eq!(e.to_string(), "columns: must be 1..6 (got 7)");
        let e = parse("index-vs-hash", &pairs(&[("seconds", "x")])).unwrap_err();
        assert!(e.reason.contains("not a whole number"), "{e}");
        let e = parse("nope", &[]).unwrap_err();
        assert!(
            e.param.is_none() && e.reason.contains("write-changed-only"),
            "{e}"
        );
    }
}
