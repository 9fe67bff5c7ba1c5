"""Finding PyPTO: it is imported only when one of its entry points is used, and checked to be PyPTO.

The project on PyPI named `pypto` is another one (no `pypto.language`), so an import that succeeds is not
enough: the modules the bridge calls must be there.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..errors import UserError

HOW_TO_GET_PYPTO = (
    "build PyPTO from source (github.com/hw-native-sys/pypto: `pip install .` in its checkout, or install "
    "a wheel built from it); the package named `pypto` on PyPI is a different project"
)


class PyPTONotFound(UserError, ImportError):
    """PyPTO is not importable here, or the installed `pypto` is not PyPTO."""


@dataclass(frozen=True)
class PyPTO:
    """The parts of PyPTO the bridge uses."""

    language: ModuleType  # pypto.language: parse
    core: ModuleType  # pypto.pypto_core: DataType
    ir: ModuleType  # pypto.ir: python_print, compile, Program
    core_ir: ModuleType  # pypto.pypto_core.ir: Program
    passes: ModuleType  # pypto.pypto_core.passes: create_program_pass, flatten_tile_nd_to_2d
    backend: ModuleType  # pypto.pypto_core.backend: the process-wide backend type
    pass_manager: Any  # pypto.ir.pass_manager.PassManager (a class; its pass-factory recipe is swapped)


_CACHED: PyPTO | None = None


def load_pypto() -> PyPTO:
    """PyPTO's modules, or PyPTONotFound saying how to get PyPTO."""
    global _CACHED
    if _CACHED is not None:
        return _CACHED
    try:
        pypto = importlib.import_module("pypto")
    except ImportError as e:
        raise PyPTONotFound(f"PyPTO is not installed ({e}); {HOW_TO_GET_PYPTO}") from None
    try:
        found = PyPTO(
            importlib.import_module("pypto.language"),
            importlib.import_module("pypto.pypto_core"),
            importlib.import_module("pypto.ir"),
            importlib.import_module("pypto.pypto_core.ir"),
            importlib.import_module("pypto.pypto_core.passes"),
            importlib.import_module("pypto.pypto_core.backend"),
            importlib.import_module("pypto.ir.pass_manager").PassManager,
        )
    except (ImportError, AttributeError) as e:
        where = getattr(pypto, "__file__", None) or "an unknown location"
        raise PyPTONotFound(
            f"the installed `pypto` ({where}) is not PyPTO: {e}; {HOW_TO_GET_PYPTO}"
        ) from None
    for needed in ("create_program_pass", "flatten_tile_nd_to_2d", "PassProperties"):
        if not hasattr(found.passes, needed):
            raise PyPTONotFound(
                f"the installed `pypto` has no pypto_core.passes.{needed}, so it is not a PyPTO this bridge "
                f"knows; {HOW_TO_GET_PYPTO}"
            )
    _CACHED = found
    return found
