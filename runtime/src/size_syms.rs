//! Size symbols (issue 15 item 3, docs/architecture.md "Execution modes"):
//! a dim that only an op's run decides — the count of a `data.nonzero`,
//! `data.unique` or `data.non_max_suppression` —
//! is a symbol with an upper bound in the file (`symbol_bounds`). A run
//! starts with the symbol at its bound: memory is planned there (the proof
//! of the loader covers every buffer at the bounds) and the producing
//! kernel writes at most that much. Right after the producing launch the
//! executor reads the count the op returns, checks it against the bound and
//! switches the run to the plan at the count (`exec.rs`): same placements
//! (at the bound), the later launches', copies' and outputs' shapes at the
//! count.
//!
//! Found at load ([`binders`]): the launches whose kernel runs a size op,
//! refused when the symbol has no bound, is also decided elsewhere (an
//! input, a value symbol, another size op), is used by another step of the
//! same kernel (that step would run at the bound), or when the model has
//! jumps (a loop would run the producer again at the count).

use crate::kernels::KernelProgram;
use crate::model::TaskRt;
use crate::Error;
use ge_ir::Ident;
use ge_om::model::Task;
use std::collections::{HashMap, HashSet};

/// One launch that binds a size symbol.
#[derive(Clone, Debug)]
pub(crate) struct SizeBinder {
    /// The symbol, its bound and the kernel value holding the count.
    pub sym: Ident,
    pub bound: i64,
    pub count: usize,
    /// The op and its location, for messages.
    pub op: String,
    pub loc: ge_ir::Location,
}

/// The size binders of a model's launches, by task index.
pub(crate) fn binders(
    tasks: &[TaskRt],
    bounds: &HashMap<Ident, i64>,
    decided: &[Ident],
) -> Result<HashMap<usize, SizeBinder>, Error> {
    let mut out: HashMap<usize, SizeBinder> = HashMap::new();
    let mut seen: HashSet<Ident> = decided.iter().copied().collect();
    for (ti, rt) in tasks.iter().enumerate() {
        let (Task::Launch { .. }, Some(k)) = (&rt.task, &rt.kernel) else {
            continue;
        };
        for (si, s) in k.steps.iter().enumerate() {
            let Some(ci) = ge_dialects::data::size::count_result(&s.name) else {
                continue;
            };
            let at = |m: String| Error(format!("kernel '@{}': {}: {m}", k.name, s.name));
            if out.contains_key(&ti) {
                return Err(at("a kernel binds at most one size symbol".into()));
            }
            let (Some(&idx), Some(&count)) = (s.outs.first(), s.outs.get(ci)) else {
                return Err(at("the op lacks its results".into()));
            };
            let sym = size_symbol(k, idx, &s.ins).ok_or_else(|| {
                at(format!(
                    "result '{}' has no size symbol (a dim no operand has)",
                    k.types[idx]
                ))
            })?;
            if k.fallback.is_some() {
                return Err(at(format!(
                    "size symbol {sym} bound by a kernel without a native program"
                )));
            }
            let bound = *bounds
                .get(&sym)
                .ok_or_else(|| at(format!("size symbol {sym} has no upper bound")))?;
            if !seen.insert(sym) {
                return Err(at(format!(
                    "size symbol {sym} is decided twice (by an input, a value or another op)"
                )));
            }
            let uses = k.steps.iter().enumerate().any(|(sj, o)| {
                sj != si
                    && o.ins
                        .iter()
                        .chain(&o.outs)
                        .any(|&v| mentions(k.types[v], sym))
            });
            if uses {
                return Err(at(format!(
                    "size symbol {sym} is used by another op of the kernel that decides it"
                )));
            }
            out.insert(
                ti,
                SizeBinder {
                    sym,
                    bound,
                    count,
                    op: s.name.clone(),
                    loc: s.loc,
                },
            );
        }
    }
    if !out.is_empty()
        && tasks
            .iter()
            .any(|t| matches!(t.task, Task::Goto { .. } | Task::Switch { .. }))
    {
        return Err(Error(
            "a model with size symbols (NonZero…) and control flow (If/Loop) is not supported"
                .into(),
        ));
    }
    Ok(out)
}

/// The size symbol of a size op's first result: its one dim that is a
/// plain symbol no operand mentions (NonZero's `[rank, K]`, NMS's `[K, 3]`,
/// Unique's `[.., K, ..]`).
fn size_symbol(k: &KernelProgram, v: usize, ins: &[usize]) -> Option<Ident> {
    let dims = k.types.get(v)?.as_tensor()?.dims.clone()?;
    let mut fresh = dims.iter().filter_map(|d| d.as_symbol()).filter(|&s| {
        !ins.iter()
            .any(|&i| k.types.get(i).is_some_and(|&t| mentions(t, s)))
    });
    match (fresh.next(), fresh.next()) {
        (Some(s), None) => Some(s),
        _ => None,
    }
}

fn mentions(t: ge_ir::Type, sym: Ident) -> bool {
    t.as_tensor()
        .and_then(|t| t.dims.as_ref())
        .is_some_and(|d| {
            d.iter().any(|d| {
                d.expr().is_some_and(|e| {
                    let mut v = vec![];
                    e.symbols(&mut v);
                    v.contains(&sym)
                })
            })
        })
}
