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

fn overlaps(a: &Buffer, b: &Buffer) -> bool {
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
enum Blocking {
    /// A convolution writing the blocks itself (`Conv::blocked_out`).
    Conv,
    /// A conversion of plain value `u` (e.g. a residual add's result).
    Convert(usize),
}

/// The step writing result `r` as blocks, if it could write them plain instead
/// and nothing else in the kernel touches `r`.
fn blocked_result(k: &KernelProgram, skip: &[bool], r: usize) -> Option<(usize, Blocking)> {
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
        (Op::Conv(c), _) if c.blocked_out.is_some() && c.plain_type.is_some() => {
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
fn unblocked_arg(k: &KernelProgram, skip: &[bool], a: usize) -> Option<(usize, usize)> {
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
type Access = (Option<usize>, Buffer);

/// What task `rt` reads and writes.
fn accesses(rt: &TaskRt) -> (Vec<Access>, Vec<Access>) {
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

/// Elide the conversions; returns how many buffers now stay plain.
pub(crate) fn elide(inner: &mut Inner) -> usize {
    let control_flow = inner.tasks.iter().any(|t| {
        matches!(
            t.task,
            Task::Goto { .. } | Task::Switch { .. } | Task::Label { .. }
        )
    });
    if control_flow {
        // Program order is not execution order: readers cannot be told apart.
        return 0;
    }
    let io_arenas: Vec<u32> = inner
        .io
        .outputs
        .iter()
        .chain(&inner.io.inputs)
        .map(|t| t.buffer.arena)
        .collect();
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
