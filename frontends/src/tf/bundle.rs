//! TensorFlow checkpoints (tensor bundles): `variables.index` + data shards.
//!
//! The index is a LevelDB-format table (an SSTable: data blocks of
//! prefix-compressed key/value entries, an index block pointing at them, a
//! 48-byte footer with the magic `0xdb4775248b80fb57`; each block is followed
//! by a compression byte — 0 none, 1 Snappy — and a masked CRC32C). Its keys
//! are tensor names; the value under the empty key is a `BundleHeaderProto`,
//! every other value a `BundleEntryProto` saying which shard holds the tensor's
//! bytes, at which offset, how many, and their masked CRC32C. Shards are
//! `<prefix>.data-<shard>-of-<num_shards>` files of raw little-endian values.
//!
//! No crate reads these tables from untrusted input without panicking on a
//! malformed block (the `sstable` crate slices unchecked), so this is a small
//! reader of its own: every offset and length is checked against the buffer,
//! every size against the memory budget ([`ge_ir::budget`]), every checksum
//! verified; a bad file is an [`ImportError`], never a panic. Only what a
//! reader of a whole table needs is implemented (a sequential scan; no filter
//! blocks, no restart-point search).

use crate::error::ImportError;
use crate::proto::tensorflow::{BundleEntryProto, BundleHeaderProto};
use prost::Message;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type Res<T> = Result<T, ImportError>;

const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
const FOOTER_LEN: usize = 48;

fn bad(file: &Path, what: impl std::fmt::Display) -> ImportError {
    ImportError::malformed(format!(
        "'{}' is not a valid TensorFlow checkpoint index: {what}",
        file.display()
    ))
}

/// A LevelDB varint (at most 10 bytes for 64 bits) at `*pos`.
fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn varint_usize(buf: &[u8], pos: &mut usize) -> Option<usize> {
    usize::try_from(varint(buf, pos)?).ok()
}

/// LevelDB's masked CRC32C (so a CRC of data holding CRCs stays useful).
fn unmask(masked: u32) -> u32 {
    let rot = masked.wrapping_sub(0xa282_ead8);
    rot.rotate_left(15)
}

/// The (offset, size) of a block handle at `*pos`.
fn handle(buf: &[u8], pos: &mut usize) -> Option<(usize, usize)> {
    Some((varint_usize(buf, pos)?, varint_usize(buf, pos)?))
}

/// A table's block at `(offset, size)`: checksum verified, decompressed.
fn read_block(file: &Path, data: &[u8], (off, size): (usize, usize)) -> Res<Vec<u8>> {
    let end = off
        .checked_add(size)
        .and_then(|e| e.checked_add(5))
        .filter(|&e| e <= data.len())
        .ok_or_else(|| {
            bad(
                file,
                format!("a block at {off}+{size} lies outside the file"),
            )
        })?;
    let raw = &data[off..off + size];
    let kind = data[off + size];
    let stored = u32::from_le_bytes([data[end - 4], data[end - 3], data[end - 2], data[end - 1]]);
    // The checksum covers the block contents and the compression byte.
    let crc = crc32c::crc32c_append(crc32c::crc32c(raw), &[kind]);
    if crc != unmask(stored) {
        return Err(bad(
            file,
            format!("the block at {off} has a wrong checksum"),
        ));
    }
    match kind {
        0 => Ok(raw.to_vec()),
        1 => {
            let n = snap::raw::decompress_len(raw)
                .map_err(|e| bad(file, format!("a Snappy block: {e}")))?;
            ge_ir::budget::check(Some(n as u64), &"a checkpoint index block")
                .map_err(ImportError::invalid)?;
            snap::raw::Decoder::new()
                .decompress_vec(raw)
                .map_err(|e| bad(file, format!("a Snappy block: {e}")))
        }
        k => Err(bad(file, format!("unknown block compression {k}"))),
    }
}

