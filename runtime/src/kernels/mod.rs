//! Kernels: each kernel function of the `.om` (a `graph.func` of the
//! kernels partition) is compiled once at load time into a
//! [`KernelProgram`] — a list of [`Step`]s over the function's values, with
//! elementwise chains grouped into fused single-pass loops ([`ew`]) and the
//! heavy ops on native kernels (GEMM and im2col convolution through
//! the `gemm` crate, pooling, normalisation, reductions, data movement).
//!
//! A kernel that uses an op without a native kernel (or f64 data) falls back
//! to the reference interpreter for the whole function: correct but slow;
//! [`KernelProgram::fallback`] names the op, and `Model::fallback_ops`
//! reports them.

/// The body of a function that runs `$body` — an `#[inline(always)]` fn of
/// the given arguments — compiled again for AVX-512F and for AVX2 + FMA and
/// picked by what the CPU has at run time: the crate is built for baseline
/// x86-64, where the kernels' loops run four lanes wide. Rust never fuses
/// `a * b + c` by itself, so every variant computes the same bits. The
/// enclosing function upholds `$body`'s contract (it is `unsafe` when
/// `$body` is).
macro_rules! by_cpu_features {
    ($body:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f")]
            unsafe fn avx512($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the caller upholds `$body`'s contract (see above).
                #[allow(unused_unsafe)]
                unsafe { $body($($arg),*) }
            }
            #[target_feature(enable = "avx2,fma")]
            unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the caller upholds `$body`'s contract (see above).
                #[allow(unused_unsafe)]
                unsafe { $body($($arg),*) }
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F.
                return unsafe { avx512($($arg),*) };
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: the CPU has AVX2 and FMA.
                return unsafe { avx2($($arg),*) };
            }
        }
        #[allow(unused_unsafe)]
        unsafe { $body($($arg),*) }
    }};
}

pub mod arg_reduce;
pub mod attention;
mod avx512_exp;
pub mod batch_norm;
pub mod bit_shift;
pub mod blocks_probe;
mod cache;
pub mod cast_e8m0;
pub mod col2im;
pub mod control_flow;
pub mod conv;
pub mod conv_blocked;
pub mod conv_transpose;
pub mod cumulative;
pub mod deform_conv;
mod depthwise_lanes;
mod depthwise_s2;
mod depthwise_tiny;
pub mod det;
pub mod ew;
pub mod gather_elements;
pub mod gelu;
pub mod geometry;
pub mod grid_sample;
pub mod instance_norm;
pub mod iota;
pub mod lanes;
pub mod linalg;
pub mod logistic;
pub mod max_unpool;
pub mod movement;
pub mod nms;
pub mod nonzero;
pub mod norm;
pub mod packed_right;
pub mod pad;
pub mod pool;
pub mod pool_lanes;
mod pool_rows;
mod pool_tiny;
pub mod prepared;
pub mod qlinear;
pub mod quant;
pub mod random;
pub mod range;
pub mod real_kernel;
pub mod registry;
pub mod resize;
pub mod reverse_sequence;
pub mod rnn;
mod rnn_fast;
pub mod roi_align;
pub mod rotary;
pub mod scatter_elements;
pub mod sequence_mixing;
pub mod sgemm_packed;
pub mod shape_of;
pub mod signal;
pub mod specialize;
pub mod swiglu;
pub mod tensor_scatter;
pub mod tfidf;
pub mod tile;
#[cfg(target_arch = "x86_64")]
mod tiny_planes;
pub mod topk;
mod transpose8;
pub mod tree_ensemble;
pub mod unique;
pub mod vmath;
pub mod volume;
pub mod winograd;

use crate::buffer::{class_of, AlignedBuf, Class};
use ge_dialects::data::constant::Constant;
use ge_dialects::graph::func::Return;
use ge_ir::body::{BlockId, Body, OpId, ValueId};
use ge_ir::module::Module;
use ge_ir::opdef::Trait;
use ge_ir::{DType, Dim, Ident, Location, Type};
use std::collections::HashMap;

/// A kernel value at run time: where its elements are and their shape.
#[derive(Clone, Debug)]
pub struct Slot {
    pub ptr: *mut u8,
    pub shape: Vec<usize>,
    pub dtype: DType,
}

impl Slot {
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn bytes(&self) -> usize {
        self.numel() * self.dtype.byte_size()
    }
}

/// Intra-op parallelism: the compute pool and the run's compute slots
/// (AICore/VectorCore kernels), or none (host kernels, load-time folding);
/// and the run's limits, which a kernel that loops (`graph.while`) keeps.
pub struct Par<'a> {
    pub pool: Option<(&'a crate::pool::Pool, &'a crate::pool::Slots)>,
    pub limits: RunLimits,
}

