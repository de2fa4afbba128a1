//! `ovsdb-scope`: the command-line face of the shared core.
//!
//! The arguments are parsed by clap (derive): each subcommand's `Args`
//! struct lives in the module that runs it, beside its code, and the module
//! returns the process exit code. Modules are owned by the area they
//! expose: `formats` (inspect, dump, check, convert), `simulate` (simulate,
//! compare), `idl` (idl-experiment), `diagnose`, `contents` (show, find,
//! history, diff, sizes) and `generate`. `progress` draws the progress bar
//! of long reads.

/// `print!` that ends the process quietly (status 141, as a shell reports
/// death by SIGPIPE) when stdout is a closed pipe (`dump FILE | head -1`),
/// instead of panicking. Every command prints through it or [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write;
        if let Err(e) = write!(std::io::stdout().lock(), $($arg)*) {
            $crate::stdout_failed(e);
        }
    }};
}

/// `println!` that ends quietly on a closed pipe, as [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            $crate::stdout_failed(e);
        }
    }};
}

/// `eprintln!` of an error, after the one prefix every error of the tool
/// has, whatever the command: `ovsdb-scope: ` (as `rg: `; the command is
/// what the user just typed). Every error of a command goes through it.
macro_rules! errln {
    ($($arg:tt)*) => {
        eprintln!("ovsdb-scope: {}", format_args!($($arg)*))
    };
}

/// A write to stdout failed: a closed pipe (the reader has what it
/// wanted) ends the process with status 141 and nothing on stderr; any
/// other error is said once, status 2.
fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() != std::io::ErrorKind::BrokenPipe {
        errln!("cannot write to stdout: {e}");
        std::process::exit(2);
    }
    std::process::exit(141);
}

mod contents;
mod diagnose;
mod formats;
mod generate;
mod idl;
mod progress;
mod simulate;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

const EXIT_CODES: &str = "\
Exit codes:
  0  ok
  1  findings or violations (a damaged file, a broken invariant, a warning finding)
  2  bad input or usage

Run `ovsdb-scope help COMMAND` (or `ovsdb-scope COMMAND --help`) for a command's
options and an example. NO_COLOR is honoured; a progress bar is drawn on stderr
only when it is a terminal and the work takes over a second.";

/// Explore OVSDB clustered databases, diagnose sick clusters and simulate
/// ovsdb-server's Raft.
#[derive(Parser, Debug)]
#[command(
    name = "ovsdb-scope",
    version,
    about = "Explore OVSDB clustered databases, diagnose sick clusters and simulate ovsdb-server's Raft",
    after_help = EXIT_CODES,
    arg_required_else_help = true,
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    Inspect(formats::InspectArgs),
    Dump(formats::DumpArgs),
    Check(formats::CheckArgs),
    Convert(formats::ConvertArgs),
    Diagnose(diagnose::DiagnoseArgs),
    Show(contents::ShowArgs),
    Find(contents::FindArgs),
    History(contents::HistoryArgs),
    Diff(contents::DiffArgs),
    Sizes(contents::SizesArgs),
    Simulate(simulate::SimulateArgs),
    Compare(simulate::CompareArgs),
    IdlExperiment(idl::IdlArgs),
    Generate(generate::GenerateArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(
        after_help = "Example:\n  ovsdb-scope completions bash > /etc/bash_completion.d/ovsdb-scope\n  ovsdb-scope completions fish > ~/.config/fish/completions/ovsdb-scope.fish"
    )]
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}

/// The exit code of a command's result: its own code, or 2 with the
/// error on stderr (bad input or usage).
fn exit_code(r: Result<u8, String>) -> u8 {
    r.unwrap_or_else(|e| {
        errln!("{e}");
        2
    })
}

/// The command line: the derived one, with what only the core knows (the
/// preset names, the IDL parameters' help) filled in.
fn command() -> clap::Command {
    idl::with_param_help(simulate::with_presets(Cli::command()))
}

fn main() -> ExitCode {
    let cli = Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit());
    let code = match cli.cmd {
        Cmd::Inspect(a) => formats::inspect(a),
        Cmd::Dump(a) => formats::dump(a),
        Cmd::Check(a) => formats::check(a),
        Cmd::Convert(a) => formats::convert(a),
        Cmd::Diagnose(a) => diagnose::diagnose(a),
        Cmd::Show(a) => contents::show(a),
        Cmd::Find(a) => contents::find(a),
        Cmd::History(a) => contents::history(a),
        Cmd::Diff(a) => contents::diff(a),
        Cmd::Sizes(a) => contents::sizes(a),
        Cmd::Simulate(a) => simulate::simulate(a),
        Cmd::Compare(a) => simulate::compare(a),
        Cmd::IdlExperiment(a) => idl::experiment(a),
        Cmd::Generate(a) => generate::generate(a),
        Cmd::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command(), "ovsdb-scope", &mut script);
            if let Err(e) = std::io::Write::write_all(&mut std::io::stdout().lock(), &script) {
                stdout_failed(e);
            }
            0
        }
    };
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_definition_is_consistent() {
        command().debug_assert();
    }
}
