//! The collector on the real must-gather archives, and on bad input made
//! here at test time (nothing big is committed).

use std::io::{Read, Write};
use std::path::PathBuf;

use evidence::collect::{
    log_groups, rotation, sniff, Collected, Collector, Hostname, InputKind, Limits, SNIFF_BYTES,
};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/incidents")
}

fn must_gather(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join("must-gather").join(name)).unwrap()
}

fn original(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join("leader-pause").join(name)).unwrap()
}

fn collect(inputs: &[(&str, &[u8])]) -> Collected {
    collect_with(Limits::default(), inputs)
}

fn collect_with(limits: Limits, inputs: &[(&str, &[u8])]) -> Collected {
    let mut c = Collector::new(limits);
    for (path, bytes) in inputs {
        c.add_bytes(path, bytes);
    }
    c.finish()
}

fn item<'a>(got: &'a Collected, path: &str) -> &'a evidence::collect::Item {
    got.items
        .iter()
        .find(|i| i.path == path)
        .unwrap_or_else(|| {
            panic!(
                "no item {path}; items {:?}, ignored {:?}",
                paths(got),
                got.ignored
            )
        })
}

fn paths(got: &Collected) -> Vec<&str> {
    got.items.iter().map(|i| i.path.as_str()).collect()
}

fn reason<'a>(got: &'a Collected, path: &str) -> &'a str {
    &got.ignored
        .iter()
        .find(|i| i.path == path)
        .unwrap_or_else(|| panic!("{path} not ignored; ignored {:?}", got.ignored))
        .reason
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn xz(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    lzma_rs::xz_compress(&mut &data[..], &mut out).unwrap();
    out
}

/// A tar header written by hand: ustar (or v7 when `ustar` is false).
fn header(name: &str, size: u64, kind: u8, ustar: bool) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..108].copy_from_slice(b"0000644\0");
    h[108..116].copy_from_slice(b"0000000\0");
    h[116..124].copy_from_slice(b"0000000\0");
    h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    h[136..148].copy_from_slice(b"15303054770\0");
    h[156] = kind;
    if ustar {
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
    }
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

fn member(tar: &mut Vec<u8>, name: &str, kind: u8, data: &[u8]) {
    tar.extend_from_slice(&header(name, data.len() as u64, kind, true));
    tar.extend_from_slice(data);
    tar.resize(tar.len().div_ceil(512) * 512, 0);
}

fn end(tar: &mut Vec<u8>) {
    tar.extend_from_slice(&[0u8; 1024]);
}

#[test]
fn must_gather_archives_hold_the_leader_pause_files() {
    let names = [
        "cluster.tar.gz",
        "sosreport-like.tar.xz",
        "leader_nbdb.gz",
        "s1.db.gz",
        "s2.db.gz",
        "s3.db.gz",
    ];
    let data: Vec<Vec<u8>> = names.iter().map(|n| must_gather(n)).collect();
    let inputs: Vec<(&str, &[u8])> = names.iter().zip(&data).map(|(n, d)| (*n, &d[..])).collect();
    let got = collect(&inputs);

    let sos = "sosreport-like.tar.xz/sosreport-ovn-central-1-2026-12-01-incident";
    let cmds = format!("{sos}/sos_commands/ovn_central/ovs-appctl_-t_.var.run.ovn.ovnnb_db.ctl_");
    let mut want: Vec<(String, InputKind, String)> = Vec::new();
    for s in ["s1", "s2", "s3"] {
        let db = format!("{s}.db");
        let log = format!("{s}.ovsdb-server.log");
        want.push((
            format!("cluster.tar.gz/{s}/var/lib/ovn/etc/ovnnb_db.db"),
            InputKind::Database,
            db.clone(),
        ));
        want.push((
            format!("cluster.tar.gz/{s}/var/log/ovn/ovsdb-server-nb.log"),
            InputKind::ServerLog,
            log,
        ));
        want.push((db.clone(), InputKind::Database, db));
    }
    want.push(("leader_nbdb".into(), InputKind::Database, "s2.db".into()));
    want.push((
        format!("{cmds}cluster.status_OVN_Northbound"),
        InputKind::ClusterStatus,
        "s1.cluster-status.txt".into(),
    ));
    want.push((
        format!("{cmds}coverage.show"),
        InputKind::CoverageShow,
        "s1.coverage-show.txt".into(),
    ));
    want.push((
        format!("{cmds}memory.show"),
        InputKind::MemoryShow,
        "s1.memory-show.txt".into(),
    ));
    want.push((
        format!("{sos}/var/lib/ovn/etc/ovnnb_db.db"),
        InputKind::Database,
        "s1.db".into(),
    ));
    want.push((
        format!("{sos}/var/log/ovn/ovsdb-server-nb.log"),
        InputKind::ServerLog,
        "s1.ovsdb-server.log".into(),
    ));

    for (path, kind, file) in &want {
        let it = item(&got, path);
        assert_eq!(it.kind, *kind, "{path}");
        assert!(
            it.bytes == original(file),
            "{path} differs from leader-pause/{file}"
        );
    }
    assert_eq!(got.items.len(), want.len(), "{:?}", paths(&got));
    // The one file that is none of ours, the sosreport's etc/hostname, is
    // its host's name (directories are not reported).
    assert!(got.ignored.is_empty(), "{:?}", got.ignored);
    assert_eq!(
        got.hostnames,
        [Hostname {
            folder: sos.to_string(),
            name: "ovn-central-1".to_string()
        }]
    );
}

