//! Host memory: 64-byte aligned byte buffers, the user-facing [`HostTensor`],
//! and element conversion between storage dtypes and the f32 / i64 compute
//! types of the kernels.

use ge_ir::tensor::{Data, Tensor};
use ge_ir::DType;

/// Alignment of every buffer the runtime allocates (arenas, scratch, tensors).
pub const ALIGN: usize = 64;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; ALIGN]);

/// A zero-initialised, 64-byte aligned byte buffer.
pub struct AlignedBuf {
    lines: Vec<Line>,
    len: usize,
}

impl AlignedBuf {
    pub fn zeroed(len: usize) -> AlignedBuf {
        AlignedBuf {
            lines: vec![Line([0; ALIGN]); len.div_ceil(ALIGN)],
            len,
        }
    }
    pub fn from_bytes(b: &[u8]) -> AlignedBuf {
        let mut a = AlignedBuf::zeroed(b.len());
        a.as_mut_slice().copy_from_slice(b);
        a
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Grow (never shrink) to at least `len` bytes; contents are not kept.
    pub fn ensure(&mut self, len: usize) {
        if len > self.len {
            *self = AlignedBuf::zeroed(len);
        }
    }
    pub fn as_ptr(&self) -> *const u8 {
        self.lines.as_ptr() as *const u8
    }
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.lines.as_mut_ptr() as *mut u8
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `lines` holds at least `len` initialised bytes.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), self.len) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr(), self.len) }
    }
}

impl Clone for AlignedBuf {
    fn clone(&self) -> AlignedBuf {
        AlignedBuf {
            lines: self.lines.clone(),
            len: self.len,
        }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.len)
    }
}

/// A tensor in host memory: dtype, shape and little-endian element bytes,
/// 64-byte aligned. Model inputs are read from these buffers in place (the
/// plan's input arenas are bound to them without a copy) and outputs are
/// written straight into them.
#[derive(Clone, Debug)]
pub struct HostTensor {
    pub dtype: DType,
    pub shape: Vec<usize>,
    buf: AlignedBuf,
}

impl PartialEq for HostTensor {
    fn eq(&self, o: &HostTensor) -> bool {
        self.dtype == o.dtype && self.shape == o.shape && self.bytes() == o.bytes()
    }
}

impl HostTensor {
    /// Zeros of `dtype` and `shape`.
    pub fn zeros(dtype: DType, shape: &[usize]) -> HostTensor {
        let n: usize = shape.iter().product();
        HostTensor {
            dtype,
            shape: shape.to_vec(),
            buf: AlignedBuf::zeroed(n * dtype.byte_size()),
        }
    }
    /// From raw little-endian element bytes (checked against the shape).
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<HostTensor, String> {
        let n: usize = shape.iter().product();
        if bytes.len() != n * dtype.byte_size() {
            return Err(format!(
                "{} bytes do not hold a {shape:?} {dtype} tensor ({} bytes)",
                bytes.len(),
                n * dtype.byte_size()
            ));
        }
        Ok(HostTensor {
            dtype,
            shape: shape.to_vec(),
            buf: AlignedBuf::from_bytes(bytes),
        })
    }
    /// An f32 tensor.
    pub fn from_f32(shape: &[usize], v: &[f32]) -> Result<HostTensor, String> {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        HostTensor::from_bytes(DType::F32, shape, &bytes)
    }
    /// From a reference-interpreter tensor.
    pub fn from_tensor(t: &Tensor) -> HostTensor {
        let bytes = ge_dialects::data::tensor_to_bytes(t);
        HostTensor {
            dtype: t.dtype,
            shape: t.shape.clone(),
            buf: AlignedBuf::from_bytes(&bytes),
        }
    }
    /// As a reference-interpreter tensor.
    pub fn to_tensor(&self) -> Result<Tensor, String> {
        ge_dialects::data::tensor_from_bytes(self.bytes(), self.shape.clone(), self.dtype)
    }
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn bytes(&self) -> &[u8] {
        self.buf.as_slice()
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice()
    }
    /// Elements converted to f32.
    pub fn to_f32_vec(&self) -> Vec<f32> {
        let mut out = vec![0f32; self.numel()];
        load_f32(self.dtype, self.bytes().as_ptr(), 0, &mut out);
        out
    }
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.buf.as_ptr()
    }
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.buf.as_mut_ptr()
    }
}

impl From<&Tensor> for HostTensor {
    fn from(t: &Tensor) -> HostTensor {
        HostTensor::from_tensor(t)
    }
}

/// Element class a kernel computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// f32 (also f16 and bf16, rounded on store).
    F,
    /// i64 (all integer types and booleans).
    I,
    /// f64 (f64 only: its kernels compute at its precision).
    D,
}

pub fn class_of(d: DType) -> Option<Class> {
    match d {
        DType::F32 | DType::F16 | DType::BF16 => Some(Class::F),
        d if d.is_small_float() => Some(Class::F),
        DType::F64 => Some(Class::D),
        _ => Some(Class::I),
    }
}

