//! Where a launch writes its results (runtime/src/exec.rs `plan_launch`):
//! straight into the result's buffer, unless that could clobber an input
//! the kernel still reads — then into scratch, copied afterwards. Too many
//! copies leave the outputs right and cost only time, so the plans are
//! inspected (`Session::launch_copies`); too few give wrong outputs, so the
//! runs are compared with the interpreter on plans edited to put a result
//! over an input. Added for mutants cargo-mutants found surviving
//! (docs/testing.md, "Measuring test strength"): the overlap test and the
//! in-place condition could be weakened or strengthened unnoticed. Each
//! assertion was seen to fail with such a mutant applied.

use crate::common;
use common::*;
use ge_compile::{compile_text, CompileOptions};
use ge_ir::tensor::Tensor;
use ge_om::model::{Buffer, OmModel, Operand, Task};
use ge_runtime::{HostTensor, LoadOptions, Model};

/// Four launches, one kernel each (no fusion, no formats, one stream):
/// exp (input arena -> workspace 0), sigmoid (workspace 0 in place),
/// matmul (workspace 0 -> workspace 4096, adjacent), neg (-> output arena).
const CHAIN: &str = "module {
  graph.func @main(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %w = data.constant dense<0.125> : tensor<32x32xf32>
    %e = graph.exp %x : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %s = graph.sigmoid %e : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %m = graph.matmul %s, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %y = graph.neg %m : (tensor<32x32xf32>) -> tensor<32x32xf32>
    graph.return %y : tensor<32x32xf32>
  }
}";

const BYTES: u64 = 32 * 32 * 4;

fn compile() -> OmModel {
    let opts = CompileOptions {
        fuse: false,
        formats: false,
        single_stream: true,
        ..Default::default()
    };
    compile_text("chain", CHAIN, &opts).unwrap_or_else(|e| panic!("compile: {e}"))
}

/// (arena, offset) of each launch's one buffer input and its one output.
fn launches(om: &OmModel) -> Vec<((u32, u64), (u32, u64))> {
    om.program
        .tasks
        .iter()
        .filter_map(|t| match t {
            Task::Launch { ins, outs, .. } => {
                let i = ins.iter().find_map(|o| match o {
                    Operand::Buffer(b) => Some((b.arena, b.offset)),
                    Operand::Weight(_) => None,
                })?;
                Some((i, (outs[0].arena, outs[0].offset)))
            }
            _ => None,
        })
        .collect()
}

/// The buffer input and the output of launch `n` (in program order).
fn buffers_of(om: &mut OmModel, n: usize) -> (&mut Buffer, &mut Buffer) {
    let t = om
        .program
        .tasks
        .iter_mut()
        .filter(|t| matches!(t, Task::Launch { .. }))
        .nth(n)
        .expect("launch");
    let Task::Launch { ins, outs, .. } = t else {
        unreachable!()
    };
    let i = ins
        .iter_mut()
        .find_map(|o| match o {
            Operand::Buffer(b) => Some(b),
            Operand::Weight(_) => None,
        })
        .expect("a buffer input");
    (i, &mut outs[0])
}

