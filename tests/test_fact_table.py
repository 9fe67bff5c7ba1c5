"""egglog holds the encoder's relations, the rules' relations of integers and their flags in a few shared tables
(egraph/accel/fact_table.py), while the rules, the view and the host read each by its own name."""

from __future__ import annotations

import pytest

import pypto_egg.language as pl
from pypto_egg.egraph import EGraphRun, FlattenEGraph
from pypto_egg.egraph.accel.fact_table import (
    DERIVED_TABLE,
    FACT_TABLE,
    FLAG_TABLES,
    TEXT_TABLE,
    layout,
    packed_relations,
    stored,
)
from pypto_egg.errors import RuleError

from helpers import LEGACY_TRANSPOSE_BMM, one_op_kernel

SEED = one_op_kernel("pl.add(t, t)")


def test_the_packed_relations_are_the_encoders_rows_of_integers_and_strings():
    packed = packed_relations()
    assert {r for r in ("ConsRow", "StmtVarRow", "BmmLevelRow", "PageIndexRow") if packed[r].table == FACT_TABLE} == {
        "ConsRow", "StmtVarRow", "BmmLevelRow", "PageIndexRow"
    }  # fmt: skip
    assert {r for r in ("LoadRow", "DefRow", "ConfigRow", "DBinRow") if packed[r].table == TEXT_TABLE} == {
        "LoadRow", "DefRow", "ConfigRow", "DBinRow"
    }  # fmt: skip
    # a float column and the tables themselves keep tables of their own
    assert not {"OpndFloatRow", FACT_TABLE, TEXT_TABLE, DERIVED_TABLE} & set(packed)
    cells = layout().cells
    assert cells[FACT_TABLE] == ("i64",) * len(packed["BmmLevelRow"].sorts)
    assert cells[TEXT_TABLE] == ("i64",) * 8 + ("String",) * 4  # (LoadRow's)


def test_an_atom_becomes_an_atom_of_the_fact_table_in_queries_and_actions():
    pad = " 0" * (len(layout().cells[FACT_TABLE]) - 3)
    text = '(rule ((ConsRow i h t) (= x "ConsRow")) ((delete (ConsRow i h t)) (Mark i)) :name "r") ; (ConsRow a)\n'
    assert stored(text) == (
        f'(rule (({FACT_TABLE} "ConsRow" i h t{pad}) (= x "ConsRow")) '
        f'((delete ({FACT_TABLE} "ConsRow" i h t{pad})) (Mark i)) :name "r") ; (ConsRow a)\n'
    )


def test_a_relation_with_strings_has_its_integers_first_then_its_strings():
    text = '(rule ((ConfigRow "optimal" m a\n v)) ((Seen (+ m 1))))'
    assert (
        stored(text)
        == f'(rule (({TEXT_TABLE} "ConfigRow" m a v 0 0 0 0 0 "optimal" "" "" ""\n)) ((Seen (+ m 1))))'
    )


def test_a_flag_becomes_a_flag_of_its_keys_table():
    text = "(function Dead (i64) bool :merge (or old new))\n(rule ((= (NonContig a b) false) (= (Dead s) true)) ((set (Listed l) true)))"
    assert stored(text) == (
        '\n(rule ((= (PairFlags "NonContig" a b) false) (= (Flags "Dead" s) true)) ((set (ListFlags "Listed" l) true)))'
    )
    flags = {r: st.table for r, st in packed_relations().items() if st.value == "bool"}
    assert set(flags.values()) == set(FLAG_TABLES) and flags["MatLoad"] == "Flags"
    assert "Len" not in packed_relations()  # (a function to i64 keeps its own table)


def test_a_packed_relations_declaration_goes_and_the_lines_stay():
    text = (
        "(relation ConsRow\n  (i64 i64 i64))\n(relation Mine (i64))\n(rule ((Mine i)) ((StmtVarRow i i)))\n"
    )
    out = stored(text)
    assert out.count("\n") == text.count("\n")
    assert "relation ConsRow" not in out and "(relation Mine (i64))" in out
    assert f'({FACT_TABLE} "StmtVarRow" i i 0' in out


