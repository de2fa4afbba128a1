//! Draws the timeline view model on a 2D canvas. All geometry and hit-testing
//! come from `timeline::Layout`/`Viewport`; this module only paints.

use timeline::axis::{Axis, AxisMode};
use timeline::{LaneIndex, Layout, MarkerKind, SizeView, Timeline, Viewport};
use web_sys::CanvasRenderingContext2d as Ctx;

const TERM_COLORS: [&str; 8] = [
    "#cfe0fb", "#fde2c4", "#d5f0d2", "#f5d0e6", "#e3dcf7", "#fbf1b8", "#cdeef0", "#f3d6d0",
];
const INK: &str = "#1d2430";
const MUTED: &str = "#6b7482";
const GRID: &str = "#e6e9ee";
const DATA: &str = "#2456c9";
const NODATA: &str = "#9aa3b0";
const SUPERSEDED: &str = "#d23a3a";
const COMMIT: &str = "#1f9d55";
const CUMULATIVE: &str = "#c2410c";
/// Outline of what the hovered term links (bands and log events).
const LINK: &str = "#be123c";

fn term_color(term: u64) -> &'static str {
    TERM_COLORS[(term as usize) % TERM_COLORS.len()]
}

pub fn human_bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / 1024.0 / 1024.0)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

pub fn short_sid(sid: &str) -> &str {
    sid.get(..4).unwrap_or(sid)
}

/// What the page draws on the canvas besides the model: the axis, the
/// storage mode and the term to highlight (hovered band or log event).
pub struct Scene<'a> {
    pub t: &'a Timeline,
    pub index: &'a [LaneIndex],
    pub ax: &'a Axis,
    pub vp: &'a Viewport,
    pub layout: &'a Layout,
    pub mode: SizeView,
    pub highlight: Option<u64>,
}

/// What was drawn, for the page's test hooks: the tick labels and how many
/// term bands were highlighted.
#[derive(Default)]
pub struct Drawn {
    pub ticks: Vec<String>,
    pub highlighted_bands: usize,
}

