//! A/B design review: two runs of the same seed that differ in one design
//! choice, and the table of their figures with deltas and ratios.

use crate::{RunResult, RunSpec};
use raft_sim::report::Aggregate;

/// A named comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbPreset {
    pub name: &'static str,
    pub scenario: &'static str,
    pub a_label: &'static str,
    pub b_label: &'static str,
    /// (profile, knob overrides) of each side.
    pub a: (
        Option<&'static str>,
        &'static [(&'static str, &'static str)],
    ),
    pub b: (
        Option<&'static str>,
        &'static [(&'static str, &'static str)],
    ),
    pub until_ms: Option<u64>,
    /// The figure the headline ratio A/B is taken of.
    pub headline: &'static str,
}

pub const AB_PRESETS: &[AbPreset] = &[
    AbPreset {
        name: "commit-sync",
        scenario: "ls-add-follower",
        a_label: "v2.12-pre-sync",
        b_label: "v2.12",
        a: (Some("v2.12-pre-sync"), &[("n", "100")]),
        b: (Some("v2.12"), &[("n", "100")]),
        until_ms: None,
        headline: "txns.total_ms",
    },
    AbPreset {
        name: "full-vs-diff",
        scenario: "acl-portgroup",
        a_label: "full values",
        b_label: "column diffs",
        a: (None, &[("n", "400"), ("column_diff", "false")]),
        b: (None, &[("n", "400"), ("column_diff", "true")]),
        until_ms: None,
        headline: "bytes.log_written",
    },
    AbPreset {
        name: "election-timer",
        scenario: "failover",
        a_label: "16 s timer",
        b_label: "1 s timer",
        a: (None, &[("election_timer", "16000")]),
        b: (None, &[("election_timer", "1000")]),
        until_ms: None,
        headline: "time_to_leader_ms",
    },
    AbPreset {
        name: "three-vs-five",
        scenario: "ls-add-follower",
        a_label: "5 servers",
        b_label: "3 servers",
        a: (Some("v3.4"), &[("n", "100"), ("servers", "5")]),
        b: (Some("v3.4"), &[("n", "100"), ("servers", "3")]),
        until_ms: None,
        headline: "bytes.sent",
    },
    AbPreset {
        name: "failover-3-vs-5",
        scenario: "leader-kill",
        a_label: "5 servers",
        b_label: "3 servers",
        a: (None, &[("servers", "5")]),
        b: (None, &[("servers", "3")]),
        until_ms: None,
        headline: "time_to_leader_ms",
    },
    AbPreset {
        name: "snapshot-transfer",
        scenario: "compaction-hours",
        a_label: "transfer, followers compact",
        b_label: "no transfer, any role compacts",
        a: (
            None,
            &[
                ("transfer_before_snapshot", "true"),
                ("snapshot_roles", "followers"),
            ],
        ),
        b: (
            None,
            &[
                ("transfer_before_snapshot", "false"),
                ("snapshot_roles", "any"),
            ],
        ),
        until_ms: None,
        headline: "leader.changes_per_hour",
    },
    AbPreset {
        name: "write-changed-only",
        scenario: "write-changed-only",
        a_label: "rewrites every row",
        b_label: "write-changed-only",
        a: (None, &[("write_changed_only", "false")]),
        b: (None, &[("write_changed_only", "true")]),
        until_ms: None,
        headline: "sb.northd.txn_bytes.mean",
    },
    AbPreset {
        name: "route-status",
        scenario: "route-status",
        a_label: "status rows",
        b_label: "no status rows",
        a: (None, &[("route_status", "true")]),
        b: (None, &[("route_status", "false")]),
        until_ms: None,
        headline: "sb.server_cpu_ms",
    },
];

/// An idle cluster whose leader is killed once the first election is over
/// even with a 16 s timer.
const FAILOVER: &str = "# An idle 3-server cluster; the leader is killed at 40 s.
name = failover
description = idle 3-server cluster, leader killed at 40 s
profile = v3.1
until_ms = 90000
[workload]
type = none
[faults]
at 40000 kill leader
";

