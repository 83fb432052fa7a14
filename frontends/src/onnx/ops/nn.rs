//! Neural-network ONNX ops: convolutions, pooling, normalisations, softmax
//! family, matrix products, dropout.

use super::{
    cast, const_f, fattr, invalid, norm_axis, one, op1, op2, reduce, reshape, scalar_like, squeeze,
    static_shape, unsqueeze, unsupported, Cx, Node, Res,
};
use crate::error::ImportError;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim};

/// Strides, pads ([begins..., ends...]) and dilations of a conv/pool node
/// with `k` spatial dims, `auto_pad` resolved to explicit pads.
pub(super) struct Window {
    pub strides: Vec<i64>,
    pub pads: Vec<i64>,
    pub dilations: Vec<i64>,
}

pub(super) fn window(
    cx: &Cx,
    n: &Node,
    x: ValueId,
    kernel: &[i64],
    ceil_mode: bool,
) -> Res<Window> {
    let k = kernel.len();
    let strides = n.ints("strides").unwrap_or_else(|| vec![1; k]);
    let dilations = n.ints("dilations").unwrap_or_else(|| vec![1; k]);
    let mut pads = n.ints("pads").unwrap_or_else(|| vec![0; 2 * k]);
    if strides.len() != k || dilations.len() != k || pads.len() != 2 * k {
        return Err(invalid(
            n,
            format!(
                "strides, dilations and pads must have {k}, {k} and {} entries",
                2 * k
            ),
        ));
    }
    match n.s("auto_pad", "NOTSET")?.as_str() {
        "NOTSET" | "" => {}
        "VALID" => pads = vec![0; 2 * k],
        m @ ("SAME_UPPER" | "SAME_LOWER") => {
            let dims = cx.e.dims(x)?;
            for i in 0..k {
                let Some(size) = dims.get(2 + i).and_then(|d| d.as_static()) else {
                    return Err(unsupported(n, "auto_pad with a dynamic spatial size"));
                };
                let s = strides[i].max(1);
                let out = (size + s - 1) / s;
                let ext = (kernel[i] - 1) * dilations[i] + 1;
                let total = ((out - 1) * s + ext - size).max(0);
                let small = total / 2;
                let (b, e) = if m == "SAME_UPPER" {
                    (small, total - small)
                } else {
                    (total - small, small)
                };
                pads[i] = b;
                pads[k + i] = e;
            }
            let _ = ceil_mode;
        }
        other => return Err(invalid(n, format!("unknown auto_pad '{other}'"))),
    }
    Ok(Window {
        strides,
        pads,
        dilations,
    })
}

/// The 2-D attribute form of a window with one or two spatial dims (1-D
/// windows get a leading neutral H dim; other windows stay as they are).
pub(super) fn window_2d(w: &Window, one_d: bool) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    if one_d {
        (
            vec![1, w.strides[0]],
            vec![0, w.pads[0], 0, w.pads[1]],
            vec![1, w.dilations[0]],
        )
    } else {
        (w.strides.clone(), w.pads.clone(), w.dilations.clone())
    }
}

/// Spatial rank of an `N x C x ...` input; 1-D, 2-D and (`volumes`) 3-D
/// are supported.
pub(super) fn spatial_rank(cx: &Cx, n: &Node, x: ValueId, volumes: bool) -> Res<usize> {
    let r = cx.e.rank(x)?;
    match r {
        3 | 4 => Ok(r - 2),
        5 if volumes => Ok(3),
        _ => Err(unsupported(
            n,
            format!(
                "on rank-{r} inputs (only {} spatial inputs)",
                if volumes {
                    "1-D, 2-D and 3-D"
                } else {
                    "1-D and 2-D"
                }
            ),
        )),
    }
}

fn kernel_of(cx: &Cx, n: &Node, w: ValueId, k: usize) -> Res<Vec<i64>> {
    if let Some(ks) = n.ints("kernel_shape") {
        return Ok(ks);
    }
    let dims = cx.e.dims(w)?;
    dims.get(2..)
        .unwrap_or(&[])
        .iter()
        .map(|d| d.as_static())
        .collect::<Option<Vec<i64>>>()
        .filter(|v| v.len() == k)
        .ok_or_else(|| unsupported(n, "with a dynamic kernel shape"))
}

pub fn conv(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, w) = (n.input(0)?, n.input(1)?);
    let k = spatial_rank(cx, n, x, true)?;
    let kernel = kernel_of(cx, n, w, k)?;
    if kernel.len() != k {
        return Err(invalid(n, "kernel_shape does not match the input rank"));
    }
    let win = window(cx, n, x, &kernel, false)?;
    if k == 3 {
        let mut operands = vec![x, w];
        operands.extend(n.opt_input(2));
        return one(cx.e.op(
            "graph.conv3d",
            &operands,
            vec![
                ("strides", Attribute::i64_array(&win.strides)),
                ("pads", Attribute::i64_array(&win.pads)),
                ("dilations", Attribute::i64_array(&win.dilations)),
                ("group", Attribute::i64(n.i("group", 1)?)),
            ],
        )?);
    }
    let (strides, pads, dilations) = window_2d(&win, k == 1);
    let (x2, w2) = if k == 1 {
        (unsqueeze(cx, x, &[2])?, unsqueeze(cx, w, &[2])?)
    } else {
        (x, w)
    };
    let mut operands = vec![x2, w2];
    operands.extend(n.opt_input(2));
    let y = cx.e.op(
        "graph.conv2d",
        &operands,
        vec![
            ("strides", Attribute::i64_array(&strides)),
            ("pads", Attribute::i64_array(&pads)),
            ("dilations", Attribute::i64_array(&dilations)),
            ("group", Attribute::i64(n.i("group", 1)?)),
        ],
    )?;
    one(if k == 1 { squeeze(cx, y, &[2])? } else { y })
}

