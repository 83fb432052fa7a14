#!/usr/bin/env python3
"""Generate a Llama/Qwen2-style decoder with a KV cache (`past_key_values`)
into testdata/onnx/dynamic/llama_kv.onnx, as torch.onnx's TorchScript exporter
writes a Hugging Face causal LM exported with dynamic axes — plus inputs and
onnxruntime's outputs at past lengths 0, 1, 7 and 31 (issue 15 item 5).

    .venv/bin/pip install -r tools/frontends/requirements.txt onnxruntime
    .venv/bin/python tools/models/gen_decoder_model.py

Every dim a user varies is a `dim_param`: batch, sequence (new tokens),
past_sequence (cached tokens) and past_sequence + sequence. What the exported
graph computes from them stays in the graph, as torch writes it:

- input_ids [batch, sequence], attention_mask [batch, past_sequence +
  sequence] (int64, 1 = attend), position_ids [batch, sequence];
  past_key_values.<l>.key/.value [batch, kv_heads, past_sequence, head_dim];
- RMSNorm as Pow -> ReduceMean -> Add -> Sqrt -> Reciprocal -> Mul;
- q/k/v projections with biases (Qwen2), head split by Reshape to a target
  built from Shape -> Gather -> Unsqueeze -> Concat;
- rotary embeddings: cos/sin tables gathered by position_ids, rotate_half by
  two Slices (end = INT64_MAX), Neg and Concat;
- the cache: Concat(past, new) on the sequence axis is the `present` output;
  grouped-query attention repeats the kv heads by Unsqueeze -> Expand (target
  from Shape) -> Reshape;
- the causal mask from Range over the total length and Range(past, total),
  Greater, Where, plus the padding mask (1 - attention_mask) * min;
- SiLU MLP (x * Sigmoid(x)), final norm, lm_head -> logits [batch, sequence,
  vocab].

Weights are random (seeded): the model exists to check that one compiled
model runs at every cache length, equal to onnxruntime, and that greedy
decoding picks the same tokens (python/tests/test_decoder.py,
lit-tests/dynamic/llama-kv.test).
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "testdata", "onnx", "dynamic")

VOCAB = 64
HIDDEN = 32
HEADS = 4
KV_HEADS = 2
HEAD_DIM = HIDDEN // HEADS
FFN = 48
LAYERS = 2
MAX_POS = 128
F32_MIN = float(np.finfo(np.float32).min)
INT64_MAX = np.iinfo(np.int64).max


class Builder:
    """Nodes and initializers of one graph, with fresh value names."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.inits = []
        self.count = 0
        self.names = set()

    def weight(self, name, *shape, scale=0.2, offset=0.0):
        value = (offset + self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def const(self, name, value):
        if name not in self.names:
            self.names.add(name)
            self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type, inputs, **attrs):
        self.count += 1
        out = f"{op_type.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def op_named(self, op_type, inputs, out, **attrs):
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out


def dim(b, x, axis):
    """torch's `x.size(axis)` as a 1-element int64 tensor."""
    return b.op("Unsqueeze", [b.op("Gather", [b.op("Shape", [x]), b.const(f"ax{axis}_s", np.array(axis, np.int64))], axis=0), "zero1"])


def rms_norm(b, x, prefix):
    w = b.weight(f"{prefix}.weight", HIDDEN, scale=0.1, offset=1.0)
    var = b.op("ReduceMean", [b.op("Pow", [x, "two"])], axes=[-1], keepdims=1)
    inv = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [var, "eps"])])])
    return b.op("Mul", [w, b.op("Mul", [x, inv])])


def linear(b, x, name, n_in, n_out, bias):
    y = b.op("MatMul", [x, b.weight(f"{name}.weight_t", n_in, n_out)])
    if bias:
        y = b.op("Add", [b.weight(f"{name}.bias", n_out, scale=0.05), y])
    return y


def split_heads(b, x, batch, seq, heads):
    """[batch, seq, heads*hd] -> [batch, heads, seq, hd]."""
    shape = b.op("Concat", [batch, seq, b.const(f"heads{heads}", np.array([heads], np.int64)), "head_dim"], axis=0)
    return b.op("Transpose", [b.op("Reshape", [x, shape])], perm=[0, 2, 1, 3])


def rotate(b, x, cos, sin):
    """x * cos + rotate_half(x) * sin, rotate_half as HF's Llama writes it."""
    x1 = b.op("Slice", [x, "zero1", "half_dim", "minus1"])
    x2 = b.op("Slice", [x, "half_dim", "int64_max", "minus1"])
    rotated = b.op("Concat", [b.op("Neg", [x2]), x1], axis=-1)
    return b.op("Add", [b.op("Mul", [x, cos]), b.op("Mul", [rotated, sin])])


