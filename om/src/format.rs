//! The `.om` container: a fixed header, a partition table and the
//! partitions, little-endian throughout.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "\x89GEOM\r\n\x1a"
//!      8     4  format version (1)
//!     12     4  header size (256)
//!     16     8  total file length
//!     24     4  CRC-32 of the body (bytes 256 .. end)
//!     28     4  CRC-32 of the header (this field taken as 0)
//!     32     4  number of partitions
//!     36     4  flags (0)
//!     40     8  offset of the partition table (256)
//!     48    32  SoC name, UTF-8, NUL-padded
//!     80   128  model name, UTF-8, NUL-padded
//!    208    48  reserved (0)
//!    256  32·n  partition table: kind u32, flags u32, offset u64, length u64,
//!               CRC-32 u32, reserved u32
//! ```
//!
//! Every partition starts at a multiple of 64 bytes (gaps are zeros), so the
//! weights partition — and every weight in it, each 64-byte aligned — can be
//! used straight from an mmap of the file. Partitions: model def (JSON),
//! weights (raw little-endian bytes), task program (JSON), kernels (`.air`
//! text of the kernel functions), I/O description (JSON).
//!
//! The reader checks magic, version, header size, lengths, both checksums,
//! the table (bounds, alignment, overlaps, known and unique kinds, each
//! partition's checksum), then parses and validates the contents; anything
//! wrong is one clear line in an [`OmError`], never a panic.

use crate::model::{IoDesc, ModelDef, OmModel, TaskProgram, ValidStream};
use crate::weights::Weights;
use ge_ir::output::Durability;

pub const MAGIC: [u8; 8] = *b"\x89GEOM\r\n\x1a";
pub const VERSION: u32 = 1;
pub const HEADER_SIZE: usize = 256;
pub const ENTRY_SIZE: usize = 32;
pub const ALIGN: usize = 64;
const SOC_LEN: usize = 32;
const NAME_LEN: usize = 128;
const MAX_PARTITIONS: u32 = 64;

/// Partition kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Kind {
    ModelDef = 1,
    Weights = 2,
    TaskProgram = 3,
    Kernels = 4,
    IoDesc = 5,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::ModelDef,
        Kind::Weights,
        Kind::TaskProgram,
        Kind::Kernels,
        Kind::IoDesc,
    ];
    pub fn from_u32(v: u32) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| *k as u32 == v)
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::ModelDef => "model def",
            Kind::Weights => "weights",
            Kind::TaskProgram => "task program",
            Kind::Kernels => "kernels",
            Kind::IoDesc => "I/O description",
        }
    }
}

/// A malformed `.om`: one line saying what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct OmError(pub String);

impl std::fmt::Display for OmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OmError {}

fn bad(m: impl Into<String>) -> OmError {
    OmError(m.into())
}

/// One partition as found in a file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Partition {
    pub kind: Kind,
    pub offset: u64,
    pub length: u64,
    pub checksum: u32,
}

/// A parsed, validated `.om` borrowing the file's bytes (an mmap works).
#[derive(Clone, Debug)]
pub struct OmFile<'a> {
    pub version: u32,
    pub soc: String,
    pub name: String,
    pub partitions: Vec<Partition>,
    pub def: ModelDef,
    pub program: TaskProgram,
    pub io: IoDesc,
    pub kernels: &'a str,
    /// The weights partition, in place (64-byte aligned in the file).
    pub weights: &'a [u8],
    /// File offset of the weights partition.
    pub weights_offset: u64,
}

impl OmFile<'_> {
    /// An owned copy.
    pub fn to_model(&self) -> OmModel {
        OmModel {
            def: self.def.clone(),
            weights: self.weights.to_vec(),
            program: self.program.clone(),
            kernels: self.kernels.to_string(),
            io: self.io.clone(),
        }
    }
}

