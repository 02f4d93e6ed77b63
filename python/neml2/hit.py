"""A reader for HIT input files: nested ``[block] ... []`` sections of ``key = value`` pairs.

Supported syntax: ``[name]`` / ``[./name]`` opens a block, ``[]`` / ``[../]`` closes it;
``key = value`` where the value is one unquoted word, a single- or double-quoted
string, or a triple-quoted ``'''...'''`` string (which may hold quotes; every
string may span lines); keys may hold ``~`` (NEML2's ``x~1``, the value of ``x`` at
the start of the step); ``#`` comments, to the end of any line; ``${name}``
substitution of variables set at the top level of the file. A top-level block that
appears twice (two ``[Models]``, as NEML2's own files write) is one block: its
second appearance adds to the first. Values are kept as text and converted on access
(:meth:`Section.number`, :meth:`Section.strings`, ...), so every conversion error
can point at the line of its value.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import HitError, Neml2Error

__all__ = ["HitError", "Section", "Value", "load", "parse"]

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.:~\-]*")
_BLOCK_NAME = re.compile(r"[A-Za-z0-9_.:~\-]+")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_SUBSTITUTION = re.compile(r"\$\{([^}]*)\}")
_TRUE = frozenset({"true", "on", "yes"})
_FALSE = frozenset({"false", "off", "no"})


class _Missing:
    """Marks an accessor call without a default: the key is then required."""


_MISSING = _Missing()


@dataclass
class Value:
    """The text of one parameter (quotes removed, variables substituted) and where it was set."""

    text: str
    line: int
    quoted: bool = False


@dataclass
class Section:
    """One ``[block]``: its parameters and sub-blocks, in file order."""

    name: str
    line: int
    path: str
    parent: Section | None = None
    params: dict[str, Value] = field(default_factory=dict)
    children: dict[str, Section] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        """``Models/model`` for a block ``[model]`` inside ``[Models]``; empty for the file root."""
        if self.parent is None or not self.parent.full_name:
            return self.name
        return f"{self.parent.full_name}/{self.name}"

    def error(self, key: str | None, message: str) -> HitError:
        """An error at the line of ``key`` (or of the block header when ``key`` is None)."""
        line = self.params[key].line if key is not None and key in self.params else self.line
        return HitError(self.path, line, message)

    def child(self, name: str) -> Section | None:
        return self.children.get(name)

    def get(self, key: str) -> Value:
        """The value of a required parameter."""
        if key not in self.params:
            raise self.error(None, f"[{self.full_name}]: missing required parameter '{key}'")
        return self.params[key]

    def string(self, key: str, default: str | _Missing = _MISSING) -> str:
        if key not in self.params and not isinstance(default, _Missing):
            return default
        return self.get(key).text

    def strings(
        self, key: str, default: list[str] | _Missing = _MISSING, count: int | None = None
    ) -> list[str]:
        """A whitespace-separated list, optionally of an exact length."""
        if key not in self.params and not isinstance(default, _Missing):
            return list(default)
        items = self.get(key).text.split()
        if count is not None and len(items) != count:
            raise self.error(key, f"parameter '{key}': expected {count} values, got {len(items)}")
        return items

    def number(self, key: str, default: float | _Missing = _MISSING) -> float:
        if key not in self.params and not isinstance(default, _Missing):
            return default
        return self._number(key, self.get(key).text)

    def numbers(
        self, key: str, default: list[float] | _Missing = _MISSING, count: int | None = None
    ) -> list[float]:
        if key not in self.params and not isinstance(default, _Missing):
            return list(default)
        return [self._number(key, item) for item in self.strings(key, count=count)]

    def integer(self, key: str, default: int | _Missing = _MISSING) -> int:
        if key not in self.params and not isinstance(default, _Missing):
            return default
        text = self.get(key).text.strip()
        if not _INTEGER.fullmatch(text):
            raise self.error(key, f"parameter '{key}': expected an integer, got '{text}'")
        return int(text)

    def boolean(self, key: str, default: bool | _Missing = _MISSING) -> bool:
        if key not in self.params and not isinstance(default, _Missing):
            return default
        text = self.get(key).text.strip()
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise self.error(
            key,
            f"parameter '{key}': expected a boolean (true/false, on/off, yes/no), got '{text}'",
        )

    def _number(self, key: str, text: str) -> float:
        if not _NUMBER.fullmatch(text.strip()):
            raise self.error(key, f"parameter '{key}': expected a number, got '{text}'")
        return self.finite(key, text.strip())

    def finite(self, key: str, word: str) -> float:
        """The number ``word`` of parameter ``key`` as a float64, refused when it is not
        finite: a literal such as ``1e400`` overflows to inf (NEML2 3.1.0 takes it as inf
        and computes inf or NaN with it), and ``inf``/``nan`` are no material constants."""
        value = float(word)
        if not math.isfinite(value):
            raise self.error(
                key,
                f"parameter '{key}': '{word}' is not a finite number "
                f"(a float64 value lies within +-{sys.float_info.max:.4g})",
            )
        return value


def load(path: str | Path) -> Section:
    """Parse a HIT file; the returned root section holds the top-level variables."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise Neml2Error(f"cannot read input file '{path}': {err.strerror}") from None
    except UnicodeDecodeError:
        raise Neml2Error(f"cannot read input file '{path}': not a text file") from None
    return parse(text, str(path))


