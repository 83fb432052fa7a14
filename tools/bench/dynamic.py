#!/usr/bin/env python3
"""Dynamic vs static builds of one model at the same shape (issue 15 item 4).

For each model and shape: a static build (ge-atc --input_shape with that
shape), a bounded dynamic build (--input_shape_range up to the largest shape:
one memory plan at the bounds) and an unbounded dynamic build (no shape flag:
the workspace is planned per concrete shape at run time and cached). Each
.om runs with ge-run --warmup (the first run at a shape builds its plan)
and --iterations, the builds interleaved per round so that load on the
machine affects all alike; the table gives the median p50 latency and the
ratio to the static build.

Models: a ResNet-style CNN (tools/bench/runtime_models.py --small ResNet-50,
its batch made a dim_param) at batch 1/2/8, and a BERT-style encoder layer
(tools/models/gen_dynamic_models.py's bert_dyn with hidden 256, 8 heads and
128 positions; dynamic batch and sequence) at sequence 16/64/128.

    python3 tools/bench/dynamic.py [--rounds 3] [--iterations 20]

Needs release binaries (cargo build --release -p ge-driver --bin ge-run
--bin ge-atc) and the pinned `onnx` package for the CNN.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(REPO, "target", "release")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r.stdout


def atc(model, out, flags):
    run([os.path.join(BIN, "ge-atc"), f"--model={model}", "--framework=5", f"--output={out}",
         "--op_compiler_cache_mode=disable"] + flags)
    return out + ".om"


def latency(om, binds, iterations):
    cmd = [os.path.join(BIN, "ge-run"), om, "--random-inputs", "--json", "--warmup", "2",
           "--iterations", str(iterations)]
    for b in binds:
        cmd += ["--bind", b]
    line = [l for l in run(cmd).splitlines() if l.startswith("{")][-1]
    return json.loads(line)["p50_ms"]


def cnn_model(tmp):
    sys.path.insert(0, HERE)
    import onnx  # noqa: PLC0415
    import runtime_models  # noqa: PLC0415

    m = runtime_models.resnet50(True)
    for v in list(m.graph.input) + list(m.graph.output):
        v.type.tensor_type.shape.dim[0].ClearField("dim_value")
        v.type.tensor_type.shape.dim[0].dim_param = "batch"
    path = os.path.join(tmp, "resnet_small_dyn.onnx")
    onnx.save(m, path)
    return path


def bert_model(tmp):
    sys.path.insert(0, os.path.join(REPO, "tools", "models"))
    import onnx  # noqa: PLC0415
    import gen_dynamic_models  # noqa: PLC0415

    path = os.path.join(tmp, "bert_dyn_wide.onnx")
    onnx.save(gen_dynamic_models.bert_dyn_model(vocab=1000, maxpos=128, hidden=256, heads=8), path)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=20)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ge-dyn-bench-")
    cnn = cnn_model(tmp)
    bert = bert_model(tmp)
    cases = []
    for b in (1, 2, 8):
        cases.append(("resnet-style", f"batch {b}", cnn, "input", f"{b},3,224,224",
                      "input:[1~8,3,224,224]", [f"BATCH={b}", f"INPUT_D0={b}"]))
    for s in (16, 64, 128):
        cases.append(("bert-style encoder", f"seq {s}", bert, "input_ids", f"1,{s}",
                      "input_ids:[1~1,1~128]", [f"BATCH=1", f"SEQUENCE={s}",
                                               "INPUT_IDS_D0=1", f"INPUT_IDS_D1={s}"]))
    builds = {}
    for name, _, model, _, _, rng, _ in cases:
        key = (name, "unbounded")
        if key not in builds:
            builds[key] = atc(model, os.path.join(tmp, f"{len(builds)}"), [])
            builds[(name, "bounded")] = atc(model, os.path.join(tmp, f"{len(builds)}b"),
                                            [f"--input_shape_range={rng}"])
    rows = []
    for name, shape, model, inp, fixed, _, binds in cases:
        static = atc(model, os.path.join(tmp, f"s{len(rows)}"), [f"--input_shape={inp}:{fixed}"])
        times = {"static": [], "bounded": [], "unbounded": []}
        for _ in range(a.rounds):
            times["static"].append(latency(static, [], a.iterations))
            times["bounded"].append(latency(builds[(name, "bounded")], binds, a.iterations))
            times["unbounded"].append(latency(builds[(name, "unbounded")], binds, a.iterations))
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append((name, shape, med))
        print(f"{name} {shape}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in med.items()),
              file=sys.stderr, flush=True)
    print("| model | shape | static p50 | bounded dynamic p50 (ratio) | unbounded dynamic p50 (ratio) |")
    print("|---|---|---:|---:|---:|")
    for name, shape, m in rows:
        s = m["static"]
        print(f"| {name} | {shape} | {s:.3f} ms | {m['bounded']:.3f} ms ({m['bounded'] / s:.2f}x) "
              f"| {m['unbounded']:.3f} ms ({m['unbounded'] / s:.2f}x) |")


if __name__ == "__main__":
    main()