fn load_om(om: &OmModel) -> Model {
    let bytes = ge_om::format::to_bytes_unchecked(om).expect("bytes");
    let model = Model::from_bytes(
        &bytes,
        &LoadOptions {
            threads: 1,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("load: {e}"));
    assert_native(&model, &[]);
    model
}

/// Per launch (program order): results copied after the kernel. The
/// outputs equal the interpreter's on the source.
fn copies_and_check(om: &OmModel, what: &str) -> Vec<usize> {
    let (types, m) = signature(CHAIN, "main");
    let inputs: Vec<Tensor> = random_inputs(&types, &[], 7);
    let want = interpret(&m, "main", &inputs);
    let model = load_om(om);
    assert_close(&run(&model, &inputs), &want, what);
    let host: Vec<HostTensor> = inputs.iter().map(HostTensor::from_tensor).collect();
    let per_task = model
        .session()
        .launch_copies(&host)
        .unwrap_or_else(|e| panic!("plan: {e}"));
    om.program
        .tasks
        .iter()
        .zip(per_task)
        .filter(|(t, _)| matches!(t, Task::Launch { .. }))
        .map(|(_, c)| c.expect("a launch has a plan"))
        .collect()
}

#[test]
fn results_that_clobber_nothing_are_written_in_place() {
    let om = compile();
    // What the cases below rely on (if the compiler plans differently,
    // this is where the test must be revisited).
    let ws = 2;
    assert_eq!(
        launches(&om),
        vec![
            ((0, 0), (ws, 0)),      // another arena at the same offset
            ((ws, 0), (ws, 0)),     // elementwise, exactly in place
            ((ws, 0), (ws, BYTES)), // adjacent in one arena
            ((ws, BYTES), (1, 0)),  // into the output arena
        ],
        "the compiled plan"
    );
    assert_eq!(copies_and_check(&om, "as compiled"), vec![0, 0, 0, 0]);
}

#[test]
fn a_matmul_over_its_own_input_is_copied_out() {
    // The matmul's result onto the buffer it reads (the sigmoid's result,
    // which dies there): written directly, the product would overwrite rows
    // of its left operand it still reads.
    let mut om = compile();
    let (i, o) = buffers_of(&mut om, 2);
    o.offset = i.offset;
    let (i, _) = buffers_of(&mut om, 3);
    i.offset = 0;
    assert_eq!(copies_and_check(&om, "matmul in place"), vec![0, 0, 1, 0]);
}

#[test]
fn an_elementwise_result_shifted_over_its_input_is_copied_out() {
    // The sigmoid writes 64 bytes above the exp's result it reads: element
    // i lands on input element i + 16, read later. Only an exact overlap
    // is safe for an elementwise step.
    let mut om = compile();
    let ws = 2usize;
    om.def.arenas[ws].size = 4 * BYTES;
    let (_, o) = buffers_of(&mut om, 1);
    o.offset = 64;
    let (i, o) = buffers_of(&mut om, 2);
    i.offset = 64;
    o.offset = 2 * BYTES;
    let (i, _) = buffers_of(&mut om, 3);
    i.offset = 2 * BYTES;
    assert_eq!(copies_and_check(&om, "sigmoid shifted"), vec![0, 1, 0, 0]);
}

/// A broadcast add whose result has B rows: zero bytes at B = 0.
const BROADCAST: &str = "module attributes {ge.symbol_bounds = {B = 4 : i64}} {
  graph.func @main(%x: tensor<Bx8xf32>, %b: tensor<8xf32>) -> tensor<Bx8xf32> {
    %z = graph.neg %b : (tensor<8xf32>) -> tensor<8xf32>
    %y = graph.add %x, %z : (tensor<Bx8xf32>, tensor<8xf32>) -> tensor<Bx8xf32>
    %r = graph.relu %y : (tensor<Bx8xf32>) -> tensor<Bx8xf32>
    graph.return %r : tensor<Bx8xf32>
  }
}";

/// Per launch, results copied at each `B`; outputs equal the interpreter's.
fn broadcast_copies(om: &OmModel, bs: &[i64]) -> Vec<Vec<usize>> {
    let (types, m) = signature(BROADCAST, "main");
    let model = load_om(om);
    bs.iter()
        .map(|&b| {
            let inputs = random_inputs(&types, &[("B", b)], 11);
            let want = interpret(&m, "main", &inputs);
            assert_close(&run(&model, &inputs), &want, &format!("B = {b}"));
            let host: Vec<HostTensor> = inputs.iter().map(HostTensor::from_tensor).collect();
            let per_task = model
                .session()
                .launch_copies(&host)
                .unwrap_or_else(|e| panic!("plan: {e}"));
            per_task.into_iter().flatten().collect()
        })
        .collect()
}

#[test]
fn a_result_of_zero_bytes_overlaps_nothing() {
    let opts = CompileOptions {
        fuse: false,
        formats: false,
        single_stream: true,
        ..Default::default()
    };
    let mut om = compile_text("bc", BROADCAST, &opts).unwrap_or_else(|e| panic!("compile: {e}"));
    // x - b (one launch: the negation is folded into a subtraction), then relu.
    assert_eq!(launches(&om).len(), 2, "the compiled plan");
    // The difference 4 bytes into the arena of %b (8 floats, read by the
    // same step): at B = 2 its 64 bytes overlap %b and are copied out; at
    // B = 0 it is empty and written in place.
    let t = om
        .program
        .tasks
        .iter_mut()
        .find(|t| matches!(t, Task::Launch { .. }))
        .expect("launch");
    let Task::Launch { ins, outs, .. } = t else {
        unreachable!()
    };
    let Operand::Buffer(b) = &ins[1] else {
        panic!("%b is a buffer")
    };
    let arena = b.arena;
    outs[0].arena = arena;
    outs[0].offset = 4;
    om.def.arenas[arena as usize].size = 256;
    let (i, _) = buffers_of(&mut om, 1);
    i.arena = arena;
    i.offset = 4;
    assert_eq!(broadcast_copies(&om, &[2, 0]), vec![vec![1, 0], vec![0, 0]]);
}
