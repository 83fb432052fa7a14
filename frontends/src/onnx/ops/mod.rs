//! The ONNX op table: one mapping function per ONNX op, grouped by family.
//! A mapping function gets the node (inputs resolved, attributes with
//! accessors taking the ONNX defaults) and returns the values of its outputs.
//! To support a new op, add its function to a family file and one line here.

mod col2im;
pub(crate) mod control;
mod deform_conv;
mod det;
mod einsum;
mod elementwise;
mod geometry;
mod kv_cache;
mod legacy;
mod max_unpool;
mod ml;
mod nd;
mod nn;
mod quant;
mod random;
mod reduce;
mod resize;
mod reverse_sequence;
mod rnn;
mod roi_align;
mod sequence_mixing;
mod shape;
mod signal;
mod size;
mod swiglu;
mod tfidf;

use super::graph::{Cx, Node, Res};
use crate::error::ImportError;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

/// Input `i` when it is present and known only at run time: neither a
/// constant nor dims tracked symbolically (hybrid execution: the op becomes
/// a `graph.specialize`, see [`Cx::specialize`]).
pub fn run_time(cx: &Cx, n: &Node, i: usize) -> Option<ValueId> {
    n.opt_input(i)
        .filter(|v| !cx.is_const(*v) && !cx.sym.contains_key(v))
}

/// A mapping function: node in, output values out.
pub type MapFn = fn(&mut Cx, &Node) -> Res<Vec<ValueId>>;

