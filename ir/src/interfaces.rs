//! Op interfaces: what passes may ask about an op without naming it (MLIR's
//! op interfaces, e.g. `InferTypeOpInterface`, `MemoryEffectOpInterface`).
//!
//! An interface is a Rust type implementing [`OpInterface`]; an op implements
//! it by listing a value of that type in its declaration
//! (`interfaces: [Cost::ELEMENTWISE, FusionPattern::Elementwise, ...]`, see
//! [`crate::def_op!`]). Passes look interfaces up by type:
//! `def.interface::<FusionPattern>()` (what the declaration says) or
//! `ctx.op_interface::<FusionPattern>(def)` (also what was registered at run
//! time with [`crate::Context::register_interface`], e.g. by a plugin loaded
//! from a shared library; a run-time registration wins over the declaration).
//! Other crates define their own interfaces the same way (the ES builder's
//! [`EsOp`](../../ge_dialects/es/struct.EsOp.html) is one).
//!
//! The interfaces every compiler stage needs are declared here:
//!
//! | interface | answers | used by (phase 2 of issue 19) |
//! |---|---|---|
//! | [`Cost`] | FLOPs and the unit (cube/vector) from operand/result types and attributes | lowering's roofline, eqsat's extraction |
//! | [`FusionPattern`] | TVM's op pattern (elementwise … opaque) | operator fusion |
//! | [`EngineSupport`] | which built-in engines may run the op | engine partition |
//! | [`PrecisionClass`] | white/gray/black list of mixed precision | `convert-precision` |
//! | [`Layout`] | plain, format-following, or blocked (NC1HWC0 / FRACTAL_*) | `select-formats` |
//! | [`KernelFamily`] | which native kernel family of the runtime runs it | the runtime's kernel registry (keyed by [`OpKey`]) |
//! | [`RandomValues`] | that the op draws random values, and the set they lie in | checks of outputs no reference can reproduce (ge-conformance) |

use crate::attributes::{AttrDict, Format};
use crate::dim::Dim;
use crate::ident::Ident;
use crate::opdef::OpDef;
use crate::types::Type;
use std::any::Any;
use std::collections::HashMap;

/// An op interface: a value attached to an op definition, found by its type.
pub trait OpInterface: Any + Send + Sync {
    /// The interface's name in `ge-opt --list-ops`.
    fn interface_name(&self) -> &'static str;
    /// `self` as `Any`, to find the interface by its type.
    fn as_any(&self) -> &dyn Any;
}

/// Implement [`OpInterface`] for a type under a name.
#[macro_export]
macro_rules! op_interface {
    ($ty:ty, $name:literal) => {
        impl $crate::interfaces::OpInterface for $ty {
            fn interface_name(&self) -> &'static str {
                $name
            }
            fn as_any(&self) -> &dyn ::std::any::Any {
                self
            }
        }
    };
}

/// The identity of an op definition (its address): the key of side tables
/// such as run-time interface registrations and the runtime's kernel
/// registry. Two ops are the same op exactly when their keys are equal; the
/// name is never compared.
#[derive(Clone, Copy)]
pub struct OpKey(pub &'static OpDef);

impl OpKey {
    pub fn def(self) -> &'static OpDef {
        self.0
    }
}

impl PartialEq for OpKey {
    fn eq(&self, other: &OpKey) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for OpKey {}

impl std::hash::Hash for OpKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::ptr::hash(self.0, h)
    }
}

impl std::fmt::Debug for OpKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpKey({})", self.0.name)
    }
}

/// Interfaces registered at run time, by op (a [`crate::Context`] field).
/// Registered values are leaked: there are few, and they live as long as
/// the op definitions they extend.
#[derive(Default)]
pub struct InterfaceTable {
    by_op: std::sync::RwLock<HashMap<OpKey, Vec<&'static dyn OpInterface>>>,
}

