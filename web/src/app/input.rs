//! The timeline under the pointer and the keys: pan, zoom and axis,
//! hit testing and tooltips, selecting an entry to inspect, and the
//! window, wheel and key listeners that feed them.

use js_sys::{Object, Reflect};
use timeline::axis::{Axis, AxisMode};
use timeline::time::utc_datetime;
use timeline::{Hit, Layout, SizeView};
use wasm_bindgen::JsCast;
use web_sys::{HtmlCanvasElement, HtmlElement, KeyboardEvent, WheelEvent};
use yew::prelude::*;

use super::{App, Msg, Tooltip};
use crate::draw::human_bytes;

impl App {
    /// Rebuilds the axis (new log range, new markers, another mode),
    /// keeping the visible range.
    pub(super) fn rebuild_axis(&mut self) {
        let Some(t) = &self.timeline else { return };
        let ax = Axis::new(t, self.axis_mode, self.log_span());
        self.vp = if ax.mode == self.axis.mode {
            ax.rebound(&self.vp)
        } else {
            ax.convert(&self.axis, &self.vp)
        };
        self.axis = ax;
        self.dirty = true;
    }

    pub(super) fn set_axis(&mut self, mode: AxisMode) -> bool {
        let Some(t) = &self.timeline else {
            return false;
        };
        if mode == AxisMode::Time && !Axis::has_time(t) {
            self.notice =
                Some("No entry of these files has a date (_date): the time axis needs one.".into());
            return true;
        }
        self.axis_mode = mode;
        self.rebuild_axis();
        self.tooltip = None;
        self.update_hash();
        true
    }
    fn canvas_point(&self, x: f64, y: f64) -> (f64, f64) {
        (x, y)
    }

    fn hit(&self, x: f64, y: f64) -> Option<Hit> {
        let t = self.timeline.as_ref()?;
        let (x, y) = self.canvas_point(x, y);
        self.axis.hit(t, &self.layout(), &self.vp, self.mode, x, y)
    }

    fn tooltip_text(&self, hit: Hit) -> Option<String> {
        let t = self.timeline.as_ref()?;
        match hit {
            Hit::Entry { lane, entry } => {
                let l = t.lanes.get(lane)?;
                let e = l.entries.get(entry)?;
                let mut s = if l.clustered {
                    format!("{} · index {} · term {}", l.name, e.index, e.term)
                } else {
                    format!("{} · transaction {}", l.name, e.index)
                };
                if !e.has_data {
                    s.push_str("\nRaft-internal entry (no data)");
                }
                if e.superseded {
                    s.push_str("\nreplaced by a later entry");
                }
                if let Some(c) = &e.comment {
                    s.push_str("\n“");
                    s.push_str(c);
                    s.push('”');
                }
                if let Some(d) = e.date_ms {
                    s.push('\n');
                    s.push_str(&utc_datetime(d));
                    s.push_str(" UTC");
                }
                s.push_str(&format!(
                    "\n{} tables, {} rows · {} {}",
                    e.tables,
                    e.rows,
                    e.sizes
                        .get(self.mode)
                        .map_or("size not computed".to_string(), |b| human_bytes(b as f64)),
                    self.mode.label()
                ));
                Some(s)
            }
            Hit::Band { lane, band } => {
                let b = t.lanes.get(lane)?.bands.get(band)?;
                let mut s = format!("term {} (indexes {}–{})", b.term, b.start, b.end);
                if self.axis.mode == AxisMode::Time {
                    if let Some(&(p0, p1)) =
                        self.axis.lanes.get(lane).and_then(|a| a.bands.get(band))
                    {
                        s.push('\n');
                        s.push_str(&utc_datetime(p0.round() as i64));
                        s.push_str(" – ");
                        s.push_str(&utc_datetime(p1.round() as i64));
                        s.push_str(" UTC");
                    }
                }
                if let Some(l) = &b.leader {
                    s.push_str("\nleader ");
                    s.push_str(l);
                }
                if let Some(v) = &b.vote {
                    s.push_str("\nvoted for ");
                    s.push_str(v);
                }
                Some(s)
            }
        }
    }

    pub(super) fn inspect(&mut self, lane: usize, entry: usize) {
        let Some(t) = &self.timeline else { return };
        let Some(e) = t.lanes.get(lane).and_then(|l| l.entries.get(entry)) else {
            return;
        };
        self.selected = Some((lane, entry));
        self.cursor = self.selected;
        self.detail = None;
        if let Some(w) = &self.worker {
            let msg = Object::new();
            let _ = Reflect::set(&msg, &"type".into(), &"inspect".into());
            let _ = Reflect::set(&msg, &"lane".into(), &(lane as f64).into());
            if let Some(l) = t.lanes.get(lane) {
                let _ = Reflect::set(&msg, &"name".into(), &l.name.as_str().into());
            }
            let _ = Reflect::set(&msg, &"record".into(), &(e.record as f64).into());
            let _ = Reflect::set(&msg, &"offset".into(), &(e.offset as f64).into());
            let _ = w.post_message(&msg);
        }
        self.update_hash();
    }

