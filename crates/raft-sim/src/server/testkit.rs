//! Harness for the unit tests beside each concern: servers made by the
//! real constructors, one handler call with a fresh [`Ctx`], and the
//! outbox it filled, one readable line per item.

use super::{Ctx, Msg, Out, Server, Time};
use crate::knobs::{Knobs, Profile};
use crate::rng::Rng;

pub(super) struct World {
    pub k: Knobs,
    pub rng: Rng,
    pub ids: u64,
}

impl World {
    pub fn new(k: Knobs) -> World {
        World {
            k,
            rng: Rng::new(7),
            ids: 100,
        }
    }

    /// The `main` profile's knobs.
    pub fn main() -> World {
        World::new(Knobs::for_profile(Profile::Main))
    }

    /// Servers 0..n of a freshly formed cluster, all in its configuration.
    pub fn cluster(&mut self, n: usize) -> Vec<Server> {
        let config = (1u64 << n) - 1;
        (0..n)
            .map(|id| Server::new_member(id, config, &self.k, 0, &mut self.rng))
            .collect()
    }

    /// Run `f` at `now` with an empty outbox and no CPU spent yet; returns
    /// what it asked the world to do.
    pub fn call(&mut self, now: Time, f: impl FnOnce(&mut Ctx)) -> Vec<Out> {
        let mut out = Vec::new();
        let mut cx = Ctx {
            now,
            cost: 0.0,
            k: &self.k,
            rng: &mut self.rng,
            out: &mut out,
            ids: &mut self.ids,
            disk_factor: 1.0,
            date_base_ms: 0,
            comment_prefix: "",
            reachable: u64::MAX,
            capture: false,
        };
        f(&mut cx);
        out
    }
}

/// One line per outbox item: `send 0->1 <message>` (departure time left
/// out; a snapshot by its index and term, a forwarded command by its op),
/// `record <kind>` (sizes left out), `fsync <ticket>`, else the item's
/// `Debug` form. `Proposed` (the loop's bookkeeping of install memos) is
/// left out.
pub(super) fn show(out: &[Out]) -> Vec<String> {
    out.iter()
        .filter(|o| !matches!(o, Out::Proposed { .. }))
        .map(|o| match o {
            Out::Send {
                from,
                to,
                msg: Msg::Snapshot { term, snap },
                ..
            } => format!(
                "send {from}->{to} Snapshot {{ term: {term}, index: {}, snap_term: {} }}",
                snap.index, snap.term
            ),
            Out::Send {
                from,
                to,
                msg: Msg::Exec { eid, prereq, txn },
                ..
            } => format!(
                "send {from}->{to} Exec {{ eid: {eid}, prereq: {prereq}, op: {:?} }}",
                txn.op
            ),
            Out::Send { from, to, msg, .. } => format!("send {from}->{to} {msg:?}"),
            Out::Record { kind, .. } => format!("record {kind:?}"),
            Out::FsyncDone { ticket, .. } => format!("fsync {ticket}"),
            o => format!("{o:?}"),
        })
        .collect()
}