/// The `strides`, `pads`, `dilations` and `group` attributes of a 2-D
/// convolution of `x` by `w` (auto_pad resolved), for the quantised
/// convolutions (quant.rs), which take 2-D images only.
pub(super) fn conv2d_attrs(
    cx: &Cx,
    n: &Node,
    x: ValueId,
    w: ValueId,
) -> Res<Vec<(&'static str, Attribute)>> {
    if spatial_rank(cx, n, x, false)? != 2 {
        return Err(unsupported(n, "on 1-D inputs (2-D images only)"));
    }
    let kernel = kernel_of(cx, n, w, 2)?;
    if kernel.len() != 2 {
        return Err(invalid(n, "kernel_shape does not match the input rank"));
    }
    let win = window(cx, n, x, &kernel, false)?;
    Ok(vec![
        ("strides", Attribute::i64_array(&win.strides)),
        ("pads", Attribute::i64_array(&win.pads)),
        ("dilations", Attribute::i64_array(&win.dilations)),
        ("group", Attribute::i64(n.i("group", 1)?)),
    ])
}

pub fn conv_transpose(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, w) = (n.input(0)?, n.input(1)?);
    let k = spatial_rank(cx, n, x, true)?;
    let kernel = kernel_of(cx, n, w, k)?;
    if kernel.len() != k {
        return Err(invalid(n, "kernel_shape does not match the input rank"));
    }
    let strides = n.ints("strides").unwrap_or_else(|| vec![1; k]);
    let dilations = n.ints("dilations").unwrap_or_else(|| vec![1; k]);
    let mut out_pad = n.ints("output_padding").unwrap_or_else(|| vec![0; k]);
    let mut pads = n.ints("pads").unwrap_or_else(|| vec![0; 2 * k]);
    if strides.len() != k || dilations.len() != k || pads.len() != 2 * k || out_pad.len() != k {
        return Err(invalid(
            n,
            "strides, dilations, pads or output_padding have the wrong length",
        ));
    }
    let auto_pad = n.s("auto_pad", "NOTSET")?;
    let output_shape = n.ints("output_shape");
    if output_shape.is_some() || auto_pad.starts_with("SAME") {
        let dims = cx.e.dims(x)?;
        for i in 0..k {
            let Some(size) = dims.get(2 + i).and_then(|d| d.as_static()) else {
                return Err(unsupported(
                    n,
                    "output_shape/auto_pad with a dynamic spatial size",
                ));
            };
            let want = match &output_shape {
                Some(os) => *os
                    .get(os.len().saturating_sub(k) + i)
                    .ok_or_else(|| invalid(n, "output_shape is too short"))?,
                None => size * strides[i],
            };
            let full = strides[i] * (size - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1;
            let mut total = full - want;
            if total < 0 {
                // A larger output than the full one: extra output padding at the end.
                out_pad[i] -= total;
                total = 0;
            }
            let small = total / 2;
            let (b, e) = if auto_pad == "SAME_UPPER" {
                (small, total - small)
            } else {
                (total - small, small)
            };
            pads[i] = b;
            pads[k + i] = e;
        }
    } else if auto_pad == "VALID" {
        pads = vec![0; 2 * k];
    }
    let mut operands = vec![x, w];
    operands.extend(n.opt_input(2));
    let win = Window {
        strides,
        pads,
        dilations,
    };
    let (strides, pads, dilations) = window_2d(&win, k == 1);
    let name = if k == 3 {
        "graph.conv_transpose3d"
    } else {
        "graph.conv_transpose2d"
    };
    let out_pad = if k == 1 { vec![0, out_pad[0]] } else { out_pad };
    if k == 1 {
        operands[0] = unsqueeze(cx, x, &[2])?;
        operands[1] = unsqueeze(cx, w, &[2])?;
    }
    let y = cx.e.op(
        name,
        &operands,
        vec![
            ("strides", Attribute::i64_array(&strides)),
            ("pads", Attribute::i64_array(&pads)),
            ("dilations", Attribute::i64_array(&dilations)),
            ("group", Attribute::i64(n.i("group", 1)?)),
            ("output_padding", Attribute::i64_array(&out_pad)),
        ],
    )?;
    one(if k == 1 { squeeze(cx, y, &[2])? } else { y })
}

fn pool(cx: &mut Cx, n: &Node, name: &str) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let cip = n.i("count_include_pad", 0)?;
    pool_on(cx, n, x, name, cip)
}

fn pool_on(cx: &mut Cx, n: &Node, x: ValueId, name: &str, cip: i64) -> Res<Vec<ValueId>> {
    if n.outputs_used.iter().skip(1).any(|&u| u) {
        return Err(unsupported(n, "with the Indices output"));
    }
    let k = spatial_rank(cx, n, x, true)?;
    let kernel = n
        .ints("kernel_shape")
        .ok_or_else(|| invalid(n, "requires attribute 'kernel_shape'"))?;
    if kernel.len() != k {
        return Err(invalid(n, "kernel_shape does not match the input rank"));
    }
    let ceil_mode = n.i("ceil_mode", 0)? != 0;
    let win = window(cx, n, x, &kernel, ceil_mode)?;
    let avg = name == "graph.avg_pool2d";
    if k == 3 {
        let mut attrs = vec![
            ("kernel_shape", Attribute::i64_array(&kernel)),
            ("strides", Attribute::i64_array(&win.strides)),
            ("pads", Attribute::i64_array(&win.pads)),
            ("dilations", Attribute::i64_array(&win.dilations)),
            ("ceil_mode", Attribute::i64(ceil_mode as i64)),
        ];
        if avg {
            attrs.push(("count_include_pad", Attribute::i64(cip)));
        }
        let name3 = if avg {
            "graph.avg_pool3d"
        } else {
            "graph.max_pool3d"
        };
        return one(cx.e.op(name3, &[x], attrs)?);
    }
    let (strides, pads, dilations) = window_2d(&win, k == 1);
    let kernel = if k == 1 { vec![1, kernel[0]] } else { kernel };
    let x2 = if k == 1 { unsqueeze(cx, x, &[2])? } else { x };
    let mut attrs = vec![
        ("kernel_shape", Attribute::i64_array(&kernel)),
        ("strides", Attribute::i64_array(&strides)),
        ("pads", Attribute::i64_array(&pads)),
        ("dilations", Attribute::i64_array(&dilations)),
        ("ceil_mode", Attribute::i64(ceil_mode as i64)),
    ];
    if avg {
        attrs.push(("count_include_pad", Attribute::i64(cip)));
    }
    let y = cx.e.op(name, &[x2], attrs)?;
    one(if k == 1 { squeeze(cx, y, &[2])? } else { y })
}

