"""The encoder's entry: the facts of several functions in one encoding, the batched-matmul and accumulator
facts (encode_matmul.py) beside the per-statement ones (encode.py)."""

from __future__ import annotations

from collections.abc import Sequence

from ..backend import Backend, fractal_rows
from ..ir.expr import INT64_MAX
from ..ir.stmt import AssignStmt, Function
from ..ir.types import MemorySpace
from ..ir.walk import walk_calls
from ..rules.schema import ROW
from .encode import BMM_OPS, Encoding
from .encode_matmul import accumulator_facts, batch_matmuls, kept_tile_facts, operand_prescan


def encode_functions(
    fns: Sequence[Function],
    backend: Backend | None,
    strategy: str = "reference",
    operand_lists: bool = True,
    page_rows: int | None = None,
    state_answers: bool = True,
) -> Encoding:
    """Requests for every assigned tile op (an evaluated call is only substituted and re-deduced, B-026), for
    several functions in one encoding, so one saturation serves them all. Statement ids,
    variables and dimension terms are unique across the functions, and no rule relates two statements of
    different functions except through the backend's budgets, which they share. `page_rows`: the most page
    indices stated (None: every index below the page bound); a host stating fewer states the rest a rule asks
    for (`PagesWanted`). `state_answers`: see `Encoding.state_answers`."""
    enc = Encoding(
        fractal_rows=fractal_rows(backend), operand_lists=operand_lists, state_answers=state_answers
    )
    for fn in fns:
        start = len(enc.statements)
        for s, call in walk_calls(fn.body):
            if isinstance(s, AssignStmt):
                enc.statement(s, call)
        sids = range(start, len(enc.statements))
        ops = {enc.statements[i][1].op for i in sids}
        # facts no rule could read are not written: the operand pre-scan serves batched matmuls only, and an
        # accumulator chain is seeded by a batch_matmul_acc or by a window a matmul_acc accumulates into
        if ops & set(BMM_OPS):
            batch_matmuls(enc, fn)
            operand_prescan(enc, fn)
        accumulates = bool(ops & {"tile.batch_matmul_acc", "tile.matmul_acc"})
        if accumulates:
            accumulator_facts(enc, fn, sids)
        kept_tile_facts(enc, fn, sids, aliases=not accumulates)
        enc.function_sids[fn.name] = sids
    stated = enc.page_bound if page_rows is None else min(enc.page_bound, page_rows)
    enc.rows["PageIndexRow"] = [ROW.PageIndexRow(index=i) for i in range(stated)]
    enc.rows["FractalRow"] = [ROW.FractalRow(rows=enc.fractal_rows)]
    for st, sid in ((st, sid) for sid, (st, _) in enumerate(enc.statements)):
        if isinstance(st, AssignStmt):
            enc.rows["StmtVarRow"].append(ROW.StmtVarRow(stmt=sid, var=st.var.uid))
    # the strategy and the budgets in one row (one fact file the fewer per program): Mat, Acc and Vec bytes
    capacity = backend.capacity if backend is not None else {}
    mat, acc, vec = (capacity.get(m) for m in (MemorySpace.Mat, MemorySpace.Acc, MemorySpace.Vec))
    enc.rows["ConfigRow"] = [
        ROW.ConfigRow(
            strategy=strategy,
            mat=mat if mat is not None else INT64_MAX,
            acc=acc or INT64_MAX,
            vec=vec or INT64_MAX,
        )
    ]
    if backend is not None:
        for space, nbytes in backend.capacity.items():
            enc.rows["CapacityRow"].append(ROW.CapacityRow(memory=space.value, bytes=nbytes))
    return enc