/// What bounds a kernel that loops: the steps one loop may run (the run's
/// `--max-steps`) and the run's deadline (`--timeout`).
#[derive(Clone, Copy, Debug)]
pub struct RunLimits {
    pub max_steps: u64,
    pub deadline: Option<std::time::Instant>,
}

impl RunLimits {
    /// The default step budget, no deadline (load-time folding).
    pub const DEFAULT: RunLimits = RunLimits {
        max_steps: crate::model::DEFAULT_MAX_STEPS,
        deadline: None,
    };
}

impl<'a> Par<'a> {
    /// Everything on the calling thread, under the default limits.
    pub const NONE: Par<'static> = Par {
        pool: None,
        limits: RunLimits::DEFAULT,
    };

    pub fn threads(&self) -> usize {
        self.pool.map_or(1, |(p, _)| p.threads())
    }
    /// Hold a compute slot while a kernel runs on this thread.
    pub fn enter(&self) -> Option<crate::pool::Permit<'a>> {
        self.pool.map(|(p, s)| p.enter(s))
    }
    /// Run `f(0..n)`, in parallel on the pool when `parallel` and it pays.
    pub fn run(
        &self,
        n: usize,
        parallel: bool,
        f: &(dyn Fn(usize) -> Result<(), String> + Sync),
    ) -> Result<(), String> {
        match self.pool {
            Some((pool, slots)) if parallel && n > 1 => pool.run(n, f, slots),
            _ => (0..n).try_for_each(f),
        }
    }
}

/// A native kernel declared in a file of its own (one op per file, e.g.
/// [`pad::Pad`]): the registry builds it from the op's attributes, the step
/// runs it on the op's operand and result slots. New kernels take this form
/// instead of a variant of [`Op`].
pub trait Kernel: Send + Sync + std::fmt::Debug {
    /// Compute `outs` from `ins` (the slot contract of [`Step::run`]).
    fn run(&self, ins: &[&Slot], outs: &[&Slot], par: &Par) -> Result<(), String>;
    /// Whether it computes on floats only (f32/f16/bf16); else any dtype.
    fn float_only(&self) -> bool {
        false
    }
    /// Whether it also runs on f64 data (at f64 precision).
    fn f64_ok(&self) -> bool {
        false
    }
    /// Ops it ran on the interpreter so far (a kernel that picks its op at
    /// run time: [`specialize::Specialize`]).
    fn run_time_fallbacks(&self) -> Vec<String> {
        vec![]
    }
    /// This kernel with `graph.relu` applied to its one result in the same
    /// pass, if it has such a form (the batch norm before a convolution in
    /// DenseNet's pre-activation layers): [`fuse_kernel_relus`] then drops
    /// the element-wise step that ran the relu. `None` by default.
    fn with_relu(&self) -> Option<std::sync::Arc<dyn Kernel>> {
        None
    }
    /// Prepare operand `operand`, a constant whose bytes live unchanged as
    /// long as the model, once at load (pack a filter into the GEMM's
    /// panels), within `budget` bytes; returns the bytes it allocated.
    /// Nothing by default.
    fn prepare(&self, operand: usize, constant: &Slot, budget: usize) -> usize {
        let _ = (operand, constant, budget);
        0
    }
}

/// What a step does.
#[derive(Clone, Debug)]
pub enum Op {
    /// A kernel of its own file ([`Kernel`]).
    Kernel(std::sync::Arc<dyn Kernel>),
    Ew(ew::Group),
    Conv(conv::Conv),
    Gemm(linalg::Gemm),
    MatMul(linalg::MatMul),
    Pool(pool::Pool),
    GlobalPool {
        max: bool,
    },
    Softmax {
        axis: i64,
        log: bool,
    },
    Norm(norm::Norm),
    Reduce(norm::Reduce),
    /// Same bytes, another shape (reshape, squeeze, unsqueeze).
    Copy,
    Transpose(Vec<usize>),
    Transdata(movement::Transdata),
    Concat(i64),
    Split(i64),
    Slice(movement::Slice),
    Gather(i64),
    Embedding,
}

impl Op {
    /// Whether the native kernel runs on f64 data (at f64 precision): data
    /// movement and reductions (not the blocked layouts), and the compute
    /// kernels that say so.
    fn f64_ok(&self) -> bool {
        match self {
            Op::Kernel(k) => k.f64_ok(),
            Op::MatMul(_) | Op::Softmax { .. } => true,
            // Pools compute in f32 (max pooling of i8/u8 is exact in f32).
            Op::Transdata(_) | Op::Pool(_) => false,
            _ => !self.float_only(),
        }
    }

