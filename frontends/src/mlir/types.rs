//! Element types and tensor types between ge and upstream MLIR.

use ge_ir::{DType, Dim, Type};

/// MLIR's spelling of a dtype (our names are MLIR's: `ui8`); `None` for `index`.
pub fn mlir_elem_name(d: DType) -> Option<&'static str> {
    (d != DType::Index).then(|| d.name())
}

/// Our dtype for MLIR's spelling of an element type (`si32` reads as `i32`).
pub fn dtype_of_mlir(s: &str) -> Option<DType> {
    let s = s
        .strip_prefix('s')
        .filter(|r| r.starts_with('i'))
        .unwrap_or(s);
    DType::ALL
        .iter()
        .copied()
        .find(|&d| d != DType::Index && d.name() == s)
}

/// The values a dtype holds, as the bounds of a clamp that does not clamp
/// (floats: ±infinity).
pub fn dtype_range(d: DType) -> (f64, f64) {
    match d {
        DType::I8 => (i8::MIN as f64, i8::MAX as f64),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::I64 => (i64::MIN as f64, i64::MAX as f64),
        DType::U8 => (0.0, u8::MAX as f64),
        _ => (f64::NEG_INFINITY, f64::INFINITY),
    }
}

/// The text of an MLIR ranked tensor type: `-1` dims print as `?`.
pub fn tensor_type_text(shape: &[i64], d: DType) -> Result<String, String> {
    let e = mlir_elem_name(d)
        .ok_or_else(|| format!("element type '{}' has no upstream equivalent", d.name()))?;
    let mut s = String::from("tensor<");
    for &x in shape {
        if x < 0 {
            s.push('?');
        } else {
            s.push_str(&x.to_string());
        }
        s.push('x');
    }
    s.push_str(e);
    s.push('>');
    Ok(s)
}

/// Shape (`-1` for a dim that is not static) and dtype of a ranked tensor type.
pub fn shape_dtype(t: Type) -> Result<(Vec<i64>, DType), String> {
    let tt = t
        .as_tensor()
        .ok_or_else(|| format!("'{t}' is not a tensor type"))?;
    if tt.encoding.is_some() {
        return Err(format!(
            "'{t}': storage-format encodings have no upstream equivalent"
        ));
    }
    let dims = tt
        .dims
        .as_ref()
        .ok_or_else(|| format!("unranked '{t}' is not supported"))?;
    let shape = dims
        .iter()
        .map(|d| match d {
            Dim::Static(v) => *v,
            _ => -1,
        })
        .collect();
    Ok((shape, tt.dtype))
}
