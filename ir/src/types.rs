//! Types: element dtypes, tensors (with symbolic dims and a format encoding),
//! scalars, functions and opaque dialect types. Interned: `Type` is `Copy` and
//! compares in O(1).

use crate::attributes::Attribute;
use crate::dim::Dim;
use crate::ident::Ident;
use internment::Intern;
use std::fmt;

/// Element types. Spelled as in MLIR (`ui8` for unsigned), `u8` accepted on input.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum DType {
    F64,
    F32,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U64,
    U32,
    U16,
    U8,
    /// `i1`: booleans.
    I1,
    Index,
    /// The small storage types (ONNX FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2,
    /// FLOAT8E5M2FNUZ, FLOAT8E8M0, FLOAT4E2M1, INT4, UINT4, INT2, UINT2): values convert
    /// as [`crate::minifloat`] says; each element is stored in a byte of its
    /// own (ONNX packs the 4- and 2-bit ones; its importer unpacks them).
    F8E4M3FN,
    F8E4M3FNUZ,
    F8E5M2,
    F8E5M2FNUZ,
    /// `f8E8M0FNU`: a power of two 2^(e - 127) (no sign, no zero; 0xFF is NaN),
    /// the shared scale of the OCP MX formats.
    F8E8M0FNU,
    F4E2M1FN,
    I4,
    U4,
    I2,
    U2,
}