/// Paints everything. `ratio` is the device pixel ratio.
pub fn draw(ctx: &Ctx, sc: &Scene, ratio: f64) -> Drawn {
    let Scene {
        t,
        index,
        ax,
        vp,
        layout,
        mode,
        highlight,
    } = *sc;
    let mut drawn = Drawn::default();
    let w = layout.width;
    let h = layout.height(t.lanes.len());
    let _ = ctx.set_transform(ratio, 0.0, 0.0, ratio, 0.0, 0.0);
    ctx.set_fill_style_str("#ffffff");
    ctx.fill_rect(0.0, 0.0, w, h);
    let pw = layout.plot_width();
    let gx = layout.gutter;
    let x_of = |i: f64| gx + vp.x_of(i, pw);

    // Axis: index ticks with the wall-clock time under them, or UTC time
    // ticks (the date under the first tick of a day).
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_text_baseline("alphabetic");
    for tick in ax.ticks(t, vp, pw, 90.0) {
        let x = x_of(tick.pos);
        ctx.set_stroke_style_str(GRID);
        ctx.begin_path();
        ctx.move_to(x, layout.axis - 4.0);
        ctx.line_to(x, h);
        ctx.stroke();
        ctx.set_fill_style_str(INK);
        let _ = ctx.fill_text(&tick.label, x + 2.0, layout.axis - 18.0);
        if let Some(sub) = &tick.sub {
            ctx.set_fill_style_str(MUTED);
            let _ = ctx.fill_text(sub, x + 2.0, layout.axis - 6.0);
        }
        drawn.ticks.push(tick.label);
    }
    ctx.set_fill_style_str("#ffffff");
    ctx.fill_rect(0.0, 0.0, gx - 1.0, layout.axis - 2.0);
    ctx.set_fill_style_str(MUTED);
    let (title, day) = ax.titles(vp);
    let _ = ctx.fill_text(&title, 6.0, layout.axis - 18.0);
    let _ = ctx.fill_text(&day, 6.0, layout.axis - 6.0);

    let no_lane = timeline::axis::LaneAxis::default();
    let names: Vec<&str> = t.lanes.iter().map(|l| l.name.as_str()).collect();
    for (li, lane) in t.lanes.iter().enumerate() {
        let la = ax.lanes.get(li).unwrap_or(&no_lane);
        let top = layout.lane_top(li);
        let band_y = top;
        let tick_y = top + layout.band;
        let size_y = tick_y + layout.ticks;

        // Gutter label.
        ctx.set_fill_style_str(INK);
        ctx.set_font("bold 12px system-ui, sans-serif");
        // The first short form of the name that fits the gutter (the
        // whole path is the label's tooltip). A name that parts from the
        // others in a folder (an archive's `s1/…/ovnnb_db.db`) and does
        // not fit with its file name takes two lines: that folder, then
        // the file name.
        let forms = timeline::view::short_names(&names, li);
        let first = forms
            .iter()
            .position(|f| ctx.measure_text(f).is_ok_and(|m| m.width() <= gx - 10.0))
            .unwrap_or(forms.len() - 1);
        let lines = if first > 1 && forms.len() == 4 {
            &forms[2..]
        } else {
            &forms[first..=first]
        };
        let mut y = top + 12.0;
        for line in lines {
            let _ = ctx.fill_text(line, 6.0, y);
            y += 14.0;
        }
        ctx.set_font("11px system-ui, sans-serif");
        ctx.set_fill_style_str(MUTED);
        if let Some(sid) = &lane.summary.server_id {
            let _ = ctx.fill_text(&format!("server {}", short_sid(sid)), 6.0, y);
        } else {
            let _ = ctx.fill_text(&lane.summary.format, 6.0, y);
        }
        if let Some(c) = lane.summary.commit_index {
            let _ = ctx.fill_text(&format!("commit {c}"), 6.0, y + 14.0);
        }
        let _ = ctx.fill_text(&human_bytes(lane.summary.bytes as f64), 6.0, y + 28.0);

        // Clip the plot area of this lane.
        ctx.save();
        ctx.begin_path();
        ctx.rect(gx, top, pw, layout.lane_height());
        ctx.clip();

        // Term bands, with leader (▲) and vote (●) marks.
        for (b, &(p0, p1)) in lane.bands.iter().zip(&la.bands) {
            let x0 = x_of(p0);
            let x1 = x_of(p1);
            if x1 < gx || x0 > gx + pw {
                continue;
            }
            ctx.set_fill_style_str(term_color(b.term));
            ctx.fill_rect(x0, band_y, (x1 - x0).max(1.0), layout.band);
            if highlight == Some(b.term) {
                drawn.highlighted_bands += 1;
                ctx.set_stroke_style_str(LINK);
                ctx.set_line_width(2.5);
                ctx.stroke_rect(
                    x0 + 1.0,
                    band_y + 1.0,
                    (x1 - x0 - 2.0).max(1.0),
                    layout.band - 2.0,
                );
                ctx.set_line_width(1.0);
            }
            if x1 - x0 > 60.0 {
                ctx.set_fill_style_str(INK);
                let mut label = format!("term {}", b.term);
                if let Some(l) = &b.leader {
                    label.push_str(" · leader ");
                    label.push_str(short_sid(l));
                }
                let _ = ctx.fill_text(&label, x0.max(gx) + 4.0, band_y + 12.0);
            }
        }
        for (m, &p) in lane.markers.iter().zip(&la.markers) {
            let x = x_of(p);
            match &m.kind {
                MarkerKind::Leader { .. } => {
                    ctx.set_fill_style_str(INK);
                    ctx.begin_path();
                    ctx.move_to(x - 4.0, band_y + layout.band);
                    ctx.line_to(x + 4.0, band_y + layout.band);
                    ctx.line_to(x, band_y + layout.band - 7.0);
                    ctx.close_path();
                    ctx.fill();
                }
                MarkerKind::Vote { .. } => {
                    ctx.set_fill_style_str("#7c3aed");
                    ctx.begin_path();
                    let _ = ctx.arc(x, band_y + 4.0, 3.0, 0.0, std::f64::consts::TAU);
                    ctx.fill();
                }
                _ => {}
            }
        }

        // Entry ticks (aggregated per pixel column) and commit progress.
        let Some(ix) = index.get(li) else { continue };
        let cols = ax.columns(li, ix, vp, pw, mode);
        // One rectangle per run of neighbouring columns of one kind: a
        // zoomed-out lane of a million entries has an entry in every
        // column, and each canvas call costs more than the fold.
        let mut run: Option<(usize, u32, u32)> = None;
        let ends = cols.iter().map(|c| {
            let kind = if c.any_superseded {
                2
            } else {
                usize::from(c.any_data)
            };
            (kind, c.x)
        });
        for (kind, x) in ends.chain([(usize::MAX, u32::MAX)]) {
            match run {
                Some((k, a, b)) if k == kind && x <= b + 1 => run = Some((k, a, x)),
                _ => {
                    if let Some((k, a, b)) = run {
                        ctx.set_fill_style_str([NODATA, DATA, SUPERSEDED][k]);
                        let w = f64::from(b - a) + 1.5;
                        ctx.fill_rect(gx + f64::from(a), tick_y + 3.0, w, layout.ticks - 10.0);
                    }
                    run = Some((kind, x, x));
                }
            }
        }
        if let Some((p0, p1)) = la.committed {
            let x0 = x_of(p0);
            let x1 = x_of(p1);
            ctx.set_fill_style_str(COMMIT);
            ctx.fill_rect(x0, tick_y + layout.ticks - 5.0, (x1 - x0).max(1.0), 3.0);
        }
        ctx.set_fill_style_str(COMMIT);
        if lane.commits.len() < 4 * pw as usize {
            for &p in &la.commits {
                let x = x_of(p);
                if x >= gx && x <= gx + pw {
                    ctx.fill_rect(x - 0.5, tick_y + layout.ticks - 8.0, 1.0, 6.0);
                }
            }
        }

        // Size bars and the cumulative file-size line.
        let max = ix.max_size(mode).max(1) as f64;
        let bar_h = layout.sizes - 6.0;
        ctx.set_fill_style_str("#f3f5f8");
        ctx.fill_rect(gx, size_y, pw, layout.sizes - 2.0);
        ctx.set_fill_style_str("#5b8def");
        let col_w = ax.bar_width(vp, pw);
        ctx.begin_path();
        for c in &cols {
            let hgt = (c.max_bytes as f64 / max * bar_h).max(1.0);
            ctx.rect(
                gx + c.x as f64 - col_w / 2.0 + 0.5,
                size_y + layout.sizes - 2.0 - hgt,
                col_w.max(1.0),
                hgt,
            );
        }
        ctx.fill();
        let cum = ix.cumulative(mode);
        if let Some(cmax) = ix.cumulative_max(mode) {
            let cmax = cmax.max(1) as f64;
            ctx.set_stroke_style_str(CUMULATIVE);
            ctx.set_line_width(1.5);
            ctx.begin_path();
            let y_of = |v: u64| size_y + layout.sizes - 2.0 - v as f64 / cmax * bar_h;
            // One point per pixel column (the file size after its last entry),
            // anchored just outside the view so the line reaches the edges.
            // On the time axis the size holds until the next entry: steps.
            let steps = ax.mode == AxisMode::Time;
            let mut last_y: Option<f64> = None;
            let mut to = |x: f64, y: f64| {
                match last_y {
                    None => ctx.move_to(x, y),
                    Some(ly) => {
                        if steps {
                            ctx.line_to(x, ly);
                        }
                        ctx.line_to(x, y);
                    }
                }
                last_y = Some(y);
            };
            let before = cols.first().and_then(|c| (c.first as usize).checked_sub(1));
            if let Some((b, &p)) = before.and_then(|b| la.entries.get(b).map(|p| (b, p))) {
                to(x_of(p), y_of(cum[b]));
            }
            for c in &cols {
                to(gx + c.x as f64 + 0.5, y_of(cum[c.last as usize]));
            }
            if let Some((a, &p)) = cols
                .last()
                .map(|c| c.last as usize + 1)
                .filter(|&a| a < cum.len())
                .and_then(|a| la.entries.get(a).map(|p| (a, p)))
            {
                to(x_of(p), y_of(cum[a]));
            }
            ctx.stroke();
            ctx.set_line_width(1.0);
            let text = format!(
                "max entry {} · file {} ({})",
                human_bytes(max),
                human_bytes(cmax),
                mode.label()
            );
            ctx.set_fill_style_str("rgba(255,255,255,0.85)");
            ctx.fill_rect(gx + 2.0, size_y + 1.0, text.len() as f64 * 5.6 + 4.0, 13.0);
            ctx.set_fill_style_str(INK);
            let _ = ctx.fill_text(&text, gx + 4.0, size_y + 11.0);
        }

        // Markers: snapshot, membership, election timer, notes, checks, damage.
        let mut last_label = f64::NEG_INFINITY;
        for (m, &p) in lane.markers.iter().zip(&la.markers) {
            let (color, label) = match &m.kind {
                MarkerKind::Snapshot { .. } => ("#7c3aed", "snapshot".to_string()),
                MarkerKind::Membership { servers } => {
                    ("#d97706", format!("servers: {}", servers.len()))
                }
                MarkerKind::ElectionTimer { ms } => ("#0f766e", format!("timer {ms} ms")),
                MarkerKind::Note { note, .. } => ("#92400e", note.clone()),
                MarkerKind::Superseded { count } => (SUPERSEDED, format!("{count} replaced")),
                MarkerKind::Check { rule, .. } => (SUPERSEDED, format!("check: {rule}")),
                MarkerKind::Skipped { bytes, code, .. } => {
                    ("#b91c1c", format!("skipped {bytes} B ({code})"))
                }
                MarkerKind::Leader { .. } | MarkerKind::Vote { .. } => continue,
            };
            let x = x_of(p);
            ctx.set_stroke_style_str(color);
            ctx.set_line_width(1.5);
            ctx.begin_path();
            ctx.move_to(x, tick_y);
            ctx.line_to(x, size_y + layout.sizes);
            ctx.stroke();
            ctx.set_line_width(1.0);
            if x - last_label > 80.0 {
                last_label = x;
                ctx.set_fill_style_str("rgba(255,255,255,0.85)");
                ctx.fill_rect(x + 2.0, tick_y + 1.0, label.len() as f64 * 6.0 + 2.0, 12.0);
                ctx.set_fill_style_str(color);
                let _ = ctx.fill_text(&label, x + 3.0, tick_y + 11.0);
            }
        }
        if let (Some(tr), Some(p)) = (&lane.truncated, la.truncated) {
            let x = x_of(p);
            ctx.set_fill_style_str("rgba(210,58,58,0.15)");
            ctx.fill_rect(x, top, gx + pw - x, layout.lane_height());
            ctx.set_fill_style_str(SUPERSEDED);
            ctx.fill_rect(x - 1.0, top, 2.0, layout.lane_height());
            let _ = ctx.fill_text(
                &format!("damaged: record {} @ {}", tr.record, tr.offset),
                x + 4.0,
                top + layout.lane_height() - 6.0,
            );
        }
        ctx.restore();
        ctx.set_stroke_style_str(GRID);
        ctx.stroke_rect(gx, top, pw, layout.lane_height());
    }
    drawn
}