def repeat_kv(b, x, batch, total):
    """[batch, kv, total, hd] -> [batch, kv*rep, total, hd] (GQA)."""
    rep = HEADS // KV_HEADS
    unsq = b.op("Unsqueeze", [x, b.const("ax2", np.array([2], np.int64))])
    kv = b.const("kv_heads", np.array([KV_HEADS], np.int64))
    target = b.op("Concat", [batch, kv, b.const("n_rep", np.array([rep], np.int64)), total, "head_dim"], axis=0)
    expanded = b.op("Expand", [unsq, target])
    merged = b.op("Concat", [batch, b.const("heads_all", np.array([HEADS], np.int64)), total, "head_dim"], axis=0)
    return b.op("Reshape", [expanded, merged])


def attention(b, layer, h, ctx):
    p = f"model.layers.{layer}.self_attn"
    batch, seq, total, cos, sin, mask = ctx
    q = split_heads(b, linear(b, h, f"{p}.q_proj", HIDDEN, HIDDEN, True), batch, seq, HEADS)
    k = split_heads(b, linear(b, h, f"{p}.k_proj", HIDDEN, KV_HEADS * HEAD_DIM, True), batch, seq, KV_HEADS)
    v = split_heads(b, linear(b, h, f"{p}.v_proj", HIDDEN, KV_HEADS * HEAD_DIM, True), batch, seq, KV_HEADS)
    q, k = rotate(b, q, cos, sin), rotate(b, k, cos, sin)
    key = b.op_named("Concat", [f"past_key_values.{layer}.key", k], f"present.{layer}.key", axis=2)
    value = b.op_named("Concat", [f"past_key_values.{layer}.value", v], f"present.{layer}.value", axis=2)
    key, value = repeat_kv(b, key, batch, total), repeat_kv(b, value, batch, total)
    scores = b.op("Div", [b.op("MatMul", [q, b.op("Transpose", [key], perm=[0, 1, 3, 2])]), "sqrt_hd"])
    probs = b.op("Softmax", [b.op("Add", [scores, mask])], axis=-1)
    ctx_heads = b.op("Transpose", [b.op("MatMul", [probs, value])], perm=[0, 2, 1, 3])
    merged = b.op("Reshape", [ctx_heads, b.op("Concat", [batch, seq, "hidden"], axis=0)])
    return linear(b, merged, f"{p}.o_proj", HIDDEN, HIDDEN, False)


def mlp(b, layer, h):
    p = f"model.layers.{layer}.mlp"
    gate = linear(b, h, f"{p}.gate_proj", HIDDEN, FFN, False)
    silu = b.op("Mul", [gate, b.op("Sigmoid", [gate])])
    up = linear(b, h, f"{p}.up_proj", HIDDEN, FFN, False)
    return linear(b, b.op("Mul", [silu, up]), f"{p}.down_proj", FFN, HIDDEN, False)


def causal_mask(b, batch, seq, past):
    """[batch, 1, seq, total]: 0 where a query may attend, F32_MIN elsewhere."""
    total = b.op("Add", [past, seq])
    past_s = b.op("Squeeze", [past, "zero1"])
    total_s = b.op("Squeeze", [total, "zero1"])
    cols = b.op("Range", ["zero", total_s, "one_i"])
    rows = b.op("Range", [past_s, total_s, "one_i"])
    future = b.op("Greater", [b.op("Unsqueeze", [cols, "zero1"]), b.op("Unsqueeze", [rows, "one1"])])
    causal = b.op("Where", [future, "f32_min", "f32_zero"])
    causal4 = b.op("Unsqueeze", [causal, b.const("ax01", np.array([0, 1], np.int64))])
    keep = b.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    pad = b.op("Mul", [b.op("Sub", ["f32_one", keep]), "f32_min"])
    pad4 = b.op("Unsqueeze", [pad, b.const("ax12", np.array([1, 2], np.int64))])
    mask = b.op("Add", [causal4, pad4])
    # Two F32_MIN summed overflow to -inf; torch clamps the same way.
    return b.op("Max", [mask, "f32_min"]), total


