#[path = "../tests/property.rs"]
#[allow(dead_code)]
mod property;
fn main() {
    let a: u64 = std::env::args()
        .nth(1)
        .and_then(|x| x.parse().ok())
        .unwrap_or(1);
    let b: u64 = std::env::args()
        .nth(2)
        .and_then(|x| x.parse().ok())
        .unwrap_or(50);
    for seed in a..=b {
        let (label, text) = property::random_scenario(seed);
        let mut sim = raft_sim::Sim::from_text(&text, None, &[], seed).unwrap();
        let mut n = 0u64;
        while sim.step() {
            n += 1;
            if n > 3_000_000 {
                println!("{label}: runaway at t={} events {n}\n{text}", sim.now());
                break;
            }
        }
        let m = sim.finish();
        if n > 200_000 || !m.violations.is_empty() {
            println!("{label}: events {n} viol {:?}", m.violations);
        }
    }
}
