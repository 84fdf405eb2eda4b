//! The bit-level coding of a record: LEB128 varints, an append-only bit string (most
//! significant bit of each byte first), the truncated binary code of one choice among
//! `n`, and the padding rule that gives every bit string exactly one spelling.

/// Appends `v` as an unsigned LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7F) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads an unsigned LEB128 varint at `*pos`, advancing it. Refuses overlong encodings,
/// so every value has exactly one spelling.
pub(super) fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for i in 0..10 {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        let low = u64::from(b & 0x7F);
        if i == 9 && b > 1 {
            return None; // more than 64 bits
        }
        v |= low << (7 * i);
        if b & 0x80 == 0 {
            if i > 0 && b == 0 {
                return None; // overlong: a trailing zero group
            }
            return Some(v);
        }
    }
    None
}

/// An append-only bit string, most significant bit of each byte first. Bits past the end
/// in the last byte are always zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BitWriter {
    pub(super) bytes: Vec<u8>,
    pub(super) len: u64,
}

impl BitWriter {
    /// An empty bit string.
    pub fn new() -> BitWriter {
        BitWriter::default()
    }

    /// Number of bits written.
    pub fn bit_len(&self) -> u64 {
        self.len
    }

    /// The bytes holding the bits (the last one zero-padded).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Appends the low `width` bits of `value`, most significant first.
    pub fn push(&mut self, value: u32, width: u32) {
        for i in (0..width).rev() {
            let bit = (value >> i) & 1;
            let offset = (self.len % 8) as u32;
            if offset == 0 {
                self.bytes.push(0);
            }
            if bit == 1
                && let Some(last) = self.bytes.last_mut()
            {
                *last |= 0x80 >> offset;
            }
            self.len += 1;
        }
    }

    /// Cuts the string back to its first `len` bits (no-op if it is not longer).
    pub fn truncate(&mut self, len: u64) {
        if len >= self.len {
            return;
        }
        let byte_len = len.div_ceil(8) as usize;
        self.bytes.truncate(byte_len);
        let used = (len % 8) as u32;
        if used != 0
            && let Some(last) = self.bytes.last_mut()
        {
            *last &= !(0xFFu8 >> used);
        }
        self.len = len;
    }
}

/// Reads a bit string written by [`BitWriter`].
pub(super) struct BitReader<'a> {
    pub(super) bytes: &'a [u8],
    /// The next bit to read.
    pub(super) pos: u64,
}

impl BitReader<'_> {
    /// The next `width` bits as a number, most significant first; `None` past the end.
    pub(super) fn read(&mut self, width: u32) -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..width {
            let byte = *self.bytes.get((self.pos / 8) as usize)?;
            let bit = (byte >> (7 - (self.pos % 8) as u32)) & 1;
            v = (v << 1) | u32::from(bit);
            self.pos += 1;
        }
        Some(v)
    }
}

/// `(k, u)` of the truncated binary code for `n` symbols: the first `u` symbols take `k`
/// bits, the others `k + 1`. The optimal prefix code when all `n` are equally likely.
#[inline]
fn truncated_binary(n: u32) -> (u32, u32) {
    let k = 31 - n.leading_zeros();
    let u = (1u32 << (k + 1)) - n;
    (k, u)
}

/// Writes index `r` of `n` choices. A forced move (`n == 1`) takes no bits.
#[inline]
pub fn put_index(bits: &mut BitWriter, r: u32, n: u32) {
    debug_assert!(r < n);
    if n <= 1 {
        return;
    }
    let (k, u) = truncated_binary(n);
    if r < u {
        bits.push(r, k);
    } else {
        bits.push(r + u, k + 1);
    }
}

/// Reads an index of `n` choices; `None` if the bits run out. Every bit pattern decodes
/// to an index below `n`.
#[inline]
pub(super) fn get_index(bits: &mut BitReader<'_>, n: u32) -> Option<u32> {
    if n <= 1 {
        return Some(0);
    }
    let (k, u) = truncated_binary(n);
    let v = bits.read(k)?;
    if v < u {
        return Some(v);
    }
    let v = (v << 1) | bits.read(1)?;
    Some(v - u)
}

/// The packed bits must end inside the last byte, and the padding bits must be zero, so
/// that every history has exactly one spelling.
pub(super) fn check_padding(bytes: &[u8], bit_len: u64, what: &str) -> Result<(), String> {
    let used_bytes = bit_len.div_ceil(8) as usize;
    if used_bytes != bytes.len() {
        return Err(format!(
            "{} bytes of {what}, but they use {used_bytes}",
            bytes.len()
        ));
    }
    let pad = (bit_len % 8) as u32;
    if pad != 0 && bytes[used_bytes - 1] & (0xFFu8 >> pad) != 0 {
        return Err(format!(
            "non-zero padding bits after the last of the {what}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip_and_rejects_overlong() {
        for v in [0u64, 1, 127, 128, 300, 1 << 35, 1_700_000_000_000, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut pos = 0;
            assert_eq!(get_varint(&out, &mut pos), Some(v));
            assert_eq!(pos, out.len());
        }
        let mut pos = 0;
        assert_eq!(get_varint(&[0x80, 0x00], &mut pos), None, "overlong zero");
        let mut pos = 0;
        assert_eq!(get_varint(&[0xFF; 10], &mut pos), None, "more than 64 bits");
        let mut pos = 0;
        assert_eq!(get_varint(&[0x80], &mut pos), None, "truncated");
    }

    #[test]
    fn truncated_binary_round_trips_every_index() {
        for n in 1..=256u32 {
            let mut w = BitWriter::new();
            for r in 0..n {
                put_index(&mut w, r, n);
            }
            let mut rd = BitReader {
                bytes: w.as_bytes(),
                pos: 0,
            };
            for r in 0..n {
                assert_eq!(get_index(&mut rd, n), Some(r), "n={n}");
            }
            assert_eq!(rd.pos, w.bit_len());
            // The code is complete: average length within one bit of log2(n).
            if n > 1 {
                let avg = w.bit_len() as f64 / f64::from(n);
                assert!(
                    avg >= f64::from(n).log2() - 1e-9 && avg < f64::from(n).log2() + 0.1,
                    "n={n} avg={avg}"
                );
            }
        }
    }

    #[test]
    fn bitwriter_truncate_clears_tail() {
        let mut w = BitWriter::new();
        w.push(0b1_1111_1111, 9);
        w.truncate(3);
        assert_eq!(w.as_bytes(), &[0b1110_0000]);
        assert_eq!(w.bit_len(), 3);
        w.push(0, 1);
        w.push(1, 1);
        assert_eq!(w.as_bytes(), &[0b1110_1000]);
    }
}
