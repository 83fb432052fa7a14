//! Attributes: compile-time constant data attached to ops. Interned like types.

use crate::dim::Dim;
use crate::ident::Ident;
use crate::location::Location;
use crate::types::{DType, Type, TypeData};
use internment::Intern;
use std::fmt;

/// Ascend data layouts (GE's `Format`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[allow(non_camel_case_types)]
pub enum Format {
    ND,
    NCHW,
    NHWC,
    HWCN,
    CHWN,
    NCDHW,
    NDHWC,
    NC1HWC0,
    FRACTAL_Z,
    FRACTAL_NZ,
}

impl Format {
    pub const ALL: [Format; 10] = [
        Format::ND,
        Format::NCHW,
        Format::NHWC,
        Format::HWCN,
        Format::CHWN,
        Format::NCDHW,
        Format::NDHWC,
        Format::NC1HWC0,
        Format::FRACTAL_Z,
        Format::FRACTAL_NZ,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Format::ND => "ND",
            Format::NCHW => "NCHW",
            Format::NHWC => "NHWC",
            Format::HWCN => "HWCN",
            Format::CHWN => "CHWN",
            Format::NCDHW => "NCDHW",
            Format::NDHWC => "NDHWC",
            Format::NC1HWC0 => "NC1HWC0",
            Format::FRACTAL_Z => "FRACTAL_Z",
            Format::FRACTAL_NZ => "FRACTAL_NZ",
        }
    }
    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name() == s)
    }
    /// C0 block size for a dtype (Ascend: 16 for 16-bit types, 32 for 8-bit).
    pub fn c0(dtype: DType) -> i64 {
        match dtype.byte_size() {
            1 => 32,
            4 => 8,
            _ => 16,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The tensor-type encoding `#ge.format<STORAGE, origin = ORIGIN, origin_shape = [..]>`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FormatAttr {
    pub storage: Format,
    pub origin: Option<Format>,
    pub origin_shape: Option<Box<[Dim]>>,
}

/// Raw element storage of a dense attribute: little-endian, one element per
/// `dtype.byte_size()` bytes (`i1` as one byte 0/1, f16/bf16 as their bits).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct DenseElements {
    /// A tensor type (static shape).
    pub ty: Type,
    /// A single element broadcast to the whole shape.
    pub splat: bool,
    pub bytes: Box<[u8]>,
}

/// A scalar element read out of dense storage.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Element {
    Int(i64),
    /// Unsigned 64-bit values above `i64::MAX` keep their bits here.
    UInt(u64),
    Float(f64),
    Bool(bool),
}

impl Element {
    pub fn as_f64(self) -> f64 {
        match self {
            Element::Int(i) => i as f64,
            Element::UInt(u) => u as f64,
            Element::Float(f) => f,
            Element::Bool(b) => b as u8 as f64,
        }
    }
    pub fn as_i64(self) -> i64 {
        match self {
            Element::Int(i) => i,
            Element::UInt(u) => u as i64,
            Element::Float(f) => f as i64,
            Element::Bool(b) => b as i64,
        }
    }
}

