//! DeformConv (opset 19) maps to `graph.deform_conv2d`
//! (dialects/src/graph/deform_conv.rs) for 2-D images. The graph op takes
//! its operands in ONNX's order; a mask without a bias gets a zero bias
//! (the op's optional operands fill in order).

use super::nn::conv2d_attrs;
use super::{invalid, one, unsupported, Cx, Node, Res};
use ge_ir::attributes::Attribute;
use ge_ir::body::ValueId;
use ge_ir::tensor::Tensor;

pub fn deform_conv(cx: &mut Cx, n: &Node) -> Res<Vec<ValueId>> {
    let (x, w, offset) = (n.input(0)?, n.input(1)?, n.input(2)?);
    let mut attrs = conv2d_attrs(cx, n, x, w)?;
    attrs.push(("offset_group", Attribute::i64(n.i("offset_group", 1)?)));
    let filter = cx.e.dims(w)?;
    let kernel = n.ints("kernel_shape");
    if filter.len() != 4
        || kernel.is_some_and(|k| {
            filter[2..]
                .iter()
                .zip(&k)
                .any(|(d, &k)| d.as_static().is_some_and(|d| d != k))
        })
    {
        return Err(invalid(n, "kernel_shape does not match the filter"));
    }
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
    one(cx.e.op("graph.deform_conv2d", &operands, attrs)?)
}
