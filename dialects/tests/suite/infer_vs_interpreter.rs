//! Property: for random shapes and attributes, the types `infer-shapes`
//! gives an op whose results were declared unranked (`tensor<*xf32>`) are
//! exactly the shapes the reference interpreter produces.

use ge_ir::interp::Interpreter;
use ge_ir::tensor::Tensor;
use ge_ir::DType;
use proptest::prelude::*;

fn ty(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    if dims.is_empty() {
        "tensor<f32>".into()
    } else {
        format!("tensor<{}xf32>", dims.join("x"))
    }
}

fn list(v: &[i64]) -> String {
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", s.join(", "))
}

/// One op applied to arguments of the given shapes, results unranked.
#[derive(Clone, Debug)]
struct Case {
    op: String,
    args: Vec<Vec<usize>>,
    attrs: String,
    results: usize,
}

impl Case {
    fn text(&self) -> String {
        let params: Vec<String> = self
            .args
            .iter()
            .enumerate()
            .map(|(i, s)| format!("%a{i}: {}", ty(s)))
            .collect();
        let uses: Vec<String> = (0..self.args.len()).map(|i| format!("%a{i}")).collect();
        let tys: Vec<String> = self.args.iter().map(|s| ty(s)).collect();
        let rtys = vec!["tensor<*xf32>"; self.results].join(", ");
        let rets: Vec<String> = (0..self.results).map(|i| format!("%r#{i}")).collect();
        format!(
            "graph.func @f({}) -> ({rtys}) {{\n  %r:{} = \"{}\"({}) {} : ({}) -> ({rtys})\n  graph.return {} : {rtys}\n}}\n",
            params.join(", "),
            self.results,
            self.op,
            uses.join(", "),
            self.attrs,
            tys.join(", "),
            rets.join(", "),
        )
    }
}

fn dim() -> impl Strategy<Value = usize> {
    1usize..5
}

/// Two shapes that broadcast (numpy rules): some dims 1, some dropped.
fn broadcast_pair() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    (
        prop::collection::vec(dim(), 1..4),
        prop::collection::vec(0u8..3, 4),
        0usize..3,
    )
        .prop_map(|(shape, how, drop)| {
            let other: Vec<usize> = shape
                .iter()
                .zip(&how)
                .map(|(&d, &h)| if h == 0 { 1 } else { d })
                .collect();
            let drop = drop.min(other.len() - 1);
            (shape, other[drop..].to_vec())
        })
}

