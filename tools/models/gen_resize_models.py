#!/usr/bin/env python3
"""Generate small ONNX models of Resize, Upsample and CumSum in the forms the node
tests use (scales, sizes, roi and axis as graph inputs, read at run time) into
testdata/onnx/resize/ — with inputs and reference outputs per case
(<model>.<case>.in<i>.npy / .out<i>.npy) — and models the importer must refuse.

    .venv/bin/pip install -r tools/conformance/requirements.txt   # onnx
    .venv/bin/python tools/models/gen_resize_models.py

References come from onnxruntime when it is installed, else from
`onnx.reference.ReferenceEvaluator`. Seeded: reruns give the same bytes.
lit-tests/frontends/onnx-resize-cumsum.test runs these models.

- cumsum_axis: CumSum(x [2, 3] f64, axis int32 graph input, exclusive=1);
  cases axis 0 and -1.
- resize_cubic_aa: Resize(X [1, 1, 4, 4], scales a graph input), cubic, antialias,
  output declared [1, 1, 2, 2]; case scales [1, 1, 0.6, 0.6].
- resize_crop_axes: Resize(X [1, 1, 4, 4], roi and sizes graph inputs, axes [3, 2]),
  linear, tf_crop_and_resize, extrapolation_value 10, declared [1, 1, 3, 3].
- resize_not_smaller: Resize(X [1, 1, 2, 4], sizes a constant [1, 3] on axes [2, 3],
  not_smaller, half_pixel_symmetric linear): output [1, 1, 2, 3] at import.
- upsample_scales: Upsample-9(X [1, 1, 2, 2], scales a graph input) nearest,
  declared [1, 1, 4, 6].
- bad_*: refused at import (nearest with antialias; mode 'area').
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_dynamic_models import reference  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "testdata", "onnx", "resize")
rng = np.random.default_rng(161)
F, I64, I32, D = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.DOUBLE


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def model(nodes, inputs, outputs, inits=(), opset=19):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="ge tools/models/gen_resize_models.py",
        ir_version=10,
    )


def save(name, m, cases=(), check=True):
    if check:
        onnx.checker.check_model(m, full_check=True)
    os.makedirs(OUT, exist_ok=True)
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    if cases:
        run = reference(m)
    for case, feeds in cases:
        outs = run(dict(feeds))
        for i, (_, v) in enumerate(feeds):
            np.save(os.path.join(OUT, f"{name}.{case}.in{i}.npy"), v)
        for i, v in enumerate(outs):
            np.save(os.path.join(OUT, f"{name}.{case}.out{i}.npy"), np.ascontiguousarray(v))
    print("wrote", os.path.relpath(os.path.join(OUT, name + ".onnx"), ROOT))


def image(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1


def main():
    x = rng.standard_normal((2, 3))
    nodes = [helper.make_node("CumSum", ["x", "axis"], ["y"], name="cumsum", exclusive=1)]
    m = model(nodes, [vi("x", D, [2, 3]), vi("axis", I32, [])], [vi("y", D, [2, 3])], opset=14)
    save("cumsum_axis", m, [(f"a{a}".replace("-", "m"), [("x", x), ("axis", np.array(a, np.int32))]) for a in (0, -1)])

    nodes = [helper.make_node("Resize", ["X", "", "scales"], ["Y"], name="resize", mode="cubic", antialias=1)]
    m = model(nodes, [vi("X", F, [1, 1, 4, 4]), vi("scales", F, [4])], [vi("Y", F, [1, 1, 2, 2])])
    save("resize_cubic_aa", m, [("s06", [("X", image(1, 1, 4, 4)), ("scales", np.array([1, 1, 0.6, 0.6], np.float32))])])

    nodes = [
        helper.make_node(
            "Resize",
            ["X", "roi", "", "sizes"],
            ["Y"],
            name="resize",
            mode="linear",
            axes=[3, 2],
            coordinate_transformation_mode="tf_crop_and_resize",
            extrapolation_value=10.0,
        )
    ]
    m = model(nodes, [vi("X", F, [1, 1, 4, 4]), vi("roi", F, [4]), vi("sizes", I64, [2])], [vi("Y", F, [1, 1, 3, 3])])
    feeds = [("X", image(1, 1, 4, 4)), ("roi", np.array([0.4, 0.6, 1.2, 1.7], np.float32)), ("sizes", np.array([3, 3], np.int64))]
    save("resize_crop_axes", m, [("c", feeds)])

    sizes = numpy_helper.from_array(np.array([1, 3], np.int64), "sizes")
    nodes = [
        helper.make_node(
            "Resize",
            ["X", "", "", "sizes"],
            ["Y"],
            name="resize",
            mode="linear",
            axes=[2, 3],
            keep_aspect_ratio_policy="not_smaller",
            coordinate_transformation_mode="half_pixel_symmetric",
        )
    ]
    m = model(nodes, [vi("X", F, [1, 1, 2, 4])], [vi("Y", F, [1, 1, 2, 3])], [sizes])
    save("resize_not_smaller", m, [("c", [("X", image(1, 1, 2, 4))])])

    nodes = [helper.make_node("Upsample", ["X", "scales"], ["Y"], name="upsample", mode="nearest")]
    m = model(nodes, [vi("X", F, [1, 1, 2, 2]), vi("scales", F, [4])], [vi("Y", F, [1, 1, 4, 6])], opset=9)
    save("upsample_scales", m, [("s23", [("X", image(1, 1, 2, 2)), ("scales", np.array([1, 1, 2, 3], np.float32))])])

    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    for name, attrs in [("bad_nearest_antialias", {"antialias": 1}), ("bad_mode", {"mode": "area"})]:
        nodes = [helper.make_node("Resize", ["X", "", "scales"], ["Y"], name="resize", **attrs)]
        m = model(nodes, [vi("X", F, [1, 1, 2, 2])], [vi("Y", F, [1, 1, 4, 4])], [scales])
        save(name, m, check=False)


if __name__ == "__main__":
    main()
