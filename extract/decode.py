"""Dimension terms back to IR expressions: the lowering's one reader of the plans' shapes, offsets and windows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pypto_egg.errors import InternalError
from pypto_egg.ir.expr import BinOp, ConstInt, Expr
from pypto_egg.ir.span import Span

from .term import Term, as_int

if TYPE_CHECKING:
    from pypto_egg.egraph.encode import Encoding

_DIM_OPS = {"DAdd": "add", "DSub": "sub", "DMul": "mul", "DDiv": "floordiv", "DMod": "mod", "DMin": "min",
            "DMax": "max"}  # fmt: skip


class TermDecoder:
    """Dimension terms back to IR expressions, through the encoder's symbol table."""

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        # terms are shared per e-class, so many statements (and the pages of one) decode the same list term;
        # IR is immutable, so they share its expressions, decoded once per term and span (both kept with
        # the result, so the ids in the key always name live objects)
        self._decoded: dict[tuple[int, int], tuple[Term, Span | None, tuple[Expr, ...]]] = {}
        # and the constants among them, one object per value and span (the pages of a batch repeat a few values)
        self._consts: dict[tuple[int, int], tuple[Span | None, ConstInt]] = {}

    def dim(self, t: Term | Any, span: Span | None = None) -> Expr:
        """A dimension term as an IR expression; new nodes carry `span` (the call they belong to, B-029)."""
        if not isinstance(t, Term):
            raise InternalError(f"expected a dimension term, got {t!r}")
        if t.op == "DC":
            return self.const(as_int(t.args[0]), span)
        if t.op == "DSym":
            return self.enc.symbols[str(t.args[0])]
        if t.op in _DIM_OPS:
            return BinOp(_DIM_OPS[t.op], self.dim(t.args[0], span), self.dim(t.args[1], span), span)
        raise InternalError(f"cannot decode dimension term {t}")

    def const(self, value: int, span: Span | None = None) -> ConstInt:
        """The constant `value` at `span`, one object per value and span."""
        key = (value, id(span))
        hit = self._consts.get(key)
        if hit is not None and hit[0] is span:
            return hit[1]
        const = ConstInt(value, span=span)
        self._consts[key] = (span, const)
        return const

    def dims(self, t: Term | Any, span: Span | None = None) -> tuple[Expr, ...]:
        key = (id(t), id(span))
        hit = self._decoded.get(key)
        if hit is not None and hit[0] is t and hit[1] is span:
            return hit[2]
        decoded = self._dims(t, span)
        if isinstance(t, Term):
            self._decoded[key] = (t, span, decoded)
        return decoded

    def _dims(self, t: Term | Any, span: Span | None) -> tuple[Expr, ...]:
        out: list[Expr] = []
        while isinstance(t, Term) and t.op == "DCons":
            out.append(self.dim(t.args[0], span))
            t = t.args[1]
        if not isinstance(t, Term) or t.op != "DNil":
            raise InternalError(f"cannot decode dimension list term {t}")
        return tuple(out)
