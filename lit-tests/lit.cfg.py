# lit configuration for ge. Run with tools/test-all.sh, or directly:
#   .venv/bin/lit -sv lit-tests
import os
import shutil
import stat
import subprocess
import tempfile

import lit.formats

config.name = "ge"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".air", ".mlir", ".rr", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)

repo = os.path.dirname(config.test_source_root)
bin_dir = os.environ.get("GE_BIN_DIR", os.path.join(repo, "target", "debug"))
venv_bin = os.path.join(repo, ".venv", "bin")
config.environment["PATH"] = os.pathsep.join(
    [bin_dir, venv_bin, config.environment.get("PATH", os.environ.get("PATH", ""))]
)
config.environment["NO_COLOR"] = "1"
config.substitutions.append(("%testdata", os.path.join(repo, "testdata")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

# Round trips through real MLIR run where mlir-opt 22 is installed (CI installs it).
mlir_opt = shutil.which("mlir-opt-22") or shutil.which("mlir-opt")
if mlir_opt:
    config.available_features.add("mlir-opt")
    config.substitutions.append(("%mlir-opt", mlir_opt))

# The MLIR bridge (cargo feature ge-driver/mlir) when the ge-translate under
# test was built with it: tests in lit-tests/mlir say REQUIRES: mlir-bridge.
try:
    features = subprocess.run(
        [os.path.join(bin_dir, "ge-translate"), "--list-features"],
        capture_output=True, text=True, timeout=60,
    ).stdout.split()
except (OSError, subprocess.SubprocessError):
    features = []
if "mlir-bridge" in features:
    config.available_features.add("mlir-bridge")
# ILP extraction for eqsat (cargo feature ge-rewrites/ilp, CBC): REQUIRES: ilp.
if "ilp" in features:
    config.available_features.add("ilp")

# The onnx package's light real-architecture models (onnx/backend/test/data/light),
# where the .venv has the onnx package: tests that say REQUIRES: onnx-light.
try:
    light = subprocess.run(
        [os.path.join(venv_bin, "python"), "-c",
         "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend', 'test', 'data', 'light'))"],
        capture_output=True, text=True, timeout=60,
    ).stdout.strip()
except (OSError, subprocess.SubprocessError):
    light = ""
if light and os.path.isdir(light):
    config.available_features.add("onnx-light")
    config.substitutions.append(("%onnx-light", light))

# Device nodes made under %t (`mknod %t.null c 1 3`, a second /dev/null) need root or
# CAP_MKNOD: tests of writing into a device say REQUIRES: mknod.
with tempfile.TemporaryDirectory() as d:
    try:
        os.mknod(os.path.join(d, "null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        config.available_features.add("mknod")
    except OSError:
        pass

# The packed GEMM micro-kernel's default depends on the CPU (AVX2 + FMA: the runtime's
# runtime/src/kernels/sgemm_packed.rs `fast`): tests of that choice say REQUIRES: avx2,
# and those whose default differs with AVX-512F check by `%if avx512`.
try:
    with open("/proc/cpuinfo") as f:
        flags = f.read().split()
    if "avx2" in flags and "fma" in flags:
        config.available_features.add("avx2")
    # With AVX-512F the default packs every constant filter (conv.rs `packs`).
    if "avx512f" in flags:
        config.available_features.add("avx512")
except OSError:
    pass

# A missing feature makes its tests UNSUPPORTED, silently. Where the features
# must be there (CI: tools/test-all.sh with GE_INSTALL_MLIR=1 sets
# GE_REQUIRE_LIT_FEATURES="mlir-opt mlir-bridge ilp"), a missing one stops the
# run instead.
required = os.environ.get("GE_REQUIRE_LIT_FEATURES", "").replace(",", " ").split()
missing = [f for f in required if f not in config.available_features]
if missing:
    lit_config.fatal(
        "GE_REQUIRE_LIT_FEATURES asks for %s, but %s %s not detected "
        "(mlir-opt: mlir-opt-22 or mlir-opt on PATH; mlir-bridge and ilp: "
        "`%s --list-features` of the ge-translate under test, built with "
        "--features ge-driver/mlir,ge-rewrites/ilp)"
        % (", ".join(required), ", ".join(missing), "is" if len(missing) == 1 else "are",
           os.path.join(bin_dir, "ge-translate"))
    )
