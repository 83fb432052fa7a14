//! ES graph building from C: a `ge_graph` wraps the Rust ES
//! [`GraphBuilder`]; tensors are small value handles (`ge_es_tensor`: the
//! graph's id and an index), so a handle of another graph, of a freed graph
//! or made up is an error, not a dangling pointer. One C function per op is
//! generated from the op declarations into `es_ops.rs` (see `gen.rs`); each
//! builds its op through [`Call`], which does what the generated Rust
//! method does (attributes by the same `push_attr`, then `create_op`).
//! `ge_es_op` builds any op by name.

use crate::args::{self, Out};
use crate::bytes::ge_bytes;
use crate::dtype::{ge_dtype, shape_bytes, to_dtype};
use crate::module::ge_module;
use crate::status::{entry, ge_status, Error, Result, GE_ERROR_BUILD, GE_ERROR_PARSE};
use ge_dialects::es::attr::{push_attr, IntoAttr};
use ge_dialects::es::{GraphBuilder, Group};
use ge_ir::body::ValueId;
use ge_ir::opdef::{Arity, OpDef};
use ge_ir::{Attribute, DType, Dim, Type};
use std::ffi::c_char;
use std::sync::atomic::{AtomicU64, Ordering};

/// A graph being built: one `graph.func` in a new module. Not thread-safe.
pub struct ge_graph {
    /// `None` once finished.
    builder: Option<GraphBuilder>,
    id: u64,
    values: Vec<ValueId>,
    input_names: Vec<String>,
    output_names: Vec<String>,
    /// `ge_graph_output` succeeded.
    returned: bool,
}

/// A tensor of a graph being built (a value: copy it freely). It is valid
/// for the graph that made it; `{0, 0}` is "no tensor" (an absent
/// optional operand of `ge_es_op`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ge_es_tensor {
    /// The graph's id (never 0 for a real tensor).
    pub graph: u64,
    /// The tensor's number in its graph.
    pub index: u64,
}

static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

fn build_err(e: ge_dialects::es::EsError) -> Error {
    Error::new(GE_ERROR_BUILD, e.msg)
}

impl ge_graph {
    fn builder(&self) -> Result<&GraphBuilder> {
        self.builder.as_ref().ok_or_else(|| {
            Error::new(
                GE_ERROR_BUILD,
                "the graph is finished (ge_graph_finish was called)",
            )
        })
    }

    fn value(&self, t: ge_es_tensor, what: &str) -> Result<ValueId> {
        if t.graph == 0 {
            return Err(Error::arg(format!("'{what}' is the null tensor")));
        }
        if t.graph != self.id {
            return Err(Error::arg(format!("'{what}' is a tensor of another graph")));
        }
        usize::try_from(t.index)
            .ok()
            .and_then(|i| self.values.get(i).copied())
            .ok_or_else(|| Error::arg(format!("'{what}' is not a tensor of this graph")))
    }

    fn handle(&mut self, v: ValueId) -> ge_es_tensor {
        self.values.push(v);
        ge_es_tensor {
            graph: self.id,
            index: (self.values.len() - 1) as u64,
        }
    }
}

/// A new graph: a public function `@name` in a new module.
#[no_mangle]
pub unsafe extern "C" fn ge_graph_new(name: *const c_char, out: *mut *mut ge_graph) -> ge_status {
    entry("ge_graph_new", || {
        // SAFETY: the ge.h contract: a C string and a writable pointer.
        let (name, out) = unsafe { (args::cstr(name, "name")?, Out::new(out, "out")?) };
        if name.is_empty() {
            return Err(Error::arg("the function name is empty"));
        }
        out.set(Box::into_raw(Box::new(ge_graph {
            builder: Some(GraphBuilder::new(name)),
            id: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed),
            values: vec![],
            input_names: vec![],
            output_names: vec![],
            returned: false,
        })));
        Ok(())
    })
}

/// Free a graph (NULL is ignored); its tensors become invalid.
#[no_mangle]
pub unsafe extern "C" fn ge_graph_free(graph: *mut ge_graph) {
    entry("ge_graph_free", || {
        // SAFETY: NULL or a live graph, not used afterwards.
        unsafe { args::free(graph) };
        Ok(())
    });
}

