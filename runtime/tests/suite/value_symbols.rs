//! Value symbols (issue 15 item 3): result dims of `graph.specialize` that
//! the values decide (a Reshape to a shape given as an input, a reduction
//! over input axes, an Expand to an input shape) are symbols bound at run
//! start from those values. One compiled model runs at several values —
//! different sizes per run — equal to the reference interpreter; each new
//! binding builds one plan, a binding seen before reuses it.

use crate::common;
use common::*;
use ge_compile::CompileOptions;
use ge_ir::tensor::Tensor;
use ge_ir::DType;
use ge_runtime::HostTensor;

const SRC: &str = r#"
graph.func @main(%x: tensor<2x3x4xf32>, %shape: tensor<2xi64>, %axes: tensor<1xi64>, %y: tensor<3x1xf32>, %eshape: tensor<3xi64>) -> (tensor<Sxf32>, tensor<E0xE1xE2xf32>) {
  %r = graph.specialize %x, %shape {op = "data.reshape", static_attrs = {allowzero = 0 : i64}, from_values = ["shape:ints"]} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<R0xR1xf32>
  %a = graph.relu %r : (tensor<R0xR1xf32>) -> tensor<R0xR1xf32>
  %s = graph.specialize %a, %axes {op = "graph.reduce_sum", static_attrs = {keepdims = 0 : i64}, from_values = ["axes:ints"]} : (tensor<R0xR1xf32>, tensor<1xi64>) -> tensor<Sxf32>
  %e = graph.specialize %y, %eshape {op = "data.expand", static_attrs = {}, from_values = ["shape:ints"]} : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<E0xE1xE2xf32>
  %t = graph.tanh %e : (tensor<E0xE1xE2xf32>) -> tensor<E0xE1xE2xf32>
  graph.return %s, %t : tensor<Sxf32>, tensor<E0xE1xE2xf32>
}
"#;

fn ints(v: &[i64]) -> Tensor {
    Tensor::from_i64(vec![v.len()], DType::I64, v.to_vec())
}

fn inputs(seed: u64, shape: &[i64], axes: &[i64], eshape: &[i64]) -> Vec<Tensor> {
    let (types, _) = signature(SRC, "main");
    let r = random_inputs(&types, &[], seed);
    vec![
        r[0].clone(),
        ints(shape),
        ints(axes),
        r[3].clone(),
        ints(eshape),
    ]
}

#[test]
fn value_symbols_bind_per_run_and_match_the_interpreter() {
    let bytes = om_bytes("value_syms", SRC, &CompileOptions::default());
    let model = load(&bytes, 1);
    let mut syms = model.value_symbols();
    syms.sort();
    assert_eq!(syms.len(), 6, "{syms:?}");
    assert!(syms[0].starts_with("E0: data.expand"), "{syms:?}");
    let (_, src) = signature(SRC, "main");
    let session = model.session();
    // (shape, axes, expand shape, output element counts)
    type Case<'a> = (&'a [i64], &'a [i64], &'a [i64], [usize; 2]);
    let cases: &[Case] = &[
        (&[6, 4], &[0], &[2, 3, 5], [4, 30]),
        (&[-1, 2], &[1], &[1, 3, 1], [12, 3]),
        (&[24, 1], &[-1], &[4, 3, 2], [24, 24]),
        // Seen before: its plan is reused.
        (&[6, 4], &[0], &[2, 3, 5], [4, 30]),
    ];
    for (i, (shape, axes, eshape, sizes)) in cases.iter().enumerate() {
        let ins = inputs(i as u64, shape, axes, eshape);
        let want = interpret(&src, "main", &ins);
        let host: Vec<HostTensor> = ins.iter().map(HostTensor::from_tensor).collect();
        let got: Vec<Tensor> = session
            .run(&host)
            .unwrap_or_else(|e| panic!("run {i}: {e}"))
            .iter()
            .map(|t| t.to_tensor().unwrap())
            .collect();
        assert_eq!(got[0].len(), sizes[0], "case {i}");
        assert_eq!(got[1].len(), sizes[1], "case {i}");
        assert_close(&got, &want, &format!("case {i}"));
    }
    assert_eq!(session.plans_built(), 3);
}

#[test]
fn values_the_op_refuses_are_a_run_error() {
    let bytes = om_bytes("value_syms", SRC, &CompileOptions::default());
    let model = load(&bytes, 1);
    let session = model.session();
    // 5 x 5 elements cannot be a reshape of 24; axis 2 is out of range of a 2-D value.
    for (shape, axes, want) in [
        (&[5i64, 5][..], &[0i64][..], "'data.reshape'"),
        (&[6, 4], &[2], "'graph.reduce_sum'"),
    ] {
        let ins = inputs(0, shape, axes, &[1, 3, 1]);
        let host: Vec<HostTensor> = ins.iter().map(HostTensor::from_tensor).collect();
        let e = session.run(&host).expect_err("must fail").to_string();
        assert!(e.contains(want), "{e}");
    }
}

