//! `generate southbound`: writes three servers' clustered OVN Southbound
//! files of a chosen size (benchmarks, size tests). The shape and the bytes
//! come from `ovsdb_log::synth_sb`; this module only parses the options and
//! writes the files.

use std::io::Write;

use ovsdb_log::synth_sb::{southbound, SbShape};

/// The real OVN_Southbound 20.27.0 schema (ovn 23.03), as bundled with the app.
const SB_SCHEMA: &str = include_str!("../../../static/samples/schemas/ovn-sb.ovsschema");

pub const HELP: &str = "\
ovsdb-scope generate: write large clustered OVN Southbound files of a chosen shape

USAGE:
  ovsdb-scope generate southbound OUTDIR [OPTIONS]

Writes OUTDIR/s1.db, s2.db and s3.db: one cluster of three servers, each file
starting with a snapshot (chassis with encaps, datapaths with port bindings,
logical flows) and followed by entries like ovn-northd's (flows added and
removed, port bindings claimed), each with a commit-index record. The same
options always give the same bytes; `ovsdb-tool check-cluster` accepts them.

OPTIONS (defaults in brackets):
  --chassis N              chassis, each with one geneve encap [120]
  --datapaths N            datapaths (logical switches) [200]
  --ports-per-datapath N   port bindings per datapath [20]
  --flows-per-datapath N   logical flows per datapath in the snapshot [100]
  --entries N              entries after the snapshot [10000]
  --size-mb N              instead of --entries: grow each file to N MB
  --flows-per-entry N      flows added (and removed) per entry [8]
  --ports-per-entry N      port bindings claimed per entry [2]
  --full                   full values instead of column diffs in entries
  --seed N                 [1]

EXAMPLE:
  ovsdb-scope generate southbound /tmp/sb --size-mb 1000

EXIT STATUS:
  0 written, 2 bad usage or a file could not be written
";

pub fn generate(args: &[String]) -> u8 {
    if args.iter().any(|a| a == "-h" || a == "--help") || args.is_empty() {
        print!("{HELP}");
        return if args.is_empty() { 2 } else { 0 };
    }
    if args[0] != "southbound" {
        eprintln!(
            "ovsdb-scope generate: unknown kind '{}' (only 'southbound')",
            args[0]
        );
        return 2;
    }
    let mut shape = SbShape::default();
    let mut out: Option<String> = None;
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        let mut num = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or(format!("{name} needs a value"))?;
            v.parse()
                .map_err(|_| format!("{name}: '{v}' is not a whole number"))
        };
        let r = match a.as_str() {
            "--chassis" => num(a).map(|v| shape.chassis = v as usize),
            "--datapaths" => num(a).map(|v| shape.datapaths = v.max(1) as usize),
            "--ports-per-datapath" => num(a).map(|v| shape.ports_per_datapath = v as usize),
            "--flows-per-datapath" => num(a).map(|v| shape.flows_per_datapath = v as usize),
            "--entries" => num(a).map(|v| shape.entries = v as usize),
            "--size-mb" => num(a).map(|v| shape.target_bytes = Some(v * 1_000_000)),
            "--flows-per-entry" => num(a).map(|v| shape.flows_per_entry = v as usize),
            "--ports-per-entry" => num(a).map(|v| shape.ports_per_entry = v as usize),
            "--seed" => num(a).map(|v| shape.seed = v),
            "--full" => {
                shape.column_diff = false;
                Ok(())
            }
            s if s.starts_with('-') => Err(format!("unknown option {s}")),
            p if out.is_none() => {
                out = Some(p.to_string());
                Ok(())
            }
            p => Err(format!("unexpected argument '{p}'")),
        };
        if let Err(e) = r {
            eprintln!("ovsdb-scope generate: {e}\n\n{HELP}");
            return 2;
        }
    }
    let Some(dir) = out else {
        eprintln!("ovsdb-scope generate: OUTDIR is missing\n\n{HELP}");
        return 2;
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("ovsdb-scope generate: {dir}: {e}");
        return 2;
    }
    let schema = ovsdb::json::parse(SB_SCHEMA.as_bytes()).expect("bundled schema parses");
    let mut files = Vec::new();
    for i in 1..=3 {
        let path = format!("{dir}/s{i}.db");
        match std::fs::File::create(&path) {
            Ok(f) => files.push((path, std::io::BufWriter::with_capacity(1 << 20, f))),
            Err(e) => {
                eprintln!("ovsdb-scope generate: {path}: {e}");
                return 2;
            }
        }
    }
    let mut failed: Option<String> = None;
    southbound(&shape, &schema, &mut |i, bytes| {
        if failed.is_none() {
            if let Err(e) = files[i].1.write_all(bytes) {
                failed = Some(format!("{}: {e}", files[i].0));
            }
        }
    });
    for (path, mut w) in files {
        if let Err(e) = w.flush() {
            failed.get_or_insert(format!("{path}: {e}"));
        }
    }
    if let Some(e) = failed {
        eprintln!("ovsdb-scope generate: {e}");
        return 2;
    }
    0
}
