//! Control flow with regions (`graph.if`, `graph.while`, `graph.case`), their
//! terminators (`graph.yield`, `graph.condition`) and `graph.fused` kernels.
//!
//! Regions hold one block each. A region's results are the operands of its
//! terminator; the reference semantics run regions through
//! [`SemCtx::run_region`].

use crate::interfaces::*;
use ge_ir::body::{Body, OpId};
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::opdef::{OpDef, OpError, Trait};
use ge_ir::tensor::Tensor;
use ge_ir::verifier::types_compatible;
use ge_ir::Type;

/// Ops whose regions end in `graph.yield`.
const YIELD_PARENTS: &[&str] = &["graph.if", "graph.while", "graph.case", "graph.fused"];

/// The one element of a condition/index tensor.
pub fn single(t: &Tensor, what: &str) -> Result<i64, String> {
    if t.len() != 1 {
        return Err(format!(
            "operand '{what}' must hold exactly one element, but has shape {:?}",
            t.shape
        ));
    }
    Ok(t.get_i(0))
}

/// A statically known operand shape with more than one element is an error.
fn check_single_operand(body: &Body, op: OpId, what: &str) -> Result<(), OpError> {
    let Some(&v) = body.op(op).operands().first() else {
        return Ok(());
    };
    let t = body.value_type(v);
    if let Some(n) = t.as_tensor().and_then(|tt| tt.num_elements()) {
        if n != 1 {
            return Err(
                format!("operand '{what}' must hold exactly one element, but got '{t}'").into(),
            );
        }
    }
    Ok(())
}

fn type_list(ts: &[Type]) -> String {
    let v: Vec<String> = ts.iter().map(|t| format!("'{t}'")).collect();
    format!("({})", v.join(", "))
}

/// Check that region `i` of `op` ends in `terminator` whose operands (after
/// skipping `skip` leading ones) match `want`; `what` names the region and
/// `against` the types it is compared with, in messages.
fn check_terminator(
    body: &Body,
    op: OpId,
    i: usize,
    terminator: &str,
    skip: usize,
    want: &[Type],
    against: &str,
) -> Result<(), OpError> {
    let d = body.op(op);
    let Some(&r) = d.regions().get(i) else {
        return Ok(());
    };
    let inner = d.region_body(body);
    let what = region_name(d.def, i);
    let Some(entry) = inner.entry_block(r) else {
        return Err(format!("region '{what}' must not be empty").into());
    };
    // The structural verifier reports empty blocks and stray terminators.
    let Some(term) = inner.block_last_op(entry) else {
        return Ok(());
    };
    let td = inner.op(term);
    if td.name.as_str() != terminator {
        return Err(OpError {
            msg: format!(
                "region '{what}' must end with '{terminator}', but ends with '{}'",
                td.name
            ),
            loc: Some(td.loc),
        });
    }
    let got: Vec<Type> = inner.operand_types(term).into_iter().skip(skip).collect();
    let blame = |msg: String| OpError {
        msg,
        loc: Some(td.loc),
    };
    if got.len() != want.len() {
        return Err(blame(format!(
            "region '{what}' yields {} values {}, but {against} has {} {}",
            got.len(),
            type_list(&got),
            want.len(),
            type_list(want)
        )));
    }
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        if !types_compatible(*g, *w) {
            return Err(blame(format!(
                "region '{what}' yields '{g}' as value #{k}, but {against} has '{w}'"
            )));
        }
    }
    Ok(())
}

/// Check that region `i`'s entry block arguments have types `want`.
fn check_entry_args(
    body: &Body,
    op: OpId,
    i: usize,
    want: &[Type],
    against: &str,
) -> Result<(), OpError> {
    let d = body.op(op);
    let Some(&r) = d.regions().get(i) else {
        return Ok(());
    };
    let inner = d.region_body(body);
    let what = region_name(d.def, i);
    let got: Vec<Type> = inner
        .entry_block(r)
        .map(|b| {
            inner
                .block(b)
                .args
                .iter()
                .map(|&a| inner.value_type(a))
                .collect()
        })
        .unwrap_or_default();
    if got.len() != want.len() {
        return Err(format!(
            "region '{what}' has {} arguments {}, but {against} has {} {}",
            got.len(),
            type_list(&got),
            want.len(),
            type_list(want)
        )
        .into());
    }
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        if !types_compatible(*g, *w) {
            return Err(format!(
                "region '{what}' argument #{k} has type '{g}', but {against} has '{w}'"
            )
            .into());
        }
    }
    Ok(())
}

