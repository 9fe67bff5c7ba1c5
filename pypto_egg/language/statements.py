"""Reading the DSL's statements and function definitions into IR."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from ..ir.expr import (
    Call,
    ConstInt,
    Expr,
    TupleGetItem,
    Var,
    static_int,
    type_of,
)
from ..ir.span import Span
from ..ir.stmt import (
    AssertStmt,
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    IterArg,
    LoopKind,
    Param,
    ReturnStmt,
    ScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from ..ir.types import (
    DataType,
    ScalarType,
    TupleType,
)
from .context import pl_name
from .expressions import ExprParser


class FunctionParser(ExprParser):
    """One `@pl.function`: its parameters, body statements and loops."""

    def function(self, fn: ast.FunctionDef, options: dict[str, Any]) -> Function:
        self.hints = self.name_hints.get(fn.name, {})
        env: dict[str, Var] = {}
        params: list[Param] = []
        args = fn.args.args
        if options.get("role") != "SubWorker":
            if not args or args[0].arg != "self":
                self.ctx.error(fn, f"function '{fn.name}' must take self as its first parameter")
            args = args[1:]
        for a in args:
            if a.annotation is None:
                self.ctx.error(a, f"parameter '{a.arg}' needs a type annotation")
            ty, direction = self.param_type(a.annotation, env)
            v = self.var(a.arg, ty, self.ctx.span(a))
            env[a.arg] = v
            params.append(Param(v, direction))
        stmts = list(fn.body)
        attrs: tuple[tuple[str, Any], ...] = ()
        if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) \
                and isinstance(stmts[0].value.value, str):  # fmt: skip
            stmts = stmts[1:]  # docstring
        first = stmts[0] if stmts else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Call)
            and pl_name(first.value.func) == "func_attr"
        ):
            call = first.value
            value = (
                self.kwarg_value(call.args[0], "", env) if len(call.args) == 1 and not call.keywords else None
            )
            if not isinstance(value, dict):
                self.ctx.error(
                    call,
                    'pl.func_attr takes one dict literal, e.g. pl.func_attr({"split": pl.SplitMode.UP_DOWN})',
                )
            attrs = tuple(value.items())
            stmts = stmts[1:]
        body, _ = self.block(stmts, env)
        return Function(fn.name, tuple(params), self.signatures[fn.name], tuple(body),
                        options.get("type", FunctionType.Opaque), options.get("level"), options.get("role"),
                        self.ctx.span(fn), tuple(options.get("options", ())), attrs)  # fmt: skip

    def block(self, stmts: list[ast.stmt], env: dict[str, Var]) -> tuple[list[Stmt], list[str] | None]:
        """Statements of one block, and the names a trailing `x = pl.yield_(...)` binds (None: no yield)."""
        out: list[Stmt] = []
        targets: list[str] | None = None
        for s in stmts:
            t = self.stmt(s, env, out)
            if t is not None:
                targets = t
        return out, targets

    def stmt(self, s: ast.stmt, env: dict[str, Var], out: list[Stmt]) -> list[str] | None:
        """One statement into `out`; returns the names a yield (or a with-scope) binds, if any."""
        span = self.ctx.span(s)
        if isinstance(s, ast.Pass):
            return None
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return None  # docstring
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is Ellipsis:
            return None  # `...` body
        if isinstance(s, ast.Break | ast.Continue):
            out.append(BreakStmt(span) if isinstance(s, ast.Break) else ContinueStmt(span))
            return None
        if isinstance(s, ast.Assert):
            out.append(self.assert_stmt(s, env, span))
            return None
        value_node = s.value if isinstance(s, ast.Assign | ast.AnnAssign | ast.Expr) else None
        if isinstance(value_node, ast.Call) and pl_name(value_node.func) == "yield_":
            return self.yield_stmt(s, value_node, env, span, out)
        if isinstance(s, ast.AnnAssign):
            self.annotated_assign(s, env, span, out)
        elif isinstance(s, ast.Assign):
            self.assign(s, env, span, out)
        elif isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Call) and pl_name(s.value.func) == "func_attr":
                self.ctx.error(s, "pl.func_attr({...}) must be the first statement of a function")
            if isinstance(s.value, ast.Call) and pl_name(s.value.func) == "cond":
                self.ctx.error(s, "pl.cond(...) must be the first statement of a pl.while_ loop")
            out.append(EvalStmt(self.expr(s.value, env), span))
        elif isinstance(s, ast.Return):
            out.append(self.return_stmt(s, env, span))
        elif isinstance(s, ast.For):
            out.append(self.for_stmt(s, env))
        elif isinstance(s, ast.If):
            out.append(self.if_stmt(s, env))
        elif isinstance(s, ast.With):
            scope, targets = self.with_stmt(s, env)
            out.append(scope)
            return targets
        else:
            self.ctx.error(s, f"unsupported statement '{ast.unparse(s).splitlines()[0]}'")
        return None

    def assert_stmt(self, s: ast.Assert, env: dict[str, Var], span: Span) -> AssertStmt:
        message = s.msg.value if isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str) else None
        if s.msg is not None and message is None:
            self.ctx.error(s.msg, "an assert message must be a string literal")
        return AssertStmt(self.expr(s.test, env), message, span)

    def yield_stmt(
        self, s: ast.stmt, call: ast.Call, env: dict[str, Var], span: Span, out: list[Stmt]
    ) -> list[str]:
        """`pl.yield_(...)`, bare or bound: the bound names are the enclosing loop's or if's results."""
        out.append(YieldStmt(tuple(self.expr(a, env) for a in call.args), span))
        if isinstance(s, ast.Assign):
            return self.target_names(s.targets[0])
        if isinstance(s, ast.AnnAssign):
            names = self.target_names(s.target)
            self.yield_types[names[0]] = self.type(s.annotation, env)
            return names
        return []

    def annotated_assign(self, s: ast.AnnAssign, env: dict[str, Var], span: Span, out: list[Stmt]) -> None:
        if not isinstance(s.target, ast.Name) or s.value is None:
            self.ctx.error(s, "expected 'name: type = value'")
        declared = self.type(s.annotation, env)
        if isinstance(s.value, ast.Call):
            value = self.call(s.value, env, declared)
        else:
            value = self.expr(s.value, env)
        ann = self.annotated(s, declared, value)
        if isinstance(value, Call) and not value.is_function:
            value = replace(value, type=ann)  # the annotation is the call's result type
        v = self.var(s.target.id, ann, span)
        out.append(AssignStmt(v, value, span))
        env[s.target.id] = v

    def assign(self, s: ast.Assign, env: dict[str, Var], span: Span, out: list[Stmt]) -> None:
        if len(s.targets) != 1:
            self.ctx.error(s, "chained assignment is not supported")
        target = s.targets[0]
        value = self.expr(s.value, env)
        if isinstance(target, ast.Name):
            v = self.var(target.id, type_of(value), span)
            out.append(AssignStmt(v, value, span))
            env[target.id] = v
            return
        names = self.target_names(target)
        tt = type_of(value)
        if not isinstance(tt, TupleType) or len(tt.types) != len(names):
            self.ctx.error(s, f"cannot unpack {len(names)} names from this value")
        tmp = self.var("_".join(names) + "_tuple", tt, span)
        out.append(AssignStmt(tmp, value, span))
        for i, name in enumerate(names):
            v = self.var(name, tt.types[i], span)
            out.append(AssignStmt(v, TupleGetItem(tmp, i, span), span))
            env[name] = v

    def return_stmt(self, s: ast.Return, env: dict[str, Var], span: Span) -> ReturnStmt:
        if s.value is None:
            values: tuple[Expr, ...] = ()
        elif isinstance(s.value, ast.Tuple):
            values = tuple(self.expr(e, env) for e in s.value.elts)
        else:
            values = (self.expr(s.value, env),)
        return ReturnStmt(values, span)

    def target_names(self, target: ast.AST) -> list[str]:
        if isinstance(target, ast.Name):
            return [target.id]
        if isinstance(target, ast.Tuple | ast.List) and all(isinstance(e, ast.Name) for e in target.elts):
            return [e.id for e in target.elts]  # type: ignore[attr-defined]
        self.ctx.error(target, "expected a name or a tuple of names")

    def with_stmt(self, s: ast.With, env: dict[str, Var]) -> tuple[Stmt, list[str] | None]:
        """`with pl.at(...)`, `pl.scope(...)`, `pl.cluster()`, `pl.incore()`, ...: a scope of statements."""
        item = s.items[0].context_expr if len(s.items) == 1 else None
        kind = pl_name(item.func) if isinstance(item, ast.Call) else None
        if item is None or kind is None or s.items[0].optional_vars is not None:
            self.ctx.error(s, "expected 'with pl.<scope>(...):' with one scope, such as pl.at(level=...)")
        assert isinstance(item, ast.Call)
        args = tuple(self.expr(a, env) for a in item.args)
        kwargs = tuple((kw.arg or "", self.kwarg_value(kw.value, kw.arg or "", env)) for kw in item.keywords)
        body, targets = self.block(s.body, env)  # a scope may hold the yield of the loop around it
        return ScopeStmt(tuple(body), kind, kwargs, self.ctx.span(s), args), targets

    def if_stmt(self, s: ast.If, env: dict[str, Var]) -> Stmt:
        cond = self.expr(s.test, env)
        then_env, else_env = dict(env), dict(env)
        then_body, then_targets = self.block(s.body, then_env)
        else_body: list[Stmt] | None = None
        else_targets = None
        if s.orelse:
            else_body, else_targets = self.block(s.orelse, else_env)
        names = then_targets or else_targets or []
        yields = [y for y in then_body if isinstance(y, YieldStmt)]
        rvs: list[Var] = []
        if names:
            if not yields or len(yields[-1].values) != len(names):
                self.ctx.error(s, "the yields of an if statement must bind the same names in both branches")
            for name, value in zip(names, yields[-1].values):
                rv = self.var(name, self.yield_types.pop(name, type_of(value)), self.ctx.span(s))
                rvs.append(rv)
                env[name] = rv
        return IfStmt(cond, tuple(then_body), tuple(else_body) if else_body is not None else None, tuple(rvs),
                      self.ctx.span(s))  # fmt: skip

    def for_stmt(self, s: ast.For, env: dict[str, Var]) -> Stmt:
        if not isinstance(s.iter, ast.Call):
            self.ctx.error(
                s.iter, "expected pl.range(...), pl.parallel(...), pl.pipeline(...) or pl.while_(...)"
            )
        kind_name = pl_name(s.iter.func)
        if kind_name == "while_":
            return self.while_stmt(s, env)
        kinds = {k.value: k for k in LoopKind}
        if kind_name not in kinds:
            self.ctx.error(s.iter, f"unsupported loop '{ast.unparse(s.iter)}' (expected pl.range, pl.parallel, "
                                   f"pl.unroll, pl.pipeline or pl.while_)")  # fmt: skip
        span = self.ctx.span(s)
        bounds = [self.expr(a, env) for a in s.iter.args]
        if not 1 <= len(bounds) <= 3:
            self.ctx.error(
                s.iter, f"pl.{kind_name} takes 1 to 3 bounds (stop | start, stop | start, stop, step)"
            )
        start: Expr = ConstInt(0, DataType.INDEX, span)
        step: Expr = ConstInt(1, DataType.INDEX, span)
        if len(bounds) == 1:
            stop = bounds[0]
        else:
            start, stop = bounds[0], bounds[1]
            if len(bounds) == 3:
                step = bounds[2]
        inits: list[Expr] = []
        stage = None
        extra: list[tuple[str, Any]] = []
        for kw in s.iter.keywords:
            if kw.arg == "init_values":
                if not isinstance(kw.value, ast.Tuple | ast.List):
                    self.ctx.error(kw, "init_values takes a tuple like (t,)")
                inits = [self.expr(e, env) for e in kw.value.elts]
            elif kw.arg == "stage":
                stage = static_int(self.expr(kw.value, env))
            elif kw.arg in ("attrs", "mode", "chunk", "chunk_policy", "name_hint"):
                extra.append((kw.arg, self.kwarg_value(kw.value, kw.arg, env)))
            else:
                self.ctx.error(
                    kw, f"pl.{kind_name} has no keyword '{kw.arg}' (accepted: init_values, stage, attrs)"
                )
        # a split_aiv loop is a scope: what it defines stays visible after it
        body_env = env if kinds[kind_name] is LoopKind.split_aiv else dict(env)
        if inits:
            if not (isinstance(s.target, ast.Tuple) and len(s.target.elts) == 2):
                self.ctx.error(
                    s.target, "a loop with init_values is written 'for i, (a, b) in pl.range(...)'"
                )
            loop_name = self.target_names(s.target.elts[0])[0]
            carried = self.target_names(s.target.elts[1])
            if len(carried) != len(inits):
                self.ctx.error(s.target, f"{len(carried)} loop-carried names for {len(inits)} init_values")
        else:
            loop_name = self.target_names(s.target)[0]
            carried = []
        loop_var = self.var(loop_name, ScalarType(DataType.INDEX), span)
        body_env[loop_name] = loop_var
        iter_args = []
        for name, init in zip(carried, inits):
            v = self.var(name, type_of(init), span)
            body_env[name] = v
            iter_args.append(IterArg(v, init))
        body, targets = self.block(s.body, body_env)
        rvs = self.return_vars(s, iter_args, targets, env)
        return ForStmt(loop_var, start, stop, step, tuple(iter_args), tuple(body), rvs, kinds[kind_name], stage,
                       span, tuple(extra))  # fmt: skip

    def return_vars(self, s: ast.AST, iter_args: list[IterArg], targets: list[str] | None,
                    env: dict[str, Var]) -> tuple[Var, ...]:  # fmt: skip
        if not iter_args:
            return ()
        names = targets or [f"{ia.var.name}_out" for ia in iter_args]
        if len(names) != len(iter_args):
            self.ctx.error(s, f"the loop yields {len(names)} values for {len(iter_args)} loop-carried names")
        rvs = tuple(
            self.var(n, self.yield_types.pop(n, ia.var.type), self.ctx.span(s))
            for n, ia in zip(names, iter_args)
        )
        for n, rv in zip(names, rvs):
            env[n] = rv
        return rvs

    def while_stmt(self, s: ast.For, env: dict[str, Var]) -> Stmt:
        assert isinstance(s.iter, ast.Call)
        span = self.ctx.span(s)
        inits: list[Expr] = []
        for kw in s.iter.keywords:
            if kw.arg != "init_values" or not isinstance(kw.value, ast.Tuple | ast.List):
                self.ctx.error(kw, "pl.while_ takes init_values=(...)")
            inits = [self.expr(e, env) for e in kw.value.elts]
        names = self.target_names(s.target.elts[0] if isinstance(s.target, ast.Tuple) and len(s.target.elts) == 1
                                  and isinstance(s.target.elts[0], ast.Tuple) else s.target)  # fmt: skip
        if len(names) != len(inits):
            self.ctx.error(s.target, f"{len(names)} loop-carried names for {len(inits)} init_values")
        body_env = dict(env)
        iter_args = []
        for name, init in zip(names, inits):
            v = self.var(name, type_of(init), span)
            body_env[name] = v
            iter_args.append(IterArg(v, init))
        first = s.body[0] if s.body else None
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Call)
                and pl_name(first.value.func) == "cond" and len(first.value.args) == 1):  # fmt: skip
            self.ctx.error(s, "a pl.while_ loop must start with pl.cond(<condition>)")
        cond = self.expr(first.value.args[0], body_env)
        body, targets = self.block(s.body[1:], body_env)
        rvs = self.return_vars(s, iter_args, targets, env)
        return WhileStmt(cond, tuple(iter_args), tuple(body), rvs, span)
