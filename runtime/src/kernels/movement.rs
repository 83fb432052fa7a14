//! Data movement: copies, transposes, format changes (TransData), concat,
//! split, slice, gather and embedding lookups — strided byte copies.

use super::{Par, Slot};
use crate::shared::Shared;
use ge_dialects::data::layout::Transdata as TransdataOp;
use ge_dialects::data::layout::{is_padded, plain_logical, Layout};
use ge_dialects::data::movement::Slice as SliceOp;
use ge_ir::attributes::Format;
use ge_ir::body::{Body, OpId};

/// Copy a strided block of `shape` elements of `es` bytes (strides in elements).
///
/// # Safety
/// Both pointers must be valid for every strided element.
pub unsafe fn strided_copy(
    es: usize,
    shape: &[usize],
    src: *const u8,
    sst: &[isize],
    dst: *mut u8,
    dstt: &[isize],
) {
    if shape.contains(&0) {
        return;
    }
    let (shape, sst, dstt) = coalesce(shape, sst, dstt);
    let (shape, sst, dstt) = (&shape[..], &sst[..], &dstt[..]);
    if es == 4 && matrix_transpose(shape, src, sst, dst, dstt) {
        return;
    }
    match es {
        4 => strided_copy_t::<u32>(shape, src, sst, dst, dstt),
        2 => strided_copy_t::<u16>(shape, src, sst, dst, dstt),
        1 => strided_copy_t::<u8>(shape, src, sst, dst, dstt),
        8 => strided_copy_t::<u64>(shape, src, sst, dst, dstt),
        _ => {
            // Odd sizes: as bytes with an extra innermost dim.
            let mut sh = shape.to_vec();
            sh.push(es);
            let mut a: Vec<isize> = sst.iter().map(|&x| x * es as isize).collect();
            a.push(1);
            let mut b: Vec<isize> = dstt.iter().map(|&x| x * es as isize).collect();
            b.push(1);
            strided_copy_t::<u8>(&sh, src, &a, dst, &b)
        }
    }
}

