//! The ES ("Eager Style") builder API: models written as Rust code.
//!
//! In the spirit of GE's ES API, every compute op of the `graph` and `data`
//! dialects is a typed method of [`GraphBuilder`], generated from the op's
//! declaration by `def_op!` (its `es` entry; an op without a method says why
//! with `es(none = "...")`):
//! operands are [`Tensor`] handles (`Option<Tensor>` for optional operands,
//! `&[Tensor]` for variadic ones), required attributes are positional
//! arguments, the others live in an `XxxAttrs` struct whose `Default` holds
//! the definition's defaults, and ops with several results return a struct
//! (`b.topk(..)?.values`). Result types come from each op's shape inference,
//! so a model is written without a single type annotation beyond its inputs.
//! `+ - * / %` and unary `-` work on tensor handles; they return
//! `EsResult<Tensor>`, which is accepted again on either side of a tensor, so
//! `(a + b + c)?` chains. A float next to a tensor becomes a scalar constant
//! of the tensor's dtype (`x * 0.5`).
//!
//! Every mistake — a shape mismatch, a bad attribute, a tensor of another
//! builder, building after `output` — is an [`EsError`] naming the method,
//! the op and the operand types; nothing panics.
//!
//! ```
//! use ge_dialects::es::{Conv2dAttrs, EsError, GraphBuilder, ReduceMeanAttrs};
//! use ge_ir::tensor::Tensor as HostTensor;
//! use ge_ir::DType;
//!
//! fn main() -> Result<(), EsError> {
//!     let b = GraphBuilder::new("main");
//!     b.symbol_bound("B", 64);
//!     let x = b.input("x", "tensor<Bx3x8x8xf32>")?;
//!     let w = b.weight("conv.w", &HostTensor::zeros(vec![4, 3, 3, 3], DType::F32))?;
//!     let bias = b.weight("conv.b", &HostTensor::zeros(vec![4], DType::F32))?;
//!     let pads = Conv2dAttrs { pads: vec![1, 1, 1, 1], ..Default::default() };
//!     let y = b.conv2d(x, w, Some(bias), pads)?;        // tensor<Bx4x8x8xf32>
//!     let y = b.relu((y * 0.5 + y)?)?;                  // operators on handles
//!     let top = b.topk(y, 2, Default::default())?;      // a multi-result op
//!     let m = b.reduce_mean(top.values, &[2, 3], ReduceMeanAttrs::default())?;
//!     assert_eq!(m.ty().to_string(), "tensor<Bx4x1x1xf32>");
//!     // Shape errors are values, not panics:
//!     assert!(b.matmul(x, w).is_err());
//!     b.output(&[m, top.indices])?;
//!     let module = b.finish()?;
//!     let text = ge_ir::printer::print_module(&module, Default::default());
//!     assert!(text.contains("graph.conv2d"));
//!     Ok(())
//! }
//! ```
//!
//! Weights go where [`WeightStorage`] says: inline `dense<…>` literals,
//! `dense_resource` blobs in the module (the default), or an external weights
//! file (`#ge.external<…>`, bytes returned by
//! [`GraphBuilder::finish_with_weights`]).

pub mod attr;
#[cfg(test)]
mod tests;

// The attribute and result structs the declarations generate, in one place
// for users of the builder.
pub use crate::data::movement::{SliceAttrs, SplitAttrs};
pub use crate::data::shape::{ReshapeAttrs, SqueezeAttrs};
pub use crate::graph::elementwise::{GeluAttrs, LeakyReluAttrs, ModAttrs};
pub use crate::graph::index::{
    GatherAttrs, GatherElementsAttrs, PadAttrs, ResizeAttrs, ScatterElementsAttrs, TopK, TopkAttrs,
};
pub use crate::graph::linalg::{BatchMatmulAttrs, GemmAttrs};
pub use crate::graph::nn::{
    AttentionAttrs, AvgPool2dAttrs, BatchNormAttrs, Conv2dAttrs, ConvTranspose2dAttrs,
    InstanceNormAttrs, LayerNormAttrs, LogSoftmaxAttrs, MaxPool2dAttrs, RmsNormAttrs, SoftmaxAttrs,
};
pub use crate::graph::reduce::{
    ArgmaxAttrs, ArgminAttrs, ReduceMaxAttrs, ReduceMeanAttrs, ReduceMinAttrs, ReduceProdAttrs,
    ReduceSumAttrs,
};