/// Read `out.len()` elements of `dtype` starting at element `start` of `p` as f32.
///
/// # Safety contract
/// `p` must be valid for reading elements `start .. start + out.len()`.
pub(crate) fn load_f32(dtype: DType, p: *const u8, start: usize, out: &mut [f32]) {
    let n = out.len();
    // SAFETY: callers pass pointers valid for the range (see the contract).
    unsafe {
        match dtype {
            DType::F32 => {
                std::ptr::copy_nonoverlapping((p as *const f32).add(start), out.as_mut_ptr(), n)
            }
            DType::F16 => {
                let s = (p as *const u16).add(start);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = half::f16::from_bits(s.add(i).read_unaligned()).to_f32();
                }
            }
            DType::BF16 => {
                let s = (p as *const u16).add(start);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = f32::from_bits((s.add(i).read_unaligned() as u32) << 16);
                }
            }
            DType::F64 => {
                let s = (p as *const f64).add(start);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = s.add(i).read_unaligned() as f32;
                }
            }
            d if d.is_small_float() => {
                let s = p.add(start);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = d.float_from_bits(s.add(i).read() as u64) as f32;
                }
            }
            _ => {
                let mut tmp = vec![0i64; n];
                load_i64(dtype, p, start, &mut tmp);
                for (o, v) in out.iter_mut().zip(tmp) {
                    *o = v as f32;
                }
            }
        }
    }
}

/// Write `v` as elements of `dtype` starting at element `start` of `p`.
pub(crate) fn store_f32(dtype: DType, p: *mut u8, start: usize, v: &[f32]) {
    // SAFETY: callers pass pointers valid for the range.
    unsafe {
        match dtype {
            DType::F32 => {
                std::ptr::copy_nonoverlapping(v.as_ptr(), (p as *mut f32).add(start), v.len())
            }
            DType::F16 => {
                let d = (p as *mut u16).add(start);
                for (i, x) in v.iter().enumerate() {
                    d.add(i).write_unaligned(half::f16::from_f32(*x).to_bits());
                }
            }
            DType::BF16 => {
                let d = (p as *mut u16).add(start);
                for (i, x) in v.iter().enumerate() {
                    d.add(i).write_unaligned(half::bf16::from_f32(*x).to_bits());
                }
            }
            DType::F64 => {
                let d = (p as *mut f64).add(start);
                for (i, x) in v.iter().enumerate() {
                    d.add(i).write_unaligned(*x as f64);
                }
            }
            dt if dt.is_small_float() => {
                let d = p.add(start);
                for (i, x) in v.iter().enumerate() {
                    d.add(i).write(dt.float_bits(*x as f64) as u8);
                }
            }
            _ => {
                let tmp: Vec<i64> = v.iter().map(|&x| f2i(dtype, x as f64)).collect();
                store_i64(dtype, p, start, &tmp);
            }
        }
    }
}

/// Read `out.len()` elements of `dtype` starting at element `start` of `p`
/// as f64 (exact for every dtype but 64-bit integers beyond 2^53).
///
/// # Safety contract
/// `p` must be valid for reading elements `start .. start + out.len()`.
pub(crate) fn load_f64(dtype: DType, p: *const u8, start: usize, out: &mut [f64]) {
    match class_of(dtype) {
        Some(Class::D) => {
            // SAFETY: callers pass pointers valid for the range (see the contract).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (p as *const f64).add(start),
                    out.as_mut_ptr(),
                    out.len(),
                )
            }
        }
        Some(Class::I) => {
            let mut tmp = vec![0i64; out.len()];
            load_i64(dtype, p, start, &mut tmp);
            out.iter_mut().zip(tmp).for_each(|(o, v)| *o = v as f64);
        }
        _ => {
            let mut tmp = vec![0f32; out.len()];
            load_f32(dtype, p, start, &mut tmp);
            out.iter_mut().zip(tmp).for_each(|(o, v)| *o = v as f64);
        }
    }
}

/// `x` rounded once to what float dtype `dtype` holds, as f32 (f16, bf16
/// and the small floats straight from f64: no double rounding through f32).
pub fn f64_to_float(dtype: DType, x: f64) -> f32 {
    ge_ir::tensor::round_f(dtype, x) as f32
}

/// Write f64 values as elements of `dtype` (floats rounded once, integers
/// as numpy's `astype`).
pub(crate) fn store_f64(dtype: DType, p: *mut u8, start: usize, v: &[f64]) {
    match class_of(dtype) {
        Some(Class::D) => {
            // SAFETY: callers pass pointers valid for the range.
            unsafe {
                std::ptr::copy_nonoverlapping(v.as_ptr(), (p as *mut f64).add(start), v.len())
            }
        }
        Some(Class::I) => {
            let tmp: Vec<i64> = v.iter().map(|&x| f2i(dtype, x)).collect();
            store_i64(dtype, p, start, &tmp);
        }
        _ => {
            let tmp: Vec<f32> = v.iter().map(|&x| f64_to_float(dtype, x)).collect();
            store_f32(dtype, p, start, &tmp);
        }
    }
}

