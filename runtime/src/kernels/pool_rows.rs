//! Max pooling of large planes in two passes: along each input row, then
//! down the columns of those row maxima (AVX-512F, column stride 1 or 2,
//! no column dilation). SqueezeNet's 3x3 stride-2 pools over 111x111 and
//! 55x55 planes spent most of their time in the plane-wise kernel's split
//! of every row into column phases (`pool.rs`); here a stride-2 row is
//! split in registers, two vectors' even or odd lanes gathered into one by
//! a permute.
//!
//! Bit for bit the generic loop of `Pool::run`, which folds a window's
//! taps in row-major order with "the later value wins when greater or
//! NaN". That fold is associative (it keeps the first of the greatest
//! values, or the last NaN), so folding each row of the window, then the
//! rows' results in order, is a regrouping of the same sequence and gives
//! the same bits. (Down columns first would not: it changes which of two
//! equal values — +0.0 and -0.0 — or which NaN a window keeps.) Padded
//! taps read -inf, which never wins, and an absent row is skipped.
//!
//! The folds here are always the exact ones: looking for NaN first, to fold
//! NaN-free planes with one `MAXPS` ([`fold_max`]'s shortcut, which
//! `pool_lanes.rs` takes), cost a pass over the plane and more than it saved
//! (SqueezeNet's 64x111x111 pool alone: 189 -> 214 µs).

use super::pool::Pool;

/// Floats in a vector.
const LANES: usize = 16;

/// The geometry of one plane's pool on this path.
#[derive(Clone, Debug)]
pub(super) struct Rows {
    h: usize,
    w: usize,
    oh: usize,
    ow: usize,
    kh: usize,
    kw: usize,
    sh: usize,
    /// 1 or 2.
    sw: usize,
    dh: usize,
    pt: usize,
    pl: usize,
}

impl Rows {
    /// Outputs of a row rounded up to whole vectors: the row maxima's
    /// stride.
    fn owv(&self) -> usize {
        self.ow.next_multiple_of(LANES)
    }

    /// Whether a row's outputs are fewer than a vector and every window of
    /// the row lies in the 32 columns from `-pl`: a stride-2 pool 2 or 3
    /// wide on a plane up to 32 columns (SqueezeNet's and Inception's late
    /// pools, 31 -> 15, 15 -> 7, 28 -> 14), which [`pool_narrow`] folds
    /// from two masked loads a row.
    pub(super) fn fits_two_vectors(&self) -> bool {
        self.sw == 2
            && (self.kw == 2 || self.kw == 3)
            && self.ow > 0
            && self.ow < LANES
            && self.pl < 2 * LANES
            && 2 * (self.ow - 1) + self.kw <= 2 * LANES
    }
}

/// The geometry of `pool` on `h x w` planes pooled to `oh x ow` when this
/// kernel takes it: a max pool on an AVX-512F CPU, non-negative pads,
/// positive kernel, strides and dilations, column stride 1 or 2, column
/// dilation 1, and output rows of at least a vector.
pub(super) fn geometry(
    pool: &Pool,
    (h, w): (usize, usize),
    (oh, ow): (usize, usize),
) -> Option<Rows> {
    let pos = |v: isize| usize::try_from(v).ok().filter(|&v| v > 0);
    let pad = |v: isize| usize::try_from(v).ok();
    let g = Rows {
        h,
        w,
        oh,
        ow,
        kh: pos(pool.kernel[0])?,
        kw: pos(pool.kernel[1])?,
        sh: pos(pool.strides[0])?,
        sw: pos(pool.strides[1])?,
        dh: pos(pool.dilations[0])?,
        pt: pad(pool.pads[0])?,
        pl: pad(pool.pads[1])?,
    };
    let takes = !pool.avg
        && pool.pads.iter().all(|&p| p >= 0)
        && pool.dilations[1] == 1
        && (g.sw == 1 || g.sw == 2)
        && oh > 0
        && (ow >= LANES || g.fits_two_vectors())
        && h > 0
        && w > 0;
    #[cfg(target_arch = "x86_64")]
    {
        (takes && std::arch::is_x86_feature_detected!("avx512f")).then_some(g)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = takes;
        None
    }
}

