#!/usr/bin/env python3
"""Torch's own outputs of a gauntlet model, beside its export (issue 17: is a gap to
onnxruntime ge's error or the exporters' rounding?).

Rebuilds the model as tools/models/gen_torch_gauntlet.py does (same seed, the same
randomised norms, the same inputs) and saves torch's outputs as torch{i}.npy in the
folder of an export, next to onnxruntime's out{i}.npy:

    /work/venvs/torch/bin/python tools/models/torch_reference.py raft_small \\
        target/torch-gauntlet/raft_small/dynamo

Then run the export with ge (`ge.Model(ge.compile(DIR/model.onnx)).session().run(...)`
on the in{i}.npy, in .venv) and compare its outputs with both out{i}.npy and
torch{i}.npy, as docs/benchmarks.md ("RAFT-small's two elements") reports.
"""

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_torch_gauntlet as g  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    name, out = sys.argv[1], sys.argv[2]
    if name not in g.MODELS:
        sys.exit(f"unknown model {name!r}; tools/models/gen_torch_gauntlet.py --list shows them")
    builder, _, _ = g.MODELS[name]
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model, args, _, _ = builder()
    model.eval()
    with torch.no_grad():
        g.randomize_norms(model)
        want = g.flat(model(*args))
    for i, w in enumerate(want):
        np.save(os.path.join(out, f"torch{i}.npy"), w.numpy())
    print(f"{name}: {len(want)} outputs saved as torch*.npy in {out}")


if __name__ == "__main__":
    main()
