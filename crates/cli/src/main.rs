//! `ovsdb-scope`: the command-line face of the shared core.
//!
//! Each subcommand lives in its own module and returns the process exit code.
//! Modules are owned by the area they expose: `formats` (inspect, dump, check,
//! convert), `simulate` (simulate, compare) and `idl` (idl-experiment).

mod contents;
mod diagnose;
mod formats;
mod generate;
mod idl;
mod simulate;

use std::process::ExitCode;

const USAGE: &str = "\
ovsdb-scope: explore OVSDB clustered databases and simulate ovsdb-server's Raft

USAGE:
  ovsdb-scope inspect [--json] FILE...
  ovsdb-scope dump [--at INDEX] [--json] FILE
  ovsdb-scope check FILE...
  ovsdb-scope convert --to full|diff IN OUT
  ovsdb-scope simulate SCENARIO [--profile P] [--set KNOB=VALUE]... [--seed N | --seeds N] [--json]
                       [--write-logs DIR] [--trace FILE.jsonl]
  ovsdb-scope compare SCENARIO --a KNOBS --b KNOBS [--seeds N] [--json]
  ovsdb-scope idl-experiment NAME [params] [--json]
  ovsdb-scope generate southbound OUTDIR [--size-mb N] [...]   (large test files)
  ovsdb-scope diagnose [--json] [--set KNOB=VALUE]... PATH...   (files, folders, archives)
  ovsdb-scope show FILE [--at INDEX]                  (like ovn-nbctl/ovn-sbctl/ovs-vsctl show)
  ovsdb-scope find FILE TABLE [CONDITION...] [--at INDEX] [--json]
  ovsdb-scope history FILE UUID [--json]
  ovsdb-scope diff FILE --from I --to J [--json]
  ovsdb-scope sizes FILE... [--by table|column|client] [--at INDEX] [--json]
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[1..];
    let code = match cmd.as_str() {
        "inspect" => formats::inspect(rest),
        "dump" => formats::dump(rest),
        "check" => formats::check(rest),
        "convert" => formats::convert(rest),
        "simulate" => simulate::simulate(rest),
        "compare" => simulate::compare(rest),
        "idl-experiment" => idl::experiment(rest),
        "diagnose" => diagnose::diagnose(rest),
        "generate" => generate::generate(rest),
        "show" => contents::show(rest),
        "find" => contents::find(rest),
        "history" => contents::history(rest),
        "diff" => contents::diff(rest),
        "sizes" => contents::sizes(rest),
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            0
        }
        other => {
            eprintln!("ovsdb-scope: unknown command '{other}'\n{USAGE}");
            2
        }
    };
    ExitCode::from(code)
}
