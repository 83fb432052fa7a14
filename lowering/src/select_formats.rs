//! `select-formats`: Ascend storage formats at kernel boundaries.
//!
//! On AICore, convolution and pooling kernels read and write activations in
//! NC1HWC0 and read convolution weights in FRACTAL_Z; matmul kernels read and
//! write FRACTAL_NZ. The pass changes such a kernel's boundary: the operand
//! gets a `data.transdata` (NCHW → NC1HWC0, …) before the kernel, the kernel
//! body converts it back to the origin layout for its ops, and likewise for
//! results. The kernel body is thus the *reference description* of what the
//! device kernel computes on its storage-format buffers, and the IR stays
//! runnable by the interpreter.
//!
//! Formats then spread: a pointwise kernel (elementwise/broadcast) whose
//! full-size inputs all arrive in NC1HWC0 (or FRACTAL_NZ) runs in that format
//! too, as GE keeps format continuity between AICore ops. Finally inverse
//! transdata pairs cancel (`NC1HWC0 → NCHW → NC1HWC0` is the identity),
//! identical transdata of one value merge (each of a value's blocked users
//! asked for its own: GE's `SameTransdataBreadthFusionPass`), and a
//! transdata of a constant is evaluated at compile time, so weights are
//! stored in FRACTAL_Z / FRACTAL_NZ and no weight conversion runs. Weights
//! whose bytes a pass cannot see (`dense_resource` blobs belong to the
//! module, `#ge.external` to a file) keep their origin format instead.
//! Bare ops are wrapped in one-op kernels when their boundary changes.

use crate::error::{AtOp, LowerResult};
use crate::funcs::{for_each_function, func_block};
use crate::fuse_kernels::{build_kernel, Group};
use crate::op_pattern::op_pattern;
use crate::partition_engines::is_compute;
use ge_dialects::data::constant::Constant;
use ge_dialects::data::layout::Transdata;
use ge_dialects::data::layout::{self, transdata_type};
use ge_dialects::graph::control::Fused;
use ge_ir::attributes::{AttrDict, DenseElements, Format};
use ge_ir::body::{BlockId, Body, OpData, OpId, ValueId};
use ge_ir::interfaces::Layout;
use ge_ir::pass::{Pass, PassContext, PassInfo, PassOptions, PassResult};
use ge_ir::{Attribute, Context, DType, Type};
use std::collections::HashMap;

pub static INFO: PassInfo = PassInfo {
    name: "select-formats",
    summary: "Choose NC1HWC0 / FRACTAL_Z / FRACTAL_NZ storage formats for AICore kernels",
    description: "Convolution and pooling kernels on AICore get NC1HWC0 activations and \
                  FRACTAL_Z convolution weights, matmul kernels FRACTAL_NZ operands and results, \
                  with `data.transdata` at the kernel boundary (the kernel body converts back, so \
                  the IR stays runnable). Pointwise kernels whose inputs arrive in a fractal format \
                  adopt it; inverse transdata pairs cancel; identical transdata of one value \
                  merge; transdata of constants is evaluated at compile time.",
    anchor: None,
    options: SelectFormatsOptions::DEFS,
};

#[derive(ge_ir::PassOptions)]
struct SelectFormatsOptions {
    /// use NC1HWC0 / FRACTAL_Z for convolution and pooling kernels
    #[option("nc1hwc0", default = true)]
    nc1hwc0: bool,
    /// use FRACTAL_NZ for matmul kernels
    #[option("fractal-nz", default = true)]
    fractal_nz: bool,
    /// convert constant weights at compile time
    #[option("fold-weights", default = true)]
    fold_weights: bool,
}

struct SelectFormats {
    nc1hwc0: bool,
    nz: bool,
    fold: bool,
}

pub fn make(o: &PassOptions) -> Result<Box<dyn Pass>, String> {
    let o = SelectFormatsOptions::from_options(o);
    Ok(Box::new(SelectFormats {
        nc1hwc0: o.nc1hwc0,
        nz: o.fractal_nz,
        fold: o.fold_weights,
    }))
}