/// Pools `count` planes: `x` (`h x w` each, one after another) into `o`
/// (`oh x ow` each).
///
/// # Safety
/// `g` came from [`geometry`]; `x` holds `count * h * w` floats and `o`
/// `count * oh * ow`, not overlapping.
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn planes(g: &Rows, x: *const f32, o: *mut f32, count: usize) {
    // Every input row's maxima (`owv` apart), in the plane-wise kernel's
    // buffer (one thread local fewer: see `conv.rs`'s `TAP_OFFSETS`).
    super::pool::PADDED.with(|s| {
        // SAFETY: the caller's contract; `geometry` checked AVX-512F.
        unsafe { pool_planes(g, x, o, count, &mut s.borrow_mut()) }
    })
}

/// Planes a task of [`planes`] takes: narrow rows ([`Rows::fits_two_vectors`])
/// 16 at a time (a 7 x 7 plane is ~100 instructions, less than a task's
/// setup), wider ones one at a time.
pub(super) fn planes_per_task(g: &Rows) -> usize {
    match g.fits_two_vectors() {
        true => LANES,
        false => 1,
    }
}

/// `acc` folded with `v`: the later value wins when greater or NaN (the
/// generic loop's max). With `EXACT` false the caller has checked that no
/// input is NaN (`pool_lanes.rs`), so no fold is either: "greater or NaN"
/// is "greater", and that is `MAXPS(v, acc)` — `acc` unless `v` is greater, so a tie keeps
/// `acc` as the fold does, +0.0 against -0.0 included — one instruction
/// instead of two compares and a blend, and a shorter chain.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub(super) fn fold_max<const EXACT: bool>(
    acc: std::arch::x86_64::__m512,
    v: std::arch::x86_64::__m512,
) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    if !EXACT {
        return _mm512_max_ps(v, acc);
    }
    let wins = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(v, acc) | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
    _mm512_mask_mov_ps(acc, wins, v)
}

/// The 16 columns of an input row from column `c` (which may lie before the
/// row): the columns outside the row read -inf, the padding.
///
/// # Safety
/// `row` holds `w` floats.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn columns(row: *const f32, c: isize, w: isize) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    if c >= 0 && c + LANES as isize <= w {
        // SAFETY: columns `c..c + 16` of the row.
        return unsafe { _mm512_loadu_ps(row.offset(c)) };
    }
    // Lanes `i` with `0 <= c + i < w`; the rest are neither read nor
    // faulted on (AVX-512's masked loads), and their address is only formed,
    // wrapping, never dereferenced.
    let lo = (-c).clamp(0, LANES as isize) as u32;
    let hi = (w - c).clamp(0, LANES as isize) as u32;
    let upto = |n: u32| if n >= 16 { !0u16 } else { (1u16 << n) - 1 };
    let lanes = upto(hi) & !upto(lo);
    // SAFETY: only lanes inside the row are loaded.
    unsafe {
        _mm512_mask_loadu_ps(
            _mm512_set1_ps(f32::NEG_INFINITY),
            lanes,
            row.wrapping_offset(c),
        )
    }
}

