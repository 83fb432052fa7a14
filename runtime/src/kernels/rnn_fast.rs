//! The native f32 path of the recurrent layers (`graph.rnn`, `graph.gru`,
//! `graph.lstm`; [`super::rnn::Recurrent`] runs it when it applies and the
//! dialect's reference recurrence otherwise).
//!
//! Per direction, the input projection of every step at once — `X [seq ·
//! batch, input] · Wᵀ` plus the biases that add as they are (`Wb + Rb`;
//! a GRU with `linear_before_reset` keeps `Rbh` apart) — is one GEMM; then
//! per step `H [batch, hidden] · Rᵀ` is another (a GRU without
//! `linear_before_reset` takes two: the z and r gates, then the candidate's
//! `(r ⊙ H) · Rhᵀ`), and the gates' activations run over whole rows with
//! the runtime's vectorised sigmoid and tanh ([`super::activation`]). A
//! constant `W` or `R` (a model's weights) is packed once at load
//! ([`PackedWeights`], through [`super::Kernel::prepare`]) as the packed
//! GEMM's left operand, and the products run transposed, `(X·Wᵀ)ᵀ = W·Xᵀ`,
//! through two small transposes: the `gemm` crate copies its right operand
//! — the weights — on every call, which at 4 to 16 rows cost more than the
//! product (a bidirectional LSTM of hidden 96 over 4 x 4 steps: 149 -> 78
//! µs, onnxruntime 65). Other weights (graph inputs), and a GRU's recurrent
//! products (over parts of `R`, one after `r ⊙ H`), go through
//! [`super::sgemm`] in place. The hidden state lives in `Y` itself (step
//! `t`'s rows are `Y[t, d]`), and the scratch is per thread: the two
//! directions of a bidirectional layer run as a parallel region of two
//! (Sequencer's LSTMs at 2 threads: 3.4 -> 2.5 ms a model run).
//!
//! Covered: layout 0, no clip, activations Sigmoid / Tanh / Relu (any
//! slot), LSTM without peepholes or `input_forget`, no `sequence_lens` or
//! every one the full length, f32 operands and results, at least one step
//! and sequence. Everything else takes the reference path.

use super::sgemm_packed::PackedA;
use super::{activation, sgemm, Par, Slot};
use crate::buffer::load_i64;
use crate::shared::Shared;
use ge_dialects::graph::rnn::{Cell, Sizes, Spec};
use ge_ir::DType;
use std::cell::RefCell;

/// An activation the fast path computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Act {
    Sigmoid,
    Tanh,
    Relu,
}

impl Act {
    fn of(name: &str) -> Option<Act> {
        [
            ("Sigmoid", Act::Sigmoid),
            ("Tanh", Act::Tanh),
            ("Relu", Act::Relu),
        ]
        .into_iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, a)| a)
    }

    fn apply(self, v: &mut [f32]) {
        let name = match self {
            Act::Sigmoid => "sigmoid",
            Act::Tanh => "tanh",
            Act::Relu => "relu",
        };
        activation(name, 0.0, v);
    }
}

/// The fast path of one layer: its activations, per direction.
#[derive(Clone, Debug)]
pub struct Fast {
    /// `per` activations per direction (1 RNN, 2 GRU, 3 LSTM).
    acts: Vec<Act>,
    per: usize,
}

