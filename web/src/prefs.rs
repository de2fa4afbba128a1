//! Small preferences kept across reloads in this browser's `localStorage`
//! (gloo-storage): the explorer's storage mode and view (timeline or
//! Contents) the user last chose, and whether opened files are kept (the
//! files themselves go to IndexedDB, `crate::store`). A link's hash wins
//! over them: they only fill in what the URL does not say.

use gloo_storage::{LocalStorage, Storage};
use timeline::SizeView;

const MODE_KEY: &str = "ovsdb-scope.mode";
const VIEW_KEY: &str = "ovsdb-scope.view";
/// Stored as `1` when on (absent when off), as before gloo-storage.
const KEEP_KEY: &str = "ovsdb-scope.keep";

/// The storage mode last chosen, if any (and still a known one).
pub fn mode() -> Option<SizeView> {
    LocalStorage::get::<String>(MODE_KEY)
        .ok()
        .and_then(|n| SizeView::from_name(&n))
}

pub fn set_mode(m: SizeView) {
    let _ = LocalStorage::set(MODE_KEY, m.name());
}

/// Whether the Contents view (not the timeline) was the last one shown.
pub fn contents() -> bool {
    LocalStorage::get::<String>(VIEW_KEY).is_ok_and(|v| v == "contents")
}

pub fn set_contents(on: bool) {
    let _ = LocalStorage::set(VIEW_KEY, if on { "contents" } else { "timeline" });
}

/// Whether the user asked to keep files in this browser.
pub fn keep() -> bool {
    LocalStorage::get::<u8>(KEEP_KEY).is_ok_and(|v| v == 1)
}

pub fn set_keep(on: bool) {
    if on {
        let _ = LocalStorage::set(KEEP_KEY, 1u8);
    } else {
        LocalStorage::delete(KEEP_KEY);
    }
}
