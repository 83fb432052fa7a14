//! What every lowering pass needs around a function: finding the functions
//! to lower, the symbol bounds they are planned with, walking nested ops,
//! values captured by regions, and cloning ops from one body into another.
//!
//! Lowering passes run on a `builtin.module` (then they lower every public
//! `graph.func` with a body, and see the module's `ge.symbol_bounds`) or on one
//! `graph.func` (then the function's own `ge.symbol_bounds` attribute, if
//! any, gives the bounds). Private functions are callees of kernels and stay
//! as they are.

use crate::error::{LowerError, LowerResult};
use ge_dialects::graph::func::Func;
use ge_ir::attributes::{AttrDict, Attribute};
use ge_ir::body::{BlockId, Body, OpData, OpId, OpState, RegionId, ValueId, WalkOrder};
use ge_ir::diagnostics::{Diagnostic, Pos};
use ge_ir::pass::PassResult;
use ge_ir::Ident;
use std::collections::{HashMap, HashSet};

/// Upper bounds of symbolic dims (`B = 64`).
pub type Bounds = HashMap<Ident, i64>;

/// The `ge.symbol_bounds` attribute name (module or function).
pub const SYMBOL_BOUNDS: &str = "ge.symbol_bounds";

/// Symbols with no upper bound, each with the value the compile-time plan
/// was made at (`{B = 64 : i64}`), on the function: set by
/// [`for_each_function`] when a function has symbols without a bound.
pub const UNBOUNDED_SYMBOLS: &str = "ge.unbounded_symbols";

/// The value an unbounded symbol takes while compiling: the cost model,
/// the memory plan written to the file and `verify-memory` see the model at
/// this size. The runtime plans memory again per concrete shape
/// (`ge.replan`), so it is a sample, not a limit.
pub const SAMPLE_BOUND: i64 = 64;

/// Every symbol the types of a function's body mention (block arguments
/// and op results, nested regions included), in first-seen order.
pub fn function_symbols(f: &OpData) -> Vec<Ident> {
    let mut out = vec![];
    let Some(inner) = f.inner.as_deref() else {
        return out;
    };
    let note = |t: ge_ir::Type, out: &mut Vec<Ident>| {
        if let Some(dims) = t.as_tensor().and_then(|t| t.dims.as_ref()) {
            for d in dims.iter() {
                if let ge_ir::Dim::Sym(s) = d {
                    s.expr().symbols(out);
                }
            }
        }
    };
    if let Some(b) = func_block(f) {
        for &a in &inner.block(b).args {
            note(inner.value_type(a), &mut out);
        }
    }
    inner.walk_deep(WalkOrder::Pre, &mut |body, o| {
        for &r in body.op(o).results() {
            note(body.value_type(r), &mut out);
        }
    });
    out
}

/// Complete `bounds` for function `f`: each symbol of its types with no
/// bound gets [`SAMPLE_BOUND`], recorded in the function's
/// [`UNBOUNDED_SYMBOLS`] attribute (so `plan-memory` knows which bounds
/// are samples). A model whose dims have no bound compiles as is.
fn sample_unbounded(f: &mut OpData, bounds: &mut Bounds) {
    let free: Vec<Ident> = function_symbols(f)
        .into_iter()
        .filter(|s| !bounds.contains_key(s))
        .collect();
    if free.is_empty() {
        return;
    }
    let mut sampled = bounds_of(f.attr(UNBOUNDED_SYMBOLS));
    for s in free {
        let v = *sampled.entry(s).or_insert(SAMPLE_BOUND);
        bounds.insert(s, v);
    }
    f.attrs = f
        .attrs
        .with(Ident::new(UNBOUNDED_SYMBOLS), bounds_attr(&sampled));
}

/// The symbols of function `f` that have no upper bound (with the value
/// the compile-time plan took for each).
pub fn unbounded_symbols(f: &OpData) -> Bounds {
    bounds_of(f.attr(UNBOUNDED_SYMBOLS))
}

