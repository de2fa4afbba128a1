//! The view model built from the real sample files agrees with the core's
//! summaries and with what the servers recorded (tests/fixtures facts.json).

use std::path::PathBuf;
use timeline::{build_timeline, Hit, Layout, MarkerKind, SizeView, Viewport};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(scenario: &str, files: &[&str]) -> Vec<(String, Vec<u8>)> {
    files
        .iter()
        .map(|f| {
            let p = root().join("static/samples").join(scenario).join(f);
            (
                f.to_string(),
                std::fs::read(&p).unwrap_or_else(|e| panic!("{p:?}: {e}")),
            )
        })
        .collect()
}

fn timeline_of(scenario: &str, files: &[&str]) -> timeline::Timeline {
    let data = load(scenario, files);
    let refs: Vec<(&str, &[u8])> = data
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let mut last = 0;
    let t = build_timeline(&refs, &mut |n| {
        assert!(n >= last, "progress never goes back");
        last = n;
    });
    let total: usize = data.iter().map(|(_, b)| b.len()).sum();
    assert_eq!(last, total as u64, "progress ends at the total size");
    t
}

#[test]
fn leader_failover_lanes_terms_leaders_and_commit() {
    let t = timeline_of("leader-failover", &["s1.db", "s2.db", "s3.db"]);
    assert_eq!(t.lanes.len(), 3);
    assert_eq!(t.cluster.servers.len(), 3);
    for (l, f) in t.lanes.iter().zip(["s1.db", "s2.db", "s3.db"]) {
        let s = ovsdb_log::summarize(&load("leader-failover", &[f])[0].1);
        assert_eq!(l.summary.records, s.records as u64);
        assert_eq!(l.summary.entries, s.record_kinds.entry as u64);
        assert_eq!(l.entries.len(), s.record_kinds.entry);
        assert_eq!(l.summary.last_index, s.last_index);
        assert_eq!(l.summary.commit_index, Some(156));
        // The last entry in file order is the summary's last index.
        assert_eq!(l.entries.last().map(|e| e.index), s.last_index);
        // Stored sizes add up to the core's total for data entries.
        let data: u64 = l
            .entries
            .iter()
            .filter(|e| e.has_data)
            .map(|e| e.sizes.stored)
            .sum();
        assert_eq!(data, s.entry_bytes.stored);
        // The cumulative line ends at the end of the last entry record.
        let cum = l.cumulative(SizeView::Stored);
        let last = l.entries.last().unwrap();
        assert_eq!(*cum.last().unwrap(), last.offset + last.sizes.stored);
        assert!(cum.windows(2).all(|w| w[0] <= w[1]));
    }
    assert_eq!(t.max_index, 156);
    // Terms 1 and 2, each with its leader, known across the cluster.
    let terms: Vec<u64> = t.cluster.terms.iter().map(|t| t.term).collect();
    assert_eq!(terms, vec![1, 2]);
    assert_eq!(
        t.cluster.terms[1].leaders,
        vec!["159afc95-afeb-4b65-8c2a-f402ae3b6e57".to_string()]
    );
    // s2 voted for itself in term 2 and became leader.
    let s2 = &t.lanes[1];
    let b2 = s2.bands.iter().find(|b| b.term == 2).unwrap();
    assert_eq!(
        b2.vote.as_deref(),
        Some("159afc95-afeb-4b65-8c2a-f402ae3b6e57")
    );
    assert_eq!(
        b2.leader.as_deref(),
        Some("159afc95-afeb-4b65-8c2a-f402ae3b6e57")
    );
    assert!(
        t.cluster.violations.is_empty(),
        "{:?}",
        t.cluster.violations
    );
    // inspect JSON shape: files + cluster.
    assert!(t
        .cluster
        .inspect_json
        .starts_with("{\"files\":[{\"path\":\"s1.db\""));
    assert!(t
        .cluster
        .inspect_json
        .contains("\"cluster\":{\"cluster_id\":"));
}