fn region_name(def: Option<&'static OpDef>, i: usize) -> String {
    let Some(d) = def else {
        return format!("#{i}");
    };
    let n = d.regions.len();
    if d.has_trait(Trait::VariadicRegions) && n > 0 && i + 1 >= n {
        return format!("{} #{}", d.regions[n - 1].name, i + 1 - n);
    }
    d.regions
        .get(i)
        .map_or(format!("#{i}"), |r| r.name.to_string())
}

// ---- graph.yield / graph.condition ------------------------------------------------

fn verify_yield(body: &Body, op: OpId) -> Result<(), OpError> {
    // Within an isolated op's body the parent is not visible (graph.fused):
    // its own verifier checks the terminator.
    let Some(p) = body.parent_op(op) else {
        return Ok(());
    };
    let pd = body.op(p);
    if !YIELD_PARENTS.contains(&pd.name.as_str()) {
        return Err(format!(
            "must be the terminator of a region of {}, not of '{}'",
            YIELD_PARENTS.join(", "),
            pd.name
        )
        .into());
    }
    Ok(())
}

def_op! {
    /// Yield values from a region of graph.if/while/case/fused
    ///
    /// `graph.yield %a, %b : T, T` ends a region of `graph.if`, `graph.case`, `graph.fused` and
    /// the `do` region of `graph.while`; its operands are the region's results (for
    /// `graph.while`: the next loop-carried values).
    pub Yield = "graph.yield" {
        operands { values: Variadic<Any> },
        traits [Pure, Terminator],
        format: "attr-dict (operands `:` type(operands))?",
        verify: verify_yield,
        es(none = "terminator of the regions of graph.if/while/case/fused"),
    }
}

fn verify_condition(body: &Body, op: OpId) -> Result<(), OpError> {
    check_single_operand(body, op, "cond")?;
    let Some(p) = body.parent_op(op) else {
        return Err("must be the terminator of the condition region of 'graph.while'".into());
    };
    let pd = body.op(p);
    let in_cond = pd.regions().first().is_some_and(|&r| {
        body.op(op)
            .parent_block()
            .and_then(|b| body.block_parent(b))
            == Some(r)
    });
    if pd.name.as_str() != "graph.while" || !in_cond {
        return Err(format!(
            "must be the terminator of the condition region of 'graph.while', not of a region of '{}'",
            pd.name
        )
        .into());
    }
    Ok(())
}

def_op! {
    /// End the condition region of graph.while
    ///
    /// `graph.condition %c, %a, %b : tensor<i1>, T, U` ends the condition region of
    /// `graph.while` (MLIR's `scf.condition`): when the single-element `i1` operand `%c` is
    /// true the remaining operands are passed to the `do` region, otherwise they become the
    /// results of the loop.
    pub Condition = "graph.condition" {
        operands { cond: BoolTensor, args: Variadic<Any> },
        traits [Pure, Terminator],
        format: "operands attr-dict `:` type(operands)",
        verify: verify_condition,
        es(none = "terminator of the condition region of graph.while"),
    }
}

// ---- graph.if -----------------------------------------------------------------------

fn verify_if(body: &Body, op: OpId) -> Result<(), OpError> {
    check_single_operand(body, op, "cond")?;
    let results = body.result_types(op);
    for i in 0..2 {
        check_terminator(
            body,
            op,
            i,
            "graph.yield",
            0,
            &results,
            "the op's result list",
        )?;
    }
    Ok(())
}

fn sem_if(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let c = single(x.first().ok_or("expects a condition")?, "cond")?;
    cx.run_region(if c != 0 { 0 } else { 1 }, vec![])
}

