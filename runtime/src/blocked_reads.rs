//! Convolutions that read NC1HWC0 blocks as they are (load time).
//!
//! A compiled model keeps activations in NC1HWC0 between convolutions,
//! and each convolution kernel converts its input to NCHW first
//! (`crate::layouts` then has the producer write NCHW and drops both
//! conversions). On large maps a convolution is faster on the blocks
//! themselves (`kernels::conv_blocked`, where [`conv_blocked::pays`]): this
//! pass lets such a convolution read its input, and its residual, where
//! they lie, and write blocks.
//!
//! A value read so stays in blocks, which costs its other readers a
//! conversion that `crate::layouts` would have dropped. So a convolution
//! reads blocks only when every value involved — its input, its residual
//! and its result — comes from a convolution that writes blocks anyway (no
//! conversion added at the producer) and goes only to convolutions that
//! read blocks too, to convolutions whose multiply-adds per input value
//! ([`HEAVY_MACS`]) dwarf a conversion of their input, or (a result) to
//! readers of a result whose producer's multiply-adds dwarf it. The choice
//! is a fixed point: a convolution that cannot read blocks takes back the
//! claim on its values. By default ([`BlockedReads::Measured`]) the CPU
//! must agree too: [`blocks_probe`] times the blocks kernel against the
//! NCHW one once per process, per kind of filter.
//!
//! Measured (`tools/bench/ab_om.py` against `--no-blocked-reads`, 5
//! rounds, Intel Xeon): ResNet-50 0.95x at 1 and 0.96x at 2 threads (on
//! an AMD EPYC, 1.08x and 1.06x: what the probe is for); of the 118
//! other models of the light set and the gauntlets only Inception v2 and
//! VGG-19 choose one convolution each (within noise); docs/benchmarks.md,
//! "sixteenth session".

use crate::kernels::blocks_probe::{self, Verdict};
use crate::kernels::conv::Conv;
use crate::kernels::{conv_blocked, KernelProgram, Op};
use crate::layouts::{
    accesses, blocked_result, has_control_flow, overlaps, unblocked_arg, Blocking,
};
use crate::model::{BlockedReads, Inner, TaskRt};
use ge_om::model::{Buffer, Operand, Task};
use std::cell::Cell;
use std::sync::Arc;

/// Multiply-adds per input value from which a convolution converting its
/// input from blocks (one pass over it) costs it little: a 3x3 filter of
/// 29 output channels or more, a 1x1 filter of 256 (a pass over the input
/// is worth a few dozen multiply-adds of the GEMM per value).
const HEAVY_MACS: usize = 256;

/// A convolution that could read blocks: task `task`, step `step`.
struct Candidate {
    task: usize,
    step: usize,
    /// Its multiply-adds per input value.
    macs: usize,
    /// Its multiply-adds per output value (the filter's `c * kh * kw`).
    out_macs: usize,
    /// (argument, its conversion step) of the input and of the residual.
    input: (usize, usize),
    residual: Option<(usize, usize)>,
    /// The buffers of the input, the residual and the result.
    input_buf: Buffer,
    residual_buf: Option<Buffer>,
    output_buf: Buffer,
    /// The filter's bytes (`oc x c` floats) and shape.
    filter: (*const u8, [usize; 4]),
}

/// How a task reads a blocked value.
#[derive(Clone, Copy, PartialEq)]
enum Reader {
    /// As the input (`false`) or the residual (`true`) of candidate `i`.
    Candidate(usize, bool),
    /// Converting it for a convolution of at least [`HEAVY_MACS`] per value.
    Heavy,
    /// Any other way.
    Other,
}

/// A value in a buffer: whether its producer writes blocks for free (a
/// convolution writing blocks as it stores its result; not a conversion
/// of a plain value that `crate::layouts` would drop — kept alive, those
/// cost DenseNet's batch norms and concatenations as much as its
/// convolutions gained), which candidate makes it, if one, and how each
/// task reads it.
struct Value {
    buffer: Buffer,
    free: bool,
    made_by: Option<usize>,
    readers: Vec<Reader>,
}

