//! Declarative op definitions: one `OpDef` per op drives parsing, printing,
//! verification, building (defaults, result-type inference), folding and docs.
//!
//! Dialects declare each op with [`crate::def_op!`], which also generates the
//! op's typed handle and attribute accessors (docs/architecture.md, *Op
//! definitions*):
//!
//! ```
//! use ge_ir::def_op;
//! use ge_ir::interfaces::FusionPattern;
//!
//! def_op! {
//!     /// Rectified linear unit
//!     ///
//!     /// `max(x, alpha * x)` elementwise.
//!     pub Relu = "demo.relu" {
//!         operands { input: FloatTensor },
//!         results { output: FloatTensor },
//!         attrs {
//!             /// slope below zero
//!             alpha: F64 = 0.0,
//!         },
//!         traits [Pure, Elementwise, SameOperandsAndResultType],
//!         format: "$input attr-dict `:` functional-type(operands, results)",
//!         interfaces [FusionPattern::Elementwise],
//!     }
//! }
//!
//! assert_eq!(RELU.name, "demo.relu");
//! assert_eq!(RELU.attrs[0].default, Some("0.0"));
//! assert_eq!(Relu::attrs(&ge_ir::AttrDict::empty()).alpha(), 0.0);
//! assert_eq!(Relu::DEF.interface::<FusionPattern>(), Some(&FusionPattern::Elementwise));
//! ```

use crate::attributes::{AttrData, AttrDict, Attribute};
use crate::body::{Body, OpId, ValueId};
use crate::format::CompiledFormat;
use crate::interfaces::{OpInterface, OpKey};
use crate::types::{DType, Type, TypeData};
use std::sync::atomic::{AtomicPtr, Ordering};

/// Op properties that passes and the verifier rely on (MLIR's traits).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Trait {
    /// No side effects: may be CSE'd, hoisted, erased when unused.
    Pure,
    /// Operands may be reordered (binary ops).
    Commutative,
    /// Applies elementwise (with broadcasting where `Broadcastable`).
    Elementwise,
    /// Operands broadcast numpy-style to the result shape.
    Broadcastable,
    SameOperandsAndResultShape,
    SameOperandsAndResultType,
    SameOperandsElementType,
    /// Must be the last op of its block.
    Terminator,
    /// Returns from the enclosing function-like op.
    ReturnLike,
    /// Regions may not use values defined outside the op.
    IsolatedFromAbove,
    /// Defines a symbol (`sym_name`).
    Symbol,
    /// Holds a symbol table: symbol names inside are unique.
    SymbolTable,
    /// Regions need no terminator.
    NoTerminator,
    /// Regions have at most one block.
    SingleBlock,
    /// Materialises a constant (`value` attribute).
    ConstantLike,
    /// Function-like: entry block arguments match `function_type` inputs.
    FunctionLike,
    /// f(f(x)) = f(x)
    Idempotent,
    /// f(f(x)) = x
    Involution,
    /// Regions are graph regions: no dominance requirement inside them.
    GraphRegion,
    /// Calls the function named by its `callee` symbol; types must match.
    CallLike,
    /// The last region definition repeats: the op has at least as many
    /// regions as its definition lists (`graph.case` branches).
    VariadicRegions,
}

impl Trait {
    pub fn name(self) -> &'static str {
        match self {
            Trait::Pure => "Pure",
            Trait::Commutative => "Commutative",
            Trait::Elementwise => "Elementwise",
            Trait::Broadcastable => "Broadcastable",
            Trait::SameOperandsAndResultShape => "SameOperandsAndResultShape",
            Trait::SameOperandsAndResultType => "SameOperandsAndResultType",
            Trait::SameOperandsElementType => "SameOperandsElementType",
            Trait::Terminator => "Terminator",
            Trait::ReturnLike => "ReturnLike",
            Trait::IsolatedFromAbove => "IsolatedFromAbove",
            Trait::Symbol => "Symbol",
            Trait::SymbolTable => "SymbolTable",
            Trait::NoTerminator => "NoTerminator",
            Trait::SingleBlock => "SingleBlock",
            Trait::ConstantLike => "ConstantLike",
            Trait::FunctionLike => "FunctionLike",
            Trait::Idempotent => "Idempotent",
            Trait::Involution => "Involution",
            Trait::GraphRegion => "GraphRegion",
            Trait::CallLike => "CallLike",
            Trait::VariadicRegions => "VariadicRegions",
        }
    }
}