/// A new input `name` of type `type` in `.air` syntax, e.g.
/// `"tensor<Bx3x224x224xf32>"` (`B` a symbolic dim: give its upper bound
/// with `ge_graph_symbol_bound`).
#[no_mangle]
pub unsafe extern "C" fn ge_graph_input(
    graph: *mut ge_graph,
    name: *const c_char,
    type_: *const c_char,
    out: *mut ge_es_tensor,
) -> ge_status {
    entry("ge_graph_input", || {
        // SAFETY: the ge.h contract: a live graph, two C strings, a writable pointer.
        let (g, name, ty, out) = unsafe {
            (
                args::handle_mut(graph, "graph")?,
                args::cstr(name, "name")?,
                args::cstr(type_, "type")?,
                Out::new(out, "out")?,
            )
        };
        if g.input_names.iter().any(|n| n == name) {
            return Err(Error::arg(format!("there is an input '{name}' already")));
        }
        let b = g.builder()?;
        let t = b.input(name, ty).map_err(|e| {
            let status = if e.msg.starts_with("invalid type") {
                GE_ERROR_PARSE
            } else {
                GE_ERROR_BUILD
            };
            Error::new(status, e.msg)
        })?;
        let id = t.id();
        g.input_names.push(name.to_string());
        out.set(g.handle(id));
        Ok(())
    })
}

/// Record the upper bound of symbolic dim `symbol` (memory is planned for it).
#[no_mangle]
pub unsafe extern "C" fn ge_graph_symbol_bound(
    graph: *mut ge_graph,
    symbol: *const c_char,
    bound: i64,
) -> ge_status {
    entry("ge_graph_symbol_bound", || {
        // SAFETY: the ge.h contract: a live graph and a C string.
        let (g, sym) = unsafe {
            (
                args::handle_mut(graph, "graph")?,
                args::cstr(symbol, "symbol")?,
            )
        };
        if bound <= 0 {
            return Err(Error::arg(format!(
                "the bound of '{sym}' must be positive, got {bound}"
            )));
        }
        g.builder()?.symbol_bound(sym, bound);
        Ok(())
    })
}

/// The static tensor type of a dtype and shape.
///
/// # Safety
/// `shape` is NULL (with `rank` 0) or points to `rank` dims.
unsafe fn static_type(
    dtype: ge_dtype,
    shape: *const i64,
    rank: usize,
) -> Result<(Type, DType, Vec<usize>)> {
    let dt = to_dtype(dtype)?;
    // SAFETY: forwarded contract.
    let dims = unsafe { args::slice(shape, rank, "shape")? };
    let (us, _) = shape_bytes(dims, dt)?;
    let ty = Type::tensor(
        &dims.iter().map(|&d| Dim::Static(d)).collect::<Vec<_>>(),
        dt,
    );
    Ok((ty, dt, us))
}

/// A constant (an inline `dense<…>` literal) of `dtype` and `shape` from
/// `size` little-endian bytes at `data`.
#[no_mangle]
pub unsafe extern "C" fn ge_graph_constant(
    graph: *mut ge_graph,
    dtype: ge_dtype,
    shape: *const i64,
    rank: usize,
    data: *const std::ffi::c_void,
    size: usize,
    out: *mut ge_es_tensor,
) -> ge_status {
    entry("ge_graph_constant", || {
        // SAFETY: the ge.h contract: a live graph, `rank` dims, `size` bytes,
        // a writable pointer.
        let (g, (_, dt, dims), bytes, out) = unsafe {
            (
                args::handle_mut(graph, "graph")?,
                static_type(dtype, shape, rank)?,
                args::slice(data.cast::<u8>(), size, "data")?,
                Out::new(out, "out")?,
            )
        };
        let t = ge_dialects::data::tensor_from_bytes(bytes, dims, dt).map_err(Error::arg)?;
        let v = g.builder()?.constant(&t).map_err(build_err)?.id();
        out.set(g.handle(v));
        Ok(())
    })
}

/// A weight `name` of `dtype` and `shape` from `size` little-endian bytes
/// (kept as a `dense_resource` blob of the module).
#[no_mangle]
pub unsafe extern "C" fn ge_graph_weight(
    graph: *mut ge_graph,
    name: *const c_char,
    dtype: ge_dtype,
    shape: *const i64,
    rank: usize,
    data: *const std::ffi::c_void,
    size: usize,
    out: *mut ge_es_tensor,
) -> ge_status {
    entry("ge_graph_weight", || {
        // SAFETY: as ge_graph_constant, and a C string.
        let (g, name, (ty, _, _), bytes, out) = unsafe {
            (
                args::handle_mut(graph, "graph")?,
                args::cstr(name, "name")?,
                static_type(dtype, shape, rank)?,
                args::slice(data.cast::<u8>(), size, "data")?,
                Out::new(out, "out")?,
            )
        };
        let v = g
            .builder()?
            .weight_raw(name, ty, bytes)
            .map_err(build_err)?
            .id();
        out.set(g.handle(v));
        Ok(())
    })
}

