//! Safety under random faults: at least 2000 random seeds, each with a
//! random profile, cluster size, workload and fault schedule. Any violation
//! report names the seed (and the generated scenario) for replay.

use raft_sim::rng::Rng;
use raft_sim::Sim;

/// Generate a scenario text with random faults from `seed`.
pub fn random_scenario(seed: u64) -> (String, String) {
    let mut r = Rng::new(seed ^ 0x5EED_5EED);
    // The five profiles the generator was written with (seed 37 below
    // depends on the draw); the field versions get their own test.
    let profiles = ["v2.11", "v2.12-pre-sync", "v2.12", "v3.1", "main"];
    let profile = profiles[r.below(5) as usize];
    let n = if r.chance(0.3) { 5 } else { 3 };
    let until = 5000 + r.below(5000);
    let mut s = format!(
        "name = random-{seed}\nprofile = {profile}\nuntil_ms = {until}\n[knobs]\nservers = {n}\nelection_timer = {}\n",
        [1000, 1000, 2000, 500][r.below(4) as usize]
    );
    if r.chance(0.3) {
        s.push_str("column_diff = false\n");
    }
    let via = 1 + r.below(n);
    s.push_str(&format!(
        "[workload]\ntype = open\nrate = {}\nvia = s{via}\nop = ls-add * forever\n[faults]\n",
        5 + r.below(30)
    ));
    let n_faults = 1 + r.below(7);
    for _ in 0..n_faults {
        let t = 500 + r.below(until - 500);
        let srv = 1 + r.below(n);
        let other = 1 + (srv % n);
        let line = match r.below(12) {
            0 | 1 => format!("at {t} kill leader\nat {} restart leader", t + 1), // restart resolves to no one
            2 => format!(
                "at {t} kill s{srv}\nat {} restart s{srv}",
                t + 200 + r.below(3000)
            ),
            3 => format!(
                "at {t} partition s{srv} | s{other}\nat {} heal",
                t + r.below(4000)
            ),
            4 => format!(
                "at {t} cut s{srv} -> s{other}\nat {} heal",
                t + r.below(4000)
            ),
            5 => format!(
                "at {t} loss 0.{}\nat {} heal",
                1 + r.below(3),
                t + r.below(3000)
            ),
            6 => format!("at {t} pause s{srv} {}", 100 + r.below(3000)),
            7 => format!("at {t} slow_disk s{srv} {}", 2 + r.below(50)),
            8 => format!("at {t} transfer"),
            9 => format!(
                "at {t} election_timer {}",
                [500, 1000, 2000][r.below(3) as usize]
            ),
            10 => format!("at {t} compact s{srv}"),
            _ => {
                let rest: Vec<String> = (1..=n)
                    .filter(|x| *x != srv)
                    .map(|x| format!("s{x}"))
                    .collect();
                format!(
                    "at {t} partition s{srv} | {}\nat {} heal",
                    rest.join(","),
                    t + r.below(5000)
                )
            }
        };
        s.push_str(&line);
        s.push('\n');
    }
    // Kill the leader for good sometimes, restarting it later.
    if r.chance(0.3) {
        s.push_str(&format!(
            "at {} kill s1\nat {} restart s1\n",
            until / 3,
            until / 2
        ));
    }
    (format!("seed {seed} profile {profile}"), s)
}