impl Pass for SelectFormats {
    fn info(&self) -> &'static PassInfo {
        &INFO
    }
    fn run(&self, op: &mut OpData, cx: &PassContext) -> PassResult {
        for_each_function(op, INFO.name, |f, _| {
            let loc = f.loc;
            let Some(block) = func_block(f) else {
                return Ok(());
            };
            let Some(body) = f.inner.as_deref_mut() else {
                return Ok(());
            };
            self.run_block(cx.ctx, body, block)
                .map_err(|e| vec![e.diagnostic("select-formats", loc)])
        })
    }
}

/// What a kernel wants at its boundary.
#[derive(Default)]
struct Wants {
    inputs: Vec<(usize, Format)>,
    outputs: Vec<(usize, Format)>,
}

fn float4(t: Type) -> bool {
    t.as_tensor()
        .is_some_and(|tt| tt.rank() == Some(4) && tt.dtype.is_float() && tt.encoding.is_none())
}

/// A matrix FRACTAL_NZ can hold: rank >= 2 with static rows and columns (a
/// symbolic row count would only survive as `ceil(M/16)`, which a kernel
/// cannot recover its symbols from; batch dims may be symbolic).
fn matrix(t: Type) -> bool {
    t.as_tensor().is_some_and(|tt| {
        let s = tt.shape();
        s.len() >= 2
            && s[s.len() - 2..].iter().all(|d| d.is_static())
            && matches!(tt.dtype, DType::F16 | DType::BF16 | DType::F32 | DType::I8)
            && tt.encoding.is_none()
    })
}

/// The plain (origin) format a value is in, for a target storage format.
fn origin_of(target: Format) -> Format {
    match target {
        Format::FRACTAL_NZ => Format::ND,
        _ => Format::NCHW,
    }
}

/// The source format of a `data.transdata` result that converts `target` back.
fn unpacked_from(body: &Body, v: ValueId) -> Option<Format> {
    let op = body.defining_op(v)?;
    let d = body.op(op);
    if !Transdata::is(d) {
        return None;
    }
    Format::parse(Transdata::attrs(d).src_format()?)
}

impl SelectFormats {
    fn run_block(&self, ctx: &Context, body: &mut Body, block: BlockId) -> LowerResult<()> {
        let ops: Vec<OpId> = body.block_ops(block).collect();
        for op in ops {
            if !body.op(op).is_alive() || !is_compute(body, op) || body.results_unused(op) {
                continue;
            }
            let engine = body.op(op).attr("engine").and_then(|a| a.as_str());
            if !matches!(engine, Some("AICore") | Some("VectorCore")) {
                continue;
            }
            let wants = self.wants(body, op, engine == Some("AICore"));
            if wants.inputs.is_empty() && wants.outputs.is_empty() {
                continue;
            }
            let loc = body.op(op).loc;
            let (k, wants) = if Fused::is(body.op(op)) {
                (op, wants)
            } else {
                let g = Group {
                    ops: vec![op],
                    pattern: op_pattern(body, op),
                    engine: engine.map(str::to_string),
                };
                let k = build_kernel(ctx, body, &g)?;
                // The kernel's operands are the op's distinct inputs: ask again.
                let aicore = engine == Some("AICore");
                (k, self.wants(body, k, aicore))
            };
            for &(i, f) in &wants.inputs {
                // A weight we cannot convert now (its bytes are a module resource
                // or an external file) stays in its origin format rather than
                // becoming a conversion task at run time.
                let x = body.operand(k, i);
                let value = ge_ir::builder::constant_value(body, x);
                if self.fold && value.is_some_and(|v| v.as_dense().is_none()) {
                    continue;
                }
                self.convert_input(ctx, body, k, i, f).at_op(loc)?;
            }
            for &(j, f) in &wants.outputs {
                convert_output(ctx, body, k, j, f).at_op(loc)?;
            }
        }
        cancel_pairs(body, block);
        merge_same(body, block);
        Ok(())
    }

