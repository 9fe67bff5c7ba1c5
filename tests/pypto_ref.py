"""PyPTO (the reference) for the tests that compare against it: found, or a skip that says why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto_egg.pypto import PyPTONotFound, load_pypto

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
SAMPLE = SHARED / "realworld-sample"


def _why_not() -> str | None:
    try:
        load_pypto()
    except PyPTONotFound as e:
        return f"PyPTO is not installed in this venv (`make reference` installs ../shared/reference): {e}"
    return None


WHY_NO_PYPTO = _why_not()
requires_pypto = pytest.mark.skipif(WHY_NO_PYPTO is not None, reason=WHY_NO_PYPTO or "")
requires_sample = pytest.mark.skipif(
    not (SAMPLE / "pre").is_dir(), reason="shared/realworld-sample is not beside the project"
)


def sample_programs() -> list[Path]:
    return sorted((SAMPLE / "pre").glob("*.py"))


def set_reference_backend() -> None:
    """The backend the default pipeline configures, which the C++ pass reads process-wide."""
    pto = load_pypto()
    pto.backend.set_backend_type(pto.backend.BackendType.Ascend910B)