def_op! {
    /// If-then-else with regions
    ///
    /// ONNX If / MLIR `scf.if`:
    ///
    /// ```
    /// %r = graph.if %cond : (tensor<i1>) -> tensor<4xf32> {
    ///   graph.yield %a : tensor<4xf32>
    /// } else {
    ///   graph.yield %b : tensor<4xf32>
    /// }
    /// ```
    ///
    /// `cond` is a single-element `i1` tensor. Exactly one region runs; its `graph.yield`
    /// operands become the results, whose declared types both branches must match (a `?` dim
    /// accepts branches of different sizes). The regions may use values from the enclosing
    /// function.
    pub If = "graph.if" {
        operands { cond: BoolTensor },
        results { results: Variadic<Any> },
        regions {
            /// runs when the condition is true
            then_branch,
            /// runs when the condition is false
            else_branch,
        },
        traits [SingleBlock],
        format: "$cond attr-dict `:` functional-type(operands, results) $then_branch `else` $else_branch",
        verify: verify_if,
        semantics: sem_if,
        interfaces [
            CPU_ENGINES,
            KernelFamily::ControlFlow,
        ],
        es(none = "region op: its branches are nested blocks, not values an eager call can take"),
    }
}

// ---- graph.case -----------------------------------------------------------------------

fn verify_case(body: &Body, op: OpId) -> Result<(), OpError> {
    check_single_operand(body, op, "index")?;
    let results = body.result_types(op);
    for i in 0..body.op(op).regions().len() {
        check_terminator(
            body,
            op,
            i,
            "graph.yield",
            0,
            &results,
            "the op's result list",
        )?;
    }
    Ok(())
}

fn sem_case(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let i = single(x.first().ok_or("expects an index")?, "index")?;
    cx.run_region(case_branch(i, cx.num_regions())?, vec![])
}

/// The branch `graph.case` runs for index `i` of `n` branches: region `i`,
/// the last (the default) when `i` is out of range.
pub fn case_branch(i: i64, n: usize) -> Result<usize, String> {
    if n == 0 {
        return Err("has no branches".into());
    }
    Ok(usize::try_from(i).ok().filter(|&k| k < n).unwrap_or(n - 1))
}

def_op! {
    /// Run one of N regions selected by an index
    ///
    /// TensorFlow Case / MLIR `scf.index_switch`:
    ///
    /// ```
    /// %r = graph.case %i : (tensor<i32>) -> tensor<f32> {
    ///   graph.yield %a : tensor<f32>
    /// }, {
    ///   graph.yield %b : tensor<f32>
    /// }
    /// ```
    ///
    /// `index` is a single-element i32/i64 tensor; region `index` runs, and an index out of
    /// range runs the last region (the default branch, as in TensorFlow). Every region ends in
    /// `graph.yield` with the result types.
    pub Case = "graph.case" {
        operands { index: IndexTensor },
        results { results: Variadic<Any> },
        regions {
            /// one or more branches; the last is also the default
            branches,
        },
        traits [SingleBlock, VariadicRegions],
        format: "$index attr-dict `:` functional-type(operands, results) regions",
        verify: verify_case,
        semantics: sem_case,
        interfaces [
            CPU_ENGINES,
            KernelFamily::ControlFlow,
        ],
        es(none = "region op: its branches are nested blocks"),
    }
}

// ---- graph.while -----------------------------------------------------------------------

fn verify_while(body: &Body, op: OpId) -> Result<(), OpError> {
    let inits = body.operand_types(op);
    let results = body.result_types(op);
    check_entry_args(body, op, 0, &inits, "the loop's initial values")?;
    check_terminator(
        body,
        op,
        0,
        "graph.condition",
        1,
        &results,
        "the op's result list",
    )?;
    check_entry_args(body, op, 1, &results, "the op's result list")?;
    check_terminator(
        body,
        op,
        1,
        "graph.yield",
        0,
        &inits,
        "the loop's initial values",
    )?;
    Ok(())
}

fn sem_while(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    let mut carried: Vec<Tensor> = x.iter().map(|t| (*t).clone()).collect();
    loop {
        let mut out = cx.run_region(0, carried)?;
        if out.is_empty() {
            return Err("the condition region must end with 'graph.condition'".into());
        }
        let c = single(&out.remove(0), "cond")?;
        if c == 0 {
            return Ok(out);
        }
        carried = cx.run_region(1, out)?;
    }
}