pub fn max_pool(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    // storage_order orders the indices only.
    if n.outputs_used.get(1) == Some(&true) {
        return super::max_unpool::max_pool_indices(cx, n);
    }
    pool(cx, n, "graph.max_pool2d")
}

pub fn average_pool(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    pool(cx, n, "graph.avg_pool2d")
}

/// LpPool: (sum over the window of |x|^p)^(1/p), the sum as an average
/// pool counting padded cells times the window size.
pub fn lp_pool(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let p = n.i("p", 2)? as f64;
    let kernel = n
        .ints("kernel_shape")
        .ok_or_else(|| invalid(n, "requires attribute 'kernel_shape'"))?;
    let a = op1(cx, "graph.abs", x)?;
    let pe = scalar_like(cx, a, p)?;
    let xp = op2(cx, "graph.pow", a, pe)?;
    let avg = pool_on(cx, n, xp, "graph.avg_pool2d", 1)?[0];
    let k = scalar_like(cx, avg, kernel.iter().product::<i64>() as f64)?;
    let sum = op2(cx, "graph.mul", avg, k)?;
    let inv = scalar_like(cx, sum, 1.0 / p)?;
    one(op2(cx, "graph.pow", sum, inv)?)
}

/// RotaryEmbedding maps to its op; the optional position ids stay optional.
pub fn rotary_embedding(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let mut operands = vec![n.input(0)?, n.input(1)?, n.input(2)?];
    operands.extend(n.opt_input(3));
    one(cx.e.op(
        "graph.rotary_embedding",
        &operands,
        vec![
            ("interleaved", Attribute::i64(n.i("interleaved", 0)?)),
            (
                "rotary_embedding_dim",
                Attribute::i64(n.i("rotary_embedding_dim", 0)?),
            ),
            ("num_heads", Attribute::i64(n.i("num_heads", 0)?)),
        ],
    )?)
}

pub fn global_average_pool(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(op1(cx, "graph.global_avg_pool", x)?)
}

pub fn global_max_pool(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(op1(cx, "graph.global_max_pool", x)?)
}

pub fn batch_normalization(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let training = n.opset >= 14 && n.i("training_mode", 0)? != 0;
    if !training && n.outputs_used.iter().skip(1).any(|&u| u) {
        // Before opset 14 the extra outputs (mean, var, saved_mean,
        // saved_var) asked for training; their meaning varied by opset.
        return Err(unsupported(n, "in training mode (before opset 14)"));
    }
    let ins: Vec<ValueId> = (0..5).map(|i| n.input(i)).collect::<Res<_>>()?;
    let dt = cx.e.dtype(ins[0])?;
    let mut operands = vec![ins[0]];
    for &v in &ins[1..] {
        operands.push(cast(cx, v, dt)?);
    }
    let eps = n.f("epsilon", 1e-5)?;
    if training {
        let stats_dt = cx.e.dtype(ins[3])?;
        return batch_norm_training(cx, n, &operands, stats_dt, eps as f64);
    }
    if n.opset < 9 && n.i("spatial", 1)? == 0 {
        // spatial = 0 (before opset 9): statistics per activation — the
        // parameters have the shape of one sample, `x.shape[1:]`.
        let x = operands[0];
        let p: Vec<ValueId> = operands[1..]
            .iter()
            .map(|&v| unsqueeze(cx, v, &[0]))
            .collect::<Res<_>>()?;
        let d = op2(cx, "graph.sub", x, p[2])?;
        let e = scalar_like(cx, p[3], eps as f64)?;
        let ve = op2(cx, "graph.add", p[3], e)?;
        let inv = op1(cx, "graph.rsqrt", ve)?;
        let y = op2(cx, "graph.mul", d, inv)?;
        let y = op2(cx, "graph.mul", y, p[0])?;
        return one(op2(cx, "graph.add", y, p[1])?);
    }
    one(cx.e.op(
        "graph.batch_norm",
        &operands,
        vec![("epsilon", fattr(eps as f64))],
    )?)
}

/// BatchNormalization with `training_mode = 1` (opset 14 on), composed of
/// ops with native kernels rather than an op of its own: the batch's mean
/// and (population) variance over every axis but the channel (1) —
/// `reduce_mean`, `sub`, `mul` — normalise `x` through `graph.batch_norm`
/// itself (so Y has the inference op's kernel), and the running statistics
/// are `input · momentum + batch · (1 - momentum)`, in the element type of
/// the `input_mean` operand. `operands` are x, scale, B, input_mean and
/// input_var, all of x's element type.
fn batch_norm_training(
    cx: &mut Cx,
    n: &Node,
    operands: &[ValueId],
    stats_dt: DType,
    eps: f64,
) -> Res<Vec<ValueId>> {
    let x = operands[0];
    let rank = cx.e.rank(x)?;
    if rank < 2 {
        return Err(invalid(
            n,
            format!("input X must have rank 2 or more, not {rank}"),
        ));
    }
    let axes: Vec<i64> = (0..rank as i64).filter(|&a| a != 1).collect();
    let mean_k = reduce(cx, "graph.reduce_mean", x, &axes, true)?;
    let d = op2(cx, "graph.sub", x, mean_k)?;
    let d2 = op2(cx, "graph.mul", d, d)?;
    let var = reduce(cx, "graph.reduce_mean", d2, &axes, false)?;
    let mean = squeeze(cx, mean_k, &axes)?;
    let y = cx.e.op(
        "graph.batch_norm",
        &[x, operands[1], operands[2], mean, var],
        vec![("epsilon", fattr(eps))],
    )?;
    let momentum = n.f("momentum", 0.9)? as f64;
    let mut outs = vec![y];
    for (running, batch) in [(operands[3], mean), (operands[4], var)] {
        let m = scalar_like(cx, running, momentum)?;
        let kept = op2(cx, "graph.mul", running, m)?;
        let rest = scalar_like(cx, batch, 1.0 - momentum)?;
        let new = op2(cx, "graph.mul", batch, rest)?;
        let sum = op2(cx, "graph.add", kept, new)?;
        outs.push(cast(cx, sum, stats_dt)?);
    }
    Ok(outs)
}

