//! Version profiles and every tunable knob (§10 of ovsdb-raft.md), plus the
//! cost model. Times given to `set` are in milliseconds (fractions allowed);
//! internally everything is microseconds.

use ovsdb::StorageMode;
use std::fmt;

/// Which ovsdb-server version the simulated servers behave like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    V2_11,
    V2_12PreSync,
    V2_12,
    V2_17,
    V3_1,
    V3_2,
    V3_3,
    V3_4,
    Main,
}

impl Profile {
    /// Oldest first. The field versions (2.17, 3.2, 3.3, 3.4) follow the
    /// release column of ovsdb-raft.md §5; `scenarios/README.md` lists what
    /// each one changes.
    pub const ALL: [Profile; 9] = [
        Profile::V2_11,
        Profile::V2_12PreSync,
        Profile::V2_12,
        Profile::V2_17,
        Profile::V3_1,
        Profile::V3_2,
        Profile::V3_3,
        Profile::V3_4,
        Profile::Main,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Profile::V2_11 => "v2.11",
            Profile::V2_12PreSync => "v2.12-pre-sync",
            Profile::V2_12 => "v2.12",
            Profile::V2_17 => "v2.17",
            Profile::V3_1 => "v3.1",
            Profile::V3_2 => "v3.2",
            Profile::V3_3 => "v3.3",
            Profile::V3_4 => "v3.4",
            Profile::Main => "main",
        }
    }
    pub fn parse(s: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == s)
    }
    /// Whether elections begin with a pre-vote round (since 3.3.0).
    pub fn has_prevote(self) -> bool {
        Knobs::for_profile(self).prevote
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuppressMode {
    /// No disruptive-server suppression (before pre-vote existed).
    Off,
    /// Suppressed vote requests get no reply and no term update (current).
    Drop,
    /// Pre-fix behaviour: skip the term update but still answer.
    Answer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferPolicy {
    /// Highest match_index among connected stable servers (since 3.4).
    Best,
    /// First stable server in configuration order, connected or not.
    First,
}

/// `probe_interval` value meaning "ET + 1000 ms" (current default).
pub const PROBE_ET_PLUS_1000: u64 = u64::MAX;

/// All knobs. Field names equal the `--set` names unless noted.
#[derive(Clone, Debug, PartialEq)]
pub struct Knobs {
    pub profile: Profile,
    // --- cluster shape / workload size
    pub servers: usize,
    pub n: u64,
    /// Relay servers in front of the cluster (0 = none).
    pub relays: usize,
    /// Relay k+1's source is relay k (a chain) instead of a member.
    pub relay_chain: bool,
    /// ovn-controller clients of the Southbound database (0 = none; see
    /// `sim::southbound`).
    pub chassis: usize,
    /// ovn-northd's compute time per iteration of its loop, from reading
    /// the NB changes to sending the one Southbound transaction that holds
    /// them all, µs.
    pub northd_delay: u64,
    /// Logical flows northd writes per new logical switch port.
    pub lflows_per_port: u64,
    /// `Port_Binding` rows (each with its `lflows_per_port` flows) the
    /// Southbound already holds when the run starts, bound round-robin to
    /// the chassis: the ports of earlier pods (0 = an empty Southbound).
    pub sb_ports: u64,
    /// ovn-northd's Southbound IDL sends only the columns whose value
    /// changed (`set_write_changed_only_all`, OVS 2.18, OVN f93206ce4).
    /// false: every column northd rewrites in its recompute goes on the
    /// wire as soon as one really changed (ovsdb-idl.md §4.3).
    pub write_changed_only: bool,
    /// northd's CPU per column it writes into its IDL transaction (store
    /// the datum, re-parse, re-index the row), ns.
    pub northd_write_ns: f64,
    /// `Advertised_Route` rows northd writes with each new port.
    pub routes_per_port: u64,
    /// The chassis advertising a route writes an `Advertised_Route_Status`
    /// row for it (one row per route and chassis).
    pub route_status: bool,
    /// A controller that reconnects asks for the changes since its last
    /// transaction (`monitor_cond_since`); the server answers with them
    /// when its history (the last 100 transactions it saw, kept since it
    /// started or, for a relay, since it loaded its copy) still holds that
    /// one, and with everything otherwise (ovsdb-idl.md §2.4). false:
    /// every reconnect downloads everything, as a controller without
    /// resumption or whose server lost its history.
    pub monitor_since: bool,
    /// Where the workload's client connects, over the scenario's `via`.
    pub via: Option<crate::scenario::Via>,
    /// How log entries and messages carry modified rows: column diffs
    /// ([`StorageMode::Diff`], the default) or full values (the 2.11
    /// profile). The scenario knob is `column_diff=true|false`.
    pub storage: StorageMode,
    // --- timers (µs)
    pub election_timer: u64,
    pub election_range: u64,
    /// 0 means floor(ET/3) (ping_period knob).
    pub ping_period: u64,
    /// 0 means 2*ET.
    pub cmd_timeout: u64,
    // --- behaviour switches
    pub commit_sync_immediate: bool,
    pub ping_rearm_on_append: bool,
    pub heartbeat_on_elect: bool,
    /// 0 = all missing entries in one request.
    pub catchup_batch: u64,
    pub leader_stepdown: bool,
    pub prevote: bool,
    pub suppress_mode: SuppressMode,
    /// true = always check the log for pre-votes; false = skipped if voted.
    pub prevote_log_check: bool,
    pub complete_on_eid_commit: bool,
    pub fail_cmds_on_stepdown: bool,
    pub prereq_precheck: bool,
    /// 0 = unlimited.
    pub follower_max_inflight: u64,
    /// Trigger step after storage/read_db (v2.12+); false = v2.11 order.
    pub same_iteration_completion: bool,
    /// Inactivity probe interval, µs (0 = off). Modelled for unresponsive
    /// servers (`pause` fault): after 2 x probe without traffic all of the
    /// server's connections are reset. `et+1000` (default since 2.16),
    /// `off` (2.14–2.15) or a number of ms (5000 up to 2.13).
    pub probe_interval: u64,
    pub backlog_max_msgs: u64,
    pub backlog_max_bytes: u64,
    /// true = only followers (or 1-server clusters) snapshot.
    pub snapshot_followers_only: bool,
    pub transfer_before_snapshot: bool,
    pub snapshot_in_thread: bool,
    pub snapshot_min: u64,
    pub snapshot_max: u64,
    pub snapshot_recheck_min: u64,
    pub snapshot_recheck_max: u64,
    pub snapshot_deadline: u64,
    pub snapshot_min_entries: u64,
    pub snapshot_min_bytes: u64,
    /// Main-thread time a compaction blocks the server.
    pub snapshot_block: u64,
    pub transfer_target_policy: TransferPolicy,
    pub join_retry: u64,
    /// Replay every committed record on a second, independent database
    /// per server (the `ovsdb` crate's `ovsdb::Database`, real schema) and
    /// cross-check the record sizes in both storage modes against it. The
    /// database itself is always the IDL crate's server model; this is a
    /// check, off by default (it doubles the database work) and on in tests.
    /// Servers whose check databases are the same object share one replay
    /// of a record (`Proposal::core_memo`).
    pub core_db: bool,
    /// Stop a run after this many events (a guard for pathological knob
    /// combinations; reported as `truncated` in the metrics).
    pub max_events: u64,
    /// Deliberately broken server for checker tests: grant votes without
    /// the log up-to-date check (never true in any profile).
    pub unsafe_vote_any_log: bool,
    // --- cost model
    /// Mean one-way network delay (µs) and uniform jitter added on top.
    pub delay: u64,
    pub delay_jitter: u64,
    /// Link bandwidth in bytes per µs (= MB/s); 0 = infinite.
    pub bandwidth: f64,
    pub fsync: u64,
    pub fsync_jitter: u64,
    /// CPU cost per byte of JSON encoded or decoded, in ns.
    pub cpu_ns_per_byte: f64,
    /// Fixed CPU cost per poll-loop iteration, µs.
    pub loop_cost: u64,
    /// Poll wake-up latency: time from a socket becoming readable or an
    /// fsync completing to the iteration that handles it, µs. Messages that
    /// arrive within it are handled in the same iteration.
    pub wake_latency: u64,
    /// Client overhead per transaction (process start, connect, monitor), µs.
    pub client_overhead: u64,
    /// One-way client <-> server delay, µs.
    pub client_delay: u64,
}

impl Knobs {
    pub fn for_profile(profile: Profile) -> Knobs {
        // Current (main) defaults, calibrated against the ls-add-follower
        // sample (3.1 on one 2-core VM): follower loop 5.3 ms/write, leader
        // loop 5.05 ms/write, read-only client baseline 3.9 ms. One fit:
        // c = 3.88 ms, d = 50 µs (+0..20), f = 0.75 ms (+0..0.1), W = 40 µs.
        let mut k = Knobs {
            profile,
            servers: 3,
            n: 100,
            relays: 0,
            relay_chain: false,
            chassis: 0,
            northd_delay: 0,
            lflows_per_port: 8,
            sb_ports: 0,
            write_changed_only: true,
            northd_write_ns: 1000.0,
            routes_per_port: 0,
            route_status: false,
            monitor_since: true,
            via: None,
            storage: StorageMode::Diff,
            election_timer: 1_000_000,
            election_range: 1_000_000,
            ping_period: 0,
            cmd_timeout: 0,
            commit_sync_immediate: true,
            ping_rearm_on_append: true,
            heartbeat_on_elect: false,
            catchup_batch: 0,
            leader_stepdown: true,
            prevote: true,
            suppress_mode: SuppressMode::Drop,
            prevote_log_check: true,
            complete_on_eid_commit: true,
            fail_cmds_on_stepdown: false,
            prereq_precheck: true,
            follower_max_inflight: 1,
            same_iteration_completion: true,
            probe_interval: 0,
            backlog_max_msgs: 500,
            backlog_max_bytes: u32::MAX as u64,
            snapshot_followers_only: true,
            transfer_before_snapshot: true,
            snapshot_in_thread: true,
            snapshot_min: 600_000_000,
            snapshot_max: 1_200_000_000,
            snapshot_recheck_min: 60_000_000,
            snapshot_recheck_max: 120_000_000,
            snapshot_deadline: 86_400_000_000,
            snapshot_min_entries: 100,
            snapshot_min_bytes: 10 << 20,
            snapshot_block: 20_000,
            transfer_target_policy: TransferPolicy::Best,
            join_retry: 1_000_000,
            unsafe_vote_any_log: false,
            max_events: 20_000_000,
            core_db: false,
            delay: 50,
            delay_jitter: 20,
            bandwidth: 1000.0,
            fsync: 750,
            fsync_jitter: 100,
            cpu_ns_per_byte: 5.0,
            loop_cost: 15,
            wake_latency: 40,
            client_overhead: 3_880,
            client_delay: 20,
        };
        match profile {
            Profile::Main => {}
            // 3.4.0: pre-vote with the answering suppression and the
            // skipped-if-voted grant (both hardened in 3.7); since 3.4 the
            // leadership-transfer target is the best connected server
            // (`aab379ec2`) and a follower forwards one command at a time
            // (`f8ed13355`).
            Profile::V3_4 => {
                k.suppress_mode = SuppressMode::Answer;
                k.prevote_log_check = false;
            }
            // 3.3.0: pre-vote (`85634fd58`), before the 3.4 transfer and
            // forwarding changes.
            Profile::V3_3 => {
                k.suppress_mode = SuppressMode::Answer;
                k.prevote_log_check = false;
                k.follower_max_inflight = 0;
                k.transfer_target_policy = TransferPolicy::First;
            }
            // 3.1.0 and 3.2.0 differ in nothing §5 lists for the Raft layer.
            Profile::V3_1 | Profile::V3_2 => {
                k.prevote = false;
                k.suppress_mode = SuppressMode::Off;
                k.follower_max_inflight = 0;
                k.transfer_target_policy = TransferPolicy::First;
            }
            // 2.17.0: column diffs (2.15), backlog limits (2.15), probes at
            // ET + 1 s (2.16), transfer before snapshot (2.16) and
            // followers-only snapshots (2.17), but the snapshot JSON is still
            // built on the main thread (threaded in 3.0, `3cd2cbd68`) and a
            // leader that steps down still fails its pending commands (kept
            // pending since 3.0, `04e5adfed`).
            Profile::V2_17 => {
                k.prevote = false;
                k.suppress_mode = SuppressMode::Off;
                k.follower_max_inflight = 0;
                k.transfer_target_policy = TransferPolicy::First;
                k.snapshot_in_thread = false;
                k.fail_cmds_on_stepdown = true;
            }
            Profile::V2_12 | Profile::V2_12PreSync | Profile::V2_11 => {
                k.election_timer = 1_024_000;
                k.election_range = 1_024_000;
                k.ping_period = 341_000;
                k.heartbeat_on_elect = true;
                k.catchup_batch = 1;
                k.leader_stepdown = false;
                k.prevote = false;
                k.suppress_mode = SuppressMode::Off;
                k.follower_max_inflight = 0;
                k.fail_cmds_on_stepdown = true;
                k.storage = StorageMode::Full;
                k.backlog_max_msgs = 0;
                k.backlog_max_bytes = 0;
                k.snapshot_followers_only = false;
                k.transfer_before_snapshot = false;
                k.snapshot_in_thread = false;
                k.transfer_target_policy = TransferPolicy::First;
                k.probe_interval = 5_000_000;
                if profile != Profile::V2_12 {
                    k.commit_sync_immediate = false;
                    k.ping_rearm_on_append = false;
                    k.complete_on_eid_commit = false;
                    k.cmd_timeout = 1_024_000;
                }
                if profile == Profile::V2_11 {
                    k.same_iteration_completion = false;
                    k.prereq_precheck = false;
                }
            }
        }
        if k.probe_interval == 0 {
            k.probe_interval = PROBE_ET_PLUS_1000;
        }
        k
    }

    /// Inactivity probe interval for election timer `et` (µs), if enabled.
    pub fn probe(&self, et: u64) -> Option<u64> {
        match self.probe_interval {
            0 => None,
            PROBE_ET_PLUS_1000 => Some(et + 1_000_000),
            p => Some(p),
        }
    }

    /// Heartbeat period P in µs.
    pub fn ping(&self, et: u64) -> u64 {
        if self.ping_period > 0 {
            self.ping_period
        } else {
            (et / 1000 / 3) * 1000
        }
    }

    pub fn command_timeout(&self, et: u64) -> u64 {
        if self.cmd_timeout > 0 {
            self.cmd_timeout
        } else {
            2 * et
        }
    }

    /// Names accepted by [`Knobs::set`], in [`KNOBS`]' order: the table's
    /// names alone, taken from it at compile time, so that code which needs
    /// only the names (`set`'s suggestion) links none of the descriptions.
    pub const NAMES: &'static [&'static str] = &{
        let mut names = [""; KNOBS.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = KNOBS[i].name;
            i += 1;
        }
        names
    };

    /// Every knob of [`KNOBS`] a line, in its order: its kind and
    /// description separated by a tab (its name is [`Knobs::NAMES`]' at
    /// the same place). One string made from the table at compile time,
    /// without the value functions: a listing that shows no values (the
    /// web's Simulate page, whose worker sends it) links no table and
    /// none of them, and no second copy of the names.
    pub const ABOUT: &'static str = {
        const LEN: usize = {
            let mut n = 0;
            let mut i = 0;
            while i < KNOBS.len() {
                n += KNOBS[i].kind.len() + KNOBS[i].about.len() + 2;
                i += 1;
            }
            n
        };
        const BYTES: [u8; LEN] = {
            let mut out = [0u8; LEN];
            let mut at = 0;
            let mut i = 0;
            while i < KNOBS.len() {
                let fields = [KNOBS[i].kind, KNOBS[i].about];
                let mut f = 0;
                while f < 2 {
                    let b = fields[f].as_bytes();
                    let mut k = 0;
                    while k < b.len() {
                        out[at] = b[k];
                        at += 1;
                        k += 1;
                    }
                    out[at] = if f == 0 { b'\t' } else { b'\n' };
                    at += 1;
                    f += 1;
                }
                i += 1;
            }
            out
        };
        match std::str::from_utf8(&BYTES) {
            Ok(s) => s,
            Err(_) => panic!("a knob's text is not UTF-8"),
        }
    };

    /// Override one knob by name. Durations are in ms (fractions allowed).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let v = value.trim();
        let ms = |v: &str| -> Result<u64, String> {
            let f: f64 = v
                .parse()
                .map_err(|_| format!("knob {name}: '{v}' is not a number of ms"))?;
            if !(0.0..=1e12).contains(&f) {
                return Err(format!("knob {name}: {v} out of range"));
            }
            Ok((f * 1000.0).round() as u64)
        };
        let int = |v: &str| -> Result<u64, String> {
            if v == "all" || v == "inf" || v == "unlimited" {
                return Ok(0);
            }
            v.parse::<u64>()
                .map_err(|_| format!("knob {name}: '{v}' is not an integer"))
        };
        let float = |v: &str| -> Result<f64, String> {
            let f: f64 = v
                .parse()
                .map_err(|_| format!("knob {name}: '{v}' is not a number"))?;
            if !(0.0..=1e12).contains(&f) {
                return Err(format!("knob {name}: {v} out of range"));
            }
            Ok(f)
        };
        let boolean = |v: &str| -> Result<bool, String> {
            match v {
                "true" | "on" | "1" | "yes" => Ok(true),
                "false" | "off" | "0" | "no" => Ok(false),
                _ => Err(format!("knob {name}: '{v}' is not a boolean")),
            }
        };
        match name {
            "servers" => {
                let n = int(v)?;
                if !(1..=9).contains(&n) {
                    return Err("knob servers: must be 1..9".into());
                }
                self.servers = n as usize;
            }
            "relays" => {
                let n = int(v)?;
                if n as usize > crate::relay::MAX_RELAYS {
                    return Err("knob relays: must be 0..16".into());
                }
                self.relays = n as usize;
            }
            "relay_chain" => self.relay_chain = boolean(v)?,
            "chassis" => {
                let n = int(v)?;
                if n > 100_000 {
                    return Err("knob chassis: at most 100000".into());
                }
                self.chassis = n as usize;
            }
            "northd_delay" => self.northd_delay = ms(v)?,
            "lflows_per_port" => {
                let n = int(v)?;
                if n > 1_000 {
                    return Err("knob lflows_per_port: at most 1000".into());
                }
                self.lflows_per_port = n;
            }
            "sb_ports" => {
                let n = int(v)?;
                if n > 1_000_000 {
                    return Err("knob sb_ports: at most 1000000".into());
                }
                self.sb_ports = n;
            }
            "write_changed_only" => self.write_changed_only = boolean(v)?,
            "northd_write_ns" => self.northd_write_ns = float(v)?,
            "routes_per_port" => {
                let n = int(v)?;
                if n > 10_000 {
                    return Err("knob routes_per_port: at most 10000".into());
                }
                self.routes_per_port = n;
            }
            "route_status" => self.route_status = boolean(v)?,
            "monitor_since" => self.monitor_since = boolean(v)?,
            "via" => {
                self.via =
                    Some(crate::scenario::Via::parse(v).map_err(|e| format!("knob via: {e}"))?)
            }
            "n" => {
                let n = int(v)?;
                if n > 1_000_000 {
                    return Err("knob n: at most 1000000".into());
                }
                self.n = n;
            }
            "column_diff" => {
                self.storage = if boolean(v)? {
                    StorageMode::Diff
                } else {
                    StorageMode::Full
                }
            }
            "election_timer" => {
                let et = ms(v)?;
                if !(100_000..=600_000_000).contains(&et) {
                    return Err("knob election_timer: must be 100..600000 ms".into());
                }
                self.election_timer = et;
            }
            "election_range" => self.election_range = ms(v)?.max(1),
            "ping_period" => {
                let p = ms(v)?;
                self.ping_period = if p == 0 { 0 } else { p.max(1_000) };
            }
            "cmd_timeout" => self.cmd_timeout = ms(v)?,
            "commit_sync_immediate" => self.commit_sync_immediate = boolean(v)?,
            "ping_rearm_on_append" => self.ping_rearm_on_append = boolean(v)?,
            "heartbeat_on_elect" => self.heartbeat_on_elect = boolean(v)?,
            "catchup_batch" => self.catchup_batch = int(v)?,
            "leader_stepdown" => self.leader_stepdown = boolean(v)?,
            "prevote" => self.prevote = boolean(v)?,
            "suppress_mode" => {
                self.suppress_mode = match v {
                    "off" => SuppressMode::Off,
                    "drop" => SuppressMode::Drop,
                    "answer" => SuppressMode::Answer,
                    _ => return Err("knob suppress_mode: off|drop|answer".into()),
                }
            }
            "prevote_log_check" => {
                self.prevote_log_check = match v {
                    "always" => true,
                    "skipped-if-voted" => false,
                    _ => boolean(v)?,
                }
            }
            "complete_on_eid_commit" => self.complete_on_eid_commit = boolean(v)?,
            "fail_cmds_on_stepdown" => self.fail_cmds_on_stepdown = boolean(v)?,
            "prereq_precheck" => self.prereq_precheck = boolean(v)?,
            "follower_max_inflight" => self.follower_max_inflight = int(v)?,
            "same_iteration_completion" => self.same_iteration_completion = boolean(v)?,
            "probe_interval" => {
                self.probe_interval = match v {
                    "et+1000" | "ET+1000" => PROBE_ET_PLUS_1000,
                    "off" => 0,
                    _ => ms(v)?,
                }
            }
            "backlog_max_msgs" => self.backlog_max_msgs = int(v)?,
            "backlog_max_bytes" => self.backlog_max_bytes = int(v)?,
            "snapshot_roles" => {
                self.snapshot_followers_only = match v {
                    "followers" => true,
                    "any" => false,
                    _ => return Err("knob snapshot_roles: followers|any".into()),
                }
            }
            "transfer_before_snapshot" => self.transfer_before_snapshot = boolean(v)?,
            "snapshot_in_thread" => self.snapshot_in_thread = boolean(v)?,
            "snapshot_min" => self.snapshot_min = ms(v)?.max(1_000),
            "snapshot_max" => self.snapshot_max = ms(v)?.max(1_000),
            "snapshot_recheck_min" => self.snapshot_recheck_min = ms(v)?.max(1_000),
            "snapshot_recheck_max" => self.snapshot_recheck_max = ms(v)?.max(1_000),
            "snapshot_deadline" => self.snapshot_deadline = ms(v)?.max(1_000),
            "snapshot_min_entries" => self.snapshot_min_entries = int(v)?,
            "snapshot_min_bytes" => self.snapshot_min_bytes = int(v)?,
            "snapshot_block" => self.snapshot_block = ms(v)?,
            "transfer_target_policy" => {
                self.transfer_target_policy = match v {
                    "best" => TransferPolicy::Best,
                    "first" => TransferPolicy::First,
                    _ => return Err("knob transfer_target_policy: best|first".into()),
                }
            }
            "join_retry" => self.join_retry = ms(v)?.max(10_000),
            "unsafe_vote_any_log" => self.unsafe_vote_any_log = boolean(v)?,
            "max_events" => self.max_events = int(v)?.max(1),
            "core_db" => self.core_db = boolean(v)?,
            "delay" => self.delay = ms(v)?,
            "delay_jitter" => self.delay_jitter = ms(v)?,
            "bandwidth" => self.bandwidth = float(v)?,
            "fsync" => self.fsync = ms(v)?,
            "fsync_jitter" => self.fsync_jitter = ms(v)?,
            "cpu_ns_per_byte" => self.cpu_ns_per_byte = float(v)?,
            "loop_cost" => self.loop_cost = ms(v)?,
            "wake_latency" => self.wake_latency = ms(v)?,
            "client_overhead" => self.client_overhead = ms(v)?,
            "client_delay" => self.client_delay = ms(v)?,
            _ => return Err(unknown_knob(name)),
        }
        Ok(())
    }
}

