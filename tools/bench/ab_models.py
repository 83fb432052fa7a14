#!/usr/bin/env python3
"""Two ge-run builds and onnxruntime on exported models, rounds interleaved (issue 17).

A change to a kernel is judged on whole models as well as on single layers
(tools/bench/layers.py): this times the same .om with a baseline `ge-run` (another
build, e.g. a copy of target/release/ge-run made before the change) and the current
one, and onnxruntime on the ONNX file, in interleaved rounds, 1 or more threads.

Each model directory holds `model.onnx`, `meta.json` (its `inputs` names, in order,
and `name`/`exporter`) and `in0.npy`, `in1.npy`, ... — the layout
tools/models/gen_torch_gauntlet.py writes. Each model is compiled once with the
current release `ge-atc` (into --om-dir, reused when present).

Usage: .venv/bin/python tools/bench/ab_models.py --baseline BIN [--rounds 3]
           [--threads 1] [--iterations 20] [--om-dir DIR] MODEL_DIR...
Prints per model the median p50 of each side over the rounds, each side's ratio to
onnxruntime and current/baseline, then the geomeans.
"""

import argparse
import json
import math
import os
import statistics
import subprocess

import benchlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def ge_p50(binary, om, inputs, args):
    cmd = [binary, om] + inputs + ["--iterations", str(args.iterations), "--warmup", "3",
                                   "--threads", str(args.threads), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        return float("nan")
    return json.loads(r.stdout.strip().splitlines()[-1])["p50_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="the other build's ge-run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--om-dir", default=os.path.join(REPO, "target", "bench", "ab_models"))
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    import numpy as np
    import onnxruntime as ort

    ge_run = os.path.join(REPO, "target", "release", "ge-run")
    ge_atc = os.path.join(REPO, "target", "release", "ge-atc")
    os.makedirs(args.om_dir, exist_ok=True)
    rows = []
    for d in args.models:
        meta = json.load(open(os.path.join(d, "meta.json")))
        name = f"{meta['name']}.{meta.get('exporter', '')}"
        om = os.path.join(args.om_dir, name + ".om")
        if not os.path.exists(om):
            r = subprocess.run([ge_atc, "--model", os.path.join(d, "model.onnx"), "--framework", "5",
                                "--output", om[:-3]], capture_output=True, text=True)
            if r.returncode:
                print(f"{name}: ge-atc failed: {r.stderr.strip()[-200:]}")
                continue
        inputs, feed = [], {}
        for i, n in enumerate(meta["inputs"]):
            path = os.path.join(d, f"in{i}.npy")
            inputs += ["--input", f"{n}={path}"]
            feed[n] = np.load(path)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = args.threads
        opts.inter_op_num_threads = 1
        session = ort.InferenceSession(os.path.join(d, "model.onnx"), opts, providers=["CPUExecutionProvider"])
        times = {"baseline": [], "current": [], "ort": []}
        for _ in range(args.rounds):
            times["baseline"].append(ge_p50(args.baseline, om, inputs, args))
            times["current"].append(ge_p50(ge_run, om, inputs, args))
            times["ort"].append(benchlib.ort_p50(session, feed, args.iterations, 3) * 1e3)
        m = {k: statistics.median(v) for k, v in times.items()}
        rows.append(m)
        print(f"| {name} | {m['ort']:.3f} | {m['baseline']:.3f} ({m['baseline'] / m['ort']:.2f}x) "
              f"| {m['current']:.3f} ({m['current'] / m['ort']:.2f}x) | {m['current'] / m['baseline']:.3f} |",
              flush=True)
    if rows:
        def geo(k):
            return math.exp(statistics.mean(math.log(r[k] / r["ort"]) for r in rows))
        print(f"geomean over {len(rows)}: baseline {geo('baseline'):.3f}x, current {geo('current'):.3f}x of onnxruntime")


if __name__ == "__main__":
    main()
