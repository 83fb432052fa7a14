#!/usr/bin/env python3
"""Generate small ONNX models with dynamic axes, as PyTorch exports them with
`dynamic_axes`, into testdata/onnx/dynamic/ — with inputs and reference outputs
at three sizes each (<model>.<size>.in<i>.npy / .out<i>.npy).

    .venv/bin/pip install -r tools/frontends/requirements.txt   # onnx
    .venv/bin/python tools/models/gen_dynamic_models.py
    .venv/bin/python tools/models/gen_dynamic_models.py prefix_broadcast   # one model

References come from onnxruntime when it is installed, else from
`onnx.reference.ReferenceEvaluator` (numpy). Everything is seeded, so reruns
give the same bytes. lit-tests/dynamic/*.test run these models.

- bert_dyn: a one-layer BERT-style encoder over input_ids [batch, seq]: word
  and position embeddings (positions by Shape -> Gather -> Range, token
  types by Shape -> Slice -> ConstantOfShape), layer norm, multi-head
  self-attention whose head split/merge reshapes take their targets from
  Shape -> Gather -> Unsqueeze -> Concat (as torch.onnx exports `x.view(b, s,
  h, d)`), a GELU MLP; output [batch, seq, hidden].
- cnn_dyn: a CNN over x [batch, 3, height, width]: conv, relu, pool, conv,
  global average pool, Flatten and a Reshape to (Shape[0], -1), then Gemm.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "testdata", "onnx", "dynamic")
rng = np.random.default_rng(15)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def reference(model):
    try:
        import onnxruntime as ort  # noqa: PLC0415

        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return lambda feeds: sess.run(None, feeds)
    except ImportError:
        from onnx.reference import ReferenceEvaluator  # noqa: PLC0415

        ev = ReferenceEvaluator(model)
        return lambda feeds: ev.run(None, feeds)


def save(name, model, cases):
    onnx.checker.check_model(model, full_check=True)
    os.makedirs(OUT, exist_ok=True)
    onnx.save(model, os.path.join(OUT, name + ".onnx"))
    run = reference(model)
    for size, feeds in cases:
        outs = run(dict(feeds))
        for i, (_, v) in enumerate(feeds):
            np.save(os.path.join(OUT, f"{name}.{size}.in{i}.npy"), v)
        for i, v in enumerate(outs):
            np.save(os.path.join(OUT, f"{name}.{size}.out{i}.npy"), v)
    print("wrote", os.path.relpath(os.path.join(OUT, name + ".onnx"), ROOT))


def model(nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    return helper.make_model(
        g,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="ge tools/models/gen_dynamic_models.py",
        ir_version=10,
    )


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0], **attrs)


def layer_norm(x, out, gamma, beta):
    return [node("LayerNormalization", [x, gamma, beta], [out], axis=-1, epsilon=1e-5)]


def bert_dyn_model(vocab=50, maxpos=64, hidden=32, heads=4):
    """The encoder layer of bert_dyn.onnx at any size (tools/bench/dynamic.py
    builds a wider one with 128 positions)."""
    hd = hidden // heads
    inits = [
        const("word_emb", f32(vocab, hidden, scale=0.5)),
        const("pos_emb", f32(maxpos, hidden, scale=0.5)),
        const("type_emb", f32(2, hidden, scale=0.5)),
        const("ln0_g", 1 + f32(hidden, scale=0.1)),
        const("ln0_b", f32(hidden, scale=0.1)),
        const("ln1_g", 1 + f32(hidden, scale=0.1)),
        const("ln1_b", f32(hidden, scale=0.1)),
        const("wq", f32(hidden, hidden, scale=0.2)),
        const("wk", f32(hidden, hidden, scale=0.2)),
        const("wv", f32(hidden, hidden, scale=0.2)),
        const("wo", f32(hidden, hidden, scale=0.2)),
        const("w1", f32(hidden, 2 * hidden, scale=0.2)),
        const("w2", f32(2 * hidden, hidden, scale=0.2)),
        const("i0", np.array(0, np.int64)),
        const("i1", np.array(1, np.int64)),
        const("ax0", np.array([0], np.int64)),
        const("ax1", np.array([1], np.int64)),
        const("heads", np.array([heads], np.int64)),
        const("hd", np.array([hd], np.int64)),
        const("hid", np.array([hidden], np.int64)),
        const("scale", np.array(1.0 / np.sqrt(hd), np.float32)),
        const("half", np.array(0.5, np.float32)),
        const("one", np.array(1.0, np.float32)),
        const("rsqrt2", np.array(1.0 / np.sqrt(2.0), np.float32)),
    ]
    n = [
        # Shapes, as torch.onnx exports input_ids.size(0), .size(1).
        node("Shape", ["input_ids"], ["shp"]),
        node("Gather", ["shp", "i0"], ["batch"], axis=0),
        node("Gather", ["shp", "i1"], ["seq"], axis=0),
        node("Unsqueeze", ["batch", "ax0"], ["batch1"]),
        node("Unsqueeze", ["seq", "ax0"], ["seq1"]),
        # Embeddings: word + position (Range over seq) + token type 0.
        node("Gather", ["word_emb", "input_ids"], ["we"], axis=0),
        node("Range", ["i0", "seq", "i1"], ["pos"]),
        node("Gather", ["pos_emb", "pos"], ["pe"], axis=0),
        node("Slice", ["shp", "ax0", "const_2"], ["bs"]),
        node("ConstantOfShape", ["bs"], ["tt"], value=helper.make_tensor("v", TensorProto.INT64, [1], [0])),
        node("Gather", ["type_emb", "tt"], ["te"], axis=0),
        node("Add", ["we", "pe"], ["e0"]),
        node("Add", ["e0", "te"], ["e1"]),
        *layer_norm("e1", "h0", "ln0_g", "ln0_b"),
        # Self-attention: split heads with a computed target (b, s, heads, hd).
        node("Concat", ["batch1", "seq1", "heads", "hd"], ["split_shape"], axis=0),
        node("MatMul", ["h0", "wq"], ["q0"]),
        node("MatMul", ["h0", "wk"], ["k0"]),
        node("MatMul", ["h0", "wv"], ["v0"]),
        node("Reshape", ["q0", "split_shape"], ["q1"]),
        node("Reshape", ["k0", "split_shape"], ["k1"]),
        node("Reshape", ["v0", "split_shape"], ["v1"]),
        node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]),
        node("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1]),
        node("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
        node("MatMul", ["q", "kt"], ["s0"]),
        node("Mul", ["s0", "scale"], ["s1"]),
        node("Softmax", ["s1"], ["p"], axis=-1),
        node("MatMul", ["p", "v"], ["c0"]),
        node("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]),
        # Merge heads: Shape(c1)[:2] ++ [hidden].
        node("Shape", ["c1"], ["cshp"]),
        node("Slice", ["cshp", "ax0", "const_2"], ["cbs"]),
        node("Concat", ["cbs", "hid"], ["merge_shape"], axis=0),
        node("Reshape", ["c1", "merge_shape"], ["c2"]),
        node("MatMul", ["c2", "wo"], ["o"]),
        node("Add", ["o", "h0"], ["r0"]),
        *layer_norm("r0", "h1", "ln1_g", "ln1_b"),
        # MLP with exact GELU.
        node("MatMul", ["h1", "w1"], ["m0"]),
        node("Mul", ["m0", "rsqrt2"], ["g0"]),
        node("Erf", ["g0"], ["g1"]),
        node("Add", ["g1", "one"], ["g2"]),
        node("Mul", ["m0", "g2"], ["g3"]),
        node("Mul", ["g3", "half"], ["m1"]),
        node("MatMul", ["m1", "w2"], ["m2"]),
        node("Add", ["m2", "h1"], ["y"]),
    ]
    inits.append(const("const_2", np.array([2], np.int64)))
    m = model(
        n,
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", hidden])],
        inits,
    )
    return m


def bert_dyn():
    vocab = 50
    m = bert_dyn_model(vocab)
    cases = []
    for b, s in [(1, 5), (2, 16), (3, 33)]:
        ids = rng.integers(0, vocab, size=(b, s), dtype=np.int64)
        cases.append((f"b{b}s{s}", [("input_ids", ids)]))
    save("bert_dyn", m, cases)


def cnn_dyn():
    inits = [
        const("w1", f32(8, 3, 3, 3, scale=0.4)),
        const("b1", f32(8, scale=0.1)),
        const("w2", f32(16, 8, 3, 3, scale=0.3)),
        const("b2", f32(16, scale=0.1)),
        const("fc_w", f32(10, 16, scale=0.3)),
        const("fc_b", f32(10, scale=0.1)),
        const("i0", np.array([0], np.int64)),
        const("m1", np.array([-1], np.int64)),
    ]
    n = [
        node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r1"]),
        node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        node("Relu", ["c2"], ["r2"]),
        node("GlobalAveragePool", ["r2"], ["g"]),
        # torch's x.view(x.size(0), -1)
        node("Shape", ["g"], ["gs"]),
        node("Gather", ["gs", "i0"], ["gb"], axis=0),
        node("Concat", ["gb", "m1"], ["flat_shape"], axis=0),
        node("Reshape", ["g", "flat_shape"], ["f"]),
        node("Gemm", ["f", "fc_w", "fc_b"], ["y"], transB=1),
    ]
    m = model(
        n,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
        inits,
    )
    cases = []
    for b, h, w in [(1, 8, 8), (2, 12, 10), (4, 17, 9)]:
        cases.append((f"b{b}h{h}w{w}", [("x", f32(b, 3, h, w))]))
    save("cnn_dyn", m, cases)


def larger_sizes():
    """Sizes above the value ge plans unbounded dims at while compiling
    (64): a model compiled with no shape flags plans its memory again at
    run time for these. A separate generator keeps the files above
    byte-identical."""
    big = np.random.default_rng(1515)
    bert = onnx.load(os.path.join(OUT, "bert_dyn.onnx"))
    # The sequence stays within the 64 position embeddings; the batch does not.
    ids = big.integers(0, 50, size=(70, 9), dtype=np.int64)
    save("bert_dyn", bert, [("b70s9", [("input_ids", ids)])])
    cnn = onnx.load(os.path.join(OUT, "cnn_dyn.onnx"))
    save(
        "cnn_dyn",
        cnn,
        [
            ("b66h8w8", [("x", big.standard_normal((66, 3, 8, 8)).astype(np.float32))]),
            ("b1h80w72", [("x", big.standard_normal((1, 3, 80, 72)).astype(np.float32))]),
        ],
    )


def unknown_dim():
    """A Relu over x [?, 4] whose first dim has neither a value nor a
    dim_param: ge-atc asks for --input_shape (lit-tests/dynamic/unbounded.test)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])
    m = model([node("Relu", ["x"], ["y"])], [x], [y], [])
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(OUT, "unknown_dim.onnx"))
    print("wrote", os.path.relpath(os.path.join(OUT, "unknown_dim.onnx"), ROOT))


