//! Plain layouts between kernels (load time).
//!
//! A model compiled for an Ascend SoC keeps activations in NC1HWC0 between
//! its convolutions and in FRACTAL_NZ between its matrix products: each such
//! kernel converts its input to NCHW / ND, computes, and converts its result
//! back to blocks. On the CPU both conversions are pure cost when nothing
//! else looks at the blocks. So for every buffer whose producer could as
//! well write the plain layout (a convolution writing the blocks itself, or
//! a conversion of a plain value — a matrix product's result, a residual
//! sum, a model input) and whose every reader converts it straight back, the
//! loader makes the producer write the plain layout into the buffer (its
//! storage is at least as large: blocks pad) and lets the readers use it as
//! it is: both conversions go. Model outputs, buffers anything else reads
//! (an elementwise add on the blocks, a copy, a partial read) and programs
//! with control flow keep their formats.

use crate::kernels::{KernelProgram, Op};
use crate::model::{Inner, TaskRt};
use ge_ir::attributes::Format;
use ge_om::model::{Buffer, Operand, Task};
use std::sync::Arc;

/// A blocked result on its way to its readers.
struct Candidate {
    buffer: Buffer,
    /// (task, result value) that writes it.
    producer: (usize, usize),
    /// (task, argument value, the plain value its conversion makes).
    readers: Vec<(usize, usize, usize)>,
    ok: bool,
}

pub(crate) fn overlaps(a: &Buffer, b: &Buffer) -> bool {
    a.arena == b.arena
        && a.offset < b.offset + b.bytes
        && b.offset < a.offset + a.bytes
        && a.bytes > 0
        && b.bytes > 0
}

/// The plain layout a blocked activation format stands for.
fn plain_of(blocked: Format) -> Option<Format> {
    match blocked {
        Format::NC1HWC0 => Some(Format::NCHW),
        Format::FRACTAL_NZ => Some(Format::ND),
        _ => None,
    }
}

/// How a kernel writes a result as blocks that it could write plain.
#[derive(Clone, Copy)]
pub(crate) enum Blocking {
    /// A convolution writing the blocks itself (`Conv::blocked_out`).
    Conv,
    /// A conversion of plain value `u` (e.g. a residual add's result).
    Convert(usize),
}

/// The step writing result `r` as blocks, if it could write them plain instead
/// and nothing else in the kernel touches `r`.
pub(crate) fn blocked_result(
    k: &KernelProgram,
    skip: &[bool],
    r: usize,
) -> Option<(usize, Blocking)> {
    if k.fallback.is_some()
        || k.args.contains(&r)
        || k.results.iter().filter(|&&x| x == r).count() != 1
        || k.steps.iter().any(|s| s.ins.contains(&r))
    {
        return None;
    }
    let si = k.steps.iter().position(|s| s.outs.contains(&r))?;
    if skip[si] {
        return None;
    }
    let s = &k.steps[si];
    match (&s.op, s.ins.as_slice()) {
        (Op::Conv(c), _)
            if c.blocked_out.is_some() && c.plain_type.is_some() && !c.reads_blocks =>
        {
            Some((si, Blocking::Conv))
        }
        (Op::Transdata(t), &[u]) if plain_of(t.dst) == Some(t.src) => {
            Some((si, Blocking::Convert(u)))
        }
        _ => None,
    }
}

/// The plain value argument `a` is converted to, if converting it is the
/// only thing the kernel does with it.
pub(crate) fn unblocked_arg(k: &KernelProgram, skip: &[bool], a: usize) -> Option<(usize, usize)> {
    if k.fallback.is_some() || k.results.contains(&a) {
        return None;
    }
    let readers: Vec<usize> = (0..k.steps.len())
        .filter(|&si| k.steps[si].ins.contains(&a))
        .collect();
    let &[si] = readers.as_slice() else {
        return None;
    };
    let s = &k.steps[si];
    match (&s.op, s.ins.as_slice(), s.outs.as_slice()) {
        (Op::Transdata(t), &[x], &[v]) if x == a && plain_of(t.src) == Some(t.dst) && !skip[si] => {
            Some((si, v))
        }
        _ => None,
    }
}

/// A buffer a task reads or writes, with the kernel value it is bound to.
pub(crate) type Access = (Option<usize>, Buffer);

