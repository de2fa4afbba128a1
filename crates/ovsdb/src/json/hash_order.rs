//! The member order of OVS's hash tables (ovsdb-formats.md §5.4): the
//! hashes of `shash` keys (murmur-style, or CRC32C where the C build uses
//! it) and an `hmap`'s bucket walk, so that records written by ovsdb-server
//! can be re-encoded byte for byte ([`super::Object::reorder_shash`]).

use super::FnvMap;

fn mhash_add(h: u32, w: u32) -> u32 {
    let mut h = h;
    if w != 0 {
        let mut w = w.wrapping_mul(0xcc9e_2d51);
        w = w.rotate_left(15);
        w = w.wrapping_mul(0x1b87_3593);
        h ^= w;
    }
    h = h.rotate_left(13);
    h.wrapping_mul(5).wrapping_add(0xe654_6b64)
}

fn mhash_finish(h: u32, len: u32) -> u32 {
    let mut h = h ^ len;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// OVS `hash_bytes(key, len, 0)` (murmur-style variant M, little-endian) —
/// the hash `shash` uses for member names.
pub fn shash_hash(key: &[u8]) -> u32 {
    let mut h = 0u32;
    let mut chunks = key.chunks_exact(4);
    for c in &mut chunks {
        h = mhash_add(h, u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        let mut b = [0u8; 4];
        b[..rem.len()].copy_from_slice(rem);
        h = mhash_add(h, u32::from_le_bytes(b));
    }
    mhash_finish(h, key.len() as u32)
}

/// Emulation of OVS's `hmap` bucket structure: which order an `hmap`
/// iterates its nodes in, given their hashes and the insertion/removal
/// history. Nodes are identified by the caller's `usize` ids.
#[derive(Debug, Clone)]
pub struct Hmap {
    mask: usize,
    n: usize,
    /// Each bucket's chain, stored back to front (the front is the last
    /// element, so "push at front" is `Vec::push`).
    buckets: Vec<Vec<(u32, usize)>>,
}

impl Default for Hmap {
    fn default() -> Self {
        Hmap::new()
    }
}

fn calc_mask(capacity: usize) -> usize {
    let mut mask = capacity / 2;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    #[cfg(target_pointer_width = "64")]
    {
        mask |= mask >> 32;
    }
    if mask & 1 != 0 {
        mask |= 2;
    }
    mask
}

impl Hmap {
    pub fn new() -> Self {
        Hmap {
            mask: 0,
            n: 0,
            buckets: vec![Vec::new()],
        }
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// `hmap_insert`: push at the front of its bucket, then grow if needed.
    pub fn insert(&mut self, hash: u32, id: usize) {
        let b = (hash as usize) & self.mask;
        self.buckets[b].push((hash, id));
        self.n += 1;
        if self.n / 2 > self.mask {
            let m = calc_mask(self.n);
            if m > self.mask {
                self.resize(m);
            }
        }
    }

    /// `hmap_remove` (never shrinks). Returns whether the node was present.
    pub fn remove(&mut self, hash: u32, id: usize) -> bool {
        let b = (hash as usize) & self.mask;
        if let Some(p) = self.buckets[b].iter().position(|&(_, i)| i == id) {
            self.buckets[b].remove(p);
            self.n -= 1;
            true
        } else {
            false
        }
    }

    fn resize(&mut self, new_mask: usize) {
        let mut nb: Vec<Vec<(u32, usize)>> = vec![Vec::new(); new_mask + 1];
        for chain in &self.buckets {
            // front to back
            for &(h, id) in chain.iter().rev() {
                nb[(h as usize) & new_mask].push((h, id));
            }
        }
        self.buckets = nb;
        self.mask = new_mask;
    }

    /// `hmap_first`: the first node in iteration order.
    pub fn first(&self) -> Option<usize> {
        self.first_from(0)
    }

    fn first_from(&self, bucket: usize) -> Option<usize> {
        self.buckets
            .iter()
            .skip(bucket)
            .find_map(|chain| chain.last().map(|&(_, id)| id))
    }

    /// `hmap_next`: the node after `id` (inserted with `hash`) in the
    /// current layout, as `HMAP_FOR_EACH_SAFE` computes it before running
    /// the loop body. None at the end or if `id` is not in the map.
    pub fn next(&self, hash: u32, id: usize) -> Option<usize> {
        let b = (hash as usize) & self.mask;
        let chain = self.buckets.get(b)?;
        let p = chain.iter().position(|&(_, i)| i == id)?;
        // Chains are stored back to front: the next node is at p - 1.
        match p.checked_sub(1) {
            Some(q) => chain.get(q).map(|&(_, i)| i),
            None => self.first_from(b + 1),
        }
    }

    /// Node ids in iteration order (buckets ascending, chains front to back).
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.buckets
            .iter()
            .flat_map(|chain| chain.iter().rev().map(|&(_, id)| id))
    }

    /// Iteration order as a vector.
    pub fn order(&self) -> Vec<usize> {
        self.iter().collect()
    }
}

/// Iteration order of an OVS `shash` into which `insertion` was inserted
/// in this order: indexes into `insertion`. A repeated name keeps the
/// position of its first insertion and contributes only that index.
pub fn shash_order<K: AsRef<str>>(insertion: &[K]) -> Vec<usize> {
    shash_order_with(HashVariant::Murmur, insertion)
}

/// [`shash_order`] for a chosen build variant of the hash function.
pub fn shash_order_with<K: AsRef<str>>(variant: HashVariant, insertion: &[K]) -> Vec<usize> {
    // One name or none has one order: no hash table to build (a request's
    // one-column row is common).
    if insertion.len() < 2 {
        return (0..insertion.len()).collect();
    }
    let mut map = Hmap::new();
    let mut seen: FnvMap<&str, ()> = FnvMap::default();
    for (i, k) in insertion.iter().enumerate() {
        let k = k.as_ref();
        if seen.insert(k, ()).is_some() {
            continue;
        }
        map.insert(variant.hash(k.as_bytes()), i);
    }
    map.order()
}

/// Which `hash_bytes` an OVS build uses (§5.4): chosen at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HashVariant {
    /// Murmur-style (variant M): the portable default, e.g. Debian's
    /// x86-64 and aarch64 packages.
    #[default]
    Murmur,
    /// CRC32-C (variant C): builds targeting SSE4.2 or the ARMv8 CRC
    /// extension.
    Crc32c,
}

impl HashVariant {
    pub fn hash(self, key: &[u8]) -> u32 {
        match self {
            HashVariant::Murmur => shash_hash(key),
            HashVariant::Crc32c => shash_hash_crc32c(key),
        }
    }
}

const fn crc32c_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static CRC32C: [u32; 256] = crc32c_table();

/// CRC-32C (reflected, no initial or final inversion) of `bytes` from
/// state `crc` — what the SSE4.2 `crc32` instruction computes.
fn crc32c_update(mut crc: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        crc = CRC32C[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// OVS `hash_bytes(key, len, 0)` for builds with hardware CRC32-C
/// (variant C of §5.4).
pub fn shash_hash_crc32c(key: &[u8]) -> u32 {
    let mut h = 0u32;
    let mut chunks = key.chunks_exact(4);
    for c in &mut chunks {
        h = crc32c_update(h, c);
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        let mut b = [0u8; 4];
        b[..rem.len()].copy_from_slice(rem);
        h = crc32c_update(h, &b);
    }
    let x = crc32c_update(h, &(key.len() as u64).to_le_bytes()).wrapping_mul(0x8052_04f3);
    x ^ (x >> 16)
}

/// Iteration order of an `hmap` keyed by arbitrary 32-bit hashes inserted
/// in this order (e.g. txn rows keyed by a UUID's first 32 bits): indexes
/// into `hashes`.
pub fn hmap_order(hashes: &[u32]) -> Vec<usize> {
    let mut map = Hmap::new();
    for (i, &h) in hashes.iter().enumerate() {
        map.insert(h, i);
    }
    map.order()
}