/// Read a `{B = 64 : i64}` dictionary attribute.
pub fn bounds_of(a: Option<Attribute>) -> Bounds {
    a.and_then(|a| a.as_dict())
        .map(|d| {
            d.entries()
                .iter()
                .filter_map(|(k, v)| v.as_int().map(|n| (*k, n)))
                .collect()
        })
        .unwrap_or_default()
}

/// A dictionary attribute holding `bounds` (sorted by name).
pub fn bounds_attr(bounds: &Bounds) -> Attribute {
    let entries = bounds
        .iter()
        .map(|(k, v)| (*k, Attribute::i64(*v)))
        .collect();
    Attribute::dict(AttrDict::new(entries))
}

/// An error diagnostic at an op's location.
pub fn error_at(loc: ge_ir::Location, msg: impl Into<String>) -> Vec<Diagnostic> {
    vec![Diagnostic::error(msg.into(), Pos::Loc(loc))]
}

/// The name of a function op.
pub fn func_name(f: &OpData) -> String {
    f.attr("sym_name")
        .and_then(|a| a.as_str())
        .unwrap_or("")
        .to_string()
}

/// The single block of a function body (`None` for a declaration).
pub fn func_block(f: &OpData) -> Option<BlockId> {
    let inner = f.inner.as_deref()?;
    let r = *f.regions().first()?;
    let blocks = &inner.region(r).blocks;
    blocks.first().copied()
}