impl DType {
    pub const ALL: [DType; 24] = [
        DType::F64,
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U64,
        DType::U32,
        DType::U16,
        DType::U8,
        DType::I1,
        DType::Index,
        DType::F8E4M3FN,
        DType::F8E4M3FNUZ,
        DType::F8E5M2,
        DType::F8E5M2FNUZ,
        DType::F8E8M0FNU,
        DType::F4E2M1FN,
        DType::I4,
        DType::U4,
        DType::I2,
        DType::U2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DType::F64 => "f64",
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I64 => "i64",
            DType::I32 => "i32",
            DType::I16 => "i16",
            DType::I8 => "i8",
            DType::U64 => "ui64",
            DType::U32 => "ui32",
            DType::U16 => "ui16",
            DType::U8 => "ui8",
            DType::I1 => "i1",
            DType::Index => "index",
            DType::F8E4M3FN => "f8E4M3FN",
            DType::F8E4M3FNUZ => "f8E4M3FNUZ",
            DType::F8E5M2 => "f8E5M2",
            DType::F8E5M2FNUZ => "f8E5M2FNUZ",
            DType::F8E8M0FNU => "f8E8M0FNU",
            DType::F4E2M1FN => "f4E2M1FN",
            DType::I4 => "i4",
            DType::U4 => "ui4",
            DType::I2 => "i2",
            DType::U2 => "ui2",
        }
    }

    pub fn parse(s: &str) -> Option<DType> {
        DType::ALL
            .iter()
            .copied()
            .find(|d| d.name() == s)
            .or(match s {
                "u8" => Some(DType::U8),
                "u16" => Some(DType::U16),
                "u32" => Some(DType::U32),
                "u64" => Some(DType::U64),
                _ => None,
            })
    }

    /// Storage size of one element in bytes (`i1` is stored as a byte).
    pub fn byte_size(self) -> usize {
        match self {
            DType::F64 | DType::I64 | DType::U64 | DType::Index => 8,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::I8 | DType::U8 | DType::I1 => 1,
            DType::F8E4M3FN
            | DType::F8E4M3FNUZ
            | DType::F8E5M2
            | DType::F8E5M2FNUZ
            | DType::F8E8M0FNU
            | DType::F4E2M1FN
            | DType::I4
            | DType::U4
            | DType::I2
            | DType::U2 => 1,
        }
    }

    pub fn bit_width(self) -> u32 {
        match self {
            DType::I1 => 1,
            DType::I2 | DType::U2 => 2,
            DType::I4 | DType::U4 | DType::F4E2M1FN => 4,
            d => d.byte_size() as u32 * 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F64 | DType::F32 | DType::F16 | DType::BF16) || self.is_small_float()
    }

    /// The 8- and 4-bit floats ([`crate::minifloat`]).
    pub fn is_small_float(self) -> bool {
        matches!(
            self,
            DType::F8E4M3FN
                | DType::F8E4M3FNUZ
                | DType::F8E5M2
                | DType::F8E5M2FNUZ
                | DType::F8E8M0FNU
                | DType::F4E2M1FN
        )
    }

    pub fn is_int(self) -> bool {
        !self.is_float()
    }

    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            DType::I64 | DType::I32 | DType::I16 | DType::I8 | DType::Index | DType::I4 | DType::I2
        )
    }

    pub fn is_unsigned_int(self) -> bool {
        matches!(
            self,
            DType::U64 | DType::U32 | DType::U16 | DType::U8 | DType::U4 | DType::U2
        )
    }

    /// Mantissa and exponent widths of a float type.
    fn float_layout(self) -> (u32, u32) {
        match self {
            DType::F32 => (23, 8),
            DType::F16 => (10, 5),
            DType::BF16 => (7, 8),
            _ => (52, 11),
        }
    }

    /// The bits of `v` in this float type (f64 for non-float types), rounded
    /// to nearest. A NaN keeps its sign and payload bit for bit — a hardware
    /// conversion would quiet a signalling NaN, and IR text must read back
    /// exactly (`0x7F800001 : f32`).
    pub fn float_bits(self, v: f64) -> u64 {
        if let Some(f) = crate::minifloat::MiniFloat::of(self) {
            return f.encode(v);
        }
        if v.is_nan() {
            let (m, e) = self.float_layout();
            let b = v.to_bits();
            let sign = b >> 63;
            let mut payload = (b & ((1 << 52) - 1)) >> (52 - m);
            if payload == 0 {
                payload = 1 << (m - 1);
            }
            return sign << (m + e) | ((1 << e) - 1) << m | payload;
        }
        match self {
            DType::F32 => (v as f32).to_bits() as u64,
            DType::F16 => half::f16::from_f64(v).to_bits() as u64,
            DType::BF16 => half::bf16::from_f64(v).to_bits() as u64,
            _ => v.to_bits(),
        }
    }

    /// The value of `bits` of this float type as f64; NaN payloads kept bit
    /// for bit (the inverse of [`DType::float_bits`]).
    pub fn float_from_bits(self, bits: u64) -> f64 {
        if let Some(f) = crate::minifloat::MiniFloat::of(self) {
            return f.decode(bits);
        }
        let (m, e) = self.float_layout();
        let exp_all_ones = (bits >> m) & ((1 << e) - 1) == (1 << e) - 1;
        if exp_all_ones && bits & ((1 << m) - 1) != 0 {
            let sign = (bits >> (m + e)) & 1;
            let payload = (bits & ((1 << m) - 1)) << (52 - m);
            return f64::from_bits(sign << 63 | 0x7FF << 52 | payload);
        }
        match self {
            DType::F32 => f32::from_bits(bits as u32) as f64,
            DType::F16 => half::f16::from_bits(bits as u16).to_f64(),
            DType::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
            _ => f64::from_bits(bits),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tensor type: shape (or unranked), element type and optional encoding
/// (the storage-format attribute `#ge.format<…>`).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct TensorType {
    /// `None` for unranked `tensor<*xf32>`.
    pub dims: Option<Box<[Dim]>>,
    pub dtype: DType,
    pub encoding: Option<Attribute>,
}

impl TensorType {
    pub fn rank(&self) -> Option<usize> {
        self.dims.as_ref().map(|d| d.len())
    }
    pub fn shape(&self) -> &[Dim] {
        self.dims.as_deref().unwrap_or(&[])
    }
    /// Static shape, if every dim is static.
    pub fn static_shape(&self) -> Option<Vec<i64>> {
        self.dims.as_ref()?.iter().map(|d| d.as_static()).collect()
    }
    /// Element count when the shape is static.
    /// The element count of a static shape (`None` when a dim is not
    /// static, or the count overflows: such a tensor cannot exist).
    pub fn num_elements(&self) -> Option<i64> {
        self.static_shape()?
            .iter()
            .try_fold(1i64, |acc, &d| acc.checked_mul(d))
    }
    pub fn has_symbolic_dims(&self) -> bool {
        self.shape().iter().any(|d| matches!(d, Dim::Sym(_)))
    }
}

/// The data behind a [`Type`] handle.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TypeData {
    Tensor(TensorType),
    /// A scalar builtin type: `f32`, `i64`, `index`, …
    Scalar(DType),
    Function {
        inputs: Box<[Type]>,
        results: Box<[Type]>,
    },
    None,
    /// `!dialect.name<body>` kept verbatim (dialects interpret the body).
    Opaque {
        dialect: Ident,
        name: Ident,
        body: Box<str>,
    },
    /// A builtin MLIR type ge does not model (`memref<…>`, `vector<…>`,
    /// `complex<…>`, `tuple<…>`), kept as written, aliases resolved.
    Verbatim(Box<str>),
}

