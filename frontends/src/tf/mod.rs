//! The TensorFlow importer: frozen GraphDefs and SavedModels.
//!
//! Placeholders (or a SavedModel signature's inputs) become function
//! arguments (shapes from the graph or from `--input-shape`), `Const` nodes
//! `data.constant`s, and each op is mapped by its function in
//! [`ops::TABLE`]; control flow (v1 frames and functional While/If), calls of
//! the function library, variables and TensorLists are evaluated by
//! [`import`] (see there). TensorFlow's NHWC layout stays the origin format:
//! tensors keep their NHWC shapes, and around each graph op that wants NCHW
//! (conv2d, pooling) the importer inserts `data.transpose`s (NHWC→NCHW
//! before, NCHW→NHWC after; filters HWIO→OIHW are folded into the constant).
//! The function carries `ge.data_format = "NHWC"`. Layout passes may later
//! cancel transpose pairs or pick `#ge.format` storage.
//!
//! Names: each argument and result carries its TensorFlow name as
//! `ge.name` in the function's `arg_attrs`/`res_attrs` (MLIR's function
//! argument attributes): `node:port` for a GraphDef, the signature key for a
//! SavedModel (`crate::emit::set_io_names`, which refuses empty, overlong,
//! control-character and duplicate names).

mod bundle;
mod graph;
mod import;
mod ops;
mod saved_model;

use crate::emit::Emitter;
use crate::error::{ImportError, ImportErrorKind};
use crate::proto::tensorflow::{
    attr_value, AttrValue, DataType, FunctionDef, GraphDef, TensorProto, TensorShapeProto,
};
use ge_ir::attributes::{write_element, Attribute, DenseElements, Element};
use ge_ir::body::ValueId;
use ge_ir::{Context, DType, Dim, Location, Module, Type};
use graph::Graph;
use import::{Importer, V};
use prost::Message;
use std::collections::{HashMap, HashSet};
use std::path::Path;

pub use bundle::{read_table, Bundle};
pub use ops::{TfMapFn, STRUCTURAL, TABLE};

type Res<T> = Result<T, ImportError>;

fn lookup(op: &str) -> Option<TfMapFn> {
    ops::lookup(op)
}

/// Import options: placeholder shapes, output nodes, function name.
#[derive(Clone, Debug, Default)]
pub struct TfOptions {
    pub input_shapes: HashMap<String, Vec<Dim>>,
    pub outputs: Option<Vec<String>>,
    pub func_name: String,
    /// SavedModel: the signature to import (default `serving_default`).
    pub signature: Option<String>,
}

impl TfOptions {
    /// Parse `--input-shape "x:1,224,224,3;y:B,10"` (a dim is a number, `-1`
    /// for unknown, or a symbol name) and `--outputs "a,b"`.
    pub fn parse(
        input_shape: Option<&str>,
        outputs: Option<&str>,
        func_name: &str,
    ) -> Result<TfOptions, ImportError> {
        let mut input_shapes = HashMap::new();
        for part in input_shape
            .unwrap_or("")
            .split(';')
            .filter(|p| !p.trim().is_empty())
        {
            let (name, dims) = part.rsplit_once(':').ok_or_else(|| {
                ImportError::invalid(format!("--input-shape '{part}': expected NAME:DIM,DIM,..."))
            })?;
            let dims: Vec<Dim> = if dims.trim().is_empty() {
                vec![]
            } else {
                dims.split(',')
                    .map(|d| {
                        let d = d.trim();
                        match d.parse::<i64>() {
                            Ok(-1) => Ok(Dim::Unknown),
                            Ok(v) if v >= 0 => Ok(Dim::Static(v)),
                            _ if !d.is_empty()
                                && d.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                                && d.starts_with(|c: char| c.is_ascii_alphabetic()) =>
                            {
                                Ok(Dim::sym(&d.to_ascii_uppercase()))
                            }
                            _ => Err(ImportError::invalid(format!(
                                "--input-shape '{part}': bad dim '{d}'"
                            ))),
                        }
                    })
                    .collect::<Result<_, _>>()?
            };
            input_shapes.insert(name.trim().to_string(), dims);
        }
        let outputs = outputs.map(|o| {
            o.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        });
        Ok(TfOptions {
            input_shapes,
            outputs,
            func_name: if func_name.is_empty() {
                "main".into()
            } else {
                func_name.into()
            },
            signature: None,
        })
    }
}