#[test]
fn binary_file_named_log_is_ignored_and_others_still_load() {
    let bin: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    let mem = original("s1.memory-show.txt");
    let got = collect(&[("x.log", &bin), ("mem.txt", &mem), ("empty.log", b"")]);
    assert_eq!(
        reason(&got, "x.log"),
        "binary data, not an OVSDB database or a log"
    );
    assert_eq!(reason(&got, "empty.log"), "empty file");
    assert_eq!(item(&got, "mem.txt").kind, InputKind::MemoryShow);
    assert_eq!(item(&got, "mem.txt").bytes, mem);
}

#[test]
fn truncated_gzip_keeps_what_was_read() {
    let gz = must_gather("s1.db.gz");
    let cut = &gz[..gz.len() / 2];
    let s1 = original("s1.db");
    let got = collect(&[("s1.db.gz", cut), ("s2.db.gz", &must_gather("s2.db.gz"))]);
    let r = reason(&got, "s1.db");
    assert!(
        r.starts_with(&format!("gzip data truncated at byte {}", cut.len())),
        "{r}"
    );
    let part = &item(&got, "s1.db").bytes;
    assert!(!part.is_empty() && part.len() < s1.len() && s1.starts_with(part));
    assert_eq!(item(&got, "s2.db").bytes, original("s2.db"));

    // A tar.gz cut inside the second database: the members before it are
    // whole, the cut one is kept as far as it goes, nothing after it.
    let tgz = must_gather("cluster.tar.gz");
    let got = collect(&[("cluster.tar.gz", &tgz[..tgz.len() * 3 / 4])]);
    assert_eq!(
        item(&got, "cluster.tar.gz/s1/var/lib/ovn/etc/ovnnb_db.db").bytes,
        s1
    );
    assert_eq!(
        item(&got, "cluster.tar.gz/s1/var/log/ovn/ovsdb-server-nb.log").bytes,
        original("s1.ovsdb-server.log")
    );
    let last = got.items.last().unwrap();
    assert!(
        reason(&got, &last.path).contains("gzip data truncated at byte"),
        "{:?}",
        got.ignored
    );
    assert_eq!(got.ignored.len(), 1, "{:?}", got.ignored);
}

