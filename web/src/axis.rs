//! Where wall-clock times fall on the log-index axis: the explorer places
//! the operator's log events (UTC milliseconds) next to the Raft entries of
//! the database files, whose `_date` gives the time of the entries with
//! data. Pure math, no drawing (a candidate for `crates/timeline`).

use timeline::Timeline;

/// A monotone piecewise-linear map between log index and time, through the
/// dated entries of every lane.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeMap {
    /// (index, time ms), index strictly and time weakly increasing.
    pts: Vec<(f64, f64)>,
    min: f64,
    max: f64,
}

impl TimeMap {
    pub fn new(t: &Timeline) -> TimeMap {
        let mut pts: Vec<(f64, f64)> = t
            .lanes
            .iter()
            .flat_map(|l| l.entries.iter())
            .filter_map(|e| e.date_ms.map(|d| (e.index as f64, d as f64)))
            .collect();
        TimeMap::from_points(&mut pts, t.min_index as f64 - 0.5, t.max_index as f64 + 0.5)
    }

    /// From (index, time) points in any order; `min`/`max` bound the index.
    pub fn from_points(pts: &mut [(f64, f64)], min: f64, max: f64) -> TimeMap {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut out: Vec<(f64, f64)> = Vec::with_capacity(pts.len());
        for &(i, d) in pts.iter() {
            match out.last() {
                Some(&(li, _)) if li == i => {}
                // Clocks of different servers may disagree a little: keep
                // the map monotone.
                Some(&(_, ld)) => out.push((i, d.max(ld))),
                None => out.push((i, d)),
            }
        }
        TimeMap { pts: out, min, max }
    }

    pub fn is_empty(&self) -> bool {
        self.pts.is_empty()
    }

    /// Indexes per millisecond over the whole map (for times outside it).
    fn rate(&self) -> f64 {
        let (Some(a), Some(b)) = (self.pts.first(), self.pts.last()) else {
            return 0.0;
        };
        if b.1 > a.1 {
            (b.0 - a.0) / (b.1 - a.1)
        } else {
            0.0
        }
    }

    /// The index position of time `ms`, within the axis bounds.
    pub fn index_of(&self, ms: i64) -> Option<f64> {
        let ms = ms as f64;
        let first = *self.pts.first()?;
        let last = *self.pts.last()?;
        let pos = if ms <= first.1 {
            first.0 - (first.1 - ms) * self.rate()
        } else if ms >= last.1 {
            last.0 + (ms - last.1) * self.rate()
        } else {
            let k = self.pts.partition_point(|p| p.1 <= ms);
            let (a, b) = (self.pts[k - 1], self.pts[k]);
            if b.1 > a.1 {
                a.0 + (ms - a.1) / (b.1 - a.1) * (b.0 - a.0)
            } else {
                a.0
            }
        };
        Some(pos.clamp(self.min, self.max))
    }

    /// The time at index position `index` (between dated neighbours).
    pub fn time_of(&self, index: f64) -> Option<i64> {
        let first = *self.pts.first()?;
        let last = *self.pts.last()?;
        let r = self.rate();
        let ms = if index <= first.0 {
            if r > 0.0 {
                first.1 - (first.0 - index) / r
            } else {
                first.1
            }
        } else if index >= last.0 {
            if r > 0.0 {
                last.1 + (index - last.0) / r
            } else {
                last.1
            }
        } else {
            let k = self.pts.partition_point(|p| p.0 <= index);
            let (a, b) = (self.pts[k - 1], self.pts[k]);
            a.1 + (index - a.0) / (b.0 - a.0) * (b.1 - a.1)
        };
        Some(ms.round() as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_between_dated_entries_and_extrapolates_at_the_ends() {
        let mut pts = vec![(10.0, 2000.0), (2.0, 1000.0), (6.0, 1000.0)];
        let m = TimeMap::from_points(&mut pts, 0.5, 20.5);
        assert_eq!(m.index_of(1000), Some(2.0));
        assert_eq!(m.index_of(1500), Some(8.0));
        // 8 indexes per 1000 ms: 500 ms before the first is index -2, clamped.
        assert_eq!(m.index_of(500), Some(0.5));
        assert_eq!(m.index_of(2250), Some(12.0));
        assert_eq!(m.time_of(8.0), Some(1500));
        assert_eq!(TimeMap::default().index_of(5), None);
    }

    #[test]
    fn stays_monotone_when_clocks_disagree() {
        let mut pts = vec![(1.0, 1000.0), (2.0, 900.0), (3.0, 1100.0)];
        let m = TimeMap::from_points(&mut pts, 0.0, 4.0);
        assert_eq!(m.index_of(1000), Some(1.0));
        assert_eq!(m.index_of(1050), Some(2.5));
    }
}
