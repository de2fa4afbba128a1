#![cfg(not(target_arch = "wasm32"))]
//! The one-pass load (summary + lane + check from one `LogScan` walk) gives
//! the same timeline fed in chunks of any size as in one push, on every
//! sample and fixture, one cluster per folder, and on damaged copies.

use std::collections::BTreeMap;
use std::path::PathBuf;
use timeline::load::{FileEnd, TimelineLoad};
use timeline::Timeline;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Database files by folder (a folder is one cluster's files).
fn clusters() -> BTreeMap<String, Vec<(String, Vec<u8>)>> {
    let mut out: BTreeMap<String, Vec<(String, Vec<u8>)>> = BTreeMap::new();
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
                out.entry(d.display().to_string()).or_default().push((
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    for v in out.values_mut() {
        v.sort();
    }
    assert!(out.len() >= 10, "samples not found");
    out
}

fn damaged(b: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let n = b.len();
    let mut v = vec![("truncated", b[..n / 3].to_vec())];
    let mut f = b.to_vec();
    f[n / 2] ^= 0x20;
    v.push(("flipped", f));
    let mut g = b[..n / 2].to_vec();
    g.extend_from_slice(
        b"OVSDB CLUSTER 99999999 0123456789012345678901234567890123456789\ngarbage\n",
    );
    g.extend_from_slice(&b[n / 2..]);
    v.push(("garbage", g));
    v
}

fn chunked(files: &[(String, Vec<u8>)], chunk: usize) -> Timeline {
    let mut load = TimelineLoad::new(true);
    for (name, bytes) in files {
        let mut f = load.begin(name);
        for c in bytes.chunks(chunk.max(1)) {
            f.push(load.checker(), c);
        }
        let done = match f.finish(load.checker()) {
            FileEnd::Done(l) => *l,
            FileEnd::Again(mut again) => {
                for c in bytes.chunks(chunk.max(1)) {
                    again.push(c);
                }
                again.finish()
            }
        };
        load.add(done);
    }
    load.finish()
}

fn refs(files: &[(String, Vec<u8>)]) -> Vec<(&str, &[u8])> {
    files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect()
}

#[test]
fn chunks_of_any_size_give_the_same_timeline() {
    for (dir, files) in clusters() {
        let whole = timeline::build_timeline(&refs(&files), &mut |_| {});
        let total: usize = files.iter().map(|f| f.1.len()).sum();
        let sizes: &[usize] = if total < 300_000 {
            &[1, 7, 4096]
        } else {
            &[4096, 65536]
        };
        for &c in sizes {
            let t = chunked(&files, c);
            assert_eq!(t, whole, "{dir}: chunks of {c} bytes");
        }
        for (k, d) in damaged(&files[0].1) {
            let mut f = files.clone();
            f[0].1 = d;
            let whole = timeline::build_timeline(&refs(&f), &mut |_| {});
            assert_eq!(
                chunked(&f, 4096),
                whole,
                "{dir} ({k}): chunks of 4096 bytes"
            );
        }
    }
}

#[test]
fn the_binary_view_model_round_trips_every_sample() {
    for (dir, files) in clusters() {
        let t = timeline::build_timeline(&refs(&files), &mut |_| {});
        let mut light = t.clone();
        let blobs = timeline::wire::split(&mut light);
        assert!(light.lanes.iter().all(|l| l.entries.is_empty()));
        // About 45 bytes an entry, plus its comment's text.
        let bound: usize = t
            .lanes
            .iter()
            .flat_map(|l| &l.entries)
            .map(|e| {
                56 + e.comment.as_ref().map_or(0, String::len)
                    + e.servers.as_ref().map_or(0, |s| {
                        s.iter().map(|(a, b)| a.len() + b.len() + 4).sum::<usize>()
                    })
            })
            .sum();
        let bin: usize = blobs.iter().map(Vec::len).sum();
        assert!(
            bin <= bound + 16 * t.lanes.len(),
            "{dir}: {bin} bytes > {bound}"
        );
        let refs: Vec<&[u8]> = blobs.iter().map(Vec::as_slice).collect();
        timeline::wire::join(&mut light, &refs).unwrap();
        assert_eq!(light, t, "{dir}");
    }
}

/// A preview taken in the middle of a load shows what the final timeline
/// will show of the records read so far: the files already read whole,
/// and the file under way as a prefix of its final lane (entries with the
/// same index, term, record, offset and stored size; full/diff sizes only
/// where the final lane has the same).
#[test]
fn previews_mid_load_are_prefixes_of_the_final_timeline() {
    let mut checked = 0;
    for (dir, files) in clusters() {
        let whole = timeline::build_timeline(&refs(&files), &mut |_| {});
        let mut load = TimelineLoad::new(true);
        let mut previews = 0;
        for (fi, (name, bytes)) in files.iter().enumerate() {
            let mut f = load.begin(name);
            let step = (bytes.len() / 4).max(1);
            for c in bytes.chunks(step) {
                f.push(load.checker(), c);
                let p = load.preview(Some(&f));
                previews += 1;
                // Files before this one: whole lanes, as in the end (sizes
                // included, the check not yet).
                for (a, b) in p.lanes.iter().zip(&whole.lanes).take(fi) {
                    assert_eq!(a.entries, b.entries, "{dir}: earlier file {}", a.name);
                }
                let Some(cur) = p.lanes.get(fi) else {
                    // Not a single record read yet.
                    continue;
                };
                let fin = &whole.lanes[fi];
                assert_eq!(cur.name, fin.name, "{dir}");
                assert!(cur.entries.len() <= fin.entries.len(), "{dir}: {name}");
                for (a, b) in cur.entries.iter().zip(&fin.entries) {
                    assert_eq!(
                        (
                            a.index,
                            a.term,
                            a.record,
                            a.offset,
                            a.sizes.stored,
                            &a.comment
                        ),
                        (
                            b.index,
                            b.term,
                            b.record,
                            b.offset,
                            b.sizes.stored,
                            &b.comment
                        ),
                        "{dir}: {name}"
                    );
                    if a.sizes.full.is_some() {
                        assert_eq!(a.sizes, b.sizes, "{dir}: {name} record {}", a.record);
                    }
                }
                assert!(cur.summary.records <= fin.summary.records, "{dir}: {name}");
                assert!(p.max_index <= whole.max_index, "{dir}");
            }
            let done = match f.finish(load.checker()) {
                FileEnd::Done(l) => *l,
                FileEnd::Again(mut again) => {
                    again.push(bytes);
                    again.finish()
                }
            };
            load.add(done);
        }
        let p = load.preview(None);
        for (a, b) in p.lanes.iter().zip(&whole.lanes) {
            assert_eq!(a.entries, b.entries, "{dir}: {}", a.name);
            assert_eq!(a.summary, b.summary, "{dir}: {}", a.name);
        }
        assert!(previews > 0);
        checked += 1;
    }
    assert!(checked >= 10);
}

fn chunked_with(mut load: TimelineLoad, files: &[(String, Vec<u8>)]) -> (Timeline, u64, usize) {
    let mut again_count = 0;
    for (name, bytes) in files {
        let mut f = load.begin(name);
        for c in bytes.chunks(65536) {
            f.push(load.checker(), c);
        }
        let done = match f.finish(load.checker()) {
            FileEnd::Done(l) => *l,
            FileEnd::Again(mut again) => {
                again_count += 1;
                again.push(bytes);
                again.finish()
            }
        };
        load.add(done);
    }
    let reused = load.reused_entries();
    (load.finish(), reused, again_count)
}

/// The files of one cluster replay their common committed prefix once:
/// an entry whose record (index, term, SHA-1) an earlier file already
/// replayed takes its sizes, and the timeline is the same as when every
/// file replays on its own, on every sample folder, in both orders, and
/// with a damaged file among them.
#[test]
fn sharing_the_common_prefix_gives_the_same_timeline() {
    let mut reused_total = 0;
    let mut clusters_reused = 0;
    for (dir, files) in clusters() {
        let mut orders = vec![files.clone()];
        let mut rev = files.clone();
        rev.reverse();
        orders.push(rev);
        for (k, d) in damaged(&files[0].1) {
            let mut f = files.clone();
            f[0].1 = d;
            orders.push(f);
            let _ = k;
        }
        for (n, fs) in orders.iter().enumerate() {
            let (alone, r0, a0) = chunked_with(TimelineLoad::new(true).without_sharing(), fs);
            assert_eq!(r0, 0);
            let (shared, reused, a1) = chunked_with(TimelineLoad::new(true), fs);
            assert_eq!(shared, alone, "{dir} (order {n})");
            // Sharing never costs a second walk the file did not need.
            assert_eq!(a1, a0, "{dir} (order {n}): second walks");
            if n == 0 && reused > 0 {
                clusters_reused += 1;
            }
            reused_total += reused;
        }
    }
    eprintln!("{clusters_reused} clusters shared a prefix, {reused_total} entries reused");
    // The samples are real three-server clusters: most entries of the
    // second and third files are the first one's.
    assert!(
        clusters_reused >= 5,
        "{clusters_reused} clusters shared a prefix"
    );
    assert!(reused_total > 100, "{reused_total} entries reused");
}

/// A file the fuzzer made from a real header: an entry index that jumps
/// far ahead. Loading it twice as one cluster's files (the second reuses
/// the first's replay) neither panics nor allocates the jump, and equals
/// the load without sharing.
#[test]
fn an_index_jump_does_not_blow_up_the_shared_replay() {
    let bytes =
        std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/index-jump.db"))
            .unwrap();
    let files = vec![
        ("a.db".to_string(), bytes.clone()),
        ("b.db".to_string(), bytes),
    ];
    let (alone, _, _) = chunked_with(TimelineLoad::new(true).without_sharing(), &files);
    let (shared, _, _) = chunked_with(TimelineLoad::new(true), &files);
    assert_eq!(shared, alone);
    assert!(!shared.lanes[0].entries.is_empty());
}