thread_local! {
    /// The projections of every step, the step's gates, the cell state and
    /// a row buffer (on the thread that runs the layer).
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

fn f32s<'a>(s: &Slot) -> &'a [f32] {
    // SAFETY: an f32 slot holds `numel` floats, unwritten while the kernel
    // runs (the executor gives results their own bytes).
    unsafe { std::slice::from_raw_parts(s.ptr as *const f32, s.numel()) }
}

impl Fast {
    /// The fast path of a layer with `spec` and the `activations` attribute
    /// (`None`: the defaults), or `None` when its attributes need the
    /// reference path.
    pub fn new<S: AsRef<str>>(spec: &Spec, activations: Option<&[S]>) -> Option<Fast> {
        if spec.clip.is_some()
            || spec.batch_first
            || matches!(spec.cell, Cell::Lstm { input_forget: true })
        {
            return None;
        }
        let defaults: &[&str] = match spec.cell {
            Cell::Rnn => &["Tanh"],
            Cell::Gru { .. } => &["Sigmoid", "Tanh"],
            Cell::Lstm { .. } => &["Sigmoid", "Tanh", "Tanh"],
        };
        let per = defaults.len();
        let names: Vec<&str> = match activations {
            None => defaults.to_vec(),
            Some(v) => v.iter().map(|s| s.as_ref()).collect(),
        };
        let names = match names.len() {
            l if l == per * spec.dirs => names,
            l if l == per => names.repeat(spec.dirs),
            _ => return None,
        };
        let acts = names.into_iter().map(Act::of).collect::<Option<Vec<_>>>()?;
        Some(Fast { acts, per })
    }

    fn act(&self, d: usize, k: usize) -> Act {
        self.acts[d * self.per + k]
    }

    /// Run the layer on operand groups `g` (X, W, R, B, sequence_lens,
    /// initial_h, initial_c, P) into `outs` (whose shapes the caller
    /// checked); `Ok(false)`, nothing written, when the operands need the
    /// reference path.
    pub fn run(
        &self,
        spec: &Spec,
        n: Sizes,
        g: &[Option<&Slot>; 8],
        packed: [Option<&PackedWeights>; 2],
        outs: &[&Slot],
        par: &Par,
    ) -> Result<bool, String> {
        let floats = [0, 1, 2, 3, 5, 6]
            .iter()
            .filter_map(|&i| g[i])
            .chain(outs.iter().copied())
            .all(|s| s.dtype == DType::F32);
        if !floats || g[7].is_some() || n.seq == 0 || n.batch == 0 {
            return Ok(false);
        }
        if let Some(l) = g[4] {
            for b in 0..n.batch {
                let mut v = [0i64];
                load_i64(l.dtype, l.ptr, b, &mut v);
                if v[0] != n.seq as i64 {
                    return Ok(false);
                }
            }
        }
        let (Some(x), Some(w), Some(r)) = (g[0], g[1], g[2]) else {
            return Ok(false);
        };
        let ops = Operands {
            x: f32s(x),
            w: f32s(w),
            r: f32s(r),
            b: g[3].map(f32s),
            h0: g[5].map(f32s),
            c0: g[6].map(f32s),
        };
        let outs = Outs {
            y: Shared(outs[0].ptr.cast()),
            y_h: Shared(outs[1].ptr.cast()),
            y_c: outs.get(2).map(|s| Shared(s.ptr.cast())),
        };
        // The directions of a bidirectional layer are independent: one per
        // thread (`crate::split` measures whether it pays, as for any
        // region).
        par.run(spec.dirs, spec.dirs > 1, &|d| {
            SCRATCH.with(|s| {
                let mut s = s.borrow_mut();
                self.direction(spec, n, &ops, packed, d, &outs, &mut s);
            });
            Ok(())
        })?;
        Ok(true)
    }

    /// Direction `d` of the layer: its projections, its steps, its rows of
    /// `Y` and its parts of `Y_h` and `Y_c`.
    #[allow(clippy::too_many_arguments)]
    fn direction(
        &self,
        spec: &Spec,
        n: Sizes,
        o: &Operands,
        packed: [Option<&PackedWeights>; 2],
        d: usize,
        outs: &Outs,
        scratch: &mut Vec<f32>,
    ) {
        let (seq, batch, input) = (n.seq, n.batch, n.input);
        let (h, dirs) = (spec.hidden, spec.dirs);
        let gh = spec.cell.gates() * h;
        let rows = seq * batch;
        let bh = batch * h;
        // The packed products' transposed operands and results.
        let flip = rows * input.max(h) + rows * gh;
        let need = rows * gh + batch * gh + 3 * bh + flip;
        if scratch.len() < need {
            scratch.resize(need, 0.0);
        }
        let (flip, scratch) = scratch.split_at_mut(flip);
        let (pre, rest) = scratch.split_at_mut(rows * gh);
        let (gates, rest) = rest.split_at_mut(batch * gh);
        let (cell, rest) = rest.split_at_mut(bh);
        let (tmp, rest) = rest.split_at_mut(bh);
        let zeros = &mut rest[..bh];
        let lbr = matches!(
            spec.cell,
            Cell::Gru {
                linear_before_reset: true
            }
        );
        let w = &o.w[d * gh * input..(d + 1) * gh * input];
        let r = &o.r[d * gh * h..(d + 1) * gh * h];
        let bias = o.b.map(|b| &b[d * 2 * gh..(d + 1) * 2 * gh]);
        let [pw, pr] = packed.map(|p| p.and_then(|p| p.dirs.get(d)));
        project(
            o.x,
            Weights {
                plain: w,
                packed: pw,
            },
            bias,
            lbr,
            (rows, input, gh, h),
            &mut gates[..gh],
            flip,
            pre,
        );
        let r_w = Weights {
            plain: r,
            packed: pr,
        };
        let rbh: Option<&[f32]> = bias.filter(|_| lbr).map(|b| &b[gh + 2 * h..2 * gh]);
        let state = d * bh..(d + 1) * bh;
        let h_init: &[f32] = match o.h0 {
            Some(v) => &v[state.clone()],
            None => {
                zeros.fill(0.0);
                zeros
            }
        };
        match o.c0 {
            Some(v) => cell.copy_from_slice(&v[state.clone()]),
            None => cell.fill(0.0),
        }
        let backwards = spec.reverse || d == 1;
        let mut prev: Option<usize> = None; // the step whose Y rows hold H
        for s in 0..seq {
            let t = if backwards { seq - 1 - s } else { s };
            // H_{t-1}: the previous step's rows of Y, or the initial state.
            let hp: &[f32] = match prev {
                None => h_init,
                Some(p) => outs.rows(p, d, dirs, bh),
            };
            let yt = outs.rows_mut(t, d, dirs, bh);
            let pt = &pre[t * batch * gh..(t + 1) * batch * gh];
            match spec.cell {
                Cell::Rnn => {
                    r_w.product(hp, (batch, h, h), gates, gh, flip);
                    add(gates, pt);
                    self.act(d, 0).apply(gates);
                    yt.copy_from_slice(gates);
                }
                Cell::Lstm { .. } => {
                    r_w.product(hp, (batch, h, gh), gates, gh, flip);
                    add(gates, pt);
                    self.lstm_gates(d, (batch, h), gates, cell, tmp, yt);
                }
                Cell::Gru { .. } => {
                    self.gru_step(d, (batch, h, lbr), hp, r, pt, rbh, gates, tmp, yt)
                }
            }
            prev = Some(t);
        }
        let last: &[f32] = match prev {
            Some(p) => outs.rows(p, d, dirs, bh),
            None => h_init,
        };
        outs.state(outs.y_h, d, bh).copy_from_slice(last);
        if let Some(yc) = outs.y_c {
            outs.state(yc, d, bh).copy_from_slice(cell);
        }
    }

    /// A GRU step: the z and r gates from `H_{t-1}` (`hp`) and the
    /// projection (`pt`), the candidate — with `linear_before_reset`
    /// `r ⊙ (H·Rhᵀ + Rbh)`, else `(r ⊙ H)·Rhᵀ` — and `H` into `yt`
    /// (`tmp`: scratch of `batch x h`).
    #[allow(clippy::too_many_arguments)]
    fn gru_step(
        &self,
        d: usize,
        (batch, h, lbr): (usize, usize, bool),
        hp: &[f32],
        r: &[f32],
        pt: &[f32],
        rbh: Option<&[f32]>,
        gates: &mut [f32],
        tmp: &mut [f32],
        yt: &mut [f32],
    ) {
        let gh = 3 * h;
        let rz = if lbr { gh } else { 2 * h };
        matmul_t(hp, r, (batch, h, rz), 0.0, gates, gh);
        for b in 0..batch {
            let row = &mut gates[b * gh..(b + 1) * gh];
            let p = &pt[b * gh..(b + 1) * gh];
            add(&mut row[..2 * h], &p[..2 * h]);
            self.act(d, 0).apply(&mut row[..2 * h]);
            let hb = &hp[b * h..(b + 1) * h];
            if lbr {
                let (zr, cand) = row.split_at_mut(2 * h);
                let rg = &zr[h..];
                for j in 0..h {
                    let rec = cand[j] + rbh.map_or(0.0, |v| v[j]);
                    cand[j] = p[2 * h + j] + rg[j] * rec;
                }
            } else {
                let reset = &mut tmp[b * h..(b + 1) * h];
                for j in 0..h {
                    reset[j] = row[h + j] * hb[j];
                }
            }
        }
        if !lbr {
            // The candidate's columns: (r ⊙ H) · Rhᵀ.
            matmul_t(
                tmp,
                &r[2 * h * h..],
                (batch, h, h),
                0.0,
                &mut gates[2 * h..],
                gh,
            );
        }
        for b in 0..batch {
            let row = &mut gates[b * gh..(b + 1) * gh];
            let p = &pt[b * gh..(b + 1) * gh];
            let (zr, cand) = row.split_at_mut(2 * h);
            if !lbr {
                add(cand, &p[2 * h..]);
            }
            self.act(d, 1).apply(cand);
            let z = &zr[..h];
            let hb = &hp[b * h..(b + 1) * h];
            let yb = &mut yt[b * h..(b + 1) * h];
            for j in 0..h {
                yb[j] = (1.0 - z[j]) * cand[j] + z[j] * hb[j];
            }
        }
    }
    /// An LSTM step after its gates' pre-activations (`gates`, `batch`
    /// rows of i, o, f, c): the new cell state into `cell`, `H` into `yt`
    /// (`tmp`: scratch of `batch x h`).
    fn lstm_gates(
        &self,
        d: usize,
        (batch, h): (usize, usize),
        gates: &mut [f32],
        cell: &mut [f32],
        tmp: &mut [f32],
        yt: &mut [f32],
    ) {
        let gh = 4 * h;
        for b in 0..batch {
            let row = &mut gates[b * gh..(b + 1) * gh];
            let (ifo, cc) = row.split_at_mut(3 * h);
            self.act(d, 0).apply(ifo);
            self.act(d, 1).apply(cc);
            let (i, rest) = ifo.split_at(h);
            let (og, f) = rest.split_at(h);
            let c = &mut cell[b * h..(b + 1) * h];
            for j in 0..h {
                c[j] = f[j] * c[j] + i[j] * cc[j];
            }
            let hc = &mut tmp[b * h..(b + 1) * h];
            hc.copy_from_slice(c);
            self.act(d, 2).apply(hc);
            let yb = &mut yt[b * h..(b + 1) * h];
            for j in 0..h {
                yb[j] = og[j] * hc[j];
            }
        }
    }
}

/// Every step's input projection into `pre` (`rows x gh`): `X · Wᵀ` plus
/// the bias the projection carries — `Wb + Rb`, or for a GRU with
/// `linear_before_reset` `Wbh` alone on the candidate's columns (`Rbh`
/// goes with the recurrent product). `brow` is scratch for one row.
#[allow(clippy::too_many_arguments)]
fn project(
    x: &[f32],
    w: Weights,
    bias: Option<&[f32]>,
    lbr: bool,
    (rows, input, gh, h): (usize, usize, usize, usize),
    brow: &mut [f32],
    flip: &mut [f32],
    pre: &mut [f32],
) {
    match bias {
        Some(b) => {
            let (wb, rb) = b.split_at(gh);
            for (j, v) in brow.iter_mut().enumerate() {
                *v = if lbr && j >= 2 * h {
                    wb[j]
                } else {
                    wb[j] + rb[j]
                };
            }
        }
        None => brow.fill(0.0),
    }
    w.product(x, (rows, input, gh), pre, gh, flip);
    for row in pre.chunks_exact_mut(gh) {
        add(row, brow);
    }
}

/// A layer's weights packed at load ([`super::Kernel::prepare`]): per
/// direction, `W` (`gh x input`) or `R` (`gh x h`) as the packed GEMM's
/// left operand.
#[derive(Debug)]
pub struct PackedWeights {
    pub dirs: Vec<PackedA>,
}

impl PackedWeights {
    /// `w` (`[dirs, gh, k]`, f32) packed, if it fits `budget` bytes and
    /// the CPU has the packed GEMM's kernels.
    pub fn pack(w: &Slot, budget: usize) -> Option<PackedWeights> {
        let &[dirs, gh, k] = w.shape.as_slice() else {
            return None;
        };
        let fits = dirs.checked_mul(PackedA::bytes_for(gh, k))? <= budget;
        if !fits || w.dtype != DType::F32 || w.ptr.is_null() || !super::sgemm_packed::fast() {
            return None;
        }
        let data = f32s(w);
        let dirs = data
            .chunks_exact((gh * k).max(1))
            .take(dirs)
            .map(|a| PackedA::pack(a, gh, k))
            .collect();
        Some(PackedWeights { dirs })
    }

    pub fn bytes(&self) -> usize {
        self.dirs.iter().map(PackedA::bytes).sum()
    }
}

/// One direction's `W` or `R`: where it lies, and packed if it was.
#[derive(Clone, Copy)]
struct Weights<'a> {
    plain: &'a [f32],
    packed: Option<&'a PackedA>,
}