    /// Whether the native kernel computes on floats only (f32/f16/bf16):
    /// compute ops; data movement, reductions and matmul take any dtype.
    fn float_only(&self) -> bool {
        match self {
            Op::Kernel(k) => return k.float_only(),
            // The max of i8/u8 values (the ints graph.max_pool2d takes) is exact in f32.
            Op::Pool(p) => return p.avg,
            _ => {}
        }
        !matches!(
            self,
            Op::MatMul(_)
                | Op::Copy
                | Op::Transpose(_)
                | Op::Transdata(_)
                | Op::Concat(_)
                | Op::Split(_)
                | Op::Slice(_)
                | Op::Gather(_)
                | Op::Embedding
                | Op::Reduce(_)
        )
    }
}

/// One step of a kernel: reads values `ins`, writes values `outs`.
#[derive(Clone, Debug)]
pub struct Step {
    pub op: Op,
    pub ins: Vec<usize>,
    pub outs: Vec<usize>,
    /// The op name(s) it runs.
    pub name: String,
    /// The op's location in the model's source (a fused location for an
    /// elementwise loop of several ops), for errors.
    pub loc: Location,
    /// Its op is `Pure`: the same inputs give the same results, so it may be
    /// computed once at load time when its inputs are known (a random draw
    /// is not).
    pub pure: bool,
}

/// A compiled kernel function.
#[derive(Clone, Debug)]
pub struct KernelProgram {
    pub name: String,
    /// Types of the function's values (local numbering).
    pub types: Vec<Type>,
    pub args: Vec<usize>,
    pub results: Vec<usize>,
    pub steps: Vec<Step>,
    /// Constants inside the kernel: value → bytes.
    pub consts: Vec<(usize, AlignedBuf)>,
    /// Set when the kernel runs on the reference interpreter: the op that needs it.
    pub fallback: Option<String>,
    /// The kernel function's location (errors that concern the whole kernel).
    pub loc: Location,
}

/// Concrete shape of a type under symbol bindings.
pub fn concrete(t: Type, syms: &HashMap<Ident, i64>) -> Result<Vec<usize>, String> {
    let tt = t
        .as_tensor()
        .ok_or_else(|| format!("expected a tensor type, got '{t}'"))?;
    tt.dims
        .as_ref()
        .ok_or_else(|| format!("'{t}' is unranked"))?
        .iter()
        .map(|d: &Dim| {
            d.eval(syms)
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(|| format!("the shape of '{t}' is not known from the inputs"))
        })
        .collect()
}

struct Builder<'b> {
    body: &'b Body,
    ids: HashMap<ValueId, usize>,
    types: Vec<Type>,
    steps: Vec<Step>,
    consts: Vec<(usize, AlignedBuf)>,
    /// Open elementwise group: (iteration dims, group, value → register).
    group: Option<(Vec<Dim>, ew::Group, HashMap<usize, usize>)>,
    /// The locations of the open group's ops.
    group_locs: Vec<Location>,
}

