//! The kernel registry: which native kernel runs an op, keyed by the op's
//! definition ([`OpKey`]), never by its name (onnxruntime's kernel registry
//! in spirit).
//!
//! An op opts into a native kernel by declaring the `KernelFamily`
//! interface; the entry here builds the kernel's step from the op's typed
//! attributes. `kernel_registry_matches_kernel_families` (in this crate's
//! tests) checks that the two agree op by op, so an op that declares a
//! family without a kernel — or a kernel for an op that declares none — is a
//! test failure, not a silent fallback to the interpreter. A plugin adds a
//! kernel at run time with [`register_kernel`]; such a registration wins.

use super::col2im as col2im_kernel;
use super::control_flow::ControlFlow;
use super::ew::Code;
use super::max_unpool as max_unpool_kernel;
use super::norm::{Norm, RedKind, Reduce};
use super::{
    arg_reduce, attention, batch_norm, bit_shift, cast_e8m0, conv, conv_transpose, cumulative, det,
    gather_elements, geometry, grid_sample, instance_norm, iota, linalg, movement, pad, pool,
    qlinear, quant, random, range, resize, reverse_sequence, rnn, rotary, scatter_elements,
    sequence_mixing, shape_of, signal, specialize, swiglu, tensor_scatter, tfidf, tile, topk,
    tree_ensemble, volume, Kernel, Op,
};
use ge_dialects::data::constant::Constant;
use ge_dialects::data::layout::Transdata;
use ge_dialects::data::movement::{BroadcastTo, Concat, Expand, Slice, Split, Tile, Transpose};
use ge_dialects::data::nms::NonMaxSuppression;
use ge_dialects::data::shape::{Identity, Iota, Reshape, ShapeOf, Squeeze, Unsqueeze};
use ge_dialects::data::size::NonZero;
use ge_dialects::data::unique::Unique;
use ge_dialects::graph::bitwise::{
    BitShift, Bitcast, BitwiseAnd, BitwiseNot, BitwiseOr, BitwiseXor,
};
use ge_dialects::graph::col2im::{Col2Im, Col2ImGeom};
use ge_dialects::graph::control::{Case, If, While};
use ge_dialects::graph::deform_conv::DeformConv2d;
use ge_dialects::graph::det::Det;
use ge_dialects::graph::elementwise::*;
use ge_dialects::graph::geometry::{AffineGrid, CenterCropPad};
use ge_dialects::graph::grid_sample::GridSample;
use ge_dialects::graph::index::{
    Embedding, Gather, GatherElements, Pad, Resize, ScatterElements, Topk,
};
use ge_dialects::graph::kv_cache::TensorScatter;
use ge_dialects::graph::linalg::{BatchMatmul, Gemm, Matmul};
use ge_dialects::graph::max_unpool::{
    argmax_pool3d_attrs, ArgmaxPool, MaxPool2dIndices, MaxPool3dIndices, MaxUnpool, UnpoolAttrs,
};
use ge_dialects::graph::nn::{
    AvgPool2d, BatchNorm, Conv2d, ConvTranspose2d, GlobalAvgPool, GlobalMaxPool, InstanceNorm,
    LayerNorm, LogSoftmax, MaxPool2d, RmsNorm, ScaledDotProductAttention, Softmax,
};
use ge_dialects::graph::nn3d::{AvgPool3d, Conv3d, ConvTranspose3d, MaxPool3d};
use ge_dialects::graph::qlinear::{ConvInteger, MatmulInteger, QlinearConv, QlinearMatmul};
use ge_dialects::graph::quant::{DequantizeLinear, QuantizeLinear};
use ge_dialects::graph::random::{Bernoulli, Dropout, Multinomial, RandomNormal, RandomUniform};
use ge_dialects::graph::range::Range;
use ge_dialects::graph::reduce::{
    Argmax, Argmin, ReduceMax, ReduceMean, ReduceMin, ReduceProd, ReduceSum,
};
use ge_dialects::graph::reverse_sequence::ReverseSequence;
use ge_dialects::graph::rnn::{Gru, Lstm, Rnn};
use ge_dialects::graph::roi_align::RoiAlign;
use ge_dialects::graph::rotary::RotaryEmbedding;
use ge_dialects::graph::scan::{Cumprod, Cumsum};
use ge_dialects::graph::sequence_mixing::{CausalConvWithState, LinearAttention};
use ge_dialects::graph::signal::{
    BlackmanWindow, Dft, DftParams, HammingWindow, HannWindow, MelParams, MelWeightMatrix, Stft,
    StftParams, Window,
};
use ge_dialects::graph::specialize::Specialize;
use ge_dialects::graph::swiglu::Swiglu;
use ge_dialects::graph::tfidf::{TfIdfParams, TfidfVectorizer};
use ge_dialects::graph::tree_ensemble::{TreeEnsemble, TreeParams};
use ge_dialects::graph::trig::{Acos, Asin, Atan};
use ge_ir::body::{Body, OpId};
use ge_ir::interfaces::OpKey;
use ge_ir::opdef::OpDef;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