pub fn instance_normalization(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, s, b) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let eps = n.f("epsilon", 1e-5)?;
    one(cx.e.op(
        "graph.instance_norm",
        &[x, s, b],
        vec![("epsilon", fattr(eps as f64))],
    )?)
}

/// mean and 1/sqrt(var + eps) over `axes` (kept as size 1).
fn moments(cx: &mut Cx, x: ValueId, axes: &[i64], eps: f64) -> Res<(ValueId, ValueId, ValueId)> {
    let mean = reduce(cx, "graph.reduce_mean", x, axes, true)?;
    let d = op2(cx, "graph.sub", x, mean)?;
    let d2 = op2(cx, "graph.mul", d, d)?;
    let var = reduce(cx, "graph.reduce_mean", d2, axes, true)?;
    let e = scalar_like(cx, var, eps)?;
    let ve = op2(cx, "graph.add", var, e)?;
    let inv = op1(cx, "graph.rsqrt", ve)?;
    Ok((mean, d, inv))
}

pub fn layer_normalization(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, s) = (n.input(0)?, n.input(1)?);
    let b = n.opt_input(2);
    let axis = n.i("axis", -1)?;
    let eps = n.f("epsilon", 1e-5)? as f64;
    let extra = n.outputs_used.iter().skip(1).any(|&u| u);
    if !extra {
        let mut operands = vec![x, s];
        operands.extend(b);
        return one(cx.e.op(
            "graph.layer_norm",
            &operands,
            vec![("axis", Attribute::i64(axis)), ("epsilon", fattr(eps))],
        )?);
    }
    let rank = cx.e.rank(x)?;
    let a = norm_axis(n, axis, rank)?;
    let axes: Vec<i64> = (a as i64..rank as i64).collect();
    let dt = cx.e.dtype(x)?;
    let stash = match n.i("stash_type", 1)? {
        1 => DType::F32,
        11 => DType::F64,
        10 => DType::F16,
        16 => DType::BF16,
        t => return Err(invalid(n, format!("unknown stash_type {t}"))),
    };
    let xs = cast(cx, x, stash)?;
    let (mean, d, inv) = moments(cx, xs, &axes, eps)?;
    let norm = op2(cx, "graph.mul", d, inv)?;
    let norm = cast(cx, norm, dt)?;
    let mut y = op2(cx, "graph.mul", norm, s)?;
    if let Some(b) = b {
        y = op2(cx, "graph.add", y, b)?;
    }
    Ok(vec![y, mean, inv])
}

pub fn rms_normalization(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, s) = (n.input(0)?, n.input(1)?);
    let axis = n.i("axis", -1)?;
    let eps = n.f("epsilon", 1e-5)? as f64;
    one(cx.e.op(
        "graph.rms_norm",
        &[x, s],
        vec![("axis", Attribute::i64(axis)), ("epsilon", fattr(eps))],
    )?)
}

pub fn group_normalization(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, s, b) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let groups = n.i("num_groups", 0)?;
    let eps = n.f("epsilon", 1e-5)? as f64;
    let shape = static_shape(cx, n, x, "an input")?;
    if shape.len() < 2 || groups <= 0 || shape[1] % groups != 0 {
        return Err(invalid(n, "num_groups must divide the channels"));
    }
    let c = shape[1];
    let dt = cx.e.dtype(x)?;
    let stash = if n.i("stash_type", 1)? == 1 {
        DType::F32
    } else {
        dt
    };
    let xs = cast(cx, x, stash)?;
    let g = reshape(cx, xs, &[shape[0], groups, -1])?;
    let (_, d, inv) = moments(cx, g, &[2], eps)?;
    let norm = op2(cx, "graph.mul", d, inv)?;
    let norm = reshape(cx, norm, &shape)?;
    let norm = cast(cx, norm, dt)?;
    let mut bshape = vec![c];
    bshape.extend(std::iter::repeat_n(1, shape.len() - 2));
    let per_channel = |cx: &mut Cx, v: ValueId| -> Res<ValueId> {
        let len = static_shape(cx, n, v, "scale/bias")?
            .iter()
            .product::<i64>();
        let v = if len == groups && groups != c {
            let v2 = reshape(cx, v, &[groups, 1])?;
            let e = cx.e.op(
                "data.expand",
                &[v2],
                vec![("shape", Attribute::i64_array(&[groups, c / groups]))],
            )?;
            reshape(cx, e, &[c])?
        } else {
            v
        };
        reshape(cx, v, &bshape)
    };
    let s2 = per_channel(cx, s)?;
    let b2 = per_channel(cx, b)?;
    let y = op2(cx, "graph.mul", norm, s2)?;
    one(op2(cx, "graph.add", y, b2)?)
}

pub fn mean_variance_normalization(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let axes = n.ints("axes").unwrap_or_else(|| vec![0, 2, 3]);
    let mean = reduce(cx, "graph.reduce_mean", x, &axes, true)?;
    let ex2 = op2(cx, "graph.mul", mean, mean)?;
    let x2 = op2(cx, "graph.mul", x, x)?;
    let e_x2 = reduce(cx, "graph.reduce_mean", x2, &axes, true)?;
    let var = op2(cx, "graph.sub", e_x2, ex2)?;
    let std = op1(cx, "graph.sqrt", var)?;
    let d = op2(cx, "graph.sub", x, mean)?;
    let eps = scalar_like(cx, std, 1e-9)?;
    let den = op2(cx, "graph.add", std, eps)?;
    one(op2(cx, "graph.div", d, den)?)
}

pub fn lp_normalization(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let axis = n.i("axis", -1)?;
    let p = n.i("p", 2)?;
    let norm = match p {
        1 => {
            let a = op1(cx, "graph.abs", x)?;
            reduce(cx, "graph.reduce_sum", a, &[axis], true)?
        }
        2 => {
            let sq = op2(cx, "graph.mul", x, x)?;
            let s = reduce(cx, "graph.reduce_sum", sq, &[axis], true)?;
            op1(cx, "graph.sqrt", s)?
        }
        _ => return Err(invalid(n, format!("p must be 1 or 2, not {p}"))),
    };
    // A zero vector stays zero (the reference's `where(norm == 0, 0, x / norm)`).
    let q = op2(cx, "graph.div", x, norm)?;
    let z = scalar_like(cx, norm, 0.0)?;
    let is0 = op2(cx, "graph.equal", norm, z)?;
    one(cx.e.op("graph.where", &[is0, z, q], vec![])?)
}