    /// The formats `op` (a kernel or a bare op) should use at its boundary:
    /// the first enabled blocked format one of its ops' `Layout` asks for
    /// (on AICore), else its inputs' format if it is pointwise.
    fn wants(&self, body: &Body, op: OpId, aicore: bool) -> Wants {
        let Some(b) = Boundary::of(body, op) else {
            return Wants::default();
        };
        let enabled = [
            (self.nc1hwc0, Format::NC1HWC0),
            (self.nz, Format::FRACTAL_NZ),
        ];
        for (on, format) in enabled {
            if aicore && on && b.ops.iter().any(|l| blocked_format(l) == Some(format)) {
                return blocked_wants(&b, format);
            }
        }
        pointwise_wants(body, op, &b)
    }

    /// Make kernel `k` read operand `i` in format `f`.
    fn convert_input(
        &self,
        ctx: &Context,
        body: &mut Body,
        k: OpId,
        i: usize,
        f: Format,
    ) -> Result<(), String> {
        let x = body.operand(k, i);
        let from = origin_of(f);
        let loc = body.op(k).loc;
        let y = transdata_before(ctx, body, k, x, from, f)?;
        body.set_operand(k, i, y);
        if self.fold {
            if let Some(td) = body.defining_op(y) {
                fold_constant(ctx, body, td)?;
            }
        }
        let yt = body.value_type(body.operand(k, i));
        // Inside: the argument now holds `f` data; convert it back for the body.
        let mut inner = body.take_inner(k).ok_or("kernel has no body")?;
        let res = (|| -> Result<(), String> {
            let r = *body.op(k).regions().first().ok_or("kernel has no region")?;
            let b = inner.entry_block(r).ok_or("kernel has no block")?;
            let arg = inner.block(b).args[i];
            inner.set_value_type(arg, yt);
            let first = inner.block_first_op(b).ok_or("kernel body is empty")?;
            let mut bl = ge_ir::builder::Builder::before(ctx, &mut inner, first);
            bl.loc = loc;
            let back = bl.create_value(
                Transdata::NAME,
                &[arg],
                vec![
                    ("src_format", Attribute::string(f.name())),
                    ("dst_format", Attribute::string(from.name())),
                ],
            )?;
            let back_op = inner.defining_op(back).ok_or("transdata has no op")?;
            inner.replace_uses_if(arg, back, |_, u| u.op != back_op);
            Ok(())
        })();
        body.put_inner(k, inner);
        res
    }
}

/// What the formats of a kernel's (or a bare op's) boundary depend on.
struct Boundary<'a> {
    /// The body holding the ops that use the operands (the kernel's own).
    inner: &'a Body,
    /// The values standing for the operands there.
    args: Vec<ValueId>,
    /// The layouts of the ops computed (nested ones for a kernel).
    ops: Vec<Layout>,
    in_types: Vec<Type>,
    out_types: Vec<Type>,
}

/// An op's declared layout (plain when it declares none).
fn layout_of(d: &OpData) -> Layout {
    d.def
        .and_then(|def| def.interface::<Layout>())
        .copied()
        .unwrap_or(Layout::Plain)
}

fn blocked_format(l: &Layout) -> Option<Format> {
    match l {
        Layout::Blocked { format, .. } => Some(*format),
        _ => None,
    }
}

