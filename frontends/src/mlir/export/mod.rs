//! Export: `graph`/`data` IR → upstream `func` + `tosa` (+ `arith`), built
//! op by op with melior's `OperationBuilder` and verified by MLIR's verifier.
//!
//! Every exported op has one function in [`TABLE`] (elementwise ops in
//! [`elementwise`], neural-network ops in [`nn`], data movement in [`data`]).
//! TOSA is NHWC and rank-equal broadcasting; the helpers on [`Ex`] insert
//! the transposes and reshapes. An op without an entry is reported with its
//! location before anything is built.

mod data;
mod elementwise;
mod nn;

use super::types::{shape_dtype, tensor_type_text};
use super::DiagnosticSink;
use ge_ir::body::{BlockId, Body, ValueId};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Location, OpId};
use melior::ir::attribute::{
    DenseElementsAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, FlatSymbolRefAttribute,
    FloatAttribute, IntegerAttribute, StringAttribute, TypeAttribute,
};
use melior::ir::operation::{OperationBuilder, OperationLike, OperationPrintingFlags};
use melior::ir::r#type::FunctionType;
use melior::ir::{
    Attribute, Block, BlockLike, Identifier, Location as MLoc, Module as MModule, OperationRef,
    Region, RegionLike, Type as MType, Value,
};
use melior::Context;
use std::collections::HashMap;

pub type Res<T> = Result<T, String>;

/// An export function: the op (its operands already exported) to the MLIR
/// values of its results.
pub type ExportFn = for<'c, 'a> fn(&mut Ex<'c, 'a>, OpId) -> Res<Vec<T<'c, 'a>>>;

/// Every exported op and its export function.
pub static TABLE: &[(&str, ExportFn)] = &[
    ("data.broadcast_to", data::broadcast),
    ("data.concat", data::concat),
    ("data.constant", data::constant),
    ("data.expand", data::broadcast),
    ("data.identity", data::identity),
    ("data.reshape", data::reshape),
    ("data.slice", data::slice),
    ("data.split", data::split),
    ("data.squeeze", data::reshape),
    ("data.tile", data::tile),
    ("data.transpose", data::transpose),
    ("data.unsqueeze", data::reshape),
    ("graph.abs", elementwise::abs),
    ("graph.add", elementwise::add),
    ("graph.and", elementwise::and),
    ("graph.argmax", nn::argmax),
    ("graph.argmin", nn::argmin),
    ("graph.avg_pool2d", nn::avg_pool2d),
    ("graph.batch_matmul", nn::batch_matmul),
    ("graph.batch_norm", nn::batch_norm),
    ("graph.call", call),
    ("graph.cast", elementwise::cast),
    ("graph.ceil", elementwise::ceil),
    ("graph.clip", elementwise::clip),
    ("graph.conv2d", nn::conv2d),
    ("graph.conv_transpose2d", nn::conv_transpose2d),
    ("graph.resize", nn::resize),
    ("graph.round", elementwise::round),
    ("graph.sign", elementwise::sign),
    ("graph.mod", elementwise::modulo),
    ("graph.rms_norm", nn::rms_norm),
    ("graph.instance_norm", nn::instance_norm),
    ("graph.scatter_elements", nn::scatter_elements),
    ("graph.scaled_dot_product_attention", nn::attention),
    ("graph.cos", elementwise::cos),
    ("graph.div", elementwise::div),
    ("graph.embedding", nn::embedding),
    ("graph.equal", elementwise::equal),
    ("graph.erf", elementwise::erf),
    ("graph.exp", elementwise::exp),
    ("graph.floor", elementwise::floor),
    ("graph.gather", nn::gather),
    ("graph.gather_elements", nn::gather_elements),
    ("graph.gelu", elementwise::gelu),
    ("graph.gemm", nn::gemm),
    ("graph.if", if_op),
    ("graph.case", case_op),
    ("graph.fused", fused),
    ("graph.while", while_op),
    ("graph.global_avg_pool", nn::global_avg_pool),
    ("graph.global_max_pool", nn::global_max_pool),
    ("graph.greater", elementwise::greater),
    ("graph.greater_equal", elementwise::greater_equal),
    ("graph.hard_swish", elementwise::hard_swish),
    ("graph.layer_norm", nn::layer_norm),
    ("graph.leaky_relu", elementwise::leaky_relu),
    ("graph.less", elementwise::less),
    ("graph.less_equal", elementwise::less_equal),
    ("graph.log", elementwise::log),
    ("graph.log_softmax", nn::log_softmax),
    ("graph.matmul", nn::matmul),
    ("graph.max", elementwise::max),
    ("graph.max_pool2d", nn::max_pool2d),
    ("graph.min", elementwise::min),
    ("graph.mul", elementwise::mul),
    ("graph.neg", elementwise::neg),
    ("graph.not", elementwise::not),
    ("graph.or", elementwise::or),
    ("graph.pad", nn::pad),
    ("graph.pow", elementwise::pow),
    ("graph.reciprocal", elementwise::reciprocal),
    ("graph.reduce_max", nn::reduce_max),
    ("graph.reduce_mean", nn::reduce_mean),
    ("graph.reduce_min", nn::reduce_min),
    ("graph.reduce_prod", nn::reduce_prod),
    ("graph.reduce_sum", nn::reduce_sum),
    ("graph.relu", elementwise::relu),
    ("graph.rsqrt", elementwise::rsqrt),
    ("graph.sigmoid", elementwise::sigmoid),
    ("graph.silu", elementwise::silu),
    ("graph.sin", elementwise::sin),
    ("graph.softmax", nn::softmax),
    ("graph.sqrt", elementwise::sqrt),
    ("graph.sub", elementwise::sub),
    ("graph.tanh", elementwise::tanh),
    ("graph.where", elementwise::select),
    ("graph.xor", elementwise::xor),
];

