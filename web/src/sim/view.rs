//! Draws a recorded run as a space-time diagram on a canvas: one lane per
//! server over virtual time (role bands, term labels, commit index, entry
//! sizes), messages as lines between lanes for the visible window,
//! heartbeats as ticks, and a client lane with each write and its latency.
//! Only what lies in the window is drawn; every list is found by binary
//! search, so the cost depends on what is visible, not on the run's length.

use std::collections::HashSet;

use ovsdb::StorageMode;
use simview::trace::{Trace, CANDIDATE, DOWN, LEADER, RELAY, UP};
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

pub const LEFT: f64 = 86.0;
const TOP: f64 = 22.0;
const CLIENT_H: f64 = 56.0;
/// Height of a Southbound controllers band (the aggregated lane, or one
/// expanded chassis).
const SB_H: f64 = 44.0;

/// What part of a run to draw.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Virtual time at the left and right edges, µs.
    pub t0: f64,
    pub t1: f64,
    /// Playhead, µs: nothing after it is drawn.
    pub now: u64,
}

impl Window {
    /// A window of `width_us` with the playhead at 80% of its width.
    pub fn around(now: u64, width_us: f64) -> Window {
        let (t0, t1) = simview::tour::window_around(now, width_us);
        Window { t0, t1, now }
    }
}

pub struct Geometry {
    pub w: f64,
    pub h: f64,
    pub lanes: usize,
    pub lane_h: f64,
    /// Southbound bands below the client lane (0, 1 or 2).
    pub bands: usize,
}

impl Geometry {
    fn band_y(&self, i: usize) -> f64 {
        TOP + self.lanes as f64 * self.lane_h + CLIENT_H + i as f64 * SB_H
    }
    fn lane_y(&self, s: usize) -> f64 {
        TOP + s as f64 * self.lane_h
    }
    fn lane_mid(&self, s: usize) -> f64 {
        self.lane_y(s) + self.lane_h / 2.0
    }
}

fn kind_color(kind: &str) -> &'static str {
    match kind {
        "append_request" => "#1f6fd1",
        "append_reply" => "#7fb0ea",
        "vote_request" | "prevote_request" => "#d1402f",
        "vote_reply" => "#e8958a",
        "execute_command_request" | "execute_command_reply" => "#1e9a5a",
        "install_snapshot_request" | "install_snapshot_reply" => "#8a4fd1",
        "become_leader" => "#b8860b",
        _ => "#777",
    }
}

