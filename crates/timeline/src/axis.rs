//! The x axis of the timeline: log index or wall time (UTC).
//!
//! On the **index** axis an entry sits at its log index, and wall-clock
//! times (the operator's log events) are placed through [`TimeMap`], a
//! monotone piecewise-linear map between log index and the `_date` of the
//! dated entries of every lane.
//!
//! On the **time** axis positions are UTC epoch milliseconds. An entry with
//! a `_date` sits at its date; every other record of a file (entries without
//! a date, votes, leaders, commit-index records, notes) sits between its
//! dated neighbours in the file, interpolated by record number. Term bands
//! run from the first record of their term to the start of the next band.
//! Log events sit at their own time.
//!
//! [`Axis`] holds the position of every drawn thing of every lane for one
//! mode, so the renderer and the hit-testing never ask which mode is on.
//! Pure data: no drawing, no clock.

use std::collections::BTreeMap;

use crate::model::{Lane, MarkerKind, Timeline};
use crate::time;
use crate::view::{Hit, LaneIndex, Layout, PixelColumn, Viewport};
use crate::SizeView;

/// What the x axis measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AxisMode {
    /// Raft log index (the files' own order).
    #[default]
    Index,
    /// UTC wall time, from the entries' `_date` and the logs' timestamps.
    Time,
}

impl AxisMode {
    pub fn name(self) -> &'static str {
        match self {
            AxisMode::Index => "index",
            AxisMode::Time => "time",
        }
    }

    pub fn from_name(s: &str) -> Option<AxisMode> {
        match s {
            "index" => Some(AxisMode::Index),
            "time" => Some(AxisMode::Time),
            _ => None,
        }
    }
}

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
        // Through the one stable sort (`ovsdb::order`): once per axis.
        ovsdb::order::sort_small_by(pts, |a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
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
        self.time_of_f(index).map(|ms| ms.round() as i64)
    }

    fn time_of_f(&self, index: f64) -> Option<f64> {
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
        Some(ms)
    }
}

/// Record number → time on one file, through the file's dated entries:
/// a record without a date sits between its dated neighbours, linearly in
/// record number; records before the first (after the last) dated one sit
/// at its time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordClock {
    /// (record, ms): record strictly, time weakly increasing.
    pts: Vec<(f64, f64)>,
}

impl RecordClock {
    pub fn new(lane: &Lane) -> RecordClock {
        RecordClock::from_points(
            lane.entries
                .iter()
                .filter_map(|e| e.date_ms.map(|d| (e.record, d))),
        )
    }

    /// From (record, ms) points in file order. A date earlier than one
    /// before it (a clock stepped back) is taken as the earlier maximum, so
    /// the file's order is kept.
    pub fn from_points(pts: impl IntoIterator<Item = (u32, i64)>) -> RecordClock {
        let mut v: Vec<(f64, f64)> = Vec::new();
        for (r, d) in pts {
            let (r, d) = (r as f64, d as f64);
            match v.last_mut() {
                Some(last) if last.0 == r => last.1 = last.1.max(d),
                Some(last) if last.0 > r => {}
                Some(last) => {
                    let d = d.max(last.1);
                    v.push((r, d));
                }
                None => v.push((r, d)),
            }
        }
        RecordClock { pts: v }
    }

    pub fn is_empty(&self) -> bool {
        self.pts.is_empty()
    }

    /// The time of record `record`.
    pub fn at(&self, record: u32) -> Option<f64> {
        let r = record as f64;
        let first = *self.pts.first()?;
        let last = *self.pts.last()?;
        if r <= first.0 {
            return Some(first.1);
        }
        if r >= last.0 {
            return Some(last.1);
        }
        let k = self.pts.partition_point(|p| p.0 <= r);
        let (a, b) = (self.pts[k - 1], self.pts[k]);
        Some(a.1 + (r - a.0) / (b.0 - a.0) * (b.1 - a.1))
    }
}

