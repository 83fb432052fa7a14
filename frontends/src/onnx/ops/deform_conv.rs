//! DeformConv (opset 19) maps to `graph.deform_conv2d`
//! (dialects/src/graph/deform_conv.rs) for 2-D images. The graph op takes
//! its operands in ONNX's order; a mask without a bias gets a zero bias
//! (the op's optional operands fill in order).

use super::nn::{kernel_of, spatial_rank, window};
use super::{invalid, one, unsupported, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;

pub fn deform_conv(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, w, offset) = (n.input(0)?, n.input(1)?, n.input(2)?);
    if spatial_rank(cx, n, x, false)? != 2 {
        return Err(unsupported(n, "on 1-D inputs (2-D images only)"));
    }
    let kernel = kernel_of(cx, n, w, 2)?;
    let filter = cx.e.dims(w)?;
    if kernel.len() != 2
        || filter.len() != 4
        || filter[2..]
            .iter()
            .zip(&kernel)
            .any(|(d, &k)| d.as_static().is_some_and(|d| d != k))
    {
        return Err(invalid(n, "kernel_shape does not match the filter"));
    }
    let win = window(cx, n, x, &kernel, false)?;
    let mut operands = vec![x, w, offset];
    match (n.opt_input(3), n.opt_input(4)) {
        (Some(b), mask) => operands.extend([b].into_iter().chain(mask)),
        (None, Some(mask)) => {
            let Some(m) = filter[0].as_static() else {
                return Err(unsupported(
                    n,
                    "with a mask, no bias and a dynamic number of output channels",
                ));
            };
            let dt = cx.e.dtype(x)?;
            let zeros = Tensor::from_f64(vec![m.max(0) as usize], dt, vec![0.0; m.max(0) as usize]);
            operands.extend([cx.e.constant(&zeros)?, mask]);
        }
        (None, None) => {}
    }
    one(cx.e.op(
        "graph.deform_conv2d",
        &operands,
        vec![
            ("strides", Attribute::i64_array(&win.strides)),
            ("pads", Attribute::i64_array(&win.pads)),
            ("dilations", Attribute::i64_array(&win.dilations)),
            ("group", Attribute::i64(n.i("group", 1)?)),
            ("offset_group", Attribute::i64(n.i("offset_group", 1)?)),
        ],
    )?)
}
