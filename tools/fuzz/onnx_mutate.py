#!/usr/bin/env python3
"""Structure-aware mutation of ONNX models, run through ge-atc and ge-run.

Each mutant is a model of the seed set (default: the ONNX node tests that
tools/conformance/run.sh generates) with one to three edits a hostile or
broken exporter could make: an attribute set to an extreme (0, -1, 2^31,
2^40, NaN, inf, another mode string), an input's or output's dim or element
type changed or dropped, an initializer's dims changed without its data or one of its
values (a shape, axes, pads, repeats, scales) set to an extreme, an
operand renamed, dropped or added, the opset changed. `ge-atc` compiles it
and, when that succeeds, `ge-run --random-inputs` runs it under a memory
budget and a timeout, each tool in an address space of --memory-gib with a quarter of it as its
`--max-memory` budget. Any exit that is not 0 or a clean error (1, 2) — a
panic (101), a signal, a hang — is a finding: the mutant and the tool's
stderr are kept in --out. libFuzzer's targets in fuzz/ cover the same code
with coverage guidance but need nightly and an hour of ASan build; this
runs on the release binaries at ~60 mutants a second.

    .venv/bin/python tools/fuzz/onnx_mutate.py -n 20000 --seed 2
"""

import argparse
import glob
import hashlib
import os
import random
import resource
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INTS = [0, -1, 1, 2, 3, -2, 7, 100, 1 << 20, 1 << 31, -(1 << 31), 1 << 40]
FLOATS = [0.0, -1.0, 0.5, 1e-30, 1e30, float("nan"), float("inf")]
STRINGS = [b"", b"foo", b"NOTSET", b"SAME_UPPER", b"VALID", b"linear", b"nearest", b"cubic"]
DTYPES = [1, 2, 3, 6, 7, 9, 10, 11, 16]


def mutate_attribute(rng, g):
    nodes = [n for n in g.node if n.attribute]
    if not nodes:
        return
    a = rng.choice(rng.choice(nodes).attribute)
    if a.type == onnx.AttributeProto.INT:
        a.i = rng.choice(INTS)
    elif a.type == onnx.AttributeProto.FLOAT:
        a.f = rng.choice(FLOATS)
    elif a.type == onnx.AttributeProto.STRING:
        a.s = rng.choice(STRINGS)
    elif a.type == onnx.AttributeProto.INTS and len(a.ints):
        a.ints[rng.randrange(len(a.ints))] = rng.choice(INTS)
        if rng.random() < 0.3:
            a.ints.append(rng.choice(INTS))
        elif rng.random() < 0.2:
            del a.ints[-1]


def mutate_value_type(rng, g):
    vs = list(g.input) + list(g.output)
    if not vs:
        return
    t = rng.choice(vs).type.tensor_type
    dims = t.shape.dim
    if len(dims) and rng.random() < 0.7:
        d = rng.choice(dims)
        if rng.random() < 0.3:
            d.dim_param = rng.choice(["N", "M", "x"])
        else:
            d.dim_value = rng.choice([0, 1, 2, 3, 5, 1 << 20])
    elif len(dims) and rng.random() < 0.5:
        del dims[-1]
    else:
        t.elem_type = rng.choice(DTYPES)


def mutate_initializer(rng, g):
    if not len(g.initializer):
        return
    t = rng.choice(g.initializer)
    if len(t.dims):
        t.dims[rng.randrange(len(t.dims))] = rng.choice([0, 1, 2, 3, 1 << 20])
    else:
        t.dims.append(rng.choice([0, 2]))


def mutate_initializer_values(rng, g):
    """An element of a small integer or float initializer (a shape, axes,
    pads, repeats, scales, K) set to an extreme: values used as sizes."""
    small = [t for t in g.initializer if 0 < numpy_helper.to_array(t).size <= 16
             and t.data_type in (1, 6, 7, 10, 11)]
    if not small:
        return
    t = rng.choice(small)
    a = numpy_helper.to_array(t).copy()
    flat = a.reshape(-1)
    if a.dtype.kind == "f":
        flat[rng.randrange(flat.size)] = rng.choice(FLOATS)
    else:
        info = np.iinfo(a.dtype)
        flat[rng.randrange(flat.size)] = max(info.min, min(info.max, rng.choice(INTS + [info.min, info.max])))
    t.CopyFrom(numpy_helper.from_array(a, t.name))