fn lookup(name: &str) -> Option<ExportFn> {
    TABLE.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// Export options.
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// Put `llvm.emit_c_interface` on every function (for the execution engine).
    pub emit_c_interface: bool,
    /// Only export these functions (and nothing else); all when empty.
    pub only: Vec<String>,
}

/// A value during export: the MLIR value, its shape (`-1`: not static) and dtype.
#[derive(Clone)]
pub struct T<'c, 'a> {
    pub v: Value<'c, 'a>,
    pub shape: Vec<i64>,
    pub dt: DType,
}

impl T<'_, '_> {
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

/// The exporter of one function body: appends ops to one MLIR block.
pub struct Ex<'c, 'a> {
    pub ctx: &'c Context,
    pub block: &'a Block<'c>,
    pub loc: MLoc<'c>,
    pub body: &'a Body,
    pub module: &'a ge_ir::Module,
    vals: HashMap<ValueId, T<'c, 'a>>,
}

/// `file:line:col` of a location (or its printed form).
pub fn loc_text(l: Location) -> String {
    match l.file_line_col() {
        Some((f, line, col)) => format!("{}:{line}:{col}", f.as_str()),
        None => l.to_string(),
    }
}

fn mlir_loc<'c>(ctx: &'c Context, l: Location) -> MLoc<'c> {
    match l.file_line_col() {
        Some((f, line, col)) => MLoc::new(ctx, f.as_str(), line as usize, col as usize),
        None => MLoc::unknown(ctx),
    }
}

impl<'c, 'a> Ex<'c, 'a> {
    // ----- types and attributes -------------------------------------------

