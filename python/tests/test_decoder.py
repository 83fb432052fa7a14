"""Issue 15 item 5: a Llama/Qwen2-style decoder exported with a KV cache
(tools/models/gen_decoder_model.py) compiles once, with no shape flags, and
decodes greedily token by token — past length 0, 1, 2, ... from the same
compiled model — choosing the same tokens as onnxruntime."""

import numpy as np
import pytest

import ge

ort = pytest.importorskip("onnxruntime")

LAYERS, KV_HEADS, HEAD_DIM = 2, 2, 8
NEW_TOKENS = 16


def step_inputs(ids, past_len, cache):
    batch, seq = ids.shape
    feeds = {
        "input_ids": ids,
        "attention_mask": np.ones((batch, past_len + seq), np.int64),
        "position_ids": np.tile(np.arange(past_len, past_len + seq, dtype=np.int64), (batch, 1)),
    }
    for layer in range(LAYERS):
        for kind in ("key", "value"):
            feeds[f"past_key_values.{layer}.{kind}"] = cache[f"{layer}.{kind}"]
    return feeds


def greedy(run, prompt):
    """Token ids and each step's last logits, feeding `present` back as
    `past_key_values` (an empty cache first: past length 0)."""
    batch = prompt.shape[0]
    empty = np.zeros((batch, KV_HEADS, 0, HEAD_DIM), np.float32)
    cache = {f"{layer}.{kind}": empty for layer in range(LAYERS) for kind in ("key", "value")}
    ids, past_len, tokens, logits = prompt, 0, [], []
    for _ in range(NEW_TOKENS):
        out = run(step_inputs(ids, past_len, cache))
        last = out["logits"][:, -1, :]
        logits.append(last)
        nxt = last.argmax(axis=-1).astype(np.int64)[:, None]
        tokens.append(nxt[:, 0].tolist())
        past_len += ids.shape[1]
        cache = {k: out[f"present.{k}"] for k in cache}
        assert cache["0.key"].shape[2] == past_len
        ids = nxt
    return tokens, logits


@pytest.fixture(scope="module")
def decoder_path(testdata):
    return str(testdata / "onnx" / "dynamic" / "llama_kv.onnx")


@pytest.mark.parametrize("batch", [1, 2])
def test_greedy_decoding_matches_onnxruntime(decoder_path, batch):
    model = ge.Model(ge.compile(decoder_path, op_compiler_cache_mode="disable"))
    assert model.fallback_ops == []
    session = model.session()
    reference = ort.InferenceSession(decoder_path, providers=["CPUExecutionProvider"])
    names = [o.name for o in reference.get_outputs()]

    def run_ort(feeds):
        return dict(zip(names, reference.run(None, feeds)))

    prompt = np.random.default_rng(7 + batch).integers(0, 64, size=(batch, 5), dtype=np.int64)
    ge_tokens, ge_logits = greedy(session.run, prompt)
    ort_tokens, ort_logits = greedy(run_ort, prompt)
    assert ge_tokens == ort_tokens
    for mine, theirs in zip(ge_logits, ort_logits):
        np.testing.assert_allclose(mine, theirs, rtol=1e-3, atol=1e-4)
    # One compiled model served 16 cache lengths: a plan per shape, cached.
    assert session.plans_built >= 2