use ge_ir::attributes::{AttrData, AttrDict, Attribute};
use ge_ir::body::{BlockId, Body, OpId, OpState, ValueId};
use ge_ir::builder::Builder;
use ge_ir::opdef::{Arity, OpDef};
use ge_ir::tensor::Tensor as HostTensor;
use ge_ir::{Context, DType, Dim, Ident, Location, Module, Type};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// An error of the ES API: what was being built and why it failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EsError {
    pub msg: String,
}

impl EsError {
    pub fn new(msg: impl Into<String>) -> EsError {
        EsError { msg: msg.into() }
    }
}

impl fmt::Display for EsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for EsError {}

pub type EsResult<T> = Result<T, EsError>;

/// Where [`GraphBuilder::weight`] puts a tensor's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WeightStorage {
    /// Inline `dense<…>` literals.
    Dense,
    /// `dense_resource<name>` blobs in the module's `{-# dialect_resources #-}`
    /// section (MLIR's way; hex in the text file).
    Resource,
    /// `#ge.external<"path", offset = …, length = …>`: bytes collected by the
    /// builder and returned by [`GraphBuilder::finish_with_weights`], to be
    /// written to `path` (relative to where the model will be run).
    External { path: String },
}

/// A value being built: a `Copy` handle tied to its [`GraphBuilder`].
#[derive(Clone, Copy)]
pub struct Tensor<'g> {
    id: ValueId,
    ty: Type,
    g: &'g GraphBuilder,
}

impl<'g> Tensor<'g> {
    /// The SSA value in the function being built.
    pub fn id(self) -> ValueId {
        self.id
    }
    /// The value's type (inferred when the op was built).
    pub fn ty(self) -> Type {
        self.ty
    }
    pub fn dtype(self) -> Option<DType> {
        self.ty.dtype()
    }
    /// The dims (empty for an unranked tensor).
    pub fn dims(self) -> Vec<Dim> {
        self.ty
            .as_tensor()
            .map(|t| t.shape().to_vec())
            .unwrap_or_default()
    }
    pub fn rank(self) -> usize {
        self.dims().len()
    }
    /// Dim `i` if it is static.
    pub fn static_dim(self, i: usize) -> Option<i64> {
        self.dims().get(i).and_then(|d| d.as_static())
    }
    /// The builder this handle belongs to.
    pub fn builder(self) -> &'g GraphBuilder {
        self.g
    }
}

impl fmt::Debug for Tensor<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor(#{}: {})", self.id.index(), self.ty)
    }
}

/// Something that names a type: a [`Type`] or its `.air` text.
pub trait AsType {
    fn as_type(&self, ctx: &Context) -> EsResult<Type>;
}

impl AsType for Type {
    fn as_type(&self, _: &Context) -> EsResult<Type> {
        Ok(*self)
    }
}

impl AsType for &str {
    fn as_type(&self, ctx: &Context) -> EsResult<Type> {
        ge_ir::parser::parse_type_str(ctx, self)
            .map_err(|d| EsError::new(format!("invalid type '{self}': {}", d.message)))
    }
}

/// One operand group of an op being created (generated code uses it).
#[doc(hidden)]
pub enum Group<'a, 'g> {
    One(Tensor<'g>),
    Opt(Option<Tensor<'g>>),
    Many(&'a [Tensor<'g>]),
}

/// An op's ES method, as its declaration generated it: an op interface
/// (`def.interface::<EsOp>()`), read by `ge-docgen` and tools.
#[derive(Debug)]
pub struct EsOp {
    /// The op name (`graph.conv2d`).
    pub op: &'static str,
    /// The `GraphBuilder` method.
    pub method: &'static str,
    /// Operand parameters: name and arity, in order.
    pub operands: &'static [(&'static str, Arity)],
    /// Attributes passed as arguments.
    pub positional: &'static [EsAttrInfo],
    /// The attributes struct, if the method takes one.
    pub attrs_struct: Option<&'static str>,
    pub fields: &'static [EsAttrInfo],
    pub results: EsResults,
}

