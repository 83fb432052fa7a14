"""Greedy decoding with a KV cache, shared by tools/models/gen_torch_gauntlet.py
(onnxruntime's and torch's tokens) and tools/models/run_torch_gauntlet.py (ge's):
numpy only, so the runner needs no torch.

The model is a causal LM exported by `gen_torch_gauntlet.py --decode`: inputs
input_ids [batch, new], attention_mask [batch, past + new], position_ids
[batch, new], past_key_values.<l>.key / .value [batch, kv_heads, past,
head_dim]; outputs logits [batch, new, vocab] and present.<l>.key / .value
[batch, kv_heads, past + new, head_dim], in that order.
"""

import numpy as np

STEPS = 16


def greedy(step, layers, kv, prompt, steps=STEPS):
    """Decodes STEPS tokens from PROMPT ([batch, n] int64): STEP(feeds) takes
    the inputs in the order above and returns the outputs in the order above.
    The cache starts empty (past length 0: the prompt is the prefill) and each
    step's present is the next step's past. Returns the chosen token ids (one
    list per step) and the smallest top-2 logit margin of any step."""
    batch = prompt.shape[0]
    past = [np.zeros((batch, kv[0], 0, kv[1]), np.float32) for _ in range(2 * layers)]
    ids, length, tokens, margins = prompt, 0, [], []
    for _ in range(steps):
        new = ids.shape[1]
        feeds = [ids, np.ones((batch, length + new), np.int64),
                 np.tile(np.arange(length, length + new, dtype=np.int64), (batch, 1)), *past]
        out = step(feeds)
        last = out[0][:, -1, :]
        top2 = np.sort(last, axis=-1)[:, -2:]
        margins.append(float(np.min(top2[:, 1] - top2[:, 0])))
        ids = last.argmax(axis=-1).astype(np.int64)[:, None]
        tokens.append(ids[:, 0].tolist())
        past, length = list(out[1:]), length + new
    return tokens, min(margins)