#[test]
fn markers_for_snapshot_membership_and_election_timer() {
    let t = timeline_of("compacted", &["s1.db", "s2.db", "s3.db"]);
    let snaps: Vec<u64> = t
        .lanes
        .iter()
        .flat_map(|l| l.markers.iter())
        .filter_map(|m| match m.kind {
            MarkerKind::Snapshot { .. } => Some(m.index),
            _ => None,
        })
        .collect();
    assert_eq!(snaps.len(), 3, "every file starts from a snapshot header");
    assert!(
        snaps.iter().any(|&i| i > 1),
        "compacted files start later: {snaps:?}"
    );

    let t = timeline_of("election-timer", &["s1.db"]);
    let timers: Vec<u64> = t.lanes[0]
        .markers
        .iter()
        .filter_map(|m| match m.kind {
            MarkerKind::ElectionTimer { ms } => Some(ms),
            _ => None,
        })
        .collect();
    assert_eq!(timers.last(), Some(&2000));

    let t = timeline_of("membership", &["s1.db", "s2.db", "s3.db"]);
    let changes = t.lanes[1]
        .markers
        .iter()
        .filter(|m| matches!(m.kind, MarkerKind::Membership { .. }))
        .count();
    assert!(changes >= 2, "servers joined: {changes}");
    assert!(t.lanes[0]
        .markers
        .iter()
        .any(|m| matches!(&m.kind, MarkerKind::Note { note, .. } if note == "left")));
}

#[test]
fn standalone_file_has_one_lane_of_transactions() {
    let t = timeline_of("standalone", &["nb.db"]);
    let l = &t.lanes[0];
    assert!(!l.clustered);
    assert_eq!(l.entries.len(), 40);
    assert_eq!(l.entries[0].index, 1);
    assert!(l.entries.iter().all(|e| e.date_ms.is_some()));
    assert!(t.cluster.inspect_json.ends_with(",\"cluster\":null}"));
}

#[test]
fn truncated_file_keeps_the_valid_prefix() {
    let data = load("leader-failover", &["s2.db"]);
    let cut = &data[0].1[..data[0].1.len() * 6 / 10];
    let t = build_timeline(&[("s2.db", cut)], &mut |_| {});
    let l = &t.lanes[0];
    let tr = l.truncated.as_ref().expect("damage reported");
    assert!(tr.record > 0 && tr.offset > 0 && !tr.reason.is_empty());
    assert!(!l.entries.is_empty());
    assert!(l.entries.iter().all(|e| e.offset < tr.offset));
    assert_eq!(l.summary.records, tr.record);
}

#[test]
fn viewport_zoom_pan_and_hit_testing() {
    let t = timeline_of("leader-failover", &["s1.db", "s2.db", "s3.db"]);
    let mut vp = Viewport::for_timeline(&t);
    let full = vp.span();
    vp.zoom(4.0, 0.5);
    assert!((vp.span() - full / 4.0).abs() < 1e-9);
    let before = vp.start;
    vp.pan(0.25);
    assert!(vp.start > before);
    vp.pan(-100.0);
    assert_eq!(vp.start, vp.min, "pan stops at the start");
    vp.reset();
    assert_eq!(vp.span(), full);

    let layout = Layout::new(1200.0);
    // Hover the entry with index 100 in lane 1 (s2).
    let x = layout.gutter + vp.x_of(100.0, layout.plot_width());
    let y = layout.lane_top(1) + layout.band + layout.ticks / 2.0;
    match layout.hit(&t, &vp, SizeView::Stored, x, y) {
        Some(Hit::Entry { lane, entry }) => {
            assert_eq!(lane, 1);
            assert_eq!(t.lanes[1].entries[entry].index, 100);
        }
        other => panic!("expected an entry, got {other:?}"),
    }
    // Band row of lane 0 at index 150 is term 2.
    let x = layout.gutter + vp.x_of(150.0, layout.plot_width());
    let y = layout.lane_top(0) + 2.0;
    match layout.hit(&t, &vp, SizeView::Stored, x, y) {
        Some(Hit::Band { lane: 0, band }) => assert_eq!(t.lanes[0].bands[band].term, 2),
        other => panic!("expected a band, got {other:?}"),
    }
    assert_eq!(layout.hit(&t, &vp, SizeView::Stored, 5.0, 5.0), None);
}