/// What task `rt` reads and writes.
pub(crate) fn accesses(rt: &TaskRt) -> (Vec<Access>, Vec<Access>) {
    let buffer = |o: &Operand| match o {
        Operand::Buffer(b) => Some(b.clone()),
        Operand::Weight(_) => None,
    };
    match &rt.task {
        Task::Launch { ins, outs, .. } => {
            // Kernel values when the kernel is known (a launch without one
            // still reads and writes its buffers).
            let arg = |i: usize| rt.kernel.as_ref().and_then(|k| k.args.get(i).copied());
            let res = |i: usize| rt.kernel.as_ref().and_then(|k| k.results.get(i).copied());
            (
                ins.iter()
                    .enumerate()
                    .filter_map(|(i, o)| Some((arg(i), buffer(o)?)))
                    .collect(),
                outs.iter()
                    .enumerate()
                    .map(|(i, b)| (res(i), b.clone()))
                    .collect(),
            )
        }
        Task::Memcpy { src, dst, .. } => (vec![(None, src.clone())], vec![(None, dst.clone())]),
        _ => (vec![], vec![]),
    }
}

/// Whether the program jumps: then program order is not execution order,
/// and the readers of a value cannot be told apart.
pub(crate) fn has_control_flow(inner: &Inner) -> bool {
    inner.tasks.iter().any(|t| {
        matches!(
            t.task,
            Task::Goto { .. } | Task::Switch { .. } | Task::Label { .. }
        )
    })
}

/// The arenas of the model's inputs and outputs (the caller's memory).
fn io_arenas(inner: &Inner) -> Vec<u32> {
    inner
        .io
        .outputs
        .iter()
        .chain(&inner.io.inputs)
        .map(|t| t.buffer.arena)
        .collect()
}

/// Elide the conversions; returns how many buffers now stay plain.
pub(crate) fn elide(inner: &mut Inner) -> usize {
    if has_control_flow(inner) {
        // Program order is not execution order: readers cannot be told apart.
        return 0;
    }
    let io_arenas = io_arenas(inner);
    let mut live: Vec<Candidate> = vec![];
    let mut done: Vec<Candidate> = vec![];
    for ti in 0..inner.tasks.len() {
        let rt = &inner.tasks[ti];
        let (reads, writes) = accesses(rt);
        // Reads first: a task reads the value written before it.
        for (arg, b) in &reads {
            for c in live.iter_mut().filter(|c| overlaps(&c.buffer, b)) {
                let plain = match (arg, &rt.kernel) {
                    (Some(a), Some(k))
                        if *b == c.buffer && !rt.dead && !rt.folded.contains_key(a) =>
                    {
                        unblocked_arg(k, &rt.skip, *a)
                    }
                    _ => None,
                };
                match (plain, arg) {
                    (Some((_, v)), Some(a)) => c.readers.push((ti, *a, v)),
                    _ => c.ok = false,
                }
            }
        }
        // Writes end the values they overlap, then start new candidates.
        let (ended, kept): (Vec<Candidate>, Vec<Candidate>) = live
            .into_iter()
            .partition(|c| writes.iter().any(|(_, w)| overlaps(&c.buffer, w)));
        live = kept;
        done.extend(ended);
        if let (Some(k), false) = (&rt.kernel, rt.dead) {
            for (r, b) in &writes {
                let Some(r) = r else { continue };
                if io_arenas.contains(&b.arena) || rt.folded.contains_key(r) {
                    continue;
                }
                if blocked_result(k, &rt.skip, *r).is_some() {
                    live.push(Candidate {
                        buffer: b.clone(),
                        producer: (ti, *r),
                        readers: vec![],
                        ok: true,
                    });
                }
            }
        }
    }
    done.extend(live);
    let mut plain = 0;
    for c in done.into_iter().filter(|c| c.ok && !c.readers.is_empty()) {
        let (pt, r) = c.producer;
        let rt = &mut inner.tasks[pt];
        let Some(k) = rt.kernel.as_mut() else {
            continue;
        };
        let k = Arc::make_mut(k);
        match blocked_result(k, &rt.skip, r) {
            Some((si, Blocking::Conv)) => {
                if let Op::Conv(conv) = &mut k.steps[si].op {
                    if let Some(t) = conv.plain_type.take() {
                        conv.blocked_out = None;
                        k.types[r] = t;
                    }
                }
            }
            Some((si, Blocking::Convert(u))) => {
                // The kernel returns the plain value itself.
                rt.skip[si] = true;
                for x in k.results.iter_mut().filter(|x| **x == r) {
                    *x = u;
                }
            }
            None => continue,
        }
        for (t, a, v) in c.readers {
            let rt = &mut inner.tasks[t];
            if let Some((si, _)) = rt
                .kernel
                .as_ref()
                .and_then(|k| unblocked_arg(k, &rt.skip, a))
            {
                rt.skip[si] = true;
                rt.alias.push((v, a));
            }
        }
        plain += 1;
    }
    plain
}

