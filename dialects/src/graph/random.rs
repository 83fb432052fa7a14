//! Random draws (ONNX RandomUniform, RandomNormal, their `*Like` forms,
//! Bernoulli, Multinomial) and Dropout with its training flag read at run
//! time.
//!
//! **The generator.** Every op draws from ChaCha8 (`rand_chacha`'s
//! `ChaCha8Rng`, whose output is portable and stable across versions), one
//! generator per execution of the op, seeded by the op's `seed` attribute —
//! the bits of the seed as an f32 (ONNX's attribute type), so the same model
//! with the same seed gives the same values on every run, in the interpreter
//! and in the runtime's kernel alike (runtime/src/kernels/random.rs calls the
//! functions below). Without `seed`, each execution takes a fresh seed from
//! the process's hash randomness and a counter ([`op_seed`]): different on
//! every run, not meant for cryptography. Elements are drawn in row-major
//! order; a uniform value is `lo + u·(hi - lo)` with `u` the top 53 bits of
//! one 64-bit draw, redrawn while rounding to the element type would reach
//! `hi`; a normal value takes two uniforms (Box–Muller, the cosine branch).
//! No other implementation (onnxruntime's `std::mt19937`, numpy's PCG64)
//! draws the same numbers: their outputs can only be checked by shape, type
//! and the set the values lie in ([`RandomValues`]).
//!
//! The ops are not `Pure`: without a seed every execution differs, so
//! constant folding, CSE and DCE leave them alone, and the runtime never
//! folds them at load time (a step of a non-pure op is not folded).

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::body::{Body, OpId};
use ge_ir::def_op;
use ge_ir::interfaces::{RandomValues, ValueDomain};
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{round_f, Tensor};
use ge_ir::{DType, Dim, Type};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

type SemResult = Result<Vec<Tensor>, String>;

/// The float element types a uniform or normal draw gives.
pub const DRAWN: &[DType] = &[DType::F16, DType::BF16, DType::F32, DType::F64];

/// The generator's seed: the op's `seed` (its f32 bits), or a fresh one.
pub fn op_seed(seed: Option<f64>) -> u64 {
    match seed {
        Some(s) => u64::from((s as f32).to_bits()),
        None => {
            use std::hash::{BuildHasher, Hasher};
            static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            h.finish()
        }
    }
}

/// One generator per execution of an op.
pub struct Draws(ChaCha8Rng);

impl Draws {
    pub fn new(seed: u64) -> Draws {
        Draws(ChaCha8Rng::seed_from_u64(seed))
    }

    /// A uniform value in [0, 1) (53 random bits).
    pub fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform value in [lo, hi) as `dt` holds it (`lo` when `hi <= lo`).
    pub fn uniform(&mut self, lo: f64, hi: f64, dt: DType) -> f64 {
        if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
            return round_f(dt, lo);
        }
        // Redraw the rare value that rounds up to `hi` (bounded: a range
        // with no value of `dt` below `hi` gives `lo`).
        for _ in 0..64 {
            let v = round_f(dt, lo + self.unit() * (hi - lo));
            if v < hi {
                return v;
            }
        }
        round_f(dt, lo)
    }

    /// A normal value (Box–Muller) with `mean` and standard deviation `scale`.
    pub fn normal(&mut self, mean: f64, scale: f64, dt: DType) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        round_f(dt, mean + scale * z)
    }
}

/// `n` uniform values in [lo, hi) as `dt` holds them.
pub fn uniform_values(seed: u64, n: usize, lo: f64, hi: f64, dt: DType) -> Vec<f64> {
    let mut d = Draws::new(seed);
    (0..n).map(|_| d.uniform(lo, hi, dt)).collect()
}

/// `n` normal values as `dt` holds them.
pub fn normal_values(seed: u64, n: usize, mean: f64, scale: f64, dt: DType) -> Vec<f64> {
    let mut d = Draws::new(seed);
    (0..n).map(|_| d.normal(mean, scale, dt)).collect()
}

