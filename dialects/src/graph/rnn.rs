//! Recurrent layers (ONNX RNN, GRU and LSTM, opsets 7-22): one op each, with
//! every direction, activation list, clip, `sequence_lens`, initial states,
//! peepholes and both layouts.
//!
//! The recurrence itself ([`run`]) is generic over the element type and
//! public: the semantics run it in f64 (the oracle), the runtime's native
//! kernel (runtime/src/kernels/rnn.rs) in f32 on the model's buffers — one
//! statement of the gate equations for both.

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::body::OpData;
use ge_ir::def_op;
use ge_ir::interfaces::CostCtx;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// The `direction` attribute's values.
pub const DIRECTIONS: &[&str] = &["forward", "reverse", "bidirectional"];

/// The cell of a recurrent layer and its gates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    /// `h = f(x·Wᵀ + h·Rᵀ + b)`.
    Rnn,
    /// Gates z, r, h (ONNX order); `linear_before_reset` applies the reset
    /// gate after the recurrent product.
    Gru { linear_before_reset: bool },
    /// Gates i, o, f, c (ONNX order); `input_forget` couples f = 1 - i.
    Lstm { input_forget: bool },
}

impl Cell {
    /// Gates per direction (rows of W and R are `gates · hidden`).
    pub fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru { .. } => 3,
            Cell::Lstm { .. } => 4,
        }
    }
    /// Activation functions per direction and their ONNX defaults.
    fn default_acts(self) -> &'static [&'static str] {
        match self {
            Cell::Rnn => &["Tanh"],
            Cell::Gru { .. } => &["Sigmoid", "Tanh"],
            Cell::Lstm { .. } => &["Sigmoid", "Tanh", "Tanh"],
        }
    }
}

/// The activation functions a recurrent layer takes (ONNX names).
pub const ACTIVATIONS: &[&str] = &[
    "Relu",
    "Tanh",
    "Sigmoid",
    "Affine",
    "LeakyRelu",
    "ThresholdedRelu",
    "ScaledTanh",
    "HardSigmoid",
    "Elu",
    "Softsign",
    "Softplus",
];

/// An activation with its alpha and beta.
#[derive(Clone, Copy, Debug)]
pub struct Act {
    name: &'static str,
    alpha: f64,
    beta: f64,
}

impl Act {
    /// The default (alpha, beta) of an activation and whether it reads them
    /// (the ONNX operator of the same name's defaults).
    fn params(name: &str) -> Option<(Option<f64>, Option<f64>)> {
        Some(match name {
            "Relu" | "Tanh" | "Sigmoid" | "Softsign" | "Softplus" => (None, None),
            "Affine" => (Some(1.0), Some(0.0)),
            "LeakyRelu" => (Some(0.01), None),
            "ThresholdedRelu" | "Elu" => (Some(1.0), None),
            "ScaledTanh" => (Some(1.0), Some(1.0)),
            "HardSigmoid" => (Some(0.2), Some(0.5)),
            _ => return None,
        })
    }

    pub fn apply(&self, x: f64) -> f64 {
        let (a, b) = (self.alpha, self.beta);
        match self.name {
            "Relu" => super::elementwise::relu(x),
            "Tanh" => x.tanh(),
            "Sigmoid" => 1.0 / (1.0 + (-x).exp()),
            "Affine" => a * x + b,
            "LeakyRelu" => {
                if x >= 0.0 {
                    x
                } else {
                    a * x
                }
            }
            "ThresholdedRelu" => {
                if x > a {
                    x
                } else {
                    0.0
                }
            }
            "ScaledTanh" => a * (b * x).tanh(),
            "HardSigmoid" => (a * x + b).clamp(0.0, 1.0),
            "Elu" => {
                if x >= 0.0 {
                    x
                } else {
                    a * (x.exp() - 1.0)
                }
            }
            "Softsign" => x / (1.0 + x.abs()),
            _ => (1.0 + x.exp()).ln(), // Softplus
        }
    }
}

/// Everything the recurrence needs from an op's attributes.
#[derive(Clone, Debug)]
pub struct Spec {
    pub cell: Cell,
    pub hidden: usize,
    /// 1, or 2 for bidirectional.
    pub dirs: usize,
    /// A single direction runs backwards in time.
    pub reverse: bool,
    /// `cell.default_acts().len()` activations per direction.
    acts: Vec<Act>,
    pub clip: Option<f64>,
    /// ONNX layout 1: batch first (`X` is `batch x seq x input`).
    pub batch_first: bool,
}