/// Every (key, value) of a block, in order.
fn block_entries(file: &Path, block: &[u8]) -> Res<Vec<(Vec<u8>, Vec<u8>)>> {
    let n = block.len();
    if n < 4 {
        return Err(bad(file, "a block is shorter than its restart count"));
    }
    let restarts = u32::from_le_bytes([block[n - 4], block[n - 3], block[n - 2], block[n - 1]]);
    let data_end = (restarts as usize)
        .checked_mul(4)
        .and_then(|r| r.checked_add(4))
        .and_then(|r| n.checked_sub(r))
        .ok_or_else(|| bad(file, "a block's restart array is larger than the block"))?;
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = vec![];
    let mut key: Vec<u8> = vec![];
    let mut pos = 0;
    while pos < data_end {
        let entry = |pos: &mut usize| -> Option<(usize, usize, usize)> {
            Some((
                varint_usize(block, pos)?,
                varint_usize(block, pos)?,
                varint_usize(block, pos)?,
            ))
        };
        let (shared, unshared, vlen) =
            entry(&mut pos).ok_or_else(|| bad(file, "a truncated block entry"))?;
        if shared > key.len() {
            return Err(bad(
                file,
                "a key shares more bytes than the previous key has",
            ));
        }
        let kend = pos
            .checked_add(unshared)
            .filter(|&e| e <= data_end)
            .ok_or_else(|| bad(file, "a key runs past its block"))?;
        let vend = kend
            .checked_add(vlen)
            .filter(|&e| e <= data_end)
            .ok_or_else(|| bad(file, "a value runs past its block"))?;
        key.truncate(shared);
        key.extend_from_slice(&block[pos..kend]);
        out.push((key.clone(), block[kend..vend].to_vec()));
        pos = vend;
    }
    Ok(out)
}

/// Every (key, value) of a LevelDB table, in key order.
pub fn read_table(file: &Path, data: &[u8]) -> Res<Vec<(Vec<u8>, Vec<u8>)>> {
    if data.len() < FOOTER_LEN {
        return Err(bad(file, "shorter than a table footer"));
    }
    let footer = &data[data.len() - FOOTER_LEN..];
    let mut magic = [0u8; 8];
    magic.copy_from_slice(&footer[40..48]);
    if u64::from_le_bytes(magic) != MAGIC {
        return Err(bad(file, "no LevelDB table magic number"));
    }
    let mut pos = 0;
    let (_meta, index) = handle(footer, &mut pos)
        .zip(handle(footer, &mut pos))
        .ok_or_else(|| bad(file, "a malformed footer"))?;
    let index_block = read_block(file, data, index)?;
    let mut out = vec![];
    for (_, h) in block_entries(file, &index_block)? {
        let mut p = 0;
        let bh = handle(&h, &mut p).ok_or_else(|| bad(file, "a malformed block handle"))?;
        let block = read_block(file, data, bh)?;
        out.extend(block_entries(file, &block)?);
    }
    Ok(out)
}

/// One tensor of a checkpoint: its entry and where its bytes are.
pub struct Bundle {
    prefix: PathBuf,
    num_shards: i32,
    entries: BTreeMap<String, BundleEntryProto>,
}

impl Bundle {
    /// Read `<prefix>.index` (e.g. `saved_model/variables/variables`).
    pub fn open(prefix: &Path) -> Res<Bundle> {
        let index = PathBuf::from(format!("{}.index", prefix.display()));
        let data = std::fs::read(&index)
            .map_err(|e| ImportError::io(format!("cannot read '{}': {e}", index.display())))?;
        let mut entries = BTreeMap::new();
        let mut header = None;
        for (k, v) in read_table(&index, &data)? {
            if k.is_empty() {
                header = Some(
                    BundleHeaderProto::decode(v.as_slice())
                        .map_err(|e| bad(&index, format!("a bad header: {e}")))?,
                );
                continue;
            }
            let key = String::from_utf8(k).map_err(|_| bad(&index, "a key is not UTF-8"))?;
            let e = BundleEntryProto::decode(v.as_slice())
                .map_err(|e| bad(&index, format!("a bad entry for '{key}': {e}")))?;
            entries.insert(key, e);
        }
        let header = header.ok_or_else(|| bad(&index, "no bundle header"))?;
        if header.endianness != 0 {
            return Err(ImportError::unsupported(format!(
                "'{}': big-endian checkpoints are not supported",
                index.display()
            )));
        }
        if !(1..=1 << 16).contains(&header.num_shards) {
            return Err(bad(&index, format!("{} shards", header.num_shards)));
        }
        Ok(Bundle {
            prefix: prefix.to_path_buf(),
            num_shards: header.num_shards,
            entries,
        })
    }