/// The copy of 4-byte values as transposes of matrices, if it is one: the
/// destination's last axis contiguous, the source's next-to-last (a
/// `transpose` of the last two axes, such as `[0, 2, 1]`, or a depth to
/// space's interleave of 2 rows), that one at least 8 long, the last at
/// least 2, strides positive: [`super::transpose8::matrix`] for each index
/// of the axes before them (Swin2SR's pixel shuffle, 256 Ki values 770 ->
/// 228 µs: the generic loop copied 2 values per step of its index).
/// Returns whether it copied.
///
/// # Safety
/// As [`strided_copy`], `shape` and the strides coalesced.
unsafe fn matrix_transpose(
    shape: &[usize],
    src: *const u8,
    sst: &[isize],
    dst: *mut u8,
    dstt: &[isize],
) -> bool {
    let r = shape.len();
    if r < 2 || !super::transpose8::available() {
        return false;
    }
    let (a, b) = (r - 2, r - 1);
    let strided = sst[a] == 1 && dstt[b] == 1 && sst[b] > 1 && dstt[a] > 1;
    if !strided || shape[a] < 8 || shape[b] < 2 || sst.iter().chain(dstt).any(|&x| x < 1) {
        return false;
    }
    let (src, dst) = (src as *const f32, dst as *mut f32);
    let outer = &shape[..a];
    let mut idx = vec![0usize; a];
    for _ in 0..outer.iter().product::<usize>() {
        let so: isize = idx.iter().zip(sst).map(|(&i, &s)| i as isize * s).sum();
        let dof: isize = idx.iter().zip(dstt).map(|(&i, &s)| i as isize * s).sum();
        // SAFETY: the caller vouches for every element of the block: this
        // index's `shape[b]` source rows of `shape[a]` contiguous values
        // `sst[b]` apart, and its destination rows `dstt[a]` apart.
        unsafe {
            super::transpose8::matrix(
                shape[b],
                shape[a],
                src.offset(so),
                sst[b] as usize,
                dst.offset(dof),
                dstt[a] as usize,
            )
        };
        for k in (0..a).rev() {
            idx[k] += 1;
            if idx[k] < outer[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    true
}

/// `shape` and its strides in both layouts with the dims of length 1
/// dropped and each dim merged into the one before it where both layouts
/// step over the pair as over one dim: the same elements to the same
/// places in fewer, longer runs (a concat's `[1, 32, 4, 4]` operand into
/// its place in a `[1, 768, 4, 4]` result was 128 copies of 16 bytes; it
/// is one of 2 KiB).
fn coalesce(shape: &[usize], a: &[isize], b: &[isize]) -> (Vec<usize>, Vec<isize>, Vec<isize>) {
    let (mut sh, mut sa, mut sb): (Vec<usize>, Vec<isize>, Vec<isize>) = (vec![], vec![], vec![]);
    for ((&n, &x), &y) in shape.iter().zip(a).zip(b) {
        if n == 1 {
            continue;
        }
        if let (Some(last), Some(&px), Some(&py)) = (sh.last_mut(), sa.last(), sb.last()) {
            if px == x * n as isize && py == y * n as isize {
                *last *= n;
                let at = sa.len() - 1;
                (sa[at], sb[at]) = (x, y);
                continue;
            }
        }
        sh.push(n);
        sa.push(x);
        sb.push(y);
    }
    (sh, sa, sb)
}

unsafe fn strided_copy_t<T: Copy>(
    shape: &[usize],
    src: *const u8,
    sst: &[isize],
    dst: *mut u8,
    dstt: &[isize],
) {
    let (src, dst) = (src as *const T, dst as *mut T);
    let r = shape.len();
    if shape.contains(&0) {
        return;
    }
    if r == 0 {
        dst.write_unaligned(src.read_unaligned());
        return;
    }
    let inner = shape[r - 1];
    let (ss, ds) = (sst[r - 1], dstt[r - 1]);
    let outer: usize = shape[..r - 1].iter().product();
    let mut idx = vec![0usize; r - 1];
    let (mut so, mut dof) = (0isize, 0isize);
    for _ in 0..outer {
        let s = src.offset(so);
        let d = dst.offset(dof);
        if ss == 1 && ds == 1 {
            std::ptr::copy_nonoverlapping(s, d, inner);
        } else if ds == 1 {
            for i in 0..inner {
                d.add(i)
                    .write_unaligned(s.offset(i as isize * ss).read_unaligned());
            }
        } else {
            for i in 0..inner as isize {
                d.offset(i * ds)
                    .write_unaligned(s.offset(i * ss).read_unaligned());
            }
        }
        let mut k = r - 1;
        while k > 0 {
            k -= 1;
            idx[k] += 1;
            so += sst[k];
            dof += dstt[k];
            if idx[k] < shape[k] {
                break;
            }
            so -= sst[k] * idx[k] as isize;
            dof -= dstt[k] * idx[k] as isize;
            idx[k] = 0;
        }
    }
}

fn strides(s: &[usize]) -> Vec<isize> {
    ge_ir::tensor::strides(s)
        .into_iter()
        .map(|x| x as isize)
        .collect()
}

/// The cost rule for splitting a copy across the threads. A copy moves
/// bytes, not flops: it is split only when it moves at least this many
/// (256 KiB, ~25 us at memory speed, against the ~2 us a parallel region
/// costs its caller to open and close with a spinning worker), ...
pub const PAR_COPY_BYTES: usize = 1 << 18;
/// ... into tasks of at least this many bytes, at most four per thread
/// (a worker that joins late still finds some left).
pub const COPY_TASK_BYTES: usize = 1 << 16;

/// How many tasks a copy of `bytes` is split into on `threads` threads
/// (1: not split).
pub fn copy_tasks(bytes: usize, threads: usize) -> usize {
    if threads < 2 || bytes < PAR_COPY_BYTES {
        return 1;
    }
    (bytes / COPY_TASK_BYTES).clamp(1, 4 * threads)
}

/// Whether `[a, a + n)` and `[b, b + n)` share no byte.
pub fn disjoint(a: *const u8, b: *const u8, n: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a.saturating_add(n) <= b || b.saturating_add(n) <= a
}

/// [`strided_copy`] split across `par`'s threads (by [`copy_tasks`]) along
/// the outermost axis longer than 1: each task copies a range of that axis
/// (every axis before it has length 1, so the ranges cover the block).
///
/// # Safety
/// As [`strided_copy`]; and no destination element is a source element
/// (the tasks run in any order).
pub unsafe fn par_strided_copy(
    par: &Par,
    es: usize,
    shape: &[usize],
    src: *const u8,
    sst: &[isize],
    dst: *mut u8,
    dstt: &[isize],
) -> Result<(), String> {
    let bytes = shape.iter().product::<usize>() * es;
    let axis = shape.iter().position(|&d| d > 1);
    let (k, tasks) = match axis {
        Some(k) => (k, copy_tasks(bytes, par.threads()).min(shape[k])),
        None => (0, 1),
    };
    if tasks < 2 {
        strided_copy(es, shape, src, sst, dst, dstt);
        return Ok(());
    }
    let (sp, dp, len) = (Shared(src), Shared(dst), shape[k]);
    par.run(tasks, true, &|t| {
        let (a, b) = (len * t / tasks, len * (t + 1) / tasks);
        let mut sub = shape.to_vec();
        sub[k] = b - a;
        let (so, dof) = (a as isize * sst[k], a as isize * dstt[k]);
        // SAFETY: rows `a..b` of axis `k` of the block the caller vouched
        // for; the tasks write disjoint rows.
        unsafe {
            strided_copy(
                es,
                &sub,
                sp.p().offset(so * es as isize),
                sst,
                dp.p().offset(dof * es as isize),
                dstt,
            )
        };
        Ok(())
    })
}

/// Copy `n` contiguous bytes, split across `par`'s threads when it pays
/// and the two ranges do not overlap (else one `memmove`).
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes.
pub unsafe fn par_copy(par: &Par, src: *const u8, dst: *mut u8, n: usize) -> Result<(), String> {
    if copy_tasks(n, par.threads()) < 2 || !disjoint(src, dst, n) {
        std::ptr::copy(src, dst, n);
        return Ok(());
    }
    par_strided_copy(par, 1, &[n], src, &[1], dst, &[1])
}

/// Same bytes (reshape and friends).
pub fn copy(x: &Slot, out: &Slot, par: &Par) -> Result<(), String> {
    if x.bytes() != out.bytes() {
        return Err(format!("reshape of {:?} to {:?}", x.shape, out.shape));
    }
    if x.ptr != out.ptr {
        // SAFETY: both hold `bytes` bytes; `par_copy` allows overlap.
        unsafe { par_copy(par, x.ptr, out.ptr, x.bytes())? };
    }
    Ok(())
}

pub fn transpose(perm: &[usize], x: &Slot, out: &Slot, par: &Par) -> Result<(), String> {
    let st = strides(&x.shape);
    if perm.len() != x.shape.len() || perm.iter().any(|&p| p >= st.len()) {
        return Err(format!("transpose perm {perm:?} for shape {:?}", x.shape));
    }
    let sst: Vec<isize> = perm.iter().map(|&p| st[p]).collect();
    let shape: Vec<usize> = perm.iter().map(|&p| x.shape[p]).collect();
    if shape != out.shape {
        return Err(format!("transpose result {:?} is not {shape:?}", out.shape));
    }
    // SAFETY: shapes checked above; a transpose's result is a value of
    // its own (never its operand's bytes).
    unsafe {
        par_strided_copy(
            par,
            x.dtype.byte_size(),
            &shape,
            x.ptr,
            &sst,
            out.ptr,
            &strides(&shape),
        )
    }
}

#[derive(Clone, Debug)]
pub struct Transdata {
    pub src: Format,
    pub dst: Format,
}

impl Transdata {
    pub fn from_op(b: &Body, o: OpId) -> Option<Transdata> {
        let a = TransdataOp::attrs(b.op(o));
        let (src, dst) = (
            Format::parse(a.src_format()?)?,
            Format::parse(a.dst_format()?)?,
        );
        // One side must be plain (the logical shape comes from it).
        (!is_padded(src) || !is_padded(dst)).then_some(Transdata { src, dst })
    }

    pub fn run(&self, x: &Slot, out: &Slot, par: &super::Par) -> Result<(), String> {
        let logical = if !is_padded(self.dst) {
            plain_logical(self.dst, &out.shape)?
        } else {
            plain_logical(self.src, &x.shape)?
        };
        let es = x.dtype.byte_size();
        let c0 = Format::c0(x.dtype) as usize;
        match (self.src, self.dst) {
            (Format::NCHW, Format::NC1HWC0) | (Format::NC1HWC0, Format::NCHW) => {
                let [n, c, h, w] = super::conv::dims4(&logical)?;
                let to5 = self.dst == Format::NC1HWC0;
                let b = Blocks { c, hw: h * w, c0 };
                let (xa, oa) = (x.ptr as usize, out.ptr as usize);
                let convert = match es {
                    4 => Blocks::convert::<u32>,
                    2 => Blocks::convert::<u16>,
                    1 => Blocks::convert::<u8>,
                    8 => Blocks::convert::<u64>,
                    _ => return Err(format!("transdata of {es}-byte elements")),
                };
                // One task per (n, c1) block.
                par.run(n * c.div_ceil(c0), n * c * h * w > 1 << 16, &|t| {
                    // SAFETY: the slots hold the NCHW and NC1HWC0 layouts of
                    // `logical`; each task writes only its own block's elements.
                    unsafe { convert(&b, to5, t, xa as *const u8, oa as *mut u8) };
                    Ok(())
                })
            }
            (Format::ND, Format::FRACTAL_NZ) | (Format::FRACTAL_NZ, Format::ND) => {
                let r = logical.len();
                let (batch, m, n) = match r {
                    0 => return Err("FRACTAL_NZ of a scalar".into()),
                    1 => (1, 1, logical[0]),
                    _ => (
                        logical[..r - 2].iter().product(),
                        logical[r - 2],
                        logical[r - 1],
                    ),
                };
                let f = 16usize;
                let (m1, n1) = (m.div_ceil(f), n.div_ceil(c0));
                let to_nz = self.dst == Format::FRACTAL_NZ;
                if to_nz {
                    // SAFETY: output bytes.
                    unsafe { std::ptr::write_bytes(out.ptr, 0, out.bytes()) };
                }
                let blk = n1 * m1 * f * c0;
                for b in 0..batch {
                    for mi in 0..m {
                        let (mb, mr) = (mi / f, mi % f);
                        for nb in 0..n1 {
                            let cols = c0.min(n - nb * c0);
                            let plain = b * m * n + mi * n + nb * c0;
                            let nz = b * blk + ((nb * m1 + mb) * f + mr) * c0;
                            let (s, d) = if to_nz { (plain, nz) } else { (nz, plain) };
                            // SAFETY: `cols` contiguous elements in both layouts.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    x.ptr.add(s * es),
                                    out.ptr.add(d * es),
                                    cols * es,
                                )
                            };
                        }
                    }
                }
                Ok(())
            }
            (src, dst) => {
                // Generic: walk the destination storage.
                let from = Layout::new(src, &logical, x.dtype)?;
                let to = Layout::new(dst, &logical, x.dtype)?;
                if from.storage != x.shape || to.storage != out.shape {
                    return Err(format!(
                        "transdata {src} -> {dst}: shapes {:?} -> {:?} do not match logical {logical:?}",
                        x.shape, out.shape
                    ));
                }
                // SAFETY: the slots hold the two layouts of `logical`
                // (checked above).
                if to.storage == logical
                    && unsafe { plain_from_runs(&from, &logical, es, x.ptr, out.ptr) }
                {
                    return Ok(());
                }
                let n: usize = to.storage.iter().product();
                let mut s = vec![0usize; to.storage.len()];
                let mut l = vec![0usize; logical.len()];
                for i in 0..n {
                    // SAFETY: indices from the layouts lie in the buffers.
                    unsafe {
                        let d = out.ptr.add(i * es);
                        if to.to_logical(&s, &mut l) {
                            std::ptr::copy_nonoverlapping(x.ptr.add(from.to_flat(&l) * es), d, es);
                        } else {
                            std::ptr::write_bytes(d, 0, es);
                        }
                    }
                    for k in (0..s.len()).rev() {
                        s[k] += 1;
                        if s[k] < to.storage[k] {
                            break;
                        }
                        s[k] = 0;
                    }
                }
                Ok(())
            }
        }
    }
}

/// A destination stored as its logical shape (NCHW, ND) from a padded
/// source (a constant filter's FRACTAL_Z, converted back at load) a run of
/// the source's innermost storage dim at a time: the logical axis it runs
/// along (FRACTAL_Z's C0 lane: C) in blocks of its length, each block
/// contiguous in the source — one index computation a block instead of two
/// an element (the per-element walk took 35 % of loading VGG-11-BN). A
/// block whose ends do not lie that far apart in the source (no such axis,
/// another structure) goes element by element. `false`: the source has no
/// axis running along its innermost dim (the caller walks every element).
///
/// # Safety
/// `x` holds `from`'s storage of `logical`, `out` `logical` row-major,
/// elements of `es` bytes.
unsafe fn plain_from_runs(
    from: &Layout,
    logical: &[usize],
    es: usize,
    x: *const u8,
    out: *mut u8,
) -> bool {
    let r = logical.len();
    let mut l = vec![0usize; r];
    let base = from.to_flat(&l);
    let Some(k) = (0..r).find(|&k| {
        if logical[k] < 2 {
            return false;
        }
        l[k] = 1;
        let next = from.to_flat(&l);
        l[k] = 0;
        next == base + 1
    }) else {
        return false;
    };
    let run = from.storage.last().copied().unwrap_or(1).max(1);
    let mut dst_st = vec![1usize; r];
    for i in (0..r - 1).rev() {
        dst_st[i] = dst_st[i + 1] * logical[i + 1];
    }
    let blocks = logical[k].div_ceil(run);
    let count: usize = logical
        .iter()
        .enumerate()
        .map(|(i, &d)| if i == k { blocks } else { d })
        .product();
    let copy =
        |s: usize, d: usize| std::ptr::copy_nonoverlapping(x.add(s * es), out.add(d * es), es);
    for _ in 0..count {
        let len = run.min(logical[k] - l[k]);
        let s0 = from.to_flat(&l);
        let d0: usize = l.iter().zip(&dst_st).map(|(a, b)| a * b).sum();
        let start = l[k];
        l[k] = start + len - 1;
        let contiguous = from.to_flat(&l) == s0 + len - 1;
        for j in 0..len {
            let s = match contiguous {
                true => s0 + j,
                false => {
                    l[k] = start + j;
                    from.to_flat(&l)
                }
            };
            copy(s, d0 + j * dst_st[k]);
        }
        l[k] = start;
        // The next block: axis k steps by `run`, the others by one.
        for i in (0..r).rev() {
            let step = if i == k { run } else { 1 };
            l[i] += step;
            if l[i] < logical[i] {
                break;
            }
            l[i] = 0;
        }
    }
    true
}

/// NCHW <-> NC1HWC0: for each (n, c1), the `cv <= c0` channel planes of `hw`
/// elements and the block of `hw` rows of `c0` channels (pad channels zero).
struct Blocks {
    c: usize,
    hw: usize,
    c0: usize,
}

impl Blocks {
    /// Copy block `t` (`n * c1 + cb`) of `x` into `out` (to NC1HWC0 if
    /// `to5`, else back to NCHW).
    ///
    /// # Safety
    /// `x` and `out` hold the two layouts of `[n, c, hw]` with elements of
    /// `T`, and `t < n * c1`.
    unsafe fn convert<T: Copy + Default>(&self, to5: bool, t: usize, x: *const u8, out: *mut u8) {
        let (x, out) = (x as *const T, out as *mut T);
        let Blocks { c, hw, c0 } = *self;
        let c1 = c.div_ceil(c0);
        let (ni, cb) = (t / c1, t % c1);
        let cv = c0.min(c - cb * c0);
        let planes = (ni * c + cb * c0) * hw;
        let block = t * hw * c0;
        // Whole blocks of 4-byte values: 8x8 transposes.
        if std::mem::size_of::<T>() == 4 && c0 == 8 && cv == 8 && super::transpose8::available() {
            let (x, out) = (x as *const f32, out as *mut f32);
            match to5 {
                true => super::transpose8::planes_to_block(x.add(planes), hw, hw, out.add(block)),
                false => super::transpose8::block_to_planes(x.add(block), hw, out.add(planes), hw),
            }
            return;
        }
        // Tiles of TILE rows: the block's tile (TILE * c0 elements) stays in
        // L1 while each plane is read (or written) contiguously.
        const TILE: usize = 256;
        for p0 in (0..hw).step_by(TILE) {
            let pe = (p0 + TILE).min(hw);
            for k in 0..cv {
                if to5 {
                    let (src, dst) = (x.add(planes + k * hw), out.add(block + k));
                    for p in p0..pe {
                        dst.add(p * c0).write_unaligned(src.add(p).read_unaligned());
                    }
                } else {
                    let (src, dst) = (x.add(block + k), out.add(planes + k * hw));
                    for p in p0..pe {
                        dst.add(p).write_unaligned(src.add(p * c0).read_unaligned());
                    }
                }
            }
            if to5 && cv < c0 {
                for p in p0..pe {
                    for k in cv..c0 {
                        out.add(block + p * c0 + k).write_unaligned(T::default());
                    }
                }
            }
        }
    }
}

fn axis_of(axis: i64, rank: usize) -> Result<usize, String> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    if a < 0 || a as usize >= rank {
        return Err(format!("axis {axis} out of range for rank {rank}"));
    }
    Ok(a as usize)
}

