//! `ovsdb-scope idl-experiment NAME [params] [--json]`: the client-side
//! experiments of the IDL core (library calls in `idl::experiments`), with
//! a wall clock supplied here (the core has none).

use idl::experiments::{self, IndexVsHashParams, WcoParams};
use std::time::Instant;

/// The client-side experiments.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Experiment {
    /// Write only the columns that changed (seed 001)
    WriteChangedOnly,
    /// Updates the server echoes back for the client's own writes
    OwnWriteEcho,
    /// A persistent index against a temporary hash per evaluation
    IndexVsHash,
    /// Applying column diffs to big sets and maps
    DiffApply,
}

/// `idl-experiment NAME [params] [--json]`
#[derive(clap::Args, Debug)]
#[command(
    about = "Client-side (IDL) experiments: bytes, operations and CPU of IDL choices",
    after_help = "Parameters per experiment:\n  write-changed-only [--rows N] [--columns C] [--changed K]\n  own-write-echo     [--rows N] [--iterations I]\n  index-vs-hash      [--load-balancers N] [--service-monitors M] [--updates-per-sec U]\n                     [--evaluations-per-sec E] [--lookups L] [--seconds S]\n  diff-apply         [--sizes 1000,10000,100000] [--diffs D]\n\nExample:\n  ovsdb-scope idl-experiment write-changed-only --rows 10000 --changed 1\n\nExit codes: 0 ok, 2 bad usage."
)]
pub struct IdlArgs {
    /// The experiment
    #[arg(value_enum)]
    name: Experiment,
    #[arg(long, value_name = "N")]
    rows: Option<usize>,
    /// Columns per row (1..6)
    #[arg(long, value_name = "C")]
    columns: Option<usize>,
    /// Columns changed per write
    #[arg(long, value_name = "K")]
    changed: Option<usize>,
    #[arg(long, value_name = "I")]
    iterations: Option<usize>,
    #[arg(long, value_name = "N")]
    load_balancers: Option<usize>,
    #[arg(long, value_name = "M")]
    service_monitors: Option<usize>,
    #[arg(long, value_name = "U")]
    updates_per_sec: Option<usize>,
    #[arg(long, value_name = "E")]
    evaluations_per_sec: Option<usize>,
    /// Lookups per evaluation
    #[arg(long, value_name = "L")]
    lookups: Option<usize>,
    #[arg(long, value_name = "S")]
    seconds: Option<usize>,
    /// Set or map sizes, comma-separated
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    sizes: Option<Vec<usize>>,
    /// Diffs applied per size
    #[arg(long, value_name = "D")]
    diffs: Option<usize>,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

pub fn experiment(a: IdlArgs) -> u8 {
    crate::exit_code("ovsdb-scope idl-experiment", run(a).map(|()| 0))
}

fn run(a: IdlArgs) -> Result<(), String> {
    use Experiment::*;
    // Each experiment takes its own parameters; another's is a mistake.
    let given: &[(&str, bool)] = &[
        ("rows", a.rows.is_some()),
        ("columns", a.columns.is_some()),
        ("changed", a.changed.is_some()),
        ("iterations", a.iterations.is_some()),
        ("load-balancers", a.load_balancers.is_some()),
        ("service-monitors", a.service_monitors.is_some()),
        ("updates-per-sec", a.updates_per_sec.is_some()),
        ("evaluations-per-sec", a.evaluations_per_sec.is_some()),
        ("lookups", a.lookups.is_some()),
        ("seconds", a.seconds.is_some()),
        ("sizes", a.sizes.is_some()),
        ("diffs", a.diffs.is_some()),
    ];
    let known: &[&str] = match a.name {
        WriteChangedOnly => &["rows", "columns", "changed"],
        OwnWriteEcho => &["rows", "iterations"],
        IndexVsHash => &[
            "load-balancers",
            "service-monitors",
            "updates-per-sec",
            "evaluations-per-sec",
            "lookups",
            "seconds",
        ],
        DiffApply => &["sizes", "diffs"],
    };
    for (k, set) in given {
        if *set && !known.contains(k) {
            let name = clap::ValueEnum::to_possible_value(&a.name)
                .map_or_else(String::new, |v| v.get_name().to_string());
            return Err(format!("unknown option --{k} for {name}"));
        }
    }
    let json = a.json;
    let start = Instant::now();
    let mut clock = move || start.elapsed().as_secs_f64() * 1000.0;
    let (text, j) = match a.name {
        WriteChangedOnly => {
            let p = WcoParams {
                rows: a.rows.unwrap_or(10_000),
                columns: a.columns.unwrap_or(6),
                changed: a.changed.unwrap_or(1),
            };
            if p.columns == 0 || p.columns > 6 {
                return Err("--columns must be 1..6".into());
            }
            let r = experiments::write_changed_only(p, &mut clock);
            (r.to_text(), r.to_json())
        }
        OwnWriteEcho => {
            let r = experiments::own_write_echo(a.rows.unwrap_or(100), a.iterations.unwrap_or(20));
            (r.to_text(), r.to_json())
        }
        IndexVsHash => {
            let d = IndexVsHashParams::default();
            let p = IndexVsHashParams {
                load_balancers: a.load_balancers.unwrap_or(d.load_balancers),
                service_monitors: a.service_monitors.unwrap_or(d.service_monitors).max(1),
                updates_per_sec: a.updates_per_sec.unwrap_or(d.updates_per_sec),
                evaluations_per_sec: a.evaluations_per_sec.unwrap_or(d.evaluations_per_sec),
                lookups_per_evaluation: a.lookups.unwrap_or(d.lookups_per_evaluation),
                seconds: a.seconds.unwrap_or(d.seconds),
            };
            let r = experiments::index_vs_hash(p, &mut clock);
            (r.to_text(), r.to_json())
        }
        DiffApply => {
            let sizes = a
                .sizes
                .clone()
                .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
            if sizes.is_empty() || sizes.iter().any(|&s| s == 0 || s > 10_000_000) {
                return Err("--sizes must be 1..10000000".into());
            }
            let r = experiments::diff_apply(&sizes, a.diffs.unwrap_or(2000).max(1), &mut clock);
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
