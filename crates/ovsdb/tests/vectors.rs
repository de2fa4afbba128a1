//! Open vSwitch's own data-model test vectors (v3.1.0 `tests/ovsdb-types.at`,
//! `ovsdb-data.at`, `ovsdb-column.at`, `ovsdb-schema.at`), kept as data in
//! `testdata/*.txt` (format: `testdata/README.md`) and run here through
//! this crate's types, atoms, datums, schemas and string syntax.
//!
//! Each case runs one `test-ovsdb` command the way that program does it:
//! every line it would print on stdout is compared byte for byte; a case
//! that OVS expects to fail ends with the message the command dies with,
//! which must contain the text OVS's test looks for.
//!
//! Run: `cargo test -p ovsdb --test vectors -- --nocapture` to see the
//! count and any failing case.

use std::fmt::Write as _;
use std::path::Path;

use ovsdb::strings::{atom_range_from_string, datum_from_string, datum_to_string};
use ovsdb::{Atom, AtomicType, BaseType, ColumnSchema, DatabaseSchema, Datum, Json, Type};

/// One case of a vector file.
struct Case {
    file: String,
    name: String,
    src: String,
    cmd: String,
    args: Vec<Vec<u8>>,
    out: Vec<String>,
    /// The command must die with a message containing this.
    fail: Option<String>,
    /// A known difference from OVS: instead of matching `out`/`fail`, the
    /// command dies with a message containing this (so a change is seen).
    differs: Option<String>,
}

/// Undoes the `argx`/`outx`/`failx` escapes: `\n`, `\\`, `\xHH`.
fn unescape(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            Some(b'n') => {
                out.push(b'\n');
                i += 2;
            }
            Some(b'\\') => {
                out.push(b'\\');
                i += 2;
            }
            Some(b'x') => {
                let hex = s.get(i + 2..i + 4).ok_or("short \\x escape")?;
                out.push(u8::from_str_radix(hex, 16).map_err(|e| e.to_string())?);
                i += 4;
            }
            _ => return Err(format!("bad escape in {s:?}")),
        }
    }
    Ok(out)
}

fn text(b: Vec<u8>) -> Result<String, String> {
    String::from_utf8(b).map_err(|e| e.to_string())
}

fn parse_file(file: &str, body: &str) -> Result<Vec<Case>, String> {
    let mut cases: Vec<Case> = Vec::new();
    for (n, line) in body.lines().enumerate() {
        let at = || format!("{file}:{}", n + 1);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("== ") {
            cases.push(Case {
                file: file.to_string(),
                name: name.to_string(),
                src: String::new(),
                cmd: String::new(),
                args: Vec::new(),
                out: Vec::new(),
                fail: None,
                differs: None,
            });
            continue;
        }
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let case = cases
            .last_mut()
            .ok_or_else(|| format!("{}: line before the first case", at()))?;
        let raw = |v: &str| -> Result<Vec<u8>, String> {
            if key.ends_with('x') {
                unescape(v).map_err(|e| format!("{}: {e}", at()))
            } else {
                Ok(v.as_bytes().to_vec())
            }
        };
        match key {
            "src" => case.src = value.to_string(),
            "cmd" => case.cmd = value.to_string(),
            "arg" | "argx" => case.args.push(raw(value)?),
            "out" | "outx" => case.out.push(text(raw(value)?)?),
            "fail" | "failx" => case.fail = Some(text(raw(value)?)?),
            "differs" => case.differs = Some(value.to_string()),
            _ => return Err(format!("{}: unknown key {key:?}", at())),
        }
    }
    Ok(cases)
}

/// What a command printed, and the message it died with, if it did.
#[derive(Default)]
struct Run {
    out: Vec<String>,
    died: Option<String>,
}

/// `test-ovsdb`'s `parse_json`: a JSON text that does not parse is fatal.
fn parse_json(arg: &[u8]) -> Result<Json, String> {
    ovsdb::json::parse(arg).map_err(|e| e.to_string())
}

/// `test-ovsdb`'s `unbox_json`: a one-element array stands for its element
/// (so a bare string can be given as `["integer"]`).
fn unbox(j: Json) -> Json {
    match j {
        Json::Array(mut a) if a.len() == 1 => a.pop().unwrap_or(Json::Null),
        j => j,
    }
}

fn arg_json(arg: &[u8]) -> Result<Json, String> {
    parse_json(arg).map(unbox)
}

