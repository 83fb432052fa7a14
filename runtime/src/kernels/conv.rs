//! 2-D convolution (NCHW input, OIHW filter): Winograd F(m x m, 3 x 3)
//! where its cost model says it pays ([`winograd`]), else im2col + GEMM
//! (the `gemm` crate), tiled over output columns so the im2col panel stays in
//! cache and tiles run on the compute pool; 1x1 stride-1 convolutions use the
//! input as the GEMM operand directly; depthwise convolutions have a direct
//! kernel. A constant filter is packed at load ([`Conv::prepare`]) for the
//! packed GEMM (`sgemm_packed.rs`), which with AVX-512 reads the input by
//! tap offsets ([`Conv::run_taps`]) and, for filters of few output
//! channels ([`in_place_pays`]), without copying it. Bias and the
//! activation epilogue are applied per tile; a result the kernel converts
//! to NC1HWC0 right away is written as blocks from the tile
//! (`Conv::blocked_out`).

use super::prepared::Prepared;
use super::sgemm_packed::{PackedA, Rows, MR, NR};
use super::{activation, sgemm, winograd, F32In, F32Out, Par, Slot};
use crate::shared::Shared;
use ge_dialects::graph::nn::Conv2d;
use ge_ir::body::{Body, OpId};
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

/// Add a channel's bias, then apply the epilogue: one pass over the row for
/// relu, relu6 and hard_swish (the common cases), two otherwise.
pub(super) fn bias_activation(bias: Option<f32>, act: &str, alpha: f32, row: &mut [f32]) {
    by_cpu_features!(bias_activation_row(bias: Option<f32>, act: &str, alpha: f32, row: &mut [f32]))
}

#[inline(always)]
fn bias_activation_row(bias: Option<f32>, act: &str, alpha: f32, row: &mut [f32]) {
    let b = bias.unwrap_or(0.0);
    match (bias.is_some(), act) {
        // Same operations in the same order as the two passes below.
        (true, "relu") => row.iter_mut().for_each(|v| *v = super::ew::relu(*v + b)),
        // NaN stays NaN, as through graph.clip.
        (true, "relu6") => row.iter_mut().for_each(|v| *v = (*v + b).clamp(0.0, 6.0)),
        (true, "hard_swish") => row
            .iter_mut()
            .for_each(|v| *v = super::ew::hard_swish(*v + b)),
        (true, _) => {
            row.iter_mut().for_each(|v| *v += b);
            activation(act, alpha, row);
        }
        (false, _) => activation(act, alpha, row),
    }
}

/// Rows shorter than this (output maps of up to 3x3, as in squeeze-excite
/// blocks and the last layers of small images) take the epilogue a block at
/// a time ([`Conv::epilogue_short_rows`]).
const SHORT_ROW: usize = 16;

/// [`bias_activation`] of `rows.len() / cols` rows of `cols` floats side by
/// side, row `r` with `bias[r]`, in one call: the same operations on each
/// element, the bias added in a pass of its own (exact either way).
fn bias_activation_rows(
    bias: Option<&[f32]>,
    act: &str,
    alpha: f32,
    cols: usize,
    rows: &mut [f32],
) {
    by_cpu_features!(bias_activation_rows_body(bias: Option<&[f32]>, act: &str, alpha: f32, cols: usize, rows: &mut [f32]))
}

#[inline(always)]
fn bias_activation_rows_body(
    bias: Option<&[f32]>,
    act: &str,
    alpha: f32,
    cols: usize,
    rows: &mut [f32],
) {
    match (bias, cols) {
        (None, _) | (_, 0) => {}
        // One float a row (a 1x1 map): a vector add along the channels.
        (Some(b), 1) => rows.iter_mut().zip(b).for_each(|(v, &b)| *v += b),
        (Some(b), _) => rows
            .chunks_exact_mut(cols)
            .zip(b)
            .for_each(|(row, &b)| row.iter_mut().for_each(|v| *v += b)),
    }
    match act {
        "none" => {}
        "relu" => rows.iter_mut().for_each(|v| *v = super::ew::relu(*v)),
        "relu6" => rows.iter_mut().for_each(|v| *v = v.clamp(0.0, 6.0)),
        "hard_swish" => rows.iter_mut().for_each(|v| *v = super::ew::hard_swish(*v)),
        _ => activation(act, alpha, rows),
    }
}

/// `act((row + bias) + residual)`: the operations of a bias epilogue and an
/// elementwise add and activation after it, in their order.
fn bias_residual_activation(
    bias: Option<f32>,
    residual: &[f32],
    act: &str,
    alpha: f32,
    row: &mut [f32],
) {
    by_cpu_features!(bias_residual_activation_row(bias: Option<f32>, residual: &[f32], act: &str, alpha: f32, row: &mut [f32]))
}

#[inline(always)]
fn bias_residual_activation_row(
    bias: Option<f32>,
    residual: &[f32],
    act: &str,
    alpha: f32,
    row: &mut [f32],
) {
    let pairs = row.iter_mut().zip(residual);
    match (bias, act) {
        (Some(b), "relu") => pairs.for_each(|(v, &r)| *v = super::ew::relu(*v + b + r)),
        (None, "relu") => pairs.for_each(|(v, &r)| *v = super::ew::relu(*v + r)),
        (Some(b), _) => pairs.for_each(|(v, &r)| *v = *v + b + r),
        (None, _) => pairs.for_each(|(v, &r)| *v += r),
    }
    if act != "relu" {
        activation(act, alpha, row);
    }
}

#[derive(Clone, Debug)]
pub struct Conv {
    pub strides: [usize; 2],
    /// top, left, bottom, right
    pub pads: [usize; 4],
    pub dilations: [usize; 2],
    pub group: usize,
    pub act: String,
    pub alpha: f32,
    /// Write the result straight into NC1HWC0 blocks of this C0 (a following
    /// NCHW -> NC1HWC0 transdata folded in by the kernel compiler): each tile
    /// is converted while it is in cache instead of in a pass of its own.
    pub blocked_out: Option<usize>,
    /// With `blocked_out`: the plain NCHW type of the result, so the loader
    /// can undo the fold when nothing needs the blocks (`crate::layouts`).
    pub plain_type: Option<ge_ir::Type>,
    /// Computed by Winograd F(m x m, 3 x 3) from a transformed filter
    /// operand (chosen per shape by [`winograd::plan`]); else im2col + GEMM.
    pub winograd: Option<winograd::Winograd>,
    /// Constant filters packed at load for [`super::sgemm_packed`]
    /// ([`Conv::prepare`]).
    pub packed: PackCache,
    /// The operand (an index of the step's inputs) of a residual of the
    /// result's plain NCHW shape, added after the bias and before the
    /// activation, tile by tile (an elementwise add folded in by the kernel
    /// compiler, `fuse_conv_residuals`).
    pub residual: Option<usize>,
    /// Output pixels of a plane when the result's shape is static: a map of
    /// at most [`super::sgemm_packed::WIDE_ROWS_MAX_N`] packs its filter in wide
    /// row panels ([`Conv::prepare`]).
    pub out_plane: Option<usize>,
    /// Reads its input (and residual) as NC1HWC0 blocks and writes blocks,
    /// no conversion on either side (a pointwise convolution the loader
    /// chose, `crate::blocked_reads`; [`Conv::run_blocks`]).
    pub reads_blocks: bool,
    /// Constant filters packed at load for [`Conv::run_blocks`]
    /// ([`Conv::prepare_blocks`]).
    pub blocks: Prepared<PackedA>,
}

/// The filters of a convolution packed at load ([`Prepared`]); a run whose
/// filter is not here calls the unpacked GEMM.
pub type PackCache = Prepared<PackedFilter>;

/// One filter, `[oc, cg, kh, kw]`, packed group by group (`ocg x k` each).
#[derive(Debug)]
pub struct PackedFilter {
    dims: [usize; 4],
    groups: Vec<PackedA>,
    /// When the GEMM reads the input planes at each tap's offset instead
    /// of an im2col panel ([`Conv::run_taps`]).
    taps: Taps,
    /// [`Conv::run_taps`]'s offset of each GEMM row (group channel and
    /// tap) in the input's phases, for the geometry of the last run: kept
    /// with the filter, as a model runs each layer at the same shapes
    /// (1152 offsets took 3.5 % of a 128 -> 32 3x3 convolution on 14x14,
    /// and a cache per thread was rebuilt by every other layer of a model
    /// whose convolutions alternate).
    offsets: Mutex<Option<(Geo, Arc<[usize]>)>>,
}

/// Whether a packed filter's convolution reads its input by tap offsets
/// ([`Conv::run_taps`]) rather than through an im2col panel.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Taps {
    /// Where [`taps_pay`] says so (the default).
    Rule,
    /// Every convolution but 1x1 stride 1 (`GE_CONV_ALGO=taps`).
    Always,
    /// Never (`GE_CONV_ALGO=packed`).
    Never,
}

impl PackedFilter {
    /// The offsets of [`PackedFilter::offsets`] for geometry `geo` (phases
    /// `ph`).
    fn tap_offsets(&self, geo: &Geo, ph: &Phases) -> Result<Arc<[usize]>, String> {
        let mut kept = self
            .offsets
            .lock()
            .map_err(|_| "conv: a run panicked".to_string())?;
        if let Some((g, offsets)) = &*kept {
            if g == geo {
                return Ok(offsets.clone());
            }
        }
        let (plen, cg) = (ph.len(geo), self.dims[1]);
        let mut offsets = Vec::with_capacity(cg * geo.kh * geo.kw);
        for ci in 0..cg {
            for ki in 0..geo.kh {
                for kj in 0..geo.kw {
                    offsets.push(ci * plen + ph.tap(geo, ki, kj));
                }
            }
        }
        let offsets: Arc<[usize]> = offsets.into();
        *kept = Some((*geo, offsets.clone()));
        Ok(offsets)
    }
}

