//! A panic must never leave a dead, silent page: the hook logs it to the
//! console and writes a visible banner straight into the DOM (yew may be in an
//! inconsistent state after a panic, so the banner does not go through it).

use wasm_bindgen::JsCast;

pub fn install() {
    // Through yew, so that its renderer does not replace this hook with its
    // default (console only) one on first render.
    yew::set_custom_panic_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show_banner(&info.to_string());
    }));
}

fn show_banner(message: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Some(body) = doc.body() else { return };
    let Ok(el) = doc.create_element("div") else {
        return;
    };
    el.set_class_name("panic-banner");
    let _ = el.set_attribute("data-testid", "panic");
    let _ = el.set_attribute("role", "alert");
    // Text only: never interpret file-derived text as HTML.
    el.set_text_content(Some(&format!(
        "Internal error: ovsdb-scope crashed ({message}). Reload the page to continue; \
         please report this with the file that caused it."
    )));
    if let Some(first) = body.first_child() {
        let _ = body.insert_before(&el, Some(&first));
    } else {
        let _ = body.append_child(&el);
    }
    if let Ok(html) = el.dyn_into::<web_sys::HtmlElement>() {
        html.focus().ok();
    }
}
