//! Cumulative ops along an axis (ONNX CumProd): `graph.cumprod`.
//!
//! The scan ([`cumprod_lines`]) is generic over the element and public: the
//! semantics run it on f64 or i64 values, the runtime's native kernel
//! (runtime/src/kernels/cumulative.rs) on f32, f64 or i64.

use super::elementwise::{COMPUTE_FORMAT, NUMERIC};
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::Type;

/// The running product along the middle axis of `x` viewed as `outer x n x
/// inner`, into `out`: inclusive (`y[i] = x[0]·…·x[i]`) or `exclusive`
/// (starting from `one`), forwards or in `reverse`.
#[allow(clippy::too_many_arguments)]
pub fn cumprod_lines<T: Copy>(
    x: &[T],
    (outer, n, inner): (usize, usize, usize),
    exclusive: bool,
    reverse: bool,
    one: T,
    mul: impl Fn(T, T) -> T,
    out: &mut [T],
) {
    for o in 0..outer {
        for k in 0..inner {
            let mut acc = one;
            for s in 0..n {
                let i = if reverse { n - 1 - s } else { s };
                let at = (o * n + i) * inner + k;
                if exclusive {
                    out[at] = acc;
                    acc = mul(acc, x[at]);
                } else {
                    acc = mul(acc, x[at]);
                    out[at] = acc;
                }
            }
        }
    }
}

/// The op's axis, exclusive and reverse flags for an input of `rank`.
pub fn cumprod_params(
    src: &impl ge_ir::opdef::AttrSource,
    rank: usize,
) -> Result<(usize, bool, bool), String> {
    let a = Cumprod::attrs(src);
    let axis = norm_axis(a.axis(), rank.max(1), "axis")?;
    Ok((axis, a.exclusive() != 0, a.reverse() != 0))
}

fn infer_cumprod(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    if let Some(d) = dims(t, "input")? {
        cumprod_params(cx, d.len())?;
    }
    Ok(vec![t])
}

fn sem_cumprod(cx: &SemCtx, t: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    arity(t, 1)?;
    let x = t[0];
    let (axis, exclusive, reverse) = cumprod_params(cx, x.rank())?;
    let lines = split_at_axis(&x.shape, axis.min(x.rank().saturating_sub(1)));
    let dt = result_dtype(cx, 0, x.dtype);
    Ok(vec![if x.dtype.is_float() {
        let v = x.to_f64();
        let mut out = vec![0.0; v.len()];
        cumprod_lines(&v, lines, exclusive, reverse, 1.0, |a, b| a * b, &mut out);
        Tensor::from_f64(x.shape.clone(), dt, out)
    } else {
        let v = x.to_i64();
        let mut out = vec![0; v.len()];
        cumprod_lines(
            &v,
            lines,
            exclusive,
            reverse,
            1,
            i64::wrapping_mul,
            &mut out,
        );
        Tensor::from_i64(x.shape.clone(), dt, out)
    }])
}

def_op! {
    /// Cumulative product along an axis (ONNX CumProd)
    ///
    /// `y[..., i, ...] = x[..., 0, ...] · … · x[..., i, ...]` along `axis`; with `exclusive`
    /// the product stops before `i` (1 for the first); with `reverse` it runs from the end.
    /// Integer products wrap to the type. ONNX's `axis` operand is folded into the attribute
    /// by importers.
    pub Cumprod = "graph.cumprod" {
        operands { input: NUMERIC },
        results { output: NUMERIC },
        attrs {
            /// the axis (negative counts from the end)
            axis: I64 = 0,
            /// 1: the product of the elements before each one
            exclusive: I64 = 0,
            /// 1: from the last element backwards
            reverse: I64 = 0,
        },
        traits [Pure, SameOperandsAndResultType],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_cumprod,
        semantics: sem_cumprod,
        interfaces [
            Cost::ELEMENTWISE,
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Scan,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&CUMPROD];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumprod_by_hand() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let mut out = [0.0; 4];
        cumprod_lines(&x, (1, 4, 1), false, false, 1.0, |a, b| a * b, &mut out);
        assert_eq!(out, [1.0, 2.0, 6.0, 24.0]);
        cumprod_lines(&x, (1, 4, 1), true, true, 1.0, |a, b| a * b, &mut out);
        assert_eq!(out, [24.0, 12.0, 4.0, 1.0]);
        // Two columns of a 2x2: along axis 0.
        cumprod_lines(&x, (1, 2, 2), false, false, 1.0, |a, b| a * b, &mut out);
        assert_eq!(out, [1.0, 2.0, 3.0, 8.0]);
    }
}