impl Prepared<PackedFilter> {
    /// The taps mode of its filters (`None`: no filter; all are packed
    /// under one `GE_CONV_ALGO`, so the first one's).
    fn taps(&self) -> Option<Taps> {
        self.first().map(|f| f.taps)
    }
}

/// The rule for packing a convolution's constant filter at load: always
/// when `GE_CONV_ALGO=packed`, never when `gemm` or `im2col`; by default
/// with AVX-512 ([`super::sgemm_packed::wide`]), else when the AVX2 kernel
/// runs here ([`super::sgemm_packed::fast`]) and a group has at least
/// [`PACK_MIN_ROWS`] output channels. Measured on an AVX2 VM (docs/benchmarks.md, "Filters packed at load, second round"):
/// the packed kernel is within noise of the `gemm` crate's per GEMM call
/// and saves its per-call packing of the filter; with fewer rows its strips
/// of the activations serve too few row panels to repay their copy.
fn packs(choice: winograd::Choice, ocg: usize) -> bool {
    match choice {
        winograd::Choice::Packed | winograd::Choice::Taps => true,
        winograd::Choice::Auto => {
            super::sgemm_packed::wide() || (super::sgemm_packed::fast() && ocg >= PACK_MIN_ROWS)
        }
        _ => false,
    }
}

/// Whether a packed filter of taps mode `taps` reads the input by tap
/// offsets at these shapes (a convolution that is not 1x1 stride 1).
fn reads_taps(taps: Taps, sh: &Shapes) -> bool {
    phases_fit(&sh.geo) && (taps == Taps::Always || (taps == Taps::Rule && taps_pay(sh)))
}

/// Whether the input's stride phases ([`Phases`]) stay near the padded
/// input's size: a stride far beyond the input (a mutated model's 2^40)
/// makes as many phases as the stride, each a plane — an 8 TB buffer.
/// Such a convolution takes the im2col path, sized by its outputs.
fn phases_fit(g: &Geo) -> bool {
    let ph = Phases::new(g);
    let len = [g.sw, ph.rows, ph.pw]
        .into_iter()
        .try_fold(g.sh, |a, v| a.checked_mul(v));
    let span = |n: usize, p: usize, k: usize, d: usize| {
        n.saturating_add(p.saturating_mul(2))
            .saturating_add(k.saturating_mul(d))
    };
    let padded = span(g.h, g.pt, g.kh, g.dh).saturating_mul(span(g.w, g.pl, g.kw, g.dw));
    len.is_some_and(|l| l <= padded.saturating_mul(4).saturating_add(1 << 16))
}

/// The default rule for reading a packed convolution's input by tap
/// offsets ([`Conv::run_taps`]) rather than through an im2col panel: the
/// GEMM then also runs over the `pw - ow` padding columns of every output
/// row — what costs is the extra 24-column strips of the micro-kernel,
/// `ocg` multiply-adds a column per row of `k` — while the panel it saves
/// costs about [`IM2COL_FMAS`] multiply-adds per element. Taps when the
/// extra strips cost less than the panel. With AVX-512 the taps run over
/// the output positions alone (a grid of the padded planes, `Rows::Grid`):
/// no extra strips, so always (measured faster than the panel on 3x3
/// convolutions from 7x7 to 56x56, 7x7 and 11x11 stems with strides 2 and
/// 4, and 1x1 stride 2; docs/benchmarks.md).
fn taps_pay(sh: &Shapes) -> bool {
    if super::sgemm_packed::wide() {
        return true;
    }
    let g = &sh.geo;
    let flat = (g.oh - 1) * (g.ow + (g.kw - 1) * g.dw / g.sw) + g.ow;
    let extra = (flat.div_ceil(NR) - sh.p.div_ceil(NR)) * NR;
    sh.ocg * extra < IM2COL_FMAS * sh.p
}

/// Whether a filter of `ocg` output channels a group and `k` weights an
/// output channel packs in panels of 16 rows, so that its GEMM reads the
/// input where it lies instead of copying all of it per call into the
/// 48-column strips that only `ocg / 8` row blocks then reuse
/// ([`super::sgemm_packed::PackedA::pack_wide_rows`]): panels at most a
/// quarter padding (a grouped filter's 4 or 8 rows fit the 4-row panels)
/// and a `k` long enough to repay transposing the sums — at least 128, and
/// 256 with more than 128 output channels, whose strips the copy serves
/// more often.
///
/// Measured with AVX-512 (2 or 4 parallel convolutions with ReLU on one
/// input, 1 thread, p50 µs; docs/benchmarks.md, "seventh session"):
/// 128 -> 32 3x3 on 7x7 127 -> 92, on 14x14 350 -> 283, on 28x28 1219
/// -> 1002, on 56x56 4600 -> 3845; 32 -> 32 3x3 on 112x112 2300 -> 2090;
/// 64 -> 64 3x3 on 14x14 300 -> 263; 256 -> 64 3x3 on 7x7 380 -> 290;
/// 48 -> 192 3x3 on 13x13 250 -> 233; 1x1 256 -> 32 on 28x28 292 -> 263,
/// 256 -> 512 on 14x14 440 -> 426, 512 -> 2048 on 7x7 936 -> 846, 1024 ->
/// 256 on 14x14 896 -> 854. Even: 256 -> 256 3x3 on 14x14 and 28x28, 1x1
/// 256 -> 1024 on 14x14, 512 -> 2048 on 14x14. Slower: 1x1 128 -> 512 on
/// 28x28 (`k` 128) 5 %, 16 -> 64 on 56x56 (`k` 16) 111 -> 135, 64 -> 256
/// (`k` 64) 1098 -> 1223; 512 -> 512 3x3 on 14x14 1-2 %.
fn in_place_pays(ocg: usize, k: usize) -> bool {
    ocg >= 16 && 4 * ocg.next_multiple_of(16) <= 5 * ocg && k >= 128 && (ocg <= 128 || k >= 256)
}

/// What building one element of an im2col panel (and the panel's trip
/// through the caches) costs, in the packed GEMM's multiply-adds: single 3x3
/// convolutions (`tools/bench/conv_algo.py --taps-shapes`, docs/
/// benchmarks.md) were as fast or faster by taps on every shape measured,
/// up to 31 multiply-adds of extra strips per output (256 -> 256 at 14x14:
/// 0.98 of the panel's CPU time).
const IM2COL_FMAS: usize = 32;

/// Output channels per group below which the default keeps the `gemm`
/// crate ([`packs`]) on AVX2: measured there, the `gemm` crate was as fast
/// on fewer rows. With AVX-512 every filter is packed: its blocks take up
/// to three 4-row panels at once and a few rows still read the input by
/// taps, no im2col panel (a small-image ResNet-18 of 4 to 32 channels at 1
/// thread: 0.167 ms with the `gemm` crate below 16 rows, 0.081 ms packed).
const PACK_MIN_ROWS: usize = 16;

fn pair(v: Option<Vec<i64>>, d: usize) -> Option<[usize; 2]> {
    match v.as_deref() {
        None => Some([d, d]),
        Some([a, b]) if *a >= 0 && *b >= 0 => Some([*a as usize, *b as usize]),
        _ => None,
    }
}

impl Conv {
    pub fn from_op(b: &Body, o: OpId) -> Option<Conv> {
        let a = Conv2d::attrs(b.op(o));
        let pads = match a.pads()[..] {
            [t, l, bo, r] if [t, l, bo, r].iter().all(|&x| x >= 0) => {
                [t as usize, l as usize, bo as usize, r as usize]
            }
            _ => return None,
        };
        Some(Conv {
            strides: pair(Some(a.strides()), 1)?,
            pads,
            dilations: pair(Some(a.dilations()), 1)?,
            group: a.group().max(1) as usize,
            act: a.activation().to_string(),
            alpha: a.activation_alpha() as f32,
            blocked_out: None,
            plain_type: None,
            winograd: None,
            packed: PackCache::default(),
            residual: None,
            reads_blocks: false,
            blocks: Prepared::default(),
            out_plane: b
                .result_types(o)
                .first()
                .and_then(|t| t.as_tensor())
                .and_then(|t| t.static_shape())
                .and_then(|s| match s[..] {
                    [_, _, h, w] => usize::try_from(h)
                        .ok()?
                        .checked_mul(usize::try_from(w).ok()?),
                    _ => None,
                }),
        })
    }

