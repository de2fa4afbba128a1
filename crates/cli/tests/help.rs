//! The CLI's help: every command's `--help` against its snapshot in
//! `tests/help/` (regenerate with `UPDATE_HELP=1 cargo test -p ovsdb-scope
//! --test help` and review the diff), each with an example and the exit
//! codes; `help COMMAND` is the same text; completion scripts for bash, zsh
//! and fish name every command; usage errors exit 2.

use std::path::PathBuf;
use std::process::{Command, Output};

const COMMANDS: &[&str] = &[
    "inspect",
    "dump",
    "check",
    "convert",
    "diagnose",
    "show",
    "find",
    "history",
    "diff",
    "sizes",
    "simulate",
    "compare",
    "idl-experiment",
    "generate",
    "generate southbound",
    "completions",
];

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ovsdb-scope"))
        .args(args)
        .env("COLUMNS", "100")
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("help is UTF-8")
}

fn snapshot(name: &str, got: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/help")
        .join(format!("{}.txt", name.replace(' ', "-")));
    if std::env::var_os("UPDATE_HELP").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_HELP=1 writes it)", path.display()));
    assert_eq!(got, want, "{name} --help changed (UPDATE_HELP=1 to accept)");
}

#[test]
fn every_help_matches_its_snapshot_and_has_an_example_and_exit_codes() {
    let top = run(&["--help"]);
    assert_eq!(top.status.code(), Some(0));
    let top = text(&top);
    snapshot("ovsdb-scope", &top);
    assert!(top.contains("Exit codes:"), "{top}");
    for cmd in COMMANDS {
        let args: Vec<&str> = cmd.split(' ').chain(["--help"]).collect();
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{cmd} --help");
        let t = text(&o);
        assert!(
            !t.contains('\u{1b}'),
            "{cmd}: no colour with NO_COLOR / a pipe"
        );
        snapshot(cmd, &t);
        if *cmd != "generate" {
            assert!(t.contains("Example"), "{cmd} --help has no example:\n{t}");
        }
        let first = cmd.split(' ').next().unwrap();
        if *cmd != "generate" && *cmd != "completions" {
            assert!(
                t.contains("Exit codes"),
                "{cmd} --help names no exit codes:\n{t}"
            );
        }
        // The top-level help lists it with its one-line summary.
        assert!(
            top.contains(&format!("  {first} ")),
            "{first} not in the top help"
        );
        // `help CMD` is `CMD --help`.
        let mut h = vec!["help"];
        h.extend(cmd.split(' '));
        assert_eq!(text(&run(&h)), t, "help {cmd}");
    }
}