impl InterfaceTable {
    /// Attach `iface` to `def`, replacing a run-time registration of the
    /// same interface type.
    pub fn register(&self, def: &'static OpDef, iface: Box<dyn OpInterface>) {
        let iface: &'static dyn OpInterface = Box::leak(iface);
        if let Ok(mut m) = self.by_op.write() {
            let v = m.entry(OpKey(def)).or_default();
            v.retain(|x| x.as_any().type_id() != iface.as_any().type_id());
            v.push(iface);
        }
    }

    /// The run-time registrations of `def`.
    pub fn of(&self, def: &'static OpDef) -> Vec<&'static dyn OpInterface> {
        self.by_op
            .read()
            .ok()
            .and_then(|m| m.get(&OpKey(def)).cloned())
            .unwrap_or_default()
    }

    /// Interface `T` of `def` registered at run time.
    pub fn get<T: OpInterface>(&self, def: &'static OpDef) -> Option<&'static T> {
        let m = self.by_op.read().ok()?;
        m.get(&OpKey(def))?
            .iter()
            .find_map(|i| i.as_any().downcast_ref::<T>())
    }
}

// ---- cost -----------------------------------------------------------------

/// Which unit of an AI Core does an op's arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    Cube,
    Vector,
}

/// What a cost model sees: types and attributes, not a body, so the
/// equality-saturation extractor can ask about an e-class's types.
pub struct CostCtx<'a> {
    pub operand_types: &'a [Type],
    pub result_types: &'a [Type],
    pub attrs: AttrDict,
    /// Values of symbolic dims (their upper bounds); a symbol without one and
    /// an unknown dim count as 1.
    pub symbols: &'a HashMap<Ident, i64>,
}

