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

    /// Names accepted by [`Knobs::set`].
    pub const NAMES: &'static [&'static str] = &[
        "servers",
        "n",
        "relays",
        "relay_chain",
        "chassis",
        "northd_delay",
        "lflows_per_port",
        "sb_ports",
        "write_changed_only",
        "northd_write_ns",
        "routes_per_port",
        "route_status",
        "monitor_since",
        "via",
        "column_diff",
        "election_timer",
        "election_range",
        "ping_period",
        "cmd_timeout",
        "commit_sync_immediate",
        "ping_rearm_on_append",
        "heartbeat_on_elect",
        "catchup_batch",
        "leader_stepdown",
        "prevote",
        "suppress_mode",
        "prevote_log_check",
        "complete_on_eid_commit",
        "fail_cmds_on_stepdown",
        "prereq_precheck",
        "follower_max_inflight",
        "same_iteration_completion",
        "probe_interval",
        "backlog_max_msgs",
        "backlog_max_bytes",
        "snapshot_roles",
        "transfer_before_snapshot",
        "snapshot_in_thread",
        "snapshot_min",
        "snapshot_max",
        "snapshot_recheck_min",
        "snapshot_recheck_max",
        "snapshot_deadline",
        "snapshot_min_entries",
        "snapshot_min_bytes",
        "snapshot_block",
        "transfer_target_policy",
        "join_retry",
        "unsafe_vote_any_log",
        "max_events",
        "core_db",
        "delay",
        "delay_jitter",
        "bandwidth",
        "fsync",
        "fsync_jitter",
        "cpu_ns_per_byte",
        "loop_cost",
        "wake_latency",
        "client_overhead",
        "client_delay",
    ];

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
            _ => return Err(format!("unknown knob '{name}'")),
        }
        Ok(())
    }
}
