//! The recurrent layers' fast path (runtime/src/kernels/rnn_fast.rs)
//! against the dialect's reference recurrence (`run_groups` in f64, and the
//! kernel's own reference path in f32) on random shapes and attributes:
//! every cell, direction, GRU `linear_before_reset` 0 and 1, bias and
//! initial states present or absent, sizes off the vector width; and the
//! cases that must fall back (clip, layout 1, peepholes, short
//! `sequence_lens`, other activations, `input_forget`, f16 operands).

use ge_dialects::graph::rnn::{check_shapes, run_groups, Cell, CommonAttrs, Spec};
use ge_ir::DType;
use ge_runtime::kernels::rnn::Recurrent;
use ge_runtime::kernels::{Kernel, Slot};
use rand::rngs::SmallRng as StdRng;
use rand::{Rng, SeedableRng};

#[derive(Clone, Debug)]
struct Case {
    cell: Cell,
    direction: &'static str,
    seq: usize,
    batch: usize,
    input: usize,
    hidden: usize,
    bias: bool,
    h0: bool,
    c0: bool,
    /// `sequence_lens` (`None`: absent).
    lens: Option<Vec<i64>>,
    peepholes: bool,
    activations: Option<Vec<&'static str>>,
    clip: Option<f64>,
    layout: i64,
}

impl Case {
    fn attrs(&self) -> CommonAttrs<'static> {
        CommonAttrs {
            hidden_size: Some(self.hidden as i64),
            direction: self.direction,
            activations: self.activations.clone(),
            alpha: None,
            beta: None,
            clip: self.clip,
            layout: self.layout,
        }
    }
    fn dirs(&self) -> usize {
        if self.direction == "bidirectional" {
            2
        } else {
            1
        }
    }
    fn lstm(&self) -> bool {
        matches!(self.cell, Cell::Lstm { .. })
    }
}

fn random(rng: &mut StdRng, n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-scale..scale)).collect()
}

fn slot(v: &mut [f32], shape: Vec<usize>) -> Slot {
    Slot {
        ptr: v.as_mut_ptr() as *mut u8,
        shape,
        dtype: DType::F32,
    }
}

/// |got - want| <= atol + rtol |want| everywhere.
fn assert_close(got: &[f32], want: &[f64], rtol: f64, atol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (g as f64 - w).abs();
        assert!(
            err <= atol + rtol * w.abs(),
            "{what}: element {i}: {g} vs {w} (error {err:e})"
        );
    }
}

/// Run `c` through the kernel (fast path where it applies) and through its
/// reference path and `run_groups` in f64; compare; return whether the fast
/// path ran.
fn check(c: &Case, seed: u64) -> bool {
    check_with(c, seed, false)
}

