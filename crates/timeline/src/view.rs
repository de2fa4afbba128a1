//! Viewport (zoom/pan over the index axis), lane layout in pixels,
//! hit-testing and per-pixel-column aggregation of entry sizes.

use crate::model::{Entry, Lane, SizeView, Timeline};

/// The visible index range `[start, end]` within `[min, max]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub start: f64,
    pub end: f64,
    pub min: f64,
    pub max: f64,
}

/// Narrowest visible range, in indexes.
const MIN_SPAN: f64 = 4.0;

impl Viewport {
    /// A viewport showing all of `[min, max]` (with half an index of margin).
    pub fn new(min: u64, max: u64) -> Viewport {
        let min = min as f64 - 0.5;
        let max = (max as f64 + 0.5).max(min + MIN_SPAN);
        Viewport {
            start: min,
            end: max,
            min,
            max,
        }
    }

    pub fn for_timeline(t: &Timeline) -> Viewport {
        Viewport::new(t.min_index, t.max_index)
    }

    pub fn span(&self) -> f64 {
        self.end - self.start
    }

    /// Zoom level relative to the whole range (1 = everything visible).
    pub fn zoom_level(&self) -> f64 {
        (self.max - self.min) / self.span()
    }

    pub fn reset(&mut self) {
        self.start = self.min;
        self.end = self.max;
    }

    /// Zooms by `factor` (> 1 zooms in) keeping the point at fraction
    /// `anchor` (0 = left edge, 1 = right edge) fixed.
    pub fn zoom(&mut self, factor: f64, anchor: f64) {
        if !factor.is_finite() || factor <= 0.0 {
            return;
        }
        let anchor = anchor.clamp(0.0, 1.0);
        let full = self.max - self.min;
        let span = (self.span() / factor).clamp(MIN_SPAN.min(full), full);
        let pivot = self.start + anchor * self.span();
        self.start = pivot - anchor * span;
        self.end = self.start + span;
        self.clamp();
    }

    /// Sets the zoom level (1 = everything) around the current centre.
    pub fn set_zoom_level(&mut self, level: f64, center: f64) {
        let full = self.max - self.min;
        let level = if level.is_finite() && level >= 1.0 {
            level
        } else {
            1.0
        };
        let span = (full / level).clamp(MIN_SPAN.min(full), full);
        self.start = center - span / 2.0;
        self.end = self.start + span;
        self.clamp();
    }

    pub fn center(&self) -> f64 {
        (self.start + self.end) / 2.0
    }

    /// Pans by `fraction` of the visible span (positive = later indexes).
    pub fn pan(&mut self, fraction: f64) {
        if !fraction.is_finite() {
            return;
        }
        let d = fraction * self.span();
        self.start += d;
        self.end += d;
        self.clamp();
    }

    fn clamp(&mut self) {
        let span = self.span();
        if self.start < self.min {
            self.start = self.min;
            self.end = self.min + span;
        }
        if self.end > self.max {
            self.end = self.max;
            self.start = (self.max - span).max(self.min);
        }
    }

    /// Pixel x (within a plot of `width` px) of `index`.
    pub fn x_of(&self, index: f64, width: f64) -> f64 {
        (index - self.start) / self.span() * width
    }

    /// Index at pixel x.
    pub fn index_at(&self, x: f64, width: f64) -> f64 {
        self.start + x / width.max(1.0) * self.span()
    }
}

/// Pixel geometry of the timeline canvas.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    pub width: f64,
    /// Left gutter for lane labels.
    pub gutter: f64,
    /// Axis height at the top.
    pub axis: f64,
    /// Height of the term band row of a lane.
    pub band: f64,
    /// Height of the entry tick row.
    pub ticks: f64,
    /// Height of the size bars / cumulative line area.
    pub sizes: f64,
    /// Space between lanes.
    pub gap: f64,
}

