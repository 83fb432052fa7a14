//! The TensorFlow GraphDef importer (frozen inference graphs).
//!
//! Placeholders become function arguments (shapes from the graph or from
//! `--input-shape`), `Const` nodes `data.constant`s, and each op is mapped by
//! its function in [`TABLE`]. TensorFlow's NHWC layout stays the origin
//! format: tensors keep their NHWC shapes, and around each graph op that
//! wants NCHW (conv2d, pooling) the importer inserts `data.transpose`s
//! (NHWC→NCHW before, NCHW→NHWC after; filters HWIO→OIHW are folded into the
//! constant). The function carries `ge.data_format = "NHWC"`. Layout passes
//! may later cancel transpose pairs or pick `#ge.format` storage.

use crate::emit::Emitter;
use crate::error::{ImportError, ImportErrorKind};
use crate::proto::tensorflow::{attr_value, AttrValue, DataType, GraphDef, NodeDef, TensorProto};
use ge_ir::attributes::{write_element, Attribute, DenseElements, Element};
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::{Context, DType, Dim, Location, Module, Type};
use prost::Message;
use std::collections::{HashMap, HashSet};
use std::path::Path;

type Res<T> = Result<T, ImportError>;

/// A mapping function: the node (inputs resolved) to its output values.
pub type TfMapFn = fn(&mut TfCx, &TfNode) -> Res<Vec<ValueId>>;

/// Every supported TensorFlow op and its mapping function.
pub static TABLE: &[(&str, TfMapFn)] = &[
    ("Add", add),
    ("AddV2", add),
    ("AvgPool", avg_pool),
    ("BiasAdd", bias_add),
    ("Cast", cast),
    ("Concat", concat_v1),
    ("ConcatV2", concat_v2),
    ("Const", konst),
    ("Conv2D", conv2d),
    ("DepthwiseConv2dNative", depthwise_conv2d),
    ("Exp", exp),
    ("ExpandDims", expand_dims),
    ("FusedBatchNorm", fused_batch_norm),
    ("FusedBatchNormV2", fused_batch_norm),
    ("FusedBatchNormV3", fused_batch_norm),
    ("Identity", identity),
    ("MatMul", matmul),
    ("Max", reduce_max),
    ("Maximum", maximum),
    ("MaxPool", max_pool),
    ("Mean", mean),
    ("Minimum", minimum),
    ("Mul", mul),
    ("Neg", neg),
    ("Pad", pad),
    ("PadV2", pad),
    ("Placeholder", placeholder),
    ("RealDiv", real_div),
    ("Relu", relu),
    ("Relu6", relu6),
    ("Reshape", reshape),
    ("Rsqrt", rsqrt),
    ("Sigmoid", sigmoid),
    ("Softmax", softmax),
    ("Sqrt", sqrt),
    ("Squeeze", squeeze),
    ("StopGradient", identity),
    ("Sub", sub),
    ("Sum", sum),
    ("Tanh", tanh),
    ("Transpose", transpose),
];

fn lookup(op: &str) -> Option<TfMapFn> {
    TABLE.iter().find(|(n, _)| *n == op).map(|(_, f)| *f)
}

/// Import options: placeholder shapes, output nodes, function name.
#[derive(Clone, Debug, Default)]
pub struct TfOptions {
    pub input_shapes: HashMap<String, Vec<Dim>>,
    pub outputs: Option<Vec<String>>,
    pub func_name: String,
}

