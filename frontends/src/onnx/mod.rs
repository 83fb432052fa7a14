//! The ONNX importer: a `ModelProto` becomes a module with one `graph.func`
//! (`@main` unless told otherwise).
//!
//! - initializers become `data.constant`s (`dense<…>`, or `#ge.external<…>`
//!   for external data, resolved relative to the model's folder); graph inputs
//!   that are initializers are not function arguments;
//! - `dim_value` dims are static, `dim_param` dims become symbols (upper-cased
//!   and sanitised; the module attribute `ge.onnx_dim_params` maps each symbol
//!   back to its ONNX name), other dims are `?`;
//! - two input symbols an op needs equal (a mask's length `M` added to
//!   scores of length `PAST+SEQ`) are equated: the graph is imported again
//!   with `M` replaced by `PAST+SEQ`, the module attribute
//!   `ge.symbol_equalities = {M = "PAST+SEQ"}` records it, and the runtime
//!   checks the input's dim when the inputs bind the symbols
//!   (`ge_ir::dim::equal`);
//! - each node is converted by its op's mapping function ([`ops::TABLE`]);
//!   model-local functions are expanded inline; node names become locations
//!   `loc("node"("model.onnx":0:0))`;
//! - ops whose operands are all constants are folded at import.
//!
//! Errors are one clear message: every unsupported op of the model is listed
//! at once (node name, op, opset) before any conversion starts.

pub mod dim_param;
pub mod elements;
pub mod graph;
pub mod ops;
pub mod symbolic;
pub mod tensor;
pub mod value_symbols;

use crate::emit::Emitter;
use crate::error::ImportError;
use crate::proto::onnx::{ModelProto, TensorProto};
use ge_ir::attributes::{AttrDict, Attribute};
use ge_ir::dim::SymbolEqualities;
use ge_ir::tensor::Tensor;
use ge_ir::{Context, Dim, Ident, Location, Module, Type, ValueId};
use graph::{norm_domain, walk_nodes, Cx, ModelInfo, Symbols};
use prost::Message;
use std::collections::HashMap;
use std::path::Path;

/// The oldest default-domain opset the importer accepts: every ai.onnx opset,
/// old forms mapped as the onnx version converter maps them (`ops::legacy`).
pub const MIN_OPSET: i64 = 1;

/// How to import.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Name of the created function.
    pub func_name: String,
    /// Graph inputs bound to constant values: they become constants instead
    /// of function arguments (e.g. shape inputs known ahead of time).
    pub constant_inputs: HashMap<String, Tensor>,
    /// Fold ops whose operands are constants.
    pub fold: bool,
    /// Shapes replacing the declared shapes of graph inputs (ATC's
    /// `--input_shape`); the rank must match a declared rank.
    pub input_shapes: HashMap<String, Vec<Dim>>,
    /// Outputs to produce instead of the graph's, as (node name, output
    /// index) (ATC's `--out_nodes`); a name that is no node's may be a value's.
    pub outputs: Option<Vec<(String, usize)>>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            func_name: "main".into(),
            constant_inputs: HashMap::new(),
            fold: true,
            input_shapes: HashMap::new(),
            outputs: None,
        }
    }
}

/// Import an ONNX model file.
pub fn import_file(
    ctx: &Context,
    path: &Path,
    opts: &ImportOptions,
) -> Result<Module, ImportError> {
    let bytes = std::fs::read(path)
        .map_err(|e| ImportError::io(format!("cannot read '{}': {e}", path.display())))?;
    let base = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    import_bytes(ctx, &bytes, &path.display().to_string(), base, opts)
}

/// Decode a model, with clear errors for files that are not ONNX models.
pub fn decode_model(bytes: &[u8], name: &str) -> Result<ModelProto, ImportError> {
    if bytes.is_empty() {
        return Err(ImportError::malformed(format!(
            "'{name}' is empty, not an ONNX model"
        )));
    }
    let m = ModelProto::decode(bytes).map_err(|e| {
        ImportError::malformed(format!(
            "'{name}' is not an ONNX model or is truncated ({})",
            e.to_string()
                .trim_start_matches("failed to decode Protobuf message: ")
        ))
    })?;
    if m.ir_version.unwrap_or(0) <= 0 || m.graph.is_none() {
        return Err(ImportError::malformed(format!(
            "'{name}' is not an ONNX model (no ir_version or no graph)"
        )));
    }
    Ok(m)
}

