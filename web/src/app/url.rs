//! The view in the URL's hash: written as it changes (at most every
//! [`VIEW_HASH_MS`] while panning and zooming), followed when edited by hand.

use timeline::axis::AxisMode;
use wasm_bindgen::prelude::*;
use yew::prelude::*;

use super::{now, App, Msg};
use crate::hash::{self, HashState};

/// The shortest time between two writes of the view into the URL's hash
/// while panning and zooming (ms).
const VIEW_HASH_MS: f64 = 150.0;

impl App {
    /// The URL's hash after a pan or zoom: written at once when the last
    /// write is older than [`VIEW_HASH_MS`], else at the first animation
    /// frame after that time.
    /// Holding an arrow key pans 30 times a second, and each
    /// `history.replaceState` costs a few ms; Chromium also ignores them
    /// past a few hundred in 10 s.
    pub(super) fn update_view_hash(&mut self, ctx: &Context<Self>) {
        if self.view_hash.is_some() {
            return;
        }
        if now() - self.hash_written >= VIEW_HASH_MS {
            self.update_hash();
            return;
        }
        // Asked again at the next frames until the time is up.
        let link = ctx.link().clone();
        self.view_hash = Some(gloo_render::request_animation_frame(move |_| {
            link.send_message(Msg::WriteViewHash)
        }));
    }

    pub(super) fn update_hash(&mut self) {
        self.hash_written = now();
        let state = HashState {
            sample: self.sample.clone(),
            mode: Some(self.mode),
            axis: (self.axis.mode == AxisMode::Time).then_some(AxisMode::Time),
            zoom: Some(self.vp.zoom_level()),
            center: Some(self.vp.center()),
            contents: self.contents,
            lane: self.contents.then_some(self.contents_lane),
            contents_at: self.contents.then_some(self.contents_at).flatten(),
            plotters: self.plotters,
            workers: self.workers,
            entry: self.selected.and_then(|(li, ei)| {
                let t = self.timeline.as_ref()?;
                Some((li, t.lanes.get(li)?.entries.get(ei)?.index))
            }),
        };
        if let Some(w) = web_sys::window() {
            if let Ok(h) = w.history() {
                let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&hash::format(&state)));
            }
        }
    }

    /// The URL's hash changed by hand (not by the page): open the entry it
    /// names, when it names another one.
    pub(super) fn follow_hash(&mut self) -> bool {
        let h = web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .map(|h| hash::parse(&h))
            .unwrap_or_default();
        if h.plotters != self.plotters {
            self.plotters = h.plotters;
            self.dirty = true;
            return true;
        }
        let Some((li, index)) = h.entry else {
            return false;
        };
        let Some(t) = self.timeline.clone() else {
            return false;
        };
        let current = self
            .selected
            .and_then(|(l, e)| Some((l, t.lanes.get(l)?.entries.get(e)?.index)));
        if current == Some((li, index)) {
            return false;
        }
        match t
            .lanes
            .get(li)
            .and_then(|l| l.entries.iter().rposition(|e| e.index == index))
        {
            Some(ei) => self.inspect(li, ei),
            None => {
                self.notice = Some(format!(
                    "The link asks for index {index} of file {li}, which these files do not have."
                ))
            }
        }
        true
    }
}