/// How many values an operand or result group holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arity {
    One,
    Optional,
    Variadic,
}

/// What types an operand or result accepts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TypeConstraint {
    Any,
    AnyTensor,
    FloatTensor,
    IntTensor,
    /// Tensor of i1.
    BoolTensor,
    /// Tensor of integer or index elements (shapes, indices).
    IndexTensor,
    /// Tensor whose element type is one of these.
    TensorOf(&'static [DType]),
    Scalar(DType),
    AnyScalar,
    /// A tensor or a scalar.
    TensorOrScalar,
}

impl TypeConstraint {
    pub fn accepts(self, t: Type) -> bool {
        let tensor_dtype = t.as_tensor().map(|t| t.dtype);
        match self {
            TypeConstraint::Any => true,
            TypeConstraint::AnyTensor => tensor_dtype.is_some(),
            TypeConstraint::FloatTensor => tensor_dtype.is_some_and(|d| d.is_float()),
            TypeConstraint::IntTensor => tensor_dtype.is_some_and(|d| d.is_int() && d != DType::I1),
            TypeConstraint::BoolTensor => tensor_dtype == Some(DType::I1),
            TypeConstraint::IndexTensor => {
                tensor_dtype.is_some_and(|d| matches!(d, DType::I64 | DType::I32 | DType::Index))
            }
            TypeConstraint::TensorOf(ds) => tensor_dtype.is_some_and(|d| ds.contains(&d)),
            TypeConstraint::Scalar(d) => *t.data() == TypeData::Scalar(d),
            TypeConstraint::AnyScalar => matches!(t.data(), TypeData::Scalar(_)),
            TypeConstraint::TensorOrScalar => {
                matches!(t.data(), TypeData::Scalar(_) | TypeData::Tensor(_))
            }
        }
    }

