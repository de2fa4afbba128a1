//! The server's file: records written and their byte accounting, the
//! [`LogRec`]s captured for real `.db` files, and fsync tickets.

use super::{Ctx, Entry, EntryKind, Out, Server, Sid, Snap, Time};
use crate::txn;
use ovsdb::StorageMode;
use std::rc::Rc;

/// What a record write was, for the per-kind byte accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    Header,
    Entry,
    Term,
    Vote,
    Leader,
    Commit,
    Note,
}

/// One record of a server's clustered log file, captured (when
/// [`Ctx::capture`] is on) so that real `.db` files can be written.
#[derive(Clone, Debug)]
pub enum LogRec {
    /// The file starts: member (snapshot at index 1) or joining header.
    Create {
        joining: bool,
    },
    Entry {
        index: u64,
        entry: Entry,
    },
    Term {
        term: u64,
    },
    Vote {
        term: u64,
        vote: Sid,
    },
    Leader {
        term: u64,
        leader: Sid,
    },
    Commit {
        index: u64,
    },
    Note {
        note: &'static str,
    },
    /// The file is replaced by a new one whose header holds `snap`; the
    /// records that follow belong to the new file.
    Rewrite {
        snap: Rc<Snap>,
    },
}

impl Server {
    /// A record appended to the server's file.
    pub(super) fn record(&mut self, cx: &mut Ctx, kind: RecordKind, bytes: u64) {
        self.file_bytes += bytes;
        self.written(cx, kind, bytes, bytes);
    }

    /// An entry record of `bytes`, which would be `alt` bytes in the other
    /// storage mode (full values vs column diffs).
    pub(super) fn record_entry(&mut self, cx: &mut Ctx, bytes: u64, alt: u64) {
        self.file_bytes += bytes;
        self.written(cx, RecordKind::Entry, bytes, alt);
    }

    /// Bytes written to disk, appended or as a new file: their CPU cost and
    /// the world's accounting.
    pub(super) fn written(&self, cx: &mut Ctx, kind: RecordKind, bytes: u64, alt_bytes: u64) {
        cx.cpu(bytes);
        cx.out.push(Out::Record {
            server: self.id,
            kind,
            bytes,
            alt_bytes,
        });
    }

    /// The record of the current term, with the vote when there is one.
    pub(super) fn term_record(&self) -> LogRec {
        match self.vote {
            Some(v) => LogRec::Vote {
                term: self.term,
                vote: v,
            },
            None => LogRec::Term { term: self.term },
        }
    }

    pub(super) fn capture(&self, cx: &mut Ctx, rec: LogRec) {
        if cx.capture {
            cx.out.push(Out::Log {
                server: self.id,
                rec,
            });
        }
    }

    /// Bytes of the entry's record in the given storage mode.
    pub(super) fn entry_record_len(&self, e: &Entry, idx: u64, storage: StorageMode) -> u64 {
        match &e.kind {
            EntryKind::Noop => txn::noop_entry_len(e.term, idx),
            EntryKind::Data { txn, .. } => {
                txn::data_entry_len(txn.len(storage) as u64, e.term, idx)
            }
            EntryKind::Servers(s) => txn::servers_entry_len(s.count_ones() as u64, e.term, idx),
            EntryKind::ElectionTimer(us) => txn::et_entry_len(us / 1000, e.term, idx),
        }
    }

    pub(super) fn request_sync(&mut self, cx: &mut Ctx) -> u64 {
        self.ticket_req += 1;
        if !self.fsync_busy {
            self.start_fsync(cx, cx.at());
        }
        self.ticket_req
    }

    pub(super) fn start_fsync(&mut self, cx: &mut Ctx, at: Time) {
        self.fsync_busy = true;
        let jitter = cx.rng.below(cx.k.fsync_jitter + 1);
        let dur = ((cx.k.fsync + jitter) as f64 * self.disk_factor.max(0.0)) as u64;
        cx.out.push(Out::FsyncDone {
            server: self.id,
            at: at + dur.max(1),
            ticket: self.ticket_req,
        });
    }

    /// The afsync thread finished an fsync covering tickets up to `ticket`.
    pub fn fsync_done(&mut self, ticket: u64, cx: &mut Ctx) {
        self.ticket_done = self.ticket_done.max(ticket);
        while let Some(&(t, end)) = self.pending_writes.front() {
            if t > self.ticket_done {
                break;
            }
            self.durable_end = end;
            self.pending_writes.pop_front();
        }
        self.fsync_busy = false;
        if self.ticket_req > self.ticket_done {
            self.start_fsync(cx, cx.now);
        }
    }
}
