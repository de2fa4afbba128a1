//! tar, read member by member from a stream: ustar, GNU and old v7 headers
//! (recognized by their checksum), GNU long names (`././@LongLink`, type
//! `L`), pax extended headers (`x`: `path` and `size`; globals `g` skipped).

use std::io::{self, Read};

use super::{broken, describe, read_full, Counted, Run, Stop, MAX_PAX_BYTES, MAX_TAR_NAME_BYTES};

const BLOCK: u64 = 512;

/// An octal number field (NUL/space padded), or GNU's base-256 form.
fn number(field: &[u8]) -> Option<u64> {
    if let Some((&first, rest)) = field.split_first() {
        if first & 0x80 != 0 {
            if first & 0x40 != 0 {
                return None; // negative
            }
            let mut v = u64::from(first & 0x3f);
            for &b in rest {
                v = v.checked_mul(256)?.checked_add(u64::from(b))?;
            }
            return Some(v);
        }
    }
    let s: &[u8] = {
        let start = field.iter().position(|&b| b != b' ' && b != 0)?;
        let f = &field[start..];
        let end = f
            .iter()
            .position(|&b| b == b' ' || b == 0)
            .unwrap_or(f.len());
        &f[..end]
    };
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        if !(b'0'..=b'7').contains(&b) {
            return None;
        }
        v = v.checked_mul(8)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}

/// A 512-byte block with a valid header checksum (unsigned or, as some old
/// tars wrote it, signed) that is not all zeros.
pub(crate) fn is_header(b: &[u8]) -> bool {
    if b.len() != 512 || b.iter().all(|&x| x == 0) {
        return false;
    }
    let Some(stored) = number(&b[148..156]) else {
        return false;
    };
    let (mut unsigned, mut signed) = (0u64, 0i64);
    for (i, &x) in b.iter().enumerate() {
        let x = if (148..156).contains(&i) { b' ' } else { x };
        unsigned += u64::from(x);
        signed += i64::from(x as i8);
    }
    stored == unsigned || i64::try_from(stored).is_ok_and(|s| s == signed)
}

fn cstr(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&x| x == 0).unwrap_or(b.len())]
}

/// A member name made safe: `./` and empty components dropped; `..` or an
/// absolute name refused. `Ok(None)`: nothing left (the archive's root).
fn clean(name: &str) -> Result<Option<String>, &'static str> {
    if name.starts_with('/') {
        return Err("absolute tar member name refused");
    }
    let mut parts = Vec::new();
    for c in name.split('/') {
        match c {
            "" | "." => {}
            ".." => return Err("tar member name with '..' refused"),
            c => parts.push(c),
        }
    }
    Ok((!parts.is_empty()).then(|| parts.join("/")))
}

/// pax records `LEN key=value\n`: the `path` and `size` ones.
fn pax(data: &[u8]) -> (Option<String>, Option<u64>) {
    let (mut path, mut size) = (None, None);
    let mut rest = data;
    while !rest.is_empty() {
        let Some(sp) = rest.iter().position(|&b| b == b' ') else {
            break;
        };
        let Some(len) = std::str::from_utf8(&rest[..sp])
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        else {
            break;
        };
        if len <= sp + 1 || len > rest.len() || rest[len - 1] != b'\n' {
            break;
        }
        let rec = &rest[sp + 1..len - 1];
        if let Some(eq) = rec.iter().position(|&b| b == b'=') {
            let (k, v) = (&rec[..eq], &rec[eq + 1..]);
            match k {
                b"path" => path = Some(String::from_utf8_lossy(v).into_owned()),
                b"size" => size = std::str::from_utf8(v).ok().and_then(|s| s.parse().ok()),
                _ => {}
            }
        }
        rest = &rest[len..];
    }
    (path, size)
}

/// One member's data: exactly `left` bytes, or an error naming the
/// truncation.
struct Member<'a, R: Read> {
    tar: &'a mut Counted<R>,
    left: u64,
    size: u64,
}