/// The error for a knob name [`Knobs::set`] does not take, with the
/// closest name when one is near (a typo) but no front end's words: the
/// web editor shows it as it is, the CLI adds how to list the knobs.
pub fn unknown_knob(name: &str) -> String {
    match closest_name(name) {
        Some(near) => format!("unknown knob '{name}'; did you mean '{near}'?"),
        None => format!("unknown knob '{name}'"),
    }
}

/// The knob name nearest to `name`: [`closest_in`] the knobs' names.
pub fn closest_name(name: &str) -> Option<&'static str> {
    closest_in(name, Knobs::NAMES)
}

/// The one "did you mean" of the project (knobs here, the CLI's presets,
/// profiles and diagnose knobs): the name of `names` nearest to `name` by
/// edit distance (a swap of two neighbours counting one edit; case
/// ignored), when it is within about a fifth of the name's length (at
/// least one edit, always fewer than the name's length). Of two as near,
/// the one sharing the longer start (v3.11 is v3.1, not v2.11), then the
/// first listed.
pub fn closest_in<'a>(name: &str, names: &[&'a str]) -> Option<&'a str> {
    let name = name.to_ascii_lowercase();
    let limit = (1 + name.len() / 5).min(name.len().saturating_sub(1));
    let shared = |n: &str| {
        n.bytes()
            .zip(name.bytes())
            .take_while(|(a, b)| a == b)
            .count()
    };
    names
        .iter()
        .map(|n| (edit_distance(&name, n), std::cmp::Reverse(shared(n)), *n))
        .filter(|(d, _, _)| *d <= limit)
        .min_by_key(|(d, s, _)| (*d, *s))
        .map(|(_, _, n)| n)
}