/// A launch left copying its argument into its result buffer: a layout
/// conversion whose step [`elide`] skipped (the value was plain on both
/// sides). Its (source, destination) buffers.
fn identity_copy(rt: &TaskRt) -> Option<(Buffer, Buffer)> {
    let (Task::Launch { ins, outs, .. }, Some(k)) = (&rt.task, &rt.kernel) else {
        return None;
    };
    let ([Operand::Buffer(x)], [y], &[a], &[r]) = (
        ins.as_slice(),
        outs.as_slice(),
        k.args.as_slice(),
        k.results.as_slice(),
    ) else {
        return None;
    };
    let copy = !rt.dead
        && k.fallback.is_none()
        && rt.folded.is_empty()
        && rt.skip.iter().all(|&s| s)
        && resolve(&rt.alias, r) == a;
    copy.then(|| (x.clone(), y.clone()))
}

/// The launch next to `ti` on its stream (`step` = -1: before it, 1: after
/// it), past the waits (after) or records (before) between them: a wait
/// after a copy only holds its reader back, and a record after a producer
/// only lets others start after it. Anything else between — another task,
/// a record after the copy, a wait before it — and there is none.
fn stream_neighbour(inner: &Inner, ti: usize, step: isize) -> Option<usize> {
    let list = inner.streams.iter().find(|l| l.contains(&ti))?;
    let mut at = list.iter().position(|&t| t == ti)?;
    loop {
        at = at.checked_add_signed(step)?;
        let rt = &inner.tasks[*list.get(at)?];
        match (&rt.task, step > 0) {
            (Task::Wait { .. }, true) | (Task::Record { .. }, false) => continue,
            (Task::Launch { .. }, _) if !rt.dead && rt.kernel.is_some() => return Some(list[at]),
            _ => return None,
        }
    }
}

/// Whether value `v` of task `rt`'s kernel has a static size of at most
/// `bytes`: the check before binding it to another buffer (a reader whose
/// conversion was elided still declares its argument as the blocks, padded
/// larger than the plain original it would read instead).
fn value_fits(rt: &TaskRt, v: usize, bytes: u64) -> bool {
    let Some(&t) = rt.kernel.as_ref().and_then(|k| k.types.get(v)) else {
        return false;
    };
    crate::kernels::concrete(t, &Default::default())
        .ok()
        .and_then(|s| crate::exec::checked_bytes(&s, t.dtype().map_or(1, |d| d.byte_size())))
        .is_some_and(|n| n as u64 <= bytes)
}

/// Whether a task touches (reads or writes) memory overlapping `b`.
fn touches(rt: &TaskRt, b: &Buffer) -> bool {
    let (reads, writes) = accesses(rt);
    reads.iter().chain(&writes).any(|(_, x)| overlaps(x, b))
}

/// Whether a task writes memory overlapping `b`.
fn writes(rt: &TaskRt, b: &Buffer) -> bool {
    accesses(rt).1.iter().any(|(_, x)| overlaps(x, b))
}

/// Whether a task after `from` (program order) reads `b`'s bytes before
/// one writes over them: whether the value there is still wanted.
fn read_later(inner: &Inner, from: usize, b: &Buffer) -> bool {
    for rt in &inner.tasks[from + 1..] {
        let (reads, writes) = accesses(rt);
        if reads.iter().any(|(_, x)| overlaps(x, b)) {
            return true;
        }
        if writes.iter().any(|(_, x)| overlaps(x, b)) {
            return false;
        }
    }
    false
}

/// Copy task `c` (`x` into `y`) dropped: its producer, the launch just
/// before it on its stream, writes `y` itself (a convolution writing
/// straight into its slice of a concatenation). Only when nothing else
/// reads the value in `x`, the producer reads nothing of `y`, its result
/// fits `y` ([`value_fits`]), and no task
/// between the two in program order touches `x` or `y`; with no wait
/// between them on the stream, whatever ran before the copy ran before the
/// producer, so `y` was already free when the producer runs.
fn forward_producer(inner: &mut Inner, c: usize, x: &Buffer, y: &Buffer) -> bool {
    let Some(p) = stream_neighbour(inner, c, -1) else {
        return false;
    };
    let Task::Launch { ins, outs, .. } = &inner.tasks[p].task else {
        return false;
    };
    let Some(i) = outs.iter().position(|o| o == x) else {
        return false;
    };
    let result = inner.tasks[p]
        .kernel
        .as_ref()
        .and_then(|k| k.results.get(i));
    let clear = result.is_some_and(|&v| value_fits(&inner.tasks[p], v, y.bytes))
        && outs
            .iter()
            .enumerate()
            .all(|(j, o)| j == i || !(overlaps(o, x) || overlaps(o, y)))
        && ins.iter().all(|o| match o {
            Operand::Buffer(b) => !overlaps(b, y),
            Operand::Weight(_) => true,
        })
        && inner.tasks[p + 1..c]
            .iter()
            .all(|rt| !touches(rt, x) && !touches(rt, y))
        && !read_later(inner, c, x);
    if !clear {
        return false;
    }
    if let Task::Launch { outs, .. } = &mut inner.tasks[p].task {
        outs[i] = y.clone();
    }
    inner.tasks[c].dead = true;
    true
}

