//! The reader and validator on a hand-built model (no compiler involved):
//! the model round-trips, and each broken reference is refused with a line
//! naming it. (lowering/tests/suite/om_fuzz.rs fuzzes the reader on compiled models.)

use ge_om::model::{
    ArenaDef, ArenaRole, Buffer, IoDesc, IoTensor, KernelDef, ModelDef, OmModel, Operand, Task,
    TaskProgram, WeightDef,
};

fn buffer(arena: u32, offset: u64) -> Buffer {
    Buffer {
        arena,
        offset,
        ty: "tensor<Bx8xf32>".into(),
        bytes: 4 * 8 * 4,
        id: arena as i64,
    }
}

fn arena(role: ArenaRole, index: Option<u32>, size: u64) -> ArenaDef {
    ArenaDef {
        role,
        index,
        size,
        alignment: 64,
    }
}

/// `y = k0(x, w)` on one stream, B <= 4.
fn model() -> OmModel {
    OmModel {
        def: ModelDef {
            name: "m".into(),
            soc: "Ascend910B".into(),
            entry: "main".into(),
            arenas: vec![
                arena(ArenaRole::Input, Some(0), 128),
                arena(ArenaRole::Output, Some(0), 128),
                arena(ArenaRole::Workspace, None, 0),
            ],
            num_streams: 1,
            num_events: 1,
            symbol_bounds: [("B".to_string(), 4)].into(),
            weights_size: 64,
            engines: vec!["AICore".into()],
            memory_plan: Default::default(),
            replan: None,
        },
        weights: vec![0; 64],
        program: TaskProgram {
            weights: vec![WeightDef {
                offset: 0,
                bytes: 32,
                ty: "tensor<8xf32>".into(),
            }],
            kernels: vec![KernelDef {
                name: "k0".into(),
                kind: None,
            }],
            tasks: vec![
                Task::Launch {
                    kernel: 0,
                    stream: 0,
                    engine: "AICore".into(),
                    ins: vec![Operand::Buffer(buffer(0, 0)), Operand::Weight(0)],
                    outs: vec![buffer(1, 0)],
                },
                Task::Record {
                    event: 0,
                    stream: 0,
                },
                Task::Wait {
                    event: 0,
                    stream: 0,
                },
                Task::End,
            ],
        },
        kernels:
            "graph.func private @k0(%x: tensor<Bx8xf32>, %w: tensor<8xf32>) -> tensor<Bx8xf32>"
                .into(),
        io: IoDesc {
            inputs: vec![IoTensor {
                name: "x".into(),
                buffer: buffer(0, 0),
            }],
            outputs: vec![IoTensor {
                name: "y".into(),
                buffer: buffer(1, 0),
            }],
        },
    }
}

#[test]
fn a_valid_model_round_trips() {
    let m = model();
    let bytes = ge_om::to_bytes(&m).expect("valid");
    let back = ge_om::parse(&bytes).expect("parses");
    assert_eq!(back.to_model(), m);
    assert_eq!(back.soc, "Ascend910B");
    assert_eq!(back.weights_offset % 64, 0);
}

/// A replan section with two conflicting units planned at B = 4.
fn with_replan(m: &mut OmModel) {
    let unit = |conflicts: Vec<u32>| ge_om::model::ReplanUnit {
        ty: "tensor<Bx4xf32>".into(),
        offset: 0,
        conflicts,
        first: 0,
        last: 1,
    };
    m.def.replan = Some(ge_om::model::Replan {
        unbounded: [("B".to_string(), 4)].into(),
        alignment: 64,
        units: vec![unit(vec![1]), unit(vec![0])],
        buffers: [(0, 0), (1, 1)].into(),
    });
}

/// The replan section (models with unbounded dims) is checked like the rest.
#[test]
fn broken_replan_sections_are_one_line_errors() {
    let mut ok = model();
    with_replan(&mut ok);
    let bytes = ge_om::to_bytes(&ok).expect("valid");
    assert_eq!(ge_om::parse(&bytes).expect("parses").to_model(), ok);
    type Edit = fn(&mut ge_om::model::Replan);
    let cases: &[(Edit, &str)] = &[
        (|r| r.units[1].conflicts.clear(), "not symmetric"),
        (
            |r| r.units[0].conflicts = vec![0],
            "unit #0 conflicts with unit 0",
        ),
        (
            |r| r.units[0].conflicts = vec![7],
            "unit #0 conflicts with unit 7",
        ),
        (|r| r.buffers = [(3, 9)].into(), "buffer 3 is in unit 9"),
        (|r| r.alignment = 48, "alignment 48 is not a power of two"),
        (
            |r| r.unbounded = [("B".to_string(), 5)].into(),
            "unbounded symbol B was planned at 5",
        ),
        (|r| r.units[0].first = 2, "program interval [2, 1]"),
    ];
    for (edit, want) in cases {
        let mut m = ok.clone();
        edit(m.def.replan.as_mut().expect("replan"));
        let e = ge_om::to_bytes(&m).expect_err(want);
        assert!(e.contains(want), "want '{want}', got '{e}'");
    }
}

