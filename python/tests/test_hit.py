"""The HIT reader: every piece of syntax, and every error with its line number."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from neml2 import hit
from neml2.errors import HitError, Neml2Error

PYTHON_TESTS = Path(__file__).resolve().parent

FULL = """\
# a comment at the top
E0 = 100        # a trailing comment
ratio = '0.3'
pair = '${E0} ${ratio}'

[Models]
  [elastic]
    type = LinearIsotropicElasticity
    coefficients = '${E0} 0.3'   # substituted inside quotes
    coefficient_types = "YOUNGS_MODULUS POISSONS_RATIO"
  []
  [./other]
    type = Other
    scale = ${E0}
    flag = on  verbose = NO
    note = 'a # kept in quotes'
    text = 'spans
            two lines'
    after = 1
  [../]
[]
[Top]
  [Nested]
    [Deeper]
      depth = 3
    []
  []
[]
"""


def test_blocks_params_and_order() -> None:
    root = hit.parse(FULL, "full.i")
    models = root.child("Models")
    assert models is not None
    assert list(models.children) == ["elastic", "other"]
    elastic = models.children["elastic"]
    assert elastic.line == 7
    assert elastic.full_name == "Models/elastic"
    assert elastic.string("type") == "LinearIsotropicElasticity"
    assert elastic.params["type"].line == 8
    deeper = root.children["Top"].children["Nested"].children["Deeper"]
    assert deeper.full_name == "Top/Nested/Deeper"
    assert deeper.integer("depth") == 3


def test_quotes_comments_and_substitution() -> None:
    root = hit.parse(FULL, "full.i")
    elastic = root.children["Models"].children["elastic"]
    other = root.children["Models"].children["other"]
    assert elastic.numbers("coefficients", count=2) == [100.0, 0.3]
    assert elastic.strings("coefficient_types") == ["YOUNGS_MODULUS", "POISSONS_RATIO"]
    assert elastic.params["coefficients"].quoted
    assert other.number("scale") == 100.0
    assert not other.params["scale"].quoted
    assert other.string("note") == "a # kept in quotes"
    assert other.strings("text") == ["spans", "two", "lines"]
    assert other.params["after"].line == 19
    assert root.string("pair") == "100 0.3"


def test_several_params_on_one_line_and_booleans() -> None:
    other = hit.parse(FULL, "full.i").children["Models"].children["other"]
    assert other.boolean("flag") is True
    assert other.boolean("verbose") is False


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1.0),
        ("-2", -2.0),
        ("1.0", 1.0),
        ("1.", 1.0),
        ("+3.25", 3.25),
        ("1e3", 1000.0),
        ("1.5E-2", 0.015),
        ("2e+2", 200.0),
        ("-.5", -0.5),
        (".5e1", 5.0),
    ],
)
def test_number_notations(text: str, value: float) -> None:
    section = hit.parse(f"x = {text}\ny = '{text} {text}'")
    assert section.number("x") == value
    assert section.numbers("y", count=2) == [value, value]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *[("true", True), ("on", True), ("yes", True), ("TRUE", True)],
        *[("false", False), ("off", False), ("no", False), ("Off", False)],
    ],
)
def test_booleans(text: str, value: bool) -> None:
    assert hit.parse(f"b = {text}").boolean("b") is value


def test_defaults_apply_only_to_missing_keys() -> None:
    section = hit.parse("a = 1")
    assert section.string("missing", "dflt") == "dflt"
    assert section.number("missing", 2.5) == 2.5
    assert section.numbers("missing", [1.0]) == [1.0]
    assert section.strings("missing", ["x"]) == ["x"]
    assert section.boolean("missing", True) is True
    assert section.integer("missing", 4) == 4
    assert section.number("a", 9.0) == 1.0


def test_variables_may_refer_to_variables() -> None:
    root = hit.parse("a = 2\nb = '${a} ${a}'\n[X]\n  v = '${b} 3'\n[]\n")
    assert root.children["X"].numbers("v") == [2.0, 2.0, 3.0]


def test_load_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "m.i"
    path.write_text("[A]\n  k = v\n[]\n")
    assert hit.load(path).children["A"].string("k") == "v"


def test_load_of_a_missing_file() -> None:
    with pytest.raises(Neml2Error, match=r"cannot read input file 'nope\.i'"):
        hit.load("nope.i")


def error_of(text: str) -> HitError:
    with pytest.raises(HitError) as info:
        hit.parse(text, "bad.i")
    return info.value


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("[A]\n  [B\n  []\n[]\n", 2, "unterminated block header: expected ']'"),
        ("[A]\n[a b]\n[]\n[]\n", 2, "invalid block header '[a b]'"),
        ("a = 1\n[]\n", 2, "unexpected '[]': no block is open"),
        ("[A]\n  [B]\n  []\n", 1, "block [A] is never closed: expected '[]'"),
        ("[A]\n  [B]\n    k = 1\n", 2, "block [A/B] is never closed"),
        ("[A]\n  [B]\n  []\n  [B]\n  []\n[]\n", 4, "block [B] is already defined at line 2"),
        ("[A]\n  k = 1\n[]\n[A]\n  k = 2\n[]\n", 5, "parameter 'k' is already set at line 2"),
        ("[A]\n  k = '''open\n[]\n", 2, "expected a closing '''"),
        ("[A]\n  k = 1\n  k = 2\n[]\n", 3, "parameter 'k' is already set at line 2"),
        ("[A]\n  k 1\n[]\n", 2, "expected '=' after parameter name 'k'"),
        ("[A]\n  k =\n[]\n", 2, "missing value for parameter 'k'"),
        ("[A]\n  k = # nothing\n[]\n", 2, "missing value for parameter 'k'"),
        (
            "[A]\n  k = 'open\n\n[]\n",
            2,
            "unterminated string for parameter 'k': expected a closing '",
        ),
        ('[A]\n  k = "open\n[]\n', 2, 'expected a closing "'),
        ("[A]\n  k = 'a'b\n[]\n", 2, "unexpected text after the closing '"),
        ("[A]\n  = 3\n[]\n", 2, "unexpected '=': expected a block header"),
        ("[A]\n  k = ${nope}\n[]\n", 2, "undefined variable 'nope' in '${nope}'"),
        (
            "v = 1\n[A]\n\n  k = '${fparse v*2}'\n[]\n",
            4,
            "unsupported substitution '${fparse v*2}'",
        ),
        ("a = ${b}\nb = ${a}\n", 2, "variable cycle: a -> b -> a"),
        ("a = 1\n[A]\n  k = '${a'\n[]\n", 3, "unterminated '${'"),
    ],
)
def test_syntax_errors(text: str, line: int, message: str) -> None:
    err = error_of(text)
    assert err.line == line
    assert err.path == "bad.i"
    assert message in err.message
    assert str(err).startswith(f"bad.i:{line}: ")


@pytest.mark.parametrize(
    ("call", "line", "message"),
    [
        (lambda s: s.number("x"), 3, "parameter 'x': expected a number, got '1x'"),
        (lambda s: s.numbers("xs"), 4, "parameter 'xs': expected a number, got 'two'"),
        (lambda s: s.numbers("ys", count=2), 5, "parameter 'ys': expected 2 values, got 3"),
        (
            lambda s: s.boolean("b"),
            6,
            "expected a boolean (true/false, on/off, yes/no), got 'maybe'",
        ),
        (lambda s: s.integer("i"), 7, "parameter 'i': expected an integer, got '1.5'"),
        (lambda s: s.string("absent"), 2, "[M/m]: missing required parameter 'absent'"),
    ],
)
def test_value_errors_point_at_the_value(
    call: Callable[[hit.Section], object], line: int, message: str
) -> None:
    text = (
        "[M]\n  [m]\n    x = 1x\n    xs = '1 two'\n    ys = '1 2 3'\n"
        "    b = maybe\n    i = 1.5\n  []\n[]\n"
    )
    section = hit.parse(text, "v.i").children["M"].children["m"]
    with pytest.raises(HitError) as info:
        call(section)
    assert (info.value.line, info.value.path) == (line, "v.i")
    assert message in info.value.message


NEML2_FLAVOURED = """\
# NEML2's own files: triple quotes, ~ in keys, [Models] twice, end-of-line comments
E = 1e5   # Young's modulus
[Models]
  [elastic]   # the first model
    type = LinearIsotropicElasticity   # a comment after a value
    coefficients = '${E} 0.3'
    coefficient_types = '''YOUNGS_MODULUS
                           POISSONS_RATIO'''
    note = '''it's "quoted" # not a comment'''
  []
