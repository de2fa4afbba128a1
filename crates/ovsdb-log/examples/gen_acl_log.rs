//! Writes a large synthetic acl-portgroup clustered file for the inspect
//! benchmark (see BENCHMARKS.md, formats section).
//!
//! `cargo run --release -p ovsdb-log --example gen_acl_log -- OUT N [full|diff] [s1|s2|s3]`
//!
//! The last argument picks the server file of the sample used as template
//! (default s1); the three give one cluster (the appended entries are the
//! same bytes in each), for the `check` benchmark.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: gen_acl_log OUT N [full|diff] [s1|s2|s3]");
        std::process::exit(2);
    }
    let n: usize = args[2].parse().expect("N");
    let mode = match args.get(3).map(String::as_str) {
        Some("diff") => ovsdb::StorageMode::Diff,
        _ => ovsdb::StorageMode::Full,
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/samples");
    let server = args.get(4).map_or("s1", String::as_str);
    let t = std::fs::read(root.join(format!("acl-portgroup-full/{server}.db"))).expect("template");
    let out = ovsdb_log::synth::acl_portgroup(&t, n, mode).expect("template layout");
    std::fs::write(&args[1], &out).expect("write");
    println!(
        "{}: {} bytes, {n} ACL transactions ({mode:?})",
        args[1],
        out.len()
    );
}
