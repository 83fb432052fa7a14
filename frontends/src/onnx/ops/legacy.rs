//! Old-opset forms (ai.onnx opsets 1-12) mapped to the current semantics the
//! way the onnx version converter (`onnx/version_converter/adapters/`)
//! rewrites them; each op's mapping function calls these where its old form
//! differs. Attributes that only concerned memory reuse or training
//! (`consumed_inputs`, `is_test`) are ignored, as the converter drops them.

use super::{invalid, norm_axis, reshape, Cx, Node, Res};
use crate::onnx::tensor::dtype_from_onnx;
use crate::proto::onnx::tensor_proto::DataType;
use ge_ir::body::ValueId;
use ge_ir::DType;

/// Binary ops before opset 7 (Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal,
/// Greater, Less): without `broadcast = 1` the shapes are equal; with it, `B`
/// broadcasts onto `A` — aligned at `axis` when given (B's dims are a
/// contiguous run of A's starting there: the converter's
/// `BroadcastBackwardCompatibility` reshapes B with trailing 1s), at the end
/// otherwise (numpy's rule). Returns the (possibly reshaped) `B`.
pub fn broadcast_operand(cx: &mut Cx, n: &Node, a: ValueId, b: ValueId) -> Res<ValueId> {
    if n.opset >= 7 || n.i("broadcast", 0)? == 0 {
        return Ok(b);
    }
    let Some(axis) = n.opt_i("axis")? else {
        return Ok(b);
    };
    let ra = cx.e.rank(a)?;
    let rb = cx.e.rank(b)?;
    let axis = norm_axis(n, axis, ra.max(1))?;
    if axis + rb > ra {
        return Err(invalid(
            n,
            format!("B of rank {rb} does not fit into A of rank {ra} at axis {axis}"),
        ));
    }
    let trailing = ra - axis - rb;
    if trailing == 0 {
        return Ok(b);
    }
    let mut shape: Vec<i64> = (0..rb).map(|_| 0).collect();
    shape.extend(std::iter::repeat_n(1, trailing));
    reshape(cx, b, &shape)
}

/// PRelu before opset 7: a slope with one entry per channel applies along
/// axis 1 (opset 7 made it numpy broadcasting): reshaped to `[C, 1, ...]`.
pub fn prelu_slope(cx: &mut Cx, n: &Node, x: ValueId, slope: ValueId) -> Res<ValueId> {
    if n.opset >= 7 {
        return Ok(slope);
    }
    let (xd, sd) = (cx.e.dims(x)?, cx.e.dims(slope)?);
    if sd.len() == 1 && xd.len() > 2 && sd[0] == xd[1] && sd[0].as_static() != Some(1) {
        let mut shape = vec![0i64];
        shape.extend(std::iter::repeat_n(1, xd.len() - 2));
        return reshape(cx, slope, &shape);
    }
    Ok(slope)
}

/// Cast before opset 6: `to` is the element type's name ("FLOAT", "INT64").
pub fn cast_target(n: &Node) -> Res<DType> {
    if let Some(a) = n.attr("to") {
        if a.i.is_none() {
            if let Some(s) = &a.s {
                let name = String::from_utf8_lossy(s).to_ascii_uppercase();
                let code = DataType::from_str_name(&name)
                    .ok_or_else(|| invalid(n, format!("unknown element type '{name}' in 'to'")))?;
                return dtype_from_onnx(code as i32);
            }
        }
    }
    dtype_from_onnx(n.i("to", 0)? as i32)
}