pub fn concat(axis: i64, ins: &[&Slot], out: &Slot, par: &Par) -> Result<(), String> {
    let ax = axis_of(axis, out.shape.len())?;
    let ost = strides(&out.shape);
    let mut off = 0usize;
    for x in ins {
        if x.shape.len() != out.shape.len() {
            return Err("concat of different ranks".into());
        }
        let es = x.dtype.byte_size();
        // SAFETY: the block lies inside the output at `off` along the axis
        // (a result of its own, apart from the operands).
        unsafe {
            par_strided_copy(
                par,
                es,
                &x.shape,
                x.ptr,
                &strides(&x.shape),
                out.ptr.add(off * ost[ax] as usize * es),
                &ost,
            )?
        };
        off += x.shape[ax];
    }
    if off != out.shape[ax] {
        return Err(format!(
            "concat sizes add up to {off}, not {}",
            out.shape[ax]
        ));
    }
    Ok(())
}

pub fn split(axis: i64, x: &Slot, outs: &[&Slot], par: &Par) -> Result<(), String> {
    let ax = axis_of(axis, x.shape.len())?;
    let xst = strides(&x.shape);
    let mut off = 0usize;
    for o in outs {
        let es = x.dtype.byte_size();
        if off + o.shape[ax] > x.shape[ax] {
            return Err("split parts exceed the input".into());
        }
        // SAFETY: as for concat.
        unsafe {
            par_strided_copy(
                par,
                es,
                &o.shape,
                x.ptr.add(off * xst[ax] as usize * es),
                &xst,
                o.ptr,
                &strides(&o.shape),
            )?
        };
        off += o.shape[ax];
    }
    Ok(())
}