/// The type of tensor `t` in `.air` syntax (`"tensor<Bx4x8x8xf32>"`), as
/// its op's shape inference gave it, into a new `ge_bytes`.
#[no_mangle]
pub unsafe extern "C" fn ge_graph_tensor_type(
    graph: *const ge_graph,
    t: ge_es_tensor,
    out: *mut *mut ge_bytes,
) -> ge_status {
    entry("ge_graph_tensor_type", || {
        // SAFETY: the ge.h contract: a live graph and a writable pointer.
        let (g, out) = unsafe { (args::handle(graph, "graph")?, Out::new(out, "out")?) };
        let v = g.value(t, "t")?;
        let ty = g.builder()?.all_results(vec![v])[0].ty();
        out.set(Box::into_raw(Box::new(ge_bytes::new(
            ty.to_string().into_bytes(),
        ))));
        Ok(())
    })
}

/// End the function: return `outputs` (named `names[i]` in the compiled
/// model; `names` NULL: `out0`, `out1`, …). Nothing can be added afterwards.
#[no_mangle]
pub unsafe extern "C" fn ge_graph_output(
    graph: *mut ge_graph,
    outputs: *const ge_es_tensor,
    names: *const *const c_char,
    num_outputs: usize,
) -> ge_status {
    entry("ge_graph_output", || {
        // SAFETY: the ge.h contract: a live graph, `num_outputs` tensors and
        // (when not NULL) as many C strings.
        let (g, ts, names) = unsafe {
            (
                args::handle_mut(graph, "graph")?,
                args::slice(outputs, num_outputs, "outputs")?,
                match names.is_null() {
                    true => None,
                    false => Some(args::strs(names, num_outputs, "names")?),
                },
            )
        };
        let ids = ts
            .iter()
            .enumerate()
            .map(|(i, t)| g.value(*t, &format!("outputs[{i}]")))
            .collect::<Result<Vec<_>>>()?;
        if let Some(ns) = &names {
            ge_dialects::graph::func::check_io_names("output", ns.iter().copied())
                .map_err(Error::arg)?;
        }
        let b = g.builder()?;
        b.output(&b.all_results(ids)).map_err(build_err)?;
        g.output_names =
            names.map_or_else(Vec::new, |ns| ns.iter().map(|s| s.to_string()).collect());
        g.returned = true;
        Ok(())
    })
}

/// Finish the graph: the verified module goes to `*out` (free it with
/// `ge_module_free`); the graph handle stays valid but builds nothing more.
#[no_mangle]
pub unsafe extern "C" fn ge_graph_finish(
    graph: *mut ge_graph,
    out: *mut *mut ge_module,
) -> ge_status {
    entry("ge_graph_finish", || {
        // SAFETY: the ge.h contract: a live graph and a writable pointer.
        let (g, out) = unsafe { (args::handle_mut(graph, "graph")?, Out::new(out, "out")?) };
        g.builder()?;
        if !g.returned {
            // Checked here so that the graph stays usable.
            return Err(Error::new(
                GE_ERROR_BUILD,
                "the function has no outputs (call ge_graph_output first)",
            ));
        }
        let b = g
            .builder
            .take()
            .ok_or_else(|| Error::new(GE_ERROR_BUILD, "the graph is finished"))?;
        let mut module = b.finish().map_err(build_err)?;
        let func = module
            .top_ops()
            .into_iter()
            .find(|&o| ge_dialects::graph::func::Func::is(module.body().op(o)));
        if let Some(f) = func {
            ge_dialects::graph::func::set_io_names(
                module.body_mut(),
                f,
                &g.input_names,
                &g.output_names,
            );
        }
        out.set(Box::into_raw(Box::new(ge_module { module })));
        Ok(())
    })
}

/// One op being built by a generated `ge_es_*` function or `ge_es_op`.
pub struct Call<'a> {
    g: &'a mut ge_graph,
    def: &'static OpDef,
    method: &'static str,
    groups: Vec<Vec<ValueId>>,
    attrs: Vec<(&'static str, Attribute)>,
}