#[test]
fn gzip_bombs_stop_with_an_error_for_that_input_only() {
    // What looks like a database file, then 200 gzip members of 1 MiB of
    // zeros each: 200 MiB from about 200 KiB. (Zeros alone would be left
    // as binary data after the first 64 KiB, without reading on.)
    let one = gzip(&vec![0u8; 1 << 20]);
    let mut bomb = gzip(b"OVSDB JSON 1 0000000000000000000000000000000000000000\n");
    for _ in 0..200 {
        bomb.extend_from_slice(&one);
    }
    // A tar.gz whose one member is 256 MiB of zeros, compressed as a stream.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&header("zeros.db", 256 << 20, b'0', true))
        .unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..256 {
        e.write_all(&zeros).unwrap();
    }
    let tar_bomb = e.finish().unwrap();
    let log = original("s2.ovsdb-server.log");
    let got = collect(&[
        ("bomb.gz", &bomb),
        ("tar-bomb.tar.gz", &tar_bomb),
        ("s2.log", &log),
    ]);
    let r = reason(&got, "bomb");
    assert!(
        r.starts_with("gzip data expands past the 100:1 bound: possible decompression bomb"),
        "{r}"
    );
    // The member itself is binary data; the archive's stream fails while
    // its rest is skipped.
    assert_eq!(reason(&got, "tar-bomb.tar.gz/zeros.db"), sniff::BINARY);
    let r = reason(&got, "tar-bomb.tar.gz");
    assert!(
        r.starts_with("gzip data expands past the 100:1 bound"),
        "{r}"
    );
    assert_eq!(got.items.len(), 1);
    assert_eq!(item(&got, "s2.log").bytes, log);

    // A real database file compresses 3-20x: it passes, also with the ratio
    // bound applying from the first byte.
    let strict = Limits {
        ratio_after_bytes: 0,
        max_ratio: 50,
        ..Limits::default()
    };
    let got = collect_with(strict, &[("s1.db.gz", &must_gather("s1.db.gz"))]);
    assert_eq!(item(&got, "s1.db").bytes, original("s1.db"));
}

#[test]
fn xz_chunks_are_bounded_before_lzma_rs_decodes_them() {
    let limits = Limits {
        ratio_after_bytes: 100_000,
        max_ratio: 2,
        ..Limits::default()
    };
    let got = collect_with(
        limits,
        &[("sos.tar.xz", &must_gather("sosreport-like.tar.xz"))],
    );
    assert!(got.items.is_empty());
    let r = reason(&got, "sos.tar");
    assert!(
        r.starts_with("xz data expands past the 2:1 bound: possible decompression bomb"),
        "{r}"
    );

    let limits = Limits {
        max_buffered_bytes: 100_000,
        ..Limits::default()
    };
    let got = collect_with(
        limits,
        &[("sos.tar.xz", &must_gather("sosreport-like.tar.xz"))],
    );
    assert!(reason(&got, "sos.tar").starts_with("xz block of more than 100000 bytes refused"));
}

#[test]
fn truncated_or_corrupt_xz_is_reported() {
    let x = must_gather("sosreport-like.tar.xz");
    let mut bad = x.clone();
    bad[x.len() / 2] ^= 0x55;
    let got = collect(&[
        ("cut.tar.xz", &x[..x.len() / 2]),
        ("bad.tar.xz", &bad),
        ("sos.tar.xz", &x),
    ]);
    assert!(
        reason(&got, "cut.tar").starts_with("xz data truncated at byte"),
        "{:?}",
        got.ignored
    );
    assert!(
        reason(&got, "bad.tar").starts_with("xz data corrupt"),
        "{:?}",
        got.ignored
    );
    assert_eq!(got.items.len(), 5, "{:?}", paths(&got));
}

#[test]
fn tar_names_with_dotdot_or_absolute_are_refused() {
    let mem = original("s3.memory-show.txt");
    let mut tar = Vec::new();
    member(&mut tar, "../evil", b'0', &mem);
    member(&mut tar, "/etc/passwd", b'0', &mem);
    member(&mut tar, "a/../../b", b'0', &mem);
    member(&mut tar, "./good/mem.txt", b'0', &mem);
    end(&mut tar);
    let got = collect(&[("t.tar", &tar)]);
    assert_eq!(
        reason(&got, "t.tar/../evil"),
        "tar member name with '..' refused"
    );
    assert_eq!(
        reason(&got, "t.tar//etc/passwd"),
        "absolute tar member name refused"
    );
    assert_eq!(
        reason(&got, "t.tar/a/../../b"),
        "tar member name with '..' refused"
    );
    assert_eq!(paths(&got), ["t.tar/good/mem.txt"]);
    assert_eq!(got.items[0].bytes, mem);
}

