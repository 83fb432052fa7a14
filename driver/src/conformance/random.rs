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

use ge_dialects::data::shape::Identity;
use ge_dialects::graph::elementwise::Cast;
use ge_dialects::graph::func::Return;
use ge_ir::body::{Body, OpId, ValueId};
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

fn classify(body: &Body, v: ValueId) -> Output {
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
}
