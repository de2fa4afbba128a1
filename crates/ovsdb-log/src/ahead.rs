//! Reading entries ahead of their replay, so that a caller with threads
//! can give the byte-level txn read ([`crate::rawtxn`]) to another core.
//!
//! The one-pass size replay ([`crate::shared_replay`], behind
//! [`crate::summary::Summarizer`]) holds each entry's `data` bytes until
//! the entry is known final, then reads its transaction and applies it.
//! The read (tables, rows, columns; UUID sets decoded into datums) needs
//! no database and no schema: [`Prepared::new`] does it on owned bytes and
//! gives a value that can cross threads. Given a [`ReadAhead`]
//! ([`crate::summary::Summarizer::read_ahead`]), the replay hands each
//! entry's bytes to it as the walk meets the entry, and takes the read
//! when it applies the entry; the results are the same as without it.
//!
//! This crate starts no thread: the caller's [`ReadAhead`] decides where
//! [`Prepared::new`] runs (the CLI runs it on a thread of its own).

use crate::rawtxn::{ColSrc, MemberSrc, RowSrc, TxnSrc};
use ovsdb::Datum;
use std::borrow::Cow;
use std::ops::Range;

/// An entry's `data` bytes, with their transaction read when the value
/// has the `[null, txn]` shape the byte-level reader takes. Owns
/// everything (it is `Send`).
pub struct Prepared {
    data: Vec<u8>,
    txn: Option<OwnedTxn>,
}

/// [`TxnSrc`] with byte ranges of `Prepared::data` for the borrowed parts.
struct OwnedTxn {
    members: Vec<(Range<usize>, OwnedMember)>,
    diff_mode: bool,
    has_flag: bool,
}

enum OwnedMember {
    Special,
    Table(Vec<(Range<usize>, OwnedRow)>),
    Other,
}

enum OwnedRow {
    Delete,
    Cols(Vec<OwnedCol>),
    Bad,
}

struct OwnedCol {
    name: Range<usize>,
    slice: Range<usize>,
    fast: Option<Datum>,
    canonical: bool,
}

impl Prepared {
    /// Reads `data` (a Raft entry's `data` value) as far as it can without
    /// a database.
    pub fn new(data: Vec<u8>) -> Prepared {
        let txn = crate::rawtxn::parse_raw_data(&data).and_then(|t| OwnedTxn::of(&data, t));
        Prepared { data, txn }
    }

    /// The bytes, not read.
    pub fn plain(data: Vec<u8>) -> Prepared {
        Prepared { data, txn: None }
    }

    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The transaction read ahead, borrowing the bytes (the decoded sets
    /// move into it): None when it was not read.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub(crate) fn take_src(&mut self) -> Option<TxnSrc<'_>> {
        let t = self.txn.take()?;
        t.into_src(&self.data)
    }
}

/// Where a borrowed slice of `base` starts and ends in it.
fn range_in(base: &[u8], part: &[u8]) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(base.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= base.len()).then_some(start..end)
}

fn name_in(base: &[u8], name: Cow<'_, str>) -> Option<Range<usize>> {
    match name {
        Cow::Borrowed(s) => range_in(base, s.as_bytes()),
        Cow::Owned(_) => None,
    }
}

impl OwnedTxn {
    fn of(base: &[u8], t: TxnSrc<'_>) -> Option<OwnedTxn> {
        let mut members = Vec::with_capacity(t.members.len());
        for (name, m) in t.members {
            let m = match m {
                MemberSrc::Special => OwnedMember::Special,
                MemberSrc::Other => OwnedMember::Other,
                MemberSrc::Table(rows) => {
                    let mut out = Vec::with_capacity(rows.len());
                    for (u, r) in rows {
                        let r = match r {
                            RowSrc::Delete => OwnedRow::Delete,
                            RowSrc::Bad => OwnedRow::Bad,
                            RowSrc::Cols(cols) => {
                                let mut oc = Vec::with_capacity(cols.len());
                                for (cn, src) in cols {
                                    let ColSrc::Raw {
                                        slice,
                                        fast,
                                        canonical,
                                    } = src
                                    else {
                                        return None;
                                    };
                                    oc.push(OwnedCol {
                                        name: name_in(base, cn)?,
                                        slice: range_in(base, slice)?,
                                        fast: fast.into_inner(),
                                        canonical,
                                    });
                                }
                                OwnedRow::Cols(oc)
                            }
                        };
                        out.push((name_in(base, u)?, r));
                    }
                    OwnedMember::Table(out)
                }
            };
            members.push((name_in(base, name)?, m));
        }
        Some(OwnedTxn {
            members,
            diff_mode: t.diff_mode,
            has_flag: t.has_flag,
        })
    }