/// The definition of op `name` and its ES method name, if it has one.
fn es_def(name: &str) -> Result<(&'static OpDef, &'static str)> {
    let def = [&ge_dialects::graph::DIALECT, &ge_dialects::data::DIALECT]
        .into_iter()
        .flat_map(|d| d.ops())
        .find(|d| d.name == name)
        .ok_or_else(|| {
            Error::arg(format!(
                "'{name}' is not an op of the graph or data dialect"
            ))
        })?;
    match ge_dialects::es::es_op(name) {
        Some(es) => Ok((def, es.method)),
        None => Err(Error::arg(format!(
            "'{name}' cannot be built with ES: {}",
            ge_dialects::es::exclusion_reason(name).unwrap_or("it has no ES method")
        ))),
    }
}

impl<'a> Call<'a> {
    /// # Safety
    /// `graph` is NULL or a live graph used by no other call at the same time.
    pub unsafe fn new(graph: *mut ge_graph, op: &str) -> Result<Call<'a>> {
        // SAFETY: forwarded contract.
        let g = unsafe { args::handle_mut(graph, "graph")? };
        g.builder()?;
        let (def, method) = es_def(op)?;
        Ok(Call {
            g,
            def,
            method,
            groups: vec![],
            attrs: vec![],
        })
    }

    /// A required operand.
    pub fn one(&mut self, name: &str, t: ge_es_tensor) -> Result<()> {
        let v = self.g.value(t, name)?;
        self.groups.push(vec![v]);
        Ok(())
    }

    /// An optional operand (NULL: absent).
    ///
    /// # Safety
    /// `t` is NULL or points to a tensor handle.
    pub unsafe fn opt(&mut self, name: &str, t: *const ge_es_tensor) -> Result<()> {
        // SAFETY: forwarded contract.
        let t = unsafe { args::opt_value(t, name)? };
        let vs = match t {
            Some(t) => vec![self.g.value(t, name)?],
            None => vec![],
        };
        self.groups.push(vs);
        Ok(())
    }

    /// A variadic operand: `n` tensors.
    ///
    /// # Safety
    /// `ts` is NULL (with `n` 0) or points to `n` tensor handles.
    pub unsafe fn many(&mut self, name: &str, ts: *const ge_es_tensor, n: usize) -> Result<()> {
        // SAFETY: forwarded contract.
        let ts = unsafe { args::slice(ts, n, name)? };
        let vs = ts
            .iter()
            .enumerate()
            .map(|(i, t)| self.g.value(*t, &format!("{name}[{i}]")))
            .collect::<Result<Vec<_>>>()?;
        self.groups.push(vs);
        Ok(())
    }

    /// Attribute `name` from a Rust value (as the Rust ES method sets it).
    pub fn attr<T: IntoAttr>(&mut self, name: &'static str, v: T) {
        push_attr(&mut self.attrs, self.def, name, &v);
    }

    /// An attribute behind a pointer (NULL: the default).
    ///
    /// # Safety
    /// `p` is NULL or points to a `T`.
    pub unsafe fn attr_ptr<T: IntoAttr + Copy>(
        &mut self,
        name: &'static str,
        p: *const T,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        if let Some(v) = unsafe { args::opt_value(p, name)? } {
            self.attr(name, v);
        }
        Ok(())
    }

    /// A string attribute (NULL: the default, or an error when `required`).
    ///
    /// # Safety
    /// `p` is NULL or a C string.
    pub unsafe fn str(
        &mut self,
        name: &'static str,
        p: *const c_char,
        required: bool,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        match unsafe { args::opt_cstr(p, name)? } {
            Some(s) => self.attr(name, s),
            None if required => return Err(Error::arg(format!("'{name}' is NULL"))),
            None => {}
        }
        Ok(())
    }

    /// An array attribute of `n` elements (NULL: the default; for a required
    /// attribute, NULL with `n` 0 is the empty array).
    ///
    /// # Safety
    /// `p` is NULL or points to `n` elements.
    pub unsafe fn array<T: Copy>(
        &mut self,
        name: &'static str,
        p: *const T,
        n: usize,
        required: bool,
    ) -> Result<()>
    where
        Vec<T>: IntoAttr,
    {
        // SAFETY: forwarded contract.
        let v = match required {
            true => Some(unsafe { args::slice(p, n, name)? }),
            false => unsafe { args::opt_slice(p, n, name)? },
        };
        if let Some(v) = v {
            self.attr(name, v.to_vec());
        }
        Ok(())
    }

    /// A string-array attribute (NULL: the default).
    ///
    /// # Safety
    /// `p` is NULL or points to `n` C strings.
    pub unsafe fn strs(
        &mut self,
        name: &'static str,
        p: *const *const c_char,
        n: usize,
        required: bool,
    ) -> Result<()> {
        if p.is_null() && !required {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        let v = unsafe { args::strs(p, n, name)? };
        self.attr(
            name,
            v.iter().map(|s| s.to_string()).collect::<Vec<String>>(),
        );
        Ok(())
    }

    /// An element-type attribute.
    pub fn dtype(&mut self, name: &'static str, d: ge_dtype) -> Result<()> {
        let d = to_dtype(d).map_err(|e| Error::arg(format!("'{name}': {}", e.msg)))?;
        self.attr(name, d);
        Ok(())
    }

    /// An element-type attribute behind a pointer (NULL: the default).
    ///
    /// # Safety
    /// `p` is NULL or points to a `ge_dtype`.
    pub unsafe fn dtype_ptr(&mut self, name: &'static str, p: *const ge_dtype) -> Result<()> {
        // SAFETY: forwarded contract.
        match unsafe { args::opt_value(p, name)? } {
            Some(d) => self.dtype(name, d),
            None => Ok(()),
        }
    }

    /// An attribute written in `.air` syntax (`"dense<1.0> : tensor<2xf32>"`).
    ///
    /// # Safety
    /// `p` is NULL or a C string.
    pub unsafe fn attr_text(
        &mut self,
        name: &'static str,
        p: *const c_char,
        required: bool,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        let Some(text) = (unsafe { args::opt_cstr(p, name)? }) else {
            return match required {
                true => Err(Error::arg(format!("'{name}' is NULL"))),
                false => Ok(()),
            };
        };
        let a = parse_attr(self.g.builder()?, text, name)?;
        self.attr(name, a);
        Ok(())
    }

    /// Build the op: its result values.
    fn build(self) -> Result<(&'a mut ge_graph, Vec<ValueId>)> {
        let Call {
            g,
            def,
            method,
            groups,
            attrs,
        } = self;
        let b = g.builder()?;
        let tensors: Vec<_> = groups.into_iter().map(|vs| b.all_results(vs)).collect();
        let mut gs = Vec::with_capacity(tensors.len());
        for (ts, od) in tensors.iter().zip(def.operands) {
            gs.push(match od.arity {
                Arity::One => match ts.as_slice() {
                    [t] => Group::One(*t),
                    _ => {
                        return Err(Error::arg(format!(
                            "operand '{}' needs one tensor",
                            od.name
                        )))
                    }
                },
                Arity::Optional => Group::Opt(ts.first().copied()),
                Arity::Variadic => Group::Many(ts),
            });
        }
        let vals = b.create_op(def, method, &gs, attrs).map_err(build_err)?;
        Ok((g, vals))
    }

    /// Build an op of one result into `*out`.
    ///
    /// # Safety
    /// `out` is NULL or writable.
    pub unsafe fn finish_one(self, out: *mut ge_es_tensor) -> Result<()> {
        // SAFETY: forwarded contract.
        let out = unsafe { Out::new(out, "out")? };
        let (g, vals) = self.build()?;
        match vals.as_slice() {
            [v] => {
                out.set(g.handle(*v));
                Ok(())
            }
            _ => Err(Error::new(
                GE_ERROR_BUILD,
                format!("expected one result, got {}", vals.len()),
            )),
        }
    }

    /// Build an op of named results, one output pointer each.
    ///
    /// # Safety
    /// Every pointer is NULL or writable.
    pub unsafe fn finish_fields(self, outs: &[(&str, *mut ge_es_tensor)]) -> Result<()> {
        let outs = outs
            .iter()
            // SAFETY: forwarded contract.
            .map(|(n, p)| unsafe { Out::new(*p, n) })
            .collect::<Result<Vec<_>>>()?;
        let (g, vals) = self.build()?;
        if vals.len() != outs.len() {
            return Err(Error::new(
                GE_ERROR_BUILD,
                format!("expected {} results, got {}", outs.len(), vals.len()),
            ));
        }
        for (o, v) in outs.into_iter().zip(vals) {
            o.set(g.handle(v));
        }
        Ok(())
    }

    /// Build an op of variadic results into `outs[0..capacity]`, their count
    /// into `*num_outs` (also when the capacity is too small: then an error).
    ///
    /// # Safety
    /// `outs` is NULL (with `capacity` 0) or writable for `capacity` handles;
    /// `num_outs` is NULL or writable.
    pub unsafe fn finish_many(
        self,
        outs: *mut ge_es_tensor,
        capacity: usize,
        num_outs: *mut usize,
    ) -> Result<()> {
        // SAFETY: forwarded contract.
        let n_out = unsafe { Out::new(num_outs, "num_outs")? };
        if capacity > 0 && (outs.is_null() || !outs.is_aligned()) {
            return Err(Error::arg(
                "'outs' is NULL or misaligned but its capacity is not 0",
            ));
        }
        let (g, vals) = self.build()?;
        n_out.set(vals.len());
        if vals.len() > capacity {
            return Err(Error::arg(format!(
                "the op has {} results but 'outs' holds {capacity} (the op was built; its results are lost)",
                vals.len()
            )));
        }
        for (i, v) in vals.into_iter().enumerate() {
            let h = g.handle(v);
            // SAFETY: i < capacity, and `outs` is writable for `capacity` handles.
            unsafe { outs.add(i).write(h) };
        }
        Ok(())
    }
}

