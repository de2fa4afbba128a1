//! Every command says its errors the same way: `ovsdb-scope: ` then the
//! error (ripgrep's style), with exit code 2 for bad input. Each command of
//! `--help` is run on a bad input: a schema file where a database, an
//! evidence file or an output folder is expected, or a name none of its
//! choices has.

mod common;
use common::*;

#[test]
fn every_command_prefixes_its_errors_with_the_program_name() {
    let schema = repo_root()
        .join("static/samples/schemas/ovn-sb.ovsschema")
        .display()
        .to_string();
    let x = schema.as_str();
    let dir = TempDir::new("error-prefix");
    let out = dir.path("out.db").display().to_string();
    let cases: &[&[&str]] = &[
        &["inspect", x],
        &["dump", x],
        &["check", x],
        &["convert", "--to", "full", x, &out],
        &["diagnose", x],
        &["show", x],
        &["find", x, "Chassis"],
        &["history", x, "0123"],
        &["diff", x, "--from", "1", "--to", "2"],
        &["sizes", x],
        &["simulate", "no-such-preset"],
        &["compare", "no-such-preset"],
        &["idl-experiment", "write-changed-only", "--diffs", "3"],
        &["generate", "southbound", x],
    ];
    for args in cases {
        let o = ours(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.is_empty(), "{args:?}");
        for line in err.lines() {
            assert!(line.starts_with("ovsdb-scope: "), "{args:?}: {line}");
            assert!(
                !line.starts_with(&format!("ovsdb-scope {}", args[0])),
                "{line}"
            );
        }
    }
    assert!(!std::path::Path::new(&out).exists());
    // Every command is among the cases but the two clap answers itself
    // (its usage errors are clap's `error: ...`).
    let help = ours(&["--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| !["completions", "help"].contains(c))
        .collect();
    let tried: Vec<&str> = cases.iter().map(|a| a[0]).collect();
    assert_eq!(commands, tried);
}