fn ms_label(us: f64) -> String {
    let ms = us / 1000.0;
    if ms.abs() >= 10_000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else if ms.abs() >= 100.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

fn nice_step(span_us: f64, px: f64) -> f64 {
    let target = span_us / (px / 110.0).max(1.0);
    let mag = 10f64.powf(target.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * mag >= target {
            return m * mag;
        }
    }
    10.0 * mag
}

/// Sizes the canvas to its box and returns its 2D context.
pub fn context(
    canvas: &HtmlCanvasElement,
    lanes: usize,
    bands: usize,
) -> Option<(CanvasRenderingContext2d, Geometry)> {
    let w = (canvas.client_width() as f64).max(320.0);
    let lane_h = 64.0;
    let h = TOP + lanes as f64 * lane_h + CLIENT_H + bands as f64 * SB_H + 8.0;
    if canvas.width() != w as u32 {
        canvas.set_width(w as u32);
    }
    if canvas.height() != h as u32 {
        canvas.set_height(h as u32);
    }
    let ctx = canvas
        .get_context("2d")
        .ok()??
        .dyn_into::<CanvasRenderingContext2d>()
        .ok()?;
    Some((
        ctx,
        Geometry {
            w,
            h,
            lanes,
            lane_h,
            bands,
        },
    ))
}

/// Southbound bands a run needs: the controllers' lane when it has any,
/// and one more for an expanded chassis.
pub fn sb_bands(tr: &Trace, expanded: Option<u32>) -> usize {
    match (tr.sb.chassis > 0, expanded) {
        (false, _) => 0,
        (true, Some(c)) if c < tr.sb.chassis => 2,
        (true, _) => 1,
    }
}

/// Draws the Southbound controllers below the client lane: one lane for
/// all of them (per pixel column, how many controllers got an update, as
/// a bar scaled to the densest column in view; downloads after a
/// reconnect in orange), and chassis `expanded`'s own lane (each of its
/// ports from the NB write to the controller holding its binding, with
/// the bring-up on it; its downloads). Returns the deliveries in view.
pub fn draw_controllers(
    ctx: &CanvasRenderingContext2d,
    g: &Geometry,
    tr: &Trace,
    win: Window,
    expanded: Option<u32>,
) -> u64 {
    if g.bands == 0 {
        return 0;
    }
    let sb = &tr.sb;
    let plot_w = g.w - LEFT - 8.0;
    let span = (win.t1 - win.t0).max(1.0);
    let x = |t: f64| LEFT + (t - win.t0) / span * plot_w;
    let now = win.now as f64;
    let visible_end = now.min(win.t1);
    let y = g.band_y(0);
    ctx.set_fill_style_str("#f4f4f4");
    ctx.fill_rect(LEFT, y + 2.0, plot_w, SB_H - 4.0);
    ctx.set_fill_style_str("#111");
    ctx.set_font("bold 12px sans-serif");
    let _ = ctx.fill_text("controllers", 6.0, y + 15.0);
    ctx.set_font("10px sans-serif");
    let _ = ctx.fill_text(&format!("{} chassis", sb.chassis), 6.0, y + 28.0);
    // Per-pixel-column deliveries up to the playhead.
    let cols = plot_w.max(1.0) as usize;
    let us_per_px = span / plot_w.max(1.0);
    let mut counts = sb.deliveries_per_column(win.t0, us_per_px, cols);
    let last_col = ((visible_end - win.t0) / us_per_px).floor();
    if last_col < 0.0 {
        counts.clear();
    } else {
        counts.truncate(last_col as usize + 1);
    }
    let top = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let full = SB_H - 8.0;
    ctx.set_fill_style_str("#3a6fb0");
    let mut in_view = 0;
    for (i, &c) in counts.iter().enumerate() {
        if c == 0 {
            continue;
        }
        in_view += c;
        let hgt = ((c as f64).ln_1p() / top.ln_1p()).max(0.08) * full;
        ctx.fill_rect(LEFT + i as f64, y + SB_H - 4.0 - hgt, 1.0, hgt);
    }
    // Downloads: from the request to the reply, across the lane's top.
    let d0 = sb
        .downloads
        .partition_point(|d| (d.ready as f64) < win.t0 - 5e6);
    ctx.set_fill_style_str("rgba(224,128,32,0.45)");
    for d in &sb.downloads[d0..] {
        if d.t as f64 > visible_end {
            break;
        }
        if (d.ready as f64) < win.t0 {
            continue;
        }
        let (xa, xb) = (x(d.t as f64), x((d.ready as f64).min(now)));
        ctx.fill_rect(xa, y + 4.0, (xb - xa).max(1.0), 6.0);
    }
    if let Some(c) = expanded.filter(|c| *c < sb.chassis) {
        let y = g.band_y(1);
        ctx.set_fill_style_str("#f8f8f0");
        ctx.fill_rect(LEFT, y + 2.0, plot_w, SB_H - 4.0);
        ctx.set_fill_style_str("#111");
        ctx.set_font("bold 12px sans-serif");
        let _ = ctx.fill_text(&format!("chassis {}", c + 1), 6.0, y + 15.0);
        ctx.set_font("10px sans-serif");
        let (own, downloads) = sb.of_chassis(c);
        for b in &own {
            if b.start as f64 > visible_end {
                break;
            }
            let end = b.seen.map_or(now, |s| (s as f64).min(now));
            if end < win.t0 {
                continue;
            }
            let (xa, xb) = (x(b.start as f64), x(end));
            let done = b.seen.is_some_and(|s| s as f64 <= now);
            ctx.set_fill_style_str(if done { "#2c8a3e" } else { "#e0a030" });
            ctx.fill_rect(xa, y + 20.0, (xb - xa).max(1.5), 12.0);
            if let (true, Some(s)) = (done, b.seen) {
                if xb - xa > 46.0 {
                    ctx.set_fill_style_str("#fff");
                    let _ = ctx.fill_text(&ms_label((s - b.start) as f64), xa + 3.0, y + 30.0);
                }
            }
        }
        ctx.set_fill_style_str("rgba(224,128,32,0.7)");
        for d in &downloads {
            if d.t as f64 > visible_end || (d.ready as f64) < win.t0 {
                continue;
            }
            let (xa, xb) = (x(d.t as f64), x((d.ready as f64).min(now)));
            ctx.fill_rect(xa, y + 6.0, (xb - xa).max(1.0), 8.0);
        }
    }
    // The playhead over the bands.
    let xp = x(now);
    ctx.set_stroke_style_str("#c00");
    ctx.set_line_width(1.5);
    ctx.begin_path();
    ctx.move_to(xp, g.band_y(0));
    ctx.line_to(xp, g.h - 4.0);
    ctx.stroke();
    in_view
}

/// Draws `tr` in `win`. `label` names the run (A/B views); `sizes_as`
/// draws entry sizes in that storage mode whatever the run stores
/// (`None`: as stored); `messages: false` leaves the messages out. Returns
/// the number of messages drawn (lines and heartbeat ticks).
pub fn draw(
    ctx: &CanvasRenderingContext2d,
    g: &Geometry,
    tr: &Trace,
    win: Window,
    label: &str,
    sizes_as: Option<StorageMode>,
    messages: bool,
) -> usize {
    let mut drawn = 0;
    let plot_w = g.w - LEFT - 8.0;
    let span = (win.t1 - win.t0).max(1.0);
    let x = |t: f64| LEFT + (t - win.t0) / span * plot_w;
    let now = win.now as f64;
    ctx.set_fill_style_str("#ffffff");
    ctx.fill_rect(0.0, 0.0, g.w, g.h);

    // Time axis.
    ctx.set_font("11px sans-serif");
    ctx.set_fill_style_str("#444");
    ctx.set_stroke_style_str("#e3e3e3");
    ctx.set_line_width(1.0);
    let step = nice_step(span, plot_w);
    let mut t = (win.t0 / step).ceil() * step;
    while t <= win.t1 {
        let xx = x(t);
        ctx.begin_path();
        ctx.move_to(xx, TOP - 4.0);
        ctx.line_to(xx, g.h - 4.0);
        ctx.stroke();
        if t >= 0.0 {
            let _ = ctx.fill_text(&ms_label(t), xx + 2.0, 12.0);
        }
        t += step;
    }
    if !label.is_empty() {
        ctx.set_font("bold 12px sans-serif");
        let _ = ctx.fill_text(label, 4.0, 12.0);
        ctx.set_font("11px sans-serif");
    }

    let visible_end = now.min(win.t1);
    // Lanes: role bands with term labels.
    for s in 0..g.lanes {
        let y = g.lane_y(s);
        let series = tr.lane_states(s);
        let first = series
            .partition_point(|p| (p.t as f64) <= win.t0)
            .saturating_sub(1);
        for (i, p) in series.iter().enumerate().skip(first) {
            let a = p.t as f64;
            if a > visible_end {
                break;
            }
            let b = series
                .get(i + 1)
                .map_or(visible_end, |n| n.t as f64)
                .min(visible_end);
            let (xa, xb) = (x(a.max(win.t0)), x(b));
            if xb < LEFT {
                continue;
            }
            let color = match (p.life, p.role) {
                (DOWN, _) => "#4a4a4a",
                (l, _) if l != UP => "#9a9a9a",
                (_, LEADER) => "#f7d774",
                (_, RELAY) => "#dcefe3",
                (_, CANDIDATE) => "#f8b98f",
                _ => "#e9eef5",
            };
            ctx.set_fill_style_str(color);
            ctx.fill_rect(xa, y + 2.0, (xb - xa).max(0.5), g.lane_h - 4.0);
            if p.paused_until > 0 {
                ctx.set_fill_style_str("rgba(80,80,160,0.25)");
                ctx.fill_rect(xa, y + 2.0, (xb - xa).max(0.5), g.lane_h - 4.0);
            }
        }
        // Term labels where the term changes (and at the left edge).
        ctx.set_fill_style_str("#333");
        let mut last_term = None;
        for p in series.iter().skip(first) {
            if p.t as f64 > visible_end {
                break;
            }
            if last_term != Some(p.term) && p.life == UP {
                let xx = x((p.t as f64).max(win.t0));
                if xx + 40.0 < x(visible_end) || last_term.is_none() {
                    let _ = ctx.fill_text(&format!("term {}", p.term), xx + 3.0, y + 13.0);
                }
                last_term = Some(p.term);
            }
        }
        // Commit index as a step line in the lower half of the lane.
        let hi = series.last().map_or(1, |p| p.last.max(p.commit)).max(1) as f64;
        ctx.set_stroke_style_str("#2c8a3e");
        ctx.set_line_width(1.5);
        ctx.begin_path();
        let mut started = false;
        let mut prev_y = 0.0;
        for (i, p) in series.iter().enumerate().skip(first) {
            if p.t as f64 > visible_end {
                break;
            }
            let yy = y + g.lane_h - 4.0 - (p.commit as f64 / hi) * (g.lane_h * 0.45);
            let xa = x((p.t as f64).max(win.t0));
            if !started {
                ctx.move_to(xa, yy);
                started = true;
            } else {
                ctx.line_to(xa, prev_y);
                ctx.line_to(xa, yy);
            }
            prev_y = yy;
            if series.get(i + 1).is_none_or(|n| n.t as f64 > visible_end) {
                ctx.line_to(x(visible_end), yy);
            }
        }
        ctx.stroke();
        // Lane label with the state at the playhead.
        ctx.set_fill_style_str("#111");
        ctx.set_font("bold 12px sans-serif");
        let _ = ctx.fill_text(&tr.lane_name(s), 6.0, y + 15.0);
        ctx.set_font("11px sans-serif");
        if let Some(p) = tr.lane_state_at(s, win.now) {
            let role = match (p.life, p.role) {
                (DOWN, _) => "down",
                (l, _) if l != UP => "left",
                (_, LEADER) => "leader",
                (_, CANDIDATE) => "candidate",
                (_, RELAY) => "relay",
                _ => "follower",
            };
            let _ = ctx.fill_text(role, 6.0, y + 29.0);
            let _ = ctx.fill_text(&format!("commit {}", p.commit), 6.0, y + 43.0);
            let _ = ctx.fill_text(&format!("last {}", p.last), 6.0, y + 57.0);
        }
    }

    // Entries written: bars growing up from the lane bottom, log-scaled.
    let sizes = sizes_as.unwrap_or(tr.storage);
    ctx.set_fill_style_str(match sizes {
        StorageMode::Diff => "#3558a8",
        StorageMode::Full => "#8d3aa8",
    });
    let e0 = tr.entries.partition_point(|e| (e.t as f64) < win.t0);
    for e in &tr.entries[e0..] {
        if e.t as f64 > visible_end {
            break;
        }
        let s = e.server as usize;
        if s >= g.lanes {
            continue;
        }
        let bytes = e.bytes_as(sizes, tr.storage);
        let hgt = ((bytes.max(1) as f64).log10() / 6.0).min(1.0) * (g.lane_h * 0.4);
        ctx.fill_rect(
            x(e.t as f64) - 1.0,
            g.lane_y(s) + g.lane_h - 2.0 - hgt,
            2.0,
            hgt,
        );
    }

    // Messages sent by the playhead whose flight overlaps the window.
    let max_flight = flight_bound(tr);
    let msgs = if messages {
        tr.messages_in(
            win.t0.max(0.0) as u64,
            visible_end.max(0.0) as u64,
            max_flight,
        )
    } else {
        &[]
    };
    ctx.set_line_width(1.0);
    // Batched by colour: one path per message kind (plus one for dropped
    // messages and one for heartbeat ticks), and a segment that lands on the
    // same pixels as one already drawn in its colour is skipped, so a dense
    // window costs a few strokes over distinct pixel segments rather than
    // one per message.
    let kinds = tr.kinds.len();
    let dropped_group = kinds;
    let mut segs: Vec<Vec<[f64; 4]>> = vec![Vec::new(); kinds + 1];
    let mut dots: Vec<Vec<[f64; 2]>> = vec![Vec::new(); kinds + 1];
    // Segments drawn, by group; heartbeat ticks under a group of their
    // own (one set type: each adds its hashing code to the page).
    let mut seen: HashSet<(usize, [i64; 4])> = HashSet::new();
    let mut ticks: Vec<[f64; 2]> = Vec::new();
    for m in msgs {
        let (from, to) = (m.from as usize, m.to as usize);
        if from >= g.lanes || to >= g.lanes || m.send as f64 > visible_end {
            continue;
        }
        let xs = x(m.send as f64);
        drawn += 1;
        if tr.is_heartbeat(m) {
            if seen.insert((usize::MAX, [xs.round() as i64, from as i64, 0, 0])) {
                ticks.push([xs, g.lane_y(from)]);
            }
            continue;
        }
        let recv = m.recv as f64;
        if recv < win.t0 {
            continue;
        }
        let end = recv.min(now);
        let frac = if recv > m.send as f64 {
            (end - m.send as f64) / (recv - m.send as f64)
        } else {
            1.0
        };
        let (ya, yb) = (g.lane_mid(from), g.lane_mid(to));
        let ye = ya + (yb - ya) * frac;
        let xe = x(end);
        let group = if m.dropped {
            dropped_group
        } else {
            (m.kind as usize).min(kinds.saturating_sub(1))
        };
        let key = [
            xs.round() as i64,
            xe.round() as i64,
            ya as i64,
            ye.round() as i64,
        ];
        if !seen.insert((group, key)) {
            continue;
        }
        segs[group].push([xs, ya, xe, ye]);
        if frac >= 1.0 {
            dots[group].push([xe, ye]);
        }
    }
    if !ticks.is_empty() {
        ctx.set_stroke_style_str("#999");
        ctx.begin_path();
        for [xx, y] in &ticks {
            ctx.move_to(*xx, y + 3.0);
            ctx.line_to(*xx, y + 11.0);
        }
        ctx.stroke();
    }
    for (group, list) in segs.iter().enumerate() {
        if list.is_empty() {
            continue;
        }
        let color = if group == dropped_group {
            "#d00"
        } else {
            tr.kinds.get(group).map_or("#777", |k| kind_color(k))
        };
        ctx.set_stroke_style_str(color);
        ctx.begin_path();
        for [xa, ya, xb, yb] in list {
            ctx.move_to(*xa, *ya);
            ctx.line_to(*xb, *yb);
        }
        if group == dropped_group {
            // Dropped messages end in a cross.
            for [xe, ye] in &dots[group] {
                ctx.move_to(xe - 4.0, ye - 4.0);
                ctx.line_to(xe + 4.0, ye + 4.0);
                ctx.move_to(xe + 4.0, ye - 4.0);
                ctx.line_to(xe - 4.0, ye + 4.0);
            }
            ctx.stroke();
            continue;
        }
        ctx.stroke();
        if !dots[group].is_empty() {
            ctx.set_fill_style_str(color);
            ctx.begin_path();
            for [xe, ye] in &dots[group] {
                ctx.rect(xe - 1.5, ye - 1.5, 3.0, 3.0);
            }
            ctx.fill();
        }
    }

    // Notes (elections, leaders, faults).
    ctx.set_font("10px sans-serif");
    let n0 = tr.notes.partition_point(|n| (n.t as f64) < win.t0);
    // Per lane (last slot: cluster-wide): where the last label ended, and
    // its row, so close labels stack instead of overprinting.
    let mut last_end = vec![(f64::MIN, 0u8); g.lanes + 1];
    for n in &tr.notes[n0..] {
        if n.t as f64 > visible_end {
            break;
        }
        let xx = x(n.t as f64);
        let slot = n.server.map_or(g.lanes, |s| (s as usize).min(g.lanes));
        let (end, row) = last_end[slot];
        let row = if xx < end { (row + 1) % 3 } else { 0 };
        let label_w = ctx.measure_text(&n.text).map_or(60.0, |m| m.width());
        last_end[slot] = (
            (xx + 3.0 + label_w).max(if row > 0 { end } else { f64::MIN }),
            row,
        );
        let y = match n.server {
            Some(s) if (s as usize) < g.lanes => g.lane_y(s as usize) + 26.0,
            _ => TOP + 2.0,
        } + row as f64 * 11.0;
        ctx.set_fill_style_str(if n.server.is_none() { "#c00" } else { "#333" });
        ctx.fill_rect(xx - 0.5, y - 8.0, 1.5, 10.0);
        let _ = ctx.fill_text(&n.text, xx + 3.0, y);
    }

    // Client lane: each write from start to reply, its latency on it.
    let cy = TOP + g.lanes as f64 * g.lane_h + 4.0;
    ctx.set_fill_style_str("#f4f4f4");
    ctx.fill_rect(LEFT, cy, plot_w, CLIENT_H - 8.0);
    ctx.set_fill_style_str("#111");
    ctx.set_font("bold 12px sans-serif");
    let _ = ctx.fill_text("clients", 6.0, cy + 15.0);
    ctx.set_font("10px sans-serif");
    // Writes are sorted by start; an open write may have started long ago.
    let longest = tr
        .writes
        .iter()
        .map(|w| w.end.saturating_sub(w.start))
        .max()
        .unwrap_or(0) as f64;
    let w0 = tr
        .writes
        .partition_point(|w| (w.start as f64) < win.t0 - longest);
    for (i, w) in tr.writes[w0..].iter().enumerate() {
        if w.start as f64 > visible_end {
            break;
        }
        if (w.end as f64) < win.t0 {
            continue;
        }
        let row = (w0 + i) % 3;
        let y = cy + 4.0 + row as f64 * 14.0;
        let xa = x(w.start as f64);
        let done = (w.end as f64) <= now;
        let xb = x((w.end as f64).min(now));
        ctx.set_fill_style_str(if done { "#2c8a3e" } else { "#e0a030" });
        ctx.fill_rect(xa, y, (xb - xa).max(1.5), 10.0);
        if done && xb - xa > 46.0 {
            ctx.set_fill_style_str("#fff");
            let _ = ctx.fill_text(&ms_label((w.end - w.start) as f64), xa + 3.0, y + 9.0);
        }
    }

    // Playhead.
    let xp = x(now);
    ctx.set_stroke_style_str("#c00");
    ctx.set_line_width(1.5);
    ctx.begin_path();
    ctx.move_to(xp, TOP - 6.0);
    ctx.line_to(xp, g.h - 4.0);
    ctx.stroke();
    drawn
}

thread_local! {
    static FLIGHT: std::cell::Cell<(usize, u64, u64)> = const { std::cell::Cell::new((0, 0, 0)) };
}

/// Longest flight of a trace, cached by its identity (address, length, end).
fn flight_bound(tr: &Trace) -> u64 {
    let key = (
        tr.messages.as_ptr() as usize,
        tr.messages.len() as u64,
        tr.end,
    );
    FLIGHT.with(|c| {
        let (p, l, v) = c.get();
        if p == key.0 && l == key.1 {
            return v;
        }
        let v = tr.max_flight();
        c.set((key.0, key.1, v));
        v
    })
}