/// What the pointer is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hit {
    /// Entry `entry` of lane `lane`.
    Entry { lane: usize, entry: usize },
    /// The term band of lane `lane` at band `band`.
    Band { lane: usize, band: usize },
}

/// One pixel column of aggregated entries: how many, the largest size, and
/// the entry to report on hover (the largest one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub x: u32,
    pub count: u32,
    pub max_bytes: u64,
    pub entry: usize,
}

impl Layout {
    pub fn new(width: f64) -> Layout {
        Layout {
            width,
            gutter: 120.0,
            axis: 34.0,
            band: 16.0,
            ticks: 22.0,
            sizes: 70.0,
            gap: 14.0,
        }
    }

    /// Width of the plot area (right of the gutter).
    pub fn plot_width(&self) -> f64 {
        (self.width - self.gutter).max(1.0)
    }

    pub fn lane_height(&self) -> f64 {
        self.band + self.ticks + self.sizes
    }

    /// Top y of lane `i`.
    pub fn lane_top(&self, i: usize) -> f64 {
        self.axis + i as f64 * (self.lane_height() + self.gap)
    }

    /// Total canvas height for `lanes` lanes.
    pub fn height(&self, lanes: usize) -> f64 {
        self.lane_top(lanes) + 8.0
    }

    /// The lane whose label (left of the plot) is under `(x, y)`.
    pub fn gutter_lane(&self, lanes: usize, x: f64, y: f64) -> Option<usize> {
        if x >= self.gutter || y < self.axis {
            return None;
        }
        let lane = ((y - self.axis) / (self.lane_height() + self.gap)) as usize;
        (lane < lanes && y - self.lane_top(lane) <= self.lane_height()).then_some(lane)
    }

    /// Lane and row under pixel `(x, y)` (canvas coordinates).
    pub fn hit(&self, t: &Timeline, vp: &Viewport, mode: SizeView, x: f64, y: f64) -> Option<Hit> {
        if x < self.gutter || y < self.axis {
            return None;
        }
        let stride = self.lane_height() + self.gap;
        let lane = ((y - self.axis) / stride).floor() as usize;
        let l = t.lanes.get(lane)?;
        let dy = y - self.lane_top(lane);
        if dy > self.lane_height() {
            return None;
        }
        let px = x - self.gutter;
        let index = vp.index_at(px, self.plot_width());
        if dy < self.band {
            let band = l.bands.iter().rposition(|b| {
                (b.start as f64 - 0.5) <= index && index <= b.end.max(b.start) as f64 + 0.5
            })?;
            return Some(Hit::Band { lane, band });
        }
        let _ = mode;
        // Nearest entry within 4 px.
        let tol = 4.0 * vp.span() / self.plot_width();
        let range = l.visible(index - tol, index + tol);
        let mut best: Option<(f64, usize)> = None;
        for i in range {
            let e: &Entry = &l.entries[i];
            let d = (e.index as f64 - index).abs();
            if d <= tol && best.is_none_or(|(bd, _)| d < bd || (d == bd && !e.superseded)) {
                best = Some((d, i));
            }
        }
        best.map(|(_, entry)| Hit::Entry { lane, entry })
    }
}

impl Lane {
    /// Entries in view aggregated per pixel column: with 100k entries on a
    /// 1000 px plot, drawing costs one bar per column, not per entry.
    pub fn columns(&self, vp: &Viewport, plot_width: f64, mode: SizeView) -> Vec<Column> {
        let mut out: Vec<Column> = Vec::new();
        for i in self.visible(vp.start, vp.end) {
            let e = &self.entries[i];
            let idx = e.index as f64;
            if idx < vp.start || idx > vp.end {
                continue;
            }
            let x = vp.x_of(idx, plot_width).floor().max(0.0) as u32;
            let bytes = e.sizes.or_stored(mode);
            match out.last_mut() {
                Some(c) if c.x == x => {
                    c.count += 1;
                    if bytes > c.max_bytes {
                        c.max_bytes = bytes;
                        c.entry = i;
                    }
                }
                _ => out.push(Column {
                    x,
                    count: 1,
                    max_bytes: bytes,
                    entry: i,
                }),
            }
        }
        if !self.monotonic {
            out.sort_by_key(|c| c.x);
            out.dedup_by(|b, a| {
                if a.x == b.x {
                    a.count += b.count;
                    if b.max_bytes > a.max_bytes {
                        a.max_bytes = b.max_bytes;
                        a.entry = b.entry;
                    }
                    true
                } else {
                    false
                }
            });
        }
        out
    }
}

