//! A recorded simulator run as plain data: per-server state series (the
//! checkpoints the page scrubs through), messages, client writes, log
//! entries and notes. Everything is sorted by virtual time (µs) so a position
//! on the time axis is found by binary search, which makes stepping back as
//! cheap as stepping forward.

use ovsdb::StorageMode;
use raft_sim::server::Life;
use raft_sim::sim::{EventKind, MAX_SERVERS};
use raft_sim::{Role, Sim};

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// Life of a server at some moment.
pub const UP: u8 = 0;
pub const DOWN: u8 = 1;
pub const LEFT: u8 = 2;
/// Roles.
pub const FOLLOWER: u8 = 0;
pub const CANDIDATE: u8 = 1;
pub const LEADER: u8 = 2;
/// The role of a relay lane (not a Raft member).
pub const RELAY: u8 = 3;

/// The state of one server from `t` until the next point of its series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct StatePoint {
    pub t: u64,
    pub life: u8,
    pub role: u8,
    pub term: u64,
    pub commit: u64,
    pub last: u64,
    /// Election timer in ms.
    pub et: u64,
    /// Paused (stopped by an intervention) until this time, µs; 0 = not paused.
    pub paused_until: u64,
}

/// One message between two servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Message {
    pub from: u8,
    pub to: u8,
    /// Index into [`Trace::kinds`].
    pub kind: u8,
    pub bytes: u64,
    pub send: u64,
    pub recv: u64,
    pub dropped: bool,
}

/// One client transaction, from its start to its reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Write {
    pub server: u8,
    pub start: u64,
    pub end: u64,
}

/// One log entry written to a server's file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct EntryMark {
    pub server: u8,
    pub t: u64,
    /// Size of the entry's record as the run stores it.
    pub bytes: u64,
    /// Its size in the other storage mode (full values vs column diffs).
    pub alt_bytes: u64,
}

impl EntryMark {
    /// The entry's size in storage mode `storage`, given the mode the run
    /// stores (`run`).
    pub fn bytes_as(&self, storage: StorageMode, run: StorageMode) -> u64 {
        if storage == run {
            self.bytes
        } else {
            self.alt_bytes
        }
    }
}

/// A labelled moment (election, new leader, fault, timer change).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Note {
    pub t: u64,
    /// Server it belongs to; `None` for cluster-wide notes (faults).
    pub server: Option<u8>,
    pub text: String,
}

/// One Southbound transaction as the controllers got it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SbUpdate {
    /// When it committed (the servers start sending).
    pub t: u64,
    /// When the last controller had it.
    pub last: u64,
    /// Controllers that got it, and the bytes sent to all of them.
    pub served: u32,
    pub bytes: u64,
}

/// One new port as its chassis's controller got it (ovn-heater's
/// bring-up: from the NB write's start to the controller holding its
/// `Port_Binding`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SbBindingMark {
    pub chassis: u32,
    pub start: u64,
    /// None: the controller never got it in the run.
    pub seen: Option<u64>,
}

/// One download of everything a controller monitors (at start, after a
/// reconnect).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SbDownloadMark {
    pub chassis: u32,
    pub t: u64,
    pub ready: u64,
    pub bytes: u64,
}

/// The Southbound controllers of a run (`chassis > 0`), kept as one
/// aggregated lane: each update once with how many controllers got it,
/// and per chassis only its own bindings and downloads, so that any one
/// controller can be drawn as a lane of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct SbTrace {
    pub chassis: u32,
    /// Sorted by `t`.
    pub updates: Vec<SbUpdate>,
    /// Sorted by `start`.
    pub bindings: Vec<SbBindingMark>,
    /// Sorted by `t`.
    pub downloads: Vec<SbDownloadMark>,
}

impl SbTrace {
    /// Controller deliveries per pixel column: column `i` of `columns`
    /// spans `[t0 + i·us_per_px, t0 + (i+1)·us_per_px)`; an update counts
    /// its `served` in the column of its commit. Found by binary search,
    /// so a frame costs the updates in view, not the run.
    pub fn deliveries_per_column(&self, t0: f64, us_per_px: f64, columns: usize) -> Vec<u64> {
        let mut out = vec![0u64; columns];
        if us_per_px <= 0.0 || columns == 0 {
            return out;
        }
        let from = self.updates.partition_point(|u| (u.t as f64) < t0);
        for u in &self.updates[from..] {
            let i = ((u.t as f64 - t0) / us_per_px) as usize;
            if i >= columns {
                break;
            }
            out[i] += u.served as u64;
        }
        out
    }