/// What runs an op natively.
pub enum Native {
    /// An instruction of a fused elementwise loop.
    Ew(Code),
    /// A step of its own.
    Step(Op),
    /// A constant, written at load time.
    Constant,
}

/// Builds the native kernel of op `o` from its attributes; `None` when this
/// instance is outside what the kernel handles (the interpreter runs it).
pub type MakeKernel = fn(&Body, OpId) -> Option<Native>;

fn ew(c: Code) -> Option<Native> {
    Some(Native::Ew(c))
}

fn step(op: Op) -> Option<Native> {
    Some(Native::Step(op))
}

/// A step running a kernel of its own file.
fn kernel(k: impl Kernel + 'static) -> Option<Native> {
    step(Op::Kernel(std::sync::Arc::new(k)))
}

/// A reduction kernel of op `$op` reducing with `$kind`.
macro_rules! reduce {
    ($op:ident, $kind:expr) => {
        (
            $op::DEF,
            (|b, o| {
                let a = $op::attrs(b.op(o));
                step(Op::Reduce(Reduce {
                    kind: $kind,
                    axes: a.axes(),
                    noop_empty: a.noop_with_empty_axes() != 0,
                }))
            }) as MakeKernel,
        )
    };
}

/// A unary or binary elementwise op without attributes.
macro_rules! ew_ops {
    ($($op:ident => $code:expr),* $(,)?) => {
        [$(($op::DEF, (|_, _| ew($code)) as MakeKernel)),*]
    };
}