/// A compact, cache-friendly copy of a lane's entries for drawing: indexes,
/// sizes per mode and cumulative sizes per mode, precomputed once. Drawing
/// 100k entries touches a few arrays of integers instead of the entries.
#[derive(Clone, Debug, PartialEq)]
pub struct LaneIndex {
    /// Entry log indexes, in `Lane::entries` order.
    pub index: Vec<u64>,
    /// Size of each entry in each mode (stored, full, diff), as in
    /// `Sizes::or_stored`.
    pub size: [Vec<u32>; 3],
    /// Cumulative file size after each entry, per mode (`Lane::cumulative`).
    pub cumulative: [Vec<u64>; 3],
    /// The largest of `cumulative`, per mode (the line's scale: a frame
    /// must not fold a million entries to find it).
    cumulative_max: [u64; 3],
    /// Largest entry per mode.
    pub max_size: [u64; 3],
    /// Bit 0: has data; bit 1: superseded.
    pub flags: Vec<u8>,
    monotonic: bool,
    /// The largest entry and the flags of any run of entries, per mode.
    ranges: [RangeMax; 3],
}

/// Entries per block of [`RangeMax`].
const BLOCK: usize = 32;

/// The largest entry of any run of entries (the first of equals, as
/// [`fold_column`] keeps it) and the OR of their flags, in time that does
/// not grow with the run: blocks of [`BLOCK`] entries, and a sparse table
/// over the blocks (level k: the best of 2^k blocks from each one). A
/// pixel column that holds thousands of entries then costs two short
/// scans and two lookups, so a frame's work is set by its pixels, not by
/// the entries in view. 4 bytes per block and level: about 2 bytes an
/// entry at 1M entries.
#[derive(Clone, Debug, PartialEq, Default)]
struct RangeMax {
    /// `best[k][b]`: the largest entry of blocks `b .. b + 2^k`.
    best: Vec<Vec<u32>>,
    /// `any[k][b]`: the OR of their flags.
    any: Vec<Vec<u8>>,
}

/// The better of entries `a` and `b`: the larger, the first of equals.
fn better(sizes: &[u32], a: u32, b: u32) -> u32 {
    let (sa, sb) = (sizes[a as usize], sizes[b as usize]);
    if sb > sa || (sb == sa && b < a) {
        b
    } else {
        a
    }
}

impl RangeMax {
    fn new(sizes: &[u32], flags: &[u8]) -> RangeMax {
        let n = sizes.len() / BLOCK;
        let mut best = vec![Vec::with_capacity(n)];
        let mut any = vec![Vec::with_capacity(n)];
        for b in 0..n {
            let r = b * BLOCK..(b + 1) * BLOCK;
            best[0].push(
                r.clone()
                    .fold(r.start as u32, |m, i| better(sizes, m, i as u32)),
            );
            any[0].push(flags[r].iter().fold(0, |a, f| a | f));
        }
        let mut k = 1;
        while (1usize << k) <= n {
            let half = 1usize << (k - 1);
            let (pb, pa) = (&best[k - 1], &any[k - 1]);
            let nb = (0..=n - (1 << k))
                .map(|b| better(sizes, pb[b], pb[b + half]))
                .collect();
            let na = (0..=n - (1 << k)).map(|b| pa[b] | pa[b + half]).collect();
            best.push(nb);
            any.push(na);
            k += 1;
        }
        RangeMax { best, any }
    }

