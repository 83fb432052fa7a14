#!/usr/bin/env python3
"""Structure-aware mutation of TensorFlow GraphDefs, run through ge-atc and ge-run.

The TensorFlow twin of tools/fuzz/onnx_mutate.py: each mutant is one of the
GraphDefs under testdata/tf (the per-op models, the Keras-style models, the
error cases) with one to three edits — an attribute set to an extreme (ints,
floats, int lists, shapes, dtypes), a Const's dims or values changed, an
input renamed or dropped — compiled by `ge-atc --framework 3` and, when that
succeeds, run by `ge-run --random-inputs` under a timeout and a memory budget,
each tool in an address space of --memory-gib. Any exit other than 0, 1 and 2
(a panic, a signal, an abort) and any run past --timeout is a finding, kept
in --out with the tool's stderr. ge's .proto subset is compiled with
grpcio-tools (tools/frontends/requirements.txt), as tools/gen_test_models.py
does.

    .venv/bin/python tools/fuzz/tf_mutate.py -n 20000 --seed 1
"""

import argparse
import glob
import hashlib
import os
import random
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from gen_test_models import tf_protos  # noqa: E402

INTS = [0, -1, 1, 2, 3, -2, 7, 100, 1 << 20, 1 << 31, -(1 << 31), 1 << 40]
FLOATS = [0.0, -1.0, 0.5, 1e-30, 1e30, float("nan"), float("inf")]
STRINGS = [b"", b"SAME", b"VALID", b"NHWC", b"NCHW", b"EXPLICIT", b"foo"]
DTYPES = [1, 2, 3, 4, 6, 9, 10, 19, 14]


def mutate_attr(rng, a):
    kind = a.WhichOneof("value")
    if kind == "i":
        a.i = rng.choice(INTS)
    elif kind == "f":
        a.f = rng.choice(FLOATS)
    elif kind == "s":
        a.s = rng.choice(STRINGS)
    elif kind == "type":
        a.type = rng.choice(DTYPES)
    elif kind == "shape" and len(a.shape.dim):
        rng.choice(a.shape.dim).size = rng.choice([-1, 0, 1, 3, 1 << 20, 1 << 40])
    elif kind == "list" and len(a.list.i):
        a.list.i[rng.randrange(len(a.list.i))] = rng.choice(INTS)
        if rng.random() < 0.3:
            a.list.i.append(rng.choice(INTS))
    elif kind == "tensor":
        mutate_tensor(rng, a.tensor)


def mutate_tensor(rng, t):
    dims = t.tensor_shape.dim
    if len(dims) and rng.random() < 0.5:
        rng.choice(dims).size = rng.choice([0, 1, 2, 3, 1 << 20, 1 << 40])
    elif len(t.int_val):
        t.int_val[rng.randrange(len(t.int_val))] = rng.choice(INTS) & 0x7FFFFFFF
    elif len(t.int64_val):
        t.int64_val[rng.randrange(len(t.int64_val))] = rng.choice(INTS)
    elif len(t.float_val):
        t.float_val[rng.randrange(len(t.float_val))] = rng.choice(FLOATS)
    elif t.tensor_content:
        b = bytearray(t.tensor_content)
        b[rng.randrange(len(b))] = rng.randrange(256)
        t.tensor_content = bytes(b)


def mutate(rng, g):
    nodes = list(g.node)
    if not nodes:
        return
    for _ in range(rng.randint(1, 3)):
        n = rng.choice(nodes)
        r = rng.random()
        if r < 0.7 and n.attr:
            mutate_attr(rng, n.attr[rng.choice(list(n.attr.keys()))])
        elif r < 0.85 and n.input:
            n.input[rng.randrange(len(n.input))] = rng.choice(["", "nope", n.input[0], n.name])
        elif n.input:
            del n.input[-1]


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
    ap.add_argument("--seeds-dir", default=os.path.join(ROOT, "testdata/tf"), help="GraphDefs (*.pb) below it")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release"), help="where ge-atc and ge-run are")
    ap.add_argument("--out", default=os.path.join(ROOT, "target/fuzz-mutants-tf"), help="where findings go")
    ap.add_argument("--timeout", type=float, default=60, help="seconds before a tool counts as hung")
    ap.add_argument("--memory-gib", type=float, default=8,
                    help="address space per tool run (each tool's --max-memory budget is a quarter of it)")
    a = ap.parse_args()
    graph_pb2, _ = tf_protos()
    seeds = sorted(glob.glob(os.path.join(a.seeds_dir, "**", "*.pb"), recursive=True))
    if not seeds:
        sys.exit(f"no GraphDefs below {a.seeds_dir}")
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    scratch = os.path.join(a.out, f"current_{a.seed}")
    counts, findings = {}, 0
    for i in range(a.n):
        seed = rng.choice(seeds)
        g = graph_pb2.GraphDef()
        try:
            g.ParseFromString(open(seed, "rb").read())
            mutate(rng, g)
            data = g.SerializeToString()
        except Exception:  # a seed that is not a GraphDef (an error case) or a mutant that cannot serialise
            continue
        with open(scratch + ".pb", "wb") as f:
            f.write(data)
        steps = [("atc", [os.path.join(a.bin, "ge-atc"), "--model", scratch + ".pb", "--framework", "3",
                          "--output", scratch, "--max-memory", str(int(a.memory_gib * 2**28))]),
                 ("run", [os.path.join(a.bin, "ge-run"), scratch + ".om", "--random-inputs",
                          "--timeout", "10", "--max-memory", str(int(a.memory_gib * 2**28))])]
        for what, cmd in steps:
            rc, err = run(cmd, a.timeout, int(a.memory_gib * 2**30))
            key = f"{what} {rc if rc in (0, 1, 2) else 'FINDING'}"
            counts[key] = counts.get(key, 0) + 1
            if rc not in (0, 1, 2):
                findings += 1
                h = hashlib.sha1(data).hexdigest()[:10]
                with open(os.path.join(a.out, f"{what}_{rc}_{h}.pb"), "wb") as f:
                    f.write(data)
                with open(os.path.join(a.out, f"{what}_{rc}_{h}.txt"), "w") as f:
                    f.write(f"seed model: {seed}\ncommand: {' '.join(cmd)}\n\n{err}")
                print(f"finding: {what} exit {rc} from a mutant of {os.path.relpath(seed, ROOT)}: "
                      f"{os.path.join(a.out, f'{what}_{rc}_{h}.pb')}", flush=True)
            if rc != 0:
                break
        if (i + 1) % 1000 == 0:
            print(f"{i + 1} mutants: {counts}", flush=True)
    print(f"{a.n} mutants: {counts}; {findings} findings", flush=True)
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
