//! Graph conversion: scopes of ONNX value names, nodes and their attributes,
//! subgraphs (If/Loop bodies), model-local functions expanded inline, and the
//! symbolic dims of `dim_param`s.

use super::ops;
use super::tensor::{dtype_from_onnx, tensor_attr};
use crate::emit::Emitter;
use crate::error::{ImportError, ImportErrorKind};
use crate::proto::onnx::{
    attribute_proto::AttributeType, type_proto, AttributeProto, FunctionProto, GraphProto,
    NodeProto, TensorProto, ValueInfoProto,
};
use ge_ir::body::{BlockId, ValueId};
use ge_ir::verifier::types_compatible;
use ge_ir::{Dim, Location, Type};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

/// What a mapping function returns.
pub type Res<T> = Result<T, ImportError>;

impl From<String> for ImportError {
    fn from(s: String) -> ImportError {
        ImportError::invalid(s)
    }
}

/// `dim_param` names → valid IR symbols (upper case `[A-Z][A-Z0-9_]*`).
#[derive(Default)]
pub struct Symbols {
    pub map: BTreeMap<String, String>,
    used: HashSet<String>,
    /// Upper bounds of size symbols (a NonZero's count is at most its
    /// operand's element count), recorded in `ge.symbol_bounds`.
    pub bounds: BTreeMap<String, i64>,
    /// Equalities of input symbols learned by an earlier import pass
    /// (`ge.symbol_equalities`, see `ge_ir::dim::equal`).
    pub equal: ge_ir::dim::SymbolEqualities,
}

impl Symbols {
    /// A symbol for a value symbol (a dim decided by values at run time)
    /// named after `what`, distinct from every other symbol; not an ONNX
    /// `dim_param`, so not in [`Symbols::map`].
    pub fn fresh(&mut self, what: &str) -> String {
        let s = sanitize(what);
        let mut cand = s.clone();
        let mut k = 2;
        while self.used.contains(&cand) {
            cand = format!("{s}_{k}");
            k += 1;
        }
        self.used.insert(cand.clone());
        cand
    }

    /// The largest size dim `d` can take: static, or an expression of
    /// symbols with an upper bound in [`Symbols::bounds`] (`None`: `?` or
    /// a symbol without one).
    pub fn upper_bound(&self, d: Dim) -> Option<i64> {
        let bounds: std::collections::HashMap<ge_ir::Ident, i64> = self
            .bounds
            .iter()
            .map(|(s, &b)| (ge_ir::Ident::new(s), b))
            .collect();
        d.upper_bound(&bounds)
    }

    /// Bound symbol `s` by `b` (keeping a smaller bound it already has):
    /// the runtime refuses a binding above it, so a use may rely on it.
    pub fn bound_by(&mut self, s: &str, b: i64) {
        let e = self.bounds.entry(s.to_string()).or_insert(b);
        *e = (*e).min(b);
    }

    /// Whether `name` is a symbol the values decide (a value or size
    /// symbol from [`Symbols::fresh`]), not an input's `dim_param`.
    pub fn is_fresh(&self, name: &str) -> bool {
        self.used.contains(name) && !self.map.values().any(|v| v == name)
    }

    /// The symbol for an ONNX `dim_param`: upper-cased, other characters
    /// replaced by `_`, prefixed with `S` unless it starts with a letter, and
    /// suffixed `_2`, `_3`… when two params would collide.
    pub fn symbol(&mut self, param: &str) -> String {
        if let Some(s) = self.map.get(param) {
            return s.clone();
        }
        let cand = self.fresh(param);
        self.map.insert(param.to_string(), cand.clone());
        cand
    }
}

/// `name` as an IR symbol: upper-cased, other characters replaced by `_`,
/// prefixed with `S` unless it starts with a letter.
pub fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_uppercase();
            if c.is_ascii_uppercase() || c.is_ascii_digit() {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_uppercase()) {
        s.insert(0, 'S');
    }
    s
}

/// Facts about the whole model that every scope shares.
pub struct ModelInfo {
    /// The model file as the user named it (for locations and messages).
    pub path: String,
    /// The folder external data is resolved against.
    pub base: PathBuf,
    /// Model-local functions by (domain, name).
    pub functions: HashMap<(String, String), FunctionProto>,
}

/// Normalise a domain: `ai.onnx` is the default domain `""`.
pub fn norm_domain(d: &str) -> &str {
    if d == "ai.onnx" {
        ""
    } else {
        d
    }
}

/// One level of name lookup: a graph, a subgraph, or an expanded function.
#[derive(Default)]
struct Scope {
    values: HashMap<String, ValueId>,
    /// Declared types of values (graph `value_info` and outputs).
    declared: HashMap<String, ValueInfoProto>,
    /// Opset per domain; `None` means inherit from the enclosing scope.
    opsets: Option<HashMap<String, i64>>,
    /// Attributes of the function call being expanded (for `ref_attr_name`).
    call_attrs: Option<HashMap<String, AttributeProto>>,
    /// Location prefix of the expanded function call.
    call_loc: Option<String>,
}

/// A node ready for its mapping function: inputs resolved to values,
/// attributes resolved (function references substituted).
pub struct Node {
    pub op_type: String,
    pub name: String,
    pub inputs: Vec<Option<ValueId>>,
    pub input_names: Vec<String>,
    pub attrs: HashMap<String, AttributeProto>,
    pub num_outputs: usize,
    /// Which outputs the model uses (non-empty names).
    pub outputs_used: Vec<bool>,
    /// The outputs' ONNX names (empty: unused).
    pub output_names: Vec<String>,
    pub opset: i64,
}

