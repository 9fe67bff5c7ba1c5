"""The numpy reference interpreter: runs a program's function on arrays."""

from .interpreter import BoundsError, InterpError, output_differences, outputs_equal, random_inputs, run
from .machine_ops import SINGLE_CORE, NotInterpretable

__all__ = [
    "SINGLE_CORE",
    "BoundsError",
    "InterpError",
    "NotInterpretable",
    "output_differences",
    "outputs_equal",
    "random_inputs",
    "run",
]
