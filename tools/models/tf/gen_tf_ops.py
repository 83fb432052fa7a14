#!/usr/bin/env python3
"""Build one tiny frozen GraphDef per TensorFlow op type the importer maps
(testdata/tf/ops/CASE), with TensorFlow's outputs, for the per-op lit test
lit-tests/frontends/tf-ops.test.

    /work/venvs/tf/bin/python tools/models/tf/gen_tf_ops.py          # all cases
    /work/venvs/tf/bin/python tools/models/tf/gen_tf_ops.py --only Cumsum,Tile
    tools/models/tf/run.py --dir testdata/tf/ops --forms frozen,saved # compare ge with TF
    tools/models/tf/gen_tf_ops.py --check                            # coverage only (no TF needed)

Each case declares the op types it is for (`ops`); the generator refuses a case
whose frozen graph lacks one of them (so a case cannot silently test an op TF
rewrote into another). `--check` compares the union of the declared ops with
`ge-translate --list-tf-ops` (the importer's op table; the structural ops —
control flow, calls, variables, identities — are the model set's, tf-models.test) and fails naming every importer op that
has no case — the importer's op table is the one list.

Each CASE directory has frozen.pb, inN.npy/outN.npy and meta.json in the
format of gen_tf_models.py (so tools/models/tf/run.py runs them); a case with
variables (ResourceGather only exists in a SavedModel) also has saved_model/.
Inputs are seeded per case; everything is a few hundred bytes.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.join(ROOT, "testdata", "tf", "ops")

CASES = {}


def case(name, ops=None, saved=False):
    """Register a case: `fn(rng)` returns (function, [input arrays])."""

    def wrap(fn):
        CASES[name] = dict(build=fn, ops=ops or [name], saved=saved)
        return fn

    return wrap


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--check", action="store_true",
                    help="only check that every importer op has a case (needs no TensorFlow)")
    ap.add_argument("--bin-dir", default=os.environ.get("GE_BIN_DIR", os.path.join(ROOT, "target", "debug")))
    a = ap.parse_args()
    if a.check:
        sys.exit(check(a.out, a.bin_dir))
    generate(a.out, a.only)


def check(out, bins):
    """Every op of `ge-translate --list-tf-ops` that is not structural has a case in `out`."""
    listed = subprocess.run([os.path.join(bins, "ge-translate"), "--list-tf-ops"],
                            capture_output=True, text=True, check=True).stdout.split()
    covered = set()
    for d in sorted(os.listdir(out)):
        p = os.path.join(out, d, "meta.json")
        if os.path.exists(p):
            covered |= set(json.load(open(p))["tests_ops"])
    # --list-tf-ops lists the op table only, not the structural ops.
    mapped = listed
    missing = [o for o in mapped if o not in covered]
    print(f"{len(mapped)} mapped ops, {len(mapped) - len(missing)} with a per-op case")
    for o in missing:
        print(f"no per-op case: {o}")
    return 1 if missing else 0


def generate(out, only):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    global tf, np
    import numpy as np
    import tensorflow as tf

    define_cases(tf, np)
    names = only.split(",") if only else list(CASES)
    failed = []
    for name in names:
        if name not in CASES:
            sys.exit(f"unknown case {name}")
        try:
            write(name, out)
        except Exception as e:  # report every broken case at once
            failed.append(name)
            print(f"case {name}: {str(e).strip().splitlines()[-1]}", file=sys.stderr)
    size = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(out) for x in fs)
    print(f"wrote {len(names) - len(failed)} cases to {out} ({size / 1e3:.0f} kB in all)")
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


def write(name, out):
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    info = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    fn, xs = info["build"](rng)
    specs = [tf.TensorSpec(x.shape, tf.as_dtype(x.dtype), name=f"x{i}") for i, x in enumerate(xs)]
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)

    if info["saved"]:
        mod = fn  # a tf.Module with a `serve` tf.function

        def serve(*args):
            return mod(*args)

        tfn = tf.function(serve, input_signature=specs)
    else:
        tfn = tf.function(fn, input_signature=specs)
    cf = tfn.get_concrete_function()
    res = cf(*[tf.constant(x) for x in xs])
    res = list(res) if isinstance(res, (list, tuple)) else [res]
    frozen = convert_variables_to_constants_v2(cf)
    gd = frozen.graph.as_graph_def()
    ops = sorted({n.op for n in gd.node})
    with open(os.path.join(d, "frozen.pb"), "wb") as f:
        f.write(gd.SerializeToString())
    graph_ops = set(ops)
    if info["saved"]:
        holder = tf.Module()
        holder.m = mod

        def signature(*args):
            r = mod(*args)
            r = list(r) if isinstance(r, (list, tuple)) else [r]
            return {f"output_{i}": o for i, o in enumerate(r)}

        holder.serve = tf.function(signature, input_signature=specs)
        tf.saved_model.save(holder, os.path.join(d, "saved_model"),
                            signatures={"serving_default": holder.serve})
        graph_ops |= {n.op for n in holder.serve.get_concrete_function().graph.as_graph_def().node}
    lacking = [o for o in info["ops"] if o not in graph_ops]
    if lacking:
        raise ValueError(f"TensorFlow emitted {sorted(graph_ops)}, not {lacking}")
    for i, x in enumerate(xs):
        np.save(os.path.join(d, f"in{i}.npy"), x)
    for i, r in enumerate(res):
        np.save(os.path.join(d, f"out{i}.npy"), r.numpy())
    meta = dict(
        name=name, kind="op", note="", tests_ops=info["ops"],
        inputs=[s.name for s in specs],
        input_shapes=[list(x.shape) for x in xs],
        frozen_inputs=[t.name for t in frozen.inputs],
    frozen_outputs=[t.name for t in frozen.outputs],
        signature_outputs=[f"output_{i}" for i in range(len(res))],
        functional=False, tf_version=tf.__version__, ops=ops,
    )
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def define_cases(tf, np):
    raw = tf.raw_ops

    def f(rng, *shape):
        return rng.standard_normal(shape).astype(np.float32)

    def pos(rng, *shape):
        return rng.uniform(0.5, 2.0, shape).astype(np.float32)

    def ints(rng, lo, hi, *shape):
        return rng.integers(lo, hi, size=shape).astype(np.int32)

    def bools(rng, *shape):
        return rng.integers(0, 2, size=shape).astype(bool)

    def c(x):
        return tf.constant(x)

    # ---- elementwise unary
    unary = {
        "Abs": (tf.abs, f), "Ceil": (tf.math.ceil, f), "Cos": (tf.cos, f), "Exp": (tf.exp, f),
        "Floor": (tf.floor, f), "Log": (tf.math.log, pos), "Log1p": (tf.math.log1p, pos),
        "Neg": (tf.negative, f), "Reciprocal": (raw.Reciprocal, pos), "Relu": (tf.nn.relu, f),
        "Rsqrt": (tf.math.rsqrt, pos), "Sigmoid": (tf.sigmoid, f), "Sign": (tf.sign, f),
        "Sin": (tf.sin, f), "Sqrt": (tf.sqrt, pos), "Square": (tf.square, f), "Tanh": (tf.tanh, f),
        "Elu": (tf.nn.elu, f), "Selu": (tf.nn.selu, f), "Softplus": (tf.nn.softplus, f),
        "Softsign": (tf.nn.softsign, f), "Erf": (tf.math.erf, f), "Erfc": (tf.math.erfc, f),
    }
    for op, (fn, gen) in unary.items():
        def build(rng, fn=fn, gen=gen, op=op):
            g = (lambda x: fn(x=x)) if fn is getattr(raw, op, None) else fn
            return g, [gen(rng, 2, 3, 4) * (1 if gen is pos else 2)]
        case(op)(build)

    @case("Round")
    def _(rng):  # half to even: 0.5 -> 0, 1.5 -> 2, -2.5 -> -2
        return tf.round, [np.array([[0.5, 1.5, -2.5, 2.49], [-0.51, 3.7, -1.2, 7.5]], np.float32)]

    @case("Relu6")
    def _(rng):
        return tf.nn.relu6, [f(rng, 3, 5) * 5]

    @case("LeakyRelu")
    def _(rng):
        return lambda x: tf.nn.leaky_relu(x, alpha=0.3), [f(rng, 3, 5)]

    @case("Cast")
    def _(rng):  # float -> int truncates toward zero; int -> float; -> bool
        return lambda x, i: (tf.cast(x, tf.int32), tf.cast(i, tf.float32), tf.cast(x, tf.bool)), \
            [f(rng, 2, 5) * 4, ints(rng, -9, 9, 3)]

    @case("ClipByValue")
    def _(rng):
        return lambda x: raw.ClipByValue(t=x, clip_value_min=c(-0.5), clip_value_max=c(0.7)), [f(rng, 3, 4)]

    # ---- elementwise binary (with broadcasting)
    binary = {
        "Add": lambda x, y: raw.Add(x=x, y=y), "AddV2": tf.add, "Sub": tf.subtract, "Mul": tf.multiply,
        "RealDiv": tf.divide, "Maximum": tf.maximum, "Minimum": tf.minimum,
        "SquaredDifference": tf.math.squared_difference, "FloorMod": tf.math.floormod,
        "Greater": tf.greater, "GreaterEqual": tf.greater_equal, "Less": tf.less,
        "LessEqual": tf.less_equal,
    }
    for op, fn in binary.items():
        def build(rng, fn=fn):
            return fn, [f(rng, 2, 3, 4), f(rng, 3, 1) + 0.1]
        case(op)(build)

    @case("Pow")
    def _(rng):
        return tf.pow, [pos(rng, 2, 3), f(rng, 3)]

    @case("FloorDiv")
    def _(rng):  # rounds toward -inf on negative integers
        b = ints(rng, 1, 4, 2, 4) * np.where(ints(rng, 0, 2, 2, 4) > 0, 1, -1).astype(np.int32)
        return tf.math.floordiv, [ints(rng, -20, 20, 2, 4), b]

    @case("DivNoNan")
    def _(rng):
        y = f(rng, 2, 4)
        y[0, 1] = y[1, 3] = 0
        return tf.math.divide_no_nan, [f(rng, 2, 4), y]

    @case("Equal", ops=["Equal", "NotEqual"])
    def _(rng):
        return lambda a, b: (tf.equal(a, b), tf.not_equal(a, b)), [ints(rng, 0, 3, 3, 4), ints(rng, 0, 3, 4)]

    @case("LogicalAnd", ops=["LogicalAnd", "LogicalOr", "LogicalNot"])
    def _(rng):
        return lambda a, b: (tf.logical_and(a, b), tf.logical_or(a, b), tf.logical_not(a)), \
            [bools(rng, 2, 5), bools(rng, 5)]

    @case("AddN")
    def _(rng):
        return lambda a, b: tf.add_n([a, b, a]), [f(rng, 2, 3), f(rng, 2, 3)]

    # ---- reductions and scans
    @case("Sum", ops=["Sum", "Mean", "Max", "Min", "Prod"])
    def _(rng):
        return lambda x: (tf.reduce_sum(x, axis=1), tf.reduce_mean(x, axis=[0, 2], keepdims=True),
                          tf.reduce_max(x, axis=-1), tf.reduce_min(x, axis=0, keepdims=True),
                          tf.reduce_prod(x, axis=2)), [f(rng, 2, 3, 4)]

    @case("All", ops=["All", "Any"])
    def _(rng):
        return lambda b: (tf.reduce_all(b, axis=1), tf.reduce_any(b, axis=0, keepdims=True)), [bools(rng, 3, 4)]

    @case("ArgMax", ops=["ArgMax", "ArgMin"])
    def _(rng):
        return lambda x: (tf.argmax(x, axis=1), tf.argmin(x, axis=0, output_type=tf.int32)), [f(rng, 3, 5)]

    @case("Cumsum")
    def _(rng):
        return lambda x: (tf.cumsum(x, axis=1), tf.cumsum(x, axis=1, exclusive=True, reverse=True),
                          tf.cumsum(x, axis=0, exclusive=True)), [f(rng, 3, 4)]

    # ---- matrix products
    @case("MatMul")
    def _(rng):
        return lambda a, b, d: (tf.matmul(a, b, transpose_b=True), tf.matmul(a, a, transpose_a=True),
                                tf.matmul(a, d, transpose_a=True, transpose_b=True)), \
            [f(rng, 3, 4), f(rng, 5, 4), f(rng, 2, 3)]

    @case("BatchMatMul")
    def _(rng):  # v1: equal batch dims, adj_y
        return lambda a, b: raw.BatchMatMul(x=a, y=b, adj_x=False, adj_y=True), [f(rng, 2, 3, 4), f(rng, 2, 5, 4)]

    @case("BatchMatMulV2")
    def _(rng):  # broadcast batch dims [2,1] x [3], adj_x
        return lambda a, b: raw.BatchMatMulV2(x=a, y=b, adj_x=True, adj_y=False), \
            [f(rng, 2, 1, 4, 3), f(rng, 3, 4, 5)]

    @case("BatchMatMulV3")
    def _(rng):  # both adjoints
        return lambda a, b: raw.BatchMatMulV3(x=a, y=b, Tout=tf.float32, adj_x=True, adj_y=True), \
            [f(rng, 2, 4, 3), f(rng, 1, 5, 4)]

    @case("Einsum")
    def _(rng):
        return lambda a, b: (tf.einsum("bij,bkj->bik", a, b), tf.einsum("bij->bj", a)), \
            [f(rng, 2, 3, 4), f(rng, 2, 5, 4)]

    # ---- nn
    @case("BiasAdd", ops=["BiasAdd", "BiasAddV1"])
    def _(rng):
        return lambda x, b: (tf.nn.bias_add(x, b), raw.BiasAddV1(value=x, bias=b)), [f(rng, 1, 3, 3, 4), f(rng, 4)]

    @case("Conv2D")
    def _(rng):  # SAME with stride 2: TF pads the extra row/column at the end
        w = f(rng, 3, 3, 2, 3)
        return lambda x: (tf.nn.conv2d(x, w, 2, "SAME"),
                          tf.nn.conv2d(x, w, 1, "VALID", dilations=2)), [f(rng, 1, 6, 6, 2)]

    @case("Conv2DBackpropInput")
    def _(rng):
        w = f(rng, 3, 3, 4, 2)
        return lambda x: tf.nn.conv2d_transpose(x, w, [1, 6, 6, 4], 2, "SAME"), [f(rng, 1, 3, 3, 2)]

    @case("DepthwiseConv2dNative")
    def _(rng):
        w = f(rng, 3, 3, 2, 2)
        return lambda x: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"), [f(rng, 1, 5, 5, 2)]

    @case("AvgPool")
    def _(rng):  # SAME: the padding is not counted in the average
        return lambda x: (tf.nn.avg_pool2d(x, 3, 2, "SAME"), tf.nn.avg_pool2d(x, 2, 2, "VALID")), [f(rng, 1, 6, 6, 2)]

    @case("MaxPool")
    def _(rng):
        return lambda x: (tf.nn.max_pool2d(x, 3, 2, "SAME"), tf.nn.max_pool2d(x, 2, 1, "VALID")), [f(rng, 1, 5, 5, 2)]

    @case("FusedBatchNorm", ops=["FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"])
    def _(rng):
        s, o, m, v = f(rng, 3), f(rng, 3), f(rng, 3), pos(rng, 3)

        def fn(x):
            a = raw.FusedBatchNorm(x=x, scale=s, offset=o, mean=m, variance=v, epsilon=1e-3, is_training=False)[0]
            b = raw.FusedBatchNormV2(x=x, scale=s, offset=o, mean=m, variance=v, epsilon=1e-2,
                                     is_training=False)[0]
            d = raw.FusedBatchNormV3(x=x, scale=s, offset=o, mean=m, variance=v, epsilon=1e-3,
                                     is_training=False)[0]
            return a, b, d

        return fn, [f(rng, 1, 2, 3, 3)]

    @case("Softmax", ops=["Softmax", "LogSoftmax"])
    def _(rng):
        return lambda x: (tf.nn.softmax(x), tf.nn.log_softmax(x, axis=0)), [f(rng, 3, 5)]

    @case("DepthToSpace", ops=["DepthToSpace", "SpaceToDepth"])
    def _(rng):
        return lambda x: (tf.nn.depth_to_space(x, 2), tf.nn.space_to_depth(x, 2)), [f(rng, 1, 4, 4, 8)]

    @case("SpaceToBatchND", ops=["SpaceToBatchND", "BatchToSpaceND"])
    def _(rng):
        return lambda x: (tf.space_to_batch(x, [2, 2], [[1, 1], [0, 2]]),
                          tf.batch_to_space(tf.space_to_batch(x, [2, 2], [[1, 1], [0, 2]]), [2, 2],
                                            [[0, 1], [1, 0]])), [f(rng, 1, 4, 4, 2)]

    @case("ResizeBilinear")
    def _(rng):
        return lambda x: (raw.ResizeBilinear(images=x, size=[5, 7], half_pixel_centers=True),
                          raw.ResizeBilinear(images=x, size=[7, 3], align_corners=True),
                          raw.ResizeBilinear(images=x, size=[6, 6])), [f(rng, 1, 4, 4, 2)]

    @case("ResizeNearestNeighbor")
    def _(rng):
        return lambda x: (raw.ResizeNearestNeighbor(images=x, size=[5, 7], half_pixel_centers=True),
                          raw.ResizeNearestNeighbor(images=x, size=[7, 3], align_corners=True),
                          raw.ResizeNearestNeighbor(images=x, size=[6, 6])), [f(rng, 1, 4, 4, 2)]

    @case("ResizeBicubic")
    def _(rng):
        return lambda x: (raw.ResizeBicubic(images=x, size=[5, 7], half_pixel_centers=True),
                          raw.ResizeBicubic(images=x, size=[7, 3], align_corners=True)), [f(rng, 1, 4, 4, 2)]

    # ---- shapes, slicing, indexing
    @case("StridedSlice")
    def _(rng):
        return lambda x: (x[:, 1:, ::2],       # begin/end masks, stride
                          x[..., -1],          # ellipsis + shrink_axis
                          x[:, None, ::-1, 1:5],  # new_axis + negative stride
                          x[1, -3:, :-1],      # shrink + negative bounds
                          x[::-1, 3:0:-2, 5:1:-1],  # negative strides with bounds
                          x[tf.newaxis, ..., 2]), [f(rng, 2, 4, 6)]

    @case("Slice")
    def _(rng):
        return lambda x: (tf.slice(x, [1, 0, 2], [1, -1, 3]),), [f(rng, 2, 3, 5)]

    @case("Reshape", ops=["Reshape", "ExpandDims", "Squeeze"])
    def _(rng):
        return lambda x: (tf.reshape(x, [3, -1]), tf.expand_dims(x, -1), tf.squeeze(x, axis=[0])), [f(rng, 1, 3, 4)]

    @case("Shape", ops=["Shape", "Size", "Rank"])
    def _(rng):
        return lambda x: (raw.Shape(input=x), raw.Size(input=x, out_type=tf.int64), raw.Rank(input=x)), \
            [f(rng, 2, 3, 4)]

    @case("Transpose")
    def _(rng):
        return lambda x: tf.transpose(x, [2, 0, 1]), [f(rng, 2, 3, 4)]

    @case("BroadcastTo")
    def _(rng):
        return lambda x: tf.broadcast_to(x, [2, 3, 4]), [f(rng, 3, 1)]

    @case("Tile")
    def _(rng):
        return lambda x: tf.tile(x, [2, 1, 3]), [f(rng, 2, 3, 2)]

    @case("ConcatV2", ops=["ConcatV2", "Concat"])
    def _(rng):
        return lambda a, b: (tf.concat([a, b], axis=-1), raw.Concat(concat_dim=c(0), values=[a, a])), \
            [f(rng, 2, 3), f(rng, 2, 2)]

    @case("Pack", ops=["Pack", "Unpack"])
    def _(rng):
        return lambda a, b: (tf.stack([a, b], axis=1), *tf.unstack(a, axis=1)), [f(rng, 2, 3), f(rng, 2, 3)]

    @case("Split", ops=["Split", "SplitV"])
    def _(rng):
        return lambda x: (*tf.split(x, 3, axis=1), *tf.split(x, [1, -1, 2], axis=-1)), [f(rng, 2, 6)]

    @case("Gather", ops=["Gather", "GatherV2"])
    def _(rng):
        return lambda x, i: (raw.Gather(params=x, indices=i), tf.gather(x, i, axis=1),
                             tf.gather(x, i, axis=1, batch_dims=1)), [f(rng, 2, 4, 3), ints(rng, 0, 2, 2, 3)]

    @case("ResourceGather", saved=True)
    def _(rng):
        class M(tf.Module):
            def __init__(self):
                super().__init__()
                self.v = tf.Variable(f(rng, 5, 3))

            def __call__(self, i):
                return tf.gather(self.v, i)

        return M(), [ints(rng, 0, 5, 2, 2)]

    @case("OneHot")
    def _(rng):
        return lambda i: (tf.one_hot(i, 5, on_value=2.0, off_value=-1.0), tf.one_hot(i, 4, axis=0)), \
            [ints(rng, -1, 5, 2, 3)]

    @case("TopKV2")
    def _(rng):
        return lambda x: tuple(tf.math.top_k(x, k=3)), [f(rng, 2, 6)]

    @case("ReverseV2")
    def _(rng):
        return lambda x: tf.reverse(x, [0, 2]), [f(rng, 2, 3, 4)]

    @case("Select", ops=["Select", "SelectV2"])
    def _(rng):  # v1 Select with a vector condition picks rows; V2 broadcasts
        return lambda b, x, y: (raw.Select(condition=b, x=x, y=y), tf.where(b[:, None], x, y[:1])), \
            [bools(rng, 2), f(rng, 2, 3), f(rng, 2, 3)]

    @case("Fill", ops=["Fill", "ZerosLike", "OnesLike"])
    def _(rng):
        return lambda v, x: (tf.fill([2, 3], v), raw.ZerosLike(x=x), raw.OnesLike(x=x) + x), \
            [np.float32(1.5).reshape(()), f(rng, 2, 2)]

    @case("Range")
    def _(rng):
        return lambda x: (tf.range(2, 11, 3), tf.cast(tf.range(5.0, 0.0, -1.5), tf.float32) * x), [f(rng, 4)]

    @case("Pad", ops=["Pad", "PadV2"])
    def _(rng):
        return lambda x: (tf.pad(x, [[1, 0], [0, 2]]), tf.pad(x, [[0, 1], [2, 1]], constant_values=1.5)), \
            [f(rng, 2, 3)]

    @case("MirrorPad")
    def _(rng):
        return lambda x: (tf.pad(x, [[1, 1], [2, 2]], mode="REFLECT"),
                          tf.pad(x, [[1, 0], [0, 3]], mode="SYMMETRIC")), [f(rng, 3, 4)]

    @case("MatrixBandPart")
    def _(rng):
        return lambda x: (tf.linalg.band_part(x, 1, 2), tf.linalg.band_part(x, -1, 0)), [f(rng, 4, 5)]

    @case("Where")
    def _(rng):  # a constant condition: the coordinates are known statically
        cond = np.array([[True, False, True], [False, False, True]])
        return lambda x: (tf.where(c(cond)), x), [f(rng, 2)]

    @case("PlaceholderWithDefault")
    def _(rng):
        return lambda x: raw.PlaceholderWithDefault(input=c(f(rng, 2, 3)), shape=[2, 3]) + x, [f(rng, 2, 3)]

    @case("Const")
    def _(rng):
        k = f(rng, 2, 3)
        return lambda x: (c(k) * x, c(np.array([1, -2], np.int64))), [f(rng, 2, 3)]

    @case("TensorList", ops=["TensorListReserve", "TensorListSetItem", "TensorListGetItem",
                             "TensorListStack", "TensorListFromTensor", "TensorListLength"])
    def _(rng):
        def fn(x):
            ta = tf.TensorArray(tf.float32, size=3, element_shape=[4])
            ta = ta.write(0, x[1]).write(1, x[0] * 2.0).write(2, x[2])
            xs = tf.TensorArray(tf.float32, size=3, element_shape=[4]).unstack(x)
            return ta.stack(), xs.read(1), raw.TensorListLength(input_handle=xs.flow)

        return fn, [f(rng, 3, 4)]


if __name__ == "__main__":
    main()
