#!/usr/bin/env python3
"""Which diagnostics of the TensorFlow front end have a test.

    python3 tools/tf/diag_coverage.py [--list] [--missing] [--strict]

A diagnostic is an error constructor call in frontends/src/tf/**/*.rs
(`ImportError::{invalid,unsupported,malformed,io,new}(..)` and the front end's
helpers `invalid(n, ..)`, `unsupported(n, ..)`, `unsupported(g, n, ..)`,
`bad(file, ..)`) whose arguments hold a string literal. Its message's literal
fragments are the text between `{..}` placeholders; the diagnostic counts as
tested when its longest fragment (or, for a short one, the whole literal with
placeholders as wildcards) occurs in a test: lit-tests/**/*.test or
frontends/tests/*.rs. Code under `#[cfg(test)]` is skipped.
Prints `N diagnostics .., K with a test`; --missing lists the untested ones
(file:line and text), --list all of them; --strict exits 1 when one lacks a test.
Messages no file can reach are listed in UNREACHABLE with the reason they stay.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "frontends", "src", "tf")
CALL = re.compile(
    r"(ImportError::(?:invalid|unsupported|malformed|io|new)|(?<![\w.:])(?:invalid|unsupported|bad))\s*\("
)
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def args_text(src, start):
    """The text of the balanced parentheses opening at src[start] (skipping strings)."""
    depth, i = 0, start
    while i < len(src):
        c = src[i]
        if c == '"':
            m = STRING.match(src, i)
            i = m.end()
            continue
        if c == "'" and src[i:i + 3] in ("'('", "')'", "'\"'"):
            i += 3
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return src[start + 1:i]
        i += 1
    return src[start + 1:]


def strip_tests(src):
    """The source without `#[cfg(test)] mod .. { .. }` blocks (same length: blanked)."""
    out = list(src)
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", src):
        depth, i = 1, m.end()
        while i < len(src) and depth:
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            i += 1
        for j in range(m.start(), i):
            if out[j] != "\n":
                out[j] = " "
    return "".join(out)


def unescape(s):
    s = s.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
    return re.sub(r"\\\n\s*", "", s)


def diagnostics():
    """(file, line, message literal) of every diagnostic."""
    found = []
    for dirpath, _, files in os.walk(SRC):
        for fn in sorted(files):
            if not fn.endswith(".rs"):
                continue
            path = os.path.join(dirpath, fn)
            src = strip_tests(open(path, encoding="utf-8").read())
            for m in CALL.finditer(src):
                # Skip the helpers' own definitions (`fn invalid(n: ..)`).
                if src[max(0, m.start() - 3):m.start()] == "fn ":
                    continue
                args = args_text(src, m.end() - 1)
                lits = [unescape(s) for s in STRING.findall(args)]
                # Ignore literals that are only names/labels (no space): attribute
                # names, `what` of const_i64s; the message is the longest literal.
                msgs = [s for s in lits if " " in s.strip() or len(lits) == 1]
                if not msgs:
                    continue
                msg = max(msgs, key=len)
                line = src.count("\n", 0, m.start()) + 1
                found.append((os.path.relpath(path, ROOT), line, msg))
    return sorted(set(found), key=lambda t: (t[0], t[1]))


def corpus():
    texts = []
    for base, ext in ((os.path.join(ROOT, "lit-tests"), ".test"),
                      (os.path.join(ROOT, "frontends", "tests"), ".rs")):
        for dirpath, _, files in os.walk(base):
            for fn in files:
                if fn.endswith(ext):
                    texts.append(open(os.path.join(dirpath, fn), encoding="utf-8").read())
    return "\n".join(texts)


def tested(msg, text):
    # A check line may hold a `{{.*}}` regex where the message has a placeholder.
    frags = [f.strip(" :'\n") for f in PLACEHOLDER.split(msg)]
    frags = [f for f in frags if f]
    if not frags:
        return None  # only placeholders: a wrapper, not a message of its own
    best = max(frags, key=len)
    if len(best) >= 12:
        return best in text
    pattern = r".*?".join(re.escape(f) for f in frags)
    return re.search(pattern, text) is not None


# Diagnostics no file can reach, with the reason each stays (the Option or
# Result it handles must not be unwrapped): counted apart, not as untested.
UNREACHABLE = {
    "a library function has no signature":
        "functions without a signature are left out of the library before a graph is made of one",
    "function '{name}' is not in the graph's library":
        "check_ops refuses a call of a missing function first ('<missing function>', FNMISSING)",
    "a tensor of {len} bytes is too large":
        "usize holds any u64 on the 64-bit targets; the budget and file-size checks come first",
    "output '{}' is a dead value (the untaken output of a Switch)":
        "a dead value exists only inside a loop body or branch scope (the Switch ports the "
        "scope marks dead); a top-level output is evaluated outside every scope",
    "it has no input for one branch":
        "cond_of classifies a Merge only when its two inputs reach the predicate through "
        "opposite ports, so both branches always have an input",
    "{msg}: its items have shape {shape:?} (imported again with it)":
        "internal: makes build() import again with the learnt shape; never shown",
}


def main():
    text = corpus()
    rows = []
    for path, line, msg in diagnostics():
        t = tested(msg, text)
        if t is None:
            continue
        if msg in UNREACHABLE:
            if "--list" in sys.argv or "--missing" in sys.argv:
                print(f"dead {path}:{line}: {msg} ({UNREACHABLE[msg]})")
            continue
        rows.append((path, line, msg, t))
    have = sum(1 for r in rows if r[3])
    for path, line, msg, t in rows:
        if "--list" in sys.argv or ("--missing" in sys.argv and not t):
            one = msg.replace("\n", "\\n")
            print(f"{'ok  ' if t else 'NONE'} {path}:{line}: {one}")
    print(f"{len(rows)} diagnostics reachable from a file ({len(UNREACHABLE)} more unreachable), "
          f"{have} with a test, {len(rows) - have} without")
    if "--strict" in sys.argv and have < len(rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
