//! The `.om` writer as it was before the weights streamed (rev 543a806's
//! `format::to_bytes_unchecked`, kept verbatim but for the names): the whole
//! file built in one buffer, each checksum over the finished bytes. The
//! streaming writer must produce exactly these bytes; shared by
//! om/tests/suite/streaming.rs and lowering/tests/suite/om_stream.rs.

use ge_om::format::{Kind, ALIGN, ENTRY_SIZE, HEADER_SIZE, MAGIC, VERSION};
use ge_om::OmModel;

fn put_str(out: &mut [u8], s: &str) {
    let mut n = s.len().min(out.len() - 1);
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    out[..n].copy_from_slice(&s.as_bytes()[..n]);
}

fn align_up(x: usize) -> usize {
    x.div_ceil(ALIGN) * ALIGN
}

fn to_json<T: serde::Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec_pretty(v).unwrap()
}

pub fn reference_bytes(m: &OmModel) -> Vec<u8> {
    let parts: Vec<(Kind, Vec<u8>)> = vec![
        (Kind::ModelDef, to_json(&m.def)),
        (Kind::Weights, m.weights.clone()),
        (Kind::TaskProgram, to_json(&m.program)),
        (Kind::Kernels, m.kernels.as_bytes().to_vec()),
        (Kind::IoDesc, to_json(&m.io)),
    ];
    let table_end = HEADER_SIZE + ENTRY_SIZE * parts.len();
    let mut out = vec![0u8; align_up(table_end)];
    let mut entries = vec![];
    for (kind, bytes) in &parts {
        let off = align_up(out.len());
        out.resize(off, 0);
        out.extend_from_slice(bytes);
        entries.push((*kind, off, bytes.len(), crc32fast::hash(bytes)));
    }
    let total = out.len();
    for (i, (kind, off, len, crc)) in entries.iter().enumerate() {
        let e = HEADER_SIZE + i * ENTRY_SIZE;
        out[e..e + 4].copy_from_slice(&(*kind as u32).to_le_bytes());
        out[e + 8..e + 16].copy_from_slice(&(*off as u64).to_le_bytes());
        out[e + 16..e + 24].copy_from_slice(&(*len as u64).to_le_bytes());
        out[e + 24..e + 28].copy_from_slice(&crc.to_le_bytes());
    }
    out[0..8].copy_from_slice(&MAGIC);
    out[8..12].copy_from_slice(&VERSION.to_le_bytes());
    out[12..16].copy_from_slice(&(HEADER_SIZE as u32).to_le_bytes());
    out[16..24].copy_from_slice(&(total as u64).to_le_bytes());
    out[32..36].copy_from_slice(&(parts.len() as u32).to_le_bytes());
    out[40..48].copy_from_slice(&(HEADER_SIZE as u64).to_le_bytes());
    put_str(&mut out[48..80], &m.def.soc);
    put_str(&mut out[80..208], &m.def.name);
    let body_crc = crc32fast::hash(&out[HEADER_SIZE..]);
    out[24..28].copy_from_slice(&body_crc.to_le_bytes());
    let header_crc = crc32fast::hash(&out[..HEADER_SIZE]);
    out[28..32].copy_from_slice(&header_crc.to_le_bytes());
    out
}