    pub fn describe(self) -> String {
        match self {
            TypeConstraint::Any => "any type".into(),
            TypeConstraint::AnyTensor => "tensor of any type".into(),
            TypeConstraint::FloatTensor => "tensor of floating-point values".into(),
            TypeConstraint::IntTensor => "tensor of integer values".into(),
            TypeConstraint::BoolTensor => "tensor of i1 values".into(),
            TypeConstraint::IndexTensor => "tensor of i32/i64/index values".into(),
            TypeConstraint::TensorOf(ds) => format!(
                "tensor of {} values",
                ds.iter().map(|d| d.name()).collect::<Vec<_>>().join("/")
            ),
            TypeConstraint::Scalar(d) => d.name().into(),
            TypeConstraint::AnyScalar => "scalar type".into(),
            TypeConstraint::TensorOrScalar => "tensor or scalar".into(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct OperandDef {
    pub name: &'static str,
    pub arity: Arity,
    pub constraint: TypeConstraint,
}

impl OperandDef {
    pub const fn one(name: &'static str, constraint: TypeConstraint) -> OperandDef {
        OperandDef {
            name,
            arity: Arity::One,
            constraint,
        }
    }
    pub const fn optional(name: &'static str, constraint: TypeConstraint) -> OperandDef {
        OperandDef {
            name,
            arity: Arity::Optional,
            constraint,
        }
    }
    pub const fn variadic(name: &'static str, constraint: TypeConstraint) -> OperandDef {
        OperandDef {
            name,
            arity: Arity::Variadic,
            constraint,
        }
    }
}

pub type ResultDef = OperandDef;

/// The kind of value an attribute must hold.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AttrKind {
    Any,
    Bool,
    Unit,
    I64,
    F64,
    Str,
    I64Array,
    F64Array,
    StrArray,
    Type,
    Symbol,
    /// Dense elements, dense resource or external weights.
    Elements,
    Dict,
    /// A string from a fixed set.
    Enum(&'static [&'static str]),
}

impl AttrKind {
    pub fn accepts(self, a: Attribute) -> bool {
        match (self, a.data()) {
            (AttrKind::Any, _) => true,
            (AttrKind::Bool, AttrData::Bool(_)) => true,
            (AttrKind::Unit, AttrData::Unit) => true,
            (AttrKind::I64, AttrData::Int { .. }) => true,
            (AttrKind::F64, AttrData::Float { .. } | AttrData::Int { .. }) => true,
            (AttrKind::Str, AttrData::String(_)) => true,
            (AttrKind::I64Array, _) => a.as_i64_array().is_some(),
            (AttrKind::F64Array, _) => a.as_f64_array().is_some(),
            (AttrKind::StrArray, AttrData::Array(xs)) => xs.iter().all(|x| x.as_str().is_some()),
            (AttrKind::Type, AttrData::Type(_)) => true,
            (AttrKind::Symbol, AttrData::Symbol(_)) => true,
            (
                AttrKind::Elements,
                AttrData::Dense(_) | AttrData::DenseResource { .. } | AttrData::External { .. },
            ) => true,
            (AttrKind::Dict, AttrData::Dict(_)) => true,
            (AttrKind::Enum(names), AttrData::String(s)) => names.contains(&&**s),
            _ => false,
        }
    }

    pub fn describe(self) -> String {
        match self {
            AttrKind::Any => "any attribute".into(),
            AttrKind::Bool => "bool".into(),
            AttrKind::Unit => "unit".into(),
            AttrKind::I64 => "integer".into(),
            AttrKind::F64 => "float".into(),
            AttrKind::Str => "string".into(),
            AttrKind::I64Array => "array of integers".into(),
            AttrKind::F64Array => "array of floats".into(),
            AttrKind::StrArray => "array of strings".into(),
            AttrKind::Type => "type".into(),
            AttrKind::Symbol => "symbol reference".into(),
            AttrKind::Elements => "elements (dense, dense_resource or external)".into(),
            AttrKind::Dict => "dictionary".into(),
            AttrKind::Enum(names) => format!("one of {}", names.join(", ")),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct AttrDef {
    pub name: &'static str,
    pub kind: AttrKind,
    /// Default value in `.air` attribute syntax; `None` means required
    /// (unless `optional`).
    pub default: Option<&'static str>,
    pub optional: bool,
    pub doc: &'static str,
}

impl AttrDef {
    pub const fn required(name: &'static str, kind: AttrKind, doc: &'static str) -> AttrDef {
        AttrDef {
            name,
            kind,
            default: None,
            optional: false,
            doc,
        }
    }
    pub const fn with_default(
        name: &'static str,
        kind: AttrKind,
        default: &'static str,
        doc: &'static str,
    ) -> AttrDef {
        AttrDef {
            name,
            kind,
            default: Some(default),
            optional: false,
            doc,
        }
    }
    pub const fn optional(name: &'static str, kind: AttrKind, doc: &'static str) -> AttrDef {
        AttrDef {
            name,
            kind,
            default: None,
            optional: true,
            doc,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct RegionDef {
    pub name: &'static str,
    pub doc: &'static str,
}

/// Input to result-type inference: operand types, attributes (defaults filled),
/// and operand constants where known (for value-dependent shapes).
pub struct InferCtx<'a> {
    pub operand_types: &'a [Type],
    pub attrs: AttrDict,
    pub operand_consts: &'a [Option<Attribute>],
    /// Number of operands in each operand group of the definition.
    pub group_sizes: &'a [usize],
    /// The op's regions, when inferring for an existing op.
    pub op: Option<(&'a Body, OpId)>,
}

/// A folder's answer for one result: a constant or an existing value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FoldResult {
    Attr(Attribute),
    Value(ValueId),
}

/// A verifier's complaint: a message, optionally pointing at another op
/// (e.g. a function's verifier blaming one of its `return`s).
#[derive(Debug, Clone, PartialEq)]
pub struct OpError {
    pub msg: String,
    pub loc: Option<crate::location::Location>,
}

impl From<String> for OpError {
    fn from(msg: String) -> OpError {
        OpError { msg, loc: None }
    }
}

impl From<&str> for OpError {
    fn from(msg: &str) -> OpError {
        OpError {
            msg: msg.to_string(),
            loc: None,
        }
    }
}

pub type VerifyFn = fn(&Body, OpId) -> Result<(), OpError>;
pub type InferFn = fn(&InferCtx) -> Result<Vec<Type>, String>;
pub type FoldFn = fn(&Body, OpId, &[Option<Attribute>]) -> Option<Vec<FoldResult>>;
/// Reference semantics: operands in, results out (shapes computed from the operands).
pub type SemanticsFn = fn(
    &crate::interp::SemCtx<'_>,
    &[&crate::tensor::Tensor],
) -> Result<Vec<crate::tensor::Tensor>, String>;
pub type CustomParseFn = fn(&mut crate::parser::OpParser<'_, '_, '_>) -> crate::parser::PResult<()>;
pub type CustomPrintFn = fn(&mut crate::printer::OpPrinter<'_, '_>, OpId);

/// A hand-written assembly syntax (for what a declarative format cannot say,
/// such as a function signature that names the entry block arguments).
#[derive(Clone, Copy)]
pub struct CustomSyntax {
    pub parse: CustomParseFn,
    pub print: CustomPrintFn,
}

impl std::fmt::Debug for CustomSyntax {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CustomSyntax")
    }
}

/// The one definition of an op.
#[derive(Debug)]
pub struct OpDef {
    pub name: &'static str,
    pub summary: &'static str,
    pub description: &'static str,
    pub operands: &'static [OperandDef],
    pub results: &'static [ResultDef],
    pub attrs: &'static [AttrDef],
    pub regions: &'static [RegionDef],
    pub traits: &'static [Trait],
    /// Declarative assembly format (MLIR syntax, see `format.rs`).
    pub format: Option<&'static str>,
    pub syntax: Option<CustomSyntax>,
    pub verify: Option<VerifyFn>,
    pub infer: Option<InferFn>,
    pub fold: Option<FoldFn>,
    /// Reference semantics: what the interpreter runs (and constant folding reuses).
    pub semantics: Option<SemanticsFn>,
    /// The op interfaces the op implements (see [`crate::interfaces`]).
    pub interfaces: &'static [&'static dyn OpInterface],
    /// Compiled `format`, built on first use.
    pub compiled: LazyCell<Result<CompiledFormat, String>>,
    /// Parsed attribute defaults (index-aligned with `attrs`), built on first use.
    pub defaults: LazyCell<Vec<Option<Attribute>>>,
}

/// A value computed on first use and kept for the process lifetime.
///
/// `OpDef`s are `static`s built with `..OpDef::DEFAULT`, which rules out
/// fields with drop glue such as `OnceLock`; an atomic pointer to a leaked
/// value has none. A lost initialisation race leaks one extra value.
pub struct LazyCell<T: 'static> {
    ptr: AtomicPtr<T>,
}

impl<T: 'static> Default for LazyCell<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: 'static> LazyCell<T> {
    pub const fn new() -> LazyCell<T> {
        LazyCell {
            ptr: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
    pub fn get(&self) -> Option<&'static T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: non-null pointers stored here come from `Box::leak` and are never freed.
        unsafe { p.as_ref() }
    }
    pub fn get_or_init(&self, f: impl FnOnce() -> T) -> &'static T {
        if let Some(v) = self.get() {
            return v;
        }
        let fresh: *mut T = Box::leak(Box::new(f()));
        match self.ptr.compare_exchange(
            std::ptr::null_mut(),
            fresh,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // SAFETY: `fresh` comes from Box::leak just above, so it is valid,
            // aligned and never freed; it is now the published value.
            Ok(_) => unsafe { &*fresh },
            // SAFETY: as above; the winner's value is leaked too.
            Err(existing) => unsafe { &*existing },
        }
    }
}

impl<T> std::fmt::Debug for LazyCell<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.get().is_some() {
            "LazyCell(set)"
        } else {
            "LazyCell(unset)"
        })
    }
}

impl std::fmt::Debug for dyn OpInterface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.interface_name())
    }
}

