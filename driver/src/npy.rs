//! Reading and writing tensors as numpy `.npy` files (via `npyz`).

use ge_ir::tensor::Tensor;
use ge_ir::DType;

fn err(path: &str, m: impl std::fmt::Display) -> String {
    format!("{path}: {m}")
}

/// The shape an `.npy` header declares (`None` if it cannot be read here;
/// npyz then reports the problem).
fn declared_shape(bytes: &[u8]) -> Option<Vec<u64>> {
    let rest = bytes.strip_prefix(b"\x93NUMPY")?;
    let (&major, rest) = rest.split_first()?;
    let rest = rest.get(1..)?;
    let (len, rest) = if major == 1 {
        (
            u16::from_le_bytes(rest.get(..2)?.try_into().ok()?) as usize,
            rest.get(2..)?,
        )
    } else {
        (
            u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize,
            rest.get(4..)?,
        )
    };
    let header = std::str::from_utf8(rest.get(..len)?).ok()?;
    let at = header.find("'shape'")?;
    let open = at + header[at..].find('(')?;
    let close = open + header[open..].find(')')?;
    header[open + 1..close]
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.trim_end_matches('L').parse().ok())
        .collect()
}

/// Read a C-order `.npy` file into a tensor.
///
/// The header's shape is untrusted: the elements it declares must be in the
/// file, and the tensor they make (8 bytes per element) must fit the memory
/// budget, before anything is allocated for them.
pub fn read_npy(path: &str) -> Result<Tensor, String> {
    let size = std::fs::metadata(path).map_err(|e| err(path, e))?.len();
    ge_ir::budget::check(Some(size), &format_args!("input file '{path}'"))?;
    let bytes = std::fs::read(path).map_err(|e| err(path, e))?;
    // npyz multiplies the header's dims unchecked: every element takes at
    // least a byte, so more elements than the file has bytes is refused first.
    if let Some(dims) = declared_shape(&bytes) {
        if ge_ir::budget::bytes_of(dims.iter().copied(), 1).is_none_or(|n| n > size) {
            return Err(err(
                path,
                format!(
                    "the header declares shape {dims:?}, more data than the file's {size} bytes"
                ),
            ));
        }
    }
    let npy = npyz::NpyFile::new(&bytes[..])
        .map_err(|e| err(path, format!("not a valid .npy file ({e})")))?;
    if npy.order() == npyz::Order::Fortran {
        return Err(err(
            path,
            "Fortran-order arrays are not supported; save with np.ascontiguousarray",
        ));
    }
    let (code, shape) = checked_layout(path, &npy, size)?;
    decode(npy, &code, shape).map_err(|e| err(path, e))
}

/// The numpy type code (`f4`, `i8`, …) and shape of a parsed `.npy`, once its
/// elements are known to be in the file's `size` bytes and the tensor to fit
/// the memory budget.
fn checked_layout(
    path: &str,
    npy: &npyz::NpyFile<&[u8]>,
    size: u64,
) -> Result<(String, Vec<usize>), String> {
    let ts = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => return Err(err(path, format!("unsupported numpy dtype {other:?}"))),
    };
    let code = ts.trim_start_matches(['<', '>', '|', '=']);
    let item: u64 = code.get(1..).and_then(|n| n.parse().ok()).unwrap_or(1);
    let dims = npy.shape().to_vec();
    let data = ge_ir::budget::bytes_of(dims.iter().copied(), item);
    if data.is_none_or(|n| n > size) {
        return Err(err(
            path,
            format!(
                "the header declares shape {dims:?} of '{ts}', more data than the file's {size} bytes"
            ),
        ));
    }
    ge_ir::budget::check(
        ge_ir::budget::bytes_of(dims.iter().copied(), 8),
        &format_args!("input '{path}' of shape {dims:?}"),
    )?;
    let shape: Vec<usize> = dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| err(path, "a dim is too large")))
        .collect::<Result<_, _>>()?;
    Ok((code.to_string(), shape))
}

