"""The numpy reference interpreter: runs a program's function on arrays."""

from .interpreter import InterpError, output_differences, outputs_equal, random_inputs, run

__all__ = ["InterpError", "output_differences", "outputs_equal", "random_inputs", "run"]