def range_symbolic_delta():
    """Range(0, n, m) with both n and m dims of the input: a symbolic delta,
    which ge refuses with one line (lit-tests/dynamic/range-symbolic.test)."""
    nodes = [
        node("Shape", ["x"], ["s"]),
        node("Gather", ["s", "i0"], ["n"], axis=0),
        node("Gather", ["s", "i1"], ["m"], axis=0),
        node("Range", ["zero", "n", "m"], ["y"]),
    ]
    inits = [const("i0", np.array(0, np.int64)), const("i1", np.array(1, np.int64)), const("zero", np.array(0, np.int64))]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "m"])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, [None])
    m = model(nodes, [x], [y], inits)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(OUT, "range_symbolic_delta.onnx"))
    print("wrote", os.path.relpath(os.path.join(OUT, "range_symbolic_delta.onnx"), ROOT))


# --- the three patterns of transformers exported by torch with dynamic
# (batch, sequence) axes (issue 15; tools/models/gen_torch_gauntlet.py
# --dynamic has the real exports) ----------------------------------------


def reseed(seed):
    """Seeds the generator per model, so `gen_dynamic_models.py NAME` writes
    the same bytes as a full run."""
    global rng
    rng = np.random.default_rng(seed)


def prefix_broadcast():
    """BERT/dynamo's positions: a prefix of a 64-entry buffer sliced to the
    sequence, [1, min(sequence, 64)], added to and expanded by [batch,
    sequence]. Case s70 has no reference: the model is invalid there."""
    reseed(151)
    inits = [
        const("buf", f32(1, 64)),
        const("i1", np.array(1, np.int64)),
        const("ax0", np.array([0], np.int64)),
        const("ax1", np.array([1], np.int64)),
    ]
    n = [
        node("Shape", ["x"], ["shp"]),
        node("Gather", ["shp", "i1"], ["seq"], axis=0),
        node("Unsqueeze", ["seq", "ax0"], ["seq1"]),
        node("Slice", ["buf", "ax0", "seq1", "ax1"], ["prefix"]),
        node("Add", ["x", "prefix"], ["y"]),
        node("Expand", ["prefix", "shp"], ["z"]),
    ]
    m = model(
        n,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence"]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", "sequence"])],
        inits,
    )
    save("prefix_broadcast", m, [(f"b{b}s{s}", [("x", f32(b, s))]) for b, s in [(1, 5), (2, 16), (3, 64)]])
    np.save(os.path.join(OUT, "prefix_broadcast.b1s70.in0.npy"), f32(1, 70))


