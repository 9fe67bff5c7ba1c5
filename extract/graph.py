"""A read-only view of a saturated e-graph: e-classes and their e-nodes, from egglog's frozen tables."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import egglog.bindings as eb

from .term import Prim

PRIMITIVE_SORTS = {"i64", "f64", "String", "bool", "Unit", "unit", "BigInt", "BigRat", "Rational"}


class ClassId(int):
    """An e-class: the small integer the view numbers one of egglog's canonical class values with (an int
    hashes and compares in C, which the extractor does a few times per e-node)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"c{int(self)}"


class _ENodeFields(NamedTuple):
    op: str
    args: tuple[ClassId | Prim, ...]
    eclass: ClassId
    children: tuple[ClassId, ...]  # the e-class arguments, in order


class ENode(_ENodeFields):
    """One e-node: a tuple (built in C), since a view holds one per row of every extractable constructor."""

    __slots__ = ()

    def __new__(
        cls,
        op: str,
        args: tuple[ClassId | Prim, ...],
        eclass: ClassId,
        children: tuple[ClassId, ...] | None = None,
    ) -> ENode:
        if children is None:
            children = tuple(a for a in args if isinstance(a, ClassId))
        return tuple.__new__(cls, (op, args, eclass, children))


class _Relations(dict[str, list[tuple["ClassId | Prim", ...]]]):
    """Relation rows by name, converted from egglog's frozen table on first access: a lowering reads a
    handful of the relations, and the encoder's input tables are the largest."""

    def __init__(
        self,
        frozen: dict[str, Any],
        reader: Callable[[str], Callable[[Any], ClassId | Prim]],
        stored: StoredRelations | None,
        names: frozenset[str],
    ) -> None:
        """`frozen`: egglog's frozen tables, of which `names` are relations, stored ones included."""
        super().__init__()
        self._frozen = frozen
        self._stored = stored
        self._names = names
        self._reader: Callable[[str], Callable[[Any], ClassId | Prim]] | None = reader
        # a stored table's rows by the relation each belongs to: its cells, the row
        self._kinds: dict[str, dict[str, list[tuple[Any, Any]]]] = {}

    def release(self) -> None:
        """Drop the references to egglog's objects (they may only be dropped by the thread that made them);
        the relations read so far stay readable."""
        self._frozen = {}
        self._reader = None
        self._kinds = {}

    def __missing__(self, name: str) -> list[tuple[ClassId | Prim, ...]]:
        stored = self._stored
        if stored is not None and name in stored.relations and stored.relations[name][0] in self._frozen:
            rows = self[name] = self._stored_rows(stored, name)
            return rows
        if name not in self._names:
            raise KeyError(name)
        fn = self._frozen.get(name)
        if fn is None:
            raise RuntimeError(f"relation {name} was not read before its e-graph was closed")
        reader = self._reader
        assert reader is not None
        columns = [reader(s) for s in fn.input_sorts]  # one converter per column, chosen once
        if fn.output_sort in PRIMITIVE_SORTS and fn.output_sort not in ("Unit", "unit"):  # a valued function
            out = reader(fn.output_sort)
            rows = [(*[f(v) for f, v in zip(columns, r.inputs)], out(r.output)) for r in fn.rows]
        elif len(set(columns)) == 1:  # every column of one sort (most relations: ids, or e-classes)
            f = columns[0]
            rows = [tuple(map(f, r.inputs)) for r in fn.rows]
        else:
            rows = [tuple([f(v) for f, v in zip(columns, r.inputs)]) for r in fn.rows]
        self[name] = rows
        return rows

    def _stored_rows(self, stored: StoredRelations, name: str) -> list[tuple[ClassId | Prim, ...]]:
        """The rows of one relation a stored table holds: the table's rows grouped by relation once for every
        relation asked for, and only the asked relation's cells converted."""
        reader = self._reader
        if reader is None:
            raise RuntimeError(f"relation {name} was not read before its e-graph was closed")
        table, sorts, places, value = stored.relations[name]
        by_relation = self._kinds.get(table)
        if by_relation is None:
            relation_of = reader("String")
            names: dict[Any, str] = {}  # (a handful of distinct names, each converted once)
            by_relation = self._kinds[table] = {}
            for r in self._frozen[table].rows:
                inputs = r.inputs
                kind = names.get(inputs[0])
                if kind is None:
                    kind = names[inputs[0]] = str(relation_of(inputs[0]))
                by_relation.setdefault(kind, []).append((inputs, r))
        rows = by_relation.get(name, [])
        cells = [(1 + p, reader(sort)) for sort, p in zip(sorts, places)]
        if value is None:
            return [tuple([f(inputs[p]) for p, f in cells]) for inputs, _ in rows]
        out = reader(value)  # (a flag: its key's cells, then its value)
        return [(*[f(inputs[p]) for p, f in cells], out(r.output)) for inputs, r in rows]

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        try:
            return self[name]
        except KeyError:
            return default

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or name in self._names


@dataclass(frozen=True, eq=False)  # (compared and hashed as itself: a view's readings are kept per instance)
class StoredRelations:
    """Relations egglog holds in tables shared with others: a row of such a table is the relation's name, then
    cells, some of them the relation's. For each relation: its table, its columns' sorts and places among the
    cells, and for a function stored so, its value's sort (the table's value). The view reads them as the
    relations."""

    relations: dict[
        str, tuple[str, tuple[str, ...], tuple[int, ...], str | None]
    ]  # ..., a function's value sort


