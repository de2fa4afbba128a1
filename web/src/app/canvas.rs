//! The timeline canvas: its size, and painting it (with the test hooks
//! that the end-to-end tests read off it).

use timeline::Layout;
use wasm_bindgen::JsCast;
use web_sys::{HtmlCanvasElement, HtmlElement};

use super::{now, App};
use crate::draw;

/// The column right of the canvas for the status boxes (`.lane-status` in
/// static/style.css: 300 px wide, 6 px from the edge).
const STATUS_W: f64 = 312.0;

impl App {
    /// The canvas's geometry. The servers' cluster/status boxes, when
    /// shown, take a column right of it (`STATUS_W`), so that they never
    /// cover the newest entries.
    pub(super) fn layout(&self) -> Layout {
        let boxes = if self.lane_status && self.has_status() {
            STATUS_W
        } else {
            0.0
        };
        Layout::new((self.width - boxes).max(320.0))
    }

    /// Whether a server of the diagnosis has a cluster/status.
    pub(super) fn has_status(&self) -> bool {
        self.diag
            .as_ref()
            .is_some_and(|d| d.servers.iter().any(|s| s.status.is_some()))
    }

    fn canvas_height(&self, lanes: usize) -> f64 {
        draw::height_with_tracks(&self.layout(), lanes, self.tracks.len())
    }

    pub(super) fn measure_width(&mut self) -> bool {
        let w = self
            .plot
            .cast::<HtmlElement>()
            .map_or(1000.0, |e| e.client_width() as f64);
        if (w - self.width).abs() > 0.5 && w > 0.0 {
            self.width = w;
            self.dirty = true;
            return true;
        }
        false
    }

    pub(super) fn redraw(&mut self) {
        let (Some(t), Some(canvas)) = (&self.timeline, self.canvas.cast::<HtmlCanvasElement>())
        else {
            return;
        };
        let layout = self.layout();
        let ratio = web_sys::window()
            .map_or(1.0, |w| w.device_pixel_ratio())
            .max(1.0);
        let h = self.canvas_height(t.lanes.len());
        let (pw, ph) = ((layout.width * ratio) as u32, (h * ratio) as u32);
        if canvas.width() != pw {
            canvas.set_width(pw);
        }
        if canvas.height() != ph {
            canvas.set_height(ph);
        }
        let _ = canvas.set_attribute("style", &format!("width:{}px;height:{}px", layout.width, h));
        let Some(ctx) = canvas
            .get_context("2d")
            .ok()
            .flatten()
            .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
        else {
            return;
        };
        let t0 = now();
        let scene = draw::Scene {
            t,
            index: &self.lane_index,
            ax: &self.axis,
            vp: &self.vp,
            layout: &layout,
            mode: self.mode,
            highlight: self.hover_term,
        };
        // The measurement variant (`#renderer=plotters`: lanes only) is in
        // builds with the feature `plotters-timeline` alone.
        #[cfg(feature = "plotters-timeline")]
        let plotters = self.plotters;
        #[cfg(not(feature = "plotters-timeline"))]
        let plotters = false;
        let drawn = if plotters {
            #[cfg(feature = "plotters-timeline")]
            let _ = ctx.set_transform(1.0, 0.0, 0.0, 1.0, 0.0, 0.0);
            #[cfg(feature = "plotters-timeline")]
            if let Err(e) = crate::timeline_plotters::draw(&canvas, &scene) {
                web_sys::console::warn_1(&format!("plotters timeline: {e}").into());
            }
            draw::Drawn::default()
        } else {
            draw::draw(&ctx, &scene, ratio)
        };
        let lit = draw::draw_tracks(
            &ctx,
            &self.tracks,
            &self.axis,
            &self.vp,
            &layout,
            t.lanes.len(),
            self.hover_term,
        );
        let focus_pos = self.focus.and_then(|(i, ms)| self.axis.place(i, ms));
        if let Some(p) = focus_pos {
            let x = layout.gutter + self.vp.x_of(p, layout.plot_width());
            if x >= layout.gutter {
                ctx.set_stroke_style_str("rgba(220,38,38,0.8)");
                ctx.set_line_width(2.0);
                ctx.begin_path();
                ctx.move_to(x, layout.axis - 2.0);
                ctx.line_to(x, h);
                ctx.stroke();
                ctx.set_line_width(1.0);
            }
        }
        let ms = now() - t0;
        let _ = canvas.set_attribute("data-frame-ms", &format!("{ms:.2}"));
        let _ = canvas.set_attribute("data-zoom", &format!("{:.4}", self.vp.zoom_level()));
        let _ = canvas.set_attribute(
            "data-view",
            &format!("{:.2},{:.2}", self.vp.start, self.vp.end),
        );
        if self.first_frame_ms.is_none() {
            let ms = now() - self.load_started;
            self.first_frame_ms = Some(ms);
            let _ = canvas.set_attribute("data-first-frame-ms", &format!("{ms:.1}"));
        }
        let _ = canvas.set_attribute(
            "data-preview",
            if self.previewing { "true" } else { "false" },
        );
        let _ = canvas.set_attribute(
            "data-entries",
            &t.lanes
                .iter()
                .map(|l| l.entries.len())
                .sum::<usize>()
                .to_string(),
        );
        if self.first_frame && !self.previewing {
            self.first_frame = false;
            let _ =
                canvas.set_attribute("data-load-ms", &format!("{:.1}", now() - self.load_started));
            let _ = canvas.set_attribute("data-parse-ms", &format!("{:.1}", self.parse_ms));
            let _ = canvas.set_attribute("data-decode-ms", &format!("{:.1}", self.decode_ms));
        }
        let _ = canvas.set_attribute("data-tracks", &self.tracks.len().to_string());
        let _ = canvas.set_attribute(
            "data-marks",
            &self
                .tracks
                .iter()
                .map(|t| t.marks.len() + t.spans.len())
                .sum::<usize>()
                .to_string(),
        );
        let _ = canvas.set_attribute(
            "data-focus",
            &focus_pos.map_or(String::new(), |p| format!("{p:.2}")),
        );
        let _ = canvas.set_attribute(
            "data-focus-ms",
            &focus_pos
                .and_then(|p| self.axis.time_at(p))
                .map_or(String::new(), |t| t.to_string()),
        );
        // Test hooks: the axis, its tick labels, the plot's geometry, the
        // log tracks' rows and what the hovered term highlights.
        let _ = canvas.set_attribute("data-axis", self.axis.mode.name());
        let _ = canvas.set_attribute("data-ticks", &drawn.ticks.join(","));
        let _ = canvas.set_attribute(
            "data-plot",
            &format!("{},{}", layout.gutter, layout.plot_width()),
        );
        let _ = canvas.set_attribute(
            "data-track-rows",
            &(0..self.tracks.len())
                .map(|i| format!("{:.0}", draw::track_top(&layout, t.lanes.len(), i)))
                .collect::<Vec<_>>()
                .join(","),
        );
        let _ = canvas.set_attribute(
            "data-highlight-term",
            &self.hover_term.map_or(String::new(), |t| t.to_string()),
        );
        let _ = canvas.set_attribute("data-highlight-bands", &drawn.highlighted_bands.to_string());
        let _ = canvas.set_attribute("data-highlight-marks", &lit.to_string());
        let _ = canvas.set_attribute("data-ready", if self.previewing { "false" } else { "true" });
        self.dirty = false;
    }
}
