//! The simulator's pending events, earliest first.
//!
//! Small keys (time, sequence number, slot) kept sorted, latest first,
//! over a slab of the events themselves, so ordering never moves a
//! message: the next event is the last key, popped in O(1), and a new one
//! is put in its place by a binary search. A run has few events pending
//! at once (two to six on average in the benchmarks, 140 at most in the
//! presets with their knobs pushed), where this does less work than a
//! heap, which also had to track each key's place. A pending event can
//! move to another time in place: a server or relay whose wake-up changes
//! moves its one pending wake-up instead of leaving the superseded one in
//! the queue, to be popped later as a no-op.
//!
//! Keys are unique (the sequence numbers are), so the pop order is the
//! sort order of `(time, sequence)`.

use super::Ev;
use crate::server::Time;

pub(super) struct Queued {
    pub(super) at: Time,
    pub(super) ev: Ev,
}

/// Where a pushed event waits: its slot and sequence number.
pub(super) type Place = (usize, u64);

/// No event: a `previous` place that never matches.
pub(super) const NOWHERE: Place = (usize::MAX, 0);

/// A pending event's place in the order: its time and sequence number
/// (`time << 64 | sequence`, compared in one go) and its slot.
#[derive(Clone, Copy, Debug)]
struct Key {
    order: u128,
    slot: usize,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Queue {
    /// Latest first: the next event is the last.
    keys: Vec<Key>,
    slots: Vec<Option<Ev>>,
    /// Each occupied slot's key order, which finds its key.
    order_of: Vec<u128>,
    free: Vec<usize>,
}

impl Queue {
    /// Queue `ev` at `at` with sequence number `seq`. If `previous` (the
    /// place an earlier push returned) still holds that event, the event is
    /// moved and replaced instead: the queue is then as if it had never
    /// been pushed. Returns the new event's place.
    pub(super) fn push(&mut self, previous: Place, at: Time, seq: u64, ev: Ev) -> Place {
        let order = (at as u128) << 64 | seq as u128;
        if let Some(held @ Some(_)) = self.slots.get_mut(previous.0) {
            let was = self.order_of[previous.0];
            if was as u64 == previous.1 {
                *held = Some(ev);
                self.order_of[previous.0] = order;
                let i = self.keys.partition_point(|k| k.order > was);
                self.keys.remove(i);
                self.insert(Key {
                    order,
                    slot: previous.0,
                });
                return (previous.0, seq);
            }
        }
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(ev);
                self.order_of[i] = order;
                i
            }
            None => {
                self.slots.push(Some(ev));
                self.order_of.push(order);
                self.slots.len() - 1
            }
        };
        self.insert(Key { order, slot });
        (slot, seq)
    }

    /// Put `key` where the order wants it.
    fn insert(&mut self, key: Key) {
        let i = self.keys.partition_point(|k| k.order > key.order);
        self.keys.insert(i, key);
    }

    /// The earliest event. (Inlined into the loop's step, its one caller.)
    #[inline]
    pub(super) fn pop(&mut self) -> Option<Queued> {
        let top = self.keys.pop()?;
        let ev = self.slots.get_mut(top.slot)?.take()?;
        self.free.push(top.slot);
        Some(Queued {
            at: (top.order >> 64) as Time,
            ev,
        })
    }

    /// When the next event is due.
    pub(super) fn next_at(&self) -> Option<Time> {
        self.keys.last().map(|k| (k.order >> 64) as Time)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub(super) fn clear(&mut self) {
        self.keys.clear();
        self.slots.clear();
        self.order_of.clear();
        self.free.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::{Ev, Queue, NOWHERE};

    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    fn req(ev: &Ev) -> u64 {
        let Ev::ClientArrive { req } = ev else {
            panic!("wrong event");
        };
        *req as u64
    }

    /// Pushes, pops and moves interleaved (a move of an event already
    /// popped being a push) come out in `(time, sequence)`
    /// order, as a sort of the keys pending at each pop would give them.
    #[test]
    fn the_queue_pops_in_time_then_sequence_order_and_moves_in_place() {
        let mut q = Queue::default();
        let (mut x, mut seq) = (0x9E37_79B9_7F4A_7C15u64, 0u64);
        // (time, sequence, slot) of what is pending, as the model.
        let mut pending: Vec<(u64, u64, usize)> = Vec::new();
        let mut popped = Vec::new();
        let mut expect = Vec::new();
        let mut gone = Vec::new();
        for round in 0..5_000u64 {
            xorshift(&mut x);
            // Few distinct times, so the sequence often decides.
            let pushes = (x % 4) as usize + usize::from(round < 100);
            for _ in 0..pushes {
                seq += 1;
                let at = (x >> 8) % 50 + round / 10;
                // Sometimes with the place of an event already popped,
                // whose slot may hold another event now: a new push.
                let previous = match gone.get((x >> 40) as usize % 8) {
                    Some(&g) if x.is_multiple_of(5) => g,
                    _ => NOWHERE,
                };
                let place = q.push(previous, at, seq, Ev::ClientArrive { req: seq as usize });
                assert_eq!(place.1, seq);
                pending.push((at, seq, place.0));
                x = x.rotate_left(11).wrapping_mul(0x2545_F491_4F6C_DD1D);
            }
            // Move one pending event, earlier or later.
            if xorshift(&mut x).is_multiple_of(3) && !pending.is_empty() {
                let k = (x >> 5) as usize % pending.len();
                seq += 1;
                let at = (x >> 20) % 60 + round / 10;
                let was = (pending[k].2, pending[k].1);
                let place = q.push(was, at, seq, Ev::ClientArrive { req: seq as usize });
                assert_eq!(place, (was.0, seq), "moved in place");
                pending[k] = (at, seq, place.0);
            }
            if (x >> 3) % 3 != 0 {
                if let Some(i) = (0..pending.len()).min_by_key(|&i| (pending[i].0, pending[i].1)) {
                    let (at, s, slot) = pending.swap_remove(i);
                    expect.push((at, s));
                    gone.push((slot, s));
                    let got = q.pop().expect("an event");
                    popped.push((got.at, req(&got.ev)));
                }
            }
            assert_eq!(
                q.next_at(),
                pending.iter().map(|p| (p.0, p.1)).min().map(|p| p.0)
            );
        }
        pending.sort();
        expect.extend(pending.iter().map(|p| (p.0, p.1)));
        while let Some(got) = q.pop() {
            popped.push((got.at, req(&got.ev)));
        }
        assert_eq!(popped, expect);
        assert!(q.is_empty());
    }
}
