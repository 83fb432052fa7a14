"""IR: parse/print/walk/verify, pass pipelines, .rr rules, eqsat, the interpreter."""

import numpy as np
import pytest

import ge

BLOCK = """graph.func @block(%x: tensor<Bx4xf32>, %b: tensor<4xf32>) -> tensor<Bx4xf32> {
  %0 = graph.add %x, %b : (tensor<Bx4xf32>, tensor<4xf32>) -> tensor<Bx4xf32>
  %1 = graph.relu %0 : (tensor<Bx4xf32>) -> tensor<Bx4xf32>
  graph.return %1 : tensor<Bx4xf32>
}
"""

DOUBLE_NEG = """graph.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.neg %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.exp %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  graph.return %2 : tensor<2x3xf32>
}
"""


def test_parse_print_round_trip():
    m = ge.parse(BLOCK)
    text = m.print()
    assert "graph.relu" in text
    assert ge.parse(text).print() == text
    assert str(m) == text
    assert m.functions() == ["block"]


def test_generic_form_parses_back():
    m = ge.parse(BLOCK)
    generic = m.print(generic=True)
    assert '"graph.add"' in generic
    assert ge.parse(generic).print() == m.print()


def test_debuginfo_has_locations():
    m = ge.parse(BLOCK, name="block.air")
    assert 'loc("block.air":2:' in m.print(debuginfo=True)


def test_walk_ops_types_attributes():
    m = ge.parse(BLOCK)
    ops = m.walk()
    names = [o.name for o in ops]
    assert names == ["graph.func", "graph.add", "graph.relu", "graph.return"]
    add = ops[1]
    assert add.operand_types == ["tensor<Bx4xf32>", "tensor<4xf32>"]
    assert add.result_types == ["tensor<Bx4xf32>"]
    assert add.depth == 1
    func = ops[0]
    assert func.attributes["sym_name"] == "block"
    assert func.num_regions == 1
    assert [o.name for o in m.walk("graph.relu")] == ["graph.relu"]


def test_dense_attributes_are_numpy_arrays():
    m = ge.parse("""graph.func @main() -> tensor<2xf32> {
  %0 = data.constant dense<[1.5, 2.5]> : tensor<2xf32>
  graph.return %0 : tensor<2xf32>
}""")
    (c,) = m.walk("data.constant")
    np.testing.assert_array_equal(c.attributes["value"], np.array([1.5, 2.5], np.float32))


def test_parse_error_has_file_line_col():
    with pytest.raises(ge.Error) as e:
        ge.parse("graph.func @f(%x: tensor<4xf7>) -> tensor<4xf32>\n", name="bad.air")
    assert (e.value.file, e.value.line) == ("bad.air", 1)
    assert e.value.col == 28
    assert "bad.air:1:28" in str(e.value)
    assert e.value.diagnostics and "bad.air" in e.value.diagnostics[0]


def test_verify_error_has_file_line_col():
    # Parses, but the return does not match the function's result type.
    bad = BLOCK.replace("graph.return %1 : tensor<Bx4xf32>", "graph.return %0, %1 : tensor<Bx4xf32>, tensor<Bx4xf32>")
    with pytest.raises(ge.Error) as e:
        ge.parse(bad, name="v.air")
    assert e.value.file == "v.air" and e.value.line == 4 and e.value.col is not None
    # Parsing without verification, then verifying, reports the same place.
    m = ge.parse(bad, name="v.air", verify=False)
    with pytest.raises(ge.Error) as e2:
        m.verify()
    assert (e2.value.file, e2.value.line, e2.value.col) == (e.value.file, e.value.line, e.value.col)
    assert ge.parse(BLOCK).verify() == []


def test_load_and_save(tmp_path):
    p = tmp_path / "m.air"
    ge.parse(BLOCK).save(str(p))
    m = ge.load(str(p))
    assert m.functions() == ["block"]
    with pytest.raises(ge.Error, match="cannot read"):
        ge.load(str(tmp_path / "missing.air"))
    (tmp_path / "latin1.air").write_bytes(b"\xff\xfe")
    with pytest.raises(ge.Error, match="not UTF-8"):
        ge.load(str(tmp_path / "latin1.air"))


def test_pass_pipeline_in_mlir_grammar():
    m = ge.parse(DOUBLE_NEG)
    before = m.copy()
    m.run_passes("builtin.module(graph.func(canonicalize, cse))")
    assert "graph.neg" not in m.print()
    # copy() is deep: the original is unchanged.
    assert before.print().count("graph.neg") == 2


