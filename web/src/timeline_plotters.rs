//! The main timeline drawn with plotters instead of by hand, for the
//! measurement issue 14 asks for (`#renderer=plotters`; figures in
//! BENCHMARKS.md). It draws what costs the frame: per lane the term
//! bands, the entry ticks and size bars of every pixel column (the core's
//! aggregation, `Axis::columns`) and the cumulative size line, over a
//! plotters x axis; markers, log tracks and hit-testing stay the hand-
//! painted renderer's (`draw.rs`), which the page uses by default.

use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use web_sys::HtmlCanvasElement;

use crate::draw::Scene;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Draws the scene's lanes on `canvas` (already sized by the page).
pub fn draw(canvas: &HtmlCanvasElement, sc: &Scene) -> Result<(), String> {
    let backend = CanvasBackend::with_canvas_object(canvas.clone()).ok_or("no 2D canvas")?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (layout, vp) = (sc.layout, sc.vp);
    let pw = layout.plot_width();
    let span = (vp.end - vp.start).max(1e-9);
    // A pixel column's position in axis units.
    let at = |x: u32| vp.start + (x as f64 + 0.5) / pw * span;
    let (_, height) = root.dim_in_pixel();
    // The shared x axis on top.
    let axis = root
        .clone()
        .shrink((layout.gutter as u32, 0), (pw as u32, layout.axis as u32));
    let mut top = ChartBuilder::on(&axis)
        .x_label_area_size(22)
        .build_cartesian_2d(vp.start..vp.end, 0.0..1.0)
        .map_err(err)?;
    top.configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_labels(10)
        .label_style(("sans-serif", 11))
        .draw()
        .map_err(err)?;
    let no_lane = timeline::axis::LaneAxis::default();
    for (li, lane) in sc.t.lanes.iter().enumerate() {
        let y0 = layout.lane_top(li) as u32;
        if y0 >= height {
            break;
        }
        let la = sc.ax.lanes.get(li).unwrap_or(&no_lane);
        let area = root.clone().shrink(
            (layout.gutter as u32, y0),
            (pw as u32, layout.lane_height() as u32),
        );
        root.draw(&Text::new(
            lane.name.clone(),
            (6, y0 as i32 + 12),
            ("sans-serif", 12),
        ))
        .map_err(err)?;
        // y: 0..1 is the lane: band on top, ticks, then the size bars.
        let mut chart = ChartBuilder::on(&area)
            .build_cartesian_2d(vp.start..vp.end, 0.0..1.0)
            .map_err(err)?;
        let lh = layout.lane_height();
        let y_band = 1.0 - layout.band / lh;
        let y_ticks = y_band - layout.ticks / lh;
        chart
            .draw_series(lane.bands.iter().zip(&la.bands).map(|(b, &(p0, p1))| {
                let c = if b.term % 2 == 0 {
                    RGBColor(220, 236, 220)
                } else {
                    RGBColor(252, 228, 204)
                };
                Rectangle::new([(p0, y_band), (p1, 1.0)], c.filled())
            }))
            .map_err(err)?;
        let Some(ix) = sc.index.get(li) else { continue };
        let cols = sc.ax.columns(li, ix, vp, pw, sc.mode);
        chart
            .draw_series(cols.iter().map(|c| {
                let color = if c.any_superseded {
                    RGBColor(220, 38, 38)
                } else if c.any_data {
                    RGBColor(37, 99, 235)
                } else {
                    RGBColor(148, 163, 184)
                };
                let x = at(c.x);
                Rectangle::new(
                    [(x, y_ticks + 0.02), (x + span / pw, y_band - 0.02)],
                    color.filled(),
                )
            }))
            .map_err(err)?;
        let max = ix.max_size(sc.mode).max(1) as f64;
        chart
            .draw_series(cols.iter().map(|c| {
                let x = at(c.x);
                let h = c.max_bytes as f64 / max * y_ticks;
                Rectangle::new(
                    [(x - span / pw / 2.0, 0.0), (x + span / pw / 2.0, h)],
                    RGBColor(91, 141, 239).filled(),
                )
            }))
            .map_err(err)?;
        let cum = ix.cumulative(sc.mode);
        if let Some(cmax) = ix.cumulative_max(sc.mode) {
            let cmax = cmax.max(1) as f64;
            chart
                .draw_series(LineSeries::new(
                    cols.iter().filter_map(|c| {
                        Some((at(c.x), *cum.get(c.last as usize)? as f64 / cmax * y_ticks))
                    }),
                    RGBColor(194, 65, 12).stroke_width(2),
                ))
                .map_err(err)?;
        }
    }
    root.present().map_err(err)?;
    Ok(())
}
