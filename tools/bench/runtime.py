#!/usr/bin/env python3
"""Runtime benchmark (issue 7): ge-run vs onnxruntime on ResNet-50, MobileNetV2 and
BERT-base (batch 1), in one run, on the very same ONNX files.

1. tools/bench/runtime_models.py writes the three models as ONNX with seeded random
   weights (into target/bench/runtime/, ignored by git);
2. `ge-translate --import-onnx` imports each into .air, `ge-run X.air --save-om` compiles
   it with the atc pipeline (variants: default, --no-fuse, --single-stream);
3. for 1 and 2 threads, the latency of `ge-run X.om --iterations N --warmup W --threads T
   --json` (timed inside ge-run: one Session::run per iteration, the model loaded once)
   and of onnxruntime's CPU provider on X.onnx (intra_op_num_threads=T,
   inter_op_num_threads=1, sequential execution, all graph optimisations; timed inside
   Python around session.run) — ge and ort runs interleaved, --rounds times (default
   3): this VM's 2-thread speed changes within minutes for both, so each round's ratio
   compares the two in the same few seconds, and the table reports the median round
   (its ge and ort p50s and their ratio) with the range of the per-round ratios;
4. fused vs unfused, multi-stream vs single-stream, and Ascend storage formats
   (NC1HWC0/FRACTAL_Z, the default) vs CPU-native NCHW/ND (--no-formats) — ge only, 1 thread;
5. a correctness check: ge's output vs onnxruntime's on the same inputs, with the ONNX
   conformance tolerance (element type and shape equal, |ge - ort| <= atol + rtol |ort|,
   rtol 1e-3 and atol 1e-7 as ge-conformance's default, or --rtol/--atol), where atol is
   raised to --atol-of-max (1e-6, about 8 f32 ulps) times the largest |ort| output: a whole network sums in
   a different order than onnxruntime through dozens of layers, so an output element near
   zero carries an absolute error of the scale of the output, not of itself (a ResNet-50
   logit of 0.0243 differs by 2.9e-5 among logits up to 325, 9e-8 of their scale). The script prints the tables
   and then exits 1 naming every model whose output differs.

The table reports median (p50) latency in ms of the median round; ratio = ge / ort
(below 1: ge is faster).

`--models light` stands for the onnx package's nine light models (light_bvlc_alexnet,
light_densenet121, ... light_zfnet512: onnx/backend/test/data/light in the .venv);
`--models dir:PATH` for every model.onnx under PATH — the PyTorch gauntlet's exports
(tools/models/gen_torch_gauntlet.py writes target/torch-gauntlet/<model>/<exporter>/;
its CI subset is testdata/onnx/torch), run on the in{k}.npy saved beside each model.

Usage: python3 tools/bench/runtime.py [--iterations 20] [--warmup 3] [--threads 1,2] [--rounds 3]
           [--models resnet50,mobilenet_v2,bert_base|light|dir:PATH] [--no-build] [--small] [--json FILE]
           [--rtol 1e-3] [--atol 1e-7] [--atol-of-max 1e-6]
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import benchlib  # noqa: E402
from benchlib import REPO, die, log, rel  # noqa: E402

OUT = os.path.join(REPO, "target", "bench", "runtime")
PYTHON = os.path.join(REPO, ".venv", "bin", "python")
MODELS = ["resnet50", "mobilenet_v2", "bert_base"]
# The onnx package's nine light real-architecture models (weights made by
# ConstantOfShape nodes, which both importers fold): --models light runs them.
LIGHT = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
         "shufflenet", "squeezenet", "vgg19", "zfnet512"]


def light_dir():
    """The light models' folder inside the .venv's onnx package."""
    code = "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend/test/data/light'))"
    return subprocess.run([PYTHON, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()

# onnxruntime timing, run in a child process (the .venv's Python).
ORT = r"""
import json, sys, time
import numpy as np
import onnxruntime as ort
path, threads, iters, warmup, inputs_npz, out_npy = sys.argv[1:7]
so = ort.SessionOptions()
so.intra_op_num_threads = int(threads)
so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
feeds = dict(np.load(inputs_npz))
for _ in range(int(warmup)):
    s.run(None, feeds)
ts = []
for _ in range(int(iters)):
    t = time.perf_counter()
    out = s.run(None, feeds)
    ts.append((time.perf_counter() - t) * 1e3)
if out_npy != "-":
    # Output i > 0 beside the first: X.ort.npy, X.ort.1.npy, ...
    for i, o in enumerate(out):
        np.save(out_npy if i == 0 else out_npy[:-4] + f".{i}.npy", o)