def test_text_without_a_packed_relation_is_left_as_it_is():
    text = "(rule ((CarryFractalRow h)) ((Seen h)))"  # (a name that only contains a packed one)
    assert stored(text) == text


def test_an_atom_of_the_wrong_arity_is_an_error_naming_the_relation():
    with pytest.raises(RuleError, match=r"\(ConsRow \.\.\.\) takes 3 columns, not 2"):
        stored("(rule ((ConsRow i h)) ((Seen i)))")


def test_the_e_graph_holds_the_shared_tables_and_the_view_reads_the_relations():
    eg = FlattenEGraph(pl.parse(SEED), "main", prune_rules=False)
    eg.saturate()
    tables = set(eg.egraph.freeze().functions)
    assert {FACT_TABLE, TEXT_TABLE, DERIVED_TABLE, *FLAG_TABLES} <= tables and not tables & set(
        packed_relations()
    )
    relations = eg.view().relations
    for rel in ("StmtVarRow", "ConsRow", "ListRow", "LoadRow", "ConfigRow"):
        assert sorted(relations[rel]) == sorted(eg.encoding.rows[rel]), rel
    assert relations["BmmHeadRow"] == []  # (a packed relation the program states no row of)
    # a flag reads as a function does: its key, then its value; every list the encoder stated is Listed
    listed = relations["Listed"]
    assert {type(v) for *_, v in listed} == {bool}
    assert sum(v for *_, v in listed) >= len(eg.encoding.rows["ListRow"])
    eg.close()


def test_a_user_rule_reads_a_packed_relation_by_its_name(tmp_path):
    user = tmp_path / "user.egg"
    user.write_text(
        ";; every statement that defines a variable, marked\n"
        "(relation Defines (i64 i64))\n"
        "(rule ((StmtVarRow s v)) ((Defines s v)))\n"
    )
    eg = FlattenEGraph(pl.parse(SEED), "main", extra_rules=[user])
    eg.saturate()
    assert sorted(eg.view().relations["Defines"]) == sorted(eg.encoding.rows["StmtVarRow"])
    eg.close()


def test_a_relation_a_shipped_rule_writes_is_read_from_the_e_graph():
    # operands.egg states each operand's load (BmmBase), and transpose.egg a legacy operand's: the rules' own
    # relations, held with the others the rules derive, read from the e-graph
    assert packed_relations()["BmmBase"].table == DERIVED_TABLE
    assert packed_relations()["BPage"].table == DERIVED_TABLE
    with EGraphRun(
        pl.parse(LEGACY_TRANSPOSE_BMM), "main", backend="Ascend910B", reads=frozenset({"BmmBase"})
    ) as eg:
        eg.saturate()
        stated = {(r[0], r[1], r[3]) for r in eg.encoding.rows["BmmLevelBaseRow"]}
        assert stated and set(eg.facts("BmmBase")) - stated  # the legacy operand's load, read as a view


def test_the_host_reads_a_packed_relation_a_users_rule_writes_from_the_e_graph(tmp_path):
    user = tmp_path / "user.egg"
    user.write_text(";; a second statement id for every statement\n"
                    "(rule ((StmtVarRow s v) (< s 1000)) ((StmtVarRow (+ s 1000) v)))\n")  # fmt: skip
    reads = frozenset({"StmtVarRow"})
    with EGraphRun(pl.parse(SEED), "main", extra_rules=[user], reads=reads, reuse_rules=False) as eg:
        eg.saturate()
        stated = eg.encoding.rows["StmtVarRow"]
        assert sorted(eg.facts("StmtVarRow")) == sorted([*stated, *((s + 1000, v) for s, v in stated)])
    with EGraphRun(pl.parse(SEED), "main", reads=reads) as eg:  # (no rule writes it: the encoder's rows)
        eg.saturate()
        assert eg.facts("StmtVarRow") == eg.encoding.rows["StmtVarRow"]
