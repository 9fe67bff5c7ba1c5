"""The focused view of one statement's decision, drawn as a small SVG: its request with each field named, the
facts its rules read, its plans (the chosen one marked, each with the rule that holds it, the others with why they
lost) and the dimension terms the plans name, written as the DSL writes them. Each part is a cluster; a term two
plans share is one node. No internal constructor appears: every text comes from explain's reading."""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass, field

from .decisions import RuleRef, StatementExplanation

LINE = 15  # pixels a line
WIDTHS = (300, 300, 170)  # pixels a node, by column: request and facts, plans, dimension terms
CHARS = 7  # pixels a character of the view's 12-pixel text takes, at most, on average
GAP = 14  # pixels between nodes of a column
GUTTER = 110  # pixels between columns: the edges and their labels
LABEL = 13  # pixels between the edges that leave (or reach) one node, so their labels never meet
LABEL_CHARS = 18  # characters a line of an edge's label (10-pixel text across the gutter)


@dataclass
class _Node:
    key: str
    title: str
    lines: list[str]
    chosen: bool = False
    width: int = WIDTHS[0]
    x: int = 0
    y: int = 0
    edges: list[tuple[str, str]] = field(default_factory=list)  # (target key, label)

    @property
    def height(self) -> int:
        """Room for its text, and for the edges that leave it, each at a height of its own."""
        return max(
            LINE * (len(self.lines) + 1) + 10, 12 + LABEL * sum(len(_label_lines(b)) for _, b in self.edges)
        )


def _label_lines(label: str) -> list[str]:
    """An edge's label in lines that fit the gutter (at most LABEL_CHARS each, broken after a comma)."""
    lines: list[str] = []
    for part in label.split(", ") if label else [""]:
        if lines and len(lines[-1]) + len(part) + 2 <= LABEL_CHARS:
            lines[-1] += f", {part}"
        else:
            lines.append(part)
    return lines


def _wrap(text: str, width: int = WIDTHS[0]) -> list[str]:
    return textwrap.wrap(text, (width - 16) // CHARS) or [""]


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
                    value,
                    _Node(f"dims-{len(values)}", "dimension term", _wrap(value, WIDTHS[2]), width=WIDTHS[2]),
                )
                node.edges.append((target.key, name))
    for source in (request, *facts):  # what the chosen plan's rules read
        source.edges.append(("plan-chosen", ""))
    return [[request, *facts], plans, list(values.values())]


def _edges(nodes: dict[str, _Node]) -> list[tuple[_Node, _Node, str]]:
    """Each edge once, the labels of two between the same nodes joined (a plan's shape and valid shape may be
    one term)."""
    joined: dict[tuple[str, str], list[str]] = {}
    for n in nodes.values():
        for target, label in n.edges:
            if target in nodes:
                labels = joined.setdefault((n.key, target), [])
                if label and label not in labels:
                    labels.append(label)
    return [(nodes[a], nodes[b], ", ".join(labels)) for (a, b), labels in joined.items()]


def focus_svg(s: StatementExplanation) -> str:
    """The statement's focused view as one SVG (its nodes carry `data-node`, the chosen plan's `data-chosen`;
    the page scales it to its width through its viewBox)."""
    columns = [c for c in focus_nodes(s) if c]
    by_key: dict[str, _Node] = {}
    height, x = 0, 20
    for column in columns:
        y = 36
        for n in column:
            n.x, n.y = x, y
            y += n.height + GAP
            by_key[n.key] = n
        height = max(height, y)
        x += column[0].width + GUTTER
    width = x - GUTTER + 20
    out = [f'<svg class="focus" viewBox="0 0 {width} {height + 10}" width="{width}" height="{height + 10}" '
           f'style="max-width: {width}px" font-family="sans-serif" font-size="12">']  # fmt: skip
    titles = ["request and facts", "plans", "dimension terms"]
    for ci, column in enumerate(columns):
        top, bottom = column[0].y - 26, column[-1].y + column[-1].height + 6
        label = titles[ci] if ci < len(titles) else ""
        out.append(f'<g class="cluster"><rect x="{column[0].x - 8}" y="{top}" width="{column[0].width + 16}" '
                   f'height="{bottom - top}" rx="8" fill="#f6f8fb" stroke="#c9d3e0"/>'
                   f'<text x="{column[0].x}" y="{top + 16}" fill="#556" font-weight="bold">{label}</text></g>')  # fmt: skip
    leaving: dict[str, int] = {}
    reaching: dict[str, int] = {}
    for n, t, label in _edges(by_key):
        # each edge leaves its source and reaches its target at a height of its own, its label's lines over it
        lines = _label_lines(label)
        k, j = leaving.get(n.key, 0) + len(lines) - 1, reaching.get(t.key, 0)
        leaving[n.key], reaching[t.key] = k + 1, j + 1
        x1, y1, x2, y2 = n.x + n.width, n.y + 12 + LABEL * k, t.x, t.y + 12 + LABEL * j
        out.append(
            f'<path d="M{x1},{y1} C{x1 + 45},{y1} {x2 - 45},{y2} {x2},{y2}" fill="none" stroke="#8a98ad"/>'
        )
        if label:
            spans = "".join(f'<tspan x="{x1 + 4}" y="{y1 - 2 - LABEL * (len(lines) - 1 - i)}">{html.escape(line)}</tspan>'
                            for i, line in enumerate(lines))  # fmt: skip
            out.append(f'<text class="edge-label" fill="#667" font-size="10">{spans}</text>')
    for n in by_key.values():
        chosen = ' data-chosen="true"' if n.chosen else ""
        stroke = "#1b7f3b" if n.chosen else "#7d8fa8"
        width = 3 if n.chosen else 1
        out.append(f'<g class="node" data-node="{n.key}"{chosen}><rect x="{n.x}" y="{n.y}" width="{n.width}" '
                   f'height="{n.height}" rx="5" fill="white" stroke="{stroke}" stroke-width="{width}"/>'
                   f'<text x="{n.x + 8}" y="{n.y + LINE}" font-weight="bold">{html.escape(n.title)}</text>')  # fmt: skip
        for i, line in enumerate(n.lines):
            out.append(f'<text x="{n.x + 8}" y="{n.y + LINE * (i + 2)}">{html.escape(line)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)
