//! Sequence mixers of linear-attention and state-space models (ONNX opset
//! 27): LinearAttention (the recurrent linear / gated / delta / gated-delta
//! attention of RetNet, GLA, DeltaNet, Qwen3.5) and CausalConvWithState (the
//! depthwise causal convolution with a carried state of Mamba and Gated
//! DeltaNet). Both carry a state from one call to the next, so decoding one
//! token at a time gives the same results as a whole prefill.
//!
//! The computations ([`linear_attention`], [`causal_conv`]) are generic over
//! the element type and shared: the op semantics run them in f64, the
//! runtime's native kernels (runtime/src/kernels/sequence_mixing.rs) in f32,
//! which is what the ONNX reference accumulates in.

use super::elementwise::COMPUTE_FORMAT;
use super::opkit::*;
use crate::interfaces::*;
use ge_ir::def_op;
use ge_ir::interfaces::CostCtx;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{InferCtx, OpDef};
use ge_ir::tensor::{round_f, Tensor};
use ge_ir::{DType, Dim, Type};

type SemResult = Result<Vec<Tensor>, String>;

/// The values of LinearAttention's `update_rule`.
pub const UPDATE_RULES: &[&str] = &["linear", "gated", "delta", "gated_delta"];

/// The values of CausalConvWithState's `activation` (`swish` is `silu`).
pub const CONV_ACTIVATIONS: &[&str] = &["none", "silu", "swish"];

/// The operand groups of the two ops with optional operands, as
/// `operand_segment_sizes` orders them: the index of each present operand.
pub fn operand_slots(b: &ge_ir::body::Body, o: ge_ir::body::OpId) -> Vec<Option<usize>> {
    let d = b.op(o);
    let Some(def) = d.def else { return vec![] };
    super::rnn::operand_slots(def, d)
}

// ---- LinearAttention ---------------------------------------------------------------

/// The attributes of a linear attention, checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearAttn {
    pub q_heads: usize,
    pub kv_heads: usize,
    pub gated: bool,
    pub delta: bool,
    /// 0: `1/sqrt(d_k)`.
    pub scale: f64,
}

impl LinearAttn {
    pub fn of(src: &impl ge_ir::opdef::AttrSource) -> Result<LinearAttn, String> {
        let a = LinearAttention::attrs(src);
        let (q, kv) = (a.q_num_heads(), a.kv_num_heads());
        let (Some(q), Some(kv)) = (q, kv) else {
            return Err("attributes 'q_num_heads' and 'kv_num_heads' are required".into());
        };
        if q <= 0 || kv <= 0 || q % kv != 0 {
            return Err(format!(
                "attribute 'q_num_heads' ({q}) must be a positive multiple of 'kv_num_heads' ({kv})"
            ));
        }
        let rule = a.update_rule();
        if !UPDATE_RULES.contains(&rule) {
            return Err(format!(
                "attribute 'update_rule' must be one of {}, but got '{rule}'",
                UPDATE_RULES.join(", ")
            ));
        }
        Ok(LinearAttn {
            q_heads: q as usize,
            kv_heads: kv as usize,
            gated: rule.starts_with("gated"),
            delta: rule.ends_with("delta"),
            scale: a.scale(),
        })
    }
}

/// The sizes of a linear attention: batch, steps, head sizes, and how many
/// values `decay` and `beta` hold per step and KV head (`d_k` or 1; 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinearGeom {
    pub batch: usize,
    pub steps: usize,
    pub dk: usize,
    pub dv: usize,
    pub decay_per_key: bool,
    /// `beta` has one value per step for all heads (`B x T x 1`).
    pub beta_shared: bool,
}