/// Each edit breaks one rule; the error names it.
#[test]
fn broken_references_are_one_line_errors() {
    type Edit = fn(&mut OmModel);
    let cases: &[(Edit, &str)] = &[
        (|m| m.def.num_streams = 0, "num_streams must be at least 1"),
        (|m| m.def.weights_size = 128, "the weights partition has 64"),
        (|m| m.def.arenas[0].alignment = 48, "arena #0: alignment 48"),
        (
            |m| m.def.arenas[1].index = None,
            "arena #1: an input/output arena needs an index",
        ),
        (
            |m| m.program.weights[0].offset = 64,
            "weight #0: bytes [64, 96) lie outside",
        ),
        (
            |m| m.program.weights[0].offset = 32,
            "weight #0: offset 32 is not 64-byte aligned",
        ),
        (
            |m| m.program.weights[0].bytes = 16,
            "weight #0: 'tensor<8xf32>' is 32 bytes, not 16",
        ),
        (
            |m| set_launch(m, |k, _, _| *k = 1),
            "task #0: kernel 1 does not exist",
        ),
        (
            |m| set_launch(m, |_, ins, _| ins[1] = Operand::Weight(3)),
            "task #0: weight 3 does not exist",
        ),
        (
            |m| set_launch(m, |_, ins, _| ins[0] = Operand::Buffer(buffer(0, 64))),
            "task #0: bytes [64, 192) lie outside arena 0 (128 bytes)",
        ),
        // Element-aligned offsets, checked once at load for every shape
        // (before: only when a run's plan was made).
        (
            |m| {
                m.def.arenas[1].size = 256;
                set_launch(m, |_, _, outs| outs[0] = buffer(1, 2))
            },
            "task #0: 'tensor<Bx8xf32>' lies at offset 2 of arena 1, not a multiple of its 4-byte elements",
        ),
        (
            |m| set_launch(m, |_, _, outs| outs[0] = buffer(7, 0)),
            "task #0: arena 7 does not exist",
        ),
        (
            |m| set_launch(m, |_, _, outs| outs.clear()),
            "a launch writes at least one buffer",
        ),
        (
            |m| m.program.tasks.swap(1, 2),
            "task #1: waits for event 0 before any record of it",
        ),
        (
            |m| {
                m.program.tasks[1] = Task::Goto {
                    label: 5,
                    stream: 0,
                }
            },
            "task #1: jumps to label 5, which is not on stream 0",
        ),
        (
            |m| {
                m.program.tasks[1] = Task::Record {
                    event: 0,
                    stream: 2,
                }
            },
            "task #1: stream 2 out of range",
        ),
        (|m| m.program.tasks.truncate(3), "no end task"),
        (
            |m| m.io.outputs[0].buffer = buffer(0, 0),
            "output #0 'y' is not in an output arena",
        ),
        (
            |m| m.program.kernels[0].name = "k9".into(),
            "kernel #0 '@k9' is not in the kernels partition",
        ),
        (
            |m| m.def.symbol_bounds.clear(),
            "symbol B of 'tensor<Bx8xf32>' has no upper bound",
        ),
        // Names are what callers address inputs and outputs by.
        (
            |m| m.io.inputs[0].name.clear(),
            "input #0 has an empty name",
        ),
        (
            |m| m.io.outputs[0].name = "y".repeat(1025),
            "output #0's name ('yyyy",
        ),
        (
            |m| m.io.inputs[0].name = "x\u{1b}[2J".into(),
            "input #0's name \"x\\u{1b}[2J\" contains a control character",
        ),
        (
            |m| m.io.outputs.push(m.io.outputs[0].clone()),
            "output name 'y' occurs more than once",
        ),
        // Counts that size what a runtime creates are bounded (before:
        // num_streams = 4e9 aborted the loader allocating stream lists).
        (
            |m| m.def.num_streams = 4_000_000_000,
            "num_streams 4000000000 is more than 1024",
        ),
        (
            |m| m.def.num_events = u32::MAX,
            "num_events 4294967295 is more than 1048576",
        ),
        (
            |m| m.def.symbol_bounds.insert("B".into(), -3).map_or((), drop),
            "symbol B has a negative bound -3",
        ),
        // A switch reads exactly one integer element (before: a 0-byte
        // value was read as 8 bytes).
        (
            |m| m.program.tasks[1] = switch("tensor<0xi64>", 0),
            "task #1: a switch reads one integer or boolean element, not 'tensor<0xi64>'",
        ),
        (
            |m| m.program.tasks[1] = switch("tensor<2xi32>", 8),
            "a switch reads one integer or boolean element, not 'tensor<2xi32>'",
        ),
        (
            |m| m.program.tasks[1] = switch("tensor<1xf32>", 4),
            "a switch reads one integer or boolean element, not 'tensor<1xf32>'",
        ),
    ];
    for (edit, want) in cases {
        let mut m = model();
        edit(&mut m);
        let e = m.validate().expect_err(want);
        assert!(e.contains(want), "expected '{want}', got '{e}'");
        assert!(!e.contains('\n'), "{e}");
        // The reader refuses the same model written without checks.
        let bytes = ge_om::format::to_bytes_unchecked(&m).expect("serialises");
        let e = ge_om::parse(&bytes).expect_err(want).0;
        assert!(e.contains(want), "reader: expected '{want}', got '{e}'");
    }
}

