//! Every chart of the app, drawn with plotters on a canvas (axes, ticks,
//! log scales, labels and legends are plotters'; nothing here paints on a
//! raw 2D context): the contents explorer's bytes by table and growth over
//! time, the A/B latency distribution, the IDL experiments' figures and the
//! servers' memory over time. Rendering only: the figures come from the
//! core (`contents::sizes`, `simview`, `idl`, `evidence`). A drawing
//! returns a [`Hover`] that names the value under the pointer.

use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use web_sys::HtmlCanvasElement;

/// What the pointer at canvas pixel (x, y) points at, as text.
pub type Hover = Box<dyn Fn(i32, i32) -> Option<String>>;

/// The canvas's size in CSS pixels: its drawn width follows its box, so a
/// chart redrawn after a resize fills it.
fn fit(canvas: &HtmlCanvasElement, height: u32) {
    let w = canvas.client_width().max(320) as u32;
    if canvas.width() != w {
        canvas.set_width(w);
    }
    if canvas.height() != height {
        canvas.set_height(height);
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Calls `f` whenever the window is resized, until the listener is dropped:
/// a page's charts redraw to their new width.
pub fn on_resize(mut f: impl FnMut() + 'static) -> gloo_events::EventListener {
    gloo_events::EventListener::new(&gloo_utils::window(), "resize", move |_| f())
}

/// The canvas as a white plotters drawing area, `height` px tall and as
/// wide as its box.
pub fn area(
    canvas: &HtmlCanvasElement,
    height: u32,
) -> Result<DrawingArea<CanvasBackend, plotters::coord::Shift>, String> {
    fit(canvas, height);
    let backend = CanvasBackend::with_canvas_object(canvas.clone()).ok_or("no 2D canvas")?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    Ok(root)
}

/// The chart's legend, in the app's one style.
fn legend<CT: CoordTranslate>(
    chart: &mut ChartContext<'_, CanvasBackend, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(err)
}

/// One bar group: a table and its bytes (stored, full, diff).
pub struct Bars {
    pub table: String,
    pub stored: u64,
    pub full: Option<u64>,
    pub diff: Option<u64>,
}

const BAND: usize = 36;

const SERIES: [(&str, RGBColor); 3] = [
    ("as stored", RGBColor(37, 99, 235)),
    ("full values", RGBColor(234, 88, 12)),
    ("diffs", RGBColor(22, 163, 74)),
];

/// Draws `bars` (largest first) as grouped horizontal bars; Err is the
/// drawing error's text.
pub fn draw(canvas: &HtmlCanvasElement, bars: &[Bars]) -> Result<Hover, String> {
    let rows = bars.len().max(1);
    // 8 px of margin on each side and 30 px of x labels, then one band of
    // BAND px per table with its three bars.
    let root = area(canvas, (46 + rows * BAND) as u32)?;
    let max = bars
        .iter()
        .flat_map(|b| [Some(b.stored), b.full, b.diff])
        .flatten()
        .max()
        .unwrap_or(1)
        .max(1);
    let names: Vec<String> = bars.iter().map(|b| b.table.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(190)
        .build_cartesian_2d(0u64..max + max / 20, (0..rows).into_segmented())
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("bytes")
        .x_label_formatter(&|v| crate::draw::human_bytes(*v as f64))
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => names.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .y_labels(rows)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(err)?;
    for (k, (label, color)) in SERIES.iter().enumerate() {
        let value = |b: &Bars| match k {
            0 => Some(b.stored),
            1 => b.full,
            _ => b.diff,
        };
        let rects: Vec<Rectangle<(u64, SegmentValue<usize>)>> = bars
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let v = value(b)?;
                // Three bars in each table's band.
                let mut r = Rectangle::new(
                    [(0, SegmentValue::Exact(i)), (v, SegmentValue::Exact(i + 1))],
                    color.filled(),
                );
                let top = 6 + 9 * k as u32;
                r.set_margin(top, BAND as u32 - top - 8, 0, 0);
                Some(r)
            })
            .collect();
        chart
            .draw_series(rects)
            .map_err(err)?
            .label(*label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    root.present().map_err(err)?;
    let (_, yr) = chart.plotting_area().get_pixel_range();
    let text: Vec<String> = bars
        .iter()
        .map(|b| {
            let m = |v: Option<u64>| v.map_or("–".into(), |v| crate::draw::human_bytes(v as f64));
            format!(
                "{}: {} as stored, {} with full values, {} with diffs",
                b.table,
                crate::draw::human_bytes(b.stored as f64),
                m(b.full),
                m(b.diff)
            )
        })
        .collect();
    Ok(Box::new(move |_, y| {
        if !yr.contains(&y) {
            return None;
        }
        let i = (y - yr.start) as usize * rows / (yr.end - yr.start).max(1) as usize;
        text.get(i).cloned()
    }))
}

/// One line of the growth chart: a table's bytes so far at each point
/// (x: log index, or record number in a standalone file).
pub struct Line {
    pub table: String,
    pub points: Vec<(u64, u64)>,
}

const PALETTE: [RGBColor; 9] = [
    RGBColor(37, 99, 235),
    RGBColor(234, 88, 12),
    RGBColor(22, 163, 74),
    RGBColor(147, 51, 234),
    RGBColor(220, 38, 38),
    RGBColor(8, 145, 178),
    RGBColor(202, 138, 4),
    RGBColor(219, 39, 119),
    RGBColor(100, 116, 139),
];

/// The lines of the `growth` points of a size report (JSON: `[record,
/// index, date, {table: [stored, full, diff]}]`): the `top` tables with
/// the most bytes at the end, the rest summed as "other tables".
pub fn growth_lines(growth: &serde_json::Value, top: usize) -> Vec<Line> {
    let points: Vec<&serde_json::Value> = growth.as_array().into_iter().flatten().collect();
    let Some(last) = points.last() else {
        return Vec::new();
    };
    let stored = |p: &serde_json::Value, t: &str| p[3][t][0].as_u64().unwrap_or(0);
    let mut tables: Vec<(String, u64)> = last[3]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(t, _)| (t.clone(), stored(last, t)))
        .collect();
    ovsdb::order::sort_by(&mut tables, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let x = |p: &serde_json::Value| p[1].as_u64().or(p[0].as_u64()).unwrap_or(0);
    let mut lines: Vec<Line> = tables
        .iter()
        .take(top)
        .map(|(t, _)| Line {
            table: t.clone(),
            points: points.iter().map(|p| (x(p), stored(p, t))).collect(),
        })
        .collect();
    if tables.len() > top {
        let rest: Vec<&String> = tables[top..].iter().map(|(t, _)| t).collect();
        lines.push(Line {
            table: format!("{} other tables", rest.len()),
            points: points
                .iter()
                .map(|p| (x(p), rest.iter().map(|t| stored(p, t)).sum()))
                .collect(),
        });
    }
    lines
}

/// Draws the bytes by table accumulated over the log, one line a table.
pub fn draw_growth(
    canvas: &HtmlCanvasElement,
    lines: &[Line],
    x_desc: &str,
) -> Result<Hover, String> {
    let root = area(canvas, 320)?;
    let all = || lines.iter().flat_map(|l| l.points.iter());
    let (x0, x1) = (
        all().map(|p| p.0).min().unwrap_or(0),
        all().map(|p| p.0).max().unwrap_or(1),
    );
    let y1 = all().map(|p| p.1).max().unwrap_or(1).max(1);
    let mut chart = ChartBuilder::on(&root)
        .margin(10)
        .x_label_area_size(32)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1.max(x0 + 1), 0u64..y1 + y1 / 20)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("bytes as stored, so far")
        .y_label_formatter(&|v| crate::draw::human_bytes(*v as f64))
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(err)?;
    for (i, l) in lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(
                l.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(l.table.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    root.present().map_err(err)?;
    let (xr, _) = chart.plotting_area().get_pixel_range();
    let (lines, span) = (
        lines
            .iter()
            .map(|l| (l.table.clone(), l.points.clone()))
            .collect::<Vec<_>>(),
        (x0, x1.max(x0 + 1)),
    );
    let x_desc = x_desc.to_string();
    Ok(Box::new(move |x, _| {
        if !xr.contains(&x) {
            return None;
        }
        let f = (x - xr.start) as f64 / (xr.end - xr.start).max(1) as f64;
        let at = span.0 as f64 + f * (span.1 - span.0) as f64;
        // The point nearest the pointer, with the three largest tables there.
        let first = &lines.first()?.1;
        let k = (0..first.len()).min_by_key(|&k| (first[k].0 as f64 - at).abs() as u64)?;
        let mut here: Vec<(&String, u64)> = lines.iter().map(|(t, p)| (t, p[k].1)).collect();
        ovsdb::order::sort_by_key(&mut here, |h| std::cmp::Reverse(h.1));
        let top: Vec<String> = here
            .iter()
            .take(3)
            .map(|(t, v)| format!("{t} {}", crate::draw::human_bytes(*v as f64)))
            .collect();
        Some(format!("{x_desc} {}: {}", first[k].0, top.join(", ")))
    }))
}

/// The A/B latency distribution: the shared log-spaced bins of
/// `simview::ab::latency_histogram` (`edges` are the lower edges in ms),
/// A's and B's counts side by side in each, on a logarithmic time axis.
pub fn draw_latency(
    canvas: &HtmlCanvasElement,
    edges: &[f64],
    a: &[u64],
    b: &[u64],
) -> Result<Hover, String> {
    let root = area(canvas, 220)?;
    if edges.is_empty() {
        root.draw(&Text::new(
            "No client writes in these runs.",
            (10, 20),
            ("sans-serif", 13),
        ))
        .map_err(err)?;
        root.present().map_err(err)?;
        return Ok(Box::new(|_, _| None));
    }
    // Bins are equal in log space: the upper edge of bin i is edge i+1.
    let ratio = if edges.len() > 1 {
        edges[1] / edges[0]
    } else {
        2.0
    };
    let upper = |i: usize| {
        edges
            .get(i + 1)
            .copied()
            .unwrap_or(edges[edges.len() - 1] * ratio)
    };
    let (lo, hi) = (edges[0], upper(edges.len() - 1));
    let max = a.iter().chain(b).copied().max().unwrap_or(1).max(1);
    let mut chart = ChartBuilder::on(&root)
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(50)
        .build_cartesian_2d((lo..hi).log_scale(), 0u64..max + max / 10 + 1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("commit latency (ms, log scale)")
        .y_desc("writes")
        .x_labels(8)
        .max_light_lines(1)
        .x_label_formatter(&|v| {
            if *v >= 10.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        })
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(err)?;
    let series = [
        ("A", RGBColor(200, 60, 40), a),
        ("B", RGBColor(40, 90, 200), b),
    ];
    for (k, (label, color, counts)) in series.iter().enumerate() {
        let color = *color;
        let bars = counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(move |(i, &c)| {
                // A in the lower half of the bin, B in the upper (in log space).
                let (x0, x1) = (edges[i], upper(i));
                let mid = (x0 * x1).sqrt();
                let (l, r) = if k == 0 { (x0, mid) } else { (mid, x1) };
                Rectangle::new([(l, 0), (r, c)], color.mix(0.8).filled())
            });
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(*label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    legend(&mut chart, SeriesLabelPosition::UpperMiddle)?;
    root.present().map_err(err)?;
    // The x axis is logarithmic: a pixel's time is lo·(hi/lo)^f.
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let (edges, a, b) = (edges.to_vec(), a.to_vec(), b.to_vec());
    Ok(Box::new(move |x, y| {
        if !xr.contains(&x) || !yr.contains(&y) {
            return None;
        }
        let f = (x - xr.start) as f64 / (xr.end - xr.start).max(1) as f64;
        let ms = lo * (hi / lo).powf(f);
        let i = edges.iter().rposition(|&e| e <= ms)?;
        let hi = edges.get(i + 1).copied().unwrap_or(edges[i] * ratio);
        Some(format!(
            "{:.2}–{:.2} ms: A {} writes, B {} writes",
            edges[i],
            hi,
            a.get(i).copied().unwrap_or(0),
            b.get(i).copied().unwrap_or(0)
        ))
    }))
}

/// One panel of [`draw_panels`]: a figure's title and one value per item.
pub struct Panel {
    pub title: String,
    pub values: Vec<f64>,
}

/// Small multiples: one horizontal bar chart per figure, two a row, each
/// item (`names`) a bar. A figure whose values span more than two orders
/// of magnitude gets a logarithmic axis.
pub fn draw_panels(
    canvas: &HtmlCanvasElement,
    names: &[String],
    panels: &[Panel],
) -> Result<Hover, String> {
    let per_row = 2usize;
    let rows = panels.len().div_ceil(per_row).max(1);
    let panel_h = 60 + 22 * names.len().max(1) as u32;
    let root = area(canvas, rows as u32 * panel_h)?;
    let areas = root.split_evenly((rows, per_row));
    let n = names.len().max(1);
    let colors = [
        RGBColor(200, 85, 61),
        RGBColor(42, 111, 219),
        RGBColor(58, 157, 93),
        RGBColor(141, 58, 168),
    ];
    // Per panel: its pixel rectangle (x and y ranges), for the hover.
    type Place = ((i32, i32), (i32, i32), usize);
    let mut places: Vec<Place> = Vec::new();
    for (pi, (p, area)) in panels.iter().zip(&areas).enumerate() {
        let max = p.values.iter().copied().fold(0.0, f64::max).max(1e-9);
        let min_pos = p
            .values
            .iter()
            .copied()
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        let log = min_pos.is_finite() && max / min_pos > 100.0;
        let mut b = ChartBuilder::on(area);
        // On the right, half of a tick label centred on the axis's end.
        b.margin(8)
            .margin_right(24)
            .caption(&p.title, ("sans-serif", 13))
            .x_label_area_size(24)
            .y_label_area_size(150);
        let names_y = names.to_vec();
        let ylab = move |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) => names_y.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        macro_rules! bars {
            ($chart:expr, $zero:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .disable_y_mesh()
                    .y_labels(n)
                    .y_label_formatter(&ylab)
                    .x_label_formatter(&|v| super_short(*v))
                    .x_labels(5)
                    .label_style(("sans-serif", 11))
                    .draw()
                    .map_err(err)?;
                chart
                    .draw_series(p.values.iter().enumerate().map(|(i, &v)| {
                        let mut r = Rectangle::new(
                            [
                                ($zero, SegmentValue::Exact(i)),
                                (v.max($zero), SegmentValue::Exact(i + 1)),
                            ],
                            colors[i % colors.len()].filled(),
                        );
                        r.set_margin(3, 3, 0, 0);
                        r
                    }))
                    .map_err(err)?;
                chart
                    .draw_series(p.values.iter().enumerate().map(|(i, &v)| {
                        Text::new(
                            super_short(v),
                            (v.max($zero), SegmentValue::CenterOf(i)),
                            ("sans-serif", 11),
                        )
                    }))
                    .map_err(err)?;
                chart.plotting_area().get_pixel_range()
            }};
        }
        let (xr, yr) = if log {
            let lo = min_pos / 2.0;
            // Room for the longest bar's label, a fifth of the axis as on
            // the linear one (1.25 × max): ×1.6 left a few pixels on four
            // decades, and "120.0k" was cut to "120.0".
            let hi = max * (max / lo).sqrt().sqrt();
            bars!(
                b.build_cartesian_2d((lo..hi).log_scale(), (0..n).into_segmented())
                    .map_err(err)?,
                lo
            )
        } else {
            bars!(
                b.build_cartesian_2d(0.0..max * 1.25, (0..n).into_segmented())
                    .map_err(err)?,
                0.0
            )
        };
        places.push(((xr.start, xr.end), (yr.start, yr.end), pi));
    }
    root.present().map_err(err)?;
    let names = names.to_vec();
    let values: Vec<(String, Vec<f64>)> = panels
        .iter()
        .map(|p| (p.title.clone(), p.values.clone()))
        .collect();
    Ok(Box::new(move |x, y| {
        let &(_, (y0, y1), pi) = places
            .iter()
            .find(|((x0, x1), (y0, y1), _)| (*x0..*x1).contains(&x) && (*y0..*y1).contains(&y))?;
        let i = ((y - y0) as usize * names.len()) / ((y1 - y0).max(1) as usize);
        let (title, vals) = &values[pi];
        Some(format!(
            "{}: {} = {}",
            names.get(i)?,
            title,
            super_short(*vals.get(i)?)
        ))
    }))
}

/// A figure in a few characters: 1234567 → "1.23M", 0.5 → "0.5".
fn super_short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.3}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.3}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a == a.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// One server's memory reports over time: (UTC ms, kB).
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryLine {
    pub server: String,
    pub points: Vec<(i64, f64)>,
}

/// The servers' memory over time (from `memory/show` outputs and the
/// log's memory lines), one line a server, on a UTC time axis.
pub fn draw_memory(canvas: &HtmlCanvasElement, lines: &[MemoryLine]) -> Result<Hover, String> {
    let root = area(canvas, 240)?;
    let all = || lines.iter().flat_map(|l| l.points.iter());
    let t0 = all().map(|p| p.0).min().unwrap_or(0);
    let t1 = all().map(|p| p.0).max().unwrap_or(1).max(t0 + 1);
    let top = all().map(|p| p.1).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(70)
        .build_cartesian_2d(t0..t1, 0.0..top * 1.1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time (UTC)")
        .y_desc("memory")
        .x_labels(6)
        .x_label_formatter(&|ms| {
            timeline::time::utc_datetime(*ms)
                .get(11..19)
                .unwrap_or("")
                .to_string()
        })
        .y_label_formatter(&|kb| crate::draw::human_bytes(kb * 1024.0))
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(err)?;
    for (i, l) in lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(
                l.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(l.server.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        chart
            .draw_series(l.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    root.present().map_err(err)?;
    let to_value = chart.into_coord_trans();
    let lines: Vec<(String, Vec<(i64, f64)>)> = lines
        .iter()
        .map(|l| (l.server.clone(), l.points.clone()))
        .collect();
    Ok(Box::new(move |x, y| {
        let (t, _) = to_value((x, y))?;
        // The report nearest in time, over all servers.
        let (name, &(ms, kb)) = lines
            .iter()
            .flat_map(|(n, ps)| ps.iter().map(move |p| (n, p)))
            .min_by_key(|(_, p)| (p.0 - t).abs())?;
        Some(format!(
            "{name}: {} at {} UTC",
            crate::draw::human_bytes(kb * 1024.0),
            timeline::time::utc_datetime(ms)
        ))
    }))
}

#[cfg(test)]
mod tests {
    /// Charts come from plotters: this module never paints on a raw 2D
    /// context (no hand-drawn axes, bars or labels), and the pages that
    /// show charts leave their drawing to it.
    #[test]
    fn charts_draw_through_plotters_only() {
        let raw = [
            "CanvasRenderingContext2d",
            "fill_rect",
            "fill_text",
            "line_to",
            "stroke_rect",
            "get_context",
        ];
        for (name, src) in [
            ("charts.rs", include_str!("charts.rs")),
            ("sim/ab.rs", include_str!("sim/ab.rs")),
            ("sim/idl_panel.rs", include_str!("sim/idl_panel.rs")),
            ("contents_ui/mod.rs", include_str!("contents_ui/mod.rs")),
            ("contents_ui/query.rs", include_str!("contents_ui/query.rs")),
            ("contents_ui/view.rs", include_str!("contents_ui/view.rs")),
            ("contents_ui/sizes.rs", include_str!("contents_ui/sizes.rs")),
            ("app/evidence_ui.rs", include_str!("app/evidence_ui.rs")),
        ] {
            // The list above names the calls; skip this test's own lines.
            let code = src.split("#[cfg(test)]").next().unwrap();
            for call in raw {
                assert!(
                    !code.contains(call),
                    "{name} calls {call}: draw the chart with plotters"
                );
            }
        }
    }

    #[test]
    fn figures_are_short() {
        assert_eq!(super::super_short(1_234_567.0), "1.235M");
        assert_eq!(super::super_short(12_345.0), "12.3k");
        assert_eq!(super::super_short(42.0), "42");
        assert_eq!(super::super_short(0.5), "0.50");
    }
}
