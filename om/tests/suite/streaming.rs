//! The streaming writer (`format::write_stream`, `format::stream_to_bytes`):
//! a model whose weights are pieces — borrowed bytes, owned bytes, splats
//! bigger than a chunk, zero gaps — is written byte for byte as the writer
//! that built the whole file in memory wrote it (`common/reference_writer.rs`),
//! and the reader accepts it.

#[path = "../common/reference_writer.rs"]
mod reference_writer;

use ge_om::model::{
    ArenaDef, ArenaRole, Buffer, IoDesc, IoTensor, KernelDef, ModelDef, OmStream, Operand, Task,
    TaskProgram, WeightDef,
};
use ge_om::{WeightBytes, Weights};
use reference_writer::reference_bytes;
use std::borrow::Cow;

fn buffer(arena: u32) -> Buffer {
    Buffer {
        arena,
        offset: 0,
        ty: "tensor<8xf32>".into(),
        bytes: 32,
        id: arena as i64,
    }
}

/// `y = k0(x, w0, w1, w2, w3)`: the weights are three bytes of `i8`, a splat
/// of 100 000 `f32` (six splat chunks), 40 owned `f32` and 64 zero bytes.
fn model(stored: &[u8]) -> OmStream<'_> {
    let mut weights = Weights::new();
    let mut defs = vec![];
    let pieces = [
        ("tensor<3xi8>", WeightBytes::Bytes(Cow::Borrowed(stored))),
        (
            "tensor<100000xf32>",
            WeightBytes::Splat {
                element: Cow::Owned(0.25f32.to_le_bytes().to_vec()),
                count: 100_000,
            },
        ),
        (
            "tensor<40xf32>",
            WeightBytes::Bytes(Cow::Owned((0..160).map(|i| i as u8).collect())),
        ),
        (
            "tensor<64xi8>",
            WeightBytes::Splat {
                element: Cow::Borrowed(&[0]),
                count: 64,
            },
        ),
    ];
    for (ty, w) in pieces {
        let bytes = w.byte_len().unwrap();
        let offset = weights.push(w, 64).unwrap();
        defs.push(WeightDef {
            offset,
            bytes,
            ty: ty.into(),
        });
    }
    let arena = |role, index| ArenaDef {
        role,
        index,
        size: 64,
        alignment: 64,
    };
    OmStream {
        def: ModelDef {
            name: "streamed".into(),
            soc: "Ascend910B".into(),
            entry: "main".into(),
            arenas: vec![
                arena(ArenaRole::Input, Some(0)),
                arena(ArenaRole::Output, Some(0)),
            ],
            num_streams: 1,
            num_events: 0,
            symbol_bounds: Default::default(),
            weights_size: weights.len(),
            engines: vec!["AICore".into()],
            memory_plan: Default::default(),
            replan: None,
        },
        weights,
        program: TaskProgram {
            weights: defs,
            kernels: vec![KernelDef {
                name: "k0".into(),
                kind: None,
            }],
            tasks: vec![
                Task::Launch {
                    kernel: 0,
                    stream: 0,
                    engine: "AICore".into(),
                    ins: [Operand::Buffer(buffer(0))]
                        .into_iter()
                        .chain((0..4).map(Operand::Weight))
                        .collect(),
                    outs: vec![buffer(1)],
                },
                Task::End,
            ],
        },
        kernels: "graph.func private @k0(%x: tensor<8xf32>) -> tensor<8xf32>".into(),
        io: IoDesc {
            inputs: vec![IoTensor {
                name: "x".into(),
                buffer: buffer(0),
            }],
            outputs: vec![IoTensor {
                name: "y".into(),
                buffer: buffer(1),
            }],
        },
    }
}

#[test]
fn streamed_bytes_are_the_in_memory_writers() {
    let stored = [1u8, 2, 3];
    let s = model(&stored).validated().expect("valid");
    let m = s.to_model().expect("within the budget");
    // 3 bytes, gap to 64, the splat to 400 064, the 160 bytes (aligned
    // already), gap to 400 256, the 64 zeros.
    assert_eq!(m.weights.len(), 400_320);
    let want = reference_bytes(&m);
    assert_eq!(ge_om::format::stream_to_bytes(&s).expect("valid"), want);
    assert_eq!(ge_om::to_bytes(&m).expect("valid"), want);
    let back = ge_om::parse(&want).expect("the reader accepts it");
    assert_eq!(back.to_model(), m);
    assert!(back.weights[64..400_064]
        .chunks(4)
        .all(|c| c == 0.25f32.to_le_bytes()));
}

#[test]
fn a_streamed_file_is_the_in_memory_writers() {
    let stored = [1u8, 2, 3];
    let s = model(&stored).validated().expect("valid");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.om");
    let n = ge_om::format::write_stream(&path, &s).expect("written");
    let file = std::fs::read(&path).unwrap();
    assert_eq!(n, file.len() as u64);
    assert_eq!(file, reference_bytes(&s.to_model().unwrap()));
    // Only the file is left: the temporary one was renamed over it.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_stream_that_does_not_validate_cannot_be_written() {
    // The writers take a `ValidStream`, which only `validated` makes.
    let stored = [1u8, 2, 3];
    let mut s = model(&stored);
    s.def.weights_size += 1;
    let e = s.validated().unwrap_err();
    assert!(e.contains("weights partition has"), "{e}");
    // A valid stream taken apart and changed must be validated again.
    let mut s = model(&stored).validated().expect("valid").into_inner();
    s.def.weights_size += 1;
    assert!(s.validated().is_err());
}
