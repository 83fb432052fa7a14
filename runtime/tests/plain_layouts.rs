//! Plain layouts between kernels (runtime/src/layouts.rs): how many
//! activation buffers the loader keeps in NCHW / ND, exactly, and outputs
//! equal to the interpreter's with and without it — the crate-level twin of
//! lit-tests/runtime/plain-layouts{,-nz}.test (whose counts are explained
//! there), added because the crate's own tests only asked for "more than
//! none" (zoo.rs), so mutants of the candidate and reader conditions
//! survived (docs/testing.md, "Measuring test strength").

mod common;
use common::*;
use ge_compile::{compile_text, CompileOptions};
use ge_om::model::{ArenaRole, Buffer, Task};
use ge_runtime::{LoadOptions, Model};

fn check(source: &str, want_plain: usize, seed: u64) {
    let text = read(source);
    let om = om_bytes("chain", &text, &CompileOptions::default());
    check_bytes(source, &text, &om, want_plain, seed);
}

/// `om` (compiled from `text`) keeps `want_plain` buffers plain, and its
/// outputs with and without plain layouts equal the interpreter's.
fn check_bytes(source: &str, text: &str, om: &[u8], want_plain: usize, seed: u64) {
    let (types, m) = signature(text, "main");
    let ins = random_inputs(&types, &[], seed);
    let want = interpret(&m, "main", &ins);
    for plain in [true, false] {
        let opts = LoadOptions {
            threads: 1,
            plain_layouts: plain,
            ..Default::default()
        };
        let model = Model::from_bytes(om, &opts).unwrap_or_else(|e| panic!("load: {e}"));
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

/// A conversion whose blocks are returned twice is no candidate: only one
/// of its buffers would be made plain. Here the conversion of %w2 into NZ
/// also writes a second, unread buffer: five stay plain, not six (six with
/// `blocked_result`'s guard weakened from `||` to `&&`, tried once).
#[test]
fn blocks_returned_twice_stay_blocked() {
    let text = read("lit-tests/runtime/Inputs/matmul_chain.air");
    let mut om = compile_text("chain", &text, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    let nz = "tensor<4x4x16x8xf32, #ge.format<FRACTAL_NZ, origin = ND, origin_shape = [64, 32]>>";
    let f = om
        .kernels
        .find("@main_t2_transdata(")
        .expect("the conversion of %w2");
    let end = f + om.kernels[f..].find("} loc(").expect("its end");
    let func = om.kernels[f..end]
        .replacen(&format!("-> {nz} {{"), &format!("-> ({nz}, {nz}) {{"), 1)
        .replacen(
            &format!("graph.return %0 : {nz}"),
            &format!("graph.return %0, %0 : {nz}, {nz}"),
            1,
        );
    assert!(func.contains("graph.return %0, %0"), "{func}");
    om.kernels.replace_range(f..end, &func);
    let ws = om
        .def
        .arenas
        .iter()
        .position(|a| a.role == ArenaRole::Workspace)
        .expect("a workspace");
    let at = om.def.arenas[ws].size;
    om.def.arenas[ws].size += 8192;
    let launch = om
        .program
        .tasks
        .iter_mut()
        .find(|t| matches!(t, Task::Launch { outs, .. } if outs[0].ty == nz))
        .expect("the launch");
    let Task::Launch { outs, .. } = launch else {
        unreachable!()
    };
    let second = Buffer {
        offset: at,
        id: 1000,
        ..outs[0].clone()
    };
    outs.push(second);
    let bytes = ge_om::format::to_bytes_unchecked(&om).expect("bytes");
    check_bytes("%w2 returned twice", &text, &bytes, 5, 2);
}