impl Weights<'_> {
    /// `c[:, ..n] = a · w[..n]ᵀ` (`a`: `m x k`; `c`: `m` rows of `rsc`
    /// floats). Packed: `(a·wᵀ)ᵀ = w·aᵀ` through `flip` (`aᵀ`, then the
    /// product's `n x m`), both transposes small next to the product.
    fn product(
        &self,
        a: &[f32],
        (m, k, n): (usize, usize, usize),
        c: &mut [f32],
        rsc: usize,
        flip: &mut [f32],
    ) {
        let Some(p) = self.packed.filter(|p| p.k == k && p.m >= n) else {
            return matmul_t(a, self.plain, (m, k, n), 0.0, c, rsc);
        };
        let (at, ct) = flip.split_at_mut(k * m);
        for (i, row) in a.chunks_exact(k).take(m).enumerate() {
            for (j, &v) in row.iter().enumerate() {
                at[j * m + i] = v;
            }
        }
        assert!(ct.len() >= n * m && c.len() >= (m - 1) * rsc + n);
        // SAFETY: `at` holds `k` rows of `m` floats, `ct` `n` rows of `m`
        // (checked above), apart from it; rows 0..n of the packed `w`
        // exist (`p.m >= n`) and 0 is a panel's first row.
        unsafe { p.gemm(0, n, at.as_ptr(), m, m, ct.as_mut_ptr(), m) };
        for (i, row) in c.chunks_mut(rsc).take(m).enumerate() {
            for (j, v) in row[..n].iter_mut().enumerate() {
                *v = ct[j * m + i];
            }
        }
    }
}

