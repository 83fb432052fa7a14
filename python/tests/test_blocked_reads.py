"""ge.Model(blocked_reads=): convolutions on large maps read and write NC1HWC0
blocks as they are — "measured" (the default: where this CPU ran the blocks
kernel faster), "always" or "never", as ge-run's --blocked-reads; the outputs
agree either way."""

import os

import numpy as np
import pytest

import ge

CHAIN = os.path.join(os.path.dirname(__file__), "..", "..", "lit-tests", "runtime", "Inputs",
                     "pointwise_chain.air")


def avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx512f" in f.read()
    except OSError:
        return False


@pytest.fixture(scope="module")
def om():
    return ge.compile(CHAIN, op_compiler_cache_mode="disable")


def test_every_mode_gives_the_same_outputs(om):
    never = ge.Model(om, blocked_reads="never")
    x = np.random.default_rng(3).standard_normal((1, 8, 28, 28)).astype(np.float32)
    want = never.session().run({never.inputs[0][0]: x})
    assert never.blocked_reads == 0
    counts = {}
    for mode in ("always", "measured"):
        m = ge.Model(om, blocked_reads=mode)
        counts[mode] = m.blocked_reads
        got = m.session().run({m.inputs[0][0]: x})
        for k in want:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-5)
    assert counts["always"] == (3 if avx512() else 0)
    assert counts["measured"] in (0, counts["always"])


def test_an_unknown_mode_is_an_error(om):
    with pytest.raises(ge.Error, match="unknown blocked-reads mode 'sometimes'"):
        ge.Model(om, blocked_reads="sometimes")