/// What the page says of a preset: its title and one paragraph. Kept apart
/// from the runs' settings ([`AB_PRESETS`]) so that the worker, which runs
/// presets and never shows them, carries none of these words.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbWords {
    pub name: &'static str,
    /// Names A's side first ("X against Y", "without and with"), as the
    /// page lays A out first and takes the ratio A/B.
    pub title: &'static str,
    /// What the comparison shows, in one paragraph.
    pub explain: &'static str,
}

pub const AB_WORDS: &[AbWords] = &[
    AbWords {
        name: "commit-sync",
        title: "Commit-index sync: 100 writes through a follower",
        explain: "Before the fix, a follower learnt the new commit index only from the \
                  leader's next heartbeat, so each write sent through it waited about a \
                  heartbeat period. v2.12 sends the commit index right away.",
    },
    AbWords {
        name: "full-vs-diff",
        title: "Full values against column diffs: acl-portgroup, N=400",
        explain: "Each acl-add rewrites the port group's acls column. Stored as full \
                  values, every entry carries the whole growing set; stored as diffs, \
                  only the added or removed ACL.",
    },
    AbWords {
        name: "election-timer",
        title: "Election timer 16 s against 1 s: leader failover",
        explain: "The leader is killed at a random moment; followers wait one election \
                  timeout (plus a random part) before they stand. A long timer rides \
                  out slow moments but makes every failover that much longer.",
    },
    AbWords {
        name: "three-vs-five",
        title: "Five servers against three: 100 writes through a follower (v3.4)",
        explain: "A five-server cluster survives two failures instead of one. Every entry \
                  goes to four followers instead of two, so the cluster sends and writes \
                  nearly twice the bytes; on an idle fast network the write latency hardly \
                  moves, because the leader still needs only the two fastest replies.",
    },
    AbWords {
        name: "failover-3-vs-5",
        title: "Five servers against three: leader failover (leader-kill)",
        explain: "The idle leader is killed at a random moment. Each follower stands when \
                  its own election timeout (1 s plus a random part) runs out, so with four \
                  followers the first candidate comes a little sooner than with two; it \
                  then needs three votes instead of two. The scenario with five servers is \
                  also the preset leader-kill-5.",
    },
    AbWords {
        name: "snapshot-transfer",
        title: "Leadership transfer before a snapshot: three hours of writes",
        explain: "Only a follower may compact (2.17), so a leader whose log grew enough \
                  hands leadership to a follower first (2.16) and compacts as a follower: \
                  the leader moves at about every snapshot interval (10-20 min, then \
                  1-2 min re-checks until the log grew a lot). Without the transfer, and \
                  letting any role compact as before 2.16, the first leader keeps its \
                  place and blocks while it compacts. The scenario is the preset \
                  compaction-hours.",
    },
    AbWords {
        name: "write-changed-only",
        title: "ovn-northd without and with WRITE_CHANGED_ONLY: 120 chassis, 10000 ports",
        explain: "northd tracks the Port_Binding columns it writes, so they are read/write \
                  and, as soon as one value really changes, every column it rewrote goes \
                  in the transaction. Here each new pod makes northd's Southbound \
                  transaction carry 6 columns of every one of the 10000 ports (about \
                  3.3 MB), which northd builds, sends and the leader parses, against 3 KB \
                  with write-changed-only; the log and the controllers' updates are the \
                  same. Reproduced: the transaction's collapse (real: a 1.5 s build became \
                  negligible) and lower bring-up latency, mean and p99, by a drop that \
                  grows with the ports. Not reproduced: the sizes. The model's build is \
                  77 ms (the cost per column is an estimate), and its bring-up falls by \
                  about two thirds, not the real 30 % at 120 nodes, because real pod \
                  bring-up also includes Kubernetes, ovnkube and ovn-controller's work.",
    },
    AbWords {
        name: "route-status",
        title: "Advertised_Route_Status rows or not: 8000 routes, 120 chassis",
        explain: "With each port northd writes 40 Advertised_Route rows (8000 in all); with \
                  status rows, the chassis advertising a route writes one \
                  Advertised_Route_Status row for it, and every controller receives every \
                  row. The Southbound servers send and parse more, hold more, and a \
                  controller that reconnects downloads more. Reproduced: Southbound CPU \
                  and reconnect convergence grow by about half (+53 % and +52 %; measured \
                  +51 % and +51 %), and CPU by a similar share at 40000 routes \
                  (--set routes_per_port=200: +62 %; measured +51 %). Not reproduced: the \
                  share's size is the assumed status row (route, chassis, status; the \
                  real schema is unknown) against a route row, with no conditions on \
                  either table, so its closeness to 51 % is not evidence.",
    },
];

