//! Import: upstream `func` + `tosa` modules (torch-mlir's and TensorFlow's
//! TOSA legalisations) → the `graph` dialect.
//!
//! The module is parsed and verified by MLIR (melior `Module::parse`); each
//! upstream op is first read into a plain [`UOp`] (operands, result types,
//! attributes), then mapped by its function in [`TABLE`]. TOSA is NHWC: the
//! importer puts `data.transpose`s around NCHW graph ops and cancels
//! transpose pairs as it goes, so a module exported by this bridge comes
//! back without them. Unused ops are removed at the end.

mod ops;

use super::{dtype_of_mlir, DiagnosticSink};
use crate::emit::Emitter;
use crate::error::ImportError;
use ge_ir::attributes::{Attribute, DenseElements};
use ge_ir::body::{Body, ValueId};
use ge_ir::tensor::Tensor;
use ge_ir::{Context, DType, Dim, Location, Module, OpId, Type};
use melior::ir::attribute::AttributeLike;
use melior::ir::attribute::{
    DenseElementsAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, FlatSymbolRefAttribute,
    FloatAttribute, IntegerAttribute, StringAttribute,
};
use melior::ir::operation::OperationLike;
use melior::ir::r#type::RankedTensorType;
use melior::ir::{BlockLike, OperationRef, RegionLike, Type as MType, ValueLike};
use melior::ir::{Module as MModule, ShapedTypeLike};
use std::collections::HashMap;

pub type Res<T> = Result<T, String>;

/// An import function: one upstream op to the values of its results.
pub type ImportFn = fn(&mut Im, &UOp) -> Res<Vec<ValueId>>;

pub use ops::TABLE;

fn lookup(name: &str) -> Option<ImportFn> {
    TABLE.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// An attribute value read from MLIR.
#[derive(Clone, Debug)]
pub enum UAttr {
    Ints(Vec<i64>),
    Int(i64),
    Float(f64),
    Elements(DenseElements),
    Str(String),
    Sym(String),
    Other(String),
}

/// An upstream op, read out of MLIR.
#[derive(Clone, Debug)]
pub struct UOp {
    pub name: String,
    pub operands: Vec<usize>,
    pub result_keys: Vec<usize>,
    /// Result shapes (`-1`: dynamic) and dtypes; `None` for non-tensor results.
    pub results: Vec<Option<(Vec<i64>, DType)>>,
    pub attrs: HashMap<String, UAttr>,
    pub loc: Location,
}

impl UOp {
    pub fn ints(&self, name: &str) -> Res<Vec<i64>> {
        match self.attrs.get(name) {
            Some(UAttr::Ints(v)) => Ok(v.clone()),
            _ => Err(format!(
                "'{}' needs the array attribute '{name}'",
                self.name
            )),
        }
    }
    pub fn int(&self, name: &str) -> Res<i64> {
        match self.attrs.get(name) {
            Some(UAttr::Int(v)) => Ok(*v),
            _ => Err(format!(
                "'{}' needs the integer attribute '{name}'",
                self.name
            )),
        }
    }
    pub fn num(&self, name: &str) -> Res<f64> {
        match self.attrs.get(name) {
            Some(UAttr::Float(v)) => Ok(*v),
            Some(UAttr::Int(v)) => Ok(*v as f64),
            _ => Err(format!("'{}' needs the attribute '{name}'", self.name)),
        }
    }
    pub fn out(&self, i: usize) -> Res<(Vec<i64>, DType)> {
        self.results
            .get(i)
            .cloned()
            .flatten()
            .ok_or_else(|| format!("'{}' result #{i} is not a ranked tensor", self.name))
    }
}

/// The importer of one function body.
pub struct Im<'e> {
    pub e: Emitter<'e>,
    vals: HashMap<usize, ValueId>,
    /// Values of `!tosa.shape` constants.
    pub shapes: HashMap<usize, Vec<i64>>,
}

