"""Shared fixtures of the pytest suite of the `ge` package (numpy, onnx and
onnxruntime only). The repository root is two levels up; its testdata/ and
target/debug tools are used when present."""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"


@pytest.fixture(scope="session")
def root() -> pathlib.Path:
    return ROOT


@pytest.fixture(scope="session")
def testdata() -> pathlib.Path:
    return TESTDATA


def tool(name: str) -> str:
    """A ge binary: target/debug (tools/test-all.sh builds them), else PATH."""
    for d in ("debug", "release"):
        p = ROOT / "target" / d / name
        if p.exists():
            return str(p)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not built (cargo build -p ge-driver --bins)")
    return found


@pytest.fixture(scope="session")
def ge_opt() -> str:
    return tool("ge-opt")


@pytest.fixture(autouse=True)
def _no_user_cache(tmp_path, monkeypatch):
    # ge.compile's compile cache goes to a per-test directory, not ~/.cache.
    monkeypatch.setenv("GE_CACHE_DIR", str(tmp_path / "ge-cache"))


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, env=dict(os.environ))
