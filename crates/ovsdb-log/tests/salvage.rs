#![cfg(not(target_arch = "wasm32"))]
//! Salvage reading: a bad record between good records is reported (record
//! number, offset, length, reason) and reading goes on at the next good
//! record header. Checked on a real fragment quoted in openshift/must-gather
//! PR 245 (against the recorded `ovsdb-tool -mm show-log` output), on damaged
//! copies of a real sample (offsets computed here from the bytes, not taken
//! from our reader), and against the real `ovsdb-tool` when it is installed.

mod common;

use ovsdb_log::{check_cluster, replay, summarize, ErrorKind, FileSummary, Upto};
use sha1::{Digest, Sha1};

/// (offset, header length, body length) of every record, found by hand:
/// header line up to LF, length is its third field.
fn frames(b: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut p = 0;
    while p < b.len() {
        let lf = p + b[p..].iter().position(|&c| c == b'\n').unwrap();
        let line = std::str::from_utf8(&b[p..lf]).unwrap();
        let n: usize = line.split(' ').nth(2).unwrap().parse().unwrap();
        out.push((p, lf + 1 - p, n));
        p = lf + 1 + n;
    }
    assert_eq!(p, b.len());
    out
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn fragment() -> Vec<u8> {
    std::fs::read(
        common::repo_root()
            .join("tests/fixtures/external/openshift-must-gather-pr245/cluster-fragment.records"),
    )
    .unwrap()
}

fn show_log_fixture() -> String {
    std::fs::read_to_string(common::repo_root().join(
        "tests/fixtures/external/openshift-must-gather-pr245/cluster-fragment.records.show-log.txt",
    ))
    .unwrap()
}

/// Record numbers `show-log` printed, and which of them it could decode.
fn show_log_records(text: &str) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let block = block.trim_start_matches('\n');
        let Some(rest) = block.strip_prefix("record ") else {
            continue;
        };
        let Some((n, body)) = rest.split_once(":\n") else {
            continue;
        };
        out.push((n.parse().unwrap(), !body.contains("syntax error")));
    }
    out
}

