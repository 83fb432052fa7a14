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

import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

import harness
from harness import FLOATS, INTS

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


def mutant(rng, seed):
    try:
        return mutate(rng, onnx.load(seed)).SerializeToString()
    except Exception:  # a mutant protobuf cannot serialise: not a test of ge
        return None


def main():
    ap = harness.arguments(__doc__, "target/fuzz-mutants")
    ap.add_argument("--cases", default=os.path.join(harness.ROOT, "tools/conformance/cases"),
                    help="directory of <case>/model.onnx seeds (tools/conformance/run.sh makes them)")
    a = ap.parse_args()
    seeds = sorted(glob.glob(os.path.join(a.cases, "*", "model.onnx")))
    if not seeds:
        sys.exit(f"no {a.cases}/*/model.onnx: run tools/conformance/run.sh once, or pass --cases")
    harness.campaign(a, seeds, mutant, ".onnx", "5")


if __name__ == "__main__":
    main()
