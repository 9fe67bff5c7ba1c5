"""What the checker says of one function of a pass's output: its verdict, the reason and the detail."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# every verdict, in the order of the report (the worst first)
VERDICTS = ("wrong", "unexplained", "not-checkable", "listed", "same")
# why a function is wrong
MEANING, BOUNDS, CONTRACT = "meaning", "bounds", "contract"
REASONS = (MEANING, BOUNDS, CONTRACT)
# what stops a function from being checked
NO_SEMANTICS, DYNAMIC_EXTENT, TOO_LARGE, NO_OUTPUT, CANNOT_RUN = (
    "no-semantics", "dynamic-extent", "too-large", "no-output", "cannot-run",
)  # fmt: skip


@dataclass(frozen=True)
class Verdict:
    """One function's verdict. `reason`: for `wrong`, meaning | bounds | contract; for `listed`, the differences
    it differs by (`D-5`, `D-5, D-6`); for `not-checkable`, what stopped the check; else None. `reproducer`: where
    the smallest program that shows a `wrong` verdict was written (its path is in the detail too)."""

    program: str
    function: str
    verdict: str
    reason: str | None
    detail: str
    reproducer: str | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")
        if self.verdict == "wrong" and self.reason not in REASONS:
            raise ValueError(f"a wrong verdict needs one of the reasons {REASONS}, not {self.reason!r}")

    def as_dict(self) -> dict[str, Any]:
        """The five fields of `--json`, in this order."""
        return {
            "program": self.program,
            "function": self.function,
            "verdict": self.verdict,
            "reason": self.reason,
            "detail": self.detail,
        }

    def json(self) -> str:
        return json.dumps(self.as_dict())

    def line(self) -> str:
        """One line of the text report: `program:function: verdict (reason): detail`."""
        reason = f" ({self.reason})" if self.reason else ""
        return f"{self.program}:{self.function}: {self.verdict}{reason}: {self.detail}"


def counts(verdicts: list[Verdict]) -> dict[str, int]:
    """How many functions got each verdict (and each wrong reason, as `wrong/meaning`)."""
    out = {v: 0 for v in VERDICTS}
    for v in verdicts:
        out[v.verdict] += 1
        if v.verdict == "wrong":
            key = f"wrong/{v.reason}"
            out[key] = out.get(key, 0) + 1
    return out