fn arg_str(arg: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(arg).map_err(|e| e.to_string())
}

/// Output JSON as `test-ovsdb` prints it: compact, members sorted.
fn print(j: &Json) -> String {
    j.sorted_recursive().to_string_compact()
}

fn datum_json(d: &Datum) -> String {
    print(&d.to_json())
}

/// Runs one command, filling `run` until it finishes or dies.
fn execute(cmd: &str, args: &[Vec<u8>], run: &mut Run) -> Result<(), String> {
    let err = |e: ovsdb::Error| e.to_string();
    let arg = |i: usize| args.get(i).ok_or_else(|| format!("missing argument {i}"));
    // The arguments after the first (the atoms or data to parse).
    let rest = args.get(1..).unwrap_or(&[]);
    match cmd {
        "default-atoms" => {
            for t in ATOMIC {
                let a = Atom::default_for(t);
                let ok = a.is_default() && a.atomic_type() == t;
                run.out
                    .push(format!("{}: {}", t.name(), if ok { "OK" } else { "wrong" }));
            }
        }
        "default-data" => {
            for n_min in 0..=1u32 {
                for key in ATOMIC {
                    for value in std::iter::once(None).chain(ATOMIC.map(Some)) {
                        let ty = Type {
                            key: BaseType::new(key),
                            value: value.map(BaseType::new),
                            min: n_min,
                            max: 1,
                        };
                        let d = Datum::default_for(&ty);
                        let ok = d.is_default(&ty) && d.check(&ty).is_ok();
                        run.out.push(format!(
                            "key {}, value {}, n_min {n_min}: {}",
                            key.name(),
                            value.map_or("void", AtomicType::name),
                            if ok { "OK" } else { "wrong" }
                        ));
                    }
                }
            }
        }
        "parse-atomic-type" => {
            let t = AtomicType::from_json(&arg_json(arg(0)?)?).map_err(err)?;
            run.out.push(print(&Json::String(t.name().into())));
        }
        "parse-base-type" => {
            let b = BaseType::from_json(&arg_json(arg(0)?)?).map_err(err)?;
            run.out.push(print(&b.to_json()));
        }
        "parse-type" => {
            let t = Type::from_json(&arg_json(arg(0)?)?).map_err(err)?;
            run.out.push(print(&t.to_json()));
        }
        "parse-atoms" => {
            let base = BaseType::from_json(&arg_json(arg(0)?)?).map_err(err)?;
            for a in rest {
                // Errors of the atom are printed, not fatal.
                run.out
                    .push(match Atom::from_json(&arg_json(a)?, &base, None) {
                        Ok(atom) => print(&atom.to_json()),
                        Err(e) => e.to_string(),
                    });
            }
        }
        "parse-atom-strings" => {
            let base = BaseType::from_json(&arg_json(arg(0)?)?).map_err(err)?;
            for a in rest {
                let (atom, end) =
                    atom_range_from_string(&base, arg_str(a)?).map_err(|e| e.to_string())?;
                let mut s = atom.to_string();
                if let Some(end) = end {
                    let _ = write!(s, "-{end}");
                }
                run.out.push(s);
            }
        }
        "parse-data" => {
            let ty = Type::from_json(&arg_json(arg(0)?)?).map_err(err)?;
            for a in rest {
                let d = Datum::from_json(&arg_json(a)?, &ty).map_err(err)?;
                run.out.push(datum_json(&d));
            }
        }
        "parse-data-strings" => {
            let ty = Type::from_json(&arg_json(arg(0)?)?).map_err(err)?;
            for a in rest {
                let d = datum_from_string(&ty, arg_str(a)?).map_err(|e| e.to_string())?;
                run.out.push(datum_to_string(&d, &ty));
            }
        }
        "sort-atoms" => {
            let base = BaseType::from_json(&arg_json(arg(0)?)?).map_err(err)?;
            let Json::Array(list) = arg_json(arg(1)?)? else {
                return Err("second argument must be array".into());
            };
            let mut atoms = list
                .iter()
                .map(|j| Atom::from_json(j, &base, None))
                .collect::<Result<Vec<_>, _>>()
                .map_err(err)?;
            atoms.sort();
            run.out.push(print(&Json::Array(
                atoms.iter().map(Atom::to_json).collect(),
            )));
        }
        "diff-data" => {
            let ty = Type::from_json(&arg_json(arg(0)?)?).map_err(err)?;
            for pair in rest.chunks_exact(2) {
                let old = Datum::from_json(&arg_json(&pair[0])?, &ty).map_err(err)?;
                // `ovsdb_transient_datum_from_json`: any number of elements.
                let new = Datum::from_json(&arg_json(&pair[1])?, &ty.relaxed()).map_err(err)?;
                let diff = Datum::diff(&old, &new, &ty);
                let again = old.with_diff(&diff, &ty).map_err(err)?;
                if again != new {
                    return Err("failed to apply diff".into());
                }
                let mut in_place = old.clone();
                in_place.apply_diff(&diff, &ty).map_err(err)?;
                if in_place != new {
                    return Err("failed to apply diff in place".into());
                }
                run.out.push(format!("diff: {}", datum_json(&diff)));
                run.out.push(format!("apply diff: {}", datum_json(&again)));
                run.out
                    .push(format!("apply diff in place: {}", datum_json(&in_place)));
                run.out.push("OK".into());
            }
        }
        "parse-column" => {
            let name = arg_str(arg(0)?)?;
            let c = ColumnSchema::from_json(name, &parse_json(arg(1)?)?).map_err(err)?;
            run.out.push(print(&c.to_json()));
        }
        "parse-schema" => {
            let s = DatabaseSchema::from_json(&parse_json(arg(0)?)?).map_err(err)?;
            run.out.push(print(&s.to_json()));
        }
        other => return Err(format!("unknown command {other}")),
    }
    Ok(())
}

