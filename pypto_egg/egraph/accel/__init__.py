"""The accelerated runner's speed-ups (egraph/engine.py), each a way to reach the answer the rules as written
give (egraph/core.py) sooner, and each switchable (`Acceleration`): which rules a program's facts can fire
(relevance.py), the order a stage's rules meet in (strata.py, schedule_run.py), the e-graphs that stay loaded
(resident.py, rule_sets.py), the tables the encoder's relations are packed in (fact_table.py, fact_folder.py),
one request for statements that ask alike (shared_requests.py), and the list walks gated to the lists the encoder
did not state (rules/gates.egg). The tests hold each one's answers to the core's."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Acceleration:
    """Which speed-ups the accelerated runner uses. Turning one off changes no answer (the tests hold each to the
    core runner's); the core runner is the run with none of them and no packed tables either."""

    # load only the rules a program's facts can fire (relevance.py)
    prune_rules: bool = True
    # run each stage's rules in the order they feed each other (strata.py, schedule_run.py)
    staged_schedule: bool = True
    # keep each kind's rules loaded between programs (resident.py, rule_sets.py)
    resident_egraphs: bool = True
    # one request for the statements that ask the same question (shared_requests.py)
    shared_requests: bool = True
    # the encoder states what the rules would otherwise work out by folding and scanning lists (encode.py)
    stated_answers: bool = True
    # the list walks run only on the lists the encoder did not state (accel/rules/gates.egg stands in for them)
    gated_walks: bool = True
    # a function with nothing to flatten is lowered without an e-graph (passes/trivial.py)
    trivial_skip: bool = True

    @staticmethod
    def names() -> tuple[str, ...]:
        return tuple(f.name for f in fields(Acceleration))

    def without(self, name: str) -> Acceleration:
        """These speed-ups but `name`."""
        return replace(self, **{name: False})


__all__ = ["Acceleration"]