#[test]
fn links_devices_and_fifos_in_tar_are_ignored() {
    let log = original("s3.ovsdb-server.log");
    let mut tar = Vec::new();
    let mut link = header("ln", 0, b'2', true);
    link[157..168].copy_from_slice(b"/etc/shadow");
    let sum: u32 = link
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u32::from(b)
            }
        })
        .sum();
    link[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    tar.extend_from_slice(&link);
    member(&mut tar, "hard", b'1', b"");
    member(&mut tar, "tty", b'3', b"");
    member(&mut tar, "pipe", b'6', b"");
    member(&mut tar, "dir/", b'5', b"");
    member(&mut tar, "dir/s3.log", b'0', &log);
    end(&mut tar);
    let got = collect(&[("t.tar", &tar), ("other.log", &log)]);
    assert_eq!(reason(&got, "t.tar/ln"), "symlink in archive ignored");
    assert_eq!(reason(&got, "t.tar/hard"), "hard link in archive ignored");
    assert_eq!(reason(&got, "t.tar/tty"), "device file in archive ignored");
    assert_eq!(reason(&got, "t.tar/pipe"), "FIFO in archive ignored");
    assert_eq!(got.ignored.len(), 4);
    assert_eq!(paths(&got), ["t.tar/dir/s3.log", "other.log"]);
}

#[test]
fn gnu_long_names_pax_paths_and_v7_headers() {
    let status = original("s2.cluster-status.txt");
    let long = format!(
        "{}/ovs-appctl_cluster.status_OVN_Northbound",
        "d".repeat(150)
    );
    let mut tar = Vec::new();
    // GNU: a ././@LongLink member of type L holds the next member's name.
    member(
        &mut tar,
        "././@LongLink",
        b'L',
        format!("{long}\0").as_bytes(),
    );
    member(&mut tar, "truncated-name", b'0', &status);
    // pax: a global header (skipped) and a per-file one with path.
    member(
        &mut tar,
        "pax_global_header",
        b'g',
        b"20 comment=ignored!\n",
    );
    let rec = format!("path=pax/{long}\n");
    let len = rec.len() + 4; // "NNN " for lengths of 100..=999
    member(
        &mut tar,
        "PaxHeaders/x",
        b'x',
        format!("{len} {rec}").as_bytes(),
    );
    member(&mut tar, "short", b'0', &status);
    // v7: no magic, a checksum only.
    tar.extend_from_slice(&header("v7/status.txt", status.len() as u64, 0, false));
    tar.extend_from_slice(&status);
    tar.resize(tar.len().div_ceil(512) * 512, 0);
    end(&mut tar);
    let got = collect(&[("t.tar", &tar)]);
    assert_eq!(
        paths(&got),
        [
            format!("t.tar/{long}"),
            format!("t.tar/pax/{long}"),
            "t.tar/v7/status.txt".into()
        ]
    );
    assert!(got
        .items
        .iter()
        .all(|i| i.kind == InputKind::ClusterStatus && i.bytes == status));
    assert!(got.ignored.is_empty(), "{:?}", got.ignored);

    // A v7 tar alone (first block) is recognized by its checksum too.
    let mut v7 = header("s.txt", status.len() as u64, b'0', false).to_vec();
    v7.extend_from_slice(&status);
    v7.resize(v7.len().div_ceil(512) * 512 + 1024, 0);
    let got = collect(&[("noname", &v7)]);
    assert_eq!(paths(&got), ["noname/s.txt"]);
}

#[test]
fn nesting_in_any_order() {
    let log = original("s1.ovsdb-server.log");
    let db = original("s3.db");
    // .gz inside a tar inside xz inside gzip.
    let mut tar = Vec::new();
    member(&mut tar, "logs/ovsdb-server-nb.log.1.gz", b'0', &gzip(&log));
    member(&mut tar, "db/s3.db.xz", b'0', &xz(&db));
    end(&mut tar);
    let got = collect(&[
        ("weird.bin", &gzip(&xz(&tar))),
        ("twice.gz.gz", &gzip(&gzip(&log))),
    ]);
    assert_eq!(
        item(&got, "weird.bin/logs/ovsdb-server-nb.log.1").bytes,
        log
    );
    assert_eq!(item(&got, "weird.bin/db/s3.db").bytes, db);
    assert_eq!(item(&got, "twice").bytes, log);
    assert!(got.ignored.is_empty(), "{:?}", got.ignored);

    // Containers nested past the depth bound.
    let mut deep = log.clone();
    for _ in 0..10 {
        deep = gzip(&deep);
    }
    let got = collect(&[("deep", &deep)]);
    assert_eq!(reason(&got, "deep"), "archives nested deeper than 8 levels");
}