impl DenseElements {
    pub fn dtype(&self) -> DType {
        self.ty.dtype().unwrap_or(DType::F32)
    }
    /// Number of stored elements (1 for a splat).
    pub fn stored_len(&self) -> usize {
        self.bytes.len() / self.dtype().byte_size().max(1)
    }
    /// Number of logical elements.
    pub fn len(&self) -> usize {
        self.ty
            .as_tensor()
            .and_then(|t| t.num_elements())
            .map(|n| n as usize)
            .unwrap_or_else(|| self.stored_len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Element `i` (splats answer for every index).
    pub fn get(&self, i: usize) -> Element {
        let dt = self.dtype();
        let idx = if self.splat { 0 } else { i };
        let w = dt.byte_size();
        let b = &self.bytes[idx * w..idx * w + w];
        read_element(dt, b)
    }
    pub fn elements(&self) -> impl Iterator<Item = Element> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }
    /// Every element's bytes in row-major order, as a tensor of whole-byte
    /// elements is stored (a splat repeated; its size checked against the
    /// memory budget first) — what writing a weight into a compiled model
    /// needs, without reading each element. `None` for element types
    /// narrower than a byte.
    pub fn row_major_bytes(&self) -> Option<Result<std::borrow::Cow<'_, [u8]>, String>> {
        let dt = self.dtype();
        if !dt.bit_width().is_multiple_of(8) {
            return None;
        }
        if !self.splat {
            return Some(Ok(std::borrow::Cow::Borrowed(&self.bytes)));
        }
        let size = (self.len() as u64).checked_mul(self.bytes.len() as u64);
        Some(
            crate::budget::check(size, &format_args!("a constant of type '{}'", self.ty))
                .map(|()| std::borrow::Cow::Owned(self.bytes.repeat(self.len()))),
        )
    }
    /// The one representation MLIR gives these elements: a splat when there
    /// are several and all are equal (bit for bit), so `dense<[1, 1]>` and
    /// `dense<1>` are one attribute.
    pub fn canonical(self) -> DenseElements {
        let w = self.dtype().byte_size().max(1);
        if self.splat || self.bytes.len() <= w || !self.bytes.len().is_multiple_of(w) {
            return self;
        }
        let first = &self.bytes[..w];
        if !self.bytes.chunks(w).all(|c| c == first) {
            return self;
        }
        DenseElements {
            splat: true,
            bytes: first.into(),
            ty: self.ty,
        }
    }

    /// Build from elements, encoding each in `ty`'s dtype.
    pub fn from_elements(ty: Type, elems: &[Element]) -> DenseElements {
        let dt = ty.dtype().unwrap_or(DType::F32);
        let mut bytes = Vec::with_capacity(elems.len() * dt.byte_size());
        for e in elems {
            write_element(dt, *e, &mut bytes);
        }
        let splat = elems.len() == 1
            && ty
                .as_tensor()
                .and_then(|t| t.num_elements())
                .is_some_and(|n| n != 1);
        DenseElements {
            ty,
            splat,
            bytes: bytes.into(),
        }
    }
}

pub fn read_element(dt: DType, b: &[u8]) -> Element {
    let arr8 = |b: &[u8]| {
        let mut a = [0u8; 8];
        a[..b.len()].copy_from_slice(b);
        a
    };
    match dt {
        DType::F64 => Element::Float(f64::from_le_bytes(arr8(b))),
        DType::F32 => {
            Element::Float(dt.float_from_bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64))
        }
        DType::F16 | DType::BF16 => {
            Element::Float(dt.float_from_bits(u16::from_le_bytes([b[0], b[1]]) as u64))
        }
        DType::I1 => Element::Bool(b[0] != 0),
        DType::F8E4M3FN
        | DType::F8E4M3FNUZ
        | DType::F8E5M2
        | DType::F8E5M2FNUZ
        | DType::F8E8M0FNU
        | DType::F4E2M1FN => Element::Float(dt.float_from_bits(b[0] as u64)),
        DType::I4 | DType::U4 | DType::I2 | DType::U2 => {
            Element::Int(crate::tensor::wrap_i(dt, b[0] as i64))
        }
        DType::I8 => Element::Int(b[0] as i8 as i64),
        DType::I16 => Element::Int(i16::from_le_bytes([b[0], b[1]]) as i64),
        DType::I32 => Element::Int(i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64),
        DType::I64 | DType::Index => Element::Int(i64::from_le_bytes(arr8(b))),
        DType::U8 => Element::Int(b[0] as i64),
        DType::U16 => Element::Int(u16::from_le_bytes([b[0], b[1]]) as i64),
        DType::U32 => Element::Int(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64),
        DType::U64 => {
            let v = u64::from_le_bytes(arr8(b));
            if v > i64::MAX as u64 {
                Element::UInt(v)
            } else {
                Element::Int(v as i64)
            }
        }
    }
}