[]
[EquationSystems]
  [eq]
    plastic_strain~1 = 'Ep~1'
  []
[]
[Models]
  [other]
    type = SR2LinearCombination
    from = "a b"   weights = '1 -1'
  []
[]
"""


def test_neml2_flavoured_syntax() -> None:
    root = hit.parse(NEML2_FLAVOURED, "n.i")
    models = root.children["Models"]
    assert list(models.children) == ["elastic", "other"]
    assert models.line == 3
    elastic = models.children["elastic"]
    assert elastic.strings("coefficient_types") == ["YOUNGS_MODULUS", "POISSONS_RATIO"]
    assert elastic.string("note") == 'it\'s "quoted" # not a comment'
    assert elastic.numbers("coefficients") == [1e5, 0.3]
    assert root.children["EquationSystems"].children["eq"].string("plastic_strain~1") == "Ep~1"
    other = models.children["other"]
    assert other.line == 18
    assert other.params["weights"].line == 20
    assert other.numbers("weights") == [1.0, -1.0]


def _our_tree(section: hit.Section) -> dict[str, str]:
    tree: dict[str, str] = {}
    for key, value in section.params.items():
        tree[f"{section.full_name}/{key}" if section.full_name else key] = value.text
    for child in section.children.values():
        tree.update(_our_tree(child))
    return tree


def _nmhit_tree(node: object, nmhit: object, tree: dict[str, str]) -> dict[str, str]:
    """Every field of an nmhit document, by full path, as nmhit reads its string value."""
    for child in node.children():  # type: ignore[attr-defined]
        kind = child.type()
        if kind == nmhit.NodeType.Field:  # type: ignore[attr-defined]
            path = child.fullpath()
            assert path not in tree, f"nmhit gives {path} twice"
            tree[path] = child.parent().param_str(child.path())
        elif kind == nmhit.NodeType.Section:  # type: ignore[attr-defined]
            _nmhit_tree(child, nmhit, tree)
    return tree


ORACLE_TEXTS = {
    "neml2_flavoured": NEML2_FLAVOURED.replace("${E}", "1e5"),
    # nmhit refuses a '#' inside single quotes and the old [./name] [../] spellings,
    # which HIT (and this reader) accept
    "full": FULL.replace("${E0}", "100")
    .replace("${ratio}", "0.3")
    .replace("    note = 'a # kept in quotes'\n", "")
    .replace("[./other]", "[other]")
    .replace("[../]", "[]"),
    "viscoplastic": (PYTHON_TESTS.parent.parent / "tests/aoti/viscoplastic/model.i").read_text(),
}


@pytest.mark.parametrize("name", sorted(ORACLE_TEXTS))
def test_agrees_with_nmhit(name: str, tmp_path: Path) -> None:
    """nmhit (PyPI), the parser NEML2 reads its files with, sees the same fields."""
    nmhit = pytest.importorskip("nmhit", reason="nmhit (PyPI) is not installed")
    path = tmp_path / f"{name}.i"
    path.write_text(ORACLE_TEXTS[name])
    theirs = _nmhit_tree(nmhit.parse_file(str(path)), nmhit, {})
    ours = _our_tree(hit.load(path))
    assert ours == theirs
    assert len(ours) > 3