#[test]
fn two_thousand_random_seeds_zero_violations() {
    let seeds: u64 = std::env::var("RAFT_SIM_PROPERTY_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let mut failures = Vec::new();
    let mut commits = 0u64;
    let mut elections = 0u64;
    for seed in 1..=seeds {
        let (label, text) = random_scenario(seed);
        // Executing entries on the core database is checked elsewhere; do it
        // on every 10th seed here to keep the suite fast.
        let core = if seed % 10 == 0 { "true" } else { "false" };
        let over = vec![("core_db".to_string(), core.to_string())];
        let mut sim = Sim::from_text(&text, None, &over, seed)
            .unwrap_or_else(|e| panic!("{label}: {e}\n{text}"));
        let m = sim.run();
        commits += m.txn_count() as u64;
        elections += m.elections;
        if !m.violations.is_empty() {
            failures.push(format!(
                "{label}: {}\n--- scenario ---\n{text}",
                m.violations.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing seeds; first:\n{}",
        failures.len(),
        failures[0]
    );
    // The runs did real work (not vacuous).
    assert!(
        commits > seeds * 20,
        "only {commits} client writes completed"
    );
    assert!(elections > seeds, "only {elections} elections");
}

#[test]
fn checker_catches_a_deliberately_unsafe_vote_rule() {
    // Same generator, but servers grant votes without the log check: the
    // invariant checker must notice (and name the seed) on some seeds.
    let mut caught = Vec::new();
    let mut lost_writes = 0;
    for seed in 1..=400 {
        let (_, text) = random_scenario(seed);
        let over = vec![
            ("unsafe_vote_any_log".to_string(), "true".to_string()),
            ("core_db".to_string(), "false".to_string()),
        ];
        let mut sim = Sim::from_text(&text, None, &over, seed).unwrap();
        let m = sim.run();
        // The at-least-once check reads the servers' own databases.
        lost_writes += m
            .violations
            .iter()
            .filter(|v| v.contains("acknowledged write ls-add"))
            .count();
        if let Some(v) = m.violations.first() {
            assert!(v.starts_with(&format!("seed {seed} ")), "{v}");
            caught.push(v.clone());
        }
    }
    assert!(
        !caught.is_empty(),
        "no violation detected with a broken vote rule"
    );
    assert!(lost_writes > 0, "no acknowledged write found missing");
}

#[test]
fn durability_window_after_truncation_is_observed_not_hidden() {
    // raft.c sets log_synced from an entry waiter even when that entry was
    // truncated and re-written meanwhile, so a later append_reply can pass
    // the send gate before the re-written entry is durable. The simulator
    // mirrors this and counts it; with this generator it shows up once in
    // 2000 faulty runs, at seed 37.
    let (_, text) = random_scenario(37);
    let over = vec![("core_db".to_string(), "false".to_string())];
    let mut sim = Sim::from_text(&text, None, &over, 37).unwrap();
    let m = sim.run();
    assert!(m.violations.is_empty(), "{:?}", m.violations);
    assert_eq!(m.early_acks, 1);
}

#[test]
fn field_version_profiles_are_safe_under_random_faults() {
    // The same random scenarios, each run with one of the field-version
    // profiles (2.17, 3.2, 3.3, 3.4) in place of the one it drew.
    let field = ["v2.17", "v3.2", "v3.3", "v3.4"];
    let mut commits = 0;
    for seed in 1..=400u64 {
        let (_, text) = random_scenario(seed);
        let profile = field[(seed % 4) as usize];
        let text: String = text
            .lines()
            .map(|l| {
                if l.starts_with("profile = ") {
                    format!("profile = {profile}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let over = vec![("core_db".to_string(), "false".to_string())];
        let mut sim = Sim::from_text(&text, None, &over, seed).unwrap();
        assert_eq!(sim.knobs.profile.name(), profile);
        let m = sim.run();
        assert!(m.violations.is_empty(), "{profile}: {:?}", m.violations);
        commits += m.txn_latencies_us.len();
    }
    assert!(commits > 400 * 10, "only {commits} client writes completed");
}

/// The same random scenarios with 1-3 relays in front (a chain on some
/// seeds), the client behind one of them, five servers on half of the
/// seeds, and relays killed and restarted among the other faults.
pub fn random_relay_scenario(seed: u64) -> (String, String) {
    let (label, text) = random_scenario(seed);
    let mut r = Rng::new(seed ^ 0x0E1A_7000);
    let relays = 1 + r.below(3);
    let chain = r.chance(0.3);
    let five = seed.is_multiple_of(2);
    let until: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("until_ms = ")?.parse().ok())
        .unwrap_or(5000);
    let via = 1 + r.below(relays);
    let mut out = String::new();
    for l in text.lines() {
        if l == "[knobs]" {
            out.push_str(&format!(
                "[knobs]\nrelays = {relays}\nrelay_chain = {chain}\n"
            ));
        } else if l.starts_with("servers = ") && five {
            out.push_str("servers = 5\n");
        } else if l.starts_with("via = ") {
            out.push_str(&format!("via = r{via}\n"));
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    for _ in 0..r.below(3) {
        let t = 500 + r.below(until - 500);
        let k = 1 + r.below(relays);
        out.push_str(&format!(
            "at {t} kill r{k}\nat {} restart r{k}\n",
            t + r.below(3000)
        ));
    }
    (
        format!("{label} relays {relays} chain {chain} five {five}"),
        out,
    )
}

/// Safety with relays on `RAFT_SIM_RELAY_SEEDS` seeds (default 2000; the
/// issue's 10 000: `RAFT_SIM_RELAY_SEEDS=10000 cargo test --release -p
/// raft-sim --test property relay`).
/// Seeds 1..=N (N from `env`, else `default`) of scenario generator `gen`
/// with relays, without the core database: panics naming the first seed
/// that breaks an invariant; returns (seeds, client writes, writes
/// forwarded by relays, relay reconnects).
fn relay_seeds(env: &str, default: u64, gen: fn(u64) -> (String, String)) -> (u64, u64, u64, u64) {
    let seeds: u64 = std::env::var(env)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    let mut failures = Vec::new();
    let (mut commits, mut forwarded, mut reconnects) = (0u64, 0u64, 0u64);
    for seed in 1..=seeds {
        let (label, text) = gen(seed);
        let over = vec![("core_db".to_string(), "false".to_string())];
        let mut sim = Sim::from_text(&text, None, &over, seed)
            .unwrap_or_else(|e| panic!("{label}: {e}\n{text}"));
        let m = sim.run();
        commits += m.txn_count() as u64;
        forwarded += m.relay.forward_us.len() as u64;
        reconnects += m.relay.reconnects;
        if !m.violations.is_empty() {
            failures.push(format!(
                "{label}: {}\n--- scenario ---\n{text}",
                m.violations.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing seeds; first:\n{}",
        failures.len(),
        failures[0]
    );
    (seeds, commits, forwarded, reconnects)
}

#[test]
fn random_faulted_seeds_with_relays_and_five_servers_zero_violations() {
    let (seeds, commits, forwarded, reconnects) =
        relay_seeds("RAFT_SIM_RELAY_SEEDS", 2000, random_relay_scenario);
    // Writes went through the relays, and relays lost their sources.
    assert!(commits > seeds * 20, "only {commits} client writes");
    assert!(forwarded >= commits, "{forwarded} forwarded of {commits}");
    assert!(reconnects > seeds / 10, "only {reconnects} reconnects");
}

/// Seed 5625, the first of the five failures at 10 000 seeds: relay r1,
/// restarted at 7.79 s, gets s1's whole copy (up to index 231) and, 32 µs
/// behind it, the update for index 232; one poll of r1 reads both. The
/// checker took the copy's last transaction after that poll (232) for the
/// loaded one, so the update it had just applied looked like a repeat
/// ("applied index 232 after index 232"). The load now reports the copy as
/// the reply brought it.
#[test]
fn relay_seed_5625_copy_and_the_update_behind_it_in_one_poll() {
    let (label, text) = random_relay_scenario(5625);
    let over = vec![("core_db".to_string(), "false".to_string())];
    let mut sim = Sim::from_text(&text, None, &over, 5625).unwrap();
    let m = sim.run();
    assert!(m.violations.is_empty(), "{label}: {:?}", m.violations);
    // r1 and r2 at the start, r1 again after its restart.
    assert_eq!(m.relay.full_downloads, 3, "{label}");
    assert!(sim.relay_copy_index(0) > 231);
}

/// The relay scenarios with faults on the relay hops added: a relay
/// isolated from a member or from another relay (healed or not), one-way
/// cuts, and extra delay on a hop.
pub fn random_relay_link_scenario(seed: u64) -> (String, String) {
    let (label, mut text) = random_relay_scenario(seed);
    let mut r = Rng::new(seed ^ 0x11AC_C0DE);
    let relays = text
        .lines()
        .find_map(|l| l.strip_prefix("relays = ")?.parse::<u64>().ok())
        .unwrap_or(1);
    let servers = text
        .lines()
        .find_map(|l| l.strip_prefix("servers = ")?.parse::<u64>().ok())
        .unwrap_or(3);
    let until: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("until_ms = ")?.parse().ok())
        .unwrap_or(5000);
    for _ in 0..1 + r.below(3) {
        let t = 300 + r.below(until - 300);
        let k = 1 + r.below(relays);
        let peer = if relays > 1 && r.chance(0.3) {
            format!("r{}", 1 + (k % relays))
        } else {
            format!("s{}", 1 + r.below(servers))
        };
        let line = match r.below(4) {
            0 => format!("at {t} partition r{k} | {peer}"),
            1 => format!("at {t} cut r{k} -> {peer}"),
            2 => format!("at {t} cut {peer} -> r{k}"),
            _ => format!("at {t} link_delay {peer} -> r{k} {}", 1 + r.below(400)),
        };
        text.push_str(&line);
        text.push('\n');
        if r.chance(0.6) {
            text.push_str(&format!("at {} heal\n", t + r.below(15_000)));
        }
    }
    (format!("{label} relay-link faults"), text)
}

/// Safety with faults on the relay hops on `RAFT_SIM_RELAY_LINK_SEEDS`
/// seeds (default 1000; 10 000: `RAFT_SIM_RELAY_LINK_SEEDS=10000 cargo
/// test --release -p raft-sim --test property relay_hops`).
#[test]
fn random_faults_on_relay_hops_zero_violations() {
    let (seeds, commits, _, reconnects) = relay_seeds(
        "RAFT_SIM_RELAY_LINK_SEEDS",
        1000,
        random_relay_link_scenario,
    );
    assert!(commits > seeds * 20, "only {commits} client writes");
    assert!(reconnects > seeds / 5, "only {reconnects} reconnects");
}
