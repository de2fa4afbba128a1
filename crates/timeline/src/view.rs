//! Viewport (zoom/pan over the index axis), lane layout in pixels,
//! hit-testing and per-pixel-column aggregation of entry sizes.

use crate::model::{Entry, Lane, StorageMode, Timeline};

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

    /// Lane and row under pixel `(x, y)` (canvas coordinates).
    pub fn hit(
        &self,
        t: &Timeline,
        vp: &Viewport,
        mode: StorageMode,
        x: f64,
        y: f64,
    ) -> Option<Hit> {
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
    pub fn columns(&self, vp: &Viewport, plot_width: f64, mode: StorageMode) -> Vec<Column> {
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