def test_pipeline_errors_point_into_the_pipeline():
    m = ge.parse(BLOCK)
    with pytest.raises(ge.Error) as e:
        m.run_passes("builtin.module(graph.func(no-such-pass))")
    assert e.value.file == "<pass-pipeline>"
    assert e.value.line == 1 and e.value.col == 27
    with pytest.raises(ge.Error):
        m.run_passes("builtin.module(graph.func(canonicalize")


def test_rules_from_string_apply(tmp_path):
    rules = ge.Rules.from_string("rule fold_double_neg: (graph.neg (graph.neg ?x)) => ?x\n")
    assert rules.names == ["fold_double_neg"] and len(rules) == 1
    m = ge.parse(DOUBLE_NEG)
    m.run_passes("builtin.module(apply-rules{rules=fold_double_neg})", rules=rules)
    assert "graph.neg" not in m.print()
    p = tmp_path / "mine.rr"
    p.write_text("rule exp_of_neg [mine]: (graph.exp (graph.neg ?x)) => (graph.reciprocal (graph.exp ?x))\n")
    both = rules + ge.Rules.from_file(str(p))
    assert both.names == ["fold_double_neg", "exp_of_neg"]


def test_rule_errors_have_file_line_col(tmp_path):
    with pytest.raises(ge.Error) as e:
        ge.Rules.from_string("rule r: (graph.neg ?x) =>\n", name="r.rr")
    assert e.value.file == "r.rr" and e.value.line is not None
    with pytest.raises(ge.Error) as e:
        ge.Rules.from_string("rule r: (graph.no_such_op ?x) => ?x\n", name="u.rr")
    assert e.value.file == "u.rr" and (e.value.line, e.value.col) == (1, 10)
    with pytest.raises(ge.Error, match="cannot read rule file"):
        ge.Rules.from_file(str(tmp_path / "missing.rr"))
    with pytest.raises(ge.Error, match="ge.Rules"):
        ge.parse(BLOCK).run_passes("builtin.module(apply-rules)", rules="not rules")


def test_eqsat_report_is_a_dict():
    m = ge.parse(DOUBLE_NEG)
    report = m.eqsat(extract="greedy")
    r = report["main"]
    assert set(r) == {"iterations", "enodes", "eclasses", "stop", "cost_before_us",
                      "cost_after_us", "gain_percent", "time_ms"}
    assert r["iterations"] >= 1 and r["enodes"] >= 1
    assert r["cost_after_us"] <= r["cost_before_us"]
    with pytest.raises(ge.Error):
        m.eqsat(no_such_option=1)


def test_interpret():
    m = ge.parse(BLOCK)
    x = np.array([[-1.0, 2.0, -3.0, 4.0]] * 2, np.float32)
    b = np.ones(4, np.float32)
    out = m.interpret({"arg0": x, "arg1": b})
    np.testing.assert_array_equal(out["out0"], np.maximum(x + b, 0))
    out2 = m.interpret([x, b], func="block")
    np.testing.assert_array_equal(out2["out0"], out["out0"])
    with pytest.raises(ge.Error, match="missing input"):
        m.interpret({"arg0": x})
    with pytest.raises(ge.Error, match="no input 'zz'"):
        m.interpret({"arg0": x, "arg1": b, "zz": b})
    with pytest.raises(ge.Error):
        m.interpret([x.astype(np.int32), b])
    with pytest.raises(ge.Error, match="no function"):
        m.interpret([x, b], func="nope")


def test_list_ops_matches_ge_opt(ge_opt):
    import subprocess

    out = subprocess.run([ge_opt, "--list-ops"], capture_output=True, text=True, check=True).stdout
    listed = {ln.split()[0] for ln in out.splitlines() if ln.startswith("  ") and ln.strip()}
    ours = {op for _, ops in ge.list_ops() for op in ops}
    assert ours == listed
    assert "canonicalize" in ge.list_passes()


def test_a_rust_panic_is_an_exception():
    from ge import _native

    with pytest.raises(ge.InternalError, match="internal error"):
        _native._panic_for_test()
    # The interpreter goes on.
    assert ge.parse(BLOCK).functions() == ["block"]
    assert issubclass(ge.InternalError, ge.Error)