ge_ir::op_interface!(EsOp, "es");

/// Why an op has no ES method (an op interface, like [`EsOp`]).
#[derive(Debug)]
pub struct EsExcluded(pub &'static str);

ge_ir::op_interface!(EsExcluded, "no-es");

/// An attribute parameter or field of an ES method.
#[derive(Debug)]
pub struct EsAttrInfo {
    /// The attribute's name in the op definition.
    pub name: &'static str,
    /// The Rust parameter or field name.
    pub rust_name: &'static str,
    pub rust_type: &'static str,
}

/// What an ES method returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EsResults {
    /// A `Tensor`.
    One,
    /// A `Vec<Tensor>` (variadic results).
    Many,
    /// A struct with one `Tensor` per result.
    Struct {
        name: &'static str,
        fields: &'static [&'static str],
    },
}

impl EsOp {
    /// The method's signature as documentation shows it:
    /// `b.conv2d(input, filter, bias: Option, Conv2dAttrs) -> Tensor`.
    pub fn signature(&self) -> String {
        let mut params: Vec<String> = self
            .operands
            .iter()
            .map(|(n, a)| match a {
                Arity::One => n.to_string(),
                Arity::Optional => format!("{n}: Option"),
                Arity::Variadic => format!("{n}: &[Tensor]"),
            })
            .collect();
        params.extend(
            self.positional
                .iter()
                .map(|p| format!("{}: {}", p.rust_name, p.rust_type)),
        );
        if let Some(s) = self.attrs_struct {
            params.push(s.to_string());
        }
        let ret = match self.results {
            EsResults::One => "Tensor".to_string(),
            EsResults::Many => "Vec<Tensor>".to_string(),
            EsResults::Struct { name, fields } => format!("{name} {{ {} }}", fields.join(", ")),
        };
        format!("b.{}({}) -> {ret}", self.method, params.join(", "))
    }
}

/// The ops the ES API covers: the `graph` and `data` dialects.
fn es_dialect_ops() -> impl Iterator<Item = &'static OpDef> {
    [&crate::graph::DIALECT, &crate::data::DIALECT]
        .into_iter()
        .flat_map(|d| d.ops())
}

/// Every ES method, in dialect order.
pub fn es_ops() -> Vec<&'static EsOp> {
    es_dialect_ops()
        .filter_map(|d| d.interface::<EsOp>())
        .collect()
}

/// The ES method of op `name`, if it has one.
pub fn es_op(name: &str) -> Option<&'static EsOp> {
    es_dialect_ops()
        .find(|d| d.name == name)
        .and_then(|d| d.interface::<EsOp>())
}

/// Why op `name` has no ES method, if it is excluded.
pub fn exclusion_reason(name: &str) -> Option<&'static str> {
    es_dialect_ops()
        .find(|d| d.name == name)
        .and_then(|d| d.interface::<EsExcluded>())
        .map(|e| e.0)
}

struct State {
    module: Module,
    func: OpId,
    entry: BlockId,
    inputs: Vec<Type>,
    returned: bool,
    storage: WeightStorage,
    /// External weight bytes (for [`WeightStorage::External`]).
    weights: Vec<u8>,
    loc: Location,
    /// Scalar constants already built: (dtype, bits) → value.
    scalars: HashMap<(DType, u64), ValueId>,
    resource_names: HashSet<String>,
    bounds: Vec<(String, i64)>,
}

/// Builds one `graph.func` in a fresh module, op by op (see the module docs).
///
/// Tensor handles borrow the builder; [`GraphBuilder::finish`] takes it by
/// value once they are no longer used.
pub struct GraphBuilder {
    ctx: Context,
    st: RefCell<State>,
}

