"""Statements that ask the e-graph the same question share one request (egraph/accel/shared_requests.py), and that never
changes an answer: the plans, the lowered program and its meaning are those of one request per statement (over
the corpus, the examples and generated programs: tests/test_pass_options.py)."""

from __future__ import annotations

import pypto_egg.language as pl
from pypto_egg import ir
from pypto_egg.egraph import EGraphRun
from pypto_egg.egraph.accel import Acceleration
from pypto_egg.egraph.accel.shared_requests import REQUEST_RELATIONS, STATEMENT_COLUMNS
from pypto_egg.egraph.encode import RELATIONS
from pypto_egg.extract.lower_matmul import MatmulLowerer
from pypto_egg.passes.flatten import FlattenTileNdTo2D
from pypto_egg.rules.schema import declared

from corpus import PROGRAMS
from helpers import check_meaning

# two kernels of repeated element-wise ops on one shape, their loads and stores alike but for the tensors
REPEATED = """
import pypto_egg.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k0(self, x: pl.Tensor[[2, 3, 8], pl.FP32], y: pl.Tensor[[2, 3, 8], pl.FP32],
           out: pl.Out[pl.Tensor[[2, 3, 8], pl.FP32]]) -> pl.Tensor[[2, 3, 8], pl.FP32]:
        a = pl.load(x, [0, 0, 0], [2, 3, 8])
        b = pl.load(y, [0, 0, 0], [2, 3, 8])
        c = pl.tile.exp(a)
        d = pl.tile.exp(b)
        e = pl.tile.add(c, d)
        f = pl.tile.add(e, a)
        out = pl.store(f, [0, 0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def k1(self, x: pl.Tensor[[2, 3, 8], pl.FP32], out: pl.Out[pl.Tensor[[2, 3, 8], pl.FP32]]
           ) -> pl.Tensor[[2, 3, 8], pl.FP32]:
        a = pl.load(x, [0, 0, 0], [2, 3, 8])
        c = pl.tile.exp(a)
        out = pl.store(c, [0, 0, 0], out)
        return out
"""


def run(program: ir.Program, share: bool, reads: frozenset[str] | None = MatmulLowerer.FACTS) -> EGraphRun:
    names = [f.name for f in program.functions if f.type.is_incore]
    return EGraphRun(program, names, "Ascend910B", reads=reads, share_requests=share)


def test_every_fact_relation_names_its_fields_and_so_where_it_names_statements():
    """A relation of rules/encode.egg names its fields in its declaration; those named `stmt` or `<x>_stmt` are
    the columns that name statements, which requests are never shared past."""
    assert not set(REQUEST_RELATIONS) & set(STATEMENT_COLUMNS)
    assert set(RELATIONS) == set(REQUEST_RELATIONS) | set(STATEMENT_COLUMNS)
    for rel in RELATIONS:
        d = declared(rel)
        assert d.fields is not None and len(d.fields) == len(d.sorts), (
            f"{rel} ({d.file}:{d.line}) names no fields"
        )
    assert all(declared(rel).fields[0] == "stmt" for rel in REQUEST_RELATIONS)  # a request's statement first
    assert STATEMENT_COLUMNS["BmmHeadRow"] == (0, 4) and STATEMENT_COLUMNS["UseKindRow"] == (2,)
    assert STATEMENT_COLUMNS["BmmLevelBaseRow"] == (0, 3) and STATEMENT_COLUMNS["RefRow"] == ()


def test_repeated_questions_share_one_request_and_get_each_statement_the_same_plans():
    program = pl.parse(REPEATED)
    with run(program, True) as shared, run(program, False) as own:
        statements = shared.report.statements
        assert statements == own.report.statements == 10
        # the three loads are one request, so are the three exps and the two stores; the two adds differ in nothing
        # the rules read either (their operands are not stated), so they are one too
        assert shared.report.requests == 4 and own.report.requests == 10
        assert len(shared.encoding.rows["GenericRow"]) == 2 and len(own.encoding.rows["GenericRow"]) == 5
        plans = {sid: str(plan) for sid, plan in shared.plan_terms().items()}
        assert plans == {sid: str(plan) for sid, plan in own.plan_terms().items()}
        assert len(plans) == statements and "None" not in plans.values()
    after = FlattenTileNdTo2D(backend=None)(program)
    ir.assert_structural_equal(
        after, FlattenTileNdTo2D(acceleration=Acceleration(shared_requests=False))(program)
    )
    check_meaning(program, after)


def test_explain_and_user_rules_keep_a_request_per_statement(tmp_path):
    """explain and the pictures read every statement's own rows; a user's rule may tell statements apart by id."""
    program = pl.parse(REPEATED)
    with run(program, True, reads=None) as everything:
        assert everything.report.requests == everything.report.statements
    rules = tmp_path / "user.egg"
    rules.write_text(';; a rule of a user\'s file\n(rule ((GenericReq s "tile.exp" args sh)) ((Chose s (Keep)))'
                     ' :name "user-keep-exp")\n')  # fmt: skip
    names = [f.name for f in program.functions]
    with EGraphRun(program, names, extra_rules=[rules], reads=MatmulLowerer.FACTS) as user:
        assert user.report.requests == user.report.statements


def test_a_statement_another_row_names_keeps_its_own_request():
    """A store given its partition is named by StoreGivenRow, a batched matmul's operand loads by BmmLevelBaseRow: the rules
    may tell them apart from their look-alikes, so they are never shared."""
    given = REPEATED.replace(
        "out = pl.store(f, [0, 0, 0], out)", "out = pl.store(f, [0, 0, 0], out, [2, 3, 8])"
    )
    given = given.replace("out = pl.store(c, [0, 0, 0], out)", "out = pl.store(c, [0, 0, 0], out, [2, 3, 8])")
    with run(pl.parse(given), True) as eg:
        stores = [sid for sid, (_, call) in enumerate(eg.encoding.statements) if call.op == "tile.store"]
        assert len(stores) == 2 and not set(stores) & set(eg.encoding.shared)
    bmm = pl.parse(PROGRAMS["batch_matmul"])
    with run(bmm, True) as eg:
        bases = {r[3] for r in eg.encoding.rows["BmmLevelBaseRow"] if r[3] >= 0}
        assert bases and not bases & set(eg.encoding.shared)
