//! Reading and writing tensors as numpy `.npy` files (via `npyz`).

use ge_ir::tensor::Tensor;
use ge_ir::DType;

fn err(path: &str, m: impl std::fmt::Display) -> String {
    format!("{path}: {m}")
}

/// Read a C-order `.npy` file into a tensor.
pub fn read_npy(path: &str) -> Result<Tensor, String> {
    let bytes = std::fs::read(path).map_err(|e| err(path, e))?;
    let npy = npyz::NpyFile::new(&bytes[..])
        .map_err(|e| err(path, format!("not a valid .npy file ({e})")))?;
    if npy.order() == npyz::Order::Fortran {
        return Err(err(
            path,
            "Fortran-order arrays are not supported; save with np.ascontiguousarray",
        ));
    }
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let ts = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => return Err(err(path, format!("unsupported numpy dtype {other:?}"))),
    };
    let code = ts.trim_start_matches(['<', '>', '|', '=']);
    let bad = |e: std::io::Error| err(path, e);
    Ok(match code {
        "f8" => Tensor::from_f64(shape, DType::F64, npy.into_vec::<f64>().map_err(bad)?),
        "f4" => Tensor::from_f64(
            shape,
            DType::F32,
            npy.into_vec::<f32>()
                .map_err(bad)?
                .into_iter()
                .map(f64::from)
                .collect(),
        ),
        "f2" => Tensor::from_f64(
            shape,
            DType::F16,
            npy.into_vec::<half::f16>()
                .map_err(bad)?
                .into_iter()
                .map(|x| x.to_f64())
                .collect(),
        ),
        "i8" => Tensor::from_i64(shape, DType::I64, npy.into_vec::<i64>().map_err(bad)?),
        "i4" => Tensor::from_i64(
            shape,
            DType::I32,
            npy.into_vec::<i32>()
                .map_err(bad)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "i2" => Tensor::from_i64(
            shape,
            DType::I16,
            npy.into_vec::<i16>()
                .map_err(bad)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "i1" => Tensor::from_i64(
            shape,
            DType::I8,
            npy.into_vec::<i8>()
                .map_err(bad)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "u1" => Tensor::from_i64(
            shape,
            DType::U8,
            npy.into_vec::<u8>()
                .map_err(bad)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "u2" => Tensor::from_i64(
            shape,
            DType::U16,
            npy.into_vec::<u16>()
                .map_err(bad)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "u4" => Tensor::from_i64(
            shape,
            DType::U32,
            npy.into_vec::<u32>()
                .map_err(bad)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "u8" => Tensor::from_i64(
            shape,
            DType::U64,
            npy.into_vec::<u64>()
                .map_err(bad)?
                .into_iter()
                .map(|x| x as i64)
                .collect(),
        ),
        "b1" => Tensor::from_i64(
            shape,
            DType::I1,
            npy.into_vec::<bool>()
                .map_err(bad)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        other => return Err(err(path, format!("unsupported numpy dtype '{other}'"))),
    })
}

fn write_vec<T: npyz::AutoSerialize>(shape: &[u64], data: Vec<T>) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![];
    {
        use npyz::WriterBuilder;
        let mut w = npyz::WriteOptions::<T>::new()
            .default_dtype()
            .shape(shape)
            .writer(&mut buf)
            .begin_nd()?;
        w.extend(data)?;
        w.finish()?;
    }
    Ok(buf)
}

/// Write a tensor as `.npy` (bf16 is written as f32: numpy has no bf16) through
/// [`ge_ir::output`].
pub fn write_npy(path: &str, t: &Tensor) -> Result<(), String> {
    let shape: Vec<u64> = t.shape.iter().map(|&d| d as u64).collect();
    let bytes = match t.dtype {
        DType::F64 => write_vec(&shape, t.to_f64()),
        DType::F32 | DType::BF16 => {
            write_vec(&shape, t.to_f64().into_iter().map(|x| x as f32).collect())
        }
        DType::F16 => write_vec(
            &shape,
            t.to_f64().into_iter().map(half::f16::from_f64).collect(),
        ),
        DType::I64 | DType::Index => write_vec(&shape, t.to_i64()),
        DType::I32 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as i32).collect()),
        DType::I16 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as i16).collect()),
        DType::I8 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as i8).collect()),
        DType::U8 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as u8).collect()),
        DType::U16 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as u16).collect()),
        DType::U32 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as u32).collect()),
        DType::U64 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as u64).collect()),
        DType::I1 => write_vec(&shape, t.to_i64().into_iter().map(|x| x != 0).collect()),
    }
    .map_err(|e| err(path, e))?;
    ge_ir::output::write(path, &bytes).map_err(|e| err(path, e))
}