/// The attributes every recurrent op has, as read from its attribute view.
pub struct CommonAttrs<'a> {
    pub hidden_size: Option<i64>,
    pub direction: &'a str,
    pub activations: Option<Vec<&'a str>>,
    pub alpha: Option<Vec<f64>>,
    pub beta: Option<Vec<f64>>,
    pub clip: Option<f64>,
    pub layout: i64,
}

impl Spec {
    pub fn new(cell: Cell, a: CommonAttrs) -> Result<Spec, String> {
        let hidden = a.hidden_size.ok_or("requires attribute 'hidden_size'")?;
        if hidden < 1 {
            return Err(format!(
                "attribute 'hidden_size' must be >= 1, but got {hidden}"
            ));
        }
        let dirs = if a.direction == "bidirectional" { 2 } else { 1 };
        let per = cell.default_acts().len();
        let names: Vec<&str> = match a.activations {
            None => cell.default_acts().repeat(dirs),
            Some(v) if v.len() == per * dirs => v,
            // One list for both directions (onnxruntime takes it too).
            Some(v) if v.len() == per => v.repeat(dirs),
            Some(v) => {
                return Err(format!(
                "attribute 'activations' must name {} functions ({per} per direction), but has {}",
                per * dirs,
                v.len()
            ))
            }
        };
        // alpha and beta are consumed in order by the functions that take them.
        let (mut alphas, mut betas) = (
            a.alpha.unwrap_or_default().into_iter(),
            a.beta.unwrap_or_default().into_iter(),
        );
        let mut acts = vec![];
        for n in names {
            let Some(&name) = ACTIVATIONS.iter().find(|k| k.eq_ignore_ascii_case(n)) else {
                return Err(format!(
                    "unknown activation '{n}' (expected one of {})",
                    ACTIVATIONS.join(", ")
                ));
            };
            let (da, db) = Act::params(name).unwrap_or((None, None));
            let alpha = da.map_or(0.0, |d| alphas.next().unwrap_or(d));
            let beta = db.map_or(0.0, |d| betas.next().unwrap_or(d));
            acts.push(Act { name, alpha, beta });
        }
        if let Some(c) = a.clip {
            if c.is_nan() || c <= 0.0 {
                return Err(format!("attribute 'clip' must be > 0, but got {c}"));
            }
        }
        if !matches!(a.layout, 0 | 1) {
            return Err(format!(
                "attribute 'layout' must be 0 or 1, but got {}",
                a.layout
            ));
        }
        Ok(Spec {
            cell,
            hidden: hidden as usize,
            dirs,
            reverse: a.direction == "reverse",
            acts,
            clip: a.clip,
            batch_first: a.layout == 1,
        })
    }

    fn act(&self, d: usize, k: usize) -> &Act {
        &self.acts[d * self.cell.default_acts().len() + k]
    }

    /// The result shapes (`Y`, `Y_h`, and `Y_c` for an LSTM) for `seq`
    /// steps of `batch` sequences.
    pub fn result_dims<D: Copy>(&self, seq: D, batch: D, dirs: D, hidden: D) -> Vec<Vec<D>> {
        let (y, state) = if self.batch_first {
            (vec![batch, seq, dirs, hidden], vec![batch, dirs, hidden])
        } else {
            (vec![seq, dirs, batch, hidden], vec![dirs, batch, hidden])
        };
        let mut out = vec![y, state.clone()];
        if matches!(self.cell, Cell::Lstm { .. }) {
            out.push(state);
        }
        out
    }
}

/// `a · b` with four partial sums.
fn dot<T: Real>(a: &[T], b: &[T]) -> T {
    let mut s = [T::default(); 4];
    let n = a.len().min(b.len());
    let (mut ca, mut cb) = (a[..n].chunks_exact(4), b[..n].chunks_exact(4));
    for (x, y) in (&mut ca).zip(&mut cb) {
        for k in 0..4 {
            s[k] = s[k] + x[k] * y[k];
        }
    }
    let mut t = (s[0] + s[1]) + (s[2] + s[3]);
    for (&x, &y) in ca.remainder().iter().zip(cb.remainder()) {
        t = t + x * y;
    }
    t
}