def gathernd_mask():
    """Llama/dynamo's padding mask: GatherND of a [batch, sequence] mask by
    [batch, sequence, 2] index pairs built from Range (here the sequence
    reversed), and GatherND of rows of a [batch, sequence, 4] tensor by
    indices read from an input (one past the end is a run error)."""
    reseed(152)
    inits = [
        const("i0", np.array(0, np.int64)),
        const("i1", np.array(1, np.int64)),
        const("ax0", np.array([0], np.int64)),
        const("ax1", np.array([1], np.int64)),
        const("axm1", np.array([-1], np.int64)),
    ]
    n = [
        node("Cast", ["mask"], ["maskb"], to=TensorProto.BOOL),
        node("Shape", ["mask"], ["shp"]),
        node("Gather", ["shp", "i0"], ["b"], axis=0),
        node("Gather", ["shp", "i1"], ["s"], axis=0),
        node("Range", ["i0", "b", "i1"], ["ab"]),
        node("Range", ["i0", "s", "i1"], ["as"]),
        node("Sub", ["s", "i1"], ["last"]),
        node("Sub", ["last", "as"], ["rs"]),
        node("Unsqueeze", ["ab", "ax1"], ["ab2"]),
        node("Unsqueeze", ["rs", "ax0"], ["rs2"]),
        node("Expand", ["ab2", "shp"], ["bi"]),
        node("Expand", ["rs2", "shp"], ["si"]),
        node("Unsqueeze", ["bi", "axm1"], ["bi3"]),
        node("Unsqueeze", ["si", "axm1"], ["si3"]),
        node("Concat", ["bi3", "si3"], ["idx"], axis=-1),
        node("GatherND", ["maskb", "idx"], ["picked"]),
        node("Cast", ["picked"], ["y"], to=TensorProto.FLOAT),
        node("GatherND", ["x", "rows"], ["z"]),
    ]
    m = model(
        n,
        [helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "sequence"]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", 4]),
         helper.make_tensor_value_info("rows", TensorProto.INT64, [3, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence"]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [3, "sequence", 4])],
        inits,
    )
    cases = []
    for b, s in [(1, 5), (2, 8), (3, 13)]:
        mask = (rng.random((b, s)) > 0.3).astype(np.int64)
        rows = rng.integers(-b, b, size=(3, 1), dtype=np.int64)
        cases.append((f"b{b}s{s}", [("mask", mask), ("x", f32(b, s, 4)), ("rows", rows)]))
    save("gathernd_mask", m, cases)
    np.save(os.path.join(OUT, "gathernd_mask.bad_rows.npy"), np.array([[0], [2], [0]], np.int64))


def expand_where():
    """TorchScript's `x[:, None, :].expand(b, 4, -1)`: the Expand target is
    Where(Equal(shape, -1), 1, shape) over a shape computed from the input."""
    reseed(153)
    inits = [
        const("i0", np.array(0, np.int64)),
        const("ax0", np.array([0], np.int64)),
        const("ax1", np.array([1], np.int64)),
        const("four", np.array([4], np.int64)),
        const("m1", np.array([-1], np.int64)),
        const("ones", np.array([1, 1, 1], np.int64)),
        const("mones", np.array([-1, -1, -1], np.int64)),
    ]
    n = [
        node("Shape", ["x"], ["shp"]),
        node("Gather", ["shp", "i0"], ["b"], axis=0),
        node("Unsqueeze", ["b", "ax0"], ["b1"]),
        node("Concat", ["b1", "four", "m1"], ["target"], axis=0),
        node("Equal", ["target", "mones"], ["is_keep"]),
        node("Where", ["is_keep", "ones", "target"], ["shape"]),
        node("Unsqueeze", ["x", "ax1"], ["u"]),
        # The Expand's result is not declared (an intermediate, as in the exports).
        node("Expand", ["u", "shape"], ["e"]),
        node("Relu", ["e"], ["y"]),
    ]
    m = model(
        n,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4, "sequence"])],
        inits,
    )
    save("expand_where", m, [(f"b{b}s{s}", [("x", f32(b, s))]) for b, s in [(1, 5), (2, 8), (3, 13)]])


