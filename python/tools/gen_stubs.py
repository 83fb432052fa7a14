#!/usr/bin/env python3
"""Write the package's typed stubs through the installed `ge` package:

- python/ge/es.pyi: the ES builder, from the op declarations
  (`ge._native.es_ops()`);
- python/ge/_native.pyi: the native classes and functions (Module, Operation,
  Rules, Model, Session, Error, ...), from the extension module itself (each
  function's text signature, each class's members) and the types in
  `ge._stubs.NATIVE_TYPES`.

    .venv/bin/pip install ./python && .venv/bin/python python/tools/gen_stubs.py

python/tests/test_es.py and test_stubs.py check the checked-in files match
(`--check` here does the same and exits 1 when one does not)."""

import pathlib
import sys

from ge._stubs import native_stub_text, stub_text

PKG = pathlib.Path(__file__).resolve().parent.parent / "ge"
FILES = {PKG / "es.pyi": stub_text, PKG / "_native.pyi": native_stub_text}


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = 0
    for out, make in FILES.items():
        text = make()
        if check:
            if not out.exists() or out.read_text() != text:
                print(f"{out} is stale: run python/tools/gen_stubs.py", file=sys.stderr)
                stale = 1
            continue
        out.write_text(text)
        print(f"wrote {out}")
    return stale


if __name__ == "__main__":
    sys.exit(main())