/// The operands of a recurrent layer, flat in their ONNX layouts.
pub struct Operands<'a, T> {
    pub x: &'a [T],
    pub w: &'a [T],
    pub r: &'a [T],
    pub b: Option<&'a [T]>,
    pub seq_lens: Option<&'a [i64]>,
    pub h0: Option<&'a [T]>,
    pub c0: Option<&'a [T]>,
    pub p: Option<&'a [T]>,
}

/// Sizes of a run: steps, sequences, input features.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    pub seq: usize,
    pub batch: usize,
    pub input: usize,
}

/// The shapes of the operands checked against the spec; the run's sizes.
/// `shapes` are those of X, W, R and then the optional operands (`None`
/// when absent) in op order: B, sequence_lens, initial_h, initial_c, P.
pub fn check_shapes(spec: &Spec, shapes: &[Option<&[usize]>]) -> Result<Sizes, String> {
    let get = |i: usize| shapes.get(i).copied().flatten();
    let x = get(0).ok_or("missing operand 'input'")?;
    let [a, b2, input] = x else {
        return Err(format!(
            "operand 'input' must have rank 3, but has shape {x:?}"
        ));
    };
    let (seq, batch) = if spec.batch_first {
        (*b2, *a)
    } else {
        (*a, *b2)
    };
    let (d, h, gh) = (spec.dirs, spec.hidden, spec.cell.gates() * spec.hidden);
    let state = if spec.batch_first {
        vec![batch, d, h]
    } else {
        vec![d, batch, h]
    };
    let want: [(&str, Vec<usize>); 8] = [
        ("input", x.to_vec()),
        ("w", vec![d, gh, *input]),
        ("r", vec![d, gh, h]),
        ("bias", vec![d, 2 * gh]),
        ("sequence_lens", vec![batch]),
        ("initial_h", state.clone()),
        ("initial_c", state),
        ("peepholes", vec![d, 3 * h]),
    ];
    for (i, (name, shape)) in want.iter().enumerate() {
        if i < 3 && get(i).is_none() {
            return Err(format!("missing operand '{name}'"));
        }
        if let Some(s) = get(i) {
            if s != shape.as_slice() {
                return Err(format!(
                    "operand '{name}' must have shape {shape:?}, but has {s:?}"
                ));
            }
        }
    }
    Ok(Sizes {
        seq,
        batch,
        input: *input,
    })
}

/// The results of [`run`]: `Y`, `Y_h` and (LSTM) `Y_c` in the spec's layout.
pub struct Outputs<T> {
    pub y: Vec<T>,
    pub y_h: Vec<T>,
    pub y_c: Vec<T>,
}

/// Run the layer over every direction and sequence (ONNX semantics;
/// onnxruntime's for `sequence_lens`: sequence `b` runs its first
/// `sequence_lens[b]` steps — backwards from the last of them in the reverse
/// direction — `Y` is zero past them and `Y_h`/`Y_c` hold the state after
/// them). The shapes must have passed [`check_shapes`].
pub fn run<T: Real>(spec: &Spec, n: Sizes, o: &Operands<T>) -> Result<Outputs<T>, String> {
    let (d_n, h, b_n) = (spec.dirs, spec.hidden, n.batch);
    let y_len = checked_numel(&[n.seq, d_n, b_n, h])?;
    let mut out = Outputs {
        y: vec![T::default(); y_len],
        y_h: vec![T::default(); d_n * b_n * h],
        y_c: vec![T::default(); d_n * b_n * h],
    };
    for d in 0..d_n {
        for b in 0..b_n {
            let len = match o.seq_lens {
                Some(l) => usize::try_from(l[b])
                    .ok()
                    .filter(|&v| v <= n.seq)
                    .ok_or_else(|| {
                        format!("sequence_lens[{b}] = {} is outside 0..={}", l[b], n.seq)
                    })?,
                None => n.seq,
            };
            run_sequence(spec, n, o, d, b, len, &mut out);
        }
    }
    Ok(out)
}

/// [`run`] on the operands loaded per group in op order (X, W, R, B, the
/// sequence lengths apart as `lens`, initial_h, initial_c, P; `None` when
/// absent): what the semantics and the native kernel both call.
pub fn run_groups<T: Real>(
    spec: &Spec,
    n: Sizes,
    g: &[Option<Vec<T>>],
    lens: Option<&[i64]>,
) -> Result<Outputs<T>, String> {
    let at = |i: usize| g.get(i).and_then(|v| v.as_deref());
    run(
        spec,
        n,
        &Operands {
            x: at(0).unwrap_or_default(),
            w: at(1).unwrap_or_default(),
            r: at(2).unwrap_or_default(),
            b: at(3),
            seq_lens: lens,
            h0: at(5),
            c0: at(6),
            p: at(7),
        },
    )
}

