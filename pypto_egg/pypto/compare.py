"""The code PyPTO generates with pypto-egg's pass beside the code it generates with its own.

The proof of a drop-in is downstream: the kernels (`kernels/**`) and the orchestration code
(`orchestration/**`) that `ir.compile(skip_ptoas=True)` writes, byte for byte.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..check.verdicts import Verdict
from .checking import CheckLog, checking_flatten
from .loader import load_pypto
from .pipeline import compile as compile_with_egg

CODE_DIRS = ("kernels", "orchestration")
# the options that make the written code depend on the program alone
DETERMINISTIC = {"skip_ptoas": True, "emit_source_loc": False, "dump_passes": False}


def generated_code(out_dir: str | Path) -> dict[str, bytes]:
    """Every file under the code directories of a compile's output, by its path relative to the output."""
    root = Path(out_dir)
    return {
        str(p.relative_to(root)): p.read_bytes()
        for d in CODE_DIRS
        for p in sorted((root / d).rglob("*"))
        if p.is_file()
    }


@dataclass(frozen=True)
class CodeComparison:
    reference_error: str | None  # PyPTO's own pipeline rejected the program (nothing to compare)
    egg_error: str | None  # the pipeline with pypto-egg's pass rejected it
    differing: tuple[str, ...] = ()  # files whose bytes differ, or that only one side wrote

    @property
    def compiled(self) -> bool:
        return self.reference_error is None

    @property
    def same(self) -> bool:
        return self.compiled and self.egg_error is None and not self.differing


def compare_generated_code(
    text: str, *, flatten_options: dict[str, Any] | None = None, **ir_compile_kwargs: Any
) -> CodeComparison:
    """Compile the program of `text` (PyPTO's dialect) with each pass, each side from its own fresh parse."""

    def egg_side(program: Any, out_dir: str, kwargs: dict[str, Any]) -> None:
        compile_with_egg(program, flatten_options=flatten_options, output_dir=out_dir, **kwargs)

    return _compare(text, egg_side, ir_compile_kwargs)


def _compare(
    text: str, other: Callable[[Any, str, dict[str, Any]], None], ir_compile_kwargs: dict[str, Any]
) -> CodeComparison:
    """PyPTO's own `ir.compile` of `text` beside `other(program, out_dir, kwargs)`'s, each from a fresh parse."""
    pto = load_pypto()
    kwargs = {**DETERMINISTIC, **ir_compile_kwargs}
    with tempfile.TemporaryDirectory(prefix="pypto-egg-compare-") as tmp:
        ref_dir, egg_dir = Path(tmp) / "reference", Path(tmp) / "other"
        try:
            pto.ir.compile(pto.language.parse(text), output_dir=str(ref_dir), **kwargs)
        except Exception as e:  # PyPTO's own pipeline: whatever it raises means "not compiled"
            return CodeComparison(f"{type(e).__name__}: {e}", None)
        try:
            other(pto.language.parse(text), str(egg_dir), kwargs)
        except Exception as e:
            return CodeComparison(None, f"{type(e).__name__}: {e}")
        ref, egg = generated_code(ref_dir), generated_code(egg_dir)
        differing = tuple(sorted(k for k in ref.keys() | egg.keys() if ref.get(k) != egg.get(k)))
        return CodeComparison(None, None, differing)


def compare_file(path: str) -> tuple[str, CodeComparison]:
    """`compare_generated_code` of one file's text (a picklable job for a worker pool)."""
    return path, compare_generated_code(Path(path).read_text())


@dataclass(frozen=True)
class CheckedCompile:
    """PyPTO's pipeline inside `checking_flatten` beside the plain one: the code compared, the verdicts, and the
    seconds the checks took."""

    code: CodeComparison
    verdicts: tuple[Verdict, ...]
    seconds: float


def compare_checked_file(path: str) -> tuple[str, CheckedCompile]:
    """The plain pipeline and the checked one on one file (a picklable job for a worker pool)."""
    log: list[CheckLog] = []

    def checked(program: Any, out_dir: str, kwargs: dict[str, Any]) -> None:
        with checking_flatten(on_wrong=lambda v: None) as found:
            log.append(found)
            load_pypto().ir.compile(program, output_dir=out_dir, **kwargs)

    code = _compare(Path(path).read_text(), checked, {})
    verdicts = tuple(v for found in log for v in found.verdicts)
    return path, CheckedCompile(code, verdicts, sum(s for found in log for s in found.seconds))
