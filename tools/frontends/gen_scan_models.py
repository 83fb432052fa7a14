#!/usr/bin/env python3
"""Generate the ONNX Scan test models in testdata/onnx/scan (lit-tests/frontends/onnx-scan*.test).

    /work/venvs/torch/bin/python tools/frontends/gen_scan_models.py   # onnx + onnxruntime

Good models get onnxruntime's outputs as their reference, saved as .npy next to them
(<model>.in<i>.npy, <model>.out<i>.npy). The bad models each break one rule of Scan that the
importer reports. Everything is seeded, so reruns give the same bytes.
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gen_test_models as g  # noqa: E402  (model(), vi(), f32(), save_onnx())

g.ONNX_DIR = os.path.join(g.ROOT, "testdata", "onnx", "scan")
g.rng = np.random.default_rng(16)
vi, f32 = g.vi, g.f32


def save(name, m, inputs=None, check=True):
    """Writes the model; with `inputs`, onnxruntime's outputs as the reference (the onnx
    reference evaluator runs no reversed Scan outputs)."""
    g.save_onnx(name, m, None, check=check)
    if inputs is None:
        return
    import onnxruntime as ort

    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, dict(inputs))
    for i, (_, v) in enumerate(inputs):
        np.save(os.path.join(g.ONNX_DIR, f"{name}.in{i}.npy"), v)
    for i, v in enumerate(outs):
        np.save(os.path.join(g.ONNX_DIR, f"{name}.out{i}.npy"), np.ascontiguousarray(v))


def body(nodes, inputs, outputs):
    return helper.make_graph(nodes, "scan_body", inputs, outputs)


def axes_and_directions():
    """Opset 11: a state, two scan inputs along different axes (the second read from the
    end, by a negative axis) and two scan outputs (the second stacked along the last axis,
    written from the end). s += a_t * b_t; y = s; z = b_t * 2."""
    b = body(
        [
            helper.make_node("Mul", ["a_t", "b_t"], ["p"]),
            helper.make_node("Add", ["s_in", "p"], ["s_out"]),
            helper.make_node("Identity", ["s_out"], ["y_t"]),
            helper.make_node("Add", ["b_t", "b_t"], ["z_t"]),
        ],
        [vi("s_in", [2]), vi("a_t", [2]), vi("b_t", [2])],
        [vi("s_out", [2]), vi("y_t", [2]), vi("z_t", [2])],
    )
    n = helper.make_node(
        "Scan", ["s0", "a", "b"], ["s", "y", "z"], name="scan", body=b, num_scan_inputs=2,
        scan_input_axes=[0, -1], scan_input_directions=[0, 1],
        scan_output_axes=[0, -1], scan_output_directions=[0, 1])
    m = g.model([n], [vi("s0", [2]), vi("a", [3, 2]), vi("b", [2, 3])],
                [vi("s", [2]), vi("y", [3, 2]), vi("z", [2, 3])], opset=11)
    save("scan_axes", m, [("s0", f32(2)), ("a", f32(3, 2)), ("b", f32(2, 3))])


def opset8_batch():
    """Opset 8: a batch of 2, the scan axis next, the scan input read from the end; the body
    uses a value of the enclosing graph (w) without declaring it."""
    b = body(
        [
            helper.make_node("Mul", ["x_t", "w"], ["p"]),
            helper.make_node("Add", ["s_in", "p"], ["s_out"]),
            helper.make_node("Identity", ["s_out"], ["y_t"]),
        ],
        [vi("s_in", [2]), vi("x_t", [2])],
        [vi("s_out", [2]), vi("y_t", [2])],
    )
    n = helper.make_node("Scan", ["", "s0", "x"], ["s", "y"], name="scan8", body=b,
                         num_scan_inputs=1, directions=[1])
    m = g.model([n], [vi("s0", [2, 2]), vi("x", [2, 4, 2]), vi("w", [2])],
                [vi("s", [2, 2]), vi("y", [2, 4, 2])], opset=8)
    save("scan8_batch", m, [("s0", f32(2, 2)), ("x", f32(2, 4, 2)), ("w", f32(2))])


def sum_body():
    return body(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_t"])],
        [vi("s_in", [2]), vi("x_t", [2])],
        [vi("s_out", [2]), vi("y_t", [2])],
    )


def bad_models():
    # Opset 8 with sequence_lens.
    n = helper.make_node("Scan", ["lens", "s0", "x"], ["s", "y"], name="with_lens",
                         body=sum_body(), num_scan_inputs=1)
    m = g.model([n], [vi("lens", [1], TensorProto.INT32), vi("s0", [1, 2]), vi("x", [1, 3, 2])],
                [vi("s", [1, 2]), vi("y", [1, 3, 2])], opset=8)
    save("scan8_sequence_lens", m)
    # num_scan_inputs larger than the inputs.
    n = helper.make_node("Scan", ["s0", "x"], ["s", "y"], name="too_many",
                         body=sum_body(), num_scan_inputs=3)
    m = g.model([n], [vi("s0", [2]), vi("x", [3, 2])], [vi("s", [2]), vi("y", [3, 2])], opset=11)
    save("scan_num_scan_inputs", m, check=False)
    # num_scan_inputs missing.
    n = helper.make_node("Scan", ["s0", "x"], ["s", "y"], name="no_num", body=sum_body())
    m = g.model([n], [vi("s0", [2]), vi("x", [3, 2])], [vi("s", [2]), vi("y", [3, 2])], opset=11)
    save("scan_no_num_scan_inputs", m, check=False)
    # A direction that is neither 0 nor 1.
    n = helper.make_node("Scan", ["s0", "x"], ["s", "y"], name="bad_dir", body=sum_body(),
                         num_scan_inputs=1, scan_input_directions=[2])
    m = g.model([n], [vi("s0", [2]), vi("x", [3, 2])], [vi("s", [2]), vi("y", [3, 2])], opset=11)
    save("scan_direction", m, check=False)
    # scan_output_axes with more entries than scan outputs.
    n = helper.make_node("Scan", ["s0", "x"], ["s", "y"], name="axes_len", body=sum_body(),
                         num_scan_inputs=1, scan_output_axes=[0, 1])
    m = g.model([n], [vi("s0", [2]), vi("x", [3, 2])], [vi("s", [2]), vi("y", [3, 2])], opset=11)
    save("scan_axes_len", m, check=False)
    # A scan axis out of range.
    n = helper.make_node("Scan", ["s0", "x"], ["s", "y"], name="axis_range", body=sum_body(),
                         num_scan_inputs=1, scan_input_axes=[2])
    m = g.model([n], [vi("s0", [2]), vi("x", [3, 2])], [vi("s", [2]), vi("y", [3, 2])], opset=11)
    save("scan_axis_range", m, check=False)
    # Scan inputs of different lengths.
    b = body(
        [helper.make_node("Add", ["a_t", "b_t"], ["y_t"])],
        [vi("a_t", [2]), vi("b_t", [2])],
        [vi("y_t", [2])],
    )
    n = helper.make_node("Scan", ["a", "b"], ["y"], name="lengths", body=b, num_scan_inputs=2)
    m = g.model([n], [vi("a", [3, 2]), vi("b", [4, 2])], [vi("y", [3, 2])], opset=11)
    save("scan_lengths", m, check=False)
    # A body taking the wrong number of inputs.
    b = body([helper.make_node("Identity", ["s_in"], ["s_out"])], [vi("s_in", [2])],
             [vi("s_out", [2])])
    n = helper.make_node("Scan", ["s0", "x"], ["s"], name="arity", body=b, num_scan_inputs=1)
    m = g.model([n], [vi("s0", [2]), vi("x", [3, 2])], [vi("s", [2])], opset=11)
    save("scan_body_inputs", m, check=False)
    # A scan axis of dynamic length (a named dim).
    n = helper.make_node("Scan", ["s0", "x"], ["s", "y"], name="dynamic", body=sum_body(),
                         num_scan_inputs=1)
    m = g.model([n], [vi("s0", [2]), vi("x", ["T", 2])], [vi("s", [2]), vi("y", ["T", 2])],
                opset=11)
    save("scan_dynamic_length", m)
    # A scan output of 400 GB: the accumulator is a broadcast zero, never built at import;
    # compiling it fails on the memory budget.
    b = body(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_t"])],
        [vi("s_in", [1000]), vi("x_t", [1000])],
        [vi("s_out", [1000]), vi("y_t", [1000])],
    )
    n = helper.make_node("Scan", ["s0", "x"], ["s", "y"], name="huge", body=b, num_scan_inputs=1)
    m = g.model([n], [vi("s0", [1000]), vi("x", [100000000, 1000])],
                [vi("s", [1000]), vi("y", [100000000, 1000])], opset=11)
    save("scan_huge", m)


def main():
    os.makedirs(g.ONNX_DIR, exist_ok=True)
    axes_and_directions()
    opset8_batch()
    bad_models()


if __name__ == "__main__":
    main()
