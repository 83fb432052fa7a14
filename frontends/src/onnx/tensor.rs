//! ONNX element types and tensors: `TensorProto` → elements attributes
//! (dense, or `#ge.external` for external data) and reference tensors.

use crate::error::ImportError;
use crate::proto::onnx::{tensor_proto, TensorProto};
use ge_ir::attributes::{write_element, AttrData, Attribute, DenseElements, Element};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Type};
use std::path::{Path, PathBuf};

/// The name of an ONNX `TensorProto.DataType` code.
pub fn onnx_dtype_name(code: i32) -> String {
    tensor_proto::DataType::try_from(code)
        .map(|d| d.as_str_name().to_string())
        .unwrap_or_else(|_| format!("data type #{code}"))
}

/// Our dtype for an ONNX element type code.
pub fn dtype_from_onnx(code: i32) -> Result<DType, ImportError> {
    use tensor_proto::DataType as D;
    let d = D::try_from(code).ok();
    Ok(match d {
        Some(D::Float) => DType::F32,
        Some(D::Double) => DType::F64,
        Some(D::Float16) => DType::F16,
        Some(D::Bfloat16) => DType::BF16,
        Some(D::Int64) => DType::I64,
        Some(D::Int32) => DType::I32,
        Some(D::Int16) => DType::I16,
        Some(D::Int8) => DType::I8,
        Some(D::Uint64) => DType::U64,
        Some(D::Uint32) => DType::U32,
        Some(D::Uint16) => DType::U16,
        Some(D::Uint8) => DType::U8,
        Some(D::Bool) => DType::I1,
        Some(D::Float8e4m3fn) => DType::F8E4M3FN,
        Some(D::Float8e4m3fnuz) => DType::F8E4M3FNUZ,
        Some(D::Float8e5m2) => DType::F8E5M2,
        Some(D::Float8e5m2fnuz) => DType::F8E5M2FNUZ,
        Some(D::Float8e8m0) => DType::F8E8M0FNU,
        Some(D::Float4e2m1) => DType::F4E2M1FN,
        Some(D::Int4) => DType::I4,
        Some(D::Uint4) => DType::U4,
        Some(D::Int2) => DType::I2,
        Some(D::Uint2) => DType::U2,
        _ => {
            return Err(ImportError::unsupported(format!(
                "unsupported element type {}",
                onnx_dtype_name(code)
            )))
        }
    })
}

/// The ONNX element type code of one of our dtypes.
pub fn dtype_to_onnx(d: DType) -> i32 {
    use tensor_proto::DataType as D;
    (match d {
        DType::F32 => D::Float,
        DType::F64 => D::Double,
        DType::F16 => D::Float16,
        DType::BF16 => D::Bfloat16,
        DType::I64 | DType::Index => D::Int64,
        DType::I32 => D::Int32,
        DType::I16 => D::Int16,
        DType::I8 => D::Int8,
        DType::U64 => D::Uint64,
        DType::U32 => D::Uint32,
        DType::U16 => D::Uint16,
        DType::U8 => D::Uint8,
        DType::I1 => D::Bool,
        DType::F8E4M3FN => D::Float8e4m3fn,
        DType::F8E4M3FNUZ => D::Float8e4m3fnuz,
        DType::F8E5M2 => D::Float8e5m2,
        DType::F8E5M2FNUZ => D::Float8e5m2fnuz,
        DType::F8E8M0FNU => D::Float8e8m0,
        DType::F4E2M1FN => D::Float4e2m1,
        DType::I4 => D::Int4,
        DType::U4 => D::Uint4,
        DType::I2 => D::Int2,
        DType::U2 => D::Uint2,
    }) as i32
}

fn tensor_label(t: &TensorProto) -> String {
    match t.name.as_deref() {
        Some(n) if !n.is_empty() => format!("tensor '{n}'"),
        _ => "a tensor".to_string(),
    }
}

/// Shape and dtype of a `TensorProto`.
pub fn tensor_type(t: &TensorProto) -> Result<(Vec<i64>, DType), ImportError> {
    let dt = dtype_from_onnx(t.data_type.unwrap_or(0)).map_err(|e| e.context(tensor_label(t)))?;
    if let Some(d) = t.dims.iter().find(|&&d| d < 0) {
        return Err(ImportError::invalid(format!(
            "{} has a negative dim {d}",
            tensor_label(t)
        )));
    }
    Ok((t.dims.clone(), dt))
}

