//! The TensorFlow op table: one mapping function per op, in family files
//! (`math.rs` elementwise/reductions/matrix products, `nn.rs` convolutions,
//! pooling, normalisation and image resizing, `array.rs` shapes, slicing and
//! indexing, `list.rs` TensorLists). Ops without a graph op of their own are
//! composed from graph/data ops here (each composition documented at its
//! function); control flow, calls, variables and identities are handled by the
//! evaluator (`tf/import.rs`) and listed in [`STRUCTURAL`].

mod array;
mod list;
mod math;
mod nn;

use super::{Res, TfCx, TfNode};
use crate::error::ImportError;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::DType;

pub use list::ListShapes;

/// A mapping function: the node (inputs resolved) to its output values.
pub type TfMapFn = fn(&mut TfCx, &TfNode) -> Res<Vec<ValueId>>;

/// Ops the evaluator handles itself (control flow, calls, variables,
/// identities), listed for `ge-translate --list-tf-ops`.
pub static STRUCTURAL: &[&str] = &[
    "Assert",
    "CheckNumerics",
    "EnsureShape",
    "Enter",
    "Exit",
    "Identity",
    "IdentityN",
    "If",
    "LoopCond",
    "Merge",
    "NextIteration",
    "NoOp",
    "PartitionedCall",
    "Placeholder",
    "PreventGradient",
    "ReadVariableOp",
    "Snapshot",
    "StatefulPartitionedCall",
    "StatelessIf",
    "StatelessWhile",
    "StopGradient",
    "Switch",
    "VarHandleOp",
    "While",
];

/// Every mapped TensorFlow op and its mapping function.
pub static TABLE: &[(&str, TfMapFn)] = &[
    ("Abs", math::abs),
    ("Add", math::add),
    ("AddN", math::add_n),
    ("AddV2", math::add),
    ("All", math::all),
    ("Any", math::any),
    ("ArgMax", math::arg_max),
    ("ArgMin", math::arg_min),
    ("AvgPool", nn::avg_pool),
    ("BatchMatMul", math::batch_matmul),
    ("BatchMatMulV2", math::batch_matmul),
    ("BatchMatMulV3", math::batch_matmul),
    ("BatchToSpaceND", nn::batch_to_space_nd),
    ("BiasAdd", nn::bias_add),
    ("BiasAddV1", nn::bias_add),
    ("BroadcastTo", array::broadcast_to),
    ("Cast", array::cast),
    ("Ceil", math::ceil),
    ("ClipByValue", math::clip_by_value),
    ("Concat", array::concat_v1),
    ("ConcatV2", array::concat_v2),
    ("Const", array::konst),
    ("Conv2D", nn::conv2d),
    ("Conv2DBackpropInput", nn::conv2d_backprop_input),
    ("Cos", math::cos),
    ("Cumsum", math::cumsum),
    ("DepthToSpace", nn::depth_to_space),
    ("DepthwiseConv2dNative", nn::depthwise_conv2d),
    ("DivNoNan", math::div_no_nan),
    ("Einsum", math::einsum),
    ("Elu", math::elu),
    ("Equal", math::equal),
    ("Erf", math::erf),
    ("Erfc", math::erfc),
    ("Exp", math::exp),
    ("ExpandDims", array::expand_dims),
    ("Fill", array::fill),
    ("Floor", math::floor),
    ("FloorDiv", math::floor_div),
    ("FloorMod", math::floor_mod),
    ("FusedBatchNorm", nn::fused_batch_norm),
    ("FusedBatchNormV2", nn::fused_batch_norm),
    ("FusedBatchNormV3", nn::fused_batch_norm),
    ("Gather", array::gather_v1),
    ("GatherV2", array::gather_v2),
    ("Greater", math::greater),
    ("GreaterEqual", math::greater_equal),
    ("LeakyRelu", math::leaky_relu),
    ("Less", math::less),
    ("LessEqual", math::less_equal),
    ("Log", math::log),
    ("Log1p", math::log1p),
    ("LogSoftmax", nn::log_softmax),
    ("LogicalAnd", math::logical_and),
    ("LogicalNot", math::logical_not),
    ("LogicalOr", math::logical_or),
    ("MatMul", math::matmul),
    ("MatrixBandPart", array::matrix_band_part),
    ("Max", math::reduce_max),
    ("MaxPool", nn::max_pool),
    ("Maximum", math::maximum),
    ("Mean", math::mean),
    ("Min", math::reduce_min),
    ("Minimum", math::minimum),
    ("MirrorPad", array::mirror_pad),
    ("Mul", math::mul),
    ("Neg", math::neg),
    ("NotEqual", math::not_equal),
    ("OneHot", array::one_hot),
    ("OnesLike", array::ones_like),
    ("Pack", array::pack),
    ("Pad", array::pad),
    ("PadV2", array::pad),
    ("PlaceholderWithDefault", array::placeholder_with_default),
    ("Pow", math::pow),
    ("Prod", math::prod),
    ("Range", array::range),
    ("Rank", array::rank),
    ("RealDiv", math::real_div),
    ("Reciprocal", math::reciprocal),
    ("Relu", math::relu),
    ("Relu6", math::relu6),
    ("Reshape", array::reshape),
    ("ResizeBicubic", nn::resize_bicubic),
    ("ResizeBilinear", nn::resize_bilinear),
    ("ResizeNearestNeighbor", nn::resize_nearest),
    ("ResourceGather", array::resource_gather),
    ("ReverseV2", array::reverse_v2),
    ("Round", math::round),
    ("Rsqrt", math::rsqrt),
    ("Select", array::select),
    ("SelectV2", array::select_v2),
    ("Selu", math::selu),
    ("Shape", array::shape),
    ("Sigmoid", math::sigmoid),
    ("Sign", math::sign),
    ("Sin", math::sin),
    ("Size", array::size),
    ("Slice", array::slice),
    ("Softmax", nn::softmax),
    ("Softplus", math::softplus),
    ("Softsign", math::softsign),
    ("SpaceToBatchND", nn::space_to_batch_nd),
    ("SpaceToDepth", nn::space_to_depth),
    ("Split", array::split),
    ("SplitV", array::split_v),
    ("Sqrt", math::sqrt),
    ("Square", math::square),
    ("SquaredDifference", math::squared_difference),
    ("Squeeze", array::squeeze),
    ("StridedSlice", array::strided_slice),
    ("Sub", math::sub),
    ("Sum", math::sum),
    ("Tanh", math::tanh),
    ("TensorListFromTensor", list::from_tensor),
    ("TensorListGetItem", list::get_item),
    ("TensorListLength", list::length),
    ("TensorListReserve", list::reserve),
    ("TensorListSetItem", list::set_item),
    ("TensorListStack", list::stack),
    ("Tile", array::tile),
    ("TopKV2", array::top_k),
    ("Transpose", array::transpose),
    ("Unpack", array::unpack),
    ("Where", array::where_),
    ("ZerosLike", array::zeros_like),
];