    /// Pack the constant filter `w` (its bytes live and stay unchanged as
    /// long as the model) for the GEMM path, unless the convolution
    /// computes another way, the packed copy would not fit in `budget`
    /// bytes or [`packs`] says the `gemm` crate is as fast. Returns the
    /// bytes it allocated.
    pub fn prepare(&self, w: &Slot, budget: usize) -> usize {
        let Ok([oc, cg, kh, kw]) = dims4(&w.shape) else {
            return 0;
        };
        let g = self.group.max(1);
        let depthwise = cg == 1 && oc == g;
        if self.winograd.is_some() || depthwise || oc % g != 0 || w.ptr.is_null() {
            return 0;
        }
        if !packs(winograd::choice(), oc / g) {
            return 0;
        }
        let (ocg, k) = (oc / g, cg * kh * kw);
        // 16 rows a panel, one vector per `k` (`pack_wide_rows`): a small
        // output map (at most 12 pixels: late layers of small images, 3x3
        // and below) multiplies the filter by few columns, and a filter of
        // few output channels repays no copy of the input.
        let wide_rows = super::sgemm_packed::wide()
            && (self
                .out_plane
                .is_some_and(|p| p <= super::sgemm_packed::WIDE_ROWS_MAX_N)
                || in_place_pays(ocg, k));
        let bytes = PackedA::bytes_for_groups(g, ocg, k, wide_rows);
        if bytes > budget || self.packed.find(w).is_some() {
            return 0;
        }
        let groups = PackedA::pack_groups(F32In::new(w).slice(), g, ocg, k, wide_rows);
        let filter = PackedFilter {
            dims: [oc, cg, kh, kw],
            groups,
            taps: match winograd::choice() {
                winograd::Choice::Taps => Taps::Always,
                winograd::Choice::Packed => Taps::Never,
                _ => Taps::Rule,
            },
            offsets: Mutex::new(None),
        };
        self.packed.insert(w, filter, bytes)
    }

    /// How it computes with this filter type, for `ge-run --info`:
    /// `direct on NC1HWC0 blocks` ([`Conv::run_blocks`]),
    /// `winograd F(mxm,3x3)`, `depthwise` (one input and one output
    /// channel per group), `im2col packed` (a GEMM whose filter was packed
    /// at load: [`Conv::prepare`]) or `im2col` (a GEMM packing both
    /// operands per call; 1x1 stride-1 convolutions use the input itself as
    /// its right operand either way).
    ///
    /// `types` are the input, filter and output types: with static shapes a
    /// packed filter's label says which of the two paths the run takes
    /// (`taps packed`: [`Conv::run_taps`]; `im2col packed`), as
    /// [`Conv::run_gemm`] decides it; with symbolic ones, `taps or im2col
    /// packed (by shape)`.
    pub fn algorithm(&self, types: [&ge_ir::Type; 3]) -> String {
        let [input, filter, output] = types;
        let depthwise = filter
            .as_tensor()
            .and_then(|t| t.dims.clone())
            .is_some_and(|d| {
                d.len() == 4
                    && d[1].as_static() == Some(1)
                    && d[0].as_static() == Some(self.group as i64)
            });
        if self.reads_blocks {
            return match self.blocks.first() {
                Some(_) => "direct on NC1HWC0 blocks, packed".into(),
                None => "direct on NC1HWC0 blocks".into(),
            };
        }
        match self.winograd {
            Some(w) => format!("winograd F({m}x{m},3x3)", m = w.m),
            None if depthwise => self.depthwise_label([input, filter, output]),
            None => match self.packed.taps() {
                Some(taps) => self.packed_label(taps, [input, filter, output]),
                None => "im2col".into(),
            },
        }
    }

    /// The shapes of a run on these input, filter and output types, when
    /// they are static.
    fn static_shapes(&self, types: [&ge_ir::Type; 3]) -> Option<Shapes> {
        let dims = |t: &ge_ir::Type| -> Option<Vec<usize>> {
            t.as_tensor()?
                .dims
                .as_ref()?
                .iter()
                .map(|d| d.as_static().and_then(|v| usize::try_from(v).ok()))
                .collect()
        };
        let [x, w, o] = types.map(dims);
        self.shapes_of(&x?, &w?, &o?).ok()
    }

    /// [`Conv::algorithm`] of a depthwise convolution: which of its kernels
    /// the map size picks (`run_depthwise`), when the shapes are static.
    fn depthwise_label(&self, types: [&ge_ir::Type; 3]) -> String {
        match self.static_shapes(types) {
            #[cfg(target_arch = "x86_64")]
            Some(sh) if super::depthwise_s2::applies(&sh.geo) => {
                "depthwise (stride 2 in rows)".into()
            }
            #[cfg(target_arch = "x86_64")]
            Some(sh) if super::depthwise_lanes::applies(&sh.geo) => {
                match super::depthwise_tiny::applies(&sh.geo) {
                    true => "depthwise (tiny planes)".into(),
                    false => "depthwise (channels in lanes)".into(),
                }
            }
            Some(_) => "depthwise (plane by plane)".into(),
            None => "depthwise".into(),
        }
    }

    /// [`Conv::algorithm`] of a packed filter.
    fn packed_label(&self, taps: Taps, types: [&ge_ir::Type; 3]) -> String {
        let sh = self.static_shapes(types);
        match sh {
            Some(sh) if !self.pointwise(&sh.geo) && reads_taps(taps, &sh) => "taps packed".into(),
            Some(_) => "im2col packed".into(),
            None if taps == Taps::Never => "im2col packed".into(),
            None => "taps or im2col packed (by shape)".into(),
        }
    }

    /// A 1x1 stride-1 convolution without padding: its input is the GEMM's
    /// right operand as it is (no im2col panel, no taps).
    fn pointwise(&self, g: &Geo) -> bool {
        g.kh == 1
            && g.kw == 1
            && g.sh == 1
            && g.sw == 1
            && self.pads == [0; 4]
            && g.oh == g.h
            && g.ow == g.w
    }