    /// Chassis `c`'s bindings and downloads.
    pub fn of_chassis(&self, c: u32) -> (Vec<SbBindingMark>, Vec<SbDownloadMark>) {
        (
            self.bindings
                .iter()
                .filter(|b| b.chassis == c)
                .copied()
                .collect(),
            self.downloads
                .iter()
                .filter(|d| d.chassis == c)
                .copied()
                .collect(),
        )
    }

    /// Controller deliveries in the whole run.
    pub fn deliveries(&self) -> u64 {
        self.updates.iter().map(|u| u.served as u64).sum()
    }
}

/// A whole recorded run.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Trace {
    /// Virtual time the run ended at, µs.
    pub end: u64,
    /// How the run stores entries: column diffs or full values.
    #[cfg_attr(feature = "serde", serde(with = "storage_serde"))]
    pub storage: StorageMode,
    /// Message kind names (`heartbeat`, `append_request`, …).
    pub kinds: Vec<String>,
    /// Per server: state points in time order, the first at t = 0.
    pub states: Vec<Vec<StatePoint>>,
    /// Sorted by send time.
    pub messages: Vec<Message>,
    /// Sorted by start time.
    pub writes: Vec<Write>,
    /// Sorted by time.
    pub entries: Vec<EntryMark>,
    /// Sorted by time.
    pub notes: Vec<Note>,
    /// Per relay (`r1`, …): state points (role [`RELAY`]; `commit` and
    /// `last` are the log index its copy holds). Their lanes come after
    /// the members': lane `servers() + k` is relay k, in messages too.
    #[cfg_attr(feature = "serde", serde(default))]
    pub relay_states: Vec<Vec<StatePoint>>,
    /// The Southbound controllers, when the run has any.
    #[cfg_attr(feature = "serde", serde(default))]
    pub sb: SbTrace,
}

/// [`StorageMode`] (which has no serde impls) as a bool, `true` = column
/// diffs, between the simulation worker and the page.
#[cfg(feature = "serde")]
mod storage_serde {
    use ovsdb::StorageMode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(m: &StorageMode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(*m == StorageMode::Diff)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<StorageMode, D::Error> {
        Ok(if bool::deserialize(d)? {
            StorageMode::Diff
        } else {
            StorageMode::Full
        })
    }
}

impl Trace {
    pub fn servers(&self) -> usize {
        self.states.len()
    }

    /// Lanes to draw: the members, then the relays.
    pub fn lanes(&self) -> usize {
        self.states.len() + self.relay_states.len()
    }

    /// Whether lane `i` is a relay's.
    pub fn is_relay_lane(&self, i: usize) -> bool {
        i >= self.states.len() && i < self.lanes()
    }

    /// `s1`, `s2`, … for members, `r1`, … for relays.
    pub fn lane_name(&self, i: usize) -> String {
        match i.checked_sub(self.states.len()) {
            Some(k) => format!("r{}", k + 1),
            None => format!("s{}", i + 1),
        }
    }

    /// The member or relay lane `i` draws (a fault line's link end).
    pub fn lane_node(&self, i: usize) -> raft_sim::relay::Node {
        match i.checked_sub(self.states.len()) {
            Some(k) => raft_sim::relay::Node::Relay(k),
            None => raft_sim::relay::Node::Member(i),
        }
    }

    /// The state series of lane `i` (member or relay).
    pub fn lane_states(&self, i: usize) -> &[StatePoint] {
        match i.checked_sub(self.states.len()) {
            Some(k) => self.relay_states.get(k),
            None => self.states.get(i),
        }
        .map_or(&[], Vec::as_slice)
    }

    /// State of lane `i` at time `t` (see [`Trace::state_at`]).
    pub fn lane_state_at(&self, i: usize, t: u64) -> Option<&StatePoint> {
        let s = self.lane_states(i);
        let j = s.partition_point(|p| p.t <= t);
        s.get(j.checked_sub(1)?)
    }

    /// State of `server` at time `t` (the last point at or before `t`).
    pub fn state_at(&self, server: usize, t: u64) -> Option<&StatePoint> {
        let s = self.states.get(server)?;
        let i = s.partition_point(|p| p.t <= t);
        s.get(i.checked_sub(1)?)
    }

