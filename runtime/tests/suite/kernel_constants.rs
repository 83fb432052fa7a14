//! Constants inside a kernel function (the loader's check that each holds
//! its type's bytes, runtime/src/proof.rs `check_consts`): added for
//! mutants cargo-mutants found surviving in the crate's tests
//! (docs/testing.md, "Runtime, third pass"): no test loaded a kernel with a
//! constant in it, so the error's kernel name and location could be dropped
//! (`proof.rs:179`/`:180`, `delete field kernel/loc`) and a size check that
//! refused every constant (`!= → ==`) went unseen.
//!
//! The compiler passes constants as weights, so each test edits a compiled
//! model's kernels text to add one. A constant whose declared type disagrees
//! with its value's is refused by the verifier first (`tensor<5xf32>` for a
//! 4-element value: "kernels partition: ... declared ... inferred"); one whose
//! type only cannot be sized (`?`, unranked) reaches `check_consts`.

use crate::common;
use common::*;
use ge_runtime::{LoadOptions, Model};

const SRC: &str = "graph.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = data.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %y = graph.add %x, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  graph.return %y : tensor<4x8xf32>
}";

/// The model of `SRC` with `decl` added to its kernel (before its add), and
/// the kernel's name.
fn with_constant(decl: &str) -> (Vec<u8>, String) {
    let mut om = ge_compile::compile_text("k", SRC, &Default::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    assert_eq!(om.program.kernels.len(), 1, "one kernel");
    let name = om.program.kernels[0].name.clone();
    let at = om
        .kernels
        .find("  %0 = graph.add")
        .expect("the kernel's add");
    om.kernels.insert_str(at, decl);
    (ge_om::format::to_bytes_unchecked(&om).expect("bytes"), name)
}

fn load_err(bytes: &[u8]) -> String {
    match Model::from_bytes(bytes, &LoadOptions::default()) {
        Ok(_) => panic!("the model loads"),
        Err(e) => e.to_string(),
    }
}

/// A constant of its type's size loads, and the kernel still computes what
/// the interpreter does (refused with the size check inverted, tried once).
#[test]
fn a_kernel_constant_of_its_types_size_loads() {
    for decl in [
        "  %k = data.constant dense<2.0> : tensor<4xf32>\n",
        "  %k = data.constant dense<[1, 0, 1]> : tensor<3xi1>\n",
        "  %k = data.constant dense<3> : tensor<2x3xi4>\n",
    ] {
        let (bytes, _) = with_constant(decl);
        let model = load(&bytes, 1);
        let (types, m) = signature(SRC, "main");
        let ins = random_inputs(&types, &[], 7);
        assert_close(&run(&model, &ins), &interpret(&m, "main", &ins), decl);
    }
}

/// A kernel constant that cannot be sized is refused at load, naming the
/// kernel and the op's source location (without them, tried once: the
/// message loses `kernel @...` / `k:3:3`).
#[test]
fn an_unsizable_kernel_constant_names_its_kernel() {
    for (ty, why) in [
        ("tensor<?xf32>", "has a dynamic dim '?'"),
        ("tensor<*xf32>", "is unranked"),
    ] {
        let decl = format!(
            "  %k = \"data.constant\"() {{value = dense<2.0> : tensor<4xf32>}} : () -> {ty}\n"
        );
        let (bytes, kernel) = with_constant(&decl);
        let e = load_err(&bytes);
        let want = format!("k:3:3: kernel @{kernel}: a constant: '{ty}' {why}");
        assert!(e.starts_with(&want), "{e}\nwant: {want}");
    }
}

/// A declared type whose size disagrees with the value's never reaches the
/// size check: the verifier refuses it first (so the check's mismatch
/// branch is defence in depth), at the op's place in the kernels text (it
/// has no source location of its own).
#[test]
fn a_constant_declared_with_another_size_is_refused_by_the_verifier() {
    let (bytes, _) = with_constant(
        "  %k = \"data.constant\"() {value = dense<2.0> : tensor<4xf32>} : () -> tensor<5xf32>\n",
    );
    let e = load_err(&bytes);
    let want = "<kernels>:3:3: kernels partition: 'data.constant' result #0 is declared 'tensor<5xf32>' but inferred 'tensor<4xf32>'";
    assert!(e.starts_with(want), "{e}\nwant: {want}");
}