/// The operands, f32 in place.
struct Operands<'a> {
    x: &'a [f32],
    w: &'a [f32],
    r: &'a [f32],
    b: Option<&'a [f32]>,
    h0: Option<&'a [f32]>,
    c0: Option<&'a [f32]>,
}

/// `a += b`.
fn add(a: &mut [f32], b: &[f32]) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// `c[:, ..n] = a · r[..n]ᵀ + beta · c[:, ..n]`: `a` is `m x k`, the
/// first `n` rows of `r` are `n x k`, `c` has `m` rows of `rsc` floats.
fn matmul_t(
    a: &[f32],
    r: &[f32],
    (m, k, n): (usize, usize, usize),
    beta: f32,
    c: &mut [f32],
    rsc: usize,
) {
    assert!(a.len() >= m * k && r.len() >= n * k && c.len() >= (m - 1) * rsc + n);
    // SAFETY: the bounds are checked above.
    unsafe {
        sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            r.as_ptr(),
            1,
            k as isize,
            beta,
            c.as_mut_ptr(),
            rsc as isize,
            1,
        );
    }
}

/// The layer's results, written by its directions at once: direction
/// `d` owns rows `(t * dirs + d) * bh ..` of `Y` (`[seq, dirs, batch,
/// hidden]`) for every step `t`, and `d * bh ..` of `Y_h` and `Y_c`.
struct Outs {
    y: Shared<*mut f32>,
    y_h: Shared<*mut f32>,
    y_c: Option<Shared<*mut f32>>,
}

