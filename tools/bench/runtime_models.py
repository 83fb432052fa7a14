#!/usr/bin/env python3
"""Build the runtime benchmark models as ONNX files with seeded random weights:
ResNet-50 (v1.5), MobileNetV2 (1.0, 224) and BERT-base (seq 128), batch 1.

Written with the pinned `onnx` package's helper API (no framework needed);
tools/bench/runtime.sh imports them into ge with `ge-translate --import-onnx`
and runs the very same files on onnxruntime.

    python tools/bench/runtime_models.py OUT_DIR [--small]
"""
import sys, os
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper


class G:
    def __init__(self, seed):
        self.nodes, self.inits, self.n = [], [], 0
        self.rng = np.random.default_rng(seed)

    def name(self, p):
        self.n += 1
        return f"{p}_{self.n}"

    def w(self, shape, std, p="w"):
        n = self.name(p)
        self.inits.append(numpy_helper.from_array(
            (self.rng.standard_normal(shape) * std).astype(np.float32), n))
        return n

    def const(self, arr, p="c"):
        n = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def op(self, t, ins, **attrs):
        out = self.name(t.lower())
        self.nodes.append(helper.make_node(t, ins, [out], **attrs))
        return out

    def conv(self, x, cin, cout, k, s=1, group=1):
        w = self.w([cout, cin // group, k, k], np.sqrt(2.0 / (cin // group * k * k)))
        return self.op("Conv", [x, w], kernel_shape=[k, k], strides=[s, s],
                       pads=[k // 2] * 4, group=group)

    def bn(self, x, c):
        scale = self.const((1.0 + 0.1 * self.rng.standard_normal(c)).astype(np.float32))
        bias = self.const((0.1 * self.rng.standard_normal(c)).astype(np.float32))
        mean = self.const((0.1 * self.rng.standard_normal(c)).astype(np.float32))
        var = self.const((1.0 + 0.1 * self.rng.random(c)).astype(np.float32))
        return self.op("BatchNormalization", [x, scale, bias, mean, var], epsilon=1e-5)

    def model(self, name, inputs, outputs, opset=17):
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        return m


def resnet50(small):
    g = G(50)
    width = 16 if small else 64
    x = "input"
    y = g.op("Relu", [g.bn(g.conv(x, 3, width, 7, 2), width)])
    y = g.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = width
    for i, (n, w) in enumerate(zip([3, 4, 6, 3], [width, width * 2, width * 4, width * 8])):
        for b in range(n):
            s = 2 if (b == 0 and i > 0) else 1
            h = g.op("Relu", [g.bn(g.conv(y, cin, w, 1), w)])
            h = g.op("Relu", [g.bn(g.conv(h, w, w, 3, s), w)])
            h = g.bn(g.conv(h, w, w * 4, 1), w * 4)
            sc = y if (b > 0) else g.bn(g.conv(y, cin, w * 4, 1, s), w * 4)
            y = g.op("Relu", [g.op("Add", [h, sc])])
            cin = w * 4
    y = g.op("Flatten", [g.op("GlobalAveragePool", [y])])
    y = g.op("Gemm", [y, g.w([1000, cin], 0.01), g.const(np.zeros(1000, np.float32))], transB=1)
    g.nodes[-1].output[0] = "logits"
    return g.model("resnet50",
                   [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])])


def mobilenet_v2(small):
    g = G(2)
    mult = 0.25 if small else 1.0
    ch = lambda c: max(8, int(c * mult + 4) // 8 * 8)
    relu6 = lambda t: g.op("Clip", [t, g.const(np.float32(0.0)), g.const(np.float32(6.0))])
    c0 = ch(32)
    y = relu6(g.bn(g.conv("input", 3, c0, 3, 2), c0))
    cin = c0
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hid = cin * t
            h = y
            if t != 1:
                h = relu6(g.bn(g.conv(h, cin, hid, 1), hid))
            h = relu6(g.bn(g.conv(h, hid, hid, 3, stride, group=hid), hid))
            h = g.bn(g.conv(h, hid, ch(c), 1), ch(c))
            if stride == 1 and cin == ch(c):
                h = g.op("Add", [h, y])
            y, cin = h, ch(c)
    last = 1280
    y = relu6(g.bn(g.conv(y, cin, last, 1), last))
    y = g.op("Flatten", [g.op("GlobalAveragePool", [y])])
    y = g.op("Gemm", [y, g.w([1000, last], 0.01), g.const(np.zeros(1000, np.float32))], transB=1)
    g.nodes[-1].output[0] = "logits"
    return g.model("mobilenet_v2",
                   [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])])


def bert_base(small):
    g = G(7)
    S, D, H, L, F, V = (128, 768, 12, 12, 3072, 30522) if not small else (16, 64, 4, 2, 128, 500)
    dh = D // H
    ids = "input_ids"
    x = g.op("Gather", [g.w([V, D], 0.02, "word"), ids])
    x = g.op("Add", [x, g.w([1, S, D], 0.02, "pos")])
    x = g.op("Add", [x, g.w([D], 0.02, "type")])

    def ln(t):
        return g.op("LayerNormalization", [t, g.const(np.ones(D, np.float32)),
                                           g.const(np.zeros(D, np.float32))], axis=-1, epsilon=1e-12)

    def dense(t, din, dout):
        return g.op("Add", [g.op("MatMul", [t, g.w([din, dout], 0.02)]),
                            g.const(np.zeros(dout, np.float32))])

    x = ln(x)
    heads = g.const(np.array([1, S, H, dh], np.int64))
    flat = g.const(np.array([1, S, D], np.int64))
    for _ in range(L):
        q = g.op("Transpose", [g.op("Reshape", [dense(x, D, D), heads])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [dense(x, D, D), heads])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [dense(x, D, D), heads])], perm=[0, 2, 1, 3])
        a = g.op("Div", [g.op("MatMul", [q, k]), g.const(np.float32(np.sqrt(dh)))])
        a = g.op("Softmax", [a], axis=-1)
        c = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [a, v])], perm=[0, 2, 1, 3]), flat])
        x = ln(g.op("Add", [dense(c, D, D), x]))
        h = dense(x, D, F)
        h = g.op("Mul", [g.op("Mul", [h, g.const(np.float32(0.5))]),
                         g.op("Add", [g.op("Erf", [g.op("Div", [h, g.const(np.float32(np.sqrt(2.0)))])]),
                                      g.const(np.float32(1.0))])])
        x = ln(g.op("Add", [dense(h, F, D), x]))
    g.nodes[-1].output[0] = "hidden"
    return g.model("bert_base",
                   [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, S])],
                   [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, S, D])])


def main():
    out = sys.argv[1]
    small = "--small" in sys.argv
    os.makedirs(out, exist_ok=True)
    for name, f in [("resnet50", resnet50), ("mobilenet_v2", mobilenet_v2), ("bert_base", bert_base)]:
        m = f(small)
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(out, name + ".onnx"))
        print(f"{name}: {len(m.graph.node)} nodes")


if __name__ == "__main__":
    main()