impl TfOptions {
    /// Parse `--input-shape "x:1,224,224,3;y:B,10"` (a dim is a number, `-1`
    /// for unknown, or a symbol name) and `--outputs "a,b"`.
    pub fn parse(
        input_shape: Option<&str>,
        outputs: Option<&str>,
        func_name: &str,
    ) -> Result<TfOptions, ImportError> {
        let mut input_shapes = HashMap::new();
        for part in input_shape
            .unwrap_or("")
            .split(';')
            .filter(|p| !p.trim().is_empty())
        {
            let (name, dims) = part.rsplit_once(':').ok_or_else(|| {
                ImportError::invalid(format!("--input-shape '{part}': expected NAME:DIM,DIM,..."))
            })?;
            let dims: Vec<Dim> = if dims.trim().is_empty() {
                vec![]
            } else {
                dims.split(',')
                    .map(|d| {
                        let d = d.trim();
                        match d.parse::<i64>() {
                            Ok(-1) => Ok(Dim::Unknown),
                            Ok(v) if v >= 0 => Ok(Dim::Static(v)),
                            _ if !d.is_empty()
                                && d.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                                && d.starts_with(|c: char| c.is_ascii_alphabetic()) =>
                            {
                                Ok(Dim::sym(&d.to_ascii_uppercase()))
                            }
                            _ => Err(ImportError::invalid(format!(
                                "--input-shape '{part}': bad dim '{d}'"
                            ))),
                        }
                    })
                    .collect::<Result<_, _>>()?
            };
            input_shapes.insert(name.trim().to_string(), dims);
        }
        let outputs = outputs.map(|o| {
            o.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        });
        Ok(TfOptions {
            input_shapes,
            outputs,
            func_name: if func_name.is_empty() {
                "main".into()
            } else {
                func_name.into()
            },
        })
    }
}

/// Our dtype for a TensorFlow `DataType`.
fn dtype_from_tf(code: i32) -> Res<DType> {
    let code = if code > 100 { code - 100 } else { code };
    let d = DataType::try_from(code).ok();
    Ok(match d {
        Some(DataType::DtFloat) => DType::F32,
        Some(DataType::DtDouble) => DType::F64,
        Some(DataType::DtHalf) => DType::F16,
        Some(DataType::DtBfloat16) => DType::BF16,
        Some(DataType::DtInt32) => DType::I32,
        Some(DataType::DtInt64) => DType::I64,
        Some(DataType::DtInt16) => DType::I16,
        Some(DataType::DtInt8) => DType::I8,
        Some(DataType::DtUint8) => DType::U8,
        Some(DataType::DtUint16) => DType::U16,
        Some(DataType::DtUint32) => DType::U32,
        Some(DataType::DtUint64) => DType::U64,
        Some(DataType::DtBool) => DType::I1,
        _ => {
            let name = d
                .map(|d| d.as_str_name().to_string())
                .unwrap_or_else(|| format!("data type #{code}"));
            return Err(ImportError::unsupported(format!(
                "unsupported element type {name}"
            )));
        }
    })
}

/// A TensorFlow tensor as an elements attribute.
fn tensor_attr(t: &TensorProto) -> Res<Attribute> {
    let dt = dtype_from_tf(t.dtype)?;
    let shape: Vec<i64> = t
        .tensor_shape
        .as_ref()
        .map(|s| s.dim.iter().map(|d| d.size).collect())
        .unwrap_or_default();
    if shape.iter().any(|&d| d < 0) {
        return Err(ImportError::invalid("a constant has an unknown dim"));
    }
    let ty = Type::tensor_static(&shape, dt);
    let w = dt.byte_size();
    // Dims are untrusted: sizes in checked arithmetic.
    let (n, size) = ge_ir::budget::bytes_of(shape.iter().map(|&d| d as u64), 1)
        .zip(ge_ir::budget::bytes_of(
            shape.iter().map(|&d| d as u64),
            w as u64,
        ))
        .and_then(|(n, b)| Some((usize::try_from(n).ok()?, usize::try_from(b).ok()?)))
        .ok_or_else(|| ImportError::invalid(format!("a constant of type '{ty}' is too large")))?;
    if !t.tensor_content.is_empty() {
        if t.tensor_content.len() != size {
            return Err(ImportError::invalid(format!(
                "a constant has {} bytes but '{ty}' needs {size}",
                t.tensor_content.len(),
            )));
        }
        return Ok(Attribute::dense(DenseElements {
            ty,
            splat: false,
            bytes: t.tensor_content.clone().into(),
        }));
    }
    let elems: Vec<Element> = match dt {
        DType::F32 => t
            .float_val
            .iter()
            .map(|&x| Element::Float(x as f64))
            .collect(),
        DType::F64 => t.double_val.iter().map(|&x| Element::Float(x)).collect(),
        DType::F16 => t
            .half_val
            .iter()
            .map(|&x| Element::Float(half::f16::from_bits(x as u16).to_f64()))
            .collect(),
        DType::BF16 => t
            .half_val
            .iter()
            .map(|&x| Element::Float(half::bf16::from_bits(x as u16).to_f64()))
            .collect(),
        DType::I64 => t.int64_val.iter().map(|&x| Element::Int(x)).collect(),
        DType::I1 => t.bool_val.iter().map(|&x| Element::Bool(x)).collect(),
        DType::U32 => t
            .uint32_val
            .iter()
            .map(|&x| Element::Int(x as i64))
            .collect(),
        DType::U64 => t.uint64_val.iter().map(|&x| Element::UInt(x)).collect(),
        _ => t.int_val.iter().map(|&x| Element::Int(x as i64)).collect(),
    };
    // TensorFlow stores a splat as one value (or none for zeros): kept a
    // splat, so its size costs nothing until something expands it (which
    // checks the memory budget).
    let (elems, splat) = match elems.len() {
        0 if n == 0 => (vec![], false),
        0 => (vec![Element::Int(0)], n != 1),
        1 if n != 1 => (elems, true),
        k if k == n => (elems, false),
        k => {
            return Err(ImportError::invalid(format!(
                "a constant has {k} values but '{ty}' needs {n}"
            )))
        }
    };
    let mut bytes = Vec::with_capacity(elems.len() * w);
    for e in elems {
        write_element(dt, e, &mut bytes);
    }
    Ok(Attribute::dense(DenseElements {
        ty,
        splat,
        bytes: bytes.into(),
    }))
}