/// Values the model computes (issue 15): a Reshape target `|shape|` and an
/// Expand target read from the reshaped value's shape (its value symbols) are
/// evaluated on the host at run start (the host prefix), then planned per
/// binding as for input values. Three runs, the last a binding seen before.
#[test]
fn values_computed_in_the_model_bind_at_run_start() {
    let src = r#"
graph.func @main(%x: tensor<Nx6xf32>, %shape: tensor<2xi64>, %y: tensor<1x1xf32>) -> (tensor<R0xR1xf32>, tensor<E0xE1xf32>) {
  %s = graph.abs %shape : (tensor<2xi64>) -> tensor<2xi64>
  %r = graph.specialize %x, %s {op = "data.reshape", static_attrs = {allowzero = 0 : i64}, from_values = ["shape:ints"]} : (tensor<Nx6xf32>, tensor<2xi64>) -> tensor<R0xR1xf32>
  %rs = data.shape_of %r : (tensor<R0xR1xf32>) -> tensor<2xi64>
  %e = graph.specialize %y, %rs {op = "data.expand", static_attrs = {}, from_values = ["shape:ints"]} : (tensor<1x1xf32>, tensor<2xi64>) -> tensor<E0xE1xf32>
  %t = graph.tanh %e : (tensor<E0xE1xf32>) -> tensor<E0xE1xf32>
  graph.return %r, %t : tensor<R0xR1xf32>, tensor<E0xE1xf32>
}
"#;
    let bytes = om_bytes("computed", src, &CompileOptions::default());
    let model = load(&bytes, 1);
    let session = model.session();
    let (_, parsed) = signature(src, "main");
    // (N, shape, output element counts)
    type Case<'a> = (usize, &'a [i64], usize);
    let cases: &[Case] = &[(4, &[-3, -8], 24), (2, &[12, 1], 12), (4, &[-3, -8], 24)];
    for (i, &(n, shape, size)) in cases.iter().enumerate() {
        let x: Vec<f64> = (0..n * 6).map(|k| k as f64 * 0.25 - 1.0).collect();
        let ins = vec![
            Tensor::from_f64(vec![n, 6], DType::F32, x),
            ints(shape),
            Tensor::from_f64(vec![1, 1], DType::F32, vec![0.5]),
        ];
        let want = interpret(&parsed, "main", &ins);
        let host: Vec<HostTensor> = ins.iter().map(HostTensor::from_tensor).collect();
        let got: Vec<Tensor> = session
            .run(&host)
            .unwrap_or_else(|e| panic!("run {i}: {e}"))
            .iter()
            .map(|t| t.to_tensor().unwrap())
            .collect();
        assert_eq!([got[0].len(), got[1].len()], [size, size], "case {i}");
        assert_close(&got, &want, &format!("case {i}"));
    }
    assert_eq!(session.plans_built(), 2);
}

/// Range over run-time bounds (ONNX Range with graph-input start, limit and
/// delta): its length is a value symbol; a padded copy of it with run-time
/// pads binds a second one. Four runs, the last a binding seen before.
#[test]
fn range_and_pad_lengths_bind_per_run() {
    let src = r#"
graph.func @main(%s: tensor<f32>, %l: tensor<f32>, %d: tensor<f32>, %pads: tensor<2xi64>) -> (tensor<Nxf32>, tensor<Pxf32>) {
  %r = graph.specialize %s, %l, %d {op = "graph.range", static_attrs = {to = f32}, from_values = ["start:float", "limit:float", "delta:float"]} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<Nxf32>
  %t = graph.tanh %r : (tensor<Nxf32>) -> tensor<Nxf32>
  %p = graph.specialize %t, %pads {op = "graph.pad", static_attrs = {value = 2.5 : f64}, from_values = ["pads:ints"]} : (tensor<Nxf32>, tensor<2xi64>) -> tensor<Pxf32>
  graph.return %t, %p : tensor<Nxf32>, tensor<Pxf32>
}
"#;
    let bytes = om_bytes("value_range", src, &CompileOptions::default());
    let model = load(&bytes, 1);
    let session = model.session();
    let (_, parsed) = signature(src, "main");
    let f = |v: f64| Tensor::from_f64(vec![], DType::F32, vec![v]);
    // (start, limit, delta, pads, lengths)
    type Case = (f64, f64, f64, [i64; 2], [usize; 2]);
    let cases: &[Case] = &[
        (0.0, 5.0, 1.0, [1, 2], [5, 8]),
        (10.0, 4.0, -3.0, [0, 0], [2, 2]),
        (5.0, 0.0, 1.0, [2, 0], [0, 2]),
        (0.0, 5.0, 1.0, [1, 2], [5, 8]),
    ];
    for (i, &(s, l, d, pads, sizes)) in cases.iter().enumerate() {
        let ins = vec![f(s), f(l), f(d), ints(&pads)];
        let want = interpret(&parsed, "main", &ins);
        let host: Vec<HostTensor> = ins.iter().map(HostTensor::from_tensor).collect();
        let got: Vec<Tensor> = session
            .run(&host)
            .unwrap_or_else(|e| panic!("run {i}: {e}"))
            .iter()
            .map(|t| t.to_tensor().unwrap())
            .collect();
        assert_eq!([got[0].len(), got[1].len()], sizes, "case {i}");
        assert_close(&got, &want, &format!("case {i}"));
    }
    assert_eq!(session.plans_built(), 3);
    // A zero step is refused by graph.range's own infer, naming the op.
    let ins = [f(0.0), f(5.0), f(0.0), ints(&[0, 0])];
    let host: Vec<HostTensor> = ins.iter().map(HostTensor::from_tensor).collect();
    let e = session.run(&host).expect_err("must fail").to_string();
    assert!(e.contains("'graph.range'") && e.contains("zero"), "{e}");
}
