//! The "what made it big" chart: bytes by table as stored, with full
//! values and with diffs, drawn with plotters on a canvas (axes, labels
//! and legend are plotters'). Rendering only: the figures come from
//! `contents::sizes` in the worker.

use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use web_sys::HtmlCanvasElement;

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
pub fn draw(canvas: &HtmlCanvasElement, bars: &[Bars]) -> Result<(), String> {
    let rows = bars.len().max(1);
    // 8 px of margin on each side and 30 px of x labels, then one band of
    // BAND px per table with its three bars.
    canvas.set_height((46 + rows * BAND) as u32);
    let backend = CanvasBackend::with_canvas_object(canvas.clone()).ok_or("no 2D canvas")?;
    let root = backend.into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
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
        .map_err(|e| e.to_string())?;
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
        .map_err(|e| e.to_string())?;
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
            .map_err(|e| e.to_string())?
            .label(*label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())?;
    Ok(())
}