    /// The epilogue of output row `row`: channel `co` of image `bi`, plain
    /// positions `p0..p0 + row.len()` of its plane (of `oc` channels of `p`
    /// positions) — bias, residual, activation.
    ///
    /// # Safety
    /// `ptrs` point to the convolution's tensors, of `oc` output channels
    /// of `p` positions, and the row lies inside channel `co`'s plane.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn epilogue(
        &self,
        ptrs: &Ptrs,
        oc: usize,
        p: usize,
        bi: usize,
        co: usize,
        p0: usize,
        row: &mut [f32],
    ) {
        let bias = ptrs.b.map(|b| *b.p().add(co));
        let act = match self.block_act() {
            true => "none",
            false => &self.act,
        };
        match ptrs.r {
            None => bias_activation(bias, act, self.alpha, row),
            Some(r) => {
                let at = (bi * oc + co) * p + p0;
                let residual = std::slice::from_raw_parts(r.p().add(at), row.len());
                bias_residual_activation(bias, residual, act, self.alpha, row)
            }
        }
    }

    /// [`Conv::epilogue`] and then [`Conv::finish_block`] of output rows
    /// `co0..co0 + rows` (channels of image `bi`) at once, when the rows
    /// are short (`cols < SHORT_ROW`), lie side by side (`stride == cols`)
    /// and take no residual: one call for the block instead of two per row,
    /// whose dispatch cost more than the arithmetic (a 48 -> 1152 1x1
    /// convolution on a 1x1 map spent two thirds of its time in per-row
    /// epilogue calls). False, nothing done, otherwise.
    ///
    /// # Safety
    /// As [`Conv::epilogue`]'s: `block` holds the `rows x cols` floats of
    /// those channels, and `ptrs` the bias of every channel.
    unsafe fn epilogue_short_rows(
        &self,
        ptrs: &Ptrs,
        co0: usize,
        rows: usize,
        cols: usize,
        stride: usize,
        block: *mut f32,
    ) -> bool {
        if cols >= SHORT_ROW || stride != cols || ptrs.r.is_some() {
            return false;
        }
        let bias = ptrs
            .b
            .map(|b| std::slice::from_raw_parts(b.p().add(co0), rows));
        let act = match self.block_act() {
            true => "none",
            false => &self.act,
        };
        let block = std::slice::from_raw_parts_mut(block, rows * cols);
        bias_activation_rows(bias, act, self.alpha, cols, block);
        self.finish_block(block);
        true
    }

    /// Whether the activation runs over whole blocks of rows after
    /// [`Conv::epilogue`] ([`Conv::finish_block`]) rather than in it, row by
    /// row: a transcendental one (sigmoid, tanh, gelu, silu), whose vector
    /// loop would leave the short rows of a small map to its scalar tail.
    fn block_act(&self) -> bool {
        !matches!(
            self.act.as_str(),
            "none" | "relu" | "relu6" | "leaky_relu" | "hard_swish"
        )
    }

    /// The activation of [`Conv::block_act`] over `block`: rows that went
    /// through [`Conv::epilogue`] (any other floats in it are dropped later).
    pub(super) fn finish_block(&self, block: &mut [f32]) {
        if self.block_act() {
            activation(&self.act, self.alpha, block);
        }
    }

    pub fn run(&self, ins: &[&Slot], out: &Slot, par: &Par) -> Result<(), String> {
        if self.reads_blocks {
            return self.run_blocks(ins, out, par);
        }
        let (x, w) = (ins[0], ins[1]);
        let sh = self.shapes(x, w, out)?;
        let xin = F32In::new(x);
        let win = F32In::new(w);
        // The bias is the third operand, unless that is the Winograd filter
        // or the residual.
        let bias = ins
            .get(2)
            .filter(|_| self.winograd.is_none_or(|wg| wg.input != 2) && self.residual != Some(2))
            .map(|b| F32In::new(b));
        let residual = match self.residual.map(|i| ins.get(i)) {
            None => None,
            Some(Some(r)) if r.shape == [sh.n, sh.oc, sh.geo.oh, sh.geo.ow] => Some(F32In::new(r)),
            Some(r) => {
                return Err(format!(
                    "conv2d: residual {:?} is not of the result's shape {:?}",
                    r.map(|r| &r.shape),
                    [sh.n, sh.oc, sh.geo.oh, sh.geo.ow]
                ))
            }
        };
        let mut o = F32Out::new(out);
        let ptrs = Ptrs {
            x: Shared(xin.ptr()),
            w: Shared(win.ptr()),
            o: Shared(o.ptr()),
            b: bias.as_ref().map(|b| Shared(b.ptr())),
            r: residual.as_ref().map(|r| Shared(r.ptr())),
        };
        if let Some(c0) = self.blocked_out {
            zero_pad_channels(ptrs.o.p(), sh.n, sh.oc, sh.p, c0);
        }
        let wino = self
            .winograd
            .and_then(|wg| Some((wg.m, *ins.get(wg.input)?)));
        if let Some((m, u)) = wino {
            winograd::run(self, &sh, &ptrs, u, m, par)?;
        } else if sh.cg == 1 && sh.ocg == 1 && phases_fit(&sh.geo) {
            self.run_depthwise(&sh, &ptrs, par)?;
        } else {
            let packed = self.packed.find(w);
            self.run_gemm(&sh, &ptrs, packed.as_deref(), par)?;
        }
        o.finish();
        Ok(())
    }

    /// The sizes of a convolution, checked against each other.
    fn shapes(&self, x: &Slot, w: &Slot, out: &Slot) -> Result<Shapes, String> {
        self.shapes_of(&x.shape, &w.shape, &out.shape)
    }

    /// [`Conv::shapes`] of an input, filter and output of these dims.
    fn shapes_of(&self, xs: &[usize], ws: &[usize], os: &[usize]) -> Result<Shapes, String> {
        let [n, c, h, wd] = dims4(xs)?;
        let [oc, cg, kh, kw] = dims4(ws)?;
        let [on, ooc, oh, ow] = match (self.blocked_out, os) {
            (None, _) => dims4(os)?,
            (Some(c0), &[on, c1, oh, ow, cc0]) if cc0 == c0 && c1 == oc.div_ceil(c0) => {
                [on, oc, oh, ow]
            }
            (Some(c0), s) => {
                return Err(format!(
                    "conv2d: output {s:?} is not NC1HWC0 with C0 {c0} for {oc} channels"
                ))
            }
        };
        let g = self.group;
        if on != n || ooc != oc || c != cg * g || oc % g != 0 {
            return Err(format!(
                "conv2d: shapes {xs:?} * {ws:?} -> {os:?} do not agree (group {g})"
            ));
        }
        Ok(Shapes {
            n,
            c,
            oc,
            cg,
            g,
            ocg: oc / g,
            k: cg * kh * kw,
            p: oh * ow,
            geo: self.geo([h, wd], [kh, kw], [oh, ow]),
        })
    }

    /// The plane's geometry of an `h x w` input, a `kh x kw` filter and an
    /// `oh x ow` output under this convolution's strides, pads and
    /// dilations (the caller checked the sizes against each other).
    pub(super) fn geo(
        &self,
        [h, w]: [usize; 2],
        [kh, kw]: [usize; 2],
        [oh, ow]: [usize; 2],
    ) -> Geo {
        Geo {
            h,
            w,
            kh,
            kw,
            oh,
            ow,
            sh: self.strides[0],
            sw: self.strides[1],
            pt: self.pads[0],
            pl: self.pads[1],
            dh: self.dilations[0],
            dw: self.dilations[1],
        }
    }

    /// Depthwise, the direct kernels: 16 channels a task in the vector lanes
    /// on small maps (`depthwise_lanes.rs`), else one channel a task.
    fn run_depthwise(&self, sh: &Shapes, ptrs: &Ptrs, par: &Par) -> Result<(), String> {
        let Shapes { n, c, oc, g, p, .. } = *sh;
        let geo = &sh.geo;
        let (h, wd, kh, kw) = (geo.h, geo.w, geo.kh, geo.kw);
        // With AVX-512: 3x3 stride 2 row by row in place, or on small maps
        // 16 channels in the vector lanes, 16 channels a task; else one
        // channel a task, vectorized along its plane.
        let s2 = super::depthwise_s2::applies(geo);
        let lanes = !s2 && super::depthwise_lanes::applies(geo);
        #[cfg(target_arch = "x86_64")]
        let tiny = (lanes && super::depthwise_tiny::applies(geo))
            .then(|| super::depthwise_tiny::Tables::new(geo));
        let width = if lanes || s2 { 16 } else { 1 };
        let blocks = g.div_ceil(width);
        par.run(n * blocks, n * g * p * kh * kw > 1 << 15, &|t| {
            let (bi, c0) = (t / blocks, t % blocks * width);
            let cnt = (g - c0).min(width);
            // SAFETY: the task reads channels `c0..c0 + cnt` of image `bi`
            // and their filters, and writes only those channels' outputs:
            // their NCHW planes (`oc == g` planes of `p` floats an image),
            // or their lanes of the NC1HWC0 blocks from a tile of its own.
            // The stride-2 and lanes kernels run only where their
            // `applies` held.
            unsafe {
                let xs = ptrs.x.p().add((bi * c + c0) * h * wd);
                let ws = ptrs.w.p().add(c0 * kh * kw);
                OUT_TILE.with(|tile| {
                    let mut tile = tile.borrow_mut();
                    let os = match self.blocked_out {
                        None => ptrs.o.p().add((bi * oc + c0) * p),
                        Some(_) => {
                            if tile.len() < cnt * p {
                                tile.resize(cnt * p, 0.0);
                            }
                            tile.as_mut_ptr()
                        }
                    };
                    // The stride-2 and lanes kernels apply a bias and a cheap
                    // activation themselves (a residual and the rest stay
                    // plane by plane).
                    #[cfg(target_arch = "x86_64")]
                    let in_lanes = {
                        use super::depthwise_lanes::{LaneAct, LaneEpilogue};
                        let epi = LaneAct::of(&self.act)
                            .filter(|_| (lanes || s2) && ptrs.r.is_none())
                            .map(|act| LaneEpilogue {
                                bias: ptrs.b.map(|b| b.p().add(c0)),
                                act,
                            });
                        match (lanes, &tiny) {
                            // 3x3 at stride 2: each plane in place, row by row.
                            _ if s2 => {
                                super::depthwise_s2::block(geo, xs, ws, os, cnt, epi.as_ref())
                            }
                            // Planes of a few pixels: one channel at a time,
                            // its plane in two vectors.
                            (true, Some(t)) => {
                                super::depthwise_tiny::block(geo, t, xs, ws, os, cnt, epi.as_ref())
                            }
                            (true, None) => PAD.with(|s| {
                                super::depthwise_lanes::block(
                                    geo,
                                    xs,
                                    ws,
                                    os,
                                    cnt,
                                    &mut s.borrow_mut(),
                                    epi.as_ref(),
                                )
                            }),
                            (false, _) => depthwise(geo, xs, ws, os),
                        }
                        epi.is_some()
                    };
                    #[cfg(not(target_arch = "x86_64"))]
                    let in_lanes = {
                        depthwise(geo, xs, ws, os);
                        false
                    };
                    if !in_lanes {
                        for ch in c0..c0 + cnt {
                            let plane = std::slice::from_raw_parts_mut(os.add((ch - c0) * p), p);
                            self.epilogue(ptrs, oc, p, bi, ch, 0, plane);
                        }
                        // The block's planes lie side by side.
                        self.finish_block(std::slice::from_raw_parts_mut(os, cnt * p));
                    }
                    if let Some(cb) = self.blocked_out {
                        for ch in c0..c0 + cnt {
                            let plane = std::slice::from_raw_parts(os.add((ch - c0) * p), p);
                            scatter_row(ptrs.o.p(), plane, oc, p, cb, bi, ch, 0);
                        }
                    }
                });
            }
            Ok(())
        })
    }

    /// im2col + GEMM over blocks of output rows x columns of every (batch,
    /// group) plane, with the epilogue (bias, activation, NC1HWC0 scatter)
    /// per block.
    fn run_gemm(
        &self,
        sh: &Shapes,
        ptrs: &Ptrs,
        packed: Option<&PackedFilter>,
        par: &Par,
    ) -> Result<(), String> {
        let geo = &sh.geo;
        let pointwise = self.pointwise(geo);
        if let Some(f) = packed.filter(|f| !pointwise && f.groups.len() == sh.g) {
            if reads_taps(f.taps, sh) {
                return self.run_taps(sh, ptrs, f, par);
            }
        }
        let parallel = sh.n * sh.oc * sh.p * sh.k > PARALLEL_MACS;
        let tl = Tiling::new(sh, pointwise, tiling_threads(par, parallel));
        // The shared panels of whole planes (3x3 and strided convolutions),
        // filled in parallel by input-channel ranges.
        let shared = tl.whole && !pointwise;
        let mut panels = match shared {
            true => SHARED_PANEL.with(|b| b.take()),
            false => vec![],
        };
        if shared {
            fill_panels(sh, ptrs, &mut panels, par, parallel)?;
        }
        let panels_p = Shared(panels.as_ptr());
        let blocks = sh.n * sh.g * tl.tiles * tl.row_blocks;
        let r = par.run(blocks, parallel, &|t| {
            let operand = match (pointwise, shared) {
                (true, _) => Operand::Input,
                (false, true) => Operand::Panels(panels_p),
                (false, false) => Operand::Im2col,
            };
            // SAFETY: block `t` writes rows r0..r1, columns j0..j1 of its
            // (batch, group) output block only (`Tiling::block`).
            unsafe { self.gemm_block(sh, ptrs, packed, &tl, operand, t) };
            Ok(())
        });
        if shared {
            SHARED_PANEL.with(|b| b.replace(panels));
        }
        r
    }

    /// A convolution whose filter is packed, without an im2col panel: each
    /// input plane is copied once into its zero-padded stride phases
    /// ([`Phases`], as the depthwise kernel's), so row `(ci, ki, kj)` of
    /// the im2col matrix is the phases of channel `ci` read from a fixed
    /// offset, at the flat positions `oy * pw + ox` of the outputs. With
    /// AVX-512 the packed GEMM's columns are the `oh * ow` outputs, which
    /// it packs from those rows run by run ([`Rows::Grid`]); else it reads
    /// the rows in place ([`Rows::Offsets`]) over `(oh - 1) * pw + ow`
    /// columns, `pw - ow` of every `pw` of them padding, dropped as the
    /// block is stored.
    fn run_taps(
        &self,
        sh: &Shapes,
        ptrs: &Ptrs,
        f: &PackedFilter,
        par: &Par,
    ) -> Result<(), String> {
        let Shapes { n, c, .. } = *sh;
        let geo = &sh.geo;
        if geo.oh == 0 || geo.ow == 0 {
            return Ok(());
        }
        let ph = Phases::new(geo);
        let plen = ph.len(geo);
        let offsets = f.tap_offsets(geo, &ph)?;
        let offsets = &offsets[..];
        // The GEMM's columns: with AVX-512 the output positions, read from
        // the padded planes as a grid (`Rows::Grid`, which packs them run
        // by run); else the flat positions up to the last output, the
        // padding columns between output rows computed and dropped.
        let grid = super::sgemm_packed::wide();
        let vsh = Shapes {
            p: match grid {
                true => geo.oh * geo.ow,
                false => (geo.oh - 1) * ph.pw + geo.ow,
            },
            ..*sh
        };
        let parallel = sh.n * sh.oc * sh.p * sh.k > PARALLEL_MACS;
        let tl = Tiling::new(&vsh, true, tiling_threads(par, parallel));
        // Every float a tap reads is written by `Phases::fill`: no zeroing.
        let mut planes = SHARED_PANEL.with(|b| b.take());
        planes.resize(n * c * plen, 0.0);
        let pp = Shared(planes.as_mut_ptr());
        let (h, w) = (geo.h, geo.w);
        let r = par.run(n * c, parallel, &|t| {
            // SAFETY: task `t` fills the phases of input plane `t` only.
            unsafe {
                let dst = std::slice::from_raw_parts_mut(pp.p().add(t * plen), plen);
                ph.fill(geo, ptrs.x.p().add(t * h * w), dst, true);
            }
            Ok(())
        });
        let base = Shared(planes.as_ptr());
        let r = r.and_then(|()| {
            let blocks = n * sh.g * tl.tiles * tl.row_blocks;
            par.run(blocks, parallel, &|t| {
                // SAFETY: block `t` writes its rows of the output columns
                // its tile's positions map to, only (`Tiling::block`).
                unsafe { self.taps_block(&vsh, ptrs, f, &tl, base, offsets, grid, t) };
                Ok(())
            })
        });
        SHARED_PANEL.with(|b| b.replace(planes));
        r
    }

    /// One block of [`Conv::run_taps`]: output rows `r0..r1` (of the
    /// group's `ocg`), flat positions `j0..j1` of plane (`bi`, `gi`).
    ///
    /// # Safety
    /// `ptrs` point to the convolution's tensors at the sizes of `vsh`
    /// (whose `p` counts flat positions), `planes` at the phases of every
    /// input plane, and no other thread writes this block of the output.
    #[allow(clippy::too_many_arguments)]
    unsafe fn taps_block(
        &self,
        vsh: &Shapes,
        ptrs: &Ptrs,
        f: &PackedFilter,
        tl: &Tiling,
        planes: Shared<*const f32>,
        offsets: &[usize],
        grid: bool,
        t: usize,
    ) {
        let Shapes { c, oc, cg, ocg, .. } = *vsh;
        let geo = &vsh.geo;
        let (ow, pw) = (geo.ow, Phases::new(geo).pw);
        let p = geo.oh * ow;
        let plen = Phases::new(geo).len(geo);
        let (t, rb) = (t / tl.row_blocks, t % tl.row_blocks);
        let (r0, r1) = (rb * tl.rows, ((rb + 1) * tl.rows).min(ocg));
        let (plane, tile) = (t / tl.tiles, t % tl.tiles);
        let (bi, gi) = (plane / vsh.g, plane % vsh.g);
        let j0 = tile * tl.tn;
        let j1 = (j0 + tl.tn).min(vsh.p);
        let cols = j1 - j0;
        let Some(pa) = f.groups.get(gi) else { return };
        let plane = planes.p().add((bi * c + gi * cg) * plen);
        if grid && self.blocked_out.is_none() && ptrs.residual_apart(vsh.n * oc * p) {
            // The columns are output positions: the block's rows go straight
            // into the output planes, the epilogue runs there (no tile to
            // copy: a stem's 64 x 111 x 111 result was written three times;
            // a residual read there must not be the output's own buffer).
            let rows = Rows::Grid {
                b: plane,
                offsets,
                run: ow,
                stride: pw,
                from: j0,
            };
            let co0 = gi * ocg + r0;
            let out = ptrs.o.p().add((bi * oc + co0) * p + j0);
            pa.gemm_rows(r0, r1 - r0, rows, cols, out, p);
            if !self.epilogue_short_rows(ptrs, co0, r1 - r0, cols, p, out) {
                for r in 0..r1 - r0 {
                    let row = std::slice::from_raw_parts_mut(out.add(r * p), cols);
                    self.epilogue(ptrs, oc, p, bi, co0 + r, j0, row);
                    self.finish_block(row);
                }
            }
            return;
        }
        let mut buf = OUT_TILE.with(|t| t.take());
        buf.resize((r1 - r0) * cols, 0.0);
        let rows = match grid {
            true => Rows::Grid {
                b: plane,
                offsets,
                run: ow,
                stride: pw,
                from: j0,
            },
            false => Rows::Offsets(plane.add(j0), offsets),
        };
        pa.gemm_rows(r0, r1 - r0, rows, cols, buf.as_mut_ptr(), cols);
        // Output position of the first real column at or after `j0`.
        let p0 = match grid {
            true => j0,
            false => j0 / pw * ow + (j0 % pw).min(ow),
        };
        // Bias and activation over whole rows at once (the padding columns
        // too: they are dropped), a residual by position, run by run.
        let whole = ptrs.r.is_none();
        // Each run of real columns of a row: its columns in the row, its
        // output position.
        let runs = |f: &mut dyn FnMut(std::ops::Range<usize>, usize)| {
            if grid {
                return f(0..cols, p0);
            }
            let (mut j, mut at) = (j0, p0);
            while j < j1 {
                let (ox, end) = (j % pw, (j / pw + 1) * pw);
                let take = ow.saturating_sub(ox).min(j1 - j);
                if take > 0 {
                    f(j - j0..j - j0 + take, at);
                }
                at += take;
                j = end.min(j1);
            }
        };
        let co0 = gi * ocg + r0;
        if !self.epilogue_short_rows(ptrs, co0, r1 - r0, cols, cols, buf.as_mut_ptr()) {
            for r in 0..r1 - r0 {
                let row = &mut buf[r * cols..(r + 1) * cols];
                let co = co0 + r;
                match whole {
                    true => self.epilogue(ptrs, oc, p, bi, co, p0, row),
                    false => {
                        runs(&mut |cs, at| self.epilogue(ptrs, oc, p, bi, co, at, &mut row[cs]))
                    }
                }
            }
            self.finish_block(&mut buf[..(r1 - r0) * cols]);
        }
        // Each run of real columns (one output row's, or the part of it in
        // the block) to its place; the padding columns between runs are
        // dropped.
        runs(&mut |cs, at| {
            let rows = TileRows {
                first: buf.as_ptr().add(cs.start),
                stride: cols,
                count: r1 - r0,
                cols: cs.len(),
            };
            let co0 = gi * ocg + r0;
            match self.blocked_out {
                None => copy_rows(ptrs.o.p(), &rows, oc, p, bi, co0, at),
                Some(c0) => scatter_rows(ptrs.o.p(), &rows, oc, p, c0, bi, co0, at),
            }
        });
        OUT_TILE.with(|t| t.replace(buf));
    }

    /// One block of the GEMM: output rows `r0..r1` (of the group's `ocg`),
    /// columns `j0..j1` of plane (`bi`, `gi`).
    ///
    /// # Safety
    /// `ptrs` point to the convolution's tensors at the sizes of `sh`, and no
    /// other thread writes this block of the output at the same time.
    unsafe fn gemm_block(
        &self,
        sh: &Shapes,
        ptrs: &Ptrs,
        packed: Option<&PackedFilter>,
        tl: &Tiling,
        operand: Operand,
        t: usize,
    ) {
        let Shapes {
            c,
            oc,
            cg,
            ocg,
            k,
            p,
            ..
        } = *sh;
        let geo = &sh.geo;
        let (t, rb) = (t / tl.row_blocks, t % tl.row_blocks);
        let (r0, r1) = (rb * tl.rows, ((rb + 1) * tl.rows).min(ocg));
        let (plane, tile) = (t / tl.tiles, t % tl.tiles);
        let (bi, gi) = (plane / sh.g, plane % sh.g);
        let j0 = tile * tl.tn;
        let j1 = (j0 + tl.tn).min(p);
        let cols = j1 - j0;
        let xs = ptrs.x.p().add((bi * c + gi * cg) * geo.h * geo.w);
        let a = ptrs.w.p().add((gi * ocg + r0) * k);
        let mut tile = OUT_TILE.with(|t| t.take());
        // The GEMM's destination: the output, or a tile of rows x cols
        // to be scattered into NC1HWC0 blocks.
        let (cdst, rsc) = match self.blocked_out {
            None => (ptrs.o.p().add((bi * oc + gi * ocg + r0) * p + j0), p),
            Some(_) => {
                tile.resize((r1 - r0) * cols, 0.0);
                (tile.as_mut_ptr(), cols)
            }
        };
        // The filter packed at load (row blocks start at multiples of 16).
        let packed = packed
            .and_then(|f| f.groups.get(gi))
            .filter(|_| r0 % MR == 0);
        let gemm = |b: *const f32, ldb: usize| match packed {
            Some(pa) => pa.gemm(r0, r1 - r0, b, ldb, cols, cdst, rsc),
            None => sgemm(
                r1 - r0,
                k,
                cols,
                1.0,
                a,
                k as isize,
                1,
                b,
                ldb as isize,
                1,
                0.0,
                cdst,
                rsc as isize,
                1,
            ),
        };
        match operand {
            Operand::Input => gemm(xs.add(j0), p),
            Operand::Panels(panels) => gemm(panels.p().add(plane * k * p + j0), p),
            Operand::Im2col => PANEL.with(|buf| {
                let mut buf = buf.borrow_mut();
                if buf.len() < k * cols {
                    buf.resize(k * cols, 0.0);
                }
                im2col(geo, xs, 0..cg, j0, j1, &mut buf[..k * cols]);
                gemm(buf.as_ptr(), cols);
            }),
        }
        let co0 = gi * ocg + r0;
        if !self.epilogue_short_rows(ptrs, co0, r1 - r0, cols, rsc, cdst) {
            for r in 0..r1 - r0 {
                let row = std::slice::from_raw_parts_mut(cdst.add(r * rsc), cols);
                self.epilogue(ptrs, oc, p, bi, co0 + r, j0, row);
            }
            match rsc == cols {
                // The rows lie side by side (a tile, or whole output planes).
                true => self.finish_block(std::slice::from_raw_parts_mut(cdst, (r1 - r0) * cols)),
                false => (0..r1 - r0).for_each(|r| {
                    self.finish_block(std::slice::from_raw_parts_mut(cdst.add(r * rsc), cols))
                }),
            }
        }
        if let Some(c0) = self.blocked_out {
            let rows = TileRows {
                first: cdst,
                stride: rsc,
                count: r1 - r0,
                cols,
            };
            scatter_rows(ptrs.o.p(), &rows, oc, p, c0, bi, gi * ocg + r0, j0);
        }
        OUT_TILE.with(|t| t.replace(tile));
    }
}