impl CostCtx<'_> {
    /// The dims of a tensor type as numbers (empty for other types).
    pub fn dims(&self, t: Type) -> Vec<f64> {
        t.as_tensor()
            .map(|tt| {
                tt.shape()
                    .iter()
                    .map(|d| match d {
                        Dim::Static(v) => *v as f64,
                        d => d.eval(self.symbols).unwrap_or(1) as f64,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
    /// Elements of a type (1 for a non-tensor).
    pub fn elements(&self, t: Type) -> f64 {
        self.dims(t).iter().product()
    }
    /// The dims of operand `i` (empty when absent).
    pub fn operand_dims(&self, i: usize) -> Vec<f64> {
        self.operand_types
            .get(i)
            .map(|&t| self.dims(t))
            .unwrap_or_default()
    }
    /// Elements of the first result (0 when there is none).
    pub fn out_elements(&self) -> f64 {
        self.result_types.first().map_or(0.0, |&t| self.elements(t))
    }
    /// The largest element count among the operands and the first result.
    pub fn max_elements(&self) -> f64 {
        self.operand_types
            .iter()
            .map(|&t| self.elements(t))
            .fold(self.out_elements(), f64::max)
    }
}

/// An op's cost model: the unit doing its arithmetic and its FLOPs
/// (multiply-add = 2).
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    pub unit: Unit,
    pub flops: fn(&CostCtx) -> f64,
    /// The op does no work at run time: it reinterprets its input's bytes
    /// (reshape) or is a constant.
    pub free: bool,
}

/// The answer of a [`Cost`] model for one op.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpCost {
    pub flops: f64,
    pub unit: Unit,
    pub free: bool,
}

fn per_element(cx: &CostCtx) -> f64 {
    cx.max_elements()
}

fn transcendental(cx: &CostCtx) -> f64 {
    8.0 * cx.out_elements()
}

fn normalization(cx: &CostCtx) -> f64 {
    6.0 * cx.out_elements()
}

fn nothing(_: &CostCtx) -> f64 {
    0.0
}

impl Cost {
    /// One vector operation per element of the largest operand or result:
    /// elementwise math, data movement, reductions.
    pub const ELEMENTWISE: Cost = Cost::vector(per_element);
    /// Eight vector operations per result element (exp, log, tanh, erf, softmax, …).
    pub const TRANSCENDENTAL: Cost = Cost::vector(transcendental);
    /// Six vector operations per result element (mean, variance, scale, shift).
    pub const NORMALIZATION: Cost = Cost::vector(normalization);
    /// No work at run time (a reinterpretation of bytes, a constant).
    pub const FREE: Cost = Cost {
        unit: Unit::Vector,
        flops: nothing,
        free: true,
    };

    pub const fn vector(flops: fn(&CostCtx) -> f64) -> Cost {
        Cost {
            unit: Unit::Vector,
            flops,
            free: false,
        }
    }
    pub const fn cube(flops: fn(&CostCtx) -> f64) -> Cost {
        Cost {
            unit: Unit::Cube,
            flops,
            free: false,
        }
    }

    pub fn eval(&self, cx: &CostCtx) -> OpCost {
        OpCost {
            flops: (self.flops)(cx),
            unit: self.unit,
            free: self.free,
        }
    }
}

op_interface!(Cost, "cost");

// ---- fusion ---------------------------------------------------------------

/// TVM's op pattern: how an op's outputs depend on its inputs, which decides
/// what operator fusion may put together. Ordered as TVM orders them: a
/// fused group's pattern is the largest of its ops'.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FusionPattern {
    /// Element `i` of the output reads element `i` of each input. An op
    /// declared elementwise counts as [`FusionPattern::Broadcast`] where its
    /// operands' shapes differ from its result's.
    Elementwise = 0,
    /// One element of each input, at broadcast indices.
    Broadcast = 1,
    /// One input element, anywhere (reshape, transpose, slice, gather).
    Injective = 2,
    /// Many elements of one input (reductions, global pools).
    Reduction = 3,
    /// Many elements, with an elementwise epilogue that fuses (conv, matmul, pools).
    OutElementwiseFusable = 4,
    /// Cannot be fused.
    Opaque = 8,
}

impl FusionPattern {
    /// The `kind` attribute value of a `graph.fused` kernel of this pattern.
    pub fn kind(self) -> Option<&'static str> {
        match self {
            FusionPattern::Elementwise => Some("elementwise"),
            FusionPattern::Broadcast => Some("broadcast"),
            FusionPattern::Injective => Some("injective"),
            FusionPattern::Reduction => Some("reduction"),
            FusionPattern::OutElementwiseFusable => Some("out_elementwise_fusable"),
            FusionPattern::Opaque => None,
        }
    }

    pub fn from_kind(s: &str) -> Option<FusionPattern> {
        [
            FusionPattern::Elementwise,
            FusionPattern::Broadcast,
            FusionPattern::Injective,
            FusionPattern::Reduction,
            FusionPattern::OutElementwiseFusable,
        ]
        .into_iter()
        .find(|p| p.kind() == Some(s))
    }

    /// Whether element `i` of every output reads only element `i` of each
    /// input of the output's own type.
    pub fn is_pointwise(self) -> bool {
        self <= FusionPattern::Broadcast
    }
}

op_interface!(FusionPattern, "fusion");

// ---- engines ----------------------------------------------------------------

/// The compute engines of an Ascend SoC that ge knows without plugins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinEngine {
    AiCore,
    VectorCore,
    Dvpp,
    Hccl,
    AiCpu,
    HostCpu,
}

impl BuiltinEngine {
    pub const ALL: [BuiltinEngine; 6] = [
        BuiltinEngine::AiCore,
        BuiltinEngine::VectorCore,
        BuiltinEngine::Dvpp,
        BuiltinEngine::Hccl,
        BuiltinEngine::AiCpu,
        BuiltinEngine::HostCpu,
    ];

