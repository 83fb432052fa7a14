//! The `.om` reader never panics and rejects damaged files: random bytes,
//! truncations, bit flips, and well-formed containers with wrong contents
//! (offsets, ids, lengths pointing anywhere).

use crate::common;

use common::*;
use ge_lowering::om::{from_module, OmOptions};
use ge_om::format::{parse as parse_om, to_bytes, to_bytes_unchecked};
use ge_om::model::{Operand, Task};
use ge_om::OmModel;
use proptest::prelude::*;
use std::sync::OnceLock;

const MODEL: &str = r#"
module attributes {ge.symbol_bounds = {B = 4 : i64}} {
  graph.func @main(%x: tensor<Bx8xf32>, %y: tensor<Bx8xf32>) -> (tensor<Bx8xf32>, tensor<Bx8xf32>) {
    %w = data.constant dense<0.5> : tensor<8xf32>
    %m = graph.mul %x, %w : (tensor<Bx8xf32>, tensor<8xf32>) -> tensor<Bx8xf32>
    %a = graph.softmax %m : (tensor<Bx8xf32>) -> tensor<Bx8xf32>
    %b = graph.softmax %y : (tensor<Bx8xf32>) -> tensor<Bx8xf32>
    %c = graph.add %a, %b : (tensor<Bx8xf32>, tensor<Bx8xf32>) -> tensor<Bx8xf32>
    graph.return %c, %a : tensor<Bx8xf32>, tensor<Bx8xf32>
  }
}
"#;

fn model() -> &'static (OmModel, Vec<u8>) {
    static M: OnceLock<(OmModel, Vec<u8>)> = OnceLock::new();
    M.get_or_init(|| {
        let mut m = parse(MODEL);
        run(&mut m, "atc").unwrap();
        let om = from_module(
            m.body(),
            Some(&m),
            &OmOptions {
                soc: "Ascend910B".into(),
                ..Default::default()
            },
        )
        .unwrap();
        let bytes = to_bytes(&om).unwrap();
        (om, bytes)
    })
}

#[test]
fn the_model_round_trips() {
    let (om, bytes) = model();
    let f = parse_om(bytes).unwrap();
    assert_eq!(&f.to_model(), om);
    assert_eq!(f.weights_offset % 64, 0);
    assert_eq!(f.def.num_streams, 2);
}

/// Apply a mutation to the model's contents, serialise without checks.
fn mutated(f: impl FnOnce(&mut OmModel)) -> Vec<u8> {
    let mut m = model().0.clone();
    f(&mut m);
    to_bytes_unchecked(&m).unwrap()
}

#[test]
fn wrong_contents_are_rejected() {
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "outside arena",
            mutated(|m| {
                if let Some(Task::Launch { outs, .. }) = m
                    .program
                    .tasks
                    .iter_mut()
                    .find(|t| matches!(t, Task::Launch { .. }))
                {
                    outs[0].offset = 1 << 40;
                }
            }),
        ),
        (
            "does not exist",
            mutated(|m| {
                if let Some(Task::Launch { kernel, .. }) = m
                    .program
                    .tasks
                    .iter_mut()
                    .find(|t| matches!(t, Task::Launch { .. }))
                {
                    *kernel = 99;
                }
            }),
        ),
        (
            "out of range",
            mutated(|m| {
                if let Some(Task::Launch { stream, .. }) = m
                    .program
                    .tasks
                    .iter_mut()
                    .find(|t| matches!(t, Task::Launch { .. }))
                {
                    *stream = 7;
                }
            }),
        ),
        (
            "before any record",
            mutated(|m| {
                let i = m
                    .program
                    .tasks
                    .iter()
                    .position(|t| matches!(t, Task::Record { .. }))
                    .unwrap();
                m.program.tasks.remove(i);
            }),
        ),
        ("weights partition", mutated(|m| m.weights.truncate(3))),
        (
            "bytes, not",
            mutated(|m| {
                m.io.inputs[0].buffer.bytes += 1;
            }),
        ),
        (
            "bad type",
            mutated(|m| {
                m.io.outputs[0].buffer.ty = "tensor<4x?".into();
            }),
        ),
        (
            "no end task",
            mutated(|m| {
                m.program.tasks.retain(|t| !matches!(t, Task::End));
            }),
        ),
        (
            "weight 5 does not exist",
            mutated(|m| {
                for t in &mut m.program.tasks {
                    if let Task::Launch { ins, .. } = t {
                        for o in ins.iter_mut() {
                            if let Operand::Weight(w) = o {
                                *w = 5;
                            }
                        }
                    }
                }
            }),
        ),
    ];
    for (want, bytes) in cases {
        let e = parse_om(&bytes).expect_err(want);
        assert!(e.0.contains(want), "expected '{want}' in '{}'", e.0);
        assert!(!e.0.contains('\n'), "one line: {}", e.0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_are_rejected(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        prop_assert!(parse_om(&bytes).is_err());
    }

    #[test]
    fn random_bytes_after_a_valid_header_prefix_are_rejected(cut in 8usize..300, tail in prop::collection::vec(any::<u8>(), 0..2048)) {
        let good = &model().1;
        let mut b = good[..cut.min(good.len())].to_vec();
        b.extend(tail);
        if b != *good {
            prop_assert!(parse_om(&b).is_err());
        }
    }

    #[test]
    fn truncations_are_rejected(len in 0usize..100_000) {
        let good = &model().1;
        let n = len % good.len();
        let e = parse_om(&good[..n]).map(|_| ()).unwrap_err();
        prop_assert!(e.0.contains("truncated") || e.0.contains("bad magic"), "{}", e.0);
    }

    #[test]
    fn bit_flips_are_rejected(pos in any::<usize>(), bit in 0u8..8) {
        let mut b = model().1.clone();
        let i = pos % b.len();
        b[i] ^= 1 << bit;
        prop_assert!(parse_om(&b).is_err());
    }

    /// Flips inside the JSON partitions with every checksum recomputed: the
    /// reader must still never panic (it may accept harmless changes, and then
    /// the model validates).
    #[test]
    fn mutated_contents_never_panic(pos in any::<usize>(), byte in any::<u8>()) {
        let (om, _) = model();
        let mut def = serde_json::to_vec(&om.def).unwrap();
        let mut prog = serde_json::to_vec(&om.program).unwrap();
        let target = if pos % 2 == 0 { &mut def } else { &mut prog };
        let i = (pos / 2) % target.len();
        target[i] = byte;
        let (Ok(d), Ok(p)) = (serde_json::from_slice(&def), serde_json::from_slice(&prog)) else {
            return Ok(());
        };
        let m = OmModel { def: d, program: p, ..om.clone() };
        let bytes = to_bytes_unchecked(&m).unwrap();
        if let Ok(f) = parse_om(&bytes) {
            prop_assert!(f.to_model().validate().is_ok());
        }
    }
}