    /// Index of the first message sent at or after `t`.
    pub fn first_message_from(&self, t: u64) -> usize {
        self.messages.partition_point(|m| m.send < t)
    }

    /// Messages whose flight overlaps `[t0, t1]` and that were sent by `now`.
    /// Flights are bounded by the longest one seen, so the scan starts a
    /// little before `t0` and stops at `t1`.
    pub fn messages_in(&self, t0: u64, t1: u64, max_flight: u64) -> &[Message] {
        let a = self.first_message_from(t0.saturating_sub(max_flight));
        let b = self.first_message_from(t1.saturating_add(1));
        &self.messages[a..b.max(a)]
    }

    /// Longest send→receive time of any message.
    pub fn max_flight(&self) -> u64 {
        self.messages
            .iter()
            .map(|m| m.recv.saturating_sub(m.send))
            .max()
            .unwrap_or(0)
    }

    pub fn is_heartbeat(&self, m: &Message) -> bool {
        self.kinds
            .get(m.kind as usize)
            .is_some_and(|k| k == "heartbeat")
    }

    /// Highest term any server reached by time `t`.
    pub fn max_term_at(&self, t: u64) -> u64 {
        (0..self.servers())
            .filter_map(|s| self.state_at(s, t).map(|p| p.term))
            .max()
            .unwrap_or(0)
    }

    /// The server leading at time `t`, with the highest term if several think so.
    pub fn leader_at(&self, t: u64) -> Option<usize> {
        (0..self.servers())
            .filter_map(|s| self.state_at(s, t).map(|p| (s, p)))
            .filter(|(_, p)| p.life == UP && p.role == LEADER)
            .max_by_key(|(_, p)| p.term)
            .map(|(s, _)| s)
    }

    /// Next time after `t` at which anything is recorded (a step forward).
    pub fn next_time(&self, t: u64) -> Option<u64> {
        let mut best: Option<u64> = None;
        let mut consider = |x: Option<u64>| {
            if let Some(x) = x {
                best = Some(best.map_or(x, |b| b.min(x)));
            }
        };
        let m = self.first_message_from(t + 1);
        consider(self.messages.get(m).map(|m| m.send));
        for s in &self.states {
            let i = s.partition_point(|p| p.t <= t);
            consider(s.get(i).map(|p| p.t));
        }
        let w = self.writes.partition_point(|w| w.start <= t);
        consider(self.writes.get(w).map(|w| w.start));
        let e = self.entries.partition_point(|e| e.t <= t);
        consider(self.entries.get(e).map(|e| e.t));
        best
    }

    /// Previous time before `t` at which anything is recorded (a step back).
    pub fn prev_time(&self, t: u64) -> Option<u64> {
        let mut best: Option<u64> = None;
        let mut consider = |x: Option<u64>| {
            if let Some(x) = x {
                best = Some(best.map_or(x, |b| b.max(x)));
            }
        };
        let m = self.first_message_from(t);
        consider(m.checked_sub(1).map(|i| self.messages[i].send));
        for s in &self.states {
            let i = s.partition_point(|p| p.t < t);
            consider(i.checked_sub(1).map(|i| s[i].t));
        }
        let w = self.writes.partition_point(|w| w.start < t);
        consider(w.checked_sub(1).map(|i| self.writes[i].start));
        let e = self.entries.partition_point(|e| e.t < t);
        consider(e.checked_sub(1).map(|i| self.entries[i].t));
        best
    }
}

/// Builds a [`Trace`] while a [`Sim`] runs: call [`Recorder::observe`]
/// after each step (it compares each server's state with its last point)
/// and [`Recorder::drain`] now and then to move recorded events over.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    trace: Trace,
    /// Per chassis, its bindings not seen yet (indexes into
    /// `trace.sb.bindings`): a download settles them without a scan of
    /// every binding.
    unseen: std::collections::HashMap<u32, Vec<usize>>,
}

fn role_code(r: Role) -> u8 {
    match r {
        Role::Follower => FOLLOWER,
        Role::Candidate => CANDIDATE,
        Role::Leader => LEADER,
    }
}

fn life_code(l: Life) -> u8 {
    match l {
        Life::Up => UP,
        Life::Down => DOWN,
        Life::Left => LEFT,
    }
}

