//! Relay servers in whole runs: writes through a relay and a chain, a
//! relay's source dying, a relay dying, and the knobs that place them.

use raft_sim::relay::Node;
use raft_sim::{preset, Sim};

fn set(kv: &[(&str, &str)]) -> Vec<(String, String)> {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn run(text: &str, over: &[(&str, &str)]) -> (Sim, raft_sim::Metrics) {
    let mut sim = Sim::from_text(text, None, &set(over), 1).unwrap();
    let m = sim.run();
    assert!(m.violations.is_empty(), "{:?}", m.violations);
    (sim, m)
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len() as f64
}

#[test]
fn writes_through_a_relay_complete_and_land_in_its_copy() {
    let text = preset("ls-add-follower").unwrap();
    let (sim, m) = run(text, &[("relays", "1"), ("via", "relay")]);
    assert_eq!(m.txn_count(), 100);
    assert_eq!(m.relay.forward_us.len(), 100);
    assert_eq!(m.relay.visible_us.len(), 100);
    let mut have = sim.relays[0].switches();
    have.sort_unstable();
    assert_eq!(have, (1..=100).collect::<Vec<u64>>());
    // Every write crosses the relay: 1 monitor request and reply, then a
    // transact, its reply and an update per write.
    assert_eq!(m.relay.msgs, 2 + 3 * 100);
    assert_eq!(m.relay.full_downloads, 1);
    // The client sees its write no later than the reply, never before
    // its own request started.
    for (v, l) in m.relay.visible_us.iter().zip(&m.txn_latencies_us) {
        assert!(v <= l && *v > 0, "{v} {l}");
    }
    // The hop costs time: relay r1's source is s1, and a client that talks
    // to s1 itself is faster.
    let (_, direct) = run(text, &[("via", "s1")]);
    assert!(mean(&m.txn_latencies_us) > mean(&direct.txn_latencies_us));
    assert!(m.relay.bytes > 0 && direct.relay.bytes == 0);
}

#[test]
fn without_relays_nothing_changes_and_via_relay_needs_one() {
    let text = preset("ls-add-follower").unwrap();
    let a = Sim::from_text(text, None, &[], 1).unwrap().run();
    let b = Sim::from_text(text, None, &set(&[("relays", "0")]), 1)
        .unwrap()
        .run();
    assert_eq!(a, b);
    assert!(a.relay.forward_us.is_empty());
    let err = Sim::from_text(text, None, &set(&[("via", "relay")]), 1).unwrap_err();
    assert!(err.contains("relays"), "{err}");
    let err = Sim::from_text(text, None, &set(&[("relays", "1"), ("via", "r2")]), 1).unwrap_err();
    assert!(err.contains("r2"), "{err}");
    assert!(Sim::from_text(text, None, &set(&[("relays", "17")]), 1).is_err());
    // `--set via=` overrides the scenario's own via.
    let (_, m) = run(preset("relay-write").unwrap(), &[("via", "leader")]);
    assert_eq!(m.txn_count(), 100);
    assert!(m.relay.forward_us.is_empty());
}

#[test]
fn a_relay_chain_forwards_hop_by_hop_and_both_copies_fill() {
    let text = preset("relay-chain").unwrap();
    let (sim, m) = run(text, &[]);
    assert_eq!(m.txn_count(), 50);
    for r in &sim.relays {
        assert_eq!(r.switches().len(), 50, "r{}", r.id + 1);
    }
    assert_eq!(sim.relays[1].remotes, vec![raft_sim::relay::Node::Relay(0)]);
    // The same writes through one relay take fewer messages and less time.
    let (_, one) = run(text, &[("relay_chain", "false"), ("via", "r1")]);
    assert_eq!(one.txn_count(), 50);
    assert!(m.relay.msgs > one.relay.msgs);
    let p50 = |v: &[u64]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v[v.len() / 2]
    };
    assert!(p50(&m.txn_latencies_us) > p50(&one.txn_latencies_us));
    // r1 restarted empty and downloaded again; r2 resumed from it.
    assert!(m.relay.full_downloads >= 3, "{:?}", m.relay);
    assert!(m.relay.resumed >= 1, "{:?}", m.relay);
}

#[test]
fn a_relay_whose_source_dies_reconnects_and_resumes() {
    let (sim, m) = run(preset("relay-write").unwrap(), &[]);
    assert_eq!(m.txn_count(), 100);
    assert_eq!(m.relay.reconnects, 1);
    assert_eq!(m.relay.resumed, 1, "{:?}", m.relay);
    assert_ne!(sim.relays[0].source, Some(raft_sim::relay::Node::Member(0)));
    assert_eq!(sim.relays[0].switches().len(), 100);
    // Killed while transactions are in flight (kill the source at many
    // moments): cancelled ones are run again and every write lands.
    let mut canceled = 0;
    for t in (1640..1700).step_by(3) {
        let text = preset("relay-write")
            .unwrap()
            .replace("at 1700 kill s1", &format!("at {t}.5 kill s1"));
        let (sim, m) = run(&text, &[]);
        canceled += m.relay.canceled;
        let mut have = sim.relays[0].switches();
        have.sort_unstable();
        have.dedup();
        assert_eq!(have.len(), 100, "kill at {t}");
    }
    assert!(canceled > 0);
}