pub fn lookup(op: &str) -> Option<TfMapFn> {
    TABLE
        .binary_search_by(|(n, _)| (*n).cmp(op))
        .ok()
        .map(|i| TABLE[i].1)
}

fn one(v: ValueId) -> Res<Vec<ValueId>> {
    Ok(vec![v])
}

fn unary(cx: &mut TfCx, n: &TfNode, name: &str) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(cx.op(name, &[x], vec![])?)
}

fn binary(cx: &mut TfCx, n: &TfNode, name: &str) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    one(cx.op(name, &[a, b], vec![])?)
}

fn unsupported(n: &TfNode, m: impl std::fmt::Display) -> ImportError {
    ImportError::unsupported(format!("{} {m} is not supported", n.op))
}

fn invalid(n: &TfNode, m: impl std::fmt::Display) -> ImportError {
    ImportError::invalid(format!("{}: {m}", n.op))
}

/// A possibly negative axis in `0..rank`.
fn norm_axis(n: &TfNode, axis: i64, rank: usize) -> Res<usize> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    if a < 0 || a >= rank as i64 {
        return Err(invalid(
            n,
            format!("axis {axis} is out of range for rank {rank}"),
        ));
    }
    Ok(a as usize)
}

impl TfCx<'_> {
    fn reshape(&mut self, x: ValueId, shape: &[i64]) -> Res<ValueId> {
        self.op(
            "data.reshape",
            &[x],
            vec![("shape", Attribute::i64_array(shape))],
        )
    }
    fn cast(&mut self, x: ValueId, to: DType) -> Res<ValueId> {
        if self.e.dtype(x)? == to {
            return Ok(x);
        }
        self.op(
            "graph.cast",
            &[x],
            vec![("to", Attribute::ty(ge_ir::Type::scalar(to)))],
        )
    }
    fn unsqueeze(&mut self, x: ValueId, axes: &[i64]) -> Res<ValueId> {
        self.op(
            "data.unsqueeze",
            &[x],
            vec![("axes", Attribute::i64_array(axes))],
        )
    }
    fn squeeze_axes(&mut self, x: ValueId, axes: &[i64]) -> Res<ValueId> {
        self.op(
            "data.squeeze",
            &[x],
            vec![("axes", Attribute::i64_array(axes))],
        )
    }
    fn op2(&mut self, name: &str, a: ValueId, b: ValueId) -> Res<ValueId> {
        self.op(name, &[a, b], vec![])
    }
    fn op1(&mut self, name: &str, a: ValueId) -> Res<ValueId> {
        self.op(name, &[a], vec![])
    }
    /// The static shape of `v`, or an error naming what needs it.
    fn shape_of(&self, n: &TfNode, v: ValueId) -> Res<Vec<i64>> {
        self.e.static_shape(v).ok_or_else(|| {
            unsupported(
                n,
                format!("on a tensor of dynamic shape '{}'", self.e.ty(v)),
            )
        })
    }
    fn const_f64s(&self, v: ValueId, what: &str) -> Res<Vec<f64>> {
        self.e
            .const_value(v)
            .map(|t| (0..t.len()).map(|i| t.get_f(i)).collect())
            .ok_or_else(|| {
                ImportError::new(
                    crate::error::ImportErrorKind::NotConstant(what.into()),
                    format!("{what} must be a constant"),
                )
            })
    }
    /// A constant of `dtype` and `shape` filled with `x`.
    fn full(&mut self, shape: &[i64], dtype: DType, x: f64) -> Res<ValueId> {
        let shape: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
        let n: usize = shape.iter().product();
        ge_ir::budget::check(
            ge_ir::budget::bytes_of(shape.iter().map(|&d| d as u64), dtype.byte_size() as u64),
            &"a filled constant",
        )
        .map_err(ImportError::invalid)?;
        Ok(self
            .e
            .constant(&Tensor::from_f64(shape, dtype, vec![x; n]))?)
    }
}
