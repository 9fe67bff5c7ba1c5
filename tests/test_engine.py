"""FlattenEGraph, the run report and the extractor (issue: the egglog engine)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pypto_egg.language as pl
from pypto_egg import egraph, passes
from pypto_egg.errors import ScheduleLimitError
from pypto_egg.extract import EGraphView, ENode, Term, extract_roots
from pypto_egg.extract.graph import ClassId
from pypto_egg.ir import python_print

SRC = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, x: pl.Tensor[[2, 3, 4], pl.FP32], y: pl.Tensor[[2, 3, 4], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 3, 4], pl.FP32]]) -> pl.Tensor[[2, 3, 4], pl.FP32]:
        a = pl.load(x, [0, 0, 0], [2, 3, 4])
        b = pl.load(y, [0, 0, 0], [2, 3, 4])
        c = pl.tile.add(a, b)
        out = pl.store(c, [0, 0, 0], out)
        return out
"""


def test_flatten_egraph_api_and_report():
    program = pl.parse(SRC)
    eg = egraph.FlattenEGraph(program, "main", backend="Ascend910B")
    report = eg.saturate()
    text = str(report)
    assert "e-graph run for function 'main'" in text
    assert report.statements == 4 and report.eclasses > 0 and report.enodes >= report.eclasses
    assert {"encode", "load rules", "load facts", "saturate"} <= set(report.times)
    assert report.rules_fired["flatten"] > 0 and report.rules_fired["store-aligned-window-same-rank"] == 1
    assert any(f.endswith("store.egg") for f in report.rule_files)
    plans = eg.plan_terms()
    assert [plans[i].op for i in range(4)] == ["LoadFlat", "LoadFlat", "Retype", "StorePartition"]
    assert "extract" in eg.report.times
    assert report.as_dict()["statements"] == 4


def test_shared_subterms_are_one_object():
    """The two loads have the same merged shape: one e-class, so one Term object (DAG-aware)."""
    eg = egraph.FlattenEGraph(pl.parse(SRC), "main")
    plans = eg.plan_terms()
    assert plans[0].args[0] is plans[1].args[0]
    assert plans[0].args[0] is plans[2].args[0]


def test_extraction_is_deterministic():
    texts = {python_print(passes.flatten_tile_nd_to_2d()(pl.parse(SRC))) for _ in range(3)}
    assert len(texts) == 1
    plan_texts = {str(egraph.FlattenEGraph(pl.parse(SRC), "main").plan_terms()) for _ in range(3)}
    assert len(plan_texts) == 1


def test_greedy_extraction_picks_the_cheapest_term_and_skips_unextractable_nodes():
    c = [ClassId(i) for i in range(4)]
    view = EGraphView()
    view.classes[c[0]] += [ENode("DC", (6,), c[0]), ENode("DMul", (c[1], c[2]), c[0])]
    view.classes[c[1]] += [ENode("DC", (2,), c[1])]
    view.classes[c[2]] += [ENode("DC", (3,), c[2]), ENode("Rows", (c[3],), c[2])]
    view.classes[c[3]] += [ENode("DNil", (), c[3])]
    ex = extract_roots(view)
    t = ex.term(c[0])
    assert isinstance(t, Term) and t.op == "DC" and t.args == (6,)
    assert ex.term(c[2]).op == "DC"  # Rows is a helper, never extracted