pub fn write_element(dt: DType, e: Element, out: &mut Vec<u8>) {
    let f = e.as_f64();
    let i = e.as_i64();
    match dt {
        DType::F64 => out.extend_from_slice(&f.to_le_bytes()),
        DType::F32 => out.extend_from_slice(&(dt.float_bits(f) as u32).to_le_bytes()),
        DType::F16 | DType::BF16 => out.extend_from_slice(&(dt.float_bits(f) as u16).to_le_bytes()),
        DType::I1 => out.push((i != 0) as u8),
        DType::F8E4M3FN
        | DType::F8E4M3FNUZ
        | DType::F8E5M2
        | DType::F8E5M2FNUZ
        | DType::F8E8M0FNU
        | DType::F4E2M1FN => out.push(dt.float_bits(f) as u8),
        DType::I8 | DType::U8 | DType::I4 | DType::U4 | DType::I2 | DType::U2 => out.push(i as u8),
        DType::I16 | DType::U16 => out.extend_from_slice(&(i as i16).to_le_bytes()),
        DType::I32 | DType::U32 => out.extend_from_slice(&(i as i32).to_le_bytes()),
        DType::I64 | DType::Index => out.extend_from_slice(&i.to_le_bytes()),
        DType::U64 => {
            let v = match e {
                Element::UInt(u) => u,
                _ => i as u64,
            };
            out.extend_from_slice(&v.to_le_bytes())
        }
    }
}

/// A sorted attribute dictionary (interned; empty dictionaries are shared).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttrDict(Intern<[NamedAttr]>);

pub type NamedAttr = (Ident, Attribute);

impl AttrDict {
    pub fn empty() -> AttrDict {
        // Most ops have no attributes: intern the empty dictionary once.
        static EMPTY: std::sync::OnceLock<AttrDict> = std::sync::OnceLock::new();
        *EMPTY.get_or_init(|| AttrDict(Intern::from(&[][..])))
    }
    /// Build from entries in any order; a later duplicate name wins.
    pub fn new(mut entries: Vec<NamedAttr>) -> AttrDict {
        if entries.is_empty() {
            return AttrDict::empty();
        }
        entries.sort_by_key(|a| a.0);
        entries.dedup_by(|later, earlier| {
            if later.0 == earlier.0 {
                earlier.1 = later.1;
                true
            } else {
                false
            }
        });
        AttrDict(Intern::from(&entries[..]))
    }
    pub fn entries(self) -> &'static [NamedAttr] {
        self.0.as_ref()
    }
    pub fn is_empty(self) -> bool {
        self.entries().is_empty()
    }
    pub fn len(self) -> usize {
        self.entries().len()
    }
    pub fn get(self, name: &str) -> Option<Attribute> {
        let e = self.entries();
        e.binary_search_by(|(k, _)| k.as_str().cmp(name))
            .ok()
            .map(|i| e[i].1)
    }
    pub fn with(self, name: Ident, value: Attribute) -> AttrDict {
        let mut v = self.entries().to_vec();
        match v.binary_search_by(|(k, _)| k.cmp(&name)) {
            Ok(i) => v[i].1 = value,
            Err(i) => v.insert(i, (name, value)),
        }
        AttrDict(Intern::from(&v[..]))
    }
    pub fn without(self, name: &str) -> AttrDict {
        let v: Vec<NamedAttr> = self
            .entries()
            .iter()
            .filter(|(k, _)| k.as_str() != name)
            .cloned()
            .collect();
        AttrDict(Intern::from(&v[..]))
    }
}

impl fmt::Debug for AttrDict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.entries().iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