/// Every supported ONNX (default domain) op and its mapping function.
pub static TABLE: &[(&str, MapFn)] = &[
    // elementwise.rs
    ("Abs", elementwise::abs),
    ("Acos", elementwise::acos),
    ("Acosh", elementwise::acosh),
    ("Add", elementwise::add),
    ("And", elementwise::and),
    ("Asin", elementwise::asin),
    ("Asinh", elementwise::asinh),
    ("Atan", elementwise::atan),
    ("Atanh", elementwise::atanh),
    ("BitCast", elementwise::bit_cast),
    ("BitShift", elementwise::bit_shift),
    ("BitwiseAnd", elementwise::bitwise_and),
    ("BitwiseNot", elementwise::bitwise_not),
    ("BitwiseOr", elementwise::bitwise_or),
    ("BitwiseXor", elementwise::bitwise_xor),
    ("Cast", elementwise::cast),
    ("CastLike", elementwise::cast_like),
    // quant.rs
    ("ConvInteger", quant::conv_integer),
    ("DequantizeLinear", quant::dequantize_linear),
    ("DynamicQuantizeLinear", quant::dynamic_quantize_linear),
    ("MatMulInteger", quant::matmul_integer),
    ("QLinearConv", quant::qlinear_conv),
    ("QLinearMatMul", quant::qlinear_matmul),
    ("QuantizeLinear", quant::quantize_linear),
    ("Ceil", elementwise::ceil),
    ("Celu", elementwise::celu),
    ("Clip", elementwise::clip),
    ("Cos", elementwise::cos),
    ("Cosh", elementwise::cosh),
    ("Div", elementwise::div),
    ("Elu", elementwise::elu),
    ("Equal", elementwise::equal),
    ("Erf", elementwise::erf),
    ("Exp", elementwise::exp),
    ("Floor", elementwise::floor),
    ("Gelu", elementwise::gelu),
    ("Greater", elementwise::greater),
    ("GreaterOrEqual", elementwise::greater_or_equal),
    ("HardSigmoid", elementwise::hard_sigmoid),
    ("HardSwish", elementwise::hard_swish),
    ("Identity", elementwise::identity),
    ("IsInf", elementwise::is_inf),
    ("IsNaN", elementwise::is_nan),
    ("LeakyRelu", elementwise::leaky_relu),
    ("Less", elementwise::less),
    ("LessOrEqual", elementwise::less_or_equal),
    ("Log", elementwise::log),
    ("Max", elementwise::max),
    ("Mean", elementwise::mean),
    ("Min", elementwise::min),
    ("Mish", elementwise::mish),
    ("Mod", elementwise::mod_),
    ("Mul", elementwise::mul),
    ("Neg", elementwise::neg),
    ("Not", elementwise::not),
    ("Or", elementwise::or),
    ("Pow", elementwise::pow),
    ("PRelu", elementwise::prelu),
    ("Reciprocal", elementwise::reciprocal),
    ("Relu", elementwise::relu),
    ("Round", elementwise::round),
    ("Selu", elementwise::selu),
    ("Shrink", elementwise::shrink),
    ("Sigmoid", elementwise::sigmoid),
    ("Sign", elementwise::sign),
    ("Sin", elementwise::sin),
    ("Sinh", elementwise::sinh),
    ("Softplus", elementwise::softplus),
    ("Softsign", elementwise::softsign),
    ("Sqrt", elementwise::sqrt),
    ("Sub", elementwise::sub),
    ("Sum", elementwise::sum),
    ("Swish", elementwise::swish),
    ("Tan", elementwise::tan),
    ("Tanh", elementwise::tanh),
    ("ThresholdedRelu", elementwise::thresholded_relu),
    ("Where", elementwise::where_),
    ("Xor", elementwise::xor),
    // einsum.rs
    ("Einsum", einsum::einsum),
    // nn.rs
    ("Attention", nn::attention),
    ("AveragePool", nn::average_pool),
    ("BatchNormalization", nn::batch_normalization),
    ("Conv", nn::conv),
    ("ConvTranspose", nn::conv_transpose),
    ("Dropout", nn::dropout),
    ("Gemm", nn::gemm),
    ("GlobalAveragePool", nn::global_average_pool),
    ("GlobalMaxPool", nn::global_max_pool),
    ("GroupNormalization", nn::group_normalization),
    ("Hardmax", nn::hardmax),
    ("InstanceNormalization", nn::instance_normalization),
    ("LayerNormalization", nn::layer_normalization),
    ("LogSoftmax", nn::log_softmax),
    ("LpNormalization", nn::lp_normalization),
    ("LpPool", nn::lp_pool),
    ("LRN", nn::lrn),
    ("MatMul", nn::matmul),
    ("MaxPool", nn::max_pool),
    ("MeanVarianceNormalization", nn::mean_variance_normalization),
    (
        "NegativeLogLikelihoodLoss",
        nn::negative_log_likelihood_loss,
    ),
    ("RMSNormalization", nn::rms_normalization),
    ("RotaryEmbedding", nn::rotary_embedding),
    ("Softmax", nn::softmax),
    ("SoftmaxCrossEntropyLoss", nn::softmax_cross_entropy_loss),
    // rnn.rs
    ("GRU", rnn::gru),
    ("LSTM", rnn::lstm),
    ("RNN", rnn::rnn),
    // reduce.rs
    ("ArgMax", reduce::arg_max),
    ("ArgMin", reduce::arg_min),
    ("CumProd", reduce::cum_prod),
    ("CumSum", reduce::cum_sum),
    ("ReduceL1", reduce::reduce_l1),
    ("ReduceL2", reduce::reduce_l2),
    ("ReduceLogSum", reduce::reduce_log_sum),
    ("ReduceLogSumExp", reduce::reduce_log_sum_exp),
    ("ReduceMax", reduce::reduce_max),
    ("ReduceMean", reduce::reduce_mean),
    ("ReduceMin", reduce::reduce_min),
    ("ReduceProd", reduce::reduce_prod),
    ("ReduceSum", reduce::reduce_sum),
    ("ReduceSumSquare", reduce::reduce_sum_square),
    // shape.rs
    ("Compress", shape::compress),
    ("Concat", shape::concat),
    ("Constant", shape::constant),
    ("ConstantOfShape", shape::constant_of_shape),
    ("DepthToSpace", shape::depth_to_space),
    ("Expand", shape::expand),
    ("EyeLike", shape::eye_like),
    ("Flatten", shape::flatten),
    ("Gather", shape::gather),
    ("GatherElements", shape::gather_elements),
    ("GatherND", nd::gather_nd),
    ("GridSample", shape::grid_sample),
    ("NonZero", shape::non_zero),
    ("OneHot", shape::one_hot),
    ("Pad", shape::pad),
    ("Range", shape::range),
    ("Reshape", shape::reshape),
    ("Resize", resize::resize),
    ("Scatter", shape::scatter_elements),
    ("ScatterElements", shape::scatter_elements),
    ("ScatterND", nd::scatter_nd),
    ("Shape", shape::shape),
    ("Size", shape::size),
    ("Slice", shape::slice),
    ("SpaceToDepth", shape::space_to_depth),
    ("Split", shape::split),
    ("Squeeze", shape::squeeze),
    ("Tile", shape::tile),
    ("TopK", shape::top_k),
    ("Transpose", shape::transpose),
    ("Trilu", shape::trilu),
    ("Unsqueeze", shape::unsqueeze),
    // size.rs (data-dependent output sizes)
    ("NonMaxSuppression", size::non_max_suppression),
    ("Unique", size::unique),
    ("Upsample", resize::upsample),
    // control.rs
    ("If", control::if_),
    ("Loop", control::loop_),
    ("Scan", control::scan),
    // signal.rs
    ("BlackmanWindow", signal::blackman_window),
    ("DFT", signal::dft),
    ("HammingWindow", signal::hamming_window),
    ("HannWindow", signal::hann_window),
    ("MelWeightMatrix", signal::mel_weight_matrix),
    ("STFT", signal::stft),
    // sequence_mixing.rs, swiglu.rs, kv_cache.rs (transformer-era ops, opsets 24-28)
    (
        "CausalConvWithState",
        sequence_mixing::causal_conv_with_state,
    ),
    ("LinearAttention", sequence_mixing::linear_attention),
    ("SwiGLU", swiglu::swiglu),
    ("TensorScatter", kv_cache::tensor_scatter),
    // geometry.rs
    ("AffineGrid", geometry::affine_grid),
    ("CenterCropPad", geometry::center_crop_pad),
    // det.rs
    ("Det", det::det),
    // reverse_sequence.rs
    ("ReverseSequence", reverse_sequence::reverse_sequence),
    // tfidf.rs
    ("TfIdfVectorizer", tfidf::tfidf_vectorizer),
    // col2im.rs
    ("Col2Im", col2im::col2im),
    // max_unpool.rs (MaxPool is nn.rs's; with Indices it calls max_unpool.rs)
    ("MaxUnpool", max_unpool::max_unpool),
    // random.rs
    ("Bernoulli", random::bernoulli),
    ("Multinomial", random::multinomial),
    ("RandomNormal", random::random_normal),
    ("RandomNormalLike", random::random_normal_like),
    ("RandomUniform", random::random_uniform),
    ("RandomUniformLike", random::random_uniform_like),
    // deform_conv.rs, roi_align.rs
    ("DeformConv", deform_conv::deform_conv),
    ("RoiAlign", roi_align::roi_align),
];