/// The kernels compiled into ge.
// long: a table, one entry per op kernel (helpers adding kernels add lines);
// cut into pieces it would no longer read as one list.
fn builtin() -> Vec<(&'static OpDef, MakeKernel)> {
    let mut v: Vec<(&'static OpDef, MakeKernel)> = ew_ops![
        Neg => Code::Neg, Abs => Code::Abs, Exp => Code::Exp, Log => Code::Log,
        Sqrt => Code::Sqrt, Rsqrt => Code::Rsqrt, Reciprocal => Code::Recip,
        Relu => Code::Relu, Sigmoid => Code::Sigmoid, Tanh => Code::Tanh,
        Silu => Code::Silu, Erf => Code::Erf, Floor => Code::Floor, Ceil => Code::Ceil,
        Round => Code::Round, Sign => Code::Sign, Sin => Code::Sin, Cos => Code::Cos,
        Square => Code::Square, Asin => Code::Asin, Acos => Code::Acos, Atan => Code::Atan,
        HardSwish => Code::HardSwish,
        BitwiseAnd => Code::BitAnd, BitwiseOr => Code::BitOr, BitwiseXor => Code::BitXor,
        BitwiseNot => Code::BitNot,
        Add => Code::Add, Sub => Code::Sub, Mul => Code::Mul, Div => Code::Div,
        Pow => Code::Pow, Max => Code::Max, Min => Code::Min,
        Equal => Code::Eq, Less => Code::Lt, Greater => Code::Gt,
        LessEqual => Code::Le, GreaterEqual => Code::Ge,
        And => Code::And, Or => Code::Or, Xor => Code::Xor, Not => Code::Not,
        Where => Code::Where,
        Identity => Code::Identity, BroadcastTo => Code::Identity, Expand => Code::Identity,
    ]
    .to_vec();
    v.extend([
        (
            LeakyRelu::DEF,
            (|b, o| ew(Code::LeakyRelu(LeakyRelu::attrs(b.op(o)).alpha() as f32))) as MakeKernel,
        ),
        (Cast::DEF, |b, o| {
            match cast_rounding(&Cast::attrs(b.op(o))).ok()? {
                Some((mode, saturate)) => kernel(cast_e8m0::CastE8m0 { mode, saturate }),
                None => ew(Code::Cast),
            }
        }),
        (Gelu::DEF, |b, o| {
            ew(match Gelu::attrs(b.op(o)).approximate() {
                "tanh" => Code::GeluTanh,
                _ => Code::Gelu,
            })
        }),
        (Mod::DEF, |b, o| {
            ew(Code::Mod(Mod::attrs(b.op(o)).fmod() != 0))
        }),
        (Clip::DEF, |b, o| {
            let c = Clip::matches(b, o)?;
            ew(Code::Clip(c.min().is_some(), c.max().is_some()))
        }),
        (Constant::DEF, |_, _| Some(Native::Constant)),
        (Specialize::DEF, |b, o| {
            kernel(specialize::Specialize::from_op(b, o)?)
        }),
        (If::DEF, |b, o| kernel(ControlFlow::from_op(b, o)?)),
        (Case::DEF, |b, o| kernel(ControlFlow::from_op(b, o)?)),
        (While::DEF, |b, o| kernel(ControlFlow::from_op(b, o)?)),
        (Conv2d::DEF, |b, o| {
            conv::Conv::from_op(b, o).map(|c| Native::Step(Op::Conv(c)))
        }),
        (Gemm::DEF, |b, o| {
            step(Op::Gemm(linalg::Gemm::from_op(b, o)))
        }),
        (Matmul::DEF, |_, _| {
            step(Op::MatMul(linalg::MatMul::new(false, false)))
        }),
        (BatchMatmul::DEF, |b, o| {
            let a = BatchMatmul::attrs(b.op(o));
            step(Op::MatMul(linalg::MatMul::new(
                a.transpose_a(),
                a.transpose_b(),
            )))
        }),
        (MaxPool2d::DEF, |b, o| {
            step(Op::Pool(pool::Pool::max(MaxPool2d::attrs(b.op(o)))))
        }),
        (AvgPool2d::DEF, |b, o| {
            step(Op::Pool(pool::Pool::avg(AvgPool2d::attrs(b.op(o)))))
        }),
        (GlobalAvgPool::DEF, |_, _| {
            step(Op::GlobalPool { max: false })
        }),
        (GlobalMaxPool::DEF, |_, _| {
            step(Op::GlobalPool { max: true })
        }),
        (Softmax::DEF, |b, o| {
            step(Op::Softmax {
                axis: Softmax::attrs(b.op(o)).axis(),
                log: false,
            })
        }),
        (LogSoftmax::DEF, |b, o| {
            step(Op::Softmax {
                axis: LogSoftmax::attrs(b.op(o)).axis(),
                log: true,
            })
        }),
        (LayerNorm::DEF, |b, o| {
            let a = LayerNorm::attrs(b.op(o));
            step(Op::Norm(Norm {
                axis: a.axis(),
                eps: a.epsilon() as f32,
                rms: false,
            }))
        }),
        (RmsNorm::DEF, |b, o| {
            let a = RmsNorm::attrs(b.op(o));
            step(Op::Norm(Norm {
                axis: a.axis(),
                eps: a.epsilon() as f32,
                rms: true,
            }))
        }),
        reduce!(ReduceSum, RedKind::Sum),
        reduce!(ReduceMean, RedKind::Mean),
        reduce!(ReduceMax, RedKind::Max),
        reduce!(ReduceMin, RedKind::Min),
        reduce!(ReduceProd, RedKind::Prod),
        (Reshape::DEF, |_, _| step(Op::Copy)),
        (Squeeze::DEF, |_, _| step(Op::Copy)),
        (Unsqueeze::DEF, |_, _| step(Op::Copy)),
        (Transpose::DEF, |b, o| {
            let rank = b
                .value_type(*b.op(o).operands().first()?)
                .as_tensor()
                .and_then(|t| t.rank())
                .unwrap_or(0);
            let perm = Transpose::attrs(b.op(o))
                .perm()
                .map(|p| p.into_iter().map(|x| x.max(0) as usize).collect())
                .unwrap_or_else(|| (0..rank).rev().collect());
            step(Op::Transpose(perm))
        }),
        (Transdata::DEF, |b, o| {
            movement::Transdata::from_op(b, o).map(|t| Native::Step(Op::Transdata(t)))
        }),
        (Concat::DEF, |b, o| {
            step(Op::Concat(Concat::attrs(b.op(o)).axis().unwrap_or(0)))
        }),
        (Split::DEF, |b, o| {
            step(Op::Split(Split::attrs(b.op(o)).axis()))
        }),
        (Slice::DEF, |b, o| {
            step(Op::Slice(movement::Slice::from_op(b, o)))
        }),
        (Gather::DEF, |b, o| {
            step(Op::Gather(Gather::attrs(b.op(o)).axis()))
        }),
        (Embedding::DEF, |_, _| step(Op::Embedding)),
        (BatchNorm::DEF, |b, o| {
            let eps = BatchNorm::attrs(b.op(o)).epsilon() as f32;
            kernel(batch_norm::BatchNorm { eps, relu: false })
        }),
        (Pad::DEF, |b, o| kernel(pad::Pad::from_op(b, o)?)),
        (InstanceNorm::DEF, |b, o| {
            let eps = InstanceNorm::attrs(b.op(o)).epsilon();
            kernel(instance_norm::InstanceNorm { eps })
        }),
        (GatherElements::DEF, |b, o| {
            let axis = GatherElements::attrs(b.op(o)).axis();
            kernel(gather_elements::GatherElements { axis })
        }),
        (ScatterElements::DEF, |b, o| {
            let a = ScatterElements::attrs(b.op(o));
            kernel(scatter_elements::ScatterElements {
                axis: a.axis(),
                reduction: scatter_elements::Reduction::from_name(a.reduction())?,
            })
        }),
        (Argmax::DEF, |b, o| {
            let a = Argmax::attrs(b.op(o));
            kernel(arg_reduce::ArgReduce {
                max: true,
                axis: a.axis(),
                last: a.select_last_index() != 0,
            })
        }),
        (Argmin::DEF, |b, o| {
            let a = Argmin::attrs(b.op(o));
            kernel(arg_reduce::ArgReduce {
                max: false,
                axis: a.axis(),
                last: a.select_last_index() != 0,
            })
        }),
        (QuantizeLinear::DEF, |b, o| {
            kernel(quant::Quant::quantize(b, o))
        }),
        (DequantizeLinear::DEF, |b, o| {
            kernel(quant::Quant::dequantize(b, o))
        }),
        (MatmulInteger::DEF, |_, _| {
            kernel(qlinear::QMatMul { requantize: false })
        }),
        (QlinearMatmul::DEF, |_, _| {
            kernel(qlinear::QMatMul { requantize: true })
        }),
        (ConvInteger::DEF, |b, o| {
            kernel(qlinear::QConv::conv_integer(b, o))
        }),
        (QlinearConv::DEF, |b, o| {
            kernel(qlinear::QConv::qlinear_conv(b, o))
        }),
        (Rnn::DEF, |b, o| kernel(rnn::Recurrent::from_op(b, o)?)),
        (Gru::DEF, |b, o| kernel(rnn::Recurrent::from_op(b, o)?)),
        (Lstm::DEF, |b, o| kernel(rnn::Recurrent::from_op(b, o)?)),
        (RotaryEmbedding::DEF, |b, o| {
            kernel(rotary::Rotary::from_op(b, o)?)
        }),
        (Bitcast::DEF, |_, _| step(Op::Copy)),
        (LinearAttention::DEF, |b, o| {
            kernel(sequence_mixing::LinearAttention::from_op(b, o)?)
        }),
        (CausalConvWithState::DEF, |b, o| {
            kernel(sequence_mixing::CausalConv::from_op(b, o)?)
        }),
        (Swiglu::DEF, |b, o| {
            let alpha = Swiglu::attrs(b.op(o)).alpha();
            kernel(swiglu::Swiglu { alpha })
        }),
        (TensorScatter::DEF, |b, o| {
            let a = TensorScatter::attrs(b.op(o));
            kernel(tensor_scatter::TensorScatter {
                axis: a.axis(),
                mode: a.mode().to_string(),
            })
        }),
        (CenterCropPad::DEF, |_, _| kernel(geometry::CenterCropPad)),
        (Det::DEF, |_, _| kernel(det::Det)),
        (RandomUniform::DEF, |b, o| {
            let a = RandomUniform::attrs(b.op(o));
            let draw = random::Draw::Uniform {
                low: a.low(),
                high: a.high(),
            };
            kernel(random::Random {
                draw,
                seed: a.seed(),
            })
        }),
        (RandomNormal::DEF, |b, o| {
            let a = RandomNormal::attrs(b.op(o));
            let draw = random::Draw::Normal {
                mean: a.mean(),
                scale: a.scale(),
            };
            kernel(random::Random {
                draw,
                seed: a.seed(),
            })
        }),
        (Bernoulli::DEF, |b, o| {
            let seed = Bernoulli::attrs(b.op(o)).seed();
            kernel(random::Random {
                draw: random::Draw::Bernoulli,
                seed,
            })
        }),
        (Multinomial::DEF, |b, o| {
            let a = Multinomial::attrs(b.op(o));
            let draw = random::Draw::Multinomial {
                samples: usize::try_from(a.sample_size()).ok()?,
            };
            kernel(random::Random {
                draw,
                seed: a.seed(),
            })
        }),
        (Dropout::DEF, |b, o| {
            let seed = Dropout::attrs(b.op(o)).seed();
            kernel(random::Dropout { seed })
        }),
        (TfidfVectorizer::DEF, |b, o| {
            let params = TfIdfParams::of(b.op(o)).ok()?;
            kernel(tfidf::TfIdf { params })
        }),
        (TreeEnsemble::DEF, |b, o| {
            let params = TreeParams::of(b.op(o)).ok()?;
            kernel(tree_ensemble::TreeEnsemble { params })
        }),
        (ReverseSequence::DEF, |b, o| {
            let a = ReverseSequence::attrs(b.op(o));
            kernel(reverse_sequence::ReverseSequence {
                batch_axis: a.batch_axis(),
                time_axis: a.time_axis(),
            })
        }),
        (AffineGrid::DEF, |b, o| {
            let a = AffineGrid::attrs(b.op(o));
            kernel(geometry::AffineGrid {
                size: a.size()?,
                align: a.align_corners() != 0,
            })
        }),
        (Col2Im::DEF, |b, o| {
            let geom = Col2ImGeom::of(Col2Im::attrs(b.op(o))).ok()?;
            kernel(col2im_kernel::Col2Im { geom })
        }),
        (MaxPool2dIndices::DEF, |b, o| {
            let (attrs, column_major) = ArgmaxPool::attrs(MaxPool2dIndices::attrs(b.op(o))).ok()?;
            kernel(max_unpool_kernel::MaxPoolIndices {
                attrs,
                column_major,
            })
        }),
        (MaxPool3dIndices::DEF, |b, o| {
            let (window, column_major) =
                argmax_pool3d_attrs(MaxPool3dIndices::attrs(b.op(o))).ok()?;
            kernel(max_unpool_kernel::MaxPool3dIndices {
                window,
                column_major,
            })
        }),
        (MaxUnpool::DEF, |b, o| {
            let attrs = UnpoolAttrs::of(MaxUnpool::attrs(b.op(o))).ok()?;
            kernel(max_unpool_kernel::MaxUnpool { attrs })
        }),
        (Dft::DEF, |b, o| {
            let params = DftParams::of(b.op(o)).ok()?;
            kernel(signal::Dft { params })
        }),
        (Stft::DEF, |b, o| {
            let params = StftParams::of(b.op(o)).ok()?;
            kernel(signal::Stft { params })
        }),
        (HannWindow::DEF, |b, o| {
            let (size, periodic, _) = HannWindow::params(b.op(o)).ok()?;
            kernel(signal::Window {
                kind: Window::Hann,
                size,
                periodic,
            })
        }),
        (HammingWindow::DEF, |b, o| {
            let (size, periodic, _) = HammingWindow::params(b.op(o)).ok()?;
            kernel(signal::Window {
                kind: Window::Hamming,
                size,
                periodic,
            })
        }),
        (BlackmanWindow::DEF, |b, o| {
            let (size, periodic, _) = BlackmanWindow::params(b.op(o)).ok()?;
            kernel(signal::Window {
                kind: Window::Blackman,
                size,
                periodic,
            })
        }),
        (MelWeightMatrix::DEF, |b, o| {
            let params = MelParams::of(b.op(o)).ok()?;
            kernel(signal::Mel { params })
        }),
        (Cumprod::DEF, |b, o| {
            kernel(cumulative::Cumulative::cumprod(b, o))
        }),
        (Cumsum::DEF, |b, o| {
            kernel(cumulative::Cumulative::cumsum(b, o))
        }),
        (BitShift::DEF, |b, o| {
            kernel(bit_shift::BitShift::from_op(b, o))
        }),
        (Conv3d::DEF, |b, o| kernel(volume::Conv3d::from_op(b, o)?)),
        (MaxPool3d::DEF, |b, o| {
            kernel(volume::Pool3d::from_op(b, o, false)?)
        }),
        (AvgPool3d::DEF, |b, o| {
            kernel(volume::Pool3d::from_op(b, o, true)?)
        }),
        (GridSample::DEF, |b, o| {
            let a = GridSample::attrs(b.op(o));
            kernel(grid_sample::GridSample {
                sampler: ge_dialects::graph::grid_sample::Sampler::new(
                    a.mode(),
                    a.padding_mode(),
                    a.align_corners() != 0,
                ),
            })
        }),
        (ConvTranspose2d::DEF, |b, o| {
            kernel(conv_transpose::ConvTranspose::from_op(b, o)?)
        }),
        (ConvTranspose3d::DEF, |b, o| {
            kernel(conv_transpose::ConvTranspose3::from_op(b, o)?)
        }),
        (DeformConv2d::DEF, |b, o| {
            kernel(super::deform_conv::DeformConv::from_op(b, o)?)
        }),
        (RoiAlign::DEF, |b, o| {
            kernel(super::roi_align::RoiAlign::from_op(b, o)?)
        }),
        (Tile::DEF, |_, _| kernel(tile::Tile)),
        (ShapeOf::DEF, |_, _| kernel(shape_of::ShapeOf)),
        (NonZero::DEF, |_, _| kernel(super::nonzero::NonZero)),
        (Unique::DEF, |b, o| {
            let a = Unique::attrs(b.op(o));
            kernel(super::unique::Unique {
                axis: a.axis(),
                sorted: a.sorted() != 0,
            })
        }),
        (NonMaxSuppression::DEF, |b, o| {
            let a = NonMaxSuppression::attrs(b.op(o));
            kernel(super::nms::Nms {
                center_point_box: a.center_point_box() != 0,
            })
        }),
        (Iota::DEF, |b, o| {
            let a = Iota::attrs(b.op(o));
            kernel(iota::Iota {
                start: a.start(),
                delta: a.delta(),
            })
        }),
        (Range::DEF, |b, o| {
            let a = Range::attrs(b.op(o));
            kernel(range::Range {
                start: a.start(),
                limit: a.limit()?,
                delta: a.delta(),
            })
        }),
        (Topk::DEF, |b, o| {
            let a = Topk::attrs(b.op(o));
            kernel(topk::TopK {
                axis: a.axis(),
                largest: a.largest() != 0,
            })
        }),
        (Resize::DEF, |b, o| kernel(resize::Resize::from_op(b, o)?)),
        (ScaledDotProductAttention::DEF, |b, o| {
            let a = ScaledDotProductAttention::attrs(b.op(o));
            kernel(attention::Attention {
                scale: a.scale(),
                causal: a.causal(),
            })
        }),
    ]);
    v
}

