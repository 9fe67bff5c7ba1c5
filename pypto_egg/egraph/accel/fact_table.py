"""The encoder's fact relations, the rules' relations of integers and their flags, stored in egglog as a few
shared tables.

The rules read `(ConsRow i h t)`, `(LoadRow s v ...)` and the like, each declared on its own in rules/encode.egg,
and that is how every reader of the rules sees them: relevance, the schedule's strata, explain. egglog, though,
charges each table it holds on every program: an `(input ...)` command with its flush, a reset rule, a visit by
every rebuild and by the view's freeze. A real program fills about twenty of these relations with a handful of
rows each, so they are stored as two relations, `Fact` for those of integers alone and `TextFact` for those with a
string column too: a row is the relation's name, its integers, 0s up to the table's widest, then its strings, ""
the padding. The text handed to egglog is rewritten on its way in (an atom `(ConsRow i h t)` becomes
`(Fact "ConsRow" i h t 0 .. 0)`, a packed relation's own declaration goes), and the view reads the tables' rows
back as the relations they came from; the host reads those no rule writes from the encoding that wrote them.

The relations of integers alone that the rules derive (`BPage`, `Route`, `StaysND`, ..., and `BmmBase`, which
operands.egg and transpose.egg state) are stored the same way, as
`Derived`, and so are the rules' true/false flags (a function to bool merged by `or`: `MatLoad`,
`Listed`, `NonContig`, ...), one table a key (`Flags` for an id, `ListFlags` for a list, `PairFlags` for two), the
flag's name the first key: `(MatLoad s)` becomes `(Flags "MatLoad" s)`. The loop-carry repair's own e-graph
(narrow.egg) keeps its tables; so does a relation with a float column.

The rule files never name these tables: they are this layer's, declared by `TABLES_FILE`, which the accelerated
runner loads right after rules/sorts.egg (plain egglog and the core runner hold each relation as declared).

A user's rules are rewritten like the shipped ones; a packed relation one of them writes is read from the e-graph.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...errors import RuleError
from ..sexp import forms
from ..shipped import SELF_CHECKS, accel_rules_dir, rules_dir

FACT_TABLE = "Fact"  # the relations of integers
TEXT_TABLE = "TextFact"  # those with a string column too
DERIVED_TABLE = "Derived"  # the rules' own relations of integers
TABLES = (FACT_TABLE, TEXT_TABLE, DERIVED_TABLE)
_RELATION = re.compile(r"^\(relation\s+(\w+)\s+\(([^()]*)\)\)", re.MULTILINE)
_FLAG = re.compile(r"^\(function\s+(\w+)\s+\(([^()]*)\)\s+bool\s+:merge\s+\(or old new\)\)", re.MULTILINE)
# the flag tables, each by the key it takes after a flag's name
FLAG_KEYS = {"Flags": ("i64",), "ListFlags": ("Dims",), "PairFlags": ("Dims", "Dims")}
FLAG_TABLES = tuple(FLAG_KEYS)
_PAD = {"i64": "0", "String": '""'}  # the cells a row leaves over in its table


@dataclass(frozen=True)
class Stored:
    """Where egglog holds a packed relation's rows: its table, and for each of the relation's columns its sort and
    its place among the table's cells (after the relation's name). A packed flag's columns are its key, and its
    table's value is its value."""

    table: str
    sorts: tuple[str, ...]
    places: tuple[int, ...]
    value: str | None = None  # a flag's sort of value ("bool"); None for a relation


@dataclass(frozen=True)
class Layout:
    """Every packed relation's place, and each table's cells after the name: its integers, then its strings."""

    relations: dict[str, Stored]
    cells: dict[str, tuple[str, ...]]

    def pads(self, relation: str) -> tuple[str, ...]:
        """The relation's row in its table, as a template: "{j}" where its column j goes, the padding elsewhere."""
        stored = self.relations[relation]
        placed = {place: f"{{{j}}}" for j, place in enumerate(stored.places)}
        return tuple(placed.get(i) or _PAD[sort] for i, sort in enumerate(self.cells[stored.table]))


