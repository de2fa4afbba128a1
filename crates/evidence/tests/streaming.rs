#![cfg(not(target_arch = "wasm32"))]
//! Database files streamed from the collector into `Databases` (one walk
//! each, nothing kept) give the same diagnosis as the same files collected
//! in memory, for every incident folder and archive, read in chunks of any
//! size; copies are used once.

use std::path::{Path, PathBuf};

use evidence::collect::{Collector, Limits};
use evidence::databases::Databases;
use evidence::diagnose::{diagnose_read, diagnose_with, Diagnosis, Options};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

type Files = Vec<(String, Vec<u8>)>;

/// Every file of every incident folder (archives included), by folder.
fn folders() -> Vec<(String, Files)> {
    let dir = root().join("tests/fixtures/incidents");
    let mut out = Vec::new();
    for d in std::fs::read_dir(&dir).unwrap().flatten() {
        if !d.path().is_dir() {
            continue;
        }
        let mut files: Files = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .filter(|f| f.path().is_file())
            .map(|f| {
                (
                    format!(
                        "{}/{}",
                        d.file_name().to_string_lossy(),
                        f.file_name().to_string_lossy()
                    ),
                    std::fs::read(f.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        out.push((d.file_name().to_string_lossy().into_owned(), files));
    }
    out.sort();
    assert!(out.len() >= 7, "incident fixtures not found");
    out
}

/// A reader that hands out at most `n` bytes per read.
struct Trickle<'a>(&'a [u8], usize);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(self.1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

fn in_memory(files: &[(String, Vec<u8>)]) -> (Diagnosis, u64) {
    let mut c = Collector::new(Limits::default());
    for (p, b) in files {
        c.add(p, &mut &b[..]);
    }
    let kept = c.kept_bytes();
    (
        diagnose_with(c.finish(), &Options::default(), &mut |_| {}),
        kept,
    )
}

fn streamed(files: &[(String, Vec<u8>)], step: usize) -> (Diagnosis, u64) {
    let mut c = Collector::new(Limits::default());
    let mut dbs = Databases::new(true);
    for (p, b) in files {
        c.add_streaming(p, &mut Trickle(b, step), &mut dbs);
    }
    let kept = c.kept_bytes();
    let collected = c.finish();
    assert!(
        collected
            .items
            .iter()
            .all(|i| i.kind != evidence::collect::InputKind::Database),
        "a streamed database was kept"
    );
    (
        diagnose_read(collected, dbs.finish(), &Options::default()),
        kept,
    )
}

fn same(a: &Diagnosis, b: &Diagnosis, what: &str) {
    assert_eq!(
        a.to_json().to_string_compact(),
        b.to_json().to_string_compact(),
        "{what}: JSON"
    );
    assert_eq!(a.timeline, b.timeline, "{what}: timeline");
    let mut ia: Vec<_> = a.ignored.iter().map(|i| (&i.path, &i.reason)).collect();
    let mut ib: Vec<_> = b.ignored.iter().map(|i| (&i.path, &i.reason)).collect();
    ia.sort();
    ib.sort();
    assert_eq!(ia, ib, "{what}: ignored");
}

#[test]
fn streamed_databases_diagnose_like_collected_ones() {
    for (name, files) in folders() {
        let (want, kept_all) = in_memory(&files);
        // Every database item the in-memory collector kept, copies too.
        let mut c = Collector::new(Limits::default());
        for (p, b) in &files {
            c.add(p, &mut &b[..]);
        }
        let db_bytes: u64 = c
            .finish()
            .items
            .iter()
            .filter(|i| i.kind == evidence::collect::InputKind::Database)
            .map(|i| i.bytes.len() as u64)
            .sum();
        assert!(db_bytes > 0, "{name}: no database files");
        for step in [4096, 1 << 20] {
            let (got, kept) = streamed(&files, step);
            same(&want, &got, &format!("{name}, reads of {step} bytes"));
            assert_eq!(kept, kept_all - db_bytes, "{name}: databases were kept");
        }
    }
}

#[test]
fn a_copy_of_a_database_is_used_once() {
    let dir = root().join("tests/fixtures/incidents/leader-pause");
    let s1 = std::fs::read(dir.join("s1.db")).unwrap();
    let s2 = std::fs::read(dir.join("s2.db")).unwrap();
    let files = vec![
        ("a/s1.db".to_string(), s1.clone()),
        ("a/s2.db".to_string(), s2),
        ("b/s1.db".to_string(), s1.clone()),
    ];
    let (d, kept) = streamed(&files, 1 << 16);
    assert_eq!(kept, 0, "nothing but databases, nothing kept");
    assert_eq!(d.timeline.lanes.len(), 2);
    assert!(d
        .ignored
        .iter()
        .any(|i| i.path == "b/s1.db" && i.reason.contains("same content as a/s1.db")));
    // The copy did not make the check see two servers with one ID.
    assert!(
        !d.timeline
            .cluster
            .violations
            .iter()
            .any(|v| v.contains("same server ID")),
        "{:?}",
        d.timeline.cluster.violations
    );
    // A file that differs in one record is not a copy.
    let mut other = s1.clone();
    let n = other.len();
    other.truncate(n - 10);
    let files = vec![("a/s1.db".to_string(), s1), ("b/s1.db".to_string(), other)];
    let (d, _) = streamed(&files, 1 << 16);
    assert_eq!(d.timeline.lanes.len(), 2);
}

/// Every file under `dir`, recursively, by path relative to `base`.
fn files_under(base: &Path, dir: &Path, out: &mut Files) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(base, &p, out);
        } else if p.extension().is_none_or(|x| x != "md" && x != "json") {
            let name = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read(&p).unwrap()));
        }
    }
}

