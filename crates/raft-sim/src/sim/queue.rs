//! The simulator's pending events, earliest first.
//!
//! A binary min-heap of small keys (time, sequence number, slot) over a
//! slab of the events themselves, so sifting never moves a message. The
//! heap knows where each slot's key is, which lets a pending event move to
//! another time in place: a server or relay whose wake-up changes moves its
//! one pending wake-up instead of leaving the superseded one in the queue,
//! to be popped later as a no-op.
//!
//! Keys are unique (the sequence numbers are), so the pop order is the
//! sort order of `(time, sequence)` whatever the heap's shape.

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

impl Key {
    fn at(&self) -> Time {
        (self.order >> 64) as Time
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct Queue {
    heap: Vec<Key>,
    /// Where each occupied slot's key is in `heap`.
    pos: Vec<usize>,
    slots: Vec<Option<Ev>>,
    free: Vec<usize>,
}

impl Queue {
    /// Queue `ev` at `at` with sequence number `seq`. If `previous` (the
    /// place an earlier push returned) still holds that event, the event is
    /// moved and replaced instead: the queue is then as if it had never
    /// been pushed. Returns the new event's place.
    pub(super) fn push(&mut self, previous: Place, at: Time, seq: u64, ev: Ev) -> Place {
        let order = (at as u128) << 64 | seq as u128;
        let (heap, pos) = (self.heap.as_mut_slice(), self.pos.as_slice());
        if let Some(held @ Some(_)) = self.slots.as_mut_slice().get_mut(previous.0) {
            let i = pos[previous.0];
            if heap[i].order as u64 == previous.1 {
                *held = Some(ev);
                heap[i].order = order;
                self.sift(i);
                return (previous.0, seq);
            }
        }
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(ev);
                i
            }
            None => {
                self.slots.push(Some(ev));
                self.pos.push(0);
                self.slots.len() - 1
            }
        };
        self.heap.push(Key { order, slot });
        self.sift(self.heap.len() - 1);
        (slot, seq)
    }

    /// The earliest event. (Inlined into the loop's step, its one caller.)
    #[inline]
    pub(super) fn pop(&mut self) -> Option<Queued> {
        let last = self.heap.pop()?;
        let top = match self.heap.first_mut() {
            Some(first) => {
                let top = std::mem::replace(first, last);
                self.sift(0);
                top
            }
            None => last,
        };
        let ev = self.slots.get_mut(top.slot)?.take()?;
        self.free.push(top.slot);
        Some(Queued { at: top.at(), ev })
    }

    /// When the next event is due.
    pub(super) fn next_at(&self) -> Option<Time> {
        self.heap.first().map(Key::at)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub(super) fn clear(&mut self) {
        self.heap.clear();
        self.pos.clear();
        self.slots.clear();
        self.free.clear();
    }

    /// Put the key at `i` where it belongs: up towards the root while it
    /// is earlier than its parent, else down while a child is earlier.
    /// (Indexing slices, not the `Vec`s: at the worker's opt-level a
    /// `Vec`'s index is a call.)
    fn sift(&mut self, mut i: usize) {
        let (heap, pos) = (self.heap.as_mut_slice(), self.pos.as_mut_slice());
        let key = heap[i];
        let n = heap.len();
        let up = i > 0 && key.order < heap[(i - 1) / 2].order;
        loop {
            let next = if up {
                if i == 0 {
                    break;
                }
                (i - 1) / 2
            } else {
                let left = 2 * i + 1;
                if left >= n {
                    break;
                }
                let right = left + 1;
                if right < n && heap[right].order < heap[left].order {
                    right
                } else {
                    left
                }
            };
            let other = heap[next];
            if (key.order < other.order) != up {
                break;
            }
            heap[i] = other;
            pos[other.slot] = i;
            i = next;
        }
        heap[i] = key;
        pos[key.slot] = i;
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