/// [`check`], with `W` and `R` first packed as a model's load packs its
/// constant weights (`Kernel::prepare`) when `packed`.
fn check_with(c: &Case, seed: u64, packed: bool) -> bool {
    let mut rng = StdRng::seed_from_u64(seed);
    let (d, h) = (c.dirs(), c.hidden);
    let gh = c.cell.gates() * h;
    let x_shape = if c.layout == 1 {
        vec![c.batch, c.seq, c.input]
    } else {
        vec![c.seq, c.batch, c.input]
    };
    let state_shape = if c.layout == 1 {
        vec![c.batch, d, h]
    } else {
        vec![d, c.batch, h]
    };
    let state_len = d * c.batch * h;
    let mut groups: Vec<Option<(Vec<f32>, Vec<usize>)>> = vec![
        Some((random(&mut rng, c.seq * c.batch * c.input, 1.0), x_shape)),
        Some((
            random(&mut rng, d * gh * c.input, 0.5),
            vec![d, gh, c.input],
        )),
        Some((random(&mut rng, d * gh * h, 0.5), vec![d, gh, h])),
        c.bias
            .then(|| (random(&mut rng, d * 2 * gh, 0.5), vec![d, 2 * gh])),
        None, // sequence_lens, apart
        c.h0.then(|| (random(&mut rng, state_len, 1.0), state_shape.clone())),
        c.c0.then(|| (random(&mut rng, state_len, 1.0), state_shape.clone())),
        c.peepholes
            .then(|| (random(&mut rng, d * 3 * h, 0.5), vec![d, 3 * h])),
    ];
    let n_groups = if c.lstm() { 8 } else { 6 };
    groups.truncate(n_groups);
    let mut lens = c.lens.clone();
    let mut present: Vec<bool> = groups.iter().map(|g| g.is_some()).collect();
    present[4] = lens.is_some();
    let kernel = Recurrent::from_attrs(c.cell, c.attrs(), &present).unwrap();

    // The operand slots in op order (the present ones).
    let mut ins: Vec<Slot> = vec![];
    for (g, v) in groups.iter_mut().enumerate() {
        if g == 4 {
            if let Some(l) = lens.as_mut() {
                ins.push(Slot {
                    ptr: l.as_mut_ptr() as *mut u8,
                    shape: vec![c.batch],
                    dtype: DType::I64,
                });
            }
            continue;
        }
        if let Some((v, shape)) = v {
            ins.push(slot(v, shape.clone()));
        }
    }
    if packed {
        // X, W and R are always operands 0, 1 and 2.
        let bytes: usize = [1, 2]
            .iter()
            .map(|&i| kernel.prepare(i, &ins[i], usize::MAX))
            .sum();
        if ge_runtime::kernels::sgemm_packed::fast() && kernel.has_fast_path() {
            assert!(bytes > 0, "{c:?}: W and R were not packed");
        }
    }
    let ins_ref: Vec<&Slot> = ins.iter().collect();
    let spec = Spec::new(c.cell, c.attrs()).unwrap();
    let dims = spec.result_dims(c.seq, c.batch, d, h);
    let run = |reference: bool| -> (bool, Vec<Vec<f32>>) {
        let mut outs: Vec<Vec<f32>> = dims
            .iter()
            .map(|s| vec![f32::NAN; s.iter().product()])
            .collect();
        let slots: Vec<Slot> = outs
            .iter_mut()
            .zip(&dims)
            .map(|(v, s)| slot(v, s.clone()))
            .collect();
        let refs: Vec<&Slot> = slots.iter().collect();
        let fast = if reference {
            kernel.run_reference(&ins_ref, &refs).unwrap();
            false
        } else {
            kernel.run_reporting(&ins_ref, &refs).unwrap()
        };
        (fast, outs)
    };
    let (fast, got) = run(false);
    let (_, reference) = run(true);

    // The oracle: run_groups in f64.
    let shapes: Vec<Option<Vec<usize>>> = groups
        .iter()
        .enumerate()
        .map(|(g, v)| {
            if g == 4 {
                lens.as_ref().map(|_| vec![c.batch])
            } else {
                v.as_ref().map(|(_, s)| s.clone())
            }
        })
        .collect();
    let shape_refs: Vec<Option<&[usize]>> = shapes.iter().map(|s| s.as_deref()).collect();
    let n = check_shapes(&spec, &shape_refs).unwrap();
    let g64: Vec<Option<Vec<f64>>> = groups
        .iter()
        .map(|v| {
            v.as_ref()
                .map(|(v, _)| v.iter().map(|&f| f as f64).collect())
        })
        .collect();
    let want = run_groups(&spec, n, &g64, lens.as_deref()).unwrap();
    let what = format!("{c:?} seed {seed} fast={fast}");
    for (k, w) in [want.y, want.y_h, want.y_c]
        .iter()
        .take(dims.len())
        .enumerate()
    {
        assert_close(&got[k], w, 1e-3, 1e-5, &format!("{what} result {k}"));
        let r64: Vec<f64> = reference[k].iter().map(|&f| f as f64).collect();
        assert_close(
            &got[k],
            &r64,
            1e-3,
            1e-5,
            &format!("{what} result {k} (f32 reference)"),
        );
    }
    fast
}

fn base(cell: Cell) -> Case {
    Case {
        cell,
        direction: "forward",
        seq: 3,
        batch: 2,
        input: 5,
        hidden: 7,
        bias: true,
        h0: true,
        c0: true,
        lens: None,
        peepholes: false,
        activations: None,
        clip: None,
        layout: 0,
    }
}

const CELLS: [Cell; 5] = [
    Cell::Rnn,
    Cell::Gru {
        linear_before_reset: false,
    },
    Cell::Gru {
        linear_before_reset: true,
    },
    Cell::Lstm {
        input_forget: false,
    },
    Cell::Lstm {
        input_forget: false,
    },
];