pub fn lrn(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let size = n.i("size", 0)?;
    if size <= 0 {
        return Err(invalid(n, "requires a positive attribute 'size'"));
    }
    let alpha = n.f("alpha", 1e-4)? as f64;
    let beta = n.f("beta", 0.75)? as f64;
    let bias = n.f("bias", 1.0)? as f64;
    let dims = cx.e.dims(x)?;
    let c = dims
        .get(1)
        .and_then(|d| d.as_static())
        .ok_or_else(|| unsupported(n, "with a dynamic channel count"))?;
    let rank = dims.len();
    if rank < 2 {
        return Err(invalid(n, "input must have rank >= 2"));
    }
    let sq = op2(cx, "graph.mul", x, x)?;
    let (pb, pe) = ((size - 1) / 2, size - 1 - (size - 1) / 2);
    // A window reaches at most c - 1 channels either way; the rest of it is
    // padding, which adds nothing (a hostile size of 2^31 made a slice per
    // tap). The divisor below stays `size`, as ONNX defines it.
    let reach = (c - 1).max(0);
    let (pb, pe) = (pb.min(reach), pe.min(reach));
    let mut pads = vec![0i64; 2 * rank];
    pads[1] = pb;
    pads[rank + 1] = pe;
    let padded = cx.e.op(
        "graph.pad",
        &[sq],
        vec![("pads", Attribute::i64_array(&pads))],
    )?;
    let mut acc: Option<ValueId> = None;
    for i in 0..=pb + pe {
        let s = cx.e.op(
            "data.slice",
            &[padded],
            vec![
                ("starts", Attribute::i64_array(&[i])),
                ("ends", Attribute::i64_array(&[i + c])),
                ("axes", Attribute::i64_array(&[1])),
            ],
        )?;
        acc = Some(match acc {
            None => s,
            Some(a) => op2(cx, "graph.add", a, s)?,
        });
    }
    let sum = acc.ok_or_else(|| invalid(n, "empty window"))?;
    let k = scalar_like(cx, sum, alpha / size as f64)?;
    let t = op2(cx, "graph.mul", sum, k)?;
    let bb = scalar_like(cx, t, bias)?;
    let t = op2(cx, "graph.add", t, bb)?;
    let be = scalar_like(cx, t, beta)?;
    let den = op2(cx, "graph.pow", t, be)?;
    one(op2(cx, "graph.div", x, den)?)
}

/// Softmax-like ops: opset >= 13 normalise one axis; older opsets normalise
/// the flattened `[prod(d[..axis]), prod(d[axis..])]` view.
fn softmax_like(cx: &mut Cx, n: &Node, name: &str) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let rank = cx.e.rank(x)?;
    if n.opset >= 13 {
        let axis = n.i("axis", -1)?;
        return one(cx.e.op(name, &[x], vec![("axis", Attribute::i64(axis))])?);
    }
    let axis = norm_axis(n, n.i("axis", 1)?, rank.max(1))?;
    if axis + 1 == rank {
        return one(cx
            .e
            .op(name, &[x], vec![("axis", Attribute::i64(axis as i64))])?);
    }
    let shape = static_shape(cx, n, x, "an opset < 13 input")?;
    let rows: i64 = shape[..axis].iter().product();
    let flat = reshape(cx, x, &[rows, -1])?;
    let y = cx.e.op(name, &[flat], vec![("axis", Attribute::i64(1))])?;
    one(reshape(cx, y, &shape)?)
}

pub fn softmax(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    softmax_like(cx, n, "graph.softmax")
}

pub fn log_softmax(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    softmax_like(cx, n, "graph.log_softmax")
}

pub fn hardmax(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let rank = cx.e.rank(x)?;
    let dt = cx.e.dtype(x)?;
    let one_hot = |cx: &mut Cx, v: ValueId, axis: usize| -> Res<ValueId> {
        let dims = cx.e.dims(v)?;
        let len = dims[axis]
            .as_static()
            .ok_or_else(|| unsupported(n, "with a dynamic axis size"))?;
        let am = cx.e.op(
            "graph.argmax",
            &[v],
            vec![
                ("axis", Attribute::i64(axis as i64)),
                ("keepdims", Attribute::i64(1)),
            ],
        )?;
        let mut ishape = vec![1usize; dims.len()];
        ishape[axis] = len as usize;
        let iota =
            cx.e.constant(&Tensor::from_i64(ishape, DType::I64, (0..len).collect()))?;
        let eq = op2(cx, "graph.equal", iota, am)?;
        cast(cx, eq, dt)
    };
    if n.opset >= 13 {
        let axis = norm_axis(n, n.i("axis", -1)?, rank)?;
        return one(one_hot(cx, x, axis)?);
    }
    let axis = norm_axis(n, n.i("axis", 1)?, rank.max(1))?;
    let shape = static_shape(cx, n, x, "an opset < 13 input")?;
    let rows: i64 = shape[..axis].iter().product();
    let flat = reshape(cx, x, &[rows, -1])?;
    let y = one_hot(cx, flat, 1)?;
    one(reshape(cx, y, &shape)?)
}

pub fn gemm(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    let mut operands = vec![a, b];
    operands.extend(n.opt_input(2));
    one(cx.e.op(
        "graph.gemm",
        &operands,
        vec![
            ("alpha", fattr(n.f("alpha", 1.0)? as f64)),
            ("beta", fattr(n.f("beta", 1.0)? as f64)),
            ("transA", Attribute::i64(n.i("transA", 0)?)),
            ("transB", Attribute::i64(n.i("transB", 0)?)),
        ],
    )?)
}

pub fn matmul(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (a, b) = (n.input(0)?, n.input(1)?);
    one(op2(cx, "graph.matmul", a, b)?)
}