impl GraphBuilder {
    /// A builder for a public function `@name` in a new module.
    pub fn new(name: &str) -> GraphBuilder {
        let ctx = crate::context();
        let mut module = Module::new(&ctx, Location::unknown());
        let mblock = module.block();
        let mut st = OpState::new("graph.func", Location::unknown());
        st.def = Some(&crate::graph::func::FUNC);
        st.attrs = AttrDict::new(vec![
            (Ident::new("sym_name"), Attribute::string(name)),
            (
                Ident::new("function_type"),
                Attribute::ty(Type::function(&[], &[])),
            ),
        ]);
        // The function's own body (graph.func is isolated from above).
        let mut inner = Body::new();
        let r = inner.new_region(None);
        let entry = inner.add_block(r);
        let body = module.body_mut();
        let func = body.create_op_with_regions(st, vec![r], Some(Box::new(inner)));
        body.append_op(mblock, func);
        GraphBuilder {
            ctx,
            st: RefCell::new(State {
                module,
                func,
                entry,
                inputs: vec![],
                returned: false,
                storage: WeightStorage::Resource,
                weights: vec![],
                loc: Location::unknown(),
                scalars: HashMap::new(),
                resource_names: HashSet::new(),
                bounds: vec![],
            }),
        }
    }

    /// The context the builder creates ops in (every dialect of this crate).
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Where [`GraphBuilder::weight`] puts tensors from now on.
    pub fn set_weight_storage(&self, s: WeightStorage) {
        self.st.borrow_mut().storage = s;
    }

    /// Record an upper bound of a symbolic dim (module attribute
    /// `ge.symbol_bounds`, used by memory planning).
    pub fn symbol_bound(&self, sym: &str, bound: i64) {
        let mut st = self.st.borrow_mut();
        st.bounds.retain(|(s, _)| s != sym);
        st.bounds.push((sym.to_string(), bound));
    }

    /// The location of the ops built from now on (shown by `--print-debuginfo`).
    pub fn set_loc(&self, loc: Location) {
        self.st.borrow_mut().loc = loc;
    }

    /// Number of ops built so far (constants included).
    pub fn num_ops(&self) -> usize {
        let st = self.st.borrow();
        st.module
            .body()
            .inner(st.func)
            .map_or(0, |b| b.block_ops(st.entry).count())
    }

