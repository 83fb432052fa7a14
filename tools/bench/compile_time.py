#!/usr/bin/env python3
"""ge-atc compile time vs onnxruntime session creation (issue 17 item 4).

For each model of the onnx package's nine light real-architecture models, one
round runs `ge-atc` (release build, compile cache disabled, output discarded)
and creates an onnxruntime session (all graph optimisations, 1 intra-op
thread) — interleaved, so drift on the machine affects both alike. Prints the
medians, their ratio and the per-round ratios, as a markdown table.

    cargo build --release -p ge-driver --bins
    nice -n -15 .venv/bin/python tools/bench/compile_time.py --rounds 5
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MODELS = [
    "bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
    "shufflenet", "squeezenet", "vgg19", "zfnet512",
]


def light_dir():
    import onnx  # noqa: PLC0415

    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def time_atc(atc, model, out):
    t = time.perf_counter()
    subprocess.run(
        [atc, f"--model={model}", "--framework=5", f"--output={out}", "--op_compiler_cache_mode=disable"],
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - t


def time_session(ort, model):
    t = time.perf_counter()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    elapsed = time.perf_counter() - t
    del s
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--atc", default=os.path.join(REPO, "target", "release", "ge-atc"))
    ap.add_argument("--models", nargs="*", default=MODELS)
    a = ap.parse_args()
    import onnxruntime as ort  # noqa: PLC0415

    if not os.path.exists(a.atc):
        sys.exit(f"error: {a.atc} is not built (cargo build --release -p ge-driver --bins)")
    print(f"load average {os.getloadavg()[0]:.1f}; onnxruntime {ort.__version__}; {a.rounds} rounds\n")
    print("| model | ge-atc median s | onnxruntime session median s | ge / ort | per-round ratios |")
    print("|---|---|---|---|---|")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for m in a.models:
            path = os.path.join(light_dir(), f"light_{m}.onnx")
            ge, rt = [], []
            for _ in range(a.rounds):
                ge.append(time_atc(a.atc, path, os.path.join(tmp, m)))
                rt.append(time_session(ort, path))
            per = sorted(g / r for g, r in zip(ge, rt))
            ratio = statistics.median(ge) / statistics.median(rt)
            ratios.append(ratio)
            print(f"| {m} | {statistics.median(ge):.2f} | {statistics.median(rt):.2f} | {ratio:.2f}x | {per[0]:.2f}-{per[-1]:.2f} |", flush=True)
    print(f"\ngeomean ge-atc / session creation: {statistics.geometric_mean(ratios):.2f}x")


if __name__ == "__main__":
    main()
