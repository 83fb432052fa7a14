#!/usr/bin/env python3
"""The ONNX signal ops (DFT, STFT, the windows, MelWeightMatrix) through ge-atc + ge-run
against onnxruntime and the ONNX reference, on random inputs and parameters the node tests
do not cover: both DFT opsets (axis as attribute and as input), real and complex input,
forward, inverse, RFFT and IRFFT, dft_length cutting and padding, prime lengths, STFT with
and without a window or frame_length, every window in both forms and output types.

Sizes are graph inputs where ONNX makes them inputs (as the node tests have them), so the
imported ops are `graph.specialize`s that run the native kernels.

    .venv/bin/python tools/conformance/signal_vs_onnxruntime.py [--bin target/debug]

Each case prints its largest error against onnxruntime and the reference, relative to
the output's largest magnitude (onnxruntime computes in float32 with its own FFT, so it is
a peer, not the truth: the tolerance is 1e-4 of the output's scale). Exit 1 when any case
is outside it against both.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def model(op, inputs, attrs, opset, out_type=F):
    """One node; `inputs` are (name, np value or None) — None is an absent input."""
    names = [n if v is not None else "" for n, v in inputs]
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, ["y"], **attrs)
    ins = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
        for n, v in inputs
        if v is not None
    ]
    out = helper.make_tensor_value_info("y", out_type, None)
    g = helper.make_graph([node], "g", ins, [out])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def run_ge(bin_dir, m, feeds, tmp, out_shape_from):
    """Import and compile with ge-atc, run with ge-run: the output as numpy."""
    # ge-atc plans memory from declared output shapes: declare the reference's.
    m.graph.output[0].type.tensor_type.ClearField("shape")
    for d in out_shape_from.shape:
        m.graph.output[0].type.tensor_type.shape.dim.add().dim_value = d
    path = os.path.join(tmp, "m.onnx")
    onnx.save(m, path)
    om = os.path.join(tmp, "m")
    subprocess.run(
        [os.path.join(bin_dir, "ge-atc"), "--model", path, "--framework", "5", "--output", om],
        check=True, capture_output=True,
    )
    args = [os.path.join(bin_dir, "ge-run"), om + ".om", "--native-only"]
    for k, v in feeds.items():
        f = os.path.join(tmp, f"{k}.npy")
        np.save(f, v)
        args += ["--input", f"{k}={f}"]
    out = os.path.join(tmp, "y.npy")
    args += ["--output", f"y={out}"]
    subprocess.run(args, check=True, capture_output=True)
    return np.load(out)


def cases(rng):
    r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    i = lambda v: np.array(v, np.int64)  # noqa: E731
    # DFT, opset 20: axis and dft_length as inputs.
    for shape, axis, inv, ones, length in [
        ((2, 16, 1), 1, 0, 0, None),
        ((3, 7, 2), -2, 0, 0, None),
        ((2, 5, 3, 2), 1, 1, 0, None),
        ((4, 11, 1), 1, 0, 1, None),
        ((2, 6, 2), 1, 1, 1, None),
        ((2, 6, 2), 1, 1, 1, 11),
        ((3, 9, 1), 1, 0, 0, 16),
        ((3, 9, 2), 1, 0, 0, 4),
        ((1, 31, 2), 1, 1, 0, None),
    ]:
        ins = [("x", r(*shape)), ("dft_length", None if length is None else i(length)), ("axis", i(axis))]
        yield f"DFT-20 {shape} axis={axis} inverse={inv} onesided={ones} len={length}", model(
            "DFT", ins, {"inverse": inv, "onesided": ones}, 20), ins
    # DFT, opset 17: axis as an attribute.
    for shape, axis, inv, ones in [((2, 12, 1), 1, 0, 1), ((2, 3, 8, 2), 2, 1, 0)]:
        ins = [("x", r(*shape))]
        yield f"DFT-17 {shape} axis={axis} inverse={inv} onesided={ones}", model(
            "DFT", ins, {"axis": axis, "inverse": inv, "onesided": ones}, 17), ins
    # STFT.
    for shape, step, win, flen, ones in [
        ((2, 64, 1), 8, 16, None, 1),
        ((1, 50, 2), 5, None, 12, 0),
        ((3, 33, 1), 4, 10, 10, 0),
        ((1, 20, 1), 3, None, None, 1),
    ]:
        w = None if win is None else np.hanning(win).astype(np.float32)
        ins = [("signal", r(*shape)), ("frame_step", i(step)), ("window", w),
               ("frame_length", None if flen is None else i(flen))]
        yield f"STFT {shape} step={step} window={win} frame_length={flen} onesided={ones}", model(
            "STFT", ins, {"onesided": ones}, 17), ins
    # Windows.
    for op in ["HannWindow", "HammingWindow", "BlackmanWindow"]:
        for size, periodic, dt in [(10, 1, F), (17, 0, F), (8, 1, TensorProto.DOUBLE)]:
            ins = [("size", i(size))]
            yield f"{op} size={size} periodic={periodic} type={dt}", model(
                op, ins, {"periodic": periodic, "output_datatype": dt}, 17, dt), ins
    # MelWeightMatrix.
    for bands, length, rate, lo, hi in [(8, 16, 8192, 0.0, 4096.0), (40, 400, 16000, 20.0, 7600.0)]:
        ins = [("num_mel_bins", i(bands)), ("dft_length", i(length)), ("sample_rate", i(rate)),
               ("lower_edge_hertz", np.array(lo, np.float32)), ("upper_edge_hertz", np.array(hi, np.float32))]
        yield f"MelWeightMatrix bands={bands} dft={length} rate={rate}", model(
            "MelWeightMatrix", ins, {}, 17), ins


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "..", "target", "debug"))
    a = ap.parse_args()
    rng = np.random.default_rng(16)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, m, ins in cases(rng):
            feeds = {k: v for k, v in ins if v is not None}
            want = ReferenceEvaluator(m).run(None, feeds)[0]
            try:
                sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
                peer = sess.run(None, feeds)[0]
            except Exception as e:  # noqa: BLE001 - onnxruntime refuses some valid forms
                peer = None
                why = str(e).splitlines()[0][:120]
            try:
                got = run_ge(a.bin, m, feeds, tmp, want)
            except subprocess.CalledProcessError as e:
                print(f"FAIL {name}: {e.stderr.decode().strip()}")
                bad += 1
                continue
            scale = max(float(np.max(np.abs(want))), 1e-30)
            if got.shape != want.shape:
                print(f"FAIL {name}: shape {got.shape}, reference {want.shape}")
                bad += 1
                continue
            e_ref = float(np.max(np.abs(got.astype(np.float64) - want))) / scale
            if peer is None:
                e_ort, ort_text = float("inf"), f"onnxruntime fails ({why})"
            else:
                e_ort = float(np.max(np.abs(got.astype(np.float64) - peer))) / scale
                ort_text = f"vs onnxruntime {e_ort:.1e}"
            ok = min(e_ref, e_ort) <= 1e-4
            bad += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}: vs reference {e_ref:.1e}, {ort_text}")
    print(f"{bad} of the cases differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
