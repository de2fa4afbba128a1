//! The app shell: the tab bar (Explorer, Simulate, A/B, Tour, IDL) and the
//! router that shows the page the URL hash names (`simview::link::Route`),
//! beside the explorer (`app`) and the simulation pages (`sim`) rather
//! than inside either.

use simview::{parse_hash, Route};
use yew::prelude::*;

use crate::sim::{ab, idl_panel, page, tour};

fn current_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// The tag of the element a key went to, lower-cased (`input`, `canvas`,
/// …): the pages leave the keys typed into a field alone.
pub fn key_target(e: &web_sys::KeyboardEvent) -> String {
    e.target()
        .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
        .map(|t| t.tag_name().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Whether the key went to a field (input, select, textarea).
pub fn typing(tag: &str) -> bool {
    matches!(tag, "input" | "select" | "textarea")
}

/// The page: a tab bar and the view the URL hash asks for.
#[function_component(Shell)]
pub fn shell() -> Html {
    let hash = use_state(current_hash);
    {
        let hash = hash.clone();
        use_effect_with((), move |_| {
            let l =
                gloo_events::EventListener::new(&gloo_utils::window(), "hashchange", move |_| {
                    hash.set(current_hash())
                });
            move || drop(l)
        });
    }
    let route = parse_hash(&hash);
    let active = match &route {
        Route::Explorer => 0,
        Route::Sim { .. } => 1,
        Route::Ab { .. } => 2,
        Route::Tour { .. } => 3,
        Route::Idl { .. } => 4,
    };
    let tabs = [
        ("Explorer", "#", "tab-explorer"),
        ("Simulate", "#sim=ls-add-follower", "tab-sim"),
        ("A/B", "#ab=commit-sync", "tab-ab"),
        ("Tour", "#tour=1", "tab-tour"),
        ("IDL", "#idl=write-changed-only", "tab-idl"),
    ];
    let body = match route {
        Route::Explorer => html! { <crate::app::App /> },
        Route::Idl { params } => {
            let key = (*hash).clone();
            html! { <idl_panel::IdlPanel {key} {params} /> }
        }
        Route::Sim { spec, t_us } => {
            let key = (*hash).clone();
            html! { <page::SimPage {key} {spec} {t_us} /> }
        }
        Route::Ab { preset, seed } => {
            let key = (*hash).clone();
            html! { <ab::AbPage {key} {preset} {seed} /> }
        }
        Route::Tour { step } => html! { <tour::TourPage {step} /> },
    };
    html! {
        <>
            <nav class="modes" aria-label="Mode">
                { for tabs.iter().enumerate().map(|(i, (label, href, id))| html! {
                    <a href={*href} data-testid={*id}
                       class={classes!("mode", (i == active).then_some("active"))}>{ *label }</a>
                }) }
            </nav>
            { body }
        </>
    }
}