@given(
    st.lists(st.lists(st.integers(0, 11), max_size=3), min_size=1, max_size=12), st.sets(st.integers(0, 11))
)
def test_a_class_of_one_node_takes_it_as_the_worklist_would(children, barren):
    """Where every class has one extractable node, the walk that takes it (children first, none on a cycle or above
    a class without a term) gives the worklist's terms and costs: generated graphs, cycles and all."""
    from pypto_egg.extract.greedy import _dag_choice, _forced, _worklist

    c = [ClassId(i) for i in range(len(children))]
    nodes = [
        (ENode("Op", tuple(c[k % len(c)] for k in kids), c[i]), 1.0 + i)
        for i, kids in enumerate(children)
        if i not in barren  # (a class whose one node the model never extracts)
    ]
    view = EGraphView()
    for n, _ in nodes:
        view.classes[n.eclass].append(n)
    forced, worklist = _forced(view, nodes), _worklist(view, nodes, _dag_choice)
    assert set(forced.best) == set(worklist.best)
    for k in c:
        assert str(forced.term(k)) == str(worklist.term(k))
        assert forced.cost(k) == worklist.cost(k)


def test_extraction_from_the_roots_alone_chooses_what_extraction_of_every_class_chooses():
    """The pass extracts only the classes its plans and the relations it reads reach: each of them gets the term
    (and cost) the extraction of every class gives it, on every example program and kernel."""
    from pathlib import Path

    from pypto_egg.extract.lower_matmul import MatmulLowerer

    examples = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))
    checked = 0
    for path in examples:
        program = pl.parse(path.read_text())
        for fn in program.functions:
            if not fn.type.is_incore:
                continue
            with egraph.EGraphRun(program, fn.name, "Ascend910B", reads=MatmulLowerer.FACTS) as eg:
                eg.saturate()
                roots = eg._roots()
                assert roots is not None
                whole, part = extract_roots(eg.view()), eg.extraction()
                for c in roots:
                    assert str(part.term(c)) == str(whole.term(c)) and part.cost(c) == whole.cost(c), (
                        path.name,
                        c,
                    )
                checked += len(roots)
    assert checked > 30


def test_cycles_do_not_hang_the_extractor():
    a, b = ClassId(0), ClassId(1)
    view = EGraphView()
    view.classes[a] += [ENode("DMul", (a, b), a), ENode("DSym", ("S",), a)]
    view.classes[b] += [ENode("DC", (1,), b)]
    ex = extract_roots(view)
    assert str(ex.term(a)) == "(DSym 'S')"


def test_explain_lists_a_plan_per_statement(capsys):
    import tempfile
    from pathlib import Path

    from pypto_egg.cli import main

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "prog.py"
        path.write_text(SRC)
        assert main(["explain", str(path), "--terms"]) == 0
    out = capsys.readouterr().out
    assert "(LoadFlat" in out and "(StorePartition" in out and "rule: load-non-mat-keeps-window" in out


def test_dag_cost_counts_a_shared_subterm_once():
    """top = big * big, with big = leaf + leaf (the same class twice), or top = min(c, b) - b.

    DAG cost: big * big reaches {leaf, big, top} = 3; the other reaches {c, b, min, top} = 4.
    Tree cost charges every use: big * big = 1 + 3 + 3 = 7; min(c, b) - b = 1 + 3 + 1 = 5."""
    top, big, mn, b, c, leaf = (ClassId(n) for n in range(6))
    view = EGraphView()
    view.classes[leaf] += [ENode("DC", (1,), leaf)]
    view.classes[big] += [ENode("DAdd", (leaf, leaf), big)]
    view.classes[b] += [ENode("DSym", ("b",), b)]
    view.classes[c] += [ENode("DSym", ("c",), c)]
    view.classes[mn] += [ENode("DMin", (c, b), mn)]
    view.classes[top] += [ENode("DMul", (big, big), top), ENode("DSub", (mn, b), top)]
    dag = extract_roots(view)
    assert dag.term(top).op == "DMul" and dag.cost(top) == 3
    tree = extract_roots(view, mode="tree")
    assert tree.term(top).op == "DSub" and tree.cost(top) == 5