/// Optimal string alignment distance between `a` and `b`, by bytes:
/// insertions, deletions, substitutions and swaps of adjacent bytes (the
/// measure of every "did you mean" of the project, knobs here and the
/// CLI's presets and profiles).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    // Three rows of the table: two rows back, the last, the current.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut last: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            row[j] = d;
        }
        std::mem::swap(&mut before, &mut last);
        std::mem::swap(&mut last, &mut row);
    }
    last[b.len()]
}

/// One knob's documentation, for listings (`ovsdb-scope simulate
/// --list-knobs`) and for the tests that hold [`Knobs::set`] to it.
#[derive(Clone, Copy)]
pub struct KnobDoc {
    /// The name `set` takes.
    pub name: &'static str,
    /// The values it takes: `ms` (milliseconds, fractions allowed),
    /// `integer`, `number`, `boolean` (true/false, on/off, yes/no, 1/0), or
    /// its words separated by `|` (`sN`, `rN`: a server or relay number).
    pub kind: &'static str,
    /// What it changes, in one line.
    pub about: &'static str,
    /// Its value in a [`Knobs`], written the way `set` takes it; None when
    /// it is not set (`via`: the scenario's then).
    pub value: fn(&Knobs) -> Option<String>,
}

fn ms(us: u64) -> Option<String> {
    Some(crate::scenario::fmt_ms(us))
}