@dataclass
class EGraphView:
    classes: dict[ClassId, list[ENode]] = field(default_factory=lambda: defaultdict(list))
    relations: dict[str, list[tuple[ClassId | Prim, ...]]] = field(default_factory=dict)

    def release(self) -> None:
        """Let go of egglog's objects, on the thread that owns them (see `_Relations.release`)."""
        if isinstance(self.relations, _Relations):
            self.relations.release()

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def num_nodes(self) -> int:
        """The e-nodes read (those of the constructors the view was asked to skip are not counted)."""
        return sum(len(v) for v in self.classes.values())

    @classmethod
    def from_egraph(
        cls,
        egraph: eb.EGraph,
        skip: frozenset[str] = frozenset(),
        schema: dict[str, _Table] | None = None,
        tables: frozenset[str] | None = None,
        stored: StoredRelations | None = None,
    ) -> EGraphView:
        """Read every constructor row (skipping subsumed ones, and every row of the constructors in `skip`,
        which no extraction will take); relation rows are read when asked for. `schema`: what each table of this
        e-graph is, learned on the first read and kept by the caller for the next (a table's kind and sorts
        never change). `tables`: the only tables that can hold rows, when the caller knows (a program on an
        e-graph of more rules than its own: the other tables are empty, and reading each still costs)."""
        frozen = egraph.freeze()
        functions = frozen.functions
        if schema is None:
            schema = {}
        if len(schema) != len(functions):
            schema.clear()
            for name, fn in functions.items():
                schema[name] = _Table.of(fn.output_sort, tuple(fn.input_sorts))
        convert: dict[str, Callable[[Any], Prim]] = {
            "i64": egraph.value_to_i64, "f64": egraph.value_to_f64, "String": egraph.value_to_string,
            "bool": egraph.value_to_bool,
        }  # fmt: skip

        ids: dict[Any, ClassId] = {}

        def cid(v: Any) -> ClassId:
            c = ids.get(v)
            if c is None:
                c = ids[v] = ClassId(len(ids))
            return c

        def reader(sort: str) -> Callable[[Any], ClassId | Prim]:
            return convert.get(sort) or (str if sort in PRIMITIVE_SORTS else cid)

        constructors, names = _reading(functions, schema, skip, tables, stored)
        classes: dict[ClassId, list[ENode]] = defaultdict(list)
        make = tuple.__new__
        for name, table in constructors:
            rows = functions[name].rows
            if not rows:  # (most constructors of a small program's e-graph)
                continue
            sorts = table.inputs
            if table.all_classes:  # every argument an e-class: the common case
                for r in rows:
                    if r.subsumed:
                        continue
                    kids = tuple(map(cid, r.inputs))
                    out = cid(r.output)
                    classes[out].append(make(ENode, (name, kids, out, kids)))
                continue
            columns = [reader(s) for s in sorts]  # one converter per column, chosen once
            places = [i for i, s in enumerate(sorts) if s not in PRIMITIVE_SORTS]  # the e-class arguments
            if len(columns) == 1 and not places:  # a constant's one value (DC, DSym, ...)
                f = columns[0]
                for r in rows:
                    if r.subsumed:
                        continue
                    out = cid(r.output)
                    classes[out].append(make(ENode, (name, (f(r.inputs[0]),), out, ())))
                continue
            for r in rows:
                if r.subsumed:
                    continue
                args = tuple([f(v) for f, v in zip(columns, r.inputs)])
                out = cid(r.output)
                kids = tuple([args[i] for i in places])  # type: ignore[misc]
                classes[out].append(make(ENode, (name, args, out, kids)))
        return cls(classes, _Relations(functions, reader, stored, names))


def relation_names(tables: frozenset[str], stored: StoredRelations | None) -> frozenset[str]:
    """The relations of an e-graph holding these relation tables: each table's own, and those the stored tables
    among them hold."""
    if stored is None:
        return tables
    return tables | frozenset(r for r, (t, *_) in stored.relations.items() if t in tables)


_Reading = tuple[list[tuple[str, "_Table"]], frozenset[str]]
_READINGS: dict[tuple[object, ...], _Reading] = {}


def _reading(
    functions: dict[str, Any],
    schema: dict[str, _Table],
    skip: frozenset[str],
    tables: frozenset[str] | None,
    stored: StoredRelations | None,
) -> _Reading:
    """What a view of these tables reads: the constructors it converts, in the e-graph's order (which numbers the
    classes), and the relations it can be asked for. The same for every program of a kind on one set, so it is
    worked out once per set and kind, not by a walk over every table the set declares at each program."""
    key = (tuple(functions), skip, tables, stored)
    hit = _READINGS.get(key)
    if hit is None:
        if len(_READINGS) >= 256:
            _READINGS.clear()
        constructors = [
            (name, schema[name])
            for name in functions
            if not schema[name].relation and name not in skip and (tables is None or name in tables)
        ]
        relations = frozenset(name for name in functions if schema[name].relation)
        hit = _READINGS[key] = (constructors, relation_names(relations, stored))
    return hit


@dataclass(frozen=True)
class _Table:
    """What one table of an e-graph is: a relation (or an analysis function, read like one), or a constructor
    of e-nodes, with its argument sorts."""

    relation: bool
    inputs: tuple[str, ...]
    all_classes: bool  # every argument an e-class

    @staticmethod
    def of(output: str, inputs: tuple[str, ...]) -> _Table:
        relation = output in ("Unit", "unit") or output.startswith("@") or output in PRIMITIVE_SORTS
        return _Table(relation, inputs, not any(s in PRIMITIVE_SORTS for s in inputs))