/// Dropout: the identity (and an all-true mask) when training is known at
/// import time to be off — no `training_mode`, a constant false one, or a
/// constant ratio of 0 — else `graph.dropout`, which reads the ratio and the
/// training flag when it runs (the ratio from its operand, else the
/// attribute of opsets before 12, else 0.5).
pub fn dropout(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let all_zero = |cx: &Cx, v: ValueId| {
        cx.e.const_value(v)
            .is_some_and(|c| c.to_f64().iter().all(|&e| e == 0.0))
    };
    let ratio = n.opt_input(1);
    let off = match n.opt_input(2) {
        None => true,
        Some(t) => all_zero(cx, t) || ratio.is_some_and(|r| all_zero(cx, r)),
    };
    if !off {
        let ratio = match ratio {
            Some(r) => r,
            None => cx.e.scalar(DType::F32, n.f("ratio", 0.5)? as f64)?,
        };
        let training = n.input(2)?;
        let mut attrs = vec![];
        if let Some(seed) = n.opt_i("seed")? {
            attrs.push(("seed", Attribute::f64(seed as f64)));
        }
        return Ok(cx
            .e
            .op_multi("graph.dropout", &[x, ratio, training], attrs, None)?);
    }
    let y = op1(cx, "data.identity", x)?;
    if !n.outputs_used.get(1).copied().unwrap_or(false) {
        return one(y);
    }
    let dims = cx.e.dims(x)?;
    let shape: Vec<usize> = dims
        .iter()
        .map(|d| match d {
            Dim::Static(s) => Ok(*s as usize),
            _ => Err(unsupported(n, "mask output with a dynamic shape")),
        })
        .collect::<Res<_>>()?;
    let count = shape.iter().product();
    let mask = const_f(cx, shape, DType::I1, vec![1.0; count])?;
    Ok(vec![y, mask])
}

/// -input[n, target[n, ...], ...] weighted per class, with `ignore_index`
/// targets dropped, reduced by `reduction` (mean divides by the weight sum).
fn nll(
    cx: &mut Cx,
    n: &Node,
    input: ValueId,
    target: ValueId,
    weight: Option<ValueId>,
) -> Res<ValueId> {
    let reduction = n.s("reduction", "mean")?;
    let ignore = n.opt_i("ignore_index")?;
    let dt = cx.e.dtype(input)?;
    let t = cast(cx, target, DType::I64)?;
    let (t, mask) = match ignore {
        Some(ii) => {
            let k = cx.e.scalar(DType::I64, ii as f64)?;
            let eq = op2(cx, "graph.equal", t, k)?;
            let keep = op1(cx, "graph.not", eq)?;
            let z = cx.e.scalar(DType::I64, 0.0)?;
            let safe = cx.e.op("graph.where", &[keep, t, z], vec![])?;
            (safe, Some(keep))
        }
        None => (t, None),
    };
    let ti = unsqueeze(cx, t, &[1])?;
    let g = cx.e.op(
        "graph.gather_elements",
        &[input, ti],
        vec![("axis", Attribute::i64(1))],
    )?;
    let g = squeeze(cx, g, &[1])?;
    let mut loss = op1(cx, "graph.neg", g)?;
    let mut w = match weight {
        Some(w) => Some(cx.e.op("graph.gather", &[w, t], vec![("axis", Attribute::i64(0))])?),
        None => None,
    };
    if let Some(keep) = mask {
        let kf = cast(cx, keep, dt)?;
        w = Some(match w {
            Some(w) => op2(cx, "graph.mul", w, kf)?,
            None => kf,
        });
    }
    if let Some(w) = w {
        loss = op2(cx, "graph.mul", loss, w)?;
    }
    match reduction.as_str() {
        "none" => Ok(loss),
        "sum" => reduce(cx, "graph.reduce_sum", loss, &[], false),
        "mean" => {
            let s = reduce(cx, "graph.reduce_sum", loss, &[], false)?;
            let den = match w {
                Some(w) => reduce(cx, "graph.reduce_sum", w, &[], false)?,
                None => {
                    let count: i64 = static_shape(cx, n, t, "a target")?.iter().product();
                    cx.e.scalar(dt, count as f64)?
                }
            };
            op2(cx, "graph.div", s, den)
        }
        r => Err(invalid(n, format!("unknown reduction '{r}'"))),
    }
}

pub fn negative_log_likelihood_loss(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, t) = (n.input(0)?, n.input(1)?);
    one(nll(cx, n, x, t, n.opt_input(2))?)
}

pub fn softmax_cross_entropy_loss(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, t) = (n.input(0)?, n.input(1)?);
    let lp =
        cx.e.op("graph.log_softmax", &[x], vec![("axis", Attribute::i64(1))])?;
    let loss = nll(cx, n, lp, t, n.opt_input(2))?;
    Ok(vec![loss, lp])
}

/// ONNX Attention (opset 23), composed: heads split for 3-D inputs, past
/// key/value concatenated, the mask (boolean or additive) and the causal
/// frontier folded into one additive bias, grouped-query heads repeated,
/// `softmax(q·kᵀ·scale + bias)·v` with fully masked rows giving zeros.
/// The sizes and cache form an attention's masks depend on.
struct AttnMasks {
    dt: DType,
    q_len: i64,
    kv_len: i64,
    /// Keys before the query block (an internal cache): query i sits at i + past_len.
    past_len: i64,
    /// The external cache's valid key counts (`nonpad_kv_seqlen`, i64 `[batch]`).
    nonpad: Option<ValueId>,
}

