#!/usr/bin/env python3
"""Generate small ONNX models whose Loop body decides shapes from its own values
(issue 15: body values deciding body shapes, the test_loop11 pattern) into
testdata/onnx/dynamic/, with inputs and reference outputs per case
(<model>.<case>.in<i>.npy / .out<i>.npy).

    .venv/bin/python tools/models/gen_loop_body_values.py

References come from onnxruntime (tools/models/gen_dynamic_models.py `reference`).
Seeded: reruns give the same bytes. lit-tests/dynamic/loop-body-values.test runs
these models.

- loop_body_slice: x [8] and the trip count m (int64 scalar) are inputs; the body
  slices x from the iteration number i to i + 2 (starts/ends computed from i: the
  slice is 2, then 1 element long at i = 7, then empty past the end), sums it
  (ReduceSum keepdims -> [1]) into a carried [1] and a scan output. Cases m = 3,
  8 and 10.
- loop_body_reshape_range: x [6] and m are inputs; the body builds
  Range(0, i + 1) (its length from i), reshapes x to [i % 2 + 1, -1] (the target
  from i) and takes ReduceMax over the rows; the sums (kept [1]) go to a carried
  [1] and a scan output. Cases m = 1, 4 and 7.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_dynamic_models import reference  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "testdata", "onnx", "dynamic")
rng = np.random.default_rng(1516)


def save(name, model, cases):
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
    print("wrote", os.path.relpath(os.path.join(OUT, name + ".onnx"), ROOT))


def const(name, value):
    return helper.make_node(
        "Constant", [], [name], name=name, value=numpy_helper.from_array(np.array(value), name)
    )


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def loop_model(name, body, x_len, carried0, carried_shape, scan_rank):
    t = numpy_helper.from_array(np.array(True), "t")
    c0 = numpy_helper.from_array(carried0, "c0")
    nodes = [helper.make_node("Loop", ["m", "t", "c0"], ["acc", "ys"], name="loop", body=body)]
    ys = helper.make_tensor_value_info("ys", TensorProto.FLOAT, None)
    ys.type.tensor_type.shape.dim.extend([onnx.TensorShapeProto.Dimension()] * scan_rank)
    g = helper.make_graph(
        nodes,
        name,
        [vi("x", TensorProto.FLOAT, [x_len]), vi("m", TensorProto.INT64, [])],
        [vi("acc", TensorProto.FLOAT, carried_shape), ys],
        [t, c0],
    )
    return helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", 18)],
        producer_name="ge tools/models/gen_loop_body_values.py",
        ir_version=10,
    )


def loop_body_slice():
    nodes = [
        helper.make_node("Identity", ["c_in"], ["c_out"]),
        const("two", np.int64(2)),
        const("zero", np.array([0], np.int64)),
        helper.make_node("Add", ["i", "two"], ["end"], name="end"),
        helper.make_node("Unsqueeze", ["i", "zero"], ["starts"], name="starts"),
        helper.make_node("Unsqueeze", ["end", "zero"], ["ends"], name="ends"),
        helper.make_node("Slice", ["x", "starts", "ends"], ["s"], name="slice"),
        helper.make_node("ReduceSum", ["s", "zero"], ["r"], name="sum", keepdims=1),
        helper.make_node("Add", ["a_in", "r"], ["a_out"], name="acc"),
        helper.make_node("Identity", ["r"], ["scan"], name="scan"),
    ]
    body = helper.make_graph(
        nodes,
        "body",
        [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []), vi("a_in", TensorProto.FLOAT, [1])],
        [vi("c_out", TensorProto.BOOL, []), vi("a_out", TensorProto.FLOAT, [1]), vi("scan", TensorProto.FLOAT, [1])],
    )
    m = loop_model("loop_body_slice", body, 8, np.zeros(1, np.float32), [1], 2)
    x = rng.standard_normal(8).astype(np.float32)
    cases = [(f"m{k}", [("x", x), ("m", np.array(k, np.int64))]) for k in (3, 8, 10)]
    save("loop_body_slice", m, cases)


def loop_body_reshape_range():
    nodes = [
        helper.make_node("Identity", ["c_in"], ["c_out"]),
        const("one", np.int64(1)),
        const("two", np.int64(2)),
        const("zero", np.array([0], np.int64)),
        const("axis1", np.array([1], np.int64)),
        const("minus1", np.array([-1], np.int64)),
        const("f0", np.float32(0)),
        const("f1", np.float32(1)),
        helper.make_node("Add", ["i", "one"], ["ip1"], name="ip1"),
        helper.make_node("Cast", ["ip1"], ["limit"], name="limit", to=TensorProto.FLOAT),
        helper.make_node("Range", ["f0", "limit", "f1"], ["r"], name="range"),
        helper.make_node("ReduceSum", ["r"], ["rs"], name="range_sum", keepdims=1),
        helper.make_node("Mod", ["i", "two"], ["par"], name="parity"),
        helper.make_node("Add", ["par", "one"], ["rows"], name="rows"),
        helper.make_node("Unsqueeze", ["rows", "zero"], ["rows1"], name="rows1"),
        helper.make_node("Concat", ["rows1", "minus1"], ["target"], name="target", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["xr"], name="reshape"),
        helper.make_node("ReduceMax", ["xr", "axis1"], ["mx"], name="row_max", keepdims=0),
        helper.make_node("ReduceSum", ["mx"], ["ms"], name="max_sum", keepdims=1),
        helper.make_node("Add", ["rs", "ms"], ["scan"], name="step"),
        helper.make_node("Add", ["a_in", "scan"], ["a_out"], name="acc"),
    ]
    body = helper.make_graph(
        nodes,
        "body",
        [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []), vi("a_in", TensorProto.FLOAT, [1])],
        [vi("c_out", TensorProto.BOOL, []), vi("a_out", TensorProto.FLOAT, [1]), vi("scan", TensorProto.FLOAT, [1])],
    )
    m = loop_model("loop_body_reshape_range", body, 6, np.zeros(1, np.float32), [1], 2)
    x = rng.standard_normal(6).astype(np.float32)
    cases = [(f"m{k}", [("x", x), ("m", np.array(k, np.int64))]) for k in (1, 4, 7)]
    save("loop_body_reshape_range", m, cases)


if __name__ == "__main__":
    loop_body_slice()
    loop_body_reshape_range()
