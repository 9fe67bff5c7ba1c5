"""The speed-ups never change an answer (issue: one seam between meaning and speed). Each of the accelerated
runner's speed-ups (egraph/accel: `Acceleration`) is turned off on its own, and the pass's output, printed, must be
the core runner's (egraph/core.py: the rules and schedule as written), byte for byte, on the corpus, the examples
in both strategies and generated programs; with every speed-up on, the same (tests/test_core_runner.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

import pypto_egg.language as pl
from pypto_egg import ir
from pypto_egg.egraph.accel import Acceleration
from pypto_egg.passes.flatten import FlattenTileNdTo2D

from corpus import PROGRAMS
from test_flatten_hypothesis import batch_matmul_programs, programs

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
OPTIONS = Acceleration.names()
# the core's answer is interpreted before and after (validate=True) once; the answers held to it need not be
pytestmark = pytest.mark.unvalidated


def outcome(program: ir.Program, strategy: str = "reference", **options: object) -> str:
    """The pass's answer as text, or its error."""
    try:
        return ir.python_print(FlattenTileNdTo2D(strategy=strategy, **options)(program))  # type: ignore[arg-type]
    except Exception as e:
        return f"{type(e).__name__}: {e}"


_CORE: dict[tuple[str, str], str] = {}  # (the program as printed, strategy) -> the core's answer


def core_answer(program: ir.Program, strategy: str) -> str:
    key = (ir.python_print(program), strategy)
    if key not in _CORE:
        _CORE[key] = outcome(program, strategy, runner="core", validate=True)
    return _CORE[key]


def assert_core_answer_without(program: ir.Program, option: str, strategy: str = "reference") -> None:
    without = outcome(program, strategy, acceleration=Acceleration().without(option))
    assert without == core_answer(program, strategy)


def test_every_speed_up_is_named_and_on_by_default():
    assert set(OPTIONS) == {"prune_rules", "staged_schedule", "resident_egraphs", "shared_requests",
                            "stated_answers", "gated_walks", "trivial_skip"}  # fmt: skip
    assert all(getattr(FlattenTileNdTo2D().acceleration, name) for name in OPTIONS)


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_corpus_program_gets_the_core_answer_with_the_speed_up_off(name, option):
    try:
        program = pl.parse(PROGRAMS[name])
    except Exception:  # the corpus also holds programs the reader rejects
        return
    assert_core_answer_without(program, option)


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
@pytest.mark.parametrize("strategy", ["reference", "optimal"])
def test_every_example_gets_the_core_answer_with_the_speed_up_off(path, strategy, option):
    for program in pl.parse_all(path.read_text()):
        assert_core_answer_without(program, option, strategy)


@pytest.mark.parametrize("option", OPTIONS)
@settings(max_examples=15, deadline=None)
@given(case=programs())
def test_generated_programs_get_the_core_answer_with_the_speed_up_off(case, option):
    assert_core_answer_without(case[0], option)


@pytest.mark.parametrize("option", OPTIONS)
@settings(max_examples=10, deadline=None)
@given(before=batch_matmul_programs())
def test_generated_batched_matmuls_get_the_core_answer_with_the_speed_up_off(before, option):
    assert_core_answer_without(before, option)
    assert_core_answer_without(before, option, "optimal")


def test_the_gates_stand_in_for_rules_of_rules_and_rules_names_no_acceleration_table():
    """accel/rules/gates.egg replaces rules of rules/ by name (and leaves out those its `left out:` line names):
    each such name is a rule of rules/, the accelerated runner loads none of them from rules/, and each rule of the
    gates' own is a gate (it reads or writes a mark) or states a page progression. No rule file of rules/ names the
    acceleration's tables, and none states a progression."""
    import re

    from pypto_egg.egraph.engine import accelerated_rule_files, gates_file
    from pypto_egg.egraph.rule_index import rule_index
    from pypto_egg.egraph.rules import shipped_rule_files
    from pypto_egg.egraph.shipped import rules_dir

    gates = gates_file()
    named = set(re.findall(r':name\s+"([^"]+)"', gates.text))
    left_out = set(" ".join(re.findall(r"^;; left out: (.+)$", gates.text, re.M)).split())
    core = {r.name for r in rule_index(tuple(shipped_rule_files())).rules}
    assert left_out and left_out <= core
    stand_ins = named & core
    assert {"last-step", "len-cons", "bcast-equal", "build-list"} <= stand_ins
    for rule in rule_index((gates,)).rules:
        if rule.name not in core:  # a gate of its own: it reads or writes one of the marks
            text = gates.text[rule.form.start : rule.form.end]
            marks = r"\b(Listed|Counted|Bcasted|Unlisted|Uncounted|Unbcasted|BPagesSame|BStoreOne|BReloadStep|BPageRows)\b"
            assert re.search(marks, text), rule.name
    loaded = rule_index(tuple(accelerated_rule_files(Acceleration()))).rules
    from_rules = {r.name for r in loaded if r.path.parent == rules_dir()}
    assert not from_rules & (stand_ins | left_out)
    assert {r.name for r in loaded if r.path == gates.path} == named
    for rule in rule_index(tuple(shipped_rule_files())).rules:
        for written in rule.directions:
            assert not written[1] & {"BPagesSame", "BStoreOne", "BReloadStep"}, rule.name
    for path in rules_dir().glob("*.egg"):
        text = path.read_text()
        for table in (
            "Listed",
            "Counted",
            "Bcasted",
            "Fact",
            "TextFact",
            "Derived",
            "Flags",
            "ListFlags",
            "PairFlags",
        ):
            assert not re.search(rf"\({table}\b", text), (path.name, table)