/// The ops of the `ai.onnx.ml` domain with tensor semantics (ml.rs).
pub static ML_TABLE: &[(&str, MapFn)] = &[
    ("ArrayFeatureExtractor", ml::array_feature_extractor),
    ("Binarizer", ml::binarizer),
    ("TreeEnsemble", ml::tree_ensemble),
];

/// The mapping function of an op of `domain` (normalised: `""` is ai.onnx).
pub fn lookup_in(domain: &str, op: &str) -> Option<MapFn> {
    let table = match domain {
        "" => TABLE,
        "ai.onnx.ml" => ML_TABLE,
        _ => return None,
    };
    table.iter().find(|(n, _)| *n == op).map(|(_, f)| *f)
}

// ---- helpers shared by the families ------------------------------------------

pub(crate) fn one(v: ValueId) -> Res<Vec<ValueId>> {
    Ok(vec![v])
}

pub(crate) fn fattr(x: f64) -> Attribute {
    Attribute::f32(x as f32)
}

pub(crate) fn unsupported(n: &Node, what: impl std::fmt::Display) -> ImportError {
    ImportError::unsupported(format!("{} {what} is not supported", n.op_type))
}

pub(crate) fn invalid(n: &Node, what: impl std::fmt::Display) -> ImportError {
    ImportError::invalid(format!("{}: {what}", n.op_type))
}

