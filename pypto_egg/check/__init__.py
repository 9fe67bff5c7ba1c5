"""`pypto-egg check`: a translation validator for any FlattenTileNdTo2D's output, PyPTO's C++ pass first. Each
InCore / AIC / AIV function of the output gets one verdict (verdicts.py) against pypto-egg's answer, the pass's
contract, the windows' bounds and the interpreter's reading of the input."""

from .outputs import Answer, Output, cxx_output, our_answer, read_output
from .program import Sides, check_function, check_sides
from .verdicts import REASONS, VERDICTS, Verdict, counts

__all__ = [
    "REASONS",
    "VERDICTS",
    "Answer",
    "Output",
    "Sides",
    "Verdict",
    "check_function",
    "check_sides",
    "counts",
    "cxx_output",
    "our_answer",
    "read_output",
]
