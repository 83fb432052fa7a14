#!/usr/bin/env python3
"""Judge ge and TensorFlow against a float64 rebuild of a Keras model.

tools/models/tf/run.py compares ge with TensorFlow's own float32 outputs. On a
random-weight network whose activations grow through its depth, float32
rounding is amplified layer after layer, and "equal to TensorFlow" stops being
a test of correctness: TensorFlow's float32 result is itself far from the exact
one. This script decides such a case against the exact answer instead:

  1. rebuild the model of gen_tf_models.py (same seed, so the same weights;
     checked: the rebuilt model reproduces the recorded out0.npy bit for bit),
  2. build the same architecture with the float64 dtype policy and copy the
     weights into it — the float64 reference,
  3. fetch a list of layers along the depth from TensorFlow float32, from the
     float64 reference, and from ge (`ge-atc --out_nodes` with the frozen
     graph's node of each layer, `ge-run --output`),
  4. print, per layer, the error of TensorFlow float32 and of ge relative to
     the float64 reference (max |a - ref| / max |ref|).

ge is as accurate as TensorFlow float32 when its error is of the same size at
every layer; the exit status is 1 when ge's error at some layer is more than
--factor times TensorFlow's (and above --floor, where both are at rounding
level). The last layer is the classifier's logits (before the softmax).

    /work/venvs/tf/bin/python tools/models/tf/float64_reference.py \\
        --dir target/tf-models --only efficientnet_v2_m \\
        --layers block3a_add,block5h_add,block6c_add,block6g_add,block6o_add,avg_pool

TensorFlow runs in its own venv (see gen_tf_models.py); the ge binaries come
from target/release (or --bin-dir).
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)


def frozen_node(names, layer):
    """The frozen graph's node that holds `layer`'s output: the last node (in
    graph order) of the layer's name scope that is not a variable read."""
    scope = f"/{layer}_1/"
    hits = [n for n in names if scope in n and not n.endswith(("ReadVariableOp", "reduction_indices"))]
    if not hits:
        sys.exit(f"no node of layer {layer} in the frozen graph")
    return hits[-1]


def rel_err(a, ref):
    return float(np.abs(a.astype(np.float64) - ref).max() / max(np.abs(ref).max(), 1e-300))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=os.path.join(ROOT, "target", "tf-models"))
    ap.add_argument("--only", required=True, help="the model's name (gen_tf_models.py --list)")
    ap.add_argument("--layers", default="", help="comma-separated Keras layer names to compare")
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "target", "release"))
    ap.add_argument("--factor", type=float, default=4.0)
    ap.add_argument("--floor", type=float, default=1e-5)
    a = ap.parse_args()

    # gen_tf_models sets TensorFlow's environment (oneDNN off, as when the
    # outputs were recorded) before TensorFlow is imported: import it first.
    import gen_tf_models as g
    import keras
    import tensorflow as tf

    name = a.only
    d = os.path.join(a.dir, name)
    keras.utils.set_random_seed(21)
    m32, _ = g.MODELS[name]["build"]()
    x = np.load(os.path.join(d, "in0.npy"))
    recorded = np.load(os.path.join(d, "out0.npy"))
    again = m32(x, training=False).numpy()
    if np.abs(again - recorded).max() > 1e-6 * max(np.abs(recorded).max(), 1e-30):
        sys.exit(f"the rebuilt model does not reproduce out0.npy (max |diff| "
                 f"{np.abs(again - recorded).max():.3g}): not the same weights")

    keras.config.set_dtype_policy("float64")
    m64, _ = g.MODELS[name]["build"]()
    m64.set_weights([w.astype(np.float64) for w in m32.get_weights()])

    layers = [l for l in a.layers.split(",") if l]
    head = m32.layers[-1]
    # Every fetched tensor: the listed layers' outputs, then the classifier's
    # input features, from which the logits are computed in float64.
    def fetch(m, xin):
        outs = [m.get_layer(l).output for l in layers] + [m.layers[-1].input]
        return [t.numpy() for t in keras.Model(m.inputs, outs)(xin, training=False)]

    t32 = fetch(m32, x)
    r64 = fetch(m64, x.astype(np.float64))
    w, b = (v.astype(np.float64) for v in m64.layers[-1].get_weights())
    t32[-1] = t32[-1].astype(np.float64) @ w + b
    r64[-1] = r64[-1] @ w + b

    gd = tf.compat.v1.GraphDef()
    with open(os.path.join(d, "frozen.pb"), "rb") as f:
        gd.ParseFromString(f.read())
    names = [n.name for n in gd.node]
    nodes = [frozen_node(names, l) for l in layers]
    logits = [n for n in names if f"/{head.name}_1/" in n and n.endswith("BiasAdd")]
    if not logits:
        sys.exit(f"no BiasAdd of {head.name} in the frozen graph")
    nodes.append(logits[-1])

    with tempfile.TemporaryDirectory() as tmp:
        om = os.path.join(tmp, name)
        subprocess.run(
            [os.path.join(a.bin_dir, "ge-atc"), "--framework=3", f"--model={d}/frozen.pb",
             f"--output={om}", "--out_nodes=" + ";".join(n + ":0" for n in nodes),
             "--op_compiler_cache_mode=disable"], check=True, capture_output=True)
        outs = [os.path.join(tmp, f"o{i}.npy") for i in range(len(nodes))]
        cmd = [os.path.join(a.bin_dir, "ge-run"), om + ".om", "--input", os.path.join(d, "in0.npy")]
        for o in outs:
            cmd += ["--output", o]
        subprocess.run(cmd, check=True, capture_output=True)
        ge = [np.load(o) for o in outs]

    print(f"{name}: error relative to the float64 reference (max |a - ref| / max |ref|)")
    print(f"{'layer':24} {'max |ref|':>12} {'TF float32':>12} {'ge':>12} {'ge / TF':>8}")
    bad = []
    for label, t, r, e in zip(layers + [f"{head.name} (logits)"], t32, r64, ge):
        et, eg = rel_err(t, r), rel_err(e, r)
        ratio = eg / et if et > 0 else float("inf") if eg > 0 else 1.0
        print(f"{label:24} {np.abs(r).max():12.4g} {et:12.3g} {eg:12.3g} {ratio:8.2f}")
        if eg > a.floor and eg > a.factor * et:
            bad.append(label)
    top = lambda v: int(np.argmax(v))
    print(f"argmax of the logits: float64 {top(r64[-1])}, TF float32 {top(t32[-1])}, ge {top(ge[-1])}")
    if bad:
        print(f"ge's error exceeds {a.factor}x TensorFlow float32's at: {', '.join(bad)}")
        sys.exit(1)
    print(f"ge is within {a.factor}x of TensorFlow float32's error at every layer")


if __name__ == "__main__":
    main()