    pub(super) fn listen_window(&mut self, ctx: &Context<Self>) {
        use gloo_events::EventListener;
        let window = gloo_utils::window();
        let link = ctx.link().clone();
        // Not passive: the key handler takes the keys it uses from the page.
        self.listeners.push(EventListener::new_with_options(
            &window,
            "keydown",
            gloo_events::EventListenerOptions::enable_prevent_default(),
            move |ev| link.send_message(Msg::Key(ev.clone().unchecked_into())),
        ));
        let link = ctx.link().clone();
        self.listeners
            .push(EventListener::new(&window, "resize", move |_| {
                link.send_message(Msg::Resize)
            }));
        // A link pasted into an open page: follow its entry.
        let link = ctx.link().clone();
        self.listeners
            .push(EventListener::new(&window, "hashchange", move |_| {
                link.send_message(Msg::HashChanged)
            }));
    }

    pub(super) fn listen_wheel(&mut self, ctx: &Context<Self>) {
        use gloo_events::{EventListener, EventListenerOptions};
        // Wheel must not be passive so the page does not scroll while zooming.
        let Some(canvas) = self.canvas.cast::<HtmlCanvasElement>() else {
            return;
        };
        if self.wheel.as_ref().is_some_and(|(c, _)| *c == canvas) {
            return;
        }
        let link = ctx.link().clone();
        let gutter = Layout::new(1000.0).gutter;
        let wheel = EventListener::new_with_options(
            &canvas,
            "wheel",
            EventListenerOptions::enable_prevent_default(),
            move |ev| {
                let ev: &WheelEvent = ev.unchecked_ref();
                ev.prevent_default();
                let target: Option<HtmlElement> = ev.target().and_then(|t| t.dyn_into().ok());
                let width = target.map_or(1000.0, |t| t.client_width() as f64);
                let anchor = (ev.offset_x() as f64 - gutter) / (width - gutter).max(1.0);
                let factor = if ev.delta_y() < 0.0 { 1.25 } else { 0.8 };
                link.send_message(Msg::Zoom { factor, anchor });
            },
        );
        self.wheel = Some((canvas, wheel));
    }

    pub(super) fn pointer_move(&mut self, x: f64, y: f64, buttons: u16) -> bool {
        if let (Some(from), true) = (self.drag_from, buttons & 1 == 1) {
            let dx = x - from;
            if dx.abs() >= 1.0 {
                self.dragged = true;
                self.drag_from = Some(x);
                self.vp.pan(-dx / self.layout().plot_width());
                self.dirty = true;
                self.tooltip = None;
                return true;
            }
            return false;
        }
        let hit = self.hit(x, y);
        let track = if hit.is_none() {
            self.track_at(x, y)
        } else {
            None
        };
        // A term band, or a log election event, links its term.
        let term = match hit {
            Some(Hit::Band { lane, band }) => self
                .timeline
                .as_ref()
                .and_then(|t| t.lanes.get(lane)?.bands.get(band))
                .map(|b| b.term),
            _ => track.as_ref().and_then(|h| h.term),
        };
        if term != self.hover_term {
            self.hover_term = term;
            self.dirty = true;
        }
        let tip = hit
            .and_then(|h| self.tooltip_text(h))
            .or_else(|| track.map(|h| h.tip))
            .or_else(|| {
                // A lane's label: its whole name (the label may be short).
                let t = self.timeline.as_ref()?;
                let lane = self.layout().gutter_lane(t.lanes.len(), x, y)?;
                Some(t.lanes[lane].name.clone())
            });
        self.tooltip = tip.map(|text| Tooltip { x, y, text });
        true
    }

    pub(super) fn pointer_up(&mut self, x: f64, y: f64) -> bool {
        let was_drag = self.dragged;
        self.drag_from = None;
        self.dragged = false;
        if was_drag {
            self.update_hash();
            return false;
        }
        if let Some(Hit::Entry { lane, entry }) = self.hit(x, y) {
            self.inspect(lane, entry);
            return true;
        }
        self.click_track(x, y)
    }

