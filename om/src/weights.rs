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
        self.walk(&mut |b, times| {
            for _ in 0..times {
                f(b)?;
            }
            Ok(())
        })
    }

    /// The partition's bytes in order as runs: `f(bytes, n)` is `bytes` `n` times
    /// over (a splat's whole chunks come as one run).
    fn walk(&self, f: &mut dyn FnMut(&[u8], u64) -> io::Result<()>) -> io::Result<()> {
        let mut at = 0u64;
        let mut splat_chunk = SplatChunk::default();
        for (off, w) in &self.pieces {
            zeros(off - at, f)?;
            match w {
                WeightBytes::Bytes(b) => f(b, 1)?,
                WeightBytes::Splat { element, count } => {
                    splat(element, *count, &mut splat_chunk, f)?
                }
            }
            // `push` checked that this does not overflow.
            at = off + w.byte_len().unwrap_or(0);
        }
        zeros(self.len - at, f)
    }

    /// The CRC-32 state after the partition's bytes. A splat's run of identical
    /// chunks is hashed once and combined by doubling (log of the count), not
    /// hashed chunk by chunk: the light models' hundreds of MB of splat weights
    /// cost 12 % of AlexNet's compile in the hashing.
    pub fn crc32(&self) -> crc32fast::Hasher {
        let mut h = crc32fast::Hasher::new();
        // Hashing cannot fail.
        let _ = self.walk(&mut |b, times| {
            repeat_crc(&mut h, b, times);
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

/// Append `times` copies of `b` to the checksum state `h`.
fn repeat_crc(h: &mut crc32fast::Hasher, b: &[u8], times: u64) {
    if times <= 2 {
        for _ in 0..times {
            h.update(b);
        }
        return;
    }
    // `run` holds 2^k copies; every run is the same bytes, so their order is free.
    let mut run = crc32fast::Hasher::new();
    run.update(b);
    let mut left = times;
    loop {
        if left & 1 == 1 {
            h.combine(&run);
        }
        left >>= 1;
        if left == 0 {
            break;
        }
        let twice = run.clone();
        run.combine(&twice);
    }
}

fn zeros(n: u64, f: &mut dyn FnMut(&[u8], u64) -> io::Result<()>) -> io::Result<()> {
    let size = ZEROS.len() as u64;
    if n >= size {
        f(&ZEROS, n / size)?;
    }
    if !n.is_multiple_of(size) {
        f(&ZEROS[..(n % size) as usize], 1)?;
    }
    Ok(())
}

/// A chunk of one element's copies, kept across a walk's splats: the light
/// models' filters are splats of one value, and rebuilding the 64 KiB chunk
/// element by element for each (twice a write: the checksum, the bytes) was
/// 7 % of SqueezeNet's compile.
#[derive(Default)]
struct SplatChunk {
    bytes: Vec<u8>,
    /// The length of the element `bytes` repeats.
    element_len: usize,
}

impl SplatChunk {
    /// At least `copies` copies of `element` (whole ones), reusing the
    /// chunk when it repeats the same element; built by doubling.
    fn of(&mut self, element: &[u8], copies: usize) -> &[u8] {
        let want = copies * element.len();
        let reusable = self.element_len == element.len()
            && self.bytes.len() >= want
            && self.bytes.starts_with(element);
        if !reusable {
            self.bytes.clear();
            self.bytes.reserve(want);
            self.bytes.extend_from_slice(element);
            while self.bytes.len() < want {
                let n = self.bytes.len().min(want - self.bytes.len());
                self.bytes.extend_from_within(..n);
            }
            self.element_len = element.len();
        }
        &self.bytes[..want]
    }
}

/// `count` copies of `element` as runs of one chunk (whole elements per chunk).
fn splat(
    element: &[u8],
    count: u64,
    chunk: &mut SplatChunk,
    f: &mut dyn FnMut(&[u8], u64) -> io::Result<()>,
) -> io::Result<()> {
    if element.is_empty() || count == 0 {
        return Ok(());
    }
    let per = (CHUNK / element.len()).max(1) as u64;
    let full = per.min(count);
    // `full` copies fit in memory: at most CHUNK bytes, or one element.
    let chunk = chunk.of(element, full as usize);
    f(chunk, count / full)?;
    let rest = count % full;
    if rest > 0 {
        f(&chunk[..rest as usize * element.len()], 1)?;
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
    fn splat_checksums_combine_as_hashing_the_bytes() {
        // Odd element sizes (a chunk is not 64 KiB exactly), counts around powers of two
        // of the chunk, gaps longer than the zeros buffer.
        for (element, count) in [
            (vec![1u8, 2, 3], 1u64),
            (vec![5u8; 3], 21_845 * 2 + 1),
            (vec![9u8, 8, 7, 6, 5], 13_107 * 7),
            (vec![4u8; 4], 16_384 * 5 - 1),
            (vec![3u8; 70_000], 3),
        ] {
            let mut w = Weights::new();
            w.push(WeightBytes::Bytes(Cow::Borrowed(&[1])), 1).unwrap();
            let splat = WeightBytes::Splat {
                element: Cow::Borrowed(&element),
                count,
            };
            w.push(splat, 10_000).unwrap();
            w.push(WeightBytes::Bytes(Cow::Borrowed(&[2, 3])), 8192)
                .unwrap();
            let v = w.to_vec().unwrap();
            assert_eq!(v.len() as u64, w.len());
            assert_eq!(
                w.crc32().finalize(),
                crc32fast::hash(&v),
                "{count} x {element:?}"
            );
        }
    }

    /// One walk's splats share a chunk: the same element again (fewer and
    /// more copies), another element of the same length that starts alike,
    /// a shorter element that is a prefix of the chunk, a longer one.
    #[test]
    fn splats_in_a_row_each_write_their_own_element() {
        let splats: [(&[u8], u64); 6] = [
            (&[1, 2, 3, 4], 20_000),
            (&[1, 2, 3, 4], 5),
            (&[1, 2, 3, 4], 40_000),
            (&[1, 2, 3, 5], 100),
            (&[1, 2], 30_000),
            (&[1, 2, 1, 2, 9, 9, 9, 9], 9_000),
        ];
        let mut w = Weights::new();
        let mut want = vec![];
        for (element, count) in splats {
            let at = w
                .push(
                    WeightBytes::Splat {
                        element: Cow::Borrowed(element),
                        count,
                    },
                    4,
                )
                .unwrap();
            want.resize(at as usize, 0);
            for _ in 0..count {
                want.extend_from_slice(element);
            }
        }
        assert_eq!(w.to_vec().unwrap(), want);
        assert_eq!(w.crc32().finalize(), crc32fast::hash(&want));
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