/// The data behind an [`Attribute`] handle.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum AttrData {
    /// A unit attribute: present or absent.
    Unit,
    Bool(bool),
    /// An integer with its type (`i64` when unspelled). Unsigned 64-bit values keep their bits.
    Int {
        value: i64,
        ty: Type,
    },
    /// A float (stored as f64 bits) with its type (`f64` when unspelled).
    Float {
        bits: u64,
        ty: Type,
    },
    String(Box<str>),
    Array(Box<[Attribute]>),
    /// `array<i64: 1, 2>`: MLIR's dense array (element dtype + i64/f64 payload bits).
    DenseArray {
        dtype: DType,
        values: Box<[i64]>,
    },
    Dict(AttrDict),
    /// `@root::@nested`.
    Symbol(Box<[Ident]>),
    Type(Type),
    Dense(DenseElements),
    /// `dense_resource<name> : type`; the blob lives in the module's resource table.
    DenseResource {
        name: Ident,
        ty: Type,
    },
    /// Weights stored outside the IR: `#ge.external<"file", offset = N, length = N, type = T>`.
    External {
        path: Box<str>,
        offset: u64,
        length: u64,
        ty: Type,
    },
    /// The tensor format encoding.
    Format(FormatAttr),
    /// An attribute of an unregistered dialect kept verbatim: `#dialect.name<body>`.
    Opaque {
        dialect: Ident,
        name: Ident,
        body: Box<str>,
    },
    /// A builtin MLIR attribute ge does not model (`affine_map<…>`,
    /// `affine_set<…>`, `strided<…>`), kept as written, aliases resolved.
    Verbatim(Box<str>),
    /// A location as an attribute value (`loc("f.mlir":1:2)`, MLIR's
    /// `LocationAttr`), printed in place as mlir-opt's
    /// `--mlir-print-local-scope` does.
    Location(Location),
    /// `distinct[N]<attr>` (MLIR's `DistinctAttr`): equal to no other
    /// attribute however equal their referenced attributes are. `id` is the
    /// number the text gives it — its identity: within a file the same id is
    /// the same attribute (and must refer to the same attribute) — printed
    /// back as written. `referenced` is `unit` for `distinct[N]<>`.
    Distinct {
        id: u64,
        referenced: Attribute,
    },
}

/// An interned attribute handle.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attribute(Intern<AttrData>);