/// The shapes of the operands that are present (`None`: absent) in order
/// query, key, value, past_state, decay, beta.
pub fn linear_geometry(
    a: &LinearAttn,
    shapes: [Option<&[usize]>; 6],
) -> Result<LinearGeom, String> {
    let [Some(q), Some(k), Some(v), past, decay, beta] = shapes else {
        return Err("query, key and value are required".into());
    };
    for (name, s) in [("query", q), ("key", k), ("value", v)] {
        if s.len() != 3 {
            return Err(format!(
                "operand '{name}' must have rank 3 (B x T x heads·size), but has shape {s:?}"
            ));
        }
    }
    let (b, t) = (q[0], q[1]);
    if k[..2] != [b, t] || v[..2] != [b, t] {
        return Err(format!(
            "query {q:?}, key {k:?} and value {v:?} must agree in batch and steps"
        ));
    }
    let (hq, hkv) = (a.q_heads, a.kv_heads);
    if q[2] % hq != 0 || v[2] % hkv != 0 || q[2] == 0 {
        return Err(format!(
            "query's last dim {} must be a positive multiple of q_num_heads {hq} and value's {} of kv_num_heads {hkv}",
            q[2], v[2]
        ));
    }
    let (dk, dv) = (q[2] / hq, v[2] / hkv);
    if k[2] != hkv * dk {
        return Err(format!(
            "key's last dim {} must be kv_num_heads · d_k = {}",
            k[2],
            hkv * dk
        ));
    }
    if let Some(p) = past {
        if p != [b, hkv, dk, dv] {
            return Err(format!(
                "operand 'past_state' of shape {p:?} must have shape [{b}, {hkv}, {dk}, {dv}]"
            ));
        }
    }
    let rule = match (a.gated, a.delta) {
        (false, false) => "linear",
        (true, false) => "gated",
        (false, true) => "delta",
        (true, true) => "gated_delta",
    };
    if a.gated != decay.is_some() {
        return Err(format!(
            "update rule '{rule}' {} the 'decay' operand",
            if a.gated { "requires" } else { "forbids" }
        ));
    }
    if a.delta != beta.is_some() {
        return Err(format!(
            "update rule '{rule}' {} the 'beta' operand",
            if a.delta { "requires" } else { "forbids" }
        ));
    }
    let mut decay_per_key = false;
    if let Some(d) = decay {
        decay_per_key = match *d {
            [db, dt, n] if db == b && dt == t && n == hkv * dk => true,
            [db, dt, n] if db == b && dt == t && n == hkv => false,
            _ => {
                return Err(format!(
                    "operand 'decay' of shape {d:?} must be [{b}, {t}, {}] or [{b}, {t}, {hkv}]",
                    hkv * dk
                ))
            }
        };
    }
    let mut beta_shared = false;
    if let Some(s) = beta {
        beta_shared = match *s {
            [sb, st, n] if sb == b && st == t && n == hkv => false,
            [sb, st, 1] if sb == b && st == t => true,
            _ => {
                return Err(format!(
                    "operand 'beta' of shape {s:?} must be [{b}, {t}, {hkv}] or [{b}, {t}, 1]"
                ))
            }
        };
    }
    Ok(LinearGeom {
        batch: b,
        steps: t,
        dk,
        dv,
        decay_per_key,
        beta_shared,
    })
}

