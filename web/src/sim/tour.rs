//! The guided training tour (its steps are data: `simview::tour::STEPS`):
//! each step opens a run at a chosen moment with a caption. Next/Back
//! buttons and a presenter's clicker (space, arrows, PageUp/PageDown) move
//! between steps.

use simview::tour::STEPS;
use simview::Route;
use yew::prelude::*;

use super::page::SimPage;
use super::replace_hash;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub step: usize,
}

#[function_component(TourPage)]
pub fn tour_page(props: &Props) -> Html {
    let step = use_state(|| props.step.clamp(1, STEPS.len()));
    let go = {
        let step = step.clone();
        Callback::from(move |delta: i32| {
            let n = (*step as i32 + delta).clamp(1, STEPS.len() as i32) as usize;
            replace_hash(&Route::Tour { step: n }.to_hash());
            step.set(n);
        })
    };
    {
        let go = go.clone();
        use_effect_with(*step, move |_| {
            // In the capture phase, before the page's own keys.
            let options = gloo_events::EventListenerOptions {
                phase: gloo_events::EventListenerPhase::Capture,
                passive: false,
            };
            let listener = gloo_events::EventListener::new_with_options(
                &gloo_utils::window(),
                "keydown",
                options,
                move |e| {
                    let e: &web_sys::KeyboardEvent = wasm_bindgen::JsCast::unchecked_ref(e);
                    if crate::shell::typing(&crate::shell::key_target(e)) {
                        return;
                    }
                    let d = match e.key().as_str() {
                        " " | "ArrowRight" | "ArrowDown" | "PageDown" => 1,
                        "ArrowLeft" | "ArrowUp" | "PageUp" => -1,
                        _ => return,
                    };
                    e.prevent_default();
                    e.stop_propagation();
                    go.emit(d);
                },
            );
            move || drop(listener)
        });
    }
    let s = &STEPS[*step - 1];
    let spec = s.spec();
    let back = go.reform(|_: MouseEvent| -1);
    let next = go.reform(|_: MouseEvent| 1);
    html! {
        <div class="tour">
            <section class="caption" aria-live="polite">
                <div class="tour-nav">
                    <button data-testid="tour-back" title="Previous step (←)" onclick={back} disabled={*step == 1}>{ "◀ Back" }</button>
                    <span data-testid="tour-step" data-value={step.to_string()}>{ format!(" Step {} of {} ", *step, STEPS.len()) }</span>
                    <button data-testid="tour-next" title="Next step (space, →)" onclick={next} disabled={*step == STEPS.len()}>{ "Next ▶" }</button>
                    <span class="hint">{ " keys: space / → / PageDown next, ← / PageUp back" }</span>
                </div>
                <h1 data-testid="tour-title">{ s.title }</h1>
                <p data-testid="tour-caption">{ s.caption }</p>
                <p class="hint" data-testid="tour-run" data-profile={s.profile.unwrap_or_default()}>
                    { format!("Run: preset {}, profile {}", s.preset, s.profile.unwrap_or("of the preset")) }
                </p>
            </section>
            <SimPage key={*step} spec={spec} t_us={Some(s.at_ms * 1000)} embedded=true window_ms={Some(s.window_ms)}
                hide_messages={!s.draws_messages()} />
        </div>
    }
}