/// Axis positions of everything drawn for one lane.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaneAxis {
    /// Each entry, in `Lane::entries` order.
    pub entries: Vec<f64>,
    /// Each marker, in `Lane::markers` order.
    pub markers: Vec<f64>,
    /// Each commit-index record, in `Lane::commits` order.
    pub commits: Vec<f64>,
    /// `(from, to)` of each term band, in `Lane::bands` order.
    pub bands: Vec<(f64, f64)>,
    /// The committed range: from the snapshot to the commit index.
    pub committed: Option<(f64, f64)>,
    /// Where reading stopped on a damaged file.
    pub truncated: Option<f64>,
    /// `entries` is non-decreasing (binary search is allowed).
    sorted: bool,
}

impl LaneAxis {
    fn index_mode(lane: &Lane) -> LaneAxis {
        LaneAxis {
            entries: lane.entries.iter().map(|e| e.index as f64).collect(),
            markers: lane.markers.iter().map(|m| m.index as f64).collect(),
            commits: lane.commits.iter().map(|c| c.commit_index as f64).collect(),
            bands: lane
                .bands
                .iter()
                .map(|b| (b.start as f64 - 0.5, b.end.max(b.start) as f64 + 0.5))
                .collect(),
            committed: lane
                .summary
                .commit_index
                .map(|c| (lane.snapshot_index as f64, c as f64)),
            truncated: lane.truncated.as_ref().map(|t| t.at_index as f64 - 0.5),
            sorted: lane.monotonic,
        }
    }

    /// `None` when neither the lane nor `map` gives any time.
    fn time_mode(lane: &Lane, map: &TimeMap) -> Option<LaneAxis> {
        let clock = RecordClock::new(lane);
        // A file without one dated entry is placed through the other
        // files' dates, by index.
        let at = |record: u32, index: f64| -> Option<f64> {
            if clock.is_empty() {
                map.time_of_f(index)
            } else {
                clock.at(record)
            }
        };
        let mut entries = Vec::with_capacity(lane.entries.len());
        let mut last = f64::NEG_INFINITY;
        for e in &lane.entries {
            // Monotone in file order (a clock stepped back keeps the order).
            let p = at(e.record, e.index as f64)?.max(last);
            last = p;
            entries.push(p);
        }
        let markers: Vec<f64> = lane
            .markers
            .iter()
            .map(|m| at(m.record, m.index as f64))
            .collect::<Option<_>>()
            .or_else(|| (lane.markers.is_empty()).then(Vec::new))?;
        let commits: Vec<f64> = lane
            .commits
            .iter()
            .filter_map(|c| at(c.record, c.at_index as f64))
            .collect();
        if commits.len() != lane.commits.len() {
            return None;
        }
        // Index → position within this lane, through its own entries (the
        // latest copy of an index wins).
        let mut by_index: Vec<(f64, f64)> = lane
            .entries
            .iter()
            .zip(&entries)
            .filter(|(e, _)| !e.superseded)
            .map(|(e, &p)| (e.index as f64, p))
            .collect();
        let lane_end = entries
            .last()
            .copied()
            .into_iter()
            .chain(markers.iter().copied())
            .chain(commits.iter().copied())
            .fold(f64::NEG_INFINITY, f64::max);
        let lane_start = entries
            .first()
            .copied()
            .into_iter()
            .chain(markers.iter().copied())
            .chain(commits.iter().copied())
            .fold(f64::INFINITY, f64::min);
        let local = if by_index.is_empty() {
            map.clone()
        } else {
            TimeMap::from_points(&mut by_index, f64::NEG_INFINITY, f64::INFINITY)
        };
        let index_pos = |i: f64| local.time_of_f(i).or_else(|| map.time_of_f(i));
        // A term band starts at the first record of its term (its vote,
        // its leader, its first entry) and runs to the next band. One pass
        // over the records finds each term's first one.
        let mut first: BTreeMap<u64, f64> = BTreeMap::new();
        let mut note = |term: u64, p: f64| {
            let f = first.entry(term).or_insert(p);
            *f = f.min(p);
        };
        for (m, &p) in lane.markers.iter().zip(&markers) {
            if let MarkerKind::Leader { term, .. } | MarkerKind::Vote { term, .. } = &m.kind {
                note(*term, p);
            }
        }
        let mut last_term = None;
        for (e, &p) in lane.entries.iter().zip(&entries) {
            if last_term != Some(e.term) {
                last_term = Some(e.term);
                note(e.term, p);
            }
        }
        let mut starts: Vec<f64> = lane
            .bands
            .iter()
            .map(|b| match first.get(&b.term) {
                Some(&p) => p,
                None => index_pos(b.start as f64 - 0.5).unwrap_or(lane_start),
            })
            .collect();
        for k in 1..starts.len() {
            starts[k] = starts[k].max(starts[k - 1]);
        }
        let end = lane_end.max(starts.last().copied().unwrap_or(lane_end));
        let bands = (0..starts.len())
            .map(|k| (starts[k], starts.get(k + 1).copied().unwrap_or(end)))
            .collect();
        let committed = lane.summary.commit_index.and_then(|c| {
            let from = entries
                .first()
                .copied()
                .or_else(|| index_pos(lane.snapshot_index as f64))?;
            let to = index_pos(c as f64)?;
            Some((from, to.max(from)))
        });
        let truncated = lane.truncated.as_ref().map(|_| {
            if lane_end.is_finite() {
                lane_end
            } else {
                lane_start
            }
        });
        Some(LaneAxis {
            entries,
            markers,
            commits,
            bands,
            committed,
            truncated,
            sorted: true,
        })
    }
}

