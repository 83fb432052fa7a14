"""Shared helpers of the tools/bench scripts: tools, build, inputs, measurement, tables.

Measurement: each command runs as a child process; wall time is taken around it and peak
RSS comes from the child's own rusage (os.wait4, the call GNU `time -f %M` makes), so no
extra package is needed. Runs of the compared tools are interleaved (ge, mlir, ge, mlir,
...) so that drift on the machine affects both alike.
"""

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import gen_module  # noqa: E402


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def die(msg, code=2):
    log(f"error: {msg}")
    sys.exit(code)


# ---- tools -------------------------------------------------------------------------------


def apt_install(pkg):
    """Install a Debian package if we are root and apt-get exists; return success."""
    if not shutil.which("apt-get"):
        return False
    if os.geteuid() != 0:
        return False
    log(f"installing Debian package '{pkg}' (apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    r = subprocess.run(["apt-get", "update", "-qq"], env=env)
    if r.returncode == 0:
        r = subprocess.run(["apt-get", "install", "-y", "-qq", pkg], env=env)
    return r.returncode == 0


def find_mlir_opt():
    """mlir-opt 22: $MLIR_OPT, else mlir-opt-22 on PATH, else install mlir-22-tools (root)."""
    env = os.environ.get("MLIR_OPT")
    if env:
        if not shutil.which(env):
            die(f"MLIR_OPT={env} is not an executable")
        return shutil.which(env)
    p = shutil.which("mlir-opt-22")
    if p:
        return p
    if apt_install("mlir-22-tools"):
        p = shutil.which("mlir-opt-22")
        if p:
            return p
    die(
        "mlir-opt-22 not found. Install it with `sudo apt-get install mlir-22-tools` "
        "(Debian/Ubuntu; the LLVM apt repository at https://apt.llvm.org has it for older "
        "releases), or point MLIR_OPT at an mlir-opt 22 binary. (Run this script as root "
        "and it installs the package itself.)"
    )


def build_ge_opt(skip_build=False):
    """`cargo build --release -p ge-driver`; return the path of the ge-opt binary."""
    if skip_build:
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
        exe = os.path.join(target, "release", "ge-opt")
        if not os.path.exists(exe):
            die(f"{exe} does not exist: build it or drop --no-build")
        return exe
    if not shutil.which("cargo"):
        die("cargo not found: install Rust (https://rustup.rs)")
    cmd = ["cargo", "build", "--release", "-p", "ge-driver", "--bin", "ge-opt"]
    log("$ " + " ".join(cmd))
    r = subprocess.run(cmd + ["--message-format=json-render-diagnostics"], cwd=REPO,
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        die("cargo build failed")
    exe = None
    for line in r.stdout.splitlines():
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("reason") == "compiler-artifact" and m.get("executable"):
            if os.path.basename(m["executable"]) == "ge-opt":
                exe = m["executable"]
    if not exe or not os.path.exists(exe):
        die("cargo did not report a ge-opt executable")
    return exe


def tool_version(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        out = (r.stdout + r.stderr).strip().splitlines()
        return next((l.strip() for l in out if "version" in l.lower()), out[0] if out else "?")
    except (OSError, subprocess.SubprocessError):
        return "?"


def git_rev():
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                           capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO, capture_output=True, text=True).stdout.strip()
        return r.stdout.strip() + (" (+ uncommitted changes)" if dirty else "")
    except OSError:
        return "?"


def machine():
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}), {mem} RAM, {platform.system()} {platform.release()}"