#[test]
fn columns_aggregate_entries_per_pixel() {
    let t = timeline_of("sb-scale", &["s1.db"]);
    let l = &t.lanes[0];
    let vp = Viewport::for_timeline(&t);
    let cols = l.columns(&vp, 10.0, SizeView::Stored);
    assert!(cols.len() <= 11);
    let n: u32 = cols.iter().map(|c| c.count).sum();
    assert_eq!(n as usize, l.entries.len());
    let max = cols.iter().map(|c| c.max_bytes).max().unwrap();
    assert_eq!(max, l.max_entry_size(SizeView::Stored));
}

#[test]
fn inspector_details_of_a_real_entry() {
    let data = load("leader-failover", &["s1.db"]);
    let t = build_timeline(&[("s1.db", &data[0].1)], &mut |_| {});
    let e = t.lanes[0]
        .entries
        .iter()
        .find(|e| e.has_data && e.rows > 0)
        .unwrap();
    let d = timeline::inspect_record(&data[0].1, true, e.record as u64, e.offset);
    assert_eq!(d.error, None);
    assert_eq!(d.kind, "entry");
    assert_eq!(d.index, Some(e.index));
    assert_eq!(d.term, Some(e.term));
    assert_eq!(d.eid, e.eid);
    assert_eq!(d.record_bytes, e.sizes.stored);
    assert_eq!(d.tables.len() as u32, e.tables);
    // Across the file, changes name rows and columns with their bytes.
    let mut columns = 0;
    for e in t.lanes[0].entries.iter().filter(|e| e.has_data).step_by(10) {
        let d = timeline::inspect_record(&data[0].1, true, e.record as u64, e.offset);
        assert_eq!(d.tables.len() as u32, e.tables);
        let rows: usize = d.tables.iter().map(|t| t.rows.len()).sum();
        assert_eq!(rows as u32, e.rows);
        for c in d
            .tables
            .iter()
            .flat_map(|t| t.rows.iter())
            .flat_map(|r| r.columns.iter())
        {
            assert!(c.stored_bytes as usize > c.stored.len());
            columns += 1;
        }
    }
    assert!(columns > 10, "{columns}");
    // Garbage offsets never panic.
    let bad = timeline::inspect_record(&data[0].1, true, 3, 1 << 40);
    assert!(bad.error.is_some());
    let bad = timeline::inspect_record(&data[0].1, true, 3, 17);
    assert!(bad.error.is_some());
}

#[test]
fn storage_modes_round_trip_names() {
    for m in SizeView::ALL {
        assert_eq!(SizeView::from_name(m.name()), Some(m));
    }
    assert_eq!(SizeView::from_name("bogus"), None);
}

#[test]
fn per_entry_sizes_in_each_mode_add_up_to_the_core_totals() {
    for (scenario, stored_as) in [
        ("acl-portgroup-diff", SizeView::Diff),
        ("acl-portgroup-full", SizeView::Full),
    ] {
        let t = timeline_of(scenario, &["s1.db"]);
        let l = &t.lanes[0];
        for m in SizeView::ALL {
            let sum: u64 = l
                .entries
                .iter()
                .filter(|e| e.has_data)
                .map(|e| e.sizes.get(m).expect("sizes known"))
                .sum();
            assert_eq!(Some(sum), l.summary.entry_bytes.get(m), "{scenario} {m:?}");
        }
        // Written in the mode the file was stored in, nothing changes.
        assert_eq!(
            l.summary.entry_bytes.get(stored_as),
            Some(l.summary.entry_bytes.stored),
            "{scenario}"
        );
        // Diffs are much smaller than full values for ACLs added one by one.
        let full = l.summary.entry_bytes.full.unwrap();
        let diff = l.summary.entry_bytes.diff.unwrap();
        assert!(diff * 3 < full, "{scenario}: diff {diff} full {full}");
        // The cumulative line ends at the same place in stored mode and
        // in the file's own mode.
        assert_eq!(
            l.cumulative(SizeView::Stored).last(),
            l.cumulative(stored_as).last()
        );
    }
}