/// 1 with probability `p` (one uniform draw `u < p` per element), else 0.
pub fn bernoulli_values(seed: u64, p: &[f64]) -> Vec<f64> {
    let mut d = Draws::new(seed);
    p.iter()
        .map(|&p| f64::from(u8::from(d.unit() < p)))
        .collect()
}

/// `samples` class indices per row of `logits` (`[batch, classes]`,
/// unnormalised log-probabilities, row-major): each the first class whose
/// cumulative probability exceeds a uniform draw.
pub fn multinomial_values(seed: u64, logits: &[f64], classes: usize, samples: usize) -> Vec<i64> {
    let mut d = Draws::new(seed);
    let mut out = Vec::with_capacity(logits.len() / classes.max(1) * samples);
    for row in logits.chunks(classes.max(1)) {
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut cum = Vec::with_capacity(row.len());
        let mut total = 0.0;
        for &x in row {
            total += (x - max).exp();
            cum.push(total);
        }
        for _ in 0..samples {
            let target = d.unit() * total;
            let k = cum
                .iter()
                .position(|&c| target < c)
                .unwrap_or(classes.saturating_sub(1));
            out.push(k as i64);
        }
    }
    out
}

/// Dropout's result and mask for input `x`: with `training` false or
/// `ratio` 0, `x` itself and every element kept (no draw); else each element
/// kept when one uniform draw is at least `ratio`, scaled by `1/(1 - ratio)`,
/// the others 0. A ratio outside [0, 1) is an error.
pub fn dropout_values(
    seed: u64,
    x: &[f64],
    ratio: f64,
    training: bool,
) -> Result<(Vec<f64>, Vec<bool>), String> {
    if !training || ratio == 0.0 {
        return Ok((x.to_vec(), vec![true; x.len()]));
    }
    if !(0.0..1.0).contains(&ratio) {
        return Err(format!(
            "operand 'ratio' must lie in [0, 1), but is {ratio}"
        ));
    }
    let scale = 1.0 / (1.0 - ratio);
    let mut d = Draws::new(seed);
    let mask: Vec<bool> = x.iter().map(|_| d.unit() >= ratio).collect();
    let y = x
        .iter()
        .zip(&mask)
        .map(|(&v, &keep)| if keep { v * scale } else { 0.0 })
        .collect();
    Ok((y, mask))
}

/// The one value of Dropout's scalar operand `what` (a scalar or one element).
pub fn dropout_scalar(v: &[f64], what: &str) -> Result<f64, String> {
    match v {
        [x] => Ok(*x),
        _ => Err(format!(
            "operand '{what}' must hold one value, but holds {}",
            v.len()
        )),
    }
}

/// The element type named by attribute `dtype` (a scalar type), if given.
fn dtype_attr(t: Option<Type>) -> Result<Option<DType>, String> {
    t.map(|t| match t.data() {
        ge_ir::TypeData::Scalar(d) => Ok(*d),
        _ => Err(format!(
            "attribute 'dtype' must be an element type such as f32, but got '{t}'"
        )),
    })
    .transpose()
}

/// The result type of a uniform or normal draw: `like`'s shape (and element
/// type unless `dtype` says) or `shape` (and `dtype`, f32 by default).
fn drawn_type(
    like: Option<Type>,
    shape: Option<Vec<i64>>,
    dtype: Option<Type>,
) -> Result<Type, String> {
    let dtype = dtype_attr(dtype)?;
    let (dims, dt) = match (like, shape) {
        (Some(t), None) => (
            t.as_tensor().and_then(|t| t.dims.clone()),
            dtype.or(t.dtype()),
        ),
        (None, Some(s)) => {
            if let Some(&d) = s.iter().find(|&&d| d < 0) {
                return Err(format!("attribute 'shape' has a negative dim {d}"));
            }
            let dims: Vec<Dim> = s.iter().map(|&d| Dim::Static(d)).collect();
            (Some(dims.into_boxed_slice()), dtype.or(Some(DType::F32)))
        }
        (Some(_), Some(_)) => {
            return Err("takes the shape of operand 'like' or attribute 'shape', not both".into())
        }
        (None, None) => return Err("needs operand 'like' or attribute 'shape'".into()),
    };
    match dt {
        Some(d) if DRAWN.contains(&d) => Ok(tensor_type(dims.as_deref(), d)),
        d => Err(format!(
            "draws f16, bf16, f32 or f64 values, not {} (attribute 'dtype')",
            d.map_or("?".into(), |d| d.name().to_string())
        )),
    }
}

