//! What a set of files and folders holds, as the collector sees it.
//!
//! ```text
//! cargo run --release -p evidence --example collect -- tests/fixtures/incidents/must-gather
//! cargo run --release -p evidence --example collect -- --bench tests/fixtures
//! ```
//!
//! The first form walks folders (this example does the I/O; the library
//! only reads what it is given) and prints every item and every ignored
//! input with its reason. `--bench DIR` packs every file under DIR, four
//! times over, into a tar in the temp folder, compresses it with the system
//! `gzip -6` and `xz -6`, and times the collector on each next to
//! `tar xzf`/`tar xJf` to /dev/null.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use evidence::collect::{Collected, Collector, Limits};

fn walk(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = match std::fs::read_dir(path) {
            Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                return;
            }
        };
        entries.sort();
        for e in entries {
            walk(&e, out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

fn collect(files: &[PathBuf]) -> Collected {
    let mut c = Collector::new(Limits::default());
    for f in files {
        let name = f.to_string_lossy();
        match File::open(f) {
            Ok(file) => c.add(&name, &mut BufReader::with_capacity(1 << 16, file)),
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
    c.finish()
}

fn show(paths: &[String]) {
    let mut files = Vec::new();
    for p in paths {
        walk(Path::new(p), &mut files);
    }
    let got = collect(&files);
    for i in &got.items {
        println!("{:<14} {:>10}  {}", i.kind.name(), i.bytes.len(), i.path);
    }
    for i in &got.ignored {
        println!("{:<14} {:>10}  {}: {}", "ignored", "", i.path, i.reason);
    }
    println!("{} items, {} ignored", got.items.len(), got.ignored.len());
}

/// A tar of `files` (`copies` times, under `cN/`), written by hand.
fn write_tar(files: &[PathBuf], copies: usize, out: &Path) -> std::io::Result<u64> {
    let mut w = std::io::BufWriter::new(File::create(out)?);
    let mut total = 0u64;
    for c in 0..copies {
        for (k, f) in files.iter().enumerate() {
            let data = std::fs::read(f)?;
            let name = format!(
                "c{c}/{k}-{}",
                f.file_name().unwrap_or_default().to_string_lossy()
            );
            let mut h = [0u8; 512];
            let n = name.len().min(99);
            h[..n].copy_from_slice(&name.as_bytes()[..n]);
            h[100..108].copy_from_slice(b"0000644\0");
            h[108..116].copy_from_slice(b"0000000\0");
            h[116..124].copy_from_slice(b"0000000\0");
            h[124..136].copy_from_slice(format!("{:011o}\0", data.len()).as_bytes());
            h[136..148].copy_from_slice(b"15303054770\0");
            h[156] = b'0';
            h[257..263].copy_from_slice(b"ustar\0");
            h[263..265].copy_from_slice(b"00");
            h[148..156].copy_from_slice(b"        ");
            let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
            h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
            w.write_all(&h)?;
            w.write_all(&data)?;
            let pad = (512 - data.len() % 512) % 512;
            w.write_all(&vec![0u8; pad])?;
            total += 512 + (data.len() + pad) as u64;
        }
    }
    w.write_all(&[0u8; 1024])?;
    w.flush()?;
    Ok(total + 1024)
}

fn secs(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

fn bench(dir: &str) -> std::io::Result<()> {
    let mut files = Vec::new();
    walk(Path::new(dir), &mut files);
    let tmp = std::env::temp_dir().join(format!("collect-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let tar = tmp.join("big.tar");
    let size = write_tar(&files, 4, &tar)?;
    let mb = size as f64 / 1e6;
    println!("tar of {} files x4: {mb:.1} MB", files.len());
    for (ext, tool, flag) in [("gz", "gzip", "xzf"), ("xz", "xz", "xJf")] {
        let packed = tmp.join(format!("big.tar.{ext}"));
        let status = Command::new(tool)
            .args(["-6", "-k", "-f", "-c"])
            .arg(&tar)
            .stdout(File::create(&packed)?)
            .status()?;
        if !status.success() {
            eprintln!("{tool} failed");
            continue;
        }
        let csize = std::fs::metadata(&packed)?.len();
        let mut got = Collected::default();
        let ours = secs(|| got = collect(std::slice::from_ref(&packed)));
        let theirs = secs(|| {
            let _ = Command::new("tar")
                .arg(flag)
                .arg(&packed)
                .arg("-O")
                .stdout(Stdio::null())
                .status();
        });
        println!(
            "big.tar.{ext} ({:.1} MB): collector {ours:.2} s = {:.0} MB/s ({} items, {} ignored); tar {flag} -O >/dev/null {theirs:.2} s = {:.0} MB/s",
            csize as f64 / 1e6,
            mb / ours,
            got.items.len(),
            got.ignored.len(),
            mb / theirs
        );
    }
    std::fs::remove_dir_all(&tmp)?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--bench") => {
            let dir = args.get(1).map_or("tests/fixtures", String::as_str);
            if let Err(e) = bench(dir) {
                eprintln!("bench: {e}");
                std::process::exit(1);
            }
        }
        Some(_) => show(&args),
        None => {
            eprintln!("usage: collect PATH... | collect --bench [DIR]");
            std::process::exit(2);
        }
    }
}