/// A node with its inputs resolved.
pub struct TfNode {
    pub name: String,
    pub op: String,
    pub inputs: Vec<ValueId>,
    pub attrs: HashMap<String, AttrValue>,
}

impl TfNode {
    fn input(&self, i: usize) -> Res<ValueId> {
        self.inputs
            .get(i)
            .copied()
            .ok_or_else(|| ImportError::invalid(format!("{} needs input #{i}", self.op)))
    }
    fn attr(&self, name: &str) -> Option<&attr_value::Value> {
        self.attrs.get(name).and_then(|a| a.value.as_ref())
    }
    fn s(&self, name: &str, default: &str) -> String {
        match self.attr(name) {
            Some(attr_value::Value::S(b)) => String::from_utf8_lossy(b).into_owned(),
            _ => default.to_string(),
        }
    }
    fn f(&self, name: &str, default: f32) -> f32 {
        match self.attr(name) {
            Some(attr_value::Value::F(v)) => *v,
            _ => default,
        }
    }
    fn b(&self, name: &str, default: bool) -> bool {
        match self.attr(name) {
            Some(attr_value::Value::B(v)) => *v,
            _ => default,
        }
    }
    fn ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.attr(name) {
            Some(attr_value::Value::List(l)) => Some(l.i.clone()),
            _ => None,
        }
    }
    fn dtype(&self, name: &str) -> Res<DType> {
        match self.attr(name) {
            Some(attr_value::Value::Type(t)) => dtype_from_tf(*t),
            _ => Err(ImportError::invalid(format!(
                "{} needs a type attribute '{name}'",
                self.op
            ))),
        }
    }
    fn nhwc(&self) -> Res<bool> {
        match self.s("data_format", "NHWC").as_str() {
            "NHWC" => Ok(true),
            "NCHW" => Ok(false),
            f => Err(ImportError::unsupported(format!(
                "{} with data_format {f} is not supported",
                self.op
            ))),
        }
    }
}

/// The conversion context of the TensorFlow importer.
pub struct TfCx<'a> {
    pub e: Emitter<'a>,
    opts: &'a TfOptions,
}

impl TfCx<'_> {
    fn const_i64s(&self, v: ValueId, what: &str) -> Res<Vec<i64>> {
        self.e.const_value(v).map(|t| t.to_i64()).ok_or_else(|| {
            ImportError::new(
                ImportErrorKind::NotConstant(what.into()),
                format!("{what} must be a constant"),
            )
        })
    }
    fn op(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: Vec<(&str, Attribute)>,
    ) -> Res<ValueId> {
        Ok(self.e.op(name, operands, attrs)?)
    }
    fn transpose(&mut self, x: ValueId, perm: &[i64]) -> Res<ValueId> {
        self.op(
            "data.transpose",
            &[x],
            vec![("perm", Attribute::i64_array(perm))],
        )
    }
    fn nhwc_to_nchw(&mut self, x: ValueId) -> Res<ValueId> {
        self.transpose(x, &[0, 3, 1, 2])
    }
    fn nchw_to_nhwc(&mut self, x: ValueId) -> Res<ValueId> {
        self.transpose(x, &[0, 2, 3, 1])
    }
    fn scalar_like(&mut self, v: ValueId, x: f64) -> Res<ValueId> {
        let dt = self.e.dtype(v)?;
        Ok(self.e.scalar(dt, x)?)
    }
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

