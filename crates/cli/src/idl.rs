//! `ovsdb-scope idl-experiment NAME [params] [--json]`: the client-side
//! experiments of the IDL core (library calls in `idl::experiments`), with
//! a wall clock supplied here (the core has none).

use idl::params;
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
    #[arg(long, value_name = "C")]
    columns: Option<usize>,
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
    #[arg(long, value_name = "L")]
    lookups: Option<usize>,
    #[arg(long, value_name = "S")]
    seconds: Option<usize>,
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    sizes: Option<Vec<usize>>,
    #[arg(long, value_name = "D")]
    diffs: Option<usize>,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

/// Each parameter's help from the spec (`idl::params::EXPERIMENTS`, which
/// the page's IDL panel shows too): per experiment that takes it, what it
/// is, its default and its bounds.
pub fn with_param_help(cmd: clap::Command) -> clap::Command {
    cmd.mut_subcommand("idl-experiment", |mut sub| {
        let ids: Vec<String> = sub
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect();
        for id in ids {
            let name = id.replace('_', "-");
            let uses: Vec<String> = params::EXPERIMENTS
                .iter()
                .filter_map(|e| {
                    let p = e.params.iter().find(|p| p.name == name)?;
                    Some(format!(
                        "{}: {} (default {}; {} to {})",
                        e.name, p.help, p.default, p.min, p.max
                    ))
                })
                .collect();
            if !uses.is_empty() {
                sub = sub.mut_arg(id.as_str(), |a| a.help(uses.join("; ")));
            }
        }
        sub
    })
}

pub fn experiment(a: IdlArgs) -> u8 {
    crate::exit_code(run(a).map(|()| 0))
}

fn run(a: IdlArgs) -> Result<(), String> {
    // The parameters given, by their spec names (`idl::params`, shared with
    // the web page); defaults, bounds and "not a parameter of this
    // experiment" are the spec's.
    let one = |name: &str, v: Option<usize>| v.map(|v| (name.to_string(), v.to_string()));
    let given: Vec<(String, String)> = [
        one("rows", a.rows),
        one("columns", a.columns),
        one("changed", a.changed),
        one("iterations", a.iterations),
        one("load-balancers", a.load_balancers),
        one("service-monitors", a.service_monitors),
        one("updates-per-sec", a.updates_per_sec),
        one("evaluations-per-sec", a.evaluations_per_sec),
        one("lookups", a.lookups),
        one("seconds", a.seconds),
        a.sizes.as_ref().map(|s| {
            let list: Vec<String> = s.iter().map(usize::to_string).collect();
            ("sizes".to_string(), list.join(","))
        }),
        one("diffs", a.diffs),
    ]
    .into_iter()
    .flatten()
    .collect();
    let name = clap::ValueEnum::to_possible_value(&a.name)
        .map_or_else(String::new, |v| v.get_name().to_string());
    let values = params::parse(&name, &given).map_err(|e| match e.param {
        Some(p) => format!("--{p}: {}", e.reason),
        None => e.reason,
    })?;
    let json = a.json;
    let start = Instant::now();
    let mut clock = move || start.elapsed().as_secs_f64() * 1000.0;
    let (text, j) = params::run(&values, &mut clock);
    if json {
        outln!("{}", j.to_string_compact());
    } else {
        out!("{text}");
    }
    Ok(())
}
