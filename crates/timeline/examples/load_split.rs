//! A load's walk with and without its cluster check, and the check alone
//! (what the page's two workers each run), on the same files, natively:
//!   cargo run --release -p timeline --example load_split -- FILE...
use std::io::Read;
use std::time::Instant;
use timeline::load::{FileEnd, TimelineLoad};

fn run(mut load: TimelineLoad, files: &[String]) -> f64 {
    let t = Instant::now();
    let mut buf = vec![0u8; 4 << 20];
    for f in files {
        let mut fl = load.begin(f);
        let mut r = std::fs::File::open(f).expect("open");
        loop {
            let n = r.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            fl.push(load.checker(), &buf[..n]);
        }
        let l = match fl.finish(load.checker()) {
            FileEnd::Done(l) => *l,
            FileEnd::Again(a) => a.without_sizes(),
        };
        load.add(l);
    }
    let _ = load.finish_check();
    t.elapsed().as_secs_f64()
}

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    for (name, mk) in [
        (
            "load with its check",
            (|| TimelineLoad::new(true)) as fn() -> TimelineLoad,
        ),
        ("load without check", || TimelineLoad::new(false)),
        ("check alone", TimelineLoad::check_only),
    ] {
        println!("{name:<22} {:.2} s", run(mk(), &files));
    }
}