#[derive(Clone, Debug)]
pub struct Slice {
    starts: Vec<i64>,
    axes: Option<Vec<i64>>,
    steps: Option<Vec<i64>>,
}

impl Slice {
    pub fn from_op(b: &Body, o: OpId) -> Slice {
        let a = SliceOp::attrs(b.op(o));
        Slice {
            starts: a.starts().unwrap_or_default(),
            axes: a.axes(),
            steps: a.steps(),
        }
    }

    pub fn run(&self, x: &Slot, out: &Slot, par: &Par) -> Result<(), String> {
        let r = x.shape.len();
        let st = strides(&x.shape);
        let mut start = vec![0isize; r];
        let mut step = vec![1isize; r];
        for (i, &s) in self.starts.iter().enumerate() {
            let a = match &self.axes {
                Some(ax) => axis_of(*ax.get(i).ok_or("slice: axes shorter than starts")?, r)?,
                None => i,
            };
            let k = self
                .steps
                .as_ref()
                .and_then(|v| v.get(i).copied())
                .unwrap_or(1);
            let dim = x.shape[a] as i64;
            let mut s0 = if s < 0 { s + dim } else { s };
            s0 = if k > 0 {
                s0.clamp(0, dim)
            } else {
                s0.clamp(0, dim - 1)
            };
            start[a] = s0 as isize;
            step[a] = k as isize;
        }
        if out.shape.len() != r {
            return Err("slice changes the rank".into());
        }
        let base: isize = start.iter().zip(&st).map(|(a, b)| a * b).sum();
        let sst: Vec<isize> = step.iter().zip(&st).map(|(a, b)| a * b).collect();
        let es = x.dtype.byte_size();
        for d in 0..r {
            if out.shape[d] > 0 {
                let last = start[d] + step[d] * (out.shape[d] as isize - 1);
                if last < 0 || last >= x.shape[d] as isize {
                    return Err(format!("slice reads outside dim {d} of {:?}", x.shape));
                }
            }
        }
        // SAFETY: every index was checked to lie inside the input; the
        // result is a value of its own.
        unsafe {
            par_strided_copy(
                par,
                es,
                &out.shape,
                x.ptr.offset(base * es as isize),
                &sst,
                out.ptr,
                &strides(&out.shape),
            )
        }
    }
}

