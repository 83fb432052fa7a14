"""The examples in examples/python run and check themselves (exit code 0)."""

import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = sorted((ROOT / "examples" / "python").glob("*.py"))


def test_examples_exist():
    assert {p.name for p in EXAMPLES} >= {"resnet_block.py", "rewrite_rule.py", "onnx_in_5_lines.py"}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, tmp_path):
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