def mutate_operands(rng, g):
    if not len(g.node):
        return
    n = rng.choice(g.node)
    if n.input and rng.random() < 0.5:
        n.input[rng.randrange(len(n.input))] = rng.choice(["", n.input[0], "nope"])
    else:
        n.input.append(rng.choice(["", n.output[0] if n.output else "x"]))


def mutate(rng, m):
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.4:
            mutate_attribute(rng, m.graph)
        elif r < 0.65:
            mutate_value_type(rng, m.graph)
        elif r < 0.72:
            mutate_initializer(rng, m.graph)
        elif r < 0.8:
            mutate_initializer_values(rng, m.graph)
        elif r < 0.9:
            mutate_operands(rng, m.graph)
        elif m.opset_import:
            m.opset_import[0].version = rng.choice([1, 6, 7, 9, 11, 13, 18, 21, 23, 30])
    return m


def run(cmd, timeout, memory):
    def limit():
        # An allocation past the budget fails (Rust aborts: a finding)
        # instead of the machine's OOM killer picking a victim.
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    try:
        r = subprocess.run(cmd, capture_output=True, timeout=timeout, preexec_fn=limit)
        return r.returncode, r.stderr[-2000:].decode(errors="replace")
    except subprocess.TimeoutExpired:
        return "hang", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=5000, help="mutants to try")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", default=os.path.join(ROOT, "tools/conformance/cases"),
                    help="directory of <case>/model.onnx seeds (tools/conformance/run.sh makes them)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release"), help="where ge-atc and ge-run are")
    ap.add_argument("--out", default=os.path.join(ROOT, "target/fuzz-mutants"), help="where findings go")
    ap.add_argument("--timeout", type=float, default=60, help="seconds before a tool counts as hung")
    ap.add_argument("--memory-gib", type=float, default=8,
                    help="address space per tool run (each tool's --max-memory budget is a quarter of it)")
    a = ap.parse_args()
    seeds = sorted(glob.glob(os.path.join(a.cases, "*", "model.onnx")))
    if not seeds:
        sys.exit(f"no {a.cases}/*/model.onnx: run tools/conformance/run.sh once, or pass --cases")
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    scratch = os.path.join(a.out, f"current_{a.seed}")
    counts, findings = {}, 0
    for i in range(a.n):
        seed = rng.choice(seeds)
        try:
            data = mutate(rng, onnx.load(seed)).SerializeToString()
        except Exception:  # a mutant protobuf cannot serialise: not a test of ge
            continue
        with open(scratch + ".onnx", "wb") as f:
            f.write(data)
        steps = [("atc", [os.path.join(a.bin, "ge-atc"), "--model", scratch + ".onnx", "--framework", "5",
                          "--output", scratch, "--max-memory", str(int(a.memory_gib * 2**28))])]
        steps.append(("run", [os.path.join(a.bin, "ge-run"), scratch + ".om", "--random-inputs",
                              "--timeout", "10", "--max-memory", str(int(a.memory_gib * 2**28))]))
        for what, cmd in steps:
            rc, err = run(cmd, a.timeout, int(a.memory_gib * 2**30))
            key = f"{what} {rc if rc in (0, 1, 2) else 'FINDING'}"
            counts[key] = counts.get(key, 0) + 1
            if rc not in (0, 1, 2):
                findings += 1
                h = hashlib.sha1(data).hexdigest()[:10]
                with open(os.path.join(a.out, f"{what}_{rc}_{h}.onnx"), "wb") as f:
                    f.write(data)
                with open(os.path.join(a.out, f"{what}_{rc}_{h}.txt"), "w") as f:
                    f.write(f"seed model: {seed}\ncommand: {' '.join(cmd)}\n\n{err}")
                print(f"finding: {what} exit {rc} from a mutant of {os.path.basename(os.path.dirname(seed))}: "
                      f"{os.path.join(a.out, f'{what}_{rc}_{h}.onnx')}", flush=True)
            if rc != 0:
                break
        if (i + 1) % 1000 == 0:
            print(f"{i + 1} mutants: {counts}", flush=True)
    print(f"{a.n} mutants: {counts}; {findings} findings", flush=True)
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