def loadavg():
    """1-minute load average (other jobs on the machine skew timings; say so)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


# ---- inputs ------------------------------------------------------------------------------


def ensure_inputs(out_dir, F, N, seed, redundant=False, regen=False):
    """Generate the inputs unless they exist and are newer than the generator."""
    tag = f"{F}x{N}"
    need = [f"ge-{tag}.air", f"ge-{tag}.generic.air", f"mlir-{tag}.mlir",
            f"mlir-{tag}.generic.mlir", f"unreg-{tag}.generic.mlir"]
    if redundant:
        need += [f"ge-{tag}-redundant.air", f"mlir-{tag}-redundant.mlir"]
    paths = [os.path.join(out_dir, n) for n in need]
    gen_mtime = os.path.getmtime(gen_module.__file__)
    stale = regen or any(
        not os.path.exists(p) or os.path.getmtime(p) < gen_mtime for p in paths
    )
    meta = os.path.join(out_dir, f"inputs-{tag}.json")
    if not stale:
        try:
            with open(meta) as f:
                stale = json.load(f).get("seed") != seed
        except (OSError, ValueError):
            stale = True
    if stale:
        log(f"generating {F} x {N} inputs in {os.path.relpath(out_dir, REPO)}/")
        t = time.perf_counter()
        gen_module.generate(out_dir, F, N, seed, redundant, 0.3, quiet=True)
        with open(meta, "w") as f:
            json.dump({"F": F, "N": N, "seed": seed}, f)
        log(f"  generated in {time.perf_counter() - t:.1f} s")
    names = ["ge", "ge-generic", "mlir", "mlir-generic", "unreg", "ge-redundant",
             "mlir-redundant"]
    return dict(zip(names, paths))


def warm_cache(path):
    """Read a file once so that every measured run starts with it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


# ---- measuring ---------------------------------------------------------------------------


def run_once(cmd, stdout_path=None):
    """Run cmd; return (wall seconds, peak RSS in KiB, exit code, stderr text, CPU seconds
    (user + system, all threads))."""
    with tempfile.TemporaryFile() as err:
        out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
        try:
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            p.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4
        finally:
            if stdout_path:
                out.close()
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return wall, ru.ru_maxrss, p.returncode, text, ru.ru_utime + ru.ru_stime


def check_dev_null():
    """Stop at once if a tool replaced /dev/null (a ge-opt without the special-file fix of
    `-o`, run as root, renames its temporary file over it)."""
    import stat

    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        die("/dev/null is no longer a character device (replaced by `-o /dev/null`?); "
            "restore it as root: rm /dev/null && mknod -m 666 /dev/null c 1 3")


class Case:
    """One command measured several times."""

    def __init__(self, key, tool, label, cmd, path, stdout_path=None):
        self.key, self.tool, self.label, self.cmd, self.path = key, tool, label, cmd, path
        self.stdout_path = stdout_path
        self.times, self.cpu, self.rss = [], [], []
        self.error = None

    def run(self):
        if self.error:
            return
        wall, rss, rc, err, cpu = run_once(self.cmd, self.stdout_path)
        check_dev_null()
        if rc != 0:
            self.error = f"exit {rc}: {err.strip()[:400]}"
            log(f"  FAILED {self.label}: {self.error}")
            return
        self.times.append(wall)
        self.cpu.append(cpu)
        self.rss.append(rss)
        log(f"  {self.label:42} {wall:8.2f} s wall {cpu:8.2f} s CPU {rss / 1024:8.0f} MiB")

    @property
    def t(self):
        return statistics.median(self.times) if self.times else None

    @property
    def c(self):
        return statistics.median(self.cpu) if self.cpu else None

    @property
    def m(self):
        # peak RSS hardly varies between runs; report the median as for time
        return statistics.median(self.rss) / 1024 if self.rss else None


def measure(cases, runs):
    for c in cases:
        warm_cache(c.path)
    for r in range(runs):
        log(f"run {r + 1}/{runs}")
        for c in cases:
            c.run()


def fmt_t(c):
    if c.error:
        return "failed"
    if len(c.times) > 1:
        return f"{c.t:.2f} ({min(c.times):.2f}–{max(c.times):.2f})"
    return f"{c.t:.2f}"


def fmt_cpu(c):
    return "failed" if c.error else f"{c.c:.2f}"


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}×"


def rel(path):
    try:
        return os.path.relpath(path, REPO)
    except ValueError:
        return path


def shell_join(cmd):
    import shlex

    return " ".join(shlex.quote(rel(c) if os.path.isabs(c) and c.startswith(REPO) else c)
                    for c in cmd)


def ort_p50(session, feed, iterations, warmup):
    """p50 seconds of onnxruntime's `session.run(None, feed)`, timed around
    each of `iterations` calls after `warmup` untimed ones."""
    for _ in range(warmup):
        session.run(None, feed)
    times = []
    for _ in range(iterations):
        t = time.perf_counter()
        session.run(None, feed)
        times.append(time.perf_counter() - t)
    return statistics.median(times)