fn numel(shape: &[i64]) -> Result<usize, ImportError> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d as usize))
        .ok_or_else(|| ImportError::invalid(format!("shape {shape:?} is too large")))
}

/// External-data fields of a tensor (location, offset, length).
pub struct ExternalRef {
    pub location: String,
    pub offset: u64,
    pub length: Option<u64>,
}

pub fn external_ref(t: &TensorProto) -> Result<Option<ExternalRef>, ImportError> {
    if t.data_location != Some(tensor_proto::DataLocation::External as i32) {
        return Ok(None);
    }
    let mut location = None;
    let mut offset = 0u64;
    let mut length = None;
    for e in &t.external_data {
        let v = e.value.clone().unwrap_or_default();
        let num = |what: &str| {
            v.parse::<u64>().map_err(|_| {
                ImportError::invalid(format!(
                    "{}: external data {what} '{v}' is not a number",
                    tensor_label(t)
                ))
            })
        };
        match e.key.as_deref().unwrap_or("") {
            "location" => location = Some(v.clone()),
            "offset" => offset = num("offset")?,
            "length" => length = Some(num("length")?),
            _ => {}
        }
    }
    let location = location.ok_or_else(|| {
        ImportError::invalid(format!(
            "{} has external data without a 'location'",
            tensor_label(t)
        ))
    })?;
    Ok(Some(ExternalRef {
        location,
        offset,
        length,
    }))
}

/// Resolve an external data location against the model's folder under the
/// process's file-access policy ([`ge_ir::external`]): after symbolic links
/// are resolved it must stay inside that folder (or a directory allowed with
/// `--allow-external-dir`); `..` and absolute paths elsewhere are refused.
/// Returns the canonical path.
pub fn resolve_external(base: &Path, location: &str) -> Result<PathBuf, ImportError> {
    let access = ge_ir::external::policy()
        .and_then(|p| p.with_model_dir(base))
        .map_err(ImportError::io)?;
    access.resolve(location).map_err(ImportError::invalid)
}

/// An elements attribute for a tensor: `dense<…>`, or `#ge.external<…>` for
/// external data (checked to exist and be long enough; the path stored is
/// absolute so the IR can be run from any folder).
pub fn tensor_attr(t: &TensorProto, base: &Path) -> Result<Attribute, ImportError> {
    let (shape, dt) = tensor_type(t)?;
    let ty = Type::tensor_static(&shape, dt);
    let n = numel(&shape)?;
    let want = n
        .checked_mul(dt.byte_size())
        .ok_or_else(|| ImportError::invalid(format!("{} is too large", tensor_label(t))))?;
    if let Some(ext) = external_ref(t)? {
        if dt.bit_width() < 8 && dt != DType::I1 {
            return Err(ImportError::unsupported(format!(
                "{}: external data of packed {dt} elements is not supported",
                tensor_label(t)
            )));
        }
        let path = resolve_external(base, &ext.location)?;
        let len = ext.length.unwrap_or(want as u64);
        if len != want as u64 {
            return Err(ImportError::invalid(format!(
                "{}: external data length {len} does not match its type '{ty}' ({want} bytes)",
                tensor_label(t)
            )));
        }
        let meta = std::fs::metadata(&path).map_err(|e| {
            ImportError::io(format!(
                "{}: cannot read external data file '{}': {e}",
                tensor_label(t),
                path.display()
            ))
        })?;
        if meta.len() < ext.offset.saturating_add(len) {
            return Err(ImportError::invalid(format!(
                "{}: external data file '{}' has {} bytes, but offset {} + length {len} are needed",
                tensor_label(t),
                path.display(),
                meta.len(),
                ext.offset
            )));
        }
        return Ok(Attribute::new(AttrData::External {
            path: path.to_string_lossy().into(),
            offset: ext.offset,
            length: len,
            ty,
        }));
    }
    let bytes = tensor_bytes(t, dt, n)?;
    Ok(Attribute::dense(DenseElements {
        ty,
        splat: false,
        bytes: bytes.into(),
    }))
}