/// Scenarios only the A/B presets run (not among `raft_sim::PRESETS`), by
/// name: [`crate::RunSpec::base_text`] finds them, so a spec names them as
/// it names a preset and the page, which builds the specs, carries no text.
const AB_SCENARIOS: &[(&str, &str)] = &[("failover", FAILOVER)];

pub fn ab_scenario(name: &str) -> Option<&'static str> {
    AB_SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
}

pub fn ab_preset(name: &str) -> Option<&'static AbPreset> {
    AB_PRESETS.iter().find(|p| p.name == name)
}

impl AbPreset {
    /// The preset's title and paragraph (every preset has them: a test).
    pub fn words(&self) -> &'static AbWords {
        AB_WORDS
            .iter()
            .find(|w| w.name == self.name)
            .unwrap_or(&AB_WORDS[0])
    }

    fn side(
        &self,
        side: (
            Option<&'static str>,
            &'static [(&'static str, &'static str)],
        ),
        seed: u64,
    ) -> RunSpec {
        RunSpec {
            scenario: self.scenario.to_string(),
            text: None,
            profile: side.0.map(str::to_string),
            sets: crate::owned_sets(side.1),
            seed,
            interventions: Vec::new(),
            until_ms: self.until_ms,
        }
    }
    pub fn spec_a(&self, seed: u64) -> RunSpec {
        self.side(self.a, seed)
    }
    pub fn spec_b(&self, seed: u64) -> RunSpec {
        self.side(self.b, seed)
    }

    /// Both sides at `seed` with the caller's overrides (the CLI's
    /// `--profile` and `--set`): `profile` replaces each side's, and `sets`
    /// come after each side's own, so they win.
    pub fn sides_with(
        &self,
        seed: u64,
        profile: Option<&str>,
        sets: &[(String, String)],
    ) -> (RunSpec, RunSpec) {
        let over = |mut s: RunSpec| {
            if let Some(p) = profile {
                s.profile = Some(p.to_string());
            }
            s.sets.extend(sets.iter().cloned());
            s
        };
        (over(self.spec_a(seed)), over(self.spec_b(seed)))
    }
}