/// One input row's maxima: `out[ox]` folds columns `sw * ox - pl ..
/// sw * ox - pl + kw` of `row` (`w` floats), for `ox < owv`. `SW` is the
/// column stride (1 or 2), `KW` the kernel width (0: `kw`, known only at
/// run time), so the common pools compile to straight-line code.
///
/// # Safety
/// `row` holds `w` floats, `out` `owv` (a multiple of 16).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn row_maxima<const SW: usize, const KW: usize>(
    row: *const f32,
    w: isize,
    pl: isize,
    kw: usize,
    out: *mut f32,
    owv: usize,
) {
    use std::arch::x86_64::*;
    let kw = if KW > 0 { KW } else { kw };
    // Lanes 0, 2, .., 30 (even) or 1, 3, .., 31 (odd) of two vectors.
    let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    // Columns a vector of outputs reads past its first: with stride 2, the
    // pairs of vectors from `c + kx` for the even taps `kx`.
    let reach = match SW {
        1 => kw - 1 + LANES,
        _ => ((kw - 1) & !1) + 2 * LANES,
    } as isize;
    // The taps' fold of the outputs `j..j + 16`, reading with `load`:
    // folding the first tap into -inf gives the tap; with stride 2, taps
    // `kx` and `kx + 1` are the even and the odd lanes of the 32 columns
    // from `c + kx`.
    macro_rules! fold_taps {
        ($load:expr, $c:expr) => {{
            let (load, c) = ($load, $c);
            match SW {
                1 => {
                    let mut acc = load(c);
                    for kx in 1..kw {
                        acc = fold_max::<true>(acc, load(c + kx as isize));
                    }
                    acc
                }
                _ => {
                    let (lo, hi) = (load(c), load(c + LANES as isize));
                    let mut acc = _mm512_permutex2var_ps(lo, even, hi);
                    if kw > 1 {
                        acc = fold_max::<true>(acc, _mm512_permutex2var_ps(lo, odd, hi));
                    }
                    for kx in (2..kw).step_by(2) {
                        let at = c + kx as isize;
                        let (lo, hi) = (load(at), load(at + LANES as isize));
                        acc = fold_max::<true>(acc, _mm512_permutex2var_ps(lo, even, hi));
                        if kx + 1 < kw {
                            acc = fold_max::<true>(acc, _mm512_permutex2var_ps(lo, odd, hi));
                        }
                    }
                    acc
                }
            }
        }};
    }
    for j in (0..owv).step_by(LANES) {
        let c = (SW * j) as isize - pl;
        // SAFETY: inside the row, plain loads of columns `c..c + reach`;
        // at its ends `columns` masks off what lies outside. `j + 16 <=
        // owv`.
        unsafe {
            let acc = if c >= 0 && c + reach <= w {
                fold_taps!(|c: isize| _mm512_loadu_ps(row.offset(c)), c)
            } else {
                fold_taps!(|c: isize| columns(row, c, w), c)
            };
            _mm512_storeu_ps(out.add(j), acc);
        }
    }
}

/// [`pool_plane_with`] for the pool's column stride and kernel width, or
/// [`pool_narrow`], over `count` planes.
///
/// # Safety
/// As [`planes`], with AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pool_planes(g: &Rows, x: *const f32, o: *mut f32, count: usize, scratch: &mut Vec<f32>) {
    // SAFETY: the caller's contract.
    unsafe {
        if g.ow < LANES {
            // `geometry` took a row of fewer outputs than a vector only
            // when they fit two vectors.
            return match g.kw {
                2 => pool_narrow::<2>(g, x, o, count, scratch),
                _ => pool_narrow::<3>(g, x, o, count, scratch),
            };
        }
        let plane = match (g.sw, g.kw) {
            (2, 3) => pool_plane_with::<2, 3>,
            (2, 2) => pool_plane_with::<2, 2>,
            (2, _) => pool_plane_with::<2, 0>,
            (_, 3) => pool_plane_with::<1, 3>,
            _ => pool_plane_with::<1, 0>,
        };
        for i in 0..count {
            plane(g, x.add(i * g.h * g.w), o.add(i * g.oh * g.ow), scratch);
        }
    }
}