fn table() -> &'static RwLock<HashMap<OpKey, MakeKernel>> {
    static TABLE: OnceLock<RwLock<HashMap<OpKey, MakeKernel>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        RwLock::new(
            builtin()
                .into_iter()
                .map(|(def, make)| (def.key(), make))
                .collect(),
        )
    })
}

/// Register (or replace) the native kernel of op `def` at run time.
pub fn register_kernel(def: &'static OpDef, make: MakeKernel) {
    if let Ok(mut t) = table().write() {
        t.insert(def.key(), make);
    }
}

/// The native kernel builder of op `def`, if it has one.
pub fn kernel_of(def: &'static OpDef) -> Option<MakeKernel> {
    table().read().ok()?.get(&def.key()).copied()
}

/// The ops with a native kernel, by name.
pub fn kernel_ops() -> Vec<&'static OpDef> {
    let mut v: Vec<&'static OpDef> = table()
        .read()
        .map(|t| t.keys().map(|k| k.def()).collect())
        .unwrap_or_default();
    v.sort_by_key(|d| d.name);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use ge_ir::interfaces::KernelFamily;

    /// Every op that declares a kernel family has a kernel here, and every
    /// kernel here belongs to an op that declares one. (Fails when an entry
    /// is removed from `builtin` — tried once with `Embedding`.)
    #[test]
    fn kernel_registry_matches_kernel_families() {
        let ctx = ge_dialects::context();
        let mut bad = vec![];
        for d in ctx.ops() {
            let declared = d.interface::<KernelFamily>().is_some();
            let registered = kernel_of(d).is_some();
            if declared != registered {
                bad.push(format!(
                    "{}: declares a kernel family: {declared}, has a kernel: {registered}",
                    d.name
                ));
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}