impl Builder<'_> {
    fn id(&mut self, v: ValueId) -> usize {
        if let Some(&i) = self.ids.get(&v) {
            return i;
        }
        let i = self.types.len();
        self.types.push(self.body.value_type(v));
        self.ids.insert(v, i);
        i
    }

    fn flush(&mut self) {
        if let Some((_, g, _)) = self.group.take() {
            let name = g.names.join("+");
            let ins = g.inputs.iter().map(|&(_, v)| v).collect();
            let loc = Location::fused(&std::mem::take(&mut self.group_locs), None);
            self.steps.push(Step {
                op: Op::Ew(g),
                ins,
                outs: vec![],
                name,
                loc,
                pure: true,
            });
        }
    }

    /// Add an elementwise op to the open group (or a new one).
    fn ew(&mut self, o: OpId, code: ew::Code) -> Result<(), String> {
        let d = self.body.op(o);
        let r = d.results()[0];
        let rt = self.body.value_type(r);
        let dims: Vec<Dim> = rt
            .as_tensor()
            .and_then(|t| t.dims.clone())
            .ok_or("unranked elementwise result")?
            .to_vec();
        if self.group.as_ref().is_some_and(|(gd, _, _)| *gd != dims) {
            self.flush();
        }
        let operands: Vec<usize> = d.operands().iter().map(|&v| self.id(v)).collect();
        let rid = self.id(r);
        let types = self.types.clone();
        let (_, g, regs) = self.group.get_or_insert_with(|| {
            (
                dims.clone(),
                ew::Group {
                    regs: vec![],
                    inputs: vec![],
                    instrs: vec![],
                    outputs: vec![],
                    defs: vec![],
                    names: vec![],
                },
                HashMap::new(),
            )
        });
        let reg_of = |v: usize,
                      g: &mut ew::Group,
                      regs: &mut HashMap<usize, usize>|
         -> Result<usize, String> {
            if let Some(&r) = regs.get(&v) {
                return Ok(r);
            }
            let dt = types[v].dtype().ok_or("not a tensor")?;
            let class = class_of(dt).ok_or("f64 elementwise")?;
            let r = g.regs.len();
            g.regs.push(ew::Reg { dtype: dt, class });
            g.inputs.push((r, v));
            regs.insert(v, r);
            Ok(r)
        };
        let mut args = vec![];
        for &v in &operands {
            args.push(reg_of(v, g, regs)?);
        }
        let dt = rt.dtype().ok_or("not a tensor")?;
        let class = class_of(dt).ok_or("f64 elementwise")?;
        let dst = g.regs.len();
        g.regs.push(ew::Reg { dtype: dt, class });
        regs.insert(rid, dst);
        g.defs.push((dst, rid));
        g.instrs.push(ew::Instr { code, args, dst });
        g.names.push(d.name.as_str());
        self.group_locs.push(d.loc);
        Ok(())
    }
}

/// Why a kernel cannot be compiled natively (the op name), or its program:
/// the kernel function's ops in order, elementwise runs grouped into single
/// loops ([`Builder::ew`]), every other op one native step ([`native_op`]);
/// the first op without a native step makes the whole kernel fall back to
/// the interpreter.
pub fn compile(module: &Module, name: &str) -> Result<KernelProgram, String> {
    let mb = module.body();
    let f = module
        .lookup_symbol(name)
        .ok_or_else(|| format!("kernel '@{name}' is not in the kernels partition"))?;
    let fd = mb.op(f);
    let no_body = || format!("kernel '@{name}' has no body");
    let body = fd.inner.as_deref().ok_or_else(no_body)?;
    let r = *fd.regions().first().ok_or_else(no_body)?;
    let blk = body.entry_block(r).ok_or_else(no_body)?;
    compile_block(Some(module), body, blk, &[], name, fd.loc)
}

/// The program of block `blk` of `body` — a kernel function's body, or a
/// region of a control-flow op ([`control_flow`]): the block's arguments and
/// then `extra` (values defined outside the block that it reads) are the
/// program's arguments, the operands of its terminator its results.
/// `module` holds the resource blobs of `dense_resource` constants.
pub fn compile_block(
    module: Option<&Module>,
    body: &Body,
    blk: BlockId,
    extra: &[ValueId],
    name: &str,
    loc: Location,
) -> Result<KernelProgram, String> {
    let mut b = Builder {
        body,
        ids: HashMap::new(),
        types: vec![],
        steps: vec![],
        consts: vec![],
        group: None,
        group_locs: vec![],
    };
    let args: Vec<usize> = body
        .block(blk)
        .args
        .iter()
        .chain(extra)
        .map(|&a| b.id(a))
        .collect();
    let ends = |o: OpId| {
        let d = body.op(o);
        Return::is(d) || d.has_trait(Trait::Terminator)
    };
    let mut results = vec![];
    if let Some(ret) = body.block_ops(blk).last() {
        if ends(ret) {
            let rs: Vec<ValueId> = body.op(ret).operands().to_vec();
            results = rs.into_iter().map(|v| b.id(v)).collect();
        }
    }
    let mut fallback = None;
    for o in body.block_ops(blk) {
        if ends(o) {
            break;
        }
        fallback = b.op(module, o)?;
        if fallback.is_some() {
            break;
        }
    }
    b.flush();
    store_live_ew_values(&mut b.steps, &results);
    fuse_conv_residuals(&mut b.steps, &results, &b.types);
    fuse_kernel_relus(&mut b.steps, &results, &b.types);
    fold_blocked_conv_outputs(&mut b.steps, &results, &b.types);
    winograd::plan(&mut b.steps, &mut b.types);
    Ok(KernelProgram {
        name: name.to_string(),
        types: b.types,
        args,
        results,
        steps: b.steps,
        consts: b.consts,
        fallback,
        loc,
    })
}

