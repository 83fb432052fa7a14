//! Convolutions, pooling, normalisation, softmax, space/batch/depth
//! rearrangements and image resizing. NHWC stays the origin format: ops that
//! take NCHW get `data.transpose`s around them.

use super::{invalid, one, unsupported, Res, TfCx, TfNode};
use crate::error::ImportError;
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;

pub fn softmax(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(cx.op("graph.softmax", &[x], vec![("axis", Attribute::i64(-1))])?)
}

pub fn log_softmax(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    one(cx.op(
        "graph.log_softmax",
        &[x],
        vec![("axis", Attribute::i64(-1))],
    )?)
}

pub fn bias_add(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (x, b) = (n.input(0)?, n.input(1)?);
    let b = if n.nhwc()? {
        b
    } else {
        let r = cx.e.rank(x)?;
        let mut shape = vec![-1i64];
        shape.extend(std::iter::repeat_n(1, r.saturating_sub(2)));
        cx.reshape(b, &shape)?
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
        // HWIO → OIHW. TensorFlow's Conv2D is grouped when the filter's I
        // divides the input's channels (Keras 3 emits depthwise convs so).
        let cin = cx.e.dims(xc)?.get(1).and_then(|d| d.as_static());
        let group = match (cin, wd[2].as_static()) {
            (Some(c), Some(i)) if i > 0 && c != i && c % i == 0 => c / i,
            _ => 1,
        };
        (cx.transpose(w, &[3, 2, 0, 1])?, group)
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

pub fn conv2d(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    conv_common(cx, n, false)
}

pub fn depthwise_conv2d(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
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

pub fn max_pool(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    pool(cx, n, "graph.max_pool2d")
}

pub fn avg_pool(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    pool(cx, n, "graph.avg_pool2d")
}

/// y = x * k + (offset - mean * k) with k = scale / sqrt(var + eps): the
/// per-channel vectors broadcast along the last (NHWC) dim, and fold.
pub fn fused_batch_norm(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
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

/// Conv2DBackpropInput(input_sizes, filter, out_backprop): the gradient of a
/// convolution = `graph.conv_transpose2d` of out_backprop. The filter
/// `[H, W, C_out_of_deconv, C_in_of_deconv]` becomes `[C_in, C_out, H, W]`;
/// the pads are those of the forward convolution on `input_sizes`, and
/// `output_padding` makes up what the stride leaves over.
pub fn conv2d_backprop_input(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let sizes = cx.const_i64s(n.input(0)?, "Conv2DBackpropInput input_sizes")?;
    let (w, dy) = (n.input(1)?, n.input(2)?);
    let nhwc = n.nhwc()?;
    if sizes.len() != 4 {
        return Err(invalid(n, "input_sizes must have 4 values"));
    }
    let (oh, ow) = if nhwc {
        (sizes[1], sizes[2])
    } else {
        (sizes[2], sizes[3])
    };
    let wd = cx.shape_of(n, w)?;
    if wd.len() != 4 {
        return Err(invalid(n, "the filter must be 4-D"));
    }
    let kernel = [wd[0], wd[1]];
    let strides = hw(n, "strides", nhwc);
    let dilations = hw(n, "dilations", nhwc);
    let dyc = if nhwc { cx.nhwc_to_nchw(dy)? } else { dy };
    let in_hw = {
        let d = cx.shape_of(n, dyc)?;
        [d[2], d[3]]
    };
    // The forward convolution's pads on the output size.
    let pads = match n.s("padding", "VALID").as_str() {
        "VALID" => vec![0; 4],
        "SAME" => {
            let mut p = vec![0i64; 4];
            for (i, size) in [oh, ow].into_iter().enumerate() {
                let s = strides[i].max(1);
                let out = (size + s - 1) / s;
                let total = ((out - 1) * s + (kernel[i] - 1) * dilations[i] + 1 - size).max(0);
                p[i] = total / 2;
                p[2 + i] = total - total / 2;
            }
            p
        }
        "EXPLICIT" => {
            let e = n.ints("explicit_paddings").unwrap_or_default();
            if e.len() != 8 {
                return Err(invalid(n, "explicit_paddings needs 8 values"));
            }
            let (t, b, l, r) = if nhwc {
                (e[2], e[3], e[4], e[5])
            } else {
                (e[4], e[5], e[6], e[7])
            };
            vec![t, l, b, r]
        }
        other => return Err(unsupported(n, format!("with padding {other}"))),
    };
    let mut out_pad = vec![0i64; 2];
    for i in 0..2 {
        let full = (in_hw[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1;
        let got = full - pads[i] - pads[2 + i];
        let want = [oh, ow][i];
        out_pad[i] = want - got;
        if !(0..strides[i].max(1)).contains(&out_pad[i]) {
            return Err(invalid(
                n,
                format!("input_sizes {sizes:?} do not fit out_backprop and the filter"),
            ));
        }
    }
    let filter = cx.transpose(w, &[3, 2, 0, 1])?;
    let y = cx.op(
        "graph.conv_transpose2d",
        &[dyc, filter],
        vec![
            ("strides", Attribute::i64_array(&strides)),
            ("pads", Attribute::i64_array(&pads)),
            ("dilations", Attribute::i64_array(&dilations)),
            ("output_padding", Attribute::i64_array(&out_pad)),
        ],
    )?;
    one(if nhwc { cx.nchw_to_nhwc(y)? } else { y })
}

/// The block shape and the [begin, end] pairs of SpaceToBatchND /
/// BatchToSpaceND, with the static input shape.
fn block_args(cx: &TfCx, n: &TfNode) -> Res<(Vec<i64>, Vec<i64>, Vec<i64>)> {
    let x = n.input(0)?;
    let block = cx.const_i64s(n.input(1)?, "block_shape")?;
    let pairs = cx.const_i64s(n.input(2)?, "paddings/crops")?;
    let shape = cx.shape_of(n, x)?;
    let m = block.len();
    if m == 0 || pairs.len() != 2 * m || shape.len() < 1 + m || block.iter().any(|&b| b < 1) {
        return Err(invalid(
            n,
            "block_shape, paddings/crops and the input rank disagree",
        ));
    }
    Ok((block, pairs, shape))
}

/// SpaceToBatchND: zero-pad the M spatial dims, split each into
/// (size / block, block), move the block dims to the front and merge them
/// into the batch: `[B, s..., r...] → [prod(block)·B, s/block..., r...]`.
pub fn space_to_batch_nd(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (block, pads, shape) = block_args(cx, n)?;
    let m = block.len();
    let r = shape.len();
    let x = n.input(0)?;
    let mut all_pads = vec![0i64; 2 * r];
    for i in 0..m {
        all_pads[1 + i] = pads[2 * i];
        all_pads[r + 1 + i] = pads[2 * i + 1];
    }
    let x = if all_pads.iter().any(|&p| p != 0) {
        cx.op(
            "graph.pad",
            &[x],
            vec![("pads", Attribute::i64_array(&all_pads))],
        )?
    } else {
        x
    };
    let padded: Vec<i64> = (0..r)
        .map(|d| shape[d] + all_pads[d] + all_pads[r + d])
        .collect();
    let mut split = vec![padded[0]];
    for i in 0..m {
        if padded[1 + i] % block[i] != 0 {
            return Err(invalid(
                n,
                "a padded spatial size is not a multiple of the block",
            ));
        }
        split.extend([padded[1 + i] / block[i], block[i]]);
    }
    split.extend(&padded[1 + m..]);
    let y = cx.reshape(x, &split)?;
    // [B, s0, b0, s1, b1, ..., r] → [b0, b1, ..., B, s0, s1, ..., r]
    let mut perm: Vec<i64> = (0..m).map(|i| 2 + 2 * i as i64).collect();
    perm.push(0);
    perm.extend((0..m).map(|i| 1 + 2 * i as i64));
    perm.extend((1 + 2 * m as i64)..(split.len() as i64));
    let y = cx.transpose(y, &perm)?;
    let mut out = vec![padded[0] * block.iter().product::<i64>()];
    out.extend((0..m).map(|i| padded[1 + i] / block[i]));
    out.extend(&padded[1 + m..]);
    one(cx.reshape(y, &out)?)
}

/// BatchToSpaceND, the inverse: split the batch into (block..., B),
/// interleave each block dim after its spatial dim, merge, then crop.
pub fn batch_to_space_nd(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let (block, crops, shape) = block_args(cx, n)?;
    let m = block.len();
    let x = n.input(0)?;
    let bp: i64 = block.iter().product();
    if shape[0] % bp != 0 {
        return Err(invalid(n, "the batch is not a multiple of the block size"));
    }
    let b = shape[0] / bp;
    let mut split: Vec<i64> = block.clone();
    split.push(b);
    split.extend(&shape[1..]);
    let y = cx.reshape(x, &split)?;
    // [b0, ..., B, s0, ..., r] → [B, s0, b0, s1, b1, ..., r]
    let mut perm = vec![m as i64];
    for i in 0..m {
        perm.extend([(m + 1 + i) as i64, i as i64]);
    }
    perm.extend((2 * m as i64 + 1)..(split.len() as i64));
    let y = cx.transpose(y, &perm)?;
    let mut merged = vec![b];
    merged.extend((0..m).map(|i| shape[1 + i] * block[i]));
    merged.extend(&shape[1 + m..]);
    let y = cx.reshape(y, &merged)?;
    if crops.iter().all(|&c| c == 0) {
        return one(y);
    }
    let axes: Vec<i64> = (1..=m as i64).collect();
    let starts: Vec<i64> = (0..m).map(|i| crops[2 * i]).collect();
    let ends: Vec<i64> = (0..m).map(|i| merged[1 + i] - crops[2 * i + 1]).collect();
    one(cx.op(
        "data.slice",
        &[y],
        vec![
            ("starts", Attribute::i64_array(&starts)),
            ("ends", Attribute::i64_array(&ends)),
            ("axes", Attribute::i64_array(&axes)),
        ],
    )?)
}

fn block_size(n: &TfNode) -> Res<i64> {
    match n.attr("block_size") {
        Some(crate::proto::tensorflow::attr_value::Value::I(b)) if *b >= 1 => Ok(*b),
        _ => Err(invalid(n, "needs a positive block_size")),
    }
}

/// A block_size whose square (times the channels) overflows.
fn too_large_block(n: &TfNode, b: i64) -> ImportError {
    invalid(n, format!("block_size {b} is too large"))
}

/// DepthToSpace (NHWC, DCR order): `[N, H, W, b·b·C] → [N, H, b, W, b, C]`
/// interleaved → `[N, H·b, W·b, C]`.
pub fn depth_to_space(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let b = block_size(n)?;
    let s = cx.shape_of(n, x)?;
    let bb = b.checked_mul(b).ok_or_else(|| too_large_block(n, b))?;
    if !n.nhwc()? || s.len() != 4 || s[3] % bb != 0 {
        return Err(unsupported(
            n,
            "other than NHWC with channels divisible by block_size²",
        ));
    }
    let c = s[3] / bb;
    let y = cx.reshape(x, &[s[0], s[1], s[2], b, b, c])?;
    let y = cx.transpose(y, &[0, 1, 3, 2, 4, 5])?;
    one(cx.reshape(y, &[s[0], s[1] * b, s[2] * b, c])?)
}

/// SpaceToDepth (NHWC): the inverse of DepthToSpace.
pub fn space_to_depth(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let b = block_size(n)?;
    let s = cx.shape_of(n, x)?;
    if !n.nhwc()? || s.len() != 4 || s[1] % b != 0 || s[2] % b != 0 {
        return Err(unsupported(
            n,
            "other than NHWC with H and W divisible by block_size",
        ));
    }
    let c = b
        .checked_mul(b)
        .and_then(|bb| bb.checked_mul(s[3]))
        .ok_or_else(|| too_large_block(n, b))?;
    let y = cx.reshape(x, &[s[0], s[1] / b, b, s[2] / b, b, s[3]])?;
    let y = cx.transpose(y, &[0, 1, 3, 2, 4, 5])?;
    one(cx.reshape(y, &[s[0], s[1] / b, s[2] / b, c])?)
}

/// ResizeBilinear / ResizeNearestNeighbor / ResizeBicubic on NHWC images:
/// `graph.resize` with `sizes = [N, h, w, C]` (N and C keep their size, so
/// they are not interpolated). TensorFlow's coordinate rules map to ONNX's:
/// `align_corners` → align_corners, `half_pixel_centers` → half_pixel,
/// neither → asymmetric. Nearest rounds like TensorFlow: floor for the
/// asymmetric rule, round-half-up otherwise (`round(x) = floor(x + ½)`, which
/// with half_pixel is TensorFlow's `floor((out + ½)·scale)`). Bicubic is Keys'
/// cubic with a = -0.5 under half_pixel_centers, -0.75 for the legacy rule.
fn resize(cx: &mut TfCx, n: &TfNode, mode: &str) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let size = cx.const_i64s(n.input(1)?, "the resize size")?;
    let dims = cx.e.dims(x)?;
    if dims.len() != 4 || size.len() != 2 || size.iter().any(|&s| s <= 0) {
        return Err(invalid(
            n,
            "needs a 4-D NHWC image and a positive [height, width]",
        ));
    }
    let keep = |d: &ge_ir::Dim| {
        d.as_static()
            .ok_or_else(|| unsupported(n, "on dynamic batch or channels"))
    };
    let sizes = [keep(&dims[0])?, size[0], size[1], keep(&dims[3])?];
    let (ac, hp) = (
        n.b("align_corners", false),
        n.b("half_pixel_centers", false),
    );
    if ac && hp {
        return Err(invalid(
            n,
            "align_corners and half_pixel_centers are exclusive",
        ));
    }
    let coord = if ac {
        "align_corners"
    } else if hp {
        "half_pixel"
    } else {
        "asymmetric"
    };
    let mut attrs = vec![
        ("mode", Attribute::string(mode)),
        ("sizes", Attribute::i64_array(&sizes)),
        ("coordinate_transformation_mode", Attribute::string(coord)),
    ];
    if mode == "nearest" {
        let nm = if ac || hp {
            "round_prefer_ceil"
        } else {
            "floor"
        };
        attrs.push(("nearest_mode", Attribute::string(nm)));
    }
    // TensorFlow resizes integer images to float32 (bilinear).
    if mode != "nearest" && !cx.e.dtype(x)?.is_float() {
        return Err(unsupported(n, "of integer images"));
    }
    one(cx.op("graph.resize", &[x], attrs)?)
}

pub fn resize_bilinear(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    resize(cx, n, "linear")
}
pub fn resize_nearest(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    resize(cx, n, "nearest")
}

/// ResizeBicubic as two products with constant interpolation matrices
/// (`[out_h, in_h]` over the rows, `[in_w, out_w]` over the columns) whose
/// entries are TensorFlow's own taps: Keys' cubic (a = -0.75, or -0.5 with
/// half-pixel centres) read from its 1024-entry table, edge indices clamped
/// (with half-pixel centres: taps outside the image dropped and the rest
/// renormalised), as `resize_bicubic_op.cc` does — so results match
/// TensorFlow's, which differ from an exact cubic by the table's step.
pub fn resize_bicubic(cx: &mut TfCx, n: &TfNode) -> Res<Vec<ValueId>> {
    let x = n.input(0)?;
    let size = cx.const_i64s(n.input(1)?, "the resize size")?;
    let shape = cx.shape_of(n, x)?;
    if shape.len() != 4 || size.len() != 2 || size.iter().chain(&shape[1..3]).any(|&s| s <= 0) {
        return Err(invalid(
            n,
            "needs a 4-D NHWC image and a positive [height, width]",
        ));
    }
    let dt = cx.e.dtype(x)?;
    if !dt.is_float() {
        return Err(unsupported(n, "of integer images"));
    }
    let (ac, hp) = (
        n.b("align_corners", false),
        n.b("half_pixel_centers", false),
    );
    if ac && hp {
        return Err(invalid(
            n,
            "align_corners and half_pixel_centers are exclusive",
        ));
    }
    let (in_h, in_w) = (shape[1] as usize, shape[2] as usize);
    let (out_h, out_w) = (size[0] as usize, size[1] as usize);
    for (i, o) in [(in_h, out_h), (in_w, out_w)] {
        ge_ir::budget::check(
            ge_ir::budget::bytes_of([i as u64, o as u64], 8),
            &"ResizeBicubic's interpolation matrix",
        )
        .map_err(ImportError::invalid)?;
    }
    let rows = cubic_matrix(in_h, out_h, ac, hp);
    let mut cols_t = vec![0.0; in_w * out_w];
    for (k, w) in cubic_matrix(in_w, out_w, ac, hp).into_iter().enumerate() {
        let (o, i) = (k / in_w, k % in_w);
        cols_t[i * out_w + o] = w;
    }
    let rows =
        cx.e.constant(&Tensor::from_f64(vec![out_h, in_h], dt, rows))?;
    let cols =
        cx.e.constant(&Tensor::from_f64(vec![in_w, out_w], dt, cols_t))?;
    // NHWC -> NCHW, rows x image x columns, back to NHWC.
    let y = cx.nhwc_to_nchw(x)?;
    let y = cx.op2("graph.matmul", rows, y)?;
    let y = cx.op2("graph.matmul", y, cols)?;
    one(cx.nchw_to_nhwc(y)?)
}

/// The `[out, in]` matrix of TensorFlow's bicubic taps along one axis.
fn cubic_matrix(in_len: usize, out_len: usize, align_corners: bool, half_pixel: bool) -> Vec<f64> {
    const TABLE: i64 = 1 << 10;
    let a = if half_pixel { -0.5 } else { -0.75 };
    // Keys' kernel at distance i/TABLE (near) or 1 + i/TABLE (far), as f32.
    let coeff = |i: i64, far: bool| -> f32 {
        let x = i as f64 / TABLE as f64;
        if far {
            let x = x + 1.0;
            (((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a) as f32
        } else {
            (((a + 2.0) * x - (a + 3.0)) * x * x + 1.0) as f32
        }
    };
    let scale = if align_corners && out_len > 1 {
        (in_len as f32 - 1.0) / (out_len as f32 - 1.0)
    } else {
        in_len as f32 / out_len as f32
    };
    let last = in_len as i64 - 1;
    let mut m = vec![0.0f64; out_len * in_len];
    for o in 0..out_len {
        let f = if half_pixel {
            (o as f32 + 0.5) * scale - 0.5
        } else {
            o as f32 * scale
        };
        let base = f.floor() as i64;
        let off = ((f - base as f32) * TABLE as f32).round_ties_even() as i64;
        let taps = [
            (base - 1, coeff(off, true)),
            (base, coeff(off, false)),
            (base + 1, coeff(TABLE - off, false)),
            (base + 2, coeff(TABLE - off, true)),
        ];
        let mut w: Vec<(usize, f32)> = taps
            .iter()
            .map(|&(i, wt)| {
                let b = i.clamp(0, last);
                (b as usize, if half_pixel && b != i { 0.0 } else { wt })
            })
            .collect();
        if half_pixel {
            let sum: f32 = w.iter().map(|t| t.1).sum();
            if sum.abs() >= 1000.0 * f32::MIN_POSITIVE {
                let inv = 1.0 / sum;
                w.iter_mut().for_each(|t| t.1 *= inv);
            }
        }
        for (i, wt) in w {
            m[o * in_len + i] += wt as f64;
        }
    }
    m
}