/// Offsets into the flat buffers for the spec's layout.
struct Layout {
    batch_first: bool,
    n: Sizes,
    dirs: usize,
    hidden: usize,
}

impl Layout {
    fn x(&self, t: usize, b: usize) -> usize {
        let row = if self.batch_first {
            b * self.n.seq + t
        } else {
            t * self.n.batch + b
        };
        row * self.n.input
    }
    fn y(&self, t: usize, d: usize, b: usize) -> usize {
        let row = if self.batch_first {
            (b * self.n.seq + t) * self.dirs + d
        } else {
            (t * self.dirs + d) * self.n.batch + b
        };
        row * self.hidden
    }
    fn state(&self, d: usize, b: usize) -> usize {
        let row = if self.batch_first {
            b * self.dirs + d
        } else {
            d * self.n.batch + b
        };
        row * self.hidden
    }
}

/// One sequence `b` in direction `d` for its first `len` steps.
fn run_sequence<T: Real>(
    spec: &Spec,
    n: Sizes,
    o: &Operands<T>,
    d: usize,
    b: usize,
    len: usize,
    out: &mut Outputs<T>,
) {
    let h_n = spec.hidden;
    let gh = spec.cell.gates() * h_n;
    let lay = Layout {
        batch_first: spec.batch_first,
        n,
        dirs: spec.dirs,
        hidden: h_n,
    };
    let w = &o.w[d * gh * n.input..(d + 1) * gh * n.input];
    let r = &o.r[d * gh * h_n..(d + 1) * gh * h_n];
    let zeros = vec![T::default(); 2 * gh];
    let bias =
        o.b.map_or(&zeros[..], |bb| &bb[d * 2 * gh..(d + 1) * 2 * gh]);
    let (wb, rb) = bias.split_at(gh);
    let s0 = lay.state(d, b);
    let mut hs =
        o.h0.map_or(vec![T::default(); h_n], |v| v[s0..s0 + h_n].to_vec());
    let mut cs =
        o.c0.map_or(vec![T::default(); h_n], |v| v[s0..s0 + h_n].to_vec());
    let peep = o.p.map(|p| &p[d * 3 * h_n..(d + 1) * 3 * h_n]);
    let backwards = spec.reverse || d == 1;
    let clip = |v: f64| spec.clip.map_or(v, |c| v.clamp(-c, c));
    let act = |k: usize, v: f64| spec.act(d, k).apply(clip(v));
    // Pre-activations x·Wᵀ + Wb (+ h·Rᵀ + Rb where the cell adds it as is).
    let mut pre = vec![0.0f64; gh];
    let mut hn = vec![T::default(); h_n];
    for s in 0..len {
        let t = if backwards { len - 1 - s } else { s };
        let xt = &o.x[lay.x(t, b)..lay.x(t, b) + n.input];
        for (j, p) in pre.iter_mut().enumerate() {
            *p = (dot(&w[j * n.input..(j + 1) * n.input], xt) + wb[j]).get();
        }
        let rec = |j: usize, h: &[T]| (dot(&r[j * h_n..(j + 1) * h_n], h) + rb[j]).get();
        match spec.cell {
            Cell::Rnn => {
                for j in 0..h_n {
                    hn[j] = T::of(act(0, pre[j] + rec(j, &hs)));
                }
            }
            Cell::Gru {
                linear_before_reset,
            } => {
                let z: Vec<f64> = (0..h_n).map(|j| act(0, pre[j] + rec(j, &hs))).collect();
                let rg: Vec<f64> = (0..h_n)
                    .map(|j| act(0, pre[h_n + j] + rec(h_n + j, &hs)))
                    .collect();
                let reset: Vec<T> = (0..h_n).map(|j| T::of(rg[j]) * hs[j]).collect();
                for j in 0..h_n {
                    let k = 2 * h_n + j;
                    let cand = if linear_before_reset {
                        act(1, pre[k] + rg[j] * rec(k, &hs))
                    } else {
                        act(1, pre[k] + rec(k, &reset))
                    };
                    hn[j] = T::of((1.0 - z[j]) * cand + z[j] * hs[j].get());
                }
            }
            Cell::Lstm { input_forget } => {
                let pv = |k: usize, j: usize| peep.map_or(0.0, |p| p[k * h_n + j].get());
                for j in 0..h_n {
                    let c_prev = cs[j].get();
                    let i = act(0, pre[j] + rec(j, &hs) + pv(0, j) * c_prev);
                    let f = if input_forget {
                        1.0 - i
                    } else {
                        act(
                            0,
                            pre[2 * h_n + j] + rec(2 * h_n + j, &hs) + pv(2, j) * c_prev,
                        )
                    };
                    let g = act(1, pre[3 * h_n + j] + rec(3 * h_n + j, &hs));
                    let c = T::of(f * c_prev + i * g);
                    let og = act(0, pre[h_n + j] + rec(h_n + j, &hs) + pv(1, j) * c.get());
                    cs[j] = c;
                    hn[j] = T::of(og * spec.act(d, 2).apply(c.get()));
                }
            }
        }
        std::mem::swap(&mut hs, &mut hn);
        let yo = lay.y(t, d, b);
        out.y[yo..yo + h_n].copy_from_slice(&hs);
    }
    out.y_h[s0..s0 + h_n].copy_from_slice(&hs);
    out.y_c[s0..s0 + h_n].copy_from_slice(&cs);
}