def_op! {
    /// While loop with loop-carried values
    ///
    /// MLIR `scf.while` (TensorFlow While):
    ///
    /// ```
    /// %r:2 = graph.while %i0, %s0 : (tensor<i64>, tensor<f32>) -> (tensor<i64>, tensor<f32>) {
    /// ^bb0(%i: tensor<i64>, %s: tensor<f32>):
    ///   %c = graph.less %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    ///   graph.condition %c, %i, %s : tensor<i1>, tensor<i64>, tensor<f32>
    /// } do {
    /// ^bb0(%j: tensor<i64>, %t: tensor<f32>):
    ///   ...
    ///   graph.yield %j1, %t1 : tensor<i64>, tensor<f32>
    /// }
    /// ```
    ///
    /// The operands are the initial loop-carried values. The condition region receives the
    /// loop-carried values as its entry block arguments and ends in `graph.condition`: while
    /// its `i1` operand is true, the values it forwards enter the `do` region, whose
    /// `graph.yield` gives the next loop-carried values; when it is false the forwarded values
    /// are the results. Types: the condition region's arguments and the `do` region's yield
    /// match the operands; the forwarded values and the `do` region's arguments match the
    /// results (`?` dims allow shapes that change between iterations).
    pub While = "graph.while" {
        operands { inits: Variadic<Any> },
        results { results: Variadic<Any> },
        regions {
            /// computes the loop condition from the loop-carried values
            cond,
            /// computes the next loop-carried values
            body,
        },
        traits [SingleBlock],
        format: "operands attr-dict `:` functional-type(operands, results) $cond `do` $body",
        verify: verify_while,
        semantics: sem_while,
        interfaces [
            CPU_ENGINES,
            KernelFamily::ControlFlow,
        ],
        es(none = "region op: its condition and body are nested blocks"),
    }
}

// ---- graph.fused -----------------------------------------------------------------------

fn verify_fused(body: &Body, op: OpId) -> Result<(), OpError> {
    let ins = body.operand_types(op);
    let results = body.result_types(op);
    check_entry_args(body, op, 0, &ins, "the op's operand list")?;
    check_terminator(
        body,
        op,
        0,
        "graph.yield",
        0,
        &results,
        "the op's result list",
    )?;
    Ok(())
}

fn sem_fused(cx: &SemCtx, x: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    cx.run_region(0, x.iter().map(|t| (*t).clone()).collect())
}

def_op! {
    /// A kernel: a region of graph ops that runs as one task
    ///
    /// The unit operator fusion produces and the engine partitioner places:
    ///
    /// ```
    /// %r = graph.fused ins(%a, %b) {kind = "elementwise"} : (T, T) -> T {
    /// ^bb0(%x: T, %y: T):
    ///   %s = graph.add %x, %y : (T, T) -> T
    ///   %t = graph.relu %s : (T) -> T
    ///   graph.yield %t : T
    /// }
    /// ```
    ///
    /// The op is isolated from above: the operands arrive as the entry block's arguments (same
    /// count and types) and the body may use nothing else from outside. `graph.yield` gives the
    /// results. `kind` records the TVM-style fusion pattern (elementwise, broadcast, injective,
    /// reduction, out_elementwise_fusable); `engine` the engine chosen for the kernel (e.g.
    /// "AICore").
    pub Fused = "graph.fused" {
        operands { inputs: Variadic<Any> },
        results { results: Variadic<Any> },
        attrs {
            /// the fusion pattern of the kernel
            kind: Option<Enum(&[
                "elementwise",
                "broadcast",
                "injective",
                "reduction",
                "out_elementwise_fusable",
            ])>,
            /// the engine that runs the kernel
            engine: Option<Str>,
        },
        regions {
            /// the kernel body; entry block arguments are the operands
            body,
        },
        traits [IsolatedFromAbove, SingleBlock],
        format: "`ins` `(` operands `)` attr-dict `:` functional-type(operands, results) $body",
        verify: verify_fused,
        semantics: sem_fused,
        es(none = "made by the fusion pass from existing ops, not written by hand"),
    }
}

pub static OPS: &[&OpDef] = &[&IF, &WHILE, &CASE, &YIELD, &CONDITION, &FUSED];
