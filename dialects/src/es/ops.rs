//! The ES API: one entry per exposed op (grammar in `macros.rs`). The drift
//! test checks each entry against the op's definition, and that every graph
//! and data op is here or in [`super::EXCLUDED`].

use crate::{data, graph};
use ge_ir::{Attribute, DType};

es_ops! {
    // ---- graph: elementwise binary (numpy broadcasting) ---------------------
    "graph.add" = graph::elementwise::ADD => fn add(lhs: one, rhs: one) -> one;
    "graph.sub" = graph::elementwise::SUB => fn sub(lhs: one, rhs: one) -> one;
    "graph.mul" = graph::elementwise::MUL => fn mul(lhs: one, rhs: one) -> one;
    "graph.div" = graph::elementwise::DIV => fn div(lhs: one, rhs: one) -> one;
    "graph.pow" = graph::elementwise::POW => fn pow(base: one, exponent: one) -> one;
    "graph.max" = graph::elementwise::MAX => fn max(lhs: one, rhs: one) -> one;
    "graph.min" = graph::elementwise::MIN => fn min(lhs: one, rhs: one) -> one;
    "graph.mod" = graph::elementwise::MOD => fn mod_(lhs: one, rhs: one)
        attrs ModAttrs { fmod: i64 } -> one;

    // ---- graph: elementwise unary -------------------------------------------
    "graph.neg" = graph::elementwise::NEG => fn neg(input: one) -> one;
    "graph.abs" = graph::elementwise::ABS => fn abs(input: one) -> one;
    "graph.exp" = graph::elementwise::EXP => fn exp(input: one) -> one;
    "graph.log" = graph::elementwise::LOG => fn log(input: one) -> one;
    "graph.sqrt" = graph::elementwise::SQRT => fn sqrt(input: one) -> one;
    "graph.rsqrt" = graph::elementwise::RSQRT => fn rsqrt(input: one) -> one;
    "graph.reciprocal" = graph::elementwise::RECIPROCAL => fn reciprocal(input: one) -> one;
    "graph.relu" = graph::elementwise::RELU => fn relu(input: one) -> one;
    "graph.sigmoid" = graph::elementwise::SIGMOID => fn sigmoid(input: one) -> one;
    "graph.tanh" = graph::elementwise::TANH => fn tanh(input: one) -> one;
    "graph.silu" = graph::elementwise::SILU => fn silu(input: one) -> one;
    "graph.erf" = graph::elementwise::ERF => fn erf(input: one) -> one;
    "graph.floor" = graph::elementwise::FLOOR => fn floor(input: one) -> one;
    "graph.ceil" = graph::elementwise::CEIL => fn ceil(input: one) -> one;
    "graph.round" = graph::elementwise::ROUND => fn round(input: one) -> one;
    "graph.sign" = graph::elementwise::SIGN => fn sign(input: one) -> one;
    "graph.sin" = graph::elementwise::SIN => fn sin(input: one) -> one;
    "graph.cos" = graph::elementwise::COS => fn cos(input: one) -> one;
    "graph.leaky_relu" = graph::elementwise::LEAKY_RELU => fn leaky_relu(input: one)
        attrs LeakyReluAttrs { alpha: f64 } -> one;
    "graph.gelu" = graph::elementwise::GELU => fn gelu(input: one)
        attrs GeluAttrs { approximate: String } -> one;
    "graph.clip" = graph::elementwise::CLIP => fn clip(input: one, min: opt, max: opt) -> one;
    "graph.cast" = graph::elementwise::CAST => fn cast(input: one; to: DType) -> one;
    "graph.where" = graph::elementwise::WHERE => fn where_(cond: one, x: one, y: one) -> one;

    // ---- graph: comparisons and logic (i1 results) --------------------------
    "graph.equal" = graph::elementwise::EQUAL => fn equal(lhs: one, rhs: one) -> one;
    "graph.less" = graph::elementwise::LESS => fn less(lhs: one, rhs: one) -> one;
    "graph.less_equal" = graph::elementwise::LESS_EQUAL => fn less_equal(lhs: one, rhs: one) -> one;
    "graph.greater" = graph::elementwise::GREATER => fn greater(lhs: one, rhs: one) -> one;
    "graph.greater_equal" = graph::elementwise::GREATER_EQUAL
        => fn greater_equal(lhs: one, rhs: one) -> one;
    "graph.and" = graph::elementwise::AND => fn and(lhs: one, rhs: one) -> one;
    "graph.or" = graph::elementwise::OR => fn or(lhs: one, rhs: one) -> one;
    "graph.xor" = graph::elementwise::XOR => fn xor(lhs: one, rhs: one) -> one;
    "graph.not" = graph::elementwise::NOT => fn not(input: one) -> one;

    // ---- graph: reductions ---------------------------------------------------
    "graph.reduce_sum" = graph::reduce::REDUCE_SUM => fn reduce_sum(data: one; axes: &[i64])
        attrs ReduceSumAttrs { keepdims: i64, noop_with_empty_axes: i64 } -> one;
    "graph.reduce_mean" = graph::reduce::REDUCE_MEAN => fn reduce_mean(data: one; axes: &[i64])
        attrs ReduceMeanAttrs { keepdims: i64, noop_with_empty_axes: i64 } -> one;
    "graph.reduce_max" = graph::reduce::REDUCE_MAX => fn reduce_max(data: one; axes: &[i64])
        attrs ReduceMaxAttrs { keepdims: i64, noop_with_empty_axes: i64 } -> one;
    "graph.reduce_min" = graph::reduce::REDUCE_MIN => fn reduce_min(data: one; axes: &[i64])
        attrs ReduceMinAttrs { keepdims: i64, noop_with_empty_axes: i64 } -> one;
    "graph.reduce_prod" = graph::reduce::REDUCE_PROD => fn reduce_prod(data: one; axes: &[i64])
        attrs ReduceProdAttrs { keepdims: i64, noop_with_empty_axes: i64 } -> one;
    "graph.argmax" = graph::reduce::ARGMAX => fn argmax(data: one)
        attrs ArgmaxAttrs { axis: i64, keepdims: i64, select_last_index: i64 } -> one;
    "graph.argmin" = graph::reduce::ARGMIN => fn argmin(data: one)
        attrs ArgminAttrs { axis: i64, keepdims: i64, select_last_index: i64 } -> one;

    // ---- graph: neural-network ops ------------------------------------------
    "graph.conv2d" = graph::nn::CONV2D => fn conv2d(input: one, filter: one, bias: opt)
        attrs Conv2dAttrs {
            strides: Vec<i64>, pads: Vec<i64>, dilations: Vec<i64>, group: i64,
            activation: String, activation_alpha: f64,
        }
        -> one;
    "graph.conv_transpose2d" = graph::nn::CONV_TRANSPOSE2D
        => fn conv_transpose2d(input: one, filter: one, bias: opt)
        attrs ConvTranspose2dAttrs {
            strides: Vec<i64>, pads: Vec<i64>, dilations: Vec<i64>, group: i64,
            output_padding: Vec<i64>,
        } -> one;
    "graph.max_pool2d" = graph::nn::MAX_POOL2D => fn max_pool2d(input: one; kernel_shape: &[i64])
        attrs MaxPool2dAttrs { strides: Vec<i64>, pads: Vec<i64>, dilations: Vec<i64>, ceil_mode: i64 }
        -> one;
    "graph.avg_pool2d" = graph::nn::AVG_POOL2D => fn avg_pool2d(input: one; kernel_shape: &[i64])
        attrs AvgPool2dAttrs {
            strides: Vec<i64>, pads: Vec<i64>, dilations: Vec<i64>, ceil_mode: i64,
            count_include_pad: i64,
        } -> one;
    "graph.global_avg_pool" = graph::nn::GLOBAL_AVG_POOL => fn global_avg_pool(input: one) -> one;
    "graph.global_max_pool" = graph::nn::GLOBAL_MAX_POOL => fn global_max_pool(input: one) -> one;
    "graph.batch_norm" = graph::nn::BATCH_NORM
        => fn batch_norm(input: one, scale: one, bias: one, mean: one, var: one)
        attrs BatchNormAttrs { epsilon: f64 } -> one;
    "graph.instance_norm" = graph::nn::INSTANCE_NORM
        => fn instance_norm(input: one, scale: one, bias: one)
        attrs InstanceNormAttrs { epsilon: f64 } -> one;
    "graph.layer_norm" = graph::nn::LAYER_NORM => fn layer_norm(input: one, scale: one, bias: opt)
        attrs LayerNormAttrs { axis: i64, epsilon: f64 } -> one;
    "graph.rms_norm" = graph::nn::RMS_NORM => fn rms_norm(input: one, scale: one)
        attrs RmsNormAttrs { axis: i64, epsilon: f64 } -> one;
    "graph.softmax" = graph::nn::SOFTMAX => fn softmax(input: one)
        attrs SoftmaxAttrs { axis: i64 } -> one;
    "graph.log_softmax" = graph::nn::LOG_SOFTMAX => fn log_softmax(input: one)
        attrs LogSoftmaxAttrs { axis: i64 } -> one;
    "graph.scaled_dot_product_attention" = graph::nn::SCALED_DOT_PRODUCT_ATTENTION
        => fn scaled_dot_product_attention(query: one, key: one, value: one, mask: opt)
        attrs AttentionAttrs { scale: Option<f64>, causal: bool } -> one;

    // ---- graph: linear algebra -----------------------------------------------
    "graph.matmul" = graph::linalg::MATMUL => fn matmul(lhs: one, rhs: one) -> one;
    "graph.batch_matmul" = graph::linalg::BATCH_MATMUL => fn batch_matmul(lhs: one, rhs: one)
        attrs BatchMatmulAttrs { transpose_a: bool, transpose_b: bool } -> one;
    "graph.gemm" = graph::linalg::GEMM => fn gemm(a: one, b: one, c: opt)
        attrs GemmAttrs {
            alpha: f64, beta: f64, trans_a as "transA": i64, trans_b as "transB": i64,
            activation: String, activation_alpha: f64,
        }
        -> one;

    // ---- graph: indexing ------------------------------------------------------
    "graph.gather" = graph::index::GATHER => fn gather(input: one, indices: one)
        attrs GatherAttrs { axis: i64 } -> one;
    "graph.gather_elements" = graph::index::GATHER_ELEMENTS
        => fn gather_elements(input: one, indices: one)
        attrs GatherElementsAttrs { axis: i64 } -> one;
    "graph.scatter_elements" = graph::index::SCATTER_ELEMENTS
        => fn scatter_elements(input: one, indices: one, updates: one)
        attrs ScatterElementsAttrs { axis: i64, reduction: String } -> one;
    "graph.embedding" = graph::index::EMBEDDING => fn embedding(table: one, ids: one) -> one;
    "graph.topk" = graph::index::TOPK => fn topk(input: one; k: i64)
        attrs TopkAttrs { axis: i64, largest: i64, sorted: i64 }
        -> TopK { values, indices };
    "graph.resize" = graph::index::RESIZE => fn resize(input: one)
        attrs ResizeAttrs {
            mode: String, scales: Option<Vec<f64>>, sizes: Option<Vec<i64>>,
            coordinate_transformation_mode: String, nearest_mode: String,
        } -> one;
    "graph.pad" = graph::index::PAD => fn pad(input: one; pads: &[i64])
        attrs PadAttrs { mode: String, value: f64 } -> one;

    // ---- data: constants, shapes, movement, layout ----------------------------
    "data.constant" = data::constant::CONSTANT => fn constant_attr(; value: Attribute) -> one;
    "data.reshape" = data::shape::RESHAPE => fn reshape(input: one; shape: &[i64])
        attrs ReshapeAttrs { allowzero: i64 } -> one;
    "data.squeeze" = data::shape::SQUEEZE => fn squeeze(input: one)
        attrs SqueezeAttrs { axes: Option<Vec<i64>> } -> one;
    "data.unsqueeze" = data::shape::UNSQUEEZE => fn unsqueeze(input: one; axes: &[i64]) -> one;
    "data.identity" = data::shape::IDENTITY => fn identity(input: one) -> one;
    "data.transpose" = data::movement::TRANSPOSE => fn transpose(input: one; perm: &[i64]) -> one;
    "data.broadcast_to" = data::movement::BROADCAST_TO
        => fn broadcast_to(input: one; shape: &[i64]) -> one;
    "data.expand" = data::movement::EXPAND => fn expand(input: one; shape: &[i64]) -> one;
    "data.tile" = data::movement::TILE => fn tile(input: one; repeats: &[i64]) -> one;
    "data.slice" = data::movement::SLICE => fn slice(input: one; starts: &[i64], ends: &[i64])
        attrs SliceAttrs { axes: Option<Vec<i64>>, steps: Option<Vec<i64>> } -> one;
    "data.concat" = data::movement::CONCAT => fn concat(inputs: many; axis: i64) -> one;
    "data.split" = data::movement::SPLIT => fn split(input: one)
        attrs SplitAttrs { axis: i64, split: Option<Vec<i64>>, num_outputs: Option<i64> } -> many;
    "data.transdata" = data::layout::TRANSDATA
        => fn transdata(input: one; src_format: &str, dst_format: &str) -> one;
}