#[test]
fn must_gather_fragment_is_read_like_show_log() {
    let bytes = fragment();
    let f = frames(&bytes);
    assert_eq!(f.len(), 4);
    let s = summarize(&bytes);
    assert_eq!(s.format, Some(ovsdb_log::Format::Clustered));
    assert!(s.truncated.is_none(), "{:?}", s.truncated);
    // Record 0: the clustered header without server_id.
    assert_eq!(s.skipped.len(), 1);
    let k = &s.skipped[0];
    assert_eq!((k.record, k.offset), (0, 0));
    assert_eq!(k.bytes, (f[0].1 + f[0].2) as u64);
    assert_eq!(k.error.offset, f[0].1 as u64, "body offset");
    match &k.error.kind {
        ErrorKind::BadRecord { message } => {
            assert!(message.contains("Required 'server_id' member is missing"))
        }
        other => panic!("{other:?}"),
    }
    // Records 1-3 are decoded, as show-log decodes them.
    let shown = show_log_records(&show_log_fixture());
    assert_eq!(shown, vec![(0, false), (1, true), (2, true), (3, true)]);
    assert_eq!(s.records, 3);
    assert_eq!(
        (
            s.record_kinds.header,
            s.record_kinds.commit_index,
            s.record_kinds.entry
        ),
        (0, 2, 1)
    );
    // show-log: commit_index 3, then entry term 1 index 4 with three
    // servers, then commit_index 4.
    assert_eq!(s.commit_index, Some(4));
    assert_eq!(s.last_index, Some(4));
    assert_eq!(s.terms, vec![1]);
    // inspect --json shows the span; files without one have no such key.
    let j = s.to_json(None).to_string_compact();
    assert!(
        j.contains(r#""skipped":[{"record":0,"offset":0,"bytes":217,"error_offset":59,"#),
        "{j}"
    );
    assert!(!summarize(&common::sample("election-timer", "s1"))
        .to_json(None)
        .to_string_compact()
        .contains("skipped"));
}

/// A middle entry record with data: its record number.
fn middle_entry(b: &[u8]) -> usize {
    let f = frames(b);
    let with_data: Vec<usize> = (1..f.len())
        .filter(|&i| {
            let (o, h, n) = f[i];
            let body = &b[o + h..o + h + n];
            body.windows(7).any(|w| w == b"\"data\":")
        })
        .collect();
    with_data[with_data.len() / 2]
}

enum Damage {
    FlipBody,
    InvalidJson,
    Garbage(usize),
}

/// A damaged copy of `b` at record `m`, and the byte count the reader
/// must skip.
fn damage(b: &[u8], m: usize, how: &Damage) -> (Vec<u8>, u64) {
    let f = frames(b);
    let (o, h, n) = f[m];
    let mut d = b.to_vec();
    match how {
        Damage::FlipBody => {
            d[o + h + n / 2] ^= 0x01;
            (d, (h + n) as u64)
        }
        Damage::InvalidJson => {
            let mut body = vec![b'!'; n - 1];
            body.push(b'\n');
            let sha = hex(&Sha1::digest(&body));
            let line = format!("OVSDB CLUSTER {n} {sha}\n");
            assert_eq!(line.len(), h);
            d.splice(o..o + h + n, line.into_bytes().into_iter().chain(body));
            (d, (h + n) as u64)
        }
        Damage::Garbage(len) => {
            // Pseudo-random bytes, LFs and a false "OVSDB " header among them.
            let mut g: Vec<u8> = (0..*len as u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
                .collect();
            let fake = b"OVSDB CLUSTER 5 0000000000000000000000000000000000000000\n";
            g[10..10 + fake.len()].copy_from_slice(fake);
            d.splice(o..o, g);
            (d, *len as u64)
        }
    }
}

fn kinds(s: &FileSummary) -> Vec<usize> {
    let k = &s.record_kinds;
    vec![
        k.header,
        k.entry,
        k.term,
        k.vote,
        k.leader,
        k.commit_index,
        k.note,
    ]
}

#[test]
fn damaged_middle_records_are_skipped_and_the_rest_is_read() {
    let orig = common::sample("election-timer", "s1");
    let f = frames(&orig);
    let m = middle_entry(&orig);
    let whole = summarize(&orig);
    for (how, code, lost) in [
        (Damage::FlipBody, "bad-sha1", 1),
        (Damage::InvalidJson, "bad-json", 1),
        (Damage::Garbage(1000), "bad-header", 0),
    ] {
        let (d, bytes) = damage(&orig, m, &how);
        let s = summarize(&d);
        assert!(s.truncated.is_none(), "{code}: {:?}", s.truncated);
        assert_eq!(s.skipped.len(), 1, "{code}");
        let k = &s.skipped[0];
        assert_eq!(k.record, m, "{code}");
        assert_eq!(k.offset, f[m].0 as u64, "{code}");
        assert_eq!(k.bytes, bytes, "{code}");
        assert_eq!(k.error.kind.code(), code);
        let expect_err_off = match how {
            Damage::Garbage(_) => f[m].0,
            _ => f[m].0 + f[m].1,
        };
        assert_eq!(k.error.offset, expect_err_off as u64, "{code}");
        // Every later record is read.
        assert_eq!(s.records, f.len() - lost, "{code}");
        let mut want = kinds(&whole);
        want[1] -= lost;
        assert_eq!(kinds(&s), want, "{code}");
        assert_eq!(
            (s.commit_index, s.last_index),
            (whole.commit_index, whole.last_index)
        );
        assert_eq!(s.leaders, whole.leaders);
        assert_eq!(s.votes, whole.votes);
        // Sizes that need a replay through the span are unknown.
        assert_eq!((s.entry_bytes.full, s.entry_bytes.diff), (None, None));
        // The replay stops at the span and says it was one.
        let r = replay(&d, Upto::All);
        assert_eq!(r.skipped, s.skipped, "{code}");
        assert_eq!(r.error.as_ref(), Some(&k.error));
        assert!(r.entries.iter().all(|e| e.record < m));
    }
}

#[test]
fn damage_at_the_end_still_ends_the_file() {
    // A bad last record is a damaged tail, reported as before.
    let orig = common::sample("election-timer", "s1");
    let f = frames(&orig);
    let last = f.len() - 1;
    let (d, _) = damage(&orig, last, &Damage::FlipBody);
    let s = summarize(&d);
    assert!(s.skipped.is_empty());
    let e = s.truncated.unwrap();
    assert_eq!((e.record, e.offset), (last, (f[last].0 + f[last].1) as u64));
    let mut fr = ovsdb_log::Framer::new(&d);
    while let Some(Ok(_)) = fr.next_frame() {}
    assert_eq!(fr.good_end(), f[last].0 as u64);
}

#[test]
fn check_counts_a_skipped_entry_as_unknown_not_as_agreement() {
    let scen = "election-timer";
    let files: Vec<(String, Vec<u8>)> = ["s1", "s2", "s3"]
        .iter()
        .map(|s| (format!("{s}.db"), common::sample(scen, s)))
        .collect();
    let run = |files: &[(String, Vec<u8>)]| {
        let v: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        check_cluster(&v)
    };
    let clean = run(&files);
    assert_eq!(clean.exit_code(), 0);
    assert!(clean.unknown.is_empty());
    let agreed = |rep: &ovsdb_log::CheckReport, a: &str, b: &str| {
        rep.pairs
            .iter()
            .find(|p| p.a == a && p.b == b)
            .map(|p| (p.agreed, p.unknown))
            .unwrap()
    };
    let (clean_12, _) = agreed(&clean, "s1.db", "s2.db");
    let (clean_23, _) = agreed(&clean, "s2.db", "s3.db");

    let m = middle_entry(&files[0].1);
    let f = frames(&files[0].1);
    let (o, h, n) = f[m];
    let body = std::str::from_utf8(&files[0].1[o + h..o + h + n]).unwrap();
    let index: u64 = body
        .split("\"index\":")
        .nth(1)
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap();
    for how in [Damage::FlipBody, Damage::InvalidJson] {
        let mut damaged = files.clone();
        damaged[0].1 = damage(&files[0].1, m, &how).0;
        let rep = run(&damaged);
        assert!(rep.unreadable.is_empty(), "{:?}", rep.unreadable);
        assert!(rep.violations.is_empty(), "{:#?}", rep.violations);
        // Not "invariants hold": the span could not be verified.
        assert_eq!(rep.exit_code(), 2);
        assert_eq!(rep.unknown.len(), 1);
        let u = &rep.unknown[0];
        assert_eq!(
            (u.file.as_str(), u.record, u.offset),
            ("s1.db", m, o as u64)
        );
        let (lo, hi) = u.indexes.expect("the span hides entries");
        assert!(lo <= index && index <= hi, "{index} in {lo}..{hi}");
        // s1 agrees with nobody at the unknown indexes; s2/s3 still agree.
        let (a12, u12) = agreed(&rep, "s1.db", "s2.db");
        assert_eq!(a12 + u12, clean_12);
        assert_eq!(u12, hi - lo + 1);
        assert_eq!(agreed(&rep, "s2.db", "s3.db"), (clean_23, 0));
        assert!(u.to_string().contains("unknown"));
    }
    // A span does not hide a real violation elsewhere: s2's entry term
    // changed as well.
    let mut both = ovsdb_log::check::damage::same_index_other_term(&files).unwrap();
    both[0].1 = damage(&both[0].1, m, &Damage::FlipBody).0;
    let rep = run(&both);
    assert_eq!(rep.exit_code(), 1, "{rep:#?}");
    assert!(rep.violations.iter().any(|v| v.rule == "log-matching"));
}

/// `ovsdb-tool -mm show-log` on the damaged copies: it stops at the damaged
/// record (a framing or JSON error is fatal for it) at the offset we report,
/// having decoded the same records before it; started at the next good
/// header (where we resume), it decodes every record we decode after the
/// span.
#[test]
fn show_log_agrees_on_damaged_copies() {
    if std::process::Command::new("ovsdb-tool")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("ovsdb-tool not installed: skipping");
        return;
    }
    let orig = common::sample("election-timer", "s1");
    let m = middle_entry(&orig);
    let dir = std::env::temp_dir().join(format!("ovsdb-scope-salvage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let show = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = std::process::Command::new("ovsdb-tool")
            .args(["-mm", "show-log"])
            .arg(&p)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        (
            out.status.code(),
            show_log_records(&text),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    for (i, how) in [Damage::FlipBody, Damage::InvalidJson, Damage::Garbage(700)]
        .iter()
        .enumerate()
    {
        let (d, _) = damage(&orig, m, how);
        let s = summarize(&d);
        let k = &s.skipped[0];
        let (code, shown, err) = show(&format!("d{i}.db"), &d);
        assert_eq!(code, Some(1), "{err}");
        assert_eq!(shown.len(), m);
        assert!(shown.iter().all(|&(_, ok)| ok));
        assert!(
            err.contains(&format!("offset {}", k.error.offset)),
            "{err} vs {k:?}"
        );
        let (code, shown, err) = show(&format!("t{i}.db"), &d[k.end() as usize..]);
        assert_eq!(code, Some(0), "{err}");
        let after = s.records - m;
        assert_eq!(shown.len(), after);
        // Its record 0 is no header (as in the must-gather fragment); every
        // other record decodes.
        assert!(!shown[0].1);
        assert!(shown[1..].iter().all(|&(_, ok)| ok));
    }
    // The fragment itself, against the live tool.
    let (code, shown, _) = show("fragment.records", &fragment());
    assert_eq!(code, Some(0));
    assert_eq!(shown, vec![(0, false), (1, true), (2, true), (3, true)]);
    let _ = std::fs::remove_dir_all(&dir);
}
