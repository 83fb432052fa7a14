#!/usr/bin/env python3
"""An ONNX model of token-wise MLP blocks, random weights (issue 17): LAYERS blocks of
MatMul (K x N) + bias, Gelu (erf form), MatMul (N x K) + bias, on an input of M rows —
MLP-Mixer's and ResMLP's products of few rows by weights larger than the L2 cache,
without the rest of the model, to time against onnxruntime and between two ge builds
(docs/benchmarks.md, "twenty-first session").

Usage: .venv/bin/python tools/bench/mlp_blocks.py OUT.onnx [--rows 16] [--k 128]
           [--n 512] [--layers 8]
then `ge-atc --model OUT.onnx --framework 5 --output OUT --soc_version Ascend910B`.
"""

import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=16)
    ap.add_argument("--k", type=int, default=128)
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--layers", type=int, default=8)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for l in range(a.layers):
        for name, shape in [(f"w1_{l}", (a.k, a.n)), (f"b1_{l}", (a.n,)),
                            (f"w2_{l}", (a.n, a.k)), (f"b2_{l}", (a.k,))]:
            inits.append(numpy_helper.from_array(rng.uniform(-.1, .1, shape).astype(np.float32), name))
        nodes += [
            helper.make_node("MatMul", [x, f"w1_{l}"], [f"h{l}"]),
            helper.make_node("Add", [f"h{l}", f"b1_{l}"], [f"hb{l}"]),
            helper.make_node("Gelu", [f"hb{l}"], [f"g{l}"]),
            helper.make_node("MatMul", [f"g{l}", f"w2_{l}"], [f"o{l}"]),
            helper.make_node("Add", [f"o{l}", f"b2_{l}"], [f"x{l + 1}"]),
        ]
        x = f"x{l + 1}"
    shape = [1, a.rows, a.k]
    graph = helper.make_graph(nodes, "mlp_blocks",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    onnx.save(model, a.out)


if __name__ == "__main__":
    main()