impl Builder<'_> {
    /// Add op `o`: a constant, an elementwise op (to the open group) or a
    /// native step. `Some(reason)` when it has no native kernel.
    fn op(&mut self, module: Option<&Module>, o: OpId) -> Result<Option<String>, String> {
        let body = self.body;
        let d = body.op(o);
        let opname = d.name.as_str();
        let has_f64 = |v: &ValueId| body.value_type(*v).dtype() == Some(DType::F64);
        let f64_data = d.results().iter().any(has_f64) || d.operands().iter().any(has_f64);
        let native = d
            .def
            .and_then(registry::kernel_of)
            .and_then(|make| make(body, o));
        let op = match native {
            None => return Ok(Some(opname.to_string())),
            Some(registry::Native::Constant) => {
                self.flush();
                let value = Constant::attrs(d).value().ok_or("constant without value")?;
                let t = ge_dialects::data::constant::elements_tensor(value, module)?;
                let id = self.id(d.results()[0]);
                self.consts.push((
                    id,
                    AlignedBuf::from_bytes(&ge_dialects::data::tensor_to_bytes(&t)),
                ));
                return Ok(None);
            }
            Some(registry::Native::Ew(code)) if d.results().len() == 1 => {
                return Ok(self.ew(o, code).err().map(|m| format!("{opname} ({m})")));
            }
            Some(registry::Native::Ew(_)) => return Ok(Some(opname.to_string())),
            Some(registry::Native::Step(op)) => op,
        };
        // f64 data only on the kernels that compute at its precision
        // (elementwise loops do, see `ew`).
        if f64_data && !op.f64_ok() {
            return Ok(Some(opname.to_string()));
        }
        self.flush();
        // A control-flow op also reads what its regions capture, after its
        // operands (the order `control_flow::ControlFlow` expects).
        let ins: Vec<usize> = d
            .operands()
            .iter()
            .copied()
            .chain(body.captured_values(o))
            .map(|v| self.id(v))
            .collect();
        let outs: Vec<usize> = d.results().iter().map(|&v| self.id(v)).collect();
        // Compute ops run on floats (f32/f16/bf16, and f64 where `f64_ok`);
        // data movement on any dtype.
        let float = |&v: &usize| match self.types[v].dtype().and_then(class_of) {
            Some(Class::F) => true,
            Some(Class::D) => op.f64_ok(),
            _ => false,
        };
        if op.float_only() && !outs.iter().all(float) {
            return Ok(Some(format!("{opname} on non-float data")));
        }
        self.steps.push(Step {
            op,
            ins,
            outs,
            name: opname.to_string(),
            loc: d.loc,
            pure: d.has_trait(ge_ir::opdef::Trait::Pure),
        });
        Ok(None)
    }
}

/// Elementwise groups store the values used after them (or returned).
fn store_live_ew_values(steps: &mut [Step], results: &[usize]) {
    for i in 0..steps.len() {
        let later: std::collections::HashSet<usize> = steps[i + 1..]
            .iter()
            .flat_map(|s| s.ins.iter().copied())
            .chain(results.iter().copied())
            .collect();
        if let Op::Ew(g) = &mut steps[i].op {
            g.outputs = g
                .defs
                .iter()
                .copied()
                .filter(|(_, v)| later.contains(v))
                .collect();
            steps[i].outs = g.outputs.iter().map(|&(_, v)| v).collect();
        }
    }
}

/// A kernel step with a relu form ([`Kernel::with_relu`]) whose one result
/// only an element-wise step computing `graph.relu` of it (and nothing else)
/// reads, and which is not a result of the kernel: the kernel's relu form
/// writes the relu's value, and the element-wise step goes (one pass over the
/// data instead of two).
fn fuse_kernel_relus(steps: &mut Vec<Step>, results: &[usize], types: &[Type]) {
    let mut i = 0;
    while i < steps.len() {
        if let Some((j, y, k)) = relu_of(steps, i, results, types) {
            steps.remove(j);
            let s = &mut steps[i];
            s.op = Op::Kernel(k);
            s.outs = vec![y];
            s.name.push_str(" + relu");
        }
        i += 1;
    }
}

/// The one step after step `i` that reads value `v`, if exactly one does.
fn sole_reader(steps: &[Step], i: usize, v: usize) -> Option<usize> {
    let mut readers = (i + 1..steps.len()).filter(|&j| steps[j].ins.contains(&v));
    let j = readers.next()?;
    readers.next().is_none().then_some(j)
}