/// Runs both sides on `seeds` seeds from their own seed on (figures only,
/// no traces), `progress(done, total)` after each seed: one aggregate a
/// side. `ovsdb-scope compare --seeds` and the page's A/B over seeds.
pub fn run_sides(
    a: &RunSpec,
    b: &RunSpec,
    seeds: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(Aggregate, Aggregate), String> {
    let (mut x, mut y) = (Aggregate::default(), Aggregate::default());
    raft_sim::report::for_seeds(
        &mut [
            (&mut x, &mut |s| a.with_seed(s).build()),
            (&mut y, &mut |s| b.with_seed(s).build()),
        ],
        a.seed,
        seeds,
        progress,
    )?;
    Ok((x, y))
}

/// One row of the comparison table.
#[derive(Clone, Debug, PartialEq)]
pub struct AbRow {
    /// The figure's name (`RunResult::figure`; "throughput" is computed).
    pub name: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    pub a: Option<f64>,
    pub b: Option<f64>,
}

impl AbRow {
    pub fn delta(&self) -> Option<f64> {
        Some(self.b? - self.a?)
    }
    /// A / B (how many times larger A is).
    pub fn ratio(&self) -> Option<f64> {
        let (a, b) = (self.a?, self.b?);
        (b != 0.0).then(|| a / b)
    }
}

/// Throughput over the writing period, writes per second.
pub fn throughput(r: &RunResult) -> Option<f64> {
    let n = r.figure("txns.count")?;
    let ms = r.figure("txns.total_ms")?;
    (ms > 0.0).then(|| n * 1000.0 / ms)
}

/// A figure of the comparison table: its name, label and unit, and the
/// figure whose presence in either run brings it in ("" for always).
pub struct Figure {
    pub name: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    gate: &'static str,
}

const fn fig(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    gate: &'static str,
) -> Figure {
    Figure {
        name,
        label,
        unit,
        gate,
    }
}

const COMPACTED: &str = "compactions.total";
const SB: &str = "sb.chassis";
const SB_CPU: &str = "sb.server_cpu_ms";

/// The table's figures in order. Runs in which the snapshot scheduler
/// compacted (long runs) also get the leader changes and compactions;
/// Southbound runs the controllers' figures, and runs with the second
/// version's knobs northd's transactions and the server's CPU and memory.
const FIGURES: &[Figure] = &[
    fig("txns.count", "Writes", "", ""),
    fig("txns.total_ms", "Total write time", "ms", ""),
    fig("txns.latency_ms.p50", "Write latency p50", "ms", ""),
    fig("txns.latency_ms.p99", "Write latency p99", "ms", ""),
    fig("throughput", "Throughput", "writes/s", ""),
    fig("leaderless_ms", "Leaderless time", "ms", ""),
    fig("time_to_leader_ms", "Time to leader (mean)", "ms", ""),
    fig("terms", "Terms", "", ""),
    fig("bytes.log_written", "Bytes written (all servers)", "B", ""),
    fig("bytes.sent", "Bytes sent", "B", ""),
    fig("events", "Simulated events", "", ""),
    fig("leader.changes", "Leader changes", "", COMPACTED),
    fig(
        "leader.changes_per_hour",
        "Leader changes per hour",
        "",
        COMPACTED,
    ),
    fig(
        "leader.interval_ms.mean",
        "Leader change interval (mean)",
        "ms",
        COMPACTED,
    ),
    fig(COMPACTED, "Compactions (all servers)", "", COMPACTED),
    fig(SB, "Chassis", "", SB),
    fig("bringup.ms.mean", "Bring-up latency (mean)", "ms", SB),
    fig("bringup.ms.p99", "Bring-up latency p99", "ms", SB),
    fig("sb.update_bytes", "Update bytes to controllers", "B", SB),
    fig("sb.cpu_ms", "SB serving CPU", "ms", SB),
    fig("reconnect.converge_ms", "Reconnect convergence", "ms", SB),
    fig("reconnect.bytes", "Reconnect download bytes", "B", SB),
    fig(
        "sb.northd.txn_bytes.mean",
        "northd SB txn bytes (mean)",
        "B",
        SB_CPU,
    ),
    fig(
        "sb.northd.build_ms.mean",
        "northd SB txn build (mean)",
        "ms",
        SB_CPU,
    ),
    fig("sb.parse_cpu_ms", "SB parse CPU", "ms", SB_CPU),
    fig(SB_CPU, "SB server CPU (serving + parse)", "ms", SB_CPU),
    fig("sb.db_bytes", "SB database", "B", SB_CPU),
    fig(
        "sb.peak_mem_bytes",
        "SB server peak memory (model)",
        "B",
        SB_CPU,
    ),
];

/// The table's figure of this name, for its label and unit (the table over
/// seeds names its rows by figure).
pub fn figure(name: &str) -> Option<&'static Figure> {
    FIGURES.iter().find(|f| f.name == name)
}

fn value(r: &RunResult, name: &str) -> Option<f64> {
    if name == "throughput" {
        throughput(r)
    } else {
        r.figure(name)
    }
}

/// The comparison table of two runs.
pub fn rows(a: &RunResult, b: &RunResult) -> Vec<AbRow> {
    FIGURES
        .iter()
        .filter(|f| f.gate.is_empty() || a.figure(f.gate).is_some() || b.figure(f.gate).is_some())
        .map(|f| AbRow {
            name: f.name,
            label: f.label,
            unit: f.unit,
            a: value(a, f.name),
            b: value(b, f.name),
        })
        .collect()
}

impl AbPreset {
    /// The row the page headlines: the preset's own figure, when both runs
    /// have it (a run without writes has no write time to compare).
    pub fn headline_row<'r>(&self, rows: &'r [AbRow]) -> Option<&'r AbRow> {
        rows.iter()
            .find(|r| r.name == self.headline && r.a.is_some() && r.b.is_some())
    }
}

