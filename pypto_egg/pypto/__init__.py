"""pypto-egg inside PyPTO: its FlattenTileNdTo2D as a pass of PyPTO's own pipeline.

PyPTO is imported when one of these is first called; without it (or with the unrelated PyPI `pypto`) they
raise `PyPTONotFound`, which says how to get PyPTO.
"""

from __future__ import annotations

from .loader import HOW_TO_GET_PYPTO, PyPTONotFound, load_pypto
from .pipeline import PASS_NAME, FlattenOptions, compile, flatten_pass, replacing_flatten

__all__ = [
    "HOW_TO_GET_PYPTO",
    "CheckError",
    "CheckLog",
    "CheckWarning",
    "PASS_NAME",
    "FlattenOptions",
    "PyPTONotFound",
    "checking_flatten",
    "compile",
    "flatten_pass",
    "load_pypto",
    "replacing_flatten",
]

_CHECKING = ("CheckError", "CheckLog", "CheckWarning", "checking_flatten")


def __getattr__(name: str) -> object:
    """The checking of the C++ pass (checking.py), imported when first named: it reads pypto-egg's checker, which
    itself finds PyPTO through this package's loader."""
    if name in _CHECKING:
        from . import checking

        return getattr(checking, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
