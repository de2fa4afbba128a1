//! Small deterministic PRNG (xoshiro256** seeded through splitmix64).
//!
//! Written here rather than taken from a crate so that the exact same stream
//! comes out natively and in wasm, with no OS entropy anywhere.

/// xoshiro256** generator. `Clone` so that simulator checkpoints copy it.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform integer in [0, n); 0 when n == 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Lemire's multiply-shift; the tiny bias is irrelevant here and it is
        // identical on every platform.
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform float in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability p.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.unit() < p
    }

    /// Exponential with the given mean (in the caller's unit).
    pub fn exp(&mut self, mean: f64) -> f64 {
        if mean <= 0.0 {
            return 0.0;
        }
        let u = 1.0 - self.unit(); // (0, 1]
        -mean * ln(u)
    }

    /// 128 random bits formatted as a lower-case UUID string (version 4 bits set).
    pub fn uuid(&mut self) -> [u8; 36] {
        let a = self.next_u64();
        let b = self.next_u64();
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&a.to_be_bytes());
        bytes[8..].copy_from_slice(&b.to_be_bytes());
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        let hex = b"0123456789abcdef";
        let mut out = [b'0'; 36];
        let mut o = 0;
        for (i, byte) in bytes.iter().enumerate() {
            if i == 4 || i == 6 || i == 8 || i == 10 {
                out[o] = b'-';
                o += 1;
            }
            out[o] = hex[(byte >> 4) as usize];
            out[o + 1] = hex[(byte & 15) as usize];
            o += 2;
        }
        out
    }
}

/// Natural logarithm from basic IEEE operations only, so that native and
/// wasm builds give bit-identical results (libm `ln` may differ).
pub fn ln(x: f64) -> f64 {
    if x <= 0.0 || x.is_nan() {
        return f64::NEG_INFINITY;
    }
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if e == -1023 {
        // subnormal: scale up
        return ln(x * 4_503_599_627_370_496.0) - 52.0 * core::f64::consts::LN_2;
    }
    if m > core::f64::consts::SQRT_2 {
        m /= 2.0;
        e += 1;
    }
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let mut term = z;
    let mut sum = 0.0;
    let mut k = 1.0;
    for _ in 0..30 {
        sum += term / k;
        term *= z2;
        k += 2.0;
    }
    2.0 * sum + e as f64 * core::f64::consts::LN_2
}

/// 64-bit FNV-1a style running hash used for trace hashing.
#[derive(Clone, Debug)]
pub struct TraceHash(pub u64);

impl Default for TraceHash {
    fn default() -> Self {
        TraceHash(0xcbf2_9ce4_8422_2325)
    }
}

/// FNV-1a's prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01B3;

/// `FNV_PRIME` to the sixth power (wrapping): what six zero bytes do.
const FNV_PRIME_6: u64 = {
    let mut p = 1u64;
    let mut i = 0;
    while i < 6 {
        p = p.wrapping_mul(FNV_PRIME);
        i += 1;
    }
    p
};

impl TraceHash {
    /// FNV-1a over `v`'s eight little-endian bytes.
    #[inline]
    pub fn add(&mut self, v: u64) {
        if v < 1 << 16 {
            // Most values are codes and indices: their top six bytes are
            // zero, and a zero byte only multiplies by the prime, so the
            // six multiply as one (wrapping products associate).
            let h = (self.0 ^ (v & 0xFF)).wrapping_mul(FNV_PRIME);
            let h = (h ^ (v >> 8)).wrapping_mul(FNV_PRIME);
            self.0 = h.wrapping_mul(FNV_PRIME_6);
            return;
        }
        for b in v.to_le_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(FNV_PRIME);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short path for small values hashes as the byte loop does.
    #[test]
    fn trace_hash_small_values_as_bytes() {
        let bytewise = |h: u64, v: u64| {
            let mut h = h;
            for b in v.to_le_bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(FNV_PRIME);
            }
            h
        };
        let mut t = TraceHash::default();
        let mut want = t.0;
        let values = (0..70_000u64).chain([u64::MAX, 1 << 16, (1 << 16) - 1, 0x5B00, 1 << 40]);
        for v in values {
            t.add(v);
            want = bytewise(want, v);
            assert_eq!(t.0, want, "{v}");
        }
    }
    #[test]
    fn deterministic_and_spread() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut hist = [0u32; 10];
        for _ in 0..100_000 {
            hist[a.below(10) as usize] += 1;
        }
        for h in hist {
            assert!((9_000..11_000).contains(&h), "{hist:?}");
        }
        for x in [1e-300, 0.001, 0.5, 1.0, 2.0, 10.0, 12345.678] {
            assert!((ln(x) - x.ln()).abs() < 1e-12 * (1.0 + x.ln().abs()), "{x}");
        }
        let u = a.uuid();
        assert_eq!(u[8], b'-');
        assert_eq!(u[14], b'4');
    }
}