/// Decode a serialized `TensorProto` (the `input_0.pb` files of ONNX tests).
pub fn decode_tensor(bytes: &[u8], base: &Path) -> Result<Tensor, ImportError> {
    let t = TensorProto::decode(bytes)
        .map_err(|e| ImportError::malformed(format!("not a TensorProto: {e}")))?;
    tensor::tensor_value(&t, base)
}

/// Decode a serialized `TensorProto`, returning its name too.
pub fn decode_named_tensor(bytes: &[u8], base: &Path) -> Result<(String, Tensor), ImportError> {
    let t = TensorProto::decode(bytes)
        .map_err(|e| ImportError::malformed(format!("not a TensorProto: {e}")))?;
    Ok((
        t.name.clone().unwrap_or_default(),
        tensor::tensor_value(&t, base)?,
    ))
}

/// The opset per domain of a model (default domain is `""`).
fn opsets(m: &ModelProto) -> HashMap<String, i64> {
    let mut out = HashMap::new();
    for o in &m.opset_import {
        out.insert(
            norm_domain(o.domain.as_deref().unwrap_or("")).to_string(),
            o.version.unwrap_or(0),
        );
    }
    out
}

/// Whether any node of the graph (or its subgraphs) is in the default domain.
fn uses_default_domain(m: &ModelProto) -> bool {
    let mut any = false;
    if let Some(g) = &m.graph {
        walk_nodes(g, &mut |n| {
            any |= norm_domain(n.domain.as_deref().unwrap_or("")).is_empty();
        });
    }
    any
}

/// Every node whose op the importer cannot convert, listed in one error.
fn check_supported(m: &ModelProto, name: &str) -> Result<(), ImportError> {
    let sets = opsets(m);
    let funcs: std::collections::HashSet<(String, String)> = m
        .functions
        .iter()
        .map(|f| {
            (
                norm_domain(f.domain.as_deref().unwrap_or("")).to_string(),
                f.name.clone().unwrap_or_default(),
            )
        })
        .collect();
    let mut bad: Vec<String> = vec![];
    let mut check = |n: &crate::proto::onnx::NodeProto, fsets: &HashMap<String, i64>| {
        let op = n.op_type.clone().unwrap_or_default();
        let dom = norm_domain(n.domain.as_deref().unwrap_or("")).to_string();
        if funcs.contains(&(dom.clone(), op.clone())) {
            return;
        }
        if ops::lookup_in(&dom, &op).is_some() {
            return;
        }
        let node = n
            .name
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| n.output.first().cloned())
            .unwrap_or_default();
        let dom_name = if dom.is_empty() { "ai.onnx" } else { &dom };
        let ver = fsets
            .get(&dom)
            .map(|v| format!("opset {v}"))
            .unwrap_or_else(|| "no opset imported".into());
        bad.push(format!("  node '{node}': {op} ({dom_name} {ver})"));
    };
    if let Some(g) = &m.graph {
        walk_nodes(g, &mut |n| check(n, &sets));
    }
    for f in &m.functions {
        let mut fsets = sets.clone();
        for o in &f.opset_import {
            fsets.insert(
                norm_domain(o.domain.as_deref().unwrap_or("")).to_string(),
                o.version.unwrap_or(0),
            );
        }
        let g = crate::proto::onnx::GraphProto {
            node: f.node.clone(),
            ..Default::default()
        };
        walk_nodes(&g, &mut |n| check(n, &fsets));
    }
    if bad.is_empty() {
        return Ok(());
    }
    Err(ImportError::unsupported(format!(
        "'{name}' uses {} unsupported operator{}:\n{}",
        bad.len(),
        if bad.len() == 1 { "" } else { "s" },
        bad.join("\n")
    )))
}

/// `ty` with its shape replaced by `dims` (same element type and rank).
fn override_shape(name: &str, ty: Type, dims: &[Dim]) -> Result<Type, ImportError> {
    let tt = ty
        .as_tensor()
        .ok_or_else(|| ImportError::invalid(format!("graph input '{name}' is not a tensor")))?;
    if let Some(declared) = &tt.dims {
        if declared.len() != dims.len() {
            return Err(ImportError::invalid(format!(
                "inconsistent shapes: input shape of '{name}' has {} dims but the model declares '{ty}'",
                dims.len()
            )));
        }
    }
    Ok(Type::tensor(dims, tt.dtype))
}