/// A switch on stream 0 reading a value of type `ty` (`bytes` long) at the
/// start of the input arena, with no targets.
fn switch(ty: &str, bytes: u64) -> Task {
    Task::Switch {
        value: Buffer {
            arena: 0,
            offset: 0,
            ty: ty.into(),
            bytes,
            id: 9,
        },
        stream: 0,
        targets: vec![],
    }
}

fn set_launch(m: &mut OmModel, f: impl FnOnce(&mut u32, &mut Vec<Operand>, &mut Vec<Buffer>)) {
    match &mut m.program.tasks[0] {
        Task::Launch {
            kernel, ins, outs, ..
        } => f(kernel, ins, outs),
        _ => unreachable!("task 0 is the launch"),
    }
}

#[test]
fn damaged_containers_are_refused() {
    let bytes = ge_om::to_bytes(&model()).expect("valid");
    let mut bad_magic = bytes.clone();
    bad_magic[1] ^= 0xff;
    assert!(ge_om::parse(&bad_magic).is_err());
    assert!(ge_om::parse(&bytes[..bytes.len() - 1]).is_err());
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let e = ge_om::parse(&flipped).expect_err("checksum").0;
    assert!(e.contains("CRC") || e.contains("checksum"), "{e}");
}

/// Names that are not UTF-8 are refused by the reader (the I/O partition is
/// JSON, which holds UTF-8 only), with one line.
#[test]
fn non_utf8_names_are_refused() {
    let mut m = model();
    m.io.inputs[0].name = "x\u{e9}".into();
    let mut bytes = ge_om::to_bytes(&m).expect("valid");
    // Make the name's 'é' (c3 a9) the invalid byte sequence c3 28, then
    // refresh the checksums so only the bad text is wrong.
    let at = bytes
        .windows(2)
        .position(|w| w == [0xc3, 0xa9])
        .expect("the name's bytes");
    bytes[at + 1] = 0x28;
    reseal(&mut bytes);
    let e = ge_om::format::parse(&bytes).expect_err("not UTF-8").0;
    assert!(e.contains("I/O"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

/// Recompute every partition's CRC and the header's two, after an edit.
fn reseal(b: &mut [u8]) {
    use ge_om::format::{ENTRY_SIZE, HEADER_SIZE};
    let word = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
    let n = u32::from_le_bytes(b[32..36].try_into().expect("4 bytes")) as usize;
    for i in 0..n {
        let e = HEADER_SIZE + i * ENTRY_SIZE;
        let (off, len) = (word(b, e + 8) as usize, word(b, e + 16) as usize);
        let crc = crc32fast::hash(&b[off..off + len]);
        b[e + 24..e + 28].copy_from_slice(&crc.to_le_bytes());
    }
    let body = crc32fast::hash(&b[HEADER_SIZE..]);
    b[24..28].copy_from_slice(&body.to_le_bytes());
    b[28..32].fill(0);
    let header = crc32fast::hash(&b[..HEADER_SIZE]);
    b[28..32].copy_from_slice(&header.to_le_bytes());
}