/// The concrete result shape and element type of a draw in semantics.
fn drawn_shape(cx: &SemCtx, t: &[&Tensor], shape: Option<Vec<i64>>) -> (Vec<usize>, DType) {
    let dt = result_dtype(cx, 0, DType::F32);
    let shape = match t.first() {
        Some(like) => like.shape.clone(),
        None => shape
            .unwrap_or_default()
            .iter()
            .map(|&d| d.max(0) as usize)
            .collect(),
    };
    (shape, dt)
}

/// One draw per result element.
fn draw_flops(cx: &CostCtx) -> f64 {
    cx.out_elements() * 8.0
}

fn uniform_domain(body: &Body, op: OpId) -> Option<ValueDomain> {
    let a = RandomUniform::attrs(body.op(op));
    Some(ValueDomain::HalfOpen(a.low(), a.high()))
}

/// The uniform and normal draws differ in name, docs, their two parameters,
/// the draw function and the set of their values.
macro_rules! draw_op {
    (
        $ty:ident, $name:literal, $summary:literal, $desc:literal,
        $p:ident = $pdefault:literal ($pdoc:literal),
        $q:ident = $qdefault:literal ($qdoc:literal),
        $values:path, $domain:expr
    ) => {
        def_op! {
            #[doc = $summary]
            #[doc = ""]
            #[doc = $desc]
            pub $ty = $name {
                operands { like: Option<AnyTensor> },
                results { output: FloatTensor },
                attrs {
                    /// the result's shape (without `like`)
                    shape: Option<I64Array>,
                    /// the result's element type
                    dtype: Option<Type>,
                    #[doc = $pdoc]
                    $p: F64 = $pdefault,
                    #[doc = $qdoc]
                    $q: F64 = $qdefault,
                    /// the generator's seed (ONNX's float `seed`)
                    seed: Option<F64>,
                },
                format: COMPUTE_FORMAT,
                verify: verify_by_infer,
                infer: |cx: &InferCtx| {
                    let a = $ty::attrs(cx);
                    Ok(vec![drawn_type(cx.operand_types.first().copied(), a.shape(), a.dtype())?])
                },
                semantics: |cx: &SemCtx, t: &[&Tensor]| -> SemResult {
                    let a = $ty::attrs(cx);
                    let (shape, dt) = drawn_shape(cx, t, a.shape());
                    let n = checked_numel(&shape)?;
                    let v = $values(op_seed(a.seed()), n, a.$p(), a.$q(), dt);
                    Ok(vec![Tensor::from_f64(shape, dt, v)])
                },
                interfaces [
                    Cost::vector(draw_flops),
                    FusionPattern::Opaque,
                    CPU_ENGINES,
                    PrecisionClass::Never,
                    KernelFamily::Random,
                    RandomValues { domain: $domain },
                ],
                es,
            }
        }
    };
}

draw_op!(
    RandomUniform,
    "graph.random_uniform",
    "Values drawn uniformly from [low, high) (ONNX RandomUniform, RandomUniformLike)",
    "The result has the shape of operand `like` (RandomUniformLike) or attribute `shape`, and \
     element type `dtype` (default: `like`'s, else f32; f16, bf16, f32 or f64): `%r = \
     graph.random_uniform {shape = [2, 3], low = -1.0, high = 1.0, seed = 7.0} : () -> \
     tensor<2x3xf32>`. With `seed` every execution draws the same values; without it each draws \
     new ones. The generator (ChaCha8) and the draw are documented in \
     dialects/src/graph/random.rs; not `Pure`, so never folded or merged.",
    low = 0.0("the smallest value"),
    high = 1.0("the bound above every value"),
    uniform_values,
    uniform_domain
);