/// Our dtype for a TensorFlow `DataType`.
fn dtype_from_tf(code: i32) -> Res<DType> {
    let code = if code > 100 { code - 100 } else { code };
    let d = DataType::try_from(code).ok();
    Ok(match d {
        Some(DataType::DtFloat) => DType::F32,
        Some(DataType::DtDouble) => DType::F64,
        Some(DataType::DtHalf) => DType::F16,
        Some(DataType::DtBfloat16) => DType::BF16,
        Some(DataType::DtInt32) => DType::I32,
        Some(DataType::DtInt64) => DType::I64,
        Some(DataType::DtInt16) => DType::I16,
        Some(DataType::DtInt8) => DType::I8,
        Some(DataType::DtUint8) => DType::U8,
        Some(DataType::DtUint16) => DType::U16,
        Some(DataType::DtUint32) => DType::U32,
        Some(DataType::DtUint64) => DType::U64,
        Some(DataType::DtBool) => DType::I1,
        _ => {
            let name = d
                .map(|d| d.as_str_name().to_string())
                .unwrap_or_else(|| format!("data type #{code}"));
            return Err(ImportError::unsupported(format!(
                "unsupported element type {name}"
            )));
        }
    })
}

/// A TensorFlow tensor as an elements attribute.
fn tensor_attr(t: &TensorProto) -> Res<Attribute> {
    let dt = dtype_from_tf(t.dtype)?;
    let shape: Vec<i64> = t
        .tensor_shape
        .as_ref()
        .map(|s| s.dim.iter().map(|d| d.size).collect())
        .unwrap_or_default();
    if shape.iter().any(|&d| d < 0) {
        return Err(ImportError::invalid("a constant has an unknown dim"));
    }
    let ty = Type::tensor_static(&shape, dt);
    let w = dt.byte_size();
    // Dims are untrusted: sizes in checked arithmetic.
    let (n, size) = ge_ir::budget::bytes_of(shape.iter().map(|&d| d as u64), 1)
        .zip(ge_ir::budget::bytes_of(
            shape.iter().map(|&d| d as u64),
            w as u64,
        ))
        .and_then(|(n, b)| Some((usize::try_from(n).ok()?, usize::try_from(b).ok()?)))
        .ok_or_else(|| ImportError::invalid(format!("a constant of type '{ty}' is too large")))?;
    if !t.tensor_content.is_empty() {
        if t.tensor_content.len() != size {
            return Err(ImportError::invalid(format!(
                "a constant has {} bytes but '{ty}' needs {size}",
                t.tensor_content.len(),
            )));
        }
        return Ok(Attribute::dense(DenseElements {
            ty,
            splat: false,
            bytes: t.tensor_content.clone().into(),
        }));
    }
    let elems: Vec<Element> = match dt {
        DType::F32 => t
            .float_val
            .iter()
            .map(|&x| Element::Float(x as f64))
            .collect(),
        DType::F64 => t.double_val.iter().map(|&x| Element::Float(x)).collect(),
        DType::F16 => t
            .half_val
            .iter()
            .map(|&x| Element::Float(half::f16::from_bits(x as u16).to_f64()))
            .collect(),
        DType::BF16 => t
            .half_val
            .iter()
            .map(|&x| Element::Float(half::bf16::from_bits(x as u16).to_f64()))
            .collect(),
        DType::I64 => t.int64_val.iter().map(|&x| Element::Int(x)).collect(),
        DType::I1 => t.bool_val.iter().map(|&x| Element::Bool(x)).collect(),
        DType::U32 => t
            .uint32_val
            .iter()
            .map(|&x| Element::Int(x as i64))
            .collect(),
        DType::U64 => t.uint64_val.iter().map(|&x| Element::UInt(x)).collect(),
        _ => t.int_val.iter().map(|&x| Element::Int(x as i64)).collect(),
    };
    // TensorFlow stores a splat as one value (or none for zeros): kept a
    // splat, so its size costs nothing until something expands it (which
    // checks the memory budget).
    let (elems, splat) = match elems.len() {
        0 if n == 0 => (vec![], false),
        0 => (vec![Element::Int(0)], n != 1),
        1 if n != 1 => (elems, true),
        k if k == n => (elems, false),
        k => {
            return Err(ImportError::invalid(format!(
                "a constant has {k} values but '{ty}' needs {n}"
            )))
        }
    };
    let mut bytes = Vec::with_capacity(elems.len() * w);
    for e in elems {
        write_element(dt, e, &mut bytes);
    }
    Ok(Attribute::dense(DenseElements {
        ty,
        splat,
        bytes: bytes.into(),
    }))
}

