//! `generate southbound`: writes three servers' clustered OVN Southbound
//! files of a chosen size (benchmarks, size tests). The shape and the bytes
//! come from `ovsdb_log::synth_sb`; this module only parses the options and
//! writes the files.

use std::io::Write;

use ovsdb_log::synth_sb::{southbound, SbShape};

/// The real OVN_Southbound 20.27.0 schema (ovn 23.03), as bundled with the app.
const SB_SCHEMA: &str = include_str!("../../../static/samples/schemas/ovn-sb.ovsschema");

/// `generate KIND ...`
#[derive(clap::Args, Debug)]
#[command(about = "Write large clustered test files of a chosen shape")]
pub struct GenerateArgs {
    #[command(subcommand)]
    kind: Kind,
}

#[derive(clap::Subcommand, Debug)]
enum Kind {
    Southbound(SouthboundArgs),
}

/// `generate southbound OUTDIR [OPTIONS]`
#[derive(clap::Args, Debug)]
#[command(
    about = "Three servers' clustered OVN Southbound files",
    long_about = "Writes OUTDIR/s1.db, s2.db and s3.db: one cluster of three servers, each \
file starting with a snapshot (chassis with encaps, datapaths with port bindings, logical \
flows) and followed by entries like ovn-northd's (flows added and removed, port bindings \
claimed), each with a commit-index record. The same options always give the same bytes; \
`ovsdb-tool check-cluster` accepts them.",
    after_help = "Example:\n  ovsdb-scope generate southbound /tmp/sb --size-mb 1000\n\nExit codes: 0 written, 2 bad usage or a file could not be written."
)]
struct SouthboundArgs {
    /// Folder to write s1.db, s2.db and s3.db into
    outdir: String,
    /// Chassis, each with one geneve encap
    #[arg(long, value_name = "N", default_value_t = SbShape::default().chassis)]
    chassis: usize,
    /// Datapaths (logical switches)
    #[arg(long, value_name = "N", default_value_t = SbShape::default().datapaths)]
    datapaths: usize,
    /// Port bindings per datapath
    #[arg(long, value_name = "N", default_value_t = SbShape::default().ports_per_datapath)]
    ports_per_datapath: usize,
    /// Logical flows per datapath in the snapshot
    #[arg(long, value_name = "N", default_value_t = SbShape::default().flows_per_datapath)]
    flows_per_datapath: usize,
    /// Entries after the snapshot
    #[arg(long, value_name = "N", default_value_t = SbShape::default().entries)]
    entries: usize,
    /// Instead of --entries: grow each file to N MB (1 or more)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    size_mb: Option<u64>,
    /// Flows added (and removed) per entry
    #[arg(long, value_name = "N", default_value_t = SbShape::default().flows_per_entry)]
    flows_per_entry: usize,
    /// Port bindings claimed per entry
    #[arg(long, value_name = "N", default_value_t = SbShape::default().ports_per_entry)]
    ports_per_entry: usize,
    /// Full values instead of column diffs in entries
    #[arg(long)]
    full: bool,
    /// Seed of the generator (the same seed, the same bytes)
    #[arg(long, value_name = "N", default_value_t = SbShape::default().seed)]
    seed: u64,
}

pub fn generate(a: GenerateArgs) -> u8 {
    let Kind::Southbound(a) = a.kind;
    let shape = SbShape {
        chassis: a.chassis,
        datapaths: a.datapaths.max(1),
        ports_per_datapath: a.ports_per_datapath,
        flows_per_datapath: a.flows_per_datapath,
        entries: a.entries,
        target_bytes: a.size_mb.map(|v| v * 1_000_000),
        flows_per_entry: a.flows_per_entry,
        ports_per_entry: a.ports_per_entry,
        storage: if a.full {
            ovsdb::StorageMode::Full
        } else {
            ovsdb::StorageMode::Diff
        },
        seed: a.seed,
    };
    let dir = a.outdir;
    if std::path::Path::new(&dir).exists() && !std::path::Path::new(&dir).is_dir() {
        errln!("{dir}: exists and is not a folder");
        return 2;
    }
    if let Err(e) = std::fs::create_dir_all(&dir) {
        errln!("{dir}: {e}");
        return 2;
    }
    let schema = ovsdb::json::parse(SB_SCHEMA.as_bytes()).expect("bundled schema parses");
    let mut files = Vec::new();
    for i in 1..=3 {
        let path = format!("{dir}/s{i}.db");
        match std::fs::File::create(&path) {
            Ok(f) => files.push((path, std::io::BufWriter::with_capacity(1 << 20, f))),
            Err(e) => {
                errln!("{path}: {e}");
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
        errln!("{e}");
        return 2;
    }
    0
}