pub fn attention(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (q, k, v) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let dt = cx.e.dtype(q)?;
    let rank = cx.e.rank(q)?;
    let (q, k, v) = attention_heads(cx, n, q, k, v, rank)?;
    let (past_k, past_v) = (n.opt_input(4), n.opt_input(5));
    let nonpad = n.opt_input(6);
    if nonpad.is_some() && (past_k.is_some() || past_v.is_some()) {
        return Err(invalid(
            n,
            "nonpad_kv_seqlen cannot be combined with past_key/past_value",
        ));
    }
    let past_len = match past_k {
        Some(p) => *static_shape(cx, n, p, "past_key")?
            .get(2)
            .ok_or_else(|| invalid(n, "past_key must be 4-D"))?,
        None => 0,
    };
    let append = |cx: &mut Cx, past: Option<ValueId>, x: ValueId| -> Res<ValueId> {
        Ok(match past {
            Some(p) => {
                cx.e.op("data.concat", &[p, x], vec![("axis", Attribute::i64(2))])?
            }
            None => x,
        })
    };
    let k = append(cx, past_k, k)?;
    let v = append(cx, past_v, v)?;
    let qs = static_shape(cx, n, q, "Q")?;
    let ks = static_shape(cx, n, k, "K")?;
    let vs = static_shape(cx, n, v, "V")?;
    if qs.len() != 4 || ks.len() != 4 || vs.len() != 4 {
        return Err(invalid(n, "Q, K and V must have the same rank"));
    }
    let (q_len, kv_len, head) = (qs[2], ks[2], qs[3]);
    let scale = match n.opt_f("scale")? {
        Some(s) => s as f64,
        None => 1.0 / (head as f64).sqrt(),
    };
    let root = scale.sqrt();
    let rs = cx.e.scalar(dt, root)?;
    let qm = op2(cx, "graph.mul", q, rs)?;
    let km = op2(cx, "graph.mul", k, rs)?;
    // Grouped-query attention: repeat each K/V head.
    let (qh, kh) = (qs[1], ks[1]);
    let repeat = |cx: &mut Cx, x: ValueId| -> Res<ValueId> {
        if qh == kh || kh == 0 || qh % kh != 0 {
            return Ok(x);
        }
        let &[b, _, len, size] = static_shape(cx, n, x, "K/V")?.as_slice() else {
            return Err(invalid(n, "Q, K and V must have the same rank"));
        };
        let u = unsqueeze(cx, x, &[2])?;
        let e = cx.e.op(
            "data.expand",
            &[u],
            vec![("shape", Attribute::i64_array(&[1, 1, qh / kh, 1, 1]))],
        )?;
        reshape(cx, e, &[b, qh, len, size])
    };
    let km = repeat(cx, km)?;
    let vr = repeat(cx, v)?;
    let kt = super::transpose(cx, km, &[0, 1, 3, 2])?;
    let mut scores = op2(cx, "graph.matmul", qm, kt)?;
    if let Some(cap) = n.opt_f("softcap")? {
        if cap > 0.0 {
            let c = cx.e.scalar(dt, cap as f64)?;
            let d = op2(cx, "graph.div", scores, c)?;
            let t = op1(cx, "graph.tanh", d)?;
            scores = op2(cx, "graph.mul", t, c)?;
        }
    }
    let masks = AttnMasks {
        dt,
        q_len,
        kv_len,
        past_len,
        nonpad,
    };
    let bias = attention_bias(cx, n, &masks)?;
    let with_bias = match bias {
        Some(b) => op2(cx, "graph.add", scores, b)?,
        None => scores,
    };
    let probs = attention_softmax(cx, n, with_bias, bias, dt)?;
    let mut y = op2(cx, "graph.matmul", probs, vr)?;
    if rank == 3 {
        let t = super::transpose(cx, y, &[0, 2, 1, 3])?;
        y = reshape(cx, t, &[0, 0, -1])?;
    }
    let qk_out = match n.i("qk_matmul_output_mode", 0)? {
        0 | 1 => scores,
        2 => with_bias,
        3 => probs,
        m => return Err(invalid(n, format!("unknown qk_matmul_output_mode {m}"))),
    };
    Ok(vec![y, k, v, qk_out])
}

/// Q, K and V as `batch x heads x seq x head` (3-D inputs split by the
/// head-count attributes).
fn attention_heads(
    cx: &mut Cx,
    n: &Node,
    q: ValueId,
    k: ValueId,
    v: ValueId,
    rank: usize,
) -> Res<(ValueId, ValueId, ValueId)> {
    let split_heads = |cx: &mut Cx, x: ValueId, heads: i64| -> Res<ValueId> {
        let r = reshape(cx, x, &[0, 0, heads, -1])?;
        super::transpose(cx, r, &[0, 2, 1, 3])
    };
    match rank {
        3 => {
            let qh = n
                .opt_i("q_num_heads")?
                .ok_or_else(|| invalid(n, "3-D inputs need q_num_heads"))?;
            let kh = n
                .opt_i("kv_num_heads")?
                .ok_or_else(|| invalid(n, "3-D inputs need kv_num_heads"))?;
            Ok((
                split_heads(cx, q, qh)?,
                split_heads(cx, k, kh)?,
                split_heads(cx, v, kh)?,
            ))
        }
        4 => Ok((q, k, v)),
        _ => Err(invalid(
            n,
            format!("inputs must be 3-D or 4-D, not {rank}-D"),
        )),
    }
}

/// Softmax over the keys in `softmax_precision`; rows where every key is
/// masked give zeros, not NaN.
fn attention_softmax(
    cx: &mut Cx,
    n: &Node,
    with_bias: ValueId,
    bias: Option<ValueId>,
    dt: DType,
) -> Res<ValueId> {
    let precision = match n.opt_i("softmax_precision")? {
        Some(p) => crate::onnx::tensor::dtype_from_onnx(p as i32)?,
        None => dt,
    };
    let sm_in = cast(cx, with_bias, precision)?;
    let mut probs = cx.e.op(
        "graph.softmax",
        &[sm_in],
        vec![("axis", Attribute::i64(-1))],
    )?;
    if let Some(b) = bias {
        let m = reduce(cx, "graph.reduce_max", b, &[-1], true)?;
        let ninf = cx.e.scalar(dt, f64::NEG_INFINITY)?;
        let all = op2(cx, "graph.equal", m, ninf)?;
        let z = cx.e.scalar(precision, 0.0)?;
        probs = cx.e.op("graph.where", &[all, z, probs], vec![])?;
    }
    cast(cx, probs, dt)
}

/// `where(allowed, 0, -inf)` in the attention's type.
fn additive(cx: &mut Cx, allowed: ValueId, dt: DType) -> Res<ValueId> {
    let z = cx.e.scalar(dt, 0.0)?;
    let ninf = cx.e.scalar(dt, f64::NEG_INFINITY)?;
    Ok(cx.e.op("graph.where", &[allowed, z, ninf], vec![])?)
}