impl Recorder {
    /// Starts recording `sim` (turns on its event recording).
    pub fn new(sim: &mut Sim) -> Recorder {
        sim.record_events = true;
        let mut r = Recorder::default();
        r.trace.storage = sim.knobs.storage;
        r.observe(sim);
        r
    }

    /// Records every server whose visible state changed since the last
    /// call: after a step, only the server it could have changed
    /// ([`Sim::stepped`]) is read, else all of them.
    pub fn observe(&mut self, sim: &Sim) {
        // (A paused server's point changes when its pause ends: the
        // simulator wakes it then, a step of its own.)
        match sim.stepped() {
            Some(i) if self.trace.states.len() == sim.servers.len() => {
                self.observe_server(sim, i);
                self.observe_relays(sim);
            }
            _ => self.observe_all(sim),
        }
    }

    /// Records every server and relay whose visible state changed.
    pub fn observe_all(&mut self, sim: &Sim) {
        for i in 0..sim.servers.len() {
            if self.trace.states.len() <= i {
                self.trace.states.push(Vec::new());
            }
            self.observe_server(sim, i);
        }
        self.observe_relays(sim);
    }

    fn observe_server(&mut self, sim: &Sim, i: usize) {
        let now = sim.now();
        let s = &sim.servers[i];
        let p = StatePoint {
            t: now,
            life: life_code(s.life),
            role: role_code(s.role),
            term: s.term,
            commit: s.commit_index,
            last: s.last_index(),
            et: s.et / 1000,
            paused_until: if s.paused_until > now {
                s.paused_until
            } else {
                0
            },
        };
        push_point(&mut self.trace.states[i], p, now);
    }

    fn observe_relays(&mut self, sim: &Sim) {
        let now = sim.now();
        for (k, r) in sim.relays.iter().enumerate() {
            if self.trace.relay_states.len() <= k {
                self.trace.relay_states.push(Vec::new());
            }
            let index = sim.relay_copy_index(k);
            let p = StatePoint {
                t: now,
                life: life_code(r.life),
                role: RELAY,
                term: 0,
                commit: index,
                last: index,
                et: 0,
                paused_until: 0,
            };
            push_point(&mut self.trace.relay_states[k], p, now);
        }
    }

    /// Moves the events `sim` recorded so far into the trace.
    pub fn drain(&mut self, sim: &mut Sim) {
        for e in sim.take_events() {
            self.event(e.t, e.kind);
        }
    }

    fn kind_index(&mut self, name: &str) -> u8 {
        if let Some(i) = self.trace.kinds.iter().position(|k| k == name) {
            return i as u8;
        }
        self.trace.kinds.push(name.to_string());
        (self.trace.kinds.len() - 1) as u8
    }