/// Run the recurrence token by token. `state` holds the past state (`B x
/// H_kv x d_k x d_v`, zeros without one) and ends as the present state;
/// `out` is `B x T x (H_q·d_v)`. Each KV head's state is read by its
/// `H_q / H_kv` consecutive query heads.
#[allow(clippy::too_many_arguments)]
pub fn linear_attention<T: Real>(
    a: &LinearAttn,
    g: &LinearGeom,
    q: &[T],
    k: &[T],
    v: &[T],
    decay: Option<&[T]>,
    beta: Option<&[T]>,
    state: &mut [T],
    out: &mut [T],
) {
    let (hq, hkv, dk, dv, t) = (a.q_heads, a.kv_heads, g.dk, g.dv, g.steps);
    let group = hq / hkv;
    let scale = T::of(if a.scale == 0.0 {
        1.0 / (dk as f64).sqrt()
    } else {
        a.scale
    });
    let decay_n = if g.decay_per_key { hkv * dk } else { hkv };
    let beta_n = if g.beta_shared { 1 } else { hkv };
    let mut vt = vec![T::default(); dv];
    let mut gate = vec![T::default(); dk];
    for b in 0..g.batch {
        for h in 0..hkv {
            let s = &mut state[(b * hkv + h) * dk * dv..][..dk * dv];
            for i in 0..t {
                let bt = b * t + i;
                let kt = &k[(bt * hkv + h) * dk..][..dk];
                vt.copy_from_slice(&v[(bt * hkv + h) * dv..][..dv]);
                if let Some(dec) = decay {
                    for (d, gd) in gate.iter_mut().enumerate() {
                        let x = match g.decay_per_key {
                            true => dec[bt * decay_n + h * dk + d],
                            false => dec[bt * decay_n + h],
                        };
                        *gd = T::of(x.get().exp());
                    }
                    for (row, &gd) in s.chunks_exact_mut(dv).zip(&gate) {
                        row.iter_mut().for_each(|x| *x = *x * gd);
                    }
                }
                if let Some(beta) = beta {
                    let bv = beta[bt * beta_n + if g.beta_shared { 0 } else { h }];
                    for (m, x) in vt.iter_mut().enumerate() {
                        let mut r = T::default();
                        for (d, &kd) in kt.iter().enumerate() {
                            r = r + s[d * dv + m] * kd;
                        }
                        *x = bv * (*x - r);
                    }
                }
                for (row, &kd) in s.chunks_exact_mut(dv).zip(kt) {
                    for (x, &vm) in row.iter_mut().zip(&vt) {
                        *x = *x + kd * vm;
                    }
                }
                for j in 0..group {
                    let qh = h * group + j;
                    let qt = &q[(bt * hq + qh) * dk..][..dk];
                    let o = &mut out[(bt * hq + qh) * dv..][..dv];
                    for (m, om) in o.iter_mut().enumerate() {
                        let mut acc = T::default();
                        for (d, &qd) in qt.iter().enumerate() {
                            acc = acc + qd * s[d * dv + m];
                        }
                        *om = scale * acc;
                    }
                }
            }
        }
    }
}

fn static_dims(t: Type) -> Option<Vec<usize>> {
    t.as_tensor()
        .and_then(|t| t.static_shape())
        .map(|s| s.into_iter().map(|d| d as usize).collect())
}

/// Check that the present operands `names`/`types` have `first`'s element type.
fn same_dtype(first: (&str, Type), names: &[&str], types: &[Option<Type>]) -> Result<(), String> {
    let (fname, ft) = first;
    for (name, t) in names.iter().zip(types) {
        if let Some(t) = t {
            if t.dtype() != ft.dtype() {
                return Err(format!(
                    "operand '{name}' '{t}' must have the element type of '{fname}' '{ft}'"
                ));
            }
        }
    }
    Ok(())
}

/// The operand types by group (absent optional groups `None`).
fn grouped(cx: &InferCtx, n: usize) -> Vec<Option<Type>> {
    let mut out = vec![];
    let mut start = 0;
    for &k in cx.group_sizes.iter().take(n) {
        out.push(
            (k == 1)
                .then(|| cx.operand_types.get(start).copied())
                .flatten(),
        );
        start += k;
    }
    out.resize(n, None);
    out
}

fn infer_linear_attention(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = LinearAttn::of(cx)?;
    let ts = grouped(cx, 6);
    let (Some(tq), Some(tv)) = (ts[0], ts[2]) else {
        return Err("query and value are required".into());
    };
    let dt = dtype_of(tq)?;
    same_dtype(
        ("query", tq),
        &["key", "value", "decay", "beta"],
        &[ts[1], ts[2], ts[4], ts[5]],
    )?;
    let q = dims_rank(tq, "query", 3, "B x T x heads·d_k")?;
    let v = dims_rank(tv, "value", 3, "B x T x heads·d_v")?;
    let shapes: Vec<Option<Vec<usize>>> = ts.iter().map(|t| t.and_then(static_dims)).collect();
    let all_static = ts
        .iter()
        .zip(&shapes)
        .all(|(t, s)| t.is_none() || s.is_some());
    if all_static {
        let s: [Option<&[usize]>; 6] = std::array::from_fn(|i| shapes[i].as_deref());
        linear_geometry(&a, s)?;
    }
    let (hq, hkv) = (a.q_heads as i64, a.kv_heads as i64);
    let div = |d: Dim, n: i64| d.as_static().map_or(Dim::Unknown, |x| Dim::Static(x / n));
    let (out, state) = match (&q, &v) {
        (Some(q), Some(v)) => {
            let (dk, dv) = (div(q[2], hq), div(v[2], hkv));
            let out_last = match dv {
                Dim::Static(x) => Dim::Static(x * hq),
                _ => Dim::Unknown,
            };
            (
                Type::tensor(&[q[0], q[1], out_last], dt),
                Some([q[0], Dim::Static(hkv), dk, dv]),
            )
        }
        _ => (Type::unranked(dt), None),
    };
    // The state keeps past_state's element type (the query's without one).
    let sdt = match ts[3] {
        Some(p) => dtype_of(p)?,
        None => dt,
    };
    let state = match state {
        Some(d) => Type::tensor(&d, sdt),
        None => Type::unranked(sdt),
    };
    Ok(vec![out, state])
}