fn add(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.add")
}
fn sub(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.sub")
}
fn mul(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.mul")
}
fn real_div(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.div")
}
fn maximum(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.max")
}
fn minimum(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    binary(cx, n, "graph.min")
}
fn relu(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.relu")
}
fn sigmoid(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.sigmoid")
}
fn tanh(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.tanh")
}
fn exp(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.exp")
}
fn neg(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.neg")
}
fn sqrt(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.sqrt")
}
fn rsqrt(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    unary(cx, n, "graph.rsqrt")
}
fn identity(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    unary(cx, n, "data.identity")
}

fn softmax(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(cx.op("graph.softmax", &[x], vec![("axis", Attribute::i64(-1))])?)
}

fn relu6(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let lo = cx.scalar_like(x, 0.0)?;
    let hi = cx.scalar_like(x, 6.0)?;
    one(cx.op(
        "graph.clip",
        &[x, lo, hi],
        vec![("operand_segment_sizes", Attribute::i64_array(&[1, 1, 1]))],
    )?)
}

fn cast(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let to = n.dtype("DstT")?;
    one(cx.op(
        "graph.cast",
        &[x],
        vec![("to", Attribute::ty(Type::scalar(to)))],
    )?)
}

fn konst(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let t = match n.attr("value") {
        Some(attr_value::Value::Tensor(t)) => t,
        _ => return Err(ImportError::invalid("Const has no tensor 'value'")),
    };
    one(cx.e.constant_attr(tensor_attr(t)?)?)
}

fn placeholder(_: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    Err(ImportError::invalid(format!(
        "placeholder '{}' is handled as a function argument",
        n.name
    )))
}

fn bias_add(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (x, b) = (n.input(0)?, n.input(1)?);
    let b = if n.nhwc()? {
        b
    } else {
        let r = cx.e.rank(x)?;
        let mut shape = vec![-1i64];
        shape.extend(std::iter::repeat_n(1, r.saturating_sub(2)));
        cx.op(
            "data.reshape",
            &[b],
            vec![("shape", Attribute::i64_array(&shape))],
        )?
    };
    one(cx.op("graph.add", &[x, b], vec![])?)
}

/// TensorFlow's padding: SAME pads the total need, the larger half at the end.
fn tf_pads(
    cx: &TfCx,
    n: &TfNode,
    x_nchw: ValueId,
    kernel: &[i64],
    strides: &[i64],
    dilations: &[i64],
) -> Res<Vec<i64>> {
    match n.s("padding", "VALID").as_str() {
        "VALID" => Ok(vec![0; 4]),
        "SAME" => {
            let dims = cx.e.dims(x_nchw)?;
            let mut pads = vec![0i64; 4];
            for i in 0..2 {
                let size = dims.get(2 + i).and_then(|d| d.as_static()).ok_or_else(|| {
                    ImportError::unsupported(format!(
                        "{} with SAME padding on a dynamic spatial size",
                        n.op
                    ))
                })?;
                let s = strides[i].max(1);
                let out = (size + s - 1) / s;
                let total = ((out - 1) * s + (kernel[i] - 1) * dilations[i] + 1 - size).max(0);
                pads[i] = total / 2;
                pads[2 + i] = total - total / 2;
            }
            Ok(pads)
        }
        "EXPLICIT" => {
            let p = n.ints("explicit_paddings").unwrap_or_default();
            // NHWC order: [[0,0],[t,b],[l,r],[0,0]].
            if p.len() != 8 {
                return Err(ImportError::invalid("explicit_paddings needs 8 values"));
            }
            let (t, b, l, r) = if n.nhwc()? {
                (p[2], p[3], p[4], p[5])
            } else {
                (p[4], p[5], p[6], p[7])
            };
            Ok(vec![t, l, b, r])
        }
        other => Err(ImportError::unsupported(format!(
            "{} with padding {other} is not supported",
            n.op
        ))),
    }
}