/// An interned type handle.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Type(Intern<TypeData>);

impl Type {
    pub fn new(data: TypeData) -> Type {
        Type(Intern::new(data))
    }
    pub fn data(self) -> &'static TypeData {
        self.0.as_ref()
    }
    pub fn tensor(dims: &[Dim], dtype: DType) -> Type {
        Type::new(TypeData::Tensor(TensorType {
            dims: Some(dims.into()),
            dtype,
            encoding: None,
        }))
    }
    pub fn tensor_static(shape: &[i64], dtype: DType) -> Type {
        let dims: Vec<Dim> = shape.iter().map(|&d| Dim::Static(d)).collect();
        Type::tensor(&dims, dtype)
    }
    pub fn tensor_encoded(dims: &[Dim], dtype: DType, encoding: Option<Attribute>) -> Type {
        Type::new(TypeData::Tensor(TensorType {
            dims: Some(dims.into()),
            dtype,
            encoding,
        }))
    }
    pub fn unranked(dtype: DType) -> Type {
        Type::new(TypeData::Tensor(TensorType {
            dims: None,
            dtype,
            encoding: None,
        }))
    }
    pub fn scalar(dtype: DType) -> Type {
        Type::new(TypeData::Scalar(dtype))
    }
    pub fn index() -> Type {
        Type::scalar(DType::Index)
    }
    pub fn none() -> Type {
        Type::new(TypeData::None)
    }
    /// A builtin type ge does not model, kept as `text`.
    pub fn verbatim(text: &str) -> Type {
        crate::affine_alias::note_verbatim(text);
        Type::new(TypeData::Verbatim(text.into()))
    }
    pub fn function(inputs: &[Type], results: &[Type]) -> Type {
        Type::new(TypeData::Function {
            inputs: inputs.into(),
            results: results.into(),
        })
    }
    pub fn as_tensor(self) -> Option<&'static TensorType> {
        match self.data() {
            TypeData::Tensor(t) => Some(t),
            _ => None,
        }
    }
    pub fn as_function(self) -> Option<(&'static [Type], &'static [Type])> {
        match self.data() {
            TypeData::Function { inputs, results } => Some((inputs, results)),
            _ => None,
        }
    }
    /// The element dtype of a tensor, or the dtype of a scalar.
    pub fn dtype(self) -> Option<DType> {
        match self.data() {
            TypeData::Tensor(t) => Some(t.dtype),
            TypeData::Scalar(d) => Some(*d),
            _ => None,
        }
    }
    /// Same tensor with a different element type.
    pub fn with_dtype(self, dtype: DType) -> Type {
        match self.data() {
            TypeData::Tensor(t) => Type::new(TypeData::Tensor(TensorType { dtype, ..t.clone() })),
            TypeData::Scalar(_) => Type::scalar(dtype),
            _ => self,
        }
    }
    /// Same tensor with a different shape (encoding kept).
    pub fn with_dims(self, dims: &[Dim]) -> Type {
        match self.data() {
            TypeData::Tensor(t) => Type::new(TypeData::Tensor(TensorType {
                dims: Some(dims.into()),
                ..t.clone()
            })),
            _ => self,
        }
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::printer::write_type(f, *self, false)
    }
}
