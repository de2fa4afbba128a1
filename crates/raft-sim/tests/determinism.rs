//! Same scenario + profile + seed => identical trace; checkpoints (Clone)
//! continue identically.

use raft_sim::{preset, Sim, PRESETS};

#[test]
fn same_seed_same_trace_different_seed_different_trace() {
    for (name, text) in PRESETS {
        let h = |seed| {
            let mut s = Sim::from_text(text, None, &[], seed).unwrap();
            let m = s.run();
            assert!(m.violations.is_empty(), "{name}: {:?}", m.violations);
            s.trace_hash()
        };
        assert_eq!(h(7), h(7), "{name}");
        assert_ne!(h(7), h(8), "{name}");
    }
}

#[test]
fn checkpoint_clone_continues_identically() {
    let mut a = Sim::from_text(preset("membership").unwrap(), None, &[], 3).unwrap();
    a.record_events = true;
    a.run_until(4_000_000);
    let mut b = a.clone();
    let ma = a.run();
    let mb = b.run();
    assert_eq!(a.trace_hash(), b.trace_hash());
    assert_eq!(ma, mb);
    assert_eq!(a.events(), b.events());
}

#[test]
fn step_by_step_equals_run() {
    let text = preset("election-timer").unwrap();
    let mut a = Sim::from_text(text, None, &[], 11).unwrap();
    let mut b = Sim::from_text(text, None, &[], 11).unwrap();
    let ma = a.run();
    let mut steps = 0;
    while b.step() {
        steps += 1;
    }
    let mb = b.finish();
    assert_eq!(ma, mb);
    assert_eq!(steps as u64, mb.events);
    assert_eq!(a.trace_hash(), b.trace_hash());
}