const ATOMIC: [AtomicType; 5] = [
    AtomicType::Integer,
    AtomicType::Real,
    AtomicType::Boolean,
    AtomicType::String,
    AtomicType::Uuid,
];

/// How a case went.
enum Outcome {
    Pass,
    /// A known difference that still differs the way its file says.
    Differs(String),
    Fail(String),
}

fn check(case: &Case) -> Outcome {
    let mut run = Run::default();
    if let Err(e) = execute(&case.cmd, &case.args, &mut run) {
        run.died = Some(e);
    }
    if let Some(want) = &case.differs {
        return match &run.died {
            Some(got) if got.contains(want.as_str()) => Outcome::Differs(got.clone()),
            got => Outcome::Fail(format!(
                "  known difference changed: expected a failure containing {want:?}, got {got:?}\n"
            )),
        };
    }
    let mut why = String::new();
    if run.out != case.out {
        let _ = writeln!(why, "  expected output:");
        for l in &case.out {
            let _ = writeln!(why, "    {l}");
        }
        let _ = writeln!(why, "  actual output:");
        for l in &run.out {
            let _ = writeln!(why, "    {l}");
        }
    }
    match (&case.fail, &run.died) {
        (None, None) => {}
        (Some(want), Some(got)) if got.contains(want.as_str()) => {}
        (want, got) => {
            let _ = writeln!(
                why,
                "  expected failure: {}\n  actual failure:   {}",
                want.as_deref().unwrap_or("(none)"),
                got.as_deref().unwrap_or("(none)")
            );
        }
    }
    if why.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(why)
    }
}

#[test]
fn ovs_vectors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("testdata directory")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    let (mut total, mut passed, mut differ) = (0, 0, 0);
    let mut report = String::new();
    let mut known = String::new();
    for name in &names {
        let body = std::fs::read_to_string(dir.join(name)).expect("vector file");
        let cases = parse_file(name, &body).unwrap_or_else(|e| panic!("{e}"));
        let mut file_passed = 0;
        for case in &cases {
            match check(case) {
                Outcome::Pass => file_passed += 1,
                Outcome::Differs(got) => {
                    differ += 1;
                    let _ = writeln!(
                        known,
                        "known difference {} \"{}\" ({}): {got}",
                        case.file, case.name, case.src
                    );
                }
                Outcome::Fail(why) => {
                    let _ = writeln!(
                        report,
                        "FAIL {} \"{}\" ({}, {})\n{why}",
                        case.file, case.name, case.src, case.cmd
                    );
                }
            }
        }
        println!("{name}: {file_passed} of {} vectors pass", cases.len());
        total += cases.len();
        passed += file_passed;
    }
    print!("{known}{report}");
    println!("{passed} of {total} vectors pass ({differ} known differences)");
    assert!(total > 0, "no vectors found in {}", dir.display());
    assert_eq!(passed + differ, total, "failing vectors:\n{report}");
}
