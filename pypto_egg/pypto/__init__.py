"""pypto-egg inside PyPTO: its FlattenTileNdTo2D as a pass of PyPTO's own pipeline.

PyPTO is imported when one of these is first called; without it (or with the unrelated PyPI `pypto`) they
raise `PyPTONotFound`, which says how to get PyPTO.
"""

from __future__ import annotations

from .loader import HOW_TO_GET_PYPTO, PyPTONotFound, load_pypto
from .pipeline import PASS_NAME, FlattenOptions, compile, flatten_pass, replacing_flatten

__all__ = [
    "HOW_TO_GET_PYPTO",
    "PASS_NAME",
    "FlattenOptions",
    "PyPTONotFound",
    "compile",
    "flatten_pass",
    "load_pypto",
    "replacing_flatten",
]
