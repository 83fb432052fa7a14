#!/usr/bin/env python3
"""A ResNet basic block built with ge.es, compiled with ge.compile and run
with ge.Model, compared with the same block computed in numpy.

    conv3x3 -> batch_norm -> relu -> conv3x3 -> batch_norm -> (+ x) -> relu

Run: python examples/python/resnet_block.py   (exit code 0 when they agree)
"""

import numpy as np

import ge
from ge import es

C, H, W = 8, 12, 12
rng = np.random.default_rng(0)


def conv_bn_params(name):
    return {
        "w": (rng.standard_normal((C, C, 3, 3)) * 0.2).astype(np.float32),
        "scale": rng.uniform(0.5, 1.5, C).astype(np.float32),
        "bias": rng.standard_normal(C).astype(np.float32) * 0.1,
        "mean": rng.standard_normal(C).astype(np.float32) * 0.1,
        "var": rng.uniform(0.5, 1.5, C).astype(np.float32),
        "name": name,
    }


P1, P2 = conv_bn_params("conv1"), conv_bn_params("conv2")


def build():
    g = es.Graph("resnet_block")
    g.symbol_bound("B", 4)  # any batch up to 4
    x = g.input("x", shape=("B", C, H, W))

    def conv_bn(t, p):
        w = g.weight(p["name"] + ".w", p["w"])
        y = g.conv2d(t, w, pads=[1, 1, 1, 1])
        stats = [g.weight(f"{p['name']}.{k}", p[k]) for k in ("scale", "bias", "mean", "var")]
        return g.batch_norm(y, *stats, epsilon=1e-5)

    y = g.relu(conv_bn(x, P1))
    y = g.relu(conv_bn(y, P2) + x)
    return g.build(y)


def reference(x):
    def conv3x3(t, w):
        n = t.shape[0]
        tp = np.pad(t, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((n, C, H, W), np.float64)
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,oc->nohw", tp[:, :, i:i + H, j:j + W], w[:, :, i, j])
        return out

    def bn(t, p):
        c = (slice(None), None, None)
        return (t - p["mean"][c]) / np.sqrt(p["var"][c] + 1e-5) * p["scale"][c] + p["bias"][c]

    y = np.maximum(bn(conv3x3(x, P1["w"]), P1), 0)
    return np.maximum(bn(conv3x3(y, P2["w"]), P2) + x, 0)


def main():
    module = build()
    om = ge.compile(module, soc="Ascend910B")
    model = ge.Model(om)
    session = model.session()
    for batch in (1, 3):  # the symbolic batch is bound at run time
        x = rng.standard_normal((batch, C, H, W)).astype(np.float32)
        (y,) = session.run({"x": x}).values()
        want = reference(x.astype(np.float64))
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
        print(f"batch {batch}: output {y.shape}, max |ge - numpy| = {np.abs(y - want).max():.2e}")
    print("resnet block: ge matches numpy")


if __name__ == "__main__":
    main()