/// The sizes of one convolution: batch `n`, channels `c` in and `oc` out,
/// `g` groups of `cg` in and `ocg` out channels, `k` = cg*kh*kw rows of the
/// im2col matrix, `p` = oh*ow output pixels per plane.
#[derive(Clone, Copy)]
pub(super) struct Shapes {
    pub n: usize,
    pub c: usize,
    pub oc: usize,
    pub cg: usize,
    pub g: usize,
    pub ocg: usize,
    pub k: usize,
    pub p: usize,
    pub geo: Geo,
}

/// The convolution's tensors, for the compute pool's threads.
pub(super) struct Ptrs {
    pub x: Shared<*const f32>,
    pub w: Shared<*const f32>,
    pub o: Shared<*mut f32>,
    pub b: Option<Shared<*const f32>>,
    /// The residual ([`Conv::residual`]), NCHW like the plain result.
    pub r: Option<Shared<*const f32>>,
}

impl Ptrs {
    /// Whether writing the `len` floats of the output leaves the residual
    /// (as long) as it is: none, or in another buffer (the memory plan may
    /// give a sum the place of one of its terms).
    fn residual_apart(&self, len: usize) -> bool {
        match self.r {
            None => true,
            Some(r) => {
                let (r, o) = (r.p() as usize, self.o.p() as usize);
                let bytes = len * std::mem::size_of::<f32>();
                r.saturating_add(bytes) <= o || o.saturating_add(bytes) <= r
            }
        }
    }
}

