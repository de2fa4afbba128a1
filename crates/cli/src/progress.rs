//! The progress bar of long reads: drawn on stderr only when stderr is a
//! terminal and the work has taken over a second (never when piped, so
//! scripts and tests see nothing). One bar per process, advanced by the
//! readers of each area as bytes go by.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

struct Bar {
    bar: ProgressBar,
    start: Instant,
    on: bool,
}

static BAR: OnceLock<Bar> = OnceLock::new();

/// Starts the bar for `total` bytes of input (the sum of the files' sizes).
pub fn start(total: u64, what: &str) {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    let style = ProgressStyle::with_template(
        "{msg} {wide_bar} {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(what.to_string());
    let _ = BAR.set(Bar {
        bar,
        start: Instant::now(),
        on: std::io::stderr().is_terminal(),
    });
}

/// Starts the bar for the files at `paths` (unreadable ones count 0).
pub fn start_files<S: AsRef<str>>(paths: &[S], what: &str) {
    let total = paths
        .iter()
        .filter_map(|p| std::fs::metadata(p.as_ref()).ok())
        .map(|m| m.len())
        .sum();
    start(total, what);
}

/// `n` more bytes read.
pub fn advance(n: u64) {
    if let Some(b) = BAR.get() {
        b.bar.inc(n);
        if b.on && b.bar.is_hidden() && b.start.elapsed() >= Duration::from_secs(1) {
            b.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
}

/// Removes the bar (before the results are printed).
pub fn finish() {
    if let Some(b) = BAR.get() {
        b.bar.finish_and_clear();
    }
}

/// A reader that advances the bar by what it reads.
pub struct Reader<R>(pub R);

impl<R: std::io::Read> std::io::Read for Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        advance(n as u64);
        Ok(n)
    }
}