/// A node with its inputs resolved.
pub struct TfNode {
    pub name: String,
    pub op: String,
    pub inputs: Vec<ValueId>,
    pub attrs: HashMap<String, AttrValue>,
}

impl TfNode {
    fn input(&self, i: usize) -> Res<ValueId> {
        self.inputs
            .get(i)
            .copied()
            .ok_or_else(|| ImportError::invalid(format!("{} needs input #{i}", self.op)))
    }
    fn attr(&self, name: &str) -> Option<&attr_value::Value> {
        self.attrs.get(name).and_then(|a| a.value.as_ref())
    }
    fn s(&self, name: &str, default: &str) -> String {
        match self.attr(name) {
            Some(attr_value::Value::S(b)) => String::from_utf8_lossy(b).into_owned(),
            _ => default.to_string(),
        }
    }
    fn f(&self, name: &str, default: f32) -> f32 {
        match self.attr(name) {
            Some(attr_value::Value::F(v)) => *v,
            _ => default,
        }
    }
    fn b(&self, name: &str, default: bool) -> bool {
        match self.attr(name) {
            Some(attr_value::Value::B(v)) => *v,
            _ => default,
        }
    }
    fn ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.attr(name) {
            Some(attr_value::Value::List(l)) => Some(l.i.clone()),
            _ => None,
        }
    }
    fn dtype(&self, name: &str) -> Res<DType> {
        match self.attr(name) {
            Some(attr_value::Value::Type(t)) => dtype_from_tf(*t),
            _ => Err(ImportError::invalid(format!(
                "{} needs a type attribute '{name}'",
                self.op
            ))),
        }
    }
    fn nhwc(&self) -> Res<bool> {
        match self.s("data_format", "NHWC").as_str() {
            "NHWC" => Ok(true),
            "NCHW" => Ok(false),
            f => Err(ImportError::unsupported(format!(
                "{} with data_format {f} is not supported",
                self.op
            ))),
        }
    }
}

/// The conversion context of the TensorFlow importer.
pub struct TfCx<'a> {
    pub e: Emitter<'a>,
    /// Element shapes of TensorLists reserved without one, inferred from
    /// their first `TensorListSetItem` (kept across re-imports).
    pub lists: &'a ops::ListShapes,
}

impl TfCx<'_> {
    fn const_i64s(&self, v: ValueId, what: &str) -> Res<Vec<i64>> {
        self.e.const_value(v).map(|t| t.to_i64()).ok_or_else(|| {
            ImportError::new(
                ImportErrorKind::NotConstant(what.into()),
                format!("{what} must be a constant"),
            )
        })
    }
    fn op(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: Vec<(&str, Attribute)>,
    ) -> Res<ValueId> {
        Ok(self.e.op(name, operands, attrs)?)
    }
    fn transpose(&mut self, x: ValueId, perm: &[i64]) -> Res<ValueId> {
        if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
            return Ok(x);
        }
        self.op(
            "data.transpose",
            &[x],
            vec![("perm", Attribute::i64_array(perm))],
        )
    }
    fn nhwc_to_nchw(&mut self, x: ValueId) -> Res<ValueId> {
        self.transpose(x, &[0, 3, 1, 2])
    }
    fn nchw_to_nhwc(&mut self, x: ValueId) -> Res<ValueId> {
        self.transpose(x, &[0, 2, 3, 1])
    }
    fn scalar_like(&mut self, v: ValueId, x: f64) -> Res<ValueId> {
        let dt = self.e.dtype(v)?;
        Ok(self.e.scalar(dt, x)?)
    }
}

/// One argument of the imported function.
struct InputSpec {
    node: usize,
    /// `ge.name` of the argument.
    name: String,
    /// Names `--input-shape` may use for it.
    aliases: Vec<String>,
    dtype: i32,
    shape: Option<Vec<Dim>>,
}

