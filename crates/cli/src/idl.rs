//! `ovsdb-scope idl-experiment NAME [params] [--json]`: the client-side
//! experiments of the IDL core (library calls in `idl::experiments`), with
//! a wall clock supplied here (the core has none).

use idl::experiments::{self, IndexVsHashParams, WcoParams};
use std::time::Instant;

const USAGE: &str = "\
usage: ovsdb-scope idl-experiment NAME [params] [--json]
  write-changed-only [--rows N] [--columns C] [--changed K]
  own-write-echo     [--rows N] [--iterations I]
  index-vs-hash      [--load-balancers N] [--service-monitors M] [--updates-per-sec U]
                     [--evaluations-per-sec E] [--lookups L] [--seconds S]
  diff-apply         [--sizes 1000,10000,100000] [--diffs D]";

fn parse_usize(v: Option<&String>, name: &str) -> Result<usize, String> {
    let v = v.ok_or_else(|| format!("{name} needs a value"))?;
    v.parse::<usize>()
        .map_err(|_| format!("{name}: '{v}' is not a non-negative integer"))
}

pub fn experiment(args: &[String]) -> u8 {
    match run(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ovsdb-scope idl-experiment: {e}\n{USAGE}");
            2
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let name = args.first().ok_or("missing experiment name")?;
    let mut json = false;
    let mut opts: Vec<(String, Option<String>)> = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let a = &args[i];
        if a == "--json" {
            json = true;
        } else if let Some(k) = a.strip_prefix("--") {
            let (k, v) = match k.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => {
                    i += 1;
                    (k.to_string(), args.get(i).cloned())
                }
            };
            opts.push((k, v));
        } else {
            return Err(format!("unexpected argument '{a}'"));
        }
        i += 1;
    }
    let get = |k: &str| {
        opts.iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    let num = |k: &str, default: usize| -> Result<usize, String> {
        match get(k) {
            None => Ok(default),
            Some(v) => parse_usize(v.as_ref(), &format!("--{k}")),
        }
    };
    let known: &[&str] = match name.as_str() {
        "write-changed-only" => &["rows", "columns", "changed"],
        "own-write-echo" => &["rows", "iterations"],
        "index-vs-hash" => &[
            "load-balancers",
            "service-monitors",
            "updates-per-sec",
            "evaluations-per-sec",
            "lookups",
            "seconds",
        ],
        "diff-apply" => &["sizes", "diffs"],
        other => return Err(format!("unknown experiment '{other}'")),
    };
    for (k, _) in &opts {
        if !known.contains(&k.as_str()) {
            return Err(format!("unknown option --{k} for {name}"));
        }
    }
    let start = Instant::now();
    let mut clock = move || start.elapsed().as_secs_f64() * 1000.0;
    let (text, j) = match name.as_str() {
        "write-changed-only" => {
            let p = WcoParams {
                rows: num("rows", 10_000)?,
                columns: num("columns", 6)?,
                changed: num("changed", 1)?,
            };
            if p.columns == 0 || p.columns > 6 {
                return Err("--columns must be 1..6".into());
            }
            let r = experiments::write_changed_only(p, &mut clock);
            (r.to_text(), r.to_json())
        }
        "own-write-echo" => {
            let r = experiments::own_write_echo(num("rows", 100)?, num("iterations", 20)?);
            (r.to_text(), r.to_json())
        }
        "index-vs-hash" => {
            let d = IndexVsHashParams::default();
            let p = IndexVsHashParams {
                load_balancers: num("load-balancers", d.load_balancers)?,
                service_monitors: num("service-monitors", d.service_monitors)?.max(1),
                updates_per_sec: num("updates-per-sec", d.updates_per_sec)?,
                evaluations_per_sec: num("evaluations-per-sec", d.evaluations_per_sec)?,
                lookups_per_evaluation: num("lookups", d.lookups_per_evaluation)?,
                seconds: num("seconds", d.seconds)?,
            };
            let r = experiments::index_vs_hash(p, &mut clock);
            (r.to_text(), r.to_json())
        }
        _ => {
            let sizes: Vec<usize> = match get("sizes") {
                None => vec![1_000, 10_000, 100_000],
                Some(v) => v
                    .ok_or("--sizes needs a value")?
                    .split(',')
                    .map(|s| {
                        s.trim()
                            .parse::<usize>()
                            .map_err(|_| format!("--sizes: '{s}' is not an integer"))
                    })
                    .collect::<Result<_, _>>()?,
            };
            if sizes.is_empty() || sizes.iter().any(|&s| s == 0 || s > 10_000_000) {
                return Err("--sizes must be 1..10000000".into());
            }
            let r = experiments::diff_apply(&sizes, num("diffs", 2000)?.max(1), &mut clock);
            (r.to_text(), r.to_json())
        }
    };
    if json {
        println!("{}", j.to_string_compact());
    } else {
        print!("{text}");
    }
    Ok(())
}
