"""Facts for the batched matmul family: operands peeled and their loads found (B-130, B-118), reference counts
per block (B-110, B-111), and the same-buffer alias graph with how each variable is defined and used (B-170).

Everything here is structure written down as data; which operands are batch-matmul-only, how they are routed,
which chains pack and how, is decided by rules/prescan.egg, packing.egg, rowwindows.egg and bmm.egg.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

from ..errors import InternalError
from ..ir.deduce_matmul import _matmul_dtype
from ..ir.expr import BinOp, Call, Expr, MakeTuple, Var, static_int, type_of
from ..ir.stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    Function,
    IfStmt,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from ..ir.tiles import tile_nbytes
from ..ir.types import TensorType, TileType
from ..ir.walk import blocks, walk_calls
from ..rules import schema
from ..rules.schema import ROW
from .encode import BMM_OPS, BmmInfo, Encoding


def _reshape_of_tile(call: Call) -> bool:
    """A `tile.reshape` of a tile into a tile, both of rank 2 or more: what a batched matmul's operand may be read
    through, when rules/operands.egg finds that it only regroups batch axes (B-120)."""
    if call.op != "tile.reshape" or len(call.args) != 2:
        return False
    src, dst = type_of(call.args[0]), call.type
    return isinstance(src, TileType) and isinstance(dst, TileType) and src.rank >= 2 and dst.rank >= 2


_TRANSPOSE_VIEW, _LEGACY_TRANSPOSE = 1, 2


def _view_kind(call: Call) -> int:
    """What an operand's definition is to the batched matmul: 1 a transpose_view, 2 a legacy tile.transpose
    (3 or 4 operands; whether it swaps the last two axes is for the rules), 0 anything else."""
    if call.op == "tile.transpose_view":
        return _TRANSPOSE_VIEW
    if call.op == "tile.transpose" and len(call.args) in (3, 4):
        return _LEGACY_TRANSPOSE
    return 0


def _matmul_dtype_differs(lhs: TileType, rhs: TileType, result: object) -> bool:
    return isinstance(result, TileType) and _matmul_dtype("tile.matmul", lhs, rhs) != result.dtype


def batch_matmuls(enc: Encoding, fn: Function) -> None:
    """One BmmHeadRow per batched matmul and each operand's levels, peeled through reshapes (which of them it reads
    is decided by rules/operands.egg, B-120, B-130): whether each is a
    transpose_view, their whole byte sizes, and the store that immediately consumes the result (B-133)."""
    # what an operand is (a view, a safe reshape) does not depend on the block; its load is looked up per block
    defs = {
        s.var.uid: s.value
        for s, _ in walk_calls(fn.body)
        if isinstance(s, AssignStmt) and isinstance(s.value, Call)
    }
    for block in blocks(fn.body):
        flat = [s for s in block if not isinstance(s, SeqStmts)]
        block_defs = {x.var.uid: x for x in flat if isinstance(x, AssignStmt)}
        for k, s in enumerate(flat):
            if not isinstance(s, AssignStmt) or not isinstance(s.value, Call) or s.value.op not in BMM_OPS:
                continue
            call = s.value
            sid = enc.stmt_ids[id(s)]
            kind = 0 if call.op == "tile.batch_matmul" else 1
            ops = call.args[kind : kind + 2]
            # each operand as it is, then each reshape it was made by, down to the first that is not one: which of
            # them the matmul reads is the rules' (B-120, rules/operands.egg)
            levels: list[list[Expr]] = []
            for side, orig in enumerate(ops):
                chain = [orig]
                while (
                    isinstance(chain[-1], Var)
                    and chain[-1].uid in defs
                    and _reshape_of_tile(defs[chain[-1].uid])
                ):
                    chain.append(defs[chain[-1].uid].args[0])
                levels.append(chain)
                for level, e in enumerate(chain):
                    _operand_level(enc, sid, side, level, e, level == len(chain) - 1, defs, block_defs)
                if isinstance(orig, Var):
                    enc.rows["BmmOpVarRow"].append(ROW.BmmOpVarRow(stmt=sid, side=side, var=orig.uid))
            types = [type_of(e) for e in ops]
            if not all(isinstance(t, TileType) for t in types):
                raise InternalError(f"{call.op} operands must be tiles")
            lt, rt = types
            assert isinstance(lt, TileType) and isinstance(rt, TileType)
            if (
                len(levels[0]) == len(levels[1]) == 1
            ):  # nothing to peel: the geometry of the operands as they are
                enc.bmm_geometry(sid, enc.broadcast(lt.shape[:-2], rt.shape[:-2]), lt.shape, rt.shape)
            else:
                enc.rows["BmmUnmeasuredRow"].append(ROW.BmmUnmeasuredRow(stmt=sid))
            nxt = flat[k + 1] if k + 1 < len(flat) else None
            store = None
            if (isinstance(nxt, AssignStmt) and isinstance(nxt.value, Call) and nxt.value.op == "tile.store"
                    and nxt.value.args[0] is s.var):  # fmt: skip
                store = nxt
            # a reshape keeps the element count and type: the bytes and the cast are the same at every level
            enc.rows["BmmHeadRow"].append(ROW.BmmHeadRow(
                stmt=sid, kind=kind, lhs_bytes=_bytes(lt), rhs_bytes=_bytes(rt),
                store_stmt=enc.stmt_ids[id(store)] if store is not None else -1,
                cast=int(_matmul_dtype_differs(lt, rt, s.var.type)),
            ))  # fmt: skip
            # what a staging tile of the pages would hold (the optimal strategy's option)
            if store is not None:
                enc.rows["BmmOutRow"].append(ROW.BmmOutRow(stmt=sid, bytes=_bytes(s.var.type)))
            enc.bmm[sid] = BmmInfo((tuple(levels[0]), tuple(levels[1])), call.args[0] if kind else None,
                                   call.args[3] if kind and len(call.args) > 3 else None, store)  # fmt: skip


def _operand_level(
    enc: Encoding, sid: int, side: int, level: int, e: Expr, last: bool, defs: dict[int, Call],
    block_defs: dict[int, AssignStmt],
) -> None:  # fmt: skip
    """One level of a batched matmul's operand: its shape, each dim at its axis, whether it is a view of a load
    (and which load), and, for a legacy tile.transpose, its variable (B-100, B-118)."""
    t = type_of(e)
    if not isinstance(t, TileType):
        raise InternalError("a batched matmul's operand must be a tile")
    view = _view_kind(defs[e.uid]) if isinstance(e, Var) and e.uid in defs else 0
    base = defs[e.uid].args[0] if view and isinstance(e, Var) else e
    load_stmt = block_defs.get(base.uid) if isinstance(base, Var) else None
    load = load_stmt.value if load_stmt is not None and isinstance(load_stmt.value, Call) else None
    base_sid = (
        enc.stmt_ids[id(load_stmt)] if load is not None and load.op == "tile.load" and load_stmt else -1
    )
    enc.rows["BmmLevelRow"].append(ROW.BmmLevelRow(
        stmt=sid, side=side, level=level, var=e.uid if isinstance(e, Var) else -1, dims=enc.dims(t.shape),
        view=view, rank=t.rank, last=int(last),
    ))  # fmt: skip
    if view == _LEGACY_TRANSPOSE and isinstance(e, Var):  # read through it or not: rules decide (B-100)
        enc.rows["BmmLevelLegacyRow"].append(
            ROW.BmmLevelLegacyRow(stmt=sid, side=side, level=level, transpose_var=e.uid, load_stmt=base_sid)
        )
    else:
        enc.rows["BmmLevelBaseRow"].append(
            ROW.BmmLevelBaseRow(stmt=sid, side=side, level=level, load_stmt=base_sid)
        )
    if base_sid >= 0:
        enc.load_offsets_2d(base_sid)
    enc.rows["BmmLevelDimRow"] += [
        ROW.BmmLevelDimRow(stmt=sid, side=side, level=level, axis=axis, dim=enc.dim(d))
        for axis, d in enumerate(t.shape)
    ]


def _refs(e: object, out: list[int]) -> None:
    """Every variable reference in an expression, with repeats."""
    if isinstance(e, Var):
        out.append(e.uid)
    elif isinstance(e, BinOp):
        _refs(e.lhs, out)
        _refs(e.rhs, out)
    elif isinstance(e, MakeTuple):
        for x in e.elements:
            _refs(x, out)
    elif isinstance(e, Call):
        for x in e.args:
            _refs(x, out)
    elif hasattr(e, "operand"):
        _refs(e.operand, out)  # type: ignore[attr-defined]
    elif hasattr(e, "tuple"):
        _refs(e.tuple, out)  # type: ignore[attr-defined]


def _all_refs(stmts: tuple[Stmt, ...], out: list[int]) -> None:
    for s in stmts:
        if isinstance(s, AssignStmt):
            _refs(s.value, out)
        elif isinstance(s, EvalStmt):
            _refs(s.expr, out)
        elif isinstance(s, YieldStmt | ReturnStmt):
            for v in s.values:
                _refs(v, out)
        elif isinstance(s, SeqStmts):
            _all_refs(s.stmts, out)
        elif isinstance(s, ScopeStmt):
            _all_refs(s.body, out)
        elif isinstance(s, IfStmt):
            _refs(s.condition, out)
            _all_refs(s.then_body, out)
            _all_refs(s.else_body or (), out)
        elif isinstance(s, ForStmt):
            for x in (s.start, s.stop, s.step, *(ia.init for ia in s.iter_args)):
                _refs(x, out)
            _all_refs(s.body, out)
        elif isinstance(s, WhileStmt):
            _refs(s.condition, out)
            for ia in s.iter_args:
                _refs(ia.init, out)
            _all_refs(s.body, out)


def operand_prescan(enc: Encoding, fn: Function) -> None:
    """Reference counts per block (B-110, B-111) for the variables a block defines, as facts: the rules decide
    which are used only as batched-matmul operands (B-112, B-113)."""
    iter_vars = {ia.var.uid for s in _loops(fn.body) for ia in s.iter_args}
    for block in blocks(fn.body):
        flat = [s for s in block if not isinstance(s, SeqStmts)]
        top: Counter[int] = Counter()
        occ: Counter[int] = Counter()
        for s in flat:
            if isinstance(s, AssignStmt) and isinstance(s.value, Call):
                call = s.value
                lo = 0 if call.op == "tile.batch_matmul" else 1 if call.op == "tile.batch_matmul_acc" else -1
                for j, a in enumerate(call.args):
                    if isinstance(a, Var) and a.uid not in iter_vars:
                        top[a.uid] += 1
                        if lo >= 0 and lo <= j < lo + 2:
                            occ[a.uid] += 1
            else:
                refs: list[int] = []
                if isinstance(s, AssignStmt | EvalStmt | YieldStmt | ReturnStmt):
                    _all_refs((s,), refs)
                elif isinstance(s, IfStmt):
                    _refs(s.condition, refs)
                elif isinstance(s, ForStmt):
                    for x in (s.start, s.stop, s.step, *(ia.init for ia in s.iter_args)):
                        _refs(x, refs)
                elif isinstance(s, WhileStmt):
                    _refs(s.condition, refs)
                    for ia in s.iter_args:
                        _refs(ia.init, refs)
                top.update(refs)
        every: list[int] = []
        _all_refs(block, every)
        total = Counter(every)
        for s in flat:
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) and not s.value.is_function:
                v = s.var.uid
                enc.rows["RefRow"].append(ROW.RefRow(var=v, bmm_uses=occ[v], top_uses=top[v], uses=total[v]))
                arg0 = s.value.args[0] if s.value.args else None
                enc.rows["DefRow"].append(
                    ROW.DefRow(var=v, op=s.value.op, arg_var=arg0.uid if isinstance(arg0, Var) else -1)
                )
                if _reshape_of_tile(s.value):  # whether it only regroups batch axes is the rules' (B-120)
                    src_t = type_of(s.value.args[0])
                    assert isinstance(src_t, TileType) and isinstance(s.value.type, TileType)
                    enc.rows["ReshapeShapeRow"].append(ROW.ReshapeShapeRow(
                        var=v, src=enc.dims(src_t.shape, shape=False), dst=enc.dims(s.value.type.shape, shape=False)
                    ))  # fmt: skip


def _loops(body: tuple[Stmt, ...]) -> Iterator[ForStmt | WhileStmt]:
    for block in blocks(body):
        for s in block:
            if isinstance(s, ForStmt | WhileStmt):
                yield s


def _own_yields(body: tuple[Stmt, ...]) -> list[YieldStmt]:
    out: list[YieldStmt] = []
    for s in body:
        if isinstance(s, YieldStmt):
            out.append(s)
        elif isinstance(s, SeqStmts):
            out += _own_yields(s.stmts)
        elif isinstance(s, ScopeStmt):
            out += _own_yields(s.body)
    return out


def accumulator_facts(enc: Encoding, fn: Function, sids: range | None = None) -> None:
    """The same-buffer alias graph of the function (B-170) as facts: edges, how each variable is defined and
    used, and its type. The rules find the chains (connected components) and decide how each is packed.

    A chain is a component of the edges seeded by a batched accumulator or a 2-D window, so only variables
    the edges, the seeds and the windows mention can be members: the per-variable facts are written for
    those alone (a kernel without accumulators writes none)."""
    graph = _AliasGraph(enc)
    for p in fn.params:
        graph.var_info(p.var)
        graph.rows["PoisonRow"].append(ROW.PoisonRow(var=p.var.uid))
    graph.walk(fn.body)
    for sid in sids if sids is not None else range(len(enc.statements)):
        call = enc.statements[sid][1]
        if call.op == "tile.batch_matmul_acc" and isinstance(call.args[0], Var):
            graph.var_info(call.args[0])
            graph.rows["BmmAccRow"].append(ROW.BmmAccRow(stmt=sid, acc_var=call.args[0].uid))
    for rel, new in graph.member_rows().items():
        enc.rows[rel] += new


def kept_tile_facts(enc: Encoding, fn: Function, sids: range, aliases: bool) -> None:
    """What the rules need to follow the tiles the pass keeps N-D (kept.egg), for a function with a tile
    parameter of rank > 2: those parameters, the tile variable each statement reads at each place, and the
    alias edges (B-170) when the accumulator facts do not already state them."""
    nd = [p.var for p in fn.params if isinstance(p.var.type, TileType) and p.var.type.rank > 2]
    if not nd:
        return
    enc.rows["NdParamRow"] += [ROW.NdParamRow(var=v.uid, rank=v.type.rank) for v in nd]  # type: ignore[union-attr]
    for sid in sids:
        for place, a in enumerate(enc.statements[sid][1].args):
            if isinstance(a, Var) and isinstance(a.type, TileType):
                enc.rows["ReadsRow"].append(ROW.ReadsRow(stmt=sid, place=place, var=a.uid))
    if aliases:
        graph = _AliasGraph(enc)
        graph.walk(fn.body)
        enc.rows["AliasRow"] += graph.rows["AliasRow"]


class _AliasGraph:
    """The rows of one function's alias graph, gathered statement by statement."""

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        self.rows: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
        self.seen: dict[int, Var] = {}

    def var_info(self, v: Var) -> None:
        if v.uid not in self.seen and isinstance(v.type, TileType):
            self.seen[v.uid] = v

    def use(self, e: object, kind: str, sid: int = -1) -> None:
        refs: list[int] = []
        _refs(e, refs)
        for r in refs:
            self.rows["UseKindRow"].append(ROW.UseKindRow(var=r, kind=kind, use_stmt=sid))

    def edge(self, a: Var, b: object) -> None:
        if isinstance(b, Var):
            self.var_info(a)
            self.var_info(b)
            self.rows["AliasRow"].append(ROW.AliasRow(var=a.uid, other_var=b.uid))

    def record_window(self, sid: int, v: Var, op: str, args: tuple[Expr, ...]) -> None:
        """2-D windows of a parent tile and writebacks into it (the row-window facts, B-180)."""
        enc = self.enc
        if (
            op == "tile.slice"
            and isinstance(args[0], Var)
            and all(isinstance(a, MakeTuple) for a in args[1:3])
        ):
            shape, offs = args[1], args[2]
            assert isinstance(shape, MakeTuple) and isinstance(offs, MakeTuple)
            self.rows["SliceRow"].append(ROW.SliceRow(
                stmt=sid, var=v.uid, parent_var=args[0].uid, shape=enc.dims(shape.elements),
                offset=enc.dims(offs.elements, shape=False), has_valid=int(len(args) > 3),
            ))  # fmt: skip
        if (
            op == "tile.assemble"
            and isinstance(args[0], Var)
            and isinstance(args[1], Var)
            and isinstance(args[2], MakeTuple)
        ):
            self.rows["InsertRow"].append(ROW.InsertRow(
                stmt=sid, var=v.uid, parent_var=args[0].uid, source_var=args[1].uid,
                offset=enc.dims(args[2].elements, shape=False),
            ))  # fmt: skip

    def walk(self, body: tuple[Stmt, ...]) -> None:
        for s in body:
            if isinstance(s, AssignStmt):
                self.assign(s)
            elif isinstance(s, EvalStmt):
                self.use(s.expr, "other")
            elif isinstance(s, ReturnStmt):
                for x in s.values:
                    self.use(x, "other")
            elif isinstance(s, SeqStmts):
                self.walk(s.stmts)
            elif isinstance(s, ScopeStmt):
                self.walk(s.body)
            elif isinstance(s, IfStmt):
                self.if_stmt(s)
            elif isinstance(s, ForStmt | WhileStmt):
                self.loop(s)
            # a YieldStmt adds nothing: the carries join yields to their loop or if

    def assign(self, s: AssignStmt) -> None:
        rows = self.rows
        v, value = s.var, s.value
        self.var_info(v)
        if isinstance(value, Var):
            self.edge(v, value)
            rows["DefKindRow"].append(ROW.DefKindRow(var=v.uid, kind="alias"))
            return
        if not (isinstance(value, Call) and not value.is_function):
            self.use(value, "other")
            return
        op, args = value.op, value.args
        sid = self.enc.stmt_ids.get(id(s), -1)
        self.record_window(sid, v, op, args)
        if op in ("tile.batch_matmul_acc", "tile.matmul_acc", "tile.assemble") and isinstance(args[0], Var):
            self.edge(v, args[0])
            rows["DefKindRow"].append(
                ROW.DefKindRow(var=v.uid, kind="accumulate" if op != "tile.assemble" else "insert")
            )
            rest = args[1:]
        else:
            rows["DefKindRow"].append(
                ROW.DefKindRow(
                    var=v.uid, kind={"tile.create": "create", "tile.batch_matmul": "bmm"}.get(op, op)
                )
            )
            rest = args
            if args and isinstance(args[0], Var):
                first = args[0]
                if op == "tile.store":
                    offs = args[1]
                    dst = type_of(args[2])
                    ok = (len(args) == 3 and isinstance(offs, MakeTuple) and isinstance(dst, TensorType)
                          and isinstance(first.type, TileType) and len(offs.elements) == first.type.rank
                          and dst.rank == first.type.rank)  # fmt: skip
                    rows["UseKindRow"].append(
                        ROW.UseKindRow(
                            var=first.uid, kind="drain-store" if ok else "tile.store", use_stmt=sid
                        )
                    )
                    rest = args[1:]
                elif op == "tile.move":
                    rows["UseKindRow"].append(ROW.UseKindRow(var=first.uid, kind="drain-move", use_stmt=sid))
                    rest = args[1:]
        for a in rest:
            self.use(a, f"operand:{op}")

    def if_stmt(self, s: IfStmt) -> None:
        self.use(s.condition, "other")
        self.walk(s.then_body)
        self.walk(s.else_body or ())
        ty, ey = _own_yields(s.then_body), _own_yields(s.else_body or ())
        ok = len(ty) == 1 and len(ey) == 1 and s.else_body is not None
        for i, rv in enumerate(s.return_vars):
            self.var_info(rv)
            self.rows["DefKindRow"].append(ROW.DefKindRow(var=rv.uid, kind="carry"))
            if ok and i < len(ty[0].values) and i < len(ey[0].values):
                self.edge(rv, ty[0].values[i])
                self.edge(rv, ey[0].values[i])
            else:
                self.rows["PoisonRow"].append(ROW.PoisonRow(var=rv.uid))

    def loop(self, s: ForStmt | WhileStmt) -> None:
        rows = self.rows
        if isinstance(s, ForStmt):
            for x in (s.start, s.stop, s.step):
                self.use(x, "other")
        else:
            self.use(s.condition, "other")
        self.walk(s.body)
        ys = _own_yields(s.body)
        for i, ia in enumerate(s.iter_args):
            self.var_info(ia.var)
            rows["DefKindRow"].append(ROW.DefKindRow(var=ia.var.uid, kind="carry"))
            if isinstance(ia.init, Var):
                self.edge(ia.var, ia.init)
            else:
                self.use(ia.init, "other")
                rows["PoisonRow"].append(ROW.PoisonRow(var=ia.var.uid))
            ret = s.return_vars[i] if i < len(s.return_vars) else None
            if ret is not None:
                self.var_info(ret)
                rows["DefKindRow"].append(ROW.DefKindRow(var=ret.uid, kind="carry"))
                self.edge(ret, ia.var)
            if len(ys) == 1 and len(ys[0].values) == len(s.iter_args):
                self.edge(ia.var, ys[0].values[i])
            else:
                rows["PoisonRow"].append(ROW.PoisonRow(var=ia.var.uid))
                if ret is not None:
                    rows["PoisonRow"].append(ROW.PoisonRow(var=ret.uid))

    def member_rows(self) -> dict[str, list[tuple[Any, ...]]]:
        """The rows of the variables a chain can hold: those the edges, the seeds and the windows mention."""
        rows = self.rows
        members = {u for r in schema.rows("AliasRow", rows["AliasRow"]) for u in (r.var, r.other_var)}
        members |= {r.acc_var for r in schema.rows("BmmAccRow", rows["BmmAccRow"])}
        members |= {u for r in schema.rows("SliceRow", rows["SliceRow"]) for u in (r.var, r.parent_var)}
        members |= {
            u
            for r in schema.rows("InsertRow", rows["InsertRow"])
            for u in (r.var, r.parent_var, r.source_var)
        }
        for rel in ("DefKindRow", "UseKindRow", "PoisonRow"):  # (each keyed by its variable first)
            var = schema.declared(rel).index("var")
            rows[rel] = [r for r in rows[rel] if r[var] in members]
        for uid in sorted(members & self.seen.keys()):
            t = self.seen[uid].type
            assert isinstance(t, TileType)
            static = all(static_int(d) is not None for d in t.shape)
            partial = any(not (static_int(a) is not None and static_int(a) == static_int(b))
                          for a, b in zip(t.valid_shape, t.shape))  # fmt: skip
            mem = t.memory.value if t.memory is not None else "none"
            rows["AccVarRow"].append(ROW.AccVarRow(
                var=uid, shape=self.enc.dims(t.shape), element_bytes=t.dtype.nbytes, memory=mem, partial=int(partial),
                static=int(static),
            ))  # fmt: skip
            if t.memref is not None:
                rows["MemRefRow"].append(ROW.MemRefRow(var=uid))
        return rows


def _bytes(t: object) -> int:
    """A tile's size for the capacity facts; -1 where it is not static (the rules read -1 as unknown)."""
    n = tile_nbytes(t) if isinstance(t, TileType) else None
    return n if n is not None else -1