ts.sort()
pick = lambda p: ts[min(len(ts) - 1, round(p / 100 * (len(ts) - 1)))]
print(json.dumps({"runs": len(ts), "mean_ms": sum(ts) / len(ts), "p50_ms": pick(50),
                  "p90_ms": pick(90), "p99_ms": pick(99), "min_ms": ts[0],
                  "version": ort.__version__}))
"""

# Model inputs: the exporter's own in{k}.npy beside the model when given (a gauntlet
# folder: token ids within the vocabulary), else a fixed seed (int64 token ids for BERT,
# N(0,1) images otherwise).
INPUTS = r"""
import os, sys
import numpy as np
import onnx
m = onnx.load(sys.argv[1], load_external_data=False)
rng = np.random.default_rng(0)
feeds = {}
init = {i.name for i in m.graph.initializer}
given = sys.argv[4] if len(sys.argv) > 4 else ""
for i in m.graph.input:
    if i.name in init:
        continue
    saved = os.path.join(given, f"in{len(feeds)}.npy")
    if given and os.path.exists(saved):
        feeds[i.name] = np.load(saved)
        continue
    t = i.type.tensor_type
    shape = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
    if t.elem_type == onnx.TensorProto.INT64:
        feeds[i.name] = rng.integers(0, 500, size=shape).astype(np.int64)
    else:
        feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
np.savez(sys.argv[2], **feeds)
# Files by position: ONNX names may hold '/' (light_resnet50's 'gpu_0/data_0').
for k, v in enumerate(feeds.values()):
    np.save(f"{sys.argv[3]}.in{k}.npy", v)
print(" ".join(feeds))
"""


# ge's output vs onnxruntime's: dtype, shape, then numpy's isclose with the conformance
# tolerance; prints one JSON line (ok, why, max_abs, max_ort).
COMPARE = r"""
import json, sys
import numpy as np
ge, ort = np.load(sys.argv[1]), np.load(sys.argv[2])
rtol, atol, atol_of_max = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
r = {"ok": False, "why": "", "max_abs": float("nan"), "max_ort": float("nan")}
if ge.dtype != ort.dtype:
    r["why"] = f"element type {ge.dtype} but onnxruntime gives {ort.dtype}"
elif ge.shape != ort.shape:
    r["why"] = f"shape {ge.shape} but onnxruntime gives {ort.shape}"
else:
    a, b = ge.astype(np.float64), ort.astype(np.float64)
    if ge.dtype.kind in "iub":
        close = ge == ort
    else:
        if b.size and np.isfinite(b).any():
            atol = max(atol, atol_of_max * float(np.nanmax(np.abs(b[np.isfinite(b)]))))
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    d = np.abs(a - b)
    r["max_abs"] = float(np.nanmax(d)) if d.size else 0.0
    r["max_ort"] = float(np.nanmax(np.abs(b))) if b.size else 0.0
    bad = np.flatnonzero(~close)
    if bad.size:
        k = int(bad[0])
        idx = np.unravel_index(k, ge.shape)
        r["why"] = (f"{bad.size} of {ge.size} elements differ beyond rtol {rtol}, atol {atol}; "
                    f"first at {list(map(int, idx))}: ge {float(a.flat[k])!r}, onnxruntime {float(b.flat[k])!r}")
    else:
        r["ok"] = True