def parse(text: str, path: str = "<string>") -> Section:
    """Parse HIT text; ``path`` only labels error messages."""
    root = Section(name="", line=1, path=path)
    stack = [root]
    for kind, line, name, value in _Lexer(text, path).tokens():
        top = stack[-1]
        if kind == "open":
            if top is root and name in top.children:
                # NEML2's files repeat top-level blocks: the second [Models] adds models
                stack.append(top.children[name])
                continue
            if name in top.children:
                first = top.children[name].line
                raise HitError(path, line, f"block [{name}] is already defined at line {first}")
            section = Section(name=name, line=line, path=path, parent=top)
            top.children[name] = section
            stack.append(section)
        elif kind == "close":
            if len(stack) == 1:
                raise HitError(path, line, "unexpected '[]': no block is open here")
            stack.pop()
        else:
            assert value is not None
            if name in top.params:
                first = top.params[name].line
                raise HitError(path, line, f"parameter '{name}' is already set at line {first}")
            top.params[name] = value
    if len(stack) > 1:
        section = stack[-1]
        raise HitError(
            path, section.line, f"block [{section.full_name}] is never closed: expected '[]'"
        )
    _substitute(root)
    return root


class _Lexer:
    """Splits HIT text into (kind, line, name, value) tokens; kind is open, close or param."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.pos = 0
        self.line = 1

    def tokens(self) -> Iterator[tuple[str, int, str, Value | None]]:
        while self._skip_blank():
            if self.text[self.pos] == "[":
                yield self._header()
            else:
                yield self._param()

    def _error(self, message: str, line: int | None = None) -> HitError:
        return HitError(self.path, self.line if line is None else line, message)

    def _skip_blank(self) -> bool:
        """Skip whitespace and comments; False at the end of the text."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char == "\n":
                self.line += 1
                self.pos += 1
            elif char.isspace():
                self.pos += 1
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            else:
                return True
        return False

    def _skip_inline_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r":
            self.pos += 1

    def _header(self) -> tuple[str, int, str, Value | None]:
        text = self.text
        end = text.find("]", self.pos)
        newline = text.find("\n", self.pos)
        if end < 0 or 0 <= newline < end:
            raise self._error("unterminated block header: expected ']' on the same line")
        header = text[self.pos + 1 : end].strip()
        self.pos = end + 1
        if header in ("", "../"):
            return ("close", self.line, "", None)
        name = header[2:] if header.startswith("./") else header
        if not _BLOCK_NAME.fullmatch(name):
            raise self._error(
                f"invalid block header '[{header}]': expected [name], [./name], [] or [../]"
            )
        return ("open", self.line, name, None)

    def _param(self) -> tuple[str, int, str, Value | None]:
        text = self.text
        match = _KEY.match(text, self.pos)
        if match is None:
            word = text[self.pos :].split(None, 1)[0]
            raise self._error(
                f"unexpected '{word}': expected a block header '[name]', "
                "a parameter 'key = value' or a comment"
            )
        key = match.group()
        self.pos = match.end()
        self._skip_inline_space()
        if self.pos >= len(text) or text[self.pos] != "=":
            raise self._error(f"expected '=' after parameter name '{key}'")
        self.pos += 1
        self._skip_inline_space()
        line = self.line
        if self.pos >= len(text) or text[self.pos] in "\n#":
            raise self._error(f"missing value for parameter '{key}': expected a value after '='")
        if text.startswith("'''", self.pos):
            end = text.find("'''", self.pos + 3)
            if end < 0:
                raise self._error(
                    f"unterminated string for parameter '{key}': expected a closing '''"
                )
            body = text[self.pos + 3 : end]
            self.line += body.count("\n")
            self.pos = end + 3
            if self.pos < len(text) and not (text[self.pos].isspace() or text[self.pos] == "#"):
                raise self._error(f"unexpected text after the closing ''' of parameter '{key}'")
            return ("param", line, key, Value(body, line, quoted=True))
        quote = text[self.pos]
        if quote in "'\"":
            end = text.find(quote, self.pos + 1)
            if end < 0:
                raise self._error(
                    f"unterminated string for parameter '{key}': expected a closing {quote}"
                )
            body = text[self.pos + 1 : end]
            self.line += body.count("\n")
            self.pos = end + 1
            if self.pos < len(text) and not (text[self.pos].isspace() or text[self.pos] == "#"):
                raise self._error(f"unexpected text after the closing {quote} of parameter '{key}'")
            return ("param", line, key, Value(body, line, quoted=True))
        start = self.pos
        while self.pos < len(text) and not (text[self.pos].isspace() or text[self.pos] == "#"):
            self.pos += 1
        return ("param", line, key, Value(text[start : self.pos], line))