/// Resolve an axis in `[-rank, rank)`.
pub(crate) fn norm_axis(n: &Node, axis: i64, rank: usize) -> Res<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(invalid(
            n,
            format!("axis {axis} is out of range for rank {rank}"),
        ));
    }
    Ok((if axis < 0 { axis + r } else { axis }) as usize)
}

/// A rank-0 constant with `v`'s element type.
pub(crate) fn scalar_like(cx: &mut Cx, v: ValueId, x: f64) -> Res<ValueId> {
    let dt = cx.e.dtype(v)?;
    Ok(cx.e.scalar(dt, x)?)
}

pub(crate) fn op1(cx: &mut Cx, name: &str, x: ValueId) -> Res<ValueId> {
    Ok(cx.e.op(name, &[x], vec![])?)
}

pub(crate) fn op2(cx: &mut Cx, name: &str, x: ValueId, y: ValueId) -> Res<ValueId> {
    Ok(cx.e.op(name, &[x, y], vec![])?)
}

pub(crate) fn reshape(cx: &mut Cx, x: ValueId, shape: &[i64]) -> Res<ValueId> {
    Ok(cx.e.op(
        "data.reshape",
        &[x],
        vec![("shape", Attribute::i64_array(shape))],
    )?)
}

pub(crate) fn transpose(cx: &mut Cx, x: ValueId, perm: &[i64]) -> Res<ValueId> {
    Ok(cx.e.op(
        "data.transpose",
        &[x],
        vec![("perm", Attribute::i64_array(perm))],
    )?)
}

pub(crate) fn cast(cx: &mut Cx, x: ValueId, to: DType) -> Res<ValueId> {
    if cx.e.dtype(x)? == to {
        return Ok(x);
    }
    Ok(cx.e.op(
        "graph.cast",
        &[x],
        vec![("to", Attribute::ty(ge_ir::Type::scalar(to)))],
    )?)
}

pub(crate) fn unsqueeze(cx: &mut Cx, x: ValueId, axes: &[i64]) -> Res<ValueId> {
    Ok(cx.e.op(
        "data.unsqueeze",
        &[x],
        vec![("axes", Attribute::i64_array(axes))],
    )?)
}

pub(crate) fn squeeze(cx: &mut Cx, x: ValueId, axes: &[i64]) -> Res<ValueId> {
    Ok(cx.e.op(
        "data.squeeze",
        &[x],
        vec![("axes", Attribute::i64_array(axes))],
    )?)
}

/// A reduction op over `axes` (all when empty).
pub(crate) fn reduce(
    cx: &mut Cx,
    name: &str,
    x: ValueId,
    axes: &[i64],
    keepdims: bool,
) -> Res<ValueId> {
    Ok(cx.e.op(
        name,
        &[x],
        vec![
            ("axes", Attribute::i64_array(axes)),
            ("keepdims", Attribute::i64(keepdims as i64)),
        ],
    )?)
}

/// A constant tensor of `dtype` from f64 values.
pub(crate) fn const_f(cx: &mut Cx, shape: Vec<usize>, dtype: DType, v: Vec<f64>) -> Res<ValueId> {
    Ok(cx.e.constant(&Tensor::from_f64(shape, dtype, v))?)
}

/// The static shape of `v` as usize, or an error naming what needs it.
pub(crate) fn static_shape(cx: &Cx, n: &Node, v: ValueId, what: &str) -> Res<Vec<i64>> {
    cx.e.static_shape(v)
        .ok_or_else(|| unsupported(n, format!("{what} with a dynamic shape ('{}')", cx.e.ty(v))))
}
