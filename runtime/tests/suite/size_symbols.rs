//! Size symbols (issue 15 item 3): a `data.nonzero` result size is known
//! only when the op has run. Memory is planned at the symbol's bound; the
//! executor binds the symbol to the count right after the producing launch
//! and runs the rest at the count. One compiled model runs at several
//! input values — counts 0, the bound and in between — equal to the
//! reference interpreter; a branch that does not depend on the count runs
//! beside it; each count builds one plan, a count seen before reuses it.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_ir::tensor::Tensor;
use ge_ir::DType;
use ge_runtime::HostTensor;

/// `x` with the elements at `on` positive, the others negative.
fn input(on: &[usize]) -> Tensor {
    let v: Vec<f64> = (0..12)
        .map(|i| {
            if on.contains(&i) {
                0.5 + i as f64
            } else {
                -1.0 - i as f64
            }
        })
        .collect();
    Tensor::from_f64(vec![3, 4], DType::F32, v)
}

#[test]
fn size_symbols_bind_after_the_op_and_match_the_interpreter() {
    let bytes = om_bytes("size_syms", NONZERO_MODEL, &CompileOptions::default());
    for threads in [1, 2] {
        let model = load(&bytes, threads);
        assert_eq!(
            model.size_symbols(),
            vec!["K <= 12: data.nonzero at loc(\"size_syms\":6:5)".to_string()]
        );
        let (_, src) = signature(NONZERO_MODEL, "main");
        let session = model.session();
        let all: Vec<usize> = (0..12).collect();
        let cases: &[&[usize]] = &[&[1, 5, 6, 11], &[], &all, &[3], &[1, 5, 6, 11]];
        for (c, on) in cases.iter().enumerate() {
            let x = input(on);
            let want = interpret(&src, "main", std::slice::from_ref(&x));
            let got: Vec<Tensor> = session
                .run(&[HostTensor::from_tensor(&x)])
                .unwrap_or_else(|e| panic!("case {c}: {e}"))
                .iter()
                .map(|t| t.to_tensor().unwrap())
                .collect();
            assert_eq!(got[0].shape, vec![2, on.len()], "case {c}");
            assert_eq!(got[1].shape, vec![on.len(), 2], "case {c}");
            assert_close(&got, &want, &format!("case {c} ({threads} threads)"));
        }
        // The bound (12, also the count of `all`), 4, 0 and 1: the repeated
        // count reuses its plan.
        assert_eq!(session.plans_built(), 4, "{threads} threads");
    }
}
