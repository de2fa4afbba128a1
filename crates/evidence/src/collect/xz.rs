//! xz through lzma-rs, with bounds checked before lzma-rs decodes.
//!
//! lzma-rs decodes each xz block whole into memory and only then writes it
//! out, so a bound on what it writes would come too late. The [`Gate`] sits
//! between the compressed stream and lzma-rs, follows the xz framing (stream
//! header, block headers, LZMA2 chunk headers, padding, checks) in the bytes
//! it passes on, and adds up the uncompressed size each LZMA2 chunk
//! declares; it stops the stream before a chunk whose size would pass a
//! bound reaches the decoder. lzma-rs checks that chunks decode to their
//! declared sizes.

use std::io::{self, BufReader, Read, Write};

use super::{broken, Broken, Meter};

#[derive(Clone, Copy, Debug)]
enum St {
    /// The 12-byte stream header; bytes seen so far.
    StreamHeader(u8),
    /// A block header's size byte, or 0 for the index.
    BlockStart,
    /// Skipping the rest of a block header.
    BlockHeader(u32),
    /// An LZMA2 control byte.
    Control,
    /// An LZMA2 chunk header after its control byte: the control, bytes
    /// needed, bytes seen.
    ChunkHeader(u8, u8, u8),
    /// Chunk data to pass.
    Data(u32),
    /// Block padding, then the check.
    Padding(u8),
    Check(u8),
    /// Index and footer: lzma-rs checks them.
    Tail,
}

/// Follows the framing of the bytes read through it.
struct Gate<'a, R: Read> {
    inner: R,
    meter: &'a Meter,
    /// Compressed bytes passed.
    read: u64,
    /// Uncompressed bytes declared by the chunks passed.
    declared: u64,
    st: St,
    check_len: u8,
    /// Bytes of the current block (header and data), for its padding.
    block: u64,
    hdr: [u8; 5],
    eof: bool,
    failed: Option<String>,
}

impl<R: Read> Gate<'_, R> {
    fn step(&mut self, b: u8) -> Result<(), String> {
        self.block = self.block.wrapping_add(1);
        self.st = match self.st {
            St::StreamHeader(11) => {
                self.check_len = [0, 4, 4, 4, 8, 8, 8, 16, 16, 16, 32, 32, 32, 64, 64, 64]
                    [usize::from(self.hdr[0] & 0x0f)];
                St::BlockStart
            }
            St::StreamHeader(7) => {
                self.hdr[0] = b; // the check type
                St::StreamHeader(8)
            }
            St::StreamHeader(n) => St::StreamHeader(n + 1),
            St::BlockStart if b == 0 => St::Tail,
            St::BlockStart => {
                self.block = 1;
                St::BlockHeader(u32::from(b) * 4 + 3)
            }
            St::BlockHeader(1) => St::Control,
            St::BlockHeader(n) => St::BlockHeader(n - 1),
            St::Control => match b {
                0 => self.end_of_block(),
                1 | 2 => St::ChunkHeader(b, 2, 0),
                0x80..=0xbf => St::ChunkHeader(b, 4, 0),
                0xc0..=0xff => St::ChunkHeader(b, 5, 0),
                _ => {
                    return Err(format!(
                        "xz data corrupt at byte {}: bad LZMA2 chunk",
                        self.read
                    ))
                }
            },
            St::ChunkHeader(c, need, seen) => {
                self.hdr[usize::from(seen)] = b;
                if seen + 1 < need {
                    St::ChunkHeader(c, need, seen + 1)
                } else {
                    let be16 = |i: usize| u32::from(self.hdr[i]) << 8 | u32::from(self.hdr[i + 1]);
                    let (unpacked, packed) = if c < 0x80 {
                        let n = be16(0) + 1;
                        (n, n)
                    } else {
                        ((u32::from(c & 0x1f) << 16 | be16(0)) + 1, be16(2) + 1)
                    };
                    self.declared += u64::from(unpacked);
                    let m = self.meter;
                    m.count("xz", u64::from(unpacked), self.declared, self.read)?;
                    if self.declared > m.limits.max_buffered_bytes {
                        return Err(format!(
                            "xz block of more than {} bytes refused (lzma-rs holds a block whole)",
                            m.limits.max_buffered_bytes
                        ));
                    }
                    St::Data(packed)
                }
            }
            St::Data(1) => St::Control,
            St::Data(n) => St::Data(n - 1),
            St::Padding(1) | St::Padding(0) => self.after_padding(),
            St::Padding(n) => St::Padding(n - 1),
            St::Check(1) | St::Check(0) => St::BlockStart,
            St::Check(n) => St::Check(n - 1),
            St::Tail => St::Tail,
        };
        Ok(())
    }

    fn end_of_block(&self) -> St {
        match (4 - self.block % 4) % 4 {
            0 => self.after_padding(),
            n => St::Padding(n as u8),
        }
    }

    fn after_padding(&self) -> St {
        match self.check_len {
            0 => St::BlockStart,
            n => St::Check(n),
        }
    }
}

impl<R: Read> Read for Gate<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(r) = &self.failed {
            return Err(broken(r.clone(), false));
        }
        let n = self.inner.read(buf)?;
        if n == 0 {
            self.eof = true;
        }
        let start = self.read;
        for (i, &b) in buf[..n].iter().enumerate() {
            if let St::Tail = self.st {
                break;
            }
            self.read = start + i as u64 + 1;
            if let Err(r) = self.step(b) {
                self.failed = Some(r.clone());
                return Err(broken(r, false));
            }
        }
        self.read = start + n as u64;
        Ok(n)
    }
}

/// Where lzma-rs writes, bounded as a second line of defence.
struct Sink {
    data: Vec<u8>,
    max: u64,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.data.len() as u64 + buf.len() as u64 > self.max {
            return Err(broken(
                format!("xz data passes the bound of {} bytes", self.max),
                false,
            ));
        }
        self.data.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Decodes a whole xz stream: what was decoded, and the reason it stopped
/// early if it did (blocks decoded before a failure are kept).
pub(crate) fn decode(r: &mut dyn Read, meter: &Meter) -> (Vec<u8>, Option<String>) {
    let mut gate = Gate {
        inner: r,
        meter,
        read: 0,
        declared: 0,
        st: St::StreamHeader(0),
        check_len: 0,
        block: 0,
        hdr: [0; 5],
        eof: false,
        failed: None,
    };
    let l = meter.limits;
    let mut sink = Sink {
        data: Vec::new(),
        max: l.max_buffered_bytes.min(l.max_decompressed_bytes),
    };
    let res = lzma_rs::xz_decompress(&mut BufReader::new(&mut gate), &mut sink);
    let err = match res {
        Ok(()) => None,
        Err(e) => {
            let io = match &e {
                lzma_rs::error::Error::IoError(io) | lzma_rs::error::Error::HeaderTooShort(io) => {
                    Some(io)
                }
                _ => None,
            };
            Some(
                match io
                    .and_then(|io| io.get_ref())
                    .and_then(|x| x.downcast_ref::<Broken>())
                {
                    Some(b) => b.reason.clone(),
                    None if gate.eof => format!("xz data truncated at byte {}", gate.read),
                    None => format!("xz data corrupt near byte {}: {e}", gate.read),
                },
            )
        }
    };
    (sink.data, err)
}
