//! Outputs of random ops: no implementation draws another's numbers (ONNX's
//! expected values come from numpy's generator, ge's from ChaCha8:
//! dialects/src/graph/random.rs), so such an output is checked for what any
//! correct draw gives — element type and shape exactly, and every value in
//! the set the op's [`RandomValues`] interface names (Bernoulli: {0, 1}; a
//! uniform draw: [low, high); a normal one: no NaN; multinomial: the class
//! indices). A case whose outputs pass that way is counted as
//! `checked-random`, never as a pass.
//!
//! An output depends on a random op when one lies on its path from the
//! inputs. Its set is the random op's own when the op gives the output, or
//! reaches it through casts and identities; {0, 1} for a boolean or a cast
//! of one (ONNX's expanded Bernoulli: `Cast(Greater(RandomUniformLike(x),
//! x))`). Any other path leaves the set unknown, and the output fails.
//!
//! `graph.dropout` (ONNX Dropout with its training flag read at run time)
//! has no one set: each element of its result is 0 or the input's element
//! scaled by `1/(1 - ratio)`. Its outputs ([`Output::Dropout`]) are checked
//! against the run's own input, ratio and training flag (`main`'s arguments
//! or constants): when it drops nothing (training off, or ratio 0) they are
//! compared with ONNX's values as any deterministic output; else the result
//! must hold 0 or the scaled input in each element, and the mask must say
//! which (when the result is an output too).

use ge_dialects::data::shape::Identity;
use ge_dialects::graph::elementwise::Cast;
use ge_dialects::graph::func::Return;
use ge_dialects::graph::random::Dropout;
use ge_ir::body::{Body, OpId, ValueDef, ValueId};
use ge_ir::interfaces::{RandomValues, ValueDomain};
use ge_ir::tensor::Tensor;
use ge_ir::{DType, Module};

/// What the check knows of one output of `main`.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// No random op reaches it: compared with ONNX's values.
    Deterministic,
    /// Drawn: checked against this set.
    Random(ValueDomain),
    /// A random op reaches it along a path whose values ge cannot bound.
    Unbounded,
    /// A result of `graph.dropout`, checked against its operands' values.
    Dropout(DropoutOut),
}

/// Where an operand of a dropout comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Src {
    /// `main`'s argument at this position.
    Arg(usize),
    /// A constant's elements.
    Const(Vec<f64>),
}

/// One output given by a `graph.dropout`: its result (or its mask), and its
/// input, ratio and training flag.
#[derive(Clone, Debug, PartialEq)]
pub struct DropoutOut {
    pub op: OpId,
    pub mask: bool,
    pub operands: [Src; 3],
}

/// The values of a dropout's operands in one run.
pub struct DropoutRun {
    /// Each element as kept: the input scaled by `1/(1 - ratio)`.
    pub kept: Vec<f64>,
    /// Whether it drops anything (training on and a ratio other than 0).
    pub drops: bool,
}

/// `main`'s arguments by position, from the run's inputs by name.
pub fn arg_values(m: &Module, inputs: &[(String, Tensor)]) -> Vec<Option<Tensor>> {
    let Some(f) = m.lookup_symbol("main") else {
        return vec![];
    };
    let (names, _) = ge_dialects::graph::func::io_names_or_default(m.body().op(f));
    names
        .iter()
        .map(|n| inputs.iter().find(|(k, _)| k == n).map(|(_, t)| t.clone()))
        .collect()
}

/// The dropout's operand values in a run with `args`.
pub fn dropout_run(d: &DropoutOut, args: &[Option<Tensor>]) -> Result<DropoutRun, String> {
    let value = |s: &Src| match s {
        Src::Const(v) => Ok(v.clone()),
        Src::Arg(i) => args
            .get(*i)
            .and_then(|t| t.as_ref())
            .map(Tensor::to_f64)
            .ok_or_else(|| format!("the dropout's operand, argument #{i}, was not given")),
    };
    let [x, ratio, training] = [0, 1, 2].map(|k| value(&d.operands[k]));
    let one = |v: Vec<f64>, what: &str| ge_dialects::graph::random::dropout_scalar(&v, what);
    let ratio = one(ratio?, "ratio")?;
    let drops = one(training?, "training")? != 0.0 && ratio != 0.0;
    let scale = if drops { 1.0 / (1.0 - ratio) } else { 1.0 };
    Ok(DropoutRun {
        kept: x?.iter().map(|v| v * scale).collect(),
        drops,
    })
}