impl Attribute {
    pub fn new(data: AttrData) -> Attribute {
        Attribute(Intern::new(data))
    }
    pub fn data(self) -> &'static AttrData {
        self.0.as_ref()
    }
    pub fn unit() -> Attribute {
        Attribute::new(AttrData::Unit)
    }
    pub fn bool(b: bool) -> Attribute {
        Attribute::new(AttrData::Bool(b))
    }
    pub fn i64(v: i64) -> Attribute {
        Attribute::int(v, Type::scalar(DType::I64))
    }
    /// An integer of type `ty`. An `i1` integer is the bool attribute
    /// (`true`/`false`, as MLIR prints it), so there is one spelling and one
    /// value for it.
    pub fn int(value: i64, ty: Type) -> Attribute {
        if *ty.data() == TypeData::Scalar(DType::I1) {
            return Attribute::bool(value & 1 != 0);
        }
        Attribute::new(AttrData::Int { value, ty })
    }
    pub fn f64(v: f64) -> Attribute {
        Attribute::float(v, Type::scalar(DType::F64))
    }
    pub fn f32(v: f32) -> Attribute {
        Attribute::float(v as f64, Type::scalar(DType::F32))
    }
    /// A float of type `ty`, rounded to what that type holds (as MLIR's
    /// `FloatAttr` does), so `1.0e-5 : f32` and `9.99999974E-6 : f32` are equal.
    pub fn float(v: f64, ty: Type) -> Attribute {
        let v = match ty.dtype() {
            // Bit for bit: a signalling NaN must stay one.
            Some(d) if v.is_nan() && d.is_float() => d.float_from_bits(d.float_bits(v)),
            Some(d) => crate::tensor::round_f(d, v),
            None => v,
        };
        Attribute::new(AttrData::Float {
            bits: v.to_bits(),
            ty,
        })
    }
    pub fn string(s: &str) -> Attribute {
        Attribute::new(AttrData::String(s.into()))
    }
    pub fn array(items: Vec<Attribute>) -> Attribute {
        Attribute::new(AttrData::Array(items.into()))
    }
    pub fn i64_array(items: &[i64]) -> Attribute {
        Attribute::array(items.iter().map(|&i| Attribute::i64(i)).collect())
    }
    pub fn dict(d: AttrDict) -> Attribute {
        Attribute::new(AttrData::Dict(d))
    }
    pub fn symbol(name: &str) -> Attribute {
        Attribute::new(AttrData::Symbol(vec![Ident::new(name)].into()))
    }
    pub fn ty(t: Type) -> Attribute {
        Attribute::new(AttrData::Type(t))
    }
    pub fn dense(d: DenseElements) -> Attribute {
        Attribute::new(AttrData::Dense(d.canonical()))
    }
    /// A builtin attribute ge does not model, kept as `text`.
    pub fn verbatim(text: &str) -> Attribute {
        crate::affine_alias::note_verbatim(text);
        Attribute::new(AttrData::Verbatim(text.into()))
    }
    pub fn format(f: FormatAttr) -> Attribute {
        Attribute::new(AttrData::Format(f))
    }

    pub fn as_int(self) -> Option<i64> {
        match self.data() {
            AttrData::Int { value, .. } => Some(*value),
            AttrData::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }
    pub fn as_float(self) -> Option<f64> {
        match self.data() {
            AttrData::Float { bits, .. } => Some(f64::from_bits(*bits)),
            AttrData::Int { value, .. } => Some(*value as f64),
            _ => None,
        }
    }
    pub fn as_bool(self) -> Option<bool> {
        match self.data() {
            AttrData::Bool(b) => Some(*b),
            AttrData::Unit => Some(true),
            _ => None,
        }
    }
    pub fn as_str(self) -> Option<&'static str> {
        match self.data() {
            AttrData::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(self) -> Option<&'static [Attribute]> {
        match self.data() {
            AttrData::Array(a) => Some(a),
            _ => None,
        }
    }
    /// Integers of an array or a dense array.
    pub fn as_i64_array(self) -> Option<Vec<i64>> {
        match self.data() {
            AttrData::Array(a) => a.iter().map(|x| x.as_int()).collect(),
            AttrData::DenseArray { dtype, values } if dtype.is_int() => Some(values.to_vec()),
            _ => None,
        }
    }
    pub fn as_f64_array(self) -> Option<Vec<f64>> {
        match self.data() {
            AttrData::Array(a) => a.iter().map(|x| x.as_float()).collect(),
            AttrData::DenseArray { dtype, values } => Some(
                values
                    .iter()
                    .map(|&v| {
                        if dtype.is_float() {
                            f64::from_bits(v as u64)
                        } else {
                            v as f64
                        }
                    })
                    .collect(),
            ),
            _ => None,
        }
    }
    pub fn as_dict(self) -> Option<AttrDict> {
        match self.data() {
            AttrData::Dict(d) => Some(*d),
            _ => None,
        }
    }
    pub fn as_type(self) -> Option<Type> {
        match self.data() {
            AttrData::Type(t) => Some(*t),
            _ => None,
        }
    }
    /// The root name of a symbol reference.
    pub fn as_symbol(self) -> Option<Ident> {
        match self.data() {
            AttrData::Symbol(s) => s.first().copied(),
            _ => None,
        }
    }
    pub fn as_dense(self) -> Option<&'static DenseElements> {
        match self.data() {
            AttrData::Dense(d) => Some(d),
            _ => None,
        }
    }
    pub fn as_format(self) -> Option<&'static FormatAttr> {
        match self.data() {
            AttrData::Format(f) => Some(f),
            _ => None,
        }
    }
    /// This attribute and every attribute nested in it — elements, entries,
    /// the encodings of the types it holds — in print order.
    pub fn for_each_nested(self, f: &mut dyn FnMut(Attribute)) {
        walk_nested(Nested::Attr(self), &mut |n| {
            if let Nested::Attr(a) = n {
                f(a)
            }
        })
    }

    /// The type an attribute carries (ints, floats, elements, type attrs).
    pub fn value_type(self) -> Option<Type> {
        match self.data() {
            AttrData::Int { ty, .. } | AttrData::Float { ty, .. } => Some(*ty),
            AttrData::Dense(d) => Some(d.ty),
            AttrData::DenseResource { ty, .. } | AttrData::External { ty, .. } => Some(*ty),
            AttrData::Bool(_) => Some(Type::scalar(DType::I1)),
            _ => None,
        }
    }
    /// A short noun for diagnostics ("integer", "array", …).
    pub fn kind_name(self) -> &'static str {
        match self.data() {
            AttrData::Unit => "unit",
            AttrData::Bool(_) => "bool",
            AttrData::Int { .. } => "integer",
            AttrData::Float { .. } => "float",
            AttrData::String(_) => "string",
            AttrData::Array(_) => "array",
            AttrData::DenseArray { .. } => "dense array",
            AttrData::Dict(_) => "dictionary",
            AttrData::Symbol(_) => "symbol reference",
            AttrData::Type(_) => "type",
            AttrData::Dense(_) => "dense elements",
            AttrData::DenseResource { .. } => "dense resource",
            AttrData::External { .. } => "external weights",
            AttrData::Format(_) => "format",
            AttrData::Opaque { .. } => "opaque dialect attribute",
            AttrData::Verbatim(_) => "builtin attribute",
            AttrData::Location(_) => "location",
            AttrData::Distinct { .. } => "distinct attribute",
        }
    }
}

