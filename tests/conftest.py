"""Shared fixtures and hypothesis profiles; translation validation on for every pass call.

`--hypothesis-profile=long` (or PYPTO_EGG_HYPOTHESIS=long) runs the generated-program tests at 10,000 examples.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from pypto_egg.egraph import engine
from pypto_egg.ir import Program
from pypto_egg.passes.flatten import FlattenTileNdTo2D
from pypto_egg.passes.validate import validate_translation


@pytest.fixture(autouse=True)
def _every_pass_call_validated_and_every_schedule_checked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Every pass call of the suite also validates its translation with the interpreter (passes/validate.py),
    unless its test is marked `unvalidated`; every e-graph run checks that the ordered steps of each stage reach
    the stage's fixpoint (strata.py), unless its test is marked `unchecked_schedule`. Both are the pass's own
    options (`validate=`, `check_schedule=`), turned on here for the suite, never through the environment."""
    if request.node.get_closest_marker("unvalidated") is None:
        call = FlattenTileNdTo2D.__call__

        def validated(self: FlattenTileNdTo2D, program: Program) -> Program:
            result = call(self, program)
            if not self.validate and result is not program:
                self.validation = validate_translation(program, result, self.validation_seeds)
            return result

        monkeypatch.setattr(FlattenTileNdTo2D, "__call__", validated)
    if request.node.get_closest_marker("unchecked_schedule") is None:
        init = engine.EGraphRun.__init__
        monkeypatch.setattr(engine.EGraphRun, "__init__", functools.partialmethod(init, check_schedule=True))
    yield


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "unvalidated: the test's pass calls are not interpreted before and after"
    )
    config.addinivalue_line(
        "markers", "unchecked_schedule: the test's e-graph runs skip the schedule's check"
    )


settings.register_profile(
    "default", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile(
    "long", max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "quick", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("PYPTO_EGG_HYPOTHESIS", "default"))