def test_fact_files_hold_each_row_and_refuse_a_malformed_one(tmp_path):
    from pypto_egg.egraph.accel.fact_folder import FactFolder
    from pypto_egg.egraph.encode import Encoding
    from pypto_egg.errors import InternalError

    enc = Encoding()
    enc.rows["GenericRow"] += [(0, "tile.exp", 1, 2), (1, "tile.add", 3, 2)]
    enc.rows["OpndFloatRow"].append((4, 0.5, 0))
    enc.rows["StmtVarRow"].append((0, 7))
    commands = enc.write_facts(FactFolder(tmp_path))
    assert commands == [
        '(input OpndFloatRow "OpndFloatRow.tsv")', '(input Fact "Fact.tsv")', '(input TextFact "TextFact.tsv")'
    ]  # fmt: skip
    # the fact tables: the relation's name, its integers, 0s up to the widest, then its strings, "" the padding
    assert (tmp_path / "Fact.tsv").read_text() == "StmtVarRow\t0\t7" + "\t0" * 6 + "\n"
    assert (tmp_path / "TextFact.tsv").read_text() == (
        "GenericRow\t0\t1\t2" + "\t0" * 5 + "\ttile.exp\t\t\t\n"
        "GenericRow\t1\t3\t2" + "\t0" * 5 + "\ttile.add\t\t\t\n"
    )
    assert (tmp_path / "OpndFloatRow.tsv").read_text() == "4\t0.5\t0\n"
    for bad in [(2, "tile.exp", 1), (2, "tile\tadd", 1, 2), (2, "tile.add", 1, 2, 5)]:
        enc.rows["GenericRow"].append(bad)
        with pytest.raises(InternalError, match=r"GenericRow row .* is not 4 tab-free cells"):
            enc.write_facts(FactFolder(tmp_path))
        enc.rows["GenericRow"].pop()


def test_a_fact_folder_rewrites_its_files_in_place_and_cleans_up(tmp_path):
    import os
    from pathlib import Path

    from pypto_egg.egraph.accel.fact_folder import FactFolder

    given = FactFolder(tmp_path)
    given.write("R.tsv", "1\t2\n3\t4\n")
    path = given.write("R.tsv", "5\t6\n")  # shorter: nothing of the longer text stays behind it
    assert path == os.path.join(str(tmp_path), "R.tsv")
    assert (tmp_path / "R.tsv").read_text() == "5\t6\n"
    given.write("R.tsv", "")
    assert (tmp_path / "R.tsv").read_text() == ""
    given.write("R.tsv", "7\t8\n9\t10\n")  # longer again, then the same length: no truncate owed
    given.write("R.tsv", "1\t1\n1\t1\n")
    assert (tmp_path / "R.tsv").read_text() == "1\t1\n1\t1\n"
    given.write("R.tsv", "2\t2\n")
    assert (tmp_path / "R.tsv").read_text() == "2\t2\n"
    given.cleanup()
    assert tmp_path.is_dir()  # a given folder stays, its files closed
    own = FactFolder()
    own.write("S.tsv", "7\n")
    assert Path(own.path, "S.tsv").read_text() == "7\n"
    own.cleanup()
    assert not os.path.exists(own.path)


def test_fact_folders_keep_a_bounded_number_of_files_open(tmp_path, monkeypatch):
    """Each folder bounds its own open files (no count shared by the process), and closes them when cleaned up."""
    from pypto_egg.egraph.accel import fact_folder
    from pypto_egg.egraph.accel.fact_folder import FactFolder

    monkeypatch.setattr(fact_folder, "_MOST_KEPT_OPEN", 1)
    folder, other = FactFolder(tmp_path / "a"), FactFolder(tmp_path / "b")
    for f in (folder, other):
        Path(f.path).mkdir()
    for _ in range(2):  # the second file is past the bound: opened and closed at each write, and still right
        folder.write("A.tsv", "1\t2\n")
        folder.write("B.tsv", "3\t4\n5\t6\n")
        other.write("C.tsv", "7\n")  # another folder keeps its own file open, whatever the first holds
    assert sorted(folder._open) == ["A.tsv"] and sorted(other._open) == ["C.tsv"]
    assert (tmp_path / "a" / "A.tsv").read_text() == "1\t2\n"
    assert (tmp_path / "a" / "B.tsv").read_text() == "3\t4\n5\t6\n"
    descriptor = folder._open["A.tsv"]
    folder.cleanup()
    assert not folder._open
    with pytest.raises(OSError):
        os.fstat(descriptor)
    other.cleanup()