/// Where a GEMM block's right operand comes from.
#[derive(Clone, Copy)]
enum Operand {
    /// The input plane itself (1x1 stride-1 convolutions).
    Input,
    /// Whole-plane im2col panels filled once ([`fill_panels`]).
    Panels(Shared<*const f32>),
    /// An im2col panel of the block's columns, built by the block.
    Im2col,
}

/// How the GEMM of a convolution is cut into blocks of `rows` output
/// channels by `tn` columns.
struct Tiling {
    tn: usize,
    tiles: usize,
    rows: usize,
    row_blocks: usize,
    /// Whole planes per block, output channels split instead.
    whole: bool,
}

/// Multiply-adds below which a GEMM convolution runs on its caller's
/// thread alone: splitting it costs more than it saves. Above it the
/// launch's measured choice (`split.rs`) still runs it alone where
/// that is clearly faster. Small maps' pointwise layers of many channels
/// (512 -> 128 on 2x2: 2^18, 256 KiB of filter read per call) halve their
/// filter traffic split; at 2 threads (`tools/bench/ab_om.py`, 11 rounds,
/// 2^18 -> 2^16, medians): MobileNetV4 0.84x, MNASNet 0.96x, StarNet,
/// HGNetV2, ConvMixer, MobileNetV2 within 2 %.
pub(super) const PARALLEL_MACS: usize = 1 << 16;

/// The threads a convolution's tiles are cut for: the pool's when the
/// region runs in parallel, else one — a region run on one thread in tiles
/// cut for two (column tiles shortened to divide among them, the output
/// channels split into row blocks) only pays for the smaller tiles.
fn tiling_threads(par: &Par, parallel: bool) -> usize {
    match parallel {
        true => par.threads(),
        false => 1,
    }
}

impl Tiling {
    fn new(sh: &Shapes, pointwise: bool, threads: usize) -> Tiling {
        let Shapes { ocg, k, p, .. } = *sh;
        let planes = sh.n * sh.g;
        // Column tiles: the im2col panel (k x tn floats) around 256 KiB, in
        // whole 64-column steps (gemm's kernel covers 64 columns at a time).
        // A pointwise convolution's operand is the input itself, not a
        // panel: one column tile (the GEMM blocks for the cache itself;
        // every tile would pack all the weights again — SqueezeNet's
        // 512 -> 1000 classifier on 169 columns was two calls, 128 + 41).
        let mut tn = match pointwise {
            true => p.max(1),
            false => ((65536 / k.max(1) + 32) / 64 * 64).clamp(64, 2048),
        };
        // Few column tiles for the threads and more output channels than
        // columns (ResNet's 14x14 and 7x7 stages: 49 columns are tiles of 32
        // and 17, and every tile packs all the weights): whole planes, and
        // the output channels split instead, in even blocks of 16-row
        // multiples; a 3x3 convolution's panel is then built once, shared
        // by the blocks.
        let whole = threads > 1
            && ocg > p
            && planes * p.div_ceil(tn) < 4 * threads
            && planes * ocg.div_ceil(16) >= 2 * threads
            && (pointwise || planes * p * k <= 1 << 21);
        let mut row_blocks = 1;
        if whole {
            tn = p;
            row_blocks = ocg.div_ceil(balanced_rows(ocg, planes, threads));
        } else {
            // A few tiles that do not divide among the threads (5 tiles on
            // 2 threads wait for the fifth): as many equal tiles as makes
            // them do.
            let units = planes * p.div_ceil(tn);
            if threads > 1 && p > 64 && units < 4 * threads {
                let per_plane = units.next_multiple_of(threads).div_ceil(planes);
                tn = p.div_ceil(per_plane).max(16);
            }
            // Too few column tiles for the threads: split the rows as well.
            let tiles = p.div_ceil(tn);
            if planes * tiles < threads && ocg >= 32 {
                row_blocks = threads.div_ceil(planes * tiles);
            }
        }
        let rows = ocg
            .div_ceil(row_blocks)
            .next_multiple_of(16)
            .min(ocg)
            .max(1);
        Tiling {
            tn,
            tiles: p.div_ceil(tn),
            rows,
            row_blocks: ocg.div_ceil(rows),
            whole,
        }
    }
}

/// Fill the whole-plane im2col panels of every (batch, group) plane, in
/// parallel by input-channel ranges.
fn fill_panels(
    sh: &Shapes,
    ptrs: &Ptrs,
    panels: &mut Vec<f32>,
    par: &Par,
    parallel: bool,
) -> Result<(), String> {
    let Shapes { c, cg, g, k, p, .. } = *sh;
    let geo = &sh.geo;
    let planes = sh.n * g;
    panels.resize(planes * k * p, 0.0);
    let pp = Shared(panels.as_mut_ptr());
    let parts = (2 * par.threads()).min(cg);
    let per = cg.div_ceil(parts);
    par.run(planes * parts, parallel, &|t| {
        let (plane, part) = (t / parts, t % parts);
        let (c0, c1) = (part * per, ((part + 1) * per).min(cg));
        if c0 >= c1 {
            return Ok(());
        }
        let (bi, gi) = (plane / g, plane % g);
        let kk = geo.kh * geo.kw;
        // SAFETY: each task fills its own rows of its plane's panel.
        unsafe {
            let xs = ptrs.x.p().add((bi * c + gi * cg) * geo.h * geo.w);
            let dst = std::slice::from_raw_parts_mut(
                pp.p().add((plane * k + c0 * kk) * p),
                (c1 - c0) * kk * p,
            );
            im2col(geo, xs, c0..c1, 0, p, dst);
        }
        Ok(())
    })
}