/// Copy task `c` (`x` into `y`) dropped: its reader, the launch just after
/// it on its stream, reads `x` instead. Only when nothing else reads the
/// copy in `y`, the reader writes neither buffer, the arguments it binds
/// there fit `x` ([`value_fits`]), and no task between the two in program
/// order touches `y` or writes `x` (others may read `x`: Inception's
/// blocks copy one concatenation once per branch, on each branch's
/// stream); with no record between them on the stream, whatever waited for
/// the copy waits for the reader too, so nothing overwrites `x` before the
/// reader has read it.
fn forward_reader(inner: &mut Inner, c: usize, x: &Buffer, y: &Buffer) -> bool {
    let Some(r) = stream_neighbour(inner, c, 1) else {
        return false;
    };
    let Task::Launch { ins, outs, .. } = &inner.tasks[r].task else {
        return false;
    };
    let reads_y = |o: &Operand| matches!(o, Operand::Buffer(b) if b == y);
    let args = inner.tasks[r].kernel.as_ref().map_or(&[][..], |k| &k.args);
    let clear = ins.iter().any(reads_y)
        && ins.len() == args.len()
        && ins
            .iter()
            .zip(args)
            .filter(|(o, _)| reads_y(o))
            .all(|(_, &a)| value_fits(&inner.tasks[r], a, x.bytes))
        && ins.iter().all(|o| match o {
            Operand::Buffer(b) => b == y || !overlaps(b, y),
            Operand::Weight(_) => true,
        })
        && outs.iter().all(|o| !(overlaps(o, x) || overlaps(o, y)))
        && inner.tasks[c + 1..r]
            .iter()
            .all(|rt| !writes(rt, x) && !touches(rt, y))
        && !read_later(inner, r, y);
    if !clear {
        return false;
    }
    if let Task::Launch { ins, .. } = &mut inner.tasks[r].task {
        for o in ins.iter_mut().filter(|o| reads_y(o)) {
            *o = Operand::Buffer(x.clone());
        }
    }
    inner.tasks[c].dead = true;
    true
}

/// Drop the copies [`elide`] leaves behind: a standalone conversion of a
/// value that now stays plain copies it from one buffer to another (around
/// a concatenation, whose inputs are slices of its buffer: SqueezeNet's
/// fire modules, Inception's blocks). The producer writes the destination
/// itself, or the reader reads the source, when that is safe (see
/// [`forward_producer`], [`forward_reader`]). Both buffers must be
/// workspace of static size (not the model's inputs or outputs). Returns
/// how many copies were dropped.
pub(crate) fn forward_copies(inner: &mut Inner) -> usize {
    if has_control_flow(inner) || !inner.sizes.is_empty() {
        return 0;
    }
    let io_arenas = io_arenas(inner);
    let mut dropped = 0;
    for c in 0..inner.tasks.len() {
        let Some((x, y)) = identity_copy(&inner.tasks[c]) else {
            continue;
        };
        if io_arenas.contains(&x.arena) || io_arenas.contains(&y.arena) || overlaps(&x, &y) {
            continue;
        }
        if forward_producer(inner, c, &x, &y) || forward_reader(inner, c, &x, &y) {
            dropped += 1;
        }
    }
    dropped
}

/// Values of a task that live where another one does (`TaskRt::alias`).
pub(crate) fn resolve(alias: &[(usize, usize)], v: usize) -> usize {
    alias.iter().find(|(x, _)| *x == v).map_or(v, |&(_, a)| a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(arena: u32, offset: u64, bytes: u64) -> Buffer {
        Buffer {
            arena,
            offset,
            bytes,
            ty: String::new(),
            id: 0,
        }
    }

    #[test]
    fn overlap_needs_shared_bytes_in_one_arena() {
        assert!(overlaps(&buf(0, 0, 64), &buf(0, 32, 64)));
        assert!(!overlaps(&buf(0, 0, 64), &buf(0, 64, 64)));
        assert!(!overlaps(&buf(0, 0, 64), &buf(1, 0, 64)));
        assert!(!overlaps(&buf(0, 0, 0), &buf(0, 0, 64)));
    }

    #[test]
    fn aliases_resolve_to_their_argument() {
        assert_eq!(resolve(&[(5, 1), (7, 2)], 7), 2);
        assert_eq!(resolve(&[(5, 1)], 3), 3);
    }
}