    pub fn mty(&self, shape: &[i64], dt: DType) -> Res<MType<'c>> {
        let text = tensor_type_text(shape, dt)?;
        MType::parse(self.ctx, &text).ok_or_else(|| format!("MLIR rejects the type '{text}'"))
    }

    /// The scalar MLIR element type of a dtype.
    pub fn elem(&self, dt: DType) -> Res<MType<'c>> {
        let name = super::mlir_elem_name(dt)
            .ok_or_else(|| format!("element type '{}' has no upstream equivalent", dt.name()))?;
        MType::parse(self.ctx, name).ok_or_else(|| format!("MLIR rejects the type '{name}'"))
    }

    pub fn i64s(&self, v: &[i64]) -> Attribute<'c> {
        DenseI64ArrayAttribute::new(self.ctx, v).into()
    }

    pub fn i32s(&self, v: &[i64]) -> Attribute<'c> {
        let v: Vec<i32> = v.iter().map(|&x| x as i32).collect();
        DenseI32ArrayAttribute::new(self.ctx, &v).into()
    }

    pub fn i32_attr(&self, v: i64) -> Attribute<'c> {
        IntegerAttribute::new(MType::parse(self.ctx, "i32").expect("i32 parses"), v).into()
    }

    /// A scalar attribute of element type `dt` (float or integer).
    pub fn scalar_attr(&self, dt: DType, x: f64) -> Res<Attribute<'c>> {
        let t = self.elem(dt)?;
        Ok(if dt.is_float() {
            FloatAttribute::new(self.ctx, t, x).into()
        } else {
            IntegerAttribute::new(t, x as i64).into()
        })
    }

    pub fn type_attr(&self, dt: DType) -> Res<Attribute<'c>> {
        Ok(TypeAttribute::new(self.elem(dt)?).into())
    }

    // ----- building -------------------------------------------------------

    /// Append an op to the block.
    pub fn build(
        &self,
        name: &str,
        operands: &[Value<'c, 'a>],
        attrs: &[(&str, Attribute<'c>)],
        results: &[MType<'c>],
    ) -> Res<OperationRef<'c, 'a>> {
        let attrs: Vec<(Identifier<'c>, Attribute<'c>)> = attrs
            .iter()
            .map(|(n, a)| (Identifier::new(self.ctx, n), *a))
            .collect();
        let op = OperationBuilder::new(name, self.loc)
            .add_operands(operands)
            .add_attributes(&attrs)
            .add_results(results)
            .build()
            .map_err(|e| format!("cannot build '{name}': {e}"))?;
        Ok(self.block.append_operation(op))
    }

    /// Append a single-result op with a tensor result of `shape` x `dt`.
    pub fn op(
        &self,
        name: &str,
        operands: &[&T<'c, 'a>],
        attrs: &[(&str, Attribute<'c>)],
        shape: &[i64],
        dt: DType,
    ) -> Res<T<'c, 'a>> {
        let ops: Vec<Value<'c, 'a>> = operands.iter().map(|t| t.v).collect();
        self.op_values(name, &ops, attrs, shape, dt)
    }

    pub fn op_values(
        &self,
        name: &str,
        operands: &[Value<'c, 'a>],
        attrs: &[(&str, Attribute<'c>)],
        shape: &[i64],
        dt: DType,
    ) -> Res<T<'c, 'a>> {
        let ty = self.mty(shape, dt)?;
        let op = self.build(name, operands, attrs, &[ty])?;
        let v: Value<'c, 'a> = op
            .result(0)
            .map_err(|e| format!("'{name}' has no result: {e}"))?
            .into();
        Ok(T {
            v,
            shape: shape.to_vec(),
            dt,
        })
    }

    /// `tosa.const` holding `t`.
    pub fn constant(&self, t: &Tensor) -> Res<T<'c, 'a>> {
        let shape: Vec<i64> = t.shape.iter().map(|&d| d as i64).collect();
        let ty = self.mty(&shape, t.dtype)?;
        let attr: Attribute<'c> = if t.dtype == DType::I1 {
            let v: Vec<i32> = t.to_i64().iter().map(|&x| (x != 0) as i32).collect();
            DenseElementsAttribute::bool_values(ty, &v).into()
        } else {
            let d = t.to_dense();
            DenseElementsAttribute::raw_buffer(ty, &d.bytes).into()
        };
        self.op("tosa.const", &[], &[("values", attr)], &shape, t.dtype)
    }

    /// A constant of `rank` ones-dims holding `x` (for broadcasting).
    pub fn splat(&self, x: f64, rank: usize, dt: DType) -> Res<T<'c, 'a>> {
        let t = Tensor::from_f64(vec![1; rank], dt, vec![x]);
        self.constant(&t)
    }

    /// A zero point: a `tensor<1xdt>` zero.
    pub fn zp(&self, dt: DType) -> Res<T<'c, 'a>> {
        self.splat(0.0, 1, dt)
    }

    /// `tosa.const_shape`.
    pub fn shape_const(&self, v: &[i64]) -> Res<Value<'c, 'a>> {
        let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        let text = if v.is_empty() {
            "dense<> : tensor<0xindex>".to_string()
        } else {
            format!("dense<[{}]> : tensor<{}xindex>", items.join(", "), v.len())
        };
        let attr = Attribute::parse(self.ctx, &text)
            .ok_or_else(|| format!("MLIR rejects the attribute '{text}'"))?;
        let sty = format!("!tosa.shape<{}>", v.len());
        let ty = MType::parse(self.ctx, &sty).ok_or_else(|| format!("MLIR rejects '{sty}'"))?;
        let op = self.build("tosa.const_shape", &[], &[("values", attr)], &[ty])?;
        Ok(op
            .result(0)
            .map_err(|e| format!("tosa.const_shape: {e}"))?
            .into())
    }

    pub fn reshape(&self, x: &T<'c, 'a>, shape: &[i64]) -> Res<T<'c, 'a>> {
        if x.shape == shape {
            return Ok(x.clone());
        }
        if shape.iter().filter(|&&d| d < 0).count() > 1 {
            return Err(format!(
                "a reshape to {shape:?} needs static dims (TOSA allows one unknown dim)"
            ));
        }
        let s = self.shape_const(shape)?;
        self.op_values("tosa.reshape", &[x.v, s], &[], shape, x.dt)
    }

    pub fn transpose(&self, x: &T<'c, 'a>, perm: &[i64]) -> Res<T<'c, 'a>> {
        if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
            return Ok(x.clone());
        }
        let shape: Vec<i64> = perm.iter().map(|&p| x.shape[p as usize]).collect();
        self.op(
            "tosa.transpose",
            &[x],
            &[("perms", self.i32s(perm))],
            &shape,
            x.dt,
        )
    }

    /// Prepend size-1 dims up to `rank` (TOSA broadcasts only equal ranks).
    pub fn to_rank(&self, x: &T<'c, 'a>, rank: usize) -> Res<T<'c, 'a>> {
        if x.rank() >= rank {
            return Ok(x.clone());
        }
        let mut s = vec![1; rank - x.rank()];
        s.extend_from_slice(&x.shape);
        self.reshape(x, &s)
    }

    /// An elementwise TOSA op over rank-equalised operands.
    pub fn ew(&self, name: &str, xs: &[&T<'c, 'a>], shape: &[i64], dt: DType) -> Res<T<'c, 'a>> {
        let r = xs.iter().map(|x| x.rank()).max().unwrap_or(0);
        let mut vals = Vec::with_capacity(xs.len() + 1);
        for x in xs {
            vals.push(self.to_rank(x, r)?.v);
        }
        if name == "tosa.mul" {
            vals.push(self.splat(0.0, 1, DType::I8)?.v);
        }
        self.op_values(name, &vals, &[], shape, dt)
    }

    /// The broadcast shape of two shapes (numpy rules; -1 stays unknown).
    pub fn bshape(a: &[i64], b: &[i64]) -> Vec<i64> {
        let r = a.len().max(b.len());
        (0..r)
            .map(|i| {
                let da = if i + a.len() >= r {
                    a[i + a.len() - r]
                } else {
                    1
                };
                let db = if i + b.len() >= r {
                    b[i + b.len() - r]
                } else {
                    1
                };
                if da == 1 {
                    db
                } else {
                    da
                }
            })
            .collect()
    }

    /// Elementwise binary op with the result shape worked out.
    pub fn bin(&self, name: &str, a: &T<'c, 'a>, b: &T<'c, 'a>) -> Res<T<'c, 'a>> {
        let s = Self::bshape(&a.shape, &b.shape);
        let dt = if matches!(name, "tosa.equal" | "tosa.greater" | "tosa.greater_equal") {
            DType::I1
        } else {
            a.dt
        };
        self.ew(name, &[a, b], &s, dt)
    }

    pub fn un(&self, name: &str, x: &T<'c, 'a>) -> Res<T<'c, 'a>> {
        self.op(name, &[x], &[], &x.shape.clone(), x.dt)
    }

    /// `x * c` for a scalar `c`.
    pub fn scale(&self, x: &T<'c, 'a>, c: f64) -> Res<T<'c, 'a>> {
        let k = self.splat(c, x.rank(), x.dt)?;
        self.bin("tosa.mul", x, &k)
    }

    /// `x + c` for a scalar `c`.
    pub fn offset(&self, x: &T<'c, 'a>, c: f64) -> Res<T<'c, 'a>> {
        let k = self.splat(c, x.rank(), x.dt)?;
        self.bin("tosa.add", x, &k)
    }

    // ----- access to the op being exported ---------------------------------

    pub fn input(&self, op: OpId, i: usize) -> Res<T<'c, 'a>> {
        let v = self.body.operand(op, i);
        self.vals
            .get(&v)
            .cloned()
            .ok_or_else(|| format!("operand #{i} was not exported"))
    }

    pub fn num_inputs(&self, op: OpId) -> usize {
        self.body.op(op).operands().len()
    }

    /// Shape and dtype of result `i`.
    pub fn out(&self, op: OpId, i: usize) -> Res<(Vec<i64>, DType)> {
        shape_dtype(self.body.value_type(self.body.result(op, i)))
    }

    pub fn attr_i64(&self, op: OpId, name: &str, default: i64) -> i64 {
        self.body
            .op(op)
            .attr(name)
            .and_then(|a| a.as_int())
            .unwrap_or(default)
    }

    pub fn attr_f64(&self, op: OpId, name: &str, default: f64) -> f64 {
        self.body
            .op(op)
            .attr(name)
            .and_then(|a| a.as_float())
            .unwrap_or(default)
    }

    pub fn attr_ints(&self, op: OpId, name: &str) -> Option<Vec<i64>> {
        self.body.op(op).attr(name).and_then(|a| a.as_i64_array())
    }

    pub fn attr_str(&self, op: OpId, name: &str) -> Option<&'static str> {
        self.body.op(op).attr(name).and_then(|a| a.as_str())
    }

    /// The value of an operand that must be a constant (a `data.constant`).
    pub fn const_input(&self, op: OpId, i: usize) -> Option<Tensor> {
        let v = self.body.operand(op, i);
        let a = ge_ir::builder::constant_value(self.body, v)?;
        ge_dialects::data::constant::elements_tensor(a, Some(self.module)).ok()
    }
}

/// Normalise a possibly negative axis.
pub fn norm_axis(axis: i64, rank: usize) -> Res<usize> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    if a < 0 || a >= rank as i64 {
        return Err(format!("axis {axis} is out of range for rank {rank}"));
    }
    Ok(a as usize)
}

fn call<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Res<Vec<T<'c, 'a>>> {
    let d = e.body.op(op);
    let callee = d
        .attr("callee")
        .and_then(|a| a.as_symbol())
        .ok_or("graph.call has no callee")?;
    let mut args = vec![];
    for i in 0..d.operands().len() {
        args.push(e.input(op, i)?.v);
    }
    let (tys, outs) = e.result_types(op)?;
    let callee_attr: Attribute<'c> = FlatSymbolRefAttribute::new(e.ctx, callee.as_str()).into();
    let c = e.build("func.call", &args, &[("callee", callee_attr)], &tys)?;
    results_of(c, &outs)
}

/// A result's shape and element type.
type Shaped = (Vec<i64>, DType);

/// The values of `op`'s results, typed as `outs`.
fn results_of<'c, 'a>(op: OperationRef<'c, 'a>, outs: &[(Vec<i64>, DType)]) -> Res<Vec<T<'c, 'a>>> {
    let mut res = vec![];
    for (i, (s, dt)) in outs.iter().enumerate() {
        let v: Value<'c, 'a> = op.result(i).map_err(|e| e.to_string())?.into();
        res.push(T {
            v,
            shape: s.clone(),
            dt: *dt,
        });
    }
    Ok(res)
}

/// Append a TOSA control-flow op (`tosa.cond_if`, `tosa.while_loop`) with
/// these regions to the exporter's block; its results are typed as `outs`.
fn region_op<'c, 'a>(
    e: &Ex<'c, 'a>,
    name: &str,
    operands: &[Value<'c, 'a>],
    outs: &[(Vec<i64>, DType)],
    regions: [Region<'c>; 2],
) -> Res<Vec<T<'c, 'a>>> {
    let tys: Vec<MType> = outs
        .iter()
        .map(|(s, dt)| e.mty(s, *dt))
        .collect::<Res<_>>()?;
    let built = OperationBuilder::new(name, e.loc)
        .add_operands(operands)
        .add_results(&tys)
        .add_regions(regions)
        .build()
        .map_err(|err| format!("cannot build '{name}': {err}"))?;
    results_of(e.block.append_operation(built), outs)
}

/// A TOSA region whose one block holds the export of `fill` (run on an
/// exporter of that block, seeing the enclosing values and the block's
/// arguments `args` standing for `ours`), ending in `tosa.yield` of what
/// `fill` returns.
fn tosa_region<'c, 'a>(
    e: &Ex<'c, 'a>,
    args: &[(ValueId, Vec<i64>, DType)],
    fill: &mut dyn for<'b> FnMut(&mut Ex<'c, 'b>) -> Res<Vec<T<'c, 'b>>>,
) -> Res<Region<'c>> {
    let decl: Vec<(MType<'c>, MLoc<'c>)> = args
        .iter()
        .map(|(_, s, dt)| Ok((e.mty(s, *dt)?, e.loc)))
        .collect::<Res<_>>()?;
    let block = Block::new(&decl);
    {
        let mut sub = Ex {
            ctx: e.ctx,
            block: &block,
            loc: e.loc,
            body: e.body,
            module: e.module,
            vals: e.vals.clone(),
        };
        for (j, (a, shape, dt)) in args.iter().enumerate() {
            let v: Value = block.argument(j).map_err(|e| e.to_string())?.into();
            sub.vals.insert(
                *a,
                T {
                    v,
                    shape: shape.clone(),
                    dt: *dt,
                },
            );
        }
        let ys = fill(&mut sub)?;
        let vals: Vec<Value> = ys.iter().map(|t| t.v).collect();
        sub.build("tosa.yield", &vals, &[], &[])?;
    }
    let region = Region::new();
    region.append_block(block);
    Ok(region)
}

/// The one block of region `r` of the exported body.
fn only_block(e: &Ex, r: ge_ir::body::RegionId, what: &str) -> Res<ge_ir::BlockId> {
    e.body
        .region(r)
        .blocks
        .first()
        .copied()
        .ok_or_else(|| format!("{what} has an empty region"))
}

/// `graph.if` as `tosa.cond_if`: each region's ops go into a block of the
/// matching TOSA region (which, like ours, may use values from outside),
/// ending in `tosa.yield`.
fn if_op<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Res<Vec<T<'c, 'a>>> {
    let cond = e.input(op, 0)?;
    let regions = e.body.op(op).regions().to_vec();
    let [then_r, else_r] = regions[..] else {
        return Err("graph.if must have a then and an else region".into());
    };
    let (_, outs) = e.result_types(op)?;
    let (tb, eb) = (
        only_block(e, then_r, "graph.if")?,
        only_block(e, else_r, "graph.if")?,
    );
    let then_r = tosa_region(e, &[], &mut |sub| sub.export_ops(tb))?;
    let else_r = tosa_region(e, &[], &mut |sub| sub.export_ops(eb))?;
    region_op(e, "tosa.cond_if", &[cond.v], &outs, [then_r, else_r])
}

/// `graph.case` as a chain of `tosa.cond_if`: branch `k` runs when the index
/// equals `k`; the last region is the default (an index out of range runs it).
fn case_op<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Res<Vec<T<'c, 'a>>> {
    let blocks: Vec<ge_ir::BlockId> = e
        .body
        .op(op)
        .regions()
        .iter()
        .map(|&r| only_block(e, r, "graph.case"))
        .collect::<Res<_>>()?;
    let (_, outs) = e.result_types(op)?;
    case_chain(e, op, &blocks, 0, &outs)
}

/// Branches `k..` of case `op` (the last one the default), as values of the
/// current block.
fn case_chain<'c, 'a>(
    e: &mut Ex<'c, 'a>,
    op: OpId,
    blocks: &[ge_ir::BlockId],
    k: usize,
    outs: &[(Vec<i64>, DType)],
) -> Res<Vec<T<'c, 'a>>> {
    let &this = blocks.get(k).ok_or("graph.case has no regions")?;
    if k + 1 == blocks.len() {
        // The default branch: its ops run in the current block.
        return e.export_ops(this);
    }
    let index = e.input(op, 0)?;
    if index.shape.iter().product::<i64>() != 1 {
        return Err("graph.case's index must hold one element".into());
    }
    let index = e.reshape(&index, &[])?;
    let index = if index.dt == DType::I32 {
        index
    } else {
        e.op("tosa.cast", &[&index], &[], &[], DType::I32)?
    };
    let kc = e.splat(k as f64, 0, DType::I32)?;
    let cond = e.bin("tosa.equal", &index, &kc)?;
    let then_r = tosa_region(e, &[], &mut |sub| sub.export_ops(this))?;
    let else_r = tosa_region(e, &[], &mut |sub| case_chain(sub, op, blocks, k + 1, outs))?;
    region_op(e, "tosa.cond_if", &[cond.v], outs, [then_r, else_r])
}

/// The body of isolated op `op` (`what`, for errors) and its entry block.
fn isolated_entry<'a>(body: &'a Body, op: OpId, what: &str) -> Res<(&'a Body, BlockId)> {
    let inner = body.inner(op).ok_or(format!("{what} has no body"))?;
    let r = *inner
        .root_regions()
        .first()
        .ok_or(format!("{what} has no region"))?;
    let entry = inner
        .entry_block(r)
        .ok_or(format!("{what} has an empty body"))?;
    Ok((inner, entry))
}

/// A `graph.fused` kernel is inlined: its body's ops are exported in place,
/// its block arguments standing for the kernel's operands.
fn fused<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Res<Vec<T<'c, 'a>>> {
    let body: &'a Body = e.body;
    let (inner, entry) = isolated_entry(body, op, "graph.fused")?;
    let mut sub = Ex {
        ctx: e.ctx,
        block: e.block,
        loc: e.loc,
        body: inner,
        module: e.module,
        vals: HashMap::new(),
    };
    for (k, &a) in inner.block(entry).args.iter().enumerate() {
        sub.vals.insert(a, e.input(op, k)?);
    }
    sub.export_ops(entry)
}

/// `graph.while` as `tosa.while_loop`: the condition region yields only the
/// flag, so `graph.condition` must pass its block arguments through unchanged
/// (scf.while's more general forwarding has no TOSA form).
fn while_op<'c, 'a>(e: &mut Ex<'c, 'a>, op: OpId) -> Res<Vec<T<'c, 'a>>> {
    let regions = e.body.op(op).regions().to_vec();
    let [cond_r, body_r] = regions[..] else {
        return Err("graph.while must have a condition and a do region".into());
    };
    let inits: Vec<Value> = (0..e.num_inputs(op))
        .map(|i| Ok(e.input(op, i)?.v))
        .collect::<Res<_>>()?;
    let (_, outs) = e.result_types(op)?;
    let (cb, bb) = (
        only_block(e, cond_r, "graph.while")?,
        only_block(e, body_r, "graph.while")?,
    );
    let term = e
        .body
        .block_last_op(cb)
        .ok_or("graph.while's condition region has no terminator")?;
    if e.body.op(term).operands().get(1..) != Some(e.body.block(cb).args.as_slice()) {
        return Err("graph.condition must pass its block arguments through unchanged to have a TOSA equivalent".into());
    }
    let args_of = |b: ge_ir::BlockId| -> Res<Vec<(ValueId, Vec<i64>, DType)>> {
        e.body
            .block(b)
            .args
            .iter()
            .map(|&a| {
                let (s, dt) = shape_dtype(e.body.value_type(a))?;
                Ok((a, s, dt))
            })
            .collect()
    };
    // The condition region yields the flag only.
    let cond_r = tosa_region(e, &args_of(cb)?, &mut |sub| {
        Ok(sub.export_ops(cb)?.into_iter().take(1).collect())
    })?;
    let body_r = tosa_region(e, &args_of(bb)?, &mut |sub| sub.export_ops(bb))?;
    region_op(e, "tosa.while_loop", &inits, &outs, [cond_r, body_r])
}

impl<'c, 'a> Ex<'c, 'a> {
    /// The MLIR types of `op`'s results, and their shapes and element types.
    fn result_types(&self, op: OpId) -> Res<(Vec<MType<'c>>, Vec<Shaped>)> {
        let mut tys = vec![];
        let mut outs = vec![];
        for i in 0..self.body.op(op).results().len() {
            let (s, dt) = self.out(op, i)?;
            tys.push(self.mty(&s, dt)?);
            outs.push((s, dt));
        }
        Ok((tys, outs))
    }

    /// Export the ops of block `b` into this exporter's block, up to its
    /// terminator (`graph.return`, `graph.yield` or `graph.condition`), whose
    /// operands it returns.
    fn export_ops(&mut self, b: ge_ir::BlockId) -> Res<Vec<T<'c, 'a>>> {
        let body = self.body;
        for o in body.block_ops(b) {
            let od = body.op(o);
            let n = od.name.as_str();
            self.loc = mlir_loc(self.ctx, od.loc);
            if n == "graph.return" || n == "graph.yield" || n == "graph.condition" {
                return (0..od.operands().len()).map(|i| self.input(o, i)).collect();
            }
            let map =
                lookup(n).ok_or_else(|| format!("{}: '{n}' is not exported", loc_text(od.loc)))?;
            let outs = map(self, o).map_err(|e| format!("{}: {n}: {e}", loc_text(od.loc)))?;
            if outs.len() != od.results().len() {
                return Err(format!(
                    "{}: {n}: exported {} values for {} results",
                    loc_text(od.loc),
                    outs.len(),
                    od.results().len()
                ));
            }
            for (&r, t) in od.results().iter().zip(outs) {
                self.vals.insert(r, t);
            }
        }
        Err("a block without a terminator".into())
    }
}

/// Every op of the module the bridge cannot export, with its location.
pub fn unsupported_ops(m: &ge_ir::Module) -> Vec<String> {
    let mut bad = vec![];
    let b = m.body();
    for f in m.top_ops() {
        let d = b.op(f);
        if d.name.as_str() != "graph.func" {
            bad.push(format!("  {}: {}", loc_text(d.loc), d.name.as_str()));
            continue;
        }
        let Some(inner) = b.inner(f) else { continue };
        inner.walk_deep(ge_ir::WalkOrder::Pre, &mut |body, o| {
            let od = body.op(o);
            let n = od.name.as_str();
            // Terminators are exported with their region op (an unsupported one is listed itself).
            let terminator = matches!(n, "graph.return" | "graph.yield" | "graph.condition");
            if !terminator && lookup(n).is_none() {
                bad.push(format!("  {}: {n}", loc_text(od.loc)));
            }
        });
    }
    bad
}

/// Export a module to upstream MLIR and verify it.
pub fn export_module<'c>(
    ctx: &'c Context,
    m: &ge_ir::Module,
    opts: &ExportOptions,
) -> Res<MModule<'c>> {
    let bad = unsupported_ops(m);
    if !bad.is_empty() {
        return Err(format!(
            "{} op{} with no upstream (func/tosa/arith) equivalent:\n{}",
            bad.len(),
            if bad.len() == 1 { "" } else { "s" },
            bad.join("\n")
        ));
    }
    let out = MModule::new(mlir_loc(ctx, m.outer.op(m.op).loc));
    let b = m.body();
    for f in m.top_ops() {
        let d = b.op(f);
        let name = d
            .attr("sym_name")
            .and_then(|a| a.as_str())
            .ok_or("a graph.func has no sym_name")?;
        if !opts.only.is_empty() && !opts.only.iter().any(|o| o == name) {
            continue;
        }
        let func = export_func(ctx, m, f, opts).map_err(|e| format!("@{name}: {e}"))?;
        out.body().append_operation(func);
    }
    let sink = DiagnosticSink::attach(ctx);
    let ok = out.as_operation().verify();
    let msgs = sink.take();
    sink.detach(ctx);
    if !ok {
        return Err(format!(
            "the exported module does not verify:\n{}",
            msgs.join("\n")
        ));
    }
    Ok(out)
}