/// The values of the selected outputs `(node or value name, output index)`
/// and their ONNX names.
fn selected_outputs(
    cx: &Cx,
    g: &crate::proto::onnx::GraphProto,
    sel: &[(String, usize)],
) -> Result<(Vec<ValueId>, Vec<String>), ImportError> {
    let mut values = vec![];
    let mut names = vec![];
    for (node, idx) in sel {
        let tensor = match g
            .node
            .iter()
            .find(|n| n.name.as_deref() == Some(node.as_str()))
        {
            Some(n) => n.output.get(*idx).cloned().ok_or_else(|| {
                ImportError::invalid(format!(
                    "output node '{node}' has {} outputs; there is no output {idx}",
                    n.output.len()
                ))
            })?,
            None if *idx == 0 => node.clone(),
            None => {
                return Err(ImportError::invalid(format!(
                    "output node '{node}' is not a node of the model"
                )))
            }
        };
        let v = cx.lookup(&tensor).ok_or_else(|| {
            ImportError::invalid(format!(
                "output node '{node}' is neither a node nor a value of the model"
            ))
        })?;
        values.push(v);
        names.push(tensor);
    }
    Ok((values, names))
}

/// Import a model from its bytes; `name` is used in locations and messages,
/// `base` is the folder external data is resolved against.
pub fn import_bytes(
    ctx: &Context,
    bytes: &[u8],
    name: &str,
    base: &Path,
    opts: &ImportOptions,
) -> Result<Module, ImportError> {
    let model = decode_model(bytes, name)?;
    let sets = opsets(&model);
    let ver = sets.get("").copied().unwrap_or(0);
    if ver < MIN_OPSET && uses_default_domain(&model) {
        return Err(ImportError::invalid(format!(
            "'{name}' uses ai.onnx operators but imports no ai.onnx opset"
        )));
    }
    check_supported(&model, name)?;
    let g = model
        .graph
        .as_ref()
        .ok_or_else(|| ImportError::malformed(format!("'{name}' has no graph")))?;
    let info = ModelInfo {
        path: name.to_string(),
        base: base.to_path_buf(),
        functions: model
            .functions
            .iter()
            .map(|f| {
                (
                    (
                        norm_domain(f.domain.as_deref().unwrap_or("")).to_string(),
                        f.name.clone().unwrap_or_default(),
                    ),
                    f.clone(),
                )
            })
            .collect(),
    };
    // Each pass that learns symbol equalities (a mask's length meeting
    // `PAST+SEQ`, `ge_ir::dim::equal`) is followed by one importing with them
    // substituted, so every type agrees; a pass learning nothing new decides.
    let mut eq = SymbolEqualities::default();
    let mut passes = 0;
    loop {
        let (r, learned) = ge_ir::dim::equal::learning(eq.clone(), || {
            import_graph(ctx, g, &info, &sets, name, opts, eq.clone())
        });
        passes += 1;
        if learned == eq || passes == MAX_LEARNING_PASSES {
            return r;
        }
        eq = learned;
    }
}

/// Import passes at most (each learns at least one more equality).
const MAX_LEARNING_PASSES: usize = 8;

/// One import of the graph, input symbols equated as `eq` says.
fn import_graph(
    ctx: &Context,
    g: &crate::proto::onnx::GraphProto,
    info: &ModelInfo,
    sets: &HashMap<String, i64>,
    name: &str,
    opts: &ImportOptions,
    eq: SymbolEqualities,
) -> Result<Module, ImportError> {
    let file_loc = Location::file(name, 0, 0);
    let mut m = Module::new(ctx, file_loc);
    let mut symbols = Symbols::default();
    symbols.equal = eq;
    let (func, inner, entry) = crate::emit::new_function(ctx, &mut m, file_loc)?;
    let (in_types, out_types, in_names, out_names) = {
        let mut e = Emitter::new(ctx, inner, entry);
        e.fold = opts.fold;
        let mut cx = Cx::new(e, info, &mut symbols, sets.clone());
        cx.check_declared_types = opts.input_shapes.is_empty();
        let (in_types, in_names) = declare_inputs(&mut cx, g, opts, entry, file_loc)?;
        ge_ir::dim::equal::allow_learning(input_symbols(&in_types));
        check_shadowed_inputs(&mut cx, g)?;
        let unknown: Vec<&str> = opts
            .input_shapes
            .keys()
            .filter(|k| !in_names.contains(k))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            return Err(ImportError::invalid(format!(
                "input shape given for '{}', which is not an input of '{name}' (inputs: {})",
                unknown.join("', '"),
                in_names.join(", ")
            )));
        }
        cx.convert_graph_body(g)?;
        let (outs, out_names) = match &opts.outputs {
            None => (
                cx.graph_outputs(g)?,
                g.output
                    .iter()
                    .map(|o| o.name.clone().unwrap_or_default())
                    .collect(),
            ),
            Some(sel) => selected_outputs(&cx, g, sel)?,
        };
        let out_types: Vec<Type> = outs.iter().map(|&v| cx.e.ty(v)).collect();
        cx.e.set_loc(file_loc);
        cx.e.b
            .create("graph.return", &outs, vec![], Some(vec![]), 0)?;
        ops::control::check_promoted(&cx)?;
        drop(cx);
        crate::emit::remove_unused_constants(inner);
        (in_types, out_types, in_names, out_names)
    };
    let body = m.body_mut();
    body.set_attr(func, "sym_name", Attribute::string(&opts.func_name));
    body.set_attr(
        func,
        "function_type",
        Attribute::ty(Type::function(&in_types, &out_types)),
    );
    crate::emit::set_io_names(body, func, &in_names, &out_names)?;
    if !symbols.map.is_empty() {
        let entries: Vec<(Ident, Attribute)> = symbols
            .map
            .iter()
            .map(|(param, sym)| (Ident::new(sym), Attribute::string(param)))
            .collect();
        m.outer.set_attr(
            m.op,
            "ge.onnx_dim_params",
            Attribute::dict(AttrDict::new(entries)),
        );
    }
    if !symbols.bounds.is_empty() {
        let entries: Vec<(Ident, Attribute)> = symbols
            .bounds
            .iter()
            .map(|(sym, b)| (Ident::new(sym), Attribute::i64(*b)))
            .collect();
        m.outer.set_attr(
            m.op,
            "ge.symbol_bounds",
            Attribute::dict(AttrDict::new(entries)),
        );
    }
    if !symbols.equal.is_empty() {
        let entries: Vec<(Ident, Attribute)> = symbols
            .equal
            .iter()
            .map(|(sym, e)| (sym, Attribute::string(&e.to_string())))
            .collect();
        m.outer.set_attr(
            m.op,
            "ge.symbol_equalities",
            Attribute::dict(AttrDict::new(entries)),
        );
    }
    crate::error::verified(m)
}