fn put_str(out: &mut [u8], s: &str) {
    // Truncate at a char boundary, leaving room for a NUL.
    let mut n = s.len().min(out.len() - 1);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    out[..n].copy_from_slice(&s.as_bytes()[..n]);
}

fn align_up(x: usize) -> usize {
    x.div_ceil(ALIGN) * ALIGN
}

/// Serialise a model (it must validate).
pub fn to_bytes(m: &OmModel) -> Result<Vec<u8>, String> {
    m.validate()?;
    to_bytes_unchecked(m)
}

/// Serialise without validating the contents (for testing the reader on
/// well-formed containers with bad contents).
pub fn to_bytes_unchecked(m: &OmModel) -> Result<Vec<u8>, String> {
    let weights = Weights::from_bytes(&m.weights);
    Image::of(m.parts(&weights))?.to_vec()
}

/// Serialise a validated model whose weights stream; the same bytes as
/// [`to_bytes`] of [`OmStream::to_model`](crate::model::OmStream::to_model).
pub fn stream_to_bytes(m: &ValidStream) -> Result<Vec<u8>, String> {
    Image::of(m.parts())?.to_vec()
}

/// Write a model to `path` (through [`ge_ir::output`]: a regular file is replaced
/// atomically, a device, FIFO or link is written through).
pub fn write(path: &std::path::Path, m: &OmModel) -> Result<(), String> {
    m.validate()?;
    let weights = Weights::from_bytes(&m.weights);
    Image::of(m.parts(&weights))?
        .write(path, Durability::Synced)
        .map(drop)
}

/// Write a validated model whose weights stream to `path` as [`write`] does:
/// each weight's bytes go from where they are to the file (checksummed on a
/// first pass over them), never through a buffer of the whole partition. The
/// number of bytes written.
pub fn write_stream(path: &std::path::Path, m: &ValidStream) -> Result<u64, String> {
    write_stream_with(path, m, Durability::Synced)
}

/// [`write_stream`], choosing whether a replaced file is flushed to the disk
/// before its rename ([`ge_ir::output::Durability`]: an `.om` carries its own
/// checksums, so a file a system crash tore is refused when read).
pub fn write_stream_with(
    path: &std::path::Path,
    m: &ValidStream,
    sync: Durability,
) -> Result<u64, String> {
    Image::of(m.parts())?.write(path, sync)
}

/// A model's parts, borrowed: what the writer serialises.
pub struct Parts<'m> {
    pub def: &'m ModelDef,
    pub weights: &'m Weights<'m>,
    pub program: &'m TaskProgram,
    pub kernels: &'m str,
    pub io: &'m IoDesc,
}

/// One partition's contents.
enum Contents<'m> {
    Bytes(std::borrow::Cow<'m, [u8]>),
    Weights(&'m Weights<'m>),
}

/// A model laid out as a file: the header and partition table (filled, with
/// both checksums), then each partition after its zero padding.
struct Image<'m> {
    head: Vec<u8>,
    parts: Vec<(u64, Contents<'m>)>,
    total: u64,
}