impl Node {
    /// Required input `i`.
    pub fn input(&self, i: usize) -> Res<ValueId> {
        self.inputs
            .get(i)
            .copied()
            .flatten()
            .ok_or_else(|| ImportError::invalid(format!("{} requires input #{i}", self.op_type)))
    }
    /// Optional input `i` (absent or the empty name).
    pub fn opt_input(&self, i: usize) -> Option<ValueId> {
        self.inputs.get(i).copied().flatten()
    }
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }
    /// Every present input.
    pub fn present_inputs(&self) -> Vec<ValueId> {
        self.inputs.iter().flatten().copied().collect()
    }
    pub fn attr(&self, name: &str) -> Option<&AttributeProto> {
        self.attrs.get(name)
    }
    pub fn has(&self, name: &str) -> bool {
        self.attrs.contains_key(name)
    }
    fn bad(&self, name: &str, want: &str) -> ImportError {
        ImportError::invalid(format!(
            "attribute '{name}' of {} must be {want}",
            self.op_type
        ))
    }
    pub fn i(&self, name: &str, default: i64) -> Res<i64> {
        match self.attr(name) {
            None => Ok(default),
            Some(a) => a.i.ok_or_else(|| self.bad(name, "an integer")),
        }
    }
    pub fn opt_i(&self, name: &str) -> Res<Option<i64>> {
        match self.attr(name) {
            None => Ok(None),
            Some(a) => a.i.map(Some).ok_or_else(|| self.bad(name, "an integer")),
        }
    }
    pub fn f(&self, name: &str, default: f32) -> Res<f32> {
        match self.attr(name) {
            None => Ok(default),
            Some(a) => {
                a.f.or(a.i.map(|i| i as f32))
                    .ok_or_else(|| self.bad(name, "a float"))
            }
        }
    }
    pub fn opt_f(&self, name: &str) -> Res<Option<f32>> {
        match self.attr(name) {
            None => Ok(None),
            Some(_) => self.f(name, 0.0).map(Some),
        }
    }
    pub fn s(&self, name: &str, default: &str) -> Res<String> {
        match self.attr(name) {
            None => Ok(default.to_string()),
            Some(a) => {
                a.s.as_ref()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .ok_or_else(|| self.bad(name, "a string"))
            }
        }
    }
    pub fn ints(&self, name: &str) -> Option<Vec<i64>> {
        self.attr(name).map(|a| a.ints.clone())
    }
    pub fn floats(&self, name: &str) -> Option<Vec<f32>> {
        self.attr(name).map(|a| a.floats.clone())
    }
    pub fn tensor(&self, name: &str) -> Option<&TensorProto> {
        self.attr(name).and_then(|a| a.t.as_ref())
    }
    pub fn graph(&self, name: &str) -> Res<GraphProto> {
        self.attr(name)
            .and_then(|a| a.g.clone())
            .ok_or_else(|| self.bad(name, "a graph"))
    }
}

/// The conversion context mapping functions work with.
pub struct Cx<'a> {
    pub e: Emitter<'a>,
    pub model: &'a ModelInfo,
    pub symbols: &'a mut Symbols,
    scopes: Vec<Scope>,
    /// ONNX names of values (for messages about them).
    pub names: HashMap<ValueId, String>,
    /// Functions being expanded (guards against recursion).
    expanding: Vec<String>,
    /// Location of the node being converted.
    pub loc: Location,
    /// Check computed values against the model's declared types (off when
    /// the caller overrides input shapes: the declarations describe the old ones).
    pub check_declared_types: bool,
    /// Shape values known as dim expressions (`symbolic.rs`).
    pub sym: HashMap<ValueId, super::symbolic::SymVal>,
    /// The value symbol of each run-time element a dim is exactly
    /// (`elements.rs`).
    pub elem_syms: HashMap<(ValueId, usize), Dim>,
    /// If results whose rank-0 branch value is yielded as `[1]`, with the
    /// error to give if a use could see it (`ops/control.rs`).
    pub promoted: Vec<(ValueId, String)>,
}