// ---- the ops ----------------------------------------------------------------

/// Operand groups after X, W, R: B, sequence_lens, initial_h, initial_c, P
/// (the first `k` of them for an op with `k` optional groups).
const OPTIONAL: usize = 5;

/// For each of the op's operand groups, the index of its operand (`None`
/// when an optional one is absent), read through `operand_segment_sizes`.
pub fn operand_slots(def: &OpDef, d: &OpData) -> Vec<Option<usize>> {
    (0..def.operands.len())
        .map(|g| {
            def.operand_range(d, g)
                .filter(|r| r.len() == 1)
                .map(|r| r.start)
        })
        .collect()
}

/// The common attributes of an attribute view.
macro_rules! common {
    ($a:expr) => {
        CommonAttrs {
            hidden_size: $a.hidden_size(),
            direction: $a.direction(),
            activations: $a.activations(),
            alpha: $a.activation_alpha(),
            beta: $a.activation_beta(),
            clip: $a.clip(),
            layout: $a.layout(),
        }
    };
}

/// The cell and spec of a recurrent op from its attributes.
pub fn spec_of(def: &OpDef, d: &OpData) -> Result<Spec, String> {
    if std::ptr::eq(def, &RNN) {
        let a = Rnn::attrs(d);
        Spec::new(Cell::Rnn, common!(a))
    } else if std::ptr::eq(def, &GRU) {
        let a = Gru::attrs(d);
        let lbr = a.linear_before_reset() != 0;
        Spec::new(
            Cell::Gru {
                linear_before_reset: lbr,
            },
            common!(a),
        )
    } else {
        let a = Lstm::attrs(d);
        let input_forget = a.input_forget() != 0;
        Spec::new(Cell::Lstm { input_forget }, common!(a))
    }
}

fn infer_recurrent(cx: &InferCtx, def: &OpDef, spec: Spec) -> Result<Vec<Type>, String> {
    let ts = cx.operand_types;
    let x = dims_rank(ts[0], "input", 3, "")?;
    let dt = dtype_of(ts[0])?;
    let (seq, batch) = match &x {
        Some(x) if spec.batch_first => (x[1], x[0]),
        Some(x) => (x[0], x[1]),
        None => (Dim::Unknown, Dim::Unknown),
    };
    let h = Dim::Static(spec.hidden as i64);
    let dirs = Dim::Static(spec.dirs as i64);
    // Static operand shapes are checked now (dynamic ones at run time).
    let mut shapes: Vec<Option<Vec<usize>>> = vec![];
    let mut start = 0;
    for (g, &k) in cx.group_sizes.iter().enumerate().take(def.operands.len()) {
        let s = (k == 1)
            .then(|| ts.get(start).and_then(|t| t.as_tensor()?.static_shape()))
            .flatten()
            .map(|s| s.into_iter().map(|v| v as usize).collect());
        shapes.push(if g == 0 { None } else { s });
        start += k;
    }
    let seq_n = seq.as_static().map(|v| v as usize);
    let batch_n = batch.as_static().map(|v| v as usize);
    let input = x
        .as_ref()
        .and_then(|x| x[2].as_static())
        .map(|v| v as usize);
    if let (Some(s), Some(b), Some(i)) = (seq_n, batch_n, input) {
        shapes[0] = Some(if spec.batch_first {
            vec![b, s, i]
        } else {
            vec![s, b, i]
        });
        if shapes[1].is_some() && shapes[2].is_some() {
            let refs: Vec<Option<&[usize]>> = shapes.iter().map(|s| s.as_deref()).collect();
            check_shapes(&spec, &refs)?;
        }
    }
    Ok(spec
        .result_dims(seq, batch, dirs, h)
        .iter()
        .map(|dims| Type::tensor(dims, dt))
        .collect())
}

