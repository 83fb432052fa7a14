//! The determinant of square matrices (ONNX Det). The elimination is shared
//! by the reference semantics (f64) and the runtime's native kernel
//! (runtime/src/kernels/det.rs: f32/f16/bf16 data eliminated in f64, the
//! results rounded to the element type once; f64 data runs on the
//! interpreter).

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interfaces::CostCtx;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::Type;

type SemResult = Result<Vec<Tensor>, String>;

/// The determinant of the `n x n` row-major matrix `a` (overwritten), by
/// Gaussian elimination with partial pivoting (LAPACK's getrf, which
/// numpy's `det` calls).
pub fn det(a: &mut [f64], n: usize) -> f64 {
    let mut d = 1.0;
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| a[i * n + c].abs().total_cmp(&a[j * n + c].abs()))
            .unwrap_or(c);
        if a[p * n + c] == 0.0 {
            return 0.0;
        }
        if p != c {
            for k in 0..n {
                a.swap(p * n + k, c * n + k);
            }
            d = -d;
        }
        let piv = a[c * n + c];
        d *= piv;
        for r in c + 1..n {
            let f = a[r * n + c] / piv;
            if f != 0.0 {
                for k in c..n {
                    a[r * n + k] -= f * a[c * n + k];
                }
            }
        }
    }
    d
}

/// The checked batch dims and matrix size of an input shape `[*, n, n]`.
pub fn det_shape(shape: &[usize]) -> Result<(Vec<usize>, usize), String> {
    match shape {
        [b @ .., m, n] if m == n => Ok((b.to_vec(), *n)),
        _ => Err(format!(
            "operand 'input' must be a batch of square matrices [*, n, n], but has shape {shape:?}"
        )),
    }
}

fn infer_det(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let t = cx.operand_types[0];
    let dt = dtype_of(t)?;
    let Some(d) = dims_min_rank(t, "input", 2, "*, n, n")? else {
        return Ok(vec![Type::unranked(dt)]);
    };
    let r = d.len();
    check_dim_eq(
        d[r - 1],
        d[r - 2],
        "the last two dims of 'input' (a square matrix)",
    )?;
    Ok(vec![Type::tensor(&d[..r - 2], dt)])
}

fn sem_det(_cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    arity(t, 1)?;
    let x = t[0];
    let (batch, n) = det_shape(&x.shape)?;
    let v = x.to_f64();
    let count: usize = batch.iter().product();
    // A batch of empty matrices: each determinant is 1.
    let out: Vec<f64> = (0..count)
        .map(|b| match n {
            0 => 1.0,
            _ => det(&mut v[b * n * n..(b + 1) * n * n].to_vec(), n),
        })
        .collect();
    Ok(vec![Tensor::from_f64(batch, x.dtype, out)])
}

/// n³/3 multiply-adds per matrix.
fn det_flops(cx: &CostCtx) -> f64 {
    let d = cx.operand_dims(0);
    let n = d.last().copied().unwrap_or(1.0);
    cx.out_elements() * n * n * n * 2.0 / 3.0
}

def_op! {
    /// The determinant of each square matrix of a batch (ONNX Det)
    ///
    /// `input` is `[*, n, n]`; the result is `[*]`, computed by Gaussian elimination with
    /// partial pivoting in f64 and rounded to the element type.
    pub Det = "graph.det" {
        operands { input: FloatTensor },
        results { output: FloatTensor },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_det,
        semantics: sem_det,
        interfaces [
            Cost::vector(det_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Black,
            KernelFamily::Linalg,
        ],
        es,
    }
}

pub static OPS: &[&OpDef] = &[&DET];