#[test]
fn corrupt_tar_keeps_the_members_before() {
    let mem = original("s3.db")[..1000].to_vec();
    let mut tar = Vec::new();
    member(&mut tar, "a.txt", b'0', &mem);
    let at = tar.len();
    member(&mut tar, "b.txt", b'0', &mem);
    end(&mut tar);
    let mut bad = tar.clone();
    bad[at + 3] ^= 1; // the second header's checksum no longer holds
    let cut = &tar[..at + 512 + 50]; // inside the second member
    let got = collect(&[("bad.tar", &bad), ("cut.tar", cut)]);
    assert_eq!(
        paths(&got),
        ["bad.tar/a.txt", "cut.tar/a.txt", "cut.tar/b.txt"]
    );
    assert_eq!(
        reason(&got, "bad.tar"),
        format!("tar header at byte {at} has a bad checksum: the archive is corrupt from there (1 files read before)")
    );
    let r = reason(&got, "cut.tar/b.txt");
    assert!(
        r.starts_with(&format!("tar truncated at byte {}", at + 512 + 50)),
        "{r}"
    );
    assert_eq!(got.items[2].bytes, &mem[..50]);
}

/// Counts what is read from it: a 10 MB line of 'a' with no newline.
struct LongLine {
    left: usize,
    read: usize,
}

impl Read for LongLine {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.left);
        buf[..n].fill(b'a');
        self.left -= n;
        self.read += n;
        Ok(n)
    }
}

#[test]
fn a_long_line_is_not_buffered_whole() {
    let mut r = LongLine {
        left: 10_000_000,
        read: 0,
    };
    let mut c = Collector::new(Limits::default());
    c.add("huge.log", &mut r);
    assert!(r.read <= SNIFF_BYTES, "read {} bytes", r.read);
    let got = c.finish();
    assert_eq!(reason(&got, "huge.log"), sniff::OTHER_TEXT);
}

#[test]
fn total_cap_over_all_inputs() {
    let db = original("s2.db");
    let limits = Limits {
        max_total_bytes: db.len() as u64 + 100,
        ..Limits::default()
    };
    let got = collect_with(
        limits,
        &[
            ("a.db", &db),
            ("b.db", &db),
            ("m.txt", b"atoms:1 cells:2\n"),
        ],
    );
    assert_eq!(paths(&got), ["a.db", "m.txt"]);
    assert_eq!(
        reason(&got, "b.db"),
        format!(
            "a database past the cap of {} bytes kept over all inputs",
            db.len() + 100
        )
    );
}

#[test]
fn rotated_log_names() {
    assert_eq!(
        rotation("a/ovsdb-server-nb.log"),
        Some(("a/ovsdb-server-nb.log", 0))
    );
    assert_eq!(
        rotation("a/ovsdb-server-nb.log.1"),
        Some(("a/ovsdb-server-nb.log", 1))
    );
    assert_eq!(
        rotation("a/ovsdb-server-nb.log.2.gz"),
        Some(("a/ovsdb-server-nb.log", 2))
    );
    assert_eq!(rotation("a/ovsdb-server-nb.log-20261201"), None);
    assert_eq!(rotation("a/notes.1"), None);
    assert_eq!(rotation("a/x.log.1a"), None);

    let log = original("s1.ovsdb-server.log");
    let mut tar = Vec::new();
    member(&mut tar, "n/ovsdb-server-nb.log", b'0', &log);
    member(&mut tar, "n/ovsdb-server-nb.log.1", b'0', &log);
    member(&mut tar, "n/ovsdb-server-nb.log.2.gz", b'0', &gzip(&log));
    member(&mut tar, "m/ovsdb-server-nb.log", b'0', &log);
    end(&mut tar);
    let got = collect(&[("t.tar", &tar)]);
    let groups = log_groups(&got.items);
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0].base, "t.tar/n/ovsdb-server-nb.log");
    assert_eq!(groups[0].parts, [2, 1, 0]);
    assert_eq!(groups[1].parts, [3]);
}