/// An attribute or a type met by [`walk_nested`].
#[derive(Clone, Copy, Debug)]
pub enum Nested {
    Attr(Attribute),
    Type(Type),
}

/// `start` and every attribute and type nested in it (array elements,
/// dictionary values, the types of typed values, tensor encodings, function
/// type parts), depth first in print order, with an explicit stack:
/// attributes and types nest as deep as their text.
pub fn walk_nested(start: Nested, f: &mut dyn FnMut(Nested)) {
    let mut stack = vec![start];
    while let Some(item) = stack.pop() {
        f(item);
        match item {
            Nested::Attr(a) => match a.data() {
                AttrData::Array(xs) => stack.extend(xs.iter().rev().map(|x| Nested::Attr(*x))),
                AttrData::Dict(d) => {
                    stack.extend(d.entries().iter().rev().map(|(_, v)| Nested::Attr(*v)))
                }
                AttrData::Type(t) => stack.push(Nested::Type(*t)),
                AttrData::Dense(d) => stack.push(Nested::Type(d.ty)),
                AttrData::DenseResource { ty, .. } | AttrData::External { ty, .. } => {
                    stack.push(Nested::Type(*ty))
                }
                AttrData::Distinct { referenced, .. } => stack.push(Nested::Attr(*referenced)),
                _ => {}
            },
            Nested::Type(t) => match t.data() {
                TypeData::Tensor(tt) => stack.extend(tt.encoding.map(Nested::Attr)),
                TypeData::Function { inputs, results } => stack.extend(
                    inputs
                        .iter()
                        .chain(results.iter())
                        .rev()
                        .map(|t| Nested::Type(*t)),
                ),
                _ => {}
            },
        }
    }
}

/// Whether `t` is a type that typed literals (`1 : i32`, `dense<…> : tensor<…>`) may carry.
pub fn is_scalar_or_tensor(t: Type) -> bool {
    matches!(t.data(), TypeData::Scalar(_) | TypeData::Tensor(_))
}

impl fmt::Debug for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::printer::write_attr(f, *self, false)
    }
}
