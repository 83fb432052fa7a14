"""The typed stubs of the native part (ge/_native.pyi) against the objects
themselves, as mypy's stubtest checks a stub: every class and function the
extension module has is in the stub and nothing else; every public attribute
of each class (its own and inherited ones) is declared, and nothing more;
each function's and method's parameters — names, kinds and which have
defaults — are the runtime's. The checked-in file is what gen_stubs.py writes."""

import ast
import inspect
import pathlib

import pytest

import ge
from ge import _native
from ge._stubs import native_api, native_stub_text

REPO_PYI = pathlib.Path(__file__).resolve().parents[1] / "ge" / "_native.pyi"


def stub_path() -> pathlib.Path:
    # The repository's file (what gen_stubs.py writes), else the installed one.
    return REPO_PYI if REPO_PYI.exists() else pathlib.Path(_native.__file__).with_name("_native.pyi")


def test_native_stubs_are_current():
    text = stub_path().read_text()
    assert text == native_stub_text(), "run python/tools/gen_stubs.py"
    compile(text, "_native.pyi", "exec")


def _stub(text):
    """{name: node} of the stub's module level, and {class: {member: node}}."""
    tree = ast.parse(text)
    top, classes, bases = {}, {}, {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top[node.name] = node
            bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
            members = {}
            for m in node.body:
                if isinstance(m, ast.FunctionDef):
                    members[m.name] = m
                elif isinstance(m, ast.AnnAssign) and isinstance(m.target, ast.Name):
                    members[m.target.id] = m
            classes[node.name] = members
        elif isinstance(node, ast.FunctionDef):
            top[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if not node.target.id.startswith("_") or node.target.id == "__version__":
                top[node.target.id] = node
    return top, classes, bases


def _declared(cls, classes, bases):
    """The members a stub class declares, its stub bases' included."""
    out = dict(classes.get(cls, {}))
    for b in bases.get(cls, []):
        for k, v in _declared(b, classes, bases).items():
            out.setdefault(k, v)
    return out


def _runtime_public(cls):
    """A class's public attributes at runtime (inherited ones too), without
    those every object or exception has."""
    base = Exception if issubclass(cls, BaseException) else object
    names = {n for n in dir(cls) if not n.startswith("_")} - set(dir(base))
    own_private = {n for n in vars(cls) if n.startswith("_") and not n.startswith("__")}
    return names | own_private


def _params(node):
    """(name, kind, has default) of a stub function's parameters, `self` left out."""
    a = node.args
    n_def = len(a.defaults)
    plain = a.posonlyargs + a.args
    first_default = len(plain) - n_def
    out = []
    for i, p in enumerate(plain):
        kind = "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        out.append((p.arg, kind, i >= first_default))
    if a.vararg:
        out.append((a.vararg.arg, "VAR_POSITIONAL", False))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((p.arg, "KEYWORD_ONLY", d is not None))
    if a.kwarg:
        out.append((a.kwarg.arg, "VAR_KEYWORD", False))
    return [p for p in out if p[0] != "self"]


def _runtime_params(obj):
    sig = inspect.signature(obj)
    return [(p.name, p.kind.name, p.default is not inspect.Parameter.empty)
            for p in sig.parameters.values() if p.name != "self"]


def mismatches(text):
    """Every way the stub `text` disagrees with the native module."""
    top, classes, bases = _stub(text)
    api = native_api()
    bad = []
    for name in sorted(set(api) - set(top)):
        bad.append(f"{name}: in ge._native, not in the stub")
    for name in sorted(set(top) - set(api)):
        bad.append(f"{name}: in the stub, not in ge._native")
    for name in sorted(set(api) & set(top)):
        obj = getattr(_native, name)
        node = top[name]
        if isinstance(obj, type):
            if not isinstance(node, ast.ClassDef):
                bad.append(f"{name}: a class, not one in the stub")
                continue
            declared = _declared(name, classes, bases)
            public = _runtime_public(obj) | {d for d in ("__add__", "__len__") if d in vars(obj)}
            stub_names = {n for n in declared if n != "__init__"}
            for m in sorted(public - stub_names):
                bad.append(f"{name}.{m}: at runtime, not in the stub")
            for m in sorted(stub_names - public):
                bad.append(f"{name}.{m}: in the stub, not at runtime")
            for m in sorted(public & stub_names):
                member = declared[m]
                rt = inspect.getattr_static(obj, m)
                is_prop = inspect.isgetsetdescriptor(rt) or inspect.ismemberdescriptor(rt)
                if isinstance(member, ast.FunctionDef):
                    decos = {d.id for d in member.decorator_list if isinstance(d, ast.Name)}
                    if is_prop != ("property" in decos):
                        bad.append(f"{name}.{m}: property at runtime is {is_prop}, in the stub not")
                    elif not is_prop and _params(member) != _runtime_params(getattr(obj, m)):
                        bad.append(f"{name}.{m}: parameters {_params(member)} in the stub, "
                                   f"{_runtime_params(getattr(obj, m))} at runtime")
            init = declared.get("__init__")
            # A class made from Python has its constructor's text signature;
            # one without (no #[new]) has none — inspect would fall back to
            # object's `()` for it under pyo3's abi3-py310 types.
            if getattr(obj, "__text_signature__", None) is None:
                rt_init = None  # no constructor from Python
            else:
                rt_init = _runtime_params(obj)
            if (init is None) != (rt_init is None):
                bad.append(f"{name}.__init__: constructible at runtime is {rt_init is not None}")
            elif init is not None and _params(init) != rt_init:
                bad.append(f"{name}.__init__: parameters {_params(init)} in the stub, {rt_init} at runtime")
        elif callable(obj):
            if not isinstance(node, ast.FunctionDef):
                bad.append(f"{name}: a function, not one in the stub")
            elif _params(node) != _runtime_params(obj):
                bad.append(f"{name}: parameters {_params(node)} in the stub, {_runtime_params(obj)} at runtime")
    return bad


def test_the_stub_matches_the_native_objects():
    assert mismatches(stub_path().read_text()) == []


@pytest.mark.parametrize("edit, says", [
    # A member removed, a parameter renamed, a default dropped, a member made up:
    # each is found (the check can fail).
    (("    @property\n    def zero_copy_inputs(self) -> List[bool]:", "    def _gone(self) -> None:"),
     "Model.zero_copy_inputs: at runtime, not in the stub"),
    (("def run(self, inputs: _Inputs, trace", "def run(self, inputs: _Inputs, trace_path"), "Model.run: parameters"),
    (("def load(path: _Path, verify: bool = True)", "def load(path: _Path, verify: bool)"), "load: parameters"),
    (("class Value:\n", "class Value:\n    bogus: int\n"), "Value.bogus: in the stub, not at runtime"),
    (("\ndef list_passes() -> List[str]:", "\ndef list_passes2() -> List[str]:"),
     "list_passes: in ge._native, not in the stub"),
])
def test_a_wrong_stub_is_caught(edit, says):
    text = stub_path().read_text()
    old, new = edit
    assert old in text
    found = mismatches(text.replace(old, new, 1))
    assert any(says in m for m in found), found


def test_the_package_reexports_are_typed():
    # Everything `ge` takes from its native part is declared in the stub.
    top, _, _ = _stub(stub_path().read_text())
    for name in ge.__all__:
        if name != "es":
            assert name in top, name
