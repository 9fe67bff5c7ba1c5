"""The e-graph visualizer: one self-contained HTML page (egglog's bundled egraph-visualizer, inlined).

The serialized e-graph is pruned to what the function's statement roots reach and capped in
e-nodes: the layout becomes unreadable near 900 e-nodes and slow beyond a few thousand.
"""

from __future__ import annotations

import base64
import html
import json
import shutil
import subprocess
from collections import deque
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import egglog.bindings as eb

from ..errors import UserError
from ..extract.term import Prim, Term

if TYPE_CHECKING:
    from .engine import FlattenEGraph


def _term_expr(t: Term | Prim, span: Any) -> Any:
    if isinstance(t, Term):
        return eb.Call(span, t.op, [_term_expr(a, span) for a in t.args])
    if isinstance(t, bool):
        return eb.Lit(span, eb.Bool(t))
    if isinstance(t, int):
        return eb.Lit(span, eb.Int(t))
    if isinstance(t, float):
        return eb.Lit(span, eb.Float(t))
    return eb.Lit(span, eb.String(str(t)))


def _root_exprs(eg: FlattenEGraph) -> list[Any]:
    """The plan chosen for each statement: the e-classes the page starts from."""
    span = eb.PanicSpan()
    return [_term_expr(t, span) for t in eg.plans().values() if t is not None]


def prune(data: dict[str, Any], max_nodes: int | None) -> tuple[dict[str, Any], bool]:
    """Keep the e-classes reachable from the roots, breadth first, up to `max_nodes` e-nodes."""
    nodes: dict[str, Any] = data["nodes"]
    by_class: dict[str, list[str]] = {}
    for nid, n in nodes.items():
        by_class.setdefault(n["eclass"], []).append(nid)
    roots = [str(r) for r in data.get("root_eclasses", [])]
    seen_classes: set[str] = set()
    keep: list[str] = []
    truncated = False
    queue = deque(roots)
    while queue:
        c = queue.popleft()
        if c in seen_classes or c not in by_class:
            continue
        members = by_class[c]
        if max_nodes is not None and len(keep) + len(members) > max_nodes:
            truncated = True
            continue
        seen_classes.add(c)
        keep += members
        for nid in members:
            for ch in nodes[nid].get("children", []):
                if ch in nodes:
                    queue.append(nodes[ch]["eclass"])
    kept = set(keep)
    out_nodes = {}
    for nid in keep:
        n = dict(nodes[nid])
        n["children"] = [ch for ch in n.get("children", []) if ch in kept]
        out_nodes[nid] = n
    out = {
        "nodes": out_nodes,
        "root_eclasses": [r for r in roots if r in seen_classes],
        "class_data": {c: v for c, v in data.get("class_data", {}).items() if c in seen_classes},
    }
    return out, truncated


def serialized_json(eg: FlattenEGraph, max_nodes: int | None = 900) -> str:
    eg.saturate()
    ser = eg.egraph.serialize(_root_exprs(eg))
    data = json.loads(ser.to_json())
    pruned, _ = prune(data, max_nodes)
    return json.dumps(pruned)


def to_dot(eg: FlattenEGraph) -> str:
    eg.saturate()
    return eg.egraph.serialize(_root_exprs(eg)).to_dot()


def to_svg(eg: FlattenEGraph) -> str:
    dot = shutil.which("dot")
    if dot is None:
        raise UserError(
            "svg output needs Graphviz's `dot` on PATH (apt-get install graphviz); use --format dot"
        )
    return subprocess.run([dot, "-Tsvg"], input=to_dot(eg), capture_output=True, text=True, check=True).stdout


def _asset(name: str) -> str:
    return (resources.files("egglog") / name).read_text()


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{css}</style>
<style>
body {{ font-family: sans-serif; margin: 0; }}
header {{ padding: 8px 16px; background: #f4f4f4; border-bottom: 1px solid #ccc; }}
header pre {{ max-height: 12em; overflow: auto; font-size: 12px; }}
#egraph-visualizer {{ height: 80vh; width: 100%; }}
</style></head>
<body>
<header>
<h2>e-graph of <code>{function}</code></h2>
<p>{summary}</p>
<details><summary>rule files</summary><pre>{rule_files}</pre></details>
<details><summary>run report</summary><pre>{report}</pre></details>
</header>
<div id="egraph-visualizer"></div>
<script type="application/json" id="egraph-data">{data}</script>
<script type="module">
const bundle = "data:text/javascript;base64,{bundle}";
const {{ mount }} = await import(bundle);
const data = document.getElementById("egraph-data").textContent;
const mounted = mount(document.getElementById("egraph-visualizer"));
mounted.render([data]);
</script>
</body></html>
"""


def write_html(eg: FlattenEGraph, path: Path, max_nodes: int | None = 900) -> Path:
    eg.saturate()
    ser = eg.egraph.serialize(_root_exprs(eg))
    pruned, truncated = prune(json.loads(ser.to_json()), max_nodes)
    n_nodes = len(pruned["nodes"])
    n_classes = len({n["eclass"] for n in pruned["nodes"].values()})
    summary = f"{n_classes} e-classes, {n_nodes} e-nodes reachable from {len(pruned['root_eclasses'])} statement roots"
    if truncated:
        summary += f" (capped at {max_nodes} e-nodes; pass a larger cap to see more)"
    page = PAGE.format(
        title=html.escape(f"e-graph: {eg.function.name}"),
        css=_asset("visualizer.css"),
        function=html.escape(eg.function.name),
        summary=html.escape(summary),
        rule_files=html.escape("\n".join(eg.report.rule_files)),
        report=html.escape(str(eg.report)),
        data=json.dumps(pruned).replace("</", "<\\/"),
        bundle=base64.b64encode(_asset("visualizer.js").encode()).decode(),
    )
    path.write_text(page)
    return path