/// The H and W entries of an NHWC/NCHW 4-vector attribute.
fn hw(n: &TfNode, name: &str, nhwc: bool) -> Vec<i64> {
    let v = n.ints(name).unwrap_or_else(|| vec![1, 1, 1, 1]);
    if v.len() != 4 {
        return vec![1, 1];
    }
    if nhwc {
        vec![v[1], v[2]]
    } else {
        vec![v[2], v[3]]
    }
}

fn conv_common(cx: &mut TfCx, n: &TfNode, depthwise: bool) -> Res<Vec<ValueId>> {
    let (x, w) = (n.input(0)?, n.input(1)?);
    let nhwc = n.nhwc()?;
    let xc = if nhwc { cx.nhwc_to_nchw(x)? } else { x };
    let wd = cx.e.dims(w)?;
    if wd.len() != 4 {
        return Err(ImportError::invalid(format!(
            "{} needs a 4-D filter, not '{}'",
            n.op,
            cx.e.ty(w)
        )));
    }
    let kernel: Vec<i64> = wd
        .iter()
        .take(2)
        .map(|d| d.as_static())
        .collect::<Option<_>>()
        .ok_or_else(|| ImportError::unsupported("a filter with dynamic dims"))?;
    let (filter, group) = if depthwise {
        // [H, W, C, M] → [C*M, 1, H, W], one group per input channel.
        let c = wd[2]
            .as_static()
            .ok_or_else(|| ImportError::unsupported("a filter with dynamic dims"))?;
        let m = wd[3].as_static().unwrap_or(1);
        let r = cx.op(
            "data.reshape",
            &[w],
            vec![(
                "shape",
                Attribute::i64_array(&[kernel[0], kernel[1], 1, c * m]),
            )],
        )?;
        (cx.transpose(r, &[3, 2, 0, 1])?, c)
    } else {
        // HWIO → OIHW
        (cx.transpose(w, &[3, 2, 0, 1])?, 1)
    };
    let strides = hw(n, "strides", nhwc);
    let dilations = hw(n, "dilations", nhwc);
    let pads = tf_pads(cx, n, xc, &kernel, &strides, &dilations)?;
    let y = cx.op(
        "graph.conv2d",
        &[xc, filter],
        vec![
            ("strides", Attribute::i64_array(&strides)),
            ("pads", Attribute::i64_array(&pads)),
            ("dilations", Attribute::i64_array(&dilations)),
            ("group", Attribute::i64(group)),
        ],
    )?;
    one(if nhwc { cx.nchw_to_nhwc(y)? } else { y })
}

fn conv2d(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    conv_common(cx, n, false)
}

fn depthwise_conv2d(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    conv_common(cx, n, true)
}

fn pool(cx: &mut TfCx, n: &TfNode, name: &str) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let nhwc = n.nhwc()?;
    let xc = if nhwc { cx.nhwc_to_nchw(x)? } else { x };
    let kernel = hw(n, "ksize", nhwc);
    let strides = hw(n, "strides", nhwc);
    let pads = tf_pads(cx, n, xc, &kernel, &strides, &[1, 1])?;
    let y = cx.op(
        name,
        &[xc],
        vec![
            ("kernel_shape", Attribute::i64_array(&kernel)),
            ("strides", Attribute::i64_array(&strides)),
            ("pads", Attribute::i64_array(&pads)),
        ],
    )?;
    one(if nhwc { cx.nchw_to_nhwc(y)? } else { y })
}

fn max_pool(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    pool(cx, n, "graph.max_pool2d")
}

fn avg_pool(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    pool(cx, n, "graph.avg_pool2d")
}

fn matmul(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    one(cx.op(
        "graph.gemm",
        &[a, b],
        vec![
            ("transA", Attribute::i64(n.b("transpose_a", false) as i64)),
            ("transB", Attribute::i64(n.b("transpose_b", false) as i64)),
        ],
    )?)
}