def nd_batch_scatter():
    """GatherND with batch_dims 1 and 2 on data with dynamic axes (rows of
    each batch, e.g. per-sequence token picks), and ScatterND writing new
    rows into a [batch, maxlen, 4] cache at (b, t) pairs read from an input
    (a KV cache updated in place), with reduction none and add. Indices are
    inputs, some negative (counted from the end)."""
    reseed(154)
    n = [
        node("GatherND", ["x", "pick"], ["g1"], batch_dims=1),
        node("GatherND", ["h", "pick2"], ["g2"], batch_dims=2),
        node("ScatterND", ["cache", "pos", "upd"], ["s"]),
        node("ScatterND", ["cache", "pos", "upd"], ["sa"], reduction="add"),
    ]
    m = model(
        n,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", 4]),
         helper.make_tensor_value_info("pick", TensorProto.INT64, ["batch", 3, 1]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, ["batch", 2, "sequence", 3]),
         helper.make_tensor_value_info("pick2", TensorProto.INT64, ["batch", 2, 2, 1]),
         helper.make_tensor_value_info("cache", TensorProto.FLOAT, ["batch", "maxlen", 4]),
         helper.make_tensor_value_info("pos", TensorProto.INT64, ["batch", "new", 2]),
         helper.make_tensor_value_info("upd", TensorProto.FLOAT, ["batch", "new", 4])],
        [helper.make_tensor_value_info("g1", TensorProto.FLOAT, ["batch", 3, 4]),
         helper.make_tensor_value_info("g2", TensorProto.FLOAT, ["batch", 2, 2, 3]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, ["batch", "maxlen", 4]),
         helper.make_tensor_value_info("sa", TensorProto.FLOAT, ["batch", "maxlen", 4])],
        [],
        opset=18,
    )
    cases = []
    for b, s, maxlen, new in [(1, 5, 6, 2), (2, 8, 9, 3), (3, 13, 16, 5)]:
        pick = rng.integers(-s, s, size=(b, 3, 1), dtype=np.int64)
        pick2 = rng.integers(-s, s, size=(b, 2, 2, 1), dtype=np.int64)
        # Distinct (b, t) pairs: ScatterND without reduction leaves duplicates unspecified.
        t = np.stack([rng.permutation(maxlen)[:new] for _ in range(b)])
        pos = np.stack([np.broadcast_to(np.arange(b)[:, None], (b, new)), t], axis=-1).astype(np.int64)
        cases.append((f"b{b}s{s}m{maxlen}", [
            ("x", f32(b, s, 4)), ("pick", pick), ("h", f32(b, 2, s, 3)), ("pick2", pick2),
            ("cache", f32(b, maxlen, 4)), ("pos", pos), ("upd", f32(b, new, 4))]))
    save("nd_batch_scatter", m, cases)
    # A pick one past the end of its batch's rows: a run error in ge, not a read of the next batch.
    np.save(os.path.join(OUT, "nd_batch_scatter.bad_pick.npy"), np.array([[[0], [1], [8]], [[0], [0], [0]]], np.int64))


