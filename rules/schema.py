"""The fields of the relations, functions and plans the rule files declare, read from the declarations themselves.

A declaration names its fields in the comment that follows it on its line, as a parenthesised list:

    (relation BmmBaseRow (i64 i64 i64))      ; (stmt side load_stmt): batched matmul id, side, its operand's load

That list is the one place a layout is written. The encoder writes rows, the lowering and explain read them, and
request sharing finds the columns that name statements (a field `stmt`, or one ending in `_stmt`), all by these
names; docs/rules.md lists them from here (a test keeps the two in step).
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
_DECLARATION = re.compile(
    r"^\((relation|function|constructor)\s+([\w-]+)\s+\(([^()]*)\)\s*([\w-]*)[^;\n]*(?:;\s*\(([\w ]*)\))?",
    re.M,
)


@dataclass(frozen=True)
class Declared:
    """One declaration: its kind, its column sorts and their field names (a function's value is not a field)."""

    name: str
    kind: str  # relation | function | constructor
    sorts: tuple[str, ...]
    fields: tuple[str, ...] | None  # None: the declaration names none
    output: str  # a constructor's sort, a function's value sort, "" for a relation
    file: str
    line: int

    def index(self, field: str) -> int:
        """The column of a field (KeyError naming the declaration when it has no such field)."""
        if self.fields is None or field not in self.fields:
            raise KeyError(f"{self.name} ({self.file}:{self.line}) declares no field {field!r}")
        return self.fields.index(field)

    @property
    def statement_columns(self) -> tuple[int, ...]:
        """The columns that hold a statement id: the fields named `stmt` or `<something>_stmt`."""
        return tuple(i for i, f in enumerate(self.fields or ()) if f == "stmt" or f.endswith("_stmt"))


def _declarations(folder: Path) -> Iterator[Declared]:
    for path in sorted(folder.glob("*.egg")):
        text = path.read_text()
        for m in _DECLARATION.finditer(text):
            kind, name, sorts, output, fields = m.groups()
            yield Declared(
                name,
                kind,
                tuple(sorts.split()),
                tuple(fields.split()) if fields is not None else None,
                output if kind != "relation" else "",
                path.name,
                text.count("\n", 0, m.start()) + 1,
            )


@functools.cache
def schema(folder: Path = HERE) -> dict[str, Declared]:
    """Every declaration of the rule files of `folder` (the shipped rules by default), by name."""
    return {d.name: d for d in _declarations(folder)}


def declared(name: str) -> Declared:
    found = schema().get(name)
    if found is None:
        raise KeyError(f"no shipped rule file declares {name}")
    return found


@functools.cache
def row_type(name: str) -> type[Any]:
    """A named tuple of the declaration's fields: rows built or read as `row_type("BPage")(stmt=3, page=0, ...)`
    and `row.page`. (Rows are plain tuples underneath: the encoder's files and egglog see no difference.)"""
    d = declared(name)
    if d.fields is None:
        raise KeyError(
            f"{name} ({d.file}:{d.line}) names no fields: add them after its declaration, '; (a b c)'"
        )
    return NamedTuple(name, [(f, Any) for f in d.fields])  # type: ignore[misc]


def rows(name: str, found: list[tuple[Any, ...]]) -> list[Any]:
    """`found`, a relation's rows, as its named tuples."""
    make = row_type(name)._make
    return [make(r) for r in found]


def field(name: str, values: tuple[Any, ...], which: str) -> Any:
    """One field of a row or a plan term's arguments, by name."""
    return values[declared(name).index(which)]


def _maker(d: Declared) -> Any:
    """A function that takes the declaration's fields (by name or in order) and returns the row, a plain tuple:
    about 40 ns more a row than writing the tuple out, and the layout is written once."""
    fields = d.fields or ()
    bad = [f for f in fields if not f.isidentifier() or keyword.iskeyword(f)]
    if bad:
        raise ValueError(f"{d.name} ({d.file}:{d.line}): a field must be a name, not {bad}")
    names = ", ".join(
        fields
    )  # (identifiers the declaration's own pattern admits: the text builds a function)
    return eval(f"lambda {names}: ({names}{',' if len(fields) == 1 else ''})")


class _Rows:
    """`ROW.ConsRow(dims=..., head=..., tail=...)`: a row of each relation the rule files declare fields for."""

    def __init__(self) -> None:
        for d in schema().values():
            if d.kind == "relation" and d.fields is not None:
                setattr(self, d.name, _maker(d))

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"no shipped rule file declares the fields of a relation {name}")


ROW = _Rows()


def fields_table() -> str:
    """The markdown table docs/rules.md lists the declared fields in (a test keeps the two the same)."""
    lines = ["| declared | kind | fields | file |", "|---|---|---|---|"]
    for d in sorted(schema().values(), key=lambda d: (d.file, d.line)):
        if d.fields is not None:
            lines.append(f"| `{d.name}` | {d.kind} | {' '.join(d.fields) or '—'} | `{d.file}` |")
    return "\n".join(lines) + "\n"