impl<'m> Image<'m> {
    fn of(p: Parts<'m>) -> Result<Image<'m>, String> {
        use std::borrow::Cow;
        let parts: Vec<(Kind, Contents)> = vec![
            (Kind::ModelDef, Contents::Bytes(Cow::Owned(to_json(p.def)?))),
            (Kind::Weights, Contents::Weights(p.weights)),
            (
                Kind::TaskProgram,
                Contents::Bytes(Cow::Owned(to_json(p.program)?)),
            ),
            (
                Kind::Kernels,
                Contents::Bytes(Cow::Borrowed(p.kernels.as_bytes())),
            ),
            (Kind::IoDesc, Contents::Bytes(Cow::Owned(to_json(p.io)?))),
        ];
        let table_end = HEADER_SIZE + ENTRY_SIZE * parts.len();
        let mut head = vec![0u8; align_up(table_end)];
        let too_big = || "the model is too large for the .om format".to_string();
        // Each partition's offset, padding before it and checksum state.
        let mut at = head.len() as u64;
        let mut laid = vec![];
        for (i, (kind, c)) in parts.into_iter().enumerate() {
            let off = at
                .checked_next_multiple_of(ALIGN as u64)
                .ok_or_else(too_big)?;
            let (len, crc) = match &c {
                Contents::Bytes(b) => {
                    let mut h = crc32fast::Hasher::new();
                    h.update(b);
                    (b.len() as u64, h)
                }
                Contents::Weights(w) => (w.len(), w.crc32()),
            };
            let e = HEADER_SIZE + i * ENTRY_SIZE;
            head[e..e + 4].copy_from_slice(&(kind as u32).to_le_bytes());
            head[e + 8..e + 16].copy_from_slice(&off.to_le_bytes());
            head[e + 16..e + 24].copy_from_slice(&len.to_le_bytes());
            head[e + 24..e + 28].copy_from_slice(&crc.clone().finalize().to_le_bytes());
            laid.push((off - at, c, crc));
            at = off.checked_add(len).ok_or_else(too_big)?;
        }
        let total = at;
        head[0..8].copy_from_slice(&MAGIC);
        head[8..12].copy_from_slice(&VERSION.to_le_bytes());
        head[12..16].copy_from_slice(&(HEADER_SIZE as u32).to_le_bytes());
        head[16..24].copy_from_slice(&total.to_le_bytes());
        head[32..36].copy_from_slice(&(laid.len() as u32).to_le_bytes());
        head[40..48].copy_from_slice(&(HEADER_SIZE as u64).to_le_bytes());
        put_str(&mut head[48..48 + SOC_LEN], &p.def.soc);
        put_str(&mut head[80..80 + NAME_LEN], &p.def.name);
        // The body's checksum from the partitions' own: the table, then each
        // partition's padding and bytes.
        let mut body = crc32fast::Hasher::new();
        body.update(&head[HEADER_SIZE..]);
        let mut parts = vec![];
        for (pad, c, crc) in laid {
            body.update(&ZEROS[..pad as usize]);
            body.combine(&crc);
            parts.push((pad, c));
        }
        head[24..28].copy_from_slice(&body.finalize().to_le_bytes());
        let header_crc = crc32fast::hash(&head[..HEADER_SIZE]);
        head[28..32].copy_from_slice(&header_crc.to_le_bytes());
        Ok(Image { head, parts, total })
    }

    fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        w.write_all(&self.head)?;
        for (pad, c) in &self.parts {
            w.write_all(&ZEROS[..*pad as usize])?;
            match c {
                Contents::Bytes(b) => w.write_all(b)?,
                Contents::Weights(ws) => ws.for_each_chunk(&mut |b| w.write_all(b))?,
            }
        }
        Ok(())
    }

    fn to_vec(&self) -> Result<Vec<u8>, String> {
        ge_ir::budget::check(Some(self.total), &"the .om file image")?;
        let mut out = Vec::with_capacity(self.total as usize);
        self.write_to(&mut out).map_err(|e| e.to_string())?;
        Ok(out)
    }

    fn write(&self, path: &std::path::Path, sync: Durability) -> Result<u64, String> {
        ge_ir::output::write_with_sync(path, sync, |w| self.write_to(w))
            .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
        Ok(self.total)
    }
}

/// Padding before a partition is less than [`ALIGN`] bytes.
static ZEROS: [u8; ALIGN] = [0; ALIGN];