impl Im<'_> {
    pub fn v(&self, op: &UOp, i: usize) -> Res<ValueId> {
        let k = op
            .operands
            .get(i)
            .ok_or_else(|| format!("'{}' has no operand #{i}", op.name))?;
        self.vals
            .get(k)
            .copied()
            .ok_or_else(|| format!("'{}' operand #{i} is not a tensor value", op.name))
    }

    pub fn shape_operand(&self, op: &UOp, i: usize) -> Res<Vec<i64>> {
        op.operands
            .get(i)
            .and_then(|k| self.shapes.get(k))
            .cloned()
            .ok_or_else(|| format!("'{}' operand #{i} must be a tosa.const_shape", op.name))
    }

    /// The constant value of operand `i`, if it is a constant.
    pub fn const_of(&self, op: &UOp, i: usize) -> Option<Tensor> {
        let v = self.v(op, i).ok()?;
        self.e.const_value(v)
    }

    pub fn op(
        &mut self,
        name: &str,
        xs: &[ValueId],
        attrs: Vec<(&str, Attribute)>,
    ) -> Res<ValueId> {
        self.e.op(name, xs, attrs)
    }

    /// The op defining `v`, if its name is `name`.
    pub fn def_named(&self, v: ValueId, name: &str) -> Option<OpId> {
        let b = self.e.body();
        let d = b.defining_op(v)?;
        (b.op(d).name.as_str() == name).then_some(d)
    }

    /// `data.transpose`, cancelling a transpose it undoes.
    pub fn transpose(&mut self, x: ValueId, perm: &[i64]) -> Res<ValueId> {
        if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
            return Ok(x);
        }
        if let Some(d) = self.def_named(x, "data.transpose") {
            let b = self.e.body();
            let q = b.op(d).attr("perm").and_then(|a| a.as_i64_array());
            if let Some(q) = q {
                // x = transpose(u, q); y[i] = x[perm[i]] = u[q[perm[i]]].
                if q.len() == perm.len()
                    && perm
                        .iter()
                        .enumerate()
                        .all(|(i, &p)| q.get(p as usize) == Some(&(i as i64)))
                {
                    return Ok(b.operand(d, 0));
                }
            }
        }
        self.op(
            "data.transpose",
            &[x],
            vec![("perm", Attribute::i64_array(perm))],
        )
    }

    pub fn reshape(&mut self, x: ValueId, shape: &[i64]) -> Res<ValueId> {
        if self.e.static_shape(x).as_deref() == Some(shape) {
            return Ok(x);
        }
        // reshape(reshape(u)) = reshape(u).
        if let Some(d) = self.def_named(x, "data.reshape") {
            let u = self.e.body().operand(d, 0);
            return self.reshape(u, shape);
        }
        self.op(
            "data.reshape",
            &[x],
            vec![("shape", Attribute::i64_array(shape))],
        )
    }

    pub fn cast(&mut self, x: ValueId, to: DType) -> Res<ValueId> {
        if self.e.dtype(x)? == to {
            return Ok(x);
        }
        // An integer widening undone: cast(cast(u: T → wide) → T) = u.
        if let Some(d) = self.def_named(x, "graph.cast") {
            let u = self.e.body().operand(d, 0);
            let (ud, xd) = (self.e.dtype(u)?, self.e.dtype(x)?);
            if ud == to && ud.is_int() && xd.is_int() && xd.bit_width() >= ud.bit_width() {
                return Ok(u);
            }
        }
        self.op(
            "graph.cast",
            &[x],
            vec![("to", Attribute::ty(Type::scalar(to)))],
        )
    }
}

fn key_of<'c, V: ValueLike<'c>>(v: &V) -> usize {
    v.to_raw().ptr as usize
}

/// Shape and dtype of an MLIR ranked tensor type.
pub fn tensor_type(t: MType) -> Option<(Vec<i64>, DType)> {
    let rt = RankedTensorType::try_from(t).ok()?;
    let mut s = vec![];
    for i in 0..rt.rank() {
        s.push(match rt.dim_size(i).ok()? {
            melior::ir::r#type::DimSize::Static(v) => v as i64,
            melior::ir::r#type::DimSize::Dynamic => -1,
        });
    }
    let dt = dtype_of_mlir(&rt.element().to_string())?;
    Some((s, dt))
}

fn ge_type(shape: &[i64], dt: DType) -> Type {
    let dims: Vec<Dim> = shape
        .iter()
        .map(|&d| if d < 0 { Dim::Unknown } else { Dim::Static(d) })
        .collect();
    Type::tensor(&dims, dt)
}

fn read_attr(a: melior::ir::Attribute) -> UAttr {
    if let Ok(x) = DenseI64ArrayAttribute::try_from(a) {
        return UAttr::Ints((0..x.len()).filter_map(|i| x.element(i).ok()).collect());
    }
    if let Ok(x) = DenseI32ArrayAttribute::try_from(a) {
        return UAttr::Ints(
            (0..x.len())
                .filter_map(|i| x.element(i).ok().map(|v| v as i64))
                .collect(),
        );
    }
    if let Ok(x) = IntegerAttribute::try_from(a) {
        return UAttr::Int(x.value());
    }
    if let Ok(x) = FloatAttribute::try_from(a) {
        return UAttr::Float(x.value());
    }
    if let Ok(x) = StringAttribute::try_from(a) {
        return UAttr::Str(x.value().to_string());
    }
    if let Ok(x) = FlatSymbolRefAttribute::try_from(a) {
        return UAttr::Sym(x.value().to_string());
    }
    if let Ok(x) = DenseElementsAttribute::try_from(a) {
        if let Some(d) = read_elements(&x) {
            return UAttr::Elements(d);
        }
    }
    UAttr::Other(a.to_string())
}