/// Little-endian element bytes of a tensor stored inside the proto.
fn tensor_bytes(t: &TensorProto, dt: DType, n: usize) -> Result<Vec<u8>, ImportError> {
    if dt.bit_width() < 8 && dt != DType::I1 {
        return unpack_sub_byte(t, dt, n);
    }
    let w = dt.byte_size();
    let mismatch = |have: usize| {
        ImportError::invalid(format!(
            "{} holds {have} values, but its shape {:?} needs {n}",
            tensor_label(t),
            t.dims
        ))
    };
    if let Some(raw) = &t.raw_data {
        if raw.len() != n * w {
            return Err(ImportError::invalid(format!(
                "{} has {} bytes of raw data, but its shape {:?} of {} needs {}",
                tensor_label(t),
                raw.len(),
                t.dims,
                dt,
                n * w
            )));
        }
        let mut v = raw.clone();
        if dt == DType::I1 {
            v.iter_mut().for_each(|b| *b = (*b != 0) as u8);
        }
        return Ok(v);
    }
    // Grown as values are copied: `n` comes from untrusted dims and is only
    // trusted once the value count matched it.
    let mut out = Vec::new();
    match dt {
        DType::F32 => {
            if t.float_data.len() != n {
                return Err(mismatch(t.float_data.len()));
            }
            t.float_data
                .iter()
                .for_each(|&x| out.extend_from_slice(&x.to_le_bytes()));
        }
        DType::F64 => {
            if t.double_data.len() != n {
                return Err(mismatch(t.double_data.len()));
            }
            t.double_data
                .iter()
                .for_each(|&x| out.extend_from_slice(&x.to_le_bytes()));
        }
        DType::I64 => {
            if t.int64_data.len() != n {
                return Err(mismatch(t.int64_data.len()));
            }
            t.int64_data
                .iter()
                .for_each(|&x| out.extend_from_slice(&x.to_le_bytes()));
        }
        DType::U32 | DType::U64 => {
            if t.uint64_data.len() != n {
                return Err(mismatch(t.uint64_data.len()));
            }
            for &x in &t.uint64_data {
                write_element(dt, Element::UInt(x), &mut out);
            }
        }
        d if d.is_small_float() => {
            // float8 values travel as their bit patterns in int32_data.
            if t.int32_data.len() != n {
                return Err(mismatch(t.int32_data.len()));
            }
            out.extend(t.int32_data.iter().map(|&x| x as u8));
        }
        DType::F16 | DType::BF16 => {
            // 16-bit floats travel as their bit patterns in int32_data.
            if t.int32_data.len() != n {
                return Err(mismatch(t.int32_data.len()));
            }
            t.int32_data
                .iter()
                .for_each(|&x| out.extend_from_slice(&(x as u16).to_le_bytes()));
        }
        _ => {
            if t.int32_data.len() != n {
                return Err(mismatch(t.int32_data.len()));
            }
            for &x in &t.int32_data {
                write_element(dt, Element::Int(x as i64), &mut out);
            }
        }
    }
    Ok(out)
}

/// The 4- and 2-bit types: ONNX packs them (first element in the low bits),
/// in `raw_data` or one packed byte per `int32_data` entry; ge stores one
/// element per byte.
fn unpack_sub_byte(t: &TensorProto, dt: DType, n: usize) -> Result<Vec<u8>, ImportError> {
    let bits = dt.bit_width() as usize;
    let per_byte = 8 / bits;
    let need = n.div_ceil(per_byte);
    let packed: Vec<u8> = match &t.raw_data {
        Some(raw) => raw.clone(),
        None => t.int32_data.iter().map(|&x| x as u8).collect(),
    };
    if packed.len() != need {
        return Err(ImportError::invalid(format!(
            "{} has {} packed bytes, but its shape {:?} of {dt} needs {need}",
            tensor_label(t),
            packed.len(),
            t.dims
        )));
    }
    let mask = (1u8 << bits) - 1;
    Ok((0..n)
        .map(|i| (packed[i / per_byte] >> ((i % per_byte) * bits)) & mask)
        .collect())
}

/// A reference tensor from a `TensorProto` (external data read from `base`).
pub fn tensor_value(t: &TensorProto, base: &Path) -> Result<Tensor, ImportError> {
    let a = tensor_attr(t, base)?;
    ge_dialects::data::constant::elements_tensor(a, None)
        .map_err(|e| ImportError::invalid(format!("{}: {e}", tensor_label(t))))
}