@functools.cache
def layout() -> Layout:
    """Where each packed relation goes, read from the shipped rule files: the `...Row` relations of rules/encode.egg
    of integers and strings that no shipped rule writes (`Fact`, or `TextFact` with a string column), the other
    relations of integers alone (`Derived`), each table as wide as its widest relation needs, and the flags by
    their key (`_flags`). narrow.egg runs in an e-graph of its own and keeps its tables."""
    texts = {f.name: f.read_text().partition(SELF_CHECKS)[0] for f in sorted(rules_dir().glob("*.egg"))}
    gates = accel_rules_dir() / "gates.egg"  # the acceleration's own flags (Listed, Counted, Bcasted)
    texts[gates.name] = gates.read_text().partition(SELF_CHECKS)[0]
    written = set().union(*map(_written, texts.values()))
    del texts["narrow.egg"]
    declared = {m.group(1): tuple(m.group(2).split()) for m in _RELATION.finditer(texts["encode.egg"])}
    members: dict[str, dict[str, tuple[str, ...]]] = {t: {} for t in TABLES}
    for name, sorts in declared.items():
        if name.endswith("Row") and name not in written and set(sorts) <= set(_PAD):
            members[FACT_TABLE if set(sorts) == {"i64"} else TEXT_TABLE][name] = sorts
    for text in texts.values():
        for m in _RELATION.finditer(text):
            name, sorts = m.group(1), tuple(m.group(2).split())
            declared.setdefault(name, sorts)
            if sorts and set(sorts) == {"i64"} and name not in TABLES and name not in members[FACT_TABLE]:
                members[DERIVED_TABLE][name] = sorts
    relations: dict[str, Stored] = {}
    cells: dict[str, tuple[str, ...]] = {}
    for table, rels in members.items():
        ints = max((s.count("i64") for s in rels.values()), default=0)
        strings = max((s.count("String") for s in rels.values()), default=0)
        cells[table] = ("i64",) * ints + ("String",) * strings
        for name, sorts in rels.items():
            ranks = [sorts[:j].count(sort) for j, sort in enumerate(sorts)]
            places = tuple(r if sort == "i64" else ints + r for sort, r in zip(sorts, ranks))
            relations[name] = Stored(table, sorts, places)
    for name, (table, key) in _flags(texts.values()).items():
        relations[name] = Stored(table, key, tuple(range(len(key))), "bool")
        cells[table] = key
    return Layout(relations, cells)


def _flags(texts: Iterable[str]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each flag of these files whose key a flag table takes: that table, and the key's sorts."""
    declared = {m.group(1): tuple(m.group(2).split()) for text in texts for m in _FLAG.finditer(text)}
    tables = {key: table for table, key in FLAG_KEYS.items()}
    return {name: (tables[key], key) for name, key in declared.items() if key in tables}


def table_declarations() -> str:
    """The tables' declarations, as egglog reads them: each relation table a name then its cells, each flag table
    a name then its key."""
    cells = layout().cells
    lines = [f"(relation {t} (String {' '.join(cells[t])}))" for t in TABLES]
    lines += [f"(function {t} (String {' '.join(k)}) bool :merge (or old new))" for t, k in FLAG_KEYS.items()]
    return "\n".join(lines) + "\n"


def packed_relations() -> dict[str, Stored]:
    """The relations egglog holds in the fact tables, and where."""
    return layout().relations


# the tokens that matter to the rewrite: parentheses, strings and comments (which may hold anything) and names
_TOKENS = re.compile(r'[()]|"(?:[^"\\]|\\.)*"|;[^\n]*|[^\s();"]+')


@dataclass
class _Open:
    """A list being read: where it opens, and its elements so far (where each is, and its text as egglog is to read
    it)."""

    start: int
    elements: list[tuple[int, int, str]] = field(default_factory=list)

    @property
    def head(self) -> str | None:
        return self.elements[0][2] if self.elements else None


def stored(text: str) -> str:
    """egglog text as egglog is to run it: every atom of a packed relation an atom of its table, every packed
    relation's declaration blank lines (positions in the text stay on the same lines)."""
    packed = packed_relations()
    if not any(name in text for name in packed):
        return text
    out: list[str] = []
    at = 0  # how far the top level's text is copied
    stack: list[_Open] = []
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok[0] == ";":
            continue
        if tok == "(":
            stack.append(_Open(m.start()))
        elif tok != ")":
            if stack:
                stack[-1].elements.append((m.start(), m.end(), tok))
        elif not stack:
            raise RuleError("unbalanced ')' in rule text")
        else:
            lst = stack.pop()
            new = _rewritten(text, lst, m.end(), packed)
            if stack:
                stack[-1].elements.append((lst.start, m.end(), new))
            else:
                out += [text[at : lst.start], new]
                at = m.end()
    return "".join(out) + text[at:]


def _rewritten(text: str, lst: _Open, end: int, packed: dict[str, Stored]) -> str:
    """A closed list's text as egglog is to read it (its elements already rewritten)."""
    elements = lst.elements
    head = lst.head
    original = text[lst.start : end]
    if head in ("relation", "function") and len(elements) > 1 and elements[1][2] in packed:
        return "\n" * original.count("\n")  # (the table declares it)
    if head in packed:
        stored = packed[head]
        args = [e[2] for e in elements[1:]]
        if len(args) != len(stored.sorts):
            raise RuleError(f"({head} ...) takes {len(stored.sorts)} columns, not {len(args)}: {original}")
        cells = " ".join(layout().pads(head)).format(*args)
        new = f'({stored.table} "{head}" {cells})'
        return new[:-1] + "\n" * (original.count("\n") - new.count("\n")) + ")"
    # any other list: its own text, with the elements' new texts
    pieces, at = ["("], lst.start + 1
    for start, stop, new in elements:
        pieces += [text[at:start], new]
        at = stop
    pieces.append(text[at:end])
    return "".join(pieces)


def _written(text: str) -> set[str]:
    """The names at the head of a list inside a rule's actions (the tables it writes, and the constructors and
    functions it calls)."""
    out: set[str] = set()
    todo = [
        f.tree[2] for f in forms(text) if isinstance(f.tree, list) and len(f.tree) > 2 and f.tree[0] == "rule"
    ]
    while todo:
        tree = todo.pop()
        if isinstance(tree, list):
            if tree and isinstance(tree[0], str):
                out.add(tree[0])
            todo.extend(tree)
    return out
