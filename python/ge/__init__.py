"""ge: an open graph compiler and CPU executor for Ascend-class NPUs, from Python.

- ``ge.es``: build graphs op by op (every graph/data op, generated from the op
  declarations), ``ge.es.Graph``;
- IR: ``ge.parse`` / ``ge.load`` -> ``ge.Module`` (``print``, ``walk``, ``verify``,
  ``run_passes`` with MLIR's pipeline grammar, ``eqsat``, ``interpret``),
  ``ge.Rules`` (``.rr`` rewrite rules);
- frontends: ``ge.import_onnx``, ``ge.import_tf``;
- ``ge.compile`` (ge-atc's options) -> ``.om`` bytes;
- ``ge.Model`` / ``ge.Session``: run an ``.om`` on numpy arrays; ``Session.runner()``
  -> ``ge.Runner``, the cheap call path for repeated runs (positional inputs,
  reused output arrays).

Every failure is a ``ge.Error`` (``file``/``line``/``col`` when it points into a
text); a bug in ge (a Rust panic) is a ``ge.InternalError``, a subclass.
"""

from ge._native import (
    Error,
    InternalError,
    Model,
    Module,
    Operation,
    Rules,
    Runner,
    Session,
    __version__,
    compile,
    import_onnx,
    import_tf,
    list_ops,
    list_passes,
    load,
    parse,
)
from ge import es

__all__ = [
    "Error",
    "InternalError",
    "Model",
    "Module",
    "Operation",
    "Rules",
    "Runner",
    "Session",
    "__version__",
    "compile",
    "es",
    "import_onnx",
    "import_tf",
    "list_ops",
    "list_passes",
    "load",
    "parse",
]