/// Row `co` of a batch's output (columns `j0..`) into its NC1HWC0 blocks.
///
/// # Safety
/// `out` holds `[_, ceil(oc/c0), p, c0]` floats and the columns lie in `p`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn scatter_row(
    out: *mut f32,
    row: &[f32],
    oc: usize,
    p: usize,
    c0: usize,
    bi: usize,
    co: usize,
    j0: usize,
) {
    let c1 = oc.div_ceil(c0);
    let base = out.add(((bi * c1 + co / c0) * p + j0) * c0 + co % c0);
    for (j, &v) in row.iter().enumerate() {
        *base.add(j * c0) = v;
    }
}

/// Rows of floats side by side in a tile: `count` rows of `cols` floats,
/// `stride` floats apart from `first` on.
pub(super) struct TileRows {
    pub first: *const f32,
    pub stride: usize,
    pub count: usize,
    pub cols: usize,
}

/// Rows `co0..co0 + rows.count` of a batch's NCHW output (columns `j0..`)
/// from a tile.
///
/// # Safety
/// `out` holds `[_, oc, p]` floats, the columns lie in `p`, and `rows` in
/// readable memory apart from `out`.
#[allow(clippy::too_many_arguments)]
unsafe fn copy_rows(
    out: *mut f32,
    rows: &TileRows,
    oc: usize,
    p: usize,
    bi: usize,
    co0: usize,
    j0: usize,
) {
    for r in 0..rows.count {
        let dst = out.add((bi * oc + co0 + r) * p + j0);
        std::ptr::copy_nonoverlapping(rows.first.add(r * rows.stride), dst, rows.cols);
    }
}

/// Rows `co0..co0 + rows.count` of a batch's output (columns `j0..`) into
/// their NC1HWC0 blocks: 8 rows of a block at a time through an 8x8
/// transpose (each position's 8 channels one 32-byte store) with AVX,
/// others by [`scatter_row`]. Writing the blocks a float at a time cost a
/// 256 -> 64 1x1 convolution on 56x56 more than its GEMM.
///
/// # Safety
/// As [`scatter_row`] for each row; `rows` lie in readable memory.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn scatter_rows(
    out: *mut f32,
    rows: &TileRows,
    oc: usize,
    p: usize,
    c0: usize,
    bi: usize,
    co0: usize,
    j0: usize,
) {
    let mut r = 0;
    while r < rows.count {
        let co = co0 + r;
        if c0 == 8 && co.is_multiple_of(8) && r + 8 <= rows.count && super::transpose8::available()
        {
            let base = out.add(((bi * oc.div_ceil(8) + co / 8) * p + j0) * 8);
            // SAFETY: 8 rows of `cols` floats from row `r`, into block
            // `co / 8` of the output; `available` checked the CPU.
            super::transpose8::planes_to_block(
                rows.first.add(r * rows.stride),
                rows.stride,
                rows.cols,
                base,
            );
            r += 8;
            continue;
        }
        let row = std::slice::from_raw_parts(rows.first.add(r * rows.stride), rows.cols);
        scatter_row(out, row, oc, p, c0, bi, co, j0);
        r += 1;
    }
}

/// Zero the pad channels `oc..c1*c0` of an NC1HWC0 output.
fn zero_pad_channels(out: *mut f32, n: usize, oc: usize, p: usize, c0: usize) {
    let c1 = oc.div_ceil(c0);
    if oc == c1 * c0 {
        return;
    }
    for bi in 0..n {
        for j in 0..p {
            for co in oc..c1 * c0 {
                // SAFETY: inside the `[n, c1, p, c0]` output.
                unsafe { *out.add(((bi * c1 + c1 - 1) * p + j) * c0 + co % c0) = 0.0 };
            }
        }
    }
}

/// Rows per block (a multiple of 16) that split `ocg` output channels of
/// `planes` planes most evenly over `threads`: the fewest blocks among those
/// that leave no thread more rows than another split would (96 channels on
/// 2 threads: 2 x 48, not 3 x 32).
fn balanced_rows(ocg: usize, planes: usize, threads: usize) -> usize {
    let units = ocg.div_ceil(16);
    let load = |rows: usize| (planes * ocg.div_ceil(rows)).div_ceil(threads) * rows;
    (1..=units)
        .map(|blocks| (units.div_ceil(blocks) * 16).min(ocg))
        .min_by_key(|&rows| (load(rows), ocg.div_ceil(rows)))
        .unwrap_or(ocg)
}

thread_local! {
    static PANEL: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// Whole-plane panels shared by a convolution's row blocks (on the
    /// thread that runs the kernel).
    static SHARED_PANEL: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// A tile of output rows on its way into NC1HWC0 blocks.
    static OUT_TILE: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// Zero-padded input plane of a depthwise channel (the lanes kernel's).
    static PAD: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// The stride phases of a depthwise channel and its sums
    /// ([`depthwise_plane`]).
    static PLANE_PHASES: RefCell<PlaneBuf> = const { RefCell::new(PlaneBuf { buf: Vec::new(), zeroed_for: None }) };
}

/// [`depthwise_plane`]'s buffer: a channel's phases, then its sums.
struct PlaneBuf {
    buf: Vec<f32>,
    /// The geometry whose phases' padding the buffer holds as zeros: the
    /// phases of the last channel of that geometry, whose padding no fill
    /// writes ([`Phases::fill`] with `pads` false). The next channel of the
    /// same geometry need not zero it (small maps: the many short zeroing
    /// calls cost as much as the taps).
    zeroed_for: Option<Geo>,
}

pub fn dims4(s: &[usize]) -> Result<[usize; 4], String> {
    match s {
        [a, b, c, d] => Ok([*a, *b, *c, *d]),
        _ => Err(format!("expected a rank-4 tensor, got shape {s:?}")),
    }
}

/// Convolution geometry of one group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Geo {
    pub h: usize,
    pub w: usize,
    pub kh: usize,
    pub kw: usize,
    pub oh: usize,
    pub ow: usize,
    pub sh: usize,
    pub sw: usize,
    pub pt: usize,
    pub pl: usize,
    pub dh: usize,
    pub dw: usize,
}

/// Columns `j0..j1` of the im2col matrix rows of input channels `chans`
/// (rows: c, kh, kw) into `out` (row-major, j1-j0 wide).
///
/// # Safety
/// `x` points at `c` planes of `h x w` floats.
unsafe fn im2col(
    g: &Geo,
    x: *const f32,
    chans: std::ops::Range<usize>,
    j0: usize,
    j1: usize,
    out: &mut [f32],
) {
    let cols = j1 - j0;
    let mut row = 0;
    for ci in chans {
        let plane = x.add(ci * g.h * g.w);
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let dst = &mut out[row * cols..(row + 1) * cols];
                let mut j = j0;
                while j < j1 {
                    let (oy, ox0) = (j / g.ow, j % g.ow);
                    let run = (g.ow - ox0).min(j1 - j);
                    let d = &mut dst[j - j0..j - j0 + run];
                    let iy = (oy * g.sh + ki * g.dh) as isize - g.pt as isize;
                    if iy < 0 || iy >= g.h as isize {
                        d.fill(0.0);
                    } else {
                        let src = plane.add(iy as usize * g.w);
                        let base = (kj * g.dw) as isize - g.pl as isize;
                        // ox in [lo, hi) reads inside the row: 0 <= ox*sw + base < w
                        let (lo, hi) = valid_range(base, g.sw, g.w, g.ow);
                        let (a, b) = (lo.clamp(ox0, ox0 + run), hi.clamp(ox0, ox0 + run));
                        d[..a - ox0].fill(0.0);
                        if b > a {
                            let dd = &mut d[a - ox0..b - ox0];
                            if g.sw == 1 {
                                let s = src.offset(a as isize + base);
                                std::ptr::copy_nonoverlapping(s, dd.as_mut_ptr(), b - a);
                            } else {
                                let s = src.offset((a * g.sw) as isize + base);
                                for (t, v) in dd.iter_mut().enumerate() {
                                    *v = *s.add(t * g.sw);
                                }
                            }
                        }
                        d[b.max(a) - ox0..].fill(0.0);
                    }
                    j += run;
                }
                row += 1;
            }
        }
    }
}

/// Output columns `[lo, hi)` whose input column `ox*sw + base` lies in `[0, w)`.
fn valid_range(base: isize, sw: usize, w: usize, ow: usize) -> (usize, usize) {
    let lo = if base < 0 {
        ((-base) as usize).div_ceil(sw)
    } else {
        0
    };
    let hi = if (w as isize) - base <= 0 {
        0
    } else {
        ((w as isize - base) as usize).div_ceil(sw)
    };
    (lo.min(ow), hi.min(ow).max(lo.min(ow)))
}

