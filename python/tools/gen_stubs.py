#!/usr/bin/env python3
"""Write python/ge/es.pyi (the ES builder's typed stubs) from the op
declarations, through the installed `ge` package:

    .venv/bin/pip install ./python && .venv/bin/python python/tools/gen_stubs.py

python/tests/test_es.py checks the checked-in file matches (`--check` here
does the same and exits 1 when it does not)."""

import pathlib
import sys

from ge._stubs import stub_text

OUT = pathlib.Path(__file__).resolve().parent.parent / "ge" / "es.pyi"


def main() -> int:
    text = stub_text()
    if "--check" in sys.argv[1:]:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is stale: run python/tools/gen_stubs.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