/// y = x * k + (offset - mean * k) with k = scale / sqrt(var + eps): the
/// per-channel vectors broadcast along the last (NHWC) dim, and fold.
fn fused_batch_norm(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    if n.b("is_training", false) {
        return Err(ImportError::unsupported(format!(
            "{} in training mode is not supported",
            n.op
        )));
    }
    let x = n.input(0)?;
    let (scale, offset, mean, var) = (n.input(1)?, n.input(2)?, n.input(3)?, n.input(4)?);
    let eps = cx.scalar_like(var, n.f("epsilon", 1e-3) as f64)?;
    let ve = cx.op("graph.add", &[var, eps], vec![])?;
    let inv = cx.op("graph.rsqrt", &[ve], vec![])?;
    let k = cx.op("graph.mul", &[scale, inv], vec![])?;
    let mk = cx.op("graph.mul", &[mean, k], vec![])?;
    let shift = cx.op("graph.sub", &[offset, mk], vec![])?;
    let (k, shift) = if n.nhwc()? {
        (k, shift)
    } else {
        let shape = Attribute::i64_array(&[-1, 1, 1]);
        (
            cx.op("data.reshape", &[k], vec![("shape", shape)])?,
            cx.op("data.reshape", &[shift], vec![("shape", shape)])?,
        )
    };
    let xk = cx.op("graph.mul", &[x, k], vec![])?;
    one(cx.op("graph.add", &[xk, shift], vec![])?)
}

fn concat_v2(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (axis, values) = n
        .inputs
        .split_last()
        .ok_or_else(|| ImportError::invalid("ConcatV2 needs inputs"))?;
    let axis = cx.const_i64s(*axis, "ConcatV2 axis")?;
    one(cx.op(
        "data.concat",
        values,
        vec![("axis", Attribute::i64(axis.first().copied().unwrap_or(0)))],
    )?)
}

fn concat_v1(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (axis, values) = n
        .inputs
        .split_first()
        .ok_or_else(|| ImportError::invalid("Concat needs inputs"))?;
    let axis = cx.const_i64s(*axis, "Concat axis")?;
    one(cx.op(
        "data.concat",
        values,
        vec![("axis", Attribute::i64(axis.first().copied().unwrap_or(0)))],
    )?)
}

fn reshape(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let shape = cx.const_i64s(n.input(1)?, "Reshape shape")?;
    one(cx.op(
        "data.reshape",
        &[x],
        vec![("shape", Attribute::i64_array(&shape))],
    )?)
}

fn squeeze(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let attrs = match n.ints("squeeze_dims") {
        Some(d) if !d.is_empty() => vec![("axes", Attribute::i64_array(&d))],
        _ => vec![],
    };
    one(cx.op("data.squeeze", &[x], attrs)?)
}

fn expand_dims(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let axis = cx.const_i64s(n.input(1)?, "ExpandDims axis")?;
    one(cx.op(
        "data.unsqueeze",
        &[x],
        vec![("axes", Attribute::i64_array(&axis))],
    )?)
}

fn transpose(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let perm = cx.const_i64s(n.input(1)?, "Transpose perm")?;
    one(cx.transpose(x, &perm)?)
}

fn pad(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let p = cx.const_i64s(n.input(1)?, "Pad paddings")?;
    let value = match n.inputs.get(2) {
        Some(&v) => {
            cx.e.const_value(v)
                .map(|t| t.get_f(0))
                .ok_or_else(|| ImportError::unsupported("PadV2 with a computed value"))?
        }
        None => 0.0,
    };
    let r = p.len() / 2;
    let mut pads: Vec<i64> = (0..r).map(|i| p[2 * i]).collect();
    pads.extend((0..r).map(|i| p[2 * i + 1]));
    one(cx.op(
        "graph.pad",
        &[x],
        vec![
            ("pads", Attribute::i64_array(&pads)),
            ("value", Attribute::f64(value)),
        ],
    )?)
}

fn reduction(cx: &mut TfCx, n: &TfNode, name: &str) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let axes = cx.const_i64s(n.input(1)?, "reduction indices")?;
    let keep = n.b("keep_dims", false);
    one(cx.op(
        name,
        &[x],
        vec![
            ("axes", Attribute::i64_array(&axes)),
            ("keepdims", Attribute::i64(keep as i64)),
        ],
    )?)
}

fn mean(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_mean")
}
fn sum(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_sum")
}
fn reduce_max(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    reduction(cx, n, "graph.reduce_max")
}

