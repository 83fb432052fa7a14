#!/usr/bin/env python3
"""Convolution algorithms (issue 17): the same .om run with the old path forced
(GE_CONV_ALGO=im2col: im2col + GEMM for every convolution) and with the per-shape
choice (Winograd F(2x2)/F(4x4) where the cost model of runtime/src/kernels/winograd.rs
says it pays), interleaved, on the onnx package's light models.

1. `ge-translate --import-onnx` + `ge-run X.air --save-om` (release build) into
   target/bench/conv_algo/; seeded N(0,1) inputs (runtime.py's);
2. correctness: each path's output vs onnxruntime's on the same inputs (max |diff|,
   and the conformance tolerance runtime.py uses);
3. CPU time: `perf stat -x, -e task-clock ge-run X.om --iterations N --warmup W
   --threads 1` of each path, alternating, --rounds times (default 3). task-clock is
   the CPU time of the whole process (load, with the filter transforms folded there,
   warm-up and the N runs): it survives the machine's load better than wall time.
   ge-run's own p50 (wall) is printed too.
The table: median and range over rounds of each path's task-clock, and their ratio.
`--shapes` instead times single 3x3 convolutions of the light models' layer shapes on
every path forced (im2col, F(2x2), F(4x4); ge-run's p50) next to the
path the cost model picks — the check of the cost model's constants. `--packed-shapes`
times single 1x1 and 3x3 convolutions of SqueezeNet / ShuffleNet / Inception / ResNet-50
with the filter packed at load (GE_CONV_ALGO=packed) against the `gemm` crate
(GE_CONV_ALGO=gemm): CPU time of --iterations runs (task-clock minus a 2-run process);
`--taps-shapes` the same for single 3x3 convolutions, the packed GEMM reading the input
by tap offsets (GE_CONV_ALGO=taps) against an im2col panel (GE_CONV_ALGO=packed).
Usage: python3 tools/bench/conv_algo.py [--models vgg19,resnet50,...] [--rounds 3]
           [--iterations 10] [--warmup 2] [--no-build] [--shapes] [--packed-shapes]
           [--taps-shapes]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchlib  # noqa: E402
from benchlib import REPO, die, log  # noqa: E402
from runtime import COMPARE, INPUTS, ORT, PYTHON, last_json, light_dir, newer, run  # noqa: E402

OUT = os.path.join(REPO, "target", "bench", "conv_algo")
MODELS = ["vgg19", "resnet50", "bvlc_alexnet", "inception_v1", "squeezenet"]
PATHS = [("im2col", "im2col"), ("chosen", "auto")]


def run_env(cmd, env):
    """stdout of `cmd` run with `env`; dies on failure."""
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{cmd[0]} failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
    return p.stdout


def task_clock(cmd, env):
    """CPU ms of `cmd` (perf stat's task-clock) and its stdout."""
    p = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock"] + cmd, env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        die(f"{cmd[0]} failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
    for line in p.stderr.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] == "task-clock":
            return float(f[0]), p.stdout
    die(f"no task-clock in perf's output: {p.stderr.strip()[-500:]}")


# Single 3x3 stride-1 convolutions (in channels, out channels, plane side) of the light
# models' layers: each path forced, to check the cost model's choice (`--shapes`).
SHAPES = [(3, 64, 224), (64, 64, 224), (128, 128, 112), (256, 256, 56), (512, 512, 28),
          (512, 512, 14), (64, 64, 56), (128, 128, 28), (256, 256, 14), (512, 512, 7),
          (16, 64, 55), (32, 128, 27), (64, 256, 13), (192, 192, 13), (384, 256, 13),
          (96, 128, 28), (128, 192, 28)]


