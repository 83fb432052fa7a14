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
    /// Exactly `len` zeroed bytes, in this buffer's memory when it holds
    /// them (no allocation), else in a new buffer.
    pub fn zero_to(&mut self, len: usize) {
        if len.div_ceil(ALIGN) > self.lines.len() {
            *self = AlignedBuf::zeroed(len);
            return;
        }
        self.len = len;
        self.as_mut_slice().fill(0);
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

/// Alignment a lent buffer needs to be read in place ([`HostTensor::borrowed`]):
/// the largest element any dtype has (kernels read typed elements, and an
/// input arena may be read as any of the dtypes of the values placed in it).
pub const BORROW_ALIGN: usize = 8;

/// Where a host tensor's bytes are: its own buffer, or memory the caller
/// lends for the tensor's life — read only ([`HostTensor::borrowed`]:
/// anything that would write copies it into `own` first), or writable
/// ([`HostTensor::lend_mut`]: a run writes its output there, and `own` is
/// kept for when the loan ends).
struct Storage {
    own: AlignedBuf,
    lent: Option<(*const u8, usize)>,
    /// The loan may be written (only through `&mut`, see `write_ptr`).
    writable: bool,
}

// SAFETY: lent memory is only ever read through `&self`, and written only
// through `&mut self` when the loan is writable; `HostTensor::borrowed`'s
// and `HostTensor::lend_mut`'s contracts keep it valid, and untouched by
// anyone else, for as long as the loan lasts, on any thread; `own` is an
// ordinary `Vec`.
unsafe impl Send for Storage {}
// SAFETY: as above — shared access only reads.
unsafe impl Sync for Storage {}

impl Storage {
    fn own(buf: AlignedBuf) -> Storage {
        Storage {
            own: buf,
            lent: None,
            writable: false,
        }
    }
    fn bytes(&self) -> &[u8] {
        match self.lent {
            // SAFETY: `borrowed`'s (or `lend_mut`'s) contract: `len`
            // readable bytes at `ptr` (non-null and aligned, checked
            // there), written by no one else while the loan lasts.
            Some((ptr, len)) => unsafe { std::slice::from_raw_parts(ptr, len) },
            None => self.own.as_slice(),
        }
    }
    /// The tensor's own buffer, holding a copy of lent bytes (copy on write).
    fn owned(&mut self) -> &mut AlignedBuf {
        if self.lent.is_some() {
            self.own = AlignedBuf::from_bytes(self.bytes());
            self.lent = None;
            self.writable = false;
        }
        &mut self.own
    }
    /// Where a write goes, and how many bytes: a writable loan's memory,
    /// else the tensor's own buffer (after copying a read-only loan).
    fn write_ptr(&mut self) -> (*mut u8, usize) {
        match self.lent {
            Some((ptr, len)) if self.writable => (ptr as *mut u8, len),
            _ => {
                let own = self.owned();
                (own.as_mut_ptr(), own.len())
            }
        }
    }
    /// End any loan, keeping the tensor's own buffer (its memory, not its
    /// bytes' length: the caller sets the shape to match).
    fn end_loan(&mut self) {
        self.lent = None;
        self.writable = false;
    }
}

/// A tensor in host memory: dtype, shape and little-endian element bytes,
/// 64-byte aligned when ge allocated them, or the caller's own memory, read
/// in place ([`HostTensor::borrowed`]). Model inputs are read from these
/// buffers in place (the plan's input arenas are bound to them without a
/// copy) and outputs are written straight into them.
pub struct HostTensor {
    pub dtype: DType,
    pub shape: Vec<usize>,
    buf: Storage,
}

/// A clone owns its bytes (a clone of a borrowed tensor copies them, so it
/// cannot outlive the loan).
impl Clone for HostTensor {
    fn clone(&self) -> HostTensor {
        HostTensor {
            dtype: self.dtype,
            shape: self.shape.clone(),
            buf: Storage::own(AlignedBuf::from_bytes(self.bytes())),
        }
    }
}

impl std::fmt::Debug for HostTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostTensor")
            .field("dtype", &self.dtype)
            .field("shape", &self.shape)
            .field("bytes", &self.bytes().len())
            .field("borrowed", &self.is_borrowed())
            .finish()
    }
}