/// One plane with [`row_maxima`] for column stride `SW` and kernel width
/// `KW` inlined into the loop over the rows (a call per row through a
/// function pointer: SqueezeNet's 64 x 111 x 111 pool, isolated, 183 -> 174
/// µs inlined).
///
/// # Safety
/// As [`planes`] for one plane, with AVX-512F and `g.sw == SW` (and
/// `g.kw == KW` unless 0).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pool_plane_with<const SW: usize, const KW: usize>(
    g: &Rows,
    x: *const f32,
    o: *mut f32,
    scratch: &mut Vec<f32>,
) {
    use std::arch::x86_64::*;
    let owv = g.owv();
    // Every float of it is written before it is read.
    if scratch.len() < g.h * owv {
        scratch.resize(g.h * owv, 0.0);
    }
    let maxima = scratch.as_mut_slice();
    let (w, pl) = (g.w as isize, g.pl as isize);
    // Each input row's maxima, read straight from the input (a copy into a
    // padded row stalled every load that spanned its stores).
    for y in 0..g.h {
        // SAFETY: row `y` of the plane (`w` floats) and its maxima (`owv`).
        unsafe {
            row_maxima::<SW, KW>(
                x.add(y * g.w),
                w,
                pl,
                g.kw,
                maxima[y * owv..].as_mut_ptr(),
                owv,
            )
        };
    }
    // Each output row folds its window's rows' maxima in order.
    let m = maxima.as_ptr();
    let tail = g.ow % LANES;
    for oy in 0..g.oh {
        // The window's rows inside the plane: taps `ky` with
        // `pt <= oy * sh + ky * dh < pt + h`, a run of them.
        let top = oy * g.sh;
        let first = g.pt.saturating_sub(top).div_ceil(g.dh);
        let end = (g.pt + g.h).saturating_sub(top).div_ceil(g.dh).min(g.kh);
        // SAFETY: row `oy` of the output plane.
        let dst = unsafe { o.add(oy * g.ow) };
        for j in (0..g.ow).step_by(LANES) {
            let mut acc = _mm512_set1_ps(f32::NEG_INFINITY);
            for ky in first..end {
                let y = top + ky * g.dh - g.pt;
                // SAFETY: `y < h`, `j + 16 <= owv`.
                let v = unsafe { _mm512_loadu_ps(m.add(y * owv + j)) };
                // The first row: folding it into -inf gives it. A window of
                // padding rows alone (ceil mode) stays -inf, as the
                // generic loop.
                acc = if ky == first {
                    v
                } else {
                    fold_max::<true>(acc, v)
                };
            }
            // SAFETY: outputs `j..` of row `oy`, `tail` of them in the
            // last, partial vector.
            unsafe {
                if j + LANES <= g.ow {
                    _mm512_storeu_ps(dst.add(j), acc);
                } else {
                    _mm512_mask_storeu_ps(dst.add(j), (1u16 << tail) - 1, acc);
                }
            }
        }
    }
}

/// [`pool_plane_with`] for rows of fewer than 16 outputs whose windows lie
/// in 32 columns ([`Rows::fits_two_vectors`]; stride 2, `KW` 2 or 3 wide):
/// a row's maxima come from two masked loads (the columns outside the row
/// read -inf, the padding) and two or three permutes of their even and odd
/// lanes, with the masks worked out once, not per load as [`columns`] does
/// at a wide row's ends. SqueezeNet's 64 x 31 x 31 pool (64 x 64 input)
/// took 10 µs through `pool_lanes.rs`, whose interleaving of 16 planes cost
/// as much as the pool.
///
/// A plane is first folded with one `MAXPS` a tap, which is the exact fold
/// when no input is NaN (as `pool_lanes.rs`), while one compare a row finds
/// whether any is; a plane that holds a NaN is folded again exactly.
///
/// # Safety
/// As [`planes`], with AVX-512F, `g.fits_two_vectors()` and `g.kw == KW`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pool_narrow<const KW: usize>(
    g: &Rows,
    x: *const f32,
    o: *mut f32,
    count: usize,
    scratch: &mut Vec<f32>,
) {
    if scratch.len() < g.h * LANES {
        scratch.resize(g.h * LANES, 0.0);
    }
    let maxima = scratch.as_mut_ptr();
    for i in 0..count {
        // SAFETY: plane `i` of the caller's `count`; `maxima` holds `h`
        // vectors.
        unsafe {
            let (x, o) = (x.add(i * g.h * g.w), o.add(i * g.oh * g.ow));
            if narrow_plane::<KW, false>(g, x, o, maxima) {
                narrow_plane::<KW, true>(g, x, o, maxima);
            }
        }
    }
}

