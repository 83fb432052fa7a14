//! Plain layouts between kernels (runtime/src/layouts.rs): how many
//! activation buffers the loader keeps in NCHW / ND, exactly, and outputs
//! equal to the interpreter's with and without it — the crate-level twin of
//! lit-tests/runtime/plain-layouts{,-nz}.test (whose counts are explained
//! there), added because the crate's own tests only asked for "more than
//! none" (zoo.rs), so mutants of the candidate and reader conditions
//! survived (docs/testing.md, "Measuring test strength").

mod common;
use common::*;
use ge_compile::CompileOptions;
use ge_runtime::{LoadOptions, Model};

fn check(source: &str, want_plain: usize, seed: u64) {
    let text = read(source);
    let om = om_bytes("chain", &text, &CompileOptions::default());
    let (types, m) = signature(&text, "main");
    let ins = random_inputs(&types, &[], seed);
    let want = interpret(&m, "main", &ins);
    for plain in [true, false] {
        let opts = LoadOptions {
            threads: 1,
            plain_layouts: plain,
            ..Default::default()
        };
        let model = Model::from_bytes(&om, &opts).unwrap_or_else(|e| panic!("load: {e}"));
        assert_native(&model, &[]);
        assert_eq!(
            model.plain_buffers(),
            if plain { want_plain } else { 0 },
            "{source}: buffers kept plain (plain_layouts = {plain})"
        );
        assert_close(
            &run(&model, &ins),
            &want,
            &format!("{source} (plain_layouts = {plain})"),
        );
    }
}

/// %x's two conversions into blocks, the depthwise convolution's input,
/// its result (also a model output, converted by its own kernel) and the
/// residual sum: five. The convolutions' weights are constants (folded).
#[test]
fn convolutions_keep_five_activations_nchw() {
    check("lit-tests/runtime/Inputs/conv_chain.air", 5, 4);
}

/// %x's two conversions into NZ, those of the weights (arguments here),
/// the first product's result and the add's result: six.
#[test]
fn matrix_products_keep_six_activations_nd() {
    check("lit-tests/runtime/Inputs/matmul_chain.air", 6, 2);
}