    fn into_src(self, base: &[u8]) -> Option<TxnSrc<'_>> {
        let name = |r: Range<usize>| std::str::from_utf8(base.get(r)?).ok().map(Cow::Borrowed);
        let mut members = Vec::with_capacity(self.members.len());
        for (n, m) in self.members {
            let m = match m {
                OwnedMember::Special => MemberSrc::Special,
                OwnedMember::Other => MemberSrc::Other,
                OwnedMember::Table(rows) => {
                    let mut out = Vec::with_capacity(rows.len());
                    for (u, r) in rows {
                        let r = match r {
                            OwnedRow::Delete => RowSrc::Delete,
                            OwnedRow::Bad => RowSrc::Bad,
                            OwnedRow::Cols(cols) => {
                                let mut oc = Vec::with_capacity(cols.len());
                                for c in cols {
                                    oc.push((
                                        name(c.name)?,
                                        ColSrc::Raw {
                                            slice: base.get(c.slice)?,
                                            fast: std::cell::Cell::new(c.fast),
                                            canonical: c.canonical,
                                        },
                                    ));
                                }
                                RowSrc::Cols(oc)
                            }
                        };
                        out.push((name(u)?, r));
                    }
                    MemberSrc::Table(out)
                }
            };
            members.push((name(n)?, m));
        }
        Some(TxnSrc {
            members,
            diff_mode: self.diff_mode,
            has_flag: self.has_flag,
        })
    }
}

/// Where the reads ahead run (see the module documentation). Entries are
/// handed over in walk order, each with a number that grows; the replay
/// takes them back in the same order, but skips those it did not need
/// (entries replaced by a later one, or known from another file), whose
/// reads are dropped.
pub trait ReadAhead {
    /// Start reading entry `seq`'s `data` bytes.
    fn submit(&mut self, seq: u64, data: Vec<u8>);
    /// The read of entry `seq`, dropping the reads of earlier numbers not
    /// taken. `wait`: wait for it; else None when it is not done yet.
    /// None when waiting too means the read is lost (the replay then gives
    /// up as when an entry does not apply).
    fn take(&mut self, seq: u64, wait: bool) -> Option<Prepared>;
}

/// Reads done, in the order their entries were handed over: what a
/// [`ReadAhead`] keeps until the replay takes them.
#[derive(Default)]
pub struct Reads(std::collections::VecDeque<(u64, Prepared)>);

/// What [`Reads::take`] finds.
enum Taken {
    Read(Prepared),
    /// A later entry's read is there: this one's will never come.
    Gone,
    /// Not done yet.
    NotYet,
}

impl Reads {
    pub fn push(&mut self, seq: u64, read: Prepared) {
        self.0.push_back((seq, read));
    }

    pub fn extend(&mut self, reads: impl IntoIterator<Item = (u64, Prepared)>) {
        self.0.extend(reads);
    }

    /// The read of entry `seq` as [`ReadAhead::take`] gives it: while it
    /// is not there, `more` adds reads (false: none came, give up).
    pub fn take_or(
        &mut self,
        seq: u64,
        mut more: impl FnMut(&mut Reads) -> bool,
    ) -> Option<Prepared> {
        loop {
            match self.take(seq) {
                Taken::Read(p) => return Some(p),
                Taken::Gone => return None,
                Taken::NotYet => {}
            }
            if !more(self) {
                return None;
            }
        }
    }

    /// The read of entry `seq`, dropping the reads of earlier entries (the
    /// replay skipped them).
    fn take(&mut self, seq: u64) -> Taken {
        while let Some((s, p)) = self.0.pop_front() {
            if s == seq {
                return Taken::Read(p);
            }
            if s > seq {
                self.0.push_front((s, p));
                return Taken::Gone;
            }
        }
        Taken::NotYet
    }
}

/// A [`ReadAhead`] that reads each entry when it is handed over, on the
/// caller's thread (for tests: the replay's results must not depend on
/// where or when the reads are made). `lag`: a read is done only once
/// that many later entries were handed over, or when waited for.
#[derive(Default)]
pub struct InlineReadAhead {
    queue: std::collections::VecDeque<(u64, Vec<u8>)>,
    done: Reads,
    pub lag: usize,
    /// Reads made (for tests).
    pub reads: u64,
}