fn count<T: fmt::Display>(v: T) -> Option<String> {
    Some(v.to_string())
}

/// Every knob [`Knobs::set`] takes, documented: the one list of knob
/// names ([`Knobs::NAMES`] is its first column). Only listings read the
/// rest, so the descriptions stay out of builds that only set knobs (the
/// web worker). A test sets every row's kinds of value and reads them back.
pub const KNOBS: &[KnobDoc] = &[
    // --- cluster shape and workload
    KnobDoc {
        name: "servers",
        kind: "integer",
        about: "Raft members of the cluster, 1 to 9",
        value: |k| count(k.servers),
    },
    KnobDoc {
        name: "n",
        kind: "integer",
        about: "the count of the workload's `op = ... * n` lines (up to 1000000)",
        value: |k| count(k.n),
    },
    KnobDoc {
        name: "relays",
        kind: "integer",
        about: "relay servers in front of the cluster, 0 (none) to 16",
        value: |k| count(k.relays),
    },
    KnobDoc {
        name: "relay_chain",
        kind: "boolean",
        about: "relay k+1 takes its copy from relay k instead of from the members",
        value: |k| count(k.relay_chain),
    },
    KnobDoc {
        name: "chassis",
        kind: "integer",
        about: "ovn-controller clients of a Southbound (0: no Southbound; up to 100000)",
        value: |k| count(k.chassis),
    },
    KnobDoc {
        name: "northd_delay",
        kind: "ms",
        about: "ovn-northd's compute time per iteration, before its one Southbound transaction",
        value: |k| ms(k.northd_delay),
    },
    KnobDoc {
        name: "lflows_per_port",
        kind: "integer",
        about: "Logical_Flow rows northd writes for each new logical switch port (up to 1000)",
        value: |k| count(k.lflows_per_port),
    },
    KnobDoc {
        name: "sb_ports",
        kind: "integer",
        about: "Port_Binding rows, with their flows, the Southbound holds at the start",
        value: |k| count(k.sb_ports),
    },
    KnobDoc {
        name: "write_changed_only",
        kind: "boolean",
        about: "northd's Southbound IDL sends only the columns whose value changed",
        value: |k| count(k.write_changed_only),
    },
    KnobDoc {
        name: "northd_write_ns",
        kind: "number",
        about: "northd's CPU for each column it writes into its IDL transaction, ns",
        value: |k| count(k.northd_write_ns),
    },
    KnobDoc {
        name: "routes_per_port",
        kind: "integer",
        about: "Advertised_Route rows northd writes with each new port (up to 10000)",
        value: |k| count(k.routes_per_port),
    },
    KnobDoc {
        name: "route_status",
        kind: "boolean",
        about: "the advertising chassis writes an Advertised_Route_Status row per route",
        value: |k| count(k.route_status),
    },
    KnobDoc {
        name: "monitor_since",
        kind: "boolean",
        about: "a reconnecting controller asks only for what it missed (monitor_cond_since)",
        value: |k| count(k.monitor_since),
    },
    KnobDoc {
        name: "via",
        kind: "leader|follower|sN|relay|rN",
        about: "where the workload's client connects (unset: the scenario's `via`)",
        value: |k| {
            use crate::scenario::Via;
            k.via.as_ref().map(|v| match v {
                Via::Leader => "leader".to_string(),
                Via::Follower => "follower".to_string(),
                Via::Server(i) => format!("s{}", i + 1),
                Via::Relay(i) => format!("r{}", i + 1),
            })
        },
    },
    KnobDoc {
        name: "column_diff",
        kind: "boolean",
        about: "entries and messages carry modified rows as column diffs (false: full rows)",
        value: |k| count(k.storage == StorageMode::Diff),
    },
    // --- timers
    KnobDoc {
        name: "election_timer",
        kind: "ms",
        about: "the election timer, 100 to 600000 ms",
        value: |k| ms(k.election_timer),
    },
    KnobDoc {
        name: "election_range",
        kind: "ms",
        about: "each election timeout adds a random 0 up to this (whole ms)",
        value: |k| ms(k.election_range),
    },
    KnobDoc {
        name: "ping_period",
        kind: "ms",
        about: "the leader's heartbeat period (0: a third of the election timer)",
        value: |k| ms(k.ping_period),
    },
    KnobDoc {
        name: "cmd_timeout",
        kind: "ms",
        about: "a command not committed after this is dropped (0: twice the election timer)",
        value: |k| ms(k.cmd_timeout),
    },
    // --- behaviour switches
    KnobDoc {
        name: "commit_sync_immediate",
        kind: "boolean",
        about: "the leader sends a new commit index at once, not with the next heartbeat",
        value: |k| count(k.commit_sync_immediate),
    },
    KnobDoc {
        name: "ping_rearm_on_append",
        kind: "boolean",
        about: "every append request restarts the leader's heartbeat timer",
        value: |k| count(k.ping_rearm_on_append),
    },
    KnobDoc {
        name: "heartbeat_on_elect",
        kind: "boolean",
        about: "a new leader sends heartbeats as soon as it is elected",
        value: |k| count(k.heartbeat_on_elect),
    },
    KnobDoc {
        name: "catchup_batch",
        kind: "integer",
        about: "entries per catch-up append request (0: all the missing ones)",
        value: |k| count(k.catchup_batch),
    },
    KnobDoc {
        name: "leader_stepdown",
        kind: "boolean",
        about: "a leader that heard from no majority in an election timeout steps down",
        value: |k| count(k.leader_stepdown),
    },
    KnobDoc {
        name: "prevote",
        kind: "boolean",
        about: "an election starts with a pre-vote round",
        value: |k| count(k.prevote),
    },
    KnobDoc {
        name: "suppress_mode",
        kind: "off|drop|answer",
        about: "a disruptive server's vote request: no suppression, ignored, or answered without a term update",
        value: |k| {
            Some(
                match k.suppress_mode {
                    SuppressMode::Off => "off",
                    SuppressMode::Drop => "drop",
                    SuppressMode::Answer => "answer",
                }
                .to_string(),
            )
        },
    },
    KnobDoc {
        name: "prevote_log_check",
        kind: "always|skipped-if-voted",
        about: "whether a server that already voted checks the log before granting a pre-vote",
        value: |k| {
            Some(if k.prevote_log_check { "always" } else { "skipped-if-voted" }.to_string())
        },
    },
    KnobDoc {
        name: "complete_on_eid_commit",
        kind: "boolean",
        about: "a follower completes a command when its entry commits (false: an election fails it)",
        value: |k| count(k.complete_on_eid_commit),
    },
    KnobDoc {
        name: "fail_cmds_on_stepdown",
        kind: "boolean",
        about: "a leader that steps down fails its pending commands (false: keeps them)",
        value: |k| count(k.fail_cmds_on_stepdown),
    },
    KnobDoc {
        name: "prereq_precheck",
        kind: "boolean",
        about: "a server proposes only when its log ends at the entry it last applied",
        value: |k| count(k.prereq_precheck),
    },
    KnobDoc {
        name: "follower_max_inflight",
        kind: "integer",
        about: "commands a follower forwards to the leader at a time (0: no limit)",
        value: |k| count(k.follower_max_inflight),
    },
    KnobDoc {
        name: "same_iteration_completion",
        kind: "boolean",
        about: "the trigger step runs after Raft and storage in a poll iteration (false: before, 2.11)",
        value: |k| count(k.same_iteration_completion),
    },
    KnobDoc {
        name: "probe_interval",
        kind: "ms|et+1000|off",
        about: "inactivity probe: a paused server's connections reset after twice this",
        value: |k| match k.probe_interval {
            PROBE_ET_PLUS_1000 => Some("et+1000".to_string()),
            0 => Some("off".to_string()),
            p => ms(p),
        },
    },
    KnobDoc {
        name: "backlog_max_msgs",
        kind: "integer",
        about: "a peer connection with more messages in flight drops itself (0: no backlog limit)",
        value: |k| count(k.backlog_max_msgs),
    },
    KnobDoc {
        name: "backlog_max_bytes",
        kind: "integer",
        about: "the same limit in bytes in flight (only while backlog_max_msgs is not 0)",
        value: |k| count(k.backlog_max_bytes),
    },
    KnobDoc {
        name: "snapshot_roles",
        kind: "followers|any",
        about: "which servers may compact: followers only (and a lone server), or any",
        value: |k| {
            Some(if k.snapshot_followers_only { "followers" } else { "any" }.to_string())
        },
    },
    KnobDoc {
        name: "transfer_before_snapshot",
        kind: "boolean",
        about: "a leader due to compact hands over leadership first, then compacts",
        value: |k| count(k.transfer_before_snapshot),
    },
    KnobDoc {
        name: "snapshot_in_thread",
        kind: "boolean",
        about: "the snapshot is built in a thread (false: blocks 4 x snapshot_block)",
        value: |k| count(k.snapshot_in_thread),
    },
    KnobDoc {
        name: "snapshot_min",
        kind: "ms",
        about: "the first compaction check after a start or snapshot comes at least this late",
        value: |k| ms(k.snapshot_min),
    },
    KnobDoc {
        name: "snapshot_max",
        kind: "ms",
        about: "the first compaction check after a start or snapshot comes at most this late",
        value: |k| ms(k.snapshot_max),
    },
    KnobDoc {
        name: "snapshot_recheck_min",
        kind: "ms",
        about: "a check that does not compact is followed by the next at least this late",
        value: |k| ms(k.snapshot_recheck_min),
    },
    KnobDoc {
        name: "snapshot_recheck_max",
        kind: "ms",
        about: "a check that does not compact is followed by the next at most this late",
        value: |k| ms(k.snapshot_recheck_max),
    },
    KnobDoc {
        name: "snapshot_deadline",
        kind: "ms",
        about: "a server compacts anyway this long after its last snapshot, if it applied anything",
        value: |k| ms(k.snapshot_deadline),
    },
    KnobDoc {
        name: "snapshot_min_entries",
        kind: "integer",
        about: "entries applied since the last snapshot before the log counts as grown",
        value: |k| count(k.snapshot_min_entries),
    },
    KnobDoc {
        name: "snapshot_min_bytes",
        kind: "integer",
        about: "file bytes above which the log counts as grown (if also twice its last size)",
        value: |k| count(k.snapshot_min_bytes),
    },
    KnobDoc {
        name: "snapshot_block",
        kind: "ms",
        about: "main-loop time one compaction takes",
        value: |k| ms(k.snapshot_block),
    },
    KnobDoc {
        name: "transfer_target_policy",
        kind: "best|first",
        about: "leadership goes to the connected server furthest along, or the first in the configuration",
        value: |k| {
            Some(
                match k.transfer_target_policy {
                    TransferPolicy::Best => "best",
                    TransferPolicy::First => "first",
                }
                .to_string(),
            )
        },
    },
    KnobDoc {
        name: "join_retry",
        kind: "ms",
        about: "a joining server sends its join request again after this (at least 10 ms)",
        value: |k| ms(k.join_retry),
    },
    KnobDoc {
        name: "unsafe_vote_any_log",
        kind: "boolean",
        about: "a broken server that grants votes without the log check (tests the checker)",
        value: |k| count(k.unsafe_vote_any_log),
    },
    KnobDoc {
        name: "max_events",
        kind: "integer",
        about: "a run stops after this many events and says it was truncated",
        value: |k| count(k.max_events),
    },
    KnobDoc {
        name: "core_db",
        kind: "boolean",
        about: "replay every committed record on a second database per server and cross-check sizes",
        value: |k| count(k.core_db),
    },
    // --- cost model
    KnobDoc {
        name: "delay",
        kind: "ms",
        about: "one-way network delay between servers, before jitter",
        value: |k| ms(k.delay),
    },
    KnobDoc {
        name: "delay_jitter",
        kind: "ms",
        about: "a random 0 up to this added to each message's delay",
        value: |k| ms(k.delay_jitter),
    },
    KnobDoc {
        name: "bandwidth",
        kind: "number",
        about: "link bandwidth in bytes per microsecond, i.e. MB/s (0: unlimited)",
        value: |k| count(k.bandwidth),
    },
    KnobDoc {
        name: "fsync",
        kind: "ms",
        about: "time one fsync takes, before jitter",
        value: |k| ms(k.fsync),
    },
    KnobDoc {
        name: "fsync_jitter",
        kind: "ms",
        about: "a random 0 up to this added to each fsync",
        value: |k| ms(k.fsync_jitter),
    },
    KnobDoc {
        name: "cpu_ns_per_byte",
        kind: "number",
        about: "CPU to encode or decode JSON, ns per byte",
        value: |k| count(k.cpu_ns_per_byte),
    },
    KnobDoc {
        name: "loop_cost",
        kind: "ms",
        about: "fixed CPU time of every poll-loop iteration",
        value: |k| ms(k.loop_cost),
    },
    KnobDoc {
        name: "wake_latency",
        kind: "ms",
        about: "from a readable socket or a finished fsync to the iteration that handles it",
        value: |k| ms(k.wake_latency),
    },
    KnobDoc {
        name: "client_overhead",
        kind: "ms",
        about: "the client's cost per transaction (process start, connect, monitor)",
        value: |k| ms(k.client_overhead),
    },
    KnobDoc {
        name: "client_delay",
        kind: "ms",
        about: "one-way delay between the client and its server",
        value: |k| ms(k.client_delay),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The names `set`'s own `match` takes: its arms at the first level of
    /// the match (this file as rustfmt lays it out).
    fn names_set_matches() -> Vec<String> {
        let src = include_str!("knobs.rs");
        let body = &src[src.find("pub fn set(").unwrap()..];
        let body = &body[..body.find("_ => return Err(unknown_knob(name))").unwrap()];
        let mut names = Vec::new();
        for line in body.lines() {
            let Some(arm) = line.strip_prefix("            \"") else {
                continue;
            };
            if let Some((name, _)) = arm.split_once("\" =>") {
                names.push(name.to_string());
            }
        }
        names
    }

    #[test]
    fn every_name_set_takes_has_one_doc_row_and_no_row_is_extra() {
        let mut matched = names_set_matches();
        assert!(matched.len() > 50, "{matched:?}");
        matched.sort();
        let mut documented: Vec<String> = KNOBS.iter().map(|d| d.name.to_string()).collect();
        documented.sort();
        assert_eq!(matched, documented);
        assert_eq!(Knobs::NAMES.len(), KNOBS.len());
        let lines: Vec<String> = Knobs::ABOUT.lines().map(str::to_string).collect();
        let rows: Vec<String> = KNOBS
            .iter()
            .map(|d| format!("{}\t{}", d.kind, d.about))
            .collect();
        assert_eq!(lines, rows);
        for (n, d) in Knobs::NAMES.iter().zip(KNOBS) {
            assert_eq!(*n, d.name);
        }
    }

    /// Sample values of a kind's words (`ms` stands for a number of ms).
    fn samples(kind: &str) -> Vec<&str> {
        kind.split('|')
            .flat_map(|w| match w {
                "ms" => vec!["1234", "1234.5"],
                "integer" => vec!["7", "2"],
                "number" => vec!["3.5", "12"],
                "boolean" => vec!["true", "false"],
                "sN" => vec!["s2"],
                "rN" => vec!["r2"],
                w => vec![w],
            })
            .collect()
    }

    #[test]
    fn every_documented_kind_is_taken_by_set_and_read_back_by_value() {
        for profile in Profile::ALL {
            let base = Knobs::for_profile(profile);
            for d in KNOBS {
                // The profile's value is one `set` takes and leaves as it is.
                if let Some(v) = (d.value)(&base) {
                    let mut k = base.clone();
                    k.set(d.name, &v)
                        .unwrap_or_else(|e| panic!("{profile}: {e}"));
                    assert!(k == base, "{profile}: {}={v} changes the knobs", d.name);
                }
                let mut changed = false;
                for s in samples(d.kind) {
                    let mut k = base.clone();
                    k.set(d.name, s)
                        .unwrap_or_else(|e| panic!("{}={s} ({}): {e}", d.name, d.kind));
                    changed |= k != base;
                    // What `value` reads back sets the same knobs again: it
                    // reads the field `set` wrote.
                    let v = (d.value)(&k).unwrap_or_else(|| panic!("{}={s}: unset", d.name));
                    let mut again = base.clone();
                    again.set(d.name, &v).unwrap();
                    assert!(again == k, "{}={s} reads back as {v}", d.name);
                }
                assert!(changed, "{profile}: no sample of {} changes it", d.name);
            }
        }
    }

    #[test]
    fn an_unknown_name_fails_and_a_near_one_is_suggested() {
        let mut k = Knobs::for_profile(Profile::Main);
        assert_eq!(
            k.set("electon_timer", "2000").unwrap_err(),
            "unknown knob 'electon_timer'; did you mean 'election_timer'?"
        );
        assert_eq!(
            k.set("prevtoe", "true").unwrap_err(),
            "unknown knob 'prevtoe'; did you mean 'prevote'?"
        );
        assert_eq!(
            k.set("Fsync", "1").unwrap_err(),
            "unknown knob 'Fsync'; did you mean 'fsync'?"
        );
        for far in ["no_such_knob", "x", "", "profile", "électon_timer_ünknown"] {
            let e = k.set(far, "1").unwrap_err();
            assert_eq!(e, format!("unknown knob '{far}'"));
        }
        assert_eq!(k, Knobs::for_profile(Profile::Main));
    }

    #[test]
    fn edit_distance_counts_edits_and_swaps() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("delay", "delay"), 0);
        assert_eq!(edit_distance("dealy", "delay"), 1);
        assert_eq!(edit_distance("delays", "delay"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_in_prefers_the_nearer_then_the_longer_shared_start() {
        let profiles = ["v2.11", "v3.1", "v3.4"];
        assert_eq!(closest_in("v3.11", &profiles), Some("v3.1"));
        assert_eq!(closest_in("V3.4", &profiles), Some("v3.4"));
        assert_eq!(closest_in("x", &profiles), None);
        let knobs = ["long_poll_ms", "leaderless_ms"];
        assert_eq!(closest_in("long_pol_ms", &knobs), Some("long_poll_ms"));
        assert_eq!(closest_in("nothing_near", &knobs), None);
        assert_eq!(closest_name("electon_timer"), Some("election_timer"));
    }
}