    pub fn entry(&self, key: &str) -> Option<&BundleEntryProto> {
        self.entries.get(key)
    }

    /// The raw bytes of tensor `key` (checksum verified).
    pub fn bytes(&self, key: &str) -> Res<Vec<u8>> {
        let (bytes, crc, shard) = self.raw(key)?;
        if crc32c::crc32c(&bytes) != crc {
            return Err(wrong_checksum(key, &shard));
        }
        Ok(bytes)
    }

    /// The bytes of tensor `key` as stored, its unmasked checksum and its shard file.
    fn raw(&self, key: &str) -> Res<(Vec<u8>, u32, PathBuf)> {
        let e = self
            .entries
            .get(key)
            .ok_or_else(|| ImportError::invalid(format!("the checkpoint has no tensor '{key}'")))?;
        if !e.slices.is_empty() {
            return Err(ImportError::unsupported(format!(
                "checkpoint tensor '{key}' is partitioned (sliced variables are not supported)"
            )));
        }
        if !(0..self.num_shards).contains(&e.shard_id) || e.offset < 0 || e.size < 0 {
            return Err(ImportError::malformed(format!(
                "checkpoint tensor '{key}': shard {} offset {} size {} are out of range",
                e.shard_id, e.offset, e.size
            )));
        }
        ge_ir::budget::check(
            Some(e.size as u64),
            &format_args!("checkpoint tensor '{key}'"),
        )
        .map_err(ImportError::invalid)?;
        let shard = PathBuf::from(format!(
            "{}.data-{:05}-of-{:05}",
            self.prefix.display(),
            e.shard_id,
            self.num_shards
        ));
        let bytes = read_range(&shard, e.offset as u64, e.size as u64)?;
        Ok((bytes, unmask(e.crc32c), shard))
    }

    /// The bytes of a scalar string tensor. TensorFlow writes a string
    /// tensor as the varint lengths of its elements, a masked CRC32C of those
    /// lengths, then the bytes; the entry's checksum covers each length as a
    /// little-endian u32 (u64 when larger), then the stored length checksum,
    /// then the bytes (`WriteStringTensor` in TensorFlow's tensor_bundle.cc).
    pub fn string_scalar(&self, key: &str) -> Res<Vec<u8>> {
        let (b, crc, shard) = self.raw(key)?;
        let mut pos = 0;
        let parsed = varint(&b, &mut pos).and_then(|len| {
            let start = pos.checked_add(4)?;
            let end = start.checked_add(usize::try_from(len).ok()?)?;
            (end == b.len()).then_some((len, pos, start))
        });
        let Some((len, sum_at, start)) = parsed else {
            return Err(ImportError::malformed(format!(
                "checkpoint tensor '{key}' is not a well-formed string scalar"
            )));
        };
        let c = match u32::try_from(len) {
            Ok(l) => crc32c::crc32c(&l.to_le_bytes()),
            Err(_) => crc32c::crc32c(&len.to_le_bytes()),
        };
        let c = crc32c::crc32c_append(c, &b[sum_at..start]);
        if crc32c::crc32c_append(c, &b[start..]) != crc {
            return Err(wrong_checksum(key, &shard));
        }
        Ok(b[start..].to_vec())
    }
}

fn wrong_checksum(key: &str, shard: &Path) -> ImportError {
    ImportError::malformed(format!(
        "checkpoint tensor '{key}': its bytes in '{}' have a wrong checksum",
        shard.display()
    ))
}