/// numpy `astype` from float to an integer dtype (truncation, NaN → 0, wrap).
pub fn f2i(dtype: DType, x: f64) -> i64 {
    if dtype == DType::I1 {
        return (x != 0.0) as i64;
    }
    ge_ir::tensor::wrap_i(dtype, ge_ir::tensor::float_to_int(dtype, x))
}

/// Read integer elements as i64.
pub(crate) fn load_i64(dtype: DType, p: *const u8, start: usize, out: &mut [i64]) {
    macro_rules! rd {
        ($t:ty) => {{
            let s = (p as *const $t).add(start);
            for (i, o) in out.iter_mut().enumerate() {
                *o = s.add(i).read_unaligned() as i64;
            }
        }};
    }
    // SAFETY: callers pass pointers valid for the range.
    unsafe {
        match dtype {
            DType::I64 | DType::Index => rd!(i64),
            DType::U64 => rd!(u64),
            DType::I32 => rd!(i32),
            DType::U32 => rd!(u32),
            DType::I16 => rd!(i16),
            DType::U16 => rd!(u16),
            DType::I8 => rd!(i8),
            DType::U8 => rd!(u8),
            DType::I1 => {
                let s = p.add(start);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = (s.add(i).read() != 0) as i64;
                }
            }
            DType::I4 | DType::U4 | DType::I2 | DType::U2 => {
                let s = p.add(start);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = ge_ir::tensor::wrap_i(dtype, s.add(i).read() as i64);
                }
            }
            DType::F32
            | DType::F16
            | DType::BF16
            | DType::F64
            | DType::F8E4M3FN
            | DType::F8E4M3FNUZ
            | DType::F8E5M2
            | DType::F8E5M2FNUZ
            | DType::F4E2M1FN => {
                let mut tmp = vec![0f32; out.len()];
                load_f32(dtype, p, start, &mut tmp);
                for (o, v) in out.iter_mut().zip(tmp) {
                    *o = v as i64;
                }
            }
        }
    }
}

/// Write i64 values as integer elements (wrapping to the width).
pub(crate) fn store_i64(dtype: DType, p: *mut u8, start: usize, v: &[i64]) {
    macro_rules! wr {
        ($t:ty) => {{
            let d = (p as *mut $t).add(start);
            for (i, x) in v.iter().enumerate() {
                d.add(i).write_unaligned(*x as $t);
            }
        }};
    }
    // SAFETY: callers pass pointers valid for the range.
    unsafe {
        match dtype {
            DType::I64 | DType::Index => wr!(i64),
            DType::U64 => wr!(u64),
            DType::I32 => wr!(i32),
            DType::U32 => wr!(u32),
            DType::I16 => wr!(i16),
            DType::U16 => wr!(u16),
            DType::I8 => wr!(i8),
            DType::U8 => wr!(u8),
            DType::I1 => {
                let d = p.add(start);
                for (i, x) in v.iter().enumerate() {
                    d.add(i).write((*x != 0) as u8);
                }
            }
            DType::I4 | DType::U4 | DType::I2 | DType::U2 => {
                let d = p.add(start);
                for (i, x) in v.iter().enumerate() {
                    d.add(i).write(ge_ir::tensor::wrap_i(dtype, *x) as u8);
                }
            }
            DType::F32
            | DType::F16
            | DType::BF16
            | DType::F64
            | DType::F8E4M3FN
            | DType::F8E4M3FNUZ
            | DType::F8E5M2
            | DType::F8E5M2FNUZ
            | DType::F4E2M1FN => {
                let tmp: Vec<f32> = v.iter().map(|&x| x as f32).collect();
                store_f32(dtype, p, start, &tmp);
            }
        }
    }
}

/// Round f32 values to what `dtype` holds (f16/bf16 and the 8- and 4-bit
/// floats), as the reference does after every op.
pub fn round_to(dtype: DType, v: &mut [f32]) {
    match dtype {
        d if d.is_small_float() => v
            .iter_mut()
            .for_each(|x| *x = d.float_from_bits(d.float_bits(*x as f64)) as f32),
        DType::F16 => v
            .iter_mut()
            .for_each(|x| *x = half::f16::from_f32(*x).to_f32()),
        DType::BF16 => v
            .iter_mut()
            .for_each(|x| *x = half::bf16::from_f32(*x).to_f32()),
        _ => {}
    }
}

/// Wrap i64 values to an integer dtype's width.
pub fn wrap_to(dtype: DType, v: &mut [i64]) {
    if !matches!(dtype, DType::I64 | DType::Index | DType::U64) {
        v.iter_mut()
            .for_each(|x| *x = ge_ir::tensor::wrap_i(dtype, *x));
    }
}

/// The reference tensor's data as bytes (helper for tests).
pub fn tensor_bytes(t: &Tensor) -> Vec<u8> {
    let _ = matches!(t.data, Data::F(_));
    ge_dialects::data::tensor_to_bytes(t)
}