/// The operands of a linear attention by group, from the op's slots.
fn by_slot<'t>(slots: &[Option<usize>], t: &[&'t Tensor]) -> [Option<&'t Tensor>; 6] {
    std::array::from_fn(|g| {
        slots
            .get(g)
            .copied()
            .flatten()
            .and_then(|i| t.get(i).copied())
    })
}

fn sem_linear_attention(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    let a = LinearAttn::of(cx)?;
    let ops = by_slot(&operand_slots(cx.body, cx.op), t);
    let shapes: [Option<&[usize]>; 6] = std::array::from_fn(|i| ops[i].map(|t| &t.shape[..]));
    let g = linear_geometry(&a, shapes)?;
    let f = |i: usize| ops[i].map(|t| t.to_f64());
    let (q, k, v) = (
        f(0).unwrap_or_default(),
        f(1).unwrap_or_default(),
        f(2).unwrap_or_default(),
    );
    let state_n = checked_numel(&[g.batch, a.kv_heads, g.dk, g.dv])?;
    let mut state = f(3).unwrap_or_else(|| vec![0.0; state_n]);
    let out_shape = vec![g.batch, g.steps, a.q_heads * g.dv];
    let mut out = vec![0.0; checked_numel(&out_shape)?];
    linear_attention(
        &a,
        &g,
        &q,
        &k,
        &v,
        f(4).as_deref(),
        f(5).as_deref(),
        &mut state,
        &mut out,
    );
    let dt = ops[0].map_or(DType::F32, |t| t.dtype);
    let sdt = ops[3].map_or(dt, |t| t.dtype);
    Ok(vec![
        Tensor::from_f64(out_shape, result_dtype(cx, 0, dt), out),
        Tensor::from_f64(
            vec![g.batch, a.kv_heads, g.dk, g.dv],
            result_dtype(cx, 1, sdt),
            state,
        ),
    ])
}

/// Per token and KV head: the gate (d_k·d_v), the delta read (2·d_k·d_v), the
/// write (2·d_k·d_v); per query head the read-out (2·d_k·d_v).
fn linear_attention_flops(cx: &CostCtx) -> f64 {
    let a = LinearAttention::attrs(cx);
    let (hq, hkv) = (
        a.q_num_heads().unwrap_or(1).max(1) as f64,
        a.kv_num_heads().unwrap_or(1).max(1) as f64,
    );
    let q = cx.operand_dims(0);
    let v = cx.operand_dims(2);
    let (bt, dk, dv) = (
        q.iter().take(2).product::<f64>(),
        q.last().copied().unwrap_or(0.0) / hq,
        v.last().copied().unwrap_or(0.0) / hkv,
    );
    bt * dk * dv * (5.0 * hkv + 2.0 * hq)
}

