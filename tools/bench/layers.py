#!/usr/bin/env python3
"""Single layers of the mobile and dense architectures against onnxruntime (issue 17).

Each case is a small ONNX model with random weights (seeded), built here: 8 copies
of one layer side by side on one input (so a run is long enough to time and the
copies do not share a cache-hot result), or one squeeze-excite / DenseNet-style
pattern. The layers are those a per-node profile of the gauntlet's MobileNetV3,
EfficientNet and DenseNet put far behind onnxruntime: HardSwish after a
convolution, depthwise convolutions on small maps, 1x1 convolutions on 1x1 and
2x2 maps (squeeze-excite), the per-channel scale of squeeze-excite, and concats
of many thin operands; and fully connected layers of few rows (MatMul + Add on a
short sequence, Gemm on a small batch), whose weights are packed at load when the
rows come in whole panels of 4 (runtime/src/kernels/packed_right.rs).

1. the models go to target/bench/layers/NAME.onnx; `ge-atc` (release) compiles
   each to NAME.om;
2. rounds (--rounds) alternate the sides: `ge-run NAME.om --random-inputs
   --iterations N --warmup W --threads 1 --json` (its p50), then onnxruntime
   1 thread in this process (the p50 of N timed runs after W), and with
   --baseline DIR the ge-run of another build on the .om its ge-atc made;
3. the table: the median of each side's p50 over the rounds and their ratio.

Usage: .venv/bin/python tools/bench/layers.py [--rounds 3] [--iterations 200]
           [--warmup 20] [--only TEXT] [--baseline DIR] [--no-build]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import benchlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, "target", "bench", "layers")


def convs(act, ci, co, hw, k, stride=1, group=1, copies=8):
    """`copies` convolutions (ci -> co, k x k, same padding) of one input, each
    followed by `act` (none, relu, hard_swish or silu)."""
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    rng = np.random.default_rng(17)
    inits, nodes, outs = [], [], []
    for n in range(copies):
        w = (rng.standard_normal((co, ci // group, k, k)) * 0.1).astype(np.float32)
        b = (rng.standard_normal(co) * 0.1).astype(np.float32)
        inits += [nh.from_array(w, f"w{n}"), nh.from_array(b, f"b{n}")]
        nodes.append(h.make_node("Conv", ["x", f"w{n}", f"b{n}"], [f"c{n}"], kernel_shape=[k, k],
                                 pads=[k // 2] * 4, strides=[stride, stride], group=group))
        y = f"c{n}"
        if act == "relu":
            nodes.append(h.make_node("Relu", [y], [f"y{n}"]))
            y = f"y{n}"
        elif act == "hard_swish":
            nodes.append(h.make_node("HardSwish", [y], [f"y{n}"]))
            y = f"y{n}"
        elif act == "silu":
            nodes += [h.make_node("Sigmoid", [y], [f"s{n}"]), h.make_node("Mul", [y, f"s{n}"], [f"y{n}"])]
            y = f"y{n}"
        outs.append(h.make_tensor_value_info(y, T.FLOAT, None))
    x = h.make_tensor_value_info("x", T.FLOAT, [1, ci, hw, hw])
    return h.make_graph(nodes, "g", [x], outs, inits)


def squeeze_excite(c, r, hw, copies=8):
    """`copies` squeeze-excite blocks on one c x hw x hw input: global average
    pool, 1x1 conv c -> r + relu, 1x1 conv r -> c + sigmoid, times the input."""
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    rng = np.random.default_rng(18)
    inits, nodes, outs = [], [h.make_node("GlobalAveragePool", ["x"], ["p"])], []
    for n in range(copies):
        for name, shape in [(f"w1{n}", (r, c, 1, 1)), (f"b1{n}", (r,)), (f"w2{n}", (c, r, 1, 1)), (f"b2{n}", (c,))]:
            inits.append(nh.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name))
        nodes += [h.make_node("Conv", ["p", f"w1{n}", f"b1{n}"], [f"a{n}"]),
                  h.make_node("Relu", [f"a{n}"], [f"r{n}"]),
                  h.make_node("Conv", [f"r{n}", f"w2{n}", f"b2{n}"], [f"e{n}"]),
                  h.make_node("Sigmoid", [f"e{n}"], [f"s{n}"]),
                  h.make_node("Mul", ["x", f"s{n}"], [f"y{n}"])]
        outs.append(h.make_tensor_value_info(f"y{n}", T.FLOAT, None))
    x = h.make_tensor_value_info("x", T.FLOAT, [1, c, hw, hw])
    return h.make_graph(nodes, "g", [x], outs, inits)


def dense_concat(c, growth, hw, layers):
    """A DenseNet block's last concat: `layers` 1x1 convs c -> growth + relu of
    one input, concatenated after the input (c + layers * growth channels)."""
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    rng = np.random.default_rng(19)
    inits, nodes, parts = [], [], ["x"]
    for n in range(layers):
        inits += [nh.from_array((rng.standard_normal((growth, c, 1, 1)) * 0.1).astype(np.float32), f"w{n}")]
        nodes += [h.make_node("Conv", ["x", f"w{n}"], [f"c{n}"]), h.make_node("Relu", [f"c{n}"], [f"y{n}"])]
        parts.append(f"y{n}")
    nodes.append(h.make_node("Concat", parts, ["out"], axis=1))
    x = h.make_tensor_value_info("x", T.FLOAT, [1, c, hw, hw])
    return h.make_graph(nodes, "g", [x], [h.make_tensor_value_info("out", T.FLOAT, None)], inits)


def linears(op, rows, k, n, copies=8):
    """`copies` fully connected layers (k -> n, weights and bias constant) of one
    input of `rows` rows: `MatMul` + `Add` on a [1, rows, k] input (torch's
    Linear on a sequence) or `Gemm` on [rows, k] (torch's Linear on a batch)."""
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper as nh

    rng = np.random.default_rng(20)
    inits, nodes, outs = [], [], []
    for c in range(copies):
        inits += [nh.from_array((rng.standard_normal((k, n)) * 0.05).astype(np.float32), f"w{c}"),
                  nh.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), f"b{c}")]
        if op == "Gemm":
            nodes.append(h.make_node("Gemm", ["x", f"w{c}", f"b{c}"], [f"y{c}"]))
        else:
            nodes += [h.make_node("MatMul", ["x", f"w{c}"], [f"m{c}"]),
                      h.make_node("Add", [f"m{c}", f"b{c}"], [f"y{c}"])]
        outs.append(h.make_tensor_value_info(f"y{c}", T.FLOAT, None))
    shape = [rows, k] if op == "Gemm" else [1, rows, k]
    x = h.make_tensor_value_info("x", T.FLOAT, shape)
    return h.make_graph(nodes, "g", [x], outs, inits)