/// Run `f` on each function to lower: `op` itself if it is a `graph.func`,
/// else every public `graph.func` with a body directly inside it (with the
/// module's symbol bounds).
pub fn for_each_function(
    op: &mut OpData,
    pass: &str,
    mut f: impl FnMut(&mut OpData, &Bounds) -> PassResult,
) -> PassResult {
    let check = |func: &OpData| -> PassResult {
        let Some(r) = func.regions().first() else {
            return Ok(());
        };
        let Some(inner) = func.inner.as_deref() else {
            return Ok(());
        };
        if inner.region(*r).blocks.len() > 1 {
            return Err(error_at(
                func.loc,
                format!(
                    "{pass}: function '@{}' has {} blocks; lowering needs single-block functions (structured control flow)",
                    func_name(func),
                    inner.region(*r).blocks.len()
                ),
            ));
        }
        Ok(())
    };
    if Func::is(op) {
        if func_block(op).is_none() {
            return Ok(());
        }
        check(op)?;
        let mut bounds = bounds_of(op.attr(SYMBOL_BOUNDS));
        sample_unbounded(op, &mut bounds);
        return f(op, &bounds);
    }
    let bounds = bounds_of(op.attr(SYMBOL_BOUNDS));
    let Some(inner) = op.inner.as_deref_mut() else {
        return Ok(());
    };
    let mut funcs = vec![];
    for r in inner.root_regions() {
        for &b in &inner.region(r).blocks {
            for o in inner.block_ops(b) {
                let d = inner.op(o);
                let private = d.attr("sym_visibility").and_then(|a| a.as_str()) == Some("private");
                if Func::is(d) && !private && func_block(d).is_some() {
                    funcs.push(o);
                }
            }
        }
    }
    let mut errors = vec![];
    for o in funcs {
        let d = inner.op_mut(o);
        let mut fb = bounds.clone();
        for (k, v) in bounds_of(d.attr(SYMBOL_BOUNDS)) {
            fb.insert(k, v);
        }
        sample_unbounded(d, &mut fb);
        if let Err(e) = check(d).and_then(|_| f(d, &fb)) {
            errors.extend(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Visit every op nested in `op` (its regions, and nested isolated bodies),
/// not `op` itself, with the body each lives in.
pub fn for_each_nested(body: &Body, op: OpId, f: &mut dyn FnMut(&Body, OpId)) {
    let d = body.op(op);
    match d.inner.as_deref() {
        Some(inner) => inner.walk_deep(WalkOrder::Pre, f),
        None => {
            for &r in d.regions() {
                body.walk_region(r, WalkOrder::Pre, &mut |o| {
                    f(body, o);
                    if let Some(i) = body.op(o).inner.as_deref() {
                        i.walk_deep(WalkOrder::Pre, f);
                    }
                });
            }
        }
    }
}

/// Values `op` reads: its operands, then values defined outside it that ops
/// in its (non-isolated) regions use (`Body::captured_values`) — in
/// first-use order, without repeats.
pub fn inputs_of(body: &Body, op: OpId) -> Vec<ValueId> {
    let mut out: Vec<ValueId> = vec![];
    let mut seen = HashSet::new();
    for &v in body.op(op).operands() {
        if seen.insert(v) {
            out.push(v);
        }
    }
    for v in body.captured_values(op) {
        if seen.insert(v) {
            out.push(v);
        }
    }
    out
}

/// Clone `op` (with everything nested in it) from `src` into `dst`, placing
/// it at the end of `block`. Operands are renamed through `map` (values of
/// `src` → values of `dst`); results and nested values are added to `map`.
pub fn clone_op_into(
    src: &Body,
    op: OpId,
    dst: &mut Body,
    block: BlockId,
    map: &mut HashMap<ValueId, ValueId>,
) -> LowerResult<OpId> {
    let new = clone_detached(src, op, dst, map)?;
    dst.append_op(block, new);
    Ok(new)
}

fn clone_detached(
    src: &Body,
    op: OpId,
    dst: &mut Body,
    map: &mut HashMap<ValueId, ValueId>,
) -> LowerResult<OpId> {
    let d = src.op(op);
    if !d.successors().is_empty() {
        return Err(LowerError::at(
            d.loc,
            format!("cannot clone '{}': it has successors", d.name),
        ));
    }
    let operands: Vec<ValueId> = d
        .operands()
        .iter()
        .map(|v| {
            map.get(v).copied().ok_or_else(|| {
                LowerError::at(
                    d.loc,
                    format!(
                        "cloning '{}': operand defined outside the cloned ops",
                        d.name
                    ),
                )
            })
        })
        .collect::<Result<_, _>>()?;
    let st = OpState {
        operands,
        result_types: src.result_types(op),
        ..OpState::like(d)
    };
    let new = match d.inner.as_deref() {
        Some(inner) => {
            dst.create_op_with_regions(st, d.regions().to_vec(), Some(Box::new(inner.clone())))
        }
        None => {
            let mut regions = vec![];
            for &r in d.regions() {
                regions.push(clone_region(src, r, dst, map)?);
            }
            dst.create_op_with_regions(st, regions, None)
        }
    };
    for (a, b) in d.results().iter().zip(dst.op(new).results().to_vec()) {
        map.insert(*a, b);
    }
    Ok(new)
}

fn clone_region(
    src: &Body,
    r: RegionId,
    dst: &mut Body,
    map: &mut HashMap<ValueId, ValueId>,
) -> LowerResult<RegionId> {
    let nr = dst.new_region(None);
    for &b in &src.region(r).blocks {
        let nb = dst.add_block(nr);
        for &a in &src.block(b).args {
            let na = dst.add_block_arg(nb, src.value_type(a), src.value(a).loc);
            map.insert(a, na);
        }
        for o in src.block_ops(b) {
            // Regions nest as deep as the text: grow the stack, not overflow it.
            let no =
                stacker::maybe_grow(64 * 1024, 1024 * 1024, || clone_detached(src, o, dst, map))?;
            dst.append_op(nb, no);
        }
    }
    Ok(nr)
}

/// Whether a function-level op is a symbol-visibility `private` function.
pub fn is_private(d: &OpData) -> bool {
    d.attr("sym_visibility").and_then(|a| a.as_str()) == Some("private")
}

/// An integer array attribute.
pub fn i64s(a: Option<Attribute>) -> Vec<i64> {
    a.and_then(|a| a.as_i64_array()).unwrap_or_default()
}