/// Split `name:idx` / `^ctrl` input references.
fn parse_input(s: &str) -> Option<(&str, usize)> {
    if s.starts_with('^') {
        return None;
    }
    match s.rsplit_once(':') {
        Some((n, i)) if i.chars().all(|c| c.is_ascii_digit()) && !i.is_empty() => {
            Some((n, i.parse().unwrap_or(0)))
        }
        _ => Some((s, 0)),
    }
}

/// Import a frozen GraphDef file.
pub fn import_file(ctx: &Context, path: &Path, opts: &TfOptions) -> Result<Module, ImportError> {
    let bytes = std::fs::read(path)
        .map_err(|e| ImportError::io(format!("cannot read '{}': {e}", path.display())))?;
    import_bytes(ctx, &bytes, &path.display().to_string(), opts)
}

pub fn import_bytes(
    ctx: &Context,
    bytes: &[u8],
    name: &str,
    opts: &TfOptions,
) -> Result<Module, ImportError> {
    let g = GraphDef::decode(bytes).map_err(|e| {
        ImportError::malformed(format!(
            "'{name}' is not a TensorFlow GraphDef or is truncated ({})",
            e.to_string()
                .trim_start_matches("failed to decode Protobuf message: ")
        ))
    })?;
    if g.node.is_empty() || g.node.iter().any(|n| n.name.is_empty() || n.op.is_empty()) {
        return Err(ImportError::malformed(format!(
            "'{name}' is not a TensorFlow GraphDef (no nodes, or nodes without name or op)"
        )));
    }
    let bad: Vec<String> = g
        .node
        .iter()
        .filter(|n| lookup(&n.op).is_none() && n.op != "NoOp")
        .map(|n| format!("  node '{}': {}", n.name, n.op))
        .collect();
    if !bad.is_empty() {
        return Err(ImportError::unsupported(format!(
            "'{name}' uses {} unsupported operator{}:\n{}",
            bad.len(),
            if bad.len() == 1 { "" } else { "s" },
            bad.join("\n")
        )));
    }
    let by_name: HashMap<&str, &NodeDef> = g.node.iter().map(|n| (n.name.as_str(), n)).collect();
    // Outputs: as given, else every non-constant node nothing consumes.
    let consumed: HashSet<&str> = g
        .node
        .iter()
        .flat_map(|n| n.input.iter().filter_map(|i| parse_input(i).map(|p| p.0)))
        .collect();
    let outputs: Vec<String> = match &opts.outputs {
        Some(o) => o.clone(),
        None => g
            .node
            .iter()
            .filter(|n| {
                !consumed.contains(n.name.as_str())
                    && !matches!(n.op.as_str(), "Const" | "NoOp" | "Placeholder")
            })
            .map(|n| n.name.clone())
            .collect(),
    };
    if outputs.is_empty() {
        return Err(ImportError::invalid(format!(
            "'{name}' has no output nodes"
        )));
    }
    // Topological order from the outputs (GraphDefs need not be sorted).
    let mut order: Vec<&NodeDef> = vec![];
    let mut state: HashMap<&str, u8> = HashMap::new();
    let mut stack: Vec<(&str, bool)> = vec![];
    for o in &outputs {
        let (oname, _) = parse_input(o).unwrap_or((o, 0));
        if !by_name.contains_key(oname) {
            return Err(ImportError::invalid(format!(
                "output node '{oname}' is not in the graph"
            )));
        }
        stack.push((oname, false));
    }
    stack.reverse();
    while let Some((nm, done)) = stack.pop() {
        let node = by_name.get(nm).ok_or_else(|| {
            ImportError::invalid(format!("input '{nm}' is not a node of the graph"))
        })?;
        if done {
            state.insert(nm, 2);
            order.push(node);
            continue;
        }
        match state.get(nm) {
            Some(2) => continue,
            Some(1) => {
                return Err(ImportError::unsupported(format!(
                    "'{name}' has a cycle through node '{nm}' (control flow is not supported)"
                )))
            }
            _ => {}
        }
        state.insert(nm, 1);
        stack.push((nm, true));
        for i in node.input.iter().rev() {
            if let Some((src, _)) = parse_input(i) {
                if state.get(src) != Some(&2) {
                    stack.push((src, false));
                }
            }
        }
    }
    let file_loc = Location::file(name, 0, 0);
    let mut m = Module::new(ctx, file_loc);
    let (func, inner, entry) = crate::emit::new_function(ctx, &mut m, file_loc)?;
    let (in_types, out_types, in_names) = {
        let mut cx = TfCx {
            e: Emitter::new(ctx, inner, entry),
            opts,
        };
        let mut values: HashMap<(String, usize), ValueId> = HashMap::new();
        let mut in_types = vec![];
        let mut in_names = vec![];
        for node in &order {
            let loc = Location::name(&node.name, Some(file_loc));
            cx.e.set_loc(loc);
            let ctx_msg = format!("node '{}' ({})", node.name, node.op);
            if node.op == "NoOp" {
                continue;
            }
            if node.op == "Placeholder" {
                let dt = match node.attr.get("dtype").and_then(|a| a.value.as_ref()) {
                    Some(attr_value::Value::Type(t)) => dtype_from_tf(*t),
                    _ => Err(ImportError::invalid("placeholder without a dtype")),
                }
                .map_err(|e| e.context(&ctx_msg))?;
                let dims = match cx.opts.input_shapes.get(&node.name) {
                    Some(d) => d.clone(),
                    None => match node.attr.get("shape").and_then(|a| a.value.as_ref()) {
                        Some(attr_value::Value::Shape(s)) if !s.unknown_rank => s
                            .dim
                            .iter()
                            .map(|d| if d.size < 0 { Dim::Unknown } else { Dim::Static(d.size) })
                            .collect(),
                        _ => {
                            return Err(ImportError::invalid(format!(
                                "{ctx_msg}: the placeholder's shape is unknown; give it with --input-shape {}:DIMS",
                                node.name
                            )))
                        }
                    },
                };
                let ty = Type::tensor(&dims, dt);
                let v = cx.e.b.body.add_block_arg(entry, ty, loc);
                values.insert((node.name.clone(), 0), v);
                in_types.push(ty);
                in_names.push(node.name.clone());
                continue;
            }
            let mut inputs = vec![];
            for i in &node.input {
                if let Some((src, k)) = parse_input(i) {
                    let v = values.get(&(src.to_string(), k)).copied().ok_or_else(|| {
                        ImportError::invalid(format!(
                            "{ctx_msg}: input '{i}' is not produced by any node"
                        ))
                    })?;
                    inputs.push(v);
                }
            }
            let tn = TfNode {
                name: node.name.clone(),
                op: node.op.clone(),
                inputs,
                attrs: node.attr.clone(),
            };
            let map = lookup(&node.op).ok_or_else(|| {
                ImportError::unsupported(format!("{ctx_msg}: unsupported operator"))
            })?;
            let outs = map(&mut cx, &tn).map_err(|e| e.context(&ctx_msg))?;
            for (k, v) in outs.into_iter().enumerate() {
                values.insert((node.name.clone(), k), v);
            }
        }
        let mut outs = vec![];
        for o in &outputs {
            let (oname, k) = parse_input(o).unwrap_or((o, 0));
            outs.push(
                *values
                    .get(&(oname.to_string(), k))
                    .ok_or_else(|| ImportError::invalid(format!("output '{o}' has no value")))?,
            );
        }
        let out_types: Vec<Type> = outs.iter().map(|&v| cx.e.ty(v)).collect();
        cx.e.set_loc(file_loc);
        cx.e.b
            .create("graph.return", &outs, vec![], Some(vec![]), 0)?;
        let _ = cx;
        crate::emit::remove_unused_constants(inner);
        (in_types, out_types, in_names)
    };
    let body = m.body_mut();
    body.set_attr(func, "sym_name", Attribute::string(&opts.func_name));
    body.set_attr(
        func,
        "function_type",
        Attribute::ty(Type::function(&in_types, &out_types)),
    );
    let strs = |v: &[String]| Attribute::array(v.iter().map(|s| Attribute::string(s)).collect());
    body.set_attr(func, "ge.input_names", strs(&in_names));
    body.set_attr(func, "ge.output_names", strs(&outputs));
    body.set_attr(func, "ge.data_format", Attribute::string("NHWC"));
    crate::error::verified(m)
}

#[allow(dead_code)]
fn tensor_of(t: &TensorProto) -> Res<Tensor> {
    let a = tensor_attr(t)?;
    ge_dialects::data::constant::elements_tensor(a, None).map_err(ImportError::invalid)
}