def mask_equality():
    """Bloom's ALiBi pattern (issue 15): a mask [batch, mask_len] of its own
    length symbol, unsqueezed to [batch, 1, mask_len], added to scores
    [batch, sequence, past+sequence] of a query against a cache grown by the
    new keys, then the softmax's MatMul contracts past+sequence. Nothing says
    mask_len = past+sequence: ge learns it at the Add and checks it when the
    inputs bind. bad_mask: one longer than past+sequence (onnxruntime refuses
    it too); one_mask: length 1, which onnxruntime broadcasts and ge refuses
    (the equality was learned), never a wrong answer."""
    reseed(152)
    inits = [const("ax1", np.array([1], np.int64))]
    n = [
        node("Concat", ["past", "k"], ["keys"], axis=1),
        node("Transpose", ["keys"], ["keys_t"], perm=[0, 2, 1]),
        node("MatMul", ["q", "keys_t"], ["scores"]),
        node("Unsqueeze", ["mask", "ax1"], ["bias"]),
        node("Add", ["scores", "bias"], ["biased"]),
        node("Softmax", ["biased"], ["probs"], axis=-1),
        node("MatMul", ["probs", "keys"], ["y"]),
    ]
    m = model(
        n,
        [helper.make_tensor_value_info("q", TensorProto.FLOAT, ["batch", "sequence", 4]),
         helper.make_tensor_value_info("k", TensorProto.FLOAT, ["batch", "sequence", 4]),
         helper.make_tensor_value_info("past", TensorProto.FLOAT, ["batch", "past_sequence", 4]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "mask_len"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", 4])],
        inits,
    )
    cases = [(f"b{b}p{p}s{s}", [("q", f32(b, s, 4)), ("k", f32(b, s, 4)), ("past", f32(b, p, 4)),
                               ("mask", f32(b, p + s))])
             for b, p, s in [(1, 0, 5), (2, 3, 1), (3, 7, 2)]]
    save("mask_equality", m, cases)
    np.save(os.path.join(OUT, "mask_equality.bad_mask.npy"), f32(2, 5))
    np.save(os.path.join(OUT, "mask_equality.one_mask.npy"), f32(2, 1))
def if_fold_split():
    """An If whose condition is decided by facts known at import — the
    static dim `Shape(x)[2] == 1`, and `Shape(x)[1] < Shape(x)[1] + 1` over a
    symbolic dim — with branches of different types (so only the taken
    branch can be imported), and Split of the dynamic `sequence` dim into 2
    equal parts by `num_outputs` (uneven at odd sizes: the last part is
    smaller, Split-18). if_runtime_cond: the same If on `Shape(x)[0] == 1`
    over the dynamic batch, not known at import: refused with one line."""
    reseed(160)
    inits = [
        const("i0", np.array(0, np.int64)),
        const("i1", np.array(1, np.int64)),
        const("i2", np.array(2, np.int64)),
        const("ax2", np.array([2], np.int64)),
    ]
    squeeze = helper.make_graph([node("Squeeze", ["x", "ax2"], ["sq_then"])], "t", [],
                                [helper.make_tensor_value_info("sq_then", TensorProto.FLOAT, None)])
    keep = helper.make_graph([node("Identity", ["x"], ["sq_else"])], "e", [],
                             [helper.make_tensor_value_info("sq_else", TensorProto.FLOAT, None)])
    halves = helper.make_graph([node("Split", ["sq"], ["a_then", "b_then"], axis=1, num_outputs=2)],
                               "t2", [],
                               [helper.make_tensor_value_info("a_then", TensorProto.FLOAT, None),
                                helper.make_tensor_value_info("b_then", TensorProto.FLOAT, None)])
    whole = helper.make_graph([node("Identity", ["x"], ["a_else"]), node("Neg", ["x"], ["b_else"])],
                              "e2", [],
                              [helper.make_tensor_value_info("a_else", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("b_else", TensorProto.FLOAT, None)])

    def build(cond_dim):
        n = [
            node("Shape", ["x"], ["shp"]),
            node("Gather", ["shp", cond_dim], ["d"], axis=0),
            node("Equal", ["d", "i1"], ["is_one"]),
            node("If", ["is_one"], ["sq"], then_branch=squeeze, else_branch=keep),
            node("Gather", ["shp", "i1"], ["s"], axis=0),
            node("Add", ["s", "i1"], ["s1"]),
            node("Less", ["s", "s1"], ["below"]),
            node("If", ["below"], ["a", "b"], then_branch=halves, else_branch=whole),
            node("Relu", ["a"], ["y"]),
            node("Abs", ["b"], ["z"]),
        ]
        return model(
            n,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", 1])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", None]),
             helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", None])],
            inits,
            opset=18,
        )

    sizes = [(2, 6), (3, 7), (1, 1)]
    save("if_fold_split", build("i2"),
         [(f"b{b}s{s}", [("x", f32(b, s, 1))]) for b, s in sizes])
    save("if_runtime_cond", build("i0"), [])


def value_elements():
    """AffineGrid's expanded pattern (issue 16): one element of an int64
    input `size` = [n, h, w] read twice at run time — as `Range(0, h)`'s
    limit and, through Split -> Concat -> Slice, as a dim of ConstantOfShape —
    and the two meet in a broadcast: y[i, j] = i + j over [h, w]. ge gives
    both dims the one value symbol of that element. bad_size: a negative h,
    refused at run time (as onnxruntime refuses ConstantOfShape's shape)."""
    reseed(161)
    inits = [
        const("i0", np.array(0, np.int64)),
        const("i1", np.array(1, np.int64)),
        const("one_1d", np.array([1], np.int64)),
        const("s1", np.array([1], np.int64)),
        const("e3", np.array([3], np.int64)),
        const("ax0", np.array([0], np.int64)),
    ]
    n = [
        node("Split", ["size"], ["n", "h", "w"], axis=0, num_outputs=3),
        node("Concat", ["one_1d", "h", "w"], ["nhw"], axis=0),
        node("Slice", ["nhw", "s1", "e3"], ["hw"]),
        node("ConstantOfShape", ["hw"], ["zeros"],
             value=numpy_helper.from_array(np.array([0.0], np.float32))),
        node("Squeeze", ["h", "ax0"], ["h0"]),
        node("Squeeze", ["w", "ax0"], ["w0"]),
        node("Range", ["i0", "h0", "i1"], ["rh_i"]),
        node("Range", ["i0", "w0", "i1"], ["rw_i"]),
        node("Cast", ["rh_i"], ["rh"], to=TensorProto.FLOAT),
        node("Cast", ["rw_i"], ["rw"], to=TensorProto.FLOAT),
        node("Unsqueeze", ["rh", "s1"], ["rh_col"]),
        node("Add", ["zeros", "rh_col"], ["t"]),
        node("Add", ["t", "rw"], ["y"]),
    ]
    m = model(
        n,
        [helper.make_tensor_value_info("size", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])],
        inits,
        opset=18,
    )
    save("value_elements", m,
         [(f"h{h}w{w}", [("size", np.array([1, h, w], np.int64))]) for h, w in [(3, 4), (5, 2), (1, 1)]])
    np.save(os.path.join(OUT, "value_elements.bad_size.npy"), np.array([1, -2, 3], np.int64))


