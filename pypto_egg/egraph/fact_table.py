"""The encoder's all-integer fact relations, stored in egglog as one table.

The rules read `(ConsRow i h t)`, `(StmtVarRow s v)` and the like, each declared on its own in rules/encode.egg,
and that is how every reader of the rules sees them: relevance, the schedule's strata, explain. egglog, though,
charges each table it holds on every program: an `(input ...)` command with its flush, a reset rule, a visit by
every rebuild and by the view's freeze. A real program fills about twenty of these relations with a handful of
rows each, so they are stored as one relation, `Fact`, whose first column names the relation and whose other
columns hold its cells, padded with 0 to the widest. The text handed to egglog is rewritten on its way in (an atom
`(ConsRow i h t)` becomes `(Fact "ConsRow" i h t 0 .. 0)`, a packed relation's own declaration goes), and the view
unpacks `Fact` rows into the relations they came from.

A relation a shipped rule writes too (transpose.egg states a `BmmBaseRow` for a legacy operand) keeps a table of its
own: the host reads a packed relation's rows from the encoding that wrote them. A user's rule may still write one;
its atoms are rewritten like any other, and the host then reads the relation from the e-graph.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..errors import InternalError, RuleError
from .shipped import SELF_CHECKS, rules_dir

FACT_TABLE = "Fact"
_RELATION = re.compile(r"^\(relation\s+(\w+Row)\s+\(([^()]*)\)\)", re.MULTILINE)


@functools.cache
def packed_relations() -> dict[str, int]:
    """The `...Row` relations of rules/encode.egg whose every column is an integer and which only the encoder
    states (no shipped rule's actions write them), with their column counts: those the `Fact` table stores."""
    text = (rules_dir() / "encode.egg").read_text().partition(SELF_CHECKS)[0]
    written = set().union(
        *(_written(f.read_text().partition(SELF_CHECKS)[0]) for f in rules_dir().glob("*.egg"))
    )
    out = {}
    for m in _RELATION.finditer(text):
        columns = m.group(2).split()
        if all(c == "i64" for c in columns) and m.group(1) not in written:
            out[m.group(1)] = len(columns)
    declared = re.search(rf"^\(relation\s+{FACT_TABLE}\s+\(([^()]*)\)\)", text, re.MULTILINE)
    wanted = ["String"] + ["i64"] * max(out.values())
    if declared is None or declared.group(1).split() != wanted:
        raise InternalError(f"rules/encode.egg must declare (relation {FACT_TABLE} ({' '.join(wanted)}))")
    return out


def _written(text: str) -> set[str]:
    """The names at the head of a list inside a rule's actions (the tables it writes, and the constructors and
    functions it calls)."""
    out: set[str] = set()
    stack: list[_Open] = []
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok[0] == ";":
            continue
        if tok == "(":
            acts = False
            if stack:
                parent = stack[-1]
                parent.elements += 1
                # a rule's third element is its actions, and everything inside them is too
                acts = parent.actions or (len(stack) == 1 and parent.head == "rule" and parent.elements == 3)
            stack.append(_Open(m.start(), actions=acts))
        elif tok == ")":
            if stack:
                stack.pop()
        elif stack:
            top = stack[-1]
            top.elements += 1
            if top.elements == 1:
                top.head = tok
                if top.actions:
                    out.add(tok)
    return out


@functools.cache
def width() -> int:
    """The cells of a `Fact` row after its relation's name: the widest packed relation's."""
    return max(packed_relations().values())


# the tokens that matter to the rewrite: parentheses, strings and comments (which may hold anything) and names
_TOKENS = re.compile(r'[()]|"(?:[^"\\]|\\.)*"|;[^\n]*|[^\s();"]+')


@dataclass
class _Open:
    """A list being read: where it opens, how many elements it has so far, its packed head, whether it declares a
    packed relation."""

    start: int
    elements: int = 0
    head: str | None = None
    declares: bool = False
    actions: bool = False  # (in a rule's actions)


def stored(text: str) -> str:
    """egglog text as egglog is to run it: every atom of a packed relation an atom of `Fact`, every packed
    relation's declaration blank lines (so positions in the text stay the same lines)."""
    packed = packed_relations()
    if not any(name in text for name in packed):
        return text
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), in the order of the text
    stack: list[_Open] = []
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok[0] == ";":
            continue
        if tok == "(":
            if stack:
                stack[-1].elements += 1
            stack.append(_Open(m.start()))
        elif tok == ")":
            if not stack:
                raise RuleError("unbalanced ')' in rule text")
            lst = stack.pop()
            if lst.declares:
                while edits and edits[-1][0] >= lst.start:  # (the name's own edit)
                    edits.pop()
                span = text[lst.start : m.end()]
                edits.append((lst.start, m.end(), "\n" * span.count("\n")))
            elif lst.head is not None:
                arity = packed[lst.head]
                if lst.elements - 1 != arity:
                    raise RuleError(
                        f"({lst.head} ...) takes {arity} columns, not {lst.elements - 1}: {text[lst.start : m.end()]}"
                    )
                edits.append((m.start(), m.start(), " 0" * (width() - arity)))
        elif stack:
            top = stack[-1]
            top.elements += 1
            if top.elements == 1 and tok in packed:
                top.head = tok  # (only a packed head: the list is rewritten)
                edits.append((m.start(), m.end(), f'{FACT_TABLE} "{tok}"'))
            elif (
                top.elements == 2
                and tok in packed
                and text[top.start + 1 : m.start()].split() == ["relation"]
            ):
                top.declares = True
    out, at = [], 0
    for start, end, new in sorted(edits):
        out += [text[at:start], new]
        at = end
    return "".join(out) + text[at:]
