"""The e-graph visualizer: one self-contained HTML page, dot output, pruning and the node cap."""

from __future__ import annotations

import json
import re

import pytest
from browser import chromium, count_when_ready, must_run_browser_tests

import pypto_egg.language as pl
from pypto_egg.egraph import FlattenEGraph
from pypto_egg.egraph.viz import prune

SRC = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        t = pl.load(x, [0, 0, 0], [2, 3, 4])
        u = pl.tile.add(t, t)
        out = pl.store(u, [0, 0, 0], out)
        return out
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    eg = FlattenEGraph(pl.parse(SRC), "main")
    path = tmp_path_factory.mktemp("viz") / "egraph.html"
    eg.write_html(path)
    return path, eg


def test_page_is_self_contained_and_states_function_rules_and_report(page):
    path, eg = page
    html = path.read_text()
    assert not re.search(r"https?://", html), "the page must not reach the network"
    assert "e-graph of <code>main</code>" in html and "store.egg" in html and "rules fired" in html
    data = json.loads(
        re.search(r'<script type="application/json" id="egraph-data">(.*?)</script>', html, re.S).group(1)
    )
    ops = {n["op"] for n in data["nodes"].values()}
    assert {"LoadFlat", "StorePartitionFlat", "Retype", "DC"} <= ops
    assert data["root_eclasses"]


def test_pruning_keeps_what_the_roots_reach_and_caps_nodes():
    data = {
        "nodes": {
            "a": {"op": "Root", "children": ["b"], "eclass": "1"},
            "b": {"op": "DC", "children": [], "eclass": "2"},
            "c": {"op": "Orphan", "children": [], "eclass": "3"},
        },
        "root_eclasses": ["1"],
        "class_data": {},
    }
    pruned, truncated = prune(data, None)
    assert set(pruned["nodes"]) == {"a", "b"} and not truncated
    capped, truncated = prune(data, 1)
    assert set(capped["nodes"]) == {"a"} and capped["nodes"]["a"]["children"] == [] and truncated


def test_dot_and_json_output():
    eg = FlattenEGraph(pl.parse(SRC), "main")
    data = json.loads(eg.serialized_json(max_nodes=50))
    assert 0 < len(data["nodes"]) <= 50 and data["root_eclasses"]
    dot = eg.to_dot()
    assert dot.lstrip().startswith(("digraph", "strict digraph")) and "LoadFlat" in dot


@pytest.mark.skipif(
    chromium() is None and not must_run_browser_tests(), reason="Debian's chromium is not installed"
)
def test_page_renders_nodes_in_a_headless_browser(page):
    path, _ = page
    assert count_when_ready(path, ".react-flow__node") > 0
