//! UUIDs as the log formats write them (36-char canonical text).

use std::fmt;

/// A 128-bit UUID. Parsed from canonical text in either case; printed in
/// lower case (as OVS writes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    pub const ZERO: Uuid = Uuid([0; 16]);

    /// Parses `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex in either case).
    pub fn parse(s: &str) -> Option<Uuid> {
        let b = s.as_bytes();
        if b.len() != 36 {
            return None;
        }
        let mut out = [0u8; 16];
        let mut k = 0;
        let mut i = 0;
        while i < 36 {
            if matches!(i, 8 | 13 | 18 | 23) {
                if b[i] != b'-' {
                    return None;
                }
                i += 1;
                continue;
            }
            let hi = hexv(b[i])?;
            let lo = hexv(b[i + 1])?;
            out[k] = (hi << 4) | lo;
            k += 1;
            i += 2;
        }
        Some(Uuid(out))
    }

    pub fn is_zero(&self) -> bool {
        self.0 == [0; 16]
    }

    /// First 32-bit word (what OVS's `uuid_hash` uses).
    pub fn word0(&self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }

    /// First 4 hex digits (as `show-log` and `check-cluster` print them).
    pub fn short4(&self) -> String {
        self.to_string()[..4].to_string()
    }

    /// First 8 hex digits.
    pub fn short8(&self) -> String {
        self.to_string()[..8].to_string()
    }

    /// A UUID derived from a seed (deterministic, for writers and tests
    /// that need fresh IDs without a random source). Version-4 layout.
    pub fn from_seed(seed: u64) -> Uuid {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let a = next().to_be_bytes();
        let b = next().to_be_bytes();
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&a);
        out[8..].copy_from_slice(&b);
        out[6] = (out[6] & 0x0f) | 0x40;
        out[8] = (out[8] & 0x3f) | 0x80;
        Uuid(out)
    }
}

fn hexv(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = crate::framing::hex(&self.0);
        write!(
            f,
            "{}-{}-{}-{}-{}",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn roundtrip() {
        let s = "6406d516-5d1a-46fc-84a6-77eefe27fd14";
        let u = Uuid::parse(s).unwrap();
        assert_eq!(u.to_string(), s);
        assert_eq!(Uuid::parse(&s.to_uppercase()), Some(u));
        assert_eq!(u.short4(), "6406");
        assert!(Uuid::parse("6406d516-5d1a-46fc-84a6-77eefe27fd1").is_none());
        assert!(Uuid::parse("6406d516x5d1a-46fc-84a6-77eefe27fd14").is_none());
        assert!(Uuid::parse("6406d516-5d1a-46fc-84a6-77eefe27fd1g").is_none());
    }
}