    /// The largest entry of `lo..=hi` and the OR of their flags.
    fn query(&self, sizes: &[u32], flags: &[u8], lo: usize, hi: usize) -> (u32, u8) {
        let scan = |a: usize, b: usize, (m, f): (u32, u8)| {
            (a..b).fold((m, f), |(m, f), i| {
                (better(sizes, m, i as u32), f | flags[i])
            })
        };
        let (bl, br) = (lo.div_ceil(BLOCK), (hi + 1) / BLOCK);
        if bl >= br {
            return scan(lo + 1, hi + 1, (lo as u32, flags[lo]));
        }
        let acc = scan(lo + 1, bl * BLOCK, (lo as u32, flags[lo]));
        let k = (br - bl).ilog2() as usize;
        let (x, y) = (bl, br - (1 << k));
        let m = better(
            sizes,
            acc.0,
            better(sizes, self.best[k][x], self.best[k][y]),
        );
        let f = acc.1 | self.any[k][x] | self.any[k][y];
        scan(br * BLOCK, hi + 1, (m, f))
    }
}

/// One pixel column of the compact index: entries `first..=last` fall in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelColumn {
    pub x: u32,
    pub first: u32,
    pub last: u32,
    /// Largest entry size in the column (in the requested mode).
    pub max_bytes: u64,
    /// Entry with the largest size.
    pub entry: u32,
    /// Any entry with data / any superseded entry in the column.
    pub any_data: bool,
    pub any_superseded: bool,
}

fn mode_slot(mode: SizeView) -> usize {
    match mode {
        SizeView::Stored => 0,
        SizeView::Full => 1,
        SizeView::Diff => 2,
    }
}

impl LaneIndex {
    pub fn new(lane: &Lane) -> LaneIndex {
        let n = lane.entries.len();
        let mut size: [Vec<u32>; 3] = [
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        ];
        let mut max_size = [0u64; 3];
        for e in &lane.entries {
            for m in SizeView::ALL {
                let s = e.sizes.or_stored(m);
                let k = mode_slot(m);
                size[k].push(s.min(u32::MAX as u64) as u32);
                max_size[k] = max_size[k].max(s);
            }
        }
        let flags: Vec<u8> = lane
            .entries
            .iter()
            .map(|e| u8::from(e.has_data) | (u8::from(e.superseded) << 1))
            .collect();
        let ranges = [0, 1, 2].map(|k| RangeMax::new(&size[k], &flags));
        let cumulative = SizeView::ALL.map(|m| lane.cumulative(m));
        LaneIndex {
            index: lane.entries.iter().map(|e| e.index).collect(),
            cumulative_max: [0, 1, 2].map(|k| cumulative[k].iter().copied().max().unwrap_or(0)),
            cumulative,
            size,
            max_size,
            flags,
            monotonic: lane.monotonic,
            ranges,
        }
    }