/// For step `i`: the element-wise step that is only `graph.relu` of its
/// result, that relu's value, and the kernel's relu form.
fn relu_of(
    steps: &[Step],
    i: usize,
    results: &[usize],
    types: &[Type],
) -> Option<(usize, usize, std::sync::Arc<dyn Kernel>)> {
    let (Op::Kernel(k), &[v]) = (&steps[i].op, &steps[i].outs[..]) else {
        return None;
    };
    if results.contains(&v) {
        return None;
    }
    let j = sole_reader(steps, i, v)?;
    let Op::Ew(g) = &steps[j].op else {
        return None;
    };
    let (&[(reg, x)], [relu], &[(out, y)]) = (&g.inputs[..], &g.instrs[..], &g.outputs[..]) else {
        return None;
    };
    let same_type = types.get(y).is_some_and(|t| Some(t) == types.get(v));
    if x != v || relu.code != ew::Code::Relu || relu.args != [reg] || relu.dst != out || !same_type
    {
        return None;
    }
    Some((j, y, k.with_relu()?))
}

/// A convolution whose result only an elementwise `add` with a value of its
/// own shape reads — a residual, known before the convolution runs — and
/// then at most a `relu`, adds it in its epilogue ([`conv::Conv::residual`]):
/// each output tile gets `act(conv + bias + residual)` while in cache, and
/// the elementwise pass over the whole result goes (ResNet's and
/// MobileNetV2's blocks). The same additions in the same order: bit for bit
/// the unfused result, but for a NaN sum through the relu, which the conv
/// epilogue maps to 0 as the reference's relu does (the elementwise loop
/// keeps NaN).
fn fuse_conv_residuals(steps: &mut Vec<Step>, results: &[usize], types: &[Type]) {
    let mut i = 0;
    while i < steps.len() {
        if let Some((j, r, act, y)) = residual_of(steps, i, results, types) {
            steps.remove(j);
            let conv = &mut steps[i];
            conv.ins.push(r);
            let index = conv.ins.len() - 1;
            conv.outs = vec![y];
            conv.name.push_str(" + add");
            if let Op::Conv(c) = &mut conv.op {
                c.residual = Some(index);
                if act {
                    c.act = "relu".to_string();
                    conv.name.push_str(" + relu");
                }
            }
        }
        i += 1;
    }
}

/// For convolution step `i`: the elementwise step that adds a residual to
/// its result, the residual, whether a relu follows and the value it makes.
fn residual_of(
    steps: &[Step],
    i: usize,
    results: &[usize],
    types: &[Type],
) -> Option<(usize, usize, bool, usize)> {
    let v = match (&steps[i].op, &steps[i].outs[..]) {
        (Op::Conv(c), &[v])
            if c.act == "none"
                && c.blocked_out.is_none()
                && c.residual.is_none()
                && c.winograd.is_none()
                && !results.contains(&v) =>
        {
            v
        }
        _ => return None,
    };
    let j = sole_reader(steps, i, v)?;
    let Op::Ew(g) = &steps[j].op else {
        return None;
    };
    // add(v, r) or add(r, v), then at most relu of the sum; one output.
    let value = |reg: usize| g.inputs.iter().find(|&&(rg, _)| rg == reg).map(|&(_, x)| x);
    let (add, rest) = g.instrs.split_first()?;
    let relu = match rest {
        [] => false,
        [n] if n.code == ew::Code::Relu && n.args == [add.dst] => true,
        _ => return None,
    };
    let (a, b) = match add.args[..] {
        [a, b] if add.code == ew::Code::Add => (value(a)?, value(b)?),
        _ => return None,
    };
    let r = match (a == v, b == v) {
        (true, false) => b,
        (false, true) => a,
        _ => return None,
    };
    let last = g.instrs.last()?.dst;
    let &[(reg, y)] = g.outputs.as_slice() else {
        return None;
    };
    // Every value f32 and of one shape (no broadcast), the residual made
    // before the convolution (an argument or an earlier step's result).
    let f32_of = |x: usize| types.get(x).filter(|t| t.dtype() == Some(DType::F32));
    let same = [r, y]
        .iter()
        .all(|&x| f32_of(x).is_some() && types[x] == types[v]);
    let early = !steps[i..].iter().any(|s| s.outs.contains(&r));
    (reg == last && g.inputs.len() == 2 && f32_of(v).is_some() && same && early)
        .then_some((j, r, relu, y))
}

