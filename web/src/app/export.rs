//! Export: the timeline as a PNG, the cluster as the inspect JSON.

use js_sys::Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{HtmlCanvasElement, HtmlElement};

use super::App;

impl App {
    fn download(&self, href: &str, name: &str) {
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        if let Ok(a) = doc.create_element("a") {
            let _ = a.set_attribute("href", href);
            let _ = a.set_attribute("download", name);
            if let Ok(a) = a.dyn_into::<HtmlElement>() {
                a.click();
            }
        }
    }

    pub(super) fn export_png(&self) {
        if let Some(c) = self.canvas.cast::<HtmlCanvasElement>() {
            if let Ok(url) = c.to_data_url_with_type("image/png") {
                self.download(&url, "ovsdb-scope-timeline.png");
            }
        }
    }

    pub(super) fn export_json(&self) {
        let Some(t) = &self.timeline else { return };
        let parts = Array::of1(&JsValue::from_str(&t.cluster.inspect_json));
        let opts = web_sys::BlobPropertyBag::new();
        opts.set_type("application/json");
        if let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) {
            if let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) {
                self.download(&url, "ovsdb-scope-inspect.json");
                let _ = web_sys::Url::revoke_object_url(&url);
            }
        }
    }
}