/// One tick of the axis: its position, its label and, under it, a second
/// line (the clock time of an index tick; the date when a time tick starts
/// a new day).
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    pub pos: f64,
    pub label: String,
    pub sub: Option<String>,
}

/// The x axis of one timeline in one mode.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Axis {
    pub mode: AxisMode,
    /// Index ↔ time through every lane's dated entries.
    pub map: TimeMap,
    /// Positions per lane, in `Timeline::lanes` order.
    pub lanes: Vec<LaneAxis>,
    /// Position range of the whole axis.
    pub min: f64,
    pub max: f64,
}

/// Narrowest time range shown, in ms.
const MIN_TIME_SPAN: f64 = 1000.0;

impl Axis {
    /// The axis of `t` in `mode`. `logs` is the time range of the log
    /// events shown with the files, if any: the time axis spans it too. A
    /// time axis without one dated entry in any file falls back to the
    /// index axis (its `mode` says which one was made).
    pub fn new(t: &Timeline, mode: AxisMode, logs: Option<(i64, i64)>) -> Axis {
        let map = TimeMap::new(t);
        if mode == AxisMode::Time && !map.is_empty() {
            let lanes: Option<Vec<LaneAxis>> = t
                .lanes
                .iter()
                .map(|l| LaneAxis::time_mode(l, &map))
                .collect();
            if let Some(lanes) = lanes {
                let mut lo = f64::INFINITY;
                let mut hi = f64::NEG_INFINITY;
                for la in &lanes {
                    for &p in la.entries.iter().chain(&la.markers).chain(&la.commits) {
                        lo = lo.min(p);
                        hi = hi.max(p);
                    }
                }
                if let Some((a, b)) = logs {
                    lo = lo.min(a as f64);
                    hi = hi.max(b as f64);
                }
                if lo.is_finite() && hi.is_finite() {
                    let pad = ((hi - lo) * 0.01).max(MIN_TIME_SPAN / 2.0);
                    return Axis {
                        mode,
                        map,
                        lanes,
                        min: lo - pad,
                        max: hi + pad,
                    };
                }
            }
        }
        let vp = Viewport::for_timeline(t);
        Axis {
            mode: AxisMode::Index,
            map,
            lanes: t.lanes.iter().map(LaneAxis::index_mode).collect(),
            min: vp.min,
            max: vp.max,
        }
    }

    /// Whether `t` can be shown on the time axis (some entry has a date).
    pub fn has_time(t: &Timeline) -> bool {
        t.lanes
            .iter()
            .any(|l| l.entries.iter().any(|e| e.date_ms.is_some()))
    }

    /// A viewport showing the whole axis.
    pub fn viewport(&self) -> Viewport {
        Viewport {
            start: self.min,
            end: self.max,
            min: self.min,
            max: self.max,
        }
    }

    /// `vp`'s visible range on this axis's bounds (after a rebuild of the
    /// same mode, say when the log range or a check's markers arrive).
    pub fn rebound(&self, vp: &Viewport) -> Viewport {
        let mut out = self.viewport();
        let full = (vp.start - vp.min).abs() < 1e-9 && (vp.end - vp.max).abs() < 1e-9;
        let span = vp.end - vp.start;
        if !full && span > 0.0 && span < out.max - out.min {
            out.start = vp.start.max(out.min);
            out.end = (out.start + span).min(out.max);
            out.start = out.end - span;
        }
        out
    }