/// The check a load puts on its timeline, run by a second walk alone
/// (`Databases::check_only`, what the page's second worker does, with a
/// collector that keeps no logs) and applied to a load without its own
/// check, is the same: violations, problems and lane markers, for every
/// incident and sample folder, the foreign files, and damaged copies of
/// a cluster (a byte flipped in a middle record, a torn tail).
#[test]
fn a_check_of_its_own_gives_what_the_loads_check_gives() {
    let mut sets: Vec<(String, Files)> = folders();
    // The database files of the samples are in static/samples (the page
    // loads them), their logs and status texts in tests/fixtures/samples.
    let samples = root().join("static/samples");
    let external = root().join("tests/fixtures/external");
    for base in [&samples, &external] {
        for d in std::fs::read_dir(base).unwrap().flatten() {
            if d.path().is_dir() && d.file_name() != "incidents" && d.file_name() != "schemas" {
                let mut f = Vec::new();
                files_under(base, &d.path(), &mut f);
                f.sort();
                sets.push((d.file_name().to_string_lossy().into_owned(), f));
            }
        }
    }
    // Damaged copies of a three-server cluster.
    let mut broken = Vec::new();
    files_under(&samples, &samples.join("leader-failover"), &mut broken);
    broken.retain(|(n, _)| n.ends_with(".db"));
    broken.sort();
    assert!(broken.len() >= 3);
    let mid = broken[1].1.len() / 2;
    broken[1].1[mid] ^= 0x20;
    let torn = broken[2].1.len() * 2 / 3;
    broken[2].1.truncate(torn);
    sets.push(("leader-failover damaged".into(), broken));
    let mut checked = 0;
    for (name, files) in &sets {
        let load = |check: bool| {
            let mut c = Collector::new(Limits::default());
            let mut dbs = Databases::new(check);
            for (p, b) in files {
                c.add_streaming(p, &mut &b[..], &mut dbs);
            }
            dbs.finish().timeline
        };
        let whole = load(true);
        let mut apart = load(false);
        let mut c = Collector::new(Limits {
            max_total_bytes: 0,
            ..Limits::default()
        });
        let mut dbs = Databases::check_only();
        for (p, b) in files {
            c.add_streaming(p, &mut Trickle(b, 65_537), &mut dbs);
        }
        assert!(
            c.finish().items.is_empty(),
            "{name}: nothing but databases is kept"
        );
        apart.apply_check(dbs.finish_check());
        assert_eq!(whole.cluster, apart.cluster, "{name}");
        let markers = |t: &timeline::Timeline| {
            t.lanes
                .iter()
                .map(|l| (l.name.clone(), l.markers.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(markers(&whole), markers(&apart), "{name}");
        checked += usize::from(whole.cluster.checked);
    }
    assert!(checked >= 10, "only {checked} sets were checked");
}