def_op! {
    /// Recurrent linear attention (ONNX LinearAttention)
    ///
    /// `query` (`B x T x H_q·d_k`), `key` (`B x T x H_kv·d_k`) and `value` (`B x T x H_kv·d_v`)
    /// hold the heads packed in the last dim. Each KV head keeps a state `S` (`d_k x d_v`,
    /// `past_state` or zeros) updated token by token by `update_rule`: `linear` `S += k ⊗ v`;
    /// `gated` first scales `S` by `exp(g)`; `delta` writes `k ⊗ β(v - Sᵀk)`; `gated_delta`
    /// both (the gate before the read). `decay` (log-space `g`) is `B x T x H_kv·d_k` or
    /// `B x T x H_kv` (one per head), `beta` `B x T x H_kv` or `B x T x 1`. The output of query
    /// head `h` is `scale · qᵀS` of KV head `h / (H_q / H_kv)` (`scale` 0: `1/sqrt(d_k)`);
    /// `present_state` is the final `S` (`B x H_kv x d_k x d_v`, in `past_state`'s element
    /// type, else the query's). `chunk_size` is a tuning hint without effect on the result.
    pub LinearAttention = "graph.linear_attention" {
        operands {
            query: FloatTensor, key: FloatTensor, value: FloatTensor,
            past_state: Option<FloatTensor>, decay: Option<FloatTensor>,
            beta: Option<FloatTensor>,
        },
        results { output: FloatTensor, present_state: FloatTensor },
        attrs {
            /// query heads (a positive multiple of kv_num_heads)
            q_num_heads: Option<I64>,
            /// key/value heads, each with its own state
            kv_num_heads: Option<I64>,
            /// linear, gated, delta or gated_delta
            update_rule: Enum(UPDATE_RULES) = "gated_delta",
            /// output scale (0: 1/sqrt(d_k))
            scale: F64 = 0.0,
            /// chunk size of a chunk-parallel evaluation (a hint; the result is the same)
            chunk_size: I64 = 64,
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_linear_attention,
        semantics: sem_linear_attention,
        interfaces [
            Cost::vector(linear_attention_flops),
            FusionPattern::Opaque,
            CPU_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Recurrent,
        ],
        es(results = LinearAttentionResults),
    }
}

// ---- CausalConvWithState -----------------------------------------------------------

/// The sizes of a causal convolution: batch, channels, length, kernel size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvGeom {
    pub batch: usize,
    pub channels: usize,
    pub len: usize,
    pub k: usize,
}

/// Check the shapes of input, weight, bias and past_state (`None`: absent).
pub fn conv_geometry(shapes: [Option<&[usize]>; 4]) -> Result<ConvGeom, String> {
    let [Some(x), Some(w), bias, past] = shapes else {
        return Err("input and weight are required".into());
    };
    let &[b, c, l] = x else {
        return Err(format!(
            "operand 'input' must have rank 3 (batch x channels x length), but has shape {x:?}"
        ));
    };
    let k = match *w {
        [wc, 1, k] if wc == c && k >= 1 => k,
        _ => {
            return Err(format!(
                "operand 'weight' of shape {w:?} must be [{c}, 1, k] with k >= 1"
            ))
        }
    };
    if let Some(bs) = bias {
        if bs != [c] {
            return Err(format!("operand 'bias' of shape {bs:?} must be [{c}]"));
        }
    }
    if let Some(p) = past {
        if p != [b, c, k - 1] {
            return Err(format!(
                "operand 'past_state' of shape {p:?} must be [{b}, {c}, {}] (k - 1 positions)",
                k - 1
            ));
        }
    }
    Ok(ConvGeom {
        batch: b,
        channels: c,
        len: l,
        k,
    })
}

/// The depthwise causal convolution: `out` (`B x C x L`) and `present`
/// (`B x C x k-1`, the last k-1 positions of past ++ input). `round`
/// rounds to the element type where the reference does (the convolution's
/// result before the activation); `silu` applies `x·sigmoid(x)` after it.
#[allow(clippy::too_many_arguments)]
pub fn causal_conv<T: Real>(
    g: &ConvGeom,
    x: &[T],
    w: &[T],
    bias: Option<&[T]>,
    past: Option<&[T]>,
    silu: bool,
    round: impl Fn(f64) -> f64,
    out: &mut [T],
    present: &mut [T],
) {
    let (l, k) = (g.len, g.k);
    let mut padded = vec![T::default(); l + k - 1];
    for b in 0..g.batch {
        for c in 0..g.channels {
            let row = b * g.channels + c;
            match past {
                Some(p) => padded[..k - 1].copy_from_slice(&p[row * (k - 1)..][..k - 1]),
                None => padded[..k - 1].fill(T::default()),
            }
            padded[k - 1..].copy_from_slice(&x[row * l..][..l]);
            let wc = &w[c * k..][..k];
            let b0 = bias.map_or(T::default(), |bs| bs[c]);
            for (i, o) in out[row * l..][..l].iter_mut().enumerate() {
                let mut acc = b0;
                for (j, &wj) in wc.iter().enumerate() {
                    acc = acc + wj * padded[i + j];
                }
                let y = round(acc.get());
                *o = T::of(if silu { y / (1.0 + (-y).exp()) } else { y });
            }
            present[row * (k - 1)..][..k - 1].copy_from_slice(&padded[l..]);
        }
    }
}

