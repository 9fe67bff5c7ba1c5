"""Which resident rule set a program runs on: the key a kind's own set is kept under, and the coarse family sets
a program runs on while its kind has no set of its own.

A kind of program (the rules its facts can fire) gets a set of its own once it has been asked for a few times
(resident.py): loading one costs 30-120 ms, more than a first call may take. Until then a program runs on a loaded
set that holds its rules. A set holding far more rules than a program needs costs each call about 6-8 % more
(freezing, resetting and rebuilding tables the program never fills), yet a set cut to the kinds of programs
without a batched matmul costs them no more than their own sets do. So the first program that finds no such
set loads every family at once, and every later kind runs on the smallest family that holds its rules.

A family is the relevance (relevance.py) of every fact relation a program of the family can fill. Whether a
kind fits is checked, not assumed (`RuleSetKey.fits_within`): a program that fills a relation a family leaves
out runs on a larger family, with the same answer.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from ..rules import RuleFile, fact_relations
from .relevance import Relevance, relevant_rules
from .resident import Loader, ResidentRules, resident_rules


@dataclass(frozen=True)
class RuleSetKey:
    """What a pruned resident rule set is kept under: the rule files it was cut from, the rules it kept and the
    fact relations it reads."""

    source: tuple[tuple[str, str], ...]  # (path, text) of each file
    rules: frozenset[str] | None
    facts: frozenset[str] | None

    @classmethod
    def of(cls, relevance: Relevance) -> RuleSetKey:
        return cls(
            tuple((str(rf.path), rf.text) for rf in relevance.source), relevance.rules, relevance.facts
        )

    def fits_within(self, other: object) -> int | None:
        """How many rules `other` holds, when it is the key of a set that holds every rule and fact relation of
        this one (and so every table they name); None when it is not."""
        if not isinstance(other, RuleSetKey) or other.source != self.source:
            return None
        if other.rules is None or other.facts is None or self.rules is None or self.facts is None:
            return None
        if self.rules <= other.rules and self.facts <= other.facts:
            return len(other.rules)
        return None


@dataclass(frozen=True)
class Family:
    name: str
    leaves_out: frozenset[str]  # fact relations no program of the family fills


def _batched_matmul_relations() -> frozenset[str]:
    """The facts the encoder writes only for a batched matmul (encode_matmul.py) and its accumulators."""
    return frozenset(
        rel for rel in fact_relations() if rel.startswith("Bmm") or rel in ("AccVarRow", "ReshapeShapeRow")
    )


def families() -> tuple[Family, ...]:
    """Smallest first: programs without a batched matmul, then every program."""
    return (
        Family("programs without a batched matmul", _batched_matmul_relations()),
        Family("every program", frozenset()),
    )


@functools.lru_cache(maxsize=8)
def family_relevances(
    files: tuple[RuleFile, ...], reads: frozenset[str] | None, host_asserted: frozenset[str]
) -> tuple[tuple[Family, Relevance], ...]:
    """Each family's rules among `files`, for a caller reading `reads` (as `relevant_rules` takes it), with the
    relations the host asserts itself counted as filled."""
    every = frozenset(fact_relations()) | host_asserted
    return tuple((f, relevant_rules(files, every - f.leaves_out, reads)) for f in families())


def family_set(
    key: RuleSetKey,
    files: Sequence[RuleFile],
    reads: frozenset[str] | None,
    host_asserted: frozenset[str],
    load: Loader,
) -> ResidentRules | None:
    """The smallest family set holding the rules of the kind `key` names (None: no family does), every family
    loaded at once the first time one is needed, so that no later new kind stalls on a load."""
    sets = [(rel, RuleSetKey.of(rel)) for _, rel in family_relevances(tuple(files), reads, host_asserted)]
    fitting = [
        (rel.kept, i) for i, (rel, family_key) in enumerate(sets) if key.fits_within(family_key) is not None
    ]
    if not fitting:
        return None
    loaded = [resident_rules(rel.files, load, family_key) for rel, family_key in sets]
    return loaded[min(fitting)[1]]