CASES = {
    "pw 16->72 1x1 16x16 hard_swish": lambda: convs("hard_swish", 16, 72, 16, 1),
    "stem 3->16 3x3/2 64x64 hard_swish": lambda: convs("hard_swish", 3, 16, 64, 3, stride=2),
    "dw 96 5x5 8x8 hard_swish": lambda: convs("hard_swish", 96, 96, 8, 5, group=96),
    "dw 72 3x3/2 16x16 relu": lambda: convs("relu", 72, 72, 16, 3, stride=2, group=72),
    # Stride 2 into rows of 16 and 32 outputs (runtime/src/kernels/depthwise_s2.rs:
    # MobileNetV2's 32x32 layer; a 64x64 one went plane by plane before), and of
    # 12, where it and the lanes kernel are level.
    "dw 96 3x3/2 32x32 relu": lambda: convs("relu", 96, 96, 32, 3, stride=2, group=96),
    "dw 32 3x3/2 64x64 relu": lambda: convs("relu", 32, 32, 64, 3, stride=2, group=32),
    "dw 144 3x3/2 24x24 relu": lambda: convs("relu", 144, 144, 24, 3, stride=2, group=144),
    "dw 576 5x5 2x2 hard_swish": lambda: convs("hard_swish", 576, 576, 2, 5, group=576),
    # Large-kernel depthwise of heldout4 (ConvMixer's 9x9, StarNet's and
    # FastViT's 7x7) and ConvMixer's pointwise layer.
    "dw 64 9x9 16x16 relu": lambda: convs("relu", 64, 64, 16, 9, group=64),
    "dw 96 7x7 16x16 relu": lambda: convs("relu", 96, 96, 16, 7, group=96),
    "dw 48 7x7 32x32 relu": lambda: convs("relu", 48, 48, 32, 7, group=48),
    "pw 64->64 1x1 16x16 relu": lambda: convs("relu", 64, 64, 16, 1),
    # MobileNetV4-conv-small's strided full convolutions (heldout4).
    "conv 32->32 3x3/2 32x32 relu": lambda: convs("relu", 32, 32, 32, 3, stride=2),
    "conv 32->96 3x3/2 16x16 relu": lambda: convs("relu", 32, 96, 16, 3, stride=2),
    # SqueezeNet 1.1's fire expands at 64x64 input (the gauntlet): 3x3 convolutions
    # of few input channels on 15x15, 7x7 and 3x3 maps, and its stem.
    "fire 16->64 3x3 15x15 relu": lambda: convs("relu", 16, 64, 15, 3),
    "fire 32->128 3x3 7x7 relu": lambda: convs("relu", 32, 128, 7, 3),
    "fire 48->192 3x3 3x3 relu": lambda: convs("relu", 48, 192, 3, 3),
    "fire 64->256 3x3 3x3 relu": lambda: convs("relu", 64, 256, 3, 3),
    "stem 3->64 3x3/2 64x64 relu": lambda: convs("relu", 3, 64, 64, 3, stride=2),
    "pw 16->96 1x1 32x32 silu": lambda: convs("silu", 16, 96, 32, 1, copies=4),
    "pw 96->576 1x1 2x2 relu": lambda: convs("relu", 96, 576, 2, 1),
    "pw 576->96 1x1 2x2": lambda: convs("none", 576, 96, 2, 1),
    "se-expand 48->1152 1x1 1x1": lambda: convs("none", 48, 1152, 1, 1),
    "pw 320->1280 1x1 2x2": lambda: convs("none", 320, 1280, 2, 1),
    "pw 1152->192 1x1 2x2": lambda: convs("none", 1152, 192, 2, 1),
    "squeeze-excite 1152/48 2x2": lambda: squeeze_excite(1152, 48, 2),
    "squeeze-excite 240/64 8x8": lambda: squeeze_excite(240, 64, 8),
    "dense concat 256+15x32 4x4": lambda: dense_concat(256, 32, 4, 15),
    "matmul 16x384 . 384x1536": lambda: linears("MatMul", 16, 384, 1536),
    "matmul 4x96 . 96x384": lambda: linears("MatMul", 4, 96, 384),
    "matmul 64x256 . 256x256": lambda: linears("MatMul", 64, 256, 256),
    "matmul 12x384 . 384x1536": lambda: linears("MatMul", 12, 384, 1536),
    "matmul 17x1536 . 1536x384": lambda: linears("MatMul", 17, 1536, 384),
    "matmul 17x384 . 384x1536": lambda: linears("MatMul", 17, 384, 1536),
    "matmul 16x1536 . 1536x384": lambda: linears("MatMul", 16, 1536, 384),
    "gemm 2x512 . 512x1000": lambda: linears("Gemm", 2, 512, 1000),
    "matmul 16x384 . 384x1152, one": lambda: linears("MatMul", 16, 384, 1152, copies=1),
    "matmul 197x384 . 384x384": lambda: linears("MatMul", 197, 384, 384, copies=4),
    "gemm 8x512 . 512x512": lambda: linears("Gemm", 8, 512, 512),
}


