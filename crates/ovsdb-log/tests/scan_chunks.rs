#![cfg(not(target_arch = "wasm32"))]
//! The streaming scanner gives the same events and the same summary fed in
//! chunks of 1, 7, 4096 and 1 MiB bytes as in one push, and the same
//! frames as `Framer::next_frame` on the whole file: on every sample and
//! fixture and on damaged copies of them.

use ovsdb_log::summary::{Summarizer, SummaryEnd};
use ovsdb_log::{Event, Frame, Framer, LogScan, ScanOptions, Verdict};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![root().join("static/samples"), root().join("tests/fixtures")];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "db" || x == "records") {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    assert!(out.len() >= 20, "samples not found");
    out
}

/// Damaged copies: truncated, a flipped byte, a zeroed hole, garbage
/// inserted, a header claiming a huge body, an empty file.
fn damaged(b: &[u8]) -> Vec<(String, Vec<u8>)> {
    let n = b.len();
    let mut v = vec![("truncated".to_string(), b[..n / 3].to_vec())];
    let mut f = b.to_vec();
    f[n / 2] ^= 0x20;
    v.push(("flipped".into(), f));
    let mut h = b.to_vec();
    let p = 2 * n / 3;
    for x in h[p..(p + 300).min(n)].iter_mut() {
        *x = 0;
    }
    v.push(("hole".into(), h));
    let mut g = b[..n / 2].to_vec();
    g.extend_from_slice(
        b"OVSDB CLUSTER 99999999 0123456789012345678901234567890123456789\ngarbage\n",
    );
    g.extend_from_slice(&b[n / 2..]);
    v.push(("garbage".into(), g));
    v.push(("empty".into(), Vec::new()));
    v
}

fn fingerprint(ev: &Event<'_>) -> String {
    let r = ev.raw().map(|r| {
        format!(
            "{} {} {} {:?}",
            r.index,
            r.offset,
            r.total_len(),
            &r.sha1[..4]
        )
    });
    match ev {
        Event::Skipped(k) => format!("skip {k:?}"),
        Event::Tail(e) => format!("tail {e:?}"),
        Event::Truncate { record, from, to } => format!("trunc {record} {from} {to}"),
        Event::Entry {
            entry, data, txn, ..
        } => format!(
            "entry {r:?} {entry:?} {:?} {}",
            data.map(|d| d.len()),
            txn.is_some()
        ),
        _ => format!("{:?} {r:?}", ev.kind_name()),
    }
}

fn events(bytes: &[u8], chunk: usize, opts: ScanOptions) -> (Vec<String>, u64) {
    let mut out = Vec::new();
    let mut s = LogScan::new(opts);
    let mut most = 0;
    for c in bytes.chunks(chunk.max(1)) {
        s.push(c, &mut |ev| {
            out.push(fingerprint(&ev));
            Verdict::Keep
        });
        most = most.max(s.buffered() as u64);
    }
    s.finish(&mut |ev| {
        out.push(fingerprint(&ev));
        Verdict::Keep
    });
    (out, most)
}

/// The frames of the in-memory salvage walk, as the scanner reports them
/// (records are decoded the same way: a rejected one is a skipped span).
fn framer_frames(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut fr = Framer::new(bytes);
    while let Some(f) = fr.next_frame() {
        match f {
            Ok(Frame::Record(r)) => {
                let format = fr.format().unwrap_or(ovsdb_log::Format::Clustered);
                let ok = if r.index == 0 {
                    r.decode(format).map(|_| ())
                } else {
                    r.decode_light_payload(format).map(|_| ())
                };
                match ok {
                    Ok(()) => out.push(format!("{} {}", r.index, r.offset)),
                    Err(e) => fr.reject(&r, e),
                }
            }
            Ok(Frame::Skipped(k)) => out.push(format!("skip {k:?}")),
            Err(e) => out.push(format!("tail {e:?}")),
        }
    }
    out
}

fn summary_chunked(bytes: &[u8], chunk: usize) -> String {
    let mut sum = Summarizer::new(true);
    let mut scan = LogScan::new(sum.options());
    for c in bytes.chunks(chunk.max(1)) {
        scan.push(c, &mut |ev| sum.on_event(&ev));
    }
    scan.finish(&mut |ev| sum.on_event(&ev));
    let (s, e) = match sum.finish(&scan) {
        SummaryEnd::Done(s, e) => (*s, e),
        SummaryEnd::Again(mut p) => {
            let mut scan = LogScan::new(p.options());
            for c in bytes.chunks(chunk.max(1)) {
                scan.push(c, &mut |ev| {
                    p.on_event(&ev);
                    Verdict::Keep
                });
            }
            scan.finish(&mut |ev| {
                p.on_event(&ev);
                Verdict::Keep
            });
            (*p).finish()
        }
    };
    format!("{} {e:?}", s.to_json(None))
}