    /// `vp` (a view of `from`) as a view of this axis: the same times, or
    /// the whole axis when `vp` showed everything or cannot be mapped.
    pub fn convert(&self, from: &Axis, vp: &Viewport) -> Viewport {
        let whole = self.viewport();
        if vp.zoom_level() <= 1.0 + 1e-9 {
            return whole;
        }
        let conv = |p: f64| from.time_at_f(p).and_then(|ms| self.at_time_f(ms));
        let (Some(a), Some(b)) = (conv(vp.start), conv(vp.end)) else {
            return whole;
        };
        let min_span = match self.mode {
            AxisMode::Index => 4.0,
            AxisMode::Time => MIN_TIME_SPAN,
        };
        let (a, b) = (a.max(self.min), b.min(self.max));
        if b - a < min_span.min(self.max - self.min) {
            let mut v = whole;
            v.set_zoom_level((self.max - self.min) / min_span, (a + b) / 2.0);
            return v;
        }
        Viewport {
            start: a,
            end: b,
            min: self.min,
            max: self.max,
        }
    }

    fn at_time_f(&self, ms: f64) -> Option<f64> {
        match self.mode {
            AxisMode::Index => self.map.index_of(ms.round() as i64),
            AxisMode::Time => Some(ms.clamp(self.min, self.max)),
        }
    }

    fn time_at_f(&self, pos: f64) -> Option<f64> {
        match self.mode {
            AxisMode::Index => self.map.time_of_f(pos),
            AxisMode::Time => Some(pos),
        }
    }

    /// Position of wall time `ms` (a log event).
    pub fn at_time(&self, ms: i64) -> Option<f64> {
        self.at_time_f(ms as f64)
    }

    /// Wall time at position `pos`.
    pub fn time_at(&self, pos: f64) -> Option<i64> {
        self.time_at_f(pos).map(|ms| ms.round() as i64)
    }

    /// Position of log index `index` (for a finding that names one).
    pub fn at_index(&self, index: f64) -> Option<f64> {
        match self.mode {
            AxisMode::Index => Some(index),
            AxisMode::Time => self.map.time_of_f(index),
        }
    }

    /// Where to show something known by index and/or time: on the index
    /// axis by its index first, on the time axis by its time first.
    pub fn place(&self, index: Option<u64>, ms: Option<i64>) -> Option<f64> {
        let by_index = || index.and_then(|i| self.at_index(i as f64));
        let by_time = || ms.and_then(|t| self.at_time(t));
        match self.mode {
            AxisMode::Index => by_index().or_else(by_time),
            AxisMode::Time => by_time().or_else(by_index),
        }
    }

    /// Entries of lane `lane` in view, grouped per pixel column (x in
    /// `0..plot_width`), like [`LaneIndex::columns`] but at this axis's
    /// positions.
    pub fn columns(
        &self,
        lane: usize,
        ix: &LaneIndex,
        vp: &Viewport,
        plot_width: f64,
        mode: SizeView,
    ) -> Vec<PixelColumn> {
        let Some(la) = self.lanes.get(lane) else {
            return Vec::new();
        };
        if self.mode == AxisMode::Index || !la.sorted || la.entries.len() != ix.index.len() {
            return ix.columns(vp, plot_width, mode);
        }
        let lo = la.entries.partition_point(|&p| p < vp.start);
        let hi = la.entries.partition_point(|&p| p <= vp.end);
        let scale = plot_width / vp.span();
        ix.fold_runs(lo, hi.max(lo), mode, |i| {
            ((la.entries[i] - vp.start) * scale).floor().max(0.0) as u32
        })
    }