impl<'a> Boundary<'a> {
    fn of(body: &'a Body, op: OpId) -> Option<Boundary<'a>> {
        let d = body.op(op);
        let fused = Fused::is(d);
        let (inner, args): (&Body, Vec<ValueId>) = match d.inner.as_deref() {
            Some(inner) if fused => {
                let b = inner.entry_block(*d.regions().first()?)?;
                (inner, inner.block(b).args.clone())
            }
            _ => (body, d.operands().to_vec()),
        };
        let ops: Vec<Layout> = if fused {
            let mut v = vec![];
            crate::funcs::for_each_nested(body, op, &mut |b, o| v.push(layout_of(b.op(o))));
            v
        } else {
            vec![layout_of(d)]
        };
        Some(Boundary {
            inner,
            args,
            ops,
            in_types: body.operand_types(op),
            out_types: body.result_types(op),
        })
    }

    /// The uses of operand `i` inside: (the user's layout, operand index, user).
    fn users(&self, i: usize) -> Vec<(Layout, usize, OpId)> {
        let mut out = vec![];
        if let Some(&a) = self.args.get(i) {
            for u in self.inner.uses(a) {
                out.push((layout_of(self.inner.op(u.op)), u.operand as usize, u.op));
            }
        }
        out
    }
}

/// Whether a value of type `t` can be stored in the blocked `format`:
/// 4-D float images for NC1HWC0 and FRACTAL_Z, matrices for FRACTAL_NZ.
fn fits_format(format: Format, t: Type) -> bool {
    match format {
        Format::FRACTAL_NZ => matrix(t),
        _ => float4(t),
    }
}

/// Kernels on blocked storage (convolution and pooling in NC1HWC0, matrix
/// products in FRACTAL_NZ): the operands their ops read as blocked data
/// (and full-size pass-through values) and the results in `format`, and
/// weight operands in the weight's own format (FRACTAL_Z filters of dense
/// convolutions) where the op's `when` holds.
fn blocked_wants(b: &Boundary, format: Format) -> Wants {
    let mut w = Wants::default();
    for (i, &t) in b.in_types.iter().enumerate() {
        let us = b.users(i);
        let weight = us.iter().find_map(|(l, k, o)| match l {
            Layout::Blocked {
                weight: Some(bw), ..
            } if bw.operand == *k && (bw.when)(b.inner.op(*o).attrs) => Some(bw.format),
            _ => None,
        });
        let data = us.iter().any(|(l, k, _)| match l {
            Layout::Blocked {
                format: f, data, ..
            } => *f == format && data.contains(k),
            _ => false,
        });
        let full = b.out_types.contains(&t);
        match weight {
            Some(wf) if !data && fits_format(wf, t) => w.inputs.push((i, wf)),
            _ if (data || full) && fits_format(format, t) => w.inputs.push((i, format)),
            _ => {}
        }
    }
    for (j, &t) in b.out_types.iter().enumerate() {
        if fits_format(format, t) {
            w.outputs.push((j, format));
        }
    }
    w
}

/// Pointwise kernels keep the format their full-size inputs arrive in.
fn pointwise_wants(body: &Body, op: OpId, b: &Boundary) -> Wants {
    let (in_types, out_types) = (&b.in_types, &b.out_types);
    if !op_pattern(body, op).is_pointwise() || out_types.is_empty() {
        return Wants::default();
    }
    for target in [Format::NC1HWC0, Format::FRACTAL_NZ] {
        let shaped = |t: Type| match target {
            Format::NC1HWC0 => float4(t),
            _ => matrix(t),
        };
        let full: Vec<usize> = (0..in_types.len())
            .filter(|&i| out_types.contains(&in_types[i]) && shaped(in_types[i]))
            .collect();
        let all_packed = !full.is_empty()
            && full
                .iter()
                .all(|&i| unpacked_from(body, body.op(op).operands()[i]) == Some(target));
        if all_packed {
            return Wants {
                inputs: full.iter().map(|&i| (i, target)).collect(),
                outputs: (0..out_types.len())
                    .filter(|&j| shaped(out_types[j]) && in_types.contains(&out_types[j]))
                    .map(|j| (j, target))
                    .collect(),
            };
        }
    }
    Wants::default()
}

/// `data.transdata x {from → to}` right before `before`; engine AICore.
fn transdata_before(
    ctx: &Context,
    body: &mut Body,
    before: OpId,
    x: ValueId,
    from: Format,
    to: Format,
) -> Result<ValueId, String> {
    let loc = body.op(before).loc;
    let mut b = ge_ir::builder::Builder::before(ctx, body, before);
    b.loc = loc;
    b.create_value(
        Transdata::NAME,
        &[x],
        vec![
            ("src_format", Attribute::string(from.name())),
            ("dst_format", Attribute::string(to.name())),
            ("engine", Attribute::string("AICore")),
        ],
    )
}

/// Make kernel `k` write result `j` in format `f`.
fn convert_output(
    ctx: &Context,
    body: &mut Body,
    k: OpId,
    j: usize,
    f: Format,
) -> Result<(), String> {
    let to = origin_of(f);
    let r = body.result(k, j);
    let loc = body.op(k).loc;
    let plain_t = body.value_type(r);
    let packed_t = match f {
        Format::FRACTAL_NZ => transdata_type(plain_t, Format::ND, f)?,
        _ => transdata_type(plain_t, Format::NCHW, f)?,
    };
    // Inside: pack before the yield.
    let mut inner = body.take_inner(k).ok_or("kernel has no body")?;
    let res = (|| -> Result<(), String> {
        let reg = *body.op(k).regions().first().ok_or("kernel has no region")?;
        let b = inner.entry_block(reg).ok_or("kernel has no block")?;
        let y = inner.block_last_op(b).ok_or("kernel body is empty")?;
        let v = inner.operand(y, j);
        let mut bl = ge_ir::builder::Builder::before(ctx, &mut inner, y);
        bl.loc = loc;
        let packed = bl.create_value(
            Transdata::NAME,
            &[v],
            vec![
                ("src_format", Attribute::string(to.name())),
                ("dst_format", Attribute::string(f.name())),
            ],
        )?;
        inner.set_operand(y, j, packed);
        Ok(())
    })();
    body.put_inner(k, inner);
    res?;
    body.set_value_type(r, packed_t);
    // Outside: unpack after the kernel for the existing users.
    let next = body
        .next_op(k)
        .ok_or("kernel is the last op of its block")?;
    let mut b = ge_ir::builder::Builder::before(ctx, body, next);
    b.loc = loc;
    let unpacked = b.create_value(
        Transdata::NAME,
        &[r],
        vec![
            ("src_format", Attribute::string(f.name())),
            ("dst_format", Attribute::string(to.name())),
            ("engine", Attribute::string("AICore")),
        ],
    )?;
    let uop = body.defining_op(unpacked).ok_or("transdata has no op")?;
    body.replace_uses_if(r, unpacked, |_, u| u.op != uop);
    Ok(())
}

/// Evaluate `data.transdata` of a dense constant now; the result is a constant
/// in the storage format (its type carries the `#ge.format` encoding).
pub fn fold_constant(ctx: &Context, body: &mut Body, td: OpId) -> Result<bool, String> {
    let x = body.operand(td, 0);
    let Some(c) = ge_ir::builder::constant_value(body, x) else {
        return Ok(false);
    };
    let Some(x_dense) = c.as_dense() else {
        return Ok(false);
    };
    let ty = body.value_type(body.result(td, 0));
    let dense = match fold_bytes(body, td, x_dense) {
        Some((bytes, splat)) => DenseElements {
            ty,
            splat,
            bytes: bytes.into(),
        },
        // Sub-byte element types, a source already padded: the reference.
        None => {
            let Some(out) = ge_ir::interp::fold_with_semantics(body, td, &[Some(c)]) else {
                return Ok(false);
            };
            let Some(t) = out.into_iter().next() else {
                return Ok(false);
            };
            DenseElements {
                ty,
                splat: false,
                bytes: ge_dialects::data::tensor_to_bytes(&t).into(),
            }
        }
    };
    let loc = body.op(td).loc;
    let mut b = ge_ir::builder::Builder::before(ctx, body, td);
    b.loc = loc;
    let nc = b.create(
        Constant::NAME,
        &[],
        vec![("value", Attribute::dense(dense))],
        None,
        0,
    )?;
    let nv = body.result(nc, 0);
    let old = body.result(td, 0);
    body.replace_all_uses(old, nv);
    body.erase_op(td);
    if !body.has_uses(x) {
        if let Some(xo) = body.defining_op(x) {
            body.erase_op(xo);
        }
    }
    Ok(true)
}

/// The bytes of a weight's conversion from a plain format, copied element by
/// element (`layout::transdata_bytes`), and whether they are a splat; `None`
/// where only the reference conversion applies. Weights are most of a
/// model's bytes: converting them through `f64` tensors made `select-formats`
/// the longest phase of ge-atc on large CNNs.
fn fold_bytes(body: &Body, td: OpId, x: &DenseElements) -> Option<(Vec<u8>, bool)> {
    let a = Transdata::attrs(body.op(td));
    let src = Format::parse(a.src_format()?)?;
    let dst = Format::parse(a.dst_format()?)?;
    let t = x.ty.as_tensor()?;
    let stored: Vec<usize> = t
        .dims
        .as_ref()?
        .iter()
        .map(|d| d.as_static().and_then(|v| usize::try_from(v).ok()))
        .collect::<Option<_>>()?;
    if layout::is_padded(src) {
        return None;
    }
    let logical = layout::plain_logical(src, &stored).ok()?;
    let budget = ge_ir::budget::bytes_of(
        layout::Layout::new(dst, &logical, t.dtype)
            .ok()?
            .storage
            .iter()
            .map(|&d| d as u64),
        t.dtype.byte_size() as u64,
    );
    ge_ir::budget::check(budget, &"a folded weight").ok()?;
    layout::transdata_bytes(&x.bytes, x.splat, &stored, t.dtype, (src, dst), &logical).ok()
}

/// Cancel `transdata(transdata(x, A → B), B → A)` to `x`, and erase unused transdata.
pub fn cancel_pairs(body: &mut Body, block: BlockId) -> usize {
    let mut n = 0;
    let ops: Vec<OpId> = body.block_ops(block).collect();
    let fmt = |body: &Body, o: OpId, a: &str| -> Option<String> {
        body.op(o)
            .attr(a)
            .and_then(|x| x.as_str())
            .map(str::to_string)
    };
    for &o in &ops {
        if !body.op(o).is_alive() || !Transdata::is(body.op(o)) {
            continue;
        }
        let y = body.operand(o, 0);
        let Some(p) = body.defining_op(y) else {
            continue;
        };
        if !Transdata::is(body.op(p)) {
            continue;
        }
        let x = body.operand(p, 0);
        let inverse = fmt(body, p, "src_format") == fmt(body, o, "dst_format")
            && fmt(body, p, "dst_format") == fmt(body, o, "src_format");
        let r = body.result(o, 0);
        if inverse && body.value_type(x) == body.value_type(r) {
            body.replace_all_uses(r, x);
            body.erase_op(o);
            n += 1;
            if !body.has_uses(y) {
                body.erase_op(p);
            }
        }
    }
    for &o in ops.iter().rev() {
        if body.op(o).is_alive() && Transdata::is(body.op(o)) && body.results_unused(o) {
            body.erase_op(o);
        }
    }
    n
}

/// Merge identical `data.transdata` of one value — the same formats and
/// attributes, the same result type — into the first: each blocked user of
/// a value asked for its own conversion (Inception's four branches, a
/// transformer's Q, K and V projections of one normalized input), which
/// would run once per user (470 launches in the benchmark models). The
/// first precedes the others in the block, so it dominates their users.
/// Returns how many were merged.
pub fn merge_same(body: &mut Body, block: BlockId) -> usize {
    let mut first: HashMap<(ValueId, AttrDict, Type), ValueId> = HashMap::new();
    let mut n = 0;
    let ops: Vec<OpId> = body.block_ops(block).collect();
    for o in ops {
        if !body.op(o).is_alive() || !Transdata::is(body.op(o)) {
            continue;
        }
        let r = body.result(o, 0);
        let key = (body.operand(o, 0), body.op(o).attrs, body.value_type(r));
        match first.get(&key) {
            Some(&kept) => {
                body.replace_all_uses(r, kept);
                body.erase_op(o);
                n += 1;
            }
            None => {
                first.insert(key, r);
            }
        }
    }
    n
}
