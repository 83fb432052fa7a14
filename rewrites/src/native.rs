//! Patterns the rule language cannot express (variadic operands, multi-result
//! producers), written in Rust. Each is one `FnPattern`.

use crate::pattern::{FnPattern, Pattern};
use crate::rewriter::Rewriter;
use ge_dialects::data::movement::{Concat, Slice, Split};
use ge_dialects::graph::nn::Conv2d;
use ge_ir::body::OpId;
use ge_ir::Attribute;
use std::sync::Arc;

fn axis_of(rw: &Rewriter, op: OpId) -> Option<i64> {
    let d = rw.body.op(op);
    let a = d.attr("axis")?.as_int()?;
    let rank = rw
        .body
        .value_type(*d.results().first()?)
        .as_tensor()?
        .rank()? as i64;
    Some(if a < 0 { a + rank } else { a })
}

/// `concat(split(x)#0, …, split(x)#n-1)` along the split's axis is `x`.
fn split_concat(op: OpId, rw: &mut Rewriter) -> Result<bool, String> {
    let operands = rw.body.op(op).operands().to_vec();
    let Some(first) = operands.first() else {
        return Ok(false);
    };
    let Some(split) = rw.body.defining_op(*first) else {
        return Ok(false);
    };
    if !Split::is(rw.body.op(split)) || rw.body.op(split).results() != operands.as_slice() {
        return Ok(false);
    }
    let input = rw.body.operand(split, 0);
    let split_axis = {
        let d = rw.body.op(split);
        let a = d.attr("axis").and_then(|a| a.as_int()).unwrap_or(0);
        let rank = rw
            .body
            .value_type(input)
            .as_tensor()
            .and_then(|t| t.rank())
            .unwrap_or(0) as i64;
        if a < 0 {
            a + rank
        } else {
            a
        }
    };
    if axis_of(rw, op) != Some(split_axis)
        || rw.body.value_type(input) != rw.body.value_type(rw.body.result(op, 0))
    {
        return Ok(false);
    }
    rw.replace_op(op, &[input])?;
    Ok(true)
}

/// Concat operands that are themselves concats along the same axis (with one
/// use) are spliced in: any number of operands at any position.
fn flatten_concat(op: OpId, rw: &mut Rewriter) -> Result<bool, String> {
    let Some(axis) = axis_of(rw, op) else {
        return Ok(false);
    };
    let operands = rw.body.op(op).operands().to_vec();
    let mut flat = vec![];
    let mut changed = false;
    for v in operands {
        match rw.body.defining_op(v) {
            Some(inner)
                if Concat::is(rw.body.op(inner))
                    && axis_of(rw, inner) == Some(axis)
                    && rw.body.users(v) == [op] =>
            {
                flat.extend(rw.body.op(inner).operands().iter().copied());
                changed = true;
            }
            _ => flat.push(v),
        }
    }
    if !changed {
        return Ok(false);
    }
    rw.modify(op, |b| b.set_operands(op, &flat));
    Ok(true)
}

/// The kernel taps of one spatial axis that read the input for some output
/// position (`first..=last`), the rest reading only padding: output `y`
/// reads input `y * stride - pad + i * dil` with tap `i`. `None` when no tap
/// does (the output is the bias alone).
fn live_taps(
    input: i64,
    output: i64,
    k: i64,
    stride: i64,
    pad: i64,
    dil: i64,
) -> Option<(i64, i64)> {
    // Some output y with 0 <= y * stride + i * dil - pad < input.
    let live = |i: i64| (0..output).any(|y| (0..input).contains(&(y * stride + i * dil - pad)));
    let first = (0..k).find(|&i| live(i))?;
    let last = (0..k).rev().find(|&i| live(i))?;
    Some((first, last))
}