impl PartialEq for HostTensor {
    fn eq(&self, o: &HostTensor) -> bool {
        self.dtype == o.dtype && self.shape == o.shape && self.bytes() == o.bytes()
    }
}

/// The byte size of `shape` × `dtype`, or why it does not match `len`.
fn check_len(dtype: DType, shape: &[usize], len: usize) -> Result<(), String> {
    let want = shape
        .iter()
        .try_fold(dtype.byte_size(), |n, &d| n.checked_mul(d));
    match want {
        Some(w) if w == len => Ok(()),
        Some(w) => Err(format!(
            "{len} bytes do not hold a {shape:?} {dtype} tensor ({w} bytes)"
        )),
        None => Err(format!(
            "a {shape:?} {dtype} tensor is too large to address"
        )),
    }
}

impl HostTensor {
    /// Zeros of `dtype` and `shape`.
    pub fn zeros(dtype: DType, shape: &[usize]) -> HostTensor {
        let n: usize = shape.iter().product();
        HostTensor {
            dtype,
            shape: shape.to_vec(),
            buf: Storage::own(AlignedBuf::zeroed(n * dtype.byte_size())),
        }
    }
    /// Make this tensor [`HostTensor::zeros`] of `dtype` and `shape` in
    /// the memory it has when that holds them (no allocation: what
    /// [`Session::run_reusing`](crate::Session::run_reusing) does with the
    /// tensors of an earlier run). A writable loan ([`HostTensor::lend_mut`])
    /// of this very dtype and shape is kept (the caller's memory is zeroed);
    /// any other borrowed tensor gets memory of its own.
    pub fn reset_zeros(&mut self, dtype: DType, shape: &[usize]) {
        let n: usize = shape.iter().product();
        let lent_len = self.buf.lent.map_or(0, |(_, len)| len);
        // (`dtype` and `shape` are public fields: the loan's length is
        // checked too.)
        if self.is_lent_mut()
            && self.dtype == dtype
            && same_dims(&self.shape, shape)
            && Some(lent_len) == n.checked_mul(dtype.byte_size())
        {
            // A writable loan of exactly this dtype and shape: zero the
            // caller's memory, where the run then writes its output.
            let (ptr, len) = self.buf.write_ptr();
            // SAFETY: `lend_mut`'s contract: `len` writable bytes at `ptr`,
            // ours alone while the loan lasts (`&mut self`).
            unsafe { std::ptr::write_bytes(ptr, 0, len) };
            return;
        }
        self.dtype = dtype;
        self.shape.clear();
        self.shape.extend_from_slice(shape);
        self.buf.end_loan();
        self.buf.own.zero_to(n * dtype.byte_size());
    }
    /// From raw little-endian element bytes (checked against the shape).
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<HostTensor, String> {
        check_len(dtype, shape, bytes.len())?;
        Ok(HostTensor {
            dtype,
            shape: shape.to_vec(),
            buf: Storage::own(AlignedBuf::from_bytes(bytes)),
        })
    }
    /// A tensor over `len` bytes of the caller's memory at `ptr`, read in
    /// place — no copy (the Python package lends a numpy array's buffer,
    /// the C API an input descriptor's data, for one run). Checked: the
    /// length against `dtype` and `shape`, and `ptr` non-null and aligned to
    /// [`BORROW_ALIGN`] (an `Err` then: copy with [`HostTensor::from_bytes`]).
    /// Clones, and `bytes_mut`, copy the bytes into memory of the tensor's own.
    ///
    /// # Safety
    /// `ptr` is valid for reads of `len` bytes, and nothing writes or frees
    /// that memory, for as long as the returned tensor lives.
    pub unsafe fn borrowed(
        dtype: DType,
        shape: &[usize],
        ptr: *const u8,
        len: usize,
    ) -> Result<HostTensor, String> {
        // SAFETY: the caller's contract is this function's.
        unsafe { HostTensor::borrowed_shape(dtype, shape.to_vec(), ptr, len) }
    }
    /// [`HostTensor::borrowed`] with a shape vector of the caller's (a
    /// caller lending arrays call after call reuses the vector of the last
    /// call's tensor: no allocation).
    ///
    /// # Safety
    /// As [`HostTensor::borrowed`].
    pub unsafe fn borrowed_shape(
        dtype: DType,
        shape: Vec<usize>,
        ptr: *const u8,
        len: usize,
    ) -> Result<HostTensor, String> {
        check_len(dtype, &shape, len)?;
        if ptr.is_null() || !(ptr as usize).is_multiple_of(BORROW_ALIGN) {
            return Err(format!(
                "the buffer at {ptr:p} is not aligned to {BORROW_ALIGN} bytes"
            ));
        }
        Ok(HostTensor {
            dtype,
            shape,
            buf: Storage {
                own: AlignedBuf::zeroed(0),
                lent: Some((ptr, len)),
                writable: false,
            },
        })
    }
    /// Lend this tensor `len` bytes of the caller's memory at `ptr` to be
    /// written in place as a tensor of `dtype` and `shape` — what
    /// [`Session::run_reusing`](crate::Session::run_reusing) writes an
    /// output into when the run's output has that dtype and shape (the Python
    /// package lends the numpy array it returns). The tensor's own memory is
    /// kept for when the loan ends ([`HostTensor::end_loan`], or a run whose
    /// output does not fit it). Checked as [`HostTensor::borrowed`]: the
    /// length against `dtype` and `shape` (not empty), `ptr` non-null and
    /// aligned to [`BORROW_ALIGN`]; on an `Err` the tensor is unchanged.
    ///
    /// # Safety
    /// `ptr` is valid for reads and writes of `len` bytes, and nothing else
    /// reads, writes or frees that memory, for as long as the loan lasts:
    /// until [`HostTensor::end_loan`], the tensor is dropped or
    /// [`HostTensor::is_lent_mut`] turns false (a run replaced the loan).
    pub unsafe fn lend_mut(
        &mut self,
        dtype: DType,
        shape: &[usize],
        ptr: *mut u8,
        len: usize,
    ) -> Result<(), String> {
        check_len(dtype, shape, len)?;
        if len == 0 || ptr.is_null() || !(ptr as usize).is_multiple_of(BORROW_ALIGN) {
            return Err(format!(
                "{len} bytes at {ptr:p}: not a non-empty buffer aligned to {BORROW_ALIGN} bytes"
            ));
        }
        self.dtype = dtype;
        self.shape.clear();
        self.shape.extend_from_slice(shape);
        self.buf.lent = Some((ptr as *const u8, len));
        self.buf.writable = true;
        Ok(())
    }
    /// Whether the tensor is a writable loan of the caller's memory
    /// ([`HostTensor::lend_mut`]) — after a run: whether the run wrote its
    /// output there.
    pub fn is_lent_mut(&self) -> bool {
        self.buf.lent.is_some() && self.buf.writable
    }
    /// End a loan (read-only or writable): the tensor lets go of the
    /// caller's memory and becomes an empty tensor (shape `[0]`) in its own
    /// memory, which a later run reuses. No effect on a tensor of its own.
    pub fn end_loan(&mut self) {
        if self.buf.lent.is_none() {
            return;
        }
        self.buf.end_loan();
        self.buf.own.len = 0;
        self.shape.clear();
        self.shape.push(0);
    }
    /// Whether the bytes are the caller's memory ([`HostTensor::borrowed`]).
    pub fn is_borrowed(&self) -> bool {
        self.buf.lent.is_some()
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
            buf: Storage::own(AlignedBuf::from_bytes(&bytes)),
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
        self.buf.bytes()
    }
    /// The bytes, writable (a read-only borrowed tensor copies them first;
    /// a writable loan is written in place).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let (ptr, len) = self.buf.write_ptr();
        // SAFETY: `write_ptr` gives `len` writable bytes: the tensor's own
        // buffer, or a writable loan's memory (`lend_mut`'s contract), ours
        // alone for the life of `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }
    }
    /// The bytes' length agrees with `dtype` and `shape` (both are public
    /// fields a caller may have changed since the tensor was made): the
    /// executor checks every input before binding its memory.
    pub fn check_len(&self) -> Result<(), String> {
        check_len(self.dtype, &self.shape, self.bytes().len())
    }
    /// Elements converted to f32.
    pub fn to_f32_vec(&self) -> Vec<f32> {
        let mut out = vec![0f32; self.numel()];
        load_f32(self.dtype, self.bytes().as_ptr(), 0, &mut out);
        out
    }
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.bytes().as_ptr()
    }
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.buf.write_ptr().0
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
            | DType::F8E8M0FNU
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
            | DType::F8E8M0FNU
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