print(json.dumps(r))
"""


def expand(spec, paths):
    """The model names of one --models entry: `light` (the nine light models),
    `dir:PATH` (every model.onnx under PATH, e.g. a PyTorch gauntlet folder
    target/torch-gauntlet or testdata/onnx/torch: named by its folder, `bert/dynamo`
    as `torch_bert_dynamo`, its ONNX file recorded in `paths`), or one generated model."""
    if spec == "light":
        return ["light_" + n for n in LIGHT]
    if not spec.startswith("dir:"):
        return [spec]
    root = os.path.abspath(spec[4:])
    if not os.path.isdir(root):
        die(f"--models {spec}: {root} is not a folder")
    found = []
    for d, _, files in sorted(os.walk(root)):
        if "model.onnx" in files:
            name = "torch_" + os.path.relpath(d, root).replace(os.sep, "_")
            paths[name] = os.path.join(d, "model.onnx")
            found.append(name)
    if not found:
        die(f"--models {spec}: no model.onnx under {root}")
    return sorted(found)


def run(cmd, what, capture=True):
    shown = [c if "\n" not in c else "<script>" for c in cmd]
    log("$ " + benchlib.shell_join(shown))
    p = subprocess.run(cmd, capture_output=capture, text=True)
    if p.returncode != 0:
        die(f"{what} failed (exit {p.returncode}): {(p.stderr or '').strip()[-2000:]}")
    return p.stdout


def newer(target, *sources):
    return os.path.exists(target) and all(
        os.path.getmtime(target) >= os.path.getmtime(s) for s in sources)


def last_json(text):
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    die(f"no JSON line in: {text[-500:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3,
                    help="ge/ort interleaved rounds per model and thread count (default 3)")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--small", action="store_true", help="small configurations (quick check)")
    ap.add_argument("--no-variants", action="store_true", help="skip fused/unfused, streams")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--rtol", type=float, default=1e-3,
                    help="relative tolerance of the ge-vs-ort check (conformance default 1e-3)")
    ap.add_argument("--atol", type=float, default=1e-7,
                    help="absolute tolerance of the ge-vs-ort check (conformance default 1e-7)")
    ap.add_argument("--atol-of-max", type=float, default=1e-6,
                    help="raise atol to this times the largest |ort| output (whole networks)")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    paths = {}  # model name -> ONNX file, for the models of a `dir:` spec
    models = [m for spec in a.models.split(",") for m in expand(spec, paths)]
    out = OUT + ("-small" if a.small else "")
    os.makedirs(out, exist_ok=True)
    if not os.path.exists(PYTHON):
        die(f"{rel(PYTHON)} not found: create the venv (onnx, onnxruntime, numpy)")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    ge_run = os.path.join(target, "release", "ge-run")
    ge_translate = os.path.join(target, "release", "ge-translate")
    if not a.no_build:
        run(["cargo", "build", "--release", "-q", "-p", "ge-driver", "--bin", "ge-run",
             "--bin", "ge-translate"], "cargo build", capture=False)
    for exe in (ge_run, ge_translate):
        if not os.path.exists(exe):
            die(f"{exe} does not exist (build it or drop --no-build)")

    # 1. ONNX models.
    gen = os.path.join(HERE, "runtime_models.py")
    generated = [m for m in models if not m.startswith("light_") and m not in paths]
    if not all(newer(os.path.join(out, m + ".onnx"), gen) for m in generated):
        cmd = [PYTHON, gen, out] + (["--small"] if a.small else [])
        run(cmd, "runtime_models.py", capture=False)

    results = {"machine": benchlib.machine(), "rev": benchlib.git_rev(), "models": {}}
    rows, variant_rows, checks = [], [], []
    for m in models:
        onnx_path = paths.get(m) or (os.path.join(light_dir(), m + ".onnx") if m.startswith("light_")
                                     else os.path.join(out, m + ".onnx"))
        air = os.path.join(out, m + ".air")
        # 2. Import and compile (default, unfused, one stream).
        if not newer(air, onnx_path):
            t = time.perf_counter()
            run([ge_translate, "--import-onnx", onnx_path, "-o", air], "import")
            log(f"  imported in {time.perf_counter() - t:.1f} s")
        names = run([PYTHON, "-c", INPUTS, onnx_path, os.path.join(out, m + ".inputs.npz"),
                     os.path.join(out, m)] + ([os.path.dirname(onnx_path)] if m in paths else []),
                    "inputs").split()
        oms = {}
        for variant, flags in [("default", []), ("no-fuse", ["--no-fuse"]),
                               ("single-stream", ["--single-stream"]),
                               ("no-formats", ["--no-formats"])]:
            if a.no_variants and variant != "default":
                continue
            om = os.path.join(out, f"{m}.{variant}.om")
            # Recompile when the model or the compiler changed.
            if not (newer(om, air) and newer(om, ge_run)):
                t = time.perf_counter()
                run([ge_run, air, "--save-om", om, "--random-inputs", "--info"] + flags,
                    f"compile {m} {variant}")
                log(f"  compiled {variant} in {time.perf_counter() - t:.1f} s")
            oms[variant] = om
        info = run([ge_run, oms["default"], "--info", "--random-inputs"], "info")
        log(info.strip())
        ins = []
        for k, _ in enumerate(names):
            ins += ["--input", f"arg{k}={os.path.join(out, f'{m}.in{k}.npy')}"]

        # 5. Correctness: ge vs ort on the same inputs, every output.
        # `ge-run --info` lists each output as "output NAME: TYPE" (then "output #i: ..." values).
        n_out = sum(1 for ln in info.splitlines() if ln.startswith("output ") and not ln.startswith("output #"))
        at = lambda side, i: os.path.join(out, f"{m}.{side}.npy" if i == 0 else f"{m}.{side}.{i}.npy")
        ge_outs = [at("ge", i) for i in range(max(1, n_out))]
        run([ge_run, oms["default"]] + [x for o in ge_outs for x in ("--output", o)] + ins, "ge-run")
        run([PYTHON, "-c", ORT, onnx_path, "1", "1", "0",
             os.path.join(out, m + ".inputs.npz"), at("ort", 0)], "onnxruntime")
        per = [last_json(run([PYTHON, "-c", COMPARE, g, at("ort", i), str(a.rtol), str(a.atol),
                              str(a.atol_of_max)], "compare"))
               for i, g in enumerate(ge_outs)]
        bad = [(i, p) for i, p in enumerate(per) if not p["ok"]]
        c = dict(per[0], max_abs=max(p["max_abs"] for p in per), max_ort=max(p["max_ort"] for p in per),
                 ok=not bad)
        if bad:
            c["why"] = "; ".join(f"output {i}: {p['why']}" for i, p in bad)
        checks.append((m, c))
        log(f"  {m}: ge vs ort max |diff| {c['max_abs']:.2e} (max |ort| {c['max_ort']:.2e})"
            + ("" if c["ok"] else f": DIFFERS: {c['why']}"))

        # 3. Latency, ge and ort interleaved.
        def ge(om, t, extra=()):
            cmd = [ge_run, om, "--iterations", str(a.iterations), "--warmup", str(a.warmup),
                   "--threads", str(t), "--json"] + ins + list(extra)
            r = last_json(run(cmd, f"ge-run {rel(om)}"))
            r["cmd"] = benchlib.shell_join(cmd)
            return r

        def ortt(t):
            cmd = [PYTHON, "-c", ORT, onnx_path, str(t), str(a.iterations), str(a.warmup),
                   os.path.join(out, m + ".inputs.npz"), "-"]
            return last_json(run(cmd, "onnxruntime"))

        res = results["models"][m] = {"threads": {}, "variants": {}}
        for t in threads:
            rounds = []
            for _ in range(max(1, a.rounds)):
                g, o = ge(oms["default"], t), ortt(t)
                rounds.append((g["p50_ms"] / o["p50_ms"], g, o))
                log(f"  {m} threads={t}: ge p50 {g['p50_ms']:.2f} ms, ort p50 "
                    f"{o['p50_ms']:.2f} ms, ratio {g['p50_ms'] / o['p50_ms']:.2f}")
            rounds.sort(key=lambda r: r[0])
            _, g, o = rounds[len(rounds) // 2]
            spread = (rounds[0][0], rounds[-1][0])
            res["threads"][t] = {"ge": g, "ort": o, "ratios": [r[0] for r in rounds]}
            results["ort_version"] = o["version"]
            rows.append((m, t, g, o, spread))
        # 4. Variants (1 thread).
        if not a.no_variants:
            base = res["threads"].get(1, {}).get("ge") or ge(oms["default"], 1)
            for v in ("no-fuse", "single-stream", "no-formats"):
                r = ge(oms[v], 1)
                res["variants"][v] = r
                variant_rows.append((m, v, base, r))
        res["streams"] = next((ln.split(": ", 1)[1].split(";")[0] for ln in info.splitlines()
                               if " streams, " in ln), "")

    # Tables.
    print(f"Machine: {results['machine']}; rev {results['rev']}; "
          f"onnxruntime {results.get('ort_version', '?')}; {a.iterations} timed runs after "
          f"{a.warmup} warm-up runs, {a.rounds} interleaved rounds; load average "
          f"{benchlib.loadavg():.1f}\n")
    print("| model | threads | ge-run p50 ms (p90) | onnxruntime p50 ms (p90) | ge / ort "
          "(median round) | per-round ratios |")
    print("|---|---|---|---|---|---|")
    for m, t, g, o, (lo, hi) in rows:
        print(f"| {m} | {t} | {g['p50_ms']:.2f} ({g['p90_ms']:.2f}) | {o['p50_ms']:.2f} "
              f"({o['p90_ms']:.2f}) | {g['p50_ms'] / o['p50_ms']:.2f}× | {lo:.2f}–{hi:.2f} |")
    if variant_rows:
        print("\n| model | variant (1 thread) | default p50 ms | variant p50 ms | variant / default |")
        print("|---|---|---|---|---|")
        for m, v, b, r in variant_rows:
            print(f"| {m} | {v} | {b['p50_ms']:.2f} | {r['p50_ms']:.2f} | "
                  f"{r['p50_ms'] / b['p50_ms']:.2f}× |")
    print(f"\n| model | task program | ge vs ort: max abs diff (max abs ort output) | "
          f"within rtol {a.rtol:g}, atol max({a.atol:g}, {a.atol_of_max:g} max|ort|) |")
    print("|---|---|---|---|")
    for m, c in checks:
        s = results["models"][m].get("streams", "")
        print(f"| {m} | {s} | {c['max_abs']:.2e} ({c['max_ort']:.2e}) | "
              f"{'yes' if c['ok'] else 'NO: ' + c['why']} |")
    for m, c in checks:
        results["models"][m]["check"] = c
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    wrong = [(m, c["why"]) for m, c in checks if not c["ok"]]
    if wrong:
        die("ge's output differs from onnxruntime's: "
            + "; ".join(f"{m}: {why}" for m, why in wrong), code=1)


if __name__ == "__main__":
    main()
