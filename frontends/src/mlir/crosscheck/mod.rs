//! Semantic cross-check: our interpreter against MLIR's own execution.
//!
//! A function is exported ([`crate::mlir::export`]), lowered by MLIR's
//! pipeline (TOSA → linalg → bufferize → LLVM, [`exec::PIPELINE`]), run by
//! MLIR's execution engine, and its results compared with
//! `ge_ir::interp::Interpreter` on the same random inputs.

pub mod exec;

use crate::mlir::export::{export_module, ExportOptions};
use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Module};

/// What one cross-check found.
#[derive(Clone, Debug)]
pub struct Report {
    pub function: String,
    pub trials: usize,
    /// Largest absolute difference over all float results and trials.
    pub max_abs_diff: f64,
    /// Empty when every result matched.
    pub mismatches: Vec<String>,
}

/// Options: number of random trials, seed, tolerances (None: by dtype,
/// loosened for the transcendental ops' different approximations).
#[derive(Clone, Debug)]
pub struct Options {
    pub trials: usize,
    pub seed: u64,
    pub rtol: Option<f64>,
    pub atol: Option<f64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            trials: 3,
            seed: 1,
            rtol: None,
            atol: None,
        }
    }
}

/// A small deterministic generator (xorshift64*), so runs are reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Random values for a tensor: floats in [-2, 2), integers in [0, 4), bools.
fn random(shape: &[usize], dt: DType, rng: &mut Rng) -> Tensor {
    let n: usize = shape.iter().product();
    if dt.is_float() {
        let v = (0..n).map(|_| rng.unit() * 4.0 - 2.0).collect();
        Tensor::from_f64(shape.to_vec(), dt, v)
    } else if dt == DType::I1 {
        let v = (0..n).map(|_| rng.next().is_multiple_of(2)).collect();
        Tensor::from_bools(shape.to_vec(), v)
    } else {
        let v = (0..n).map(|_| (rng.next() % 4) as i64).collect();
        Tensor::from_i64(shape.to_vec(), dt, v)
    }
}

fn static_sig(t: ge_ir::Type) -> Result<(Vec<usize>, DType), String> {
    let tt = t
        .as_tensor()
        .ok_or_else(|| format!("'{t}' is not a tensor"))?;
    let s = tt.static_shape().ok_or_else(|| {
        format!("'{t}' has dims that are not static; the cross-check needs static shapes")
    })?;
    Ok((s.into_iter().map(|d| d as usize).collect(), tt.dtype))
}

/// `name` and every function it calls, directly or not.
fn reachable(m: &Module, name: &str) -> Vec<String> {
    let mut seen = vec![name.to_string()];
    let mut k = 0;
    while k < seen.len() {
        let f = seen[k].clone();
        k += 1;
        let Some(op) = m.lookup_symbol(&f) else {
            continue;
        };
        let Some(inner) = m.body().inner(op) else {
            continue;
        };
        inner.walk_deep(ge_ir::WalkOrder::Pre, &mut |b, o| {
            if let Some(c) = b.op(o).attr("callee").and_then(|a| a.as_symbol()) {
                let c = c.as_str().to_string();
                if !seen.contains(&c) {
                    seen.push(c);
                }
            }
        });
    }
    seen
}

/// Cross-check function `name` of `m`.
pub fn check_function(m: &Module, name: &str, opts: &Options) -> Result<Report, String> {
    let interp = Interpreter::new(m);
    let (ins, outs) = interp
        .signature(name)
        .ok_or_else(|| format!("no function named '@{name}'"))?;
    let ins: Vec<(Vec<usize>, DType)> = ins
        .iter()
        .map(|&t| static_sig(t))
        .collect::<Result<_, _>>()?;
    let outs: Vec<(Vec<usize>, DType)> = outs
        .iter()
        .map(|&t| static_sig(t))
        .collect::<Result<_, _>>()?;
    let ctx = crate::mlir::mlir_context();
    let mut mm = export_module(
        &ctx,
        m,
        &ExportOptions {
            emit_c_interface: true,
            only: reachable(m, name),
        },
    )?;
    exec::lower(&ctx, &mut mm)?;
    let mut rng = Rng(opts.seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut report = Report {
        function: name.to_string(),
        trials: opts.trials,
        max_abs_diff: 0.0,
        mismatches: vec![],
    };
    for trial in 0..opts.trials {
        let inputs: Vec<Tensor> = ins.iter().map(|(s, d)| random(s, *d, &mut rng)).collect();
        let ours = interp
            .run_function(name, inputs.clone())
            .map_err(|e| format!("our interpreter failed: {}", e.msg))?;
        let theirs = exec::run(&mm, name, &inputs, &outs)?;
        for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            let (dr, da) = Tensor::default_tolerance(a.dtype);
            let (rtol, atol) = (
                opts.rtol.unwrap_or(dr * 10.0),
                opts.atol.unwrap_or(da * 10.0),
            );
            if a.dtype.is_float() {
                for i in 0..a.len().min(b.len()) {
                    let d = (a.get_f(i) - b.get_f(i)).abs();
                    if d.is_finite() {
                        report.max_abs_diff = report.max_abs_diff.max(d);
                    }
                }
            }
            if a.shape != b.shape || !a.allclose(b, rtol, atol) {
                let first = (0..a.len().min(b.len()))
                    .find(|&i| {
                        let (x, y) = (a.get_f(i), b.get_f(i));
                        !((x.is_nan() && y.is_nan())
                            || x == y
                            || (x - y).abs() <= atol + rtol * y.abs())
                    })
                    .map(|i| {
                        format!(
                            " (first at flat index {i}: ours {} vs MLIR {})",
                            a.get_f(i),
                            b.get_f(i)
                        )
                    })
                    .unwrap_or_default();
                report.mismatches.push(format!(
                    "trial {trial}, result #{k}: shapes {:?} vs {:?}{first}",
                    a.shape, b.shape
                ));
            }
        }
    }
    Ok(report)
}
