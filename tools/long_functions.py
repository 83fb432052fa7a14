#!/usr/bin/env python3
"""List the non-test Rust functions longer than a limit (issue 19: sizes).

Usage: tools/long_functions.py [--max N] [--check] [--pending FILE] [PATH...]

Scans the `src/` trees of the workspace crates (or the given files and
directories), skipping `#[cfg(test)]` modules, `#[test]` functions and
`tests/` directories, and prints `lines  path:line  fn name` for every
function whose body spans more than N lines (default 120), longest first.
A function may be long for a reason: a comment line starting with
`// long:` directly above it (among its doc comments and attributes) says
why, and the function is then listed as excused. A function whose split is
owed (to be done by whoever is changing that code now) is named in
tools/long_functions.pending and listed as pending. With --check the exit
status is 1 when a function is listed that is neither excused nor pending;
pending entries that are no longer too long are reported as stale.

It reads Rust as text: strings, raw strings, character literals and
comments are skipped so that braces inside them do not count.
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATES = ["ir", "dialects", "om", "soc", "rewrites", "lowering", "compile", "runtime", "frontends", "driver"]

FN_RE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"[^\"]*\"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")


def code_mask(text):
    """`text` with every character inside a comment, string or char literal
    replaced by a space (newlines kept), so that braces can be counted."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            blank(i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F}', '{'), else a lifetime.
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'", text[i:i + 12])
            if m:
                blank(i, i + len(m.group(0)))
                i += len(m.group(0))
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def functions(path):
    """Yield (name, first line, line count, excused) of the non-test functions of a file."""
    text = open(path, encoding="utf-8").read()
    lines = text.split("\n")
    code = code_mask(text).split("\n")
    # Line ranges of #[cfg(test)] items (modules) and #[test] functions.
    skip_until = -1
    pending_test = False
    i = 0
    while i < len(code):
        line = code[i]
        stripped = lines[i].strip()
        if i <= skip_until:
            i += 1
            continue
        if stripped.startswith("#[cfg(test)]") or stripped.startswith("#[test]"):
            pending_test = True
            i += 1
            continue
        m = FN_RE.match(line)
        starts_item = m or re.match(r"^\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", line)
        if starts_item:
            end = block_end(code, i)
            if pending_test:
                skip_until = end
            elif m and end is not None:
                excused = has_reason(lines, i)
                yield m.group(1), i + 1, end - i + 1, excused
            pending_test = False
        elif stripped and not stripped.startswith("#[") and not stripped.startswith("//"):
            pending_test = False
        i += 1


def block_end(code, start):
    """The line of the brace closing the first `{` at or after line `start`
    (None for a declaration ending in `;` first)."""
    depth, opened = 0, False
    for j in range(start, len(code)):
        for ch in code[j]:
            if ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}":
                depth -= 1
                if opened and depth == 0:
                    return j
            elif ch == ";" and not opened and depth == 0:
                return None
    return None


def has_reason(lines, fn_line):
    """A `// long:` comment among the doc comments and attributes above the fn."""
    j = fn_line - 1
    while j >= 0:
        s = lines[j].strip()
        if s.startswith("// long:"):
            return True
        if s.startswith("///") or s.startswith("//") or s.startswith("#["):
            j -= 1
            continue
        return False
    return False


def rust_files(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for dirpath, dirnames, filenames in os.walk(p):
            dirnames[:] = sorted(d for d in dirnames if d not in ("tests", "target", "benches"))
            for f in sorted(filenames):
                if f.endswith(".rs") and f != "tests.rs":
                    yield os.path.join(dirpath, f)


PENDING = os.path.join(ROOT, "tools", "long_functions.pending")


def read_pending(path):
    """The (path, fn name) pairs of the pending list (`path fn  reason` lines)."""
    pending = set()
    if not os.path.exists(path):
        return pending
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            parts = line.split()
            if len(parts) < 2:
                sys.exit(f"{path}: expected 'path fn-name reason', got {line!r}")
            pending.add((parts[0], parts[1]))
    return pending


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=120, help="longest allowed function (lines)")
    ap.add_argument("--check", action="store_true", help="exit 1 if an unexcused function is too long")
    ap.add_argument("--pending", default=PENDING, help="the list of functions whose split is owed")
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    paths = args.paths or [os.path.join(ROOT, c, "src") for c in CRATES]
    rows = []
    for f in rust_files(paths):
        for name, line, count, excused in functions(f):
            if count > args.max:
                rows.append((count, os.path.relpath(f, ROOT), line, name, excused))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    pending = read_pending(args.pending)
    for count, f, line, name, excused in rows:
        note = "  (excused: // long:)" if excused else ""
        if not excused and (f, name) in pending:
            note = "  (pending: tools/long_functions.pending)"
        print(f"{count:5}  {f}:{line}  fn {name}{note}")
    bad = [r for r in rows if not r[4] and (r[1], r[3]) not in pending]
    listed = {(r[1], r[3]) for r in rows}
    if not args.paths:
        for f, name in sorted(pending - listed):
            print(f"stale pending entry (no longer over {args.max} lines): {f} fn {name}", file=sys.stderr)
    n_pending = sum(1 for r in rows if not r[4] and (r[1], r[3]) in pending)
    print(
        f"{len(rows)} functions over {args.max} lines, {n_pending} pending, {len(bad)} without a reason",
        file=sys.stderr,
    )
    if args.check and bad:
        print(
            "error: split these functions, or say why one must be long in a `// long:` comment above it",
            file=sys.stderr,
        )
    return 1 if args.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
