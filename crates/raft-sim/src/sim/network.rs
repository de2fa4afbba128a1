//! The network between members: links with delay, jitter, bandwidth and
//! FIFO order, sending (loss, backlog limits, delivery events), which
//! members a server reaches, and cutting or resetting connections.

use super::{bit, Ev, EventKind, Sim, MAX_SERVERS};
use crate::knobs::Knobs;
use crate::rng::Rng;
use crate::server::{Life, Msg, MsgKind, Sid, Time};

#[derive(Clone, Debug, Default)]
pub(super) struct Link {
    pub(super) free_at: Time,
    pub(super) last_arrival: Time,
    pub(super) epoch: u64,
    pub(super) inflight: u64,
    pub(super) inflight_bytes: u64,
    pub(super) cut: bool,
    /// Extra one-way delay on this link (fault `link_delay`), µs.
    pub(super) extra_delay: u64,
}

impl Link {
    /// When a message of `bytes` handed to the link at `at` arrives: after
    /// the messages queued before it, its transmission at the bandwidth,
    /// the delay with jitter, and never before an earlier one (FIFO).
    pub(super) fn arrival(&mut self, k: &Knobs, rng: &mut Rng, bytes: u64, at: Time) -> Time {
        let tx = if k.bandwidth > 0.0 {
            (bytes as f64 / k.bandwidth) as u64
        } else {
            0
        };
        let depart = at.max(self.free_at);
        self.free_at = depart + tx;
        let jitter = if k.delay_jitter > 0 {
            rng.below(k.delay_jitter + 1)
        } else {
            0
        };
        (depart + tx + k.delay + self.extra_delay + jitter).max(self.last_arrival)
    }
}

impl Sim {
    pub(super) fn reachable_from(&self, s: Sid) -> u64 {
        let mut m = 0;
        for (i, t) in self.servers.iter().enumerate() {
            if t.life == Life::Up && !self.links[s * MAX_SERVERS + i].cut {
                m |= bit(i);
            }
        }
        m
    }

    pub(super) fn send(&mut self, from: Sid, to: Sid, msg: Msg, at: Time) {
        if to >= self.servers.len() || to >= MAX_SERVERS {
            return;
        }
        let bytes = msg.wire_bytes(self.knobs.storage);
        let kind = msg.kind();
        self.metrics.msgs_sent += 1;
        self.metrics.bytes_sent += bytes;
        if kind == MsgKind::Heartbeat {
            self.metrics.heartbeats += 1;
        }
        let li = from * MAX_SERVERS + to;
        let lost =
            self.links[li].cut || self.servers[to].life != Life::Up || self.rng.chance(self.loss);
        let arrive = self.links[li].arrival(&self.knobs, &mut self.rng, bytes, at);
        let link = &mut self.links[li];
        if lost {
            // A lost message means a reset connection: the sender forgets
            // its in-flight snapshot to that peer, like on reconnect.
            self.servers[from].peers[to].snap_inflight = false;
            self.metrics.msgs_dropped += 1;
            self.hash.add(0xD0 ^ kind.code());
            self.note(EventKind::Message {
                from,
                to,
                kind,
                bytes,
                send: at,
                recv: arrive,
                dropped: true,
            });
            return;
        }
        link.last_arrival = arrive;
        link.inflight += 1;
        link.inflight_bytes += bytes;
        let k = &self.knobs;
        if k.backlog_max_msgs > 0
            && link.inflight >= 50
            && (link.inflight > k.backlog_max_msgs || link.inflight_bytes > k.backlog_max_bytes)
        {
            // The connection drops itself; everything queued is lost.
            link.epoch += 1;
            link.inflight = 0;
            link.inflight_bytes = 0;
            self.servers[from].peers[to].snap_inflight = false;
            self.metrics.msgs_dropped += 1;
            return;
        }
        let epoch = link.epoch;
        self.hash.add((from as u64) << 8 | to as u64);
        self.hash.add(kind.code());
        self.hash.add(arrive);
        self.note(EventKind::Message {
            from,
            to,
            kind,
            bytes,
            send: at,
            recv: arrive,
            dropped: false,
        });
        self.push(
            arrive,
            Ev::Deliver {
                to,
                from,
                epoch,
                msg,
            },
        );
    }

    /// Every connection of `s` is dropped and re-created: messages in
    /// flight and unread messages in its socket buffers are lost, snapshots
    /// in flight to or from it are forgotten.
    pub(super) fn reset_connections(&mut self, s: Sid) {
        self.hash.add(0xCC ^ s as u64);
        self.note(EventKind::Fault {
            text: format!("connections of s{} reset by inactivity probes", s + 1),
        });
        for o in 0..MAX_SERVERS {
            for li in [o * MAX_SERVERS + s, s * MAX_SERVERS + o] {
                let l = &mut self.links[li];
                l.epoch += 1;
                l.inflight = 0;
                l.inflight_bytes = 0;
            }
        }
        for o in 0..self.servers.len() {
            self.servers[o].peers[s].snap_inflight = false;
            self.servers[s].peers[o].snap_inflight = false;
        }
        self.servers[s].inbox.clear();
    }

    pub(super) fn cut(&mut self, a: Sid, b: Sid, on: bool) {
        let l = &mut self.links[a * MAX_SERVERS + b];
        if l.cut != on {
            l.cut = on;
            l.epoch += 1;
            l.inflight = 0;
            l.inflight_bytes = 0;
            if a < self.servers.len() {
                self.servers[a].peers[b].snap_inflight = false;
            }
        }
    }
}
