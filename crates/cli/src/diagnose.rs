//! `diagnose`: findings from what operators collect (owned by the evidence
//! area). The only I/O is here: walking folders and opening files; the
//! evidence crate reads the bytes.

use std::io::Write;
use std::path::Path;

use evidence::collect::{Collector, Limits};
use evidence::databases::Databases;
use evidence::diagnose::{diagnose_read, Options};
use evidence::findings::{KnobError, Knobs};

/// `diagnose [--json] [--set KNOB=VALUE]... PATH...`
#[derive(clap::Args, Debug)]
#[command(
    about = "Findings from a sick cluster's files, logs and archives",
    long_about = "PATH is any mix of database files (.db), ovsdb-server logs (also rotated \
.log.1 and .log.2.gz), cluster/status and memory/show output, folders (read \
recursively) and archives (.gz, .xz, .tar, .tar.gz/.tgz, .tar.xz: must-gather, \
sosreport). Inputs are recognized by content, matched to servers by what they say, and \
never written anywhere. A server whose files have well-known names (ovnnb_db.db in a \
sosreport) is named by the host name in its folder's etc/hostname, else by the folder.",
    after_help = "Knobs and defaults (--set):\n  long_poll_ms=1000 stopped_ratio=4 storm_changes=5 storm_window_ms=3600000\n  reconnect_drops=3 reconnect_window_ms=60000 leaderless_ms=1000\n  memory_growth_percent=50 cause_window_ms=5000 large_entry_bytes=1048576\n\nExample:\n  ovsdb-scope diagnose must-gather/ sosreport-node1.tar.xz\n\nExit codes: 0 nothing at warning or above, 1 a warning or error finding, 2 bad input or usage."
)]
pub struct DiagnoseArgs {
    /// Files, folders and archives
    #[arg(required = true)]
    paths: Vec<String>,
    /// Print {"inputs","servers","findings"} as JSON
    #[arg(long)]
    json: bool,
    /// Change a threshold (see the knobs below)
    #[arg(long = "set", value_name = "KNOB=VALUE", value_parser = knob)]
    sets: Vec<(String, String)>,
}

fn knob(kv: &str) -> Result<(String, String), String> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| format!("expected KNOB=VALUE, got '{kv}'"))?;
    // Checked here so a bad knob is a usage error, named before any input
    // is read.
    Knobs::default().set(k, v).map_err(knob_error)?;
    Ok((k.to_string(), v.to_string()))
}

/// A knob error in the CLI's words: an unknown name gets the nearest one
/// (as `simulate --set` does) and where the list is.
fn knob_error(e: KnobError) -> String {
    match &e {
        KnobError::Unknown(name) => format!(
            "{e}{} (ovsdb-scope diagnose --help lists them)",
            crate::simulate::did_you_mean(name, &Knobs::NAMES)
        ),
        KnobError::Value { .. } => e.to_string(),
    }
}

fn walk(path: &Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)?.filter_map(|e| e.ok()).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            walk(&e.path(), out)?;
        }
    } else if meta.is_file() {
        out.push(path.to_path_buf());
    }
    Ok(())
}

pub fn diagnose(a: DiagnoseArgs) -> u8 {
    let json = a.json;
    let mut knobs = Knobs::default();
    for (k, v) in &a.sets {
        if let Err(e) = knobs.set(k, v) {
            errln!("{}", knob_error(e));
            return 2;
        }
    }
    let paths = a.paths;
    let mut all = Vec::new();
    for p in &paths {
        let _ = walk(Path::new(p), &mut all);
    }
    crate::progress::start_files(
        &all.iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        "diagnose",
    );
    let mut collector = Collector::new(Limits::default());
    // Database files stream through their one walk as they are read;
    // nothing of them is kept.
    let mut dbs = Databases::new(true);
    let mut unreadable = 0;
    for p in &paths {
        let mut files = Vec::new();
        if let Err(e) = walk(Path::new(p), &mut files) {
            errln!("{p}: {e}");
            unreadable += 1;
            continue;
        }
        for f in files {
            let shown = f.to_string_lossy().into_owned();
            match std::fs::File::open(&f) {
                Ok(file) => {
                    let mut r =
                        std::io::BufReader::with_capacity(1 << 20, crate::progress::Reader(file));
                    collector.add_streaming(&shown, &mut r, &mut dbs);
                }
                Err(e) => {
                    errln!("{shown}: {e}");
                    unreadable += 1;
                }
            }
        }
    }
    crate::progress::finish();
    let collected = collector.finish();
    if collected.items.is_empty() && collected.streamed.is_empty() {
        for i in &collected.ignored {
            errln!("{}: {}", i.path, i.reason);
        }
        errln!("nothing usable in the inputs");
        return 2;
    }
    let opts = Options {
        knobs,
        skip_check: false,
    };
    let d = diagnose_read(collected, dbs.finish(), &opts);
    let text = if json {
        d.to_json().to_string_compact() + "\n"
    } else {
        d.to_text()
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return 141;
        }
    }
    if unreadable > 0 {
        return 2;
    }
    d.exit_code()
}