def slug(name):
    return "".join(ch if ch.isalnum() else "_" for ch in name).strip("_")


def ge_p50(binary, om, args):
    r = subprocess.run([binary, om, "--random-inputs", "--iterations", str(args.iterations), "--warmup",
                        str(args.warmup), "--threads", "1", "--json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])["p50_ms"] * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--only", help="run only the cases whose name contains this text")
    ap.add_argument("--baseline", help="a folder with the ge-atc and ge-run of another build: each layer "
                    "compiled by its ge-atc too and timed in the same rounds")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import helper

    if not args.no_build:
        subprocess.run(["cargo", "build", "-q", "--release", "-p", "ge-driver", "--bin", "ge-run", "--bin",
                        "ge-atc"], cwd=REPO, check=True)
    ge_run = os.path.join(REPO, "target", "release", "ge-run")
    ge_atc = os.path.join(REPO, "target", "release", "ge-atc")
    os.makedirs(OUT, exist_ok=True)
    cases = [n for n in CASES if not args.only or args.only in n]
    sessions = {}
    for name in cases:
        path = os.path.join(OUT, slug(name))
        model = helper.make_model(CASES[name](), opset_imports=[helper.make_opsetid("", 17)])
        onnx.save(model, path + ".onnx")
        subprocess.run([ge_atc, f"--model={path}.onnx", "--framework=5", f"--output={path}",
                        "--soc_version=Ascend910B"], check=True, capture_output=True)
        if args.baseline:
            subprocess.run([os.path.join(args.baseline, "ge-atc"), f"--model={path}.onnx", "--framework=5",
                            f"--output={path}.base", "--soc_version=Ascend910B"], check=True, capture_output=True)
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        s = ort.InferenceSession(path + ".onnx", so, providers=["CPUExecutionProvider"])
        i = s.get_inputs()[0]
        x = np.random.default_rng(0).standard_normal(i.shape).astype(np.float32)
        sessions[name] = (path + ".om", s, {i.name: x})
    times = {n: {"ge": [], "ort": [], "base": []} for n in cases}
    for r in range(args.rounds):
        for name in cases:
            om, s, feed = sessions[name]
            times[name]["ge"].append(ge_p50(ge_run, om, args))
            times[name]["ort"].append(benchlib.ort_p50(s, feed, args.iterations, args.warmup) * 1e6)
            if args.baseline:
                base = os.path.join(args.baseline, "ge-run")
                times[name]["base"].append(ge_p50(base, om[:-3] + ".base.om", args))
        print(f"round {r + 1} done", file=sys.stderr)
    med = statistics.median
    head = "| layer | ge-run p50 µs | onnxruntime p50 µs | ge / ort |"
    if args.baseline:
        head += " baseline ge-run p50 µs | baseline / ort |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for name in cases:
        t = times[name]
        row = f"| {name} | {med(t['ge']):.1f} | {med(t['ort']):.1f} | {med(t['ge']) / med(t['ort']):.2f}x |"
        if args.baseline:
            row += f" {med(t['base']):.1f} | {med(t['base']) / med(t['ort']):.2f}x |"
        print(row)


if __name__ == "__main__":
    main()
