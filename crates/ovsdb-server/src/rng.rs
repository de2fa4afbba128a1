//! A tiny deterministic PRNG (splitmix64), identical on wasm and native, used
//! to make row UUIDs and transaction ids reproducible from a seed.

use ovsdb::uuid::Uuid;

#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A random version-4 UUID.
    pub fn uuid(&mut self) -> Uuid {
        let hi = self.next_u64() as u128;
        let lo = self.next_u64() as u128;
        Uuid::new_v4((hi << 64) | lo)
    }
}
