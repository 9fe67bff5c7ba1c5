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
from dataclasses import asdict
from importlib import resources
from pathlib import Path
from typing import Any

import egglog.bindings as eb

from ..errors import UserError
from ..extract.lower_matmul import MatmulLowerer
from ..extract.term import Prim, Term
from ..ir.node import replaced
from ..ir.printer import statement_printer
from ..rules import schema
from .decisions import explain_function
from .focus import focus_svg
from .plan_reader import PlanReader


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


def _root_exprs(eg: PlanReader) -> list[Any]:
    """The plan chosen for each statement: the e-classes the page starts from."""
    span = eb.PanicSpan()
    return [_term_expr(t, span) for t in eg.plan_terms().values() if t is not None]


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


def serialized_json(eg: PlanReader, max_nodes: int | None = 900) -> str:
    eg.saturate()
    ser = eg.egraph.serialize(_root_exprs(eg))
    data = json.loads(ser.to_json())
    pruned, _ = prune(data, max_nodes)
    return json.dumps(pruned)


def to_dot(eg: PlanReader) -> str:
    eg.saturate()
    return eg.egraph.serialize(_root_exprs(eg)).to_dot()


def to_svg(eg: PlanReader) -> str:
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
body {{ font-family: sans-serif; margin: 0; display: flex; flex-direction: column; height: 100vh; }}
header {{ padding: 6px 16px; background: #f4f4f4; border-bottom: 1px solid #ccc; }}
header h2 {{ margin: 4px 0; font-size: 18px; }}
header pre {{ max-height: 12em; overflow: auto; font-size: 12px; }}
main {{ display: flex; flex: 1; min-height: 0; }}
#statements {{ width: 30%; min-width: 300px; overflow: auto; margin: 0; padding: 0 0 0 1em;
  list-style: none; border-right: 1px solid #ccc; font-size: 13px; }}
#statements li {{ padding: 4px 6px; cursor: pointer; border-bottom: 1px solid #eee; }}
#statements li a {{ color: inherit; text-decoration: none; }}
#details pre.became {{ margin: 2px 0 4px 1em; font-size: 12px; background: #f6f8fb; padding: 4px;
  white-space: pre-wrap; }}