    /// A new function argument. `ty` is a [`Type`] or its text
    /// (`"tensor<Bx3x224x224xf32>"`).
    pub fn input<'g>(&'g self, name: &str, ty: impl AsType) -> EsResult<Tensor<'g>> {
        let ty = ty.as_type(&self.ctx)?;
        if ty.as_tensor().is_none() {
            return Err(EsError::new(format!(
                "input '{name}' must have a tensor type, but got '{ty}'"
            )));
        }
        let mut st = self.st.borrow_mut();
        if st.returned {
            return Err(EsError::new(format!(
                "input '{name}': the function already returned (output was called)"
            )));
        }
        let (func, entry) = (st.func, st.entry);
        let body = Self::func_body(&mut st.module, func)?;
        let id = body.add_block_arg(entry, ty, Location::name(name, None));
        st.inputs.push(ty);
        Ok(Tensor { id, ty, g: self })
    }

    /// A constant written inline as a `dense<…>` literal.
    pub fn constant<'g>(&'g self, t: &HostTensor) -> EsResult<Tensor<'g>> {
        self.constant_attr(Attribute::dense(t.to_dense()))
    }

    /// A rank-0 constant of `dtype` (built once per value and dtype).
    pub fn scalar<'g>(&'g self, v: f64, dtype: DType) -> EsResult<Tensor<'g>> {
        let key = (dtype, v.to_bits());
        let cached = self.st.borrow().scalars.get(&key).copied();
        if let Some(id) = cached {
            return Ok(self.wrap(id));
        }
        let t = if dtype.is_float() {
            HostTensor::from_f64(vec![], dtype, vec![v])
        } else {
            HostTensor::from_i64(vec![], dtype, vec![v as i64])
        };
        let c = self.constant(&t)?;
        self.st.borrow_mut().scalars.insert(key, c.id);
        Ok(c)
    }

    /// A weight tensor named `name`, stored as [`WeightStorage`] says.
    pub fn weight<'g>(&'g self, name: &str, t: &HostTensor) -> EsResult<Tensor<'g>> {
        if self.st.borrow().storage == WeightStorage::Dense {
            return self.constant(t);
        }
        self.weight_raw(name, t.ty(), &crate::data::tensor_to_bytes(t))
    }

    /// A weight from its little-endian storage bytes (as in memory: f16/bf16
    /// as their bits, `i1` one byte per element), stored as
    /// [`WeightStorage`] says. `ty` must be a static tensor type whose size
    /// matches `bytes`.
    pub fn weight_raw<'g>(&'g self, name: &str, ty: Type, bytes: &[u8]) -> EsResult<Tensor<'g>> {
        let tt = ty
            .as_tensor()
            .ok_or_else(|| EsError::new(format!("weight '{name}': '{ty}' is not a tensor type")))?;
        let n = tt.num_elements().ok_or_else(|| {
            EsError::new(format!("weight '{name}': '{ty}' must have a static shape"))
        })?;
        let want = (n.max(0) as usize).saturating_mul(tt.dtype.byte_size());
        if bytes.len() != want {
            return Err(EsError::new(format!(
                "weight '{name}': {} bytes given but '{ty}' needs {want}",
                bytes.len()
            )));
        }
        let storage = self.st.borrow().storage.clone();
        let attr = match storage {
            WeightStorage::Dense => Attribute::dense(ge_ir::attributes::DenseElements {
                ty,
                splat: false,
                bytes: bytes.into(),
            }),
            WeightStorage::Resource => {
                let mut st = self.st.borrow_mut();
                let key = resource_key(name, &st.resource_names);
                st.resource_names.insert(key.clone());
                st.module.resources.insert(
                    key.clone(),
                    ge_ir::module::Blob {
                        alignment: tt.dtype.byte_size().max(1) as u32,
                        data: bytes.to_vec(),
                    },
                );
                Attribute::new(AttrData::DenseResource {
                    name: Ident::new(&key),
                    ty,
                })
            }
            WeightStorage::External { path } => {
                let mut st = self.st.borrow_mut();
                while !st.weights.len().is_multiple_of(64) {
                    st.weights.push(0);
                }
                let offset = st.weights.len() as u64;
                st.weights.extend_from_slice(bytes);
                Attribute::new(AttrData::External {
                    path: path.as_str().into(),
                    offset,
                    length: bytes.len() as u64,
                    ty,
                })
            }
        };
        self.constant_attr(attr)
    }

    /// End the function: return `outs`. No op can be added afterwards.
    pub fn output(&self, outs: &[Tensor<'_>]) -> EsResult<()> {
        for t in outs {
            self.check_owner(*t, "output")?;
        }
        let mut st = self.st.borrow_mut();
        if st.returned {
            return Err(EsError::new("output: the function already returned"));
        }
        let (func, entry, loc) = (st.func, st.entry, st.loc);
        let ids: Vec<ValueId> = outs.iter().map(|t| t.id).collect();
        let out_types: Vec<Type> = outs.iter().map(|t| t.ty).collect();
        let in_types = st.inputs.clone();
        let body = Self::func_body(&mut st.module, func)?;
        let mut b = Builder::at_end(&self.ctx, body, entry);
        b.loc = loc;
        b.create("graph.return", &ids, vec![], Some(vec![]), 0)
            .map_err(|m| EsError::new(format!("output: {m}")))?;
        st.module.body_mut().set_attr(
            func,
            "function_type",
            Attribute::ty(Type::function(&in_types, &out_types)),
        );
        st.returned = true;
        Ok(())
    }

    /// The finished, verified module.
    pub fn finish(self) -> EsResult<Module> {
        self.finish_with_weights().map(|(m, _)| m)
    }

    /// The finished, verified module and the bytes of its external weights
    /// (empty unless [`WeightStorage::External`] was used).
    pub fn finish_with_weights(self) -> EsResult<(Module, Vec<u8>)> {
        let mut st = self.st.into_inner();
        if !st.returned {
            return Err(EsError::new(
                "finish: the function has no outputs (call output(&[...]) first)",
            ));
        }
        if !st.bounds.is_empty() {
            let entries = st
                .bounds
                .iter()
                .map(|(s, n)| (Ident::new(s), Attribute::i64(*n)))
                .collect();
            let mop = st.module.op;
            st.module.outer.set_attr(
                mop,
                "ge.symbol_bounds",
                Attribute::dict(AttrDict::new(entries)),
            );
        }
        let diags = ge_ir::verifier::verify_module(&st.module);
        let errors: Vec<&str> = diags
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.message.as_str())
            .collect();
        if !errors.is_empty() {
            return Err(EsError::new(format!(
                "the built module does not verify: {}",
                errors.join("; ")
            )));
        }
        Ok((st.module, st.weights))
    }

    // ---- used by the generated methods --------------------------------------

    fn func_body(module: &mut Module, func: OpId) -> EsResult<&mut Body> {
        module
            .body_mut()
            .inner_mut(func)
            .ok_or_else(|| EsError::new("the function being built has no body"))
    }

    fn check_owner(&self, t: Tensor<'_>, method: &str) -> EsResult<()> {
        if std::ptr::eq(t.g, self) {
            Ok(())
        } else {
            Err(EsError::new(format!(
                "b.{method}: operand {t:?} belongs to another GraphBuilder"
            )))
        }
    }

    fn wrap(&self, id: ValueId) -> Tensor<'_> {
        let st = self.st.borrow();
        let ty = st
            .module
            .body()
            .inner(st.func)
            .map_or_else(Type::none, |b| b.value_type(id));
        Tensor { id, ty, g: self }
    }

    /// The handle of value `id` of the function being built, if it is one
    /// (bindings for other languages, such as the Python package, keep ids
    /// instead of borrowing handles).
    pub fn value(&self, id: ValueId) -> Option<Tensor<'_>> {
        let known = {
            let st = self.st.borrow();
            st.module
                .body()
                .inner(st.func)
                .is_some_and(|b| id.index() < b.value_capacity())
        };
        known.then(|| self.wrap(id))
    }

    #[doc(hidden)]
    pub fn all_results(&self, vals: Vec<ValueId>) -> Vec<Tensor<'_>> {
        vals.into_iter().map(|v| self.wrap(v)).collect()
    }

    #[doc(hidden)]
    pub fn one_result(&self, vals: Vec<ValueId>, method: &str) -> EsResult<Tensor<'_>> {
        match vals.as_slice() {
            [v] => Ok(self.wrap(*v)),
            _ => Err(EsError::new(format!(
                "b.{method}: expected one result, got {}",
                vals.len()
            ))),
        }
    }

    /// Create op `def` from operand groups and attributes: defaults filled,
    /// result types inferred, the op verified. On error nothing is added.
    #[doc(hidden)]
    pub fn create_op<'g>(
        &'g self,
        def: &'static OpDef,
        method: &str,
        groups: &[Group<'_, 'g>],
        mut attrs: Vec<(&'static str, Attribute)>,
    ) -> EsResult<Vec<ValueId>> {
        let mut ids = vec![];
        let mut seg = vec![];
        for g in groups {
            let ts: Vec<Tensor<'g>> = match g {
                Group::One(t) => vec![*t],
                Group::Opt(t) => t.iter().copied().collect(),
                Group::Many(ts) => ts.to_vec(),
            };
            for t in &ts {
                self.check_owner(*t, method)?;
            }
            seg.push(ts.len() as i64);
            ids.extend(ts.iter().map(|t| t.id));
        }
        let flexible = def
            .operands
            .iter()
            .filter(|o| o.arity != Arity::One)
            .count();
        if flexible > 1 {
            attrs.push(("operand_segment_sizes", Attribute::i64_array(&seg)));
        }
        let mut st = self.st.borrow_mut();
        if st.returned {
            return Err(EsError::new(format!(
                "b.{method}: the function already returned (output was called)"
            )));
        }
        let (func, entry, loc) = (st.func, st.entry, st.loc);
        let body = Self::func_body(&mut st.module, func)?;
        let types: Vec<String> = ids
            .iter()
            .map(|&v| body.value_type(v).to_string())
            .collect();
        let what = || format!("b.{method} ('{}') on ({})", def.name, types.join(", "));
        let op = {
            let mut b = Builder::at_end(&self.ctx, body, entry);
            b.loc = loc;
            b.create(def.name, &ids, attrs, None, 0)
                .map_err(|m| EsError::new(format!("{}: {m}", what())))?
        };
        let diags = ge_ir::verifier::verify_op(body, op);
        if let Some(d) = diags.iter().find(|d| d.is_error()) {
            let msg = format!("{}: {}", what(), d.message);
            body.erase_op(op);
            return Err(EsError::new(msg));
        }
        Ok(body.op(op).results().to_vec())
    }

    /// `graph.mod` with default attributes (the `%` operator).
    fn fmod_default<'g>(&'g self, lhs: Tensor<'g>, rhs: Tensor<'g>) -> EsResult<Tensor<'g>> {
        self.mod_(lhs, rhs, ModAttrs::default())
    }

    /// A scalar constant with `t`'s dtype (operators with a float operand).
    fn scalar_like<'g>(&'g self, v: f64, t: Tensor<'g>) -> EsResult<Tensor<'g>> {
        let dt = t.dtype().ok_or_else(|| {
            EsError::new(format!(
                "a scalar needs a tensor with an element type, not {t:?}"
            ))
        })?;
        self.scalar(v, dt)
    }
}