/// A convolution whose outer kernel rows or columns only ever read padding
/// (a dilated kernel larger than its input: DeepLabV3's ASPP runs 3x3 taps
/// dilated by 12, 24 and 36 over a 4x4 feature map, where only the centre
/// tap reads the input) becomes the convolution with those taps sliced off
/// the filter and the padding shrunk to match: the same output size, the
/// same sums (the dropped taps multiplied zeros), a fraction of the work.
/// Needs static spatial sizes; leaves a padding that would go negative.
fn conv_dead_taps(op: OpId, rw: &mut Rewriter) -> Result<bool, String> {
    let d = rw.body.op(op);
    let (Some(&x), Some(&w), Some(&out)) = (
        d.operands().first(),
        d.operands().get(1),
        d.results().first(),
    ) else {
        return Ok(false);
    };
    let ints = |name: &str, default: &[i64]| {
        d.attr(name)
            .and_then(|a| a.as_i64_array())
            .unwrap_or_else(|| default.to_vec())
    };
    let (strides, pads, dils) = (
        ints("strides", &[1, 1]),
        ints("pads", &[0; 4]),
        ints("dilations", &[1, 1]),
    );
    let spatial = |v| -> Option<[i64; 2]> {
        let t = rw.body.value_type(v).as_tensor()?;
        match t.shape() {
            [_, _, h, w] => Some([h.as_static()?, w.as_static()?]),
            _ => None,
        }
    };
    let (Some(input), Some(kernel), Some(output)) = (spatial(x), spatial(w), spatial(out)) else {
        return Ok(false);
    };
    if strides.len() != 2 || pads.len() != 4 || dils.len() != 2 {
        return Ok(false);
    }
    let mut starts = [0i64; 2];
    let mut ends = kernel;
    let mut new_pads = pads.clone();
    let mut new_dils = dils.clone();
    for a in 0..2 {
        let Some((first, last)) =
            live_taps(input[a], output[a], kernel[a], strides[a], pads[a], dils[a])
        else {
            return Ok(false);
        };
        starts[a] = first;
        ends[a] = last + 1;
        new_pads[a] = pads[a] - first * dils[a];
        new_pads[a + 2] = pads[a + 2] - (kernel[a] - 1 - last) * dils[a];
        // One tap left: its dilation means nothing (and a 1x1 undilated
        // convolution is the runtime's pointwise GEMM).
        if first == last {
            new_dils[a] = 1;
        }
    }
    if starts == [0, 0] && ends == kernel || new_pads.iter().any(|&p| p < 0) {
        return Ok(false);
    }
    rw.set_insertion_point_before(op);
    let slice = rw.create(
        Slice::NAME,
        &[w],
        vec![
            ("starts", Attribute::i64_array(&starts)),
            ("ends", Attribute::i64_array(&ends)),
            ("axes", Attribute::i64_array(&[2, 3])),
        ],
        None,
    )?;
    let sliced = rw.body.result(slice, 0);
    rw.modify(op, |b| {
        let mut operands = b.op(op).operands().to_vec();
        operands[1] = sliced;
        b.set_operands(op, &operands);
        b.set_attr(op, "pads", Attribute::i64_array(&new_pads));
        b.set_attr(op, "dilations", Attribute::i64_array(&new_dils));
    });
    // A constant filter is sliced now, whatever the folding size limit: the
    // result is smaller than the constant it replaces, and left unfolded it
    // became a kernel of its own whose output the convolution read through
    // the arena every run (no load-time folding across kernels): Inception
    // v3's 3x3 filters on 1x1 maps cost 12 % of its run in layout copies.
    if rw.constant_of(w).is_some() {
        crate::fold::try_fold(rw, slice, usize::MAX)?;
    }
    Ok(true)
}

/// The native canonicalization patterns.
pub fn canonical() -> Vec<Arc<dyn Pattern>> {
    vec![
        Arc::new(FnPattern {
            name: "split_concat",
            root: Some(Concat::NAME),
            benefit: 2,
            labels: vec!["canonical".into()],
            f: split_concat,
        }),
        Arc::new(FnPattern {
            name: "flatten_concat",
            root: Some(Concat::NAME),
            benefit: 1,
            labels: vec!["canonical".into()],
            f: flatten_concat,
        }),
        Arc::new(FnPattern {
            name: "conv_dead_taps",
            root: Some(Conv2d::NAME),
            benefit: 1,
            labels: vec!["canonical".into()],
            f: conv_dead_taps,
        }),
    ]
}