/// Check a dropout's result (`y`) or mask against its run: element type and
/// shape as ONNX's, each result element 0 or the kept value (within the
/// case's tolerance), each mask element true exactly where `y` (our result,
/// when it is an output too) kept a value that is not 0. `None` when it fits.
pub fn check_dropout(
    got: &Tensor,
    want: &Tensor,
    run: &DropoutRun,
    y: Option<&Tensor>,
    (rtol, atol): (f64, f64),
) -> Option<String> {
    if got.dtype != want.dtype
        || got.shape != want.shape
        || ge_ir::tensor::numel(&got.shape) != run.kept.len()
    {
        return Some(format!(
            "a dropout output of {} {:?} but ONNX gives {} {:?}",
            got.dtype, got.shape, want.dtype, want.shape
        ));
    }
    let close = |a: f64, b: f64| (a - b).abs() <= atol + rtol * b.abs();
    let v = got.to_f64();
    if got.dtype != DType::I1 {
        let (i, bad) = v
            .iter()
            .zip(&run.kept)
            .enumerate()
            .find(|(_, (&g, &k))| g != 0.0 && !close(g, k))?;
        return Some(format!(
            "element {i} of a dropout result is {}, neither 0 nor the kept {}",
            bad.0, bad.1
        ));
    }
    let y = y?.to_f64();
    let i = (0..v.len()).find(|&i| run.kept[i] != 0.0 && (v[i] != 0.0) != (y[i] != 0.0))?;
    Some(format!(
        "element {i} of a dropout mask is {} but the result holds {}",
        v[i], y[i]
    ))
}

/// Each output of `main`, in order (empty when the module has no `main`).
pub fn outputs(m: &Module) -> Vec<Output> {
    let Some(f) = m.lookup_symbol("main") else {
        return vec![];
    };
    let fd = m.body().op(f);
    let Some(body) = fd.inner.as_deref() else {
        return vec![];
    };
    let Some(block) = fd.regions().first().and_then(|&r| body.entry_block(r)) else {
        return vec![];
    };
    let Some(ret) = body
        .block_ops(block)
        .last()
        .filter(|&o| Return::is(body.op(o)))
    else {
        return vec![];
    };
    body.op(ret)
        .operands()
        .iter()
        .map(|&v| classify(body, v))
        .collect()
}

fn random_op(body: &Body, op: OpId) -> Option<&'static RandomValues> {
    body.op(op).def?.interface::<RandomValues>()
}

/// Whether a random op lies on a path to `v` (inside its function body).
fn reaches(body: &Body, v: ValueId) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        let Some(op) = body.defining_op(v) else {
            continue;
        };
        if !seen.insert(op) {
            continue;
        }
        if random_op(body, op).is_some() {
            return true;
        }
        stack.extend(body.op(op).operands().iter().copied());
    }
    false
}

/// The output of a `graph.dropout` whose operands are `main`'s arguments or
/// constants (`Unbounded` otherwise).
fn dropout_output(body: &Body, op: OpId, v: ValueId) -> Output {
    let d = body.op(op);
    let src = |&o: &ValueId| match body.value(o).def {
        ValueDef::BlockArg { index, .. } => Some(Src::Arg(index as usize)),
        ValueDef::Result { .. } => {
            let a = ge_ir::builder::constant_value(body, o)?;
            let t = Tensor::from_dense(a.as_dense()?).ok()?;
            Some(Src::Const(t.to_f64()))
        }
    };
    let ops: Option<Vec<Src>> = d.operands().iter().map(src).collect();
    match ops.and_then(|o| <[Src; 3]>::try_from(o).ok()) {
        Some(operands) => Output::Dropout(DropoutOut {
            op,
            mask: d.results().get(1) == Some(&v),
            operands,
        }),
        None => Output::Unbounded,
    }
}

fn classify(body: &Body, v: ValueId) -> Output {
    if let Some(op) = body.defining_op(v).filter(|&o| Dropout::is(body.op(o))) {
        return dropout_output(body, op, v);
    }
    if !reaches(body, v) {
        return Output::Deterministic;
    }
    match domain(body, v) {
        Some(d) => Output::Random(d),
        None => Output::Unbounded,
    }
}

/// The set `v`'s values lie in, where ge can say.
fn domain(body: &Body, v: ValueId) -> Option<ValueDomain> {
    if body.value_type(v).dtype() == Some(DType::I1) {
        return Some(ValueDomain::OneOf(vec![0.0, 1.0]));
    }
    let op = body.defining_op(v)?;
    if let Some(r) = random_op(body, op) {
        return (r.domain)(body, op);
    }
    let d = body.op(op);
    if Cast::is(d) || Identity::is(d) {
        return match (domain(body, *d.operands().first()?)?, d.operands().len()) {
            (dom @ (ValueDomain::OneOf(_) | ValueDomain::NotNan), 1) => Some(dom),
            _ => None,
        };
    }
    None
}