    /// Entries `lo..hi` (in position order) grouped per pixel column,
    /// `x_of(i)` giving entry i's column (never decreasing over i): one
    /// column per run of equal x, each found by a binary search and
    /// summed up by a range query.
    pub(crate) fn fold_runs(
        &self,
        lo: usize,
        hi: usize,
        mode: SizeView,
        x_of: impl Fn(usize) -> u32,
    ) -> Vec<PixelColumn> {
        let k = mode_slot(mode);
        let (sizes, flags) = (&self.size[k], &self.flags);
        let mut out = Vec::new();
        let mut i = lo;
        // Entries in the last column: where the next one likely ends.
        let mut width = 1;
        while i < hi {
            let x = x_of(i);
            // The first entry past column x (x_of never decreases): a
            // search that starts from the last column's width and doubles,
            // then halves, so that it reads only entries near `i` (a
            // search over all of `i..hi` misses the cache at every step
            // on a lane of a million entries).
            let (mut a, mut b) = (i + 1, hi);
            let mut step = width;
            while a < b {
                let probe = i.saturating_add(step);
                if probe >= b {
                    break;
                }
                if x_of(probe) <= x {
                    a = probe + 1;
                    step = step.saturating_mul(2);
                } else {
                    b = probe;
                    // Most columns hold as many entries as the last one.
                    if b > a && x_of(b - 1) <= x {
                        a = b;
                    }
                    break;
                }
            }
            while a < b {
                let mid = a + (b - a) / 2;
                if x_of(mid) <= x {
                    a = mid + 1;
                } else {
                    b = mid;
                }
            }
            let (entry, any) = self.ranges[k].query(sizes, flags, i, a - 1);
            out.push(PixelColumn {
                x,
                first: i as u32,
                last: (a - 1) as u32,
                max_bytes: u64::from(sizes[entry as usize]),
                entry,
                any_data: any & 1 != 0,
                any_superseded: any & 2 != 0,
            });
            width = a - i;
            i = a;
        }
        out
    }

    pub fn cumulative(&self, mode: SizeView) -> &[u64] {
        &self.cumulative[mode_slot(mode)]
    }

    /// The largest cumulative size in `mode` (None without entries).
    pub fn cumulative_max(&self, mode: SizeView) -> Option<u64> {
        let k = mode_slot(mode);
        (!self.cumulative[k].is_empty()).then_some(self.cumulative_max[k])
    }

    pub fn max_size(&self, mode: SizeView) -> u64 {
        self.max_size[mode_slot(mode)]
    }

    /// Entries in view grouped per pixel column (x in `0..plot_width`).
    pub fn columns(&self, vp: &Viewport, plot_width: f64, mode: SizeView) -> Vec<PixelColumn> {
        if self.monotonic {
            let lo = self.index.partition_point(|&i| (i as f64) < vp.start);
            let hi = self.index.partition_point(|&i| (i as f64) <= vp.end);
            let scale = plot_width / vp.span();
            return self.fold_runs(lo, hi.max(lo), mode, |i| {
                ((self.index[i] as f64 - vp.start) * scale).floor().max(0.0) as u32
            });
        }
        let sizes = &self.size[mode_slot(mode)];
        let mut out: Vec<PixelColumn> = Vec::new();
        let mut push =
            |x: u32, i: usize| fold_column(&mut out, x, i, sizes[i] as u64, self.flags[i]);
        {
            let mut order: Vec<usize> = (0..self.index.len())
                .filter(|&i| {
                    let v = self.index[i] as f64;
                    v >= vp.start && v <= vp.end
                })
                .collect();
            // The one stable sort (`ovsdb::order`): only lanes whose
            // indexes go back (replaced entries) sort here.
            ovsdb::order::sort_indices(&mut order, &|a, b| self.index[a].cmp(&self.index[b]));
            for i in order {
                push(
                    vp.x_of(self.index[i] as f64, plot_width).floor().max(0.0) as u32,
                    i,
                );
            }
        }
        out
    }
}

/// Adds entry `i` (its size in the shown mode and its flags: 1 = carries
/// data, 2 = superseded) to the pixel column at `x`: the last column of
/// `out` when it is that column, else a new one.
pub(crate) fn fold_column(out: &mut Vec<PixelColumn>, x: u32, i: usize, size: u64, flags: u8) {
    match out.last_mut() {
        Some(c) if c.x == x => {
            c.last = i as u32;
            if size > c.max_bytes {
                c.max_bytes = size;
                c.entry = i as u32;
            }
            c.any_data |= flags & 1 != 0;
            c.any_superseded |= flags & 2 != 0;
        }
        _ => out.push(PixelColumn {
            x,
            first: i as u32,
            last: i as u32,
            max_bytes: size,
            entry: i as u32,
            any_data: flags & 1 != 0,
            any_superseded: flags & 2 != 0,
        }),
    }
}

