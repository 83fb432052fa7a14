//! Rust values as op attributes: the conversions behind the typed ES methods
//! and the `Default` of every `XxxAttrs` struct.

use ge_ir::attributes::{AttrData, Attribute};
use ge_ir::opdef::{AttrKind, OpDef};
use ge_ir::{DType, Type};

/// A Rust value that can be an attribute of an op.
pub trait IntoAttr {
    /// Whether an attribute of `kind` holds values of this Rust type (the
    /// drift test checks every ES parameter against its `OpDef` with it).
    fn kind_ok(kind: AttrKind) -> bool;
    /// `Option<T>`: `None` leaves the attribute out.
    const IS_OPTION: bool = false;
    /// The attribute for this value. `like` is the definition's default, used
    /// to keep its spelling (an `f32` epsilon stays `f32`).
    fn to_attr(&self, like: Option<Attribute>) -> Option<Attribute>;
}

/// A Rust value that can be read back from an attribute (the default of a
/// field of an `XxxAttrs` struct comes from the op definition this way).
pub trait FromAttr: IntoAttr + Sized {
    fn from_attr(a: Attribute) -> Option<Self>;
    /// The value of a field whose attribute has no default.
    fn fallback() -> Self;
}

impl IntoAttr for i64 {
    fn kind_ok(kind: AttrKind) -> bool {
        kind == AttrKind::I64
    }
    fn to_attr(&self, like: Option<Attribute>) -> Option<Attribute> {
        Some(match like.map(|a| a.data()) {
            Some(AttrData::Int { ty, .. }) => Attribute::int(*self, *ty),
            _ => Attribute::i64(*self),
        })
    }
}

impl FromAttr for i64 {
    fn from_attr(a: Attribute) -> Option<i64> {
        a.as_int()
    }
    fn fallback() -> i64 {
        0
    }
}

impl IntoAttr for f64 {
    fn kind_ok(kind: AttrKind) -> bool {
        kind == AttrKind::F64
    }
    fn to_attr(&self, like: Option<Attribute>) -> Option<Attribute> {
        Some(match like.map(|a| a.data()) {
            Some(AttrData::Float { ty, .. }) => Attribute::float(*self, *ty),
            _ => Attribute::f64(*self),
        })
    }
}

impl FromAttr for f64 {
    fn from_attr(a: Attribute) -> Option<f64> {
        a.as_float()
    }
    fn fallback() -> f64 {
        0.0
    }
}

impl IntoAttr for bool {
    fn kind_ok(kind: AttrKind) -> bool {
        kind == AttrKind::Bool
    }
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::bool(*self))
    }
}

impl FromAttr for bool {
    fn from_attr(a: Attribute) -> Option<bool> {
        a.as_bool()
    }
    fn fallback() -> bool {
        false
    }
}

fn string_kind(kind: AttrKind) -> bool {
    matches!(kind, AttrKind::Str | AttrKind::Enum(_))
}

impl IntoAttr for String {
    fn kind_ok(kind: AttrKind) -> bool {
        string_kind(kind)
    }
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::string(self))
    }
}

impl FromAttr for String {
    fn from_attr(a: Attribute) -> Option<String> {
        a.as_str().map(str::to_string)
    }
    fn fallback() -> String {
        String::new()
    }
}

impl IntoAttr for &str {
    fn kind_ok(kind: AttrKind) -> bool {
        string_kind(kind)
    }
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::string(self))
    }
}

impl IntoAttr for Vec<i64> {
    fn kind_ok(kind: AttrKind) -> bool {
        kind == AttrKind::I64Array
    }
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::i64_array(self))
    }
}

impl FromAttr for Vec<i64> {
    fn from_attr(a: Attribute) -> Option<Vec<i64>> {
        a.as_i64_array()
    }
    fn fallback() -> Vec<i64> {
        vec![]
    }
}

impl IntoAttr for &[i64] {
    fn kind_ok(kind: AttrKind) -> bool {
        kind == AttrKind::I64Array
    }
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::i64_array(self))
    }
}

impl IntoAttr for Vec<f64> {
    fn kind_ok(kind: AttrKind) -> bool {
        kind == AttrKind::F64Array
    }
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::array(
            self.iter().map(|&v| Attribute::f64(v)).collect(),
        ))
    }
}

impl FromAttr for Vec<f64> {
    fn from_attr(a: Attribute) -> Option<Vec<f64>> {
        a.as_f64_array()
    }
    fn fallback() -> Vec<f64> {
        vec![]
    }
}

/// An element type, written as a type attribute (`to = f16` of `graph.cast`).
impl IntoAttr for DType {
    fn kind_ok(kind: AttrKind) -> bool {
        kind == AttrKind::Type
    }
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::ty(Type::scalar(*self)))
    }
}

impl IntoAttr for Type {
    fn kind_ok(kind: AttrKind) -> bool {
        kind == AttrKind::Type
    }
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::ty(*self))
    }
}

/// Any attribute, passed through (the `value` of `data.constant`).
impl IntoAttr for Attribute {
    fn kind_ok(_: AttrKind) -> bool {
        true
    }
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(*self)
    }
}

impl<T: IntoAttr> IntoAttr for Option<T> {
    const IS_OPTION: bool = true;
    fn kind_ok(kind: AttrKind) -> bool {
        T::kind_ok(kind)
    }
    fn to_attr(&self, like: Option<Attribute>) -> Option<Attribute> {
        self.as_ref().and_then(|v| v.to_attr(like))
    }
}

impl<T: FromAttr> FromAttr for Option<T> {
    fn from_attr(a: Attribute) -> Option<Option<T>> {
        T::from_attr(a).map(Some)
    }
    fn fallback() -> Option<T> {
        None
    }
}

/// The default of attribute `name` of `def` (its parsed `.air` default).
pub fn default_attr(def: &'static OpDef, name: &str) -> Option<Attribute> {
    let i = def.attrs.iter().position(|a| a.name == name)?;
    def.default_values().get(i).copied().flatten()
}

/// The value of a field of an `XxxAttrs` struct when the user does not set it:
/// the definition's default, else [`FromAttr::fallback`].
pub fn default_of<T: FromAttr>(def: &'static OpDef, name: &str) -> T {
    default_attr(def, name)
        .and_then(T::from_attr)
        .unwrap_or_else(T::fallback)
}

/// Whether `T` can read attribute `a` (the drift test checks every default).
pub fn parses<T: FromAttr>(a: Attribute) -> bool {
    T::from_attr(a).is_some()
}

/// Add attribute `name = value` unless it is absent (`None`) or equal to the
/// definition's default (which the builder fills in anyway).
pub fn push_attr<T: IntoAttr>(
    out: &mut Vec<(&'static str, Attribute)>,
    def: &'static OpDef,
    name: &'static str,
    value: &T,
) {
    let like = default_attr(def, name);
    let Some(a) = value.to_attr(like) else { return };
    if let Some(ad) = def.attr_def(name) {
        if ge_ir::builder::is_default(ad, a) {
            return;
        }
    }
    out.push((name, a));
}