/// One result: a node output and its `ge.name`.
struct OutputSpec {
    node: usize,
    port: usize,
    name: String,
    /// As the user listed it (`--outputs`, or the signature key); named in errors.
    listed: String,
}

/// Ops reachable from `outputs` (data inputs, and every node of each
/// function a function attribute names, recursively): what must be supported.
fn reachable_ops(
    g: &Graph,
    library: &HashMap<&str, &FunctionDef>,
    outputs: &[usize],
) -> Vec<(String, String)> {
    let mut out = vec![];
    let mut seen_fn: HashSet<String> = HashSet::new();
    let mut work: Vec<String> = vec![];
    let mut seen = vec![false; g.nodes.len()];
    let mut stack: Vec<usize> = outputs.to_vec();
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut seen[n], true) {
            continue;
        }
        stack.extend(g.nodes[n].inputs.iter().map(|x| x.0));
    }
    // In graph order, so that messages list the nodes as the file does.
    for (node, _) in g.nodes.iter().zip(&seen).filter(|(_, &s)| s) {
        out.push((node.name.clone(), node.op.clone()));
        for f in func_names(&node.attrs) {
            if seen_fn.insert(f.clone()) {
                work.push(f);
            }
        }
    }
    while let Some(f) = work.pop() {
        let Some(fd) = library.get(f.as_str()) else {
            out.push((format!("{f} (function)"), "<missing function>".into()));
            continue;
        };
        for n in &fd.node_def {
            out.push((format!("{f}/{}", n.name), n.op.clone()));
            for g2 in func_names(&n.attr) {
                if seen_fn.insert(g2.clone()) {
                    work.push(g2);
                }
            }
        }
    }
    out
}

fn func_names(attrs: &HashMap<String, AttrValue>) -> Vec<String> {
    let mut v = vec![];
    for a in attrs.values() {
        match &a.value {
            Some(attr_value::Value::Func(f)) => v.push(f.name.clone()),
            Some(attr_value::Value::List(l)) => v.extend(l.func.iter().map(|f| f.name.clone())),
            _ => {}
        }
    }
    v
}

fn supported(op: &str) -> bool {
    lookup(op).is_some() || STRUCTURAL.contains(&op) || op == "_Arg"
}

/// Check every op, then build `@main`. A TensorList reserved with an unknown
/// element shape (a TensorArray of `tf.while_loop`) gets the shape of the
/// first item set into it, as TensorFlow's shape inference does: the import
/// runs again with that shape once `TensorListSetItem` has seen it (at most
/// once per such list).
#[allow(clippy::too_many_arguments)]
fn build(
    ctx: &Context,
    name: &str,
    main: Graph,
    library: Vec<FunctionDef>,
    opts: &TfOptions,
    inputs: Vec<InputSpec>,
    outputs: Vec<OutputSpec>,
    variables: HashMap<String, Attribute>,
) -> Result<Module, ImportError> {
    check_ops(name, &main, &library, &outputs)?;
    let lists = ops::ListShapes::default();
    loop {
        lists.start_attempt();
        let r = build_once(
            ctx,
            name,
            main.clone(),
            library.clone(),
            opts,
            &inputs,
            &outputs,
            variables.clone(),
            &lists,
        );
        if lists.learned() {
            continue;
        }
        return r.and_then(|m| lists.all_known().map(|()| m));
    }
}