/// `a == b` for shapes and other short slices compared on every run, as a
/// loop: the slices' `==` calls `memcmp`, which for a few dims costs more
/// than the compare, and for an empty slice (a scalar's shape, a static
/// model's plan key) gets a dangling pointer that glibc's AVX-512 `memcmp`
/// reads with an all-false mask — a fault-suppressed load from an unmapped
/// page, a microcode assist of about 100 ns on the AVX-512 host of
/// docs/benchmarks.md (5 % of a 1.8 µs model's run).
pub fn same_dims<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_fits_the_borrow_alignment() {
        for d in DType::ALL {
            assert!(d.byte_size() <= BORROW_ALIGN, "{d}");
            assert!(BORROW_ALIGN.is_multiple_of(d.byte_size()), "{d}");
        }
    }

    #[test]
    fn a_borrowed_tensor_reads_the_callers_memory_and_copies_on_write() {
        let mem: Vec<f64> = vec![1.0, 2.0, 3.0];
        let p = mem.as_ptr() as *const u8;
        // SAFETY: `mem` outlives `t` and is not written meanwhile.
        let mut t = unsafe { HostTensor::borrowed(DType::F64, &[3], p, 24) }.expect("borrow");
        assert!(t.is_borrowed());
        assert_eq!(t.as_ptr(), p, "read in place");
        assert_eq!(t.bytes().len(), 24);
        let c = t.clone();
        assert!(
            !c.is_borrowed() && c.as_ptr() != p && c == t,
            "a clone owns a copy"
        );
        t.bytes_mut()[0] = 0xff;
        assert!(!t.is_borrowed() && t.as_ptr() != p, "written: copied first");
        assert_eq!(mem, [1.0, 2.0, 3.0], "the lent memory is never written");
    }

    #[test]
    fn a_borrow_keeps_the_callers_shape_vector() {
        let mem = [0u64; 3]; // 24 bytes, 8-byte aligned
        let p = mem.as_ptr() as *const u8;
        let mut shape = Vec::with_capacity(4);
        shape.extend_from_slice(&[2, 3]);
        let at = shape.as_ptr();
        // SAFETY: `mem` outlives `t` and is not written meanwhile.
        let t = unsafe { HostTensor::borrowed_shape(DType::F32, shape, p, 24) }.expect("borrow");
        assert_eq!(
            (t.shape.as_ptr(), t.shape.capacity()),
            (at, 4),
            "not copied"
        );
        // Checked as `borrowed` checks: 2x3 f32 is 24 bytes.
        // SAFETY: as above.
        let e = unsafe { HostTensor::borrowed_shape(DType::F32, vec![2, 3], p, 20) };
        assert!(e.is_err());
    }

    #[test]
    fn a_borrow_is_checked() {
        let mem = [0u64; 4];
        let p = mem.as_ptr() as *const u8;
        // SAFETY (all three): `mem` outlives the call and the (failed) tensors.
        let e = unsafe { HostTensor::borrowed(DType::F32, &[3], p, 16) }.expect_err("length");
        assert!(e.contains("do not hold a [3] f32"), "{e}");
        let e = unsafe { HostTensor::borrowed(DType::U8, &[4], p.wrapping_add(1), 4) }
            .expect_err("misaligned");
        assert!(e.contains("not aligned to 8"), "{e}");
        let e = unsafe { HostTensor::borrowed(DType::U8, &[0], std::ptr::null(), 0) }
            .expect_err("null");
        assert!(e.contains("not aligned"), "{e}");
    }

    #[test]
    fn same_dims_is_slice_equality() {
        let cases: [(&[usize], &[usize]); 6] = [
            (&[], &[]),
            (&[], &[1]),
            (&[2, 3], &[2, 3]),
            (&[2, 3], &[3, 2]),
            (&[2, 3], &[2, 3, 1]),
            (&[7], &[7]),
        ];
        for (a, b) in cases {
            assert_eq!(same_dims(a, b), a == b, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn a_changed_shape_is_caught() {
        let mut t = HostTensor::zeros(DType::F32, &[2, 2]);
        assert!(t.check_len().is_ok());
        t.shape = vec![4, 4];
        let e = t.check_len().expect_err("grown shape");
        assert!(e.contains("16 bytes do not hold a [4, 4] f32"), "{e}");
    }
}