fn parse_attr(b: &GraphBuilder, text: &str, what: &str) -> Result<Attribute> {
    ge_ir::parser::parse_attr_str(b.context(), text).map_err(|d| {
        Error::new(
            GE_ERROR_PARSE,
            format!("'{what}': invalid attribute '{text}': {}", d.message),
        )
    })
}

/// Build any op with an ES method by name (`"graph.conv2d"`): `operands` in
/// the op's order — one tensor per operand, for an optional operand the
/// null tensor `{0, 0}` or nothing at the end, for the (one) variadic
/// operand as many as remain; `attrs` an `.air` attribute dictionary
/// (`"{pads = [1, 1, 1, 1], group = 1 : i64}"`, NULL: none; the rest take
/// their defaults). The results go to `results[0..capacity]`, their count to
/// `*num_results`.
#[no_mangle]
pub unsafe extern "C" fn ge_es_op(
    graph: *mut ge_graph,
    op: *const c_char,
    operands: *const ge_es_tensor,
    num_operands: usize,
    attrs: *const c_char,
    results: *mut ge_es_tensor,
    capacity: usize,
    num_results: *mut usize,
) -> ge_status {
    entry("ge_es_op", || {
        // SAFETY: the ge.h contract: a live graph, C strings or NULL,
        // `num_operands` handles, the result pointers as finish_many says.
        unsafe {
            let op = args::cstr(op, "op")?;
            let ts = args::slice(operands, num_operands, "operands")?;
            let attrs = args::opt_cstr(attrs, "attrs")?;
            let mut c = Call::new(graph, op)?;
            let def = c.def;
            let mut rest = ts;
            for (i, od) in def.operands.iter().enumerate() {
                let needed_after = def.operands[i + 1..]
                    .iter()
                    .filter(|o| o.arity != Arity::Variadic)
                    .count();
                match od.arity {
                    Arity::One => {
                        let (t, r) = rest.split_first().ok_or_else(|| {
                            Error::arg(format!("operand '{}' is missing", od.name))
                        })?;
                        c.one(od.name, *t)?;
                        rest = r;
                    }
                    Arity::Optional => match rest.split_first() {
                        Some((t, r)) => {
                            let p: *const ge_es_tensor = t;
                            c.opt(od.name, if t.graph == 0 { std::ptr::null() } else { p })?;
                            rest = r;
                        }
                        None => c.opt(od.name, std::ptr::null())?,
                    },
                    Arity::Variadic => {
                        if def.operands[i + 1..]
                            .iter()
                            .any(|o| o.arity == Arity::Variadic)
                        {
                            return Err(Error::arg(format!(
                                "'{op}' has several variadic operands: use its ge_es_* function"
                            )));
                        }
                        let n = rest.len().saturating_sub(needed_after);
                        c.many(od.name, rest.as_ptr(), n)?;
                        rest = &rest[n..];
                    }
                }
            }
            if !rest.is_empty() {
                return Err(Error::arg(format!(
                    "{num_operands} operands given but '{op}' takes {}",
                    num_operands - rest.len()
                )));
            }
            if let Some(text) = attrs {
                let a = parse_attr(c.g.builder()?, text, "attrs")?;
                let dict = a.as_dict().ok_or_else(|| {
                    Error::arg(format!(
                        "'attrs' must be a dictionary {{...}}, got '{text}'"
                    ))
                })?;
                for (k, v) in dict.entries() {
                    c.attrs.push((k.as_str(), *v));
                }
            }
            c.finish_many(results, capacity, num_results)
        }
    })
}