fn sem_recurrent(cx: &SemCtx, t: &[&Tensor], def: &OpDef) -> SemResult {
    let d = cx.body.op(cx.op);
    let spec = spec_of(def, d)?;
    let slots = operand_slots(def, d);
    let get = |g: usize| {
        slots
            .get(g)
            .copied()
            .flatten()
            .and_then(|i| t.get(i).copied())
    };
    let shapes: Vec<Option<&[usize]>> = (0..3 + OPTIONAL)
        .map(|g| get(g).map(|t| t.shape.as_slice()))
        .collect();
    let n = check_shapes(&spec, &shapes)?;
    let groups: Vec<Option<Vec<f64>>> = (0..3 + OPTIONAL)
        .map(|g| get(g).filter(|_| g != 4).map(|t| t.to_f64()))
        .collect();
    let lens = get(4).map(|t| t.to_i64());
    let out = run_groups(&spec, n, &groups, lens.as_deref())?;
    let dt = t[0].dtype;
    let shapes = spec.result_dims(n.seq, n.batch, spec.dirs, spec.hidden);
    let mut res = vec![out.y, out.y_h, out.y_c];
    res.truncate(shapes.len());
    Ok(res
        .into_iter()
        .zip(shapes)
        .enumerate()
        .map(|(i, (v, s))| Tensor::from_f64(s, result_dtype(cx, i, dt), v))
        .collect())
}

fn infer_rnn(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = Rnn::attrs(cx);
    infer_recurrent(cx, &RNN, Spec::new(Cell::Rnn, common!(a))?)
}

fn infer_gru(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = Gru::attrs(cx);
    let cell = Cell::Gru {
        linear_before_reset: a.linear_before_reset() != 0,
    };
    infer_recurrent(cx, &GRU, Spec::new(cell, common!(a))?)
}

fn infer_lstm(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = Lstm::attrs(cx);
    let cell = Cell::Lstm {
        input_forget: a.input_forget() != 0,
    };
    infer_recurrent(cx, &LSTM, Spec::new(cell, common!(a))?)
}

fn sem_rnn(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    sem_recurrent(cx, t, &RNN)
}

fn sem_gru(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    sem_recurrent(cx, t, &GRU)
}

fn sem_lstm(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    sem_recurrent(cx, t, &LSTM)
}

/// Two multiply-adds per weight per step and sequence (`W` and `R`, every
/// direction): `2 · steps · batch · (|W| + |R|)`.
fn recurrent_flops(cx: &CostCtx) -> f64 {
    let x = cx.operand_dims(0);
    let steps_batch: f64 = x.iter().take(2).product();
    let weights: f64 = [1, 2]
        .iter()
        .map(|&i| cx.operand_dims(i).iter().product::<f64>())
        .sum();
    2.0 * steps_batch * weights
}

const SEQ_LENS: &[DType] = &[DType::I32, DType::I64];

