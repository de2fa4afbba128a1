//! Fuzzes the scenario grammar (the trainers' preset files), the `--set`
//! knob parser and the fault lines, then runs what parses. Invariants:
//! * nothing panics on any input, whatever the knobs ask for;
//! * every fault line the parser accepts is written back by
//!   `Fault::to_line` as a line that parses to the same fault;
//! * a scenario that parses runs (a bounded number of events) with no
//!   safety violation: election safety, log matching, leader completeness,
//!   state-machine safety and the relays' commit order hold for any
//!   scenario, not just the presets.
//!
//! Input: scenario text, optionally followed by a line `---` and then
//! `name=value` overrides, one per line (what `--set` takes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use raft_sim::{Scenario, Sim};

/// Events a run may take: enough for elections, a few writes and faults,
/// small enough that every input runs in milliseconds.
const MAX_EVENTS: &str = "20000";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (scn, sets) = match text.split_once("\n---\n") {
        Some((a, b)) => (a, b),
        None => (text, ""),
    };
    let mut overrides: Vec<(String, String)> = sets
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();

    // Each fault line on its own, whether or not the whole file parses.
    for line in scn.lines() {
        if let Ok(f) = Scenario::fault(line.trim()) {
            let back = f.to_line();
            let again = Scenario::fault(&back)
                .unwrap_or_else(|e| panic!("'{line}' wrote '{back}', which fails: {e}"));
            assert_eq!(f, again, "'{line}' -> '{back}'");
        }
    }

    // The bound comes last, so no input can lift it; servers and relays are
    // clamped by the knob parser itself.
    overrides.push(("max_events".into(), MAX_EVENTS.into()));
    let Ok(mut sim) = Sim::from_text(scn, None, &overrides, 1) else {
        return;
    };
    let m = sim.run();
    assert!(
        m.violations.is_empty(),
        "safety violated by a scenario that parses: {:?}",
        m.violations
    );
});
