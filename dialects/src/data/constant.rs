//! `data.constant`: a tensor materialised from an elements attribute.

use super::tensor_from_bytes;
use crate::interfaces::*;
use ge_ir::attributes::{AttrData, Attribute};
use ge_ir::body::{Body, OpId};
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::module::Module;
use ge_ir::opdef::{FoldResult, InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{budget, external, Type};

/// The tensor type an elements attribute (`dense`, `dense_resource`,
/// `#ge.external`) carries.
pub fn elements_type(a: Attribute) -> Result<Type, String> {
    match a.data() {
        AttrData::Dense(_) | AttrData::DenseResource { .. } | AttrData::External { .. } => a
            .value_type()
            .filter(|t| t.as_tensor().is_some())
            .ok_or_else(|| format!("elements attribute '{a}' has no tensor type")),
        _ => Err(format!(
            "expected dense, dense_resource or external elements, but got {} '{a}'",
            a.kind_name()
        )),
    }
}

/// The value of an elements attribute as a tensor. `dense_resource` blobs
/// come from `module`'s resource table; `#ge.external` weights are read from
/// their file through the process's confined file access
/// ([`ge_ir::external`]: inside the model's directory, or an allowed one).
/// Sizes come from the model, so the tensor's size is checked against the
/// memory budget ([`ge_ir::budget`]) before anything is allocated or read.
pub fn elements_tensor(a: Attribute, module: Option<&Module>) -> Result<Tensor, String> {
    let ty = elements_type(a)?;
    let tt = ty
        .as_tensor()
        .ok_or_else(|| format!("'{ty}' is not a tensor type"))?;
    let shape: Vec<usize> = tt
        .static_shape()
        .ok_or_else(|| format!("constant of type '{ty}' must have a static shape"))?
        .into_iter()
        .map(|d| d.max(0) as usize)
        .collect();
    let dims = || shape.iter().map(|&d| d as u64);
    // The reference tensor holds 8 bytes per element, at least what the type says.
    budget::check(
        budget::bytes_of(dims(), 8),
        &format_args!("constant of type '{ty}'"),
    )?;
    let want = budget::bytes_of(dims(), tt.dtype.byte_size() as u64)
        .ok_or_else(|| format!("constant of type '{ty}' is too large"))?;
    match a.data() {
        AttrData::Dense(d) => Tensor::from_dense(d),
        AttrData::DenseResource { name, .. } => {
            let blob = module
                .and_then(|m| m.resources.get(name.as_str()))
                .ok_or_else(|| format!("no dialect resource named '{name}' in the module"))?;
            if blob.data.len() as u64 != want {
                return Err(format!(
                    "resource '{name}' has {} bytes but '{ty}' needs {want}",
                    blob.data.len()
                ));
            }
            tensor_from_bytes(&blob.data, shape, tt.dtype)
        }
        AttrData::External {
            path,
            offset,
            length,
            ..
        } => {
            if *length != want {
                return Err(format!(
                    "external weights '{path}' give {length} bytes but '{ty}' needs {want}"
                ));
            }
            let bytes = read_range(path, *offset, *length)?;
            tensor_from_bytes(&bytes, shape, tt.dtype)
        }
        _ => Err(format!("'{a}' is not an elements attribute")),
    }
}

/// `length` bytes at `offset` of external file `path`, opened under the
/// process's file-access policy; the range must lie in the file (checked
/// before allocating) and fit the memory budget.
fn read_range(path: &str, offset: u64, length: u64) -> Result<Vec<u8>, String> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut f, size) = external::policy()?.open(path)?;
    if offset.checked_add(length).is_none_or(|end| end > size) {
        return Err(format!(
            "external weights '{path}' has {size} bytes, but offset {offset} + length {length} are needed"
        ));
    }
    budget::check(Some(length), &format_args!("external weights '{path}'"))?;
    let len =
        usize::try_from(length).map_err(|_| format!("external weights '{path}' are too large"))?;
    f.seek(SeekFrom::Start(offset))
        .map_err(|e| format!("cannot seek in '{path}': {e}"))?;
    let mut buf = vec![0u8; len];
    f.read_exact(&mut buf)
        .map_err(|e| format!("cannot read {length} bytes at offset {offset} of '{path}': {e}"))?;
    Ok(buf)
}

fn infer_constant(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let v = Constant::attrs(cx)
        .value()
        .ok_or("requires attribute 'value' (elements)")?;
    Ok(vec![elements_type(v)?])
}

fn sem_constant(cx: &SemCtx, _: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let v = Constant::attrs(cx)
        .value()
        .ok_or("has no 'value' attribute")?;
    Ok(vec![elements_tensor(v, Some(cx.module()))?])
}

fn fold_constant(body: &Body, op: OpId, _: &[Option<Attribute>]) -> Option<Vec<FoldResult>> {
    Constant::attrs(body.op(op))
        .value()
        .map(|v| vec![FoldResult::Attr(v)])
}

def_op! {
    /// A constant tensor
    ///
    /// `%c = data.constant dense<[1.0, 2.0]> : tensor<2xf32>` materialises the elements
    /// attribute `value` — a `dense<…>` literal, a `dense_resource<name>` blob of the module's
    /// `{-# dialect_resources #-}` section, or external weights `#ge.external<"file", offset =
    /// N, length = N, type = T>`. The result type is the attribute's type (it is not written
    /// twice). This is the op constant folding materialises.
    pub Constant = "data.constant" {
        results { output: AnyTensor },
        attrs {
            /// the tensor: dense<…>, dense_resource<…> or #ge.external<…>
            value: Elements,
        },
        traits [Pure, ConstantLike],
        format: "$value attr-dict",
        infer: infer_constant,
        fold: fold_constant,
        semantics: sem_constant,
        interfaces [
            Cost::FREE,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Never,
            KernelFamily::Constant,
        ],
        es(method = constant_attr),
    }
}

pub static OPS: &[&OpDef] = &[&CONSTANT];
