#!/usr/bin/env python3
"""Convert an ONNX model and run it in five lines; compare with onnxruntime.

Run: python examples/python/onnx_in_5_lines.py [model.onnx]
"""

import pathlib
import sys

import numpy as np

MODEL = sys.argv[1] if len(sys.argv) > 1 else str(
    pathlib.Path(__file__).resolve().parents[2] / "testdata" / "onnx" / "small_cnn.onnx")

# ---- the five lines ---------------------------------------------------------
import ge                                                    # 1
model = ge.Model(ge.compile(MODEL))                          # 2: import + compile (ge-atc) + load
name, _ = model.inputs[0]                                    # 3
x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)  # 4
outputs = model.run({name: x})                               # 5: {output name: ndarray}
# -----------------------------------------------------------------------------

import onnxruntime as ort  # noqa: E402

sess = ort.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
want = sess.run(None, {name: x})
for (out_name, got), ref in zip(outputs.items(), want):
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    print(f"{out_name}: {got.shape} {got.dtype}, max |ge - onnxruntime| = {np.abs(got - ref).max():.2e}")
print("ge matches onnxruntime")