/// The plain symbols of the inputs' dims (`B`, not `2*B`): those a run binds.
fn input_symbols(types: &[Type]) -> Vec<Ident> {
    types
        .iter()
        .filter_map(|t| t.as_tensor())
        .flat_map(|t| t.shape().to_vec())
        .filter_map(Dim::as_symbol)
        .collect()
}

/// The graph's inputs that are not initializers: arguments of the entry
/// block (shapes overridden by `opts.input_shapes`), or constants where
/// `opts.constant_inputs` binds them; their types and names.
fn declare_inputs(
    cx: &mut Cx,
    g: &crate::proto::onnx::GraphProto,
    opts: &ImportOptions,
    entry: ge_ir::body::BlockId,
    file_loc: Location,
) -> Result<(Vec<Type>, Vec<String>), ImportError> {
    let inits: std::collections::HashSet<&str> = g
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .collect();
    let mut in_types = vec![];
    let mut in_names = vec![];
    for vi in &g.input {
        let iname = vi.name.clone().unwrap_or_default();
        if inits.contains(iname.as_str()) {
            continue;
        }
        let loc = Location::name(&iname, Some(file_loc));
        if let Some(t) = opts.constant_inputs.get(&iname) {
            cx.e.set_loc(loc);
            let c = cx.e.constant(t)?;
            cx.define(&iname, c);
            continue;
        }
        let mut ty = cx
            .value_type(vi)
            .map_err(|e| e.context(format!("graph input '{iname}'")))?;
        if let Some(dims) = opts.input_shapes.get(&iname) {
            ty = override_shape(&iname, ty, dims)?;
        }
        let v = cx.e.b.body.add_block_arg(entry, ty, loc);
        cx.define(&iname, v);
        in_types.push(ty);
        in_names.push(iname);
    }
    Ok((in_types, in_names))
}

/// Initializers that shadow a declared input must agree with it.
fn check_shadowed_inputs(
    cx: &mut Cx,
    g: &crate::proto::onnx::GraphProto,
) -> Result<(), ImportError> {
    for vi in &g.input {
        let iname = vi.name.clone().unwrap_or_default();
        let Some(t) = g
            .initializer
            .iter()
            .find(|t| t.name.as_deref() == Some(&iname))
        else {
            continue;
        };
        if vi.r#type.is_some() {
            let want = cx.value_type(vi)?;
            let (shape, dt) = tensor::tensor_type(t)?;
            let got = Type::tensor_static(&shape, dt);
            if !ge_ir::verifier::types_compatible(want, got) {
                return Err(ImportError::invalid(format!(
                    "inconsistent shapes: initializer '{iname}' is '{got}' but the graph input is declared '{want}'"
                )));
            }
        }
    }
    Ok(())
}