impl<'a> Cx<'a> {
    pub fn new(
        e: Emitter<'a>,
        model: &'a ModelInfo,
        symbols: &'a mut Symbols,
        opsets: HashMap<String, i64>,
    ) -> Cx<'a> {
        Cx {
            e,
            model,
            symbols,
            scopes: vec![Scope {
                opsets: Some(opsets),
                ..Scope::default()
            }],
            names: HashMap::new(),
            expanding: vec![],
            loc: Location::unknown(),
            check_declared_types: true,
            sym: HashMap::new(),
            elem_syms: HashMap::new(),
            promoted: vec![],
        }
    }

    pub fn file_loc(&self) -> Location {
        Location::file(&self.model.path, 0, 0)
    }

    /// Bind an ONNX name in the innermost scope.
    pub fn define(&mut self, name: &str, v: ValueId) {
        if let Some(s) = self.scopes.last_mut() {
            s.values.insert(name.to_string(), v);
        }
        self.names.entry(v).or_insert_with(|| name.to_string());
    }

    pub fn lookup(&self, name: &str) -> Option<ValueId> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.values.get(name).copied())
    }

    fn declared(&self, name: &str) -> Option<&ValueInfoProto> {
        self.scopes.iter().rev().find_map(|s| s.declared.get(name))
    }

    /// The opset of `domain` in the current scope.
    pub fn opset(&self, domain: &str) -> Option<i64> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.opsets.as_ref())
            .and_then(|m| m.get(norm_domain(domain)).copied())
    }

    /// The ONNX name of a value, for messages.
    pub fn name_of(&self, v: ValueId) -> String {
        self.names
            .get(&v)
            .cloned()
            .unwrap_or_else(|| "an intermediate value".to_string())
    }

    /// An error saying `v` must be a compile-time constant.
    pub fn not_constant(&self, v: ValueId, what: &str) -> ImportError {
        let name = self.name_of(v);
        ImportError::new(
            ImportErrorKind::NotConstant(name.clone()),
            format!("{what} ('{name}') must be a constant (an initializer or computable at import time)"),
        )
    }

    /// Op `name` whose attributes `values` (value, attribute, kind) are read
    /// from tensor values at run time — operands that are graph inputs or
    /// computed (hybrid execution, docs/architecture.md "Execution modes"):
    /// a `graph.specialize`. Its result types are the node's declared output
    /// types, whose dims must be static or symbols of `data`'s types (what the
    /// runtime can plan before the op runs); otherwise the import fails with
    /// the `NotConstant` error of the first value.
    pub fn specialize(
        &mut self,
        n: &Node,
        name: &str,
        data: &[ValueId],
        attrs: Vec<(&str, ge_ir::attributes::Attribute)>,
        values: &[(ValueId, &str, ge_dialects::graph::specialize::ValueKind)],
        num_results: usize,
    ) -> Res<Vec<ValueId>> {
        self.specialize_impl(n, None, name, data, attrs, values, num_results)
    }

    /// [`Self::specialize`] for an intermediate value of node `n` (not one
    /// of its outputs): no declared types, value symbols named after `base`.
    #[allow(clippy::too_many_arguments)]
    pub fn specialize_as(
        &mut self,
        n: &Node,
        base: &str,
        name: &str,
        data: &[ValueId],
        attrs: Vec<(&str, ge_ir::attributes::Attribute)>,
        values: &[(ValueId, &str, ge_dialects::graph::specialize::ValueKind)],
        num_results: usize,
    ) -> Res<Vec<ValueId>> {
        self.specialize_impl(n, Some(base), name, data, attrs, values, num_results)
    }

    #[allow(clippy::too_many_arguments)]
    fn specialize_impl(
        &mut self,
        n: &Node,
        base: Option<&str>,
        name: &str,
        data: &[ValueId],
        attrs: Vec<(&str, ge_ir::attributes::Attribute)>,
        values: &[(ValueId, &str, ge_dialects::graph::specialize::ValueKind)],
        num_results: usize,
    ) -> Res<Vec<ValueId>> {
        let Some(&(first, what, _)) = values.first() else {
            return Err(ImportError::invalid(format!(
                "{name}: nothing to specialise"
            )));
        };
        let def = ge_dialects::graph::specialize::registry()
            .op_def(name)
            .ok_or_else(|| ImportError::invalid(format!("unknown op {name}")))?;
        let data_types: Vec<Type> = data.iter().map(|&v| self.e.ty(v)).collect();
        ge_dialects::graph::specialize::check_data(def, &data_types)
            .map_err(ImportError::unsupported)?;
        let known: HashSet<ge_ir::Ident> = data
            .iter()
            .filter_map(|&v| self.e.ty(v).as_tensor()?.dims.clone())
            .flat_map(|d| {
                let mut out = vec![];
                d.iter()
                    .filter_map(|x| x.expr())
                    .for_each(|x| x.symbols(&mut out));
                out
            })
            .collect();
        let declared: Vec<Option<Type>> = (0..num_results)
            .map(|k| {
                n.output_names
                    .get(k)
                    .filter(|_| base.is_none())
                    .and_then(|o| self.declared(o).cloned())
                    .filter(|vi| vi.r#type.is_some())
                    .and_then(|vi| self.value_type(&vi).ok())
            })
            .collect();
        let plannable = |t: &Type| {
            t.as_tensor().and_then(|t| t.dims.clone()).is_some_and(|d| {
                d.iter().all(|x| {
                    let mut syms = vec![];
                    if let Some(e) = x.expr() {
                        e.symbols(&mut syms);
                    }
                    !matches!(x, Dim::Unknown) && syms.iter().all(|s| known.contains(s))
                })
            })
        };
        let types: Vec<Type> = if declared.iter().all(|t| t.as_ref().is_some_and(plannable)) {
            declared.into_iter().flatten().collect()
        } else {
            let ranks = self.value_symbol_ranks(name, &data_types, &attrs, values, num_results);
            match ranks {
                Some(r) if self.computable_at_run_start(values) => {
                    let bases: Vec<String> = (0..r.len())
                        .map(|k| match base {
                            Some(b) => b.to_string(),
                            None => n
                                .output_names
                                .get(k)
                                .filter(|o| !o.is_empty())
                                .cloned()
                                .unwrap_or_else(|| format!("{}_{k}", n.name)),
                        })
                        .collect();
                    let hints = self.value_dim_hints(name, &data_types, &attrs, values, &bases);
                    let shared = super::value_symbols::results_share_dims(name);
                    self.value_symbol_types(&bases, &declared, &r, &hints, shared)
                }
                Some(r) if self.computable_in_region(values) => region_value_types(&declared, &r),
                _ => {
                    let mut e = self.not_constant(first, what);
                    e.message.push_str(
                        "; read at run time it needs the output's shape declared (static, or dims of the inputs), or its values to be graph inputs",
                    );
                    return Err(e);
                }
            }
        };
        self.create_specialize(name, data, attrs, values, types)
    }

    /// A `graph.specialize` of `name` with result types `types` that the
    /// importer knows (dims static or over symbols bound before the op runs:
    /// a Split by sizes computed from dims, `(S+1)/2` and `S-(S+1)/2`); its
    /// kernel builds the concrete op from the values it reads at run time and
    /// refuses a result that differs from `types`.
    pub fn create_specialize(
        &mut self,
        name: &str,
        data: &[ValueId],
        attrs: Vec<(&str, ge_ir::attributes::Attribute)>,
        values: &[(ValueId, &str, ge_dialects::graph::specialize::ValueKind)],
        types: Vec<Type>,
    ) -> Res<Vec<ValueId>> {
        use ge_ir::attributes::{AttrDict, Attribute};
        let entries: Vec<(ge_ir::Ident, Attribute)> = attrs
            .into_iter()
            .map(|(k, v)| (ge_ir::Ident::new(k), v))
            .collect();
        let from: Vec<Attribute> = values
            .iter()
            .map(|(_, a, k)| Attribute::string(&format!("{a}:{}", k.name())))
            .collect();
        let operands: Vec<ValueId> = data
            .iter()
            .copied()
            .chain(values.iter().map(|v| v.0))
            .collect();
        let op = self.e.b.create(
            "graph.specialize",
            &operands,
            vec![
                ("op", Attribute::string(name)),
                ("static_attrs", Attribute::dict(AttrDict::new(entries))),
                ("from_values", Attribute::array(from)),
            ],
            Some(types),
            0,
        )?;
        Ok(self.e.b.body.op(op).results().to_vec())
    }

    /// Whether the runtime can compute the value operands `values` at run
    /// start: each is a graph input (an argument of the entry function, not
    /// of a subgraph), a constant, or computed from those by a small *host
    /// prefix* — at most `MAX_PREFIX_OPS` ops outside control flow, every
    /// result static and at most `MAX_VALUE_ELEMENTS` elements, where a
    /// `data.shape_of` reads only its operand's type (dims of the inputs or
    /// value symbols bound before). The runtime evaluates that prefix on the
    /// host before the shape is planned (`runtime/src/value_syms.rs`).
    pub(crate) fn computable_at_run_start(
        &self,
        values: &[(ValueId, &str, ge_dialects::graph::specialize::ValueKind)],
    ) -> bool {
        use ge_dialects::graph::specialize::{MAX_PREFIX_OPS, MAX_VALUE_ELEMENTS};
        use ge_ir::body::ValueDef;
        let body = &*self.e.b.body;
        let small = |v: ValueId| {
            body.value_type(v)
                .as_tensor()
                .and_then(|t| t.num_elements())
                .is_some_and(|k| k <= MAX_VALUE_ELEMENTS)
        };
        let mut seen: HashSet<ge_ir::body::OpId> = HashSet::new();
        let mut stack: Vec<ValueId> = values.iter().map(|v| v.0).collect();
        while let Some(v) = stack.pop() {
            let op = match body.value(v).def {
                ValueDef::BlockArg { block, .. } if body.block_parent_op(block).is_none() => {
                    continue
                }
                ValueDef::BlockArg { .. } => return false,
                ValueDef::Result { op, .. } => op,
            };
            if self.e.const_value(v).is_some() || !seen.insert(op) {
                continue;
            }
            let d = body.op(op);
            let in_entry = d
                .parent_block()
                .is_some_and(|b| body.block_parent_op(b).is_none());
            if seen.len() > MAX_PREFIX_OPS
                || !in_entry
                || !d.regions().is_empty()
                || !d.results().iter().all(|&r| small(r))
            {
                return false;
            }
            if ge_dialects::data::shape::ShapeOf::is(d) {
                // Only the operand's type is read: its dims must be known then.
                let dims = d
                    .operands()
                    .first()
                    .and_then(|&x| body.value_type(x).as_tensor()?.dims.clone());
                if !dims.is_some_and(|d| d.iter().all(|x| *x != Dim::Unknown)) {
                    return false;
                }
                continue;
            }
            stack.extend(d.operands().iter().copied());
        }
        true
    }

    /// Whether the value operands `values`, read inside a subgraph (a Loop
    /// or Scan body, an If branch), can be computed on the host before the
    /// region runs: each is computed in the subgraph's block by at most
    /// `MAX_PREFIX_OPS` ops without regions from the subgraph's inputs (the
    /// iteration number, loop-carried and scan values), values of the
    /// enclosing graphs, constants, or the shapes of values
    /// (`data.shape_of`). The region's kernel computes them per run of the
    /// region from those values and keys its programs on them
    /// (`runtime/src/kernels/control_flow.rs`, docs/architecture.md
    /// "Execution modes": values inside control flow).
    pub(crate) fn computable_in_region(
        &self,
        values: &[(ValueId, &str, ge_dialects::graph::specialize::ValueKind)],
    ) -> bool {
        use ge_dialects::graph::specialize::{MAX_PREFIX_OPS, MAX_VALUE_ELEMENTS};
        use ge_ir::body::ValueDef;
        let body = &*self.e.b.body;
        let Some(blk) = self.e.insertion_block() else {
            return false;
        };
        if body.block_parent_op(blk).is_none() {
            return false;
        }
        let mut seen: HashSet<ge_ir::body::OpId> = HashSet::new();
        let mut stack: Vec<ValueId> = values.iter().map(|v| v.0).collect();
        while let Some(v) = stack.pop() {
            let op = match body.value(v).def {
                ValueDef::Result { op, .. } if body.op(op).parent_block() == Some(blk) => op,
                // Read by value per run of the region: a small value.
                _ => match body
                    .value_type(v)
                    .as_tensor()
                    .and_then(|t| t.num_elements())
                {
                    Some(n) if n > MAX_VALUE_ELEMENTS => return false,
                    _ => continue,
                },
            };
            if !seen.insert(op) {
                continue;
            }
            let d = body.op(op);
            if seen.len() > MAX_PREFIX_OPS || !d.regions().is_empty() {
                return false;
            }
            if !ge_dialects::data::shape::ShapeOf::is(d) {
                stack.extend(d.operands().iter().copied());
            }
        }
        true
    }

    /// Rank and element type of each result of a `graph.specialize` of
    /// `name` ([`super::value_symbols::result_ranks`]).
    fn value_symbol_ranks(
        &self,
        name: &str,
        data: &[Type],
        attrs: &[(&str, ge_ir::attributes::Attribute)],
        values: &[(ValueId, &str, ge_dialects::graph::specialize::ValueKind)],
        num_results: usize,
    ) -> Option<Vec<(usize, ge_ir::DType)>> {
        let ops: Vec<super::value_symbols::ValueOperand> = values
            .iter()
            .map(|&(v, attr, _)| {
                let len = self.e.ty(v).as_tensor()?.num_elements()?;
                Some(super::value_symbols::ValueOperand {
                    attr,
                    len: usize::try_from(len).ok()?,
                })
            })
            .collect::<Option<_>>()?;
        super::value_symbols::result_ranks(name, data, &ops, attrs, num_results)
    }

    /// Result types with value symbols: each result's declared dims where
    /// they are static or symbols, a fresh symbol for every other dim (named
    /// after the ONNX output and the dim), bound by the runtime at run start
    /// from the values (docs/architecture.md "Execution modes"). `hints`
    /// are the first result's; with `shared` (an op whose results always
    /// have one shape: TopK's values and indices) every result takes the
    /// first's dims, so the two are known to be the same length.
    fn value_symbol_types(
        &mut self,
        bases: &[String],
        declared: &[Option<Type>],
        ranks: &[(usize, ge_ir::DType)],
        hints: &[Option<Dim>],
        shared: bool,
    ) -> Vec<Type> {
        let mut out: Vec<Type> = vec![];
        for (k, &(rank, dt)) in ranks.iter().enumerate() {
            let first = out.first().and_then(|t| t.as_tensor()?.dims.clone());
            if let Some(dims) = first.filter(|d| shared && d.len() == rank) {
                out.push(Type::tensor(&dims, dt));
                continue;
            }
            let decl = declared[k]
                .and_then(|t| t.as_tensor()?.dims.clone())
                .filter(|d| d.len() == rank);
            let base = &bases[k];
            let dims: Vec<Dim> = (0..rank)
                .map(|i| match decl.as_ref().map(|d| d[i]) {
                    Some(d) if d != Dim::Unknown => d,
                    _ => match hints.get(i).copied().flatten().filter(|_| k == 0) {
                        Some(d) if d != Dim::Unknown => d,
                        _ => Dim::sym(&self.symbols.fresh(&format!("{base}_{i}"))),
                    },
                })
                .collect();
            out.push(Type::tensor(&dims, dt));
        }
        out
    }

    /// What the values decide of the first result's dims before the run
    /// (`None`: a fresh value symbol): an Expand target's known elements
    /// ([`super::value_symbols::expand_dims`]), and a dim that is exactly one
    /// run-time element — an Expand (ConstantOfShape) dim against 1 or a new
    /// one, a `Range(0, L, 1)` length — that element's symbol, shared by
    /// every dim that is that element (`elements.rs`).
    fn value_dim_hints(
        &mut self,
        name: &str,
        data: &[Type],
        attrs: &[(&str, ge_ir::attributes::Attribute)],
        values: &[(ValueId, &str, ge_dialects::graph::specialize::ValueKind)],
        bases: &[String],
    ) -> Vec<Option<Dim>> {
        use super::elements::Elem;
        let base = bases.first().cloned().unwrap_or_default();
        let attr = |k: &str| attrs.iter().find(|(a, _)| *a == k).map(|(_, v)| *v);
        match (name, data.first(), values) {
            ("data.expand", Some(x), [(target, _, _)]) => {
                let x = x.as_tensor().and_then(|t| t.dims.clone());
                let (Some(x), Some(t)) = (x, self.elements(*target)) else {
                    return vec![];
                };
                let known: Vec<Option<i64>> = t
                    .iter()
                    .map(|e| match e {
                        Elem::Known(k) => Some(*k),
                        Elem::Of(..) => None,
                    })
                    .collect();
                let mut hints = super::value_symbols::expand_dims(&x, &known);
                let r = hints.len();
                for (i, h) in hints.iter_mut().enumerate() {
                    let xd = (i + x.len()).checked_sub(r).map(|j| x[j]);
                    let te = (i + t.len()).checked_sub(r).map(|j| t[j]);
                    if let (None, None | Some(Dim::Static(1)), Some(Elem::Of(v, k))) = (*h, xd, te)
                    {
                        *h = Some(self.element_symbol((v, k), &format!("{base}_{i}")));
                    }
                }
                hints
            }
            // A Reshape target element is the dim, except 0 (the input's dim,
            // unless `allowzero`) and -1 (inferred).
            ("data.reshape", Some(x), [(target, _, _)]) => {
                let x = x
                    .as_tensor()
                    .and_then(|t| t.dims.clone())
                    .unwrap_or_default();
                let allowzero = attr("allowzero").and_then(|a| a.as_int()).unwrap_or(0) != 0;
                let Some(t) = self.elements(*target) else {
                    return vec![];
                };
                t.iter()
                    .enumerate()
                    .map(|(i, e)| match *e {
                        Elem::Known(k) if k > 0 || (k == 0 && allowzero) => Some(Dim::Static(k)),
                        Elem::Known(0) => x.get(i).copied().filter(|d| *d != Dim::Unknown),
                        Elem::Known(_) => None,
                        Elem::Of(v, k) => Some(self.element_symbol((v, k), &format!("{base}_{i}"))),
                    })
                    .collect()
            }
            // TopK: the input's dims, K along the axis — a symbol at most
            // the axis' length (TopK refuses a larger K, and the runtime a
            // binding above the bound), so a size op after it (SSD's
            // NonMaxSuppression over the concatenated top K of each level)
            // has a bound to plan.
            ("graph.topk", Some(x), [(k, _, _)]) => {
                let Some(x) = x.as_tensor().and_then(|t| t.dims.clone()) else {
                    return vec![];
                };
                let rank = x.len() as i64;
                let axis = attr("axis").and_then(|a| a.as_int()).unwrap_or(-1);
                let axis = if axis < 0 { axis + rank } else { axis };
                let len = usize::try_from(axis).ok().and_then(|a| x.get(a).copied());
                let most = len.and_then(|d| self.symbols.upper_bound(d));
                let name = format!("{base}_{axis}");
                let along = match self.elements(*k).as_deref() {
                    Some(&[Elem::Known(n)]) if n >= 0 => Some(Dim::Static(n)),
                    Some(&[Elem::Of(v, i)]) => Some(self.element_symbol((v, i), &name)),
                    _ => Some(Dim::sym(&self.symbols.fresh(&name))),
                };
                if let (Some(s), Some(b)) = (along.and_then(Dim::as_symbol), most) {
                    self.symbols.bound_by(s.as_str(), b);
                }
                x.iter()
                    .enumerate()
                    .map(|(i, &d)| match i as i64 == axis {
                        true => along,
                        false => Some(d).filter(|d| *d != Dim::Unknown),
                    })
                    .collect()
            }
            ("graph.range", None, [(limit, "limit", _)]) => {
                let from_zero = attr("start").map_or(Some(0.0), |a| a.as_float()) == Some(0.0)
                    && attr("delta").map_or(Some(1.0), |a| a.as_float()) == Some(1.0);
                match self.elements(*limit).as_deref() {
                    Some(&[Elem::Of(v, k)]) if from_zero => {
                        vec![Some(self.element_symbol((v, k), &format!("{base}_0")))]
                    }
                    _ => vec![],
                }
            }
            _ => vec![],
        }
    }

    /// Whether `v` is a compile-time constant.
    pub fn is_const(&self, v: ValueId) -> bool {
        self.e.const_value(v).is_some()
    }

    /// The constant value of `v`, or a not-constant error naming `what`.
    pub fn const_tensor(&self, v: ValueId, what: &str) -> Res<ge_ir::tensor::Tensor> {
        self.e
            .const_value(v)
            .ok_or_else(|| self.not_constant(v, what))
    }

    pub fn const_i64s(&self, v: ValueId, what: &str) -> Res<Vec<i64>> {
        Ok(self.const_tensor(v, what)?.to_i64())
    }

    pub fn const_f64s(&self, v: ValueId, what: &str) -> Res<Vec<f64>> {
        Ok(self.const_tensor(v, what)?.to_f64())
    }

    /// The type of an ONNX value declaration.
    pub fn value_type(&mut self, vi: &ValueInfoProto) -> Res<Type> {
        let name = vi.name.clone().unwrap_or_default();
        let tp = vi.r#type.as_ref().ok_or_else(|| {
            ImportError::invalid(format!("value '{name}' is declared without a type"))
        })?;
        self.type_proto(tp)
            .map_err(|e| e.context(format!("value '{name}'")))
    }

    pub fn type_proto(&mut self, tp: &crate::proto::onnx::TypeProto) -> Res<Type> {
        match &tp.value {
            Some(type_proto::Value::TensorType(t)) => {
                let dt = dtype_from_onnx(t.elem_type.unwrap_or(0))?;
                let Some(shape) = &t.shape else {
                    return Ok(Type::unranked(dt));
                };
                let dims: Vec<Dim> = shape
                    .dim
                    .iter()
                    .map(|d| match &d.value {
                        Some(
                            crate::proto::onnx::tensor_shape_proto::dimension::Value::DimValue(n),
                        ) if *n >= 0 => Dim::Static(*n),
                        Some(
                            crate::proto::onnx::tensor_shape_proto::dimension::Value::DimParam(p),
                        ) if !p.is_empty() => self.symbols.dim(p),
                        _ => Dim::Unknown,
                    })
                    .collect();
                Ok(Type::tensor(&dims, dt))
            }
            Some(type_proto::Value::SequenceType(_)) => {
                Err(ImportError::unsupported("sequence types are not supported"))
            }
            Some(type_proto::Value::OptionalType(_)) => {
                Err(ImportError::unsupported("optional types are not supported"))
            }
            Some(type_proto::Value::MapType(_)) => {
                Err(ImportError::unsupported("map types are not supported"))
            }
            Some(type_proto::Value::SparseTensorType(_)) => Err(ImportError::unsupported(
                "sparse tensor types are not supported",
            )),
            None => Err(ImportError::invalid("the type is empty")),
        }
    }

    /// Create a constant for an initializer or tensor attribute.
    pub fn tensor_constant(&mut self, t: &TensorProto) -> Res<ValueId> {
        let a = tensor_attr(t, &self.model.base)?;
        Ok(self.e.constant_attr(a)?)
    }

    /// Declare the value infos of a graph in the current scope.
    fn declare_all(&mut self, g: &GraphProto) {
        if let Some(s) = self.scopes.last_mut() {
            for vi in g.value_info.iter().chain(&g.output) {
                if let Some(n) = &vi.name {
                    s.declared.insert(n.clone(), vi.clone());
                }
            }
        }
    }

    /// Convert the nodes of a graph (initializers first) in the current scope.
    pub fn convert_graph_body(&mut self, g: &GraphProto) -> Res<()> {
        self.declare_all(g);
        for init in &g.initializer {
            let name = init.name.clone().unwrap_or_default();
            if name.is_empty() {
                return Err(ImportError::invalid("an initializer has no name"));
            }
            self.e.set_loc(Location::name(&name, Some(self.file_loc())));
            let v = self
                .tensor_constant(init)
                .map_err(|e| e.context(format!("initializer '{name}'")))?;
            self.define(&name, v);
        }
        if !g.sparse_initializer.is_empty() {
            return Err(ImportError::unsupported(
                "sparse initializers are not supported",
            ));
        }
        for (idx, n) in g.node.iter().enumerate() {
            self.convert_node(n, idx)?;
        }
        Ok(())
    }

    /// The values of a graph's outputs, checked against their declared types.
    pub fn graph_outputs(&mut self, g: &GraphProto) -> Res<Vec<ValueId>> {
        let mut out = vec![];
        for o in &g.output {
            let name = o.name.clone().unwrap_or_default();
            let v = self.lookup(&name).ok_or_else(|| {
                ImportError::invalid(format!(
                    "graph output '{name}' is not produced by any node, input or initializer"
                ))
            })?;
            out.push(v);
        }
        Ok(out)
    }

    /// Check a computed value against its declared ONNX type.
    fn check_declared(&mut self, name: &str, v: ValueId) -> Res<()> {
        if !self.check_declared_types {
            return Ok(());
        }
        let Some(vi) = self.declared(name).cloned() else {
            return Ok(());
        };
        if vi.r#type.is_none() {
            return Ok(());
        }
        let Ok(want) = self.value_type(&vi) else {
            return Ok(());
        };
        let got = self.e.ty(v);
        let (Some(w), Some(g)) = (want.as_tensor(), got.as_tensor()) else {
            return Ok(());
        };
        let dtype_ok = w.dtype == g.dtype;
        let shape_ok = match (&w.dims, &g.dims) {
            (Some(wd), Some(gd)) => {
                wd.len() == gd.len()
                    && wd.iter().zip(gd.iter()).all(|(a, b)| match (a, b) {
                        (Dim::Static(x), Dim::Static(y)) => x == y,
                        _ => true,
                    })
            }
            _ => true,
        };
        if !dtype_ok || !shape_ok {
            return Err(ImportError::invalid(format!(
                "inconsistent shapes: '{name}' is declared as '{want}' but computes '{got}'"
            )));
        }
        self.narrow_in_region(v, want);
        Ok(())
    }

    /// Inside a subgraph, give a value computed there the static dims its
    /// declaration has where inference left `?` (a value downstream of a
    /// shape the region decides from values at run time, as a Loop body's
    /// Slice by the iteration number): the region's kernel infers every
    /// type again at the concrete shapes and refuses a value that does not
    /// fit its declared type (`runtime/src/kernels/control_flow.rs`), so a
    /// declaration the values break is a run error naming the op.
    fn narrow_in_region(&mut self, v: ValueId, want: Type) {
        use ge_ir::body::ValueDef;
        let body = &mut self.e.b.body;
        let ValueDef::Result { op, .. } = body.value(v).def else {
            return;
        };
        let Some(blk) = body.op(op).parent_block() else {
            return;
        };
        if body.block_parent_op(blk).is_none() {
            return;
        }
        let got = body.value_type(v);
        let (Some(w), Some(g)) = (want.as_tensor(), got.as_tensor()) else {
            return;
        };
        let (Some(wd), Some(gd)) = (&w.dims, &g.dims) else {
            return;
        };
        if wd.len() != gd.len() || !gd.contains(&Dim::Unknown) {
            return;
        }
        let dims: Vec<Dim> = gd
            .iter()
            .zip(wd.iter())
            .map(|(&g, &w)| match (g, w) {
                (Dim::Unknown, Dim::Static(_)) => w,
                _ => g,
            })
            .collect();
        body.set_value_type(v, Type::tensor(&dims, g.dtype));
    }

    /// Resolve a node's attributes (substituting `ref_attr_name` inside functions).
    fn resolve_attrs(&self, n: &NodeProto) -> HashMap<String, AttributeProto> {
        let call = self.scopes.iter().rev().find_map(|s| s.call_attrs.as_ref());
        let mut out = HashMap::new();
        for a in &n.attribute {
            let name = a.name.clone().unwrap_or_default();
            match (&a.ref_attr_name, call) {
                (Some(r), Some(call)) if !r.is_empty() => {
                    if let Some(v) = call.get(r) {
                        let mut v = v.clone();
                        v.name = Some(name.clone());
                        out.insert(name, v);
                    }
                }
                _ => {
                    out.insert(name, a.clone());
                }
            }
        }
        out
    }

    fn node_label(n: &NodeProto, idx: usize) -> String {
        match n.name.as_deref() {
            Some(s) if !s.is_empty() => s.to_string(),
            _ => match n.output.iter().find(|o| !o.is_empty()) {
                Some(o) => o.clone(),
                None => format!("{}_{idx}", n.op_type.as_deref().unwrap_or("node")),
            },
        }
    }

    /// Convert one node: resolve inputs and attributes, call the op's mapping
    /// function (or expand a model-local function), bind the outputs.
    pub fn convert_node(&mut self, n: &NodeProto, idx: usize) -> Res<()> {
        let op_type = n.op_type.clone().unwrap_or_default();
        let domain = norm_domain(n.domain.as_deref().unwrap_or("")).to_string();
        let label = Self::node_label(n, idx);
        let prefix = self.scopes.iter().rev().find_map(|s| s.call_loc.clone());
        let loc_name = match &prefix {
            Some(p) => format!("{p}/{label}"),
            None => label.clone(),
        };
        let loc = Location::name(&loc_name, Some(self.file_loc()));
        let opset = self.opset(&domain).unwrap_or(0);
        let ctx_msg = format!("node '{loc_name}' ({op_type})");
        let mut inputs = vec![];
        for name in &n.input {
            if name.is_empty() {
                inputs.push(None);
                continue;
            }
            match self.lookup(name) {
                Some(v) => inputs.push(Some(v)),
                None => {
                    return Err(ImportError::invalid(format!(
                        "{ctx_msg}: input '{name}' is not a graph input, an initializer or the output of an earlier node (missing initializer?)"
                    )))
                }
            }
        }
        let node = Node {
            op_type: op_type.clone(),
            name: loc_name.clone(),
            inputs,
            input_names: n.input.clone(),
            attrs: self.resolve_attrs(n),
            num_outputs: n.output.len(),
            outputs_used: n.output.iter().map(|o| !o.is_empty()).collect(),
            output_names: n.output.clone(),
            opset,
        };
        self.loc = loc;
        self.e.set_loc(loc);
        let key = (domain.clone(), op_type.clone());
        let mut results = if let Some(f) = self.model.functions.get(&key) {
            self.expand_function(f, &node, &loc_name)
        } else if let Some(map) = ops::lookup_in(&domain, &op_type) {
            map(self, &node)
        } else if domain.is_empty() {
            Err(ImportError::unsupported(format!(
                "unsupported operator {op_type}"
            )))
        } else {
            Err(ImportError::unsupported(format!(
                "unsupported operator {domain}.{op_type}"
            )))
        }
        .map_err(|e| self.fresh_symbol_limit(&node, e).context(&ctx_msg))?;
        if domain.is_empty() {
            super::symbolic::propagate(self, &node, &mut results)
                .map_err(|e| e.context(&ctx_msg))?;
        }
        for (k, out) in n.output.iter().enumerate() {
            if out.is_empty() {
                continue;
            }
            let v = *results.get(k).ok_or_else(|| {
                ImportError::unsupported(format!(
                    "{ctx_msg}: output #{k} ('{out}') of {op_type} is not supported"
                ))
            })?;
            self.define(out, v);
            self.check_declared(out, v)
                .map_err(|e| e.context(&ctx_msg))?;
        }
        Ok(())
    }

    /// An invalid-shape error of a node whose operands have dims the values
    /// decide (value or size symbols) is a limit of the import, not a bad
    /// model: such dims cannot be proven equal to other dims yet
    /// (docs/architecture.md "Execution modes", not built (1)).
    fn fresh_symbol_limit(&self, n: &Node, e: ImportError) -> ImportError {
        if e.kind != ImportErrorKind::Invalid {
            return e;
        }
        let fresh = n.present_inputs().iter().any(|&v| {
            let mut syms = vec![];
            for d in self
                .e
                .ty(v)
                .as_tensor()
                .and_then(|t| t.dims.clone())
                .unwrap_or_default()
            {
                if let Some(x) = d.expr() {
                    x.symbols(&mut syms);
                }
            }
            syms.iter().any(|s| self.symbols.is_fresh(s.as_str()))
        });
        if !fresh {
            return e;
        }
        ImportError::unsupported(format!(
            "{} (its operands have dims decided by values at run time, which cannot be proven compatible with other dims yet)",
            e.message
        ))
    }

    /// Expand a model-local function inline.
    fn expand_function(&mut self, f: &FunctionProto, node: &Node, loc: &str) -> Res<Vec<ValueId>> {
        let fname = f.name.clone().unwrap_or_default();
        if self.expanding.contains(&fname) {
            return Err(ImportError::invalid(format!(
                "function '{fname}' calls itself"
            )));
        }
        let mut scope = Scope::default();
        for (k, formal) in f.input.iter().enumerate() {
            if let Some(v) = node.opt_input(k) {
                scope.values.insert(formal.clone(), v);
            }
        }
        let mut call_attrs: HashMap<String, AttributeProto> = HashMap::new();
        for a in &f.attribute_proto {
            if let Some(n) = &a.name {
                call_attrs.insert(n.clone(), a.clone());
            }
        }
        for (k, v) in &node.attrs {
            call_attrs.insert(k.clone(), v.clone());
        }
        scope.call_attrs = Some(call_attrs);
        let mut opsets: HashMap<String, i64> = self
            .scopes
            .iter()
            .rev()
            .find_map(|s| s.opsets.clone())
            .unwrap_or_default();
        for o in &f.opset_import {
            opsets.insert(
                norm_domain(o.domain.as_deref().unwrap_or("")).to_string(),
                o.version.unwrap_or(0),
            );
        }
        scope.opsets = Some(opsets);
        scope.call_loc = Some(loc.to_string());
        // Function bodies see only their formals: hide the caller's values.
        let saved = std::mem::take(&mut self.scopes);
        let base_opsets = scope.opsets.clone();
        self.scopes.push(scope);
        self.expanding.push(fname.clone());
        let res = (|| {
            for (idx, n) in f.node.iter().enumerate() {
                self.convert_node(n, idx)?;
            }
            let mut outs = vec![];
            for o in &f.output {
                outs.push(self.lookup(o).ok_or_else(|| {
                    ImportError::invalid(format!(
                        "function '{fname}' does not compute its output '{o}'"
                    ))
                })?);
            }
            Ok(outs)
        })();
        let _ = base_opsets;
        self.expanding.pop();
        self.scopes = saved;
        res
    }

    /// Convert a subgraph (If branch, Loop body) into `block`, binding its
    /// formal inputs to `args`; returns the values of its outputs. The
    /// insertion point is restored afterwards.
    pub fn convert_subgraph(
        &mut self,
        g: &GraphProto,
        block: BlockId,
        args: &[ValueId],
    ) -> Res<Vec<ValueId>> {
        let saved_block = self.e.insertion_block();
        let saved_loc = self.e.b.loc;
        self.e.set_block(block);
        self.scopes.push(Scope::default());
        let res = (|| {
            for (vi, &a) in g.input.iter().zip(args) {
                let name = vi.name.clone().unwrap_or_default();
                self.define(&name, a);
            }
            self.convert_graph_body(g)?;
            self.graph_outputs(g)
        })();
        self.scopes.pop();
        if let Some(b) = saved_block {
            self.e.set_block(b);
        }
        self.e.set_loc(saved_loc);
        self.loc = saved_loc;
        res
    }

    /// Convert a subgraph without inputs inline into the current block (an
    /// If whose condition is a constant).
    pub fn inline_subgraph(&mut self, g: &GraphProto) -> Res<Vec<ValueId>> {
        let saved_loc = self.e.b.loc;
        self.scopes.push(Scope::default());
        let res = (|| {
            self.convert_graph_body(g)?;
            self.graph_outputs(g)
        })();
        self.scopes.pop();
        self.e.set_loc(saved_loc);
        self.loc = saved_loc;
        res
    }

    /// The types of a subgraph's declared inputs.
    pub fn subgraph_input_types(&mut self, g: &GraphProto) -> Res<Vec<Option<Type>>> {
        g.input
            .iter()
            .map(|vi| {
                if vi.r#type.is_some() {
                    self.value_type(vi).map(Some)
                } else {
                    Ok(None)
                }
            })
            .collect()
    }
}

