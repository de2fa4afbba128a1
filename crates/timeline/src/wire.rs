//! The view model's compact binary form for the hop from the parser worker
//! to the page: a lane's entries (millions in a big file, and most of the
//! model) as bytes, the rest of the timeline as JSON. JSON text of a
//! million entries is about 250 MB to build, copy and parse; these bytes are
//! about 45 per entry and move as one transferable buffer.
//!
//! Layout: the magic `OSE1`, the entry count (LEB128), then per entry a
//! flags byte and the fields it announces, integers as LEB128 (`date_ms`
//! zig-zag), `eid` as 16 bytes, strings as a LEB128 length and UTF-8.

use crate::model::{Entry, Sizes, Timeline};

const MAGIC: &[u8; 4] = b"OSE1";

const HAS_DATA: u8 = 1;
const SUPERSEDED: u8 = 2;
const DATE: u8 = 4;
const FULL: u8 = 8;
const DIFF: u8 = 16;
const EID: u8 = 32;
const COMMENT: u8 = 64;
/// Membership and election timer (rare).
const EXTRA: u8 = 128;

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// A lane's entries as bytes.
pub fn encode_entries(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + entries.len() * 48);
    out.extend_from_slice(MAGIC);
    put(&mut out, entries.len() as u64);
    for e in entries {
        let eid = e
            .eid
            .as_deref()
            .and_then(ovsdb::Uuid::parse)
            .filter(|u| Some(u.to_string().as_str()) == e.eid.as_deref());
        let extra =
            e.servers.is_some() || e.election_timer.is_some() || (e.eid.is_some() && eid.is_none());
        let mut flags = 0u8;
        for (on, bit) in [
            (e.has_data, HAS_DATA),
            (e.superseded, SUPERSEDED),
            (e.date_ms.is_some(), DATE),
            (e.sizes.full.is_some(), FULL),
            (e.sizes.diff.is_some(), DIFF),
            (eid.is_some(), EID),
            (e.comment.is_some(), COMMENT),
            (extra, EXTRA),
        ] {
            if on {
                flags |= bit;
            }
        }
        out.push(flags);
        put(&mut out, e.index);
        put(&mut out, e.term);
        put(&mut out, u64::from(e.record));
        put(&mut out, e.offset);
        put(&mut out, u64::from(e.tables));
        put(&mut out, u64::from(e.rows));
        put(&mut out, e.sizes.stored);
        if let Some(d) = e.date_ms {
            put(&mut out, ((d << 1) ^ (d >> 63)) as u64);
        }
        if let Some(v) = e.sizes.full {
            put(&mut out, v);
        }
        if let Some(v) = e.sizes.diff {
            put(&mut out, v);
        }
        if let Some(u) = eid {
            out.extend_from_slice(&u.as_u128().to_be_bytes());
        }
        if let Some(c) = &e.comment {
            put_str(&mut out, c);
        }
        if extra {
            // An eid that is not a canonical UUID text, the election timer,
            // the servers.
            match (&e.eid, eid) {
                (Some(s), None) => {
                    out.push(1);
                    put_str(&mut out, s);
                }
                _ => out.push(0),
            }
            match e.election_timer {
                Some(ms) => {
                    out.push(1);
                    put(&mut out, ms);
                }
                None => out.push(0),
            }
            match &e.servers {
                Some(s) => {
                    out.push(1);
                    put(&mut out, s.len() as u64);
                    for (sid, addr) in s {
                        put_str(&mut out, sid);
                        put_str(&mut out, addr);
                    }
                }
                None => out.push(0),
            }
        }
    }
    out
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let v = *self
            .b
            .get(self.at)
            .ok_or_else(|| format!("entries end early at byte {}", self.at))?;
        self.at += 1;
        Ok(v)
    }

    fn int(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift >= 64 {
                return Err(format!("integer too long at byte {}", self.at));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    fn small(&mut self) -> Result<u32, String> {
        u32::try_from(self.int()?).map_err(|_| format!("value too large at byte {}", self.at))
    }

    fn bytes(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| format!("entries end early at byte {}", self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn string(&mut self) -> Result<String, String> {
        let n = self.int()? as usize;
        let at = self.at;
        String::from_utf8(self.bytes(n)?.to_vec()).map_err(|_| format!("bad UTF-8 at byte {at}"))
    }
}

/// The entries of [`encode_entries`]. Errors name the byte offset.
pub fn decode_entries(b: &[u8]) -> Result<Vec<Entry>, String> {
    if !b.starts_with(MAGIC) {
        return Err("not an entry list".into());
    }
    let mut r = Reader { b, at: 4 };
    let n = r.int()? as usize;
    // Every entry takes at least 8 bytes: a bad count cannot allocate much.
    let mut out = Vec::with_capacity(n.min(b.len() / 8));
    for _ in 0..n {
        let flags = r.byte()?;
        let has = |bit: u8| flags & bit != 0;
        let index = r.int()?;
        let term = r.int()?;
        let record = r.small()?;
        let offset = r.int()?;
        let tables = r.small()?;
        let rows = r.small()?;
        let stored = r.int()?;
        let date_ms = if has(DATE) {
            let z = r.int()?;
            Some(((z >> 1) as i64) ^ -((z & 1) as i64))
        } else {
            None
        };
        let full = if has(FULL) { Some(r.int()?) } else { None };
        let diff = if has(DIFF) { Some(r.int()?) } else { None };
        let mut eid = if has(EID) {
            let mut a = [0u8; 16];
            a.copy_from_slice(r.bytes(16)?);
            Some(ovsdb::Uuid::from_u128(u128::from_be_bytes(a)).to_string())
        } else {
            None
        };
        let comment = if has(COMMENT) {
            Some(r.string()?)
        } else {
            None
        };
        let (mut election_timer, mut servers) = (None, None);
        if has(EXTRA) {
            if r.byte()? == 1 {
                eid = Some(r.string()?);
            }
            if r.byte()? == 1 {
                election_timer = Some(r.int()?);
            }
            if r.byte()? == 1 {
                let k = r.int()? as usize;
                let mut v = Vec::with_capacity(k.min(1024));
                for _ in 0..k {
                    v.push((r.string()?, r.string()?));
                }
                servers = Some(v);
            }
        }
        out.push(Entry {
            index,
            term,
            record,
            offset,
            has_data: has(HAS_DATA),
            superseded: has(SUPERSEDED),
            eid,
            comment,
            date_ms,
            tables,
            rows,
            sizes: Sizes { stored, full, diff },
            servers,
            election_timer,
        });
    }
    if r.at != b.len() {
        return Err(format!("{} bytes after the last entry", b.len() - r.at));
    }
    Ok(out)
}

/// Moves every lane's entries out of `t` as bytes (lane order).
pub fn split(t: &mut Timeline) -> Vec<Vec<u8>> {
    t.lanes
        .iter_mut()
        .map(|l| {
            let b = encode_entries(&l.entries);
            l.entries = Vec::new();
            b
        })
        .collect()
}

/// Puts the entries of [`split`] back (lane order).
pub fn join(t: &mut Timeline, lanes: &[&[u8]]) -> Result<(), String> {
    if lanes.len() != t.lanes.len() {
        return Err(format!(
            "{} entry lists for {} lanes",
            lanes.len(),
            t.lanes.len()
        ));
    }
    for (l, b) in t.lanes.iter_mut().zip(lanes) {
        l.entries = decode_entries(b).map_err(|e| format!("{}: {e}", l.name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(i: u64) -> Entry {
        Entry {
            index: i,
            term: i / 7,
            record: i as u32 * 2,
            offset: i * 1000,
            has_data: !i.is_multiple_of(3),
            superseded: i.is_multiple_of(11),
            eid: (i.is_multiple_of(2)).then(|| format!("{:08x}-1111-4222-8333-444455556666", i)),
            comment: (i.is_multiple_of(5)).then(|| format!("ovn-nbctl: ls-add ls{i} ✓")),
            date_ms: (!i.is_multiple_of(4)).then(|| 1_764_450_858_237 + i as i64 - 300),
            tables: (i % 4) as u32,
            rows: (i * 3) as u32,
            sizes: Sizes {
                stored: 300 + i,
                full: (!i.is_multiple_of(6)).then_some(900 + i),
                diff: (!i.is_multiple_of(6)).then_some(200 + i),
            },
            servers: (i == 9).then(|| vec![("a".into(), "tcp:1".into()), ("b".into(), "".into())]),
            election_timer: (i == 10).then_some(2000),
        }
    }

    #[test]
    fn entries_round_trip() {
        let mut v: Vec<Entry> = (0..500).map(entry).collect();
        v[3].eid = Some("not-a-uuid".into());
        v[4].eid = Some("0000000A-1111-4222-8333-444455556666".into());
        v[5].date_ms = Some(-5);
        v[6].offset = u64::MAX;
        let b = encode_entries(&v);
        assert_eq!(decode_entries(&b).unwrap(), v);
        assert!(b.len() < 500 * 60, "{} bytes", b.len());
    }

    #[test]
    fn bad_bytes_are_errors_not_panics() {
        let b = encode_entries(&(0..50).map(entry).collect::<Vec<_>>());
        for cut in 0..b.len() {
            assert!(decode_entries(&b[..cut]).is_err(), "cut at {cut}");
        }
        let mut x = b.clone();
        x.push(0);
        assert!(decode_entries(&x).is_err());
        let mut huge = MAGIC.to_vec();
        put(&mut huge, u64::MAX);
        assert!(decode_entries(&huge).is_err());
    }
}