def_op! {
    /// A simple recurrent layer (ONNX RNN)
    ///
    /// `H_t = f(X_t·Wᵀ + H_{t-1}·Rᵀ + Wb + Rb)` over `seq` steps, forward, reverse or both
    /// (`direction`). `input` is `seq x batch x input_size` (`layout` 1: batch first), `w` is
    /// `dirs x hidden x input_size`, `r` is `dirs x hidden x hidden`, `bias` is `dirs x
    /// 2·hidden` (Wb then Rb). `sequence_lens` (i32/i64, one per sequence) stops a sequence
    /// early: its `y` rows past the end are zero and `y_h` is its state at the end.
    /// `initial_h` is `dirs x batch x hidden`. Results: `y` (`seq x dirs x batch x hidden`)
    /// and `y_h` (`dirs x batch x hidden`), batch first with `layout` 1. `clip` bounds the
    /// pre-activations to `[-clip, clip]`.
    pub Rnn = "graph.rnn" {
        operands {
            input: FloatTensor, w: FloatTensor, r: FloatTensor, bias: Option<FloatTensor>,
            sequence_lens: Option<TensorOf(SEQ_LENS)>, initial_h: Option<FloatTensor>,
        },
        results { y: FloatTensor, y_h: FloatTensor },
        attrs {
            /// the number of hidden units
            hidden_size: I64,
            /// forward, reverse or bidirectional
            direction: Enum(DIRECTIONS) = "forward",
            /// the activation f per direction (default Tanh): Relu, Tanh, Sigmoid, Affine,
            /// LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus
            activations: Option<StrArray>,
            /// alpha of the activations that take one, in order
            activation_alpha: Option<F64Array>,
            /// beta of the activations that take one, in order
            activation_beta: Option<F64Array>,
            /// bound of the pre-activations
            clip: Option<F64>,
            /// 0: seq x batch x ..., 1: batch x seq x ...
            layout: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_rnn,
        semantics: sem_rnn,
        interfaces [
            Cost::cube(recurrent_flops),
            FusionPattern::Opaque,
            CUBE_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Recurrent,
        ],
        es(results = RnnResults),
    }
}

def_op! {
    /// A gated recurrent unit layer (ONNX GRU)
    ///
    /// Gates z (update), r (reset) and h (candidate), in that order in the rows of `w` (`dirs
    /// x 3·hidden x input_size`), `r` (`dirs x 3·hidden x hidden`) and `bias` (`dirs x
    /// 6·hidden`): `z = f(X·Wzᵀ + H·Rzᵀ + Wbz + Rbz)`, likewise `r`, `h = g(X·Whᵀ + (r ⊙
    /// H)·Rhᵀ + Rbh + Wbh)` (with `linear_before_reset`: `g(X·Whᵀ + Wbh + r ⊙ (H·Rhᵀ +
    /// Rbh))`), `H' = (1 - z) ⊙ h + z ⊙ H`. Defaults f = Sigmoid, g = Tanh. Directions,
    /// `sequence_lens`, `initial_h`, `layout`, `clip` and the results as for `graph.rnn`.
    pub Gru = "graph.gru" {
        operands {
            input: FloatTensor, w: FloatTensor, r: FloatTensor, bias: Option<FloatTensor>,
            sequence_lens: Option<TensorOf(SEQ_LENS)>, initial_h: Option<FloatTensor>,
        },
        results { y: FloatTensor, y_h: FloatTensor },
        attrs {
            /// the number of hidden units
            hidden_size: I64,
            /// forward, reverse or bidirectional
            direction: Enum(DIRECTIONS) = "forward",
            /// f and g per direction (default Sigmoid, Tanh)
            activations: Option<StrArray>,
            /// alpha of the activations that take one, in order
            activation_alpha: Option<F64Array>,
            /// beta of the activations that take one, in order
            activation_beta: Option<F64Array>,
            /// bound of the pre-activations
            clip: Option<F64>,
            /// 0: seq x batch x ..., 1: batch x seq x ...
            layout: I64 = 0,
            /// 1: the reset gate multiplies the recurrent product
            linear_before_reset: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_gru,
        semantics: sem_gru,
        interfaces [
            Cost::cube(recurrent_flops),
            FusionPattern::Opaque,
            CUBE_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Recurrent,
        ],
        es(results = GruResults),
    }
}

def_op! {
    /// A long short-term memory layer (ONNX LSTM)
    ///
    /// Gates i, o, f, c in the rows of `w` (`dirs x 4·hidden x input_size`), `r` and `bias`
    /// (`dirs x 8·hidden`); `peepholes` (`dirs x 3·hidden`: Pi, Po, Pf). `i = f(X·Wiᵀ +
    /// H·Riᵀ + Pi ⊙ C + Wbi + Rbi)`, `f` likewise (or `1 - i` with `input_forget`), `c =
    /// g(X·Wcᵀ + H·Rcᵀ + Wbc + Rbc)`, `C' = f ⊙ C + i ⊙ c`, `o = f(X·Woᵀ + H·Roᵀ + Po ⊙ C' +
    /// Wbo + Rbo)`, `H' = o ⊙ h(C')`. Defaults f = Sigmoid, g = h = Tanh. Results `y`, `y_h`
    /// and `y_c` (the cell state, shaped as `y_h`); the rest as for `graph.rnn`.
    pub Lstm = "graph.lstm" {
        operands {
            input: FloatTensor, w: FloatTensor, r: FloatTensor, bias: Option<FloatTensor>,
            sequence_lens: Option<TensorOf(SEQ_LENS)>, initial_h: Option<FloatTensor>,
            initial_c: Option<FloatTensor>, peepholes: Option<FloatTensor>,
        },
        results { y: FloatTensor, y_h: FloatTensor, y_c: FloatTensor },
        attrs {
            /// the number of hidden units
            hidden_size: I64,
            /// forward, reverse or bidirectional
            direction: Enum(DIRECTIONS) = "forward",
            /// f, g and h per direction (default Sigmoid, Tanh, Tanh)
            activations: Option<StrArray>,
            /// alpha of the activations that take one, in order
            activation_alpha: Option<F64Array>,
            /// beta of the activations that take one, in order
            activation_beta: Option<F64Array>,
            /// bound of the pre-activations
            clip: Option<F64>,
            /// 0: seq x batch x ..., 1: batch x seq x ...
            layout: I64 = 0,
            /// 1: the forget gate is 1 - the input gate
            input_forget: I64 = 0,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_lstm,
        semantics: sem_lstm,
        interfaces [
            Cost::cube(recurrent_flops),
            FusionPattern::Opaque,
            CUBE_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Recurrent,
        ],
        es(results = LstmResults),
    }
}

pub static OPS: &[&OpDef] = &[&RNN, &GRU, &LSTM];

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(cell: Cell, direction: &str, hidden: i64) -> Spec {
        Spec::new(
            cell,
            CommonAttrs {
                hidden_size: Some(hidden),
                direction,
                activations: None,
                alpha: None,
                beta: None,
                clip: None,
                layout: 0,
            },
        )
        .unwrap()
    }

    /// One hidden unit, weights 1: h_t = tanh(x_t + h_{t-1}); the reverse
    /// direction starts from the last step; a sequence length of 1 stops
    /// after the first step with zeros after it.
    #[test]
    fn rnn_by_hand() {
        let x = [0.5f64, -0.25, 1.0];
        let w = [1.0];
        let fwd = spec(Cell::Rnn, "forward", 1);
        let n = check_shapes(
            &fwd,
            &[Some(&[3, 1, 1]), Some(&[1, 1, 1]), Some(&[1, 1, 1])],
        )
        .unwrap();
        let ops = Operands {
            x: &x,
            w: &w,
            r: &w,
            b: None,
            seq_lens: None,
            h0: None,
            c0: None,
            p: None,
        };
        let out = run(&fwd, n, &ops).unwrap();
        let h1 = 0.5f64.tanh();
        let h2 = (-0.25 + h1).tanh();
        let h3 = (1.0 + h2).tanh();
        assert_eq!(out.y, vec![h1, h2, h3]);
        assert_eq!(out.y_h, vec![h3]);
        let rev = spec(Cell::Rnn, "reverse", 1);
        let out = run(&rev, n, &ops).unwrap();
        assert_eq!(out.y[2], 1.0f64.tanh());
        let lens = [1i64];
        let short = Operands {
            seq_lens: Some(&lens),
            ..ops
        };
        let out = run(&fwd, n, &short).unwrap();
        assert_eq!(out.y, vec![h1, 0.0, 0.0]);
        assert_eq!(out.y_h, vec![h1]);
        let bad = [4i64];
        assert!(run(
            &fwd,
            n,
            &Operands {
                seq_lens: Some(&bad),
                ..ops
            }
        )
        .is_err());
    }

    #[test]
    fn shapes_are_checked() {
        let s = spec(
            Cell::Lstm {
                input_forget: false,
            },
            "bidirectional",
            2,
        );
        let ok = check_shapes(&s, &[Some(&[5, 3, 4]), Some(&[2, 8, 4]), Some(&[2, 8, 2])]).unwrap();
        assert_eq!((ok.seq, ok.batch, ok.input), (5, 3, 4));
        let e = check_shapes(&s, &[Some(&[5, 3, 4]), Some(&[1, 8, 4]), Some(&[2, 8, 2])]);
        assert!(e
            .unwrap_err()
            .contains("operand 'w' must have shape [2, 8, 4]"));
        assert!(Spec::new(
            Cell::Rnn,
            CommonAttrs {
                hidden_size: Some(1),
                direction: "forward",
                activations: Some(vec!["Gelu"]),
                alpha: None,
                beta: None,
                clip: None,
                layout: 0,
            }
        )
        .is_err());
    }
}