def if_scalar_branch():
    """AffineGrid's align_corners step (issue 16): an If on `d == 1` with
    `d` a run-time input, whose then branch yields a scalar 0 and whose
    else branch `2 / (d - 1)` as [1]; the step scales a vector, y = x * step.
    Both ranks give y the same shape, so ge yields the scalar as [1].
    if_scalar_output: the step is also a graph output, whose rank would
    show: refused with one line naming the If."""
    reseed(162)
    inits = [
        const("one", np.array(1, np.int64)),
        const("zero_f", np.array(0.0, np.float32)),
        const("one_f", np.array(1.0, np.float32)),
        const("two_f", np.array(2.0, np.float32)),
    ]
    zero = helper.make_graph([node("Identity", ["zero_f"], ["step_then"])], "t", [],
                             [helper.make_tensor_value_info("step_then", TensorProto.FLOAT, None)])
    div = helper.make_graph([node("Div", ["two_f", "dm1"], ["step_else"])], "e", [],
                            [helper.make_tensor_value_info("step_else", TensorProto.FLOAT, None)])

    def build(show_step):
        n = [
            node("Equal", ["d", "one"], ["is_one"]),
            node("Cast", ["d"], ["d_f"], to=TensorProto.FLOAT),
            node("Sub", ["d_f", "one_f"], ["dm1"]),
            node("If", ["is_one"], ["step"], then_branch=zero, else_branch=div),
            node("Mul", ["x", "step"], ["y"]),
        ]
        outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])]
        if show_step:
            outs.append(helper.make_tensor_value_info("step", TensorProto.FLOAT, None))
        return model(
            n,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
             helper.make_tensor_value_info("d", TensorProto.INT64, [1])],
            outs,
            inits,
            opset=18,
        )

    save("if_scalar_branch", build(False),
         [(f"n{k}d{d}", [("x", f32(k)), ("d", np.array([d], np.int64))]) for k, d in [(4, 1), (5, 5), (3, 3)]])
    # Its step output has no shape (either rank): written without the full check.
    onnx.save(build(True), os.path.join(OUT, "if_scalar_output.onnx"))


