//! The weights partition as the writer streams it: each weight's bytes where
//! they already are (a constant's storage, or one element of a splat), at its
//! offset, zeros between — the partition is never built in one buffer. A
//! compiled model's weights are most of its bytes (hundreds of MB for VGG or
//! ZFNet); copying them into a partition buffer and that into a file image
//! cost more than the rest of writing the `.om` (the kernel faulting in every
//! fresh page), so [`crate::format`] reads them from here twice instead: once
//! for the checksums the header needs first, once to write them.

use std::borrow::Cow;
use std::io;

/// Splats are produced in chunks of about this many bytes.
const CHUNK: usize = 1 << 16;

/// Zeros for the gaps between weights.
static ZEROS: [u8; 4096] = [0; 4096];

/// One weight's bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum WeightBytes<'a> {
    /// The bytes as they are.
    Bytes(Cow<'a, [u8]>),
    /// One element's bytes, `count` times (a splat constant, produced chunk by
    /// chunk while writing).
    Splat { element: Cow<'a, [u8]>, count: u64 },
}

impl WeightBytes<'_> {
    /// The byte length (`None` on overflow).
    pub fn byte_len(&self) -> Option<u64> {
        match self {
            WeightBytes::Bytes(b) => Some(b.len() as u64),
            WeightBytes::Splat { element, count } => (element.len() as u64).checked_mul(*count),
        }
    }
}

/// The weights partition: weights at increasing offsets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Weights<'a> {
    pieces: Vec<(u64, WeightBytes<'a>)>,
    len: u64,
}

impl<'a> Weights<'a> {
    pub fn new() -> Weights<'a> {
        Weights::default()
    }

    /// A partition held in one buffer (an [`crate::OmModel`]'s).
    pub fn from_bytes(bytes: &'a [u8]) -> Weights<'a> {
        Weights {
            pieces: vec![(0, WeightBytes::Bytes(Cow::Borrowed(bytes)))],
            len: bytes.len() as u64,
        }
    }

    /// Append `w` at the next multiple of `align` (zeros before it): its offset.
    pub fn push(&mut self, w: WeightBytes<'a>, align: u64) -> Result<u64, String> {
        let too_big = || "the weights partition's size overflows".to_string();
        let off = self
            .len
            .checked_next_multiple_of(align.max(1))
            .ok_or_else(too_big)?;
        self.len = w
            .byte_len()
            .and_then(|n| n.checked_add(off))
            .ok_or_else(too_big)?;
        self.pieces.push((off, w));
        Ok(off)
    }

    /// The weights and their offsets, in order.
    pub fn pieces(&self) -> &[(u64, WeightBytes<'a>)] {
        &self.pieces
    }

    /// The partition's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The partition's bytes in order, in pieces (each weight's own bytes, a
    /// splat in chunks of about 64 KiB, the gaps as zeros).
    pub fn for_each_chunk(&self, f: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let mut at = 0u64;
        let mut splat_chunk = Vec::new();
        for (off, w) in &self.pieces {
            zeros(off - at, f)?;
            match w {
                WeightBytes::Bytes(b) => f(b)?,
                WeightBytes::Splat { element, count } => {
                    splat(element, *count, &mut splat_chunk, f)?
                }
            }
            // `push` checked that this does not overflow.
            at = off + w.byte_len().unwrap_or(0);
        }
        zeros(self.len - at, f)
    }

    /// The CRC-32 state after the partition's bytes.
    pub fn crc32(&self) -> crc32fast::Hasher {
        let mut h = crc32fast::Hasher::new();
        // Hashing cannot fail.
        let _ = self.for_each_chunk(&mut |b| {
            h.update(b);
            Ok(())
        });
        h
    }

    /// The partition in one buffer (its size checked against the memory
    /// budget first).
    pub fn to_vec(&self) -> Result<Vec<u8>, String> {
        ge_ir::budget::check(Some(self.len), &"the weights partition")?;
        let mut v = Vec::with_capacity(self.len as usize);
        let _ = self.for_each_chunk(&mut |b| {
            v.extend_from_slice(b);
            Ok(())
        });
        Ok(v)
    }
}

fn zeros(mut n: u64, f: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
    while n > 0 {
        let k = n.min(ZEROS.len() as u64);
        f(&ZEROS[..k as usize])?;
        n -= k;
    }
    Ok(())
}

/// `count` copies of `element`, through `chunk` (whole elements per chunk).
fn splat(
    element: &[u8],
    count: u64,
    chunk: &mut Vec<u8>,
    f: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    if element.is_empty() || count == 0 {
        return Ok(());
    }
    let per = (CHUNK / element.len()).max(1) as u64;
    let full = per.min(count);
    chunk.clear();
    for _ in 0..full {
        chunk.extend_from_slice(element);
    }
    let mut left = count;
    while left > 0 {
        let k = left.min(full);
        f(&chunk[..k as usize * element.len()])?;
        left -= k;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_aligned_and_gaps_are_zeros() {
        let mut w = Weights::new();
        assert_eq!(
            w.push(WeightBytes::Bytes(Cow::Borrowed(&[1, 2, 3])), 64),
            Ok(0)
        );
        let splat = WeightBytes::Splat {
            element: Cow::Borrowed(&[7, 8]),
            count: 40_000,
        };
        assert_eq!(w.push(splat, 64), Ok(64));
        assert_eq!(
            w.push(WeightBytes::Bytes(Cow::Owned(vec![9])), 64),
            Ok(80_064)
        );
        assert_eq!(w.len(), 80_065);
        let v = w.to_vec().unwrap();
        assert_eq!(v.len(), 80_065);
        assert_eq!(&v[..3], &[1, 2, 3]);
        assert!(v[3..64].iter().all(|&b| b == 0));
        assert!(v[64..80_064].chunks(2).all(|c| c == [7, 8]));
        assert_eq!(v[80_064], 9);
        assert_eq!(w.crc32().finalize(), crc32fast::hash(&v));
    }

    #[test]
    fn sizes_that_overflow_are_refused() {
        let mut w = Weights::new();
        let huge = WeightBytes::Splat {
            element: Cow::Borrowed(&[0; 16]),
            count: u64::MAX / 8,
        };
        assert!(w.push(huge, 64).is_err());
        let big = WeightBytes::Splat {
            element: Cow::Borrowed(&[0]),
            count: u64::MAX - 10,
        };
        assert_eq!(w.push(big, 64), Ok(0));
        assert!(w.push(WeightBytes::Bytes(Cow::Borrowed(&[1])), 64).is_err());
        assert!(w.to_vec().is_err(), "beyond the memory budget");
    }
}