def _walk(section: Section) -> Iterator[Section]:
    yield section
    for child in section.children.values():
        yield from _walk(child)


def _substitute(root: Section) -> None:
    """Replace every ``${name}`` by the value of the top-level variable ``name``."""
    variables = root.params
    resolved: dict[str, str] = {}

    def expand(value: Value, visiting: tuple[str, ...]) -> str:
        def replace(match: re.Match[str]) -> str:
            name = match.group(1).strip()
            if not _KEY.fullmatch(name):
                raise HitError(
                    root.path,
                    value.line,
                    f"unsupported substitution '{match.group()}': expected ${{name}} "
                    "naming a top-level variable",
                )
            if name not in variables:
                known = ", ".join(variables) or "none"
                raise HitError(
                    root.path,
                    value.line,
                    f"undefined variable '{name}' in '{match.group()}': "
                    f"top-level variables are: {known}",
                )
            if name in visiting:
                chain = " -> ".join((*visiting, name))
                raise HitError(root.path, value.line, f"variable cycle: {chain}")
            if name not in resolved:
                resolved[name] = expand(variables[name], (*visiting, name))
            return resolved[name]

        text = _SUBSTITUTION.sub(replace, value.text)
        if "${" in text:
            raise HitError(
                root.path, value.line, f"unterminated '${{' in '{value.text}': expected '}}'"
            )
        return text

    # a top-level variable starts its own chain, so a cycle reads from where it starts
    expanded = {
        id(value): expand(value, (key,) if section is root else ())
        for section in _walk(root)
        for key, value in section.params.items()
    }
    for section in _walk(root):
        for value in section.params.values():
            value.text = expanded[id(value)]