    /// The keyboard's pointer on the focused timeline: moves the entry it
    /// points at by `lanes` lanes (the nearest entry there) or `entries`
    /// entries along its lane (from the first lane's entry nearest the
    /// view's left edge when it points at none), brings it into view and
    /// shows its tooltip, as hovering it does. Enter or Space then
    /// inspects it, as a click does.
    fn move_cursor(&mut self, lanes: isize, entries: isize) -> bool {
        let Some(t) = self.timeline.clone() else {
            return false;
        };
        let at = |l: usize, e: usize| self.axis.lanes.get(l)?.entries.get(e).copied();
        // The entry of lane `l` nearest to position `p`.
        let nearest = |l: usize, p: f64| {
            (0..t.lanes.get(l)?.entries.len())
                .min_by(|&a, &b| {
                    let d = |e| (at(l, e).unwrap_or(f64::MAX) - p).abs();
                    d(a).total_cmp(&d(b))
                })
                .map(|e| (l, e))
        };
        let next = match self.cursor {
            Some((l, e)) if lanes == 0 => t.lanes.get(l).and_then(|lane| {
                let e = e.saturating_add_signed(entries);
                (e < lane.entries.len()).then_some((l, e))
            }),
            Some((l, e)) => at(l, e).and_then(|p| nearest(l.checked_add_signed(lanes)?, p)),
            None => nearest(0, self.vp.start),
        };
        let Some((l, e)) = next.or(self.cursor) else {
            return false;
        };
        self.cursor = Some((l, e));
        let p = at(l, e).unwrap_or_default();
        if p < self.vp.start || p > self.vp.end {
            self.vp.set_zoom_level(self.vp.zoom_level(), p);
            self.dirty = true;
        }
        let layout = self.layout();
        let x = layout.gutter + self.vp.x_of(p, layout.plot_width());
        let y = layout.lane_top(l) + layout.band + layout.ticks / 2.0;
        self.tooltip = self
            .tooltip_text(Hit::Entry { lane: l, entry: e })
            .map(|text| Tooltip { x, y, text });
        true
    }

    pub(super) fn key(&mut self, ctx: &Context<Self>, ev: KeyboardEvent) -> bool {
        let tag = crate::shell::key_target(&ev);
        if crate::shell::typing(&tag) {
            return false;
        }
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return false;
        }
        if self.timeline.is_some() && ev.key() == "v" {
            ctx.link().send_message(Msg::ShowContents(!self.contents));
            return false;
        }
        if self.contents && self.timeline.is_some() {
            // The Contents page has keys of its own.
            match ev.key().as_str() {
                "?" => ctx.link().send_message(Msg::ToggleHelp),
                "Escape" if self.help => ctx.link().send_message(Msg::ToggleHelp),
                "/" => {
                    ev.prevent_default();
                    focus("[data-testid=search]");
                }
                _ => {}
            }
            return false;
        }
        if tag == "canvas" {
            // The focused timeline: the keys point at entries (move_cursor).
            let (lanes, entries) = match ev.key().as_str() {
                "ArrowLeft" => (0, -1),
                "ArrowRight" => (0, 1),
                "ArrowUp" => (-1, 0),
                "ArrowDown" => (1, 0),
                "Enter" | " " => {
                    ev.prevent_default();
                    if self.cursor.is_none() {
                        self.move_cursor(0, 0);
                    }
                    if let Some((l, e)) = self.cursor {
                        self.inspect(l, e);
                    }
                    return true;
                }
                _ => (0, 0),
            };
            if (lanes, entries) != (0, 0) {
                ev.prevent_default();
                return self.move_cursor(lanes, entries);
            }
        }
        let msg = match ev.key().as_str() {
            "?" => Msg::ToggleHelp,
            "Escape" if self.help => Msg::ToggleHelp,
            "ArrowLeft" => Msg::Pan(-0.1),
            "ArrowRight" => Msg::Pan(0.1),
            "+" | "=" => Msg::Zoom {
                factor: 1.5,
                anchor: 0.5,
            },
            "-" | "_" => Msg::Zoom {
                factor: 1.0 / 1.5,
                anchor: 0.5,
            },
            "0" => Msg::Reset,
            "s" => Msg::SetMode(SizeView::Stored),
            "f" => Msg::SetMode(SizeView::Full),
            "d" => Msg::SetMode(SizeView::Diff),
            "l" => Msg::ToggleLog,
            "t" => Msg::SetAxis(match self.axis.mode {
                AxisMode::Index => AxisMode::Time,
                AxisMode::Time => AxisMode::Index,
            }),
            "c" => Msg::ToggleLaneStatus,
            "n" | "j" => Msg::StepFinding(1),
            "p" | "k" => Msg::StepFinding(-1),
            _ => return false,
        };
        ev.prevent_default();
        <Self as Component>::update(self, ctx, msg)
    }
}

/// Focuses (and so scrolls into view) the first element `selector` finds:
/// the Contents page's search field (the `/` key), the first finding.
pub(super) fn focus(selector: &str) {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(selector).ok().flatten())
        .and_then(|e| e.dyn_into::<HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}
