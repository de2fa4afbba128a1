//! simview: the view model of ovsdb-scope's simulation pages (issue 7),
//! sans IO. It runs a `raft-sim` simulation described by a [`RunSpec`]
//! (preset or edited scenario text, profile, knob overrides, seed and the
//! interventions added while watching), records it as a [`Trace`] the page
//! draws and scrubs, and holds the A/B presets, permalinks and the tour.
//!
//! An intervention is a fault line appended to the scenario at the moment it
//! was made (`at 5230.5 kill s1`): the run is deterministic and a fault
//! that fires at `T` leaves everything before `T` unchanged, so the forked
//! run shares its past with the run it was forked from, and the permalink
//! of the fork reproduces it.

pub mod ab;
pub mod link;
pub mod tour;
pub mod trace;

pub use ab::{AbPreset, AbRow, AB_PRESETS};
pub use link::{parse_hash, Route};
pub use raft_sim::relay::Node;
pub use raft_sim::scenario::{Fault, FaultAction, Target};
pub use raft_sim::Profile;
pub use trace::{EntryMark, Message, Note, Recorder, StatePoint, Trace, Write};

/// The profile names a page offers, newest first (`Profile::ALL` reversed).
pub fn profile_names() -> impl Iterator<Item = &'static str> {
    Profile::ALL.into_iter().rev().map(Profile::name)
}

use raft_sim::report;
use raft_sim::scenario::Scenario;
use raft_sim::Sim;

#[cfg(feature = "serde")]
use serde::{Deserialize, Serialize};

/// Everything that defines a run.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct RunSpec {
    /// Preset name (see `raft_sim::PRESETS`), or `custom` with [`RunSpec::text`].
    pub scenario: String,
    /// Scenario text when edited by hand.
    pub text: Option<String>,
    /// Profile (a `Profile` name: `v3.4`, `v3.1`, `v2.12`, …); `None` = the scenario's.
    pub profile: Option<String>,
    /// Knob overrides, as `--set name=value`.
    pub sets: Vec<(String, String)>,
    pub seed: u64,
    /// Fault lines added while watching, in the order they were made.
    pub interventions: Vec<String>,
    /// Overrides the scenario's `until_ms`.
    pub until_ms: Option<u64>,
}

impl RunSpec {
    pub fn preset(name: &str) -> RunSpec {
        RunSpec {
            scenario: name.to_string(),
            seed: 1,
            ..RunSpec::default()
        }
    }

    /// The scenario text without interventions.
    pub fn base_text(&self) -> Result<String, String> {
        if let Some(t) = &self.text {
            return Ok(t.clone());
        }
        raft_sim::preset(&self.scenario)
            .or_else(|| ab::ab_scenario(&self.scenario))
            .map(str::to_string)
            .ok_or_else(|| format!("unknown scenario preset '{}'", self.scenario))
    }

    /// The scenario text the run uses: the base text with the interventions
    /// appended in a `[faults]` section.
    pub fn full_text(&self) -> Result<String, String> {
        let mut t = self.base_text()?;
        if !self.interventions.is_empty() {
            if !t.ends_with('\n') {
                t.push('\n');
            }
            t.push_str("[faults]\n");
            for line in &self.interventions {
                t.push_str(line);
                t.push('\n');
            }
        }
        Ok(t)
    }

    /// Builds the simulator for this spec.
    pub fn build(&self) -> Result<Sim, String> {
        let text = self.full_text()?;
        let mut sc = Scenario::parse(&text)?;
        if let Some(u) = self.until_ms {
            sc.until_ms = u;
        }
        Sim::from_scenario(sc, self.profile.as_deref(), &self.sets, self.seed)
    }

    /// The same run with another seed.
    pub fn with_seed(&self, seed: u64) -> RunSpec {
        RunSpec {
            seed,
            ..self.clone()
        }
    }

    /// The same run plus one intervention: `action` at `t_us`.
    pub fn fork(&self, t_us: u64, action: FaultAction) -> RunSpec {
        self.fork_faults(&[Fault::at(t_us, action)])
    }

