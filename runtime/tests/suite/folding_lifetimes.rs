//! How long a value computed at load time stays known (runtime/src/model.rs
//! `fold`): until a later task writes over its bytes. A write of zero bytes
//! writes over nothing, even at an offset inside the value. Added for a
//! mutant cargo-mutants found surviving in the crate's tests
//! (docs/testing.md, "Runtime, third pass": `overlaps`' `a.bytes > 0` →
//! `>= 0`): the compiler places zero-byte values after live ones, so no
//! compiled model had one inside a folded value.

use ge_compile::{compile_text, CompileOptions};
use ge_om::model::{Operand, Task, WeightDef};
use ge_runtime::{HostTensor, LoadOptions, Model, RunOptions};

const SRC: &str = "graph.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %e: tensor<0xf32>) -> (tensor<4x8xf32>, tensor<0xf32>) {
  %c = data.constant dense<VALUES> : tensor<4x8xf32>
  %a = graph.add %y, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = graph.neg %e : (tensor<0xf32>) -> tensor<0xf32>
  %m = graph.abs %n : (tensor<0xf32>) -> tensor<0xf32>
  %z = graph.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  graph.return %z, %m : tensor<4x8xf32>, tensor<0xf32>
}";

fn c(i: usize) -> f32 {
    (i % 7) as f32 + 1.25
}

/// The model edited so that the add reads %c twice (`%a = %c + %c`, known
/// at load time: the add is folded away and the mul takes %a as a folded
/// argument), with the zero-byte %n (written by the neg, read by the abs,
/// between the add and the mul) moved from the end of %a into its middle.
/// The mul still sees %a: z = x * 2c. (With `a.bytes >= 0`, tried once, the
/// neg's write ended %a's life, the add was dropped as folded, and the mul
/// read the never-written workspace: z = 0.)
#[test]
fn a_zero_byte_write_inside_a_folded_value_keeps_it() {
    check(false, &[1, 2, 3]);
}

/// The same with the neg's operand a zero-byte weight: %n is then a folded
/// zero-byte value inside %a, and the neg never runs either — the mul's read
/// of all of %a reads none of %n's (zero) bytes. (With `overlaps`' `bytes >
/// 0` → `>= 0` for the folded value's size, tried once, that read counted as
/// a read of %n and kept the neg running: same outputs, one more launch.)
#[test]
fn a_read_around_a_folded_zero_byte_value_does_not_keep_its_producer() {
    check(true, &[2, 3]);
}

/// Run the edited model (the neg reading a zero-byte weight when
/// `neg_weight`); `runs` are the tasks it must run.
fn check(neg_weight: bool, runs: &[usize]) {
    let rows: Vec<String> = (0..4)
        .map(|r| {
            let v: Vec<String> = (0..8).map(|i| format!("{}", c(r * 8 + i))).collect();
            format!("[{}]", v.join(", "))
        })
        .collect();
    let text = SRC.replace("VALUES", &format!("[{}]", rows.join(", ")));
    let opts = CompileOptions {
        fuse: false,
        single_stream: true,
        formats: false,
        ..Default::default()
    };
    let mut om = compile_text("f", &text, &opts).unwrap_or_else(|e| panic!("{e}"));
    let kernel = |name: &str| {
        om.program
            .kernels
            .iter()
            .position(|k| k.name.ends_with(name))
            .unwrap_or_else(|| panic!("the {name} kernel")) as u32
    };
    let (add, neg, abs, mul) = (
        kernel("_add"),
        kernel("_neg"),
        kernel("_abs"),
        kernel("_mul"),
    );
    let launches: Vec<u32> = om
        .program
        .tasks
        .iter()
        .filter_map(|t| match t {
            Task::Launch { kernel, .. } => Some(*kernel),
            _ => None,
        })
        .collect();
    assert_eq!(launches, [add, neg, abs, mul], "program order");
    let mut a = None;
    for t in &mut om.program.tasks {
        let Task::Launch {
            kernel, ins, outs, ..
        } = t
        else {
            continue;
        };
        if *kernel == add {
            assert!(matches!(ins[1], Operand::Weight(_)), "%c is a weight");
            ins[0] = ins[1].clone();
            a = Some(outs[0].clone());
        }
    }
    let a = a.expect("the add's result");
    let zero_weight = om.program.weights.len() as u32;
    om.program.weights.push(WeightDef {
        offset: 0,
        bytes: 0,
        ty: "tensor<0xf32>".into(),
    });
    assert_eq!(a.bytes, 128);
    for t in &mut om.program.tasks {
        let Task::Launch {
            kernel, ins, outs, ..
        } = t
        else {
            continue;
        };
        let n = if *kernel == neg {
            if neg_weight {
                ins[0] = Operand::Weight(zero_weight);
            }
            &mut outs[0]
        } else if *kernel == abs {
            match &mut ins[0] {
                Operand::Buffer(b) => b,
                Operand::Weight(_) => panic!("%n is a buffer"),
            }
        } else {
            continue;
        };
        assert_eq!(
            (n.bytes, n.arena),
            (0, a.arena),
            "%n: zero bytes in %a's arena"
        );
        n.offset = a.offset + 64;
    }
    let bytes = ge_om::format::to_bytes_unchecked(&om).expect("bytes");
    let model =
        Model::from_bytes(&bytes, &LoadOptions::default()).unwrap_or_else(|e| panic!("load: {e}"));
    let x: Vec<f32> = (0..32).map(|i| i as f32 - 10.0).collect();
    let y = vec![0f32; 32];
    let ins = [
        HostTensor::from_f32(&[4, 8], &x).expect("x"),
        HostTensor::from_f32(&[4, 8], &y).expect("y"),
        HostTensor::from_f32(&[0], &[]).expect("e"),
    ];
    let r = model
        .session()
        .run_with(&ins, &RunOptions { trace: true })
        .unwrap_or_else(|e| panic!("run: {e}"));
    let z = r.outputs[0].to_tensor().expect("z");
    for (i, &xi) in x.iter().enumerate() {
        assert_eq!(z.get_f(i) as f32, xi * 2.0 * c(i), "z[{i}]");
    }
    assert!(model.folded_values() > 0, "the mul takes %a folded");
    // The add (task 0) never runs: the mul, its only reader, takes %a
    // folded. (With `const_args`' exact-read test `c.offset == r.offset`
    // inverted, tried once, the add runs at every run: same values.)
    let mut ran: Vec<usize> = r
        .trace
        .expect("a trace")
        .events
        .iter()
        .map(|e| e.task)
        .collect();
    ran.sort();
    assert_eq!(ran, runs, "tasks run");
}