#[test]
fn a_killed_relay_restarts_empty_and_its_client_carries_on() {
    let text = preset("relay-write")
        .unwrap()
        .replace("at 1700 kill s1", "at 1800 kill r1")
        .replace("at 4000 restart s1", "at 2300 restart r1");
    let (sim, m) = run(&text, &[]);
    assert_eq!(m.txn_count(), 100);
    assert_eq!(m.relay.full_downloads, 2);
    assert_eq!(sim.relays[0].switches().len(), 100);
    // The write in flight at the kill waited for the restart.
    assert!(m.txn_latencies_us.iter().any(|l| *l > 400_000));
}

/// `relay-write` with its fault lines replaced.
fn relay_write_with(faults: &str) -> String {
    preset("relay-write")
        .unwrap()
        .replace("at 1700 kill s1\nat 4000 restart s1", faults)
}

/// A relay cut off from its source (s1) keeps the connection while TCP
/// holds the messages; after two 5 s probe intervals without a word it
/// drops it, connects to the next member it can reach and resumes. The
/// write caught in the partition waits that long; none is lost.
#[test]
fn a_relay_partitioned_from_its_source_moves_on_after_two_probe_intervals() {
    let (sim, m) = run(&relay_write_with("at 1700 partition r1 | s1"), &[]);
    assert_eq!(m.txn_count(), 100);
    assert_eq!(m.relay.reconnects, 1, "{:?}", m.relay);
    assert_eq!(m.relay.resumed, 1, "{:?}", m.relay);
    assert_eq!(sim.relays[0].source, Some(Node::Member(1)));
    assert_eq!(sim.relays[0].switches().len(), 100);
    let stuck = m
        .txn_latencies_us
        .iter()
        .filter(|l| **l > 9_000_000)
        .count();
    assert_eq!(stuck, 1, "{:?}", m.txn_latencies_us);
    assert!(m.txn_latencies_us.iter().all(|l| *l < 10_500_000));
}

/// Healed before the probes give up, the same partition only delays the
/// messages it held: same connection, no reconnect, every write lands
/// once. A one-way cut is enough to make the relay move on: the side
/// that hears nothing gives up.
#[test]
fn a_short_partition_delays_a_relays_messages_and_a_one_way_cut_moves_it() {
    let (sim, m) = run(
        &relay_write_with("at 1700 partition r1 | s1\nat 3000 heal"),
        &[],
    );
    assert_eq!(m.txn_count(), 100);
    assert_eq!(
        (m.relay.reconnects, m.relay.canceled),
        (0, 0),
        "{:?}",
        m.relay
    );
    assert_eq!(sim.relays[0].source, Some(Node::Member(0)));
    let mut have = sim.relays[0].switches();
    have.sort_unstable();
    assert_eq!(have, (1..=100).collect::<Vec<u64>>());
    let slow = m
        .txn_latencies_us
        .iter()
        .filter(|l| **l > 1_000_000)
        .count();
    assert_eq!(slow, 1, "{:?}", m.txn_latencies_us);
    // Messages sent through the heal are counted once.
    let (_, plain) = run(
        preset("ls-add-follower").unwrap(),
        &[("relays", "1"), ("via", "relay")],
    );
    assert_eq!(m.relay.msgs, plain.relay.msgs);
    for faults in ["at 1700 cut r1 -> s1", "at 1700 cut s1 -> r1"] {
        let (sim, m) = run(&relay_write_with(faults), &[]);
        assert_eq!(m.txn_count(), 100, "{faults}");
        assert_eq!(m.relay.reconnects, 1, "{faults}: {:?}", m.relay);
        assert_eq!(sim.relays[0].source, Some(Node::Member(1)), "{faults}");
        // The write whose reply the cut held ran, and its client, told the
        // connection was lost, runs it again (as after a source's death).
        let mut have = sim.relays[0].switches();
        have.sort_unstable();
        have.dedup();
        assert_eq!(have.len(), 100, "{faults}");
    }
}

/// Loss on the relay hops costs retransmission time, as TCP does: the
/// connection stays, writes are slower, every write lands once. Without
/// loss nothing changes (no draw is made).
#[test]
fn loss_on_relay_hops_costs_retransmission_time() {
    let (sim, m) = run(&relay_write_with("at 1700 loss 0.2\nat 9000 heal"), &[]);
    assert_eq!(m.txn_count(), 100);
    assert_eq!(m.relay.reconnects, 0, "{:?}", m.relay);
    assert!(m.relay.retransmits > 0, "{:?}", m.relay);
    let mut have = sim.relays[0].switches();
    have.sort_unstable();
    assert_eq!(have, (1..=100).collect::<Vec<u64>>());
    let (_, a) = run(&relay_write_with(""), &[]);
    let slow = |m: &raft_sim::Metrics| m.relay.forward_us.iter().filter(|f| **f >= 200_000).count();
    assert_eq!(slow(&a), 0);
    assert!(slow(&m) > 0);
    let (_, b) = run(&relay_write_with("at 1700 loss 0\nat 2600 heal"), &[]);
    assert_eq!(a.relay, b.relay);
    assert_eq!(a.txn_latencies_us, b.txn_latencies_us);
}
