#!/usr/bin/env python3
"""Generate small ONNX models whose shape-like operands are graph inputs (issue 15
item 3, hybrid execution) into testdata/onnx/hybrid/ — with inputs and reference
outputs per case (<model>.<case>.in<i>.npy / .out<i>.npy).

    .venv/bin/pip install -r tools/conformance/requirements.txt   # onnx
    .venv/bin/python tools/models/gen_hybrid_models.py

References come from onnxruntime when it is installed, else from
`onnx.reference.ReferenceEvaluator` (numpy). Seeded: reruns give the same bytes.
lit-tests/dynamic/hybrid.test runs these models.

- hybrid_reshape: x [2, 3, 4] -> Reshape(x, shape) with `shape` an int64 graph
  input -> Relu -> Mul by a weight [4]; the reshaped value's type is declared
  [6, 4] (value_info), as exporters write it. Cases: shape [6, 4] and [-1, 4];
  a third input set, shape [4, 6], contradicts the declared type (its output is
  not written: the run must fail with a clear error).
- hybrid_reduce: x [3, 4, 5] -> ReduceSum(x, axes) with `axes` an int64 graph
  input, keepdims 0 -> Add a weight [5]; declared [3, 5]. Cases: axes [1], [-2].
- hybrid_nonzero: NonZero of a graph input, the output declared [2, N].

Size symbols (a result size decided only when an op ran; planned at its bound):

- size_nonzero: x [3, 4] -> Relu -> NonZero (a computed value) -> y [2, K]; and
  z = Cast(Transpose(y), float) * w [2] -> [K, 2]; both outputs undeclared dims.
  Cases: a random mix, all negative (K = 0), all positive (K = 12, the bound).
- size_compress: Compress(x [3, 4], c [4] bool, axis=1) -> Neg; c a graph input
  (NonZero of the condition, gathered). Cases: 2 of 4 columns, none, all.
- size_unique: Unique(Relu(x [2, 4]), axis=1, sorted) -> Y [2, K] (then * 2),
  indices [K], inverse_indices [4], counts [K]. Cases: one distinct column (K = 1,
  the least: a non-empty operand), two, all four (K = 4, the bound).
- size_nms: NonMaxSuppression(boxes [1, 6, 4], scores [1, 2, 6], max, 0.5, th) with
  max and th graph inputs (bound 1 * 2 * 6 = 12), the selection cast to float and
  scaled. Cases: every score under th (K = 0), six disjoint boxes and max 6 (K = 12,
  the bound), overlapping boxes and max 2 (between).

Value symbols (the result shape is decided by the values and declared nowhere: the
import gives its dims fresh symbols, the runtime binds them at run start):

- value_reshape: x [2, 3, 4] -> Reshape(x, shape) -> Relu -> ReduceSum(axes) with
  keepdims 0 -> Add a scalar weight; `shape` and `axes` are int64 graph inputs, no
  value_info (the ranks follow from the ops), the output declared [?]. Cases at different sizes: shape [6, 4]
  axes [0], shape [-1, 2] axes [1], shape [24, 1] axes [1].
- value_expand: y = Expand(x [3, 1], shape) and z = Tile(x, repeats), outputs
  declared [?, ?, ?] and [?, ?].
  Cases: shape [2, 3, 4] repeats [2, 5]; shape [3, 1] repeats [1, 1]; shape [1, 3, 7]
  repeats [4, 2].
- value_constant_of_shape: y = ConstantOfShape(shape, 1.5) * w (a scalar weight),
  the intermediate undeclared, the output [?, ?]. Cases: [2, 3],
  [5, 1], [1, 7].
- value_range: y = Range(start, limit, delta) * 2 with all three float graph inputs,
  the output undeclared. Cases: 0..5 by 1 (5), 1..10 by 3 (3), 10 down to 4 by -3 (2),
  5..0 by 1 (empty); bad inputs: delta 0, a length of 10^13 (over the memory budget).
- value_onehot: OneHot(indices [2, 3] int64, depth (an int64 scalar input), values
  [off, on], axis=1) -> [2, depth, 3]. Cases: depth 4 (with -1 wrapping), 10, 1.
- value_pad_axes: Pad(x [2, 3, 4], pads, value, axes) with pads, the constant value
  and axes ([2]) graph inputs, the output undeclared. Cases: axes [1, 2], axes
  [-1, 0], axes [0, 2] with a crop (negative pads).

Values computed in the model at run start (a host prefix of small ops evaluated by
the runtime before the shape is planned):

- value_computed: Reshape(x [2, 3], Abs(shape)). Cases: shape [3, 2], [-6, -1].
- value_topk: TopK(x [3, 8], k + 1, axis=1) with `k` an int64 [1] graph input; both
  outputs undeclared. Cases: k 0, 3, 7 (K = 1, 4, 8); bad: k 8 (K = 9 > 8).
- value_center_crop: CenterCropPad's expansion by hand on x [N, 6] (N a dim_param):
  pads = (max(Shape(x), shape) - Shape(x)) split in halves, Pad, then a Slice whose
  bounds read the padded value's shape (value symbols) and `shape` (an int64 [2]
  input). Cases: x [4, 6] to [6, 4], x [3, 6] to [2, 2], x [5, 6] to [7, 9].
- value_onehot's bad cases: depth 0 and -2 (onnxruntime refuses both).

Loops whose trip count the model computes (the scan outputs' length is a value
symbol bound at run start; docs/architecture.md "Execution modes"):

- loop_trip_count: M = Add(k, 1) with `k` an int64 scalar input, cond a constant
  true; body: s = s + x (x [2, 3], captured), scan output s * i (the iteration
  number, cast) -> Y [M, 2, 3], then Relu(Y). Cases: k 0, 2 and 6 (M = 1, 3, 7)
  and k -1 (no iteration: the scan output is empty).
- loop_early_exit: the body computes its condition (i < 2): the scan output's
  length is known only when the loop has run: an import error naming the node
  (model only).
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_dynamic_models import reference  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "testdata", "onnx", "hybrid")
rng = np.random.default_rng(153)


def save(name, model, cases, bad=()):
    onnx.checker.check_model(model, full_check=True)
    os.makedirs(OUT, exist_ok=True)
    onnx.save(model, os.path.join(OUT, name + ".onnx"))
    run = reference(model)
    for case, feeds in cases:
        outs = run(dict(feeds))
        for i, (_, v) in enumerate(feeds):
            np.save(os.path.join(OUT, f"{name}.{case}.in{i}.npy"), v)
        for i, v in enumerate(outs):
            np.save(os.path.join(OUT, f"{name}.{case}.out{i}.npy"), np.ascontiguousarray(v))
    for case, feeds in bad:
        for i, (_, v) in enumerate(feeds):
            np.save(os.path.join(OUT, f"{name}.{case}.in{i}.npy"), v)
    print("wrote", os.path.relpath(os.path.join(OUT, name + ".onnx"), ROOT))


def model(nodes, inputs, outputs, inits, value_info=(), opset=18):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits, value_info=list(value_info))
    return helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="ge tools/models/gen_hybrid_models.py",
        ir_version=10,
    )


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def hybrid_reshape():
    w = numpy_helper.from_array(f32(4), "w")
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Relu", ["r"], ["a"], name="relu"),
        helper.make_node("Mul", ["a", "w"], ["y"], name="mul"),
    ]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 4])],
        [w],
        value_info=[helper.make_tensor_value_info("r", TensorProto.FLOAT, [6, 4])],
    )
    x = f32(2, 3, 4)
    cases = [
        ("s6x4", [("x", x), ("shape", np.array([6, 4], np.int64))]),
        ("sm1x4", [("x", x), ("shape", np.array([-1, 4], np.int64))]),
    ]
    bad = [("s4x6", [("x", x), ("shape", np.array([4, 6], np.int64))])]
    save("hybrid_reshape", m, cases, bad)


def hybrid_reduce():
    w = numpy_helper.from_array(f32(5), "w")
    nodes = [
        helper.make_node("ReduceSum", ["x", "axes"], ["s"], name="reduce", keepdims=0),
        helper.make_node("Add", ["s", "w"], ["y"], name="add"),
    ]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5]),
            helper.make_tensor_value_info("axes", TensorProto.INT64, [1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])],
        [w],
        value_info=[helper.make_tensor_value_info("s", TensorProto.FLOAT, [3, 5])],
    )
    x = f32(3, 4, 5)
    cases = [
        ("a1", [("x", x), ("axes", np.array([1], np.int64))]),
        ("am2", [("x", x), ("axes", np.array([-2], np.int64))]),
    ]
    save("hybrid_reduce", m, cases)


def hybrid_nonzero():
    nodes = [helper.make_node("NonZero", ["x"], ["y"], name="nonzero")]
    m = model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2, "N"])],
        [],
    )
    x = (rng.standard_normal((3, 4)) > 0).astype(np.float32)
    save("hybrid_nonzero", m, [("r", [("x", x)])])


def undeclared(name, rank):
    """An output of known rank whose dims are declared unknown (no value, no param)."""
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, [None] * rank)


def value_reshape():
    w = numpy_helper.from_array(np.array(0.5, np.float32), "w")
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Relu", ["r"], ["a"], name="relu"),
        helper.make_node("ReduceSum", ["a", "axes"], ["s"], name="reduce", keepdims=0),
        helper.make_node("Add", ["s", "w"], ["y"], name="add"),
    ]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
            helper.make_tensor_value_info("axes", TensorProto.INT64, [1]),
        ],
        [undeclared("y", 1)],
        [w],
    )
    x = f32(2, 3, 4)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    cases = [
        ("s6x4", [("x", x), ("shape", i64(6, 4)), ("axes", i64(0))]),
        ("sm1x2", [("x", x), ("shape", i64(-1, 2)), ("axes", i64(1))]),
        ("s24x1", [("x", x), ("shape", i64(24, 1)), ("axes", i64(1))]),
    ]
    save("value_reshape", m, cases)


def value_expand():
    nodes = [
        helper.make_node("Expand", ["x", "shape"], ["y"], name="expand"),
        helper.make_node("Tile", ["x", "repeats"], ["z"], name="tile"),
    ]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [3]),
            helper.make_tensor_value_info("repeats", TensorProto.INT64, [2]),
        ],
        [undeclared("y", 3), undeclared("z", 2)],
        [],
    )
    x = f32(3, 1)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    cases = [
        ("a", [("x", x), ("shape", i64(2, 3, 4)), ("repeats", i64(2, 5))]),
        ("b", [("x", x), ("shape", i64(1, 3, 1)), ("repeats", i64(1, 1))]),
        ("c", [("x", x), ("shape", i64(2, 1, 7)), ("repeats", i64(4, 2))]),
    ]
    save("value_expand", m, cases)


def value_constant_of_shape():
    w = numpy_helper.from_array(np.array(3.0, np.float32), "w")
    one = numpy_helper.from_array(np.array([1.5], np.float32), "value")
    nodes = [
        helper.make_node("ConstantOfShape", ["shape"], ["c"], name="cos", value=one),
        helper.make_node("Mul", ["c", "w"], ["y"], name="mul"),
    ]
    m = model(
        nodes,
        [helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [undeclared("y", 2)],
        [w],
    )
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    cases = [("s2x3", [("shape", i64(2, 3))]), ("s5x1", [("shape", i64(5, 1))]), ("s1x7", [("shape", i64(1, 7))])]
    save("value_constant_of_shape", m, cases)


def hybrid_cumprod():
    nodes = [helper.make_node("CumProd", ["x", "axis"], ["y"], name="cumprod", reverse=1)]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("axis", TensorProto.INT64, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [],
        opset=26,
    )
    x = f32(2, 3)
    cases = [("a0", [("x", x), ("axis", np.array(0, np.int64))]), ("am1", [("x", x), ("axis", np.array(-1, np.int64))])]
    save("hybrid_cumprod", m, cases)


def value_computed():
    nodes = [
        helper.make_node("Abs", ["shape"], ["t"], name="abs"),
        helper.make_node("Reshape", ["x", "t"], ["y"], name="reshape"),
    ]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ],
        [undeclared("y", 2)],
        [],
    )
    x = f32(2, 3)
    cases = [
        ("s3x2", [("x", x), ("shape", np.array([3, 2], np.int64))]),
        ("s6x1", [("x", x), ("shape", np.array([-6, -1], np.int64))]),
    ]
    save("value_computed", m, cases)


def value_topk():
    one = numpy_helper.from_array(np.array([1], np.int64), "one")
    nodes = [
        helper.make_node("Add", ["k", "one"], ["kk"], name="k_plus_1"),
        helper.make_node("TopK", ["x", "kk"], ["v", "i"], name="topk", axis=1),
    ]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8]),
            helper.make_tensor_value_info("k", TensorProto.INT64, [1]),
        ],
        [undeclared("v", 2), helper.make_tensor_value_info("i", TensorProto.INT64, [None, None])],
        [one],
    )
    x = np.random.default_rng(1551).standard_normal((3, 8)).astype(np.float32)
    k = lambda v: np.array([v], np.int64)  # noqa: E731
    cases = [("k1", [("x", x), ("k", k(0))]), ("k4", [("x", x), ("k", k(3))]), ("k8", [("x", x), ("k", k(7))])]
    save("value_topk", m, cases, bad=[("k9", [("x", x), ("k", k(8))])])


def value_center_crop():
    two = numpy_helper.from_array(np.array([2], np.int64), "two")
    nodes = [
        helper.make_node("Shape", ["x"], ["xs"], name="shape_x"),
        helper.make_node("Max", ["xs", "shape"], ["padded"], name="max"),
        helper.make_node("Sub", ["padded", "xs"], ["amount"], name="amount"),
        helper.make_node("Div", ["amount", "two"], ["left"], name="left"),
        helper.make_node("Sub", ["amount", "left"], ["right"], name="right"),
        helper.make_node("Concat", ["left", "right"], ["pads"], name="pads", axis=0),
        helper.make_node("Pad", ["x", "pads"], ["p"], name="pad"),
        helper.make_node("Shape", ["p"], ["ps"], name="shape_p"),
        helper.make_node("Sub", ["ps", "shape"], ["diff"], name="diff"),
        helper.make_node("Div", ["diff", "two"], ["start"], name="start"),
        helper.make_node("Add", ["start", "shape"], ["end"], name="end"),
        helper.make_node("Slice", ["p", "start", "end"], ["y"], name="slice"),
    ]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ],
        [undeclared("y", 2)],
        [two],
    )
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    r = np.random.default_rng(1552)
    x = lambda n: r.standard_normal((n, 6)).astype(np.float32)  # noqa: E731
    cases = [
        ("a", [("x", x(4)), ("shape", i64(6, 4))]),
        ("b", [("x", x(3)), ("shape", i64(2, 2))]),
        ("c", [("x", x(5)), ("shape", i64(7, 9))]),
    ]
    save("value_center_crop", m, cases)


def size_nonzero():
    r = np.random.default_rng(1531)
    w = numpy_helper.from_array(np.array([0.5, -2.0], np.float32), "w")
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("NonZero", ["a"], ["y"], name="nonzero"),
        helper.make_node("Transpose", ["y"], ["t"], name="transpose", perm=[1, 0]),
        helper.make_node("Cast", ["t"], ["f"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["f", "w"], ["z"], name="mul"),
    ]
    m = model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [
            helper.make_tensor_value_info("y", TensorProto.INT64, [2, None]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [None, 2]),
        ],
        [w],
    )
    x = r.standard_normal((3, 4)).astype(np.float32)
    cases = [
        ("mixed", [("x", x)]),
        ("none", [("x", -np.abs(x) - 1)]),
        ("all", [("x", np.abs(x) + 1)]),
    ]
    save("size_nonzero", m, cases)


def size_compress():
    r = np.random.default_rng(1532)
    nodes = [
        helper.make_node("Compress", ["x", "c"], ["k"], name="compress", axis=1),
        helper.make_node("Neg", ["k"], ["y"], name="neg"),
    ]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, None])],
        [],
    )
    x = r.standard_normal((3, 4)).astype(np.float32)
    cases = [
        ("two", [("x", x), ("c", np.array([True, False, False, True]))]),
        ("none", [("x", x), ("c", np.zeros(4, bool))]),
        ("all", [("x", x), ("c", np.ones(4, bool))]),
    ]
    save("size_compress", m, cases)


def size_unique():
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node(
            "Unique", ["a"], ["u", "i", "inv", "c"], name="unique", axis=1, sorted=1
        ),
        helper.make_node("Add", ["u", "u"], ["y"], name="double"),
    ]
    m = model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, None]),
            helper.make_tensor_value_info("i", TensorProto.INT64, [None]),
            helper.make_tensor_value_info("inv", TensorProto.INT64, [4]),
            helper.make_tensor_value_info("c", TensorProto.INT64, [None]),
        ],
        [],
    )
    col = np.array([[1.5], [-2.0]], np.float32)
    two = np.array([[3.0, 1.0, 3.0, 1.0], [0.5, 2.0, 0.5, 2.0]], np.float32)
    cases = [
        ("one", [("x", np.repeat(col, 4, axis=1))]),
        ("two", [("x", two)]),
        ("all", [("x", np.array([[4, 3, 2, 1], [1, 2, 3, 4]], np.float32))]),
    ]
    save("size_unique", m, cases)


def size_nms():
    w = numpy_helper.from_array(np.array(0.5, np.float32), "w")
    iou = numpy_helper.from_array(np.array([0.5], np.float32), "iou")
    nodes = [
        helper.make_node(
            "NonMaxSuppression", ["boxes", "scores", "max", "iou", "th"], ["s"], name="nms"
        ),
        helper.make_node("Cast", ["s"], ["f"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["f", "w"], ["y"], name="mul"),
    ]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 6, 4]),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 2, 6]),
            helper.make_tensor_value_info("max", TensorProto.INT64, [1]),
            helper.make_tensor_value_info("th", TensorProto.FLOAT, [1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 3])],
        [w, iou],
    )
    apart = np.array([[[0, 2 * i, 1, 2 * i + 1] for i in range(6)]], np.float32)
    near = np.array([[[0, 0.1 * i, 1, 1 + 0.1 * i] for i in range(6)]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [0.1, 0.3, 0.5, 0.7, 0.9, 0.2]]], np.float32)
    cases = [
        ("none", [("boxes", apart), ("scores", scores), ("max", np.array([6])),
                  ("th", np.array([0.95], np.float32))]),
        ("all", [("boxes", apart), ("scores", scores), ("max", np.array([6])),
                 ("th", np.array([0.0], np.float32))]),
        ("some", [("boxes", near), ("scores", scores), ("max", np.array([2])),
                  ("th", np.array([0.0], np.float32))]),
    ]
    save("size_nms", m, cases)


def value_range():
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    nodes = [
        helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="range"),
        helper.make_node("Mul", ["r", "two"], ["y"], name="mul"),
    ]
    scalar = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [])  # noqa: E731
    m = model(nodes, [scalar("start"), scalar("limit"), scalar("delta")], [undeclared("y", 1)], [two])
    f = lambda *v: [(n, np.array(x, np.float32)) for n, x in zip(["start", "limit", "delta"], v)]  # noqa: E731
    cases = [("up5", f(0, 5, 1)), ("by3", f(1, 10, 3)), ("down", f(10, 4, -3)), ("empty", f(5, 0, 1))]
    bad = [("zero", f(0, 5, 0)), ("huge", f(0, 1e13, 1))]
    save("value_range", m, cases, bad)


def value_onehot():
    nodes = [helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], name="onehot", axis=1)]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("indices", TensorProto.INT64, [2, 3]),
            helper.make_tensor_value_info("depth", TensorProto.INT64, []),
            helper.make_tensor_value_info("values", TensorProto.FLOAT, [2]),
        ],
        [undeclared("y", 3)],
        [],
    )
    idx = np.array([[0, 1, -1], [3, 2, 0]], np.int64)
    vals = np.array([-1.0, 5.0], np.float32)
    d = lambda v: np.array(v, np.int64)  # noqa: E731
    cases = [
        ("d4", [("indices", idx), ("depth", d(4)), ("values", vals)]),
        ("d10", [("indices", idx), ("depth", d(10)), ("values", vals)]),
        ("d1", [("indices", idx), ("depth", d(1)), ("values", vals)]),
    ]
    bad = [
        ("d0", [("indices", idx), ("depth", d(0)), ("values", vals)]),
        ("dm2", [("indices", idx), ("depth", d(-2)), ("values", vals)]),
    ]
    save("value_onehot", m, cases, bad)


def value_pad_axes():
    nodes = [helper.make_node("Pad", ["x", "pads", "value", "axes"], ["y"], name="pad")]
    m = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
            helper.make_tensor_value_info("pads", TensorProto.INT64, [4]),
            helper.make_tensor_value_info("value", TensorProto.FLOAT, []),
            helper.make_tensor_value_info("axes", TensorProto.INT64, [2]),
        ],
        [undeclared("y", 3)],
        [],
    )
    x = f32(2, 3, 4)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    v = np.array(1.25, np.float32)
    cases = [
        ("a12", [("x", x), ("pads", i64(1, 0, 2, 3)), ("value", v), ("axes", i64(1, 2))]),
        ("am1", [("x", x), ("pads", i64(2, 0, 1, 0)), ("value", v), ("axes", i64(-1, 0))]),
        ("crop", [("x", x), ("pads", i64(-1, 0, 0, -2)), ("value", v), ("axes", i64(0, 2))]),
    ]
    save("value_pad_axes", m, cases)


def loop_body(cond_out_nodes, cond_out):
    nodes = [
        helper.make_node("Add", ["s_in", "x"], ["s_out"], name="acc"),
        helper.make_node("Cast", ["i"], ["fi"], name="cast_i", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["s_out", "fi"], ["scan"], name="scale"),
    ] + cond_out_nodes
    return helper.make_graph(
        nodes,
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [2, 3]),
        ],
        [
            helper.make_tensor_value_info(cond_out, TensorProto.BOOL, []),
            helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("scan", TensorProto.FLOAT, [2, 3]),
        ],
    )


def loop_model(body):
    one = numpy_helper.from_array(np.array(1, np.int64), "one")
    t = numpy_helper.from_array(np.array(True), "t")
    s0 = numpy_helper.from_array(np.zeros((2, 3), np.float32), "s0")
    nodes = [
        helper.make_node("Add", ["k", "one"], ["m"], name="trips"),
        helper.make_node("Loop", ["m", "t", "s0"], ["s", "ys"], name="loop", body=body),
        helper.make_node("Relu", ["ys"], ["y"], name="relu"),
    ]
    return model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("k", TensorProto.INT64, []),
        ],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 3]), undeclared("y", 3)],
        [one, t, s0],
    )


def loop_trip_count():
    m = loop_model(loop_body([helper.make_node("Identity", ["c_in"], ["c_out"])], "c_out"))
    x = np.random.default_rng(7).standard_normal((2, 3)).astype(np.float32)
    k = lambda v: [("x", x), ("k", np.array(v, np.int64))]  # noqa: E731
    save("loop_trip_count", m, [("m1", k(0)), ("m3", k(2)), ("m7", k(6)), ("m0", k(-1))])
    two = numpy_helper.from_array(np.array(2, np.int64), "two")
    early = loop_body([helper.make_node("Less", ["i", "two"], ["c_out"], name="early")], "c_out")
    early.initializer.append(two)
    save("loop_early_exit", loop_model(early), [])


if __name__ == "__main__":
    hybrid_reshape()
    hybrid_reduce()
    hybrid_nonzero()
    value_reshape()
    value_expand()
    value_constant_of_shape()
    value_computed()
    value_topk()
    value_center_crop()
    hybrid_cumprod()
    size_nonzero()
    size_compress()
    size_unique()
    size_nms()
    value_range()
    value_onehot()
    value_pad_axes()
    loop_trip_count()