/// Random shapes and attributes the fast path covers: it runs, and agrees.
#[test]
fn fast_path_matches_reference_on_random_layers() {
    let mut rng = StdRng::seed_from_u64(7);
    let sizes = [1, 3, 5, 16, 17, 20, 33];
    for seed in 0..300u64 {
        let cell = CELLS[rng.random_range(0..CELLS.len())];
        let direction = ["forward", "reverse", "bidirectional"][rng.random_range(0..3)];
        let seq = rng.random_range(1..=7);
        let batch = rng.random_range(1..=3);
        let lens = match rng.random_range(0..4) {
            0 => Some(vec![seq as i64; batch]),
            _ => None,
        };
        // RNN: Relu or Sigmoid for some layers; any cell: the defaults
        // spelled out in either case.
        let activations = match (cell, rng.random_range(0..4)) {
            (Cell::Rnn, 0) => Some(vec!["Relu"]),
            (Cell::Rnn, 1) => Some(vec!["sigmoid"]),
            (Cell::Gru { .. }, 0) => Some(vec!["Sigmoid", "Tanh"]),
            (Cell::Gru { .. }, 1) => Some(vec!["Sigmoid", "Relu"]),
            (Cell::Lstm { .. }, 0) => Some(vec!["Sigmoid", "TANH", "Tanh"]),
            _ => None,
        };
        let c = Case {
            cell,
            direction,
            seq,
            batch,
            input: sizes[rng.random_range(0..sizes.len())],
            hidden: sizes[rng.random_range(0..sizes.len())],
            bias: rng.random_bool(0.7),
            h0: rng.random_bool(0.5),
            c0: rng.random_bool(0.5),
            lens,
            peepholes: false,
            activations,
            clip: None,
            layout: 0,
        };
        assert!(check(&c, seed), "{c:?}: expected the fast path");
        assert!(
            check_with(&c, seed, true),
            "{c:?}: expected the fast path, packed"
        );
    }
}

/// The torch exports' shapes: bidirectional LSTM, GRU linear_before_reset.
#[test]
fn fast_path_on_torch_shapes() {
    let lstm = Case {
        direction: "bidirectional",
        seq: 8,
        batch: 1,
        input: 32,
        hidden: 32,
        ..base(Cell::Lstm {
            input_forget: false,
        })
    };
    assert!(check(&lstm, 1));
    assert!(check(
        &Case {
            h0: false,
            c0: false,
            input: 64,
            ..lstm.clone()
        },
        2
    ));
    let gru = Case {
        seq: 8,
        batch: 1,
        input: 64,
        hidden: 32,
        c0: false,
        ..base(Cell::Gru {
            linear_before_reset: true,
        })
    };
    assert!(check(&gru, 3));
}

/// What the fast path leaves to the reference: still correct.
#[test]
fn fallbacks_match_reference() {
    let lstm = Cell::Lstm {
        input_forget: false,
    };
    let gru = Cell::Gru {
        linear_before_reset: true,
    };
    let cases = [
        Case {
            clip: Some(0.5),
            ..base(gru)
        },
        Case {
            layout: 1,
            direction: "bidirectional",
            ..base(lstm)
        },
        Case {
            peepholes: true,
            ..base(lstm)
        },
        Case {
            lens: Some(vec![3, 1]),
            direction: "bidirectional",
            ..base(gru)
        },
        Case {
            activations: Some(vec!["LeakyRelu"]),
            ..base(Cell::Rnn)
        },
        Case {
            activations: Some(vec!["HardSigmoid", "Tanh", "Tanh"]),
            ..base(lstm)
        },
        Case {
            ..base(Cell::Lstm { input_forget: true })
        },
    ];
    for (i, c) in cases.iter().enumerate() {
        assert!(!check(c, 100 + i as u64), "{c:?}: expected the fallback");
    }
    // The attributes alone decide for all but peepholes and lengths.
    for c in &cases[..] {
        let k = |p: bool| {
            let mut present = vec![true, true, true, true, c.lens.is_some(), true];
            if c.lstm() {
                present.extend([true, p]);
            }
            Recurrent::from_attrs(c.cell, c.attrs(), &present).unwrap()
        };
        let by_operands = c.peepholes || c.lens.is_some();
        assert_eq!(k(c.peepholes).has_fast_path(), by_operands, "{c:?}");
    }
}