/// Let the convolutions that pay read blocks; returns how many do, and
/// this CPU's measurement of the blocks kernel if `mode` asked for it and
/// a convolution's shape admitted blocks.
pub(crate) fn choose(inner: &mut Inner, mode: BlockedReads) -> (usize, Option<Verdict>) {
    if !crate::kernels::sgemm_packed::wide() || has_control_flow(inner) {
        return (0, None);
    }
    let measured = Cell::new(None);
    let host_pays = |taps: usize| match mode {
        BlockedReads::Measured => {
            let v = blocks_probe::verdict();
            measured.set(Some(v));
            v.pays(taps)
        }
        BlockedReads::Always | BlockedReads::Never => true,
    };
    let candidates: Vec<Candidate> = (0..inner.tasks.len())
        .flat_map(|ti| candidates_of(inner, ti, &host_pays))
        .collect();
    if candidates.is_empty() {
        return (0, measured.get());
    }
    let values = values(inner, &candidates);
    let mut native = vec![true; candidates.len()];
    // A value some chosen convolution needs in blocks must be made as
    // blocks for free; each reader that does not read blocks converts it
    // (one pass over it), which must be small next to the reader's work
    // (a heavy convolution) or to its producer's.
    let ok = |buf: &Buffer, native: &[bool]| {
        values.iter().filter(|v| v.buffer == *buf).all(|v| {
            let costly_producer = v
                .made_by
                .is_some_and(|p| native[p] && candidates[p].out_macs >= HEAVY_MACS);
            v.free
                && v.readers.iter().all(|r| match r {
                    // Not reading blocks, it converts them: the input is
                    // worth its multiply-adds per input value, a residual
                    // (of the result's size) those per output value.
                    Reader::Candidate(i, residual) => {
                        let c = &candidates[*i];
                        let macs = if *residual { c.out_macs } else { c.macs };
                        native[*i] || macs >= HEAVY_MACS
                    }
                    Reader::Heavy => true,
                    Reader::Other => costly_producer,
                })
        })
    };
    loop {
        let mut changed = false;
        for (i, c) in candidates.iter().enumerate() {
            if native[i]
                && !(ok(&c.input_buf, &native)
                    && c.residual_buf.as_ref().is_none_or(|b| ok(b, &native))
                    && ok(&c.output_buf, &native))
            {
                native[i] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut budget = usize::try_from(inner.limits.max_memory)
        .unwrap_or(usize::MAX)
        .saturating_sub(inner.prepared_bytes);
    let mut chosen = 0;
    for (c, _) in candidates.iter().zip(&native).filter(|(_, &n)| n) {
        let packed = apply(inner, c, budget);
        budget = budget.saturating_sub(packed);
        inner.prepared_bytes += packed;
        chosen += 1;
    }
    (chosen, measured.get())
}

/// The convolutions of task `ti` that could read blocks: their shapes
/// admit it ([`conv_blocked::pays`]) and so does the CPU (`host_pays`, by
/// the filter's taps).
fn candidates_of(inner: &Inner, ti: usize, host_pays: &dyn Fn(usize) -> bool) -> Vec<Candidate> {
    let rt = &inner.tasks[ti];
    let (Some(k), Task::Launch { ins, outs, .. }, false) = (&rt.kernel, &rt.task, rt.dead) else {
        return vec![];
    };
    let buffer_of_arg = |a: usize| {
        let i = k.args.iter().position(|&x| x == a)?;
        match ins.get(i)? {
            Operand::Buffer(b) => Some(b.clone()),
            Operand::Weight(_) => None,
        }
    };
    let mut found = vec![];
    for (si, s) in k.steps.iter().enumerate() {
        let Op::Conv(c) = &s.op else { continue };
        if rt.skip[si] || !writes_f32_blocks(c) {
            continue;
        }
        let (Some(&x), Some(&w), Some(&y)) = (s.ins.first(), s.ins.get(1), s.outs.first()) else {
            continue;
        };
        let Some(filter) = filter_of(inner, rt, k, ins, w) else {
            continue;
        };
        let [_, channels, _, _] = filter.1;
        if !conv_blocked::computes(c, filter.1) || !whole_blocks(channels) {
            continue;
        }
        // The input plane's positions (static: [n, c1, h, w, 8]).
        let plane = crate::kernels::concrete(k.types[x], &Default::default())
            .ok()
            .and_then(|s| Some(s.get(2)? * s.get(3)?));
        let [_, _, kh, kw] = filter.1;
        if !plane.is_some_and(|p| conv_blocked::pays(filter.1, p)) || !host_pays(kh * kw) {
            continue;
        }
        let converted = |v: usize, slot: usize| -> Option<(usize, usize)> {
            // `v` is made by converting argument `a` from blocks, and only
            // this convolution reads `v`, in that one slot.
            let ts = k.steps.iter().position(|t| t.outs.contains(&v))?;
            let &[a] = k.steps[ts].ins.as_slice() else {
                return None;
            };
            let only_here = k.steps.iter().enumerate().all(|(j, t)| {
                !t.ins.contains(&v) || (j == si && t.ins.iter().filter(|&&u| u == v).count() == 1)
            });
            let blocks_of_8 = k.types[a]
                .as_tensor()
                .and_then(|t| t.dims.clone())
                .is_some_and(|d| d.len() == 5 && d[4].as_static() == Some(conv_blocked::C0 as i64));
            (unblocked_arg(k, &rt.skip, a) == Some((ts, v))
                && s.ins.get(slot) == Some(&v)
                && only_here
                && blocks_of_8
                && !rt.folded.contains_key(&a))
            .then_some((a, ts))
        };
        let Some(input) = converted(x, 0) else {
            continue;
        };
        let residual = match c.residual {
            None => None,
            Some(ri) => match s.ins.get(ri).and_then(|&rv| converted(rv, ri)) {
                Some(r) => Some(r),
                None => continue,
            },
        };
        let Some(out_index) = k.results.iter().position(|&r| r == y) else {
            continue;
        };
        let (Some(input_buf), Some(output_buf)) = (buffer_of_arg(input.0), outs.get(out_index))
        else {
            continue;
        };
        let residual_buf = match residual {
            None => None,
            Some((ra, _)) => match buffer_of_arg(ra) {
                Some(b) => Some(b),
                None => continue,
            },
        };
        let [oc, _, kh, kw] = filter.1;
        found.push(Candidate {
            task: ti,
            step: si,
            macs: oc * kh * kw / (c.strides[0] * c.strides[1]).max(1),
            out_macs: channels * kh * kw,
            input,
            residual,
            input_buf,
            residual_buf,
            output_buf: output_buf.clone(),
            filter,
        });
    }
    found
}

/// Whether `c` may compute on blocks ([`Conv::run_blocks`]; the filter's
/// dims are checked with its bytes, [`conv_blocked::computes`]): writing
/// f32 blocks of 8 itself, not already reading blocks, no Winograd filter.
fn writes_f32_blocks(c: &Conv) -> bool {
    c.blocked_out == Some(conv_blocked::C0)
        && c.plain_type
            .is_some_and(|t| t.dtype() == Some(ge_ir::DType::F32))
        && c.winograd.is_none()
        && !c.reads_blocks
}

/// Whether `c` input channels fill their blocks of 8 well enough: the
/// padding channels are multiply-adds by zero (3 channels in a block of 8
/// would be 5 of every 8).
fn whole_blocks(c: usize) -> bool {
    c.is_multiple_of(conv_blocked::C0) || c >= 4 * conv_blocked::C0
}

/// The bytes and shape of filter `w` when they are constant (folded at
/// load, or a weight of the model) f32 OIHW.
fn filter_of(
    inner: &Inner,
    rt: &TaskRt,
    k: &KernelProgram,
    ins: &[Operand],
    w: usize,
) -> Option<(*const u8, [usize; 4])> {
    let t = k.types.get(w)?;
    if t.dtype() != Some(ge_ir::DType::F32) {
        return None;
    }
    let shape = crate::kernels::concrete(*t, &Default::default()).ok()?;
    let &[oc, c, kh, kw] = shape.as_slice() else {
        return None;
    };
    let bytes = oc
        .checked_mul(c)?
        .checked_mul(kh)?
        .checked_mul(kw)?
        .checked_mul(4)?;
    let ptr = match rt.folded.get(&w) {
        Some(b) => (b.len() >= bytes).then_some(b.as_ptr())?,
        None => {
            let i = k.args.iter().position(|&a| a == w)?;
            let Operand::Weight(id) = ins.get(i)? else {
                return None;
            };
            let s = inner.weight_slice(*id)?;
            (s.len() >= bytes && (s.as_ptr() as usize).is_multiple_of(4)).then_some(s.as_ptr())?
        }
    };
    Some((ptr, [oc, c, kh, kw]))
}

/// The blocked values the candidates read or write: each with whether its
/// producer writes blocks itself and how every task reads it.
fn values(inner: &Inner, candidates: &[Candidate]) -> Vec<Value> {
    let reader_of = |ti: usize, arg: Option<usize>| -> Reader {
        let Some(a) = arg else { return Reader::Other };
        if let Some(i) = candidates
            .iter()
            .position(|c| c.task == ti && c.input.0 == a)
        {
            return Reader::Candidate(i, false);
        }
        let residual = |c: &Candidate| c.residual.is_some_and(|(r, _)| r == a);
        if let Some(i) = candidates.iter().position(|c| c.task == ti && residual(c)) {
            return Reader::Candidate(i, true);
        }
        match heavy_reader(&inner.tasks[ti], a) {
            true => Reader::Heavy,
            false => Reader::Other,
        }
    };
    let mut live: Vec<Value> = vec![];
    let mut done: Vec<Value> = vec![];
    let wanted = |b: &Buffer| {
        candidates
            .iter()
            .any(|c| c.input_buf == *b || c.output_buf == *b || c.residual_buf.as_ref() == Some(b))
    };
    for (ti, rt) in inner.tasks.iter().enumerate() {
        if rt.dead {
            continue;
        }
        let (reads, writes) = accesses(rt);
        for (arg, b) in &reads {
            for v in live.iter_mut().filter(|v| overlaps(&v.buffer, b)) {
                v.readers.push(match *b == v.buffer {
                    true => reader_of(ti, *arg),
                    false => Reader::Other,
                });
            }
        }
        let (ended, kept): (Vec<Value>, Vec<Value>) = live
            .into_iter()
            .partition(|v| writes.iter().any(|(_, w)| overlaps(&v.buffer, w)));
        live = kept;
        done.extend(ended);
        for (r, b) in writes.iter().filter(|(_, b)| wanted(b)) {
            let free = match (r, &rt.kernel) {
                (Some(r), Some(k)) => {
                    matches!(blocked_result(k, &rt.skip, *r), Some((_, Blocking::Conv)))
                }
                _ => false,
            };
            let made_by = candidates
                .iter()
                .position(|c| c.task == ti && c.output_buf == *b);
            live.push(Value {
                buffer: b.clone(),
                free,
                made_by,
                readers: vec![],
            });
        }
    }
    done.extend(live);
    // A value no task writes (the caller's) is made elsewhere.
    for c in candidates {
        for b in [Some(&c.input_buf), c.residual_buf.as_ref()]
            .into_iter()
            .flatten()
        {
            if !done.iter().any(|v| v.buffer == *b) {
                done.push(Value {
                    buffer: b.clone(),
                    free: false,
                    made_by: None,
                    readers: vec![],
                });
            }
        }
    }
    done
}

/// Whether task `rt` reads argument `a` only by converting it to NCHW for
/// a convolution of at least [`HEAVY_MACS`] multiply-adds per input value.
fn heavy_reader(rt: &TaskRt, a: usize) -> bool {
    let Some(k) = &rt.kernel else { return false };
    let Some((_, v)) = unblocked_arg(k, &rt.skip, a) else {
        return false;
    };
    k.steps.iter().enumerate().all(|(si, s)| {
        if rt.skip[si] || !s.ins.contains(&v) {
            return true;
        }
        let Op::Conv(c) = &s.op else { return false };
        let filter = s
            .ins
            .get(1)
            .and_then(|&w| crate::kernels::concrete(k.types[w], &Default::default()).ok());
        let macs = match filter.as_deref() {
            Some(&[oc, _, kh, kw]) => {
                oc / c.group.max(1) * kh * kw / (c.strides[0] * c.strides[1]).max(1)
            }
            _ => 0,
        };
        s.ins.first() == Some(&v) && macs >= HEAVY_MACS
    })
}

/// Make candidate `c`'s convolution read blocks: the conversions skipped,
/// the filter packed within `budget` bytes; returns the bytes packed.
fn apply(inner: &mut Inner, c: &Candidate, budget: usize) -> usize {
    let rt = &mut inner.tasks[c.task];
    let Some(k) = rt.kernel.as_mut() else {
        return 0;
    };
    let k = Arc::make_mut(k);
    let step = &mut k.steps[c.step];
    step.ins[0] = c.input.0;
    rt.skip[c.input.1] = true;
    if let Some((ra, rs)) = c.residual {
        if let Op::Conv(conv) = &step.op {
            if let Some(ri) = conv.residual {
                step.ins[ri] = ra;
            }
        }
        rt.skip[rs] = true;
    }
    let Op::Conv(conv) = &mut step.op else {
        return 0;
    };
    conv.reads_blocks = true;
    let (ptr, shape) = c.filter;
    let slot = crate::kernels::Slot {
        ptr: ptr as *mut u8,
        shape: shape.to_vec(),
        dtype: ge_ir::DType::F32,
    };
    conv.prepare_blocks(&slot, budget)
}