/// The result types of a `graph.specialize` in a region whose shapes the
/// region's kernel computes from values before each run of it: the declared
/// dims where static, else `?` (every value of a region program is static
/// when it runs).
fn region_value_types(declared: &[Option<Type>], ranks: &[(usize, ge_ir::DType)]) -> Vec<Type> {
    ranks
        .iter()
        .enumerate()
        .map(|(k, &(rank, dt))| {
            let decl = declared
                .get(k)
                .copied()
                .flatten()
                .and_then(|t| t.as_tensor()?.dims.clone())
                .filter(|d| d.len() == rank);
            let dims: Vec<Dim> = (0..rank)
                .map(|i| match decl.as_ref().map(|d| d[i]) {
                    Some(d @ Dim::Static(_)) => d,
                    _ => Dim::Unknown,
                })
                .collect();
            Type::tensor(&dims, dt)
        })
        .collect()
}

/// Join two types for values that meet (If branches, loop-carried values):
/// differing dims become `?`; different dtypes or ranks are an error.
pub fn join_types(a: Type, b: Type) -> Option<Type> {
    if types_compatible(a, b) && a == b {
        return Some(a);
    }
    let (x, y) = (a.as_tensor()?, b.as_tensor()?);
    if x.dtype != y.dtype {
        return None;
    }
    match (&x.dims, &y.dims) {
        (Some(dx), Some(dy)) if dx.len() == dy.len() => {
            let dims: Vec<Dim> = dx
                .iter()
                .zip(dy.iter())
                .map(|(p, q)| if p == q { *p } else { Dim::Unknown })
                .collect();
            Some(Type::tensor(&dims, x.dtype))
        }
        _ => None,
    }
}