/// f16 operands take the reference path too (converted), and agree.
#[test]
fn f16_falls_back() {
    let c = base(Cell::Rnn);
    let kernel = Recurrent::from_attrs(c.cell, c.attrs(), &[true, true, true]).unwrap();
    let mut rng = StdRng::seed_from_u64(5);
    let h16 = |v: Vec<f32>| -> Vec<half::f16> { v.into_iter().map(half::f16::from_f32).collect() };
    let (s, b, i, h) = (c.seq, c.batch, c.input, c.hidden);
    let mut x = h16(random(&mut rng, s * b * i, 1.0));
    let mut w = h16(random(&mut rng, h * i, 0.5));
    let mut r = h16(random(&mut rng, h * h, 0.5));
    let sl = |v: &mut Vec<half::f16>, shape: Vec<usize>| Slot {
        ptr: v.as_mut_ptr() as *mut u8,
        shape,
        dtype: DType::F16,
    };
    let ins = [
        sl(&mut x, vec![s, b, i]),
        sl(&mut w, vec![1, h, i]),
        sl(&mut r, vec![1, h, h]),
    ];
    let mut y = vec![half::f16::ZERO; s * b * h];
    let mut yh = vec![half::f16::ZERO; b * h];
    let outs = [sl(&mut y, vec![s, 1, b, h]), sl(&mut yh, vec![1, b, h])];
    let ins: Vec<&Slot> = ins.iter().collect();
    let outs: Vec<&Slot> = outs.iter().collect();
    assert!(kernel.has_fast_path());
    assert!(!kernel.run_reporting(&ins, &outs).unwrap());
    assert_eq!(&y[(s - 1) * b * h..], &yh[..]);
}

/// Bidirectional LSTM, GRU and RNN layers of torch-like sizes loaded from a
/// model (constant weights: packed at load), run on 1 and 2 threads: each
/// equals the interpreter.
#[test]
fn bidirectional_layers_on_two_threads_match_the_interpreter() {
    use crate::common::*;
    let (seq, batch, input, h) = (6, 3, 40, 48);
    for (op, gates, extra) in [
        (
            "lstm",
            4,
            ", operand_segment_sizes = [1, 1, 1, 1, 0, 0, 0, 0]",
        ),
        ("gru", 3, ", linear_before_reset = 1 : i64"),
        ("rnn", 1, ""),
    ] {
        let gh = gates * h;
        let outs = if op == "lstm" { 3 } else { 2 };
        let (yt, st) = (
            format!("tensor<{seq}x2x{batch}x{h}xf32>"),
            format!("tensor<2x{batch}x{h}xf32>"),
        );
        let results = [yt.clone(), st.clone(), st.clone()][..outs].join(", ");
        let names = ["#0", "#1", "#2"][..outs]
            .iter()
            .map(|n| format!("%l{n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let text = format!(
            "graph.func @main(%x: tensor<{seq}x{batch}x{input}xf32>) -> ({results}) {{\n  \
             %w = data.constant dense<{}> : tensor<2x{gh}x{input}xf32>\n  \
             %r = data.constant dense<{}> : tensor<2x{gh}x{h}xf32>\n  \
             %b = data.constant dense<{}> : tensor<2x{}xf32>\n  \
             %l:{outs} = graph.{op} %x, %w, %r, %b {{hidden_size = {h} : i64, direction = \"bidirectional\"{extra}}} : \
             (tensor<{seq}x{batch}x{input}xf32>, tensor<2x{gh}x{input}xf32>, tensor<2x{gh}x{h}xf32>, tensor<2x{}xf32>) -> ({results})\n  \
             graph.return {names} : {results}\n}}\n",
            dense(2 * gh * input, &[2, gh, input], 1),
            dense(2 * gh * h, &[2, gh, h], 2),
            dense(4 * gh, &[2, 2 * gh], 3),
            2 * gh,
            2 * gh,
        );
        let om = om_bytes(
            "rnn_two_threads",
            &text,
            &ge_compile::CompileOptions::default(),
        );
        let (types, m) = signature(&text, "main");
        let ins = random_inputs(&types, &[], 9);
        let want = interpret(&m, "main", &ins);
        for threads in [1, 2] {
            let got = run(&load(&om, threads), &ins);
            assert_close(
                &got,
                &want,
                &format!("{op} bidirectional, {threads} threads"),
            );
        }
    }
}
