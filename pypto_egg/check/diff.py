"""Where two functions differ, statement by statement, names aside: each place, what kind of difference it is, and
the two statements. The comparison goes on past a difference (the two variables a differing statement defines are
taken to correspond), so every place is found, not only the first."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ir.equality import Comparer, StructuralMismatch, flatten_stmts
from ..ir.stmt import AssignStmt, ForStmt, Function, IfStmt, ScopeStmt, Stmt, WhileStmt

TYPE, OPERAND, STATEMENT, SIGNATURE = "type", "operand", "statement", "signature"


@dataclass(frozen=True)
class Site:
    """One place the functions differ: `kind` is a variable's `type`, a call's `operand` (or its op, keywords or
    attributes), a `statement` of another kind or one only one side has, or the `signature`. `where` is the path
    to it (`body[3].value.args[2]`), `why` what differs there."""

    ours: Stmt | None
    theirs: Stmt | None
    kind: str
    where: str
    why: str

    @property
    def operand(self) -> int | None:
        """The operand of a call the difference is in, when it is in one."""
        m = re.search(r"\.value\.args\[(\d+)\]", self.where)
        return int(m.group(1)) if m else None


def differences(ours: Function, theirs: Function) -> list[Site]:
    """Every place `theirs` differs from `ours`, in program order."""
    return _Differ().function(ours, theirs)


class _Differ:
    def __init__(self) -> None:
        self.c = Comparer()
        self.sites: list[Site] = []

    def function(self, a: Function, b: Function) -> list[Site]:
        try:
            self.c.seq(a.params, b.params, "params", self.c.param)
            self.c.seq(a.return_types, b.return_types, "return_types", self.c.typ)
        except StructuralMismatch as m:
            self.sites.append(Site(None, None, SIGNATURE, m.path, m.why))
            for x, y in zip(a.params, b.params):
                self._match(x.var, y.var)
        self.body(a.body, b.body, "body")
        return self.sites

    def body(self, a: tuple[Stmt, ...], b: tuple[Stmt, ...], path: str) -> None:
        fa, fb = flatten_stmts(a), flatten_stmts(b)
        for i, (x, y) in enumerate(zip(fa, fb)):
            self.stmt(x, y, f"{path}[{i}]")
        if len(fa) != len(fb):
            k = min(len(fa), len(fb))
            self.sites.append(Site(fa[k] if k < len(fa) else None, fb[k] if k < len(fb) else None, STATEMENT,
                                   f"{path}[{k}]", f"{len(fa)} vs {len(fb)} statements"))  # fmt: skip

    def stmt(self, x: Stmt, y: Stmt, path: str) -> None:
        if type(x) is not type(y):
            self.sites.append(Site(x, y, STATEMENT, path, f"{type(x).__name__} vs {type(y).__name__}"))
            return
        if isinstance(x, ForStmt | WhileStmt | IfStmt | ScopeStmt):
            self.nested(x, y, path)
            return
        try:
            self.c.stmt(x, y, path)
        except StructuralMismatch as m:
            self.sites.append(Site(x, y, _kind(m.path), m.path, m.why))
            if isinstance(x, AssignStmt) and isinstance(y, AssignStmt):
                self._match(x.var, y.var)

    def nested(self, x: Any, y: Any, path: str) -> None:
        """A loop, an if or a scope: its header, then its bodies, then its results."""
        c = self.c
        if isinstance(x, ForStmt):
            for f in ("start", "stop", "step"):
                self._try(x, y, c.expr, getattr(x, f), getattr(y, f), f"{path}.{f}")
            self._match(x.loop_var, y.loop_var)
        if isinstance(x, ForStmt | WhileStmt):
            for i, (ia, ib) in enumerate(zip(x.iter_args, y.iter_args)):
                self._try(x, y, c.expr, ia.init, ib.init, f"{path}.iter_args[{i}].init")
                self._try(x, y, c.typ, ia.var.type, ib.var.type, f"{path}.iter_args[{i}].type")
                self._match(ia.var, ib.var)
            if len(x.iter_args) != len(y.iter_args):
                self.sites.append(
                    Site(x, y, STATEMENT, f"{path}.iter_args", "the loops carry different values")
                )
        if isinstance(x, WhileStmt | IfStmt):
            self._try(x, y, c.expr, x.condition, y.condition, f"{path}.condition")
        if isinstance(x, IfStmt):
            self.body(x.then_body, y.then_body, f"{path}.then")
            self.body(x.else_body or (), y.else_body or (), f"{path}.else")
        else:
            self.body(x.body, y.body, f"{path}.body")
        if not isinstance(x, ScopeStmt):
            for i, (ra, rb) in enumerate(zip(x.return_vars, y.return_vars)):
                self._try(x, y, c.typ, ra.type, rb.type, f"{path}.return_vars[{i}].type")
                self._match(ra, rb)

    def _try(
        self, x: Stmt, y: Stmt, compare: Callable[[Any, Any, str], None], a: Any, b: Any, path: str
    ) -> None:
        """One comparison of the comparer's; a difference it finds is a site."""
        try:
            compare(a, b, path)
        except StructuralMismatch as m:
            self.sites.append(Site(x, y, _kind(m.path), m.path, m.why))

    def _match(self, a: Any, b: Any) -> None:
        """Take two variables to correspond from here on, whatever their types."""
        self.c.fwd[a.uid] = b
        self.c.bwd[b.uid] = a


def _kind(path: str) -> str:
    tail = path.rsplit(".var", 1)[-1] if ".var" in path else path
    if re.search(r"\.type(\.|$)", tail) or path.endswith(".type"):
        return TYPE
    return OPERAND