    fn event(&mut self, t: u64, kind: EventKind) {
        let tr = &mut self.trace;
        match kind {
            EventKind::Message {
                from,
                to,
                kind,
                bytes,
                send,
                recv,
                dropped,
            } => {
                let k = self.kind_index(kind.name());
                self.trace.messages.push(Message {
                    from: from as u8,
                    to: to as u8,
                    kind: k,
                    bytes,
                    send,
                    recv,
                    dropped,
                });
            }
            EventKind::RelayMessage {
                from,
                to,
                kind,
                bytes,
                send,
                recv,
                dropped,
            } => {
                // Node indexes for now (relays after MAX_SERVERS); lanes
                // once the number of members is known, in `finish`.
                let k = self.kind_index(kind);
                self.trace.messages.push(Message {
                    from: from.index() as u8,
                    to: to.index() as u8,
                    kind: k,
                    bytes,
                    send,
                    recv,
                    dropped,
                });
            }
            EventKind::ClientWrite {
                server, start, end, ..
            } => tr.writes.push(Write {
                server: server as u8,
                start,
                end,
            }),
            EventKind::EntryWritten {
                server,
                bytes,
                alt_bytes,
            } => tr.entries.push(EntryMark {
                server: server as u8,
                t,
                bytes,
                alt_bytes,
            }),
            EventKind::ElectionStarted {
                server,
                term,
                prevote,
                transfer,
            } => tr.notes.push(Note {
                t,
                server: Some(server as u8),
                text: format!(
                    "{}election for term {term}{}",
                    if prevote { "pre-vote " } else { "" },
                    if transfer {
                        " (leadership transfer)"
                    } else {
                        ""
                    }
                ),
            }),
            EventKind::BecameLeader { server, term } => tr.notes.push(Note {
                t,
                server: Some(server as u8),
                text: format!("s{} leads term {term}", server + 1),
            }),
            EventKind::ElectionTimerChanged { server, ms } => tr.notes.push(Note {
                t,
                server: Some(server as u8),
                text: format!("election timer {ms} ms"),
            }),
            EventKind::Fault { text } => tr.notes.push(Note {
                t,
                server: None,
                text,
            }),
            EventKind::Snapshot { server, index } => tr.notes.push(Note {
                t,
                server: Some(server as u8),
                text: format!("snapshot at index {index}"),
            }),
            EventKind::TxnRejected { server, op, error } => tr.notes.push(Note {
                t,
                server: Some(server as u8),
                text: match error {
                    Some(e) => format!("{op}: refused: {e}"),
                    None => format!("{op}: nothing to write"),
                },
            }),
            EventKind::Joined { server } => tr.notes.push(Note {
                t,
                server: Some(server as u8),
                text: "joined".into(),
            }),
            EventKind::Left { server } => tr.notes.push(Note {
                t,
                server: Some(server as u8),
                text: "left".into(),
            }),
            EventKind::SbUpdate {
                served,
                last,
                bytes,
                bindings,
            } => {
                tr.sb.updates.push(SbUpdate {
                    t,
                    last,
                    served,
                    bytes,
                });
                for b in bindings {
                    if b.seen.is_none() {
                        self.unseen
                            .entry(b.chassis as u32)
                            .or_default()
                            .push(tr.sb.bindings.len());
                    }
                    tr.sb.bindings.push(SbBindingMark {
                        chassis: b.chassis as u32,
                        start: b.start,
                        seen: b.seen,
                    });
                }
            }
            EventKind::SbDownload {
                chassis,
                ready,
                bytes,
            } => {
                // A binding the controller missed (it had no server) is
                // seen with this download.
                let c = chassis as u32;
                for i in self.unseen.remove(&c).unwrap_or_default() {
                    tr.sb.bindings[i].seen = Some(ready);
                }
                tr.sb.downloads.push(SbDownloadMark {
                    chassis: c,
                    t,
                    ready,
                    bytes,
                });
            }
            // Visible through the state series.
            EventKind::SteppedDown { .. }
            | EventKind::TermChanged { .. }
            | EventKind::Commit { .. } => {}
        }
    }

    /// Ends the recording: drains the last events and sorts every list.
    pub fn finish(mut self, sim: &mut Sim) -> Trace {
        self.drain(sim);
        self.observe(sim);
        let mut tr = self.trace;
        tr.end = sim.now();
        if !tr.relay_states.is_empty() {
            let lane = |n: u8, members: usize| match (n as usize).checked_sub(MAX_SERVERS) {
                Some(k) => (members + k) as u8,
                None => n,
            };
            let members = tr.states.len();
            for m in &mut tr.messages {
                m.from = lane(m.from, members);
                m.to = lane(m.to, members);
            }
        }
        ovsdb::order::sort_by_key(&mut tr.messages, |m| (m.send, m.recv));
        ovsdb::order::sort_by_key(&mut tr.writes, |w| (w.start, w.end));
        ovsdb::order::sort_by_key(&mut tr.entries, |e| e.t);
        ovsdb::order::sort_by_key(&mut tr.notes, |n| n.t);
        tr.sb.chassis = sim.knobs.chassis as u32;
        ovsdb::order::sort_by_key(&mut tr.sb.updates, |u| u.t);
        ovsdb::order::sort_by_key(&mut tr.sb.bindings, |b| b.start);
        ovsdb::order::sort_by_key(&mut tr.sb.downloads, |d| d.t);
        tr
    }
}

fn push_point(series: &mut Vec<StatePoint>, p: StatePoint, now: u64) {
    match series.last_mut() {
        Some(last) if same_state(last, &p) => {}
        Some(last) if last.t == now => *last = p,
        _ => series.push(p),
    }
}

fn same_state(a: &StatePoint, b: &StatePoint) -> bool {
    (
        a.life,
        a.role,
        a.term,
        a.commit,
        a.last,
        a.et,
        a.paused_until,
    ) == (
        b.life,
        b.role,
        b.term,
        b.commit,
        b.last,
        b.et,
        b.paused_until,
    )
}
