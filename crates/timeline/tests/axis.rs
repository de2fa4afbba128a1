//! The x axis on real files: the leader-pause incident, written by
//! ovsdb-server 3.1 (three servers; entries with `_date`, votes, leaders and
//! commit-index records without one).

use timeline::axis::{Axis, AxisMode, RecordClock};
use timeline::{build_timeline, MarkerKind, Timeline};

const S1: &[u8] = include_bytes!("../../../static/samples/incidents/leader-pause/s1.db");
const S2: &[u8] = include_bytes!("../../../static/samples/incidents/leader-pause/s2.db");
const S3: &[u8] = include_bytes!("../../../static/samples/incidents/leader-pause/s3.db");

fn incident() -> Timeline {
    build_timeline(&[("s1.db", S1), ("s2.db", S2), ("s3.db", S3)], &mut |_| {})
}

#[test]
fn dated_entries_sit_at_their_date_and_the_rest_between_their_dated_neighbours() {
    let t = incident();
    assert!(Axis::has_time(&t));
    let ax = Axis::new(&t, AxisMode::Time, None);
    assert_eq!(ax.mode, AxisMode::Time);
    for (l, la) in t.lanes.iter().zip(&ax.lanes) {
        assert_eq!(la.entries.len(), l.entries.len());
        // Every record, in file order: (record, position, date if any).
        let mut recs: Vec<(u32, f64, Option<i64>)> = l
            .entries
            .iter()
            .zip(&la.entries)
            .map(|(e, &p)| (e.record, p, e.date_ms))
            .chain(
                l.markers
                    .iter()
                    .zip(&la.markers)
                    .map(|(m, &p)| (m.record, p, None)),
            )
            .chain(
                l.commits
                    .iter()
                    .zip(&la.commits)
                    .map(|(c, &p)| (c.record, p, None)),
            )
            .collect();
        recs.sort_by_key(|r| r.0);
        let dated = recs.iter().filter(|r| r.2.is_some()).count();
        assert!(dated > 10, "{}: {dated} dated entries", l.name);
        let mut max_date = i64::MIN;
        for (k, &(rec, p, date)) in recs.iter().enumerate() {
            if let Some(d) = date {
                max_date = max_date.max(d);
                // The file's clock never steps back here: exactly the date.
                assert_eq!(p, d as f64, "{} record {rec}", l.name);
            }
            // Between the dated records before and after it.
            let before = recs[..k].iter().rev().find_map(|r| r.2);
            let after = recs[k + 1..].iter().find_map(|r| r.2);
            if let (Some(a), Some(b)) = (before, after) {
                assert!(
                    a as f64 <= p && p <= b as f64,
                    "{} record {rec}: {a} <= {p} <= {b}",
                    l.name
                );
            }
            if k > 0 {
                assert!(
                    recs[k - 1].1 <= p,
                    "{} positions follow the file order",
                    l.name
                );
            }
        }
        // Bands are in order and cover the lane's records.
        for w in la.bands.windows(2) {
            assert!(
                w[0].0 <= w[0].1 && w[0].1 == w[1].0,
                "{}: {:?}",
                l.name,
                la.bands
            );
        }
        // A term's vote or leader record is inside that term's band.
        for (m, &p) in l.markers.iter().zip(&la.markers) {
            if let MarkerKind::Vote { term, .. } | MarkerKind::Leader { term, .. } = &m.kind {
                let k = l.bands.iter().position(|b| b.term == *term).unwrap();
                let (a, b) = la.bands[k];
                assert!(
                    a <= p && p <= b,
                    "{} term {term}: {a} <= {p} <= {b}",
                    l.name
                );
            }
        }
        assert!(ax.min < recs[0].1 && recs.last().unwrap().1 < ax.max);
        let clock = RecordClock::new(l);
        assert_eq!(clock.at(u32::MAX), Some(max_date as f64));
    }
}

#[test]
fn the_same_index_is_at_the_same_time_in_every_file_and_later_is_further_right() {
    let t = incident();
    let ax = Axis::new(&t, AxisMode::Time, None);
    let vp = ax.viewport();
    let pos = |lane: usize, index: u64| {
        let l = &t.lanes[lane];
        let i = l
            .entries
            .iter()
            .rposition(|e| e.index == index && e.date_ms.is_some())?;
        Some(ax.lanes[lane].entries[i])
    };
    let mut compared = 0;
    for index in t.min_index..=t.max_index {
        if let (Some(a), Some(b), Some(c)) = (pos(0, index), pos(1, index), pos(2, index)) {
            assert_eq!(a, b, "index {index}");
            assert_eq!(b, c, "index {index}");
            compared += 1;
        }
    }
    assert!(compared > 10);
    let (a, b) = (pos(1, 10).unwrap(), pos(1, 60).unwrap());
    assert!(vp.x_of(b, 1000.0) > vp.x_of(a, 1000.0));
    // Index ↔ time both ways: the index axis puts that time at that index.
    let ix = Axis::new(&t, AxisMode::Index, None);
    let at = ix.at_time(b as i64).unwrap();
    assert!((at - 60.0).abs() < 1.0, "{at}");
}