impl OpDef {
    /// The base of every definition (`..OpDef::DEFAULT`). Its lazy caches are
    /// null pointers copied into each static, never shared state.
    #[allow(clippy::declare_interior_mutable_const)]
    pub const DEFAULT: OpDef = OpDef {
        name: "",
        summary: "",
        description: "",
        operands: &[],
        results: &[],
        attrs: &[],
        regions: &[],
        traits: &[],
        format: None,
        syntax: None,
        verify: None,
        infer: None,
        fold: None,
        semantics: None,
        interfaces: &[],
        compiled: LazyCell::new(),
        defaults: LazyCell::new(),
    };

    pub fn has_trait(&self, t: Trait) -> bool {
        self.traits.contains(&t)
    }

    /// The op's identity, for side tables keyed by op.
    pub fn key(&'static self) -> OpKey {
        OpKey(self)
    }

    /// Interface `T` as the op's declaration implements it (run-time
    /// registrations: [`crate::Context::op_interface`]).
    pub fn interface<T: OpInterface>(&'static self) -> Option<&'static T> {
        self.interfaces
            .iter()
            .find_map(|i| i.as_any().downcast_ref::<T>())
    }

    pub fn dialect(&self) -> &'static str {
        self.name.split_once('.').map_or("builtin", |(d, _)| d)
    }