/// Histogram of write latencies of both runs on shared log-scale bins:
/// returns (bin lower edges in ms, counts of A, counts of B).
pub fn latency_histogram(a: &[u64], b: &[u64], bins: usize) -> (Vec<f64>, Vec<u64>, Vec<u64>) {
    let bins = bins.max(1);
    let all = a.iter().chain(b).copied();
    let lo = all.clone().min().unwrap_or(1).max(1) as f64;
    let hi = all.max().unwrap_or(1).max(1) as f64 * 1.0001;
    let (llo, lhi) = (lo.ln(), hi.ln().max(lo.ln() + 1e-9));
    let bin = |x: u64| {
        let f = ((x.max(1) as f64).ln() - llo) / (lhi - llo);
        ((f * bins as f64) as usize).min(bins - 1)
    };
    let mut ca = vec![0; bins];
    let mut cb = vec![0; bins];
    for &x in a {
        ca[bin(x)] += 1;
    }
    for &x in b {
        cb[bin(x)] += 1;
    }
    let edges = (0..bins)
        .map(|i| (llo + (lhi - llo) * i as f64 / bins as f64).exp() / 1000.0)
        .collect();
    (edges, ca, cb)
}

/// One figure of an A/B preset over several seeds: mean, p50 and p99 of
/// each side (the `compare --seeds` figures).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SeedRow {
    pub name: String,
    pub a: [f64; 3],
    pub b: [f64; 3],
}

/// An A/B preset run over seeds `first_seed ..first_seed + seeds`.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SeedsTable {
    pub preset: String,
    pub first_seed: u64,
    pub seeds: u64,
    /// The figures both sides have, in the simulator's order.
    pub rows: Vec<SeedRow>,
    /// Invariant violations of either side (none expected).
    pub violations: Vec<String>,
}

impl SeedsTable {
    pub fn row(&self, name: &str) -> Option<&SeedRow> {
        self.rows.iter().find(|r| r.name == name)
    }
}

/// Runs both sides of preset `p` on `seeds` seeds from `first_seed` (no
/// traces: only the figures), calling `progress(done, total)` after each
/// run. One seed alone can mislead (an election timer drawn early or
/// late); the table gives each figure's spread.
pub fn over_seeds(
    p: &AbPreset,
    first_seed: u64,
    seeds: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<SeedsTable, String> {
    let (sa, sb) = p.sides_with(first_seed, None, &[]);
    let (a, b) = run_sides(&sa, &sb, seeds, progress)?;
    Ok(SeedsTable::new(p.name, &a, &b))
}

impl SeedsTable {
    /// Each figure both sides have: its mean, p50 and p99 on either side.
    pub fn new(preset: &str, a: &Aggregate, b: &Aggregate) -> SeedsTable {
        let rows = a
            .names
            .iter()
            .filter_map(|n| {
                let (x, y) = (a.stat(n)?, b.stat(n)?);
                Some(SeedRow {
                    name: n.to_string(),
                    a: [x.0, x.1, x.2],
                    b: [y.0, y.1, y.2],
                })
            })
            .collect();
        let mut violations = a.violations.clone();
        violations.extend(b.violations.iter().cloned());
        SeedsTable {
            preset: preset.to_string(),
            first_seed: a.first_seed,
            seeds: a.seeds,
            rows,
            violations,
        }
    }
}

#[cfg(test)]
mod words_tests {
    use super::*;

    #[test]
    fn every_preset_has_its_own_words_and_no_words_are_left_over() {
        assert_eq!(AB_WORDS.len(), AB_PRESETS.len());
        for p in AB_PRESETS {
            let w = p.words();
            assert_eq!(w.name, p.name);
            assert!(!w.title.is_empty() && !w.explain.is_empty(), "{}", p.name);
        }
    }

    #[test]
    fn every_headline_is_a_figure_of_the_table_with_its_label() {
        for p in AB_PRESETS {
            let f = figure(p.headline).unwrap_or_else(|| panic!("{}", p.headline));
            assert!(
                !f.label.contains('.') && !f.label.contains('_'),
                "{}",
                f.label
            );
        }
        assert!(figure("no.such.figure").is_none());
    }
}