/// Shorter forms of lane `i`'s name, longest first, for a label column too
/// narrow for the whole path. Files from archives and folders have names
/// that start with what every lane shares (`cluster.tar.gz/s1/var/lib/ovn/
/// etc/ovnnb_db.db`): the forms keep the folder where this name parts from
/// the others' with the file name (`s1/…/ovnnb_db.db`), then that folder
/// (`s1/…`), then the file name (`…/ovnnb_db.db`). Names that differ only
/// in the file name (or a lane alone) keep their end: `…/etc/ovnnb_db.db`,
/// `…/ovnnb_db.db`. The caller draws the first that fits; the page draws
/// a folder form that would leave out the file name as two lines, the
/// folder (`s1/…`) over the file name (`…/ovnnb_db.db`).
pub fn short_names(names: &[&str], i: usize) -> Vec<String> {
    let name = names[i];
    let mut out = vec![name.to_string()];
    let Some(f) = name.rfind('/') else {
        return out;
    };
    let file = &name[f + 1..];
    // The component where this name parts from the closest other one: it
    // starts after the last '/' of the bytes they share.
    let shared = names
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .map(|(_, o)| {
            name.bytes()
                .zip(o.bytes())
                .take_while(|(x, y)| x == y)
                .count()
        })
        .max();
    let at = shared.and_then(|c| {
        let start = name.as_bytes()[..c]
            .iter()
            .rposition(|&b| b == b'/')
            .map_or(0, |k| k + 1);
        let end = start + name[start..].find('/')?;
        Some((&name[start..end], end == f))
    });
    match at {
        Some((at, next)) => {
            out.push([at, if next { "/" } else { "/…/" }, file].concat());
            out.push([at, "/…"].concat());
        }
        None => {
            if let Some(p) = name[..f].rfind('/') {
                out.push(["…", &name[p..]].concat());
            }
        }
    }
    out.push(["…/", file].concat());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_keep_what_tells_lanes_apart_and_the_file_name() {
        let names = [
            "cluster.tar.gz/s1/var/lib/ovn/etc/ovnnb_db.db",
            "cluster.tar.gz/s2/var/lib/ovn/etc/ovnnb_db.db",
        ];
        assert_eq!(
            short_names(&names, 1),
            [names[1], "s2/…/ovnnb_db.db", "s2/…", "…/ovnnb_db.db"]
        );
        let names = ["dir/a/s1.db", "dir/a/s2.db"];
        assert_eq!(
            short_names(&names, 0),
            ["dir/a/s1.db", "…/a/s1.db", "…/s1.db"]
        );
        assert_eq!(short_names(&["x/s1.db"], 0), ["x/s1.db", "…/s1.db"]);
        assert_eq!(short_names(&["s1.db", "s2.db"], 0), ["s1.db"]);
        // A folder right above the file: no ellipsis between them.
        assert_eq!(short_names(&["t/a/x.db", "t/b/x.db"], 0)[1], "a/x.db");
    }

    #[test]
    fn gutter_lane_is_the_label_under_the_pointer() {
        let l = Layout::new(800.0);
        let mid = |i| l.lane_top(i) + 10.0;
        assert_eq!(l.gutter_lane(2, 5.0, mid(1)), Some(1));
        assert_eq!(l.gutter_lane(2, 5.0, mid(2)), None);
        assert_eq!(l.gutter_lane(2, l.gutter + 1.0, mid(0)), None);
        assert_eq!(l.gutter_lane(2, 5.0, l.axis - 1.0), None);
        assert_eq!(l.gutter_lane(2, 5.0, l.lane_top(1) - l.gap / 2.0), None);
    }

    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// A lane index of `n` entries at indexes 1.. with random sizes (few
    /// distinct values, so ties are common) and flags.
    fn index(n: usize, seed: &mut u64) -> LaneIndex {
        let size: [Vec<u32>; 3] =
            [0, 1, 2].map(|_| (0..n).map(|_| (rng(seed) % 7) as u32 * 100).collect());
        let flags: Vec<u8> = (0..n).map(|_| (rng(seed) % 4) as u8).collect();
        let ranges = [0, 1, 2].map(|k| RangeMax::new(&size[k], &flags));
        LaneIndex {
            index: (1..=n as u64).collect(),
            cumulative: Default::default(),
            cumulative_max: [0; 3],
            max_size: [0; 3],
            size,
            flags,
            monotonic: true,
            ranges,
        }
    }

    /// The columns by folding every entry in view, one by one.
    fn linear(ix: &LaneIndex, vp: &Viewport, width: f64, mode: SizeView) -> Vec<PixelColumn> {
        let sizes = &ix.size[mode_slot(mode)];
        let lo = ix.index.partition_point(|&i| (i as f64) < vp.start);
        let hi = ix.index.partition_point(|&i| (i as f64) <= vp.end);
        let scale = width / vp.span();
        let mut out = Vec::new();
        for (i, (&at, &size)) in ix.index.iter().zip(sizes).enumerate().take(hi).skip(lo) {
            let x = ((at as f64 - vp.start) * scale).floor().max(0.0) as u32;
            fold_column(&mut out, x, i, size as u64, ix.flags[i]);
        }
        out
    }

    #[test]
    fn range_queries_give_the_columns_of_the_entry_by_entry_fold() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        let mut columns = 0;
        for n in [1, 2, 31, 32, 33, 64, 100, 1000, 5000, 40_000] {
            let ix = index(n, &mut seed);
            for _ in 0..20 {
                let a = (rng(&mut seed) % n as u64) as f64 + 0.5;
                let b = a + (rng(&mut seed) % (n as u64 + 1)) as f64;
                let vp = Viewport {
                    start: a,
                    end: b.max(a + 1.0),
                    min: 0.0,
                    max: n as f64 + 1.0,
                };
                let width = [7.0, 333.0, 1280.0, 9000.0][(rng(&mut seed) % 4) as usize];
                for mode in SizeView::ALL {
                    let want = linear(&ix, &vp, width, mode);
                    assert_eq!(ix.columns(&vp, width, mode), want, "n {n} {vp:?} {width}");
                    columns += want.len();
                }
            }
        }
        assert!(columns > 10_000, "{columns}");
    }

    /// Columns of very uneven widths (a time axis: bursts of entries, then
    /// gaps), where the search from the last column's width overshoots and
    /// undershoots: the same columns as the entry-by-entry fold.
    #[test]
    fn uneven_columns_give_the_columns_of_the_entry_by_entry_fold() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for n in [1, 2, 33, 500, 20_000] {
            let ix = index(n, &mut seed);
            for _ in 0..20 {
                // Non-decreasing columns with runs of 1 to ~2 000 entries.
                let mut x = 0u32;
                let mut xs = Vec::with_capacity(n);
                while xs.len() < n {
                    let run = 1 + (rng(&mut seed) % [3, 40, 2_000][(rng(&mut seed) % 3) as usize]);
                    for _ in 0..run.min((n - xs.len()) as u64) {
                        xs.push(x);
                    }
                    x += 1 + (rng(&mut seed) % 4) as u32;
                }
                let lo = (rng(&mut seed) % n as u64) as usize;
                let hi = lo + (rng(&mut seed) % (n - lo + 1) as u64) as usize;
                for mode in SizeView::ALL {
                    let sizes = &ix.size[mode_slot(mode)];
                    let mut want = Vec::new();
                    for i in lo..hi {
                        fold_column(&mut want, xs[i], i, sizes[i] as u64, ix.flags[i]);
                    }
                    assert_eq!(
                        ix.fold_runs(lo, hi, mode, |i| xs[i]),
                        want,
                        "n {n} {lo}..{hi}"
                    );
                }
            }
        }
    }
}
