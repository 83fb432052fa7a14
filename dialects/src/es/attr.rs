//! Rust values as op attributes: the conversions behind the typed ES methods.

use ge_ir::attributes::{AttrData, Attribute};
use ge_ir::opdef::OpDef;
use ge_ir::{DType, Type};

/// A Rust value that can be an attribute of an op.
pub trait IntoAttr {
    /// The attribute for this value. `like` is the definition's default, used
    /// to keep its spelling (an `f32` epsilon stays `f32`).
    fn to_attr(&self, like: Option<Attribute>) -> Option<Attribute>;
}

impl IntoAttr for i64 {
    fn to_attr(&self, like: Option<Attribute>) -> Option<Attribute> {
        Some(match like.map(|a| a.data()) {
            Some(AttrData::Int { ty, .. }) => Attribute::int(*self, *ty),
            _ => Attribute::i64(*self),
        })
    }
}

impl IntoAttr for f64 {
    fn to_attr(&self, like: Option<Attribute>) -> Option<Attribute> {
        Some(match like.map(|a| a.data()) {
            Some(AttrData::Float { ty, .. }) => Attribute::float(*self, *ty),
            _ => Attribute::f64(*self),
        })
    }
}

impl IntoAttr for bool {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::bool(*self))
    }
}

impl IntoAttr for String {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::string(self))
    }
}

impl IntoAttr for &str {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::string(self))
    }
}

impl IntoAttr for Vec<i64> {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::i64_array(self))
    }
}

impl IntoAttr for &[i64] {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::i64_array(self))
    }
}

impl IntoAttr for Vec<f64> {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::array(
            self.iter().map(|&v| Attribute::f64(v)).collect(),
        ))
    }
}

impl IntoAttr for &[f64] {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::array(
            self.iter().map(|&v| Attribute::f64(v)).collect(),
        ))
    }
}

impl IntoAttr for Vec<String> {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::array(
            self.iter().map(|v| Attribute::string(v)).collect(),
        ))
    }
}

impl IntoAttr for &[&str] {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::array(
            self.iter().map(|v| Attribute::string(v)).collect(),
        ))
    }
}

/// An element type, written as a type attribute (`to = f16` of `graph.cast`).
impl IntoAttr for DType {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::ty(Type::scalar(*self)))
    }
}

impl IntoAttr for Type {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(Attribute::ty(*self))
    }
}

/// Any attribute, passed through (the `value` of `data.constant`).
impl IntoAttr for Attribute {
    fn to_attr(&self, _: Option<Attribute>) -> Option<Attribute> {
        Some(*self)
    }
}

impl<T: IntoAttr> IntoAttr for Option<T> {
    fn to_attr(&self, like: Option<Attribute>) -> Option<Attribute> {
        self.as_ref().and_then(|v| v.to_attr(like))
    }
}

/// The default of attribute `name` of `def` (its parsed `.air` default).
pub fn default_attr(def: &'static OpDef, name: &str) -> Option<Attribute> {
    let i = def.attrs.iter().position(|a| a.name == name)?;
    def.default_values().get(i).copied().flatten()
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