impl InlineReadAhead {
    /// Reads made `lag` entries behind the last handed over.
    pub fn with_lag(lag: usize) -> InlineReadAhead {
        InlineReadAhead {
            lag,
            ..Default::default()
        }
    }

    fn read_one(&mut self) -> bool {
        read_next(&mut self.queue, &mut self.reads, &mut self.done)
    }
}

/// Reads the first entry of `queue` into `done`; false when it is empty.
fn read_next(
    queue: &mut std::collections::VecDeque<(u64, Vec<u8>)>,
    reads: &mut u64,
    done: &mut Reads,
) -> bool {
    let Some((seq, data)) = queue.pop_front() else {
        return false;
    };
    *reads += 1;
    done.push(seq, Prepared::new(data));
    true
}

impl ReadAhead for InlineReadAhead {
    fn submit(&mut self, seq: u64, data: Vec<u8>) {
        self.queue.push_back((seq, data));
        while self.queue.len() > self.lag {
            self.read_one();
        }
    }

    fn take(&mut self, seq: u64, wait: bool) -> Option<Prepared> {
        let (queue, reads) = (&mut self.queue, &mut self.reads);
        self.done
            .take_or(seq, |done| wait && read_next(queue, reads, done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_ahead_txn_gives_back_what_the_bytes_say() {
        let data = br#"[null,{"Port_Group":{"6406d516-5d1a-46fc-84a6-77eefe27fd14":{"acls":["set",[["uuid","00000000-0000-0000-0000-000000000001"],["uuid","00000000-0000-0000-0000-000000000002"]]],"name":"pg1"}},"_date":1,"_comment":"x"}]"#.to_vec();
        let direct = crate::rawtxn::parse_raw_data(&data).expect("reads");
        let mut p = Prepared::new(data.clone());
        let ahead = p.take_src().expect("read ahead");
        assert_eq!(direct.members.len(), ahead.members.len());
        for ((n1, m1), (n2, m2)) in direct.members.iter().zip(&ahead.members) {
            assert_eq!(n1, n2);
            match (m1, m2) {
                (MemberSrc::Special, MemberSrc::Special) | (MemberSrc::Other, MemberSrc::Other) => {
                }
                (MemberSrc::Table(r1), MemberSrc::Table(r2)) => {
                    assert_eq!(r1.len(), r2.len());
                    for ((u1, r1), (u2, r2)) in r1.iter().zip(r2) {
                        assert_eq!(u1, u2);
                        let (RowSrc::Cols(c1), RowSrc::Cols(c2)) = (r1, r2) else {
                            panic!("rows differ");
                        };
                        for ((cn1, s1), (cn2, s2)) in c1.iter().zip(c2) {
                            assert_eq!(cn1, cn2);
                            let (
                                ColSrc::Raw {
                                    slice: a,
                                    fast: fa,
                                    canonical: ca,
                                },
                                ColSrc::Raw {
                                    slice: b,
                                    fast: fb,
                                    canonical: cb,
                                },
                            ) = (s1, s2)
                            else {
                                panic!("column sources differ");
                            };
                            assert_eq!(a, b);
                            assert_eq!(ca, cb);
                            assert_eq!(fa.take(), fb.take());
                        }
                    }
                }
                _ => panic!("members differ"),
            }
        }
        // Taken once; the bytes stay.
        assert!(p.take_src().is_none());
        assert_eq!(p.data(), &data[..]);
        // Another shape is kept as bytes.
        let mut q = Prepared::new(br#"[{"name":"x"},null]"#.to_vec());
        assert!(q.take_src().is_none());
    }

    #[test]
    fn the_inline_read_ahead_drops_what_is_skipped_and_waits_when_asked() {
        let mut r = InlineReadAhead::with_lag(2);
        for seq in 1..=4 {
            r.submit(seq, b"[null,{}]".to_vec());
        }
        // 1 and 2 were read (2 behind the last handed over).
        assert_eq!(r.reads, 2);
        assert!(r.take(3, false).is_none());
        assert!(r.take(3, true).is_some());
        assert!(r.take(2, true).is_none());
        assert!(r.take(4, true).is_some());
        assert!(r.take(5, true).is_none());
    }
}
