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

    /// Moves on as `n` calls of [`SplitMix64::uuid`] would, without
    /// making them (each draws two numbers).
    pub fn skip_uuids(&mut self, n: usize) {
        self.state = self
            .state
            .wrapping_add(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(2 * n as u64));
    }

    /// A random version-4 UUID.
    pub fn uuid(&mut self) -> Uuid {
        let hi = self.next_u64() as u128;
        let lo = self.next_u64() as u128;
        Uuid::new_v4((hi << 64) | lo)
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn skipping_uuids_lands_where_drawing_them_would() {
        for n in [0, 1, 2, 7, 1000] {
            let (mut drawn, mut skipped) = (SplitMix64::new(42), SplitMix64::new(42));
            for _ in 0..n {
                drawn.uuid();
            }
            skipped.skip_uuids(n);
            assert_eq!(drawn.uuid(), skipped.uuid(), "after {n}");
        }
    }
}