draw_op!(
    RandomNormal,
    "graph.random_normal",
    "Values drawn from a normal distribution (ONNX RandomNormal, RandomNormalLike)",
    "Shape and element type as for `graph.random_uniform`; each value is `mean + scale·z` with \
     `z` standard normal (Box–Muller from the ChaCha8 generator of \
     dialects/src/graph/random.rs). With `seed` every execution draws the same values.",
    mean = 0.0("the mean"),
    scale = 1.0("the standard deviation"),
    normal_values,
    |_, _| Some(ValueDomain::NotNan)
);

def_op! {
    /// Each element 1 with the probability its input gives, else 0 (ONNX Bernoulli)
    ///
    /// `input` holds probabilities (f16, bf16, f32 or f64); the result has its shape and
    /// element type `dtype` (default: the input's): `%r = graph.bernoulli %p {seed = 0.0} :
    /// (tensor<10xf32>) -> tensor<10xf32>`. One uniform draw `u` per element gives 1 when
    /// `u < p` (the ChaCha8 generator of dialects/src/graph/random.rs; with `seed` every
    /// execution draws the same values).
    pub Bernoulli = "graph.bernoulli" {
        operands { input: FloatTensor },
        results { output: AnyTensor },
        attrs {
            /// the result's element type (any number type or i1)
            dtype: Option<Type>,
            /// the generator's seed (ONNX's float `seed`)
            seed: Option<F64>,
        },
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: |cx: &InferCtx| {
            let t = cx.operand_types[0];
            let dt = dtype_attr(Bernoulli::attrs(cx).dtype())?.unwrap_or(dtype_of(t)?);
            Ok(vec![t.with_dtype(dt)])
        },
        semantics: |cx: &SemCtx, t: &[&Tensor]| -> SemResult {
            arity(t, 1)?;
            let dt = result_dtype(cx, 0, t[0].dtype);
            let v = bernoulli_values(op_seed(Bernoulli::attrs(cx).seed()), &t[0].to_f64());
            Ok(vec![Tensor::from_f64(t[0].shape.clone(), DType::F64, v).cast(dt)])
        },
        interfaces [
            Cost::vector(draw_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Never,
            KernelFamily::Random,
            RandomValues { domain: |_, _| Some(ValueDomain::OneOf(vec![0.0, 1.0])) },
        ],
        es,
    }
}

/// The batch and class counts of a multinomial input `[batch, classes]`.
pub fn multinomial_shape(shape: &[usize]) -> Result<(usize, usize), String> {
    match shape {
        [b, c] if *c > 0 => Ok((*b, *c)),
        _ => Err(format!(
            "operand 'input' must be [batch, classes] with at least one class, but has shape \
             {shape:?}"
        )),
    }
}

fn multinomial_domain(body: &Body, op: OpId) -> Option<ValueDomain> {
    let d = body.op(op);
    let t = body.value_type(*d.operands().first()?);
    let classes = t.as_tensor()?.shape().get(1)?.as_static()?;
    Some(ValueDomain::HalfOpen(0.0, classes as f64))
}

def_op! {
    /// Class indices drawn from each row's distribution (ONNX Multinomial)
    ///
    /// `input` is `[batch, classes]` of unnormalised log-probabilities; the result is
    /// `[batch, sample_size]` of `dtype` (i32 or i64, default i32), each index the first class
    /// whose cumulative probability exceeds a uniform draw (the ChaCha8 generator of
    /// dialects/src/graph/random.rs; with `seed` every execution draws the same values).
    pub Multinomial = "graph.multinomial" {
        operands { input: FloatTensor },
        results { output: TensorOf(&[DType::I32, DType::I64]) },
        attrs {
            /// samples per row
            sample_size: I64 = 1,
            /// the result's element type (i32 or i64)
            dtype: Option<Type>,
            /// the generator's seed (ONNX's float `seed`)
            seed: Option<F64>,
        },
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: |cx: &InferCtx| {
            let a = Multinomial::attrs(cx);
            let dt = dtype_attr(a.dtype())?.unwrap_or(DType::I32);
            if !matches!(dt, DType::I32 | DType::I64) {
                return Err(format!("attribute 'dtype' must be i32 or i64, but got {dt}"));
            }
            let s = a.sample_size();
            if s < 1 {
                return Err(format!("attribute 'sample_size' must be at least 1, but got {s}"));
            }
            let Some(d) = dims_rank(cx.operand_types[0], "input", 2, "batch, classes")? else {
                return Ok(vec![Type::unranked(dt)]);
            };
            if d[1] == Dim::Static(0) {
                return Err("operand 'input' has no classes".into());
            }
            Ok(vec![Type::tensor(&[d[0], Dim::Static(s)], dt)])
        },
        semantics: |cx: &SemCtx, t: &[&Tensor]| -> SemResult {
            arity(t, 1)?;
            let a = Multinomial::attrs(cx);
            let (batch, classes) = multinomial_shape(&t[0].shape)?;
            let samples = a.sample_size().max(1) as usize;
            checked_numel(&[batch, samples])?;
            let v = multinomial_values(op_seed(a.seed()), &t[0].to_f64(), classes, samples);
            let dt = result_dtype(cx, 0, DType::I32);
            Ok(vec![Tensor::from_i64(vec![batch, samples], dt, v)])
        },
        interfaces [
            Cost::vector(draw_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Never,
            KernelFamily::Random,
            RandomValues { domain: multinomial_domain },
        ],
        es,
    }
}

/// A scalar operand of Dropout: rank 0 or one element, of the given kind.
fn dropout_operand(t: Type, what: &str, ok: bool) -> Result<(), String> {
    let one = t
        .as_tensor()
        .and_then(|t| t.dims.clone())
        .is_none_or(|d| d.iter().all(|d| !matches!(d, Dim::Static(s) if *s != 1)));
    if !one || !ok {
        return Err(format!(
            "operand '{what}' must be one {} value, but is '{t}'",
            if what == "ratio" { "float" } else { "i1" }
        ));
    }
    Ok(())
}

def_op! {
    /// Elements zeroed at random in training, the rest scaled (ONNX Dropout)
    ///
    /// `%y, %mask = graph.dropout %x, %ratio, %training {seed = 0.0} : (tensor<3x4xf32>,
    /// tensor<f32>, tensor<i1>) -> (tensor<3x4xf32>, tensor<3x4xi1>)`. `ratio` and
    /// `training` are read when the op runs: with `training` false or `ratio` 0 the result is
    /// the input and the mask all true; else each element is kept when a uniform draw (the
    /// ChaCha8 generator of dialects/src/graph/random.rs) is at least `ratio`, and scaled
    /// by `1/(1 - ratio)`; `mask` says which were kept. A ratio outside [0, 1) is an error
    /// when it is used. Not `Pure` (see the module docs). The importer emits the op only
    /// when `training` is not known at import time to be false.
    pub Dropout = "graph.dropout" {
        operands { input: FloatTensor, ratio: FloatTensor, training: AnyTensor },
        results { output: FloatTensor, mask: AnyTensor },
        attrs {
            /// the generator's seed (ONNX's `seed`, an int there)
            seed: Option<F64>,
        },
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: |cx: &InferCtx| {
            let [x, ratio, training] = cx.operand_types[..] else {
                return Err("takes operands 'input', 'ratio' and 'training'".into());
            };
            dropout_operand(ratio, "ratio", ratio.dtype().is_none_or(|d| d.is_float()))?;
            dropout_operand(training, "training", training.dtype().is_none_or(|d| d == DType::I1))?;
            Ok(vec![x, x.with_dtype(DType::I1)])
        },
        semantics: |cx: &SemCtx, t: &[&Tensor]| -> SemResult {
            arity(t, 3)?;
            let ratio = dropout_scalar(&t[1].to_f64(), "ratio")?;
            let training = dropout_scalar(&t[2].to_f64(), "training")? != 0.0;
            let seed = op_seed(Dropout::attrs(cx).seed());
            let (y, mask) = dropout_values(seed, &t[0].to_f64(), ratio, training)?;
            let mask = mask.into_iter().map(|k| f64::from(u8::from(k))).collect();
            let shape = t[0].shape.clone();
            Ok(vec![
                Tensor::from_f64(shape.clone(), t[0].dtype, y),
                Tensor::from_f64(shape, DType::I1, mask),
            ])
        },
        interfaces [
            Cost::vector(draw_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Never,
            KernelFamily::Random,
            // Its values are not one set (0 or the scaled input):
            // ge-conformance checks them against the input itself.
            RandomValues { domain: |_, _| None },
        ],
        es(none = "an importer op for ONNX Dropout whose training flag is known only at run time; \
            a model built as code leaves dropout out"),
    }
}

pub static OPS: &[&OpDef] = &[
    &RANDOM_UNIFORM,
    &RANDOM_NORMAL,
    &BERNOULLI,
    &MULTINOMIAL,
    &DROPOUT,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The same seed draws the same values; another seed others.
    #[test]
    fn a_seed_fixes_the_draws() {
        let a = uniform_values(op_seed(Some(7.0)), 16, -1.0, 1.0, DType::F32);
        assert_eq!(
            a,
            uniform_values(op_seed(Some(7.0)), 16, -1.0, 1.0, DType::F32)
        );
        assert_ne!(
            a,
            uniform_values(op_seed(Some(8.0)), 16, -1.0, 1.0, DType::F32)
        );
        assert!(a.iter().all(|&x| (-1.0..1.0).contains(&x)));
        assert_ne!(op_seed(None), op_seed(None));
    }

    /// Rounding to a narrow type never reaches `high`.
    #[test]
    fn uniform_draws_stay_below_high() {
        let v = uniform_values(1, 10_000, 0.0, 1.0, DType::F16);
        assert!(v.iter().all(|&x| (0.0..1.0).contains(&x)));
        assert_eq!(uniform_values(1, 3, 2.0, 2.0, DType::F32), [2.0; 3]);
    }

    #[test]
    fn bernoulli_and_multinomial_follow_their_probabilities() {
        let ones = bernoulli_values(3, &[0.25; 4000]).iter().sum::<f64>();
        assert!((800.0..1200.0).contains(&ones), "{ones}");
        assert_eq!(bernoulli_values(3, &[0.0, 1.0]), [0.0, 1.0]);
        // log-probabilities of [0.2, 0.8] and a class that never comes up
        let logits = [0.2f64.ln(), 0.8f64.ln(), f64::NEG_INFINITY];
        let s = multinomial_values(5, &logits, 3, 4000);
        let ones = s.iter().filter(|&&k| k == 1).count();
        assert!((3000..3400).contains(&ones), "{ones}");
        assert!(s.iter().all(|&k| k == 0 || k == 1));
        let normal = normal_values(9, 4000, 2.0, 0.5, DType::F64);
        let mean = normal.iter().sum::<f64>() / 4000.0;
        assert!((mean - 2.0).abs() < 0.05, "{mean}");
    }

    #[test]
    fn dropout_keeps_scales_or_passes_through() {
        let x = vec![2.0; 4000];
        let (y, mask) = dropout_values(3, &x, 0.75, true).unwrap();
        let kept = mask.iter().filter(|&&k| k).count();
        assert!((800..1200).contains(&kept), "{kept}");
        assert!(y
            .iter()
            .zip(&mask)
            .all(|(&v, &k)| v == if k { 8.0 } else { 0.0 }));
        for (ratio, training) in [(0.0, true), (0.5, false)] {
            let (y, mask) = dropout_values(3, &x, ratio, training).unwrap();
            assert!(y == x && mask.iter().all(|&k| k));
        }
        for bad in [1.0, -0.5, f64::NAN] {
            assert!(dropout_values(3, &x, bad, true).is_err());
        }
        assert!(dropout_scalar(&[1.0, 2.0], "ratio").is_err());
    }
}