/// Height of one server's log track below the database lanes.
pub const TRACK_H: f64 = 34.0;
const TRACK_GAP: f64 = 6.0;

/// A point event of a server's log, at its wall time.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackMark {
    /// UTC epoch ms of its line.
    pub ms: i64,
    pub color: &'static str,
    pub glyph: &'static str,
    pub tip: String,
    /// 0-based line in the server's joined log.
    pub line: u64,
    /// The term of an election event (started, won, leader is): linked
    /// with the term bands of the lanes.
    pub term: Option<u64>,
}

/// A period of a server's log (long poll, disconnected peer).
#[derive(Clone, Debug, PartialEq)]
pub struct TrackSpan {
    pub from_ms: i64,
    pub to_ms: i64,
    pub color: &'static str,
    pub tip: String,
    pub line: u64,
}

/// One server's log track: what its log says, at its own times.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogTrack {
    pub server: usize,
    pub label: String,
    pub sub: String,
    pub marks: Vec<TrackMark>,
    pub spans: Vec<TrackSpan>,
    /// (ms, kB) of the server's memory reports.
    pub memory: Vec<(i64, f64)>,
}

impl LogTrack {
    /// First and last time of anything on the track.
    pub fn span(&self) -> Option<(i64, i64)> {
        let times = self
            .marks
            .iter()
            .map(|m| m.ms)
            .chain(self.spans.iter().flat_map(|s| [s.from_ms, s.to_ms]))
            .chain(self.memory.iter().map(|m| m.0));
        times.fold(None, |acc, t| match acc {
            None => Some((t, t)),
            Some((a, b)) => Some((a.min(t), b.max(t))),
        })
    }
}

