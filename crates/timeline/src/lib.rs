//! The timeline view model shared by the web app and the CLI.
//!
//! Built from `ovsdb-log`'s reader and summaries, it holds everything the
//! renderer needs as plain data: one [`Lane`] per file (server), with entries,
//! term bands, leaders, votes, commit progress, markers, per-entry sizes in
//! each [`SizeView`] and the cumulative file size; a [`Viewport`] for
//! zoom/pan; a [`Layout`] that maps lanes to pixel rows and answers
//! hit-testing; and per-pixel-column aggregation so drawing 100k entries stays
//! cheap. Sans-IO: it takes bytes and returns values, and never draws.

pub mod axis;
pub mod inspect;
pub mod load;
pub mod model;
pub mod time;
pub mod view;
pub mod wire;

pub use inspect::{inspect_record, EntryDetail, InspectedColumn, InspectedRow, TableChange};
pub use model::{
    build_lane, build_timeline, CheckResult, ClusterInfo, CommitPoint, Entry, Lane, LaneSummary,
    Marker, MarkerKind, ServerInfo, SizeView, Sizes, TermBand, TermInfo, Timeline, Truncation,
};
pub use view::{Column, Hit, LaneIndex, Layout, PixelColumn, Viewport};
