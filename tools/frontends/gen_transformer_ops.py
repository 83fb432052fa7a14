#!/usr/bin/env python3
"""Generate the ONNX test models of the transformer-era ops (LinearAttention,
CausalConvWithState, SwiGLU, TensorScatter; opsets 24-28) in testdata/onnx,
used by lit-tests/frontends/onnx-transformer-ops.test.

    python3 tools/frontends/gen_transformer_ops.py   (needs onnx >= 1.21 with opset 28)

`transformer_ops.onnx` chains the four ops; its reference outputs come from
`onnx.reference.ReferenceEvaluator` (transformer_ops.in<i>.npy / .out<i>.npy).
The `transformer_bad_*.onnx` files carry one attribute value the importer
refuses each. Seeded: reruns give the same bytes.
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "testdata", "onnx")
rng = np.random.default_rng(16)


def vi(name, shape, dt=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dt, shape)


def model(nodes, inputs, outputs, name):
    g = helper.make_graph(nodes, name, inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 28)], producer_name="ge-tests")


def save(name, m, inputs=None):
    path = os.path.join(OUT, name + ".onnx")
    onnx.save(m, path)
    if inputs is not None:
        outs = ReferenceEvaluator(m).run(None, dict(inputs))
        for i, (_, v) in enumerate(inputs):
            np.save(os.path.join(OUT, f"{name}.in{i}.npy"), v)
        for i, v in enumerate(outs):
            np.save(os.path.join(OUT, f"{name}.out{i}.npy"), np.ascontiguousarray(v))
    print("wrote", os.path.relpath(path, ROOT))


def main():
    # B = 1, T = 3, 2 query heads sharing 1 KV head (d_k = d_v = 2); the
    # attention output (1x3x4) goes through the causal convolution as 3
    # channels of length 4, then SwiGLU with itself, then into a cache.
    nodes = [
        helper.make_node("LinearAttention", ["q", "k", "v", "", "g", "beta"], ["attn", "state"],
                         q_num_heads=2, kv_num_heads=1),
        helper.make_node("CausalConvWithState", ["attn", "w", "", "past"], ["conv", "conv_state"],
                         activation="silu"),
        helper.make_node("SwiGLU", ["conv", "attn"], ["glu"], alpha=1.5),
        helper.make_node("TensorScatter", ["cache", "glu", "idx"], ["cache_out"], mode="circular", axis=1),
    ]
    m = model(
        nodes,
        [vi("q", [1, 3, 4]), vi("k", [1, 3, 2]), vi("v", [1, 3, 2]), vi("g", [1, 3, 1]),
         vi("beta", [1, 3, 1]), vi("w", [3, 1, 2]), vi("past", [1, 3, 1]), vi("cache", [1, 5, 4]),
         vi("idx", [1], TensorProto.INT64)],
        [vi("attn", [1, 3, 4]), vi("state", [1, 1, 2, 2]), vi("conv_state", [1, 3, 1]),
         vi("cache_out", [1, 5, 4])],
        "transformer_ops",
    )
    f = lambda *s: rng.standard_normal(s).astype(np.float32) * 0.5
    k = f(1, 3, 2)
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    inputs = [("q", f(1, 3, 4)), ("k", k), ("v", f(1, 3, 2)), ("g", -np.abs(f(1, 3, 1))),
              ("beta", np.full((1, 3, 1), 0.5, np.float32)), ("w", f(3, 1, 2)), ("past", f(1, 3, 1)),
              ("cache", f(1, 5, 4)), ("idx", np.array([4], np.int64))]
    save("transformer_ops", m, inputs)

    q = [vi("q", [1, 2, 4]), vi("k", [1, 2, 4]), vi("v", [1, 2, 4])]
    la_out = [vi("o", [1, 2, 4])]
    save("transformer_bad_rule", model(
        [helper.make_node("LinearAttention", ["q", "k", "v"], ["o", "s"], name="la",
                          q_num_heads=1, kv_num_heads=1, update_rule="retention")],
        q, la_out, "bad_rule"))
    save("transformer_bad_heads", model(
        [helper.make_node("LinearAttention", ["q", "k", "v"], ["o", "s"], name="la",
                          q_num_heads=3, kv_num_heads=2, update_rule="linear")],
        q, la_out, "bad_heads"))
    save("transformer_no_heads", model(
        [helper.make_node("LinearAttention", ["q", "k", "v"], ["o", "s"], name="la", update_rule="linear")],
        q, la_out, "no_heads"))
    save("transformer_bad_activation", model(
        [helper.make_node("CausalConvWithState", ["x", "w"], ["y", "s"], name="conv", activation="gelu")],
        [vi("x", [1, 2, 4]), vi("w", [2, 1, 3])], [vi("y", [1, 2, 4])], "bad_activation"))
    save("transformer_bad_mode", model(
        [helper.make_node("TensorScatter", ["c", "u"], ["y"], name="scatter", mode="ring")],
        [vi("c", [1, 4, 2]), vi("u", [1, 1, 2])], [vi("y", [1, 4, 2])], "bad_mode"))


if __name__ == "__main__":
    main()