fn infer_causal_conv(cx: &InferCtx) -> Result<Vec<Type>, String> {
    let a = CausalConvWithState::attrs(cx);
    if !CONV_ACTIVATIONS.contains(&a.activation()) {
        return Err(format!(
            "attribute 'activation' must be one of {}",
            CONV_ACTIVATIONS.join(", ")
        ));
    }
    let ts = grouped(cx, 4);
    let (Some(tx), Some(tw)) = (ts[0], ts[1]) else {
        return Err("input and weight are required".into());
    };
    let dt = dtype_of(tx)?;
    same_dtype(("input", tx), &["weight", "bias", "past_state"], &ts[1..])?;
    let x = dims_rank(tx, "input", 3, "batch x channels x length")?;
    let w = dims_rank(tw, "weight", 3, "channels x 1 x k")?;
    let shapes: Vec<Option<Vec<usize>>> = ts.iter().map(|t| t.and_then(static_dims)).collect();
    if ts
        .iter()
        .zip(&shapes)
        .all(|(t, s)| t.is_none() || s.is_some())
    {
        let s: [Option<&[usize]>; 4] = std::array::from_fn(|i| shapes[i].as_deref());
        conv_geometry(s)?;
    }
    let km1 = w
        .as_ref()
        .and_then(|w| w[2].as_static())
        .map_or(Dim::Unknown, |k| Dim::Static(k - 1));
    Ok(match x {
        Some(x) => vec![Type::tensor(&x, dt), Type::tensor(&[x[0], x[1], km1], dt)],
        None => vec![Type::unranked(dt), Type::unranked(dt)],
    })
}

fn sem_causal_conv(cx: &SemCtx, t: &[&Tensor]) -> SemResult {
    let slots = operand_slots(cx.body, cx.op);
    let ops: [Option<&Tensor>; 4] = std::array::from_fn(|g| {
        slots
            .get(g)
            .copied()
            .flatten()
            .and_then(|i| t.get(i).copied())
    });
    let shapes: [Option<&[usize]>; 4] = std::array::from_fn(|i| ops[i].map(|t| &t.shape[..]));
    let g = conv_geometry(shapes)?;
    let f = |i: usize| ops[i].map(|t| t.to_f64());
    let dt = result_dtype(cx, 0, ops[0].map_or(DType::F32, |t| t.dtype));
    let silu = CausalConvWithState::attrs(cx).activation() != "none";
    let mut out = vec![0.0; g.batch * g.channels * g.len];
    let mut present = vec![0.0; g.batch * g.channels * (g.k - 1)];
    causal_conv(
        &g,
        &f(0).unwrap_or_default(),
        &f(1).unwrap_or_default(),
        f(2).as_deref(),
        f(3).as_deref(),
        silu,
        |v| round_f(dt, v),
        &mut out,
        &mut present,
    );
    Ok(vec![
        Tensor::from_f64(vec![g.batch, g.channels, g.len], dt, out),
        Tensor::from_f64(vec![g.batch, g.channels, g.k - 1], dt, present),
    ])
}

/// One multiply-add per tap and output element: `2 · B·C·L · k`.
fn causal_conv_flops(cx: &CostCtx) -> f64 {
    let x: f64 = cx.operand_dims(0).iter().product();
    let k = cx.operand_dims(1).last().copied().unwrap_or(1.0);
    2.0 * x * k
}