#[test]
fn inspector_shows_each_column_as_full_value_and_diff() {
    let data = load("acl-portgroup-diff", &["s1.db"]);
    let t = build_timeline(&[("s1.db", &data[0].1)], &mut |_| {});
    // Late in the add loop: the port group's acls set holds many ACLs and the
    // entry stores only the added one as a diff.
    let e = t.lanes[0]
        .entries
        .iter()
        .filter(|e| e.has_data)
        .nth(100)
        .unwrap();
    let d = timeline::inspect_record(&data[0].1, true, e.record as u64, e.offset);
    assert_eq!(d.error, None);
    assert!(d.diff_mode);
    let cols: Vec<_> = d
        .tables
        .iter()
        .flat_map(|t| t.rows.iter())
        .flat_map(|r| r.columns.iter())
        .collect();
    assert!(!cols.is_empty());
    assert!(cols.iter().all(|c| c.full.is_some() && c.diff.is_some()));
    // Stored as diffs: the diff text is what the file holds.
    assert!(cols
        .iter()
        .all(|c| c.diff.as_deref() == Some(c.stored.as_str())));
    let big = cols
        .iter()
        .find(|c| c.full_bytes.unwrap() > 4 * c.diff_bytes.unwrap())
        .expect("a set column whose full value is much larger than its diff");
    assert!(big.full.as_ref().unwrap().starts_with("[\"set\""));
}

#[test]
fn compact_lane_index_agrees_with_the_lane() {
    let t = timeline_of("leader-failover", &["s1.db", "s2.db"]);
    for l in &t.lanes {
        let ix = timeline::LaneIndex::new(l);
        for m in SizeView::ALL {
            assert_eq!(ix.cumulative(m), l.cumulative(m).as_slice());
            assert_eq!(ix.max_size(m), l.max_entry_size(m));
        }
        let mut vp = Viewport::for_timeline(&t);
        for width in [37.0, 400.0, 5000.0] {
            for _ in 0..3 {
                let a = ix.columns(&vp, width, SizeView::Stored);
                let b = l.columns(&vp, width, SizeView::Stored);
                assert_eq!(a.len(), b.len());
                for (p, c) in a.iter().zip(&b) {
                    assert_eq!(
                        (p.x, p.max_bytes, p.entry as usize),
                        (c.x, c.max_bytes, c.entry)
                    );
                    assert_eq!((p.last - p.first + 1), c.count);
                }
                vp.zoom(3.0, 0.3);
            }
            vp.reset();
        }
    }
}

#[test]
fn skipped_span_gets_a_marker_and_later_entries_stay() {
    let data = load("leader-failover", &["s2.db"]);
    let whole = build_timeline(&[("s2.db", &data[0].1)], &mut |_| {});
    let mut d = data[0].1.clone();
    // Flip a byte two bytes into the body of the first record after the
    // middle of the file.
    let n = d.len() / 2;
    let h = n + d[n..].windows(7).position(|w| w == b"\nOVSDB ").unwrap() + 1;
    let body = h + d[h..].iter().position(|&c| c == b'\n').unwrap() + 1;
    d[body + 2] ^= 1;
    let t = build_timeline(&[("s2.db", &d)], &mut |_| {});
    let l = &t.lanes[0];
    assert!(l.truncated.is_none());
    let skipped: Vec<_> = l
        .markers
        .iter()
        .filter_map(|m| match &m.kind {
            MarkerKind::Skipped { offset, code, .. } => Some((*offset, code.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(skipped, vec![(h as u64, "bad-sha1".to_string())]);
    // Records after the span are on the lane: at most one entry is lost.
    let lost = whole.lanes[0].entries.len() - l.entries.len();
    assert!(lost <= 1, "{lost}");
    assert!(l.entries.iter().any(|e| e.offset > h as u64));
    assert!(t.cluster.inspect_json.contains("\"skipped\":[{"));
}
