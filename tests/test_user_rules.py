"""A user's rules are as visible as the shipped ones (issue: see the e-graph): a rule written without `:name` is
named by its file and line in explain, the report and the pictures; a rule that never matched is a warning that
names it and the atom of its query nothing satisfied; a Forward plan's words name the variable."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import pypto_egg.language as pl
from pypto_egg import egraph, passes
from pypto_egg.errors import UnmatchedRuleWarning
from pypto_egg.explain import explain_program, format_explanation

from helpers import one_op_kernel

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "examples" / "my_rules.egg"  # the README's rule, written without :name
MULS = one_op_kernel("pl.tile.muls(t, 1.0)")


def test_the_readmes_rule_written_without_a_name_is_explained_by_its_file_and_line():
    text = format_explanation(
        explain_program(pl.parse(MULS), backend="Ascend910B", extra_rules=[RULES]).only_line(9)
    )
    assert "rule: my_rules.egg:4 (" in text and "my_rules.egg:4)" in text
    assert "tile.muls(x, 1.0) is x" in text  # its comment
    assert "plan: forwarded to `t`" in text  # the variable forwarded to, by name
    report = egraph.FlattenEGraph(pl.parse(MULS), "main", extra_rules=[RULES]).saturate()
    assert report.rules_fired["my_rules.egg:4"] == 1 and "my_rules.egg:4" in str(report)


@pytest.mark.parametrize("runner", ["accelerated", "core"])
def test_a_misspelt_rule_is_a_warning_naming_it_and_what_its_query_found_nothing_for(tmp_path, runner):
    typo = tmp_path / "typo.egg"
    typo.write_text(RULES.read_text().replace('"tile.muls"', '"tile.mul"'))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        flatten = passes.flatten_tile_nd_to_2d(extra_rules=[typo], runner=runner)
        flatten(pl.parse(MULS))
    found = [str(w.message) for w in caught if issubclass(w.category, UnmatchedRuleWarning)]
    assert found == [
        'rule typo.egg:4 never matched in this run: no GenericReq row has "tile.mul" as its op (this run\'s: tile.muls)'
    ]
    assert found[0] in flatten.reports[0].warnings


def test_a_rule_that_matched_gives_no_warning_and_the_shell_prints_one_that_did_not(tmp_path):
    for runner in ("accelerated", "core"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            flatten = passes.flatten_tile_nd_to_2d(extra_rules=[RULES], runner=runner)
            flatten(pl.parse(MULS))
        assert not [w for w in caught if issubclass(w.category, UnmatchedRuleWarning)], runner
        assert flatten.reports[0].rules_fired["my_rules.egg:4"] == 1, runner
    program, typo = tmp_path / "p.py", tmp_path / "typo.egg"
    program.write_text(MULS)
    typo.write_text(RULES.read_text().replace('"tile.muls"', '"tile.mul"'))
    r = subprocess.run([sys.executable, "-m", "pypto_egg.cli", "flatten", str(program), "--rules", str(typo)],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0 and pl.parse(r.stdout)
    assert (
        'pypto-egg flatten: warning: rule typo.egg:4 never matched in this run: no GenericReq row has "tile.mul"'
        in r.stderr
    )
