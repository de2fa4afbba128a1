//! UUIDs as OVSDB uses them: 128 bits, canonical 36-character lowercase
//! text, ordered as four 32-bit words in textual order (= numeric order of
//! the big-endian 128-bit value).

use std::fmt;

/// Aligned to 8 bytes, not `u128`'s 16: an [`Atom`](crate::Atom) (whose
/// largest other variant, `String`, is 24 bytes with a niche) is then 24
/// bytes instead of 32, and a row key 16 bytes with an 8-byte aligned row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(C, packed(8))]
pub struct Uuid(pub u128);

impl Uuid {
    pub const NIL: Uuid = Uuid(0);

    pub fn from_u128(v: u128) -> Self {
        Uuid(v)
    }

    pub fn as_u128(self) -> u128 {
        self.0
    }

    pub fn is_nil(self) -> bool {
        self.0 == 0
    }

    /// The first 32-bit word (the first 8 hex digits): what OVS's
    /// `uuid_hash` returns and what row hash tables are keyed by.
    pub fn first_word(self) -> u32 {
        (self.0 >> 96) as u32
    }

    /// A random (version 4) UUID made from 128 caller-supplied random bits.
    pub fn new_v4(bits: u128) -> Self {
        let mut v = bits;
        // version nibble (bits 76..80 from the right in textual order)
        v &= !(0xf_u128 << 76);
        v |= 0x4_u128 << 76;
        // variant bits 10xx at bits 62..64
        v &= !(0x3_u128 << 62);
        v |= 0x2_u128 << 62;
        Uuid(v)
    }

    /// Parses the canonical form: exactly 36 characters, hex digits in either
    /// case, dashes at positions 8, 13, 18 and 23.
    pub fn parse(s: &str) -> Option<Uuid> {
        Uuid::parse_bytes(s.as_bytes())
    }

    /// [`Uuid::parse`] of bytes (the log readers parse UUIDs in place):
    /// each digit through a table, the two halves side by side, one check
    /// of all digits at the end.
    #[inline]
    pub fn parse_bytes(t: &[u8]) -> Option<Uuid> {
        if t.len() != 36 || t[8] != b'-' || t[13] != b'-' || t[18] != b'-' || t[23] != b'-' {
            return None;
        }
        let (mut hi, mut lo, mut bad) = (0u64, 0u64, 0u8);
        for k in 0..16 {
            let (a, b) = (HEX[t[HEX_AT[k]] as usize], HEX[t[HEX_AT[k + 16]] as usize]);
            bad |= a | b;
            hi = (hi << 4) | u64::from(a);
            lo = (lo << 4) | u64::from(b);
        }
        // A digit is at most 15; anything else is 0xff.
        (bad <= 15).then(|| Uuid((u128::from(hi) << 64) | u128::from(lo)))
    }

    /// Whether `s` is a canonical UUID string.
    pub fn is_uuid(s: &str) -> bool {
        Uuid::parse(s).is_some()
    }

    /// First `n` hex digits (what `show-log` prints as `<sid4>` etc.).
    pub fn prefix(self, n: usize) -> String {
        let s = self.to_string();
        s.chars().filter(|c| *c != '-').take(n).collect()
    }

    /// The all-zero UUID (same as [`Uuid::NIL`]; the name the log
    /// formats' code uses for "no leader / no vote").
    pub const ZERO: Uuid = Uuid::NIL;

    /// Same as [`Uuid::is_nil`].
    pub fn is_zero(self) -> bool {
        self.is_nil()
    }

    /// Same as [`Uuid::first_word`] (OVS's `uuid_hash`).
    pub fn word0(self) -> u32 {
        self.first_word()
    }

    /// First 4 hex digits (as `show-log` and `check-cluster` print server
    /// ids).
    pub fn short4(self) -> String {
        format!("{:04x}", (self.0 >> 112) as u16)
    }

    /// First 8 hex digits.
    pub fn short8(self) -> String {
        format!("{:08x}", self.first_word())
    }

    /// The 16 bytes in textual (big-endian) order.
    pub fn to_bytes(self) -> [u8; 16] {
        self.0.to_be_bytes()
    }

    /// From 16 bytes in textual (big-endian) order.
    pub fn from_bytes(b: [u8; 16]) -> Uuid {
        Uuid(u128::from_be_bytes(b))
    }

