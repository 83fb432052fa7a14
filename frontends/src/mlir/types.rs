//! Element types and tensor types between ge and upstream MLIR.

use ge_ir::{DType, Dim, Type};

/// MLIR's spelling of a dtype (`ui8` for our `u8`); `None` for `index`.
pub fn mlir_elem_name(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::F64 => "f64",
        DType::F32 => "f32",
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        DType::I64 => "i64",
        DType::I32 => "i32",
        DType::I16 => "i16",
        DType::I8 => "i8",
        DType::U8 => "ui8",
        DType::U16 => "ui16",
        DType::U32 => "ui32",
        DType::U64 => "ui64",
        DType::I1 => "i1",
        _ => return None,
    })
}

/// Our dtype for MLIR's spelling of an element type.
pub fn dtype_of_mlir(s: &str) -> Option<DType> {
    Some(match s {
        "f64" => DType::F64,
        "f32" => DType::F32,
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        "i64" | "si64" => DType::I64,
        "i32" | "si32" => DType::I32,
        "i16" | "si16" => DType::I16,
        "i8" | "si8" => DType::I8,
        "ui8" => DType::U8,
        "ui16" => DType::U16,
        "ui32" => DType::U32,
        "ui64" => DType::U64,
        "i1" => DType::I1,
        _ => return None,
    })
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