/// `len` bytes at `off` of `path`, after checking they lie inside the file.
fn read_range(path: &Path, off: u64, len: u64) -> Res<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let io = |e: std::io::Error| ImportError::io(format!("cannot read '{}': {e}", path.display()));
    let mut f = std::fs::File::open(path).map_err(io)?;
    let size = f.metadata().map_err(io)?.len();
    if off.checked_add(len).is_none_or(|end| end > size) {
        return Err(ImportError::malformed(format!(
            "'{}' is {size} bytes, but a tensor lies at {off}+{len}",
            path.display()
        )));
    }
    f.seek(SeekFrom::Start(off)).map_err(io)?;
    let n = usize::try_from(len)
        .map_err(|_| ImportError::invalid(format!("a tensor of {len} bytes is too large")))?;
    let mut buf = vec![0u8; n];
    f.read_exact(&mut buf).map_err(io)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-block table with the given sorted entries (LevelDB's layout, no
    /// prefix sharing, one restart point).
    fn table(entries: &[(&[u8], &[u8])], snappy: bool) -> Vec<u8> {
        fn put_varint(out: &mut Vec<u8>, mut v: u64) {
            while v >= 0x80 {
                out.push((v as u8) | 0x80);
                v >>= 7;
            }
            out.push(v as u8);
        }
        fn block(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
            let mut b = vec![];
            for (k, v) in entries {
                put_varint(&mut b, 0);
                put_varint(&mut b, k.len() as u64);
                put_varint(&mut b, v.len() as u64);
                b.extend_from_slice(k);
                b.extend_from_slice(v);
            }
            b.extend_from_slice(&0u32.to_le_bytes());
            b.extend_from_slice(&1u32.to_le_bytes());
            b
        }
        fn mask(c: u32) -> u32 {
            c.rotate_right(15).wrapping_add(0xa282_ead8)
        }
        fn emit(out: &mut Vec<u8>, raw: Vec<u8>, snappy: bool) -> (u64, u64) {
            let (body, kind) = if snappy {
                (snap::raw::Encoder::new().compress_vec(&raw).unwrap(), 1u8)
            } else {
                (raw, 0u8)
            };
            let off = out.len() as u64;
            out.extend_from_slice(&body);
            out.push(kind);
            let crc = crc32c::crc32c_append(crc32c::crc32c(&body), &[kind]);
            out.extend_from_slice(&mask(crc).to_le_bytes());
            (off, body.len() as u64)
        }
        let mut out = vec![];
        let (doff, dlen) = emit(&mut out, block(entries), snappy);
        let mut h = vec![];
        put_varint(&mut h, doff);
        put_varint(&mut h, dlen);
        let last = entries.last().map(|e| e.0).unwrap_or(b"");
        let (ioff, ilen) = emit(&mut out, block(&[(last, &h)]), false);
        let mut footer = vec![];
        put_varint(&mut footer, 0);
        put_varint(&mut footer, 0);
        put_varint(&mut footer, ioff);
        put_varint(&mut footer, ilen);
        footer.resize(40, 0);
        footer.extend_from_slice(&MAGIC.to_le_bytes());
        out.extend_from_slice(&footer);
        out
    }

    #[test]
    fn reads_plain_and_snappy_tables() {
        for snappy in [false, true] {
            let t = table(&[(b"a", b"1"), (b"bc", b"22")], snappy);
            let e = read_table(Path::new("t"), &t).unwrap();
            assert_eq!(
                e,
                vec![
                    (b"a".to_vec(), b"1".to_vec()),
                    (b"bc".to_vec(), b"22".to_vec())
                ]
            );
        }
    }

    #[test]
    fn every_truncation_and_bit_flip_is_an_error_not_a_panic() {
        let t = table(&[(b"key", b"value"), (b"other", b"x")], false);
        for cut in 0..t.len() {
            assert!(
                read_table(Path::new("t"), &t[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        for i in 0..t.len() {
            for bit in 0..8 {
                let mut u = t.clone();
                u[i] ^= 1 << bit;
                // Some flips (footer padding) are harmless; none may panic.
                let _ = read_table(Path::new("t"), &u);
            }
        }
        let mut u = t.clone();
        u[3] ^= 1;
        assert!(read_table(Path::new("t"), &u)
            .unwrap_err()
            .message
            .contains("checksum"));
    }
}