/// The elements of a `.npy` of numpy type `code`, as a tensor of `shape`.
fn decode(npy: npyz::NpyFile<&[u8]>, code: &str, shape: Vec<usize>) -> Result<Tensor, String> {
    /// The elements read as `T` and converted by `f`.
    fn read<T: npyz::Deserialize, U>(
        npy: npyz::NpyFile<&[u8]>,
        f: impl Fn(T) -> U,
    ) -> Result<Vec<U>, String> {
        let v = npy.into_vec::<T>().map_err(|e| e.to_string())?;
        Ok(v.into_iter().map(f).collect())
    }
    Ok(match code {
        "f8" => Tensor::from_f64(shape, DType::F64, read(npy, |x: f64| x)?),
        "f4" => Tensor::from_f64(shape, DType::F32, read::<f32, _>(npy, f64::from)?),
        "f2" => Tensor::from_f64(shape, DType::F16, read(npy, |x: half::f16| x.to_f64())?),
        "i8" => Tensor::from_i64(shape, DType::I64, read(npy, |x: i64| x)?),
        "i4" => Tensor::from_i64(shape, DType::I32, read::<i32, _>(npy, i64::from)?),
        "i2" => Tensor::from_i64(shape, DType::I16, read::<i16, _>(npy, i64::from)?),
        "i1" => Tensor::from_i64(shape, DType::I8, read::<i8, _>(npy, i64::from)?),
        "u1" => Tensor::from_i64(shape, DType::U8, read::<u8, _>(npy, i64::from)?),
        "u2" => Tensor::from_i64(shape, DType::U16, read::<u16, _>(npy, i64::from)?),
        "u4" => Tensor::from_i64(shape, DType::U32, read::<u32, _>(npy, i64::from)?),
        "u8" => Tensor::from_i64(shape, DType::U64, read(npy, |x: u64| x as i64)?),
        "b1" => Tensor::from_i64(shape, DType::I1, read::<bool, _>(npy, i64::from)?),
        other => return Err(format!("unsupported numpy dtype '{other}'")),
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

/// Write a tensor as `.npy` (bf16 and the 8- and 4-bit floats are written as
/// f32, the 4- and 2-bit integers as int8/uint8: numpy has none of them) through
/// [`ge_ir::output`].
pub fn write_npy(path: &str, t: &Tensor) -> Result<(), String> {
    let shape: Vec<u64> = t.shape.iter().map(|&d| d as u64).collect();
    let bytes = match t.dtype {
        DType::F64 => write_vec(&shape, t.to_f64()),
        DType::F32
        | DType::BF16
        | DType::F8E4M3FN
        | DType::F8E4M3FNUZ
        | DType::F8E5M2
        | DType::F8E5M2FNUZ
        | DType::F8E8M0FNU
        | DType::F4E2M1FN => write_vec(&shape, t.to_f64().into_iter().map(|x| x as f32).collect()),
        DType::F16 => write_vec(
            &shape,
            t.to_f64().into_iter().map(half::f16::from_f64).collect(),
        ),
        DType::I64 | DType::Index => write_vec(&shape, t.to_i64()),
        DType::I32 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as i32).collect()),
        DType::I16 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as i16).collect()),
        DType::I8 | DType::I4 | DType::I2 => {
            write_vec(&shape, t.to_i64().into_iter().map(|x| x as i8).collect())
        }
        DType::U8 | DType::U4 | DType::U2 => {
            write_vec(&shape, t.to_i64().into_iter().map(|x| x as u8).collect())
        }
        DType::U16 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as u16).collect()),
        DType::U32 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as u32).collect()),
        DType::U64 => write_vec(&shape, t.to_i64().into_iter().map(|x| x as u64).collect()),
        DType::I1 => write_vec(&shape, t.to_i64().into_iter().map(|x| x != 0).collect()),
    }
    .map_err(|e| err(path, e))?;
    ge_ir::output::write(path, &bytes).map_err(|e| err(path, e))
}
