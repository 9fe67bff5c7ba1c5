"""Only the rules a program's facts could fire are loaded (egraph/accel/relevance.py), and that never changes an answer."""

from __future__ import annotations

import re
from pathlib import Path

from pypto_egg.egraph.accel.relevance import relevant_rules
from pypto_egg.egraph.rules import RuleFile, shipped_rule_files
from pypto_egg.extract.lower_matmul import MatmulLowerer

RULES = """(relation A (i64))
(relation B (i64))
(relation C (i64))
(relation D (i64))
(datatype T (Leaf i64) (Node T T))
(ruleset r1)
(ruleset r2)
;; A fills B, B fills C: both live when A has rows
(rule ((A x)) ((B x)) :ruleset r1 :name "a-to-b")
(rule ((B x)) ((C x)
               (Leaf x)) :ruleset r2 :name "b-to-c")
;; D is never filled, so this rule can never fire
(rule ((D x)
       (A x)) ((C x)) :ruleset r2 :name "needs-d")
;; a rewrite needs its left side and its :when tables, and fills its right side
(rewrite (Leaf x) (Node (Leaf x) (Leaf x)) :when ((C x)) :ruleset r2 :name "grow")
(birewrite (Node a b) (Node b a) :ruleset r2 :name "swap")
"""


def relevance(filled: set[str], text: str = RULES):
    return relevant_rules((RuleFile(Path("t.egg"), text),), frozenset(filled))


def test_a_rule_whose_query_names_a_table_nothing_fills_is_blanked_keeping_line_numbers():
    r = relevance({"A"})
    text = r.files[0].text
    assert '"needs-d"' not in text and '"a-to-b"' in text and '"b-to-c"' in text
    assert '"grow"' in text and '"swap"' in text  # Leaf is filled by b-to-c, Node by grow
    assert text.count("\n") == RULES.count("\n")
    assert text.splitlines().index(next(line for line in text.splitlines() if '"grow"' in line)) == next(
        i for i, line in enumerate(RULES.splitlines()) if '"grow"' in line
    )
    assert (r.kept, r.dropped) == (4, 1)
    assert r.runs("r1") and r.runs("r2") and not r.runs("")


def test_declarations_nothing_names_are_blanked_and_a_kept_table_keeps_its_sorts():
    text = (
        relevance({"A"}, RULES + "(relation E (T))\n(relation F (i64))\n(rule ((A x)) ((E (Leaf x))))\n")
        .files[0]
        .text
    )
    assert "(relation D (i64))" not in text and "(relation F (i64))" not in text  # named by no live rule
    assert "(relation E (T))" in text and "(datatype T (Leaf i64) (Node T T))" in text
    only_c = relevance({"C"}, "(datatype T (Leaf i64))\n(relation C (i64))\n(relation G (T))\n").files[0].text
    assert "(datatype T" not in only_c and "(relation G" not in only_c and "(relation C (i64))" in only_c


def test_nothing_filled_keeps_no_rule_and_no_ruleset_runs():
    r = relevance(set())
    assert (r.kept, r.dropped) == (0, 5)
    assert not r.runs("r1") and not r.runs("r2")


def test_a_top_level_fact_fills_its_table():
    r = relevance(set(), RULES + "(D 1)\n(A 2)\n")
    assert '"needs-d"' in r.files[0].text and r.dropped == 0


def test_a_file_egglog_cannot_read_keeps_every_rule():
    r = relevance({"A"}, RULES + "(rule ((A x)) ((B x))")
    assert r.runs("anything") and r.files[0].text.endswith("((B x))")


def test_the_shipped_rules_a_2d_free_elementwise_program_needs_leave_the_batched_matmul_family_out():
    seed = {"DConstRow", "ConsRow", "ListRow", "OpndVarRow", "LoadRow", "StoreRow", "GenericRow", "ContigRow",
            "OverflowRow", "CapacityRow", "ConfigRow", "StmtVarRow", "PageIndexRow"}  # fmt: skip
    r = relevant_rules(tuple(shipped_rule_files()), frozenset(seed))
    assert r.kept < r.dropped
    assert r.runs("load") and r.runs("store") and r.runs("generic") and r.runs("arith")
    assert not r.runs("bmm") and not r.runs("pack") and not r.runs("route") and not r.runs("transpose")
    text = "".join(f.text for f in r.files)
    assert '"load-non-mat-keeps-window"' in text and '"store-own-window"' in text and r.runs("window")
    assert '"bmm-route-whole"' not in text
    assert "(relation BmmReq" not in text and "(relation LoadReq" in text and "(sort Plan)" in text
    # each plan a table of its own: those no kept rule states are left out (each table costs on push and pop)
    assert "(constructor LoadFlat " in text and "(constructor BatchMatmul " not in text
    assert "(constructor TransposeUnroll " not in text


def test_the_pass_leaves_out_the_rules_that_build_terms_only_explain_reads():
    """With plans only read (the pass), the operand lists of requests, which no shipped rule matches, are not
    built, and their fact rows are not loaded; explain and the pictures (every term read) keep them."""
    seed = frozenset({"DConstRow", "ConsRow", "OpndVarRow", "LoadRow", "StoreRow",
                      "GenericRow", "CapacityRow", "ConfigRow", "StmtVarRow", "PageIndexRow"})  # fmt: skip
    full = relevant_rules(tuple(shipped_rule_files()), seed)
    plans = relevant_rules(tuple(shipped_rule_files()), seed, MatmulLowerer.FACTS)
    assert '"build-ovar"' in "".join(f.text for f in full.files)
    text = "".join(f.text for f in plans.files)
    assert '"build-ovar"' not in text and '"build-generic"' in text and "(constructor OCons " not in text
    assert full.facts == seed and plans.facts is not None and "OpndVarRow" not in plans.facts
    assert "GenericRow" in plans.facts and plans.kept < full.kept


def test_the_lowering_names_every_relation_it_reads():
    """The pass loads only the rules whose work someone reads: the plans, and the relations the lowering reads,
    which it names (`Lowerer.FACTS`); a relation read but not named would be left empty."""
    root = Path(__file__).resolve().parents[1] / "extract"
    read = set()
    for path in root.glob("*.py"):
        read |= set(re.findall(r'(?:facts|rows)\("(\w+)"\)', path.read_text()))
    assert read and read <= MatmulLowerer.FACTS
