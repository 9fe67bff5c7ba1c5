"""One request for the statements that ask the e-graph the same question.

The rules tell statements apart only by the rows that name them. A statement whose request row is an earlier
statement's but for the id, and that no other row a loaded rule reads names, would get the same plans as that one:
its row is not written, and it takes the earlier statement's plans (`Encoding.request`). A kernel's repeated
element-wise ops on one shape, or many kernels of a few shapes, then cost the e-graph one request per question.
"""

from __future__ import annotations

from typing import Any

from ...rules.schema import declared
from ..encode import Encoding
from ..rules import fact_relations

# a statement's request: the one row the rules read it by, its statement id first
REQUEST_RELATIONS = (
    "LoadRow",
    "StoreRow",
    "AllocRow",
    "AssembleRow",
    "ReshapeRow",
    "TransposeRow",
    "GenericRow",
)
# the other relations the encoder writes, each with the columns of its rows that hold a statement id (none: ()):
# the fields its declaration names `stmt` or `<something>_stmt` (rules/schema.py)
STATEMENT_COLUMNS: dict[str, tuple[int, ...]] = {
    name: declared(name).statement_columns for name in fact_relations() if name not in REQUEST_RELATIONS
}


def share_requests(enc: Encoding, read: frozenset[str] | None) -> None:
    """Drop the request rows of the statements that ask what an earlier one asks and that no row of a relation in
    `read` (None: any) names but their request, recording each in `enc.shared`. Run before the facts are
    written, with the relations the loaded rules read."""
    named: set[int] = set()
    for rel, columns in STATEMENT_COLUMNS.items():
        if columns and (read is None or rel in read):
            for r in enc.rows.get(rel, ()):
                named.update([r[c] for c in columns])
    for rel in REQUEST_RELATIONS:
        rows = enc.rows.get(rel)
        if not rows or len(rows) < 2:
            continue
        first: dict[tuple[Any, ...], int] = {}
        kept = []
        for r in rows:
            if r[0] in named:
                kept.append(r)
                continue
            asked = first.setdefault(r[1:], r[0])
            if asked == r[0]:
                kept.append(r)
            else:
                enc.shared[r[0]] = asked
        enc.rows[rel] = kept