    /// The engine's name (the `engine` attribute, GE's spelling).
    pub fn name(self) -> &'static str {
        match self {
            BuiltinEngine::AiCore => "AICore",
            BuiltinEngine::VectorCore => "VectorCore",
            BuiltinEngine::Dvpp => "DVPP",
            BuiltinEngine::Hccl => "HCCL",
            BuiltinEngine::AiCpu => "AICPU",
            BuiltinEngine::HostCpu => "HostCPU",
        }
    }

    pub fn from_name(s: &str) -> Option<BuiltinEngine> {
        BuiltinEngine::ALL.into_iter().find(|e| e.name() == s)
    }

    /// GE's order when several engines can run an op (higher wins): AICore
    /// before VectorCore before AICPU before HostCPU; DVPP and HCCL only run
    /// what they claim.
    pub fn priority(self) -> i32 {
        match self {
            BuiltinEngine::AiCore => 100,
            BuiltinEngine::VectorCore => 90,
            BuiltinEngine::Dvpp | BuiltinEngine::Hccl => 70,
            BuiltinEngine::AiCpu => 50,
            BuiltinEngine::HostCpu => 10,
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// Which built-in engines can run an op (element types and storage formats
/// are the engine's own limits). Plugin engines claim ops themselves.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct EngineSupport(u8);

impl EngineSupport {
    pub const NONE: EngineSupport = EngineSupport(0);

    pub const fn of(engines: &[BuiltinEngine]) -> EngineSupport {
        let mut bits = 0;
        let mut i = 0;
        while i < engines.len() {
            bits |= engines[i].bit();
            i += 1;
        }
        EngineSupport(bits)
    }

    pub fn contains(self, e: BuiltinEngine) -> bool {
        self.0 & e.bit() != 0
    }

    /// The engines, highest priority first.
    pub fn engines(self) -> Vec<BuiltinEngine> {
        let mut v: Vec<BuiltinEngine> = BuiltinEngine::ALL
            .into_iter()
            .filter(|&e| self.contains(e))
            .collect();
        v.sort_by_key(|e| std::cmp::Reverse(e.priority()));
        v
    }
}

impl std::fmt::Debug for EngineSupport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.engines().into_iter().map(|e| e.name()).collect();
        write!(f, "EngineSupport[{}]", names.join(", "))
    }
}

op_interface!(EngineSupport, "engines");

// ---- precision ----------------------------------------------------------------

/// How mixed precision (ATC's `--precision_mode`) treats an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrecisionClass {
    /// Never converted: structure, casts, calls, constants.
    Never,
    /// Runs in the low type under `allow_mix_precision` (Cube ops).
    White,
    /// Runs in the low type when it reads a low-precision value.
    Gray,
    /// Keeps f32 under `allow_mix_precision` (numerically sensitive).
    Black,
}

op_interface!(PrecisionClass, "precision");

// ---- layout -----------------------------------------------------------------

/// How an op's kernel lays out its data on an AI Core.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// Plain layouts only (ND, NCHW, …).
    Plain,
    /// Computes in whatever format its full-size inputs arrive in (pointwise ops).
    FollowsInputs,
    /// An AICore kernel on blocked storage: the `data` operands and every
    /// result in `format` (NC1HWC0, FRACTAL_NZ), and optionally a weight
    /// operand in its own blocked format.
    Blocked {
        format: Format,
        data: &'static [usize],
        weight: Option<BlockedWeight>,
    },
}

/// A weight operand a blocked kernel reads in a blocked format (convolution
/// filters in FRACTAL_Z), when `when` holds for the op's attributes.
#[derive(Clone, Copy, Debug)]
pub struct BlockedWeight {
    pub operand: usize,
    pub format: Format,
    pub when: fn(AttrDict) -> bool,
}

op_interface!(Layout, "layout");

// ---- runtime kernels ------------------------------------------------------------