impl Outs {
    /// Step `t`'s rows of direction `d` in `Y`.
    fn rows(&self, t: usize, d: usize, dirs: usize, bh: usize) -> &[f32] {
        // SAFETY: `Recurrent::run_with` checked `Y`'s shape against the
        // layer's (`seq x dirs x batch x hidden`, t < seq, d < dirs); only
        // direction `d` writes these rows, and not while it reads them.
        unsafe { std::slice::from_raw_parts(self.y.p().add((t * dirs + d) * bh), bh) }
    }

    /// Step `t`'s rows of direction `d` in `Y`, to write.
    #[allow(clippy::mut_from_ref)]
    fn rows_mut(&self, t: usize, d: usize, dirs: usize, bh: usize) -> &mut [f32] {
        // SAFETY: as `rows`; direction `d` holds no other view of step `t`'s
        // rows while it writes them (it reads the step before, rows apart).
        unsafe { std::slice::from_raw_parts_mut(self.y.p().add((t * dirs + d) * bh), bh) }
    }

    /// Direction `d`'s part of a final state (`Y_h` or `Y_c`: `dirs x batch
    /// x hidden`, checked by `Recurrent::run_with`), to write.
    #[allow(clippy::mut_from_ref)]
    fn state(&self, base: Shared<*mut f32>, d: usize, bh: usize) -> &mut [f32] {
        // SAFETY: the result holds `dirs * bh` floats; only direction `d`
        // writes its `bh` of them.
        unsafe { std::slice::from_raw_parts_mut(base.p().add(d * bh), bh) }
    }
}