def test_facts_load_through_one_include_from_any_folder_name(tmp_path):
    import egglog.bindings as eb

    from pypto_egg.egraph.accel.fact_folder import FactFolder
    from pypto_egg.egraph.engine import load_facts

    folder = tmp_path / 'a "quoted" folder\\with a backslash'
    folder.mkdir()
    (folder / "R.tsv").write_text("1\t2\n3\t4\n")
    eg = eb.EGraph(fact_directory=str(folder))
    eg.run_program(*eg.parse_program("(relation R (i64 i64))"))
    load_facts(eg, FactFolder(folder), ['(input R "R.tsv")'])
    assert [getattr(o, "size", None) for o in eg.run_program(*eg.parse_program("(print-size R)"))] == [2]


BMM = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def main(self, a: pl.Tensor[[4, 16, 16], pl.FP16], b: pl.Tensor[[4, 16, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[4, 16, 16], pl.FP32]]) -> pl.Tensor[[4, 16, 16], pl.FP32]:
        ta = pl.load(a, [0, 0, 0], [4, 16, 16])
        tb = pl.load(b, [0, 0, 0], [4, 16, 16])
        c = pl.tile.batch_matmul(ta, tb)
        out = pl.store(c, [0, 0, 0], out)
        return out
"""


def test_the_iteration_limit_binds_each_step_of_the_one_schedule_command():
    """Every step runs in one egglog command; the report still tells each step's iterations apart: a limit below
    what the longest step needs stops it with the error, the first limit it fits gives the unlimited run's plans
    and stage counts (B-134)."""
    program = pl.parse(BMM)
    free = egraph.FlattenEGraph(program, "main")
    plans, stages = str(free.plan_terms()), free.saturate().stages
    assert sum(n for _, n in stages) > len(stages)
    failed = []
    for limit in range(1, 12):
        eg = egraph.FlattenEGraph(program, "main", limits=egraph.Limits(max_iterations=limit))
        try:
            eg.saturate()
        except ScheduleLimitError as e:
            assert f"iteration limit ({limit}) in stage" in str(e)
            failed.append(limit)
            continue
        assert str(eg.plan_terms()) == plans and eg.report.stages == stages
        break
    else:
        pytest.fail("no limit up to 11 iterations let the shipped rules finish")
    assert failed == list(range(1, limit)) and limit >= 3


def test_a_report_read_later_tells_the_stages_apart_as_one_read_at_once():
    """Without the schedule check, a run that cannot have met the iteration limit leaves its stages' accounting
    until the report is read; what it then says is what the checked run, which accounts at once, says."""
    program = pl.parse(BMM)
    checked = egraph.FlattenEGraph(program, "main").saturate()
    later = egraph.FlattenEGraph(program, "main", check_schedule=False).saturate()
    assert later.stages == checked.stages and sum(n for _, n in later.stages) > len(later.stages)
    assert later.rules_fired == checked.rules_fired


def test_the_egglog_cost_benchmark_prints_every_unit_it_measures():
    """benchmarks/bench_egglog_costs.py, run as a user runs it: a figure for each unit the pass's cost rests on."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_egglog_costs.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--repeat", "3"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {line[:58].strip(): float(line[58:]) for line in proc.stdout.splitlines()[1:]}
    assert len(rows) == 3 + 2 * 6 + 2 + 2 * 3, proc.stdout
    assert all(us > 0 for us in rows.values()), proc.stdout
    assert "a rule of 8 atoms firing once, naive" in rows and "20 firing rules, one step each" in rows