/// `out[i] = sum_k w[k] * taps[k][i]` over nine taps, summed in tap order.
/// Each tap is cut to the output's length first, so the loop has no bounds
/// checks left and vectorises.
#[inline(always)]
fn taps9(out: &mut [f32], w: &[f32], taps: [&[f32]; 9]) {
    let n = out.len();
    let w = &w[..9];
    let [t0, t1, t2, t3, t4, t5, t6, t7, t8] = taps;
    let (t0, t1, t2) = (&t0[..n], &t1[..n], &t2[..n]);
    let (t3, t4, t5) = (&t3[..n], &t4[..n], &t5[..n]);
    let (t6, t7, t8) = (&t6[..n], &t7[..n], &t8[..n]);
    for i in 0..n {
        out[i] = w[0] * t0[i]
            + w[1] * t1[i]
            + w[2] * t2[i]
            + w[3] * t3[i]
            + w[4] * t4[i]
            + w[5] * t5[i]
            + w[6] * t6[i]
            + w[7] * t7[i]
            + w[8] * t8[i];
    }
}

/// One depthwise channel: `o[oh x ow] = sum x * w`. The plane is first
/// split into its `sh x sw` stride phases, zero-padded: phase `(a, b)` holds
/// the padded plane's rows `a, a + sh, ...` and columns `b, b + sw, ...`,
/// every phase `pw` wide. Tap `(ki, kj)` then reads phase
/// `(ki*dh % sh, kj*dw % sw)` at the fixed offset
/// `(ki*dh / sh) * pw + kj*dw / sw` from the flat position `oy * pw + ox`
/// of output `(oy, ox)`, so all taps sum over the whole plane in one loop
/// of unit strides (long vectors even on 7x7 planes; a 3x3 filter sums its
/// nine taps in one pass), no range checks; the `ow` valid columns of each
/// row are then copied out. The sums run in tap order (bitwise the old
/// row-by-row kernel's).
///
/// # Safety
/// `x`: an `h x w` plane, `wt`: `kh x kw` taps, `o`: an `oh x ow` plane.
unsafe fn depthwise(g: &Geo, x: *const f32, wt: *const f32, o: *mut f32) {
    PLANE_PHASES.with(|buf| {
        let st: &mut PlaneBuf = &mut buf.borrow_mut();
        by_cpu_features!(depthwise_plane(g: &Geo, x: *const f32, wt: *const f32, o: *mut f32, st: &mut PlaneBuf))
    })
}

/// The stride phases of a depthwise channel's padded plane: `rows x pw`
/// each, phase `(a, b)` at `(a * sw + b) * rows * pw`.
struct Phases {
    rows: usize,
    pw: usize,
}

impl Phases {
    fn new(g: &Geo) -> Phases {
        Phases {
            rows: g.oh + (g.kh - 1) * g.dh / g.sh,
            pw: g.ow + (g.kw - 1) * g.dw / g.sw,
        }
    }
    fn len(&self, g: &Geo) -> usize {
        g.sh * g.sw * self.rows * self.pw
    }
    /// Where tap `(ki, kj)` of output 0 lies.
    fn tap(&self, g: &Geo, ki: usize, kj: usize) -> usize {
        let (r, c) = (ki * g.dh, kj * g.dw);
        ((r % g.sh * g.sw + c % g.sw) * self.rows + r / g.sh) * self.pw + c / g.sw
    }
    /// Fill `ph` (`len` floats) from the `h x w` plane `x`: every float of
    /// the phases some tap reads, and with `pads` zeros where the padding
    /// is (so `ph` need not be zeroed first; without, `ph` holds them
    /// already); the phases no tap reads are left as they are.
    ///
    /// # Safety
    /// `x` points at `h x w` floats.
    unsafe fn fill(&self, g: &Geo, x: *const f32, ph: &mut [f32], pads: bool) {
        let pw = self.pw;
        // Only the phases some tap reads (a strided 1x1 filter reads one):
        // per phase, a patchify filter's 8x8 taps cost more than its copy.
        // Asked per phase, no table: this runs per channel, and a table is
        // two small allocations each time.
        let read =
            |phase: usize, taps: usize, d: usize, s: usize| (0..taps).any(|t| t * d % s == phase);
        for a in (0..g.sh).filter(|&a| read(a, g.kh, g.dh, g.sh)) {
            for b in (0..g.sw).filter(|&b| read(b, g.kw, g.dw, g.sw)) {
                let base = (a * g.sw + b) * self.rows * pw;
                // Phase column j is input column j*sw + b - pl: valid j in [lo, hi).
                let (lo, hi) = valid_range(b as isize - g.pl as isize, g.sw, g.w, pw);
                for i in 0..self.rows {
                    let dst = &mut ph[base + i * pw..base + (i + 1) * pw];
                    let y = (i * g.sh + a) as isize - g.pt as isize;
                    if y < 0 || y >= g.h as isize || lo >= hi {
                        if pads {
                            dst.fill(0.0);
                        }
                        continue;
                    }
                    let src = x.add(y as usize * g.w);
                    let first = lo * g.sw + b - g.pl;
                    let (head, rest) = dst.split_at_mut(lo);
                    let (row, tail) = rest.split_at_mut(hi - lo);
                    if pads {
                        head.fill(0.0);
                        tail.fill(0.0);
                    }
                    match g.sw {
                        1 => {
                            row.copy_from_slice(std::slice::from_raw_parts(src.add(first), hi - lo))
                        }
                        // Every other column, as pairs (a pattern the
                        // compiler turns into vector shuffles); the last
                        // one may have no pair inside the row.
                        2 => {
                            let s = std::slice::from_raw_parts(src.add(first), 2 * (hi - lo) - 1);
                            let pairs = s.chunks_exact(2);
                            if let (Some(v), &[last]) = (row.last_mut(), pairs.remainder()) {
                                *v = last;
                            }
                            for (v, pair) in row.iter_mut().zip(pairs) {
                                *v = pair[0];
                            }
                        }
                        _ => {
                            for (t, v) in row.iter_mut().enumerate() {
                                *v = *src.add(first + t * g.sw);
                            }
                        }
                    }
                }
            }
        }
    }
}

#[inline(always)]
unsafe fn depthwise_plane(g: &Geo, x: *const f32, wt: *const f32, o: *mut f32, st: &mut PlaneBuf) {
    if g.oh == 0 || g.ow == 0 {
        return;
    }
    let ph = Phases::new(g);
    let (plen, pw, ow) = (ph.len(g), ph.pw, g.ow);
    // Flat outputs oy*pw + ox up to the last valid one.
    let n = (g.oh - 1) * pw + ow;
    if st.zeroed_for != Some(*g) || st.buf.len() < plen + n {
        st.buf.clear();
        st.buf.resize(plen + n, 0.0);
        st.zeroed_for = Some(*g);
    }
    let (planes, acc) = st.buf[..plen + n].split_at_mut(plen);
    // The padding is zero already (above, or the last channel's fill).
    ph.fill(g, x, planes, false);
    let w = std::slice::from_raw_parts(wt, g.kh * g.kw);
    let tap = |ki: usize, kj: usize| &planes[ph.tap(g, ki, kj)..];
    if g.kh == 3 && g.kw == 3 {
        let t = [0, 1, 2].map(|ki| [0, 1, 2].map(|kj| tap(ki, kj)));
        let [[t0, t1, t2], [t3, t4, t5], [t6, t7, t8]] = t;
        taps9(acc, w, [t0, t1, t2, t3, t4, t5, t6, t7, t8]);
    } else {
        acc.fill(0.0);
        for ki in 0..g.kh {
            for kj in 0..g.kw {
                let wv = w[ki * g.kw + kj];
                for (out, &v) in acc.iter_mut().zip(tap(ki, kj)) {
                    *out += wv * v;
                }
            }
        }
    }
    for oy in 0..g.oh {
        let orow = std::slice::from_raw_parts_mut(o.add(oy * ow), ow);
        orow.copy_from_slice(&acc[oy * pw..oy * pw + ow]);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_residual_in_the_outputs_buffer_is_not_apart() {
        use super::{Ptrs, Shared};
        let mut buf = vec![0f32; 64];
        let base = buf.as_mut_ptr();
        let ptrs = |o: usize, r: Option<usize>| Ptrs {
            x: Shared(base.cast_const()),
            w: Shared(base.cast_const()),
            // SAFETY: every offset passed is inside `buf` (64 floats).
            o: Shared(unsafe { base.add(o) }),
            b: None,
            // SAFETY: as above.
            r: r.map(|r| Shared(unsafe { base.add(r) }.cast_const())),
        };
        // 16 floats of output: no residual, one after it, one before it,
        // the same buffer, one overlapping its end.
        assert!(ptrs(0, None).residual_apart(16));
        assert!(ptrs(0, Some(16)).residual_apart(16));
        assert!(ptrs(32, Some(16)).residual_apart(16));
        assert!(!ptrs(16, Some(16)).residual_apart(16));
        assert!(!ptrs(16, Some(24)).residual_apart(16));
        assert!(!ptrs(24, Some(16)).residual_apart(16));
    }

    #[test]
    fn row_blocks_split_channels_evenly() {
        // (channels, planes, threads) -> rows per block
        assert_eq!(super::balanced_rows(96, 1, 2), 48);
        assert_eq!(super::balanced_rows(144, 1, 2), 80); // 80 + 64: 9 units of 16
        assert_eq!(super::balanced_rows(512, 1, 2), 256);
        assert_eq!(super::balanced_rows(64, 2, 2), 64); // one block per plane
        assert_eq!(super::balanced_rows(40, 1, 2), 32); // 32 + 8
        assert_eq!(super::balanced_rows(960, 1, 3), 320);
    }
}