fn to_json<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, String> {
    serde_json::to_vec_pretty(v).map_err(|e| format!("cannot serialise the model: {e}"))
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[o..o + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

fn str_at(b: &[u8], what: &str) -> Result<String, OmError> {
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    if b[n..].iter().any(|&c| c != 0) {
        return Err(bad(format!(
            "header: {what} has bytes after its terminating NUL"
        )));
    }
    std::str::from_utf8(&b[..n])
        .map(str::to_string)
        .map_err(|_| bad(format!("header: {what} is not UTF-8")))
}

/// Parse and validate an `.om` image: the header, the partition table, the
/// partitions' contents, then the model ([`crate::validate`]).
pub fn parse(bytes: &[u8]) -> Result<OmFile<'_>, OmError> {
    let h = header(bytes)?;
    let parts = partitions(bytes, &h)?;
    let file = contents(bytes, h, parts)?;
    let mut soc_field = [0u8; SOC_LEN];
    put_str(&mut soc_field, &file.def.soc);
    let mut name_field = [0u8; NAME_LEN];
    put_str(&mut name_field, &file.def.name);
    if soc_field[..] != bytes[48..48 + SOC_LEN] || name_field[..] != bytes[80..80 + NAME_LEN] {
        return Err(bad(
            "the header and the model def disagree on the SoC or the model name",
        ));
    }
    crate::validate::validate(
        &file.def,
        file.weights.len() as u64,
        &file.program,
        file.kernels,
        &file.io,
    )
    .map_err(OmError)?;
    Ok(file)
}

/// What the header says, checked.
struct Header {
    version: u32,
    /// Number of partitions.
    count: u32,
    /// Offset of the partition table and of its end.
    table: u64,
    table_end: u64,
    soc: String,
    name: String,
}

/// The header: magic, version, size, total length, both checksums, the
/// partition table's place, the SoC and model names.
fn header(bytes: &[u8]) -> Result<Header, OmError> {
    if bytes.len() < HEADER_SIZE {
        if bytes.len() >= 8 && bytes[..8] != MAGIC {
            return Err(bad("not a ge .om model (bad magic)"));
        }
        return Err(bad(format!(
            "truncated: {} bytes is shorter than the {HEADER_SIZE}-byte header",
            bytes.len()
        )));
    }
    if bytes[..8] != MAGIC {
        return Err(bad("not a ge .om model (bad magic)"));
    }
    let version = u32_at(bytes, 8);
    if version != VERSION {
        return Err(bad(format!(
            "unsupported .om format version {version} (this build reads version {VERSION})"
        )));
    }
    let hsize = u32_at(bytes, 12) as usize;
    if hsize != HEADER_SIZE {
        return Err(bad(format!(
            "unsupported header size {hsize} (expected {HEADER_SIZE})"
        )));
    }
    let total = u64_at(bytes, 16);
    if total != bytes.len() as u64 {
        return Err(bad(if total > bytes.len() as u64 {
            format!(
                "truncated: the header says {total} bytes but the file has {}",
                bytes.len()
            )
        } else {
            format!(
                "{} trailing bytes after the {total} bytes the header declares",
                bytes.len() as u64 - total
            )
        }));
    }
    let mut header = bytes[..HEADER_SIZE].to_vec();
    header[28..32].fill(0);
    if crc32fast::hash(&header) != u32_at(bytes, 28) {
        return Err(bad("header checksum mismatch (the file is corrupted)"));
    }
    if crc32fast::hash(&bytes[HEADER_SIZE..]) != u32_at(bytes, 24) {
        return Err(bad("body checksum mismatch (the file is corrupted)"));
    }
    let count = u32_at(bytes, 32);
    if count > MAX_PARTITIONS {
        return Err(bad(format!(
            "{count} partitions is more than {MAX_PARTITIONS}"
        )));
    }
    let table = u64_at(bytes, 40);
    let table_end = (count as u64)
        .checked_mul(ENTRY_SIZE as u64)
        .and_then(|n| n.checked_add(table))
        .filter(|&e| table >= HEADER_SIZE as u64 && e <= bytes.len() as u64)
        .ok_or_else(|| bad("the partition table lies outside the file"))?;
    Ok(Header {
        version,
        count,
        table,
        table_end,
        soc: str_at(&bytes[48..48 + SOC_LEN], "the SoC name")?,
        name: str_at(&bytes[80..80 + NAME_LEN], "the model name")?,
    })
}

/// The partition table: every entry of a known kind, once, inside the file
/// after the table, aligned, overlapping no other, with its checksum.
fn partitions(bytes: &[u8], h: &Header) -> Result<Vec<Partition>, OmError> {
    let mut parts: Vec<Partition> = vec![];
    for i in 0..h.count as usize {
        let e = h.table as usize + i * ENTRY_SIZE;
        let raw = u32_at(bytes, e);
        let kind = Kind::from_u32(raw)
            .ok_or_else(|| bad(format!("partition #{i} has unknown kind {raw}")))?;
        let offset = u64_at(bytes, e + 8);
        let length = u64_at(bytes, e + 16);
        let checksum = u32_at(bytes, e + 24);
        let end = offset
            .checked_add(length)
            .filter(|&x| x <= bytes.len() as u64)
            .ok_or_else(|| {
                bad(format!(
                    "{} partition (bytes {offset}+{length}) lies outside the {}-byte file",
                    kind.name(),
                    bytes.len()
                ))
            })?;
        if offset < h.table_end {
            return Err(bad(format!(
                "{} partition overlaps the header or partition table",
                kind.name()
            )));
        }
        if !offset.is_multiple_of(ALIGN as u64) {
            return Err(bad(format!(
                "{} partition at offset {offset} is not {ALIGN}-byte aligned",
                kind.name()
            )));
        }
        if parts.iter().any(|p| p.kind == kind) {
            return Err(bad(format!("two {} partitions", kind.name())));
        }
        if let Some(p) = parts
            .iter()
            .find(|p| p.offset < end && offset < p.offset + p.length)
        {
            return Err(bad(format!(
                "{} partition overlaps the {} partition",
                kind.name(),
                p.kind.name()
            )));
        }
        if crc32fast::hash(&bytes[offset as usize..end as usize]) != checksum {
            return Err(bad(format!(
                "{} partition checksum mismatch (the file is corrupted)",
                kind.name()
            )));
        }
        parts.push(Partition {
            kind,
            offset,
            length,
            checksum,
        });
    }
    Ok(parts)
}

/// The partitions' contents: the JSON ones deserialised, the kernels as
/// text, the weights in place.
fn contents(bytes: &[u8], h: Header, parts: Vec<Partition>) -> Result<OmFile<'_>, OmError> {
    let get = |k: Kind| -> Result<&[u8], OmError> {
        let p = parts
            .iter()
            .find(|p| p.kind == k)
            .ok_or_else(|| bad(format!("missing {} partition", k.name())))?;
        Ok(&bytes[p.offset as usize..(p.offset + p.length) as usize])
    };
    fn json<'de, T: serde::Deserialize<'de>>(b: &'de [u8], k: Kind) -> Result<T, OmError> {
        serde_json::from_slice(b).map_err(|e| bad(format!("{} partition: {e}", k.name())))
    }
    let def: ModelDef = json(get(Kind::ModelDef)?, Kind::ModelDef)?;
    let program: TaskProgram = json(get(Kind::TaskProgram)?, Kind::TaskProgram)?;
    let io: IoDesc = json(get(Kind::IoDesc)?, Kind::IoDesc)?;
    let kernels = std::str::from_utf8(get(Kind::Kernels)?)
        .map_err(|_| bad("kernels partition is not UTF-8 text"))?;
    let weights = get(Kind::Weights)?;
    let weights_offset = parts
        .iter()
        .find(|p| p.kind == Kind::Weights)
        .map_or(0, |p| p.offset);
    Ok(OmFile {
        version: h.version,
        soc: h.soc,
        name: h.name,
        partitions: parts,
        def,
        program,
        io,
        kernels,
        weights,
        weights_offset,
    })
}

/// Read and validate an `.om` file.
pub fn read(path: &std::path::Path) -> Result<Vec<u8>, OmError> {
    std::fs::read(path).map_err(|e| bad(format!("cannot read '{}': {e}", path.display())))
}