/// A convolution whose only reader is an NCHW -> NC1HWC0 transdata writes
/// the blocks itself ([`conv::Conv::blocked_out`]): the transdata step goes,
/// and the convolution's NCHW result is never stored.
fn fold_blocked_conv_outputs(steps: &mut Vec<Step>, results: &[usize], types: &[Type]) {
    use ge_ir::attributes::Format;
    let mut i = 0;
    while i < steps.len() {
        let reader = match (&steps[i].op, &steps[i].outs[..]) {
            (Op::Conv(c), &[v]) if c.blocked_out.is_none() && !results.contains(&v) => {
                let readers: Vec<usize> = (i + 1..steps.len())
                    .filter(|&j| steps[j].ins.contains(&v))
                    .collect();
                match readers[..] {
                    [j] if steps[j].ins == [v]
                        && matches!(&steps[j].op, Op::Transdata(t)
                            if t.src == Format::NCHW && t.dst == Format::NC1HWC0) =>
                    {
                        Some(j)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let dtype = reader
            .and_then(|j| steps[j].outs.first())
            .and_then(|&v| types.get(v)?.dtype());
        if let (Some(j), Some(dtype)) = (reader, dtype) {
            let t = steps.remove(j);
            let plain = steps[i].outs.first().and_then(|&v| types.get(v).copied());
            if let Op::Conv(c) = &mut steps[i].op {
                c.blocked_out = Some(Format::c0(dtype) as usize);
                c.plain_type = plain;
            }
            steps[i].outs = t.outs;
        }
        i += 1;
    }
}

/// An input as f32: the slot's own memory when it is f32, else a converted copy.
pub struct F32In {
    ptr: *const f32,
    len: usize,
    _own: Option<Vec<f32>>,
}

impl F32In {
    pub fn new(s: &Slot) -> F32In {
        let len = s.numel();
        if s.dtype == DType::F32 {
            return F32In {
                ptr: s.ptr as *const f32,
                len,
                _own: None,
            };
        }
        let mut v = vec![0f32; len];
        crate::buffer::load_f32(s.dtype, s.ptr, 0, &mut v);
        F32In {
            ptr: v.as_ptr(),
            len,
            _own: Some(v),
        }
    }
    pub fn ptr(&self) -> *const f32 {
        self.ptr
    }
    /// The elements. Valid while no kernel writes the same bytes (the
    /// executor redirects outputs that alias inputs of non-elementwise kernels).
    pub fn slice(&self) -> &[f32] {
        // SAFETY: the slot covers `len` elements (checked by the shape plan).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// An output as f32: the slot's memory when f32, else a buffer stored on `finish`.
pub struct F32Out<'s> {
    slot: &'s Slot,
    own: Option<Vec<f32>>,
}

impl<'s> F32Out<'s> {
    pub fn new(s: &'s Slot) -> F32Out<'s> {
        F32Out {
            slot: s,
            own: (s.dtype != DType::F32).then(|| vec![0f32; s.numel()]),
        }
    }
    pub fn ptr(&mut self) -> *mut f32 {
        match &mut self.own {
            Some(v) => v.as_mut_ptr(),
            None => self.slot.ptr as *mut f32,
        }
    }
    pub fn finish(self) {
        if let Some(v) = &self.own {
            crate::buffer::store_f32(self.slot.dtype, self.slot.ptr, 0, v);
        }
    }
}

/// `C[m x n] = alpha * A[m x k] * B[k x n] + beta * C` with arbitrary strides.
///
/// # Safety
/// The pointers must be valid for the strided ranges.
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm(
    m: usize,
    k: usize,
    n: usize,
    alpha: f32,
    a: *const f32,
    rsa: isize,
    csa: isize,
    b: *const f32,
    rsb: isize,
    csb: isize,
    beta: f32,
    c: *mut f32,
    rsc: isize,
    csc: isize,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        for i in 0..m {
            for j in 0..n {
                let p = c.offset(i as isize * rsc + j as isize * csc);
                *p = if beta == 0.0 { 0.0 } else { *p * beta };
            }
        }
        return;
    }
    // gemm's convention: dst := alpha·dst + beta·lhs·rhs, strides as (column, row).
    // Threads are the runtime's own (kernels tile their work), so none here.
    gemm::gemm(
        m,
        n,
        k,
        c,
        csc,
        rsc,
        beta != 0.0,
        a,
        csa,
        rsa,
        b,
        csb,
        rsb,
        beta,
        alpha,
        false,
        false,
        false,
        gemm::Parallelism::None,
    );
}

/// Apply a fused activation epilogue in place.
pub fn activation(name: &str, alpha: f32, v: &mut [f32]) {
    if name == "relu6" {
        // As graph.clip: NaN stays NaN (clamp keeps it).
        v.iter_mut().for_each(|x| *x = x.clamp(0.0, 6.0));
        return;
    }
    if name == "hard_swish" {
        ew::hard_swish_in_place(v);
        return;
    }
    let code = match name {
        "relu" => ew::Code::Relu,
        "leaky_relu" => ew::Code::LeakyRelu(alpha),
        "sigmoid" => ew::Code::Sigmoid,
        "tanh" => ew::Code::Tanh,
        "gelu" => ew::Code::Gelu,
        "silu" => ew::Code::Silu,
        _ => return,
    };
    if code == ew::Code::Relu {
        v.iter_mut().for_each(|x| *x = ew::relu(*x));
        return;
    }
    if matches!(code, ew::Code::Sigmoid | ew::Code::Silu)
        && logistic::in_place(code == ew::Code::Silu, v)
    {
        return;
    }
    if code == ew::Code::Gelu && gelu::in_place(v) {
        return;
    }
    // Through a copy on the stack, a chunk at a time (the epilogue calls
    // this per row of a tile: no allocation per call).
    let mut x = [0f32; 256];
    for chunk in v.chunks_mut(x.len()) {
        let x = &mut x[..chunk.len()];
        x.copy_from_slice(chunk);
        ew::apply_unary(code, x, chunk);
    }
}

/// A step's operands or results ([`Step::run`]).
type SlotRefs<'a> = smallvec::SmallVec<[&'a Slot; 8]>;

impl Step {
    /// Run on the kernel's value slots.
    ///
    /// The contract every `unsafe` block of the native kernels relies on:
    /// each slot this step reads or writes points at `slot.bytes()` valid
    /// bytes (`shape` and `dtype` are the value's at this run's shape). The
    /// runtime proves it before any step runs — the loader (`crate::proof`:
    /// one operand per kernel argument, each weight and buffer at least its
    /// argument's size, the kernels partition verified, so operand and
    /// result shapes of each op agree) and the plan of each concrete shape
    /// (`exec.rs`'s `check_places`: every place inside the real buffer it
    /// indexes, zero-copy caller tensors at their actual shape). Within that,
    /// each kernel checks what relates its operands' shapes to each other
    /// before it indexes by them.
    pub fn run(&self, slots: &[Slot], par: &Par) -> Result<(), String> {
        // On the stack for the usual few operands: a step runs every run
        // (with the table below, 656 of small_cnn's 58 400 instructions a
        // run fewer, cachegrind).
        let ins: SlotRefs = self.ins.iter().map(|&i| &slots[i]).collect();
        let outs: SlotRefs = self.outs.iter().map(|&i| &slots[i]).collect();
        let out0 = || {
            outs.first()
                .copied()
                .ok_or_else(|| format!("{} has no result", self.name))
        };
        let in0 = || {
            ins.first()
                .copied()
                .ok_or_else(|| format!("{} has no operand", self.name))
        };
        match &self.op {
            Op::Kernel(k) => k.run(&ins, &outs, par),
            Op::Ew(g) => {
                let Some(&(_, v)) = g.defs.first() else {
                    return Ok(());
                };
                if g.outputs.is_empty() {
                    return Ok(());
                }
                g.run(slots, &slots[v].shape, par)
            }
            Op::Conv(c) => c.run(&ins, out0()?, par),
            Op::Gemm(g) => g.run(&ins, out0()?, par),
            Op::MatMul(m) => m.run(&ins, out0()?, par),
            Op::Pool(p) => p.run(in0()?, out0()?, par),
            Op::GlobalPool { max } => pool::global(*max, in0()?, out0()?),
            Op::Softmax { axis, log } => norm::softmax(*axis, *log, in0()?, out0()?, par),
            Op::Norm(n) => n.run(&ins, out0()?, par),
            Op::Reduce(r) => r.run(in0()?, out0()?),
            Op::Copy => movement::copy(in0()?, out0()?, par),
            Op::Transpose(p) => movement::transpose(p, in0()?, out0()?, par),
            Op::Transdata(t) => t.run(in0()?, out0()?, par),
            Op::Concat(a) => movement::concat(*a, &ins, out0()?, par),
            Op::Split(a) => movement::split(*a, in0()?, &outs, par),
            Op::Slice(s) => s.run(in0()?, out0()?, par),
            Op::Gather(a) => movement::gather(
                *a,
                in0()?,
                ins.get(1).ok_or("gather needs indices")?,
                out0()?,
            ),
            Op::Embedding => {
                movement::embedding(in0()?, ins.get(1).ok_or("embedding needs ids")?, out0()?)
            }
        }
    }

    /// Whether the step reads each input element before writing the output
    /// element at the same position (so an output may share an input's bytes).
    pub fn in_place_safe(&self) -> bool {
        matches!(self.op, Op::Ew(_))
    }
}