/// A valid, unused `dense_resource` key from a weight name.
fn resource_key(name: &str, used: &HashSet<String>) -> String {
    let mut key: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        key.insert(0, '_');
    }
    if !used.contains(&key) {
        return key;
    }
    (1..)
        .map(|i| format!("{key}_{i}"))
        .find(|k| !used.contains(k))
        .unwrap_or(key)
}

// ---- operators on tensor handles -------------------------------------------

macro_rules! es_binary_operator {
    ($Trait:ident, $f:ident, $method:ident) => {
        impl<'g> std::ops::$Trait<Tensor<'g>> for Tensor<'g> {
            type Output = EsResult<Tensor<'g>>;
            fn $f(self, rhs: Tensor<'g>) -> EsResult<Tensor<'g>> {
                self.g.$method(self, rhs)
            }
        }
        impl<'g> std::ops::$Trait<Tensor<'g>> for EsResult<Tensor<'g>> {
            type Output = EsResult<Tensor<'g>>;
            fn $f(self, rhs: Tensor<'g>) -> EsResult<Tensor<'g>> {
                let lhs = self?;
                lhs.g.$method(lhs, rhs)
            }
        }
        impl<'g> std::ops::$Trait<EsResult<Tensor<'g>>> for Tensor<'g> {
            type Output = EsResult<Tensor<'g>>;
            fn $f(self, rhs: EsResult<Tensor<'g>>) -> EsResult<Tensor<'g>> {
                self.g.$method(self, rhs?)
            }
        }
        impl<'g> std::ops::$Trait<f64> for Tensor<'g> {
            type Output = EsResult<Tensor<'g>>;
            fn $f(self, rhs: f64) -> EsResult<Tensor<'g>> {
                let c = self.g.scalar_like(rhs, self)?;
                self.g.$method(self, c)
            }
        }
        impl<'g> std::ops::$Trait<Tensor<'g>> for f64 {
            type Output = EsResult<Tensor<'g>>;
            fn $f(self, rhs: Tensor<'g>) -> EsResult<Tensor<'g>> {
                let c = rhs.g.scalar_like(self, rhs)?;
                rhs.g.$method(c, rhs)
            }
        }
    };
}

es_binary_operator!(Add, add, add);
es_binary_operator!(Sub, sub, sub);
es_binary_operator!(Mul, mul, mul);
es_binary_operator!(Div, div, div);
es_binary_operator!(Rem, rem, fmod_default);

impl<'g> std::ops::Neg for Tensor<'g> {
    type Output = EsResult<Tensor<'g>>;
    fn neg(self) -> EsResult<Tensor<'g>> {
        self.g.neg(self)
    }
}