    /// A version-4 UUID derived from a seed with splitmix64 (two outputs,
    /// the first giving the first 8 bytes): deterministic, for writers,
    /// the simulator and tests that need fresh ids without a random
    /// source. Files written with these ids must stay byte-identical, so
    /// this mapping must not change.
    pub fn from_seed(seed: u64) -> Uuid {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let hi = u128::from(next());
        let lo = u128::from(next());
        Uuid::new_v4((hi << 64) | lo)
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.to_ascii();
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

/// Each byte's hex digit value, 0xff for a byte that is not one.
const HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Where the 32 digits of the canonical form are.
const HEX_AT: [usize; 32] = {
    let mut at = [0usize; 32];
    let (mut k, mut i) = (0, 0);
    while i < 36 {
        if !(i == 8 || i == 13 || i == 18 || i == 23) {
            at[k] = i;
            k += 1;
        }
        i += 1;
    }
    at
};

impl Uuid {
    /// The canonical 36 characters, digit by digit: the server model and
    /// the simulator print every UUID they write, and `write!` with five
    /// padded hex fields cost twenty times as much.
    pub fn to_ascii(self) -> [u8; 36] {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = [b'-'; 36];
        let mut v = self.0;
        for i in (0..36).rev() {
            if !matches!(i, 8 | 13 | 18 | 23) {
                out[i] = HEX[(v & 0xf) as usize];
                v >>= 4;
            }
        }
        out
    }

    /// The canonical text as a `String`: what `to_string()` gives, without
    /// the formatting machinery (a quarter of the cost of each UUID a
    /// server model's reply or record names).
    pub fn to_text(self) -> String {
        let a = self.to_ascii();
        // Hex digits and dashes: always UTF-8.
        std::str::from_utf8(&a).unwrap_or_default().to_owned()
    }
}

impl std::str::FromStr for Uuid {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Uuid::parse(s).ok_or_else(|| crate::Error::syntax(format!("\"{}\" is not a valid UUID", s)))
    }
}

/// A hasher for keys made of UUIDs and small integers (row keys such as
/// `(table index, Uuid)`): rows' UUIDs are random, so each word written is
/// folded in with one multiply instead of SipHash's rounds. Deterministic
/// (no per-process seed): the core holds no randomness of its own.
#[derive(Default, Clone, Copy)]
pub struct RowKeyHasher(u64);

impl RowKeyHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl std::hash::Hasher for RowKeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // The high bits are the mixed ones; hashbrown takes its control
        // bits from the top and its bucket from the bottom.
        self.0 ^ (self.0 >> 29)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(w));
        }
    }
    #[inline]
    fn write_u128(&mut self, v: u128) {
        self.add(v as u64);
        self.add((v >> 64) as u64);
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }
}

/// A `HashMap` keyed by rows (see [`RowKeyHasher`]).
pub type RowKeyMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<RowKeyHasher>>;

#[cfg(test)]
mod tests {
    use super::Uuid;

    #[test]
    fn text_is_the_padded_hex_fields() {
        let mut x: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;
        for _ in 0..64 {
            let v = x;
            let want = format!(
                "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                (v >> 96) as u32,
                (v >> 80) as u16,
                (v >> 64) as u16,
                (v >> 48) as u16,
                v & 0xffff_ffff_ffff
            );
            assert_eq!(Uuid(v).to_string(), want);
            assert_eq!(Uuid(v).to_text(), want);
            assert_eq!(Uuid::parse(&want), Some(Uuid(v)));
            x = x.rotate_left(7) ^ (x >> 3);
        }
        assert_eq!(
            Uuid::NIL.to_string(),
            "00000000-0000-0000-0000-000000000000"
        );
        assert_eq!(
            Uuid(u128::MAX).to_string(),
            "ffffffff-ffff-ffff-ffff-ffffffffffff"
        );
        let upper = "0123ABCD-89ab-CDEF-fedc-BA9876543210";
        let want = Uuid(0x0123_abcd_89ab_cdef_fedc_ba98_7654_3210);
        assert_eq!(Uuid::parse(upper), Some(want));
        for bad in [
            "6406d516x5d1a-46fc-84a6-77eefe27fd14",
            "abc",
            "0123abcg-89ab-cdef-fedc-ba9876543210",
            "0123abc\u{e9}-89ab-cdef-fedc-ba987654321",
            "0123abcd-89ab-cdef-fedc-ba987654321 ",
        ] {
            assert_eq!(Uuid::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn row_keys_hash_apart() {
        use std::hash::BuildHasher;
        let b = std::hash::BuildHasherDefault::<super::RowKeyHasher>::default();
        // Sequential UUIDs and table indexes: no two keys share a hash,
        // and the top 7 bits (hashbrown's control byte) take many values.
        let mut hashes = std::collections::HashSet::new();
        let mut tops = std::collections::HashSet::new();
        for ti in 0..8usize {
            for n in 0..2_000u128 {
                let h = b.hash_one((ti, Uuid(n << 64 | n)));
                hashes.insert(h);
                tops.insert(h >> 57);
            }
        }
        assert_eq!(hashes.len(), 16_000);
        assert!(tops.len() > 100, "{}", tops.len());
        let mut m: super::RowKeyMap<(usize, Uuid), u32> = Default::default();
        for n in 0..1_000u32 {
            m.insert((n as usize % 3, Uuid(u128::from(n) * 7919)), n);
        }
        assert_eq!(m.len(), 1_000);
        assert_eq!(m[&(1, Uuid(4 * 7919))], 4);
    }
}