fn indices(s: &Slot) -> Vec<i64> {
    let mut v = vec![0i64; s.numel()];
    crate::buffer::load_i64(s.dtype, s.ptr, 0, &mut v);
    v
}

pub fn gather(axis: i64, x: &Slot, idx: &Slot, out: &Slot) -> Result<(), String> {
    let ax = axis_of(axis, x.shape.len())?;
    let outer: usize = x.shape[..ax].iter().product();
    let dim = x.shape[ax];
    let inner: usize = x.shape[ax + 1..].iter().product();
    let ids = indices(idx);
    let es = x.dtype.byte_size();
    if out.numel() != outer * ids.len() * inner {
        return Err(format!("gather result {:?} has the wrong size", out.shape));
    }
    for o in 0..outer {
        for (j, &i) in ids.iter().enumerate() {
            let k = if i < 0 { i + dim as i64 } else { i };
            if k < 0 || k as usize >= dim {
                return Err(format!("gather index {i} is out of range for dim {dim}"));
            }
            // SAFETY: bounds checked.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    x.ptr.add(((o * dim + k as usize) * inner) * es),
                    out.ptr.add(((o * ids.len() + j) * inner) * es),
                    inner * es,
                )
            };
        }
    }
    Ok(())
}

pub fn embedding(table: &Slot, ids: &Slot, out: &Slot) -> Result<(), String> {
    let (v, d) = match table.shape.as_slice() {
        [v, d] => (*v, *d),
        s => return Err(format!("embedding table of shape {s:?} is not 2-D")),
    };
    let es = table.dtype.byte_size();
    let idv = indices(ids);
    if out.numel() != idv.len() * d {
        return Err(format!(
            "embedding result {:?} has the wrong size",
            out.shape
        ));
    }
    for (p, &i) in idv.iter().enumerate() {
        if i < 0 || i as usize >= v {
            return Err(format!(
                "embedding id {i} is out of range for a vocabulary of {v}"
            ));
        }
        // SAFETY: bounds checked.
        unsafe {
            std::ptr::copy_nonoverlapping(
                table.ptr.add(i as usize * d * es),
                out.ptr.add(p * d * es),
                d * es,
            )
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::{Pool, Slots, SPIN};
    use ge_ir::DType;

    /// FRACTAL_Z -> NCHW by blocks of the C0 lane equals the element-by-
    /// element walk, for channels and output channels past and short of a
    /// block, 1-, 2- and 4-byte elements (C0 32, 16 and 8).
    #[test]
    fn a_padded_filter_converts_back_by_blocks_as_element_by_element() {
        for dt in [DType::I8, DType::F16, DType::F32] {
            for logical in [[20, 37, 3, 3], [1, 3, 7, 7], [16, 8, 1, 1], [33, 64, 2, 5]] {
                let from = Layout::new(Format::FRACTAL_Z, &logical, dt).unwrap();
                let es = dt.byte_size();
                let n: usize = from.storage.iter().product::<usize>() * es;
                let src: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
                let total: usize = logical.iter().product();
                let mut want = vec![0u8; total * es];
                let mut l = [0usize; 4];
                for i in 0..total {
                    let mut rest = i;
                    for k in (0..4).rev() {
                        l[k] = rest % logical[k];
                        rest /= logical[k];
                    }
                    let s = from.to_flat(&l) * es;
                    want[i * es..(i + 1) * es].copy_from_slice(&src[s..s + es]);
                }
                let mut got = vec![0u8; total * es];
                // SAFETY: `src` holds the FRACTAL_Z storage, `got` the
                // logical shape, both of `es`-byte elements.
                let done =
                    unsafe { plain_from_runs(&from, &logical, es, src.as_ptr(), got.as_mut_ptr()) };
                assert!(done, "{dt} {logical:?}: FRACTAL_Z runs along C");
                assert_eq!(got, want, "{dt} {logical:?}");
            }
        }
    }

    fn slot(v: &mut [u32], shape: &[usize]) -> Slot {
        Slot {
            ptr: v.as_mut_ptr() as *mut u8,
            shape: shape.to_vec(),
            dtype: DType::F32,
        }
    }

    /// Run `f` once on one thread and once on a 2-thread pool (with the
    /// caller holding a slot, as a stream does); both results.
    fn one_and_two(len: usize, f: impl Fn(&Par, &mut [u32])) -> (Vec<u32>, Vec<u32>) {
        let (pool, slots) = (Pool::new(2, SPIN).expect("pool"), Slots::new(2));
        let two = Par {
            pool: Some((&pool, &slots)),
            limits: crate::kernels::RunLimits::DEFAULT,
        };
        let (mut a, mut b) = (vec![0u32; len], vec![0u32; len]);
        f(&Par::NONE, &mut a);
        let _slot = two.enter();
        f(&two, &mut b);
        (a, b)
    }

    #[test]
    fn coalescing_merges_only_dims_both_layouts_step_over_as_one() {
        // A concat operand into its channels of a larger result: one run.
        let (sh, a, b) = coalesce(&[1, 32, 4, 4], &[512, 16, 4, 1], &[12288, 16, 4, 1]);
        assert_eq!((sh, a, b), (vec![512], vec![1], vec![1]));
        // Channels of a batch of two: the images stay apart in the result.
        let (sh, a, b) = coalesce(&[2, 32, 4, 4], &[512, 16, 4, 1], &[12288, 16, 4, 1]);
        assert_eq!((sh, a, b), (vec![2, 512], vec![512, 1], vec![12288, 1]));
        // A transpose merges nothing; dims of one go.
        let (sh, a, b) = coalesce(&[3, 1, 5], &[1, 7, 3], &[5, 5, 1]);
        assert_eq!((sh, a, b), (vec![3, 5], vec![1, 3], vec![5, 1]));
        // Every dim of length one: one element.
        assert_eq!(coalesce(&[1, 1], &[4, 1], &[9, 1]).0, Vec::<usize>::new());
    }

    /// Strided copies (coalesced) equal an element-by-element copy on
    /// sub-blocks, transposes and broadcast-free slices of random shapes.
    #[test]
    fn strided_copies_equal_the_elementwise_copy() {
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..300 {
            let rank = 1 + next(4);
            let full: Vec<usize> = (0..rank).map(|_| 1 + next(5)).collect();
            // A sub-block of the source (an offset and an extent per dim),
            // copied into a destination laid out in a random dim order.
            let part: Vec<usize> = full.iter().map(|&d| 1 + next(d)).collect();
            let from: Vec<usize> = full
                .iter()
                .zip(&part)
                .map(|(&d, &p)| next(d - p + 1))
                .collect();
            let sst = strides(&full);
            let mut order: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                order.swap(i, next(i + 1));
            }
            let permuted: Vec<usize> = order.iter().map(|&k| part[k]).collect();
            let pst = strides(&permuted);
            let mut dstt = vec![0isize; rank];
            for (j, &k) in order.iter().enumerate() {
                dstt[k] = pst[j];
            }
            let src: Vec<u32> = (0..full.iter().product::<usize>() as u32).collect();
            let n: usize = part.iter().product();
            let base: isize = from.iter().zip(&sst).map(|(&f, &s)| f as isize * s).sum();
            let mut got = vec![0u32; n];
            // SAFETY: the block lies inside `src` (offsets plus extents
            // within `full`) and `got` holds its `n` elements.
            unsafe {
                strided_copy(
                    4,
                    &part,
                    src.as_ptr().offset(base) as *const u8,
                    &sst,
                    got.as_mut_ptr() as *mut u8,
                    &dstt,
                )
            };
            let mut want = vec![0u32; n];
            for e in 0..n {
                let (mut rem, mut s_at, mut d_at) = (e, base, 0isize);
                for k in (0..rank).rev() {
                    let i = (rem % part[k]) as isize;
                    rem /= part[k];
                    s_at += i * sst[k];
                    d_at += i * dstt[k];
                }
                want[d_at as usize] = src[s_at as usize];
            }
            assert_eq!(got, want, "{full:?} {part:?} {from:?} {order:?}");
        }
    }

    #[test]
    fn the_copy_rule_splits_only_large_copies() {
        assert_eq!(copy_tasks(PAR_COPY_BYTES - 1, 2), 1);
        assert_eq!(copy_tasks(1 << 30, 1), 1);
        assert_eq!(copy_tasks(PAR_COPY_BYTES, 2), 4);
        assert_eq!(copy_tasks(1 << 30, 2), 8);
        assert!(disjoint(8 as *const u8, 16 as *const u8, 8));
        assert!(!disjoint(8 as *const u8, 15 as *const u8, 8));
    }

    /// Concat, split, slice, transpose and copy give the same bytes on two
    /// threads as on one, above and below the split threshold.
    #[test]
    fn split_copies_match_one_thread() {
        for (c, hw) in [(3, 7), (64, 55 * 55), (5, 128 * 128)] {
            let src: Vec<u32> = (0..2 * c * hw as u32).collect();
            let shape = [1, 2 * c as usize, 1, hw as usize];
            let half = [1, c as usize, 1, hw as usize];
            let len = src.len();
            let (a, b) = one_and_two(len, |par, out| {
                let mut x = src.clone();
                let mut parts = vec![vec![0u32; len / 2]; 2];
                let (p0, p1) = parts.split_at_mut(1);
                let (s0, s1) = (slot(&mut p0[0], &half), slot(&mut p1[0], &half));
                split(1, &slot(&mut x, &shape), &[&s0, &s1], par).expect("split");
                // Back together the other way round, then a slice, a
                // transpose and a copy of that.
                let mut cat = vec![0u32; len];
                let cat_s = slot(&mut cat, &shape);
                concat(1, &[&s1, &s0], &cat_s, par).expect("concat");
                let mut sl = vec![0u32; len / 2];
                let sl_s = slot(&mut sl, &half);
                let s = Slice {
                    starts: vec![1],
                    axes: Some(vec![1]),
                    steps: Some(vec![2]),
                };
                s.run(&cat_s, &sl_s, par).expect("slice");
                let mut tr = vec![0u32; len / 2];
                let tshape = [hw as usize, 1, c as usize, 1];
                transpose(&[3, 2, 1, 0], &sl_s, &slot(&mut tr, &tshape), par).expect("t");
                copy(
                    &slot(&mut tr, &tshape),
                    &slot(&mut out[..len / 2], &half),
                    par,
                )
                .expect("copy");
                out[len / 2..].copy_from_slice(&cat[..len / 2]);
            });
            assert!(a == b, "c = {c}, hw = {hw}");
            assert!(a.iter().any(|&v| v != 0));
        }
    }
}