    /// The same run plus these faults (one intervention may take several,
    /// e.g. "drop the next message": loss 1 now, loss 0 after the send).
    /// Each is written as the scenario line the parser reads back.
    pub fn fork_faults(&self, faults: &[Fault]) -> RunSpec {
        let mut s = self.clone();
        s.interventions.extend(faults.iter().map(Fault::to_line));
        s
    }
}

/// Knob overrides written as static pairs (A/B sides, tour steps) in the
/// owned form of [`RunSpec::sets`].
pub fn owned_sets(sets: &[(&str, &str)]) -> Vec<(String, String)> {
    sets.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub use raft_sim::scenario::fmt_ms;

/// One figure of a run (dotted name as in `ovsdb-scope simulate --json`).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct Figure {
    pub name: String,
    pub value: Option<f64>,
}

/// A finished run: its trace and figures.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize, Deserialize))]
pub struct RunResult {
    pub spec: RunSpec,
    pub scenario_name: String,
    /// The scenario's `description` line: what the run shows, in one line
    /// (the Simulate page's title says it under the name).
    pub description: String,
    pub profile: String,
    pub trace: Trace,
    pub figures: Vec<Figure>,
    /// Write latencies in µs, in completion order.
    pub latencies_us: Vec<u64>,
    /// The `ovsdb-scope simulate --json` object of this run.
    pub json: String,
    pub trace_hash: u64,
    pub violations: Vec<String>,
    /// The scenario text the run started from ([`RunSpec::base_text`]):
    /// the page's editor shows it (the page holds no preset texts).
    pub base_text: String,
}

impl RunResult {
    pub fn figure(&self, name: &str) -> Option<f64> {
        self.figures
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.value)
    }
    pub fn total_ms(&self) -> f64 {
        self.figure("txns.total_ms").unwrap_or(0.0)
    }
}

/// Runs `spec` to its end, recording the trace. `progress(now_us, stop_us)`
/// is called every few thousand events (for a progress bar).
pub fn run(spec: &RunSpec, progress: &mut dyn FnMut(u64, u64)) -> Result<RunResult, String> {
    run_keeping_sim(spec, progress).map(|(r, _)| r)
}

/// [`run`], and the finished simulator handed back with the result, so that
/// a caller can answer before it frees the simulated servers' databases
/// (the page's worker posts the result first: freeing them was about a
/// twentieth of a run with writes).
pub fn run_keeping_sim(
    spec: &RunSpec,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(RunResult, Sim), String> {
    let mut sim = spec.build()?;
    let mut rec = Recorder::new(&mut sim);
    let stop = sim.stop_at();
    let mut n = 0u64;
    while sim.step() {
        rec.observe(&sim);
        n += 1;
        if n.is_multiple_of(4096) {
            rec.drain(&mut sim);
            progress(sim.now(), stop);
        }
    }
    let trace = rec.finish(&mut sim);
    let m = sim.finish();
    let result = RunResult {
        spec: spec.clone(),
        scenario_name: sim.scenario.name.clone(),
        description: sim.scenario.description.clone(),
        profile: sim.knobs.profile.name().to_string(),
        trace,
        figures: report::figures(&m)
            .into_iter()
            .map(|(name, value)| Figure {
                name: name.to_string(),
                value,
            })
            .collect(),
        latencies_us: m.txn_latencies_us.clone(),
        json: report::run_json(&sim, &m),
        trace_hash: sim.trace_hash(),
        violations: m.violations.clone(),
        base_text: spec.base_text().unwrap_or_default(),
    };
    Ok((result, sim))
}

/// A run as files: one clustered `.db` per server (written by the
/// simulator's `--write-logs` machinery, readable by the explorer and
/// `ovsdb-tool`) and the `simulate --json` metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    pub files: Vec<(String, Vec<u8>)>,
    pub json: String,
}

/// Runs `spec` with log capture on and returns its files.
pub fn export(spec: &RunSpec) -> Result<Export, String> {
    let mut sim = spec.build()?;
    sim.capture_logs();
    let m = sim.run();
    let files = raft_sim::logs::write_logs(&sim)?;
    Ok(Export {
        files,
        json: report::run_json(&sim, &m),
    })
}