    /// What is under canvas point `(x, y)`: [`Layout::hit`] at this axis's
    /// positions.
    pub fn hit(
        &self,
        t: &Timeline,
        layout: &Layout,
        vp: &Viewport,
        mode: SizeView,
        x: f64,
        y: f64,
    ) -> Option<Hit> {
        if self.mode == AxisMode::Index {
            return layout.hit(t, vp, mode, x, y);
        }
        if x < layout.gutter || y < layout.axis {
            return None;
        }
        let stride = layout.lane_height() + layout.gap;
        let lane = ((y - layout.axis) / stride).floor() as usize;
        let la = self.lanes.get(lane)?;
        let dy = y - layout.lane_top(lane);
        if dy > layout.lane_height() {
            return None;
        }
        let pos = vp.index_at(x - layout.gutter, layout.plot_width());
        if dy < layout.band {
            let band = la.bands.iter().rposition(|&(a, b)| a <= pos && pos <= b)?;
            return Some(Hit::Band { lane, band });
        }
        let tol = 4.0 * vp.span() / layout.plot_width();
        let lo = la.entries.partition_point(|&p| p < pos - tol);
        let hi = la.entries.partition_point(|&p| p <= pos + tol);
        let l = t.lanes.get(lane)?;
        let mut best: Option<(f64, usize)> = None;
        for i in lo..hi.max(lo) {
            let d = (la.entries[i] - pos).abs();
            let sup = l.entries.get(i).is_some_and(|e| e.superseded);
            if best.is_none_or(|(bd, _)| d < bd || (d == bd && !sup)) {
                best = Some((d, i));
            }
        }
        best.map(|(_, entry)| Hit::Entry { lane, entry })
    }

    /// Width of one size bar in pixels.
    pub fn bar_width(&self, vp: &Viewport, plot_width: f64) -> f64 {
        match self.mode {
            AxisMode::Index => (plot_width / vp.span()).clamp(1.0, 12.0),
            AxisMode::Time => 2.0,
        }
    }

    /// The ticks of the visible range, about one per `spacing` pixels.
    pub fn ticks(&self, t: &Timeline, vp: &Viewport, plot_width: f64, spacing: f64) -> Vec<Tick> {
        let target = (plot_width / spacing).max(2.0);
        match self.mode {
            AxisMode::Index => index_ticks(t, vp, target),
            AxisMode::Time => time_ticks(vp.start, vp.end, target),
        }
    }

    /// The axis's two title lines (left of the ticks): what it measures, and
    /// the UTC day.
    pub fn titles(&self, vp: &Viewport) -> (String, String) {
        let day = self
            .time_at(vp.start.max(self.min))
            .filter(|_| !self.map.is_empty())
            .map_or("time".to_string(), time::utc_date);
        match self.mode {
            AxisMode::Index => ("log index".into(), format!("{day} UTC")),
            AxisMode::Time => ("UTC time".into(), day),
        }
    }
}

/// A "nice" step (1, 2, 5 × 10^k, at least 1) giving about `target` ticks
/// over `span`.
pub fn nice_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    let m = if n <= 1.0 {
        1.0
    } else if n <= 2.0 {
        2.0
    } else if n <= 5.0 {
        5.0
    } else {
        10.0
    };
    (m * mag).max(1.0)
}

fn index_ticks(t: &Timeline, vp: &Viewport, target: f64) -> Vec<Tick> {
    let step = nice_step(vp.span(), target);
    let mut out = Vec::new();
    // No index is negative; `+ 0.0` makes a -0 (a view starting just
    // below 0) a 0, which prints without its sign.
    let mut i = ((vp.start / step).ceil() * step).max(0.0) + 0.0;
    let mut last_date: Option<i64> = None;
    while i <= vp.end {
        let sub = t.date_at(i.max(0.0) as u64).map(|d| {
            let s = match last_date {
                Some(p) if !time::same_day(p, d) => {
                    format!(
                        "{} {}",
                        time::utc_date(d).get(5..).unwrap_or(""),
                        time::utc_clock(d)
                    )
                }
                _ => time::utc_clock(d),
            };
            last_date = Some(d);
            s
        });
        out.push(Tick {
            pos: i,
            label: format!("{i:.0}"),
            sub,
        });
        i += step;
    }
    out
}

/// Steps of the time axis, in ms.
const TIME_STEPS: [i64; 26] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000,
    120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000,
    86_400_000,
];