/// Walk every node of a graph, its subgraphs and the model's functions.
pub fn walk_nodes<'g>(g: &'g GraphProto, f: &mut dyn FnMut(&'g NodeProto)) {
    for n in &g.node {
        f(n);
        for a in &n.attribute {
            if a.r#type == Some(AttributeType::Graph as i32) || a.g.is_some() {
                if let Some(sg) = &a.g {
                    walk_nodes(sg, f);
                }
            }
            for sg in &a.graphs {
                walk_nodes(sg, f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dim_params_become_valid_distinct_symbols() {
        let mut s = Symbols::default();
        assert_eq!(s.symbol("batch_size"), "BATCH_SIZE");
        assert_eq!(s.symbol("batch_size"), "BATCH_SIZE");
        assert_eq!(s.symbol("seq-len"), "SEQ_LEN");
        assert_eq!(s.symbol("2d"), "S2D");
        // "Batch Size" would also be BATCH_SIZE: it gets a suffix.
        assert_eq!(s.symbol("Batch Size"), "BATCH_SIZE_2");
        assert_eq!(s.map.len(), 4);
        // Value symbols avoid every symbol and are not dim_params.
        assert_eq!(s.fresh("batch_size"), "BATCH_SIZE_3");
        assert_eq!(s.fresh("/m/r_0"), "S_M_R_0");
        assert_eq!(s.map.len(), 4);
    }

    #[test]
    fn joined_types_widen_differing_dims() {
        let a = Type::tensor_static(&[2, 3], ge_ir::DType::F32);
        let b = Type::tensor_static(&[4, 3], ge_ir::DType::F32);
        let j = join_types(a, b).map(|t| t.to_string());
        assert_eq!(j.as_deref(), Some("tensor<?x3xf32>"));
        let c = Type::tensor_static(&[2], ge_ir::DType::F32);
        assert!(join_types(a, c).is_none());
    }
}
