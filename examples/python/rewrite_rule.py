#!/usr/bin/env python3
"""A rewrite rule written in Python, applied with the greedy rewriter and
checked with the reference interpreter: the rewritten function computes the
same outputs as the original on random inputs.

Run: python examples/python/rewrite_rule.py   (exit code 0 when they agree)
"""

import numpy as np

import ge
from ge import es

# x * s + x  ==>  x * (s + 1): one op fewer when s is a constant.
RULES = ge.Rules.from_string(
    """
rule mul_add_self [mine]: (graph.add (graph.mul ?x ?s) ?x) => (graph.mul ?x (graph.add ?s splat(?s, 1.0)))
""",
    name="mine.rr",
)


def build():
    g = es.Graph("main")
    x = g.input("x", shape=(4, 8))
    s = g.constant(np.linspace(-1, 1, 8, dtype=np.float32))
    y = g.tanh(x * s + x)
    return g.build(y)


def main():
    before = build()
    after = before.copy()
    after.run_passes("builtin.module(apply-rules{labels=mine}, graph.func(canonicalize))", rules=RULES)
    count = lambda m, op: len(m.walk(op))  # noqa: E731
    print(before.print())
    print(after.print())
    assert count(before, "graph.add") == 1 and count(before, "graph.mul") == 1
    assert count(after, "graph.add") == 0, "the rule did not fire"
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = rng.standard_normal((4, 8)).astype(np.float32)
        want = before.interpret([x])
        got = after.interpret([x])
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-6)
    print("rule mul_add_self: same outputs on 5 random inputs (reference interpreter)")


if __name__ == "__main__":
    main()