/// The native kernel family of the runtime that runs an op. The kernels live
/// in the runtime, whose registry is keyed by [`OpKey`]; an op without this
/// interface runs its reference semantics (the interpreter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelFamily {
    /// Fused elementwise loops (unary, binary with broadcasting, casts, selects).
    Elementwise,
    /// A constant written at load time.
    Constant,
    Conv,
    Gemm,
    MatMul,
    Pool,
    GlobalPool,
    Softmax,
    Norm,
    Reduce,
    /// A byte copy (a reshape of contiguous data).
    Copy,
    Transpose,
    Transdata,
    Concat,
    Split,
    Slice,
    Gather,
    Embedding,
    /// Padding or cropping in every mode.
    Pad,
    /// Element-indexed gathers and scatters (gather_elements, ...).
    Index,
    /// Index of the largest or smallest element (argmax, argmin).
    ArgReduce,
    /// Linear quantisation and dequantisation (runtime/src/kernels/quant.rs).
    Quantize,
    /// Recurrent layers: RNN, GRU, LSTM (runtime/src/kernels/rnn.rs).
    Recurrent,
    /// Bit shifts with broadcasting (runtime/src/kernels/bit_shift.rs).
    Shift,
    /// Rotary position embeddings (runtime/src/kernels/rotary.rs).
    Rotary,
    /// Cumulative scans along an axis (runtime/src/kernels/cumulative.rs).
    Scan,
    /// Integer products of quantised tensors (runtime/src/kernels/qlinear.rs).
    QuantMatMul,
    /// Interpolation at computed points (grid_sample, resize).
    Sample,
    /// Values made from shapes (shape_of, iota).
    Shape,
    /// The k largest or smallest elements along an axis (topk).
    TopK,
    /// softmax(q·kᵀ·scale + mask)·v (scaled_dot_product_attention).
    Attention,
    /// Repetition of the input along its dims (tile).
    Repeat,
    /// An op whose attributes are read from operand values at run time
    /// (`graph.specialize`: the concrete op is built, verified and run on
    /// its own native kernel).
    Specialize,
    /// Fourier transforms, windows and mel filter banks (dft, stft, the
    /// window functions, mel_weight_matrix; runtime/src/kernels/signal.rs).
    Signal,
    /// Dense linear algebra other than products (det; runtime/src/kernels/det.rs).
    Linalg,
    /// Classical machine-learning ops of ONNX: n-gram counting and tree
    /// ensembles (runtime/src/kernels/{tfidf,tree_ensemble}.rs).
    ClassicalMl,
    /// Control flow with regions (graph.if, graph.while, graph.case): the
    /// regions compiled to native programs per concrete shape
    /// (runtime/src/kernels/control_flow.rs).
    ControlFlow,
    /// Random number generation: uniform, normal, Bernoulli and multinomial
    /// draws (runtime/src/kernels/random.rs).
    Random,
}

op_interface!(KernelFamily, "kernel");

// ---- random values ------------------------------------------------------------

/// The set a random op's results lie in (see [`RandomValues`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ValueDomain {
    /// `lo <= x < hi` (a uniform draw; `lo` itself when `hi <= lo`).
    HalfOpen(f64, f64),
    /// Any number but NaN (a normal draw).
    NotNan,
    /// One of these values (a Bernoulli draw: 0 and 1).
    OneOf(Vec<f64>),
}

impl ValueDomain {
    pub fn contains(&self, x: f64) -> bool {
        match self {
            ValueDomain::HalfOpen(lo, hi) if hi <= lo => x == *lo,
            ValueDomain::HalfOpen(lo, hi) => *lo <= x && x < *hi,
            ValueDomain::NotNan => !x.is_nan(),
            ValueDomain::OneOf(v) => v.contains(&x),
        }
    }
}

impl std::fmt::Display for ValueDomain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueDomain::HalfOpen(lo, hi) => write!(f, "[{lo}, {hi})"),
            ValueDomain::NotNan => f.write_str("the numbers (no NaN)"),
            ValueDomain::OneOf(v) => {
                let v: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                write!(f, "{{{}}}", v.join(", "))
            }
        }
    }
}

/// The op draws random values: its results cannot be compared with another
/// implementation's, only checked against the set they lie in, which
/// `domain` gives from the op (its attributes and operand types; `None` when
/// it cannot say). Such an op is not `Pure` — without a seed every run
/// differs — so constant folding, CSE and DCE leave it alone, and the
/// runtime never folds it at load time.
#[derive(Clone, Copy)]
pub struct RandomValues {
    pub domain: fn(&crate::body::Body, crate::body::OpId) -> Option<ValueDomain>,
}

op_interface!(RandomValues, "random");