impl<R: Read> Read for Member<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 || buf.is_empty() {
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.tar.read(&mut buf[..want])?;
        if n == 0 {
            return Err(broken(
                format!(
                    "tar truncated at byte {}: the member declares {} bytes, {} are missing",
                    self.tar.n, self.size, self.left
                ),
                true,
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Skips `n` bytes of the tar stream.
fn skip<R: Read>(tar: &mut Counted<R>, n: u64) -> io::Result<()> {
    let mut m = Member {
        tar,
        left: n,
        size: n,
    };
    io::copy(&mut m, &mut io::sink()).map(|_| ())
}

fn padding(size: u64) -> u64 {
    (BLOCK - size % BLOCK) % BLOCK
}

/// Reads a tar whose first header block is `first`, the rest coming from
/// `r`. Members are `archive/member/path`.
pub(crate) fn read(
    run: &mut Run,
    archive: &str,
    first: [u8; 512],
    r: &mut dyn Read,
    depth: u32,
) -> Result<(), Stop> {
    let mut tar = Counted { inner: r, n: BLOCK };
    let mut header = first;
    let mut long_name: Option<String> = None;
    let mut pax_path: Option<String> = None;
    let mut pax_size: Option<u64> = None;
    let mut files = 0u64;
    // Reports a broken stream (`e`) at `path` and stops.
    macro_rules! fail {
        ($path:expr, $e:expr) => {{
            let (reason, _) = describe(&$e);
            run.ignore($path, reason);
            return Err(Stop);
        }};
    }
    loop {
        let at = tar.n - BLOCK;
        if header.iter().all(|&b| b == 0) {
            return Ok(()); // end of archive (the second zero block is not needed)
        }
        if !is_header(&header) {
            run.ignore(
                archive,
                format!("tar header at byte {at} has a bad checksum: the archive is corrupt from there ({files} files read before)"),
            );
            return Ok(());
        }
        let kind = header[156];
        let size = match number(&header[124..136]) {
            Some(s) => pax_size.take().unwrap_or(s),
            None if matches!(kind, b'1' | b'2' | b'3' | b'4' | b'5' | b'6') => 0,
            None => {
                run.ignore(
                    archive,
                    format!("tar header at byte {at} has no readable size"),
                );
                return Ok(());
            }
        };
        let name = match (long_name.take(), pax_path.take()) {
            (_, Some(p)) => p,
            (Some(l), None) => l,
            (None, None) => {
                let name = cstr(&header[0..100]);
                let posix = &header[257..263] == b"ustar\0";
                let prefix = if posix {
                    cstr(&header[345..500])
                } else {
                    &[][..]
                };
                let mut full = String::from_utf8_lossy(prefix).into_owned();
                if !full.is_empty() {
                    full.push('/');
                }
                full.push_str(&String::from_utf8_lossy(name));
                full
            }
        };
        let shown = format!("{archive}/{name}");
        let mut data_done = false;
        match kind {
            b'L' | b'x' => {
                let max = if kind == b'L' {
                    MAX_TAR_NAME_BYTES
                } else {
                    MAX_PAX_BYTES
                };
                if size > max {
                    run.ignore(
                        &shown,
                        format!("tar extended header of {size} bytes refused (more than {max})"),
                    );
                } else {
                    let mut data = vec![0u8; size as usize];
                    let mut m = Member {
                        tar: &mut tar,
                        left: size,
                        size,
                    };
                    if let Err(e) = read_full(&mut m, &mut data) {
                        fail!(archive, e);
                    }
                    data_done = true;
                    if kind == b'L' {
                        long_name = Some(String::from_utf8_lossy(cstr(&data)).into_owned());
                    } else {
                        (pax_path, pax_size) = pax(&data);
                    }
                }
            }
            b'K' | b'g' => {} // long link name; pax globals
            b'5' => {}        // directories are structure, not content
            b'0' | 0 | b'7' if name.ends_with('/') => {} // v7 directory
            b'0' | 0 | b'7' => match clean(&name) {
                Err(reason) => run.ignore(&shown, reason),
                Ok(None) => {}
                Ok(Some(clean)) => {
                    files += 1;
                    let path = format!("{archive}/{clean}");
                    let mut m = Member {
                        tar: &mut tar,
                        left: size,
                        size,
                    };
                    run.open(&path, &path, &mut m, depth)?;
                    // What the member's reader left unread (the stream's
                    // failure is the archive's, the member was dealt with).
                    if let Err(e) = io::copy(&mut m, &mut io::sink()) {
                        fail!(archive, e);
                    }
                    data_done = true;
                }
            },
            b'1' => run.ignore(&shown, "hard link in archive ignored"),
            b'2' => run.ignore(&shown, "symlink in archive ignored"),
            b'3' | b'4' => run.ignore(&shown, "device file in archive ignored"),
            b'6' => run.ignore(&shown, "FIFO in archive ignored"),
            k => run.ignore(
                &shown,
                format!(
                    "tar member of type '{}' not supported",
                    (k as char).escape_default()
                ),
            ),
        }
        let rest = if data_done {
            padding(size)
        } else {
            size.saturating_add(padding(size))
        };
        if let Err(e) = skip(&mut tar, rest) {
            fail!(archive, e);
        }
        match read_full(&mut tar, &mut header) {
            Ok(512) => {}
            Ok(0) => return Ok(()), // no end blocks: accepted, like GNU tar with a warning
            Ok(n) => {
                run.ignore(
                    archive,
                    format!("tar truncated at byte {}: a header of {n} bytes", tar.n),
                );
                return Ok(());
            }
            Err(e) => fail!(archive, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names() {
        assert_eq!(number(b"0000644\0"), Some(0o644));
        assert_eq!(number(b"  1234 \0"), Some(0o1234));
        assert_eq!(number(b"\0\0\0"), None);
        assert_eq!(number(b"0009"), None);
        assert_eq!(number(&[0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]), Some(256));
        assert_eq!(number(&[0xff; 12]), None);
        assert_eq!(
            number(&[0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            None
        );
        assert_eq!(clean("./a//b/"), Ok(Some("a/b".into())));
        assert_eq!(clean("./"), Ok(None));
        assert!(clean("a/../b").is_err());
        assert!(clean("/etc/passwd").is_err());
        assert_eq!(
            pax(b"28 path=very/long/name/here\n11 size=42\n"),
            (Some("very/long/name/here".into()), Some(42))
        );
        assert_eq!(pax(b"99 path=x\n"), (None, None));
    }
}