def_op! {
    /// Depthwise causal 1-D convolution with a carried state (ONNX CausalConvWithState)
    ///
    /// `input` is `B x C x L`, `weight` `C x 1 x k` (a depthwise Conv weight), `bias` `C`,
    /// `past_state` `B x C x k-1` (zeros when absent). Each channel of `past_state ++ input` is
    /// convolved with its own kernel without padding, giving `output` (`B x C x L`, plus
    /// `bias`, then `x·sigmoid(x)` with `activation` `silu` or its alias `swish`);
    /// `present_state` is the last `k-1` positions of `past_state ++ input`.
    pub CausalConvWithState = "graph.causal_conv_with_state" {
        operands {
            input: FloatTensor, weight: FloatTensor, bias: Option<FloatTensor>,
            past_state: Option<FloatTensor>,
        },
        results { output: FloatTensor, present_state: FloatTensor },
        attrs {
            /// none, silu or swish (= silu) after the convolution
            activation: Enum(CONV_ACTIVATIONS) = "none",
        },
        traits [Pure],
        format: COMPUTE_FORMAT,
        verify: verify_by_infer,
        infer: infer_causal_conv,
        semantics: sem_causal_conv,
        interfaces [
            Cost::vector(causal_conv_flops),
            FusionPattern::Opaque,
            VECTOR_ENGINES,
            PrecisionClass::Gray,
            KernelFamily::Conv,
        ],
        es(results = CausalConvResults),
    }
}

pub static OPS: &[&OpDef] = &[&LINEAR_ATTENTION, &CAUSAL_CONV_WITH_STATE];

#[cfg(test)]
mod tests {
    use super::*;

    /// One head, d_k = d_v = 1: linear sums k·v, the read-out scales q·S.
    #[test]
    fn linear_rule_accumulates() {
        let a = LinearAttn {
            q_heads: 1,
            kv_heads: 1,
            gated: false,
            delta: false,
            scale: 1.0,
        };
        let s = [1usize, 2, 1];
        let g = linear_geometry(&a, [Some(&s), Some(&s), Some(&s), None, None, None]).unwrap();
        let (q, k, v) = ([1.0, 2.0], [3.0, 1.0], [2.0, 5.0]);
        let (mut st, mut out) = (vec![0.0], vec![0.0; 2]);
        linear_attention(&a, &g, &q, &k, &v, None, None, &mut st, &mut out);
        assert_eq!(st, [11.0]);
        assert_eq!(out, [6.0, 22.0]);
        // delta with beta 1 and k = 1 replaces the state by v.
        let d = LinearAttn { delta: true, ..a };
        let gb = linear_geometry(&d, [Some(&s), Some(&s), Some(&s), None, None, Some(&s)]).unwrap();
        let (mut st, mut out) = (vec![0.0], vec![0.0; 2]);
        linear_attention(
            &d,
            &gb,
            &q,
            &[1.0, 1.0],
            &v,
            None,
            Some(&[1.0, 1.0]),
            &mut st,
            &mut out,
        );
        assert_eq!(st, [5.0]);
        assert!(linear_geometry(&d, [Some(&s), Some(&s), Some(&s), None, None, None]).is_err());
    }

    /// k = 2 over [1, 2, 3] after past [10]: present is the last input.
    #[test]
    fn causal_conv_carries_state() {
        let g =
            conv_geometry([Some(&[1, 1, 3]), Some(&[1, 1, 2]), None, Some(&[1, 1, 1])]).unwrap();
        let (mut out, mut present) = (vec![0.0; 3], vec![0.0; 1]);
        let w = [1.0, 10.0];
        causal_conv(
            &g,
            &[1.0, 2.0, 3.0],
            &w,
            None,
            Some(&[10.0]),
            false,
            |v| v,
            &mut out,
            &mut present,
        );
        assert_eq!(out, [20.0, 21.0, 32.0]);
        assert_eq!(present, [3.0]);
        assert!(conv_geometry([Some(&[1, 1, 3]), Some(&[1, 2, 2]), None, None]).is_err());
    }
}