    pub fn attr_def(&self, name: &str) -> Option<&AttrDef> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// Whether `name` is an inherent attribute of this op — one its definition
    /// declares, or the operand segment sizes of an op with several optional
    /// operand groups. Inherent attributes are the op's *properties*: the
    /// generic form prints them in `<{...}>`, the others (discardable,
    /// e.g. `ge.stream`) in `{...}`, as MLIR does.
    pub fn is_inherent_attr(&self, name: &str) -> bool {
        name == OPERAND_SEGMENT_SIZES || self.attr_def(name).is_some()
    }

    /// Default values of the attributes (parsed once).
    pub fn default_values(&'static self) -> &'static [Option<Attribute>] {
        self.defaults.get_or_init(|| {
            self.attrs
                .iter()
                .map(|a| {
                    a.default
                        .and_then(|t| crate::parser::parse_attr_str(crate::context::bare(), t).ok())
                })
                .collect()
        })
    }

    /// The compiled declarative format, if the op has one.
    pub fn compiled_format(&'static self) -> Option<&'static CompiledFormat> {
        let fmt = self.format?;
        self.compiled
            .get_or_init(|| CompiledFormat::compile(self, fmt))
            .as_ref()
            .ok()
    }

    /// Split a flat operand list into the definition's groups (at most one
    /// variadic/optional group unless sizes are given by `operand_segment_sizes`).
    pub fn group_sizes(
        &self,
        groups: &[OperandDef],
        n: usize,
        segments: Option<&[i64]>,
    ) -> Option<Vec<usize>> {
        if let Some(seg) = segments {
            if seg.len() == groups.len() && seg.iter().sum::<i64>() as usize == n {
                return Some(seg.iter().map(|&s| s as usize).collect());
            }
            return None;
        }
        let fixed = groups.iter().filter(|g| g.arity == Arity::One).count();
        let flexible: Vec<usize> = groups
            .iter()
            .enumerate()
            .filter(|(_, g)| g.arity != Arity::One)
            .map(|(i, _)| i)
            .collect();
        match flexible.len() {
            0 => (n == fixed).then(|| vec![1; groups.len()]),
            1 => {
                let rest = n.checked_sub(fixed)?;
                let f = flexible[0];
                if groups[f].arity == Arity::Optional && rest > 1 {
                    return None;
                }
                Some(
                    groups
                        .iter()
                        .enumerate()
                        .map(|(i, _)| if i == f { rest } else { 1 })
                        .collect(),
                )
            }
            _ => {
                // Several optional groups without segment sizes: fill in order.
                let mut rest = n.checked_sub(fixed)?;
                let mut out = Vec::with_capacity(groups.len());
                for g in groups {
                    match g.arity {
                        Arity::One => out.push(1),
                        Arity::Optional => {
                            let take = rest.min(1);
                            rest -= take;
                            out.push(take)
                        }
                        Arity::Variadic => {
                            out.push(rest);
                            rest = 0
                        }
                    }
                }
                (rest == 0).then_some(out)
            }
        }
    }
}

/// ge's name for MLIR's `operandSegmentSizes` property.
pub const OPERAND_SEGMENT_SIZES: &str = "operand_segment_sizes";

impl OpDef {
    /// The operand indices of operand group `i` of op `d` (`None` when the
    /// op's operands do not fit the definition).
    pub fn operand_range(
        &self,
        d: &crate::body::OpData,
        i: usize,
    ) -> Option<std::ops::Range<usize>> {
        let seg = || {
            d.attr("operand_segment_sizes")
                .and_then(|a| a.as_i64_array())
        };
        self.group_range(self.operands, d.operands().len(), seg, i)
    }

    /// The result indices of result group `i` of op `d`.
    pub fn result_range(
        &self,
        d: &crate::body::OpData,
        i: usize,
    ) -> Option<std::ops::Range<usize>> {
        self.group_range(self.results, d.results().len(), || None, i)
    }

    /// Group `i` of `n` values split over `groups`; segment sizes are read
    /// only when several groups are optional or variadic.
    fn group_range(
        &self,
        groups: &[OperandDef],
        n: usize,
        segments: impl Fn() -> Option<Vec<i64>>,
        i: usize,
    ) -> Option<std::ops::Range<usize>> {
        let flexible = groups.iter().filter(|g| g.arity != Arity::One).count();
        if flexible <= 1 {
            return group_range_simple(groups, n, i);
        }
        let sizes = self.group_sizes(groups, n, segments().as_deref())?;
        let start: usize = sizes.get(..i)?.iter().sum();
        Some(start..start + sizes.get(i)?)
    }

    /// Whether op `d`'s operand and result counts fit the definition (what
    /// a typed handle checks before its accessors index).
    pub fn fits(&self, d: &crate::body::OpData) -> bool {
        (0..self.operands.len()).all(|i| self.operand_range(d, i).is_some())
            && (0..self.results.len()).all(|i| self.result_range(d, i).is_some())
    }
}

/// Group `i` of `n` values split over `groups` with at most one flexible group.
fn group_range_simple(groups: &[OperandDef], n: usize, i: usize) -> Option<std::ops::Range<usize>> {
    let fixed = groups.iter().filter(|g| g.arity == Arity::One).count();
    let rest = n.checked_sub(fixed)?;
    let flex = groups.iter().position(|g| g.arity != Arity::One);
    match flex {
        None if rest != 0 => return None,
        Some(f) if groups[f].arity == Arity::Optional && rest > 1 => return None,
        _ => {}
    }
    let size = |j: usize| if Some(j) == flex { rest } else { 1 };
    let start: usize = (0..i).map(size).sum();
    (i < groups.len()).then(|| start..start + size(i))
}

/// Where typed attribute accessors read attributes from: an op, an
/// attribute dictionary, or the context of an inference or semantics hook.
pub trait AttrSource {
    fn attr_dict(&self) -> AttrDict;
}

impl AttrSource for AttrDict {
    fn attr_dict(&self) -> AttrDict {
        *self
    }
}

impl AttrSource for crate::body::OpData {
    fn attr_dict(&self) -> AttrDict {
        self.attrs
    }
}

impl AttrSource for InferCtx<'_> {
    fn attr_dict(&self) -> AttrDict {
        self.attrs
    }
}

impl AttrSource for crate::interp::SemCtx<'_> {
    fn attr_dict(&self) -> AttrDict {
        self.body.op(self.op).attrs
    }
}

impl AttrSource for crate::interfaces::CostCtx<'_> {
    fn attr_dict(&self) -> AttrDict {
        self.attrs
    }
}

impl<T: AttrSource + ?Sized> AttrSource for &T {
    fn attr_dict(&self) -> AttrDict {
        (**self).attr_dict()
    }
}

/// A dialect: a namespace and its ops, in groups (one per op family module).
pub struct Dialect {
    pub name: &'static str,
    pub summary: &'static str,
    pub groups: &'static [&'static [&'static OpDef]],
}

impl Dialect {
    pub fn ops(&self) -> impl Iterator<Item = &'static OpDef> + '_ {
        self.groups.iter().flat_map(|g| g.iter().copied())
    }
}
