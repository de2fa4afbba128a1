//! The database files of a diagnosis, read as they stream out of the
//! collector: each file goes once through `timeline::load` (summary, lane
//! and cluster check in one walk) and nothing of its bytes is kept. A copy
//! of a file already read (the same records, by their SHA-1s) is used once.

use crate::collect::{DatabaseSink, Ignored};
use timeline::load::{FileEnd, FileLoad, Fingerprint, Loaded, TimelineLoad};
use timeline::Timeline;

/// A database file that made it onto the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct DbFile {
    pub path: String,
    pub bytes: u64,
    /// Its lane in the timeline.
    pub lane: usize,
}

/// The sink the collector streams database files into; also takes files
/// held in memory ([`Databases::add_bytes`]).
pub struct Databases {
    load: TimelineLoad,
    current: Option<(String, FileLoad)>,
    files: Vec<DbFile>,
    seen: Vec<(Fingerprint, String)>,
    ignored: Vec<Ignored>,
}

/// What [`Databases::finish`] gives.
pub struct DatabasesRead {
    pub timeline: Timeline,
    pub files: Vec<DbFile>,
    /// Copies used once, and files whose bytes did not count.
    pub ignored: Vec<Ignored>,
    /// The checkpoints of each file's replay, by lane name, when asked
    /// for ([`Databases::with_checkpoints`]).
    pub checkpoints: Vec<(String, Box<ovsdb_log::checkpoint::Checkpoints>)>,
}

impl Databases {
    /// `check`: run the cluster check in the same walk.
    pub fn new(check: bool) -> Databases {
        Databases {
            load: TimelineLoad::new(check),
            current: None,
            files: Vec::new(),
            seen: Vec::new(),
            ignored: Vec::new(),
        }
    }

    /// Only the cluster check of the files, for a second worker: see
    /// [`Databases::finish_check`].
    pub fn check_only() -> Databases {
        Databases {
            load: TimelineLoad::check_only(),
            ..Databases::new(true)
        }
    }

    /// Each file's walk keeps checkpoints of its replay, for later jumps
    /// to any of its entries (see [`DatabasesRead::checkpoints`]).
    pub fn with_checkpoints(mut self, policy: ovsdb_log::checkpoint::Policy) -> Databases {
        self.load = self.load.with_checkpoints(policy);
        self
    }

    /// A whole file in memory (with a second walk when the sizes need one).
    pub fn add_bytes(&mut self, path: &str, bytes: &[u8], progress: &mut dyn FnMut(u64)) {
        let l = self.load.load_bytes(path, bytes, progress);
        self.take(path, l);
    }

    fn take(&mut self, path: &str, l: Loaded) {
        if let Some((_, first)) = self.seen.iter().find(|(fp, _)| *fp == l.fingerprint) {
            self.ignored.push(Ignored {
                path: path.to_string(),
                reason: format!("same content as {first}, used once"),
            });
            self.load.discard(l);
            return;
        }
        self.seen.push((l.fingerprint, path.to_string()));
        self.files.push(DbFile {
            path: path.to_string(),
            bytes: l.fingerprint.bytes,
            lane: self.load.len(),
        });
        self.load.add(l);
    }

    /// The timeline so far (files taken, and the one being read as its
    /// last lane), for a page to draw while the load goes on. Copies of
    /// files already taken are not told apart yet. It copies the lanes:
    /// call it now and then, not per chunk.
    pub fn preview(&self) -> Timeline {
        self.load.preview(self.current.as_ref().map(|(_, f)| f))
    }

    /// The cluster check of every file taken (copies used once, as in
    /// [`Databases::finish`]): what a load of the same inputs without its
    /// own check puts on its timeline with `Timeline::apply_check`.
    pub fn finish_check(mut self) -> timeline::model::CheckResult {
        if self.current.is_some() {
            self.end(true);
        }
        self.load.finish_check()
    }

    /// The timeline of every file taken.
    pub fn finish(mut self) -> DatabasesRead {
        if self.current.is_some() {
            self.end(true);
        }
        let checkpoints = self.load.take_checkpoints();
        DatabasesRead {
            timeline: self.load.finish(),
            files: self.files,
            ignored: self.ignored,
            checkpoints,
        }
    }
}

impl DatabaseSink for Databases {
    fn begin(&mut self, path: &str) {
        if self.current.is_some() {
            self.end(true);
        }
        self.current = Some((path.to_string(), self.load.begin(path)));
    }

    fn chunk(&mut self, bytes: &[u8]) {
        if let Some((_, f)) = self.current.as_mut() {
            f.push(self.load.checker(), bytes);
        }
    }

    fn end(&mut self, keep: bool) {
        let Some((path, f)) = self.current.take() else {
            return;
        };
        let l = match f.finish(self.load.checker()) {
            FileEnd::Done(l) => *l,
            // The bytes are gone: a log that replaced entries it had
            // applied (or held more than the one-pass replay holds) gets
            // no full/diff sizes.
            FileEnd::Again(again) => again.without_sizes(),
        };
        if keep {
            self.take(&path, l);
        } else {
            self.load.discard(l);
        }
    }
}