#statements li.selected {{ background: #dceaff; }}
#statements code {{ font-size: 12px; }}
#statements .plan {{ color: #555; font-size: 12px; }}
#right {{ flex: 1; display: flex; flex-direction: column; min-width: 0; }}
#details {{ padding: 6px 12px; font-size: 13px; max-height: 38%; overflow: auto; border-bottom: 1px solid #ccc; }}
#details .rule {{ color: #0a4; }}
#egraph-visualizer {{ flex: 1; min-height: 300px; display: none; }}
#focus {{ flex: 1; min-height: 300px; overflow: auto; padding: 8px; }}
#focus svg.focus {{ width: 100%; height: auto; }}
body.whole #egraph-visualizer {{ display: block; }}
body.whole #focus {{ display: none; }}
</style></head>
<body>
<header>
<h2>program <code>{program}</code>: e-graph of <code>{function}</code></h2>
<p id="summary">{summary}</p>
<label><input type="checkbox" id="whole"> whole graph (<span id="cap">{cap_note}</span>)</label>
<span id="filters">: <label><input type="checkbox" id="plans-only"> plans only</label>
<label><input type="checkbox" id="no-dims"> hide dimension terms</label>
<label>search <input type="search" id="search" size="14" placeholder="op name"></label></span>
<details><summary>the run, stage by stage</summary>{timeline}</details>
<details><summary>rule files</summary><pre>{rule_files}</pre></details>
<details><summary>run report</summary><pre>{report}</pre></details>
</header>
<main>
<ol id="statements"></ol>
<div id="right"><div id="details">Select a statement to see its plan, the rule that chose it and its part of
the e-graph.</div><div id="focus"></div><div id="egraph-visualizer"></div></div>
</main>
<script type="application/json" id="egraph-data">{data}</script>
<script type="application/json" id="statement-data">{statements}</script>
<script type="module">
const bundle = "data:text/javascript;base64,{bundle}";
const {{ mount }} = await import(bundle);
const graph = JSON.parse(document.getElementById("egraph-data").textContent);
const stmts = JSON.parse(document.getElementById("statement-data").textContent);
const mounted = mount(document.getElementById("egraph-visualizer"));
const byClass = {{}};
for (const [id, n] of Object.entries(graph.nodes)) (byClass[n.eclass] ||= []).push(id);
const WHOLE_CAP = {whole_cap};
const PLAN_OPS = {plan_ops}, DIM_OPS = {dim_ops};
function subgraph(roots, cap) {{
  const keep = new Set(), seen = new Set(), queue = [...roots];
  while (queue.length) {{
    const c = queue.shift();
    if (seen.has(c) || !byClass[c]) continue;
    if (keep.size + byClass[c].length > cap) continue;
    seen.add(c);
    for (const id of byClass[c]) {{
      keep.add(id);
      for (const ch of graph.nodes[id].children || []) if (graph.nodes[ch]) queue.push(graph.nodes[ch].eclass);
    }}
  }}
  const plansOnly = document.getElementById("plans-only").checked, noDims = document.getElementById("no-dims").checked;
  const needle = document.getElementById("search").value.trim();
  const shown = (id) => {{
    const op = graph.nodes[id].op;
    return (!plansOnly || PLAN_OPS.includes(op)) && (!noDims || !DIM_OPS.includes(op)) && (!needle || op.includes(needle));
  }};
  for (const id of [...keep]) if (!shown(id)) keep.delete(id);
  const nodes = {{}};
  for (const id of keep) nodes[id] = {{ ...graph.nodes[id], children: (graph.nodes[id].children || []).filter(c => keep.has(c)) }};
  const classData = {{}};
  for (const c of seen) if (graph.class_data && graph.class_data[c]) classData[c] = graph.class_data[c];
  return {{ nodes, root_eclasses: roots.filter(r => seen.has(r)), class_data: classData }};
}}
const esc = (t) => String(t).replace(/[&<>]/g, (c) => ({{"&": "&amp;", "<": "&lt;", ">": "&gt;"}})[c]);
function show(i) {{
  document.querySelectorAll("#statements li").forEach((li, j) => li.classList.toggle("selected", i === j));
  const s = stmts[i];
  history.replaceState(null, "", "#" + s.anchor);
  let h = `<b>${{esc(s.label)}}</b>: <code>${{esc(s.source)}}</code><br>plan: ${{esc(s.plan)}}<br>`;
  h += `became:<pre class="became">${{esc(s.became.join("\\n") || "(nothing of its own)")}}</pre>`;
  const rules = [...s.rules, ...s.alternatives.flatMap(a => a.rules)];
  rules.forEach((r, k) => {{ h += `<a href="#" class="rule" data-rule="${{k}}">rule ${{esc(r.name)}} (${{esc(r.file)}}:${{r.line}})` +
    `${{r.behaviours.length ? " [" + esc(r.behaviours.join(", ")) + "]" : ""}}</a>, ${{esc(r.first ? "first matched in " + r.first : r.stage)}}<br>`; }});
  for (const f of s.facts) h += `fact: ${{esc(f)}}<br>`;
  for (const a of s.alternatives) h += `also held: ${{esc(a.plan)}} (cost ${{a.cost}}): lost: ${{esc(a.lost_because)}}<br>`;
  document.getElementById("details").innerHTML = h + `<pre id="rule-text"></pre>`;
  document.querySelectorAll("#details a.rule").forEach(a => a.addEventListener("click", (ev) => {{
    ev.preventDefault();
    document.getElementById("rule-text").textContent = rules[+a.dataset.rule].text;  // the rule as written
  }}));
  document.getElementById("whole").checked = false;
  document.body.classList.remove("whole");
  document.getElementById("focus").innerHTML = s.focus;  // drawn by pypto-egg: request, facts, plans, dims
}}
const list = document.getElementById("statements");
stmts.forEach((s, i) => {{
  const li = document.createElement("li");
  li.dataset.statement = s.statement;
  li.dataset.stmt = s.line ?? "";
  li.id = s.anchor;
  li.innerHTML = `<a href="#${{s.anchor}}"><b>${{esc(s.label)}}</b>: <code>${{esc(s.source)}}</code><br>` +
    `<span class="plan">${{esc(s.plan)}}</span></a>`;
  li.addEventListener("click", (ev) => {{ ev.preventDefault(); show(i); }});
  list.appendChild(li);
}});
// a link names a statement as the page does (#line=27): it opens that decision
const linked = () => stmts.findIndex(s => "#" + s.anchor === decodeURIComponent(location.hash));
window.addEventListener("hashchange", () => {{ const i = linked(); if (i >= 0) show(i); }});
const whole = () => mounted.render([JSON.stringify(subgraph(graph.root_eclasses, WHOLE_CAP))]);
document.getElementById("whole").addEventListener("change", (e) => {{
  document.body.classList.toggle("whole", e.target.checked);
  if (e.target.checked) whole();
}});
for (const id of ["plans-only", "no-dims", "search"]) document.getElementById(id).addEventListener("input", () => {{
  if (document.getElementById("whole").checked) whole();
}});
if (stmts.length) show(Math.max(linked(), 0)); else {{ document.body.classList.add("whole"); whole(); }}
</script>
</body></html>
"""


def write_html(eg: PlanReader, path: Path, max_nodes: int | None = 900) -> Path:
    """The decision view: the function's statements, each with its plan, rules and facts and its focused view
    (focus.py); the whole graph (capped at `max_nodes` e-nodes) behind a toggle."""
    eg.saturate()
    plans = eg.plan_terms()
    name = eg.functions[0].name
    sids = [sid for sid in eg.encoding.function_sids.get(name, range(len(eg.encoding.statements)))]
    rooted = [sid for sid in sids if plans.get(sid) is not None]
    span = eb.PanicSpan()
    ser = eg.egraph.serialize([_term_expr(plans[sid], span) for sid in rooted])  # type: ignore[arg-type]
    data = json.loads(ser.to_json())
    whole, truncated = prune(data, max_nodes)
    reach, _ = prune(data, None)  # the whole view is cut out of what the roots reach, as the page filters it
    became = statements_became(eg, name)
    statements = [
        {**asdict(e), "focus": focus_svg(e), "label": label, "anchor": label.replace(" ", "="),
         "became": became.get(e.statement, [])}
        for e in explain_function(eg, name)
        for label in [f"line {e.line}" if e.line is not None else f"statement {e.statement}"]
    ]  # fmt: skip
    n_nodes = len(whole["nodes"])
    n_classes = len({n["eclass"] for n in whole["nodes"].values()})
    summary = (
        f"{len(statements)} statements; {n_classes} e-classes, {n_nodes} e-nodes reachable from their plans"
    )
    cap_note = (
        f"capped at {max_nodes} e-nodes: {len(reach['nodes']) - n_nodes} cut" if truncated else "not capped"
    )
    page = PAGE.format(
        title=html.escape(f"e-graph: {eg.program.name}.{name}"),
        css=_asset("visualizer.css"),
        program=html.escape(eg.program.name),
        function=html.escape(name),
        summary=html.escape(summary),
        cap_note=html.escape(cap_note),
        rule_files=html.escape("\n".join(eg.report.rule_files)),
        report=html.escape(str(eg.report)),
        data=_script_json(reach),
        statements=_script_json(statements),
        whole_cap=max_nodes if max_nodes is not None else "Infinity",
        bundle=base64.b64encode(_asset("visualizer.js").encode()).decode(),
        plan_ops=_script_json(sorted(d.name for d in schema.schema().values() if d.output == "Plan")),
        dim_ops=_script_json(sorted(d.name for d in schema.schema().values() if d.output in ("Dim", "Dims"))),
        timeline=timeline_svg(eg.report.stages, eg.report.iterations),
    )
    path.write_text(page)
    return path


def statements_became(eg: PlanReader, name: str) -> dict[int, list[str]]:
    """What each tile statement of the function became: the 2-D statements the lowering writes for its plan,
    named as the flattened function prints them (a plan the pass refuses: its error)."""
    fn = eg.program.function(name)
    lowerer = MatmulLowerer(fn, eg.encoding, eg.plan_terms(), eg.facts)
    lowerer.emitted = {}
    refused: dict[int, list[str]] = {}
    try:
        printed = statement_printer(lowerer.run())
    except UserError as e:  # the first refused statement stops the lowering, as it stops the pass
        refused = {sid: [f"refused: {e}"] for sid in lowerer.lowered if sid not in lowerer.emitted}
        printed = statement_printer(
            replaced(fn, body=tuple(x for xs in lowerer.emitted.values() for x in xs))
        )
    return {**{sid: [printed(x) for x in xs] for sid, xs in lowerer.emitted.items()}, **refused}


def timeline_svg(stages: list[tuple[list[str], int]], fired: list[list[dict[str, int]]]) -> str:
    """The run as a bar chart: a bar a stage of rules/schedule.egg, as long as its iterations, named by its
    rulesets; hovering a bar lists the rules each iteration fired."""
    most = max((n for _, n in stages), default=1) or 1
    rows = []
    for i, (rulesets, n) in enumerate(stages):
        names = html.escape(", ".join(r or "<default>" for r in rulesets))
        its = fired[i] if i < len(fired) else []
        detail = "\n".join(
            f"iteration {k + 1}: " + ", ".join(f"{r} {m}" for r, m in sorted(rules.items()))
            for k, rules in enumerate(its)
            if rules
        )
        y, w = 4 + i * 18, max(2, 300 * n // most)
        rows.append(f'<g data-stage="{i}"><title>{html.escape(detail)}</title>'
                    f'<text x="0" y="{y + 11}" font-size="11">stage {i}</text>'
                    f'<rect x="60" y="{y}" width="{w}" height="13" fill="#6d8fbf"/>'
                    f'<text x="{66 + w}" y="{y + 11}" font-size="11">{n} iteration(s): {names}</text></g>')  # fmt: skip
    return f'<svg class="timeline" width="1000" height="{8 + 18 * len(stages)}">{"".join(rows)}</svg>'


def _script_json(value: Any) -> str:
    return json.dumps(value).replace("</", "<\\/")
