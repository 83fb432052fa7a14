//! The loader's check of each launch against its kernel
//! (runtime/src/proof.rs `check_launch`): every operand and out buffer holds
//! at least its kernel type's bytes. Added for a mutant cargo-mutants found
//! surviving in the crate's tests (docs/testing.md, "Runtime, third pass":
//! `proof.rs:154` `have < need` → `have > need`): no test fed the loader a
//! buffer of another size than its kernel type's, larger or smaller.

use ge_om::model::{ArenaRole, OmModel, Operand, Task};
use ge_runtime::{HostTensor, LoadOptions, Model};

const SRC: &str = "graph.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = graph.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = graph.mul %s, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  graph.return %z : tensor<4x8xf32>
}";

/// The model with the workspace buffer between the add and the mul typed
/// `ty` of `bytes` (the workspace grown to hold it): the mul's argument when
/// `reader`, else the add's result. (ge-om's validation holds a buffer to
/// its own type's size; only the loader compares it with the kernel's.)
fn with_sum_type(ty: &str, bytes: u64, reader: bool) -> Vec<u8> {
    let opts = ge_compile::CompileOptions {
        fuse: false,
        single_stream: true,
        ..Default::default()
    };
    let mut om: OmModel =
        ge_compile::compile_text("l", SRC, &opts).unwrap_or_else(|e| panic!("compile: {e}"));
    let ws = om
        .def
        .arenas
        .iter()
        .position(|a| a.role == ArenaRole::Workspace)
        .expect("a workspace");
    om.def.arenas[ws].size = om.def.arenas[ws].size.max(1024);
    let mut edited = 0;
    for t in &mut om.program.tasks {
        let Task::Launch { ins, outs, .. } = t else {
            continue;
        };
        if reader {
            for o in ins.iter_mut() {
                if let Operand::Buffer(b) = o {
                    if b.arena == ws as u32 {
                        b.bytes = bytes;
                        b.ty = ty.to_string();
                        edited += 1;
                    }
                }
            }
        } else {
            for b in outs.iter_mut().filter(|b| b.arena == ws as u32) {
                b.bytes = bytes;
                b.ty = ty.to_string();
                edited += 1;
            }
        }
    }
    assert_eq!(edited, 1, "one buffer edited");
    ge_om::format::to_bytes_unchecked(&om).expect("bytes")
}

fn load(bytes: &[u8]) -> Result<Model, String> {
    Model::from_bytes(bytes, &LoadOptions::default()).map_err(|e| e.to_string())
}

/// x = i, y = 2: z = (x + y) * x.
fn run_checked(model: &Model) {
    let x: Vec<f32> = (0..32).map(|i| i as f32).collect();
    let ins = [
        HostTensor::from_f32(&[4, 8], &x).expect("x"),
        HostTensor::from_f32(&[4, 8], &[2.0; 32]).expect("y"),
    ];
    let out = model
        .session()
        .run(&ins)
        .unwrap_or_else(|e| panic!("run: {e}"));
    let z = out[0].to_tensor().expect("z");
    for (i, &xi) in x.iter().enumerate() {
        assert_eq!(z.get_f(i) as f32, (xi + 2.0) * xi, "z[{i}]");
    }
}

/// A buffer larger than its kernel type (here typed as 64 floats) is
/// accepted, read or written, and the model computes as compiled (refused
/// with `have < need` turned into `have > need`, tried once).
#[test]
fn a_buffer_larger_than_its_kernel_type_is_accepted() {
    for reader in [true, false] {
        let model = load(&with_sum_type("tensor<64xf32>", 256, reader))
            .unwrap_or_else(|e| panic!("reader={reader}: {e}"));
        run_checked(&model);
    }
}

/// A buffer smaller than its kernel type is refused at load, naming the
/// task, the kernel, the operand and both sizes.
#[test]
fn a_buffer_smaller_than_its_kernel_type_is_refused() {
    let e = load(&with_sum_type("tensor<2xf32>", 8, true))
        .err()
        .expect("refused");
    assert_eq!(e, "l:3:3: task #1 (kernel @main_t1_mul): argument #0 of type 'tensor<4x8xf32>' needs 128 bytes but buffer 'tensor<2xf32>' has 8");
    let e = load(&with_sum_type("tensor<2xf32>", 8, false))
        .err()
        .expect("refused");
    assert_eq!(e, "l:2:3: task #0 (kernel @main_t0_add): result #0 of type 'tensor<4x8xf32>' needs 128 bytes but its out buffer 'tensor<2xf32>' has 8");
}