def rotary_tables():
    inv = 1.0 / (10000.0 ** (np.arange(0, HEAD_DIM, 2, dtype=np.float64) / HEAD_DIM))
    freqs = np.outer(np.arange(MAX_POS, dtype=np.float64), inv)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def decoder_model(seed=155):
    b = Builder(np.random.default_rng(seed))
    for name, value in [
        ("zero", np.array(0, np.int64)),
        ("one_i", np.array(1, np.int64)),
        ("zero1", np.array([0], np.int64)),
        ("one1", np.array([1], np.int64)),
        ("minus1", np.array([-1], np.int64)),
        ("head_dim", np.array([HEAD_DIM], np.int64)),
        ("half_dim", np.array([HEAD_DIM // 2], np.int64)),
        ("int64_max", np.array([INT64_MAX], np.int64)),
        ("hidden", np.array([HIDDEN], np.int64)),
        ("two", np.array(2.0, np.float32)),
        ("eps", np.array(1e-6, np.float32)),
        ("sqrt_hd", np.array(np.sqrt(HEAD_DIM), np.float32)),
        ("f32_min", np.array(F32_MIN, np.float32)),
        ("f32_zero", np.array(0.0, np.float32)),
        ("f32_one", np.array(1.0, np.float32)),
    ]:
        b.const(name, value)
    cos_table, sin_table = rotary_tables()
    b.const("cos_cached", cos_table)
    b.const("sin_cached", sin_table)

    batch, seq = dim(b, "input_ids", 0), dim(b, "input_ids", 1)
    past = dim(b, "past_key_values.0.key", 2)
    mask, total = causal_mask(b, batch, seq, past)
    # [batch, seq, hd] -> [batch, 1, seq, hd], broadcast over the heads.
    cos = b.op("Unsqueeze", [b.op("Gather", ["cos_cached", "position_ids"], axis=0), "one1"])
    sin = b.op("Unsqueeze", [b.op("Gather", ["sin_cached", "position_ids"], axis=0), "one1"])
    ctx = (batch, seq, total, cos, sin, mask)

    h = b.op("Gather", [b.weight("model.embed_tokens.weight", VOCAB, HIDDEN, scale=0.5), "input_ids"], axis=0)
    for layer in range(LAYERS):
        a = attention(b, layer, rms_norm(b, h, f"model.layers.{layer}.input_layernorm"), ctx)
        h = b.op("Add", [h, a])
        m = mlp(b, layer, rms_norm(b, h, f"model.layers.{layer}.post_attention_layernorm"))
        h = b.op("Add", [h, m])
    h = rms_norm(b, h, "model.norm")
    b.op_named("MatMul", [h, b.weight("lm_head.weight_t", HIDDEN, VOCAB)], "logits")

    kv_shape = ["batch", KV_HEADS, "past_sequence", HEAD_DIM]
    present_shape = ["batch", KV_HEADS, "past_sequence + sequence", HEAD_DIM]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "past_sequence + sequence"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "sequence"]),
    ]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", VOCAB])]
    for layer in range(LAYERS):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{layer}.{kind}", TensorProto.FLOAT, kv_shape))
            outputs.append(helper.make_tensor_value_info(f"present.{layer}.{kind}", TensorProto.FLOAT, present_shape))
    graph = helper.make_graph(b.nodes, "main_graph", inputs, outputs, b.inits)
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17)],
        producer_name="ge tools/models/gen_decoder_model.py",
        ir_version=8,
    )


def feeds_at(rng, batch, seq, past):
    """Inputs for `seq` new tokens after `past` cached ones."""
    feeds = {
        "input_ids": rng.integers(0, VOCAB, size=(batch, seq), dtype=np.int64),
        "attention_mask": np.ones((batch, past + seq), np.int64),
        "position_ids": np.tile(np.arange(past, past + seq, dtype=np.int64), (batch, 1)),
    }
    for layer in range(LAYERS):
        for kind in ("key", "value"):
            kv = rng.standard_normal((batch, KV_HEADS, past, HEAD_DIM)).astype(np.float32)
            feeds[f"past_key_values.{layer}.{kind}"] = kv
    return feeds


def main():
    import onnxruntime as ort  # noqa: PLC0415  (the reference; tools/requirements-test.txt)

    model = decoder_model()
    onnx.checker.check_model(model, full_check=True)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "llama_kv.onnx")
    onnx.save(model, path)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1555)
    # Prefill (past 0), the first decode step (past 1), and two later steps,
    # one of them with a batch of 2 and two new tokens.
    for batch, seq, past in [(1, 5, 0), (1, 1, 1), (2, 2, 7), (1, 1, 31)]:
        feeds = feeds_at(rng, batch, seq, past)
        name = f"llama_kv.past{past}"
        for i, value in enumerate(feeds.values()):
            np.save(os.path.join(OUT, f"{name}.in{i}.npy"), value)
        for i, value in enumerate(sess.run(None, feeds)):
            np.save(os.path.join(OUT, f"{name}.out{i}.npy"), value)
    print("wrote", os.path.relpath(path, ROOT))


if __name__ == "__main__":
    main()