fn read_elements(x: &DenseElementsAttribute) -> Option<DenseElements> {
    let a: melior::ir::Attribute = (*x).into();
    let (shape, dt) = tensor_type(a.r#type()).or_else(|| {
        // `index` elements (tosa.const_shape) are stored as 64-bit integers.
        let rt = RankedTensorType::try_from(a.r#type()).ok()?;
        if rt.element().to_string() != "index" {
            return None;
        }
        let s = (0..rt.rank())
            .map(|i| match rt.dim_size(i) {
                Ok(melior::ir::r#type::DimSize::Static(v)) => Some(v as i64),
                _ => None,
            })
            .collect::<Option<Vec<i64>>>()?;
        Some((s, DType::I64))
    })?;
    let ty = Type::tensor_static(&shape, dt);
    let splat = x.is_splat();
    let n = if splat { 1 } else { x.len() };
    let bytes: Vec<u8> = if dt == DType::I1 {
        (0..n)
            .map(|i| x.bool_element(i).map(|b| b as u8))
            .collect::<Result<_, _>>()
            .ok()?
    } else {
        let len = n * dt.byte_size();
        let p = x.raw_data() as *const u8;
        if p.is_null() {
            return None;
        }
        // SAFETY: MLIR stores `n` packed elements of `byte_size` bytes each
        // (one for a splat) behind the raw data pointer of a non-i1 dense
        // elements attribute; the attribute outlives this copy.
        unsafe { std::slice::from_raw_parts(p, len) }.to_vec()
    };
    Some(DenseElements {
        ty,
        splat: splat && x.len() != 1,
        bytes: bytes.into(),
    })
}

fn loc_of(l: melior::ir::Location, file: &str) -> Location {
    // MLIR prints `loc("file":line:col)`; keep file/line/col when present.
    let s = l.to_string();
    if let Some(rest) = s.strip_prefix("loc(\"") {
        if let Some((f, tail)) = rest.split_once("\":") {
            let nums: Vec<u32> = tail
                .trim_end_matches(')')
                .split(':')
                .filter_map(|x| x.parse().ok())
                .collect();
            if nums.len() == 2 {
                // Text parsed from a buffer is named "-": use the file's name.
                let f = if f == "-" { file } else { f };
                return Location::file(f, nums[0], nums[1]);
            }
        }
    }
    Location::file(file, 0, 0)
}

fn read_op(op: &OperationRef, file: &str) -> Res<UOp> {
    let name = op
        .name()
        .as_string_ref()
        .as_str()
        .map_err(|e| e.to_string())?
        .to_string();
    let operands = op.operands().map(|v| key_of(&v)).collect();
    let mut results = vec![];
    let mut result_keys = vec![];
    for r in op.results() {
        result_keys.push(key_of(&r));
        results.push(tensor_type(r.r#type()));
    }
    let mut attrs = HashMap::new();
    for (n, a) in op.attributes() {
        let n = n
            .as_string_ref()
            .as_str()
            .map_err(|e| e.to_string())?
            .to_string();
        attrs.insert(n, read_attr(a));
    }
    Ok(UOp {
        name,
        operands,
        result_keys,
        results,
        attrs,
        loc: loc_of(op.location(), file),
    })
}

/// Parse upstream MLIR text and import it into the graph dialect.
pub fn import_text(ctx: &Context, text: &str, file: &str) -> Result<Module, ImportError> {
    let mctx = super::mlir_context();
    let sink = DiagnosticSink::attach(&mctx);
    let parsed = MModule::parse(&mctx, text);
    let msgs = sink.take();
    let Some(mm) = parsed else {
        sink.detach(&mctx);
        return Err(ImportError::malformed(format!(
            "'{file}' is not a valid MLIR module:\n{}",
            msgs.join("\n")
        )));
    };
    if !mm.as_operation().verify() {
        let msgs = sink.take();
        sink.detach(&mctx);
        return Err(ImportError::invalid(format!(
            "'{file}' does not verify:\n{}",
            msgs.join("\n")
        )));
    }
    sink.detach(&mctx);
    let r = import_module(ctx, &mm, file);
    drop(mm);
    r
}

fn import_module(ctx: &Context, mm: &MModule, file: &str) -> Result<Module, ImportError> {
    let mut funcs = vec![];
    let mut bad = vec![];
    let mut op = mm.body().first_operation();
    while let Some(o) = op {
        let name = o.name().as_string_ref().as_str().unwrap_or("?").to_string();
        if name != "func.func" {
            bad.push(format!(
                "  {}: {name}",
                crate::mlir::export::loc_text(loc_of(o.location(), file))
            ));
        } else {
            // Check every op of the body up front.
            if let Ok(r) = o.region(0) {
                if let Some(b) = r.first_block() {
                    let mut x = b.first_operation();
                    while let Some(xo) = x {
                        let n = xo
                            .name()
                            .as_string_ref()
                            .as_str()
                            .unwrap_or("?")
                            .to_string();
                        if lookup(&n).is_none() && n != "func.return" {
                            bad.push(format!(
                                "  {}: {n}",
                                crate::mlir::export::loc_text(loc_of(xo.location(), file))
                            ));
                        }
                        x = xo.next_in_block();
                    }
                }
            }
            funcs.push(o);
        }
        op = o.next_in_block();
    }
    if !bad.is_empty() {
        return Err(ImportError::unsupported(format!(
            "'{file}' uses {} upstream op{} the importer does not support:\n{}",
            bad.len(),
            if bad.len() == 1 { "" } else { "s" },
            bad.join("\n")
        )));
    }
    let mut m = Module::new(ctx, Location::file(file, 0, 0));
    for f in funcs {
        import_func(ctx, &mut m, &f, file)?;
    }
    crate::error::verified(m)
}

fn import_func(
    ctx: &Context,
    m: &mut Module,
    f: &OperationRef,
    file: &str,
) -> Result<(), ImportError> {
    let fop = read_op(f, file).map_err(ImportError::invalid)?;
    let name = match fop.attrs.get("sym_name") {
        Some(UAttr::Str(s)) => s.clone(),
        _ => return Err(ImportError::invalid("a func.func has no sym_name")),
    };
    let private = matches!(fop.attrs.get("sym_visibility"), Some(UAttr::Str(s)) if s == "private");
    let region = f
        .region(0)
        .map_err(|e| ImportError::invalid(format!("@{name}: {e}")))?;
    let Some(mblock) = region.first_block() else {
        return Err(ImportError::unsupported(format!(
            "@{name}: external functions (no body) are not imported"
        )));
    };
    if mblock.next_in_region().is_some() {
        return Err(ImportError::unsupported(format!(
            "@{name}: functions with several blocks (control flow) are not imported"
        )));
    }
    let (func, inner, entry) = crate::emit::new_function(ctx, m, fop.loc)?;
    let (in_types, out_types) = {
        let mut im = Im {
            e: Emitter::new(ctx, inner, entry),
            vals: HashMap::new(),
            shapes: HashMap::new(),
        };
        let mut in_types = vec![];
        for i in 0..mblock.argument_count() {
            let a = mblock
                .argument(i)
                .map_err(|e| ImportError::invalid(e.to_string()))?;
            let (s, dt) = tensor_type(a.r#type()).ok_or_else(|| {
                ImportError::unsupported(format!(
                    "@{name}: argument #{i} of type '{}' is not a ranked tensor of a supported element type",
                    a.r#type()
                ))
            })?;
            let ty = ge_type(&s, dt);
            let v = im.e.b.body.add_block_arg(entry, ty, fop.loc);
            im.vals.insert(key_of(&a), v);
            in_types.push(ty);
        }
        let mut out_types = vec![];
        let mut x = mblock.first_operation();
        while let Some(xo) = x {
            let u = read_op(&xo, file).map_err(ImportError::invalid)?;
            let at = |e: String| {
                ImportError::invalid(format!(
                    "{}: {}: {e}",
                    crate::mlir::export::loc_text(u.loc),
                    u.name
                ))
            };
            im.e.set_loc(u.loc);
            if u.name == "func.return" {
                let mut outs = vec![];
                for i in 0..u.operands.len() {
                    outs.push(im.v(&u, i).map_err(at)?);
                }
                out_types = outs.iter().map(|&v| im.e.ty(v)).collect();
                im.e.b
                    .create("graph.return", &outs, vec![], Some(vec![]), 0)
                    .map_err(at)?;
                x = xo.next_in_block();
                continue;
            }
            let map = lookup(&u.name).ok_or_else(|| at("unsupported op".into()))?;
            let outs = map(&mut im, &u).map_err(at)?;
            for (k, v) in u.result_keys.iter().zip(outs) {
                im.vals.insert(*k, v);
            }
            x = xo.next_in_block();
        }
        let _ = im;
        remove_dead(inner);
        (in_types, out_types)
    };
    let body = m.body_mut();
    body.set_attr(func, "sym_name", Attribute::string(&name));
    body.set_attr(
        func,
        "function_type",
        Attribute::ty(Type::function(&in_types, &out_types)),
    );
    if private {
        body.set_attr(func, "sym_visibility", Attribute::string("private"));
    }
    Ok(())
}

/// Erase ops whose results nobody uses (every graph/data op is pure), repeatedly.
fn remove_dead(body: &mut Body) {
    crate::emit::remove_unused(body, |d| {
        !d.results().is_empty() && d.name.as_str() != "graph.call"
    });
}