def split_computed():
    """Split with a `split` input computed from the shape (issue 16):
    [s / 2, s - s / 2] of the dynamic sequence dim, so the parts' dims are
    those expressions; run at even, odd and length-1 sequences."""
    reseed(163)
    inits = [
        const("i1", np.array([1], np.int64)),
        const("i2", np.array([2], np.int64)),
    ]
    n = [
        node("Shape", ["x"], ["shp"]),
        node("Gather", ["shp", "i1"], ["s"], axis=0),
        node("Div", ["s", "i2"], ["half"]),
        node("Sub", ["s", "half"], ["rest"]),
        node("Concat", ["half", "rest"], ["parts"], axis=0),
        node("Split", ["x", "parts"], ["a", "b"], axis=1),
        node("Relu", ["a"], ["y"]),
        node("Neg", ["b"], ["z"]),
    ]
    m = model(
        n,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", None]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", None])],
        inits,
        opset=18,
    )
    save("split_computed", m, [(f"b{b}s{s}", [("x", f32(b, s))]) for b, s in [(2, 6), (3, 7), (1, 1)]])


MODELS = {f.__name__: f for f in [bert_dyn, cnn_dyn, larger_sizes, unknown_dim, range_symbolic_delta,
                                  prefix_broadcast, gathernd_mask, expand_where, nd_batch_scatter,
                                  mask_equality, if_fold_split, value_elements, if_scalar_branch,
                                  split_computed]}


if __name__ == "__main__":
    # Names of MODELS to (re)generate; every model without arguments.
    for name in sys.argv[1:] or MODELS:
        MODELS[name]()