/// One plane of [`pool_narrow`], its folds exact or not (`EXACT`, as
/// [`fold_max`]); whether an input of the plane is NaN (`EXACT` false: the
/// outputs written are then not the fold's).
///
/// # Safety
/// As [`pool_narrow`] for one plane; `maxima` holds `h` vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn narrow_plane<const KW: usize, const EXACT: bool>(
    g: &Rows,
    x: *const f32,
    o: *mut f32,
    maxima: *mut f32,
) -> bool {
    use std::arch::x86_64::*;
    // Lanes `i` of the 32 from column `-pl` that lie in the row: `pl <= i
    // < pl + w`, as a mask per vector.
    let upto = |n: usize| -> u32 {
        match n >= 32 {
            true => !0,
            false => (1u32 << n) - 1,
        }
    };
    let inside = upto(g.pl + g.w) & !upto(g.pl);
    let (lo_lanes, hi_lanes) = (inside as __mmask16, (inside >> 16) as __mmask16);
    let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    // Columns 2, 4, .., 30 and (lane 15, which no output of these rows
    // reads: `2 * (ow - 1) + KW <= 32`) column 0 again.
    let even2 = _mm512_setr_epi32(2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 0);
    let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
    let mut nan: __mmask16 = 0;
    for y in 0..g.h {
        // The address of column `-pl` is only formed, wrapping: the masks
        // load no lane outside the row.
        let from = x.add(y * g.w).wrapping_sub(g.pl);
        // SAFETY: lanes inside row `y` only (masked).
        let (lo, hi) = unsafe {
            (
                _mm512_mask_loadu_ps(ninf, lo_lanes, from),
                _mm512_mask_loadu_ps(ninf, hi_lanes, from.wrapping_add(LANES)),
            )
        };
        if !EXACT {
            // A lane is unordered when either vector's is NaN.
            nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(lo, hi);
        }
        // Taps 0, 1 (and 2) of output `ox` are columns `2 ox - pl + kx`:
        // the even lanes, the odd ones, the even ones a pair on. Folding
        // the first into -inf gives it.
        let mut acc = _mm512_permutex2var_ps(lo, even, hi);
        acc = fold_max::<EXACT>(acc, _mm512_permutex2var_ps(lo, odd, hi));
        if KW == 3 {
            acc = fold_max::<EXACT>(acc, _mm512_permutex2var_ps(lo, even2, hi));
        }
        // SAFETY: vector `y` of the `h`.
        unsafe { _mm512_storeu_ps(maxima.add(y * LANES), acc) };
    }
    let m = maxima.cast_const();
    let lanes = ((1u32 << g.ow) - 1) as __mmask16;
    let last = (g.kh - 1) * g.dh;
    for oy in 0..g.oh {
        // The window's rows inside the plane, folded in order (as
        // `pool_plane_with`); none (ceil mode): -inf. A window inside the
        // plane takes them all without a division.
        let top = oy * g.sh;
        let (first, end) = match top >= g.pt && top + last < g.pt + g.h {
            true => (0, g.kh),
            false => (
                g.pt.saturating_sub(top).div_ceil(g.dh),
                (g.pt + g.h).saturating_sub(top).div_ceil(g.dh).min(g.kh),
            ),
        };
        let mut acc = ninf;
        for ky in first..end {
            let y = top + ky * g.dh - g.pt;
            // SAFETY: `y < h`.
            let v = unsafe { _mm512_loadu_ps(m.add(y * LANES)) };
            acc = if ky == first {
                v
            } else {
                fold_max::<EXACT>(acc, v)
            };
        }
        // SAFETY: the `ow` outputs of row `oy`.
        unsafe { _mm512_mask_storeu_ps(o.add(oy * g.ow), lanes, acc) };
    }
    nan != 0
}