/// Top y of log track `i` for a canvas of `lanes` database lanes.
pub fn track_top(layout: &Layout, lanes: usize, i: usize) -> f64 {
    layout.height(lanes) + i as f64 * (TRACK_H + TRACK_GAP)
}

/// Canvas height with the log tracks.
pub fn height_with_tracks(layout: &Layout, lanes: usize, tracks: usize) -> f64 {
    track_top(layout, lanes, tracks) + if tracks > 0 { 4.0 } else { 0.0 }
}

/// What the pointer is over on a log track.
pub struct TrackHit {
    pub track: usize,
    pub tip: String,
    pub line: u64,
    /// The term of the election event under the pointer.
    pub term: Option<u64>,
}

/// What is under `(x, y)` on the log tracks.
pub fn track_hit(
    tracks: &[LogTrack],
    ax: &Axis,
    vp: &Viewport,
    layout: &Layout,
    lanes: usize,
    x: f64,
    y: f64,
) -> Option<TrackHit> {
    if x < layout.gutter {
        return None;
    }
    let i = tracks.iter().enumerate().position(|(i, _)| {
        let top = track_top(layout, lanes, i);
        y >= top && y <= top + TRACK_H
    })?;
    let tr = &tracks[i];
    let pw = layout.plot_width();
    let px = x - layout.gutter;
    let xo = |ms: i64| ax.at_time(ms).map(|p| vp.x_of(p, pw));
    let best = tr
        .marks
        .iter()
        .filter_map(|m| xo(m.ms).map(|x| ((x - px).abs(), m)))
        .filter(|(d, _)| *d <= 5.0)
        .min_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((_, m)) = best {
        return Some(TrackHit {
            track: i,
            tip: m.tip.clone(),
            line: m.line,
            term: m.term,
        });
    }
    tr.spans
        .iter()
        .find(|s| match (xo(s.from_ms), xo(s.to_ms)) {
            (Some(a), Some(b)) => a - 2.0 <= px && px <= b + 2.0,
            _ => false,
        })
        .map(|s| TrackHit {
            track: i,
            tip: s.tip.clone(),
            line: s.line,
            term: None,
        })
}