fn check_ops(
    name: &str,
    main: &Graph,
    library: &[FunctionDef],
    outputs: &[OutputSpec],
) -> Result<(), ImportError> {
    let lib: HashMap<&str, &FunctionDef> = library
        .iter()
        .filter_map(|f| Some((f.signature.as_ref()?.name.as_str(), f)))
        .collect();
    let outs: Vec<usize> = outputs.iter().map(|o| o.node).collect();
    let bad: Vec<String> = reachable_ops(main, &lib, &outs)
        .into_iter()
        .filter(|(_, op)| !supported(op))
        .map(|(n, op)| format!("  node '{n}': {op}"))
        .collect();
    if !bad.is_empty() {
        return Err(ImportError::unsupported(format!(
            "'{name}' uses {} unsupported operator{}:\n{}",
            bad.len(),
            if bad.len() == 1 { "" } else { "s" },
            bad.join("\n")
        )));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn build_once(
    ctx: &Context,
    name: &str,
    main: Graph,
    library: Vec<FunctionDef>,
    opts: &TfOptions,
    inputs: &[InputSpec],
    outputs: &[OutputSpec],
    variables: HashMap<String, Attribute>,
    lists: &ops::ListShapes,
) -> Result<Module, ImportError> {
    let file_loc = Location::file(name, 0, 0);
    let mut m = Module::new(ctx, file_loc);
    let (func, inner, entry) = crate::emit::new_function(ctx, &mut m, file_loc)?;
    let (in_types, out_types) = {
        let cx = TfCx {
            e: Emitter::new(ctx, inner, entry),
            lists,
        };
        let mut imp = Importer::new(cx, main, library, file_loc);
        imp.variables = variables;
        let mut in_types = vec![];
        for spec in inputs {
            let g = imp.main();
            let node = &g.nodes[spec.node];
            let ctx_msg = format!("node '{}' ({})", node.name, node.op);
            let dt = dtype_from_tf(spec.dtype).map_err(|e| e.context(&ctx_msg))?;
            let given = spec
                .aliases
                .iter()
                .find_map(|a| opts.input_shapes.get(a))
                .cloned();
            let dims = match given.or_else(|| spec.shape.clone()) {
                Some(d) => d,
                None => {
                    return Err(ImportError::invalid(format!(
                        "{ctx_msg}: the placeholder's shape is unknown; give it with --input-shape {}:DIMS",
                        spec.aliases.first().unwrap_or(&spec.name)
                    )))
                }
            };
            let ty = Type::tensor(&dims, dt);
            let loc = Location::name(&node.name, Some(file_loc));
            let v = imp.cx.e.b.body.add_block_arg(entry, ty, loc);
            imp.bind(spec.node, 0, V::T(v));
            in_types.push(ty);
        }
        let wanted: Vec<(usize, usize)> = outputs.iter().map(|o| (o.node, o.port)).collect();
        let vals = imp.eval(0, &wanted)?;
        let mut outs = vec![];
        for (o, v) in outputs.iter().zip(vals) {
            outs.push(match v {
                V::T(t) => t,
                V::Res(a) => imp.cx.e.constant_attr(a)?,
                V::Dead => {
                    return Err(ImportError::invalid(format!(
                        "output '{}' is a dead value (the untaken output of a Switch)",
                        o.listed
                    )))
                }
            });
        }
        let out_types: Vec<Type> = outs.iter().map(|&v| imp.cx.e.ty(v)).collect();
        imp.cx.e.set_loc(file_loc);
        imp.cx
            .e
            .b
            .create("graph.return", &outs, vec![], Some(vec![]), 0)?;
        drop(imp);
        crate::emit::remove_unused_constants(inner);
        (in_types, out_types)
    };
    let body = m.body_mut();
    body.set_attr(func, "sym_name", Attribute::string(&opts.func_name));
    body.set_attr(
        func,
        "function_type",
        Attribute::ty(Type::function(&in_types, &out_types)),
    );
    let in_names: Vec<String> = inputs.iter().map(|s| s.name.clone()).collect();
    let out_names: Vec<String> = outputs.iter().map(|o| o.name.clone()).collect();
    crate::emit::set_io_names(body, func, &in_names, &out_names)?;
    body.set_attr(func, "ge.data_format", Attribute::string("NHWC"));
    ge_dialects::data::size::bound_size_symbols(&mut m);
    crate::error::verified(m)
}

/// Import a frozen GraphDef file, or a SavedModel directory.
pub fn import_file(ctx: &Context, path: &Path, opts: &TfOptions) -> Result<Module, ImportError> {
    if path.is_dir() {
        return saved_model::import_dir(ctx, path, opts);
    }
    let bytes = std::fs::read(path)
        .map_err(|e| ImportError::io(format!("cannot read '{}': {e}", path.display())))?;
    import_bytes(ctx, &bytes, &path.display().to_string(), opts)
}

/// The `(node, port)` of an output reference `node` or `node:port`.
fn output_ref(g: &Graph, o: &str) -> Res<(usize, usize)> {
    let (_, node, port) = graph::parse_graph_input(o);
    let &n = g
        .by_name
        .get(node)
        .ok_or_else(|| ImportError::invalid(format!("output node '{node}' is not in the graph")))?;
    Ok((n, port))
}

/// Import a frozen GraphDef (the bytes of a `.pb`).
pub fn import_bytes(
    ctx: &Context,
    bytes: &[u8],
    name: &str,
    opts: &TfOptions,
) -> Result<Module, ImportError> {
    let g = GraphDef::decode(bytes).map_err(|e| {
        ImportError::malformed(format!(
            "'{name}' is not a TensorFlow GraphDef or is truncated ({})",
            e.to_string()
                .trim_start_matches("failed to decode Protobuf message: ")
        ))
    })?;
    if g.node.is_empty() || g.node.iter().any(|n| n.name.is_empty() || n.op.is_empty()) {
        return Err(ImportError::malformed(format!(
            "'{name}' is not a TensorFlow GraphDef (no nodes, or nodes without name or op)"
        )));
    }
    let main = Graph::from_nodes(&format!("'{name}'"), &g.node)?;
    // Outputs: as given, else every node nothing consumes (data or control)
    // that computes something.
    let listed: Vec<String> = match &opts.outputs {
        Some(o) => o.clone(),
        None => (0..main.nodes.len())
            .filter(|&i| {
                main.consumers(i).is_empty()
                    && !matches!(
                        main.nodes[i].op.as_str(),
                        "Const" | "NoOp" | "Placeholder" | "Assert" | "VarHandleOp"
                    )
            })
            .map(|i| main.nodes[i].name.clone())
            .collect(),
    };
    if listed.is_empty() {
        return Err(ImportError::invalid(format!(
            "'{name}' has no output nodes"
        )));
    }
    let mut outputs = vec![];
    for o in &listed {
        let (n, port) = output_ref(&main, o)?;
        outputs.push(OutputSpec {
            node: n,
            port,
            name: format!("{}:{port}", main.nodes[n].name),
            listed: o.clone(),
        });
    }
    // Inputs: the placeholders the outputs depend on, in graph order.
    let inputs = placeholders(&main, &outputs)?;
    let library = g.library.map(|l| l.function).unwrap_or_default();
    build(
        ctx,
        name,
        main,
        library,
        opts,
        inputs,
        outputs,
        HashMap::new(),
    )
}

/// The placeholders reachable from the outputs (data edges), in node order.
fn placeholders(g: &Graph, outputs: &[OutputSpec]) -> Res<Vec<InputSpec>> {
    let mut seen = vec![false; g.nodes.len()];
    let mut stack: Vec<usize> = outputs.iter().map(|o| o.node).collect();
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut seen[n], true) {
            continue;
        }
        stack.extend(g.nodes[n].inputs.iter().map(|x| x.0));
    }
    let mut v = vec![];
    for (i, node) in g.nodes.iter().enumerate() {
        if !seen[i] || node.op != "Placeholder" {
            continue;
        }
        let dtype = match node.attrs.get("dtype").and_then(|a| a.value.as_ref()) {
            Some(attr_value::Value::Type(t)) => *t,
            _ => {
                return Err(ImportError::invalid(format!(
                    "node '{}' (Placeholder): placeholder without a dtype",
                    node.name
                )))
            }
        };
        v.push(InputSpec {
            node: i,
            name: format!("{}:0", node.name),
            aliases: vec![node.name.clone()],
            dtype,
            shape: shape_attr(node.attrs.get("shape")),
        });
    }
    Ok(v)
}

/// A `shape` attribute's dims (None for an unknown rank or no attribute).
fn shape_attr(a: Option<&AttrValue>) -> Option<Vec<Dim>> {
    match a.and_then(|a| a.value.as_ref()) {
        Some(attr_value::Value::Shape(s)) => shape_dims(s),
        _ => None,
    }
}

/// The dims of a shape (`-1` unknown), None for an unknown rank.
fn shape_dims(s: &TensorShapeProto) -> Option<Vec<Dim>> {
    let dim = |size: i64| match size {
        n if n < 0 => Dim::Unknown,
        n => Dim::Static(n),
    };
    (!s.unknown_rank).then(|| s.dim.iter().map(|d| dim(d.size)).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_is_sorted_and_disjoint_from_the_structural_ops() {
        for w in super::TABLE.windows(2) {
            assert!(w[0].0 < w[1].0, "{} >= {}", w[0].0, w[1].0);
        }
        for (n, _) in super::TABLE {
            assert!(!super::STRUCTURAL.contains(n), "{n}");
        }
    }
}
