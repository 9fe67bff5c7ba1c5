"""The focused view of one statement's decision, drawn as a small SVG: its request with each field named, the
facts its rules read, its plans (the chosen one marked, each with the rule that holds it, the others with why they
lost) and the dimension terms the plans name, written as the DSL writes them. Each part is a cluster; a term two
plans share is one node. No internal constructor appears: every text comes from explain's reading."""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass, field

from .decisions import RuleRef, StatementExplanation

WRAP = 46  # characters a line of a node's text
LINE = 15  # pixels a line
WIDTH = 330  # pixels a node
GAP = 14  # pixels between nodes of a column
COLUMN = WIDTH + 70  # pixels from a column to the next


@dataclass
class _Node:
    key: str
    title: str
    lines: list[str]
    chosen: bool = False
    x: int = 0
    y: int = 0
    edges: list[tuple[str, str]] = field(default_factory=list)  # (target key, label)

    @property
    def height(self) -> int:
        return LINE * (len(self.lines) + 1) + 10


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, WRAP) or [""]


def _rule_line(r: RuleRef) -> str:
    tags = f" [{', '.join(r.behaviours)}]" if r.behaviours else ""
    where = f"first matched in {r.first}" if r.first else r.stage.split(" (")[0]
    return f"rule {r.name} ({r.file}:{r.line}){tags}, {where}"


def focus_nodes(s: StatementExplanation) -> list[list[_Node]]:
    """The view's columns: the request and the facts, the plans, the dimension terms."""
    request = _Node("request", f"request: {s.request.get('request', '?')}", [
        line for k, v in s.request.items() if k != "request" for line in _wrap(f"{k} = {v}")
    ])  # fmt: skip
    sources = s.fact_sources or [[] for _ in s.facts]
    facts = [_Node(f"fact-{i}", "fact", [*_wrap(f), *(x for r in by[:2] for x in _wrap(f"derived by {r}"))])
             for i, (f, by) in enumerate(zip(s.facts, sources))]  # fmt: skip
    plans = [_Node("plan-chosen", "chosen plan", [*_wrap(s.plan), *(x for r in s.rules for x in _wrap(_rule_line(r)))],
                   chosen=True)]  # fmt: skip
    for i, a in enumerate(s.alternatives):
        lines = [
            *_wrap(a.plan),
            *(x for r in a.rules for x in _wrap(_rule_line(r))),
            *_wrap(f"lost: {a.lost_because}"),
        ]
        plans.append(_Node(f"plan-{i}", "also held", lines))
    values: dict[str, _Node] = {}
    for node, fields in [(plans[0], s.fields), *zip(plans[1:], (a.fields for a in s.alternatives))]:
        for name, value in fields.items():
            if value.startswith("["):  # a dimension list: one node a term, whichever plans name it
                target = values.setdefault(
                    value, _Node(f"dims-{len(values)}", "dimension term", _wrap(value))
                )
                node.edges.append((target.key, name))
    for source in (request, *facts):  # what the chosen plan's rules read
        source.edges.append(("plan-chosen", ""))
    return [[request, *facts], plans, list(values.values())]


def focus_svg(s: StatementExplanation) -> str:
    """The statement's focused view as one SVG (its nodes carry `data-node`, the chosen plan's `data-chosen`)."""
    columns = [c for c in focus_nodes(s) if c]
    by_key: dict[str, _Node] = {}
    height = 0
    for ci, column in enumerate(columns):
        y = 36
        for n in column:
            n.x, n.y = 20 + ci * COLUMN, y
            y += n.height + GAP
            by_key[n.key] = n
        height = max(height, y)
    out = [f'<svg class="focus" width="{20 + len(columns) * COLUMN}" '
           f'height="{height + 10}" font-family="sans-serif" font-size="12">']  # fmt: skip
    titles = ["request and facts", "plans", "dimension terms"]
    for ci, column in enumerate(columns):
        top, bottom = column[0].y - 26, column[-1].y + column[-1].height + 6
        label = titles[ci] if ci < len(titles) else ""
        out.append(f'<g class="cluster"><rect x="{column[0].x - 8}" y="{top}" width="{WIDTH + 16}" '
                   f'height="{bottom - top}" rx="8" fill="#f6f8fb" stroke="#c9d3e0"/>'
                   f'<text x="{column[0].x}" y="{top + 16}" fill="#556" font-weight="bold">{label}</text></g>')  # fmt: skip
    for n in by_key.values():
        for target, label in n.edges:
            t = by_key.get(target)
            if t is None:
                continue
            x1, y1, x2, y2 = n.x + WIDTH, n.y + 12, t.x, t.y + 12
            if t.x < n.x + WIDTH:  # (a fact feeds the plan column to its right)
                x1 = n.x + WIDTH
            out.append(
                f'<path d="M{x1},{y1} C{x1 + 35},{y1} {x2 - 35},{y2} {x2},{y2}" fill="none" stroke="#8a98ad"/>'
            )
            if label:
                out.append(
                    f'<text x="{x2 - 60}" y="{y2 - 3}" fill="#667" font-size="10">{html.escape(label)}</text>'
                )
    for n in by_key.values():
        chosen = ' data-chosen="true"' if n.chosen else ""
        stroke = "#1b7f3b" if n.chosen else "#7d8fa8"
        width = 3 if n.chosen else 1
        out.append(f'<g class="node" data-node="{n.key}"{chosen}><rect x="{n.x}" y="{n.y}" width="{WIDTH}" '
                   f'height="{n.height}" rx="5" fill="white" stroke="{stroke}" stroke-width="{width}"/>'
                   f'<text x="{n.x + 8}" y="{n.y + LINE}" font-weight="bold">{html.escape(n.title)}</text>')  # fmt: skip
        for i, line in enumerate(n.lines):
            out.append(f'<text x="{n.x + 8}" y="{n.y + LINE * (i + 2)}">{html.escape(line)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)