#[test]
fn chunked_walks_match_one_push_and_the_framer() {
    let mut n = 0;
    for (name, bytes) in inputs() {
        let mut cases = vec![("as is".to_string(), bytes.clone())];
        cases.extend(damaged(&bytes));
        for (what, b) in cases {
            let opts = ScanOptions {
                txn: true,
                ..ScanOptions::default()
            };
            let (whole, _) = events(&b, b.len().max(1), opts);
            let framed: Vec<String> = whole
                .iter()
                .filter(|e| !e.starts_with("trunc"))
                .map(|e| {
                    if e.starts_with("skip") || e.starts_with("tail") {
                        e.clone()
                    } else {
                        let w: Vec<&str> = e.split(['(', ' ', '"']).collect();
                        let nums: Vec<&str> = w
                            .iter()
                            .copied()
                            .filter(|x| x.parse::<u64>().is_ok())
                            .collect();
                        format!("{} {}", nums[0], nums[1])
                    }
                })
                .collect();
            assert_eq!(framed, framer_frames(&b), "{name} {what}: frames");
            let sum = summary_chunked(&b, b.len().max(1));
            assert_eq!(
                sum,
                {
                    let (s, e) = ovsdb_log::summarize_detailed(&b);
                    format!("{} {e:?}", s.to_json(None))
                },
                "{name} {what}: summary"
            );
            for chunk in [1usize, 7, 4096, 1 << 20] {
                if chunk == 1 && b.len() > 3 << 20 {
                    continue;
                }
                let (ev, most) = events(&b, chunk, opts);
                assert_eq!(ev, whole, "{name} {what}: events in chunks of {chunk}");
                assert!(
                    most <= b.len() as u64,
                    "{name} {what}: buffered {most} bytes"
                );
                assert_eq!(
                    summary_chunked(&b, chunk),
                    sum,
                    "{name} {what}: summary in chunks of {chunk}"
                );
                n += 1;
            }
        }
    }
    assert!(n > 100);
}

/// The scanner holds one record at a time, not the file.
#[test]
fn buffer_is_bounded_by_the_largest_record() {
    for (name, b) in inputs() {
        let largest = Framer::new(&b)
            .map_while(Result::ok)
            .map(|r| r.total_len())
            .max()
            .unwrap_or(0);
        let (_, most) = events(&b, 4096, ScanOptions::default());
        assert!(
            most <= largest + 4096,
            "{name}: buffered {most}, largest record {largest}"
        );
    }
}

/// Chunks are read where they were pushed: only records that straddle two
/// chunks are copied, so a walk in chunks much larger than its records
/// copies a small part of the file (and one in tiny chunks, all of it).
#[test]
fn chunks_are_read_in_place() {
    let name = "static/samples/acl-portgroup-full/s1.db";
    let b = std::fs::read(root().join(name)).unwrap();
    assert!(b.len() > 200_000, "{name}: {} bytes", b.len());
    let largest = Framer::new(&b)
        .map_while(Result::ok)
        .map(|r| r.total_len())
        .max()
        .unwrap_or(0);
    let chunk = 128 << 10;
    let mut scan = LogScan::new(ScanOptions::default());
    let mut n = 0;
    for c in b.chunks(chunk) {
        scan.push(c, &mut |_| {
            n += 1;
            Verdict::Keep
        });
    }
    scan.finish(&mut |_| {
        n += 1;
        Verdict::Keep
    });
    let chunks = b.len().div_ceil(chunk) as u64;
    // At most one straddling record (and the piece of the next chunk that
    // completes it, doubled) per chunk boundary.
    assert!(
        scan.copied() <= chunks * 3 * (largest as u64).max(64 << 10),
        "{name}: copied {} of {}",
        scan.copied(),
        b.len()
    );
    assert!(
        scan.copied() < b.len() as u64 / 2,
        "{name}: copied {} of {}",
        scan.copied(),
        b.len()
    );
    let mut tiny = LogScan::new(ScanOptions::default());
    for c in b.chunks(7) {
        tiny.push(c, &mut |_| Verdict::Keep);
    }
    tiny.finish(&mut |_| Verdict::Keep);
    assert!(
        tiny.copied() > b.len() as u64 / 2,
        "{name}: tiny chunks copied {}",
        tiny.copied()
    );
    assert!(n > 10);
}