/// Paints the log tracks under the database lanes; returns how many marks
/// were highlighted for the term `highlight`.
pub fn draw_tracks(
    ctx: &Ctx,
    tracks: &[LogTrack],
    ax: &Axis,
    vp: &Viewport,
    layout: &Layout,
    lanes: usize,
    highlight: Option<u64>,
) -> usize {
    let pw = layout.plot_width();
    let gx = layout.gutter;
    let x_of = |ms: i64| ax.at_time(ms).map(|p| gx + vp.x_of(p, pw));
    let mut lit = 0;
    for (i, tr) in tracks.iter().enumerate() {
        let top = track_top(layout, lanes, i);
        ctx.set_fill_style_str(INK);
        ctx.set_font("bold 12px system-ui, sans-serif");
        let _ = ctx.fill_text(&tr.label, 6.0, top + 13.0);
        ctx.set_font("11px system-ui, sans-serif");
        ctx.set_fill_style_str(MUTED);
        let _ = ctx.fill_text(&tr.sub, 6.0, top + 27.0);
        ctx.save();
        ctx.begin_path();
        ctx.rect(gx, top, pw, TRACK_H);
        ctx.clip();
        ctx.set_fill_style_str("#fafbfc");
        ctx.fill_rect(gx, top, pw, TRACK_H);
        for s in &tr.spans {
            let (Some(x0), Some(x1)) = (x_of(s.from_ms), x_of(s.to_ms)) else {
                continue;
            };
            if x1 < gx || x0 > gx + pw {
                continue;
            }
            ctx.set_fill_style_str(s.color);
            ctx.fill_rect(x0, top + 4.0, (x1 - x0).max(2.0), TRACK_H - 8.0);
        }
        if tr.memory.len() > 1 {
            let max = tr.memory.iter().map(|m| m.1).fold(1.0, f64::max);
            ctx.set_stroke_style_str("#0f766e");
            ctx.set_line_width(1.5);
            ctx.begin_path();
            let mut first = true;
            for &(ms, kb) in &tr.memory {
                let Some(x) = x_of(ms) else { continue };
                let y = top + TRACK_H - 3.0 - kb / max * (TRACK_H - 8.0);
                if first {
                    ctx.move_to(x, y);
                    first = false;
                } else {
                    ctx.line_to(x, y);
                }
            }
            ctx.stroke();
            ctx.set_line_width(1.0);
        }
        ctx.set_font("bold 10px system-ui, sans-serif");
        for m in &tr.marks {
            let Some(x) = x_of(m.ms) else { continue };
            if x < gx - 6.0 || x > gx + pw + 6.0 {
                continue;
            }
            if highlight.is_some() && m.term == highlight {
                lit += 1;
                ctx.set_fill_style_str("rgba(190,18,60,0.18)");
                ctx.fill_rect(x - 5.0, top + 1.0, 10.0, TRACK_H - 2.0);
                ctx.set_fill_style_str(LINK);
                ctx.fill_rect(x - 1.5, top + 1.0, 3.0, TRACK_H - 2.0);
            }
            ctx.set_fill_style_str(m.color);
            ctx.fill_rect(x - 0.75, top + 2.0, 1.5, TRACK_H - 4.0);
            let _ = ctx.fill_text(m.glyph, x + 2.0, top + 12.0);
        }
        ctx.restore();
        ctx.set_stroke_style_str(GRID);
        ctx.stroke_rect(gx, top, pw, TRACK_H);
    }
    lit
}
