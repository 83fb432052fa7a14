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

import glob
import os
import sys

import harness
from harness import FLOATS, INTS

sys.path.insert(0, os.path.join(harness.ROOT, "tools"))
from gen_test_models import tf_protos  # noqa: E402

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


def main():
    ap = harness.arguments(__doc__, "target/fuzz-mutants-tf")
    ap.add_argument("--seeds-dir", default=os.path.join(harness.ROOT, "testdata/tf"),
                    help="GraphDefs (*.pb) below it")
    a = ap.parse_args()
    graph_pb2, _ = tf_protos()
    seeds = sorted(glob.glob(os.path.join(a.seeds_dir, "**", "*.pb"), recursive=True))
    if not seeds:
        sys.exit(f"no GraphDefs below {a.seeds_dir}")

    def mutant(rng, seed):
        g = graph_pb2.GraphDef()
        try:
            g.ParseFromString(open(seed, "rb").read())
            mutate(rng, g)
            return g.SerializeToString()
        except Exception:  # a seed that is not a GraphDef (an error case) or a mutant that cannot serialise
            return None

    harness.campaign(a, seeds, mutant, ".pb", "3")


if __name__ == "__main__":
    main()
