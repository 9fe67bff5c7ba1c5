"""Shared fixtures and hypothesis profiles; translation validation on for every pass call.

`--hypothesis-profile=long` (or PYPTO_EGG_HYPOTHESIS=long) runs the generated-program tests at 10,000 examples.
"""

from __future__ import annotations

import os

# every pass call of the suite also validates its translation with the interpreter (passes/validate.py)
os.environ.setdefault("PYPTO_EGG_VALIDATE", "1")
# ... and every e-graph run checks that the ordered steps of each stage reach the stage's fixpoint (strata.py)
os.environ.setdefault("PYPTO_EGG_CHECK_SCHEDULE", "1")

from hypothesis import HealthCheck, settings

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