fn export_func<'c>(
    ctx: &'c Context,
    m: &ge_ir::Module,
    f: OpId,
    opts: &ExportOptions,
) -> Res<melior::ir::Operation<'c>> {
    let b = m.body();
    let d = b.op(f);
    let floc = mlir_loc(ctx, d.loc);
    let name = d
        .attr("sym_name")
        .and_then(|a| a.as_str())
        .ok_or("no sym_name")?;
    let (inner, entry) = isolated_entry(b, f, "graph.func")?;
    let mut arg_tys = vec![];
    let mut arg_info = vec![];
    for &a in &inner.block(entry).args {
        let (s, dt) = shape_dtype(inner.value_type(a))?;
        let loc = mlir_loc(ctx, inner.value(a).loc);
        let dummy = Ex::dummy_ty(ctx, &s, dt)?;
        arg_tys.push(dummy);
        arg_info.push((a, s, dt, loc));
    }
    let block = Block::new(
        &arg_info
            .iter()
            .zip(&arg_tys)
            .map(|(i, t)| (*t, i.3))
            .collect::<Vec<_>>(),
    );
    let result_tys = {
        let mut ex = Ex {
            ctx,
            block: &block,
            loc: floc,
            body: inner,
            module: m,
            vals: HashMap::new(),
        };
        for (k, (a, s, dt, _)) in arg_info.iter().enumerate() {
            let v: Value = block.argument(k).map_err(|e| e.to_string())?.into();
            ex.vals.insert(
                *a,
                T {
                    v,
                    shape: s.clone(),
                    dt: *dt,
                },
            );
        }
        let mut result_tys = vec![];
        let returned = ex.export_ops(entry)?;
        let mut vals = vec![];
        for t in &returned {
            result_tys.push(ex.mty(&t.shape, t.dt)?);
            vals.push(t.v);
        }
        ex.build("func.return", &vals, &[], &[])?;
        result_tys
    };
    let region = Region::new();
    region.append_block(block);
    let fty = FunctionType::new(ctx, &arg_tys, &result_tys);
    let mut attrs: Vec<(Identifier<'c>, Attribute<'c>)> = vec![
        (
            Identifier::new(ctx, "sym_name"),
            StringAttribute::new(ctx, name).into(),
        ),
        (
            Identifier::new(ctx, "function_type"),
            TypeAttribute::new(fty.into()).into(),
        ),
    ];
    if d.attr("sym_visibility").and_then(|a| a.as_str()) == Some("private") {
        attrs.push((
            Identifier::new(ctx, "sym_visibility"),
            StringAttribute::new(ctx, "private").into(),
        ));
    }
    if opts.emit_c_interface {
        attrs.push((
            Identifier::new(ctx, "llvm.emit_c_interface"),
            Attribute::unit(ctx),
        ));
    }
    OperationBuilder::new("func.func", floc)
        .add_attributes(&attrs)
        .add_regions([region])
        .build()
        .map_err(|e| format!("cannot build func.func: {e}"))
}

impl<'c> Ex<'c, '_> {
    fn dummy_ty(ctx: &'c Context, shape: &[i64], dt: DType) -> Res<MType<'c>> {
        let text = tensor_type_text(shape, dt)?;
        MType::parse(ctx, &text).ok_or_else(|| format!("MLIR rejects the type '{text}'"))
    }
}

/// Print a module (with `loc(...)` when `debuginfo`).
pub fn print(m: &MModule, debuginfo: bool) -> Res<String> {
    let flags = OperationPrintingFlags::new().enable_debug_info(debuginfo, false);
    m.as_operation()
        .to_string_with_flags(flags)
        .map_err(|e| format!("cannot print the module: {e}"))
}

/// Parse and verify `.air` text, export it and print the upstream module.
pub fn export_text(m: &ge_ir::Module, debuginfo: bool) -> Res<String> {
    let ctx = super::mlir_context();
    let out = export_module(&ctx, m, &ExportOptions::default())?;
    let mut s = print(&out, debuginfo)?;
    if !s.ends_with('\n') {
        s.push('\n');
    }
    Ok(s)
}