# A single convolution as ONNX, its filter a seeded initializer (a weight of the .om, so
# the Winograd filter transform is folded at load as in a real model).
CONV_ONNX = r"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
c, oc, s, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
k = int(sys.argv[5]) if len(sys.argv) > 5 else 3
w = (np.random.default_rng(0).standard_normal((oc, c, k, k)) / np.sqrt(k * k * c)).astype(np.float32)
node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[k // 2] * 4)
g = helper.make_graph([node], "conv",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, s, s])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, oc, s, s])],
                      [numpy_helper.from_array(w, "w")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
"""


# Single 1x1 and 3x3 convolutions (in channels, out channels, plane side, kernel side) of
# SqueezeNet, ShuffleNet, Inception and ResNet-50 that run on the GEMM path: the filter
# packed at load (`GE_CONV_ALGO=packed`) against the `gemm` crate (`gemm`), CPU time
# (`--packed-shapes`).
PACKED_SHAPES = [(96, 16, 54, 1), (16, 64, 54, 1), (64, 256, 56, 1), (256, 64, 56, 1),
                 (256, 128, 28, 1), (512, 128, 28, 1), (128, 512, 28, 1), (1024, 256, 14, 1),
                 (256, 1024, 14, 1), (2048, 512, 7, 1), (512, 2048, 7, 1), (512, 1000, 13, 1),
                 (192, 64, 28, 1), (480, 192, 14, 1), (832, 384, 7, 1), (64, 64, 56, 3),
                 (128, 128, 28, 3), (256, 256, 14, 3), (512, 512, 7, 3), (96, 128, 28, 3),
                 (32, 128, 13, 3)]


# Single 3x3 convolutions with few output channels or small planes (DenseNet-121's
# 128 -> 32 at every stage, SqueezeNet's expands, Inception's, ResNet-50's): the packed
# GEMM reading the input by tap offsets (GE_CONV_ALGO=taps) against an im2col panel
# (GE_CONV_ALGO=packed) (`--taps-shapes`).
TAPS_SHAPES = [(128, 32, 56, 3), (128, 32, 28, 3), (128, 32, 14, 3), (128, 32, 7, 3),
               (16, 64, 55, 3), (32, 128, 27, 3), (64, 64, 56, 3), (96, 128, 28, 3),
               (128, 128, 28, 3), (256, 256, 14, 3), (512, 512, 7, 3), (64, 192, 56, 3)]


def packed_shapes(ge_run, ge_translate, a, table=None, algos=("gemm", "packed")):
    """Each single convolution of `table` (PACKED_SHAPES) on two GE_CONV_ALGO paths (the
    filter packed at load against the `gemm` crate): task-clock of --iterations runs
    minus that of 2 (load and warm-up cancel), --rounds interleaved rounds, the median
    ratio."""
    x, y = algos
    print(f"| conv (c -> oc, side, kernel) | {x} ms | {y} ms | {y} / {x} | default |")
    print("|---|---|---|---|---|")
    ratios = []
    for c, oc, s, k in table or PACKED_SHAPES:
        base = os.path.join(OUT, f"conv_{c}_{oc}_{s}_{k}")
        run([PYTHON, "-c", CONV_ONNX, str(c), str(oc), str(s), base + ".onnx", str(k)],
            "conv model")
        run([ge_translate, "--import-onnx", base + ".onnx", "-o", base + ".air"], "import")
        om = base + ".om"
        run([ge_run, base + ".air", "--save-om", om, "--random-inputs"], "compile")
        ms = {x: [], y: []}
        for _ in range(a.rounds):
            for algo in ms:
                env = dict(os.environ, GE_CONV_ALGO=algo)
                t = [task_clock([ge_run, om, "--random-inputs", "--iterations", str(n),
                                 "--warmup", "0", "--threads", "1"], env)[0]
                     for n in (a.iterations + 2, 2)]
                ms[algo].append(t[0] - t[1])
        info = run([ge_run, om, "--random-inputs", "--info"], "info")
        pick = [line[6:] for line in info.splitlines() if line.startswith("conv:")]
        med = {k: sorted(v)[len(v) // 2] for k, v in ms.items()}
        r = med[y] / med[x]
        ratios.append(r)
        print(f"| {c} -> {oc}, {s}x{s}, {k}x{k} | {med[x]:.1f} | {med[y]:.1f} "
              f"| {r:.2f} | {'; '.join(pick)} |", flush=True)
    geo = 1.0
    for r in ratios:
        geo *= r
    print(f"\ngeomean {y} / {x}: {geo ** (1 / len(ratios)):.3f}")


def shapes(ge_run, ge_translate, a):
    """Each single convolution on every path (p50 of --iterations runs, the median of
    --rounds interleaved rounds), and the path the cost model picks."""
    algos = ["im2col", "winograd2", "winograd4"]
    print("| conv (c -> oc, side) | im2col p50 ms | F(2x2) p50 ms | F(4x4) p50 ms "
          "| fastest | cost model picks |")
    print("|---|---|---|---|---|---|")
    for c, oc, s in SHAPES:
        base = os.path.join(OUT, f"conv_{c}_{oc}_{s}")
        run([PYTHON, "-c", CONV_ONNX, str(c), str(oc), str(s), base + ".onnx"], "conv model")
        run([ge_translate, "--import-onnx", base + ".onnx", "-o", base + ".air"], "import")
        air = base + ".om"
        run([ge_run, base + ".air", "--save-om", air, "--random-inputs"], "compile")
        p50 = {k: [] for k in algos}
        for _ in range(a.rounds):
            for algo in algos:
                out = run_env([ge_run, air, "--random-inputs", "--iterations",
                               str(a.iterations), "--warmup", str(a.warmup), "--threads", "1",
                               "--json"], dict(os.environ, GE_CONV_ALGO=algo))
                p50[algo].append(last_json(out)["p50_ms"])
        info = run([ge_run, air, "--random-inputs", "--info"], "info")
        pick = [line[6:] for line in info.splitlines() if line.startswith("conv:")]
        med = {k: sorted(v)[len(v) // 2] for k, v in p50.items()}
        best = min(med, key=med.get)
        print(f"| {c} -> {oc}, {s}x{s} | {med['im2col']:.2f} | {med['winograd2']:.2f} | "
              f"{med['winograd4']:.2f} | {best} | {'; '.join(pick)} |",
              flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-7)
    ap.add_argument("--atol-of-max", type=float, default=1e-6)
    ap.add_argument("--shapes", action="store_true",
                    help="single convolutions of the light models' shapes, every path forced")
    ap.add_argument("--packed-shapes", action="store_true",
                    help="single 1x1 and 3x3 convolutions: filter packed at load vs gemm crate")
    ap.add_argument("--taps-shapes", action="store_true",
                    help="single 3x3 convolutions: packed GEMM by tap offsets vs im2col panel")
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    ge_run = os.path.join(target, "release", "ge-run")
    ge_translate = os.path.join(target, "release", "ge-translate")
    if not a.no_build:
        run(["cargo", "build", "--release", "-q", "-p", "ge-driver", "--bin", "ge-run",
             "--bin", "ge-translate"], "cargo build", capture=False)
    log(f"load average before: {benchlib.loadavg()}")
    if a.taps_shapes:
        packed_shapes(ge_run, ge_translate, a, TAPS_SHAPES, ("packed", "taps"))
        log(f"load average after: {benchlib.loadavg()}")
        return
    if a.packed_shapes:
        packed_shapes(ge_run, ge_translate, a)
        log(f"load average after: {benchlib.loadavg()}")
        return
    if a.shapes:
        shapes(ge_run, ge_translate, a)
        log(f"load average after: {benchlib.loadavg()}")
        return
    rows, checks = [], []
    for name in a.models.split(","):
        m = "light_" + name
        onnx_path = os.path.join(light_dir(), m + ".onnx")
        air, om = os.path.join(OUT, m + ".air"), os.path.join(OUT, m + ".om")
        if not newer(air, onnx_path):
            run([ge_translate, "--import-onnx", onnx_path, "-o", air], "import")
        if not (newer(om, air) and newer(om, ge_run)):
            run([ge_run, air, "--save-om", om, "--random-inputs"], f"compile {m}")
        npz = os.path.join(OUT, m + ".inputs.npz")
        names = run([PYTHON, "-c", INPUTS, onnx_path, npz, os.path.join(OUT, m)],
                    "inputs").split()
        ins = []
        for k, _ in enumerate(names):
            ins += ["--input", f"arg{k}={os.path.join(OUT, f'{m}.in{k}.npy')}"]
        ort_out = os.path.join(OUT, m + ".ort.npy")
        run([PYTHON, "-c", ORT, onnx_path, "1", "1", "0", npz, ort_out], "onnxruntime")
        for label, algo in PATHS:
            env = dict(os.environ, GE_CONV_ALGO=algo)
            out = os.path.join(OUT, f"{m}.{label}.npy")
            info = run_env([ge_run, om, "--info", "--output", out] + ins, env)
            convs = [line for line in info.splitlines() if line.startswith("conv:")]
            log(f"  {m} {label}: " + "; ".join(c[6:] for c in convs))
            c = last_json(run([PYTHON, "-c", COMPARE, out, ort_out, str(a.rtol), str(a.atol),
                               str(a.atol_of_max)], "compare"))
            checks.append((m, label, c))
            log(f"  {m} {label}: vs onnxruntime max |diff| {c['max_abs']:.3e} "
                f"(max |ort| {c['max_ort']:.3e}) " + ("ok" if c["ok"] else "DIFFERS: " + c["why"]))
        cpu = {label: [] for label, _ in PATHS}
        p50 = {label: [] for label, _ in PATHS}
        cmd = [ge_run, om, "--iterations", str(a.iterations), "--warmup", str(a.warmup),
               "--threads", "1", "--json"] + ins
        for r in range(a.rounds):
            for label, algo in PATHS:
                ms, out = task_clock(cmd, dict(os.environ, GE_CONV_ALGO=algo))
                cpu[label].append(ms)
                p50[label].append(last_json(out)["p50_ms"])
                log(f"  {m} round {r + 1} {label}: task-clock {ms:.0f} ms, "
                    f"p50 {p50[label][-1]:.2f} ms")
        rows.append((m, cpu, p50))
    log(f"load average after: {benchlib.loadavg()}")

    def med(v):
        return sorted(v)[len(v) // 2]

    print(f"\nCPU time (task-clock) of `ge-run X.om --iterations {a.iterations} --warmup "
          f"{a.warmup} --threads 1`, {a.rounds} interleaved rounds; rev {benchlib.git_rev()}\n")
    print("| model | im2col task-clock ms (range) | chosen task-clock ms (range) | chosen / im2col "
          "| im2col p50 ms | chosen p50 ms |")
    print("|---|---|---|---|---|---|")
    for m, cpu, p50 in rows:
        i, c = cpu["im2col"], cpu["chosen"]
        print(f"| {m} | {med(i):.0f} ({min(i):.0f}-{max(i):.0f}) | {med(c):.0f} "
              f"({min(c):.0f}-{max(c):.0f}) | {med(c) / med(i):.2f}x | {med(p50['im2col']):.2f} "
              f"| {med(p50['chosen']):.2f} |")
    print("\n| model | path | max abs diff vs onnxruntime | max abs onnxruntime output | within tolerance |")
    print("|---|---|---|---|---|")
    for m, label, c in checks:
        print(f"| {m} | {label} | {c['max_abs']:.3e} | {c['max_ort']:.3e} | "
              f"{'yes' if c['ok'] else 'NO'} |")
    bad = [f"{m} ({label})" for m, label, c in checks if not c["ok"]]
    if bad:
        die("outputs differ from onnxruntime: " + ", ".join(bad), code=1)


if __name__ == "__main__":
    main()
