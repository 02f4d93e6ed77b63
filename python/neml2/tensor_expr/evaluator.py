"""Checking and evaluating the code of a tensor expression: the errors it raises, the
syntax-tree check that refuses what reaches outside the tensor namespace, and
:func:`evaluate`."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from typing import Any

from ..errors import Neml2Error
from .namespace import ALLOWED_ATTRIBUTES, FORBIDDEN_NAMES, SAFE_BUILTINS, _torch_internal_import


class ExprError(Exception):
    """An expression could not be evaluated; ``line`` is its line within the code (1-based)."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class ExprRefused(ExprError):
    """The expression reaches outside the tensor namespace; refused before evaluation."""


_REFUSED_NODES: dict[type[ast.AST], str] = {
    ast.Import: "an import",
    ast.ImportFrom: "an import",
    ast.Lambda: "a lambda",
    ast.FunctionDef: "a function definition",
    ast.AsyncFunctionDef: "a function definition",
    ast.ClassDef: "a class definition",
    ast.Global: "a global statement",
    ast.Nonlocal: "a nonlocal statement",
    ast.With: "a with statement",
    ast.AsyncWith: "a with statement",
    ast.AsyncFor: "an async loop",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Raise: "raise",
    ast.Try: "try",
    ast.Delete: "del",
    ast.JoinedStr: "an f-string",
}


def dedent_code(code: str) -> str:
    """The code of an ``expr`` option without the indentation the input file gave it; the
    line count is kept, so line ``n`` of the result is line ``n`` of the option."""
    lines = code.split("\n")
    first, rest = lines[0].strip(), "\n".join(lines[1:])
    return "\n".join([first, textwrap.dedent(rest)]) if len(lines) > 1 else first


def _bound_names(tree: ast.AST) -> set[str]:
    """Names the code itself assigns (statements, comprehension and loop targets)."""
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))
    }


def check_code(tree: ast.AST, known: Iterable[str]) -> None:
    """Refuse code that reaches outside the tensor namespace or names an unknown name;
    ``known`` are the names the namespace will hold."""
    known_set = set(known) | set(SAFE_BUILTINS) | _bound_names(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 1)
        kind = _REFUSED_NODES.get(type(node))
        if kind is not None:
            raise ExprRefused(f"expression reaches outside the tensor namespace: {kind}", line)
        if isinstance(node, ast.Attribute):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                raise ExprRefused(
                    "expression reaches outside the tensor namespace: assignment to "
                    f"attribute '{node.attr}'",
                    line,
                )
            if node.attr.startswith("_"):
                raise ExprRefused(
                    f"expression reaches outside the tensor namespace: attribute '{node.attr}'",
                    line,
                )
            if node.attr not in ALLOWED_ATTRIBUTES:
                raise ExprRefused(
                    "expression reaches outside the tensor namespace: attribute "
                    f"'{node.attr}' is not one of the tensor methods expressions may use",
                    line,
                )
        elif isinstance(node, ast.Name):
            if node.id.startswith("_") or node.id in FORBIDDEN_NAMES:
                raise ExprRefused(
                    f"expression reaches outside the tensor namespace: '{node.id}'", line
                )
            if isinstance(node.ctx, ast.Load) and node.id not in known_set:
                names = ", ".join(sorted(set(known) | set(SAFE_BUILTINS) - {"True", "False"}))
                raise ExprError(f"unknown name '{node.id}'; known names: {names}", line)


def evaluate(code: str, namespace: dict[str, Any], lazy_names: Iterable[str] = ()) -> Any:
    """Evaluate the (dedented) code of an ``expr`` option: a single expression, or
    statements that assign ``result``. ``namespace`` maps the names it may use;
    ``lazy_names`` are more names that its ``__missing__`` supplies when asked (the
    file's other [Tensors] blocks).

    Raises :class:`ExprRefused` or :class:`ExprError` with the line within the code.
    """
    try:
        tree: ast.AST = ast.parse(code, mode="eval")
        mode = "eval"
    except SyntaxError:
        try:
            tree = ast.parse(code, mode="exec")
        except SyntaxError as err:
            raise ExprError(f"invalid Python: {err.msg}", err.lineno or 1) from None
        mode = "exec"
    check_code(tree, {*namespace, *lazy_names})
    if mode == "exec" and "result" not in _bound_names(tree):
        raise ExprError("a block of statements must assign its value to 'result'")
    scope = namespace
    scope["__builtins__"] = {**SAFE_BUILTINS, "__import__": _torch_internal_import}
    compiled = compile(tree, "<expr>", mode)  # type: ignore[call-overload]
    try:
        if mode == "eval":
            return eval(compiled, scope)
        exec(compiled, scope)
    except (ExprError, Neml2Error):
        raise
    except RecursionError:
        raise ExprError("expression recursed too deeply") from None
    except Exception as err:
        raise ExprError(f"{type(err).__name__}: {err}", _traceback_line(err)) from None
    if "result" not in scope:
        raise ExprError("a block of statements must assign its value to 'result'")
    return scope["result"]


def _traceback_line(err: BaseException) -> int:
    """The line of the expression where ``err`` was raised (1 when unknown)."""
    tb, line = err.__traceback__, 1
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<expr>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