/// Check an output drawn from `dom` against ONNX's: element type and shape
/// exactly, every value in the set. `None` when it fits.
pub fn check(got: &Tensor, want: &Tensor, dom: &ValueDomain) -> Option<String> {
    if got.dtype != want.dtype || got.shape != want.shape {
        return Some(format!(
            "a random output of {} {:?} but ONNX gives {} {:?}",
            got.dtype, got.shape, want.dtype, want.shape
        ));
    }
    let bad = got.to_f64().into_iter().find(|&x| !dom.contains(x))?;
    Some(format!("a random output holds {bad}, outside {dom}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(text: &str) -> Module {
        let ctx = ge_compile::context();
        ge_ir::parser::parse_module(&ctx, "t.air", text, Default::default()).unwrap()
    }

    #[test]
    fn random_outputs_are_found_with_their_sets() {
        let m = module(
            r#"graph.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf64>, tensor<4xf32>, tensor<4xf32>) {
  %u = graph.random_uniform %x {low = 0.0, high = 1.0} : (tensor<4xf32>) -> tensor<4xf32>
  %g = graph.greater %u, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %c = graph.cast %g {to = f64} : (tensor<4xi1>) -> tensor<4xf64>
  %s = graph.add %u, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  graph.return %u, %c, %s, %x : tensor<4xf32>, tensor<4xf64>, tensor<4xf32>, tensor<4xf32>
}"#,
        );
        assert_eq!(
            outputs(&m),
            [
                Output::Random(ValueDomain::HalfOpen(0.0, 1.0)),
                Output::Random(ValueDomain::OneOf(vec![0.0, 1.0])),
                Output::Unbounded,
                Output::Deterministic,
            ]
        );
        let want = Tensor::from_f64(vec![2], DType::F64, vec![0.0, 1.0]);
        let ok = Tensor::from_f64(vec![2], DType::F64, vec![1.0, 1.0]);
        let bits = ValueDomain::OneOf(vec![0.0, 1.0]);
        assert_eq!(check(&ok, &want, &bits), None);
        let bad = Tensor::from_f64(vec![2], DType::F64, vec![1.0, 0.5]);
        assert!(check(&bad, &want, &bits).is_some_and(|m| m.contains("0.5")));
        let f32s = Tensor::from_f64(vec![2], DType::F32, vec![1.0, 0.0]);
        assert!(check(&f32s, &want, &bits).is_some_and(|m| m.contains("f32")));
    }

    /// A dropout's outputs: found with their operands; a result element must
    /// be 0 or the kept value, a mask must agree with the result.
    #[test]
    fn dropout_outputs_are_checked_against_the_input() {
        let m = module(
            r#"graph.func @main(%x: tensor<3xf32>, %r: tensor<f32>, %t: tensor<i1>) -> (tensor<3xf32>, tensor<3xi1>) {
  %y, %k = graph.dropout %x, %r, %t : (tensor<3xf32>, tensor<f32>, tensor<i1>) -> (tensor<3xf32>, tensor<3xi1>)
  graph.return %y, %k : tensor<3xf32>, tensor<3xi1>
}"#,
        );
        let outs = outputs(&m);
        let Output::Dropout(d) = &outs[0] else {
            panic!("{outs:?}")
        };
        assert!(!d.mask && matches!(&outs[1], Output::Dropout(k) if k.mask && k.op == d.op));
        assert_eq!(d.operands, [Src::Arg(0), Src::Arg(1), Src::Arg(2)]);
        let t = |dt, v: Vec<f64>| Tensor::from_f64(vec![v.len()], dt, v);
        let scalar = |dt, v| Tensor::from_f64(vec![], dt, vec![v]);
        let args = [
            Some(t(DType::F32, vec![1.0, 2.0, 3.0])),
            Some(scalar(DType::F32, 0.5)),
            Some(scalar(DType::I1, 1.0)),
        ];
        let run = dropout_run(d, &args).unwrap();
        assert!(run.drops && run.kept == [2.0, 4.0, 6.0]);
        let want = t(DType::F32, vec![0.0, 4.0, 0.0]);
        let y = t(DType::F32, vec![2.0, 0.0, 6.0]);
        let tol = (1e-3, 1e-7);
        assert_eq!(check_dropout(&y, &want, &run, None, tol), None);
        let bad = t(DType::F32, vec![1.0, 0.0, 6.0]);
        assert!(check_dropout(&bad, &want, &run, None, tol).is_some_and(|m| m.contains("neither")));
        let mask_want = t(DType::I1, vec![0.0, 1.0, 0.0]);
        let mask = t(DType::I1, vec![1.0, 0.0, 1.0]);
        assert_eq!(check_dropout(&mask, &mask_want, &run, Some(&y), tol), None);
        let wrong = t(DType::I1, vec![1.0, 1.0, 1.0]);
        assert!(check_dropout(&wrong, &mask_want, &run, Some(&y), tol).is_some());
        let off = [
            args[0].clone(),
            args[1].clone(),
            Some(scalar(DType::I1, 0.0)),
        ];
        assert!(!dropout_run(d, &off).unwrap().drops);
        assert!(dropout_run(d, &args[..1]).is_err());
    }
}