/// UTC clock ticks over `[start, end]` ms, about `target` of them, on
/// round times (multiples of the step since the epoch, so whole seconds,
/// minutes, hours, UTC days). Labels are `HH:MM:SS` (with `.mmm` below a
/// second, `HH:MM` from a minute, the date from a day); a tick on a later
/// UTC day than the one before it has the date under it.
pub fn time_ticks(start: f64, end: f64, target: f64) -> Vec<Tick> {
    if end <= start || !start.is_finite() || !end.is_finite() {
        return Vec::new();
    }
    let want = (end - start) / target.max(1.0);
    let step = TIME_STEPS
        .iter()
        .copied()
        .find(|&s| s as f64 >= want)
        .unwrap_or_else(|| ((want / 86_400_000.0).ceil() as i64).max(1) * 86_400_000);
    let mut ms = (start / step as f64).ceil() as i64 * step;
    let mut out = Vec::new();
    let mut last: Option<i64> = None;
    while (ms as f64) <= end && out.len() < 1000 {
        let label = if step >= 86_400_000 {
            time::utc_date(ms)
        } else if step >= 60_000 {
            time::utc_clock(ms)[..5].to_string()
        } else if step >= 1000 {
            time::utc_clock(ms)
        } else {
            format!("{}.{:03}", time::utc_clock(ms), ms.rem_euclid(1000))
        };
        let sub = match last {
            Some(p) if !time::same_day(p, ms) && step < 86_400_000 => Some(time::utc_date(ms)),
            _ => None,
        };
        last = Some(ms);
        out.push(Tick {
            pos: ms as f64,
            label,
            sub,
        });
        ms += step;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClusterInfo, CommitPoint, Entry, LaneSummary, Marker, Sizes, TermBand};

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

    #[test]
    fn records_without_a_date_sit_between_their_dated_neighbours() {
        let c = RecordClock::from_points([(2, 1000), (6, 2000), (7, 1500), (10, 4000)]);
        assert_eq!(c.at(2), Some(1000.0));
        assert_eq!(c.at(4), Some(1500.0));
        // A clock stepped back keeps the file's order.
        assert_eq!(c.at(7), Some(2000.0));
        assert_eq!(c.at(0), Some(1000.0));
        assert_eq!(c.at(99), Some(4000.0));
        assert_eq!(RecordClock::default().at(3), None);
    }

    fn entry(index: u64, term: u64, record: u32, date: Option<i64>) -> Entry {
        Entry {
            index,
            term,
            record,
            offset: record as u64 * 100,
            has_data: date.is_some(),
            superseded: false,
            eid: None,
            comment: None,
            date_ms: date,
            tables: 0,
            rows: 0,
            sizes: Sizes {
                stored: 100,
                full: None,
                diff: None,
            },
            servers: None,
            election_timer: None,
        }
    }

    /// A lane: records 0 header, 1 entry 1 (t1, 10 s), 2 vote t2, 3 leader
    /// t2, 4 entry 2 (t2, no date), 5 commit 2, 6 entry 3 (t2, 20 s),
    /// 7 vote t3, 8 entry 4 (t3, 40 s).
    fn lane() -> Lane {
        Lane {
            name: "s1.db".into(),
            summary: LaneSummary {
                commit_index: Some(3),
                ..Default::default()
            },
            clustered: true,
            snapshot_index: 1,
            entries: vec![
                entry(1, 1, 1, Some(10_000)),
                entry(2, 2, 4, None),
                entry(3, 2, 6, Some(20_000)),
                entry(4, 3, 8, Some(40_000)),
            ],
            monotonic: true,
            bands: vec![
                TermBand {
                    term: 1,
                    start: 1,
                    end: 1,
                    leader: None,
                    vote: None,
                },
                TermBand {
                    term: 2,
                    start: 2,
                    end: 3,
                    leader: Some("aaaa".into()),
                    vote: Some("aaaa".into()),
                },
                TermBand {
                    term: 3,
                    start: 4,
                    end: 4,
                    leader: None,
                    vote: Some("bbbb".into()),
                },
            ],
            commits: vec![CommitPoint {
                record: 5,
                at_index: 2,
                commit_index: 2,
            }],
            markers: vec![
                Marker {
                    index: 1,
                    record: 2,
                    kind: MarkerKind::Vote {
                        term: 2,
                        sid: "aaaa".into(),
                    },
                },
                Marker {
                    index: 1,
                    record: 3,
                    kind: MarkerKind::Leader {
                        term: 2,
                        sid: "aaaa".into(),
                    },
                },
                Marker {
                    index: 3,
                    record: 7,
                    kind: MarkerKind::Vote {
                        term: 3,
                        sid: "bbbb".into(),
                    },
                },
            ],
            base_bytes: 0,
            truncated: None,
        }
    }

    fn timeline() -> Timeline {
        Timeline {
            lanes: vec![lane()],
            min_index: 1,
            max_index: 4,
            cluster: ClusterInfo::default(),
        }
    }

    #[test]
    fn the_index_axis_places_everything_by_index() {
        let t = timeline();
        let ax = Axis::new(&t, AxisMode::Index, Some((0, 99_000)));
        assert_eq!(ax.mode, AxisMode::Index);
        assert_eq!((ax.min, ax.max), (0.5, 4.5));
        let la = &ax.lanes[0];
        assert_eq!(la.entries, vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(la.bands[1], (1.5, 3.5));
        assert_eq!(la.commits, vec![2.0]);
        // Log times go through the dated entries: 15 s is between 1 and 3.
        assert_eq!(ax.at_time(15_000), Some(2.0));
        assert_eq!(ax.place(Some(3), Some(40_000)), Some(3.0));
    }

    #[test]
    fn the_time_axis_places_entries_by_date_and_the_rest_between() {
        let t = timeline();
        let ax = Axis::new(&t, AxisMode::Time, Some((5_000, 45_000)));
        assert_eq!(ax.mode, AxisMode::Time);
        let la = &ax.lanes[0];
        // Entry 2 (record 4, no date) between records 1 (10 s) and 6 (20 s).
        assert_eq!(la.entries, vec![10_000.0, 16_000.0, 20_000.0, 40_000.0]);
        // Vote and leader of term 2 (records 2, 3); vote of term 3 (record 7).
        assert_eq!(la.markers, vec![12_000.0, 14_000.0, 30_000.0]);
        // The commit-index record 5 at its own time, not at index 2's.
        assert_eq!(la.commits, vec![18_000.0]);
        // Bands: term 1 from its entry, term 2 from its vote, term 3 from
        // its vote to the end of the file.
        assert_eq!(
            la.bands,
            vec![
                (10_000.0, 12_000.0),
                (12_000.0, 30_000.0),
                (30_000.0, 40_000.0)
            ]
        );
        assert_eq!(la.committed, Some((10_000.0, 20_000.0)));
        // The axis spans the logs too, with a margin.
        assert!(ax.min < 5_000.0 && ax.max > 45_000.0);
        assert_eq!(ax.at_time(33_000), Some(33_000.0));
        // A finding known by index only goes through the dates.
        assert_eq!(ax.place(Some(2), None), Some(15_000.0));
        assert_eq!(ax.place(Some(2), Some(17_000)), Some(17_000.0));
    }

    #[test]
    fn later_times_are_further_right_and_hit_testing_follows_positions() {
        let t = timeline();
        let ax = Axis::new(&t, AxisMode::Time, None);
        let vp = ax.viewport();
        let layout = Layout::new(1120.0);
        let pw = layout.plot_width();
        let x = |ms: f64| layout.gutter + vp.x_of(ms, pw);
        assert!(x(20_000.0) > x(10_000.0));
        // The band row at 25 s is term 2; the tick row at entry 4's date is entry 4.
        let band_y = layout.lane_top(0) + 2.0;
        let tick_y = band_y + layout.band + 4.0;
        assert_eq!(
            ax.hit(&t, &layout, &vp, SizeView::Stored, x(25_000.0), band_y),
            Some(Hit::Band { lane: 0, band: 1 })
        );
        assert_eq!(
            ax.hit(&t, &layout, &vp, SizeView::Stored, x(40_000.0), tick_y),
            Some(Hit::Entry { lane: 0, entry: 3 })
        );
        assert_eq!(
            ax.hit(&t, &layout, &vp, SizeView::Stored, x(30_000.0), tick_y),
            None
        );
        let ix = LaneIndex::new(&t.lanes[0]);
        let cols = ax.columns(0, &ix, &vp, pw, SizeView::Stored);
        assert_eq!(cols.len(), 4);
        assert!(cols.windows(2).all(|w| w[0].x < w[1].x));
    }

    #[test]
    fn switching_modes_keeps_the_visible_times() {
        let t = timeline();
        let ix = Axis::new(&t, AxisMode::Index, None);
        let tm = Axis::new(&t, AxisMode::Time, None);
        // Everything visible stays everything visible, both ways.
        assert_eq!(tm.convert(&ix, &ix.viewport()), tm.viewport());
        assert_eq!(ix.convert(&tm, &tm.viewport()), ix.viewport());
        // Indexes 1..3 are 10 s..20 s.
        let mut vp = ix.viewport();
        vp.start = 1.0;
        vp.end = 3.0;
        let v = tm.convert(&ix, &vp);
        assert_eq!((v.start, v.end), (10_000.0, 20_000.0));
        // Back on the index axis: at least four indexes wide (all of them
        // here), around the same centre.
        let back = ix.convert(&tm, &v);
        assert_eq!((back.start, back.end), (0.5, 4.5));
        let mut narrow = tm.viewport();
        narrow.start = 10_000.0;
        narrow.end = 10_100.0;
        let v = ix.convert(&tm, &narrow);
        assert!((v.end - v.start - 4.0).abs() < 1e-9, "{v:?}");
        // No dates at all: the time axis is the index axis.
        let mut bare = timeline();
        for e in &mut bare.lanes[0].entries {
            e.date_ms = None;
        }
        assert!(!Axis::has_time(&bare));
        assert_eq!(Axis::new(&bare, AxisMode::Time, None).mode, AxisMode::Index);
    }

    #[test]
    fn index_ticks_of_a_view_starting_below_zero_read_0_not_minus_0() {
        let t = timeline();
        let vp = Viewport {
            start: -0.5,
            end: 3.5,
            min: -0.5,
            max: 3.5,
        };
        let ticks = Axis::new(&t, AxisMode::Index, None).ticks(&t, &vp, 1000.0, 250.0);
        let labels: Vec<&str> = ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels.first(), Some(&"0"), "{labels:?}");
        assert!(labels.iter().all(|l| !l.starts_with('-')), "{labels:?}");
    }

    #[test]
    fn rebound_keeps_a_zoomed_view() {
        let t = timeline();
        let a = Axis::new(&t, AxisMode::Time, None);
        let b = Axis::new(&t, AxisMode::Time, Some((0, 90_000)));
        assert_eq!(b.rebound(&a.viewport()), b.viewport());
        let mut vp = a.viewport();
        vp.start = 12_000.0;
        vp.end = 14_000.0;
        let v = b.rebound(&vp);
        assert_eq!(
            (v.start, v.end, v.min, v.max),
            (12_000.0, 14_000.0, b.min, b.max)
        );
    }

    #[test]
    fn time_ticks_fall_on_round_utc_times() {
        // 2026-11-30 21:14:18.237 .. +25 s, ~6 ticks: every 5 s.
        let t0 = 1_796_073_258_237.0;
        let ticks = time_ticks(t0, t0 + 25_000.0, 6.0);
        let labels: Vec<&str> = ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(
            labels,
            vec!["21:14:20", "21:14:25", "21:14:30", "21:14:35", "21:14:40"]
        );
        assert!(ticks
            .iter()
            .all(|t| t.pos as i64 % 5000 == 0 && t.sub.is_none()));
        // Sub-second steps show milliseconds; minutes drop the seconds.
        assert_eq!(time_ticks(t0, t0 + 300.0, 3.0)[0].label, "21:14:18.300");
        assert_eq!(time_ticks(t0, t0 + 3_600_000.0, 6.0)[0].label, "21:20");
        // Crossing midnight puts the date under the first tick of the day.
        let mid = 1_796_083_200_000.0; // 2026-12-01 00:00:00
        let ticks = time_ticks(mid - 30_000.0, mid + 30_000.0, 4.0);
        let day = ticks.iter().find(|t| t.pos == mid).unwrap();
        assert_eq!(day.sub.as_deref(), Some("2026-12-01"));
        assert!(time_ticks(5.0, 5.0, 4.0).is_empty());
    }
}