#[test]
fn version_and_usage_errors() {
    let v = run(&["--version"]);
    assert_eq!(v.status.code(), Some(0));
    assert_eq!(
        text(&v).trim(),
        format!("ovsdb-scope {}", env!("CARGO_PKG_VERSION"))
    );
    for bad in [
        &[][..],
        &["frobnicate"][..],
        &["inspect"][..],
        &["inspect", "--nope", "x.db"][..],
        &["convert", "--to", "zip", "a", "b"][..],
        &["sizes", "--by", "row", "x.db"][..],
        &["simulate", "leader-kill", "--seeds", "0"][..],
        &["idl-experiment", "no-such"][..],
        &["completions", "tcsh"][..],
    ] {
        let o = run(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.is_empty(), "{bad:?}: says why");
        assert!(o.stdout.is_empty() || bad.is_empty(), "{bad:?}");
    }
    // A parameter of another experiment is a usage error too.
    let o = run(&["idl-experiment", "own-write-echo", "--changed", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--changed"));
}

#[test]
fn completions_for_bash_zsh_and_fish_name_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let script = text(&o);
        assert!(script.len() > 1000, "{shell}: {} bytes", script.len());
        for cmd in COMMANDS {
            let first = cmd.split(' ').next().unwrap();
            assert!(script.contains(first), "{shell} completion lacks {first}");
        }
        // Options too (fish spells them `-l json`).
        assert!(
            script.contains("--json") || script.contains("-l json"),
            "{shell}: options too"
        );
    }
    // The bash script is valid bash.
    let o = run(&["completions", "bash"]);
    let dir = std::env::temp_dir().join(format!("ovsdb-scope-compl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("c.bash");
    std::fs::write(&f, &o.stdout).unwrap();
    let st = Command::new("bash").arg("-n").arg(&f).status().unwrap();
    assert!(st.success(), "bash -n rejects the completion script");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every help example that names a file of this repository runs as
/// written (from the repository's root) and succeeds.
#[test]
fn help_examples_on_bundled_files_run() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bin = env!("CARGO_BIN_EXE_ovsdb-scope");
    let mut ran = 0;
    for cmd in COMMANDS {
        let args: Vec<&str> = cmd.split(' ').chain(["--help"]).collect();
        let t = text(&run(&args));
        let examples = t
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("ovsdb-scope "));
        for ex in examples {
            let bundled = ["static/", "crates/", "scenarios/", "tests/"];
            if !ex
                .split(' ')
                .any(|w| bundled.iter().any(|b| w.starts_with(b)))
            {
                continue;
            }
            let line = ex.replacen("ovsdb-scope", bin, 1);
            let o = Command::new("bash")
                .arg("-c")
                .arg(format!("{line} >/dev/null"))
                .current_dir(&root)
                .env("NO_COLOR", "1")
                .output()
                .unwrap();
            assert_eq!(
                o.status.code(),
                Some(0),
                "{cmd}'s example `{ex}`: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 5, "only {ran} examples name bundled files");
}

/// Every option of every command says what it is.
#[test]
fn every_option_has_help() {
    for cmd in COMMANDS {
        let args: Vec<&str> = cmd.split(' ').chain(["--help"]).collect();
        let t = text(&run(&args));
        let lines: Vec<&str> = t.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let opt = l.trim_start();
            if !(opt.starts_with("--") || opt.starts_with("-h")) || l.len() - opt.len() > 6 {
                continue;
            }
            let next = lines.get(i + 1).map_or("", |n| n.trim());
            let inline = opt.split("  ").nth(1).is_some_and(|h| !h.trim().is_empty());
            assert!(
                inline || !next.is_empty(),
                "{cmd}: `{}` has no help",
                opt.trim()
            );
        }
    }
}

/// `generate southbound` refuses a size of 0 MB and an OUTDIR that is a
/// file, with exit 2 and one line that says why.
#[test]
fn generate_refuses_a_zero_size_and_a_file_as_its_folder() {
    let o = run(&[
        "generate",
        "southbound",
        "/nonexistent-never",
        "--size-mb",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let f = std::env::temp_dir().join(format!("ovsdb-scope-gen-{}", std::process::id()));
    std::fs::write(&f, b"x").unwrap();
    let o = run(&["generate", "southbound", f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let _ = std::fs::remove_file(&f);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a folder"), "{err}");
}

/// The README's "Looking inside a database" and "Diagnosing an incident"
/// examples, run as written from the repository root (a placeholder such
/// as DIR left out): each succeeds (diagnose: 0 or 1, its findings),
/// prints something, notes nothing on stderr, and a `find --json` finds
/// rows (an example that matches nothing shows nothing).
#[test]
fn readme_command_line_examples_run_as_written() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut ran = 0;
    for line in readme.lines() {
        let cmd = line.split(" #").next().unwrap_or_default().trim();
        let Some(rest) = cmd
            .strip_prefix("$B ")
            .or_else(|| cmd.strip_prefix("cargo run -q -p ovsdb-scope -- "))
        else {
            continue;
        };
        let args: Vec<String> = rest
            .split_whitespace()
            .map(|a| a.trim_matches('\'').to_string())
            .collect();
        let sub = args[0].as_str();
        let reads = ["show", "find", "history", "diff", "sizes", "diagnose"];
        if !reads.contains(&sub) || args.iter().any(|a| a == "DIR") {
            continue;
        }
        let o = Command::new(env!("CARGO_BIN_EXE_ovsdb-scope"))
            .args(&args)
            .current_dir(&root)
            .output()
            .unwrap();
        let (out, err) = (text(&o), String::from_utf8_lossy(&o.stderr));
        let ok = if sub == "diagnose" {
            &[0, 1][..]
        } else {
            &[0][..]
        };
        assert!(ok.contains(&o.status.code().unwrap_or(-1)), "{line}\n{err}");
        assert!(!out.trim().is_empty(), "{line}: prints nothing");
        assert_eq!(err, "", "{line}");
        if sub == "find" && args.iter().any(|a| a == "--json") {
            assert!(!out.contains("\"data\":[]"), "{line}: finds no row\n{out}");
        }
        ran += 1;
    }
    assert!(ran >= 7, "only {ran} README examples found");
}
