//! The guided training tour: each step opens a run at a chosen moment with
//! a caption. Next/Back buttons and a presenter's clicker (space, arrows,
//! PageUp/PageDown) move between steps.

use simview::{Route, RunSpec};
use yew::prelude::*;

use super::page::SimPage;
use super::replace_hash;

pub struct Step {
    pub title: &'static str,
    pub caption: &'static str,
    pub spec: fn() -> RunSpec,
    pub at_ms: u64,
    /// Width of the visible window, ms.
    pub window_ms: f64,
}

fn spec(name: &str, profile: Option<&str>, sets: &[(&str, &str)]) -> RunSpec {
    let mut s = RunSpec::preset(name);
    s.profile = profile.map(str::to_string);
    s.sets = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    s
}

pub const STEPS: &[Step] = &[
    Step {
        title: "1. Election",
        caption: "Three servers start as followers. When a follower hears nothing for an election \
                  timeout (here 1 s plus a random part), it asks the others for a pre-vote, then for \
                  votes (red lines). The first to get a majority becomes leader (gold band) and starts \
                  sending heartbeats (ticks).",
        spec: || spec("leader-kill", None, &[]),
        at_ms: 1578,
        window_ms: 6.0,
    },
    Step {
        title: "2. A write through a follower",
        caption: "The client talks to a follower, not to the leader (gold). The follower forwards the transaction to the \
                  leader (green), the leader appends it to its log and replicates it (blue); once a \
                  majority has it on disk, it is committed (green step line) and the reply travels back.",
        spec: || spec("ls-add-follower", Some("v2.12"), &[("n", "10")]),
        at_ms: 1676,
        window_ms: 16.0,
    },
    Step {
        title: "3. Why the follower waits for the commit index",
        caption: "The follower may answer its client only once it knows the entry is committed. Before \
                  the fix (v2.12-pre-sync) it learnt the new commit index only from the next heartbeat, so \
                  each write waited about a third of a second: look at the client lane. The A/B tab \
                  compares 100 such writes: about 34 s against half a second.",
        spec: || spec("ls-add-follower", Some("v2.12-pre-sync"), &[("n", "10")]),
        at_ms: 2000,
        window_ms: 700.0,
    },
    Step {
        title: "4. Diff against full storage",
        caption: "Each acl-add rewrites a port group's acls column. With full values (this run, \
                  column_diff=false) every log entry carries the whole growing set: the entry bars grow. \
                  With column diffs only the added ACL is written. The A/B 'full-vs-diff' compares bytes.",
        spec: || spec("acl-portgroup", None, &[("n", "150"), ("column_diff", "false")]),
        at_ms: 2200,
        window_ms: 600.0,
    },
    Step {
        title: "5. Leader failover",
        caption: "The leader is killed (dark band). The followers stop hearing heartbeats, wait one \
                  election timeout, and elect a new leader in a higher term. Clients see no leader \
                  meanwhile: that gap is the leaderless time.",
        spec: || spec("election-timer", None, &[]),
        at_ms: 14_000,
        window_ms: 2500.0,
    },
];

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
            let listener = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::KeyboardEvent)>::new(
                move |e: web_sys::KeyboardEvent| {
                    let tag = e
                        .target()
                        .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
                        .map(|el| el.tag_name())
                        .unwrap_or_default();
                    if matches!(tag.as_str(), "INPUT" | "TEXTAREA" | "SELECT") {
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
            let win = web_sys::window();
            if let Some(w) = &win {
                let _ = w.add_event_listener_with_callback_and_bool(
                    "keydown",
                    wasm_bindgen::JsCast::unchecked_ref(listener.as_ref()),
                    true,
                );
            }
            move || {
                if let Some(w) = win {
                    let _ = w.remove_event_listener_with_callback_and_bool(
                        "keydown",
                        wasm_bindgen::JsCast::unchecked_ref(listener.as_ref()),
                        true,
                    );
                }
                drop(listener);
            }
        });
    }
    let s = &STEPS[*step - 1];
    let spec = (s.spec)();
    let back = go.reform(|_: MouseEvent| -1);
    let next = go.reform(|_: MouseEvent| 1);
    html! {
        <div class="tour">
            <section class="caption" aria-live="polite">
                <div class="tour-nav">
                    <button data-testid="tour-back" onclick={back} disabled={*step == 1}>{ "◀ Back" }</button>
                    <span data-testid="tour-step" data-value={step.to_string()}>{ format!(" Step {} of {} ", *step, STEPS.len()) }</span>
                    <button data-testid="tour-next" onclick={next} disabled={*step == STEPS.len()}>{ "Next ▶" }</button>
                    <span class="hint">{ " keys: space / → / PageDown next, ← / PageUp back" }</span>
                </div>
                <h2 data-testid="tour-title">{ s.title }</h2>
                <p data-testid="tour-caption">{ s.caption }</p>
            </section>
            <SimPage key={*step} spec={spec} t_us={Some(s.at_ms * 1000)} embedded=true window_ms={Some(s.window_ms)} />
        </div>
    }
}