/// The additive bias: the mask (padded to the kv length), the causal and
/// sliding-window frontier, and the external cache's padding.
fn attention_bias(cx: &mut Cx, n: &Node, m: &AttnMasks) -> Res<Option<ValueId>> {
    let dt = m.dt;
    let mut parts: Vec<ValueId> = vec![];
    if let Some(mask) = n.opt_input(3) {
        let mdims = static_shape(cx, n, mask, "attn_mask")?;
        let mrank = mdims.len();
        if mrank == 0 {
            return Err(invalid(n, "attn_mask must have rank >= 1"));
        }
        let is_bool = cx.e.dtype(mask)? == DType::I1;
        let pad = m.kv_len - mdims[mrank - 1];
        let mask = if pad > 0 {
            let mut pads = vec![0i64; 2 * mrank];
            pads[2 * mrank - 1] = pad;
            let value = if is_bool { 0.0 } else { f64::NEG_INFINITY };
            cx.e.op(
                "graph.pad",
                &[mask],
                vec![
                    ("pads", Attribute::i64_array(&pads)),
                    ("value", Attribute::f64(value)),
                ],
            )?
        } else {
            mask
        };
        parts.push(if is_bool {
            additive(cx, mask, dt)?
        } else {
            cast(cx, mask, dt)?
        });
    }
    let causal = n.i("is_causal", 0)? != 0;
    let (left, right) = (n.i("left_window_size", -1)?, n.i("right_window_size", -1)?);
    if causal || left >= 0 || right >= 0 {
        parts.push(match m.nonpad {
            Some(np) => frontier_ops(cx, m, Offset::PerBatch(np), causal, left, right)?,
            // Too large to fold at import: a constant would be made here
            // alone — q·kv f64s, copied by the passes after (a hostile
            // model of 2^20 queries and keys took 24 GB) — so ops compute it.
            None if m.q_len.saturating_mul(m.kv_len) > FRONTIER_CONSTANT_MAX => {
                frontier_ops(cx, m, Offset::Fixed(m.past_len), causal, left, right)?
            }
            None => {
                // Query i sits at absolute position i + past_len.
                let allowed = |i: i64, j: i64| {
                    let d = i + m.past_len - j;
                    (!causal || d >= 0) && (left < 0 || d <= left) && (right < 0 || -d <= right)
                };
                let frontier: Vec<f64> = (0..m.q_len)
                    .flat_map(|i| {
                        (0..m.kv_len).map(move |j| {
                            if allowed(i, j) {
                                0.0
                            } else {
                                f64::NEG_INFINITY
                            }
                        })
                    })
                    .collect();
                const_f(cx, vec![m.q_len as usize, m.kv_len as usize], dt, frontier)?
            }
        });
    }
    if let Some(np) = m.nonpad {
        // Keys at or past nonpad_kv_seqlen[b] are padding: [batch, 1, 1, kv].
        let j = cx.e.constant(&Tensor::from_i64(
            vec![m.kv_len as usize],
            DType::I64,
            (0..m.kv_len).collect(),
        ))?;
        let lens = reshape(cx, np, &[-1, 1])?;
        let ok = op2(cx, "graph.less", j, lens)?;
        let ok = unsqueeze(cx, ok, &[1, 2])?;
        parts.push(additive(cx, ok, dt)?);
    }
    let mut bias: Option<ValueId> = None;
    for p in parts {
        bias = Some(match bias {
            Some(b) => op2(cx, "graph.add", b, p)?,
            None => p,
        });
    }
    Ok(bias)
}

/// Largest causal / sliding-window frontier the importer makes as a
/// constant (elements): its folding limit, past which the ops that compute
/// it stay ops.
const FRONTIER_CONSTANT_MAX: i64 = crate::emit::FOLD_LIMIT;

/// Where query i sits among the keys.
enum Offset {
    /// An external cache: `i + nonpad_kv_seqlen[b] - q_len` (bottom-right
    /// aligned, not clamped: a negative offset masks whole rows).
    PerBatch(ValueId),
    /// `i + past_len` (an internal cache, or none).
    Fixed(i64),
}

/// The causal / sliding-window frontier computed by ops from two ranges:
/// `[batch, 1, q, kv]` for [`Offset::PerBatch`], `[q, kv]` for
/// [`Offset::Fixed`].
fn frontier_ops(
    cx: &mut Cx,
    m: &AttnMasks,
    offset: Offset,
    causal: bool,
    left: i64,
    right: i64,
) -> Res<ValueId> {
    let iota = |cx: &mut Cx, len: i64, shape: Vec<usize>| {
        cx.e.constant(&Tensor::from_i64(shape, DType::I64, (0..len).collect()))
    };
    let i = iota(cx, m.q_len, vec![m.q_len as usize, 1])?;
    let j = iota(cx, m.kv_len, vec![1, m.kv_len as usize])?;
    let off = match offset {
        Offset::PerBatch(nonpad) => {
            let ql = cx.e.scalar(DType::I64, m.q_len as f64)?;
            let off = op2(cx, "graph.sub", nonpad, ql)?;
            reshape(cx, off, &[-1, 1, 1])?
        }
        Offset::Fixed(past) => cx.e.scalar(DType::I64, past as f64)?,
    };
    let pos = op2(cx, "graph.add", i, off)?;
    // d = position - key: [batch, q, kv].
    let d = op2(cx, "graph.sub", pos, j)?;
    let mut allowed: Option<ValueId> = None;
    let mut both = |cx: &mut Cx, a: ValueId| -> Res<()> {
        allowed = Some(match allowed {
            Some(b) => op2(cx, "graph.and", b, a)?,
            None => a,
        });
        Ok(())
    };
    let bound = |cx: &mut Cx, name: &str, v: i64| -> Res<ValueId> {
        let s = cx.e.scalar(DType::I64, v as f64)?;
        op2(cx, name, d, s)
    };
    if causal {
        let a = bound(cx, "graph.greater_equal", 0)?;
        both(cx, a)?;
    }
    if left >= 0 {
        let a = bound(cx, "graph.less_equal", left)?;
        both(cx, a)?;
    }
    if right >= 0 {
        let a = bound(cx, "graph.greater_equal", -right)?;
        both(cx, a)?;
    }
    let allowed = allowed.ok_or_else(|| ImportError::invalid("a frontier without bounds"))?;
    let allowed = match offset {
        Offset::PerBatch(_) => unsqueeze(cx, allowed, &[1])?,
        Offset::Fixed(_) => allowed,
    };
    additive(cx, allowed, m.dt)
}