fn cases() -> impl Strategy<Value = Case> {
    prop_oneof![
        (
            broadcast_pair(),
            prop::sample::select(vec![
                "graph.add",
                "graph.mul",
                "graph.sub",
                "graph.div",
                "graph.max"
            ]),
            any::<bool>()
        )
            .prop_map(|((a, b), op, swap)| Case {
                op: op.into(),
                args: if swap { vec![b, a] } else { vec![a, b] },
                attrs: String::new(),
                results: 1,
            }),
        (prop::collection::vec(dim(), 0..3), dim(), dim(), dim()).prop_map(|(batch, m, k, n)| {
            let mut a = batch.clone();
            a.extend([m, k]);
            let mut b = batch;
            b.extend([k, n]);
            Case {
                op: "graph.matmul".into(),
                args: vec![a, b],
                attrs: String::new(),
                results: 1,
            }
        }),
        (
            (1usize..3, 1usize..4, 3usize..9, 3usize..9),
            (
                1usize..4,
                1usize..4,
                1i64..3,
                0i64..2,
                1i64..3,
                any::<bool>()
            )
        )
            .prop_map(|((n, c, h, w), (o, k, s, p, dil, depthwise))| {
                let (o, group, cin) = if depthwise { (c, c, 1) } else { (o, 1, c) };
                let k = k.min(h.min(w));
                let dil = if dil as usize * (k - 1) < h.min(w) {
                    dil
                } else {
                    1
                };
                Case {
                    op: "graph.conv2d".into(),
                    args: vec![vec![n, c, h, w], vec![o, cin, k, k]],
                    attrs: format!(
                        "{{strides = {}, pads = {}, dilations = {}, group = {group} : i64}}",
                        list(&[s, s]),
                        list(&[p, p, p, p]),
                        list(&[dil, dil]),
                    ),
                    results: 1,
                }
            }),
        (
            (1usize..3, 1usize..4, 3usize..9, 3usize..9),
            1i64..4,
            1i64..3,
            any::<bool>()
        )
            .prop_map(|((n, c, h, w), k, s, max)| {
                let k = k.min(h.min(w) as i64);
                Case {
                    op: if max {
                        "graph.max_pool2d"
                    } else {
                        "graph.avg_pool2d"
                    }
                    .into(),
                    args: vec![vec![n, c, h, w]],
                    attrs: format!(
                        "{{kernel_shape = {}, strides = {}}}",
                        list(&[k, k]),
                        list(&[s, s])
                    ),
                    results: 1,
                }
            }),
        (
            prop::collection::vec(dim(), 1..5),
            any::<prop::sample::Index>()
        )
            .prop_map(|(shape, i)| {
                let mut perm: Vec<i64> = (0..shape.len() as i64).collect();
                let r = i.index(perm.len());
                perm.rotate_left(r);
                Case {
                    op: "data.transpose".into(),
                    args: vec![shape],
                    attrs: format!("{{perm = {}}}", list(&perm)),
                    results: 1,
                }
            }),
        (
            prop::collection::vec(dim(), 1..4),
            prop::collection::vec(any::<bool>(), 4),
            any::<bool>()
        )
            .prop_map(|(shape, pick, keep)| {
                let axes: Vec<i64> = (0..shape.len() as i64)
                    .filter(|&i| pick[i as usize])
                    .collect();
                Case {
                    op: "graph.reduce_sum".into(),
                    args: vec![shape],
                    attrs: format!(
                        "{{axes = {}, keepdims = {} : i64}}",
                        list(&axes),
                        keep as i64
                    ),
                    results: 1,
                }
            }),
        (
            prop::collection::vec(dim(), 1..4),
            dim(),
            any::<prop::sample::Index>()
        )
            .prop_map(|(shape, extra, i)| {
                let axis = i.index(shape.len());
                let mut other = shape.clone();
                other[axis] = extra;
                Case {
                    op: "data.concat".into(),
                    args: vec![shape, other],
                    attrs: format!("{{axis = {axis} : i64}}"),
                    results: 1,
                }
            }),
        (
            prop::collection::vec(dim(), 1..4),
            any::<prop::sample::Index>(),
            0usize..4,
            1usize..5
        )
            .prop_map(|(shape, i, a, len)| {
                let axis = i.index(shape.len());
                let start = a.min(shape[axis] - 1);
                let end = (start + len).min(shape[axis]);
                Case {
                    op: "data.slice".into(),
                    args: vec![shape],
                    attrs: format!(
                        "{{starts = {}, ends = {}, axes = {}}}",
                        list(&[start as i64]),
                        list(&[end as i64]),
                        list(&[axis as i64])
                    ),
                    results: 1,
                }
            }),
        (prop::collection::vec(dim(), 2..4)).prop_map(|shape| {
            let last = *shape.last().unwrap_or(&1) as i64;
            Case {
                op: "data.reshape".into(),
                args: vec![shape],
                attrs: format!("{{shape = {}}}", list(&[-1, last])),
                results: 1,
            }
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn inferred_types_are_the_interpreters_shapes(case in cases()) {
        let ctx = ge_dialects::context();
        let text = case.text();
        let mut m = ge_ir::parser::parse_module(&ctx, "case.air", &text, ge_ir::parser::ParseOptions::default())
            .map_err(|d| TestCaseError::fail(format!("{}\n{text}", d.message)))?;
        let diags = ge_ir::verifier::verify_module(&m);
        prop_assume!(!diags.iter().any(|d| d.is_error()), "not a valid case: {:?}", diags.first().map(|d| &d.message));
        ge_ir::passes::infer_shapes::infer_module(&mut m)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let f = m.lookup_symbol("f").ok_or_else(|| TestCaseError::fail("no @f"))?;
        let ft = m.body().op(f).attr("function_type").and_then(|a| a.as_type());
        let outs: Vec<ge_ir::Type> = ft.and_then(|t| t.as_function().map(|(_, o)| o.to_vec())).unwrap_or_default();
        let inputs: Vec<Tensor> = case
            .args
            .iter()
            .map(|s| {
                let n: usize = s.iter().product();
                Tensor::from_f64(s.clone(), DType::F32, (0..n).map(|i| (i % 7) as f64 - 3.0).collect())
            })
            .collect();
        let got = Interpreter::new(&m)
            .run_function("f", inputs)
            .map_err(|e| TestCaseError::fail(format!("{}\n{text}", e.msg)))?;
        prop_assert_eq!(got.len(), outs.len());
        for (t, o) in got.iter().zip(&outs) {
            let want: Vec<i64> = t.shape.iter().map(|&d| d as i64).collect();
            let inferred = o.as_tensor().and_then(|tt| tt.static_shape());
            prop_assert_eq!(inferred, Some(want), "{}", text);
        }
    }
}
